//! Thread-block compaction in the SM (spec tbc-capri-slp.md §1-§3): TBC, TBC+ and CAPRI,
//! with SIMD lane permutation at warp launch.
//!
//! Under `sm.compaction` the per-warp stacks give way to one CTA-wide stack per CTA
//! (§1.3). A CTA's warp slots become *scheduling* slots: each runs a warp of the CTA's
//! threads, `RunWarp` (active physical lanes and, per lane, the home warp of its thread).
//! Registers stay with the home warp (`Sm::states[home slot]`): a thread never leaves its
//! home lane (§1.2), so issue executes once per home warp of the running warp and merges
//! the results by lane (`Sm::issue`).
//!
//! The stack follows the seed's TBC rules and the SPE unit's reconvergence rules
//! (`units::simt_stack`), at CTA scope:
//! - All live threads of the CTA run inside the top entry's block. Its `members` (WCnt,
//!   §1.3) are the slots running it plus the compacted warps still to come from the WCU.
//! - A member that executes the block's branch arrives: its taken and not-taken threads
//!   are ORed into the two paths of the pending branch (the TOS does not move, §1.3 rule
//!   3). A member that reaches the TOS's reconvergence PC arrives too. When `members`
//!   reaches 0 the branch completes (paths resolved as the SPE stack resolves groups;
//!   the taken path runs first, A5) or the TOS pops, and the new TOS's live threads go to
//!   the warp compaction unit.
//! - TBC synchronises at every branch, unconditional ones included; TBC+ not at
//!   unconditional branches nor `.uni` ones (A22). CAPRI (§2.3): a warp that did not
//!   diverge bypasses with no CAPT access; a divergent one asks the CAPT (one lookup per
//!   cycle, answered the next cycle) and stalls or bypasses as it says; the first answer
//!   at a branch is latched for the CTA's other divergent warps (A11).
//! - A bypassed warp keeps its own structure (its threads are excluded from compaction but
//!   seen by the adequacy evaluator, §2.4) and runs ahead into its first path (A10): it may
//!   issue non-control instructions there, and waits before the block's end (a control
//!   instruction, or the reconvergence PC) until that path is the TOS. Its slot is kept for
//!   it while its paths are on the stack (A8), so compacted warps go to the other slots
//!   (A3: warp k to the k-th lowest of them).
//!
//! The warp compaction unit (`wcu`) and the CAPT (`capri_capt`) are the unit models
//! themselves, one of each per SM (A20, L1023), clocked at the end of the SM's cycle
//! ([`Compaction::tick`]) through the generic unit host, so workload traces of both come
//! for free. Requests wait in a FIFO in arrival order (A20).
//!
//! Timing contract (our choice, the seed gives none):
//! - a branch that completes at cycle t requests compaction at the end of t; the WCU
//!   offers warp k in cycle t+FIRST_LAT+k; an offered warp is taken at the end of its
//!   cycle and issues from the next;
//! - a warp is taken only when every slot its threads move away from has no register
//!   write pending (`out_ready` low otherwise): the scoreboard tracks writes per slot, and
//!   a compacted warp must not read a register a load of its threads' previous slot has not
//!   written yet (threads that stay in their slot need no wait, so an identity compaction
//!   never waits);
//! - the CAPT answers a lookup made at the end of t in cycle t+1 (LOOKUP_LAT = 1), so a
//!   divergent warp's decision takes effect from t+2 at the earliest;
//! - pops and branch completions with nothing to compact act at once (the SPE stack pops
//!   one entry per cycle; the CTA stack's bookkeeping is not an RTL unit here).

use std::collections::VecDeque;

use super::super::branch_taint::data_branches;
use super::super::reconv::StackView;
use crate::config::{Compaction as Mode, GpuConfig, LanePermutation};
use crate::exec::Flow;
use crate::ptx::ir::{Kernel, Opcode};
use crate::stats::{CompactionStats, PathCounts};
use crate::units::capri_capt::{CapriCapt, CaptInputs, CaptParams, CAPT_DESC};
use crate::units::contract::UnitDesc;
use crate::units::declare::{PortGroup, UnitParams};
use crate::units::host::{UnitActivity, UnitHost};
use crate::units::slp_perm::{Slp, SlpInputs, SlpMode, SlpParams, SlpPerm, SLP_DESC};
use crate::units::trace::TraceRecorder;
use crate::units::wcu::{CompactedWarp, CtaMask, Wcu, WcuInputs, WcuParams, WCU_DESC};

/// Lanes of a warp (the GPU model's warp size).
const S: u32 = crate::exec::WARP_SIZE as u32;
/// Most warps of one CTA (1024 threads).
const MAX_NW: usize = 32;

/// The threads of a CTA as a matrix: per home warp, a bit per physical lane.
type Threads = [u32; MAX_NW];

/// A warp as a slot runs it: active physical lanes and, per lane, the home warp (within the
/// CTA) of the thread in that lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunWarp {
    pub lanes: u32,
    pub src: [u8; 32],
}

impl RunWarp {
    /// A static warp: home warp `h`'s threads in `lanes`.
    fn home(h: u8, lanes: u32) -> RunWarp {
        RunWarp {
            lanes,
            src: [h; 32],
        }
    }

    /// The same warp restricted to `lanes`.
    fn subset(&self, lanes: u32) -> RunWarp {
        RunWarp {
            lanes: self.lanes & lanes,
            src: self.src,
        }
    }

    /// The home warps of its threads, a bit each.
    pub fn homes(&self) -> u32 {
        bits(self.lanes).fold(0, |m, l| m | 1 << self.src[l])
    }

