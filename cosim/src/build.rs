//! Building a Verilog design into a loadable model library, with a content-addressed cache.
//!
//! Steps (design.md §4): find `verilator` (never setting `VERILATOR_ROOT`: its own
//! `--getenv VERILATOR_ROOT` locates the include directory), build the Verilator runtime
//! (verilated.cpp, verilated_threads.cpp, verilated_vcd_c.cpp) into an archive once per
//! Verilator version and flag set, verilate the design single-threaded with `-G` parameters,
//! check its ports against the unit description, generate the shim ([`crate::shim`]),
//! compile everything with g++ into one shared library and cache it under a content hash
//! of everything that went into it. Every cache entry is built in a private temporary
//! directory and renamed into place, so concurrent builds (threads or processes) are safe:
//! the loser of a race discards its copy and uses the winner's.

use crate::hash::ContentHash;
use crate::shim::{self, HeaderPort};
use crate::CosimError;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use warpforge_model::units::contract::{Params, Role, UnitDesc};

/// Bump when the way a model is built changes without any flag or text changing.
const BUILD_RECIPE: u32 = 2;

/// Generated per-cycle C++ above this size is compiled at `BuildOptions::opt_slow` (see
/// where it is used).
const LARGE_MODEL_BYTES: u64 = 1 << 20;

/// The model class prefix Verilator generates (`Vwf.h`, `Vwf.cpp`...).
const PREFIX: &str = "Vwf";

/// Verilator flags every model is built with (single-threaded; see design.md §4), and
/// `--trace` unless [`BuildOptions::tracing`] is off.
const VERILATOR_FLAGS: &[&str] = &[
    "--cc",
    "-O3",
    "-Wno-fatal",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "--no-timing",
    "--threads",
    "1",
];

/// C++ flags shared by the runtime archive and the models (from Verilator's verilated.mk,
/// plus the user hooks that route `$finish`/`$stop`/fatal errors back to the shim).
const CXX_COMMON: &[&str] = &[
    "-fPIC",
    "-fvisibility=hidden",
    "-faligned-new",
    "-fcf-protection=none",
    "-Wno-bool-operation",
    "-Wno-sign-compare",
    "-Wno-uninitialized",
    "-Wno-unused-but-set-variable",
    "-Wno-unused-parameter",
    "-Wno-unused-variable",
    "-Wno-shadow",
    "-DVM_COVERAGE=0",
    "-DVM_SC=0",
    "-DVM_TRACE=1",
    "-DVM_TRACE_FST=0",
    "-DVM_TRACE_VCD=1",
    "-DVL_USER_FINISH",
    "-DVL_USER_STOP",
    "-DVL_USER_FATAL",
];

/// The runtime's `VL_PRINTF` (Verilator's hook for everything a model prints: `$display`,
/// `$write`, its own messages), defined by every model's shim: the text printed before a
/// `$stop` or fatal error goes into that error's message instead of stdout, unattributed
/// (see `shim.rs`).
const PRINTF_HOOK: &str = "wf_vl_printf";
/// Declares [`PRINTF_HOOK`] for the runtime's sources (`-include`d).
const PRINTF_HEADER: &str = "extern \"C\" int wf_vl_printf(const char* fmt, ...);\n";

/// The Verilator headers every model includes, precompiled once next to the runtime
/// archive (one per optimisation level): this halves a model's compile time, which is
/// otherwise dominated by parsing verilated.h. GCC falls back to the plain header (next to
/// the `.gch`) if the precompiled one does not fit.
const PCH_TEXT: &str = "#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n";

fn pch_opts(opts: &BuildOptions) -> Vec<String> {
    let mut v = vec![opts.opt_fast.clone()];
    if opts.opt_slow != opts.opt_fast {
        v.push(opts.opt_slow.clone());
    }
    v
}

fn pch_dir_name(opt: &str) -> String {
    format!(
        "pch{}",
        opt.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    )
}

const RUNTIME_SOURCES: &[&str] = &[
    "verilated.cpp",
    "verilated_threads.cpp",
    "verilated_vcd_c.cpp",
];

