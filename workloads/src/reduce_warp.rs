//! reduce_warp: integer sum with `shfl.sync.down` inside each warp and one global atomic
//! add per warp.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    ReduceWarp,
    "reduce_warp",
    Category::Regular,
    "integer sum: grid-stride loads, warp-shuffle tree, one global atomicAdd per warp"
);

const BLOCK: u32 = 256;

/// (n, grid).
pub(crate) fn params(size: Size) -> (usize, u32) {
    size.pick((4096, 4), (64 * 1024, 32), (4 << 20, 1024))
}

pub(crate) fn inputs(n: usize, seed: u64) -> Vec<i32> {
    let mut g = SplitMix64::for_stream(seed, "reduce_warp.in");
    (0..n).map(|_| g.range_i32(-1000, 1000)).collect()
}

/// Integer addition wraps like the device's 32-bit add, in any order.
pub(crate) fn reference(input: &[i32]) -> i32 {
    input.iter().fold(0i32, |a, &b| a.wrapping_add(b))
}

fn run_impl(
    w: &ReduceWarp,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (n, grid) = params(size);
    let input = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let din = host.alloc_write_i32(&input)?;
    let dout = host.alloc(4)?; // zero-filled
    host.launch(
        m,
        "reduce_warp",
        Dim3::x(grid),
        Dim3::x(BLOCK),
        0,
        &[
            KernelArg::Ptr(din),
            KernelArg::Ptr(dout),
            KernelArg::S32(n as i32),
        ],
    )?;
    let got = host.read_i32(dout, 1)?;
    Ok(check_exact("sum", &[reference(&input)], &got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_sums() {
        assert_eq!(reference(&[1, -2, 3]), 2);
        assert_eq!(reference(&[i32::MAX, 1]), i32::MIN);
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(64, 3), inputs(64, 3));
        assert_ne!(inputs(64, 3), inputs(64, 4));
        assert!(inputs(1000, 1).iter().all(|v| (-1000..=1000).contains(v)));
    }
}
