//! Unit traces recorded from the GPU model replay through the unit model alone exactly as
//! the GPU's instances ran.
//!
//! Stacks (SPE and DPE): every recorded update is legal (no PC-mismatch, overflow or
//! dead-side error), every warp's stack ends empty, and the trace holds one update per issued
//! warp instruction. Scoreboard (`dpe_scoreboard`, SPE and DPE configurations): the header
//! has the parameters the GPU used, every reserve is released (no pending bit at the end),
//! and under DPE it copies exactly when the stacks raise `ev_sb_copy`.

use std::collections::BTreeSet;
use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::ModuleId;
use warpforge_model::units::trace::{InstanceReplay, Trace};
use warpforge_workloads::Size;

const DPE_ALT: &[&str] = &["sm.reconvergence=dpe", "sm.dpe_path_policy=alt"];
const DPE_CONSTRAINED: &[&str] = &["sm.reconvergence=dpe", "sm.dpe_path_policy=constrained"];

fn config(overrides: &[&str]) -> GpuConfig {
    let sets: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    GpuConfig::preset("gtx480", &sets).unwrap()
}

fn run(workload: &str, cfg: GpuConfig, unit: Option<&str>) -> Gpu {
    let mut gpu = Gpu::new(cfg, Mode::Timing);
    if let Some(unit) = unit {
        gpu.record_unit(unit).unwrap();
    }
    let w = warpforge_workloads::by_name(workload).unwrap();
    let v = w.run(&mut gpu, Size::Tiny, 3).unwrap();
    assert!(v.passed, "{workload}: {}", v.detail);
    gpu
}

/// Run `workload` recording `unit`; returns the GPU and the trace read back from its file.
fn record(workload: &str, unit: &str, overrides: &[&str]) -> (Gpu, Trace) {
    let mut gpu = run(workload, config(overrides), Some(unit));
    let mut rec = gpu.take_trace().expect("recording was on");
    let path = std::env::temp_dir().join(format!(
        "wf-unit-trace-{workload}-{unit}-{}-{}.wftrace",
        overrides.join(",").replace(['=', '.'], "_"),
        std::process::id()
    ));
    rec.write(&path, workload).unwrap();
    let trace = Trace::read(&path).unwrap();
    std::fs::remove_file(&path).ok();
    (gpu, trace)
}

fn cycles(gpu: &Gpu) -> Vec<u64> {
    gpu.launches.iter().map(|l| l.cycles).collect()
}

/// A scoreboard copy: (SM, warp slot, cycle).
type Copy = (String, u64, u64);

/// Replay every instance of a stack trace: checks the error flags and the final depth;
/// returns the number of updates and every `ev_sb_copy` event.
fn replay_stacks(workload: &str, trace: &Trace) -> (u64, BTreeSet<Copy>) {
    let desc = trace.desc;
    let at = |name| desc.port_index(name);
    let upd_valid = at("upd_valid").unwrap();
    let depth = at("depth").unwrap();
    let errors: Vec<usize> = ["err_pc", "err_overflow", "err_side"]
        .into_iter()
        .filter_map(at)
        .collect();
    let sb_copy = at("ev_sb_copy");
    let (mut updates, mut copies) = (0u64, BTreeSet::new());
    for i in 0..trace.header.instances.len() {
        let mut model = (desc.build)(&trace.params);
        let mut ports = desc.zero_ports(&trace.params);
        let mut replay = InstanceReplay::new(trace, i).unwrap();
        let name = &trace.header.instances[i].name;
        let (sm, warp) = name.split_once(".warp").expect("instance sm<i>.warp<w>");
        let warp: u64 = warp.parse().unwrap();
        let mut cycles = 0;
        loop {
            model.outputs(&mut ports);
            if !replay.drive(&mut ports).unwrap() {
                break;
            }
            updates += ports[upd_valid].to_u64();
            model.outputs(&mut ports);
            if let Some(c) = sb_copy {
                if ports[c].to_u64() == 1 {
                    copies.insert((sm.to_string(), warp, replay.cycle().unwrap()));
                }
            }
            model.tick(&ports);
            cycles += 1;
            assert!(
                cycles < 10_000_000,
                "{workload} {name}: replay does not end"
            );
        }
        model.outputs(&mut ports);
        for &e in &errors {
            assert_eq!(
                ports[e].to_u64(),
                0,
                "{workload} {name}: {}",
                desc.ports[e].name
            );
        }
        assert_eq!(
            ports[depth].to_u64(),
            0,
            "{workload} {name}: warp did not finish"
        );
    }
    (updates, copies)
}

