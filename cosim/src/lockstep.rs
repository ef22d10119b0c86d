//! The lockstep engine: RTL and unit model side by side, compared every cycle.
//!
//! Per cycle `t` (after one implicit reset cycle both sides take before cycle 0):
//! 1. `model.registered_outputs(ports)`: the registered ports now hold state(t)
//!    (skipped when the stimulus says it does not read outputs);
//! 2. `stimulus.drive(t, ports)` writes the input positions (false ends the run);
//! 3. the RTL gets the inputs and settles with the clock low;
//! 4. the combinational outputs for this cycle's inputs (the registered ports still hold
//!    state(t) from step 1; all outputs when step 1 was skipped):
//!    `model.outputs_keeping_inputs(ports, ..)`, which keeps the inputs it read for the
//!    clock edge of step 7 (`model.tick_kept`);
//! 5. every registered and combinational output is compared, RTL vs model, as words;
//! 6. every [`STATE_INTERVAL`] cycles (by default; [`Cosim::with_state_interval`]) the
//!    internal state too: the RTL latches it into the wrapper's debug-state ports
//!    ([`RtlModel::sample_state`]) and the model packs its own (`UnitModel::debug_state`);
//! 7. both take the clock edge.
//!
//! After the last cycle the final state is compared once more. Comparing state every N
//! cycles bounds the detection latency to N cycles, not the report: a state difference
//! seen at a sample is located by re-running the same inputs with the state compared
//! every cycle, and reported at the first cycle it exists.
//!
//! Nothing is allocated and nothing is looked up by name inside the loop.
//!
//! With two cores, [`Cosim::run`] splits each cycle between two threads: steps 1, 2, 4
//! and the model's half of 6 and 7 run ahead on one, the RTL's half on the other
//! (`lockstep/pipelined.rs`); a difference is then reported by the sequential loop above,
//! re-run from the start. A stimulus written against its unit's typed ports has a model
//! side that writes the frames straight from the typed values (`lockstep/typed_side.rs`);
//! on one thread its run alternates the two halves a batch of frames at a time.

use crate::build::{self, BuildOptions, BuiltModel, RtlSource};
use crate::replay::{InputLog, Replay, ReplayHeader, FORMAT};
use crate::rtl::{RtlError, RtlLibrary, RtlModel};
use crate::stimulus::TraceStimulus;
use crate::wave::{BothVcd, Sample};
use crate::CosimError;
use rayon::prelude::*;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpforge_model::units::contract::{Bits, Params, PortSpec, Role, UnitDesc, UnitModel};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::trace::Trace;

mod model_side;
mod pipelined;
pub mod typed_side;

use model_side::ModelSide;
pub use typed_side::{FrameSetup, FrameSide, TypedStimulus};

/// The driver of a unit's inputs.
pub trait Stimulus {
    /// Write the input positions of `ports` for `cycle`. The registered and debug ports
    /// already hold state(`cycle`) (combinational ones are stale); return false to end.
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool;

    /// Whether `drive` reads the registered/debug outputs. Returning false lets the harness
    /// skip one model evaluation per cycle.
    fn reads_outputs(&self) -> bool {
        true
    }

    /// Whether [`Stimulus::rewind`] restarts the exact same input sequence. A rewindable
    /// stimulus is re-run after a divergence to produce the replay file; any other is
    /// recorded while running (a copy of its inputs every cycle).
    fn can_rewind(&self) -> bool {
        false
    }

    /// Restart from cycle 0 (only called when [`Stimulus::can_rewind`]).
    fn rewind(&mut self) {}

    /// Steer towards the coverage bins not hit yet: called before the first cycle and every
    /// [`STEER_INTERVAL`] cycles with the run's coverage so far. A rewound stimulus sees
    /// the same calls at the same cycles (the coverage depends only on the inputs).
    fn steer(&mut self, _coverage: &Coverage) {}

    /// The model thread of the two-thread lockstep for this stimulus (its cycles written
    /// as frames of words). By default the by-name path ([`typed_side::by_name_side`]); a
    /// stimulus written against its unit's typed ports returns
    /// [`typed_side::typed_side`], which skips the by-name port values.
    fn frame_side<'a>(&'a mut self, setup: FrameSetup<'a>) -> Box<dyn FrameSide + 'a> {
        typed_side::by_name_side(self, setup)
    }

    /// Whether [`Stimulus::frame_side`] is a typed model side (so a one-thread run is worth
    /// doing in batches of frames).
    fn has_typed_side(&self) -> bool {
        false
    }
}

/// Cycles between two [`Stimulus::steer`] calls.
pub const STEER_INTERVAL: u64 = 1024;

/// Cycles between two comparisons of the internal state (debug-state ports) by default:
/// the detection latency of a state-only difference. Packing the whole state on both
/// sides costs more than the rest of a cycle (a scoreboard's state is 12,288 bits), so it
/// is not done every cycle.
pub const STATE_INTERVAL: u64 = 64;

impl<S: Stimulus + ?Sized> Stimulus for &mut S {
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        (**self).drive(cycle, ports)
    }
    fn reads_outputs(&self) -> bool {
        (**self).reads_outputs()
    }
    fn can_rewind(&self) -> bool {
        (**self).can_rewind()
    }
    fn rewind(&mut self) {
        (**self).rewind()
    }
    fn steer(&mut self, coverage: &Coverage) {
        (**self).steer(coverage)
    }
    fn frame_side<'a>(&'a mut self, setup: FrameSetup<'a>) -> Box<dyn FrameSide + 'a> {
        (**self).frame_side(setup)
    }
    fn has_typed_side(&self) -> bool {
        (**self).has_typed_side()
    }
}

impl<S: Stimulus + ?Sized> Stimulus for Box<S> {
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        (**self).drive(cycle, ports)
    }
    fn reads_outputs(&self) -> bool {
        (**self).reads_outputs()
    }
    fn can_rewind(&self) -> bool {
        (**self).can_rewind()
    }
    fn rewind(&mut self) {
        (**self).rewind()
    }
    fn steer(&mut self, coverage: &Coverage) {
        (**self).steer(coverage)
    }
    fn frame_side<'a>(&'a mut self, setup: FrameSetup<'a>) -> Box<dyn FrameSide + 'a> {
        (**self).frame_side(setup)
    }
    fn has_typed_side(&self) -> bool {
        (**self).has_typed_side()
    }
}

