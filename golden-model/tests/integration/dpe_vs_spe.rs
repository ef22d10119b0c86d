//! Cross-model property test of the reconvergence stacks (spec §9.4, §10 "Cross-model
//! properties"): on random structured programs (nested if/else, if-only, loops with
//! per-thread trip counts, guarded exits, jumps straight to the join), with warps of 8, 32
//! and 64 threads, full and partial, and a DPE scheduler that picks a random live side and
//! stalls at random:
//! - SPE and DPE issue the same multiset of (pc, mask) warp instructions [L491, L716];
//! - every thread runs exactly the path it runs alone, under both stacks;
//! - both stacks stay within §2.7's depth bounds (SPE `2n+1`, DPE `n+1` for `n` nested
//!   branch levels, [`Program::branch_depth`]), and DPE's maximum depth is at most SPE's when DPE runs the
//!   fall-through side first, as SPE does (see `interleaving_can_cost_one_entry_more_than_spe`
//!   for why §9.4's "DPE depth ≤ SPE depth" needs that condition);
//! - the §9.4 invariants hold on the DPE stack after every cycle: no valid slot at its
//!   entry's RPC, L ∩ R = ∅, each entry's threads within the path that diverged into it;
//! - no error flag is ever raised and every launched thread exits.
//!
//! Fixed seeds, so a failure is reproducible; the message names the seed and program.

use warpforge_model::units::random_program::{GenParams, Program, SplitMix64, WarpDriver};
use warpforge_model::units::simt_stack::{SimtStackSpe, SpeInputs, SpeParams, UpdKind};
use warpforge_model::units::simt_stack_dpe::{
    DpeInputs, DpeParams, DpeSlot, SimtStackDpe, SIDE_L, SIDE_R,
};

/// Far more than any generated program needs; reaching it means a hang.
const MAX_CYCLES: usize = 2_000_000;
/// Room enough that depth is measured, never clipped (§2.7 bounds are at most 19).
const STACK_DEPTH: u32 = 64;

/// What one run of a warp issued.
#[derive(Debug, Default)]
struct Run {
    issued: Vec<(u32, u64)>,
    max_depth: u32,
}

/// How often each DPE rule fired over all runs (the test must exercise every one).
#[derive(Debug, Default)]
struct Coverage {
    push_new_rpc: u64,
    arrive_and_push: u64,
    inplace: u64,
    slot_inval: u64,
    pop: u64,
    auto_pop: u64,
    dual_issue: u64,
    stalls: u64,
    exits: u64,
    /// Random-side runs deeper than SPE (allowed; see the module doc).
    deeper_than_spe: u64,
    /// Deepest construct nesting of a program; deepest SPE and DPE stacks.
    deepest_nesting: u32,
    deepest_spe: u32,
    deepest_dpe: u32,
}

/// How the DPE test scheduler picks a side when both are live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SidePolicy {
    /// L (fall-through) whenever it is live: SPE's order.
    FallThroughFirst,
    /// A random live side.
    Random,
}

fn run_spe(prog: &Program, seed: u64, warp_size: u32, launch: u64) -> Result<Run, String> {
    let mut s = SimtStackSpe::new(SpeParams {
        warp_size,
        depth: STACK_DEPTH,
        pc_w: 32,
        ..Default::default()
    });
    s.launch(0, launch);
    let mut threads = WarpDriver::new(prog, seed, warp_size);
    let mut run = Run {
        max_depth: 1,
        ..Default::default()
    };
    for _ in 0..MAX_CYCLES {
        if s.is_empty() {
            break;
        }
        if !s.tos_valid() {
            s.tick(&SpeInputs::default());
            continue;
        }
        let (pc, mask) = (s.tos_pc(), s.tos_mask());
        if mask & threads.exited() != 0 {
            return Err(format!("SPE issued exited threads at pc {pc}"));
        }
        run.issued.push((pc, mask));
        s.tick(&threads.issue(pc, mask).spe_inputs());
        if s.err_pc() || s.err_overflow() {
            return Err(format!("SPE error at pc {pc}: {:?}", s.entries()));
        }
        run.max_depth = run.max_depth.max(s.depth());
    }
    if !s.is_empty() || threads.exited() != launch {
        return Err("SPE warp did not finish".into());
    }
    Ok(run)
}

