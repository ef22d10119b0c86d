//! Register dependencies: the scoreboard (the `dpe_scoreboard` unit model itself, one
//! instance per SM, held by the generic unit host), the queue of releases waiting for a
//! writeback port, and which pending writes are memory loads (for the stall breakdown).
//!
//! `DUAL=1` under `sm.reconvergence = "dpe"` (L/R pending and shadow bits, spec §4.9),
//! `DUAL=0` under "spe" (A19). The scoreboard's clock edge falls inside the GPU cycle, after
//! the releases: a writeback at cycle t is visible to issue at t, and a reserve (or a
//! stack's copy) staged at t is visible from t+1. Hazard queries at issue read the state
//! after this cycle's edge.

use super::super::decode::DecodedInst;
use super::KernelCtx;
use crate::config::GpuConfig;
use crate::ptx::ir::Kernel;
use crate::units::declare::UnitParams;
use crate::units::dpe_scoreboard::{
    DpeScoreboard, RegMask, ScoreboardParams, MAX_PORTS, SCOREBOARD_DESC,
};
use crate::units::host::{UnitActivity, UnitHost};
use crate::units::trace::TraceRecorder;
use std::collections::VecDeque;

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

/// A scoreboard release waiting for a writeback port.
#[derive(Clone, Copy)]
struct Release {
    warp: u16,
    reg: u16,
    side: u8,
}

pub(super) struct RegDeps {
    /// The scoreboard (the `dpe_scoreboard` unit model, one instance).
    sb: UnitHost<DpeScoreboard>,
    /// Releases that found every writeback port of their cycle taken, oldest first, and
    /// how many of them each warp slot has (a slot is not reused until 0).
    deferred: VecDeque<Release>,
    deferred_per_warp: Vec<u32>,
    /// GPU-side bookkeeping for the stall breakdown only: per path (`2 * warp + side`,
    /// `words` words each), the registers whose pending write is a memory load (set when
    /// the reserve is staged, cleared when the release is).
    pending_mem: Vec<u64>,
    words: usize,
}

impl RegDeps {
    pub fn new(cfg: &GpuConfig) -> RegDeps {
        RegDeps {
            sb: UnitHost::new(scoreboard_params_for(cfg, 8), 1).expect("validated configuration"),
            deferred: VecDeque::new(),
            deferred_per_warp: Vec::new(),
            pending_mem: Vec::new(),
            words: 0,
        }
    }

    /// Prepare for a new kernel launch: size the scoreboard for its register count.
    pub fn begin_kernel(&mut self, k: &KernelCtx) {
        let max_warps = k.cfg.sm.max_warps as usize;
        // Empty after a launch that ran to its end; a launch that faulted may leave some.
        self.deferred.clear();
        self.deferred_per_warp.clear();
        self.deferred_per_warp.resize(max_warps, 0);
        self.sb
            .reconfigure(k.sb)
            .expect("scoreboard parameters checked at launch");
        self.words = k.sb.num_regs.div_ceil(64) as usize;
        self.pending_mem = vec![0; 2 * max_warps * self.words];
        // One trace holds every launch at one parameter set: when this kernel has more
        // register slots than any recorded before, the trace is laid out with the wider
        // register fields, the events so far included (a launch with fewer registers
        // behaves identically in an instance with more: it never names the extra ones).
        // The recorded edges are staged operations, laid out only when encoded, so this is
        // a change of parameters.
        let have = self.sb.trace_params().map(ScoreboardParams::from_params);
        if have.is_some_and(|have| k.sb.num_regs > have.num_regs) {
            let params = k.sb.to_params().expect("checked at launch");
            self.sb.change_trace(|rec| {
                rec.relayout(params)
                    .expect("a sink's recorder keeps raw records")
            });
        }
    }

    /// Start recording the scoreboard's port traffic (instance `sm<id>`). The trace's
    /// `NUM_REGS` starts at the minimum and widens to the largest any launch uses from then
    /// on (see [`RegDeps::begin_kernel`]).
    pub fn record(&mut self, cfg: &GpuConfig, sm: u32) -> Result<(), String> {
        let p = scoreboard_params_for(cfg, 8);
        let mut rec = TraceRecorder::new(&SCOREBOARD_DESC, p.to_params()?);
        rec.add_instance(format!("sm{sm}"));
        self.sb.record(rec);
        Ok(())
    }

    pub fn take_trace(&mut self) -> Option<TraceRecorder> {
        self.sb.take_trace()
    }

    pub fn activity(&self) -> UnitActivity {
        self.sb.activity()
    }

