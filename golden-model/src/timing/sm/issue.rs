//! The issue stage: what happens when a scheduler's pick issues. Owns no state; it carries
//! the instruction through the sub-blocks in order: functional execution, the issue and
//! branch hooks, the stack update (and the instruction buffers it invalidates), register
//! reads (bank conflicts may delay dispatch), dispatch to a functional unit, the LSU or
//! shared memory with the scoreboard reserves of its results, barrier arrival, and the DPE
//! path selection.

use super::backend::Writeback;
use super::frontend::FrontEnd;
use super::lsu::PendingMem;
use super::{KernelCtx, Sm};
use crate::error::{FaultKind, GuestFault};
use crate::exec::{self, ExecEnv, Flow, GlobalMemory, MemKind};
use crate::hooks::{BranchEvent, GpuHooks, IssueEvent, RfAccess};
use crate::ptx::ir::{InstClass, RegId, StateSpace};

impl Sm {
    /// Issue warp `w`'s next instruction from path `side`. Returns whether it was a
    /// long-latency operation or a barrier (for the two-level scheduler).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn issue<H: GpuHooks>(
        &mut self,
        w: usize,
        side: usize,
        now: u64,
        k: &KernelCtx,
        global: &mut GlobalMemory,
        num_sms: u32,
        hooks: &mut H,
    ) -> Result<bool, Box<GuestFault>> {
        let cta_slot = self.warps[w].cta_slot as usize;
        let view = self.warps[w].view;
        let pc = view.pc[side];
        let active = view.mask[side];
        self.stats.issued_paths += view.num_paths() as u64;
        let d = &k.decoded[pc as usize];
        {
            let cta = &mut self.residency.cta_mut(cta_slot).state;
            let mut env = ExecEnv {
                module: k.module,
                kernel: k.kernel,
                launch: k.launch,
                global,
                sm_id: self.id,
                num_sms,
                cycle: now,
            };
            match &self.compaction {
                None => exec::execute_into(
                    pc,
                    active,
                    &mut self.states[w],
                    cta,
                    &mut env,
                    &mut self.step,
                )?,
                Some(cp) => {
                    let (warp, homes) = cp.running(w);
                    execute_run_warp(
                        pc,
                        &warp,
                        homes,
                        cp.slp(),
                        &mut self.states,
                        cta,
                        &mut env,
                        &mut self.step,
                        &mut self.step_part,
                    )?
                }
            }
        }
        let (flow, barrier) = (self.step.flow, self.step.barrier);
        self.stats.warp_instructions += 1;
        self.stats.thread_instructions += active.count_ones() as u64;
        hooks.on_issue(&IssueEvent {
            sm: self.id,
            cycle: now,
            warp: w as u32,
            global_warp: self.states[w].global_warp_id,
            side: side as u8,
            pc,
            active,
            class: d.class,
        });
        if let Flow::Branch { taken, target, rpc } = flow {
            let ev = BranchEvent {
                sm: self.id,
                cycle: now,
                warp: w as u32,
                side: side as u8,
                pc,
                active,
                taken,
                target,
                reconverge: rpc,
            };
            if ev.divergent() {
                self.stats.divergent_branches += 1;
            }
            hooks.on_branch(&ev);
        }

        // SIMT stack update (under compaction, the CTA-wide stack's).
        if let Some(cp) = self.compaction.as_mut() {
            cp.issued(w, pc, &flow);
            let warp = &mut self.warps[w];
            warp.view = cp.view(w);
            FrontEnd::issued(warp, side, pc);
            self.compaction_changes(k)?;
        }
        let effect = if self.compaction.is_some() {
            Default::default()
        } else {
            let warp = &mut self.warps[w];
            let effect = self.stacks.issue(w, now, side, pc, &flow, &mut warp.view);
            if warp.view.error {
                let detail = self.stacks.error(w).unwrap_or_default();
                return Err(Box::new(self.fault(
                    FaultKind::ReconvergenceStack,
                    w,
                    pc,
                    k,
                    detail,
                )));
            }
            self.stats.max_stack_depth = self.stats.max_stack_depth.max(warp.view.depth);
            FrontEnd::issued(warp, side, pc);
            effect
        };
        self.stack_effect(w, effect);
        self.front.update(w, &self.warps[w]);

        // Register-file bank reads of the sources; with bank conflicts modelled, the extra
        // operand-collection cycles delay dispatch (result latency and unit busy time).
        let rf_extra = self.rf.read_operands(w, d.rf_reads(), now);
        self.rf_read_hooks(w, d.rf_reads(), now, hooks);

        // Destination registers and functional-unit occupancy.
        let mut long_latency = false;
        let sb_side = side as u8;
        match d.class {
            InstClass::Mem => {
                if self.step.mem.is_some() {
                    long_latency =
                        self.issue_memory(w, sb_side, now, rf_extra, k, d.writes(), pc)?;
                }
            }
            class => {
                let lat = self.pipes.dispatch(class, now, rf_extra, &k.cfg.pipeline);
                long_latency = class == InstClass::Div;
                for &r in d.writes() {
                    self.write_result(w, sb_side, r, now, lat + rf_extra, k, pc)?;
                }
            }
        }

        if let Some(b) = barrier {
            long_latency = true;
            self.arrive_barrier(w, cta_slot, b, k, pc)?;
        }
        let rotate = long_latency || d.class == InstClass::Sfu;
        self.scan.path_issued(&mut self.warps[w], side, rotate);
        let warp = &self.warps[w];
        if self.compaction.is_some() {
            // Exits and pops were carried out by `compaction_changes`.
        } else if warp.view.is_empty() {
            self.warp_exited(w, k)?;
        } else if !warp.view.any_path() {
            self.autopop.push(w);
        }
        Ok(long_latency)
    }

    /// The register-file hook of every register-file read at issue (`regs`: the
    /// instruction's `rf_reads`, as `RfBanks` counts them; with conflicts, the k-th read of one
    /// bank is k cycles after issue). Nothing is computed without a hook attached.
    #[inline(always)]
    fn rf_read_hooks<H: GpuHooks>(&self, w: usize, regs: &[RegId], now: u64, hooks: &mut H) {
        let mut seen = [0usize; 8];
        let mut n = 0;
        for &r in regs {
            let b = self.rf.bank(w, r);
            let mut later = 0;
            if self.rf_conflicts {
                if n == seen.len() {
                    continue;
                }
                later = seen[..n].iter().filter(|&&x| x == b).count() as u64;
                seen[n] = b;
                n += 1;
            }
            hooks.on_rf_access(&RfAccess {
                sm: self.id,
                cycle: now + later,
                bank: b as u32,
                warp: w as u32,
                reg: r,
                write: false,
            });
        }
    }

    /// Dispatch the memory access of the instruction just executed (`self.step.mem`): a
    /// global/local one to the LSU queue, with the reserves of the registers a load writes;
    /// any other (shared, const, param, or without an active lane) inside the SM. Returns
    /// whether it is a long-latency operation (a load or atomic to the memory hierarchy).
    #[allow(clippy::too_many_arguments)]
    fn issue_memory(
        &mut self,
        w: usize,
        side: u8,
        now: u64,
        rf_extra: u32,
        k: &KernelCtx,
        writes: &[RegId],
        pc: u32,
    ) -> Result<bool, Box<GuestFault>> {
        let acc = self
            .step
            .mem
            .as_ref()
            .expect("a memory instruction's access");
        let (space, kind, mask) = (acc.space, acc.kind, acc.mask);
        match space {
            StateSpace::Global | StateSpace::Local | StateSpace::Generic if mask != 0 => {
                let mut regs = [0u16; 4];
                let mut n = 0;
                if kind != MemKind::Store {
                    // Completion is at least two cycles away (the LSU hands the request on
                    // next cycle at the earliest), so the reserve is applied first.
                    for &r in writes {
                        regs[n] = r;
                        n += 1;
                        self.reserve(w, side, r, true, k, pc)?;
                    }
                }
                let pending = PendingMem {
                    warp: w as u16,
                    side,
                    regs,
                    n_regs: n as u8,
                };
                self.warps[w].inflight += 1;
                let acc = self.step.mem.as_ref().expect("checked");
                self.lsu.push(pending, acc, now, rf_extra);
                Ok(kind != MemKind::Store)
            }
            _ => {
                let (lat, busy) = self.shared.serve(acc, &mut self.stats.mem);
                self.lsu.occupy(now + busy as u64 + rf_extra as u64);
                for &r in writes {
                    self.write_result(w, side, r, now, lat + rf_extra, k, pc)?;
                }
                Ok(false)
            }
        }
    }

    /// Register `r` of path (w, side) is written back `lat` cycles after issue (at least 1).
    ///
    /// A result written back in the very next cycle is never reserved: its release would
    /// reach the scoreboard at the same edge as its reserve, where the reserve wins (A7), and
    /// it is visible to that cycle's issue anyway, exactly as if its bit had been set and
    /// cleared again (no query and no copy can see it in between: a copy at the issue cycle
    /// would take it into a shadow bit that the release clears at the same edge).
    #[allow(clippy::too_many_arguments)]
    fn write_result(
        &mut self,
        w: usize,
        side: u8,
        r: u16,
        now: u64,
        lat: u32,
        k: &KernelCtx,
        pc: u32,
    ) -> Result<(), Box<GuestFault>> {
        let lat = lat.max(1) as u64;
        let tracked = lat >= 2;
        if tracked {
            self.reserve(w, side, r, false, k, pc)?;
        }
        self.writebacks.schedule(
            now + lat,
            Writeback {
                warp: w as u16,
                reg: r,
                side,
                tracked,
            },
        );
        self.warps[w].inflight += 1;
        Ok(())
    }

    /// Stage the reserve of `r` for path (w, side) at issue. The reserve ports cover the most
    /// writes the schedulers can issue in one cycle (checked per kernel at launch), so a
    /// refused reserve is a bug of the model, reported as an internal-error fault.
    #[inline]
    fn reserve(
        &mut self,
        w: usize,
        side: u8,
        r: u16,
        memory: bool,
        k: &KernelCtx,
        pc: u32,
    ) -> Result<(), Box<GuestFault>> {
        if !self.deps.reserve(w, side, r, memory) {
            return Err(self.reserve_refused(w, r, k, pc));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn reserve_refused(&self, w: usize, r: u16, k: &KernelCtx, pc: u32) -> Box<GuestFault> {
        Box::new(self.fault(
            FaultKind::Internal,
            w,
            pc,
            k,
            format!(
                "the scoreboard refused the reserve of register slot {r}: all {} reserve ports \
                 of this cycle are taken",
                self.deps.reserve_ports()
            ),
        ))
    }
}

/// Execute the instruction at `pc` for `warp`, a warp of compacted (and/or lane-permuted)
/// threads: once per home warp, on that warp's own registers (`states[homes[h]]`) with its
/// threads' logical lanes, the outcomes merged by physical lane into `out` (`part` is
/// scratch). A static warp with no permutation is the plain call.
#[allow(clippy::too_many_arguments)]
fn execute_run_warp(
    pc: u32,
    warp: &super::compaction::RunWarp,
    homes: &[usize],
    slp: crate::units::slp_perm::Slp,
    states: &mut [crate::exec::WarpState],
    cta: &mut crate::exec::CtaState,
    env: &mut ExecEnv,
    out: &mut exec::StepResult,
    part: &mut exec::StepResult,
) -> Result<(), Box<GuestFault>> {
    const S: u32 = exec::WARP_SIZE as u32;
    let hs = warp.homes();
    if hs.count_ones() == 1 && !slp.enabled {
        let h = hs.trailing_zeros() as usize;
        return exec::execute_into(pc, warp.lanes, &mut states[homes[h]], cta, env, out);
    }
    out.flow = Flow::Seq;
    out.executed = 0;
    out.mem = None;
    out.barrier = None;
    let mut m = hs;
    while m != 0 {
        let h = m.trailing_zeros();
        m &= m - 1;
        let phys = warp.lanes_of(h);
        let logical = slp.unpermute_mask(h, phys as u64, S) as u32;
        exec::execute_into(pc, logical, &mut states[homes[h as usize]], cta, env, part)?;
        let perm = |x: u32| slp.permute_mask(h, x as u64, S) as u32;
        out.executed |= perm(part.executed);
        out.flow = match (out.flow, part.flow) {
            (Flow::Branch { taken: a, .. }, Flow::Branch { taken, target, rpc }) => Flow::Branch {
                taken: a | perm(taken),
                target,
                rpc,
            },
            (_, Flow::Branch { taken, target, rpc }) => Flow::Branch {
                taken: perm(taken),
                target,
                rpc,
            },
            (Flow::Exit { exiting: a }, Flow::Exit { exiting }) => Flow::Exit {
                exiting: a | perm(exiting),
            },
            (_, Flow::Exit { exiting }) => Flow::Exit {
                exiting: perm(exiting),
            },
            (_, f) => f,
        };
        if part.barrier.is_some() {
            out.barrier = part.barrier;
        }
        if let Some(acc) = &part.mem {
            let o = out.mem.get_or_insert(exec::MemAccess { mask: 0, ..*acc });
            let mut lanes = acc.mask;
            while lanes != 0 {
                let l = lanes.trailing_zeros();
                lanes &= lanes - 1;
                let p = slp.lane(h, l, S);
                o.addrs[p as usize] = acc.addrs[l as usize];
                o.mask |= 1 << p;
            }
        }
    }
    Ok(())
}
