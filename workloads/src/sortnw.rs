//! sortnw: a batch of independent 512-pair (key, value) arrays, each sorted by one CTA in
//! shared memory with Batcher's odd-even merge sorting network (the CUDA SDK
//! sortingNetworks sample, SORTNW in the thread-block-compaction study).
//!
//! How it differs from `bitonic_sort`: a different network (odd-even merge: after each
//! stage's first step only lanes with `offset >= stride` compare, so the idle lanes change
//! from step to step instead of every thread always owning a pair), key-value pairs whose
//! comparator falls back to the values on equal keys (a data-dependent branch taken only on
//! ties; keys are drawn with many duplicates), a sort direction per array read from memory
//! (data, not the thread index, decides `(a > b) == up`), and no global merge stages: one
//! launch sorts the whole batch.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Sortnw,
    "sortnw",
    Category::Divergent,
    "odd-even merge sorting network per 512-pair array: offset >= stride lanes, tie-break on values, per-array direction from memory"
);

const BLOCK: usize = 256;
pub(crate) const N: usize = 2 * BLOCK;

/// Number of arrays (one CTA each).
pub(crate) fn arrays(size: Size) -> usize {
    size.pick(2, 32, 120)
}

pub(crate) struct Inputs {
    pub keys: Vec<u32>,
    /// Distinct: the position of the pair in the batch.
    pub vals: Vec<u32>,
    /// 1: ascending, 0: descending, per array.
    pub dirs: Vec<u32>,
}

pub(crate) fn inputs(arrays: usize, seed: u64) -> Inputs {
    let mut g = SplitMix64::for_stream(seed, "sortnw.keys");
    let n = arrays * N;
    // Half the keys from a range of 64 values (many ties), half anywhere.
    let keys = (0..n)
        .map(|_| {
            if g.below(2) == 0 {
                g.below(64)
            } else {
                g.next_u32()
            }
        })
        .collect();
    let mut g = SplitMix64::for_stream(seed, "sortnw.dirs");
    Inputs {
        keys,
        vals: (0..n as u32).collect(),
        dirs: (0..arrays).map(|_| g.below(2)).collect(),
    }
}

#[cfg(test)]
fn compare_exchange(k: &mut [u32], v: &mut [u32], a: usize, b: usize, up: bool) {
    let greater = if k[a] == k[b] {
        v[a] > v[b]
    } else {
        k[a] > k[b]
    };
    if greater == up {
        k.swap(a, b);
        v.swap(a, b);
    }
}

/// Runs `sortnw_oddeven`'s network on one array, thread by thread per step (the pairs of a
/// step are disjoint, so their order does not matter).
#[cfg(test)]
pub(crate) fn emulate(k: &mut [u32], v: &mut [u32], up: bool) {
    let n = k.len();
    let mut size = 2;
    while size <= n {
        let mut stride = size / 2;
        let offset = |t: usize| t & (size / 2 - 1);
        for t in 0..n / 2 {
            let pos = 2 * t - (t & (stride - 1));
            compare_exchange(k, v, pos, pos + stride, up);
        }
        stride /= 2;
        while stride > 0 {
            for t in 0..n / 2 {
                let pos = 2 * t - (t & (stride - 1));
                if offset(t) >= stride {
                    compare_exchange(k, v, pos - stride, pos, up);
                }
            }
            stride /= 2;
        }
        size *= 2;
    }
}

/// Each array sorted by (key, value), ascending or descending by its direction.
pub(crate) fn reference(inp: &Inputs) -> (Vec<u32>, Vec<u32>) {
    let (mut keys, mut vals) = (Vec::new(), Vec::new());
    for (a, &dir) in inp.dirs.iter().enumerate() {
        let r = a * N..(a + 1) * N;
        let mut pairs: Vec<(u32, u32)> = inp.keys[r.clone()]
            .iter()
            .copied()
            .zip(inp.vals[r].iter().copied())
            .collect();
        pairs.sort_unstable();
        if dir == 0 {
            pairs.reverse();
        }
        keys.extend(pairs.iter().map(|p| p.0));
        vals.extend(pairs.iter().map(|p| p.1));
    }
    (keys, vals)
}

fn run_impl(
    w: &Sortnw,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let count = arrays(size);
    let inp = inputs(count, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let dkeys = host.alloc_write_u32(&inp.keys)?;
    let dvals = host.alloc_write_u32(&inp.vals)?;
    let ddirs = host.alloc_write_u32(&inp.dirs)?;
    host.launch(
        m,
        "sortnw_oddeven",
        Dim3::x(count as u32),
        Dim3::x(BLOCK as u32),
        0,
        &[
            KernelArg::Ptr(dkeys),
            KernelArg::Ptr(dvals),
            KernelArg::Ptr(ddirs),
        ],
    )?;
    let n = count * N;
    let got_keys = host.read_u32(dkeys, n)?;
    let got_vals = host.read_u32(dvals, n)?;
    let (keys, vals) = reference(&inp);
    Ok(Verification::all(vec![
        check_exact("key", &keys, &got_keys),
        check_exact("value", &vals, &got_vals),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_sorts_both_directions() {
        let inp = inputs(6, 9);
        let (keys, vals) = reference(&inp);
        for a in 0..6 {
            let r = a * N..(a + 1) * N;
            let (mut k, mut v) = (inp.keys[r.clone()].to_vec(), inp.vals[r.clone()].to_vec());
            emulate(&mut k, &mut v, inp.dirs[a] != 0);
            assert_eq!(k, keys[r.clone()], "array {a}");
            assert_eq!(v, vals[r], "array {a}");
        }
        assert!(inp.dirs.contains(&0) && inp.dirs.contains(&1));
    }

    #[test]
    fn network_sorts_small_powers_of_two() {
        let mut g = SplitMix64::new(4);
        for n in [2usize, 4, 8, 16, 64] {
            for _ in 0..20 {
                let mut k: Vec<u32> = (0..n).map(|_| g.below(5)).collect();
                let mut v: Vec<u32> = (0..n as u32).collect();
                let mut want: Vec<(u32, u32)> = k.iter().copied().zip(v.clone()).collect();
                want.sort_unstable();
                emulate(&mut k, &mut v, true);
                let got: Vec<(u32, u32)> = k.into_iter().zip(v).collect();
                assert_eq!(got, want, "n = {n}");
            }
        }
    }

    #[test]
    fn keys_have_ties_and_inputs_are_deterministic() {
        let a = inputs(2, 1);
        let mut k = a.keys.clone();
        k.sort_unstable();
        k.dedup();
        assert!(
            k.len() < a.keys.len(),
            "duplicate keys exercise the tie-break"
        );
        assert_eq!(a.keys, inputs(2, 1).keys);
        assert_ne!(a.keys, inputs(2, 2).keys);
    }
}
