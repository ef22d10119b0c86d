//! The co-simulation kit of every unit: its seeded random stimulus and its directed vectors
//! (workload-trace stimulus comes from the GPU model, for every unit the model
//! instantiates: see [`warpforge_model::units::contract::UnitDesc::gpu`]).
//!
//! This is the co-simulator's part of the unit registry (the model's is
//! [`warpforge_model::units::ALL`], the generator's is its template registry): a unit is
//! found by its description, never by its name.

use crate::capt_stimulus::{capt_directed, slp_sweep, CaptRandom};
use crate::lockstep::Stimulus;
use crate::mutants::{DirectedMutant, KnownEquivalent};
use crate::stack_stimulus::CfgStimulus;
use crate::stimulus::RandomStimulus;
use warpforge_model::units::capri_capt::CAPT_DESC;
use warpforge_model::units::contract::{Params, UnitDesc};
use warpforge_model::units::dpe_scoreboard::SCOREBOARD_DESC;
use warpforge_model::units::simt_stack::SPE_DESC;
use warpforge_model::units::simt_stack_dpe::DPE_DESC;
use warpforge_model::units::slp_perm::SLP_DESC;

/// A boxed stimulus of a unit at a parameter set.
pub type BoxedStimulus = Box<dyn Stimulus + Send>;

