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

/// One bank's counters (one 32-byte record, so an access touches one cache line).
#[derive(Debug, Clone, Copy, Default)]
struct Bank {
    reads: u64,
    writes: u64,
    busy: u64,
    /// The SM cycle after the last cycle booked busy.
    busy_until: u64,
}

/// Register-file bank counters and state of one SM (a fixed array, no allocation).
#[derive(Debug, Clone)]
pub struct RfBanks {
    mask: u32,
    conflicts: bool,
    banks: [Bank; MAX_RF_BANKS as usize],
    /// Extra operand-collection cycles of conflicting instructions (conflicts on only).
    pub conflict_cycles: u64,
}

impl RfBanks {
    /// `banks` must be a power of two up to [`MAX_RF_BANKS`] (checked by the configuration).
    pub fn new(banks: u32, conflicts: bool) -> RfBanks {
        let banks = banks.clamp(1, MAX_RF_BANKS);
        RfBanks {
            mask: banks - 1,
            conflicts,
            banks: [Bank::default(); MAX_RF_BANKS as usize],
            conflict_cycles: 0,
        }
    }

    /// A launch starts: every count restarts from 0.
    pub fn begin_kernel(&mut self) {
        self.banks = [Bank::default(); MAX_RF_BANKS as usize];
        self.conflict_cycles = 0;
    }

    pub fn num_banks(&self) -> usize {
        self.mask as usize + 1
    }

    /// Reads of bank `b` in this launch.
    pub fn reads(&self, b: usize) -> u64 {
        self.banks[b].reads
    }

    /// Writes of bank `b` in this launch.
    pub fn writes(&self, b: usize) -> u64 {
        self.banks[b].writes
    }

    /// Cycles of this launch with an access to bank `b`.
    pub fn busy_cycles(&self, b: usize) -> u64 {
        self.banks[b].busy
    }

    /// The bank of register slot `r` of warp slot `w`.
    #[inline]
    pub fn bank(&self, w: usize, r: RegId) -> usize {
        // `mask` < MAX_RF_BANKS: the second mask only lets the compiler drop bounds checks.
        ((r as u32).wrapping_add(w as u32) & self.mask & (MAX_RF_BANKS - 1)) as usize
    }

    /// Book cycle `t` busy for bank `b` (bookings start at nondecreasing cycles, except the
    /// serialised reads of one instruction, which follow on from each other).
    #[inline(always)]
    fn touch(bank: &mut Bank, t: u64) {
        // One cycle is either already booked (`busy_until` past it) or new: no range sums.
        // Without a branch: whether a bank was busy a cycle ago is not predictable.
        let new = bank.busy_until <= t;
        bank.busy += new as u64;
        bank.busy_until = bank.busy_until.max(t + 1);
    }

    /// The register-file reads `regs` of an instruction of warp slot `w` (its data registers:
    /// predicates live in a separate file) happen at cycle `now`. Returns the extra cycles
    /// before it can dispatch (0 unless conflicts are modelled).
    #[inline]
    pub fn read_operands(&mut self, w: usize, regs: &[RegId], now: u64) -> u32 {
        if self.conflicts {
            return self.read_operands_conflicting(w, regs, now);
        }
        for &r in regs {
            let bank = &mut self.banks[self.bank(w, r)];
            bank.reads += 1;
            Self::touch(bank, now);
        }
        0
    }

    /// [`Self::read_operands`] with conflicts: the k-th read of one bank (from 0) happens
    /// k cycles after `now`.
    #[inline(never)]
    fn read_operands_conflicting(&mut self, w: usize, regs: &[RegId], now: u64) -> u32 {
        let mut seen = [0usize; 8];
        let mut n = 0;
        let mut extra = 0u32;
        for &r in regs {
            if n == seen.len() {
                continue;
            }
            let b = self.bank(w, r);
            // reads already made of this bank by this instruction
            let j = seen[..n].iter().filter(|&&x| x == b).count() as u32;
            extra = extra.max(j);
            seen[n] = b;
            n += 1;
            let bank = &mut self.banks[b];
            bank.reads += 1;
            Self::touch(bank, now + j as u64);
        }
        self.conflict_cycles += extra as u64;
        extra
    }

    /// Data register `r` of warp slot `w` is written back at cycle `now` (a predicate
    /// destination is not in the register file: the caller leaves it out).
    #[inline]
    pub fn write(&mut self, w: usize, r: RegId, now: u64) {
        let b = self.bank(w, r);
        let bank = &mut self.banks[b];
        bank.writes += 1;
        Self::touch(bank, now);
    }

    pub fn total_reads(&self) -> u64 {
        self.banks.iter().map(|b| b.reads).sum()
    }

    pub fn total_writes(&self) -> u64 {
        self.banks.iter().map(|b| b.writes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(rf: &RfBanks) -> Vec<u64> {
        (0..rf.num_banks()).map(|b| rf.reads(b)).collect()
    }

    fn busy(rf: &RfBanks) -> Vec<u64> {
        (0..rf.num_banks()).map(|b| rf.busy_cycles(b)).collect()
    }

    #[test]
    fn banks_offset_by_warp() {
        let mut rf = RfBanks::new(4, false);
        rf.begin_kernel();
        assert_eq!(rf.bank(0, 5), 1);
        assert_eq!(rf.bank(3, 5), 0);
        assert_eq!(rf.read_operands(1, &[0, 4], 7), 0);
        assert_eq!(reads(&rf), vec![0, 2, 0, 0]);
        assert_eq!(busy(&rf), vec![0, 1, 0, 0]);
        rf.write(1, 2, 8);
        assert_eq!(
            (0..4).map(|b| rf.writes(b)).collect::<Vec<_>>(),
            vec![0, 0, 0, 1]
        );
        // a second access in the same cycle adds no busy cycle
        rf.write(2, 1, 8);
        assert_eq!(busy(&rf), vec![0, 1, 0, 1]);
        assert_eq!(rf.writes(3), 2);
        // ... one in a later cycle does
        rf.write(2, 1, 9);
        assert_eq!(busy(&rf), vec![0, 1, 0, 2]);
        assert_eq!(rf.conflict_cycles, 0);
    }

    #[test]
    fn conflicts_serialise_reads_of_one_bank() {
        let mut rf = RfBanks::new(4, true);
        rf.begin_kernel();
        // 0, 4, 8 all in bank 0 for warp 0; 1 in bank 1
        assert_eq!(rf.read_operands(0, &[0, 4, 8, 1], 10), 2);
        assert_eq!(rf.conflict_cycles, 2);
        assert_eq!(busy(&rf), vec![3, 1, 0, 0]);
        // a write at cycle 11 to bank 0 falls into the serialised reads: no new busy cycle
        rf.write(0, 12, 11);
        assert_eq!(rf.busy_cycles(0), 3);
        rf.write(0, 12, 13);
        assert_eq!(rf.busy_cycles(0), 4);
        // one bank: every pair of sources conflicts
        let mut one = RfBanks::new(1, true);
        one.begin_kernel();
        assert_eq!(one.read_operands(5, &[1, 2, 3], 0), 2);
    }
}
