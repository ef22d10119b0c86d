//! A warp's reconvergence stack as the SM sees it: `simt_stack_spe` (one path) or
//! `simt_stack_dpe` (two schedulable paths, L = side 0 and R = side 1). Both are the unit
//! models themselves; this only gives the SM one interface over either.

use crate::config::{GpuConfig, Reconvergence};
use crate::exec::{Flow, WARP_SIZE};
use crate::units::contract::Bits;
use crate::units::simt_stack::{SimtStackSpe, SpeInputs, SpeParams, UpdKind, SPE_DESC};
use crate::units::simt_stack_dpe::{DpeInputs, DpeParams, SimtStackDpe, DPE_DESC};
use crate::units::trace::TraceRecorder;

pub enum WarpStack {
    Spe(SimtStackSpe),
    Dpe(SimtStackDpe),
}

/// The unit inputs of one cycle (for traces).
#[derive(Clone, Copy)]
pub enum StackInputs {
    Spe(SpeInputs),
    Dpe(DpeInputs),
}

impl StackInputs {
    pub fn to_ports(&self, ports: &mut [Bits]) {
        match self {
            StackInputs::Spe(i) => i.to_ports(ports),
            StackInputs::Dpe(i) => i.to_ports(ports),
        }
    }
}

/// The registered outputs of a warp's stack that the SM reads every cycle: per side, the
/// path's PC and live threads (`mask == 0`: no path on that side), the stack depth, and
/// whether the unit raised an error. The SM keeps a copy per warp slot, refreshed after
/// every stack clock edge ([`WarpStack::view`]), so that the schedulers' scan reads plain
/// fields instead of dispatching over the stack kind and walking to its top entry.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct StackView {
    pub pc: [u32; 2],
    pub mask: [u32; 2],
    pub depth: u32,
    pub error: bool,
}

impl StackView {
    #[inline(always)]
    pub fn path_valid(&self, side: usize) -> bool {
        self.mask[side] != 0
    }
    /// Some path of the TOS can issue.
    #[inline(always)]
    pub fn any_path(&self) -> bool {
        (self.mask[0] | self.mask[1]) != 0
    }
    /// Schedulable paths at the TOS (Avg_Path [L700]).
    #[inline(always)]
    pub fn num_paths(&self) -> u32 {
        (self.mask[0] != 0) as u32 + (self.mask[1] != 0) as u32
    }
    /// Every thread of the warp has exited.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.depth == 0
    }
}

/// What an issued instruction did to the stack, for the rest of the SM.
#[derive(Clone, Copy, Default)]
pub struct StackEffect {
    /// The scoreboard copies pending into shadow bits (DPE `ev_sb_copy`, spec A5).
    pub sb_copy: bool,
}

impl WarpStack {
    pub fn new(cfg: &GpuConfig) -> WarpStack {
        let depth = cfg.sm.stack_depth;
        match cfg.sm.reconvergence {
            Reconvergence::Spe => WarpStack::Spe(SimtStackSpe::new(SpeParams {
                warp_size: WARP_SIZE as u32,
                depth,
                pc_w: 32,
            })),
            Reconvergence::Dpe => WarpStack::Dpe(SimtStackDpe::new(DpeParams {
                warp_size: WARP_SIZE as u32,
                depth,
                pc_w: 32,
            })),
        }
    }

    /// A recorder for this stack kind's port traffic (one instance per warp slot).
    pub fn recorder(cfg: &GpuConfig) -> Result<TraceRecorder, String> {
        let desc = match cfg.sm.reconvergence {
            Reconvergence::Spe => &SPE_DESC,
            Reconvergence::Dpe => &DPE_DESC,
        };
        let params = desc.params(&[
            ("WARP_SIZE", WARP_SIZE as u64),
            ("DEPTH", cfg.sm.stack_depth as u64),
            ("PC_W", 32),
        ])?;
        Ok(TraceRecorder::new(desc, params))
    }

    /// Schedulable paths per warp (1 or 2).
    #[inline]
    pub fn sides(&self) -> usize {
        match self {
            WarpStack::Spe(_) => 1,
            WarpStack::Dpe(_) => 2,
        }
    }

    #[inline]
    pub fn path_valid(&self, side: usize) -> bool {
        match self {
            WarpStack::Spe(s) => side == 0 && s.tos_valid(),
            WarpStack::Dpe(s) => s.path_valid(side as u8),
        }
    }

    #[inline]
    pub fn path_pc(&self, side: usize) -> u32 {
        match self {
            WarpStack::Spe(s) => s.tos_pc(),
            WarpStack::Dpe(s) => s.path_pc(side as u8),
        }
    }

    #[inline]
    pub fn path_mask(&self, side: usize) -> u64 {
        match self {
            WarpStack::Spe(s) => s.tos_mask(),
            WarpStack::Dpe(s) => s.path_mask(side as u8),
        }
    }

    /// Some path of the TOS can issue.
    #[inline]
    pub fn any_path(&self) -> bool {
        match self {
            WarpStack::Spe(s) => s.tos_valid(),
            WarpStack::Dpe(s) => s.num_paths() > 0,
        }
    }

