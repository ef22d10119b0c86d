//! Liveness-based register allocation.
//!
//! Register model: a 32-bit register file plus a separate predicate file. A value of 32 bits
//! or less takes one register `r`; a 64-bit value takes an aligned pair `(r, r+1)`, `r` even.
//! Execution slots (each a `u64`): register `r` (or the pair starting at `r`) is slot `r`;
//! predicate `p` is slot `regs_per_thread + p`. So `num_regs = regs_per_thread +
//! preds_per_thread`, and the odd slot of a pair is simply unused.
//!
//! Liveness is a backward dataflow over the CFG at block granularity. A definition under a
//! guard does not kill the register (lanes with a false guard keep the old value). Two
//! virtual registers interfere when one is defined while the other is live after the
//! definition; registers live on entry (read before any write: they read as 0) interfere
//! with each other; all destinations of one instruction interfere with each other and, for
//! multi-destination instructions (vector loads, `mov` unpack, `setp p|q`, `shfl d|p`), with
//! its sources, so the executor may write destinations one by one. Then greedy colouring
//! in order of first appearance.

use super::cfg::Cfg;
use super::ir::{AddrBase, Instruction, Operand, RegId};
use super::lower::{RegClass, VReg};

/// Fixed-size bit set over virtual registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(n: usize) -> Self {
        BitSet {
            words: vec![0; n.div_ceil(64)],
        }
    }
    pub fn insert(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    pub fn remove(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }
    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }
    /// `self |= other`; returns whether `self` changed.
    pub fn union_with(&mut self, other: &BitSet) -> bool {
        let mut changed = false;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            let n = *a | *b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                if b == 0 {
                    return None;
                }
                let t = b.trailing_zeros() as usize;
                b &= b - 1;
                Some(w * 64 + t)
            })
        })
    }
}

/// Virtual registers read by an instruction (guard, sources, address base).
pub fn uses(inst: &Instruction) -> impl Iterator<Item = RegId> + '_ {
    let g = inst.guard.map(|g| g.reg);
    let a = match inst.addr {
        Some(a) => match a.base {
            AddrBase::Reg(r) => Some(r),
            _ => None,
        },
        None => None,
    };
    let s = inst.srcs.iter().filter_map(|o| match o {
        Operand::Reg(r) => Some(*r),
        _ => None,
    });
    g.into_iter().chain(a).chain(s)
}

/// Virtual registers written by an instruction.
pub fn defs(inst: &Instruction) -> impl Iterator<Item = RegId> + '_ {
    inst.dsts.iter().filter_map(|o| match o {
        Operand::Reg(r) => Some(*r),
        _ => None,
    })
}

/// Live-out sets of every block.
pub fn live_out(insts: &[Instruction], nv: usize, cfg: &Cfg) -> Vec<BitSet> {
    let nb = cfg.blocks.len();
    // Per block: upward-exposed uses and killed (unguarded-def) registers.
    let mut gen = vec![BitSet::new(nv); nb];
    let mut kill = vec![BitSet::new(nv); nb];
    for (b, blk) in cfg.blocks.iter().enumerate() {
        for inst in insts[blk.start as usize..blk.end as usize].iter().rev() {
            if inst.guard.is_none() {
                for d in defs(inst) {
                    kill[b].insert(d as usize);
                    gen[b].remove(d as usize);
                }
            }
            for u in uses(inst) {
                gen[b].insert(u as usize);
            }
        }
    }
    let mut live_in = gen.clone();
    let mut live_out = vec![BitSet::new(nv); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut out = BitSet::new(nv);
            for &s in &cfg.blocks[b].succs {
                if s < nb {
                    out.union_with(&live_in[s]);
                }
            }
            if out != live_out[b] {
                // in = gen | (out & !kill)
                let mut inn = gen[b].clone();
                for ((i, o), k) in inn.words.iter_mut().zip(&out.words).zip(&kill[b].words) {
                    *i |= o & !k;
                }
                live_out[b] = out;
                if inn != live_in[b] {
                    live_in[b] = inn;
                    changed = true;
                }
            }
        }
    }
    live_out
}

/// Result of allocation: physical placement of every virtual register.
#[derive(Debug, Clone)]
pub struct Allocation {
    /// Per virtual register: its slot (`None` if it never appears).
    pub slot: Vec<Option<RegId>>,
    /// Per virtual register: its first 32-bit register (data) or predicate index.
    pub phys: Vec<Option<u32>>,
    pub num_regs: u16,
    pub regs_per_thread: u32,
    pub preds_per_thread: u32,
}

