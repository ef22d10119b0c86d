//! The harness must be able to fail: wrong RTL is caught at the right cycle, port and
//! bits; the replay file reproduces it alone; VCD windows are written and parse; RTL
//! `$finish`/`$stop` come back as errors.
mod common;

use common::*;
use std::path::Path;
use warpforge_cosim::replay::Replay;
use warpforge_cosim::stimulus::{FnStimulus, RandomStimulus};
use warpforge_cosim::{replay_with, Cosim, CosimError, RtlErrorKind, RtlModel, RtlSource};
use warpforge_model::units::contract::{Bits, Role};

/// The counter with a bug: from 42 it counts by two.
fn wrong_counter() -> String {
    COUNTER_V.replace(
        "else if (en) count <= count + 1'b1;",
        "else if (en) count <= (count == 8'd42) ? count + 2'd2 : count + 1'b1;",
    )
}

/// en=1, everything else 0, no reset: after the implicit reset, count = cycle.
fn counting(cycle: u64, ports: &mut [Bits]) -> bool {
    ports[0].set_u64(1);
    ports[1].set_u64(1);
    cycle < 1000
}

fn vcd_vars_and_times(path: &Path) -> (Vec<String>, Vec<u64>, Option<(u32, vcd::TimescaleUnit)>) {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut p = vcd::Parser::new(f);
    let header = p.parse_header().unwrap();
    let mut names = vec![];
    fn walk(items: &[vcd::ScopeItem], names: &mut Vec<String>) {
        for i in items {
            match i {
                vcd::ScopeItem::Var(v) => names.push(v.reference.clone()),
                vcd::ScopeItem::Scope(s) => walk(&s.items, names),
                _ => {}
            }
        }
    }
    walk(&header.items, &mut names);
    let mut times = vec![];
    for cmd in p {
        if let vcd::Command::Timestamp(t) = cmd.unwrap() {
            times.push(t);
        }
    }
    (names, times, header.timescale)
}