/// Drives DPE with a scheduler that picks a side by `policy` and stalls with probability
/// `stall_eighths/8` (a stall is a cycle without an update).
#[allow(clippy::too_many_arguments)]
fn run_dpe(
    prog: &Program,
    seed: u64,
    warp_size: u32,
    launch: u64,
    sched: &mut SplitMix64,
    policy: SidePolicy,
    stall_eighths: u64,
    cov: &mut Coverage,
) -> Result<Run, String> {
    let mut s = SimtStackDpe::new(DpeParams {
        warp_size,
        depth: STACK_DEPTH,
        pc_w: 32,
        ..Default::default()
    });
    s.launch(0, launch);
    let mut threads = WarpDriver::new(prog, seed, warp_size);
    let mut run = Run {
        max_depth: 1,
        ..Default::default()
    };
    for _ in 0..MAX_CYCLES {
        if s.is_empty() {
            break;
        }
        let live = (s.l_valid(), s.r_valid());
        if live == (false, false) || sched.chance(stall_eighths, 8) {
            let before = s.clone();
            let ev = s.tick(&DpeInputs::default());
            if live == (false, false) {
                cov.auto_pop += ev.ev_pop as u64;
                if !ev.ev_pop || s.depth() + 1 != before.depth() {
                    return Err("a TOS without live paths did not pop".into());
                }
            } else {
                cov.stalls += 1;
                if s != before || ev != Default::default() {
                    return Err("an idle cycle changed the stack".into());
                }
            }
            continue;
        }
        let side = match live {
            (true, true) => {
                cov.dual_issue += 1;
                match policy {
                    SidePolicy::FallThroughFirst => SIDE_L,
                    SidePolicy::Random => sched.below(2) as u8,
                }
            }
            (true, false) => SIDE_L,
            _ => SIDE_R,
        };
        let (pc, mask) = (s.path_pc(side), s.path_mask(side));
        if mask & threads.exited() != 0 {
            return Err(format!("DPE issued exited threads at pc {pc}"));
        }
        run.issued.push((pc, mask));
        let upd = threads.issue(pc, mask);
        let ev = s.tick(&upd.dpe_inputs(side));
        if s.err_pc() || s.err_side() || s.err_overflow() {
            return Err(format!(
                "DPE error at pc {pc} side {side}: {:?}",
                s.entries()
            ));
        }
        if ev.ev_sb_copy != (ev.ev_push | ev.ev_pop | ev.ev_inplace) {
            return Err(format!("ev_sb_copy inconsistent: {ev:?}"));
        }
        cov.push_new_rpc += (ev.ev_push && !ev.ev_slot_inval) as u64;
        cov.arrive_and_push += (ev.ev_push && ev.ev_slot_inval) as u64;
        cov.inplace += ev.ev_inplace as u64;
        cov.slot_inval += (ev.ev_slot_inval && !ev.ev_push) as u64;
        cov.pop += ev.ev_pop as u64;
        if upd.kind == UpdKind::Exit {
            cov.exits += upd.taken.count_ones() as u64;
        }
        check_dpe_stack(&s, launch).map_err(|e| format!("after pc {pc} side {side}: {e}"))?;
        run.max_depth = run.max_depth.max(s.depth());
    }
    if !s.is_empty() || threads.exited() != launch {
        return Err("DPE warp did not finish".into());
    }
    Ok(run)
}