    /// Warp slot `w` takes a new warp: nothing of its own is pending.
    pub fn clear_warp(&mut self, w: usize) {
        // A free slot has nothing in flight, so its scoreboard rows are clear.
        debug_assert!((0..2).all(|s| self
            .sb
            .instance(0)
            .pending_row(w as u32, s)
            .iter()
            .all(|&b| b == 0)));
        let words = self.words;
        self.pending_mem[2 * w * words..2 * (w + 1) * words].fill(0);
        self.deferred_per_warp[w] = 0;
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
    pub fn edge(&mut self, cycle: u64) {
        let active = !self.sb.instance(0).staged().is_idle();
        self.sb
            .edge_with(0, cycle, active, |sb| sb.staged(), |sb| sb.tick());
    }

    /// Stage the reserve of `r` for path (w, side); `memory`: the write is a load's.
    /// `false` when every reserve port of the cycle is taken.
    #[inline]
    pub fn reserve(&mut self, w: usize, side: u8, r: u16, memory: bool) -> bool {
        if !self.sb.instance_mut(0).reserve(w as u32, side, r as u32) {
            return false;
        }
        if memory {
            let i = self.mem_word(w, side as usize, r);
            self.pending_mem[i] |= 1u64 << (r % 64);
        }
        true
    }

    /// Stage the release of `reg` written by path (w, side) on a free writeback port, or
    /// queue it for the next cycle's ports (`false`: deferred). A staged release is applied
    /// by this cycle's edge, before the schedulers look.
    #[inline]
    pub fn release(&mut self, w: usize, side: u8, reg: u16) -> bool {
        if !self.sb.instance_mut(0).release(w as u32, side, reg as u32) {
            self.defer(w, side, reg);
            return false;
        }
        let i = self.mem_word(w, side as usize, reg);
        self.pending_mem[i] &= !(1u64 << (reg % 64));
        true
    }

    #[cold]
    #[inline(never)]
    fn defer(&mut self, w: usize, side: u8, reg: u16) {
        self.deferred.push_back(Release {
            warp: w as u16,
            reg,
            side,
        });
        self.deferred_per_warp[w] += 1;
    }

    /// Stage the oldest deferred release if a writeback port is free. Returns its warp
    /// (woken by the caller), `None` when none is left or no port is.
    #[inline]
    pub fn stage_deferred(&mut self) -> Option<usize> {
        let &r = self.deferred.front()?;
        if !self.sb.instance(0).release_port_free() {
            return None;
        }
        self.deferred.pop_front();
        let w = r.warp as usize;
        self.deferred_per_warp[w] -= 1;
        let staged = self.release(w, r.side, r.reg);
        debug_assert!(staged, "a free writeback port takes the release");
        Some(w)
    }

    /// Warp slot `w` has no register write pending (nor a release waiting for a port).
    pub fn pending_clear(&self, w: usize) -> bool {
        self.deferred_per_warp[w] == 0
            && self
                .sb
                .instance(0)
                .pending_row(w as u32, 0)
                .iter()
                .all(|&b| b == 0)
    }

    /// Releases of warp slot `w` still waiting for a port.
    #[inline(always)]
    pub fn deferred_of(&self, w: usize) -> u32 {
        self.deferred_per_warp[w]
    }

    /// Warp `w`'s stack pushed, popped or diverged in place (`ev_sb_copy`, spec A5, A6):
    /// the scoreboard copies its pending bits into its shadow bits.
    #[inline]
    pub fn copy(&mut self, w: usize) {
        self.sb.instance_mut(0).copy(w as u32);
    }

    /// The scoreboard's hazard output for path (w, side): its own pending bits or the other
    /// side's shadow bits (§4.9) meet `uses`.
    #[inline]
    pub fn hazard(&self, w: usize, side: usize, uses: &RegMask) -> bool {
        self.sb.instance(0).hazard_mask(w as u32, side as u8, uses)
    }

    /// The reserve ports of a cycle (for the fault report of a refused reserve).
    pub fn reserve_ports(&self) -> u32 {
        self.sb.instance(0).params().nrsv
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
        (2 * w + side) * self.words + reg as usize / 64
    }

    /// Whether a register that blocks path (w, side) waits on a memory load (for the stall
    /// breakdown): its own pending write, or the other side's shadowed one, is a load.
    pub fn memory_hazard(&self, w: usize, side: usize, d: &DecodedInst) -> bool {
        let sb = self.sb.instance(0);
        let side = if sb.params().dual { side & 1 } else { 0 };
        let (wu, su) = (w as u32, side as u8);
        // Own pending loads, and the other side's shadowed pending loads (`S ⊆ P`). One OR
        // over the row's words, as in the scoreboard's hazard query (an iterator chain over
        // five slices cost about 110 host instructions a call).
        let (own_p, other_s) = (sb.pending_row(wu, su), sb.shadow_row(wu, su ^ 1));
        let words = self.words.min(own_p.len()).min(other_s.len());
        let path = |s: usize| &self.pending_mem[(2 * w + s) * self.words..][..words];
        let (own_m, other_m) = (path(side), path(side ^ 1));
        let mut hit = 0;
        for i in 0..words.min(d.uses.0.len()) {
            hit |= (own_p[i] & own_m[i] | other_s[i] & other_m[i]) & d.uses.0[i];
        }
        hit != 0
    }
}
