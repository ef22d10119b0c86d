//! `warpforge gen` and `warpforge synth`: Verilog of the hardware units, the lint gate and
//! gate-level estimates (package warpforge-gen).

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Duration;
use warpforge_gen::baseline::{self, Baseline, Measured, Target};
use warpforge_gen::pnr::ShellMode;
use warpforge_gen::{self as gen, lint, synth, GeneratedUnit};

#[derive(Args)]
pub struct GenArgs {
    /// The unit (RTL module) to generate, e.g. simt_stack_spe.
    #[arg(long, required_unless_present = "all", conflicts_with = "all")]
    unit: Option<String>,
    /// Every unit that has a template, at its default parameters, into OUT.
    #[arg(long)]
    all: bool,
    /// With --all: also every unit's standard parameter sets (the ones the tests and
    /// co-simulation cover), each into OUT/<unit>/<NAME-VALUE_...>/.
    #[arg(long, requires = "all")]
    standard_sets: bool,
    /// Override a parameter (repeatable), e.g. --param DEPTH=8.
    #[arg(long = "param", value_name = "NAME=VALUE", conflicts_with = "all")]
    params: Vec<String>,
    /// Output folder: <module>.v, <module>.manifest.json and <module>.f are written there.
    #[arg(long)]
    out: PathBuf,
    /// Run the lint gate (verilator, svlint, yosys, iverilog) on what was generated; exit 1
    /// on any finding.
    #[arg(long)]
    lint: bool,
}

