//! Gate-level estimates are plausible and scale with the parameters; on FPGA families the
//! stacks' storage maps to RAM cells, not flip-flops (the RAM-inference check).

use warpforge_gen::synth::{self, Family};
use warpforge_gen::{generate_by_name, GeneratedUnit};

/// Flip-flops of `simt_stack_spe` in the generic flow (where the RAM becomes flip-flops):
/// the RAM's `(DEPTH-1)/2` pair words, the top pair, the RAM's read register and
/// `top_in_q` with a registered read, sp, the done mask, two flags.
fn spe_generic_flops(ws: u64, depth: u64, pc_w: u64, rd_reg: u64) -> u64 {
    let depth_w = 64 - depth.leading_zeros() as u64; // $clog2(DEPTH+1)
    let pair = 2 * (2 * pc_w + ws);
    let words = ((depth - 1) / 2).max(1);
    (words + 1 + rd_reg) * pair + depth_w + ws + 2 + rd_reg
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
        // Every storage bit is there, and nothing else.
        assert_eq!(r.flops, spe_generic_flops(8, depth, 16, 1), "{r}");
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

/// Synthesizes `g` for `family` and checks that its storage went to RAM cells: the
/// flip-flops are at most the registers outside the RAM (the top pair or TOS entry of
/// `word` bits, the RAM's read register with a registered read, the control state), so no
/// RAM word became flip-flops. Fails if the storage goes back to flop arrays.
fn storage_in_ram(
    g: &GeneratedUnit,
    family: Family,
    rd_reg: u64,
    word: u64,
    control: u64,
) -> synth::FpgaReport {
    let r = synth::fpga(g, family).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.ram_cells() > 0, "storage not in RAM cells:\n{r}");
    assert!(
        r.ffs <= (1 + rd_reg) * word + control,
        "storage in flip-flops:\n{r}"
    );
    r
}

/// The RAM-inference check of one stack in one read mode under Yosys' Xilinx and ECP5
/// flows; an asynchronous read must be LUT RAM (no block RAM has one).
fn stack_storage_maps_to_ram(unit: &str, params: &[&str], rd_reg: u64, word: u64, control: u64) {
    let mut p: Vec<String> = params.iter().map(|s| s.to_string()).collect();
    p.push(format!("RAM_RD_REG={rd_reg}"));
    let g = generate_by_name(unit, &p).unwrap();
    for family in [Family::Xilinx, Family::Ecp5] {
        let r = storage_in_ram(&g, family, rd_reg, word, control);
        if rd_reg == 0 {
            assert_eq!(r.block_ram, 0, "an asynchronous read is LUT RAM:\n{r}");
        }
    }
}

// The RAM-inference checks, one test per stack and read mode so that the test threads
// share them (nine Yosys runs, about a minute in all).
// SPE: a pair of {pc, rpc, mask} = 2*(2*16+8); sp 4 bits, done 8, 2 flags, top_in_q.
const SPE_SMALL: [&str; 3] = ["WARP_SIZE=8", "PC_W=16", "DEPTH=8"];
const SPE_WORD: u64 = 80;
const SPE_CONTROL: u64 = 4 + 8 + 2 + 1;
// DPE: an entry 2*(1+16+8)+16; sp 3 bits, done 8, 3 flags, top_in_q.
const DPE_SMALL: [&str; 3] = ["WARP_SIZE=8", "PC_W=16", "DEPTH=4"];
const DPE_WORD: u64 = 66;
const DPE_CONTROL: u64 = 3 + 8 + 3 + 1;

#[test]
fn spe_storage_maps_to_ram_cells_with_a_registered_read() {
    stack_storage_maps_to_ram("simt_stack_spe", &SPE_SMALL, 1, SPE_WORD, SPE_CONTROL);
}

#[test]
fn spe_storage_maps_to_lut_ram_with_an_asynchronous_read() {
    stack_storage_maps_to_ram("simt_stack_spe", &SPE_SMALL, 0, SPE_WORD, SPE_CONTROL);
}

#[test]
fn dpe_storage_maps_to_ram_cells_with_a_registered_read() {
    stack_storage_maps_to_ram("simt_stack_dpe", &DPE_SMALL, 1, DPE_WORD, DPE_CONTROL);
}

#[test]
fn dpe_storage_maps_to_lut_ram_with_an_asynchronous_read() {
    stack_storage_maps_to_ram("simt_stack_dpe", &DPE_SMALL, 0, DPE_WORD, DPE_CONTROL);
}

/// iCE40 has only registered-read block RAM; Yosys maps small memories to flip-flops
/// there, so the default SPE (7 pair words of 192 bits).
#[test]
fn spe_storage_maps_to_ice40_block_ram() {
    let g = generate_by_name("simt_stack_spe", &[] as &[&str]).unwrap();
    let r = storage_in_ram(&g, Family::Ice40, 1, 192, 5 + 32 + 2 + 1);
    assert!(r.block_ram > 0 && r.lut_ram == 0, "{r}");
}

/// The Xilinx flow leaves what a Vivado user needs beside the Verilog: the XDC at the
/// target period of constraints/targets.toml, the out-of-context script naming the part and
/// the top, and the file list that script reads — every placeholder filled.
#[test]
fn xilinx_flow_writes_the_xdc_and_vivado_script() {
    let g = generate_by_name("slp_perm", &["S=8", "WIDW=3"]).unwrap();
    let dir = std::env::temp_dir().join(format!("wf-xdc-{}", std::process::id()));
    let r = synth::fpga_in(&g, Family::Xilinx, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.luts > 0, "{r}");
    let period = warpforge_gen::asic::target("xilinx").unwrap().period_ns;
    let xdc = std::fs::read_to_string(dir.join("slp_perm.xdc")).unwrap();
    assert!(
        xdc.contains(&format!(
            "create_clock -name clk -period {period} [get_ports clk]"
        )),
        "{xdc}"
    );
    assert!(xdc.contains("set_input_delay") && xdc.contains("set_output_delay"));
    let tcl = std::fs::read_to_string(dir.join("xc7_vivado.tcl")).unwrap();
    assert!(
        tcl.contains("set top slp_perm") && tcl.contains("set part xc7a"),
        "{tcl}"
    );
    assert!(tcl.contains("-mode out_of_context"));
    for text in [&xdc, &tcl] {
        let unfilled: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && l.contains('@'))
            .collect();
        assert!(unfilled.is_empty(), "placeholders left: {unfilled:?}");
    }
    let list = std::fs::read_to_string(dir.join("slp_perm.f")).unwrap();
    for f in list.lines() {
        assert!(dir.join(f).exists(), "{f} is listed but not written");
    }
    assert_eq!(list.lines().count(), g.manifest.files.len());
    let _ = std::fs::remove_dir_all(&dir);
}
