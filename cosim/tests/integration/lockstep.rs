use crate::common;

use common::*;
use warpforge_cosim::stimulus::RandomStimulus;
use warpforge_cosim::Cosim;

#[test]
fn toy_counter_matches_for_100k_random_cycles() {
    for w in [8u64, 12] {
        let params = COUNTER_DESC.params(&[("W", w)]).unwrap();
        let cosim = counter_cosim(&params, COUNTER_V);
        eprintln!(
            "toy_counter W={w}: cached={} total={:?} verilate={:?} compile={:?}",
            cosim.built().cached,
            cosim.built().total_time,
            cosim.built().verilate_time,
            cosim.built().compile_time
        );
        let mut stim = RandomStimulus::new(&COUNTER_DESC, &params, w, 100_000);
        let s = cosim.run(&mut stim).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{s}");
        assert_eq!(s.cycles, 100_000);
        // Four outputs every cycle; the debug port every STATE_INTERVAL cycles from cycle
        // 0, and once more after the last edge.
        assert_eq!((s.ports_compared, s.state_ports), (4, 1));
        assert_eq!(
            s.state_samples,
            100_000u64.div_ceil(warpforge_cosim::lockstep::STATE_INTERVAL) + 1
        );
    }
}

#[test]
fn toy_ptrs_matches_for_100k_random_cycles() {
    let params = PTRS_DESC.params::<&str>(&[]).unwrap();
    let cosim = Cosim::new(&PTRS_DESC, params.clone(), ptrs_rtl(), &opts())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stim = RandomStimulus::new(&PTRS_DESC, &params, 7, 100_000).with_reset_one_in(200);
    let s = cosim.run(&mut stim).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{s}");
    assert_eq!(s.cycles, 100_000);
    assert_eq!(s.ports_compared, 8);
}

/// A design in several files: the top instantiates a submodule from another file and
/// includes a header; every file takes part in the build and the cache key.
#[test]
fn multi_file_design_with_submodule_and_include() {
    let top = COUNTER_V
        .replace(
            "  assign hit = rst_n && (din[3:0] == count[3:0]);",
            "  `include \"toy_defs.vh\"\n  toy_eq4 u_eq (.a(din[3:0]), .b(count[3:0]), .en(rst_n), .y(hit));",
        );
    let sub = "module toy_eq4 (input [3:0] a, input [3:0] b, input en, output y);\n  assign y = en && (a == b);\nendmodule\n";
    let defs = "  localparam TOY_DEFS = 1;\n";
    let rtl = warpforge_cosim::RtlSource::new(
        "toy_counter",
        vec![
            ("toy_counter.v".into(), top),
            ("toy_eq4.v".into(), sub.into()),
            ("toy_defs.vh".into(), defs.into()),
        ],
    );
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let cosim =
        Cosim::new(&COUNTER_DESC, params.clone(), rtl, &opts()).unwrap_or_else(|e| panic!("{e}"));
    let mut stim = RandomStimulus::new(&COUNTER_DESC, &params, 5, 20_000);
    let s = cosim.run(&mut stim).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.cycles, 20_000);
}

/// The bins that read the unit's internal state (`reset while dbg_P`, `reset while
/// dbg_valid`) see the state of the cycle they sample, not the last state comparison's:
/// the coverage, and so the steered stimulus, is the same whether the state is compared
/// every cycle or every 1,000, by name in the sequential loop (the typed model side off)
/// or on the typed model side, on one thread or two.
#[test]
fn coverage_of_the_internal_state_does_not_depend_on_how_often_it_is_compared() {
    use warpforge_cosim::kits::KITS;
    use warpforge_cosim::lockstep::Pipelining;
    for name in ["dpe_scoreboard", "capri_capt"] {
        let kit = KITS.iter().find(|k| k.unit.name == name).unwrap();
        let params = kit.unit.params::<&str>(&[]).unwrap();
        let cosim = Cosim::generated(kit.unit, params.clone(), &opts())
            .unwrap_or_else(|e| panic!("{e}"))
            .with_failure_dir(None);
        let bins = |every: u64, p: Pipelining, typed: bool| {
            let c = (cosim.clone().with_state_interval(every))
                .with_pipelining(p)
                .with_typed_model_side(typed);
            let s = c
                .run(&mut (kit.random)(kit.unit, &params, 3, 30_000))
                .unwrap_or_else(|e| panic!("{e}"));
            let bins: Vec<(String, u64)> = s
                .coverage
                .bins_hit()
                .map(|(b, n)| (b.to_string(), n))
                .collect();
            bins
        };
        let every_cycle = bins(1, Pipelining::Never, false);
        let resets = every_cycle
            .iter()
            .find(|(b, _)| b.starts_with("reset while dbg_"))
            .unwrap();
        assert!(resets.1 > 0, "{name}: {resets:?}");
        for (every, p, typed) in [
            (64, Pipelining::Never, false),
            (1000, Pipelining::Never, false),
            (1000, Pipelining::Never, true),
            (1000, Pipelining::Always, true),
            (64, Pipelining::Always, false),
        ] {
            let what = format!("{name}: every {every}, {p:?}, typed {typed}");
            assert_eq!(bins(every, p, typed), every_cycle, "{what}");
        }
    }
}
