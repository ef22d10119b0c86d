//! Fuzzing (issue #12): PTX text (mutations of the workloads' and fixtures' PTX, and soups
//! of their instructions and tokens), launch files and configuration overrides (`--set
//! key=value` with the presets' keys and random values), each run on the model in process
//! with bounded cycles. Every input must either run or return an error with a message: a
//! panic anywhere in the model fails the test (proptest catches it and shrinks the input).
//!
//! `WARPFORGE_FUZZ_CASES=N` runs N cases per target (default: a bounded few hundred in all,
//! well under a minute on two cores); a failing case is printed minimised and saved in
//! `tests/integration/fuzz.proptest-regressions`, replayed first by every later run.

use crate::launch_file;

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use proptest::test_runner::{Config, FileFailurePersistence};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;
use warpforge_model::config::{GpuConfig, PRESETS};
use warpforge_model::config_limits::KEY_LIMITS;
use warpforge_model::gpu::launch::{LaunchShape, MAX_PARAM_BYTES};
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::{Dim3, Host};

/// Cases per target: `WARPFORGE_FUZZ_CASES`, or `default`.
fn cases(default: u32) -> Config {
    let n = std::env::var("WARPFORGE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    Config {
        cases: n,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        // A shrink replays inputs that may each run a kernel: keep it bounded.
        max_shrink_iters: 2000,
        ..Config::default()
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every PTX file of the workloads and the test fixtures: (name, text).
fn corpus() -> &'static [(String, String)] {
    static C: OnceLock<Vec<(String, String)>> = OnceLock::new();
    C.get_or_init(|| {
        let mut v = Vec::new();
        for dir in ["workloads/ptx", "tests/fixtures"] {
            let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
                .collect();
            files.sort();
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                v.push((f.file_name().unwrap().to_string_lossy().into_owned(), text));
            }
        }
        v
    })
}

/// The corpus's whitespace-separated tokens and instruction lines, plus edge cases.
fn vocabulary() -> &'static (Vec<String>, Vec<String>) {
    static V: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    V.get_or_init(|| {
        let mut toks: Vec<String> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        for (_, text) in corpus() {
            for l in text.lines() {
                let t = l.trim();
                let foreign = ["%SP", "retval", "call", "param0"]
                    .iter()
                    .any(|w| t.contains(w));
                if t.ends_with(';') && !t.starts_with("//") && !t.starts_with('.') && !foreign {
                    lines.push(normalise(t));
                }
                toks.extend(t.split_whitespace().map(String::from));
            }
        }
        for extra in [
            "0xFFFFFFFFFFFFFFFFFF",
            "-2147483648",
            "18446744073709551615",
            "1e400",
            "0f7FFFFFFF",
            "0dFFF0000000000000",
            "%r4294967296",
            "%r<4294967295>",
            "[",
            "]",
            "{",
            "}",
            ";",
            ",",
            "@%p1",
            "@!%p9",
            ".align 0",
            ".align 3",
            ".b8 x[4294967296];",
            ".shared .b8 s[0];",
            ".local .b8 l[65536];",
            ".reg .pred %p<0>;",
            "bra.uni $L__BB0_1;",
            "bar.sync 17;",
            "call.uni (retval0), f, (param0);",
            ".maxntid 0, 0, 0",
            "%tid.w",
            "%laneid",
            "-0",
            "0x",
            "\"",
            "/*",
            "//",
        ] {
            toks.push(extra.to_string());
        }
        toks.sort();
        toks.dedup();
        lines.sort();
        lines.dedup();
        (toks, lines)
    })
}

/// The configuration the fuzzed kernels run on: two SMs and tight watchdogs.
fn small_config() -> GpuConfig {
    GpuConfig::preset(
        "gtx480",
        &[
            "sm.count=2".into(),
            "sim.max_cycles=20000".into(),
            "sim.max_warp_instructions=20000".into(),
        ],
    )
    .unwrap()
}

/// Outcomes, printed by each target at its end (`--nocapture`): inputs rejected by the PTX
/// front end, launches that ran to completion, launches that stopped with a guest fault
/// (watchdog included), launches refused with an error.
/// (Per test thread: each target runs on its own.)
#[derive(Clone, Copy, Default)]
struct Tally {
    rejected: u64,
    ran: u64,
    faulted: u64,
    refused: u64,
}

