//! Every warp's reconvergence stack of an SM as the SM sees it: `simt_stack_spe` (one path)
//! or `simt_stack_dpe` (two schedulable paths, L = side 0 and R = side 1). Both are the unit
//! models themselves, held by the generic unit host (which records their port traffic and
//! counts their events); this only gives the SM one interface over either, instance = warp
//! slot.

use crate::config::GpuConfig;
use crate::exec::Flow;
use crate::ptx::ir::END_PC;
use crate::units::declare::UnitParams;
use crate::units::host::{UnitActivity, UnitHost};
use crate::units::simt_stack::{
    SeqUpdate, SimtStackSpe, SpeInputs, SpeParams, StackRecord, UpdKind, SPE_DESC,
};
use crate::units::simt_stack_dpe::{DpeInputs, DpeParams, SimtStackDpe, DPE_DESC};
use crate::units::trace::TraceRecorder;

/// The stacks of every warp slot of one SM.
pub enum WarpStacks {
    Spe(UnitHost<SimtStackSpe>),
    Dpe(UnitHost<SimtStackDpe>),
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

impl WarpStacks {
    /// One stack per warp slot, with the parameters the unit registry derives from `cfg`
    /// (validated with the configuration, so this cannot fail for a validated one).
    pub fn new(cfg: &GpuConfig) -> Result<WarpStacks, String> {
        let warps = cfg.sm.max_warps as usize;
        if let Some(p) = SPE_DESC.gpu_params(cfg)? {
            return Ok(WarpStacks::Spe(UnitHost::new(
                SpeParams::from_params(&p),
                warps,
            )?));
        }
        match DPE_DESC.gpu_params(cfg)? {
            Some(p) => Ok(WarpStacks::Dpe(UnitHost::new(
                DpeParams::from_params(&p),
                warps,
            )?)),
            // Thread-block compaction: the CTA-wide stacks (`sm::compaction`) run the warps;
            // these per-warp stacks stay idle (and are not reported as instantiated).
            None if cfg.sm.compaction != crate::config::Compaction::None => {
                let params = SpeParams {
                    depth: cfg.sm.stack_depth.min(64),
                    ..SpeParams::default()
                };
                Ok(WarpStacks::Spe(UnitHost::new(params, warps)?))
            }
            None => Err("the configuration instantiates no reconvergence stack".into()),
        }
    }

    /// The stack unit these are.
    pub fn desc(&self) -> &'static crate::units::contract::UnitDesc {
        match self {
            WarpStacks::Spe(_) => &SPE_DESC,
            WarpStacks::Dpe(_) => &DPE_DESC,
        }
    }

    /// Record every stack's port traffic from now on (instance `sm<id>.warp<w>`).
    pub fn record(&mut self, sm: u32) -> Result<(), String> {
        let name = |w| format!("sm{sm}.warp{w}");
        match self {
            WarpStacks::Spe(h) => {
                let mut rec = TraceRecorder::new(&SPE_DESC, h.params().to_params()?);
                (0..h.len()).for_each(|w| _ = rec.add_instance(name(w)));
                h.record(rec);
            }
            WarpStacks::Dpe(h) => {
                let mut rec = TraceRecorder::new(&DPE_DESC, h.params().to_params()?);
                (0..h.len()).for_each(|w| _ = rec.add_instance(name(w)));
                h.record(rec);
            }
        }
        Ok(())
    }

    /// The recorded traffic (recording stops).
    pub fn take_trace(&mut self) -> Option<TraceRecorder> {
        match self {
            WarpStacks::Spe(h) => h.take_trace(),
            WarpStacks::Dpe(h) => h.take_trace(),
        }
    }

    /// Every stack's activity, summed.
    pub fn activity(&self) -> UnitActivity {
        match self {
            WarpStacks::Spe(h) => h.activity(),
            WarpStacks::Dpe(h) => h.activity(),
        }
    }

    /// PC of warp `w`'s path on `side` (the TOS PC under SPE).
    #[inline]
    pub fn path_pc(&self, w: usize, side: usize) -> u32 {
        match self {
            WarpStacks::Spe(h) => h.instance(w).tos_pc(),
            WarpStacks::Dpe(h) => h.instance(w).path_pc(side as u8),
        }
    }

