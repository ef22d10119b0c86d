//! The askama templates of the unit modules and the registry mapping a unit to its files.
//!
//! A generated unit is several files:
//! - the unit's module (`<unit>.v`): its template extends `rtl-templates/_module.v`, which
//!   renders the header comment, the parameter list, the port list (the functional ports:
//!   no debug-state port is part of the synthesizable module) and the localparams the unit
//!   shares with its model, all from the unit's [`UnitDesc`], so a template writes only the
//!   module body;
//! - the storage primitives it instantiates, from the library in `rtl-templates/`
//!   ([`LIBRARY`]: `wf_ram_dp.v`), the same text for every unit;
//! - for co-simulation only, when the unit declares debug-state ports, a wrapper
//!   `<unit>_cosim.v` (its template extends `rtl-templates/_cosim.v`): the same parameters
//!   and every port of the unit description, debug ports included; it instantiates the
//!   unit and drives the debug ports from hierarchical references into the unit's
//!   registers and RAM arrays (the logical view the model's `debug_state` packs).
//!
//! Unit templates see one value, `m`, a [`ModuleCtx`]; library templates `g`, a [`LibCtx`].

use askama::Template;
use warpforge_model::units;
use warpforge_model::units::contract::{clog2, eval_width, Params, Role, UnitDesc};

/// Everything a template may read: the unit's description rendered for Verilog.
pub struct ModuleCtx {
    /// Module name (= unit name).
    pub module: String,
    pub summary: String,
    /// Where the unit is specified.
    pub spec: String,
    /// The template file the body comes from (relative to the repository root).
    pub template: String,
    /// The co-simulation wrapper's template (relative to the repository root), if any.
    pub cosim_template: String,
    /// `warpforge-gen <version>`.
    pub generator: String,
    /// `NAME=VALUE ...` of this instance.
    pub param_line: String,
    pub params: Vec<ParamCtx>,
    /// The synthesizable module's ports: `clk`, then every port that is not debug state.
    pub ports: Vec<PortCtx>,
    /// The co-simulation wrapper's ports: `clk`, then every port of the description.
    pub cosim_ports: Vec<PortCtx>,
    /// The localparams the unit shares with its model, rendered (declaration + comment).
    pub localparams: Vec<String>,
    /// `.NAME(NAME)` per parameter, for the wrapper's instance of the unit.
    pub inst_params: Vec<String>,
    /// `.port(port)` per port of the synthesizable module (`clk` first).
    pub inst_ports: Vec<String>,
    desc: &'static UnitDesc,
    values: Params,
}

/// One Verilog parameter declaration.
pub struct ParamCtx {
    /// `NAME = VALUE,` (no comma after the last), padded so comments line up.
    pub decl: String,
    /// Comment: the parameter's doc, spec default and valid range.
    pub comment: String,
}

/// One Verilog port declaration (`clk` first, then the unit's ports in contract order).
pub struct PortCtx {
    /// `input  wire [PC_W-1:0]` padded so names line up.
    pub decl: String,
    /// The port name followed by `,` (except the last), padded so comments line up.
    pub name_sep: String,
    /// `[reg] doc`, `[comb] doc`, `[dbg] doc` or `doc` for inputs.
    pub comment: String,
}

