//! `dpe_scoreboard`: the per-SM register scoreboard of dual-path execution, with a
//! left/right copy per warp and a shadow bit per register (spec §4.9, §9.5).
//!
//! Cycle-exact model of the RTL unit; the GPU model instantiates it once per SM and the
//! RTL generator/co-simulator compare the Verilog against it. With `DUAL=0` the same unit
//! is the baseline (SPE) scoreboard (A19).
//!
//! State, per (warp `w`, side `s`), one bit per architectural register:
//! `P[w][s]` (pending: a write is in flight) and `S[w][s]` (shadow: a write that was
//! pending when the warp's paths diverged or reconverged). Next state, exactly (A6, A7):
//!
//! ```text
//! P' = (P & ~REL) | RSV
//! S' = (S | (CPY[w] ? (P | RSV) : 0)) & ~REL
//! ```
//!
//! where `RSV`/`REL` are the OR of this cycle's reserve/release ports that name (w, s), and
//! `CPY[w]` is warp `w`'s copy request, applied to **both** sides (A5). A reserve and a
//! release of the same register in one cycle leave it pending (the new write) with no
//! shadow; `S ⊆ P` holds on each side forever (A7), so nothing waits on a bit no writeback
//! will clear.
//!
//! Output: `q_hazard[i]` (combinational) = OR over the queried valid registers `r` of
//! `P[w][s][r] | S[w][!s][r]` ([L516]); with `DUAL=0`, `P[w][s][r]` only. It reads
//! `state(t)`: a reserve in cycle t is seen by queries from cycle t+1.
//!
//! Decisions where the spec is silent:
//! - Several reserve ports (`NRSV`, one per issuing scheduler, A15) and release ports
//!   (`NWB`). The spec's single `cpy_valid`/`cpy_warp` pair is a `NUM_WARPS`-bit vector
//!   `cpy_valid` here, one bit per warp wired from that warp's stack `ev_sb_copy`: stacks
//!   auto-pop on idle cycles (A12), so any number of warps can copy in one cycle.
//! - `DUAL=0`: every side input is ignored (everything acts on side 0), copies are ignored
//!   and the shadow bits and side 1 stay zero; the debug ports keep their width.
//! - A warp index `>= NUM_WARPS` or a register index `>= NUM_REGS` (possible when they are
//!   not powers of two) selects nothing: such a reserve/release changes nothing (it still
//!   uses its port) and such a query register never hazards. `NUM_WARPS >= 2` so that warp
//!   fields are at least one bit wide.
//! - Storage (design.md §5, issue "RTL as it would be built"): the rows stay in flip-flops;
//!   no banked RAM of the primitive library (`wf_ram_dp`, one write and one read port)
//!   serves the ports at a reasonable cost. Per cycle every query port reads the P row of
//!   (w, s) and the S row of (w, !s) of any warp, and every reserve and release port
//!   read-modify-writes one row of any warp: `2*Q + NRSV + NWB` row reads and
//!   `NRSV + NWB` row writes (12 accesses at the defaults, 24 with the GPU's 8 + 8 ports)
//!   against two per bank. Banking by warp works only if the warps of one cycle fall in
//!   different banks, which the SM does not guarantee (two schedulers issue and several
//!   writebacks retire for any warps), and a bank conflict would have to stall the issue
//!   or the writeback: a change of timing that every GPU statistic would see. A copy
//!   (`cpy_valid`) updates the S rows of any number of warps in one cycle — a flash
//!   operation no RAM has. Replicating the rows per read port (the LUT-RAM way to add read
//!   ports) multiplies the storage by `2*Q + NRSV + NWB` and still leaves one write port.
//!   The per-row logic is small (`P' = (P & ~REL) | RSV`), so the state is
//!   `NUM_WARPS*2*NUM_REGS*2` flops; what changed is that the debug ports left the
//!   synthesizable module (the co-simulation wrapper reads the rows). Nothing changed in
//!   timing. A row's flops load only in a cycle where a port names the row or its warp
//!   copies (a clock enable in the RTL; the model's `apply_stage` likewise touches only
//!   those rows): the same next state, since an untouched row keeps its value.
//!
//! Debug ports `dbg_P`, `dbg_S`: bit `(warp*2 + side)*NUM_REGS + reg`.

use super::contract::{Bits, CostFigure, GpuUse, Scaling, SeedCost};
use super::coverage::Cover;
use super::declare::{PortGroup, Unit};
use super::trace_sink::RawRecord;

/// The most reserve, release or query ports a unit can have.
pub const MAX_PORTS: usize = 8;
/// Source registers per query (plus one destination).
pub const QUERY_SRCS: usize = 3;

/// One register of one (warp, side): the operand of a reserve or release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegRef {
    pub warp: u32,
    /// 0 = L, 1 = R (only bit 0 is used; ignored with `DUAL=0`).
    pub side: u8,
    pub reg: u32,
}

/// Operations staged on a fixed number of ports for the current cycle.
#[derive(Debug, Clone, Copy)]
pub struct PortStage {
    ops: [RegRef; MAX_PORTS],
    used: usize,
}

/// Equal when the same operations are staged (unused port slots are not compared).
impl PartialEq for PortStage {
    fn eq(&self, other: &PortStage) -> bool {
        self.staged() == other.staged()
    }
}
impl Eq for PortStage {}

impl PortStage {
    const EMPTY: PortStage = PortStage {
        ops: [RegRef {
            warp: 0,
            side: 0,
            reg: 0,
        }; MAX_PORTS],
        used: 0,
    };
    /// The staged operations, in port order.
    pub fn staged(&self) -> &[RegRef] {
        &self.ops[..self.used]
    }
    /// Stage `op` on the next free port of `ports`; `false` when they are all used.
    fn push(&mut self, ports: usize, op: RegRef) -> bool {
        if self.used >= ports.min(MAX_PORTS) {
            return false;
        }
        self.ops[self.used] = op;
        self.used += 1;
        true
    }
}

/// The inputs of one cycle (everything but the query ports): what [`DpeScoreboard::tick`]
/// applies, and what a trace records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreboardInputs {
    /// Reserve ports `0..rsv.staged().len()` (the rest invalid).
    pub rsv: PortStage,
    /// Release ports, likewise.
    pub rel: PortStage,
    /// `cpy_valid`: bit `w` copies warp `w`'s pending bits into its shadow bits.
    pub cpy: u64,
}

impl ScoreboardInputs {
    pub const IDLE: ScoreboardInputs = ScoreboardInputs {
        rsv: PortStage::EMPTY,
        rel: PortStage::EMPTY,
        cpy: 0,
    };
    /// No reserve, release or copy.
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.rsv.used == 0 && self.rel.used == 0 && self.cpy == 0
    }
}

