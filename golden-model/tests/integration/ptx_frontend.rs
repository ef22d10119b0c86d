//! Hand-written PTX: constructs clang does not emit, error reports, and robustness.

use proptest::prelude::*;
use warpforge_model::ptx::ir::*;
use warpforge_model::ptx::parse_module;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

fn kernel_src(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(\n\t.param .u64 k_p0,\n\t.param .align 8 .b8 k_s[12]\n)\n.maxntid 128, 1, 1\n.minnctapersm 2\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\t.reg .f32 %f<4>;\n\t.reg .f64 %fd1;\n{body}\n}}\n"
    )
}

fn parse_body(body: &str) -> Result<Module, String> {
    parse_module("t.ptx", &kernel_src(body)).map_err(|e| e.to_string())
}

/// Error message of `body`, with the 1-based line *within the body* and column.
fn body_err(body: &str) -> (u32, u32, String) {
    let e = parse_module("t.ptx", &kernel_src(body)).unwrap_err();
    let body_line0 = kernel_src("")
        .lines()
        .position(|l| l.contains("%fd1"))
        .unwrap() as u32
        + 1;
    assert_eq!(e.file, "t.ptx");
    (e.line - body_line0, e.col, e.message)
}

#[test]
fn handwritten_constructs() {
    let m = parse_body(
        "\t// comment\n\t/* block\n comment */\n\t.loc 1 2 3\n\t.pragma \"nounroll\";\n\
         \tmov.u32 %r1, 0x10;\n\
         \tmov.s32 %r2, -7;\n\
         \tmov.f32 %f1, 1.5;\n\
         \tmov.f64 %fd1, 0d4008000000000000;\n\
         \tmov.b32 %r3, 0f3F800000;\n\
         \tld.param.u32 %r4, [k_s+4];\n\
         \tld.global.u32 %r5, [%rd1+-4];\n\
         \tld.global.u32 %r6, [%rd1-8];\n\
         \tsetp.lt.s32 %p1|%p2, %r1, %r2;\n\
         \tsetp.lt.and.s32 %p3, %r1, %r2, %p1;\n\
         \tmov.b64 %rd2, {%r1, %r2};\n\
         \tmov.b64 {%r7, %r8}, %rd2;\n\
         \tatom.global.add.u32 _, [%rd1], 1;\n\
         \tred.global.add.u32 [%rd1], %r1;\n\
         \tmad.lo.s32 %r9, %r1, %r2, %r3;\n\
         \tmad.rn.f32 %f2, %f1, %f1, %f1;\n\
         \tmul.wide.u32 %rd3, %r1, 3;\n\
         \tmad.wide.s32 %rd4, %r1, %r2, -1;\n\
         \tshf.r.clamp.b32 %r10, %r1, %r2, 3;\n\
         \ttestp.notanumber.f32 %p1, %f1;\n\
         \tcopysign.f32 %f3, %f1, %f2;\n\
         \tcnot.b32 %r11, %r1;\n\
         \tld.global.u32 %r12, [8];\n\
         \t{\n\t\t.reg .b32 %t;\n\t\tadd.s32 %t, %r1, 1;\n\t}\n\
         \t@!%p1 bra $L__BB0_2;\n\
         \tbar.sync 1, 64;\n\
         \tmembar.gl;\n\
         $L__BB0_2:\n\
         \texit;",
    )
    .unwrap();
    let k = &m.kernels[0];
    let i = &k.insts;
    assert_eq!(i[0].srcs[0], Operand::Imm(16));
    assert_eq!(i[1].srcs[0], Operand::Imm(-7i64 as u64));
    assert_eq!(i[2].srcs[0], Operand::Imm(1.5f32.to_bits() as u64));
    assert_eq!(i[3].srcs[0], Operand::Imm(3.0f64.to_bits()));
    assert_eq!(i[4].srcs[0], Operand::Imm(0x3F80_0000));
    let ks = m.symbols.iter().position(|s| s.name == "k_s").unwrap() as SymbolId;
    assert_eq!(
        i[5].addr,
        Some(Address {
            base: AddrBase::Symbol(ks),
            offset: 4
        })
    );
    assert_eq!(m.symbols[ks as usize].offset, 8);
    assert_eq!(k.param_bytes, 20);
    assert_eq!(i[6].addr.unwrap().offset, -4);
    assert_eq!(i[7].addr.unwrap().offset, -8);
    assert_eq!(i[8].dsts.len(), 2);
    assert_eq!((i[9].mods.bool_op, i[9].srcs.len()), (Some(BoolOp::And), 3));
    assert_eq!((i[10].dsts.len(), i[10].srcs.len()), (1, 2));
    assert_eq!((i[11].dsts.len(), i[11].srcs.len()), (2, 1));
    assert_eq!(i[12].dsts, vec![Operand::Sink]);
    assert_eq!((i[13].op, i[13].dsts.len()), (Opcode::Red, 0));
    assert_eq!(i[14].mods.mul_mode, Some(MulMode::Lo));
    assert_eq!((i[15].op, i[15].class), (Opcode::Mad, InstClass::Fma));
    assert_eq!(i[16].mods.mul_mode, Some(MulMode::Wide));
    assert_eq!(
        i[17].srcs[2],
        Operand::Imm(u64::MAX),
        "mad.wide.s32 addend is s64"
    );
    assert_eq!((i[18].mods.shf_left, i[18].mods.shf_wrap), (false, false));
    assert_eq!(i[19].mods.testp, 3);
    assert_eq!(i[22].addr.unwrap().base, AddrBase::Absolute);
    let bra = &i[24];
    assert!(bra.guard.unwrap().negate);
    assert_eq!((bra.target, bra.rpc), (Some(27), Some(27)));
    assert_eq!(i[25].srcs, vec![Operand::Imm(1), Operand::Imm(64)]);
    assert_eq!(i[26].op, Opcode::Membar);
    assert_eq!(i[27].op, Opcode::Exit);
    assert_eq!(i.len(), 28);
    assert!(k.regs_per_thread > 0 && k.preds_per_thread > 0);
}

