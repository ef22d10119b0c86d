//! `capri_capt`: the CAPRI compaction-adequacy prediction table (CAPT) and its decision
//! logic (spec `tbc-capri-slp.md` §2, A11-A17, §7.2).
//!
//! A fully associative table of `ENTRIES` entries, each {valid, tag = branch PC (`PCW`
//! bits), history (1 or 2 bits)}, with true LRU replacement. Per cycle at most one warp's
//! branch is looked up (`br_*`, one issue per cycle per core, L384) and at most one WCU
//! evaluation updates an entry (`upd_*`). The response is registered (`LOOKUP_LAT` = 1):
//! `rsp_*` hold the answer to the branch of the previous cycle.
//!
//! Decision (§2.3): a branch that did not diverge is bypassed without a table access
//! (`rsp_valid`, `rsp_stall` = 0, nothing else); a diverged branch that hits stalls when its
//! history predicts an adequate compaction; one that misses allocates an entry with the
//! history "adequate" and stalls.
//!
//! History (§2.6, A12), one saturating counter per entry whose limits are parameters of
//! `HIST` (computed here once and emitted into the RTL as localparams):
//!
//! | HIST | counter range | allocated as | WCU evaluation | stall when |
//! |---|---|---|---|---|
//! | 0 1b-Latest | 0..1 | 1 | adequate ? +1 : -1 (= h <- adq) | h >= 1 |
//! | 1 1b-Sticky | 0..1 | 1 | no change | h >= 1 |
//! | 2 2-bit | 0..3 | `CTR_INIT` | adequate ? +1 : -1, saturating | h >= 2 |
//!
//! so 1bL is the 2-bit counter's logic at a range of 0..1, and with 1bS `rsp_stall ==
//! br_diverged` (§7.4).
//!
//! Same-cycle rules (§7.2, exactly): a lookup reads the state before the edge (it does not
//! see a same-cycle update); at the edge the update is applied first, then the
//! allocation, so an allocation whose victim is the entry being updated wins; a lookup hit
//! and an allocation make the entry MRU, an update does not (A14); `flush` (kernel end,
//! A15) clears every valid bit at the edge and nothing else is written in that cycle: the
//! same-cycle update is dropped (T12, `upd_hit` = 0) and a same-cycle lookup is answered
//! from the state before the edge (a hit's history, or "stall" on a miss) but allocates
//! nothing and moves no LRU rank (`rsp_alloc` = 0).
//!
//! LRU: a rank per entry, 0 = most recently used ... `ENTRIES-1` = least; the ranks are a
//! permutation of `0..ENTRIES` at all times (reset: entry i has rank i; flush keeps them).
//! Touching entry t (a hit or an allocation) gives it rank 0 and ages every entry younger
//! than it by one. Allocation takes the lowest-index invalid entry, or when every entry is
//! valid the one of rank `ENTRIES-1` (A14).
//!
//! Outputs added to §7.2 for observation: `rsp_evict` (the allocation replaced a valid
//! entry: the table was full). `rsp_idx` is the hit entry on a hit, the allocated entry on
//! an allocation, else 0.
//!
//! Decisions where the spec is silent or where it and the seed differ:
//! - The A11 decision latch (`LATCH_DECISION`, `dec_valid`/`dec_stall`) is **not** in the
//!   CAPT: it is state per CTA-stack entry (the first divergent warp of a CTA latches its
//!   decision in the stack entry of the branch; later warps of the CTA use it while their
//!   lookups still touch the LRU), and the CAPT is shared by every CTA of the core. The
//!   stack controller that holds the entries holds the latch; this unit answers every
//!   lookup from its table.
//! - `ALLOC_ON_UPDATE` (A13) is fixed at 0 and not a parameter: an update of a missing
//!   entry is dropped. Allocating on it would need a second allocation in the cycle of a
//!   lookup miss (two victims, two LRU moves), for a case the seed never describes.
//! - 1b-Sticky: the seed (L1080) sets the bit "when the warp that executed a branch
//!   diverges" and keeps it "until the kernel completes"; the spec's table reads this as
//!   "allocated as 1, never updated". Both agree because only a divergent lookup touches
//!   the table and it allocates with h = 1; the bit is cleared only by the flush at kernel
//!   end (or an eviction, after which the next divergent lookup allocates it as 1 again).
//! - The seed allocates "adequate" on a miss (L1065) and says the CAPT is updated only by
//!   the WCU's evaluation (L1069); the allocation is the only other write, as the spec has.
//! - `CTR_INIT` is limited to the "adequate" states 2 and 3: a miss is assumed adequate
//!   (L1065), so an allocation below 2 would stall on a prediction of "inadequate".
//!
//! Storage (design.md §5: RAM primitives where they fit). Nothing of the CAPT fits the
//! 1-write, 1-read `wf_ram_dp`, so all of it is in flip-flops:
//! - tags and valid bits: the lookup and the update each compare their PC with every
//!   entry's tag in the same cycle (a CAM: `ENTRIES` comparators per port), which needs all
//!   tags at once, not one RAM word; the valid bits are flash-cleared by `flush`;
//! - LRU ranks: a touch rewrites the rank of every entry younger than the touched one;
//! - history: per cycle the lookup reads the hit entry's history, the update
//!   reads-modifies-writes another entry's, and the allocation writes a third: two reads
//!   and two writes (or a read-modify-write in one cycle), against one write port. A second
//!   RAM written by the update only would still need the allocation's write. And the
//!   history is 2 bits of an entry's `PCW + 1 + 2 + $clog2(ENTRIES)` (40 of 40 bits at the
//!   defaults: 32 tag + 1 valid + 2 history + 5 rank): a RAM would save little even if it
//!   fit.
//!
//! Cost: `ENTRIES * (PCW + 3 + $clog2(ENTRIES))` flops plus `6 + $clog2(ENTRIES)` response
//! flops (1291 at the defaults), and `2 * ENTRIES` PCW-bit comparators; `warpforge synth`
//! estimates about 22.5K NAND2-equivalents at the defaults, 1.8x the seed's 12,338 (Table
//! 4.3): see README "Area" for the table and what it counts.
//!
//! Illegal use is asserted here and in the RTL: two valid entries with the same tag (a
//! lookup or an update matching more than one entry), and LRU ranks that are not a
//! permutation (not exactly one entry of the last rank when the table is full). Neither
//! can come from the ports: they catch bugs in the table logic.
//!
//! The typed fast path is allocation-free: the table is fixed arrays of `MAX_ENTRIES`.

