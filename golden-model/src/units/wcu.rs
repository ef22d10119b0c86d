//! `wcu`: the warp compaction unit of thread-block compaction (TBC) with the CAPRI adequacy
//! evaluator (specs/tbc-capri-slp.md §1.5, §2.4, §2.5, §7.1; seed 001 L947-L953,
//! L1071-L1078).
//!
//! Cycle-exact model of the RTL unit; the generator and the co-simulator compare the Verilog
//! against it, and the SM will tick it once per cycle while a compaction is in progress
//! (typed API: [`WcuInputs::request`], [`Wcu::warp`], `Unit::tick`; no allocation).
//!
//! The CTA-wide mask is an `NW x S` bit matrix, bit `w*S + l` = home warp `w`, physical lane
//! `l` (§7). Compaction (§1.5): each lane has a priority encoder over its column; every
//! cycle each non-empty column gives up its **lowest** home warp (A2), and the lanes that
//! gave one form compacted warp `k`. The greedy scheme emits `max_l popcount(column l)`
//! warps, the lower bound under the lane constraint; a full mask gives back the static warps.
//!
//! **Timing contract** (A1, PROPOSAL adopted):
//! - a request starts at cycle `t` when `req_valid && req_ready` (`req_ready` = idle);
//! - `pred_*` are valid at `t+1` when `req_eval` was 1 (`pred_valid` pulses that cycle; the
//!   values hold until the next evaluation);
//! - compacted warp `k` is valid at `t + FIRST_LAT + k` when `out_ready` is 1 every cycle:
//!   one per cycle, and a warp not accepted (`out_valid && !out_ready`) is held unchanged;
//! - `done` (combinational) pulses in the cycle the last warp is accepted, or at
//!   `t + FIRST_LAT` when there are no warps (T13), with `done_count` = warps produced;
//!   `req_ready` rises the cycle after (`req_ready` stays low until done, T15).
//!
//! **Outputs when idle**: `out_*` are 0 unless `out_valid` (inactive lanes drive `src = 0`,
//! §7); `done_count` is 0 unless `done`.
//!
//! **Slots (A3), a port added to §7.1.** §7.1 gives `req_contrib` = the slots that put a
//! thread into the path (A7), which is what the evaluator counts (`nw_before`, bypassed
//! slots included: Fig 4.8 counts W0), but A3 sends compacted warp `k` to the `k`-th lowest
//! slot whose **UMask** bit is 1 (Fig 4.8(d): W1, W2 while W0, bypassed, also contributed).
//! The two differ, so the unit takes the UMask as its own input `req_umask` (NW bits, 1 =
//! the slot waited). Under pure TBC `req_umask` is all ones and warp `k` goes to slot `k`.
//! The unit keeps the remaining slots in a register and hands out the lowest one per
//! accepted warp; if the SM gives more compacted warps than waiting slots (impossible with
//! consistent inputs: a waiting slot holds at most one thread per lane) the excess warps
//! get `out_slot = 0` (defined, not an error).
//!
//! **Evaluator** (§2.5, PRED_EN=1): `pred_nw_after` = max over lanes of the column popcount
//! of `req_mask` (`req_excl` ignored: bypassed warps included, L1076), `pred_nw_before` =
//! popcount(`req_contrib`), `pred_adequate = nw_after < nw_before`. The seed (L1078) says
//! "equal ⇒ inadequate, smaller ⇒ adequate" and is silent on larger (only from
//! inconsistent inputs): that is inadequate here, as `<` gives. `PRED_EN=0` removes the
//! counters; every `pred_*` port reads 0.
//!
//! **Micro-architecture** (design.md §5). The working copy of the mask (`mask & ~excl`) is
//! `NW*S` flip-flops, not RAM: every cycle that emits a warp clears one bit in *every* lane
//! at once (each lane's lowest set bit), so all of the state is read and written every
//! cycle — no RAM port arrangement serves that. Per lane one `NW`-bit priority encoder
//! (the lowest set bit of the column, `col & (col - 1)` removes it); `out_last` is "no
//! column has a second bit". The evaluator is one ones-count per lane over the request's
//! column and a max tree, registered once (`t+1`); it keeps only its two results.
//!
//! **Invariants** (§7.4) are asserted in the model (a panic naming the unit, debug builds:
//! the same style as the stacks' storage checks) and in the RTL (`$stop`, simulation only):
//! each emitted thread was in `mask & ~excl` and is emitted once, in its lane, with strictly
//! increasing `src` per lane; at `done`, `done_count` = max column popcount of
//! `mask & ~excl` and nothing is left; `pred_nw_after >= ceil(popcount(mask)/S)` and
//! `<= pred_nw_before` when `req_contrib` covers the rows that have bits. None can come
//! from the ports.
//!
//! Seed vs spec: the spec's §1.5 and §2.5 agree with the seed (L951, L1078); the timing
//! (A1), encoder order (A2) and slots (A3) are the spec's PROPOSALs, the seed gives none.