/// A run that matched every cycle.
#[derive(Debug, Clone)]
pub struct Summary {
    pub unit: String,
    pub instance: String,
    pub params: String,
    /// Cycles compared.
    pub cycles: u64,
    /// Outputs compared every cycle.
    pub ports_compared: usize,
    /// Debug-state ports compared every `state_interval` cycles and at the end.
    pub state_ports: usize,
    /// Cycles between two comparisons of the state.
    pub state_interval: u64,
    /// Times the state was compared.
    pub state_samples: u64,
    /// Port comparisons in all.
    pub comparisons: u64,
    pub elapsed: Duration,
    pub cycles_per_sec: f64,
    /// The unit's functional coverage over the run (sampled on the model side).
    pub coverage: Coverage,
    /// The model side ran on its own thread, ahead of the RTL (`lockstep/pipelined.rs`).
    pub pipelined: bool,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}) instance {}: {} cycles match, {} ports compared per cycle, {} state ports {} times (every {} cycles and at the end), {:.3} s, {:.0} cycles/s{}, coverage {}",
            self.unit,
            self.params,
            self.instance,
            self.cycles,
            self.ports_compared,
            self.state_ports,
            self.state_samples,
            self.state_interval,
            self.elapsed.as_secs_f64(),
            self.cycles_per_sec,
            if self.pipelined {
                " (model side on a second thread)"
            } else {
                ""
            },
            self.coverage
        )
    }
}

/// One differing port.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PortMismatch {
    pub port: String,
    pub role: Role,
    pub width: u32,
    /// The model's value (hex, most significant digit first).
    pub expected: String,
    /// The RTL's value.
    pub actual: String,
    /// Differing bit positions (bit 0 = LSB).
    pub diff_bits: Vec<u32>,
    /// For a port with a declared field layout: the differing fields, in bit order (at most
    /// [`MAX_FIELDS`]).
    pub fields: Vec<FieldMismatch>,
    /// Differing fields past [`MAX_FIELDS`].
    pub more_fields: usize,
}

/// One differing field of a port with a field layout (`dbg_stack entry 3 .rpc`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FieldMismatch {
    /// The port name followed by the field's place: `dbg_stack entry 3 .rpc`,
    /// `dbg_P warp 5 side 1 reg 17`, `q_hazard[1]`.
    pub field: String,
    /// Bit offset of the field in the port, and its width.
    pub lsb: u32,
    pub width: u32,
    pub expected: String,
    pub actual: String,
    /// Differing bit positions within the field.
    pub diff_bits: Vec<u32>,
}

/// Differing fields listed per port.
pub const MAX_FIELDS: usize = 32;

impl PortMismatch {
    /// The difference between the model's `expected` and the RTL's `actual` value of port
    /// `spec`, decoded into fields when the port declares a layout.
    pub fn new(spec: &PortSpec, params: &Params, expected: &Bits, actual: &Bits) -> PortMismatch {
        let diff_bits = expected.diff_bits(actual);
        let (fields, more_fields) = match spec.layout.map(|l| l.at(params)) {
            Some(Ok(at)) => {
                let (fields, more) = at.diff(expected, actual, &diff_bits, MAX_FIELDS);
                let fields = fields
                    .into_iter()
                    .map(|f| FieldMismatch {
                        field: format!("{}{}", spec.name, f.path),
                        lsb: f.lsb,
                        width: f.expected.width(),
                        expected: f.expected.to_hex(),
                        actual: f.actual.to_hex(),
                        diff_bits: f.expected.diff_bits(&f.actual),
                    })
                    .collect();
                (fields, more)
            }
            _ => (vec![], 0),
        };
        PortMismatch {
            port: spec.name.to_string(),
            role: spec.role,
            width: expected.width(),
            expected: expected.to_hex(),
            actual: actual.to_hex(),
            diff_bits,
            fields,
            more_fields,
        }
    }

    /// A function of the state alone (registered output or debug state): its value at
    /// cycle t was written at the clock edge that ended cycle t-1.
    pub fn is_registered(&self) -> bool {
        matches!(self.role, Role::Registered | Role::Debug)
    }

    fn write_fields(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for x in &self.fields {
            write!(
                f,
                "      {}: expected 0x{} actual 0x{}",
                x.field, x.expected, x.actual
            )?;
            if x.width > 1 {
                write!(f, " (bits {:?})", x.diff_bits)?;
            }
            writeln!(f)?;
        }
        if self.more_fields > 0 {
            writeln!(
                f,
                "      ... and {} more differing fields",
                self.more_fields
            )?;
        }
        Ok(())
    }
}

/// The first cycle where RTL and model disagree.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Divergence {
    pub unit: String,
    pub instance: String,
    pub params: String,
    pub cycle: u64,
    /// Every differing port at `cycle`, in port-list order (the first is the one reported).
    pub mismatches: Vec<PortMismatch>,
    /// The inputs of the last (up to 16) cycles up to and including `cycle`:
    /// (cycle, [(port, hex)]); an input with a field layout is listed per element
    /// (`rsv_reg[0]`, `rsv_reg[1]`).
    pub last_inputs: Vec<(u64, Vec<(String, String)>)>,
    /// The replay file that reproduces this divergence alone.
    pub replay: Option<PathBuf>,
    /// VCD of the RTL over the window around `cycle` (Verilator trace: every signal).
    pub rtl_vcd: Option<PathBuf>,
    /// VCD of both sides' ports over the same window and time axis (scopes `model` and
    /// `rtl`), with `mismatch` markers.
    pub vcd: Option<PathBuf>,
    /// Whether re-running the replay (to write the RTL trace) hit the same cycle and port.
    pub reproduced: Option<bool>,
    /// Problems while writing the artifacts (the divergence itself stands).
    pub notes: Vec<String>,
}

impl Divergence {
    /// The first differing port.
    pub fn first(&self) -> &PortMismatch {
        &self.mismatches[0]
    }
    pub fn port(&self) -> &str {
        &self.mismatches[0].port
    }

