//! Control-flow graph of a kernel, its post-dominator tree, and the reconvergence PC of every
//! branch (its block's immediate post-dominator).
//!
//! Blocks start at instruction 0, at every branch target and after every `bra`/`ret`/`exit`.
//! A virtual exit node (index `blocks.len()`) follows every `ret`/`exit` block (a guarded
//! `ret`/`exit` also falls through) and any block falling off the end. Post-dominators are
//! computed with the Cooper-Harvey-Kennedy iterative algorithm on the reverse CFG. Blocks that
//! cannot reach the exit (infinite loops) have no post-dominator; their branches reconverge
//! at [`END_PC`].

use super::ir::{Instruction, Opcode, END_PC};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// First instruction index.
    pub start: u32,
    /// One past the last instruction index.
    pub end: u32,
    /// Successor blocks; `Cfg::exit()` is the virtual exit.
    pub succs: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// Block of each instruction.
    pub block_of: Vec<u32>,
    /// Immediate post-dominator of each block (`Some(exit())` when it is the virtual exit);
    /// `None` for blocks with no path to the exit.
    pub ipdom: Vec<Option<usize>>,
}

impl Cfg {
    /// Index of the virtual exit node.
    pub fn exit(&self) -> usize {
        self.blocks.len()
    }

    pub fn build(insts: &[Instruction]) -> Cfg {
        let n = insts.len();
        let mut leader = vec![false; n + 1];
        if n > 0 {
            leader[0] = true;
        }
        for (i, inst) in insts.iter().enumerate() {
            match inst.op {
                Opcode::Bra => {
                    if let Some(t) = inst.target {
                        if (t as usize) < n {
                            leader[t as usize] = true;
                        }
                    }
                    leader[i + 1] = true;
                }
                Opcode::Ret | Opcode::Exit => leader[i + 1] = true,
                _ => {}
            }
        }
        let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
        let mut block_of = vec![0u32; n];
        let mut blocks = Vec::with_capacity(starts.len());
        for (b, &s) in starts.iter().enumerate() {
            let e = starts.get(b + 1).copied().unwrap_or(n);
            for x in &mut block_of[s..e] {
                *x = b as u32;
            }
            blocks.push(Block {
                start: s as u32,
                end: e as u32,
                succs: Vec::new(),
            });
        }
        let exit = blocks.len();
        let next = |i: usize| if i < n { block_of[i] as usize } else { exit };
        for blk in blocks.iter_mut() {
            let last = blk.end as usize - 1;
            let inst = &insts[last];
            let guarded = inst.guard.is_some();
            let mut succs = Vec::with_capacity(2);
            match inst.op {
                Opcode::Bra => {
                    let t = inst.target.map_or(exit, |t| next(t as usize));
                    succs.push(t);
                    if guarded {
                        succs.push(next(last + 1));
                    }
                }
                Opcode::Ret | Opcode::Exit => {
                    if guarded {
                        succs.push(next(last + 1));
                    }
                    succs.push(exit);
                }
                _ => succs.push(next(last + 1)),
            }
            succs.dedup();
            blk.succs = succs;
        }
        let ipdom = post_dominators(&blocks);
        Cfg {
            blocks,
            block_of,
            ipdom,
        }
    }

    /// Reconvergence PC of a branch in block `b`.
    pub fn rpc_of_block(&self, b: usize) -> u32 {
        match self.ipdom[b] {
            Some(p) if p != self.exit() => self.blocks[p].start,
            _ => END_PC,
        }
    }

    /// Sets `rpc` of every `bra` to the first instruction of its block's immediate
    /// post-dominator (or `END_PC`).
    pub fn set_branch_rpcs(&self, insts: &mut [Instruction]) {
        for (i, inst) in insts.iter_mut().enumerate() {
            if inst.op == Opcode::Bra {
                inst.rpc = Some(self.rpc_of_block(self.block_of[i] as usize));
            }
        }
    }
}

