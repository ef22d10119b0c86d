//! One streaming multiprocessor, cycle by cycle.
//!
//! Per cycle: (1) writebacks due this cycle and memory completions stage their scoreboard
//! releases, and the scoreboard's clock edge applies them (together with the reserves and
//! copies staged in the previous cycle); (2) stacks whose top entry lost all its threads pop
//! (one entry per cycle, spec A12); (3) the load/store unit hands its head request to the
//! memory hierarchy; (4) one warp's instruction buffer is refilled (fetch); (5) each warp
//! scheduler picks one ready warp by its policy and issues its next instruction.
//!
//! The scoreboard is the `dpe_scoreboard` unit model itself, one instance per SM: `DUAL=1`
//! under `sm.reconvergence = "dpe"` (L/R pending and shadow bits, spec §4.9), `DUAL=0`
//! under "spe" (A19). Its clock edge falls inside the GPU cycle, after the releases: a
//! writeback at cycle t is visible to issue at t, and a reserve (or a stack's copy) staged at
//! t is visible from t+1. Hazard queries at issue read the state after this cycle's edge.
//!
//! Instructions execute functionally at issue (as in GPGPU-Sim): the branch outcome updates
//! the warp's SIMT stack in the same cycle, so the next instruction of the warp is known at
//! t+1, and a control transfer flushes the instruction buffer.

use super::decode::DecodedInst;
use super::reconv::{StackView, WarpStacks};
use super::rf::RfBanks;
use super::scan::{ScanState, Stall};
use super::scheduler::Scheduler;
use crate::config::GpuConfig;
use crate::config::PathPolicy;
use crate::error::{FaultKind, GuestFault};
use crate::exec::barrier::BarrierTable;
use crate::exec::{
    self, CtaState, ExecEnv, Flow, GlobalMemory, LaunchInfo, MemAccess, MemKind, StepResult,
    WarpState, WARP_SIZE,
};
use crate::memory::MemoryHierarchy;
use crate::ptx::ir::{InstClass, Kernel, Module, StateSpace};
use crate::stats::KernelStats;
use crate::units::contract::UnitDesc;
use crate::units::declare::{PortGroup, UnitParams};
use crate::units::dpe_scoreboard::{
    DpeScoreboard, ScoreboardParams, ScoreboardPortIn, ScoreboardPorts, MAX_PORTS, SCOREBOARD_DESC,
};
use crate::units::host::{UnitActivity, UnitHost};
use crate::units::trace::TraceRecorder;
use std::collections::VecDeque;

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

/// Reserve ports of the scoreboard: each scheduler issues at most one instruction per cycle
/// and an instruction writes at most 4 register slots, so the 2 schedulers of the modelled
/// GPUs stage at most 8 reserves per cycle ([`scoreboard_params`] checks each kernel).
pub const SB_RESERVE_PORTS: u32 = 8;
/// Writeback (release) ports of the scoreboard. A cycle with more releases than this keeps
/// the rest in a queue for the next cycle's free ports.
pub const SB_WRITEBACK_PORTS: u32 = 8;

/// The scoreboard parameters for a kernel with `num_regs` register slots per thread on
/// `cfg`: `NUM_REGS` rounded up to a multiple of 8 (at least 8), `NUM_WARPS` =
/// `sm.max_warps` (at least 2), `DUAL` under DPE. `Q` is one query port per scheduler (the
/// GPU model queries through the typed API; traces leave the query ports at 0).
pub fn scoreboard_params_for(cfg: &GpuConfig, num_regs: u32) -> ScoreboardParams {
    ScoreboardParams {
        num_warps: cfg.sm.max_warps.max(2),
        num_regs: num_regs.div_ceil(8).max(1) * 8,
        nrsv: SB_RESERVE_PORTS,
        nwb: SB_WRITEBACK_PORTS,
        q: cfg.sm.schedulers.clamp(1, MAX_PORTS as u32),
        dual: cfg.sm.reconvergence == crate::config::Reconvergence::Dpe,
    }
}

/// The scoreboard parameters for `kernel`, or why its launch cannot be simulated: more
/// register slots than the unit holds (256), or instructions that write more registers than
/// the schedulers' reserve ports can stage in one cycle.
pub fn scoreboard_params(
    cfg: &GpuConfig,
    kernel: &Kernel,
    decoded: &[DecodedInst],
) -> Result<ScoreboardParams, String> {
    let p = scoreboard_params_for(cfg, kernel.num_regs as u32);
    if p.num_regs > 256 {
        return Err(format!(
            "kernel `{}` uses {} register slots per thread; the timing model's scoreboard \
             (dpe_scoreboard) holds at most 256",
            kernel.name, kernel.num_regs
        ));
    }
    let writes = decoded.iter().map(|d| d.n_writes as u32).max().unwrap_or(0);
    if writes * cfg.sm.schedulers > p.nrsv {
        return Err(format!(
            "kernel `{}` has instructions that write {writes} registers and sm.schedulers = {} \
             can issue one each per cycle: more than the scoreboard's {} reserve ports",
            kernel.name, cfg.sm.schedulers, p.nrsv
        ));
    }
    Ok(p)
}

/// Per-SM resource needs of one CTA of the kernel.
#[derive(Debug, Clone, Copy)]
pub struct CtaFootprint {
    pub warps: u32,
    pub threads: u32,
    pub registers: u32,
    pub shared: u32,
}

impl CtaFootprint {
    pub fn of(cfg: &GpuConfig, kernel: &Kernel, launch: &LaunchInfo) -> CtaFootprint {
        let unit = cfg.sm.register_alloc_unit.max(1);
        let regs_per_thread = kernel.regs_per_thread.div_ceil(unit) * unit;
        let warps = launch.warps_per_cta;
        let su = cfg.sm.shared_alloc_unit.max(1) as u64;
        CtaFootprint {
            warps,
            threads: launch.threads_per_cta(),
            registers: regs_per_thread * WARP_SIZE as u32 * warps,
            shared: (launch.shared_bytes.div_ceil(su) * su) as u32,
        }
    }

    /// How many CTAs of this footprint fit on one empty SM (0: the kernel cannot run).
    pub fn ctas_per_sm(&self, cfg: &GpuConfig) -> u32 {
        let s = &cfg.sm;
        let mut n = s.max_ctas;
        n = n.min(s.max_warps / self.warps.max(1));
        n = n.min(s.max_threads / self.threads.max(1));
        if let Some(by_regs) = s.registers.checked_div(self.registers) {
            n = n.min(by_regs);
        }
        if let Some(by_shared) = s.shared_bytes.checked_div(self.shared) {
            n = n.min(by_shared);
        }
        n
    }
}

/// The timing state of one warp slot. The SM's state is cold in the host caches whenever
/// its turn comes (the other SMs ran in between), so what the blocker check reads comes
/// first and fits one 64-byte line: `barrier`, `view` and the instruction buffers (`repr(C)`
/// keeps that order). The scan reads [`ScanState`], and the slot only under DPE (the
/// selected side and its paths).
#[repr(C, align(64))]
struct WarpSlot {
    /// Barrier id the warp waits at, and the PC of its `bar.sync` (for fault reports).
    barrier: Option<(u8, u32)>,
    /// The outputs of the slot's stack (`Sm::stacks`), refreshed after every stack clock
    /// edge (see [`StackView`]).
    view: StackView,
    /// One instruction buffer per path (spec A16: per warp and side; SPE uses side 0).
    ibuf: [IBuffer; 2],
    active: bool,
    finished: bool,
    /// DPE path selection: the side that issued last (ALT) or the selected side
    /// (constrained).
    side: u8,
    cta_slot: u16,
    /// Writebacks and memory requests in flight (the slot is not reused until 0).
    inflight: u32,
    /// Releases waiting in the SM's queue for a free scoreboard writeback port (the slot
    /// is not reused until 0 either).
    deferred: u32,
}

