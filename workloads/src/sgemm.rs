//! sgemm: `C = A * B` with 16x16 shared-memory tiles (block 16x16, one output per thread).

use crate::rng::SplitMix64;
use crate::{check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Sgemm,
    "sgemm",
    Category::Regular,
    "tiled single-precision matrix multiply, 16x16 shared-memory tiles with __syncthreads"
);

const TILE: u32 = 16;
/// The reference performs the kernel's exact fma chain (k ascending; padding adds
/// fma(0, 0, acc) = acc), so results should be bit-identical; the tolerance only absorbs a
/// model that rounds fma differently in the last place.
const TOL: Tolerance = Tolerance {
    rel: 1e-5,
    abs: 1e-5,
};

/// (M, N, K). Tiny and Small are not multiples of 16 so the bounds checks are exercised.
pub(crate) fn dims(size: Size) -> (usize, usize, usize) {
    size.pick((32, 32, 24), (80, 72, 40), (192, 192, 192))
}

pub(crate) fn inputs(m: usize, n: usize, k: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut ga = SplitMix64::for_stream(seed, "sgemm.a");
    let mut gb = SplitMix64::for_stream(seed, "sgemm.b");
    let a = (0..m * k).map(|_| ga.range_f32(-1.0, 1.0)).collect();
    let b = (0..k * n).map(|_| gb.range_f32(-1.0, 1.0)).collect();
    (a, b)
}

pub(crate) fn reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for r in 0..m {
        for col in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc = a[r * k + kk].mul_add(b[kk * n + col], acc);
            }
            c[r * n + col] = acc;
        }
    }
    c
}

fn run_impl(
    w: &Sgemm,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (m, n, k) = dims(size);
    let (a, b) = inputs(m, n, k, seed);
    let md = host.load_module(w.ptx_file(), w.ptx())?;
    let da = host.alloc_write_f32(&a)?;
    let db = host.alloc_write_f32(&b)?;
    let dc = host.alloc((m * n * 4) as u64)?;
    let grid = Dim3::xy((n as u32).div_ceil(TILE), (m as u32).div_ceil(TILE));
    host.launch(
        md,
        "sgemm",
        grid,
        Dim3::xy(TILE, TILE),
        0,
        &[
            KernelArg::Ptr(da),
            KernelArg::Ptr(db),
            KernelArg::Ptr(dc),
            KernelArg::S32(m as i32),
            KernelArg::S32(n as i32),
            KernelArg::S32(k as i32),
        ],
    )?;
    let got = host.read_f32(dc, m * n)?;
    Ok(check_f32("C", &reference(&a, &b, m, n, k), &got, TOL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_multiplies() {
        // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
        let c = reference(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 2, 2, 2);
        assert_eq!(c, vec![19.0, 22.0, 43.0, 50.0]);
        // 1x3 * 3x1
        assert_eq!(
            reference(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 1, 1, 3),
            vec![32.0]
        );
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(4, 5, 6, 1), inputs(4, 5, 6, 1));
        assert_ne!(inputs(4, 5, 6, 1), inputs(4, 5, 6, 2));
    }
}
