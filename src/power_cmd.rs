//! `warpforge power`: dynamic and leakage power of a unit in OSU 0.18 µm from the switching
//! activity of its RTL under co-simulation (random stimulus, an idle stimulus, or a trace
//! recorded from a workload), with the model and its ±2x accuracy printed beside the
//! figures. See `warpforge_gen::power` for the model.

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use warpforge_cosim::gatesim;
use warpforge_cosim::kits::random_stimulus;
use warpforge_cosim::replay::InputLog;
use warpforge_cosim::stimulus::{FnStimulus, TraceStimulus};
use warpforge_cosim::{Activity, BuildOptions, Cosim, Stimulus as LockstepStimulus};
use warpforge_gen::asic;
use warpforge_gen::power::{self, NetActivity, PowerFigures, POWER_ASSUMPTIONS, POWER_MODEL};
use warpforge_model::units::contract::{Bits, Params, UnitDesc};
use warpforge_model::units::trace::Trace;

#[derive(Args)]
pub struct PowerArgs {
    /// The unit (RTL module), e.g. slp_perm.
    #[arg(long, required_unless_present = "trace")]
    unit: Option<String>,
    /// Override a parameter (repeatable), e.g. --param S=8.
    #[arg(long = "param", value_name = "NAME=VALUE", conflicts_with = "trace")]
    params: Vec<String>,
    /// Activity from a unit trace recorded with `warpforge run --record-unit U --trace
    /// FILE` (every instance in it, one after the other) instead of random stimulus.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Cycles of random (or idle) stimulus.
    #[arg(long, default_value_t = 20_000)]
    cycles: u64,
    /// Seed of the random stimulus.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Idle stimulus instead of random: reset released, every other input held at 0 (the
    /// floor: clock and leakage).
    #[arg(long, conflicts_with = "trace")]
    idle: bool,
    /// Clock frequency (default: the osu018 target period of constraints/targets.toml,
    /// 4 ns = 250 MHz).
    #[arg(long, value_name = "MHZ")]
    clock_mhz: Option<f64>,
    /// Where the osu018 synthesis files go (default:
    /// warpforge-synth/<unit>/<parameters>/).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Cycles of the gate-level simulation (the first ones of the stimulus; of a trace, its
    /// first instance's) that give every net of the mapped netlist its own activity, and
    /// check the netlist's outputs against the model. 0: no gate-level run (one mean rate
    /// per kind of net, from the RTL).
    #[arg(long, default_value_t = 2_000)]
    gate_cycles: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// The report: figures, with the model and assumptions beside them.
#[derive(Debug, Serialize)]
pub struct PowerReport {
    pub unit: String,
    pub params: String,
    pub technology: String,
    /// What drove the RTL: `random (seed S, N cycles)`, `idle (N cycles)` or `trace FILE`.
    pub stimulus: String,
    pub cycles: u64,
    /// Mean transitions per bit per cycle, measured: inputs, outputs, registers (state).
    pub measured: MeasuredActivity,
    /// The estimate: per net from the gate-level simulation when it ran, else one mean
    /// rate per kind of net.
    #[serde(flatten)]
    pub figures: PowerFigures,
    /// The gate-level simulation that gave the per-net activities (`None`: not run).
    pub gate_level: Option<GateLevel>,
    /// The estimate with one mean rate per kind of net (what OpenSTA is given), beside the
    /// per-net one when the gate-level simulation ran.
    pub mean_rate: Option<PowerFigures>,
    pub area_um2: f64,
    /// OpenSTA's `report_power` on the same netlist with the mean-rate activities.
    pub opensta: power::StaPower,
    /// Our mean-rate total over OpenSTA's.
    pub opensta_ratio: f64,
    pub model: String,
    pub accuracy: String,
    pub assumptions: Vec<String>,
    /// Per port of the RTL: bits and transitions over the run.
    pub ports: Vec<warpforge_cosim::lockstep::PortActivity>,
    pub dir: PathBuf,
}

/// The gate-level run behind a per-net estimate.
#[derive(Debug, Serialize)]
pub struct GateLevel {
    /// Cycles simulated (its reset cycle included).
    pub cycles: u64,
    /// Nets of the netlist with a count of their own, and without (mean rate of their kind).
    pub nets_measured: usize,
    pub nets_unmeasured: usize,
    /// The testbench's check of the netlist's outputs against the model.
    pub verdict: String,
    pub dir: PathBuf,
}

#[derive(Debug, Serialize)]
pub struct MeasuredActivity {
    pub input: f64,
    pub output: f64,
    pub state: f64,
    pub state_bits: u64,
    pub mean: f64,
}

/// What drives the RTL while its activity is counted.
pub enum Stimulus<'a> {
    /// The unit's seeded random stimulus.
    Random { seed: u64, cycles: u64 },
    /// Reset released, every other input 0: the floor (clock and leakage).
    Idle { cycles: u64 },
    /// Every instance of a recorded trace, one after the other.
    Trace { trace: &'a Trace, path: &'a Path },
}

