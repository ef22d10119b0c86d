//! The harness must be able to fail: wrong RTL is caught at the right cycle, port and
//! bits; the replay file reproduces it alone; VCD windows are written and parse; RTL
//! `$finish`/`$stop` come back as errors.
use crate::common;

use common::*;
use std::path::Path;
use warpforge_cosim::replay::Replay;
use warpforge_cosim::stimulus::{FnStimulus, RandomStimulus};
use warpforge_cosim::{
    replay_with, Cosim, CosimError, Pipelining, RtlErrorKind, RtlModel, RtlSource,
};
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
    let cosim = counter_cosim(&params, &wrong_counter())
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
    // The debug port's declared layout names the field: `.count` (bits 70..78), not `.acc`.
    let f = &d.mismatches[2].fields;
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].field, "dbg .count");
    assert_eq!((f[0].lsb, f[0].width), (70, 8));
    assert_eq!((f[0].expected.as_str(), f[0].actual.as_str()), ("2b", "2c"));
    assert_eq!(f[0].diff_bits, vec![0, 1, 2]);
    assert!(d.first().fields.is_empty(), "count has no layout");
    // `count` and `dbg` hold state(43): written at the edge that ended cycle 42.
    assert_eq!(
        d.registered_note().as_deref(),
        Some(
            "registered outputs count, dbg: set at the clock edge ending cycle 42 \
             (inputs of cycle 42 above)"
        )
    );
    let text = d.to_string();
    assert!(
        text.contains("      dbg .count: expected 0x2b actual 0x2c (bits [0, 1, 2])"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("42:")
            && l.ends_with("<- the edge ending this cycle set count, dbg")),
        "{text}"
    );
    // The last 16 cycles of inputs, ending at the failing cycle.
    assert_eq!(d.last_inputs.len(), 16);
    assert_eq!(d.last_inputs.last().unwrap().0, 43);
    assert_eq!(d.last_inputs[0].0, 28);
    assert_eq!(d.last_inputs[0].1[1], ("en".to_string(), "1".to_string()));
    assert_eq!(d.last_inputs[0].1.len(), 5);

    // The replay file reproduces it alone.
    let replay = d.replay.clone().expect("replay file");
    let (r, params) = Replay::load(&replay, &COUNTER_DESC).unwrap();
    assert_eq!(r.header.cycles, 44);
    assert_eq!(r.header.post_cycles, 32);
    assert_eq!(r.header.fail_port.as_deref(), Some("count"));
    // It carries the model's expected outputs: the functional ones are kept (count, next,
    // acc, hit); count = cycle, as the model computed it, through the post cycles too.
    let e = r.expected.as_ref().expect("format 2 has expected outputs");
    assert_eq!((e.first(), e.end()), (0, 76));
    for c in 0..76 {
        let v = e.values(c);
        assert_eq!(v.len(), 4);
        assert_eq!(v[0].to_u64(), c, "count at cycle {c}");
        assert_eq!(v[1].to_u64(), (c + 1) & 0xff, "next at cycle {c}");
    }
    assert_eq!(
        r.expected_outputs(&COUNTER_DESC, &params).values(43),
        e.values(43)
    );
    let again = replay_with(&replay, &COUNTER_DESC, &opts()).unwrap_err();
    let d2 = again.divergence().unwrap_or_else(|| panic!("{again}"));
    assert_eq!((d2.cycle, d2.port()), (43, "count"));
    assert_eq!(d2.first(), d.first());
    assert_eq!(d.reproduced, Some(true));

    // VCD windows (the RTL's trace, both sides' ports), ±32 cycles around cycle 43, exist,
    // parse and share one time axis (10 per cycle, the rising edge at +5).
    let mut timescales = vec![];
    for (path, clk_name) in [(&d.rtl_vcd, "clk"), (&d.vcd, "clk")] {
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
    both_sides_vcd(d.vcd.as_ref().unwrap());
}

