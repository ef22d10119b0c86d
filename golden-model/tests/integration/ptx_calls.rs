//! Block scopes, register names, device functions and calls (issue #12, item 3: "the PTX the
//! real world emits"). Every kernel runs in the functional model and in the timing model
//! under both reconvergence stacks (SPE, DPE), and every thread's result is checked against
//! a value computed here; error cases check the message and its line.

use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::{Dim3, Host, KernelArg};
use warpforge_model::ptx::ir::{Opcode, Operand};
use warpforge_model::ptx::{parse_module, parse_virtual};

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// The three ways a kernel runs: functional, and timing under each reconvergence stack.
const RUNS: [(Mode, &[&str]); 3] = [
    (Mode::Functional, &[]),
    (Mode::Timing, &[]),
    (Mode::Timing, &["sm.reconvergence=dpe"]),
];

/// Runs kernel `name` of `src` with one block of `threads` threads and one `u32` output per
/// thread (the kernel's only parameter), in every mode of [`RUNS`]; each mode's output must
/// equal `want(tid)`.
fn check(src: &str, name: &str, threads: u32, want: impl Fn(u32) -> u32) {
    let want: Vec<u32> = (0..threads).map(want).collect();
    for (mode, sets) in RUNS {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let mut gpu = Gpu::new(GpuConfig::preset("gtx480", &sets).unwrap(), mode);
        let m = gpu
            .load_module("calls.ptx", src)
            .unwrap_or_else(|e| panic!("{e}"));
        let out = gpu.alloc(threads as u64 * 4).unwrap();
        gpu.launch(
            m,
            name,
            Dim3::x(1),
            Dim3::x(threads),
            0,
            &[KernelArg::Ptr(out)],
        )
        .unwrap_or_else(|e| panic!("{name} ({mode:?} {sets:?}): {e}"));
        let got = gpu.read_u32(out, threads as usize).unwrap();
        assert_eq!(got, want, "{name} ({mode:?} {sets:?})");
    }
}

/// A kernel `name(.param .u64 out)` whose `body` leaves each thread's result in `%res`;
/// `%tid` holds the thread index. `funcs` go before the kernel.
fn kernel(funcs: &str, name: &str, body: &str) -> String {
    format!(
        "{HEADER}{funcs}\n.visible .entry {name}(\n\t.param .u64 {name}_out\n)\n{{\n\
         \t.reg .b32 %tid;\n\t.reg .b32 %res;\n\t.reg .b64 %addr<3>;\n\
         \tmov.u32 %tid, %tid.x;\n\tmov.u32 %res, 0;\n{body}\n\
         \tld.param.u64 %addr0, [{name}_out];\n\tcvta.to.global.u64 %addr0, %addr0;\n\
         \tmul.wide.u32 %addr1, %tid, 4;\n\tadd.s64 %addr2, %addr0, %addr1;\n\
         \tst.global.u32 [%addr2], %res;\n\tret;\n}}\n"
    )
}

fn parse_err(src: &str) -> (u32, String) {
    let e = parse_module("e.ptx", src).unwrap_err();
    assert_eq!(e.file, "e.ptx");
    assert!(e.col >= 1);
    (e.line, e.message)
}

