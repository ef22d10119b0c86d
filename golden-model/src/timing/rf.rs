//! Register-file bank model of one SM: which bank each register access goes to, per-bank
//! read, write and busy-cycle counts, and (optionally) the extra operand-collection cycles of
//! an instruction whose source operands share a bank.
//!
//! What it counts, in the terms of GPGPU-Sim's operand collector:
//! - **Bank of a register**: register slot `r` of warp slot `w` lives in bank
//!   `(r + w) % sm.rf_banks` (GPGPU-Sim's `register_bank()` with the warp-id offset, so the
//!   same register of neighbouring warps falls into different banks). GPGPU-Sim applies the
//!   offset only with `-gpgpu_reg_bank_use_warp_id`; here it always applies. A 64-bit value
//!   (an aligned slot pair) is one register, one access to the bank of its slot `r`, as a
//!   PTX-mode GPGPU-Sim register is one operand.
//! - **Reads**: at issue, one read per distinct source register of the warp instruction
//!   (sources, the address base, every element of a vector store); the guard and every other
//!   predicate register are not counted (they live in a separate predicate file).
//! - **Writes**: at writeback, one write per destination register (each element of a vector
//!   load counts), at the cycle the result is written back (the wheel slot of an ALU/SFU/DP
//!   result, the completion of a global/local load); predicate destinations are not counted.
//! - **Busy cycles** of a bank: the cycles of the SM's clock with at least one access to it
//!   (several accesses in one cycle make one busy cycle unless conflicts are modelled).
//!   Kept without walking the banks every cycle: each bank remembers the end of the last
//!   cycle it was busy and gains only the cycles a new access adds. Idle cycles =
//!   the SM's cycles - busy cycles, derived when the counters are sampled.
//! - **Conflicts** (`sm.rf_bank_conflicts = true`): a bank delivers one register per cycle
//!   to the operand collector, so an instruction whose sources fall `k` times into one bank
//!   needs `max k - 1` extra cycles before it dispatches; the SM adds them to the
//!   instruction's result latency and to its functional unit's busy time, and the k reads of
//!   one bank occupy it for k consecutive cycles. Only the operands of one instruction
//!   conflict with each other (different schedulers' instructions of one cycle and
//!   writebacks do not arbitrate for banks). Off (the default), timing is not touched.

use crate::ptx::ir::RegId;

/// The most banks `sm.rf_banks` may have.
pub const MAX_RF_BANKS: u32 = 64;

/// Register-file bank counters and state of one SM (plain arrays, sized once).
#[derive(Debug, Clone)]
pub struct RfBanks {
    mask: u32,
    conflicts: bool,
    /// Register slots at or above this one are predicates (not in the register file).
    pred_base: u32,
    pub reads: Vec<u64>,
    pub writes: Vec<u64>,
    pub busy: Vec<u64>,
    /// Per bank: the SM cycle after the last cycle booked busy.
    busy_until: Vec<u64>,
    /// Extra operand-collection cycles of conflicting instructions (conflicts on only).
    pub conflict_cycles: u64,
}

impl RfBanks {
    /// `banks` must be a power of two (checked by the configuration).
    pub fn new(banks: u32, conflicts: bool) -> RfBanks {
        let n = banks.max(1) as usize;
        RfBanks {
            mask: banks.max(1) - 1,
            conflicts,
            pred_base: u32::MAX,
            reads: vec![0; n],
            writes: vec![0; n],
            busy: vec![0; n],
            busy_until: vec![0; n],
            conflict_cycles: 0,
        }
    }

    /// A launch starts: every count restarts from 0; `pred_base` is the kernel's first
    /// predicate slot (its data registers per thread).
    pub fn begin_kernel(&mut self, pred_base: u32) {
        self.pred_base = pred_base;
        for v in [
            &mut self.reads,
            &mut self.writes,
            &mut self.busy,
            &mut self.busy_until,
        ] {
            v.iter_mut().for_each(|x| *x = 0);
        }
        self.conflict_cycles = 0;
    }

