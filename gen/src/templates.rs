//! The askama templates of the unit modules and the registry mapping a unit to its template.
//!
//! Every unit template extends `rtl-templates/_module.v`, which renders the header comment,
//! the parameter list and the port list from the unit's [`UnitDesc`] (through
//! `_header.v`), so a template writes only the module body. Templates see one value, `m`, a
//! [`ModuleCtx`].

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
    /// `warpforge-gen <version>`.
    pub generator: String,
    /// `NAME=VALUE ...` of this instance.
    pub param_line: String,
    pub params: Vec<ParamCtx>,
    pub ports: Vec<PortCtx>,
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
        let mut rows: Vec<(String, String, String)> =
            vec![("input".into(), String::new(), "clk".into())];
        let mut comments = vec!["clock (rising edge)".to_string()];
        for p in desc.ports {
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
        let ports = rows
            .into_iter()
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
            .collect();
        ModuleCtx {
            module: desc.name.to_string(),
            summary: desc.summary.to_string(),
            spec: desc.spec.to_string(),
            template: format!("rtl-templates/{template}"),
            generator: crate::generator_version(),
            param_line: params
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            params: params_ctx,
            ports,
            desc,
            values: params.clone(),
        }
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

/// A unit's template: renders the whole module from a [`ModuleCtx`].
pub struct Registration {
    /// The unit, as in `warpforge_model::units::ALL`.
    pub unit: &'static UnitDesc,
    /// The template file in `rtl-templates/`.
    pub file: &'static str,
    pub render: fn(&ModuleCtx) -> Result<String, askama::Error>,
}

/// The template registry: one line per unit, `UNIT_DESC => AskamaStruct("template file")`.
/// Each line declares the askama struct of that template (it reads only `m`) and adds the
/// unit to [`REGISTRY`].
macro_rules! registry {
    ($($unit:path => $ty:ident($file:literal)),* $(,)?) => {
        $(
            #[derive(Template)]
            #[template(path = $file, escape = "none")]
            struct $ty<'a> {
                m: &'a ModuleCtx,
            }
        )*
        /// Every unit that has a template.
        pub static REGISTRY: &[Registration] = &[$(Registration {
            unit: &$unit,
            file: $file,
            render: |m| $ty { m }.render(),
        }),*];
    };
}

registry! {
    units::simt_stack::SPE_DESC => SimtStackSpe("simt_stack_spe.v"),
    units::simt_stack_dpe::DPE_DESC => SimtStackDpe("simt_stack_dpe.v"),
    units::dpe_scoreboard::SCOREBOARD_DESC => DpeScoreboard("dpe_scoreboard.v"),
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