use super::contract::{low_mask, Bits, CostFigure, GpuUse, LocalParam, Params, Scaling, SeedCost};
use super::coverage::Cover;
use super::declare::{Unit, UnitParams};

/// The largest `ENTRIES`.
pub const MAX_ENTRIES: usize = 64;

/// The history configurations (`HIST`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hist {
    /// 1b-Latest: the last adequacy result.
    Latest = 0,
    /// 1b-Sticky: set on divergence until the kernel ends.
    Sticky = 1,
    /// 2-bit saturating counter.
    Counter2 = 2,
}

/// The history counter of one `HIST`/`CTR_INIT`: what the model and the RTL's localparams
/// share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistRule {
    /// Saturation value (1 or 3).
    pub max: u8,
    /// Predict "stall" when the history is at least this.
    pub thresh: u8,
    /// The value an allocation writes ("adequate").
    pub init: u8,
    /// The WCU evaluation changes the history (0 for 1b-Sticky).
    pub updates: bool,
}

impl HistRule {
    pub fn of(p: &CaptParams) -> HistRule {
        match p.hist {
            0 => HistRule {
                max: 1,
                thresh: 1,
                init: 1,
                updates: true,
            },
            1 => HistRule {
                max: 1,
                thresh: 1,
                init: 1,
                updates: false,
            },
            _ => HistRule {
                max: 3,
                thresh: 2,
                init: p.ctr_init as u8,
                updates: true,
            },
        }
    }

    /// The history after a WCU evaluation of `adequate`.
    #[inline]
    pub fn next(&self, h: u8, adequate: bool) -> u8 {
        match (self.updates, adequate) {
            (false, _) => h,
            (true, true) => (h + 1).min(self.max),
            (true, false) => h.saturating_sub(1),
        }
    }
}

