//! `simt_stack_spe`: the per-warp single-path-execution (PDOM/IPDOM) reconvergence stack.
//!
//! Cycle-exact model of the RTL unit of specs/reconvergence-dpe.md §9.2, with the next-state
//! function of §9.4. This is the only implementation: the GPU model instantiates it for
//! every warp, and the RTL generator/co-simulator compare the Verilog against it.
//!
//! Timing contract (§9.1): `tos_*`, `depth` and the sticky error flags are registered (a
//! function of the state alone); the `ev_*` event outputs are combinational from the state
//! and this cycle's inputs. `tick` computes `state(t+1) = f(state(t), in(t))`.
//!
//! Micro-architecture (design.md §5: storage in a RAM primitive, at most two storage ports
//! per cycle). A divergence writes up to three entries in one cycle (the rewritten TOS and
//! two pushes), so a RAM of single entries would need two write ports. The entries are
//! therefore stored by **pairs**: pair `k` holds entries `2k` (slot 0) and `2k+1` (slot 1).
//! The pair holding the TOS — the *top pair*, `P = (sp-1)/2` — is in two registers (`top`),
//! and pairs `0..P` are in a 1-write, 1-read RAM of `RAM_WORDS = max(1, (DEPTH-1)/2)` pair
//! words ([`DpRam`], the model of `wf_ram_dp`). The TOS is slot `(sp-1) % 2` of the top
//! pair. Per cycle:
//! - continue, launch, a push that stays in the top pair (one push from an odd `sp`), a pop
//!   that stays in it (from an even `sp`): registers only;
//! - a push that leaves the top pair (two pushes, or one from an even `sp`) *spills* the
//!   finished pair to RAM word `P` (one write) and starts the next pair in the registers;
//! - a pop from an odd `sp >= 3` *fills* the registers from RAM word `P-1` (one read).
//!
//! So at most one RAM write or one RAM read per cycle, never both. With the asynchronous
//! read (`RAM_RD_REG=0`, LUT RAM) a fill loads the registers from the word read in the same
//! cycle. With the registered read (`RAM_RD_REG=1`, block RAM) the fill's read happens at
//! the popping edge and the top pair *is* the RAM's read register afterwards (`top_in_q`)
//! until the next change of the top pair copies it into the registers: no prefetch, no
//! bypass (a fill never reads the word written at the same edge: spills and fills are
//! different cycles, and a word written at one edge is read back at a later one). Every
//! output is the same in both modes and the same as the flop-array stack this replaced,
//! cycle for cycle: **nothing changed in timing**. The debug view (`dbg_stack`) is the
//! logical stack, reassembled from the registers and the RAM (the RTL's co-simulation
//! wrapper does the same).
//!
//! Illegal use is asserted (a panic naming the unit; the RTL stops the simulation): the RAM
//! port checks of [`DpRam`] (write or read out of range, read-during-write), a pop of an
//! empty stack and `sp` beyond `DEPTH`. None can happen from the ports: an update of an
//! empty stack is the defined `err_pc`, a push that does not fit the defined `err_overflow`.
//!
//! Decisions where the seed is silent (each also in the spec's ambiguity table):
//! - A1: the bottom entry's RPC is `END_PC` (all ones); the warp is finished when the stack
//!   is empty.
//! - A2: on divergence the taken group is pushed first and the fall-through group on top, so
//!   the fall-through (left) path runs first as in the seed's Fig. 3.1.
//! - A4: GPGPU-Sim's reuse rule: when the branch's IPDOM equals the TOS RPC, the TOS entry is
//!   reused for the first group instead of becoming a reconvergence entry (loops do not grow
//!   the stack).
//! - A11: a push that does not fit raises the sticky `err_overflow` and leaves the stack
//!   unchanged.
//! - A12 (v2 chosen): threads may exit while diverged (clang emits guarded and multiple
//!   `ret`s). The unit keeps a `done` mask of exited threads that is ANDed into every mask it
//!   reads. EXIT retires `upd_taken ∧ live`; remaining live threads continue sequentially.
//!   A TOS whose effective mask is empty is not schedulable (`tos_valid = 0`) and pops itself
//!   in the next cycle without an update, one entry per cycle.
//! - A launch clears the whole stack, the done mask and the error flags (a new warp).

use super::contract::{Bits, CostFigure, GpuUse, LocalParam, Params, Scaling, SeedCost};
use super::coverage::Cover;
use super::declare::Unit;
use super::ram::DpRam;
use super::trace_sink::RawRecord;
use crate::ptx::ir::END_PC;

/// `upd_kind` encoding (§9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum UpdKind {
    /// ALU or memory instruction: sequential.
    Seq = 0,
    /// Conditional branch.
    Branch = 1,
    /// Unconditional jump.
    Jump = 2,
    /// EXIT/RET: the `upd_taken` lanes retire.
    Exit = 3,
}

impl UpdKind {
    pub fn from_bits(b: u8) -> UpdKind {
        match b & 3 {
            0 => UpdKind::Seq,
            1 => UpdKind::Branch,
            2 => UpdKind::Jump,
            _ => UpdKind::Exit,
        }
    }
}

/// One stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StackEntry {
    pub pc: u32,
    pub rpc: u32,
    pub mask: u64,
}

/// A RAM word: entries `2k` (index 0) and `2k+1` (index 1).
pub type EntryPair = [StackEntry; 2];

/// Pair words of the entry RAM at `depth` (the `RAM_WORDS` localparam): pairs `0..P` with
/// `P = (sp-1)/2 <= (DEPTH-1)/2`; at least one word (never accessed at `DEPTH=2`).
pub fn spe_ram_words(depth: u32) -> u32 {
    ((depth.saturating_sub(1)) / 2).max(1)
}

/// The constants `simt_stack_spe`'s RTL shares with this model (rendered as localparams).
fn spe_localparams(p: &Params) -> Vec<LocalParam> {
    let (ws, depth, pc_w) = (p.get("WARP_SIZE"), p.get("DEPTH") as u32, p.get("PC_W"));
    let words = spe_ram_words(depth);
    vec![
        LocalParam::int(
            "ENTRY_W",
            2 * pc_w + ws,
            "one entry {pc, rpc, mask}, as in dbg_stack",
        ),
        LocalParam::int("RAM_WORDS", words as u64, "pair words of the entry RAM"),
        LocalParam::int(
            "RAM_ADDR_W",
            super::contract::clog2(words as u64 + 1) as u64,
            "RAM address width (one past the last word fits: the range checks see it)",
        ),
        LocalParam::sized("KIND_SEQ", 2, UpdKind::Seq as u64, "upd_kind: sequential"),
        LocalParam::sized("KIND_JUMP", 2, UpdKind::Jump as u64, "upd_kind: jump"),
        LocalParam::sized(
            "KIND_EXIT",
            2,
            UpdKind::Exit as u64,
            "upd_kind: exit (the other value, 1, is a branch: the case default)",
        ),
    ]
}