/// Where and how models are built.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Model cache (default `$WARPFORGE_CACHE` or `~/.cache/warpforge`), models in `models/`.
    pub cache_dir: PathBuf,
    /// Runtime archive cache (default `<cache_dir>/runtime`).
    pub runtime_dir: Option<PathBuf>,
    /// The `verilator` executable (default: `verilator` on `PATH`).
    pub verilator: PathBuf,
    /// The C++ compiler (default `$CXX` or `g++`).
    pub cxx: String,
    /// Optimisation for the model's per-cycle code and the shim.
    pub opt_fast: String,
    /// Optimisation for the once-only code (constructors, trace declarations).
    pub opt_slow: String,
    /// Extra arguments passed to Verilator (part of the cache key).
    pub verilator_args: Vec<String>,
    /// Parallel compiler processes per build (default 2: fast and slow halves).
    pub jobs: usize,
    /// X checking (design.md §4: two-state simulation hides X bugs): `Some(seed)` builds
    /// with `--x-assign unique --x-initial unique` and gives every instance
    /// `randReset(2)` with this seed, so registers start random and every X the RTL
    /// produces (an out-of-range select, a `case` without a default) is a random value
    /// instead of 0: an output that depends on one then differs from the model. `None`
    /// (the default): two-state with X as 0, the fast mode.
    pub x_random: Option<u64>,
    /// Verilate with `--trace` so an instance can write a VCD (the failure window); on by
    /// default. The trace code is about a quarter of a model's C++ and half of its
    /// per-cycle half's compile time, so builds that never write a VCD leave it out.
    pub tracing: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            cache_dir: default_cache_dir(),
            runtime_dir: None,
            verilator: PathBuf::from("verilator"),
            cxx: std::env::var("CXX").unwrap_or_else(|_| "g++".into()),
            opt_fast: "-O2".into(),
            opt_slow: "-O1".into(),
            verilator_args: vec![],
            jobs: 2,
            x_random: None,
            tracing: true,
        }
    }
}

impl BuildOptions {
    /// These options for models that run briefly, are built by the dozen and never write a
    /// VCD (mutants: most are caught within a few thousand cycles, and a mutant run keeps
    /// no failure artifacts): the C++ at -O0, which with the precompiled headers compiles
    /// in about half the CPU time of -O2/-O1 and runs several times slower, and no trace
    /// code (the SPE stack's model: 180 KB of C++ with it, 138 KB without; its per-cycle
    /// half compiled in 0.83 s with it and 0.45 s without at -O0). What is simulated is the
    /// same.
    pub fn for_mutants(self) -> BuildOptions {
        BuildOptions {
            opt_fast: "-O0".into(),
            opt_slow: "-O0".into(),
            tracing: false,
            ..self
        }
    }

    /// Default options with the model cache in `dir` (the runtime archive stays in the
    /// default cache, so a fresh model cache does not rebuild the runtime).
    pub fn with_cache_dir(dir: impl Into<PathBuf>) -> BuildOptions {
        let d = BuildOptions::default();
        BuildOptions {
            runtime_dir: Some(d.cache_dir.join("runtime")),
            cache_dir: dir.into(),
            ..d
        }
    }

    fn runtime_root(&self) -> PathBuf {
        self.runtime_dir
            .clone()
            .unwrap_or_else(|| self.cache_dir.join("runtime"))
    }
}

/// `$WARPFORGE_CACHE`, else `$XDG_CACHE_HOME/warpforge`, else `~/.cache/warpforge`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("WARPFORGE_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("warpforge");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(h) => PathBuf::from(h).join(".cache").join("warpforge"),
        None => std::env::temp_dir().join("warpforge-cache"),
    }
}

/// The Verilog of one design: its files (name, text) and the top module name.
/// The generator's output plugs in with [`RtlSource::cosim_of`]: the co-simulated design is
/// the unit's files plus its co-simulation wrapper, whose top exposes the debug ports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RtlSource {
    pub top: String,
    pub files: Vec<(String, String)>,
}

impl RtlSource {
    pub fn new(top: impl Into<String>, files: Vec<(String, String)>) -> RtlSource {
        RtlSource {
            top: top.into(),
            files,
        }
    }

    /// The co-simulated design of a generated unit: every file (the unit's module, its
    /// library modules, the co-simulation wrapper), top = the wrapper (`<unit>_cosim`, or
    /// the unit itself when it has no debug ports).
    pub fn cosim_of(unit: &warpforge_gen::GeneratedUnit) -> RtlSource {
        RtlSource::new(unit.manifest.cosim_top.clone(), unit.cosim_files())
    }