/// The one VCD with both sides of the wrong counter: scopes `model` and `rtl` with every
/// port, `mismatch` high exactly in the cycles where a compared port differs (43 on:
/// the RTL counts from 44), a marker per differing port and none for the others.
fn both_sides_vcd(path: &Path) {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut p = vcd::Parser::new(f);
    let header = p.parse_header().unwrap();
    let top = header
        .find_scope(&["toy_counter".to_string()])
        .expect("the unit's scope");
    let var = |scope: &[&str], name: &str| {
        let path: Vec<String> = scope
            .iter()
            .chain(std::iter::once(&name))
            .map(|s| s.to_string())
            .collect();
        header.find_var(&path).map(|v| v.code)
    };
    for side in ["model", "rtl"] {
        for port in ["rst_n", "en", "count", "next", "acc", "hit", "dbg"] {
            assert!(var(&["toy_counter", side], port).is_some(), "{side}.{port}");
        }
    }
    let mismatch = var(&["toy_counter"], "mismatch").expect("mismatch marker");
    let count_marker = var(&["toy_counter"], "mismatch_count").expect("marker of count");
    assert!(
        var(&["toy_counter"], "mismatch_acc").is_none(),
        "acc never differs"
    );
    let model_count = var(&["toy_counter", "model"], "count").unwrap();
    let rtl_count = var(&["toy_counter", "rtl"], "count").unwrap();
    assert!(top.items.len() > 4);
    // Replay the value changes: at each time, the markers and both counts.
    let (mut t, mut m, mut cm) = (0u64, None, None);
    let (mut mc, mut rc) = (0u64, 0u64);
    let mut at = std::collections::BTreeMap::new();
    let num = |v: &vcd::Vector| {
        v.iter()
            .fold(0u64, |n, b| (n << 1) | (b == vcd::Value::V1) as u64)
    };
    for cmd in p {
        match cmd.unwrap() {
            vcd::Command::Timestamp(x) => t = x,
            vcd::Command::ChangeScalar(c, v) if c == mismatch => m = Some(v == vcd::Value::V1),
            vcd::Command::ChangeScalar(c, v) if c == count_marker => cm = Some(v == vcd::Value::V1),
            vcd::Command::ChangeVector(c, v) if c == model_count => mc = num(&v),
            vcd::Command::ChangeVector(c, v) if c == rtl_count => rc = num(&v),
            _ => {}
        }
        at.insert(t, (m, cm, mc, rc));
    }
    // Settled values of cycle c at 10*c: the model counts c, the RTL c+1 from 43 on.
    assert_eq!(at[&420], (Some(false), Some(false), 42, 42));
    assert_eq!(at[&430], (Some(true), Some(true), 43, 44));
    // The markers hold through the cycle (after the edge at +5 too).
    assert_eq!(at[&435].0, Some(true));
    assert_eq!(at[&500], (Some(true), Some(true), 50, 51));
}