/// The state of one `simt_stack_spe` instance (see the module docs for the layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimtStackSpe {
    params: SpeParams,
    /// Lane-mask of the configured warp size.
    lanes: u64,
    /// The top pair's registers (`top0`, `top1` in the RTL), unless `top_in_q`.
    top: EntryPair,
    /// Registered read only: the top pair is the RAM's read data (loaded by the last fill).
    top_in_q: bool,
    /// Pairs `0..P` below the top pair.
    ram: DpRam<EntryPair>,
    sp: u32,
    done: u64,
    err_overflow: bool,
    err_pc: bool,
}

/// A group of threads continuing at one PC: (next PC, mask).
type Group = (u32, u64);

/// What an update does, decided from the state and inputs (shared by `events` and `tick`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    None,
    Launch,
    /// Idle cycle with an empty effective TOS: pop it.
    AutoPop,
    ErrPc,
    Overflow {
        div: bool,
    },
    /// TOS exits: pop.
    Pop {
        div: bool,
    },
    /// TOS continues at `pc` with `mask`.
    Continue {
        pc: u32,
        mask: u64,
    },
    /// Divergence: rewrite the TOS (`tos`) and push up to two entries (`push[..n]`).
    Diverge {
        tos: StackEntry,
        push: [StackEntry; 2],
        n: u8,
    },
}

impl SimtStackSpe {
    pub fn new(params: SpeParams) -> SimtStackSpe {
        let lanes = if params.warp_size >= 64 {
            u64::MAX
        } else {
            (1u64 << params.warp_size) - 1
        };
        SimtStackSpe {
            params,
            lanes,
            top: EntryPair::default(),
            top_in_q: false,
            ram: DpRam::new(spe_ram_words(params.depth) as usize, params.ram_rd_reg),
            sp: 0,
            done: 0,
            err_overflow: false,
            err_pc: false,
        }
    }

    pub fn params(&self) -> SpeParams {
        self.params
    }

    /// Synchronous reset (`rst_n` low). The entry storage (registers and RAM) is not
    /// reset: entries at and above `sp` are never read.
    pub fn reset(&mut self) {
        self.sp = 0;
        self.top_in_q = false;
        self.done = 0;
        self.err_overflow = false;
        self.err_pc = false;
    }

    // ---- registered outputs (functions of the state only) ----

    /// The top pair: the registers, or the RAM's read data after a registered-read fill.
    #[inline]
    fn top_pair(&self) -> &EntryPair {
        if self.top_in_q {
            self.ram.q()
        } else {
            &self.top
        }
    }

