//! reduction: float sum with a shared-memory tree (`__syncthreads` per level), one partial
//! per block; a second launch with one block reduces the partials.

use crate::rng::SplitMix64;
use crate::{check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Reduction,
    "reduction",
    Category::Regular,
    "float sum: grid-stride loads, shared-memory tree reduction, two launches"
);

const BLOCK: u32 = 256;
/// The reference replays the kernel's exact addition order (per-thread grid-stride sums,
/// then the tree), so the result should be bit-identical.
const TOL: Tolerance = Tolerance {
    rel: 1e-6,
    abs: 1e-6,
};

/// (n, first-launch grid).
pub(crate) fn params(size: Size) -> (usize, u32) {
    size.pick((2048, 4), (32 * 1024, 32), (2 << 20, 1024))
}

pub(crate) fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut g = SplitMix64::for_stream(seed, "reduction.in");
    (0..n).map(|_| g.unit_f32()).collect()
}

/// What `reduce_sum` writes: one partial per block, in the kernel's order of additions.
pub(crate) fn reduce_block_partials(input: &[f32], grid: u32, block: u32) -> Vec<f32> {
    let (bd, n) = (block as usize, input.len());
    let stride = grid as usize * bd * 2;
    (0..grid as usize)
        .map(|b| {
            let mut s: Vec<f32> = (0..bd)
                .map(|t| {
                    let mut sum = 0.0f32;
                    let mut i = b * bd * 2 + t;
                    while i < n {
                        sum += input[i];
                        if i + bd < n {
                            sum += input[i + bd];
                        }
                        i += stride;
                    }
                    sum
                })
                .collect();
            let mut half = bd / 2;
            while half > 0 {
                for t in 0..half {
                    s[t] += s[t + half];
                }
                half /= 2;
            }
            s[0]
        })
        .collect()
}

pub(crate) fn reference(input: &[f32], grid: u32) -> (Vec<f32>, f32) {
    let partials = reduce_block_partials(input, grid, BLOCK);
    let total = reduce_block_partials(&partials, 1, BLOCK)[0];
    (partials, total)
}

fn run_impl(
    w: &Reduction,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (n, grid) = params(size);
    let input = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let din = host.alloc_write_f32(&input)?;
    let dpart = host.alloc(grid as u64 * 4)?;
    let dtotal = host.alloc(4)?;
    host.launch(
        m,
        "reduce_sum",
        Dim3::x(grid),
        Dim3::x(BLOCK),
        0,
        &[
            KernelArg::Ptr(din),
            KernelArg::Ptr(dpart),
            KernelArg::S32(n as i32),
        ],
    )?;
    host.launch(
        m,
        "reduce_sum",
        Dim3::x(1),
        Dim3::x(BLOCK),
        0,
        &[
            KernelArg::Ptr(dpart),
            KernelArg::Ptr(dtotal),
            KernelArg::S32(grid as i32),
        ],
    )?;
    let (partials, total) = reference(&input, grid);
    let got_partials = host.read_f32(dpart, grid as usize)?;
    let got_total = host.read_f32(dtotal, 1)?;
    Ok(Verification::all(vec![
        check_f32("partial", &partials, &got_partials, TOL),
        check_f32("total", &[total], &got_total, TOL),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partials_sum_everything() {
        // Small integers sum exactly in any order.
        let input: Vec<f32> = (0..3000).map(|i| (i % 7) as f32).collect();
        let exact: f32 = input.iter().sum();
        let parts = reduce_block_partials(&input, 3, 256);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.iter().sum::<f32>(), exact);
        let (_, total) = reference(&input, 3);
        assert_eq!(total, exact);
        // One block, n smaller than the block: thread t only sees element t.
        assert_eq!(reduce_block_partials(&[1.0, 2.0, 3.0], 1, 256), vec![6.0]);
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(64, 3), inputs(64, 3));
        assert_ne!(inputs(64, 3), inputs(64, 4));
    }
}
