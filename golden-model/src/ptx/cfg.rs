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
        for b in 0..blocks.len() {
            let last = blocks[b].end as usize - 1;
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
            blocks[b].succs = succs;
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