    /// The TOS entry: slot `(sp-1) % 2` of the top pair (meaningless when empty).
    #[inline]
    fn top(&self) -> &StackEntry {
        &self.top_pair()[(self.sp.wrapping_sub(1) & 1) as usize]
    }
    /// Effective TOS mask: the entry's mask without exited threads.
    #[inline]
    pub fn tos_mask(&self) -> u64 {
        if self.sp == 0 {
            0
        } else {
            self.top().mask & !self.done
        }
    }
    /// The warp has a schedulable path.
    #[inline]
    pub fn tos_valid(&self) -> bool {
        self.tos_mask() != 0
    }
    #[inline]
    pub fn tos_pc(&self) -> u32 {
        if self.sp == 0 {
            0
        } else {
            self.top().pc
        }
    }
    #[inline]
    pub fn tos_rpc(&self) -> u32 {
        if self.sp == 0 {
            0
        } else {
            self.top().rpc
        }
    }
    #[inline]
    pub fn depth(&self) -> u32 {
        self.sp
    }
    /// Stack empty: every thread of the warp has exited (or the warp was never launched).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.sp == 0
    }
    pub fn err_overflow(&self) -> bool {
        self.err_overflow
    }
    pub fn err_pc(&self) -> bool {
        self.err_pc
    }
    pub fn done_mask(&self) -> u64 {
        self.done
    }
    /// Entry `i` of the logical stack (`i < depth`), from the top pair or the RAM (debug
    /// view: no port is used).
    pub fn entry(&self, i: u32) -> StackEntry {
        assert!(i < self.sp, "entry {i} of a stack of depth {}", self.sp);
        let pair = (i / 2) as usize;
        if pair == self.top_pair_index() {
            self.top_pair()[(i & 1) as usize]
        } else {
            self.ram.peek(pair)[(i & 1) as usize]
        }
    }

    /// Entries bottom..TOS (debug state; entries at and above `depth` read as zero in RTL).
    pub fn entries(&self) -> Vec<StackEntry> {
        (0..self.sp).map(|i| self.entry(i)).collect()
    }

    /// `P`: the index of the top pair (pairs below it are in the RAM).
    #[inline]
    fn top_pair_index(&self) -> usize {
        (self.sp.saturating_sub(1) / 2) as usize
    }

    /// Illegal use of the storage: a model (or RTL) bug, never a port value.
    #[cold]
    fn misuse(&self, what: impl std::fmt::Display) -> ! {
        panic!("simt_stack_spe: illegal use of the stack storage: {what}")
    }

    // ---- next-state function ----

    fn decide(&self, inp: &SpeInputs) -> Action {
        if inp.launch_valid {
            return Action::Launch;
        }
        if !inp.upd_valid {
            if self.sp > 0 && self.tos_mask() == 0 {
                return Action::AutoPop;
            }
            return Action::None;
        }
        if self.sp == 0 || inp.upd_pc != self.tos_pc() || self.tos_mask() == 0 {
            return Action::ErrPc;
        }
        let t = *self.top();
        let live = t.mask & !self.done;
        if inp.upd_kind == UpdKind::Seq as u8 {
            // The common case, short-cut (the same result as the general rule below): every
            // live thread continues at `upd_next`, which pops if it is the RPC.
            return if inp.upd_next == t.rpc {
                Action::Pop { div: false }
            } else {
                Action::Continue {
                    pc: inp.upd_next,
                    mask: live,
                }
            };
        }
        let taken = inp.upd_taken & self.lanes;
        // Groups of threads by next PC (§9.4).
        let (g0, g1): (Option<Group>, Option<Group>) = match UpdKind::from_bits(inp.upd_kind) {
            UpdKind::Seq => (Some((inp.upd_next, live)), None),
            UpdKind::Jump => (Some((inp.upd_target, live)), None),
            UpdKind::Exit => {
                let rest = live & !taken;
                (
                    if rest != 0 {
                        Some((inp.upd_next, rest))
                    } else {
                        None
                    },
                    None,
                )
            }
            UpdKind::Branch => {
                let nt = (inp.upd_next, live & !taken);
                let tk = (inp.upd_target, live & taken);
                match (nt.1 != 0, tk.1 != 0) {
                    (true, true) if nt.0 == tk.0 => (Some((nt.0, live)), None),
                    (true, true) => (Some(nt), Some(tk)),
                    (true, false) => (Some(nt), None),
                    (false, true) => (Some(tk), None),
                    (false, false) => (None, None),
                }
            }
        };
        match (g0, g1) {
            (None, _) => Action::Pop { div: false },
            (Some((pc, mask)), None) => {
                if pc == t.rpc {
                    Action::Pop { div: false }
                } else {
                    Action::Continue { pc, mask }
                }
            }
            (Some(nt), Some(tk)) => {
                let x = inp.upd_rpc;
                let mk = |g: (u32, u64)| StackEntry {
                    pc: g.0,
                    rpc: x,
                    mask: g.1,
                };
                let mut push = [StackEntry::default(); 2];
                let mut n = 0u8;
                let tos;
                if x != t.rpc {
                    // The TOS becomes the reconvergence entry; push taken, then fall-through.
                    tos = StackEntry { pc: x, ..t };
                    for g in [tk, nt] {
                        if g.0 != x {
                            push[n as usize] = mk(g);
                            n += 1;
                        }
                    }
                } else {
                    // Reuse rule: the TOS takes the first group whose PC is not the RPC.
                    let (first, second) = if tk.0 != x { (tk, nt) } else { (nt, tk) };
                    tos = StackEntry {
                        pc: first.0,
                        rpc: t.rpc,
                        mask: first.1,
                    };
                    if second.0 != x {
                        push[0] = mk(second);
                        n = 1;
                    }
                }
                if self.sp + n as u32 > self.params.depth {
                    Action::Overflow { div: true }
                } else {
                    Action::Diverge { tos, push, n }
                }
            }
        }
    }

    /// Combinational event outputs for this cycle's inputs.
    pub fn events(&self, inp: &SpeInputs) -> SpeEvents {
        Self::events_of(self.decide(inp))
    }

    fn events_of(action: Action) -> SpeEvents {
        match action {
            Action::AutoPop | Action::Pop { .. } => SpeEvents {
                ev_pop: true,
                ..Default::default()
            },
            Action::Diverge { n, .. } => SpeEvents {
                ev_push2: n == 2,
                ev_push1: n == 1,
                ev_div: true,
                ev_pop: false,
            },
            Action::Overflow { div } => SpeEvents {
                ev_div: div,
                ..Default::default()
            },
            _ => SpeEvents::default(),
        }
    }

    /// Clock edge: advance the state with this cycle's inputs; returns the cycle's events.
    pub fn tick(&mut self, inp: &SpeInputs) -> SpeEvents {
        if self.seq_continue(inp) {
            return SpeEvents::default();
        }
        let action = self.decide(inp);
        let ev = Self::events_of(action);
        // Threads retired by an EXIT update (only applied by a Pop or Continue action).
        let exiting = if inp.upd_valid && UpdKind::from_bits(inp.upd_kind) == UpdKind::Exit {
            inp.upd_taken & self.lanes & self.tos_mask()
        } else {
            0
        };
        match action {
            Action::None => {}
            Action::Launch => {
                self.reset();
                self.top[0] = StackEntry {
                    pc: inp.launch_pc,
                    rpc: inp.launch_rpc,
                    mask: inp.launch_mask & self.lanes,
                };
                self.sp = 1;
            }
            Action::AutoPop => self.pop(),
            Action::Pop { .. } => {
                self.pop();
                self.done |= exiting;
            }
            Action::ErrPc => self.err_pc = true,
            Action::Overflow { .. } => self.err_overflow = true,
            Action::Continue { pc, mask } => {
                self.done |= exiting;
                let slot = ((self.sp - 1) & 1) as usize;
                let t = &mut self.top_pair_mut()[slot];
                t.pc = pc;
                t.mask = mask;
            }
            Action::Diverge { tos, push, n } => self.diverge(tos, &push[..n as usize]),
        }
        ev
    }

    /// The commonest edge, a sequential update of the TOS path that does not reach its
    /// reconvergence PC, decided and applied in place: `decide` gives `Continue` with the
    /// live threads for it, and this is what `tick` does for that action (no event, no
    /// thread exits). Most edges of a run are this one, and going through `Action` cost
    /// about 40 host instructions more per edge. Returns `false`, changing nothing, for
    /// any other edge. Debug builds check the equivalence on every edge.
    #[inline(always)]
    fn seq_continue(&mut self, inp: &SpeInputs) -> bool {
        if inp.launch_valid || !inp.upd_valid || inp.upd_kind != UpdKind::Seq as u8 || self.sp == 0
        {
            return false;
        }
        let slot = ((self.sp - 1) & 1) as usize;
        let t = self.top_pair()[slot];
        let live = t.mask & !self.done;
        if inp.upd_pc != t.pc || live == 0 || inp.upd_next == t.rpc {
            return false;
        }
        debug_assert_eq!(
            self.decide(inp),
            Action::Continue {
                pc: inp.upd_next,
                mask: live
            }
        );
        let e = &mut self.top_pair_mut()[slot];
        e.pc = inp.upd_next;
        e.mask = live;
        true
    }

    /// The registers take a new top pair (a registered-read fill's pair is copied in).
    #[inline]
    fn set_top(&mut self, pair: EntryPair) {
        self.top = pair;
        self.top_in_q = false;
    }

    /// The top pair's registers, to be rewritten in place (a registered-read fill's pair is
    /// first copied in). Copying the pair out and back for a two-field change, as `set_top`
    /// would, made a 32-byte reload of freshly stored fields the costliest line of a
    /// sequential update.
    #[inline]
    fn top_pair_mut(&mut self) -> &mut EntryPair {
        if self.top_in_q {
            self.set_top(*self.ram.q());
        }
        &mut self.top
    }

    /// One clock edge of the RAM's ports.
    #[inline]
    fn ram_clock(&mut self, write: Option<(usize, EntryPair)>, read: Option<usize>) {
        if let Err(e) = self.ram.clock(write, read) {
            self.misuse(e);
        }
    }

    /// Pop the TOS; from an odd `sp >= 3` the pair below is filled from the RAM.
    fn pop(&mut self) {
        if self.sp == 0 {
            self.misuse("pop of an empty stack");
        }
        if self.sp % 2 == 1 && self.sp >= 3 {
            let below = self.top_pair_index() - 1;
            if self.ram.is_registered() {
                // The read happens at this edge; the top pair is the read data from now on.
                self.ram_clock(None, Some(below));
                self.top_in_q = true;
            } else {
                match self.ram.read_async(below) {
                    Ok(pair) => self.set_top(pair),
                    Err(e) => self.misuse(e),
                }
                self.ram_clock(None, Some(below));
            }
        }
        self.sp -= 1;
    }

    /// A divergence: the TOS (entry `sp-1`) becomes `tos`, `push` lands at `sp`, `sp+1`.
    /// The entries past the top pair's end spill it to RAM word `P` (one write).
    fn diverge(&mut self, tos: StackEntry, push: &[StackEntry]) {
        let sp = self.sp;
        let new_sp = sp + push.len() as u32;
        if new_sp > self.params.depth {
            self.misuse(format!(
                "push to depth {new_sp} of a {}-entry stack",
                self.params.depth
            ));
        }
        let mut pair = *self.top_pair();
        pair[((sp - 1) & 1) as usize] = tos;
        let p = self.top_pair_index();
        // Entries sp.. in order; those in pair P complete it, the rest start pair P+1.
        let mut next = EntryPair::default();
        for (k, e) in push.iter().enumerate() {
            let i = sp + k as u32;
            if (i / 2) as usize == p {
                pair[(i & 1) as usize] = *e;
            } else {
                next[(i & 1) as usize] = *e;
            }
        }
        if (new_sp - 1) / 2 != sp.saturating_sub(1) / 2 {
            self.ram_clock(Some((p, pair)), None);
            self.set_top(next);
        } else {
            self.set_top(pair);
        }
        self.sp = new_sp;
    }

    /// Convenience for the GPU model: launch a warp (one cycle with `launch_valid`).
    pub fn launch(&mut self, pc: u32, mask: u64) {
        self.tick(&SpeInputs::launch(pc, mask));
    }
}