/// How to stimulate one unit.
pub struct Kit {
    pub unit: &'static UnitDesc,
    /// Seeded constrained-random stimulus running `cycles` cycles: (desc, params, seed,
    /// cycles).
    pub random: fn(&'static UnitDesc, &Params, u64, u64) -> BoxedStimulus,
    /// The spec's directed vectors, if the unit has them.
    pub directed: Option<fn(&'static UnitDesc, &Params) -> BoxedStimulus>,
    /// Hand-written mutants of the unit's storage and control logic (run in full by
    /// [`crate::mutants::run_mutants`], next to the generated operator mutants).
    pub mutants: &'static [DirectedMutant],
    /// Generated mutants that are equivalent to the original, with the argument.
    pub equivalents: &'static [KnownEquivalent],
}

/// Where the SPE's pair-index mutant (`sp_m1[DEPTH_W-2:1]`) cannot differ: `DEPTH` a
/// power of two (bit DEPTH_W-1 of sp-1 is set only at sp-1 = DEPTH, which never occurs),
/// or DEPTH=3, where DEPTH_W=2 makes it the backward select `[0:1]`, which Verilator reads
/// as `[2:1]` (its SELRANGE warning says so) whose low bit is the original bit 1.
fn spe_pair_msb_unused(p: &Params) -> bool {
    let depth = p.get("DEPTH");
    depth.is_power_of_two() || depth == 3
}

/// Mutants of the stacks' templates that no input can tell from the original.
static STACK_EQUIVALENTS: [KnownEquivalent; 3] = [
    KnownEquivalent {
        line: "pair     = sp_m1[DEPTH_W-1:1];",
        edit: "`- 1` → `- 2`",
        reason: "the pair index drops bit DEPTH_W-1 of sp-1, which is 0 at every depth when \
                 DEPTH is a power of two (sp-1 < DEPTH), and at DEPTH=3 Verilator reads the \
                 backward select [0:1] as [2:1]; at other depths the mutant is caught",
        when: spe_pair_msb_unused,
    },
    KnownEquivalent {
        line: ".wr_addr (sp_m1[RAM_ADDR_W-1:0]),",
        edit: "`- 1` → `- 2`",
        reason: "at DEPTH=2 the only push that fits is from depth 1, so the write address is \
                 word 0 either way (Verilator reads the backward select [-1:0] as 0)",
        when: |p| p.get("DEPTH") == 2,
    },
    KnownEquivalent {
        line: "sp             <= { {(DEPTH_W - 1){1'b0}}, 1'b1 };",
        edit: "`- 1` → `- 2`",
        reason: "one zero fewer in the replication: the constant 1 is zero-extended to the \
                 same value",
        when: |_| true,
    },
];

/// The storage mutants of both stacks (the same names in both templates): the
/// registered-read fill's data never selected (the RAM read register is loaded but the
/// top stays in the registers: the registered-read analog of a missing bypass), the
/// asynchronous fill not loading the registers.
const STACK_STORAGE: [DirectedMutant; 2] = [
    DirectedMutant {
        description: "registered-read fill data never selected (top_in_q stuck at 0)",
        from: "top_in_q_q <= 1'b1;",
        to: "top_in_q_q <= 1'b0;",
        only_if: Some(("RAM_RD_REG", 1)),
    },
    DirectedMutant {
        description: "asynchronous fill does not load the top registers",
        from: "(fill && (RAM_RD_REG == 0))",
        to: "1'b0",
        only_if: Some(("RAM_RD_REG", 0)),
    },
];

/// Bugs of the kinds that random stimulus without coverage steering let through (issue
/// #11): the reset no longer clearing a sticky error flag, and a launch that no longer
/// blocks a same-cycle update (the two never coincided). Both stacks name these alike.
const STACK_CONTROL: [DirectedMutant; 3] = [
    DirectedMutant {
        description:
            "reset does not clear err_overflow (the first assignment is the reset branch's)",
        from: "err_overflow_q <= 1'b0;",
        to: "",
        only_if: None,
    },
    DirectedMutant {
        description: "reset does not clear err_pc",
        from: "err_pc_q       <= 1'b0;",
        to: "",
        only_if: None,
    },
    DirectedMutant {
        description: "a launch no longer blocks a same-cycle update (coinciding-event priority)",
        from: "wire run       = rst_n && !launch_valid;",
        to: "wire run       = rst_n;",
        only_if: None,
    },
];

/// The fill reading the word of the top itself instead of the one below (a wrong fill
/// address; `RamPort` covers the word above); the stack full one entry early; the new
/// depth losing its MSB (a 16-deep stack reading empty when full).
static SPE_MUTANTS: [DirectedMutant; 9] = [
    STACK_CONTROL[0],
    STACK_CONTROL[1],
    STACK_CONTROL[2],
    DirectedMutant {
        description: "off by one at full: a push that exactly fills the stack overflows",
        from: "(sp_div > {1'b0, SP_FULL});  // the push is dropped",
        to: "(sp_div >= {1'b0, SP_FULL});  // the push is dropped",
        only_if: None,
    },
    DirectedMutant {
        description: "the depth after a push loses its MSB",
        from: "sp <= sp_div[DEPTH_W-1:0];",
        to: "sp <= {1'b0, sp_div[DEPTH_W-2:0]};",
        only_if: None,
    },
    STACK_STORAGE[0],
    STACK_STORAGE[1],
    DirectedMutant {
        description: "fill reads the top pair's own word, not the one below",
        from: "rd_word = wr_word - 1'b1;",
        to: "rd_word = wr_word;",
        only_if: None,
    },
    DirectedMutant {
        description: "two pushes spill the pair without the rewritten TOS",
        from: "spill_data = {push0_e, div_tos_e};",
        to: "spill_data = {push0_e, view0};",
        only_if: None,
    },
];

static DPE_MUTANTS: [DirectedMutant; 9] = [
    STACK_CONTROL[0],
    STACK_CONTROL[1],
    STACK_CONTROL[2],
    DirectedMutant {
        description: "off by one at full: the push into the last free entry overflows",
        from: "(sp == SP_FULL);  // the push is dropped",
        to: "(sp == SP_FULL - 1'b1);  // the push is dropped",
        only_if: None,
    },
    DirectedMutant {
        description: "the depth after a push loses its MSB",
        from: "sp <= sp + 1'b1;",
        to: "sp <= {1'b0, sp[DEPTH_W-2:0] + 1'b1};",
        only_if: None,
    },
    STACK_STORAGE[0],
    STACK_STORAGE[1],
    DirectedMutant {
        description: "fill reads the TOS's own word, not the one below",
        from: ".rd_addr (sp_m1[RAM_ADDR_W-1:0] - 1'b1)",
        to: ".rd_addr (sp_m1[RAM_ADDR_W-1:0])",
        only_if: None,
    },
    DirectedMutant {
        description: "a push spills the parent without its slot update",
        from: ".wr_data (parent)",
        to: ".wr_data (view)",
        only_if: None,
    },
];

/// Coinciding-event priority in the scoreboard: a reserve and a release of the same register
/// of the same path in one cycle (an instruction issued as an older one writes back the
/// same register) must leave it pending; and the shadow copy taken before that cycle's
/// release.
static SCOREBOARD_MUTANTS: [DirectedMutant; 2] = [
    DirectedMutant {
        description: "a same-cycle release wins over a reserve of the same register",
        from: "pending_q <= (pending_q & ~rel_of(ROW)) | rsv_of(ROW);",
        to: "pending_q <= (pending_q | rsv_of(ROW)) & ~rel_of(ROW);",
        only_if: None,
    },
    DirectedMutant {
        description: "a same-cycle release is not applied to the shadow copy",
        from: "(cpy ? (pending_q | rsv_of(ROW)) : REG_NONE)) & ~rel_of(ROW);",
        to: "(cpy ? (pending_q | rsv_of(ROW)) : REG_NONE));",
        only_if: Some(("DUAL", 1)),
    },
];

/// Mutants of the scoreboard's template that no input can tell from the original: those of
/// logic that one value of `DUAL` does not generate or holds constant.
static SCOREBOARD_EQUIVALENTS: [KnownEquivalent; 7] = [
    KnownEquivalent {
        line: "<= REG_NONE;",
        edit: "stuck at 0",
        reason: "a reset assignment of zero: forcing its bit 0 to 0 changes nothing",
        when: |_| true,
    },
    KnownEquivalent {
        line: "assign p_rows[row] = REG_NONE;",
        edit: "",
        reason: "the constant-zero rows of side 1 (g_no_p) are generated only with DUAL=0; \
                 the mutant is caught there (dbg_P shows the row)",
        when: |p| p.get("DUAL") == 1,
    },
    KnownEquivalent {
        line: "if (DUAL_MODE || row % 2 == 0) begin : g_p",
        edit: "`==` → `!=`",
        reason: "with DUAL=1 every row has pending flops whatever the row's side; the \
                 mutant is caught at DUAL=0",
        when: |p| p.get("DUAL") == 1,
    },
    KnownEquivalent {
        line: "shadow_q",
        edit: "",
        reason: "with DUAL=0 shadow_q is loaded with constant zero (no flops after \
                 synthesis) and never read; the mutant is caught at DUAL=1",
        when: |p| p.get("DUAL") == 0,
    },
    KnownEquivalent {
        line: "rsv_sides = DUAL_MODE ? rsv_side",
        edit: "stuck at 0",
        reason: "a reserve port's side is DUAL_MODE ? rsv_side : 0, 0 with DUAL=0",
        when: |p| p.get("DUAL") == 0,
    },
    KnownEquivalent {
        line: "rel_sides = DUAL_MODE ? rel_side",
        edit: "stuck at 0",
        reason: "a release port's side is DUAL_MODE ? rel_side : 0, 0 with DUAL=0",
        when: |p| p.get("DUAL") == 0,
    },
    KnownEquivalent {
        line: "_valid[i] && (r",
        edit: "`&&` → `||`",
        reason: "with DUAL=0 every port's side is 0: the side-0 decoder then names the \
                 port's warp whether the port is valid or not, a row named by a port that \
                 is not valid loads its present value (the port's register bits are 0), \
                 and side 1 has no flops; the mutant is caught at DUAL=1",
        when: |p| p.get("DUAL") == 0,
    },
];

/// The CAPT's table logic, of the kinds the README lists: off by one at capacity (the
/// victim of a full table one rank too young), a missing flush, the flush no longer
/// dropping the same-cycle update, the missing reset of the LRU ranks and of the response,
/// same-cycle priority (the update winning over the allocation of its entry), LRU order (a
/// hit no longer refreshing its entry; the LRU victim taken while invalid entries remain),
/// and the 2-bit counter wrapping instead of saturating.
static CAPT_MUTANTS: [DirectedMutant; 9] = [
    DirectedMutant {
        description: "off by one at capacity: a full table evicts the second-oldest entry",
        from: "assign lru_oh[i]     = (ranks[i] == LAST);",
        to: "assign lru_oh[i]     = (ranks[i] == LAST - 1'b1);",
        only_if: None,
    },
    DirectedMutant {
        description: "flush does not clear the valid bits",
        from: "end else if (flush) begin",
        to: "end else if (1'b0) begin",
        only_if: None,
    },
    DirectedMutant {
        description: "flush does not drop the same-cycle update",
        from: "wire               upd_en     = upd_valid && write;",
        to: "wire               upd_en     = upd_valid;",
        only_if: None,
    },
    DirectedMutant {
        description: "reset does not restore the LRU ranks",
        from: "rank_q <= IDX;",
        to: "",
        only_if: None,
    },
    DirectedMutant {
        description: "reset does not clear rsp_valid (the first assignment is the reset branch's)",
        from: "rsp_valid_q <= 1'b0;",
        to: "",
        only_if: None,
    },
    DirectedMutant {
        description: "same-cycle priority: an update wins over the allocation of its entry",
        from: "if (alloc_we) begin\n                    hist_q <= HIST_INIT;",
        to: "if (alloc_we && !upd_we) begin\n                    hist_q <= HIST_INIT;",
        only_if: None,
    },
    DirectedMutant {
        description: "LRU order: a lookup hit does not make its entry MRU",
        from: "wire               touch_en   = lookup && write;",
        to: "wire               touch_en   = alloc_en;",
        only_if: None,
    },
    DirectedMutant {
        description: "LRU order: the LRU entry is evicted while invalid entries remain",
        from: "alloc_oh   = all_valid ? lru_oh : free_oh;",
        to: "alloc_oh   = lru_oh;",
        only_if: None,
    },
    DirectedMutant {
        description: "the 2-bit counter wraps from 3 to 0 instead of saturating",
        from: "hist_q <= (hist_q == HIST_MAX) ? hist_q : hist_q + 1'b1;",
        to: "hist_q <= hist_q + 1'b1;",
        only_if: Some(("HIST", 2)),
    },
];

/// `slp_perm`'s mapping logic: Balanced's odd warps not complemented, the per-kernel enable
/// ignored, Rotate_odd_1's inverse rotating the wrong way, and the mask permutation's
/// rotation ignoring `inverse`.
static SLP_MUTANTS: [DirectedMutant; 4] = [
    DirectedMutant {
        description: "Balanced: odd warps use m/2 without the complement",
        from: "xm = {odd, m[LW-1:1] ^ {(LW - 1){odd}}};",
        to: "xm = {odd, m[LW-1:1]};",
        only_if: None,
    },
    DirectedMutant {
        description: "the per-kernel enable is ignored",
        from: "wire [2:0]         mode_e = en ? mode : 3'd0;",
        to: "wire [2:0]         mode_e = mode;",
        only_if: None,
    },
    DirectedMutant {
        description: "Rotate_odd_1's inverse rotates the wrong way",
        from: "inverse ? lane_in - 1'b1 : lane_in + 1'b1;",
        to: "lane_in + 1'b1;",
        only_if: None,
    },
    DirectedMutant {
        description: "the mask rotation ignores inverse",
        from: "wire [S-1:0] vec_rot = inverse ? {vec_in[0], vec_in[S-1:1]} : ",
        to: "wire [S-1:0] vec_rot = ",
        only_if: None,
    },
];

/// Mutants of the CAPT's template that no input can tell from the original: two response
/// registers exchanging their targets inside the reset branch, where every one of them is
/// reset to 0 (`1'b0` or `IDX_NONE`).
static CAPT_EQUIVALENTS: [KnownEquivalent; 2] = [
    KnownEquivalent {
        line: "_q   <= IDX_NONE;",
        edit: "swapped",
        reason: "in the reset branch every response register is reset to 0: exchanging the \
                 targets of two zero assignments (1'b0, IDX_NONE) assigns the same zeros",
        when: |_| true,
    },
    KnownEquivalent {
        line: "<= 1'b0;",
        edit: "swapped",
        reason: "in the reset branch every response register is reset to 0: exchanging the \
                 targets of two zero assignments assigns the same zeros",
        when: |_| true,
    },
];

/// Mutants of `slp_perm`'s template that no input can tell from the original.
static SLP_EQUIVALENTS: [KnownEquivalent; 1] = [KnownEquivalent {
    line: "= wid_x[LW-1:0];",
    edit: "`- 1` → `- 2`",
    reason: "with WIDW < log2(S) bit LW-1 of wid_x is a zero of the zero-extension, so \
             m = wid_x[LW-2:0] zero-extended is the same value; caught where WIDW >= log2(S)",
    when: |p| p.get("WIDW") < p.get("S").trailing_zeros() as u64,
}];

fn capt_random(_: &'static UnitDesc, p: &Params, seed: u64, n: u64) -> BoxedStimulus {
    Box::new(CaptRandom::new(p, seed, n))
}

fn capt_vectors(_: &'static UnitDesc, p: &Params) -> BoxedStimulus {
    Box::new(capt_directed(p))
}

fn slp_vectors(_: &'static UnitDesc, p: &Params) -> BoxedStimulus {
    Box::new(slp_sweep(p, 1))
}

fn structured_programs(desc: &'static UnitDesc, p: &Params, seed: u64, n: u64) -> BoxedStimulus {
    Box::new(CfgStimulus::new(desc, p, seed, n))
}

fn spec_programs(desc: &'static UnitDesc, p: &Params) -> BoxedStimulus {
    Box::new(CfgStimulus::directed(desc, p))
}

/// Uniform random inputs (every port's every bit), a reset one cycle in 1000.
fn uniform_random(desc: &'static UnitDesc, p: &Params, seed: u64, n: u64) -> BoxedStimulus {
    Box::new(RandomStimulus::new(desc, p, seed, n))
}

/// SM-like reserves, writebacks, copies and queries with bursts of uniform random inputs.
fn scoreboard_traffic(_: &'static UnitDesc, p: &Params, seed: u64, n: u64) -> BoxedStimulus {
    Box::new(crate::sb_stimulus::ScoreboardRandom::new(p, seed, n))
}

/// Every unit's kit, in the model's unit order.
pub static KITS: &[Kit] = &[
    Kit {
        unit: &SPE_DESC,
        random: structured_programs,
        directed: Some(spec_programs),
        mutants: &SPE_MUTANTS,
        equivalents: &STACK_EQUIVALENTS,
    },
    Kit {
        unit: &DPE_DESC,
        random: structured_programs,
        directed: Some(spec_programs),
        mutants: &DPE_MUTANTS,
        equivalents: &STACK_EQUIVALENTS,
    },
    Kit {
        unit: &SCOREBOARD_DESC,
        random: scoreboard_traffic,
        directed: None,
        // No storage primitive: the scoreboard's rows stay in flops (see its template).
        mutants: &SCOREBOARD_MUTANTS,
        equivalents: &SCOREBOARD_EQUIVALENTS,
    },
    Kit {
        unit: &CAPT_DESC,
        random: capt_random,
        directed: Some(capt_vectors),
        mutants: &CAPT_MUTANTS,
        equivalents: &CAPT_EQUIVALENTS,
    },
    Kit {
        unit: &SLP_DESC,
        // Every input uniformly random: all modes, lanes and warps are equally legal.
        random: uniform_random,
        directed: Some(slp_vectors),
        mutants: &SLP_MUTANTS,
        equivalents: &SLP_EQUIVALENTS,
    },
    Kit {
        unit: &warpforge_model::units::wcu::WCU_DESC,
        random: crate::wcu_stimulus::random,
        directed: Some(crate::wcu_stimulus::directed),
        mutants: &crate::wcu_stimulus::MUTANTS,
        equivalents: &crate::wcu_stimulus::EQUIVALENTS,
    },
];

/// The kit of `desc`; every registered unit has one (checked by the registry test).
pub fn kit(desc: &'static UnitDesc) -> Option<&'static Kit> {
    KITS.iter().find(|k| std::ptr::eq(k.unit, desc))
}

/// The standard random stimulus of a unit (a unit without a kit gets uniform random
/// inputs).
pub fn random_stimulus(
    desc: &'static UnitDesc,
    params: &Params,
    seed: u64,
    cycles: u64,
) -> BoxedStimulus {
    let random = kit(desc).map_or(uniform_random as fn(_, _, _, _) -> _, |k| k.random);
    random(desc, params, seed, cycles)
}

/// The directed vectors of a unit, if it has them.
pub fn directed_stimulus(desc: &'static UnitDesc, params: &Params) -> Option<BoxedStimulus> {
    kit(desc).and_then(|k| k.directed).map(|d| d(desc, params))
}