#[derive(Args)]
pub struct SynthArgs {
    /// The unit (RTL module) to synthesise (with --all: only its standard sets).
    #[arg(long, required_unless_present = "all")]
    unit: Option<String>,
    /// Every unit with a template at each of its standard parameter sets (the sets the
    /// tests and co-simulation cover), one table.
    #[arg(long, conflicts_with_all = ["params", "rtl"])]
    all: bool,
    /// With --all: leave out the sets above 32,768 state bits (the 64-warp x 256-register
    /// scoreboard), which take hours in the slow flows.
    #[arg(long, requires = "all")]
    skip_heavy: bool,
    /// With --skip-heavy: the state bits above which a set is left out (e.g. 12000 also
    /// leaves out the 48-warp scoreboard, whose ECP5 place and route takes most of an hour).
    #[arg(long, value_name = "BITS", default_value_t = baseline::HEAVY_STATE_BITS, requires = "skip_heavy")]
    heavy_bits: u64,
    /// Override a parameter (repeatable), e.g. --param DEPTH=8.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// What to synthesise for, instead of the generic gate estimate: `osu018` (the OSU
    /// 0.18 um standard cells: area in um^2, leakage, OpenSTA timing and Fmax against
    /// constraints/), or an FPGA family with Yosys' vendor flow, `xilinx` (synth_xilinx),
    /// `ecp5` (synth_ecp5) or `ice40` (synth_ice40): LUTs, flip-flops, LUT-RAM and block-RAM
    /// cells.
    #[arg(long, value_name = "TARGET", value_parser = ["generic", "osu018", "xilinx", "xc7", "ecp5", "ice40"])]
    target: Option<String>,
    /// With `--target ecp5` or `ice40`: place and route with nextpnr on the family's device
    /// of constraints/targets.toml (the first that fits: ECP5 LFE5U-25F CABGA256, then
    /// LFE5U-85F CABGA381; iCE40HX8K CT256) and report utilisation and post-route Fmax.
    #[arg(long)]
    pnr: bool,
    /// With --pnr: place the unit inside its shell (serial-in/serial-out registers around
    /// it, six pins) `always`, `never`, or `auto`: when its ports outnumber the package's
    /// pins or it has no state of its own.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    shell: String,
    /// With a `--target`: keep the rendered scripts, constraints (for xilinx the XDC and a
    /// Vivado out-of-context script), netlists, reports and logs in this folder (default:
    /// warpforge-synth/<unit>/<parameters>/; with --all, DIR/<unit>/<parameters>/).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Synthesise the Verilog in this folder instead of generating it: the files listed in
    /// `<unit>.f` (or `<unit>.v` alone), e.g. RTL written by an earlier release.
    #[arg(long, value_name = "DIR")]
    rtl: Option<PathBuf>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// With --all: compare every figure and RTL hash with the checked-in baseline of the
    /// target (baselines/synth-<target>.json); exit 1 on any difference, in either direction.
    #[arg(long, requires = "all", conflicts_with = "accept_baseline")]
    check_baseline: bool,
    /// With --all: write the figures, RTL hashes and tool versions as the target's new
    /// baseline (baselines/synth-<target>.json), after checking the differences it lists.
    /// With --unit U: only U's entries are replaced; the other units' stay as they were.
    #[arg(long, requires = "all")]
    accept_baseline: bool,
    /// The baseline file of --check-baseline / --accept-baseline (default:
    /// baselines/synth-<target>.json).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

/// Exit code when the lint gate finds something or a tool is missing.
const EXIT_FAIL: u8 = 1;

pub fn gen(a: &GenArgs) -> Result<u8> {
    let mut jobs: Vec<(GeneratedUnit, PathBuf)> = vec![];
    if let Some(unit) = &a.unit {
        jobs.push((gen::generate_by_name(unit, &a.params)?, a.out.clone()));
    } else {
        for desc in warpforge_model::units::ALL {
            if gen::templates::find(desc).is_none() {
                eprintln!("skipped {}: no RTL template yet", desc.name);
                continue;
            }
            let defaults = desc.params::<&str>(&[]).map_err(anyhow::Error::msg)?;
            jobs.push((gen::generate(desc, &defaults)?, a.out.clone()));
            if a.standard_sets {
                for p in desc.standard_params() {
                    let dir = a.out.join(gen::params_dir(desc, &p));
                    jobs.push((gen::generate(desc, &p)?, dir));
                }
            }
        }
    }
    for (g, dir) in &jobs {
        g.write(dir)?;
        println!(
            "{} ({}) -> {} [{}]",
            g.module(),
            g.params,
            dir.join(format!("{}.v", g.module())).display(),
            g.manifest.content_hash
        );
    }
    if !a.lint {
        return Ok(0);
    }
    let mut code = 0;
    for (g, dir) in &jobs {
        let scratch = lint_dir(dir, g.module());
        match lint::lint_in(g, &scratch) {
            Ok(report) => {
                print!("{report}");
                if report.is_clean() {
                    println!();
                    let _ = std::fs::remove_dir_all(&scratch);
                } else {
                    code = EXIT_FAIL;
                }
            }
            Err(e) => {
                eprintln!("error: lint {}: {e}", g.module());
                return Ok(EXIT_FAIL);
            }
        }
    }
    Ok(code)
}

/// The lint gate's scratch folder next to the output (keeps the output folder clean).
fn lint_dir(out: &Path, module: &str) -> PathBuf {
    out.join(format!(".lint-{module}"))
}

/// `g` with its synthesizable files replaced by those of `dir` (`<unit>.f`'s list, or
/// `<unit>.v`).
fn with_rtl_from(mut g: GeneratedUnit, dir: &Path) -> Result<GeneratedUnit> {
    let unit = g.module().to_string();
    let list = dir.join(format!("{unit}.f"));
    let names: Vec<String> = match std::fs::read_to_string(&list) {
        Ok(t) => t
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        Err(_) => vec![format!("{unit}.v")],
    };
    let mut files = vec![];
    for n in &names {
        let p = dir.join(n);
        let text = std::fs::read_to_string(&p)
            .with_context(|| format!("--rtl {}: cannot read {}", dir.display(), p.display()))?;
        files.push((n.clone(), text));
    }
    g.files = files;
    g.manifest.files = names;
    Ok(g)
}

/// The target of `a`.
fn synth_target(a: &SynthArgs) -> Result<Target> {
    let t = a.target.as_deref().unwrap_or("generic");
    let t = if t == "xc7" { "xilinx" } else { t };
    Ok(match (t, a.pnr) {
        ("generic", false) => Target::Generic,
        ("osu018", false) => Target::Osu018,
        (f, pnr) => {
            let family = synth::Family::parse(f)
                .ok_or_else(|| anyhow::anyhow!("--pnr is for --target ecp5 or ice40"))?;
            match (family, pnr) {
                (synth::Family::Xilinx, true) => {
                    anyhow::bail!(
                        "--pnr is for --target ecp5 or ice40 (nextpnr-xilinx is not packaged)"
                    )
                }
                (f, true) => Target::Pnr(f),
                (f, false) => Target::Fpga(f),
            }
        }
    })
}

/// A spinner on standard error with the current step (hidden when it is not a terminal).
fn spinner(prefix: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {prefix}: {wide_msg}")
            .expect("valid template"),
    );
    pb.set_prefix(prefix);
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// A progress callback that shows a step, or the lines of a long tool run worth seeing.
fn on_progress(pb: &ProgressBar) -> impl Fn(&str) + '_ {
    move |line: &str| {
        let l = line.trim();
        let shown = !l.starts_with("Info:")
            || [
                "pack",
                "Pack",
                "plac",
                "Plac",
                "rout",
                "Rout",
                "Max frequency",
                "iter",
            ]
            .iter()
            .any(|k| l.contains(k));
        if shown && !l.is_empty() {
            pb.set_message(l.chars().take(100).collect::<String>());
        }
    }
}

