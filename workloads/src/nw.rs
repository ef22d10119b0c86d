//! nw: Needleman-Wunsch alignment scores (Rodinia-like). The (n+1)x(n+1) score matrix is
//! processed in 32x32 tiles, one launch per block anti-diagonal and one 32-thread CTA per
//! tile; inside a tile threads sweep cell anti-diagonals in shared memory.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Nw,
    "nw",
    Category::Divergent,
    "Needleman-Wunsch DP: wavefront over 32x32 tiles, per-diagonal launches, lanes idle on short anti-diagonals"
);

pub(crate) const B: usize = 32;
const SYMBOLS: u32 = 24;
pub(crate) const PENALTY: i32 = 10;

/// Sequence length n (a multiple of 32).
pub(crate) fn len(size: Size) -> usize {
    size.pick(64, 256, 1024)
}

/// Two random sequences over 24 symbols scored by a seeded symmetric substitution table;
/// returns `ref[i * n + j]` = score of aligning seq1[i] with seq2[j].
pub(crate) fn inputs(n: usize, seed: u64) -> Vec<i32> {
    let mut g = SplitMix64::for_stream(seed, "nw.input");
    let s = SYMBOLS as usize;
    let mut sub = vec![0i32; s * s];
    for a in 0..s {
        sub[a * s + a] = g.range_i32(4, 11);
        for b in 0..a {
            let v = g.range_i32(-4, 2);
            sub[a * s + b] = v;
            sub[b * s + a] = v;
        }
    }
    let seq1: Vec<usize> = (0..n).map(|_| g.below(SYMBOLS) as usize).collect();
    let seq2: Vec<usize> = (0..n).map(|_| g.below(SYMBOLS) as usize).collect();
    let mut r = vec![0i32; n * n];
    for i in 0..n {
        for j in 0..n {
            r[i * n + j] = sub[seq1[i] * s + seq2[j]];
        }
    }
    r
}

/// Initial score matrix: gap penalties along row 0 and column 0, zeros elsewhere.
pub(crate) fn initial_score(n: usize, penalty: i32) -> Vec<i32> {
    let w = n + 1;
    let mut s = vec![0i32; w * w];
    for i in 0..w {
        s[i * w] = -(i as i32) * penalty;
        s[i] = -(i as i32) * penalty;
    }
    s
}

/// The full DP, row by row.
pub(crate) fn reference(r: &[i32], n: usize, penalty: i32) -> Vec<i32> {
    let w = n + 1;
    let mut s = initial_score(n, penalty);
    for i in 1..w {
        for j in 1..w {
            let a = s[(i - 1) * w + j - 1] + r[(i - 1) * n + j - 1];
            let b = s[(i - 1) * w + j] - penalty;
            let c = s[i * w + j - 1] - penalty;
            s[i * w + j] = a.max(b).max(c);
        }
    }
    s
}

/// Tiles on block diagonal `d` of an nb x nb tiling: (first tile row, count).
pub(crate) fn diagonal(d: usize, nb: usize) -> (usize, usize) {
    let first = (d + 1).saturating_sub(nb);
    let last = d.min(nb - 1);
    (first, last - first + 1)
}

fn run_impl(w: &Nw, host: &mut dyn Host, size: Size, seed: u64) -> Result<Verification, SimError> {
    let n = len(size);
    let nb = n / B;
    let r = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let dscore = host.alloc_write_i32(&initial_score(n, PENALTY))?;
    let dref = host.alloc_write_i32(&r)?;
    for d in 0..2 * nb - 1 {
        let (_, count) = diagonal(d, nb);
        host.launch(
            m,
            "nw_tile",
            Dim3::x(count as u32),
            Dim3::x(B as u32),
            0,
            &[
                KernelArg::Ptr(dscore),
                KernelArg::Ptr(dref),
                KernelArg::S32(n as i32),
                KernelArg::S32(PENALTY),
                KernelArg::S32(d as i32),
            ],
        )?;
    }
    let got = host.read_i32(dscore, (n + 1) * (n + 1))?;
    Ok(check_exact("score", &reference(&r, n, PENALTY), &got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_by_hand() {
        // Same sequence [a, b], match +1, mismatch -1, gap 1:
        //  0 -1 -2
        // -1  1  0
        // -2  0  2
        let r = vec![1, -1, -1, 1];
        assert_eq!(reference(&r, 2, 1), vec![0, -1, -2, -1, 1, 0, -2, 0, 2]);
    }

    /// Emulates `nw_tile` launch by launch (tile by tile, thread by thread per cell
    /// anti-diagonal) and checks it reproduces the row-by-row DP.
    #[test]
    fn tiled_wavefront_matches_reference() {
        let n = 96;
        let nb = n / B;
        let r = inputs(n, 3);
        let w = n + 1;
        let mut s = initial_score(n, PENALTY);
        for d in 0..2 * nb - 1 {
            let (first, count) = diagonal(d, nb);
            for c in 0..count {
                let (bi, bj) = (first + c, d - first - c);
                let (r0, c0) = (bi * B, bj * B);
                let mut t = [[0i32; B + 1]; B + 1];
                t[0][0] = s[r0 * w + c0];
                for tx in 0..B {
                    t[0][tx + 1] = s[r0 * w + c0 + tx + 1];
                    t[tx + 1][0] = s[(r0 + tx + 1) * w + c0];
                }
                for m in 0..2 * B - 1 {
                    for tx in 0..B {
                        let (x, y) = (tx + 1, m as isize - tx as isize + 1);
                        if (1..=B as isize).contains(&y) {
                            let y = y as usize;
                            let a = t[y - 1][x - 1] + r[(r0 + y - 1) * n + c0 + x - 1];
                            t[y][x] = a.max(t[y - 1][x] - PENALTY).max(t[y][x - 1] - PENALTY);
                        }
                    }
                }
                for ty in 0..B {
                    for tx in 0..B {
                        s[(r0 + ty + 1) * w + c0 + tx + 1] = t[ty + 1][tx + 1];
                    }
                }
            }
        }
        assert_eq!(s, reference(&r, n, PENALTY));
    }

    #[test]
    fn diagonals_cover_all_tiles() {
        let nb = 4;
        let total: usize = (0..2 * nb - 1).map(|d| diagonal(d, nb).1).sum();
        assert_eq!(total, nb * nb);
        assert_eq!(diagonal(0, nb), (0, 1));
        assert_eq!(diagonal(3, nb), (0, 4));
        assert_eq!(diagonal(6, nb), (3, 1));
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(32, 1), inputs(32, 1));
        assert_ne!(inputs(32, 1), inputs(32, 2));
    }
}
