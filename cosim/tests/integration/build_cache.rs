//! The build cache: a second build of the same design is a cache hit; concurrent builds
//! of one design produce one entry; a missing Verilator is a clear error.
use crate::common;

use common::*;
use std::time::{Duration, Instant};
use warpforge_cosim::build::{self, BuildOptions};
use warpforge_cosim::{Cosim, CosimError};

#[test]
fn second_build_is_a_cache_hit_and_concurrent_builds_share_one_entry() {
    let dir = tempfile::tempdir().unwrap();
    let opts = BuildOptions::with_cache_dir(dir.path());
    let params = COUNTER_DESC.params(&[("W", 9u64)]).unwrap();
    let rtl = counter_rtl(COUNTER_V);

    // Two threads race to build the same design into an empty cache.
    let (a, b) = std::thread::scope(|s| {
        let h1 = s.spawn(|| build::build(&COUNTER_DESC, &params, &rtl, &opts).unwrap());
        let h2 = s.spawn(|| build::build(&COUNTER_DESC, &params, &rtl, &opts).unwrap());
        (h1.join().unwrap(), h2.join().unwrap())
    });
    assert_eq!(a.library, b.library);
    assert_eq!(
        [a.cached, b.cached].iter().filter(|c| !**c).count(),
        1,
        "exactly one of the racing builds compiles"
    );
    let cold = if a.cached { &b } else { &a };
    eprintln!(
        "cold build: {:.2} s (verilate {:.2} s, compile+link {:.2} s)",
        cold.total_time.as_secs_f64(),
        cold.verilate_time.as_secs_f64(),
        cold.compile_time.as_secs_f64()
    );

    // A later build (new Cosim, load included) is a cache hit.
    let t = Instant::now();
    let c = Cosim::new(&COUNTER_DESC, params.clone(), rtl.clone(), &opts).unwrap();
    let load = t.elapsed();
    assert!(c.built().cached);
    assert_eq!(c.built().hash, cold.hash);
    eprintln!("cached build + load: {:.1} ms", load.as_secs_f64() * 1e3);

    // Anything that changes the model changes the key: parameters and text.
    let p10 = COUNTER_DESC.params(&[("W", 10u64)]).unwrap();
    let other = build::build(&COUNTER_DESC, &p10, &rtl, &opts).unwrap();
    assert_ne!(other.hash, cold.hash);
    assert!(!other.cached);
    let entries = std::fs::read_dir(dir.path().join("models"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert_eq!(
        entries.len(),
        2,
        "no temporary directories left: {entries:?}"
    );

    // Pruning keeps entries used recently and removes the rest.
    assert_eq!(
        build::prune_models(&opts, Duration::from_secs(3600)).unwrap(),
        0
    );
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        build::prune_models(&opts, Duration::from_millis(10)).unwrap(),
        2
    );
    assert!(!c.built().library.exists());
}

#[test]
fn missing_verilator_is_a_clear_error() {
    let opts = BuildOptions {
        verilator: "/nonexistent/verilator".into(),
        ..BuildOptions::default()
    };
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    match Cosim::new(&COUNTER_DESC, params, counter_rtl(COUNTER_V), &opts) {
        Err(CosimError::Toolchain(m)) => {
            assert!(m.contains("sudo apt-get install -y verilator"), "{m}")
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("built without verilator"),
    }
}

#[test]
fn verilog_errors_are_build_errors() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let bad = COUNTER_V.replace("assign hit", "assgn hit");
    match Cosim::new(&COUNTER_DESC, params, counter_rtl(&bad), &opts()) {
        Err(CosimError::Build { stage, log }) => {
            assert_eq!(stage, "verilate");
            assert!(log.contains("%Error"), "{log}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("bad Verilog built"),
    }
}
