//! FPGA place and route of a generated unit with nextpnr: utilisation and post-route Fmax
//! on a named device and package (`warpforge synth --target ecp5|ice40 --pnr`).
//!
//! The flow: Yosys' vendor flow (`synth_ecp5` / `synth_ice40`, as [`crate::synth::fpga`])
//! writes the netlist as JSON; the first device of the family in
//! `constraints/targets.toml` whose capacity the mapped cells fit is chosen (none: the
//! report says the unit does not fit, and nextpnr is not run); the constraints
//! (`constraints/ecp5.lpf`, `constraints/ice40.pcf`) are rendered with its pins; nextpnr
//! places and routes at the family's target frequency and writes a JSON report
//! (`--report`), from which the utilisation (used / available per resource type) and the
//! achieved post-route Fmax with its critical path are read.
//!
//! A unit with more port bits than the package has pins, or without any state of its own
//! (no reg-to-reg path to time), is placed inside its shell ([`crate::shell`]): every path
//! nextpnr times is then reg-to-reg, and the report says so.
//!
//! The figures are **estimates** of one nextpnr run (seed 1): placement is randomised, and
//! another seed or version moves Fmax by several percent.

use crate::shell::{self, ShellLayout};
use crate::synth::{fpga_flow, fpga_report, param_line, run_yosys, Family, FpgaReport};
use crate::tools::{self, ToolError};
use crate::GeneratedUnit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub const ECP5_LPF: &str = include_str!("../../constraints/ecp5.lpf");
pub const ICE40_PCF: &str = include_str!("../../constraints/ice40.pcf");

/// What the figures are, printed with them.
pub const PNR_NOTE: &str = "estimate: one nextpnr run (seed 1) after Yosys' vendor flow; \
    utilisation as nextpnr counts it, Fmax of the routed design at the typical speed \
    grade's timing model; another seed or tool version moves Fmax by a few percent";

/// One FPGA device of `constraints/targets.toml` (`[[ecp5.devices]]`, `[[ice40.devices]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// `LFE5U-25F`, `iCE40HX8K`.
    pub name: String,
    /// nextpnr's device option (`--25k`, `--hx8k`).
    pub arg: String,
    pub package: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<u32>,
    /// Capacity: LUT4s, flip-flops, block RAMs, user I/O pins of the package.
    pub luts: u64,
    pub ffs: u64,
    pub block_rams: u64,
    pub io: u64,
    /// The shell's pins: port -> package site.
    pub pins: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
struct FamilyTarget {
    period_ns: f64,
    #[serde(default)]
    devices: Vec<Device>,
}

/// The target period (ns) and the devices (smallest first) of `family`.
pub fn family_target(family: Family) -> Result<(f64, Vec<Device>), String> {
    let all: BTreeMap<String, toml::Value> = toml::from_str(crate::asic::TARGETS)
        .map_err(|e| format!("constraints/targets.toml: {e}"))?;
    let t: FamilyTarget = all
        .get(family.name())
        .cloned()
        .ok_or_else(|| format!("constraints/targets.toml has no [{family}]"))?
        .try_into()
        .map_err(|e| format!("constraints/targets.toml [{family}]: {e}"))?;
    if t.devices.is_empty() {
        return Err(format!(
            "constraints/targets.toml has no [[{family}.devices]]: no device to place on"
        ));
    }
    Ok((t.period_ns, t.devices))
}

/// When to place the unit inside its shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellMode {
    /// When the unit has more port bits (and its clock) than the package has pins, or no
    /// state of its own.
    Auto,
    Always,
    Never,
}

/// Whether the shell was used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellUse {
    pub used: bool,
    pub reason: String,
    /// The pins the bare unit needs (clock and every port bit).
    pub unit_pins: u32,
    /// Where the unit's ports are in the shell's chains (when used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<ShellLayout>,
}

/// One resource type of nextpnr's utilisation report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Utilisation {
    pub used: u64,
    pub available: u64,
}

/// The critical path nextpnr reports for the clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PnrPath {
    /// The cells the path starts and ends at (nextpnr's names).
    pub from: String,
    pub to: String,
    /// Logic cells on the path (LUTs, carry, RAM outputs).
    pub logic_levels: u32,
    pub delay_ns: f64,
    /// Of which routing.
    pub routing_ns: f64,
}

