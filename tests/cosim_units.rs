//! The generated Verilog of every unit against its Rust model under Verilator, every cycle,
//! zero tolerance (issue: RTL generation and co-simulation):
//! - every unit at each of its standard parameter sets (WARP_SIZE 8 and 64 included), at
//!   least 100,000 constrained-random cycles each;
//! - the directed vectors of spec §10 for both stacks;
//! - the port traffic of every instance (each warp's stack, each SM's scoreboard) recorded
//!   while every workload runs at tiny size, under SPE and under DPE;
//! - mutants: at least 10 broken variants of each unit's RTL, every one caught, and every
//!   storage mutant (RAM ports, the units' own storage edits) at a set where it applies.
//!
//! Needs Verilator and g++ (`./scripts/install-tools.sh`); built models are cached in
//! `~/.cache/warpforge`, so only the first run pays for the builds.

use warpforge_cosim::kits::{self, random_stimulus};
use warpforge_cosim::mutants::{self, MutantOptions};
use warpforge_cosim::{BuildOptions, Cosim, RtlSource};
use warpforge_model::config::{GpuConfig, Reconvergence};
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::units::contract::{GpuUse, Params, UnitDesc};
use warpforge_workloads::Size;

const RANDOM_CYCLES: u64 = 100_000;

fn units() -> Vec<&'static UnitDesc> {
    let units = warpforge_gen::units_with_templates();
    let names: Vec<&str> = units.iter().map(|u| u.name).collect();
    for expected in ["simt_stack_spe", "simt_stack_dpe", "dpe_scoreboard"] {
        assert!(names.contains(&expected), "{expected} has RTL");
    }
    units
}

