//! Tests of [`execute`] on hand-built IR (the parser is developed separately).

use super::*;
use crate::address_map::{GLOBAL_BASE, LOCAL_WINDOW, SHARED_WINDOW};
use crate::error::FaultKind;
use crate::host::Dim3;
use crate::ptx::ir::*;
use proptest::prelude::*;
use std::collections::HashMap;

const ALL: u32 = u32::MAX;

// ------------------------------------------------------------------ builder

fn r(n: u16) -> Operand {
    Operand::Reg(n)
}
fn imm(v: u64) -> Operand {
    Operand::Imm(v)
}

/// Fluent instruction builder.
#[derive(Clone)]
struct I(Instruction);

fn ins(op: Opcode, ty: ScalarType) -> I {
    I(Instruction {
        guard: None,
        op,
        ty,
        ty2: None,
        mods: Modifiers {
            vec: 1,
            ..Default::default()
        },
        dsts: vec![],
        srcs: vec![],
        addr: None,
        target: None,
        rpc: None,
        class: InstClass::Alu,
        loc: SrcLoc { line: 42, col: 5 },
    })
}

impl I {
    fn d(mut self, o: Operand) -> I {
        self.0.dsts.push(o);
        self
    }
    fn s(mut self, o: Operand) -> I {
        self.0.srcs.push(o);
        self
    }
    fn ty2(mut self, t: ScalarType) -> I {
        self.0.ty2 = Some(t);
        self
    }
    fn m(mut self, f: impl FnOnce(&mut Modifiers)) -> I {
        f(&mut self.0.mods);
        self
    }
    fn space(self, s: StateSpace) -> I {
        self.m(|m| m.space = Some(s))
    }
    fn at(mut self, base: AddrBase, offset: i64) -> I {
        self.0.addr = Some(Address { base, offset });
        self
    }
    fn guard(mut self, reg: u16, negate: bool) -> I {
        self.0.guard = Some(Guard { reg, negate });
        self
    }
}

/// A one-CTA, one-warp machine: 64 registers, 256 B shared, 64 B local per thread,
/// a 32-byte param buffer, a 16-byte const bank, and a module `.global` image.
struct T {
    module: Module,
    launch: LaunchInfo,
    global: GlobalMemory,
    cta: CtaState,
    warp: WarpState,
    buf: DevPtr,
}

use crate::host::DevPtr;

impl T {
    fn new() -> T {
        T::with_block(32)
    }

    fn with_block(threads: u32) -> T {
        let symbols = vec![
            Symbol {
                name: "p0".into(),
                space: StateSpace::Param,
                offset: 8,
                size: 8,
                align: 8,
                ty: None,
                init: vec![],
            },
            Symbol {
                name: "sbuf".into(),
                space: StateSpace::Shared,
                offset: 128,
                size: 128,
                align: 16,
                ty: None,
                init: vec![],
            },
            Symbol {
                name: "gvar".into(),
                space: StateSpace::Global,
                offset: 16,
                size: 16,
                align: 4,
                ty: None,
                init: vec![],
            },
            Symbol {
                name: "cvar".into(),
                space: StateSpace::Const,
                offset: 4,
                size: 4,
                align: 4,
                ty: None,
                init: vec![],
            },
            Symbol {
                name: "lvar".into(),
                space: StateSpace::Local,
                offset: 8,
                size: 8,
                align: 8,
                ty: None,
                init: vec![],
            },
        ];
        let kernel = Kernel {
            name: "k".into(),
            params: vec![0],
            param_bytes: 32,
            insts: vec![],
            num_regs: 64,
            regs_per_thread: 64,
            preds_per_thread: 0,
            shared_bytes: 256,
            local_bytes: 64,
            loc: SrcLoc::default(),
        };
        let module = Module {
            file: "t.ptx".into(),
            kernels: vec![kernel],
            symbols,
            global_bytes: 64,
            const_bytes: 16,
            kernel_index: HashMap::from([("k".to_string(), 0)]),
        };
        let mut global = GlobalMemory::new();
        let image = global.alloc_init(64, &[]).unwrap();
        let buf = global.alloc(1024);
        let mut params = vec![0u8; 32];
        params[8..16].copy_from_slice(&buf.0.to_le_bytes());
        params[0..4].copy_from_slice(&0xdead_beefu32.to_le_bytes());
        let mut consts = vec![0u8; 16];
        consts[4..8].copy_from_slice(&(-7i32).to_le_bytes());
        let launch = LaunchInfo {
            grid: Dim3::x(4),
            block: Dim3::x(threads),
            params,
            consts,
            global_base: image.0,
            shared_bytes: 256,
            local_bytes: 64,
            warps_per_cta: threads.div_ceil(32),
        };
        let cta = CtaState::new(&launch, 2);
        let warp = WarpState::new(&module.kernels[0], &launch, &cta, 0);
        T {
            module,
            launch,
            global,
            cta,
            warp,
            buf,
        }
    }

    fn run_mask(&mut self, i: &I, active: u32) -> Result<StepResult, GuestFault> {
        self.module.kernels[0].insts = vec![i.0.clone()];
        let mut env = ExecEnv {
            module: &self.module,
            kernel: &self.module.kernels[0],
            launch: &self.launch,
            global: &mut self.global,
            sm_id: 3,
            num_sms: 15,
            cycle: 0x1_2345_6789,
        };
        execute(0, active, &mut self.warp, &mut self.cta, &mut env)
    }

    fn run(&mut self, i: I) -> StepResult {
        self.run_mask(&i, ALL).expect("no fault")
    }

    fn set(&mut self, reg: u16, f: impl Fn(usize) -> u64) {
        for l in 0..32 {
            self.warp.set_reg(reg, l, f(l));
        }
    }
    fn get(&self, reg: u16, lane: usize) -> u64 {
        self.warp.reg(reg, lane)
    }

    /// Run a one-source instruction on lane 0 with a value and return the result.
    fn un(&mut self, i: I, a: u64) -> u64 {
        self.set(1, |_| a);
        self.run(i.d(r(0)).s(r(1)));
        self.get(0, 0)
    }
    fn bin(&mut self, i: I, a: u64, b: u64) -> u64 {
        self.set(1, |_| a);
        self.set(2, |_| b);
        self.run(i.d(r(0)).s(r(1)).s(r(2)));
        self.get(0, 0)
    }
    fn tern(&mut self, i: I, a: u64, b: u64, c: u64) -> u64 {
        self.set(1, |_| a);
        self.set(2, |_| b);
        self.set(3, |_| c);
        self.run(i.d(r(0)).s(r(1)).s(r(2)).s(r(3)));
        self.get(0, 0)
    }
}

fn f(x: f32) -> u64 {
    x.to_bits() as u64
}
fn ff(v: u64) -> f32 {
    f32::from_bits(v as u32)
}
fn d(x: f64) -> u64 {
    x.to_bits()
}

use Opcode::*;
use ScalarType::*;

// ------------------------------------------------------------------ integer

#[test]
fn shifts_past_width_via_execute() {
    let mut t = T::new();
    assert_eq!(t.bin(ins(Shl, B32), 1, 32) as u32, 0);
    assert_eq!(t.bin(ins(Shl, B32), 1, 31) as u32, 0x8000_0000);
    assert_eq!(t.bin(ins(Shl, B64), 1, 64), 0);
    assert_eq!(t.bin(ins(Shr, U32), 0x8000_0000, 99) as u32, 0);
    assert_eq!(t.bin(ins(Shr, S32), 0x8000_0000, 99) as u32, 0xffff_ffff);
    assert_eq!(t.bin(ins(Shr, S32), 0x8000_0000, 4) as u32, 0xf800_0000);
    assert_eq!(t.bin(ins(Shr, S64), 1 << 63, 200), u64::MAX);
    // the shift amount is a full u32: 2^32 + 1 is not 1
    assert_eq!(t.bin(ins(Shl, B32), 1, 0xffff_ffff), 0);
    assert_eq!(t.bin(ins(Shr, S16), 0x8000, 17) as u16, 0xffff);
}

#[test]
fn division_by_zero_and_overflow() {
    let mut t = T::new();
    assert_eq!(t.bin(ins(Div, U32), 10, 0) as u32, 0xffff_ffff);
    assert_eq!(t.bin(ins(Rem, U32), 10, 0) as u32, 10);
    assert_eq!(t.bin(ins(Div, S32), 10, 0) as u32, 0xffff_ffff);
    assert_eq!(
        t.bin(ins(Div, S32), 0x8000_0000, 0xffff_ffff) as u32,
        0x8000_0000
    );
    assert_eq!(t.bin(ins(Rem, S32), 0x8000_0000, 0xffff_ffff) as u32, 0);
    assert_eq!(t.bin(ins(Div, S32), (-7i32) as u32 as u64, 2) as i32, -3);
    assert_eq!(t.bin(ins(Rem, S32), (-7i32) as u32 as u64, 2) as i32, -1);
    assert_eq!(t.bin(ins(Div, U64), 10, 0), u64::MAX);
    assert_eq!(
        t.bin(ins(Div, S64), i64::MIN as u64, u64::MAX),
        i64::MIN as u64
    );
    // only the low 32 bits of the divisor count: 2^32 is zero for .u32
    assert_eq!(t.bin(ins(Div, U32), 10, 1 << 32) as u32, 0xffff_ffff);
}

