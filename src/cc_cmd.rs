//! `warpforge cc`: an nvcc-like compile command over clang++-14 (no CUDA SDK). Each `.cu`
//! file is compiled twice: its device code to PTX (`--cuda-device-only`), then its host code
//! with that PTX embedded as the "fat binary" (`--cuda-host-only -fcuda-include-gpubinary`);
//! the objects are linked against warpforge's CUDA runtime (`libwarpforge_cuda.so`, rpath
//! set), which runs the kernels on the simulated GPU. The headers (`cuda_runtime.h`,
//! `cuda.h`, ...) are warpforge's own (runtime/include), built into this binary.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args, Clone)]
#[command(disable_help_flag = false)]
pub struct CcArgs {
    /// Sources (.cu, .cpp/.cc/.c), objects and nvcc-style options: -o FILE, -c, -I DIR,
    /// -D NAME[=V], -O N, -std=..., -g, -l LIB, -L DIR, -Xcompiler OPT, --keep (keep the PTX
    /// next to the output), --legacy-launch (host code uses CUDA's pre-10.1 launch API,
    /// cudaConfigureCall/cudaSetupArgument/cudaLaunch; both run the same). nvcc's -arch/-gencode/--use_fast_math/-lineinfo/-Xptxas are
    /// accepted and ignored (the device code is always PTX for the simulated GPU).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    args: Vec<String>,
}

/// The headers a CUDA program includes, as shipped in runtime/include.
const HEADERS: &[(&str, &str)] = &[
    (
        "cuda_runtime.h",
        include_str!("../runtime/include/cuda_runtime.h"),
    ),
    (
        "__warpforge_device.h",
        include_str!("../runtime/include/__warpforge_device.h"),
    ),
    ("cuda.h", include_str!("../runtime/include/cuda.h")),
    (
        "cuda_runtime_api.h",
        include_str!("../runtime/include/cuda_runtime_api.h"),
    ),
    (
        "driver_types.h",
        include_str!("../runtime/include/driver_types.h"),
    ),
    (
        "vector_types.h",
        include_str!("../runtime/include/vector_types.h"),
    ),
    (
        "cuda_profiler_api.h",
        include_str!("../runtime/include/cuda_profiler_api.h"),
    ),
    (
        "device_launch_parameters.h",
        include_str!("../runtime/include/device_launch_parameters.h"),
    ),
];

const RUNTIME_LIB: &str = "libwarpforge_cuda.so";

#[derive(Default)]
struct Opts {
    output: Option<PathBuf>,
    compile_only: bool,
    keep: bool,
    /// Emit CUDA's pre-10.1 launch API (cudaConfigureCall/cudaSetupArgument/cudaLaunch).
    legacy_launch: bool,
    /// Options for every compilation (-I, -D, -O, -std, -g, -w, -Xcompiler ...).
    common: Vec<String>,
    /// Options for the link (-l, -L, -Wl, ...).
    link: Vec<String>,
    inputs: Vec<PathBuf>,
}