thread_local! {
    static TALLY: Cell<Tally> = Cell::new(Tally::default());
}

fn count(f: impl FnOnce(&mut Tally)) {
    TALLY.with(|t| {
        let mut v = t.get();
        f(&mut v);
        t.set(v);
    });
}

/// Run `cases` inputs of `strategy` through `test`; a failure (a panic included) fails the
/// test with the minimised input. Prints the cases, the time and the outcomes.
fn fuzz<S: Strategy>(
    target: &str,
    default_cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let config = cases(default_cases);
    let n = config.cases;
    let mut runner = TestRunner::new(config);
    let start = Instant::now();
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{target}: {e}");
    }
    let t = TALLY.with(Cell::get);
    eprintln!(
        "fuzz {target}: {n} cases in {:.1} s, no panic; {} inputs rejected with an error, {} \
         launches ran, {} stopped with a guest fault, {} refused with an error",
        start.elapsed().as_secs_f64(),
        t.rejected,
        t.ran,
        t.faulted,
        t.refused
    );
}

/// Load `text` and run (at most two of) its kernels, then the first again, with pointer
/// parameters aimed at a 64 KiB buffer of small integers and the other parameters small,
/// default or strict bounds: every outcome but a panic is fine. Errors must say something.
fn run_ptx(text: &str, mode: Mode, cfg: &GpuConfig, shape: (Dim3, Dim3), seed: u64) {
    let mut gpu = Gpu::new(cfg.clone(), mode);
    gpu.set_strict_bounds(seed >> 63 != 0);
    let m = match gpu.load_module("fuzz.ptx", text) {
        Ok(m) => m,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            if std::env::var("FUZZ_DEBUG").is_ok() {
                eprintln!("REJECT {e}");
            }
            count(|t| t.rejected += 1);
            return;
        }
    };
    let buf = gpu.alloc(1 << 16).unwrap();
    let data: Vec<u32> = (0..1 << 14)
        .map(|i| (i as u32 ^ seed as u32) % 97)
        .collect();
    gpu.write_u32(buf, &data).unwrap();
    let module = gpu.module(m).unwrap();
    let launches: Vec<(String, Vec<u8>)> = module
        .kernels
        .iter()
        .take(2)
        .map(|k| {
            if k.param_bytes > MAX_PARAM_BYTES {
                return (k.name.clone(), vec![]);
            }
            let mut p = vec![0u8; k.param_bytes as usize];
            for (i, &s) in k.params.iter().enumerate() {
                let sym = &module.symbols[s as usize];
                let (off, size) = (sym.offset as usize, sym.size as usize);
                // Mostly a pointer into the buffer and small counts; sometimes a pointer
                // past the mapped pages, misaligned, null, before the buffer, or a huge
                // count.
                let odd = (seed >> (16 + 2 * i)) % 16;
                let v: u64 = match (size == 8, odd) {
                    (true, 0) => buf.0 + (1 << 20),
                    (true, 1) => buf.0 + 2,
                    (true, 2) => 0,
                    (true, 3) => buf.0 - 512, // the context page below the first buffer
                    (true, _) => buf.0 + ((seed >> (i % 8)) & 0xff) * 4,
                    (false, 0) => u32::MAX as u64,
                    (false, 1) => 1 << 31,
                    (false, _) => 16 + (seed >> i) % 48,
                };
                let b = v.to_le_bytes();
                if let Some(dst) = p.get_mut(off..off + size.min(8)) {
                    dst.copy_from_slice(&b[..size.min(8)]);
                }
            }
            (k.name.clone(), p)
        })
        .collect();
    // Each kernel, then the first again: launches follow one another on one GPU (after a
    // fault, as a refused launch).
    let again = launches.first().cloned();
    for (name, params) in launches.into_iter().chain(again) {
        let shape = LaunchShape {
            grid: shape.0,
            block: shape.1,
            dynamic_shared: (seed % 3 * 512) as u32,
        };
        match gpu.launch_raw(m, &name, shape, &params) {
            Ok(()) => count(|t| t.ran += 1),
            Err(e) => {
                assert!(!e.to_string().is_empty());
                match e {
                    warpforge_model::error::SimError::Fault(_) => count(|t| t.faulted += 1),
                    _ => count(|t| t.refused += 1),
                }
            }
        }
    }
}