    /// The index of the file that declares module `module` (the first file if none does).
    pub fn file_of_module(&self, module: &str) -> usize {
        self.files
            .iter()
            .position(|(_, t)| crate::mutants::declares_module(t, module))
            .unwrap_or(0)
    }

    /// One file of Verilog text.
    pub fn single(top: impl Into<String>, text: impl Into<String>) -> RtlSource {
        let top = top.into();
        let name = format!("{top}.v");
        RtlSource::new(top, vec![(name, text.into())])
    }

    /// Read Verilog files from disk.
    pub fn from_paths(top: impl Into<String>, paths: &[PathBuf]) -> Result<RtlSource, CosimError> {
        let mut files = vec![];
        for p in paths {
            let text = fs::read_to_string(p)
                .map_err(|e| CosimError::Io(format!("cannot read {}: {e}", p.display())))?;
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "design.v".into());
            files.push((name, text));
        }
        Ok(RtlSource::new(top, files))
    }

    /// The same design with the text of file `index` replaced (used by mutants).
    pub fn with_file_text(&self, index: usize, text: String) -> RtlSource {
        let mut s = self.clone();
        s.files[index].1 = text;
        s
    }
}

/// The located Verilator installation.
#[derive(Debug, Clone)]
pub struct Toolchain {
    pub verilator: PathBuf,
    /// e.g. `5.006`.
    pub version: String,
    /// Verilator's root (`verilator --getenv VERILATOR_ROOT`); sources in `<root>/include`.
    pub root: PathBuf,
}

impl Toolchain {
    pub fn include_dir(&self) -> PathBuf {
        self.root.join("include")
    }
}

fn verilator_cmd(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    // Never let a stray VERILATOR_ROOT from the environment point Debian's verilator at
    // another installation (design.md §4).
    c.env_remove("VERILATOR_ROOT");
    c
}

fn missing_verilator(exe: &Path, e: &std::io::Error) -> CosimError {
    CosimError::Toolchain(format!(
        "cannot run `{}` ({e}): Verilator 5 is needed for co-simulation; install it with \
         `sudo apt-get install -y verilator`",
        exe.display()
    ))
}

/// Find Verilator and its include directory (cached per executable for the process).
pub fn toolchain(opts: &BuildOptions) -> Result<Toolchain, CosimError> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Toolchain>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(t) = cache.lock().unwrap().get(&opts.verilator) {
        return Ok(t.clone());
    }
    let out = verilator_cmd(&opts.verilator)
        .arg("--version")
        .output()
        .map_err(|e| missing_verilator(&opts.verilator, &e))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // "Verilator 5.006 2023-01-22 rev (Debian 5.006-3)"
    let version = text
        .split_whitespace()
        .nth(1)
        .filter(|_| text.starts_with("Verilator"))
        .ok_or_else(|| {
            CosimError::Toolchain(format!(
                "`{} --version` printed `{}`, not a Verilator version",
                opts.verilator.display(),
                text.trim()
            ))
        })?
        .to_string();
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 5 {
        return Err(CosimError::Toolchain(format!(
            "Verilator {version} is too old: version 5 or newer is needed \
             (`sudo apt-get install -y verilator` on Debian 12 gives 5.006)"
        )));
    }
    let out = verilator_cmd(&opts.verilator)
        .args(["--getenv", "VERILATOR_ROOT"])
        .output()
        .map_err(|e| missing_verilator(&opts.verilator, &e))?;
    let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !root.join("include").join("verilated.cpp").exists() {
        return Err(CosimError::Toolchain(format!(
            "Verilator's include directory {} has no verilated.cpp",
            root.join("include").display()
        )));
    }
    let t = Toolchain {
        verilator: opts.verilator.clone(),
        version,
        root,
    };
    cache
        .lock()
        .unwrap()
        .insert(opts.verilator.clone(), t.clone());
    Ok(t)
}

/// A unique scratch directory next to `final_dir` (same file system, so rename is atomic).
fn temp_dir_for(final_dir: &Path) -> Result<PathBuf, CosimError> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let parent = final_dir.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!(
        ".tmp-{}-{}-{n}-{nanos}",
        final_dir.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    );
    let dir = parent.join(name);
    fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    Ok(dir)
}

/// Move a finished build into place; if another builder won the race, keep theirs.
fn publish(tmp: &Path, final_dir: &Path) -> Result<(), CosimError> {
    match fs::rename(tmp, final_dir) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = fs::remove_dir_all(tmp);
            if final_dir.exists() {
                Ok(())
            } else {
                Err(io_err("rename into", final_dir, e))
            }
        }
    }
}

