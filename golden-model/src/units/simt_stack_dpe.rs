//! `simt_stack_dpe`: the per-warp dual-path-execution (DPE) reconvergence stack.
//!
//! Cycle-exact model of the RTL unit of specs/reconvergence-dpe.md §4 and §9.3, with the
//! normative next-state function of §9.4. This is the only implementation: the GPU model
//! instantiates it for every warp, and the RTL generator/co-simulator compare the Verilog
//! against it. Structure and conventions follow `simt_stack_spe` ([`super::simt_stack`]).
//!
//! Each entry holds two paths (slots) `L` and `R` and one shared RPC; the two slots of the
//! top-of-stack (TOS) entry are separately schedulable, so a warp can interleave the two
//! sides of a branch. Entries below the TOS are suspended (§4.6).
//!
//! Timing contract (§9.1): `l_*`, `r_*`, `tos_rpc`, `depth`, `num_paths` and the sticky
//! error flags are registered (a function of the state alone); the `ev_*` event outputs are
//! combinational from the state and this cycle's inputs. `tick` computes
//! `state(t+1) = f(state(t), in(t))`.
//!
//! Micro-architecture (design.md §5: storage in a RAM primitive, at most two storage ports
//! per cycle). A cycle writes at most one entry below the TOS (one push [L508]), so the TOS
//! entry is a register (`top`) and the entries below it, `0..sp-1`, are in a 1-write,
//! 1-read RAM of `RAM_WORDS = DEPTH-1` entry words ([`DpRam`], the model of `wf_ram_dp`):
//! - continue, invalidate, in-place, launch: the TOS register only;
//! - a push writes the parent (the TOS with its issuing slot updated) to RAM word `sp-1`
//!   (one write) and the child becomes the TOS register;
//! - a pop from `sp >= 2` fills the TOS register from RAM word `sp-2` (one read).
//!
//! With the asynchronous read (`RAM_RD_REG=0`, LUT RAM) the fill loads the register from
//! the word read in the same cycle; with the registered read (`RAM_RD_REG=1`, block RAM)
//! the read happens at the popping edge and the TOS *is* the RAM's read register afterwards
//! (`top_in_q`) until the next change of the TOS copies it into the register. A push and a
//! pop are never in one cycle, and a word is read back at a later edge than it was written,
//! so there is no read-during-write and no bypass. Every output is the same in both modes
//! and the same as the flop-array stack this replaced, cycle for cycle: **nothing changed
//! in timing**. `dbg_stack` is the logical stack reassembled from the register and the RAM.
//! Illegal use is asserted (a panic naming the unit; the RTL stops the simulation): the RAM
//! port checks of [`DpRam`], a pop of an empty stack, a push beyond `DEPTH`.
//!
//! Decisions where the seed is silent (each also in the spec's ambiguity table):
//! - A1: the bottom entry's RPC is `END_PC` (all ones, truncated to `PC_W`); the warp is
//!   finished when the stack is empty.
//! - A2: on divergence the fall-through group goes into slot L and the taken group into
//!   slot R. Which side issues is the scheduler's choice (`upd_side`).
//! - A3: each slot has an explicit valid bit (162 bits/entry at the default widths). An
//!   invalidated slot is written as all zeros (valid, pc and mask), so the debug dump holds
//!   no stale values that the RTL would have to reproduce.
//! - A4 (§9.4): a divergence whose IPDOM differs from the TOS RPC parks the diverging slot
//!   at the IPDOM and pushes one entry with both groups. When the IPDOM equals the TOS RPC:
//!   *in place* if the sibling slot has no live threads (both TOS slots are overwritten,
//!   no push: loops with a divergent exit do not grow the stack); *arrive-and-push* if the
//!   sibling is live (the diverging slot is invalidated and the new entry pushed). A group
//!   whose PC is the new IPDOM is not given a slot (its threads wait in the parent).
//! - A11: a push that does not fit raises the sticky `err_overflow` and leaves the stack
//!   unchanged (`ev_div` still pulses: the branch did diverge).
//! - A12 (v2, as SPE): threads may exit while diverged. The unit keeps a `done` mask of
//!   exited threads that is ANDed into every mask it reads. EXIT (kind 3) retires
//!   `upd_taken ∧ live`; the remaining live threads continue sequentially. A slot whose
//!   effective mask (`mask ∧ ¬done`) is empty is treated as invalid everywhere: its output
//!   valid reads 0, it cannot issue, and it counts as "no live sibling" for the pop and
//!   in-place rules. A TOS with no live slot pops itself on a cycle without an update, one
//!   entry per cycle.
//! - `upd_side` naming a slot that is not live sets the sticky `err_side`; `upd_pc`
//!   differing from that slot's PC (or any update on an empty stack) sets the sticky
//!   `err_pc`. Both hold the state.
//! - `l_pc`/`l_mask` (`r_pc`/`r_mask`) read 0 unless `l_valid` (`r_valid`); masks read
//!   through the done mask.
//! - `ev_slot_inval` pulses whenever the issuing slot's valid bit is cleared in an entry that
//!   stays on the stack: the path reached the RPC or exited with a live sibling, and the
//!   arrive-and-push case. `ev_sb_copy = ev_push | ev_pop | ev_inplace` (A5), auto-pops
//!   included.
//! - A launch clears the whole stack, the done mask and the error flags (a new warp); its
//!   single path goes into slot L. `launch_valid` wins over `upd_valid` in the same cycle.
//! - §9.4 lists "DPE depth ≤ SPE depth on the same run". That holds when DPE runs the
//!   fall-through side first, as SPE does, but not under every interleaving: an
//!   arrive-and-push while the sibling is live needs an entry that SPE, having finished the
//!   sibling already, does not (tests/integration/dpe_vs_spe.rs,
//!   `interleaving_can_cost_one_entry_more_than_spe`). The sizing bound of §2.7 (`n + 1`
//!   entries for `n` nested branch levels, a `goto join` counting as an if-only around the
//!   rest of its block) holds for every interleaving.
//! - PCs are `PC_W` bits: the typed path truncates every PC input to `PC_W` exactly as the
//!   ports do, so both paths behave the same on any value.

use super::contract::{clog2, low_mask, Bits, CostFigure, LocalParam, Params, Scaling, SeedCost};
use super::coverage::Cover;
use super::declare::Unit;
use super::ram::DpRam;
use super::simt_stack::{SeqUpdate, SpeInputs, StackRecord, UpdKind, STACK_COVERAGE};
use crate::ptx::ir::END_PC;

/// `upd_side` of the left slot (the fall-through side of a divergence, A2).
pub const SIDE_L: u8 = 0;
/// `upd_side` of the right slot (the taken side of a divergence, A2).
pub const SIDE_R: u8 = 1;

impl DpeParams {
    /// Bits of one slot in `dbg_stack`: `{mask, pc, valid}` (valid is the LSB).
    pub fn slot_width(&self) -> u32 {
        1 + self.pc_w + self.warp_size
    }

    /// Bits of one entry in `dbg_stack`: `{rpc, R slot, L slot}` (L is the LSB part).
    pub fn entry_width(&self) -> u32 {
        2 * self.slot_width() + self.pc_w
    }
}

/// One path of an entry: {PC, active mask} plus the explicit valid bit (A3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DpeSlot {
    pub valid: bool,
    pub pc: u32,
    pub mask: u64,
}

impl DpeSlot {
    /// An invalid slot: stored as all zeros (A3).
    pub const INVALID: DpeSlot = DpeSlot {
        valid: false,
        pc: 0,
        mask: 0,
    };

    pub fn path(pc: u32, mask: u64) -> DpeSlot {
        DpeSlot {
            valid: true,
            pc,
            mask,
        }
    }
}

/// One stack entry: `slots[SIDE_L]`, `slots[SIDE_R]` and the shared RPC (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DpeEntry {
    pub slots: [DpeSlot; 2],
    pub rpc: u32,
}

impl DpeEntry {
    pub fn l(&self) -> &DpeSlot {
        &self.slots[SIDE_L as usize]
    }
    pub fn r(&self) -> &DpeSlot {
        &self.slots[SIDE_R as usize]
    }
}

/// The constants `simt_stack_dpe`'s RTL shares with this model (rendered as localparams).
fn dpe_localparams(p: &Params) -> Vec<LocalParam> {
    let d = <DpeParams as super::declare::UnitParams>::from_params(p);
    let words = (d.depth - 1).max(1) as u64;
    vec![
        LocalParam::int(
            "SLOT_W",
            d.slot_width() as u64,
            "one slot {mask, pc, valid}",
        ),
        LocalParam::int(
            "ENTRY_W",
            d.entry_width() as u64,
            "one entry {rpc, R slot, L slot}, as in dbg_stack",
        ),
        LocalParam::int(
            "RAM_WORDS",
            words,
            "entry words of the RAM (entries below the TOS)",
        ),
        LocalParam::int(
            "RAM_ADDR_W",
            clog2(words + 1) as u64,
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

/// The state of one `simt_stack_dpe` instance (see the module docs for the layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimtStackDpe {
    params: DpeParams,
    /// Lane mask of the configured warp size.
    lanes: u64,
    /// Mask of `PC_W` bits.
    pc_mask: u64,
    /// The TOS register, unless `top_in_q`.
    top: DpeEntry,
    /// Registered read only: the TOS is the RAM's read data (loaded by the last fill).
    top_in_q: bool,
    /// Entries `0..sp-1` below the TOS.
    ram: DpRam<DpeEntry>,
    sp: u32,
    done: u64,
    err_overflow: bool,
    err_pc: bool,
    err_side: bool,
}

/// A group of threads continuing at one PC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    pc: u32,
    mask: u64,
}

/// What a cycle does, decided from the state and inputs (shared by `events` and `tick`).
/// "The slot" is the TOS slot named by `upd_side`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    None,
    Launch,
    /// Cycle without an update and a TOS with no live slot: pop it (A12).
    AutoPop,
    ErrPc,
    ErrSide,
    /// A divergence whose push does not fit (A11).
    Overflow,
    /// The slot continues at `pc` with `mask`; `retire` lanes exited.
    Continue {
        pc: u32,
        mask: u64,
        retire: u64,
    },
    /// The slot reached the RPC (or all its threads exited) and its sibling is live.
    Invalidate {
        retire: u64,
    },
    /// The slot reached the RPC (or all its threads exited) and its sibling is not live.
    Pop {
        retire: u64,
    },
    /// Divergence: the slot becomes `parent_slot` (parked at the new RPC, or invalid for
    /// arrive-and-push) and `child` is pushed.
    Push {
        parent_slot: DpeSlot,
        child: DpeEntry,
    },
    /// Divergence at the TOS RPC with no live sibling: both TOS slots are overwritten (A4).
    InPlace {
        slots: [DpeSlot; 2],
    },
}

