mod common;

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
        assert_eq!(s.ports_compared, 5);
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