/// The 1-based line of the first line of `src` containing `needle`.
fn line_of(src: &str, needle: &str) -> u32 {
    src.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

#[test]
fn an_inner_register_shadows_the_outer_one_for_its_block() {
    // An inner single register shadowing a member of an outer range (`%v1` of `%v<4>`):
    // the front end used to merge the two, and the outer `%v1` read the inner block's value
    // (4t + 1 instead of 2t + 6), silently.
    let body = "\t.reg .b32 %v<4>;\n\tmov.u32 %v1, 5;\n\t{\n\t\t.reg .b32 %v1;\n\
                \t\tmul.lo.u32 %v1, %tid, 2;\n\t\tadd.u32 %v2, %v1, 1;\n\t}\n\
                \tadd.u32 %res, %v1, %v2;";
    check(&kernel("", "shadow_range", body), "shadow_range", 64, |t| {
        5 + 2 * t + 1
    });
    // A single register shadowing a single register (this used to be refused as a duplicate).
    // Merged with the outer `%t`, the inner block's write would reach the final add:
    // 4 * (tid + 7) instead of 3 * (tid + 7) + 100.
    let body = "\t.reg .b32 %t;\n\t.reg .b32 %r2;\n\tmov.u32 %t, 100;\n\
                \t{\n\t\t.reg .b32 %t;\n\t\tadd.u32 %t, %tid, 7;\n\t\tmul.lo.u32 %r2, %t, 3;\n\t}\n\
                \tadd.u32 %res, %r2, %t;";
    let src = kernel("", "shadow", body);
    check(&src, "shadow", 64, |t| 3 * (t + 7) + 100);
    // The lowered program has two registers named `%t`, written by different instructions.
    let lowered = parse_virtual("s.ptx", &src).unwrap();
    let vk = &lowered.kernels[0];
    let ts: Vec<usize> = (0..vk.vregs.len())
        .filter(|&v| vk.vregs[v].name == "%t")
        .collect();
    assert_eq!(ts.len(), 2, "{:?}", vk.vregs);
    let writes = |v: usize| {
        vk.kernel
            .insts
            .iter()
            .filter(|i| i.dsts.contains(&Operand::Reg(v as u16)))
            .count()
    };
    assert_eq!((writes(ts[0]), writes(ts[1])), (1, 1));
}

#[test]
fn sibling_blocks_reuse_register_and_label_names() {
    // The inline-asm idiom: each helper is a `{ }` block with its own predicate, register and
    // `DONE` label (names without `%`), pasted twice; the branches diverge.
    let helper = |cmp: &str, a: u32, b: u32, add: u32| {
        format!(
            "\t{{\n\t\t.reg .pred P1;\n\t\t.reg .b32 x;\n\t\tsetp.{cmp}.u32 P1, %tid, 16;\n\
             \t\tselp.u32 x, {a}, {b}, P1;\n\t\t@P1 bra DONE;\n\t\tadd.u32 x, x, {add};\n\
             DONE:\n\t\tadd.u32 %res, %res, x;\n\t}}\n"
        )
    };
    let body = format!(
        "{}{}\t{{\n\t\t.reg .b32 $acc;\n\t\t.reg .b64 $wide<2>;\n\t\tmov.u32 $acc, 1000;\n\
         \t\tcvt.u64.u32 $wide1, $acc;\n\t\tbra.uni $L__skip;\n\t\tmov.u32 $acc, 0;\n\
         $L__skip:\n\t\tcvt.u32.u64 $acc, $wide1;\n\t\tadd.u32 %res, %res, $acc;\n\t}}",
        helper("lt", 1, 2, 10),
        helper("ge", 100, 200, 20),
    );
    let src = kernel("", "siblings", &body);
    check(&src, "siblings", 64, |t| {
        let first = if t < 16 { 1 } else { 2 + 10 };
        let second = if t >= 16 { 100 } else { 200 + 20 };
        first + second + 1000
    });
}

#[test]
fn register_scoping_errors_name_the_place() {
    // Two declarations in one block are still duplicates; a block's register is not visible
    // after the block; a label of a sibling block is not reachable when ambiguous.
    let dup = kernel("", "k", "\t{\n\t.reg .b32 x;\n\t.reg .b32 x;\n\t}");
    let (line, msg) = parse_err(&dup);
    assert_eq!(line, line_of(&dup, ".reg .b32 x;") + 1, "{msg}");
    assert!(
        msg.contains("duplicate or reserved register name `x`"),
        "{msg}"
    );
    let gone = kernel("", "k", "\t{\n\t.reg .b32 x;\n\t}\n\tmov.u32 %res, x;");
    let (line, msg) = parse_err(&gone);
    assert_eq!(line, line_of(&gone, "mov.u32 %res, x;"), "{msg}");
    assert!(msg.contains("unknown symbol `x`"), "{msg}");
    let two = kernel("", "k", "\tbra.uni L;\n\t{\nL:\n\t}\n\t{\nL:\n\t}");
    let (line, msg) = parse_err(&two);
    assert_eq!(line, line_of(&two, "bra.uni L;"), "{msg}");
    assert!(
        msg.contains("label `L` is declared in several blocks"),
        "{msg}"
    );
    // One such label is found (a jump into a block).
    let into = kernel(
        "",
        "into",
        "\tbra.uni IN;\n\tmov.u32 %res, 5;\n\t{\nIN:\n\tadd.u32 %res, %res, 9;\n\t}",
    );
    check(&into, "into", 32, |_| 9);
    // Identifiers follow the ISA: `1x` is not one, and neither is a lone `$`.
    for bad in [".reg .b32 1x;", ".reg .b32 $;", ".reg .b32 a.b;"] {
        let e = parse_module("e.ptx", &kernel("", "k", &format!("\t{bad}"))).unwrap_err();
        assert!(
            e.message.contains("malformed number `1x`") || e.message.contains("not a valid"),
            "{bad}: {e}"
        );
    }
}

/// A device function in clang's form: `scale(a, b)` = `a * b`, or `a - b` when `a > 20`
/// (an early `ret` in a branch), or `b` when `a == 7` (a guarded `ret`).
const SCALE: &str = r#"
.visible .func  (.param .b32 func_retval0) _Z5scaleii(
	.param .b32 _Z5scaleii_param_0,
	.param .b32 _Z5scaleii_param_1
)
;
.visible .func  (.param .b32 func_retval0) _Z5scaleii(
	.param .b32 _Z5scaleii_param_0,
	.param .b32 _Z5scaleii_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<6>;

	ld.param.u32 	%r1, [_Z5scaleii_param_0];
	ld.param.u32 	%r2, [_Z5scaleii_param_1];
	st.param.b32 	[func_retval0+0], %r2;
	setp.eq.s32 	%p2, %r1, 7;
	@%p2 ret;
	setp.gt.s32 	%p1, %r1, 20;
	@%p1 bra 	$L__BB0_2;
	mul.lo.s32 	%r3, %r1, %r2;
	st.param.b32 	[func_retval0+0], %r3;
	ret;
$L__BB0_2:
	sub.s32 	%r4, %r1, %r2;
	st.param.b32 	[func_retval0+0], %r4;
	ret;
}
"#;

fn scale(a: u32, b: u32) -> u32 {
    if a == 7 {
        b
    } else if a as i32 > 20 {
        a.wrapping_sub(b)
    } else {
        a.wrapping_mul(b)
    }
}

/// A call of `_Z5scaleii(a, b)` into `%res` in clang's call sequence, under `guard` (the
/// result is read under it too).
fn call_scale(a: &str, b: &str, guard: &str) -> String {
    format!(
        "\t{{ // callseq\n\t.reg .b32 temp_param_reg;\n\t.param .b32 param0;\n\
         \tst.param.b32 \t[param0+0], {a};\n\t.param .b32 param1;\n\tst.param.b32 \t[param1+0], {b};\n\
         \t.param .b32 retval0;\n\t{guard}call.uni (retval0), \n\t_Z5scaleii, \n\t(\n\tparam0, \n\tparam1\n\t);\n\
         \t{guard}ld.param.b32 \t%res, [retval0+0];\n\t}} // callseq\n"
    )
}

#[test]
fn device_function_called_from_divergent_control_flow() {
    // Threads divide three ways: tid % 3 == 0 skips the call, == 1 calls scale(tid, 2) and
    // == 2 calls scale(tid, 5) at another call site; inside, `tid > 20` and `tid == 7` take
    // the early returns. The guarded call at the end runs for odd threads only.
    let body = format!(
        "\t.reg .pred %q<4>;\n\t.reg .b32 %m;\n\trem.u32 %m, %tid, 3;\n\
         \tsetp.eq.u32 %q1, %m, 0;\n\t@%q1 bra SKIP;\n\tsetp.eq.u32 %q2, %m, 1;\n\
         \t@%q2 bra ONE;\n{}\tbra.uni JOIN;\nONE:\n{}\tbra.uni JOIN;\nSKIP:\n\
         \tmov.u32 %res, 999;\nJOIN:\n\tand.b32 %m, %tid, 1;\n\tsetp.eq.u32 %q3, %m, 1;\n{}",
        call_scale("%tid", "5", ""),
        call_scale("%tid", "2", ""),
        call_scale("%res", "3", "@%q3 "),
    );
    let src = kernel(SCALE, "divergent", &body);
    check(&src, "divergent", 64, |t| {
        let r = match t % 3 {
            0 => 999,
            1 => scale(t, 2),
            _ => scale(t, 5),
        };
        if t & 1 == 1 {
            scale(r, 3)
        } else {
            r
        }
    });
    // Every inlined `ret` became a branch; the function's last `ret` falls through.
    let m = parse_module("d.ptx", &src).unwrap();
    let k = &m.kernels[0];
    assert_eq!(k.insts.iter().filter(|i| i.op == Opcode::Ret).count(), 1);
    // Three inlined copies (runs of instructions located in the function's text), each with
    // its own `$L__BB0_2`: every branch of a copy targets that copy or its end, and
    // reconverges at the copy's end (the first instruction after it), which is where the
    // early returns meet the fall-through path.
    let body_lines =
        line_of(&src, "[_Z5scaleii_param_0]")..=line_of(&src, "[func_retval0+0], %r4;");
    let in_func = |pc: usize| body_lines.contains(&k.insts[pc].loc.line);
    let mut copies = Vec::new();
    let mut pc = 0;
    while pc < k.insts.len() {
        if in_func(pc) {
            let start = pc;
            while in_func(pc) {
                pc += 1;
            }
            copies.push(start..pc);
        }
        pc += 1;
    }
    assert_eq!(copies.len(), 3, "{copies:?}");
    for copy in copies {
        let end = copy.end as u32;
        let branches: Vec<_> = copy
            .clone()
            .filter(|&pc| k.insts[pc].op == Opcode::Bra)
            .map(|pc| (k.insts[pc].target.unwrap(), k.insts[pc].rpc.unwrap()))
            .collect();
        assert_eq!(branches.len(), 3, "{copy:?}");
        for (target, rpc) in branches {
            assert!((copy.start as u32..=end).contains(&target), "{copy:?}");
            assert_eq!(rpc, end, "{copy:?}");
        }
    }
}

#[test]
fn nested_calls_with_local_arrays_and_old_style_register_parameters() {
    // outer(x) = inner(x) + inner(x + 1) + add3(x, 7); inner(v) sums a `.local` array it
    // fills with v, v+1, .., v+3 (a loop); add3 takes `.reg` parameters (the pre-ABI form)
    // and is passed an immediate.
    let funcs = r#"
.func (.reg .b32 rv) add3 (.reg .b32 a, .reg .b32 b)
{
	add.u32 rv, a, b;
	add.u32 rv, rv, 3;
	ret;
}
.func  (.param .b32 func_retval0) inner(
	.param .b32 inner_param_0
)
{
	.local .align 16 .b8 	__local_depot1[16];
	.reg .b64 	%SP;
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;

	mov.u64 	%SP, __local_depot1;
	ld.param.u32 	%r1, [inner_param_0];
	mov.u32 	%r2, 0;
$L__loop:
	add.u32 	%r3, %r1, %r2;
	mul.wide.u32 	%rd1, %r2, 4;
	add.s64 	%rd2, %SP, %rd1;
	st.local.u32 	[%rd2], %r3;
	add.u32 	%r2, %r2, 1;
	setp.lt.u32 	%p1, %r2, 4;
	@%p1 bra 	$L__loop;
	ld.local.v4.u32 	{%r4, %r5, %r6, %r7}, [%SP];
	add.u32 	%r4, %r4, %r5;
	add.u32 	%r4, %r4, %r6;
	add.u32 	%r4, %r4, %r7;
	st.param.b32 	[func_retval0+0], %r4;
	ret;
}
.func  (.param .b32 func_retval0) outer(
	.param .b32 outer_param_0
)
{
	.reg .b32 	%r<8>;

	ld.param.u32 	%r1, [outer_param_0];
	{
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), inner, (param0);
	ld.param.b32 	%r2, [retval0+0];
	}
	add.u32 	%r3, %r1, 1;
	{
	.param .b32 param0;
	st.param.b32 	[param0+0], %r3;
	.param .b32 retval0;
	call.uni (retval0), inner, (param0);
	ld.param.b32 	%r4, [retval0+0];
	}
	call.uni (%r5), add3, (%r1, 7);
	add.u32 	%r6, %r2, %r4;
	add.u32 	%r6, %r6, %r5;
	st.param.b32 	[func_retval0+0], %r6;
	ret;
}
"#;
    let body = "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %tid;\n\
                \t.param .b32 retval0;\n\tcall.uni (retval0), outer, (param0);\n\
                \tld.param.b32 %res, [retval0+0];\n\t}";
    let src = kernel(funcs, "nested", body);
    let inner = |v: u32| 4 * v + 6;
    check(&src, "nested", 96, |t| {
        inner(t) + inner(t + 1) + (t + 7 + 3)
    });
    // The two calls of `inner` reuse one 16-byte stack slot: the frame is one level deep.
    let m = parse_module("n.ptx", &src).unwrap();
    assert_eq!(m.kernels[0].local_bytes, 16);
}

