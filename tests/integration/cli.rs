//! End-to-end tests of the `warpforge` command line: user kernels with launch files, and
//! every error path (bad PTX, bad launch files, bad configuration, guest faults).

use crate::common;

use common::{text, warpforge};
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Copy a fixture launch file into a scratch folder (outputs are written next to it).
fn scratch_launch(name: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpforge-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, body).unwrap();
    p
}

fn fx(name: &str) -> String {
    fixtures().join(name).display().to_string()
}

/// `warpforge run --ptx PTX --launch LAUNCH EXTRA...`, with PTX a fixture name.
fn run_user_kernel(ptx: &str, launch: &Path, extra: &[&str]) -> Output {
    let (ptx, launch) = (fx(ptx), launch.display().to_string());
    let mut args = vec!["run", "--ptx", &ptx, "--launch", &launch];
    args.extend_from_slice(extra);
    warpforge(&args)
}

/// The two simulation modes every user-kernel test runs in.
const MODES: [&[&str]; 2] = [&[], &["--functional"]];

#[test]
fn user_kernel_runs_and_writes_its_output_buffer() {
    let body = std::fs::read_to_string(fixtures().join("vecadd.toml")).unwrap();
    let launch = scratch_launch("vecadd", &body);
    for mode in MODES {
        let o = run_user_kernel("vecadd.ptx", &launch, mode);
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("vecadd"), "{}", text(&o));
        // c = a + b with a, b from the seeded patterns of the launch file.
        let out = std::fs::read(launch.with_file_name("vecadd.out.bin")).unwrap();
        assert_eq!(out.len(), 4000);
        let c: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let nonzero = c.iter().filter(|v| **v != 0.0).count();
        assert!(
            nonzero > 900,
            "the kernel wrote its output ({nonzero} non-zero)"
        );
    }
}