fn shell_mode(a: &SynthArgs) -> ShellMode {
    match a.shell.as_str() {
        "always" => ShellMode::Always,
        "never" => ShellMode::Never,
        _ => ShellMode::Auto,
    }
}

pub fn synth(a: &SynthArgs) -> Result<u8> {
    let target = synth_target(a)?;
    if a.all {
        return synth_all(a, target);
    }
    let unit = a.unit.as_deref().expect("clap: --unit or --all");
    let mut g = gen::generate_by_name(unit, &a.params)?;
    if let Some(dir) = &a.rtl {
        g = with_rtl_from(g, dir)?;
    }
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("warpforge-synth").join(gen::params_dir(g.desc, &g.params)));
    let pb = spinner(format!("{} ({})", g.module(), g.params));
    let r = baseline::measure(&g, target, shell_mode(a), &dir, &on_progress(&pb));
    pb.finish_and_clear();
    match r {
        Ok(r) => {
            print_report(&r, a.json)?;
            if !a.json && target == Target::Fpga(synth::Family::Xilinx) {
                println!(
                    "  files: {} (with {m}.xdc and xc7_vivado.tcl: `vivado -mode batch -source xc7_vivado.tcl` implements it out of context)",
                    dir.display(),
                    m = g.manifest.top
                );
            }
            Ok(0)
        }
        Err(e) => {
            eprintln!("error: synth {} for {}: {e}", g.module(), target.name());
            Ok(EXIT_FAIL)
        }
    }
}

