//! Shared memory: bank conflicts and the timing of the accesses the SM serves itself
//! (shared, and const/param or fully predicated-off ones at the L1 hit latency). Owns
//! nothing but its configuration: an access occupies the LSU (`Lsu::occupy`) for its
//! serialized passes and writes its registers back after the shared-memory latency plus
//! the extra passes.

use crate::config::GpuConfig;
use crate::exec::{MemAccess, WARP_SIZE};
use crate::ptx::ir::StateSpace;
use crate::stats::MemFigures;

/// The SM's shared memory (and the in-SM path of const/param accesses).
pub(super) struct SharedMem {
    banks: u32,
    latency: u32,
    /// Latency of the other accesses served in the SM.
    other_latency: u32,
}

impl SharedMem {
    pub fn new(cfg: &GpuConfig) -> SharedMem {
        SharedMem {
            banks: cfg.sm.shared_banks,
            latency: cfg.sm.shared_latency,
            other_latency: cfg.l1.hit_latency,
        }
    }

    /// Serve `acc` (not global/local, or without an active lane): its result latency and
    /// the cycles it occupies the LSU. Counts shared accesses and their conflict cycles.
    #[inline]
    pub fn serve(&self, acc: &MemAccess, stats: &mut MemFigures) -> (u32, u32) {
        if acc.space == StateSpace::Shared && acc.mask != 0 {
            let ways = shared_conflict_ways(acc, self.banks);
            stats.shared_accesses += 1;
            stats.shared_conflict_cycles += ways as u64 - 1;
            (self.latency + ways - 1, ways)
        } else {
            (self.other_latency, 1)
        }
    }
}

/// The number of serialized shared-memory passes of one warp access: the largest number of
/// distinct 4-byte words any bank must deliver (lanes reading the same word share it).
pub fn shared_conflict_ways(acc: &MemAccess, banks: u32) -> u32 {
    // Fast path for the common conflict-free access: track the one word each bank delivers;
    // only a bank asked for a second distinct word needs the exact count below. (Banks are
    // a power of two on every modelled GPU: a mask, not a division per word.)
    if !banks.is_power_of_two() || banks > 64 {
        return exact_conflict_ways(acc, banks);
    }
    // Cheapest case first (consecutive words, broadcasts, a few rows of a tile): every word
    // touched lies in a window of at most `banks` consecutive words, so no bank holds two.
    // The window runs to the last byte of the widest lane, a superset of the words charged.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    if acc.mask == u32::MAX {
        // Full warps, the usual case, without a test per lane.
        for &addr in &acc.addrs {
            lo = lo.min(addr);
            hi = hi.max(addr);
        }
    } else {
        for (lane, &addr) in acc.addrs.iter().enumerate() {
            if acc.mask >> lane & 1 != 0 {
                lo = lo.min(addr);
                hi = hi.max(addr);
            }
        }
    }
    let size = acc.bytes.max(1) as u64;
    if (hi.saturating_add(size - 1) / 4).saturating_sub(lo / 4) < banks as u64 {
        return 1;
    }
    let bank_mask = banks as u64 - 1;
    let mut bank_word = [0u64; 64];
    let mut used = 0u64;
    let mut conflict = false;
    let mut note = |word: u64| {
        let b = (word & bank_mask) as usize;
        if used >> b & 1 == 0 {
            used |= 1 << b;
            bank_word[b] = word;
        } else if bank_word[b] != word {
            conflict = true;
        }
    };
    let mut m = acc.mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let first = acc.addrs[lane] / 4;
        note(first);
        if (acc.addrs[lane] + size - 1) / 4 > first {
            note(first + 1);
        }
    }
    if !conflict {
        return 1;
    }
    exact_conflict_ways(acc, banks)
}

