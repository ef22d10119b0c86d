//! Block-wide barriers (`bar.sync`), shared by the functional and the timing model.
//!
//! Warp granularity: a warp arrives when it issues `bar.sync` (pre-Volta semantics, where a
//! warp's arrival counts for all its threads). A barrier without a thread count waits for
//! every live warp of the block; warps that have exited no longer count, as in GPGPU-Sim.
//! A block whose live warps all wait at barriers that cannot complete is deadlocked.

use super::WARP_SIZE;

/// PTX has 16 barriers per block.
pub const BARRIERS: usize = 16;

/// Arrival counts of one block's barriers.
#[derive(Debug, Clone, Default)]
pub struct BarrierTable {
    arrived: [u32; BARRIERS],
    /// Warps expected at a barrier given a thread count (`bar.sync id, count`); 0 = all live.
    expected: [u32; BARRIERS],
}

impl BarrierTable {
    /// A warp arrives at barrier `id` (clamped to 0..16); returns the id used.
    pub fn arrive(&mut self, id: u32, thread_count: Option<u32>) -> usize {
        let id = (id as usize).min(BARRIERS - 1);
        self.arrived[id] += 1;
        if let Some(c) = thread_count {
            self.expected[id] = c.div_ceil(WARP_SIZE as u32);
        }
        id
    }

    /// Complete every barrier whose expected warps have arrived, given `live` warps in the
    /// block; returns a bit mask of the released barrier ids.
    pub fn release(&mut self, live: u32) -> u16 {
        let mut released = 0u16;
        for id in 0..BARRIERS {
            let need = if self.expected[id] > 0 {
                self.expected[id]
            } else {
                live
            };
            if self.arrived[id] > 0 && self.arrived[id] >= need {
                self.arrived[id] = 0;
                self.expected[id] = 0;
                released |= 1 << id;
            }
        }
        released
    }

    /// Some warp is waiting at some barrier.
    pub fn any_waiting(&self) -> bool {
        self.arrived.iter().any(|&a| a > 0)
    }

    /// After [`BarrierTable::release`]: every one of `live` warps waits and none can go on.
    pub fn deadlocked(&self, live: u32) -> bool {
        live > 0 && self.arrived.iter().sum::<u32>() >= live
    }

    /// The fault detail of a deadlock.
    pub fn deadlock_detail(&self, live: u32) -> String {
        let ids: Vec<String> = self
            .arrived
            .iter()
            .enumerate()
            .filter(|(_, &a)| a > 0)
            .map(|(i, a)| format!("{a} warp(s) at barrier {i}"))
            .collect();
        format!(
            "every live warp of the block waits at a barrier that cannot complete ({}; {live} live warp(s))",
            ids.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_when_every_live_warp_arrives() {
        let mut b = BarrierTable::default();
        b.arrive(0, None);
        assert_eq!(b.release(2), 0);
        assert!(!b.deadlocked(2));
        b.arrive(0, None);
        assert_eq!(b.release(2), 1);
        assert!(!b.any_waiting());
    }

    #[test]
    fn exited_warps_stop_counting() {
        let mut b = BarrierTable::default();
        b.arrive(0, None);
        assert_eq!(b.release(2), 0);
        assert_eq!(b.release(1), 1, "the other warp exited");
    }

    #[test]
    fn thread_counts_and_deadlock() {
        let mut b = BarrierTable::default();
        assert_eq!(b.arrive(3, Some(64)), 3);
        assert_eq!(b.release(4), 0);
        b.arrive(3, None);
        assert_eq!(b.release(4), 1 << 3, "two warps = 64 threads");
        b.arrive(0, None);
        b.arrive(1, None);
        assert_eq!(b.release(2), 0);
        assert!(b.deadlocked(2));
        let d = b.deadlock_detail(2);
        assert!(d.contains("barrier 0") && d.contains("barrier 1"), "{d}");
    }
}
