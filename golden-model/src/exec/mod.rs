//! Functional (bit-exact) execution of one warp instruction.
//!
//! The timing model and the purely functional mode both call [`execute`]: the timing model
//! executes an instruction at issue (as GPGPU-Sim does), then uses the returned
//! [`StepResult`] for the reconvergence stack (control flow), the scoreboard (destination
//! registers) and the memory pipeline (per-lane addresses).
//!
//! Modules: [`semantics`] (decode and the ALU/control/warp-level instructions), `mem_ops`
//! (ld/st/atom/red), [`int`] and [`float`] (pure bit-exact helpers), [`memory`] (device
//! memory), [`state`] (architectural state).

pub mod barrier;
pub mod builtins;
pub mod float;
pub mod int;
pub mod libdevice;
mod mem_ops;
pub mod memory;
pub mod printf;
pub mod semantics;
pub mod state;

pub use memory::GlobalMemory;
pub use state::{CtaState, LaunchInfo, WarpState};

use crate::ptx::ir::StateSpace;

/// Threads per warp in the GPU model. Masks are `u32`.
pub const WARP_SIZE: usize = 32;

/// What the instruction does to control flow, for the SIMT stack update
/// (spec reconvergence-dpe.md §9.4 `upd_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Fall through to `pc + 1`.
    Seq,
    /// Conditional branch (`@p bra`): `taken` = lanes (of the active mask) whose guard held.
    Branch { taken: u32, target: u32, rpc: u32 },
    /// Unconditional branch (no guard).
    Jump { target: u32 },
    /// `ret`/`exit`: `exiting` = lanes that leave the kernel (active lanes whose guard held);
    /// other active lanes fall through to `pc + 1`.
    Exit { exiting: u32 },
}

/// Kind of memory operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    Load,
    Store,
    Atomic,
}

/// The per-lane addresses of one warp memory instruction, for the timing model.
/// Addresses are space-relative for shared/local/const/param and device addresses for global
/// (generic addresses are already resolved). If the lanes of one generic instruction
/// resolve to different spaces, `space` is `Generic` and `addrs` are the generic addresses.
#[derive(Debug, Clone, Copy)]
pub struct MemAccess {
    pub space: StateSpace,
    pub kind: MemKind,
    /// Bytes accessed per lane (element size × vector width).
    pub bytes: u32,
    /// Lanes that accessed memory.
    pub mask: u32,
    pub addrs: [u64; WARP_SIZE],
}

impl Default for MemAccess {
    fn default() -> Self {
        MemAccess {
            space: StateSpace::Global,
            kind: MemKind::Load,
            bytes: 0,
            mask: 0,
            addrs: [0; WARP_SIZE],
        }
    }
}

/// Result of executing one warp instruction.
#[derive(Debug, Clone, Copy)]
pub struct StepResult {
    pub flow: Flow,
    /// Lanes that actually executed (stack mask ∧ guard). Used for thread-instruction counts.
    pub executed: u32,
    /// Set when the instruction touched memory (`mem.mask` may be 0 if every lane was
    /// predicated off).
    pub mem: Option<MemAccess>,
    /// `bar.sync`: barrier id and optional expected thread count.
    pub barrier: Option<(u32, Option<u32>)>,
}

/// Read-only and shared-mutable context of a kernel launch that an instruction may touch.
pub struct ExecEnv<'a> {
    pub module: &'a crate::ptx::ir::Module,
    pub kernel: &'a crate::ptx::ir::Kernel,
    pub launch: &'a LaunchInfo,
    pub global: &'a mut GlobalMemory,
    /// SM executing the warp (for `%smid`) and the current cycle (for `%clock`).
    pub sm_id: u32,
    pub num_sms: u32,
    pub cycle: u64,
}

pub use semantics::{execute, execute_into};
