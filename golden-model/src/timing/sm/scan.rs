//! Issue scan: the warp schedulers of an SM choosing, each cycle, the path each one issues
//! from. Owns the schedulers (their policies, `timing::scheduler`), each scheduler's sleep
//! (the cycle until which its last failed scan stays valid, and the stall it found), and the
//! scan's cache of every path's blocker. It reads the other sub-blocks' state through
//! [`ScanInputs`] and answers with a [`Pick`]; the SM issues.
//!
//! Every cycle each scheduler walks its warps in priority order. Most paths are blocked, and
//! the blocker found last time is cached with the cycle before which it holds: `u64::MAX`
//! for most, which hold until an event on their own warp (a writeback, a memory completion,
//! a fetch, a barrier release) clears them, or, for a full LSU queue, until the queue drains
//! (an event on every path parked by it). With 15 SMs simulated in turn, each SM's state is
//! cold in the host caches whenever its turn comes; reading one 64-byte warp slot per warp
//! per scan cost more than the rest of the scan together, so the cache is kept in dense
//! per-path arrays (path `p = 2 * warp + side`). Caching changes no result: a cached blocker
//! is exactly what the blocker check would find again before it expires or an event on the
//! warp clears it. Nor does sleeping: a scheduler whose scan failed skips its scans until
//! a timed condition changes ([`IssueScan::sleep`]) or an event wakes it.
//! `sim.scan_shortcuts = false` turns both off.

use super::backend::Pipelines;
use super::barriers::Barriers;
use super::frontend::FrontEnd;
use super::lsu::Lsu;
use super::regdeps::RegDeps;
use super::warps::{owner_scheduler, set_bits, WarpSlot};
use super::KernelCtx;
use crate::config::{GpuConfig, PathPolicy};
use crate::ptx::ir::InstClass;
use crate::stats::StallBreakdown;
use crate::timing::scheduler::Scheduler;

/// What a scheduler's scan decided this cycle.
pub(super) enum Pick {
    /// Issue path `side` of warp `warp`.
    Issue { warp: usize, side: usize },
    /// Nothing can issue: the SM tells the scheduler when to look again
    /// ([`IssueScan::sleep`]).
    Stalled,
    /// No scan: the scheduler has no warp, or sleeps (its stall was counted again).
    Skipped,
}

/// The state of the other sub-blocks that decides whether a path can issue.
pub(super) struct ScanInputs<'a> {
    pub warps: &'a [WarpSlot],
    pub barriers: &'a Barriers,
    pub front: &'a FrontEnd,
    pub deps: &'a RegDeps,
    pub pipes: &'a Pipelines,
    pub lsu: &'a Lsu,
}

impl ScanInputs<'_> {
    /// Why warp `w` cannot issue now, and until which cycle that holds unless an event on
    /// the warp intervenes (`now + 1` for blockers that are not cached); `None` if it can.
    /// Always inlined: as a call (which LLVM chose once the SM was split into sub-blocks) it
    /// cost ~34 host instructions per path looked at, 4% of stencil's.
    #[inline(always)]
    fn blocker(&self, w: usize, side: usize, now: u64, k: &KernelCtx) -> Option<(Stall, u64)> {
        let warp = &self.warps[w];
        if self.barriers.is_waiting(w) {
            return Some((Stall::Barrier, u64::MAX));
        }
        let ibuf = &warp.ibuf[side];
        if !warp.view.path_valid(side) || ibuf.count == 0 {
            return Some((Stall::Fetch, u64::MAX));
        }
        let ready_at = self.front.ready_at(2 * w + side);
        if ready_at > now {
            return Some((Stall::Fetch, ready_at));
        }
        let pc = warp.view.pc[side] as usize;
        let d = &k.decoded[pc];
        // The scoreboard's hazard output for this path. Cached until an event on the warp:
        // only a release can clear a hazard, and every release wakes the warp.
        if self.deps.hazard(w, side, &d.uses) {
            let why = if self.deps.memory_hazard(w, side, d) {
                Stall::MemData
            } else {
                Stall::AluData
            };
            return Some((why, u64::MAX));
        }
        let unit_free = match d.class {
            InstClass::Mem => {
                // A full queue holds until it drains (the SM unparks the paths it blocked);
                // a busy LSU with room in its queue holds until it is free, which only ever
                // moves later.
                if self.lsu.queue_full() {
                    return Some((Stall::Lsu, u64::MAX));
                }
                if self.lsu.free_at() > now {
                    return Some((Stall::Lsu, self.lsu.free_at()));
                }
                true
            }
            class => self.pipes.unit_free(class, now),
        };
        if !unit_free {
            return Some((Stall::Pipe, now + 1));
        }
        None
    }
}