fn capt_localparams(p: &Params) -> Vec<LocalParam> {
    let r = HistRule::of(&CaptParams::from_params(p));
    vec![
        LocalParam::sized(
            "HIST_MAX",
            2,
            r.max as u64,
            "history saturation value (HIST)",
        ),
        LocalParam::sized(
            "HIST_THR",
            2,
            r.thresh as u64,
            "predict stall when history >= this",
        ),
        LocalParam::sized(
            "HIST_INIT",
            2,
            r.init as u64,
            "history of an allocated entry",
        ),
        LocalParam::int(
            "HIST_UPD",
            r.updates as u64,
            "1: the WCU evaluation updates history",
        ),
    ]
}

/// Functional coverage: every entry allocated (the table fills, lowest invalid first), a
/// full table evicting, hits that stall and hits that bypass, every response, lookups and
/// updates coinciding with each other and with a flush, an update hitting the entry the
/// same cycle's allocation evicts, allocations back to back, reset with valid entries.
static CAPT_COVERAGE: [Cover; 9] = [
    Cover::ValuesWhen {
        port: "rsp_idx",
        max: "ENTRIES-1",
        when: "rsp_alloc",
    },
    Cover::ValuesWhen {
        port: "rsp_stall",
        max: "1",
        when: "rsp_hit",
    },
    Cover::Raised(&[
        "rsp_valid",
        "rsp_stall",
        "rsp_alloc",
        "rsp_evict",
        "upd_hit",
    ]),
    Cover::Together(&["br_valid", "br_diverged", "upd_valid"]),
    Cover::Together(&["flush", "br_valid", "br_diverged"]),
    Cover::Together(&["flush", "upd_valid"]),
    Cover::Together(&["rsp_evict", "upd_hit"]),
    Cover::BackToBack("rsp_alloc"),
    Cover::ResetWhile("dbg_valid"),
];