#[test]
fn mul_hi_wide_mad() {
    let mut t = T::new();
    let hi = |t: &mut T, ty, a, b| t.bin(ins(Mul, ty).m(|m| m.mul_mode = Some(MulMode::Hi)), a, b);
    assert_eq!(
        hi(&mut t, U32, 0xffff_ffff, 0xffff_ffff) as u32,
        0xffff_fffe
    );
    assert_eq!(hi(&mut t, S32, 0xffff_ffff, 0xffff_ffff) as u32, 0);
    assert_eq!(hi(&mut t, S32, 0x8000_0000, 2) as u32, 0xffff_ffff);
    assert_eq!(hi(&mut t, U64, u64::MAX, 2), 1);
    let wide =
        |t: &mut T, ty, a, b| t.bin(ins(Mul, ty).m(|m| m.mul_mode = Some(MulMode::Wide)), a, b);
    assert_eq!(
        wide(&mut t, U32, 0xffff_ffff, 0xffff_ffff),
        0xffff_fffe_0000_0001
    );
    assert_eq!(wide(&mut t, S32, 0xffff_ffff, 3) as i64, -3);
    assert_eq!(wide(&mut t, S16, 0x8000, 0x8000), 0x4000_0000);
    assert_eq!(t.bin(ins(Mul, U32), 0x1_0000, 0x1_0000) as u32, 0);
    // mad.lo / mad.hi / mad.wide
    let mad =
        |t: &mut T, ty, mode, a, b, c| t.tern(ins(Mad, ty).m(|m| m.mul_mode = Some(mode)), a, b, c);
    assert_eq!(mad(&mut t, S32, MulMode::Lo, 3, 0xffff_fffe, 10) as i32, 4);
    assert_eq!(
        mad(&mut t, U32, MulMode::Hi, 0xffff_ffff, 0xffff_ffff, 2) as u32,
        0
    );
    assert_eq!(
        mad(&mut t, S32, MulMode::Wide, 0xffff_ffff, 0xffff_ffff, 5),
        6
    );
    // mad.hi.sat.s32 clamps
    let sat_hi = ins(Mad, S32).m(|m| {
        m.mul_mode = Some(MulMode::Hi);
        m.sat = true
    });
    assert_eq!(
        t.tern(sat_hi, 0x4000_0000, 0x4000_0000, 0x7fff_ffff) as u32,
        0x7fff_ffff
    );
    // s32 results are stored sign-extended
    assert_eq!(t.bin(ins(Sub, S32), 1, 2), u64::MAX);
    assert_eq!(t.bin(ins(Sub, U32), 1, 2), 0xffff_ffff);
}

#[test]
fn add_sat_abs_neg_min_max_int() {
    let mut t = T::new();
    let sat = ins(Add, S32).m(|m| m.sat = true);
    assert_eq!(t.bin(sat.clone(), 0x7fff_ffff, 1) as u32, 0x7fff_ffff);
    assert_eq!(t.bin(sat, 0x8000_0000, 0xffff_ffff) as u32, 0x8000_0000);
    assert_eq!(
        t.bin(ins(Sub, S32).m(|m| m.sat = true), 0x8000_0000, 1) as u32,
        0x8000_0000
    );
    assert_eq!(t.un(ins(Abs, S32), 0x8000_0000) as u32, 0x8000_0000);
    assert_eq!(t.un(ins(Abs, S32), (-5i32) as u32 as u64) as u32, 5);
    assert_eq!(t.un(ins(Neg, S32), 5) as i32, -5);
    assert_eq!(t.bin(ins(Min, S32), 0xffff_ffff, 1) as i32, -1);
    assert_eq!(t.bin(ins(Min, U32), 0xffff_ffff, 1) as u32, 1);
    assert_eq!(t.bin(ins(Max, S16), 0x8000, 0x7fff) as u16, 0x7fff);
    assert_eq!(t.bin(ins(Max, U64), u64::MAX, 1), u64::MAX);
}

#[test]
fn bit_ops_via_execute() {
    let mut t = T::new();
    assert_eq!(t.un(ins(Popc, B64), u64::MAX), 64);
    assert_eq!(t.un(ins(Clz, B32), 0xffff_0000_0000_0001), 31);
    assert_eq!(t.un(ins(Brev, B32), 1) as u32, 0x8000_0000);
    assert_eq!(t.un(ins(Not, B16), 0) as u16, 0xffff);
    assert_eq!(t.un(ins(Cnot, B32), 0xffff_ffff_0000_0000), 1);
    assert_eq!(t.un(ins(Cnot, B32), 7), 0);
    assert_eq!(t.un(ins(Not, Pred), 1), 0);
    assert_eq!(t.tern(ins(Bfe, S32), 0x0000_0f00, 8, 4) as i32, -1);
    assert_eq!(t.tern(ins(Bfe, U32), 0x0000_0f00, 8, 4), 0xf);
    assert_eq!(
        t.tern(ins(Prmt, B32), 0x4433_2211, 0x8877_6655, 0x5140),
        0x6622_5511
    );
    let shf = ins(Shf, B32).m(|m| {
        m.shf_left = false;
        m.shf_wrap = false
    });
    // clamp: n = min(c, 32) — shifting right by 32 leaves b
    assert_eq!(t.tern(shf, 0, 0xffff_ffff, 40) as u32, 0xffff_ffff);
    let shfl = ins(Shf, B32).m(|m| m.shf_left = true);
    assert_eq!(t.tern(shfl, 0x1234, 0xffff_ffff, 40) as u32, 0x1234);
    t.set(1, |_| 0xff);
    t.set(2, |_| 0);
    t.set(3, |_| 8);
    t.set(4, |_| 4);
    t.run(ins(Bfi, B32).d(r(0)).s(r(1)).s(r(2)).s(r(3)).s(r(4)));
    assert_eq!(t.get(0, 0), 0xf00);
}

// ------------------------------------------------------------------ float

#[test]
fn float_min_max_nan_and_signed_zero() {
    let mut t = T::new();
    let nan = f32::NAN.to_bits() as u64;
    assert_eq!(ff(t.bin(ins(Min, F32), nan, f(1.5))), 1.5);
    assert_eq!(ff(t.bin(ins(Max, F32), f(-2.0), nan)), -2.0);
    assert_eq!(t.bin(ins(Min, F32), nan, 0xffc0_0001) as u32, 0x7fff_ffff); // canonical NaN
    assert_eq!(t.bin(ins(Min, F32), f(0.0), f(-0.0)) as u32, 0x8000_0000);
    assert_eq!(t.bin(ins(Max, F32), f(-0.0), f(0.0)) as u32, 0);
    assert_eq!(t.bin(ins(Min, F64), d(f64::NAN), d(-3.0)), d(-3.0));
    assert_eq!(t.bin(ins(Max, F64), d(-0.0), d(0.0)), d(0.0));
}

