//! Unmodified CUDA programs (tests/cuda/*.cu, in the shape of Rodinia's) compiled with
//! `warpforge cc` and run on the simulated GPU through warpforge's CUDA runtime. Each program
//! checks its results against a CPU reference it computes itself, prints PASS or FAIL and
//! exits non-zero on a mismatch. Skipped (with a message) when clang++-14 is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn have_clang() -> bool {
    let c = std::env::var("WARPFORGE_CLANG").unwrap_or_else(|_| "clang++-14".into());
    Command::new(c)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A scratch folder per test (tests run in parallel).
fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpforge-cuda-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `warpforge cc tests/cuda/NAME.cu -o SCRATCH/NAME`, returning the executable.
fn compile(test: &str, name: &str) -> PathBuf {
    compile_with(test, name, &[])
}

fn compile_with(test: &str, name: &str, flags: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/cuda/{name}.cu"));
    let exe = scratch(test).join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .arg("cc")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .args(flags)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "warpforge cc {name}.cu failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn run(exe: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(exe);
    c.env_remove("WARPFORGE_CONFIG")
        .env_remove("WARPFORGE_SET")
        .env_remove("WARPFORGE_FUNCTIONAL")
        .env_remove("WARPFORGE_STATS")
        .env_remove("WARPFORGE_QUIET")
        .env_remove("WARPFORGE_STRICT_BOUNDS")
        .env_remove("WARPFORGE_RECORD_UNIT")
        .env_remove("WARPFORGE_TRACE");
    c.envs(env.iter().copied());
    c.output().unwrap()
}

fn check_pass(name: &str, out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "PASS"),
        "{name}: status {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}

macro_rules! skip_without_clang {
    () => {
        if !have_clang() {
            eprintln!("SKIPPED: clang++-14 is not installed (Debian package clang-14; scripts/install-tools.sh installs it)");
            return;
        }
    };
}

/// Every program passes in timing mode, with the per-kernel summary on stderr.
#[test]
fn programs_pass_in_timing_mode() {
    skip_without_clang!();
    for name in [
        "bfs_flag",
        "pingpong",
        "constant_filter",
        "devfunc",
        "gauss_steps",
        "warp_reduce",
    ] {
        let exe = compile("timing", name);
        let out = run(&exe, &[]);
        check_pass(name, &out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("on gtx480 (timing)"),
            "{name}: no summary:\n{stderr}"
        );
    }
}

/// Host code compiled for the pre-10.1 launch API (cudaConfigureCall, cudaSetupArgument,
/// cudaLaunch) runs the same.
#[test]
fn legacy_launch_api() {
    skip_without_clang!();
    for name in ["constant_filter", "warp_reduce", "bfs_flag"] {
        let exe = compile_with("legacy", name, &["--legacy-launch"]);
        check_pass(name, &run(&exe, &[("WARPFORGE_FUNCTIONAL", "1")]));
    }
}

