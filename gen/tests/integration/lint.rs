//! The lint gate over every unit with a template at every standard parameter set, the gate's
//! ability to fail (broken Verilog is caught by each tool, at the right line), manifests and
//! parameter validation.

use warpforge_gen::lint::{self, Finding, Tool};
use warpforge_gen::{generate, generate_by_name, units_with_templates, GenError, GeneratedUnit};
use warpforge_model::units::contract::Role;

/// Standard sets whose Yosys passes take minutes (the 64-warp x 256-register scoreboard
/// holds 65,536 state bits: about 100 s of Yosys for the gate's structural passes on these
/// machines, the whole suite's critical path if it ran by default) are gated by the
/// `--ignored` test below instead of the default run.
const HEAVY_STATE_BITS: u64 = 32_768;

fn state_bits_estimate(g: &GeneratedUnit) -> u64 {
    // Debug ports expose the whole state: their width is a good size measure.
    g.manifest
        .ports
        .iter()
        .filter(|p| p.role == Role::Debug)
        .map(|p| p.width as u64)
        .sum()
}

/// The gate on every standard set of `unit`: `heavy` selects the sets above
/// [`HEAVY_STATE_BITS`] (or the others). Returns how many sets were linted.
fn lint_standard_sets(unit: &str, heavy: bool) -> usize {
    let desc = warpforge_model::units::find(unit).unwrap();
    let mut n = 0;
    for params in desc.standard_params() {
        let g = generate(desc, &params).unwrap();
        if (state_bits_estimate(&g) > HEAVY_STATE_BITS) != heavy {
            continue;
        }
        let report = lint::lint(&g).unwrap_or_else(|e| panic!("{e}"));
        assert!(report.is_clean(), "{report}");
        let _ = std::fs::remove_dir_all(&report.dir);
        n += 1;
    }
    n
}

/// Units with a per-unit lint test below.
const LINTED: &[&str] = &[
    "simt_stack_spe",
    "simt_stack_dpe",
    "dpe_scoreboard",
    "capri_capt",
    "slp_perm",
    "wcu",
];

#[test]
fn every_unit_with_a_template_has_a_lint_test() {
    let with_templates: Vec<&str> = units_with_templates().iter().map(|u| u.name).collect();
    assert_eq!(with_templates, LINTED, "add a lint test for the new unit");
}

#[test]
fn simt_stack_spe_is_lint_clean_at_every_standard_set() {
    assert_eq!(lint_standard_sets("simt_stack_spe", false), 4);
}

#[test]
fn wcu_is_lint_clean_at_every_standard_set() {
    assert_eq!(lint_standard_sets("wcu", false), 4);
}

#[test]
fn simt_stack_dpe_is_lint_clean_at_every_standard_set() {
    assert_eq!(lint_standard_sets("simt_stack_dpe", false), 4);
}

#[test]
fn dpe_scoreboard_is_lint_clean_at_its_standard_sets() {
    assert!(lint_standard_sets("dpe_scoreboard", false) >= 3);
}

#[test]
fn capri_capt_is_lint_clean_at_every_standard_set() {
    assert_eq!(lint_standard_sets("capri_capt", false), 3);
}

#[test]
fn slp_perm_is_lint_clean_at_every_standard_set() {
    assert_eq!(lint_standard_sets("slp_perm", false), 3);
}

/// `cargo test -p warpforge-gen --test integration lint:: -- --ignored`: the heavy standard sets.
#[test]
#[ignore = "minutes of Yosys synthesis per set"]
fn heavy_standard_sets_are_lint_clean() {
    let n: usize = LINTED.iter().map(|u| lint_standard_sets(u, true)).sum();
    assert!(n >= 1);
}

fn spe() -> GeneratedUnit {
    generate_by_name("simt_stack_spe", &["WARP_SIZE=8", "DEPTH=4", "PC_W=16"]).unwrap()
}

