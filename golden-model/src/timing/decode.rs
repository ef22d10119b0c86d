//! Per-instruction facts the timing model needs every issue, computed once per kernel:
//! which register slots an instruction reads and writes (for the scoreboard), which of its
//! reads go to the register file (for the bank model), and which functional unit it uses.

use crate::ptx::ir::{AddrBase, InstClass, Kernel, Opcode, Operand, RegId};
use crate::units::dpe_scoreboard::RegMask;

/// Maximum register slots an instruction reads (guard + up to 4 sources + address base +
/// vector store elements).
const MAX_READS: usize = 8;
const MAX_WRITES: usize = 4;

/// Decoded scoreboard and pipeline facts of one instruction.
#[derive(Debug, Clone, Copy)]
pub struct DecodedInst {
    /// The distinct register slots read: first the register file's (data registers, in
    /// operand order), then the predicates (slots at or above the kernel's
    /// `regs_per_thread`, a separate predicate file).
    pub reads: [RegId; MAX_READS],
    pub n_reads: u8,
    /// How many of `reads` are register-file reads.
    pub n_rf_reads: u8,
    pub writes: [RegId; MAX_WRITES],
    pub n_writes: u8,
    /// The registers read or written, as the scoreboard's hazard query takes them.
    pub uses: RegMask,
    pub class: InstClass,
    pub is_barrier: bool,
}

impl DecodedInst {
    pub fn reads(&self) -> &[RegId] {
        &self.reads[..self.n_reads as usize]
    }
    /// The reads that go to the register file (what its bank model counts), decided once
    /// here rather than per read at every issue.
    pub fn rf_reads(&self) -> &[RegId] {
        &self.reads[..self.n_rf_reads as usize]
    }
    pub fn writes(&self) -> &[RegId] {
        &self.writes[..self.n_writes as usize]
    }
}

/// Decode every instruction of a kernel.
pub fn decode_kernel(k: &Kernel) -> Vec<DecodedInst> {
    k.insts
        .iter()
        .map(|inst| {
            let mut d = DecodedInst {
                reads: [0; MAX_READS],
                n_reads: 0,
                n_rf_reads: 0,
                writes: [0; MAX_WRITES],
                n_writes: 0,
                uses: RegMask::default(),
                class: inst.class,
                is_barrier: inst.op == Opcode::BarSync,
            };
            let read = |r: RegId, d: &mut DecodedInst| {
                if !d.reads().contains(&r) && (d.n_reads as usize) < MAX_READS {
                    d.reads[d.n_reads as usize] = r;
                    d.n_reads += 1;
                }
            };
            if let Some(g) = inst.guard {
                read(g.reg, &mut d);
            }
            for s in &inst.srcs {
                if let Operand::Reg(r) = s {
                    read(*r, &mut d);
                }
            }
            if let Some(a) = inst.addr {
                if let AddrBase::Reg(r) = a.base {
                    read(r, &mut d);
                }
            }
            for s in &inst.dsts {
                if let Operand::Reg(r) = s {
                    if !d.writes().contains(r) && (d.n_writes as usize) < MAX_WRITES {
                        d.writes[d.n_writes as usize] = *r;
                        d.n_writes += 1;
                    }
                }
            }
            // Register-file reads first (a stable partition: operand order kept).
            let pred_base = k.regs_per_thread;
            let reads = d.reads();
            let mut sorted = [0; MAX_READS];
            let data = reads.iter().filter(|&&r| (r as u32) < pred_base);
            let preds = reads.iter().filter(|&&r| (r as u32) >= pred_base);
            for (slot, &r) in sorted.iter_mut().zip(data.clone().chain(preds)) {
                *slot = r;
            }
            d.n_rf_reads = data.count() as u8;
            d.reads = sorted;
            d.uses = RegMask::of(d.reads().iter().chain(d.writes()).map(|&r| r as u32));
            d
        })
        .collect()
}
