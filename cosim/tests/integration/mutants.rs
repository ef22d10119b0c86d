//! The harness must catch broken RTL: mutants of a toy unit are generated, built and run,
//! and every one that builds is killed.
use crate::common;

use common::*;
use std::collections::HashSet;
use warpforge_cosim::mutants::{self, MutantClass, MutantOptions, MutantOutcome};
use warpforge_cosim::stimulus::RandomStimulus;

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
    let outcomes = |r: &mutants::MutantReport| {
        r.results
            .iter()
            .map(|m| (m.id.clone(), m.outcome.clone()))
            .collect::<Vec<_>>()
    };
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
