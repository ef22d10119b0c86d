//! `warpforge report estimates`: one Markdown report, with SVG charts, of what every
//! generated unit costs — area, timing, FPGA resources and power at its standard parameter
//! sets, how that scales with each parameter its declaration sweeps, and the seeds' own
//! cost figures beside ours.
//!
//! Where the figures come from: the checked-in baselines (`baselines/synth-<target>.json`,
//! each entry measured with the tool versions it names) for every standard set whose RTL
//! still hashes as recorded; `--measure` measures the sets a baseline lacks or whose RTL
//! changed (not place and route: that is `synth --all --pnr --accept-baseline`, tens of
//! minutes). The sweeps and the seed comparisons run the generic Yosys flow now (seconds
//! per point), reusing a generic baseline entry of the same RTL; power runs the unit's
//! co-simulation and the osu018 power model now. A unit joins the report by registration
//! alone: its standard sets, its `scaling` sweeps and its `seed_costs` are part of its
//! declaration.

use crate::charts::{self, BarSeries, LineData};
use crate::power_cmd::{self, Stimulus};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use warpforge_gen::baseline::{self, Baseline, Target};
use warpforge_gen::pnr::ShellMode;
use warpforge_gen::synth::{self, Family};
use warpforge_gen::GeneratedUnit;
use warpforge_model::units::contract::{CostFigure, Params, UnitDesc};

#[derive(Subcommand)]
pub enum ReportCmd {
    /// Area, timing, FPGA resources and power of every generated unit at its standard
    /// parameter sets, their scaling with each swept parameter, and the seeds' cost figures
    /// beside ours: Markdown plus SVG charts.
    Estimates(EstimatesArgs),
}

#[derive(Args)]
pub struct EstimatesArgs {
    /// Folder of the report: REPORT.md, report.json and the SVG charts.
    #[arg(long, default_value = "warpforge-report")]
    out: PathBuf,
    /// Only these units (repeatable; default: every unit with a template).
    #[arg(long = "unit", value_name = "UNIT")]
    units: Vec<String>,
    /// Folder of the checked-in baselines (`synth-<target>.json`).
    #[arg(long, default_value = "baselines")]
    baselines: PathBuf,
    /// Measure now what the baselines lack or what changed since (generic, osu018, ecp5,
    /// ice40 and xilinx figures; sets above 32,768 state bits are left out): minutes to
    /// an hour. Without it such a figure is shown as missing, with the command that
    /// measures it.
    #[arg(long)]
    measure: bool,
    /// Leave out the parameter sweeps (generic Yosys runs, a few minutes in all).
    #[arg(long)]
    no_sweeps: bool,
    /// Leave out the power estimates (a co-simulation and an osu018 mapping per unit at
    /// its default set; a mapping is reused from --synth-dir when its RTL is unchanged).
    #[arg(long)]
    no_power: bool,
    /// Cycles of random (and idle) stimulus of each power estimate.
    #[arg(long, default_value_t = 20_000)]
    power_cycles: u64,
    /// Cycles of each power estimate's gate-level simulation (per-net activity, and the
    /// netlist checked against the model); 0: one mean rate per kind of net.
    #[arg(long, default_value_t = 2_000)]
    gate_cycles: u64,
    /// Where the osu018 and place-and-route files go (`<unit>/<parameters>/`).
    #[arg(long, default_value = "warpforge-synth")]
    synth_dir: PathBuf,
}

pub fn report(cmd: &ReportCmd) -> Result<u8> {
    match cmd {
        ReportCmd::Estimates(a) => estimates(a),
    }
}

/// The targets of the report, in column order, and what each is called in it.
const TARGETS: [(Target, &str); 7] = [
    (Target::Generic, "Yosys generic gates"),
    (Target::Osu018, "OSU 0.18 um cells + OpenSTA"),
    (Target::Fpga(Family::Ecp5), "ECP5 (synth_ecp5)"),
    (Target::Fpga(Family::Ice40), "iCE40 (synth_ice40)"),
    (Target::Fpga(Family::Xilinx), "Xilinx 7 (synth_xilinx)"),
    (Target::Pnr(Family::Ecp5), "ECP5 after nextpnr"),
    (Target::Pnr(Family::Ice40), "iCE40 after nextpnr"),
];

/// The figures of one set for one target, and where they come from.
#[derive(Debug, Clone, Serialize)]
struct Cell {
    /// `baseline`, `measured now`, `stale` (the RTL changed since the baseline),
    /// `missing` (no entry) or `error`.
    source: &'static str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    figures: BTreeMap<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl Cell {
    fn num(&self, k: &str) -> Option<f64> {
        self.figures.get(k).and_then(Value::as_f64)
    }
    fn usable(&self) -> bool {
        matches!(self.source, "baseline" | "measured now") && !self.figures.is_empty()
    }
}

#[derive(Debug, Serialize)]
struct SetRow {
    unit: String,
    params: String,
    default: bool,
    rtl_hash: String,
    state_bits: u64,
    /// Per target name (`generic`, `osu018`, `ecp5`, `ecp5-pnr`...).
    targets: BTreeMap<String, Cell>,
}

