//! Cycle-exact hardware units (the reference the generated RTL is compared against).
//!
//! Each unit is one model file with its [`contract::UnitDesc`]; adding a unit means adding
//! its description to [`ALL`].
pub mod capri_capt;
pub mod contract;
pub mod coverage;
pub mod declare;
pub mod dpe_scoreboard;
pub mod host;
pub mod layout;
pub mod ram;
pub mod random_program;
pub mod simt_stack;
pub mod simt_stack_dpe;
pub mod slp_perm;
pub mod trace;
pub mod trace_sink;
pub mod wcu;

use contract::UnitDesc;

/// Every unit with RTL, in the order `gen --all` and `cosim --all` process them.
pub static ALL: &[&UnitDesc] = &[
    &simt_stack::SPE_DESC,
    &simt_stack_dpe::DPE_DESC,
    &dpe_scoreboard::SCOREBOARD_DESC,
    &capri_capt::CAPT_DESC,
    &slp_perm::SLP_DESC,
    &wcu::WCU_DESC,
];

/// The unit named `name`, or an error listing the known units.
pub fn find(name: &str) -> Result<&'static UnitDesc, String> {
    ALL.iter().copied().find(|u| u.name == name).ok_or_else(|| {
        let names: Vec<&str> = ALL.iter().map(|u| u.name).collect();
        format!("unknown unit `{name}` (units: {})", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::ALL;

    /// Every sweep point and seed-cost set of the estimates report is a valid parameter
    /// set, and every sweep has at least two points.
    #[test]
    fn scaling_and_seed_cost_sets_are_valid() {
        for u in ALL {
            assert!(
                !u.scaling.is_empty(),
                "{}: no scaling sweep declared",
                u.name
            );
            for s in u.scaling {
                assert!(s.values.len() >= 2, "{}: {} sweep", u.name, s.param);
                for &v in s.values {
                    let mut set = s.base.to_vec();
                    set.push((s.param, v));
                    u.params(&set).unwrap_or_else(|e| panic!("{}: {e}", u.name));
                }
            }
            for c in u.seed_costs {
                u.params(c.params).unwrap();
                if let Some(r) = c.relative_to {
                    u.params(r).unwrap();
                }
            }
        }
    }
}