impl SimtStackDpe {
    pub fn new(params: DpeParams) -> SimtStackDpe {
        SimtStackDpe {
            params,
            lanes: low_mask(params.warp_size),
            pc_mask: low_mask(params.pc_w),
            top: DpeEntry::default(),
            top_in_q: false,
            ram: DpRam::new((params.depth - 1).max(1) as usize, params.ram_rd_reg),
            sp: 0,
            done: 0,
            err_overflow: false,
            err_pc: false,
            err_side: false,
        }
    }

    pub fn params(&self) -> DpeParams {
        self.params
    }

    /// Synchronous reset (`rst_n` low). The entry storage (register and RAM) is not
    /// reset: entries at and above `sp` are never read.
    pub fn reset(&mut self) {
        self.sp = 0;
        self.top_in_q = false;
        self.done = 0;
        self.err_overflow = false;
        self.err_pc = false;
        self.err_side = false;
    }

    // ---- registered outputs (functions of the state only) ----

    /// The TOS entry: the register, or the RAM's read data after a registered-read fill
    /// (meaningless when empty).
    #[inline]
    fn top(&self) -> &DpeEntry {
        if self.top_in_q {
            self.ram.q()
        } else {
            &self.top
        }
    }

    /// The TOS slot `side` is schedulable: the stack is not empty, the slot is valid and it
    /// has live (not exited) threads.
    #[inline]
    pub fn path_valid(&self, side: u8) -> bool {
        self.path_mask(side) != 0
    }
    /// Live threads of TOS slot `side` (0 unless valid).
    #[inline]
    pub fn path_mask(&self, side: u8) -> u64 {
        if self.sp == 0 {
            return 0;
        }
        let s = &self.top().slots[(side & 1) as usize];
        if s.valid {
            s.mask & !self.done
        } else {
            0
        }
    }
    /// PC of TOS slot `side` (0 unless [`Self::path_valid`]).
    #[inline]
    pub fn path_pc(&self, side: u8) -> u32 {
        if self.path_valid(side) {
            self.top().slots[(side & 1) as usize].pc
        } else {
            0
        }
    }

