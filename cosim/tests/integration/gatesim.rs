//! The gate-level simulation of a mapped netlist (`gatesim`): the OSU 0.18 um netlist of a
//! unit matches its model cycle for cycle, every net gets its own transition count (an
//! input's equals what the stimulus did), and a netlist with broken gates is caught.

use std::path::Path;
use warpforge_cosim::gatesim::{gate_level_activity, OSU018_CELLS_V};
use warpforge_cosim::kits::random_stimulus;
use warpforge_cosim::replay::InputLog;
use warpforge_cosim::{CosimError, Stimulus};
use warpforge_gen::{asic, generate_by_name};
use warpforge_model::units::contract::{Params, UnitDesc};

/// The small CAPT's mapped netlist, or `None` when the osu018 tools are missing.
fn netlist(dir: &Path) -> Option<String> {
    if !Path::new(OSU018_CELLS_V).exists() {
        eprintln!("skipped: {OSU018_CELLS_V} is not installed");
        return None;
    }
    let g = generate_by_name("capri_capt", &["ENTRIES=4", "PCW=8", "HIST=2"]).unwrap();
    match asic::osu018_in(&g, dir) {
        Ok(_) => Some(std::fs::read_to_string(dir.join("osu018_netlist.v")).unwrap()),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The CAPT of these tests: 4 entries, 8-bit PCs, 2-bit counters (~500 cells).
fn small_capt() -> (&'static UnitDesc, Params) {
    let desc = warpforge_model::units::find("capri_capt").unwrap();
    let params = desc
        .params(&[("ENTRIES", 4), ("PCW", 8), ("HIST", 2)])
        .unwrap();
    (desc, params)
}

/// `cycles` of the unit's random stimulus, driven against its model as the lockstep run
/// drives it (the stimulus reads the model's registered outputs).
fn random_log(cycles: u64) -> InputLog {
    let (desc, params) = small_capt();
    let mut stim = random_stimulus(desc, &params, 3, cycles);
    let mut model = (desc.build)(&params);
    let mut ports = desc.zero_ports(&params);
    model.tick(&ports); // the implicit reset cycle
    let mut log = InputLog::new(desc, &params);
    for c in 0..cycles {
        model.outputs(&mut ports);
        if !stim.drive(c, &mut ports) {
            break;
        }
        log.push(&ports);
        model.outputs(&mut ports);
        model.tick(&ports);
    }
    log
}

#[test]
fn the_netlist_matches_the_model_and_every_net_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let Some(netlist) = netlist(dir.path()) else {
        return;
    };
    let (desc, params) = small_capt();
    let log = random_log(600);
    let g = match gate_level_activity(desc, &params, &log, &netlist, &dir.path().join("gates")) {
        Ok(g) => g,
        Err(CosimError::Toolchain(e)) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert!(
        g.verdict.starts_with("PASS: capri_capt matches the model"),
        "{}",
        g.verdict
    );
    assert_eq!(g.cycles, 601, "600 cycles and the reset cycle");
    // Every net of the netlist has a count of its own.
    let nets = warpforge_gen::power::netlist_nets(&netlist).unwrap();
    let missing: Vec<&String> = nets.iter().filter(|n| g.rate(n).is_none()).collect();
    assert!(missing.is_empty(), "nets without a count: {missing:?}");
    // An input bit's count is exactly what the stimulus did to it (the reset cycle drives
    // every input 0 first).
    // The log holds every input port, in port order.
    let k = desc
        .ports
        .iter()
        .filter(|p| p.role.is_input())
        .position(|p| p.name == "br_pc")
        .unwrap();
    for bit in 0..8 {
        let mut last = 0;
        let mut toggles = 0;
        for c in 0..log.cycles() {
            let v = log.values(c)[k].field(bit, 1);
            toggles += (v != last) as u64;
            last = v;
        }
        assert_eq!(g.toggles[&format!("br_pc[{bit}]")], toggles, "br_pc[{bit}]");
    }
    assert!(g.toggles.values().filter(|&&t| t > 0).count() > nets.len() / 4);
}

#[test]
fn a_netlist_with_broken_gates_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let Some(netlist) = netlist(dir.path()) else {
        return;
    };
    let (desc, params) = small_capt();
    // Every NAND2 becomes a NOR2 (same pins): a mapping bug.
    assert!(netlist.contains("NAND2X1"));
    let broken = netlist.replace("NAND2X1", "NOR2X1");
    let log = random_log(600);
    match gate_level_activity(desc, &params, &log, &broken, &dir.path().join("gates")) {
        Err(CosimError::Replay(e)) => {
            assert!(e.contains("differs from the model"), "{e}");
            assert!(e.contains("FAIL: cycle"), "{e}");
        }
        Err(CosimError::Toolchain(e)) => eprintln!("skipped: {e}"),
        Ok(g) => panic!("not caught: {}", g.verdict),
        Err(e) => panic!("{e}"),
    }
}
