//! Failure reports a hardware engineer can act on, from the command line: a divergence's
//! replay exports a self-checking Verilog testbench that Icarus Verilog runs (failing at the
//! divergence on the broken RTL, passing on the fix), and wide ports are reported by their
//! declared fields (the scoreboard's warp, side and register), in text and in `--json`.
//!
//! Needs Verilator, g++ and Icarus Verilog (`./scripts/install-tools.sh`).

use crate::common;

use common::{text, warpforge};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "warpforge-cosim-report-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `warpforge gen` of `unit` with `params` into `out`.
fn gen(unit: &str, params: &[&str], out: &Path) {
    let mut args = vec!["gen", "--unit", unit];
    for p in params {
        args.extend(["--param", p]);
    }
    args.extend(["--out", out.to_str().unwrap()]);
    let o = warpforge(&args);
    assert!(o.status.success(), "{}", text(&o));
}

/// Replace `from` by `to` in `file` (it must be there).
fn edit(file: &Path, from: &str, to: &str) {
    let src = std::fs::read_to_string(file).unwrap();
    let bug = src.replacen(from, to, 1);
    assert_ne!(src, bug, "{} no longer has `{from}`", file.display());
    std::fs::write(file, bug).unwrap();
}

/// The one replay file in `dir`.
fn replay_in(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "replay"))
        .expect("a replay file")
}

/// Compile the testbench with the files `warpforge cosim --export-tb` wrote beside it
/// (`iverilog -g2005`) and run it (`vvp`): (success, output).
fn icarus(tb: &Path) -> (bool, String) {
    let dir = tb.parent().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".v"))
        .collect();
    files.sort();
    let c = Command::new("iverilog")
        .current_dir(dir)
        .args(["-g2005", "-o", "tb.vvp"])
        .args(&files)
        .output()
        .expect("iverilog (Icarus Verilog) must be installed: ./scripts/install-tools.sh");
    let log = String::from_utf8_lossy(&c.stderr).to_string();
    assert!(
        c.status.success() && log.trim().is_empty(),
        "iverilog:\n{log}"
    );
    let o = Command::new("vvp")
        .current_dir(dir)
        .args(["-n", "tb.vvp"])
        .output()
        .expect("vvp");
    (o.status.success(), text(&o))
}

