//! bfs: Rodinia-style breadth-first search over a seeded random graph in CSR. The frontier
//! is a byte mask; `bfs_expand` visits the frontier's edges, `bfs_update` builds the next
//! frontier and sets the device `over` flag; the host relaunches both until `over` stays 0.

use std::collections::VecDeque;

use crate::rng::SplitMix64;
use crate::{
    blocks_for, check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload,
};
use warpforge_model::error::SimError;

crate::workload!(
    Bfs,
    "bfs",
    Category::Divergent,
    "frontier BFS on a random CSR graph: only frontier lanes work, variable-degree edge loops, two kernels per level until a done flag stays 0"
);

const BLOCK: u32 = 128;

pub(crate) fn nodes(size: Size) -> usize {
    size.pick(256, 4096, 64 * 1024)
}

/// Random directed graph: each node gets 1-6 edges to uniformly random nodes (a few are
/// unreachable from node 0, which exercises the `cost = -1` path).
pub(crate) fn inputs(n: usize, seed: u64) -> (Vec<i32>, Vec<i32>) {
    let mut g = SplitMix64::for_stream(seed, "bfs.graph");
    let mut row_ptr = vec![0i32];
    let mut edges = Vec::new();
    for _ in 0..n {
        let deg = 1 + g.below(6);
        for _ in 0..deg {
            edges.push(g.below(n as u32) as i32);
        }
        row_ptr.push(edges.len() as i32);
    }
    (row_ptr, edges)
}

/// BFS levels from node 0 by a plain queue; -1 for unreachable nodes.
pub(crate) fn reference(row_ptr: &[i32], edges: &[i32]) -> Vec<i32> {
    let n = row_ptr.len() - 1;
    let mut cost = vec![-1i32; n];
    let mut q = VecDeque::from([0usize]);
    cost[0] = 0;
    while let Some(u) = q.pop_front() {
        for &v in &edges[row_ptr[u] as usize..row_ptr[u + 1] as usize] {
            if cost[v as usize] < 0 {
                cost[v as usize] = cost[u] + 1;
                q.push_back(v as usize);
            }
        }
    }
    cost
}

fn run_impl(w: &Bfs, host: &mut dyn Host, size: Size, seed: u64) -> Result<Verification, SimError> {
    let n = nodes(size);
    let (row_ptr, edges) = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let drp = host.alloc_write_i32(&row_ptr)?;
    let dedges = host.alloc_write_i32(&edges)?;
    let mut start = vec![0u8; n];
    start[0] = 1;
    let dmask = host.alloc(n as u64)?;
    host.write_bytes(dmask, &start)?;
    let dupdating = host.alloc(n as u64)?;
    let dvisited = host.alloc(n as u64)?;
    host.write_bytes(dvisited, &start)?;
    let mut cost0 = vec![-1i32; n];
    cost0[0] = 0;
    let dcost = host.alloc_write_i32(&cost0)?;
    let dover = host.alloc(4)?;
    let (grid, block) = (Dim3::x(blocks_for(n, BLOCK)), Dim3::x(BLOCK));
    let mut levels = 0usize;
    loop {
        host.write_i32(dover, &[0])?;
        host.launch(
            m,
            "bfs_expand",
            grid,
            block,
            0,
            &[
                KernelArg::Ptr(drp),
                KernelArg::Ptr(dedges),
                KernelArg::Ptr(dmask),
                KernelArg::Ptr(dupdating),
                KernelArg::Ptr(dvisited),
                KernelArg::Ptr(dcost),
                KernelArg::S32(n as i32),
            ],
        )?;
        host.launch(
            m,
            "bfs_update",
            grid,
            block,
            0,
            &[
                KernelArg::Ptr(dmask),
                KernelArg::Ptr(dupdating),
                KernelArg::Ptr(dvisited),
                KernelArg::Ptr(dover),
                KernelArg::S32(n as i32),
            ],
        )?;
        levels += 1;
        if host.read_i32(dover, 1)?[0] == 0 {
            break;
        }
        if levels > n {
            return Ok(Verification {
                passed: false,
                checked: 0,
                detail: format!(
                    "the `over` flag was still set after {levels} levels (> {n} nodes)"
                ),
            });
        }
    }
    let expected = reference(&row_ptr, &edges);
    let depth = expected.iter().copied().max().unwrap_or(0) as usize;
    let got = host.read_i32(dcost, n)?;
    let mut v = check_exact("cost", &expected, &got);
    if v.passed && levels != depth + 1 {
        v.passed = false;
        v.detail = format!(
            "levels: expected {} launches pairs, got {levels}",
            depth + 1
        );
    } else if v.passed {
        v.detail = format!("{} ({levels} levels)", v.detail);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_levels() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 0; node 4 unreachable (4 -> 0).
        let row_ptr = [0, 2, 3, 4, 5, 6];
        let edges = [1, 2, 3, 3, 0, 0];
        assert_eq!(reference(&row_ptr, &edges), vec![0, 1, 1, 2, -1]);
    }

    /// Replays the two kernels' semantics level-synchronously and checks they agree with the
    /// queue BFS (the device algorithm, not just the reference, is right).
    #[test]
    fn frontier_algorithm_matches_queue_bfs() {
        for seed in 0..5 {
            let (rp, e) = inputs(300, seed);
            let n = 300;
            let (mut mask, mut upd, mut vis) = (vec![false; n], vec![false; n], vec![false; n]);
            let mut cost = vec![-1i32; n];
            mask[0] = true;
            vis[0] = true;
            cost[0] = 0;
            loop {
                for t in 0..n {
                    if mask[t] {
                        mask[t] = false;
                        for &id in &e[rp[t] as usize..rp[t + 1] as usize] {
                            if !vis[id as usize] {
                                cost[id as usize] = cost[t] + 1;
                                upd[id as usize] = true;
                            }
                        }
                    }
                }
                let mut over = false;
                for t in 0..n {
                    if upd[t] {
                        (mask[t], vis[t], over, upd[t]) = (true, true, true, false);
                    }
                }
                if !over {
                    break;
                }
            }
            assert_eq!(cost, reference(&rp, &e));
        }
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(100, 1), inputs(100, 1));
        assert_ne!(inputs(100, 1), inputs(100, 2));
    }
}

#[cfg(test)]
mod depth_report {
    /// `cargo test -p warpforge-workloads bfs_depths -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn bfs_depths() {
        for size in crate::Size::ALL {
            let (rp, e) = super::inputs(super::nodes(size), 1);
            let cost = super::reference(&rp, &e);
            let depth = cost.iter().max().unwrap();
            let unreached = cost.iter().filter(|&&c| c < 0).count();
            println!(
                "bfs {size}: depth {depth}, {unreached} unreachable, {} edges",
                e.len()
            );
        }
    }
}