/// `synth --all`: every unit with a template at its standard sets, one table.
fn synth_all(a: &SynthArgs, target: Target) -> Result<u8> {
    let mut jobs: Vec<GeneratedUnit> = vec![];
    let mut skipped: Vec<String> = vec![];
    let units = match &a.unit {
        Some(u) => vec![gen::find_unit(u)?],
        None => gen::units_with_templates(),
    };
    for desc in units {
        for p in desc.standard_params() {
            let g = gen::generate(desc, &p)?;
            let bits = baseline::state_bits(&g);
            if a.skip_heavy && bits > a.heavy_bits {
                skipped.push(format!("{} ({}): {bits} state bits", desc.name, p));
                continue;
            }
            jobs.push(g);
        }
    }
    let path = a
        .baseline
        .clone()
        .unwrap_or_else(|| PathBuf::from(target.baseline_path()));
    // --accept-baseline --unit U updates an existing baseline: read it before measuring
    // (place and route takes minutes a set), so a missing or broken file fails at once.
    let unit_base = match (&a.unit, a.accept_baseline) {
        (Some(unit), true) => Some(Baseline::read(&path).map_err(|e| {
            anyhow::anyhow!("--accept-baseline --unit {unit} updates an existing baseline: {e}")
        })?),
        _ => None,
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("warpforge-synth"));
    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} {wide_msg}",
        )
        .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut rows: Vec<(GeneratedUnit, Result<Measured, String>)> = vec![];
    for g in jobs {
        let dir = out.join(gen::params_dir(g.desc, &g.params));
        let label = format!("{} ({})", g.module(), g.params);
        bar.set_message(label.clone());
        let progress = |line: &str| {
            let l = line.trim();
            if !l.starts_with("Info:") || l.contains("Max frequency") || l.contains("Routing") {
                bar.set_message(format!(
                    "{label}: {}",
                    l.chars().take(80).collect::<String>()
                ));
            }
        };
        let r = baseline::measure(&g, target, shell_mode(a), &dir, &progress)
            .map_err(|e| e.to_string());
        bar.inc(1);
        rows.push((g, r));
    }
    bar.finish_and_clear();

    let failed = rows.iter().filter(|(_, r)| r.is_err()).count();
    if a.json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(g, r)| match r {
                Ok(m) => serde_json::to_value(m).unwrap_or_default(),
                Err(e) => serde_json::json!({
                    "module": g.module(),
                    "params": g.manifest.params,
                    "error": e,
                }),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        print!("{}", summary_table(target, &rows));
        for s in &skipped {
            println!("skipped (--skip-heavy): {s}");
        }
        if let Some((_, Ok(m))) = rows.iter().find(|(_, r)| r.is_ok()) {
            println!("({})", summary_note(m));
        }
    }
    let entries: Vec<baseline::Entry> = rows
        .iter()
        .map(|(g, r)| baseline::entry(g, r.as_ref().map_err(|e| e.clone())))
        .collect();
    let mut code = if failed > 0 { EXIT_FAIL } else { 0 };
    if a.accept_baseline {
        let mut tools: Vec<String> = rows
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok())
            .flat_map(|m| m.tools())
            .collect();
        tools.sort();
        tools.dedup();
        let b = if let (Some(unit), Some(old)) = (&a.unit, unit_base) {
            // --unit U: U's entries replaced, every other unit's kept as measured before.
            let diffs = baseline::compare(&old.of_unit(unit), &entries);
            println!(
                "{} difference(s) from the previous baseline of {unit}:",
                diffs.len()
            );
            for d in &diffs {
                println!("  {d}");
            }
            old.with_unit_replaced(unit, entries, &tools)
        } else {
            if let Ok(old) = Baseline::read(&path) {
                let diffs = baseline::compare(&old, &entries);
                println!("{} difference(s) from the previous baseline:", diffs.len());
                for d in &diffs {
                    println!("  {d}");
                }
            }
            Baseline {
                target: target.name(),
                generator: gen::generator_version(),
                tools,
                entries,
            }
        };
        b.write(&path).map_err(anyhow::Error::msg)?;
        println!("baseline written: {}", path.display());
        if a.skip_heavy && !skipped.is_empty() {
            println!("note: the skipped sets have no entry in it");
        }
    } else if a.check_baseline {
        let mut old = Baseline::read(&path).map_err(anyhow::Error::msg)?;
        if let Some(u) = &a.unit {
            // --unit U: U's sets only.
            old = old.of_unit(u);
        }
        let diffs = baseline::compare(&old, &entries);
        let diffs: Vec<_> = diffs
            .into_iter()
            .filter(|d| {
                // Sets left out by --skip-heavy are not "gone".
                !(d.what == "entry"
                    && skipped
                        .iter()
                        .any(|s| s.starts_with(&format!("{} ({})", d.unit, d.params))))
            })
            .collect();
        if diffs.is_empty() {
            println!("baseline {}: no difference", path.display());
        } else {
            println!(
                "baseline {}: {} difference(s) (accept with `warpforge synth --all{}{} --target {}{} --accept-baseline` once explained):",
                path.display(),
                diffs.len(),
                if a.skip_heavy { " --skip-heavy" } else { "" },
                a.unit.as_ref().map(|u| format!(" --unit {u}")).unwrap_or_default(),
                a.target.as_deref().unwrap_or("generic"),
                if a.pnr { " --pnr" } else { "" }
            );
            for d in &diffs {
                println!("  {d}");
            }
            code = EXIT_FAIL;
        }
    }
    Ok(code)
}

