//! Area, leakage and static timing of a generated unit in a real standard-cell library: the
//! OSU 0.18 µm cells of Debian's `qflow-tech-osu018`, mapped by Yosys and ABC, timed by
//! Debian's OpenSTA.
//!
//! The flow's scripts and constraints are the files in `constraints/` (read here at build
//! time, so what runs is what a user reads there): `osu018_synth.ys` and
//! `osu018_abc.script` (Yosys and ABC), [`buffer_fanout`] on the mapped netlist, the unit's
//! `unit.sdc` rendered at the target's period (`targets.toml`), and `osu018_sta.tcl`. Every
//! rendered file is left in the output folder with the netlist, so the run can be repeated
//! outside warpforge.
//!
//! The figures are **estimates**: cell area and leakage summed from the liberty (no
//! placement, no wires, ideal clock), timing with the library's pin capacitances only (no
//! wire load). Fit for comparing units and parameter sets and for a first Fmax; not
//! sign-off.

use crate::synth::{param_line, run_yosys};
use crate::tools::{self, ToolError, ToolSpec};
use crate::GeneratedUnit;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

pub const SYNTH_SCRIPT: &str = include_str!("../../constraints/osu018_synth.ys");
pub const ABC_SCRIPT: &str = include_str!("../../constraints/osu018_abc.script");
pub const STA_SCRIPT: &str = include_str!("../../constraints/osu018_sta.tcl");
pub const UNIT_SDC: &str = include_str!("../../constraints/unit.sdc");
pub const TARGETS: &str = include_str!("../../constraints/targets.toml");

pub const OSU018_LIB: &str = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";

pub const OPENSTA: ToolSpec = ToolSpec {
    exe: "sta",
    install: "apt-get install -y opensta qflow-tech-osu018 (or scripts/install-tools.sh)",
};

/// What the figures are, printed with them.
pub const ASIC_NOTE: &str = "estimate: OSU 0.18 um standard cells (qflow-tech-osu018, typical \
    corner, 1.8 V, 25 C); area and leakage are the sum of the mapped cells' liberty values \
    (no placement, wiring or clock tree; RAM storage as flip-flops); timing by OpenSTA with \
    pin loads only and an ideal clock";

/// A technology's target from `constraints/targets.toml`.
#[derive(Debug, Clone, Deserialize)]
pub struct Target {
    pub period_ns: f64,
    pub driver_cell: Option<String>,
    pub max_fanout: Option<usize>,
    /// The device of a flow that names one (Xilinx: the Vivado script's part).
    pub part: Option<String>,
}

/// The target of technology `name` (`osu018`, `ecp5`).
pub fn target(name: &str) -> Result<Target, String> {
    let all: BTreeMap<String, Target> =
        toml::from_str(TARGETS).map_err(|e| format!("constraints/targets.toml: {e}"))?;
    all.get(name)
        .cloned()
        .ok_or_else(|| format!("constraints/targets.toml has no [{name}]"))
}

/// One cell of a liberty file: what the estimates need.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LibCell {
    /// µm².
    pub area: f64,
    /// nW (the library's `leakage_power_unit`).
    pub leakage_nw: f64,
    pub outputs: Vec<String>,
}

/// The cells of a liberty file, by name. A small reader of the attributes used here (`cell`,
/// `area`, `cell_leakage_power`, `pin` with `direction`), not a liberty parser.
pub fn read_liberty(text: &str) -> HashMap<String, LibCell> {
    let mut cells = HashMap::new();
    let mut cell: Option<(String, LibCell)> = None;
    let mut pin: Option<String> = None;
    for line in text.lines().map(str::trim) {
        let group = |kw: &str| {
            line.strip_prefix(kw)
                .and_then(|r| r.trim_start().strip_prefix('('))
                .and_then(|r| r.split(')').next())
                .map(|n| n.trim().trim_matches('"').to_string())
        };
        if let Some(name) = group("cell") {
            if let Some((n, c)) = cell.take() {
                cells.insert(n, c);
            }
            cell = Some((name, LibCell::default()));
            pin = None;
        } else if let Some(name) = group("pin") {
            pin = Some(name);
        } else if let Some((_, c)) = cell.as_mut() {
            let value = |kw: &str| {
                line.strip_prefix(kw)
                    .and_then(|r| r.trim_start().strip_prefix(':'))
                    .map(|r| r.trim().trim_end_matches(';').trim().trim_matches('"'))
            };
            if let Some(v) = value("area") {
                c.area = v.parse().unwrap_or(0.0);
            } else if let Some(v) = value("cell_leakage_power") {
                c.leakage_nw = v.parse().unwrap_or(0.0);
            } else if value("direction") == Some("output") {
                if let Some(p) = &pin {
                    c.outputs.push(p.clone());
                }
            }
        }
    }
    if let Some((n, c)) = cell {
        cells.insert(n, c);
    }
    cells
}