    /// Schedulable paths at the TOS (Avg_Path [L700]).
    #[inline]
    pub fn num_paths(&self) -> u32 {
        match self {
            WarpStack::Spe(s) => s.tos_valid() as u32,
            WarpStack::Dpe(s) => s.num_paths(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        match self {
            WarpStack::Spe(s) => s.is_empty(),
            WarpStack::Dpe(s) => s.is_empty(),
        }
    }

    #[inline]
    pub fn depth(&self) -> u32 {
        match self {
            WarpStack::Spe(s) => s.depth(),
            WarpStack::Dpe(s) => s.depth(),
        }
    }

    /// The registered outputs the SM reads (see [`StackView`]). Warps of the GPU model have
    /// 32 lanes, so the masks fit `u32`.
    #[inline]
    pub fn view(&self) -> StackView {
        match self {
            WarpStack::Spe(s) => {
                // `path_pc` of either side is the TOS PC under SPE; side 1 never has a path.
                StackView {
                    pc: [s.tos_pc(); 2],
                    mask: [s.tos_mask() as u32, 0],
                    depth: s.depth(),
                    error: s.err_overflow() || s.err_pc(),
                }
            }
            WarpStack::Dpe(s) => StackView {
                pc: [s.path_pc(0), s.path_pc(1)],
                mask: [s.path_mask(0) as u32, s.path_mask(1) as u32],
                depth: s.depth(),
                error: s.err_overflow() || s.err_pc() || s.err_side(),
            },
        }
    }

    /// Launch a warp at `pc` with `mask`; returns the inputs applied.
    pub fn launch(&mut self, pc: u32, mask: u64) -> StackInputs {
        match self {
            WarpStack::Spe(s) => {
                let inp = SpeInputs::launch(pc, mask);
                s.tick(&inp);
                StackInputs::Spe(inp)
            }
            WarpStack::Dpe(s) => {
                let inp = DpeInputs {
                    launch_valid: true,
                    launch_pc: pc,
                    launch_rpc: crate::ptx::ir::END_PC,
                    launch_mask: mask,
                    ..Default::default()
                };
                s.tick(&inp);
                StackInputs::Dpe(inp)
            }
        }
    }

    /// The instruction at `pc` issued from `side` with control-flow outcome `flow`: one
    /// clock edge of the unit with the inputs of [`WarpStack::issue_inputs`]. (The inputs
    /// are built again, cheaply, only when a trace records them: the hot loop does not move
    /// an input record around.)
    #[inline]
    pub fn issue(&mut self, side: usize, pc: u32, flow: &Flow) -> StackEffect {
        let spe = stack_update(pc, flow);
        match self {
            WarpStack::Spe(s) => {
                s.tick(&spe);
                StackEffect::default()
            }
            WarpStack::Dpe(s) => StackEffect {
                sb_copy: s.tick(&DpeInputs::update_from(side as u8, &spe)).sb_copy,
            },
        }
    }

    /// The unit inputs of [`WarpStack::issue`] (for traces).
    pub fn issue_inputs(&self, side: usize, pc: u32, flow: &Flow) -> StackInputs {
        let spe = stack_update(pc, flow);
        match self {
            WarpStack::Spe(_) => StackInputs::Spe(spe),
            WarpStack::Dpe(_) => StackInputs::Dpe(DpeInputs::update_from(side as u8, &spe)),
        }
    }

    /// A cycle without an update (pops a TOS left without live threads).
    pub fn idle_tick(&mut self) -> StackEffect {
        match self {
            WarpStack::Spe(s) => {
                s.tick(&SpeInputs::default());
                StackEffect::default()
            }
            WarpStack::Dpe(s) => StackEffect {
                sb_copy: s.tick(&DpeInputs::default()).sb_copy,
            },
        }
    }

    /// The unit's sticky error, if any, as a sentence for the fault report.
    pub fn error(&self) -> Option<String> {
        let (overflow, pc, side, depth) = match self {
            WarpStack::Spe(s) => (s.err_overflow(), s.err_pc(), false, s.params().depth),
            WarpStack::Dpe(s) => (s.err_overflow(), s.err_pc(), s.err_side(), s.params().depth),
        };
        if overflow {
            Some(format!(
                "SIMT stack overflow: a divergent branch needs more than sm.stack_depth = {depth} entries"
            ))
        } else if pc {
            Some("SIMT stack PC mismatch".into())
        } else if side {
            Some("SIMT stack: an update named a path that is not live".into())
        } else {
            None
        }
    }
}

/// The stack-unit inputs of an issued instruction.
pub fn stack_update(pc: u32, flow: &Flow) -> SpeInputs {
    let (kind, taken, target, rpc) = match *flow {
        Flow::Seq => (UpdKind::Seq, 0, 0, 0),
        Flow::Branch { taken, target, rpc } => (UpdKind::Branch, taken, target, rpc),
        Flow::Jump { target } => (UpdKind::Jump, 0, target, 0),
        Flow::Exit { exiting } => (UpdKind::Exit, exiting, 0, 0),
    };
    SpeInputs {
        upd_valid: true,
        upd_pc: pc,
        upd_kind: kind as u8,
        upd_taken: taken as u64,
        upd_target: target,
        upd_next: pc + 1,
        upd_rpc: rpc,
        ..Default::default()
    }
}
