//! The checked-in synthesis baselines, `baselines/synth-<target>.json`, against this tree
//! (issue #13): every unit with a template at every standard parameter set (but the heavy
//! ones above `HEAVY_STATE_BITS`, the 64 x 256 scoreboard, whose generic synthesis alone
//! takes most of an hour) must have an entry, its generated RTL must hash as recorded, and
//! the figures of the cheap sets (a few seconds each) must be exactly the recorded ones —
//! generic Yosys gates, OSU 0.18 um cells with OpenSTA, and the ECP5 and iCE40 vendor
//! mappings. Any difference, better or worse, fails and is named (unit, set, figure,
//! baseline, now); once explained, accept it with `warpforge synth --all --skip-heavy
//! --target T --accept-baseline` in the same commit.
//!
//! The large sets and place and route are checked by `warpforge synth --all --target T
//! [--pnr] --check-baseline`, not by the test suite: their runs take minutes to an hour.
//! Every baseline records the RTL hashes, so an RTL change these tests report is the cue to
//! re-measure them.

use std::path::Path;
use warpforge_gen::baseline::{self, Baseline, Entry, Target};
use warpforge_gen::pnr::ShellMode;
use warpforge_gen::synth::Family;
use warpforge_gen::tools::ToolError;
use warpforge_gen::{generate, units_with_templates};

/// Compare `baselines/synth-<target>.json` with this tree: every set's RTL hash, and the
/// figures of the sets `cheap` selects (by their baseline entry) measured again, when the
/// target's tools are installed; at least `min_measured` of them.
fn check_baseline(target: Target, cheap: fn(&Entry) -> bool, min_measured: usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(target.baseline_path());
    let b = Baseline::read(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.target, target.name());
    let scratch = std::env::temp_dir().join(format!(
        "wf-baseline-{}-{}",
        target.name(),
        std::process::id()
    ));
    let mut tools_missing: Option<String> = None;
    let mut entries = vec![];
    let mut measured = 0;
    let mut versions: Vec<String> = vec![];
    for desc in units_with_templates() {
        for p in desc.standard_params() {
            let g = generate(desc, &p).unwrap();
            if baseline::state_bits(&g) > baseline::HEAVY_STATE_BITS {
                continue; // not in the baseline (accepted with --skip-heavy)
            }
            let is_cheap = b.find(desc.name, &p.to_string()).is_some_and(cheap);
            if is_cheap && tools_missing.is_none() {
                let dir = scratch.join(warpforge_gen::params_dir(desc, &p));
                match baseline::measure(&g, target, ShellMode::Auto, &dir, &|_| {}) {
                    Ok(m) => {
                        versions.extend(m.tools());
                        entries.push(baseline::entry(&g, Ok(&m)));
                        measured += 1;
                        continue;
                    }
                    Err(e @ ToolError::Missing { .. }) => tools_missing = Some(e.to_string()),
                    Err(e) => panic!("{} ({p}): {e}", desc.name),
                }
            }
            entries.push(baseline::hash_entry(&g));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(why) = &tools_missing {
        eprintln!(
            "{why}: only the RTL hashes of {} are compared",
            path.display()
        );
    }
    let diffs = baseline::compare(&b, &entries);
    let tool_note = versions
        .iter()
        .find(|v| !b.tools.contains(v))
        .map(|v| {
            format!(
                "\nnote: the baseline was measured with {:?}, this run with {v}",
                b.tools
            )
        })
        .unwrap_or_default();
    assert!(
        diffs.is_empty(),
        "{} difference(s) from {}:\n{}{tool_note}\nonce explained, accept them: \
         warpforge synth --all --skip-heavy --target {} --accept-baseline (add --unit U to \
         replace only unit U's entries)",
        diffs.len(),
        path.display(),
        diffs
            .iter()
            .map(|d| format!("  {d}"))
            .collect::<Vec<_>>()
            .join("\n"),
        target.name()
    );
    if tools_missing.is_none() {
        assert!(measured >= min_measured, "only {measured} sets re-measured");
    }
}

fn figure(e: &Entry, k: &str) -> u64 {
    e.figures
        .get(k)
        .and_then(|v| v.as_u64())
        .unwrap_or(u64::MAX)
}

#[test]
fn the_generic_synthesis_baseline_holds() {
    // All but the largest few sets.
    check_baseline(Target::Generic, |e| figure(e, "cells") <= 12_000, 12);
}

#[test]
fn the_osu018_baseline_holds() {
    // The sets of at most 1,500 cells: ABC's mapping and OpenSTA take seconds each.
    check_baseline(Target::Osu018, |e| figure(e, "cells") <= 1_500, 8);
}

#[test]
fn the_ecp5_baseline_holds() {
    check_baseline(
        Target::Fpga(Family::Ecp5),
        |e| figure(e, "luts") <= 1_500,
        8,
    );
}

#[test]
fn the_ice40_baseline_holds() {
    check_baseline(
        Target::Fpga(Family::Ice40),
        |e| figure(e, "luts") <= 1_000,
        8,
    );
}

#[test]
fn the_xilinx_baseline_holds() {
    check_baseline(
        Target::Fpga(Family::Xilinx),
        |e| figure(e, "luts") <= 250,
        7,
    );
}