/// One cell instance of a netlist as Yosys' `write_verilog -noattr -noexpr` prints it.
pub(crate) struct Instance {
    pub(crate) cell: String,
    pub(crate) name: String,
    /// (pin, net) in order.
    pub(crate) pins: Vec<(String, String)>,
}

/// The netlist split into the text before the first instance, the instances, and the text
/// after the last (`endmodule`). Yosys prints an instance as `  CELL NAME (` then one
/// `    .PIN(NET),` line per pin and `  );`.
pub(crate) fn split_netlist(text: &str) -> Result<(String, Vec<Instance>, String), String> {
    let lines: Vec<&str> = text.lines().collect();
    let is_start = |l: &str| {
        l.starts_with("  ")
            && !l.starts_with("   ")
            && l.trim_end().ends_with('(')
            && !l.trim_start().starts_with("module")
    };
    let first = lines
        .iter()
        .position(|l| is_start(l))
        .ok_or("the mapped netlist has no cell")?;
    let mut insts = Vec::new();
    let mut i = first;
    while i < lines.len() && is_start(lines[i]) {
        let head: Vec<&str> = lines[i].split_whitespace().collect();
        let (cell, name) = match head.as_slice() {
            [c, n, "("] => (c.to_string(), n.to_string()),
            _ => return Err(format!("netlist line {}: unexpected `{}`", i + 1, lines[i])),
        };
        let mut pins = Vec::new();
        i += 1;
        while i < lines.len() && lines[i].trim() != ");" {
            let p = lines[i].trim().trim_end_matches(',');
            let (pin, net) = p
                .strip_prefix('.')
                .and_then(|p| p.split_once('('))
                .and_then(|(pin, rest)| Some((pin, rest.strip_suffix(')')?)))
                .ok_or_else(|| format!("netlist line {}: unexpected `{}`", i + 1, lines[i]))?;
            pins.push((pin.to_string(), net.to_string()));
            i += 1;
        }
        insts.push(Instance { cell, name, pins });
        i += 1;
    }
    let head = lines[..first].join("\n") + "\n";
    let tail = lines[i.min(lines.len())..].join("\n") + "\n";
    Ok((head, insts, tail))
}

/// Buffer trees on every net (the clock excepted) with more than `max_fanout` cell inputs:
/// its sinks are split into groups of at most `max_fanout`, each behind a `buf` cell (input
/// `A`, output `Y`), repeated until no net drives more. ABC buffers the nets inside its
/// network; the outputs of flip-flops and the unit's inputs enter ABC as primary inputs and
/// reach hundreds of gates (a stack's depth register selects in every entry), which is what
/// placement tools repair with exactly such trees. Returns the netlist and the buffers added.
pub fn buffer_fanout(
    netlist: &str,
    lib: &HashMap<String, LibCell>,
    max_fanout: usize,
    buf: &str,
    clock: &str,
) -> Result<(String, usize), String> {
    let (mut head, mut insts, tail) = split_netlist(netlist)?;
    let max_fanout = max_fanout.max(2);
    let mut added = 0;
    let mut new_wires = String::new();
    loop {
        // The sinks of every net: (instance, pin index).
        let mut sinks: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
        for (k, inst) in insts.iter().enumerate() {
            let outputs = &lib
                .get(&inst.cell)
                .ok_or_else(|| format!("cell {} is not in the liberty", inst.cell))?
                .outputs;
            if outputs.is_empty() {
                return Err(format!(
                    "cell {} has no output pin in the liberty",
                    inst.cell
                ));
            }
            for (j, (pin, net)) in inst.pins.iter().enumerate() {
                let constant = net.starts_with(|c: char| c.is_ascii_digit());
                if !outputs.contains(pin) && !constant && net.trim() != clock {
                    sinks.entry(net.clone()).or_default().push((k, j));
                }
            }
        }
        let mut heavy: Vec<(String, Vec<(usize, usize)>)> = sinks
            .into_iter()
            .filter(|(_, s)| s.len() > max_fanout)
            .collect();
        if heavy.is_empty() {
            break;
        }
        heavy.sort_by(|a, b| a.0.cmp(&b.0));
        for (net, s) in heavy {
            for group in s.chunks(max_fanout) {
                added += 1;
                let wire = format!("_wf_fanout_{added}_");
                new_wires += &format!("  wire {wire};\n");
                for &(k, j) in group {
                    insts[k].pins[j].1 = wire.clone();
                }
                insts.push(Instance {
                    cell: buf.to_string(),
                    name: format!("_wf_fanout_buf_{added}_"),
                    pins: vec![("A".into(), net.clone()), ("Y".into(), wire)],
                });
            }
        }
    }
    head += &new_wires;
    let mut out = head;
    for inst in &insts {
        out += &format!("  {} {} (\n", inst.cell, inst.name);
        let n = inst.pins.len();
        for (j, (pin, net)) in inst.pins.iter().enumerate() {
            out += &format!("    .{pin}({net}){}\n", if j + 1 < n { "," } else { "" });
        }
        out += "  );\n";
    }
    out += &tail;
    Ok((out, added))
}

