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

fn bench_random(desc: &'static UnitDesc, params: Params, rtl: RtlSource) {
    let p = params.clone();
    bench(desc, params, rtl, "random inputs", move || {
        RandomStimulus::new(desc, &p, 1, CYCLES).with_reset_one_in(100_000)
    });
}

fn bench<S: Stimulus>(
    desc: &'static UnitDesc,
    params: Params,
    rtl: RtlSource,
    what: &str,
    stim: impl Fn() -> S,
) {
    let t = Instant::now();
    let cosim = Cosim::new(desc, params.clone(), rtl, &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(None);
    println!(
        "{} ({params}), {what}: build {} in {:.3} s",
        desc.name,
        if cosim.built().cached {
            "cached"
        } else {
            "cold"
        },
        t.elapsed().as_secs_f64()
    );
    let lockstep = best(|| {
        let s = cosim.run(&mut stim()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.cycles, CYCLES);
        s.cycles_per_sec
    });

    let mut ports = desc.zero_ports(&params);
    // The RTL alone cannot feed a stimulus that reads outputs: it replays the inputs the
    // lockstep run drove (recorded first, outside the timing).
    let mut log = vec![];
    {
        let mut m = (desc.build)(&params);
        let mut st = stim();
        for c in 0..CYCLES {
            m.outputs(&mut ports);
            st.drive(c, &mut ports);
            log.push(ports.clone());
            m.outputs(&mut ports);
            m.tick(&ports);
        }
    }
    let rtl_only = best(|| {
        let mut rtl = cosim.rtl_model(false).unwrap();
        rtl.reset().unwrap();
        let t = Instant::now();
        for p in &log {
            rtl.set_inputs(p);
            rtl.eval().unwrap();
            black_box(rtl.first_mismatch(p));
            rtl.edge().unwrap();
        }
        CYCLES as f64 / t.elapsed().as_secs_f64()
    });

    let model_only = best(|| {
        let mut m = (desc.build)(&params);
        let mut st = stim();
        let t = Instant::now();
        for c in 0..CYCLES {
            if st.reads_outputs() {
                m.outputs(&mut ports);
            }
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
        "  lockstep {:.2} M cycles/s | RTL alone (recorded inputs, incl. compare) {:.2} M/s | \
         model alone (incl. stimulus) {:.2} M/s | stimulus alone {:.2} M/s",
        m(lockstep),
        m(rtl_only),
        m(model_only),
        m(stim_only)
    );
}

fn main() {
    use warpforge_cosim::stack_stimulus::CfgStimulus;
    use warpforge_cosim::stimulus::SpeRandom;
    use warpforge_model::units::simt_stack::SPE_DESC;
    let params = SPE_DESC
        .params(&[("WARP_SIZE", 32u64), ("DEPTH", 16)])
        .unwrap();
    let unit = warpforge_gen::generate(&SPE_DESC, &params).unwrap();
    let rtl = RtlSource::new(unit.module().to_string(), unit.files.clone());
    let p = params.clone();
    bench(
        &SPE_DESC,
        params.clone(),
        rtl.clone(),
        "random programs (CfgStimulus)",
        move || CfgStimulus::new(&SPE_DESC, &p, 1, CYCLES),
    );
    let p = params.clone();
    bench(
        &SPE_DESC,
        params,
        rtl,
        "constrained random (SpeRandom)",
        move || SpeRandom::new(&p, 1, CYCLES),
    );
    bench_random(
        &COUNTER_DESC,
        COUNTER_DESC.params(&[("W", 32u64)]).unwrap(),
        counter_rtl(COUNTER_V),
    );
    bench_random(
        &PTRS_DESC,
        PTRS_DESC.params::<&str>(&[]).unwrap(),
        ptrs_rtl(),
    );
}
