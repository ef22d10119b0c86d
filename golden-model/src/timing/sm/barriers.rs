//! Barriers: every resident CTA's barrier table (`bar.sync` arrival counts, shared with the
//! functional model) and which warps wait at which barrier. Owns the tables (one per CTA
//! slot) and the per-warp waiting state; it answers with the warps a release frees, and the
//! SM tells the schedulers.
//!
//! Warp granularity, exited warps no longer counted (see `exec::barrier`): a barrier
//! completes when its expected warps have all arrived; a CTA whose live warps all wait at
//! barriers that can never complete is deadlocked (a guest fault).

use crate::exec::barrier::BarrierTable;

pub(super) struct Barriers {
    /// Per CTA slot.
    tables: Vec<BarrierTable>,
    /// Warps waiting at a barrier (a bit per slot).
    waiting: u64,
    /// Per warp slot: the barrier it waits at and the PC of its `bar.sync` (fault reports).
    at: Vec<(u8, u32)>,
}

/// Why a CTA cannot go on: every live warp waits at a barrier that cannot complete.
pub(super) struct Deadlock {
    /// The first waiting warp and the PC of its `bar.sync`.
    pub warp: usize,
    pub pc: u32,
    pub detail: String,
}

impl Barriers {
    pub fn new(max_ctas: u32, max_warps: u32) -> Barriers {
        Barriers {
            tables: vec![BarrierTable::default(); max_ctas as usize],
            waiting: 0,
            at: vec![(0, 0); max_warps as usize],
        }
    }

    /// A new kernel: no warp waits (the warp slots start afresh).
    pub fn begin_kernel(&mut self) {
        self.waiting = 0;
    }

    /// A new CTA takes slot `cta`: no barrier has arrivals.
    pub fn reset_cta(&mut self, cta: usize) {
        self.tables[cta] = BarrierTable::default();
    }

    /// Warp slot `w` takes a new warp, which waits nowhere.
    #[inline]
    pub fn clear_warp(&mut self, w: usize) {
        self.waiting &= !(1 << w);
    }

    #[inline(always)]
    pub fn is_waiting(&self, w: usize) -> bool {
        self.waiting >> w & 1 != 0
    }

    /// Warp `w` of CTA slot `cta` arrives at barrier `id` (expecting `count` threads if
    /// given) with the `bar.sync` at `pc`.
    pub fn arrive(&mut self, cta: usize, w: usize, id: u32, count: Option<u32>, pc: u32) {
        let id = self.tables[cta].arrive(id, count);
        self.waiting |= 1 << w;
        self.at[w] = (id as u8, pc);
    }

    /// Any warp of CTA slot `cta` waits at a barrier.
    #[inline]
    pub fn any_waiting(&self, cta: usize) -> bool {
        self.tables[cta].any_waiting()
    }

    /// Release every barrier of CTA slot `cta` whose expected warps have all arrived, given
    /// `live` warps in `warps` (the CTA's slots). Returns the warps released (a bit per
    /// slot; they wait no more), or the deadlock when none is and none can be.
    pub fn release(&mut self, cta: usize, live: u32, warps: &[usize]) -> Result<u64, Deadlock> {
        let released = self.tables[cta].release(live);
        if released != 0 {
            let mut freed = 0u64;
            for &w in warps {
                if self.waiting >> w & 1 != 0 && released >> self.at[w].0 & 1 == 1 {
                    freed |= 1 << w;
                }
            }
            self.waiting &= !freed;
            return Ok(freed);
        }
        let table = &self.tables[cta];
        if table.deadlocked(live) {
            // Name the first waiting warp and the bar.sync it waits at.
            let (warp, pc) = warps
                .iter()
                .find(|&&w| self.waiting >> w & 1 != 0)
                .map(|&w| (w, self.at[w].1))
                .unwrap_or((warps[0], 0));
            return Err(Deadlock {
                warp,
                pc,
                detail: table.deadlock_detail(live),
            });
        }
        Ok(0)
    }
}
