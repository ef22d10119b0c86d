//! The generated `simt_stack_spe` (warpforge-gen) co-simulated against the model, cycle for
//! cycle, at every standard parameter set; and its mutants are caught.

use warpforge_cosim::mutants::{self, MutantOptions, MutantOutcome};
use warpforge_cosim::stack_stimulus::CfgStimulus;
use warpforge_cosim::stimulus::{Alternate, SpeRandom};
use warpforge_cosim::{BuildOptions, Cosim, RtlSource};
use warpforge_model::units::simt_stack::SPE_DESC;

#[test]
fn generated_spe_matches_the_model_at_every_standard_set() {
    for params in SPE_DESC.standard_params() {
        let cosim = Cosim::generated(&SPE_DESC, params.clone(), &BuildOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "simt_stack_spe ({params}): build {} {:.2} s",
            if cosim.built().cached {
                "cached"
            } else {
                "cold"
            },
            cosim.built().total_time.as_secs_f64()
        );
        let s = cosim
            .run(&mut CfgStimulus::new(&SPE_DESC, &params, 1, 100_000))
            .unwrap_or_else(|e| panic!("{e}"));
        eprintln!("  programs: {s}");
        assert_eq!(s.cycles, 100_000);
        let s = cosim
            .run(&mut SpeRandom::new(&params, 2, 100_000))
            .unwrap_or_else(|e| panic!("{e}"));
        eprintln!("  random:   {s}");
        assert_eq!(s.cycles, 100_000);
    }
}

#[test]
fn generated_spe_mutants_are_caught() {
    let params = SPE_DESC
        .params(&[("WARP_SIZE", 8u64), ("DEPTH", 4), ("PC_W", 16)])
        .unwrap();
    let unit = warpforge_gen::generate(&SPE_DESC, &params).unwrap();
    let rtl = RtlSource::cosim_of(&unit);
    let all = mutants::generate(unit.verilog());
    assert!(all.len() >= 10, "{} mutants", all.len());
    let opts = MutantOptions {
        max_mutants: 12,
        max_cycles: 40_000,
        ..Default::default()
    };
    let report = mutants::run_mutants(
        &SPE_DESC,
        &params,
        &rtl,
        || Alternate {
            a: CfgStimulus::new(&SPE_DESC, &params, 3, 40_000),
            b: SpeRandom::new(&params, 4, 40_000),
            period: 2_000,
        },
        &opts,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
    assert!(report.killed >= 10, "{report}");
    assert_eq!(report.survived, 0, "{report}");
    assert!(report
        .results
        .iter()
        .all(|r| !matches!(r.outcome, MutantOutcome::Survived { .. })));
}