    /// Where the differing registered outputs and debug state come from: they hold
    /// state(cycle), written at the clock edge that ended the previous cycle from that
    /// cycle's inputs (or by the implicit reset, when the previous cycle is not part of the
    /// run). `None` when only combinational outputs differ.
    pub fn registered_note(&self) -> Option<String> {
        let regs: Vec<&str> = self
            .mismatches
            .iter()
            .filter(|m| m.is_registered())
            .map(|m| m.port.as_str())
            .collect();
        if regs.is_empty() {
            return None;
        }
        let what = if regs.len() == 1 {
            format!("registered output {}", regs[0])
        } else {
            format!("registered outputs {}", regs.join(", "))
        };
        let prev = self.cycle.checked_sub(1);
        let listed = prev.is_some_and(|p| self.last_inputs.iter().any(|(c, _)| *c == p));
        Some(match prev {
            Some(p) if listed => format!(
                "{what}: set at the clock edge ending cycle {p} (inputs of cycle {p} above)"
            ),
            Some(p) if self.last_inputs.is_empty() => {
                format!("{what}: set at the clock edge ending cycle {p}")
            }
            _ => format!(
                "{what}: set by the implicit reset before cycle {} (the first cycle of the run)",
                self.cycle
            ),
        })
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.first();
        writeln!(
            f,
            "DIVERGENCE at cycle {} in unit {} ({}) instance {}: port {} ({:?}, {} bits)",
            self.cycle, self.unit, self.params, self.instance, m.port, m.role, m.width
        )?;
        writeln!(f, "  expected (model) 0x{}", m.expected)?;
        writeln!(f, "  actual   (RTL)   0x{}", m.actual)?;
        writeln!(f, "  differing bits   {:?}", m.diff_bits)?;
        m.write_fields(f)?;
        for o in &self.mismatches[1..] {
            writeln!(
                f,
                "  also {}: expected 0x{} actual 0x{} bits {:?}",
                o.port, o.expected, o.actual, o.diff_bits
            )?;
            o.write_fields(f)?;
        }
        let regs: Vec<&str> = (self.mismatches.iter())
            .filter(|m| m.is_registered())
            .map(|m| m.port.as_str())
            .collect();
        let edge = self.cycle.checked_sub(1).filter(|_| !regs.is_empty());
        writeln!(f, "  inputs of the last {} cycles:", self.last_inputs.len())?;
        for (c, vals) in &self.last_inputs {
            let v: Vec<String> = vals.iter().map(|(n, h)| format!("{n}={h}")).collect();
            let mark = if Some(*c) == edge {
                format!("   <- the edge ending this cycle set {}", regs.join(", "))
            } else {
                String::new()
            };
            writeln!(f, "    {c:>8}: {}{mark}", v.join(" "))?;
        }
        if let Some(n) = self.registered_note() {
            writeln!(f, "  note: {n}")?;
        }
        if let Some(p) = &self.replay {
            writeln!(f, "  replay file: {}", p.display())?;
        }
        if let Some(p) = &self.rtl_vcd {
            writeln!(f, "  RTL VCD:     {}", p.display())?;
        }
        if let Some(p) = &self.vcd {
            writeln!(f, "  both sides:  {}", p.display())?;
        }
        if let Some(r) = self.reproduced {
            writeln!(
                f,
                "  replay {}",
                if r {
                    "reproduces it"
                } else {
                    "did NOT reproduce it (non-deterministic stimulus?)"
                }
            )?;
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}

/// The unit model, the RTL instance and the shared port vector, after reset.
type Sides = (Box<dyn UnitModel>, RtlModel, Vec<Bits>);

/// Cycles of VCD before and after the failing cycle.
pub const VCD_WINDOW: u64 = 32;
/// Cycles of inputs in the divergence report.
pub const HISTORY: u64 = 16;

/// A built RTL design bound to a unit description and parameters: runs lockstep. A clone
/// shares the loaded model (each run creates its own instances).
#[derive(Clone)]
pub struct Cosim {
    desc: &'static UnitDesc,
    params: Params,
    rtl: RtlSource,
    built: BuiltModel,
    lib: Arc<RtlLibrary>,
    instance: String,
    failure_dir: Option<PathBuf>,
    max_cycles: u64,
    state_interval: u64,
    /// Whether a run puts the model side on a second thread (`pipelined.rs`).
    pipelining: Pipelining,
    /// [`Pipelining::Auto`]'s choice, probed by the first run that may pipeline.
    probed: std::sync::OnceLock<bool>,
    /// The mutant switched on in every RTL instance of a mutant schema's model (0: none).
    mutant: u32,
    /// Whether a run's model side takes a typed stimulus's typed path
    /// (`lockstep/typed_side.rs`), on two threads or in batches on one.
    typed_model_side: bool,
}

/// When [`Cosim::run`] puts the model side (stimulus, model, coverage) on a second thread,
/// ahead of the RTL (`lockstep/pipelined.rs`). Only with a rewindable stimulus, two or more
/// cores, and outside rayon's workers; the results, reports and artifacts are the same
/// either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipelining {
    /// Always on one thread.
    Never,
    /// When two threads are the faster: raced once per `Cosim` on the first
    /// [`PROBE_CYCLES`] cycles of its first run that lasts that long (on one thread and on
    /// two, [`PROBE_ROUNDS`] times each, best kept), then kept; a shorter run goes on one
    /// thread.
    Auto,
    /// Whenever possible.
    Always,
}

/// Cycles of each timed try when [`Pipelining::Auto`] decides.
pub const PROBE_CYCLES: u64 = 2048;
/// Tries of each way when [`Pipelining::Auto`] decides (the best of each is compared: host
/// noise only ever slows a try down).
pub const PROBE_ROUNDS: u32 = 2;

/// `$WARPFORGE_COSIM_OUT`, else `<temp>/warpforge-cosim`.
pub fn default_failure_dir() -> PathBuf {
    std::env::var_os("WARPFORGE_COSIM_OUT")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("warpforge-cosim"))
}