/// As a trace sink keeps it: a head word with the reserve and release counts and whether a
/// copy follows, the operations in [`COMPACT_OP_BITS`] each (three in the head word, four
/// in each word after it), then `cpy` if not 0. A cycle with two reserves and two releases
/// is 2 words instead of the 232 bytes of the struct. An operation that does not fit (never
/// one of the GPU model's) makes the record `WIDE`: one word per operation.
impl RawRecord for ScoreboardInputs {
    #[inline]
    fn pack(&self, out: &mut Vec<u64>) {
        const WIDE: u64 = 1 << 9;
        let (rsv, rel) = (self.rsv.staged(), self.rel.staged());
        let head = rsv.len() as u64 | (rel.len() as u64) << 4 | ((self.cpy != 0) as u64) << 8;
        // Plain loops with one check at the end: this runs on the simulation thread at
        // every recorded cycle, and iterator adapters with a check per operation cost
        // twice the host instructions (measured with callgrind on mandelbrot).
        let (mut word, mut at, mut beyond) = (head, DENSE_HEAD_BITS, 0u32);
        let start = out.len();
        for stage in [rsv, rel] {
            for op in stage {
                if at + COMPACT_OP_BITS > 64 {
                    out.push(word);
                    (word, at) = (0, 0);
                }
                word |= op.compact_bits() << at;
                beyond |= op.beyond_compact();
                at += COMPACT_OP_BITS;
            }
        }
        if beyond == 0 {
            out.push(word);
        } else {
            out.truncate(start);
            out.push(head | WIDE);
            out.extend(rsv.iter().chain(rel).map(RegRef::pack));
        }
        self.pack_copy(out)
    }
    fn unpack(words: &[u64]) -> (ScoreboardInputs, usize) {
        let head = words[0];
        let (rsv, rel) = ((head & 0xf) as usize, (head >> 4 & 0xf) as usize);
        let mut v = ScoreboardInputs::IDLE;
        let (mut at, mut bit) = (0, DENSE_HEAD_BITS);
        let wide = head >> 9 & 1 != 0;
        for (stage, n) in [(&mut v.rsv, rsv), (&mut v.rel, rel)] {
            for _ in 0..n {
                stage.ops[stage.used] = if wide {
                    at += 1;
                    RegRef::unpack(words[at])
                } else {
                    if bit + COMPACT_OP_BITS > 64 {
                        (at, bit) = (at + 1, 0);
                    }
                    bit += COMPACT_OP_BITS;
                    RegRef::from_compact(words[at] >> (bit - COMPACT_OP_BITS))
                };
                stage.used += 1;
            }
        }
        at += 1;
        if head >> 8 & 1 != 0 {
            v.cpy = words[at];
            at += 1;
        }
        (v, at)
    }
    /// The count [`Self::unpack`] returns, from the head word alone (the trace thread files
    /// records under their instances without building the 216-byte value).
    #[inline]
    fn packed_len(words: &[u64]) -> usize {
        let head = words[0];
        let ops = (head & 0xf) + (head >> 4 & 0xf);
        let op_words = if head >> 9 & 1 != 0 {
            ops
        } else {
            // The words after the head that `unpack`'s walk over the operations steps into.
            let (mut extra, mut bit) = (0, DENSE_HEAD_BITS);
            for _ in 0..ops {
                if bit + COMPACT_OP_BITS > 64 {
                    (extra, bit) = (extra + 1, 0);
                }
                bit += COMPACT_OP_BITS;
            }
            extra
        };
        1 + op_words as usize + (head >> 8 & 1) as usize
    }
    /// Most cycles stage one reserve, one release or one of each and no copy: the counts
    /// (2 bits each), then each operation in [`COMPACT_OP_BITS`].
    #[inline(always)]
    fn compact(&self) -> Option<u64> {
        let (rsv, rel) = (self.rsv.staged(), self.rel.staged());
        if self.cpy != 0 || rsv.len() + rel.len() > 2 {
            return None;
        }
        let (mut payload, mut at, mut beyond) = (rsv.len() as u64 | (rel.len() as u64) << 2, 4, 0);
        for stage in [rsv, rel] {
            for op in stage {
                payload |= op.compact_bits() << at;
                beyond |= op.beyond_compact();
                at += COMPACT_OP_BITS;
            }
        }
        (beyond == 0).then_some(payload)
    }
    fn from_compact(payload: u64) -> ScoreboardInputs {
        let mut v = ScoreboardInputs::IDLE;
        let mut at = 4;
        for (stage, n) in [(&mut v.rsv, payload & 3), (&mut v.rel, payload >> 2 & 3)] {
            for _ in 0..n {
                stage.ops[stage.used] = RegRef::from_compact(payload >> at);
                stage.used += 1;
                at += COMPACT_OP_BITS;
            }
        }
        v
    }
}

/// Bits of an operation in a compact scoreboard record: the register (8), the side (1),
/// the warp (6): every operation at the largest NUM_REGS (256) and NUM_WARPS (64).
const COMPACT_OP_BITS: u32 = 15;
/// Bits of a dense record's head word before its first operation.
const DENSE_HEAD_BITS: u32 = 10;
const _: () = assert!(4 + 2 * COMPACT_OP_BITS <= super::trace_sink::COMPACT_PAYLOAD_BITS);

impl ScoreboardInputs {
    #[inline(always)]
    fn pack_copy(&self, out: &mut Vec<u64>) {
        if self.cpy != 0 {
            out.push(self.cpy);
        }
    }
}

impl RegRef {
    /// One word: the register, the side, the warp (below 2^24: NUM_WARPS is at most 64).
    #[inline(always)]
    fn pack(&self) -> u64 {
        debug_assert!(self.warp < 1 << 24);
        self.reg as u64 | (self.side as u64) << 32 | (self.warp as u64) << 40
    }
    fn unpack(w: u64) -> RegRef {
        RegRef {
            reg: w as u32,
            side: (w >> 32) as u8,
            warp: (w >> 40) as u32,
        }
    }
    /// Non-zero when the operation does not fit [`COMPACT_OP_BITS`] (never one of the GPU
    /// model's).
    #[inline(always)]
    fn beyond_compact(&self) -> u32 {
        self.reg >> 8 | (self.side >> 1) as u32 | self.warp >> 6
    }
    /// The operation in [`COMPACT_OP_BITS`] (meaningless when it is
    /// [beyond](RegRef::beyond_compact) them: the callers then discard it).
    #[inline(always)]
    fn compact_bits(&self) -> u64 {
        self.reg as u64 | (self.side as u64) << 8 | (self.warp as u64) << 9
    }
    fn from_compact(w: u64) -> RegRef {
        RegRef {
            reg: (w & 0xff) as u32,
            side: (w >> 8 & 1) as u8,
            warp: (w >> 9 & 0x3f) as u32,
        }
    }
}

/// A set of register indices below 256 (the largest NUM_REGS): bit `r % 64` of word `r / 64`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegMask(pub [u64; 4]);

impl RegMask {
    /// The set of `regs`; indices of 256 or more (out of range of every parameter set) are
    /// left out, as the scoreboard ignores them.
    pub fn of(regs: impl IntoIterator<Item = u32>) -> RegMask {
        let mut m = RegMask::default();
        for r in regs.into_iter().filter(|&r| r < 256) {
            m.0[r as usize / 64] |= 1 << (r % 64);
        }
        m
    }
}

/// The state of one `dpe_scoreboard` instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpeScoreboard {
    params: ScoreboardParams,
    /// `u64` words per (warp, side) row.
    row_words: usize,
    /// `P`, row `warp*2 + side`, `row_words` words each, register `r` at bit `r % 64` of
    /// word `r / 64`.
    pending: Vec<u64>,
    /// `S`, same layout as `pending`.
    shadow: Vec<u64>,
    /// This cycle's staged inputs, applied by `tick`.
    stage: ScoreboardInputs,
}

impl DpeScoreboard {
    pub fn new(params: ScoreboardParams) -> DpeScoreboard {
        let row_words = params.num_regs.div_ceil(64) as usize;
        let bits = params.num_warps as usize * 2 * row_words;
        DpeScoreboard {
            params,
            row_words,
            pending: vec![0; bits],
            shadow: vec![0; bits],
            stage: ScoreboardInputs::IDLE,
        }
    }

    pub fn params(&self) -> ScoreboardParams {
        self.params
    }

    /// Synchronous reset (`rst_n` low); also drops this cycle's staged operations.
    pub fn reset(&mut self) {
        self.pending.iter_mut().for_each(|w| *w = 0);
        self.shadow.iter_mut().for_each(|w| *w = 0);
        self.clear_stage();
    }

    #[inline]
    fn clear_stage(&mut self) {
        self.stage.rsv.used = 0;
        self.stage.rel.used = 0;
        self.stage.cpy = 0;
    }

    /// This cycle's inputs staged so far.
    #[inline]
    pub fn staged(&self) -> &ScoreboardInputs {
        &self.stage
    }

    /// The side a port input acts on (always 0 in SPE mode).
    #[inline]
    fn side_of(&self, side: u8) -> usize {
        if self.params.dual {
            (side & 1) as usize
        } else {
            0
        }
    }

    /// First word of row (warp, side), or `None` for a warp that does not exist.
    #[inline]
    fn row(&self, warp: u32, side: usize) -> Option<usize> {
        (warp < self.params.num_warps).then(|| self.row_start(warp, side))
    }

    /// First word of row (warp, side) of a warp that exists.
    #[inline(always)]
    fn row_start(&self, warp: u32, side: usize) -> usize {
        (warp as usize * 2 + side) * self.row_words
    }

