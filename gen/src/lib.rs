//! warpforge-gen: synthesizable Verilog of the hardware units, generated from askama
//! templates (`rtl-templates/`) and the units' single descriptions
//! ([`warpforge_model::units::contract::UnitDesc`], design.md §3).
//!
//! - [`generate`]: one unit at concrete parameters → its Verilog files (the unit's module,
//!   the storage primitives it instantiates, and a co-simulation wrapper that exposes its
//!   debug state), a manifest (JSON) and file lists; [`GeneratedUnit::write`] puts them in
//!   a folder.
//! - [`lint`]: the lint gate (Verilator `-Wall`, svlint, Yosys `check`, Icarus) every
//!   generated unit must pass with zero findings.
//! - [`synth`]: Yosys synthesis to simple CMOS gates: cells, flip-flops and a transistor
//!   estimate.
//!
//! The header of every module (parameters with their values, the port list with widths from
//! the width expressions) is rendered by one shared partial, `rtl-templates/_header.v`;
//! unit templates write only the body. Parameters are rendered with the instance's values as
//! their defaults, so the file elaborates as generated without `-G` overrides (the header
//! comment records the spec default and range of each).

pub mod asic;
pub mod baseline;
pub mod lint;
pub mod pnr;
pub mod power;
pub mod shell;
pub mod synth;
pub mod templates;
pub mod tools;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use templates::ModuleCtx;
use warpforge_model::units::{
    self,
    contract::{eval_width, Params, Role, UnitDesc},
};

/// Errors of generation (bad unit or parameters, template or file-system failures).
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("{0}")]
    UnknownUnit(String),
    #[error("unit {unit} has no RTL template yet (units with templates: {known})")]
    NoTemplate { unit: String, known: String },
    #[error(
        "unit {unit} declares debug-state ports but has no co-simulation wrapper template \
         (register one with `cosim` in gen/src/templates.rs)"
    )]
    NoCosimWrapper { unit: String },
    #[error("{0}")]
    BadParam(String),
    #[error("unit {unit} port {port}: bad width expression `{expr}`: {msg}")]
    BadWidth {
        unit: String,
        port: String,
        expr: String,
        msg: String,
    },
    #[error("rendering template {file}: {source}")]
    Render {
        file: String,
        #[source]
        source: askama::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// `warpforge-gen <version>`, recorded in every header and manifest.
pub fn generator_version() -> String {
    format!("warpforge-gen {}", env!("CARGO_PKG_VERSION"))
}

/// One port in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestPort {
    pub name: String,
    /// `input` or `output`.
    pub direction: String,
    pub role: Role,
    /// Width in bits at this instance's parameters.
    pub width: u32,
    /// The width as written in the Verilog (a constant expression over the parameters).
    pub width_expr: String,
    /// An output that is a function of the state alone (registered or debug state).
    pub registered: bool,
    pub doc: String,
    /// How a wide port's bits are organised (the unit declaration's field layout at these
    /// parameters), for tools that decode it; absent for a plain value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<ManifestLayout>,
}

/// A port's field layout at the manifest's parameters: `elements` repeated elements, element
/// `k` at bits `[k*element_width, (k+1)*element_width)`, indexed by `dims` (outermost first,
/// row-major), each made of `fields` (LSB first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestLayout {
    pub dims: Vec<ManifestDim>,
    pub fields: Vec<ManifestField>,
    pub element_width: u32,
}

/// One dimension of a layout: its index name (empty: a plain index) and count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestDim {
    pub name: String,
    pub count: u32,
}

/// One field of a layout element: its name (empty: the element is one value), its lowest
/// bit within the element and its width.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestField {
    pub name: String,
    pub lsb: u32,
    pub width: u32,
}