pub fn power(a: &PowerArgs) -> Result<u8> {
    let (desc, params, trace) = match &a.trace {
        Some(path) => {
            let trace = Trace::read_of(path, a.unit.as_deref()).map_err(anyhow::Error::msg)?;
            (trace.desc, trace.params.clone(), Some(trace))
        }
        None => {
            let desc = warpforge_gen::find_unit(a.unit.as_deref().expect("clap: --unit"))?;
            let params = warpforge_gen::parse_params(desc, &a.params)?;
            (desc, params, None)
        }
    };
    let stimulus = match (&trace, &a.trace) {
        (Some(trace), Some(path)) => Stimulus::Trace { trace, path },
        _ if a.idle => Stimulus::Idle { cycles: a.cycles },
        _ => Stimulus::Random {
            seed: a.seed,
            cycles: a.cycles,
        },
    };
    let dir = a.out.clone().unwrap_or_else(|| default_dir(desc, &params));
    let report = estimate(desc, &params, &stimulus, a.clock_mhz, a.gate_cycles, &dir)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", text(&report));
    }
    Ok(0)
}

/// Where the osu018 files of a unit's power estimate go by default (the folder `synth
/// --target osu018` uses, so either reuses the other's mapping).
pub fn default_dir(desc: &'static UnitDesc, params: &Params) -> PathBuf {
    Path::new("warpforge-synth").join(warpforge_gen::params_dir(desc, params))
}

/// Check that every tool the estimate needs is installed, naming the install command of
/// the first one missing.
pub fn check_tools() -> Result<()> {
    warpforge_cosim::build::toolchain(&BuildOptions::default()).map_err(|e| {
        anyhow::anyhow!(
            "{e}\npower needs Verilator 5 and g++ for the activity: on Debian/Ubuntu run \
             `sudo apt-get install -y verilator g++` (or ./scripts/install-tools.sh)"
        )
    })?;
    warpforge_gen::tools::locate(warpforge_gen::tools::YOSYS)?;
    warpforge_gen::tools::locate(asic::OPENSTA)?;
    if !Path::new(asic::OSU018_LIB).exists() {
        bail!(
            "{} does not exist: power needs the OSU 0.18 um liberty; run `sudo {}`",
            asic::OSU018_LIB,
            asic::OPENSTA.install
        );
    }
    Ok(())
}