/// §9.4 properties of the stored DPE stack (masks as stored, exited threads included).
fn check_dpe_stack(s: &SimtStackDpe, launch: u64) -> Result<(), String> {
    let e = s.entries();
    // The threads entry i may hold: those of the path that diverged into it.
    let mut container = launch;
    for (i, en) in e.iter().enumerate() {
        let mut union = 0;
        for sl in &en.slots {
            if !sl.valid {
                if *sl != DpeSlot::INVALID {
                    return Err(format!("entry {i}: invalid slot not zero (A3): {e:?}"));
                }
                continue;
            }
            if sl.pc == en.rpc {
                return Err(format!("entry {i}: valid slot at its rpc: {e:?}"));
            }
            if sl.mask & union != 0 {
                return Err(format!("entry {i}: L and R share threads: {e:?}"));
            }
            union |= sl.mask;
        }
        if union & !container != 0 {
            return Err(format!("entry {i}: threads outside its parent path: {e:?}"));
        }
        if let Some(next) = e.get(i + 1) {
            // The next entry's threads wait in the slot parked at its RPC, or, after an
            // arrive-and-push (same RPC), in this entry's parent, outside its live slots.
            let parked = en
                .slots
                .iter()
                .filter(|sl| sl.valid && sl.pc == next.rpc)
                .fold(0, |m, sl| m | sl.mask);
            container = if parked != 0 {
                parked
            } else if next.rpc == en.rpc {
                container & !union
            } else {
                return Err(format!("entry {}: no parent path: {e:?}", i + 1));
            };
        }
    }
    Ok(())
}

/// Each thread's PCs in issue order.
fn thread_paths(issued: &[(u32, u64)], lanes: u32) -> Vec<Vec<u32>> {
    let mut paths = vec![vec![]; lanes as usize];
    for &(pc, mask) in issued {
        for (t, path) in paths.iter_mut().enumerate() {
            if mask >> t & 1 == 1 {
                path.push(pc);
            }
        }
    }
    paths
}

fn check_program(
    prog: &Program,
    seed: u64,
    warp_size: u32,
    launch: u64,
    sched: &mut SplitMix64,
    cov: &mut Coverage,
) -> Result<(), String> {
    let spe = run_spe(prog, seed, warp_size, launch)?;
    let n = prog.branch_depth();
    cov.deepest_nesting = cov.deepest_nesting.max(prog.nesting());
    cov.deepest_spe = cov.deepest_spe.max(spe.max_depth);
    if spe.max_depth > 2 * n + 1 {
        return Err(format!("SPE depth {} > 2n+1, n = {n}", spe.max_depth));
    }
    let mut spe_sorted = spe.issued.clone();
    spe_sorted.sort_unstable();
    let spe_paths = thread_paths(&spe.issued, warp_size);
    for t in 0..warp_size {
        let alone = if launch >> t & 1 == 1 {
            prog.thread_path(seed, t, MAX_CYCLES)
        } else {
            vec![]
        };
        if spe_paths[t as usize] != alone {
            return Err(format!("SPE: thread {t} left its own path"));
        }
    }
    let runs = [
        (SidePolicy::FallThroughFirst, 3),
        (SidePolicy::Random, 0),
        (SidePolicy::Random, 3),
    ];
    for (policy, stall_eighths) in runs {
        let dpe = run_dpe(
            prog,
            seed,
            warp_size,
            launch,
            sched,
            policy,
            stall_eighths,
            cov,
        )?;
        let mut dpe_sorted = dpe.issued.clone();
        dpe_sorted.sort_unstable();
        if dpe_sorted != spe_sorted {
            return Err(format!(
                "issued multisets differ ({} vs {} instructions)",
                dpe.issued.len(),
                spe.issued.len()
            ));
        }
        if thread_paths(&dpe.issued, warp_size) != spe_paths {
            return Err("DPE: a thread's path differs from SPE".into());
        }
        let deeper = dpe.max_depth > spe.max_depth;
        if dpe.max_depth > n + 1 || (deeper && policy == SidePolicy::FallThroughFirst) {
            return Err(format!(
                "DPE depth {} vs SPE {} (n = {n}, {policy:?})",
                dpe.max_depth, spe.max_depth
            ));
        }
        cov.deeper_than_spe += deeper as u64;
        cov.deepest_dpe = cov.deepest_dpe.max(dpe.max_depth);
    }
    Ok(())
}