/// Cooper-Harvey-Kennedy on the reverse CFG rooted at the virtual exit.
fn post_dominators(blocks: &[Block]) -> Vec<Option<usize>> {
    let exit = blocks.len();
    let nn = exit + 1;
    // Reverse-graph successors = forward predecessors.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nn];
    for (b, blk) in blocks.iter().enumerate() {
        for &s in &blk.succs {
            preds[s].push(b);
        }
    }
    // Iterative DFS post-order of the reverse graph from the exit.
    let mut po_num = vec![usize::MAX; nn];
    let mut order = Vec::with_capacity(nn);
    let mut visited = vec![false; nn];
    let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
    visited[exit] = true;
    while let Some(&mut (node, ref mut k)) = stack.last_mut() {
        if *k < preds[node].len() {
            let p = preds[node][*k];
            *k += 1;
            if !visited[p] {
                visited[p] = true;
                stack.push((p, 0));
            }
        } else {
            po_num[node] = order.len();
            order.push(node);
            stack.pop();
        }
    }
    let mut ipdom: Vec<Option<usize>> = vec![None; nn];
    ipdom[exit] = Some(exit);
    let intersect = |ipdom: &[Option<usize>], mut a: usize, mut b: usize| -> usize {
        while a != b {
            while po_num[a] < po_num[b] {
                a = ipdom[a].unwrap_or(exit);
            }
            while po_num[b] < po_num[a] {
                b = ipdom[b].unwrap_or(exit);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        // Reverse post-order, skipping the root.
        for &b in order.iter().rev().skip(1) {
            let mut new: Option<usize> = None;
            for &s in &blocks[b].succs {
                if ipdom[s].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => s,
                    Some(x) => intersect(&ipdom, x, s),
                });
            }
            if new.is_some() && ipdom[b] != new {
                ipdom[b] = new;
                changed = true;
            }
        }
    }
    ipdom.truncate(exit);
    ipdom
}

#[cfg(test)]
mod tests {
    use crate::ptx::ir::{Kernel, Opcode, END_PC};
    use crate::ptx::parse_module;

