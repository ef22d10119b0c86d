//! Purely functional execution: the same instruction semantics and the same SIMT stack unit
//! as the timing model, with no timing. Blocks run one after another; inside a block each
//! warp runs until it reaches a barrier or exits.

use crate::config::GpuConfig;
use crate::error::{FaultKind, GuestFault, SimError};
use crate::exec::barrier::BarrierTable;
use crate::exec::{
    self, CtaState, ExecEnv, Flow, GlobalMemory, LaunchInfo, StepResult, WarpState, WARP_SIZE,
};
use crate::ptx::ir::{Kernel, Module};
use crate::stats::KernelStats;
use crate::timing::reconv::stack_update;
use crate::units::simt_stack::{SimtStackSpe, SpeInputs, SpeParams};

struct FWarp {
    state: WarpState,
    stack: SimtStackSpe,
    /// Barrier id and the PC of the `bar.sync` the warp waits at.
    barrier: Option<(usize, u32)>,
}

#[allow(clippy::too_many_arguments)]
pub fn run_kernel(
    cfg: &GpuConfig,
    module: &Module,
    kernel: &Kernel,
    launch: &LaunchInfo,
    global: &mut GlobalMemory,
    stats: &mut KernelStats,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), SimError> {
    let params = SpeParams {
        warp_size: WARP_SIZE as u32,
        depth: cfg.sm.stack_depth,
        pc_w: 32,
        ..SpeParams::default()
    };
    let limit = cfg.sim.max_warp_instructions;
    let total_ctas = launch.grid.count();
    // Reused for every instruction (it carries 32 lane addresses).
    let mut res = StepResult {
        flow: Flow::Seq,
        executed: 0,
        mem: None,
        barrier: None,
    };
    for cta_id in 0..total_ctas {
        let mut cta = CtaState::new(launch, cta_id as u32);
        let mut warps: Vec<FWarp> = (0..launch.warps_per_cta)
            .map(|w| {
                let state = WarpState::new(kernel, launch, &cta, w);
                let mut stack = SimtStackSpe::new(params);
                stack.launch(0, state.valid_lanes as u64);
                FWarp {
                    state,
                    stack,
                    barrier: None,
                }
            })
            .collect();
        let mut live = warps.len() as u32;
        let mut barriers = BarrierTable::default();
        while live > 0 {
            for warp in warps.iter_mut() {
                if warp.barrier.is_some() || warp.stack.is_empty() {
                    continue;
                }
                // Run this warp until it waits at a barrier or exits.
                while !warp.stack.is_empty() {
                    if !warp.stack.tos_valid() {
                        warp.stack.tick(&SpeInputs::default());
                        continue;
                    }
                    let pc = warp.stack.tos_pc();
                    let active = warp.stack.tos_mask() as u32;
                    let mut env = ExecEnv {
                        module,
                        kernel,
                        launch,
                        global,
                        sm_id: 0,
                        num_sms: cfg.sm.count,
                        cycle: stats.warp_instructions,
                    };
                    exec::execute_into(pc, active, &mut warp.state, &mut cta, &mut env, &mut res)
                        .map_err(SimError::Fault)?;
                    stats.warp_instructions += 1;
                    stats.thread_instructions += active.count_ones() as u64;
                    if matches!(res.flow, Flow::Branch { taken, .. } if taken != 0 && taken != active)
                    {
                        stats.divergent_branches += 1;
                    }
                    warp.stack.tick(&stack_update(pc, &res.flow));
                    if warp.stack.err_overflow() || warp.stack.err_pc() {
                        return Err(fault(
                            FaultKind::ReconvergenceStack,
                            module,
                            kernel,
                            &warp.state,
                            &cta,
                            pc,
                            format!(
                                "SIMT stack overflow: a divergent branch needs more than sm.stack_depth = {} entries",
                                cfg.sm.stack_depth
                            ),
                        ));
                    }
                    stats.max_stack_depth = stats.max_stack_depth.max(warp.stack.depth());
                    if stats.warp_instructions >= limit {
                        return Err(fault(
                            FaultKind::Watchdog,
                            module,
                            kernel,
                            &warp.state,
                            &cta,
                            pc,
                            format!(
                                "the launch executed sim.max_warp_instructions = {limit} warp instructions \
                                 without finishing (raise it with --set sim.max_warp_instructions=N)"
                            ),
                        ));
                    }
                    if stats.warp_instructions.is_multiple_of(1 << 20) {
                        progress(stats.warp_instructions, cta_id);
                    }
                    if let Some((id, count)) = res.barrier {
                        warp.barrier = Some((barriers.arrive(id, count), pc));
                        break;
                    }
                }
                if warp.stack.is_empty() {
                    live -= 1;
                }
            }
            if live == 0 {
                break;
            }
            // Every live warp now waits at a barrier: release the complete ones.
            let released = barriers.release(live);
            if released == 0 {
                let (w, pc) = warps
                    .iter()
                    .enumerate()
                    .find_map(|(i, w)| w.barrier.map(|(_, pc)| (i, pc)))
                    .unwrap_or((0, 0));
                return Err(fault(
                    FaultKind::BarrierDeadlock,
                    module,
                    kernel,
                    &warps[w].state,
                    &cta,
                    pc,
                    barriers.deadlock_detail(live),
                ));
            }
            for warp in &mut warps {
                if let Some((id, _)) = warp.barrier {
                    if released >> id & 1 == 1 {
                        warp.barrier = None;
                    }
                }
            }
        }
    }
    Ok(())
}

fn fault(
    kind: FaultKind,
    module: &Module,
    kernel: &Kernel,
    warp: &WarpState,
    cta: &CtaState,
    pc: u32,
    detail: String,
) -> SimError {
    let lane = warp.valid_lanes.trailing_zeros().min(31) as usize;
    GuestFault {
        kind,
        kernel: kernel.name.clone(),
        file: module.file.clone(),
        pc,
        line: kernel
            .insts
            .get(pc as usize)
            .map(|i| i.loc.line)
            .unwrap_or(0),
        warp: warp.global_warp_id,
        cta: cta.ctaid,
        thread: warp.tid[lane],
        detail,
    }
    .into()
}
