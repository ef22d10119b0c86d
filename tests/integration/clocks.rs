//! Clock domains and named counters: an SM at half frequency, per-SM clocks, a frequency
//! change in the middle of a kernel, the icnt and L2 clocks, counters by name against the
//! aggregate statistics, interval snapshots against the totals, bad clock input; and the
//! other knobs made real with them (`l1.banks`, `l1/l2.replacement`).

use std::process::Command;

use warpforge_model::config::GpuConfig;
use warpforge_model::counters::Counters;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::stats::KernelStats;
use warpforge_model::timing::clock::Clocks;
use warpforge_workloads::Size;

fn cfg(sets: &[&str]) -> GpuConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    GpuConfig::preset("gtx480", &sets).unwrap()
}

fn run_gpu(name: &str, size: Size, mut gpu: Gpu) -> Gpu {
    let w = warpforge_workloads::by_name(name).unwrap();
    let v = w
        .run(&mut gpu, size, 7)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(v.passed, "{name} failed verification: {}", v.detail);
    gpu
}

fn run(name: &str, size: Size, c: GpuConfig) -> Gpu {
    run_gpu(name, size, Gpu::new(c, Mode::Timing))
}

/// Simulated nanoseconds of every launch together.
fn time_ns(g: &Gpu) -> f64 {
    g.launches.iter().map(|l| l.time_ns).sum()
}

fn ticks(g: &Gpu) -> u64 {
    g.launches.iter().map(|l| l.cycles).sum()
}

#[test]
fn half_frequency_sms_double_a_compute_bound_kernel_and_barely_change_a_memory_bound_one() {
    // mandelbrot: the escape loop is ALU work on registers.
    let full = run("mandelbrot", Size::Small, cfg(&[]));
    let half = run("mandelbrot", Size::Small, cfg(&["clocks.core_mhz=350"]));
    let r = time_ns(&half) / time_ns(&full);
    assert!((1.85..=2.05).contains(&r), "compute-bound ratio {r}");
    // The time base stays at 700 MHz (the icnt and L2 clocks): the ticks double too, and
    // each SM counts half as many cycles of its own clock as there are ticks.
    assert_eq!(half.launches[0].base_mhz, 700.0);
    let l = &half.launches[0];
    for s in &l.per_sm {
        assert_eq!(s.mhz, 350.0);
        assert!(
            s.cycles.abs_diff(l.cycles / 2) <= 1,
            "{} vs {}",
            s.cycles,
            l.cycles
        );
    }
    // vecadd at default size streams 3 x 4 MB through DRAM: bandwidth-bound.
    let full = run("vecadd", Size::Default, cfg(&[]));
    let half = run("vecadd", Size::Default, cfg(&["clocks.core_mhz=350"]));
    let r = time_ns(&half) / time_ns(&full);
    assert!((0.95..=1.10).contains(&r), "memory-bound ratio {r}");
}

#[test]
fn each_sm_runs_at_its_own_clock() {
    // SM 0 at half the others' clock: it counts half as many cycles per launch, and the
    // dispatcher hands it fewer blocks (it frees its slots more slowly).
    let g = run(
        "mandelbrot",
        Size::Small,
        cfg(&["clocks.sm_mhz=[350.0, 700.0]"]),
    );
    for l in &g.launches {
        let (s0, s1, s2) = (&l.per_sm[0], &l.per_sm[1], &l.per_sm[2]);
        assert_eq!((s0.mhz, s1.mhz, s2.mhz), (350.0, 700.0, 700.0));
        assert_eq!(s1.cycles, l.cycles);
        assert!(s0.cycles.abs_diff(l.cycles / 2) <= 1);
        assert!(
            s0.warp_instructions < s1.warp_instructions,
            "{} vs {}",
            s0.warp_instructions,
            s1.warp_instructions
        );
    }
}

