//! Gate-level simulation of a unit's mapped netlist (OSU 0.18 µm cells) under Icarus
//! Verilog, against the same stimulus the co-simulation drove, for two things at once:
//!
//! - **the netlist is checked against the model**: the replay testbench
//!   ([`crate::testbench`]) compares every functional output of the gates with the Rust
//!   model's value every cycle, four-state (`!==`: an X is a mismatch), so a mapping, a
//!   fan-out buffering or an uninitialised-state problem shows as a failure naming the cycle
//!   and port;
//! - **per-net switching activity**: every net of the netlist is dumped to a VCD and its
//!   0↔1 transitions counted, which the power estimate turns into per-net switching and
//!   internal power instead of one mean rate per kind of net.
//!
//! The netlist's ports are single bits (`splitnets -ports`: `\br_pc[3]`), so a generated
//! wrapper with the unit's vector ports, named like the unit, connects the testbench to it;
//! the netlist module is renamed `<unit>_gates`. The cells are the library's own Verilog
//! models (`osu018_stdcells.v`, user-defined primitives that Icarus runs; its `specify`
//! delays are ignored: zero-delay, so no glitches are counted).

use crate::build::RtlSource;
use crate::replay::{model_outputs, InputLog, Replay, ReplayHeader};
use crate::testbench::{CYCLE, SETTLE};
use crate::CosimError;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use warpforge_gen::tools::{self, ToolSpec};
use warpforge_model::units::contract::{Params, Role, UnitDesc};

/// The cells' Verilog models shipped with Debian's qflow-tech-osu018.
pub const OSU018_CELLS_V: &str = "/usr/share/qflow/tech/osu018/osu018_stdcells.v";

/// The time unit of the testbench's delays (and the cells' own).
const TIMESCALE: &str = "`timescale 1ns/10ps";

const VVP: ToolSpec = ToolSpec {
    exe: "vvp",
    install: tools::IVERILOG.install,
};

/// What the gate-level run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GateActivity {
    /// Clock cycles simulated (the testbench's reset cycle included).
    pub cycles: u64,
    /// 0↔1 transitions per net of the netlist (by its name in the netlist, without the
    /// escaping backslash: `_123_`, `br_pc[3]`, `g_ent[2].rank_q[1]`).
    #[serde(skip)]
    pub toggles: HashMap<String, u64>,
    /// Nets seen in the dump.
    pub nets: usize,
    /// The testbench's verdict line (`PASS: ...`).
    pub verdict: String,
    /// Where the testbench, the wrapper, the VCD and the log are.
    pub dir: PathBuf,
}