    /// Its lanes whose thread belongs to home warp `h`.
    pub fn lanes_of(&self, h: u32) -> u32 {
        bits(self.lanes)
            .filter(|&l| self.src[l] as u32 == h)
            .fold(0, |m, l| m | 1 << l)
    }

    /// ORs its threads of `lanes` into `t`.
    fn add_to(&self, lanes: u32, t: &mut Threads) {
        for l in bits(lanes & self.lanes) {
            t[self.src[l] as usize] |= 1 << l;
        }
    }
}

/// The set bits of `m`, lowest first.
fn bits(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

/// What a CTA slot is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum SlotState {
    /// Nothing to run: waiting for a compacted warp, or for its bypassed path.
    #[default]
    Empty,
    /// Running its warp in the TOS block.
    Running,
    /// Its warp reached the TOS block's end (the branch or the reconvergence PC).
    Arrived,
    /// Its warp diverged at the branch (CAPRI) and waits for the CAPT's answer.
    Deciding,
    /// Bypassed: running ahead in the path `entry` of the pending branch (A10).
    Ahead,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    state: SlotState,
    warp: RunWarp,
    pc: u32,
    /// `Ahead`: the id of the path it runs in, and that path's reconvergence PC.
    entry: u32,
    stop: u32,
    /// `Deciding`: the taken lanes of its branch.
    taken: u32,
}

/// One entry of a CTA-wide stack (or a path of the pending branch, which becomes one).
#[derive(Clone, Debug)]
struct Entry {
    /// Unique within the CTA: bypassed warps name the path they run in by it.
    id: u32,
    pc: u32,
    rpc: u32,
    mask: Threads,
    /// Slots that put threads into the path (A7).
    contrib: u32,
    /// Bypassed warps with threads in the path: the slot they ran in, their threads, and
    /// where they resume (the path's PC, or how far a parked warp got running ahead).
    bypass: Vec<(u8, RunWarp, u32)>,
}

/// The branch the TOS block ends with, while its members arrive.
#[derive(Clone, Debug)]
struct PendingBranch {
    pc: u32,
    rpc: u32,
    /// [taken path, not-taken path].
    paths: [Entry; 2],
    /// Slots that stalled and that bypassed at it (decisions, for the statistics).
    stalled: u32,
    bypassed: u32,
    /// Some warp's threads went both ways.
    diverged: bool,
}

/// One CTA's stack and slots.
struct CtaStack {
    /// The SM warp slot of each CTA slot, which is also the home of warp k's registers.
    slots: Vec<usize>,
    entries: Vec<Entry>,
    /// WCnt of the TOS: slots running it (or deciding at its branch) plus warps to come.
    members: u32,
    pending: Option<PendingBranch>,
    /// Threads that exited.
    done: Threads,
    slot: [Slot; MAX_NW],
    /// Per thread (home warp, lane), the CTA slot it last ran in.
    last_slot: [[u8; 32]; MAX_NW],
    /// CAPRI's decision for the TOS block's branch (PC, stall), latched from the first
    /// divergent warp's CAPT answer (A11 with LATCH_DECISION = 1): every divergent warp of
    /// the CTA gets the same decision even if another CTA updates the entry in between; the
    /// later warps' lookups still happen (for LRU).
    latch: Option<(u32, bool)>,
    next_id: u32,
}

impl CtaStack {
    fn nw(&self) -> usize {
        self.slots.len()
    }
    fn tos(&self) -> &Entry {
        self.entries.last().expect("a live CTA has a TOS")
    }
    fn new_id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }
    /// The live threads of `e`.
    fn live(&self, e: &Entry) -> Threads {
        let mut t = e.mask;
        for (m, d) in t.iter_mut().zip(&self.done) {
            *m &= !d;
        }
        t
    }
    /// The top entry joins the one below when both wait to run the same block (same PC and
    /// reconvergence PC): in a loop whose threads leave at different iterations, each
    /// leaving group would otherwise take one more entry (the CTA-wide stack sees far more
    /// such groups than a warp's). Only waiting entries merge (the TOS never runs while its
    /// branch completes), and only when no warp runs ahead in the top one nor got past its
    /// start: the merged entry's bypassed warps are then compacted like the rest (each
    /// entry's bypassed warps come from one branch, where they fit the slots; from two
    /// they might not).
    fn merge_down(&mut self) {
        while let [.., below, top] = &mut self.entries[..] {
            let untouched = |e: &Entry| e.bypass.iter().all(|r| r.2 == e.pc);
            let ahead = self
                .slot
                .iter()
                .any(|s| s.state == SlotState::Ahead && (s.entry == top.id || s.entry == below.id));
            if top.pc != below.pc
                || top.rpc != below.rpc
                || ahead
                || !untouched(top)
                || !untouched(below)
            {
                return;
            }
            for (a, b) in below.mask.iter_mut().zip(&top.mask) {
                *a |= b;
            }
            below.contrib |= top.contrib;
            below.bypass.clear();
            self.entries.pop();
        }
    }
}

/// A compaction request waiting for (or being served by) the WCU.
#[derive(Clone, Copy)]
struct Request {
    cta: usize,
    entry: u32,
    mask: CtaMask,
    excl: CtaMask,
    contrib: u32,
    umask: u32,
    /// The branch whose completion this is (the evaluator's result updates the CAPT).
    eval: Option<u32>,
}

/// A divergent warp's CAPT lookup.
#[derive(Clone, Copy)]
struct Lookup {
    cta: usize,
    slot: usize,
    pc: u32,
}

/// What a call changed, for the SM to act on.
#[derive(Default)]
pub struct Changes {
    /// SM warp slots whose view changed (refresh, wake).
    pub slots: u64,
    /// CTA slots whose barrier membership shrank (check their barriers).
    pub barrier_ctas: u64,
}