/// The seed's gate counts of the CAPT (Table 4.3, L1567-L1571: Verilog synthesised with
/// Synopsys Design Compiler in a 45 nm library, NAND2 equivalents) at 1b-Latest history.
const CAPT_SEED_COSTS: [SeedCost; 5] = {
    const fn at(label: &'static str, set: &'static [(&'static str, u64)], gates: f64) -> SeedCost {
        SeedCost {
            label,
            params: set,
            relative_to: None,
            figure: CostFigure::Nand2Eq,
            seed: gates,
            seed_basis:
                "NAND2-equivalent gates, Synopsys DC, 45 nm; seed 001 Table 4.3, L1567-L1571",
        }
    }
    [
        at("CAPT, 2 entries", &[("ENTRIES", 2), ("HIST", 0)], 733.56),
        at("CAPT, 4 entries", &[("ENTRIES", 4), ("HIST", 0)], 1432.63),
        at("CAPT, 8 entries", &[("ENTRIES", 8), ("HIST", 0)], 2840.43),
        at("CAPT, 16 entries", &[("ENTRIES", 16), ("HIST", 0)], 6005.44),
        at(
            "CAPT, 32 entries",
            &[("ENTRIES", 32), ("HIST", 0)],
            12338.07,
        ),
    ]
};

crate::declare_unit! {
    /// The single description of `capri_capt`.
    pub static CAPT_DESC: CapriCapt = unit "capri_capt" {
        summary: "CAPRI compaction-adequacy prediction table (fully associative, true LRU) and decision logic",
        spec: "specs/tbc-capri-slp.md §2, A11-A17, §7.2, §7.4, §7.5 T3-T5, T10-T12, T16",
        // The paper's default (32 entries, 1bL); a small 2-bit table that evicts all the
        // time; a table of a non-power-of-two size (ranks 0..5 in 3 bits) with the 2-bit
        // counter allocated strongly adequate.
        standard_sets: &[
            &[],
            &[("ENTRIES", 4), ("PCW", 8), ("HIST", 2)],
            &[("ENTRIES", 6), ("PCW", 12), ("HIST", 2), ("CTR_INIT", 3)],
        ],
        check: |_| Ok(()),
        // One per SM, shared by its CTAs (L1023), under `sm.compaction = "capri"`.
        gpu: |cfg| {
            use crate::config::{CapriHistory, Compaction};
            if cfg.sm.compaction != Compaction::Capri {
                return GpuUse::NotUsed { set: &["sm.compaction=capri"] };
            }
            let hist = match cfg.sm.capri_history {
                CapriHistory::Latest => 0,
                CapriHistory::Sticky => 1,
                CapriHistory::TwoBit => 2,
            };
            GpuUse::Instantiated {
                instances: "one per SM (L1023)",
                params: vec![
                    ("ENTRIES", cfg.sm.capt_entries as u64, "sm.capt_entries"),
                    ("PCW", 32, ""),
                    ("HIST", hist, "sm.capri_history"),
                    ("CTR_INIT", 2, ""),
                ],
            }
        },
        localparams: capt_localparams,
        coverage: &CAPT_COVERAGE,
        scaling: &[
            Scaling { param: "ENTRIES", values: &[2, 4, 8, 16, 32], base: &[("HIST", 0)] },
            Scaling { param: "PCW", values: &[8, 16, 32], base: &[] },
        ],
        seed_costs: &CAPT_SEED_COSTS,
        ports: capt_port,
    }
    /// Parameters of `capri_capt` (spec §7.2; same names as the Verilog parameters).
    params CaptParams {
        entries: u32 = ENTRIES(32, 2..=MAX_ENTRIES as u64) "table entries (fully associative; 32 in the paper, L1457)",
        pcw: u32 = PCW(32, 4..=32) "branch PC (tag) width (A17)",
        hist: u32 = HIST(0, 0..=2) "history: 0 1b-Latest, 1 1b-Sticky, 2 2-bit counter",
        ctr_init: u32 = CTR_INIT(2, 2..=3) "2-bit counter value of an allocated entry (HIST=2, A12)",
    }
    /// Inputs of one cycle (spec §7.2).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    inputs CaptInputs {
        flush: bool ["1"] "kernel end: clear every valid bit (A15); a same-cycle update is dropped",
        br_valid: bool ["1"] "a warp executed a conditional branch",
        br_pc: u32 ["PCW"] "the branch's PC (the tag)",
        br_diverged: bool ["1"] "taken and not-taken masks both non-empty (A16)",
        upd_valid: bool ["1"] "a WCU evaluation of a branch",
        upd_pc: u32 ["PCW"] "the evaluated branch's PC",
        upd_adequate: bool ["1"] "the evaluation found compaction adequate",
    }
    /// The response to the previous cycle's branch (`LOOKUP_LAT` = 1) and update.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    registered CaptRegs {
        rsp_valid: bool ["1"] "br_valid of the previous cycle",
        rsp_stall: bool ["1"] "wait for compaction (0 without divergence: no table access)",
        rsp_hit: bool ["1"] "the diverged branch was in the table",
        rsp_alloc: bool ["1"] "an entry was allocated for it (a miss, not in a flush cycle)",
        rsp_evict: bool ["1"] "the allocation replaced a valid entry (the LRU one)",
        rsp_idx: u32 ["$clog2(ENTRIES)"] "the hit or allocated entry (0 otherwise)",
        upd_hit: bool ["1"] "the previous cycle's update found its entry (and was applied)",
    }
    /// No combinational outputs.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    combinational CaptEvents {}
    debug {
        dbg_valid ["ENTRIES"] "valid bit per entry",
        dbg_tag ["ENTRIES*PCW"] "tag per entry (0 when invalid)"
            layout([entry: "ENTRIES"] "PCW"),
        dbg_hist ["ENTRIES*2"] "history per entry (0 when invalid)"
            layout([entry: "ENTRIES"] "2"),
        dbg_lru ["ENTRIES*$clog2(ENTRIES)"] "LRU rank per entry (0 most recent)"
            layout([entry: "ENTRIES"] "$clog2(ENTRIES)"),
    }
}

