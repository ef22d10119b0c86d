//! lps: 3-D Laplace solver by Jacobi sweeps (the shape of the GPGPU-Sim suite's LPS): 32x4
//! CTAs tile the x-y plane, each thread marches along z; points on the grid's faces copy
//! their value, interior points take the mean of their six neighbours. The x-faces make
//! lanes 0 and 31 of their warps diverge on every plane, the y-faces whole warps, and nx
//! not a multiple of 32 leaves the last column of CTAs partly idle. The host ping-pongs two
//! buffers over several sweeps.

use crate::rng::SplitMix64;
use crate::{check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Lps,
    "lps",
    Category::Divergent,
    "3-D Laplace/Jacobi: boundary points take a copy path, interior a 6-point mean; threads march along z"
);

const BLOCK: (u32, u32) = (32, 4);
/// The reference sums the neighbours in the kernel's order and multiplies by the same
/// rounded 1/6, so results should be bit-identical.
const TOL: Tolerance = Tolerance {
    rel: 1e-6,
    abs: 1e-7,
};

/// (nx, ny, nz, sweeps).
pub(crate) fn params(size: Size) -> (usize, usize, usize, usize) {
    size.pick((40, 8, 6, 2), (64, 32, 16, 3), (100, 100, 32, 3))
}

/// Random interior values; the faces hold a fixed boundary condition (1 on the k = 0
/// plane, 0 elsewhere) plus a little noise.
pub(crate) fn inputs(nx: usize, ny: usize, nz: usize, seed: u64) -> Vec<f32> {
    let mut g = SplitMix64::for_stream(seed, "lps.grid");
    let mut u = vec![0.0f32; nx * ny * nz];
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let face = i == 0 || i == nx - 1 || j == 0 || j == ny - 1 || k == nz - 1;
                let v = g.unit_f32();
                u[(k * ny + j) * nx + i] = if k == 0 {
                    1.0
                } else if face {
                    0.25 * v
                } else {
                    v
                };
            }
        }
    }
    u
}

/// One sweep, as `lps_jacobi` computes it.
pub(crate) fn sweep(u: &[f32], nx: usize, ny: usize, nz: usize) -> Vec<f32> {
    let plane = nx * ny;
    let mut out = u.to_vec();
    for k in 1..nz.saturating_sub(1) {
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let idx = k * plane + j * nx + i;
                let mut s = u[idx - 1] + u[idx + 1];
                s += u[idx - nx];
                s += u[idx + nx];
                s += u[idx - plane];
                s += u[idx + plane];
                out[idx] = s * (1.0f32 / 6.0);
            }
        }
    }
    out
}

pub(crate) fn reference(u: &[f32], nx: usize, ny: usize, nz: usize, sweeps: usize) -> Vec<f32> {
    (0..sweeps).fold(u.to_vec(), |g, _| sweep(&g, nx, ny, nz))
}

fn run_impl(w: &Lps, host: &mut dyn Host, size: Size, seed: u64) -> Result<Verification, SimError> {
    let (nx, ny, nz, sweeps) = params(size);
    let u = inputs(nx, ny, nz, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let mut bufs = [host.alloc_write_f32(&u)?, host.alloc((u.len() * 4) as u64)?];
    let grid = Dim3::xy((nx as u32).div_ceil(BLOCK.0), (ny as u32).div_ceil(BLOCK.1));
    for _ in 0..sweeps {
        host.launch(
            m,
            "lps_jacobi",
            grid,
            Dim3::xy(BLOCK.0, BLOCK.1),
            0,
            &[
                KernelArg::Ptr(bufs[0]),
                KernelArg::Ptr(bufs[1]),
                KernelArg::S32(nx as i32),
                KernelArg::S32(ny as i32),
                KernelArg::S32(nz as i32),
            ],
        )?;
        bufs.swap(0, 1);
    }
    let got = host.read_f32(bufs[0], u.len())?;
    Ok(check_f32(
        "u",
        &reference(&u, nx, ny, nz, sweeps),
        &got,
        TOL,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_keeps_faces_and_averages_the_interior() {
        let (nx, ny, nz) = (4, 3, 3);
        let u: Vec<f32> = (0..nx * ny * nz).map(|i| i as f32).collect();
        let out = sweep(&u, nx, ny, nz);
        for (i, (&a, &b)) in u.iter().zip(&out).enumerate() {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            if x == 0 || x == nx - 1 || y == 0 || y == ny - 1 || z == 0 || z == nz - 1 {
                assert_eq!(a, b, "face point {i} is copied");
            }
        }
        // A linear field is harmonic: the mean of its neighbours is itself.
        let idx = 12 + 4 + 1;
        assert!((out[idx] - u[idx]).abs() < 1e-5);
        assert!((out[idx + 1] - u[idx + 1]).abs() < 1e-5);
    }

    #[test]
    fn jacobi_converges_towards_the_boundary_values() {
        // A constant field stays constant.
        let (nx, ny, nz) = (6, 6, 6);
        let c = vec![0.5f32; nx * ny * nz];
        assert_eq!(reference(&c, nx, ny, nz, 3), c);
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(8, 4, 4, 1), inputs(8, 4, 4, 1));
        assert_ne!(inputs(8, 4, 4, 1), inputs(8, 4, 4, 2));
    }
}