    pub fn l_valid(&self) -> bool {
        self.path_valid(SIDE_L)
    }
    pub fn l_pc(&self) -> u32 {
        self.path_pc(SIDE_L)
    }
    pub fn l_mask(&self) -> u64 {
        self.path_mask(SIDE_L)
    }
    pub fn r_valid(&self) -> bool {
        self.path_valid(SIDE_R)
    }
    pub fn r_pc(&self) -> u32 {
        self.path_pc(SIDE_R)
    }
    pub fn r_mask(&self) -> u64 {
        self.path_mask(SIDE_R)
    }
    /// RPC of the TOS (0 when empty).
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
    /// `l_valid + r_valid`: schedulable paths of the warp (Avg_Path statistic [L700]).
    #[inline]
    pub fn num_paths(&self) -> u32 {
        self.l_valid() as u32 + self.r_valid() as u32
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
    pub fn err_side(&self) -> bool {
        self.err_side
    }
    pub fn done_mask(&self) -> u64 {
        self.done
    }
    /// Entry `i` of the logical stack (`i < depth`), from the TOS register or the RAM
    /// (debug view: no port is used).
    pub fn entry(&self, i: u32) -> DpeEntry {
        assert!(i < self.sp, "entry {i} of a stack of depth {}", self.sp);
        if i + 1 == self.sp {
            *self.top()
        } else {
            *self.ram.peek(i as usize)
        }
    }

    /// Entries bottom..TOS, as stored (raw masks, not ANDed with the done mask). Debug
    /// state: entries at and above `depth` read as zero in `dbg_stack`.
    pub fn entries(&self) -> Vec<DpeEntry> {
        (0..self.sp).map(|i| self.entry(i)).collect()
    }

    /// Illegal use of the storage: a model (or RTL) bug, never a port value.
    #[cold]
    fn misuse(&self, what: impl std::fmt::Display) -> ! {
        panic!("simt_stack_dpe: illegal use of the stack storage: {what}")
    }

    /// One clock edge of the RAM's ports.
    #[inline]
    fn ram_clock(&mut self, write: Option<(usize, DpeEntry)>, read: Option<usize>) {
        if let Err(e) = self.ram.clock(write, read) {
            self.misuse(e);
        }
    }

    /// The register takes a new TOS (a registered-read fill's entry is copied in).
    #[inline]
    fn set_top(&mut self, e: DpeEntry) {
        self.top = e;
        self.top_in_q = false;
    }

    /// The TOS register, to be rewritten in place (a registered-read fill's entry is first
    /// copied in). Copying the entry out and back for a one-field change, as `set_top`
    /// would, made a reload of freshly stored fields the costliest step of an update.
    #[inline]
    fn top_mut(&mut self) -> &mut DpeEntry {
        if self.top_in_q {
            self.set_top(*self.ram.q());
        }
        &mut self.top
    }

    /// Pop the TOS; from `sp >= 2` the entry below is filled from RAM word `sp-2`.
    fn pop(&mut self) {
        if self.sp == 0 {
            self.misuse("pop of an empty stack");
        }
        if self.sp >= 2 {
            let below = self.sp as usize - 2;
            if self.ram.is_registered() {
                self.ram_clock(None, Some(below));
                self.top_in_q = true;
            } else {
                match self.ram.read_async(below) {
                    Ok(e) => self.set_top(e),
                    Err(e) => self.misuse(e),
                }
                self.ram_clock(None, Some(below));
            }
        }
        self.sp -= 1;
    }

    // ---- next-state function ----

    /// The inputs as the ports see them: every field truncated to its port width.
    fn truncated(&self, inp: &DpeInputs) -> DpeInputs {
        let pc = |v: u32| (v as u64 & self.pc_mask) as u32;
        DpeInputs {
            launch_valid: inp.launch_valid,
            launch_pc: pc(inp.launch_pc),
            launch_rpc: pc(inp.launch_rpc),
            launch_mask: inp.launch_mask & self.lanes,
            upd_valid: inp.upd_valid,
            upd_side: inp.upd_side & 1,
            upd_pc: pc(inp.upd_pc),
            upd_kind: inp.upd_kind & 3,
            upd_taken: inp.upd_taken & self.lanes,
            upd_target: pc(inp.upd_target),
            upd_next: pc(inp.upd_next),
            upd_rpc: pc(inp.upd_rpc),
        }
    }

    /// §9.4 for DPE; `inp` already truncated.
    fn decide(&self, inp: &DpeInputs) -> Action {
        if inp.launch_valid {
            return Action::Launch;
        }
        if !inp.upd_valid {
            let stuck = self.sp > 0 && !self.path_valid(SIDE_L) && !self.path_valid(SIDE_R);
            return if stuck { Action::AutoPop } else { Action::None };
        }
        if self.sp == 0 {
            return Action::ErrPc;
        }
        let side = inp.upd_side;
        if !self.path_valid(side) {
            return Action::ErrSide;
        }
        let t = self.top();
        let slot = t.slots[side as usize];
        if inp.upd_pc != slot.pc {
            return Action::ErrPc;
        }
        let sibling_live = self.path_valid(side ^ 1);
        let live = slot.mask & !self.done;
        let taken = inp.upd_taken & live;
        let kind = UpdKind::from_bits(inp.upd_kind);
        let retire = if kind == UpdKind::Exit { taken } else { 0 };

        // Groups of threads by next PC (§9.4): at most two, fall-through first.
        let group = |pc, mask| (mask != 0).then_some(Group { pc, mask });
        let (first, second) = match kind {
            UpdKind::Seq => (group(inp.upd_next, live), None),
            UpdKind::Jump => (group(inp.upd_target, live), None),
            UpdKind::Exit => (group(inp.upd_next, live & !taken), None),
            UpdKind::Branch => {
                let nt = group(inp.upd_next, live & !taken);
                let tk = group(inp.upd_target, taken);
                match (nt, tk) {
                    // Degenerate branch (target == fall-through): one group.
                    (Some(_), Some(_)) if inp.upd_next == inp.upd_target => {
                        (group(inp.upd_next, live), None)
                    }
                    (Some(nt), Some(tk)) => (Some(nt), Some(tk)),
                    (nt, None) => (nt, None),
                    (None, tk) => (tk, None),
                }
            }
        };

        // The slot's path has finished: it reached the RPC or all its threads exited.
        let finish = if sibling_live {
            Action::Invalidate { retire }
        } else {
            Action::Pop { retire }
        };
        match (first, second) {
            (None, _) => finish,
            (Some(g), None) if g.pc == t.rpc => finish,
            (Some(g), None) => Action::Continue {
                pc: g.pc,
                mask: g.mask,
                retire,
            },
            (Some(nt), Some(tk)) => {
                let ipdom = inp.upd_rpc;
                // A group already at the new IPDOM waits in the parent (if-only branch).
                let slot_of = |g: Group| {
                    if g.pc == ipdom {
                        DpeSlot::INVALID
                    } else {
                        DpeSlot::path(g.pc, g.mask)
                    }
                };
                let child = DpeEntry {
                    slots: [slot_of(nt), slot_of(tk)],
                    rpc: ipdom,
                };
                let parent_slot = if ipdom != t.rpc {
                    // [L508]: the diverging path resumes at the IPDOM when control returns.
                    DpeSlot::path(ipdom, slot.mask)
                } else if !sibling_live {
                    return Action::InPlace { slots: child.slots };
                } else {
                    // Arrive-and-push: these threads next meet the sibling at the TOS RPC.
                    DpeSlot::INVALID
                };
                if self.sp >= self.params.depth {
                    Action::Overflow
                } else {
                    Action::Push { parent_slot, child }
                }
            }
        }
    }

    /// Combinational event outputs for this cycle's inputs.
    pub fn events(&self, inp: &DpeInputs) -> DpeEvents {
        Self::events_of(self.decide(&self.truncated(inp)))
    }

    fn events_of(action: Action) -> DpeEvents {
        let mut ev = DpeEvents::default();
        match action {
            Action::AutoPop | Action::Pop { .. } => ev.ev_pop = true,
            Action::Invalidate { .. } => ev.ev_slot_inval = true,
            Action::Push { parent_slot, .. } => {
                ev.ev_push = true;
                ev.ev_div = true;
                ev.ev_slot_inval = !parent_slot.valid;
            }
            Action::InPlace { .. } => {
                ev.ev_inplace = true;
                ev.ev_div = true;
            }
            Action::Overflow => ev.ev_div = true,
            Action::None
            | Action::Launch
            | Action::ErrPc
            | Action::ErrSide
            | Action::Continue { .. } => {}
        }
        ev.ev_sb_copy = ev.ev_push | ev.ev_pop | ev.ev_inplace;
        ev
    }

    /// Clock edge: advance the state with this cycle's inputs; returns the cycle's events.
    pub fn tick(&mut self, inp: &DpeInputs) -> DpeEvents {
        let inp = self.truncated(inp);
        let action = self.decide(&inp);
        let side = inp.upd_side as usize;
        match action {
            Action::None => {}
            Action::Launch => {
                self.reset();
                self.set_top(DpeEntry {
                    slots: [
                        DpeSlot::path(inp.launch_pc, inp.launch_mask),
                        DpeSlot::INVALID,
                    ],
                    rpc: inp.launch_rpc,
                });
                self.sp = 1;
            }
            Action::AutoPop => self.pop(),
            Action::ErrPc => self.err_pc = true,
            Action::ErrSide => self.err_side = true,
            Action::Overflow => self.err_overflow = true,
            Action::Continue { pc, mask, retire } => {
                self.top_mut().slots[side] = DpeSlot::path(pc, mask);
                self.done |= retire;
            }
            Action::Invalidate { retire } => {
                self.top_mut().slots[side] = DpeSlot::INVALID;
                self.done |= retire;
            }
            Action::Pop { retire } => {
                self.pop();
                self.done |= retire;
            }
            Action::Push { parent_slot, child } => {
                if self.sp >= self.params.depth {
                    self.misuse(format!("push beyond DEPTH={}", self.params.depth));
                }
                let mut parent = *self.top();
                parent.slots[side] = parent_slot;
                self.ram_clock(Some((self.sp as usize - 1, parent)), None);
                self.set_top(child);
                self.sp += 1;
            }
            Action::InPlace { slots } => self.top_mut().slots = slots,
        }
        Self::events_of(action)
    }

    /// Convenience for the GPU model: launch a warp (one cycle with `launch_valid`).
    pub fn launch(&mut self, pc: u32, mask: u64) {
        self.tick(&DpeInputs {
            launch_valid: true,
            launch_pc: pc,
            launch_rpc: END_PC,
            launch_mask: mask,
            ..Default::default()
        });
    }
}

// ---- the unit's single declaration (design.md §3) ----

/// Functional coverage of the DPE stack: the SPE stack's bins (the same port names), plus
/// every number of live paths and the update naming a dead side, raised and met by reset.
static DPE_COVERAGE: [Cover; 12] = {
    let s = STACK_COVERAGE;
    [
        s[0],
        s[1],
        s[2],
        s[3],
        s[4],
        s[5],
        s[6],
        s[7],
        s[8],
        Cover::Values {
            port: "num_paths",
            max: "2",
        },
        Cover::Raised(&["err_side"]),
        Cover::ResetWhile("err_side"),
    ]
};

crate::declare_unit! {
    /// The single description of `simt_stack_dpe`.
    ///
    /// `dbg_stack` packs entry `i` at bits `[i*EW, (i+1)*EW)` with
    /// `EW = 3*PC_W + 2*WARP_SIZE + 2`; inside an entry, LSB first:
    /// `l_valid` (1), `l_pc` (PC_W), `l_mask` (WARP_SIZE), `r_valid` (1), `r_pc` (PC_W),
    /// `r_mask` (WARP_SIZE), `rpc` (PC_W) — in Verilog
    /// `{rpc, r_mask, r_pc, r_valid, l_mask, l_pc, l_valid}`. Masks are the stored masks (not
    /// ANDed with the done mask); invalid slots are stored as zeros (A3); entries at and above
    /// `depth` read 0.
    pub static DPE_DESC: SimtStackDpe = unit "simt_stack_dpe" {
        summary: "per-warp dual-path-execution reconvergence stack",
        spec: "specs/reconvergence-dpe.md §4, §9.3, §9.4",
        // Both RAM read modes; DEPTH=2: a single RAM word.
        standard_sets: &[
            &[],
            &[("WARP_SIZE", 8), ("DEPTH", 4), ("PC_W", 16)],
            &[("WARP_SIZE", 64), ("DEPTH", 6), ("RAM_RD_REG", 0)],
            &[("WARP_SIZE", 8), ("DEPTH", 2), ("PC_W", 12), ("RAM_RD_REG", 0)],
        ],
        check: |_| Ok(()),
        gpu: |cfg| {
            super::simt_stack::stack_gpu_use(cfg, crate::config::Reconvergence::Dpe, &["sm.reconvergence=dpe"])
        },
        localparams: dpe_localparams,
        coverage: &DPE_COVERAGE,
        scaling: &[
            Scaling { param: "DEPTH", values: &[2, 4, 8, 16, 32], base: &[] },
            Scaling { param: "WARP_SIZE", values: &[8, 16, 32, 64], base: &[] },
        ],
        // The seed's maximum observed DPE depth is 7 (L798): 7 entries of 160 bits.
        seed_costs: &[SeedCost {
            label: "stack storage per warp at the seed's maximum observed depth (7)",
            params: &[("DEPTH", 7)],
            relative_to: None,
            figure: CostFigure::Flops,
            seed: 1120.0,
            seed_basis: "bits: 7 entries x 160 (2 x (32-bit PC + 32-bit mask) + 32-bit RPC); seed 001 L798",
        }],
        ports: dpe_port,
    }
    /// Parameters of `simt_stack_dpe` (spec §9.1; same names as the Verilog parameters).
    params DpeParams {
        warp_size: u32 = WARP_SIZE(32, 8..=64) "threads per warp: lanes and mask width",
        depth: u32 = DEPTH(8, 2..=64) "stack entries (A11)",
        pc_w: u32 = PC_W(32, 8..=32) "PC width in bits",
        /// Registered (block RAM) or asynchronous (LUT RAM) read of the entry RAM.
        ram_rd_reg: bool = RAM_RD_REG(1, 0..=1) "entry RAM read: 1 registered (block RAM, every FPGA), 0 asynchronous (LUT RAM)",
    }
    /// Inputs of one cycle (spec §9.3; the clock and `rst_n` are not fields).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    inputs DpeInputs {
        launch_valid: bool ["1"] "load the initial entry (clears the stack first)",
        launch_pc: u32 ["PC_W"] "first PC of the warp",
        launch_rpc: u32 ["PC_W"] "RPC of the bottom entry (END_PC)",
        launch_mask: u64 ["WARP_SIZE"] "initial active threads (slot L)",
        upd_valid: bool ["1"] "the warp issued an instruction this cycle",
        /// Which slot issued: [`SIDE_L`] or [`SIDE_R`] (only bit 0 is used).
        upd_side: u8 ["1"] "which TOS slot issued: 0 L, 1 R (must be live, else err_side)",
        upd_pc: u32 ["PC_W"] "PC of the issued instruction (must equal that slot's pc)",
        upd_kind: u8 ["2"] "0 sequential, 1 branch, 2 jump, 3 exit",
        upd_taken: u64 ["WARP_SIZE"] "per-lane branch outcome / exiting lanes",
        upd_target: u32 ["PC_W"] "taken target",
        upd_next: u32 ["PC_W"] "fall-through PC",
        upd_rpc: u32 ["PC_W"] "the branch's IPDOM",
    }
    /// Registered outputs (functions of the state alone).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    registered DpeRegs {
        l_valid: bool ["1"] "TOS slot L has live threads (schedulable)",
        l_pc: u32 ["PC_W"] "PC of TOS slot L (0 unless l_valid)",
        l_mask: u64 ["WARP_SIZE"] "live threads of TOS slot L",
        r_valid: bool ["1"] "TOS slot R has live threads (schedulable)",
        r_pc: u32 ["PC_W"] "PC of TOS slot R (0 unless r_valid)",
        r_mask: u64 ["WARP_SIZE"] "live threads of TOS slot R",
        tos_rpc: u32 ["PC_W"] "RPC of the TOS (0 when empty)",
        depth: u32 ["$clog2(DEPTH+1)"] "number of entries",
        num_paths: u8 ["2"] "l_valid + r_valid (Avg_Path statistic)",
        err_overflow: bool ["1"] "sticky: a push did not fit",
        err_pc: bool ["1"] "sticky: upd_pc differed from the slot's pc, or update on an empty stack",
        err_side: bool ["1"] "sticky: upd_side named a slot that is not live",
    }
    /// Combinational event outputs of one cycle.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    combinational DpeEvents {
        /// One entry pushed (at most one per cycle [L508]).
        ev_push: bool ["1"] "one entry pushed this cycle",
        /// The TOS popped (both paths reached the RPC or exited, or an auto-pop).
        ev_pop: bool ["1"] "the TOS pops this cycle",
        /// In-place divergence (A4): both TOS slots overwritten, no push.
        ev_inplace: bool ["1"] "in-place divergence: TOS slots overwritten, no push (A4)",
        /// A divergent branch (also when the push overflowed).
        ev_div: bool ["1"] "a divergent branch this cycle",
        /// The issuing slot was invalidated in an entry that stays on the stack.
        ev_slot_inval: bool ["1"] "the issuing slot is invalidated in an entry that stays",
        /// `push | pop | inplace`: the scoreboard copies pending into shadow bits (A5).
        ev_sb_copy: bool ["1"] "ev_push | ev_pop | ev_inplace: scoreboard shadow copy (A5)",
    }
    debug {
        dbg_stack ["DEPTH*(3*PC_W+2*WARP_SIZE+2)"]
            "entries 0..DEPTH-1, each {rpc, r_mask, r_pc, r_valid, l_mask, l_pc, l_valid}; entries at and above depth read 0"
            layout([entry: "DEPTH"] {
                l_valid: "1", l_pc: "PC_W", l_mask: "WARP_SIZE",
                r_valid: "1", r_pc: "PC_W", r_mask: "WARP_SIZE",
                rpc: "PC_W",
            }),
        dbg_done ["WARP_SIZE"] "threads that have exited (A12 v2)",
    }
}

