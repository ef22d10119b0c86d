//! The FPGA place-and-route shell of a unit: `<unit>_shell`, the unit between a serial-in
//! shift register (driving every input) and a capture/serial-out shift register (behind
//! every output), with six pins (`clk`, `rst_n`, `sh_in`, `sh_en`, `sh_cap`, `sh_out`).
//!
//! A unit's ports are far more bits than a package has pins (the default `wcu` has 2,343),
//! and a unit's own timing paths start and end at its ports: placed bare, those would be
//! pad-to-logic paths through I/O buffers, which say nothing about the unit. In the shell
//! every port of the unit is a flip-flop of the shell, so place and route times reg-to-reg
//! paths only. The shell is rendered from `rtl-templates/_shell.v` and passes the same lint
//! gate as the units (its own file, `<unit>_shell.v`).
//!
//! Packing (also in the file's header comment): the inputs (the reset excluded) in port
//! order from bit 0 of `in_q`, the outputs likewise in `out_q`. `sh_en` shifts `in_q` left,
//! `sh_in` entering at bit 0 (a vector goes in most significant bit first); `sh_cap` loads
//! `out_q` with the outputs, `sh_en` shifts it left, and `sh_out` is its top bit.

use crate::{generator_version, GenError, GeneratedUnit};
use askama::Template;
use serde::{Deserialize, Serialize};
use warpforge_model::units::contract::Role;

/// The shell's pins, in port order.
pub const PINS: [&str; 6] = ["clk", "rst_n", "sh_in", "sh_en", "sh_cap", "sh_out"];

/// One port of the unit in a shell chain: bits `lsb .. lsb + width - 1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellField {
    pub port: String,
    pub lsb: u32,
    pub width: u32,
}

/// Where the unit's ports are in the shell's chains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellLayout {
    /// `<unit>_shell`.
    pub module: String,
    pub pins: Vec<String>,
    /// Bits of the input chain (every input of the unit but the reset).
    pub in_bits: u32,
    /// Bits of the output chain (every output of the synthesizable unit).
    pub out_bits: u32,
    pub inputs: Vec<ShellField>,
    pub outputs: Vec<ShellField>,
}

/// The shell module's name.
pub fn module_name(unit: &str) -> String {
    format!("{unit}_shell")
}

/// The pins the bare unit needs: its clock and every bit of its functional ports.
pub fn unit_pins(g: &GeneratedUnit) -> u32 {
    1 + g
        .manifest
        .ports
        .iter()
        .filter(|p| p.role != Role::Debug)
        .map(|p| p.width)
        .sum::<u32>()
}

/// Whether the unit holds state (a registered output or debug state): a unit without any
/// has no reg-to-reg path of its own.
pub fn has_state(g: &GeneratedUnit) -> bool {
    g.manifest
        .ports
        .iter()
        .any(|p| matches!(p.role, Role::Registered | Role::Debug))
}

/// The chains' layout for `g`.
pub fn layout(g: &GeneratedUnit) -> ShellLayout {
    let mut inputs = vec![];
    let mut outputs = vec![];
    let (mut in_bits, mut out_bits) = (0, 0);
    for p in &g.manifest.ports {
        if p.role == Role::Debug || p.name == g.manifest.reset {
            continue;
        }
        let (list, at) = if p.role.is_input() {
            (&mut inputs, &mut in_bits)
        } else {
            (&mut outputs, &mut out_bits)
        };
        list.push(ShellField {
            port: p.name.clone(),
            lsb: *at,
            width: p.width,
        });
        *at += p.width;
    }
    ShellLayout {
        module: module_name(g.module()),
        pins: PINS.iter().map(|s| s.to_string()).collect(),
        in_bits,
        out_bits,
        inputs,
        outputs,
    }
}

/// One port of the unit for the template: its name and `[msb:lsb]` in its chain.
pub struct ShellPortCtx {
    pub name: String,
    pub range: String,
}

/// What `rtl-templates/_shell.v` reads.
pub struct ShellCtx {
    pub module: String,
    pub unit: String,
    pub generator: String,
    pub param_line: String,
    pub in_w: u32,
    pub out_w: u32,
    /// The right-hand side of the input chain's shift.
    pub in_shift: String,
    pub out_shift: String,
    pub inputs: Vec<ShellPortCtx>,
    pub outputs: Vec<ShellPortCtx>,
    /// `.NAME(VALUE)` per parameter, commas included.
    pub inst_params: Vec<String>,
    /// `.port(connection)` per port of the unit, commas included.
    pub inst_ports: Vec<String>,
}