#[test]
fn setp_unordered_and_bool_ops() {
    let mut t = T::new();
    let nan = f32::NAN.to_bits() as u64;
    let setp = |t: &mut T, c: CmpOp, ty, a, b| t.bin(ins(Setp, ty).m(|m| m.cmp = Some(c)), a, b);
    for (c, expect) in [
        (CmpOp::Eq, 0),
        (CmpOp::Ne, 0),
        (CmpOp::Lt, 0),
        (CmpOp::Ge, 0),
        (CmpOp::Equ, 1),
        (CmpOp::Neu, 1),
        (CmpOp::Ltu, 1),
        (CmpOp::Geu, 1),
        (CmpOp::Num, 0),
        (CmpOp::Nan, 1),
    ] {
        assert_eq!(setp(&mut t, c, F32, nan, f(1.0)), expect, "{c:?} with NaN");
    }
    assert_eq!(setp(&mut t, CmpOp::Ne, F32, f(1.0), f(2.0)), 1);
    assert_eq!(setp(&mut t, CmpOp::Ltu, F32, f(2.0), f(1.0)), 0);
    assert_eq!(setp(&mut t, CmpOp::Eq, F32, f(0.0), f(-0.0)), 1);
    assert_eq!(setp(&mut t, CmpOp::Num, F64, d(1.0), d(2.0)), 1);
    assert_eq!(setp(&mut t, CmpOp::Lt, S32, 0xffff_ffff, 0), 1);
    assert_eq!(setp(&mut t, CmpOp::Lt, U32, 0xffff_ffff, 0), 0);
    assert_eq!(setp(&mut t, CmpOp::Lo, S32, 0xffff_ffff, 0), 0);
    assert_eq!(setp(&mut t, CmpOp::Hi, S32, 0xffff_ffff, 0), 1);
    assert_eq!(setp(&mut t, CmpOp::Le, S64, u64::MAX, u64::MAX), 1);
    // only the low 32 bits count for .s32
    assert_eq!(setp(&mut t, CmpOp::Eq, S32, 0x1_0000_0005, 5), 1);
    // setp.lt.and.s32 p|q, a, b, c
    t.set(1, |l| l as u64);
    t.set(2, |_| 4);
    t.set(3, |l| (l % 2) as u64);
    t.run(
        ins(Setp, S32)
            .m(|m| {
                m.cmp = Some(CmpOp::Lt);
                m.bool_op = Some(BoolOp::And)
            })
            .d(r(10))
            .d(r(11))
            .s(r(1))
            .s(r(2))
            .s(r(3)),
    );
    for l in 0..32 {
        let res = (l < 4) as u64;
        let c = (l % 2) as u64;
        assert_eq!(t.get(10, l), res & c, "p lane {l}");
        assert_eq!(t.get(11, l), (res ^ 1) & c, "q lane {l}");
    }
    // set.gt.u32.f32 and set.f32
    let set = ins(Set, U32).ty2(F32).m(|m| m.cmp = Some(CmpOp::Gt));
    assert_eq!(t.bin(set, f(2.0), f(1.0)) as u32, 0xffff_ffff);
    let set = ins(Set, F32).ty2(S32).m(|m| m.cmp = Some(CmpOp::Gt));
    assert_eq!(ff(t.bin(set, 2, 1)), 1.0);
}

#[test]
fn ftz_and_sat() {
    let mut t = T::new();
    let sub = f32::from_bits(0x0000_1000); // subnormal
    let add_ftz = ins(Add, F32).m(|m| m.ftz = true);
    assert_eq!(t.bin(add_ftz, f(sub), f(0.0)) as u32, 0);
    assert_eq!(t.bin(ins(Add, F32), f(sub), f(0.0)) as u32, 0x1000);
    let mul_ftz = ins(Mul, F32).m(|m| m.ftz = true);
    // a normal product that underflows to a subnormal is flushed, sign kept
    assert_eq!(t.bin(mul_ftz, f(-1e-20), f(1e-20)) as u32, 0x8000_0000);
    let neg_sub = f32::from_bits(0x8000_0001);
    assert_eq!(t.un(ins(Abs, F32).m(|m| m.ftz = true), f(neg_sub)), 0);
    let sat = ins(Add, F32).m(|m| m.sat = true);
    assert_eq!(ff(t.bin(sat.clone(), f(0.75), f(0.5))), 1.0);
    assert_eq!(ff(t.bin(sat.clone(), f(-0.75), f(0.5))), 0.0);
    assert_eq!(t.bin(sat, f(f32::INFINITY), f(f32::NEG_INFINITY)), 0); // NaN → 0
    let setp_ftz = ins(Setp, F32).m(|m| {
        m.cmp = Some(CmpOp::Eq);
        m.ftz = true
    });
    assert_eq!(t.bin(setp_ftz, f(sub), f(0.0)), 1);
}

#[test]
fn fma_single_rounding_vs_mul_add() {
    let mut t = T::new();
    let a = 1.0f32 + f32::EPSILON;
    let b = 1.0f32 - f32::EPSILON;
    let fma = t.tern(
        ins(Fma, F32).m(|m| m.rounding = Some(Rounding::Rn)),
        f(a),
        f(b),
        f(-1.0),
    );
    assert_eq!(ff(fma), -(2f32.powi(-46)));
    let p = t.bin(ins(Mul, F32), f(a), f(b));
    let s = t.bin(ins(Add, F32), p, f(-1.0));
    assert_eq!(ff(s), 0.0);
    // mad.f32 is fused too
    assert_eq!(
        ff(t.tern(ins(Mad, F32), f(a), f(b), f(-1.0))),
        -(2f32.powi(-46))
    );
    // f64 fma
    let a = 1.0 + f64::EPSILON;
    let b = 1.0 - f64::EPSILON;
    assert_eq!(
        f64::from_bits(t.tern(ins(Fma, F64), d(a), d(b), d(-1.0))),
        -(2f64.powi(-104))
    );
}

#[test]
fn directed_rounding_arith() {
    let mut t = T::new();
    let add = |rn| ins(Add, F32).m(move |m| m.rounding = Some(rn));
    let tiny = 2f32.powi(-30);
    assert_eq!(ff(t.bin(add(Rounding::Rn), f(1.0), f(tiny))), 1.0);
    assert_eq!(
        ff(t.bin(add(Rounding::Rp), f(1.0), f(tiny))),
        1.0 + f32::EPSILON
    );
    assert_eq!(
        ff(t.bin(add(Rounding::Rz), f(1.0), f(-tiny))),
        1.0 - f32::EPSILON / 2.0
    );
    assert_eq!(
        ff(t.bin(add(Rounding::Rm), f(-1.0), f(-tiny))),
        -1.0 - f32::EPSILON
    );
    let mul = ins(Mul, F32).m(|m| m.rounding = Some(Rounding::Rz));
    assert_eq!(ff(t.bin(mul, f(f32::MAX), f(2.0))), f32::MAX);
    let div = ins(Div, F32).m(|m| m.rounding = Some(Rounding::Rn));
    assert_eq!(ff(t.bin(div, f(1.0), f(3.0))), 1.0 / 3.0);
    let approx = ins(Div, F32).m(|m| m.approx = true);
    assert_eq!(ff(t.bin(approx, f(1.0), f(0.0))), f32::INFINITY);
}

#[test]
fn float_specials() {
    let mut t = T::new();
    assert_eq!(
        ff(t.un(
            ins(Sqrt, F32).m(|m| m.rounding = Some(Rounding::Rn)),
            f(2.0)
        )),
        2f32.sqrt()
    );
    assert_eq!(
        t.un(ins(Sqrt, F32).m(|m| m.approx = true), f(-1.0)) as u32,
        0x7fff_ffff
    );
    assert_eq!(
        ff(t.un(ins(Rsqrt, F32).m(|m| m.approx = true), f(4.0))),
        0.5
    );
    assert_eq!(
        ff(t.un(ins(Rcp, F32).m(|m| m.rounding = Some(Rounding::Rn)), f(4.0))),
        0.25
    );
    assert_eq!(ff(t.un(ins(Ex2, F32).m(|m| m.approx = true), f(3.0))), 8.0);
    assert_eq!(ff(t.un(ins(Lg2, F32).m(|m| m.approx = true), f(8.0))), 3.0);
    assert_eq!(
        ff(t.un(ins(Lg2, F32).m(|m| m.approx = true), f(0.0))),
        f32::NEG_INFINITY
    );
    assert_eq!(ff(t.un(ins(Sin, F32).m(|m| m.approx = true), f(0.0))), 0.0);
    assert_eq!(ff(t.un(ins(Cos, F32).m(|m| m.approx = true), f(0.0))), 1.0);
    assert_eq!(ff(t.bin(ins(Copysign, F32), f(-1.0), f(3.0))), -3.0);
    assert_eq!(t.un(ins(Neg, F32), f(0.0)) as u32, 0x8000_0000);
    assert_eq!(t.un(ins(Abs, F64), d(-2.0)), d(2.0));
    let testp = |sel: u8| ins(Testp, F32).m(move |m| m.testp = sel);
    assert_eq!(t.un(testp(0), f(1.0)), 1);
    assert_eq!(t.un(testp(1), f(f32::INFINITY)), 1);
    assert_eq!(t.un(testp(3), f(f32::NAN)), 1);
    assert_eq!(t.un(testp(4), f(f32::from_bits(1))), 0);
    assert_eq!(t.un(testp(5), f(f32::from_bits(1))), 1);
    assert_eq!(t.un(testp(4), f(0.0)), 0);
}

// ------------------------------------------------------------------ conversions

