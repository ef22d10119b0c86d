//! Warp scheduler policies. A scheduler owns the warps whose slot index is congruent to its
//! own index (even/odd warps with two schedulers, spec reconvergence-dpe.md A15) and each
//! cycle offers its warps in priority order; the SM issues the first that is ready.

use crate::config::SchedulerPolicy;
use std::collections::VecDeque;

/// `repr(C)`, hot fields first: every scan reads `dirty`, `members`, `policy`,
/// `last_issued` and `order`, which then share one cache line (the SMs are simulated in
/// turn, so each one's scheduler is cold in the host's cache when its turn comes).
#[repr(C, align(64))]
pub struct Scheduler {
    dirty: bool,
    policy: SchedulerPolicy,
    /// The warps in `order` (a bit per slot) and each one's index there, rebuilt with it.
    members: u64,
    last_issued: Option<usize>,
    /// The candidate order after the greedy warp (see [`Scheduler::greedy`]), highest
    /// priority first; rebuilt only when `dirty`.
    pub order: Vec<usize>,
    position: [u8; 64],
    /// Warps in launch (age) order, oldest first.
    by_age: Vec<usize>,
    /// Loose round robin: index into `by_age` after the last issued warp.
    rr: usize,
    /// Two-level: the active set (scheduled round robin) and the pending FIFO.
    active: Vec<usize>,
    pending: VecDeque<usize>,
    active_size: usize,
    /// Warps waiting at a barrier (bit per warp slot). Under the two-level policy they leave
    /// the active set and are not promoted until released: an active set full of waiting
    /// warps would otherwise starve the pending warps the barrier waits for.
    waiting: u64,
}

impl Scheduler {
    pub fn new(policy: SchedulerPolicy, two_level_active: u32) -> Scheduler {
        Scheduler {
            policy,
            by_age: Vec::new(),
            last_issued: None,
            rr: 0,
            active: Vec::new(),
            pending: VecDeque::new(),
            active_size: two_level_active.max(1) as usize,
            waiting: 0,
            order: Vec::new(),
            members: 0,
            position: [0; 64],
            dirty: true,
        }
    }

    pub fn clear(&mut self) {
        self.by_age.clear();
        self.active.clear();
        self.pending.clear();
        self.last_issued = None;
        self.rr = 0;
        self.waiting = 0;
        self.dirty = true;
    }

    pub fn is_empty(&self) -> bool {
        self.by_age.is_empty()
    }

    /// A new warp: the youngest, so appending keeps `by_age` in launch order.
    pub fn add(&mut self, warp: usize) {
        self.by_age.push(warp);
        self.pending.push_back(warp);
        self.refill();
        self.dirty = true;
    }

    pub fn remove(&mut self, warp: usize) {
        self.by_age.retain(|&w| w != warp);
        self.active.retain(|&w| w != warp);
        self.pending.retain(|&w| w != warp);
        if self.last_issued == Some(warp) {
            self.last_issued = None;
        }
        self.refill();
        self.dirty = true;
    }

    /// Promote the oldest pending warps that are not waiting at a barrier.
    fn refill(&mut self) {
        while self.active.len() < self.active_size {
            let next = self
                .pending
                .iter()
                .position(|&w| self.waiting >> w & 1 == 0);
            match next.and_then(|i| self.pending.remove(i)) {
                Some(w) => self.active.push(w),
                None => break,
            }
        }
    }

    /// Warp `warp` starts or stops waiting at a barrier.
    pub fn set_waiting(&mut self, warp: usize, waiting: bool) {
        let bit = 1u64 << warp;
        if waiting {
            self.waiting |= bit;
        } else {
            self.waiting &= !bit;
        }
        if self.policy == SchedulerPolicy::TwoLevel {
            if waiting {
                if let Some(i) = self.active.iter().position(|&w| w == warp) {
                    self.active.remove(i);
                    self.pending.push_back(warp);
                }
            }
            self.refill();
            self.dirty = true;
        }
    }

    /// The warp offered before `order` (GTO's greedy warp), which `order` may repeat.
    pub fn greedy(&self) -> Option<usize> {
        match self.policy {
            SchedulerPolicy::Gto => self.last_issued,
            _ => None,
        }
    }

    /// Bring `order` up to date. GTO keeps plain age order there (the greedy warp is offered
    /// first by [`Scheduler::greedy`]), so issuing never forces a rebuild.
    pub fn refresh_order(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let mut out = std::mem::take(&mut self.order);
        out.clear();
        match self.policy {
            SchedulerPolicy::Gto => out.extend_from_slice(&self.by_age),
            _ => self.candidates(&mut out),
        }
        self.members = 0;
        for (i, &w) in out.iter().enumerate() {
            self.members |= 1 << w;
            self.position[w % 64] = i as u8;
        }
        self.order = out;
    }

    /// The warps in `order` (refreshed), a bit per slot.
    pub fn members(&self) -> u64 {
        self.members
    }