/// Instructions fetched for one path: `count` sequential instructions starting at `pc`,
/// usable from the path's `ScanState::fetch_ready_at`.
#[derive(Clone, Copy, Default)]
struct IBuffer {
    count: u32,
    pc: u32,
}

struct CtaSlot {
    state: CtaState,
    warp_slots: Vec<usize>,
    live_warps: u32,
    /// Warps whose slot has been freed (a freed slot may already hold another CTA's warp).
    retired_warps: u32,
    barriers: BarrierTable,
    footprint: CtaFootprint,
}

/// A register written back in a future cycle.
#[derive(Clone, Copy)]
struct Writeback {
    warp: u16,
    reg: u16,
    /// The issuing path (the L/R bit that travels down the pipeline, [L556-558]).
    side: u8,
    /// Whether the write was reserved in the scoreboard (see `Sm::write_result`).
    tracked: bool,
}

/// A global/local memory instruction waiting for the memory hierarchy.
struct PendingMem {
    warp: u16,
    side: u8,
    regs: [u16; 4],
    n_regs: u8,
}

/// A scoreboard release waiting for a writeback port.
#[derive(Clone, Copy)]
struct Release {
    warp: u16,
    reg: u16,
    side: u8,
}

/// The per-SM timing model.
pub struct Sm {
    pub id: u32,
    /// Timing state of each warp slot, read by the blocker check and at issue (kept small).
    warps: Vec<WarpSlot>,
    /// Per path: the blockers the schedulers' scan cached, and fetch completion times.
    scan: ScanState,
    /// Each warp slot's reconvergence stack (the unit model, instance = warp slot), touched
    /// only when it is clocked; the schedulers read its outputs from `WarpSlot::view`.
    stacks: WarpStacks,
    /// Architectural state (registers, local memory) of each warp slot, touched at issue.
    states: Vec<WarpState>,
    ctas: Vec<Option<CtaSlot>>,
    schedulers: Vec<Scheduler>,
    /// The scoreboard (the `dpe_scoreboard` unit model, one instance).
    sb: UnitHost<DpeScoreboard>,
    /// Warps have two schedulable paths (`simt_stack_dpe`) rather than one.
    dual_paths: bool,
    /// Releases that found every writeback port of their cycle taken, oldest first.
    deferred: VecDeque<Release>,
    /// GPU-side bookkeeping for the stall breakdown only: per path (`2 * warp + side`,
    /// `sb_words` words each), the registers whose pending write is a memory load (set when
    /// the reserve is staged, cleared when the release is).
    pending_mem: Vec<u64>,
    sb_words: usize,
    /// Cycle at which each functional unit accepts its next instruction.
    sp_free: Vec<u64>,
    sfu_free: Vec<u64>,
    dp_free: Vec<u64>,
    lsu_free: u64,
    lsu_ii: u64,
    lsu_queue: VecDeque<(u32, MemAccess)>,
    wheel: Vec<Vec<Writeback>>,
    wheel_mask: u64,
    /// One bit per wheel slot: the slot holds writebacks. Most cycles have none due, and
    /// this small bitset is in cache when the slot's own list header is not.
    wheel_busy: Vec<u64>,
    tokens: Vec<PendingMem>,
    /// The result of the instruction being issued, reused from issue to issue.
    step: StepResult,
    free_tokens: Vec<u32>,
    /// Warps whose stack needs an idle-cycle auto-pop.
    autopop: Vec<usize>,
    /// Paths with an empty instruction buffer that can be scheduled (bit `2 * warp + side`).
    need_fetch: u128,
    fetch_rr: usize,
    /// Per scheduler: the cycle until which its last failed scan stays valid (nothing that
    /// could let a warp issue changes before then unless an event wakes it), and the stall
    /// reason that scan found. Skipping the scan changes no result, only the cost.
    sleep_until: Vec<u64>,
    sleep_reason: Vec<Stall>,
    /// Per scheduler: the completion cycles of its warps' instruction fetches in flight,
    /// earliest first (for the sleep computation).
    fetches_done_at: Vec<VecDeque<u64>>,
    // resources in use
    used_warps: u32,
    used_threads: u32,
    used_regs: u32,
    used_shared: u32,
    used_ctas: u32,
    pub stats: KernelStats,
    /// Register-file bank counters (and conflict state) of this launch (`timing::rf`).
    pub rf: RfBanks,
    /// The port layout of the scoreboard's trace, when recording (its `NUM_REGS` is the
    /// largest of every launch recorded, see [`Sm::begin_kernel`]).
    sb_layout: ScoreboardPorts,
}

const LSU_QUEUE: usize = 2;

impl Sm {
    pub fn new(id: u32, cfg: &GpuConfig) -> Sm {
        let max_latency = [
            cfg.pipeline.alu_latency,
            cfg.pipeline.fma_latency,
            cfg.pipeline.dp_latency,
            cfg.pipeline.sfu_latency,
            cfg.pipeline.div_latency,
            cfg.pipeline.ctrl_latency,
            cfg.sm.shared_latency + 2 * WARP_SIZE as u32,
            cfg.l1.hit_latency,
        ]
        .into_iter()
        .max()
        .unwrap_or(1)
            // register-bank conflicts delay an instruction by up to 7 cycles (8 sources)
            + if cfg.sm.rf_bank_conflicts { 8 } else { 0 };
        let wheel_len = (max_latency as u64 + 2).next_power_of_two();
        let nsched = cfg.sm.schedulers as usize;
        Sm {
            id,
            warps: Vec::new(),
            scan: ScanState::new(),
            // The configuration was validated, which checks every unit's parameters.
            stacks: WarpStacks::new(cfg).expect("validated configuration"),
            states: Vec::new(),
            ctas: (0..cfg.sm.max_ctas).map(|_| None).collect(),
            schedulers: (0..nsched)
                .map(|_| Scheduler::new(cfg.sm.scheduler, cfg.sm.two_level_active))
                .collect(),
            sb: UnitHost::new(scoreboard_params_for(cfg, 8), 1).expect("validated configuration"),
            dual_paths: cfg.sm.reconvergence == crate::config::Reconvergence::Dpe,
            deferred: VecDeque::new(),
            pending_mem: Vec::new(),
            sb_words: 0,
            sp_free: vec![0; cfg.pipeline.sp_units as usize],
            sfu_free: vec![0; cfg.pipeline.sfu_units as usize],
            dp_free: vec![0; cfg.pipeline.dp_units as usize],
            lsu_free: 0,
            lsu_ii: cfg.pipeline.lsu_ii as u64,
            lsu_queue: VecDeque::with_capacity(LSU_QUEUE),
            wheel: (0..wheel_len).map(|_| Vec::with_capacity(16)).collect(),
            wheel_mask: wheel_len - 1,
            wheel_busy: vec![0; wheel_len.div_ceil(64) as usize],
            tokens: Vec::new(),
            step: StepResult {
                flow: Flow::Seq,
                executed: 0,
                mem: None,
                barrier: None,
            },
            free_tokens: Vec::new(),
            autopop: Vec::new(),
            need_fetch: 0,
            fetch_rr: 0,
            sleep_until: vec![0; nsched],
            sleep_reason: vec![Stall::Fetch; nsched],
            fetches_done_at: vec![VecDeque::new(); nsched],
            used_warps: 0,
            used_threads: 0,
            used_regs: 0,
            used_shared: 0,
            used_ctas: 0,
            stats: KernelStats::default(),
            rf: RfBanks::new(cfg.sm.rf_banks, cfg.sm.rf_bank_conflicts),
            sb_layout: ScoreboardPorts::of(&scoreboard_params_for(cfg, 8)),
        }
    }