#[test]
fn cvt_int_int_saturation_and_extension() {
    let mut t = T::new();
    let cvt = |dt, st, sat: bool| ins(Cvt, dt).ty2(st).m(move |m| m.sat = sat);
    assert_eq!(t.un(cvt(U8, S32, true), (-5i32) as u32 as u64), 0);
    assert_eq!(t.un(cvt(U8, S32, true), 300), 255);
    assert_eq!(t.un(cvt(S8, S32, true), 300), 127);
    assert_eq!(
        t.un(cvt(S8, S32, true), (-300i32) as u32 as u64) as i64,
        -128
    );
    assert_eq!(t.un(cvt(S8, S32, false), 0x1ff) as i64, -1); // truncate, sign-extend
    assert_eq!(t.un(cvt(U32, S8, false), 0x80) as u32, 0xffff_ff80);
    assert_eq!(t.un(cvt(U32, U8, false), 0x180) as u32, 0x80);
    assert_eq!(t.un(cvt(S64, S32, false), 0xffff_ffff) as i64, -1);
    assert_eq!(
        t.un(cvt(U64, U32, false), 0xffff_ffff_ffff_ffff),
        0xffff_ffff
    );
    assert_eq!(t.un(cvt(U32, S64, true), u64::MAX), 0);
    assert_eq!(t.un(cvt(S32, U64, true), u64::MAX) as u32, 0x7fff_ffff);
    assert_eq!(t.un(cvt(U16, U64, true), 70000), 0xffff);
}

#[test]
fn cvt_float_to_int() {
    let mut t = T::new();
    let cvt = |dt, st, r| ins(Cvt, dt).ty2(st).m(move |m| m.rounding = Some(r));
    assert_eq!(t.un(cvt(S32, F32, Rounding::Rzi), f(f32::NAN)), 0);
    assert_eq!(
        t.un(cvt(S32, F32, Rounding::Rzi), f(1e10)) as u32,
        0x7fff_ffff
    );
    assert_eq!(
        t.un(cvt(S32, F32, Rounding::Rzi), f(-1e10)) as u32,
        0x8000_0000
    );
    assert_eq!(t.un(cvt(U32, F32, Rounding::Rzi), f(-3.7)), 0);
    assert_eq!(t.un(cvt(S32, F32, Rounding::Rzi), f(-3.7)) as i32, -3);
    assert_eq!(t.un(cvt(S32, F32, Rounding::Rni), f(2.5)) as i32, 2);
    assert_eq!(t.un(cvt(S32, F32, Rounding::Rni), f(3.5)) as i32, 4);
    assert_eq!(t.un(cvt(S32, F32, Rounding::Rmi), f(-2.5)) as i32, -3);
    assert_eq!(t.un(cvt(S32, F32, Rounding::Rpi), f(2.1)) as i32, 3);
    assert_eq!(t.un(cvt(U8, F32, Rounding::Rni), f(300.0)), 255);
    assert_eq!(
        t.un(cvt(S64, F64, Rounding::Rzi), d(-1e30)),
        i64::MIN as u64
    );
    assert_eq!(
        t.un(cvt(U64, F64, Rounding::Rzi), d(f64::INFINITY)),
        u64::MAX
    );
    // no modifier: truncation
    assert_eq!(t.un(ins(Cvt, S32).ty2(F32), f(-3.7)) as i32, -3);
}

#[test]
fn cvt_float_float_and_int_float() {
    let mut t = T::new();
    let cvt = |dt, st, r| ins(Cvt, dt).ty2(st).m(move |m| m.rounding = Some(r));
    let x = 1.0f64 + 2f64.powi(-24) + 2f64.powi(-40); // just above an f32 midpoint
    assert_eq!(
        ff(t.un(cvt(F32, F64, Rounding::Rn), d(x))),
        1.0 + f32::EPSILON
    );
    assert_eq!(ff(t.un(cvt(F32, F64, Rounding::Rz), d(x))), 1.0);
    assert_eq!(
        ff(t.un(cvt(F32, F64, Rounding::Rm), d(-x))),
        -1.0 - f32::EPSILON
    );
    assert_eq!(ff(t.un(cvt(F32, F64, Rounding::Rp), d(-x))), -1.0);
    assert_eq!(t.un(ins(Cvt, F64).ty2(F32), f(0.1)), d(0.1f32 as f64));
    let big = (1u64 << 24) + 1;
    assert_eq!(ff(t.un(cvt(F32, S32, Rounding::Rn), big)), 16777216.0);
    assert_eq!(ff(t.un(cvt(F32, S32, Rounding::Rp), big)), 16777218.0);
    assert_eq!(
        ff(t.un(cvt(F32, U32, Rounding::Rn), 0xffff_ffff)),
        4294967296.0
    );
    assert_eq!(
        ff(t.un(cvt(F32, U32, Rounding::Rz), 0xffff_ffff)),
        4294967040.0
    );
    assert_eq!(ff(t.un(cvt(F32, S32, Rounding::Rn), 0xffff_ffff)), -1.0);
    assert_eq!(
        f64::from_bits(t.un(cvt(F64, S64, Rounding::Rn), i64::MIN as u64)),
        -(2f64.powi(63))
    );
    // integral rounding float → float
    assert_eq!(ff(t.un(cvt(F32, F32, Rounding::Rni), f(2.5))), 2.0);
    assert_eq!(ff(t.un(cvt(F32, F32, Rounding::Rmi), f(-0.5))), -1.0);
    assert_eq!(
        f64::from_bits(t.un(cvt(F64, F64, Rounding::Rpi), d(0.1))),
        1.0
    );
    // f16
    assert_eq!(t.un(cvt(F16, F32, Rounding::Rn), f(1.0)), 0x3c00);
    assert_eq!(ff(t.un(ins(Cvt, F32).ty2(F16), 0xc000)), -2.0);
    // ftz / sat on cvt
    let ftz = ins(Cvt, F32).ty2(F32).m(|m| m.ftz = true);
    assert_eq!(t.un(ftz, 0x8000_0010), 0x8000_0000);
    let sat = ins(Cvt, F32).ty2(F32).m(|m| m.sat = true);
    assert_eq!(ff(t.un(sat, f(7.0))), 1.0);
}

#[test]
fn cvta_windows() {
    let mut t = T::new();
    let cvta = |to: bool, s| ins(Cvta, U64).space(s).m(move |m| m.cvta_to = to);
    assert_eq!(
        t.un(cvta(false, StateSpace::Shared), 0x10),
        SHARED_WINDOW + 0x10
    );
    assert_eq!(
        t.un(cvta(true, StateSpace::Shared), SHARED_WINDOW + 0x10),
        0x10
    );
    assert_eq!(t.un(cvta(false, StateSpace::Local), 8), LOCAL_WINDOW + 8);
    assert_eq!(t.un(cvta(true, StateSpace::Local), LOCAL_WINDOW + 8), 8);
    assert_eq!(t.un(cvta(false, StateSpace::Global), 0x1234), 0x1234);
    assert_eq!(t.un(cvta(true, StateSpace::Global), 0x1234), 0x1234);
    // cvta.shared.u64 of a symbol
    t.run(
        ins(Cvta, U64)
            .space(StateSpace::Shared)
            .d(r(0))
            .s(Operand::SymbolAddr(1)),
    );
    assert_eq!(t.get(0, 5), SHARED_WINDOW + 128);
}

// ------------------------------------------------------------------ mov, specials, selp

#[test]
fn mov_specials_and_symbols() {
    let mut t = T::with_block(40); // two warps; warp 0 full
    let sp = |t: &mut T, s| {
        t.run(ins(Mov, U64).d(r(0)).s(Operand::Special(s)));
        (0..32).map(|l| t.get(0, l)).collect::<Vec<_>>()
    };
    assert_eq!(sp(&mut t, SpecialReg::Tid(0))[7], 7);
    assert_eq!(sp(&mut t, SpecialReg::Ntid(0))[0], 40);
    assert_eq!(sp(&mut t, SpecialReg::Ctaid(0))[0], 2);
    assert_eq!(sp(&mut t, SpecialReg::Nctaid(0))[0], 4);
    assert_eq!(sp(&mut t, SpecialReg::LaneId)[13], 13);
    assert_eq!(sp(&mut t, SpecialReg::WarpId)[0], 0);
    assert_eq!(sp(&mut t, SpecialReg::NWarpId)[0], 2);
    assert_eq!(sp(&mut t, SpecialReg::SmId)[0], 3);
    assert_eq!(sp(&mut t, SpecialReg::NSmId)[0], 15);
    assert_eq!(sp(&mut t, SpecialReg::LaneMaskEq)[3], 0b1000);
    assert_eq!(sp(&mut t, SpecialReg::LaneMaskLt)[3], 0b0111);
    assert_eq!(sp(&mut t, SpecialReg::LaneMaskLe)[31], 0xffff_ffff);
    assert_eq!(sp(&mut t, SpecialReg::LaneMaskGe)[30], 0xc000_0000);
    assert_eq!(sp(&mut t, SpecialReg::LaneMaskGt)[31], 0);
    assert_eq!(sp(&mut t, SpecialReg::Clock)[0], 0x2345_6789);
    assert_eq!(sp(&mut t, SpecialReg::Clock64)[0], 0x1_2345_6789);
    let sym = |t: &mut T, id| {
        t.run(ins(Mov, U64).d(r(0)).s(Operand::SymbolAddr(id)));
        t.get(0, 0)
    };
    assert_eq!(sym(&mut t, 0), 8); // param offset
    assert_eq!(sym(&mut t, 1), 128); // shared offset
    assert_eq!(sym(&mut t, 2), t.launch.global_base + 16);
    assert_eq!(sym(&mut t, 3), 4);
    // vector pack / unpack
    t.set(1, |_| 0x1111_2222);
    t.set(2, |_| 0x3333_4444);
    t.run(ins(Mov, B64).d(r(0)).s(r(1)).s(r(2)));
    assert_eq!(t.get(0, 0), 0x3333_4444_1111_2222);
    t.run(ins(Mov, B64).d(r(5)).d(r(6)).s(r(0)));
    assert_eq!((t.get(5, 0), t.get(6, 0)), (0x1111_2222, 0x3333_4444));
    // selp
    t.set(3, |l| (l & 1) as u64);
    t.run(
        ins(Selp, S32)
            .d(r(0))
            .s(imm(10))
            .s(imm(0xffff_ffff))
            .s(r(3)),
    );
    assert_eq!(t.get(0, 1), 10);
    assert_eq!(t.get(0, 0) as i64, -1);
}