/// The state of one CAPT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapriCapt {
    params: CaptParams,
    rule: HistRule,
    pc_mask: u32,
    /// Bit i: entry i is valid.
    valid: u64,
    tag: [u32; MAX_ENTRIES],
    hist: [u8; MAX_ENTRIES],
    /// LRU rank, 0 = most recently used.
    rank: [u8; MAX_ENTRIES],
    rsp: CaptRegs,
}

impl CapriCapt {
    pub fn new(params: CaptParams) -> CapriCapt {
        let mut c = CapriCapt {
            params,
            rule: HistRule::of(&params),
            pc_mask: low_mask(params.pcw) as u32,
            valid: 0,
            tag: [0; MAX_ENTRIES],
            hist: [0; MAX_ENTRIES],
            rank: [0; MAX_ENTRIES],
            rsp: CaptRegs::default(),
        };
        c.reset();
        c
    }

    pub fn params(&self) -> CaptParams {
        self.params
    }

    fn entries(&self) -> usize {
        self.params.entries as usize
    }

    fn full(&self) -> u64 {
        low_mask(self.params.entries)
    }

    pub fn reset(&mut self) {
        self.valid = 0;
        self.tag = [0; MAX_ENTRIES];
        self.hist = [0; MAX_ENTRIES];
        for (i, r) in self.rank.iter_mut().enumerate() {
            *r = i as u8;
        }
        self.rsp = CaptRegs::default();
    }

    /// The valid entry tagged `pc` (masked to `PCW` bits), if any. Two such entries are
    /// illegal (a bug of the table logic): panics.
    #[inline]
    pub fn find(&self, pc: u32) -> Option<usize> {
        let pc = pc & self.pc_mask;
        let mut hits = 0u64;
        let mut valid = self.valid;
        while valid != 0 {
            let i = valid.trailing_zeros() as usize;
            valid &= valid - 1;
            hits |= ((self.tag[i] == pc) as u64) << i;
        }
        if hits & hits.wrapping_sub(1) != 0 {
            panic!(
                "capri_capt: illegal state: entries {:#x} (bit mask) hold the same tag {pc:#x}",
                hits
            );
        }
        (hits != 0).then(|| hits.trailing_zeros() as usize)
    }

    /// The prediction for a diverged branch at `pc` from the current state: `Some(stall)`
    /// on a hit, `None` on a miss (which would allocate and stall).
    pub fn predict(&self, pc: u32) -> Option<bool> {
        self.find(pc).map(|i| self.hist[i] >= self.rule.thresh)
    }

    /// The entry an allocation takes now: the lowest invalid one, or the LRU one.
    fn victim(&self) -> usize {
        let free = !self.valid & self.full();
        if free != 0 {
            return free.trailing_zeros() as usize;
        }
        let last = (self.entries() - 1) as u8;
        let mut lru = None;
        for (i, &r) in self.rank[..self.entries()].iter().enumerate() {
            if r == last {
                assert!(
                    lru.is_none(),
                    "capri_capt: illegal state: LRU ranks are not a permutation"
                );
                lru = Some(i);
            }
        }
        lru.expect("capri_capt: illegal state: LRU ranks are not a permutation")
    }

    /// Make entry `t` the most recently used.
    fn touch(&mut self, t: usize) {
        let r = self.rank[t];
        for x in &mut self.rank[..self.params.entries as usize] {
            if *x < r {
                *x += 1;
            }
        }
        self.rank[t] = 0;
    }

    /// The response registers: the answer to the previous cycle's branch and update.
    #[inline]
    pub fn response(&self) -> CaptRegs {
        self.rsp
    }

    /// Number of valid entries.
    pub fn occupancy(&self) -> u32 {
        self.valid.count_ones()
    }