/// The place-and-route figures of one unit instance on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PnrReport {
    pub module: String,
    pub params: BTreeMap<String, u64>,
    pub family: Family,
    /// The device chosen (or, when nothing fits, the largest one tried).
    pub device: Device,
    pub shell: ShellUse,
    /// Whether the design fits the device (placed and routed).
    pub fits: bool,
    /// Why not, when it does not fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_fit: Option<String>,
    /// Yosys' mapping of the placed design (the shell included when used).
    pub mapped: FpgaReport,
    /// nextpnr's utilisation, per resource type with any use.
    pub utilisation: BTreeMap<String, Utilisation>,
    pub target_mhz: f64,
    /// Achieved post-route Fmax (None: no reg-to-reg path, or not placed).
    pub fmax_mhz: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_path: Option<PnrPath>,
    pub tools: Vec<String>,
    /// Where the rendered constraints, netlist, report and logs are.
    pub dir: PathBuf,
    pub note: String,
}

impl fmt::Display for PnrReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.device;
        let speed = d.speed.map(|s| format!(" speed {s}")).unwrap_or_default();
        writeln!(
            f,
            "{} ({}) on {} {} {}{speed}",
            self.module,
            param_line(&self.params),
            self.family,
            d.name,
            d.package
        )?;
        if self.shell.used {
            writeln!(
                f,
                "  in its shell ({}): serial-in/serial-out registers around the unit ({} + {} \
                 flip-flops, pins {}), so every timed path is reg-to-reg",
                self.shell.reason,
                self.shell.layout.as_ref().map_or(0, |l| l.in_bits),
                self.shell.layout.as_ref().map_or(0, |l| l.out_bits),
                shell::PINS.join(", ")
            )?;
        } else {
            writeln!(f, "  without a shell ({})", self.shell.reason)?;
        }
        let m = &self.mapped;
        writeln!(
            f,
            "  Yosys mapping: {} LUTs, {} flip-flops, {} LUT-RAM cells, {} block RAMs",
            m.luts, m.ffs, m.lut_ram, m.block_ram
        )?;
        if !self.fits {
            writeln!(
                f,
                "  DOES NOT FIT: {}",
                self.not_fit.as_deref().unwrap_or("?")
            )?;
        } else {
            writeln!(f, "  utilisation after place and route:")?;
            for (k, u) in &self.utilisation {
                let pct = if u.available > 0 {
                    100.0 * u.used as f64 / u.available as f64
                } else {
                    0.0
                };
                writeln!(
                    f,
                    "    {k:<16} {:>7} / {:<7} ({pct:.1}%)",
                    u.used, u.available
                )?;
            }
            match self.fmax_mhz {
                Some(x) => writeln!(
                    f,
                    "  post-route Fmax {x:.1} MHz (target {:.0} MHz: {})",
                    self.target_mhz,
                    if x >= self.target_mhz {
                        "met"
                    } else {
                        "missed"
                    }
                )?,
                None => writeln!(f, "  post-route Fmax: none (no reg-to-reg path)")?,
            }
            if let Some(p) = &self.critical_path {
                writeln!(
                    f,
                    "  critical path: {} -> {}, {} logic levels, {:.2} ns ({:.2} ns routing)",
                    p.from, p.to, p.logic_levels, p.delay_ns, p.routing_ns
                )?;
            }
        }
        writeln!(f, "  files: {}", self.dir.display())?;
        write!(f, "  ({}; {})", self.note, self.tools.join(", "))
    }
}

fn family_exe(family: Family) -> Result<PathBuf, ToolError> {
    match family {
        Family::Ecp5 => tools::locate_nextpnr_ecp5(),
        Family::Ice40 => tools::locate(tools::NEXTPNR_ICE40),
        Family::Xilinx => Err(ToolError::Failed {
            exe: "nextpnr".into(),
            code: None,
            output: "place and route is for ecp5 and ice40 (nextpnr-xilinx is not packaged)".into(),
        }),
    }
}