#[test]
fn aggregates_by_value_go_through_the_local_frame() {
    // struct { float x, y; } swap(struct p) by value in and out, as clang passes it.
    let funcs = r#"
.func  (.param .align 8 .b8 func_retval0[8]) swap(
	.param .align 8 .b8 swap_param_0[8]
)
{
	.reg .f32 	%f<3>;

	ld.param.v2.f32 	{%f1, %f2}, [swap_param_0];
	st.param.f32 	[func_retval0+0], %f2;
	st.param.f32 	[func_retval0+4], %f1;
	ret;
}
"#;
    let body = "\t.reg .f32 %f<5>;\n\tcvt.rn.f32.u32 %f1, %tid;\n\tadd.f32 %f2, %f1, 0f3F000000;\n\
                \t{\n\t.param .align 8 .b8 param0[8];\n\tst.param.v2.f32 [param0+0], {%f1, %f2};\n\
                \t.param .align 8 .b8 retval0[8];\n\tcall.uni (retval0), swap, (param0);\n\
                \tld.param.f32 %f3, [retval0+0];\n\tld.param.f32 %f4, [retval0+4];\n\t}\n\
                \tmul.f32 %f3, %f3, 0f41200000;\n\tadd.f32 %f3, %f3, %f4;\n\
                \tcvt.rzi.u32.f32 %res, %f3;";
    let src = kernel(funcs, "aggr", body);
    // (tid + 0.5) * 10 + tid
    check(&src, "aggr", 64, |t| 11 * t + 5);
}