/// [`shared_conflict_ways`] by collecting the distinct words of each bank (a chain per
/// bank through the words seen so far) and counting them.
fn exact_conflict_ways(acc: &MemAccess, banks: u32) -> u32 {
    // Each lane touches at most two words (8-byte accesses; wider vectors are rare and are
    // charged by their first two words).
    const NONE: u8 = u8::MAX;
    let mut words = [0u64; WARP_SIZE * 2];
    let mut next = [NONE; WARP_SIZE * 2];
    let mut head = [NONE; 64];
    let mut per_bank = [0u8; 64];
    let mut n = 0;
    let mut ways = 1u32;
    let mut note = |word: u64| {
        let b = (word % banks as u64) as usize % 64;
        let mut i = head[b];
        while i != NONE {
            if words[i as usize] == word {
                return;
            }
            i = next[i as usize];
        }
        words[n] = word;
        next[n] = head[b];
        head[b] = n as u8;
        n += 1;
        per_bank[b] += 1;
        ways = ways.max(per_bank[b] as u32);
    };
    let mut m = acc.mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let first = acc.addrs[lane] / 4;
        let last = (acc.addrs[lane] + acc.bytes.max(1) as u64 - 1) / 4;
        note(first);
        if last > first {
            note(first + 1);
        }
    }
    ways
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::MemKind;

    fn access(addrs: impl Fn(usize) -> u64, bytes: u32) -> MemAccess {
        let mut a = MemAccess {
            space: StateSpace::Shared,
            kind: MemKind::Load,
            bytes,
            mask: u32::MAX,
            ..Default::default()
        };
        for l in 0..WARP_SIZE {
            a.addrs[l] = addrs(l);
        }
        a
    }

    #[test]
    fn shared_bank_conflicts() {
        assert_eq!(shared_conflict_ways(&access(|l| l as u64 * 4, 4), 32), 1);
        assert_eq!(shared_conflict_ways(&access(|_| 64, 4), 32), 1, "broadcast");
        assert_eq!(shared_conflict_ways(&access(|l| l as u64 * 8, 4), 32), 2);
        assert_eq!(shared_conflict_ways(&access(|l| l as u64 * 128, 4), 32), 32);
        assert_eq!(
            shared_conflict_ways(&access(|l| l as u64 * 8, 8), 32),
            2,
            "64-bit words"
        );
    }

    /// The conflict count by definition: the most distinct words any bank delivers.
    fn reference_ways(acc: &MemAccess, banks: u32) -> u32 {
        let mut per_bank =
            std::collections::BTreeMap::<u64, std::collections::BTreeSet<u64>>::new();
        for lane in (0..WARP_SIZE).filter(|&l| acc.mask >> l & 1 != 0) {
            let first = acc.addrs[lane] / 4;
            let last = (acc.addrs[lane] + acc.bytes.max(1) as u64 - 1) / 4;
            for word in first..=last.min(first + 1) {
                per_bank
                    .entry(word % banks as u64)
                    .or_default()
                    .insert(word);
            }
        }
        per_bank.values().map(|w| w.len() as u32).max().unwrap_or(1)
    }

    proptest::proptest! {
        /// The fast paths and the exact count agree with the definition, on accesses spread
        /// over a window narrow enough for the window fast path or wide enough for conflicts.
        #[test]
        fn conflict_count_matches_definition(
            base in 0u64..512,
            window in proptest::sample::select(vec![64u64, 128, 160, 512]),
            offsets in proptest::collection::vec(0u64..512, WARP_SIZE),
            mask: u32,
            bytes in proptest::sample::select(vec![1u32, 4, 8, 16]),
            banks in proptest::sample::select(vec![16u32, 32, 24]),
        ) {
            let mut a = access(|l| base + offsets[l] % window, bytes);
            a.mask = mask;
            let expected = reference_ways(&a, banks);
            proptest::prop_assert_eq!(shared_conflict_ways(&a, banks), expected);
            proptest::prop_assert_eq!(exact_conflict_ways(&a, banks), expected);
        }
    }
}