#[test]
fn wide_port_divergence_reports_bits_above_64() {
    // The accumulator drops the bit rotated out of position 69 instead of wrapping it.
    let wrong = COUNTER_V.replace("{acc[68:0], acc[69]} ^ din", "{acc[68:0], 1'b0} ^ din");
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let cosim = counter_cosim(&params, &wrong).with_failure_dir(None);
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

/// The frames of `cycles` cycles of `drive` (header 0, the inputs, the model's outputs, in
/// the RTL model's frame order), as the lockstep's model thread writes them.
fn counter_frames(
    cosim: &Cosim,
    rtl: &RtlModel,
    cycles: u64,
    mut drive: impl FnMut(u64, &mut [Bits]),
) -> Vec<u64> {
    let widths = COUNTER_DESC.widths(cosim.params());
    let ins = warpforge_cosim::rtl::FramePorts::new(rtl.input_frame_order(), &widths);
    let outs = warpforge_cosim::rtl::FramePorts::new(rtl.output_frame_order(), &widths);
    let mut model = (COUNTER_DESC.build)(cosim.params());
    let mut ports = COUNTER_DESC.zero_ports(cosim.params());
    let mut frames = vec![];
    for c in 0..cycles {
        drive(c, &mut ports);
        model.outputs(&mut ports);
        frames.push(0);
        ins.write(&ports, &mut frames);
        outs.write(&ports, &mut frames);
        model.tick(&ports);
    }
    frames
}

/// `RtlModel::check_frames` (the shim's own loop over plain frames, which the lockstep's
/// RTL side uses) runs the toy counter's frames, its 70-bit input and output included, and
/// stops where the frame-by-frame path does: on the first frame whose outputs differ, and
/// on `$finish`, `$stop` or `$fatal`, with the cycles before it and the position of that
/// frame.
#[test]
fn the_shims_frame_loop_stops_at_the_frame_that_differs_or_fails() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    // The faithful counter: the accumulator rotates and takes din (both 70 bits).
    let cosim = counter_cosim(&params, COUNTER_V);
    let fresh = |cosim: &Cosim| {
        let mut m = cosim.rtl_model(false).unwrap();
        m.reset().unwrap();
        m
    };
    let mut m = fresh(&cosim);
    let stride = counter_frames(&cosim, &m, 1, |_, _| {}).len();
    let mut rng = warpforge_cosim::stimulus::SplitMix64::new(3);
    let frames = counter_frames(&cosim, &m, 300, |_, p| {
        p[0].set_u64(1);
        p[1].set_u64(rng.next_u64() & 1);
        p[4].set_words(&[rng.next_u64(), rng.next_u64()]);
    });
    let mut pos = 0;
    assert_eq!(m.check_frames(&frames[..100 * stride], &mut pos), Ok(100));
    assert_eq!(pos, 100 * stride);
    assert_eq!(m.check_frames(&frames, &mut pos), Ok(200));
    assert_eq!((pos, m.error()), (frames.len(), None));
    // One bit of an expected output off in cycle 4 (the frame's last word: the high word
    // of the accumulator or a narrow output): it stops there, with no error.
    let mut bad = frames.clone();
    bad[5 * stride - 1] ^= 1;
    let (mut m, mut pos) = (fresh(&cosim), 0);
    assert_eq!(m.check_frames(&bad, &mut pos), Err(4));
    assert_eq!((pos, m.error()), (4 * stride, None));

    // The counter that stops: $finish at the edge where count is 10, $stop when `load`,
    // $fatal when din[0]; its accumulator stays 0, so din stays 0 but for the $fatal.
    let cosim = counter_cosim(&params, FINISH_V);
    // (Verilator 5.006 runs `$fatal` as a `$stop` naming its line.)
    for (cycle, kind, line, set) in [
        (10u64, RtlErrorKind::Finish, 11, None),
        (3, RtlErrorKind::Stop, 10, Some(2usize)),
        (6, RtlErrorKind::Stop, 12, Some(4)),
    ] {
        let mut m = fresh(&cosim);
        let frames = counter_frames(&cosim, &m, 20, |c, p| {
            p[0].set_u64(1);
            p[1].set_u64(1);
            // What this RTL's `next` shows when `load` is ignored (the model loads it).
            p[3].set_u64(c + 1);
            if let Some(port) = set {
                p[port].set_u64((c == cycle) as u64);
            }
        });
        let mut pos = 0;
        assert_eq!(m.check_frames(&frames, &mut pos), Err(cycle), "{kind:?}");
        assert_eq!(pos, cycle as usize * stride);
        let e = m.error().expect("the model failed");
        assert_eq!(e.kind, kind, "{}", e.message);
        assert!(
            e.message.contains(&format!("toy_counter.v:{line}")),
            "{}",
            e.message
        );
    }
}

#[test]
fn finish_and_stop_in_rtl_come_back_as_errors() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let cosim = counter_cosim(&params, FINISH_V).with_failure_dir(None);
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
    let cosim = counter_cosim(&params, &osc).with_failure_dir(None);
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
    let cosim = counter_cosim(&params, &state_only_bug()).with_failure_dir(None);
    let mut stim = FnStimulus(|cycle: u64, ports: &mut [Bits]| {
        ports[0].set_u64(1);
        ports[1].set_u64(1);
        cycle < 38
    });
    let err = cosim.run(&mut stim).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((d.cycle, d.port()), (38, "dbg"));
}

