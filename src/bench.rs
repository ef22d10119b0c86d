//! `warpforge bench`: simulation speed and peak memory per workload.
//!
//! Each workload runs in its own child process (`warpforge run --threads 1 --no-compare
//! --no-cosim`) so that its peak resident memory is its own; the child reports the simulated
//! cycles, warp instructions and the host seconds spent inside kernel launches (input
//! generation and the CPU reference check are not counted). Each workload runs `--repeat`
//! times and the fastest run is reported: host noise only ever slows a run down; the
//! simulated figures of every repeat must be identical.
//!
//! By default the figure is the simulator's own speed. `--record-traces` measures instead
//! what a default `warpforge run` does: the same simulation while it records every unit
//! instance's port traffic for co-simulation (which then runs after the timed launches and
//! is not counted, but its memory is). `--recording-overhead` measures the difference: each
//! workload without and with recording, alternating.
//!
//! `--against OLD` measures this build side by side with another warpforge executable (the
//! previous release): each workload's runs alternate between the two, so that a slow spell
//! of the host falls on both, and the fastest of each is compared. On a shared host whose
//! speed moves by tens of percent from minute to minute, benchmarks of the two builds taken
//! one after the other compare the host's moments more than the builds.

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use warpforge_model::config::GpuConfig;
use warpforge_workloads::Size;

use crate::bench_stats::{median, median_interval};

#[derive(Args)]
pub struct BenchArgs {
    /// Workload name, or `all`.
    #[arg(long, default_value = "all")]
    pub(crate) workload: String,
    #[arg(long, default_value = "gtx480")]
    pub(crate) config: String,
    #[arg(long, default_value = "default")]
    pub(crate) size: Size,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) overrides: Vec<String>,
    /// Write the measurements as JSON.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Runs per workload; the fastest is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) repeat: u32,
    /// Measure the runs as a default `warpforge run` does them: recording the port traffic
    /// of every unit instance for co-simulation (the co-simulation itself is left out).
    #[arg(long)]
    pub(crate) record_traces: bool,
    /// Measure what recording costs: each workload alternately without and with recording
    /// (`--repeat` runs of each, fastest kept), and the time recording adds.
    #[arg(long, conflicts_with = "record_traces")]
    pub(crate) recording_overhead: bool,
    /// Compare with another warpforge executable (e.g. the previous release's): each
    /// workload's runs alternate between it and this one (`--repeat` each, fastest kept).
    /// Workloads it does not have are skipped and named; any other failure of it is an
    /// error.
    #[arg(long, value_name = "EXE", conflicts_with = "recording_overhead")]
    pub(crate) against: Option<PathBuf>,
    /// Count the host instructions each run executes inside its kernel launches (valgrind's
    /// callgrind) instead of timing it: deterministic whatever the host's load, so one run
    /// per workload and build, two at a time; each run takes about 50 times as long as a
    /// timed one. With --against, both builds are counted; with --recording-overhead, the
    /// runs without and with recording.
    #[arg(long)]
    pub(crate) host_instructions: bool,
}

/// What a build's `run` says of a workload it does not have (`--against` skips those).
pub(crate) const UNKNOWN_WORKLOAD: &str = "unknown workload";

/// What one child run reports.
pub(crate) struct RunFigures {
    pub(crate) cycles: f64,
    pub(crate) warp_instructions: f64,
    /// Host seconds spent inside kernel launches.
    pub(crate) seconds: f64,
    peak_rss_bytes: f64,
    /// Unit port events the run recorded for co-simulation (0 unless `--record-traces`).
    recorded_trace_events: u64,
    pub(crate) verified: bool,
}

/// Run one workload in a child process and read back its JSON.
fn run_once(exe: &Path, tmp: &Path, name: &str, a: &BenchArgs, record: bool) -> Result<RunFigures> {
    let json = tmp.join(format!("{name}.json"));
    run_child(run_command(exe, name, a, record, &json), name, &json)
}

/// The child run of workload `name` (`exe run --threads 1 ...`), its JSON written to `json`.
pub(crate) fn run_command(
    exe: &Path,
    name: &str,
    a: &BenchArgs,
    record: bool,
    json: &Path,
) -> Command {
    let _ = std::fs::remove_file(json);
    let mut cmd = Command::new(exe);
    cmd.args([
        "run",
        "--quiet",
        "--threads",
        "1",
        "--workload",
        name,
        "--config",
        &a.config,
    ])
    .args(["--size", &a.size.to_string()])
    .arg("--no-compare")
    .arg("--json")
    .arg(json);
    cmd.arg(if record {
        "--record-only"
    } else {
        "--no-cosim"
    });
    for o in &a.overrides {
        cmd.args(["--set", o]);
    }
    cmd
}

