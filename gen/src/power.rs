//! Power of a unit mapped to OSU 0.18 µm cells (the netlist of [`crate::asic::osu018_in`]),
//! from switching activity measured in co-simulation.
//!
//! The model (printed with every figure, see [`POWER_MODEL`] and [`POWER_ASSUMPTIONS`]):
//!
//! - **switching**: every net, `0.5 * alpha * C * V^2 * f`, where `C` is the sum of the
//!   liberty input-pin capacitances of the net's sinks (plus the SDC's 20 fF on a unit
//!   output; no wire capacitance) and `alpha` its transitions per cycle;
//! - **internal**: every cell, `alpha * E * f` with `E` the mean of the liberty's rise and
//!   fall `internal_power` energies of its output (over its related pins), interpolated at
//!   the output's load and a 0.18 ns input transition; a flip-flop adds its clock pin's
//!   rise + fall energy every cycle and its D pin's energy per toggle;
//! - **clock**: the clock net, `C_clk * V^2 * f` (ideal clock, no tree);
//! - **leakage**: the sum of the cells' `cell_leakage_power`.
//!
//! Activity, per net ([`estimate_per_net`]): each net's own transitions per cycle in a
//! zero-delay gate-level simulation of this netlist over the stimulus
//! (`warpforge_cosim::gatesim`). Without one ([`estimate`], and OpenSTA's cross-check):
//! flip-flop outputs toggle at the rate the RTL's registers did (the debug-state bits,
//! every cycle of the run), every combinational cell output at the mean rate of all the
//! bits observed (inputs, outputs, registers), the unit's inputs at their measured rate.
//! No glitches, no per-net correlation.

use crate::asic::split_netlist;
use serde::Serialize;
use std::collections::HashMap;

/// The model, printed beside every figure.
pub const POWER_MODEL: &str = "estimate: liberty internal energies + 0.5*alpha*C*V^2*f on pin \
    capacitances + leakage, activity from the co-simulated RTL; expected accuracy about +/-2x \
    (fit for comparing designs and stimuli, not for absolute sign-off)";

/// The assumptions behind [`POWER_MODEL`].
pub const POWER_ASSUMPTIONS: &[&str] = &[
    "OSU 0.18 um liberty, typical corner, its nominal voltage and 25 C",
    "flip-flop outputs toggle at the RTL registers' mean rate (debug-state bits, every cycle)",
    "combinational cell outputs toggle at the mean rate of every observed RTL bit (inputs, \
     outputs, registers); no glitches, no spatial correlation",
    "net load = sink pin capacitances (+20 fF on unit outputs, as the SDC); no wires",
    "internal energy interpolated at the output load and a 0.18 ns input transition",
    "ideal clock: the clock net is the flip-flops' CLK pins, no tree or buffers",
];

/// An energy table of the liberty (pJ), over `index_1` (output load, pF) and `index_2`
/// (input transition, ns), or over `index_1` alone (input transition) for a passive pin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnergyTable {
    pub index_1: Vec<f64>,
    pub index_2: Vec<f64>,
    pub values: Vec<f64>,
}