// ---- the unit's single declaration (design.md §3) ----

/// Functional coverage of the SPE stack (co-simulation steers its random stimulus towards
/// the bins it has not hit): every depth up to full, overflow and the illegal update, every
/// update kind and event, a launch coinciding with an update (the launch wins), two pops in
/// consecutive cycles (nested reconvergence points back to back), reset with entries on the
/// stack and with each sticky error flag raised (reset must clear it).
pub(crate) const STACK_COVERAGE: [Cover; 9] = [
    Cover::Values {
        port: "depth",
        max: "DEPTH",
    },
    Cover::ValuesWhen {
        port: "upd_kind",
        max: "3",
        when: "upd_valid",
    },
    Cover::Raised(&["err_overflow", "err_pc"]),
    Cover::EveryEvent,
    Cover::Together(&["launch_valid", "upd_valid"]),
    Cover::BackToBack("ev_pop"),
    Cover::ResetWhile("depth"),
    Cover::ResetWhile("err_overflow"),
    Cover::ResetWhile("err_pc"),
];

crate::declare_unit! {
    /// The single description of `simt_stack_spe`.
    pub static SPE_DESC: SimtStackSpe = unit "simt_stack_spe" {
        summary: "per-warp single-path PDOM reconvergence stack",
        spec: "specs/reconvergence-dpe.md §2, §9.2, §9.4",
        // Both RAM read modes; even depths and an odd one (the top pair half used at
        // DEPTH), DEPTH=3 with a single RAM word.
        standard_sets: &[
            &[],
            &[("WARP_SIZE", 8), ("DEPTH", 4), ("PC_W", 16)],
            &[("WARP_SIZE", 64), ("DEPTH", 8), ("RAM_RD_REG", 0)],
            &[("WARP_SIZE", 8), ("DEPTH", 3), ("PC_W", 12), ("RAM_RD_REG", 0)],
        ],
        check: |_| Ok(()),
        gpu: |cfg| stack_gpu_use(cfg, crate::config::Reconvergence::Spe, &["sm.reconvergence=spe"]),
        localparams: spe_localparams,
        coverage: &STACK_COVERAGE,
        scaling: &[
            Scaling { param: "DEPTH", values: &[2, 4, 8, 16, 32, 64], base: &[] },
            Scaling { param: "WARP_SIZE", values: &[8, 16, 32, 64], base: &[] },
        ],
        // The seed's maximum observed SPE depth is 11 (L798): 11 entries of 96 bits.
        seed_costs: &[SeedCost {
            label: "stack storage per warp at the seed's maximum observed depth (11)",
            params: &[("DEPTH", 11)],
            relative_to: None,
            figure: CostFigure::Flops,
            seed: 1056.0,
            seed_basis: "bits: 11 entries x 96 (32-bit PC + 32-bit mask + 32-bit RPC); seed 001 L798",
        }],
        ports: spe_port,
    }
    /// Parameters of `simt_stack_spe` (spec §9.1; same names as the Verilog parameters).
    params SpeParams {
        warp_size: u32 = WARP_SIZE(32, 8..=64) "threads per warp: lanes and mask width",
        depth: u32 = DEPTH(16, 2..=64) "stack entries (A11)",
        pc_w: u32 = PC_W(32, 8..=32) "PC width in bits",
        /// Registered (block RAM) or asynchronous (LUT RAM) read of the entry RAM.
        ram_rd_reg: bool = RAM_RD_REG(1, 0..=1) "entry RAM read: 1 registered (block RAM, every FPGA), 0 asynchronous (LUT RAM)",
    }
    /// Inputs of one cycle (spec §9.2; the clock and `rst_n` are not fields).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    inputs SpeInputs {
        launch_valid: bool ["1"] "load the initial entry (clears the stack first)",
        launch_pc: u32 ["PC_W"] "first PC of the warp",
        launch_rpc: u32 ["PC_W"] "RPC of the bottom entry (END_PC)",
        launch_mask: u64 ["WARP_SIZE"] "initial active threads",
        upd_valid: bool ["1"] "the warp issued an instruction this cycle",
        upd_pc: u32 ["PC_W"] "PC of the issued instruction (must equal tos_pc)",
        upd_kind: u8 ["2"] "0 sequential, 1 branch, 2 jump, 3 exit",
        upd_taken: u64 ["WARP_SIZE"] "per-lane branch outcome / exiting lanes",
        upd_target: u32 ["PC_W"] "taken target",
        upd_next: u32 ["PC_W"] "fall-through PC",
        upd_rpc: u32 ["PC_W"] "the branch's IPDOM",
    }
    /// Registered outputs (functions of the state alone).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    registered SpeRegs {
        tos_valid: bool ["1"] "the TOS has live threads (schedulable)",
        tos_pc: u32 ["PC_W"] "PC of the TOS (0 when empty)",
        tos_rpc: u32 ["PC_W"] "RPC of the TOS (0 when empty)",
        tos_mask: u64 ["WARP_SIZE"] "live threads of the TOS",
        depth: u32 ["$clog2(DEPTH+1)"] "number of entries",
        err_overflow: bool ["1"] "sticky: a push did not fit",
        err_pc: bool ["1"] "sticky: upd_pc differed from tos_pc",
    }
    /// Combinational event outputs of one cycle.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    combinational SpeEvents {
        ev_push2: bool ["1"] "two entries pushed this cycle",
        ev_push1: bool ["1"] "one entry pushed this cycle",
        ev_pop: bool ["1"] "the TOS pops this cycle",
        ev_div: bool ["1"] "a divergent branch this cycle",
    }
    debug {
        dbg_stack ["DEPTH*(2*PC_W+WARP_SIZE)"]
            "entries 0..DEPTH-1, each {pc, rpc, mask}; entries at and above depth read 0"
            layout([entry: "DEPTH"] { mask: "WARP_SIZE", rpc: "PC_W", pc: "PC_W" }),
        dbg_done ["WARP_SIZE"] "threads that have exited (A12 v2)",
    }
}

