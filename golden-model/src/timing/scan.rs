//! What the warp schedulers' scan reads for every path of an SM, kept in dense per-path
//! arrays (path `p = 2 * warp + side`) rather than in the warp slots.
//!
//! Every cycle each scheduler walks its warps in priority order. Most paths are blocked, and
//! the blocker found last time is cached with the cycle before which it holds: `u64::MAX`
//! for most, which hold until an event on their own warp (a writeback, a memory completion,
//! a fetch, a barrier release) clears them, or, for a full LSU queue, until the queue drains
//! (an event on every path parked by it). With 15 SMs simulated in turn, each SM's state is
//! cold in the host caches whenever its turn comes; reading one 64-byte warp slot per warp
//! per scan cost more than the rest of the scan together, so the scan reads two dense
//! arrays instead. Caching changes no result: a cached blocker is exactly what the blocker
//! check would find again before it expires or an event on the warp clears it.

/// Stall reasons ordered by how close the warp was to issuing (the highest is reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stall {
    Fetch,
    Barrier,
    MemData,
    AluData,
    Pipe,
    Lsu,
}

impl Stall {
    /// Every reason, highest last.
    const ALL: [Stall; 6] = [
        Stall::Fetch,
        Stall::Barrier,
        Stall::MemData,
        Stall::AluData,
        Stall::Pipe,
        Stall::Lsu,
    ];
}

/// Paths of an SM: two per warp slot, at most 64 warp slots (`sm.max_warps`).
const PATHS: usize = 128;

pub(super) struct ScanState {
    /// Per reason, per side: the warps (bit per slot) whose path on that side holds that
    /// cached blocker until an event (`not_before == u64::MAX`), so a scan can pass the
    /// warp by a bit test and still count its stall.
    parked_by: [[u64; 2]; Stall::ALL.len()],
    /// Per side: the union of `parked_by`. Derivable, kept because every scan tests it and
    /// every event on a warp clears it (measured: ~1% of host instructions without it).
    parked: [u64; 2],
    /// Per path: the cycle before which its cached blocker holds (`u64::MAX`: until an
    /// event on its warp).
    not_before: [u64; PATHS],
    /// Per path: the cached blocker (stale once `not_before` has passed).
    reason: [Stall; PATHS],
    /// Per path: the cycle at which its instruction buffer's last fetch completes (the
    /// buffer itself is in the warp slot).
    fetch_ready_at: [u64; PATHS],
}

// Fixed-size arrays indexed by `p % PATHS` (a mask, no bounds check in the scan loop).
impl ScanState {
    pub fn new() -> ScanState {
        ScanState {
            parked_by: [[0; 2]; Stall::ALL.len()],
            parked: [0; 2],
            not_before: [0; PATHS],
            reason: [Stall::Fetch; PATHS],
            fetch_ready_at: [0; PATHS],
        }
    }

    /// Nothing cached (a new kernel).
    pub fn reset(&mut self) {
        *self = ScanState::new();
    }

    /// The cached blocker of path `p` if it still holds at `now`.
    #[inline(always)]
    pub fn cached(&self, p: usize, now: u64) -> Option<Stall> {
        let p = p % PATHS;
        if now < self.not_before[p] {
            Some(self.reason[p])
        } else {
            None
        }
    }

    /// The blocker found for path `p`, holding before cycle `until` (`u64::MAX`: until an
    /// event on the warp).
    #[inline(always)]
    pub fn hold(&mut self, p: usize, why: Stall, until: u64) {
        let p = p % PATHS;
        self.reason[p] = why;
        self.not_before[p] = until;
        if until == u64::MAX {
            self.parked[p % 2] |= 1 << (p / 2);
            self.parked_by[why as usize][p % 2] |= 1 << (p / 2);
        }
    }

    /// An event on warp `w`: both its paths are looked at again.
    #[inline(always)]
    pub fn clear_warp(&mut self, w: usize) {
        let p = (2 * w) % PATHS;
        let bit = 1u64 << (p / 2);
        for side in 0..2 {
            if self.parked[side] & bit != 0 {
                self.parked[side] &= !bit;
                self.parked_by[self.reason[p + side] as usize][side] &= !bit;
            }
        }
        self.not_before[p] = 0;
        self.not_before[p + 1] = 0;
    }

    /// An event that concerns every path parked by `why` (the LSU queue had room again):
    /// they are all looked at again.
    #[inline]
    pub fn unpark(&mut self, why: Stall) {
        for side in 0..2 {
            let warps = std::mem::take(&mut self.parked_by[why as usize][side]);
            self.parked[side] &= !warps;
            let mut m = warps;
            while m != 0 {
                let w = m.trailing_zeros() as usize;
                m &= m - 1;
                self.not_before[(2 * w + side) % PATHS] = 0;
            }
        }
    }

    /// The warps a scan can pass without looking: every path it would consider is parked.
    /// `sides` says which paths it considers: side 0 only, both, or (`None`) one chosen per
    /// warp, which this mask cannot tell (no warp is passed).
    #[inline(always)]
    pub fn passable(&self, sides: Option<&[usize]>) -> u64 {
        match sides {
            Some(sides) => sides.iter().fold(u64::MAX, |m, &s| m & self.parked[s]),
            None => 0,
        }
    }

    /// The highest cached blocker of the paths on `sides` of `warps`, all of them parked
    /// (the lowest, `Fetch`, when there are none).
    #[inline]
    pub fn worst_parked(&self, warps: u64, sides: &[usize]) -> Stall {
        Stall::ALL
            .iter()
            .rev()
            .copied()
            .find(|&why| {
                sides
                    .iter()
                    .any(|&s| self.parked_by[why as usize][s] & warps != 0)
            })
            .unwrap_or(Stall::Fetch)
    }

    #[inline(always)]
    pub fn fetch_ready_at(&self, p: usize) -> u64 {
        self.fetch_ready_at[p % PATHS]
    }

    #[inline(always)]
    pub fn set_fetch_ready_at(&mut self, p: usize, at: u64) {
        self.fetch_ready_at[p % PATHS] = at;
    }
}
