//! `warpforge cosim`: the generated Verilog of a unit against its Rust model under
//! Verilator, every cycle, zero tolerance (package warpforge-cosim).
//!
//! Stimulus sources: seeded constrained-random (`--random`), the port traffic of every
//! instance of the unit recorded while the GPU model runs a workload (`--workload`), a
//! recorded trace file (`--trace`), or a replay file written at a divergence (`--replay`).
//! `--mutants` checks that broken variants of the RTL are caught; `--all` runs every unit
//! at its standard parameter sets against random stimulus and every workload's traces.

use crate::report;
use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use warpforge_cosim::kits::{directed_stimulus, random_stimulus};
use warpforge_cosim::mutants::{self, MutantOptions};
use warpforge_cosim::{BuildOptions, Cosim, CosimError, Pipelining, RtlSource, Summary};
use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::units::contract::{GpuUse, Params, UnitDesc};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::trace::{Trace, TraceRecorder};
use warpforge_workloads::{self as workloads, Size};

#[derive(Args)]
pub struct CosimArgs {
    /// The unit (RTL module) to co-simulate, e.g. simt_stack_spe.
    #[arg(long, required_unless_present_any = ["all", "replay", "trace"])]
    unit: Option<String>,
    /// Every unit at its standard parameter sets: random stimulus and every workload's
    /// traces; prints a summary table.
    #[arg(long, conflicts_with_all = ["unit", "replay", "trace"])]
    all: bool,
    /// Override a parameter (repeatable), e.g. --param DEPTH=8.
    #[arg(long = "param", value_name = "NAME=VALUE", conflicts_with_all = ["workload", "all"])]
    params: Vec<String>,
    /// Seeded constrained-random stimulus (the default when no other source is given).
    #[arg(long)]
    random: bool,
    /// The directed vectors of the unit's spec (its worked examples and corner cases).
    #[arg(long)]
    directed: bool,
    /// Cycles of random stimulus (per parameter set with --all); at least 1 (a run of no
    /// cycles would report "match" having compared nothing).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    cycles: u64,
    /// Seed of the random stimulus.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Replay the port traffic of every instance of the unit recorded while the GPU model
    /// runs this workload (`all`: every workload).
    #[arg(long)]
    workload: Option<String>,
    /// Input size of the workload runs.
    #[arg(long, default_value = "tiny")]
    size: Size,
    /// GPU preset of the workload runs.
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Replay a unit trace recorded with `warpforge run --record-unit U --trace FILE`.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Re-run a replay file written at a divergence (it holds the RTL and the inputs).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["trace", "workload", "random"])]
    replay: Option<PathBuf>,
    /// Build mutants of the RTL (broken variants) and check that the random stimulus
    /// catches each one; reports the kill ratio.
    #[arg(long)]
    mutants: bool,
    /// With --mutants: build each mutant alone instead of one mutant schema for all of
    /// them (every mutant switched on at run time in one build; the outcomes are the same,
    /// this is for checking that, and slower with an empty model cache).
    #[arg(long, requires = "mutants")]
    mutants_alone: bool,
    /// With --replay: write a self-checking Verilog-2005 testbench of the replay to this
    /// file (the recorded inputs, the model's expected outputs; for Icarus or any other
    /// simulator) and the RTL files it instantiates beside it, instead of co-simulating.
    /// The RTL is the replay's, or with --rtl DIR that folder's.
    #[arg(long, value_name = "OUT.v", requires = "replay")]
    export_tb: Option<PathBuf>,
    /// Use the Verilog in this folder (`<unit>.v`, and the library modules and co-simulation
    /// wrapper if they are there) instead of generating it, e.g. after editing the
    /// generated RTL. With a `<unit>.manifest.json` there, the run is at its parameters
    /// (a different `--param` is an error).
    #[arg(long, value_name = "DIR")]
    rtl: Option<PathBuf>,
    /// Where divergence artifacts go (replay file, VCD windows).
    #[arg(long, value_name = "DIR", default_value = "cosim-failures")]
    out: PathBuf,
    /// Write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// X checking: build the RTL with Verilator's unique X assignment and random initial
    /// values (seeded by --seed), so an output that depends on uninitialised or
    /// out-of-range state differs from the model instead of reading 0.
    #[arg(long)]
    x_checks: bool,
    /// Compare the internal state (the debug-state ports the co-simulation wrapper reads
    /// from the unit's registers and RAMs) every N cycles and after the last one; the
    /// outputs are compared every cycle. A state difference is reported at the first cycle
    /// it exists (the inputs are re-run comparing state every cycle), so N only bounds how
    /// late it is noticed. 1 compares every cycle.
    #[arg(long, value_name = "N", default_value_t = warpforge_cosim::lockstep::STATE_INTERVAL,
          value_parser = clap::value_parser!(u64).range(1..))]
    state_every: u64,
    /// Where the model side (stimulus, unit model, coverage) runs: `1` on the RTL's thread,
    /// `2` on a second thread running ahead of the RTL (with two or more cores), `auto`
    /// races the two ways on the first cycles and keeps the faster. The results, reports
    /// and artifacts are the same either way; a fixed choice makes a profile or a timing
    /// repeatable.
    #[arg(long, value_enum, default_value_t = Threads::Auto)]
    threads: Threads,
}