impl Cosim {
    /// Build (or fetch from the cache) and load `rtl` for unit `desc` with `params`.
    pub fn new(
        desc: &'static UnitDesc,
        params: Params,
        rtl: RtlSource,
        opts: &BuildOptions,
    ) -> Result<Cosim, CosimError> {
        let built = build::build(desc, &params, &rtl, opts)?;
        let lib = RtlLibrary::load(&built, desc, &params)?;
        Ok(Cosim {
            desc,
            params,
            rtl,
            built,
            lib,
            instance: "u0".into(),
            failure_dir: Some(default_failure_dir()),
            max_cycles: u64::MAX,
            state_interval: STATE_INTERVAL,
            pipelining: Pipelining::Auto,
            probed: std::sync::OnceLock::new(),
            mutant: 0,
            typed_model_side: true,
        })
    }

    /// Generate the unit's Verilog with warpforge-gen and build it (cached).
    pub fn generated(
        desc: &'static UnitDesc,
        params: Params,
        opts: &BuildOptions,
    ) -> Result<Cosim, CosimError> {
        let unit = warpforge_gen::generate(desc, &params).map_err(|e| CosimError::Build {
            stage: "generate".into(),
            log: e.to_string(),
        })?;
        Cosim::new(desc, params, RtlSource::cosim_of(&unit), opts)
    }

    /// Name of the instance in reports and file names.
    pub fn with_instance(mut self, name: impl Into<String>) -> Self {
        self.instance = name.into();
        self
    }