fn parse(args: &[String]) -> Result<Opts> {
    let mut o = Opts::default();
    let mut it = args.iter().peekable();
    let value =
        |flag: &str, it: &mut std::iter::Peekable<std::slice::Iter<String>>| -> Result<String> {
            it.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value"))
        };
    while let Some(a) = it.next() {
        let a = a.as_str();
        match a {
            "-o" => o.output = Some(value(a, &mut it)?.into()),
            "-c" => o.compile_only = true,
            "--keep" | "-keep" => o.keep = true,
            "--legacy-launch" => o.legacy_launch = true,
            "-I" | "-D" | "-U" | "-include" | "-isystem" => {
                let v = value(a, &mut it)?;
                o.common.extend([a.to_string(), v]);
            }
            "-O" => o.common.push(format!("-O{}", value(a, &mut it)?)),
            "-l" | "-L" => {
                let v = value(a, &mut it)?;
                o.link.push(format!("{a}{v}"));
            }
            "-Xcompiler" | "--compiler-options" => {
                let v = value(a, &mut it)?;
                o.common.extend(v.split(',').map(String::from));
            }
            "-Xlinker" | "--linker-options" => {
                let v = value(a, &mut it)?;
                o.link.push(format!("-Wl,{v}"));
            }
            "-arch" | "--gpu-architecture" | "-gencode" | "--generate-code" | "-code"
            | "-Xptxas" | "-maxrregcount" | "-ccbin" => {
                value(a, &mut it)?;
            }
            "--use_fast_math" | "-use_fast_math" | "-lineinfo" | "--ptxas-options=-v" | "-G"
            | "-cudart=static" | "--cudart=static" | "-cudart=shared" => {}
            _ if a.starts_with("-arch=")
                || a.starts_with("--gpu-architecture=")
                || a.starts_with("-gencode=")
                || a.starts_with("--generate-code=")
                || a.starts_with("-code=")
                || a.starts_with("-maxrregcount")
                || a.starts_with("-Xptxas=") => {}
            _ if a.starts_with("-o") && a.len() > 2 => o.output = Some(a[2..].into()),
            _ if a.starts_with("-l")
                || a.starts_with("-L")
                || a.starts_with("-Wl,")
                || a == "-pthread" =>
            {
                o.link.push(a.to_string());
                if a == "-pthread" {
                    o.common.push(a.to_string());
                }
            }
            _ if a.starts_with("-Xcompiler=") => o
                .common
                .extend(a["-Xcompiler=".len()..].split(',').map(String::from)),
            _ if a.starts_with('-') => o.common.push(a.to_string()),
            _ => o.inputs.push(a.into()),
        }
    }
    if o.inputs.is_empty() {
        bail!("no input files (give .cu, .cpp or .o files)");
    }
    Ok(o)
}

/// clang++-14, or `WARPFORGE_CLANG`.
fn clang() -> Result<String> {
    let c = std::env::var("WARPFORGE_CLANG").unwrap_or_else(|_| "clang++-14".into());
    match Command::new(&c).arg("--version").output() {
        Ok(out) if out.status.success() => Ok(c),
        _ => bail!(
            "`{c}` was not found: warpforge cc compiles CUDA with clang 14 (no CUDA SDK needed). \
             Install the Debian package `clang-14` (apt-get install clang-14, or \
             scripts/install-tools.sh), or point WARPFORGE_CLANG at a clang++ 14"
        ),
    }
}

/// The directory holding libwarpforge_cuda.so: `WARPFORGE_CUDA_LIB_DIR`, or next to this
/// executable (or in deps/ beside it, where cargo builds it), or ../lib.
fn runtime_dir() -> Result<PathBuf> {
    if let Ok(d) = std::env::var("WARPFORGE_CUDA_LIB_DIR") {
        return Ok(PathBuf::from(d));
    }
    let exe = std::env::current_exe().context("cannot locate the warpforge executable")?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    // `cargo build` leaves the library (a dependency of this binary) in target/<profile>/deps.
    // deps/ first: the library built with this very binary.
    let mut candidates = vec![dir.join("deps"), dir.clone(), dir.join("../lib")];
    // Test executables live in target/<profile>/deps.
    if dir.ends_with("deps") {
        candidates.insert(0, dir.join(".."));
    }
    for c in &candidates {
        if c.join(RUNTIME_LIB).is_file() {
            return Ok(c.canonicalize().unwrap_or_else(|_| c.clone()));
        }
    }
    bail!(
        "{RUNTIME_LIB} (warpforge's CUDA runtime) was not found next to {}: build it with \
         `cargo build --release -p warpforge-cuda`, or set WARPFORGE_CUDA_LIB_DIR",
        exe.display()
    )
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| format!("cannot run {what}"))?;
    if !status.success() {
        bail!(CompileFailed(format!("{what} failed ({status})")));
    }
    Ok(())
}

/// A compiler or linker error (already printed by clang): exit status 1, not 2.
#[derive(Debug)]
pub struct CompileFailed(pub String);
impl std::fmt::Display for CompileFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for CompileFailed {}