/// Runs `cmd` (a [`run_command`] of workload `name`, maybe under a wrapper) and reads the
/// figures from its JSON.
pub(crate) fn run_child(mut cmd: Command, name: &str, json: &Path) -> Result<RunFigures> {
    // The child's errors are kept for the report (a build compared with `--against` that
    // lacks a workload says so here, and the workload is skipped quietly).
    let out = cmd
        .stderr(std::process::Stdio::piped())
        .output()
        .with_context(|| format!("cannot run {}", cmd.get_program().to_string_lossy()))?;
    if !out.status.success() && !json.exists() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!("workload {name} failed to run: {}", err.trim());
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json)?)?;
    let result = &doc["results"][0];
    let launches = result["launches"].as_array().cloned().unwrap_or_default();
    let sum = |k: &str| {
        launches
            .iter()
            .map(|l| l[k].as_f64().unwrap_or(0.0))
            .sum::<f64>()
    };
    Ok(RunFigures {
        cycles: sum("cycles"),
        warp_instructions: sum("warp_instructions"),
        // With recording, until the recorders are handed over (before 2026-11-27's fifth
        // session, the wait for a thread encoding the traces beside the simulation).
        seconds: sum("wall_seconds") + result["trace_finish_seconds"].as_f64().unwrap_or(0.0),
        peak_rss_bytes: doc["peak_rss_bytes"].as_f64().unwrap_or(0.0),
        recorded_trace_events: doc["recorded_trace_events"].as_u64().unwrap_or(0),
        verified: result["verified"].as_bool().unwrap_or(false) && result["error"].is_null(),
    })
}

#[derive(Debug, Serialize)]
struct Measurement {
    workload: String,
    cycles: u64,
    warp_instructions: u64,
    sim_seconds: f64,
    cycles_per_second: f64,
    warp_instructions_per_second: f64,
    peak_rss_mib: f64,
    /// Unit port events recorded per run (0 unless `--record-traces`).
    recorded_trace_events: u64,
    verified: bool,
}