/// Replay files of the first format (inputs only) still load and re-run, their expected
/// outputs recomputed from the model; a format this version does not know is refused with
/// an error naming it; a malformed expected value names its line and port.
#[test]
fn replay_files_of_format_1_still_load_and_other_formats_are_refused() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let out = out_dir("formats");
    let cosim =
        counter_cosim(&params, &wrong_counter()).with_failure_dir(Some(out.path().to_path_buf()));
    let err = cosim.run(&mut FnStimulus(counting)).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    let v2 = std::fs::read_to_string(d.replay.as_ref().unwrap()).unwrap();
    let (r2, _) = Replay::load(d.replay.as_ref().unwrap(), &COUNTER_DESC).unwrap();
    let write = |name: &str, text: &str| {
        let p = out.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };

    // The same file as format 1 wrote it: no `outputs` in the header, no `|` part.
    let mut lines = v2.lines();
    let mut header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    header["format"] = "warpforge-replay-1".into();
    header.as_object_mut().unwrap().remove("outputs");
    let mut v1 = header.to_string() + "\n";
    for l in lines {
        v1.push_str(l.split(" |").next().unwrap());
        v1.push('\n');
    }
    let p1 = write("v1.replay", &v1);
    let (r1, _) = Replay::load(&p1, &COUNTER_DESC).unwrap();
    assert!(r1.expected.is_none());
    let (e1, e2) = (
        r1.expected_outputs(&COUNTER_DESC, &params),
        r2.expected.clone().unwrap(),
    );
    assert_eq!((e1.first(), e1.end()), (e2.first(), e2.end()));
    for c in e1.first()..e1.end() {
        assert_eq!(e1.values(c), e2.values(c), "cycle {c}");
    }
    let again = replay_with(&p1, &COUNTER_DESC, &opts()).unwrap_err();
    let d1 = again.divergence().unwrap_or_else(|| panic!("{again}"));
    assert_eq!((d1.cycle, d1.port()), (43, "count"));

    let p9 = write(
        "v9.replay",
        &v2.replacen("warpforge-replay-2", "warpforge-replay-9", 1),
    );
    let e = Replay::load(&p9, &COUNTER_DESC).unwrap_err().to_string();
    assert!(
        e.contains("replay format `warpforge-replay-9`")
            && e.contains("warpforge-replay-2")
            && e.contains("warpforge-replay-1"),
        "{e}"
    );
    let e = replay_with(&p9, &COUNTER_DESC, &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("warpforge-replay-9"), "{e}");

    // A file whose recorded outputs differ from today's model (as if the model changed
    // since): cycle 10's count recorded as 0x0b.
    let mut changed: Vec<String> = v2.lines().map(String::from).collect();
    let (ins, outs) = changed[11].split_once(" | ").unwrap();
    let mut outs: Vec<String> = outs.split(' ').map(String::from).collect();
    assert_eq!(outs[0], "0a", "count at cycle 10, written in full");
    outs[0] = "0b".into();
    changed[11] = format!("{ins} | {}", outs.join(" "));
    let pc = write("changed.replay", &(changed.join("\n") + "\n"));
    let (rc, _) = Replay::load(&pc, &COUNTER_DESC).unwrap();
    let m = rc.model_change(&COUNTER_DESC, &params).expect("a change");
    assert_eq!((m.cycle, m.port.as_str()), (10, "count"));
    assert_eq!((m.recorded.as_str(), m.now.as_str()), ("0b", "0a"));
    assert_eq!(r2.model_change(&COUNTER_DESC, &params), None);

    // Line 3 (cycle 1): count's value flips a bit past the 8-bit port.
    let mut bad: Vec<String> = v2.lines().map(String::from).collect();
    let (ins, outs) = bad[2].split_once(" | ").unwrap();
    let mut outs: Vec<String> = outs.split(' ').map(String::from).collect();
    outs[0] = "^9".into();
    bad[2] = format!("{ins} | {}", outs.join(" "));
    let pb = write("bad.replay", &(bad.join("\n") + "\n"));
    let e = Replay::load(&pb, &COUNTER_DESC).unwrap_err().to_string();
    assert!(
        e.contains("line 3: port count: `^9`: bit 9 is outside the 8-bit port"),
        "{e}"
    );
}

