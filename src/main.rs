//! `warpforge`: run CUDA kernels (as PTX) on a cycle-level SIMT GPU model.

mod bench;
mod bench_instructions;
mod bench_stats;
mod cc_cmd;
mod charts;
mod compaction_cmd;
mod cosim_cmd;
mod estimates_cmd;
mod gen_cmd;
mod input_file;
mod launch_file;
mod power_cmd;
mod report;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use cosim_cmd::RunCosim;
use indicatif::{ProgressBar, ProgressStyle};
use report::RunResult;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use warpforge_model::config::{GpuConfig, Reconvergence, PRESETS};
use warpforge_model::error::SimError;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::Host;
use warpforge_model::units::contract::GpuUse;
use warpforge_model::units::trace::TraceRecorder;
use warpforge_workloads::{self as workloads, Size};

#[derive(Parser)]
#[command(
    name = "warpforge",
    version,
    about = "Cycle-level SIMT GPU golden model: runs CUDA kernels as PTX, generates the RTL of its hardware units"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the built-in workloads and GPU presets.
    List,
    /// Run workloads (default: all, on gtx480, verified against CPU references) or a PTX kernel.
    Run(RunArgs),
    /// Measure simulation speed (cycles/s, warp instructions/s) and peak memory per workload.
    Bench(bench::BenchArgs),
    /// Generate the Verilog of hardware units (+ manifest and file list), optionally lint it.
    Gen(gen_cmd::GenArgs),
    /// Synthesise a unit with Yosys: cells, flip-flops and an estimated transistor count, or
    /// (`--target`) LUTs, flip-flops and RAM cells of an FPGA family.
    Synth(gen_cmd::SynthArgs),
    /// Estimate a unit's power in OSU 0.18 um from the switching activity of its RTL under
    /// co-simulation (random stimulus or a recorded trace): dynamic and leakage, ±2x.
    Power(power_cmd::PowerArgs),
    /// Co-simulate a unit's generated Verilog against its Rust model under Verilator, every
    /// cycle (random stimulus, workload traces, replay files, mutants).
    Cosim(cosim_cmd::CosimArgs),
    /// Compile a CUDA program (nvcc-like, over clang++-14) into an executable that runs its
    /// kernels on the simulated GPU through warpforge's CUDA runtime.
    Cc(cc_cmd::CcArgs),
    /// The thread-block compaction study (TBC, TBC+, CAPRI, CAPT sizes, lane permutations)
    /// on every workload, printed next to the seed's figures (specs/tbc-capri-slp.md §5).
    Compaction(compaction_cmd::CompactionArgs),
    /// Reports: `estimates` (area, timing, FPGA resources and power of every generated
    /// unit, their scaling and the seeds' figures: Markdown + SVG charts).
    #[command(subcommand)]
    Report(estimates_cmd::ReportCmd),
}