    /// The clock edge.
    pub fn tick(&mut self, inp: &CaptInputs) {
        let mut rsp = CaptRegs {
            rsp_valid: inp.br_valid,
            ..CaptRegs::default()
        };
        let lookup = inp.br_valid && inp.br_diverged;
        let write = !inp.flush;
        let mut touch = None;
        let mut alloc = None;
        if lookup {
            match self.find(inp.br_pc) {
                Some(i) => {
                    rsp.rsp_hit = true;
                    rsp.rsp_stall = self.hist[i] >= self.rule.thresh;
                    rsp.rsp_idx = i as u32;
                    touch = Some(i);
                }
                None => {
                    rsp.rsp_stall = true;
                    if write {
                        let v = self.victim();
                        rsp.rsp_alloc = true;
                        rsp.rsp_evict = self.valid >> v & 1 != 0;
                        rsp.rsp_idx = v as u32;
                        alloc = Some(v);
                        touch = Some(v);
                    }
                }
            }
        }
        let upd = if inp.upd_valid && write {
            self.find(inp.upd_pc)
        } else {
            None
        };
        rsp.upd_hit = upd.is_some();
        if !write {
            self.valid = 0;
        } else {
            // Update first, then the allocation (which wins on the same entry).
            if let Some(u) = upd {
                self.hist[u] = self.rule.next(self.hist[u], inp.upd_adequate);
            }
            if let Some(v) = alloc {
                self.valid |= 1 << v;
                self.tag[v] = inp.br_pc & self.pc_mask;
                self.hist[v] = self.rule.init;
            }
            if let Some(t) = touch {
                self.touch(t);
            }
        }
        self.rsp = rsp;
    }

    /// Entry `i`: `(tag, history)` if valid.
    pub fn entry(&self, i: usize) -> Option<(u32, u8)> {
        (self.valid >> i & 1 != 0).then(|| (self.tag[i], self.hist[i]))
    }

    /// LRU rank of entry `i` (0 = most recently used).
    pub fn rank(&self, i: usize) -> u8 {
        self.rank[i]
    }
}

impl Unit for CapriCapt {
    fn new(params: CaptParams) -> CapriCapt {
        CapriCapt::new(params)
    }
    fn reset(&mut self) {
        CapriCapt::reset(self)
    }
    fn registered(&self) -> CaptRegs {
        self.rsp
    }
    fn events(&self, _inp: &CaptInputs) -> CaptEvents {
        CaptEvents {}
    }
    fn tick(&mut self, inp: &CaptInputs) -> CaptEvents {
        CapriCapt::tick(self, inp);
        CaptEvents {}
    }
    fn debug_state(&self, ports: &mut [Bits]) {
        let (n, pcw) = (self.entries(), self.params.pcw);
        let iw = super::contract::clog2(n as u64);
        ports[capt_port::dbg_valid].set_u64(self.valid);
        for i in 0..n {
            let (tag, hist) = self.entry(i).unwrap_or((0, 0));
            ports[capt_port::dbg_tag].set_field(i as u32 * pcw, pcw, tag as u64);
            ports[capt_port::dbg_hist].set_field(i as u32 * 2, 2, hist as u64);
            ports[capt_port::dbg_lru].set_field(i as u32 * iw, iw, self.rank[i] as u64);
        }
    }
    crate::records_its_inputs!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capt(entries: u32, hist: u32, ctr_init: u32) -> CapriCapt {
        let p = CaptParams {
            entries,
            pcw: 32,
            hist,
            ctr_init,
        };
        p.to_params().unwrap();
        CapriCapt::new(p)
    }

    fn br(pc: u32, diverged: bool) -> CaptInputs {
        CaptInputs {
            br_valid: true,
            br_pc: pc,
            br_diverged: diverged,
            ..Default::default()
        }
    }

    fn upd(pc: u32, adequate: bool) -> CaptInputs {
        CaptInputs {
            upd_valid: true,
            upd_pc: pc,
            upd_adequate: adequate,
            ..Default::default()
        }
    }

    /// Ranks of the valid entries are a permutation, and no tag is held twice.
    fn check_invariants(c: &CapriCapt) {
        let n = c.entries();
        let mut seen = vec![false; n];
        for i in 0..n {
            assert!(!std::mem::replace(&mut seen[c.rank(i) as usize], true));
            if let Some((tag, _)) = c.entry(i) {
                assert_eq!(c.find(tag), Some(i));
            }
        }
    }

    const BR_BC: u32 = 0x40;