impl DpeInputs {
    /// The update of an SPE stack's inputs `spe` (the same `upd_*` fields) issued from
    /// `side`, with no launch: how the GPU model and the stimulus drive the dual-path stack
    /// with the single-path stack's update encoding.
    pub fn update_from(side: u8, spe: &SpeInputs) -> DpeInputs {
        DpeInputs {
            upd_valid: spe.upd_valid,
            upd_side: side,
            upd_pc: spe.upd_pc,
            upd_kind: spe.upd_kind,
            upd_taken: spe.upd_taken,
            upd_target: spe.upd_target,
            upd_next: spe.upd_next,
            upd_rpc: spe.upd_rpc,
            ..Default::default()
        }
    }
}

impl SeqUpdate for DpeInputs {
    #[inline(always)]
    fn seq(pc: u32, side: u8) -> DpeInputs {
        DpeInputs::update_from(side, &SpeInputs::seq(pc, 0))
    }
    #[inline(always)]
    fn pc_side(&self) -> (u32, u8) {
        (self.upd_pc, self.upd_side)
    }
}

impl Unit for SimtStackDpe {
    crate::records_its_inputs!(as StackRecord);
    fn new(params: DpeParams) -> SimtStackDpe {
        SimtStackDpe::new(params)
    }
    fn reset(&mut self) {
        SimtStackDpe::reset(self)
    }
    fn registered(&self) -> DpeRegs {
        DpeRegs {
            l_valid: self.l_valid(),
            l_pc: self.l_pc(),
            l_mask: self.l_mask(),
            r_valid: self.r_valid(),
            r_pc: self.r_pc(),
            r_mask: self.r_mask(),
            tos_rpc: self.tos_rpc(),
            depth: self.depth(),
            num_paths: self.num_paths() as u8,
            err_overflow: self.err_overflow(),
            err_pc: self.err_pc(),
            err_side: self.err_side(),
        }
    }
    fn events(&self, inp: &DpeInputs) -> DpeEvents {
        SimtStackDpe::events(self, inp)
    }
    fn tick(&mut self, inp: &DpeInputs) -> DpeEvents {
        SimtStackDpe::tick(self, inp)
    }
    fn debug_state(&self, ports: &mut [Bits]) {
        let p = self.params();
        let (pc_w, ws) = (p.pc_w, p.warp_size);
        let dbg = &mut ports[dpe_port::dbg_stack];
        dbg.clear();
        for (i, e) in (0..self.depth()).map(|i| (i as usize, self.entry(i))) {
            let mut lsb = i as u32 * p.entry_width();
            for slot in &e.slots {
                dbg.set_field(lsb, 1, slot.valid as u64);
                dbg.set_field(lsb + 1, pc_w, slot.pc as u64);
                dbg.set_field(lsb + 1 + pc_w, ws, slot.mask);
                lsb += p.slot_width();
            }
            dbg.set_field(lsb, pc_w, e.rpc as u64);
        }
        ports[dpe_port::dbg_done].set_u64(self.done_mask());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::contract::{Params, Role};
    use crate::units::declare::{PortGroup, UnitParams};

    const FULL: u64 = 0b1111;

    fn upd(side: u8, pc: u32, kind: UpdKind, taken: u64, target: u32, rpc: u32) -> DpeInputs {
        DpeInputs {
            upd_valid: true,
            upd_side: side,
            upd_pc: pc,
            upd_kind: kind as u8,
            upd_taken: taken,
            upd_target: target,
            upd_next: pc + 1,
            upd_rpc: rpc,
            ..Default::default()
        }
    }

    fn seq(side: u8, pc: u32) -> DpeInputs {
        upd(side, pc, UpdKind::Seq, 0, 0, 0)
    }

    fn stack_with(warp_size: u32, depth: u32) -> SimtStackDpe {
        let mut s = SimtStackDpe::new(DpeParams {
            warp_size,
            depth,
            pc_w: 32,
            ram_rd_reg: true,
        });
        s.launch(0, low_mask(warp_size));
        s
    }

    /// A 4-thread warp (the seed's examples), launched at PC 0.
    fn stack4() -> SimtStackDpe {
        stack_with(4, 8)
    }

    /// An entry: `l`/`r` are `Some((pc, mask))` for a valid slot, `None` for `-`.
    fn e(l: Option<(u32, u64)>, r: Option<(u32, u64)>, rpc: u32) -> DpeEntry {
        let slot =
            |s: Option<(u32, u64)>| s.map_or(DpeSlot::INVALID, |(pc, m)| DpeSlot::path(pc, m));
        DpeEntry {
            slots: [slot(l), slot(r)],
            rpc,
        }
    }

    fn ev(f: impl FnOnce(&mut DpeEvents)) -> DpeEvents {
        let mut ev = DpeEvents::default();
        f(&mut ev);
        ev.ev_sb_copy = ev.ev_push | ev.ev_pop | ev.ev_inplace;
        ev
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
    /// Masks of §2.8, T0 = bit 0: B={0,1}, C={2,3}, D={2}, E={3}.
    fn fig26_taken(pc: u32) -> u64 {
        match pc {
            2 => 0b1100,
            8 => 0b1000,
            18 => FULL,
            _ => 0,
        }
    }
    fn fig26_upd(side: u8, pc: u32) -> DpeInputs {
        let (kind, target, rpc) = fig26(pc);
        upd(side, pc, kind, fig26_taken(pc), target, rpc)
    }

    /// Issue log of one run: (side, pc, mask, num_paths at issue).
    type Issued = Vec<(u8, u32, u64, u32)>;

    /// Runs the warp to completion with the §4.7 path policy (ALT: when both slots are
    /// live, the side that did not issue last). `step(side, pc, mask)` gives the update.
    fn run_alt(
        s: &mut SimtStackDpe,
        mut step: impl FnMut(u8, u32, u64) -> DpeInputs,
    ) -> (Issued, u32) {
        let mut issued = vec![];
        let mut max_depth = s.depth();
        let mut last = SIDE_R;
        for _ in 0..1000 {
            if s.is_empty() {
                break;
            }
            let side = match (s.l_valid(), s.r_valid()) {
                (true, true) => last ^ 1,
                (true, false) => SIDE_L,
                (false, true) => SIDE_R,
                (false, false) => {
                    s.tick(&DpeInputs::default());
                    continue;
                }
            };
            let (pc, mask) = (s.path_pc(side), s.path_mask(side));
            issued.push((side, pc, mask, s.num_paths()));
            s.tick(&step(side, pc, mask));
            assert!(!s.err_pc() && !s.err_side() && !s.err_overflow(), "{s:?}");
            check_invariants(s);
            max_depth = max_depth.max(s.depth());
            last = side;
        }
        assert!(s.is_empty(), "warp did not finish");
        (issued, max_depth)
    }

    /// The declared layout of `dbg_stack` decodes what the model packs: every field of
    /// every entry below the depth is the model's, at every step of the Fig 2.6 walk
    /// (the stack grows to three entries and shrinks back).
    #[test]
    fn dbg_stack_layout_names_the_model_entries() {
        // WARP_SIZE=8 (the smallest valid parameter set) running the 4 threads of Fig 2.6.
        let mut s = SimtStackDpe::new(DpeParams {
            warp_size: 8,
            depth: 4,
            pc_w: 16,
            ram_rd_reg: true,
        });
        s.launch(0, FULL);
        let params = s.params().to_params().unwrap();
        let layout = DPE_DESC.ports[dpe_port::dbg_stack]
            .layout
            .unwrap()
            .at(&params)
            .unwrap();
        let mut ports = DPE_DESC.zero_ports(&params);
        let mut deepest = 0;
        let mut last = SIDE_R;
        while !s.is_empty() {
            Unit::debug_state(&s, &mut ports);
            let fields = layout.split(&ports[dpe_port::dbg_stack]);
            for i in 0..s.depth() {
                let e = s.entry(i);
                let get = |f: &str| {
                    let name = format!(" entry {i} .{f}");
                    fields.iter().find(|(n, _)| *n == name).unwrap().1.to_u64()
                };
                let (l, r) = (e.l(), e.r());
                assert_eq!(
                    [get("l_valid"), get("l_pc"), get("l_mask")],
                    [l.valid as u64, l.pc as u64, l.mask],
                    "entry {i}"
                );
                assert_eq!(
                    [get("r_valid"), get("r_pc"), get("r_mask"), get("rpc")],
                    // The bottom entry's END_PC, cut to PC_W bits in the port.
                    [
                        r.valid as u64,
                        r.pc as u64,
                        r.mask,
                        e.rpc as u64 & low_mask(16)
                    ],
                    "entry {i}"
                );
            }
            deepest = deepest.max(s.depth());
            let side = match (s.l_valid(), s.r_valid()) {
                (true, true) => last ^ 1,
                (true, false) => SIDE_L,
                _ => SIDE_R,
            };
            let pc = s.path_pc(side);
            s.tick(&fig26_upd(side, pc));
            last = side;
        }
        assert!(deepest >= 2, "the walk diverged ({deepest} entries)");
    }

    /// §9.4 properties of the stored stack.
    fn check_invariants(s: &SimtStackDpe) {
        for en in s.entries() {
            for sl in en.slots.iter().filter(|sl| sl.valid) {
                assert_ne!(sl.pc, en.rpc, "valid slot at its entry's rpc: {s:?}");
            }
            assert_eq!(en.l().mask & en.r().mask, 0, "L and R share threads: {s:?}");
        }
    }

    #[test]
    fn port_positions_match_the_port_list() {
        use dpe_port::*;
        let positions = [
            (rst_n, "rst_n"),
            (launch_valid, "launch_valid"),
            (launch_pc, "launch_pc"),
            (launch_rpc, "launch_rpc"),
            (launch_mask, "launch_mask"),
            (upd_valid, "upd_valid"),
            (upd_side, "upd_side"),
            (upd_pc, "upd_pc"),
            (upd_kind, "upd_kind"),
            (upd_taken, "upd_taken"),
            (upd_target, "upd_target"),
            (upd_next, "upd_next"),
            (upd_rpc, "upd_rpc"),
            (l_valid, "l_valid"),
            (l_pc, "l_pc"),
            (l_mask, "l_mask"),
            (r_valid, "r_valid"),
            (r_pc, "r_pc"),
            (r_mask, "r_mask"),
            (tos_rpc, "tos_rpc"),
            (depth, "depth"),
            (num_paths, "num_paths"),
            (ev_push, "ev_push"),
            (ev_pop, "ev_pop"),
            (ev_inplace, "ev_inplace"),
            (ev_div, "ev_div"),
            (ev_slot_inval, "ev_slot_inval"),
            (ev_sb_copy, "ev_sb_copy"),
            (err_overflow, "err_overflow"),
            (err_pc, "err_pc"),
            (err_side, "err_side"),
            (dbg_stack, "dbg_stack"),
            (dbg_done, "dbg_done"),
        ];
        for (pos, name) in positions {
            assert_eq!(DPE_DESC.port_index(name), Some(pos), "{name}");
        }
        assert_eq!(DPE_DESC.ports.len(), positions.len());
        assert_eq!(DPE_DESC.ports[rst_n].role, Role::Input);
        assert!(DPE_DESC.ports[..=upd_rpc]
            .iter()
            .all(|p| p.role == Role::Input));
        assert!(DPE_DESC.ports[upd_rpc + 1..]
            .iter()
            .all(|p| p.role != Role::Input));
        let p = DPE_DESC.params::<&str>(&[]).unwrap();
        let w = DPE_DESC.widths(&p);
        assert_eq!(w[dbg_stack], 8 * 162, "8 entries of 162 bits (A3)");
        assert_eq!(
            w[dbg_stack],
            DEPTH_PARAM_DEFAULT * DpeParams::default().entry_width()
        );
        assert_eq!(w[depth], 4);
        assert_eq!(w[num_paths], 2);
        for set in DPE_DESC.standard_params() {
            let dp = DpeParams::from_params(&set);
            assert_eq!(
                DPE_DESC.widths(&set)[dbg_stack],
                dp.depth * dp.entry_width()
            );
        }
    }
    const DEPTH_PARAM_DEFAULT: u32 = 8;

    #[test]
    fn worked_example_fig_3_3_cycle_by_cycle() {
        let mut s = stack4();
        let (b, c, d, g_e) = (0b0011, 0b1100, 0b0100, 0b1000);
        assert_eq!(s.entries(), [e(Some((0, FULL)), None, END_PC)]);
        // Cycles 0-1: L 0, L 1.
        assert_eq!(s.tick(&fig26_upd(SIDE_L, 0)), DpeEvents::default());
        s.tick(&fig26_upd(SIDE_L, 1));
        assert_eq!(s.entries(), [e(Some((2, FULL)), None, END_PC)]);
        // Cycle 2: BR_{B-C} pushes one entry with both sides (b).
        let ev2 = s.tick(&fig26_upd(SIDE_L, 2));
        assert_eq!(ev2, ev(|e| (e.ev_push, e.ev_div) = (true, true)));
        let e0 = e(Some((16, FULL)), None, END_PC);
        assert_eq!(s.entries(), [e0, e(Some((3, b)), Some((6, c)), 16)]);
        assert_eq!(s.num_paths(), 2);
        // Cycles 3-6: C and B interleave.
        for (side, pc) in [(SIDE_R, 6), (SIDE_L, 3), (SIDE_R, 7), (SIDE_L, 4)] {
            assert_eq!(s.tick(&fig26_upd(side, pc)), DpeEvents::default());
        }
        assert_eq!(s.entries(), [e0, e(Some((5, b)), Some((8, c)), 16)]);
        // Cycle 7: C diverges at BR_{D-E} while B is live: B suspended at 5 (c).
        let ev7 = s.tick(&fig26_upd(SIDE_R, 8));
        assert_eq!(ev7, ev(|e| (e.ev_push, e.ev_div) = (true, true)));
        let e1 = e(Some((5, b)), Some((15, c)), 16);
        assert_eq!(s.entries(), [e0, e1, e(Some((9, d)), Some((12, g_e)), 15)]);
        // Cycles 8-11: D and E interleave.
        for (side, pc) in [(SIDE_L, 9), (SIDE_R, 12), (SIDE_L, 10), (SIDE_R, 13)] {
            s.tick(&fig26_upd(side, pc));
        }
        assert_eq!(s.entries(), [e0, e1, e(Some((11, d)), Some((14, g_e)), 15)]);
        // Cycle 12: D's JMP 15 reaches the RPC: L invalid, no pop (d).
        let ev12 = s.tick(&fig26_upd(SIDE_L, 11));
        assert_eq!(ev12, ev(|e| e.ev_slot_inval = true));
        assert_eq!(s.entries(), [e0, e1, e(None, Some((14, g_e)), 15)]);
        assert_eq!((s.l_valid(), s.l_pc(), s.l_mask()), (false, 0, 0));
        // Cycle 13: E reaches F: both invalid, pop (e): B and F both schedulable.
        let ev13 = s.tick(&fig26_upd(SIDE_R, 14));
        assert_eq!(ev13, ev(|e| e.ev_pop = true));
        assert_eq!(s.entries(), [e0, e1]);
        assert_eq!(s.num_paths(), 2);
        // Cycle 14: B's JMP 16: L invalid.
        assert_eq!(
            s.tick(&fig26_upd(SIDE_L, 5)),
            ev(|e| e.ev_slot_inval = true)
        );
        assert_eq!(s.entries(), [e0, e(None, Some((15, c)), 16)]);
        // Cycle 15: F reaches G: pop (f).
        assert_eq!(s.tick(&fig26_upd(SIDE_R, 15)), ev(|e| e.ev_pop = true));
        assert_eq!(s.entries(), [e0]);
        // Cycles 16-18: G, then EXIT empties the stack.
        s.tick(&fig26_upd(SIDE_L, 16));
        s.tick(&fig26_upd(SIDE_L, 17));
        assert_eq!(s.tick(&fig26_upd(SIDE_L, 18)), ev(|e| e.ev_pop = true));
        assert!(s.is_empty());
        assert_eq!(s.done_mask(), FULL);
        assert!(!s.err_pc() && !s.err_side() && !s.err_overflow());
    }

    #[test]
    fn worked_example_alt_policy_reproduces_the_table() {
        let mut s = stack4();
        let (issued, max_depth) = run_alt(&mut s, |side, pc, _| fig26_upd(side, pc));
        let order: Vec<(u8, u32)> = issued.iter().map(|&(s, pc, _, _)| (s, pc)).collect();
        let (l, r) = (SIDE_L, SIDE_R);
        assert_eq!(
            order,
            [
                (l, 0),
                (l, 1),
                (l, 2),
                (r, 6),
                (l, 3),
                (r, 7),
                (l, 4),
                (r, 8),
                (l, 9),
                (r, 12),
                (l, 10),
                (r, 13),
                (l, 11),
                (r, 14),
                (l, 5),
                (r, 15),
                (l, 16),
                (l, 17),
                (l, 18)
            ]
        );
        // [derived] 19 instructions, 44 active lanes (as SPE), max depth 3 (SPE: 4).
        assert_eq!(max_depth, 3);
        let lanes: u32 = issued.iter().map(|i| i.2.count_ones()).sum();
        assert_eq!(lanes, 44);
    }

    #[test]
    fn nested_if_only_is_not_interleavable() {
        // BFS-style (Fig 3.7a): 0: @p bra 6 (rpc 6); 1: B; 2: @q bra 4 (rpc 4); 3: C;
        // 4, 5: D; 6: exit. Lanes 2,3 skip the outer body, lane 1 the inner one.
        let prog = |pc| match pc {
            0 => (UpdKind::Branch, 6, 6, 0b1100),
            2 => (UpdKind::Branch, 4, 4, 0b0010),
            6 => (UpdKind::Exit, 0, 0, FULL),
            _ => (UpdKind::Seq, 0, 0, 0),
        };
        let step = |side, pc| {
            let (k, t, r, taken) = prog(pc);
            upd(side, pc, k, taken, t, r)
        };
        let mut s = stack4();
        s.tick(&step(SIDE_L, 0));
        let e0 = e(Some((6, FULL)), None, END_PC);
        assert_eq!(s.entries(), [e0, e(Some((1, 0b0011)), None, 6)]);
        assert_eq!(s.num_paths(), 1, "the skip side waits in the parent");
        s.tick(&step(SIDE_L, 1));
        let ev2 = s.tick(&step(SIDE_L, 2));
        assert!(ev2.ev_push && ev2.ev_div && !ev2.ev_slot_inval);
        assert_eq!(
            s.entries(),
            [
                e0,
                e(Some((4, 0b0011)), None, 6),
                e(Some((3, 0b0001)), None, 4)
            ]
        );
        assert_eq!(s.tick(&step(SIDE_L, 3)), ev(|e| e.ev_pop = true));
        assert_eq!(s.entries(), [e0, e(Some((4, 0b0011)), None, 6)]);
        s.tick(&step(SIDE_L, 4));
        assert!(s.tick(&step(SIDE_L, 5)).ev_pop);
        assert_eq!(s.entries(), [e0]);

        let mut s = stack4();
        let (issued, max_depth) = run_alt(&mut s, |side, pc, _| step(side, pc));
        assert!(issued.iter().all(|i| i.3 == 1), "never two paths");
        assert_eq!(max_depth, 3);
    }

    /// Runs `prog` (pc -> (kind, target, rpc)) where branch lanes follow per-lane trip
    /// counts: lane `l` takes the branch at `pc` while it has done it fewer than
    /// `trips(pc, l)` times in a row (loop back edges), and the initial branch at pc 0 uses
    /// `first_taken`.
    fn run_loops(
        s: &mut SimtStackDpe,
        prog: impl Fn(u32) -> (UpdKind, u32, u32),
        first_taken: u64,
        trips: impl Fn(u32, u32) -> u32,
    ) -> (Issued, u32, [Vec<u32>; 4]) {
        let mut streak = [[0u32; 32]; 4];
        let mut paths: [Vec<u32>; 4] = Default::default();
        let (issued, max_depth) = run_alt(s, |side, pc, mask| {
            let (kind, target, rpc) = prog(pc);
            let mut taken = 0;
            for lane in 0..4 {
                if mask >> lane & 1 == 0 {
                    continue;
                }
                paths[lane as usize].push(pc);
                let t = match (kind, pc) {
                    (UpdKind::Branch, 0) => first_taken >> lane & 1 == 1,
                    (UpdKind::Branch, _) => {
                        let st = &mut streak[lane as usize][pc as usize];
                        let again = *st + 1 < trips(pc, lane);
                        *st = if again { *st + 1 } else { 0 };
                        again
                    }
                    (UpdKind::Exit, _) => true,
                    _ => false,
                };
                taken |= (t as u64) << lane;
            }
            upd(side, pc, kind, taken, target, rpc)
        });
        (issued, max_depth, paths)
    }

    #[test]
    fn if_else_with_a_loop_on_each_side() {
        // LUD-style (Fig 3.7b): 0: @p bra 4 (rpc 7); 1: body; 2: @c bra 1 (rpc 3); 3: jmp 7;
        // 4: body; 5: @d bra 4 (rpc 6); 6: nop; 7: exit. Lanes 2,3 take the else side.
        let prog = |pc| match pc {
            0 => (UpdKind::Branch, 4, 7),
            2 => (UpdKind::Branch, 1, 3),
            3 => (UpdKind::Jump, 7, 0),
            5 => (UpdKind::Branch, 4, 6),
            7 => (UpdKind::Exit, 0, 0),
            _ => (UpdKind::Seq, 0, 0),
        };
        let mut s = stack4();
        let (issued, max_depth, paths) = run_loops(&mut s, prog, 0b1100, |_, lane| lane % 2 + 1);
        // Lane l runs its loop l%2+1 times.
        assert_eq!(paths[0], [0, 1, 2, 3, 7]);
        assert_eq!(paths[1], [0, 1, 2, 1, 2, 3, 7]);
        assert_eq!(paths[2], [0, 4, 5, 6, 7]);
        assert_eq!(paths[3], [0, 4, 5, 4, 5, 6, 7]);
        assert!(issued.iter().any(|i| i.3 == 2), "the two loops interleave");
        assert_eq!(issued.last().map(|i| i.2), Some(FULL), "reconverged");
        // if/else level + one loop level at a time.
        assert_eq!(max_depth, 3);
    }

    #[test]
    fn divergent_loop_exit_runs_in_place_with_bounded_depth() {
        // 0: body; 1: @p bra 0 (rpc 2); 2: exit. Lane l iterates l+1 times.
        let prog = |pc| match pc {
            1 => (UpdKind::Branch, 0, 2),
            2 => (UpdKind::Exit, 0, 0),
            _ => (UpdKind::Seq, 0, 0),
        };
        let mut s = stack4();
        s.tick(&seq(SIDE_L, 0));
        // Iteration 1: lane 0 leaves; the loop gets its own entry.
        let ev1 = s.tick(&upd(SIDE_L, 1, UpdKind::Branch, 0b1110, 0, 2));
        assert!(ev1.ev_push);
        let e0 = e(Some((2, FULL)), None, END_PC);
        assert_eq!(s.entries(), [e0, e(None, Some((0, 0b1110)), 2)]);
        s.tick(&seq(SIDE_R, 0));
        // Iteration 2: lane 1 leaves: IPDOM == TOS RPC, no live sibling: in place.
        let ev2 = s.tick(&upd(SIDE_R, 1, UpdKind::Branch, 0b1100, 0, 2));
        assert_eq!(ev2, ev(|e| (e.ev_inplace, e.ev_div) = (true, true)));
        assert_eq!(s.entries(), [e0, e(None, Some((0, 0b1100)), 2)]);

        let mut s = stack4();
        let (issued, max_depth, paths) = run_loops(&mut s, prog, 0, |_, lane| lane + 1);
        for (lane, path) in paths.iter().enumerate() {
            assert_eq!(path.len(), 2 * (lane + 1) + 1);
        }
        assert_eq!(max_depth, 2, "one loop entry, however many iterations");
        assert_eq!(issued.len(), 9);
    }

    #[test]
    fn arrive_and_push_when_ipdom_is_the_tos_rpc_and_the_sibling_is_live() {
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        let e0 = e(Some((20, FULL)), None, END_PC);
        assert_eq!(
            s.entries(),
            [e0, e(Some((1, 0b0011)), Some((10, 0b1100)), 20)]
        );
        // `if (q) goto join` in the then-part: IPDOM 20 == TOS RPC, R is live.
        let ev1 = s.tick(&upd(SIDE_L, 1, UpdKind::Branch, 0b0001, 20, 20));
        assert_eq!(
            ev1,
            ev(|e| (e.ev_push, e.ev_div, e.ev_slot_inval) = (true, true, true))
        );
        assert_eq!(
            s.entries(),
            [
                e0,
                e(None, Some((10, 0b1100)), 20),
                e(Some((2, 0b0010)), None, 20)
            ]
        );
        assert_eq!(s.num_paths(), 1, "R is suspended below");
        // The child reaches the join: pop; then R reaches it: pop; full mask again.
        assert!(s.tick(&upd(SIDE_L, 2, UpdKind::Jump, 0, 20, 0)).ev_pop);
        assert_eq!(s.entries(), [e0, e(None, Some((10, 0b1100)), 20)]);
        assert!(s.tick(&upd(SIDE_R, 10, UpdKind::Jump, 0, 20, 0)).ev_pop);
        assert_eq!((s.l_pc(), s.l_mask()), (20, FULL));

        // Same with both groups off the join: the child gets both slots.
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        s.tick(&upd(SIDE_R, 10, UpdKind::Branch, 0b0100, 15, 20));
        assert_eq!(
            s.entries(),
            [
                e0,
                e(Some((1, 0b0011)), None, 20),
                e(Some((11, 0b1000)), Some((15, 0b0100)), 20)
            ]
        );
    }

    #[test]
    fn jump_straight_to_the_rpc() {
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        assert_eq!(
            s.tick(&upd(SIDE_L, 1, UpdKind::Jump, 0, 20, 0)),
            ev(|e| e.ev_slot_inval = true)
        );
        assert_eq!(
            s.tick(&upd(SIDE_R, 10, UpdKind::Jump, 0, 20, 0)),
            ev(|e| e.ev_pop = true)
        );
        assert_eq!(s.entries(), [e(Some((20, FULL)), None, END_PC)]);
        // A taken-everywhere branch straight to the RPC pops just the same.
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b0011, 20, 20));
        assert!(
            s.tick(&upd(SIDE_L, 1, UpdKind::Branch, 0b1100, 20, 20))
                .ev_pop
        );
        assert_eq!(s.depth(), 1);
    }