#[derive(Args, Clone)]
pub struct RunArgs {
    /// Workload name, or `all`.
    #[arg(long, default_value = "all", conflicts_with = "ptx")]
    workload: String,
    /// A PTX file to run instead of a workload (needs --launch).
    #[arg(long, requires = "launch")]
    ptx: Option<PathBuf>,
    /// Launch file (TOML) describing the kernel, grid, block and parameters.
    #[arg(long, requires = "ptx")]
    launch: Option<PathBuf>,
    /// GPU preset.
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Input size: tiny, small or default.
    #[arg(long, default_value = "default")]
    size: Size,
    /// Seed of the workloads' input generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Override a configuration key, e.g. --set sm.count=4 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Write all statistics as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Functional simulation only (no timing): fast, reports instruction counts.
    #[arg(long)]
    functional: bool,
    /// Every global access outside a live allocation is a fault, as compute-sanitizer
    /// reports (by default only accesses outside mapped device memory fault, as on a real
    /// GPU: device memory is mapped in 64 KiB pages).
    #[arg(long)]
    strict_bounds: bool,
    /// Worker threads for running several workloads at once (default: one per core;
    /// results do not depend on it). The co-simulation of their traces uses every core.
    #[arg(long)]
    threads: Option<usize>,
    /// Do not print the tables.
    #[arg(long)]
    quiet: bool,
    /// Record the port traffic of every instance of this hardware unit for co-simulation:
    /// simt_stack_spe or simt_stack_dpe (every warp's stack, as sm.reconvergence selects) or
    /// dpe_scoreboard (every SM's scoreboard); needs --trace.
    #[arg(
        long,
        value_name = "UNIT",
        requires = "trace",
        conflicts_with = "functional"
    )]
    record_unit: Option<String>,
    /// Where to write the recorded trace: a file for one workload or a PTX kernel, a
    /// directory (one `<workload>.wftrace` each) for several.
    #[arg(long, value_name = "PATH", requires = "record_unit")]
    trace: Option<PathBuf>,
    /// Skip the second run of each workload under the other reconvergence mechanism (by
    /// default, timing runs of workloads are repeated with SPE and DPE swapped and the IPC
    /// difference and Avg_Path are reported).
    #[arg(long)]
    no_compare: bool,
    /// Skip generating the RTL of every unit and co-simulating it against the port traffic
    /// the runs recorded (done by default for timing runs of workloads when Verilator is
    /// installed).
    #[arg(long)]
    no_cosim: bool,
    /// Record the port traffic of every unit instance as for the co-simulation, then drop it
    /// instead of co-simulating: what `warpforge bench` times when it measures recording
    /// (the co-simulation is not timed, and would take most of the bench).
    /// Functional runs have no units, so there is nothing to record.
    #[arg(long, hide = true, conflicts_with_all = ["no_cosim", "functional"])]
    record_only: bool,
    /// Where the generated RTL of every unit goes (with the co-simulation).
    #[arg(long, value_name = "DIR", default_value = "warpforge-rtl")]
    rtl_out: PathBuf,
}

/// Exit codes: 0 success, 1 a workload failed verification or the guest faulted (or the
/// RTL lint gate found something), 2 bad input (PTX, launch file, configuration, unit or
/// parameter, command line).
const EXIT_FAIL: u8 = 1;
const EXIT_INPUT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::List => list(),
        Cmd::Run(a) => run(&a),
        Cmd::Bench(a) => bench::bench(&a),
        Cmd::Gen(a) => gen_cmd::gen(&a),
        Cmd::Synth(a) => gen_cmd::synth(&a),
        Cmd::Power(a) => power_cmd::power(&a),
        Cmd::Cosim(a) => cosim_cmd::cosim(&a),
        Cmd::Cc(a) => cc_cmd::cc(&a),
        Cmd::Compaction(a) => compaction_cmd::compaction(&a),
        Cmd::Report(c) => estimates_cmd::report(&c),
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            let code = match e.downcast_ref::<SimError>() {
                Some(SimError::Fault(_)) => EXIT_FAIL,
                _ if e.downcast_ref::<cc_cmd::CompileFailed>().is_some() => EXIT_FAIL,
                _ => EXIT_INPUT,
            };
            ExitCode::from(code)
        }
    }
}

fn list() -> Result<u8> {
    let rows: Vec<Vec<String>> = workloads::all()
        .iter()
        .map(|w| {
            vec![
                w.name().to_string(),
                w.category().to_string(),
                w.description().to_string(),
            ]
        })
        .collect();
    print!(
        "{}",
        report::table(&["workload", "category", "description"], &rows)
    );
    println!();
    let rows: Vec<Vec<String>> = PRESETS
        .iter()
        .map(|(name, _)| {
            let c = GpuConfig::preset(name, &[]).expect("shipped presets are valid");
            vec![
                name.to_string(),
                format!(
                    "{} SMs, {} threads/SM, {} regs/SM, {} KB shared, L1 {} KB, L2 {} KB, {:.1} GB/s, {:?} scheduler",
                    c.sm.count,
                    c.sm.max_threads,
                    c.sm.registers,
                    c.sm.shared_bytes / 1024,
                    c.l1.size_bytes / 1024,
                    c.l2.size_bytes / 1024,
                    c.dram_bandwidth_gbs(),
                    c.sm.scheduler
                ),
                c.source.clone(),
            ]
        })
        .collect();
    print!("{}", report::table(&["preset", "summary", "source"], &rows));
    Ok(0)
}