/// Linear interpolation in `index` (clamped at the ends): (lower position, weight of the
/// upper).
fn locate(index: &[f64], x: f64) -> (usize, f64) {
    if index.len() < 2 {
        return (0, 0.0);
    }
    let mut i = 0;
    while i + 2 < index.len() && x > index[i + 1] {
        i += 1;
    }
    let (a, b) = (index[i], index[i + 1]);
    let w = if b > a {
        ((x - a) / (b - a)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (i, w)
}

impl EnergyTable {
    /// The energy at `load` pF and `slew` ns (a 1-D table is read at `slew`).
    pub fn at(&self, load: f64, slew: f64) -> f64 {
        if self.values.is_empty() {
            return 0.0;
        }
        if self.index_2.is_empty() {
            let (i, w) = locate(&self.index_1, slew);
            let v = |k: usize| self.values.get(k).copied().unwrap_or(self.values[0]);
            return v(i) * (1.0 - w) + v(i + 1) * w;
        }
        let n2 = self.index_2.len();
        let (i, wi) = locate(&self.index_1, load);
        let (j, wj) = locate(&self.index_2, slew);
        let v = |r: usize, c: usize| {
            let r = r.min(self.index_1.len().saturating_sub(1));
            let c = c.min(n2 - 1);
            self.values.get(r * n2 + c).copied().unwrap_or(0.0)
        };
        let lo = v(i, j) * (1.0 - wj) + v(i, j + 1) * wj;
        let hi = v(i + 1, j) * (1.0 - wj) + v(i + 1, j + 1) * wj;
        lo * (1.0 - wi) + hi * wi
    }
}

/// One `internal_power` group: its related pin and rise/fall energies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InternalPower {
    pub related_pin: String,
    pub rise: EnergyTable,
    pub fall: EnergyTable,
}

impl InternalPower {
    /// Mean of rise and fall energy (pJ per transition).
    pub fn mean(&self, load: f64, slew: f64) -> f64 {
        0.5 * (self.rise.at(load, slew) + self.fall.at(load, slew))
    }
}

/// What the power estimate needs of one liberty cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PowerCell {
    pub leakage_nw: f64,
    /// Input pin capacitance, pF.
    pub input_cap: HashMap<String, f64>,
    /// Per output pin, its `internal_power` groups.
    pub outputs: HashMap<String, Vec<InternalPower>>,
    /// Per input pin, its passive `internal_power` (a flip-flop's CLK and D).
    pub input_energy: HashMap<String, InternalPower>,
}

/// The liberty's cells and nominal voltage.
#[derive(Debug, Clone, Default)]
pub struct PowerLib {
    pub nom_voltage: f64,
    pub cells: HashMap<String, PowerCell>,
}