#[test]
fn uncalled_and_external_functions_are_accepted() {
    // clang emits non-static `__device__` functions as `.visible .func` whether or not they
    // are called, and declares the externals it could call; none of that stops a kernel.
    let funcs = r#"
.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.visible .func _Z6unusedv()
{
	.reg .b32 	%r<2>;
	tex.2d.v4.f32.f32 	{%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];
	prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
	call.uni 	_Z6unusedv, 
	(
	);
	ret;
}
.weak .func _Z5weakfv() .noreturn;
"#;
    let src = kernel(funcs, "plain", "\tadd.u32 %res, %tid, 1;");
    check(&src, "plain", 32, |t| t + 1);
}

#[test]
fn a_call_without_arguments_or_result_and_a_guarded_call() {
    // `bump()` takes nothing and returns nothing; it writes a module-scope `.global` counter
    // (one per module however many copies are inlined) with an atomic.
    let funcs = r#"
.global .align 4 .u32 counter;
.func bump()
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<2>;
	mov.u64 	%rd1, counter;
	atom.global.add.u32 	%r1, [%rd1], 1;
}
"#;
    let body = "\t.reg .pred %q;\n\t.reg .b64 %c;\n\tsetp.lt.u32 %q, %tid, 10;\n\
                \t@%q call.uni bump, ();\n\tcall bump;\n\tbar.sync 0;\n\
                \tmov.u64 %c, counter;\n\tld.global.u32 %res, [%c];";
    let src = kernel(funcs, "bumps", body);
    check(&src, "bumps", 64, |_| 64 + 10);
}