fn io_err(what: &str, p: &Path, e: std::io::Error) -> CosimError {
    CosimError::Io(format!("cannot {what} {}: {e}", p.display()))
}

/// One in-process lock per cache entry so parallel test threads wait for one build
/// instead of all building the same thing (other processes are handled by `publish`).
fn entry_lock(key: &Path) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key.to_path_buf())
        .or_default()
        .clone()
}

fn run_tool(cmd: &mut Command, stage: &str) -> Result<String, CosimError> {
    let out = cmd.output().map_err(|e| CosimError::Build {
        stage: stage.into(),
        log: format!("cannot run {:?}: {e}", cmd.get_program()),
    })?;
    let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(log)
    } else {
        Err(CosimError::Build {
            stage: stage.into(),
            log: format!("{:?} failed ({}):\n{log}", cmd, out.status),
        })
    }
}

/// The runtime archive for this toolchain and flag set: built once, then reused.
pub fn runtime_archive(tc: &Toolchain, opts: &BuildOptions) -> Result<PathBuf, CosimError> {
    let mut h = ContentHash::new();
    h.field(&tc.version)
        .field(&opts.cxx)
        .field(&opts.opt_fast)
        .field(PCH_TEXT)
        .field(PRINTF_HEADER);
    for o in pch_opts(opts) {
        h.field(o);
    }
    CXX_COMMON.iter().for_each(|f| {
        h.field(f);
    });
    let dir = opts.runtime_root().join(format!(
        "verilator-{}-{}",
        tc.version
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', "_"),
        &h.hex()[..12]
    ));
    let archive = dir.join("libverilated.a");
    if archive.exists() {
        return Ok(archive);
    }
    let lock = entry_lock(&dir);
    let _guard = lock.lock().unwrap();
    if archive.exists() {
        return Ok(archive);
    }
    let tmp = temp_dir_for(&dir)?;
    let inc = tc.include_dir();
    let printf_header = tmp.join("wf_printf.h");
    let result = (|| {
        fs::write(&printf_header, PRINTF_HEADER).map_err(|e| io_err("write", &printf_header, e))?;
        let objs: Vec<PathBuf> = RUNTIME_SOURCES
            .iter()
            .map(|s| tmp.join(s.replace(".cpp", ".o")))
            .collect();
        let jobs: Vec<(Command, String)> = RUNTIME_SOURCES
            .iter()
            .zip(&objs)
            .map(|(src, obj)| {
                let mut c = Command::new(&opts.cxx);
                c.arg(&opts.opt_fast)
                    .args(CXX_COMMON)
                    .arg(format!("-I{}", inc.display()))
                    .arg(format!("-I{}", inc.join("vltstd").display()))
                    .arg(format!("-DVL_PRINTF={PRINTF_HOOK}"))
                    .arg("-include")
                    .arg(&printf_header)
                    .arg("-c")
                    .arg(inc.join(src))
                    .arg("-o")
                    .arg(obj);
                (c, format!("compile Verilator runtime {src}"))
            })
            .collect();
        let mut jobs = jobs;
        for opt in pch_opts(opts) {
            let pch = tmp.join(pch_dir_name(&opt));
            fs::create_dir_all(&pch).map_err(|e| io_err("create", &pch, e))?;
            fs::write(pch.join("wf_pch.h"), PCH_TEXT).map_err(|e| io_err("write", &pch, e))?;
            let mut c = Command::new(&opts.cxx);
            c.arg(&opt)
                .args(CXX_COMMON)
                .arg(format!("-I{}", inc.display()))
                .arg(format!("-I{}", inc.join("vltstd").display()))
                .args(["-x", "c++-header"])
                .arg(pch.join("wf_pch.h"))
                .arg("-o")
                .arg(pch.join("wf_pch.h.gch"));
            jobs.push((c, format!("precompile Verilator headers ({opt})")));
        }
        run_parallel(jobs, opts.jobs.max(1))?;
        let mut ar = Command::new("ar");
        ar.arg("rcs").arg(tmp.join("libverilated.a")).args(&objs);
        run_tool(&mut ar, "archive Verilator runtime")?;
        for o in &objs {
            let _ = fs::remove_file(o);
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    publish(&tmp, &dir)?;
    Ok(archive)
}

fn run_parallel(jobs: Vec<(Command, String)>, n: usize) -> Result<Vec<String>, CosimError> {
    let jobs = Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>());
    let results: Mutex<Vec<(usize, Result<String, CosimError>)>> = Mutex::new(vec![]);
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| loop {
                let job = jobs.lock().unwrap().pop();
                let Some((i, (mut cmd, stage))) = job else {
                    break;
                };
                let r = run_tool(&mut cmd, &stage);
                results.lock().unwrap().push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// What [`build`] produced.
#[derive(Debug, Clone)]
pub struct BuiltModel {
    pub top: String,
    /// The content hash (cache key).
    pub hash: String,
    pub dir: PathBuf,
    pub library: PathBuf,
    /// True when the library came from the cache (nothing was compiled).
    pub cached: bool,
    /// Time in Verilator (zero when cached).
    pub verilate_time: Duration,
    /// Time in the C++ compiler and linker (zero when cached).
    pub compile_time: Duration,
    /// Time of the whole call, including a runtime-archive build if one was needed.
    pub total_time: Duration,
    /// Verilator's warnings (kept with the cache entry).
    pub warnings: String,
    /// The ports as the model declares them (unit port-list order, without `clk`).
    pub ports: Vec<HeaderPort>,
    /// The shim's clock edge skips re-settling the unchanged inputs' logic (see
    /// `edge_eval`); false where the generated code did not allow it.
    pub edge_eval: bool,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    top: String,
    hash: String,
    verilator: String,
    params: String,
    verilate_ms: u64,
    compile_ms: u64,
    warnings: String,
    ports: Vec<(String, String, bool, u32)>,
    #[serde(default)]
    edge_eval: bool,
}

/// Everything that determines the built library, hashed.
fn cache_key(
    tc: &Toolchain,
    desc: &UnitDesc,
    params: &Params,
    rtl: &RtlSource,
    opts: &BuildOptions,
) -> String {
    let mut h = ContentHash::new();
    h.field(format!("recipe {BUILD_RECIPE} shim {}", shim::SHIM_VERSION))
        .field(&tc.version)
        .field(&opts.cxx)
        .field(&opts.opt_fast)
        .field(&opts.opt_slow);
    for f in VERILATOR_FLAGS.iter().chain(CXX_COMMON) {
        h.field(f);
    }
    for a in &opts.verilator_args {
        h.field(a);
    }
    h.field(format!("x_random {:?}", opts.x_random));
    h.field(format!("tracing {}", opts.tracing));
    h.field(&rtl.top).field(params.to_string());
    for (i, p) in desc.ports.iter().enumerate() {
        h.field(p.name)
            .field(format!("{:?}", p.role))
            .field(p.width);
        h.field(i.to_le_bytes());
    }
    for (name, text) in &rtl.files {
        h.field(name).field(text);
    }
    h.hex()
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Build (or fetch from the cache) the model library of `rtl` for unit `desc` with `params`.
pub fn build(
    desc: &UnitDesc,
    params: &Params,
    rtl: &RtlSource,
    opts: &BuildOptions,
) -> Result<BuiltModel, CosimError> {
    let t0 = Instant::now();
    let tc = toolchain(opts)?;
    let hash = cache_key(&tc, desc, params, rtl, opts);
    let dir = opts
        .cache_dir
        .join("models")
        .join(format!("{}-{}", sanitize(&rtl.top), &hash[..20]));
    let library = dir.join(format!("libwf_{}.so", sanitize(&rtl.top)));
    let meta_path = dir.join("meta.json");
    let load_cached = |t0: Instant| -> Option<BuiltModel> {
        let meta: Meta = serde_json::from_str(&fs::read_to_string(&meta_path).ok()?).ok()?;
        if !library.exists() || meta.hash != hash {
            return None;
        }
        // Mark the entry as used (for `prune_models`); best effort.
        if let Ok(f) = fs::File::options().append(true).open(&meta_path) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        Some(BuiltModel {
            top: rtl.top.clone(),
            hash: hash.clone(),
            dir: dir.clone(),
            library: library.clone(),
            cached: true,
            verilate_time: Duration::ZERO,
            compile_time: Duration::ZERO,
            total_time: t0.elapsed(),
            warnings: meta.warnings,
            edge_eval: meta.edge_eval,
            ports: meta
                .ports
                .into_iter()
                .map(|(name, member, input, width)| HeaderPort {
                    name,
                    member,
                    input,
                    width,
                })
                .collect(),
        })
    };
    if let Some(b) = load_cached(t0) {
        return Ok(b);
    }
    let lock = entry_lock(&dir);
    let _guard = lock.lock().unwrap();
    if let Some(b) = load_cached(t0) {
        return Ok(b);
    }
    if dir.exists() {
        // An entry without a readable meta.json is a leftover of an interrupted or foreign
        // build: move it aside (atomic) and remove it, then rebuild.
        if let Ok(trash) = temp_dir_for(&dir) {
            let _ = fs::remove_dir_all(&trash);
            if fs::rename(&dir, &trash).is_ok() {
                let _ = fs::remove_dir_all(&trash);
            }
        }
    }
    let archive = runtime_archive(&tc, opts)?;
    let tmp = temp_dir_for(&dir)?;
    let r = build_into(&tc, desc, params, rtl, opts, &tmp, &archive, &hash);
    match r {
        Ok((verilate_time, compile_time, warnings, ports, edge_eval)) => {
            publish(&tmp, &dir)?;
            Ok(BuiltModel {
                top: rtl.top.clone(),
                hash,
                dir,
                library,
                cached: false,
                verilate_time,
                compile_time,
                total_time: t0.elapsed(),
                warnings,
                ports,
                edge_eval,
            })
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn build_into(
    tc: &Toolchain,
    desc: &UnitDesc,
    params: &Params,
    rtl: &RtlSource,
    opts: &BuildOptions,
    tmp: &Path,
    archive: &Path,
    hash: &str,
) -> Result<(Duration, Duration, String, Vec<HeaderPort>, bool), CosimError> {
    let src = tmp.join("src");
    let obj = tmp.join("obj");
    fs::create_dir_all(&src).map_err(|e| io_err("create", &src, e))?;
    let mut sources = vec![];
    for (name, text) in &rtl.files {
        let safe = Path::new(name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "design.v".into());
        let p = src.join(&safe);
        fs::write(&p, text).map_err(|e| io_err("write", &p, e))?;
        if safe.ends_with(".v") || safe.ends_with(".sv") {
            // Relative to the source directory (Verilator's working directory), so that
            // messages and `$finish` locations name `unit.v:LINE`, not a cache path.
            sources.push(PathBuf::from(safe));
        }
    }
    if sources.is_empty() {
        return Err(CosimError::Build {
            stage: "verilate".into(),
            log: "the design has no .v or .sv file".into(),
        });
    }

    // 1. Verilate.
    let t = Instant::now();
    let mut cmd = verilator_cmd(&tc.verilator);
    cmd.current_dir(&src)
        .args(VERILATOR_FLAGS)
        .args(opts.tracing.then_some("--trace"))
        .arg("--top-module")
        .arg(&rtl.top)
        .arg("--prefix")
        .arg(PREFIX)
        .arg("-Mdir")
        .arg(&obj)
        .arg("-I.");
    for (name, value) in params.iter() {
        cmd.arg(format!("-G{name}={value}"));
    }
    if opts.x_random.is_some() {
        // After VERILATOR_FLAGS' `fast`: the last occurrence of an option wins.
        cmd.args(["--x-assign", "unique", "--x-initial", "unique"]);
    }
    cmd.args(&opts.verilator_args).args(&sources);
    let warnings = run_tool(&mut cmd, "verilate")?;
    let verilate_time = t.elapsed();

    // 2. Check the model's ports against the unit description.
    let header_path = obj.join(format!("{PREFIX}.h"));
    let header = fs::read_to_string(&header_path).map_err(|e| io_err("read", &header_path, e))?;
    let header_ports = parse_ports_checked(&header, &rtl.top)?;
    let ports = match_ports(desc, params, &header_ports, &rtl.top)?;
    let sample_port = header_ports
        .iter()
        .any(|p| p.name == shim::SAMPLE_PORT && p.input && p.width == 1);
    let mutant_port = header_ports.iter().any(is_mutant_port);

    // 3. Shim + unity files: the per-cycle code at opt_fast, the once-only code at
    // opt_slow, compiled in parallel, then linked with the runtime archive.
    let mut names: Vec<String> = fs::read_dir(&obj)
        .map_err(|e| io_err("read", &obj, e))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(PREFIX) && n.ends_with(".cpp"))
        .collect();
    // The shim calls the root module's `_eval` directly when this Verilator defines it as
    // expected (single-threaded builds only: see `shim::ShimOptions::direct_eval`).
    // The per-cycle logic (`*__DepSet_*.cpp` without `__Slow`), where `_eval` is defined.
    let logic: Vec<String> = names
        .iter()
        .filter(|n| n.contains("__DepSet_") && !n.contains("__Slow"))
        .map(|n| fs::read_to_string(obj.join(n)).map_err(|e| io_err("read", &obj.join(n), e)))
        .collect::<Result<_, _>>()?;
    let direct_eval = !opts.verilator_args.iter().any(|a| a.contains("threads"))
        && logic.iter().any(|t| shim::has_direct_eval(PREFIX, t));
    // And at a clock edge, `_eval` without the input-combinational loop when that is
    // equivalent (see `edge_eval`).
    let edge_eval = direct_eval
        .then(|| crate::edge_eval::derive(PREFIX, &logic))
        .flatten();
    fs::write(
        obj.join("wf_shim.cpp"),
        shim::generate(
            PREFIX,
            &ports,
            &shim::ShimOptions {
                direct_eval,
                x_seed: opts.x_random,
                tracing: opts.tracing,
                sample_port,
                mutant_port,
                edge_eval: edge_eval.clone(),
                state: ports
                    .iter()
                    .map(|p| {
                        desc.port_index(&p.name)
                            .is_some_and(|k| desc.ports[k].role == Role::Debug)
                    })
                    .collect(),
            },
        ),
    )
    .map_err(|e| io_err("write", &obj, e))?;
    let mut fast = vec!["wf_shim.cpp".to_string()];
    let mut slow = vec![];
    names.sort();
    for n in names {
        if n.contains("__Slow") || n.contains("__Syms") {
            slow.push(n);
        } else {
            fast.push(n);
        }
    }
    let inc = tc.include_dir();
    let runtime = archive.parent().unwrap_or(Path::new("."));
    // A very large model's per-cycle code is compiled at the once-only level too: g++ -O2
    // took 38.5 s on the 2.8 MB of the 64x256 scoreboard and -O1 14.8 s, for a model 8%
    // slower (0.13 -> 0.12 M cycles/s), so -O1 wins for any run shorter than minutes. A
    // function of the generated sources alone, so one cache key still means one build.
    let fast_bytes: u64 = fast
        .iter()
        .filter_map(|f| fs::metadata(obj.join(f)).ok())
        .map(|m| m.len())
        .sum();
    let fast_opt = if fast_bytes > LARGE_MODEL_BYTES {
        &opts.opt_slow
    } else {
        &opts.opt_fast
    };
    let t = Instant::now();
    let mut jobs = vec![];
    for (part, files, opt) in [("fast", &fast, fast_opt), ("slow", &slow, &opts.opt_slow)] {
        if files.is_empty() {
            continue;
        }
        let unity: String = files
            .iter()
            .map(|f| format!("#include \"{f}\"\n"))
            .collect();
        let unity_path = obj.join(format!("wf_{part}.cpp"));
        fs::write(&unity_path, unity).map_err(|e| io_err("write", &unity_path, e))?;
        let mut c = Command::new(&opts.cxx);
        c.current_dir(&obj)
            .arg(opt)
            .args(CXX_COMMON)
            .arg(format!("-I{}", inc.display()))
            .arg(format!("-I{}", inc.join("vltstd").display()))
            .arg("-I.")
            .arg(format!("-I{}", runtime.join(pch_dir_name(opt)).display()))
            .args(["-include", "wf_pch.h"])
            .arg("-c")
            .arg(&unity_path)
            .arg("-o")
            .arg(obj.join(format!("wf_{part}.o")));
        jobs.push((c, format!("compile model ({part} half)")));
    }
    let objs: Vec<PathBuf> = jobs
        .iter()
        .map(|(c, _)| PathBuf::from(c.get_args().last().unwrap()))
        .collect();
    run_parallel(jobs, opts.jobs.max(1))?;
    let lib = tmp.join(format!("libwf_{}.so", sanitize(&rtl.top)));
    let mut link = Command::new(&opts.cxx);
    link.arg("-shared")
        .arg("-fPIC")
        .args(&objs)
        .arg(archive)
        .arg("-o")
        .arg(&lib)
        .args([
            "-pthread",
            "-latomic",
            "-Wl,--exclude-libs,ALL",
            "-Wl,-Bsymbolic",
        ]);
    run_tool(&mut link, "link model")?;
    let compile_time = t.elapsed();
    for o in &objs {
        let _ = fs::remove_file(o);
    }

    let meta = Meta {
        top: rtl.top.clone(),
        hash: hash.to_string(),
        verilator: tc.version.clone(),
        params: params.to_string(),
        verilate_ms: verilate_time.as_millis() as u64,
        compile_ms: compile_time.as_millis() as u64,
        warnings: warnings.clone(),
        ports: ports
            .iter()
            .map(|p| (p.name.clone(), p.member.clone(), p.input, p.width))
            .collect(),
        edge_eval: edge_eval.is_some(),
    };
    let meta_path = tmp.join("meta.json");
    fs::write(&meta_path, serde_json::to_string_pretty(&meta).unwrap())
        .map_err(|e| io_err("write", &meta_path, e))?;
    Ok((
        verilate_time,
        compile_time,
        warnings,
        ports,
        edge_eval.is_some(),
    ))
}

fn parse_ports_checked(header: &str, top: &str) -> Result<Vec<HeaderPort>, CosimError> {
    let ports = shim::parse_header_ports(header);
    match ports.iter().find(|p| p.name == "clk") {
        Some(p) if p.input && p.width == 1 => Ok(ports),
        _ => Err(CosimError::Build {
            stage: "check ports".into(),
            log: format!("module {top} has no 1-bit input `clk` (the unit contract's clock)"),
        }),
    }
}

/// A mutant schema's selector input (driven by the shim, not a port of the unit).
fn is_mutant_port(p: &HeaderPort) -> bool {
    p.name == shim::MUTANT_PORT && p.input && p.width == crate::mutant_schema::SELECTOR_BITS
}

/// The RTL's ports in the unit's port-list order, checked for names, directions, widths.
fn match_ports(
    desc: &UnitDesc,
    params: &Params,
    rtl_ports: &[HeaderPort],
    top: &str,
) -> Result<Vec<HeaderPort>, CosimError> {
    let widths = desc.widths(params);
    let mut problems = vec![];
    let mut out = vec![];
    for (spec, &w) in desc.ports.iter().zip(&widths) {
        let dir = if spec.role.is_input() {
            "input"
        } else {
            "output"
        };
        match rtl_ports.iter().find(|p| p.name == spec.name) {
            None => problems.push(format!("missing {dir} `{}` [{w}]", spec.name)),
            Some(p) => {
                if p.input != spec.role.is_input() {
                    problems.push(format!(
                        "`{}` is an {} in the RTL but an {dir} ({:?}) in the unit description",
                        spec.name,
                        if p.input { "input" } else { "output" },
                        spec.role
                    ));
                }
                if p.width != w {
                    problems.push(format!(
                        "`{}` is {} bits wide in the RTL but {w} (`{}`) in the unit description",
                        spec.name, p.width, spec.width
                    ));
                }
                out.push(p.clone());
            }
        }
    }
    for p in rtl_ports {
        let harness = p.name == "clk"
            || (p.name == shim::SAMPLE_PORT && p.input && p.width == 1)
            || is_mutant_port(p);
        if !harness && desc.port_index(&p.name).is_none() {
            problems.push(format!(
                "RTL port `{}` [{}] is not in the unit description",
                p.name, p.width
            ));
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(CosimError::Build {
            stage: "check ports".into(),
            log: format!(
                "module {top} does not match unit {} ({params}):\n  {}",
                desc.name,
                problems.join("\n  ")
            ),
        })
    }
}

/// Remove model cache entries not built or used for `unused_for` (the runtime archive is
/// kept). Returns how many entries were removed. Entries in use by a loaded library are
/// safe to remove on Linux (the mapping stays valid).
pub fn prune_models(opts: &BuildOptions, unused_for: Duration) -> Result<usize, CosimError> {
    let dir = opts.cache_dir.join("models");
    let Ok(entries) = fs::read_dir(&dir) else {
        return Ok(0);
    };
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    for e in entries.filter_map(|e| e.ok()) {
        let path = e.path();
        let stamp = fs::metadata(path.join("meta.json"))
            .or_else(|_| fs::metadata(&path))
            .and_then(|m| m.modified());
        let old = stamp
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > unused_for);
        if old && fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}
