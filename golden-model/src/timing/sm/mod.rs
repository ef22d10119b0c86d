//! One streaming multiprocessor, cycle by cycle.
//!
//! The SM is split by the state each part owns; each sub-block is a struct in its own
//! module, and none holds a reference to another or calls back into the SM:
//!
//! | sub-block | module | owns |
//! |---|---|---|
//! | residency | `residency` | CTA slots, the resources they take; which warp slots are live |
//! | warp table | `warps` | the per-warp record the blocker check reads (fields owned as marked) |
//! | front end | `frontend` | instruction fetch: which paths need one, buffers, fetch completions |
//! | issue scan | `scan` | the warp schedulers, their sleep, the per-path blocker cache |
//! | reconvergence stacks | `timing::reconv` | every warp's `simt_stack_spe`/`_dpe` unit instance |
//! | compaction | `compaction` | under `sm.compaction`: the CTA-wide stacks, the `wcu` and `capri_capt` instances |
//! | back end | `backend` | functional units' busy times, the writeback wheel |
//! | load/store unit | `lsu` | the memory request queue and its tokens, LSU busy time |
//! | register dependencies | `regdeps` | the `dpe_scoreboard` unit instance, deferred releases |
//! | register file | `timing::rf` | per-bank access counters (and conflicts) |
//! | barriers | `barriers` | every CTA's barrier table, which warps wait where |
//! | shared memory | `shared` | bank conflicts and latency of accesses served in the SM |
//! | statistics | `stats::KernelStats` | this launch's per-SM figures (`Sm::stats`) |
//!
//! A sub-block answers with what happened (the writebacks due, the warps a fetch or a
//! barrier release concerns, whether the LSU queue drained, the path a scheduler picked),
//! and the SM (here and in `issue`) carries that to the others: this file is where the
//! sub-blocks meet, and the only place that knows the order of the phases.
//!
//! Per cycle ([`Sm::cycle`]): (1) writebacks due this cycle and memory completions stage
//! their scoreboard releases, and the scoreboard's clock edge applies them (together with
//! the reserves and copies staged in the previous cycle); (2) stacks whose top entry lost
//! all its threads pop (one entry per cycle, spec A12); (3) the load/store unit hands its
//! head request to the memory hierarchy; (4) instruction buffers are refilled (fetch); (5)
//! each warp scheduler picks one ready warp by its policy and issues its next instruction.
//!
//! Instructions execute functionally at issue (as in GPGPU-Sim): the branch outcome updates
//! the warp's SIMT stack in the same cycle, so the next instruction of the warp is known at
//! t+1, and a control transfer flushes the instruction buffer.
//!
//! Hook points ([`crate::hooks`]): issue and branch in `issue`, register-file reads at
//! issue and writes at writeback here; the memory hierarchy calls the cache hooks itself.

mod backend;
mod barriers;
mod compaction;
mod frontend;
mod issue;
mod lsu;
mod regdeps;
mod residency;
mod scan;
mod shared;
mod warps;

pub use regdeps::{scoreboard_params, scoreboard_params_for, SB_RESERVE_PORTS, SB_WRITEBACK_PORTS};
pub use residency::CtaFootprint;
pub use shared::shared_conflict_ways;

use super::decode::DecodedInst;
use super::reconv::{StackEffect, WarpStacks};
use super::rf::RfBanks;
use crate::config::GpuConfig;
use crate::error::{FaultKind, GuestFault};
use crate::exec::{CtaState, GlobalMemory, LaunchInfo, StepResult, WarpState};
use crate::hooks::{GpuHooks, RfAccess};
use crate::memory::MemoryHierarchy;
use crate::ptx::ir::{Kernel, Module, RegId};
use crate::stats::KernelStats;
use crate::units::contract::UnitDesc;
use crate::units::dpe_scoreboard::{ScoreboardParams, SCOREBOARD_DESC};
use crate::units::host::UnitActivity;
use crate::units::trace::TraceRecorder;
use backend::{Pipelines, Writebacks};
use barriers::Barriers;
use compaction::Compaction;
use frontend::FrontEnd;
use lsu::Lsu;
use regdeps::RegDeps;
use residency::{CtaSlot, Residency};
use scan::{IssueScan, Pick, ScanInputs};
use shared::SharedMem;
use warps::{set_bits, WarpSlot};