    /// Wraps a kernel body with declarations and parses it.
    fn kernel(body: &str) -> Kernel {
        let src = format!(
            ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 k_p0)\n{{\n\
             .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n{body}\n}}\n"
        );
        parse_module("t.ptx", &src)
            .unwrap_or_else(|e| panic!("{e}"))
            .kernels
            .remove(0)
    }

    /// (pc, target, rpc) of every branch.
    fn branches(k: &Kernel) -> Vec<(u32, u32, u32)> {
        k.insts
            .iter()
            .enumerate()
            .filter(|(_, i)| i.op == Opcode::Bra)
            .map(|(pc, i)| (pc as u32, i.target.unwrap(), i.rpc.unwrap()))
            .collect()
    }

    #[test]
    fn if_else() {
        let k = kernel(
            "setp.eq.s32 %p1, %r1, 0;
             @%p1 bra ELSE;
             add.s32 %r2, %r1, 1;
             bra.uni END;
             ELSE: add.s32 %r2, %r1, 2;
             END: st.global.u32 [%rd1], %r2;
             ret;",
        );
        assert_eq!(branches(&k), vec![(1, 4, 5), (3, 5, 5)]);
    }

    #[test]
    fn if_only() {
        let k = kernel(
            "setp.eq.s32 %p1, %r1, 0;
             @%p1 bra SKIP;
             add.s32 %r1, %r1, 1;
             SKIP: st.global.u32 [%rd1], %r1;
             ret;",
        );
        assert_eq!(branches(&k), vec![(1, 3, 3)]);
    }

    #[test]
    fn nested() {
        let k = kernel(
            "setp.eq.s32 %p1, %r1, 0;
             @%p1 bra OUTER_ELSE;
             setp.eq.s32 %p2, %r2, 0;
             @%p2 bra INNER_ELSE;
             add.s32 %r3, %r1, 1;
             bra.uni INNER_END;
             INNER_ELSE: sub.s32 %r3, %r1, 1;
             INNER_END: mul.lo.s32 %r3, %r3, 3;
             bra.uni END;
             OUTER_ELSE: xor.b32 %r3, %r1, 5;
             END: st.global.u32 [%rd1], %r3;
             ret;",
        );
        assert_eq!(
            branches(&k),
            vec![(1, 9, 10), (3, 6, 7), (5, 7, 7), (8, 10, 10)]
        );
    }

    #[test]
    fn loop_with_break() {
        let k = kernel(
            "mov.u32 %r1, 0;
             LOOP: setp.ge.s32 %p1, %r1, 10;
             @%p1 bra DONE;
             setp.lt.s32 %p2, %r2, 0;
             @%p2 bra DONE;
             add.s32 %r1, %r1, 1;
             bra.uni LOOP;
             DONE: st.global.u32 [%rd1], %r1;
             ret;",
        );
        assert_eq!(branches(&k), vec![(2, 7, 7), (4, 7, 7), (6, 1, 1)]);
    }

    #[test]
    fn loop_with_divergent_exit() {
        let k = kernel(
            "mov.u32 %r1, 0;
             LOOP: add.s32 %r1, %r1, 1;
             setp.lt.s32 %p1, %r1, %r2;
             @%p1 bra LOOP;
             st.global.u32 [%rd1], %r1;
             ret;",
        );
        assert_eq!(branches(&k), vec![(3, 1, 4)]);
    }

    #[test]
    fn early_return() {
        let k = kernel(
            "setp.eq.s32 %p1, %r1, 0;
             @%p1 bra BODY;
             ret;
             BODY: st.global.u32 [%rd1], %r1;
             ret;",
        );
        assert_eq!(branches(&k), vec![(1, 3, END_PC)]);
    }

    #[test]
    fn multiple_ret_blocks_and_guarded_ret() {
        let k = kernel(
            "setp.eq.s32 %p1, %r1, 0;
             @%p1 bra A;
             setp.eq.s32 %p2, %r1, 1;
             @%p2 bra B;
             st.global.u32 [%rd1], %r1;
             ret;
             A: st.global.u32 [%rd1], %r2;
             ret;
             B: @%p3 ret;
             st.global.u32 [%rd1], %r3;
             ret;",
        );
        assert_eq!(branches(&k), vec![(1, 6, END_PC), (3, 8, END_PC)]);
        let k = kernel(
            "setp.eq.s32 %p1, %r1, 0;
             @%p1 bra X;
             @%p2 ret;
             add.s32 %r1, %r1, 1;
             X: st.global.u32 [%rd1], %r1;
             ret;",
        );
        assert_eq!(branches(&k), vec![(1, 4, END_PC)]);
    }

    #[test]
    fn infinite_loops_do_not_hang() {
        let k = kernel(
            "setp.eq.s32 %p1, %r1, 0;
             @%p1 bra SPIN;
             st.global.u32 [%rd1], %r1;
             ret;
             SPIN: add.s32 %r1, %r1, 1;
             bra.uni SPIN;",
        );
        let b = branches(&k);
        assert_eq!(b[1], (5, 4, END_PC));
        // The other path reaches the exit through pc 2.
        assert_eq!(b[0], (1, 4, 2));
        let k = kernel("L: bra.uni L;");
        assert_eq!(branches(&k), vec![(0, 0, END_PC)]);
        let k = kernel("L: @%p1 bra L;");
        assert_eq!(branches(&k), vec![(0, 0, 1)]);
        assert_eq!(k.insts.len(), 2, "implicit ret appended");
    }

    #[test]
    fn clang_if_else_rpcs() {
        let m = parse_module(
            "control.ptx",
            include_str!("../../tests/ptx-corpus/control.ptx"),
        )
        .unwrap();
        let k = m.kernel("_Z7if_elsePiPKii").unwrap();
        assert_eq!(
            branches(k),
            vec![(6, 30, 30), (20, 22, 27), (21, 26, 26), (25, 27, 27)]
        );
    }
}
