//! The SM's scoreboard is the `dpe_scoreboard` unit model: launch-time limits, the
//! writeback-port queue (more than NWB releases in one cycle), one-cycle writeback latencies,
//! and traces of the scoreboard's ports that replay through the unit alone and end with
//! every reserve released.

use warpforge_model::config::GpuConfig;
use warpforge_model::error::SimError;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::{Dim3, Host, KernelArg};
use warpforge_model::units::trace::{InstanceReplay, Trace};

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

fn gpu(mode: Mode, sets: &[&str]) -> Gpu {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    Gpu::new(GpuConfig::preset("gtx480", &sets).unwrap(), mode)
}

/// `out[tid] = sum over i in 1..=n of (tid + i)`, with all `n` values live at once.
fn many_live_registers(n: u32) -> String {
    let mut body = String::new();
    body += "\tld.param.u64 %rd1, [wide_p0];\n\tcvta.to.global.u64 %rd2, %rd1;\n";
    body += "\tmov.u32 %r0, %tid.x;\n";
    for i in 1..=n {
        body += &format!("\tadd.u32 %r{i}, %r0, {i};\n");
    }
    let acc = n + 1;
    body += &format!("\tmov.u32 %r{acc}, 0;\n");
    for i in 1..=n {
        body += &format!("\tadd.u32 %r{acc}, %r{acc}, %r{i};\n");
    }
    body += "\tmul.wide.u32 %rd3, %r0, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n";
    body += &format!("\tst.global.u32 [%rd4], %r{acc};\n\tret;\n");
    format!(
        "{HEADER}.visible .entry wide(\n\t.param .u64 wide_p0\n)\n{{\n\t.reg .b32 %r<{}>;\n\
         \t.reg .b64 %rd<5>;\n{body}}}\n",
        n + 2
    )
}

fn run_wide(gpu: &mut Gpu, n: u32) -> Result<Vec<u32>, SimError> {
    let m = gpu.load_module("wide.ptx", &many_live_registers(n))?;
    let out = gpu.alloc(32 * 4)?;
    gpu.launch(
        m,
        "wide",
        Dim3::x(1),
        Dim3::x(32),
        0,
        &[KernelArg::Ptr(out)],
    )?;
    gpu.read_u32(out, 32)
}

#[test]
fn a_kernel_with_more_than_256_register_slots_fails_its_timing_launch() {
    let n = 300;
    let want: Vec<u32> = (0..32u32).map(|t| (1..=n).map(|i| t + i).sum()).collect();
    // The functional model has no scoreboard.
    assert_eq!(run_wide(&mut gpu(Mode::Functional, &[]), n).unwrap(), want);
    let err = run_wide(&mut gpu(Mode::Timing, &[]), n).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, SimError::Launch(_)), "{msg}");
    assert!(msg.contains("`wide`") && msg.contains("256"), "{msg}");
    // Just under the limit runs, under both reconvergence schemes.
    for sets in [&[][..], &["sm.reconvergence=dpe"][..]] {
        assert_eq!(
            run_wide(&mut gpu(Mode::Timing, sets), 200).unwrap()[..4],
            {
                let w: Vec<u32> = (0..4u32).map(|t| (1..=200).map(|i| t + i).sum()).collect();
                w
            }[..]
        );
    }
}

/// Every thread of `blocks` x 256 threads loads the same 16 bytes as one `v4` load, sums
/// them and stores the sum: the warps' loads merge in one L1 miss and complete together,
/// more register releases in one cycle than the scoreboard has writeback ports.
const SAME_LINE: &str = "\
.visible .entry same_line(\n\t.param .u64 sl_in,\n\t.param .u64 sl_out\n)\n{\n\
\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\
\tld.param.u64 %rd1, [sl_in];\n\tld.param.u64 %rd2, [sl_out];\n\
\tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n\
\tmov.u32 %r5, %ctaid.x;\n\tmov.u32 %r6, %ntid.x;\n\tmov.u32 %r7, %tid.x;\n\
\tmad.lo.s32 %r5, %r5, %r6, %r7;\n\
\tld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd3];\n\
\tadd.u32 %r1, %r1, %r2;\n\tadd.u32 %r1, %r1, %r3;\n\tadd.u32 %r1, %r1, %r4;\n\
\tadd.u32 %r1, %r1, %r5;\n\
\tmul.wide.u32 %rd5, %r5, 4;\n\tadd.s64 %rd6, %rd4, %rd5;\n\
\tst.global.u32 [%rd6], %r1;\n\tret;\n}\n";

fn run_same_line(gpu: &mut Gpu, blocks: u32) -> Vec<u32> {
    let m = gpu
        .load_module("same_line.ptx", &format!("{HEADER}{SAME_LINE}"))
        .unwrap();
    let input = gpu.alloc_write_u32(&[1, 10, 100, 1000]).unwrap();
    let n = blocks * 256;
    let out = gpu.alloc(n as u64 * 4).unwrap();
    gpu.launch(
        m,
        "same_line",
        Dim3::x(blocks),
        Dim3::x(256),
        0,
        &[KernelArg::Ptr(input), KernelArg::Ptr(out)],
    )
    .unwrap();
    let got = gpu.read_u32(out, n as usize).unwrap();
    let want: Vec<u32> = (0..n).map(|t| 1111 + t).collect();
    assert_eq!(got, want);
    got
}