/// The SM's compaction sub-block.
pub struct Compaction {
    mode: Mode,
    slp: Slp,
    depth: u32,
    wcu: UnitHost<Wcu>,
    capt: Option<UnitHost<CapriCapt>>,
    /// The lane permutation of each warp slot's launch mask (with a permutation).
    perm: Option<UnitHost<SlpPerm>>,
    ctas: Vec<Option<CtaStack>>,
    /// SM warp slot -> (CTA slot, CTA-local slot).
    home: Vec<(u16, u8)>,
    requests: VecDeque<Request>,
    serving: Option<Request>,
    lookups: VecDeque<Lookup>,
    updates: VecDeque<(u32, bool)>,
    /// Per PC of the running kernel: an instruction that ends a block for a warp running
    /// ahead, a `.uni` branch, a data-dependent branch.
    ctrl: Vec<bool>,
    uni: Vec<bool>,
    data_branch: Vec<bool>,
    /// Per PC: a branch's target and reconvergence PC.
    branches: Vec<Option<(u32, u32)>>,
    changes: Changes,
    /// The SM cycle of the last clock edge of the units (the CAPT's flush follows it).
    last_now: u64,
    pub stats: CompactionStats,
    /// An internal inconsistency (reported as a fault by the SM).
    error: Option<String>,
}

/// The slp_perm mode of a configured permutation.
fn slp_mode(p: LanePermutation) -> SlpMode {
    match p {
        LanePermutation::None => SlpMode::Ident,
        LanePermutation::Balanced => SlpMode::Balanced,
        LanePermutation::OddEven => SlpMode::OddEven,
        LanePermutation::XorOddHalf => SlpMode::XorOddHalf,
        LanePermutation::RevWid => SlpMode::RevWid,
        LanePermutation::FlipOdd => SlpMode::FlipOdd,
        LanePermutation::RotateOdd1 => SlpMode::RotateOdd1,
        LanePermutation::Wid => SlpMode::Wid,
    }
}

/// A `Threads` matrix as the WCU's port value (bit `w*S + l`).
fn to_cta_mask(t: &Threads) -> CtaMask {
    let mut m = [0u64; 16];
    for (w, &lanes) in t.iter().enumerate() {
        m[w / 2] |= (lanes as u64) << (32 * (w % 2));
    }
    m
}

/// The most threads of `t` in one lane: the warps lane-preserving compaction needs.
fn max_column(t: &Threads) -> u32 {
    (0..S)
        .map(|l| t.iter().filter(|&&m| m >> l & 1 == 1).count() as u32)
        .max()
        .unwrap_or(0)
}

fn popcount(t: &Threads) -> u32 {
    t.iter().map(|m| m.count_ones()).sum()
}

impl Compaction {
    /// The sub-block for `cfg`, or `None` without `sm.compaction`.
    pub fn new(cfg: &GpuConfig) -> Result<Option<Compaction>, String> {
        let Some(wp) = WCU_DESC.gpu_params(cfg)? else {
            return Ok(None);
        };
        let capt = match CAPT_DESC.gpu_params(cfg)? {
            Some(p) => Some(UnitHost::new(CaptParams::from_params(&p), 1)?),
            None => None,
        };
        let perm_unit = match SLP_DESC.gpu_params(cfg)? {
            Some(p) => Some(UnitHost::new(
                SlpParams::from_params(&p),
                cfg.sm.max_warps as usize,
            )?),
            None => None,
        };
        let perm = cfg.sm.lane_permutation;
        Ok(Some(Compaction {
            mode: cfg.sm.compaction,
            slp: Slp {
                enabled: perm != LanePermutation::None,
                mode: slp_mode(perm),
            },
            depth: cfg.sm.stack_depth,
            wcu: UnitHost::new(WcuParams::from_params(&wp), 1)?,
            capt,
            perm: perm_unit,
            ctas: (0..cfg.sm.max_ctas).map(|_| None).collect(),
            home: vec![(0, 0); cfg.sm.max_warps as usize],
            requests: VecDeque::new(),
            serving: None,
            lookups: VecDeque::new(),
            updates: VecDeque::new(),
            ctrl: Vec::new(),
            uni: Vec::new(),
            data_branch: Vec::new(),
            branches: Vec::new(),
            changes: Changes::default(),
            last_now: 0,
            stats: CompactionStats::default(),
            error: None,
        }))
    }

    /// Record `unit`'s port traffic (instance `sm<id>.wcu` / `sm<id>.capt`).
    pub fn record(&mut self, unit: &'static UnitDesc, sm: u32) -> Result<bool, String> {
        if std::ptr::eq(unit, &WCU_DESC) {
            let mut rec = TraceRecorder::new(&WCU_DESC, self.wcu.params().to_params()?);
            _ = rec.add_instance(format!("sm{sm}.wcu"));
            self.wcu.record(rec);
            return Ok(true);
        }
        if let Some(perm) = self.perm.as_mut().filter(|_| std::ptr::eq(unit, &SLP_DESC)) {
            let mut rec = TraceRecorder::new(&SLP_DESC, perm.params().to_params()?);
            (0..perm.len()).for_each(|w| _ = rec.add_instance(format!("sm{sm}.warp{w}")));
            perm.record(rec);
            return Ok(true);
        }
        if let Some(capt) = self
            .capt
            .as_mut()
            .filter(|_| std::ptr::eq(unit, &CAPT_DESC))
        {
            let mut rec = TraceRecorder::new(&CAPT_DESC, capt.params().to_params()?);
            _ = rec.add_instance(format!("sm{sm}.capt"));
            capt.record(rec);
            return Ok(true);
        }
        Ok(false)
    }

