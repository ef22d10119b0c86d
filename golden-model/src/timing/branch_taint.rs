//! Programmatic versus data-dependent branches (spec tbc-capri-slp.md §3.1, the seed's
//! taint analysis on PTX, L1199): a conditional branch is a *D-branch* when its predicate
//! depends on data loaded from memory, a *P-branch* when it depends only on programmatic
//! values (thread and block indices, dimensions, kernel arguments, immediates).
//!
//! A forward data-flow analysis over the kernel's control-flow graph (register slots are
//! reused after allocation, so taint is tracked per program point): a register is
//! data-tainted after an instruction that writes it when the instruction is a load or
//! atomic from a space other than `.param` (kernel arguments are programmatic), or reads a
//! data-tainted register (a source, its guard or its address base); an unguarded write of
//! programmatic values clears it (an immediate move clears taint, L1199). Where paths
//! join, taint is the union: a register written both ways counts as data, like the seed's
//! mixed predicates (L1195).

use crate::ptx::ir::{AddrBase, Instruction, Kernel, Opcode, Operand, StateSpace};

/// Tainted register slots (the timing model holds at most 256).
type Taint = [u64; 4];

fn get(t: &Taint, r: u16) -> bool {
    (r as usize) < 256 && t[r as usize / 64] >> (r % 64) & 1 == 1
}

fn set(t: &mut Taint, r: u16, v: bool) {
    if (r as usize) < 256 {
        let bit = 1u64 << (r % 64);
        if v {
            t[r as usize / 64] |= bit;
        } else {
            t[r as usize / 64] &= !bit;
        }
    }
}

/// The taint after `inst` given the taint before it.
fn transfer(inst: &Instruction, before: &Taint) -> Taint {
    let loads_data = match inst.op {
        Opcode::Ld => inst.mods.space != Some(StateSpace::Param),
        Opcode::Atom | Opcode::Tex => true,
        _ => false,
    };
    let reads_data = loads_data
        || inst
            .srcs
            .iter()
            .any(|o| matches!(o, Operand::Reg(r) if get(before, *r)))
        || inst.guard.is_some_and(|g| get(before, g.reg))
        || matches!(inst.addr, Some(a) if matches!(a.base, AddrBase::Reg(r) if get(before, r)));
    let mut after = *before;
    for d in &inst.dsts {
        if let Operand::Reg(r) = d {
            // A guarded write may leave the old value in some lanes.
            let keep = inst.guard.is_some() && get(before, *r);
            set(&mut after, *r, reads_data || keep);
        }
    }
    after
}

/// The PCs control can reach after `pc`.
fn successors(inst: &Instruction, pc: usize, n: usize) -> impl Iterator<Item = usize> {
    let ends = matches!(inst.op, Opcode::Ret | Opcode::Exit) && inst.guard.is_none();
    let jumps = inst.op == Opcode::Bra;
    let always_jumps = jumps && inst.guard.is_none();
    let falls = !(ends || always_jumps);
    let target = if jumps { inst.target } else { None };
    (falls && pc + 1 < n)
        .then_some(pc + 1)
        .into_iter()
        .chain(target.map(|t| t as usize).filter(|&t| t < n))
}

/// Per PC: `true` where the instruction is a guarded `bra` whose predicate is data-tainted.
pub fn data_branches(kernel: &Kernel) -> Vec<bool> {
    let insts = &kernel.insts;
    let n = insts.len();
    let mut before: Vec<Taint> = vec![[0; 4]; n];
    let mut queued = vec![true; n];
    let mut work: Vec<usize> = (0..n).rev().collect();
    while let Some(pc) = work.pop() {
        queued[pc] = false;
        let after = transfer(&insts[pc], &before[pc]);
        for s in successors(&insts[pc], pc, n) {
            let mut t = before[s];
            for (a, b) in t.iter_mut().zip(&after) {
                *a |= b;
            }
            if t != before[s] {
                before[s] = t;
                if !queued[s] {
                    queued[s] = true;
                    work.push(s);
                }
            }
        }
    }
    insts
        .iter()
        .zip(&before)
        .map(|(i, t)| i.op == Opcode::Bra && i.guard.is_some_and(|g| get(t, g.reg)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's examples: `tid == 0` and loop bounds from `blockDim` are programmatic;
    /// a predicate on a loaded value is data-dependent.
    #[test]
    fn programmatic_and_data_branches() {
        let src = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	setp.eq.s32 	%p1, %r2, 0;
	@%p1 bra 	A;
	mul.wide.u32 	%rd2, %r2, 4;
	add.s64 	%rd3, %rd1, %rd2;
	ld.global.u32 	%r3, [%rd3];
	setp.gt.s32 	%p2, %r3, %r1;
	@%p2 bra 	A;
	setp.lt.s32 	%p3, %r2, %r1;
	@%p3 bra 	A;
A:
	ret;
}
"#;
        let m = crate::ptx::parse_module("k.ptx", src).expect("parses");
        let k = &m.kernels[0];
        let d = data_branches(k);
        let kinds: Vec<bool> = k
            .insts
            .iter()
            .zip(&d)
            .filter(|(i, _)| i.op == Opcode::Bra)
            .map(|(_, &x)| x)
            .collect();
        assert_eq!(kinds, vec![false, true, false]);
    }
}