    /// (word index, bit) of a register in row (warp, side), or `None` if out of range.
    #[inline]
    fn locate(&self, warp: u32, side: usize, reg: u32) -> Option<(usize, u64)> {
        if reg >= self.params.num_regs {
            return None;
        }
        let row = self.row(warp, side)?;
        Some((row + reg as usize / 64, 1u64 << (reg % 64)))
    }

    // ---- this cycle's inputs (applied by `tick`) ----

    /// Reserve `reg` of (warp, side) at issue. Returns `false`, dropping the request, when
    /// all `NRSV` reserve ports of this cycle are already used (the RTL has no more).
    #[must_use = "a reserve beyond NRSV per cycle is dropped"]
    pub fn reserve(&mut self, warp: u32, side: u8, reg: u32) -> bool {
        let ports = self.params.nrsv as usize;
        self.stage.rsv.push(ports, RegRef { warp, side, reg })
    }

    /// Release `reg` of (warp, side) at writeback (the side travelled with the
    /// instruction). Returns `false`, dropping the request, when all `NWB` release ports of
    /// this cycle are already used.
    #[must_use = "a release beyond NWB per cycle is dropped"]
    pub fn release(&mut self, warp: u32, side: u8, reg: u32) -> bool {
        let ports = self.params.nwb as usize;
        self.stage.rel.push(ports, RegRef { warp, side, reg })
    }

    /// Whether another release can be staged this cycle (a free writeback port).
    #[inline]
    pub fn release_port_free(&self) -> bool {
        self.stage.rel.used < (self.params.nwb as usize).min(MAX_PORTS)
    }

    /// Warp `warp`'s stack pushed, popped or diverged in place (`ev_sb_copy`): copy its
    /// pending bits, this cycle's reserves included, into its shadow bits on both sides.
    pub fn copy(&mut self, warp: u32) {
        if warp < self.params.num_warps {
            self.stage.cpy |= 1 << warp;
        }
    }

    /// Stage every input of `inp` (ports beyond this unit's `NRSV`/`NWB` are dropped, as
    /// by [`Self::reserve`] and [`Self::release`]).
    pub fn stage_inputs(&mut self, inp: &ScoreboardInputs) {
        for op in inp.rsv.staged() {
            let _ = self.reserve(op.warp, op.side, op.reg);
        }
        for op in inp.rel.staged() {
            let _ = self.release(op.warp, op.side, op.reg);
        }
        let mut cpy = inp.cpy;
        while cpy != 0 {
            self.copy(cpy.trailing_zeros());
            cpy &= cpy - 1;
        }
    }

    /// Clock edge: `state(t+1) = f(state(t), staged inputs)`, then clears the stage. A
    /// cycle with nothing staged leaves the state as it is and costs one test.
    #[inline]
    pub fn tick(&mut self) {
        if !self.stage.is_idle() {
            self.apply_stage();
        }
    }

    fn apply_stage(&mut self) {
        let (stage, pending, shadow) = (&self.stage, &mut self.pending, &mut self.shadow);
        let (rsv, rel, cpy) = (&stage.rsv, &stage.rel, stage.cpy);
        let p = &self.params;
        let row_words = self.row_words;
        let side_mask = p.dual as u8;
        // (word, bit) of an operand, `None` out of range (as `locate`).
        let at = |op: &RegRef| -> Option<(usize, u64)> {
            if op.warp >= p.num_warps || op.reg >= p.num_regs {
                return None;
            }
            let row = (op.warp as usize * 2 + (op.side & side_mask) as usize) * row_words;
            Some((row + op.reg as usize / 64, 1u64 << (op.reg % 64)))
        };
        // S |= P | RSV for the copying warps, both sides, before P and S change.
        if p.dual && cpy != 0 {
            let mut warps = cpy;
            while warps != 0 {
                let warp = warps.trailing_zeros() as usize;
                warps &= warps - 1;
                let first = warp * 2 * row_words;
                for i in first..first + 2 * row_words {
                    shadow[i] |= pending[i];
                }
            }
            for op in rsv.staged() {
                if op.warp < 64 && cpy >> op.warp & 1 == 1 {
                    if let Some((w, bit)) = at(op) {
                        shadow[w] |= bit;
                    }
                }
            }
        }
        // Release clears P and S; a reserve in the same cycle sets P again.
        for op in rel.staged() {
            if let Some((w, bit)) = at(op) {
                pending[w] &= !bit;
                shadow[w] &= !bit;
            }
        }
        for op in rsv.staged() {
            if let Some((w, bit)) = at(op) {
                pending[w] |= bit;
            }
        }
        self.clear_stage();
    }

    // ---- outputs (functions of state(t)) ----

    /// Would an instruction of (warp, side) reading or writing `regs` hit a hazard:
    /// own pending bit or the other side's shadow bit ([L516]). Takes register lists of
    /// any integer type.
    pub fn hazard<R: Copy + Into<u32>>(&self, warp: u32, side: u8, regs: &[R]) -> bool {
        self.hazard_mask(warp, side, &RegMask::of(regs.iter().map(|&r| r.into())))
    }

    /// [`Self::hazard`] of the registers in `regs` (the GPU model decodes each
    /// instruction's set once): the scoreboard's hottest query, a few word operations.
    #[inline(always)]
    pub fn hazard_mask(&self, warp: u32, side: u8, regs: &RegMask) -> bool {
        let side = self.side_of(side);
        let Some(own) = self.row(warp, side) else {
            return false;
        };
        // Row bits at or above NUM_REGS are never set, so a register out of range hits
        // nothing (as in the RTL, where no row bit matches it). One OR over the row's words
        // rather than a zip of three slices with an early exit: rows are one to four words,
        // and this is the SM's hottest query (measured with callgrind on kmeans).
        let words = self.row_words.min(regs.0.len());
        let pending = &self.pending[own..own + words];
        let mut hit = 0;
        if self.params.dual {
            let other = self.row_start(warp, side ^ 1);
            let shadow = &self.shadow[other..other + words];
            for ((&p, &s), &q) in pending.iter().zip(shadow).zip(&regs.0) {
                hit |= (p | s) & q;
            }
        } else {
            for (&p, &q) in pending.iter().zip(&regs.0) {
                hit |= p & q;
            }
        }
        hit != 0
    }

    /// No pending bit anywhere (so no shadow bit either, `S ⊆ P`).
    pub fn is_clear(&self) -> bool {
        self.pending.iter().all(|&w| w == 0)
    }

    /// `P[warp][side][reg]`.
    pub fn is_pending(&self, warp: u32, side: u8, reg: u32) -> bool {
        self.locate(warp, self.side_of(side), reg)
            .is_some_and(|(w, bit)| self.pending[w] & bit != 0)
    }

    /// `S[warp][side][reg]`.
    pub fn is_shadow(&self, warp: u32, side: u8, reg: u32) -> bool {
        self.locate(warp, self.side_of(side), reg)
            .is_some_and(|(w, bit)| self.shadow[w] & bit != 0)
    }

    /// The pending bits of (warp, side) as `u64` words (register `r`: bit `r % 64` of word
    /// `r / 64`); empty for a warp that does not exist.
    pub fn pending_row(&self, warp: u32, side: u8) -> &[u64] {
        self.row_slice(&self.pending, warp, side)
    }

    /// The shadow bits of (warp, side), laid out as [`Self::pending_row`].
    pub fn shadow_row(&self, warp: u32, side: u8) -> &[u64] {
        self.row_slice(&self.shadow, warp, side)
    }

    fn row_slice<'a>(&self, bits: &'a [u64], warp: u32, side: u8) -> &'a [u64] {
        match self.row(warp, self.side_of(side)) {
            Some(r) => &bits[r..r + self.row_words],
            None => &[],
        }
    }
}

// ---- the unit description and the generic by-name path (design.md §3) ----

