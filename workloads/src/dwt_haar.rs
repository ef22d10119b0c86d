//! dwt_haar: full 1-D Haar wavelet decomposition (the shape of the CUDA SDK's dwtHaar1D,
//! DWTHARR in the thread-block-compaction study). Each CTA of 256 threads decomposes 512
//! samples in shared memory over 9 levels, the active threads halving per level (`t <
//! active`: whole warps drop out, then lanes of warp 0, never compactable); the host runs
//! the same kernel once more, in one CTA, on the CTAs' approximations.

use crate::rng::SplitMix64;
use crate::{check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    DwtHaar,
    "dwt_haar",
    Category::Divergent,
    "Haar wavelet decomposition: active threads halve per level in shared memory, second pass on the CTAs' approximations"
);

const BLOCK: usize = 256;
const CHUNK: usize = 2 * BLOCK;
const INV_SQRT2: f32 = std::f32::consts::FRAC_1_SQRT_2;
/// The reference performs the kernel's add/sub then multiply per pair in the same order,
/// so results should be bit-identical.
const TOL: Tolerance = Tolerance {
    rel: 1e-6,
    abs: 1e-7,
};

/// Signal length n (a power of two, at least 1024 and at most 512 * 1024 so that the
/// second pass fits in one CTA of at most 512 threads).
pub(crate) fn len(size: Size) -> usize {
    size.pick(1024, 16 * 1024, 512 * 1024)
}

pub(crate) fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut g = SplitMix64::for_stream(seed, "dwt_haar.signal");
    // A random walk: neighbouring samples correlate, as in a real signal.
    let mut x = 0.0f32;
    (0..n)
        .map(|_| {
            x = 0.9 * x + g.range_f32(-1.0, 1.0);
            x
        })
        .collect()
}

/// The decomposition in the standard layout: out[0] = final approximation, out[2^j ..
/// 2^(j+1)] = details of the (log2 n - j)-th level. Pairs are combined level by level exactly
/// as the kernel does (the CTA split does not change which pairs meet).
pub(crate) fn reference(signal: &[f32]) -> Vec<f32> {
    let n = signal.len();
    let mut out = vec![0.0f32; n];
    let mut cur = signal.to_vec();
    while cur.len() > 1 {
        let half = cur.len() / 2;
        let next: Vec<f32> = (0..half)
            .map(|t| (cur[2 * t] + cur[2 * t + 1]) * INV_SQRT2)
            .collect();
        for t in 0..half {
            out[half + t] = (cur[2 * t] - cur[2 * t + 1]) * INV_SQRT2;
        }
        cur = next;
    }
    out[0] = cur[0];
    out
}

fn run_impl(
    w: &DwtHaar,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let n = len(size);
    let signal = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let din = host.alloc_write_f32(&signal)?;
    let dout = host.alloc((n * 4) as u64)?;
    let ctas = n / CHUNK;
    let dapprox = host.alloc((ctas * 4) as u64)?;
    // A pass over `len` values with CTAs of `threads` threads (2 * threads values each).
    let pass = |host: &mut dyn Host, input, approx, len: usize, threads: usize| {
        host.launch(
            m,
            "dwt_haar",
            Dim3::x((len / (2 * threads)) as u32),
            Dim3::x(threads as u32),
            0,
            &[
                KernelArg::Ptr(input),
                KernelArg::Ptr(dout),
                KernelArg::Ptr(approx),
                KernelArg::S32(len as i32),
            ],
        )
    };
    if ctas == 1 {
        pass(host, din, dout, n, BLOCK)?;
    } else {
        pass(host, din, dapprox, n, BLOCK)?;
        pass(host, dapprox, dout, ctas, ctas / 2)?;
    }
    let got = host.read_f32(dout, n)?;
    Ok(check_f32("coefficient", &reference(&signal), &got, TOL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn haar_by_hand() {
        // [a, b, c, d] -> approx ((a+b)+(c+d))/2, details ((a+b)-(c+d))/2, (a-b)/r2, (c-d)/r2.
        let out = reference(&[4.0, 2.0, 1.0, 1.0]);
        let r = INV_SQRT2;
        let (s1, s2) = (6.0 * r, 2.0 * r);
        assert_eq!(out[0], (s1 + s2) * r);
        assert_eq!(out[1], (s1 - s2) * r);
        assert_eq!(out[2], 2.0 * r);
        assert_eq!(out[3], 0.0);
    }

    #[test]
    fn transform_preserves_energy() {
        let x = inputs(1024, 3);
        let e_in: f64 = x.iter().map(|&v| (v as f64).powi(2)).sum();
        let e_out: f64 = reference(&x).iter().map(|&v| (v as f64).powi(2)).sum();
        assert!((e_in - e_out).abs() < 1e-4 * e_in, "{e_in} vs {e_out}");
    }

    /// Emulates the two passes (per CTA, per level, per active thread) and checks they fill
    /// the same layout as the level-by-level reference.
    #[test]
    fn two_pass_schedule_matches_reference() {
        for size in Size::ALL {
            let n = len(size);
            let x = inputs(n, 5);
            let mut out = vec![f32::NAN; n];
            let pass = |input: &[f32], out: &mut Vec<f32>, len: usize, threads| -> Vec<f32> {
                let chunk = 2 * threads;
                let mut approx = vec![0.0; len / chunk];
                for (b, a) in approx.iter_mut().enumerate() {
                    let mut s = input[b * chunk..(b + 1) * chunk].to_vec();
                    let (mut active, mut level) = (threads, 1);
                    while active > 0 {
                        let pairs: Vec<(f32, f32)> =
                            (0..active).map(|t| (s[2 * t], s[2 * t + 1])).collect();
                        for (t, (p, q)) in pairs.into_iter().enumerate() {
                            s[t] = (p + q) * INV_SQRT2;
                            out[(len >> level) + b * (chunk >> level) + t] = (p - q) * INV_SQRT2;
                        }
                        active >>= 1;
                        level += 1;
                    }
                    *a = s[0];
                }
                approx
            };
            let approx = pass(&x, &mut out, n, BLOCK);
            let last = if approx.len() == 1 {
                approx
            } else {
                pass(&approx, &mut out, approx.len(), approx.len() / 2)
            };
            out[0] = last[0];
            assert_eq!(out, reference(&x), "{size}");
        }
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(64, 1), inputs(64, 1));
        assert_ne!(inputs(64, 1), inputs(64, 2));
    }
}