    /// Where replay files and VCD windows go on failure (`None`: write nothing).
    pub fn with_failure_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.failure_dir = dir;
        self
    }

    /// Stop after this many cycles even if the stimulus goes on.
    pub fn with_max_cycles(mut self, n: u64) -> Self {
        self.max_cycles = n;
        self
    }

    /// Compare the internal state every `n` cycles (1: every cycle; 0 counts as 1). A
    /// larger `n` costs less per cycle and delays detection by up to `n` cycles, never the
    /// reported cycle (see the module documentation).
    pub fn with_state_interval(mut self, n: u64) -> Self {
        self.state_interval = n.max(1);
        self
    }

    /// When [`Cosim::run`] runs the model side on a second thread ([`Pipelining::Auto`] by
    /// default).
    pub fn with_pipelining(mut self, p: Pipelining) -> Self {
        self.pipelining = p;
        self
    }

    /// Whether a run's model side takes the typed path of a stimulus written against its
    /// unit's typed ports, on two threads or in batches of frames on one (`true` by
    /// default; `false`: the by-name path, and on one thread the sequential loop; the
    /// results are the same, see `lockstep/typed_side.rs`).
    pub fn with_typed_model_side(mut self, on: bool) -> Self {
        self.typed_model_side = on;
        self
    }

    /// Run mutant `k` of a mutant schema's model (`mutant_schema`): every RTL instance
    /// is created with it switched on. An error when the model is not a schema's.
    pub fn with_mutant(mut self, k: u32) -> Result<Self, CosimError> {
        self.lib.require_mutant_schema()?;
        self.mutant = k;
        Ok(self)
    }

    /// [`Pipelining::Auto`]'s choice (`true`: two threads), once a run long enough to time
    /// it has made it; `None` before.
    pub fn auto_choice(&self) -> Option<bool> {
        self.probed.get().copied()
    }

    pub fn built(&self) -> &BuiltModel {
        &self.built
    }
    pub fn desc(&self) -> &'static UnitDesc {
        self.desc
    }
    pub fn params(&self) -> &Params {
        &self.params
    }
    pub fn rtl(&self) -> &RtlSource {
        &self.rtl
    }
    pub fn library(&self) -> &Arc<RtlLibrary> {
        &self.lib
    }

    /// A fresh RTL instance of this design.
    pub fn rtl_model(&self, trace_capable: bool) -> Result<RtlModel, CosimError> {
        let mut rtl = RtlModel::new(&self.lib, trace_capable)?;
        // Always on a schema's model: X initialisation may have left any value in it.
        if self.lib.is_mutant_schema() {
            rtl.set_mutant(self.mutant)?;
        }
        Ok(rtl)
    }

    fn rtl_err(cycle: u64, e: RtlError) -> CosimError {
        CosimError::Rtl {
            cycle,
            kind: e.kind,
            message: e.message,
        }
    }

    /// Both sides after the implicit reset cycle.
    fn start(&self, trace: bool) -> Result<Sides, CosimError> {
        let mut model = (self.desc.build)(&self.params);
        let mut rtl = self.rtl_model(trace)?;
        let ports = self.desc.zero_ports(&self.params);
        model.tick(&ports); // rst_n = 0
        rtl.reset().map_err(|e| Self::rtl_err(0, e))?;
        rtl.set_cycle(0);
        Ok((model, rtl, ports))
    }

    /// Run until the stimulus ends (or `max_cycles`), comparing every cycle.
    pub fn run<S: Stimulus + Send + ?Sized>(&self, stim: &mut S) -> Result<Summary, CosimError> {
        self.run_instance(&self.instance, stim)
    }

    /// Replay every instance of a unit trace recorded by the GPU model
    /// (`warpforge run --record-unit`), one lockstep run per instance, in parallel on
    /// rayon's threads (each instance has its own model and RTL instance); the summaries
    /// come in instance order, and on a divergence the error is that of the first
    /// diverging instance in instance order, whatever the thread count: an instance after
    /// a known failure is skipped, one before it always runs.
    pub fn run_trace(&self, trace: &Trace) -> Result<Vec<Summary>, CosimError> {
        if trace.desc.name != self.desc.name || trace.params != self.params {
            return Err(CosimError::Replay(format!(
                "the trace is of {} ({}), this co-simulation is {} ({})",
                trace.desc.name, trace.params, self.desc.name, self.params
            )));
        }
        let first_failure = AtomicUsize::new(usize::MAX);
        let results: Vec<Option<Result<Summary, CosimError>>> = trace
            .header
            .instances
            .par_iter()
            .enumerate()
            .map(|(i, inst)| {
                if i > first_failure.load(Ordering::Relaxed) {
                    return None;
                }
                let r = self.run_trace_instance(trace, i, &inst.name);
                if r.is_err() {
                    first_failure.fetch_min(i, Ordering::Relaxed);
                }
                Some(r)
            })
            .collect();
        let mut out = vec![];
        for r in results.into_iter().flatten() {
            out.push(r?);
        }
        Ok(out)
    }

    fn run_trace_instance(
        &self,
        trace: &Trace,
        i: usize,
        name: &str,
    ) -> Result<Summary, CosimError> {
        let mut stim = TraceStimulus::new(trace, i).map_err(CosimError::Replay)?;
        let s = self.run_instance(name, &mut stim)?;
        if let Some(e) = stim.error() {
            return Err(CosimError::Replay(format!("instance {name}: {e}")));
        }
        Ok(s)
    }

    /// [`Cosim::run`] under another instance name (reports and file names).
    pub fn run_instance<S: Stimulus + Send + ?Sized>(
        &self,
        instance: &str,
        stim: &mut S,
    ) -> Result<Summary, CosimError> {
        self.run_from(instance, stim, 0)
    }

    /// [`Cosim::run_instance`] numbering the cycles from `first_cycle` (the stimulus is
    /// driven with those numbers; a replay that starts after a reset uses this).
    pub fn run_from<S: Stimulus + Send + ?Sized>(
        &self,
        instance: &str,
        stim: &mut S,
        first_cycle: u64,
    ) -> Result<Summary, CosimError> {
        if stim.can_rewind() {
            // A difference is reported by the sequential loop, re-run with the stimulus
            // rewound.
            let two = self.may_pipeline() && self.pipelining_pays(stim, first_cycle);
            return self.run_batched(instance, stim, first_cycle, two);
        }
        self.run_counting(instance, stim, first_cycle, None)
    }

    /// [`Cosim::run`] counting the switching activity of the RTL: every cycle, every input,
    /// output and internal-state bit (the debug-state ports, i.e. the unit's registers and
    /// RAM words, sampled every cycle here) is compared with its value in the cycle before.
    /// The values counted are the model's, which the lockstep comparison has just checked
    /// are the RTL's (outputs every cycle, state every cycle in this mode).
    pub fn run_activity<S: Stimulus + ?Sized>(
        &self,
        instance: &str,
        stim: &mut S,
        activity: &mut Activity,
    ) -> Result<Summary, CosimError> {
        activity.restart();
        self.run_counting(instance, stim, 0, Some(activity))
    }

    fn run_counting<S: Stimulus + ?Sized>(
        &self,
        instance: &str,
        stim: &mut S,
        first_cycle: u64,
        mut toggles: Option<&mut Activity>,
    ) -> Result<Summary, CosimError> {
        let (model, mut rtl, mut ports) = self.start(false)?;
        rtl.set_cycle(first_cycle);
        let record = !stim.can_rewind();
        let mut log = InputLog::new(self.desc, &self.params);
        log.drop_before(first_cycle);
        let compared = rtl.output_indices().len();
        let state_ports = rtl.state_indices().len();
        let interval = if state_ports == 0 {
            u64::MAX
        } else if toggles.is_some() {
            1
        } else {
            self.state_interval
        };
        let mut samples = 0u64;
        let mut side = ModelSide::new(stim, model, self.coverage()?, first_cycle);
        let t0 = Instant::now();
        let mut next_sample = first_cycle;
        let end = first_cycle.saturating_add(self.max_cycles);
        while side.cycle() < end {
            let cycle = side.cycle();
            if !side.drive(&mut ports) {
                break;
            }
            if record {
                log.push(&ports);
            }
            rtl.set_inputs(&ports);
            rtl.eval().map_err(|e| Self::rtl_err(cycle, e))?;
            let mut differs = rtl.first_mismatch(&ports).is_some();
            let mut state_only = false;
            if cycle == next_sample && !differs {
                next_sample = cycle.saturating_add(interval);
                samples += 1;
                rtl.sample_state().map_err(|e| Self::rtl_err(cycle, e))?;
                side.model.debug_state(&mut ports);
                differs = rtl.first_state_mismatch(&ports).is_some();
                state_only = differs;
            }
            if differs {
                let d = self.diverged(
                    instance,
                    first_cycle,
                    cycle,
                    state_only,
                    &mut *side.model,
                    &mut rtl,
                    &mut ports,
                    side.stim,
                    log,
                );
                return Err(CosimError::Divergence(Box::new(d)));
            }
            if let Some(t) = toggles.as_deref_mut() {
                t.count(&ports);
            }
            side.close(&mut ports);
            rtl.edge().map_err(|e| Self::rtl_err(cycle, e))?;
        }
        let cycle = side.cycle();
        if state_ports > 0 && cycle > first_cycle {
            // The final state(cycle), which no cycle of the stimulus showed.
            rtl.eval().map_err(|e| Self::rtl_err(cycle, e))?;
            rtl.sample_state().map_err(|e| Self::rtl_err(cycle, e))?;
            side.model.debug_state(&mut ports);
            samples += 1;
            if rtl.first_state_mismatch(&ports).is_some() {
                let d = self.diverged(
                    instance,
                    first_cycle,
                    cycle,
                    true,
                    &mut *side.model,
                    &mut rtl,
                    &mut ports,
                    side.stim,
                    log,
                );
                return Err(CosimError::Divergence(Box::new(d)));
            }
        }
        let elapsed = t0.elapsed();
        let cycles = cycle - first_cycle;
        Ok(Summary {
            unit: self.desc.name.to_string(),
            instance: instance.to_string(),
            params: self.params.to_string(),
            cycles,
            ports_compared: compared,
            state_ports,
            state_interval: self.state_interval,
            state_samples: samples,
            comparisons: cycles * compared as u64 + samples * state_ports as u64,
            elapsed,
            cycles_per_sec: cycles as f64 / elapsed.as_secs_f64().max(1e-9),
            coverage: side.into_coverage(),
            pipelined: false,
        })
    }

    /// The unit's coverage bins at this run's parameters, none hit.
    fn coverage(&self) -> Result<Coverage, CosimError> {
        Coverage::new(self.desc, &self.params).map_err(|log| CosimError::Build {
            stage: "coverage declaration".into(),
            log,
        })
    }

    fn mismatch_report(&self, rtl: &RtlModel, ports: &[Bits]) -> Vec<PortMismatch> {
        rtl.mismatches(ports)
            .into_iter()
            .map(|i| {
                let mut actual = Bits::zero(ports[i].width());
                rtl.get(i, &mut actual);
                PortMismatch::new(&self.desc.ports[i], &self.params, &ports[i], &actual)
            })
            .collect()
    }

    /// Re-run a rewound stimulus on the model alone from `first` to `fail + VCD_WINDOW`:
    /// identical to the lockstep run up to `fail`, as the model and the RTL agreed until
    /// then and the stimulus only sees the model. With `trim`, cycles before the last
    /// reset cycle before `fail` are dropped (keeping `HISTORY` of them for the report).
    /// Returns the inputs and the cycle a replay starts at.
    fn rerun<S: Stimulus + ?Sized>(
        &self,
        stim: &mut S,
        first: u64,
        fail: u64,
        trim: bool,
    ) -> Result<(InputLog, u64), CosimError> {
        let mut log = InputLog::new(self.desc, &self.params);
        log.drop_before(first);
        let mut start = first;
        stim.rewind();
        // Steered as in the lockstep run (same coverage, same cycles), so the same inputs.
        let (mut side, mut p) = self.model_side(stim, first)?;
        while side.cycle() <= fail + VCD_WINDOW {
            let c = side.cycle();
            if !side.drive(&mut p) {
                break;
            }
            log.push(&p);
            if trim && c < fail && p[0].to_u64() == 0 {
                start = c + 1;
                log.drop_before((c + 1).saturating_sub(HISTORY));
            }
            side.close(&mut p);
        }
        Ok((log, start))
    }

    /// The model side of a run of `stim` from `first_cycle` (after the implicit reset
    /// cycle), and its port vector.
    fn model_side<'s, S: Stimulus + ?Sized>(
        &self,
        stim: &'s mut S,
        first_cycle: u64,
    ) -> Result<(ModelSide<'s, S>, Vec<Bits>), CosimError> {
        let coverage = self.coverage()?;
        Ok(ModelSide::start(
            stim,
            self.desc,
            &self.params,
            coverage,
            first_cycle,
        ))
    }

    /// Build the divergence report and (with a failure directory) its artifacts.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    ///
    /// `detected` is the cycle the lockstep run stopped at (the model and the RTL are still
    /// there); `state_only`: only the state differed there (at a sample). When the state is
    /// not compared every cycle it may have differed before `detected` unseen, so the
    /// inputs are re-run comparing outputs and state every cycle, and the report is about
    /// the first cycle anything differs.
    fn diverged<S: Stimulus + ?Sized>(
        &self,
        instance: &str,
        first_cycle: u64,
        detected: u64,
        state_only: bool,
        model: &mut dyn UnitModel,
        rtl: &mut RtlModel,
        ports: &mut [Bits],
        stim: &mut S,
        log: InputLog,
    ) -> Divergence {
        let locate = self.state_interval > 1 && !rtl.state_indices().is_empty();
        if !state_only {
            // The report shows the state of this cycle too (when the RTL can say it).
            if rtl.sample_state().is_ok() {
                model.debug_state(ports);
            }
        }
        let mut cycle = detected;
        let mut d = Divergence {
            unit: self.desc.name.to_string(),
            instance: instance.to_string(),
            params: self.params.to_string(),
            cycle,
            mismatches: self.mismatch_report(rtl, ports),
            last_inputs: vec![],
            replay: None,
            rtl_vcd: None,
            vcd: None,
            reproduced: None,
            notes: vec![],
        };
        let reads = stim.reads_outputs();
        let rewind = stim.can_rewind();
        let mut recorded = Some(log);
        if locate {
            let found = if rewind {
                self.rerun(stim, first_cycle, detected, false)
                    .and_then(|(log, start)| self.locate(&log, start, detected))
            } else {
                self.locate(
                    recorded.as_ref().expect("not taken yet"),
                    first_cycle,
                    detected,
                )
            };
            match found {
                Ok(Some((first, mismatches))) => {
                    let n = self.state_interval;
                    if first < detected && state_only {
                        d.notes.push(format!(
                            "the state is compared every {n} cycles: the difference showed at \
                             the comparison of cycle {detected}; re-running the inputs with the \
                             state compared every cycle located its first cycle, {first}"
                        ));
                    } else if first < detected {
                        d.notes.push(format!(
                            "the outputs first differed at cycle {detected}; the state \
                             (compared every {n} cycles) already differed at cycle {first}, \
                             found by re-running the inputs with the state compared every cycle"
                        ));
                    }
                    cycle = first;
                    d.cycle = first;
                    d.mismatches = mismatches;
                }
                Ok(None) if !state_only => d.notes.push(format!(
                    "re-running the inputs did not reproduce the difference at cycle \
                     {detected} (non-deterministic stimulus?)"
                )),
                Ok(None) => {
                    d.notes.push(format!(
                        "the state differs at cycle {detected}, after the stimulus's last \
                         clock edge, and in no earlier cycle: no replay file"
                    ));
                    return d;
                }
                Err(e) => {
                    d.notes
                        .push(format!("locating the first differing cycle failed: {e}"));
                    return d;
                }
            }
        }
        // A rewindable stimulus first gets a replay that starts after the last reset; if
        // that does not reproduce (state that reset does not clear), the full one.
        let passes: &[bool] = if rewind { &[true, false] } else { &[false] };
        for &trim in passes {
            let (log, start) = if rewind {
                match self.rerun(stim, first_cycle, cycle, trim) {
                    Ok(rerun) => rerun,
                    Err(e) => {
                        d.notes.push(format!("re-running the stimulus failed: {e}"));
                        return d;
                    }
                }
            } else {
                // Recorded up to `cycle`; continue the live model for the post window.
                let mut log = recorded.take().expect("one pass");
                model.tick(ports);
                for c in detected + 1..=cycle + VCD_WINDOW {
                    if reads {
                        model.registered_outputs(ports);
                    }
                    if !stim.drive(c, ports) {
                        break;
                    }
                    log.push(ports);
                    model.outputs_keeping_inputs(ports, !reads);
                    model.tick_kept(ports);
                }
                (log, first_cycle)
            };
            if log.end() <= cycle {
                d.notes.push(format!(
                    "the rewound stimulus ended at cycle {}, before the failing cycle: it is \
                     not deterministic; no replay file",
                    log.end()
                ));
                return d;
            }
            let from = (cycle + 1).saturating_sub(HISTORY).max(log.first());
            d.last_inputs = (from..=cycle)
                .map(|c| (c, log.named_hex(self.desc, c)))
                .collect();
            let Some(dir) = &self.failure_dir else {
                return d;
            };
            if let Err(e) = self.write_artifacts(dir, &log, start, &mut d) {
                d.notes.push(e.to_string());
                return d;
            }
            if d.reproduced == Some(false) && trim && start > first_cycle {
                d.notes.push(format!(
                    "the replay from cycle {start} (after the last reset) did not reproduce \
                     the divergence (state that reset does not clear?): the replay file now \
                     starts at cycle {first_cycle}"
                ));
                continue;
            }
            break;
        }
        d
    }

    /// Re-run `log` from cycle `start` (after an implicit reset) in lockstep, comparing the
    /// outputs and the state every cycle up to `upto`: the first cycle that differs and
    /// its mismatches.
    #[cold]
    fn locate(
        &self,
        log: &InputLog,
        start: u64,
        upto: u64,
    ) -> Result<Option<(u64, Vec<PortMismatch>)>, CosimError> {
        let (mut model, mut rtl, mut ports) = self.start(false)?;
        rtl.set_cycle(start);
        for c in start..log.end().min(upto.saturating_add(1)) {
            log.apply(c, &mut ports);
            rtl.set_inputs(&ports);
            rtl.eval().map_err(|e| Self::rtl_err(c, e))?;
            rtl.sample_state().map_err(|e| Self::rtl_err(c, e))?;
            model.all_outputs(&mut ports);
            if rtl.first_mismatch(&ports).is_some() || rtl.first_state_mismatch(&ports).is_some() {
                return Ok(Some((c, self.mismatch_report(&rtl, &ports))));
            }
            model.tick(&ports);
            rtl.edge().map_err(|e| Self::rtl_err(c, e))?;
        }
        Ok(None)
    }

    fn write_artifacts(
        &self,
        dir: &Path,
        log: &InputLog,
        start: u64,
        d: &mut Divergence,
    ) -> Result<(), CosimError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| CosimError::Io(format!("cannot create {}: {e}", dir.display())))?;
        let stem = format!(
            "{}-{}-{}-c{}",
            self.desc.name,
            sanitize(&d.instance),
            &self.built.hash[..8],
            d.cycle
        );
        let replay = dir.join(format!("{stem}.replay"));
        let widths = self.desc.widths(&self.params);
        let header = ReplayHeader {
            format: FORMAT.into(),
            unit: self.desc.name.into(),
            // The instance that diverged (a trace's, e.g. `vecadd/sm0.w3`; `u0` for one
            // stimulus): the replay's report names it again.
            instance: d.instance.clone(),
            params: self
                .params
                .iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect(),
            rtl: self.rtl.clone(),
            inputs: log
                .inputs
                .iter()
                .zip(&log.widths)
                .map(|(&i, &w)| (self.desc.ports[i].name.to_string(), w))
                .collect(),
            outputs: (self.desc.ports.iter().zip(&widths))
                .filter(|(p, _)| !p.role.is_input())
                .map(|(p, &w)| (p.name.to_string(), w, p.role))
                .collect(),
            first_cycle: start,
            fail_cycle: Some(d.cycle),
            fail_port: Some(d.port().to_string()),
            cycles: d.cycle + 1 - start,
            post_cycles: log.end() - (d.cycle + 1),
        };
        Replay::write(&replay, &header, log, self.desc, &self.params)?;
        d.replay = Some(replay);
        let rtl_vcd = dir.join(format!("{stem}.rtl.vcd"));
        let vcd = dir.join(format!("{stem}.vcd"));
        let first = self.write_windows(log, start, d.cycle, &d.instance, &rtl_vcd, &vcd)?;
        d.rtl_vcd = Some(rtl_vcd);
        d.vcd = Some(vcd);
        d.reproduced =
            Some(first.as_ref().map(|(c, p)| (*c, p.as_str())) == Some((d.cycle, d.port())));
        Ok(())
    }

    /// Re-run `log` from cycle `start` (after an implicit reset) in lockstep on a
    /// trace-capable instance, writing the RTL's Verilator trace (`rtl_vcd`) and the VCD of
    /// both sides' ports with mismatch markers (`vcd`, see [`crate::wave`]) over
    /// `fail - VCD_WINDOW ..= fail + VCD_WINDOW` (as far as the log goes). Returns the first
    /// divergence found at or before `fail` (cycle, port).
    pub fn write_windows(
        &self,
        log: &InputLog,
        start: u64,
        fail: u64,
        instance: &str,
        rtl_vcd: &Path,
        vcd: &Path,
    ) -> Result<Option<(u64, String)>, CosimError> {
        let (mut model, mut rtl, mut ports) = self.start(true)?;
        rtl.set_cycle(start);
        let window = fail.saturating_sub(VCD_WINDOW).max(start);
        let mut first = None;
        // Both sides' ports over the window, written once the ports that differ are known.
        let mut samples: Vec<Sample> = vec![];
        let sample = |time: u64, clk: bool, rtl: &RtlModel, ports: &[Bits], differ: Vec<bool>| {
            let mut r = ports.to_vec();
            for &i in rtl.output_indices() {
                rtl.get(i, &mut r[i]);
            }
            Sample {
                time,
                clk,
                model: ports.to_vec(),
                rtl: r,
                differ,
            }
        };
        for c in start..log.end() {
            if c == window {
                rtl.trace_open(rtl_vcd)?;
            }
            log.apply(c, &mut ports);
            rtl.set_inputs(&ports);
            if let Err(e) = rtl.eval().and_then(|()| rtl.sample_state()) {
                rtl.trace_close();
                return Err(Self::rtl_err(c, e));
            }
            model.all_outputs(&mut ports);
            if first.is_none() && c <= fail {
                if let Some(i) = rtl
                    .first_mismatch(&ports)
                    .or_else(|| rtl.first_state_mismatch(&ports))
                {
                    first = Some((c, self.desc.ports[i].name.to_string()));
                }
            }
            let traced = c >= window;
            let mut differ = vec![false; ports.len()];
            if traced {
                for i in rtl.mismatches(&ports) {
                    differ[i] = true;
                }
                samples.push(sample(c * 10, false, &rtl, &ports, differ.clone()));
            }
            model.tick(&ports);
            if let Err(e) = rtl.edge() {
                rtl.trace_close();
                return Err(Self::rtl_err(c, e));
            }
            if traced {
                // After the edge: state(c+1) on both sides (the RTL's state ports sampled
                // again); the markers keep cycle c's comparison.
                model.all_outputs(&mut ports);
                if let Err(e) = rtl.sample_state() {
                    rtl.trace_close();
                    return Err(Self::rtl_err(c, e));
                }
                samples.push(sample(c * 10 + 5, true, &rtl, &ports, differ));
            }
        }
        rtl.trace_close();
        let io = |e: std::io::Error| CosimError::Io(format!("{}: {e}", vcd.display()));
        let f = std::fs::File::create(vcd).map_err(io)?;
        BothVcd::write(
            std::io::BufWriter::new(f),
            self.desc,
            &self.params,
            instance,
            &samples,
        )
        .map_err(io)?;
        Ok(first)
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Switching activity of one run ([`Cosim::run_activity`]): per port, the bit flips
/// between consecutive cycles.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Activity {
    /// Cycles counted.
    pub cycles: u64,
    /// Cycle-to-cycle transitions counted (cycles less one per run).
    pub transitions: u64,
    pub ports: Vec<PortActivity>,
    #[serde(skip)]
    prev: Vec<Bits>,
}