fn check_warp_size(warp_size: u32, programs: u32, seed: u64) -> Coverage {
    let mut rng = SplitMix64::new(seed);
    let mut sched = SplitMix64::new(seed ^ 0x5c4e_d01e);
    let mut cov = Coverage::default();
    let full = if warp_size == 64 {
        u64::MAX
    } else {
        (1u64 << warp_size) - 1
    };
    for i in 0..programs {
        let params = GenParams {
            max_nesting: 1 + i % 8,
            max_block: 3,
            budget: 12 + 6 * (i % 8),
            max_trips: 3,
            exits: i % 5 != 0,
        };
        let prog = Program::random(&mut rng, &params);
        let thread_seed = rng.next_u64();
        let launch = if i % 4 == 3 {
            rng.next_u64() & full | 1
        } else {
            full
        };
        check_program(&prog, thread_seed, warp_size, launch, &mut sched, &mut cov).unwrap_or_else(
            |e| {
                panic!(
                    "warp size {warp_size}, program {i} (gen seed {seed}), thread seed \
                     {thread_seed:#x}, launch {launch:#x}: {e}\nprogram: {:?}\nops: {:?}",
                    prog.stmts, prog.ops
                )
            },
        );
    }
    cov
}

/// Every rule of §9.4 fired somewhere: the properties were checked on the cases that matter.
fn assert_covered(cov: &Coverage) {
    let counts = [
        ("push with a new RPC", cov.push_new_rpc),
        ("arrive-and-push", cov.arrive_and_push),
        ("in place", cov.inplace),
        ("slot invalidation", cov.slot_inval),
        ("pop", cov.pop),
        ("auto-pop", cov.auto_pop),
        ("two live paths", cov.dual_issue),
        ("stall", cov.stalls),
        ("exit", cov.exits),
    ];
    for (what, n) in counts {
        assert!(n > 0, "no {what} in {cov:?}");
    }
    assert_eq!(cov.deepest_nesting, 8, "nesting 8 drawn: {cov:?}");
}

#[test]
fn dpe_matches_spe_warp_8() {
    let cov = check_warp_size(8, 3000, 0x8);
    println!("{cov:?}");
    assert_covered(&cov);
}

#[test]
fn dpe_matches_spe_warp_32() {
    let cov = check_warp_size(32, 1500, 0x20);
    println!("{cov:?}");
    assert_covered(&cov);
}

#[test]
fn dpe_matches_spe_warp_64() {
    let cov = check_warp_size(64, 1000, 0x40);
    println!("{cov:?}");
    assert_covered(&cov);
}

/// The invariant checker itself must be able to fail.
#[test]
fn stack_checker_rejects_broken_stacks() {
    let mut s = SimtStackDpe::new(DpeParams {
        warp_size: 4,
        depth: 4,
        pc_w: 32,
        ..Default::default()
    });
    s.launch(0, 0b1111);
    s.tick(&DpeInputs {
        upd_valid: true,
        upd_kind: 1,
        upd_taken: 0b1100,
        upd_target: 10,
        upd_next: 1,
        upd_rpc: 20,
        ..Default::default()
    });
    assert!(check_dpe_stack(&s, 0b1111).is_ok());
    assert!(
        check_dpe_stack(&s, 0b0111).is_err(),
        "threads outside the launch"
    );
}