pub(super) struct IssueScan {
    /// The blockers cached per path.
    cache: ScanState,
    schedulers: Vec<Scheduler>,
    /// Per scheduler: the cycle until which its last failed scan stays valid (nothing that
    /// could let a warp issue changes before then unless an event wakes it), and the stall
    /// reason that scan found.
    sleep_until: Vec<u64>,
    sleep_reason: Vec<Stall>,
    /// Warps have two schedulable paths (`simt_stack_dpe`) rather than one.
    dual_paths: bool,
    policy: PathPolicy,
    shortcuts: bool,
    /// The paths every warp's scan considers when that does not depend on the warp
    /// ([`IssueScan::fixed_candidate_sides`], kept per kernel).
    fixed_sides: Option<&'static [usize]>,
}

impl IssueScan {
    pub fn new(cfg: &GpuConfig) -> IssueScan {
        let n = cfg.sm.schedulers as usize;
        let mut scan = IssueScan {
            cache: ScanState::new(),
            schedulers: (0..n)
                .map(|_| Scheduler::new(cfg.sm.scheduler, cfg.sm.two_level_active))
                .collect(),
            sleep_until: vec![0; n],
            sleep_reason: vec![Stall::Fetch; n],
            dual_paths: cfg.sm.reconvergence == crate::config::Reconvergence::Dpe,
            policy: cfg.sm.dpe_path_policy,
            shortcuts: cfg.sim.scan_shortcuts,
            fixed_sides: None,
        };
        scan.fixed_sides = scan.fixed_candidate_sides();
        scan
    }

    /// A new kernel: no warps, nothing cached.
    pub fn begin_kernel(&mut self, cfg: &GpuConfig) {
        self.dual_paths = cfg.sm.reconvergence == crate::config::Reconvergence::Dpe;
        self.policy = cfg.sm.dpe_path_policy;
        self.shortcuts = cfg.sim.scan_shortcuts;
        self.fixed_sides = self.fixed_candidate_sides();
        self.cache.reset();
        for s in &mut self.schedulers {
            s.clear();
        }
        self.wake();
    }

    /// The number of schedulers.
    #[inline(always)]
    pub fn count(&self) -> usize {
        self.schedulers.len()
    }

    /// The scheduler that owns warp slot `w`.
    #[inline(always)]
    fn owner(&self, w: usize) -> usize {
        owner_scheduler(w, self.schedulers.len())
    }

    /// A new warp in slot `w`.
    pub fn add_warp(&mut self, w: usize) {
        let s = self.owner(w);
        self.schedulers[s].add(w);
        self.cache.clear_warp(w);
    }

    /// Warp `w` exited.
    pub fn remove_warp(&mut self, w: usize) {
        let s = self.owner(w);
        self.schedulers[s].remove(w);
    }

    /// Warp `w` waits at a barrier.
    pub fn barrier_wait(&mut self, w: usize) {
        let s = self.owner(w);
        self.schedulers[s].set_waiting(w, true);
    }

