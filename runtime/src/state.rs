//! The runtime's state: the simulated GPU, the registered modules, kernels and variables,
//! the pending launch configurations and the last error.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Mutex, MutexGuard};

use warpforge_model::config::GpuConfig;
use warpforge_model::error::SimError;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::{Dim3, ModuleId};

/// Exit status of a program whose kernel faulted (as `warpforge run`).
pub const EXIT_FAULT: i32 = 1;
/// Exit status when the runtime cannot start (bad configuration, PTX the model rejects).
pub const EXIT_INPUT: i32 = 2;

/// CUDA error codes (the values of CUDA's `cudaError_t`).
pub type CudaError = i32;
pub const SUCCESS: CudaError = 0;
pub const ERR_INVALID_VALUE: CudaError = 1;
pub const ERR_MEMORY_ALLOCATION: CudaError = 2;
pub const ERR_INVALID_CONFIGURATION: CudaError = 9;
pub const ERR_INVALID_SYMBOL: CudaError = 13;
pub const ERR_INVALID_DEVICE_POINTER: CudaError = 17;
pub const ERR_INVALID_TEXTURE: CudaError = 18;
pub const ERR_INVALID_MEMCPY_DIRECTION: CudaError = 21;
pub const ERR_MISSING_CONFIGURATION: CudaError = 52;
pub const ERR_INVALID_DEVICE_FUNCTION: CudaError = 98;
pub const ERR_INVALID_DEVICE: CudaError = 101;
pub const ERR_INVALID_RESOURCE_HANDLE: CudaError = 400;
pub const ERR_LAUNCH_OUT_OF_RESOURCES: CudaError = 701;
pub const ERR_NOT_SUPPORTED: CudaError = 801;

/// One pending `<<<grid, block, shmem, stream>>>`.
#[derive(Debug, Clone, Copy)]
pub struct CallConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: u32,
}

/// A registered `__device__` / `__constant__` variable.
#[derive(Debug, Clone)]
pub struct Var {
    pub module: ModuleId,
    pub name: String,
}

pub struct Runtime {
    pub gpu: Gpu,
    /// Preset or file the configuration came from, for the summary.
    pub config_name: String,
    /// Host stub address -> (module, mangled kernel name).
    pub kernels: HashMap<usize, (ModuleId, String)>,
    /// Host shadow address -> variable.
    pub vars: HashMap<usize, Var>,
    /// Pending launch configurations (`cudaConfigureCall` / `__cudaPushCallConfiguration`).
    pub configs: Vec<CallConfig>,
    /// Argument buffer of the legacy launch API (`cudaSetupArgument`).
    pub legacy_args: Vec<u8>,
    pub last_error: CudaError,
    /// Allocations of `cudaMallocHost`, by address, with their size.
    pub host_allocs: HashMap<usize, usize>,
    /// `WARPFORGE_TRACE`: where the port trace of the unit named by
    /// `WARPFORGE_RECORD_UNIT` goes at exit (as `warpforge run --record-unit U --trace F`).
    pub trace_path: Option<String>,
}

// The runtime is used behind a mutex; the model's GPU holds no thread-bound state.
unsafe impl Send for Runtime {}

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

extern "C" {
    fn atexit(f: extern "C" fn()) -> i32;
}

/// The runtime, created on first use from the environment.
pub fn rt() -> MutexGuard<'static, Option<Runtime>> {
    let mut g = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        *g = Some(Runtime::from_env());
        // SAFETY: registering a plain `extern "C"` function with the C library.
        unsafe {
            atexit(at_exit);
        }
    }
    g
}

/// Run `f` on the runtime.
pub fn with<R>(f: impl FnOnce(&mut Runtime) -> R) -> R {
    let mut g = rt();
    f(g.as_mut().expect("runtime initialised"))
}

/// Report a fatal problem and end the program.
pub fn die(msg: &str, code: i32) -> ! {
    eprintln!("warpforge: {msg}");
    let _ = std::io::stderr().flush();
    std::process::exit(code)
}

