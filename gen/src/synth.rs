//! Gate-level estimates of a generated unit with Yosys, and its mapping to FPGA families.
//!
//! [`fpga`]: Yosys' vendor flows (`synth_xilinx`, `synth_ecp5`, `synth_ice40`) on the
//! synthesizable design (no debug ports, no co-simulation wrapper): LUTs, flip-flops, LUT
//! RAM and block RAM cells. The stacks' storage must map to RAM cells there (the synthesis
//! tests check it).
//!
//! [`synth`]: `synth -flatten` (generic synthesis: a memory becomes flip-flops here),
//! `dfflegalize` to plain positive-edge D flops (enables and synchronous resets become logic
//! in front of them), `abc -g` to two-input gates and 2:1 muxes, then `stat -tech cmos`,
//! which knows the transistor count of every one of those cells. The result is an **estimate** from a generic static-CMOS gate model (no
//! cell library, no sizing, no wiring): good for comparing units and parameter sets, not an
//! area in µm².

use crate::tools::{self, ToolError};
use crate::GeneratedUnit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

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
        let params = param_line(&self.params);
        writeln!(f, "{} ({})", self.module, params)?;
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

/// `NAME=VALUE NAME=VALUE ...` of a report's parameters.
pub(crate) fn param_line(params: &BTreeMap<String, u64>) -> String {
    let items: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    items.join(" ")
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
    let top = &unit.manifest.top;
    let steps = flow(top);
    let (v, yosys) = run_yosys(unit, dir, &steps, "synth")?;
    let failed = |why: &str| ToolError::Failed {
        exe: "yosys".into(),
        code: None,
        output: why.to_string(),
    };
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
        yosys,
        flow: steps,
        note: ESTIMATE_NOTE.into(),
    })
}

/// An FPGA family of Yosys' vendor flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// `synth_xilinx` (7-series: LUT6, FDRE, RAM32M/RAM64M LUT RAM, RAMB18/36 block RAM).
    Xilinx,
    /// `synth_ecp5` (Lattice ECP5: LUT4, TRELLIS_FF, TRELLIS_DPR16X4 LUT RAM, DP16KD).
    Ecp5,
    /// `synth_ice40` (Lattice iCE40: SB_LUT4, SB_DFF*, SB_RAM40_4K; no asynchronous RAM).
    Ice40,
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Xilinx, Family::Ecp5, Family::Ice40];

    pub fn name(self) -> &'static str {
        match self {
            Family::Xilinx => "xilinx",
            Family::Ecp5 => "ecp5",
            Family::Ice40 => "ice40",
        }
    }

    /// The family named `s` (`xilinx`, `ecp5`, `ice40`).
    pub fn parse(s: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == s)
    }

    /// What a cell of this family is: LUT, flip-flop, LUT RAM, block RAM, carry-chain
    /// element, DSP block or other (wide-mux primitives, I/O buffers).
    pub fn kind(self, cell: &str) -> CellKind {
        let lut_ram = [
            "RAM16X1D",
            "RAM32X1D",
            "RAM64X1D",
            "RAM128X1D",
            "RAM32X1S",
            "RAM64X1S",
            "RAM128X1S",
            "RAM256X1S",
            "RAM32M",
            "RAM64M",
            "RAM32M16",
            "RAM64M8",
            "SRL16E",
            "SRLC32E",
        ];
        match self {
            Family::Xilinx if cell.starts_with("LUT") => CellKind::Lut,
            Family::Xilinx if cell.starts_with("FD") => CellKind::Ff,
            Family::Xilinx if lut_ram.contains(&cell) => CellKind::LutRam,
            Family::Xilinx if cell.starts_with("RAMB") => CellKind::BlockRam,
            Family::Xilinx if cell.starts_with("CARRY") => CellKind::Carry,
            Family::Xilinx if cell.starts_with("DSP48") => CellKind::Dsp,
            Family::Ecp5 if cell == "LUT4" => CellKind::Lut,
            Family::Ecp5 if cell == "TRELLIS_FF" => CellKind::Ff,
            Family::Ecp5 if cell == "TRELLIS_DPR16X4" => CellKind::LutRam,
            Family::Ecp5 if cell == "DP16KD" || cell == "PDPW16KD" => CellKind::BlockRam,
            Family::Ecp5 if cell == "CCU2C" => CellKind::Carry,
            Family::Ecp5 if cell.starts_with("MULT18X18") || cell == "ALU54B" => CellKind::Dsp,
            Family::Ice40 if cell == "SB_LUT4" => CellKind::Lut,
            Family::Ice40 if cell.starts_with("SB_DFF") => CellKind::Ff,
            Family::Ice40 if cell.starts_with("SB_RAM") => CellKind::BlockRam,
            Family::Ice40 if cell == "SB_CARRY" => CellKind::Carry,
            Family::Ice40 if cell == "SB_MAC16" => CellKind::Dsp,
            _ => CellKind::Other,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A cell's role in an FPGA mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    Lut,
    Ff,
    LutRam,
    BlockRam,
    /// A carry-chain element (Xilinx CARRY4, ECP5 CCU2C: two bits; iCE40 SB_CARRY: one).
    Carry,
    /// A multiplier / DSP block.
    Dsp,
    Other,
}

/// The figures of one unit instance mapped to one FPGA family by Yosys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FpgaReport {
    pub module: String,
    pub params: BTreeMap<String, u64>,
    pub family: Family,
    /// Cell counts by cell type.
    pub cells_by_type: BTreeMap<String, u64>,
    /// Logic LUTs (LUT RAM cells not included).
    pub luts: u64,
    /// Flip-flops.
    pub ffs: u64,
    /// LUT RAM cells (Xilinx RAM32M/RAM64M/... and SRLs, ECP5 TRELLIS_DPR16X4).
    pub lut_ram: u64,
    /// Block RAM cells (Xilinx RAMB18/36, ECP5 DP16KD, iCE40 SB_RAM40_4K).
    pub block_ram: u64,
    /// Carry-chain cells (Xilinx CARRY4, ECP5 CCU2C, iCE40 SB_CARRY).
    #[serde(default)]
    pub carry: u64,
    /// DSP blocks (Xilinx DSP48, ECP5 MULT18X18D/ALU54B, iCE40 SB_MAC16).
    #[serde(default)]
    pub dsp: u64,
    pub yosys: String,
    /// The Yosys commands run after `read_verilog`.
    pub flow: Vec<String>,
}