/// The bit flips of one port over a run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PortActivity {
    pub name: String,
    /// `input`, `output` or `state` (a debug-state port: registers and RAM words).
    pub kind: &'static str,
    pub width: u32,
    pub toggles: u64,
}

impl Activity {
    pub fn new(desc: &UnitDesc, params: &Params) -> Activity {
        let widths = desc.widths(params);
        let ports = desc
            .ports
            .iter()
            .zip(&widths)
            .map(|(p, &w)| PortActivity {
                name: p.name.to_string(),
                kind: match p.role {
                    Role::Input => "input",
                    Role::Debug => "state",
                    Role::Registered | Role::Combinational => "output",
                },
                width: w,
                toggles: 0,
            })
            .collect();
        Activity {
            cycles: 0,
            transitions: 0,
            ports,
            prev: vec![],
        }
    }

    /// Start a new run: the next cycle counted has no predecessor (the totals stay).
    pub fn restart(&mut self) {
        self.prev.clear();
    }

    /// Count one cycle's values (every port of the unit, in declaration order).
    pub fn count(&mut self, ports: &[Bits]) {
        if self.prev.is_empty() {
            self.prev = ports.to_vec();
        } else {
            self.transitions += 1;
            for ((a, prev), now) in self.ports.iter_mut().zip(&mut self.prev).zip(ports) {
                a.toggles += prev
                    .words()
                    .iter()
                    .zip(now.words())
                    .map(|(x, y)| (x ^ y).count_ones() as u64)
                    .sum::<u64>();
                prev.clone_from(now);
            }
        }
        self.cycles += 1;
    }

