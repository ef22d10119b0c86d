//! The functions and instructions the model provides natively (issue #12, item 3): device
//! `printf` (`vprintf`), libdevice's `__nv_*` math and `tex.1d` on texture references. Each
//! kernel runs in the functional model and in the timing model under both reconvergence
//! stacks, and must give the same results (printf output included) in all three.

use warpforge_model::config::GpuConfig;
use warpforge_model::error::{FaultKind, SimError};
use warpforge_model::exec::builtins::{ChannelKind, TexFormat};
use warpforge_model::gpu::{Gpu, Mode, SymbolPlace};
use warpforge_model::host::{DevPtr, Dim3, Host, KernelArg};
use warpforge_model::ptx::parse_module;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

const RUNS: [(Mode, &[&str]); 3] = [
    (Mode::Functional, &[]),
    (Mode::Timing, &[]),
    (Mode::Timing, &["sm.reconvergence=dpe"]),
];

fn gpu(mode: Mode, sets: &[&str]) -> Gpu {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    Gpu::new(GpuConfig::preset("gtx480", &sets).unwrap(), mode)
}

/// Odd threads call `vprintf(fmt, {tid: u32, ctaid: u32, tid * 1.5: f64, str: u64})` (the
/// argument buffer packed as clang packs it, in `.local`), and store what it returns.
const PRINTF: &str = r#"
.extern .func (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.visible .entry k(.param .u64 k_out, .param .u64 k_fmt, .param .u64 k_str)
{
	.local .align 8 .b8 	depot[24];
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<10>;
	.reg .f64 	%fd<3>;
	.reg .pred 	%p;
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u64 	%rd1, depot;
	cvta.local.u64 	%rd2, %rd1;
	st.local.u32 	[depot], %r1;
	st.local.u32 	[depot+4], %r3;
	cvt.rn.f64.u32 	%fd1, %r1;
	mul.f64 	%fd2, %fd1, 0d3FF8000000000000;
	st.local.f64 	[depot+8], %fd2;
	ld.param.u64 	%rd3, [k_str];
	st.local.u64 	[depot+16], %rd3;
	ld.param.u64 	%rd4, [k_fmt];
	and.b32 	%r4, %r1, 1;
	setp.eq.u32 	%p, %r4, 1;
	{
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd4;
	.param .b64 param1;
	st.param.b64 	[param1+0], %rd2;
	.param .b32 retval0;
	@%p call.uni (retval0), vprintf, (param0, param1);
	ld.param.b32 	%r2, [retval0+0];
	}
	ld.param.u64 	%rd5, [k_out];
	cvta.to.global.u64 	%rd6, %rd5;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r4, %r3, %r4, %r1;
	mul.wide.u32 	%rd7, %r4, 4;
	add.s64 	%rd8, %rd6, %rd7;
	st.global.u32 	[%rd8], %r2;
	ret;
}
"#;

/// Runs PRINTF with 2 blocks of 40 threads (two warps each, the second partial): the output
/// text, the dropped count and every thread's return value; or the launch's error.
fn run_printf(
    mode: Mode,
    sets: &[&str],
    fmt: &str,
    str_arg: Option<u64>,
    limit: Option<usize>,
) -> Result<(String, u64, Vec<u32>), SimError> {
    let mut g = gpu(mode, sets);
    if let Some(l) = limit {
        g.set_printf_limit(l);
    }
    let m = g.load_module("printf.ptx", &format!("{HEADER}{PRINTF}"))?;
    let out = g.alloc(80 * 4)?;
    let mut f = fmt.as_bytes().to_vec();
    f.push(0);
    let fp = g.alloc(f.len() as u64)?;
    g.write_bytes(fp, &f)?;
    let sp = g.alloc(8)?;
    g.write_bytes(sp, b"hello\0")?;
    let s = str_arg.unwrap_or(sp.0);
    g.launch(
        m,
        "k",
        Dim3::x(2),
        Dim3::x(40),
        0,
        &[KernelArg::Ptr(out), KernelArg::Ptr(fp), KernelArg::U64(s)],
    )?;
    let p = g.take_printf();
    let ret = g.read_u32(out, 80)?;
    Ok((String::from_utf8(p.text).unwrap(), p.dropped, ret))
}

#[test]
fn printf_prints_in_block_warp_call_lane_order_in_every_mode() {
    let mut want = String::new();
    for b in 0..2 {
        for t in (1..40).step_by(2) {
            want += &format!("{t:>2}/{b} {:.1} [hello]\n", t as f64 * 1.5);
        }
    }
    for (mode, sets) in RUNS {
        let (text, dropped, ret) =
            run_printf(mode, sets, "%2u/%u %.1f [%s]\n", None, None).unwrap();
        assert_eq!(text, want, "{mode:?} {sets:?}");
        assert_eq!(dropped, 0);
        for (i, r) in ret.iter().enumerate() {
            assert_eq!(*r, if i % 40 % 2 == 1 { 4 } else { 0 }, "ret of thread {i}");
        }
    }
}

#[test]
fn a_full_buffer_keeps_the_first_records_in_every_mode() {
    // 40 records of 12 bytes ("%2u/%u %.1f\n" of tid < 10: " 1/0 1.5\n"...), 100 bytes kept.
    let full = run_printf(Mode::Functional, &[], "%2u/%u %.1f\n", None, None)
        .unwrap()
        .0;
    for (mode, sets) in RUNS {
        let (text, dropped, _) = run_printf(mode, sets, "%2u/%u %.1f\n", None, Some(100)).unwrap();
        assert!(text.len() <= 100 && full.starts_with(&text), "{text}");
        let kept = text.lines().count() as u64;
        assert_eq!(kept + dropped, 40, "{mode:?}");
        assert!(dropped > 0);
    }
}

#[test]
fn malformed_formats_print_as_written() {
    for (mode, sets) in RUNS {
        let (text, _, ret) = run_printf(mode, sets, "%q|%5|%", None, None).unwrap();
        assert_eq!(text, "%q|%5|%".repeat(40), "{mode:?}");
        assert_eq!(ret[1], 0, "no argument parsed");
    }
}

#[test]
fn percent_s_of_an_unmapped_address_is_a_guest_fault() {
    for (mode, sets) in RUNS {
        let e = run_printf(mode, sets, "%u %u %f %s\n", Some(0x1234), None).unwrap_err();
        let SimError::Fault(f) = e else { panic!("{e}") };
        assert_eq!(f.kind, FaultKind::OutOfBounds);
        assert!(
            f.detail.contains("%s string of argument 4") && f.detail.contains("0x1234"),
            "{}",
            f.detail
        );
        assert_eq!(f.thread, [1, 0, 0], "the first printing lane");
    }
}

/// `y[i] = __nv_pow(x[i], 1.5) + __nv_exp(x[i])` and `z[i] = __nv_expf((float)x[i])`, against
/// Rust's functions (what the table calls).
const NV: &str = r#"
.extern .func (.param .b64 func_retval0) __nv_pow(.param .b64 a, .param .b64 b);
.extern .func (.param .b64 func_retval0) __nv_exp(.param .b64 a);
.extern .func (.param .b32 func_retval0) __nv_expf(.param .b32 a);
.visible .entry m(.param .u64 m_x, .param .u64 m_y, .param .u64 m_z)
{
	.reg .b32 	%r<3>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<12>;
	.reg .f64 	%fd<6>;
	mov.u32 	%r1, %tid.x;
	ld.param.u64 	%rd1, [m_x];
	mul.wide.u32 	%rd2, %r1, 8;
	add.s64 	%rd3, %rd1, %rd2;
	ld.global.f64 	%fd1, [%rd3];
	{
	.param .b64 param0;
	st.param.f64 	[param0+0], %fd1;
	.param .b64 param1;
	st.param.f64 	[param1+0], 0d3FF8000000000000;
	.param .b64 retval0;
	call.uni (retval0), __nv_pow, (param0, param1);
	ld.param.f64 	%fd2, [retval0+0];
	}
	{
	.param .b64 param0;
	st.param.f64 	[param0+0], %fd1;
	.param .b64 retval0;
	call.uni (retval0), __nv_exp, (param0);
	ld.param.f64 	%fd3, [retval0+0];
	}
	add.f64 	%fd4, %fd2, %fd3;
	ld.param.u64 	%rd4, [m_y];
	add.s64 	%rd5, %rd4, %rd2;
	st.global.f64 	[%rd5], %fd4;
	cvt.rn.f32.f64 	%f1, %fd1;
	{
	.param .b32 param0;
	st.param.f32 	[param0+0], %f1;
	.param .b32 retval0;
	call.uni (retval0), __nv_expf, (param0);
	ld.param.f32 	%f2, [retval0+0];
	}
	ld.param.u64 	%rd6, [m_z];
	mul.wide.u32 	%rd7, %r1, 4;
	add.s64 	%rd8, %rd6, %rd7;
	st.global.f32 	[%rd8], %f2;
	ret;
}
"#;

#[test]
fn libdevice_calls_run_natively() {
    let xs: Vec<f64> = (0..64)
        .map(|i| match i {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -0.0,
            3 => -2.5,
            _ => i as f64 * 0.37 - 1.0,
        })
        .collect();
    for (mode, sets) in RUNS {
        let mut g = gpu(mode, sets);
        let m = g
            .load_module("nv.ptx", &format!("{HEADER}{NV}"))
            .unwrap_or_else(|e| panic!("{e}"));
        let x = g.alloc(64 * 8).unwrap();
        let bytes: Vec<u8> = xs.iter().flat_map(|v| v.to_le_bytes()).collect();
        g.write_bytes(x, &bytes).unwrap();
        let y = g.alloc(64 * 8).unwrap();
        let z = g.alloc(64 * 4).unwrap();
        g.launch(
            m,
            "m",
            Dim3::x(1),
            Dim3::x(64),
            0,
            &[KernelArg::Ptr(x), KernelArg::Ptr(y), KernelArg::Ptr(z)],
        )
        .unwrap();
        let mut yb = vec![0u8; 64 * 8];
        g.read_bytes(y, &mut yb).unwrap();
        let mut zb = vec![0u8; 64 * 4];
        g.read_bytes(z, &mut zb).unwrap();
        for (i, &v) in xs.iter().enumerate() {
            let got = f64::from_le_bytes(yb[i * 8..i * 8 + 8].try_into().unwrap());
            let want = v.powf(1.5) + v.exp();
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "y[{i}] = {got} for x = {v}, want {want} ({mode:?})"
            );
            let got = f32::from_le_bytes(zb[i * 4..i * 4 + 4].try_into().unwrap());
            let want = (v as f32).exp();
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "z[{i}] = {got}, want {want}"
            );
        }
    }
}