fn progress_bar(len: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
        )
        .expect("valid template"),
    );
    pb
}

pub fn run(a: &RunArgs) -> Result<u8> {
    let cfg = GpuConfig::preset(&a.config, &a.overrides)?;
    let mode = if a.functional {
        Mode::Functional
    } else {
        Mode::Timing
    };
    if let Some(unit) = &a.record_unit {
        // Fail before running anything if the unit cannot be recorded here.
        Gpu::new(cfg.clone(), mode)
            .record_unit(unit)
            .map_err(anyhow::Error::msg)?;
    }
    // Units whose port traffic the runs record: the one asked for, or (for the co-simulation
    // of each workload run's traces) every unit the GPU model instantiates.
    let cosim = !a.no_cosim && a.record_unit.is_none() && !a.functional && a.ptx.is_none();
    let record: Vec<String> = match &a.record_unit {
        Some(u) => vec![u.clone()],
        None if cosim => instantiated_units(&cfg),
        None => vec![],
    };
    // The co-simulation, fed each run's traces as the run finishes; or, recording only,
    // the traces dropped.
    let run_cosim = (cosim && !a.record_only).then(|| RunCosim::new(&a.rtl_out, a.size));
    let run_traces = match &run_cosim {
        Some(c) => RunTraces::CoSimulate(c),
        None if a.record_only => RunTraces::Drop,
        None => RunTraces::Keep,
    };
    // Unit port events the runs recorded (the co-simulation's stimulus), for the JSON.
    let recorded = AtomicU64::new(0);
    let mut runs: Vec<(RunResult, Vec<TraceRecorder>)> =
        if let (Some(ptx), Some(launch)) = (&a.ptx, &a.launch) {
            let run = run_ptx(&cfg, mode, ptx, launch, &record, a.strict_bounds)?;
            recorded.fetch_add(events_of(&run.1), Ordering::Relaxed);
            vec![run]
        } else {
            let selected = select_workloads(&a.workload)?;
            run_workloads(&cfg, mode, &selected, a, &record, 0, &run_traces, &recorded)
        };
    if let Some(path) = &a.trace {
        write_traces(&mut runs, path, a, &cfg)?;
    }
    // The same workloads with the other reconvergence mechanism, for the SPE/DPE table.
    // (Not under compaction: DPE + compaction is not modelled.)
    let comparison = if !a.no_compare
        && !a.functional
        && a.ptx.is_none()
        && cfg.sm.compaction == warpforge_model::config::Compaction::None
    {
        let mut other = cfg.clone();
        other.sm.reconvergence = match cfg.sm.reconvergence {
            Reconvergence::Spe => Reconvergence::Dpe,
            Reconvergence::Dpe => Reconvergence::Spe,
        };
        let selected: Vec<&'static dyn workloads::Workload> = runs
            .iter()
            .filter_map(|(r, _)| workloads::by_name(&r.workload))
            .collect();
        let other_units = if cosim {
            instantiated_units(&other)
        } else {
            vec![]
        };
        let others = run_workloads(
            &other,
            mode,
            &selected,
            a,
            &other_units,
            runs.len(),
            &run_traces,
            &recorded,
        );
        let primary: Vec<&RunResult> = runs.iter().map(|r| &r.0).collect();
        let secondary: Vec<&RunResult> = others.iter().map(|r| &r.0).collect();
        let table = match cfg.sm.reconvergence {
            Reconvergence::Spe => report::compare_reconvergence(&primary, &secondary),
            Reconvergence::Dpe => report::compare_reconvergence(&secondary, &primary),
        };
        Some(table)
    } else {
        None
    };
    let recorded_events = recorded.into_inner();
    let results: Vec<RunResult> = runs.into_iter().map(|(r, _)| r).collect();
    if !a.quiet {
        println!(
            "warpforge: {} on {} ({} mode{}{})",
            if a.ptx.is_some() {
                "user kernel".to_string()
            } else {
                format!("size {}", a.size)
            },
            cfg.name,
            if a.functional { "functional" } else { "timing" },
            if a.strict_bounds {
                ", strict bounds"
            } else {
                ""
            },
            if a.overrides.is_empty() {
                String::new()
            } else {
                format!(", {}", a.overrides.join(" "))
            }
        );
        println!();
        print!("{}", report::kernel_table(&results, !a.functional));
        if !a.functional {
            println!("\nStall breakdown (share of scheduler issue slots):");
            print!("{}", report::stall_table(&results));
            if cfg.sm.compaction != warpforge_model::config::Compaction::None {
                // The keys' own spelling ("tbc+", "rotate_odd_1").
                let key = |v: serde_json::Value| v.as_str().unwrap_or_default().to_string();
                println!(
                    "\nThread-block compaction (sm.compaction = {}, sm.lane_permutation = {}; \
                     decisions: Stall/Bypass x Adequate/not, against the evaluator's answer \
                     for the branch; idle: scheduler cycles without issue):",
                    key(serde_json::to_value(cfg.sm.compaction)?),
                    key(serde_json::to_value(cfg.sm.lane_permutation)?)
                );
                print!("{}", report::compaction_table(&results));
            }
        }
        if let Some(c) = &comparison {
            println!(
                "\nReconvergence: SPE vs DPE (the same runs with sm.reconvergence = spe and dpe, DPE path policy {:?}):",
                cfg.sm.dpe_path_policy
            );
            print!("{}", report::comparison_table(c));
        }
    }
    let mut code = 0;
    // An error of the co-simulation itself (RTL that cannot be built) is returned after
    // the runs' own failures are reported and the JSON is written.
    let cosim_error = match run_cosim.map(|c| c.finish(a.quiet)) {
        Some(Ok(false)) => {
            code = EXIT_FAIL;
            None
        }
        Some(Err(e)) => Some(e),
        _ => None,
    };
    for c in comparison.iter().flatten() {
        if let Some(problem) = &c.problem {
            eprintln!("{} (reconvergence comparison): {problem}", c.workload);
            code = EXIT_FAIL;
        }
    }
    for r in &results {
        if let Some(e) = &r.error {
            eprintln!("{}: {e}", r.workload);
            code = EXIT_FAIL;
        } else if r.verified == Some(false) {
            eprintln!("{}: verification FAILED: {}", r.workload, r.detail);
            code = EXIT_FAIL;
        }
    }
    if let Some(path) = &a.json {
        let doc = serde_json::json!({
            "config": cfg.name,
            "overrides": a.overrides,
            // Every value the model ran with, after overrides (for reproducing a study).
            "effective_config": cfg,
            "mode": if a.functional { "functional" } else { "timing" },
            "strict_bounds": a.strict_bounds,
            "size": a.size.to_string(),
            "seed": a.seed,
            "results": results,
            "reconvergence_comparison": comparison,
            "recorded_trace_events": recorded_events,
            "peak_rss_bytes": peak_rss_bytes(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(e) = cosim_error {
        return Err(e);
    }
    if !a.quiet && code == 0 && a.ptx.is_none() {
        println!("\nall {} workload(s) verified", results.len());
    }
    Ok(code)
}

/// The workloads `--workload NAME` names: one, or every one for `all`.
pub fn select_workloads(name: &str) -> Result<Vec<&'static dyn workloads::Workload>> {
    if name == "all" {
        return Ok(workloads::all().to_vec());
    }
    let w = workloads::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = workloads::all().iter().map(|w| w.name()).collect();
        anyhow::anyhow!(
            "unknown workload `{name}` (available: all, {})",
            names.join(", ")
        )
    })?;
    Ok(vec![w])
}

/// Every unit with RTL that the GPU model instantiates under `cfg` (traces recordable).
fn instantiated_units(cfg: &GpuConfig) -> Vec<String> {
    warpforge_gen::units_with_templates()
        .into_iter()
        .filter(|u| matches!((u.gpu)(cfg), GpuUse::Instantiated { .. }))
        .map(|u| u.name.to_string())
        .collect()
}

/// Where each run's recorded traces go as the run finishes.
enum RunTraces<'a> {
    /// Returned with the run (to be written to files; or nothing was recorded).
    Keep,
    /// Co-simulated, then dropped.
    CoSimulate(&'a RunCosim),
    /// Dropped (`--record-only`).
    Drop,
}

/// Run workloads in parallel (results do not depend on the thread count), numbered from
/// `first_run` in the order of `selected`; the traces each run records go where `traces`
/// says, as the run finishes, their unit port events added to `recorded` first.
///
/// The workers are plain threads taking the workloads in order, not a rayon pool: a
/// co-simulation replays a trace's instances in parallel on rayon's pool, and a rayon
/// worker waiting for that would take another workload's whole run from its own pool,
/// holding the first run's traces meanwhile.
#[allow(clippy::too_many_arguments)]
fn run_workloads(
    cfg: &GpuConfig,
    mode: Mode,
    selected: &[&'static dyn workloads::Workload],
    a: &RunArgs,
    record: &[String],
    first_run: usize,
    traces: &RunTraces,
    recorded: &AtomicU64,
) -> Vec<(RunResult, Vec<TraceRecorder>)> {
    let threads = match a.threads {
        Some(0) | None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(n) => n,
    }
    .min(selected.len().max(1));
    let pb = progress_bar(selected.len() as u64, a.quiet);
    let status = Arc::new(Mutex::new(Vec::<String>::new()));
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(selected.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(w) = selected.get(i) else {
                    break;
                };
                let (r, mut recs) = run_workload(cfg, mode, *w, a, record, &pb, &status);
                recorded.fetch_add(events_of(&recs), Ordering::Relaxed);
                match traces {
                    RunTraces::Keep => {}
                    RunTraces::CoSimulate(c) => {
                        let what = Some(" co-simulating its traces".to_string());
                        set_status(&pb, &status, w.name(), what);
                        c.feed(first_run + i, w.name(), std::mem::take(&mut recs));
                        set_status(&pb, &status, w.name(), None);
                    }
                    RunTraces::Drop => recs.clear(),
                }
                pb.inc(1);
                done.lock().expect("finished runs").push((i, r, recs));
            });
        }
    });
    pb.finish_and_clear();
    let mut done = done.into_inner().expect("finished runs");
    done.sort_by_key(|(i, _, _)| *i);
    done.into_iter().map(|(_, r, recs)| (r, recs)).collect()
}