/// A configuration file's text, read no further than 1 MiB (a preset is 4 KB; a FIFO or
/// `/dev/zero` is refused at the limit rather than read without bound).
fn read_config(name: &str) -> Result<String, String> {
    use std::io::Read;
    const MAX: u64 = 1 << 20;
    let f = std::fs::File::open(name).map_err(|e| format!("cannot read {name}: {e}"))?;
    let mut text = String::new();
    f.take(MAX + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if text.len() as u64 > MAX {
        return Err(format!(
            "{name} holds more than {MAX} bytes, the limit for a configuration file"
        ));
    }
    Ok(text)
}

/// `WARPFORGE_RECORD_UNIT=U` with `WARPFORGE_TRACE=F`: record every instance of unit U for
/// co-simulation (`warpforge cosim --trace F`). Either without the other, an unknown unit or
/// one this configuration does not instantiate ends the program (status 2).
fn record_from_env(gpu: &mut Gpu) -> Option<String> {
    let unit = std::env::var("WARPFORGE_RECORD_UNIT").ok();
    let path = std::env::var("WARPFORGE_TRACE").ok();
    match (unit, path) {
        (None, None) => None,
        (Some(unit), Some(path)) => {
            if let Err(e) = gpu.record_unit(&unit) {
                die(&format!("WARPFORGE_RECORD_UNIT={unit}: {e}"), EXIT_INPUT)
            }
            Some(path)
        }
        (Some(_), None) => die(
            "WARPFORGE_RECORD_UNIT needs WARPFORGE_TRACE (the file the trace goes to)",
            EXIT_INPUT,
        ),
        (None, Some(_)) => die(
            "WARPFORGE_TRACE needs WARPFORGE_RECORD_UNIT (the unit to record)",
            EXIT_INPUT,
        ),
    }
}

impl Runtime {
    fn from_env() -> Runtime {
        let name = std::env::var("WARPFORGE_CONFIG").unwrap_or_else(|_| "gtx480".into());
        let overrides: Vec<String> = std::env::var("WARPFORGE_SET")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let cfg = if name.ends_with(".toml") || std::path::Path::new(&name).is_file() {
            match read_config(&name) {
                Ok(text) => GpuConfig::from_toml(&name, &text, &overrides),
                Err(e) => die(&format!("WARPFORGE_CONFIG: {e}"), EXIT_INPUT),
            }
        } else {
            GpuConfig::preset(&name, &overrides)
        };
        let cfg = cfg
            .unwrap_or_else(|e| die(&format!("WARPFORGE_CONFIG/WARPFORGE_SET: {e}"), EXIT_INPUT));
        let functional = matches!(
            std::env::var("WARPFORGE_FUNCTIONAL").as_deref(),
            Ok("1") | Ok("true") | Ok("yes")
        );
        let mode = if functional {
            Mode::Functional
        } else {
            Mode::Timing
        };
        let mut gpu = Gpu::new(cfg, mode);
        // Every access outside an allocation faults, as compute-sanitizer reports (by
        // default only accesses outside mapped device memory do, as on a real GPU).
        gpu.set_strict_bounds(matches!(
            std::env::var("WARPFORGE_STRICT_BOUNDS").as_deref(),
            Ok("1") | Ok("true") | Ok("yes")
        ));
        let trace_path = record_from_env(&mut gpu);
        Runtime {
            gpu,
            trace_path,
            config_name: name,
            kernels: HashMap::new(),
            vars: HashMap::new(),
            configs: Vec::new(),
            legacy_args: Vec::new(),
            last_error: SUCCESS,
            host_allocs: HashMap::new(),
        }
    }

    /// Record `e` as the last error (sticky until `cudaGetLastError`) and return it.
    pub fn fail(&mut self, e: CudaError) -> CudaError {
        if e != SUCCESS {
            self.last_error = e;
        }
        e
    }

    /// The kernel registered for host stub `stub`.
    pub fn kernel(&self, stub: usize) -> Option<(ModuleId, String)> {
        self.kernels.get(&stub).cloned()
    }

    /// Run a kernel with its param buffer; a guest fault ends the program.
    pub fn launch(&mut self, stub: usize, cc: CallConfig, params: &mut Vec<u8>) -> CudaError {
        let Some((module, name)) = self.kernel(stub) else {
            eprintln!("warpforge: launch of a function that was not registered as a kernel");
            return self.fail(ERR_INVALID_DEVICE_FUNCTION);
        };
        let bytes = self
            .gpu
            .module(module)
            .and_then(|m| m.kernel(&name))
            .map(|k| k.param_bytes as usize)
            .unwrap_or(0);
        params.resize(bytes, 0);
        let shape = warpforge_model::gpu::launch::LaunchShape {
            grid: cc.grid,
            block: cc.block,
            dynamic_shared: cc.shared,
        };
        let r = self.gpu.launch_raw(module, &name, shape, params);
        // Device printf output: CUDA prints it at the next synchronisation, and a launch on
        // the model is complete when it returns. The program's own buffered stdio output
        // goes first, so that the two keep their order.
        extern "C" {
            fn fflush(stream: *mut std::ffi::c_void) -> std::os::raw::c_int;
        }
        let out = self.gpu.take_printf();
        if !out.text.is_empty() || out.dropped > 0 {
            // SAFETY: fflush(NULL) flushes every open output stream of the C library.
            unsafe { fflush(std::ptr::null_mut()) };
            out.print(&name);
        }
        match r {
            Ok(()) => SUCCESS,
            Err(SimError::Fault(f)) => {
                eprintln!("warpforge: guest fault\n{f}");
                self.report();
                let _ = std::io::stderr().flush();
                std::process::exit(EXIT_FAULT)
            }
            Err(e) => {
                eprintln!("warpforge: {e}");
                let msg = e.to_string();
                let code = if msg.contains("out of range") || msg.contains("exceeds") {
                    ERR_INVALID_CONFIGURATION
                } else {
                    ERR_LAUNCH_OUT_OF_RESOURCES
                };
                self.fail(code)
            }
        }
    }

    /// Per-kernel summary on stderr, the JSON statistics file and the recorded unit trace.
    pub fn report(&mut self) {
        if let Some(path) = self.trace_path.take() {
            if let Some(mut rec) = self.gpu.take_trace() {
                let program = std::env::args().next().unwrap_or_default();
                let source = format!("CUDA program {program}, config {}", self.config_name);
                match rec.write(std::path::Path::new(&path), &source) {
                    Ok(()) => eprintln!(
                        "warpforge: {} port events of {} recorded to {path}",
                        rec.events(),
                        rec.desc().name
                    ),
                    Err(e) => eprintln!("warpforge: WARPFORGE_TRACE: {e}"),
                }
            }
        }
        let launches = &self.gpu.launches;
        if let Ok(path) = std::env::var("WARPFORGE_STATS") {
            let doc = serde_json::json!({
                "config": self.config_name,
                "mode": match self.gpu.mode() { Mode::Timing => "timing", Mode::Functional => "functional" },
                "launches": launches,
            });
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("warpforge: cannot write WARPFORGE_STATS={path}: {e}");
            }
        }
        if launches.is_empty() || std::env::var("WARPFORGE_QUIET").is_ok_and(|v| v == "1") {
            return;
        }
        // (kernel, launches, cycles, warp instructions, thread instructions, ns, wall s)
        let mut rows: Vec<(String, u64, u64, u64, u64, f64, f64)> = Vec::new();
        for l in launches {
            let i = match rows.iter().position(|r| r.0 == l.kernel) {
                Some(i) => i,
                None => {
                    rows.push((l.kernel.clone(), 0, 0, 0, 0, 0.0, 0.0));
                    rows.len() - 1
                }
            };
            let r = &mut rows[i];
            r.1 += 1;
            r.2 += l.cycles;
            r.3 += l.warp_instructions;
            r.4 += l.thread_instructions;
            r.5 += l.time_ns;
            r.6 += l.wall_seconds;
        }
        let timing = self.gpu.mode() == Mode::Timing;
        let mut out = format!(
            "warpforge: {} launch(es) on {} ({})\n",
            launches.len(),
            self.config_name,
            if timing { "timing" } else { "functional" }
        );
        out += &format!(
            "{:<40} {:>8} {:>14} {:>14} {:>8} {:>12} {:>9}\n",
            "kernel", "launches", "cycles", "warp insts", "IPC", "sim time us", "wall s"
        );
        let mut tot = (0u64, 0u64, 0u64, 0f64, 0f64);
        for r in &rows {
            let ipc = if r.2 > 0 {
                r.3 as f64 / r.2 as f64
            } else {
                0.0
            };
            out += &format!(
                "{:<40} {:>8} {:>14} {:>14} {:>8.3} {:>12.3} {:>9.2}\n",
                r.0,
                r.1,
                r.2,
                r.3,
                ipc,
                r.5 / 1e3,
                r.6
            );
            tot = (
                tot.0 + r.1,
                tot.1 + r.2,
                tot.2 + r.3,
                tot.3 + r.5,
                tot.4 + r.6,
            );
        }
        if rows.len() > 1 {
            let ipc = if tot.1 > 0 {
                tot.2 as f64 / tot.1 as f64
            } else {
                0.0
            };
            out += &format!(
                "{:<40} {:>8} {:>14} {:>14} {:>8.3} {:>12.3} {:>9.2}\n",
                "total",
                tot.0,
                tot.1,
                tot.2,
                ipc,
                tot.3 / 1e3,
                tot.4
            );
        }
        eprint!("{out}");
    }
}

extern "C" fn at_exit() {
    if let Ok(mut g) = RUNTIME.try_lock() {
        if let Some(rt) = g.as_mut() {
            rt.report();
        }
    }
}