/// Apply mutation `op` (kind, a, b, c) to the lines of a PTX text: mostly small changes
/// that keep it parseable (numbers, registers, line order), sometimes destructive ones.
fn mutate(lines: &mut Vec<String>, (kind, a, b, c): (u8, usize, usize, usize)) {
    let (toks, _) = vocabulary();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let (i, j) = (a % n, b % n);
    let words = |l: &str| -> Vec<String> { l.split_whitespace().map(String::from).collect() };
    match kind % 16 {
        0..=4 => {
            // change a number
            const NUMS: &[&str] = &[
                "0",
                "1",
                "2",
                "-1",
                "3",
                "7",
                "31",
                "32",
                "33",
                "255",
                "4096",
                "65536",
                "2147483647",
                "2147483648",
                "4294967296",
                "-9223372036854775808",
                "0xffffffff",
                "0f7F800000",
            ];
            let l = &lines[i];
            let digits: Vec<usize> = l
                .char_indices()
                .filter(|&(k, ch)| {
                    ch.is_ascii_digit() && (k == 0 || !l.as_bytes()[k - 1].is_ascii_alphanumeric())
                })
                .map(|(k, _)| k)
                .collect();
            if !digits.is_empty() {
                let p = digits[j % digits.len()];
                let end = l[p..]
                    .find(|ch: char| !ch.is_ascii_alphanumeric())
                    .map_or(l.len(), |e| p + e);
                lines[i] = format!("{}{}{}", &l[..p], NUMS[c % NUMS.len()], &l[end..]);
            }
        }
        5..=7 => {
            // a register operand of line i becomes one of line j
            let regs = |l: &str| -> Vec<String> {
                l.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '%' || ch == '_'))
                    .filter(|w| w.starts_with('%') && w.len() > 1)
                    .map(String::from)
                    .collect()
            };
            let (from, to) = (regs(&lines[i]), regs(&lines[j]));
            if !from.is_empty() && !to.is_empty() {
                let r = &from[c % from.len()];
                lines[i] = lines[i].replacen(r.as_str(), &to[(c / 7) % to.len()], 1);
            }
        }
        8 | 9 => lines.swap(i, j),
        10 | 11 => {
            let l = lines[i].clone();
            lines.insert(j, l);
        }
        12 => {
            lines.remove(i);
        }
        13 => {
            // one word of a line replaced by a word of another
            let (mut w, other) = (words(&lines[i]), words(&lines[j]));
            if !w.is_empty() && !other.is_empty() {
                let k = c % w.len();
                w[k] = other[(c / 7) % other.len()].clone();
                lines[i] = w.join(" ");
            }
        }
        14 => {
            let l = &lines[i];
            let cut = l
                .char_indices()
                .nth(c % (l.chars().count() + 1))
                .map_or(l.len(), |(k, _)| k);
            lines[i] = l[..cut].to_string();
        }
        _ => {
            if c % 2 == 0 {
                lines.truncate(i.max(1));
            } else {
                lines.insert(i, toks[c % toks.len()].clone());
            }
        }
    }
}