/// The unit port events `recs` recorded.
fn events_of(recs: &[TraceRecorder]) -> u64 {
    recs.iter().map(TraceRecorder::events).sum()
}

/// Write the recorded unit traces: one file, or one file per workload in a directory.
fn write_traces(
    runs: &mut [(RunResult, Vec<TraceRecorder>)],
    path: &Path,
    a: &RunArgs,
    cfg: &GpuConfig,
) -> Result<()> {
    let single = runs.len() == 1;
    if !single {
        std::fs::create_dir_all(path)
            .with_context(|| format!("cannot create trace directory {}", path.display()))?;
    }
    for (r, recs) in runs.iter_mut() {
        let Some(rec) = recs.first_mut() else {
            continue;
        };
        let file = if single {
            path.to_path_buf()
        } else {
            path.join(format!("{}.wftrace", r.workload))
        };
        let source = format!(
            "workload {}, size {}, seed {}, config {}",
            r.workload, a.size, a.seed, cfg.name
        );
        rec.write(&file, &source).map_err(anyhow::Error::msg)?;
        if !a.quiet {
            println!(
                "recorded {} events of {} into {}",
                rec.events(),
                rec.desc().name,
                file.display()
            );
        }
    }
    Ok(())
}

/// The progress bar's message: what each workload in flight is doing (`what` follows the
/// workload's name; `None` takes the workload off).
fn set_status(pb: &ProgressBar, status: &Mutex<Vec<String>>, workload: &str, what: Option<String>) {
    let mut s = status.lock().expect("progress lock");
    s.retain(|x| !x.starts_with(workload));
    if let Some(what) = what {
        s.push(format!("{workload}{what}"));
    }
    pb.set_message(s.join("  "));
}

