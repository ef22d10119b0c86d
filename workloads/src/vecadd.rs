//! vecadd: `c[i] = a[i] + b[i]`, one thread per element. The regular, coalesced baseline.

use crate::rng::SplitMix64;
use crate::{
    blocks_for, check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload,
};
use warpforge_model::error::SimError;

crate::workload!(
    VecAdd,
    "vecadd",
    Category::Regular,
    "element-wise float vector add, one thread per element (coalesced, no divergence)"
);

const BLOCK: u32 = 256;
/// One IEEE add per element: the device result must be bit-identical.
const TOL: Tolerance = Tolerance { rel: 0.0, abs: 0.0 };

pub(crate) fn len(size: Size) -> usize {
    size.pick(1024, 16 * 1024, 1 << 20)
}

pub(crate) fn inputs(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut ga = SplitMix64::for_stream(seed, "vecadd.a");
    let mut gb = SplitMix64::for_stream(seed, "vecadd.b");
    let a = (0..n).map(|_| ga.range_f32(-100.0, 100.0)).collect();
    let b = (0..n).map(|_| gb.range_f32(-100.0, 100.0)).collect();
    (a, b)
}

pub(crate) fn reference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

fn run_impl(
    w: &VecAdd,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let n = len(size);
    let (a, b) = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let da = host.alloc_write_f32(&a)?;
    let db = host.alloc_write_f32(&b)?;
    let dc = host.alloc(n as u64 * 4)?;
    host.launch(
        m,
        "vecadd",
        Dim3::x(blocks_for(n, BLOCK)),
        Dim3::x(BLOCK),
        0,
        &[
            KernelArg::Ptr(da),
            KernelArg::Ptr(db),
            KernelArg::Ptr(dc),
            KernelArg::S32(n as i32),
        ],
    )?;
    let got = host.read_f32(dc, n)?;
    Ok(check_f32("c", &reference(&a, &b), &got, TOL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_adds() {
        assert_eq!(reference(&[1.0, 2.5], &[3.0, -0.5]), vec![4.0, 2.0]);
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(100, 5), inputs(100, 5));
        assert_ne!(inputs(100, 5), inputs(100, 6));
    }
}