/// The power estimate of `desc` at `params` under `stimulus`, at `clock_mhz` (default:
/// the osu018 target period), with the osu018 files in `dir`; per net from a gate-level
/// simulation of the first `gate_cycles` cycles (0: one mean rate per kind of net).
pub fn estimate(
    desc: &'static UnitDesc,
    params: &Params,
    stimulus: &Stimulus,
    clock_mhz: Option<f64>,
    gate_cycles: u64,
    dir: &Path,
) -> Result<PowerReport> {
    let target = asic::target("osu018").map_err(anyhow::Error::msg)?;
    let clock_mhz = clock_mhz.unwrap_or(1000.0 / target.period_ns);
    if !(clock_mhz.is_finite() && clock_mhz > 0.0) {
        bail!("--clock-mhz must be a positive number, not {clock_mhz}");
    }
    // Tools first, so a missing one is named before any long step.
    check_tools()?;

    eprintln!(
        "power: co-simulating {} ({params}) for its activity",
        desc.name
    );
    let (activity, stimulus, first_inputs) = measure_activity(desc, params, stimulus, gate_cycles)?;

    eprintln!("power: synthesising {} in osu018", desc.name);
    let unit = warpforge_gen::generate(desc, params)?;
    let dir = dir.to_path_buf();
    let asic = asic::osu018_in(&unit, &dir)?;
    let lib_text = std::fs::read_to_string(asic::OSU018_LIB)
        .with_context(|| format!("cannot read {}", asic::OSU018_LIB))?;
    let lib = power::read_power_liberty(&lib_text);
    let netlist_path = dir.join("osu018_netlist.v");
    let netlist = std::fs::read_to_string(&netlist_path)
        .with_context(|| format!("cannot read {}", netlist_path.display()))?;

    let (state_bits, _) = activity.totals("state");
    let mean = activity.mean_rate();
    let mut assumptions: Vec<String> = POWER_ASSUMPTIONS.iter().map(|s| s.to_string()).collect();
    let flop_rate = if state_bits > 0 {
        activity.rate("state")
    } else {
        if asic.flops > 0 {
            assumptions
                .push("the RTL exposes no register state: flip-flops at the mean rate".to_string());
        }
        mean
    };
    let act = NetActivity {
        flop: flop_rate,
        comb: mean,
        input: activity.rate("input"),
    };
    let mean_rate = power::estimate(&netlist, &lib, act, clock_mhz, "clk")
        .map_err(|e| anyhow::anyhow!("{}: {e}", netlist_path.display()))?;
    let mean_total = mean_rate.total_uw;
    let (figures, gate_level, mean_rate) = if gate_cycles > 0 && first_inputs.cycles() > 0 {
        eprintln!(
            "power: gate-level simulation of the netlist, {} cycles (Icarus)",
            first_inputs.cycles()
        );
        let gates = match gatesim::gate_level_activity(
            desc,
            params,
            &first_inputs,
            &netlist,
            &dir.join("gates"),
        ) {
            Ok(g) => Some(g),
            // A missing simulator is no reason to lose the estimate: the mean rates stand
            // in, and say why. A netlist that differs from the model is an error.
            Err(warpforge_cosim::CosimError::Toolchain(why)) => {
                eprintln!("power: no gate-level run ({why}); one mean rate per kind of net");
                assumptions.push(format!(
                    "no gate-level simulation ({why}): one mean rate per kind of net"
                ));
                None
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(gates) = gates {
            let per_net = |n: &str| gates.rate(n);
            let figures = power::estimate_per_net(&netlist, &lib, act, &per_net, clock_mhz, "clk")
                .map_err(|e| anyhow::anyhow!("{}: {e}", netlist_path.display()))?;
            let nets = power::netlist_nets(&netlist)
                .map_err(|e| anyhow::anyhow!("{}: {e}", netlist_path.display()))?;
            let measured = nets.iter().filter(|n| gates.rate(n).is_some()).count();
            // The mean-rate assumptions describe the cross-check now, not the estimate.
            assumptions.retain(|a| !a.contains("toggle at the") && !a.contains("at the mean rate"));
            assumptions.push(format!(
                "activity per net: every net's own 0-1 transitions in a zero-delay gate-level \
             simulation (Icarus, the library's cell models) of the first {} cycles; nets \
             outside it at the mean rate of their kind",
                gates.cycles
            ));
            let gl = GateLevel {
                cycles: gates.cycles,
                nets_measured: measured,
                nets_unmeasured: nets.len() - measured,
                verdict: gates.verdict.clone(),
                dir: gates.dir.clone(),
            };
            (figures, Some(gl), Some(mean_rate))
        } else {
            (mean_rate, None, None)
        }
    } else {
        (mean_rate, None, None)
    };
    eprintln!("power: OpenSTA's report_power on the same netlist (cross-check)");
    let sta = power::opensta_power(&dir, &unit.manifest.top, act, clock_mhz)?;
    Ok(PowerReport {
        unit: desc.name.to_string(),
        params: params.to_string(),
        technology: "osu018".into(),
        stimulus,
        cycles: activity.cycles,
        measured: MeasuredActivity {
            input: activity.rate("input"),
            output: activity.rate("output"),
            state: activity.rate("state"),
            state_bits,
            mean,
        },
        figures,
        gate_level,
        mean_rate,
        area_um2: asic.area_um2,
        opensta: sta,
        opensta_ratio: mean_total / sta.total_uw,
        model: POWER_MODEL.into(),
        accuracy: "about +/-2x".into(),
        assumptions,
        ports: activity.ports.clone(),
        dir,
    })
}

/// Run the stimulus through the co-simulation (RTL against the model, every cycle),
/// counting the RTL's transitions.
fn measure_activity(
    desc: &'static UnitDesc,
    params: &Params,
    stimulus: &Stimulus,
    keep: u64,
) -> Result<(Activity, String, InputLog)> {
    let cosim = Cosim::generated(desc, params.clone(), &BuildOptions::default())?
        .with_failure_dir(Some(PathBuf::from("cosim-failures")));
    let mut act = Activity::new(desc, params);
    let mut first = InputLog::new(desc, params);
    let stimulus = match *stimulus {
        Stimulus::Trace { trace, path } => {
            for (i, inst) in trace.header.instances.iter().enumerate() {
                let mut stim = TraceStimulus::new(trace, i).map_err(anyhow::Error::msg)?;
                let keep = if i == 0 { keep } else { 0 };
                cosim.run_activity(
                    &inst.name,
                    &mut Logged::new(&mut stim, &mut first, keep),
                    &mut act,
                )?;
                if let Some(e) = stim.error() {
                    bail!("{}: instance {}: {e}", path.display(), inst.name);
                }
            }
            format!(
                "trace {} ({} instances)",
                path.display(),
                trace.header.instances.len()
            )
        }
        Stimulus::Idle { cycles } => {
            let rst = desc.port_index("rst_n");
            let mut stim = FnStimulus(move |cycle: u64, ports: &mut [Bits]| {
                for (i, p) in desc.ports.iter().enumerate() {
                    if p.role.is_input() {
                        ports[i].clear();
                        if Some(i) == rst {
                            ports[i].set_u64(1);
                        }
                    }
                }
                cycle < cycles
            });
            let mut stim = Logged::new(&mut stim, &mut first, keep);
            cosim.run_activity("u0", &mut stim, &mut act)?;
            format!("idle ({cycles} cycles: reset released, other inputs 0)")
        }
        Stimulus::Random { seed, cycles } => {
            let mut stim = random_stimulus(desc, params, seed, cycles);
            let mut stim = Logged::new(&mut *stim, &mut first, keep);
            cosim.run_activity("u0", &mut stim, &mut act)?;
            format!("random (seed {seed}, {cycles} cycles)")
        }
    };
    if act.transitions == 0 {
        bail!("the stimulus ran fewer than two cycles: no activity to measure");
    }
    Ok((act, stimulus, first))
}

/// A stimulus that also keeps the inputs of its first `keep` cycles (for the gate-level
/// simulation to replay).
struct Logged<'a, S: LockstepStimulus + ?Sized> {
    inner: &'a mut S,
    log: &'a mut InputLog,
    keep: u64,
}

impl<'a, S: LockstepStimulus + ?Sized> Logged<'a, S> {
    fn new(inner: &'a mut S, log: &'a mut InputLog, keep: u64) -> Self {
        Logged { inner, log, keep }
    }
}

impl<S: LockstepStimulus + ?Sized> LockstepStimulus for Logged<'_, S> {
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        let more = self.inner.drive(cycle, ports);
        if more && self.log.cycles() < self.keep {
            self.log.push(ports);
        }
        more
    }
    fn reads_outputs(&self) -> bool {
        self.inner.reads_outputs()
    }
    fn steer(&mut self, coverage: &warpforge_model::units::coverage::Coverage) {
        self.inner.steer(coverage)
    }
}