    /// Launch warp `w` at `pc` with `mask` (one clock edge of its stack at `cycle`); `view`
    /// receives the stack's outputs after the edge.
    pub fn launch(&mut self, w: usize, cycle: u64, pc: u32, mask: u64, view: &mut StackView) {
        match self {
            WarpStacks::Spe(h) => {
                h.tick(w, cycle, &SpeInputs::launch(pc, mask));
                *view = spe_view(h.instance(w));
            }
            WarpStacks::Dpe(h) => {
                let inp = DpeInputs {
                    launch_valid: true,
                    launch_pc: pc,
                    launch_rpc: END_PC,
                    launch_mask: mask,
                    ..Default::default()
                };
                h.tick(w, cycle, &inp);
                *view = dpe_view(h.instance(w));
            }
        }
    }

    /// Warp `w` issued the instruction at `pc` from `side` with control-flow outcome
    /// `flow`: one clock edge of its stack at `cycle`; `view` receives the stack's outputs
    /// after the edge (one dispatch over the stack kind for both).
    #[inline]
    pub fn issue(
        &mut self,
        w: usize,
        cycle: u64,
        side: usize,
        pc: u32,
        flow: &Flow,
        view: &mut StackView,
    ) -> StackEffect {
        let spe = stack_update(pc, flow);
        // A sequential update is recorded in its compact form without comparing every port
        // to find that out (`UnitHost::tick_compact`).
        let seq = matches!(flow, Flow::Seq);
        match self {
            WarpStacks::Spe(h) => {
                if seq {
                    h.tick_compact(w, cycle, &spe, StackRecord::<SpeInputs>::seq_payload(pc, 0));
                } else {
                    h.tick(w, cycle, &spe);
                }
                *view = spe_view(h.instance(w));
                StackEffect::default()
            }
            WarpStacks::Dpe(h) => {
                let inp = DpeInputs::update_from(side as u8, &spe);
                let ev = if seq {
                    let payload = StackRecord::<DpeInputs>::seq_payload(pc, side as u8);
                    h.tick_compact(w, cycle, &inp, payload)
                } else {
                    h.tick(w, cycle, &inp)
                };
                *view = dpe_view(h.instance(w));
                StackEffect {
                    sb_copy: ev.ev_sb_copy,
                }
            }
        }
    }

    /// A cycle of warp `w`'s stack without an update (pops a TOS left without live
    /// threads). Idle inputs are not recorded: a trace leaves them implicit.
    pub fn idle_tick(&mut self, w: usize, view: &mut StackView) -> StackEffect {
        match self {
            WarpStacks::Spe(h) => {
                h.idle_tick(w);
                *view = spe_view(h.instance(w));
                StackEffect::default()
            }
            WarpStacks::Dpe(h) => {
                let ev = h.idle_tick(w);
                *view = dpe_view(h.instance(w));
                StackEffect {
                    sb_copy: ev.ev_sb_copy,
                }
            }
        }
    }

    /// Warp `w`'s stack's sticky error, if any, as a sentence for the fault report.
    pub fn error(&self, w: usize) -> Option<String> {
        let (overflow, pc, side, depth) = match self {
            WarpStacks::Spe(h) => {
                let s = h.instance(w);
                (s.err_overflow(), s.err_pc(), false, s.params().depth)
            }
            WarpStacks::Dpe(h) => {
                let s = h.instance(w);
                (s.err_overflow(), s.err_pc(), s.err_side(), s.params().depth)
            }
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

/// The outputs of an SPE stack as the SM reads them: `path_pc` of either side is the TOS PC;
/// side 1 never has a path. Warps of the GPU model have 32 lanes, so the masks fit `u32`.
#[inline(always)]
fn spe_view(s: &SimtStackSpe) -> StackView {
    StackView {
        pc: [s.tos_pc(); 2],
        mask: [s.tos_mask() as u32, 0],
        depth: s.depth(),
        error: s.err_overflow() || s.err_pc(),
    }
}

/// The outputs of a DPE stack as the SM reads them.
#[inline(always)]
fn dpe_view(s: &SimtStackDpe) -> StackView {
    StackView {
        pc: [s.path_pc(0), s.path_pc(1)],
        mask: [s.path_mask(0) as u32, s.path_mask(1) as u32],
        depth: s.depth(),
        error: s.err_overflow() || s.err_pc() || s.err_side(),
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
    // Every update is a sequential one with the flow's fields on top: one definition of
    // "sequential", the one a trace keeps in a word (`StackRecord`).
    SpeInputs {
        upd_kind: kind as u8,
        upd_taken: taken as u64,
        upd_target: target,
        upd_rpc: rpc,
        ..SpeInputs::seq(pc, 0)
    }
}