/// `--threads`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Threads {
    Auto,
    #[value(name = "1")]
    One,
    #[value(name = "2")]
    Two,
}

/// Exit code for a divergence or a surviving mutant.
const EXIT_FAIL: u8 = 1;

/// One co-simulation run, for the summary table and JSON.
#[derive(Debug, Clone, Serialize)]
pub struct CosimRow {
    pub unit: String,
    pub params: String,
    pub source: String,
    pub instances: usize,
    pub cycles: u64,
    pub seconds: f64,
    /// `match`, or what went wrong.
    pub result: String,
    pub ok: bool,
    /// The unit's functional coverage over the run's instances (a run that diverged has
    /// none).
    pub coverage: Option<CoverageRow>,
    /// The first divergence, when the run diverged: cycle, instance, every differing port
    /// (with its differing fields for ports with a declared layout), the inputs of the last
    /// cycles, the artifacts, and `registered_note` (where a differing registered output
    /// was set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence: Option<serde_json::Value>,
}

/// Functional coverage of one row: bins hit, of how many, and the ones never hit.
#[derive(Debug, Clone, Serialize)]
pub struct CoverageRow {
    pub hit: usize,
    pub bins: usize,
    pub percent: f64,
    pub never_hit: Vec<String>,
}

impl CoverageRow {
    fn of(c: &Coverage) -> CoverageRow {
        CoverageRow {
            hit: c.hit(),
            bins: c.total(),
            percent: c.percent(),
            never_hit: c.unhit().into_iter().map(String::from).collect(),
        }
    }
}

pub fn cosim(a: &CosimArgs) -> Result<u8> {
    warpforge_cosim::build::toolchain(&BuildOptions::default()).map_err(|e| {
        anyhow::anyhow!(
            "{e}\nco-simulation needs Verilator 5 and g++: on Debian/Ubuntu run \
             `sudo apt-get install -y verilator g++` (or ./scripts/install-tools.sh)"
        )
    })?;
    if let Some(path) = &a.replay {
        return replay(a, path);
    }
    let mut rows = vec![];
    if a.all {
        for desc in warpforge_gen::units_with_templates() {
            for params in desc.standard_params() {
                rows.push(random_run(a, desc, &params)?);
                if has_directed(desc) {
                    rows.push(directed_run(a, desc, &params)?);
                }
                if a.mutants {
                    rows.push(mutant_run(a, desc, &params)?);
                }
            }
            rows.extend(workload_runs(a, desc, "all")?);
        }
    } else if let Some(path) = &a.trace {
        let trace = Trace::read_of(path, a.unit.as_deref()).map_err(anyhow::Error::msg)?;
        rows.push(trace_run(a, &trace, &format!("trace {}", path.display()))?);
    } else {
        let unit = a.unit.as_deref().expect("clap requires --unit here");
        let desc = warpforge_gen::find_unit(unit)?;
        if let Some(w) = &a.workload {
            rows.extend(workload_runs(a, desc, w)?);
        } else {
            // RTL from a folder runs at the parameters it was generated at, unless given.
            let params = match (rtl_manifest_params(a, desc)?, a.params.is_empty()) {
                (Some(p), true) => p,
                _ => warpforge_gen::parse_params(desc, &a.params)?,
            };
            if a.mutants {
                rows.push(mutant_run(a, desc, &params)?);
            }
            if a.directed {
                if !has_directed(desc) {
                    bail!("{} has no directed vectors yet (use --random)", desc.name);
                }
                rows.push(directed_run(a, desc, &params)?);
            }
            if a.random || !(a.mutants || a.directed) {
                rows.push(random_run(a, desc, &params)?);
            }
        }
    }
    print_rows(&rows);
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if rows.iter().all(|r| r.ok) {
        0
    } else {
        EXIT_FAIL
    })
}

fn print_rows(rows: &[CosimRow]) {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.unit.clone(),
                r.params.clone(),
                r.source.clone(),
                r.instances.to_string(),
                r.cycles.to_string(),
                if r.seconds > 0.0 {
                    format!("{:.2}M", r.cycles as f64 / r.seconds / 1e6)
                } else {
                    "-".into()
                },
                r.coverage
                    .as_ref()
                    .map_or("-".into(), |c| format!("{}/{}", c.hit, c.bins)),
                r.result.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        report::table_left(
            &[
                "unit",
                "params",
                "stimulus",
                "instances",
                "cycles",
                "cycles/s",
                "coverage",
                "result"
            ],
            &body,
            3
        )
    );
    for r in rows {
        if let Some(c) = r.coverage.as_ref().filter(|c| !c.never_hit.is_empty()) {
            println!(
                "{} ({}) {}: bins never hit: {}",
                r.unit,
                r.params,
                r.source,
                c.never_hit.join(", ")
            );
        }
    }
}

