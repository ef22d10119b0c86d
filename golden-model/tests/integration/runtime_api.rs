//! The model API a CUDA runtime uses (issue #12): launches with a raw param buffer, module
//! variables by name with their PTX initialisers, constant-bank writes, freeing device
//! memory, simulated time across launches on one persistent GPU.

use warpforge_model::config::GpuConfig;
use warpforge_model::error::SimError;
use warpforge_model::gpu::launch::LaunchShape;
use warpforge_model::gpu::{Gpu, Mode, SymbolPlace};
use warpforge_model::host::{DevPtr, Dim3, Host};

const PTX: &str = r#"
.version 6.4
.target sm_70
.address_size 64
.visible .const .align 4 .b8 taps[8] = {1, 0, 0, 0, 2, 0, 0, 0};
.visible .global .align 4 .u32 counter = 5;
.visible .entry k(.param .u64 out, .param .u32 scale)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [scale];
    mov.u32 %r2, %tid.x;
    and.b32 %r3, %r2, 1;
    mul.wide.u32 %rd2, %r3, 4;
    mov.u64 %rd3, taps;
    add.s64 %rd3, %rd3, %rd2;
    ld.const.u32 %r4, [%rd3];
    mul.lo.u32 %r5, %r4, %r1;
    mul.wide.u32 %rd4, %r2, 4;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r5;
    atom.global.add.u32 %r6, [counter], 1;
    ret;
}
"#;

fn shape(threads: u32) -> LaunchShape {
    LaunchShape {
        grid: Dim3::x(1),
        block: Dim3::x(threads),
        dynamic_shared: 0,
    }
}

fn params(out: DevPtr, scale: u32) -> Vec<u8> {
    let mut p = out.0.to_le_bytes().to_vec();
    p.extend(scale.to_le_bytes());
    p // 12 bytes: `.u64 out` at 0, `.u32 scale` at 8
}