impl ModuleCtx {
    pub fn new(desc: &'static UnitDesc, params: &Params, template: &str) -> ModuleCtx {
        let decls: Vec<String> = desc
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let sep = if i + 1 < desc.params.len() { "," } else { "" };
                format!("{} = {}{sep}", p.name, params.get(p.name))
            })
            .collect();
        let decl_w = decls.iter().map(|d| d.len()).max().unwrap_or(0);
        let params_ctx = desc
            .params
            .iter()
            .zip(decls)
            .map(|(p, d)| ParamCtx {
                decl: format!("{d:<decl_w$}"),
                comment: format!(
                    "{} (spec default {}, range {}..={})",
                    p.doc, p.default, p.min, p.max
                ),
            })
            .collect();
        let ports = port_list(desc, false);
        let cosim_ports = port_list(desc, true);
        let lps = (desc.localparams)(params);
        let lp_w = lps.iter().map(|l| l.verilog().len()).max().unwrap_or(0);
        let localparams = lps
            .iter()
            .map(|l| format!("{:<lp_w$}  // {}", l.verilog(), l.doc))
            .collect();
        let name_w = desc.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
        let inst_params = desc
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let sep = if i + 1 < desc.params.len() { "," } else { "" };
                format!(".{:<name_w$} ({}){sep}", p.name, p.name)
            })
            .collect();
        let names: Vec<&str> = std::iter::once("clk")
            .chain(
                desc.ports
                    .iter()
                    .filter(|p| p.role != Role::Debug)
                    .map(|p| p.name),
            )
            .collect();
        let port_w = names.iter().map(|n| n.len()).max().unwrap_or(0);
        let inst_ports = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let sep = if i + 1 < names.len() { "," } else { "" };
                format!(".{n:<port_w$} ({n}){sep}")
            })
            .collect();
        ModuleCtx {
            module: desc.name.to_string(),
            summary: desc.summary.to_string(),
            spec: desc.spec.to_string(),
            template: format!("rtl-templates/{template}"),
            cosim_template: String::new(),
            generator: crate::generator_version(),
            param_line: params
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            params: params_ctx,
            ports,
            cosim_ports,
            localparams,
            inst_params,
            inst_ports,
            desc,
            values: params.clone(),
        }
    }

    /// The rendered declaration (with its comment) of the unit's shared constant `name`,
    /// for a wrapper that needs it.
    pub fn localparam(&self, name: &str) -> String {
        let l = (self.desc.localparams)(&self.values)
            .into_iter()
            .find(|l| l.name == name)
            .unwrap_or_else(|| panic!("unit {} has no localparam {name}", self.desc.name));
        format!("{}  // {}", l.verilog(), l.doc)
    }

    /// The co-simulation wrapper's module name.
    pub fn cosim_module(&self) -> String {
        cosim_module(self.desc)
    }

    /// The value of parameter `name` (for templates that unroll or size by parameters).
    pub fn param(&self, name: &str) -> u64 {
        self.values.get(name)
    }

    /// The evaluated width of port `name`.
    pub fn width(&self, name: &str) -> u32 {
        let p = self
            .desc
            .ports
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("unit {} has no port {name}", self.desc.name));
        eval_width(p.width, &self.values).expect("width expressions are checked by generate")
    }

    /// Verilog `$clog2`, for templates that need it at generation time.
    pub fn clog2(&self, n: u64) -> u32 {
        clog2(n)
    }
}

/// The port declarations of a module with `desc`'s ports (`clk` first); `debug`: with
/// `wf_sample` and the debug-state ports (the co-simulation wrapper), else without (the
/// unit's own module).
fn port_list(desc: &UnitDesc, debug: bool) -> Vec<PortCtx> {
    let mut rows: Vec<(String, String, String)> =
        vec![("input".into(), String::new(), "clk".into())];
    let mut comments = vec!["clock (rising edge)".to_string()];
    if debug {
        rows.push(("input".into(), String::new(), "wf_sample".into()));
        comments.push(
            "co-simulation: a rising edge latches the internal state into the [dbg] ports"
                .to_string(),
        );
    }
    for p in desc.ports.iter().filter(|p| debug || p.role != Role::Debug) {
        let dir = if p.role.is_input() { "input" } else { "output" };
        rows.push((dir.into(), range(p.width), p.name.into()));
        let tag = match p.role {
            Role::Input => "",
            Role::Registered => "[reg] ",
            Role::Combinational => "[comb] ",
            Role::Debug => "[dbg] ",
        };
        comments.push(format!("{tag}{}", p.doc));
    }
    let range_w = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let n = rows.len();
    let name_w = rows.iter().map(|r| r.2.len()).max().unwrap_or(0) + 1;
    rows.into_iter()
        .zip(comments)
        .enumerate()
        .map(|(i, ((dir, range, name), comment))| PortCtx {
            decl: format!("{dir:<6} wire {range:<range_w$}"),
            name_sep: format!(
                "{:<name_w$}",
                format!("{name}{}", if i + 1 < n { "," } else { "" })
            ),
            comment,
        })
        .collect()
}

/// The co-simulation wrapper's module name of `desc`: `<unit>_cosim`.
pub fn cosim_module(desc: &UnitDesc) -> String {
    format!("{}_cosim", desc.name)
}

/// `[EXPR-1:0] ` for a width expression, or nothing for a literal width of 1. The
/// expression's operators (`+ - * /`) all bind at least as tightly as the appended `-1`,
/// so no parentheses are needed; a plain number is folded (`2` gives `[1:0]`).
fn range(width: &str) -> String {
    let w = width.trim();
    match w.parse::<u64>() {
        Ok(1) => String::new(),
        Ok(n) => format!("[{}:0]", n - 1),
        Err(_) => format!("[{w}-1:0]"),
    }
}

/// What a library template reads: only the generator's version (a library module's text is
/// the same for every unit and parameter set; its parameters are set by the instance).
pub struct LibCtx {
    /// `warpforge-gen <version>`.
    pub generator: String,
}