#[test]
fn module_scope_initialisers() {
    let src = format!(
        "{HEADER}.global .align 4 .u32 a[4] = {{1, -2, 0x10}};\n.const .f32 b[2] = {{1.5, 0f40000000}};\n\
         .global .s16 c = -1;\n.global .u8 d[2][2] = {{{{1, 2}}, {{3, 4}}}};\n.global .f64 e[] = {{1, 2}};\n\
         .entry k() {{ ret; }}\n"
    );
    let m = parse_module("i.ptx", &src).unwrap();
    let s = |n: &str| m.symbols.iter().find(|s| s.name == n).unwrap().clone();
    assert_eq!(
        s("a").init,
        [1u32, (-2i32) as u32, 16, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        s("b").init,
        [1.5f32, 2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>()
    );
    assert_eq!((s("c").offset, s("c").init.clone()), (16, vec![0xFF, 0xFF]));
    assert_eq!(
        (s("d").offset, s("d").size, s("d").init.clone()),
        (18, 4, vec![1, 2, 3, 4])
    );
    assert_eq!((s("e").offset, s("e").size), (24, 16));
    assert_eq!(s("e").init[8..], 2.0f64.to_le_bytes());
    assert_eq!((m.global_bytes, m.const_bytes), (40, 8));
    assert_eq!(m.kernels[0].shared_bytes, 0);
}

#[test]
fn error_reports() {
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f1}, [%rd1, {%f1, %f2}];",
            1,
            2,
            "unsupported texture instruction `tex.2d.v4.f32.f32`: the model runs \
             `tex.1d.v4.{f32,s32,u32}.s32` (tex1Dfetch on linear memory)",
        ),
        ("\tadd.s32 %r99, %r1, 1;", 1, 10, "unknown register `%r99`"),
        ("\tbra LBB0_9;", 1, 6, "undefined label `LBB0_9`"),
        (
            "\tadd.s32 %r1, %r1, 1\n\tret;",
            2,
            2,
            "expected `;` after instruction `add.s32`",
        ),
        (
            "\tadd.cc.u32 %r1, %r1, 1;",
            1,
            2,
            "unsupported modifier `.cc` in `add.cc.u32`",
        ),
        ("\tadd %r1, %r1, 1;", 1, 2, "`add` needs 1 type suffix"),
        (
            "\tadd.s32 %r1, %r1;",
            1,
            2,
            "wrong number or kind of operands for `add.s32`",
        ),
        (
            "\tld.global.u32 %r1, %rd1;",
            1,
            21,
            "expected a memory operand",
        ),
        (
            "\tmov.u32 %tid.x, 1;",
            1,
            10,
            "cannot write special register `%tid.x`",
        ),
        ("\tmov.u32 %r1, nosuch;", 1, 15, "unknown symbol `nosuch`"),
        (
            "\t@%r1 bra L;\nL: ret;",
            1,
            2,
            "guard `%r1` is not a predicate register",
        ),
        ("\tL: ret;\nL: ret;", 2, 1, "duplicate label `L`"),
        ("\tcall foo;", 1, 7, "call to undefined function `foo`"),
        ("\tmov.u32 %r1, 1 # 2;", 1, 17, "unexpected character `#`"),
        (
            "\tsetp.eq.and.s32 %p1, %r1, 1, !%p2;",
            1,
            31,
            "negated predicate operand `!%p2` is not supported",
        ),
        (
            "\tmov.u32 %r1, 1.5;",
            1,
            15,
            "float immediate for an integer type",
        ),
    ];
    for (body, line, col, msg) in cases {
        let (l, c, m) = body_err(body);
        assert!(m.contains(msg), "{body:?}: got `{m}`, want `{msg}`");
        assert_eq!((l, c), (*line, *col), "{body:?}: {m}");
    }
    // A device function nobody calls is accepted (and ignored); calls are in ptx_calls.rs.
    parse_module(
        "f.ptx",
        &format!("{HEADER}.visible .func foo()\n{{\nret;\n}}\n.entry k() {{ ret; }}\n"),
    )
    .unwrap();
    // ... but it must still be well-formed.
    let e = parse_module(
        "f.ptx",
        &format!("{HEADER}.visible .func foo()\n{{\nret\n}}\n"),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "f.ptx:7:1: expected an operand, found `}`");
    let e = parse_module("f.ptx", &format!("{HEADER}.entry k() {{ ret;\n")).unwrap_err();
    assert!(e.message.contains("missing `}`"), "{e}");
    let e = parse_module("f.ptx", &format!("{HEADER}.global .u32 x = {{1, 2}};\n")).unwrap_err();
    assert!(e.message.contains("too many initialisers for `x`"), "{e}");
    let e = parse_module(
        "f.ptx",
        &format!("{HEADER}.entry k() {{ ret; }}\n.entry k() {{ ret; }}\n"),
    )
    .unwrap_err();
    assert_eq!((e.line, e.message.as_str()), (5, "duplicate kernel `k`"));
}

