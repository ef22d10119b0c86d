//! The generated Verilog of every unit against its Rust model under Verilator, every cycle,
//! zero tolerance (issue: RTL generation and co-simulation):
//! - every unit at each of its standard parameter sets (WARP_SIZE 8 and 64 included), at
//!   least 100,000 constrained-random cycles each;
//! - the directed vectors of spec §10 for both stacks;
//! - the port traffic of every instance (each warp's stack, each SM's scoreboard) recorded
//!   while every workload runs at tiny size, under SPE and under DPE;
//! - functional coverage: the random runs hit every bin the unit declares;
//! - mutants at every standard set: at least 10 broken variants of each unit's RTL killed,
//!   every survivor explained as equivalent by the unit's kit, at least 95% killed at the
//!   default parameters, every storage mutant (RAM ports, the units' own edits) run at the
//!   sets where it applies.
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

/// The unit named `name` (one of [`units`]).
fn unit(name: &str) -> &'static UnitDesc {
    units()
        .into_iter()
        .find(|u| u.name == name)
        .unwrap_or_else(|| panic!("no unit {name} with RTL"))
}

/// One test per unit with RTL, named after it, in a module named after the check: the
/// long checks (a model build per parameter set, many with an empty model cache) then
/// share the test threads unit by unit instead of running as one test after the others.
/// `UNITS` lists them; [`every_unit_with_rtl_has_its_own_tests`] keeps it complete.
macro_rules! per_unit_tests {
    ($check:path: $($unit:ident),+ $(,)?) => {
        pub(super) const UNITS: &[&str] = &[$(stringify!($unit)),+];
        $(
            #[test]
            fn $unit() {
                $check(super::unit(stringify!($unit)));
            }
        )+
    };
}

/// `cargo test --test integration cosim_units::random_stimulus_matches::` runs every unit's.
mod random_stimulus_matches {
    per_unit_tests!(super::random_stimulus_matches_at_every_standard_set:
        simt_stack_spe, simt_stack_dpe, dpe_scoreboard, capri_capt, slp_perm, wcu);
}

mod mutants_are_caught {
    per_unit_tests!(super::mutants_are_caught_at_every_standard_set:
        simt_stack_spe, simt_stack_dpe, dpe_scoreboard, capri_capt, slp_perm, wcu);
}

#[test]
fn every_unit_with_rtl_has_its_own_tests() {
    let names: Vec<&str> = units().iter().map(|u| u.name).collect();
    assert_eq!(random_stimulus_matches::UNITS, names);
    assert_eq!(mutants_are_caught::UNITS, names);
}