#[test]
fn recursion_and_missing_functions_are_clear_errors() {
    let rec = format!(
        "{HEADER}.func f(.param .b32 a)\n{{\n\t.reg .b32 %r;\n\tld.param.u32 %r, [a];\n\
         \t{{\n\t.param .b32 p;\n\tst.param.b32 [p], %r;\n\tcall g, (p);\n\t}}\n}}\n\
         .func g(.param .b32 a)\n{{\n\t.reg .b32 %r;\n\tld.param.u32 %r, [a];\n\
         \t{{\n\t.param .b32 p;\n\tst.param.b32 [p], %r;\n\tcall f, (p);\n\t}}\n}}\n\
         .entry k()\n{{\n\t{{\n\t.param .b32 p;\n\tst.param.b32 [p], 1;\n\tcall f, (p);\n\t}}\n}}\n"
    );
    let (line, msg) = parse_err(&rec);
    assert_eq!(line, line_of(&rec, "call f, (p);"), "{msg}");
    assert!(
        msg.contains("recursive call to `f` (f -> g -> f)") && msg.contains("recursion"),
        "{msg}"
    );
    let self_rec = format!("{HEADER}.func f()\n{{\n\tcall f;\n}}\n.entry k()\n{{\n\tcall f;\n}}\n");
    let (line, msg) = parse_err(&self_rec);
    assert_eq!(line, 6, "{msg}");
    assert!(msg.contains("recursive call to `f` (f -> f)"), "{msg}");
    // A recursive function nobody calls is fine.
    parse_module(
        "r.ptx",
        &format!("{HEADER}.func f()\n{{\n\tcall f;\n}}\n.entry k()\n{{\n\tret;\n}}\n"),
    )
    .unwrap();
    // A function declared but defined nowhere: an error unless the model provides it
    // (`vprintf`, libdevice's `__nv_*`; see tests/integration/ptx_builtins.rs).
    for (func, why) in [
        (
            "mylib_fn",
            "calls into other modules or libraries are not supported",
        ),
        (
            "__nv_nosuchf",
            "a libdevice function the model does not provide",
        ),
    ] {
        let ext = format!(
            "{HEADER}.extern .func (.param .b32 func_retval0) {func}\n(\n\t.param .b64 p0,\n\
             \t.param .b64 p1\n)\n;\n.entry k()\n{{\n\t.reg .b32 %r;\n\t{{\n\
             \t.param .b64 param0;\n\tst.param.b64 [param0+0], 0;\n\t.param .b64 param1;\n\
             \tst.param.b64 [param1+0], 0;\n\t.param .b32 retval0;\n\
             \tcall.uni (retval0), {func}, (param0, param1);\n\tld.param.b32 %r, [retval0+0];\n\t}}\n}}\n"
        );
        let e = parse_module("e.ptx", &ext).unwrap_err();
        let call = format!("call.uni (retval0), {func}");
        assert_eq!(e.line, line_of(&ext, &call), "{e}");
        let text = ext.lines().nth(e.line as usize - 1).unwrap();
        assert_eq!(e.col as usize, text.find(func).unwrap() + 1, "{e}");
        assert!(
            e.message.contains(&format!("call to `{func}`"))
                && e.message.contains("declares (line 4) but does not define")
                && e.message.contains(why),
            "{e}"
        );
    }
    let cases: &[(&str, &str)] = &[
        ("\tcall nosuch;", "call to undefined function `nosuch`"),
        (
            "\tcall k;",
            "`k` is a kernel (`.entry`) and cannot be called",
        ),
        (
            "\tcall two, (1);",
            "`two` takes 2 argument(s) but the call passes 1",
        ),
        (
            "\tcall two, (1, 2);",
            "`two` returns 1 value(s) but the call receives 0",
        ),
        (
            "\t.reg .b64 %w;\n\tcall (%w), two, (1, 2);",
            "a `.b64` value for the `.b32` parameter `r` of `two`",
        ),
        ("\tcall (%r), two, (1, nosuch);", "unknown symbol `nosuch`"),
        (
            "\t.reg .b64 %fp;\n\tcall (%r), %fp, (1, 2);",
            "indirect calls (through a function pointer) are not supported",
        ),
        (
            "\tcall (%r), two, (1, 2), proto;",
            "indirect calls (through a function pointer, with `.callprototype`)",
        ),
        ("\tmov.u32 %r, two_a;", "unknown symbol `two_a`"),
    ];
    for (body, want) in cases {
        let src = format!(
            "{HEADER}.func (.param .b32 r) two(.param .b32 two_a, .param .b32 two_b)\n{{\n\
             \tst.param.b32 [r], 0;\n}}\n.entry k()\n{{\n\t.reg .b32 %r;\n{body}\n}}\n"
        );
        let e = parse_module("c.ptx", &src).unwrap_err();
        assert!(e.message.contains(want), "{body}: got `{e}`, want `{want}`");
        let last = body.lines().last().unwrap();
        assert_eq!(e.line, line_of(&src, last), "{body}: {e}");
    }
    // A call parameter is read with `ld.param`, whole.
    let misuse = [
        (
            "\tmov.u32 %r, p;",
            "call parameter `p` is read with `ld.param`",
        ),
        (
            "\tld.param.u64 %w, [p];",
            "8-byte access to the 4-byte call parameter `p`",
        ),
        ("\tld.param.u16 %h, [p+2];", "accessed whole, at offset 0"),
        (
            "\tld.global.u32 %r, [p];",
            "can only be accessed with `ld.param` and `st.param`",
        ),
    ];
    for (body, want) in misuse {
        let src = format!(
            "{HEADER}.entry k()\n{{\n\t.reg .b32 %r;\n\t.reg .b64 %w;\n\t.reg .b16 %h;\n\
             \t.param .b32 p;\n{body}\n}}\n"
        );
        let e = parse_module("c.ptx", &src).unwrap_err();
        assert!(e.message.contains(want), "{body}: got `{e}`, want `{want}`");
        assert_eq!(e.line, line_of(&src, body.trim()), "{body}: {e}");
    }
}