/// An instruction of the corpus made to fit [`skeleton`]: kernel parameters become `p0`..
/// `p2`, shared arrays `sh`, branch targets the skeleton's labels `LBB0_0`..`LBB0_3`.
fn normalise(line: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |w: &mut String, out: &mut String| {
        let num = |s: &str| s.parse::<u64>().unwrap_or(0);
        if let Some((_, n)) = w.rsplit_once("_param_") {
            out.push_str(&format!("p{}", num(n) % 3));
        } else if w.starts_with("_ZZ") {
            out.push_str("sh");
        } else if w.contains("BB") && (w.starts_with('L') || w.starts_with("$L")) {
            let n = w.rsplit('_').next().map_or(0, num);
            out.push_str(&format!("LBB0_{}", n % 4));
        } else {
            out.push_str(w);
        }
        w.clear();
    };
    for ch in line.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' || ch == '$' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A PTX module around `body`: one kernel with a few parameters and registers.
fn skeleton(body: &str) -> String {
    format!(
        ".version 6.4\n.target sm_70\n.address_size 64\n\n\
         .visible .entry k(.param .u64 p0, .param .u64 p1, .param .u32 p2)\n{{\n\
         \t.reg .pred %p<64>;\n\t.reg .b16 %rs<64>;\n\t.reg .b32 %r<256>;\n\t.reg .b64 %rd<256>;\n\
         \t.reg .f32 %f<256>;\n\t.reg .f64 %fd<64>;\n\t.shared .align 4 .b8 sh[1024];\n\
         \tld.param.u64 %rd1, [p0];\n\tld.param.u64 %rd2, [p1];\n\tld.param.u32 %r1, [p2];\n\
         {body}\n\tret;\n}}\n"
    )
}

fn modes() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::Functional), Just(Mode::Timing)]
}

/// (grid, block): mostly small, sometimes 2-D/3-D or as large as CUDA allows.
fn shapes() -> impl Strategy<Value = (Dim3, Dim3)> {
    (
        prop_oneof![
            8 => (1u32..4).prop_map(Dim3::x),
            1 => Just(Dim3::new(2, 3, 2)),
            1 => Just(Dim3::x(200)),
        ],
        prop_oneof![
            8 => prop_oneof![Just(1u32), Just(32), Just(64), Just(96)].prop_map(Dim3::x),
            1 => Just(Dim3::new(8, 4, 2)),
            1 => Just(Dim3::x(1024)),
            1 => Just(Dim3::new(16, 16, 1)),
        ],
    )
}

/// Mutations of every PTX file of the workloads and fixtures.
#[test]
fn mutated_ptx_runs_or_is_an_error() {
    let strategy = (
        0usize..1000,
        prop::collection::vec(
            (any::<u8>(), any::<usize>(), any::<usize>(), any::<usize>()),
            1..3,
        ),
        modes(),
        shapes(),
        any::<u64>(),
    );
    fuzz(
        "PTX mutations",
        400,
        strategy,
        |(file, ops, mode, shape, seed)| {
            let (_, text) = &corpus()[file % corpus().len()];
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            for op in ops {
                mutate(&mut lines, op);
            }
            run_ptx(&lines.join("\n"), mode, &small_config(), shape, seed);
            Ok(())
        },
    );
}

/// Soups of the corpus's instructions (and a few raw tokens) inside a kernel skeleton,
/// with its four branch targets somewhere, or alone.
#[test]
fn instruction_and_token_soups_run_or_are_errors() {
    let strategy = (
        prop::collection::vec(
            (prop::bool::weighted(0.995), any::<usize>(), 0usize..4),
            1..32,
        ),
        prop::bool::weighted(0.9),
        modes(),
        shapes(),
        any::<u64>(),
    );
    fuzz(
        "PTX soups",
        300,
        strategy,
        |(picks, wrapped, mode, shape, seed)| {
            let (toks, insts) = vocabulary();
            let mut lines = Vec::new();
            for (inst, k, extra) in picks {
                if inst {
                    lines.push(insts[k % insts.len()].clone());
                } else {
                    let mut l = String::new();
                    for e in 0..=extra {
                        l.push_str(&toks[(k.wrapping_add(e * 7919)) % toks.len()]);
                        l.push(' ');
                    }
                    lines.push(l);
                }
            }
            for l in 0..4 {
                let at = (seed >> (8 * l)) as usize % (lines.len() + 1);
                lines.insert(at, format!("LBB0_{l}:"));
            }
            let body = lines.join("\n");
            let text = if wrapped { skeleton(&body) } else { body };
            run_ptx(&text, mode, &small_config(), shape, seed);
            Ok(())
        },
    );
}