impl SetRow {
    fn cell(&self, t: Target) -> Option<&Cell> {
        self.targets.get(&t.name()).filter(|c| c.usable())
    }
    fn num(&self, t: Target, k: &str) -> Option<f64> {
        self.cell(t)?.num(k)
    }
}

#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
struct GenericFigures {
    flops: u64,
    cells: u64,
    transistors: u64,
}

impl GenericFigures {
    fn get(&self, f: CostFigure) -> f64 {
        match f {
            CostFigure::Flops => self.flops as f64,
            CostFigure::Transistors => self.transistors as f64,
            CostFigure::Nand2Eq => self.transistors as f64 / 4.0,
        }
    }
}

#[derive(Debug, Serialize)]
struct Sweep {
    unit: String,
    param: String,
    /// The other parameters (defaults, with the sweep's base overrides).
    base: String,
    points: Vec<(u64, GenericFigures)>,
    /// Least-squares slope of log(transistors) over log(parameter): the exponent of the
    /// growth (1: linear).
    transistor_exponent: Option<f64>,
    flop_exponent: Option<f64>,
    chart: Option<String>,
}

#[derive(Debug, Serialize)]
struct SeedRow {
    unit: String,
    label: String,
    figure: String,
    ours: f64,
    seed: f64,
    ratio: f64,
    seed_basis: String,
    ours_basis: String,
}

#[derive(Debug, Serialize)]
struct PowerRow {
    unit: String,
    params: String,
    clock_mhz: f64,
    random_dynamic_mw: f64,
    random_total_mw: f64,
    idle_total_mw: f64,
    leakage_uw: f64,
    /// The estimate with one mean rate per kind of net (what OpenSTA is given).
    mean_rate_total_mw: f64,
    /// Our mean-rate total over OpenSTA's.
    opensta_ratio: f64,
    /// The gate-level run's check of the netlist against the model (`PASS`, or why none).
    gate_check: String,
    activity_state: f64,
    stimulus: String,
}

#[derive(Debug, Serialize)]
struct Report {
    generator: String,
    warpforge: String,
    baselines: BTreeMap<String, Vec<String>>,
    sets: Vec<SetRow>,
    sweeps: Vec<Sweep>,
    seed_comparison: Vec<SeedRow>,
    power: Vec<PowerRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    power_errors: Vec<String>,
    charts: Vec<String>,
}

/// Generic figures by (unit, parameters), measured at most once per run: sweeps and seed
/// comparisons share points, and a generic baseline entry of the same RTL is reused, as is
/// an earlier report's measurement kept in `synth_dir/<unit>/<parameters>/generic.json`
/// (keyed by the RTL's hash and the flow), so a second report costs seconds.
struct GenericMemo<'a> {
    baseline: Option<&'a Baseline>,
    synth_dir: &'a Path,
    done: HashMap<(String, String), GenericFigures>,
}

/// An earlier generic measurement of the same RTL with the same flow.
#[derive(Serialize, serde::Deserialize)]
struct GenericCache {
    rtl_hash: String,
    flow: Vec<String>,
    yosys: String,
    figures: GenericFigures,
}

impl GenericMemo<'_> {
    fn get(&mut self, desc: &'static UnitDesc, p: &Params) -> Result<GenericFigures> {
        let key = (desc.name.to_string(), p.to_string());
        if let Some(f) = self.done.get(&key) {
            return Ok(*f);
        }
        let g = warpforge_gen::generate(desc, p)?;
        let yosys = warpforge_gen::tools::yosys_version()?;
        // A baseline entry measured by another Yosys is not this run's figure.
        let from_baseline = self
            .baseline
            .filter(|b| b.tools.contains(&yosys))
            .and_then(|b| b.find(desc.name, &key.1))
            .filter(|e| e.rtl_hash == g.manifest.content_hash)
            .and_then(|e| {
                let n = |k: &str| e.figures.get(k).and_then(Value::as_u64);
                Some(GenericFigures {
                    flops: n("flops")?,
                    cells: n("cells")?,
                    transistors: n("transistors")?,
                })
            });
        let cache_path = self
            .synth_dir
            .join(warpforge_gen::params_dir(desc, p))
            .join("generic.json");
        let flow = synth::flow(&g.manifest.top);
        let cached = || {
            let c: GenericCache =
                serde_json::from_str(&std::fs::read_to_string(&cache_path).ok()?).ok()?;
            (c.rtl_hash == g.manifest.content_hash && c.flow == flow && c.yosys == yosys)
                .then_some(c.figures)
        };
        let f = match from_baseline.or_else(cached) {
            Some(f) => f,
            None => {
                eprintln!("estimates: yosys generic synthesis of {} ({p})", desc.name);
                let r = synth::synth(&g).with_context(|| format!("{} ({p})", desc.name))?;
                let f = GenericFigures {
                    flops: r.flops,
                    cells: r.total_cells,
                    transistors: r.transistors,
                };
                let c = GenericCache {
                    rtl_hash: g.manifest.content_hash.clone(),
                    flow,
                    yosys: yosys.clone(),
                    figures: f,
                };
                // A cache that cannot be written costs a re-run next time, nothing more.
                if let Some(d) = cache_path.parent() {
                    let _ = std::fs::create_dir_all(d);
                }
                let _ = std::fs::write(&cache_path, serde_json::to_string_pretty(&c)?);
                f
            }
        };
        self.done.insert(key, f);
        Ok(f)
    }
}