fn check_stack_traces(unit: &str, overrides: &[&str]) -> Vec<(&'static str, usize)> {
    let mut copies_per_workload = vec![];
    for workload in ["bfs", "nw", "lud"] {
        let (gpu, trace) = record(workload, unit, overrides);
        assert_eq!(trace.desc.name, unit);
        let (updates, copies) = replay_stacks(workload, &trace);
        let issued: u64 = gpu.launches.iter().map(|l| l.warp_instructions).sum();
        assert_eq!(
            updates, issued,
            "{workload} {overrides:?}: one update per issued instruction"
        );
        // Recording changes nothing.
        assert_eq!(
            cycles(&gpu),
            cycles(&run(workload, config(overrides), None))
        );
        copies_per_workload.push((workload, copies.len()));
    }
    copies_per_workload
}

#[test]
fn spe_stack_traces_replay_through_the_unit_model() {
    check_stack_traces("simt_stack_spe", &[]);
}

#[test]
fn dpe_stack_traces_replay_through_the_unit_model() {
    for overrides in [DPE_ALT, DPE_CONSTRAINED] {
        let copies = check_stack_traces("simt_stack_dpe", overrides);
        assert!(copies.iter().all(|&(_, c)| c > 0), "{copies:?}");
    }
    let err = Gpu::new(config(&[]), Mode::Timing)
        .record_unit("simt_stack_dpe")
        .unwrap_err();
    assert!(err.contains("sm.reconvergence"), "{err}");
}

/// Replay every SM's scoreboard; returns the reserves and releases over all of them, and
/// every copy.
fn replay_scoreboard(workload: &str, trace: &Trace) -> (u64, u64, BTreeSet<Copy>) {
    let desc = trace.desc;
    let at = |name| desc.port_index(name).unwrap();
    let (rsv, rel, cpy, dbg_p, dbg_s) = (
        at("rsv_valid"),
        at("rel_valid"),
        at("cpy_valid"),
        at("dbg_P"),
        at("dbg_S"),
    );
    let queries = ["q_src_valid", "q_dst_valid"].map(at);
    let mut counts = (0, 0, BTreeSet::new());
    for i in 0..trace.header.instances.len() {
        let name = &trace.header.instances[i].name;
        assert!(name.starts_with("sm"), "{name}");
        let mut model = (desc.build)(&trace.params);
        let mut ports = desc.zero_ports(&trace.params);
        let mut replay = InstanceReplay::new(trace, i).unwrap();
        loop {
            model.outputs(&mut ports);
            if !replay.drive(&mut ports).unwrap() {
                break;
            }
            counts.0 += ports[rsv].to_u64().count_ones() as u64;
            counts.1 += ports[rel].to_u64().count_ones() as u64;
            let mut warps = ports[cpy].to_u64();
            while warps != 0 {
                let cycle = replay.cycle().expect("no copy in the reset cycle");
                let w = warps.trailing_zeros() as u64;
                warps &= warps - 1;
                counts.2.insert((name.clone(), w, cycle));
            }
            assert!(queries.iter().all(|&q| ports[q].to_u64() == 0));
            model.outputs(&mut ports);
            model.tick(&ports);
        }
        model.outputs(&mut ports);
        assert!(
            ports[dbg_p].words().iter().all(|&w| w == 0),
            "{workload} {name}: a reserve was never released"
        );
        assert!(
            ports[dbg_s].words().iter().all(|&w| w == 0),
            "{workload} {name}: shadow bits left"
        );
    }
    counts
}

/// The scoreboard `NUM_REGS` for the kernels `gpu` launched: the most register slots any
/// of them has, rounded up to a multiple of 8.
fn num_regs_used(gpu: &Gpu) -> u64 {
    let mut most = 8;
    for l in &gpu.launches {
        let kernel = (0..)
            .map_while(|i| gpu.module(ModuleId(i)))
            .find_map(|m| m.kernel(&l.kernel))
            .expect("launched kernel is loaded");
        most = most.max((kernel.num_regs as u64).div_ceil(8) * 8);
    }
    most
}

