//! One measurement per (unit, parameter set, target), its figures, and the checked-in
//! baselines of them (`baselines/synth-<target>.json`).
//!
//! A baseline holds, for every unit with a template at every standard parameter set, the
//! hash of the generated RTL (the manifest's `content_hash`) and the figures of one target,
//! with the tool versions that measured them. [`compare`] lists every difference, in
//! either direction: an RTL hash that moved, a figure that moved (better or worse), a set
//! without a baseline entry or an entry without a set. A difference is explained by
//! accepting a new baseline (`warpforge synth --all --target T --accept-baseline`) in the
//! commit that causes it.

use crate::asic::{self, AsicReport};
use crate::pnr::{self, PnrReport, ShellMode};
use crate::synth::{self, Family, FpgaReport, SynthReport};
use crate::tools::ToolError;
use crate::GeneratedUnit;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// Standard sets above this many state bits (the width of the debug-state ports, i.e. the
/// whole state) take minutes to hours in every flow (the 64-warp x 256-register scoreboard:
/// 65,536 bits); `synth --all --skip-heavy` leaves them out, as the lint test's default run.
pub const HEAVY_STATE_BITS: u64 = 32_768;

/// The unit's state bits, estimated by its debug-state ports.
pub fn state_bits(g: &GeneratedUnit) -> u64 {
    g.manifest
        .ports
        .iter()
        .filter(|p| p.role == warpforge_model::units::contract::Role::Debug)
        .map(|p| p.width as u64)
        .sum()
}

/// What `warpforge synth` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Yosys' generic gates and the transistor estimate.
    Generic,
    /// OSU 0.18 um cells, OpenSTA.
    Osu018,
    /// Yosys' vendor flow: cell counts.
    Fpga(Family),
    /// Vendor flow, then nextpnr place and route.
    Pnr(Family),
}

impl Target {
    /// `generic`, `osu018`, `ecp5`, `ecp5-pnr`...: the baseline file's suffix.
    pub fn name(self) -> String {
        match self {
            Target::Generic => "generic".into(),
            Target::Osu018 => "osu018".into(),
            Target::Fpga(f) => f.name().into(),
            Target::Pnr(f) => format!("{}-pnr", f.name()),
        }
    }

    /// The checked-in baseline of this target, relative to the repository root.
    pub fn baseline_path(self) -> String {
        format!("baselines/synth-{}.json", self.name())
    }
}

/// The report of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Measured {
    Generic(SynthReport),
    Asic(AsicReport),
    Fpga(FpgaReport),
    Pnr(Box<PnrReport>),
}

/// Measure `g` for `target`; `dir` keeps the flow's files (scripts, netlists, logs; for
/// Xilinx the XDC and Vivado script too).
pub fn measure(
    g: &GeneratedUnit,
    target: Target,
    shell: ShellMode,
    dir: &Path,
    progress: &dyn Fn(&str),
) -> Result<Measured, ToolError> {
    Ok(match target {
        Target::Generic => {
            progress("yosys generic synthesis");
            Measured::Generic(synth::synth(g)?)
        }
        Target::Osu018 => {
            progress("yosys + ABC to OSU 0.18 um cells, OpenSTA");
            Measured::Asic(asic::osu018_in(g, dir)?)
        }
        Target::Fpga(f) => {
            progress(&format!("yosys synth_{f}"));
            Measured::Fpga(synth::fpga_in(g, f, dir)?)
        }
        Target::Pnr(f) => Measured::Pnr(Box::new(pnr::pnr_in(g, f, shell, dir, progress)?)),
    })
}

fn round(x: f64, digits: i32) -> f64 {
    let k = 10f64.powi(digits);
    (x * k).round() / k
}

impl Measured {
    /// The figures a baseline records (and the summary table shows), in display order.
    pub fn figures(&self) -> Vec<(&'static str, Value)> {
        match self {
            Measured::Generic(r) => vec![
                ("flops", json!(r.flops)),
                ("cells", json!(r.total_cells)),
                ("transistors", json!(r.transistors)),
            ],
            Measured::Asic(r) => vec![
                ("area_um2", json!(round(r.area_um2, 0))),
                ("cells", json!(r.cells)),
                ("flops", json!(r.flops)),
                ("leakage_nw", json!(round(r.leakage_nw, 1))),
                ("worst_slack_ns", json!(round(r.worst_slack_ns, 3))),
                ("fmax_mhz", json!(round(r.fmax_mhz, 1))),
                ("levels", json!(r.critical_path.levels)),
            ],
            Measured::Fpga(r) => vec![
                ("luts", json!(r.luts)),
                ("ffs", json!(r.ffs)),
                ("lut_ram", json!(r.lut_ram)),
                ("block_ram", json!(r.block_ram)),
                ("carry", json!(r.carry)),
                ("dsp", json!(r.dsp)),
            ],
            Measured::Pnr(r) => {
                let mut v = vec![
                    ("device", json!(r.device.name)),
                    ("shell", json!(r.shell.used)),
                    ("fits", json!(r.fits)),
                    ("luts", json!(r.mapped.luts)),
                    ("ffs", json!(r.mapped.ffs)),
                    ("block_ram", json!(r.mapped.block_ram)),
                ];
                if r.fits {
                    // The main logic resource as nextpnr counts it.
                    let lc = ["TRELLIS_COMB", "TRELLIS_SLICE", "ICESTORM_LC"]
                        .iter()
                        .find_map(|k| r.utilisation.get(*k).map(|u| (*k, u)));
                    if let Some((_, u)) = lc {
                        v.push(("logic_used", json!(u.used)));
                        v.push(("logic_available", json!(u.available)));
                    }
                    v.push(("fmax_mhz", json!(r.fmax_mhz.map(|x| round(x, 1)))));
                }
                v
            }
        }
    }