fn estimates(a: &EstimatesArgs) -> Result<u8> {
    let units: Vec<&'static UnitDesc> = if a.units.is_empty() {
        warpforge_gen::units_with_templates()
    } else {
        a.units
            .iter()
            .map(|u| warpforge_gen::find_unit(u).map_err(anyhow::Error::from))
            .collect::<Result<_>>()?
    };
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;

    // A mistyped folder would give a report of nothing but "no baseline file".
    if !a.baselines.is_dir() {
        anyhow::bail!(
            "--baselines {}: no such folder (the checked-in ones are `baselines/` of the repository)",
            a.baselines.display()
        );
    }
    let mut baselines: BTreeMap<String, Baseline> = BTreeMap::new();
    for (t, _) in TARGETS {
        let path = a.baselines.join(format!("synth-{}.json", t.name()));
        if path.exists() {
            baselines.insert(t.name(), Baseline::read(&path).map_err(anyhow::Error::msg)?);
        }
    }

    let sets = standard_sets(a, &units, &baselines)?;
    let mut memo = GenericMemo {
        baseline: baselines.get("generic"),
        synth_dir: &a.synth_dir,
        done: HashMap::new(),
    };
    let sweeps = if a.no_sweeps {
        vec![]
    } else {
        sweeps(&units, &mut memo)?
    };
    let seed_comparison = seed_rows(&units, &mut memo)?;
    let (power, power_errors) = if a.no_power {
        (vec![], vec![])
    } else {
        power_rows(a, &units)
    };
    let mut report = Report {
        generator: warpforge_gen::generator_version(),
        warpforge: format!("warpforge {}", env!("CARGO_PKG_VERSION")),
        baselines: baselines
            .iter()
            .map(|(k, b)| (k.clone(), b.tools.clone()))
            .collect(),
        sets,
        sweeps,
        seed_comparison,
        power,
        power_errors,
        charts: vec![],
    };
    report.charts = draw_charts(&a.out, &mut report)?;
    let md = markdown(&report, a);
    let md_path = a.out.join("REPORT.md");
    std::fs::write(&md_path, md).with_context(|| format!("cannot write {}", md_path.display()))?;
    let json_path = a.out.join("report.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    println!(
        "wrote {} ({} sets, {} sweeps, {} seed comparisons, {} power estimates, {} charts) and {}",
        md_path.display(),
        report.sets.len(),
        report.sweeps.len(),
        report.seed_comparison.len(),
        report.power.len(),
        report.charts.len(),
        json_path.display()
    );
    Ok(0)
}