#[test]
fn scoreboard_traces_replay_with_every_reserve_released() {
    for overrides in [&[][..], DPE_ALT, DPE_CONSTRAINED] {
        let dual = !overrides.is_empty();
        for workload in ["bfs", "nw", "lud"] {
            let (gpu, trace) = record(workload, "dpe_scoreboard", overrides);
            let what = format!("{workload} {overrides:?}");
            let p = &trace.params;
            let cfg = gpu.config();
            assert_eq!(p.get("NUM_WARPS"), cfg.sm.max_warps as u64, "{what}");
            assert_eq!(p.get("DUAL"), dual as u64, "{what}");
            assert_eq!((p.get("NRSV"), p.get("NWB")), (8, 8), "{what}");
            assert_eq!(p.get("Q"), cfg.sm.schedulers as u64, "{what}");
            assert_eq!(p.get("NUM_REGS"), num_regs_used(&gpu), "{what}");
            // One instance per SM that ran anything (idle instances are left out).
            let n = trace.header.instances.len();
            assert!(n > 0 && n <= cfg.sm.count as usize, "{what}");

            let (reserves, releases, copies) = replay_scoreboard(workload, &trace);
            assert!(reserves > 0, "{what}");
            assert_eq!(reserves, releases, "{what}: every reserve released once");
            assert_eq!(
                cycles(&gpu),
                cycles(&run(workload, config(overrides), None))
            );
            if dual {
                // Exactly the stacks' ev_sb_copy events, warp by warp and cycle by cycle (A5):
                // replay the same run's stacks.
                let (_, stacks) = record(workload, "simt_stack_dpe", overrides);
                let (_, stack_copies) = replay_stacks(workload, &stacks);
                assert!(!copies.is_empty(), "{what}");
                assert_eq!(copies, stack_copies, "{what}");
            } else {
                assert!(copies.is_empty(), "{what}: DUAL=0 has no copies");
            }
        }
    }
}

/// Replay every instance of `trace` through the unit model; returns the sum over replayed
/// cycles of each named port's value (a count of the cycles it was high), counting a port
/// `a&b` only in cycles where port `b` is high (a registered output holds its last value).
fn replay_sums(trace: &Trace, outputs: &[&str]) -> Vec<u64> {
    let desc = trace.desc;
    let port = |n: &str| desc.port_index(n).unwrap_or_else(|| panic!("no port {n}"));
    let idx: Vec<(usize, Option<usize>)> = outputs
        .iter()
        .map(|n| match n.split_once('&') {
            Some((a, b)) => (port(a), Some(port(b))),
            None => (port(n), None),
        })
        .collect();
    let mut sums = vec![0u64; outputs.len()];
    for i in 0..trace.header.instances.len() {
        let mut model = (desc.build)(&trace.params);
        let mut ports = desc.zero_ports(&trace.params);
        let mut replay = InstanceReplay::new(trace, i).unwrap();
        let mut cycles = 0u64;
        loop {
            model.outputs(&mut ports);
            if !replay.drive(&mut ports).unwrap() {
                break;
            }
            model.outputs(&mut ports);
            for (s, &(p, when)) in sums.iter_mut().zip(&idx) {
                if when.is_none_or(|w| ports[w].to_u64() != 0) {
                    *s += ports[p].to_u64();
                }
            }
            model.tick(&ports);
            cycles += 1;
            assert!(cycles < 10_000_000, "replay does not end");
        }
    }
    sums
}

/// The compaction units' traces from a CAPRI run with Balanced permutation replay through
/// their models to exactly what the GPU counted: the WCU's requests and compacted warps,
/// the CAPT's lookups and hits, and one lane permutation per launched warp.
#[test]
fn compaction_unit_traces_replay_to_the_gpus_counts() {
    let cfg = ["sm.compaction=capri", "sm.lane_permutation=balanced"];
    let total = |gpu: &Gpu| {
        let mut c = warpforge_model::stats::CompactionStats::default();
        gpu.launches.iter().for_each(|l| c.add(&l.compaction));
        c
    };
    let (gpu, wcu) = record("bfs", "wcu", &cfg);
    let c = total(&gpu);
    assert!(c.wcu_requests > 0);
    let sums = replay_sums(&wcu, &["req_valid", "done_count&done"]);
    // Every request was taken the cycle it was presented (the SM offers one when idle).
    assert_eq!(sums, vec![c.wcu_requests, c.wcu_warps]);

    let (gpu, capt) = record("bfs", "capri_capt", &cfg);
    let c = total(&gpu);
    assert!(c.capt_lookups > 0);
    assert_eq!(
        replay_sums(&capt, &["rsp_valid", "rsp_hit&rsp_valid"]),
        vec![c.capt_lookups, c.capt_hits]
    );

    let (gpu, slp) = record("bfs", "slp_perm", &cfg);
    let warps: u64 = gpu
        .launches
        .iter()
        .map(|l| {
            (l.grid.iter().product::<u32>() * l.block.iter().product::<u32>()).div_ceil(32) as u64
        })
        .sum();
    assert_eq!(replay_sums(&slp, &["en"]), vec![warps]);
}
