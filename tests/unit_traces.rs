//! Unit traces recorded from the GPU model replay through the unit model alone exactly as
//! the GPU's instances ran: every recorded update is legal (no PC-mismatch or overflow
//! error), every warp's stack ends empty, and the trace holds one update per issued warp
//! instruction.

use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::units::trace::{InstanceReplay, Trace};
use warpforge_workloads::Size;

fn record(workload: &str, unit: &str, overrides: &[String]) -> (Gpu, std::path::PathBuf) {
    let cfg = GpuConfig::preset("gtx480", overrides).unwrap();
    let mut gpu = Gpu::new(cfg, Mode::Timing);
    gpu.record_unit(unit).unwrap();
    let w = warpforge_workloads::by_name(workload).unwrap();
    let v = w.run(&mut gpu, Size::Tiny, 3).unwrap();
    assert!(v.passed, "{workload}: {}", v.detail);
    let rec = gpu.take_trace().expect("recording was on");
    let path = std::env::temp_dir().join(format!(
        "wf-unit-trace-{workload}-{unit}-{}.wftrace",
        std::process::id()
    ));
    rec.write(&path, workload).unwrap();
    (gpu, path)
}

#[test]
fn spe_stack_traces_replay_through_the_unit_model() {
    for workload in ["bfs", "nw", "lud"] {
        let (gpu, path) = record(workload, "simt_stack_spe", &[]);
        let trace = Trace::read(&path).unwrap();
        let desc = trace.desc;
        let at = |name| desc.port_index(name).unwrap();
        let (upd_valid, err_pc, err_ovf, depth) = (
            at("upd_valid"),
            at("err_pc"),
            at("err_overflow"),
            at("depth"),
        );
        let mut updates = 0u64;
        for i in 0..trace.header.instances.len() {
            let mut model = (desc.build)(&trace.params);
            let mut ports = desc.zero_ports(&trace.params);
            let mut replay = InstanceReplay::new(&trace, i).unwrap();
            let name = &trace.header.instances[i].name;
            let mut cycles = 0;
            loop {
                model.outputs(&mut ports);
                if !replay.drive(&mut ports).unwrap() {
                    break;
                }
                updates += ports[upd_valid].to_u64();
                model.outputs(&mut ports);
                model.tick(&ports);
                cycles += 1;
                assert!(
                    cycles < 10_000_000,
                    "{workload} {name}: replay does not end"
                );
            }
            model.outputs(&mut ports);
            assert_eq!(ports[err_pc].to_u64(), 0, "{workload} {name}: PC mismatch");
            assert_eq!(ports[err_ovf].to_u64(), 0, "{workload} {name}: overflow");
            assert_eq!(
                ports[depth].to_u64(),
                0,
                "{workload} {name}: warp did not finish"
            );
        }
        let issued: u64 = gpu.launches.iter().map(|l| l.warp_instructions).sum();
        assert_eq!(
            updates, issued,
            "{workload}: one update per issued instruction"
        );
        std::fs::remove_file(&path).ok();
    }
}