/// A state difference that reaches an output only later is reported where it starts: the
/// ghost bit corrupts the debug port from cycle 38 and the count output from cycle 41 (the
/// edge that ends cycle 40 adds it); the run stops at 41 and the report says 38.
#[test]
fn an_output_difference_is_reported_where_the_state_first_differed() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let rtl = state_only_bug().replace(
        "      else if (en) count <= count + 1'b1;",
        "      else if (en) count <= count + 1'b1 + {7'd0, ghost && count == 8'd40};",
    );
    assert_ne!(rtl, state_only_bug());
    let out = out_dir("state-first");
    let cosim = counter_cosim(&params, &rtl).with_failure_dir(Some(out.path().to_path_buf()));
    let err = cosim.run(&mut FnStimulus(counting)).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    eprintln!("{d}");
    assert_eq!((d.cycle, d.port()), (38, "dbg"));
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("outputs first differed at cycle 41") && n.contains("38")),
        "{:?}",
        d.notes
    );
    assert_eq!(d.reproduced, Some(true));
}

/// With two cores `Cosim::run` puts the model side on a second thread
/// (`lockstep/pipelined.rs`): it compares exactly what the one-thread loop compares, and
/// a divergence it finds is reported exactly as the one-thread loop reports it (the run is
/// done again that way for the report), replay file included.
#[test]
fn the_pipelined_run_compares_and_reports_as_the_one_thread_run() {
    let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let both = |desc, params: &warpforge_model::units::contract::Params, rtl: RtlSource| {
        let c = |on: bool, dir: &Path| {
            Cosim::new(desc, params.clone(), rtl.clone(), &opts())
                .unwrap_or_else(|e| panic!("{e}"))
                .with_failure_dir(Some(dir.to_path_buf()))
                .with_pipelining(if on {
                    Pipelining::Always
                } else {
                    Pipelining::Never
                })
        };
        let (d1, d2) = (out_dir("pipelined"), out_dir("one-thread"));
        let pair = (c(true, d1.path()), c(false, d2.path()));
        (pair, (d1, d2))
    };

    // Matching RTL (the SPE stack at its first standard set, the kit's random stimulus with
    // its resets and steering): the same cycles, state samples, comparisons and coverage.
    let desc = &warpforge_model::units::simt_stack::SPE_DESC;
    let params = desc.standard_params().swap_remove(0);
    let g = warpforge_gen::generate(desc, &params).unwrap();
    let ((piped, single), _dirs) = both(desc, &params, RtlSource::cosim_of(&g));
    let kit = warpforge_cosim::kits::KITS
        .iter()
        .find(|k| k.unit.name == desc.name)
        .unwrap();
    let stim = || (kit.random)(desc, &params, 7, 30_000);
    let a = piped.run(&mut stim()).unwrap_or_else(|e| panic!("{e}"));
    let b = single.run(&mut stim()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.pipelined, two_cores, "{a}");
    assert!(!b.pipelined);
    assert_eq!(
        (a.cycles, a.state_samples, a.comparisons),
        (b.cycles, b.state_samples, b.comparisons)
    );
    assert_eq!(a.cycles, 30_000);
    let hits = |s: &warpforge_cosim::Summary| -> Vec<(String, u64)> {
        s.coverage
            .bins_hit()
            .map(|(bin, n)| (bin.to_string(), n))
            .collect()
    };
    assert_eq!(hits(&a), hits(&b));
    assert!(!hits(&a).is_empty());
    // The default (`Auto`) first races one thread against two on the start of the
    // stimulus (rewinding it after each try), then runs one way or the other: the same run
    // again. A run shorter than the probe goes
    // on one thread and leaves the choice to the next run.
    let auto_cosim = Cosim::new(desc, params.clone(), RtlSource::cosim_of(&g), &opts()).unwrap();
    let short = auto_cosim
        .run(&mut (kit.random)(desc, &params, 5, 500))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(short.cycles, 500);
    assert!(!short.pipelined);
    assert_eq!(auto_cosim.auto_choice(), None);
    let auto = auto_cosim
        .run(&mut stim())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(auto.pipelined, auto_cosim.auto_choice() == Some(true));
    assert_eq!(auto_cosim.auto_choice().is_some(), two_cores, "{auto}");
    assert_eq!(
        (
            auto.cycles,
            auto.state_samples,
            auto.comparisons,
            hits(&auto)
        ),
        (b.cycles, b.state_samples, b.comparisons, hits(&b))
    );

    // Ports wider than 64 bits take several words of a frame: the `wcu` at its defaults
    // (a 1,024-bit request mask in, a 160-bit source map out) runs the same both ways.
    let desc = &warpforge_model::units::wcu::WCU_DESC;
    let params = desc.params::<&str>(&[]).unwrap();
    let g = warpforge_gen::generate(desc, &params).unwrap();
    let ((piped, single), _dirs) = both(desc, &params, RtlSource::cosim_of(&g));
    let stim = || warpforge_cosim::kits::random_stimulus(desc, &params, 11, 3_000);
    let a = piped.run(&mut stim()).unwrap_or_else(|e| panic!("{e}"));
    let b = single.run(&mut stim()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.pipelined, two_cores, "{a}");
    assert_eq!(
        (a.cycles, a.state_samples, a.comparisons, hits(&a)),
        (b.cycles, b.state_samples, b.comparisons, hits(&b))
    );
    assert_eq!(a.cycles, 3_000);

    // Wrong RTL (the counter that skips 43): the same first divergence, inputs, notes and
    // replay file, and the pipelined run's replay reproduces it alone.
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let ((piped, single), (d1, d2)) = both(&COUNTER_DESC, &params, counter_rtl(&wrong_counter()));
    let stim = || RandomStimulus::new(&COUNTER_DESC, &params, 3, 50_000);
    let a = piped.run(&mut stim()).unwrap_err();
    let b = single.run(&mut stim()).unwrap_err();
    let (a, b) = (a.divergence().unwrap(), b.divergence().unwrap());
    eprintln!("{a}");
    assert_eq!(a.port(), "count");
    assert_eq!(
        (a.cycle, &a.mismatches, &a.last_inputs, &a.notes),
        (b.cycle, &b.mismatches, &b.last_inputs, &b.notes)
    );
    let (ra, rb) = (a.replay.clone().unwrap(), b.replay.clone().unwrap());
    assert!(ra.starts_with(d1.path()) && rb.starts_with(d2.path()));
    assert_eq!(std::fs::read(&ra).unwrap(), std::fs::read(&rb).unwrap());
    let again = replay_with(&ra, &COUNTER_DESC, &opts()).unwrap_err();
    assert_eq!(again.divergence().unwrap().cycle, a.cycle);
}