/// The generated SPE with `from` replaced by `to` (which must apply), linted by `tool` only.
fn broken(tool: Tool, from: &str, to: &str) -> (Vec<Finding>, String) {
    let mut g = spe();
    assert!(
        g.files[0].1.contains(from),
        "mutation `{from}` no longer applies"
    );
    g.files[0].1 = g.files[0].1.replacen(from, to, 1);
    let text = g.files[0].1.clone();
    let dir = std::env::temp_dir().join(format!(
        "warpforge-lint-broken-{}-{tool}-{}",
        std::process::id(),
        from.len()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    g.write(&dir).unwrap();
    let found = lint::run_tool(tool, g.module(), &g.manifest.files, &dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (found, text)
}

/// 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> u32 {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle present") as u32
        + 1
}

const END: &str = "    // ---- outputs";

#[test]
fn verilator_catches_a_width_mismatch() {
    let (found, text) = broken(
        Tool::Verilator,
        END,
        "    wire [3:0] lint_narrow = upd_pc;  // width mismatch\n    // ---- outputs",
    );
    let line = line_of(&text, "lint_narrow = upd_pc");
    assert!(
        found
            .iter()
            .any(|f| f.rule.starts_with("WIDTH") && f.line == Some(line)),
        "{found:#?}"
    );
    assert!(found.iter().all(|f| f.file == "simt_stack_spe.v"));
}

#[test]
fn yosys_catches_a_latch() {
    let (found, text) = broken(
        Tool::Yosys,
        END,
        "    reg lint_latch;\n    always @* begin\n        if (upd_valid) begin\n            \
         lint_latch = rst_n;\n        end\n    end\n    // ---- outputs",
    );
    // The latch is reported at its process (the injected `always @*` line).
    let always = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("always @* begin"))
        .map(|(i, _)| i as u32 + 1)
        .last()
        .unwrap();
    assert!(
        found.iter().any(|f| f.rule == "latch"
            && f.line == Some(always)
            && f.message.contains("lint_latch")),
        "{found:#?}"
    );
}

#[test]
fn yosys_catches_an_undriven_output() {
    let (found, text) = broken(Tool::Yosys, "    assign err_pc       = err_pc_q;\n", "");
    let decl = text
        .lines()
        .position(|l| l.contains("output") && l.contains(" err_pc,"))
        .unwrap() as u32
        + 1;
    assert!(
        found
            .iter()
            .any(|f| f.message.contains("err_pc") && f.line == Some(decl)),
        "{found:#?}"
    );
}

#[test]
fn yosys_catches_a_combinational_loop() {
    let (found, _) = broken(
        Tool::Yosys,
        "wire upd_ok    = run && upd_valid",
        "wire upd_ok    = run && !ev_div && upd_valid",
    );
    assert!(
        found.iter().any(|f| f.message.contains("logic loop")),
        "{found:#?}"
    );
}

#[test]
fn iverilog_catches_systemverilog() {
    let (found, text) = broken(Tool::Iverilog, "always @* begin", "always_comb begin");
    let line = line_of(&text, "always_comb begin");
    assert!(found.iter().any(|f| f.line == Some(line)), "{found:#?}");
}

#[test]
fn svlint_catches_a_blocking_assignment_on_a_clock_edge() {
    let (found, text) = broken(
        Tool::Svlint,
        "err_pc_q       <= 1'b0;",
        "err_pc_q       = 1'b0;",
    );
    // svlint points at the enclosing `always @(posedge clk)`.
    let assignment = line_of(&text, "err_pc_q       = 1'b0;");
    let always = text
        .lines()
        .enumerate()
        .take(assignment as usize)
        .filter(|(_, l)| l.contains("always @(posedge clk)"))
        .map(|(i, _)| i as u32 + 1)
        .last()
        .unwrap();
    assert!(
        found
            .iter()
            .any(|f| f.rule == "blocking_assignment_in_always_at_edge" && f.line == Some(always)),
        "{found:#?}"
    );
}

#[test]
fn svlint_catches_a_case_without_default() {
    let (found, _) = broken(
        Tool::Svlint,
        "default: begin  // KIND_BRANCH",
        "2'd1: begin",
    );
    assert!(
        found.iter().any(|f| f.rule.contains("case_default")),
        "{found:#?}"
    );
}

#[test]
fn manifest_describes_the_instance() {
    let g = spe();
    let m = &g.manifest;
    assert_eq!(m.module, "simt_stack_spe");
    assert_eq!(m.top, "simt_stack_spe");
    assert_eq!(m.cosim_top, "simt_stack_spe_cosim");
    assert_eq!(m.files, vec!["simt_stack_spe.v", "wf_ram_dp.v"]);
    assert_eq!(
        m.cosim_files,
        vec!["simt_stack_spe.v", "wf_ram_dp.v", "simt_stack_spe_cosim.v"]
    );
    assert_eq!(m.params["WARP_SIZE"], 8);
    assert_eq!(m.params["DEPTH"], 4);
    assert_eq!(m.params["PC_W"], 16);
    assert_eq!(m.params["RAM_RD_REG"], 1);
    // The constants shared with the model: (DEPTH-1)/2 pair words of 2*(2*16+8) bits.
    assert_eq!(m.localparams["RAM_WORDS"], 1);
    assert_eq!(m.localparams["ENTRY_W"], 2 * 16 + 8);
    assert_eq!(m.localparams["KIND_EXIT"], 3);
    assert_eq!((m.clock.as_str(), m.reset.as_str()), ("clk", "rst_n"));
    let port = |n: &str| m.ports.iter().find(|p| p.name == n).unwrap();
    let dbg = port("dbg_stack");
    assert_eq!(dbg.width, 4 * (2 * 16 + 8));
    assert_eq!(dbg.width_expr, "DEPTH*(2*PC_W+WARP_SIZE)");
    assert_eq!((dbg.role, dbg.registered), (Role::Debug, true));
    // Its field layout at these parameters: 4 entries of {mask, rpc, pc}, LSB first.
    let l = dbg.layout.as_ref().expect("dbg_stack has a layout");
    assert_eq!(
        (l.dims.len(), l.dims[0].name.as_str(), l.dims[0].count),
        (1, "entry", 4)
    );
    let fields: Vec<(&str, u32, u32)> = l
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.lsb, f.width))
        .collect();
    assert_eq!(fields, [("mask", 0, 8), ("rpc", 8, 16), ("pc", 24, 16)]);
    assert_eq!(l.element_width * l.dims[0].count, dbg.width);
    assert!(port("depth").layout.is_none());
    assert_eq!(port("depth").width, 3);
    assert!(port("tos_pc").registered && !port("ev_pop").registered);
    assert_eq!(port("upd_pc").direction, "input");
    assert_eq!(port("ev_pop").direction, "output");
    assert!(m.registered_outputs.contains(&"err_overflow".to_string()));
    assert!(!m.registered_outputs.contains(&"ev_div".to_string()));
    assert_eq!(m.ports.len(), g.desc.ports.len());
    assert!(m.content_hash.starts_with("sha256:") && m.content_hash.len() == 7 + 64);
    assert!(m.generator.starts_with("warpforge-gen "));
    // The JSON round-trips, the hash follows the text, the file lists name the files.
    let back: warpforge_gen::Manifest = serde_json::from_str(&g.manifest_json()).unwrap();
    assert_eq!(&back, m);
    let other = generate_by_name("simt_stack_spe", &["DEPTH=5"]).unwrap();
    assert_ne!(other.manifest.content_hash, m.content_hash);
    assert_eq!(g.filelist, "simt_stack_spe.v\nwf_ram_dp.v\n");
    assert_eq!(
        g.cosim_filelist,
        "simt_stack_spe.v\nwf_ram_dp.v\nsimt_stack_spe_cosim.v\n"
    );
    // The header is rendered from the description: every functional port with its width
    // expression, the shared constants as localparams, and no debug port.
    let v = g.verilog();
    assert!(v.contains("parameter integer DEPTH = 4"));
    assert!(v.contains("output wire [$clog2(DEPTH+1)-1:0]"));
    assert!(v.contains("localparam integer RAM_WORDS = 1;"));
    assert!(v.contains("localparam [1:0] KIND_JUMP = 2'd2;"));
    assert!(v.contains("GENERATED by warpforge-gen"));
    assert!(!v.contains("dbg_stack,") && !v.contains("output wire [DEPTH*(2*PC_W"));
    for p in g.desc.ports.iter().filter(|p| p.role != Role::Debug) {
        assert!(v.contains(&format!(" {},", p.name)) || v.contains(&format!(" {} ", p.name)));
    }
    // The storage is the library's RAM, the debug ports are the wrapper's.
    assert!(v.contains("wf_ram_dp #("));
    assert!(g.files[1].1.contains("module wf_ram_dp"));
    let (name, w) = &g.cosim_only[0];
    assert_eq!(name, "simt_stack_spe_cosim.v");
    assert!(w.contains("module simt_stack_spe_cosim"));
    assert!(w.contains("output wire [DEPTH*(2*PC_W+WARP_SIZE)-1:0] dbg_stack"));
    assert!(w.contains("simt_stack_spe #(") && w.contains("u_unit.u_ram.mem"));
}

