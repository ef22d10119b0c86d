//! The unit registry (issue: the unit platform): every registered unit has what the recipe
//! in README "Adding a unit" asks for — a template, a co-simulation kit, mutants of its RTL,
//! and a declared use in the GPU model whose parameters are valid under the presets.

use warpforge_cosim::{kits, mutants};
use warpforge_model::config::{GpuConfig, PRESETS};
use warpforge_model::units::{self, contract::GpuUse};

#[test]
fn every_registered_unit_has_a_template_a_stimulus_kit_and_mutants() {
    assert!(!units::ALL.is_empty());
    for &desc in units::ALL {
        let template = warpforge_gen::templates::find(desc)
            .unwrap_or_else(|| panic!("{} has no RTL template", desc.name));
        assert!(std::ptr::eq(template.unit, desc));
        let kit =
            kits::kit(desc).unwrap_or_else(|| panic!("{} has no co-simulation kit", desc.name));
        assert!(std::ptr::eq(kit.unit, desc));
        for params in desc.standard_params() {
            let g = warpforge_gen::generate(desc, &params).unwrap();
            let verilog: String = g.files.iter().map(|(_, text)| text.as_str()).collect();
            let n = mutants::generate(&verilog).len();
            assert!(n >= 10, "{} ({params}): only {n} mutants", desc.name);
            // The kit's stimulus fits the unit at every standard set.
            let _ = (kit.random)(desc, &params, 1, 10);
            if let Some(directed) = kit.directed {
                let _ = directed(desc, &params);
            }
        }
    }
}

#[test]
fn every_unit_the_gpu_instantiates_gets_valid_parameters_from_every_preset() {
    for &(preset, _) in PRESETS {
        for reconvergence in ["spe", "dpe"] {
            let set = [format!("sm.reconvergence={reconvergence}")];
            let cfg = GpuConfig::preset(preset, &set).unwrap();
            let mut instantiated = 0;
            for &desc in units::ALL {
                match (desc.gpu)(&cfg) {
                    GpuUse::Instantiated { params, .. } => {
                        instantiated += 1;
                        for (name, _, _) in &params {
                            assert!(
                                desc.params.iter().any(|p| p.name == *name),
                                "{}: no parameter {name}",
                                desc.name
                            );
                        }
                        let p = desc.gpu_params(&cfg).unwrap().unwrap();
                        assert_eq!(p.iter().count(), desc.params.len());
                    }
                    GpuUse::NotUsed { set } => {
                        // The overrides it names do instantiate it.
                        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
                        let other = GpuConfig::preset(preset, &set).unwrap();
                        assert!(desc.gpu_params(&other).unwrap().is_some(), "{}", desc.name);
                    }
                    GpuUse::Standalone => {}
                }
            }
            // One stack kind and the scoreboard.
            assert_eq!(instantiated, 2, "{preset} {reconvergence}");
        }
    }
}

#[test]
fn an_out_of_range_unit_parameter_names_the_configuration_key() {
    let e = GpuConfig::preset("gtx480", &["sm.stack_depth=100".into()]).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("`sm.stack_depth` = 100")
            && msg.contains("simt_stack_spe")
            && msg.contains("DEPTH"),
        "{msg}"
    );
    let e = GpuConfig::preset(
        "fx5800",
        &["sm.stack_depth=1000".into(), "sm.reconvergence=dpe".into()],
    )
    .unwrap_err();
    assert!(e.to_string().contains("simt_stack_dpe"), "{e}");
}