    /// Start recording the port traffic of every instance of `unit` in this SM (a unit the
    /// configuration instantiates, see [`crate::units::contract::UnitDesc::gpu`]).
    pub fn record_unit(&mut self, unit: &'static UnitDesc, cfg: &GpuConfig) -> Result<(), String> {
        if std::ptr::eq(unit, self.stacks.desc()) {
            self.stacks.record(self.id)
        } else if std::ptr::eq(unit, &SCOREBOARD_DESC) {
            self.record_scoreboard(cfg)
        } else {
            Err(format!("unit {} has no instance in the SM", unit.name))
        }
    }

    /// Start recording the scoreboard's port traffic (instance `sm<id>`). The trace's
    /// `NUM_REGS` starts at the minimum and widens to the largest any launch uses from then
    /// on (see [`Sm::begin_kernel`]).
    fn record_scoreboard(&mut self, cfg: &GpuConfig) -> Result<(), String> {
        let p = scoreboard_params_for(cfg, 8);
        let mut rec = TraceRecorder::new(&SCOREBOARD_DESC, p.to_params()?);
        rec.add_instance(format!("sm{}", self.id));
        self.sb_layout = ScoreboardPorts::of(&p);
        self.sb.record(rec);
        Ok(())
    }

    /// The recorded traffic of every unit being recorded: stacks, then the scoreboard
    /// (recording stops).
    pub fn take_traces(&mut self) -> Vec<TraceRecorder> {
        let sb = self.sb.take_trace();
        self.stacks.take_trace().into_iter().chain(sb).collect()
    }

    /// The activity counters of every unit instance of this SM, one entry per unit kind.
    pub fn unit_activity(&self) -> Vec<UnitActivity> {
        vec![self.stacks.activity(), self.sb.activity()]
    }

    /// Act on what a stack update did beyond the stack itself: the scoreboard copy of the
    /// warp's pending bits into its shadow bits (`ev_sb_copy`, spec A5, A6).
    #[inline]
    fn stack_effect(&mut self, w: usize, effect: super::reconv::StackEffect) {
        if effect.sb_copy {
            self.sb.instance_mut(0).copy(w as u32);
        }
    }

    /// The scoreboard's clock edge that ends unit cycle `cycle`: applies everything staged
    /// since the previous edge (recorded first when tracing; an edge with nothing staged is
    /// free).
    ///
    /// The edge inside GPU cycle t ends unit cycle t-1: its inputs are the reserves and
    /// copies staged at t-1 (after that cycle's edge) and the releases of writebacks due at t
    /// (the scoreboard sees a writeback one cycle before the register is read again). So a
    /// trace shows a copy at the same cycle as the stack event that raised it.
    #[inline]
    fn sb_edge(&mut self, cycle: u64) {
        let active = !self.sb.instance(0).staged().is_idle();
        let layout = &self.sb_layout;
        self.sb.edge_with(
            0,
            cycle,
            active,
            |sb| sb.staged_port_values(layout),
            |sb| sb.tick(),
        );
    }

    /// Prepare for a new kernel launch: size per-warp structures for its register count.
    pub fn begin_kernel(&mut self, k: &KernelCtx) {
        let max_warps = k.cfg.sm.max_warps as usize;
        // Empty after a launch that ran to its end; a launch that faulted may leave some.
        self.deferred.clear();
        self.sb
            .reconfigure(k.sb)
            .expect("scoreboard parameters checked at launch");
        self.dual_paths = k.cfg.sm.reconvergence == crate::config::Reconvergence::Dpe;
        self.sb_words = k.sb.num_regs.div_ceil(64) as usize;
        self.pending_mem = vec![0; 2 * max_warps * self.sb_words];
        if let Some(rec) = self.sb.trace_mut() {
            let layout = &mut self.sb_layout;
            // One trace holds every launch at one parameter set: when this kernel has more
            // register slots than any recorded before, the events so far are re-encoded with
            // the wider register fields (a launch with fewer registers behaves identically
            // in an instance with more: it never names the extra ones).
            let have = ScoreboardParams::from_params(rec.params());
            if k.sb.num_regs > have.num_regs {
                let params = k.sb.to_params().expect("checked at launch");
                let (old, new) = (*layout, ScoreboardPorts::of(&k.sb));
                rec.reencode(params, |from, to| {
                    let mut raw = ScoreboardPortIn::default();
                    new.write(&old.read(&ScoreboardPortIn::read_ports(from)), &mut raw);
                    raw.write_ports(to)
                })
                .expect("re-encoding the SM's own trace");
                *layout = new;
            }
        }
        self.warps.clear();
        self.scan.reset();
        // Warp states keep their storage from launch to launch (`WarpState::reinit`).
        self.states.resize_with(max_warps, WarpState::empty);
        for _ in 0..max_warps {
            self.warps.push(WarpSlot {
                active: false,
                cta_slot: 0,
                view: StackView::default(),
                ibuf: [IBuffer::default(); 2],
                side: 0,
                barrier: None,
                inflight: 0,
                deferred: 0,
                finished: false,
            });
        }
        for s in &mut self.schedulers {
            s.clear();
        }
        for f in &mut self.fetches_done_at {
            f.clear();
        }
        self.need_fetch = 0;
        self.wake();
        self.stats = KernelStats::default();
        self.rf.begin_kernel(k.kernel.regs_per_thread);
    }

    /// Whether one more CTA of this footprint fits now.
    pub fn can_accept(&self, f: &CtaFootprint, cfg: &GpuConfig) -> bool {
        let s = &cfg.sm;
        self.used_ctas < s.max_ctas
            && self.used_warps + f.warps <= s.max_warps
            && self.used_threads + f.threads <= s.max_threads
            && self.used_regs + f.registers <= s.registers
            && self.used_shared + f.shared <= s.shared_bytes
    }

    /// Place CTA `linear_id` on this SM.
    pub fn launch_cta(&mut self, k: &KernelCtx, linear_id: u32, f: CtaFootprint, now: u64) {
        let slot = self
            .ctas
            .iter()
            .position(|c| c.is_none())
            .expect("can_accept checked a free CTA slot");
        let state = CtaState::new(k.launch, linear_id);
        let mut warp_slots = Vec::with_capacity(f.warps as usize);
        for w in 0..f.warps {
            let ws = self
                .warps
                .iter()
                .position(|x| !x.active)
                .expect("can_accept checked free warp slots");
            let warp = &mut self.warps[ws];
            warp.active = true;
            warp.finished = false;
            warp.cta_slot = slot as u16;
            let ws_state = &mut self.states[ws];
            ws_state.reinit(k.kernel, k.launch, &state, w);
            let mask = ws_state.valid_lanes as u64;
            self.stacks.launch(ws, now, 0, mask, &mut warp.view);
            warp.ibuf = [IBuffer::default(); 2];
            warp.side = 0;
            warp.barrier = None;
            warp.inflight = 0;
            warp.deferred = 0;
            // A free slot has nothing in flight, so its scoreboard rows are clear.
            debug_assert!((0..2).all(|s| self
                .sb
                .instance(0)
                .pending_row(ws as u32, s)
                .iter()
                .all(|&b| b == 0)));
            let words = self.sb_words;
            self.pending_mem[2 * ws * words..2 * (ws + 1) * words].fill(0);
            let sched = owner_scheduler(ws, self.schedulers.len());
            self.schedulers[sched].add(ws);
            warp_slots.push(ws);
            self.scan.clear_warp(ws);
            self.update_fetch_bit(ws);
        }
        self.wake();
        self.ctas[slot] = Some(CtaSlot {
            state,
            warp_slots,
            live_warps: f.warps,
            retired_warps: 0,
            barriers: BarrierTable::default(),
            footprint: f,
        });
        self.used_ctas += 1;
        self.used_warps += f.warps;
        self.used_threads += f.threads;
        self.used_regs += f.registers;
        self.used_shared += f.shared;
    }

