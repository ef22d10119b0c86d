//! A launch that faults leaves the GPU usable: the next launch on the same GPU runs and
//! gives its results, in every mode (the GPU of a CUDA program is not reused after a fault,
//! but a model API user, or a test harness, may well launch again).

use warpforge_model::config::GpuConfig;
use warpforge_model::error::{FaultKind, SimError};
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::{Dim3, Host, KernelArg};

const PTX: &str = r#".version 7.0
.target sm_70
.address_size 64
.visible .entry bad(.param .u64 p)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;
	.reg .pred %q;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %q, %r1, 37;
	@%q st.global.u32 [8], %r1;
	bar.sync 0;
	ld.param.u64 %rd1, [p];
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r1;
	ret;
}
.visible .entry good(.param .u64 p)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mad.lo.s32 %r1, %r2, 64, %r1;
	ld.param.u64 %rd1, [p];
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	add.u32 %r1, %r1, 1000;
	st.global.u32 [%rd3], %r1;
	ret;
}
"#;

#[test]
fn a_launch_after_a_faulted_one_runs_on_the_same_gpu() {
    for (mode, sets) in [
        (Mode::Functional, vec![]),
        (Mode::Timing, vec![]),
        (Mode::Timing, vec!["sm.reconvergence=dpe".to_string()]),
    ] {
        let mut g = Gpu::new(GpuConfig::preset("gtx480", &sets).unwrap(), mode);
        let m = g.load_module("f.ptx", PTX).unwrap();
        let out = g.alloc(64 * 40 * 4).unwrap();
        let e = g
            .launch(
                m,
                "bad",
                Dim3::x(40),
                Dim3::x(64),
                0,
                &[KernelArg::Ptr(out)],
            )
            .unwrap_err();
        let SimError::Fault(f) = e else {
            panic!("{mode:?}: {e}")
        };
        assert_eq!(f.kind, FaultKind::OutOfBounds, "{mode:?}");
        g.launch(
            m,
            "good",
            Dim3::x(40),
            Dim3::x(64),
            0,
            &[KernelArg::Ptr(out)],
        )
        .unwrap_or_else(|e| panic!("{mode:?} {sets:?}: the launch after the fault: {e}"));
        let v = g.read_u32(out, 64 * 40).unwrap();
        assert!(
            v.iter().enumerate().all(|(i, &x)| x == i as u32 + 1000),
            "{mode:?}"
        );
    }
}