    /// The indices in `order` (refreshed) of the warps in `warps`, a bit per index: its set
    /// bits from the lowest up name those warps in `order`'s sequence.
    pub fn positions(&self, mut warps: u64) -> u64 {
        let mut at = 0u64;
        while warps != 0 {
            let w = warps.trailing_zeros() as usize;
            warps &= warps - 1;
            at |= 1 << self.position[w];
        }
        at
    }

    /// Fill `out` with this cycle's candidates, highest priority first.
    pub fn candidates(&self, out: &mut Vec<usize>) {
        out.clear();
        match self.policy {
            SchedulerPolicy::Gto => {
                // Greedy: keep issuing from the last warp; then the oldest.
                if let Some(l) = self.last_issued {
                    out.push(l);
                }
                out.extend(
                    self.by_age
                        .iter()
                        .copied()
                        .filter(|&w| Some(w) != self.last_issued),
                );
            }
            SchedulerPolicy::Lrr => {
                let n = self.by_age.len();
                let start = if n == 0 { 0 } else { self.rr % n };
                out.extend(
                    self.by_age[start..]
                        .iter()
                        .chain(&self.by_age[..start])
                        .copied(),
                );
            }
            SchedulerPolicy::TwoLevel => {
                let n = self.active.len();
                let start = if n == 0 { 0 } else { self.rr % n };
                out.extend(
                    self.active[start..]
                        .iter()
                        .chain(&self.active[..start])
                        .copied(),
                );
            }
        }
    }

    /// Warp `warp` issued; `long_latency` marks a long-latency operation or a barrier,
    /// which demotes the warp to the pending set under the two-level policy.
    pub fn issued(&mut self, warp: usize, long_latency: bool) {
        // GTO's age order does not change on issue; the others rotate every issue.
        self.dirty |= self.policy != SchedulerPolicy::Gto;
        self.last_issued = Some(warp);
        match self.policy {
            SchedulerPolicy::Lrr => {
                if let Some(i) = self.by_age.iter().position(|&w| w == warp) {
                    self.rr = i + 1;
                }
            }
            SchedulerPolicy::TwoLevel => {
                if let Some(i) = self.active.iter().position(|&w| w == warp) {
                    if long_latency && !self.pending.is_empty() {
                        self.active.remove(i);
                        self.pending.push_back(warp);
                        self.refill();
                        self.rr = i;
                    } else {
                        self.rr = i + 1;
                    }
                }
            }
            SchedulerPolicy::Gto => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(s: &Scheduler) -> Vec<usize> {
        let mut v = vec![];
        s.candidates(&mut v);
        v
    }

    #[test]
    fn gto_is_greedy_then_oldest() {
        let mut s = Scheduler::new(SchedulerPolicy::Gto, 8);
        for w in [4, 2, 6] {
            s.add(w);
        }
        assert_eq!(order(&s), vec![4, 2, 6]);
        s.issued(6, false);
        assert_eq!(order(&s), vec![6, 4, 2]);
        s.remove(6);
        assert_eq!(order(&s), vec![4, 2]);
    }

    #[test]
    fn lrr_rotates_after_the_issuer() {
        let mut s = Scheduler::new(SchedulerPolicy::Lrr, 8);
        for w in [0, 2, 4] {
            s.add(w);
        }
        s.issued(2, false);
        assert_eq!(order(&s), vec![4, 0, 2]);
        s.issued(4, false);
        assert_eq!(order(&s), vec![0, 2, 4]);
    }

    #[test]
    fn two_level_never_fills_its_active_set_with_barrier_waiters() {
        let mut s = Scheduler::new(SchedulerPolicy::TwoLevel, 2);
        for w in [0, 1, 2, 3] {
            s.add(w);
        }
        s.refresh_order();
        assert_eq!(s.order, vec![0, 1]);
        // 0 and 1 wait at a barrier for 2 and 3: those must become schedulable.
        s.set_waiting(0, true);
        s.set_waiting(1, true);
        s.refresh_order();
        assert_eq!(s.order, vec![2, 3]);
        // 2 issues a long-latency op: the only other candidates wait, so it stays.
        s.issued(2, true);
        s.refresh_order();
        assert!(s.order.contains(&3) && !s.order.contains(&0) && !s.order.contains(&1));
        s.set_waiting(0, false);
        s.set_waiting(1, false);
        s.remove(2);
        s.remove(3);
        s.refresh_order();
        assert_eq!(s.order, vec![0, 1]);
    }

    #[test]
    fn two_level_demotes_long_latency_warps() {
        let mut s = Scheduler::new(SchedulerPolicy::TwoLevel, 2);
        for w in [0, 1, 2, 3] {
            s.add(w);
        }
        assert_eq!(order(&s), vec![0, 1]);
        s.issued(0, true);
        assert_eq!(order(&s), vec![1, 2]);
        s.issued(1, false);
        assert_eq!(order(&s), vec![2, 1]);
    }
}