    /// The versions of the tools that measured it.
    pub fn tools(&self) -> Vec<String> {
        match self {
            Measured::Generic(r) => vec![r.yosys.clone()],
            Measured::Asic(r) => r.tools.clone(),
            Measured::Fpga(r) => vec![r.yosys.clone()],
            Measured::Pnr(r) => r.tools.clone(),
        }
    }
}

impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Measured::Generic(r) => r.fmt(f),
            Measured::Asic(r) => r.fmt(f),
            Measured::Fpga(r) => r.fmt(f),
            Measured::Pnr(r) => r.fmt(f),
        }
    }
}

/// One unit at one parameter set in a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub unit: String,
    /// `NAME=VALUE,...` in declaration order.
    pub params: String,
    /// The manifest's `content_hash` of the generated RTL.
    pub rtl_hash: String,
    /// The figures (see [`Measured::figures`]); empty when the measurement failed.
    pub figures: BTreeMap<String, Value>,
    /// Why there are no figures (the flow's error), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A checked-in baseline of one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub target: String,
    pub generator: String,
    /// Every tool version seen while measuring (sorted, deduplicated).
    pub tools: Vec<String>,
    pub entries: Vec<Entry>,
}

impl Baseline {
    pub fn read(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn write(&self, path: &Path) -> Result<(), String> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let text = serde_json::to_string_pretty(self).expect("a baseline serializes") + "\n";
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn find(&self, unit: &str, params: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.unit == unit && e.params == params)
    }

    /// This baseline with `unit`'s entries only (what a run of `--unit U` compares with).
    pub fn of_unit(&self, unit: &str) -> Baseline {
        Baseline {
            entries: self
                .entries
                .iter()
                .filter(|e| e.unit == unit)
                .cloned()
                .collect(),
            ..self.clone()
        }
    }

    /// This baseline with `unit`'s entries replaced by `entries` (measured by `tools`): the
    /// other units' entries stay as they are, in their places; the new entries take the
    /// place of the unit's first old one (or go last when it had none). Accepting one
    /// unit's new figures this way does not measure the others again.
    pub fn with_unit_replaced(
        &self,
        unit: &str,
        entries: Vec<Entry>,
        tools: &[String],
    ) -> Baseline {
        let at = self
            .entries
            .iter()
            .position(|e| e.unit == unit)
            .unwrap_or(self.entries.len());
        let mut kept: Vec<Entry> = self
            .entries
            .iter()
            .filter(|e| e.unit != unit)
            .cloned()
            .collect();
        let at = at.min(kept.len());
        kept.splice(at..at, entries);
        let mut all_tools = self.tools.clone();
        all_tools.extend(tools.iter().cloned());
        all_tools.sort();
        all_tools.dedup();
        Baseline {
            target: self.target.clone(),
            generator: self.generator.clone(),
            tools: all_tools,
            entries: kept,
        }
    }
}

/// The entry of `g` measured as `m` (or failed with `error`).
pub fn entry(g: &GeneratedUnit, m: Result<&Measured, String>) -> Entry {
    let (figures, error) = match m {
        Ok(m) => (
            m.figures()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            None,
        ),
        Err(e) => (BTreeMap::new(), Some(e)),
    };
    Entry {
        unit: g.module().to_string(),
        params: g.params.to_string(),
        rtl_hash: g.manifest.content_hash.clone(),
        figures,
        error,
    }
}

/// The entry of `g` with its RTL hash only (no figure measured: [`compare_entry`] then
/// compares the hash alone).
pub fn hash_entry(g: &GeneratedUnit) -> Entry {
    Entry {
        unit: g.module().to_string(),
        params: g.params.to_string(),
        rtl_hash: g.manifest.content_hash.clone(),
        figures: BTreeMap::new(),
        error: None,
    }
}