    /// Every warp still resident and unfinished: (global warp id, block index, its first
    /// thread, next PC). Used to say where a kernel that never ends is running.
    pub fn resident_warps(&self) -> Vec<(u32, [u32; 3], [u32; 3], u32)> {
        let mut out = Vec::new();
        for (i, w) in self.warps.iter().enumerate() {
            if w.active && !w.finished {
                let st = &self.states[i];
                let cta = self.ctas[w.cta_slot as usize]
                    .as_ref()
                    .map(|c| c.state.ctaid)
                    .unwrap_or_default();
                let lane = st.valid_lanes.trailing_zeros().min(31) as usize;
                out.push((
                    st.global_warp_id,
                    cta,
                    st.tid[lane],
                    self.stacks.path_pc(i, 0).max(self.stacks.path_pc(i, 1)),
                ));
            }
        }
        out
    }

    /// No CTA resident and nothing in flight.
    pub fn is_idle(&self) -> bool {
        self.used_ctas == 0
    }

    /// Advance one cycle of this SM's clock: `now` is the SM's own cycle counter (its
    /// pipeline's time), `mem_now` the base tick of the edge (the memory hierarchy's time;
    /// equal to `now` when the SM runs at the base clock, as at the presets).
    pub fn cycle(
        &mut self,
        now: u64,
        mem_now: u64,
        k: &KernelCtx,
        global: &mut GlobalMemory,
        mem: &mut MemoryHierarchy,
        num_sms: u32,
    ) -> Result<(), Box<GuestFault>> {
        if self.used_ctas == 0 {
            return Ok(());
        }
        self.writebacks(now);
        while let Some(tok) = mem.pop_completed(self.id as usize) {
            self.complete_token(tok, now);
        }
        // The scoreboard's edge: this cycle's releases, and last cycle's reserves and copies.
        self.sb_edge(now.saturating_sub(1));
        self.auto_pops(k)?;
        self.drive_lsu(now, mem_now, mem);
        self.fetch(now, k);
        for s in 0..self.schedulers.len() {
            self.schedule(s, now, k, global, num_sms)?;
        }
        if self.used_ctas == 0 {
            // The last warp left (its final pop may have staged a copy) and an SM with
            // nothing resident gets no more cycles: the edge that ends this cycle comes now
            // (nothing can be staged before the next cycle's edge: nothing is in flight).
            self.sb_edge(now);
        }
        Ok(())
    }

    fn writebacks(&mut self, now: u64) {
        // Releases left over from earlier cycles take the free writeback ports first.
        while let Some(&r) = self.deferred.front() {
            if !self.sb.instance(0).release_port_free() {
                break;
            }
            self.deferred.pop_front();
            let w = r.warp as usize;
            self.release(w, r.side, r.reg);
            self.wake_warp(w);
            self.warps[w].deferred -= 1;
            self.maybe_retire(w);
        }
        let idx = (now & self.wheel_mask) as usize;
        if self.wheel_busy[idx / 64] >> (idx % 64) & 1 == 0 {
            return;
        }
        self.wheel_busy[idx / 64] &= !(1 << (idx % 64));
        let mut list = std::mem::take(&mut self.wheel[idx]);
        for wb in list.drain(..) {
            let w = wb.warp as usize;
            self.rf.write(w, wb.reg, now);
            self.wake_warp(w);
            if wb.tracked {
                self.release(w, wb.side, wb.reg);
            }
            self.warps[w].inflight -= 1;
            self.maybe_retire(w);
        }
        self.wheel[idx] = list;
    }

    /// Stage the release of `reg` written by path (w, side) on a free writeback port, or
    /// queue it for the next cycle's ports. The caller wakes the warp when the release is
    /// staged (the edge of this cycle applies it before the schedulers look).
    #[inline]
    fn release(&mut self, w: usize, side: u8, reg: u16) {
        if !self.sb.instance_mut(0).release(w as u32, side, reg as u32) {
            self.defer_release(w, side, reg);
            return;
        }
        let i = self.mem_word(w, side as usize, reg);
        self.pending_mem[i] &= !(1u64 << (reg % 64));
    }

    #[cold]
    #[inline(never)]
    fn defer_release(&mut self, w: usize, side: u8, reg: u16) {
        self.deferred.push_back(Release {
            warp: w as u16,
            reg,
            side,
        });
        self.warps[w].deferred += 1;
        self.stats.deferred_releases += 1;
    }

    /// The `pending_mem` word of register `reg` of path (w, side) (side 0 under SPE, as in
    /// the scoreboard).
    #[inline]
    fn mem_word(&self, w: usize, side: usize, reg: u16) -> usize {
        let side = if self.sb.instance(0).params().dual {
            side & 1
        } else {
            0
        };
        (2 * w + side) * self.sb_words + reg as usize / 64
    }

    fn complete_token(&mut self, tok: u32, now: u64) {
        let p = &self.tokens[tok as usize];
        let (w, side, regs, n) = (p.warp as usize, p.side, p.regs, p.n_regs as usize);
        self.wake_warp(w);
        for &r in &regs[..n] {
            self.rf.write(w, r, now);
            self.release(w, side, r);
        }
        self.free_tokens.push(tok);
        self.warps[w].inflight -= 1;
        self.maybe_retire(w);
    }