/// Malformed and unsupported PTX: exit code 2 and `file:line:col` naming the construct.
#[test]
fn bad_ptx_is_reported_with_file_line_column() {
    let cases = [
        ("syntax_error.ptx", "broken", &["syntax_error.ptx:12:"][..]),
        (
            "unsupported.ptx",
            "tex_user",
            &["unsupported.ptx:12:", "frobnicate"][..],
        ),
    ];
    for (ptx, kernel, needles) in cases {
        let body = format!(
            "kernel = \"{kernel}\"\ngrid = 1\nblock = 32\n[[param]]\nkind = \"buffer\"\nbytes = 4\n"
        );
        let launch = scratch_launch(kernel, &body);
        let o = warpforge(&[
            "run",
            "--ptx",
            &fx(ptx),
            "--launch",
            launch.to_str().unwrap(),
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{ptx}: {t}");
        for n in needles {
            assert!(t.contains(n), "{ptx}: expected `{n}` in: {t}");
        }
        assert!(!t.contains("panicked"), "{t}");
    }
}

#[test]
fn launch_file_mistakes_are_clear_errors() {
    let vecadd = fx("vecadd.ptx");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "count",
            "kernel = \"vecadd\"\ngrid = 1\nblock = 32\n[[param]]\nkind = \"buffer\"\nbytes = 16\n",
            &["expects 4 parameter(s) but 1 were given"],
        ),
        (
            "type",
            "kernel = \"vecadd\"\ngrid = 1\nblock = 32\n[[param]]\nkind = \"buffer\"\nbytes = 16\n[[param]]\nkind = \"buffer\"\nbytes = 16\n[[param]]\nkind = \"buffer\"\nbytes = 16\n[[param]]\nkind = \"scalar\"\ntype = \"f64\"\nvalue = 1.0\n",
            &["parameter 3", "vecadd_param_3", "f64"],
        ),
        (
            "missing_file",
            "kernel = \"vecadd\"\ngrid = 1\nblock = 32\n[[param]]\nkind = \"buffer\"\nbytes = 16\ninit = \"file\"\nfile = \"no-such-input.bin\"\n",
            &["param 0", "no-such-input.bin"],
        ),
        ("kernel_name", "kernel = \"vecad\"\ngrid = 1\nblock = 32\n", &["no kernel `vecad`", "vecadd"]),
        ("unknown_field", "kernel = \"vecadd\"\ngrid = 1\nblock = 32\nthreads = 5\n", &["threads"]),
        ("block_too_big", "kernel = \"vecadd\"\ngrid = 1\nblock = 2048\n", &["2048"]),
        (
            "scalar_range",
            "kernel = \"vecadd\"\ngrid = 1\nblock = 32\n[[param]]\nkind = \"scalar\"\ntype = \"u32\"\nvalue = -1\n",
            &["param 0", "does not fit"],
        ),
    ];
    for (name, body, needles) in cases {
        let launch = scratch_launch(name, body);
        let o = warpforge(&[
            "run",
            "--ptx",
            &vecadd,
            "--launch",
            launch.to_str().unwrap(),
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {t}");
        for n in *needles {
            assert!(t.contains(n), "{name}: expected `{n}` in: {t}");
        }
        assert!(!t.contains("panicked"), "{name}: {t}");
    }
    let o = warpforge(&[
        "run",
        "--ptx",
        &vecadd,
        "--launch",
        "/nonexistent/launch.toml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("/nonexistent/launch.toml"));
}

/// `--strict-bounds`: every access outside an allocation faults, as compute-sanitizer
/// reports, even one that lands in mapped memory just past the buffer.
#[test]
fn strict_bounds_fault_just_past_a_buffer_with_location() {
    for mode in MODES {
        let mode = [mode, &["--strict-bounds"]].concat();
        let o = run_user_kernel("vecadd.ptx", &fixtures().join("oob.toml"), &mode);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(t.contains("out-of-bounds"), "{t}");
        assert!(t.contains("outside every live allocation"), "{t}");
        assert!(t.contains("kernel `vecadd`"), "{t}");
        assert!(t.contains("vecadd.ptx:"), "names the PTX line: {t}");
        // Threads 1000.. are the first past the 1000-float buffers: block 3, thread 232.
        assert!(
            t.contains("block (3,0,0)") && t.contains("thread (232,0,0)"),
            "{t}"
        );
    }
}

/// Default bounds, as on a real GPU: the same overrun reads and writes mapped memory (the
/// buffers share a 64 KiB page) and the run completes; an access past the last mapped page
/// faults, with its location.
#[test]
fn default_bounds_fault_only_outside_mapped_memory() {
    for mode in MODES {
        let o = run_user_kernel("vecadd.ptx", &fixtures().join("oob.toml"), mode);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let o = run_user_kernel("vecadd.ptx", &fixtures().join("oob_unmapped.toml"), mode);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(
            t.contains("out-of-bounds")
                && t.contains("no device memory is mapped there")
                && t.contains("0x10010000"),
            "{t}"
        );
        assert!(
            t.contains("block (55,0,0)") && t.contains("thread (192,0,0)"),
            "{t}"
        );
    }
}

#[test]
fn misaligned_access_is_a_guest_fault() {
    let o = warpforge(&[
        "run",
        "--ptx",
        &fx("misaligned.ptx"),
        "--launch",
        &fx("misaligned.toml"),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("misaligned")
            && t.contains("kernel `misaligned`")
            && t.contains("misaligned.ptx:16"),
        "{t}"
    );
}

#[test]
fn barrier_deadlock_is_detected_not_hung() {
    for mode in MODES {
        let o = run_user_kernel("deadlock.ptx", &fixtures().join("deadlock.toml"), mode);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(
            t.contains("barrier deadlock") && t.contains("kernel `deadlock`"),
            "{t}"
        );
        assert!(t.contains("barrier 0") && t.contains("barrier 1"), "{t}");
    }
}

#[test]
fn configuration_mistakes_are_clear_errors() {
    let o = warpforge(&[
        "run",
        "--workload",
        "vecadd",
        "--size",
        "tiny",
        "--set",
        "sm.cuont=4",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown key `sm.cuont`"), "{}", text(&o));
    let o = warpforge(&["run", "--workload", "vecadd", "--config", "gtx9000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("gtx480"), "{}", text(&o));
    let o = warpforge(&["run", "--workload", "no-such-workload"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("available"), "{}", text(&o));
    // A co-simulation of no cycles would compare nothing and say "match".
    let o = warpforge(&["cosim", "--unit", "slp_perm", "--cycles", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--cycles"), "{}", text(&o));
}

#[test]
fn watchdog_stops_a_kernel_that_runs_too_long() {
    let o = warpforge(&[
        "run",
        "--workload",
        "vecadd",
        "--size",
        "tiny",
        "--set",
        "sim.max_cycles=50",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("watchdog") && t.contains("sim.max_cycles"),
        "{t}"
    );
}

#[test]
fn list_names_workloads_and_presets() {
    let o = warpforge(&["list"]);
    assert!(o.status.success());
    let t = text(&o);
    for w in ["bfs", "sgemm", "histogram", "gtx480", "fx5800"] {
        assert!(t.contains(w), "{w} missing from: {t}");
    }
}

/// Run `warpforge run` with `args` plus `--json`, and return everything it simulated: the
/// JSON without host timings and memory, which differ run to run.
fn simulated_stats(args: &[&str], tag: &str) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("warpforge-det-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join(format!("{tag}.json"));
    let mut all = vec!["run", "--quiet", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = warpforge(&all);
    assert!(o.status.success(), "{}", text(&o));
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("peak_rss_bytes");
    for r in v["results"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("trace_finish_seconds");
        for l in r["launches"].as_array_mut().unwrap() {
            l.as_object_mut().unwrap().remove("wall_seconds");
        }
    }
    v
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let docs: Vec<_> = ["1", "2"]
        .iter()
        .map(|t| simulated_stats(&["--size", "tiny", "--threads", t], &format!("t{t}")))
        .collect();
    assert_eq!(docs[0], docs[1]);
    let cycles: u64 = docs[0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["launches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["cycles"].as_u64().unwrap())
        })
        .sum();
    assert!(cycles > 0);
}

/// The schedulers' shortcuts (cached blockers, passed-over warps, sleeping schedulers) are
/// pure speed: with them off every path is re-evaluated every cycle, and every statistic of
/// every workload (cycles, stall breakdown, caches...) must come out the same, under each
/// scheduler policy and reconvergence mechanism whose scan differs.
#[test]
fn scheduler_shortcuts_change_no_result() {
    let configs: [&[&str]; 4] = [
        &["--set", "sm.reconvergence=spe"],
        &["--set", "sm.reconvergence=dpe"],
        &[
            "--set",
            "sm.reconvergence=dpe",
            "--set",
            "sm.dpe_path_policy=constrained",
        ],
        &[
            "--set",
            "sm.scheduler=two_level",
            "--set",
            "sm.schedulers=3",
        ],
    ];
    for (i, cfg) in configs.iter().enumerate() {
        let run = |shortcuts: &str| {
            let set = format!("sim.scan_shortcuts={shortcuts}");
            let mut args = vec![
                "--size",
                "tiny",
                "--no-compare",
                "--no-cosim",
                "--set",
                &set,
            ];
            args.extend_from_slice(cfg);
            simulated_stats(&args, &format!("shortcuts{i}{shortcuts}"))
        };
        let (on, off) = (run("true"), run("false"));
        assert_eq!(
            on["results"].as_array().unwrap().len(),
            warpforge_workloads::all().len(),
            "{cfg:?}"
        );
        for (a, b) in on["results"]
            .as_array()
            .unwrap()
            .iter()
            .zip(off["results"].as_array().unwrap())
        {
            assert_eq!(
                a["launches"], b["launches"],
                "{} under {cfg:?}",
                a["workload"]
            );
        }
    }
}

#[test]
fn module_scope_constants_and_globals_keep_their_initialisers() {
    // globals.cu: out[i] = coeff[i % 4] * bias[i % 3] + counter, from a __constant__ table and
    // __device__ variables with initialisers; blocks_seen = bias[0] (read atomically) + grid.
    let body = std::fs::read_to_string(fixtures().join("globals.toml")).unwrap();
    let launch = scratch_launch("globals", &body);
    for mode in MODES {
        let extra: Vec<&str> = std::iter::once("--quiet")
            .chain(mode.iter().copied())
            .collect();
        let o = run_user_kernel("globals.ptx", &launch, &extra);
        assert!(o.status.success(), "{}", text(&o));
        let out = std::fs::read(launch.with_file_name("globals.out.bin")).unwrap();
        let got: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let (coeff, bias) = ([0.5f32, 1.5, -2.0, 4.0], [3.0f32, -7.0, 11.0]);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, coeff[i % 4] * bias[i % 3] + 100.0, "out[{i}]");
        }
        let blocks = std::fs::read(launch.with_file_name("globals_blocks.out.bin")).unwrap();
        assert_eq!(i32::from_le_bytes(blocks[..4].try_into().unwrap()), 3 + 2);
    }
}

/// Device printf through a launch file (printf.cu): the lines reach stdout after the launch,
/// exactly, in the documented order (block, warp, call, lane) and the same in both modes, and
/// printf returns the number of arguments.
#[test]
fn device_printf_goes_to_stdout_after_the_launch() {
    let body = std::fs::read_to_string(fixtures().join("printf.toml")).unwrap();
    let launch = scratch_launch("printf", &body);
    let want = "[wf] block 0 thread 3: 0.75 3298534883328\n\
                [wf] block 0 thread 11: 2.75 12094627905536\n\
                [wf] block 1 thread 3: 4.75 20890720927744\n\
                [wf] block 1 thread 11: 6.75 29686813949952\n";
    for mode in MODES {
        let extra: Vec<&str> = std::iter::once("--quiet")
            .chain(mode.iter().copied())
            .collect();
        let o = run_user_kernel("printf.ptx", &launch, &extra);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout), want, "{mode:?}");
        let out = std::fs::read(launch.with_file_name("printf_ret.out.bin")).unwrap();
        for (i, w) in out.chunks_exact(4).enumerate() {
            let r = i32::from_le_bytes(w.try_into().unwrap());
            assert_eq!(r, if i % 8 == 3 { 5 } else { 0 }, "ret[{i}]");
        }
    }
    // Without --quiet the tables follow the printed lines.
    let o = run_user_kernel("printf.ptx", &launch, &["--functional"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with(want) && stdout.contains("user kernel"),
        "{stdout}"
    );
}

/// Device-function calls and inline-asm blocks as LLVM's NVPTX back end emits them
/// (`calls.ll`, see its header): a divergent call, nested calls, a callee's `.local` array, a
/// struct by value and by `sret` pointer, an uncalled `.visible .func`, and two copies of an
/// inline-asm block with the same block-scoped register and label names.
#[test]
fn device_functions_and_inline_asm_blocks_from_llvm_run_in_every_mode() {
    let body = std::fs::read_to_string(fixtures().join("calls.toml")).unwrap();
    let launch = scratch_launch("calls", &body);
    let lookup = |i: u32| [i, i.wrapping_mul(3), i + 7, i ^ 5][(i & 3) as usize];
    let scale = |a: u32, b: u32| {
        if a > 20 {
            a - b
        } else {
            lookup(a).wrapping_mul(b)
        }
    };
    let step = |v: u32| if v < 16 { v + 1 } else { v + 101 };
    let want: Vec<u32> = (0..64u32)
        .map(|t| {
            let v = if t % 3 == 0 { 999 } else { scale(t, t % 3 + 1) };
            step(step(v)).wrapping_mul(1000).wrapping_add(t)
        })
        .collect();
    let dpe: &[&str] = &["--set", "sm.reconvergence=dpe"];
    for mode in MODES.into_iter().chain([dpe]) {
        let extra: Vec<&str> = std::iter::once("--quiet")
            .chain(mode.iter().copied())
            .collect();
        let o = run_user_kernel("calls.ptx", &launch, &extra);
        assert!(o.status.success(), "{mode:?}: {}", text(&o));
        let out = std::fs::read(launch.with_file_name("calls.out.bin")).unwrap();
        let got: Vec<u32> = out
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, want, "{mode:?}");
    }
}

#[test]
fn a_kernel_that_never_ends_is_stopped_where_it_spins() {
    let cases: [&[&str]; 2] = [
        &["--set", "sim.max_cycles=3000"],
        &["--functional", "--set", "sim.max_warp_instructions=5000"],
    ];
    for extra in cases {
        let o = run_user_kernel("spin.ptx", &fixtures().join("spin.toml"), extra);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(t.contains("watchdog") && t.contains("kernel `spin`"), "{t}");
        // The loop body is lines 12-13 of spin.ptx.
        assert!(
            t.contains("spin.ptx:12") || t.contains("spin.ptx:13"),
            "names the loop: {t}"
        );
    }
}

/// `warpforge bench --size tiny ARGS...`.
fn bench_tiny(args: &[&str]) -> Output {
    let mut all = vec!["bench", "--size", "tiny"];
    all.extend_from_slice(args);
    warpforge(&all)
}

/// `warpforge bench` reports, per workload, the figures its runs simulated (the same as a
/// plain `run`), and recording the port traces for co-simulation (`--record-traces`)
/// changes no simulated figure, only the host time.
#[test]
fn bench_reports_what_the_runs_simulated() {
    let dir = std::env::temp_dir().join(format!("warpforge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = simulated_stats(&["--workload", "vecadd", "--size", "tiny"], "bench-ref");
    let launches = plain["results"][0]["launches"].as_array().unwrap();
    let sum = |k: &str| -> u64 { launches.iter().map(|l| l[k].as_u64().unwrap()).sum() };
    let (cycles, insts) = (sum("cycles"), sum("warp_instructions"));
    assert!(cycles > 0 && insts > 0);
    for (tag, extra) in [("sim", None), ("rec", Some("--record-traces"))] {
        let json = dir.join(format!("{tag}.json"));
        let mut args = vec!["--workload", "vecadd", "--repeat", "2"];
        args.extend(extra);
        args.extend(["--json", json.to_str().unwrap()]);
        let o = bench_tiny(&args);
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("median"), "{}", text(&o));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["recording_traces"].as_bool(), Some(extra.is_some()));
        let m = &v["workloads"][0];
        assert_eq!(m["workload"], "vecadd");
        assert_eq!(m["cycles"].as_u64(), Some(cycles), "{tag}");
        assert_eq!(m["warp_instructions"].as_u64(), Some(insts), "{tag}");
        assert_eq!(m["verified"].as_bool(), Some(true), "{tag}");
        // The recording happened exactly in the mode that measures it.
        let events = m["recorded_trace_events"].as_u64().unwrap();
        assert_eq!(events > 0, extra.is_some(), "{tag}: {m}");
        let (secs, rate) = (
            m["sim_seconds"].as_f64().unwrap(),
            m["cycles_per_second"].as_f64().unwrap(),
        );
        assert!(secs > 0.0, "{tag}: {m}");
        assert!(
            (rate * secs - cycles as f64).abs() <= 1e-6 * cycles as f64,
            "{tag}: {m}"
        );
        assert_eq!(
            v["median_cycles_per_second"].as_f64(),
            Some(rate),
            "one workload: its own rate"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `warpforge bench --host-instructions` counts the host instructions inside the kernel
/// launches with callgrind: the same build counted twice (`--against` itself) gives the
/// same count, and recording the traces adds instructions without changing a simulated
/// cycle.
#[test]
fn bench_counts_host_instructions() {
    let dir = std::env::temp_dir().join(format!("warpforge-bench-hi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = env!("CARGO_BIN_EXE_warpforge");
    // `bench --size tiny --workload vecadd --host-instructions ARGS --json F`: its document.
    let counted = |args: &[&str], file: &str, says: &str| -> serde_json::Value {
        let json = dir.join(file);
        let mut all = vec!["--workload", "vecadd", "--host-instructions"];
        all.extend_from_slice(args);
        all.extend(["--json", json.to_str().unwrap()]);
        let o = bench_tiny(&all);
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let v = counted(&["--against", exe], "same.json", "M instr (against)");
    let w = &v["workloads"][0];
    let counts = w["host_instructions"].as_array().unwrap();
    assert!(counts[0].as_u64().unwrap() > 10_000, "{w}");
    assert_eq!(counts[0], counts[1], "the same build counts the same: {w}");
    assert_eq!(w["change_percent"].as_f64(), Some(0.0), "{w}");
    assert_eq!(w["verified"].as_bool(), Some(true), "{w}");

    let v = counted(&["--recording-overhead"], "rec.json", "recording adds");
    let w = &v["workloads"][0];
    let (cycles, counts) = (
        w["cycles"].as_array().unwrap(),
        w["host_instructions"].as_array().unwrap(),
    );
    assert_eq!(cycles[0], cycles[1], "{w}");
    assert!(counts[1].as_u64() > counts[0].as_u64(), "{w}");
    assert!(w["change_percent"].as_f64().unwrap() > 0.0, "{w}");
    assert_eq!(
        v["variants"][1]["recording_traces"].as_bool(),
        Some(true),
        "{v}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `warpforge bench --recording-overhead` times each workload without and with recording:
/// the same simulated cycles both ways, an overhead that is the ratio of the two times.
#[test]
fn bench_measures_the_recording_overhead() {
    let json = std::env::temp_dir().join(format!("warpforge-overhead-{}.json", std::process::id()));
    let o = bench_tiny(&[
        "--workload",
        "vecadd",
        "--repeat",
        "1",
        "--recording-overhead",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("median recording overhead"),
        "{}",
        text(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    let m = &v["workloads"][0];
    assert_eq!(m["workload"], "vecadd");
    assert!(m["cycles"].as_u64().unwrap() > 0);
    let (plain, rec, pct, fastest) = (
        m["sim_seconds"].as_f64().unwrap(),
        m["recording_seconds"].as_f64().unwrap(),
        m["overhead_percent"].as_f64().unwrap(),
        m["fastest_overhead_percent"].as_f64().unwrap(),
    );
    assert!(plain > 0.0 && rec > 0.0, "{m}");
    // One pair: its ratio is the ratio of the fastest runs.
    assert!((fastest - 100.0 * (rec / plain - 1.0)).abs() < 1e-9, "{m}");
    assert!((pct - fastest).abs() < 1e-9, "{m}");
    assert_eq!(v["median_overhead_percent"].as_f64(), Some(pct), "{v}");
    // One workload of one pair: the interval is that pair's figure on both sides.
    assert_eq!(m["pairs_percent"].as_array().map(Vec::len), Some(1), "{m}");
    let interval = &v["median_overhead_interval_percent"];
    for side in 0..2 {
        assert!((interval[side].as_f64().unwrap() - pct).abs() < 1e-9, "{v}");
    }
    assert_eq!(
        v["median_fastest_overhead_percent"].as_f64(),
        Some(fastest),
        "{v}"
    );
    // The recording runs record every unit, and then co-simulate nothing (`run
    // --record-only`, what the bench runs): no RTL is written.
    let rtl = std::env::temp_dir().join(format!("warpforge-record-only-{}", std::process::id()));
    let args = [
        "--workload",
        "vecadd",
        "--size",
        "tiny",
        "--no-compare",
        "--record-only",
    ];
    let r = simulated_stats(
        &[&args[..], &["--rtl-out", rtl.to_str().unwrap()]].concat(),
        "rec-only",
    );
    assert!(r["recorded_trace_events"].as_u64().unwrap() > 0, "{r}");
    assert!(
        !rtl.exists(),
        "--record-only wrote RTL into {}",
        rtl.display()
    );
    // A functional run has no units to record: asking for both is a mistake, not a
    // recording of nothing.
    let o = warpforge(&[
        "run",
        "--workload",
        "vecadd",
        "--functional",
        "--record-only",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--functional"), "{}", text(&o));
    // It measures both modes: asking for one of them as well is a mistake.
    let o = bench_tiny(&["--recording-overhead", "--record-traces"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `warpforge bench --against OLD` times each workload alternately with another build and
/// this one; a build that lacks a workload has it skipped, one that runs none is an error.
#[test]
fn bench_compares_against_another_build() {
    let dir = std::env::temp_dir().join(format!("warpforge-against-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("against.json");
    // The "other build" is this one behind a script, so the simulated cycles must agree.
    let exe = env!("CARGO_BIN_EXE_warpforge");
    let same = dir.join("same.sh");
    let none = dir.join("none.sh");
    let broken = dir.join("broken.sh");
    std::fs::write(&same, format!("#!/bin/sh\nexec {exe} \"$@\"\n")).unwrap();
    // An older build without the workload, and one that fails for another reason.
    std::fs::write(
        &none,
        "#!/bin/sh\necho 'error: unknown workload `vecadd`' >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::write(&broken, "#!/bin/sh\necho 'segfault here' >&2\nexit 139\n").unwrap();
    for f in [&same, &none, &broken] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = bench_tiny(&[
        "--workload",
        "vecadd",
        "--repeat",
        "2",
        "--against",
        same.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("median per-workload change"),
        "{}",
        text(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let m = &v["workloads"][0];
    assert_eq!(m["workload"], "vecadd");
    assert!(m["cycles"].as_u64().unwrap() > 0);
    assert_eq!(m["cycles"], m["cycles_against"], "{m}");
    let (then, now, pct) = (
        m["against_cycles_per_second"].as_f64().unwrap(),
        m["cycles_per_second"].as_f64().unwrap(),
        m["change_percent"].as_f64().unwrap(),
    );
    assert!((pct - 100.0 * (now / then - 1.0)).abs() < 1e-9, "{m}");
    assert_eq!(v["median_change_percent"].as_f64(), Some(pct), "{v}");
    let pairs = m["pairs_change_percent"].as_f64().unwrap();
    assert!(pairs.is_finite() && pairs > -100.0, "{m}");
    assert_eq!(
        v["median_pairs_change_percent"].as_f64(),
        Some(pairs),
        "{v}"
    );
    let interval = &v["median_pairs_change_interval_percent"];
    assert!(
        interval[0].as_f64().unwrap() <= pairs && pairs <= interval[1].as_f64().unwrap(),
        "{v}"
    );
    // One vecadd run against `other`: its exit code and output.
    let against = |other: &std::path::Path| {
        let o = bench_tiny(&[
            "--workload",
            "vecadd",
            "--repeat",
            "1",
            "--against",
            other.to_str().unwrap(),
        ]);
        (o.status.code(), text(&o))
    };
    // A build that runs none of the workloads, one that fails (not a build without the
    // workload: the error says so), and one that does not exist.
    let (code, t) = against(&none);
    assert_eq!(code, Some(2), "{t}");
    assert!(t.contains("it ran none of the selected workloads"), "{t}");
    let (code, t) = against(&broken);
    assert_eq!(code, Some(2), "{t}");
    assert!(
        t.contains("its run failed")
            && t.contains("workload vecadd")
            && t.contains("segfault here"),
        "{t}"
    );
    let missing = dir.join("no-such-build");
    let o = bench_tiny(&["--repeat", "1", "--against", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no such executable"), "{}", text(&o));
    // It compares one mode at a time: not together with the recording overhead.
    let o = bench_tiny(&["--recording-overhead", "--against", same.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// Bench mistakes are reported once, before any run, naming what is wrong.
#[test]
fn bench_mistakes_are_clear_errors() {
    let cases: [(&[&str], &str); 3] = [
        (&["--workload", "nosuch"], "unknown workload `nosuch`"),
        (&["--config", "nosuch"], "unknown preset `nosuch`"),
        (&["--set", "bad.key=1"], "unknown key `bad.key`"),
    ];
    for (args, want) in cases {
        let mut all = vec!["--repeat", "1"];
        all.extend_from_slice(args);
        let o = bench_tiny(&all);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(want), "{args:?}: {t}");
        assert!(
            !t.contains("failed to run"),
            "{args:?} reached a child run: {t}"
        );
    }
    let bad = std::env::temp_dir()
        .join("warpforge-no-such-dir")
        .join("b.json");
    let bad = bad.to_str().unwrap();
    let o = bench_tiny(&["--workload", "vecadd", "--repeat", "1", "--json", bad]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("cannot write {bad}")),
        "{}",
        text(&o)
    );
}

#[test]
fn a_configuration_a_unit_cannot_take_is_an_error_naming_the_key() {
    // The stack unit's DEPTH is 2..=64: the key it comes from is named, nothing runs.
    for (set, key, unit) in [
        ("sm.stack_depth=100", "sm.stack_depth", "simt_stack_spe"),
        ("sm.stack_depth=65", "sm.stack_depth", "simt_stack_spe"),
    ] {
        let o = warpforge(&[
            "run",
            "--workload",
            "vecadd",
            "--size",
            "tiny",
            "--set",
            set,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let t = text(&o);
        assert!(
            t.contains(key) && t.contains(unit) && t.contains("DEPTH"),
            "{t}"
        );
    }
    let o = warpforge(&[
        "run",
        "--workload",
        "vecadd",
        "--size",
        "tiny",
        "--set",
        "sm.stack_depth=70",
        "--set",
        "sm.reconvergence=dpe",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("simt_stack_dpe"), "{}", text(&o));
    // The largest legal depth runs, and records the stack at that depth.
    let o = warpforge(&[
        "run",
        "--workload",
        "vecadd",
        "--size",
        "tiny",
        "--set",
        "sm.stack_depth=64",
        "--no-compare",
        "--no-cosim",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn run_json_reports_every_unit_instances_activity() {
    let dir = std::env::temp_dir().join(format!("warpforge-cli-activity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (reconv, stack, events) in [
        (
            "spe",
            "simt_stack_spe",
            &["ev_div", "ev_pop", "ev_push1", "ev_push2"][..],
        ),
        (
            "dpe",
            "simt_stack_dpe",
            &["ev_div", "ev_pop", "ev_push", "ev_sb_copy"][..],
        ),
    ] {
        let json = dir.join(format!("{reconv}.json"));
        let set = format!("sm.reconvergence={reconv}");
        let o = warpforge(&[
            "run",
            "--workload",
            "bfs",
            "--size",
            "tiny",
            "--set",
            &set,
            "--no-compare",
            "--no-cosim",
            "--quiet",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let cfg = &v["effective_config"]["sm"];
        let (sms, warps) = (
            cfg["count"].as_u64().unwrap(),
            cfg["max_warps"].as_u64().unwrap(),
        );
        let run = &v["results"][0];
        let unit = |name: &str| {
            run["unit_activity"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u["unit"] == name)
                .unwrap_or_else(|| panic!("no activity of {name}: {run}"))
                .clone()
        };
        // Every warp slot's stack of every SM; one scoreboard per SM.
        let st = unit(stack);
        assert_eq!(st["instances"].as_u64(), Some(sms * warps));
        assert_eq!(unit("dpe_scoreboard")["instances"].as_u64(), Some(sms));
        // A stack sees non-idle inputs once per launched warp and once per issued
        // instruction of its warp.
        let launches = run["launches"].as_array().unwrap();
        let issued: u64 = launches
            .iter()
            .map(|l| l["warp_instructions"].as_u64().unwrap())
            .sum();
        let launched_warps: u64 = launches
            .iter()
            .map(|l| {
                let dims = |k: &str| -> u64 {
                    l[k].as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.as_u64().unwrap())
                        .product()
                };
                dims("grid") * dims("block").div_ceil(32)
            })
            .sum();
        assert_eq!(st["active_cycles"].as_u64(), Some(issued + launched_warps));
        // bfs diverges: every divergence event is counted, and every event port is listed.
        let divergent: u64 = launches
            .iter()
            .map(|l| l["divergent_branches"].as_u64().unwrap())
            .sum();
        assert!(divergent > 0);
        assert!(st["events"]["ev_div"].as_u64().unwrap() > 0, "{st}");
        for e in events {
            assert!(st["events"][e].is_u64(), "{stack} lacks {e}: {st}");
        }
        assert!(unit("dpe_scoreboard")["active_cycles"].as_u64().unwrap() > 0);
    }
}

/// Scalar parameters narrower than 32 bits (`bool`, `u8`, `s8`, `u16`, `s16` in the launch
/// file) reach a kernel that declares them as C++ does (`small_params.cu`), in both modes; a
/// value that does not fit its type is an error naming it.
#[test]
fn bool_char_and_short_parameters_reach_the_kernel() {
    let body = std::fs::read_to_string(fixtures().join("small_params.toml")).unwrap();
    let launch = scratch_launch("small_params", &body);
    let want: Vec<i32> = (0..32)
        .map(|t| 1_000_000 + (-300) * t + 65_000 + (-100) * 7 + 250)
        .collect();
    for mode in MODES {
        let extra: Vec<&str> = std::iter::once("--quiet")
            .chain(mode.iter().copied())
            .collect();
        let o = run_user_kernel("small_params.ptx", &launch, &extra);
        assert!(o.status.success(), "{mode:?}: {}", text(&o));
        let out = std::fs::read(launch.with_file_name("small_params.out.bin")).unwrap();
        let got: Vec<i32> = out
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, want, "{mode:?}");
    }
    let bad = scratch_launch(
        "small_params_bad",
        &body.replace("value = 250", "value = 256"),
    );
    let o = run_user_kernel("small_params.ptx", &bad, &["--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("value 256 does not fit type u8"),
        "{}",
        text(&o)
    );
}

/// By-value struct parameters, given as typed fields (one a pointer 16 bytes into a buffer
/// that is also passed directly: a buffer passed twice, once at an offset) or as bytes.
#[test]
fn struct_parameters_and_pointers_into_buffers_reach_the_kernel() {
    let body = std::fs::read_to_string(fixtures().join("struct_params.toml")).unwrap();
    let launch = scratch_launch("struct_params", &body);
    let input: Vec<u8> = (0..128)
        .flat_map(|i| (i as f32 / 4.0).to_le_bytes())
        .collect();
    std::fs::write(launch.with_file_name("struct_params.in.bin"), input).unwrap();
    let bytes = scratch_launch(
        "struct_bytes",
        &std::fs::read_to_string(fixtures().join("struct_bytes.toml")).unwrap(),
    );
    let floats = |p: PathBuf| -> Vec<f32> {
        std::fs::read(p)
            .unwrap()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    for mode in MODES {
        let o = run_user_kernel("struct_params.ptx", &launch, mode);
        assert!(o.status.success(), "{mode:?}: {}", text(&o));
        let got = floats(launch.with_file_name("struct_params.out.bin"));
        let want: Vec<f32> = (0..128)
            .map(|i| {
                if i < 100 {
                    (i + 4) as f32 / 4.0 * 2.0 + 0.5 + i as f32 / 4.0
                } else {
                    0.0
                }
            })
            .collect();
        assert_eq!(got, want, "{mode:?}");
        let o = run_user_kernel("struct_params.ptx", &bytes, mode);
        assert!(o.status.success(), "{mode:?}: {}", text(&o));
        let got = floats(bytes.with_file_name("struct_bytes.out.bin"));
        let want: Vec<f32> = (0..64).map(|i| if i < 60 { 1.0 } else { 0.0 }).collect();
        assert_eq!(got, want, "{mode:?}");
    }
}

/// Mistakes in struct, pointer and buffer keys name the file, line, column, parameter and
/// key, before anything is allocated.
#[test]
fn launch_file_struct_and_pointer_mistakes_name_the_line_and_key() {
    let good = std::fs::read_to_string(fixtures().join("struct_params.toml")).unwrap();
    let bytes = std::fs::read_to_string(fixtures().join("struct_bytes.toml")).unwrap();
    // The line where `needle` (which may span lines) starts.
    let line_of =
        |body: &str, needle: &str| body[..body.find(needle).unwrap()].matches('\n').count() + 1;
    let cases: Vec<(&str, String, &str, &[&str])> = vec![
        (
            "unknown_buffer",
            good.replace("buffer = \"in\"\n", "buffer = \"inn\"\n"),
            "buffer = \"inn\"",
            &["param 2 `buffer`", "no buffer named `inn`", "`in`"],
        ),
        (
            "offset_past_end",
            good.replace("offset = 16", "offset = 513"),
            "offset = 513",
            &[
                "param 0 `offset`",
                "513 is outside buffer `in`",
                "512 bytes",
            ],
        ),
        (
            "struct_too_big",
            good.replace(
                "  { type = \"f64\", value = 0.5 },\n",
                "  { type = \"f64\", value = 0.5 },\n  { type = \"u8\", value = 1 },\n",
            ),
            "kind = \"struct\"",
            &["param 0 `field`", "takes 24 bytes but the struct has 25"],
        ),
        (
            "field_value",
            good.replace("value = 2.0", "value = \"two\""),
            "value = \"two\"",
            &["param 0 `value`", "f32 needs a number"],
        ),
        (
            "key_of_other_kind",
            good.replace("kind = \"pointer\"\n", "kind = \"pointer\"\nseed = 4\n"),
            "seed = 4",
            &["param 2 `seed`", "does not apply to kind = \"pointer\""],
        ),
        (
            "duplicate_name",
            good.replace(
                "bytes = 512\noutput = \"struct_params.out.bin\"",
                "name = \"in\"\nbytes = 512\noutput = \"struct_params.out.bin\"",
            ),
            "name = \"in\"\nbytes = 512\noutput",
            &["param 1 `name`", "named `in` is declared already"],
        ),
        (
            "bytes_short",
            bytes.replace("0, 0, 128, 63]", "0, 0, 128]"),
            "bytes = [",
            &["param 0 `bytes`", "takes 8 bytes but the struct has 7"],
        ),
        (
            "not_a_byte",
            bytes.replace("128, 63]", "128, 630]"),
            "bytes = [",
            &["param 0 `bytes`", "element 7 (630) is not a byte"],
        ),
        (
            "scalar_for_struct",
            bytes.replace(
                "kind = \"struct\"\nbytes = [0, 0, 0, 64, 0, 0, 128, 63]",
                "kind = \"scalar\"\ntype = \"u32\"\nvalue = 2",
            ),
            "type = \"u32\"",
            &["param 0 `type`", "affine_param_0", "8 bytes but a u32"],
        ),
        (
            "grid_zero",
            bytes.replace("grid = 1", "grid = [1, 0]"),
            "grid = [1, 0]",
            &["`grid`", "grid.y = 0 is out of range"],
        ),
    ];
    for (name, body, line_has, needles) in cases {
        assert_ne!(body, good, "{name}: the case changes the file");
        let launch = scratch_launch(name, &body);
        std::fs::write(launch.with_file_name("struct_params.in.bin"), [0u8; 512]).unwrap();
        let o = run_user_kernel("struct_params.ptx", &launch, &["--quiet"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {t}");
        let line = line_of(&body, line_has);
        let at = format!("{}:{line}:", launch.display());
        assert!(t.contains(&at), "{name}: expected `{at}` in: {t}");
        for n in needles {
            assert!(t.contains(n), "{name}: expected `{n}` in: {t}");
        }
        assert!(!t.contains("panicked"), "{name}: {t}");
    }
}