/// `--replay F --export-tb OUT.v` writes a testbench of F's inputs and the model's expected
/// outputs and the RTL files beside it; under Icarus it fails at the cycle and port where
/// the co-simulation diverged, with the same values, on the RTL that diverged, and passes
/// on the fixed RTL (`--rtl FIXED`).
#[test]
fn an_exported_testbench_fails_on_the_broken_rtl_and_passes_on_the_fix_under_icarus() {
    let dir = scratch("tb");
    let (broken, fixed, fails) = (dir.join("broken"), dir.join("fixed"), dir.join("fails"));
    let params = ["WARP_SIZE=8", "DEPTH=4", "PC_W=16"];
    gen("simt_stack_spe", &params, &broken);
    gen("simt_stack_spe", &params, &fixed);
    // Off by one at full: the push that exactly fills the stack overflows.
    edit(
        &broken.join("simt_stack_spe.v"),
        "(sp_div > {1'b0, SP_FULL});",
        "(sp_div >= {1'b0, SP_FULL});",
    );
    let json = dir.join("run.json");
    let o = warpforge(&[
        "cosim",
        "--unit",
        "simt_stack_spe",
        "--rtl",
        broken.to_str().unwrap(),
        "--out",
        fails.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let d = &rows[0]["divergence"];
    let cycle = d["cycle"].as_u64().unwrap();
    let m = &d["mismatches"][0];
    let replay = replay_in(&fails);
    let r = replay.to_str().unwrap();

    let tb = dir.join("tb-broken").join("spe_tb.v");
    let o = warpforge(&["cosim", "--replay", r, "--export-tb", tb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("iverilog -g2005"), "{}", text(&o));
    for f in ["simt_stack_spe.v", "wf_ram_dp.v"] {
        assert!(
            tb.parent().unwrap().join(f).is_file(),
            "{f} beside the testbench"
        );
    }
    assert!(
        !tb.parent().unwrap().join("simt_stack_spe_cosim.v").exists(),
        "the co-simulation wrapper is not part of it"
    );
    let (ok, out) = icarus(&tb);
    assert!(!ok, "a failing status:\n{out}");
    let w = m["width"].as_u64().unwrap();
    let first = format!(
        "FAIL: cycle {cycle} port {} expected {w}'h{} actual {w}'h{}",
        m["port"].as_str().unwrap(),
        m["expected"].as_str().unwrap(),
        m["actual"].as_str().unwrap()
    );
    let fails_seen: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL:")).collect();
    assert_eq!(fails_seen.first().copied(), Some(first.as_str()), "{out}");

    let tb = dir.join("tb-fixed").join("spe_tb.v");
    let o = warpforge(&[
        "cosim",
        "--replay",
        r,
        "--rtl",
        fixed.to_str().unwrap(),
        "--export-tb",
        tb.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let (ok, out) = icarus(&tb);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!(
            "PASS: simt_stack_spe matches the model over cycles 0..={cycle}"
        )),
        "{out}"
    );
    // A folder's file of the same name with other text is not overwritten.
    let o = warpforge(&["cosim", "--replay", r, "--export-tb", tb.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("exists with other text"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// A scoreboard whose release wins over a same-cycle reserve of the same register: the
/// report names the differing bit of `dbg_P` as warp, side and register, says that the
/// state was set at the previous cycle's edge, and lists the port arrays' elements in the
/// inputs (`rsv_reg[1]`); `--json` carries the same.
#[test]
fn a_scoreboard_divergence_names_the_warp_side_and_register() {
    let dir = scratch("sb");
    let (rtl, fails) = (dir.join("rtl"), dir.join("fails"));
    gen(
        "dpe_scoreboard",
        &["NUM_WARPS=4", "NUM_REGS=8", "NRSV=2", "NWB=1", "Q=1"],
        &rtl,
    );
    // The kit's own mutant of this bug (one copy of the template's text to keep current).
    let kit = warpforge_cosim::kits::kit(&warpforge_model::units::dpe_scoreboard::SCOREBOARD_DESC)
        .expect("the scoreboard's kit");
    let m = kit
        .mutants
        .iter()
        .find(|m| m.description.contains("release wins over a reserve"))
        .expect("the kit's release-wins mutant");
    edit(&rtl.join("dpe_scoreboard.v"), m.from, m.to);
    let json = dir.join("run.json");
    let o = warpforge(&[
        "cosim",
        "--unit",
        "dpe_scoreboard",
        "--rtl",
        rtl.to_str().unwrap(),
        "--out",
        fails.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let d = &rows[0]["divergence"];
    let cycle = d["cycle"].as_u64().unwrap();
    let m = &d["mismatches"][0];
    assert_eq!(m["port"], "dbg_P");
    // One pending bit the RTL dropped: the model has it set.
    let bits = m["diff_bits"].as_array().unwrap();
    assert_eq!(bits.len(), 1, "{m}");
    let bit = bits[0].as_u64().unwrap();
    let (warp, side, reg) = (bit / 16, bit / 8 % 2, bit % 8);
    let f = &m["fields"][0];
    let name = format!("dbg_P warp {warp} side {side} reg {reg}");
    assert_eq!(f["field"], name.as_str(), "{m}");
    assert_eq!(
        (f["expected"].as_str(), f["actual"].as_str()),
        (Some("1"), Some("0"))
    );
    assert_eq!(f["lsb"].as_u64(), Some(bit));
    let line = format!("      {name}: expected 0x1 actual 0x0");
    assert!(t.lines().any(|l| l == line), "{t}");
    // The bit was written at the edge that ended the cycle before, whose inputs reserved
    // and released that register at once: a reserve port and the release port name it.
    let note = format!(
        "registered output dbg_P: set at the clock edge ending cycle {p} (inputs of cycle {p} above)",
        p = cycle - 1
    );
    assert_eq!(d["registered_note"], note.as_str());
    assert!(t.contains(&format!("  note: {note}")), "{t}");
    let inputs = d["last_inputs"].as_array().unwrap();
    let (c, prev) = (
        inputs[inputs.len() - 2][0].as_u64(),
        &inputs[inputs.len() - 2][1],
    );
    assert_eq!(c, Some(cycle - 1));
    let get = |n: &str| -> u64 {
        let v = prev.as_array().unwrap().iter().find(|p| p[0] == n);
        let v = v.unwrap_or_else(|| panic!("{n} in {prev}"));
        u64::from_str_radix(v[1].as_str().unwrap(), 16).unwrap()
    };
    let (rsv_valid, rsv_side) = (get("rsv_valid"), get("rsv_side"));
    let reserved = (0..2).any(|i| {
        rsv_valid >> i & 1 == 1
            && get(&format!("rsv_warp[{i}]")) == warp
            && rsv_side >> i & 1 == side
            && get(&format!("rsv_reg[{i}]")) == reg
    });
    let released = get("rel_valid") & 1 == 1
        && get("rel_warp[0]") == warp
        && get("rel_side") & 1 == side
        && get("rel_reg[0]") == reg;
    assert!(reserved && released, "cycle {}: {prev}", cycle - 1);
    std::fs::remove_dir_all(&dir).ok();
}

/// The internal state is compared every 64 cycles by default (`--state-every 1`: every
/// cycle), and either way a report is about the first cycle anything differs: with the
/// SPE's registered-read fill never selected, the stack's entry 0 is wrong from cycle 8 and
/// the outputs from cycle 11; the default run stops at 11 and reports 8 (saying so), the
/// every-cycle run stops at 8.
#[test]
fn state_compared_every_n_cycles_still_reports_the_first_differing_cycle() {
    let dir = scratch("state");
    let rtl = dir.join("rtl");
    gen("simt_stack_spe", &[], &rtl);
    edit(
        &rtl.join("simt_stack_spe.v"),
        "top_in_q_q <= 1'b1;",
        "top_in_q_q <= 1'b0;",
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "cosim",
            "--unit",
            "simt_stack_spe",
            "--rtl",
            rtl.to_str().unwrap(),
            "--out",
        ];
        let out = dir.join(format!("fails{}", extra.len()));
        let out = out.to_str().unwrap().to_string();
        args.push(&out);
        args.extend(extra);
        let o = warpforge(&args);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        text(&o)
    };
    let sampled = run(&[]);
    assert!(
        sampled.contains("DIVERGENCE at cycle 8 ") && sampled.contains("port dbg_stack"),
        "{sampled}"
    );
    assert!(
        sampled.contains("the outputs first differed at cycle 11")
            && sampled.contains("replay reproduces it"),
        "{sampled}"
    );
    // The model side on the RTL's thread or on its own: the same report either way.
    for threads in ["1", "2"] {
        let r = run(&["--threads", threads]);
        assert!(
            r.contains("DIVERGENCE at cycle 8 ") && r.contains("first differed at cycle 11"),
            "--threads {threads}: {r}"
        );
    }
    let every = run(&["--state-every", "1"]);
    assert!(every.contains("DIVERGENCE at cycle 8 "), "{every}");
    assert!(!every.contains("first differed"), "{every}");
    let bad = warpforge(&["cosim", "--unit", "simt_stack_spe", "--state-every", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}