/// The worst path OpenSTA reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    pub startpoint: String,
    pub endpoint: String,
    /// Cells the path goes through (flip-flop clock-to-Q included).
    pub levels: u32,
    /// ns from the clock edge (input delay included for a path from an input).
    pub arrival_ns: f64,
}

/// Area, leakage and timing of one unit instance in OSU 0.18 µm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AsicReport {
    pub module: String,
    pub params: BTreeMap<String, u64>,
    pub technology: String,
    /// Cell counts by library cell, buffers added by the fanout pass included.
    pub cells_by_type: BTreeMap<String, u64>,
    pub cells: u64,
    pub flops: u64,
    pub fanout_buffers: u64,
    pub area_um2: f64,
    pub leakage_nw: f64,
    pub period_ns: f64,
    /// Slack of the worst path at `period_ns` (negative: the target is missed).
    pub worst_slack_ns: f64,
    pub total_negative_slack_ns: f64,
    /// `1000 / (period - worst slack)`.
    pub fmax_mhz: f64,
    pub critical_path: CriticalPath,
    pub tools: Vec<String>,
    /// Where the rendered scripts, constraints, netlists and logs are.
    pub dir: PathBuf,
    pub note: String,
}

impl fmt::Display for AsicReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params = param_line(&self.params);
        writeln!(f, "{} ({}) in {}", self.module, params, self.technology)?;
        writeln!(
            f,
            "  area {:.0} um^2 ({:.4} mm^2), {} cells ({} flip-flops, {} fan-out buffers)",
            self.area_um2,
            self.area_um2 * 1e-6,
            self.cells,
            self.flops,
            self.fanout_buffers
        )?;
        writeln!(f, "  leakage {:.1} nW", self.leakage_nw)?;
        writeln!(
            f,
            "  timing at {:.2} ns ({:.0} MHz): worst slack {:+.3} ns, total negative slack {:.1} ns -> Fmax {:.0} MHz",
            self.period_ns,
            1000.0 / self.period_ns,
            self.worst_slack_ns,
            self.total_negative_slack_ns,
            self.fmax_mhz
        )?;
        let p = &self.critical_path;
        writeln!(
            f,
            "  critical path: {} -> {}, {} levels, arrival {:.3} ns",
            p.startpoint, p.endpoint, p.levels, p.arrival_ns
        )?;
        writeln!(f, "  files: {}", self.dir.display())?;
        write!(f, "  ({}; {})", self.note, self.tools.join(", "))
    }
}

/// The file in an osu018 run's folder that lets a later run with the same inputs reuse it.
const CACHE_FILE: &str = "osu018_report.json";

/// Part of the cache key: bump it when the flow's Rust side (the fan-out buffering, the
/// netlist and report parsing) changes what a run produces.
const FLOW_REVISION: &str = "osu018 flow revision 1";