use super::contract::{Bits, GpuUse, Scaling};
use super::coverage::{Cond, Cover};
use super::declare::Unit;

/// The widest `NW*S` mask (32 x 32 threads) in 64-bit words, bit `w*S + l`.
pub const MASK_WORDS: usize = 16;
/// A CTA-wide thread mask as a port value: bit `w*S + l` of word 0 upward.
pub type CtaMask = [u64; MASK_WORDS];
/// `out_src` (`S*$clog2(NW)` bits, at most 32 x 5 = 160) as a port value.
pub type SrcWords = [u64; 3];

/// Bit `w*s + l` of a CTA mask.
#[inline]
pub fn thread_bit(mask: &CtaMask, s: u32, w: u32, l: u32) -> bool {
    let i = (w * s + l) as usize;
    mask[i / 64] >> (i % 64) & 1 == 1
}

/// Sets bit `w*s + l` of a CTA mask.
#[inline]
pub fn set_thread(mask: &mut CtaMask, s: u32, w: u32, l: u32) {
    let i = (w * s + l) as usize;
    mask[i / 64] |= 1 << (i % 64);
}

/// The columns of `mask & !excl` for `s` lanes and `nw` warps: `cols[l]` bit `w`.
fn columns(mask: &CtaMask, excl: &CtaMask, s: u32, nw: u32) -> [u32; 32] {
    let mut cols = [0u32; 32];
    let bits = (s * nw) as usize;
    for (k, (&m, &x)) in mask.iter().zip(excl).enumerate().take(bits.div_ceil(64)) {
        let mut v = m & !x;
        while v != 0 {
            let i = k * 64 + v.trailing_zeros() as usize;
            v &= v - 1;
            if i < bits {
                cols[i % s as usize] |= 1 << (i / s as usize);
            }
        }
    }
    cols
}

/// One compacted warp as the SM reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactedWarp {
    /// `k`, the position in the stream.
    pub seq: u32,
    /// Active lanes.
    pub lanes: u32,
    /// Per lane, the home warp of its thread (0 for inactive lanes).
    pub src: [u8; 32],
    /// The destination slot (A3).
    pub slot: u32,
    /// The last warp of the request.
    pub last: bool,
}

/// The state of one `wcu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wcu {
    p: WcuParams,
    /// A request is in progress (`!req_ready`).
    busy: bool,
    /// Cycles left before warp 0 (FIRST_LAT - 1 after the start).
    lat: u32,
    /// Working copy, per lane: bit `w` = home warp `w` not emitted yet.
    cols: [u32; 32],
    /// UMask slots not handed out yet.
    slots: u32,
    /// `k` of the current warp.
    seq: u32,
    pred_valid: bool,
    nw_after: u32,
    nw_before: u32,
    /// Invariant checks: warps and threads the request must produce, threads emitted.
    expect_warps: u32,
    expect_threads: u32,
    emitted: u32,
}

impl Wcu {
    pub fn new(p: WcuParams) -> Wcu {
        Wcu {
            p,
            busy: false,
            lat: 0,
            cols: [0; 32],
            slots: 0,
            seq: 0,
            pred_valid: false,
            nw_after: 0,
            nw_before: 0,
            expect_warps: 0,
            expect_threads: 0,
            emitted: 0,
        }
    }

    pub fn params(&self) -> WcuParams {
        self.p
    }

    /// The lanes' columns in use.
    #[inline]
    fn lanes(&self) -> &[u32] {
        &self.cols[..self.p.s as usize]
    }

    /// Whether the current cycle offers a warp (`out_valid`).
    #[inline]
    fn offering(&self) -> bool {
        self.busy && self.lat == 0 && self.lanes().iter().any(|&c| c != 0)
    }

    /// Whether the offered warp is the last one: no column holds a second thread.
    #[inline]
    fn last(&self) -> bool {
        self.lanes().iter().all(|&c| c & c.wrapping_sub(1) == 0)
    }

