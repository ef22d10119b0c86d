//! Every integer configuration key at the top of its stated range, and one past it, from the
//! command line: the run either completes or stops with an error that names the problem —
//! never a panic, an abort or a runaway allocation (issue: the simulator's own memory safety).

use std::process::Command;
use warpforge_model::config_limits::KEY_LIMITS;

fn run_with(key: &str, value: u64) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args(["run", "--workload", "vecadd", "--size", "tiny"])
        .args(["--no-compare", "--no-cosim", "--quiet", "--set"])
        .arg(format!("{key}={value}"))
        .output()
        .expect("run warpforge");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

#[test]
fn every_key_at_its_maximum_runs_or_is_refused_with_a_clear_error() {
    for l in KEY_LIMITS {
        let (code, text) = run_with(l.key, l.max);
        assert!(
            !text.contains("panicked") && matches!(code, Some(0) | Some(1) | Some(2)),
            "{} = {}: exit {code:?}\n{text}",
            l.key,
            l.max
        );
        // Exit 1 is a launch the configuration cannot host (the error says why); exit 2 a
        // rule between keys (the error names a key).
        if code != Some(0) {
            assert!(text.contains("error"), "{} = {}: {text}", l.key, l.max);
        }
    }
}

#[test]
fn every_key_past_its_maximum_is_a_configuration_error_naming_it() {
    for l in KEY_LIMITS {
        let (code, text) = run_with(l.key, l.max + 1);
        assert_eq!(code, Some(2), "{} = {}: {text}", l.key, l.max + 1);
        assert!(
            text.contains(&format!("`{}`", l.key)) && !text.contains("panicked"),
            "{} = {}: {text}",
            l.key,
            l.max + 1
        );
    }
}
