//! The checked-in synthesis baseline, `baselines/synth-generic.json`, against this tree
//! (issue #13): every unit with a template at every standard parameter set (but the heavy
//! ones above `HEAVY_STATE_BITS`, the 64 x 256 scoreboard, whose generic synthesis alone
//! takes most of an hour) must have an entry, its generated RTL must hash as recorded, and the Yosys figures of the cheap sets
//! (at most [`CHEAP_CELLS`] cells in the baseline: all but the largest sets, a few seconds
//! each) must be exactly the recorded ones. Any difference, better or worse, fails and is
//! named (unit, set, figure, baseline, now); once explained, accept it with
//! `warpforge synth --all --skip-heavy --target generic --accept-baseline` in the same
//! commit.
//!
//! The expensive targets (osu018, FPGA place and route) have baselines too
//! (`baselines/synth-<target>.json`), checked by `warpforge synth --all --target T
//! --check-baseline`, not by the test suite: their runs take minutes to hours. Their RTL
//! hashes are the same as this file's, so an RTL change this test reports is the cue to
//! re-measure them.

use std::path::Path;
use warpforge_gen::baseline::{self, Baseline, Measured};
use warpforge_gen::{generate, synth, tools, units_with_templates};

/// Sets whose generic synthesis is re-run by the test (by their baseline cell count).
const CHEAP_CELLS: u64 = 12_000;

#[test]
fn the_generic_synthesis_baseline_holds() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../baselines/synth-generic.json");
    let b = Baseline::read(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.target, "generic");
    let yosys = tools::locate(tools::YOSYS).ok();
    if yosys.is_none() {
        eprintln!("yosys is not installed: only the RTL hashes are compared");
    }
    let mut entries = vec![];
    let mut measured = 0;
    let mut versions = vec![];
    for desc in units_with_templates() {
        for p in desc.standard_params() {
            let g = generate(desc, &p).unwrap();
            if baseline::state_bits(&g) > baseline::HEAVY_STATE_BITS {
                continue; // not in the baseline (accepted with --skip-heavy)
            }
            let cheap = b
                .find(desc.name, &p.to_string())
                .and_then(|e| e.figures.get("cells"))
                .and_then(|v| v.as_u64())
                .is_some_and(|c| c <= CHEAP_CELLS);
            if cheap && yosys.is_some() {
                let r = synth::synth(&g).unwrap_or_else(|e| panic!("{} ({p}): {e}", desc.name));
                versions.push(r.yosys.clone());
                entries.push(baseline::entry(&g, Ok(&Measured::Generic(r))));
                measured += 1;
            } else {
                entries.push(baseline::hash_entry(&g));
            }
        }
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
         warpforge synth --all --skip-heavy --target generic --accept-baseline",
        diffs.len(),
        path.display(),
        diffs
            .iter()
            .map(|d| format!("  {d}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    if yosys.is_some() {
        assert!(measured >= 12, "only {measured} sets re-synthesised");
    }
}