    #[test]
    fn degenerate_and_uniform_branches_do_not_diverge() {
        let mut s = stack4();
        // degenerate: target == fall-through, lanes split but all go to 1
        assert_eq!(
            s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b0101, 1, 9)),
            DpeEvents::default()
        );
        assert_eq!(s.entries(), [e(Some((1, FULL)), None, END_PC)]);
        // all taken
        assert_eq!(
            s.tick(&upd(SIDE_L, 1, UpdKind::Branch, FULL, 5, 9)),
            DpeEvents::default()
        );
        assert_eq!(s.entries(), [e(Some((5, FULL)), None, END_PC)]);
        // none taken
        assert_eq!(
            s.tick(&upd(SIDE_L, 5, UpdKind::Branch, 0, 9, 9)),
            DpeEvents::default()
        );
        assert_eq!(s.entries(), [e(Some((6, FULL)), None, END_PC)]);
        // taken bits of lanes outside the slot are ignored
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        assert_eq!(
            s.tick(&upd(SIDE_L, 1, UpdKind::Branch, 0b1100, 7, 9)),
            DpeEvents::default(),
            "lanes 2,3 are not in L: uniform not-taken"
        );
        assert_eq!(s.l_pc(), 2);
    }

    #[test]
    fn overflow_is_sticky_and_drops_the_push() {
        let mut s = stack_with(4, 2);
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        let before = s.clone();
        // A nested divergence with a new RPC needs a third entry.
        let ev1 = s.tick(&upd(SIDE_R, 10, UpdKind::Branch, 0b0100, 15, 18));
        assert_eq!(ev1, ev(|e| e.ev_div = true), "div, but no push and no copy");
        assert!(s.err_overflow());
        assert_eq!(s.entries(), before.entries());
        // Arrive-and-push overflows as well.
        let ev2 = s.tick(&upd(SIDE_L, 1, UpdKind::Branch, 0b0001, 20, 20));
        assert_eq!(ev2, ev(|e| e.ev_div = true));
        assert_eq!(s.entries(), before.entries());
        // In place needs no room.
        s.tick(&upd(SIDE_L, 1, UpdKind::Jump, 0, 20, 0));
        assert!(
            s.tick(&upd(SIDE_R, 10, UpdKind::Branch, 0b0100, 15, 20))
                .ev_inplace
        );
        s.tick(&DpeInputs::default());
        assert!(s.err_overflow(), "sticky");
    }

    #[test]
    fn idle_cycles_hold_state() {
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        let before = s.clone();
        for _ in 0..5 {
            assert_eq!(s.tick(&DpeInputs::default()), DpeEvents::default());
        }
        assert_eq!(s, before);
        // Inputs other than the valids are ignored while idle.
        let noise = DpeInputs {
            upd_valid: false,
            upd_side: 1,
            upd_pc: 10,
            upd_kind: 1,
            upd_taken: FULL,
            ..Default::default()
        };
        assert_eq!(s.tick(&noise), DpeEvents::default());
        assert_eq!(s, before);
    }

    #[test]
    fn back_to_back_updates_on_alternating_sides() {
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        for i in 0..5 {
            s.tick(&seq(SIDE_L, 1 + i));
            s.tick(&seq(SIDE_R, 10 + i));
        }
        assert_eq!(s.l_pc(), 6);
        assert_eq!(s.r_pc(), 15);
        assert_eq!(s.depth(), 2);
    }

    #[test]
    fn side_and_pc_errors_hold_state() {
        let mut s = stack4();
        let before = s.clone();
        s.tick(&seq(SIDE_R, 0));
        assert!(s.err_side() && !s.err_pc());
        assert_eq!(s.entries(), before.entries());
        s.tick(&seq(SIDE_L, 7));
        assert!(s.err_pc());
        assert_eq!(s.entries(), before.entries());
        // Any update on an empty stack is an err_pc, never a panic.
        let mut empty = SimtStackDpe::new(DpeParams::default());
        empty.tick(&upd(SIDE_R, 3, UpdKind::Branch, 1, 2, 3));
        assert!(empty.err_pc() && empty.is_empty());
    }

    #[test]
    fn launch_and_reset_mid_run_restart() {
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        s.tick(&seq(SIDE_L, 7));
        s.tick(&seq(SIDE_R, 7));
        assert!(s.err_pc() && !s.err_side());
        s.launch(3, 0b0111);
        assert!(!s.err_pc());
        assert_eq!(s.entries(), [e(Some((3, 0b0111)), None, END_PC)]);
        s.reset();
        assert!(s.is_empty() && s.entries().is_empty());
        assert_eq!((s.l_valid(), s.num_paths(), s.tos_rpc()), (false, 0, 0));
    }

    #[test]
    fn exit_while_diverged_and_auto_pop() {
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 20));
        // R's threads all exit: R invalid, L still live.
        let ev1 = s.tick(&upd(SIDE_R, 10, UpdKind::Exit, FULL, 0, 0));
        assert_eq!(ev1, ev(|e| e.ev_slot_inval = true));
        assert_eq!(s.done_mask(), 0b1100);
        // Partial exit: lane 0 leaves, lane 1 continues.
        s.tick(&upd(SIDE_L, 1, UpdKind::Exit, 0b0001, 0, 0));
        assert_eq!((s.l_pc(), s.l_mask()), (2, 0b0010));
        // The last lane exits: the entry pops, revealing the reconvergence slot with
        // no live threads; it is not schedulable and pops on the next idle cycle.
        assert!(s.tick(&upd(SIDE_L, 2, UpdKind::Exit, FULL, 0, 0)).ev_pop);
        assert_eq!(s.depth(), 1);
        assert_eq!((s.l_valid(), s.l_pc(), s.num_paths()), (false, 0, 0));
        s.tick(&seq(SIDE_L, 20));
        assert!(s.err_side(), "no slot may issue");
        assert_eq!(s.tick(&DpeInputs::default()), ev(|e| e.ev_pop = true));
        assert!(s.is_empty());
    }

    #[test]
    fn revealed_slot_without_live_threads_is_skipped() {
        let mut s = stack4();
        s.tick(&upd(SIDE_L, 0, UpdKind::Branch, 0b1100, 10, 30));
        // R diverges (new RPC 20); both its children exit.
        s.tick(&upd(SIDE_R, 10, UpdKind::Branch, 0b1000, 15, 20));
        s.tick(&upd(SIDE_L, 11, UpdKind::Exit, FULL, 0, 0));
        assert!(s.tick(&upd(SIDE_R, 15, UpdKind::Exit, FULL, 0, 0)).ev_pop);
        // R is stored valid (parked at 20) but has no live threads.
        assert_eq!(s.entries()[1], e(Some((1, 0b0011)), Some((20, 0b1100)), 30));
        assert_eq!((s.r_valid(), s.r_pc(), s.r_mask()), (false, 0, 0));
        assert_eq!(s.num_paths(), 1);
        // Idle: L is live, so no auto-pop.
        assert_eq!(s.tick(&DpeInputs::default()), DpeEvents::default());
        // L reaches the RPC with no live sibling: pop rather than invalidate.
        assert_eq!(
            s.tick(&upd(SIDE_L, 1, UpdKind::Jump, 0, 30, 0)),
            ev(|e| e.ev_pop = true)
        );
        assert_eq!((s.l_pc(), s.l_mask()), (30, 0b0011));
    }

    #[test]
    fn pcs_are_truncated_to_pc_w() {
        let mut s = SimtStackDpe::new(DpeParams {
            warp_size: 8,
            depth: 4,
            pc_w: 16,
            ram_rd_reg: true,
        });
        s.launch(0x1_0005, 0x1ff);
        assert_eq!((s.l_pc(), s.l_mask(), s.tos_rpc()), (5, 0xff, 0xffff));
        s.tick(&upd(SIDE_L, 0x7_0005, UpdKind::Jump, 0, 0xffff, 0));
        assert!(s.is_empty(), "a jump to END_PC (truncated) pops");
    }

    /// Drives the generic unit and a typed instance with the same ports and compares every
    /// output with the typed accessors.
    fn compare_generic(p: &Params, inputs: &[(bool, DpeInputs)]) {
        use dpe_port::*;
        let mut unit = (DPE_DESC.build)(p);
        let mut ports = DPE_DESC.zero_ports(p);
        let mut typed = SimtStackDpe::new(DpeParams::from_params(p));
        for (running, inp) in inputs {
            ports[rst_n].set_u64(*running as u64);
            inp.write_ports(&mut ports);
            unit.all_outputs(&mut ports);
            let ev = if *running {
                typed.events(&DpeInputs::read_ports(&ports))
            } else {
                DpeEvents::default()
            };
            let got = |i: usize| ports[i].to_u64();
            assert_eq!(
                [got(l_valid), got(l_pc), got(l_mask)],
                [typed.l_valid() as u64, typed.l_pc() as u64, typed.l_mask()]
            );
            assert_eq!(
                [got(r_valid), got(r_pc), got(r_mask)],
                [typed.r_valid() as u64, typed.r_pc() as u64, typed.r_mask()]
            );
            assert_eq!(
                [got(tos_rpc), got(depth), got(num_paths)],
                [
                    typed.tos_rpc() as u64,
                    typed.depth() as u64,
                    typed.num_paths() as u64
                ]
            );
            assert_eq!(
                [
                    got(ev_push),
                    got(ev_pop),
                    got(ev_inplace),
                    got(ev_div),
                    got(ev_slot_inval),
                    got(ev_sb_copy)
                ],
                [
                    ev.ev_push,
                    ev.ev_pop,
                    ev.ev_inplace,
                    ev.ev_div,
                    ev.ev_slot_inval,
                    ev.ev_sb_copy
                ]
                .map(u64::from)
            );
            assert_eq!(
                [got(err_overflow), got(err_pc), got(err_side), got(dbg_done)],
                [
                    typed.err_overflow() as u64,
                    typed.err_pc() as u64,
                    typed.err_side() as u64,
                    typed.done_mask()
                ]
            );
            let dp = typed.params();
            let dbg = &ports[dbg_stack];
            for i in 0..dp.depth {
                let base = i * dp.entry_width();
                let want = typed.entries().get(i as usize).copied().unwrap_or_default();
                let slot_at = |lsb: u32| DpeSlot {
                    valid: dbg.field(lsb, 1) == 1,
                    pc: dbg.field(lsb + 1, dp.pc_w) as u32,
                    mask: dbg.field(lsb + 1 + dp.pc_w, dp.warp_size),
                };
                let got = DpeEntry {
                    slots: [slot_at(base), slot_at(base + dp.slot_width())],
                    rpc: dbg.field(base + 2 * dp.slot_width(), dp.pc_w) as u32,
                };
                assert_eq!(got, want, "dbg_stack entry {i}");
            }
            unit.tick(&ports);
            if *running {
                typed.tick(&DpeInputs::read_ports(&ports));
            } else {
                typed.reset();
            }
        }
    }

    #[test]
    fn generic_path_matches_typed_path() {
        let p = DPE_DESC
            .params(&[("WARP_SIZE", 8u64), ("DEPTH", 4), ("PC_W", 16)])
            .unwrap();
        let launch = DpeInputs {
            launch_valid: true,
            launch_pc: 0,
            launch_rpc: END_PC,
            launch_mask: 0xff,
            ..Default::default()
        };
        let mut steps = vec![(true, launch)];
        steps.extend(
            [
                upd(SIDE_L, 0, UpdKind::Branch, 0xf0, 10, 20),
                upd(SIDE_R, 10, UpdKind::Branch, 0x30, 15, 18),
                seq(SIDE_L, 11),
                upd(SIDE_R, 15, UpdKind::Exit, 0xff, 0, 0),
                upd(SIDE_L, 12, UpdKind::Jump, 0, 18, 0),
                DpeInputs::default(),
            ]
            .map(|i| (true, i)),
        );
        steps.push((false, seq(SIDE_L, 1)));
        steps.push((true, DpeInputs::default()));
        compare_generic(&p, &steps);

        // Packing of dbg_stack: entry 1 after the first branch, LSB first
        // {l_valid, l_pc, l_mask, r_valid, r_pc, r_mask, rpc} (PC_W=16, WARP_SIZE=8).
        let mut unit = (DPE_DESC.build)(&p);
        let mut ports = DPE_DESC.zero_ports(&p);
        ports[dpe_port::rst_n].set_u64(1);
        for inp in [launch, upd(SIDE_L, 0, UpdKind::Branch, 0xf0, 10, 20)] {
            inp.write_ports(&mut ports);
            unit.tick(&ports);
        }
        DpeInputs::default().write_ports(&mut ports);
        unit.all_outputs(&mut ports);
        let dbg = &ports[dpe_port::dbg_stack];
        let b = 16 * 3 + 8 * 2 + 2; // entry 1
        let fields = [
            (0, 1),
            (1, 16),
            (17, 8),
            (25, 1),
            (26, 16),
            (42, 8),
            (50, 16),
        ];
        assert_eq!(
            fields.map(|(lsb, w)| dbg.field(b + lsb, w)),
            [1, 1, 0x0f, 1, 10, 0xf0, 20],
            "l_valid, l_pc, l_mask, r_valid, r_pc, r_mask, rpc"
        );
        assert_eq!(dbg.field(2 * b, 64), 0, "entries above depth read zero");
    }

    /// Random, mostly meaningless port values on every standard parameter set: never a
    /// panic, and the generic path always equals the typed path.
    #[test]
    fn arbitrary_inputs_never_panic() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut rnd = move || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for p in DPE_DESC.standard_params() {
            let mut steps = vec![];
            for _ in 0..3000 {
                let small = |v: u64| (v % 24) as u32;
                let r = rnd();
                let inp = DpeInputs {
                    launch_valid: r % 97 == 0,
                    launch_pc: small(rnd()),
                    launch_rpc: if r % 2 == 0 { END_PC } else { small(rnd()) },
                    launch_mask: rnd(),
                    upd_valid: r % 5 != 0,
                    upd_side: (rnd() % 4) as u8,
                    upd_pc: small(rnd()),
                    upd_kind: (rnd() % 8) as u8,
                    upd_taken: rnd(),
                    upd_target: small(rnd()),
                    upd_next: small(rnd()),
                    upd_rpc: small(rnd()),
                };
                steps.push((r % 211 != 0, inp));
            }
            compare_generic(&p, &steps);
        }
    }

    /// The register-plus-RAM storage against a flat array of entries (the storage this
    /// replaced), on random traffic with both RAM read modes: after every edge the same
    /// outputs and the same logical entries, and at most one RAM access per cycle (checked
    /// by `DpRam`).
    #[test]
    fn register_and_ram_storage_equals_a_flat_entry_array_in_both_read_modes() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for depth in [2u32, 3, 6] {
            for mode in [true, false] {
                let mut s = SimtStackDpe::new(DpeParams {
                    warp_size: 8,
                    depth,
                    pc_w: 8,
                    ram_rd_reg: mode,
                });
                let mut flat: Vec<DpeEntry> = vec![];
                let mut fills = 0;
                for _ in 0..20_000 {
                    let r = rnd();
                    let side = (r >> 40) as u8 & 1;
                    let inp = DpeInputs {
                        launch_valid: r % 61 == 0,
                        launch_pc: (r >> 8) as u32 & 0xff,
                        launch_rpc: END_PC,
                        launch_mask: 0xff,
                        upd_valid: r % 6 != 0,
                        upd_side: side,
                        upd_pc: if r % 29 == 0 { 7 } else { s.path_pc(side) },
                        upd_kind: (r >> 12) as u8,
                        upd_taken: r >> 20,
                        upd_target: (r >> 28) as u32 & 0xff,
                        upd_next: (r >> 36) as u32 & 0xff,
                        upd_rpc: (r >> 44) as u32 & 0xff,
                    };
                    let t = s.truncated(&inp);
                    let action = s.decide(&t);
                    let side = t.upd_side as usize;
                    s.tick(&inp);
                    match action {
                        Action::Launch => {
                            flat = vec![DpeEntry {
                                slots: [
                                    DpeSlot::path(t.launch_pc, t.launch_mask),
                                    DpeSlot::INVALID,
                                ],
                                rpc: t.launch_rpc,
                            }]
                        }
                        Action::AutoPop | Action::Pop { .. } => {
                            fills += (flat.len() >= 2) as u32;
                            flat.pop();
                        }
                        Action::Continue { pc, mask, .. } => {
                            flat.last_mut().unwrap().slots[side] = DpeSlot::path(pc, mask)
                        }
                        Action::Invalidate { .. } => {
                            flat.last_mut().unwrap().slots[side] = DpeSlot::INVALID
                        }
                        Action::Push { parent_slot, child } => {
                            flat.last_mut().unwrap().slots[side] = parent_slot;
                            flat.push(child);
                        }
                        Action::InPlace { slots } => flat.last_mut().unwrap().slots = slots,
                        _ => {}
                    }
                    assert_eq!(s.entries(), flat, "DEPTH={depth} registered={mode}");
                    let top = flat.last().copied().unwrap_or_default();
                    assert_eq!(s.tos_rpc(), top.rpc);
                    for k in [SIDE_L, SIDE_R] {
                        let slot = top.slots[k as usize];
                        let live = if slot.valid {
                            slot.mask & !s.done_mask()
                        } else {
                            0
                        };
                        assert_eq!(s.path_mask(k), live);
                    }
                }
                assert!(depth == 2 || fills > 100, "{depth}: {fills} fills");
            }
        }
    }

    #[test]
    #[should_panic(
        expected = "simt_stack_dpe: illegal use of the stack storage: pop of an empty stack"
    )]
    fn a_pop_of_an_empty_stack_is_asserted() {
        let mut s = stack4();
        s.sp = 0;
        s.pop();
    }
}