/// How the GPU model instantiates the reconvergence stack of kind `kind` (both stacks'
/// registry entry): one per warp slot of every SM, `DEPTH` from `sm.stack_depth`, when
/// `sm.reconvergence` selects that kind (`set` says how to select it).
pub(crate) fn stack_gpu_use(
    cfg: &crate::config::GpuConfig,
    kind: crate::config::Reconvergence,
    set: &'static [&'static str],
) -> GpuUse {
    if cfg.sm.reconvergence != kind {
        return GpuUse::NotUsed { set };
    }
    if cfg.sm.compaction != crate::config::Compaction::None {
        // The CTA-wide stack of thread-block compaction replaces the per-warp stacks.
        return GpuUse::NotUsed {
            set: &["sm.compaction=none"],
        };
    }
    GpuUse::Instantiated {
        instances: "every warp slot of every SM",
        params: vec![
            ("WARP_SIZE", crate::exec::WARP_SIZE as u64, ""),
            ("DEPTH", cfg.sm.stack_depth as u64, "sm.stack_depth"),
            ("PC_W", 32, ""),
            ("RAM_RD_REG", 1, ""),
        ],
    }
}

impl SpeInputs {
    /// The inputs that launch a warp at `pc` with `mask` (bottom RPC `END_PC`).
    pub fn launch(pc: u32, mask: u64) -> SpeInputs {
        SpeInputs {
            launch_valid: true,
            launch_pc: pc,
            launch_rpc: END_PC,
            launch_mask: mask,
            ..Default::default()
        }
    }
}

/// A stack's inputs as a trace sink keeps them. Most recorded edges are sequential updates
/// (an ALU or memory instruction issued: `upd_pc` and `upd_next = upd_pc + 1`, nothing
/// else), which take one word: the PC and, for a dual-path stack, the side. Every other
/// value takes its port group's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackRecord<I>(pub I);

/// A stack unit's inputs with a sequential-update form (SPE and DPE).
pub trait SeqUpdate: Copy + PartialEq + RawRecord {
    /// The sequential update of the instruction at `pc` on `side`.
    fn seq(pc: u32, side: u8) -> Self;
    /// `(pc, side)` of a value that may be a sequential update.
    fn pc_side(&self) -> (u32, u8);
}

impl SeqUpdate for SpeInputs {
    #[inline(always)]
    fn seq(pc: u32, _side: u8) -> SpeInputs {
        SpeInputs {
            upd_valid: true,
            upd_pc: pc,
            upd_kind: UpdKind::Seq as u8,
            upd_next: pc.wrapping_add(1),
            ..Default::default()
        }
    }
    #[inline(always)]
    fn pc_side(&self) -> (u32, u8) {
        (self.upd_pc, 0)
    }
}

impl<I: SeqUpdate> StackRecord<I> {
    /// The compact form ([`RawRecord::compact`]) of the sequential update of the instruction
    /// at `pc` on `side` (0 or 1): the PC, and the side above its 32 bits.
    #[inline(always)]
    pub fn seq_payload(pc: u32, side: u8) -> u64 {
        debug_assert!(side < 2);
        pc as u64 | (side as u64) << 32
    }
}

impl<I: SeqUpdate> RawRecord for StackRecord<I> {
    #[inline(always)]
    fn pack(&self, out: &mut Vec<u64>) {
        self.0.pack(out)
    }
    fn unpack(words: &[u64]) -> (Self, usize) {
        let (v, n) = I::unpack(words);
        (StackRecord(v), n)
    }
    #[inline]
    fn packed_len(words: &[u64]) -> usize {
        I::packed_len(words)
    }
    /// [`StackRecord::seq_payload`] of a sequential update.
    #[inline(always)]
    fn compact(&self) -> Option<u64> {
        let (pc, side) = self.0.pc_side();
        (side < 2 && self.0 == I::seq(pc, side)).then(|| Self::seq_payload(pc, side))
    }
    /// One value per PC of a loop body: 99.9% of them recur on mandelbrot.
    const COMPACT_VALUES_RECUR: bool = true;
    fn from_compact(payload: u64) -> Self {
        StackRecord(I::seq(payload as u32, (payload >> 32) as u8))
    }
}