#[test]
fn raw_params_symbols_constants_and_time() {
    for mode in [Mode::Functional, Mode::Timing] {
        let mut gpu = Gpu::new(GpuConfig::preset("gtx480", &[]).unwrap(), mode);
        let m = gpu.load_module("rt.ptx", PTX).unwrap();
        let out = gpu.alloc(64 * 4).unwrap();
        gpu.launch_raw(m, "k", shape(64), &params(out, 3)).unwrap();
        let got = gpu.read_u32(out, 64).unwrap();
        assert!(got
            .iter()
            .enumerate()
            .all(|(i, &v)| v == if i % 2 == 0 { 3 } else { 6 }));
        let t1 = gpu.now_ns();

        // __constant__: the PTX initialiser, then a host write seen by the next launch.
        let (place, size) = gpu.symbol(m, "taps").unwrap();
        assert_eq!(size, 8);
        let SymbolPlace::Const(off) = place else {
            panic!("taps is .const")
        };
        let mut back = [0u8; 8];
        gpu.read_const(m, off, &mut back).unwrap();
        assert_eq!(back, [1, 0, 0, 0, 2, 0, 0, 0]);
        gpu.write_const(m, off + 4, &7u32.to_le_bytes()).unwrap();
        assert!(
            gpu.write_const(m, off + 6, &[0; 4]).is_err(),
            "past the bank"
        );
        gpu.launch_raw(m, "k", shape(64), &params(out, 2)).unwrap();
        assert_eq!(gpu.read_u32(out, 2).unwrap(), vec![2, 14]);
        if mode == Mode::Timing {
            assert!(
                gpu.now_ns() > t1 && t1 > 0.0,
                "time runs on across launches"
            );
        }

        // __device__: a device address, initialised from the PTX, updated by the kernels.
        let (SymbolPlace::Global(p), 4) = gpu.symbol(m, "counter").unwrap() else {
            panic!("counter is .global")
        };
        assert_eq!(gpu.read_u32(p, 1).unwrap(), vec![5 + 128]);
        assert!(gpu.symbol(m, "k").is_none() && gpu.symbol(m, "nothing").is_none());

        // A wrong-sized param buffer is a launch error, not a fault.
        let e = gpu.launch_raw(m, "k", shape(64), &[0; 4]).unwrap_err();
        assert!(
            matches!(e, SimError::Launch(ref s) if s.contains("12 bytes")),
            "{e}"
        );

        // Freed memory: host copies and a second free are errors. By default the kernel
        // may still touch it while a live allocation (the module's `counter`) shares its
        // page, as on a real GPU; with strict bounds that is a fault.
        gpu.free(out).unwrap();
        assert!(gpu.free(out).is_err());
        assert!(gpu.read_u32(out, 1).is_err());
        gpu.launch_raw(m, "k", shape(64), &params(out, 1)).unwrap();
        // Pages no live allocation shares are unmapped: a fault in either mode.
        let big = gpu.alloc(1 << 20).unwrap();
        let inside = big.offset(256 << 10);
        gpu.launch_raw(m, "k", shape(64), &params(inside, 1))
            .unwrap();
        gpu.free(big).unwrap();
        let e = gpu
            .launch_raw(m, "k", shape(64), &params(inside, 1))
            .unwrap_err();
        assert!(
            matches!(e, SimError::Fault(ref f) if f.detail.contains("no device memory is mapped")),
            "{e}"
        );
        // The GPU runs on after the fault (its in-flight work dropped: `Gpu::abandon_launch`;
        // the CUDA runtime ends the program instead, as a sticky error would).
        gpu.launch_raw(m, "k", shape(64), &params(out, 1)).unwrap();
        assert_eq!(
            gpu.read_u32(p, 1).unwrap().len(),
            1,
            "memory stays readable"
        );

        // With strict bounds, the freed allocation faults although its page is mapped.
        let mut gpu = Gpu::new(GpuConfig::preset("gtx480", &[]).unwrap(), mode);
        gpu.set_strict_bounds(true);
        let m = gpu.load_module("rt.ptx", PTX).unwrap();
        let out = gpu.alloc(64 * 4).unwrap();
        gpu.launch_raw(m, "k", shape(64), &params(out, 1)).unwrap();
        gpu.free(out).unwrap();
        let e = gpu
            .launch_raw(m, "k", shape(64), &params(out, 1))
            .unwrap_err();
        assert!(
            matches!(e, SimError::Fault(ref f) if f.detail.contains("outside every live allocation")),
            "{e}"
        );
    }
}

/// A 4 GiB allocation is mapped, not backed: a kernel that writes one page of it holds one
/// page of host memory (the allocator's resident-bytes counter), and its reads of the rest
/// give zeros.
#[test]
fn a_huge_allocation_holds_host_memory_only_for_what_is_written() {
    for mode in [Mode::Functional, Mode::Timing] {
        let mut gpu = Gpu::new(GpuConfig::preset("gtx480", &[]).unwrap(), mode);
        let m = gpu.load_module("rt.ptx", PTX).unwrap();
        let resident = gpu.resident_bytes(); // the module's initialised `counter`
        let big = gpu.alloc(4 << 30).unwrap();
        assert!(gpu.mapped_bytes() > 4 << 30);
        assert_eq!(gpu.resident_bytes(), resident);
        let at = big.offset(3 << 30);
        gpu.launch_raw(m, "k", shape(64), &params(at, 3)).unwrap();
        assert_eq!(gpu.read_u32(at, 2).unwrap(), vec![3, 6]);
        assert_eq!(gpu.resident_bytes(), resident + 64 * 1024);
        assert_eq!(gpu.read_u32(big, 2).unwrap(), vec![0, 0]);
        assert_eq!(gpu.resident_bytes(), resident + 64 * 1024);
        // The capacity (8 GiB) counts mapped pages: a second 4 GiB does not fit.
        assert!(gpu.alloc(4 << 30).is_err());
        gpu.free(big).unwrap();
        assert_eq!(gpu.resident_bytes(), resident);
        assert!(gpu.alloc(4 << 30).is_ok());
    }
}
