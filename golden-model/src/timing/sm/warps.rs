//! The warp table: one record per warp slot with what the schedulers' blocker check reads
//! first, written by the sub-block named at each field.
//!
//! Why one record rather than each sub-block's own array: the SM's state is cold in the
//! host caches whenever its turn comes (the other SMs ran in between), and the blocker check
//! reads the stack outputs and the instruction buffers of every warp it looks at. Kept
//! together they are one 64-byte line per warp (`repr(C)` keeps the order); spread over
//! the sub-blocks they were two or three.

use super::super::reconv::StackView;

#[repr(C, align(64))]
pub(super) struct WarpSlot {
    /// Reconvergence stacks: the outputs of the slot's stack (`Sm::stacks`), refreshed
    /// after every stack clock edge (see [`StackView`]).
    pub view: StackView,
    /// Front end: one instruction buffer per path (spec A16: per warp and side; SPE uses
    /// side 0).
    pub ibuf: [IBuffer; 2],
    /// Residency: the slot holds a warp, which may have finished (it is freed once
    /// nothing of it is in flight), of CTA slot `cta_slot`.
    pub active: bool,
    pub finished: bool,
    /// Issue: DPE path selection, the side that issued last (ALT) or the selected side
    /// (constrained).
    pub side: u8,
    pub cta_slot: u16,
    /// Back end: writebacks and memory requests in flight (the slot is not reused until
    /// 0, nor until its deferred scoreboard releases are staged, `RegDeps::deferred_of`).
    pub inflight: u32,
}

impl WarpSlot {
    /// A free slot.
    pub fn free() -> WarpSlot {
        WarpSlot {
            view: StackView::default(),
            ibuf: [IBuffer::default(); 2],
            active: false,
            finished: false,
            side: 0,
            cta_slot: 0,
            inflight: 0,
        }
    }
}

/// Instructions fetched for one path: `count` sequential instructions starting at `pc`,
/// usable from the path's `FrontEnd::fetch_ready_at`.
#[derive(Clone, Copy, Default)]
pub(super) struct IBuffer {
    pub count: u32,
    pub pc: u32,
}

/// The scheduler (of `n`) that owns warp slot `w`: the slot index modulo the scheduler
/// count (even/odd slots with two, spec A15). Runs on every warp event, so the usual
/// power-of-two counts take a mask instead of a division.
#[inline(always)]
pub(super) fn owner_scheduler(w: usize, n: usize) -> usize {
    if n.is_power_of_two() {
        w & (n - 1)
    } else {
        w % n
    }
}

/// The indices of the set bits of `m`, lowest first.
#[inline]
pub(super) fn set_bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}