impl FpgaReport {
    /// RAM cells of either kind.
    pub fn ram_cells(&self) -> u64 {
        self.lut_ram + self.block_ram
    }
}

impl fmt::Display for FpgaReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params = param_line(&self.params);
        writeln!(
            f,
            "{} ({}) on {}: {} LUTs, {} flip-flops, {} LUT-RAM cells, {} block RAMs, {} carry cells, {} DSP blocks",
            self.module,
            params,
            self.family,
            self.luts,
            self.ffs,
            self.lut_ram,
            self.block_ram,
            self.carry,
            self.dsp
        )?;
        for (k, v) in &self.cells_by_type {
            writeln!(f, "  {k:<18} {v:>7}")?;
        }
        write!(f, "  ({}; {})", self.flow.join("; "), self.yosys)
    }
}

/// The vendor flow's script (after the `read_verilog` lines).
pub fn fpga_flow(top: &str, family: Family) -> Vec<String> {
    vec![
        format!("synth_{family} -top {top} -flatten"),
        "tee -q -o fpga_stat.json stat -json".into(),
    ]
}

/// Map `unit`'s synthesizable design to `family` in a scratch folder.
pub fn fpga(unit: &GeneratedUnit, family: Family) -> Result<FpgaReport, ToolError> {
    let dir = tools::scratch_dir(&format!("fpga-{}-{family}", unit.module()))?;
    let r = fpga_in(unit, family, &dir);
    if r.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    r
}

/// Map `unit` to `family`, writing its files, the script and the log into `dir` (for
/// Xilinx also the rendered XDC and Vivado script, see [`write_vivado_files`]).
pub fn fpga_in(unit: &GeneratedUnit, family: Family, dir: &Path) -> Result<FpgaReport, ToolError> {
    let top = unit.manifest.top.clone();
    let steps = fpga_flow(&top, family);
    let (v, yosys) = run_yosys(unit, dir, &steps, "fpga")?;
    if family == Family::Xilinx {
        write_vivado_files(unit, dir)?;
    }
    fpga_report(unit, family, &v, yosys, steps)
}

/// The XDC of constraints/xc7.xdc at the xilinx target period.
pub const XC7_XDC: &str = include_str!("../../constraints/xc7.xdc");
/// The Vivado out-of-context script of constraints/xc7_vivado.tcl.
pub const XC7_VIVADO_TCL: &str = include_str!("../../constraints/xc7_vivado.tcl");