/// Functional coverage of the scoreboard: every number of reserves and of releases in one
/// cycle up to all ports, a hazard on every query port, reserves, releases and shadow
/// copies coinciding, reset with registers pending.
static SCOREBOARD_COVERAGE: [Cover; 8] = [
    Cover::Popcount {
        port: "rsv_valid",
        max: "NRSV",
    },
    Cover::Popcount {
        port: "rel_valid",
        max: "NWB",
    },
    Cover::EveryBit("q_hazard"),
    Cover::Together(&["rsv_valid", "rel_valid"]),
    Cover::Together(&["rsv_valid", "cpy_valid"]),
    Cover::Together(&["rel_valid", "cpy_valid"]),
    Cover::Together(&["rsv_valid", "rel_valid", "cpy_valid"]),
    Cover::ResetWhile("dbg_P"),
];

crate::declare_unit! {
    /// The single description of `dpe_scoreboard`. Port arrays are flattened LSB first:
    /// field `i` of `rsv_warp` is bits `[i*W, (i+1)*W)` with `W = $clog2(NUM_WARPS)`;
    /// source `j` of query `i` is field `i*3 + j` of `q_src` / bit `i*3 + j` of
    /// `q_src_valid`. Debug ports `dbg_P`, `dbg_S`: bit `(warp*2 + side)*NUM_REGS + reg`.
    pub static SCOREBOARD_DESC: DpeScoreboard = unit "dpe_scoreboard" {
        summary: "per-SM scoreboard with L/R pending and shadow bits (SPE mode with DUAL=0)",
        spec: "specs/reconvergence-dpe.md §4.9, §9.5, A5-A7, A17-A19",
        standard_sets: &[
            &[],
            &[("NUM_WARPS", 4), ("NUM_REGS", 8), ("NRSV", 1), ("NWB", 1), ("Q", 1)],
            &[("NUM_WARPS", 8), ("NUM_REGS", 100), ("NWB", 3), ("DUAL", 0)],
            &[("NUM_WARPS", 64), ("NUM_REGS", 256), ("NWB", 4), ("Q", 4)],
        ],
        check: |_| Ok(()),
        // NUM_REGS starts at the minimum and a launch widens it to its kernel's registers.
        gpu: |cfg| {
            let p = crate::timing::sm::scoreboard_params_for(cfg, 8);
            GpuUse::Instantiated {
                instances: "one per SM",
                params: vec![
                    ("NUM_WARPS", p.num_warps as u64, "sm.max_warps"),
                    ("NUM_REGS", p.num_regs as u64, "the launched kernel's registers"),
                    ("NRSV", p.nrsv as u64, ""),
                    ("NWB", p.nwb as u64, ""),
                    ("Q", p.q as u64, "sm.schedulers"),
                    ("DUAL", p.dual as u64, "sm.reconvergence"),
                ],
            }
        },
        coverage: &SCOREBOARD_COVERAGE,
        // The default set (48 x 64) is 150,000 generic cells: sweep around 8 warps x 16
        // registers, where every point takes seconds, since the cost is linear in both.
        scaling: &[
            Scaling { param: "NUM_WARPS", values: &[4, 8, 16, 32, 48], base: &[("NUM_REGS", 16)] },
            Scaling { param: "NUM_REGS", values: &[8, 16, 32, 64], base: &[("NUM_WARPS", 8)] },
        ],
        seed_costs: &[
            SeedCost {
                label: "dual-path (L/R + shadow) over single-path scoreboard, 8 warps x 64 registers",
                params: &[("NUM_WARPS", 8)],
                relative_to: Some(&[("NUM_WARPS", 8), ("DUAL", 0)]),
                figure: CostFigure::Transistors,
                seed: 2.0,
                seed_basis: "ratio: \"roughly x2\" in area and power (qualitative); seed 001 L800",
            },
        ],
        ports: sb_port,
    }
    /// Parameters of `dpe_scoreboard` (spec §9.5; same names as the Verilog parameters).
    params ScoreboardParams {
        num_warps: u32 = NUM_WARPS(48, 2..=64) "warps per SM",
        num_regs: u32 = NUM_REGS(64, 8..=256) "architectural registers per thread",
        /// Reserve ports.
        nrsv: u32 = NRSV(2, 1..=MAX_PORTS as u64) "reserve ports (one per issuing scheduler)",
        /// Release (writeback) ports.
        nwb: u32 = NWB(2, 1..=MAX_PORTS as u64) "release (writeback) ports",
        /// Query ports.
        q: u32 = Q(2, 1..=MAX_PORTS as u64) "hazard query ports",
        /// Dual-path mode (`DUAL=1`); `false` is the SPE scoreboard.
        dual: bool = DUAL(1, 0..=1) "1: dual-path (L/R + shadow); 0: SPE scoreboard, side 0 only",
    }
    /// The input ports' values as they are (port arrays packed); [`ScoreboardPorts`] decodes
    /// them into the operations the model applies.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    inputs ScoreboardPortIn {
        rsv_valid: u8 ["NRSV"] "per reserve port: reserve a destination at issue",
        rsv_warp: u64 ["NRSV*$clog2(NUM_WARPS)"] "per reserve port: warp"
            layout([_: "NRSV"] "$clog2(NUM_WARPS)"),
        rsv_side: u8 ["NRSV"] "per reserve port: issuing side (0 L, 1 R)",
        rsv_reg: u64 ["NRSV*$clog2(NUM_REGS)"] "per reserve port: destination register"
            layout([_: "NRSV"] "$clog2(NUM_REGS)"),
        rel_valid: u8 ["NWB"] "per release port: a writeback clears a pending register",
        rel_warp: u64 ["NWB*$clog2(NUM_WARPS)"] "per release port: warp"
            layout([_: "NWB"] "$clog2(NUM_WARPS)"),
        rel_side: u8 ["NWB"] "per release port: side carried down the pipeline",
        rel_reg: u64 ["NWB*$clog2(NUM_REGS)"] "per release port: register"
            layout([_: "NWB"] "$clog2(NUM_REGS)"),
        cpy_valid: u64 ["NUM_WARPS"] "bit w: warp w's stack raised ev_sb_copy (copy P into S, both sides)",
        q_warp: u64 ["Q*$clog2(NUM_WARPS)"] "per query port: warp"
            layout([_: "Q"] "$clog2(NUM_WARPS)"),
        q_side: u8 ["Q"] "per query port: side",
        q_src: QuerySrcs ["Q*3*$clog2(NUM_REGS)"] "per query port: 3 source registers"
            layout([_: "Q", _: "3"] "$clog2(NUM_REGS)"),
        q_src_valid: u32 ["Q*3"] "per query port: which sources are read",
        q_dst: u64 ["Q*$clog2(NUM_REGS)"] "per query port: destination register"
            layout([_: "Q"] "$clog2(NUM_REGS)"),
        q_dst_valid: u8 ["Q"] "per query port: the destination is written",
    }
    /// The scoreboard has no registered outputs besides its state.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    registered ScoreboardRegs {}
    /// Combinational outputs of one cycle.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    combinational ScoreboardEvents {
        q_hazard: u8 ["Q"] "per query port: P[w][s][r] | S[w][!s][r] for a queried r"
            layout([_: "Q"] "1"),
    }
    debug {
        dbg_P ["NUM_WARPS*2*NUM_REGS"] "pending bits, bit (warp*2+side)*NUM_REGS+reg"
            layout([warp: "NUM_WARPS", side: "2", reg: "NUM_REGS"] "1"),
        dbg_S ["NUM_WARPS*2*NUM_REGS"] "shadow bits, bit (warp*2+side)*NUM_REGS+reg"
            layout([warp: "NUM_WARPS", side: "2", reg: "NUM_REGS"] "1"),
    }
}

/// How [`ScoreboardInputs`] sit in the input ports of one parameter set: the single place
/// where the scoreboard's port-array encoding lives (the unit's by-name path reads with it,
/// traces are written with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreboardPorts {
    nrsv: u32,
    nwb: u32,
    num_warps: u32,
    /// `$clog2(NUM_WARPS)`, `$clog2(NUM_REGS)`.
    warp_w: u32,
    reg_w: u32,
}

/// Field `i` of a port array of `width`-bit fields held in `v`.
fn field(v: u64, i: u32, width: u32) -> u64 {
    v.checked_shr(i * width).unwrap_or(0) & super::contract::low_mask(width)
}

