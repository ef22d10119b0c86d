//! Front end: instruction fetch into the per-path instruction buffers. Owns which paths
//! need a fetch, the fetch round-robin pointer, each path's fetch completion cycle and each
//! scheduler's fetches in flight; the warp table's `ibuf` fields are its too.
//!
//! Per cycle up to `sm.fetch_width` paths with an empty buffer are refilled, round robin
//! over paths (`2 * warp + side`): `sm.ibuffer_entries` sequential instructions from the
//! path's PC, usable `sm.fetch_latency` cycles later.

use super::warps::{owner_scheduler, IBuffer, WarpSlot};
use crate::config::GpuConfig;
use std::collections::VecDeque;

/// Paths of an SM: two per warp slot, at most 64 warp slots (`sm.max_warps`).
const PATHS: usize = 128;

pub(super) struct FrontEnd {
    /// Paths with an empty instruction buffer that can be scheduled: bit `p % 64` of word
    /// `p / 64` for path `p = 2 * warp + side` (two words rather than a `u128`, whose
    /// variable shifts cost several instructions each on every issue).
    need_fetch: [u64; 2],
    rr: usize,
    /// Per path: the cycle at which its buffer's last fetch completes. A dense array the
    /// blocker check reads (indexed `p % PATHS`: a mask, no bounds check).
    ready_at: [u64; PATHS],
    /// Per scheduler: the completion cycles of its warps' fetches in flight, earliest first
    /// (for the schedulers' sleep computation).
    done_at: Vec<VecDeque<u64>>,
    width: u32,
    latency: u64,
    entries: u32,
}

impl FrontEnd {
    pub fn new(cfg: &GpuConfig) -> FrontEnd {
        FrontEnd {
            need_fetch: [0; 2],
            rr: 0,
            ready_at: [0; PATHS],
            done_at: vec![VecDeque::new(); cfg.sm.schedulers as usize],
            width: cfg.sm.fetch_width,
            latency: cfg.sm.fetch_latency as u64,
            entries: cfg.sm.ibuffer_entries,
        }
    }

    /// A new kernel: nothing to fetch, nothing in flight.
    pub fn begin_kernel(&mut self) {
        for f in &mut self.done_at {
            f.clear();
        }
        self.need_fetch = [0; 2];
        self.ready_at = [0; PATHS];
    }

    /// The fetch phase: refill up to `sm.fetch_width` buffers. Returns the warps fetched
    /// for (a bit per slot; the SM wakes them).
    #[inline]
    pub fn fetch(&mut self, now: u64, warps: &mut [WarpSlot]) -> u64 {
        let n = warps.len();
        let nsched = self.done_at.len();
        let mut fetched = 0u64;
        for _ in 0..self.width {
            if self.need_fetch == [0; 2] {
                break;
            }
            // Round robin over paths: the first one needing a fetch at or after `rr`.
            let bit = first_from(&self.need_fetch, self.rr);
            let (w, side) = (bit / 2, bit % 2);
            let warp = &mut warps[w];
            warp.ibuf[side] = IBuffer {
                count: self.entries,
                pc: warp.view.pc[side],
            };
            let done_at = now + self.latency;
            self.ready_at[bit % PATHS] = done_at;
            // Completion cycles of one scheduler's fetches arrive in order (a fixed latency
            // from a growing cycle): a queue, pruned as it grows, holds its earliest pending.
            let fetches = &mut self.done_at[owner_scheduler(w, nsched)];
            drop_completed(fetches, now);
            fetches.push_back(done_at);
            self.need_fetch[bit / 64] &= !(1 << (bit % 64));
            // (bit + 1) modulo the 2n paths: bit < 2n, so one compare, no division.
            self.rr = if bit + 1 == 2 * n { 0 } else { bit + 1 };
            fetched |= 1 << w;
        }
        fetched
    }