fn random_stimulus_matches_at_every_standard_set(desc: &'static UnitDesc) {
    let sets = desc.standard_params();
    assert!(sets.len() >= 3, "{}: three parameter sets", desc.name);
    if desc.params.iter().any(|p| p.name == "WARP_SIZE") {
        let sizes: Vec<u64> = sets.iter().map(|p| p.get("WARP_SIZE")).collect();
        assert!(sizes.contains(&8) && sizes.contains(&64), "{}", desc.name);
    }
    for params in sets {
        let c = cosim(desc, &params);
        // Every model's clock edge skips re-settling the unchanged inputs' logic, so
        // these runs check that this is equivalent (cosim/src/edge_eval.rs).
        assert!(
            c.built().edge_eval,
            "{} ({params}): the generated code did not allow the edge-only evaluation",
            desc.name
        );
        let mut stim = random_stimulus(desc, &params, 42, RANDOM_CYCLES);
        let s = c
            .run(&mut stim)
            .unwrap_or_else(|e| panic!("{} ({params}): {e}", desc.name));
        assert_eq!(s.cycles, RANDOM_CYCLES);
        // Coverage decides when random stimulus is enough: every declared bin is hit.
        assert!(
            s.coverage.unhit().is_empty(),
            "{} ({params}): coverage {}, never hit: {:?}",
            desc.name,
            s.coverage,
            s.coverage.unhit()
        );
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
            let small_stack = params.iter().any(|(n, v)| n == "DEPTH" && v <= 3);
            let least = if small_stack { 80 } else { 100 };
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

fn mutants_are_caught_at_every_standard_set(desc: &'static UnitDesc) {
    let g0 = warpforge_gen::generate(desc, &desc.standard_params()[0]).unwrap();
    let all = mutants::candidates(desc, &g0.files[0].1).unwrap();
    // Every storage mutant can differ from the original at some standard set.
    for m in all.iter().filter(|m| !mutants::CLASSES.contains(&m.class)) {
        assert!(
            desc.standard_params().iter().any(|p| m.applies(p)),
            "{}: {} applies at no standard set",
            desc.name,
            m.id
        );
    }
    for (i, params) in desc.standard_params().into_iter().enumerate() {
        let report = run_mutants_at(desc, i, &params, true);
        eprintln!("{report}");
        assert!(report.killed >= if i == 0 { 10 } else { 1 }, "{report}");
        // A survivor is either argued equivalent in the unit's kit or a stimulus gap.
        let gaps: Vec<&str> = report.unexplained().map(|r| r.id.as_str()).collect();
        assert!(
            gaps.is_empty(),
            "survivors {gaps:?} not explained: {report}"
        );
        if i == 0 {
            assert!(report.kill_ratio() >= 0.95, "{report}");
        }
    }
}

/// The mutants of [`mutants_are_caught_at_every_standard_set`] at standard set
/// `i` of `desc`, from one mutant-schema build or (`schema` off) each built alone.
fn run_mutants_at(
    desc: &'static UnitDesc,
    i: usize,
    params: &Params,
    schema: bool,
) -> mutants::MutantReport {
    let g = warpforge_gen::generate(desc, params).unwrap();
    // The default set runs the CLI's selection (16 operator mutants, 100,000 cycles); the
    // others half of that.
    let opts = MutantOptions {
        max_mutants: if i == 0 { 16 } else { 8 },
        max_cycles: if i == 0 { 100_000 } else { 50_000 },
        schema,
        ..MutantOptions::default()
    };
    mutants::run_mutants(
        desc,
        params,
        &RtlSource::cosim_of(&g),
        || random_stimulus(desc, params, 7, u64::MAX),
        &opts,
    )
    .unwrap_or_else(|e| panic!("{} ({params}): {e}", desc.name))
}

/// The mutant schema (`warpforge_cosim::mutant_schema`: one build, each mutant switched on
/// at run time) gives every mutant of every unit at every standard set the outcome of its
/// own build: killed at the same cycle on the same port, or surviving as many cycles.
/// (A `$stop`'s message names a line of the mutated file: the schema keeps every line's
/// number.) Heavy with an empty model cache (every mutant built alone): `cargo test --test
/// integration mutant_schema -- --ignored`.
#[test]
#[ignore]
fn the_mutant_schema_gives_every_mutant_the_outcome_of_its_own_build() {
    for desc in units() {
        for (i, params) in desc.standard_params().into_iter().enumerate() {
            let schema = run_mutants_at(desc, i, &params, true);
            let alone = run_mutants_at(desc, i, &params, false);
            // A mutant Verilator cannot build alone is no evidence either way (at `slp_perm`
            // S=4 an off-by-one part-select `m[LW-2:1]` = `m[0:1]` stops Verilator 5.006 with
            // an internal error, alone and inside the schema).
            let built_alone = |id: &str| {
                alone.results.iter().any(|r| {
                    r.id == id && !matches!(r.outcome, mutants::MutantOutcome::NotBuilt { .. })
                })
            };
            let outcomes = |r: &mutants::MutantReport| {
                r.results
                    .iter()
                    .filter(|m| built_alone(&m.id))
                    .map(|m| (m.id.clone(), m.outcome.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(outcomes(&schema), outcomes(&alone), "{schema}\n{alone}");
            let from_schema = schema.results.iter().filter(|r| r.from_schema).count();
            eprintln!(
                "{} ({params}): {} mutants, {from_schema} from the schema, {} compared (built \
                 alone), same outcomes",
                desc.name,
                schema.results.len(),
                outcomes(&schema).len()
            );
            // The schema builds unless one of its mutants does not build alone (then every
            // mutant was built alone, and the outcomes above are those builds').
            let some_not_built = alone
                .results
                .iter()
                .any(|r| matches!(r.outcome, mutants::MutantOutcome::NotBuilt { .. }));
            assert!(schema.schema_error.is_none() || some_not_built, "{schema}");
        }
    }
}

/// X checking (`BuildOptions::x_random`, `cosim --x-checks`): every unit's RTL at its default
/// parameters matches the model with random initial values and random X values, and a
/// mutant whose query output reads an out-of-range row (the scoreboard's `warp_ok` guard
/// removed: rows of warps 48..63 do not exist) passes two-state co-simulation, where the
/// read gives 0 like the model's "no hazard", and is caught only in X mode.
#[test]
fn x_checks_pass_the_rtl_and_catch_an_out_of_range_read() {
    let x = BuildOptions {
        x_random: Some(5),
        ..BuildOptions::default()
    };
    for desc in units() {
        let params = desc.standard_params().swap_remove(0);
        let g = warpforge_gen::generate(desc, &params).unwrap();
        let c = Cosim::new(desc, params.clone(), RtlSource::cosim_of(&g), &x).unwrap();
        c.run(&mut random_stimulus(desc, &params, 3, 50_000))
            .unwrap_or_else(|e| panic!("{} ({params}) in X mode: {e}", desc.name));
    }
    let desc = &warpforge_model::units::dpe_scoreboard::SCOREBOARD_DESC;
    let params = desc.standard_params().swap_remove(0);
    assert_eq!(
        params.get("NUM_WARPS"),
        48,
        "warp fields reach rows that do not exist"
    );
    let g = warpforge_gen::generate(desc, &params).unwrap();
    let file = RtlSource::cosim_of(&g).file_of_module(desc.name);
    let text = &RtlSource::cosim_of(&g).files[file].1;
    let guarded = "assign q_hazard[q] = rst_n && warp_ok && ";
    assert!(text.contains(guarded), "the template's query guard");
    let mutant = RtlSource::cosim_of(&g).with_file_text(
        file,
        text.replacen(guarded, "assign q_hazard[q] = rst_n && ", 1),
    );
    let run = |opts: &BuildOptions| {
        Cosim::new(desc, params.clone(), mutant.clone(), opts)
            .unwrap()
            .with_failure_dir(None)
            .run(&mut random_stimulus(desc, &params, 3, 50_000))
    };
    assert!(
        run(&BuildOptions::default()).is_ok(),
        "two-state cannot see it"
    );
    let err = run(&x).expect_err("X mode catches it");
    let d = err.divergence().expect("a divergence");
    assert_eq!(d.port(), "q_hazard", "{d}");
}