/// What an osu018 run's result depends on: the unit's RTL, the flow's scripts and
/// constraints as shipped, the target, the liberty's contents and the Yosys version.
fn cache_key(unit: &GeneratedUnit, t: &Target, lib_text: &str, yosys: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        unit.manifest.content_hash.as_str(),
        FLOW_REVISION,
        SYNTH_SCRIPT,
        ABC_SCRIPT,
        UNIT_SDC,
        STA_SCRIPT,
        lib_text,
        yosys,
        &format!("{:?}", t),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    format!("{:x}", h.finalize())
}

fn sha256(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

#[derive(Serialize, Deserialize)]
struct Cached {
    key: String,
    /// SHA-256 of the `osu018_netlist.v` the report describes (a later failed run may have
    /// replaced it).
    netlist_sha256: String,
    report: AsicReport,
}

/// Synthesise, buffer and time `unit` in OSU 0.18 µm, leaving every file in `dir`.
///
/// A run is kept in `dir` (`osu018_report.json`, keyed by the RTL's hash, the flow's
/// scripts and the target): a later call with the same inputs returns it without running
/// the tools again (the 48-warp scoreboard's mapping takes about 20 minutes), as long as
/// the netlist it describes is still there. Remove the file to force a new run.
pub fn osu018_in(unit: &GeneratedUnit, dir: &Path) -> Result<AsicReport, ToolError> {
    if !Path::new(OSU018_LIB).exists() {
        return Err(ToolError::Missing {
            exe: "qflow-tech-osu018",
            install: OPENSTA.install,
            extra: format!(" ({OSU018_LIB} does not exist)"),
        });
    }
    let t = target("osu018").map_err(|why| ToolError::Failed {
        exe: "osu018 flow".into(),
        code: None,
        output: why,
    })?;
    let lib_text = std::fs::read_to_string(OSU018_LIB).map_err(|source| ToolError::Io {
        path: OSU018_LIB.into(),
        source,
    })?;
    let key = cache_key(unit, &t, &lib_text, &tools::yosys_version()?);
    let cache = dir.join(CACHE_FILE);
    let netlist_path = dir.join("osu018_netlist.v");
    let netlist_hash = || {
        std::fs::read_to_string(&netlist_path)
            .ok()
            .map(|t| sha256(&t))
    };
    if let Some(c) = std::fs::read_to_string(&cache)
        .ok()
        .and_then(|text| serde_json::from_str::<Cached>(&text).ok())
        .filter(|c| c.key == key && Some(&c.netlist_sha256) == netlist_hash().as_ref())
    {
        return Ok(AsicReport {
            dir: dir.to_path_buf(),
            ..c.report
        });
    }
    // A run that fails half-way must not leave an earlier run's report to be reused.
    let _ = std::fs::remove_file(&cache);
    let report = osu018_run(unit, dir)?;
    let text = serde_json::to_string_pretty(&Cached {
        key,
        netlist_sha256: netlist_hash().unwrap_or_default(),
        report: report.clone(),
    })
    .expect("a report serializes");
    std::fs::write(&cache, text).map_err(|source| ToolError::Io {
        path: cache.clone(),
        source,
    })?;
    Ok(report)
}

fn osu018_run(unit: &GeneratedUnit, dir: &Path) -> Result<AsicReport, ToolError> {
    let failed = |why: String| ToolError::Failed {
        exe: "osu018 flow".into(),
        code: None,
        output: why,
    };
    let lib_path = Path::new(OSU018_LIB);
    if !lib_path.exists() {
        return Err(ToolError::Missing {
            exe: "qflow-tech-osu018",
            install: OPENSTA.install,
            extra: format!(" ({OSU018_LIB} does not exist)"),
        });
    }
    let sta = tools::locate(OPENSTA)?;
    let t = target("osu018").map_err(failed)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ToolError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let top = unit.manifest.top.clone();
    let period_ps = format!("{:.0}", t.period_ns * 1000.0);
    let render = |s: &str| {
        s.replace("@TOP@", &top)
            .replace("@LIB@", OSU018_LIB)
            .replace("@ABC_SCRIPT@", "osu018_abc.script")
            .replace("@PERIOD_PS@", &period_ps)
            .replace("@PERIOD_NS@", &format!("{}", t.period_ns))
            .replace("@DRIVER_CELL@", t.driver_cell.as_deref().unwrap_or("INVX1"))
            .replace("@NETLIST@", "osu018_netlist.v")
            .replace("@SDC@", &format!("{top}.sdc"))
    };
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(io(&p))
    };
    write("osu018_abc.script", render(ABC_SCRIPT))?;
    write(&format!("{top}.sdc"), render(UNIT_SDC))?;
    write("osu018_sta.tcl", render(STA_SCRIPT))?;
    let steps: Vec<String> = render(SYNTH_SCRIPT)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(String::from)
        .collect();
    let (_, yosys) = run_yosys(unit, dir, &steps, "osu018")?;

    let lib_text = std::fs::read_to_string(lib_path).map_err(io(lib_path))?;
    let lib = read_liberty(&lib_text);
    let mapped_path = dir.join("osu018_mapped.v");
    let mapped = std::fs::read_to_string(&mapped_path).map_err(io(&mapped_path))?;
    let (netlist, buffers) =
        buffer_fanout(&mapped, &lib, t.max_fanout.unwrap_or(8), "BUFX4", "clk").map_err(failed)?;
    write("osu018_netlist.v", netlist.clone())?;

    let mut cells_by_type: BTreeMap<String, u64> = BTreeMap::new();
    let (_, insts, _) = split_netlist(&netlist).map_err(failed)?;
    for i in &insts {
        *cells_by_type.entry(i.cell.clone()).or_default() += 1;
    }
    let mut area = 0.0;
    let mut leakage = 0.0;
    for (c, n) in &cells_by_type {
        let cell = lib
            .get(c)
            .ok_or_else(|| failed(format!("cell {c} is not in the liberty")))?;
        area += cell.area * *n as f64;
        leakage += cell.leakage_nw * *n as f64;
    }
    let flops = cells_by_type
        .iter()
        .filter(|(c, _)| c.starts_with("DFF"))
        .map(|(_, n)| n)
        .sum();

    let ran = tools::run(
        &sta,
        &["-no_splash".into(), "-exit".into(), "osu018_sta.tcl".into()],
        dir,
    )?;
    write("osu018_sta.log", ran.text.clone())?;
    let mut timing = parse_sta(&ran.text)
        .ok_or_else(|| failed(format!("OpenSTA gave no timing report:\n{}", ran.text)))?;
    // Name a flip-flop end of the path by the register it holds (its Q net), not by the
    // instance name Yosys gave it.
    let register = |inst: &str| {
        insts
            .iter()
            .find(|i| i.name == inst && i.cell.starts_with("DFF"))
            .and_then(|i| i.pins.iter().find(|(p, _)| p == "Q"))
            .map(|(_, net)| format!("{} (register)", net.trim().trim_start_matches('\\')))
            .unwrap_or_else(|| inst.to_string())
    };
    timing.path.startpoint = register(&timing.path.startpoint);
    timing.path.endpoint = register(&timing.path.endpoint);
    Ok(AsicReport {
        module: unit.module().to_string(),
        params: unit.manifest.params.clone(),
        technology: "osu018".into(),
        cells: insts.len() as u64,
        cells_by_type,
        flops,
        fanout_buffers: buffers as u64,
        area_um2: area,
        leakage_nw: leakage,
        period_ns: t.period_ns,
        worst_slack_ns: timing.wns,
        total_negative_slack_ns: timing.tns,
        fmax_mhz: 1000.0 / (t.period_ns - timing.wns),
        critical_path: timing.path,
        tools: vec![yosys, "OpenSTA".into()],
        dir: dir.to_path_buf(),
        note: ASIC_NOTE.into(),
    })
}