/// Allocates physical registers and rewrites every register operand of `insts` in place.
pub fn allocate(
    insts: &mut [Instruction],
    vregs: &[VReg],
    cfg: &Cfg,
) -> Result<Allocation, String> {
    let nv = vregs.len();
    let lo = live_out(insts, nv, cfg);
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); nv];
    let edge = |a: usize, b: usize, adj: &mut Vec<Vec<u32>>| {
        if a != b && vregs[a].class.is_pred() == vregs[b].class.is_pred() {
            adj[a].push(b as u32);
            adj[b].push(a as u32);
        }
    };
    let mut live_entry = BitSet::new(nv);
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let mut live = lo[b].clone();
        for inst in insts[blk.start as usize..blk.end as usize].iter().rev() {
            let ds: Vec<RegId> = defs(inst).collect();
            for &d in &ds {
                for l in live.iter() {
                    edge(d as usize, l, &mut adj);
                }
            }
            for (k, &d) in ds.iter().enumerate() {
                for &e in &ds[k + 1..] {
                    edge(d as usize, e as usize, &mut adj);
                }
                if ds.len() > 1 {
                    for u in uses(inst) {
                        edge(d as usize, u as usize, &mut adj);
                    }
                }
            }
            if inst.guard.is_none() {
                for &d in &ds {
                    live.remove(d as usize);
                }
            }
            for u in uses(inst) {
                live.insert(u as usize);
            }
        }
        if b == 0 {
            live_entry = live;
        }
    }
    let entry: Vec<usize> = live_entry.iter().collect();
    for (k, &a) in entry.iter().enumerate() {
        for &b in &entry[k + 1..] {
            edge(a, b, &mut adj);
        }
    }
    // Order of first appearance.
    let mut order = Vec::new();
    let mut seen = vec![false; nv];
    for inst in insts.iter() {
        for r in uses(inst).chain(defs(inst)) {
            if !seen[r as usize] {
                seen[r as usize] = true;
                order.push(r as usize);
            }
        }
    }
    let mut phys: Vec<Option<u32>> = vec![None; nv];
    let mut n_data = 0u32;
    let mut n_pred = 0u32;
    let mut busy: Vec<bool> = Vec::new();
    for &v in &order {
        busy.clear();
        let class = vregs[v].class;
        for &n in &adj[v] {
            let n = n as usize;
            if let Some(p) = phys[n] {
                let w = if vregs[n].class == RegClass::R64 {
                    2
                } else {
                    1
                };
                for r in p..p + w {
                    if busy.len() <= r as usize {
                        busy.resize(r as usize + 1, false);
                    }
                    busy[r as usize] = true;
                }
            }
        }
        let free = |r: u32| !busy.get(r as usize).copied().unwrap_or(false);
        let p = match class {
            RegClass::R64 => (0..)
                .step_by(2)
                .find(|&r| free(r) && free(r + 1))
                .unwrap_or(0),
            _ => (0..).find(|&r| free(r)).unwrap_or(0),
        };
        phys[v] = Some(p);
        match class {
            RegClass::Pred => n_pred = n_pred.max(p + 1),
            RegClass::R64 => n_data = n_data.max(p + 2),
            RegClass::R32 => n_data = n_data.max(p + 1),
        }
    }
    let total = n_data as u64 + n_pred as u64;
    if total > u16::MAX as u64 {
        return Err(format!(
            "kernel needs {total} register slots (more than 65535)"
        ));
    }
    let slot: Vec<Option<RegId>> = (0..nv)
        .map(|v| {
            phys[v].map(|p| match vregs[v].class {
                RegClass::Pred => (n_data + p) as RegId,
                _ => p as RegId,
            })
        })
        .collect();
    let map = |r: &mut RegId| *r = slot[*r as usize].unwrap_or(0);
    for inst in insts.iter_mut() {
        if let Some(g) = &mut inst.guard {
            map(&mut g.reg);
        }
        for o in inst.dsts.iter_mut().chain(inst.srcs.iter_mut()) {
            if let Operand::Reg(r) = o {
                map(r);
            }
        }
        if let Some(a) = &mut inst.addr {
            if let AddrBase::Reg(r) = &mut a.base {
                map(r);
            }
        }
    }
    Ok(Allocation {
        slot,
        phys,
        num_regs: total as u16,
        regs_per_thread: n_data,
        preds_per_thread: n_pred,
    })
}