#[test]
fn declarations_must_agree_and_functions_are_defined_once() {
    let dup = format!("{HEADER}.func f()\n{{\n\tret;\n}}\n.func f()\n{{\n\tret;\n}}\n");
    let (line, msg) = parse_err(&dup);
    assert_eq!(line, 8);
    assert!(
        msg.contains("duplicate function `f` (also defined at line 4)"),
        "{msg}"
    );
    let mismatch =
        format!("{HEADER}.func f(.param .b32 a);\n.func f(.param .b64 a)\n{{\n\tret;\n}}\n");
    let (line, msg) = parse_err(&mismatch);
    assert_eq!(line, 5);
    assert!(
        msg.contains("does not match its declaration at line 4"),
        "{msg}"
    );
    let both = format!("{HEADER}.func k();\n.entry k()\n{{\n\tret;\n}}\n");
    assert!(parse_err(&both)
        .1
        .contains("both as a kernel and as a function"));
    let ext_body = format!("{HEADER}.extern .func f()\n{{\n\tret;\n}}\n");
    assert!(parse_err(&ext_body)
        .1
        .contains("`.extern` function `f` may not have a body"));
}

#[test]
fn ptx_versions_beyond_the_front_end_are_refused() {
    for ok in ["6.0", "7.8", "8.5"] {
        parse_module(
            "v.ptx",
            &format!(".version {ok}\n.target sm_70\n.entry k() {{ ret; }}\n"),
        )
        .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let e = parse_module(
        "v.ptx",
        "// new\n.version 9.0\n.target sm_100\n.entry k() { ret; }\n",
    )
    .unwrap_err();
    assert_eq!((e.line, e.col), (2, 10), "{e}");
    assert!(
        e.message.contains("unsupported `.version 9.0`") && e.message.contains("up to 8.5"),
        "{e}"
    );
    let e = parse_module("v.ptx", ".version 8.10\n.entry k() { ret; }\n").unwrap_err();
    assert!(e.message.contains("`.version 8.10`"), "{e}");
    let e = parse_module("v.ptx", ".version seven\n.entry k() { ret; }\n").unwrap_err();
    assert!(
        e.message.contains("expected a version `MAJOR.MINOR`"),
        "{e}"
    );
    let e = parse_module("v.ptx", ".version 7\n.entry k() { ret; }\n").unwrap_err();
    assert!(e.message.contains("malformed `.version` number `7`"), "{e}");
}

#[test]
fn inputs_are_read_only_and_inlining_is_bounded() {
    let src = format!(
        "{HEADER}.func f(.param .b32 a)\n{{\n\tst.param.b32 [a], 1;\n}}\n.entry k()\n{{\n\
         \t.reg .b32 %r;\n\tcall f, (%r);\n}}\n"
    );
    let (line, msg) = parse_err(&src);
    assert_eq!(line, 6, "{msg}");
    assert!(msg.contains("`a` is an input parameter"), "{msg}");
    // f0 calls f1 twice, f1 calls f2 twice, ...: 2^24 copies of the last one.
    let mut src = String::from(HEADER);
    for i in 0..24 {
        src += &format!(
            ".func f{i}()\n{{\n\tcall f{};\n\tcall f{};\n}}\n",
            i + 1,
            i + 1
        );
    }
    src += ".func f24()\n{\n\tmembar.gl;\n}\n.entry k()\n{\n\tcall f0;\n}\n";
    let started = std::time::Instant::now();
    let (line, msg) = parse_err(&src);
    assert_eq!(line, line_of(&src, ".entry k()"), "{msg}");
    assert!(
        msg.contains("the device-function calls of kernel `k` add more than 1048576"),
        "{msg}"
    );
    eprintln!("inlining stopped after {:?}", started.elapsed());
}
