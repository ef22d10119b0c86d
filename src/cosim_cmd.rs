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
use std::time::Instant;
use warpforge_cosim::kits::{directed_stimulus, random_stimulus};
use warpforge_cosim::mutants::{self, MutantOptions};
use warpforge_cosim::{BuildOptions, Cosim, CosimError, RtlSource, Summary};
use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::units::contract::{GpuUse, Params, UnitDesc};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::trace::Trace;
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
    Ok(c.with_failure_dir(Some(a.out.clone()))
        .with_state_interval(a.state_every))
}

/// A finished run, or the divergence turned into a failed row (after printing the report).
fn outcome(
    desc: &UnitDesc,
    params: &Params,
    source: String,
    started: Instant,
    r: Result<Vec<Summary>, CosimError>,
) -> Result<CosimRow> {
    let seconds = started.elapsed().as_secs_f64();
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

/// The traces of one unit at one parameter set: (unit, params, [(workload, trace)]).
type TraceGroup = (
    String,
    Params,
    Vec<(String, warpforge_model::units::trace::TraceRecorder)>,
);

/// The co-simulation that follows `warpforge run`: generate the RTL of every unit at the
/// parameters the runs instantiated it with, write exactly that RTL to
/// `rtl_out/<unit>/<parameters>/`, then replay the port traffic the runs recorded (every
/// instance: every warp's stack, every SM's scoreboard) against it and print a summary.
/// Returns false on any mismatch. Without Verilator it says how to install it and skips
/// the co-simulation (the RTL is still written).
pub fn cosim_recorded(
    traces: Vec<(String, warpforge_model::units::trace::TraceRecorder)>,
    rtl_out: &Path,
    size: Size,
    quiet: bool,
) -> Result<bool> {
    // One RTL and one build per (unit, parameters); traces in workload order.
    let mut groups: Vec<TraceGroup> = vec![];
    // The recorders stay as they are until their turn: a recorder's raw records are filed
    // under their instances when it becomes a trace, and held at most one at a time.
    for (workload, rec) in traces {
        match groups
            .iter_mut()
            .find(|(u, p, _)| u == rec.desc().name && p == rec.params())
        {
            Some(g) => g.2.push((workload, rec)),
            None => groups.push((
                rec.desc().name.to_string(),
                rec.params().clone(),
                vec![(workload, rec)],
            )),
        }
    }
    let mut generated = vec![];
    for (_, params, list) in &groups {
        let desc = list[0].1.desc();
        let g = warpforge_gen::generate(desc, params)?;
        let dir = rtl_out.join(warpforge_gen::params_dir(desc, params));
        g.write(&dir)?;
        if !quiet {
            println!(
                "RTL of {} ({params}) written to {}/",
                desc.name,
                dir.display()
            );
        }
        generated.push(g);
    }
    if let Err(e) = warpforge_cosim::build::toolchain(&BuildOptions::default()) {
        println!(
            "co-simulation skipped: {e}\n  install Verilator and g++ (`sudo apt-get install -y verilator g++`, \
             or ./scripts/install-tools.sh) to co-simulate the RTL against these runs"
        );
        return Ok(true);
    }
    let out = PathBuf::from("cosim-failures");
    let mut rows = vec![];
    for ((_, params, list), g) in groups.into_iter().zip(&generated) {
        let desc = list[0].1.desc();
        let traces = list.len();
        // Exactly the files written above.
        let rtl = RtlSource::cosim_of(g);
        let cosim = Cosim::new(desc, params.clone(), rtl, &BuildOptions::default())?
            .with_failure_dir(Some(out.clone()));
        let started = Instant::now();
        let mut summaries = vec![];
        let mut failure = None;
        for (workload, rec) in list {
            let trace = rec.into_trace(&format!("workload {workload}, size {size}"));
            match cosim.run_trace(&trace) {
                Ok(s) => summaries.extend(s),
                Err(e) => {
                    failure = Some((workload, e));
                    break;
                }
            }
        }
        let source = format!("{traces} workload traces ({size})");
        let row = match failure {
            None => outcome(desc, &params, source, started, Ok(summaries))?,
            Some((w, e)) => {
                let mut row = outcome(desc, &params, source, started, Err(e))?;
                row.result = format!("{} in {w}", row.result);
                row
            }
        };
        rows.push(row);
    }
    if !quiet {
        println!(
            "Co-simulation of the generated RTL against the port traffic recorded in these runs:"
        );
        print_rows(&rows);
    }
    Ok(rows.iter().all(|r| r.ok))
}