#[derive(Template)]
#[template(path = "_shell.v", escape = "none")]
struct ShellTemplate<'a> {
    s: &'a ShellCtx,
}

fn bits(f: &ShellField) -> String {
    if f.width == 1 {
        format!("[{}]", f.lsb)
    } else {
        format!("[{}:{}]", f.lsb + f.width - 1, f.lsb)
    }
}

fn with_commas(items: Vec<String>) -> Vec<String> {
    let n = items.len();
    items
        .into_iter()
        .enumerate()
        .map(|(i, s)| if i + 1 < n { s + "," } else { s })
        .collect()
}

/// The shell's Verilog text.
pub fn render(g: &GeneratedUnit) -> Result<String, GenError> {
    let l = layout(g);
    let field = |f: &ShellField| ShellPortCtx {
        name: f.port.clone(),
        range: bits(f),
    };
    let mut ports = vec!["    .clk(clk)".to_string()];
    for p in &g.manifest.ports {
        if p.role == Role::Debug {
            continue;
        }
        let conn = if p.name == g.manifest.reset {
            "rst_q".to_string()
        } else if let Some(f) = l.inputs.iter().find(|f| f.port == p.name) {
            format!("in_q{}", bits(f))
        } else {
            let f = l
                .outputs
                .iter()
                .find(|f| f.port == p.name)
                .expect("laid out");
            format!("outs{}", bits(f))
        };
        ports.push(format!("    .{}({conn})", p.name));
    }
    let ctx = ShellCtx {
        module: l.module.clone(),
        unit: g.module().to_string(),
        generator: generator_version(),
        param_line: g.params.to_string(),
        in_w: l.in_bits,
        out_w: l.out_bits,
        in_shift: if l.in_bits > 1 {
            "{in_q[IN_W-2:0], sh_in}".into()
        } else {
            "sh_in".into()
        },
        out_shift: if l.out_bits > 1 {
            "{out_q[OUT_W-2:0], 1'b0}".into()
        } else {
            "1'b0".into()
        },
        inputs: l.inputs.iter().map(field).collect(),
        outputs: l.outputs.iter().map(field).collect(),
        inst_params: with_commas(
            g.params
                .iter()
                .map(|(k, v)| format!("    .{k}({v})"))
                .collect(),
        ),
        inst_ports: with_commas(ports),
    };
    let mut text = ShellTemplate { s: &ctx }
        .render()
        .map_err(|source| GenError::Render {
            file: "_shell.v".into(),
            source,
        })?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// `g` inside its shell: the unit's synthesizable files plus `<unit>_shell.v`, top = the
/// shell (no co-simulation files: the shell is for place and route only). The module name
/// stays the unit's.
pub fn wrap(g: &GeneratedUnit) -> Result<GeneratedUnit, GenError> {
    let name = module_name(g.module());
    let file = format!("{name}.v");
    let mut w = g.clone();
    w.files.push((file.clone(), render(g)?));
    w.cosim_only.clear();
    w.manifest.top = name.clone();
    w.manifest.cosim_top = name;
    w.manifest.files.push(file);
    w.manifest.cosim_files = w.manifest.files.clone();
    w.filelist = w.manifest.files.iter().map(|f| format!("{f}\n")).collect();
    w.cosim_filelist = w.filelist.clone();
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_packs_inputs_and_outputs_in_port_order() {
        let g = crate::generate_by_name("slp_perm", &["S=4", "WIDW=1"]).unwrap();
        let l = layout(&g);
        assert!(!l.inputs.iter().any(|f| f.port == "rst_n"));
        let mut at = 0;
        for f in &l.inputs {
            assert_eq!(f.lsb, at);
            at += f.width;
        }
        assert_eq!(at, l.in_bits);
        assert_eq!(
            unit_pins(&g),
            1 + 1 + l.in_bits + l.out_bits,
            "clk, rst_n and the chains"
        );
        assert!(!has_state(&g), "slp_perm has no state");
        let w = wrap(&g).unwrap();
        assert_eq!(w.manifest.top, "slp_perm_shell");
        assert_eq!(w.files.last().unwrap().0, "slp_perm_shell.v");
        let v = &w.files.last().unwrap().1;
        assert!(v.contains(&format!("localparam integer IN_W  = {};", l.in_bits)));
        assert!(v.contains(".rst_n(rst_q)"), "{v}");
    }
}