/// Flattened keys of a preset with their values (`sm.count`, 15), for the config fuzzer.
fn preset_keys() -> &'static Vec<(String, toml::Value)> {
    static K: OnceLock<Vec<(String, toml::Value)>> = OnceLock::new();
    K.get_or_init(|| {
        fn walk(prefix: &str, v: &toml::Value, out: &mut Vec<(String, toml::Value)>) {
            match v {
                toml::Value::Table(t) => {
                    for (k, v) in t {
                        let key = if prefix.is_empty() {
                            k.clone()
                        } else {
                            format!("{prefix}.{k}")
                        };
                        walk(&key, v, out);
                    }
                }
                other => out.push((prefix.to_string(), other.clone())),
            }
        }
        let mut out = Vec::new();
        for (_, text) in PRESETS {
            walk("", &text.parse::<toml::Value>().unwrap(), &mut out);
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.dedup_by(|a, b| a.0 == b.0);
        out
    })
}

/// A value for a key: inside or at the edges of its stated range, of another type, or
/// garbage.
fn config_value(key: &str, v: &toml::Value, pick: u8, r: u64) -> String {
    let lim = KEY_LIMITS.iter().find(|l| l.key == key);
    match (pick % 20, lim) {
        (0, Some(l)) => l.min.to_string(),
        (1, Some(l)) => l.max.to_string(),
        (2, Some(l)) => l.max.saturating_add(1).to_string(),
        (3, Some(l)) => l.min.saturating_sub(1).to_string(),
        (4..=9, Some(l)) => (l.min + r % (l.max - l.min).saturating_add(1).max(1)).to_string(),
        (4..=9, None) | (13..=15, _) => match v {
            toml::Value::Integer(i) => {
                (i.saturating_mul(1 + (r % 4) as i64) / (1 + (r >> 8) % 4) as i64).to_string()
            }
            toml::Value::Float(f) => format!("{:?}", f * ((r % 7) as f64 - 1.0)),
            toml::Value::Boolean(b) => (!b).to_string(),
            toml::Value::String(s) => format!("\"{s}\""),
            other => other.to_string(),
        },
        (10 | 11, _) => [
            "true",
            "\"lrr\"",
            "\"gto\"",
            "\"dpe\"",
            "\"spe\"",
            "\"constrained\"",
            "1.5",
            "-0.0",
            "\"two_level\"",
            "\"greedy\"",
        ][r as usize % 10]
            .into(),
        (12, _) => [
            "9223372036854775807",
            "-9223372036854775808",
            "18446744073709551616",
            "1e308",
            "nan",
            "inf",
            "",
            "=",
            "[1, 2]",
            "{a = 1}",
            "\"\"",
            "0x10",
            "1_000",
        ][r as usize % 13]
            .into(),
        _ => v.to_string(),
    }
}

/// `--set key=value` overrides with the presets' keys (and a few unknown ones).
#[test]
fn configuration_overrides_run_or_are_errors() {
    let strategy = (
        prop::collection::vec((any::<usize>(), any::<u8>(), any::<u64>()), 1..4),
        0usize..2,
        modes(),
    );
    fuzz(
        "configuration overrides",
        200,
        strategy,
        |(sets, preset, mode)| {
            let keys = preset_keys();
            let mut ovs: Vec<String> = sets
                .iter()
                .map(|&(k, pick, r)| {
                    if pick == 255 {
                        return format!("no.such_key{k}=1");
                    }
                    let (key, v) = &keys[k % keys.len()];
                    format!("{key}={}", config_value(key, v, pick, r))
                })
                .collect();
            // Bounded runs whatever the overrides say.
            ovs.push("sim.max_cycles=20000".into());
            ovs.push("sim.max_warp_instructions=20000".into());
            let name = PRESETS[preset % PRESETS.len()].0;
            let cfg = match GpuConfig::preset(name, &ovs) {
                Ok(c) => c,
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                    count(|t| t.rejected += 1);
                    return Ok(());
                }
            };
            // A workload's or fixture's kernels on the configured GPU.
            let (_, text) = &corpus()[sets[0].0 % corpus().len()];
            run_ptx(text, mode, &cfg, (Dim3::x(2), Dim3::x(64)), sets[0].2);
            Ok(())
        },
    );
}