    /// T3 + T4: the Fig 4.8 sequence, then the same branch again under every history.
    #[test]
    fn t3_t4_fig_4_8_then_replay_under_every_history() {
        for (hist, init, second_stall) in [(0, 2, false), (2, 2, false), (2, 3, true), (1, 2, true)]
        {
            let mut c = capt(32, hist, init);
            // (a) W0 does not diverge: bypass, no table access.
            c.tick(&br(BR_BC, false));
            let r = c.response();
            assert!(r.rsp_valid && !r.rsp_stall && !r.rsp_hit && !r.rsp_alloc);
            assert_eq!(c.occupancy(), 0);
            // (b) W2 diverges: miss, allocate as adequate, stall.
            c.tick(&br(BR_BC, true));
            let r = c.response();
            assert!(r.rsp_stall && r.rsp_alloc && !r.rsp_hit && r.rsp_idx == 0);
            // (c) W1 diverges: hit, stall.
            c.tick(&br(BR_BC, true));
            let r = c.response();
            assert!(r.rsp_stall && r.rsp_hit && !r.rsp_alloc);
            // (d) the WCU finds the branch inadequate (counts 3,2,1,2: 3 = 3 warps).
            c.tick(&upd(BR_BC, false));
            assert!(c.response().upd_hit && !c.response().rsp_valid);
            // T4: the next divergent warp at BR_B-C.
            c.tick(&br(BR_BC, true));
            let r = c.response();
            assert!(r.rsp_hit, "HIST={hist}");
            assert_eq!(r.rsp_stall, second_stall, "HIST={hist} CTR_INIT={init}");
            check_invariants(&c);
        }
    }

    /// T5: an adequate evaluation keeps (1bL) or raises (2-bit) the history.
    #[test]
    fn t5_adequate_evaluation() {
        let mut c = capt(8, 2, 2);
        c.tick(&br(BR_BC, true));
        c.tick(&upd(BR_BC, true));
        assert_eq!(c.entry(0), Some((BR_BC, 3)));
        c.tick(&upd(BR_BC, true));
        assert_eq!(c.entry(0), Some((BR_BC, 3)), "saturates");
        let mut c = capt(8, 0, 2);
        c.tick(&br(BR_BC, true));
        c.tick(&upd(BR_BC, false));
        c.tick(&upd(BR_BC, true));
        assert_eq!(c.entry(0), Some((BR_BC, 1)));
    }

    /// T10: ENTRIES+1 divergent PCs evict the oldest; it misses and allocates as adequate.
    #[test]
    fn t10_capacity_and_lru_victim() {
        for n in [2, 4, 6, 32] {
            let mut c = capt(n, 0, 2);
            for k in 0..n {
                c.tick(&br(0x100 + k, true));
                assert_eq!(c.response().rsp_idx, k, "lowest invalid entry first");
                assert!(!c.response().rsp_evict);
                c.tick(&upd(0x100 + k, false));
            }
            c.tick(&br(0x100 + n, true));
            let r = c.response();
            assert!(
                r.rsp_alloc && r.rsp_evict && r.rsp_idx == 0,
                "oldest is entry 0"
            );
            c.tick(&br(0x100, true));
            let r = c.response();
            assert!(r.rsp_alloc && r.rsp_stall && !r.rsp_hit, "re-lookup misses");
            assert_eq!(r.rsp_idx, 1, "then entry 1 is the oldest");
            check_invariants(&c);
        }
    }

    /// A14: hits refresh an entry, updates do not.
    #[test]
    fn lookup_hits_make_mru_updates_do_not() {
        let mut c = capt(4, 0, 2);
        for k in 0..4 {
            c.tick(&br(k, true));
        }
        c.tick(&br(0, true)); // hit: entry 0 MRU, entry 1 now LRU
        c.tick(&upd(1, true)); // update: no LRU change
        c.tick(&br(9, true));
        assert_eq!(c.response().rsp_idx, 1);
        assert!(c.response().rsp_evict);
        // A non-divergent lookup does not touch the table.
        c.tick(&br(2, false));
        c.tick(&br(10, true));
        assert_eq!(c.response().rsp_idx, 2);
    }