impl GateActivity {
    /// Transitions per cycle of `net` (`None`: not in the dump).
    pub fn rate(&self, net: &str) -> Option<f64> {
        self.toggles
            .get(net)
            .map(|&t| t as f64 / self.cycles.max(1) as f64)
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> CosimError + '_ {
    move |e| CosimError::Io(format!("{}: {e}", path.display()))
}

/// Simulate `netlist` (the text of the unit's mapped netlist, top module `desc.name`) over
/// the inputs of `log` (from its first cycle, after the testbench's reset cycle), check its
/// outputs against the model, and count every net's transitions; files go to `dir`.
pub fn gate_level_activity(
    desc: &'static UnitDesc,
    params: &Params,
    log: &InputLog,
    netlist: &str,
    dir: &Path,
) -> Result<GateActivity, CosimError> {
    let tool = |e: tools::ToolError| CosimError::Toolchain(e.to_string());
    let iverilog = tools::locate(tools::IVERILOG).map_err(tool)?;
    let vvp = tools::locate(VVP).map_err(tool)?;
    if !Path::new(OSU018_CELLS_V).exists() {
        return Err(CosimError::Toolchain(format!(
            "{OSU018_CELLS_V} does not exist: the gate-level simulation needs the cells' \
             Verilog models of qflow-tech-osu018 (`apt-get install -y qflow-tech-osu018`)"
        )));
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let gates_top = format!("{}_gates", desc.name);
    let renamed = rename_module(netlist, desc.name, &gates_top)
        .ok_or_else(|| CosimError::Replay(format!("the netlist has no module {}", desc.name)))?;
    let wrapper = wrapper(desc, params, &renamed, &gates_top)?;
    let rtl = RtlSource::new(
        desc.name,
        vec![
            ("gates_netlist.v".into(), renamed),
            (format!("{}_gates_wrapper.v", desc.name), wrapper),
        ],
    );
    let replay = Replay {
        header: ReplayHeader {
            format: crate::replay::FORMAT.into(),
            unit: desc.name.into(),
            instance: "gate-level".into(),
            params: params.iter().map(|(k, v)| (k.to_string(), v)).collect(),
            rtl: rtl.clone(),
            inputs: vec![],
            outputs: vec![],
            first_cycle: log.first(),
            fail_cycle: None,
            fail_port: None,
            cycles: log.cycles(),
            post_cycles: 0,
        },
        log: log.clone(),
        expected: Some(model_outputs(desc, params, log)),
    };
    let tb = crate::testbench::testbench_with(&replay, desc, params, &rtl, false)?;
    let mut files = vec![OSU018_CELLS_V.to_string()];
    for (name, text) in &tb.rtl_files {
        let p = dir.join(name);
        std::fs::write(&p, format!("{TIMESCALE}\n{text}")).map_err(io(&p))?;
        files.push(name.clone());
    }
    let tb_file = format!("{}.v", tb.module);
    std::fs::write(dir.join(&tb_file), format!("{TIMESCALE}\n{}", tb.text))
        .map_err(io(&dir.join(&tb_file)))?;
    files.push(tb_file);
    let mut args: Vec<String> = ["-g2005", "-DWF_TB_VCD", "-o", "gates_tb.vvp"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(files);
    let ran = tools::run(&iverilog, &args, dir).map_err(tool)?;
    let log_path = dir.join("gates_sim.log");
    let mut log_text = ran.text.clone();
    if ran.code != Some(0) {
        std::fs::write(&log_path, &log_text).map_err(io(&log_path))?;
        return Err(CosimError::Build {
            stage: "iverilog (gate-level netlist)".into(),
            log: ran.text,
        });
    }
    let ran = tools::run(&vvp, &["-n".into(), "gates_tb.vvp".into()], dir).map_err(tool)?;
    log_text += &ran.text;
    std::fs::write(&log_path, &log_text).map_err(io(&log_path))?;
    let verdict = ran
        .text
        .lines()
        .find(|l| l.starts_with("PASS:"))
        .map(str::to_string);
    let Some(verdict) = verdict else {
        let fails: Vec<&str> = ran
            .text
            .lines()
            .filter(|l| l.starts_with("FAIL:"))
            .take(8)
            .collect();
        return Err(CosimError::Replay(format!(
            "the gate-level netlist of {} differs from the model:\n{}\n(log: {})",
            desc.name,
            if fails.is_empty() {
                ran.text.clone()
            } else {
                fails.join("\n")
            },
            log_path.display()
        )));
    };
    let vcd = dir.join(format!("{}.vcd", tb.module));
    let toggles = count_toggles(&vcd, &["dut", "gates"])?;
    // The dump is large and only its counts are kept.
    let _ = std::fs::remove_file(&vcd);
    Ok(GateActivity {
        cycles: log.cycles() + 1,
        nets: toggles.len(),
        toggles,
        verdict,
        dir: dir.to_path_buf(),
    })
}

/// `netlist` with its module `from` renamed `to` (`None`: no such module).
fn rename_module(netlist: &str, from: &str, to: &str) -> Option<String> {
    let key = format!("module {from}(");
    let at = netlist.find(&key)?;
    Some(format!(
        "{}module {to}({}",
        &netlist[..at],
        &netlist[at + key.len()..]
    ))
}

/// The port names of module `top` in a Yosys netlist, unescaped (`br_pc[3]`).
fn netlist_ports(netlist: &str, top: &str) -> Option<Vec<String>> {
    let key = format!("module {top}(");
    let start = netlist.find(&key)? + key.len();
    let end = start + netlist[start..].find(");")?;
    Some(
        netlist[start..end]
            .split(',')
            .map(|p| p.trim().trim_start_matches('\\').trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
    )
}

/// A module named like the unit, with its functional ports as vectors, around the netlist's
/// bit-level ports.
fn wrapper(
    desc: &UnitDesc,
    params: &Params,
    netlist: &str,
    gates_top: &str,
) -> Result<String, CosimError> {
    let ports = netlist_ports(netlist, gates_top)
        .ok_or_else(|| CosimError::Replay(format!("cannot read the port list of {gates_top}")))?;
    let has = |n: &str| ports.iter().any(|p| p == n);
    let widths = desc.widths(params);
    let mut decls = vec!["input wire clk".to_string()];
    let mut conns = vec![".clk(clk)".to_string()];
    for (i, p) in desc.ports.iter().enumerate() {
        if p.role == Role::Debug {
            continue;
        }
        let w = widths[i];
        let dir = if p.role.is_input() { "input" } else { "output" };
        let range = if w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        };
        decls.push(format!("{dir} wire {range}{}", p.name));
        if has(p.name) {
            conns.push(format!(".{0}({0})", p.name));
            continue;
        }
        for b in 0..w {
            let bit = format!("{}[{b}]", p.name);
            if !has(&bit) {
                return Err(CosimError::Replay(format!(
                    "the netlist of {} has no port {} nor {bit}",
                    desc.name, p.name
                )));
            }
            let sel = if w == 1 {
                p.name.to_string()
            } else {
                bit.clone()
            };
            conns.push(format!(".\\{bit} ({sel})"));
        }
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {unit} with vector ports around its gate-level netlist ({gates_top}), for the\n\
         // replay testbench; generated by warpforge.",
        unit = desc.name
    );
    let _ = writeln!(s, "module {}(\n  {}\n);", desc.name, decls.join(",\n  "));
    let _ = writeln!(
        s,
        "  {gates_top} gates (\n    {}\n  );",
        conns.join(",\n    ")
    );
    let _ = writeln!(s, "endmodule");
    Ok(s)
}

/// Transitions of every net bit in the scope `path` (relative to the dump's top scope) of
/// the testbench's VCD, by net name (vector nets as `name[i]`): the settled value of each
/// bit is sampled once per cycle, when the testbench compares the outputs (`SETTLE` after
/// the cycle starts), and a 0↔1 change between two samples is one transition. Counting
/// per sample rather than per value change makes the count that of a zero-delay circuit
/// whose inputs and registers change together at the clock edge (the testbench applies
/// inputs half a cycle after the edge, which would otherwise count a net fed by both
/// twice), and leaves X↔value changes out.
fn count_toggles(vcd: &Path, path: &[&str]) -> Result<HashMap<String, u64>, CosimError> {
    use vcd::{Command, ScopeItem, TimescaleUnit, Value};
    let bad = |e: String| CosimError::Io(format!("{}: {e}", vcd.display()));
    let f = std::fs::File::open(vcd).map_err(io(vcd))?;
    let mut parser = vcd::Parser::new(std::io::BufReader::new(f));
    let header = parser.parse_header().map_err(|e| bad(e.to_string()))?;
    // Dump ticks per testbench time unit (1 ns, see `TIMESCALE`).
    let (n, unit) = header
        .timescale
        .ok_or_else(|| bad("no $timescale".into()))?;
    let fs_per_tick = n as u64
        * match unit {
            TimescaleUnit::S => 1_000_000_000_000_000,
            TimescaleUnit::MS => 1_000_000_000_000,
            TimescaleUnit::US => 1_000_000_000,
            TimescaleUnit::NS => 1_000_000,
            TimescaleUnit::PS => 1_000,
            TimescaleUnit::FS => 1,
        };
    if fs_per_tick == 0 || 1_000_000 % fs_per_tick != 0 {
        return Err(bad(format!("unexpected $timescale {n} {unit:?}")));
    }
    let ticks_per_ns = 1_000_000 / fs_per_tick;
    let cycle = CYCLE * ticks_per_ns;
    let settle = SETTLE * ticks_per_ns;

    let mut scope = header
        .items
        .iter()
        .find_map(|it| match it {
            ScopeItem::Scope(s) => Some(s),
            _ => None,
        })
        .ok_or_else(|| bad("no scope".into()))?;
    for name in path {
        scope = scope
            .items
            .iter()
            .find_map(|it| match it {
                ScopeItem::Scope(s) if s.identifier == *name => Some(s),
                _ => None,
            })
            .ok_or_else(|| bad(format!("no scope {name} in the dump")))?;
    }
    // Per id code: its bits' current and last sampled values and transitions; per variable
    // (several may share a code: a port and the wire it is), its bits' net names, LSB first.
    struct Signal {
        now: Vec<Value>,
        sampled: Vec<Value>,
        toggles: Vec<u64>,
        dirty: bool,
    }
    let mut signals: HashMap<vcd::IdCode, Signal> = HashMap::new();
    let mut names: Vec<(vcd::IdCode, Vec<String>)> = vec![];
    for it in &scope.items {
        let ScopeItem::Var(v) = it else { continue };
        let name = v.reference.trim_start_matches('\\').to_string();
        let w = v.size.max(1) as usize;
        // Bit `pos` (from the right of the dumped value) of a `[left:right]` variable is
        // index `right + pos` when it descends, `right - pos` when it ascends.
        let bits: Vec<String> = match v.index {
            Some(vcd::ReferenceIndex::BitSelect(b)) => vec![format!("{name}[{b}]")],
            Some(vcd::ReferenceIndex::Range(left, right)) => (0..w as i64)
                .map(|pos| {
                    let (l, r) = (left as i64, right as i64);
                    format!("{name}[{}]", if l >= r { r + pos } else { r - pos })
                })
                .collect(),
            None if w == 1 => vec![name],
            None => (0..w).map(|b| format!("{name}[{b}]")).collect(),
        };
        let s = signals.entry(v.code).or_insert(Signal {
            now: vec![],
            sampled: vec![],
            toggles: vec![],
            dirty: false,
        });
        if s.now.len() < w {
            s.now.resize(w, Value::X);
            s.sampled.resize(w, Value::X);
            s.toggles.resize(w, 0);
        }
        names.push((v.code, bits));
    }
    let mut dirty: Vec<vcd::IdCode> = vec![];
    let sample = |signals: &mut HashMap<vcd::IdCode, Signal>, dirty: &mut Vec<vcd::IdCode>| {
        for id in dirty.drain(..) {
            let s = signals.get_mut(&id).expect("a dirty signal exists");
            s.dirty = false;
            for b in 0..s.now.len() {
                if matches!(
                    (s.sampled[b], s.now[b]),
                    (Value::V0, Value::V1) | (Value::V1, Value::V0)
                ) {
                    s.toggles[b] += 1;
                }
                s.sampled[b] = s.now[b];
            }
        }
    };
    let mut next_sample = settle;
    for cmd in parser {
        match cmd.map_err(|e| bad(e.to_string()))? {
            // Every sample point before `t` saw the values as they are now.
            Command::Timestamp(t) if t > next_sample => {
                sample(&mut signals, &mut dirty);
                next_sample += (t - next_sample).div_ceil(cycle) * cycle;
            }
            Command::ChangeScalar(id, v) => {
                if let Some(s) = signals.get_mut(&id) {
                    s.now[0] = v;
                    if !s.dirty {
                        s.dirty = true;
                        dirty.push(id);
                    }
                }
            }
            Command::ChangeVector(id, bits) => {
                if let Some(s) = signals.get_mut(&id) {
                    // MSB first; a shorter value is left-extended with 0 (X or Z when it
                    // starts with one).
                    let vals: Vec<Value> = bits.iter().collect();
                    let fill = match vals.first() {
                        Some(Value::X) => Value::X,
                        Some(Value::Z) => Value::Z,
                        _ => Value::V0,
                    };
                    for b in 0..s.now.len() {
                        s.now[b] = if b < vals.len() {
                            vals[vals.len() - 1 - b]
                        } else {
                            fill
                        };
                    }
                    if !s.dirty {
                        s.dirty = true;
                        dirty.push(id);
                    }
                }
            }
            _ => {}
        }
    }
    sample(&mut signals, &mut dirty);
    let mut out = HashMap::new();
    for (code, bits) in names {
        let s = &signals[&code];
        for (b, name) in bits.into_iter().enumerate() {
            out.insert(name, s.toggles.get(b).copied().unwrap_or(0));
        }
    }
    Ok(out)
}