    /// Recompute whether warp `w`'s paths wait for an instruction fetch.
    #[inline]
    pub fn update(&mut self, w: usize, warp: &WarpSlot) {
        // Both of the warp's bits at once: one 128-bit shift rather than one per side and
        // operation (this runs at every issue).
        let mut want = 0u64;
        if warp.active && !warp.finished {
            for side in 0..2 {
                if warp.ibuf[side].count == 0 && warp.view.path_valid(side) {
                    want |= 1 << side;
                }
            }
        }
        let (word, shift) = ((w / 32) % 2, 2 * (w % 32));
        self.need_fetch[word] = (self.need_fetch[word] & !(3 << shift)) | (want << shift);
    }

    /// Warp `w` exited: none of its paths is fetched for again.
    #[inline]
    pub fn forget(&mut self, w: usize) {
        self.need_fetch[(w / 32) % 2] &= !(3 << (2 * (w % 32)));
    }

    /// Warp `w` issued the instruction at `pc` from `side`: that path's buffer moves on by
    /// one; a buffer whose next instruction is no longer its path's PC (a jump, a push, a
    /// pop: the stack's outputs in `warp.view` are already updated) is flushed (spec A16).
    #[inline]
    pub fn issued(warp: &mut WarpSlot, side: usize, pc: u32) {
        let ib = &mut warp.ibuf[side];
        ib.count = ib.count.saturating_sub(1);
        ib.pc = pc + 1;
        for s in 0..2 {
            let ib = &mut warp.ibuf[s];
            if ib.count > 0 && (!warp.view.path_valid(s) || warp.view.pc[s] != ib.pc) {
                ib.count = 0;
            }
        }
    }

    /// Both buffers of a warp are flushed (its stack popped without an instruction).
    #[inline]
    pub fn flush(warp: &mut WarpSlot) {
        warp.ibuf = [IBuffer::default(); 2];
    }

    /// The cycle from which path `p`'s buffer can be read.
    #[inline(always)]
    pub fn ready_at(&self, p: usize) -> u64 {
        self.ready_at[p % PATHS]
    }

    /// The earliest completion after `now` of scheduler `s`'s fetches in flight, if any
    /// (`u64::MAX`). (A fetch whose buffer was flushed since may still be counted: waking
    /// early only costs a scan that finds the same blockers.)
    #[inline]
    pub fn next_done(&mut self, s: usize, now: u64) -> u64 {
        let fetches = &mut self.done_at[s];
        drop_completed(fetches, now);
        fetches.front().copied().unwrap_or(u64::MAX)
    }
}

/// The first set bit of the 128-bit set `words` at or after `from` (< 128), cyclically:
/// the rest of `from`'s word, the other word, then the start of `from`'s word. `words` must
/// not be empty.
#[inline]
fn first_from(words: &[u64; 2], from: usize) -> usize {
    let (i, sh) = ((from / 64) % 2, from % 64);
    let rest = words[i] & (u64::MAX << sh);
    if rest != 0 {
        return i * 64 + rest.trailing_zeros() as usize;
    }
    let j = 1 - i;
    if words[j] != 0 {
        return j * 64 + words[j].trailing_zeros() as usize;
    }
    i * 64 + words[i].trailing_zeros() as usize
}

/// Forget the fetch completions at or before `now` (the queue is in completion order).
#[inline]
fn drop_completed(fetches: &mut VecDeque<u64>, now: u64) {
    while fetches.front().is_some_and(|&at| at <= now) {
        fetches.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::first_from;

    /// The round-robin pick agrees with the 128-bit rotation it replaced.
    #[test]
    fn first_from_is_the_rotation_of_a_u128() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let sparse = x & x.rotate_left(11) & x.rotate_left(29);
            let words = [sparse, (x >> 3) & x.rotate_left(5) & x.rotate_left(41)];
            let words = if x & 3 == 0 { [words[0], 0] } else { words };
            let all = words[0] as u128 | (words[1] as u128) << 64;
            if all == 0 {
                continue;
            }
            for from in 0..128 {
                let want = (from + all.rotate_right(from as u32).trailing_zeros() as usize) % 128;
                assert_eq!(first_from(&words, from), want, "{words:x?} from {from}");
            }
        }
    }
}