/// Functional mode, another preset, overrides and the JSON statistics.
#[test]
fn configuration_from_the_environment() {
    skip_without_clang!();
    let exe = compile("env", "gauss_steps");
    check_pass(
        "gauss_steps functional",
        &run(&exe, &[("WARPFORGE_FUNCTIONAL", "1")]),
    );
    let stats = scratch("env").join("gauss.json");
    let out = run(
        &exe,
        &[
            ("WARPFORGE_CONFIG", "fx5800"),
            ("WARPFORGE_SET", "sm.count=4"),
            ("WARPFORGE_STATS", stats.to_str().unwrap()),
        ],
    );
    check_pass("gauss_steps fx5800", &out);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let launches = doc["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 78, "one entry per launch");
    assert!(launches.iter().all(|l| l["cycles"].as_u64().unwrap() > 0));
    assert_eq!(doc["config"], "fx5800");
    let bad = run(&exe, &[("WARPFORGE_CONFIG", "no-such-gpu")]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown preset"));
    // A configuration file is read no further than its limit.
    let big = scratch("env").join("big.toml");
    std::fs::write(&big, vec![b'#'; (1 << 20) + 10]).unwrap();
    let bad = run(&exe, &[("WARPFORGE_CONFIG", big.to_str().unwrap())]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("the limit for a configuration file"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// One persistent GPU: the second launch of the ping-pong stencil finds in L2 what the first
/// one brought in (and reads almost nothing from DRAM).
#[test]
fn caches_stay_warm_between_launches() {
    skip_without_clang!();
    let exe = compile("warm", "pingpong");
    let stats = scratch("warm").join("pp.json");
    let out = run(&exe, &[("WARPFORGE_STATS", stats.to_str().unwrap())]);
    check_pass("pingpong", &out);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let l = doc["launches"].as_array().unwrap();
    assert_eq!(l.len(), 12);
    let f = |i: usize, k: &str| l[i]["mem"][k].as_u64().unwrap();
    assert!(
        f(1, "l2_hits") > f(0, "l2_hits"),
        "{} vs {}",
        f(1, "l2_hits"),
        f(0, "l2_hits")
    );
    assert!(f(1, "dram_read_bytes") * 10 < f(0, "dram_read_bytes"));
}

/// A guest fault prints the model's report and ends the program with status 1: with
/// `WARPFORGE_STRICT_BOUNDS=1` a write just past a buffer; by default (as on a real GPU) only
/// a write outside mapped device memory, the one just past the buffer landing in the next.
#[test]
fn guest_fault_ends_the_program() {
    skip_without_clang!();
    let exe = compile("fault", "fault_oob");
    let fault = |out: &Output, why: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
        assert!(stderr.contains("out-of-bounds access"), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("PASS"));
    };
    let strict = run(&exe, &[("WARPFORGE_STRICT_BOUNDS", "1")]);
    fault(&strict, "outside every live allocation");
    check_pass("fault_oob (default bounds)", &run(&exe, &[]));
    let mut far = Command::new(&exe);
    far.arg("far").env_remove("WARPFORGE_STRICT_BOUNDS");
    fault(&far.output().unwrap(), "no device memory is mapped there");
}

/// Compile errors pass through with a failing status; -c builds an object.
#[test]
fn compile_errors_pass_through() {
    skip_without_clang!();
    let dir = scratch("errors");
    let bad = dir.join("bad.cu");
    std::fs::write(
        &bad,
        "__global__ void k() { undeclared = 1; }\nint main() {}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .arg("cc")
        .arg(&bad)
        .arg("-o")
        .arg(dir.join("bad"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("undeclared"));
}

/// Device printf from two blocks (several warps and lanes each, every conversion): stdout is
/// exactly the lines the program formats on the CPU with the host's printf, in warpforge's
/// documented order (block, warp, call, lane), printed after each launch between the host's
/// own lines; the functional mode prints the same bytes; a buffer made small with
/// cudaDeviceSetLimit keeps the first records and notes the dropped ones on stderr.
#[test]
fn printf_output_is_exact_and_the_same_in_both_modes() {
    skip_without_clang!();
    let exe = compile("printf", "printf_blocks");
    let want_file = scratch("printf").join("expected.txt");
    let out = run(&exe, &[]);
    check_pass("printf_blocks", &out);
    let gen = Command::new(&exe)
        .arg(&want_file)
        .env("WARPFORGE_QUIET", "1")
        .env("WARPFORGE_FUNCTIONAL", "1")
        .output()
        .unwrap();
    check_pass("printf_blocks functional", &gen);
    let expected = std::fs::read_to_string(&want_file).unwrap();
    let (hello, flood): (Vec<&str>, Vec<&str>) =
        expected.lines().partition(|l| !l.starts_with("flood"));
    let mut want = String::from("host: before launch\n");
    for l in &hello {
        want += l;
        want.push('\n');
    }
    want += "host: after launch\n";
    for l in &flood {
        want += l;
        want.push('\n');
    }
    want += "host: limit 1000\nPASS\n";
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout, want, "timing-mode stdout");
    assert_eq!(
        gen.stdout, out.stdout,
        "functional and timing stdout differ"
    );
    // A few lines written out here, so that a bug shared by the host's and the model's
    // formatting cannot hide: warp 0's call, then its second call, then warp 1's lanes.
    assert_eq!(hello.len(), 8);
    assert_eq!(hello[1], "block 0 done (printf returned 16)");
    assert_eq!(
        hello[0],
        "b0 t 0 [warpforge] d=-1000 i=1000| u=1000 x=0xfffffc18 X=FFFFFC18 o=37777776030 c=a \
         ll=-8589934592000 llu=18446744072709548616 f=-500.000 e=-1.000000e+00 g=-333.333 p=ok%"
    );
    assert!(hello[3].starts_with("b0 t33 [warpforge] d=  221 i=-221| u=4294967075 x=0xdd"));
    assert!(hello[7].ends_with("g=863 p=ok%"), "{}", hello[7]);
    // 100 records of 16 bytes in a 1000-byte buffer: the first 62 are kept.
    assert_eq!(flood.len(), 62);
    assert_eq!(flood[61], "flood line 0061");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("printf buffer (1000 bytes, cudaLimitPrintfFifoSize) was full: 38 printf record(s) of kernel `_Z5floodi` dropped"),
        "{stderr}"
    );
}

/// tex1Dfetch through texture references bound with cudaBindTexture (out-of-range fetches
/// read 0) and double-precision exp/log/pow/sin/cos/tanh/atan2/cbrt/erf in device code, each
/// checked by the program against its CPU version, in both modes.
#[test]
fn textures_and_double_precision_math() {
    skip_without_clang!();
    let exe = compile("texdm", "tex_dmath");
    check_pass("tex_dmath", &run(&exe, &[]));
    check_pass(
        "tex_dmath functional",
        &run(&exe, &[("WARPFORGE_FUNCTIONAL", "1")]),
    );
}

/// `WARPFORGE_RECORD_UNIT` / `WARPFORGE_TRACE`: a CUDA program's every warp stack recorded
/// as `warpforge run --record-unit` does, and the trace co-simulated against the RTL.
#[test]
fn unit_traces_are_recorded_from_cuda_programs() {
    skip_without_clang!();
    let exe = compile("trace", "pingpong");
    let trace = scratch("trace").join("pp.wftrace");
    let _ = std::fs::remove_file(&trace);
    let out = run(
        &exe,
        &[
            ("WARPFORGE_RECORD_UNIT", "simt_stack_spe"),
            ("WARPFORGE_TRACE", trace.to_str().unwrap()),
        ],
    );
    check_pass("pingpong recording", &out);
    let t = warpforge_model::units::trace::Trace::read(&trace).unwrap();
    assert_eq!(t.header.unit, "simt_stack_spe");
    assert!(t.header.source.contains("pingpong"), "{}", t.header.source);
    let events: u64 = t.header.instances.iter().map(|i| i.events).sum();
    assert!(
        t.header.instances.len() > 15 && events > 1000,
        "{} instances, {events} events",
        t.header.instances.len()
    );
    // Either variable alone is an input error.
    let bad = run(&exe, &[("WARPFORGE_RECORD_UNIT", "simt_stack_spe")]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("needs WARPFORGE_TRACE"));
    let bad = run(
        &exe,
        &[
            ("WARPFORGE_RECORD_UNIT", "no_such_unit"),
            ("WARPFORGE_TRACE", trace.to_str().unwrap()),
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    if Command::new("verilator").arg("--version").output().is_err() {
        eprintln!("verilator not installed: the recorded trace is not co-simulated");
        return;
    }
    let cosim = Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args(["cosim", "--unit", "simt_stack_spe", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&cosim.stdout);
    assert!(
        cosim.status.success() && text.contains("match"),
        "{text}\n{}",
        String::from_utf8_lossy(&cosim.stderr)
    );
}