    fn auto_pops(&mut self, k: &KernelCtx) -> Result<(), Box<GuestFault>> {
        let mut i = 0;
        while i < self.autopop.len() {
            let w = self.autopop[i];
            let warp = &mut self.warps[w];
            if !warp.view.is_empty() && !warp.view.any_path() {
                let effect = self.stacks.idle_tick(w, &mut warp.view);
                warp.ibuf = [IBuffer::default(); 2];
                self.stack_effect(w, effect);
                self.wake_warp(w);
            }
            self.update_fetch_bit(w);
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

    fn drive_lsu(&mut self, now: u64, mem_now: u64, mem: &mut MemoryHierarchy) {
        if self.lsu_free > now {
            return;
        }
        if let Some((tok, access)) = self.lsu_queue.front() {
            if let Ok(info) = mem.issue(mem_now, self.id as usize, *tok, access) {
                // One L1 access per bank pass (every transaction with `l1.banks = 1`).
                self.lsu_free = now + info.l1_passes.max(1) as u64 * self.lsu_ii;
                self.lsu_queue.pop_front();
                // The queue has room: paths that found it full are looked at again.
                self.scan.unpark(Stall::Lsu);
                self.wake();
            }
        }
    }

    fn fetch(&mut self, now: u64, k: &KernelCtx) {
        let n = self.warps.len() as u32;
        for _ in 0..k.cfg.sm.fetch_width {
            if self.need_fetch == 0 {
                return;
            }
            // Round robin over paths: the first one needing a fetch at or after `fetch_rr`.
            let rotated = self.need_fetch.rotate_right(self.fetch_rr as u32);
            let bit = (self.fetch_rr + rotated.trailing_zeros() as usize) % 128;
            let (w, side) = (bit / 2, bit % 2);
            let warp = &mut self.warps[w];
            warp.ibuf[side] = IBuffer {
                count: k.cfg.sm.ibuffer_entries,
                pc: warp.view.pc[side],
            };
            let done_at = now + k.cfg.sm.fetch_latency as u64;
            self.scan.set_fetch_ready_at(bit, done_at);
            // Completion cycles of one scheduler's fetches arrive in order (a fixed latency
            // from a growing cycle): a queue, pruned as it grows, holds its earliest pending.
            let fetches = &mut self.fetches_done_at[owner_scheduler(w, self.schedulers.len())];
            drop_completed(fetches, now);
            fetches.push_back(done_at);
            self.need_fetch &= !(1u128 << bit);
            // (bit + 1) modulo the 2n paths: bit < 2n, so one compare, no division.
            self.fetch_rr = if bit + 1 == 2 * n as usize {
                0
            } else {
                bit + 1
            };
            self.wake_warp(w);
        }
    }

    /// Recompute whether warp `w` waits for an instruction fetch.
    #[inline]
    fn update_fetch_bit(&mut self, w: usize) {
        let warp = &self.warps[w];
        for side in 0..2 {
            let bit = 1u128 << (2 * w + side);
            if warp.active
                && !warp.finished
                && warp.ibuf[side].count == 0
                && warp.view.path_valid(side)
            {
                self.need_fetch |= bit;
            } else {
                self.need_fetch &= !bit;
            }
        }
    }

    /// Something shared (a unit, the LSU queue) changed: every scheduler scans again.
    #[inline]
    fn wake(&mut self) {
        for s in self.sleep_until.iter_mut() {
            *s = 0;
        }
    }

    /// Warp `w`'s own state changed: its cached blocker is stale, its scheduler rescans.
    #[inline]
    fn wake_warp(&mut self, w: usize) {
        self.scan.clear_warp(w);
        let s = owner_scheduler(w, self.schedulers.len());
        self.sleep_until[s] = 0;
    }

    /// The earliest future cycle at which a timed condition (a functional unit or the LSU
    /// becoming free, an instruction fetch of one of its warps completing) changes for
    /// scheduler `s`. (A fetch whose buffer was flushed since may still be counted: waking
    /// early only costs a scan that finds the same blockers.)
    fn next_timed_change(&mut self, s: usize, now: u64) -> u64 {
        let mut t = u64::MAX;
        let mut consider = |x: u64| {
            if x > now && x < t {
                t = x;
            }
        };
        for &u in self
            .sp_free
            .iter()
            .chain(&self.sfu_free)
            .chain(&self.dp_free)
        {
            consider(u);
        }
        consider(self.lsu_free);
        let fetches = &mut self.fetches_done_at[s];
        drop_completed(fetches, now);
        consider(fetches.front().copied().unwrap_or(u64::MAX));
        t
    }

    /// Why warp `w` cannot issue now, and until which cycle that holds unless an event on
    /// the warp intervenes (`now + 1` for blockers that are not cached); `None` if it can.
    #[inline]
    fn blocker(&self, w: usize, side: usize, now: u64, k: &KernelCtx) -> Option<(Stall, u64)> {
        let warp = &self.warps[w];
        if warp.barrier.is_some() {
            return Some((Stall::Barrier, u64::MAX));
        }
        let ibuf = &warp.ibuf[side];
        if !warp.view.path_valid(side) || ibuf.count == 0 {
            return Some((Stall::Fetch, u64::MAX));
        }
        let ready_at = self.scan.fetch_ready_at(2 * w + side);
        if ready_at > now {
            return Some((Stall::Fetch, ready_at));
        }
        let pc = warp.view.pc[side] as usize;
        let d = &k.decoded[pc];
        // The scoreboard's hazard output for this path: its own pending bits or the other
        // side's shadow bits (§4.9). Cached until an event on the warp: only a release can
        // clear a hazard, and every release wakes the warp.
        if self
            .sb
            .instance(0)
            .hazard_mask(w as u32, side as u8, &d.uses)
        {
            let why = if self.memory_hazard(w, side, d) {
                Stall::MemData
            } else {
                Stall::AluData
            };
            return Some((why, u64::MAX));
        }
        let unit_free = match d.class {
            InstClass::Alu | InstClass::Fma | InstClass::Ctrl => min_free(&self.sp_free) <= now,
            InstClass::Sfu | InstClass::Div => min_free(&self.sfu_free) <= now,
            InstClass::Dp => min_free(&self.dp_free) <= now,
            InstClass::Mem => {
                // A full queue holds until it drains (`drive_lsu` unparks the paths it
                // blocked); a busy LSU with room in its queue holds until `lsu_free`,
                // which only ever moves later.
                if self.lsu_queue.len() >= LSU_QUEUE {
                    return Some((Stall::Lsu, u64::MAX));
                }
                if self.lsu_free > now {
                    return Some((Stall::Lsu, self.lsu_free));
                }
                true
            }
        };
        if !unit_free {
            return Some((Stall::Pipe, now + 1));
        }
        None
    }

    /// Whether a register that blocks path (w, side) waits on a memory load (for the stall
    /// breakdown): its own pending write, or the other side's shadowed one, is a load.
    fn memory_hazard(&self, w: usize, side: usize, d: &DecodedInst) -> bool {
        let side = if self.sb.instance(0).params().dual {
            side & 1
        } else {
            0
        };
        let (wu, su) = (w as u32, side as u8);
        // Own pending loads, and the other side's shadowed pending loads (`S ⊆ P`).
        let words = self.sb_words;
        let mem = |s: usize| &self.pending_mem[(2 * w + s) * words..][..words];
        let (own_p, own_m) = (self.sb.instance(0).pending_row(wu, su), mem(side));
        let (other_s, other_m) = (self.sb.instance(0).shadow_row(wu, su ^ 1), mem(side ^ 1));
        let loads = own_p.iter().zip(own_m).zip(other_s.iter().zip(other_m));
        loads
            .zip(&d.uses.0)
            .any(|(((&p, &m), (&s, &sm)), &uses)| (p & m | s & sm) & uses != 0)
    }

    fn schedule(
        &mut self,
        s: usize,
        now: u64,
        k: &KernelCtx,
        global: &mut GlobalMemory,
        num_sms: u32,
    ) -> Result<(), Box<GuestFault>> {
        if self.schedulers[s].is_empty() {
            self.stats.stalls.idle += 1;
            return Ok(());
        }
        let shortcuts = k.cfg.sim.scan_shortcuts;
        if shortcuts && now < self.sleep_until[s] {
            self.count_stall(self.sleep_reason[s]);
            return Ok(());
        }
        let mut chosen = None;
        // Take the candidate order out to avoid borrowing the scheduler while checking warps.
        self.schedulers[s].refresh_order();
        let greedy = self.schedulers[s].greedy();
        // Warps whose every considered path waits for an event are passed over: the scan
        // visits the others, the greedy warp first, then in `order`'s sequence.
        let passable = if shortcuts {
            self.scan.passable(self.fixed_candidate_sides(k))
        } else {
            0
        };
        let greedy_bit = greedy.map_or(0, |g| 1u64 << g);
        let first = greedy.filter(|_| passable & greedy_bit == 0);
        let members = self.schedulers[s].members() | greedy_bit;
        let rest = self.schedulers[s].positions(members & !passable & !greedy_bit);
        let order = std::mem::take(&mut self.schedulers[s].order);
        let rest = set_bits(rest).map(|i| order[i]);
        // The stall counted if nothing issues: the blocker closest to issuing among every
        // path considered, visited or passed over.
        let mut worst = Stall::Fetch;
        'warps: for w in first.into_iter().chain(rest) {
            let (sides, n) = self.candidate_sides(w, k);
            for &side in &sides[..n] {
                let p = 2 * w + side;
                if let Some(why) = self.scan.cached(p, now).filter(|_| shortcuts) {
                    worst = worst.max(why);
                    continue;
                }
                match self.blocker(w, side, now, k) {
                    None => {
                        chosen = Some((w, side));
                        break 'warps;
                    }
                    Some((st, until)) => {
                        worst = worst.max(st);
                        self.scan.hold(p, st, until);
                    }
                }
            }
        }
        let Some((w, side)) = chosen else {
            if let Some(sides) = self.fixed_candidate_sides(k) {
                let passed = members & passable;
                worst = worst.max(self.scan.worst_parked(passed, sides));
            }
            self.count_stall(worst);
            if shortcuts {
                self.sleep_until[s] = self.next_timed_change(s, now);
            }
            self.sleep_reason[s] = worst;
            self.schedulers[s].order = order;
            return Ok(());
        };
        self.schedulers[s].order = order;
        let long_latency = self.issue(w, side, now, k, global, num_sms)?;
        self.schedulers[s].issued(w, long_latency);
        self.wake();
        self.wake_warp(w);
        Ok(())
    }

    /// The paths every warp's scan considers, when that does not depend on the warp: side 0
    /// under SPE, both sides under DPE with ALT; `None` under the constrained policy.
    #[inline]
    fn fixed_candidate_sides(&self, k: &KernelCtx) -> Option<&'static [usize]> {
        match (self.dual_paths, k.cfg.sm.dpe_path_policy) {
            (false, _) => Some(&[0]),
            (true, PathPolicy::Alt) => Some(&[0, 1]),
            (true, PathPolicy::Constrained) => None,
        }
    }