/// One difference between a baseline and a new measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    pub unit: String,
    pub params: String,
    /// `rtl_hash`, a figure's name, `entry` (a set missing on one side) or `error`.
    pub what: String,
    pub old: String,
    pub new: String,
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}: baseline {}, now {}",
            self.unit, self.params, self.what, self.old, self.new
        )
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "(none)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// Every difference of `new` against `old` for one set: the RTL hash, then each figure
/// (only the figures `new` has, so a partial re-measurement compares what it measured).
pub fn compare_entry(old: &Entry, new: &Entry) -> Vec<Diff> {
    let diff = |what: &str, o: String, n: String| Diff {
        unit: new.unit.clone(),
        params: new.params.clone(),
        what: what.into(),
        old: o,
        new: n,
    };
    let mut out = vec![];
    if old.rtl_hash != new.rtl_hash {
        out.push(diff("rtl_hash", old.rtl_hash.clone(), new.rtl_hash.clone()));
    }
    if (new.error.is_some() || !new.figures.is_empty()) && old.error != new.error {
        out.push(diff(
            "error",
            old.error.clone().unwrap_or_else(|| "(none)".into()),
            new.error.clone().unwrap_or_else(|| "(none)".into()),
        ));
    }
    for (k, v) in &new.figures {
        if old.figures.get(k) != Some(v) {
            out.push(diff(k, show(old.figures.get(k)), show(Some(v))));
        }
    }
    out
}

/// Every difference between the baseline `old` and the entries `new` (a full run: sets
/// missing on either side are differences too).
pub fn compare(old: &Baseline, new: &[Entry]) -> Vec<Diff> {
    let mut out = vec![];
    for n in new {
        match old.find(&n.unit, &n.params) {
            Some(o) => out.extend(compare_entry(o, n)),
            None => out.push(Diff {
                unit: n.unit.clone(),
                params: n.params.clone(),
                what: "entry".into(),
                old: "(no baseline entry)".into(),
                new: "measured".into(),
            }),
        }
    }
    for o in &old.entries {
        if !new.iter().any(|n| n.unit == o.unit && n.params == o.params) {
            out.push(Diff {
                unit: o.unit.clone(),
                params: o.params.clone(),
                what: "entry".into(),
                old: "in the baseline".into(),
                new: "(no such standard set any more)".into(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(hash: &str, flops: u64) -> Entry {
        Entry {
            unit: "u".into(),
            params: "A=1".into(),
            rtl_hash: hash.into(),
            figures: [("flops".to_string(), json!(flops))].into_iter().collect(),
            error: None,
        }
    }

    #[test]
    fn one_units_entries_are_replaced_in_place() {
        let mut a = e("h1", 10);
        a.unit = "a".into();
        let mut z = e("h1", 30);
        z.unit = "z".into();
        let old = Baseline {
            target: "generic".into(),
            generator: "g".into(),
            tools: vec!["yosys 1".into()],
            entries: vec![a.clone(), e("h1", 10), e("h1", 10), z.clone()],
        };
        let mut u2 = e("h2", 12);
        u2.params = "A=2".into();
        let new = old.with_unit_replaced("u", vec![e("h2", 11), u2.clone()], &["nextpnr 2".into()]);
        assert_eq!(
            new.entries,
            vec![a.clone(), e("h2", 11), u2.clone(), z.clone()]
        );
        assert_eq!(new.tools, vec!["nextpnr 2".to_string(), "yosys 1".into()]);
        // A unit the baseline did not have goes last.
        let mut n = e("h3", 1);
        n.unit = "new".into();
        let added = old.with_unit_replaced("new", vec![n.clone()], &[]);
        assert_eq!(added.entries.len(), 5);
        assert_eq!(added.entries[4], n);
        assert_eq!(old.of_unit("z").entries, vec![z.clone()]);
        assert!(old.of_unit("none").entries.is_empty());
    }

    #[test]
    fn changes_in_either_direction_are_differences() {
        let old = Baseline {
            target: "generic".into(),
            generator: "g".into(),
            tools: vec![],
            entries: vec![e("h1", 10)],
        };
        assert!(compare(&old, &[e("h1", 10)]).is_empty());
        let up = compare(&old, &[e("h1", 11)]);
        assert_eq!(up.len(), 1);
        assert_eq!(up[0].to_string(), "u (A=1): flops: baseline 10, now 11");
        assert_eq!(compare(&old, &[e("h1", 9)]).len(), 1, "an improvement too");
        let h = compare(&old, &[e("h2", 10)]);
        assert_eq!(h[0].what, "rtl_hash");
        let mut other = e("h1", 10);
        other.params = "A=2".into();
        assert_eq!(compare(&old, &[other]).len(), 2, "one new set, one gone");
    }
}