#[test]
fn a_frequency_change_in_the_middle_of_a_kernel_takes_effect() {
    let c = cfg(&["sim.interval_cycles=1000"]);
    let full = run("mandelbrot", Size::Small, c.clone());
    let mut gpu = Gpu::new(c.clone(), Mode::Timing);
    let mut changed_at = None;
    gpu.set_interval_hook(Box::new(
        move |now: u64, counters: &Counters, clocks: &mut Clocks| {
            // a DVFS-like rule reading a counter by name: slow every SM at the first boundary
            assert!(counters.get("sm0.warp_instructions").is_some());
            if changed_at.is_none() {
                changed_at = Some(now);
                for sm in 0..clocks.sms.len() {
                    clocks.set_sm_khz(sm, 350_000).unwrap();
                }
            }
        },
    ));
    let slowed = run_gpu("mandelbrot", Size::Small, gpu);
    let half = run("mandelbrot", Size::Small, cfg(&["clocks.core_mhz=350"]));
    let (a, b, h) = (ticks(&full), ticks(&slowed), ticks(&half));
    assert!(
        a < b && b < h,
        "700 MHz {a}, slowed after 1000 ticks {b}, 350 MHz {h}"
    );
    // SM 0 ticked every base tick in the first interval and every other one afterwards.
    let l = &slowed.launches[0];
    let s = l.intervals.series("sm0.cycles").unwrap();
    assert_eq!(s[0], 1000);
    assert!(s[1..s.len() - 1].iter().all(|&c| c == 500), "{s:?}");
    assert_eq!(l.per_sm[0].mhz, 350.0);
}

#[test]
fn the_icnt_and_l2_clocks_are_real() {
    let base = ticks(&run("vecadd", Size::Small, cfg(&[])));
    for key in ["clocks.icnt_mhz=350", "clocks.l2_mhz=350"] {
        let slow = run("vecadd", Size::Small, cfg(&[key]));
        assert_eq!(slow.launches[0].base_mhz, 700.0);
        assert!(ticks(&slow) > base, "{key}: {} vs {base}", ticks(&slow));
    }
    // A faster L2 clock raises the time base: ticks are then 1400 MHz ticks, and the SMs
    // tick every other one.
    let fast = run("vecadd", Size::Small, cfg(&["clocks.l2_mhz=1400"]));
    let l = &fast.launches[0];
    assert_eq!(l.base_mhz, 1400.0);
    assert!(l.per_sm[0].cycles.abs_diff(l.cycles / 2) <= 1);
}

fn sum_sm(l: &KernelStats, field: &str) -> u64 {
    (0..l.per_sm.len())
        .map(|i| l.counters.get(&format!("sm{i}.{field}")).unwrap())
        .sum()
}

#[test]
fn counters_by_name_equal_the_aggregate_statistics() {
    for w in ["bfs", "histogram", "sgemm"] {
        let g = run(w, Size::Tiny, cfg(&[]));
        for l in &g.launches {
            assert_eq!(sum_sm(l, "warp_instructions"), l.warp_instructions);
            assert_eq!(sum_sm(l, "thread_instructions"), l.thread_instructions);
            assert_eq!(sum_sm(l, "issued_paths"), l.issued_paths);
            assert_eq!(sum_sm(l, "stall.mem_data"), l.stalls.memory_data);
            assert_eq!(sum_sm(l, "stall.fetch"), l.stalls.fetch);
            assert_eq!(sum_sm(l, "shared_accesses"), l.mem.shared_accesses);
            assert_eq!(sum_sm(l, "l1.load_accesses"), l.mem.l1_accesses);
            assert_eq!(sum_sm(l, "l1.load_hits"), l.mem.l1_hits);
            let per_sm: u64 = l.per_sm.iter().map(|s| s.warp_instructions).sum();
            assert_eq!(per_sm, l.warp_instructions);
            let banks = (0..12)
                .map(|b| l.counters.get(&format!("l2.bank{b}.hits")).unwrap())
                .sum::<u64>();
            assert_eq!(banks, l.mem.l2_hits);
            let chans = (0..6)
                .map(|c| l.counters.get(&format!("dram.ch{c}.read_bytes")).unwrap())
                .sum::<u64>();
            assert_eq!(chans, l.mem.dram_read_bytes);
            assert_eq!(
                l.counters.get("mem.l2_accesses").unwrap(),
                l.memory_detail.l2_accesses
            );
            assert_eq!(l.counters.get("sm0.cycles").unwrap(), l.cycles);
        }
    }
}

#[test]
fn interval_snapshots_sum_to_the_totals() {
    let g = run("bfs", Size::Tiny, cfg(&["sim.interval_cycles=300"]));
    let mut several = false;
    for l in &g.launches {
        let iv = &l.intervals;
        assert!(!iv.is_empty());
        several |= iv.len() > 2;
        assert_eq!(iv.end.last().unwrap() - iv.start[0], l.cycles);
        for j in 1..iv.len() {
            assert_eq!(iv.start[j], iv.end[j - 1]);
        }
        for (name, total) in l.counters.names.iter().zip(&l.counters.values) {
            let s: u64 = iv.series(name).unwrap().iter().sum();
            assert_eq!(s, *total, "{name}");
        }
    }
    assert!(several, "no launch spanned several intervals");
    // Intervals observe; they change nothing.
    let plain = run("bfs", Size::Tiny, cfg(&[]));
    assert_eq!(ticks(&plain), ticks(&g));
}