/// §9.4 lists "DPE depth ≤ SPE depth", which holds when DPE runs the sides in SPE's order
/// but not under every interleaving: with A4's arrive-and-push, a path that diverges at its
/// entry's RPC while its sibling is still live needs a new entry, where SPE, having already
/// finished the sibling, reuses its TOS. Program (else = lanes 1-3):
///
/// ```text
/// 0: @p bra 3 (rpc 7)   if/else                 4: @q bra 6 (rpc 6)   if-only
/// 1: then               2: jmp 7                5: body
/// 3: loop init                                  6: @r bra 4 (rpc 7)   back edge, exit = join
/// 7: exit
/// ```
///
/// Run the else side first: the back edge diverges (lane 1 leaves) at IPDOM 7 == TOS RPC
/// with the then side live: arrive-and-push (depth 3); the if-only inside the loop then
/// pushes again (depth 4). SPE peaks at 3. The DPE bound `n+1` (§2.7) still holds.
#[test]
fn interleaving_can_cost_one_entry_more_than_spe() {
    let prog = |pc: u32| match pc {
        0 => (UpdKind::Branch, 3, 7),
        2 => (UpdKind::Jump, 7, 0),
        4 => (UpdKind::Branch, 6, 6),
        6 => (UpdKind::Branch, 4, 7),
        7 => (UpdKind::Exit, 0, 0),
        _ => (UpdKind::Seq, 0, 0),
    };
    // Per-lane outcome of the `visit`-th run of `pc` (lanes 2 and 3 loop twice; lane 3
    // skips the if-only body in the second iteration).
    let taken = |pc: u32, lane: u32, visit: u32| match pc {
        0 => lane >= 1,
        4 => lane == 3 && visit == 1,
        6 => lane >= 2 && visit == 0,
        7 => true,
        _ => false,
    };
    let update = |visits: &mut [[u32; 8]; 4], pc: u32, mask: u64| {
        let (kind, target, rpc) = prog(pc);
        let mut t = 0u64;
        for lane in 0..4 {
            if mask >> lane & 1 == 1 {
                let v = &mut visits[lane as usize][pc as usize];
                t |= (taken(pc, lane, *v) as u64) << lane;
                *v += 1;
            }
        }
        (kind, t, target, rpc)
    };
    let mut spe = SimtStackSpe::new(SpeParams {
        warp_size: 4,
        depth: 8,
        pc_w: 32,
        ..Default::default()
    });
    spe.launch(0, 0b1111);
    let mut visits = [[0u32; 8]; 4];
    let (mut spe_issued, mut spe_depth) = (vec![], 1);
    while !spe.is_empty() {
        let (pc, mask) = (spe.tos_pc(), spe.tos_mask());
        spe_issued.push((pc, mask));
        let (kind, t, target, rpc) = update(&mut visits, pc, mask);
        spe.tick(&SpeInputs {
            upd_valid: true,
            upd_pc: pc,
            upd_kind: kind as u8,
            upd_taken: t,
            upd_target: target,
            upd_next: pc + 1,
            upd_rpc: rpc,
            ..Default::default()
        });
        spe_depth = spe_depth.max(spe.depth());
    }
    visits = [[0u32; 8]; 4];
    let mut dpe = SimtStackDpe::new(DpeParams {
        warp_size: 4,
        depth: 8,
        pc_w: 32,
        ..Default::default()
    });
    dpe.launch(0, 0b1111);
    let (mut dpe_issued, mut dpe_depth) = (vec![], 1);
    while !dpe.is_empty() {
        // The taken (R) side first whenever it is live.
        let side = if dpe.r_valid() { SIDE_R } else { SIDE_L };
        let (pc, mask) = (dpe.path_pc(side), dpe.path_mask(side));
        dpe_issued.push((pc, mask));
        let (kind, t, target, rpc) = update(&mut visits, pc, mask);
        dpe.tick(&DpeInputs {
            upd_valid: true,
            upd_side: side,
            upd_pc: pc,
            upd_kind: kind as u8,
            upd_taken: t,
            upd_target: target,
            upd_next: pc + 1,
            upd_rpc: rpc,
            ..Default::default()
        });
        assert!(!dpe.err_pc() && !dpe.err_side());
        check_dpe_stack(&dpe, 0b1111).unwrap();
        dpe_depth = dpe_depth.max(dpe.depth());
    }
    spe_issued.sort_unstable();
    dpe_issued.sort_unstable();
    assert_eq!(spe_issued, dpe_issued);
    assert_eq!((spe_depth, dpe_depth), (3, 4));
}