/// What was generated: read by the co-simulator and by people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The Verilog module name (= unit name).
    pub module: String,
    /// The top module of the synthesizable design (the unit's module).
    pub top: String,
    /// The top module of the co-simulated design: `<unit>_cosim`, the wrapper that adds the
    /// debug-state ports, or the unit's module for a unit without debug ports.
    pub cosim_top: String,
    pub summary: String,
    pub spec: String,
    /// Template the body came from, relative to the repository root.
    pub template: String,
    /// Parameter values of this instance.
    pub params: BTreeMap<String, u64>,
    /// The clock port (implicit in the unit contract, first in the Verilog port list).
    pub clock: String,
    /// The synchronous active-low reset port.
    pub reset: String,
    /// The unit's ports in contract order (the clock is not repeated here); the debug-state
    /// ports (role `debug`) are ports of the co-simulation wrapper only.
    pub ports: Vec<ManifestPort>,
    /// The constants the unit shares with its model, as rendered (`NAME` → value).
    pub localparams: BTreeMap<String, u64>,
    /// Names of the outputs that depend on the state only (`registered` above).
    pub registered_outputs: Vec<String>,
    /// The synthesizable design's Verilog files in compile order (the unit's module first,
    /// then the library modules it instantiates), relative to the manifest's folder.
    pub files: Vec<String>,
    /// The co-simulated design's files: `files` plus the wrapper (`<unit>_cosim.v`).
    pub cosim_files: Vec<String>,
    pub generator: String,
    /// `sha256:<hex>` over the text of every file in `cosim_files` order.
    pub content_hash: String,
}

/// The generated files of one unit instance.
#[derive(Debug, Clone)]
pub struct GeneratedUnit {
    pub desc: &'static UnitDesc,
    pub params: Params,
    /// The synthesizable design: `(file name, Verilog text)` in compile order, the unit's
    /// module first.
    pub files: Vec<(String, String)>,
    /// Files of the co-simulated design only (the wrapper), compiled after `files`.
    pub cosim_only: Vec<(String, String)>,
    pub manifest: Manifest,
    /// The synthesizable design's file list (`<unit>.f`), one file name per line.
    pub filelist: String,
    /// The co-simulated design's file list (`<unit>_cosim.f`).
    pub cosim_filelist: String,
}

impl GeneratedUnit {
    /// The module name.
    pub fn module(&self) -> &str {
        &self.manifest.module
    }

    /// The Verilog text of the module's own file.
    pub fn verilog(&self) -> &str {
        &self.files[0].1
    }

    /// The manifest as pretty JSON.
    pub fn manifest_json(&self) -> String {
        serde_json::to_string_pretty(&self.manifest).expect("manifest serializes") + "\n"
    }

    /// Every file of the co-simulated design, `(name, text)` in compile order (the
    /// synthesizable files, then the wrapper).
    pub fn cosim_files(&self) -> Vec<(String, String)> {
        self.files.iter().chain(&self.cosim_only).cloned().collect()
    }

    /// Write every Verilog file, `<module>.manifest.json`, `<module>.f` (the synthesizable
    /// design) and `<module>_cosim.f` (the co-simulated design) into `dir` (created if
    /// needed). Library modules have the same text for every unit, so units can share a
    /// folder. Returns the written paths.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, GenError> {
        std::fs::create_dir_all(dir).map_err(|source| GenError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let m = self.module();
        let mut out: Vec<(String, &str)> = self
            .files
            .iter()
            .chain(&self.cosim_only)
            .map(|(n, t)| (n.clone(), t.as_str()))
            .collect();
        let manifest = self.manifest_json();
        out.push((format!("{m}.manifest.json"), &manifest));
        out.push((format!("{m}.f"), &self.filelist));
        out.push((format!("{m}_cosim.f"), &self.cosim_filelist));
        let mut paths = vec![];
        for (name, text) in out {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|source| GenError::Io {
                path: path.clone(),
                source,
            })?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// The folder of one parameter set of a unit below an output folder:
/// `<unit>/<NAME-VALUE_NAME-VALUE...>` (every parameter, in declaration order).
pub fn params_dir(desc: &UnitDesc, params: &Params) -> PathBuf {
    let label: Vec<String> = params.iter().map(|(k, v)| format!("{k}-{v}")).collect();
    Path::new(desc.name).join(label.join("_"))
}

/// The unit named `name` (any unit of the model, with or without a template).
pub fn find_unit(name: &str) -> Result<&'static UnitDesc, GenError> {
    units::find(name).map_err(GenError::UnknownUnit)
}

/// Units of `warpforge_model::units::ALL` that have a template, in that order.
pub fn units_with_templates() -> Vec<&'static UnitDesc> {
    units::ALL
        .iter()
        .copied()
        .filter(|u| templates::find(u).is_some())
        .collect()
}

