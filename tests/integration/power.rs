//! `warpforge power`: activity from the co-simulated RTL, dynamic and leakage power of the
//! osu018 netlist, with the model and its ±2x accuracy printed beside the figures.

use crate::common;

use common::{text, warpforge};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpforge-power-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A small WCU (24 flip-flops, ~250 cells): synthesis and co-simulation take about a second.
const WCU_SMALL: [&str; 5] = ["power", "--unit", "wcu", "--param", "S=4"];

fn run(out: &Path, extra: &[&str]) -> Option<serde_json::Value> {
    let mut args: Vec<&str> = WCU_SMALL.to_vec();
    args.extend(["--param", "NW=3", "--cycles", "3000", "--json", "--out"]);
    args.push(out.to_str().unwrap());
    args.extend(extra);
    let o = warpforge(&args);
    let t = text(&o);
    if t.contains("not found on PATH") || t.contains("does not exist: power needs") {
        eprintln!("skipped: {t}");
        return None;
    }
    assert!(o.status.success(), "{t}");
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

fn f(r: &serde_json::Value, k: &str) -> f64 {
    r[k].as_f64().unwrap_or_else(|| panic!("no {k} in {r}"))
}

#[test]
fn power_from_activity_scales_with_activity_and_clock() {
    let out = scratch("wcu");
    let Some(random) = run(&out, &[]) else {
        return;
    };
    let idle = run(&out, &["--idle"]).unwrap();
    let slow = run(&out, &["--clock-mhz", "125"]).unwrap();
    for k in [
        "switching_uw",
        "internal_uw",
        "clock_uw",
        "dynamic_uw",
        "leakage_uw",
        "total_uw",
    ] {
        let v = f(&random, k);
        assert!(v.is_finite() && v > 0.0, "{k} = {v}: {random}");
    }
    assert_eq!(f(&random, "clock_mhz"), 250.0, "the osu018 target, 4 ns");
    assert_eq!(f(&random, "voltage"), 1.8, "the liberty's nominal voltage");
    assert!(f(&random, "flops") > 0.0);
    // Random stimulus toggles the registers; the idle one nothing but the clock.
    assert!(f(&random["measured"], "state") > 0.0, "{random}");
    assert_eq!(f(&idle["measured"], "mean"), 0.0, "{idle}");
    // Idle: nothing switches but the reset's release (the gate-level run starts in reset).
    assert_eq!(f(&idle["mean_rate"], "switching_uw"), 0.0, "{idle}");
    assert!(
        f(&idle, "switching_uw") < 1e-3 * f(&random, "switching_uw"),
        "{idle}"
    );
    assert!(
        f(&random, "dynamic_uw") > 1.2 * f(&idle, "dynamic_uw"),
        "{random}\n{idle}"
    );
    assert_eq!(f(&random, "leakage_uw"), f(&idle, "leakage_uw"));
    // Half the clock: half the dynamic power, the same leakage and activity.
    let ratio = f(&slow, "dynamic_uw") / f(&random, "dynamic_uw");
    assert!((ratio - 0.5).abs() < 1e-9, "{ratio}");
    assert_eq!(f(&random, "leakage_uw"), f(&slow, "leakage_uw"));
    // The model and its accuracy come with the figures, and OpenSTA's own estimate of the
    // same netlist at the same activities is within the stated accuracy.
    assert!(
        random["model"].as_str().unwrap().contains("+/-2x"),
        "{random}"
    );
    assert!(random["assumptions"].as_array().unwrap().len() >= 4);
    let vs = f(&random, "opensta_ratio");
    assert!((0.5..=2.0).contains(&vs), "ours / OpenSTA = {vs}");
    assert!(out.join("osu018_power.log").exists());
    // The activity is per net, from a gate-level simulation of the netlist that matched
    // the model; the mean-rate estimate (OpenSTA's inputs) comes beside it.
    let g = &random["gate_level"];
    assert!(
        g["verdict"]
            .as_str()
            .unwrap()
            .starts_with("PASS: wcu matches the model"),
        "{g}"
    );
    assert_eq!(g["nets_unmeasured"], 0, "{g}");
    assert!(g["nets_measured"].as_u64().unwrap() > 100, "{g}");
    assert!(f(&random["mean_rate"], "total_uw") > 0.0);
    assert!(random["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a.as_str().unwrap().starts_with("activity per net")));
    assert!(random["stimulus"]
        .as_str()
        .unwrap()
        .starts_with("random (seed 1, 3000 cycles)"));
}

/// The text report: every figure with its model beside it.
#[test]
fn power_text_names_the_model_and_accuracy() {
    let out = scratch("slp");
    let o = warpforge(&[
        "power",
        "--unit",
        "slp_perm",
        "--param",
        "S=4",
        "--param",
        "WIDW=1",
        "--cycles",
        "2000",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    if t.contains("not found on PATH") || t.contains("does not exist: power needs") {
        eprintln!("skipped: {t}");
        return;
    }
    assert!(o.status.success(), "{t}");
    let s = String::from_utf8_lossy(&o.stdout);
    for want in [
        "at 250.0 MHz, 1.80 V",
        "stimulus: random (seed 1, 2000 cycles)",
        "measured activity",
        "dynamic",
        "leakage",
        "total",
        "(estimate, +/-2x;",
        "expected accuracy about +/-2x",
        "cross-check: OpenSTA",
        "assumptions:",
    ] {
        assert!(s.contains(want), "no `{want}` in\n{s}");
    }
    // Every figure line of ours carries the accuracy.
    for line in s
        .lines()
        .filter(|l| l.contains(" uW ") && !l.contains("cross-check"))
    {
        assert!(line.contains("+/-2x"), "{line}");
    }
}

#[test]
fn power_of_an_unknown_unit_is_an_error() {
    let o = warpforge(&["power", "--unit", "no_such_unit"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("no_such_unit"), "{}", text(&o));
}

/// Without the tools on PATH: an error naming the install command, not a panic.
#[test]
fn power_without_tools_names_the_install_command() {
    let empty = scratch("no-tools");
    std::fs::create_dir_all(&empty).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args(["power", "--unit", "slp_perm", "--param", "S=4"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("apt-get install"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
}