#[test]
fn write_puts_every_file_in_the_folder() {
    let g = spe();
    let dir = std::env::temp_dir().join(format!("warpforge-gen-write-{}", std::process::id()));
    let paths = g.write(&dir).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "simt_stack_spe.v",
            "wf_ram_dp.v",
            "simt_stack_spe_cosim.v",
            "simt_stack_spe.manifest.json",
            "simt_stack_spe.f",
            "simt_stack_spe_cosim.f"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("simt_stack_spe.v")).unwrap(),
        g.verilog()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_ram_primitive_is_the_same_text_for_every_unit_and_parameter_set() {
    let a = spe();
    let b = generate_by_name("simt_stack_dpe", &["DEPTH=7", "RAM_RD_REG=0"]).unwrap();
    assert_eq!(a.files[1], b.files[1]);
}

#[test]
fn the_gate_lints_the_cosim_wrapper_with_the_simulators() {
    let mut g = spe();
    // An undeclared name in the wrapper only: the synthesizable design stays clean.
    g.cosim_only[0].1 = g.cosim_only[0].1.replacen(
        "dbg_done_q <= u_unit.done;",
        "dbg_done_q <= u_unit.no_such;",
        1,
    );
    let dir = std::env::temp_dir().join(format!("warpforge-lint-wrapper-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let report = lint::lint_in(&g, &dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.tool == Tool::Verilator && f.file == "simt_stack_spe_cosim.v"),
        "{report}"
    );
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.tool == Tool::Iverilog && f.file == "simt_stack_spe_cosim.v"),
        "{report}"
    );
    assert!(
        report.findings.iter().all(|f| f.tool != Tool::Yosys),
        "{report}"
    );
}