/// A scratch folder for the launch-file fuzzer, with the input file a fixture reads.
fn scratch() -> &'static Path {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("warpforge-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("struct_params.in.bin"), vec![0x3eu8; 512]).unwrap();
        std::fs::write(d.join("in.bin"), vec![3u8; 600]).unwrap();
        d
    })
}

/// The fixtures' launch files with their PTX: (launch text, PTX file name).
fn launch_corpus() -> &'static [(String, String)] {
    static C: OnceLock<Vec<(String, String)>> = OnceLock::new();
    C.get_or_init(|| {
        let dir = root().join("tests/fixtures");
        let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| {
                let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
                let ptx = match stem.as_str() {
                    "oob" | "oob_unmapped" => "vecadd".to_string(),
                    "struct_bytes" => "struct_params".to_string(),
                    _ => stem,
                };
                (std::fs::read_to_string(&p).unwrap(), format!("{ptx}.ptx"))
            })
            .collect();
        v.sort();
        v
    })
}

/// A TOML value for a launch-file key: sizes around the limits, other types, names.
fn launch_value(pick: usize) -> &'static str {
    const POOL: &[&str] = &[
        "0",
        "1",
        "2",
        "3",
        "16",
        "64",
        "100",
        "256",
        "512",
        "1025",
        "4096",
        "65536",
        "8589934592",
        "1099511627776",
        "-1",
        "9223372036854775807",
        "1.5",
        "-0.5",
        "1e300",
        "true",
        "false",
        "\"in\"",
        "\"a\"",
        "\"\"",
        "\"random\"",
        "\"zeros\"",
        "\"file\"",
        "\"in.bin\"",
        "\"/dev/zero\"",
        "\"/nonexistent/x.bin\"",
        "\".\"",
        "\"out.bin\"",
        "\"u32\"",
        "\"f64\"",
        "\"bool\"",
        "\"ptr\"",
        "\"s8\"",
        "\"scalar\"",
        "\"buffer\"",
        "\"pointer\"",
        "\"struct\"",
        "[1, 2]",
        "[1, 2, 3, 4]",
        "[65535, 65535, 65]",
        "[0, 0, 0, 64, 0, 0, 128, 63]",
        "[300]",
        "[]",
        "[[1]]",
        "{ type = \"u32\", value = 1 }",
        "[{ type = \"f32\", value = 1.0 }, { type = \"ptr\", buffer = \"in\", offset = 8 }]",
        "[{ type = \"u8\", value = 1, at = 30000 }]",
        "[{ type = \"ptr\", buffer = \"zz\" }]",
    ];
    POOL[pick % POOL.len()]
}

/// Mostly a value of the kind `key` takes (so that the file gets further), else any.
fn value_like(key: &str, old: &str, pick: usize) -> String {
    let of = |pool: &[&str]| pool[(pick / 5) % pool.len()].to_string();
    if pick.is_multiple_of(5) {
        return launch_value(pick / 5).to_string();
    }
    match key {
        "kind" => of(&["\"scalar\"", "\"buffer\"", "\"pointer\"", "\"struct\""]),
        "type" => of(&[
            "\"u8\"", "\"s8\"", "\"u16\"", "\"s16\"", "\"u32\"", "\"s32\"", "\"u64\"", "\"s64\"",
            "\"f32\"", "\"f64\"", "\"bool\"",
        ]),
        "init" => of(&["\"zeros\"", "\"random\"", "\"file\""]),
        "name" | "buffer" => of(&["\"in\"", "\"a\"", "\"b\""]),
        "file" | "output" => of(&[
            "\"in.bin\"",
            "\"struct_params.in.bin\"",
            "\"/dev/zero\"",
            "\"out.bin\"",
        ]),
        "value" if old == "true" || old == "false" => of(&["true", "false"]),
        "grid" | "block" => of(&[
            "1",
            "2",
            "32",
            "64",
            "256",
            "1024",
            "1025",
            "[2, 2]",
            "[1, 1, 65]",
            "[0, 1]",
        ]),
        _ if old.starts_with('[') => of(&[
            "[]",
            "[0, 0, 0, 64]",
            "[0, 0, 0, 64, 0, 0, 128, 63]",
            "[1, 2, 3]",
        ]),
        _ if old.contains('.') => of(&["0.0", "-1.5", "3.25", "1e38", "1e39", "-0.0"]),
        _ => of(&[
            "0",
            "1",
            "2",
            "3",
            "4",
            "16",
            "60",
            "100",
            "255",
            "256",
            "4096",
            "65536",
            "-1",
            "8589934592",
        ]),
    }
}