    /// The compacted warp offered this cycle (`out_valid`), if any.
    pub fn warp(&self) -> Option<CompactedWarp> {
        if !self.offering() {
            return None;
        }
        let mut w = CompactedWarp {
            seq: self.seq,
            lanes: 0,
            src: [0; 32],
            slot: if self.slots == 0 {
                0
            } else {
                self.slots.trailing_zeros()
            },
            last: self.last(),
        };
        for (l, &c) in self.lanes().iter().enumerate() {
            if c != 0 {
                w.lanes |= 1 << l;
                w.src[l] = c.trailing_zeros() as u8;
            }
        }
        Some(w)
    }

    /// `done` and `done_count` for this cycle's `out_ready`.
    #[inline]
    fn done(&self, out_ready: bool) -> Option<u32> {
        if !self.busy || self.lat != 0 {
            return None;
        }
        if self.lanes().iter().all(|&c| c == 0) {
            Some(0)
        } else if out_ready && self.last() {
            Some(self.seq + 1)
        } else {
            None
        }
    }

    fn invariant(&self, ok: bool, what: &str) {
        if !ok {
            panic!("wcu: invariant violated: {what}");
        }
    }

    fn start(&mut self, inp: &WcuInputs) {
        let (s, nw) = (self.p.s, self.p.nw);
        self.busy = true;
        self.lat = self.p.first_lat - 1;
        self.cols = columns(&inp.req_mask, &inp.req_excl, s, nw);
        self.slots = inp.req_umask & low32(nw);
        self.seq = 0;
        self.emitted = 0;
        self.expect_threads = self.lanes().iter().map(|c| c.count_ones()).sum();
        self.expect_warps = self
            .lanes()
            .iter()
            .map(|c| c.count_ones())
            .max()
            .unwrap_or(0);
        if self.p.pred_en {
            let all = columns(&inp.req_mask, &[0; MASK_WORDS], s, nw);
            let threads: u32 = all[..s as usize].iter().map(|c| c.count_ones()).sum();
            let rows = all[..s as usize].iter().fold(0, |r, c| r | c);
            let contrib = inp.req_contrib & low32(nw);
            self.nw_after = all[..s as usize]
                .iter()
                .map(|c| c.count_ones())
                .max()
                .unwrap_or(0);
            self.nw_before = contrib.count_ones();
            self.pred_valid = inp.req_eval;
            if cfg!(debug_assertions) {
                self.invariant(
                    self.nw_after >= threads.div_ceil(s),
                    "pred_nw_after below ceil(popcount(mask)/S)",
                );
                self.invariant(
                    rows & !contrib != 0 || self.nw_after <= self.nw_before,
                    "pred_nw_after above pred_nw_before with every row contributing",
                );
            }
        }
    }

    /// Accept the offered warp: each lane gives up its lowest home warp.
    fn emit(&mut self, last: bool) {
        let s = self.p.s as usize;
        for c in &mut self.cols[..s] {
            let rest = *c & c.wrapping_sub(1);
            if cfg!(debug_assertions) && *c != 0 {
                // Strictly increasing src per lane: every warp left is above the one emitted.
                let src = c.trailing_zeros();
                self.emitted += 1;
                if rest & low32(src + 1) != 0 {
                    panic!("wcu: invariant violated: src not increasing in lane");
                }
            }
            *c = rest;
        }
        self.slots &= self.slots.wrapping_sub(1);
        if !last {
            self.seq += 1;
        }
    }
}