/// The co-simulated RTL of `desc` at `params`: generated, or with `--rtl DIR` the files of
/// DIR (`<unit>.v` must be there; a library module or the co-simulation wrapper that DIR
/// does not have is the generated one, so an edited `<unit>.v` alone is enough).
fn rtl_source(a: &CosimArgs, desc: &'static UnitDesc, params: &Params) -> Result<RtlSource> {
    let g = warpforge_gen::generate(desc, params)?;
    let mut rtl = RtlSource::cosim_of(&g);
    if let Some(made) = rtl_manifest_params(a, desc)? {
        // The Verilog's shared localparams and port widths were rendered for the manifest's
        // parameters: run at others and the RTL would be re-parameterised behind its back.
        if made != *params {
            let dir = a.rtl.as_ref().expect("a manifest comes from --rtl");
            bail!(
                "--rtl {}: the RTL was generated at {} but this run is at {} \
                 (drop --param to run at the RTL's parameters, or regenerate it with \
                 `warpforge gen --unit {} --param ...`)",
                dir.display(),
                made,
                params,
                desc.name
            );
        }
    }
    if let Some(dir) = &a.rtl {
        let path = dir.join(format!("{}.v", desc.name));
        if !path.exists() {
            bail!("--rtl {}: no {} there", dir.display(), path.display());
        }
        for (name, text) in &mut rtl.files {
            let p = dir.join(&*name);
            if p.exists() {
                *text = std::fs::read_to_string(&p)
                    .with_context(|| format!("cannot read {}", p.display()))?;
            }
        }
    }
    Ok(rtl)
}

/// With `--rtl DIR`: the parameters in DIR's `<unit>.manifest.json` (what `warpforge gen`
/// and `warpforge run` write beside the Verilog), if DIR has one.
fn rtl_manifest_params(a: &CosimArgs, desc: &'static UnitDesc) -> Result<Option<Params>> {
    let Some(dir) = &a.rtl else {
        return Ok(None);
    };
    let path = dir.join(format!("{}.manifest.json", desc.name));
    if !path.exists() {
        return Ok(None);
    }
    let text = crate::input_file::read_text_bounded(&path, 1 << 20, "the limit for a manifest")?;
    let m: warpforge_gen::Manifest = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a warpforge manifest", path.display()))?;
    let pairs: Vec<(&str, u64)> = m.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let params = desc
        .params(&pairs)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Some(params))
}

/// The Verilator build: two-state, or with `--x-checks` random X values.
fn build_options(a: &CosimArgs) -> BuildOptions {
    BuildOptions {
        x_random: a.x_checks.then_some(a.seed),
        ..BuildOptions::default()
    }
}

fn build(a: &CosimArgs, desc: &'static UnitDesc, params: &Params) -> Result<Cosim> {
    let rtl = rtl_source(a, desc, params)?;
    let c = Cosim::new(desc, params.clone(), rtl, &build_options(a))?;
    let pipelining = match a.threads {
        Threads::Auto => Pipelining::Auto,
        Threads::One => Pipelining::Never,
        Threads::Two => Pipelining::Always,
    };
    Ok(c.with_failure_dir(Some(a.out.clone()))
        .with_state_interval(a.state_every)
        .with_pipelining(pipelining))
}

/// A finished run, or the divergence turned into a failed row (after printing the report).
fn outcome(
    desc: &UnitDesc,
    params: &Params,
    source: String,
    started: Instant,
    r: Result<Vec<Summary>, CosimError>,
) -> Result<CosimRow> {
    outcome_after(desc, params, source, started.elapsed().as_secs_f64(), r)
}

/// [`outcome`] of a co-simulation that took `seconds` (the row's time if it failed).
fn outcome_after(
    desc: &UnitDesc,
    params: &Params,
    source: String,
    seconds: f64,
    r: Result<Vec<Summary>, CosimError>,
) -> Result<CosimRow> {
    let mut row = CosimRow {
        unit: desc.name.to_string(),
        params: params.to_string(),
        source,
        instances: 0,
        cycles: 0,
        seconds,
        result: String::new(),
        ok: false,
        coverage: None,
        divergence: None,
    };
    match r {
        Ok(s) => {
            let mut cov = s.first().map(|x| x.coverage.clone());
            for x in s.iter().skip(1) {
                cov.as_mut().expect("first").absorb(&x.coverage);
            }
            row.coverage = cov.as_ref().map(CoverageRow::of);
            row.instances = s.len();
            row.cycles = s.iter().map(|x| x.cycles).sum();
            row.seconds = s.iter().map(|x| x.elapsed.as_secs_f64()).sum();
            row.result = "match".into();
            row.ok = true;
        }
        Err(CosimError::Divergence(d)) => {
            eprint!("{d}");
            row.result = format!(
                "MISMATCH at cycle {} ({} {})",
                d.cycle,
                d.instance,
                d.port()
            );
            row.divergence = Some(divergence_json(&d));
        }
        Err(CosimError::Rtl {
            cycle,
            kind,
            message,
        }) => {
            eprintln!("RTL error at cycle {cycle} ({kind:?}): {message}");
            row.result = format!("RTL {kind:?} at cycle {cycle}");
        }
        Err(e) => return Err(e.into()),
    }
    Ok(row)
}