#[test]
fn guard_masks_execution() {
    let mut t = T::new();
    t.set(5, |l| (l < 8) as u64);
    t.set(0, |_| 99);
    let res = t.run(ins(Mov, U32).d(r(0)).s(imm(1)).guard(5, false));
    assert_eq!(res.executed, 0xff);
    assert_eq!(res.flow, Flow::Seq);
    assert_eq!((t.get(0, 7), t.get(0, 8)), (1, 99));
    let res = t
        .run_mask(&ins(Mov, U32).d(r(0)).s(imm(2)).guard(5, true), 0x0000_0f0f)
        .unwrap();
    assert_eq!(res.executed, 0x0f00);
    assert_eq!((t.get(0, 9), t.get(0, 1), t.get(0, 20)), (2, 1, 99));
}

// ------------------------------------------------------------------ control

#[test]
fn control_flow_results() {
    let mut t = T::new();
    let mut bra = ins(Bra, Pred);
    bra.0.target = Some(7);
    bra.0.rpc = Some(9);
    assert_eq!(t.run(bra.clone()).flow, Flow::Jump { target: 7 });
    t.set(5, |l| (l % 3 == 0) as u64);
    let res = t.run(bra.clone().guard(5, false));
    assert_eq!(
        res.flow,
        Flow::Branch {
            taken: 0x4924_9249,
            target: 7,
            rpc: 9
        }
    );
    let res = t.run_mask(&bra.guard(5, false), 0b110).unwrap();
    assert_eq!(
        res.flow,
        Flow::Branch {
            taken: 0,
            target: 7,
            rpc: 9
        }
    );
    assert_eq!(
        t.run(ins(Exit, Pred).guard(5, true)).flow,
        Flow::Exit {
            exiting: !0x4924_9249
        }
    );
    assert_eq!(
        t.run_mask(&ins(Ret, Pred), 0xf).unwrap().flow,
        Flow::Exit { exiting: 0xf }
    );
    let res = t.run(ins(BarSync, Pred).s(imm(1)).s(imm(64)));
    assert_eq!((res.flow, res.barrier), (Flow::Seq, Some((1, Some(64)))));
    assert_eq!(t.run(ins(BarSync, Pred).s(imm(0))).barrier, Some((0, None)));
    assert_eq!(t.run(ins(Membar, Pred)).flow, Flow::Seq);
}

// ------------------------------------------------------------------ warp-level

#[test]
fn vote_modes() {
    let mut t = T::new();
    let vote = |mode| {
        ins(Vote, Pred)
            .m(move |m| m.vote = Some(mode))
            .d(r(0))
            .s(r(1))
    };
    t.set(1, |l| (l != 5) as u64);
    t.run(vote(VoteMode::All));
    assert_eq!(t.get(0, 0), 0);
    t.run_mask(&vote(VoteMode::All), 0xffff_ffdf).unwrap();
    assert_eq!(t.get(0, 0), 1);
    t.run(vote(VoteMode::Any));
    assert_eq!(t.get(0, 3), 1);
    t.run(vote(VoteMode::Uni));
    assert_eq!(t.get(0, 3), 0);
    t.run_mask(&vote(VoteMode::Uni), 0xf).unwrap();
    assert_eq!(t.get(0, 3), 1);
    t.run(
        ins(Vote, B32)
            .m(|m| m.vote = Some(VoteMode::Ballot))
            .d(r(0))
            .s(r(1)),
    );
    assert_eq!(t.get(0, 9), 0xffff_ffdf);
    // guarded lanes do not vote
    t.set(6, |l| (l < 16) as u64);
    t.run(
        ins(Vote, B32)
            .m(|m| m.vote = Some(VoteMode::Ballot))
            .d(r(0))
            .s(r(1))
            .guard(6, false),
    );
    assert_eq!(t.get(0, 0), 0xffdf);
    // vote.sync with a membermask
    t.run(
        ins(Vote, B32)
            .m(|m| m.vote = Some(VoteMode::Ballot))
            .d(r(0))
            .s(r(1))
            .s(imm(0xf0)),
    );
    assert_eq!(t.get(0, 0), 0xd0);
    t.set(1, |_| 0);
    t.run(vote(VoteMode::Any));
    assert_eq!(t.get(0, 0), 0);
}

#[test]
fn shfl_modes() {
    let mut t = T::new();
    t.set(1, |l| 100 + l as u64);
    let shfl = |mode, b: u64, c: u64| {
        ins(Shfl, B32)
            .m(move |m| m.shfl = Some(mode))
            .d(r(0))
            .d(r(2))
            .s(r(1))
            .s(imm(b))
            .s(imm(c))
            .s(imm(0xffff_ffff))
    };
    let get = |t: &T| {
        (0..32)
            .map(|l| (t.get(0, l), t.get(2, l)))
            .collect::<Vec<_>>()
    };
    // down by 4, clamp 31
    t.run(shfl(ShflMode::Down, 4, 0x1f));
    let v = get(&t);
    assert_eq!(v[0], (104, 1));
    assert_eq!(v[27], (131, 1));
    assert_eq!(v[28], (128, 0));
    // up by 3, c = 0
    t.run(shfl(ShflMode::Up, 3, 0));
    let v = get(&t);
    assert_eq!(v[2], (102, 0));
    assert_eq!(v[3], (100, 1));
    // butterfly xor 1
    t.run(shfl(ShflMode::Bfly, 1, 0x1f));
    let v = get(&t);
    assert_eq!((v[0].0, v[1].0, v[30].0), (101, 100, 131));
    // idx broadcast lane 7
    t.run(shfl(ShflMode::Idx, 7, 0x1f));
    assert!(get(&t).iter().all(|&(x, p)| x == 107 && p == 1));
    // segmented: width 8 → c = ((32 - 8) << 8) | 0x1f; idx 3 within each segment
    t.run(shfl(ShflMode::Idx, 3, (24 << 8) | 0x1f));
    let v = get(&t);
    assert_eq!((v[0].0, v[9].0, v[31].0), (103, 111, 127));
    // down within width 8: lane 6 + 4 = 10 crosses the segment → keeps own value
    t.run(shfl(ShflMode::Down, 4, (24 << 8) | 0x1f));
    let v = get(&t);
    assert_eq!((v[2], v[6]), ((106, 1), (106, 0)));
    // up within width 8: c = (24 << 8)
    t.run(shfl(ShflMode::Up, 2, 24 << 8));
    let v = get(&t);
    assert_eq!((v[8], v[10]), ((108, 0), (108, 1)));
    // a non-executing source lane still provides its register value
    t.run_mask(&shfl(ShflMode::Idx, 31, 0x1f), 0x1).unwrap();
    assert_eq!(t.get(0, 0), 131);
}

// ------------------------------------------------------------------ memory

fn ld(ty: ScalarType, space: StateSpace) -> I {
    ins(Ld, ty).space(space)
}
fn st(ty: ScalarType, space: StateSpace) -> I {
    ins(St, ty).space(space)
}

