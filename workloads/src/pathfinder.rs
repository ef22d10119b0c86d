//! pathfinder: Rodinia dynproc. Minimum-cost path from the top row to each bottom cell,
//! moving down to one of the three cells below. Each launch advances up to PYRAMID rows in
//! shared memory; overlapping halos and a shrinking valid range make lanes go idle.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Pathfinder,
    "pathfinder",
    Category::Divergent,
    "Rodinia pathfinder DP: shared-memory pyramid over 20 rows per launch, halo and boundary-dependent branches"
);

pub(crate) const BLOCK: usize = 256;
pub(crate) const PYRAMID: usize = 20;

/// (cols, rows).
pub(crate) fn params(size: Size) -> (usize, usize) {
    size.pick((400, 31), (4000, 61), (16 * 1024, 81))
}

/// Wall costs 0..9 (as Rodinia's `rand() % 10`), row-major rows x cols.
pub(crate) fn inputs(cols: usize, rows: usize, seed: u64) -> Vec<i32> {
    let mut g = SplitMix64::for_stream(seed, "pathfinder.wall");
    (0..cols * rows).map(|_| g.below(10) as i32).collect()
}

pub(crate) fn reference(wall: &[i32], cols: usize, rows: usize) -> Vec<i32> {
    let mut prev = wall[..cols].to_vec();
    for r in 1..rows {
        prev = (0..cols)
            .map(|c| {
                let l = prev[c.saturating_sub(1)];
                let rt = prev[(c + 1).min(cols - 1)];
                prev[c].min(l).min(rt) + wall[r * cols + c]
            })
            .collect();
    }
    prev
}

/// The launches: (iteration, start_step) per launch.
pub(crate) fn schedule(rows: usize) -> Vec<(usize, usize)> {
    (0..rows - 1)
        .step_by(PYRAMID)
        .map(|t| (PYRAMID.min(rows - 1 - t), t))
        .collect()
}

pub(crate) fn grid_blocks(cols: usize) -> usize {
    cols.div_ceil(BLOCK - 2 * PYRAMID)
}

fn run_impl(
    w: &Pathfinder,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (cols, rows) = params(size);
    let wall = inputs(cols, rows, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let dwall = host.alloc_write_i32(&wall)?;
    let mut bufs = [
        host.alloc_write_i32(&wall[..cols])?,
        host.alloc((cols * 4) as u64)?,
    ];
    for (iteration, start) in schedule(rows) {
        host.launch(
            m,
            "pathfinder",
            Dim3::x(grid_blocks(cols) as u32),
            Dim3::x(BLOCK as u32),
            0,
            &[
                KernelArg::S32(iteration as i32),
                KernelArg::Ptr(dwall),
                KernelArg::Ptr(bufs[0]),
                KernelArg::Ptr(bufs[1]),
                KernelArg::S32(cols as i32),
                KernelArg::S32(start as i32),
                KernelArg::S32(PYRAMID as i32),
            ],
        )?;
        bufs.swap(0, 1);
    }
    let got = host.read_i32(bufs[0], cols)?;
    Ok(check_exact("cost", &reference(&wall, cols, rows), &got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_by_hand() {
        // rows: [1 2 3], [4 0 9], [1 1 1]
        // row1: [min(1,2)+4, min(1,2,3)+0, min(2,3)+9] = [5, 1, 11]
        // row2: [min(5,1)+1, min(5,1,11)+1, min(1,11)+1] = [2, 2, 2]
        assert_eq!(reference(&[1, 2, 3, 4, 0, 9, 1, 1, 1], 3, 3), vec![2, 2, 2]);
    }

    /// Emulates the `pathfinder` kernel (every CTA and thread, shared arrays, the break on
    /// the last iteration) over the host schedule and checks it equals the row DP.
    fn emulate(wall: &[i32], cols: usize, rows: usize) -> Vec<i32> {
        let mut src = wall[..cols].to_vec();
        let mut dst = vec![0i32; cols];
        let border = PYRAMID as i64;
        let (b, c) = (BLOCK as i64, cols as i64);
        for (iteration, start) in schedule(rows) {
            let it = iteration as i64;
            for bx in 0..grid_blocks(cols) as i64 {
                let sbc = b - it * 2;
                let blk_x = sbc * bx - border;
                let blk_x_max = blk_x + b - 1;
                let vmin = if blk_x < 0 { -blk_x } else { 0 };
                let vmax = if blk_x_max > c - 1 {
                    b - 1 - (blk_x_max - c + 1)
                } else {
                    b - 1
                };
                let mut prev = vec![0i32; BLOCK];
                let mut result = vec![0i32; BLOCK];
                for tx in 0..b {
                    let x = blk_x + tx;
                    if (0..c).contains(&x) {
                        prev[tx as usize] = src[x as usize];
                    }
                }
                let mut computed = vec![false; BLOCK];
                for i in 0..it {
                    for tx in 0..b {
                        let t = tx as usize;
                        computed[t] = false;
                        let valid = (vmin..=vmax).contains(&tx);
                        if (i + 1..=b - i - 2).contains(&tx) && valid {
                            computed[t] = true;
                            let wi = (tx - 1).max(vmin) as usize;
                            let ei = (tx + 1).min(vmax) as usize;
                            let s = prev[wi].min(prev[t]).min(prev[ei]);
                            let idx = c * (start as i64 + i + 1) + blk_x + tx;
                            result[t] = s + wall[idx as usize];
                        }
                    }
                    if i == it - 1 {
                        break;
                    }
                    for t in 0..BLOCK {
                        if computed[t] {
                            prev[t] = result[t];
                        }
                    }
                }
                for tx in 0..b {
                    if computed[tx as usize] {
                        dst[(blk_x + tx) as usize] = result[tx as usize];
                    }
                }
            }
            std::mem::swap(&mut src, &mut dst);
        }
        src
    }

    #[test]
    fn kernel_emulation_matches_reference() {
        for (cols, rows) in [(400, 31), (300, 21), (217, 5), (1000, 45)] {
            let wall = inputs(cols, rows, 7);
            assert_eq!(
                emulate(&wall, cols, rows),
                reference(&wall, cols, rows),
                "{cols}x{rows}"
            );
        }
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(10, 3, 1), inputs(10, 3, 1));
        assert_ne!(inputs(10, 3, 1), inputs(10, 3, 2));
    }
}