    /// The paths of warp `w` the scheduler considers this cycle, in order (spec §4.10, A9,
    /// A10): SPE has one; DPE under ALT tries the side that did not issue last first; the
    /// constrained variant considers only its selected side (or the other one once the
    /// selected side has no path).
    #[inline]
    fn candidate_sides(&self, w: usize, k: &KernelCtx) -> ([usize; 2], usize) {
        let warp = &self.warps[w];
        if !self.dual_paths {
            return ([0, 0], 1);
        }
        let side = warp.side as usize;
        match k.cfg.sm.dpe_path_policy {
            PathPolicy::Alt => ([1 - side, side], 2),
            PathPolicy::Constrained => {
                if warp.view.path_valid(side) {
                    ([side, 0], 1)
                } else {
                    ([1 - side, 0], 1)
                }
            }
        }
    }

    fn count_stall(&mut self, why: Stall) {
        let st = &mut self.stats.stalls;
        match why {
            Stall::Fetch => st.fetch += 1,
            Stall::Barrier => st.barrier += 1,
            Stall::MemData => st.memory_data += 1,
            Stall::AluData => st.alu_data += 1,
            Stall::Pipe => st.pipe_busy += 1,
            Stall::Lsu => st.lsu_busy += 1,
        }
    }

    /// Issue warp `w`'s next instruction. Returns whether it was a long-latency operation
    /// (for the two-level scheduler).
    fn issue(
        &mut self,
        w: usize,
        side: usize,
        now: u64,
        k: &KernelCtx,
        global: &mut GlobalMemory,
        num_sms: u32,
    ) -> Result<bool, Box<GuestFault>> {
        let cta_slot = self.warps[w].cta_slot as usize;
        let view = self.warps[w].view;
        let pc = view.pc[side];
        let active = view.mask[side];
        self.stats.issued_paths += view.num_paths() as u64;
        let d = k.decoded[pc as usize];
        {
            let cta = &mut self.ctas[cta_slot]
                .as_mut()
                .expect("active warp has a CTA")
                .state;
            let mut env = ExecEnv {
                module: k.module,
                kernel: k.kernel,
                launch: k.launch,
                global,
                sm_id: self.id,
                num_sms,
                cycle: now,
            };
            exec::execute_into(
                pc,
                active,
                &mut self.states[w],
                cta,
                &mut env,
                &mut self.step,
            )?;
        }
        let (flow, barrier) = (self.step.flow, self.step.barrier);
        self.stats.warp_instructions += 1;
        self.stats.thread_instructions += active.count_ones() as u64;

        // SIMT stack update.
        if matches!(flow, Flow::Branch { taken, .. } if taken != 0 && taken != active) {
            self.stats.divergent_branches += 1;
        }
        let effect = {
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
            // The issuing path's buffer moves on by one; a buffer whose next instruction is
            // no longer its path's PC (a jump, a push, a pop) is flushed (spec A16).
            let ib = &mut warp.ibuf[side];
            ib.count = ib.count.saturating_sub(1);
            ib.pc = pc + 1;
            for s in 0..2 {
                let ib = &mut warp.ibuf[s];
                if ib.count > 0 && (!warp.view.path_valid(s) || warp.view.pc[s] != ib.pc) {
                    ib.count = 0;
                }
            }
            effect
        };
        self.stack_effect(w, effect);
        self.update_fetch_bit(w);

        // Register-file bank reads of the sources; with bank conflicts modelled, the extra
        // operand-collection cycles delay dispatch (result latency and unit busy time).
        let rf_extra = self.rf.read_operands(w, d.reads(), now);

        // Destination registers and functional-unit occupancy.
        let p = &k.cfg.pipeline;
        let mut long_latency = false;
        let sb_side = side as u8;
        match d.class {
            InstClass::Mem => {
                if let Some(acc) = self.step.mem.take() {
                    long_latency = self.issue_memory(w, sb_side, now, rf_extra, k, &d, &acc, pc)?;
                }
            }
            class => {
                let (units, lat, ii) = match class {
                    InstClass::Alu => (&mut self.sp_free, p.alu_latency, p.alu_ii),
                    InstClass::Fma => (&mut self.sp_free, p.fma_latency, p.fma_ii),
                    InstClass::Ctrl => (&mut self.sp_free, p.ctrl_latency, 1),
                    InstClass::Sfu => (&mut self.sfu_free, p.sfu_latency, p.sfu_ii),
                    InstClass::Div => (&mut self.sfu_free, p.div_latency, p.div_ii),
                    InstClass::Dp => (&mut self.dp_free, p.dp_latency, p.dp_ii),
                    InstClass::Mem => unreachable!(),
                };
                let u = argmin(units);
                units[u] = now + ii as u64 + rf_extra as u64;
                long_latency = class == InstClass::Div;
                for &r in d.writes() {
                    self.write_result(w, sb_side, r, now, lat + rf_extra, k, pc)?;
                }
            }
        }

        if let Some((id, count)) = barrier {
            long_latency = true;
            self.arrive_barrier(w, cta_slot, id, count, k, pc)?;
        }
        let warp = &mut self.warps[w];
        // DPE path selection state: ALT remembers the side that issued; the constrained
        // variant rotates away from a side that starts a long-latency operation (A10).
        match k.cfg.sm.dpe_path_policy {
            PathPolicy::Alt => warp.side = side as u8,
            PathPolicy::Constrained => {
                if long_latency || d.class == InstClass::Sfu {
                    warp.side = 1 - side as u8;
                } else {
                    warp.side = side as u8;
                }
            }
        }
        if warp.view.is_empty() {
            self.warp_exited(w, k)?;
        } else if !warp.view.any_path() {
            self.autopop.push(w);
        }
        Ok(long_latency)
    }