    /// Warp `w`'s barrier completed.
    pub fn barrier_released(&mut self, w: usize) {
        let s = self.owner(w);
        self.schedulers[s].set_waiting(w, false);
        self.cache.clear_warp(w);
    }

    /// Something shared (a unit, the LSU queue) changed: every scheduler scans again.
    #[inline]
    pub fn wake(&mut self) {
        for s in self.sleep_until.iter_mut() {
            *s = 0;
        }
    }

    /// Warp `w`'s own state changed: its cached blockers are stale, its scheduler rescans.
    #[inline]
    pub fn wake_warp(&mut self, w: usize) {
        self.cache.clear_warp(w);
        let s = self.owner(w);
        self.sleep_until[s] = 0;
    }

    /// The LSU queue has room again: the paths it blocked are looked at again, by every
    /// scheduler.
    #[inline]
    pub fn lsu_drained(&mut self) {
        self.cache.unpark(Stall::Lsu);
        self.wake();
    }

    /// Scheduler `s`'s scan found nothing: it need not scan again before `until` (the
    /// earliest timed change the SM knows of) unless an event wakes it.
    #[inline]
    pub fn sleep(&mut self, s: usize, until: u64) {
        if self.shortcuts {
            self.sleep_until[s] = until;
        }
    }

    /// Whether a stalled scan is followed by [`IssueScan::sleep`] (shortcuts on).
    #[inline(always)]
    pub fn sleeps(&self) -> bool {
        self.shortcuts
    }

    /// Scheduler `s` issued warp `w`'s instruction (`long_latency`: a long-latency
    /// operation or a barrier): its policy moves on, and everyone looks again.
    #[inline]
    pub fn issued(&mut self, s: usize, w: usize, long_latency: bool) {
        self.schedulers[s].issued(w, long_latency);
        self.wake();
        self.wake_warp(w);
    }

    /// Scheduler `s`'s scan at `now`: the path it issues from, or the stall it counts in
    /// `stalls` (the blocker closest to issuing among every path considered).
    pub fn select(
        &mut self,
        s: usize,
        now: u64,
        k: &KernelCtx,
        inp: &ScanInputs,
        stalls: &mut StallBreakdown,
    ) -> Pick {
        if self.schedulers[s].is_empty() {
            stalls.idle += 1;
            return Pick::Skipped;
        }
        let shortcuts = self.shortcuts;
        if shortcuts && now < self.sleep_until[s] {
            count_stall(stalls, self.sleep_reason[s]);
            return Pick::Skipped;
        }
        let mut chosen = None;
        let fixed = self.fixed_sides;
        let sched = &mut self.schedulers[s];
        sched.refresh_order();
        let greedy = sched.greedy();
        // Warps whose every considered path waits for an event are passed over: the scan
        // visits the others, the greedy warp first, then in `order`'s sequence.
        let passable = if shortcuts {
            self.cache.passable(fixed)
        } else {
            0
        };
        let greedy_bit = greedy.map_or(0, |g| 1u64 << g);
        let first = greedy.filter(|_| passable & greedy_bit == 0);
        let members = sched.members() | greedy_bit;
        let rest = sched.positions(members & !passable & !greedy_bit);
        // (a slice: its pointer and length stay in registers through the scan)
        let order = sched.order.as_slice();
        let rest = set_bits(rest).map(|i| order[i]);
        // The stall counted if nothing issues: the blocker closest to issuing among every
        // path considered, visited or passed over.
        let mut worst = Stall::Fetch;
        let warps = first.into_iter().chain(rest);
        let cache = &mut self.cache;
        if self.dual_paths {
            'warps: for w in warps {
                let (sides, n) = candidate_sides(self.policy, &inp.warps[w]);
                for &side in &sides[..n] {
                    if cache.issuable(w, side, now, k, inp, shortcuts, &mut worst) {
                        chosen = Some((w, side));
                        break 'warps;
                    }
                }
            }
        } else {
            // SPE: one path per warp (side 0), in a loop of its own that makes no per-warp
            // choice of sides.
            for w in warps {
                if cache.issuable(w, 0, now, k, inp, shortcuts, &mut worst) {
                    chosen = Some((w, 0));
                    break;
                }
            }
        }
        let Some((warp, side)) = chosen else {
            if let Some(sides) = fixed {
                let passed = members & passable;
                worst = worst.max(self.cache.worst_parked(passed, sides));
            }
            count_stall(stalls, worst);
            self.sleep_reason[s] = worst;
            return Pick::Stalled;
        };
        Pick::Issue { warp, side }
    }

    /// The paths every warp's scan considers, when that does not depend on the warp: side 0
    /// under SPE, both sides under DPE with ALT; `None` under the constrained policy.
    #[inline]
    fn fixed_candidate_sides(&self) -> Option<&'static [usize]> {
        match (self.dual_paths, self.policy) {
            (false, _) => Some(&[0]),
            (true, PathPolicy::Alt) => Some(&[0, 1]),
            (true, PathPolicy::Constrained) => None,
        }
    }

    /// DPE path selection after warp `warp` issued from `side`: ALT remembers the side that
    /// issued; the constrained variant rotates away from a side that starts a long-latency
    /// operation (A10).
    #[inline]
    pub fn path_issued(&self, warp: &mut WarpSlot, side: usize, rotate: bool) {
        match self.policy {
            PathPolicy::Alt => warp.side = side as u8,
            PathPolicy::Constrained => {
                if rotate {
                    warp.side = 1 - side as u8;
                } else {
                    warp.side = side as u8;
                }
            }
        }
    }
}