#[test]
fn global_ld_st_vector_and_sign_extension() {
    let mut t = T::new();
    let buf = t.buf.0;
    t.set(1, |l| buf + 16 * l as u64);
    t.set(2, |l| l as u64);
    t.set(3, |l| 0x80 + l as u64);
    t.set(4, |_| 0xdead);
    t.set(5, |_| 0xffff_ffff);
    let res = t.run(
        st(U32, StateSpace::Global)
            .m(|m| m.vec = 4)
            .at(AddrBase::Reg(1), 0)
            .s(r(2))
            .s(r(3))
            .s(r(4))
            .s(r(5)),
    );
    let mem = res.mem.unwrap();
    assert_eq!(
        (mem.space, mem.kind, mem.bytes, mem.mask),
        (StateSpace::Global, MemKind::Store, 16, ALL)
    );
    assert_eq!(mem.addrs[3], buf + 48);
    let mut raw = [0u8; 16];
    t.global.read(buf + 16, &mut raw).unwrap();
    assert_eq!(raw[0..8], [1, 0, 0, 0, 0x81, 0, 0, 0]);
    // ld.v2.u32 from offset 4
    t.run(
        ld(U32, StateSpace::Global)
            .m(|m| m.vec = 2)
            .at(AddrBase::Reg(1), 8)
            .d(r(10))
            .d(r(11)),
    );
    assert_eq!((t.get(10, 2), t.get(11, 2)), (0xdead, 0xffff_ffff));
    // ld.s8 sign-extends, ld.u8 zero-extends
    t.run(ld(S8, StateSpace::Global).at(AddrBase::Reg(1), 4).d(r(12)));
    assert_eq!(t.get(12, 3), 0xffff_ffff_ffff_ff83);
    t.run(ld(U8, StateSpace::Global).at(AddrBase::Reg(1), 4).d(r(12)));
    assert_eq!(t.get(12, 3), 0x83);
    t.run(
        ld(S16, StateSpace::Global)
            .at(AddrBase::Reg(1), 12)
            .d(r(12)),
    );
    assert_eq!(t.get(12, 0) as i64, -1);
    t.run(
        ld(U16, StateSpace::Global)
            .at(AddrBase::Reg(1), 12)
            .d(r(12)),
    );
    assert_eq!(t.get(12, 0), 0xffff);
    // st.u8 stores one byte; st.f64/ld.f64 round trip
    t.run(
        st(U8, StateSpace::Global)
            .at(AddrBase::Reg(1), 1)
            .s(imm(0x1ab)),
    );
    t.run(ld(U32, StateSpace::Global).at(AddrBase::Reg(1), 0).d(r(12)));
    assert_eq!(t.get(12, 5), 0xab05);
    t.run(
        st(F64, StateSpace::Global)
            .at(AddrBase::Reg(1), 8)
            .s(imm(d(2.5))),
    );
    t.run(ld(F64, StateSpace::Global).at(AddrBase::Reg(1), 8).d(r(13)));
    assert_eq!(t.get(13, 31), d(2.5));
    // module global symbol
    t.run(
        st(U32, StateSpace::Global)
            .at(AddrBase::Symbol(2), 4)
            .s(imm(77)),
    );
    let mut w = [0u8; 4];
    t.global.read(t.launch.global_base + 20, &mut w).unwrap();
    assert_eq!(u32::from_le_bytes(w), 77);
}

#[test]
fn shared_local_param_const_spaces() {
    let mut t = T::new();
    t.set(1, |l| 4 * l as u64);
    t.set(2, |l| 1000 + l as u64);
    let res = t.run(st(U32, StateSpace::Shared).at(AddrBase::Reg(1), 0).s(r(2)));
    let mem = res.mem.unwrap();
    assert_eq!((mem.space, mem.addrs[5]), (StateSpace::Shared, 20));
    assert_eq!(&t.cta.shared[20..24], &1005u32.to_le_bytes());
    // shared symbol base + offset
    t.run(
        st(U32, StateSpace::Shared)
            .at(AddrBase::Symbol(1), 8)
            .s(imm(5)),
    );
    assert_eq!(&t.cta.shared[136..140], &5u32.to_le_bytes());
    // local: each lane has its own frame
    t.run(
        st(U64, StateSpace::Local)
            .at(AddrBase::Symbol(4), 0)
            .s(r(2)),
    );
    t.run(ld(U64, StateSpace::Local).at(AddrBase::Absolute, 8).d(r(3)));
    assert_eq!((t.get(3, 0), t.get(3, 31)), (1000, 1031));
    assert_eq!(t.warp.local[64 * 7 + 8], (1007u64 & 0xff) as u8);
    // param: the kernel's pointer argument and an absolute offset
    let res = t.run(
        ld(U64, StateSpace::Param)
            .at(AddrBase::Symbol(0), 0)
            .d(r(4)),
    );
    assert_eq!(t.get(4, 0), t.buf.0);
    assert_eq!(res.mem.unwrap().addrs[0], 8);
    t.run(ld(U32, StateSpace::Param).at(AddrBase::Absolute, 0).d(r(4)));
    assert_eq!(t.get(4, 0), 0xdead_beef);
    // const, signed
    t.run(
        ld(S32, StateSpace::Const)
            .at(AddrBase::Symbol(3), 0)
            .d(r(4)),
    );
    assert_eq!(t.get(4, 9) as i64, -7);
}

#[test]
fn generic_addressing_through_windows() {
    let mut t = T::new();
    // generic store into shared through the window, read back with ld.shared
    t.set(1, |l| SHARED_WINDOW + 4 * l as u64);
    let res = t.run(ins(St, U32).at(AddrBase::Reg(1), 0).s(imm(0xabc)));
    let mem = res.mem.unwrap();
    assert_eq!((mem.space, mem.addrs[2]), (StateSpace::Shared, 8));
    t.run(
        ld(U32, StateSpace::Shared)
            .at(AddrBase::Absolute, 124)
            .d(r(2)),
    );
    assert_eq!(t.get(2, 0), 0xabc);
    // generic local
    t.set(1, |_| LOCAL_WINDOW + 16);
    t.run(ins(St, U32).at(AddrBase::Reg(1), 0).s(r(1)));
    t.run(
        ld(U32, StateSpace::Local)
            .at(AddrBase::Absolute, 16)
            .d(r(2)),
    );
    assert_eq!(t.get(2, 4), (LOCAL_WINDOW + 16) & 0xffff_ffff);
    // generic global
    let buf = t.buf.0;
    t.set(1, |_| buf);
    t.run(ins(St, U32).at(AddrBase::Reg(1), 0).s(imm(9)));
    let res = t.run(ins(Ld, U32).at(AddrBase::Reg(1), 0).d(r(2)));
    assert_eq!(t.get(2, 0), 9);
    assert_eq!(res.mem.unwrap().space, StateSpace::Global);
    // generic symbol of shared space
    t.run(ins(St, U32).at(AddrBase::Symbol(1), 0).s(imm(31)));
    assert_eq!(&t.cta.shared[128..132], &31u32.to_le_bytes());
    // mixed spaces in one instruction: space Generic, addrs generic
    t.set(1, |l| if l == 0 { buf } else { SHARED_WINDOW });
    let res = t.run(ins(Ld, U32).at(AddrBase::Reg(1), 0).d(r(2)));
    let mem = res.mem.unwrap();
    assert_eq!(
        (mem.space, mem.addrs[0], mem.addrs[1]),
        (StateSpace::Generic, buf, SHARED_WINDOW)
    );
}

