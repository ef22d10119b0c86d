//! stencil: 2D 5-point Jacobi iterations with boundary checks; the host ping-pongs two
//! buffers.

use crate::rng::SplitMix64;
use crate::{check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Stencil,
    "stencil",
    Category::Divergent,
    "2D 5-point Jacobi: boundary/interior branch per thread, neighbour loads, several host-launched iterations"
);

const BLOCK: (u32, u32) = (32, 8);
const C0: f32 = 0.5;
const C1: f32 = 0.125;
/// The reference repeats the kernel's operations (two adds, a sum, an unfused multiply and
/// an fma) so results should be bit-identical.
const TOL: Tolerance = Tolerance {
    rel: 1e-5,
    abs: 1e-6,
};

/// (width, height, iterations).
pub(crate) fn params(size: Size) -> (usize, usize, usize) {
    size.pick((32, 16, 4), (128, 64, 8), (384, 384, 10))
}

pub(crate) fn inputs(width: usize, height: usize, seed: u64) -> Vec<f32> {
    let mut g = SplitMix64::for_stream(seed, "stencil.grid");
    (0..width * height).map(|_| g.unit_f32()).collect()
}

pub(crate) fn step(input: &[f32], width: usize, height: usize) -> Vec<f32> {
    let mut out = input.to_vec();
    for y in 1..height.saturating_sub(1) {
        for x in 1..width - 1 {
            let i = y * width + x;
            let ns = input[i - width] + input[i + width];
            let we = input[i - 1] + input[i + 1];
            out[i] = C1.mul_add(ns + we, C0 * input[i]);
        }
    }
    out
}

pub(crate) fn reference(grid: &[f32], width: usize, height: usize, iterations: usize) -> Vec<f32> {
    (0..iterations).fold(grid.to_vec(), |g, _| step(&g, width, height))
}

fn run_impl(
    w: &Stencil,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (width, height, iterations) = params(size);
    let grid = inputs(width, height, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let mut bufs = [
        host.alloc_write_f32(&grid)?,
        host.alloc((width * height * 4) as u64)?,
    ];
    let launch_grid = Dim3::xy(
        (width as u32).div_ceil(BLOCK.0),
        (height as u32).div_ceil(BLOCK.1),
    );
    for _ in 0..iterations {
        host.launch(
            m,
            "stencil2d",
            launch_grid,
            Dim3::xy(BLOCK.0, BLOCK.1),
            0,
            &[
                KernelArg::Ptr(bufs[0]),
                KernelArg::Ptr(bufs[1]),
                KernelArg::S32(width as i32),
                KernelArg::S32(height as i32),
                KernelArg::F32(C0),
                KernelArg::F32(C1),
            ],
        )?;
        bufs.swap(0, 1);
    }
    let got = host.read_f32(bufs[0], width * height)?;
    Ok(check_f32(
        "grid",
        &reference(&grid, width, height, iterations),
        &got,
        TOL,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_by_hand() {
        // 3x3, centre 1, neighbours 2: 0.5 * 1 + 0.125 * 8 = 1.5; borders copied.
        let g = [0.0, 2.0, 0.0, 2.0, 1.0, 2.0, 0.0, 2.0, 0.0];
        let out = step(&g, 3, 3);
        assert_eq!(out[4], 1.5);
        assert_eq!(out[0..4], g[0..4]);
    }

    #[test]
    fn constant_field_is_a_fixed_point() {
        // c0 + 4 * c1 = 1: a constant grid stays constant.
        let g = vec![0.75f32; 64];
        assert_eq!(reference(&g, 8, 8, 5), g);
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(8, 4, 1), inputs(8, 4, 1));
        assert_ne!(inputs(8, 4, 1), inputs(8, 4, 2));
    }
}
