//! mandelbrot: escape-time iteration counts per pixel. Neighbouring pixels escape after
//! very different iteration counts, so warps diverge on the loop exit.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Mandelbrot,
    "mandelbrot",
    Category::Divergent,
    "escape-time Mandelbrot: data-dependent loop exit per pixel (heavy loop divergence)"
);

const BLOCK: (u32, u32) = (16, 16);

/// (width, height, max_iter).
pub(crate) fn params(size: Size) -> (usize, usize, i32) {
    size.pick((32, 32, 32), (128, 80, 64), (256, 192, 100))
}

/// The view window (x0, y0, dx, dy): the whole set, shifted slightly by the seed.
pub(crate) fn window(width: usize, height: usize, seed: u64) -> (f32, f32, f32, f32) {
    let mut g = SplitMix64::for_stream(seed, "mandelbrot.window");
    let x0 = -2.1 + g.range_f32(-0.05, 0.05);
    let y0 = -1.2 + g.range_f32(-0.05, 0.05);
    (x0, y0, 3.0 / width as f32, 2.4 / height as f32)
}

/// Iteration counts with the kernel's exact float operations (the same explicit fmas and
/// separately rounded products), so counts must match exactly.
pub(crate) fn reference(
    width: usize,
    height: usize,
    win: (f32, f32, f32, f32),
    max_iter: i32,
) -> Vec<i32> {
    let (x0, y0, dx, dy) = win;
    let mut out = Vec::with_capacity(width * height);
    for py in 0..height {
        for px in 0..width {
            let cx = (px as f32).mul_add(dx, x0);
            let cy = (py as f32).mul_add(dy, y0);
            let (mut x, mut y, mut i) = (0.0f32, 0.0f32, 0);
            while i < max_iter {
                let xx = x * x;
                let yy = y * y;
                if y.mul_add(y, xx) > 4.0 {
                    break;
                }
                let xn = x.mul_add(x, -yy) + cx;
                y = (x + x).mul_add(y, cy);
                x = xn;
                i += 1;
            }
            out.push(i);
        }
    }
    out
}

fn run_impl(
    w: &Mandelbrot,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (width, height, max_iter) = params(size);
    let win = window(width, height, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let dout = host.alloc((width * height * 4) as u64)?;
    let grid = Dim3::xy(
        (width as u32).div_ceil(BLOCK.0),
        (height as u32).div_ceil(BLOCK.1),
    );
    host.launch(
        m,
        "mandelbrot",
        grid,
        Dim3::xy(BLOCK.0, BLOCK.1),
        0,
        &[
            KernelArg::Ptr(dout),
            KernelArg::S32(width as i32),
            KernelArg::S32(height as i32),
            KernelArg::F32(win.0),
            KernelArg::F32(win.1),
            KernelArg::F32(win.2),
            KernelArg::F32(win.3),
            KernelArg::S32(max_iter),
        ],
    )?;
    let got = host.read_i32(dout, width * height)?;
    Ok(check_exact(
        "iterations",
        &reference(width, height, win, max_iter),
        &got,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_points() {
        // One-pixel images at chosen c: c = 0 never escapes; c = 1 escapes after
        // 0 -> 1 -> 2 -> 5 (|z|^2 = 25 > 4 checked at the 4th test): 3 iterations;
        // c = -2 stays at 2 (|z|^2 = 4 is not > 4): never escapes.
        assert_eq!(reference(1, 1, (0.0, 0.0, 1.0, 1.0), 50), vec![50]);
        assert_eq!(reference(1, 1, (1.0, 0.0, 1.0, 1.0), 50), vec![3]);
        assert_eq!(reference(1, 1, (-2.0, 0.0, 1.0, 1.0), 50), vec![50]);
    }

    #[test]
    fn image_diverges_and_is_deterministic() {
        let win = window(32, 32, 1);
        assert_eq!(win, window(32, 32, 1));
        assert_ne!(win, window(32, 32, 2));
        let img = reference(32, 32, win, 64);
        assert!(img.contains(&64) && img.iter().any(|&i| i < 5));
    }
}