/// The first line of `exe --version`.
fn version(exe: &Path, dir: &Path) -> String {
    tools::run(exe, &["--version".into()], dir)
        .ok()
        .and_then(|r| {
            r.text
                .lines()
                .find(|l| l.contains("Version") || l.contains("nextpnr"))
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_else(|| exe.display().to_string())
}

/// Whether `m` fits `d`'s capacity, or why not.
fn fits(m: &FpgaReport, d: &Device) -> Result<(), String> {
    let mut why = vec![];
    if m.luts > d.luts {
        why.push(format!("{} LUTs > {}", m.luts, d.luts));
    }
    if m.ffs > d.ffs {
        why.push(format!("{} flip-flops > {}", m.ffs, d.ffs));
    }
    if m.block_ram > d.block_rams {
        why.push(format!("{} block RAMs > {}", m.block_ram, d.block_rams));
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join(", "))
    }
}

/// The constraints file of `family` for `d`: every pin of `pins` located.
pub fn render_constraints(
    family: Family,
    d: &Device,
    pins: &[&str],
    freq_mhz: f64,
) -> Result<String, String> {
    let mut lines = vec![];
    for p in pins {
        let site = d.pins.get(*p).ok_or_else(|| {
            format!(
                "constraints/targets.toml: device {} has no site for pin {p}",
                d.name
            )
        })?;
        lines.push(match family {
            Family::Ecp5 => format!(
                "LOCATE COMP \"{p}\" SITE \"{site}\";\nIOBUF PORT \"{p}\" IO_TYPE=LVCMOS33;"
            ),
            _ => format!("set_io {p} {site}"),
        });
    }
    let template = match family {
        Family::Ecp5 => ECP5_LPF,
        _ => ICE40_PCF,
    };
    Ok(template
        .replace("@FREQ_MHZ@", &format!("{freq_mhz}"))
        .replace("@PINS@", &lines.join("\n")))
}

/// Whether a failed nextpnr run failed because the design does not fit (the error line).
fn fit_error(log: &str) -> Option<String> {
    let patterns = [
        "no BELs remaining",
        "Unable to place cell",
        "device only has",
        "exceeds",
        "Failed to route",
        "failed to route",
        "Unable to find legal placement",
        "Failed to expand region",
    ];
    log.lines()
        .find(|l| l.contains("ERROR") && patterns.iter().any(|p| l.contains(p)))
        .map(|l| l.trim().to_string())
}

/// The utilisation, Fmax and critical path of nextpnr's `--report` JSON.
pub fn parse_report(
    v: &serde_json::Value,
) -> (BTreeMap<String, Utilisation>, Option<f64>, Option<PnrPath>) {
    let mut util = BTreeMap::new();
    if let Some(u) = v["utilization"].as_object() {
        for (k, x) in u {
            let used = x["used"].as_u64().unwrap_or(0);
            if used > 0 {
                util.insert(
                    k.clone(),
                    Utilisation {
                        used,
                        available: x["available"].as_u64().unwrap_or(0),
                    },
                );
            }
        }
    }
    // One clock: the one named after clk (nextpnr names the global net after the pin).
    let fmax = v["fmax"].as_object().and_then(|m| {
        m.iter()
            .find(|(k, _)| k.contains("clk"))
            .or_else(|| m.iter().next())
            .and_then(|(_, x)| x["achieved"].as_f64())
    });
    let path = v["critical_paths"].as_array().and_then(|paths| {
        let p = paths.iter().find(|p| {
            let from = p["from"].as_str().unwrap_or("");
            let to = p["to"].as_str().unwrap_or("");
            from.contains("posedge") && to.contains("posedge")
        })?;
        let steps = p["path"].as_array()?;
        let cell =
            |s: &serde_json::Value, end: &str| s[end]["cell"].as_str().unwrap_or("?").to_string();
        let delay = |s: &&serde_json::Value| s["delay"].as_f64().unwrap_or(0.0);
        Some(PnrPath {
            from: cell(steps.first()?, "from"),
            to: cell(steps.last()?, "to"),
            logic_levels: steps.iter().filter(|s| s["type"] == "logic").count() as u32,
            delay_ns: steps.iter().map(|s| delay(&s)).sum(),
            routing_ns: steps
                .iter()
                .filter(|s| s["type"] == "routing")
                .map(|s| delay(&s))
                .sum(),
        })
    });
    (util, fmax, path)
}

/// Place and route `unit` on `family`, every file in `dir`; `progress` sees each step and
/// every line nextpnr prints.
pub fn pnr_in(
    unit: &GeneratedUnit,
    family: Family,
    mode: ShellMode,
    dir: &Path,
    progress: &dyn Fn(&str),
) -> Result<PnrReport, ToolError> {
    let failed = |why: String| ToolError::Failed {
        exe: format!("{family} place and route"),
        code: None,
        output: why,
    };
    let exe = family_exe(family)?;
    let (period_ns, devices) = family_target(family).map_err(failed)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ToolError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;

    let unit_pins = shell::unit_pins(unit);
    let first = &devices[0];
    let (use_shell, reason) = match mode {
        ShellMode::Always => (true, "--shell always".to_string()),
        ShellMode::Never => (false, "--shell never".to_string()),
        ShellMode::Auto if unit_pins as u64 > first.io => (
            true,
            format!(
                "{unit_pins} port bits with the clock > {} pins of {} {}",
                first.io, first.name, first.package
            ),
        ),
        ShellMode::Auto if !shell::has_state(unit) => (
            true,
            "no state of its own: the shell's registers give it reg-to-reg paths".to_string(),
        ),
        ShellMode::Auto => (
            false,
            format!(
                "{unit_pins} port bits with the clock fit the {} pins of {} {}",
                first.io, first.name, first.package
            ),
        ),
    };
    let design = if use_shell {
        shell::wrap(unit).map_err(|e| failed(e.to_string()))?
    } else {
        unit.clone()
    };
    let top = design.manifest.top.clone();
    let shell_use = ShellUse {
        used: use_shell,
        reason,
        unit_pins,
        layout: use_shell.then(|| shell::layout(unit)),
    };

    progress(&format!("yosys synth_{family} of {top}"));
    let mut steps = fpga_flow(&top, family);
    let stem = format!("{family}_pnr");
    steps[0] += &format!(" -json {top}.json");
    steps[1] = format!("tee -q -o {stem}_stat.json stat -json");
    let (v, yosys) = run_yosys(&design, dir, &steps, &stem)?;
    let mapped = fpga_report(&design, family, &v, yosys.clone(), steps)?;

    let target_mhz = 1000.0 / period_ns;
    let mut report = PnrReport {
        module: unit.module().to_string(),
        params: unit.manifest.params.clone(),
        family,
        device: devices.last().expect("devices").clone(),
        shell: shell_use,
        fits: false,
        not_fit: None,
        mapped,
        utilisation: BTreeMap::new(),
        target_mhz,
        fmax_mhz: None,
        critical_path: None,
        tools: vec![yosys],
        dir: dir.to_path_buf(),
        note: PNR_NOTE.into(),
    };
    let Some(device) = devices
        .iter()
        .find(|d| fits(&report.mapped, d).is_ok())
        .cloned()
    else {
        let d = devices.last().expect("devices");
        report.not_fit = Some(format!(
            "the Yosys mapping needs {} on the largest {family} device of \
             constraints/targets.toml ({} {}); nextpnr was not run",
            fits(&report.mapped, d).unwrap_err(),
            d.name,
            d.package
        ));
        return Ok(report);
    };
    report.device = device.clone();

    let pins: Vec<&str> = if use_shell {
        shell::PINS.to_vec()
    } else {
        vec!["clk"]
    };
    let cons = render_constraints(family, &device, &pins, target_mhz).map_err(failed)?;
    let (cons_name, cons_opt, allow) = match family {
        Family::Ecp5 => (format!("{top}.lpf"), "--lpf", "--lpf-allow-unconstrained"),
        _ => (format!("{top}.pcf"), "--pcf", "--pcf-allow-unconstrained"),
    };
    let cons_path = dir.join(&cons_name);
    std::fs::write(&cons_path, cons).map_err(io(&cons_path))?;
    let report_name = format!("{family}_pnr_report.json");
    let log_name = format!("{family}_nextpnr.log");
    let mut args: Vec<String> = vec![
        device.arg.clone(),
        "--package".into(),
        device.package.clone(),
    ];
    if let Some(s) = device.speed {
        args.extend(["--speed".into(), s.to_string()]);
    }
    args.extend([
        "--json".into(),
        format!("{top}.json"),
        cons_opt.into(),
        cons_name,
        "--freq".into(),
        format!("{target_mhz}"),
        "--seed".into(),
        "1".into(),
        // A missed target is a figure to report, not a failed run.
        "--timing-allow-fail".into(),
        "--report".into(),
        report_name.clone(),
        "--log".into(),
        log_name.clone(),
    ]);
    if !use_shell {
        args.push(allow.into());
    }
    // The command line, to rerun it outside warpforge.
    let cmd_path = dir.join(format!("{family}_nextpnr.sh"));
    std::fs::write(
        &cmd_path,
        format!(
            "#!/bin/sh\n# place and route as warpforge ran it\n{} {}\n",
            exe.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("nextpnr"),
            args.join(" ")
        ),
    )
    .map_err(io(&cmd_path))?;
    report.tools.push(version(&exe, dir));
    progress(&format!(
        "{} on {} {} ({} LUTs, {} flip-flops)",
        exe.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("nextpnr"),
        device.name,
        device.package,
        report.mapped.luts,
        report.mapped.ffs
    ));
    let ran = tools::run_streaming(&exe, &args, dir, progress)?;
    if ran.code != Some(0) {
        if let Some(why) = fit_error(&ran.text) {
            report.not_fit = Some(format!("nextpnr: {why}"));
            return Ok(report);
        }
        return Err(ToolError::Failed {
            exe: exe.display().to_string(),
            code: ran.code,
            output: format!(
                "see {}\n{}",
                dir.join(&log_name).display(),
                ran.text
                    .lines()
                    .filter(|l| l.contains("ERROR"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        });
    }
    let rp = dir.join(&report_name);
    let text = std::fs::read_to_string(&rp).map_err(io(&rp))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| failed(format!("{}: bad JSON: {e}", rp.display())))?;
    let (util, fmax, path) = parse_report(&v);
    report.fits = true;
    report.utilisation = util;
    report.fmax_mhz = fmax;
    report.critical_path = path;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_devices_with_the_shells_pins() {
        for family in [Family::Ecp5, Family::Ice40] {
            let (period, devices) = family_target(family).unwrap();
            assert!(period > 0.0);
            for d in &devices {
                for p in shell::PINS {
                    assert!(d.pins.contains_key(p), "{} pin {p}", d.name);
                }
            }
            // Smallest first: the shell decision is taken against the first.
            assert!(devices.windows(2).all(|w| w[0].luts <= w[1].luts));
        }
        let lpf = render_constraints(
            Family::Ecp5,
            &family_target(Family::Ecp5).unwrap().1[0],
            &["clk"],
            100.0,
        )
        .unwrap();
        assert!(lpf.contains("FREQUENCY PORT \"clk\" 100 MHz;"), "{lpf}");
        assert!(lpf.contains("LOCATE COMP \"clk\" SITE \"P6\";"), "{lpf}");
    }

    #[test]
    fn report_json_is_read() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"critical_paths": [
                {"from": "<async>", "to": "posedge clk", "path": []},
                {"from": "posedge $glbnet$clk", "to": "posedge $glbnet$clk", "path": [
                  {"type": "clk-to-q", "delay": 0.5, "from": {"cell": "a"}, "to": {"cell": "a"}},
                  {"type": "routing", "delay": 1.25, "from": {"cell": "a"}, "to": {"cell": "l"}},
                  {"type": "logic", "delay": 0.5, "from": {"cell": "l"}, "to": {"cell": "l"}},
                  {"type": "routing", "delay": 1.0, "from": {"cell": "l"}, "to": {"cell": "b"}},
                  {"type": "setup", "delay": 0.25, "from": {"cell": "b"}, "to": {"cell": "b"}}]}],
              "fmax": {"$glbnet$clk$TRELLIS_IO_IN": {"achieved": 123.5, "constraint": 100}},
              "utilization": {"TRELLIS_FF": {"available": 24288, "used": 7},
                              "DP16KD": {"available": 56, "used": 0}}}"#,
        )
        .unwrap();
        let (u, f, p) = parse_report(&v);
        assert_eq!(f, Some(123.5));
        assert_eq!(u.len(), 1, "unused resources are left out");
        assert_eq!(u["TRELLIS_FF"].used, 7);
        let p = p.unwrap();
        assert_eq!((p.from.as_str(), p.to.as_str()), ("a", "b"));
        assert_eq!(p.logic_levels, 1);
        assert_eq!(p.delay_ns, 3.5);
        assert_eq!(p.routing_ns, 2.25);
        assert!(fit_error("ERROR: Unable to place cell 'x', no BELs remaining to implement cell type 'ICESTORM_LC'").is_some());
        assert!(fit_error("ERROR: something else").is_none());
    }
}
