//! Gate-level estimates of a generated unit with Yosys.
//!
//! Flow: `synth -flatten` (generic synthesis), `dfflegalize` to plain positive-edge D flops
//! (enables and synchronous resets become logic in front of them), `abc -g` to two-input
//! gates and 2:1 muxes, then `stat -tech cmos`, which knows the transistor count of every one
//! of those cells. The result is an **estimate** from a generic static-CMOS gate model (no
//! cell library, no sizing, no wiring): good for comparing units and parameter sets, not an
//! area in µm².

use crate::tools::{self, ToolError};
use crate::GeneratedUnit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The cells `abc` may map to (plus `$_NOT_`, which it always uses).
pub const GATES: &str = "AND,NAND,OR,NOR,XOR,XNOR,MUX";

/// What the model behind the figures is, printed with them.
pub const ESTIMATE_NOTE: &str = "estimate: Yosys `stat -tech cmos` transistor count after \
    mapping to 2-input gates, 2:1 muxes and plain D flip-flops (generic static CMOS, no cell \
    library, no sizing or wiring)";

/// Gate-level figures of one unit instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SynthReport {
    pub module: String,
    pub params: BTreeMap<String, u64>,
    /// Cell counts by Yosys cell type (`$_AND_`, `$_DFF_P_`, ...).
    pub cells_by_type: BTreeMap<String, u64>,
    /// Flip-flops (`$_DFF_P_` after legalisation).
    pub flops: u64,
    /// Every cell, flip-flops included.
    pub total_cells: u64,
    /// Combinational cells (`total_cells - flops`).
    pub logic_cells: u64,
    /// Estimated transistor count (`stat -tech cmos`).
    pub transistors: u64,
    /// The Yosys version that produced the figures.
    pub yosys: String,
    /// The Yosys commands run after `read_verilog`.
    pub flow: Vec<String>,
    pub note: String,
}

impl fmt::Display for SynthReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        writeln!(f, "{} ({})", self.module, params.join(" "))?;
        let w = self
            .cells_by_type
            .keys()
            .map(|k| k.len())
            .max()
            .unwrap_or(0)
            .max("transistors (est.)".len());
        writeln!(f, "  {:<w$}  {:>9}", "cell", "count")?;
        for (k, v) in &self.cells_by_type {
            writeln!(f, "  {k:<w$}  {v:>9}")?;
        }
        writeln!(f, "  {}", "-".repeat(w + 11))?;
        writeln!(f, "  {:<w$}  {:>9}", "flip-flops", self.flops)?;
        writeln!(f, "  {:<w$}  {:>9}", "logic cells", self.logic_cells)?;
        writeln!(f, "  {:<w$}  {:>9}", "total cells", self.total_cells)?;
        writeln!(f, "  {:<w$}  {:>9}", "transistors (est.)", self.transistors)?;
        write!(f, "  ({}; {})", self.note, self.yosys)
    }
}

/// The synthesis script (after the `read_verilog` lines).
pub fn flow(top: &str) -> Vec<String> {
    vec![
        format!("synth -top {top} -flatten"),
        "dfflegalize -cell $_DFF_P_ 01".into(),
        format!("abc -g {GATES}"),
        "opt_clean -purge".into(),
        "tee -q -o synth_stat.json stat -json -tech cmos".into(),
    ]
}

/// Synthesise `unit` in a scratch folder.
pub fn synth(unit: &GeneratedUnit) -> Result<SynthReport, ToolError> {
    let dir = tools::scratch_dir(&format!("synth-{}", unit.module()))?;
    let r = synth_in(unit, &dir);
    if r.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    r
}

/// Synthesise `unit`, writing its files and the Yosys script and log into `dir`.
pub fn synth_in(unit: &GeneratedUnit, dir: &Path) -> Result<SynthReport, ToolError> {
    let exe = tools::locate(tools::YOSYS)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ToolError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for (name, text) in &unit.files {
        std::fs::write(dir.join(name), text).map_err(io(&dir.join(name)))?;
    }
    let top = &unit.manifest.top;
    let steps = flow(top);
    let mut script: String = unit
        .manifest
        .files
        .iter()
        .map(|f| format!("read_verilog {f}\n"))
        .collect();
    for s in &steps {
        script += s;
        script.push('\n');
    }
    let ys = dir.join("synth.ys");
    std::fs::write(&ys, script).map_err(io(&ys))?;
    let ran = tools::run(
        &exe,
        &[
            "-q".into(),
            "-l".into(),
            "synth.log".into(),
            "-s".into(),
            "synth.ys".into(),
        ],
        dir,
    )?;
    let failed = |why: &str| ToolError::Failed {
        exe: "yosys".into(),
        code: ran.code,
        output: format!("{why}\n{}", ran.text.trim()),
    };
    if ran.code != Some(0) {
        return Err(failed("synthesis failed"));
    }
    let json_path = dir.join("synth_stat.json");
    let text = std::fs::read_to_string(&json_path).map_err(io(&json_path))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| failed(&format!("bad stat JSON: {e}")))?;
    let module = v["modules"]
        .as_object()
        .and_then(|m| m.values().next())
        .ok_or_else(|| failed("stat JSON has no module"))?;
    let cells_by_type: BTreeMap<String, u64> = module["num_cells_by_type"]
        .as_object()
        .ok_or_else(|| failed("stat JSON has no cell counts"))?
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
        .collect();
    let transistors = match &module["estimated_num_transistors"] {
        serde_json::Value::String(s) => s.parse().ok(),
        n => n.as_u64(),
    }
    .ok_or_else(|| failed("stat did not estimate transistors (a cell without a CMOS cost?)"))?;
    let total_cells = module["num_cells"].as_u64().unwrap_or(0);
    let flops: u64 = cells_by_type
        .iter()
        .filter(|(k, _)| k.contains("DFF"))
        .map(|(_, n)| n)
        .sum();
    Ok(SynthReport {
        module: unit.module().to_string(),
        params: unit.manifest.params.clone(),
        cells_by_type,
        flops,
        total_cells,
        logic_cells: total_cells - flops,
        transistors,
        yosys: v["creator"].as_str().unwrap_or("Yosys").to_string(),
        flow: steps,
        note: ESTIMATE_NOTE.into(),
    })
}