impl Unit for SimtStackSpe {
    crate::records_its_inputs!(as StackRecord);
    fn new(params: SpeParams) -> SimtStackSpe {
        SimtStackSpe::new(params)
    }
    fn reset(&mut self) {
        SimtStackSpe::reset(self)
    }
    fn registered(&self) -> SpeRegs {
        SpeRegs {
            tos_valid: self.tos_valid(),
            tos_pc: self.tos_pc(),
            tos_rpc: self.tos_rpc(),
            tos_mask: self.tos_mask(),
            depth: self.depth(),
            err_overflow: self.err_overflow,
            err_pc: self.err_pc,
        }
    }
    fn events(&self, inp: &SpeInputs) -> SpeEvents {
        SimtStackSpe::events(self, inp)
    }
    fn tick(&mut self, inp: &SpeInputs) -> SpeEvents {
        SimtStackSpe::tick(self, inp)
    }
    /// `dbg_stack`: entry i at bits `[i*ENTRY_W +: ENTRY_W]` as {pc, rpc, mask}, written a
    /// word at a time; the entries at and above depth read 0.
    fn debug_state(&self, ports: &mut [Bits]) {
        let (pc_w, ws) = (self.params.pc_w, self.params.warp_size);
        let mut dbg = ports[spe_port::dbg_stack].field_writer();
        for e in (0..self.sp).map(|i| self.entry(i)) {
            dbg.push(e.mask, ws);
            dbg.push(e.rpc as u64, pc_w);
            dbg.push(e.pc as u64, pc_w);
        }
        dbg.finish();
        ports[spe_port::dbg_done].set_u64(self.done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::declare::{PortGroup, UnitParams};

    fn upd(pc: u32, kind: UpdKind, taken: u64, target: u32, rpc: u32) -> SpeInputs {
        SpeInputs {
            upd_valid: true,
            upd_pc: pc,
            upd_kind: kind as u8,
            upd_taken: taken,
            upd_target: target,
            upd_next: pc + 1,
            upd_rpc: rpc,
            ..Default::default()
        }
    }

    fn stack4() -> SimtStackSpe {
        stack4_mode(true)
    }

    /// A 4-thread, 8-deep stack with the registered (`true`) or asynchronous RAM read.
    fn stack4_mode(ram_rd_reg: bool) -> SimtStackSpe {
        let mut s = SimtStackSpe::new(SpeParams {
            warp_size: 4,
            depth: 8,
            pc_w: 32,
            ram_rd_reg,
        });
        s.launch(0, 0b1111);
        s
    }

    fn snapshot(s: &SimtStackSpe) -> Vec<(u32, u32, u64)> {
        s.entries().iter().map(|e| (e.pc, e.rpc, e.mask)).collect()
    }

    /// Runs the warp to completion, returning the issued (pc, mask) sequence. `taken(pc)`
    /// gives the taken lanes of the branch at `pc`; `prog(pc)` gives (kind, target, rpc).
    fn run(
        s: &mut SimtStackSpe,
        prog: impl Fn(u32) -> (UpdKind, u32, u32),
        taken: impl Fn(u32) -> u64,
    ) -> (Vec<(u32, u64)>, u32) {
        let mut issued = vec![];
        let mut max_depth = s.depth();
        for _ in 0..1000 {
            if s.is_empty() {
                break;
            }
            if !s.tos_valid() {
                s.tick(&SpeInputs::default());
                continue;
            }
            let pc = s.tos_pc();
            issued.push((pc, s.tos_mask()));
            let (k, target, rpc) = prog(pc);
            s.tick(&upd(pc, k, taken(pc), target, rpc));
            assert!(!s.err_pc() && !s.err_overflow());
            max_depth = max_depth.max(s.depth());
        }
        (issued, max_depth)
    }

    /// Fig 2.6 layout of spec §2.8: A=0..2, B=3..5, C=6..8, D=9..11, E=12..14, F=15, G=16..18.
    fn fig26(pc: u32) -> (UpdKind, u32, u32) {
        match pc {
            2 => (UpdKind::Branch, 6, 16),
            5 => (UpdKind::Jump, 16, 0),
            8 => (UpdKind::Branch, 12, 15),
            11 => (UpdKind::Jump, 15, 0),
            18 => (UpdKind::Exit, 0, 0),
            _ => (UpdKind::Seq, 0, 0),
        }
    }
    fn fig26_taken(pc: u32) -> u64 {
        match pc {
            2 => 0b1100, // threads 2,3 go to C
            8 => 0b1000, // thread 3 goes to E
            18 => 0b1111,
            _ => 0,
        }
    }

    #[test]
    fn port_positions_are_generated_in_declaration_order() {
        assert_eq!(spe_port::COUNT, SPE_DESC.ports.len());
        for (i, p) in SPE_DESC.ports.iter().enumerate() {
            assert_eq!(SPE_DESC.port_index(p.name), Some(i));
        }
        assert_eq!(
            (spe_port::rst_n, spe_port::launch_valid, spe_port::upd_rpc),
            (0, 1, 11)
        );
        let p = SPE_DESC.params::<&str>(&[]).unwrap();
        let w = SPE_DESC.widths(&p);
        assert_eq!(w[spe_port::dbg_stack], 16 * 96);
        assert_eq!(w[spe_port::depth], 5);
        assert_eq!(SpeParams::default(), SpeParams::from_params(&p));
        assert_eq!(SpeParams::default().to_params().unwrap(), p);
    }

    #[test]
    fn generic_path_matches_typed_path() {
        let p = SPE_DESC
            .params(&[("WARP_SIZE", 8u64), ("DEPTH", 4)])
            .unwrap();
        let mut unit = (SPE_DESC.build)(&p);
        let mut ports = SPE_DESC.zero_ports(&p);
        let mut typed = SimtStackSpe::new(SpeParams::from_params(&p));
        ports[spe_port::rst_n].set_u64(1);
        let steps = [
            SpeInputs {
                launch_valid: true,
                launch_pc: 0,
                launch_rpc: END_PC,
                launch_mask: 0xff,
                ..Default::default()
            },
            upd(0, UpdKind::Branch, 0x0f, 6, 9),
            upd(1, UpdKind::Seq, 0, 0, 0),
        ];
        for inp in steps {
            inp.write_ports(&mut ports);
            unit.outputs(&mut ports);
            let ev = typed.events(&inp);
            assert_eq!(ports[spe_port::ev_div].to_u64() != 0, ev.ev_div);
            unit.tick(&ports);
            typed.tick(&inp);
        }
        unit.all_outputs(&mut ports);
        assert_eq!(ports[spe_port::depth].to_u64(), typed.depth() as u64);
        assert_eq!(ports[spe_port::tos_pc].to_u64(), typed.tos_pc() as u64);
        // dbg_stack entry 1 (the taken path) is {pc=6, rpc=9, mask=0x0f}; PC_W=32, WARP_SIZE=8.
        let entry_w = 2 * 32 + 8;
        let dbg = &ports[spe_port::dbg_stack];
        assert_eq!(dbg.field(entry_w, 8), 0x0f);
        assert_eq!(dbg.field(entry_w + 8, 32), 9);
        assert_eq!(dbg.field(entry_w + 40, 32), 6);
        assert_eq!(
            dbg.field(3 * entry_w, 64),
            0,
            "entries above depth read zero"
        );
        // reset through rst_n
        ports[spe_port::rst_n].set_u64(0);
        unit.tick(&ports);
        ports[spe_port::rst_n].set_u64(1);
        unit.outputs(&mut ports);
        assert_eq!(ports[spe_port::depth].to_u64(), 0);
    }

    /// The declared layout of `dbg_stack` decodes what the model packs: entry `i`'s `.pc`,
    /// `.rpc` and `.mask` are the model's entry `i` at every standard parameter set.
    #[test]
    fn dbg_stack_layout_names_the_model_entries() {
        for params in SPE_DESC.standard_params() {
            let mut s = SimtStackSpe::new(SpeParams::from_params(&params));
            let lanes = s.lanes;
            s.tick(&SpeInputs::launch(0, lanes));
            // Nested divergences: each peels the lowest live lane off to its own path.
            let mut pc = 0;
            while s.depth() + 2 <= s.params().depth && s.tos_mask().count_ones() > 1 {
                let taken = s.tos_mask() & s.tos_mask().wrapping_neg();
                s.tick(&upd(pc, UpdKind::Branch, taken, pc + 40, pc + 80));
                pc = s.tos_pc();
            }
            assert!(s.depth() >= 3, "{params}");
            let mut ports = SPE_DESC.zero_ports(&params);
            Unit::debug_state(&s, &mut ports);
            let layout = SPE_DESC.ports[spe_port::dbg_stack].layout.unwrap();
            let fields = layout
                .at(&params)
                .unwrap()
                .split(&ports[spe_port::dbg_stack]);
            for i in 0..s.depth() {
                let e = s.entry(i);
                let get = |f: &str| {
                    let name = format!(" entry {i} .{f}");
                    fields.iter().find(|(n, _)| *n == name).unwrap().1.to_u64()
                };
                // The RPC of the bottom entry is END_PC, cut to PC_W bits in the port.
                let pc_mask = crate::units::contract::low_mask(s.params().pc_w);
                assert_eq!(
                    (get("pc"), get("rpc"), get("mask")),
                    (e.pc as u64, e.rpc as u64 & pc_mask, e.mask),
                    "{params} entry {i}"
                );
            }
        }
    }

    #[test]
    fn worked_example_fig_2_6() {
        let mut s = stack4();
        assert_eq!(snapshot(&s), vec![(0, END_PC, 0b1111)]);
        s.tick(&upd(0, UpdKind::Seq, 0, 0, 0));
        s.tick(&upd(1, UpdKind::Seq, 0, 0, 0));
        let ev = s.tick(&upd(2, UpdKind::Branch, 0b1100, 6, 16));
        assert!(ev.ev_div && ev.ev_push2);
        // (b): TOS.PC <- G; push C; push B
        assert_eq!(
            snapshot(&s),
            vec![(16, END_PC, 0b1111), (6, 16, 0b1100), (3, 16, 0b0011)]
        );
        s.tick(&upd(3, UpdKind::Seq, 0, 0, 0));
        s.tick(&upd(4, UpdKind::Seq, 0, 0, 0));
        let ev = s.tick(&upd(5, UpdKind::Jump, 0, 16, 0));
        assert!(ev.ev_pop);
        assert_eq!(snapshot(&s), vec![(16, END_PC, 0b1111), (6, 16, 0b1100)]);
        s.tick(&upd(6, UpdKind::Seq, 0, 0, 0));
        s.tick(&upd(7, UpdKind::Seq, 0, 0, 0));
        s.tick(&upd(8, UpdKind::Branch, 0b1000, 12, 15));
        assert_eq!(
            snapshot(&s),
            vec![
                (16, END_PC, 0b1111),
                (15, 16, 0b1100),
                (12, 15, 0b1000),
                (9, 15, 0b0100)
            ]
        );
    }

    #[test]
    fn worked_example_counts() {
        for mode in [true, false] {
            let mut s = stack4_mode(mode);
            let (issued, max_depth) = run(&mut s, fig26, fig26_taken);
            // [derived] 19 warp instructions, max depth 4, 44 active lanes.
            assert_eq!(issued.len(), 19);
            assert_eq!(max_depth, 4);
            assert!(s.is_empty());
        }
        let mut s = stack4();
        let (issued, max_depth) = run(&mut s, fig26, fig26_taken);
        // [derived] 19 warp instructions, max depth 4, 44 active lanes.
        assert_eq!(issued.len(), 19);
        assert_eq!(max_depth, 4);
        let lanes: u32 = issued.iter().map(|(_, m)| m.count_ones()).sum();
        assert_eq!(lanes, 44);
        assert!(s.is_empty());
    }

    #[test]
    fn if_only_branch_pushes_one() {
        // 0: @p bra 3 (rpc 3); 1,2: body; 3: exit
        let mut s = stack4();
        let ev = s.tick(&upd(0, UpdKind::Branch, 0b0011, 3, 3));
        assert!(ev.ev_push1 && ev.ev_div);
        assert_eq!(snapshot(&s), vec![(3, END_PC, 0b1111), (1, 3, 0b1100)]);
        s.tick(&upd(1, UpdKind::Seq, 0, 0, 0));
        let ev = s.tick(&upd(2, UpdKind::Seq, 0, 0, 0));
        assert!(ev.ev_pop);
        assert_eq!(snapshot(&s), vec![(3, END_PC, 0b1111)]);
    }

    #[test]
    fn uniform_branches_do_not_push() {
        let mut s = stack4();
        let ev = s.tick(&upd(0, UpdKind::Branch, 0b1111, 5, 7));
        assert_eq!(ev, SpeEvents::default());
        assert_eq!(snapshot(&s), vec![(5, END_PC, 0b1111)]);
        s.tick(&upd(5, UpdKind::Branch, 0, 9, 7));
        assert_eq!(snapshot(&s), vec![(6, END_PC, 0b1111)]);
        // degenerate branch: target == fall-through
        s.tick(&upd(6, UpdKind::Branch, 0b0101, 7, 7));
        assert_eq!(snapshot(&s), vec![(7, END_PC, 0b1111)]);
    }

    #[test]
    fn loop_with_divergent_exit_is_bounded() {
        // 0: body; 1: @p bra 0 (loop back, rpc 2); 2: exit. Lane i iterates i+1 times.
        let mut s = stack4();
        let mut iter = [0u32; 4];
        let mut max_depth = 1;
        for _ in 0..100 {
            if s.is_empty() {
                break;
            }
            let pc = s.tos_pc();
            let m = s.tos_mask();
            match pc {
                0 => {
                    for (l, it) in iter.iter_mut().enumerate() {
                        if m >> l & 1 == 1 {
                            *it += 1;
                        }
                    }
                    s.tick(&upd(0, UpdKind::Seq, 0, 0, 0));
                }
                1 => {
                    let taken = (0..4)
                        .filter(|&l| m >> l & 1 == 1 && iter[l] <= l as u32)
                        .fold(0, |a, l| a | 1 << l);
                    s.tick(&upd(1, UpdKind::Branch, taken, 0, 2));
                }
                2 => {
                    assert_eq!(m, 0b1111, "all lanes reconverge after the loop");
                    s.tick(&upd(2, UpdKind::Exit, 0b1111, 0, 0));
                }
                _ => unreachable!(),
            }
            max_depth = max_depth.max(s.depth());
        }
        assert!(s.is_empty());
        assert_eq!(iter, [1, 2, 3, 4]);
        assert_eq!(
            max_depth, 2,
            "a divergent loop exit keeps one reconvergence entry"
        );
    }

    #[test]
    fn reuse_rule_when_ipdom_equals_tos_rpc() {
        let mut s = stack4();
        s.tick(&upd(0, UpdKind::Branch, 0b0011, 20, 20)); // if-only: push (1, 20, 1100)
        assert_eq!(snapshot(&s), vec![(20, END_PC, 0b1111), (1, 20, 0b1100)]);
        // nested branch with IPDOM 20 == TOS RPC: reuse TOS for taken, push fall-through
        let ev = s.tick(&upd(1, UpdKind::Branch, 0b1000, 5, 20));
        assert!(ev.ev_push1);
        assert_eq!(
            snapshot(&s),
            vec![(20, END_PC, 0b1111), (5, 20, 0b1000), (2, 20, 0b0100)]
        );
    }

    #[test]
    fn early_exit_while_diverged_auto_pops() {
        // 0: @p bra 2 (rpc END); 1: exit (lanes 0,1); 2: ...; 3: exit
        let mut s = stack4();
        s.tick(&upd(0, UpdKind::Branch, 0b1100, 2, END_PC));
        // IPDOM == END == TOS RPC: reuse for taken group, push fall-through on top
        assert_eq!(snapshot(&s), vec![(2, END_PC, 0b1100), (1, END_PC, 0b0011)]);
        let ev = s.tick(&upd(1, UpdKind::Exit, 0b0011, 0, 0));
        assert!(ev.ev_pop);
        assert_eq!(s.done_mask(), 0b0011);
        assert_eq!((s.tos_pc(), s.tos_mask()), (2, 0b1100));
        s.tick(&upd(2, UpdKind::Seq, 0, 0, 0));
        s.tick(&upd(3, UpdKind::Exit, 0b1100, 0, 0));
        assert!(s.is_empty());
    }

    #[test]
    fn exited_threads_leave_parent_entries() {
        // Divergence with rpc 10; inside, the taken path exits entirely.
        let mut s = stack4();
        s.tick(&upd(0, UpdKind::Branch, 0b1100, 5, 10));
        assert_eq!(
            snapshot(&s),
            vec![(10, END_PC, 0b1111), (5, 10, 0b1100), (1, 10, 0b0011)]
        );
        s.tick(&upd(1, UpdKind::Jump, 0, 10, 0)); // fall-through path reaches rpc: pop
        s.tick(&upd(5, UpdKind::Exit, 0b1100, 0, 0)); // taken path exits: pop
        assert_eq!((s.tos_pc(), s.tos_mask()), (10, 0b0011));
        // partial exit: lane 0 exits, lane 1 continues
        s.tick(&upd(10, UpdKind::Exit, 0b0001, 0, 0));
        assert_eq!((s.tos_pc(), s.tos_mask()), (11, 0b0010));
    }

    #[test]
    fn empty_revealed_tos_pops_on_idle_cycle() {
        let mut s = stack4();
        s.tick(&upd(0, UpdKind::Branch, 0b0011, 4, 8)); // TOS->8, push (4,0011), (1,1100)
        s.tick(&upd(1, UpdKind::Exit, 0b1100, 0, 0)); // lanes 2,3 exit: pop
        s.tick(&upd(4, UpdKind::Exit, 0b0011, 0, 0)); // lanes 0,1 exit: pop
                                                      // reconvergence entry at 8 has no live threads left
        assert_eq!(s.depth(), 1);
        assert!(!s.tos_valid());
        let ev = s.tick(&SpeInputs::default());
        assert!(ev.ev_pop);
        assert!(s.is_empty());
    }

    #[test]
    fn overflow_is_sticky_and_drops_the_push() {
        let mut s = SimtStackSpe::new(SpeParams {
            warp_size: 4,
            depth: 2,
            pc_w: 32,
            ram_rd_reg: true,
        });
        s.launch(0, 0b1111);
        let before = snapshot(&s);
        s.tick(&upd(0, UpdKind::Branch, 0b0011, 5, 9));
        assert!(s.err_overflow());
        assert_eq!(snapshot(&s), before);
        s.tick(&SpeInputs::default());
        assert!(s.err_overflow(), "sticky");
    }

    #[test]
    fn pc_mismatch_sets_err_pc_and_holds_state() {
        let mut s = stack4();
        let before = snapshot(&s);
        s.tick(&upd(7, UpdKind::Seq, 0, 0, 0));
        assert!(s.err_pc());
        assert_eq!(snapshot(&s), before);
    }

    #[test]
    fn idle_cycles_hold_state() {
        let mut s = stack4();
        s.tick(&upd(0, UpdKind::Branch, 0b0011, 5, 9));
        let before = s.clone();
        for _ in 0..5 {
            assert_eq!(s.tick(&SpeInputs::default()), SpeEvents::default());
        }
        assert_eq!(s, before);
    }

    /// The pairs-in-RAM storage against a flat array of entries (the storage this replaced),
    /// on random traffic with both RAM read modes: after every edge the same outputs and the
    /// same logical entries, and at most one RAM access per cycle (checked by `DpRam`).
    #[test]
    fn pair_storage_equals_a_flat_entry_array_in_both_read_modes() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for depth in [2u32, 3, 4, 7, 8] {
            for mode in [true, false] {
                let p = SpeParams {
                    warp_size: 8,
                    depth,
                    pc_w: 8,
                    ram_rd_reg: mode,
                };
                let mut s = SimtStackSpe::new(p);
                let mut flat: Vec<StackEntry> = vec![];
                let (mut fills, mut spills) = (0, 0);
                for _ in 0..20_000 {
                    let r = next();
                    let inp = if r % 50 == 0 {
                        SpeInputs::launch((r >> 8) as u32 & 0xff, 0xff)
                    } else if r % 7 == 0 {
                        SpeInputs::default()
                    } else {
                        let pc = if r % 31 == 0 { 3 } else { s.tos_pc() };
                        upd(
                            pc,
                            UpdKind::from_bits((r >> 8) as u8),
                            r >> 16,
                            (r >> 24) as u32 & 0xff,
                            (r >> 32) as u32 & 0xff,
                        )
                    };
                    let inp = SpeInputs {
                        upd_next: inp.upd_next & 0xff,
                        ..inp
                    };
                    let action = s.decide(&inp);
                    let before = s.sp;
                    s.tick(&inp);
                    match action {
                        Action::Launch => {
                            flat = vec![StackEntry {
                                pc: inp.launch_pc,
                                rpc: inp.launch_rpc,
                                mask: inp.launch_mask & 0xff,
                            }]
                        }
                        Action::AutoPop | Action::Pop { .. } => {
                            flat.pop();
                            fills += (before % 2 == 1 && before >= 3) as u32;
                        }
                        Action::Continue { pc, mask } => {
                            let t = flat.last_mut().unwrap();
                            t.pc = pc;
                            t.mask = mask;
                        }
                        Action::Diverge { tos, push, n } => {
                            *flat.last_mut().unwrap() = tos;
                            flat.extend_from_slice(&push[..n as usize]);
                            spills += ((before + n as u32 - 1) / 2 != (before - 1) / 2) as u32;
                        }
                        _ => {}
                    }
                    assert_eq!(s.entries(), flat, "DEPTH={depth} registered={mode}");
                    assert_eq!(s.depth() as usize, flat.len());
                    let top = flat.last().copied().unwrap_or_default();
                    assert_eq!((s.tos_pc(), s.tos_rpc()), (top.pc, top.rpc));
                    assert_eq!(s.tos_mask(), top.mask & !s.done_mask());
                }
                if depth >= 4 {
                    assert!(
                        fills > 100 && spills > 100,
                        "{depth}: {fills} fills {spills} spills"
                    );
                }
            }
        }
    }

    #[test]
    #[should_panic(
        expected = "simt_stack_spe: illegal use of the stack storage: pop of an empty stack"
    )]
    fn a_pop_of_an_empty_stack_is_asserted() {
        let mut s = stack4();
        s.sp = 0;
        s.pop();
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn a_spill_past_the_ram_is_asserted() {
        // A state the ports cannot reach: the top pair claims to be past the RAM.
        let mut s = stack4();
        s.sp = 9;
        s.params.depth = 12;
        s.diverge(StackEntry::default(), &[StackEntry::default(); 2]);
    }

    #[test]
    fn launch_mid_run_restarts() {
        let mut s = stack4();
        s.tick(&upd(0, UpdKind::Branch, 0b0011, 5, 9));
        s.tick(&upd(7, UpdKind::Seq, 0, 0, 0));
        assert!(s.err_pc());
        s.launch(3, 0b0111);
        assert!(!s.err_pc());
        assert_eq!(snapshot(&s), vec![(3, END_PC, 0b0111)]);
    }
}