/// The low `n` bits of a `u32` (`n <= 32`).
#[inline]
fn low32(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

impl WcuInputs {
    /// A request: the path's CTA-wide mask, the threads of bypassed warps, the contributing
    /// slots (A7), the waiting slots (UMask, A3) and whether to evaluate adequacy.
    pub fn request(mask: CtaMask, excl: CtaMask, contrib: u32, umask: u32, eval: bool) -> Self {
        WcuInputs {
            req_valid: true,
            req_mask: mask,
            req_excl: excl,
            req_contrib: contrib,
            req_umask: umask,
            req_eval: eval,
            out_ready: true,
        }
    }
}

// ---- the unit description and the generic by-name path (design.md §3) ----

/// Functional coverage: every warp count 0..NW at `done`; a stall (`out_valid &
/// !out_ready`) at every position `k` of the stream and at the last warp; every lane's
/// column full (a lane active in warp NW-1); a request waiting at `done` (accepted back to
/// back) and a request while busy; reset in mid-compaction; the evaluator's both answers.
static WCU_COVERAGE: [Cover; 9] = [
    Cover::ValuesWhen {
        port: "done_count",
        max: "NW",
        when: "done",
    },
    Cover::If {
        when: &[Cond::Set("out_valid"), Cond::Clear("out_ready")],
        cover: &Cover::Values {
            port: "out_seq",
            max: "NW-1",
        },
    },
    Cover::If {
        when: &[Cond::Set("out_valid"), Cond::Clear("out_ready")],
        cover: &Cover::Raised(&["out_last"]),
    },
    Cover::If {
        when: &[Cond::Eq("out_seq", "NW-1")],
        cover: &Cover::EveryBit("out_lanes"),
    },
    Cover::Together(&["req_valid", "done"]),
    Cover::If {
        when: &[Cond::Clear("req_ready")],
        cover: &Cover::Raised(&["req_valid"]),
    },
    Cover::ResetWhile("out_valid"),
    Cover::If {
        when: &[Cond::Param("PRED_EN")],
        cover: &Cover::ValuesWhen {
            port: "pred_adequate",
            max: "1",
            when: "pred_valid",
        },
    },
    Cover::If {
        when: &[Cond::Param("PRED_EN")],
        cover: &Cover::ResetWhile("pred_valid"),
    },
];

crate::declare_unit! {
    /// The single description of `wcu`. Masks: bit `w*S + l` = home warp `w`, lane `l`;
    /// `out_src`: field `l` (`$clog2(NW)` bits) = lane `l`'s home warp.
    pub static WCU_DESC: Wcu = unit "wcu" {
        summary: "TBC warp compaction unit (per-lane priority encoders) with the CAPRI adequacy evaluator",
        spec: "specs/tbc-capri-slp.md §1.5, §2.4, §2.5, §7.1, A1-A3, A7",
        standard_sets: &[
            &[],
            &[("S", 4), ("NW", 3)],
            &[("S", 8), ("NW", 4), ("FIRST_LAT", 3), ("PRED_EN", 0)],
            &[("S", 16), ("NW", 8), ("FIRST_LAT", 2)],
        ],
        check: |_| Ok(()),
        // One per SM, shared by its CTAs in request order (A20).
        gpu: |cfg| {
            if cfg.sm.compaction == crate::config::Compaction::None {
                return GpuUse::NotUsed { set: &["sm.compaction=tbc"] };
            }
            GpuUse::Instantiated {
                instances: "one per SM (spec A20)",
                params: vec![
                    ("S", crate::exec::WARP_SIZE as u64, ""),
                    ("NW", 32, ""),
                    ("FIRST_LAT", cfg.sm.wcu_latency as u64, "sm.wcu_latency"),
                    ("PRED_EN", 1, ""),
                ],
            }
        },
        coverage: &WCU_COVERAGE,
        scaling: &[
            Scaling { param: "S", values: &[4, 8, 16, 32], base: &[] },
            Scaling { param: "NW", values: &[4, 8, 16, 32], base: &[] },
        ],
        ports: wcu_port,
    }
    /// Parameters of `wcu` (spec §7 common parameters, §7.1).
    params WcuParams {
        s: u32 = S(32, 2..=32) "warp size = SIMD width (lanes)",
        nw: u32 = NW(32, 2..=32) "warps per CTA (rows of the mask)",
        first_lat: u32 = FIRST_LAT(1, 1..=8) "cycles from the start to compacted warp 0 (A1)",
        pred_en: bool = PRED_EN(1, 0..=1) "1: with the adequacy evaluator; 0: plain TBC",
    }
    /// The inputs of one cycle.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    inputs WcuInputs {
        req_valid: bool ["1"] "start handshake (taken when req_ready)",
        req_mask: CtaMask ["NW*S"] "the path's CTA-wide active mask, bit w*S+l"
            layout([warp: "NW"] "S"),
        req_excl: CtaMask ["NW*S"] "threads of bypassed warps (UMask = 0): not compacted"
            layout([warp: "NW"] "S"),
        req_contrib: u32 ["NW"] "slots that put >= 1 thread into the path (A7): nw_before",
        req_umask: u32 ["NW"] "slots that waited (UMask = 1): they receive the warps (A3)",
        req_eval: bool ["1"] "branch completion: produce the adequacy at t+1",
        out_ready: bool ["1"] "the SM takes the offered warp",
    }
    /// Outputs from the state.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    registered WcuRegs {
        req_ready: bool ["1"] "idle: a request is taken",
        out_valid: bool ["1"] "a compacted warp is offered",
        out_lanes: u32 ["S"] "active lanes of compacted warp k",
        out_src: SrcWords ["S*$clog2(NW)"] "per lane, the home warp of its thread (0 inactive)"
            layout([lane: "S"] "$clog2(NW)"),
        out_seq: u8 ["$clog2(NW)"] "k",
        out_slot: u8 ["$clog2(NW)"] "destination slot: the k-th lowest UMask slot (A3)",
        out_last: bool ["1"] "the last warp",
        pred_valid: bool ["1"] "adequacy valid (t+1 after a request with req_eval)",
        pred_nw_after: u8 ["$clog2(NW+1)"] "max over lanes of popcount(column of req_mask)",
        pred_nw_before: u8 ["$clog2(NW+1)"] "popcount(req_contrib)",
        pred_adequate: bool ["1"] "nw_after < nw_before",
    }
    /// Combinational outputs.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    combinational WcuEvents {
        done: bool ["1"] "the request completes (last warp taken, or no warps)",
        done_count: u8 ["$clog2(NW+1)"] "warps produced (with done)",
    }
    debug {
        dbg_work ["NW*S"] "working copy: threads not emitted yet, bit w*S+l"
            layout([warp: "NW"] "S"),
        dbg_slots ["NW"] "UMask slots not handed out yet",
    }
}