    pub fn num_banks(&self) -> usize {
        self.reads.len()
    }

    /// The bank of register slot `r` of warp slot `w`.
    #[inline]
    pub fn bank(&self, w: usize, r: RegId) -> usize {
        ((r as u32).wrapping_add(w as u32) & self.mask) as usize
    }

    /// Book cycle `t` busy for bank `b` (bookings start at nondecreasing cycles, except the
    /// serialised reads of one instruction, which follow on from each other).
    #[inline]
    fn touch(&mut self, b: usize, t: u64) {
        let end = t + 1;
        if end > self.busy_until[b] {
            self.busy[b] += end - t.max(self.busy_until[b]);
            self.busy_until[b] = end;
        }
    }

    /// The source registers `regs` of an instruction of warp slot `w` are read at cycle
    /// `now`. Returns the extra cycles before it can dispatch (0 unless conflicts are
    /// modelled).
    #[inline]
    pub fn read_operands(&mut self, w: usize, regs: &[RegId], now: u64) -> u32 {
        let mut banks = [0u8; 8];
        let mut n = 0;
        let mut extra = 0u32;
        for &r in regs {
            if r as u32 >= self.pred_base || n == banks.len() {
                continue;
            }
            let b = self.bank(w, r);
            self.reads[b] += 1;
            let t = if self.conflicts {
                // reads already made of this bank by this instruction
                let j = banks[..n].iter().filter(|&&x| x as usize == b).count() as u32;
                extra = extra.max(j);
                now + j as u64
            } else {
                now
            };
            banks[n] = b as u8;
            n += 1;
            self.touch(b, t);
        }
        self.conflict_cycles += extra as u64;
        extra
    }

    /// Register `r` of warp slot `w` is written back at cycle `now`.
    #[inline]
    pub fn write(&mut self, w: usize, r: RegId, now: u64) {
        if r as u32 >= self.pred_base {
            return;
        }
        let b = self.bank(w, r);
        self.writes[b] += 1;
        self.touch(b, now);
    }

    pub fn total_reads(&self) -> u64 {
        self.reads.iter().sum()
    }

    pub fn total_writes(&self) -> u64 {
        self.writes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banks_offset_by_warp_and_predicates_skipped() {
        let mut rf = RfBanks::new(4, false);
        rf.begin_kernel(10);
        assert_eq!(rf.bank(0, 5), 1);
        assert_eq!(rf.bank(3, 5), 0);
        // slot 12 is a predicate: not counted
        assert_eq!(rf.read_operands(1, &[0, 4, 12], 7), 0);
        assert_eq!(rf.reads, vec![0, 2, 0, 0]);
        assert_eq!(rf.busy, vec![0, 1, 0, 0]);
        rf.write(1, 12, 8);
        rf.write(1, 2, 8);
        assert_eq!(rf.writes, vec![0, 0, 0, 1]);
        // a second access in the same cycle adds no busy cycle
        rf.write(2, 1, 8);
        assert_eq!(rf.busy, vec![0, 1, 0, 2]);
        assert_eq!(rf.conflict_cycles, 0);
    }

    #[test]
    fn conflicts_serialise_reads_of_one_bank() {
        let mut rf = RfBanks::new(4, true);
        rf.begin_kernel(64);
        // 0, 4, 8 all in bank 0 for warp 0; 1 in bank 1
        assert_eq!(rf.read_operands(0, &[0, 4, 8, 1], 10), 2);
        assert_eq!(rf.conflict_cycles, 2);
        assert_eq!(rf.busy, vec![3, 1, 0, 0]);
        // a write at cycle 11 to bank 0 falls into the serialised reads: no new busy cycle
        rf.write(0, 12, 11);
        assert_eq!(rf.busy[0], 3);
        rf.write(0, 12, 13);
        assert_eq!(rf.busy[0], 4);
        // one bank: every pair of sources conflicts
        let mut one = RfBanks::new(1, true);
        one.begin_kernel(64);
        assert_eq!(one.read_operands(5, &[1, 2, 3], 0), 2);
    }
}