    pub fn take_traces(&mut self) -> Vec<TraceRecorder> {
        let capt = self.capt.as_mut().and_then(|c| c.take_trace());
        let perm = self.perm.as_mut().and_then(|c| c.take_trace());
        self.wcu
            .take_trace()
            .into_iter()
            .chain(capt)
            .chain(perm)
            .collect()
    }

    pub fn activity(&self) -> Vec<UnitActivity> {
        let capt = self.capt.as_ref().map(|c| c.activity());
        let perm = self.perm.as_ref().map(|c| c.activity());
        std::iter::once(self.wcu.activity())
            .chain(capt)
            .chain(perm)
            .collect()
    }

    /// A new kernel: per-PC facts, fresh statistics; the CAPT forgets every branch (A15:
    /// flushed at kernel end; a fresh instance is the same state).
    pub fn begin_kernel(&mut self, kernel: &Kernel) {
        // What ends a block for a warp running ahead: control transfers and barriers (warp
        // collectives such as `shfl` and `vote` are Ctrl-class but run per home warp).
        self.ctrl = kernel
            .insts
            .iter()
            .map(|i| {
                matches!(
                    i.op,
                    Opcode::Bra | Opcode::Ret | Opcode::Exit | Opcode::BarSync
                )
            })
            .collect();
        self.uni = kernel.insts.iter().map(|i| i.mods.uni).collect();
        self.data_branch = data_branches(kernel);
        self.branches = kernel.insts.iter().map(|i| i.target.zip(i.rpc)).collect();
        self.stats = CompactionStats::default();
        self.requests.clear();
        self.serving = None;
        self.lookups.clear();
        self.updates.clear();
        self.error = None;
        for c in &mut self.ctas {
            *c = None;
        }
        // The WCU is idle at a kernel's end (a launch abandoned on a fault may leave it
        // busy: it restarts). The CAPT is flushed through its `flush` input (A15), a cycle
        // after its last one, so the recorded trace holds the flush too.
        use crate::units::declare::Unit;
        self.wcu.instance_mut(0).reset();
        if let Some(c) = self.capt.as_mut().filter(|c| c.instance(0).occupancy() > 0) {
            let flush = CaptInputs {
                flush: true,
                ..CaptInputs::default()
            };
            self.last_now += 1;
            c.tick(0, self.last_now, &flush);
        }
    }

    /// The permutation at warp launch.
    pub fn slp(&self) -> Slp {
        self.slp
    }

    /// CTA slot `cta` starts with its warps in SM warp slots `slots` (warp k in `slots[k]`),
    /// warp k's valid threads `valid[k]` (logical lanes) at PC 0.
    pub fn launch_cta(&mut self, cta: usize, slots: &[usize], valid: &[u32], now: u64) {
        let mut st = CtaStack {
            slots: slots.to_vec(),
            entries: Vec::new(),
            members: 0,
            pending: None,
            done: [0; MAX_NW],
            slot: [Slot::default(); MAX_NW],
            last_slot: [[0; 32]; MAX_NW],
            latch: None,
            next_id: 0,
        };
        let mut mask = [0u32; MAX_NW];
        for (k, (&ws, &v)) in slots.iter().zip(valid).enumerate() {
            self.home[ws] = (cta as u16, k as u8);
            // SLP: the warp's threads take their permuted lanes at launch (§3.2), through
            // the slot's `slp_perm` instance.
            let lanes = match &mut self.perm {
                Some(unit) => {
                    let inp = SlpInputs {
                        en: true,
                        mode: self.slp.mode as u8,
                        wid: k as u32,
                        vec_in: v as u64,
                        ..SlpInputs::default()
                    };
                    unit.tick(ws, now, &inp).vec_out as u32
                }
                None => v,
            };
            mask[k] = lanes;
            st.slot[k] = Slot {
                state: SlotState::Running,
                warp: RunWarp::home(k as u8, lanes),
                pc: 0,
                ..Slot::default()
            };
            st.last_slot[k] = [k as u8; 32];
            st.members += 1;
        }
        let id = st.new_id();
        st.entries.push(Entry {
            id,
            pc: 0,
            rpc: crate::ptx::ir::END_PC,
            mask,
            contrib: 0,
            bypass: Vec::new(),
        });
        self.ctas[cta] = Some(st);
    }

    /// The warp SM slot `ws` runs (its threads by physical lane and home warp), and the SM
    /// warp slot of each of the CTA's home warps.
    pub fn running(&self, ws: usize) -> (RunWarp, &[usize]) {
        let (c, k) = self.home[ws];
        let st = self.ctas[c as usize].as_ref().expect("a running CTA");
        (st.slot[k as usize].warp, &st.slots)
    }

    /// What the schedulers see of SM slot `ws`.
    pub fn view(&self, ws: usize) -> StackView {
        let (c, k) = self.home[ws];
        let Some(st) = self.ctas[c as usize].as_ref() else {
            return StackView::default();
        };
        let s = &st.slot[k as usize];
        let issuable = match s.state {
            SlotState::Running => true,
            SlotState::Ahead => {
                s.pc != s.stop && !self.ctrl.get(s.pc as usize).copied().unwrap_or(true)
            }
            _ => false,
        };
        StackView {
            pc: [s.pc; 2],
            mask: [if issuable { s.warp.lanes } else { 0 }, 0],
            depth: st.entries.len() as u32,
            error: false,
        }
    }