    #[allow(clippy::too_many_arguments)]
    fn issue_memory(
        &mut self,
        w: usize,
        side: u8,
        now: u64,
        rf_extra: u32,
        k: &KernelCtx,
        d: &DecodedInst,
        acc: &MemAccess,
        pc: u32,
    ) -> Result<bool, Box<GuestFault>> {
        match acc.space {
            StateSpace::Global | StateSpace::Local | StateSpace::Generic if acc.mask != 0 => {
                let mut regs = [0u16; 4];
                let mut n = 0;
                if acc.kind != MemKind::Store {
                    // Completion is at least two cycles away (the LSU hands the request on
                    // next cycle at the earliest), so the reserve is applied first.
                    for &r in d.writes() {
                        regs[n] = r;
                        n += 1;
                        self.reserve(w, side, r, true, k, pc)?;
                    }
                }
                let token = PendingMem {
                    warp: w as u16,
                    side,
                    regs,
                    n_regs: n as u8,
                };
                let tok = match self.free_tokens.pop() {
                    Some(t) => {
                        self.tokens[t as usize] = token;
                        t
                    }
                    None => {
                        self.tokens.push(token);
                        self.tokens.len() as u32 - 1
                    }
                };
                self.warps[w].inflight += 1;
                self.lsu_queue.push_back((tok, *acc));
                if rf_extra > 0 {
                    // The operands arrive late: the LSU takes the request no earlier.
                    self.lsu_free = self.lsu_free.max(now + rf_extra as u64);
                }
                Ok(acc.kind != MemKind::Store)
            }
            _ => {
                // Shared, const, param (or a fully predicated-off access): inside the SM.
                let (lat, busy) = if acc.space == StateSpace::Shared && acc.mask != 0 {
                    let ways = shared_conflict_ways(acc, k.cfg.sm.shared_banks);
                    self.stats.mem.shared_accesses += 1;
                    self.stats.mem.shared_conflict_cycles += ways as u64 - 1;
                    (k.cfg.sm.shared_latency + ways - 1, ways)
                } else {
                    (k.cfg.l1.hit_latency, 1)
                };
                self.lsu_free = now + busy as u64 + rf_extra as u64;
                for &r in d.writes() {
                    self.write_result(w, side, r, now, lat + rf_extra, k, pc)?;
                }
                Ok(false)
            }
        }
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
        if !self.sb.instance_mut(0).reserve(w as u32, side, r as u32) {
            return Err(self.reserve_refused(w, r, k, pc));
        }
        if memory {
            let i = self.mem_word(w, side as usize, r);
            self.pending_mem[i] |= 1u64 << (r % 64);
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
                self.sb.instance(0).params().nrsv
            ),
        ))
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
        let idx = ((now + lat) & self.wheel_mask) as usize;
        self.wheel_busy[idx / 64] |= 1 << (idx % 64);
        self.wheel[idx].push(Writeback {
            warp: w as u16,
            reg: r,
            side,
            tracked,
        });
        self.warps[w].inflight += 1;
        Ok(())
    }

    fn arrive_barrier(
        &mut self,
        w: usize,
        cta_slot: usize,
        id: u32,
        count: Option<u32>,
        k: &KernelCtx,
        pc: u32,
    ) -> Result<(), Box<GuestFault>> {
        let cta = self.ctas[cta_slot].as_mut().expect("warp has a CTA");
        let id = cta.barriers.arrive(id, count);
        self.warps[w].barrier = Some((id as u8, pc));
        let sched = owner_scheduler(w, self.schedulers.len());
        self.schedulers[sched].set_waiting(w, true);
        self.check_barriers(cta_slot, k)
    }

    /// Release every barrier whose expected warps have all arrived (exited warps no longer
    /// count, as in GPGPU-Sim); report a block whose live warps all wait at barriers that
    /// can never complete.
    fn check_barriers(&mut self, cta_slot: usize, k: &KernelCtx) -> Result<(), Box<GuestFault>> {
        let cta = self.ctas[cta_slot].as_mut().expect("warp has a CTA");
        let released = cta.barriers.release(cta.live_warps);
        if released != 0 {
            for &ws in &cta.warp_slots {
                if let Some((id, _)) = self.warps[ws].barrier {
                    if released >> id & 1 == 1 {
                        self.warps[ws].barrier = None;
                        let sched = owner_scheduler(ws, self.schedulers.len());
                        self.schedulers[sched].set_waiting(ws, false);
                        self.scan.clear_warp(ws);
                    }
                }
            }
            return Ok(());
        }
        if cta.barriers.deadlocked(cta.live_warps) {
            return Err(Box::new(self.barrier_fault(k, cta_slot)));
        }
        Ok(())
    }

    fn warp_exited(&mut self, w: usize, k: &KernelCtx) -> Result<(), Box<GuestFault>> {
        let warp = &mut self.warps[w];
        if warp.finished {
            return Ok(());
        }
        warp.finished = true;
        self.need_fetch &= !(3u128 << (2 * w));
        let cta_slot = warp.cta_slot as usize;
        let sched = owner_scheduler(w, self.schedulers.len());
        self.schedulers[sched].remove(w);
        let cta = self.ctas[cta_slot].as_mut().expect("warp has a CTA");
        cta.live_warps -= 1;
        if cta.live_warps > 0 && cta.barriers.any_waiting() {
            self.check_barriers(cta_slot, k)?;
        }
        self.maybe_retire(w);
        Ok(())
    }

    /// Free the warp slot (and its CTA when it was the last) once nothing is in flight.
    #[inline]
    fn maybe_retire(&mut self, w: usize) {
        let warp = &self.warps[w];
        if warp.finished && warp.inflight == 0 && warp.deferred == 0 && warp.active {
            self.retire(w);
        }
    }

    fn retire(&mut self, w: usize) {
        let warp = &mut self.warps[w];
        warp.active = false;
        let cta_slot = warp.cta_slot as usize;
        let done = {
            let cta = self.ctas[cta_slot].as_mut().expect("warp has a CTA");
            cta.retired_warps += 1;
            cta.retired_warps == cta.footprint.warps
        };
        if done {
            let cta = self.ctas[cta_slot].take().expect("checked");
            let f = cta.footprint;
            self.used_ctas -= 1;
            self.used_warps -= f.warps;
            self.used_threads -= f.threads;
            self.used_regs -= f.registers;
            self.used_shared -= f.shared;
        }
    }

    fn barrier_fault(&self, k: &KernelCtx, cta_slot: usize) -> GuestFault {
        let cta = self.ctas[cta_slot].as_ref().expect("warp has a CTA");
        // Name the first waiting warp and the bar.sync it waits at.
        let (w, pc) = cta
            .warp_slots
            .iter()
            .find_map(|&ws| self.warps[ws].barrier.map(|(_, pc)| (ws, pc)))
            .unwrap_or((cta.warp_slots[0], 0));
        self.fault(
            FaultKind::BarrierDeadlock,
            w,
            pc,
            k,
            cta.barriers.deadlock_detail(cta.live_warps),
        )
    }

    fn fault(
        &self,
        kind: FaultKind,
        w: usize,
        pc: u32,
        k: &KernelCtx,
        detail: String,
    ) -> GuestFault {
        let warp = &self.warps[w];
        let cta = &self.ctas[warp.cta_slot as usize]
            .as_ref()
            .expect("warp has a CTA")
            .state;
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

/// The scheduler (of `n`) that owns warp slot `w`: the slot index modulo the scheduler
/// count (even/odd slots with two, spec A15). Runs on every warp event, so the usual
/// power-of-two counts take a mask instead of a division.
#[inline(always)]
fn owner_scheduler(w: usize, n: usize) -> usize {
    if n.is_power_of_two() {
        w & (n - 1)
    } else {
        w % n
    }
}

/// Forget the fetch completions at or before `now` (the queue is in completion order).
#[inline]
fn drop_completed(fetches: &mut VecDeque<u64>, now: u64) {
    while fetches.front().is_some_and(|&at| at <= now) {
        fetches.pop_front();
    }
}

/// The indices of the set bits of `m`, lowest first.
#[inline]
fn set_bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

#[inline]
fn min_free(units: &[u64]) -> u64 {
    units.iter().copied().min().unwrap_or(0)
}

#[inline]
fn argmin(units: &[u64]) -> usize {
    let mut best = 0;
    for (i, &u) in units.iter().enumerate() {
        if u < units[best] {
            best = i;
        }
    }
    best
}

/// The number of serialized shared-memory passes of one warp access: the largest number of
/// distinct 4-byte words any bank must deliver (lanes reading the same word share it).
pub fn shared_conflict_ways(acc: &MemAccess, banks: u32) -> u32 {
    // Fast path for the common conflict-free access: track the one word each bank delivers;
    // only a bank asked for a second distinct word needs the exact count below. (Banks are
    // a power of two on every modelled GPU: a mask, not a division per word.)
    if !banks.is_power_of_two() || banks > 64 {
        return exact_conflict_ways(acc, banks);
    }
    // Cheapest case first (consecutive words, broadcasts, a few rows of a tile): every word
    // touched lies in a window of at most `banks` consecutive words, so no bank holds two.
    // The window runs to the last byte of the widest lane, a superset of the words charged.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    if acc.mask == u32::MAX {
        // Full warps, the usual case, without a test per lane.
        for &addr in &acc.addrs {
            lo = lo.min(addr);
            hi = hi.max(addr);
        }
    } else {
        for (lane, &addr) in acc.addrs.iter().enumerate() {
            if acc.mask >> lane & 1 != 0 {
                lo = lo.min(addr);
                hi = hi.max(addr);
            }
        }
    }
    let size = acc.bytes.max(1) as u64;
    if (hi.saturating_add(size - 1) / 4).saturating_sub(lo / 4) < banks as u64 {
        return 1;
    }
    let bank_mask = banks as u64 - 1;
    let mut bank_word = [0u64; 64];
    let mut used = 0u64;
    let mut conflict = false;
    let mut note = |word: u64| {
        let b = (word & bank_mask) as usize;
        if used >> b & 1 == 0 {
            used |= 1 << b;
            bank_word[b] = word;
        } else if bank_word[b] != word {
            conflict = true;
        }
    };
    let mut m = acc.mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let first = acc.addrs[lane] / 4;
        note(first);
        if (acc.addrs[lane] + size - 1) / 4 > first {
            note(first + 1);
        }
    }
    if !conflict {
        return 1;
    }
    exact_conflict_ways(acc, banks)
}