#[test]
fn parameter_errors_are_clear() {
    let e = generate_by_name("simt_stack_spe", &["WARP_SIZE=4"]).unwrap_err();
    assert!(matches!(e, GenError::BadParam(_)));
    assert!(
        e.to_string()
            .starts_with("simt_stack_spe: parameter WARP_SIZE=4 is out of range 8..=64"),
        "{e}"
    );
    let e = generate_by_name("simt_stack_spe", &["DEPTH=65"]).unwrap_err();
    assert!(
        e.to_string().contains("DEPTH=65 is out of range 2..=64"),
        "{e}"
    );
    let e = generate_by_name("simt_stack_spe", &["NOPE=1"]).unwrap_err();
    assert!(e.to_string().contains("has no parameter NOPE"), "{e}");
    let e = generate_by_name("simt_stack_spe", &["DEPTH:3"]).unwrap_err();
    assert!(e.to_string().contains("expected NAME=VALUE"), "{e}");
    let e = generate_by_name("simt_stack_spe", &["DEPTH=-3"]).unwrap_err();
    assert!(e.to_string().contains("not a non-negative integer"), "{e}");
    let e = generate_by_name::<&str>("no_such_unit", &[]).unwrap_err();
    assert!(matches!(e, GenError::UnknownUnit(_)), "{e}");
}

static NO_TEMPLATE: warpforge_model::units::contract::UnitDesc =
    warpforge_model::units::contract::UnitDesc {
        name: "unit_without_template",
        summary: "test",
        spec: "-",
        params: &[],
        ports: &[],
        standard_sets: &[&[]],
        check: |_| Ok(()),
        build: |_| unimplemented!(),
        gpu: |_| warpforge_model::units::contract::GpuUse::Standalone,
        localparams: |_| vec![],
        coverage: &[],
        scaling: &[],
        seed_costs: &[],
    };

#[test]
fn a_unit_without_a_template_is_an_error() {
    let p = NO_TEMPLATE.params::<&str>(&[]).unwrap();
    let e = generate(&NO_TEMPLATE, &p).unwrap_err();
    assert!(matches!(e, GenError::NoTemplate { .. }));
    assert!(
        e.to_string()
            .starts_with("unit unit_without_template has no RTL template yet"),
        "{e}"
    );
}