/// Everything about the running kernel that every SM reads.
pub struct KernelCtx<'a> {
    pub cfg: &'a GpuConfig,
    pub module: &'a Module,
    pub kernel: &'a Kernel,
    pub launch: &'a LaunchInfo,
    pub decoded: &'a [DecodedInst],
    /// The parameters of every SM's scoreboard for this kernel ([`scoreboard_params`]).
    pub sb: ScoreboardParams,
}

/// The per-SM timing model.
pub struct Sm {
    pub id: u32,
    /// The warp table (see [`warps`]), read by the blocker check and at issue.
    warps: Vec<WarpSlot>,
    /// Architectural state (registers, local memory) of each warp slot, touched at issue.
    states: Vec<WarpState>,
    residency: Residency,
    front: FrontEnd,
    scan: IssueScan,
    /// Each warp slot's reconvergence stack (the unit model, instance = warp slot), touched
    /// only when it is clocked; the schedulers read its outputs from `WarpSlot::view`.
    stacks: WarpStacks,
    /// Warps whose stack needs an idle-cycle pop (its top entry has no live thread left).
    autopop: Vec<usize>,
    /// Thread-block compaction (`sm.compaction`): replaces `stacks` as the warps' stacks.
    compaction: Option<Box<Compaction>>,
    pipes: Pipelines,
    writebacks: Writebacks,
    lsu: Lsu,
    deps: RegDeps,
    barriers: Barriers,
    shared: SharedMem,
    /// The result of the instruction being issued, reused from issue to issue (and, under
    /// compaction, one home warp's part of it).
    step: StepResult,
    step_part: StepResult,
    pub stats: KernelStats,
    /// Register-file bank counters (and conflict state) of this launch (`timing::rf`).
    pub rf: RfBanks,
    /// The register file's view the hooks get: the kernel's first predicate slot (not in
    /// the register file) and whether reads of one bank serialise.
    rf_pred_base: u32,
    rf_conflicts: bool,
}

impl Sm {
    pub fn new(id: u32, cfg: &GpuConfig) -> Sm {
        Sm {
            id,
            warps: Vec::new(),
            states: Vec::new(),
            residency: Residency::new(cfg),
            front: FrontEnd::new(cfg),
            scan: IssueScan::new(cfg),
            // The configuration was validated, which checks every unit's parameters.
            stacks: WarpStacks::new(cfg).expect("validated configuration"),
            autopop: Vec::new(),
            compaction: Compaction::new(cfg)
                .expect("validated configuration")
                .map(Box::new),
            pipes: Pipelines::new(cfg),
            writebacks: Writebacks::new(cfg),
            lsu: Lsu::new(cfg),
            deps: RegDeps::new(cfg),
            barriers: Barriers::new(cfg.sm.max_ctas, cfg.sm.max_warps),
            shared: SharedMem::new(cfg),
            step: StepResult {
                flow: crate::exec::Flow::Seq,
                executed: 0,
                mem: None,
                barrier: None,
            },
            step_part: StepResult {
                flow: crate::exec::Flow::Seq,
                executed: 0,
                mem: None,
                barrier: None,
            },
            stats: KernelStats::default(),
            rf: RfBanks::new(cfg.sm.rf_banks, cfg.sm.rf_bank_conflicts),
            rf_pred_base: 0,
            rf_conflicts: cfg.sm.rf_bank_conflicts,
        }
    }

    /// Start recording the port traffic of every instance of `unit` in this SM (a unit the
    /// configuration instantiates, see [`crate::units::contract::UnitDesc::gpu`]).
    pub fn record_unit(&mut self, unit: &'static UnitDesc, cfg: &GpuConfig) -> Result<(), String> {
        if let Some(cp) = &mut self.compaction {
            if cp.record(unit, self.id)? {
                return Ok(());
            }
        }
        if std::ptr::eq(unit, self.stacks.desc()) && self.compaction.is_none() {
            self.stacks.record(self.id)
        } else if std::ptr::eq(unit, &SCOREBOARD_DESC) {
            self.deps.record(cfg, self.id)
        } else {
            Err(format!("unit {} has no instance in the SM", unit.name))
        }
    }

    /// The recorded traffic of every unit being recorded: stacks, then the scoreboard
    /// (recording stops).
    pub fn take_traces(&mut self) -> Vec<TraceRecorder> {
        let sb = self.deps.take_trace();
        let cp = self
            .compaction
            .as_mut()
            .map(|c| c.take_traces())
            .unwrap_or_default();
        self.stacks
            .take_trace()
            .into_iter()
            .chain(sb)
            .chain(cp)
            .collect()
    }

