//! Gate-level estimates are plausible and scale with the parameters.

use warpforge_gen::{generate_by_name, synth};

/// State bits of the `simt_stack_spe` model: the entries, sp, the done mask, two flags.
fn spe_state_bits(ws: u64, depth: u64, pc_w: u64) -> u64 {
    let depth_w = 64 - depth.leading_zeros() as u64; // $clog2(DEPTH+1)
    depth * (2 * pc_w + ws) + depth_w + ws + 2
}

#[test]
fn simt_stack_spe_figures_are_plausible_and_scale_with_depth() {
    let mut last: Option<synth::SynthReport> = None;
    for depth in [4u64, 8] {
        let g = generate_by_name(
            "simt_stack_spe",
            &["WARP_SIZE=8", "PC_W=16", &format!("DEPTH={depth}")],
        )
        .unwrap();
        let r = synth::synth(&g).unwrap_or_else(|e| panic!("{e}"));
        let state = spe_state_bits(8, depth, 16);
        assert!(
            r.flops >= state,
            "{r}\nfewer flops than the model's {state} state bits"
        );
        // Every state bit is needed: no more than a few extra flops either.
        assert!(r.flops <= state + 8, "{r}");
        assert_eq!(r.cells_by_type.get("$_DFF_P_"), Some(&r.flops), "{r}");
        assert_eq!(r.total_cells, r.cells_by_type.values().sum::<u64>());
        assert!(r.logic_cells > r.flops / 2, "{r}");
        // A D flip-flop alone costs 16 transistors in the CMOS model; gates add to that.
        assert!(r.transistors > 16 * r.flops, "{r}");
        assert!(r.transistors < 200 * r.total_cells, "{r}");
        for k in r.cells_by_type.keys() {
            let allowed = [
                "$_AND_", "$_NAND_", "$_OR_", "$_NOR_", "$_XOR_", "$_XNOR_", "$_MUX_", "$_NOT_",
                "$_DFF_P_",
            ];
            assert!(allowed.contains(&k.as_str()), "unexpected cell {k}\n{r}");
        }
        if let Some(prev) = &last {
            assert!(
                prev.flops < r.flops && prev.transistors < r.transistors,
                "{prev}\n{r}"
            );
        }
        // Table and JSON forms.
        let table = r.to_string();
        assert!(table.contains("flip-flops") && table.contains("transistors (est.)"));
        let json = serde_json::to_string(&r).unwrap();
        let back: synth::SynthReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        last = Some(r);
    }
}

#[test]
fn dpe_scoreboard_flops_are_its_state_and_spe_mode_drops_the_shadow() {
    let small = ["NUM_WARPS=4", "NUM_REGS=8", "NRSV=1", "NWB=1", "Q=1"];
    let run = |dual: &str| {
        let mut p: Vec<&str> = small.to_vec();
        p.push(dual);
        let g = generate_by_name("dpe_scoreboard", &p).unwrap();
        synth::synth(&g).unwrap_or_else(|e| panic!("{e}"))
    };
    let dual = run("DUAL=1");
    // P and S for 4 warps x 2 sides x 8 registers.
    assert_eq!(dual.flops, 2 * 4 * 2 * 8, "{dual}");
    // SPE mode: side 1 and the shadow bits are constant zero, so only P of side 0 remains.
    let spe = run("DUAL=0");
    assert_eq!(spe.flops, 4 * 8, "{spe}");
    assert!(spe.transistors < dual.transistors, "{spe}\n{dual}");
}