#[test]
fn wrong_rtl_is_caught_at_the_right_cycle_port_and_bits_and_replays() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let out = out_dir("wrong");
    let cosim = Cosim::new(
        &COUNTER_DESC,
        params,
        counter_rtl(&wrong_counter()),
        &opts(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .with_instance("ctr0")
    .with_failure_dir(Some(out.path().to_path_buf()));
    let err = cosim.run(&mut FnStimulus(counting)).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    eprintln!("{d}");
    // At cycle 42 count=42 and the buggy edge makes 44: cycle 43 shows 0x2c, not 0x2b.
    assert_eq!(d.cycle, 43);
    assert_eq!(d.unit, "toy_counter");
    assert_eq!(d.instance, "ctr0");
    let m = d.first();
    assert_eq!(m.port, "count");
    assert_eq!(m.role, Role::Registered);
    assert_eq!((m.expected.as_str(), m.actual.as_str()), ("2b", "2c"));
    assert_eq!(m.diff_bits, vec![0, 1, 2]);
    // The combinational next value and the debug port differ too; the debug port's bits
    // are the count's, shifted by the 70-bit accumulator below it.
    let ports: Vec<&str> = d.mismatches.iter().map(|m| m.port.as_str()).collect();
    assert_eq!(ports, ["count", "next", "dbg"]);
    assert_eq!(d.mismatches[2].diff_bits, vec![70, 71, 72]);
    // The last 16 cycles of inputs, ending at the failing cycle.
    assert_eq!(d.last_inputs.len(), 16);
    assert_eq!(d.last_inputs.last().unwrap().0, 43);
    assert_eq!(d.last_inputs[0].0, 28);
    assert_eq!(d.last_inputs[0].1[1], ("en".to_string(), "1".to_string()));
    assert_eq!(d.last_inputs[0].1.len(), 5);

    // The replay file reproduces it alone.
    let replay = d.replay.clone().expect("replay file");
    let (r, _) = Replay::load(&replay, &COUNTER_DESC).unwrap();
    assert_eq!(r.header.cycles, 44);
    assert_eq!(r.header.post_cycles, 32);
    assert_eq!(r.header.fail_port.as_deref(), Some("count"));
    let again = replay_with(&replay, &COUNTER_DESC, &opts()).unwrap_err();
    let d2 = again.divergence().unwrap_or_else(|| panic!("{again}"));
    assert_eq!((d2.cycle, d2.port()), (43, "count"));
    assert_eq!(d2.first(), d.first());
    assert_eq!(d.reproduced, Some(true));

    // VCD windows of both sides, ±32 cycles around cycle 43, exist, parse and share one
    // time axis (10 per cycle, the rising edge at +5).
    let mut timescales = vec![];
    for (path, clk_name) in [(&d.rtl_vcd, "clk"), (&d.model_vcd, "clk")] {
        let path = path.as_ref().expect("VCD path");
        let (names, times, timescale) = vcd_vars_and_times(path);
        timescales.push(timescale);
        for n in [clk_name, "rst_n", "count", "next", "acc", "dbg", "din"] {
            assert!(
                names.iter().any(|v| v == n),
                "{} lacks {n}: {names:?}",
                path.display()
            );
        }
        assert_eq!(*times.first().unwrap(), 110, "{}", path.display());
        assert_eq!(*times.last().unwrap(), 755, "{}", path.display());
    }
    assert!(timescales[0].is_some());
    assert_eq!(timescales[0], timescales[1]);
}

#[test]
fn wide_port_divergence_reports_bits_above_64() {
    // The accumulator drops the bit rotated out of position 69 instead of wrapping it.
    let wrong = COUNTER_V.replace("{acc[68:0], acc[69]} ^ din", "{acc[68:0], 1'b0} ^ din");
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let cosim = Cosim::new(&COUNTER_DESC, params.clone(), counter_rtl(&wrong), &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(None);
    // din = bit 68 at cycle 0 only: acc = bit 68, 69, then the model wraps to bit 0.
    let mut stim = FnStimulus(|c: u64, p: &mut [Bits]| {
        p[0].set_u64(1);
        p[4].clear();
        if c == 0 {
            p[4].set_bit(68, true);
        }
        c < 10
    });
    let err = cosim.run(&mut stim).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((d.cycle, d.port()), (3, "acc"));
    assert_eq!(d.first().expected, "000000000000000001");
    assert_eq!(d.first().actual, "000000000000000000");
    assert_eq!(d.first().diff_bits, vec![0]);
    assert!(d.replay.is_none() && d.rtl_vcd.is_none());

    // Cycle 2 (acc = bit 69) passed: the 70-bit port compares bits above 64 correctly,
    // and random stimulus over wide inputs finds the bug too.
    let mut random = RandomStimulus::new(&COUNTER_DESC, &params, 3, 1000);
    let err = cosim.run(&mut random).unwrap_err();
    let port = err.divergence().map(|d| d.port().to_string());
    assert_eq!(port.as_deref(), Some("acc"));
}

const FINISH_V: &str = r#"
module toy_counter #(parameter W = 8) (
  input clk, input rst_n, input en, input load, input [W-1:0] load_val, input [69:0] din,
  output reg [W-1:0] count, output [W-1:0] next, output reg [69:0] acc, output hit,
  output [W+69:0] dbg
);
  always @(posedge clk) begin
    if (!rst_n) count <= 0;
    else if (en) count <= count + 1'b1;
    if (rst_n && load) $stop;
    if (rst_n && count == 8'd10) $finish;
    if (rst_n && din[0]) $fatal(1, "din[0] set");
  end
  always @(posedge clk) acc <= 70'd0;
  assign next = !rst_n ? {W{1'b0}} : en ? count + 1'b1 : count;
  assign hit = rst_n && (din[3:0] == count[3:0]);
  assign dbg = {count, acc};
endmodule
"#;

#[test]
fn finish_and_stop_in_rtl_come_back_as_errors() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let cosim = Cosim::new(&COUNTER_DESC, params, counter_rtl(FINISH_V), &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(None);
    match cosim.run(&mut FnStimulus(counting)) {
        Err(CosimError::Rtl {
            cycle,
            kind,
            message,
        }) => {
            assert_eq!(kind, RtlErrorKind::Finish);
            assert_eq!(cycle, 10, "{message}");
            assert!(message.contains("$finish"), "{message}");
        }
        other => panic!("expected $finish, got {other:?}"),
    }
    let mut load_at_5 = FnStimulus(|c: u64, p: &mut [Bits]| {
        p[0].set_u64(1);
        p[2].set_u64((c == 5) as u64);
        c < 100
    });
    match cosim.run(&mut load_at_5) {
        Err(CosimError::Rtl { cycle, kind, .. }) => {
            assert_eq!((cycle, kind), (5, RtlErrorKind::Stop));
        }
        other => panic!("expected $stop, got {other:?}"),
    }
    let mut fatal_at_3 = FnStimulus(|c: u64, p: &mut [Bits]| {
        p[0].set_u64(1);
        p[4].set_u64((c == 3) as u64);
        c < 100
    });
    match cosim.run(&mut fatal_at_3) {
        Err(CosimError::Rtl {
            cycle,
            kind,
            message,
        }) => {
            assert_eq!(cycle, 3);
            assert!(message.contains("toy_counter.v:12"), "{message}");
            assert_ne!(kind, RtlErrorKind::Finish);
        }
        other => panic!("expected $fatal, got {other:?}"),
    }
    // The error is sticky on the instance and the process lives on.
    let mut m: RtlModel = cosim.rtl_model(false).unwrap();
    m.reset().unwrap();
    let mut ports = COUNTER_DESC.zero_ports(cosim.params());
    ports[0].set_u64(1);
    ports[2].set_u64(1);
    m.set_inputs(&ports);
    m.eval().unwrap();
    let e = m.edge().unwrap_err();
    assert_eq!(e.kind, RtlErrorKind::Stop);
    assert_eq!(m.eval().unwrap_err(), e);
    assert_eq!(m.error(), Some(e));
}

#[test]
fn non_converging_logic_is_a_fatal_error_not_a_crash_or_hang() {
    // A combinational loop that oscillates while `load` is high.
    let osc = COUNTER_V.replace(
        "  assign hit = rst_n && (din[3:0] == count[3:0]);",
        "  wire osc = load & ~osc;\n  assign hit = rst_n && (din[3:0] == count[3:0]) && !osc;",
    );
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let cosim = Cosim::new(&COUNTER_DESC, params, counter_rtl(&osc), &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(None);
    let mut load_at_7 = FnStimulus(|c: u64, p: &mut [Bits]| {
        p[0].set_u64(1);
        p[2].set_u64((c == 7) as u64);
        c < 100
    });
    match cosim.run(&mut load_at_7) {
        Err(CosimError::Rtl {
            cycle,
            kind,
            message,
        }) => {
            assert_eq!((cycle, kind), (7, RtlErrorKind::Fatal), "{message}");
            assert!(message.contains("converge"), "{message}");
        }
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

#[test]
fn mismatched_ports_are_a_build_error() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let bad = COUNTER_V.replace("output hit,", "output [1:0] hit,");
    let err = Cosim::new(&COUNTER_DESC, params, counter_rtl(&bad), &opts())
        .err()
        .expect("build must fail");
    let msg = err.to_string();
    assert!(
        msg.contains("`hit` is 2 bits wide in the RTL but 1"),
        "{msg}"
    );
}

fn replay_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|l| *l != "post")
        .count()
}

/// A rare bug found by random stimulus with resets: the replay file starts after the last
/// reset before the failure (short), keeps absolute cycle numbers and reproduces alone.
#[test]
fn replay_starts_after_the_last_reset_and_keeps_cycle_numbers() {
    let wrong = PTRS_V.replace(
        "flags <= (flags | set) & ~clr;",
        "flags <= (set == 8'h5a && clr[0]) ? 8'h00 : (flags | set) & ~clr;",
    );
    let params = PTRS_DESC.params::<&str>(&[]).unwrap();
    let out = out_dir("trim");
    let cosim = Cosim::new(
        &PTRS_DESC,
        params.clone(),
        RtlSource::single("toy_ptrs", wrong),
        &opts(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .with_failure_dir(Some(out.path().to_path_buf()));
    let mut stim = RandomStimulus::new(&PTRS_DESC, &params, 21, 1_000_000).with_reset_one_in(40);
    let err = cosim.run(&mut stim).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    eprintln!("{d}");
    assert!(d.cycle > 100, "cycle {}", d.cycle);
    assert_eq!(d.reproduced, Some(true), "{d}");
    assert_eq!(d.last_inputs.len(), 16);
    assert_eq!(d.last_inputs.last().unwrap().0, d.cycle);
    let replay = d.replay.clone().unwrap();
    let (r, _) = Replay::load(&replay, &PTRS_DESC).unwrap();
    let first = r.header.first_cycle;
    assert!(
        first > 0 && first <= d.cycle,
        "first {first} cycle {}",
        d.cycle
    );
    assert!(
        d.cycle - first < 400,
        "the replay is short: {} cycles",
        d.cycle + 1 - first
    );
    assert_eq!(r.header.cycles, d.cycle + 1 - first);
    assert_eq!(replay_lines(&replay) as u64, r.header.cycles);
    let again = replay_with(&replay, &PTRS_DESC, &opts()).unwrap_err();
    let d2 = again.divergence().unwrap_or_else(|| panic!("{again}"));
    assert_eq!((d2.cycle, d2.port()), (d.cycle, d.port()));
    assert_eq!(d2.first(), d.first());
    // The VCD windows use the same absolute cycle numbers.
    let (_, times, _) = vcd_vars_and_times(d.rtl_vcd.as_ref().unwrap());
    let lo = (d.cycle.saturating_sub(32)).max(first) * 10;
    assert_eq!(*times.first().unwrap(), lo);
}

/// A register that reset does not clear: the replay from the last reset cannot reproduce
/// the divergence, so the harness says so and writes the full replay instead.
#[test]
fn unreset_state_falls_back_to_the_full_replay() {
    let wrong = PTRS_V.replace("      err <= 1'b0;\n", "");
    let params = PTRS_DESC.params::<&str>(&[]).unwrap();
    let out = out_dir("unreset");
    let cosim = Cosim::new(
        &PTRS_DESC,
        params.clone(),
        RtlSource::single("toy_ptrs", wrong),
        &opts(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .with_failure_dir(Some(out.path().to_path_buf()));
    let mut stim = RandomStimulus::new(&PTRS_DESC, &params, 4, 100_000).with_reset_one_in(40);
    let err = cosim.run(&mut stim).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(d.port(), "err");
    assert_eq!(d.reproduced, Some(true), "{d}");
    assert!(
        d.notes.iter().any(|n| n.contains("did not reproduce")),
        "{d}"
    );
    let (r, _) = Replay::load(d.replay.as_ref().unwrap(), &PTRS_DESC).unwrap();
    assert_eq!(r.header.first_cycle, 0);
    assert_eq!(r.header.cycles, d.cycle + 1);
}

/// The toy counter with a hidden sticky bit that corrupts only its debug-state port from
/// the edge that ends cycle 37 (count 37) on: every output stays right.
fn state_only_bug() -> String {
    COUNTER_V
        .replace(
            "  assign dbg = {count, acc};",
            "  reg ghost;\n  always @(posedge clk) ghost <= !rst_n ? 1'b0 : (ghost | (count == 8'd37));\n  assign dbg = {count ^ {7'd0, ghost}, acc};",
        )
}

#[test]
fn a_state_difference_seen_at_a_sample_is_reported_at_its_first_cycle() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let rtl = counter_rtl(&state_only_bug());
    let out = out_dir("state-only");
    // State compared every 64 cycles: seen at the sample of cycle 64, located at 38.
    let cosim = Cosim::new(&COUNTER_DESC, params.clone(), rtl.clone(), &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(Some(out.path().to_path_buf()));
    let err = cosim.run(&mut FnStimulus(counting)).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    eprintln!("{d}");
    assert_eq!((d.cycle, d.port()), (38, "dbg"));
    assert_eq!(d.mismatches.len(), 1, "outputs agree: {:?}", d.mismatches);
    assert_eq!(d.first().diff_bits, vec![70]);
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("cycle 64") && n.contains("38")),
        "{:?}",
        d.notes
    );
    // The replay written for cycle 38 reproduces it (it compares state every cycle).
    assert_eq!(d.reproduced, Some(true));
    let again = replay_with(d.replay.as_ref().unwrap(), &COUNTER_DESC, &opts()).unwrap_err();
    let d2 = again.divergence().unwrap_or_else(|| panic!("{again}"));
    assert_eq!((d2.cycle, d2.port()), (38, "dbg"));

    // Compared every cycle, the run itself stops at cycle 38 and says nothing about locating.
    let every = Cosim::new(&COUNTER_DESC, params, rtl, &opts())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(None)
        .with_state_interval(1);
    let err = every.run(&mut FnStimulus(counting)).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((d.cycle, d.port()), (38, "dbg"));
    assert!(d.notes.is_empty(), "{:?}", d.notes);
}

#[test]
fn a_state_difference_after_the_last_edge_is_caught() {
    // The ghost bit is set by the edge that ends the stimulus's last cycle (count 37 at
    // cycle 37, the last one driven): only the final state comparison can see it.
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let cosim = Cosim::new(
        &COUNTER_DESC,
        params,
        counter_rtl(&state_only_bug()),
        &opts(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .with_failure_dir(None);
    let mut stim = FnStimulus(|cycle: u64, ports: &mut [Bits]| {
        ports[0].set_u64(1);
        ports[1].set_u64(1);
        cycle < 38
    });
    let err = cosim.run(&mut stim).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((d.cycle, d.port()), (38, "dbg"));
}