/// Render `<top>.xdc`, `xc7_vivado.tcl` and the file list `<top>.f` into `dir` (where the
/// unit's Verilog is), for a Vivado user to implement the unit out of context; returns the
/// paths written.
pub fn write_vivado_files(unit: &GeneratedUnit, dir: &Path) -> Result<Vec<PathBuf>, ToolError> {
    let t = crate::asic::target("xilinx").map_err(|why| ToolError::Failed {
        exe: "xilinx constraints".into(),
        code: None,
        output: why,
    })?;
    let top = &unit.manifest.top;
    let part = t.part.as_deref().unwrap_or("xc7a35tcpg236-1");
    let render = |s: &str| {
        s.replace("@PERIOD_NS@", &format!("{}", t.period_ns))
            .replace("@TOP@", top)
            .replace("@PART@", part)
    };
    let files = [
        (format!("{top}.xdc"), render(XC7_XDC)),
        ("xc7_vivado.tcl".to_string(), render(XC7_VIVADO_TCL)),
        (format!("{top}.f"), unit.manifest.files.join("\n") + "\n"),
    ];
    let mut out = vec![];
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|source| ToolError::Io {
            path: p.clone(),
            source,
        })?;
        out.push(p);
    }
    Ok(out)
}

/// The figures of a vendor flow's `stat -json` output `v`.
pub(crate) fn fpga_report(
    unit: &GeneratedUnit,
    family: Family,
    v: &serde_json::Value,
    yosys: String,
    steps: Vec<String>,
) -> Result<FpgaReport, ToolError> {
    let failed = |why: &str| ToolError::Failed {
        exe: "yosys".into(),
        code: None,
        output: why.to_string(),
    };
    let module = v["design"]
        .as_object()
        .or_else(|| {
            v["modules"]
                .as_object()
                .and_then(|m| m.values().next()?.as_object())
        })
        .ok_or_else(|| failed("stat JSON has no design"))?;
    let cells_by_type: BTreeMap<String, u64> = module["num_cells_by_type"]
        .as_object()
        .ok_or_else(|| failed("stat JSON has no cell counts"))?
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
        .collect();
    let mut r = FpgaReport {
        module: unit.module().to_string(),
        params: unit.manifest.params.clone(),
        family,
        cells_by_type,
        luts: 0,
        ffs: 0,
        lut_ram: 0,
        block_ram: 0,
        carry: 0,
        dsp: 0,
        yosys,
        flow: steps,
    };
    for (k, n) in &r.cells_by_type {
        match family.kind(k) {
            CellKind::Lut => r.luts += n,
            CellKind::Ff => r.ffs += n,
            CellKind::LutRam => r.lut_ram += n,
            CellKind::BlockRam => r.block_ram += n,
            CellKind::Carry => r.carry += n,
            CellKind::Dsp => r.dsp += n,
            CellKind::Other => {}
        }
    }
    Ok(r)
}

/// Write the synthesizable files and a script (`read_verilog` of each, then `steps`) into
/// `dir`, run Yosys, and return the JSON it wrote with `tee -o <stem>_stat.json` and the
/// Yosys version.
pub(crate) fn run_yosys(
    unit: &GeneratedUnit,
    dir: &Path,
    steps: &[String],
    stem: &str,
) -> Result<(serde_json::Value, String), ToolError> {
    let exe = tools::locate(tools::YOSYS)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ToolError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for (name, text) in &unit.files {
        std::fs::write(dir.join(name), text).map_err(io(&dir.join(name)))?;
    }
    let mut script: String = unit
        .manifest
        .files
        .iter()
        .map(|f| format!("read_verilog {f}\n"))
        .collect();
    for s in steps {
        script += s;
        script.push('\n');
    }
    let ys = dir.join(format!("{stem}.ys"));
    std::fs::write(&ys, script).map_err(io(&ys))?;
    let ran = tools::run(
        &exe,
        &[
            "-q".into(),
            "-l".into(),
            format!("{stem}.log"),
            "-s".into(),
            format!("{stem}.ys"),
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
    let json_path = dir.join(format!("{stem}_stat.json"));
    let text = std::fs::read_to_string(&json_path).map_err(io(&json_path))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| failed(&format!("bad stat JSON: {e}")))?;
    let yosys = v["creator"].as_str().unwrap_or("Yosys").to_string();
    Ok((v, yosys))
}