#[allow(clippy::too_many_arguments)]
fn run_workload(
    cfg: &GpuConfig,
    mode: Mode,
    w: &'static dyn workloads::Workload,
    a: &RunArgs,
    record: &[String],
    pb: &ProgressBar,
    status: &Arc<Mutex<Vec<String>>>,
) -> (RunResult, Vec<TraceRecorder>) {
    let mut gpu = Gpu::new(cfg.clone(), mode);
    gpu.set_strict_bounds(a.strict_bounds);
    for unit in record {
        gpu.record_unit(unit)
            .expect("recordable unit was checked before the run");
    }
    let name = w.name();
    {
        let pb = pb.clone();
        let status = status.clone();
        gpu.set_progress(Box::new(move |kernel, unit, n| {
            let what = format!("/{kernel} {} {unit}", human(n));
            set_status(&pb, &status, name, Some(what));
        }));
    }
    let outcome = w.run(&mut gpu, a.size, a.seed);
    set_status(pb, status, name, None);
    let launches = std::mem::take(&mut gpu.launches);
    let finishing = std::time::Instant::now();
    let trace = gpu.take_traces();
    let trace_finish_seconds = finishing.elapsed().as_secs_f64();
    let unit_activity = gpu.unit_activity();
    let result = match outcome {
        Ok(v) => RunResult {
            workload: name.into(),
            verified: Some(v.passed),
            detail: v.detail,
            launches,
            unit_activity,
            error: None,
            trace_finish_seconds,
        },
        Err(e) => RunResult {
            workload: name.into(),
            verified: Some(false),
            detail: String::new(),
            launches,
            unit_activity,
            error: Some(e.to_string()),
            trace_finish_seconds,
        },
    };
    (result, trace)
}

