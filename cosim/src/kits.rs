//! The co-simulation kit of every unit: its seeded random stimulus and its directed vectors
//! (workload-trace stimulus comes from the GPU model, for every unit the model
//! instantiates: see [`warpforge_model::units::contract::UnitDesc::gpu`]).
//!
//! This is the co-simulator's part of the unit registry (the model's is
//! [`warpforge_model::units::ALL`], the generator's is its template registry): a unit is
//! found by its description, never by its name.

use crate::lockstep::Stimulus;
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
}

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
    },
    Kit {
        unit: &DPE_DESC,
        random: structured_programs,
        directed: Some(spec_programs),
    },
    Kit {
        unit: &SCOREBOARD_DESC,
        random: uniform_random,
        directed: None,
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