/// `q_src` as a value: `MAX_PORTS * QUERY_SRCS` fields of at most 8 bits (`NUM_REGS <=
/// 256`), 192 bits, in a fixed array rather than a `Bits` (reading the ports then never
/// allocates: the co-simulation reads them twice a cycle).
pub type QuerySrcs = [u64; 3];

impl ScoreboardPorts {
    pub fn of(p: &ScoreboardParams) -> ScoreboardPorts {
        ScoreboardPorts {
            nrsv: p.nrsv,
            nwb: p.nwb,
            num_warps: p.num_warps,
            warp_w: super::contract::clog2(p.num_warps as u64),
            reg_w: super::contract::clog2(p.num_regs as u64),
        }
    }

    /// The reserve, release and copy inputs held in `ports` (valid ports only, in port
    /// order; the query ports are not read).
    pub fn read(&self, ports: &ScoreboardPortIn) -> ScoreboardInputs {
        let mut inp = ScoreboardInputs::IDLE;
        for (stage, [valid, warp, side, reg], n) in [
            (
                &mut inp.rsv,
                [
                    ports.rsv_valid as u64,
                    ports.rsv_warp,
                    ports.rsv_side as u64,
                    ports.rsv_reg,
                ],
                self.nrsv,
            ),
            (
                &mut inp.rel,
                [
                    ports.rel_valid as u64,
                    ports.rel_warp,
                    ports.rel_side as u64,
                    ports.rel_reg,
                ],
                self.nwb,
            ),
        ] {
            for i in 0..n {
                if field(valid, i, 1) != 0 {
                    let _ = stage.push(
                        MAX_PORTS,
                        RegRef {
                            warp: field(warp, i, self.warp_w) as u32,
                            side: field(side, i, 1) as u8,
                            reg: field(reg, i, self.reg_w) as u32,
                        },
                    );
                }
            }
        }
        inp.cpy = ports.cpy_valid;
        inp
    }

    /// Write `inp` into the reserve, release and copy input ports (the staged operations on
    /// ports 0, 1, ...; the query ports are left as they are). The inverse of
    /// [`Self::read`] for inputs that fit these parameters.
    pub fn write(&self, inp: &ScoreboardInputs, ports: &mut ScoreboardPortIn) {
        let pack = |stage: &PortStage, n: u32| {
            let (mut valid, mut warp, mut side, mut reg) = (0u64, 0u64, 0u64, 0u64);
            for (i, op) in stage.staged().iter().take(n as usize).enumerate() {
                let i = i as u32;
                valid |= 1 << i;
                warp |=
                    (op.warp as u64 & super::contract::low_mask(self.warp_w)) << (i * self.warp_w);
                side |= ((op.side & 1) as u64) << i;
                reg |= (op.reg as u64 & super::contract::low_mask(self.reg_w)) << (i * self.reg_w);
            }
            (valid, warp, side, reg)
        };
        let (v, w, s, r) = pack(&inp.rsv, self.nrsv);
        (
            ports.rsv_valid,
            ports.rsv_warp,
            ports.rsv_side,
            ports.rsv_reg,
        ) = (v as u8, w, s as u8, r);
        let (v, w, s, r) = pack(&inp.rel, self.nwb);
        (
            ports.rel_valid,
            ports.rel_warp,
            ports.rel_side,
            ports.rel_reg,
        ) = (v as u8, w, s as u8, r);
        ports.cpy_valid = inp.cpy & super::contract::low_mask(self.num_warps);
    }

    /// The registers queried by query port `i`, and how many there are.
    fn query(&self, ports: &ScoreboardPortIn, i: u32) -> ([u32; QUERY_SRCS + 1], usize) {
        let mut regs = [0u32; QUERY_SRCS + 1];
        let mut n = 0;
        for j in 0..QUERY_SRCS as u32 {
            let k = i * QUERY_SRCS as u32 + j;
            if field(ports.q_src_valid as u64, k, 1) != 0 {
                regs[n] =
                    super::contract::words_field(&ports.q_src, k * self.reg_w, self.reg_w) as u32;
                n += 1;
            }
        }
        if field(ports.q_dst_valid as u64, i, 1) != 0 {
            regs[n] = field(ports.q_dst, i, self.reg_w) as u32;
            n += 1;
        }
        (regs, n)
    }
}

impl DpeScoreboard {
    /// Write this cycle's staged inputs into generic port values laid out by `layout` (a
    /// trace recorder's `fill`): [`ScoreboardPorts::of`] this unit's parameters, or those of
    /// a trace with a wider `NUM_REGS` that also holds larger launches.
    pub fn staged_to_ports(&self, layout: &ScoreboardPorts, ports: &mut [Bits]) {
        self.staged_port_values(layout).write_ports(ports);
    }

    /// This cycle's staged inputs as input port values laid out by `layout` (see
    /// [`Self::staged_to_ports`]); the query ports read 0.
    pub fn staged_port_values(&self, layout: &ScoreboardPorts) -> ScoreboardPortIn {
        let mut raw = ScoreboardPortIn::default();
        layout.write(&self.stage, &mut raw);
        raw
    }
}

