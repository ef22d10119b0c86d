//! Thread-block compaction in the GPU model (spec tbc-capri-slp.md §1-§3): every workload
//! verifies under every compaction mode and lane permutation (compaction changes order and
//! timing, never results), each thread executes exactly the instructions it executes
//! without compaction, and the statistics say what each mode does.

use crate::common;

use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::stats::KernelStats;
use warpforge_workloads::{all, Size};

/// Every launch's statistics of workload `name` at tiny size under `cfg`, verified.
fn run(name: &str, cfg: &GpuConfig) -> Vec<KernelStats> {
    let w = warpforge_workloads::by_name(name).unwrap();
    let mut gpu = Gpu::new(cfg.clone(), Mode::Timing);
    let v = w
        .run(&mut gpu, Size::Tiny, 3)
        .unwrap_or_else(|e| panic!("{name} under {:?}: {e}", cfg.sm.compaction));
    assert!(v.passed, "{name} failed verification: {}", v.detail);
    gpu.launches
}

fn preset(name: &str, sets: &[(&str, &str)]) -> GpuConfig {
    let sets: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
    GpuConfig::preset(name, &sets).unwrap()
}

const PERMUTATIONS: [&str; 8] = [
    "none",
    "balanced",
    "odd_even",
    "xor_odd_half",
    "rev_wid",
    "flip_odd",
    "rotate_odd_1",
    "wid",
];

#[test]
fn every_workload_verifies_under_every_compaction_mode() {
    // Every mode with every lane permutation, alternating the presets; then the CAPT's
    // histories and sizes, a slow WCU, and a two-level scheduler with a small active set
    // (slots waiting on their CTA must leave it, or the warps the CTA waits for are never
    // promoted).
    let mut configs = Vec::new();
    for (m, mode) in ["tbc", "tbc+", "capri"].iter().enumerate() {
        for (p, perm) in PERMUTATIONS.iter().enumerate() {
            let preset_name = if (m + p) % 2 == 0 { "gtx480" } else { "fx5800" };
            configs.push(preset(
                preset_name,
                &[("sm.compaction", mode), ("sm.lane_permutation", perm)],
            ));
        }
    }
    configs.push(preset(
        "fx5800",
        &[
            ("sm.compaction", "capri"),
            ("sm.capri_history", "1bs"),
            ("sm.wcu_latency", "3"),
        ],
    ));
    configs.push(preset(
        "gtx480",
        &[
            ("sm.compaction", "capri"),
            ("sm.capri_history", "2bit"),
            ("sm.capt_entries", "2"),
            ("sm.lane_permutation", "balanced"),
        ],
    ));
    configs.push(preset(
        "gtx480",
        &[
            ("sm.compaction", "tbc"),
            ("sm.scheduler", "two_level"),
            ("sm.two_level_active", "2"),
        ],
    ));
    for w in all() {
        let name = w.name();
        let base = run(name, &preset("gtx480", &[]));
        for cfg in &configs {
            let runs = run(name, cfg);
            assert_eq!(runs.len(), base.len(), "{name}");
            for (a, b) in base.iter().zip(&runs) {
                // Every thread executes the same instructions; only their grouping changes.
                assert_eq!(
                    a.thread_instructions, b.thread_instructions,
                    "{name} {} under {:?} / {:?}",
                    a.kernel, cfg.sm.compaction, cfg.sm.lane_permutation
                );
                assert_eq!(a.compaction.decisions(), 0, "no compaction, no decisions");
            }
        }
    }
}

/// TBC stalls every warp at every branch; CAPRI bypasses the warps that did not diverge
/// without asking the CAPT, and its 1b-Sticky history stalls exactly the divergent ones.
#[test]
fn decisions_follow_the_mode() {
    let total = |runs: &[KernelStats]| {
        let mut c = warpforge_model::stats::CompactionStats::default();
        runs.iter().for_each(|k| c.add(&k.compaction));
        c
    };
    let tbc = total(&run("bfs", &preset("gtx480", &[("sm.compaction", "tbc")])));
    assert!(tbc.stall_adequate + tbc.stall_inadequate > 0);
    assert_eq!(tbc.bypass_adequate + tbc.bypass_inadequate, 0);
    assert_eq!(tbc.capt_lookups, 0, "TBC has no CAPT");
    assert!(tbc.wcu_requests > 0 && tbc.wcu_warps > 0);

    let capri = total(&run(
        "bfs",
        &preset("gtx480", &[("sm.compaction", "capri")]),
    ));
    assert!(capri.capt_lookups > 0, "bfs diverges");
    assert!(
        capri.capt_lookups < capri.decisions(),
        "non-divergent warps bypass without a lookup"
    );
    assert!(capri.bypass_adequate + capri.bypass_inadequate > 0);

    let sticky = total(&run(
        "bfs",
        &preset(
            "gtx480",
            &[("sm.compaction", "capri"), ("sm.capri_history", "1bs")],
        ),
    ));
    // 1bS is "stall if and only if the warp diverged" (spec §2.6): every lookup stalls.
    assert_eq!(
        sticky.stall_adequate + sticky.stall_inadequate,
        sticky.capt_lookups
    );

    // A kernel with no divergent branch asks the CAPT nothing.
    let vecadd = total(&run(
        "vecadd",
        &preset("gtx480", &[("sm.compaction", "capri")]),
    ));
    assert_eq!(vecadd.capt_lookups, 0);
}

