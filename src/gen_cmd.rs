//! `warpforge gen` and `warpforge synth`: Verilog of the hardware units, the lint gate and
//! gate-level estimates (package warpforge-gen).

use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
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
    /// The unit (RTL module) to synthesise.
    #[arg(long)]
    unit: String,
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
    /// With `--target osu018`: keep the rendered scripts, constraints, netlists and logs in
    /// this folder (default: warpforge-synth/<unit>/<parameters>/).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Synthesise the Verilog in this folder instead of generating it: the files listed in
    /// `<unit>.f` (or `<unit>.v` alone), e.g. RTL written by an earlier release.
    #[arg(long, value_name = "DIR")]
    rtl: Option<PathBuf>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
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

pub fn synth(a: &SynthArgs) -> Result<u8> {
    let mut g = gen::generate_by_name(&a.unit, &a.params)?;
    if let Some(dir) = &a.rtl {
        g = with_rtl_from(g, dir)?;
    }
    if a.target.as_deref() == Some("osu018") {
        let dir = a.out.clone().unwrap_or_else(|| {
            Path::new("warpforge-synth").join(gen::params_dir(g.desc, &g.params))
        });
        let r = match gen::asic::osu018_in(&g, &dir) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: synth {} for osu018: {e}", g.module());
                return Ok(EXIT_FAIL);
            }
        };
        print_report(&r, a.json)?;
        return Ok(0);
    }
    if let Some(t) = a.target.as_deref().filter(|t| *t != "generic") {
        let t = if t == "xc7" { "xilinx" } else { t };
        let family = synth::Family::parse(t).expect("clap checks the family");
        let r = match synth::fpga(&g, family) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: synth {} for {family}: {e}", g.module());
                return Ok(EXIT_FAIL);
            }
        };
        print_report(&r, a.json)?;
        return Ok(0);
    }
    let r = match synth::synth(&g) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: synth {}: {e}", g.module());
            return Ok(EXIT_FAIL);
        }
    };
    print_report(&r, a.json)?;
    Ok(0)
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