    /// The activity counters of every unit instance of this SM, one entry per unit kind.
    pub fn unit_activity(&self) -> Vec<UnitActivity> {
        let mut v = vec![self.stacks.activity(), self.deps.activity()];
        if let Some(cp) = &self.compaction {
            v.extend(cp.activity());
        }
        v
    }

    /// Prepare for a new kernel launch: size per-warp structures for its register count.
    pub fn begin_kernel(&mut self, k: &KernelCtx) {
        let max_warps = k.cfg.sm.max_warps as usize;
        self.deps.begin_kernel(k);
        self.warps.clear();
        self.warps.resize_with(max_warps, WarpSlot::free);
        // Warp states keep their storage from launch to launch (`WarpState::reinit`).
        self.states.resize_with(max_warps, WarpState::empty);
        self.barriers.begin_kernel();
        self.scan.begin_kernel(k.cfg);
        self.front.begin_kernel();
        self.stats = KernelStats::default();
        self.rf.begin_kernel();
        self.rf_pred_base = k.kernel.regs_per_thread;
        if let Some(cp) = &mut self.compaction {
            cp.begin_kernel(k.kernel);
        }
    }

    /// Drops what a launch that ended early left in flight (see `Gpu::abandon_launch`):
    /// resident blocks and warps, fetch, issue, pipelines, writebacks, memory instructions,
    /// barriers, shared memory. The unit hosts stay (their traces and activity counters run
    /// on; `begin_kernel` restarts their instances).
    pub fn abandon_launch(&mut self, cfg: &GpuConfig) {
        let mut fresh = Sm::new(self.id, cfg);
        std::mem::swap(&mut fresh.stacks, &mut self.stacks);
        std::mem::swap(&mut fresh.deps, &mut self.deps);
        std::mem::swap(&mut fresh.compaction, &mut self.compaction);
        *self = fresh;
    }

    /// Whether one more CTA of this footprint fits now.
    pub fn can_accept(&self, f: &CtaFootprint, cfg: &GpuConfig) -> bool {
        self.residency.can_accept(f, cfg)
    }

    /// Place CTA `linear_id` on this SM at its cycle `now`.
    pub fn launch_cta(&mut self, k: &KernelCtx, linear_id: u32, f: CtaFootprint, now: u64) {
        let slot = self.residency.free_cta_slot();
        let state = CtaState::new(k.launch, linear_id);
        let mut warp_slots = Vec::with_capacity(f.warps as usize);
        for w in 0..f.warps {
            let ws = Residency::free_warp_slot(&self.warps);
            let warp = &mut self.warps[ws];
            *warp = WarpSlot {
                active: true,
                cta_slot: slot as u16,
                ..WarpSlot::free()
            };
            let ws_state = &mut self.states[ws];
            ws_state.reinit(k.kernel, k.launch, &state, w);
            let mask = ws_state.valid_lanes as u64;
            if self.compaction.is_none() {
                self.stacks.launch(ws, now, 0, mask, &mut warp.view);
            }
            self.barriers.clear_warp(ws);
            self.deps.clear_warp(ws);
            self.scan.add_warp(ws);
            self.front.update(ws, &self.warps[ws]);
            warp_slots.push(ws);
        }
        if let Some(cp) = &mut self.compaction {
            let valid: Vec<u32> = warp_slots
                .iter()
                .map(|&ws| self.states[ws].valid_lanes)
                .collect();
            cp.launch_cta(slot, &warp_slots, &valid, now);
            for &ws in &warp_slots {
                self.warps[ws].view = cp.view(ws);
                self.front.update(ws, &self.warps[ws]);
            }
        }
        self.scan.wake();
        self.barriers.reset_cta(slot);
        self.residency.occupy(
            slot,
            CtaSlot {
                state,
                warp_slots,
                live_warps: f.warps,
                retired_warps: 0,
                footprint: f,
            },
        );
    }

    /// Every warp still resident and unfinished: (global warp id, block index, its first
    /// thread, next PC). Used to say where a kernel that never ends is running.
    pub fn resident_warps(&self) -> Vec<(u32, [u32; 3], [u32; 3], u32)> {
        let mut out = Vec::new();
        for (i, w) in self.warps.iter().enumerate() {
            if w.active && !w.finished {
                let st = &self.states[i];
                let cta = self
                    .residency
                    .get(w.cta_slot as usize)
                    .map(|c| c.state.ctaid)
                    .unwrap_or_default();
                let lane = st.valid_lanes.trailing_zeros().min(31) as usize;
                let pc = if self.compaction.is_some() {
                    w.view.pc[0]
                } else {
                    self.stacks.path_pc(i, 0).max(self.stacks.path_pc(i, 1))
                };
                out.push((st.global_warp_id, cta, st.tid[lane], pc));
            }
        }
        out
    }

