//! Lockstep throughput: `cargo bench -p warpforge-cosim` (release build).
//!
//! For each toy unit: the full lockstep loop (model + RTL + compare), and its parts: the
//! RTL alone (set inputs, settle, edge), the model alone, and the stimulus alone. Reports
//! the best of 3 runs of 2,000,000 cycles each.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use std::hint::black_box;
use std::time::Instant;
use warpforge_cosim::stimulus::RandomStimulus;
use warpforge_cosim::{Cosim, RtlSource, Stimulus};
use warpforge_model::units::contract::{Params, UnitDesc};

const CYCLES: u64 = 2_000_000;

fn best<F: FnMut() -> f64>(mut f: F) -> f64 {
    (0..3).map(|_| f()).fold(0.0, f64::max)
}

fn bench(desc: &'static UnitDesc, params: Params, rtl: RtlSource) {
    let t = Instant::now();
    let cosim = Cosim::new(desc, params.clone(), rtl, &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(None);
    println!(
        "{} ({params}): build {} in {:.3} s",
        desc.name,
        if cosim.built().cached {
            "cached"
        } else {
            "cold"
        },
        t.elapsed().as_secs_f64()
    );
    let stim = || RandomStimulus::new(desc, &params, 1, CYCLES).with_reset_one_in(100_000);

    let lockstep = best(|| {
        let s = cosim.run(&mut stim()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.cycles, CYCLES);
        s.cycles_per_sec
    });

    let mut ports = desc.zero_ports(&params);
    let rtl_only = best(|| {
        let mut rtl = cosim.rtl_model(false).unwrap();
        let mut st = stim();
        rtl.reset().unwrap();
        let t = Instant::now();
        for c in 0..CYCLES {
            st.drive(c, &mut ports);
            rtl.set_inputs(&ports);
            rtl.eval().unwrap();
            black_box(rtl.first_mismatch(&ports));
            rtl.edge().unwrap();
        }
        CYCLES as f64 / t.elapsed().as_secs_f64()
    });

    let model_only = best(|| {
        let mut m = (desc.build)(&params);
        let mut st = stim();
        let t = Instant::now();
        for c in 0..CYCLES {
            st.drive(c, &mut ports);
            m.outputs(&mut ports);
            m.tick(&ports);
        }
        black_box(&ports);
        CYCLES as f64 / t.elapsed().as_secs_f64()
    });

    let stim_only = best(|| {
        let mut st = stim();
        let t = Instant::now();
        for c in 0..CYCLES {
            st.drive(c, &mut ports);
        }
        black_box(&ports);
        CYCLES as f64 / t.elapsed().as_secs_f64()
    });

    let m = |x: f64| x / 1e6;
    println!(
        "  lockstep {:.2} M cycles/s | RTL alone (incl. stimulus + compare) {:.2} M/s | \
         model alone (incl. stimulus) {:.2} M/s | stimulus alone {:.2} M/s",
        m(lockstep),
        m(rtl_only),
        m(model_only),
        m(stim_only)
    );
}

/// The model side alone of simt_stack_spe WARP_SIZE=32 DEPTH=16 (its RTL comes from
/// warpforge-gen): the lockstep rate cannot exceed this.
fn spe_model_only() {
    use warpforge_model::units::simt_stack::SPE_DESC;
    let params = SPE_DESC
        .params(&[("WARP_SIZE", 32u64), ("DEPTH", 16)])
        .unwrap();
    let mut ports = SPE_DESC.zero_ports(&params);
    let rate = best(|| {
        let mut m = (SPE_DESC.build)(&params);
        let mut st = RandomStimulus::new(&SPE_DESC, &params, 1, CYCLES).with_reset_one_in(64);
        let t = Instant::now();
        for c in 0..CYCLES {
            st.drive(c, &mut ports);
            m.outputs(&mut ports);
            m.tick(&ports);
        }
        black_box(&ports);
        CYCLES as f64 / t.elapsed().as_secs_f64()
    });
    println!(
        "simt_stack_spe ({params}): model alone (random inputs, incl. stimulus) {:.2} M cycles/s",
        rate / 1e6
    );
}

fn main() {
    spe_model_only();
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing useful either.
    bench(
        &COUNTER_DESC,
        COUNTER_DESC.params(&[("W", 32u64)]).unwrap(),
        counter_rtl(COUNTER_V),
    );
    bench(
        &PTRS_DESC,
        PTRS_DESC.params::<&str>(&[]).unwrap(),
        ptrs_rtl(),
    );
}