/// Parameters of `desc` from `NAME=VALUE` overrides (decimal, or hex with `0x`), validated
/// against the unit's ranges and cross-parameter rules.
pub fn parse_params<S: AsRef<str>>(
    desc: &'static UnitDesc,
    overrides: &[S],
) -> Result<Params, GenError> {
    let mut pairs: Vec<(String, u64)> = vec![];
    for o in overrides {
        let o = o.as_ref();
        let (name, value) = o.split_once('=').ok_or_else(|| {
            GenError::BadParam(format!(
                "{}: bad parameter override `{o}`: expected NAME=VALUE",
                desc.name
            ))
        })?;
        let (name, value) = (name.trim(), value.trim());
        let parsed = match value
            .strip_prefix("0x")
            .or_else(|| value.strip_prefix("0X"))
        {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => value.parse::<u64>(),
        };
        let v = parsed.map_err(|_| {
            GenError::BadParam(format!(
                "{}: parameter {name}: `{value}` is not a non-negative integer",
                desc.name
            ))
        })?;
        pairs.push((name.to_string(), v));
    }
    desc.params(&pairs).map_err(GenError::BadParam)
}

/// Generate the Verilog, manifest and file list of `desc` at `params`.
pub fn generate(desc: &'static UnitDesc, params: &Params) -> Result<GeneratedUnit, GenError> {
    let reg = templates::find(desc).ok_or_else(|| GenError::NoTemplate {
        unit: desc.name.to_string(),
        known: templates::REGISTRY
            .iter()
            .map(|r| r.unit.name)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    let mut ports = vec![];
    for p in desc.ports {
        let width = eval_width(p.width, params).map_err(|msg| GenError::BadWidth {
            unit: desc.name.into(),
            port: p.name.into(),
            expr: p.width.into(),
            msg,
        })?;
        ports.push(ManifestPort {
            name: p.name.into(),
            direction: if p.role.is_input() { "input" } else { "output" }.into(),
            role: p.role,
            width,
            width_expr: p.width.into(),
            registered: matches!(p.role, Role::Registered | Role::Debug),
            doc: p.doc.into(),
            layout: match p.layout {
                None => None,
                Some(l) => {
                    let at = l.at(params).map_err(|msg| GenError::BadWidth {
                        unit: desc.name.into(),
                        port: p.name.into(),
                        expr: "its field layout".into(),
                        msg,
                    })?;
                    Some(ManifestLayout {
                        dims: at
                            .dims()
                            .iter()
                            .map(|&(name, count)| ManifestDim {
                                name: name.into(),
                                count,
                            })
                            .collect(),
                        fields: at
                            .fields()
                            .iter()
                            .map(|&(name, lsb, width)| ManifestField {
                                name: name.into(),
                                lsb,
                                width,
                            })
                            .collect(),
                        element_width: at.element_width(),
                    })
                }
            },
        });
    }
    let mut ctx = ModuleCtx::new(desc, params, reg.file);
    let render = |file: &str, r: Result<String, askama::Error>| {
        r.map(|mut text| {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text
        })
        .map_err(|source| GenError::Render {
            file: file.into(),
            source,
        })
    };
    let mut files = vec![(
        format!("{}.v", desc.name),
        render(reg.file, (reg.render)(&ctx))?,
    )];
    let lib_ctx = templates::LibCtx {
        generator: generator_version(),
    };
    for lib in reg.uses {
        files.push((
            format!("{}.v", lib.module),
            render(lib.file, (lib.render)(&lib_ctx))?,
        ));
    }
    let has_debug = desc.ports.iter().any(|p| p.role == Role::Debug);
    let mut cosim_only = vec![];
    let cosim_top = match (&reg.cosim, has_debug) {
        (Some(c), true) => {
            ctx.cosim_template = format!("rtl-templates/{}", c.file);
            let name = templates::cosim_module(desc);
            cosim_only.push((format!("{name}.v"), render(c.file, (c.render)(&ctx))?));
            name
        }
        (None, true) => {
            return Err(GenError::NoCosimWrapper {
                unit: desc.name.to_string(),
            })
        }
        (_, false) => desc.name.to_string(),
    };
    let mut h = Sha256::new();
    for (_, t) in files.iter().chain(&cosim_only) {
        h.update(t.as_bytes());
    }
    let hash: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let names = |list: &[(String, String)]| list.iter().map(|(n, _)| n.clone()).collect();
    let cosim_files: Vec<String> = names(&[files.clone(), cosim_only.clone()].concat());
    let manifest = Manifest {
        module: desc.name.into(),
        top: desc.name.into(),
        cosim_top,
        summary: desc.summary.into(),
        spec: desc.spec.into(),
        template: format!("rtl-templates/{}", reg.file),
        params: params.iter().map(|(n, v)| (n.to_string(), v)).collect(),
        clock: "clk".into(),
        reset: "rst_n".into(),
        registered_outputs: ports
            .iter()
            .filter(|p| p.registered)
            .map(|p| p.name.clone())
            .collect(),
        ports,
        localparams: (desc.localparams)(params)
            .iter()
            .map(|l| (l.name.to_string(), l.value))
            .collect(),
        files: names(&files),
        cosim_files: cosim_files.clone(),
        generator: generator_version(),
        content_hash: format!("sha256:{hash}"),
    };
    let filelist = files.iter().map(|(n, _)| format!("{n}\n")).collect();
    let cosim_filelist = cosim_files.iter().map(|n| format!("{n}\n")).collect();
    Ok(GeneratedUnit {
        desc,
        params: params.clone(),
        files,
        cosim_only,
        manifest,
        filelist,
        cosim_filelist,
    })
}

/// [`find_unit`] + [`parse_params`] + [`generate`].
pub fn generate_by_name<S: AsRef<str>>(
    unit: &str,
    overrides: &[S],
) -> Result<GeneratedUnit, GenError> {
    let desc = find_unit(unit)?;
    let params = parse_params(desc, overrides)?;
    generate(desc, &params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_unit_and_bad_params_are_clear() {
        let e = generate_by_name::<&str>("nope", &[]).unwrap_err();
        assert!(e.to_string().contains("unknown unit `nope`"), "{e}");
        let e = generate_by_name("simt_stack_spe", &["WARP_SIZE=4"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "simt_stack_spe: parameter WARP_SIZE=4 is out of range 8..=64 \
             (threads per warp: lanes and mask width)"
        );
        let e = generate_by_name("simt_stack_spe", &["WARP_SIZE"]).unwrap_err();
        assert!(e.to_string().contains("expected NAME=VALUE"), "{e}");
        let e = generate_by_name("simt_stack_spe", &["DEPTH=x"]).unwrap_err();
        assert!(e.to_string().contains("`x` is not"), "{e}");
        let e = generate_by_name("simt_stack_spe", &["FOO=1"]).unwrap_err();
        assert!(e.to_string().contains("has no parameter FOO"), "{e}");
    }

    #[test]
    fn hex_values_are_accepted() {
        let desc = find_unit("simt_stack_spe").unwrap();
        let p = parse_params(desc, &["DEPTH=0x8"]).unwrap();
        assert_eq!(p.get("DEPTH"), 8);
    }
}