fn random_run(a: &CosimArgs, desc: &'static UnitDesc, params: &Params) -> Result<CosimRow> {
    let cosim = build(a, desc, params)?;
    let mut stim = random_stimulus(desc, params, a.seed, a.cycles);
    let started = Instant::now();
    let r = cosim.run(&mut stim).map(|s| vec![s]);
    outcome(desc, params, format!("random seed {}", a.seed), started, r)
}

fn has_directed(desc: &'static UnitDesc) -> bool {
    warpforge_cosim::kits::kit(desc).is_some_and(|k| k.directed.is_some())
}

fn directed_run(a: &CosimArgs, desc: &'static UnitDesc, params: &Params) -> Result<CosimRow> {
    let cosim = build(a, desc, params)?;
    let mut stim = directed_stimulus(desc, params).expect("has_directed checked");
    let started = Instant::now();
    let r = cosim.run(&mut stim).map(|s| vec![s]);
    // The unit's spec file (its worked examples and corner cases are the directed vectors).
    let spec = desc.spec.split_whitespace().next().unwrap_or("spec");
    outcome(desc, params, format!("directed ({spec})"), started, r)
}

fn trace_run(a: &CosimArgs, trace: &Trace, source: &str) -> Result<CosimRow> {
    let cosim = build(a, trace.desc, &trace.params)?;
    let started = Instant::now();
    let r = cosim.run_trace(trace);
    outcome(trace.desc, &trace.params, source.to_string(), started, r)
}

fn mutant_run(a: &CosimArgs, desc: &'static UnitDesc, params: &Params) -> Result<CosimRow> {
    let rtl = rtl_source(a, desc, params)?;
    let started = Instant::now();
    let opts = MutantOptions {
        max_cycles: a.cycles,
        schema: !a.mutants_alone,
        ..MutantOptions::default()
    };
    let seed = a.seed;
    let report = mutants::run_mutants(
        desc,
        params,
        &rtl,
        || random_stimulus(desc, params, seed, u64::MAX),
        &opts,
    )?;
    print!("{report}");
    // A survivor the unit's kit explains as equivalent is not a failure; any other is.
    let ok = report.unexplained().next().is_none() && report.killed >= 10;
    Ok(CosimRow {
        unit: desc.name.to_string(),
        params: params.to_string(),
        source: format!("mutants (random seed {seed})"),
        instances: report.results.len(),
        cycles: 0,
        seconds: started.elapsed().as_secs_f64(),
        result: format!(
            "{}/{} killed ({:.0}%), {} equivalent",
            report.killed,
            report.killed + report.survived - report.equivalent,
            100.0 * report.kill_ratio(),
            report.equivalent
        ),
        ok,
        coverage: None,
        divergence: None,
    })
}

/// A divergence as JSON: its fields, plus `registered_note`.
fn divergence_json(d: &warpforge_cosim::Divergence) -> serde_json::Value {
    let mut v = serde_json::to_value(d).expect("a divergence serializes");
    v["registered_note"] = serde_json::json!(d.registered_note());
    v
}

/// The GPU configuration that instantiates `unit`, or why none does.
/// (The preset with the overrides the unit's registry entry names, see `UnitDesc::gpu`.)
fn config_for(
    a: &CosimArgs,
    desc: &'static UnitDesc,
) -> Result<std::result::Result<GpuConfig, String>> {
    let cfg = GpuConfig::preset(&a.config, &[])?;
    let set = match (desc.gpu)(&cfg) {
        GpuUse::Instantiated { .. } => return Ok(Ok(cfg)),
        GpuUse::NotUsed { set } => set,
        GpuUse::Standalone => return Ok(Err("the GPU model has no place for it".into())),
    };
    let overrides: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let cfg = GpuConfig::preset(&a.config, &overrides)?;
    Ok(match (desc.gpu)(&cfg) {
        GpuUse::Instantiated { .. } => Ok(cfg),
        _ => Err(format!(
            "the {} preset does not instantiate it even with --set {}",
            a.config,
            set.join(" --set ")
        )),
    })
}

/// Record the unit's traffic while `workload` (or `all`) runs, and replay every instance.
fn workload_runs(a: &CosimArgs, desc: &'static UnitDesc, workload: &str) -> Result<Vec<CosimRow>> {
    let cfg = match config_for(a, desc)? {
        Ok(cfg) => cfg,
        Err(why) if workload == "all" => {
            eprintln!("note: no workload traces of {}: {why}", desc.name);
            return Ok(vec![]);
        }
        Err(why) => bail!("no workload traces of {}: {why}", desc.name),
    };
    let selected: Vec<&'static dyn workloads::Workload> = if workload == "all" {
        workloads::all().to_vec()
    } else {
        vec![workloads::by_name(workload)
            .with_context(|| format!("unknown workload `{workload}`"))?]
    };
    let dir = tempdir()?;
    let mut rows = vec![];
    for w in selected {
        let mut gpu = Gpu::new(cfg.clone(), Mode::Timing);
        gpu.record_unit(desc.name).map_err(anyhow::Error::msg)?;
        let v = w
            .run(&mut gpu, a.size, a.seed)
            .with_context(|| format!("workload {}", w.name()))?;
        if !v.passed {
            bail!("workload {} failed verification: {}", w.name(), v.detail);
        }
        let mut rec = gpu.take_trace().context("recording was on")?;
        let path = dir.join(format!("{}.{}.wftrace", w.name(), desc.name));
        let source = format!(
            "workload {}, size {}, config {}",
            w.name(),
            a.size,
            cfg.name
        );
        rec.write(&path, &source).map_err(anyhow::Error::msg)?;
        let trace = Trace::read(&path).map_err(anyhow::Error::msg)?;
        rows.push(trace_run(
            a,
            &trace,
            &format!("workload {} ({})", w.name(), a.size),
        )?);
        std::fs::remove_file(&path).ok();
    }
    std::fs::remove_dir(&dir).ok();
    Ok(rows)
}