/// A storage primitive of the library (`rtl-templates/<module>.v`).
pub struct LibModule {
    /// The Verilog module name (= file stem).
    pub module: &'static str,
    /// The template file in `rtl-templates/`.
    pub file: &'static str,
    pub render: fn(&LibCtx) -> Result<String, askama::Error>,
}

#[derive(Template)]
#[template(path = "wf_ram_dp.v", escape = "none")]
struct WfRamDp<'a> {
    g: &'a LibCtx,
}

/// `wf_ram_dp`: the simple dual-port RAM (one write, one read port; `RD_REG` selects a
/// registered or asynchronous read). Its model is `warpforge_model::units::ram::DpRam`.
pub static RAM_DP: LibModule = LibModule {
    module: "wf_ram_dp",
    file: "wf_ram_dp.v",
    render: |g| WfRamDp { g }.render(),
};

/// The storage primitive library.
pub static LIBRARY: &[&LibModule] = &[&RAM_DP];

/// A unit's templates: the module, its co-simulation wrapper and the library modules it
/// instantiates.
pub struct Registration {
    /// The unit, as in `warpforge_model::units::ALL`.
    pub unit: &'static UnitDesc,
    /// The template file in `rtl-templates/`.
    pub file: &'static str,
    pub render: fn(&ModuleCtx) -> Result<String, askama::Error>,
    /// The co-simulation wrapper's template (`None` for a unit without debug ports).
    pub cosim: Option<CosimTemplate>,
    /// The library modules the unit instantiates (written next to it, in this order).
    pub uses: &'static [&'static LibModule],
}

/// The template of a unit's co-simulation wrapper.
pub struct CosimTemplate {
    pub file: &'static str,
    pub render: fn(&ModuleCtx) -> Result<String, askama::Error>,
}

/// The template registry: one line per unit,
/// `UNIT_DESC => AskamaStruct("template file") [cosim Struct("file")] [uses [LIB, ..]]`.
/// Each line declares the askama structs of those templates (they read only `m`) and adds
/// the unit to [`REGISTRY`].
macro_rules! registry {
    ($($unit:path => $ty:ident($file:literal)
        $(cosim $cty:ident($cfile:literal))?
        $(uses [$($lib:path),*])?),* $(,)?) => {
        $(
            #[derive(Template)]
            #[template(path = $file, escape = "none")]
            struct $ty<'a> {
                m: &'a ModuleCtx,
            }
            $(
                #[derive(Template)]
                #[template(path = $cfile, escape = "none")]
                struct $cty<'a> {
                    m: &'a ModuleCtx,
                }
            )?
        )*
        /// Every unit that has a template.
        pub static REGISTRY: &[Registration] = &[$(Registration {
            unit: &$unit,
            file: $file,
            render: |m| $ty { m }.render(),
            cosim: registry!(@cosim $($cty($cfile))?),
            uses: &[$($(&$lib),*)?],
        }),*];
    };
    (@cosim) => { None };
    (@cosim $cty:ident($cfile:literal)) => {
        Some(CosimTemplate { file: $cfile, render: |m| $cty { m }.render() })
    };
}

registry! {
    units::simt_stack::SPE_DESC => SimtStackSpe("simt_stack_spe.v")
        cosim SimtStackSpeCosim("simt_stack_spe_cosim.v") uses [RAM_DP],
    units::simt_stack_dpe::DPE_DESC => SimtStackDpe("simt_stack_dpe.v")
        cosim SimtStackDpeCosim("simt_stack_dpe_cosim.v") uses [RAM_DP],
    units::dpe_scoreboard::SCOREBOARD_DESC => DpeScoreboard("dpe_scoreboard.v")
        cosim DpeScoreboardCosim("dpe_scoreboard_cosim.v"),
    units::capri_capt::CAPT_DESC => CapriCapt("capri_capt.v")
        cosim CapriCaptCosim("capri_capt_cosim.v"),
    units::slp_perm::SLP_DESC => SlpPerm("slp_perm.v"),
    units::wcu::WCU_DESC => Wcu("wcu.v") cosim WcuCosim("wcu_cosim.v"),
}

/// The template registration of `unit`, if it has one.
pub fn find(unit: &'static UnitDesc) -> Option<&'static Registration> {
    REGISTRY.iter().find(|r| std::ptr::eq(r.unit, unit))
}

#[cfg(test)]
mod tests {
    use super::range;

    #[test]
    fn ranges() {
        assert_eq!(range("1"), "");
        assert_eq!(range("2"), "[1:0]");
        assert_eq!(range("PC_W"), "[PC_W-1:0]");
        assert_eq!(range("$clog2(DEPTH+1)"), "[$clog2(DEPTH+1)-1:0]");
    }
}
