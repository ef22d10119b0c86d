//! lud: blocked in-place LU decomposition without pivoting (Rodinia-like diagonal,
//! perimeter and internal kernels, launched per 16-wide block step).

use crate::rng::SplitMix64;
use crate::{check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Lud,
    "lud",
    Category::Divergent,
    "blocked LU decomposition: shrinking triangular loops (lanes drop out per step), three kernels per block step"
);

pub(crate) const BS: usize = 16;
/// Every element undergoes the same fma chain (k ascending) and division in the kernels and
/// in the reference, so results should be bit-identical; the tolerance only covers a model
/// whose fma/div differs in the last place.
const TOL: Tolerance = Tolerance {
    rel: 1e-4,
    abs: 1e-5,
};

pub(crate) fn order(size: Size) -> usize {
    size.pick(32, 64, 256)
}

/// A diagonally dominant matrix (no pivoting needed): entries in [-1, 1), diagonal += n.
pub(crate) fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut g = SplitMix64::for_stream(seed, "lud.a");
    let mut a: Vec<f32> = (0..n * n).map(|_| g.range_f32(-1.0, 1.0)).collect();
    for i in 0..n {
        a[i * n + i] += n as f32;
    }
    a
}

/// Right-looking Doolittle, in place: L (unit diagonal, not stored) below, U on and above
/// the diagonal. Uses the kernels' exact operations: `a[i][j] = fma(-a[i][k], a[k][j],
/// a[i][j])` for k ascending, and `a[i][k] /= a[k][k]`.
pub(crate) fn reference(a: &[f32], n: usize) -> Vec<f32> {
    let mut a = a.to_vec();
    for k in 0..n {
        for i in k + 1..n {
            a[i * n + k] /= a[k * n + k];
        }
        for i in k + 1..n {
            for j in k + 1..n {
                a[i * n + j] = (-a[i * n + k]).mul_add(a[k * n + j], a[i * n + j]);
            }
        }
    }
    a
}

/// The launches for one block step `it` of an n x n matrix: (kernel, grid, block).
pub(crate) fn step_launches(n: usize, it: usize) -> Vec<(&'static str, Dim3, Dim3)> {
    let rest = (n / BS - it - 1) as u32;
    let mut v = vec![("lud_diagonal", Dim3::x(1), Dim3::x(BS as u32))];
    if rest > 0 {
        v.push(("lud_perimeter", Dim3::x(rest), Dim3::x(2 * BS as u32)));
        v.push((
            "lud_internal",
            Dim3::xy(rest, rest),
            Dim3::xy(BS as u32, BS as u32),
        ));
    }
    v
}

fn run_impl(w: &Lud, host: &mut dyn Host, size: Size, seed: u64) -> Result<Verification, SimError> {
    let n = order(size);
    let a = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let da = host.alloc_write_f32(&a)?;
    for it in 0..n / BS {
        for (kernel, grid, block) in step_launches(n, it) {
            host.launch(
                m,
                kernel,
                grid,
                block,
                0,
                &[
                    KernelArg::Ptr(da),
                    KernelArg::S32(n as i32),
                    KernelArg::S32((it * BS) as i32),
                ],
            )?;
        }
    }
    let got = host.read_f32(da, n * n)?;
    Ok(check_f32("lu", &reference(&a, n), &got, TOL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_by_hand() {
        // [4 3; 6 3] = [1 0; 1.5 1] * [4 3; 0 -1.5]
        assert_eq!(
            reference(&[4.0, 3.0, 6.0, 3.0], 2),
            vec![4.0, 3.0, 1.5, -1.5]
        );
    }

    #[test]
    fn lu_reconstructs_a() {
        let n = 48;
        let a = inputs(n, 5);
        let lu = reference(&a, n);
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0f64;
                for k in 0..=i.min(j) {
                    let l = if k == i { 1.0 } else { lu[i * n + k] as f64 };
                    s += l * lu[k * n + j] as f64;
                }
                assert!(
                    (s - a[i * n + j] as f64).abs() < 1e-3,
                    "({i},{j}): {s} vs {}",
                    a[i * n + j]
                );
            }
        }
    }

    #[test]
    fn launch_schedule() {
        let total: usize = (0..4).map(|it| step_launches(64, it).len()).sum();
        assert_eq!(total, 3 * 3 + 1);
        assert_eq!(step_launches(64, 0)[2].1, Dim3::xy(3, 3));
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(16, 1), inputs(16, 1));
        assert_ne!(inputs(16, 1), inputs(16, 2));
    }
}
