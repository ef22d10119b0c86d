//! The self-checking Verilog testbench of a replay file runs under Icarus Verilog
//! (`iverilog -g2005`, `vvp`): it fails at the divergence's cycle and port, with the model's
//! and the RTL's values, on the RTL that diverged, and passes on the correct RTL; cycle
//! numbers stay absolute when the replay starts after a reset.
//!
//! Needs Icarus Verilog (`./scripts/install-tools.sh`).
use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;
use warpforge_cosim::replay::Replay;
use warpforge_cosim::stimulus::{FnStimulus, RandomStimulus};
use warpforge_cosim::testbench::testbench;
use warpforge_cosim::{Cosim, RtlSource};
use warpforge_model::units::contract::{Bits, UnitDesc};

/// Write the testbench of `replay` against `rtl` into `dir`, compile it with
/// `iverilog -g2005` and run it with `vvp`: (exit status success, what it printed).
fn run_icarus(
    dir: &Path,
    replay: &Path,
    desc: &'static UnitDesc,
    rtl: &RtlSource,
) -> (bool, String) {
    std::fs::create_dir_all(dir).unwrap();
    let (r, params) = Replay::load(replay, desc).unwrap();
    let tb = testbench(&r, desc, &params, rtl).unwrap();
    let mut files = vec![];
    for (name, text) in &tb.rtl_files {
        std::fs::write(dir.join(name), text).unwrap();
        files.push(name.clone());
    }
    std::fs::write(dir.join("tb.v"), &tb.text).unwrap();
    files.push("tb.v".into());
    let c = Command::new("iverilog")
        .current_dir(dir)
        .args(["-g2005", "-o", "tb.vvp"])
        .args(&files)
        .output()
        .expect("iverilog (Icarus Verilog) must be installed: ./scripts/install-tools.sh");
    let log = String::from_utf8_lossy(&c.stderr).to_string();
    assert!(c.status.success(), "iverilog failed:\n{log}");
    assert!(log.trim().is_empty(), "iverilog warnings:\n{log}");
    let o = Command::new("vvp")
        .current_dir(dir)
        .args(["-n", "tb.vvp"])
        .output()
        .expect("vvp");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

fn fail_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("FAIL:")).collect()
}

#[test]
fn the_testbench_fails_at_the_divergence_on_the_wrong_rtl_and_passes_on_the_right_one() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let out = out_dir("tb-counter");
    // From 42 the wrong counter counts by two: the model says 43 at cycle 43, the RTL 44.
    let wrong = COUNTER_V.replace(
        "else if (en) count <= count + 1'b1;",
        "else if (en) count <= (count == 8'd42) ? count + 2'd2 : count + 1'b1;",
    );
    let cosim = Cosim::new(&COUNTER_DESC, params, counter_rtl(&wrong), &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(Some(out.path().to_path_buf()));
    let counting = |c: u64, p: &mut [Bits]| {
        p[0].set_u64(1);
        p[1].set_u64(1);
        c < 1000
    };
    let err = cosim.run(&mut FnStimulus(counting)).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((d.cycle, d.port()), (43, "count"));
    let replay = d.replay.clone().unwrap();
    let (r, _) = Replay::load(&replay, &COUNTER_DESC).unwrap();

    // The replay's own RTL: the first failing cycle is 43; count and next differ (the
    // 70-bit accumulator and the debug port are not reported: acc matches, dbg is debug
    // state), with the values the co-simulation reported.
    let (ok, text) = run_icarus(
        &out.path().join("wrong"),
        &replay,
        &COUNTER_DESC,
        &r.header.rtl,
    );
    assert!(!ok, "a failing status:\n{text}");
    let fails = fail_lines(&text);
    assert_eq!(
        fails,
        [
            "FAIL: cycle 43 port count expected 8'h2b actual 8'h2c",
            "FAIL: cycle 43 port next expected 8'h2c actual 8'h2d",
            "FAIL: toy_counter at cycle 43: 2 output(s) differ from the model",
        ],
        "{text}"
    );
    assert!(!text.contains("PASS"), "{text}");

    // The right RTL passes every recorded cycle.
    let (ok, text) = run_icarus(
        &out.path().join("right"),
        &replay,
        &COUNTER_DESC,
        &counter_rtl(COUNTER_V),
    );
    assert!(ok, "{text}");
    assert!(fail_lines(&text).is_empty(), "{text}");
    assert!(
        text.contains(
            "PASS: toy_counter matches the model over cycles 0..=43 (44 cycles, 4 outputs each)"
        ),
        "{text}"
    );
}

/// A replay that starts after the last reset before the failure: the testbench numbers the
/// cycles as the co-simulation did and fails at the same cycle and port.
#[test]
fn the_testbench_keeps_the_cycle_numbers_of_a_replay_that_starts_after_a_reset() {
    let wrong = PTRS_V.replace(
        "flags <= (flags | set) & ~clr;",
        "flags <= (set == 8'h5a && clr[0]) ? 8'h00 : (flags | set) & ~clr;",
    );
    let params = PTRS_DESC.params::<&str>(&[]).unwrap();
    let out = out_dir("tb-ptrs");
    let cosim = Cosim::new(
        &PTRS_DESC,
        params.clone(),
        RtlSource::single("toy_ptrs", wrong),
        &opts(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .with_failure_dir(Some(out.path().to_path_buf()));
    let mut stim = RandomStimulus::new(&PTRS_DESC, &params, 21, 1_000_000).with_reset_one_in(40);
    let err = cosim.run(&mut stim).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    let replay = d.replay.clone().unwrap();
    let (r, _) = Replay::load(&replay, &PTRS_DESC).unwrap();
    assert!(r.header.first_cycle > 0, "the replay starts after a reset");

    let (ok, text) = run_icarus(
        &out.path().join("wrong"),
        &replay,
        &PTRS_DESC,
        &r.header.rtl,
    );
    assert!(!ok, "{text}");
    let m = d.first();
    let first = format!(
        "FAIL: cycle {} port {} expected {}'h{} actual {}'h{}",
        d.cycle, m.port, m.width, m.expected, m.width, m.actual
    );
    assert_eq!(
        fail_lines(&text).first().copied(),
        Some(first.as_str()),
        "{text}"
    );

    let (ok, text) = run_icarus(&out.path().join("right"), &replay, &PTRS_DESC, &ptrs_rtl());
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!(
            "PASS: toy_ptrs matches the model over cycles {}..={}",
            r.header.first_cycle, d.cycle
        )),
        "{text}"
    );
}