#[test]
fn a_builtin_declared_with_another_signature_is_an_error() {
    let src = format!(
        "{HEADER}.extern .func (.param .b32 func_retval0) __nv_exp(.param .b32 a);\n\
         .entry k()\n{{\n\t.reg .b32 %r;\n\t{{\n\t.param .b32 param0;\n\
         \tst.param.b32 [param0+0], 0;\n\t.param .b32 retval0;\n\
         \tcall.uni (retval0), __nv_exp, (param0);\n\tld.param.b32 %r, [retval0+0];\n\t}}\n}}\n"
    );
    let e = parse_module("e.ptx", &src).unwrap_err();
    assert_eq!(e.line, 4, "{e}");
    assert!(
        e.message
            .contains("`__nv_exp` is declared with a signature")
            && e.message.contains("takes .f64"),
        "{e}"
    );
}

/// `out[i] = tex1Dfetch(t, i - 4)` through a `.texref` (its handle both from `mov` and named
/// in the instruction), with 16 floats bound: indices outside [0, 16) read 0.
const TEX: &str = r#"
.global .texref t;
.visible .entry f(.param .u64 f_out)
{
	.reg .b32 	%r<4>;
	.reg .f32 	%f<9>;
	.reg .b64 	%rd<6>;
	mov.u32 	%r1, %tid.x;
	add.s32 	%r2, %r1, -4;
	mov.u64 	%rd1, t;
	tex.1d.v4.f32.s32 	{%f1, %f2, %f3, %f4}, [%rd1, {%r2}];
	tex.1d.v4.f32.s32 	{%f5, %f6, %f7, %f8}, [t, {%r2}];
	add.f32 	%f1, %f1, %f5;
	add.f32 	%f1, %f1, %f2;
	ld.param.u64 	%rd2, [f_out];
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.f32 	[%rd4], %f1;
	ret;
}
"#;