    /// No CTA resident and nothing in flight.
    #[inline(always)]
    pub fn is_idle(&self) -> bool {
        self.residency.is_idle()
    }

    /// Advance one cycle of this SM's clock: `now` is the SM's own cycle counter (its
    /// pipeline's time), `mem_now` the base tick of the edge (the memory hierarchy's time;
    /// equal to `now` when the SM runs at the base clock, as at the presets).
    #[allow(clippy::too_many_arguments)]
    pub fn cycle<H: GpuHooks>(
        &mut self,
        now: u64,
        mem_now: u64,
        k: &KernelCtx,
        global: &mut GlobalMemory,
        mem: &mut MemoryHierarchy,
        num_sms: u32,
        hooks: &mut H,
    ) -> Result<(), Box<GuestFault>> {
        if self.is_idle() {
            return Ok(());
        }
        // (1) Releases of this cycle's writebacks and memory completions, then the
        // scoreboard's edge: these releases, and last cycle's reserves and copies.
        self.writebacks(now, hooks);
        while let Some(tok) = mem.pop_completed(self.id as usize) {
            self.memory_completed(tok, now, hooks);
        }
        self.deps.edge(now.saturating_sub(1));
        // (2) Stacks left without a live path pop.
        self.auto_pops(k)?;
        // (3) The LSU's head request to the memory hierarchy.
        if self.lsu.drive(now, mem_now, mem, self.id as usize, hooks) {
            self.scan.lsu_drained();
        }
        // (4) Fetch.
        for w in set_bits(self.front.fetch(now, &mut self.warps)) {
            self.scan.wake_warp(w);
        }
        // (5) Each scheduler issues at most one instruction.
        for s in 0..self.scan.count() {
            self.schedule(s, now, k, global, num_sms, hooks)?;
        }
        // (6) Compaction: the WCU's and the CAPT's clock edge.
        if let Some(cp) = self.compaction.as_mut().filter(|c| c.busy()) {
            let deps = &self.deps;
            cp.tick(now, |ws| deps.pending_clear(ws));
            self.compaction_changes(k)?;
        }
        if self.is_idle() {
            // The last warp left (its final pop may have staged a copy) and an SM with
            // nothing resident gets no more cycles: the edge that ends this cycle comes now
            // (nothing can be staged before the next cycle's edge: nothing is in flight).
            self.deps.edge(now);
        }
        Ok(())
    }

    /// Phase 1: releases deferred from earlier cycles take the free writeback ports first,
    /// then the writebacks due at `now` write the register file and release their
    /// registers.
    fn writebacks<H: GpuHooks>(&mut self, now: u64, hooks: &mut H) {
        while let Some(w) = self.deps.stage_deferred() {
            self.scan.wake_warp(w);
            self.maybe_retire(w);
        }
        let Some((slot, due)) = self.writebacks.take_due(now) else {
            return;
        };
        for wb in &due {
            let w = wb.warp as usize;
            self.rf_write(w, wb.reg, now, hooks);
            self.scan.wake_warp(w);
            if wb.tracked {
                self.release(w, wb.side, wb.reg);
            }
            self.warps[w].inflight -= 1;
            self.maybe_retire(w);
        }
        self.writebacks.give_back(slot, due);
    }

    /// Phase 1: the memory instruction of token `tok` completed: its registers are written
    /// back and released.
    fn memory_completed<H: GpuHooks>(&mut self, tok: u32, now: u64, hooks: &mut H) {
        let p = self.lsu.complete(tok);
        let (w, side, regs, n) = (p.warp as usize, p.side, p.regs, p.n_regs as usize);
        self.scan.wake_warp(w);
        for &r in &regs[..n] {
            self.rf_write(w, r, now, hooks);
            self.release(w, side, r);
        }
        self.warps[w].inflight -= 1;
        self.maybe_retire(w);
    }

    /// Stage the release of `reg` written by path (w, side), or count it deferred to a
    /// later cycle's writeback port.
    #[inline]
    fn release(&mut self, w: usize, side: u8, reg: u16) {
        if !self.deps.release(w, side, reg) {
            self.stats.deferred_releases += 1;
        }
    }