/// The paths of a DPE `warp` a scheduler considers this cycle, in order (spec §4.10, A9,
/// A10): ALT tries the side that did not issue last first; the constrained variant
/// considers only its selected side (or the other one once the selected side has no
/// path). (SPE has one, side 0.)
#[inline]
fn candidate_sides(policy: PathPolicy, warp: &WarpSlot) -> ([usize; 2], usize) {
    let side = warp.side as usize;
    match policy {
        PathPolicy::Alt => ([1 - side, side], 2),
        PathPolicy::Constrained => {
            if warp.view.path_valid(side) {
                ([side, 0], 1)
            } else {
                ([1 - side, 0], 1)
            }
        }
    }
}

fn count_stall(st: &mut StallBreakdown, why: Stall) {
    match why {
        Stall::Fetch => st.fetch += 1,
        Stall::Barrier => st.barrier += 1,
        Stall::MemData => st.memory_data += 1,
        Stall::AluData => st.alu_data += 1,
        Stall::Pipe => st.pipe_busy += 1,
        Stall::Lsu => st.lsu_busy += 1,
    }
}

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
}

// Fixed-size arrays indexed by `p % PATHS` (a mask, no bounds check in the scan loop).
impl ScanState {
    pub fn new() -> ScanState {
        ScanState {
            parked_by: [[0; 2]; Stall::ALL.len()],
            parked: [0; 2],
            not_before: [0; PATHS],
            reason: [Stall::Fetch; PATHS],
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

    /// Whether path `side` of warp `w` can issue at `now`. If not, its blocker (cached, or
    /// found and cached now) raises `worst`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn issuable(
        &mut self,
        w: usize,
        side: usize,
        now: u64,
        k: &KernelCtx,
        inp: &ScanInputs,
        shortcuts: bool,
        worst: &mut Stall,
    ) -> bool {
        let p = 2 * w + side;
        if let Some(why) = self.cached(p, now).filter(|_| shortcuts) {
            *worst = (*worst).max(why);
            return false;
        }
        match inp.blocker(w, side, now, k) {
            None => true,
            Some((st, until)) => {
                *worst = (*worst).max(st);
                self.hold(p, st, until);
                false
            }
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
}