const REAL: &[&str] = &[
    include_str!("../ptx-corpus/control.ptx"),
    include_str!("../ptx-corpus/memory.ptx"),
    include_str!("../ptx-corpus/warp.ptx"),
    include_str!("../ptx-corpus/misc.ptx"),
    // Device functions, calls and inline-asm blocks from LLVM's back end.
    include_str!("../../../tests/fixtures/calls.ptx"),
];

const SNIPPETS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "@",
    "!",
    "%r1",
    "%p1",
    "%tid.x",
    "-",
    "+",
    "|",
    "_",
    "0f",
    "0x",
    "99999999999999999999",
    "bra",
    "LBB0_1",
    ":",
    ".reg",
    ".b64",
    ".shared",
    ".entry",
    "ld.global.v4.f32",
    "<",
    ">",
    "=",
    "/*",
    "\"",
    ".func",
    "ret;",
    "call.uni (retval0), _Z5scaleii, (param0, param1);",
    "call _Z4swap4Pair;",
    "(",
    ")",
    ".param .b32 param0;",
    "{ .reg .pred p; @p bra DONE; DONE: }",
    ".version 9.0",
    "setp.lt.s32",
    "1.5e",
    "\n",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
    #[test]
    fn mutated_ptx_never_panics(
        file in 0..REAL.len(),
        cut in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..3, 0..SNIPPETS.len(), 1usize..40), 0..6),
    ) {
        let src = REAL[file];
        let mut s: Vec<char> = src.chars().collect();
        for (pos, kind, snip, len) in edits {
            let p = pos.index(s.len() + 1);
            match kind {
                0 => { s.drain(p..(p + len).min(s.len())); }
                1 => { for (k, c) in SNIPPETS[snip].chars().enumerate() { s.insert(p + k, c); } }
                _ => { if p < s.len() { let c = s[p]; s.insert(p, c); } }
            }
        }
        let n = cut.index(s.len() + 1).max(s.len() / 2);
        let text: String = s[..n].iter().collect();
        // Either outcome is fine; a panic fails the test.
        match parse_module("m.ptx", &text) {
            Ok(m) => { for k in &m.kernels { prop_assert!(!k.insts.is_empty()); } }
            Err(e) => { prop_assert!(e.line >= 1 && e.col >= 1 && !e.message.is_empty()); }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_module("r.ptx", &text);
        let _ = parse_module("r.ptx", &format!("{HEADER}.entry k() {{\n{text}\n}}"));
    }
}