#[test]
fn tex1dfetch_reads_the_bound_linear_memory_and_zero_outside_it() {
    let fmt = TexFormat::from_desc(32, 0, 0, 0, 2).unwrap();
    assert_eq!(fmt.kind, ChannelKind::Float);
    for (mode, sets) in RUNS {
        let mut g = gpu(mode, sets);
        let m = g
            .load_module("tex.ptx", &format!("{HEADER}{TEX}"))
            .unwrap_or_else(|e| panic!("{e}"));
        let data = g.alloc(32 * 4).unwrap();
        let vals: Vec<u8> = (0..32)
            .flat_map(|i| (i as f32 * 0.5 + 1.0).to_le_bytes())
            .collect();
        g.write_bytes(data, &vals).unwrap();
        let out = g.alloc(32 * 4).unwrap();
        // Unbound: a guest fault, not a crash (on a GPU of its own, so that the bound
        // fetches below run on a GPU that has not faulted).
        let mut g2 = gpu(mode, sets);
        let m2 = g2
            .load_module("tex.ptx", &format!("{HEADER}{TEX}"))
            .unwrap();
        let out2 = g2.alloc(32 * 4).unwrap();
        let e = g2
            .launch(m2, "f", Dim3::x(1), Dim3::x(32), 0, &[KernelArg::Ptr(out2)])
            .unwrap_err();
        assert!(e.to_string().contains("no texture is bound"), "{e}");
        let Some((SymbolPlace::Global(h), 8)) = g.symbol(m, "t") else {
            panic!("the texref is an 8-byte global")
        };
        g.bind_texture(h.0, data, 16 * 4, fmt).unwrap();
        g.launch(m, "f", Dim3::x(1), Dim3::x(32), 0, &[KernelArg::Ptr(out)])
            .unwrap();
        let mut ob = vec![0u8; 32 * 4];
        g.read_bytes(out, &mut ob).unwrap();
        for i in 0..32 {
            let got = f32::from_le_bytes(ob[i * 4..i * 4 + 4].try_into().unwrap());
            let x = i as i32 - 4;
            let want = if (0..16).contains(&x) {
                2.0 * (x as f32 * 0.5 + 1.0)
            } else {
                0.0
            };
            assert_eq!(got, want, "out[{i}] ({mode:?})");
        }
        // A binding must lie inside one allocation.
        assert!(g
            .bind_texture(h.0, DevPtr(data.0 + 64), 1 << 20, fmt)
            .is_err());
        assert!(g.unbind_texture(h.0));
    }
}
