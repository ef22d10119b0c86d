//! The generated Verilog against the Rust model, cycle for cycle, under Icarus Verilog.
//!
//! A self-check of the templates (the co-simulator in `cosim/` is the real harness): the
//! model is driven by a seeded random stimulus through its generic by-name path; every
//! cycle's inputs and expected outputs go into a vector file; a testbench generated from
//! the manifest replays the inputs into the RTL and prints every output every cycle; the
//! first differing port is reported with both values.

use std::path::PathBuf;
use std::process::Command;
use warpforge_gen::{generate, GeneratedUnit};
use warpforge_model::units::contract::{Bits, Params, UnitDesc};

/// xorshift64*: a tiny deterministic generator for stimulus.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A stimulus generator: (rng, cycle, this cycle's registered outputs, ports to fill).
type Stimulus = dyn FnMut(&mut Rng, usize, &[Bits], &mut [Bits]);

/// Concatenate port values Verilog-style: the first port at the least significant end.
fn pack(values: &[&Bits]) -> Bits {
    let total: u32 = values.iter().map(|b| b.width()).sum();
    let mut out = Bits::zero(total);
    let mut lsb = 0;
    for b in values {
        let mut off = 0;
        while off < b.width() {
            let w = (b.width() - off).min(64);
            out.set_field(lsb + off, w, b.field(off, w));
            off += w;
        }
        lsb += b.width();
    }
    out
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpforge-equiv-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The testbench: replays `in.hex` into the DUT, prints `<cycle> <outputs hex>` per cycle.
fn testbench(g: &GeneratedUnit, cycles: usize) -> String {
    let m = &g.manifest;
    let inputs: Vec<_> = m.ports.iter().filter(|p| p.direction == "input").collect();
    let outputs: Vec<_> = m.ports.iter().filter(|p| p.direction == "output").collect();
    let in_w: u32 = inputs.iter().map(|p| p.width).sum();
    let out_w: u32 = outputs.iter().map(|p| p.width).sum();
    let mut s = String::new();
    s += "module tb;\n";
    s += &format!("    reg [{}:0] vin [0:{}];\n", in_w - 1, cycles - 1);
    s += &format!("    reg [{}:0] cur;\n", in_w - 1);
    s += "    reg clk;\n    integer c;\n";
    let mut lsb = 0;
    for p in &inputs {
        s += &format!(
            "    wire [{}:0] {} = cur[{}:{}];\n",
            p.width - 1,
            p.name,
            lsb + p.width - 1,
            lsb
        );
        lsb += p.width;
    }
    for p in &outputs {
        s += &format!("    wire [{}:0] {};\n", p.width - 1, p.name);
    }
    let names: Vec<&str> = outputs.iter().rev().map(|p| p.name.as_str()).collect();
    s += &format!(
        "    wire [{}:0] out_bus = {{{}}};\n",
        out_w - 1,
        names.join(", ")
    );
    let conns: Vec<String> = std::iter::once("        .clk(clk)".to_string())
        .chain(m.ports.iter().map(|p| format!("        .{0}({0})", p.name)))
        .collect();
    s += &format!("    {} dut (\n{}\n    );\n", m.top, conns.join(",\n"));
    s += &format!(
        "    initial begin\n        $readmemh(\"in.hex\", vin);\n        clk = 0;\n        \
         for (c = 0; c < {cycles}; c = c + 1) begin\n            cur = vin[c];\n            \
         #1;\n            $display(\"%0d %h\", c, out_bus);\n            clk = 1;\n            \
         #1;\n            clk = 0;\n        end\n        $finish;\n    end\nendmodule\n"
    );
    s
}

/// Run `cycles` cycles of stimulus through the model and the RTL; Err names the first
/// mismatch. Ok gives every cycle's port values (inputs and the model's outputs).
fn check(
    desc: &'static UnitDesc,
    params: &Params,
    cycles: usize,
    seed: u64,
    stim: &mut Stimulus,
    mutate: Option<&dyn Fn(&str) -> String>,
) -> Result<Vec<Vec<Bits>>, String> {
    let mut g = generate(desc, params).unwrap();
    if let Some(f) = mutate {
        g.files[0].1 = f(&g.files[0].1);
    }
    let dir = scratch(&format!("{}-{seed}", desc.name));
    g.write(&dir).unwrap();
    let mut model = (desc.build)(params);
    let mut ports = desc.zero_ports(params);
    let mut rng = Rng(seed | 1);
    let in_idx: Vec<usize> = (0..desc.ports.len())
        .filter(|&i| desc.ports[i].role.is_input())
        .collect();
    let out_idx: Vec<usize> = (0..desc.ports.len())
        .filter(|&i| !desc.ports[i].role.is_input())
        .collect();
    let mut in_hex = String::new();
    let mut expected: Vec<Vec<Bits>> = vec![];
    let mut trace: Vec<Vec<Bits>> = vec![];
    // The RTL's state is unknown until the first clock edge with rst_n low.
    let rst = desc.port_index("rst_n").expect("every unit has rst_n");
    let mut first_compared = None;
    for c in 0..cycles {
        // registered outputs first (state only), for the stimulus to look at
        model.outputs(&mut ports);
        let state_view = ports.clone();
        stim(&mut rng, c, &state_view, &mut ports);
        model.outputs(&mut ports);
        let ins: Vec<&Bits> = in_idx.iter().map(|&i| &ports[i]).collect();
        in_hex += &pack(&ins).to_hex();
        in_hex.push('\n');
        expected.push(out_idx.iter().map(|&i| ports[i].clone()).collect());
        trace.push(ports.clone());
        if first_compared.is_none() && ports[rst].to_u64() == 0 {
            first_compared = Some(c + 1);
        }
        model.tick(&ports);
    }
    std::fs::write(dir.join("in.hex"), in_hex).unwrap();
    std::fs::write(dir.join("tb.v"), testbench(&g, cycles)).unwrap();
    let run = |cmd: &mut Command| {
        let o = cmd.current_dir(&dir).output().expect("run icarus");
        assert!(
            o.status.success(),
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let verilog = format!("{}.v", g.module());
    run(Command::new("iverilog").args(["-g2005", "-o", "sim", "tb.v", &verilog]));
    let out = run(Command::new("vvp").args(["-n", "sim"]));
    let mut seen = 0;
    for line in out.lines() {
        let Some((c, hex)) = line.split_once(' ') else {
            continue;
        };
        let Ok(c) = c.parse::<usize>() else { continue };
        seen += 1;
        if c < first_compared.expect("the stimulus resets the unit") {
            continue;
        }
        let exp = &expected[c];
        let mut lsb = 0;
        for (k, &i) in out_idx.iter().enumerate() {
            let w = exp[k].width();
            let total: u32 = exp.iter().map(|b| b.width()).sum();
            // the port's hex digits, from the MSB-first bus text
            let got = field_of_hex(hex, total, lsb, w);
            let want = exp[k].to_hex();
            if got.as_deref() != Some(want.as_str()) {
                return Err(format!(
                    "{} {}: cycle {c}: port {} expected {want} got {}\n(vectors in {})",
                    desc.name,
                    params,
                    desc.ports[i].name,
                    got.unwrap_or_else(|| "x/z".into()),
                    dir.display()
                ));
            }
            lsb += w;
        }
    }
    if seen != cycles {
        return Err(format!(
            "simulation printed {seen} of {cycles} cycles:\n{out}"
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(trace)
}

/// Bits `[lsb, lsb+w)` of a `total`-bit value printed MSB first in hex, or None if any of
/// those bits is x/z.
fn field_of_hex(hex: &str, total: u32, lsb: u32, w: u32) -> Option<String> {
    let digits: Vec<char> = hex.trim().chars().collect();
    let nd = total.div_ceil(4) as usize;
    if digits.len() != nd {
        return None;
    }
    let mut b = Bits::zero(w);
    for i in 0..w {
        let bit = lsb + i;
        let d = digits[nd - 1 - (bit / 4) as usize].to_digit(16)?;
        b.set_bit(i, (d >> (bit % 4)) & 1 == 1);
    }
    Some(b.to_hex())
}

fn port(desc: &UnitDesc, name: &str) -> usize {
    desc.port_index(name).unwrap()
}

/// Constrained-random stimulus for the reconvergence stacks (`simt_stack_spe`, and
/// `simt_stack_dpe` with its `upd_side`): mostly well-formed updates from a live path's PC
/// with next PCs drawn from a small set (so pops, the reuse / in-place rules and merges
/// happen), some PC and side errors, idle cycles, launches, EXITs and resets, and phases
/// that grow the stack until it overflows.
fn stack_stimulus(desc: &'static UnitDesc) -> impl FnMut(&mut Rng, usize, &[Bits], &mut [Bits]) {
    let p = |n| port(desc, n);
    let (rst_n, lv, lpc, lrpc, lmask) = (
        p("rst_n"),
        p("launch_valid"),
        p("launch_pc"),
        p("launch_rpc"),
        p("launch_mask"),
    );
    let (uv, upc, kind, taken, target, next, rpc) = (
        p("upd_valid"),
        p("upd_pc"),
        p("upd_kind"),
        p("upd_taken"),
        p("upd_target"),
        p("upd_next"),
        p("upd_rpc"),
    );
    let (tos_rpc, depth) = (p("tos_rpc"), p("depth"));
    // (valid, pc, mask) of each schedulable path: the TOS (SPE) or slots L and R (DPE).
    let dual = desc.port_index("upd_side");
    let paths: Vec<(usize, usize, usize)> = if dual.is_some() {
        vec![
            (p("l_valid"), p("l_pc"), p("l_mask")),
            (p("r_valid"), p("r_pc"), p("r_mask")),
        ]
    } else {
        vec![(p("tos_valid"), p("tos_pc"), p("tos_mask"))]
    };
    move |rng, cycle, state, ports| {
        let ones = |w: u32| if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let all = ones(ports[lmask].width());
        let rand_mask = |rng: &mut Rng| match rng.below(4) {
            0 => all,
            1 => 0,
            _ => rng.next() & all,
        };
        for i in [lv, uv] {
            ports[i].set_u64(0);
        }
        ports[rst_n].set_u64(u64::from(cycle >= 2 && rng.below(1000) != 0));
        // Every third phase of 300 cycles grows the stack: branches that peel one lane off
        // into a new reconvergence region, until the stack overflows.
        let grow = (cycle / 300) % 3 == 0;
        let pcs = |rng: &mut Rng, t: u64, r: u64| match rng.below(6) {
            0 => t,
            1 => r,
            2 => rng.next(),
            _ => rng.below(8),
        };
        let empty = state[depth].to_u64() == 0;
        if rng.chance(if empty { 30 } else { 1 }) {
            ports[lv].set_u64(1);
            ports[lpc].set_u64(rng.below(8));
            ports[lrpc].set_u64(if rng.chance(80) {
                u64::MAX
            } else {
                rng.below(8)
            });
            ports[lmask].set_u64(if rng.chance(50) {
                all
            } else {
                rng.next() & all
            });
        }
        // The issuing path: a live one mostly (DPE: either side when both are live).
        let live: Vec<usize> = (0..paths.len())
            .filter(|&k| state[paths[k].0].to_u64() == 1)
            .collect();
        let side = if !live.is_empty() && rng.chance(95) {
            live[rng.below(live.len() as u64) as usize]
        } else {
            rng.below(paths.len() as u64) as usize
        };
        if let Some(s) = dual {
            ports[s].set_u64(side as u64);
        }
        let (_, pc_port, mask_port) = paths[side];
        let (t, r) = (state[pc_port].to_u64(), state[tos_rpc].to_u64());
        let live_mask = state[mask_port].to_u64();
        // random junk on the other inputs even when not valid
        ports[taken].set_u64(rand_mask(rng));
        for i in [target, next, rpc] {
            let v = pcs(rng, t, r);
            ports[i].set_u64(v);
        }
        ports[kind].set_u64(rng.below(4));
        ports[upc].set_u64(if rng.chance(95) { t } else { rng.below(8) });
        if rng.chance(80) {
            ports[uv].set_u64(1);
            // EXIT mostly retires a subset of the live lanes
            if ports[kind].to_u64() == 3 && rng.chance(50) {
                ports[taken].set_u64(rng.next() & live_mask);
            }
            if ports[kind].to_u64() == 1 && rng.chance(30) {
                // branch to the TOS RPC (loop exits, if-only branches, in place)
                ports[rpc].set_u64(r);
            }
            if grow && rng.chance(70) {
                ports[kind].set_u64(1);
                ports[taken].set_u64(live_mask & live_mask.wrapping_neg());
                ports[target].set_u64(rng.below(8));
                ports[next].set_u64(8 + rng.below(8));
                ports[rpc].set_u64(16 + rng.below(1000));
            }
        }
    }
}

/// Cycles of the trace where `f` holds.
fn count(trace: &[Vec<Bits>], f: impl Fn(&[Bits]) -> bool) -> usize {
    trace.iter().filter(|c| f(c)).count()
}

/// Cycles where output `i` rises.
fn rises(trace: &[Vec<Bits>], i: usize) -> usize {
    trace
        .windows(2)
        .filter(|w| w[0][i].to_u64() == 0 && w[1][i].to_u64() == 1)
        .count()
}

/// Run the stacks' stimulus through `unit` at every standard set; `cover` lists behaviours
/// (name, count over the trace) that must each be seen at least 5 times.
fn stack_matches_model(
    unit: &str,
    cover: impl Fn(&'static UnitDesc, &Params, &[Vec<Bits>]) -> Vec<(&'static str, usize)>,
) {
    let desc = warpforge_model::units::find(unit).unwrap();
    for (k, params) in desc.standard_params().iter().enumerate() {
        let mut stim = stack_stimulus(desc);
        let trace = check(desc, params, 20_000, 0x5eed + k as u64, &mut stim, None).unwrap();
        // The stimulus reaches every behaviour (else the equality says little).
        let seen = cover(desc, params, &trace);
        eprintln!("{unit} {params}: coverage {seen:?}");
        for (what, n) in seen {
            assert!(n >= 5, "{unit} {params}: `{what}` seen only {n} times");
        }
    }
}

fn is1(c: &[Bits], i: usize) -> bool {
    c[i].to_u64() == 1
}

#[test]
fn simt_stack_spe_matches_the_model_at_every_standard_set() {
    stack_matches_model("simt_stack_spe", |desc, params, t| {
        let at = |n: &str| port(desc, n);
        let max_depth = params.get("DEPTH");
        vec![
            ("push2", count(t, |c| is1(c, at("ev_push2")))),
            ("push1", count(t, |c| is1(c, at("ev_push1")))),
            ("pop", count(t, |c| is1(c, at("ev_pop")))),
            (
                "auto-pop",
                count(t, |c| is1(c, at("ev_pop")) && !is1(c, at("upd_valid"))),
            ),
            (
                "div without push",
                count(t, |c| {
                    is1(c, at("ev_div")) && !is1(c, at("ev_push1")) && !is1(c, at("ev_push2"))
                }),
            ),
            (
                "full stack",
                count(t, |c| c[at("depth")].to_u64() == max_depth),
            ),
            (
                "exited threads",
                count(t, |c| c[at("dbg_done")].to_u64() != 0),
            ),
            ("overflow", rises(t, at("err_overflow"))),
            ("pc error", rises(t, at("err_pc"))),
        ]
    });
}

#[test]
fn simt_stack_dpe_matches_the_model_at_every_standard_set() {
    stack_matches_model("simt_stack_dpe", |desc, params, t| {
        let at = |n: &str| port(desc, n);
        let max_depth = params.get("DEPTH");
        vec![
            ("push", count(t, |c| is1(c, at("ev_push")))),
            ("pop", count(t, |c| is1(c, at("ev_pop")))),
            (
                "auto-pop",
                count(t, |c| is1(c, at("ev_pop")) && !is1(c, at("upd_valid"))),
            ),
            ("in place", count(t, |c| is1(c, at("ev_inplace")))),
            (
                "arrive-and-push",
                count(t, |c| is1(c, at("ev_push")) && is1(c, at("ev_slot_inval"))),
            ),
            (
                "slot invalidated",
                count(t, |c| is1(c, at("ev_slot_inval")) && !is1(c, at("ev_push"))),
            ),
            ("two paths", count(t, |c| c[at("num_paths")].to_u64() == 2)),
            (
                "R side issues",
                count(t, |c| is1(c, at("upd_valid")) && is1(c, at("upd_side"))),
            ),
            (
                "full stack",
                count(t, |c| c[at("depth")].to_u64() == max_depth),
            ),
            (
                "exited threads",
                count(t, |c| c[at("dbg_done")].to_u64() != 0),
            ),
            ("overflow", rises(t, at("err_overflow"))),
            ("pc error", rises(t, at("err_pc"))),
            ("side error", rises(t, at("err_side"))),
        ]
    });
}

/// Mutants of the templates that the check must catch (so it can fail).
#[test]
fn mutants_are_caught() {
    let mutants: &[(&str, &str, &str, &str)] = &[
        (
            "simt_stack_spe",
            "no reuse rule",
            "(upd_rpc != top_rpc)",
            "1'b1",
        ),
        (
            "simt_stack_spe",
            "no auto-pop",
            "!upd_valid && !empty && !(|live)",
            "1'b0",
        ),
        (
            "simt_stack_spe",
            "overflow off by one",
            "(sp_div > {1'b0, SP_FULL})",
            "(sp_div > {1'b0, SP_FULL} + 1'b1)",
        ),
        (
            "simt_stack_dpe",
            "no in-place rule",
            "upd_div && !new_rc && !sibling_live",
            "1'b0",
        ),
        (
            "simt_stack_dpe",
            "invalid slot keeps its pc",
            "child_l_valid ? upd_next : {PC_W{1'b0}}",
            "upd_next",
        ),
        (
            "simt_stack_dpe",
            "parked slot loses exited lanes",
            "slot_new_mask  = slot_mask;",
            "slot_new_mask  = live;",
        ),
    ];
    for (unit, what, from, to) in mutants {
        let desc = warpforge_model::units::find(unit).unwrap();
        let params = &desc.standard_params()[1];
        let mut stim = stack_stimulus(desc);
        let mutate = |v: &str| {
            assert!(v.contains(from), "mutant `{what}` no longer applies");
            v.replacen(from, to, 1)
        };
        let r = check(desc, params, 5000, 11, &mut stim, Some(&mutate));
        assert!(r.is_err(), "{unit}: mutant `{what}` was not caught");
    }
}

/// Random stimulus for `dpe_scoreboard`: reserves, releases, copies and queries on a few
/// warps and registers (so the same row and register meet often: reserve with copy,
/// release with copy, release and reserve of one register, two writebacks to one row),
/// and occasionally out-of-range warp or register indices.
fn scoreboard_stimulus(
    desc: &'static UnitDesc,
    params: &Params,
) -> impl FnMut(&mut Rng, usize, &[Bits], &mut [Bits]) {
    let p = |n| port(desc, n);
    let warps = params.get("NUM_WARPS");
    let regs = params.get("NUM_REGS");
    let warp_w = 64 - (warps - 1).leading_zeros();
    let reg_w = 64 - (regs - 1).leading_zeros();
    let groups = [
        (
            p("rsv_valid"),
            p("rsv_warp"),
            p("rsv_side"),
            p("rsv_reg"),
            params.get("NRSV"),
        ),
        (
            p("rel_valid"),
            p("rel_warp"),
            p("rel_side"),
            p("rel_reg"),
            params.get("NWB"),
        ),
    ];
    let (rst_n, cpy) = (p("rst_n"), p("cpy_valid"));
    let (q_warp, q_side, q_src, q_src_valid, q_dst, q_dst_valid) = (
        p("q_warp"),
        p("q_side"),
        p("q_src"),
        p("q_src_valid"),
        p("q_dst"),
        p("q_dst_valid"),
    );
    let nq = params.get("Q");
    move |rng, cycle, _state, ports| {
        // A handful of hot warps and registers, and now and then any index at all.
        let warp = |rng: &mut Rng| {
            if rng.chance(90) {
                rng.below(warps.min(3))
            } else {
                rng.below(1 << warp_w)
            }
        };
        let reg = |rng: &mut Rng| {
            if rng.chance(90) {
                rng.below(regs.min(6))
            } else {
                rng.below(1 << reg_w)
            }
        };
        ports[rst_n].set_u64(u64::from(cycle >= 2 && rng.below(2000) != 0));
        for &(valid, w, side, r, n) in &groups {
            for i in 0..n as u32 {
                ports[valid].set_bit(i, rng.chance(60));
                let v = warp(rng);
                ports[w].set_field(i * warp_w, warp_w, v);
                ports[side].set_bit(i, rng.chance(50));
                let v = reg(rng);
                ports[r].set_field(i * reg_w, reg_w, v);
            }
        }
        ports[cpy].clear();
        if rng.chance(30) {
            let w = rng.below(warps.min(3)) as u32;
            ports[cpy].set_bit(w, true);
        }
        if rng.chance(5) {
            let v = rng.next();
            ports[cpy].set_u64(v);
        }
        for i in 0..nq as u32 {
            let v = warp(rng);
            ports[q_warp].set_field(i * warp_w, warp_w, v);
            ports[q_side].set_bit(i, rng.chance(50));
            for j in 0..3 {
                let v = reg(rng);
                ports[q_src].set_field((i * 3 + j) * reg_w, reg_w, v);
                ports[q_src_valid].set_bit(i * 3 + j, rng.chance(60));
            }
            let v = reg(rng);
            ports[q_dst].set_field(i * reg_w, reg_w, v);
            ports[q_dst_valid].set_bit(i, rng.chance(50));
        }
    }
}

#[test]
fn dpe_scoreboard_matches_the_model_at_every_standard_set() {
    let desc = warpforge_model::units::find("dpe_scoreboard").unwrap();
    for (k, params) in desc.standard_params().iter().enumerate() {
        // The vectors carry dbg_P and dbg_S every cycle: fewer cycles for the big sets.
        let state_bits = 4 * params.get("NUM_WARPS") * params.get("NUM_REGS");
        let cycles = (40_000_000 / state_bits).clamp(1500, 20_000) as usize;
        let mut stim = scoreboard_stimulus(desc, params);
        let t = check(desc, params, cycles, 0x5b + k as u64, &mut stim, None).unwrap();
        let at = |n: &str| port(desc, n);
        let dual = params.get("DUAL") == 1;
        let mut cover = vec![
            ("hazard", count(&t, |c| c[at("q_hazard")].to_u64() != 0)),
            ("no hazard", count(&t, |c| c[at("q_hazard")].to_u64() == 0)),
            (
                "pending bits",
                count(&t, |c| c[at("dbg_P")].words().iter().any(|&w| w != 0)),
            ),
        ];
        if dual {
            cover.push((
                "shadow bits",
                count(&t, |c| c[at("dbg_S")].words().iter().any(|&w| w != 0)),
            ));
        }
        eprintln!("dpe_scoreboard {params}: {cycles} cycles, coverage {cover:?}");
        for (what, n) in cover {
            assert!(
                n >= 5,
                "dpe_scoreboard {params}: `{what}` seen only {n} times"
            );
        }
    }
}