    /// (bits, flips) of the ports of one kind; `rst_n` is left out of the inputs (it is
    /// held high after the first cycle and is not a data net).
    pub fn totals(&self, kind: &str) -> (u64, u64) {
        self.ports
            .iter()
            .filter(|p| p.kind == kind && p.name != "rst_n")
            .fold((0, 0), |(b, t), p| (b + p.width as u64, t + p.toggles))
    }

    /// Mean flips per bit per cycle of the ports of one kind (0 without such bits or with
    /// no transition counted).
    pub fn rate(&self, kind: &str) -> f64 {
        let (bits, flips) = self.totals(kind);
        let transitions = self.transitions;
        if bits == 0 || transitions == 0 {
            0.0
        } else {
            flips as f64 / (bits * transitions) as f64
        }
    }

    /// Mean flips per bit per cycle over every counted bit (inputs, outputs, state).
    pub fn mean_rate(&self) -> f64 {
        let (bits, flips) = ["input", "output", "state"]
            .iter()
            .map(|k| self.totals(k))
            .fold((0, 0), |(b, t), (b2, t2)| (b + b2, t + t2));
        let transitions = self.transitions;
        if bits == 0 || transitions == 0 {
            0.0
        } else {
            flips as f64 / (bits * transitions) as f64
        }
    }
}