/// Every standard set of every unit, with each target's figures from its baseline (or
/// measured now with `--measure`).
fn standard_sets(
    a: &EstimatesArgs,
    units: &[&'static UnitDesc],
    baselines: &BTreeMap<String, Baseline>,
) -> Result<Vec<SetRow>> {
    let mut rows = vec![];
    for &desc in units {
        let default = desc.params::<&str>(&[]).map_err(anyhow::Error::msg)?;
        for p in desc.standard_params() {
            let g = warpforge_gen::generate(desc, &p)?;
            let state_bits = baseline::state_bits(&g);
            let mut targets = BTreeMap::new();
            for (t, _) in TARGETS {
                let cell = figures_of(a, &g, t, baselines.get(&t.name()), state_bits);
                targets.insert(t.name(), cell);
            }
            rows.push(SetRow {
                unit: desc.name.into(),
                params: p.to_string(),
                default: p == default,
                rtl_hash: g.manifest.content_hash.clone(),
                state_bits,
                targets,
            });
        }
    }
    Ok(rows)
}

fn figures_of(
    a: &EstimatesArgs,
    g: &GeneratedUnit,
    t: Target,
    b: Option<&Baseline>,
    state_bits: u64,
) -> Cell {
    let entry = b.and_then(|b| b.find(g.module(), &g.params.to_string()));
    let cell = |source, figures, error| Cell {
        source,
        figures,
        error,
    };
    let found = match entry {
        Some(e) if e.rtl_hash == g.manifest.content_hash => {
            return cell("baseline", e.figures.clone(), e.error.clone());
        }
        Some(_) => "stale",
        None => "missing",
    };
    let measurable = !matches!(t, Target::Pnr(_)) && state_bits <= baseline::HEAVY_STATE_BITS;
    if !(a.measure && measurable) {
        return cell(found, BTreeMap::new(), None);
    }
    eprintln!(
        "estimates: measuring {} ({}) for {}",
        g.module(),
        g.params,
        t.name()
    );
    let dir = a
        .synth_dir
        .join(warpforge_gen::params_dir(g.desc, &g.params));
    match baseline::measure(g, t, ShellMode::Auto, &dir, &|_| {}) {
        Ok(m) => cell(
            "measured now",
            m.figures()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            None,
        ),
        Err(e) => cell("error", BTreeMap::new(), Some(e.to_string())),
    }
}

fn sweeps(units: &[&'static UnitDesc], memo: &mut GenericMemo) -> Result<Vec<Sweep>> {
    let mut out = vec![];
    for &desc in units {
        for s in desc.scaling {
            let mut points = vec![];
            for &v in s.values {
                let mut set = s.base.to_vec();
                set.push((s.param, v));
                let p = desc.params(&set).map_err(anyhow::Error::msg)?;
                let f = memo.get(desc, &p)?;
                points.push((v, f));
            }
            let base = desc.params(s.base).map_err(anyhow::Error::msg)?;
            let base: Vec<String> = base
                .iter()
                .filter(|(n, _)| *n != s.param)
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            let exp = |f: fn(&GenericFigures) -> u64| {
                slope(
                    &points
                        .iter()
                        .map(|(x, g)| (*x as f64, f(g) as f64))
                        .collect::<Vec<_>>(),
                )
            };
            out.push(Sweep {
                unit: desc.name.into(),
                param: s.param.into(),
                base: base.join(","),
                transistor_exponent: exp(|g| g.transistors),
                flop_exponent: exp(|g| g.flops),
                points,
                chart: None,
            });
        }
    }
    Ok(out)
}

/// Least-squares slope of `ln y` over `ln x` (points with a non-positive value left out).
fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

fn seed_rows(units: &[&'static UnitDesc], memo: &mut GenericMemo) -> Result<Vec<SeedRow>> {
    let mut out = vec![];
    for &desc in units {
        for c in desc.seed_costs {
            let p = desc.params(c.params).map_err(anyhow::Error::msg)?;
            let f = memo.get(desc, &p)?;
            let (ours, ours_basis) = match c.relative_to {
                None => (
                    f.get(c.figure),
                    format!("{} at {p}, Yosys generic flow", c.figure.name()),
                ),
                Some(r) => {
                    let q = desc.params(r).map_err(anyhow::Error::msg)?;
                    let g = memo.get(desc, &q)?;
                    let den = g.get(c.figure);
                    (
                        if den != 0.0 {
                            f.get(c.figure) / den
                        } else {
                            f64::NAN
                        },
                        format!("{} at {p} over {q}, Yosys generic flow", c.figure.name()),
                    )
                }
            };
            out.push(SeedRow {
                unit: desc.name.into(),
                label: c.label.into(),
                figure: if c.relative_to.is_some() {
                    format!("ratio of {}", c.figure.name())
                } else {
                    c.figure.name().into()
                },
                ours,
                seed: c.seed,
                // NaN (shown as "–") when either side is 0.
                ratio: if c.seed != 0.0 {
                    ours / c.seed
                } else {
                    f64::NAN
                },
                seed_basis: c.seed_basis.into(),
                ours_basis,
            });
        }
    }
    Ok(out)
}

/// Power at each unit's default set: random and idle stimulus. A unit whose estimate fails
/// (a tool missing, say) is listed with the error; the rest of the report still comes.
fn power_rows(a: &EstimatesArgs, units: &[&'static UnitDesc]) -> (Vec<PowerRow>, Vec<String>) {
    let mut rows = vec![];
    let mut errors = vec![];
    if let Err(e) = power_cmd::check_tools() {
        errors.push(format!("no power estimates: {e:#}"));
        return (rows, errors);
    }
    for &desc in units {
        let run = || -> Result<PowerRow> {
            let p = desc.params::<&str>(&[]).map_err(anyhow::Error::msg)?;
            let dir = a.synth_dir.join(warpforge_gen::params_dir(desc, &p));
            let random = power_cmd::estimate(
                desc,
                &p,
                &Stimulus::Random {
                    seed: 1,
                    cycles: a.power_cycles,
                },
                None,
                a.gate_cycles,
                &dir,
            )?;
            let idle = power_cmd::estimate(
                desc,
                &p,
                &Stimulus::Idle {
                    cycles: a.power_cycles,
                },
                None,
                a.gate_cycles,
                &dir,
            )?;
            Ok(PowerRow {
                unit: desc.name.into(),
                params: p.to_string(),
                clock_mhz: random.figures.clock_mhz,
                random_dynamic_mw: random.figures.dynamic_uw / 1000.0,
                random_total_mw: random.figures.total_uw / 1000.0,
                idle_total_mw: idle.figures.total_uw / 1000.0,
                leakage_uw: random.figures.leakage_uw,
                mean_rate_total_mw: random
                    .mean_rate
                    .as_ref()
                    .unwrap_or(&random.figures)
                    .total_uw
                    / 1000.0,
                opensta_ratio: random.opensta_ratio,
                gate_check: match &random.gate_level {
                    Some(g) if g.verdict.starts_with("PASS") => {
                        format!("matches ({} cycles)", g.cycles - 1)
                    }
                    Some(g) => g.verdict.clone(),
                    None => "not simulated".into(),
                },
                activity_state: random.measured.state,
                stimulus: random.stimulus,
            })
        };
        match run() {
            Ok(r) => rows.push(r),
            Err(e) => errors.push(format!("{}: {e:#}", desc.name)),
        }
    }
    (rows, errors)
}

/// The default set's row of each unit, in unit order.
fn defaults(r: &Report) -> Vec<&SetRow> {
    r.sets.iter().filter(|s| s.default).collect()
}

fn draw_charts(out: &Path, r: &mut Report) -> Result<Vec<String>> {
    let mut made = vec![];
    let defs = defaults(r);
    let names: Vec<String> = defs.iter().map(|s| s.unit.clone()).collect();
    let col =
        |t: Target, k: &str| -> Vec<Option<f64>> { defs.iter().map(|s| s.num(t, k)).collect() };
    // A chart that cannot be drawn (no values it can show, a write error) is left out
    // with a warning: the report's tables still come.
    let mut chart = |file: &str, draw: &dyn Fn(&Path) -> Result<()>| -> Result<()> {
        match draw(&out.join(file)) {
            Ok(()) => made.push(file.to_string()),
            Err(e) => eprintln!("estimates: chart {file} left out: {e:#}"),
        }
        Ok(())
    };
    let any = |v: &[Option<f64>]| v.iter().any(Option::is_some);

    let area = col(Target::Osu018, "area_um2");
    let transistors = col(Target::Generic, "transistors");
    if any(&area) || any(&transistors) {
        chart("area.svg", &|p| {
            charts::bars(
                p,
                "Area at default parameters (estimates)",
                "log scale",
                &names,
                &[
                    BarSeries {
                        name: "OSU 0.18 um cell area (um^2)".into(),
                        values: area.clone(),
                    },
                    BarSeries {
                        name: "transistors (Yosys generic, est.)".into(),
                        values: transistors.clone(),
                    },
                ],
                true,
                &[],
            )
        })?;
    }
    let series = |cols: &[(&str, Target, &str)]| -> Vec<BarSeries> {
        cols.iter()
            .map(|&(name, t, k)| BarSeries {
                name: name.into(),
                values: col(t, k),
            })
            .collect()
    };
    let has = |s: &[BarSeries]| s.iter().any(|x| any(&x.values));
    let fmax = series(&[
        ("OSU 0.18 um, OpenSTA", Target::Osu018, "fmax_mhz"),
        ("ECP5 after nextpnr", Target::Pnr(Family::Ecp5), "fmax_mhz"),
        (
            "iCE40 after nextpnr",
            Target::Pnr(Family::Ice40),
            "fmax_mhz",
        ),
    ]);
    if has(&fmax) {
        let targets = [
            ("250 MHz (OSU 0.18 um target)".to_string(), 250.0),
            ("100 MHz (ECP5 target)".to_string(), 100.0),
        ];
        let title = "Fmax at default parameters (estimates)";
        chart("fmax.svg", &|p| {
            charts::bars(p, title, "MHz", &names, &fmax, false, &targets)
        })?;
    }
    let fpga = series(&[
        ("ECP5 LUT4", Target::Fpga(Family::Ecp5), "luts"),
        ("ECP5 FF", Target::Fpga(Family::Ecp5), "ffs"),
        ("iCE40 LUT4", Target::Fpga(Family::Ice40), "luts"),
        ("Xilinx LUT", Target::Fpga(Family::Xilinx), "luts"),
    ]);
    if has(&fpga) {
        let title = "FPGA resources at default parameters (Yosys vendor flows)";
        chart("fpga.svg", &|p| {
            charts::bars(p, title, "cells (log scale)", &names, &fpga, true, &[])
        })?;
    }
    if !r.power.is_empty() {
        let pn: Vec<String> = r.power.iter().map(|p| p.unit.clone()).collect();
        let random: Vec<Option<f64>> = r.power.iter().map(|p| Some(p.random_total_mw)).collect();
        let idle: Vec<Option<f64>> = r.power.iter().map(|p| Some(p.idle_total_mw)).collect();
        let clock = r.power[0].clock_mhz;
        chart("power.svg", &|p| {
            charts::bars(
                p,
                &format!(
                    "Power at default parameters, OSU 0.18 um, {clock:.0} MHz (estimate, +/-2x)"
                ),
                "mW (log scale)",
                &pn,
                &[
                    BarSeries {
                        name: "random stimulus".into(),
                        values: random.clone(),
                    },
                    BarSeries {
                        name: "idle (clock + leakage)".into(),
                        values: idle.clone(),
                    },
                ],
                true,
                &[],
            )
        })?;
    }
    for s in &mut r.sweeps {
        let file = format!("scaling-{}-{}.svg", s.unit, s.param.to_lowercase());
        let lines = [
            LineData {
                name: "transistors (est.)".into(),
                points: s
                    .points
                    .iter()
                    .map(|(x, g)| (*x, g.transistors as f64))
                    .collect(),
            },
            LineData {
                name: "cells".into(),
                points: s.points.iter().map(|(x, g)| (*x, g.cells as f64)).collect(),
            },
            LineData {
                name: "flip-flops".into(),
                points: s.points.iter().map(|(x, g)| (*x, g.flops as f64)).collect(),
            },
        ];
        let title = format!("{}: scaling with {} ({})", s.unit, s.param, s.base);
        if charts::scaling(&out.join(&file), &title, &s.param, &lines).is_ok() {
            s.chart = Some(file.clone());
            made.push(file);
        }
    }
    // A unit with several seed figures of one kind gets a chart of ours beside the seed's.
    let mut by_unit: BTreeMap<&str, Vec<&SeedRow>> = BTreeMap::new();
    for row in &r.seed_comparison {
        by_unit.entry(&row.unit).or_default().push(row);
    }
    for (unit, rows) in by_unit {
        if rows.len() < 2 || rows.iter().any(|x| x.figure != rows[0].figure) {
            continue;
        }
        let file = format!("seed-{unit}.svg");
        let drawn = charts::bars(
            &out.join(&file),
            &format!("{unit}: ours against the seed's figures"),
            &rows[0].figure,
            &rows.iter().map(|x| x.label.clone()).collect::<Vec<_>>(),
            &[
                BarSeries {
                    name: "ours (estimate)".into(),
                    values: rows.iter().map(|x| Some(x.ours)).collect(),
                },
                BarSeries {
                    name: "seed".into(),
                    values: rows.iter().map(|x| Some(x.seed)).collect(),
                },
            ],
            false,
            &[],
        );
        match drawn {
            Ok(()) => made.push(file),
            Err(e) => eprintln!("estimates: chart {file} left out: {e:#}"),
        }
    }
    Ok(made)
}

/// A power in mW with three significant digits (`0.00321` for 3.2 µW).
fn mw(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let digits = if v >= 100.0 {
        0
    } else if v > 0.0 {
        (2 - v.log10().floor() as i32).clamp(0, 9) as usize
    } else {
        0
    };
    format!("{v:.digits$}")
}

fn fmt_num(v: Option<f64>, digits: usize) -> String {
    match v {
        None => "–".into(),
        Some(v) if !v.is_finite() => "–".into(),
        Some(v) if digits == 0 => group(v.round() as i64),
        Some(v) => format!("{v:.digits$}"),
    }
}

/// `1234567` as `1,234,567`.
fn group(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("| {} |\n|", head.join(" | "));
    for _ in head {
        s += "---|";
    }
    s += "\n";
    for r in rows {
        s += &format!("| {} |\n", r.join(" | "));
    }
    s
}

/// The figures of a target shown in the per-set tables, with their headings.
fn columns(t: Target) -> &'static [(&'static str, &'static str, usize)] {
    match t {
        Target::Generic => &[
            ("flops", "flip-flops", 0),
            ("cells", "cells", 0),
            ("transistors", "transistors (est.)", 0),
        ],
        Target::Osu018 => &[
            ("area_um2", "area (um^2)", 0),
            ("cells", "cells", 0),
            ("leakage_nw", "leakage (nW)", 0),
            ("worst_slack_ns", "worst slack at the target (ns)", 2),
            ("fmax_mhz", "Fmax (MHz)", 0),
            ("levels", "levels", 0),
        ],
        Target::Fpga(_) => &[
            ("luts", "LUTs", 0),
            ("ffs", "FFs", 0),
            ("lut_ram", "LUT-RAM", 0),
            ("block_ram", "block RAM", 0),
            ("carry", "carry", 0),
            ("dsp", "DSP", 0),
        ],
        Target::Pnr(_) => &[
            ("logic_used", "logic cells used", 0),
            ("logic_available", "of", 0),
            ("fmax_mhz", "post-route Fmax (MHz)", 1),
        ],
    }
}

fn markdown(r: &Report, a: &EstimatesArgs) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Estimates of warpforge's hardware units\n");
    let _ = writeln!(
        s,
        "Written by `warpforge report estimates` ({}, {}). Every figure here is an \
         **estimate** from open tools and the model named beside it — fit for comparing \
         designs and parameter sets, not for sign-off. Figures of the standard sets come \
         from the checked-in baselines (`{}/synth-<target>.json`, each measured by the tool \
         versions listed at the end) wherever the unit's RTL still hashes as recorded; the \
         sweeps and seed comparisons reuse a generic baseline entry or an earlier report's \
         measurement of the same RTL and Yosys, or run Yosys now; the power estimates run \
         now.\n",
        r.warpforge,
        r.generator,
        a.baselines.display()
    );

    // Summary.
    let _ = writeln!(s, "## Every unit at its default parameters\n");
    let rows: Vec<Vec<String>> = defaults(r)
        .iter()
        .map(|d| {
            let pw = r.power.iter().find(|p| p.unit == d.unit);
            let fpga = |f: Family| {
                let t = Target::Fpga(f);
                d.cell(t)
                    .map(|c| {
                        format!(
                            "{} / {} / {} / {}",
                            fmt_num(c.num("luts"), 0),
                            fmt_num(c.num("ffs"), 0),
                            fmt_num(c.num("lut_ram"), 0),
                            fmt_num(c.num("block_ram"), 0)
                        )
                    })
                    .unwrap_or_else(|| "–".into())
            };
            vec![
                format!("`{}`", d.unit),
                d.params.clone(),
                fmt_num(d.num(Target::Generic, "flops"), 0),
                fmt_num(d.num(Target::Generic, "transistors"), 0),
                fmt_num(d.num(Target::Osu018, "area_um2"), 0),
                fmt_num(d.num(Target::Osu018, "fmax_mhz"), 0),
                fpga(Family::Ecp5),
                fmt_num(d.num(Target::Pnr(Family::Ecp5), "fmax_mhz"), 1),
                fpga(Family::Ice40),
                pw.map(|p| format!("{} / {}", mw(p.random_total_mw), mw(p.idle_total_mw)))
                    .unwrap_or_else(|| "–".into()),
            ]
        })
        .collect();
    s += &table(
        &[
            "unit",
            "parameters",
            "flip-flops",
            "transistors (est.)",
            "OSU 0.18 um area (um^2)",
            &format!("OSU 0.18 um Fmax (MHz; target {:.0})", target_mhz("osu018")),
            "ECP5 LUT / FF / LUT-RAM / BRAM",
            &format!(
                "ECP5 post-route Fmax (MHz; target {:.0})",
                target_mhz("ecp5")
            ),
            "iCE40 LUT / FF / LUT-RAM / BRAM",
            "power random / idle (mW, +/-2x)",
        ],
        &rows,
    );
    s += "\n";
    for c in ["area.svg", "fmax.svg", "fpga.svg", "power.svg"] {
        if r.charts.iter().any(|x| x == c) {
            let _ = writeln!(s, "![{c}]({c})\n");
        }
    }
    targets_met(&mut s, r);

    // Seeds.
    let _ = writeln!(s, "## Against the seeds' cost figures\n");
    if r.seed_comparison.is_empty() {
        s += "No unit in this report declares a seed cost figure.\n\n";
    } else {
        let rows: Vec<Vec<String>> = r
            .seed_comparison
            .iter()
            .map(|x| {
                let digits = if x.seed < 10.0 { 2 } else { 0 };
                vec![
                    format!("`{}`", x.unit),
                    x.label.clone(),
                    x.figure.clone(),
                    fmt_num(Some(x.ours), digits),
                    fmt_num(Some(x.seed), digits),
                    fmt_num(Some(x.ratio), 2),
                    x.seed_basis.clone(),
                ]
            })
            .collect();
        s += &table(
            &[
                "unit",
                "what",
                "figure",
                "ours",
                "seed",
                "ours / seed",
                "the seed's figure",
            ],
            &rows,
        );
        s += "\nOurs: ";
        s += "the Yosys generic flow (two-input gates, 2:1 muxes, D flip-flops; `stat -tech \
              cmos` transistor estimate; a NAND2 equivalent is 4 of its transistors). The \
              seed's figures come from other tools and technologies (named in the last \
              column): the order of magnitude and the scaling compare, not the digits.\n\n";
        for c in &r.charts {
            if c.starts_with("seed-") {
                let _ = writeln!(s, "![{c}]({c})\n");
            }
        }
    }
    s += "Seed figures of units not generated yet (they join this table when their \
          declarations carry them): the LAMAR granularity decision unit's bloom filter, \
          4 Kbit of storage per GDU (2 arrays of 2 Kbit) plus 6 XOR hash sets \
          (specs/lamar-gdu-bgp.md §1, seed 001 L1825, L2011); Slumber's counters and \
          control at about 4% of the register file's area (specs/slumber-snooze-paver.md \
          §1.9, seed 000 D:1366-1372).\n\n";

    // Scaling.
    if !r.sweeps.is_empty() {
        let _ = writeln!(s, "## How the cost scales\n");
        s += "Each sweep varies one parameter with the others at the values shown (Yosys \
              generic flow). The exponent is the least-squares slope on log-log axes: 1 \
              is linear growth, 2 quadratic.\n\n";
        for w in &r.sweeps {
            let _ = writeln!(s, "### `{}`: {} ({})\n", w.unit, w.param, w.base);
            let rows: Vec<Vec<String>> = w
                .points
                .iter()
                .map(|(v, g)| {
                    vec![
                        v.to_string(),
                        group(g.flops as i64),
                        group(g.cells as i64),
                        group(g.transistors as i64),
                    ]
                })
                .collect();
            s += &table(
                &[&w.param, "flip-flops", "cells", "transistors (est.)"],
                &rows,
            );
            let _ = writeln!(
                s,
                "\nGrowth exponent: transistors {}, flip-flops {}.\n",
                fmt_num(w.transistor_exponent, 2),
                fmt_num(w.flop_exponent, 2)
            );
            if let Some(c) = &w.chart {
                let _ = writeln!(s, "![{c}]({c})\n");
            }
        }
    }

    // Power.
    if !r.power.is_empty() || !r.power_errors.is_empty() {
        let _ = writeln!(s, "## Power at default parameters\n");
        let rows: Vec<Vec<String>> = r
            .power
            .iter()
            .map(|p| {
                vec![
                    format!("`{}`", p.unit),
                    p.params.clone(),
                    format!("{:.0}", p.clock_mhz),
                    format!("{:.3}", p.activity_state),
                    mw(p.random_dynamic_mw),
                    format!("{:.2}", p.leakage_uw),
                    mw(p.random_total_mw),
                    mw(p.idle_total_mw),
                    mw(p.mean_rate_total_mw),
                    format!("{:.2}", p.opensta_ratio),
                    p.gate_check.clone(),
                ]
            })
            .collect();
        s += &table(
            &[
                "unit",
                "parameters",
                "MHz",
                "register activity (RTL, random)",
                "dynamic, random (mW)",
                "leakage (uW)",
                "total, random (mW)",
                "total, idle (mW)",
                "mean-rate total, random (mW)",
                "mean-rate / OpenSTA",
                "netlist against the model",
            ],
            &rows,
        );
        let _ = writeln!(
            s,
            "\nModel: `warpforge power` on the OSU 0.18 um netlist (liberty energies and pin \
             capacitances). The unit's seeded random stimulus runs {} cycles in \
             co-simulation (then the idle one: reset released, inputs 0); the inputs of its \
             first {} cycles drive a gate-level simulation of the netlist, which gives every \
             net its own activity and checks the netlist's outputs against the model (last \
             column). The mean-rate total uses one rate per kind of net from the RTL instead; \
             OpenSTA's `report_power` is given those mean rates, and the ratio compares the \
             two on the same inputs. Estimates, about +/-2x.\n",
            a.power_cycles, a.gate_cycles
        );
        for e in &r.power_errors {
            let _ = writeln!(s, "- not estimated: {e}");
        }
        s += "\n";
    }

    // Every set.
    let _ = writeln!(s, "## Every standard parameter set\n");
    let mut missing: Vec<String> = vec![];
    for (t, title) in TARGETS {
        let name = t.name();
        let shown: Vec<&SetRow> = r
            .sets
            .iter()
            .filter(|x| x.targets.get(&name).is_some_and(|c| c.usable()))
            .collect();
        if !r.baselines.contains_key(&name) && shown.is_empty() {
            missing.push(format!(
                "{name}: no baseline file (`synth-{name}.json`) in {}",
                a.baselines.display()
            ));
            continue;
        }
        for x in &r.sets {
            if let Some(c) = x.targets.get(&name) {
                if !c.usable() {
                    missing.push(format!(
                        "{} ({}) for {name}: {}{}",
                        x.unit,
                        x.params,
                        c.source,
                        c.error
                            .as_deref()
                            .map(|e| format!(" ({e})"))
                            .unwrap_or_default()
                    ));
                }
            }
        }
        if shown.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### {title} (`{name}`)\n");
        let cols = columns(t);
        let mut head = vec!["unit", "parameters"];
        head.extend(cols.iter().map(|c| c.1));
        head.push("source");
        let rows: Vec<Vec<String>> = shown
            .iter()
            .map(|x| {
                let c = &x.targets[&name];
                let mut row = vec![format!("`{}`", x.unit), x.params.clone()];
                if matches!(t, Target::Pnr(_)) && c.figures.get("fits") == Some(&Value::Bool(false))
                {
                    row.extend(cols.iter().map(|_| "does not fit".to_string()));
                } else {
                    row.extend(cols.iter().map(|col| fmt_num(c.num(col.0), col.2)));
                }
                row.push(c.source.to_string());
                row
            })
            .collect();
        s += &table(&head, &rows);
        s += "\n";
    }
    if !missing.is_empty() {
        let _ = writeln!(
            s,
            "Not shown ({} lines): `stale` means the RTL changed since the \
             baseline was measured, `missing` that the baseline has no entry (or there is \
             no baseline of that target). `warpforge synth --all --target T [--pnr] \
             --accept-baseline` measures and records them; `warpforge report estimates \
             --measure` measures what it can now (not place and route).\n",
            missing.len()
        );
        for m in &missing {
            let _ = writeln!(s, "- {m}");
        }
        s += "\n";
    }

    let _ = writeln!(s, "## Tools\n");
    for (t, tools) in &r.baselines {
        let _ = writeln!(s, "- `synth-{t}.json`: {}", tools.join(", "));
    }
    s
}

/// The target clock of technology `name` in constraints/targets.toml (MHz).
fn target_mhz(name: &str) -> f64 {
    warpforge_gen::asic::target(name)
        .map(|t| 1000.0 / t.period_ns)
        .unwrap_or(f64::NAN)
}

/// Which units meet the timing targets at their default sets, from the figures.
fn targets_met(s: &mut String, r: &Report) {
    let (osu_target, ecp5_target) = (target_mhz("osu018"), target_mhz("ecp5"));
    let mut lines = vec![];
    for d in defaults(r) {
        let osu = d.num(Target::Osu018, "fmax_mhz");
        let pnr = d.cell(Target::Pnr(Family::Ecp5));
        let say = |v: Option<f64>, target: f64| match v {
            None => "not measured".to_string(),
            Some(v) if v >= target => format!("meets {target:.0} MHz ({v:.0} MHz)"),
            Some(v) => format!("misses {target:.0} MHz ({v:.0} MHz)"),
        };
        let ecp5 = match pnr {
            Some(c) if c.figures.get("fits") == Some(&Value::Bool(false)) => {
                "does not fit the largest device".to_string()
            }
            _ => say(d.num(Target::Pnr(Family::Ecp5), "fmax_mhz"), ecp5_target),
        };
        lines.push(format!(
            "- `{}`: OSU 0.18 um {}; ECP5 after place and route {ecp5}.",
            d.unit,
            say(osu, osu_target),
        ));
    }
    s.push_str(&format!(
        "Timing targets ({osu_target:.0} MHz in OSU 0.18 um STA, {ecp5_target:.0} MHz on ECP5 \
         after place and route; constraints/targets.toml):\n\n"
    ));
    for l in lines {
        s.push_str(&l);
        s.push('\n');
    }
    s.push('\n');
}