struct StaTiming {
    wns: f64,
    tns: f64,
    path: CriticalPath,
}

/// The figures of `report_checks` (one path), `report_wns` and `report_tns`.
fn parse_sta(text: &str) -> Option<StaTiming> {
    let field = |kw: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(kw).map(|r| r.trim().to_string()))
    };
    let num = |kw: &str| field(kw).and_then(|v| v.parse::<f64>().ok());
    let startpoint = field("Startpoint:")?;
    let endpoint = field("Endpoint:")?;
    let arrival = text
        .lines()
        .find(|l| l.trim_end().ends_with("data arrival time"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())?;
    // A cell on the path is a line naming an output pin (`inst/Y (CELL)` after a delay).
    let levels = text
        .lines()
        .take_while(|l| !l.trim_end().ends_with("data arrival time"))
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() >= 3
                && w[w.len() - 1].starts_with('(')
                && (w[w.len() - 2].ends_with("/Y")
                    || w[w.len() - 2].ends_with("/Q")
                    || w[w.len() - 2].ends_with("/YC")
                    || w[w.len() - 2].ends_with("/YS"))
        })
        .count() as u32;
    // The worst path's own slack: `report_wns` says 0 when nothing fails, which would hide
    // how much room a unit that meets its period has.
    let slack = text
        .lines()
        .find(|l| l.contains("slack (MET)") || l.contains("slack (VIOLATED)"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .or_else(|| num("wns"))?;
    Some(StaTiming {
        wns: slack,
        tns: num("tns")?,
        path: CriticalPath {
            startpoint: startpoint.split(" (").next().unwrap_or("").to_string(),
            endpoint: endpoint.split(" (").next().unwrap_or("").to_string(),
            levels,
            arrival_ns: arrival,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = r#"
library(x) {
  cell (INVX1) {
    area : 16;
    cell_leakage_power : 0.05;
    pin(A) {
      direction : input;
    }
    pin(Y) {
      direction : output;
    }
  }
  cell (BUFX4) {
    area : 32;
    cell_leakage_power : 0.1;
    pin(A) {
      direction : input;
    }
    pin(Y) {
      direction : output;
    }
  }
}
"#;

    fn netlist(sinks: usize) -> String {
        let mut s = String::from("module t(clk, a);\n  input clk;\n  input a;\n  wire w;\n");
        s += "  INVX1 _d_ (\n    .A(a),\n    .Y(w)\n  );\n";
        for i in 0..sinks {
            s += &format!("  INVX1 _s{i}_ (\n    .A(w),\n    .Y(o{i})\n  );\n");
        }
        s + "endmodule\n"
    }

    #[test]
    fn liberty_cells_have_area_leakage_and_outputs() {
        let lib = read_liberty(LIB);
        assert_eq!(lib["INVX1"].area, 16.0);
        assert_eq!(lib["BUFX4"].leakage_nw, 0.1);
        assert_eq!(lib["INVX1"].outputs, vec!["Y".to_string()]);
    }

    /// 100 sinks at fan-out 8: 13 buffers on the net, then 2 in front of those 13; every
    /// net ends with at most 8 sinks and every original sink still hangs off the tree.
    #[test]
    fn fanout_trees_bound_every_net() {
        let lib = read_liberty(LIB);
        let (out, added) = buffer_fanout(&netlist(100), &lib, 8, "BUFX4", "clk").unwrap();
        assert_eq!(added, 13 + 2);
        let (_, insts, _) = split_netlist(&out).unwrap();
        let mut fanout: HashMap<&str, usize> = HashMap::new();
        for i in &insts {
            fanout
                .entry(&i.pins[0].1)
                .and_modify(|n| *n += 1)
                .or_insert(1);
        }
        assert!(fanout.values().all(|&n| n <= 8), "{fanout:?}");
        assert_eq!(
            insts.iter().filter(|i| i.name.starts_with("_s")).count(),
            100
        );
        // Unchanged below the limit.
        let (same, none) = buffer_fanout(&netlist(8), &lib, 8, "BUFX4", "clk").unwrap();
        assert_eq!(none, 0);
        assert_eq!(same, netlist(8));
    }

    #[test]
    fn sta_report_is_read() {
        let text = "Startpoint: _1_ (rising edge-triggered flip-flop clocked by clk)
Endpoint: _2_ (rising edge-triggered flip-flop clocked by clk)
            0.000    0.000    0.000   clock clk (rise edge)
   9.823    9.284    8.768    8.768 v _1_/Q (DFFPOSX1)
            9.284    0.000    8.768 v _3_/A (INVX1)
   2.948   23.301   35.821   44.589 ^ _3_/Y (INVX1)
                            44.589   data arrival time
                           -41.290   slack (VIOLATED)
wns -41.29
tns -290.81
";
        let t = parse_sta(text).unwrap();
        assert_eq!(t.wns, -41.29);
        assert_eq!(t.path.levels, 2);
        assert_eq!(t.path.startpoint, "_1_");
        assert_eq!(t.path.arrival_ns, 44.589);
        // A path that meets the period: its slack, not report_wns' 0.
        let met = text
            .replace("-41.290   slack (VIOLATED)", "1.250   slack (MET)")
            .replace("wns -41.29", "wns 0.00");
        assert_eq!(parse_sta(&met).unwrap().wns, 1.25);
    }
}