#[test]
fn faults_carry_full_location() {
    let mut t = T::new();
    // Strict bounds (`--strict-bounds`): every access outside an allocation faults.
    t.global.set_strict(true);
    let buf = t.buf.0;
    // lane 6 runs past the 1024-byte allocation
    t.set(1, |l| buf + 1020 + if l >= 6 { 4 } else { 0 });
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Global).at(AddrBase::Reg(1), 0).d(r(2)),
            0xffff_ffc0 | 0x7,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    assert_eq!(
        (e.kernel.as_str(), e.file.as_str(), e.pc, e.line),
        ("k", "t.ptx", 0, 42)
    );
    assert_eq!((e.warp, e.cta, e.thread), (2, [2, 0, 0], [6, 0, 0]));
    assert!(
        e.detail.contains(&format!("{:#x}", buf + 1024)),
        "{}",
        e.detail
    );
    assert!(
        e.detail.contains("global") && e.detail.contains("4 bytes"),
        "{}",
        e.detail
    );
    // misaligned: lane 0 at +2
    t.set(1, |l| buf + 2 + 4 * l as u64);
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Global).at(AddrBase::Reg(1), 0).d(r(2)),
            ALL,
        )
        .unwrap_err();
    assert_eq!((e.kind, e.thread), (FaultKind::Misaligned, [0, 0, 0]));
    // vector alignment is element size × width
    t.set(1, |_| buf + 8);
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Global)
                .m(|m| m.vec = 4)
                .at(AddrBase::Reg(1), 0)
                .d(r(2))
                .d(r(3))
                .d(r(4))
                .d(r(5)),
            ALL,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::Misaligned);
    // null pointer
    t.set(1, |_| 0);
    let e = t
        .run_mask(
            &st(U32, StateSpace::Global)
                .at(AddrBase::Reg(1), 0)
                .s(imm(1)),
            0x10,
        )
        .unwrap_err();
    assert_eq!((e.kind, e.thread), (FaultKind::OutOfBounds, [4, 0, 0]));
    // shared / local / const / param bounds
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Shared)
                .at(AddrBase::Absolute, 256)
                .d(r(2)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    assert!(e.detail.contains("shared"), "{}", e.detail);
    let e = t
        .run_mask(
            &ld(U64, StateSpace::Local)
                .at(AddrBase::Absolute, 64)
                .d(r(2)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Const)
                .at(AddrBase::Absolute, 16)
                .d(r(2)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Param)
                .at(AddrBase::Absolute, 32)
                .d(r(2)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    // generic address into the padding past a window segment
    t.set(1, |_| SHARED_WINDOW + 4096);
    let e = t
        .run_mask(&ins(Ld, U32).at(AddrBase::Reg(1), 0).d(r(2)), 1)
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    assert!(e.detail.contains("generic address"), "{}", e.detail);
    // predicated-off lanes do not fault
    let res = t
        .run_mask(&ins(Ld, U32).at(AddrBase::Reg(1), 0).d(r(2)), 0)
        .unwrap();
    assert_eq!(res.mem.unwrap().mask, 0);
    // faulting store has no side effect on other lanes
    t.set(1, |l| if l == 31 { 0 } else { buf + 512 + 4 * l as u64 });
    t.run_mask(
        &st(U32, StateSpace::Global)
            .at(AddrBase::Reg(1), 0)
            .s(imm(0x55)),
        ALL,
    )
    .unwrap_err();
    let mut w = [0u8; 4];
    t.global.read(buf + 512, &mut w).unwrap();
    assert_eq!(w, [0; 4]);
    // a global access between allocations (alignment padding) faults
    t.set(1, |_| GLOBAL_BASE + 64); // past the 64-byte module image, before `buf`
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Global).at(AddrBase::Reg(1), 0).d(r(2)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfBounds);
    assert!(
        e.detail.contains("outside every live allocation"),
        "{}",
        e.detail
    );
    t.set(1, |_| GLOBAL_BASE + 60);
    assert!(t
        .run_mask(
            &ld(U32, StateSpace::Global).at(AddrBase::Reg(1), 0).d(r(2)),
            1
        )
        .is_ok());
    // the Display form names everything
    let msg = e.to_string();
    assert!(
        msg.contains("kernel `k`") && msg.contains("t.ptx:42"),
        "{msg}"
    );
}

/// Default bounds, as on a real GPU: global accesses fault only outside mapped device memory
/// (64 KiB pages); past the end of a buffer or in alignment padding they read and write
/// whatever is there.
#[test]
fn default_bounds_fault_only_outside_mapped_memory() {
    use crate::address_map::DEVICE_PAGE_BYTES as PAGE;
    let mut t = T::new();
    assert!(!t.global.strict());
    let buf = t.buf.0;
    let load = ld(U32, StateSpace::Global).at(AddrBase::Reg(1), 0).d(r(2));
    // Lanes 6.. run past the 1024-byte buffer: no fault, they read zeros.
    t.set(1, |l| buf + 1020 + if l >= 6 { 4 * l as u64 } else { 0 });
    t.run_mask(&load, ALL).unwrap();
    assert_eq!(t.get(2, 7), 0);
    // A store into the padding after the module image, and into the context page below
    // the first allocation, lands in memory and reads back.
    t.set(1, |l| {
        if l == 0 {
            GLOBAL_BASE + 64
        } else {
            GLOBAL_BASE - 256
        }
    });
    t.set(3, |l| 100 + l as u64);
    t.run_mask(
        &st(U32, StateSpace::Global).at(AddrBase::Reg(1), 0).s(r(3)),
        0b11,
    )
    .unwrap();
    t.run_mask(&load, 0b11).unwrap();
    assert_eq!((t.get(2, 0), t.get(2, 1)), (100, 101));
    // Past the last mapped page, before the context page, null: faults, naming the lane.
    for (bad, lane) in [
        (GLOBAL_BASE + PAGE, 9),
        (GLOBAL_BASE - PAGE - 4, 3),
        (0, 31),
    ] {
        t.set(1, |l| if l == lane { bad } else { buf });
        let e = t.run_mask(&load, ALL).unwrap_err();
        assert_eq!(
            (e.kind, e.thread),
            (FaultKind::OutOfBounds, [lane as u32, 0, 0])
        );
        assert!(
            e.detail.contains("no device memory is mapped there"),
            "{}",
            e.detail
        );
    }
    // An aligned access never straddles a page: 4 bytes before the end of the mapped run an
    // 8-byte load is misaligned, 8 bytes before it is in bounds.
    t.set(1, |_| GLOBAL_BASE + PAGE - 4);
    let e = t
        .run_mask(
            &ld(U32, StateSpace::Global)
                .m(|m| m.vec = 2)
                .at(AddrBase::Reg(1), 0)
                .d(r(2))
                .d(r(3)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::Misaligned);
    t.set(1, |_| GLOBAL_BASE + PAGE - 8);
    t.run_mask(
        &ld(U32, StateSpace::Global)
            .m(|m| m.vec = 2)
            .at(AddrBase::Reg(1), 0)
            .d(r(2))
            .d(r(3)),
        1,
    )
    .unwrap();
}

#[test]
fn atomics_order_cas_inc_dec() {
    let mut t = T::new();
    let buf = t.buf.0;
    t.set(1, |_| buf);
    let atom = |op, ty| {
        ins(Atom, ty)
            .space(StateSpace::Global)
            .m(move |m| m.atom = Some(op))
    };
    // all lanes add 1 to one counter: old values are 0..31 in lane order
    let res = t.run(
        atom(AtomOp::Add, U32)
            .at(AddrBase::Reg(1), 0)
            .d(r(2))
            .s(imm(1)),
    );
    assert_eq!(res.mem.unwrap().kind, MemKind::Atomic);
    for l in 0..32 {
        assert_eq!(t.get(2, l), l as u64);
    }
    assert_eq!(t.global.load(buf, 4), Some(32));
    // inc wraps at the bound: 32 lanes, bound 9 → values cycle 0..=9
    t.global.store(buf + 8, 4, 0);
    t.run(
        atom(AtomOp::Inc, U32)
            .at(AddrBase::Reg(1), 8)
            .d(r(2))
            .s(imm(9)),
    );
    assert_eq!((t.get(2, 9), t.get(2, 10), t.get(2, 11)), (9, 0, 1));
    assert_eq!(t.global.load(buf + 8, 4), Some(32 % 10));
    // dec: 0 or above the bound reloads the bound
    t.global.store(buf + 8, 4, 1);
    t.run_mask(
        &atom(AtomOp::Dec, U32)
            .at(AddrBase::Reg(1), 8)
            .d(r(2))
            .s(imm(5)),
        0b111,
    )
    .unwrap();
    assert_eq!((t.get(2, 0), t.get(2, 1), t.get(2, 2)), (1, 0, 5));
    assert_eq!(t.global.load(buf + 8, 4), Some(4));
    // cas: only lane 0 sees the expected value
    t.global.store(buf + 16, 8, 7);
    t.set(3, |l| 100 + l as u64);
    t.run(
        atom(AtomOp::Cas, B64)
            .at(AddrBase::Reg(1), 16)
            .d(r(2))
            .s(imm(7))
            .s(r(3)),
    );
    assert_eq!((t.get(2, 0), t.get(2, 1)), (7, 100));
    assert_eq!(t.global.load(buf + 16, 8), Some(100));
    // min/max signed vs unsigned
    t.global.store(buf + 24, 4, 5);
    t.run_mask(
        &atom(AtomOp::Min, S32)
            .at(AddrBase::Reg(1), 24)
            .d(r(2))
            .s(imm(0xffff_fffe)),
        1,
    )
    .unwrap();
    assert_eq!(t.global.load(buf + 24, 4), Some(0xffff_fffe));
    t.run_mask(
        &atom(AtomOp::Min, U32)
            .at(AddrBase::Reg(1), 24)
            .d(r(2))
            .s(imm(3)),
        1,
    )
    .unwrap();
    assert_eq!(t.global.load(buf + 24, 4), Some(3));
    assert_eq!(t.get(2, 0) as u32, 0xffff_fffe);
    // f32 add, exch, bitwise, red (no destination)
    t.global.store(buf + 32, 4, f(1.5));
    t.run(
        atom(AtomOp::Add, F32)
            .at(AddrBase::Reg(1), 32)
            .d(r(2))
            .s(imm(f(0.5))),
    );
    assert_eq!(ff(t.global.load(buf + 32, 4).unwrap()), 17.5);
    assert_eq!(ff(t.get(2, 1)), 2.0);
    t.run(
        atom(AtomOp::Exch, B32)
            .at(AddrBase::Reg(1), 36)
            .d(r(2))
            .s(r(3)),
    );
    assert_eq!((t.get(2, 1), t.global.load(buf + 36, 4)), (100, Some(131)));
    let red = ins(Red, U32)
        .space(StateSpace::Global)
        .m(|m| m.atom = Some(AtomOp::Or));
    t.set(4, |l| 1 << l);
    t.run(red.at(AddrBase::Reg(1), 40).s(r(4)));
    assert_eq!(t.global.load(buf + 40, 4), Some(0xffff_ffff));
    // shared atomics
    let sh = ins(Atom, U32)
        .space(StateSpace::Shared)
        .m(|m| m.atom = Some(AtomOp::Add));
    t.set(5, |l| 4 * (l % 2) as u64);
    t.run(sh.at(AddrBase::Reg(5), 0).d(r(2)).s(imm(2)));
    assert_eq!(&t.cta.shared[0..8], &[32, 0, 0, 0, 32, 0, 0, 0]);
    assert_eq!((t.get(2, 0), t.get(2, 1), t.get(2, 2)), (0, 0, 2));
    // unsupported combination names itself
    let bad = ins(Atom, F64)
        .space(StateSpace::Shared)
        .m(|m| m.atom = Some(AtomOp::Cas));
    let e = t
        .run_mask(
            &bad.at(AddrBase::Absolute, 0).d(r(2)).s(imm(0)).s(imm(1)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::Unsupported);
    assert!(e.detail.contains("atom.shared.cas.f64"), "{}", e.detail);
    // misaligned atomic
    let e = t
        .run_mask(
            &atom(AtomOp::Add, U32)
                .at(AddrBase::Reg(1), 2)
                .d(r(2))
                .s(imm(1)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::Misaligned);
}

#[test]
fn unsupported_never_panics() {
    let mut t = T::new();
    let e = t
        .run_mask(&ins(Add, F16).d(r(0)).s(r(1)).s(r(2)), 1)
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::Unsupported);
    let e = t.run_mask(&ins(Add, U32).d(r(0)).s(r(1)), 1).unwrap_err();
    assert_eq!(e.kind, FaultKind::Unsupported);
    let e = t.run_mask(&ins(Mov, U32).d(r(900)).s(r(1)), 1).unwrap_err();
    assert_eq!(e.kind, FaultKind::Unsupported);
    let e = t
        .run_mask(
            &st(U32, StateSpace::Const)
                .at(AddrBase::Absolute, 0)
                .s(imm(1)),
            1,
        )
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::Unsupported);
    let e = t
        .run_mask(&ins(Mov, U32).d(r(0)).s(Operand::SymbolAddr(99)), 1)
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::Unsupported);
    // pc out of range
    t.module.kernels[0].insts.clear();
    let mut env = ExecEnv {
        module: &t.module,
        kernel: &t.module.kernels[0],
        launch: &t.launch,
        global: &mut t.global,
        sm_id: 0,
        num_sms: 1,
        cycle: 0,
    };
    let e = execute(5, 1, &mut t.warp, &mut t.cta, &mut env).unwrap_err();
    assert_eq!((e.kind, e.pc), (FaultKind::Unsupported, 5));
}

// ------------------------------------------------------------------ property tests

fn int_ty() -> impl Strategy<Value = ScalarType> {
    prop_oneof![
        Just(S32),
        Just(U32),
        Just(S64),
        Just(U64),
        Just(S16),
        Just(U16)
    ]
}

fn reference(op: Opcode, ty: ScalarType, a: u64, b: u64) -> Option<u64> {
    let bits = ty.bits();
    let mk = super::int::mask(bits);
    let (sa, sb) = (
        super::int::sext(a, bits) as i64,
        super::int::sext(b, bits) as i64,
    );
    let (ua, ub) = (a & mk, b & mk);
    let signed = ty.is_signed();
    Some(
        match op {
            Add => ua.wrapping_add(ub),
            Sub => ua.wrapping_sub(ub),
            Mul => ua.wrapping_mul(ub),
            And => ua & ub,
            Or => ua | ub,
            Xor => ua ^ ub,
            Min if signed => sa.min(sb) as u64,
            Max if signed => sa.max(sb) as u64,
            Min => ua.min(ub),
            Max => ua.max(ub),
            Div if ub == 0 => return None,
            Rem if ub == 0 => return None,
            Div if signed => (sa as i128 / sb as i128) as u64,
            Rem if signed => (sa as i128 % sb as i128) as u64,
            Div => ua / ub,
            Rem => ua % ub,
            _ => return None,
        } & mk,
    )
}

proptest! {
    #[test]
    fn int_ops_match_reference(
        op in prop_oneof![Just(Add), Just(Sub), Just(Mul), Just(And), Just(Or), Just(Xor),
                          Just(Min), Just(Max), Just(Div), Just(Rem)],
        ty in int_ty(),
        a: u64,
        b: u64,
    ) {
        let mut t = T::new();
        let got = t.bin(ins(op, ty), a, b);
        if let Some(expect) = reference(op, ty, a, b) {
            prop_assert_eq!(got & super::int::mask(ty.bits()), expect);
            // and the register holds the value extended per the type
            prop_assert_eq!(got, super::int::ext(ty, expect));
        }
    }

    #[test]
    fn mul_hi_wide_match_reference(a: u32, b: u32) {
        let mut t = T::new();
        let hi_u = t.bin(ins(Mul, U32).m(|m| m.mul_mode = Some(MulMode::Hi)), a as u64, b as u64);
        prop_assert_eq!(hi_u as u32, ((a as u64 * b as u64) >> 32) as u32);
        let hi_s = t.bin(ins(Mul, S32).m(|m| m.mul_mode = Some(MulMode::Hi)), a as u64, b as u64);
        prop_assert_eq!(hi_s as u32, ((a as i32 as i64 * b as i32 as i64) >> 32) as u32);
        let w = t.bin(ins(Mul, S32).m(|m| m.mul_mode = Some(MulMode::Wide)), a as u64, b as u64);
        prop_assert_eq!(w as i64, a as i32 as i64 * b as i32 as i64);
    }

    #[test]
    fn setp_int_matches_reference(a: i32, b: i32) {
        let mut t = T::new();
        for (c, e) in [(CmpOp::Lt, a < b), (CmpOp::Ge, a >= b), (CmpOp::Lo, (a as u32) < (b as u32)),
                       (CmpOp::Hs, (a as u32) >= (b as u32)), (CmpOp::Ne, a != b)] {
            let p = t.bin(ins(Setp, S32).m(|m| m.cmp = Some(c)), a as u32 as u64, b as u32 as u64);
            prop_assert_eq!(p, e as u64);
        }
    }

    #[test]
    fn cvt_sat_matches_reference(v: i64) {
        let mut t = T::new();
        let got = t.un(ins(Cvt, S16).ty2(S64).m(|m| m.sat = true), v as u64);
        prop_assert_eq!(got as i64, v.clamp(i16::MIN as i64, i16::MAX as i64));
        let got = t.un(ins(Cvt, U8).ty2(S64).m(|m| m.sat = true), v as u64);
        prop_assert_eq!(got as i64, v.clamp(0, 255));
    }

    #[test]
    fn f32_arith_rn_matches_host(a: f32, b: f32) {
        let mut t = T::new();
        let canon = |x: f32| if x.is_nan() { 0x7fff_ffff } else { x.to_bits() };
        prop_assert_eq!(t.bin(ins(Add, F32), f(a), f(b)) as u32, canon(a + b));
        prop_assert_eq!(t.bin(ins(Mul, F32), f(a), f(b)) as u32, canon(a * b));
        prop_assert_eq!(t.bin(ins(Div, F32).m(|m| m.rounding = Some(Rounding::Rn)), f(a), f(b)) as u32, canon(a / b));
    }

    #[test]
    fn atomics_apply_in_lane_order(slots in proptest::collection::vec(0u64..4, 32),
                                   vals in proptest::collection::vec(any::<u32>(), 32),
                                   op in prop_oneof![Just(AtomOp::Add), Just(AtomOp::Exch),
                                                     Just(AtomOp::Max), Just(AtomOp::Inc)]) {
        let mut t = T::new();
        let buf = t.buf.0;
        t.set(1, |l| buf + 4 * slots[l]);
        t.set(2, |l| vals[l] as u64 % 1000);
        t.run(ins(Atom, U32).space(StateSpace::Global).m(|m| m.atom = Some(op))
            .at(AddrBase::Reg(1), 0).d(r(3)).s(r(2)));
        let mut mem = [0u32; 4];
        for l in 0..32 {
            let s = slots[l] as usize;
            let b = vals[l] % 1000;
            prop_assert_eq!(t.get(3, l), mem[s] as u64, "old value of lane {}", l);
            mem[s] = match op {
                AtomOp::Add => mem[s].wrapping_add(b),
                AtomOp::Exch => b,
                AtomOp::Max => mem[s].max(b),
                _ => if mem[s] >= b { 0 } else { mem[s] + 1 },
            };
        }
        for (s, &v) in mem.iter().enumerate() {
            prop_assert_eq!(t.global.load(buf + 4 * s as u64, 4), Some(v as u64));
        }
    }
}