pub fn cc(a: &CcArgs) -> Result<u8> {
    let o = parse(&a.args)?;
    let clang = clang()?;
    let work = std::env::temp_dir().join(format!("warpforge-cc-{}", std::process::id()));
    std::fs::create_dir_all(work.join("include"))
        .with_context(|| format!("cannot create {}", work.display()))?;
    let r = build(&o, &clang, &work);
    let _ = std::fs::remove_dir_all(&work);
    r.map(|()| 0)
}

fn build(o: &Opts, clang: &str, work: &Path) -> Result<()> {
    let inc = work.join("include");
    for (name, text) in HEADERS {
        std::fs::write(inc.join(name), text)?;
    }
    let base = |c: &mut Command| {
        c.arg("-I").arg(&inc);
        c.args(&o.common);
        if !o.common.iter().any(|f| f.starts_with("-O")) {
            c.arg("-O2");
        }
    };
    let cuda = |c: &mut Command| {
        c.args([
            "-x",
            "cuda",
            "--cuda-gpu-arch=sm_70",
            "-nocudainc",
            "-nocudalib",
        ]);
        c.arg("-include").arg("cuda_runtime.h");
    };
    if o.compile_only && o.inputs.len() > 1 && o.output.is_some() {
        bail!("-c -o FILE takes one input file");
    }
    let mut objects = Vec::new();
    for (i, input) in o.inputs.iter().enumerate() {
        let ext = input.extension().and_then(|e| e.to_str()).unwrap_or("");
        let stem = input
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "input".into());
        let obj = if o.compile_only {
            o.output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{stem}.o")))
        } else {
            work.join(format!("{i}-{stem}.o"))
        };
        match ext {
            "cu" => {
                let ptx = work.join(format!("{i}-{stem}.ptx"));
                let mut dev = Command::new(clang);
                cuda(&mut dev);
                base(&mut dev);
                dev.args([
                    "--cuda-device-only",
                    "-Xclang",
                    "-target-feature",
                    "-Xclang",
                    "+ptx64",
                    "-S",
                ]);
                dev.arg(input).arg("-o").arg(&ptx);
                run(
                    &mut dev,
                    &format!("device compilation of {}", input.display()),
                )?;
                if o.keep {
                    let kept = o
                        .output
                        .as_ref()
                        .filter(|_| o.inputs.len() == 1)
                        .map(|p| p.with_extension("ptx"))
                        .unwrap_or_else(|| PathBuf::from(format!("{stem}.ptx")));
                    std::fs::copy(&ptx, &kept)
                        .with_context(|| format!("cannot write {}", kept.display()))?;
                }
                let mut host = Command::new(clang);
                cuda(&mut host);
                base(&mut host);
                host.arg("--cuda-host-only");
                if !o.legacy_launch {
                    // CUDA >= 10.1's launch sequence: __cudaPushCallConfiguration, then
                    // cudaLaunchKernel with one pointer per parameter.
                    host.args(["-Xclang", "-target-sdk-version=10.1"]);
                }
                host.args(["-Xclang", "-fcuda-include-gpubinary", "-Xclang"]);
                host.arg(&ptx).arg("-c").arg(input).arg("-o").arg(&obj);
                run(
                    &mut host,
                    &format!("host compilation of {}", input.display()),
                )?;
                objects.push(obj);
            }
            "cpp" | "cc" | "cxx" | "C" | "c" => {
                let mut host = Command::new(clang);
                if ext == "c" {
                    host.args(["-x", "c"]);
                }
                base(&mut host);
                host.arg("-c").arg(input).arg("-o").arg(&obj);
                run(&mut host, &format!("compilation of {}", input.display()))?;
                objects.push(obj);
            }
            _ => objects.push(input.clone()),
        }
    }
    if o.compile_only {
        return Ok(());
    }
    let lib = runtime_dir()?;
    let out = o.output.clone().unwrap_or_else(|| PathBuf::from("a.out"));
    let mut link = Command::new(clang);
    link.args(&objects).arg("-o").arg(&out);
    link.arg(format!("-L{}", lib.display()))
        .arg("-lwarpforge_cuda")
        .arg(format!("-Wl,-rpath,{}", lib.display()));
    link.args(&o.link).arg("-lm");
    run(&mut link, "link")
}
