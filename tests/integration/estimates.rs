//! `warpforge report estimates`: the Markdown report and its SVG charts from the
//! checked-in baselines, the sweeps a unit declares, and the seeds' cost figures.

use crate::common;

use common::{text, warpforge};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpforge-estimates-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Runs the report; `None` when Yosys is not installed (the report needs it for sweeps).
fn report(args: &[&str]) -> Option<Value> {
    let o = warpforge(args);
    let t = text(&o);
    if t.contains("not found on PATH") {
        eprintln!("skipped: {t}");
        return None;
    }
    assert!(o.status.success(), "{t}");
    let out = args[args.iter().position(|a| *a == "--out").unwrap() + 1];
    let json = std::fs::read_to_string(Path::new(out).join("report.json")).unwrap();
    Some(serde_json::from_str(&json).unwrap())
}

fn svg(dir: &Path, name: &str) -> String {
    let s = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        s.starts_with("<svg") && s.trim_end().ends_with("</svg>"),
        "{name}"
    );
    s
}

/// Standard sets come from the baseline where the RTL still hashes as recorded, a set whose
/// recorded hash differs is reported stale (and measured again with --measure, giving the
/// baseline's figures back since only the hash was changed); the sweep's figures grow
/// with the parameter and are charted.
#[test]
fn sets_come_from_the_baseline_and_stale_ones_are_named() {
    let dir = scratch("slp");
    let baselines = dir.join("baselines");
    std::fs::create_dir_all(&baselines).unwrap();
    let mut generic: Value = serde_json::from_str(
        &std::fs::read_to_string(repo("baselines/synth-generic.json")).unwrap(),
    )
    .unwrap();
    // Pretend the RTL of slp_perm S=8 changed since its baseline was measured.
    let recorded = generic["entries"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["unit"] == "slp_perm" && e["params"] == "S=8,WIDW=4")
        .expect("the baseline has slp_perm S=8");
    let figures = recorded["figures"].clone();
    recorded["rtl_hash"] = Value::String("sha256:0000".into());
    std::fs::write(
        baselines.join("synth-generic.json"),
        serde_json::to_string_pretty(&generic).unwrap(),
    )
    .unwrap();
    let out = dir.join("report");
    let common = [
        "report",
        "estimates",
        "--unit",
        "slp_perm",
        "--no-power",
        "--baselines",
        baselines.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let Some(r) = report(&common) else { return };
    let sets = r["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 3, "slp_perm's three standard sets");
    let set = |p: &str| sets.iter().find(|s| s["params"] == p).unwrap();
    assert_eq!(
        set("S=32,WIDW=5")["targets"]["generic"]["source"],
        "baseline"
    );
    assert_eq!(set("S=32,WIDW=5")["default"], true);
    assert_eq!(set("S=8,WIDW=4")["targets"]["generic"]["source"], "stale");
    assert_eq!(set("S=8,WIDW=4")["targets"]["osu018"]["source"], "missing");
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(
        md.contains("- slp_perm (S=8,WIDW=4) for generic: stale"),
        "{md}"
    );
    assert!(md.contains("osu018: no baseline file"), "{md}");
    // The summary row carries the baseline's figures of the default set.
    let t = set("S=32,WIDW=5")["targets"]["generic"]["figures"]["transistors"]
        .as_u64()
        .unwrap();
    let grouped = t
        .to_string()
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    assert!(
        md.contains(&format!("| `slp_perm` | S=32,WIDW=5 | 0 | {grouped} |")),
        "{md}"
    );

    // The S sweep: 4..64 lanes, growing about linearly (a log2(S)-stage network of S
    // lanes would be S log S; the permutations are per-lane selects).
    let sweeps = r["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 1);
    let pts = sweeps[0]["points"].as_array().unwrap();
    assert_eq!(pts.len(), 5);
    let tr: Vec<u64> = pts
        .iter()
        .map(|p| p[1]["transistors"].as_u64().unwrap())
        .collect();
    assert!(tr.windows(2).all(|w| w[1] > w[0]), "{tr:?}");
    let e = sweeps[0]["transistor_exponent"].as_f64().unwrap();
    assert!((0.8..1.5).contains(&e), "exponent {e}");
    let chart = svg(&out, "scaling-slp_perm-s.svg");
    for label in ["4", "64", "transistors (est.)", "S (log scale)"] {
        assert!(chart.contains(label), "{label} not in the chart");
    }
    assert!(svg(&out, "area.svg").contains("slp_perm"));

    // --measure measures the stale set again: the baseline's own figures come back.
    let mut args = common.to_vec();
    args.push("--measure");
    args.push("--no-sweeps");
    let Some(r) = report(&args) else { return };
    let s8 = r["sets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["params"] == "S=8,WIDW=4")
        .unwrap()
        .clone();
    assert_eq!(s8["targets"]["generic"]["source"], "measured now");
    for k in ["flops", "cells", "transistors"] {
        assert_eq!(s8["targets"]["generic"]["figures"][k], figures[k], "{k}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CAPT against the seed's Table 4.3: ours within 1-3x of the seed's gate count at every
/// entry count, both linear in the entries, and charted side by side.
#[test]
fn capt_gate_counts_compare_with_the_seed() {
    let dir = scratch("capt");
    let out = dir.join("report");
    let Some(r) = report(&[
        "report",
        "estimates",
        "--unit",
        "capri_capt",
        "--no-power",
        "--no-sweeps",
        "--baselines",
        repo("baselines").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]) else {
        return;
    };
    let rows = r["seed_comparison"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "Table 4.3's five entry counts");
    let mut last = 0.0;
    for row in rows {
        let ours = row["ours"].as_f64().unwrap();
        let ratio = row["ratio"].as_f64().unwrap();
        assert!((1.0..3.0).contains(&ratio), "{row}");
        assert!(ours > last, "grows with the entries: {row}");
        last = ours;
        assert!(row["seed_basis"].as_str().unwrap().contains("L1567"));
    }
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(
        md.contains("| `capri_capt` | CAPT, 32 entries | NAND2-eq (est.) |"),
        "{md}"
    );
    assert!(
        md.contains("4 Kbit"),
        "the pending units' seed figures are named"
    );
    let chart = svg(&out, "seed-capri_capt.svg");
    assert!(chart.contains("CAPT, 2 entries") && chart.contains("seed"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_unit_is_an_input_error() {
    let dir = scratch("bad");
    let o = warpforge(&[
        "report",
        "estimates",
        "--unit",
        "no_such_unit",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("unknown unit `no_such_unit`"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