fn text(r: &PowerReport) -> String {
    let f = &r.figures;
    let m = &r.measured;
    let est = "estimate, +/-2x";
    let mut s = String::new();
    s += &format!("{} ({}) in {}\n", r.unit, r.params, r.technology);
    s += &format!(
        "  at {:.1} MHz, {:.2} V (liberty nominal); {} cells, {} flip-flops, {:.0} um^2\n",
        f.clock_mhz, f.voltage, f.cells, f.flops, r.area_um2
    );
    s += &format!(
        "  stimulus: {}, {} cycles co-simulated\n",
        r.stimulus, r.cycles
    );
    s += &format!(
        "  measured activity (transitions/bit/cycle): inputs {:.3}, outputs {:.3}, registers {:.3} ({} bits), mean {:.3}\n",
        m.input, m.output, m.state, m.state_bits, m.mean
    );
    match &r.gate_level {
        Some(g) => {
            s += &format!(
                "  activity used: per net, from a gate-level simulation of the netlist ({} cycles; {} nets measured, {} at their kind's mean rate)\n",
                g.cycles, g.nets_measured, g.nets_unmeasured
            );
            s += &format!("  gate-level check against the model: {}\n", g.verdict);
        }
        None => {
            s += &format!(
                "  activity used: flip-flops {:.3}, combinational cells {:.3}, unit inputs {:.3}\n",
                f.activity.flop, f.activity.comb, f.activity.input
            );
        }
    }
    let row = |name: &str, uw: f64, how: &str| {
        format!("  {name:<10} {:>12} uW  ({est}; {how})\n", fmt_uw(uw))
    };
    s += &row(
        "switching",
        f.switching_uw,
        "0.5*alpha*C*V^2*f on pin loads",
    );
    s += &row(
        "internal",
        f.internal_uw,
        "liberty internal energies per toggle, clock pins",
    );
    s += &row("clock net", f.clock_uw, "C_clk*V^2*f, ideal clock");
    s += &row("dynamic", f.dynamic_uw, "switching + internal + clock net");
    s += &row("leakage", f.leakage_uw, "liberty cell_leakage_power sum");
    s += &row("total", f.total_uw, "dynamic + leakage");
    if let Some(m) = &r.mean_rate {
        s += &format!(
            "  with one mean rate per kind of net instead (flip-flops {:.3}, combinational cells {:.3}, inputs {:.3}): {} uW total, {} uW dynamic (estimate, +/-2x)\n",
            m.activity.flop,
            m.activity.comb,
            m.activity.input,
            fmt_uw(m.total_uw),
            fmt_uw(m.dynamic_uw)
        );
    }
    s += &format!(
        "  cross-check: OpenSTA report_power, same netlist, mean-rate activities: {} uW total ({} internal, {} switching incl. clock, {} leakage); ours (mean-rate) / OpenSTA = {:.2}\n",
        fmt_uw(r.opensta.total_uw),
        fmt_uw(r.opensta.internal_uw),
        fmt_uw(r.opensta.switching_uw),
        fmt_uw(r.opensta.leakage_uw),
        r.opensta_ratio
    );
    s += &format!("  model: {}\n", r.model);
    s += "  assumptions:\n";
    for a in &r.assumptions {
        s += &format!("    - {a}\n");
    }
    s += &format!("  files: {}\n", r.dir.display());
    s
}

fn fmt_uw(uw: f64) -> String {
    if uw >= 100.0 {
        format!("{uw:.0}")
    } else if uw >= 1.0 {
        format!("{uw:.2}")
    } else {
        format!("{uw:.4}")
    }
}