impl RegClass {
    pub fn is_pred(self) -> bool {
        self == RegClass::Pred
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::ir::{Opcode, RegId};
    use crate::ptx::lower::VirtualKernel;
    use crate::ptx::parse_virtual;
    use proptest::prelude::*;
    use std::collections::HashSet;

    const CORPUS: &[&str] = &[
        include_str!("../../tests/ptx-corpus/control.ptx"),
        include_str!("../../tests/ptx-corpus/memory.ptx"),
        include_str!("../../tests/ptx-corpus/arith.ptx"),
        include_str!("../../tests/ptx-corpus/warp.ptx"),
        include_str!("../../tests/ptx-corpus/misc.ptx"),
    ];

    /// Independent instruction-level liveness (sets, no blocks): live-out of every PC.
    fn inst_live_out(insts: &[Instruction]) -> Vec<HashSet<RegId>> {
        let n = insts.len();
        let succs = |i: usize| -> Vec<usize> {
            let inst = &insts[i];
            let mut s = Vec::new();
            match inst.op {
                Opcode::Bra => {
                    s.push(inst.target.unwrap() as usize);
                    if inst.guard.is_some() {
                        s.push(i + 1);
                    }
                }
                Opcode::Ret | Opcode::Exit => {
                    if inst.guard.is_some() {
                        s.push(i + 1);
                    }
                }
                _ => s.push(i + 1),
            }
            s.retain(|&x| x < n);
            s
        };
        let mut live_in: Vec<HashSet<RegId>> = vec![HashSet::new(); n];
        let mut live_out: Vec<HashSet<RegId>> = vec![HashSet::new(); n];
        loop {
            let mut changed = false;
            for i in (0..n).rev() {
                let out: HashSet<RegId> = succs(i)
                    .iter()
                    .flat_map(|&s| live_in[s].iter().copied())
                    .collect();
                let mut inn = out.clone();
                if insts[i].guard.is_none() {
                    for d in defs(&insts[i]) {
                        inn.remove(&d);
                    }
                }
                inn.extend(uses(&insts[i]));
                if inn != live_in[i] || out != live_out[i] {
                    live_in[i] = inn;
                    live_out[i] = out;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // Registers live on entry behave as defined (to 0) before PC 0.
        let entry = live_in.first().cloned().unwrap_or_default();
        live_out.insert(0, entry);
        live_out
    }

    /// Checks that no two simultaneously live (or co-defined) virtual registers overlap.
    /// Returns (virtual data registers used, physical data registers).
    fn check(vk: &VirtualKernel) -> (usize, u32) {
        let mut k = vk.kernel.clone();
        let virt = k.insts.clone();
        let cfg = Cfg::build(&k.insts);
        let a = allocate(&mut k.insts, &vk.vregs, &cfg).unwrap();
        let range = |v: RegId| -> (bool, u32, u32) {
            let p = a.phys[v as usize].expect("allocated");
            match vk.vregs[v as usize].class {
                RegClass::Pred => (true, p, p + 1),
                RegClass::R32 => (false, p, p + 1),
                RegClass::R64 => {
                    assert_eq!(p % 2, 0, "64-bit pair must be aligned");
                    (false, p, p + 2)
                }
            }
        };
        let clash = |x: RegId, y: RegId| {
            let (px, ax, bx) = range(x);
            let (py, ay, by) = range(y);
            px == py && ax < by && ay < bx
        };
        let lo = inst_live_out(&virt);
        // lo[0] = live on entry, lo[pc+1] = live-out of pc.
        for (pc, live) in lo.iter().enumerate() {
            let mut set: Vec<RegId> = live.iter().copied().collect();
            if pc > 0 {
                set.extend(defs(&virt[pc - 1]));
            }
            set.sort();
            set.dedup();
            for (i, &x) in set.iter().enumerate() {
                for &y in &set[i + 1..] {
                    assert!(
                        !clash(x, y),
                        "{}: `{}` and `{}` interfere after pc {} but share a register",
                        vk.kernel.name,
                        vk.vregs[x as usize].name,
                        vk.vregs[y as usize].name,
                        pc as i64 - 1
                    );
                }
            }
        }
        // The rewritten instructions use the slots the allocation reports.
        for (v, p) in virt.iter().zip(&k.insts) {
            for (a0, b0) in defs(v).zip(defs(p)) {
                assert_eq!(a.slot[a0 as usize], Some(b0));
            }
            assert!(uses(p).all(|r| r < a.num_regs));
            assert!(defs(p).all(|r| r < a.num_regs));
        }
        let nvirt = vk
            .vregs
            .iter()
            .enumerate()
            .filter(|(i, r)| r.class != RegClass::Pred && a.phys[*i].is_some())
            .count();
        (nvirt, a.regs_per_thread)
    }

    #[test]
    fn corpus_allocations_are_valid() {
        for src in CORPUS {
            let l = parse_virtual("c.ptx", src).unwrap();
            for vk in &l.kernels {
                check(vk);
            }
        }
    }

    #[test]
    fn short_lived_temporaries_share_registers() {
        let l = parse_virtual("arith.ptx", CORPUS[2]).unwrap();
        let vk = l
            .kernels
            .iter()
            .find(|k| k.kernel.name == "_Z11temporariesPfPKf")
            .unwrap();
        let (virt, phys) = check(vk);
        assert!(virt > 150, "{virt} virtual registers");
        assert!(phys * 8 < virt as u32, "{phys} physical for {virt} virtual");
    }

    #[test]
    fn guarded_def_does_not_kill_and_undefined_reads_are_live_in() {
        // %r1 is defined under a guard, so its old value (from mov) must survive to the add:
        // %r2's definition in between may not take %r1's register. %r9 is never written.
        let src = ".version 7.0\n.target sm_70\n.address_size 64\n.entry k()\n{\n\
                   .reg .pred %p<2>; .reg .b32 %r<10>;\n\
                   mov.u32 %r1, 5;\n setp.eq.s32 %p1, %r1, 0;\n @%p1 mov.u32 %r1, 7;\n\
                   mov.u32 %r2, 1;\n add.s32 %r3, %r1, %r2;\n add.s32 %r4, %r3, %r9;\n\
                   st.global.u32 [%r4], %r3;\n ret;\n}\n";
        let l = parse_virtual("g.ptx", src).unwrap();
        let vk = &l.kernels[0];
        check(vk);
        let mut k = vk.kernel.clone();
        let cfg = Cfg::build(&k.insts);
        let a = allocate(&mut k.insts, &vk.vregs, &cfg).unwrap();
        let id = |n: &str| vk.vregs.iter().position(|v| v.name == n).unwrap();
        assert_ne!(a.phys[id("%r1")], a.phys[id("%r2")]);
        assert_ne!(a.phys[id("%r9")], a.phys[id("%r3")]);
        assert_eq!(a.preds_per_thread, 1);
        assert_eq!(a.num_regs as u32, a.regs_per_thread + 1);
    }

    /// A random branchy kernel over a small register pool.
    fn random_kernel(ops: &[(u8, u8, u8, u8)], nlabels: u8) -> String {
        let mut s = String::from(
            ".version 7.0\n.target sm_70\n.address_size 64\n.entry k()\n{\n\
             .reg .pred %p<4>; .reg .b32 %r<8>; .reg .b64 %rd<6>;\n",
        );
        let n = ops.len();
        for (i, &(kind, a, b, c)) in ops.iter().enumerate() {
            for l in 0..nlabels {
                if (l as usize * n) / nlabels as usize == i {
                    s.push_str(&format!("L{l}:\n"));
                }
            }
            let (a, b, c) = (a % 8, b % 8, c % 8);
            let (pa, da, db) = (a % 4, a % 6, b % 6);
            let g = if c < 3 {
                format!("@%p{} ", c)
            } else {
                String::new()
            };
            let line = match kind % 11 {
                0 => format!("{g}add.s32 %r{a}, %r{b}, %r{c};"),
                1 => format!("{g}add.s64 %rd{da}, %rd{db}, {c};"),
                2 => format!("setp.lt.s32 %p{pa}, %r{b}, %r{c};"),
                3 => format!("@%p{pa} bra L{};", b % nlabels.max(1)),
                4 => format!("mov.b64 {{%r{a}, %r{b}}}, %rd{db};"),
                5 => format!("mov.b64 %rd{da}, {{%r{b}, %r{c}}};"),
                6 => format!("ld.global.v2.u32 {{%r{a}, %r{b}}}, [%rd{db}];"),
                7 => format!("{g}st.global.u32 [%rd{da}], %r{b};"),
                8 => format!("@%p{pa} ret;"),
                9 => format!("cvt.u64.u32 %rd{da}, %r{b};"),
                _ => format!("selp.b32 %r{a}, %r{b}, %r{c}, %p{pa};"),
            };
            s.push_str(&line);
            s.push('\n');
        }
        for l in 0..nlabels {
            if (l as usize * n) / nlabels as usize >= n {
                s.push_str(&format!("L{l}:\n"));
            }
        }
        s.push_str("ret;\n}\n");
        s
    }

    proptest! {
        #[test]
        fn random_branchy_allocations_are_valid(
            ops in proptest::collection::vec(any::<(u8, u8, u8, u8)>(), 1..60),
            nlabels in 1u8..5,
        ) {
            let src = random_kernel(&ops, nlabels);
            let l = parse_virtual("r.ptx", &src).unwrap();
            check(&l.kernels[0]);
        }
    }
}