fn cosim(desc: &'static UnitDesc, params: &Params) -> Cosim {
    let g = warpforge_gen::generate(desc, params).unwrap();
    Cosim::new(
        desc,
        params.clone(),
        RtlSource::cosim_of(&g),
        &BuildOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{} ({params}): {e}", desc.name))
}

#[test]
fn every_unit_matches_its_rtl_on_random_stimulus_at_its_standard_parameter_sets() {
    for desc in units() {
        let sets = desc.standard_params();
        assert!(sets.len() >= 3, "{}: three parameter sets", desc.name);
        if desc.params.iter().any(|p| p.name == "WARP_SIZE") {
            let sizes: Vec<u64> = sets.iter().map(|p| p.get("WARP_SIZE")).collect();
            assert!(sizes.contains(&8) && sizes.contains(&64), "{}", desc.name);
        }
        for params in sets {
            let c = cosim(desc, &params);
            let mut stim = random_stimulus(desc, &params, 42, RANDOM_CYCLES);
            let s = c
                .run(&mut stim)
                .unwrap_or_else(|e| panic!("{} ({params}): {e}", desc.name));
            assert_eq!(s.cycles, RANDOM_CYCLES);
        }
    }
}

#[test]
fn every_unit_with_directed_vectors_matches_its_rtl_on_them() {
    for desc in units() {
        let Some(directed) = kits::kit(desc).and_then(|k| k.directed) else {
            continue;
        };
        for params in desc.standard_params() {
            let c = cosim(desc, &params);
            let s = c
                .run(&mut directed(desc, &params))
                .unwrap_or_else(|e| panic!("{} ({params}): {e}", desc.name));
            // The smallest stacks (DEPTH 2 and 3: one RAM word) leave out the vectors that
            // nest deeper than they are; the rest still runs.
            let least = if params.get("DEPTH") <= 3 { 80 } else { 100 };
            assert!(
                s.cycles > least,
                "{} ({params}): {} cycles",
                desc.name,
                s.cycles
            );
        }
    }
}

#[test]
fn every_instance_of_every_workload_at_tiny_size_matches_the_rtl() {
    for reconvergence in [Reconvergence::Spe, Reconvergence::Dpe] {
        let mut cfg = GpuConfig::preset("gtx480", &[]).unwrap();
        cfg.sm.reconvergence = reconvergence;
        // Every unit with RTL that the configuration instantiates (the registry's GPU use).
        let recorded: Vec<&'static UnitDesc> = units()
            .into_iter()
            .filter(|u| matches!((u.gpu)(&cfg), GpuUse::Instantiated { .. }))
            .collect();
        assert_eq!(
            recorded.len(),
            2,
            "a stack and the scoreboard under {reconvergence:?}"
        );
        let mut built: Vec<(Params, Cosim)> = vec![];
        let mut instances = vec![0usize; recorded.len()];
        for w in warpforge_workloads::all() {
            let mut gpu = Gpu::new(cfg.clone(), Mode::Timing);
            for u in &recorded {
                gpu.record_unit(u.name).unwrap();
            }
            let v = w.run(&mut gpu, Size::Tiny, 5).unwrap();
            assert!(v.passed, "{}", w.name());
            let traces = gpu.take_traces();
            assert_eq!(
                traces.len(),
                recorded.len(),
                "{}: one trace per unit",
                w.name()
            );
            for rec in traces {
                let trace = rec.into_trace(w.name());
                let k = recorded
                    .iter()
                    .position(|u| std::ptr::eq(*u, trace.desc))
                    .expect("a recorded unit");
                if !built.iter().any(|(p, _)| *p == trace.params) {
                    built.push((trace.params.clone(), cosim(trace.desc, &trace.params)));
                }
                let c = &built.iter().find(|(p, _)| *p == trace.params).unwrap().1;
                let s = c
                    .run_trace(&trace)
                    .unwrap_or_else(|e| panic!("{} {:?}: {e}", w.name(), reconvergence));
                instances[k] += s.len();
            }
        }
        // Every warp's stack of every SM, every SM's scoreboard.
        for (u, n) in recorded.iter().zip(&instances) {
            assert!(*n >= 14, "{} instances replayed: {n}", u.name);
        }
        assert!(
            instances.iter().any(|&n| n > 100),
            "warp stacks replayed: {instances:?}"
        );
    }
}

#[test]
fn every_mutant_of_every_unit_is_caught() {
    for desc in units() {
        // The smallest standard set keeps the builds quick; the stimulus is the same.
        let params = desc.standard_params().swap_remove(1);
        let g = warpforge_gen::generate(desc, &params).unwrap();
        let rtl = RtlSource::cosim_of(&g);
        let opts = MutantOptions {
            max_mutants: 12,
            max_cycles: 50_000,
            ..MutantOptions::default()
        };
        let report = mutants::run_mutants(
            desc,
            &params,
            &rtl,
            || random_stimulus(desc, &params, 7, u64::MAX),
            &opts,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", desc.name));
        eprintln!("{report}");
        assert!(report.killed >= 10, "{report}");
        // A mutant can be equivalent at one parameter set (e.g. a flipped test of the
        // DUAL parameter when DUAL=1); it must then be caught at another standard set,
        // built from the same mutated text with those parameters.
        let all = mutants::candidates(desc, &g.files[0].1).unwrap();
        for survivor in report.survivors() {
            let m = all.iter().find(|m| m.id == survivor.id).unwrap();
            let caught = desc
                .standard_params()
                .into_iter()
                .filter(|p| *p != params && p.iter().map(|(_, v)| v).product::<u64>() < 1 << 24)
                .any(|p| {
                    // The same mutant of the RTL generated at the other set (the localparams
                    // are rendered per set): the same id and edit.
                    let other = warpforge_gen::generate(desc, &p).unwrap();
                    let Some(same) = mutants::candidates(desc, &other.files[0].1)
                        .unwrap()
                        .into_iter()
                        .find(|o| o.id == m.id && o.description == m.description)
                    else {
                        return false;
                    };
                    let rtl = RtlSource::cosim_of(&other).with_file_text(0, same.text);
                    let c = Cosim::new(desc, p.clone(), rtl, &BuildOptions::default())
                        .unwrap()
                        .with_failure_dir(None);
                    c.run(&mut random_stimulus(desc, &p, 7, 50_000)).is_err()
                });
            assert!(
                caught,
                "{} survives at every standard set: {report}",
                survivor.id
            );
        }
        // The storage mutants that are equivalent at this set (e.g. of the asynchronous
        // read when this set reads registered) run at the first standard set where they
        // are not, and are caught there.
        for m in all
            .iter()
            .filter(|m| !mutants::CLASSES.contains(&m.class) && !m.applies(&params))
        {
            let p = desc
                .standard_params()
                .into_iter()
                .find(|p| m.applies(p))
                .unwrap_or_else(|| panic!("{}: {} applies at no standard set", desc.name, m.id));
            let other = warpforge_gen::generate(desc, &p).unwrap();
            let same = mutants::candidates(desc, &other.files[0].1)
                .unwrap()
                .into_iter()
                .find(|o| o.id == m.id && o.description == m.description)
                .unwrap();
            let rtl = RtlSource::cosim_of(&other).with_file_text(0, same.text);
            let c = Cosim::new(desc, p.clone(), rtl, &BuildOptions::default())
                .unwrap()
                .with_failure_dir(None);
            assert!(
                c.run(&mut random_stimulus(desc, &p, 7, 50_000)).is_err(),
                "{} ({p}): storage mutant {} {} survives",
                desc.name,
                m.id,
                m.description
            );
        }
    }
}
