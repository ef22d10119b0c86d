//! Load/store unit: the queue of global/local memory instructions waiting for the memory
//! hierarchy, the tokens that name them there, and the cycle the LSU accepts its next
//! request. Shared-memory accesses (and const/param ones) are served inside the SM: they only
//! occupy the LSU ([`Lsu::occupy`]).
//!
//! Per cycle the LSU hands its head request to the memory hierarchy, which accepts it whole
//! or not at all; an accepted request keeps the LSU busy one `pipeline.lsu_ii` per L1 bank
//! pass. A completed request comes back as its token ([`Lsu::complete`]).

use crate::config::GpuConfig;
use crate::exec::MemAccess;
use crate::hooks::GpuHooks;
use crate::memory::MemoryHierarchy;
use std::collections::VecDeque;

/// Requests the LSU holds before the issue stage must wait.
const LSU_QUEUE: usize = 2;

/// A global/local memory instruction in the memory hierarchy: whose registers its
/// completion writes.
pub(super) struct PendingMem {
    pub warp: u16,
    pub side: u8,
    pub regs: [u16; 4],
    pub n_regs: u8,
}

pub(super) struct Lsu {
    /// Cycle at which the LSU accepts its next request.
    free: u64,
    ii: u64,
    queue: VecDeque<(u32, MemAccess)>,
    tokens: Vec<PendingMem>,
    free_tokens: Vec<u32>,
}

impl Lsu {
    pub fn new(cfg: &GpuConfig) -> Lsu {
        Lsu {
            free: 0,
            ii: cfg.pipeline.lsu_ii as u64,
            queue: VecDeque::with_capacity(LSU_QUEUE),
            tokens: Vec::new(),
            free_tokens: Vec::new(),
        }
    }

    /// The queue has no room: memory instructions wait until it drains.
    #[inline(always)]
    pub fn queue_full(&self) -> bool {
        self.queue.len() >= LSU_QUEUE
    }

    /// The cycle the LSU accepts its next request (only ever moves later).
    #[inline(always)]
    pub fn free_at(&self) -> u64 {
        self.free
    }

    /// Hand the head request to the memory hierarchy if the LSU is free. Returns true when
    /// it was accepted (the queue has room again).
    #[inline]
    pub fn drive<H: GpuHooks>(
        &mut self,
        now: u64,
        mem_now: u64,
        mem: &mut MemoryHierarchy,
        sm: usize,
        hooks: &mut H,
    ) -> bool {
        if self.free > now {
            return false;
        }
        let Some((tok, access)) = self.queue.front() else {
            return false;
        };
        match mem.issue_with(mem_now, sm, *tok, access, hooks) {
            Ok(info) => {
                // One L1 access per bank pass (every transaction with `l1.banks = 1`).
                self.free = now + info.l1_passes.max(1) as u64 * self.ii;
                self.queue.pop_front();
                true
            }
            Err(_) => false,
        }
    }

    /// Queue a global/local request issued at `now` whose operands arrive `rf_extra`
    /// cycles late.
    #[inline]
    pub fn push(&mut self, pending: PendingMem, access: &MemAccess, now: u64, rf_extra: u32) {
        let tok = match self.free_tokens.pop() {
            Some(t) => {
                self.tokens[t as usize] = pending;
                t
            }
            None => {
                self.tokens.push(pending);
                self.tokens.len() as u32 - 1
            }
        };
        self.queue.push_back((tok, *access));
        if rf_extra > 0 {
            // The operands arrive late: the LSU takes the request no earlier.
            self.free = self.free.max(now + rf_extra as u64);
        }
    }

    /// An access served inside the SM occupies the LSU until `until`.
    #[inline]
    pub fn occupy(&mut self, until: u64) {
        self.free = until;
    }

    /// The request of token `tok` completed: what it writes back (the token is free again).
    #[inline]
    pub fn complete(&mut self, tok: u32) -> &PendingMem {
        self.free_tokens.push(tok);
        &self.tokens[tok as usize]
    }
}