/// Compaction regroups the threads of divergent paths into fuller warps: on BFS's
/// data-dependent branches it raises SIMD utilisation over no compaction (seed: up to 2x,
/// L1521), and the paths it counts are data-dependent (D) ones.
#[test]
fn compaction_raises_simd_utilisation_on_divergent_code() {
    let util = |runs: &[KernelStats]| {
        let (t, w): (u64, u64) = runs.iter().fold((0, 0), |(t, w), k| {
            (t + k.thread_instructions, w + k.warp_instructions)
        });
        t as f64 / (w * 32) as f64
    };
    let none = run("bfs", &preset("gtx480", &[]));
    let tbc = run("bfs", &preset("gtx480", &[("sm.compaction", "tbc")]));
    assert!(
        util(&tbc) > util(&none) * 1.05,
        "TBC {:.3} vs none {:.3}",
        util(&tbc),
        util(&none)
    );
    let d: u64 = tbc.iter().map(|k| k.compaction.paths[1].paths).sum();
    let p: u64 = tbc.iter().map(|k| k.compaction.paths[0].paths).sum();
    assert!(
        d > 0 && p == 0,
        "bfs's divergent branches test loaded data: P {p}, D {d}"
    );
}

#[test]
fn invalid_combinations_are_named() {
    let err = |sets: &[(&str, &str)]| {
        let sets: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        GpuConfig::preset("gtx480", &sets).unwrap_err().to_string()
    };
    let e = err(&[("sm.compaction", "tbc"), ("sm.reconvergence", "dpe")]);
    assert!(e.contains("sm.compaction"), "{e}");
    let e = err(&[("sm.lane_permutation", "balanced")]);
    assert!(e.contains("sm.lane_permutation"), "{e}");
    let e = err(&[("sm.compaction", "capri"), ("sm.capt_entries", "65")]);
    assert!(e.contains("sm.capt_entries"), "{e}");
    let e = err(&[("sm.compaction", "tbc++")]);
    assert!(e.contains("sm.compaction"), "{e}");
}

/// `warpforge compaction` runs the study and prints every figure next to the seed's, with
/// numbers (not dashes) for what the workloads exercise; `--json` holds every run.
#[test]
fn the_study_command_prints_the_seed_comparison() {
    let dir = std::env::temp_dir().join(format!("wf-compaction-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("study.json");
    let out = common::warpforge(&[
        "compaction",
        "--config",
        "gtx480",
        "--size",
        "tiny",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    for row in [
        "CAPRI-1bL accuracy, divergent / non-divergent",
        "CAPRI-1bL vs no compaction, divergent",
        "compaction rate, P-branches: TBC / Balanced / ideal",
        "CAPT 2 / 4 / 32 entries",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no row {row}:\n{text}"));
        assert!(line.contains('%'), "{line}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let variants = v[0]["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 16);
    // Every variant ran every workload: the same thread instructions each time.
    let threads = |i: usize| -> Vec<u64> {
        variants[i][1]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["thread_instructions"].as_u64().unwrap())
            .collect()
    };
    for (i, v) in variants.iter().enumerate().skip(1) {
        assert_eq!(threads(i), threads(0), "{}", v[0]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The seed's worked example (Fig 4.1/4.2, spec §1.4) on 32-lane warps, `fig42.ptx`:
/// threads 35 (warp 1, lane 3) and 66 (warp 2, lane 2) take path B, the rest path C.
/// TBC compacts B's two threads into one warp (NW_NoTBC 2 -> NW_TBC 1) and C gains nothing
/// (3 -> 3); every compaction of the run is counted: B (1 warp), C (3), the reconverged
/// CTA (3). Under CAPRI warp 0 did not diverge and bypasses with no CAPT access, warp 1
/// misses and allocates, warp 2 hits the new entry; C is then compacted without warp 0's
/// threads (2 warps, as Fig 4.8(d)).
#[test]
fn the_seeds_worked_example() {
    let dir = std::env::temp_dir().join(format!("wf-fig42-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for f in ["fig42.ptx", "fig42.toml"] {
        std::fs::copy(fixtures.join(f), dir.join(f)).unwrap();
    }
    let run = |mode: &str| -> serde_json::Value {
        let json = dir.join(format!("{mode}.json"));
        let set = format!("sm.compaction={mode}");
        let out = common::warpforge(&[
            "run",
            "--ptx",
            dir.join("fig42.ptx").to_str().unwrap(),
            "--launch",
            dir.join("fig42.toml").to_str().unwrap(),
            "--set",
            &set,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", common::text(&out));
        let out = std::fs::read(dir.join("fig42.out.bin")).unwrap();
        let paths: Vec<u32> = out
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        for (t, &p) in paths.iter().enumerate() {
            assert_eq!(p, if t == 35 || t == 66 { 1 } else { 2 }, "thread {t}");
        }
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        v["results"][0]["launches"][0]["compaction"].clone()
    };
    let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap();

    let tbc = run("tbc");
    let p = &tbc["paths"][0];
    assert_eq!(
        [
            n(p, "paths"),
            n(p, "compactable"),
            n(p, "nw_notbc"),
            n(p, "nw_tbc"),
            n(p, "nw_ideal")
        ],
        [2, 1, 2 + 3, 1 + 3, 1 + 3]
    );
    assert_eq!(
        (n(&tbc, "wcu_requests"), n(&tbc, "wcu_warps")),
        (3, 1 + 3 + 3)
    );
    assert_eq!(
        n(&tbc, "stall_adequate"),
        3,
        "all three warps stall at the branch"
    );

    let capri = run("capri");
    assert_eq!((n(&capri, "capt_lookups"), n(&capri, "capt_hits")), (2, 1));
    assert_eq!(n(&capri, "bypass_adequate"), 1, "warp 0 bypasses");
    assert_eq!(n(&capri, "stall_adequate"), 2);
    assert_eq!(n(&capri, "wcu_warps"), 1 + 2 + 3);
    std::fs::remove_dir_all(&dir).ok();
}
