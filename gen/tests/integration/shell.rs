//! The FPGA place-and-route shell (`<unit>_shell.v`): lint-clean like the units, and its
//! serial path does what its layout says — an Icarus simulation shifts a known vector in,
//! checks every input port of the unit inside, captures the outputs and shifts them out.

use warpforge_gen::lint;
use warpforge_gen::shell::{self, ShellLayout};
use warpforge_gen::tools::{self, IVERILOG};
use warpforge_gen::{generate_by_name, GeneratedUnit};

fn wrapped(unit: &str, params: &[&str]) -> (GeneratedUnit, GeneratedUnit) {
    let g = generate_by_name(unit, params).unwrap();
    let w = shell::wrap(&g).unwrap();
    (g, w)
}

#[test]
fn the_shell_is_lint_clean() {
    for (unit, params) in [
        ("wcu", &["S=4", "NW=3"][..]),
        ("slp_perm", &["S=4", "WIDW=1"][..]),
        ("simt_stack_spe", &["WARP_SIZE=8", "DEPTH=4", "PC_W=16"][..]),
    ] {
        let (_, w) = wrapped(unit, params);
        let r = lint::lint(&w).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.is_clean(), "{r}");
        let _ = std::fs::remove_dir_all(&r.dir);
    }
}

/// A deterministic pseudo-random bit string (xorshift).
fn bits(n: u32, seed: u64) -> Vec<bool> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & 1 == 1
        })
        .collect()
}

/// `v` (bit 0 first) as a Verilog binary literal of its width.
fn literal(v: &[bool]) -> String {
    let s: String = v.iter().rev().map(|&b| if b { '1' } else { '0' }).collect();
    format!("{}'b{s}", v.len())
}

/// A testbench: shift `vector` in (most significant bit first), check each input port of
/// the unit against its slice of the layout, capture, shift the outputs out and compare
/// them with what the unit drove at the capture edge.
fn testbench(l: &ShellLayout, vector: &[bool]) -> String {
    let mut checks = String::new();
    for f in &l.inputs {
        let slice = &vector[f.lsb as usize..(f.lsb + f.width) as usize];
        checks += &format!(
            "        if (dut.u_unit.{p} !== {lit}) begin\n            \
             $display(\"FAIL input {p}: %b\", dut.u_unit.{p});\n            errors = errors + 1;\n        end\n",
            p = f.port,
            lit = literal(slice)
        );
    }
    let (iw, ow) = (l.in_bits, l.out_bits);
    format!(
        r#"`timescale 1ns/1ps
module tb;
    reg clk = 1'b0;
    reg rst_n = 1'b0;
    reg sh_in = 1'b0;
    reg sh_en = 1'b0;
    reg sh_cap = 1'b0;
    wire sh_out;
    reg [{iw}-1:0] vec = {vec};
    reg [{ow}-1:0] want;
    reg [{ow}-1:0] got;
    integer i;
    integer errors = 0;
    {top} dut (.clk(clk), .rst_n(rst_n), .sh_in(sh_in), .sh_en(sh_en), .sh_cap(sh_cap), .sh_out(sh_out));
    always #5 clk = ~clk;
    initial begin
        // reset the unit for a few cycles, then release it
        repeat (3) @(negedge clk);
        rst_n = 1'b1;
        sh_en = 1'b1;
        for (i = {iw} - 1; i >= 0; i = i - 1) begin
            sh_in = vec[i];
            @(negedge clk);
        end
        sh_en = 1'b0;
        if (dut.in_q !== vec) begin
            $display("FAIL chain %b", dut.in_q);
            errors = errors + 1;
        end
{checks}        // capture: out_q takes the outputs at the next edge
        sh_cap = 1'b1;
        want = dut.outs;
        @(negedge clk);
        sh_cap = 1'b0;
        sh_en = 1'b1;
        for (i = {ow} - 1; i >= 0; i = i - 1) begin
            got[i] = sh_out;
            @(negedge clk);
        end
        if (got !== want) begin
            $display("FAIL outputs: shifted out %b, the unit drove %b", got, want);
            errors = errors + 1;
        end
        if (errors == 0) $display("PASS");
        $finish;
    end
endmodule
"#,
        vec = literal(vector),
        top = l.module,
    )
}

fn simulate(unit: &str, params: &[&str], seed: u64) {
    let iverilog = match tools::locate(IVERILOG) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let (g, w) = wrapped(unit, params);
    let l = shell::layout(&g);
    let dir = tools::scratch_dir(&format!("shell-{unit}")).unwrap();
    w.write(&dir).unwrap();
    let vector = bits(l.in_bits, seed);
    std::fs::write(dir.join("tb.v"), testbench(&l, &vector)).unwrap();
    let mut args: Vec<String> = vec!["-g2005".into(), "-o".into(), "tb.vvp".into()];
    args.extend(w.manifest.files.iter().cloned());
    args.push("tb.v".into());
    let ran = tools::run(&iverilog, &args, &dir).unwrap();
    assert_eq!(ran.code, Some(0), "iverilog: {}", ran.text);
    let vvp = iverilog.with_file_name("vvp");
    let ran = tools::run(&vvp, &["tb.vvp".into()], &dir).unwrap();
    assert!(
        ran.text.contains("PASS") && !ran.text.contains("FAIL"),
        "{unit}: {}",
        ran.text
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_vector_shifted_in_reaches_the_unit_and_its_outputs_shift_out() {
    // A unit with state, several wide ports, registered and combinational outputs.
    simulate("wcu", &["S=4", "NW=3"], 0x9e37_79b9_7f4a_7c15);
    // A combinational unit.
    simulate("slp_perm", &["S=4", "WIDW=1"], 0x2545_f491_4f6c_dd1d);
}

/// The simulation can fail: a shell whose chain is one bit short puts every port off by
/// one.
#[test]
fn a_broken_chain_fails_the_simulation() {
    let Ok(iverilog) = tools::locate(IVERILOG) else {
        return;
    };
    let (g, mut w) = wrapped("slp_perm", &["S=4", "WIDW=1"]);
    let l = shell::layout(&g);
    let text = &mut w.files.last_mut().unwrap().1;
    let bad = text.replace("{in_q[IN_W-2:0], sh_in}", "{in_q[IN_W-2:0], 1'b0}");
    assert_ne!(*text, bad);
    *text = bad;
    let dir = tools::scratch_dir("shell-broken").unwrap();
    w.write(&dir).unwrap();
    std::fs::write(dir.join("tb.v"), testbench(&l, &bits(l.in_bits, 7))).unwrap();
    let mut args: Vec<String> = vec!["-g2005".into(), "-o".into(), "tb.vvp".into()];
    args.extend(w.manifest.files.iter().cloned());
    args.push("tb.v".into());
    assert_eq!(tools::run(&iverilog, &args, &dir).unwrap().code, Some(0));
    let ran = tools::run(&iverilog.with_file_name("vvp"), &["tb.vvp".into()], &dir).unwrap();
    assert!(ran.text.contains("FAIL"), "{}", ran.text);
    let _ = std::fs::remove_dir_all(&dir);
}