/// [`shared_conflict_ways`] by collecting the distinct words of each bank (a chain per
/// bank through the words seen so far) and counting them.
fn exact_conflict_ways(acc: &MemAccess, banks: u32) -> u32 {
    // Each lane touches at most two words (8-byte accesses; wider vectors are rare and are
    // charged by their first two words).
    const NONE: u8 = u8::MAX;
    let mut words = [0u64; WARP_SIZE * 2];
    let mut next = [NONE; WARP_SIZE * 2];
    let mut head = [NONE; 64];
    let mut per_bank = [0u8; 64];
    let mut n = 0;
    let mut ways = 1u32;
    let mut note = |word: u64| {
        let b = (word % banks as u64) as usize % 64;
        let mut i = head[b];
        while i != NONE {
            if words[i as usize] == word {
                return;
            }
            i = next[i as usize];
        }
        words[n] = word;
        next[n] = head[b];
        head[b] = n as u8;
        n += 1;
        per_bank[b] += 1;
        ways = ways.max(per_bank[b] as u32);
    };
    let mut m = acc.mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let first = acc.addrs[lane] / 4;
        let last = (acc.addrs[lane] + acc.bytes.max(1) as u64 - 1) / 4;
        note(first);
        if last > first {
            note(first + 1);
        }
    }
    ways
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(addrs: impl Fn(usize) -> u64, bytes: u32) -> MemAccess {
        let mut a = MemAccess {
            space: StateSpace::Shared,
            kind: MemKind::Load,
            bytes,
            mask: u32::MAX,
            ..Default::default()
        };
        for l in 0..WARP_SIZE {
            a.addrs[l] = addrs(l);
        }
        a
    }

    #[test]
    fn shared_bank_conflicts() {
        assert_eq!(shared_conflict_ways(&access(|l| l as u64 * 4, 4), 32), 1);
        assert_eq!(shared_conflict_ways(&access(|_| 64, 4), 32), 1, "broadcast");
        assert_eq!(shared_conflict_ways(&access(|l| l as u64 * 8, 4), 32), 2);
        assert_eq!(shared_conflict_ways(&access(|l| l as u64 * 128, 4), 32), 32);
        assert_eq!(
            shared_conflict_ways(&access(|l| l as u64 * 8, 8), 32),
            2,
            "64-bit words"
        );
    }

    /// The conflict count by definition: the most distinct words any bank delivers.
    fn reference_ways(acc: &MemAccess, banks: u32) -> u32 {
        let mut per_bank =
            std::collections::BTreeMap::<u64, std::collections::BTreeSet<u64>>::new();
        for lane in (0..WARP_SIZE).filter(|&l| acc.mask >> l & 1 != 0) {
            let first = acc.addrs[lane] / 4;
            let last = (acc.addrs[lane] + acc.bytes.max(1) as u64 - 1) / 4;
            for word in first..=last.min(first + 1) {
                per_bank
                    .entry(word % banks as u64)
                    .or_default()
                    .insert(word);
            }
        }
        per_bank.values().map(|w| w.len() as u32).max().unwrap_or(1)
    }

    proptest::proptest! {
        /// The fast paths and the exact count agree with the definition, on accesses spread
        /// over a window narrow enough for the window fast path or wide enough for conflicts.
        #[test]
        fn conflict_count_matches_definition(
            base in 0u64..512,
            window in proptest::sample::select(vec![64u64, 128, 160, 512]),
            offsets in proptest::collection::vec(0u64..512, WARP_SIZE),
            mask: u32,
            bytes in proptest::sample::select(vec![1u32, 4, 8, 16]),
            banks in proptest::sample::select(vec![16u32, 32, 24]),
        ) {
            let mut a = access(|l| base + offsets[l] % window, bytes);
            a.mask = mask;
            let expected = reference_ways(&a, banks);
            proptest::prop_assert_eq!(shared_conflict_ways(&a, banks), expected);
            proptest::prop_assert_eq!(exact_conflict_ways(&a, banks), expected);
        }
    }
}