/// The note of a target's figures, for the table's foot.
fn summary_note(m: &Measured) -> String {
    match m {
        Measured::Generic(r) => format!("{}; {}", r.note, r.yosys),
        Measured::Asic(r) => format!("{}; {}", r.note, r.tools.join(", ")),
        Measured::Fpga(r) => format!("{}; {}", r.flow.join("; "), r.yosys),
        Measured::Pnr(r) => format!("{}; {}", r.note, r.tools.join(", ")),
    }
}

/// The figures of every row as one table.
fn summary_table(target: Target, rows: &[(GeneratedUnit, Result<Measured, String>)]) -> String {
    let mut header: Vec<String> = vec!["unit".into(), "params".into()];
    // (the row of each measurement follows the header's figures)
    if let Some(m) = rows.iter().find_map(|(_, r)| r.as_ref().ok()) {
        header.extend(m.figures().iter().map(|(k, _)| k.to_string()));
    }
    let cols = header.len();
    let mut table: Vec<(Vec<String>, String)> = vec![(header, String::new())];
    for (g, r) in rows {
        let mut row = vec![g.module().to_string(), g.params.to_string()];
        let mut note = String::new();
        match r {
            Ok(m) => {
                let f = m.figures();
                for h in &table[0].0[2..] {
                    let v = f.iter().find(|(k, _)| k == h).map(|(_, v)| v);
                    row.push(match v {
                        None | Some(serde_json::Value::Null) => "-".into(),
                        Some(serde_json::Value::String(s)) => s.clone(),
                        Some(serde_json::Value::Bool(b)) => (if *b { "yes" } else { "no" }).into(),
                        Some(v) => v.to_string(),
                    });
                }
                if let Measured::Pnr(p) = m {
                    if let Some(why) = &p.not_fit {
                        note = format!("does not fit: {why}");
                    }
                }
            }
            Err(e) => {
                row.resize(cols, "-".into());
                note = format!("error: {}", e.lines().next().unwrap_or(""));
            }
        }
        table.push((row, note));
    }
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            table
                .iter()
                .filter_map(|(r, _)| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("synth --all --target {}\n", target.name());
    for (i, (r, note)) in table.iter().enumerate() {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| {
                let w = widths.get(c).copied().unwrap_or(0);
                if c < 2 {
                    format!("{s:<w$}")
                } else {
                    format!("{s:>w$}")
                }
            })
            .collect();
        out += cells.join("  ").trim_end();
        if !note.is_empty() {
            out += "  ";
            out += note;
        }
        out.push('\n');
        if i == 0 {
            out += &widths
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("  ");
            out.push('\n');
        }
    }
    out
}

/// A synthesis report as JSON (`--json`) or as text.
fn print_report<R: serde::Serialize + std::fmt::Display>(r: &R, json: bool) -> Result<()> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(r).context("serialising the report")?
        );
    } else {
        println!("{r}");
    }
    Ok(())
}