    /// T11: same-cycle update and lookup of one PC: the lookup sees the old history.
    #[test]
    fn t11_same_cycle_update_and_lookup() {
        let mut c = capt(4, 0, 2);
        c.tick(&br(7, true));
        let both = CaptInputs {
            upd_valid: true,
            upd_pc: 7,
            upd_adequate: false,
            ..br(7, true)
        };
        c.tick(&both);
        let r = c.response();
        assert!(r.rsp_hit && r.rsp_stall && r.upd_hit, "old history");
        c.tick(&br(7, true));
        assert!(!c.response().rsp_stall, "the update is visible next cycle");
    }

    /// Rule 3: an allocation whose victim is the entry being updated wins.
    #[test]
    fn allocation_wins_over_an_update_of_its_victim() {
        let mut c = capt(2, 2, 3);
        c.tick(&br(1, true));
        c.tick(&br(2, true));
        let both = CaptInputs {
            upd_valid: true,
            upd_pc: 1,
            upd_adequate: false,
            ..br(3, true)
        };
        c.tick(&both);
        assert!(c.response().upd_hit && c.response().rsp_evict);
        assert_eq!(c.entry(0), Some((3, 3)), "the new entry at CTR_INIT");
    }

    /// T12: flush clears every entry; a same-cycle update is dropped, a lookup answered
    /// but not allocated.
    #[test]
    fn t12_flush() {
        let mut c = capt(4, 0, 2);
        c.tick(&br(5, true));
        c.tick(&br(6, true));
        let f = CaptInputs {
            flush: true,
            upd_valid: true,
            upd_pc: 5,
            ..br(6, true)
        };
        c.tick(&f);
        let r = c.response();
        assert!(r.rsp_hit && r.rsp_stall && !r.upd_hit);
        assert_eq!(c.occupancy(), 0);
        c.tick(&CaptInputs {
            flush: true,
            ..br(8, true)
        });
        assert!(!c.response().rsp_alloc && c.response().rsp_stall);
        assert_eq!(c.occupancy(), 0);
        c.tick(&br(5, true));
        assert!(c.response().rsp_alloc && c.response().rsp_idx == 0);
    }

    /// T16 (CAPT part) and §7.4: a non-divergent branch never touches the table; with
    /// 1bS, rsp_stall == br_diverged on random traffic.
    #[test]
    fn t16_and_sticky_stall_equals_divergence() {
        let mut c = capt(4, 1, 2);
        let mut x = 0x1234_5678u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let inp = CaptInputs {
                flush: x.is_multiple_of(97),
                br_valid: x & 2 != 0,
                br_pc: (x >> 8) as u32 % 9,
                br_diverged: x & 4 != 0,
                upd_valid: x & 8 != 0,
                upd_pc: (x >> 16) as u32 % 9,
                upd_adequate: x & 16 != 0,
            };
            let before = c.clone();
            c.tick(&inp);
            let r = c.response();
            assert_eq!(r.rsp_stall, inp.br_valid && inp.br_diverged);
            let touched = inp.br_valid && inp.br_diverged;
            if !touched && !inp.flush {
                assert_eq!(c.rank, before.rank, "no table access");
                assert_eq!(c.valid, before.valid);
            }
            check_invariants(&c);
        }
    }

    #[test]
    #[should_panic(expected = "hold the same tag")]
    fn two_entries_with_one_tag_are_illegal() {
        let mut c = capt(4, 0, 2);
        c.tick(&br(1, true));
        c.tick(&br(2, true));
        c.tag[1] = 1;
        c.find(1);
    }

    #[test]
    fn localparams_follow_the_history_rule() {
        let p = CAPT_DESC
            .params(&[("HIST", 2u64), ("CTR_INIT", 3)])
            .unwrap();
        let lps = capt_localparams(&p);
        let get = |n: &str| lps.iter().find(|l| l.name == n).unwrap().value;
        assert_eq!(
            (
                get("HIST_MAX"),
                get("HIST_THR"),
                get("HIST_INIT"),
                get("HIST_UPD")
            ),
            (3, 2, 3, 1)
        );
        let p = CAPT_DESC.params(&[("HIST", 1u64)]).unwrap();
        assert_eq!(capt_localparams(&p)[3].value, 0);
    }
}