const LAUNCH_KEYS: &[&str] = &[
    "kernel",
    "grid",
    "block",
    "shared_bytes",
    "kind",
    "type",
    "value",
    "name",
    "bytes",
    "init",
    "seed",
    "file",
    "output",
    "buffer",
    "offset",
    "field",
    "bogus",
];

/// Apply mutation (kind, a, b) to the lines of a launch file.
fn mutate_launch(lines: &mut Vec<String>, (kind, a, b): (u8, usize, usize)) {
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let i = a % n;
    match kind % 8 {
        // a key's value (the most common mutation)
        0..=2 => {
            if let Some((k, v)) = lines[i].split_once('=') {
                lines[i] = format!("{}= {}", k, value_like(k.trim(), v.trim(), b));
            }
        }
        3 => {
            lines.remove(i);
        }
        4 => {
            let l = lines[i].clone();
            lines.insert(b % n, l);
        }
        5 => lines.insert(
            i,
            format!(
                "{} = {}",
                LAUNCH_KEYS[b % LAUNCH_KEYS.len()],
                launch_value(b / 7)
            ),
        ),
        6 => {
            // a copy of the table that holds line i, appended
            let start = (0..=i).rev().find(|&k| lines[k].starts_with("[["));
            if let Some(s) = start {
                let end = (s + 1..n)
                    .find(|&k| lines[k].starts_with("[["))
                    .unwrap_or(n);
                let table: Vec<String> = lines[s..end].to_vec();
                lines.extend(table);
            }
        }
        _ => lines.insert(
            i,
            ["[[param]]", "[[buffer]]", "[param]", "kind ="][b % 4].into(),
        ),
    }
}

/// Launch files: the fixtures' launch files with values, lines and tables changed.
#[test]
fn launch_files_run_or_are_errors() {
    let strategy = (
        any::<usize>(),
        prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..3),
        prop::option::weighted(0.05, any::<usize>()),
        modes(),
    );
    fuzz("launch files", 300, strategy, |(file, ops, cut, mode)| {
        let (text, ptx) = &launch_corpus()[file % launch_corpus().len()];
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        for op in ops {
            mutate_launch(&mut lines, op);
        }
        let mut toml = lines.join("\n");
        if let Some(c) = cut {
            let at = toml
                .char_indices()
                .nth(c % (toml.chars().count() + 1))
                .map_or(toml.len(), |(i, _)| i);
            toml.truncate(at);
        }
        let path = scratch().join("fuzz.toml");
        std::fs::write(&path, &toml).unwrap();
        let lf = match launch_file::load(&path) {
            Ok(l) => l,
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                count(|t| t.rejected += 1);
                return Ok(());
            }
        };
        let ptx_text = std::fs::read_to_string(root().join("tests/fixtures").join(ptx)).unwrap();
        let mut gpu = Gpu::new(small_config(), mode);
        let m = gpu.load_module(ptx, &ptx_text).unwrap();
        match lf.materialise(&mut gpu, m) {
            Ok(run) => match gpu.launch_raw(m, lf.kernel(), run.shape, &run.params) {
                Ok(()) => {
                    count(|t| t.ran += 1);
                    for o in &run.outputs {
                        let _ = launch_file::write_output(&mut gpu, o);
                    }
                }
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                    match e {
                        warpforge_model::error::SimError::Fault(_) => count(|t| t.faulted += 1),
                        _ => count(|t| t.refused += 1),
                    }
                }
            },
            Err(e) => {
                prop_assert!(!e.to_string().is_empty(), "{toml}");
                if std::env::var("FUZZ_DEBUG").is_ok() {
                    eprintln!("REJECT {e}");
                }
                count(|t| t.rejected += 1);
            }
        }
        Ok(())
    });
}
