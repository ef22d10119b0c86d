//! warpforge-cosim: cycle-exact co-simulation of the generated Verilog against the unit
//! models (design.md §4).
//!
//! - [`build`]: Verilator + g++ into a cached shared library with a generated C shim
//!   ([`shim`]); [`rtl::RtlModel`] drives it through raw port pointers.
//! - [`Cosim`]: the lockstep engine. Every cycle both sides see the same inputs and every
//!   output and debug-state port is compared, zero tolerance; the first divergence stops
//!   the run with a [`Divergence`] report, a replay file ([`replay`]) and VCD windows of
//!   both sides ([`wave`]).
//! - [`mutants`]: broken variants of the RTL that the harness must catch.
//! - [`stimulus`]: seeded random stimulus and helpers.
//! - [`testbench`]: a self-checking Verilog testbench from a replay file (other simulators).
//!
//! ```no_run
//! use warpforge_cosim::{BuildOptions, Cosim, RtlSource, stimulus::RandomStimulus};
//! use warpforge_model::units::simt_stack::SPE_DESC;
//! # fn verilog() -> String { String::new() }
//! let params = SPE_DESC.params(&[("WARP_SIZE", 32u64), ("DEPTH", 16)]).unwrap();
//! let rtl = RtlSource::single("simt_stack_spe", verilog());
//! let cosim = Cosim::new(&SPE_DESC, params.clone(), rtl, &BuildOptions::default()).unwrap();
//! let mut stim = RandomStimulus::new(&SPE_DESC, &params, 1, 100_000);
//! match cosim.run(&mut stim) {
//!     Ok(summary) => println!("{summary}"),
//!     Err(e) => panic!("{e}"),
//! }
//! ```

pub mod build;
pub mod capt_stimulus;
pub mod edge_eval;
pub mod gatesim;
mod hash;
pub mod kits;
pub mod lockstep;
pub mod mutant_schema;
pub mod mutants;
pub mod replay;
pub mod rtl;
pub mod sb_stimulus;
pub mod shim;
pub mod stack_stimulus;
pub mod stimulus;
pub mod testbench;
pub mod wave;
pub mod wcu_stimulus;

pub use build::{BuildOptions, BuiltModel, RtlSource};
pub use lockstep::{
    Activity, Cosim, Divergence, FieldMismatch, Pipelining, PortMismatch, Stimulus, Summary,
};
pub use replay::{replay, replay_against, replay_unit_params, replay_with, Replay, ReplayStimulus};
pub use rtl::{RtlLibrary, RtlModel};

/// What kind of error the RTL raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RtlErrorKind {
    /// `$finish`.
    Finish,
    /// `$stop`.
    Stop,
    /// A Verilator fatal error (`$fatal`, failed assertion, non-converging logic...).
    Fatal,
}

impl RtlErrorKind {
    pub(crate) fn from_code(code: i32) -> RtlErrorKind {
        match code {
            1 => RtlErrorKind::Finish,
            2 => RtlErrorKind::Stop,
            _ => RtlErrorKind::Fatal,
        }
    }
}

/// Every way a build or a co-simulation run can fail.
#[derive(Debug)]
pub enum CosimError {
    /// Verilator is missing or unusable.
    Toolchain(String),
    /// Verilating, checking the ports, compiling or linking failed.
    Build { stage: String, log: String },
    /// Loading the built library failed.
    Load(String),
    /// The RTL raised `$finish`, `$stop` or a fatal error (the instance is dead).
    Rtl {
        cycle: u64,
        kind: RtlErrorKind,
        message: String,
    },
    /// RTL and model disagree.
    Divergence(Box<Divergence>),
    /// A file could not be read or written.
    Io(String),
    /// A replay file is malformed or does not fit the unit.
    Replay(String),
    /// The same inputs gave different results: a two-thread run stopped where the same run
    /// on one thread did not, or its two threads disagree on where the run ended.
    Nondeterministic(String),
}

impl std::fmt::Display for CosimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CosimError::Toolchain(m) => write!(f, "toolchain: {m}"),
            CosimError::Build { stage, log } => write!(f, "build failed ({stage}):\n{log}"),
            CosimError::Load(m) => write!(f, "cannot load model: {m}"),
            CosimError::Rtl {
                cycle,
                kind,
                message,
            } => write!(f, "RTL {kind:?} at cycle {cycle}: {message}"),
            CosimError::Divergence(d) => write!(f, "{d}"),
            CosimError::Io(m) => write!(f, "{m}"),
            CosimError::Replay(m) => write!(f, "replay: {m}"),
            CosimError::Nondeterministic(m) => write!(f, "not deterministic: {m}"),
        }
    }
}

impl std::error::Error for CosimError {}

impl CosimError {
    /// The divergence, if this is one.
    pub fn divergence(&self) -> Option<&Divergence> {
        match self {
            CosimError::Divergence(d) => Some(d),
            _ => None,
        }
    }
}