#[test]
fn more_l1_banks_serve_scattered_transactions_in_parallel() {
    let one = run("spmv", Size::Tiny, cfg(&[]));
    let four = run("spmv", Size::Tiny, cfg(&["l1.banks=4"]));
    let lsu = |g: &Gpu| g.launches.iter().map(|l| l.stalls.lsu_busy).sum::<u64>();
    assert!(lsu(&four) < lsu(&one), "{} vs {}", lsu(&four), lsu(&one));
}

#[test]
fn bad_clock_and_interval_values_are_config_errors_naming_the_key() {
    for (set, key) in [
        ("clocks.core_mhz=0", "clocks.core_mhz"),
        ("clocks.core_mhz=1e9", "clocks.core_mhz"),
        ("clocks.icnt_mhz=-5", "clocks.icnt_mhz"),
        ("clocks.l2_mhz=nan", "clocks.l2_mhz"),
        ("clocks.dram_mhz=0.5", "clocks.dram_mhz"),
        ("clocks.sm_mhz=[700.0, 0.0]", "clocks.sm_mhz[1]"),
        ("sim.interval_cycles=5", "sim.interval_cycles"),
        ("sim.interval_cycles=-1", "sim.interval_cycles"),
        ("l1.banks=3", "l1.banks"),
        ("l1.banks=0", "l1.banks"),
    ] {
        let e = GpuConfig::preset("gtx480", &[set.to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{set}: {e}");
    }
    let many: Vec<String> = vec!["700.0"; 16].into_iter().map(String::from).collect();
    let e = GpuConfig::preset("gtx480", &[format!("clocks.sm_mhz=[{}]", many.join(","))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("clocks.sm_mhz") && e.contains("15"), "{e}");

    let mut gpu = Gpu::new(cfg(&[]), Mode::Timing);
    assert!(gpu.set_sm_frequency(0, 350.0).is_ok());
    let e = gpu.set_sm_frequency(0, 1400.0).unwrap_err();
    assert!(e.contains("700"), "{e}");
    assert!(gpu.set_sm_frequency(99, 350.0).is_err());
    assert!(gpu.set_sm_frequency(0, f64::NAN).is_err());
}

#[test]
fn run_json_reports_per_sm_statistics_counters_and_intervals() {
    let dir = std::env::temp_dir().join(format!("wf-clocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.json");
    let st = Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args([
            "run",
            "--workload",
            "vecadd",
            "--size",
            "tiny",
            "--no-compare",
            "--no-cosim",
            "--quiet",
            "--set",
            "sim.interval_cycles=200",
            "--json",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let l = &v["results"][0]["launches"][0];
    assert_eq!(l["per_sm"].as_array().unwrap().len(), 15);
    assert!(l["per_sm"][0]["stalls"]["fetch"].is_u64());
    let wi: u64 = l["per_sm"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["warp_instructions"].as_u64().unwrap())
        .sum();
    assert_eq!(wi, l["warp_instructions"].as_u64().unwrap());
    assert!(l["counters"]["sm0.warp_instructions"].is_u64());
    assert!(l["counters"]["dram.ch0.read_bytes"].is_u64());
    let ends = l["intervals"]["end"].as_array().unwrap();
    assert!(!ends.is_empty());
    assert_eq!(
        l["intervals"]["counters"]["sm0.cycles"]
            .as_array()
            .unwrap()
            .len(),
        ends.len()
    );
    assert!(l["time_ns"].as_f64().unwrap() > 0.0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fifo_replacement_is_a_real_knob() {
    // kmeans re-reads its centroids and points: FIFO (hits do not renew a line) keeps fewer
    // of them in L1 than LRU, and the result still verifies.
    let l1_hits = |g: &Gpu| g.launches.iter().map(|l| l.mem.l1_hits).sum::<u64>();
    let lru = run("kmeans", Size::Small, cfg(&[]));
    let fifo = run(
        "kmeans",
        Size::Small,
        cfg(&["l1.replacement=fifo", "l2.replacement=fifo"]),
    );
    assert_ne!(l1_hits(&lru), l1_hits(&fifo));
    let e = GpuConfig::preset("gtx480", &["l1.replacement=random".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("random"), "{e}");
}