fn numbers(s: &str) -> Vec<f64> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == 'E'))
        .filter(|t| !t.is_empty())
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// Read the power attributes of a liberty file: `nom_voltage`, per cell its leakage, input
/// pin `capacitance`, and the `internal_power` groups (`related_pin`, `rise_power` and
/// `fall_power` tables) of every pin. A small reader of this library's layout (one
/// statement or group opening per line), not a general liberty parser.
pub fn read_power_liberty(text: &str) -> PowerLib {
    let mut lib = PowerLib {
        nom_voltage: 0.0,
        cells: HashMap::new(),
    };
    // The open groups: (keyword, name).
    let mut stack: Vec<(String, String)> = vec![];
    let mut cell: Option<(String, PowerCell)> = None;
    let mut pin = String::new();
    let mut input_pin = false;
    let mut ip: Option<InternalPower> = None;
    let mut table: Option<(bool, EnergyTable)> = None;
    let mut pending: Option<(String, String)> = None; // a multi-line attribute: (key, text)
    for raw in text.lines() {
        let line = raw.trim();
        if let Some((_, acc)) = pending.as_mut() {
            acc.push_str(line);
            if line.contains(");") {
                let (key, acc) = pending.take().expect("pending");
                apply_table_attr(&mut table, &key, &acc);
            }
            continue;
        }
        if line.is_empty() || line.starts_with("/*") || line.starts_with('*') {
            continue;
        }
        if line.ends_with('{') {
            let head = line.trim_end_matches('{').trim();
            let (kw, name) = match head.split_once('(') {
                Some((k, r)) => (
                    k.trim().to_string(),
                    r.trim_end_matches(')').trim().trim_matches('"').to_string(),
                ),
                None => (head.to_string(), String::new()),
            };
            match kw.as_str() {
                "cell" => {
                    cell = Some((name.clone(), PowerCell::default()));
                }
                "pin" => {
                    pin = name.clone();
                    input_pin = false;
                }
                "internal_power" => ip = Some(InternalPower::default()),
                "rise_power" | "fall_power" if ip.is_some() => {
                    table = Some((kw == "rise_power", EnergyTable::default()))
                }
                _ => {}
            }
            stack.push((kw, name));
            continue;
        }
        if line.starts_with('}') {
            let Some((kw, _)) = stack.pop() else {
                continue;
            };
            match kw.as_str() {
                "cell" => {
                    if let Some((n, c)) = cell.take() {
                        lib.cells.insert(n, c);
                    }
                }
                "rise_power" | "fall_power" => {
                    if let (Some((rise, t)), Some(p)) = (table.take(), ip.as_mut()) {
                        if rise {
                            p.rise = t;
                        } else {
                            p.fall = t;
                        }
                    }
                }
                "internal_power" => {
                    if let (Some(p), Some((_, c))) = (ip.take(), cell.as_mut()) {
                        if input_pin {
                            c.input_energy.insert(pin.clone(), p);
                        } else {
                            c.outputs.entry(pin.clone()).or_default().push(p);
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        let Some((key, value)) = line.split_once([':', '(']) else {
            continue;
        };
        let key = key.trim();
        let value = value.trim().trim_end_matches(';').trim().trim_matches('"');
        if table.is_some() && matches!(key, "index_1" | "index_2" | "values") {
            if line.contains(");") {
                apply_table_attr(&mut table, key, value);
            } else {
                pending = Some((key.to_string(), value.to_string()));
            }
            continue;
        }
        match (key, cell.as_mut()) {
            ("nom_voltage", None) => lib.nom_voltage = value.parse().unwrap_or(0.0),
            ("cell_leakage_power", Some((_, c))) => c.leakage_nw = value.parse().unwrap_or(0.0),
            ("direction", Some((_, c))) => {
                input_pin = value == "input";
                if !input_pin {
                    c.outputs.entry(pin.clone()).or_default();
                }
            }
            ("capacitance", Some((_, c))) if input_pin => {
                c.input_cap
                    .insert(pin.clone(), value.parse().unwrap_or(0.0));
            }
            ("related_pin", Some(_)) => {
                if let Some(p) = ip.as_mut() {
                    p.related_pin = value.to_string();
                }
            }
            _ => {}
        }
    }
    lib
}

fn apply_table_attr(table: &mut Option<(bool, EnergyTable)>, key: &str, text: &str) {
    if let Some((_, t)) = table.as_mut() {
        let v = numbers(text);
        match key {
            "index_1" => t.index_1 = v,
            "index_2" => t.index_2 = v,
            _ => t.values = v,
        }
    }
}

/// Transitions per cycle of the three kinds of net (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NetActivity {
    /// Flip-flop outputs.
    pub flop: f64,
    /// Combinational cell outputs.
    pub comb: f64,
    /// The unit's inputs.
    pub input: f64,
}

/// The input transition the internal energies are read at (ns).
pub const SLEW_NS: f64 = 0.18;
/// The load the SDC puts on every unit output (pF).
pub const OUTPUT_LOAD_PF: f64 = 0.02;

/// The figures of one estimate (µW unless named otherwise).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerFigures {
    pub clock_mhz: f64,
    pub voltage: f64,
    pub activity: NetActivity,
    pub cells: u64,
    pub flops: u64,
    /// pF.
    pub total_net_cap_pf: f64,
    pub clock_cap_pf: f64,
    pub switching_uw: f64,
    pub internal_uw: f64,
    pub clock_uw: f64,
    pub dynamic_uw: f64,
    pub leakage_uw: f64,
    pub total_uw: f64,
}

/// The estimate for `netlist` (an OSU 0.18 µm netlist as Yosys writes it) at `clock_mhz`,
/// the liberty's nominal voltage, with `act` and clock net `clock`.
pub fn estimate(
    netlist: &str,
    lib: &PowerLib,
    act: NetActivity,
    clock_mhz: f64,
    clock: &str,
) -> Result<PowerFigures, String> {
    estimate_per_net(netlist, lib, act, &|_| None, clock_mhz, clock)
}

/// [`estimate`] with each net's own transitions per cycle where `per_net` knows them (by
/// the net's name in the netlist, unescaped: `_12_`, `br_pc[3]`), from a gate-level
/// simulation; a net it does not know takes the mean rate of its kind from `act`.
pub fn estimate_per_net(
    netlist: &str,
    lib: &PowerLib,
    act: NetActivity,
    per_net: &dyn Fn(&str) -> Option<f64>,
    clock_mhz: f64,
    clock: &str,
) -> Result<PowerFigures, String> {
    let alpha_of = |n: &str, mean: f64| per_net(&net_name(n)).unwrap_or(mean);
    let (head, insts, _) = split_netlist(netlist)?;
    let v = lib.nom_voltage;
    let f = clock_mhz; // pJ * MHz = µW
    let outputs: Vec<String> = head
        .lines()
        .filter_map(|l| l.trim().strip_prefix("output "))
        .map(|r| {
            let r = r.trim().trim_end_matches(';').trim();
            // `output [3:0] x;` is not split by `splitnets -ports`: then the name alone.
            r.rsplit(' ').next().unwrap_or(r).trim().to_string()
        })
        .collect();
    let net = |n: &str| n.trim().to_string();
    // Load of every net, and whether a cell drives it.
    let mut load: HashMap<String, f64> = HashMap::new();
    let mut driven: HashMap<String, bool> = HashMap::new();
    for inst in &insts {
        let c = lib
            .cells
            .get(&inst.cell)
            .ok_or_else(|| format!("cell {} is not in the liberty", inst.cell))?;
        for (pin, n) in &inst.pins {
            let n = net(n);
            if n.starts_with(|ch: char| ch.is_ascii_digit()) {
                continue; // a constant
            }
            if c.outputs.contains_key(pin) {
                driven.insert(n, true);
            } else {
                *load.entry(n).or_default() += c.input_cap.get(pin).copied().unwrap_or(0.0);
            }
        }
    }
    for o in &outputs {
        *load.entry(o.clone()).or_default() += OUTPUT_LOAD_PF;
    }
    let clock_cap = load.get(clock).copied().unwrap_or(0.0);
    let mut switching = 0.0;
    let mut total_cap = 0.0;
    for (n, c) in &load {
        if n == clock {
            continue;
        }
        total_cap += c;
        let alpha = match driven.get(n) {
            Some(_) => continue, // counted with its driver below
            None => alpha_of(n, act.input),
        };
        switching += 0.5 * alpha * c * v * v * f;
    }
    let mut internal = 0.0;
    let mut leakage_nw = 0.0;
    let mut flops = 0;
    for inst in &insts {
        let c = &lib.cells[&inst.cell];
        leakage_nw += c.leakage_nw;
        let is_flop = !c.input_energy.is_empty() && inst.pins.iter().any(|(_, n)| net(n) == clock);
        let alpha = if is_flop { act.flop } else { act.comb };
        if is_flop {
            flops += 1;
            for (pin, p) in &c.input_energy {
                let on_clock = inst.pins.iter().any(|(q, n)| q == pin && net(n) == clock);
                // The clock pin: a rise and a fall every cycle; a data pin: per toggle.
                let e = p.rise.at(0.0, SLEW_NS) + p.fall.at(0.0, SLEW_NS);
                internal += if on_clock {
                    e * f
                } else {
                    let data = inst.pins.iter().find(|(q, _)| q == pin);
                    let a = data.map_or(alpha, |(_, n)| alpha_of(&net(n), alpha));
                    0.5 * a * e * f
                };
            }
        }
        for (pin, n) in &inst.pins {
            let Some(groups) = c.outputs.get(pin) else {
                continue;
            };
            let cl = load.get(&net(n)).copied().unwrap_or(0.0);
            let alpha = alpha_of(&net(n), alpha);
            switching += 0.5 * alpha * cl * v * v * f;
            if !groups.is_empty() {
                let e =
                    groups.iter().map(|g| g.mean(cl, SLEW_NS)).sum::<f64>() / groups.len() as f64;
                internal += alpha * e.max(0.0) * f;
            }
        }
    }
    let clock_uw = clock_cap * v * v * f;
    let dynamic = switching + internal + clock_uw;
    let leakage = leakage_nw * 1e-3;
    Ok(PowerFigures {
        clock_mhz,
        voltage: v,
        activity: act,
        cells: insts.len() as u64,
        flops,
        total_net_cap_pf: total_cap,
        clock_cap_pf: clock_cap,
        switching_uw: switching,
        internal_uw: internal,
        clock_uw,
        dynamic_uw: dynamic,
        leakage_uw: leakage,
        total_uw: dynamic + leakage,
    })
}

/// A net of a Yosys netlist by the name a simulator's dump gives it: unescaped, with a bit
/// select joined to its name (`\\br_pc[3] ` and `\\g_ent[2].rank_q [1]` are `br_pc[3]`
/// and `g_ent[2].rank_q[1]`).
pub fn net_name(n: &str) -> String {
    n.trim().trim_start_matches('\\').trim().replace(" [", "[")
}

/// Every net a cell of `netlist` connects to, but constants and the clock `clk`, by
/// [`net_name`]: the nets a per-net activity should cover.
pub fn netlist_nets(netlist: &str) -> Result<Vec<String>, String> {
    let (_, insts, _) = split_netlist(netlist)?;
    let mut nets: Vec<String> = insts
        .iter()
        .flat_map(|i| i.pins.iter().map(|(_, n)| net_name(n)))
        .filter(|n| !n.starts_with(|c: char| c.is_ascii_digit()) && n != "clk")
        .collect();
    nets.sort_unstable();
    nets.dedup();
    Ok(nets)
}

/// The OpenSTA script of the cross-check (`constraints/osu018_power.tcl`).
pub const STA_POWER_SCRIPT: &str = include_str!("../../constraints/osu018_power.tcl");

/// OpenSTA's `report_power` totals (µW) for the same netlist and activities: an
/// independent implementation of the same kind of model (it reads the energies at the
/// slews it computes and propagates nothing but the activities it is given).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StaPower {
    pub internal_uw: f64,
    pub switching_uw: f64,
    pub leakage_uw: f64,
    pub total_uw: f64,
}

/// Run OpenSTA's power report in `dir` (where [`crate::asic::osu018_in`] left the netlist
/// and the SDC of `top`), writing `osu018_power.tcl` and `osu018_power.log` there.
pub fn opensta_power(
    dir: &std::path::Path,
    top: &str,
    act: NetActivity,
    clock_mhz: f64,
) -> Result<StaPower, crate::tools::ToolError> {
    use crate::tools::{self, ToolError};
    let sta = tools::locate(crate::asic::OPENSTA)?;
    let script = STA_POWER_SCRIPT
        .replace("@LIB@", crate::asic::OSU018_LIB)
        .replace("@NETLIST@", "osu018_netlist.v")
        .replace("@TOP@", top)
        .replace("@SDC@", &format!("{top}.sdc"))
        .replace("@PERIOD_NS@", &format!("{}", 1000.0 / clock_mhz))
        .replace("@ACTIVITY@", &format!("{}", act.comb))
        .replace("@INPUT_ACTIVITY@", &format!("{}", act.input))
        .replace("@FLOP_ACTIVITY@", &format!("{}", act.flop));
    let io = |path: std::path::PathBuf| move |source| ToolError::Io { path, source };
    let p = dir.join("osu018_power.tcl");
    std::fs::write(&p, script).map_err(io(p.clone()))?;
    let ran = tools::run(
        &sta,
        &[
            "-no_splash".into(),
            "-exit".into(),
            "osu018_power.tcl".into(),
        ],
        dir,
    )?;
    let log = dir.join("osu018_power.log");
    std::fs::write(&log, &ran.text).map_err(io(log.clone()))?;
    parse_report_power(&ran.text).ok_or_else(|| ToolError::Failed {
        exe: "sta".into(),
        code: None,
        output: format!("OpenSTA gave no power report:\n{}", ran.text),
    })
}

/// The `Total` row of OpenSTA's `report_power` (watts) in µW.
fn parse_report_power(text: &str) -> Option<StaPower> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Total "))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .take(4)
        .map(|t| t.parse::<f64>().map(|w| w * 1e6))
        .collect::<Result<_, _>>()
        .ok()?;
    (v.len() == 4).then(|| StaPower {
        internal_uw: v[0],
        switching_uw: v[1],
        leakage_uw: v[2],
        total_uw: v[3],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = r#"
library(x) {
  nom_voltage : 1.8;
  cell (INVX1) {
    area : 16;
    cell_leakage_power : 0.05;
    pin(A)  {
      direction : input;
      capacitance : 0.01;
    }
    pin(Y)  {
      direction : output;
      internal_power() {
        related_pin : "A";
        rise_power(energy_template_2x2) {
          index_1 ("0.0, 0.1");
          index_2 ("0.1, 0.3");
          values ( \
            "0.010, 0.010", \
            "0.030, 0.030");
        }
        fall_power(energy_template_2x2) {
          index_1 ("0.0, 0.1");
          index_2 ("0.1, 0.3");
          values ("0.010, 0.010", "0.030, 0.030");
        }
      }
    }
  }
  cell (DFFPOSX1) {
    cell_leakage_power : 0.2;
    pin(CLK)  {
      direction : input;
      capacitance : 0.03;
      internal_power() {
        rise_power(passive_energy_template_2x1) {
          index_1 ("0.1, 0.3");
          values ("0.01, 0.01");
        }
        fall_power(passive_energy_template_2x1) {
          index_1 ("0.1, 0.3");
          values ("0.1, 0.1");
        }
      }
    }
    pin(D)  {
      direction : input;
      capacitance : 0.01;
    }
    pin(Q)  {
      direction : output;
    }
  }
}
"#;

    const NETLIST: &str = "module t(clk, a, y);
  input clk;
  input a;
  output y;
  wire q;
  DFFPOSX1 _f_ (
    .CLK(clk),
    .D(a),
    .Q(q)
  );
  INVX1 _i_ (
    .A(q),
    .Y(y)
  );
endmodule
";

    #[test]
    fn opensta_power_total_is_read() {
        let text = "Total                  2.23e-03   4.22e-04   1.45e-08   2.65e-03 100.0%\n";
        let p = parse_report_power(text).unwrap();
        assert!((p.total_uw - 2650.0).abs() < 1e-6);
        assert!((p.leakage_uw - 0.0145).abs() < 1e-9);
        assert!(parse_report_power("Total\n").is_none());
    }

    #[test]
    fn liberty_power_attributes_are_read() {
        let lib = read_power_liberty(LIB);
        assert_eq!(lib.nom_voltage, 1.8);
        let inv = &lib.cells["INVX1"];
        assert_eq!(inv.input_cap["A"], 0.01);
        let g = &inv.outputs["Y"][0];
        assert_eq!(g.related_pin, "A");
        assert_eq!(g.rise.values, vec![0.01, 0.01, 0.03, 0.03]);
        // Halfway along the load axis.
        assert!((g.mean(0.05, 0.18) - 0.02).abs() < 1e-12);
        let ff = &lib.cells["DFFPOSX1"];
        assert_eq!(ff.input_energy["CLK"].fall.at(0.0, 0.18), 0.1);
        assert!(ff.outputs.contains_key("Q"));
    }

    /// Hand-computed: V = 1.8, f = 100 MHz, flop alpha 0.5, comb 0.25, input 1.
    #[test]
    fn estimate_adds_up() {
        let lib = read_power_liberty(LIB);
        let act = NetActivity {
            flop: 0.5,
            comb: 0.25,
            input: 1.0,
        };
        let p = estimate(NETLIST, &lib, act, 100.0, "clk").unwrap();
        let v2f = 1.8 * 1.8 * 100.0;
        // Nets: a (D, 0.01 pF, input), q (A of INV, 0.01, flop), y (output, 0.02, comb).
        let switching = 0.5 * (1.0 * 0.01 + 0.5 * 0.01 + 0.25 * 0.02) * v2f;
        assert!((p.switching_uw - switching).abs() < 1e-9, "{p:?}");
        // Clock pin 0.11 pJ per cycle; INV at 0.02 pF: (0.014 rise + 0.014 fall)/2.
        let internal = 0.11 * 100.0 + 0.25 * 0.014 * 100.0;
        assert!((p.internal_uw - internal).abs() < 1e-9, "{p:?}");
        assert!((p.clock_uw - 0.03 * v2f).abs() < 1e-9);
        assert!((p.leakage_uw - 0.25e-3).abs() < 1e-12);
        assert_eq!(p.flops, 1);
        // Twice the clock: twice the dynamic power, the same leakage.
        let p2 = estimate(NETLIST, &lib, act, 200.0, "clk").unwrap();
        assert!((p2.dynamic_uw - 2.0 * p.dynamic_uw).abs() < 1e-9);
        assert_eq!(p2.leakage_uw, p.leakage_uw);
    }
}