    /// Take what changed since the last call.
    pub fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }

    /// An internal inconsistency, if one happened.
    pub fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }

    fn touch(&mut self, c: usize, k: usize) {
        if let Some(st) = &self.ctas[c] {
            self.changes.slots |= 1 << st.slots[k];
        }
    }

    fn touch_all(&mut self, c: usize) {
        if let Some(st) = &self.ctas[c] {
            for &ws in &st.slots {
                self.changes.slots |= 1 << ws;
            }
        }
    }

    fn fail(&mut self, what: String) {
        if self.error.is_none() {
            self.error = Some(format!("CTA-wide stack: {what}"));
        }
    }

    /// SM slot `ws` issued the instruction at `pc` with the (merged, physical-lane) outcome
    /// `flow`.
    pub fn issued(&mut self, ws: usize, pc: u32, flow: &Flow) {
        let (c, k) = {
            let (c, k) = self.home[ws];
            (c as usize, k as usize)
        };
        self.touch(c, k);
        let Some(st) = self.ctas[c].as_mut() else {
            return self.fail(format!("warp slot {ws} issued with no CTA"));
        };
        let s = &mut st.slot[k];
        match s.state {
            SlotState::Ahead => {
                // Only non-control instructions issue ahead (`view`).
                s.pc = pc + 1;
                return;
            }
            SlotState::Running => {}
            other => return self.fail(format!("slot {k} issued while {other:?}")),
        }
        match *flow {
            Flow::Seq => self.advance(c, k, pc + 1),
            Flow::Jump { target } => {
                if self.mode == Mode::Tbc {
                    let lanes = s.warp.lanes;
                    self.arrive_branch(c, k, pc, lanes, target, target, true);
                } else {
                    self.advance(c, k, target);
                }
            }
            Flow::Exit { exiting } => {
                let w = s.warp;
                let gone = exiting & w.lanes;
                s.warp.lanes &= !gone;
                let left = s.warp.lanes;
                w.add_to(gone, &mut st.done);
                if left == 0 {
                    st.slot[k].state = SlotState::Empty;
                    self.member_left(c);
                } else {
                    self.advance(c, k, pc + 1);
                }
            }
            Flow::Branch { taken, target, rpc } => {
                let live = s.warp.lanes;
                let tk = taken & live;
                let diverged = tk != 0 && tk != live;
                match self.mode {
                    Mode::TbcPlus if !diverged && self.uni.get(pc as usize) == Some(&true) => {
                        self.advance(c, k, if tk != 0 { target } else { pc + 1 });
                    }
                    Mode::Capri if diverged => {
                        s.state = SlotState::Deciding;
                        s.taken = tk;
                        self.lookups.push_back(Lookup {
                            cta: c,
                            slot: k,
                            pc,
                        });
                    }
                    Mode::Capri => self.arrive_branch(c, k, pc, tk, target, rpc, false),
                    _ => self.arrive_branch(c, k, pc, tk, target, rpc, true),
                }
            }
        }
    }

    /// Slot k's warp continues at `next`; at the TOS's reconvergence PC it arrives.
    fn advance(&mut self, c: usize, k: usize, next: u32) {
        let st = self.ctas[c].as_mut().expect("live CTA");
        if next == st.tos().rpc {
            st.slot[k].state = SlotState::Arrived;
            st.slot[k].pc = next;
            self.member_left(c);
        } else {
            st.slot[k].pc = next;
        }
    }

    /// Slot k's warp executed the block's branch at `pc`: `tk` of its lanes go to `target`,
    /// the rest to `pc + 1`; it stalls for compaction or bypasses.
    #[allow(clippy::too_many_arguments)]
    fn arrive_branch(
        &mut self,
        c: usize,
        k: usize,
        pc: u32,
        tk: u32,
        target: u32,
        rpc: u32,
        stall: bool,
    ) {
        let st = self.ctas[c].as_mut().expect("live CTA");
        if st.pending.is_none() {
            let (a, b) = (st.new_id(), st.new_id());
            let path = |id, pc| Entry {
                id,
                pc,
                rpc,
                mask: [0; MAX_NW],
                contrib: 0,
                bypass: Vec::new(),
            };
            st.pending = Some(PendingBranch {
                pc,
                rpc,
                paths: [path(a, target), path(b, pc + 1)],
                stalled: 0,
                bypassed: 0,
                diverged: false,
            });
        }
        let w = st.slot[k].warp;
        let p = st.pending.as_mut().expect("just made");
        if p.pc != pc {
            let other = p.pc;
            return self.fail(format!(
                "slot {k} ended the block at the branch at PC {pc}, another slot at PC {other}"
            ));
        }
        let sides = [tk & w.lanes, w.lanes & !tk];
        p.diverged |= sides[0] != 0 && sides[1] != 0;
        for (path, &lanes) in p.paths.iter_mut().zip(&sides) {
            if lanes != 0 {
                w.add_to(lanes, &mut path.mask);
                path.contrib |= 1 << k;
                if !stall {
                    path.bypass.push((k as u8, w.subset(lanes), path.pc));
                }
            }
        }
        let slot = &mut st.slot[k];
        if stall {
            p.stalled |= 1 << k;
            slot.state = SlotState::Arrived;
        } else {
            p.bypassed |= 1 << k;
            // Ahead in its first path (the taken one if it has threads there, A10).
            let first = if sides[0] != 0 { 0 } else { 1 };
            *slot = Slot {
                state: SlotState::Ahead,
                warp: w.subset(sides[first]),
                pc: p.paths[first].pc,
                entry: p.paths[first].id,
                stop: p.rpc,
                taken: 0,
            };
        }
        self.member_left(c);
    }

    /// A member of the TOS left its block: when none is left, the branch completes or the
    /// TOS pops.
    fn member_left(&mut self, c: usize) {
        let st = self.ctas[c].as_mut().expect("live CTA");
        st.members -= 1;
        self.changes.barrier_ctas |= 1 << c;
        if st.members == 0 {
            if st.pending.is_some() {
                self.complete_branch(c);
            } else {
                self.pop(c);
            }
        }
    }

    /// Every member arrived at the pending branch: resolve its paths (§1.3 rules 3-4, the
    /// SPE stack's group rules, A4, A5), then start the new TOS.
    fn complete_branch(&mut self, c: usize) {
        let st = self.ctas[c].as_mut().expect("live CTA");
        let p = st.pending.take().expect("a pending branch");
        st.latch = None;
        let [mut taken, not_taken] = p.paths;
        // Groups in run order, taken first (A5); an empty path is discarded.
        let mut groups: Vec<Entry> = Vec::with_capacity(2);
        if not_taken.mask.iter().any(|&m| m != 0) && taken.mask.iter().any(|&m| m != 0) {
            if taken.pc == not_taken.pc {
                // `bra` to the next instruction: one group.
                for (a, b) in taken.mask.iter_mut().zip(&not_taken.mask) {
                    *a |= b;
                }
                taken.contrib |= not_taken.contrib;
                for (k, w, pc) in not_taken.bypass {
                    match taken.bypass.iter_mut().find(|(j, _, _)| *j == k) {
                        Some((_, x, _)) => x.lanes |= w.lanes,
                        None => taken.bypass.push((k, w, pc)),
                    }
                }
                for s in st.slot.iter_mut() {
                    if s.state == SlotState::Ahead && s.entry == not_taken.id {
                        s.entry = taken.id;
                    }
                }
                groups.push(taken);
            } else {
                groups.push(taken);
                groups.push(not_taken);
            }
        } else if taken.mask.iter().any(|&m| m != 0) {
            groups.push(taken);
        } else if not_taken.mask.iter().any(|&m| m != 0) {
            groups.push(not_taken);
        }

        // Statistics: the oracle is the evaluator's answer for the first path (A6); paths of
        // divergent branches are classified by the branch's kind (§3.1).
        let adequate = groups
            .first()
            .is_some_and(|g| max_column(&g.mask) < g.contrib.count_ones());
        let (n_stall, n_bypass) = (
            p.stalled.count_ones() as u64,
            p.bypassed.count_ones() as u64,
        );
        if adequate {
            self.stats.stall_adequate += n_stall;
            self.stats.bypass_adequate += n_bypass;
        } else {
            self.stats.stall_inadequate += n_stall;
            self.stats.bypass_inadequate += n_bypass;
        }
        if p.diverged {
            let kind = self
                .data_branch
                .get(p.pc as usize)
                .copied()
                .unwrap_or(false) as usize;
            for g in &groups {
                let (before, after) = (g.contrib.count_ones(), max_column(&g.mask));
                let ideal = popcount(&g.mask).div_ceil(S);
                let counts = PathCounts {
                    paths: 1,
                    compactable: (after < before) as u64,
                    ideal_compactable: (ideal < before) as u64,
                    nw_notbc: before as u64,
                    nw_tbc: after as u64,
                    nw_ideal: ideal as u64,
                };
                self.stats.paths[kind].add(&counts);
            }
        }

        let st = self.ctas[c].as_mut().expect("live CTA");
        let (x, t_rpc) = (p.rpc, st.tos().rpc);
        // Paths whose PC is the reconvergence PC wait in the parent: no entry; bypassed
        // warps running "ahead" there have nothing to run.
        let first_id = groups.first().map(|g| g.id);
        let (keep, dropped): (Vec<Entry>, Vec<Entry>) = if groups.len() == 1 {
            if groups[0].pc == t_rpc {
                (Vec::new(), groups)
            } else {
                (groups, Vec::new())
            }
        } else {
            groups.into_iter().partition(|g| g.pc != x)
        };
        for g in &dropped {
            for s in st.slot.iter_mut() {
                if s.state == SlotState::Ahead && s.entry == g.id {
                    s.state = SlotState::Arrived;
                }
            }
        }
        let single = keep.len() == 1 && dropped.is_empty();
        if keep.is_empty() {
            if dropped.len() == 1 && dropped[0].pc == t_rpc {
                return self.pop(c);
            }
            // Every thread waits at x.
            let tos = st.entries.last_mut().expect("TOS");
            tos.pc = x;
            if x == t_rpc {
                return self.pop(c);
            }
            return self.enter_tos(c, None);
        }
        if single {
            // One group: the TOS continues there (SPE's Continue), under the group's id.
            let g = keep.into_iter().next().expect("one");
            let tos = st.entries.last_mut().expect("TOS");
            *tos = Entry { rpc: tos.rpc, ..g };
        } else {
            let mut keep = keep;
            if x != t_rpc {
                st.entries.last_mut().expect("TOS").pc = x;
            } else {
                // Reuse rule: the TOS becomes the group that runs last.
                let g = keep.pop().expect("non-empty");
                let tos = st.entries.last_mut().expect("TOS");
                *tos = Entry { rpc: tos.rpc, ..g };
            }
            st.merge_down();
            for g in keep.into_iter().rev() {
                st.entries.push(Entry { rpc: x, ..g });
                st.merge_down();
            }
            if st.entries.len() as u32 > self.depth {
                let n = st.entries.len();
                let depth = self.depth;
                return self.fail(format!(
                    "overflow: a divergent branch needs {n} entries, more than sm.stack_depth = {depth}"
                ));
            }
        }
        let eval =
            (first_id == Some(self.ctas[c].as_ref().expect("live").tos().id)).then_some(p.pc);
        self.enter_tos(c, eval);
    }

    /// The TOS pops (its members all reached its reconvergence PC or exited).
    fn pop(&mut self, c: usize) {
        let st = self.ctas[c].as_mut().expect("live CTA");
        st.entries.pop();
        for s in st.slot.iter_mut() {
            if s.state == SlotState::Arrived {
                s.state = SlotState::Empty;
            }
        }
        if st.entries.is_empty() {
            // Every thread exited: the CTA is done (every slot's view is now empty).
            self.touch_all(c);
            self.ctas[c] = None;
            return;
        }
        self.enter_tos(c, None);
    }

    /// The top entry becomes the running block: its bypassed warps run it as they are (in
    /// their own slot when it is free, A8), the rest of its live threads go to the WCU,
    /// whose warps take the free slots (A3); with nothing live it pops.
    ///
    /// A slot running ahead in a path that is not this entry keeps its warp; if the
    /// compacted warps need its slot, it is parked: its warp and PC go back into its
    /// path's record (and resume in whatever slot is free when that path runs).
    fn enter_tos(&mut self, c: usize, eval: Option<u32>) {
        self.touch_all(c);
        let st = self.ctas[c].as_mut().expect("live CTA");
        for s in st.slot.iter_mut() {
            if s.state == SlotState::Arrived {
                s.state = SlotState::Empty;
            }
        }
        let nw = st.nw();
        let top = st.entries.len() - 1;
        let live = st.live(&st.entries[top]);
        let (id, rpc) = {
            let e = &st.entries[top];
            (e.id, e.rpc)
        };
        let bypass = std::mem::take(&mut st.entries[top].bypass);
        let mut excl = [0u32; MAX_NW];
        st.members = 0;
        let mut at_rpc = Vec::new();
        for &(k, w, resume) in &bypass {
            w.add_to(w.lanes, &mut excl);
            let k = k as usize;
            let slot = if st.slot[k].state == SlotState::Ahead && st.slot[k].entry == id {
                st.slot[k].state = SlotState::Running;
                Some(k)
            } else {
                let free = (0..nw)
                    .filter(|&j| st.slot[j].state == SlotState::Empty)
                    .min_by_key(|&j| j != k);
                if let Some(j) = free {
                    st.slot[j] = Slot {
                        state: SlotState::Running,
                        warp: w,
                        pc: resume,
                        ..Slot::default()
                    };
                }
                free
            };
            let Some(j) = slot else {
                return self.fail(format!("no slot for the bypassed warp of slot {k}"));
            };
            st.members += 1;
            if st.slot[j].pc == rpc {
                at_rpc.push(j);
            }
        }
        let mut rest = live;
        for (r, x) in rest.iter_mut().zip(&excl) {
            *r &= !x;
        }
        let count = max_column(&rest);
        st.members += count;
        let contrib = st.entries[top].contrib;
        if st.members == 0 {
            return self.pop(c);
        }
        // Free slots for the compacted warps; park warps running ahead if they are short.
        let free_slots = |st: &CtaStack| {
            (0..nw)
                .filter(|&j| st.slot[j].state == SlotState::Empty)
                .count()
        };
        while free_slots(st) < count as usize {
            let Some(j) = (0..nw).find(|&j| st.slot[j].state == SlotState::Ahead) else {
                break;
            };
            let s = st.slot[j];
            let rec = st
                .entries
                .iter_mut()
                .filter(|e| e.id == s.entry)
                .flat_map(|e| e.bypass.iter_mut())
                .find(|r| r.0 as usize == j);
            match rec {
                Some(r) => {
                    r.1 = s.warp;
                    r.2 = s.pc;
                }
                None => return self.fail(format!("slot {j} runs ahead in no path")),
            }
            st.slot[j].state = SlotState::Empty;
        }
        let umask = (0..nw)
            .filter(|&j| st.slot[j].state == SlotState::Empty)
            .fold(0u32, |m, j| m | 1 << j);
        if count > umask.count_ones() {
            return self.fail(format!(
                "{count} compacted warps but only {} free slots",
                umask.count_ones()
            ));
        }
        if count > 0 || (eval.is_some() && self.capt.is_some()) {
            self.requests.push_back(Request {
                cta: c,
                entry: id,
                mask: to_cta_mask(&live),
                excl: to_cta_mask(&excl),
                contrib,
                umask,
                eval,
            });
        }
        for k in at_rpc {
            let st = self.ctas[c].as_mut().expect("live CTA");
            st.slot[k].state = SlotState::Arrived;
            self.member_left(c);
        }
    }

    /// The CAPT answered slot k's lookup: stall (wait for compaction) or bypass.
    fn decide(&mut self, c: usize, k: usize, stall: bool) {
        let Some(st) = self.ctas[c].as_mut() else {
            return;
        };
        let s = &mut st.slot[k];
        if s.state != SlotState::Deciding {
            return self.fail(format!("a CAPT answer for slot {k}, which is not deciding"));
        }
        s.state = SlotState::Running;
        let (pc, tk) = (s.pc, s.taken);
        let stall = match st.latch {
            Some((at, latched)) if at == pc => latched,
            _ => {
                st.latch = Some((pc, stall));
                stall
            }
        };
        let Some((target, rpc)) = self.branch_of(pc) else {
            return self.fail(format!("no branch at PC {pc}"));
        };
        self.touch(c, k);
        self.arrive_branch(c, k, pc, tk, target, rpc, stall);
    }

    /// Target and reconvergence PC of the branch at `pc` (kept per kernel).
    fn branch_of(&self, pc: u32) -> Option<(u32, u32)> {
        self.branches.get(pc as usize).copied().flatten()
    }

    /// The TOS's members of CTA slot `cta` (the warps a barrier waits for).
    pub fn members(&self, cta: usize) -> u32 {
        self.ctas[cta].as_ref().map_or(0, |st| st.members)
    }

    /// Work for the end of this cycle.
    #[inline]
    pub fn busy(&self) -> bool {
        !self.requests.is_empty()
            || self.serving.is_some()
            || !self.lookups.is_empty()
            || !self.updates.is_empty()
    }

    /// The units' clock edge at the end of SM cycle `now`: the WCU takes the next request
    /// when idle and hands the offered warp to its slot (when `clear(ws)`, the scoreboard of
    /// SM slot `ws`, allows it); then the CAPT answers this cycle's lookup (visible in
    /// cycle now+1) and applies the evaluation the WCU produced in the previous cycle.
    pub fn tick(&mut self, now: u64, clear: impl Fn(usize) -> bool) {
        self.last_now = now;
        let update = self.wcu_tick(now, &clear);
        if self.capt.is_some() && (!self.lookups.is_empty() || !self.updates.is_empty()) {
            let lookup = self.lookups.pop_front();
            let upd = self.updates.pop_front();
            let inp = CaptInputs {
                flush: false,
                br_valid: lookup.is_some(),
                br_pc: lookup.map_or(0, |l| l.pc),
                br_diverged: lookup.is_some(),
                upd_valid: upd.is_some(),
                upd_pc: upd.map_or(0, |u| u.0),
                upd_adequate: upd.is_some_and(|u| u.1),
            };
            let capt = self.capt.as_mut().expect("checked");
            capt.tick(0, now, &inp);
            if let Some(l) = lookup {
                let r = capt.instance(0).response();
                self.stats.capt_lookups += 1;
                self.stats.capt_hits += r.rsp_hit as u64;
                self.decide(l.cta, l.slot, r.rsp_stall);
            }
        }
        if let Some(u) = update.filter(|_| self.capt.is_some()) {
            self.updates.push_back(u);
        }
    }

    /// The WCU's clock edge; returns the evaluation of a request it took (valid from the
    /// next cycle, A1): the branch and whether compacting its path was adequate.
    fn wcu_tick(&mut self, now: u64, clear: &impl Fn(usize) -> bool) -> Option<(u32, bool)> {
        use crate::units::declare::Unit;
        let unit = self.wcu.instance(0);
        let offered = unit.warp();
        let idle = unit.registered().req_ready;
        let ready = match (offered, &self.serving) {
            (Some(w), Some(r)) => self.deliverable(r.cta, &w, clear),
            _ => true,
        };
        let req = if idle {
            self.requests.pop_front()
        } else {
            None
        };
        if idle && req.is_none() {
            return None;
        }
        let inp = match req {
            Some(r) => WcuInputs {
                out_ready: ready,
                ..WcuInputs::request(r.mask, r.excl, r.contrib, r.umask, r.eval.is_some())
            },
            None => WcuInputs {
                out_ready: ready,
                ..WcuInputs::default()
            },
        };
        // A busy cycle whose warp is held (`out_ready` low) has all-zero inputs: an idle
        // cycle for the trace.
        let ev = if PortGroup::is_idle(&inp) {
            self.wcu.idle_tick(0)
        } else {
            self.wcu.tick(0, now, &inp)
        };
        if let (Some(w), true) = (offered, ready) {
            if let Some(r) = self.serving {
                self.deliver(r.cta, r.entry, &w);
            }
        }
        if ev.done {
            self.stats.wcu_warps += ev.done_count as u64;
            self.serving = None;
        }
        let mut update = None;
        if let Some(r) = req {
            self.stats.wcu_requests += 1;
            self.serving = Some(r);
            let regs = self.wcu.instance(0).registered();
            if regs.pred_valid {
                update = r.eval.map(|pc| (pc, regs.pred_adequate));
            }
        }
        update
    }

    /// Whether compacted warp `w` of CTA `c` may take its slot: no register write pending
    /// in the scoreboard of a slot its threads move away from. Threads that stay in their
    /// slot keep their pending writes tracked where they are (an identity compaction never
    /// waits); writes pending in the destination for threads that left it only make the
    /// new warp wait longer than it must (conservative).
    fn deliverable(&self, c: usize, w: &CompactedWarp, clear: &impl Fn(usize) -> bool) -> bool {
        let Some(st) = self.ctas[c].as_ref() else {
            return true;
        };
        bits(w.lanes).all(|l| {
            let from = st.last_slot[w.src[l] as usize][l] as u32;
            from == w.slot || st.slots.get(from as usize).is_none_or(|&x| clear(x))
        })
    }

    /// Compacted warp `w` of CTA `c`'s entry `entry` starts running in its slot.
    fn deliver(&mut self, c: usize, entry: u32, w: &CompactedWarp) {
        let Some(st) = self.ctas[c].as_mut() else {
            return self.fail("a compacted warp for a finished CTA".into());
        };
        let (id, pc) = (st.tos().id, st.tos().pc);
        let k = w.slot as usize;
        if id != entry || k >= st.nw() || st.slot[k].state != SlotState::Empty {
            let state = st.slot.get(k).map(|s| s.state);
            return self.fail(format!(
                "compacted warp {} for slot {k} ({state:?}) of entry {entry}, TOS {id}",
                w.seq
            ));
        }
        let warp = RunWarp {
            lanes: w.lanes,
            src: w.src,
        };
        for l in bits(w.lanes) {
            st.last_slot[w.src[l] as usize][l] = k as u8;
        }
        st.slot[k] = Slot {
            state: SlotState::Running,
            warp,
            pc,
            ..Slot::default()
        };
        self.touch(c, k);
    }
}