    /// Register `r` of warp slot `w` is written back at `now` (a predicate is not in the
    /// register file).
    #[inline]
    fn rf_write<H: GpuHooks>(&mut self, w: usize, r: RegId, now: u64, hooks: &mut H) {
        if (r as u32) < self.rf_pred_base {
            self.rf.write(w, r, now);
            hooks.on_rf_access(&RfAccess {
                sm: self.id,
                cycle: now,
                bank: self.rf.bank(w, r) as u32,
                warp: w as u32,
                reg: r,
                write: true,
            });
        }
    }

    /// Phase 2: a stack whose top entry has no live thread left pops, one entry per cycle
    /// (spec A12), until a path can issue again or the warp has exited.
    fn auto_pops(&mut self, k: &KernelCtx) -> Result<(), Box<GuestFault>> {
        let mut i = 0;
        while i < self.autopop.len() {
            let w = self.autopop[i];
            let warp = &mut self.warps[w];
            if !warp.view.is_empty() && !warp.view.any_path() {
                let effect = self.stacks.idle_tick(w, &mut warp.view);
                FrontEnd::flush(warp);
                self.stack_effect(w, effect);
                self.scan.wake_warp(w);
            }
            self.front.update(w, &self.warps[w]);
            let warp = &self.warps[w];
            if warp.view.is_empty() || warp.view.any_path() {
                self.autopop.swap_remove(i);
                if self.warps[w].view.is_empty() {
                    self.warp_exited(w, k)?;
                }
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    /// Act on what a stack update did beyond the stack itself: the scoreboard copy of the
    /// warp's pending bits into its shadow bits (`ev_sb_copy`, spec A5, A6).
    #[inline]
    fn stack_effect(&mut self, w: usize, effect: StackEffect) {
        if effect.sb_copy {
            self.deps.copy(w);
        }
    }

    /// Phase 5, scheduler `s`: its scan picks a path, which issues; or it finds none and
    /// sleeps until the earliest timed change (a functional unit or the LSU becoming free,
    /// one of its warps' fetches completing) unless an event wakes it first.
    fn schedule<H: GpuHooks>(
        &mut self,
        s: usize,
        now: u64,
        k: &KernelCtx,
        global: &mut GlobalMemory,
        num_sms: u32,
        hooks: &mut H,
    ) -> Result<(), Box<GuestFault>> {
        let inputs = ScanInputs {
            warps: &self.warps,
            barriers: &self.barriers,
            front: &self.front,
            deps: &self.deps,
            pipes: &self.pipes,
            lsu: &self.lsu,
        };
        match self.scan.select(s, now, k, &inputs, &mut self.stats.stalls) {
            Pick::Issue { warp, side } => {
                let long_latency = self.issue(warp, side, now, k, global, num_sms, hooks)?;
                self.scan.issued(s, warp, long_latency);
            }
            Pick::Stalled if self.scan.sleeps() => {
                let lsu = self.lsu.free_at();
                let until = self
                    .pipes
                    .next_free_after(now)
                    .min(if lsu > now { lsu } else { u64::MAX })
                    .min(self.front.next_done(s, now));
                self.scan.sleep(s, until);
            }
            Pick::Stalled | Pick::Skipped => {}
        }
        Ok(())
    }

    /// Carry what the compaction sub-block changed to the rest of the SM: refreshed views
    /// (an instruction buffer no longer at its slot's PC is flushed), woken schedulers,
    /// barriers of CTAs whose running warps changed, warp slots of finished CTAs; an
    /// internal inconsistency becomes a fault.
    fn compaction_changes(&mut self, k: &KernelCtx) -> Result<(), Box<GuestFault>> {
        let Some(cp) = self.compaction.as_mut() else {
            return Ok(());
        };
        if let Some(e) = cp.take_error() {
            let w = self.warps.iter().position(|w| w.active).unwrap_or(0);
            let pc = self.warps[w].view.pc[0];
            return Err(Box::new(self.fault(
                FaultKind::ReconvergenceStack,
                w,
                pc,
                k,
                e,
            )));
        }
        let changes = cp.take_changes();
        self.stats.compaction = cp.stats;
        let mut exited = 0u64;
        for ws in set_bits(changes.slots) {
            let view = cp.view(ws);
            let warp = &mut self.warps[ws];
            if !warp.active || warp.finished {
                continue;
            }
            warp.view = view;
            for side in 0..2 {
                let ib = &mut warp.ibuf[side];
                if ib.count > 0 && (!view.path_valid(side) || view.pc[side] != ib.pc) {
                    ib.count = 0;
                }
            }
            self.stats.max_stack_depth = self.stats.max_stack_depth.max(view.depth);
            self.front.update(ws, &self.warps[ws]);
            self.scan.wake_warp(ws);
            // A slot with nothing to run waits on its CTA as at a barrier: the two-level
            // scheduler's active set must not fill up with such slots (the warps the CTA
            // waits for would never be promoted).
            if !view.is_empty() && !view.any_path() {
                self.scan.barrier_wait(ws);
            } else if !self.barriers.is_waiting(ws) {
                self.scan.barrier_released(ws);
            }
            if view.is_empty() {
                exited |= 1 << ws;
            }
        }
        for ws in set_bits(exited) {
            self.warp_exited(ws, k)?;
        }
        for c in set_bits(changes.barrier_ctas) {
            if self.residency.get(c).is_some() && self.barriers.any_waiting(c) {
                self.check_barriers(c, k)?;
            }
        }
        Ok(())
    }

    /// Warp `w`'s last thread exited.
    fn warp_exited(&mut self, w: usize, k: &KernelCtx) -> Result<(), Box<GuestFault>> {
        let warp = &mut self.warps[w];
        if warp.finished {
            return Ok(());
        }
        warp.finished = true;
        let cta_slot = warp.cta_slot as usize;
        self.front.forget(w);
        self.scan.remove_warp(w);
        let cta = self.residency.cta_mut(cta_slot);
        cta.live_warps -= 1;
        if cta.live_warps > 0 && self.barriers.any_waiting(cta_slot) {
            // exited warps no longer count: a barrier may complete now
            self.check_barriers(cta_slot, k)?;
        }
        self.maybe_retire(w);
        Ok(())
    }

    /// Free the warp slot (and its CTA when it was the last) once nothing is in flight.
    #[inline]
    fn maybe_retire(&mut self, w: usize) {
        let warp = &mut self.warps[w];
        if warp.finished && warp.inflight == 0 && self.deps.deferred_of(w) == 0 && warp.active {
            warp.active = false;
            self.residency.retire_warp(warp.cta_slot as usize);
        }
    }

    /// Warp `w` of CTA slot `cta_slot` arrives at a barrier with the `bar.sync` at `pc`.
    fn arrive_barrier(
        &mut self,
        w: usize,
        cta_slot: usize,
        (id, count): (u32, Option<u32>),
        k: &KernelCtx,
        pc: u32,
    ) -> Result<(), Box<GuestFault>> {
        self.barriers.arrive(cta_slot, w, id, count, pc);
        self.scan.barrier_wait(w);
        self.check_barriers(cta_slot, k)
    }

    /// Release every barrier of the CTA whose expected warps have all arrived; report a
    /// block whose live warps all wait at barriers that can never complete.
    fn check_barriers(&mut self, cta_slot: usize, k: &KernelCtx) -> Result<(), Box<GuestFault>> {
        let cta = self.residency.cta(cta_slot);
        // Under compaction the barrier waits for the warps running the CTA's block.
        let live = match &self.compaction {
            Some(cp) => cp.members(cta_slot),
            None => cta.live_warps,
        };
        match self.barriers.release(cta_slot, live, &cta.warp_slots) {
            Ok(released) => {
                for w in set_bits(released) {
                    self.scan.barrier_released(w);
                }
                Ok(())
            }
            Err(d) => Err(Box::new(self.fault(
                FaultKind::BarrierDeadlock,
                d.warp,
                d.pc,
                k,
                d.detail,
            ))),
        }
    }

    /// A guest fault of warp slot `w` at `pc`, naming its first valid thread.
    fn fault(
        &self,
        kind: FaultKind,
        w: usize,
        pc: u32,
        k: &KernelCtx,
        detail: String,
    ) -> GuestFault {
        let warp = &self.warps[w];
        let cta = &self.residency.cta(warp.cta_slot as usize).state;
        let state = &self.states[w];
        let lane = state.valid_lanes.trailing_zeros().min(31) as usize;
        let line = k
            .kernel
            .insts
            .get(pc as usize)
            .map(|i| i.loc.line)
            .unwrap_or(0);
        GuestFault {
            kind,
            kernel: k.kernel.name.clone(),
            file: k.module.file.clone(),
            pc,
            line,
            warp: state.global_warp_id,
            cta: cta.ctaid,
            thread: state.tid[lane],
            detail,
        }
    }
}