/// A model built without trace code (`BuildOptions::for_mutants`, what mutants use) is
/// a different cache entry, simulates the same, catches the same bug at the same cycle and
/// port, and refuses a VCD with an error that says why instead of crashing.
#[test]
fn a_model_without_trace_code_runs_the_same_and_refuses_a_vcd() {
    let params = COUNTER_DESC.params(&[("W", 8u64)]).unwrap();
    let quick = opts().for_mutants();
    assert!(!quick.tracing && opts().tracing);
    let good = Cosim::new(
        &COUNTER_DESC,
        params.clone(),
        counter_rtl(COUNTER_V),
        &quick,
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .with_failure_dir(None);
    let traced = counter_cosim(&params, COUNTER_V);
    assert_ne!(good.built().hash, traced.built().hash);
    let s = good
        .run(&mut FnStimulus(counting))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.cycles, 1000);

    let bad = Cosim::new(&COUNTER_DESC, params, counter_rtl(&wrong_counter()), &quick)
        .unwrap_or_else(|e| panic!("{e}"))
        .with_failure_dir(None);
    let err = bad.run(&mut FnStimulus(counting)).unwrap_err();
    let d = err.divergence().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((d.cycle, d.first().port.as_str()), (43, "count"));

    let mut m = good.rtl_model(true).unwrap();
    let dir = out_dir("notrace");
    let vcd = dir.path().join("x.vcd");
    let e = m.trace_open(&vcd).unwrap_err().to_string();
    assert!(e.contains("without trace code"), "{e}");
    assert!(!vcd.exists());
}