fn run_ptx(
    cfg: &GpuConfig,
    mode: Mode,
    ptx: &Path,
    launch: &Path,
    record: &[String],
    strict_bounds: bool,
) -> Result<(RunResult, Vec<TraceRecorder>)> {
    let text = input_file::read_text_bounded(
        ptx,
        input_file::MAX_PTX_BYTES,
        "the limit for a PTX module",
    )?;
    let lf = launch_file::load(launch)?;
    let mut gpu = Gpu::new(cfg.clone(), mode);
    gpu.set_strict_bounds(strict_bounds);
    for unit in record {
        gpu.record_unit(unit).map_err(anyhow::Error::msg)?;
    }
    let file = ptx.display().to_string();
    let module = gpu.load_module(&file, &text)?;
    let run = lf.materialise(&mut gpu, module)?;
    let r = gpu.launch_raw(module, lf.kernel(), run.shape, &run.params);
    // Device printf output, as the CUDA runtime prints it after the launch.
    gpu.take_printf().print(lf.kernel());
    let error = match r {
        Ok(()) => None,
        Err(e @ SimError::Fault(_)) => Some(e.to_string()),
        Err(e) => return Err(anyhow::Error::new(e).context(launch.display().to_string())),
    };
    if error.is_none() {
        for o in &run.outputs {
            launch_file::write_output(&mut gpu, o)?;
        }
    }
    let result = RunResult {
        workload: ptx
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or(file),
        verified: None,
        detail: String::new(),
        launches: std::mem::take(&mut gpu.launches),
        unit_activity: gpu.unit_activity(),
        error,
        trace_finish_seconds: 0.0,
    };
    let finishing = std::time::Instant::now();
    let traces = gpu.take_traces();
    let result = RunResult {
        trace_finish_seconds: finishing.elapsed().as_secs_f64(),
        ..result
    };
    Ok((result, traces))
}

fn human(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1000 {
        format!("{:.0}K", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// Peak resident memory of this process (Linux VmHWM), if available.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
