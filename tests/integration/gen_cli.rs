//! `warpforge gen` and `warpforge synth` from the command line.

use crate::common;

use common::{text, warpforge};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpforge-gen-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn gen_writes_verilog_manifest_and_filelist_and_lints_clean() {
    let out = scratch("one");
    let o = warpforge(&[
        "gen",
        "--unit",
        "simt_stack_spe",
        "--param",
        "DEPTH=4",
        "--param",
        "WARP_SIZE=8",
        "--out",
        out.to_str().unwrap(),
        "--lint",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("lint clean"), "{}", text(&o));
    let v = std::fs::read_to_string(out.join("simt_stack_spe.v")).unwrap();
    assert!(v.contains("parameter integer DEPTH = 4"));
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("simt_stack_spe.manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["params"]["WARP_SIZE"], 8);
    assert_eq!(
        std::fs::read_to_string(out.join("simt_stack_spe.f")).unwrap(),
        "simt_stack_spe.v\nwf_ram_dp.v\n"
    );
    // The co-simulated design: the synthesizable files and the wrapper with the debug ports.
    assert_eq!(
        std::fs::read_to_string(out.join("simt_stack_spe_cosim.f")).unwrap(),
        "simt_stack_spe.v\nwf_ram_dp.v\nsimt_stack_spe_cosim.v\n"
    );
    for f in ["wf_ram_dp.v", "simt_stack_spe_cosim.v"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    assert!(
        !v.lines()
            .any(|l| l.contains("output") && l.contains("dbg_")),
        "no debug port in the synthesizable module"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn gen_all_with_standard_sets() {
    let out = scratch("all");
    let o = warpforge(&[
        "gen",
        "--all",
        "--standard-sets",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("simt_stack_spe.v").is_file());
    assert!(out
        .join(
            "simt_stack_spe/WARP_SIZE-8_DEPTH-4_PC_W-16_RAM_RD_REG-1/simt_stack_spe.manifest.json"
        )
        .is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_unit_or_parameter_exits_2_with_a_clear_message() {
    let out = scratch("bad");
    let o = warpforge(&["gen", "--unit", "nope", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("unknown unit `nope`"), "{}", text(&o));
    let o = warpforge(&[
        "gen",
        "--unit",
        "simt_stack_spe",
        "--param",
        "WARP_SIZE=4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("simt_stack_spe: parameter WARP_SIZE=4 is out of range 8..=64"),
        "{}",
        text(&o)
    );
    let o = warpforge(&["synth", "--unit", "simt_stack_spe", "--param", "DEPTH"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("expected NAME=VALUE"), "{}", text(&o));
    let o = warpforge(&["gen", "--out", out.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "neither --unit nor --all: {}",
        text(&o)
    );
}

/// `warpforge synth` of a small SPE stack (its flip-flops are counted in
/// `synth_prints_a_table_or_json`).
const SYNTH_SMALL_SPE: [&str; 9] = [
    "synth",
    "--unit",
    "simt_stack_spe",
    "--param",
    "WARP_SIZE=8",
    "--param",
    "PC_W=8",
    "--param",
    "DEPTH=2",
];

#[test]
fn synth_prints_a_table_or_json() {
    let args = SYNTH_SMALL_SPE;
    let o = warpforge(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("transistors (est.)"), "{}", text(&o));
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let o = warpforge(&json_args);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // In the generic flow the RAM is flip-flops: its one pair word (never used at DEPTH=2),
    // the top pair, the RAM's read register (pairs of 2 entries of 2*8+8 bits), sp (2 bits),
    // done (8), two flags and top_in_q.
    assert_eq!(r["flops"], 3 * 48 + 2 + 8 + 2 + 1);
    assert!(r["transistors"].as_u64().unwrap() > 0);
}

#[test]
fn synth_maps_to_an_fpga_family() {
    let o = warpforge(&[
        "synth",
        "--unit",
        "simt_stack_dpe",
        "--param",
        "WARP_SIZE=8",
        "--param",
        "PC_W=8",
        "--param",
        "DEPTH=4",
        "--target",
        "ecp5",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["family"], "ecp5");
    assert!(r["lut_ram"].as_u64().unwrap() > 0, "{r}");
    assert!(r["luts"].as_u64().unwrap() > 0, "{r}");
    let o = warpforge(&["synth", "--unit", "simt_stack_dpe", "--target", "gowin"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `warpforge run` writes exactly the RTL it co-simulates, one folder per parameter set:
/// every file of the co-simulated design (the unit, its RAM primitive, the wrapper) is on
/// disk, and co-simulating the folder's files matches.
#[test]
fn run_writes_the_cosimulated_rtl_of_several_files() {
    let out = scratch("run");
    let o = warpforge(&[
        "run",
        "--workload",
        "vecadd",
        "--size",
        "tiny",
        "--no-compare",
        "--rtl-out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let dir = out.join("simt_stack_spe/WARP_SIZE-32_DEPTH-16_PC_W-32_RAM_RD_REG-1");
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("simt_stack_spe.manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["cosim_top"], "simt_stack_spe_cosim");
    let files = m["cosim_files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    for f in files {
        assert!(dir.join(f.as_str().unwrap()).is_file(), "{f}");
    }
    let o = warpforge(&[
        "cosim",
        "--unit",
        "simt_stack_spe",
        "--rtl",
        dir.to_str().unwrap(),
        "--random",
        "--cycles",
        "2000",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("match"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&out);
}

/// `cosim --rtl DIR` runs at the parameters DIR's manifest was generated at, and refuses
/// others (the RTL's widths and shared constants were rendered for those).
#[test]
fn cosim_rtl_takes_its_parameters_from_the_folders_manifest() {
    let dir = scratch("rtl-manifest");
    let d = dir.to_str().unwrap();
    let o = warpforge(&[
        "gen",
        "--unit",
        "simt_stack_spe",
        "--param",
        "WARP_SIZE=8",
        "--param",
        "DEPTH=3",
        "--out",
        d,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "cosim",
            "--unit",
            "simt_stack_spe",
            "--rtl",
            d,
            "--random",
            "--cycles",
            "5000",
        ];
        args.extend_from_slice(extra);
        warpforge(&args)
    };
    let o = run(&[]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("WARP_SIZE=8,DEPTH=3") && t.contains("match"),
        "{t}"
    );
    let o = run(&["--param", "DEPTH=4"]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("the RTL was generated at WARP_SIZE=8,DEPTH=3")
            && t.contains("this run is at WARP_SIZE=32,DEPTH=4"),
        "{t}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A divergence's replay file re-runs against fixed RTL (`--replay F --rtl FIXED`): the
/// broken RTL still diverges at the same cycle, the fixed one matches, and a folder
/// generated at other parameters is refused.
#[test]
fn a_replay_validates_a_fix_of_the_rtl() {
    let dir = scratch("replay-fix");
    let gen = |out: &str, depth: &str| {
        let o = warpforge(&[
            "gen",
            "--unit",
            "simt_stack_spe",
            "--param",
            "WARP_SIZE=8",
            "--param",
            depth,
            "--param",
            "PC_W=16",
            "--out",
            out,
        ]);
        assert!(o.status.success(), "{}", text(&o));
    };
    let (broken, fixed, other, fails) = (
        dir.join("broken"),
        dir.join("fixed"),
        dir.join("other"),
        dir.join("fails"),
    );
    for (d, depth) in [
        (&broken, "DEPTH=4"),
        (&fixed, "DEPTH=4"),
        (&other, "DEPTH=8"),
    ] {
        gen(d.to_str().unwrap(), depth);
    }
    // Off by one at full: the push that exactly fills the stack overflows.
    let v = broken.join("simt_stack_spe.v");
    let src = std::fs::read_to_string(&v).unwrap();
    let bug = src.replacen(
        "(sp_div > {1'b0, SP_FULL});",
        "(sp_div >= {1'b0, SP_FULL});",
        1,
    );
    assert_ne!(src, bug, "the template still has the full check");
    std::fs::write(&v, bug).unwrap();
    let o = warpforge(&[
        "cosim",
        "--unit",
        "simt_stack_spe",
        "--rtl",
        broken.to_str().unwrap(),
        "--out",
        fails.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let replay = std::fs::read_dir(&fails)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "replay"))
        .expect("a replay file");
    let r = replay.to_str().unwrap();
    let against =
        |rtl: &PathBuf| warpforge(&["cosim", "--replay", r, "--rtl", rtl.to_str().unwrap()]);
    let o = against(&broken);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("DIVERGENCE at cycle"), "{}", text(&o));
    let o = against(&fixed);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("matches the model over the replay's every cycle"),
        "{t}"
    );
    let o = against(&other);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("DEPTH=8") && t.contains("DEPTH=4"), "{t}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The OSU 0.18 um flow: area and leakage from the liberty, OpenSTA timing against the
/// rendered SDC, and every rendered file left in `--out` for a rerun outside warpforge.
#[test]
fn synth_osu018_gives_area_leakage_and_timing() {
    let out = scratch("osu018");
    let mut args = SYNTH_SMALL_SPE.to_vec();
    args.extend([
        "--target",
        "osu018",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let o = warpforge(&args);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The same flip-flops as the generic flow (see `synth_prints_a_table_or_json`).
    assert_eq!(r["flops"], 3 * 48 + 2 + 8 + 2 + 1, "{r}");
    let area = r["area_um2"].as_f64().unwrap();
    let cells = &r["cells_by_type"];
    // A DFFPOSX1 is 192 um^2 in the liberty: the flops alone are a lower bound.
    assert!(area > 157.0 * 192.0, "{r}");
    assert_eq!(cells["DFFPOSX1"], 157, "{r}");
    assert!(r["leakage_nw"].as_f64().unwrap() > 0.0, "{r}");
    let fmax = r["fmax_mhz"].as_f64().unwrap();
    let slack = r["worst_slack_ns"].as_f64().unwrap();
    assert!((fmax - 1000.0 / (4.0 - slack)).abs() < 1e-6, "{r}");
    assert!(r["critical_path"]["levels"].as_u64().unwrap() >= 2, "{r}");
    for f in [
        "simt_stack_spe.sdc",
        "osu018.ys",
        "osu018_abc.script",
        "osu018_sta.tcl",
        "osu018_netlist.v",
        "osu018_sta.log",
    ] {
        assert!(out.join(f).exists(), "{f} not written");
    }
    let sdc = std::fs::read_to_string(out.join("simt_stack_spe.sdc")).unwrap();
    assert!(sdc.contains("set clk_period 4"), "{sdc}");
}

/// Place and route with nextpnr (`--pnr`) of a small unit on each FPGA family: a real run
/// whose report is parsed — the device and package named, the shell used and said so,
/// utilisation within the device, a post-route Fmax and its critical path — and every file
/// of the run left in `--out`. Skipped, with the reason, only when the tool is not
/// installed (`scripts/install-tools.sh`).
#[test]
fn synth_pnr_places_and_routes_a_unit_in_its_shell() {
    for (family, device, logic, constraints) in [
        ("ice40", "iCE40HX8K", "ICESTORM_LC", "slp_perm_shell.pcf"),
        ("ecp5", "LFE5U-25F", "TRELLIS_COMB", "slp_perm_shell.lpf"),
    ] {
        let out = scratch(&format!("pnr-{family}"));
        let o = warpforge(&[
            "synth",
            "--unit",
            "slp_perm",
            "--param",
            "S=4",
            "--param",
            "WIDW=1",
            "--target",
            family,
            "--pnr",
            "--out",
            out.to_str().unwrap(),
            "--json",
        ]);
        let t = text(&o);
        if t.contains("not found on PATH") {
            eprintln!("skipped {family} place and route: {t}");
            continue;
        }
        assert!(o.status.success(), "{t}");
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["family"], family, "{r}");
        assert_eq!(r["device"]["name"], device, "{r}");
        assert_eq!(r["fits"], true, "{r}");
        // slp_perm has no state: the shell gives it reg-to-reg paths, and says why.
        assert_eq!(r["shell"]["used"], true, "{r}");
        assert!(
            r["shell"]["reason"].as_str().unwrap().contains("no state"),
            "{r}"
        );
        let u = &r["utilisation"][logic];
        let used = u["used"].as_u64().unwrap();
        assert!(used > 10 && used <= u["available"].as_u64().unwrap(), "{r}");
        let fmax = r["fmax_mhz"].as_f64().unwrap();
        assert!(fmax > 10.0 && fmax < 1000.0, "{r}");
        let p = &r["critical_path"];
        assert!(p["logic_levels"].as_u64().unwrap() >= 1, "{r}");
        // The shell's flip-flops: the 12 input bits, the 8 output bits and rst_q.
        assert_eq!(r["mapped"]["ffs"], 21, "{r}");
        for f in [
            constraints,
            &format!("{family}_pnr_report.json"),
            &format!("{family}_nextpnr.log"),
            &format!("{family}_nextpnr.sh"),
            "slp_perm_shell.v",
        ] {
            assert!(out.join(f).is_file(), "{f} not written");
        }
        // The text report says the shell was used.
        let mut args = vec![
            "synth",
            "--unit",
            "slp_perm",
            "--param",
            "S=4",
            "--param",
            "WIDW=1",
            "--target",
            family,
            "--pnr",
            "--out",
            out.to_str().unwrap(),
        ];
        let o = warpforge(&args);
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        assert!(
            t.contains("in its shell") && t.contains("post-route Fmax"),
            "{t}"
        );
        // --shell never: the bare unit, no reg-to-reg path, no Fmax.
        args.extend(["--shell", "never", "--json"]);
        let o = warpforge(&args);
        assert!(o.status.success(), "{}", text(&o));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["shell"]["used"], false, "{r}");
        assert!(r["fmax_mhz"].is_null(), "{r}");
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// --pnr is for the families nextpnr serves.
#[test]
fn synth_pnr_refuses_xilinx() {
    let o = warpforge(&["synth", "--unit", "slp_perm", "--target", "xilinx", "--pnr"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--pnr is for --target ecp5 or ice40"),
        "{}",
        text(&o)
    );
}

/// A missing place-and-route tool is an error naming its install command, not a panic.
#[test]
fn synth_pnr_without_nextpnr_names_the_install_command() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args(["synth", "--unit", "slp_perm", "--target", "ice40", "--pnr"])
        .env("PATH", "/nonexistent")
        .env("HOME", "/nonexistent")
        .env_remove("CARGO_HOME")
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("`nextpnr-ice40` not found on PATH")
            && t.contains("apt-get install -y nextpnr-ice40 fpga-icestorm"),
        "{t}"
    );
}
