use crate::common;

use common::*;
use warpforge_cosim::stimulus::RandomStimulus;
use warpforge_cosim::Cosim;

#[test]
fn toy_counter_matches_for_100k_random_cycles() {
    for w in [8u64, 12] {
        let params = COUNTER_DESC.params(&[("W", w)]).unwrap();
        let cosim = Cosim::new(
            &COUNTER_DESC,
            params.clone(),
            counter_rtl(COUNTER_V),
            &opts(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
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