#[cfg(test)]
mod activity_tests {
    use super::*;
    use warpforge_model::units::slp_perm::SLP_DESC;

    /// Transitions are counted per bit between consecutive cycles, per kind of port, and a
    /// restarted run does not count the jump from the previous run's last cycle.
    #[test]
    fn activity_counts_bit_flips_between_cycles() {
        let params = SLP_DESC.params::<&str>(&[]).unwrap();
        let mut a = Activity::new(&SLP_DESC, &params);
        let mut ports = SLP_DESC.zero_ports(&params);
        let vec_in = SLP_DESC.port_index("vec_in").unwrap();
        let input_bits = a.totals("input").0;
        a.count(&ports);
        assert_eq!((a.cycles, a.transitions), (1, 0));
        assert_eq!(a.rate("input"), 0.0);
        ports[vec_in].set_u64(0b1011);
        a.count(&ports);
        ports[vec_in].set_u64(0b0011);
        a.count(&ports);
        assert_eq!(a.totals("input"), (input_bits, 4));
        assert_eq!(a.transitions, 2);
        assert!((a.rate("input") - 4.0 / (2.0 * input_bits as f64)).abs() < 1e-12);
        assert_eq!(a.totals("state"), (0, 0));
        a.restart();
        ports[vec_in].set_u64(u64::MAX);
        a.count(&ports);
        assert_eq!(a.totals("input").1, 4, "no transition across runs");
        assert_eq!((a.cycles, a.transitions), (4, 2));
    }
}
