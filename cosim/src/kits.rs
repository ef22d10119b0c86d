//! The co-simulation kit of every unit: its seeded random stimulus and its directed vectors
//! (workload-trace stimulus comes from the GPU model, for every unit the model
//! instantiates: see [`warpforge_model::units::contract::UnitDesc::gpu`]).
//!
//! This is the co-simulator's part of the unit registry (the model's is
//! [`warpforge_model::units::ALL`], the generator's is its template registry): a unit is
//! found by its description, never by its name.

use crate::lockstep::Stimulus;
use crate::mutants::{DirectedMutant, KnownEquivalent};
use crate::stack_stimulus::CfgStimulus;
use crate::stimulus::RandomStimulus;
use warpforge_model::units::contract::{Params, UnitDesc};
use warpforge_model::units::dpe_scoreboard::SCOREBOARD_DESC;
use warpforge_model::units::simt_stack::SPE_DESC;
use warpforge_model::units::simt_stack_dpe::DPE_DESC;

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
        to: "(sp_div >= {1'b0, SP_FULL});",
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
        to: "(sp == SP_FULL - 1'b1);",
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
        from: "pending_q <= (pending_q & ~rel_r[row]) | rsv_r[row];",
        to: "pending_q <= (pending_q | rsv_r[row]) & ~rel_r[row];",
        only_if: None,
    },
    DirectedMutant {
        description: "a same-cycle release is not applied to the shadow copy",
        from: "(cpy ? (pending | rsv_r[row]) : REG_NONE)) & ~rel_r[row];",
        to: "(cpy ? (pending | rsv_r[row]) : REG_NONE));",
        only_if: Some(("DUAL", 1)),
    },
];

/// Mutants of the scoreboard's template that no input can tell from the original: those of
/// logic that one value of `DUAL` does not generate or holds constant.
static SCOREBOARD_EQUIVALENTS: [KnownEquivalent; 5] = [
    KnownEquivalent {
        line: "assign pending = REG_NONE;",
        edit: "",
        reason: "the constant-zero pending rows of side 1 (g_no_p) are generated only with \
                 DUAL=0; the mutant is caught there (dbg_P shows the row)",
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
        reason: "the shadow flops are generated only with DUAL=1 (g_s); the mutant is caught \
                 there",
        when: |p| p.get("DUAL") == 0,
    },
    KnownEquivalent {
        line: "assign rsv_rows[i*ROW_W +: ROW_W] =",
        edit: "stuck at 0",
        reason: "bit 0 of a row index is the side, DUAL_MODE && rsv_side: 0 with DUAL=0",
        when: |p| p.get("DUAL") == 0,
    },
    KnownEquivalent {
        line: "assign rel_rows[i*ROW_W +: ROW_W] =",
        edit: "stuck at 0",
        reason: "bit 0 of a row index is the side, DUAL_MODE && rel_side: 0 with DUAL=0",
        when: |p| p.get("DUAL") == 0,
    },
];

fn structured_programs(desc: &'static UnitDesc, p: &Params, seed: u64, n: u64) -> BoxedStimulus {
    Box::new(CfgStimulus::new(desc, p, seed, n))
}

fn spec_programs(desc: &'static UnitDesc, p: &Params) -> BoxedStimulus {
    Box::new(CfgStimulus::directed(desc, p))
}

/// Uniform random inputs; the default reset rate (one cycle in 1000) keeps the
/// scoreboard's bit vectors from saturating, so hazards stay informative.
fn uniform_random(desc: &'static UnitDesc, p: &Params, seed: u64, n: u64) -> BoxedStimulus {
    Box::new(RandomStimulus::new(desc, p, seed, n))
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
        random: uniform_random,
        directed: None,
        // No storage primitive: the scoreboard's rows stay in flops (see its template).
        mutants: &SCOREBOARD_MUTANTS,
        equivalents: &SCOREBOARD_EQUIVALENTS,
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