fn tempdir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("warpforge-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// `--replay F`: F's stimulus against the RTL stored in F, or with `--rtl DIR` against
/// DIR's (a fix of the RTL that diverged), with the model as the reference either way.
fn replay(a: &CosimArgs, path: &Path) -> Result<u8> {
    let (desc, params) = warpforge_cosim::replay_unit_params(path)?;
    if let Some(out) = &a.export_tb {
        return export_tb(a, path, desc, &params, out);
    }
    // The model is the reference: say so when it no longer computes what the file recorded.
    let (r, _) = warpforge_cosim::Replay::load(path, desc)?;
    if let Some(m) = r.model_change(desc, &params) {
        println!(
            "note: the model has changed since this replay was written: at cycle {} it computes \
             {} = 0x{}, the file recorded 0x{}",
            m.cycle, m.port, m.now, m.recorded
        );
    }
    let outcome = match &a.rtl {
        // `--x-checks` applies to a replay too.
        None => warpforge_cosim::replay_against(path, desc, None, &build_options(a)),
        Some(dir) => {
            if let Some(p) = rtl_manifest_params(a, desc)? {
                if p != params {
                    bail!(
                        "{} holds RTL generated at {p}, but the replay {} is at {params}",
                        dir.display(),
                        path.display()
                    );
                }
            }
            let rtl = rtl_source(a, desc, &params)?;
            let r = warpforge_cosim::replay_against(path, desc, Some(rtl), &build_options(a));
            if r.is_ok() {
                println!(
                    "the RTL of {} matches the model over the replay's every cycle",
                    dir.display()
                );
            }
            r
        }
    };
    match outcome {
        Ok(s) => {
            println!("{s}");
            if a.rtl.is_none() {
                println!("the replay matches (the RTL or model was fixed?)");
            }
            Ok(0)
        }
        Err(CosimError::Divergence(d)) => {
            eprint!("{d}");
            Ok(EXIT_FAIL)
        }
        Err(e) => Err(e.into()),
    }
}

/// `--replay F --export-tb OUT.v`: the testbench of F to OUT.v and the RTL files it
/// instantiates beside it (an existing file of the same name must have the same text).
fn export_tb(
    a: &CosimArgs,
    path: &Path,
    desc: &'static UnitDesc,
    params: &Params,
    out: &Path,
) -> Result<u8> {
    let (r, _) = warpforge_cosim::Replay::load(path, desc)?;
    let rtl = match &a.rtl {
        None => r.header.rtl.clone(),
        Some(dir) => {
            if let Some(p) = rtl_manifest_params(a, desc)? {
                if p != *params {
                    bail!(
                        "{} holds RTL generated at {p}, but the replay {} is at {params}",
                        dir.display(),
                        path.display()
                    );
                }
            }
            rtl_source(a, desc, params)?
        }
    };
    let tb = warpforge_cosim::testbench::testbench(&r, desc, params, &rtl)?;
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = vec![];
    for (name, text) in &tb.rtl_files {
        let p = dir.join(name);
        if p == out {
            bail!(
                "--export-tb {}: the design has a file of that name; choose another",
                out.display()
            );
        }
        match std::fs::read_to_string(&p) {
            Ok(old) if old == *text => {}
            Ok(_) => bail!(
                "{} exists with other text than the replay's RTL; export the testbench \
                 into another folder",
                p.display()
            ),
            Err(_) => {
                std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?
            }
        }
        written.push(p);
    }
    std::fs::write(out, &tb.text).with_context(|| format!("cannot write {}", out.display()))?;
    let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    println!(
        "testbench {} written to {} ({} cycles; RTL: {})",
        tb.module,
        out.display(),
        tb.cycles,
        files.join(" ")
    );
    println!(
        "run it: iverilog -g2005 -o {m} {} {} && vvp {m}",
        files.join(" "),
        out.display(),
        m = tb.module
    );
    let debug_port = r.header.fail_port.as_deref().and_then(|p| {
        let i = desc.port_index(p)?;
        (desc.ports[i].role == warpforge_model::units::contract::Role::Debug).then_some(p)
    });
    if let Some(p) = debug_port {
        println!(
            "note: the replay diverged first in debug state ({p}); the testbench checks the \
             functional outputs only, so it fails when that state reaches an output, or passes"
        );
    }
    Ok(0)
}

/// The co-simulation that goes with `warpforge run`: generate the RTL of every unit at the
/// parameters the runs instantiated it with, write exactly that RTL to
/// `rtl_out/<unit>/<parameters>/`, replay the port traffic the runs recorded (every
/// instance: every warp's stack, every SM's scoreboard) against it, and print a summary at
/// the end. Without Verilator it says how to install it and skips the co-simulation (the
/// RTL is still written).
///
/// Each run's traces are co-simulated as soon as that run finishes ([`RunCosim::feed`], on
/// the thread that ran it, its instances in parallel on rayon's pool, while the other
/// workers go on simulating), so only the traces of the runs in flight are held. Why:
/// until 2026-11-27 every run's traces waited for a co-simulation after the last run, and
/// they were most of the main command's memory (peak 1.41-1.43 GB, 0.09 GB without
/// recording).
///
/// The summary does not depend on the order in which the runs finish: rows come in the
/// order of the runs (each (unit, parameters) group where it was first recorded), and a
/// group that diverges reports the earliest run in that order that diverged (a run fed
/// after an earlier run of its group diverged is not replayed). Instance names carry the
/// workload (`vecadd/sm0.w3`), so each divergence's report, replay file and waveform are
/// its own even when runs of one group diverge at once.
pub struct RunCosim {
    rtl_out: PathBuf,
    size: Size,
    /// Why the co-simulation is skipped (no Verilator or C++ compiler), if it is.
    skipped: Option<String>,
    groups: Mutex<Vec<Arc<RunGroup>>>,
    /// The co-simulated design of the RTL written ([`RtlSource::cosim_of`]; tests break it).
    design: fn(&warpforge_gen::GeneratedUnit) -> RtlSource,
    /// Where a divergence's report, replay file and waveform go.
    failures: PathBuf,
    /// The first error that stopped the feeding.
    error: Mutex<Option<anyhow::Error>>,
}

/// The traces of one unit at one parameter set, and their RTL.
struct RunGroup {
    desc: &'static UnitDesc,
    params: Params,
    /// Where its RTL is written.
    dir: PathBuf,
    /// The RTL written and (unless the co-simulation is skipped) built from exactly those
    /// files, by the first run that needs it; the others wait for it here, not while
    /// holding the list of groups.
    built: OnceLock<Result<Option<Cosim>, String>>,
    tally: Mutex<GroupTally>,
}

/// What a group's replays found so far.
struct GroupTally {
    /// The first (run, trace) position in the runs' order that recorded the group.
    first: (usize, usize),
    traces: usize,
    summaries: Vec<Summary>,
    /// The earliest run (in order) whose trace diverged: its position, workload and error.
    failure: Option<(usize, String, CosimError)>,
    /// Wall seconds of the group's replays (the row's time when it failed).
    seconds: f64,
}

impl GroupTally {
    fn new() -> GroupTally {
        GroupTally {
            first: (usize::MAX, 0),
            traces: 0,
            summaries: vec![],
            failure: None,
            seconds: 0.0,
        }
    }
}

impl RunCosim {
    pub fn new(rtl_out: &Path, size: Size) -> RunCosim {
        RunCosim {
            rtl_out: rtl_out.to_path_buf(),
            size,
            skipped: warpforge_cosim::build::toolchain(&BuildOptions::default())
                .err()
                .map(|e| e.to_string()),
            groups: Mutex::new(vec![]),
            design: RtlSource::cosim_of,
            failures: PathBuf::from("cosim-failures"),
            error: Mutex::new(None),
        }
    }

    /// Co-simulates the traces that run number `run` (its position in the runs' order)
    /// of `workload` recorded, one at a time (a recorder's raw records are filed under
    /// their instances when it becomes a trace), and drops them. An error that is not a
    /// divergence (RTL that cannot be written or built) stops the feeding and is returned
    /// by [`RunCosim::finish`].
    pub fn feed(&self, run: usize, workload: &str, recs: Vec<TraceRecorder>) {
        if self.error.lock().expect("co-simulation error").is_some() {
            return;
        }
        if let Err(e) = self.try_feed(run, workload, recs) {
            let mut error = self.error.lock().expect("co-simulation error");
            error.get_or_insert(e);
        }
    }

    fn try_feed(&self, run: usize, workload: &str, recs: Vec<TraceRecorder>) -> Result<()> {
        for (k, rec) in recs.into_iter().enumerate() {
            let group = self.group(rec.desc(), rec.params());
            {
                let mut t = group.tally.lock().expect("co-simulation tally");
                t.first = t.first.min((run, k));
                t.traces += 1;
                if t.failure.as_ref().is_some_and(|f| f.0 < run) {
                    continue;
                }
            }
            let built = group.built.get_or_init(|| self.build(&group));
            let Some(cosim) = built.as_ref().map_err(|e| anyhow::anyhow!("{e}"))? else {
                continue;
            };
            let started = Instant::now();
            let mut trace = rec.into_trace(&format!("workload {workload}, size {}", self.size));
            for inst in &mut trace.header.instances {
                inst.name = format!("{workload}/{}", inst.name);
            }
            let r = cosim.run_trace(&trace);
            drop(trace);
            let mut t = group.tally.lock().expect("co-simulation tally");
            t.seconds += started.elapsed().as_secs_f64();
            match r {
                Ok(s) => t.summaries.extend(s),
                Err(e) if t.failure.as_ref().is_none_or(|f| run < f.0) => {
                    t.failure = Some((run, workload.to_string(), e))
                }
                Err(_) => {}
            }
        }
        Ok(())
    }

    /// The group of `desc` at `params`, found or added (its RTL not yet written).
    fn group(&self, desc: &'static UnitDesc, params: &Params) -> Arc<RunGroup> {
        let mut groups = self.groups.lock().expect("co-simulation groups");
        if let Some(g) = groups
            .iter()
            .find(|g| std::ptr::eq(g.desc, desc) && g.params == *params)
        {
            return g.clone();
        }
        let group = Arc::new(RunGroup {
            desc,
            params: params.clone(),
            dir: self.rtl_out.join(warpforge_gen::params_dir(desc, params)),
            built: OnceLock::new(),
            tally: Mutex::new(GroupTally::new()),
        });
        groups.push(group.clone());
        group
    }

    /// Writes `g`'s RTL and (unless the co-simulation is skipped) builds exactly those
    /// files.
    fn build(&self, g: &RunGroup) -> Result<Option<Cosim>, String> {
        let built = || -> Result<Option<Cosim>> {
            let rtl = warpforge_gen::generate(g.desc, &g.params)?;
            rtl.write(&g.dir)?;
            if self.skipped.is_some() {
                return Ok(None);
            }
            let cosim = Cosim::new(
                g.desc,
                g.params.clone(),
                (self.design)(&rtl),
                &BuildOptions::default(),
            )?;
            Ok(Some(cosim.with_failure_dir(Some(self.failures.clone()))))
        };
        built().map_err(|e| format!("{} ({}): {e:#}", g.desc.name, g.params))
    }

    /// Prints where the RTL went and the summary (unless `quiet`); false on any mismatch.
    pub fn finish(self, quiet: bool) -> Result<bool> {
        let Some(rows) = self.into_rows(quiet)? else {
            return Ok(true);
        };
        if !quiet {
            println!(
                "Co-simulation of the generated RTL against the port traffic recorded in these runs:"
            );
            print_rows(&rows);
        }
        Ok(rows.iter().all(|r| r.ok))
    }

    /// One summary row per group in the runs' order (`None` when the co-simulation was
    /// skipped); prints where the RTL went unless `quiet`.
    fn into_rows(self, quiet: bool) -> Result<Option<Vec<CosimRow>>> {
        let mut groups: Vec<(RunGroup, GroupTally)> = self
            .groups
            .into_inner()
            .expect("co-simulation groups")
            .into_iter()
            .map(|g| {
                let mut g = Arc::into_inner(g).expect("every run has finished");
                let t = std::mem::replace(
                    g.tally.get_mut().expect("co-simulation tally"),
                    GroupTally::new(),
                );
                (g, t)
            })
            .collect();
        groups.sort_by_key(|(_, t)| t.first);
        if !quiet {
            for (g, _) in groups
                .iter()
                .filter(|(g, _)| g.built.get().is_some_and(Result::is_ok))
            {
                println!(
                    "RTL of {} ({}) written to {}/",
                    g.desc.name,
                    g.params,
                    g.dir.display()
                );
            }
        }
        if let Some(e) = self.error.into_inner().expect("co-simulation error") {
            return Err(e.context("the co-simulation of the runs stopped"));
        }
        if let Some(e) = &self.skipped {
            println!(
                "co-simulation skipped: {e}\n  install Verilator and g++ (`sudo apt-get install -y verilator g++`, \
                 or ./scripts/install-tools.sh) to co-simulate the RTL against these runs"
            );
            return Ok(None);
        }
        let mut rows = vec![];
        for (g, t) in groups {
            let source = format!("{} workload traces ({})", t.traces, self.size);
            let row = match t.failure {
                None => outcome_after(g.desc, &g.params, source, t.seconds, Ok(t.summaries))?,
                Some((_, w, e)) => {
                    let mut row = outcome_after(g.desc, &g.params, source, t.seconds, Err(e))?;
                    row.result = format!("{} in {w}", row.result);
                    row
                }
            };
            rows.push(row);
        }
        Ok(Some(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stack traces of `workload` at tiny size, on a small GPU (`--set` overrides).
    fn recorded(workload: &str, sets: &[&str]) -> Vec<TraceRecorder> {
        let sets: Vec<String> = ["sm.count=2"]
            .iter()
            .chain(sets)
            .map(|s| s.to_string())
            .collect();
        let mut gpu = Gpu::new(GpuConfig::preset("gtx480", &sets).unwrap(), Mode::Timing);
        gpu.record_unit("simt_stack_spe").unwrap();
        let w = workloads::by_name(workload).unwrap();
        assert!(w.run(&mut gpu, Size::Tiny, 1).unwrap().passed);
        gpu.take_traces()
    }

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("warpforge-runcosim-{name}-{}", std::process::id()))
    }

    /// A stack whose top-of-stack PC is off by one whenever it holds an entry.
    fn broken_stack(g: &warpforge_gen::GeneratedUnit) -> RtlSource {
        let mut rtl = RtlSource::cosim_of(g);
        let (from, to) = (": top_pc;", ": top_pc ^ 1'b1;");
        let f = rtl
            .files
            .iter_mut()
            .find(|(_, t)| t.contains(from))
            .unwrap();
        f.1 = f.1.replace(from, to);
        rtl
    }

    /// Runs finishing in any order give the rows of the runs' order: each (unit,
    /// parameters) group where it was first recorded, its traces and cycles all counted.
    #[test]
    fn rows_follow_the_runs_order_not_the_order_they_finish() {
        let out = scratch("order");
        let (deep, shallow) = (
            recorded("vecadd", &[]),
            recorded("vecadd", &["sm.stack_depth=8"]),
        );
        let c = RunCosim::new(&out, Size::Tiny);
        if c.skipped.is_some() {
            return; // no Verilator: the co-simulation has nothing to order
        }
        c.feed(1, "vecadd", shallow);
        c.feed(2, "bfs", recorded("bfs", &[]));
        c.feed(0, "vecadd", deep);
        let rows = c.into_rows(true).unwrap().unwrap();
        let depths: Vec<bool> = rows.iter().map(|r| r.params.contains("DEPTH=16")).collect();
        assert_eq!(
            depths,
            [true, false],
            "{:?}",
            rows.iter().map(|r| &r.params).collect::<Vec<_>>()
        );
        assert!(
            rows.iter().all(|r| r.ok && r.cycles > 0),
            "{:?}",
            rows.iter().map(|r| &r.result).collect::<Vec<_>>()
        );
        assert_eq!(rows[0].source, "2 workload traces (tiny)");
        let _ = std::fs::remove_dir_all(&out);
    }

    /// RTL that cannot be built stops the feeding; the error comes out of `finish`, after
    /// the runs, naming the build that failed and its tool's output.
    #[test]
    fn an_rtl_that_does_not_build_is_an_error_at_the_end() {
        let out = scratch("unbuildable");
        let mut c = RunCosim::new(&out, Size::Tiny);
        if c.skipped.is_some() {
            return;
        }
        c.design = |g| {
            let mut rtl = RtlSource::cosim_of(g);
            rtl.files[0].1.push_str("\nthis is not verilog\n");
            rtl
        };
        c.feed(0, "vecadd", recorded("vecadd", &[]));
        c.feed(1, "bfs", recorded("bfs", &[]));
        let e = format!("{:#}", c.finish(true).unwrap_err());
        assert!(
            e.contains("build failed") && e.contains("simt_stack_spe"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&out);
    }

    /// A divergence fails its group's row, naming the earliest run in order that diverged
    /// whichever finished first; its replay file reproduces it alone and matches against
    /// the fixed RTL.
    #[test]
    fn a_divergence_names_the_earliest_run_in_order() {
        let out = scratch("diverge");
        let mut c = RunCosim::new(&out, Size::Tiny);
        if c.skipped.is_some() {
            return;
        }
        c.design = broken_stack;
        c.failures = out.join("failures");
        c.feed(2, "bfs", recorded("bfs", &[]));
        c.feed(0, "vecadd", recorded("vecadd", &[]));
        // After run 0 failed, run 1's trace is not needed to name the first failure.
        c.feed(1, "histogram", recorded("histogram", &[]));
        let rows = c.into_rows(true).unwrap().unwrap();
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].ok);
        assert!(
            rows[0].result.starts_with("MISMATCH at cycle"),
            "{}",
            rows[0].result
        );
        assert!(rows[0].result.ends_with(" in vecadd"), "{}", rows[0].result);
        assert_eq!(rows[0].source, "3 workload traces (tiny)");
        let files: Vec<String> = std::fs::read_dir(out.join("failures"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let replay = files
            .iter()
            .find(|f| f.contains("vecadd") && f.ends_with(".replay"))
            .map(|f| out.join("failures").join(f))
            .unwrap_or_else(|| panic!("no replay file of vecadd's divergence: {files:?}"));
        // The replay reproduces the divergence alone, at the workload's instance, and
        // matches against the unbroken RTL (the fix).
        match warpforge_cosim::replay(&replay) {
            Err(CosimError::Divergence(d)) => {
                assert!(d.instance.starts_with("vecadd/"), "{}", d.instance)
            }
            other => panic!("the replay did not diverge: {:?}", other.map(|s| s.cycles)),
        }
        let (desc, params) = warpforge_cosim::replay_unit_params(&replay).unwrap();
        let fixed = RtlSource::cosim_of(&warpforge_gen::generate(desc, &params).unwrap());
        let s =
            warpforge_cosim::replay_against(&replay, desc, Some(fixed), &BuildOptions::default())
                .unwrap();
        assert!(s.cycles > 0);
        let _ = std::fs::remove_dir_all(&out);
    }
}