impl Unit for Wcu {
    crate::records_its_inputs!();
    fn new(params: WcuParams) -> Wcu {
        Wcu::new(params)
    }
    fn reset(&mut self) {
        *self = Wcu::new(self.p);
    }
    fn registered(&self) -> WcuRegs {
        let ww = super::contract::clog2(self.p.nw as u64);
        let mut r = WcuRegs {
            req_ready: !self.busy,
            pred_valid: self.pred_valid,
            pred_nw_after: self.nw_after as u8,
            pred_nw_before: self.nw_before as u8,
            pred_adequate: self.p.pred_en && self.nw_after < self.nw_before,
            ..WcuRegs::default()
        };
        if let Some(w) = self.warp() {
            r.out_valid = true;
            r.out_lanes = w.lanes;
            r.out_seq = w.seq as u8;
            r.out_slot = w.slot as u8;
            r.out_last = w.last;
            for l in 0..self.p.s {
                let (bit, v) = (l * ww, w.src[l as usize] as u64);
                r.out_src[bit as usize / 64] |= v << (bit % 64);
                if bit % 64 + ww > 64 {
                    r.out_src[bit as usize / 64 + 1] |= v >> (64 - bit % 64);
                }
            }
        }
        r
    }
    fn events(&self, inp: &WcuInputs) -> WcuEvents {
        match self.done(inp.out_ready) {
            Some(n) => WcuEvents {
                done: true,
                done_count: n as u8,
            },
            None => WcuEvents::default(),
        }
    }
    fn tick(&mut self, inp: &WcuInputs) -> WcuEvents {
        let ev = Unit::events(self, inp);
        self.pred_valid = false;
        if !self.busy {
            if inp.req_valid {
                self.start(inp);
            }
        } else if self.lat > 0 {
            self.lat -= 1;
        } else if ev.done {
            let last = self.offering();
            if last {
                self.emit(true);
            }
            self.invariant(
                ev.done_count as u32 == self.expect_warps,
                "done_count is not the largest column popcount of mask & ~excl",
            );
            self.invariant(
                self.lanes().iter().all(|&c| c == 0) && self.emitted == self.expect_threads
                    || !cfg!(debug_assertions),
                "a thread was not emitted exactly once",
            );
            self.busy = false;
        } else if inp.out_ready {
            self.emit(false);
        }
        ev
    }
    fn debug_state(&self, ports: &mut [Bits]) {
        let (s, nw) = (self.p.s, self.p.nw);
        let dbg = &mut ports[wcu_port::dbg_work];
        dbg.clear();
        for (l, &c) in self.lanes().iter().enumerate() {
            let mut c = c;
            while c != 0 {
                let w = c.trailing_zeros();
                c &= c - 1;
                dbg.set_bit(w * s + l as u32, true);
            }
        }
        ports[wcu_port::dbg_slots].set_u64((self.slots & low32(nw)) as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::declare::UnitParams;
    use proptest::prelude::*;

    fn unit(s: u32, nw: u32, first_lat: u32) -> Wcu {
        Wcu::new(WcuParams {
            s,
            nw,
            first_lat,
            pred_en: true,
        })
    }

    /// A mask of the paper's 3 x 4 examples: thread id `t` (hex) is warp `t / 4`, lane `t % 4`.
    fn paper(threads: &str) -> CtaMask {
        let mut m = [0; MASK_WORDS];
        for c in threads.chars().filter_map(|c| c.to_digit(16)) {
            set_thread(&mut m, 4, c / 4, c % 4);
        }
        m
    }

    /// What one request produced, cycle by cycle from its start at cycle 0.
    #[derive(Debug, Default)]
    struct Run {
        /// (cycle, warp) of every accepted warp.
        warps: Vec<(u32, CompactedWarp)>,
        /// (cycle, done_count).
        done: Option<(u32, u32)>,
        /// The registered outputs at cycle 1.
        pred: WcuRegs,
    }

    /// Starts `req` at cycle 0 and runs until done, `ready(cycle)` driving out_ready.
    fn run(u: &mut Wcu, req: WcuInputs, ready: impl Fn(u32) -> bool) -> Run {
        assert!(u.registered().req_ready);
        u.tick(&req);
        let mut r = Run::default();
        for cycle in 1..10_000 {
            let regs = u.registered();
            if cycle == 1 {
                r.pred = regs;
            }
            assert!(!regs.req_ready, "busy until done");
            let inp = WcuInputs {
                out_ready: ready(cycle),
                ..WcuInputs::default()
            };
            let offered = u.warp();
            assert_eq!(offered.is_some(), regs.out_valid);
            let ev = u.tick(&inp);
            if let (Some(w), true) = (offered, inp.out_ready) {
                r.warps.push((cycle, w));
            }
            if ev.done {
                r.done = Some((cycle, ev.done_count as u32));
                assert!(u.registered().req_ready);
                return r;
            }
            assert_eq!(ev.done_count, 0);
        }
        panic!("no done");
    }

    /// A warp as the paper writes it: the thread id per lane, `-` for an idle lane.
    fn show(w: &CompactedWarp, s: u32) -> String {
        (0..s)
            .map(|l| {
                if w.lanes >> l & 1 == 1 {
                    char::from_digit(w.src[l as usize] as u32 * s + l, 16)
                        .unwrap()
                        .to_ascii_uppercase()
                } else {
                    '-'
                }
            })
            .collect()
    }

    fn shows(r: &Run) -> Vec<String> {
        r.warps.iter().map(|(_, w)| show(w, 4)).collect()
    }

    #[test]
    fn t1_t2_fig_4_2_paths_b_and_c() {
        let mut u = unit(4, 3, 1);
        let r = run(
            &mut u,
            WcuInputs::request(paper("7A"), [0; 16], 0b110, 0b111, true),
            |_| true,
        );
        assert_eq!(shows(&r), ["--A7"]);
        assert_eq!(r.warps[0].1.src[2..4], [2, 1]);
        assert_eq!(r.done, Some((1, 1)));
        let r = run(
            &mut u,
            WcuInputs::request(paper("012345689B"), [0; 16], 0b111, 0b111, true),
            |_| true,
        );
        assert_eq!(shows(&r), ["0123", "456B", "89--"]);
        let slots: Vec<u32> = r.warps.iter().map(|(_, w)| w.slot).collect();
        assert_eq!(slots, [0, 1, 2], "pure TBC: warp k to slot k");
        assert_eq!(r.done, Some((3, 3)));
        assert!(r.warps[2].1.last && !r.warps[1].1.last);
        // The evaluator: counts (3, 3, 2, 2) -> 3 = 3 warps before: not adequate.
        assert!(r.pred.pred_valid && !r.pred.pred_adequate);
        assert_eq!((r.pred.pred_nw_after, r.pred.pred_nw_before), (3, 3));
    }

    #[test]
    fn t3_fig_4_8_bypassed_w0() {
        let mut u = unit(4, 3, 1);
        let req = WcuInputs::request(paper("01234789"), paper("0123"), 0b111, 0b110, true);
        let r = run(&mut u, req, |_| true);
        assert_eq!(shows(&r), ["49-7", "8---"]);
        let slots: Vec<u32> = r.warps.iter().map(|(_, w)| w.slot).collect();
        assert_eq!(slots, [1, 2], "the slots that waited (A3)");
        // Lane counts over all three warps (3, 2, 1, 2): max 3 = nw_before: inadequate.
        assert_eq!((r.pred.pred_nw_after, r.pred.pred_nw_before), (3, 3));
        assert!(r.pred.pred_valid && !r.pred.pred_adequate);
    }

    #[test]
    fn t5_adequate() {
        let mut u = unit(4, 3, 1);
        let r = run(
            &mut u,
            WcuInputs::request(paper("479A"), [0; 16], 0b110, 0b110, true),
            |_| true,
        );
        assert_eq!(shows(&r), ["49A7"]);
        assert_eq!(r.warps[0].1.slot, 1);
        assert_eq!((r.pred.pred_nw_after, r.pred.pred_nw_before), (1, 2));
        assert!(r.pred.pred_adequate);
    }

    #[test]
    fn t13_all_bypassed_gives_no_warps_at_first_lat() {
        for lat in [1, 3, 8] {
            let mut u = unit(4, 3, lat);
            let m = paper("01234789");
            let r = run(&mut u, WcuInputs::request(m, m, 0b111, 0, true), |_| true);
            assert!(r.warps.is_empty());
            assert_eq!(r.done, Some((lat, 0)), "done at t + FIRST_LAT");
            assert!(r.pred.pred_valid, "the evaluator still runs");
            assert_eq!(r.pred.pred_nw_after, 3);
        }
    }

    #[test]
    fn timing_first_lat_and_backpressure() {
        let mut u = unit(4, 3, 3);
        let req = WcuInputs::request(paper("012345689B"), [0; 16], 0b111, 0b111, false);
        let r = run(&mut u, req, |_| true);
        let cycles: Vec<u32> = r.warps.iter().map(|(c, _)| *c).collect();
        assert_eq!(cycles, [3, 4, 5], "warp k at t + FIRST_LAT + k");
        assert!(!r.pred.pred_valid, "no req_eval");
        // Ready every third cycle: each warp held until taken, done with the last.
        let r = run(&mut u, req, |c| c % 3 == 0);
        assert_eq!(shows(&r), ["0123", "456B", "89--"]);
        let cycles: Vec<u32> = r.warps.iter().map(|(c, _)| *c).collect();
        assert_eq!(cycles, [3, 6, 9]);
        assert_eq!(r.done, Some((9, 3)));
        let seqs: Vec<u32> = r.warps.iter().map(|(_, w)| w.seq).collect();
        assert_eq!(seqs, [0, 1, 2]);
    }

    #[test]
    fn t14_extremes_at_32_by_32() {
        let mut u = unit(32, 32, 1);
        let none = [0; MASK_WORDS];
        // All ones: the identity, 32 full warps with src = k.
        let r = run(
            &mut u,
            WcuInputs::request([u64::MAX; 16], none, !0, !0, true),
            |_| true,
        );
        assert_eq!(r.warps.len(), 32);
        for (k, (_, w)) in r.warps.iter().enumerate() {
            assert_eq!(w.lanes, u32::MAX);
            assert!(w.src.iter().all(|&s| s as usize == k));
        }
        assert_eq!((r.pred.pred_nw_after, r.pred.pred_adequate), (32, false));
        // One lane column full: 32 single-thread warps.
        let mut col = none;
        let mut diag = none;
        for w in 0..32 {
            set_thread(&mut col, 32, w, 5);
            set_thread(&mut diag, 32, w, w);
        }
        let r = run(&mut u, WcuInputs::request(col, none, !0, !0, true), |_| {
            true
        });
        assert_eq!(r.warps.len(), 32);
        assert!(r.warps.iter().all(|(_, w)| w.lanes == 1 << 5));
        // The diagonal: one warp.
        let r = run(&mut u, WcuInputs::request(diag, none, !0, !0, true), |_| {
            true
        });
        assert_eq!(r.warps.len(), 1);
        assert_eq!(r.warps[0].1.lanes, u32::MAX);
        assert!(r.pred.pred_adequate);
        // Empty: no warps.
        let r = run(&mut u, WcuInputs::request(none, none, 0, !0, true), |_| {
            true
        });
        assert_eq!(r.done, Some((1, 0)));
    }

    #[test]
    fn pred_en_0_reads_zero_and_reset_mid_compaction_idles() {
        let mut u = Wcu::new(WcuParams {
            pred_en: false,
            ..WcuParams::default()
        });
        u.tick(&WcuInputs::request([u64::MAX; 16], [0; 16], !0, !0, true));
        let r = u.registered();
        assert!(!r.pred_valid && r.pred_nw_after == 0 && r.out_valid);
        Unit::reset(&mut u);
        assert!(u.registered().req_ready && u.warp().is_none());
        assert_eq!(WcuParams::default().to_params().unwrap().get("NW"), 32);
    }

    /// The port view of `out_src` decodes to the typed warp's src per lane.
    #[test]
    fn out_src_packs_the_lanes() {
        let mut u = unit(32, 32, 1);
        let mut m = [0; MASK_WORDS];
        for l in 0..32 {
            set_thread(&mut m, 32, 31 - l, l);
        }
        u.tick(&WcuInputs::request(m, [0; 16], !0, !0, false));
        let r = u.registered();
        for l in 0..32u32 {
            let bit = l * 5;
            let mut v = r.out_src[bit as usize / 64] >> (bit % 64);
            if bit % 64 > 59 {
                v |= r.out_src[bit as usize / 64 + 1] << (64 - bit % 64);
            }
            assert_eq!(v & 31, (31 - l) as u64, "lane {l}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Random masks: the warps cover every non-excluded thread exactly once, in its own
        /// lane, with strictly increasing src per lane; done_count is the largest column
        /// popcount of mask & ~excl; a full mask gives the identity.
        #[test]
        fn compaction_covers_every_thread_once(
            s in 2u32..=32,
            nw in 2u32..=32,
            lat in 1u32..=4,
            mask in proptest::array::uniform16(any::<u64>()),
            excl in proptest::array::uniform16(any::<u64>()),
            density in 0u32..4,
            ready_seed in any::<u64>(),
            full in any::<bool>(),
        ) {
            // Thin the masks out so that sparse and dense CTAs both occur.
            let thin = |m: [u64; 16], k: u32| {
                let mut out = m;
                for (i, w) in out.iter_mut().enumerate() {
                    for j in 0..k {
                        *w &= mask[(i + j as usize + 1) % 16].rotate_left(j * 7 + 3);
                    }
                }
                out
            };
            let mask = if full { [u64::MAX; 16] } else { thin(mask, density) };
            let excl = if full { [0; 16] } else { thin(excl, 2) };
            let mut u = unit(s, nw, lat);
            let r = run(&mut u, WcuInputs::request(mask, excl, !0, !0, true), |c| {
                (ready_seed >> (c % 64)) & 1 == 1 || c % 5 == 0
            });
            let want = |w: u32, l: u32| thread_bit(&mask, s, w, l) && !thread_bit(&excl, s, w, l);
            let mut seen = [0u32; 32];
            let mut last_src = [-1i32; 32];
            for (k, (_, warp)) in r.warps.iter().enumerate() {
                prop_assert_eq!(warp.seq as usize, k);
                prop_assert_eq!(warp.last, k + 1 == r.warps.len());
                prop_assert!(warp.lanes != 0);
                for l in 0..s {
                    if warp.lanes >> l & 1 == 1 {
                        let w = warp.src[l as usize] as u32;
                        prop_assert!(w < nw && want(w, l), "thread ({}, {}) not requested", w, l);
                        prop_assert!(seen[l as usize] >> w & 1 == 0, "twice");
                        prop_assert!(w as i32 > last_src[l as usize], "src increases per lane");
                        seen[l as usize] |= 1 << w;
                        last_src[l as usize] = w as i32;
                    } else {
                        prop_assert_eq!(warp.src[l as usize], 0);
                    }
                }
            }
            let mut max_col = 0;
            for l in 0..s {
                let col = (0..nw).filter(|&w| want(w, l)).fold(0u32, |c, w| c | 1 << w);
                prop_assert_eq!(seen[l as usize], col, "lane {} covered exactly", l);
                max_col = max_col.max(col.count_ones());
            }
            prop_assert_eq!(r.done.map(|d| d.1), Some(max_col));
            prop_assert_eq!(r.warps.len() as u32, max_col);
            if full {
                prop_assert_eq!(max_col, nw);
                for (k, (_, w)) in r.warps.iter().enumerate() {
                    prop_assert_eq!(w.lanes, low32(s));
                    prop_assert!(w.src[..s as usize].iter().all(|&x| x as usize == k), "identity");
                }
            }
        }
    }
}
