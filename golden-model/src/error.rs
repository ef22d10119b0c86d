//! Errors of the model: bad user input (PTX, launch, config) and faults of the guest kernel.
//!
//! Nothing in the model panics on user input; every failure becomes one of these, with the
//! place (file:line:column, or kernel/PC/warp/thread) and what was wrong.

use std::fmt;

/// Malformed or unsupported PTX: `file:line:col: message` naming the construct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}
impl std::error::Error for PtxError {}

/// What kind of guest fault ended the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    OutOfBounds,
    Misaligned,
    BarrierDeadlock,
    /// The stack unit reported an error (overflow, PC mismatch).
    ReconvergenceStack,
    /// Simulation exceeded the configured cycle/instruction limit (a guest that never ends).
    Watchdog,
    /// The guest executed something the model cannot run at run time (e.g. bad operand).
    Unsupported,
    /// The model broke one of its own invariants (a bug in warpforge, not in the guest).
    Internal,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            FaultKind::OutOfBounds => "out-of-bounds access",
            FaultKind::Misaligned => "misaligned access",
            FaultKind::BarrierDeadlock => "barrier deadlock",
            FaultKind::ReconvergenceStack => "reconvergence stack error",
            FaultKind::Watchdog => "watchdog limit exceeded",
            FaultKind::Unsupported => "unsupported operation",
            FaultKind::Internal => "internal model error (a warpforge bug)",
        };
        f.write_str(s)
    }
}

/// A fault of the simulated kernel (not of the host): reported with everything needed to
/// find the offending instruction and thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestFault {
    pub kind: FaultKind,
    pub kernel: String,
    pub file: String,
    /// Instruction index (the model's PC) and the PTX source line it came from.
    pub pc: u32,
    pub line: u32,
    /// Global warp id within the launch (CTA-linear id * warps per CTA + warp in CTA).
    pub warp: u32,
    /// CTA index (x, y, z) and thread index within the CTA (x, y, z) of the first faulting
    /// thread; for warp-level faults, the warp's first active thread.
    pub cta: [u32; 3],
    pub thread: [u32; 3],
    pub detail: String,
}

impl fmt::Display for GuestFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "guest fault: {} in kernel `{}` at pc {} ({}:{}), warp {}, block ({},{},{}), thread ({},{},{}): {}",
            self.kind,
            self.kernel,
            self.pc,
            self.file,
            self.line,
            self.warp,
            self.cta[0],
            self.cta[1],
            self.cta[2],
            self.thread[0],
            self.thread[1],
            self.thread[2],
            self.detail
        )
    }
}
impl std::error::Error for GuestFault {}

/// Any error the model returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    Ptx(PtxError),
    Fault(Box<GuestFault>),
    /// Bad launch request: wrong kernel name, argument count/type, dimensions, resources.
    Launch(String),
    /// Bad host memory operation (unknown pointer, copy past an allocation).
    HostMemory(String),
    /// Bad configuration key or value.
    Config(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Ptx(e) => write!(f, "{e}"),
            SimError::Fault(e) => write!(f, "{e}"),
            SimError::Launch(m) => write!(f, "launch error: {m}"),
            SimError::HostMemory(m) => write!(f, "host memory error: {m}"),
            SimError::Config(m) => write!(f, "config error: {m}"),
        }
    }
}
impl std::error::Error for SimError {}

impl From<PtxError> for SimError {
    fn from(e: PtxError) -> Self {
        SimError::Ptx(e)
    }
}
impl From<GuestFault> for SimError {
    fn from(e: GuestFault) -> Self {
        SimError::Fault(Box::new(e))
    }
}
