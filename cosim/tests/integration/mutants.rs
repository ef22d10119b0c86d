//! The harness must catch broken RTL: mutants of a toy unit are generated, built and run,
//! and every one that builds is killed.
use crate::common;

use common::*;
use std::collections::HashSet;
use warpforge_cosim::mutants::{self, MutantClass, MutantOptions, MutantOutcome};
use warpforge_cosim::stimulus::RandomStimulus;
use warpforge_cosim::{mutant_schema, Cosim};

#[test]
fn toy_ptrs_mutants_are_generated_and_all_killed() {
    let all = mutants::generate(PTRS_V);
    let texts: HashSet<&str> = all.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts.len(), all.len(), "mutants are distinct");
    assert!(all.len() >= 10, "{} mutants", all.len());
    let classes: HashSet<MutantClass> = all.iter().map(|m| m.class).collect();
    assert_eq!(classes.len(), mutants::CLASSES.len(), "every class applies");

    let params = PTRS_DESC.params::<&str>(&[]).unwrap();
    let run = |schema: bool| {
        let opts = MutantOptions {
            max_mutants: 14,
            max_cycles: 20_000,
            build: opts(),
            file: None,
            schema,
        };
        mutants::run_mutants(
            &PTRS_DESC,
            &params,
            &ptrs_rtl(),
            || RandomStimulus::new(&PTRS_DESC, &params, 11, 20_000).with_reset_one_in(50),
            &opts,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let report = run(true);
    eprintln!("{report}");
    // The mutant schema (one build, each mutant switched on at run time) gives every
    // mutant the outcome of its own build: the same cycle, the same port.
    let alone = run(false);
    assert!(alone.results.iter().all(|r| !r.from_schema));
    assert_eq!(outcomes(&report), outcomes(&alone), "{report}\n{alone}");
    let from_schema = report.results.iter().filter(|r| r.from_schema).count();
    assert!(
        from_schema >= 12,
        "{from_schema} of 14 from the schema\n{report}"
    );
    assert_eq!(report.results.len(), 14);
    assert_eq!(report.generated, all.len());
    let run_classes: HashSet<MutantClass> = report.results.iter().map(|r| r.class).collect();
    assert_eq!(run_classes.len(), mutants::CLASSES.len());
    assert_eq!(report.survived, 0, "{report}");
    assert!(report.killed >= 10, "{report}");
    assert_eq!(report.kill_ratio(), 1.0);
    for r in &report.results {
        assert!(
            matches!(
                r.outcome,
                MutantOutcome::Killed { .. } | MutantOutcome::KilledByError { .. }
            ),
            "{report}"
        );
    }
}

/// Every mutant of the toy (not only a selection): `cargo test -p warpforge-cosim --test
/// mutants -- --ignored` (about a minute and a half on two cores, cached afterwards).
#[test]
#[ignore]
fn toy_ptrs_all_mutants() {
    let params = PTRS_DESC.params::<&str>(&[]).unwrap();
    let opts = MutantOptions {
        max_mutants: usize::MAX,
        max_cycles: 20_000,
        build: opts(),
        file: None,
        schema: true,
    };
    let report = mutants::run_mutants(
        &PTRS_DESC,
        &params,
        &ptrs_rtl(),
        || RandomStimulus::new(&PTRS_DESC, &params, 11, 20_000).with_reset_one_in(50),
        &opts,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
    assert_eq!(report.results.len(), report.generated);
    assert_eq!(report.survived, 0, "{report}");
}

/// The mutant schema switches a continuous assignment between its variants; each variant
/// must keep the width and sign context it has when built alone (an unsized `2` in place of
/// `1'b1` widens the whole right-hand side, so a plain conditional would also widen the
/// original branch, and `(a + 1'b1) >> 1` would keep its carry). Every mutant of a toy made
/// of such assignments runs from the schema and alone, with the same outcome.
#[test]
fn width_sensitive_mutants_have_the_same_outcome_in_the_schema_as_alone() {
    let params = WIDTHS_DESC.params::<&str>(&[]).unwrap();
    let stimulus = || RandomStimulus::new(&WIDTHS_DESC, &params, 5, 4_000).with_reset_one_in(200);
    let run = |schema: bool| {
        let opts = MutantOptions {
            max_mutants: usize::MAX,
            max_cycles: 4_000,
            build: opts(),
            file: None,
            schema,
        };
        mutants::run_mutants(&WIDTHS_DESC, &params, &widths_rtl(), stimulus, &opts)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // The schema with no mutant switched on (selector 0) is the original design: every
    // original branch keeps its context (`half` is 0, not 8, at a = 15).
    let all = mutants::generate(WIDTHS_V);
    let (src, _) = mutant_schema::source("toy_widths", &widths_rtl(), 0, &all).unwrap();
    let original = Cosim::new(&WIDTHS_DESC, params.clone(), src, &opts())
        .and_then(|c| c.with_mutant(0))
        .unwrap_or_else(|e| panic!("{e}"));
    let summary = original
        .with_failure_dir(None)
        .run(&mut stimulus())
        .unwrap_or_else(|e| panic!("the schema's original design diverges: {e}"));
    assert_eq!(summary.cycles, 4_000);
    let schema = run(true);
    let alone = run(false);
    eprintln!("{schema}");
    assert_eq!(outcomes(&schema), outcomes(&alone), "{schema}\n{alone}");
    assert_eq!(schema.results.len(), schema.generated, "{schema}");
    assert!(schema.generated >= 9, "{schema}");
    // Every one of them is a continuous assignment's variant, and all are in the schema.
    assert!(schema.results.iter().all(|r| r.from_schema), "{schema}");
    assert_eq!(schema.killed, schema.generated, "{schema}");
}

/// Each mutant's id with its outcome, in the report's order.
fn outcomes(r: &mutants::MutantReport) -> Vec<(String, MutantOutcome)> {
    r.results
        .iter()
        .map(|m| (m.id.clone(), m.outcome.clone()))
        .collect()
}