pub fn bench(a: &BenchArgs) -> Result<u8> {
    // Bad names and configurations are reported once, here, not by every child run.
    let names: Vec<&str> = crate::select_workloads(&a.workload)?
        .iter()
        .map(|w| w.name())
        .collect();
    let cfg = GpuConfig::preset(&a.config, &a.overrides)?;
    let exe = std::env::current_exe().context("cannot locate the warpforge executable")?;
    let tmp = std::env::temp_dir().join(format!("warpforge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    if a.host_instructions {
        let r = crate::bench_instructions::host_instructions(&exe, &tmp, &names, a);
        let _ = std::fs::remove_dir_all(&tmp);
        return r;
    }
    if a.recording_overhead || a.against.is_some() {
        let r = match &a.against {
            Some(old) => against(old, &exe, &tmp, &names, a),
            None => recording_overhead(&exe, &tmp, &names, a),
        };
        let _ = std::fs::remove_dir_all(&tmp);
        return r;
    }
    let mut rows = Vec::new();
    let mut ms = Vec::new();
    for name in &names {
        let mut best: Option<RunFigures> = None;
        for _ in 0..a.repeat {
            let run = run_once(&exe, &tmp, name, a, a.record_traces)?;
            if let Some(b) = &best {
                if (b.cycles, b.warp_instructions) != (run.cycles, run.warp_instructions) {
                    bail!("workload {name}: repeated runs simulated different results");
                }
            }
            if best.as_ref().is_none_or(|b| run.seconds < b.seconds) {
                best = Some(run);
            }
        }
        let RunFigures {
            cycles,
            warp_instructions: insts,
            seconds: secs,
            peak_rss_bytes,
            recorded_trace_events,
            verified,
        } = best.expect("repeat >= 1");
        let m = Measurement {
            workload: name.to_string(),
            cycles: cycles as u64,
            warp_instructions: insts as u64,
            sim_seconds: secs,
            cycles_per_second: cycles / secs.max(1e-9),
            warp_instructions_per_second: insts / secs.max(1e-9),
            peak_rss_mib: peak_rss_bytes / (1 << 20) as f64,
            recorded_trace_events,
            verified,
        };
        eprintln!("{name}: {:.0} cycles/s", m.cycles_per_second);
        rows.push(vec![
            m.workload.clone(),
            String::new(),
            m.cycles.to_string(),
            m.warp_instructions.to_string(),
            format!("{:.2}", m.sim_seconds),
            format!("{:.0}", m.cycles_per_second),
            format!("{:.0}", m.warp_instructions_per_second),
            format!("{:.1}", m.peak_rss_mib),
            if m.verified {
                "yes".into()
            } else {
                "NO".into()
            },
        ]);
        ms.push(m);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let median = median(ms.iter().map(|m| m.cycles_per_second).collect());
    let peak = ms.iter().map(|m| m.peak_rss_mib).fold(0.0, f64::max);
    print!(
        "{}",
        crate::report::table(
            &[
                "workload",
                "",
                "cycles",
                "warp_insts",
                "sim_s",
                "cycles/s",
                "warp_insts/s",
                "peak_MiB",
                "verified"
            ],
            &rows
        )
    );
    println!(
        "\nmedian {:.0} simulated cycles/s ({} SMs, {} size, {}); peak memory {:.1} MiB",
        median,
        cfg.sm.count,
        a.size,
        mode_label(a.record_traces),
        peak
    );
    if let Some(p) = &a.json {
        let doc = serde_json::json!({"config": a.config, "size": a.size.to_string(), "recording_traces": a.record_traces, "median_cycles_per_second": median, "peak_rss_mib": peak, "workloads": ms});
        write_json(p, &doc)?;
    }
    Ok(if ms.iter().all(|m| m.verified) { 0 } else { 1 })
}

#[derive(Debug, Serialize)]
struct Overhead {
    workload: String,
    cycles: u64,
    /// Fastest run without recording, and with it (seconds inside the launches).
    sim_seconds: f64,
    recording_seconds: f64,
    /// What recording adds, in percent: the median over the alternating pairs of runs of
    /// the recording run's time over the plain run's, minus 1.
    overhead_percent: f64,
    /// `recording_seconds / sim_seconds - 1`, in percent (the fastest runs of each).
    fastest_overhead_percent: f64,
    /// Each alternating pair's overhead, in percent, in run order.
    pairs_percent: Vec<f64>,
    verified: bool,
}

/// `--recording-overhead`: per workload, runs without and with recording alternate (so
/// that a slow spell of the host falls on both); the overhead is the median of the pairs'
/// ratios, and the fastest of each is kept too.
fn recording_overhead(exe: &Path, tmp: &Path, names: &[&str], a: &BenchArgs) -> Result<u8> {
    let mut rows = Vec::new();
    let mut all = Vec::new();
    for name in names {
        let runs = alternate(tmp, name, a, [(exe, false), (exe, true)])?;
        let [plain, rec] = &runs.fastest;
        if (plain.cycles, plain.warp_instructions) != (rec.cycles, rec.warp_instructions) {
            bail!("workload {name}: recording changed the simulated results");
        }
        let o = Overhead {
            workload: name.to_string(),
            cycles: plain.cycles as u64,
            sim_seconds: plain.seconds,
            recording_seconds: rec.seconds,
            overhead_percent: runs.median_pair_change(),
            fastest_overhead_percent: runs.fastest_change(),
            pairs_percent: runs.pair_changes(),
            verified: plain.verified && rec.verified,
        };
        eprintln!("{name}: recording {:+.1}%", o.overhead_percent);
        rows.push(vec![
            o.workload.clone(),
            o.cycles.to_string(),
            format!("{:.3}", o.sim_seconds),
            format!("{:.3}", o.recording_seconds),
            format!("{:+.1}%", o.fastest_overhead_percent),
            format!("{:+.1}%", o.overhead_percent),
            if o.verified { "yes" } else { "NO" }.into(),
        ]);
        all.push(o);
    }
    let median_pairs = median(all.iter().map(|o| o.overhead_percent).collect());
    let median_fastest = median(all.iter().map(|o| o.fastest_overhead_percent).collect());
    let (low, high) = median_interval(all.iter().map(|o| &o.pairs_percent[..]));
    print!(
        "{}",
        crate::report::table(
            &[
                "workload",
                "cycles",
                "sim_s",
                "recording_s",
                "fastest",
                "pairs",
                "verified"
            ],
            &rows
        )
    );
    println!(
        "\nmedian recording overhead {median_pairs:+.1}% (per workload the median of {} \
         alternating pairs' ratios; fastest run of each: {median_fastest:+.1}%)\n\
         95% interval of that median {low:+.1}% .. {high:+.1}% (bootstrap over each workload's \
         pairs: how far this host's noise lets the figure be trusted)",
        a.repeat
    );
    if let Some(p) = &a.json {
        let doc = serde_json::json!({"config": a.config, "size": a.size.to_string(),
            "median_overhead_percent": median_pairs,
            "median_fastest_overhead_percent": median_fastest,
            "median_overhead_interval_percent": [low, high], "workloads": all});
        write_json(p, &doc)?;
    }
    Ok(if all.iter().all(|o| o.verified) { 0 } else { 1 })
}

/// One way of running a workload: the executable, and whether it records traces.
type Variant<'a> = (&'a Path, bool);

/// The runs of two variants of one workload, alternating.
struct Alternated {
    /// Each variant's fastest run.
    fastest: [RunFigures; 2],
    /// Per pair of consecutive runs, the second variant's time over the first's.
    ratios: Vec<f64>,
}

impl Alternated {
    /// The median of the per-pair ratios, minus 1, in percent. On a host whose speed moves
    /// by tens of percent from one second to the next, two runs a second apart see nearly
    /// the same host, so the ratio within a pair is steadier than the ratio of two fastest
    /// runs that may come from different moments.
    fn median_pair_change(&self) -> f64 {
        median(self.pair_changes())
    }

    /// Each pair's second-variant time over its first's, minus 1, in percent.
    fn pair_changes(&self) -> Vec<f64> {
        self.ratios.iter().map(|r| 100.0 * (r - 1.0)).collect()
    }

    /// [`Self::median_pair_change`] in speed: the median of the pairs' first-variant time
    /// over the second's, minus 1, in percent (above 0, the second variant is faster).
    fn median_pair_speedup(&self) -> f64 {
        median(self.pair_speedups())
    }

    /// Each pair's first-variant time over its second's, minus 1, in percent.
    fn pair_speedups(&self) -> Vec<f64> {
        self.ratios
            .iter()
            .map(|r| 100.0 * (1.0 / r.max(1e-9) - 1.0))
            .collect()
    }

    /// The fastest second-variant run over the fastest first-variant one, minus 1, in percent.
    fn fastest_change(&self) -> f64 {
        let [a, b] = &self.fastest;
        100.0 * (b.seconds / a.seconds.max(1e-9) - 1.0)
    }
}

/// Runs workload `name` `--repeat` times in each of two variants, alternating between them
/// run by run (so that a slow spell of the host falls on both).
fn alternate(tmp: &Path, name: &str, a: &BenchArgs, variants: [Variant; 2]) -> Result<Alternated> {
    let mut best: [Option<RunFigures>; 2] = [None, None];
    let mut ratios = Vec::new();
    for _ in 0..a.repeat {
        let mut pair = [0.0; 2];
        for (((exe, record), slot), t) in variants.iter().zip(best.iter_mut()).zip(&mut pair) {
            let run = run_once(exe, tmp, name, a, *record)?;
            *t = run.seconds;
            if slot.as_ref().is_none_or(|b| run.seconds < b.seconds) {
                *slot = Some(run);
            }
        }
        ratios.push(pair[1] / pair[0].max(1e-9));
    }
    let [Some(first), Some(second)] = best else {
        bail!("--repeat must be at least 1")
    };
    Ok(Alternated {
        fastest: [first, second],
        ratios,
    })
}

#[derive(Debug, Serialize)]
struct Comparison {
    workload: String,
    /// Simulated cycles of each build (they differ only where the model's timing changed).
    cycles_against: u64,
    cycles: u64,
    /// Fastest run of each build, cycles per second.
    against_cycles_per_second: f64,
    cycles_per_second: f64,
    /// `cycles_per_second / against_cycles_per_second - 1`, in percent: above 0, this build
    /// is faster.
    change_percent: f64,
    /// The same change from the alternating pairs of runs: the median of the pairs' speed
    /// ratios, minus 1, in percent.
    pairs_change_percent: f64,
    /// Each alternating pair's speed change, in percent, in run order.
    pairs_percent: Vec<f64>,
    verified: bool,
}

/// `--against OLD`: per workload, runs of OLD and of this build alternate; the fastest of
/// each is compared.
fn against(old: &Path, exe: &Path, tmp: &Path, names: &[&str], a: &BenchArgs) -> Result<u8> {
    if !old.is_file() {
        bail!("--against {}: no such executable", old.display());
    }
    let mut rows = Vec::new();
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    for name in names {
        // A workload the old build does not have fails there at once with "unknown
        // workload": skip it. Any other failure of the old build is an error, not a skip.
        // (The probe run also warms the host's caches for both builds; it is not counted.)
        match run_once(old, tmp, name, a, a.record_traces) {
            Ok(_) => {}
            Err(e) if format!("{e:#}").contains(UNKNOWN_WORKLOAD) => {
                skipped.push(*name);
                continue;
            }
            Err(e) => return Err(e.context(format!("--against {}: its run failed", old.display()))),
        }
        let runs = alternate(
            tmp,
            name,
            a,
            [(old, a.record_traces), (exe, a.record_traces)],
        )?;
        let [then, now] = &runs.fastest;
        let rate = |f: &RunFigures| f.cycles / f.seconds.max(1e-9);
        let c = Comparison {
            workload: name.to_string(),
            cycles_against: then.cycles as u64,
            cycles: now.cycles as u64,
            against_cycles_per_second: rate(then),
            cycles_per_second: rate(now),
            change_percent: 100.0 * (rate(now) / rate(then) - 1.0),
            pairs_change_percent: runs.median_pair_speedup(),
            pairs_percent: runs.pair_speedups(),
            verified: now.verified,
        };
        eprintln!("{name}: {:+.1}%", c.change_percent);
        rows.push(vec![
            c.workload.clone(),
            c.cycles_against.to_string(),
            c.cycles.to_string(),
            format!("{:.0}", c.against_cycles_per_second),
            format!("{:.0}", c.cycles_per_second),
            format!("{:+.1}%", c.change_percent),
            format!("{:+.1}%", c.pairs_change_percent),
            if c.verified { "yes" } else { "NO" }.into(),
        ]);
        all.push(c);
    }
    if all.is_empty() {
        bail!(
            "--against {}: it ran none of the selected workloads",
            old.display()
        );
    }
    let median_then = median(all.iter().map(|c| c.against_cycles_per_second).collect());
    let median_now = median(all.iter().map(|c| c.cycles_per_second).collect());
    let median_change = median(all.iter().map(|c| c.change_percent).collect());
    let median_pairs = median(all.iter().map(|c| c.pairs_change_percent).collect());
    let (low, high) = median_interval(all.iter().map(|c| &c.pairs_percent[..]));
    print!(
        "{}",
        crate::report::table(
            &[
                "workload",
                "cycles (against)",
                "cycles",
                "cycles/s (against)",
                "cycles/s",
                "change",
                "pairs",
                "verified"
            ],
            &rows
        )
    );
    println!(
        "\nmedian {median_then:.0} -> {median_now:.0} simulated cycles/s ({:+.1}%); median \
         per-workload change {median_change:+.1}% ({}, fastest of {} runs each, alternating); \
         median of the pairs' ratios {median_pairs:+.1}% (95% interval {low:+.1}% .. \
         {high:+.1}%, bootstrap over each workload's pairs)",
        100.0 * (median_now / median_then.max(1e-9) - 1.0),
        mode_label(a.record_traces),
        a.repeat
    );
    if !skipped.is_empty() {
        println!("not in {}: {}", old.display(), skipped.join(", "));
    }
    let differ: Vec<&str> = all
        .iter()
        .filter(|c| c.cycles != c.cycles_against)
        .map(|c| c.workload.as_str())
        .collect();
    if !differ.is_empty() {
        println!(
            "simulated cycles differ (a change of the timing model): {}",
            differ.join(", ")
        );
    }
    if let Some(p) = &a.json {
        let doc = serde_json::json!({"config": a.config, "size": a.size.to_string(),
            "against": old.display().to_string(), "recording_traces": a.record_traces,
            "median_against_cycles_per_second": median_then,
            "median_cycles_per_second": median_now,
            "median_change_percent": median_change,
            "median_pairs_change_percent": median_pairs,
            "median_pairs_change_interval_percent": [low, high],
            "skipped": skipped, "workloads": all});
        write_json(p, &doc)?;
    }
    Ok(if all.iter().all(|c| c.verified) { 0 } else { 1 })
}

/// Writes a measurement document to `--json`'s path.
pub(crate) fn write_json(p: &Path, doc: &serde_json::Value) -> Result<()> {
    std::fs::write(p, serde_json::to_string_pretty(doc)?)
        .with_context(|| format!("cannot write {}", p.display()))
}

/// What the timed runs include, for the summary line.
fn mode_label(record_traces: bool) -> &'static str {
    if record_traces {
        "recording every unit's port traces"
    } else {
        "simulation only"
    }
}