/// Replay every instance of a scoreboard trace through the unit model; returns (reserves,
/// releases, copies) over all instances. Every instance must end with no pending bit.
fn replay_scoreboard(trace: &Trace) -> (u64, u64, u64) {
    let desc = trace.desc;
    assert_eq!(desc.name, "dpe_scoreboard");
    let at = |name| desc.port_index(name).unwrap();
    let (rsv, rel, cpy, dbg_p, dbg_s) = (
        at("rsv_valid"),
        at("rel_valid"),
        at("cpy_valid"),
        at("dbg_P"),
        at("dbg_S"),
    );
    let mut counts = (0, 0, 0);
    for i in 0..trace.header.instances.len() {
        let name = &trace.header.instances[i].name;
        let mut model = (desc.build)(&trace.params);
        let mut ports = desc.zero_ports(&trace.params);
        let mut replay = InstanceReplay::new(trace, i).unwrap();
        loop {
            model.outputs(&mut ports);
            if !replay.drive(&mut ports).unwrap() {
                break;
            }
            counts.0 += ports[rsv].to_u64().count_ones() as u64;
            counts.1 += ports[rel].to_u64().count_ones() as u64;
            counts.2 += ports[cpy].to_u64().count_ones() as u64;
            model.outputs(&mut ports);
            model.tick(&ports);
        }
        model.outputs(&mut ports);
        assert!(
            ports[dbg_p].words().iter().all(|&w| w == 0),
            "{name}: a reserve was never released"
        );
        assert!(ports[dbg_s].words().iter().all(|&w| w == 0), "{name}");
    }
    counts
}

#[test]
fn releases_beyond_the_writeback_ports_wait_for_the_next_cycle() {
    for sets in [
        &["sm.count=1"][..],
        &["sm.count=1", "sm.reconvergence=dpe"][..],
    ] {
        let mut plain = gpu(Mode::Timing, sets);
        run_same_line(&mut plain, 4);
        let deferred: u64 = plain.launches.iter().map(|l| l.deferred_releases).sum();
        assert!(deferred > 0, "{sets:?}: the test needs a burst of releases");

        // The same run recorded: identical timing, and the trace replays with every
        // reserve released (the queued releases included).
        let mut rec = gpu(Mode::Timing, sets);
        rec.record_unit("dpe_scoreboard").unwrap();
        run_same_line(&mut rec, 4);
        assert_eq!(rec.launches[0].cycles, plain.launches[0].cycles);
        let path = std::env::temp_dir().join(format!(
            "wf-sm-scoreboard-{}-{}.wftrace",
            sets.len(),
            std::process::id()
        ));
        rec.take_trace().unwrap().write(&path, "same_line").unwrap();
        let trace = Trace::read(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!(trace.params.get("NWB"), 8);
        assert_eq!(trace.params.get("NRSV"), 8);
        assert_eq!(
            trace.params.get("NUM_REGS"),
            16,
            "13 slots rounded up to 8s"
        );
        let (rsv, rel, _) = replay_scoreboard(&trace);
        assert!(rsv > 0);
        assert_eq!(rsv, rel, "{sets:?}: every reserve is released once");
    }
}

#[test]
fn one_cycle_writeback_latencies_neither_deadlock_nor_leak() {
    // A result written back in the cycle after issue never reaches the scoreboard.
    for sets in [
        &[
            "pipeline.alu_latency=1",
            "pipeline.fma_latency=1",
            "pipeline.ctrl_latency=1",
        ][..],
        &[
            "pipeline.alu_latency=1",
            "pipeline.fma_latency=0",
            "pipeline.ctrl_latency=1",
            "sm.reconvergence=dpe",
        ][..],
    ] {
        let mut g = gpu(Mode::Timing, sets);
        g.record_unit("dpe_scoreboard").unwrap();
        run_same_line(&mut g, 2);
        run_wide(&mut g, 40).unwrap();
        let path = std::env::temp_dir().join(format!(
            "wf-sm-scoreboard-lat1-{}-{}.wftrace",
            sets.len(),
            std::process::id()
        ));
        g.take_trace().unwrap().write(&path, "lat1").unwrap();
        let trace = Trace::read(&path).unwrap();
        std::fs::remove_file(&path).ok();
        // The trace widened to the larger kernel (42 slots + ... rounded up to 8s).
        assert!(trace.params.get("NUM_REGS") >= 48, "{}", trace.params);
        let (rsv, rel, _) = replay_scoreboard(&trace);
        assert_eq!(rsv, rel);
    }
}

#[test]
fn more_reserves_per_cycle_than_ports_fail_the_launch() {
    // Four schedulers can each issue a 4-register load in one cycle: 16 reserves, 8 ports.
    let mut g = gpu(Mode::Timing, &["sm.schedulers=4"]);
    let m = g
        .load_module("same_line.ptx", &format!("{HEADER}{SAME_LINE}"))
        .unwrap();
    let buf = KernelArg::Ptr(g.alloc(1024).unwrap());
    let err = g
        .launch(m, "same_line", Dim3::x(1), Dim3::x(32), 0, &[buf, buf])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`same_line`") && err.contains("reserve ports"),
        "{err}"
    );
    // Kernels that write at most two registers per instruction fit.
    run_wide(&mut gpu(Mode::Timing, &["sm.schedulers=4"]), 20).unwrap();
}
