//! bitonic_sort: bitonic sorting network over n = 2^k keys (CUDA SDK structure): a
//! shared-memory sort of each 512-key chunk, then per merge stage global compare-exchange
//! launches for strides >= 512 and one shared-memory launch for the rest.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    BitonicSort,
    "bitonic_sort",
    Category::Divergent,
    "bitonic sort: data-dependent swaps, direction-dependent branches, shared-memory and host-launched global stages"
);

const BLOCK: u32 = 256;
const CHUNK: usize = 512;

pub(crate) fn len(size: Size) -> usize {
    size.pick(1024, 4096, 32 * 1024)
}

/// Random keys with some duplicates (values below n/2 half the time).
pub(crate) fn inputs(n: usize, seed: u64) -> Vec<u32> {
    let mut g = SplitMix64::for_stream(seed, "bitonic_sort.keys");
    (0..n)
        .map(|_| {
            if g.below(2) == 0 {
                g.below((n / 2) as u32)
            } else {
                g.next_u32()
            }
        })
        .collect()
}

/// One launch of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    SortShared,
    MergeGlobal { k: usize, j: usize },
    MergeShared { k: usize },
}

/// The host's launch schedule for n keys.
pub(crate) fn schedule(n: usize) -> Vec<Step> {
    let mut s = vec![Step::SortShared];
    let mut k = 2 * CHUNK;
    while k <= n {
        let mut j = k / 2;
        while j >= CHUNK {
            s.push(Step::MergeGlobal { k, j });
            j /= 2;
        }
        s.push(Step::MergeShared { k });
        k *= 2;
    }
    s
}

#[cfg(test)]
fn cmp_swap(keys: &mut [u32], a: usize, b: usize, up: bool) {
    if (keys[a] > keys[b]) == up {
        keys.swap(a, b);
    }
}

/// Executes the three kernels' compare-exchange steps on the CPU (each thread's pair in
/// turn; pairs of one step are disjoint so the order within a step does not matter).
#[cfg(test)]
pub(crate) fn emulate(keys: &mut [u32]) {
    let n = keys.len();
    let pair = |t: usize, j: usize| 2 * t - (t & (j - 1));
    for step in schedule(n) {
        match step {
            Step::SortShared => {
                for base in (0..n).step_by(CHUNK) {
                    let mut k = 2;
                    while k <= CHUNK {
                        let mut j = k / 2;
                        while j > 0 {
                            for t in 0..CHUNK / 2 {
                                let i = pair(t, j);
                                cmp_swap(keys, base + i, base + i + j, ((base + i) & k) == 0);
                            }
                            j /= 2;
                        }
                        k *= 2;
                    }
                }
            }
            Step::MergeGlobal { k, j } => {
                for t in 0..n / 2 {
                    let i = pair(t, j);
                    cmp_swap(keys, i, i + j, (i & k) == 0);
                }
            }
            Step::MergeShared { k } => {
                for base in (0..n).step_by(CHUNK) {
                    let mut j = CHUNK / 2;
                    while j > 0 {
                        for t in 0..CHUNK / 2 {
                            let i = pair(t, j);
                            cmp_swap(keys, base + i, base + i + j, (base & k) == 0);
                        }
                        j /= 2;
                    }
                }
            }
        }
    }
}

pub(crate) fn reference(keys: &[u32]) -> Vec<u32> {
    let mut v = keys.to_vec();
    v.sort_unstable();
    v
}

fn run_impl(
    w: &BitonicSort,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let n = len(size);
    let keys = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let dkeys = host.alloc_write_u32(&keys)?;
    let chunks = Dim3::x((n / CHUNK) as u32);
    for step in schedule(n) {
        match step {
            Step::SortShared => host.launch(
                m,
                "bitonic_sort_shared",
                chunks,
                Dim3::x(BLOCK),
                0,
                &[KernelArg::Ptr(dkeys)],
            )?,
            Step::MergeGlobal { k, j } => host.launch(
                m,
                "bitonic_merge_global",
                Dim3::x((n / 2) as u32 / BLOCK),
                Dim3::x(BLOCK),
                0,
                &[
                    KernelArg::Ptr(dkeys),
                    KernelArg::S32(n as i32),
                    KernelArg::S32(k as i32),
                    KernelArg::S32(j as i32),
                ],
            )?,
            Step::MergeShared { k } => host.launch(
                m,
                "bitonic_merge_shared",
                chunks,
                Dim3::x(BLOCK),
                0,
                &[KernelArg::Ptr(dkeys), KernelArg::S32(k as i32)],
            )?,
        }
    }
    let got = host.read_u32(dkeys, n)?;
    Ok(check_exact("key", &reference(&keys), &got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_shape() {
        assert_eq!(schedule(512), vec![Step::SortShared]);
        assert_eq!(
            schedule(2048),
            vec![
                Step::SortShared,
                Step::MergeGlobal { k: 1024, j: 512 },
                Step::MergeShared { k: 1024 },
                Step::MergeGlobal { k: 2048, j: 1024 },
                Step::MergeGlobal { k: 2048, j: 512 },
                Step::MergeShared { k: 2048 },
            ]
        );
    }

    #[test]
    fn network_sorts_every_size() {
        for size in Size::ALL {
            let keys = inputs(len(size), 11);
            let mut sorted = keys.clone();
            emulate(&mut sorted);
            assert_eq!(sorted, reference(&keys), "{size}");
            // A permutation that is sorted.
            assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(1024, 1), inputs(1024, 1));
        assert_ne!(inputs(1024, 1), inputs(1024, 2));
    }
}