impl Unit for DpeScoreboard {
    /// A trace keeps the operations as staged (the GPU model stages them over a cycle:
    /// `RegDeps::edge`); [`Unit::recorded_inputs`] lays them out at the trace's parameters
    /// when the trace is replayed or written. The query ports are combinational and leave
    /// no state: a trace drives them idle.
    type Recorded = ScoreboardInputs;
    fn recorded(&self, inp: &ScoreboardPortIn) -> ScoreboardInputs {
        ScoreboardPorts::of(&self.params).read(inp)
    }
    /// Laid out at the trace's parameters (its `NUM_REGS` may be wider than the instance's:
    /// see `RegDeps::begin_kernel`).
    fn recorded_inputs(value: &ScoreboardInputs, params: &ScoreboardParams) -> ScoreboardPortIn {
        let mut ports = ScoreboardPortIn::default();
        ScoreboardPorts::of(params).write(value, &mut ports);
        ports
    }
    fn new(params: ScoreboardParams) -> DpeScoreboard {
        DpeScoreboard::new(params)
    }
    fn reset(&mut self) {
        DpeScoreboard::reset(self)
    }
    fn registered(&self) -> ScoreboardRegs {
        ScoreboardRegs {}
    }
    fn events(&self, inp: &ScoreboardPortIn) -> ScoreboardEvents {
        let layout = ScoreboardPorts::of(&self.params);
        let mut hazards = 0u8;
        for i in 0..self.params.q {
            let (regs, n) = layout.query(inp, i);
            let warp = field(inp.q_warp, i, layout.warp_w) as u32;
            let side = field(inp.q_side as u64, i, 1) as u8;
            if self.hazard(warp, side, &regs[..n]) {
                hazards |= 1 << i;
            }
        }
        ScoreboardEvents { q_hazard: hazards }
    }
    /// Stages the reserve, release and copy ports and applies them (never more staged
    /// operations than ports, so staging always succeeds).
    fn tick(&mut self, inp: &ScoreboardPortIn) -> ScoreboardEvents {
        let ev = Unit::events(self, inp);
        Unit::advance(self, inp);
        ev
    }
    /// The edge without the hazard queries (they leave no state).
    fn advance(&mut self, inp: &ScoreboardPortIn) {
        let layout = ScoreboardPorts::of(&self.params);
        self.stage_inputs(&layout.read(inp));
        DpeScoreboard::tick(self);
    }
    fn debug_state(&self, ports: &mut [Bits]) {
        let p = self.params;
        for (port, bits) in [
            (sb_port::dbg_P, &self.pending),
            (sb_port::dbg_S, &self.shadow),
        ] {
            let dbg = &mut ports[port];
            for row in 0..p.num_warps as usize * 2 {
                for k in 0..self.row_words {
                    let lsb = (row as u32) * p.num_regs + 64 * k as u32;
                    let width = (p.num_regs - 64 * k as u32).min(64);
                    dbg.set_field(lsb, width, bits[row * self.row_words + k]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::contract::{Role, UnitModel};
    use crate::units::declare::{Adapter, UnitParams};

    /// Any staged cycle (0-8 reserves and releases, a copy or not, operations that fit the
    /// dense form or not) packs into raw words and back (their count read from the head
    /// word alone too), and one that has a compact form comes back from it; the stale
    /// operations in unused port slots are never part of a record.
    #[test]
    fn staged_inputs_round_trip_through_raw_and_compact_words() {
        use crate::units::trace_sink::RawRecord;
        let mut rng = crate::units::random_program::SplitMix64::new(0x2545_f491_4f6c_dd1d);
        let mut next = || rng.next_u64();
        let (mut compact, mut wide) = (0, 0);
        let mut words = Vec::new();
        for _ in 0..5000 {
            let r = next();
            let mut v = ScoreboardInputs::IDLE;
            // Unused port slots hold the operations of earlier cycles, as in the GPU model.
            for op in v.rsv.ops.iter_mut().chain(v.rel.ops.iter_mut()) {
                let o = next();
                *op = RegRef {
                    warp: (o & 127) as u32,
                    side: (o >> 7 & 1) as u8,
                    reg: (o >> 8 & 511) as u32,
                };
            }
            let big = r & 0xf == 0;
            for (stage, n) in [(&mut v.rsv, r >> 4 & 7), (&mut v.rel, r >> 8 & 7)] {
                for _ in 0..(n as usize * (r >> 12 & 3) as usize / 3).min(MAX_PORTS) {
                    let o = next();
                    let op = RegRef {
                        warp: (o & 63) as u32 + if big { 64 } else { 0 },
                        side: (o >> 6 & 1) as u8,
                        reg: (o >> 7 & 255) as u32,
                    };
                    assert!(stage.push(MAX_PORTS, op));
                }
            }
            if r >> 14 & 3 == 0 {
                v.cpy = next();
            }
            words.clear();
            v.pack(&mut words);
            words.push(0xdead);
            let (back, n) = ScoreboardInputs::unpack(&words);
            assert_eq!((back, n + 1), (v, words.len()), "{words:x?}");
            assert_eq!(ScoreboardInputs::packed_len(&words), n, "{words:x?}");
            wide += (words[0] >> 9 & 1) as usize;
            if let Some(payload) = v.compact() {
                assert!(payload >> crate::units::trace_sink::COMPACT_PAYLOAD_BITS == 0);
                assert_eq!(ScoreboardInputs::from_compact(payload), v);
                compact += 1;
            }
        }
        assert!(compact > 500 && wide > 50, "{compact} compact, {wide} wide");
    }

    const L: u8 = 0;
    const R: u8 = 1;

    fn sb() -> DpeScoreboard {
        DpeScoreboard::new(ScoreboardParams::default())
    }

    fn rsv(s: &mut DpeScoreboard, warp: u32, side: u8, reg: u32) {
        assert!(s.reserve(warp, side, reg));
    }
    fn rel(s: &mut DpeScoreboard, warp: u32, side: u8, reg: u32) {
        assert!(s.release(warp, side, reg));
    }

    /// The registers set in the pending or shadow row of (warp 0, side).
    fn regs(row: &[u64]) -> Vec<u32> {
        (0..row.len() as u32 * 64)
            .filter(|&r| row[r as usize / 64] >> (r % 64) & 1 == 1)
            .collect()
    }
    fn p(s: &DpeScoreboard, side: u8) -> Vec<u32> {
        regs(s.pending_row(0, side))
    }
    fn sh(s: &DpeScoreboard, side: u8) -> Vec<u32> {
        regs(s.shadow_row(0, side))
    }

    /// `S ⊆ P` on every row.
    fn assert_shadow_in_pending(s: &DpeScoreboard) {
        for (i, (sw, pw)) in s.shadow.iter().zip(&s.pending).enumerate() {
            assert_eq!(sw & !pw, 0, "S not within P at word {i}");
        }
    }

    #[test]
    fn walkthrough_of_spec_4_9() {
        // Fig 3.5 code; warp 0; registers are their numbers.
        let mut s = sb();
        // 1. A: load r0 (single path, left).
        rsv(&mut s, 0, L, 0);
        s.tick();
        assert_eq!((p(&s, L), sh(&s, L)), (vec![0], vec![]));
        // 2. BR_{B-C} diverges: copy.
        s.copy(0);
        s.tick();
        assert_eq!((p(&s, L), sh(&s, L)), (vec![0], vec![0]));
        assert_eq!((p(&s, R), sh(&s, R)), (vec![], vec![]));
        // 3. C (right) wants add r5,r0,r2: R.P[r0]=0 but L.S[r0]=1: stalls (r0 case).
        assert!(!s.is_pending(0, R, 0));
        assert!(s.hazard(0, R, &[0u32, 2, 5]));
        // 4. B: load r1.
        rsv(&mut s, 0, L, 1);
        s.tick();
        assert_eq!((p(&s, L), sh(&s, L)), (vec![0, 1], vec![0]));
        // 5. r0 writes back on side L: clears L.P and L.S; C can go.
        rel(&mut s, 0, L, 0);
        s.tick();
        assert_eq!((p(&s, L), sh(&s, L)), (vec![1], vec![]));
        assert!(!s.hazard(0, R, &[0u32, 2, 5]));
        // 6. C issues add r5; later BR_{D-E} copies (r5 still pending).
        rsv(&mut s, 0, R, 5);
        s.tick();
        s.copy(0);
        s.tick();
        assert_eq!((p(&s, L), sh(&s, L)), (vec![1], vec![1]));
        assert_eq!((p(&s, R), sh(&s, R)), (vec![5], vec![5]));
        // 7. D (left) and E (right) read r1: both stall (E on the conservative L.S[r1]).
        assert!(s.hazard(0, L, &[1u32, 3]));
        assert!(s.hazard(0, R, &[1u32, 3]));
        rel(&mut s, 0, L, 1);
        rel(&mut s, 0, R, 5);
        s.tick();
        assert!(!s.hazard(0, L, &[1u32, 3]) && !s.hazard(0, R, &[1u32, 3]));
        // 8. D and E both write r4 in one cycle: tracked separately (r4 case).
        rsv(&mut s, 0, L, 4);
        rsv(&mut s, 0, R, 4);
        s.tick();
        assert_eq!((p(&s, L), p(&s, R)), (vec![4], vec![4]));
        assert_eq!((sh(&s, L), sh(&s, R)), (vec![], vec![]));
        rel(&mut s, 0, R, 4);
        s.tick();
        assert!(
            s.is_pending(0, L, 4) && !s.hazard(0, R, &[4u32]),
            "no cross-path dependency"
        );
        rsv(&mut s, 0, R, 4);
        s.tick();
        // 9. D and E reach F: pop: copy on both sides. F (right) waits for D's r4 too.
        s.copy(0);
        s.tick();
        assert_eq!((sh(&s, L), sh(&s, R)), (vec![4], vec![4]));
        rel(&mut s, 0, R, 4);
        s.tick();
        assert!(
            s.hazard(0, R, &[4u32]),
            "L.S[r4]: D's write still in flight"
        );
        rel(&mut s, 0, L, 4);
        s.tick();
        assert!(!s.hazard(0, R, &[4u32]));
        // 10. F: load r7 is the last instruction before G: reserve and pop in one cycle (A6).
        rsv(&mut s, 0, R, 7);
        s.copy(0);
        s.tick();
        assert_eq!((p(&s, R), sh(&s, R)), (vec![7], vec![7]));
        // 11. G (left) add r8,r1,r7 waits on R.S[r7] (r7 case) until r7 writes back.
        assert!(!s.is_pending(0, L, 7));
        assert!(s.hazard(0, L, &[1u32, 7, 8]));
        rel(&mut s, 0, R, 7);
        s.tick();
        assert!(!s.hazard(0, L, &[1u32, 7, 8]));
        assert_eq!(s.pending, vec![0; s.pending.len()]);
        assert_eq!(s.shadow, vec![0; s.shadow.len()]);
    }

    #[test]
    fn copy_includes_a_reserve_of_the_same_cycle() {
        // A6: without it, the path after reconvergence would miss the in-flight write.
        let mut s = sb();
        rsv(&mut s, 3, R, 7);
        s.copy(3);
        s.tick();
        assert!(s.is_pending(3, R, 7) && s.is_shadow(3, R, 7));
        assert!(s.hazard(3, L, &[7u32]));
        // A copy of another warp does not see it.
        let mut s = sb();
        rsv(&mut s, 3, R, 7);
        s.copy(4);
        s.tick();
        assert!(!s.is_shadow(3, R, 7));
        assert!(!s.hazard(3, L, &[7u32]));
    }

    #[test]
    fn release_wins_over_copy_and_reserve_wins_over_release() {
        // A7: a writeback in the same cycle as a copy: the bit is gone from P and S.
        let mut s = sb();
        rsv(&mut s, 1, L, 3);
        s.tick();
        rel(&mut s, 1, L, 3);
        s.copy(1);
        s.tick();
        assert!(!s.is_pending(1, L, 3) && !s.is_shadow(1, L, 3));
        // Reserve and release of one register in one cycle: the new write stays pending,
        // and its shadow (the old write's copy) is cleared.
        rsv(&mut s, 1, L, 3);
        s.tick();
        s.copy(1);
        s.tick();
        assert!(s.is_shadow(1, L, 3));
        rsv(&mut s, 1, L, 3);
        rel(&mut s, 1, L, 3);
        s.tick();
        assert!(s.is_pending(1, L, 3) && !s.is_shadow(1, L, 3));
        assert_shadow_in_pending(&s);
        // ... and with a copy in the same cycle as well: S' = (S | P | RSV) & ~REL.
        rsv(&mut s, 1, L, 3);
        rel(&mut s, 1, L, 3);
        s.copy(1);
        s.tick();
        assert!(s.is_pending(1, L, 3) && !s.is_shadow(1, L, 3));
    }

    #[test]
    fn release_on_one_side_while_reserved_on_the_other() {
        let mut s = sb();
        rsv(&mut s, 2, L, 9);
        s.tick();
        rel(&mut s, 2, L, 9);
        rsv(&mut s, 2, R, 9);
        s.tick();
        assert!(!s.is_pending(2, L, 9) && s.is_pending(2, R, 9));
        assert!(s.hazard(2, R, &[9u32]) && !s.hazard(2, L, &[9u32]));
    }

    #[test]
    fn two_writebacks_in_one_cycle() {
        let mut s = sb();
        rsv(&mut s, 0, L, 1);
        rsv(&mut s, 47, R, 63);
        s.tick();
        s.copy(0);
        s.copy(47);
        s.tick();
        rel(&mut s, 0, L, 1);
        rel(&mut s, 47, R, 63);
        assert!(!s.release(5, L, 5), "a third release has no port");
        s.tick();
        assert!(s.pending.iter().chain(&s.shadow).all(|&w| w == 0));
        // A dropped request changed nothing, and the stage is empty again.
        assert!(s.release(5, L, 5));
    }

    #[test]
    fn spe_mode_ignores_sides_and_copies() {
        let mut s = DpeScoreboard::new(ScoreboardParams {
            dual: false,
            ..Default::default()
        });
        rsv(&mut s, 0, R, 4);
        s.copy(0);
        s.tick();
        assert!(s.is_pending(0, L, 4));
        assert!(s.shadow.iter().all(|&w| w == 0));
        assert!(s.hazard(0, L, &[4u32]) && s.hazard(0, R, &[4u32]));
        rel(&mut s, 0, L, 4);
        s.tick();
        assert!(!s.hazard(0, R, &[4u32]));
    }

    #[test]
    fn out_of_range_indices_select_nothing() {
        let mut s = sb(); // 48 warps, 64 registers
        rsv(&mut s, 50, L, 1);
        rsv(&mut s, 1, L, 200);
        s.copy(60);
        s.tick();
        assert!(s.pending.iter().all(|&w| w == 0));
        assert!(!s.hazard(50, L, &[1u32]) && !s.hazard(1, L, &[200u32]));
        assert!(s.pending_row(50, L).is_empty());
    }

    // ---- generic path against a literal bit-by-bit reference of §9.5 ----

    /// The next-state formula and the hazard output, one bool per bit, straight from the
    /// spec: a second, deliberately naive reading of §9.5 for the tests only.
    struct Reference {
        p: ScoreboardParams,
        pend: Vec<bool>,
        shad: Vec<bool>,
    }

    impl Reference {
        fn idx(&self, warp: u64, side: u64, reg: u64) -> Option<usize> {
            (warp < self.p.num_warps as u64 && reg < self.p.num_regs as u64)
                .then(|| ((warp * 2 + side) * self.p.num_regs as u64 + reg) as usize)
        }
        fn bit_set(&self, ops: &[(u64, u64, u64)]) -> Vec<bool> {
            let mut v = vec![false; self.pend.len()];
            for &(w, s, r) in ops {
                if let Some(i) = self.idx(w, if self.p.dual { s } else { 0 }, r) {
                    v[i] = true;
                }
            }
            v
        }
        fn step(&mut self, rsv: &[(u64, u64, u64)], rel: &[(u64, u64, u64)], cpy: u64) {
            let (rsv, rel) = (self.bit_set(rsv), self.bit_set(rel));
            let row = 2 * self.p.num_regs as usize;
            for i in 0..self.pend.len() {
                let c = self.p.dual && cpy >> (i / row) & 1 == 1;
                let p = self.pend[i];
                self.pend[i] = (p && !rel[i]) || rsv[i];
                self.shad[i] = (self.shad[i] || (c && (p || rsv[i]))) && !rel[i];
            }
        }
        fn hazard(&self, warp: u64, side: u64, regs: &[u64]) -> bool {
            let s = if self.p.dual { side } else { 0 };
            regs.iter().any(
                |&r| match (self.idx(warp, s, r), self.idx(warp, s ^ 1, r)) {
                    (Some(own), Some(other)) => self.pend[own] || (self.p.dual && self.shad[other]),
                    _ => false,
                },
            )
        }
    }

    #[test]
    fn generic_path_matches_the_reference_on_random_ports() {
        use sb_port::*;
        let mut x = 0xdead_beef_u64;
        let mut rnd = move || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for params in SCOREBOARD_DESC.standard_params() {
            let sp = ScoreboardParams::from_params(&params);
            let mut unit = (SCOREBOARD_DESC.build)(&params);
            let mut ports = SCOREBOARD_DESC.zero_ports(&params);
            let widths = SCOREBOARD_DESC.widths(&params);
            let (ww, rw) = (
                super::super::contract::clog2(sp.num_warps as u64),
                super::super::contract::clog2(sp.num_regs as u64),
            );
            let bits = (sp.num_warps * 2 * sp.num_regs) as usize;
            let mut reference = Reference {
                p: sp,
                pend: vec![false; bits],
                shad: vec![false; bits],
            };
            // Few warps and registers in play, so that ports collide often.
            let hot = |v: u64, w: u32| v % 4 + if w > 3 { (v >> 8) % 2 * 5 } else { 0 };
            // Fewer cycles for the big sets: the reference is one bool per bit.
            let cycles = (4_000_000 / bits).clamp(1000, 4000);
            let (mut seen_pending, mut seen_shadow) = (false, false);
            for cycle in 0..cycles {
                let running = cycle % 997 != 996;
                ports[rst_n].set_u64(running as u64);
                for (port, w) in widths.iter().enumerate().take(q_dst_valid + 1).skip(1) {
                    let mut b = Bits::zero(*w);
                    for k in 0..w.div_ceil(64) {
                        b.set_field(64 * k, 64, rnd());
                    }
                    ports[port] = b;
                }
                // Keep warps and registers mostly small (and in range) so state builds up.
                for (port, n, fw) in [
                    (rsv_warp, sp.nrsv, ww),
                    (rel_warp, sp.nwb, ww),
                    (q_warp, sp.q, ww),
                    (rsv_reg, sp.nrsv, rw),
                    (rel_reg, sp.nwb, rw),
                    (q_src, sp.q * 3, rw),
                    (q_dst, sp.q, rw),
                ] {
                    for i in 0..n {
                        let v = rnd();
                        let v = if v % 16 == 0 { v } else { hot(v, fw) };
                        ports[port].set_field(i * fw, fw, v);
                    }
                }
                let sparse = rnd() & rnd() & rnd();
                ports[cpy_valid].set_u64(sparse);
                unit.all_outputs(&mut ports);
                // Compare outputs of state(t).
                for i in 0..sp.q {
                    let mut regs = vec![];
                    for j in 0..3 {
                        if ports[q_src_valid].bit(i * 3 + j) {
                            regs.push(ports[q_src].field((i * 3 + j) * rw, rw));
                        }
                    }
                    if ports[q_dst_valid].bit(i) {
                        regs.push(ports[q_dst].field(i * rw, rw));
                    }
                    let warp = ports[q_warp].field(i * ww, ww);
                    let side = ports[q_side].bit(i) as u64;
                    let want = running && reference.hazard(warp, side, &regs);
                    assert_eq!(ports[q_hazard].bit(i), want, "{params} cycle {cycle} q{i}");
                }
                for (k, (&pb, &sb)) in reference.pend.iter().zip(&reference.shad).enumerate() {
                    assert_eq!(
                        ports[dbg_P].bit(k as u32),
                        pb,
                        "{params} cycle {cycle} P{k}"
                    );
                    assert_eq!(
                        ports[dbg_S].bit(k as u32),
                        sb,
                        "{params} cycle {cycle} S{k}"
                    );
                    assert!(pb || !sb, "S within P");
                    seen_pending |= pb;
                    seen_shadow |= sb;
                }
                // Edge.
                let ops = |valid: usize, n: u32| -> Vec<(u64, u64, u64)> {
                    (0..n)
                        .filter(|&i| ports[valid].bit(i))
                        .map(|i| {
                            (
                                ports[valid + 1].field(i * ww, ww),
                                ports[valid + 2].bit(i) as u64,
                                ports[valid + 3].field(i * rw, rw),
                            )
                        })
                        .collect()
                };
                let (rsv, rel) = (ops(rsv_valid, sp.nrsv), ops(rel_valid, sp.nwb));
                unit.tick(&ports);
                if running {
                    reference.step(&rsv, &rel, ports[cpy_valid].to_u64());
                } else {
                    reference.pend.iter_mut().for_each(|b| *b = false);
                    reference.shad.iter_mut().for_each(|b| *b = false);
                }
            }
            assert!(seen_pending, "{params}: state built up");
            assert!(seen_shadow || !sp.dual, "{params}: shadows built up");
        }
    }

    #[test]
    fn staged_inputs_round_trip_through_ports() {
        // The trace encoding (`staged_to_ports`) and the adapter's decoding are inverses, also
        // into a layout with a wider register field (a trace that also holds larger launches).
        let small = ScoreboardParams {
            num_warps: 48,
            num_regs: 24,
            nrsv: 8,
            nwb: 8,
            q: 2,
            dual: true,
        };
        let wide = ScoreboardParams {
            num_regs: 256,
            ..small
        };
        let mut s = DpeScoreboard::new(small);
        for i in 0..8u32 {
            assert!(s.reserve(i * 5 % 48, (i % 2) as u8, i * 3 % 24));
        }
        assert!(!s.reserve(1, 0, 1), "NRSV = 8");
        for i in 0..5u32 {
            assert!(s.release(47 - i, (i % 2) as u8, 23 - i));
        }
        s.copy(0);
        s.copy(47);
        s.copy(13);
        for p in [small, wide] {
            let layout = ScoreboardPorts::of(&p);
            let params = p.to_params().unwrap();
            let mut ports = SCOREBOARD_DESC.zero_ports(&params);
            s.staged_to_ports(&layout, &mut ports);
            assert_eq!(
                layout.read(&ScoreboardPortIn::read_ports(&ports)),
                *s.staged(),
                "{params}"
            );
            // The generic unit applies exactly what the typed one does.
            let mut unit = Adapter::<DpeScoreboard>::new(&params);
            ports[sb_port::rst_n].set_u64(1);
            unit.tick(&ports);
            let mut typed = s.clone();
            typed.tick();
            for w in 0..48 {
                for side in [L, R] {
                    for r in 0..24 {
                        let u = unit.unit();
                        assert_eq!(u.is_pending(w, side, r), typed.is_pending(w, side, r));
                        assert_eq!(u.is_shadow(w, side, r), typed.is_shadow(w, side, r));
                    }
                }
            }
        }
        s.tick();
        assert!(s.staged().is_idle());
        let before = s.clone();
        s.tick();
        assert_eq!(s, before, "an idle tick changes nothing");
    }

    /// The declared layouts decode what the model packs: a pending register shows up in
    /// `dbg_P` as exactly `warp w side s reg r`, and a reserve port's fields as
    /// `rsv_warp[i]` / `rsv_reg[i]`, at every standard parameter set.
    #[test]
    fn layouts_name_the_model_bits() {
        for params in SCOREBOARD_DESC.standard_params() {
            let p = ScoreboardParams::from_params(&params);
            let (w, side, r) = (p.num_warps - 1, if p.dual { R } else { L }, p.num_regs - 3);
            let mut s = DpeScoreboard::new(p);
            rsv(&mut s, w, side, r);
            let mut ports = SCOREBOARD_DESC.zero_ports(&params);
            s.staged_to_ports(&ScoreboardPorts::of(&p), &mut ports);
            let at = |port: usize| {
                SCOREBOARD_DESC.ports[port]
                    .layout
                    .unwrap()
                    .at(&params)
                    .unwrap()
            };
            let warps = at(sb_port::rsv_warp).split(&ports[sb_port::rsv_warp]);
            let regs = at(sb_port::rsv_reg).split(&ports[sb_port::rsv_reg]);
            assert_eq!(warps.len(), p.nrsv as usize);
            assert_eq!(
                warps[0],
                (
                    "[0]".to_string(),
                    Bits::from_u64(warps[0].1.width(), w as u64)
                )
            );
            assert_eq!(regs[0].1.to_u64(), r as u64, "{params}");
            s.tick();
            Unit::debug_state(&s, &mut ports);
            let set: Vec<String> = at(sb_port::dbg_P)
                .split(&ports[sb_port::dbg_P])
                .into_iter()
                .filter(|(_, v)| v.to_u64() != 0)
                .map(|(n, _)| n)
                .collect();
            assert_eq!(set, [format!(" warp {w} side {side} reg {r}")], "{params}");
        }
    }

    #[test]
    fn port_positions_match_the_port_list() {
        use sb_port::*;
        let positions = [
            (rst_n, "rst_n"),
            (rsv_valid, "rsv_valid"),
            (rsv_warp, "rsv_warp"),
            (rsv_side, "rsv_side"),
            (rsv_reg, "rsv_reg"),
            (rel_valid, "rel_valid"),
            (rel_warp, "rel_warp"),
            (rel_side, "rel_side"),
            (rel_reg, "rel_reg"),
            (cpy_valid, "cpy_valid"),
            (q_warp, "q_warp"),
            (q_side, "q_side"),
            (q_src, "q_src"),
            (q_src_valid, "q_src_valid"),
            (q_dst, "q_dst"),
            (q_dst_valid, "q_dst_valid"),
            (q_hazard, "q_hazard"),
            (dbg_P, "dbg_P"),
            (dbg_S, "dbg_S"),
        ];
        for (pos, name) in positions {
            assert_eq!(SCOREBOARD_DESC.port_index(name), Some(pos), "{name}");
        }
        assert_eq!(SCOREBOARD_DESC.ports.len(), positions.len());
        assert!(SCOREBOARD_DESC.ports[..=q_dst_valid]
            .iter()
            .all(|p| p.role == Role::Input));
        let p = SCOREBOARD_DESC.params::<&str>(&[]).unwrap();
        let w = SCOREBOARD_DESC.widths(&p);
        assert_eq!(w[rsv_warp], 2 * 6);
        assert_eq!(w[q_src], 2 * 3 * 6);
        assert_eq!(w[cpy_valid], 48);
        assert_eq!(w[dbg_P], 48 * 2 * 64);
        assert!(SCOREBOARD_DESC.params(&[("NUM_WARPS", 1u64)]).is_err());
    }
}
