//! Bit-exact functional semantics of one warp instruction ([`execute`]).
//!
//! Structure: the instruction is decoded once per warp instruction (a `match` on opcode,
//! type and modifiers picks a monomorphised lane loop); source operands are copied into
//! 32-lane arrays (`Lanes`, on the stack — no heap allocation per instruction); the loop runs
//! over the set bits of the executed mask; results are written back for those lanes only.
//!
//! Register convention: raw `u64` bits per lane (see [`super::int::ext`]): signed integers
//! are written sign-extended to 64 bits, unsigned/bit integers and floats zero-extended,
//! predicates as 0/1. Every read uses only the low bits of the instruction's type.
//!
//! Documented choices where PTX leaves results undefined or the model approximates:
//! - integer division by zero: see [`super::int`] (all ones; remainder = dividend).
//! - `div.approx/div.full.f32`, `rcp.approx`, `sqrt.approx` are computed as the IEEE
//!   correctly rounded operation (a real GPU's approximations differ in the last ulps);
//!   `rsqrt.approx` is `1/sqrt(x)` computed in f64 and rounded once; `sin/cos/lg2/ex2.approx`
//!   use the host's f64 `sin/cos/log2/exp2` rounded to f32 (PTX defines them as
//!   approximations too; results are deterministic for a given host libm).
//! - `mad.f32` (no rounding modifier) is fused, as on sm_20+ targets.
//! - `atom.add.f32` flushes subnormal inputs and results (PTX says it does).
//! - NaN results of float arithmetic are canonical (see [`super::float`]).
//! - `shfl` reads the source lane's register even when that lane is not executing (or is
//!   outside `membermask`); the membermask of `shfl.sync` is otherwise ignored.
//! - `vote.sync`: lanes outside `membermask` do not contribute; all executing lanes receive
//!   the result.
//! - `%nwarpid` = warps per CTA; `%gridid` = 0.
//! - Atomics of one warp instruction apply in ascending lane order.

use super::float::{self as fl, Rnd};
use super::int::{self as it, mask, read_int};
use super::*;
use crate::error::{FaultKind, GuestFault};
use crate::ptx::ir::{
    BoolOp, CmpOp, Instruction, MulMode, Opcode, Operand, ScalarType, SpecialReg, StateSpace,
    Symbol, SymbolId,
};

pub(super) type Lanes = [u64; WARP_SIZE];

/// Internal fault type: boxed so that every `Result` on the hot path stays small (a
/// `GuestFault` is over 100 bytes; it is unboxed once, at the [`execute`] boundary).
pub(super) type Fault = Box<GuestFault>;
pub(super) type Res<T> = Result<T, Fault>;

/// All-zero lanes, for absent optional operands.
pub(super) static ZERO_LANES: Lanes = [0; WARP_SIZE];

/// Call `f(lane)` for every set bit of `m`, lowest lane first.
#[inline(always)]
pub(super) fn lanes(mut m: u32, mut f: impl FnMut(usize)) {
    if m == u32::MAX {
        // Full warp (the common case): a plain counted loop, which the compiler can unroll
        // or vectorise, instead of walking the set bits.
        for l in 0..WARP_SIZE {
            f(l);
        }
        return;
    }
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        f(l);
    }
}

/// Lanes `f(l)` for every lane of `m`; the other lanes hold 0 (never written back). The
/// full warp (the common case) is built in place with no zero-initialisation.
#[inline(always)]
pub(super) fn gen(m: u32, mut f: impl FnMut(usize) -> u64) -> Lanes {
    if m == u32::MAX {
        return std::array::from_fn(f);
    }
    let mut d = [0; WARP_SIZE];
    lanes(m, |l| d[l] = f(l));
    d
}

/// Lanes `f(l)` for all 32 lanes, whatever the executed mask: for cheap operations that
/// cannot fail or panic on any input, computing the unused lanes (whose results are never
/// written back) is cheaper than walking the mask, and the loop is straight-line.
#[inline(always)]
fn all(f: impl FnMut(usize) -> u64) -> Lanes {
    std::array::from_fn(f)
}

/// `gen` followed by the extension of the result to `ty`'s register convention (see the
/// module docs), with the signedness decided once per instruction, not per lane.
#[inline(always)]
fn gen_ext(m: u32, ty: ScalarType, f: impl Fn(usize) -> u64) -> Lanes {
    use ScalarType::*;
    // The common widths get constant extensions (one instruction per lane).
    match ty {
        S32 => gen(m, |l| f(l) as i32 as i64 as u64),
        U32 | B32 | F32 => gen(m, |l| f(l) & 0xffff_ffff),
        S64 | U64 | B64 | F64 => gen(m, f),
        _ if ty.is_signed() => {
            let s = 64 - ty.bits();
            gen(m, |l| (((f(l) << s) as i64) >> s) as u64)
        }
        _ => {
            let mk = it::ext_mask(ty);
            gen(m, |l| f(l) & mk)
        }
    }
}

/// Every lane of `a` read as an integer of `bits` bits (sign- or zero-extended).
#[inline(always)]
fn extend_all(a: &Lanes, bits: u32, signed: bool) -> Lanes {
    if bits >= 64 {
        return *a;
    }
    let s = 64 - bits;
    if signed {
        all(|l| (((a[l] << s) as i64) >> s) as u64)
    } else {
        all(|l| (a[l] << s) >> s)
    }
}

/// Integer comparison of every lane, `key` reading a lane as the comparison's type; `table`
/// is the truth table over (bit 0) less, (1) equal, (2) greater. The common relations get
/// their own loops (one comparison per lane instead of a three-way compare and a lookup).
#[inline(always)]
fn int_compare<T: Ord + Copy>(table: u8, a: &Lanes, b: &Lanes, key: impl Fn(u64) -> T) -> Lanes {
    let (x, y) = (|l: usize| key(a[l]), |l: usize| key(b[l]));
    match table & 0b111 {
        0b001 => all(|l| (x(l) < y(l)) as u64),
        0b011 => all(|l| (x(l) <= y(l)) as u64),
        0b100 => all(|l| (x(l) > y(l)) as u64),
        0b110 => all(|l| (x(l) >= y(l)) as u64),
        0b010 => all(|l| (x(l) == y(l)) as u64),
        0b101 => all(|l| (x(l) != y(l)) as u64),
        t => all(|l| ((t >> (x(l).cmp(&y(l)) as i8 + 1) as u32) & 1) as u64),
    }
}

#[inline(always)]
fn map1(m: u32, a: &Lanes, f: impl Fn(u64) -> u64) -> Lanes {
    gen(m, |l| f(a[l]))
}
#[inline(always)]
fn map2(m: u32, a: &Lanes, b: &Lanes, f: impl Fn(u64, u64) -> u64) -> Lanes {
    gen(m, |l| f(a[l], b[l]))
}
#[inline(always)]
fn map3(m: u32, a: &Lanes, b: &Lanes, c: &Lanes, f: impl Fn(u64, u64, u64) -> u64) -> Lanes {
    gen(m, |l| f(a[l], b[l], c[l]))
}

/// Execute the instruction at `pc` for the `active` lanes of `warp` (bit i = lane i).
pub fn execute(
    pc: u32,
    active: u32,
    warp: &mut WarpState,
    cta: &mut CtaState,
    env: &mut ExecEnv,
) -> Result<StepResult, GuestFault> {
    let mut res = StepResult {
        flow: Flow::Seq,
        executed: active,
        mem: None,
        barrier: None,
    };
    execute_into(pc, active, warp, cta, env, &mut res).map_err(|f| *f)?;
    Ok(res)
}

/// [`execute`] writing its result into `res`, which the caller reuses from instruction to
/// instruction: the result holds 32 lane addresses, and the simulators' hot loops should not
/// move it around.
pub fn execute_into(
    pc: u32,
    active: u32,
    warp: &mut WarpState,
    cta: &mut CtaState,
    env: &mut ExecEnv,
    res: &mut StepResult,
) -> Result<(), Box<GuestFault>> {
    res.flow = Flow::Seq;
    res.executed = active;
    res.mem = None;
    res.barrier = None;
    step(pc, active, warp, cta, env, res)
}

/// [`execute`] writing into `res` (which starts as a `Seq` step with `executed = active`).
fn step(
    pc: u32,
    active: u32,
    warp: &mut WarpState,
    cta: &mut CtaState,
    env: &mut ExecEnv,
    res: &mut StepResult,
) -> Res<()> {
    let kernel = env.kernel;
    let Some(inst) = kernel.insts.get(pc as usize) else {
        let x = Exec {
            pc,
            inst: None,
            warp,
            cta,
            env,
            executed: active,
        };
        return Err(x.fault(
            FaultKind::Unsupported,
            None,
            format!("pc {pc} is outside the kernel"),
        ));
    };
    let mut x = Exec {
        pc,
        inst: Some(inst),
        warp,
        cta,
        env,
        executed: active,
    };
    let executed = match inst.guard {
        None => active,
        Some(g) => active & x.pred_mask(g.reg, g.negate)?,
    };
    x.executed = executed;
    res.executed = executed;
    use Opcode::*;
    match inst.op {
        Ld | St => x.ld_st(res.mem.insert(MemAccess::default()))?,
        Atom | Red => x.atom(res.mem.insert(MemAccess::default()))?,
        Tex => x.tex(res.mem.insert(MemAccess::default()))?,
        Bra => {
            let target = inst
                .target
                .ok_or_else(|| x.unsupported("bra without a resolved target"))?;
            res.flow = match inst.guard {
                None => Flow::Jump { target },
                Some(_) => Flow::Branch {
                    taken: executed,
                    target,
                    rpc: inst.rpc.unwrap_or(crate::ptx::ir::END_PC),
                },
            };
        }
        Ret | Exit => res.flow = Flow::Exit { exiting: executed },
        BarSync => {
            if executed != 0 {
                let l = executed.trailing_zeros() as usize;
                let id = match inst.srcs.first() {
                    Some(op) => x.operand(op)?[l] as u32,
                    None => 0,
                };
                let count = match inst.srcs.get(1) {
                    Some(op) => Some(x.operand(op)?[l] as u32),
                    None => None,
                };
                res.barrier = Some((id, count));
            }
        }
        Membar => {}
        _ if executed == 0 => {}
        Mov => x.mov()?,
        Add | Sub | Mul | Mad | Fma | Div | Rem | Abs | Neg | Min | Max => {
            if inst.ty.is_float() {
                x.float_arith()?
            } else {
                x.int_arith()?
            }
        }
        Sqrt | Rsqrt | Rcp | Sin | Cos | Lg2 | Ex2 | Copysign | Testp => x.float_special()?,
        And | Or | Xor | Not | Cnot | Shl | Shr | Popc | Clz | Brev | Bfe | Bfi | Prmt | Shf => {
            x.bit_op()?
        }
        Setp | Set => x.setp()?,
        Selp => x.selp()?,
        Cvt => x.cvt()?,
        Cvta => x.cvta()?,
        Vote => x.vote()?,
        Shfl => x.shfl()?,
        Call => x.call()?,
    }
    Ok(())
}

/// Execution context of one warp instruction.
pub(super) struct Exec<'e, 'a> {
    pub pc: u32,
    pub inst: Option<&'a Instruction>,
    pub warp: &'e mut WarpState,
    pub cta: &'e mut CtaState,
    pub env: &'e mut ExecEnv<'a>,
    pub executed: u32,
}

impl<'a> Exec<'_, 'a> {
    #[inline(always)]
    pub fn inst(&self) -> &'a Instruction {
        self.inst.expect("instruction present")
    }

    // ---------------------------------------------------------------- faults

    /// A fully filled guest fault; `lane` = the faulting lane (default: first executed one).
    /// Cold and out of line: faults end the launch, so the hot paths only branch here.
    #[cold]
    #[inline(never)]
    pub fn fault(&self, kind: FaultKind, lane: Option<usize>, detail: String) -> Fault {
        let lane = lane.unwrap_or_else(|| {
            if self.executed != 0 {
                self.executed.trailing_zeros() as usize
            } else {
                0
            }
        });
        Box::new(GuestFault {
            kind,
            kernel: self.env.kernel.name.clone(),
            file: self.env.module.file.clone(),
            pc: self.pc,
            line: self.inst.map_or(self.env.kernel.loc.line, |i| i.loc.line),
            warp: self.warp.global_warp_id,
            cta: self.cta.ctaid,
            thread: self.warp.tid[lane % WARP_SIZE],
            detail,
        })
    }

    /// An `Unsupported` fault naming the instruction.
    #[cold]
    #[inline(never)]
    pub fn unsupported(&self, what: impl std::fmt::Display) -> Fault {
        let desc = match self.inst {
            Some(i) => describe(i),
            None => String::from("?"),
        };
        self.fault(
            FaultKind::Unsupported,
            None,
            format!("{what} (in `{desc}`)"),
        )
    }

    // ---------------------------------------------------------------- operands

    /// Lanes whose predicate register `r` is true (or false, if `negate`).
    fn pred_mask(&self, r: u16, negate: bool) -> Res<u32> {
        let base = r as usize * WARP_SIZE;
        let row = self
            .warp
            .regs
            .get(base..base + WARP_SIZE)
            .ok_or_else(|| self.unsupported(format!("predicate register {r} out of range")))?;
        let mut m = 0u32;
        for (l, &v) in row.iter().enumerate() {
            m |= ((v & 1) as u32) << l;
        }
        Ok(if negate { !m } else { m })
    }

    /// Source operand `i`, all 32 lanes (a copy; the hot paths use [`Exec::src_ref`]).
    #[inline]
    pub fn src(&self, i: usize) -> Res<Lanes> {
        match self.inst().srcs.get(i) {
            Some(op) => self.operand(op),
            None => Err(self.unsupported(format!("missing source operand {}", i + 1))),
        }
    }

    /// Source operand `i`, all 32 lanes, without copying a register: a register operand is
    /// borrowed straight from the register file; any other operand is materialised in `buf`
    /// (an `Option`, so that a register operand costs no 256-byte buffer initialisation).
    #[inline(always)]
    pub fn src_ref<'s>(&'s self, i: usize, buf: &'s mut Option<Lanes>) -> Res<&'s Lanes> {
        match self.inst().srcs.get(i) {
            Some(op) => self.operand_ref(op, buf),
            None => Err(self.unsupported(format!("missing source operand {}", i + 1))),
        }
    }

    /// Source operand `i` read as an integer of type `ty` (sign/zero-extended).
    #[inline(always)]
    fn src_int(&self, i: usize, ty: ScalarType) -> Res<Lanes> {
        let mut buf = None;
        let a = self.src_ref(i, &mut buf)?;
        Ok(extend_all(a, ty.bits(), ty.is_signed()))
    }

    /// Row `r` of the register file (all 32 lanes).
    #[inline(always)]
    pub(super) fn reg_row(&self, r: u16) -> Res<&Lanes> {
        let base = r as usize * WARP_SIZE;
        match self.warp.regs.get(base..base + WARP_SIZE) {
            Some(row) => Ok(row.try_into().expect("row of WARP_SIZE lanes")),
            None => Err(self.unsupported(format!("register {r} out of range"))),
        }
    }

    /// [`Exec::operand`] without copying register rows (see [`Exec::src_ref`]).
    #[inline(always)]
    pub fn operand_ref<'s>(&'s self, op: &Operand, buf: &'s mut Option<Lanes>) -> Res<&'s Lanes> {
        match *op {
            Operand::Reg(r) => self.reg_row(r),
            Operand::Imm(v) => Ok(buf.insert([v; WARP_SIZE])),
            _ => Ok(buf.insert(self.operand(op)?)),
        }
    }

    /// The value of an operand in every lane.
    #[inline]
    pub fn operand(&self, op: &Operand) -> Res<Lanes> {
        match *op {
            Operand::Reg(r) => self.reg_row(r).copied(),
            Operand::Imm(v) => Ok([v; WARP_SIZE]),
            Operand::Special(s) => self.special(s),
            Operand::SymbolAddr(id) => Ok([self.symbol_value(id)?; WARP_SIZE]),
            Operand::Sink => Err(self.unsupported("`_` used as a source operand")),
        }
    }

    fn special(&self, s: SpecialReg) -> Res<Lanes> {
        let launch = self.env.launch;
        let dim = |d: u8, v: crate::host::Dim3| -> Res<u64> {
            Ok(match d {
                0 => v.x,
                1 => v.y,
                2 => v.z,
                _ => return Err(self.unsupported("special register dimension")),
            } as u64)
        };
        let mut out = [0u64; WARP_SIZE];
        match s {
            SpecialReg::Tid(d) => {
                if d > 2 {
                    return Err(self.unsupported("%tid dimension"));
                }
                for (l, o) in out.iter_mut().enumerate() {
                    *o = self.warp.tid[l][d as usize] as u64;
                }
            }
            SpecialReg::Ntid(d) => out = [dim(d, launch.block)?; WARP_SIZE],
            SpecialReg::Nctaid(d) => out = [dim(d, launch.grid)?; WARP_SIZE],
            SpecialReg::Ctaid(d) => {
                let v = *self
                    .cta
                    .ctaid
                    .get(d as usize)
                    .ok_or_else(|| self.unsupported("%ctaid dimension"))?;
                out = [v as u64; WARP_SIZE];
            }
            SpecialReg::LaneId => {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = l as u64;
                }
            }
            SpecialReg::WarpId => out = [self.warp.warp_in_cta as u64; WARP_SIZE],
            SpecialReg::NWarpId => out = [launch.warps_per_cta as u64; WARP_SIZE],
            SpecialReg::SmId => out = [self.env.sm_id as u64; WARP_SIZE],
            SpecialReg::NSmId => out = [self.env.num_sms as u64; WARP_SIZE],
            SpecialReg::GridId => {}
            SpecialReg::Clock => out = [self.env.cycle & 0xffff_ffff; WARP_SIZE],
            SpecialReg::Clock64 => out = [self.env.cycle; WARP_SIZE],
            SpecialReg::LaneMaskEq
            | SpecialReg::LaneMaskLe
            | SpecialReg::LaneMaskLt
            | SpecialReg::LaneMaskGe
            | SpecialReg::LaneMaskGt => {
                for (l, o) in out.iter_mut().enumerate() {
                    let eq = 1u64 << l;
                    let lt = eq - 1;
                    let v = match s {
                        SpecialReg::LaneMaskEq => eq,
                        SpecialReg::LaneMaskLt => lt,
                        SpecialReg::LaneMaskLe => lt | eq,
                        SpecialReg::LaneMaskGe => !lt,
                        _ => !(lt | eq),
                    };
                    *o = v & 0xffff_ffff;
                }
            }
        }
        Ok(out)
    }

    /// The module symbol `id` (an id the front end assigned; out of range only for a
    /// hand-built module).
    fn symbol(&self, id: SymbolId) -> Res<&Symbol> {
        self.env
            .module
            .symbols
            .get(id as usize)
            .ok_or_else(|| self.unsupported(format!("symbol id {id} out of range")))
    }

    /// The address of `sym` in its own space (param/shared/local/const: space offset;
    /// global: device address).
    fn symbol_address(&self, sym: &Symbol) -> u64 {
        match sym.space {
            StateSpace::Global => self.env.launch.global_base.wrapping_add(sym.offset),
            _ => sym.offset,
        }
    }

    /// Value of a symbol used as an operand (`mov.u64 %rd, sym`): its address in its space.
    pub fn symbol_value(&self, id: SymbolId) -> Res<u64> {
        Ok(self.symbol_address(self.symbol(id)?))
    }

    /// The base address (the same in every lane) of a memory operand `[sym+off]` for an
    /// access in `space` (generic: a generic address, through the shared/local windows).
    pub(super) fn symbol_base(&self, id: SymbolId, space: StateSpace) -> Res<u64> {
        let sym = self.symbol(id)?;
        let v = self.symbol_address(sym);
        let v = match (space, sym.space) {
            (s, t) if s == t => v,
            (StateSpace::Generic, StateSpace::Global) => v,
            (StateSpace::Generic, StateSpace::Shared) => crate::address_map::SHARED_WINDOW + v,
            (StateSpace::Generic, StateSpace::Local) => crate::address_map::LOCAL_WINDOW + v,
            (s, t) => {
                return Err(self.unsupported(format!(
                    "symbol `{}` of space {t:?} accessed as {s:?}",
                    sym.name
                )))
            }
        };
        Ok(v)
    }

    /// Write destination operand `i` for the lanes of `m`, extending per `ty`.
    #[inline]
    pub fn put(&mut self, i: usize, d: &Lanes, m: u32, ty: ScalarType) -> Res<()> {
        match self.inst().dsts.get(i) {
            Some(op) => self.put_op(*op, d, m, ty),
            None => Err(self.unsupported(format!("missing destination operand {}", i + 1))),
        }
    }

    #[inline]
    pub fn put_op(&mut self, op: Operand, d: &Lanes, m: u32, ty: ScalarType) -> Res<()> {
        match op {
            Operand::Reg(r) => {
                let base = r as usize * WARP_SIZE;
                if base + WARP_SIZE > self.warp.regs.len() {
                    return Err(self.unsupported(format!("register {r} out of range")));
                }
                let row = &mut self.warp.regs[base..base + WARP_SIZE];
                // The extension is decided once for the instruction, not per lane.
                let bits = ty.bits();
                if ty.is_signed() && bits < 64 {
                    let s = 64 - bits;
                    lanes(m, |l| row[l] = (((d[l] << s) as i64) >> s) as u64);
                } else {
                    let mk = it::ext_mask(ty);
                    lanes(m, |l| row[l] = d[l] & mk);
                }
                Ok(())
            }
            Operand::Sink => Ok(()),
            _ => Err(self.unsupported("destination is not a register")),
        }
    }

    /// [`Exec::put`] of values already in the register convention of their type (e.g.
    /// computed by [`gen_ext`], canonical f32 bits, predicates as 0/1): a plain copy.
    #[inline]
    pub fn put_raw(&mut self, i: usize, d: &Lanes, m: u32) -> Res<()> {
        match self.inst().dsts.get(i) {
            Some(&Operand::Reg(r)) => {
                let base = r as usize * WARP_SIZE;
                let Some(row) = self.warp.regs.get_mut(base..base + WARP_SIZE) else {
                    return Err(self.unsupported(format!("register {r} out of range")));
                };
                if m == u32::MAX {
                    row.copy_from_slice(d);
                } else {
                    lanes(m, |l| row[l] = d[l]);
                }
                Ok(())
            }
            Some(Operand::Sink) => Ok(()),
            Some(_) => Err(self.unsupported("destination is not a register")),
            None => Err(self.unsupported(format!("missing destination operand {}", i + 1))),
        }
    }

    // ---------------------------------------------------------------- mov/selp

    fn mov(&mut self) -> Res<()> {
        let inst = self.inst();
        let ty = inst.ty;
        let m = self.executed;
        let (nd, ns) = (inst.dsts.len(), inst.srcs.len());
        if nd == 1 && ns == 1 {
            return match inst.srcs[0] {
                Operand::Reg(r) => {
                    let a = self.reg_row(r)?;
                    let d = gen_ext(u32::MAX, ty, |l| a[l]);
                    self.put_raw(0, &d, m)
                }
                Operand::Imm(v) => self.put_raw(0, &[it::ext(ty, v); WARP_SIZE], m),
                // A special register or a symbol: materialised once, extended on the write.
                ref op => {
                    let a = self.operand(op)?;
                    self.put(0, &a, m, ty)
                }
            };
        }
        if nd == 1 && ns > 1 {
            // pack: mov.b64 %rd, {%r1, %r2}
            let eb = ty.bits() / ns as u32;
            let mut d = [0u64; WARP_SIZE];
            for k in 0..ns {
                let a = self.src(k)?;
                lanes(m, |l| d[l] |= (a[l] & mask(eb)) << (eb * k as u32));
            }
            return self.put(0, &d, m, ty);
        }
        if ns == 1 && nd > 1 {
            // unpack: mov.b64 {%r1, %r2}, %rd
            let eb = ty.bits() / nd as u32;
            let a = self.src(0)?;
            let ety = match eb {
                8 => ScalarType::B8,
                16 => ScalarType::B16,
                32 => ScalarType::B32,
                _ => return Err(self.unsupported("vector mov element width")),
            };
            for k in 0..nd {
                let d = map1(m, &a, |x| x >> (eb * k as u32));
                self.put(k, &d, m, ety)?;
            }
            return Ok(());
        }
        Err(self.unsupported("operand count"))
    }

    fn selp(&mut self) -> Res<()> {
        let ty = self.inst().ty;
        let (mut ba, mut bb, mut bc) = (None, None, None);
        let (a, b, c) = (
            self.src_ref(0, &mut ba)?,
            self.src_ref(1, &mut bb)?,
            self.src_ref(2, &mut bc)?,
        );
        let d = gen_ext(u32::MAX, ty, |l| if c[l] & 1 != 0 { a[l] } else { b[l] });
        self.put_raw(0, &d, self.executed)
    }

    // ---------------------------------------------------------------- integer arithmetic

    fn int_arith(&mut self) -> Res<()> {
        let inst = self.inst();
        let ty = inst.ty;
        if ty == ScalarType::Pred {
            return Err(self.unsupported("arithmetic on .pred"));
        }
        let bits = ty.bits();
        let signed = ty.is_signed();
        let sat = inst.mods.sat && ty == ScalarType::S32;
        let m = self.executed;
        let mode = inst.mods.mul_mode.unwrap_or(MulMode::Lo);
        use Opcode::*;
        // Fast path: wrapping add/sub/neg/mul.lo/mad.lo. The low `bits` bits of their result
        // depend only on the low `bits` bits of the operands, so they run on the raw register
        // bits (no copy or extension of the sources) and only the result is extended, in the
        // same pass, over all lanes (cheap and total: the unused lanes are not written back).
        let lo = mode == MulMode::Lo;
        if !sat && (matches!(inst.op, Add | Sub | Neg) || (lo && matches!(inst.op, Mul | Mad))) {
            let (mut ba, mut bb, mut bc) = (None, None, None);
            let a = self.src_ref(0, &mut ba)?;
            let d = match inst.op {
                Neg => gen_ext(u32::MAX, ty, |l| a[l].wrapping_neg()),
                Add => {
                    let b = self.src_ref(1, &mut bb)?;
                    gen_ext(u32::MAX, ty, |l| a[l].wrapping_add(b[l]))
                }
                Sub => {
                    let b = self.src_ref(1, &mut bb)?;
                    gen_ext(u32::MAX, ty, |l| a[l].wrapping_sub(b[l]))
                }
                Mul => {
                    let b = self.src_ref(1, &mut bb)?;
                    gen_ext(u32::MAX, ty, |l| a[l].wrapping_mul(b[l]))
                }
                _ => {
                    let b = self.src_ref(1, &mut bb)?;
                    let c = self.src_ref(2, &mut bc)?;
                    gen_ext(u32::MAX, ty, |l| a[l].wrapping_mul(b[l]).wrapping_add(c[l]))
                }
            };
            return self.put_raw(0, &d, m);
        }
        // mul.wide / mad.wide (address arithmetic): the sources extended and multiplied in
        // one pass (the product of two extended <= 32-bit values is exact in 64 bits).
        if !sat && mode == MulMode::Wide && matches!(inst.op, Mul | Mad) && bits <= 32 {
            let dty = it::wide_type(ty).ok_or_else(|| self.unsupported("mul.wide type"))?;
            let (mut ba, mut bb, mut bc) = (None, None, None);
            let a = self.src_ref(0, &mut ba)?;
            let b = self.src_ref(1, &mut bb)?;
            let c = if inst.op == Mad {
                self.src_ref(2, &mut bc)?
            } else {
                &ZERO_LANES
            };
            let s = 64 - bits;
            let d = if signed {
                let x = |v: u64| ((v << s) as i64) >> s;
                gen_ext(u32::MAX, dty, |l| {
                    (x(a[l]).wrapping_mul(x(b[l])) as u64).wrapping_add(c[l])
                })
            } else {
                let x = |v: u64| (v << s) >> s;
                gen_ext(u32::MAX, dty, |l| {
                    x(a[l]).wrapping_mul(x(b[l])).wrapping_add(c[l])
                })
            };
            return self.put_raw(0, &d, m);
        }
        let mut dty = ty;
        let a = self.src_int(0, ty)?;
        let d = match inst.op {
            Add | Sub => {
                let b = self.src_int(1, ty)?;
                let sub = inst.op == Sub;
                if sat {
                    map2(m, &a, &b, |x, y| {
                        let (x, y) = (x as i64 as i128, y as i64 as i128);
                        it::clamp_signed(if sub { x - y } else { x + y }, 32)
                    })
                } else if sub {
                    map2(m, &a, &b, |x, y| x.wrapping_sub(y))
                } else {
                    map2(m, &a, &b, |x, y| x.wrapping_add(y))
                }
            }
            Mul | Mad => {
                let b = self.src_int(1, ty)?;
                if mode == MulMode::Wide {
                    dty = it::wide_type(ty)
                        .ok_or_else(|| self.unsupported("mul.wide on a 64-bit type"))?;
                }
                let c = if inst.op == Mad {
                    Some(self.src_int(2, dty)?)
                } else {
                    None
                };
                let mut d = match mode {
                    MulMode::Lo => map2(m, &a, &b, |x, y| x.wrapping_mul(y)),
                    MulMode::Hi => map2(m, &a, &b, |x, y| it::mul_hi(x, y, bits, signed)),
                    MulMode::Wide => map2(m, &a, &b, |x, y| it::mul_wide(x, y, signed)),
                };
                if let Some(c) = c {
                    if sat {
                        // mad.sat.s32 (PTX: .hi mode): clamp the exact sum.
                        if mode == MulMode::Lo {
                            lanes(m, |l| {
                                let p = (a[l] as i64 as i128) * (b[l] as i64 as i128);
                                d[l] = it::clamp_signed(p + c[l] as i64 as i128, 32);
                            });
                        } else {
                            lanes(m, |l| {
                                let hi = read_int(ScalarType::S32, d[l]) as i64 as i128;
                                d[l] = it::clamp_signed(hi + c[l] as i64 as i128, 32);
                            });
                        }
                    } else {
                        lanes(m, |l| d[l] = d[l].wrapping_add(c[l]));
                    }
                }
                d
            }
            Div => {
                let b = self.src_int(1, ty)?;
                map2(m, &a, &b, |x, y| it::div(x, y, ty))
            }
            Rem => {
                let b = self.src_int(1, ty)?;
                map2(m, &a, &b, |x, y| it::rem(x, y, ty))
            }
            Abs => {
                if signed {
                    map1(m, &a, |x| (x as i64).wrapping_abs() as u64)
                } else {
                    a
                }
            }
            Neg => map1(m, &a, |x| x.wrapping_neg()),
            Min | Max => {
                let b = self.src_int(1, ty)?;
                let max = inst.op == Max;
                // Operands are extended: compare all lanes (cheap, total), signedness fixed
                // outside the lane loop.
                if signed {
                    all(|l| {
                        let (p, q) = (a[l] as i64, b[l] as i64);
                        (if max { p.max(q) } else { p.min(q) }) as u64
                    })
                } else {
                    all(|l| {
                        let (x, y) = (a[l], b[l]);
                        if max {
                            x.max(y)
                        } else {
                            x.min(y)
                        }
                    })
                }
            }
            _ => return Err(self.unsupported("integer form of this instruction")),
        };
        self.put(0, &d, m, dty)
    }

    // ---------------------------------------------------------------- float arithmetic

    fn float_arith(&mut self) -> Res<()> {
        let inst = self.inst();
        let m = self.executed;
        let r = Rnd::from(inst.mods.rounding);
        let (ftz, sat) = (inst.mods.ftz, inst.mods.sat);
        let (mut ba, mut bb, mut bc) = (None, None, None);
        let a = self.src_ref(0, &mut ba)?;
        let n = inst.srcs.len();
        let b = if n > 1 {
            self.src_ref(1, &mut bb)?
        } else {
            &ZERO_LANES
        };
        let c = if n > 2 {
            self.src_ref(2, &mut bc)?
        } else {
            &ZERO_LANES
        };
        use Opcode::*;
        // Every result below is in the register convention already (canonical f32 bits fit
        // in the low 32 bits; f64 uses all 64): written back with `put_raw`.
        let plain = r == Rnd::N && !ftz && !sat;
        let d = match inst.ty {
            ScalarType::F32 if plain => {
                // The common case, decided once per instruction: round to nearest, no
                // `.ftz`/`.sat`. The same helpers with those modifiers constant; the cheap
                // operations (and `fma`, see `fma32_rn_lanes`) run over all lanes (no mask
                // walk), `div` (a host library call) only over the executed lanes.
                let i = fl::f32_of;
                let o = fl::canon32;
                match inst.op {
                    Add => all(|l| o(fl::add32(i(a[l]), i(b[l]), Rnd::N))),
                    Sub => all(|l| o(fl::add32(i(a[l]), -i(b[l]), Rnd::N))),
                    Mul => all(|l| o(fl::mul32(i(a[l]), i(b[l]), Rnd::N))),
                    Fma | Mad => fl::fma32_rn_lanes(a, b, c),
                    Div => map2(m, a, b, |x, y| o(fl::div32(i(x), i(y), Rnd::N))),
                    Abs => all(|l| (i(a[l]).to_bits() & 0x7fff_ffff) as u64),
                    Neg => all(|l| (i(a[l]).to_bits() ^ 0x8000_0000) as u64),
                    Min => all(|l| o(fl::fmin(i(a[l]), i(b[l])))),
                    Max => all(|l| o(fl::fmax(i(a[l]), i(b[l])))),
                    _ => return Err(self.unsupported("f32 form of this instruction")),
                }
            }
            ScalarType::F32 => {
                let i = |v: u64| fl::read_f32(v, ftz);
                let o = |x: f32| {
                    let x = if ftz { fl::ftz32(x) } else { x };
                    fl::canon32(if sat { fl::sat32(x) } else { x })
                };
                match inst.op {
                    Add => map2(m, a, b, |x, y| o(fl::add32(i(x), i(y), r))),
                    Sub => map2(m, a, b, |x, y| o(fl::add32(i(x), -i(y), r))),
                    Mul => map2(m, a, b, |x, y| o(fl::mul32(i(x), i(y), r))),
                    Fma | Mad => map3(m, a, b, c, |x, y, z| o(fl::fma32(i(x), i(y), i(z), r))),
                    Div => map2(m, a, b, |x, y| o(fl::div32(i(x), i(y), r))),
                    Abs => map1(m, a, |x| (i(x).to_bits() & 0x7fff_ffff) as u64),
                    Neg => map1(m, a, |x| (i(x).to_bits() ^ 0x8000_0000) as u64),
                    Min => map2(m, a, b, |x, y| o(fl::fmin(i(x), i(y)))),
                    Max => map2(m, a, b, |x, y| o(fl::fmax(i(x), i(y)))),
                    _ => return Err(self.unsupported("f32 form of this instruction")),
                }
            }
            ScalarType::F64 if plain => {
                // As for f32 above.
                let i = fl::f64_of;
                let o = fl::canon64;
                match inst.op {
                    Add => all(|l| o(fl::add64(i(a[l]), i(b[l]), Rnd::N))),
                    Sub => all(|l| o(fl::add64(i(a[l]), -i(b[l]), Rnd::N))),
                    Mul => all(|l| o(fl::mul64(i(a[l]), i(b[l]), Rnd::N))),
                    Fma | Mad => map3(m, a, b, c, |x, y, z| o(fl::fma64(i(x), i(y), i(z), Rnd::N))),
                    Div => map2(m, a, b, |x, y| o(fl::div64(i(x), i(y), Rnd::N))),
                    Abs => all(|l| i(a[l]).to_bits() & !(1 << 63)),
                    Neg => all(|l| i(a[l]).to_bits() ^ (1 << 63)),
                    Min => all(|l| o(fl::fmin(i(a[l]), i(b[l])))),
                    Max => all(|l| o(fl::fmax(i(a[l]), i(b[l])))),
                    _ => return Err(self.unsupported("f64 form of this instruction")),
                }
            }
            ScalarType::F64 => {
                let i = |v: u64| fl::read_f64(v, ftz);
                let o = |x: f64| fl::canon64(if sat { fl::sat64(x) } else { x });
                match inst.op {
                    Add => map2(m, a, b, |x, y| o(fl::add64(i(x), i(y), r))),
                    Sub => map2(m, a, b, |x, y| o(fl::add64(i(x), -i(y), r))),
                    Mul => map2(m, a, b, |x, y| o(fl::mul64(i(x), i(y), r))),
                    Fma | Mad => map3(m, a, b, c, |x, y, z| o(fl::fma64(i(x), i(y), i(z), r))),
                    Div => map2(m, a, b, |x, y| o(fl::div64(i(x), i(y), r))),
                    Abs => map1(m, a, |x| i(x).to_bits() & !(1 << 63)),
                    Neg => map1(m, a, |x| i(x).to_bits() ^ (1 << 63)),
                    Min => map2(m, a, b, |x, y| o(fl::fmin(i(x), i(y)))),
                    Max => map2(m, a, b, |x, y| o(fl::fmax(i(x), i(y)))),
                    _ => return Err(self.unsupported("f64 form of this instruction")),
                }
            }
            _ => return Err(self.unsupported("float type")),
        };
        self.put_raw(0, &d, m)
    }

    fn float_special(&mut self) -> Res<()> {
        let inst = self.inst();
        let m = self.executed;
        let ty = inst.ty;
        let approx = inst.mods.approx;
        let r = if approx {
            Rnd::N
        } else {
            Rnd::from(inst.mods.rounding)
        };
        let ftz = inst.mods.ftz;
        let mut buf = None;
        let a = self.src_ref(0, &mut buf)?;
        let d: Lanes;
        let mut dty = ty;
        use Opcode::*;
        match (inst.op, ty) {
            (Testp, ScalarType::F32 | ScalarType::F64) => {
                let sel = inst.mods.testp;
                if sel > 5 {
                    return Err(self.unsupported("testp operation"));
                }
                let f64of = |v: u64| {
                    if ty == ScalarType::F32 {
                        fl::f32_of(v) as f64
                    } else {
                        fl::f64_of(v)
                    }
                };
                let is_sub = |v: u64| {
                    if ty == ScalarType::F32 {
                        fl::f32_of(v).is_subnormal()
                    } else {
                        fl::f64_of(v).is_subnormal()
                    }
                };
                d = map1(m, a, |v| {
                    let x = f64of(v);
                    (match sel {
                        0 => x.is_finite(),
                        1 => x.is_infinite(),
                        2 => !x.is_nan(),
                        3 => x.is_nan(),
                        4 => x.is_finite() && x != 0.0 && !is_sub(v),
                        _ => is_sub(v),
                    }) as u64
                });
                dty = ScalarType::Pred;
            }
            (Copysign, ScalarType::F32) => {
                let b = self.src(1)?;
                d = map2(m, a, &b, |x, y| (x & 0x8000_0000) | (y & 0x7fff_ffff));
            }
            (Copysign, ScalarType::F64) => {
                let b = self.src(1)?;
                d = map2(m, a, &b, |x, y| (x & (1 << 63)) | (y & !(1 << 63)));
            }
            (_, ScalarType::F32) => {
                let i = |v: u64| fl::read_f32(v, ftz);
                let o = |x: f32| fl::canon32(if ftz { fl::ftz32(x) } else { x });
                let via64 = |x: f32, f: fn(f64) -> f64| f(x as f64) as f32;
                match inst.op {
                    Sqrt => d = map1(m, a, |x| o(fl::sqrt32(i(x), r))),
                    Rsqrt => d = map1(m, a, |x| o(via64(i(x), |v| 1.0 / v.sqrt()))),
                    Rcp => d = map1(m, a, |x| o(fl::div32(1.0, i(x), r))),
                    Sin => d = map1(m, a, |x| o(via64(i(x), f64::sin))),
                    Cos => d = map1(m, a, |x| o(via64(i(x), f64::cos))),
                    Lg2 => d = map1(m, a, |x| o(via64(i(x), f64::log2))),
                    Ex2 => d = map1(m, a, |x| o(via64(i(x), f64::exp2))),
                    _ => return Err(self.unsupported("f32 form of this instruction")),
                }
            }
            (_, ScalarType::F64) => {
                let i = |v: u64| fl::read_f64(v, ftz);
                let o = |x: f64| fl::canon64(if ftz { fl::ftz64(x) } else { x });
                match inst.op {
                    Sqrt => d = map1(m, a, |x| o(fl::sqrt64(i(x), r))),
                    Rsqrt => d = map1(m, a, |x| o(1.0 / i(x).sqrt())),
                    Rcp => d = map1(m, a, |x| o(fl::div64(1.0, i(x), r))),
                    Sin => d = map1(m, a, |x| o(i(x).sin())),
                    Cos => d = map1(m, a, |x| o(i(x).cos())),
                    Lg2 => d = map1(m, a, |x| o(i(x).log2())),
                    Ex2 => d = map1(m, a, |x| o(i(x).exp2())),
                    _ => return Err(self.unsupported("f64 form of this instruction")),
                }
            }
            _ => return Err(self.unsupported("type of this instruction")),
        }
        self.put(0, &d, m, dty)
    }

    // ---------------------------------------------------------------- bit manipulation

    fn bit_op(&mut self) -> Res<()> {
        let inst = self.inst();
        let m = self.executed;
        let ty = inst.ty;
        let bits = ty.bits();
        let signed = ty.is_signed();
        use Opcode::*;
        // Fast path, as in `int_arith`: the low `bits` bits of and/or/xor/not/shl depend only
        // on the low `bits` bits of the value operands (and the full 32-bit shift amount), so
        // they run on the raw register bits, over all lanes, extending only the result.
        if matches!(inst.op, And | Or | Xor | Not | Shl) {
            let (mut ba, mut bb) = (None, None);
            let a = self.src_ref(0, &mut ba)?;
            if inst.op == Not {
                let d = gen_ext(u32::MAX, ty, |l| !a[l]);
                return self.put_raw(0, &d, m);
            }
            let b = self.src_ref(1, &mut bb)?;
            let d = match inst.op {
                And => gen_ext(u32::MAX, ty, |l| a[l] & b[l]),
                Or => gen_ext(u32::MAX, ty, |l| a[l] | b[l]),
                Xor => gen_ext(u32::MAX, ty, |l| a[l] ^ b[l]),
                _ => gen_ext(u32::MAX, ty, |l| it::shl(a[l], b[l] & 0xffff_ffff, bits)),
            };
            return self.put_raw(0, &d, m);
        }
        let mut dty = ty;
        let a = self.src_int(0, ty)?;
        let d = match inst.op {
            Cnot => map1(m, &a, |x| (x & mask(bits) == 0) as u64),
            Shr => {
                let b = self.src_int(1, ScalarType::U32)?;
                all(|l| it::shr(a[l], b[l], bits, signed))
            }
            Popc => {
                dty = ScalarType::U32;
                map1(m, &a, |x| (x & mask(bits)).count_ones() as u64)
            }
            Clz => {
                dty = ScalarType::U32;
                map1(m, &a, |x| it::clz(x, bits))
            }
            Brev => map1(m, &a, |x| it::brev(x, bits)),
            Bfe => {
                let (b, c) = (
                    self.src_int(1, ScalarType::U32)?,
                    self.src_int(2, ScalarType::U32)?,
                );
                map3(m, &a, &b, &c, |x, p, n| it::bfe(x, p, n, bits, signed))
            }
            Bfi => {
                let b = self.src_int(1, ty)?;
                let (c, e) = (
                    self.src_int(2, ScalarType::U32)?,
                    self.src_int(3, ScalarType::U32)?,
                );
                gen(m, |l| it::bfi(a[l], b[l], c[l], e[l], bits))
            }
            Prmt => {
                let (b, c) = (self.src(1)?, self.src(2)?);
                map3(m, &a, &b, &c, |x, y, z| {
                    it::prmt(x as u32, y as u32, z as u32) as u64
                })
            }
            Shf => {
                let (b, c) = (self.src(1)?, self.src(2)?);
                let (left, wrap) = (inst.mods.shf_left, inst.mods.shf_wrap);
                map3(m, &a, &b, &c, |x, y, z| {
                    it::shf(x as u32, y as u32, z as u32, left, wrap) as u64
                })
            }
            _ => return Err(self.unsupported("bit operation")),
        };
        self.put(0, &d, m, dty)
    }

    // ---------------------------------------------------------------- comparisons

    fn setp(&mut self) -> Res<()> {
        let inst = self.inst();
        let m = self.executed;
        let ct = inst.ty2.unwrap_or(inst.ty);
        let cmp = inst
            .mods
            .cmp
            .ok_or_else(|| self.unsupported("missing comparison"))?;
        // Truth table over the relation classes: bit 0 lt, 1 eq, 2 gt, 3 unordered.
        use CmpOp::*;
        let (table, force_unsigned): (u8, bool) = match cmp {
            Eq => (0b0010, false),
            Ne => (0b0101, false),
            Lt => (0b0001, false),
            Le => (0b0011, false),
            Gt => (0b0100, false),
            Ge => (0b0110, false),
            Lo => (0b0001, true),
            Ls => (0b0011, true),
            Hi => (0b0100, true),
            Hs => (0b0110, true),
            Equ => (0b1010, false),
            Neu => (0b1101, false),
            Ltu => (0b1001, false),
            Leu => (0b1011, false),
            Gtu => (0b1100, false),
            Geu => (0b1110, false),
            Num => (0b0111, false),
            Nan => (0b1000, false),
        };
        let (mut ba, mut bb) = (None, None);
        let (a, b) = (self.src_ref(0, &mut ba)?, self.src_ref(1, &mut bb)?);
        let class_f = |x: f64, y: f64| -> u32 {
            if x < y {
                0
            } else if x == y {
                1
            } else if x > y {
                2
            } else {
                3
            }
        };
        let ftz = inst.mods.ftz;
        // Comparisons are cheap and total: every lane is computed (results of lanes that do
        // not execute are never written back), and the results are predicates (0/1), in
        // the register convention already.
        let mut r = match ct {
            ScalarType::F32 => {
                let i = |v: u64| fl::read_f32(v, ftz);
                all(|l| ((table >> class_f(i(a[l]) as f64, i(b[l]) as f64)) & 1) as u64)
            }
            ScalarType::F64 => {
                all(|l| ((table >> class_f(fl::f64_of(a[l]), fl::f64_of(b[l]))) & 1) as u64)
            }
            ScalarType::F16 | ScalarType::Pred => {
                return Err(self.unsupported("comparison type"));
            }
            _ => {
                // Both operands are extended from the type's width inside the comparison
                // loop, with the signedness and the relation fixed outside it.
                let s = 64 - ct.bits();
                let sx = |v: u64| ((v << s) as i64) >> s;
                let zx = |v: u64| (v << s) >> s;
                if ct == ScalarType::S32 && !force_unsigned {
                    int_compare(table, a, b, |v| v as i32)
                } else if ct.is_signed() && !force_unsigned {
                    int_compare(table, a, b, sx)
                } else if ct.is_signed() {
                    int_compare(table, a, b, |v| sx(v) as u64)
                } else if ct.bits() == 32 {
                    int_compare(table, a, b, |v| v as u32)
                } else {
                    int_compare(table, a, b, zx)
                }
            }
        };
        // Optional boolean combine with a third predicate.
        let combine = |r: &mut Lanes, c: &Lanes, op: BoolOp| {
            lanes(m, |l| {
                let c = c[l] & 1;
                r[l] = match op {
                    BoolOp::And => r[l] & c,
                    BoolOp::Or => r[l] | c,
                    BoolOp::Xor => r[l] ^ c,
                };
            })
        };
        let c = match inst.mods.bool_op {
            Some(op) => Some((self.src(2)?, op)),
            None => None,
        };
        if inst.op == Opcode::Setp {
            if inst.dsts.len() > 1 {
                let mut q = all(|l| r[l] ^ 1);
                if let Some((c, op)) = &c {
                    combine(&mut r, c, *op);
                    combine(&mut q, c, *op);
                }
                self.put_raw(0, &r, m)?;
                self.put_raw(1, &q, m)
            } else {
                if let Some((c, op)) = &c {
                    combine(&mut r, c, *op);
                }
                self.put_raw(0, &r, m)
            }
        } else {
            if let Some((c, op)) = &c {
                combine(&mut r, c, *op);
            }
            let dty = inst.ty;
            let one = match dty {
                ScalarType::F32 => 0x3f80_0000,
                ScalarType::F64 => 0x3ff0_0000_0000_0000,
                _ => u64::MAX,
            };
            let d = map1(m, &r, |x| if x != 0 { one } else { 0 });
            self.put(0, &d, m, dty)
        }
    }

    // ---------------------------------------------------------------- conversions

    fn cvt(&mut self) -> Res<()> {
        let inst = self.inst();
        let m = self.executed;
        let dt = inst.ty;
        let st = inst.ty2.unwrap_or(dt);
        let rounding = inst.mods.rounding;
        let integral = matches!(
            rounding,
            Some(crate::ptx::ir::Rounding::Rni)
                | Some(crate::ptx::ir::Rounding::Rzi)
                | Some(crate::ptx::ir::Rounding::Rmi)
                | Some(crate::ptx::ir::Rounding::Rpi)
        );
        let r = Rnd::from(rounding);
        let (ftz, sat) = (inst.mods.ftz, inst.mods.sat);
        if dt == ScalarType::Pred || st == ScalarType::Pred {
            return Err(self.unsupported("cvt of .pred"));
        }
        let mut buf = None;
        let a = self.src_ref(0, &mut buf)?;
        // Source float value as f64 (exact for f16/f32), with ftz on f32 inputs.
        let fin = |v: u64| -> f64 {
            match st {
                ScalarType::F16 => fl::f16_to_f64(v as u16),
                ScalarType::F32 => {
                    let x = fl::f32_of(v);
                    (if ftz { fl::ftz32(x) } else { x }) as f64
                }
                _ => fl::f64_of(v),
            }
        };
        let d = match (st.is_float(), dt.is_float()) {
            (false, false) => {
                let (dbits, dsigned) = (dt.bits(), dt.is_signed());
                let ssigned = st.is_signed();
                map1(m, a, |x| {
                    let v = read_int(st, x);
                    if sat {
                        let w = if ssigned { v as i64 as i128 } else { v as i128 };
                        if dsigned {
                            it::clamp_signed(w, dbits)
                        } else {
                            it::clamp_unsigned(w, dbits)
                        }
                    } else {
                        v
                    }
                })
            }
            (true, false) => {
                // float → int: round to integral (default: toward zero), saturate, NaN → 0.
                let r = if rounding.is_none() { Rnd::Z } else { r };
                let (dbits, dsigned) = (dt.bits(), dt.is_signed());
                map1(m, a, |x| {
                    fl::f64_to_int(fl::round_integral64(fin(x), r), dbits, dsigned)
                })
            }
            (false, true) => {
                let ssigned = st.is_signed();
                map1(m, a, |x| {
                    let v = read_int(st, x);
                    let w = if ssigned { v as i64 as i128 } else { v as i128 };
                    match dt {
                        ScalarType::F32 => {
                            let f = fl::int_to_f32(w, r);
                            fl::canon32(if sat { fl::sat32(f) } else { f })
                        }
                        ScalarType::F64 => {
                            let f = fl::int_to_f64(w, r);
                            fl::canon64(if sat { fl::sat64(f) } else { f })
                        }
                        _ => {
                            let f = fl::int_to_f64(w, r);
                            fl::f64_to_f16(if sat { fl::sat64(f) } else { f }, r) as u64
                        }
                    }
                })
            }
            (true, true) => {
                map1(m, a, |x| {
                    let v = fin(x);
                    let v = if integral {
                        fl::round_integral64(v, r)
                    } else {
                        v
                    };
                    match dt {
                        ScalarType::F32 => {
                            // exact when narrowing from f32/f16 or after integral rounding
                            let f = if st == ScalarType::F64 && !integral {
                                fl::round_f32(v, 0.0, r)
                            } else {
                                v as f32
                            };
                            let f = if ftz { fl::ftz32(f) } else { f };
                            fl::canon32(if sat { fl::sat32(f) } else { f })
                        }
                        ScalarType::F64 => fl::canon64(if sat { fl::sat64(v) } else { v }),
                        _ => fl::f64_to_f16(if sat { fl::sat64(v) } else { v }, r) as u64,
                    }
                })
            }
        };
        self.put(0, &d, m, dt)
    }

    fn cvta(&mut self) -> Res<()> {
        use crate::address_map::{LOCAL_WINDOW, SHARED_WINDOW};
        let inst = self.inst();
        let m = self.executed;
        let bits = inst.ty.bits();
        let to = inst.mods.cvta_to;
        let window = match inst.mods.space {
            Some(StateSpace::Shared) => SHARED_WINDOW,
            Some(StateSpace::Local) => LOCAL_WINDOW,
            // global is identity-mapped; const and param are not reachable generically in
            // this model: identity as well.
            _ => 0,
        };
        let mut buf = None;
        let a = self.src_ref(0, &mut buf)?;
        let d = if to {
            map1(m, a, |x| x.wrapping_sub(window) & mask(bits))
        } else {
            map1(m, a, |x| x.wrapping_add(window) & mask(bits))
        };
        self.put(0, &d, m, inst.ty)
    }

    // ---------------------------------------------------------------- warp-level

    fn vote(&mut self) -> Res<()> {
        use crate::ptx::ir::VoteMode;
        let inst = self.inst();
        let m = self.executed;
        let mode = inst
            .mods
            .vote
            .ok_or_else(|| self.unsupported("vote without a mode"))?;
        let p = self.src(0)?;
        let member = if inst.srcs.len() > 1 {
            self.src(1)?[m.trailing_zeros() as usize] as u32
        } else {
            u32::MAX
        };
        let part = m & member;
        let mut set = 0u32;
        lanes(part, |l| set |= ((p[l] & 1) as u32) << l);
        let (v, ty) = match mode {
            VoteMode::All => ((set == part) as u64, ScalarType::Pred),
            VoteMode::Any => ((set != 0) as u64, ScalarType::Pred),
            VoteMode::Uni => ((set == 0 || set == part) as u64, ScalarType::Pred),
            VoteMode::Ballot => (set as u64, ScalarType::B32),
        };
        self.put(0, &[v; WARP_SIZE], m, ty)
    }

    fn shfl(&mut self) -> Res<()> {
        use crate::ptx::ir::ShflMode;
        let inst = self.inst();
        let m = self.executed;
        let mode = inst
            .mods
            .shfl
            .ok_or_else(|| self.unsupported("shfl without a mode"))?;
        let (a, b, c) = (self.src(0)?, self.src(1)?, self.src(2)?);
        let mut d = [0u64; WARP_SIZE];
        let mut p = [0u64; WARP_SIZE];
        lanes(m, |lane| {
            let lane_i = lane as i32;
            let bval = (b[lane] & 0x1f) as i32;
            let cv = c[lane] as u32;
            let cval = (cv & 0x1f) as i32;
            let segmask = ((cv >> 8) & 0x1f) as i32;
            let max_lane = (lane_i & segmask) | (cval & !segmask);
            let min_lane = lane_i & segmask;
            let (j, ok) = match mode {
                ShflMode::Up => {
                    let j = lane_i - bval;
                    (j, j >= max_lane)
                }
                ShflMode::Down => {
                    let j = lane_i + bval;
                    (j, j <= max_lane)
                }
                ShflMode::Bfly => {
                    let j = lane_i ^ bval;
                    (j, j <= max_lane)
                }
                ShflMode::Idx => {
                    let j = min_lane | (bval & !segmask);
                    (j, j <= max_lane)
                }
            };
            let src = if ok {
                j as usize & (WARP_SIZE - 1)
            } else {
                lane
            };
            d[lane] = a[src];
            p[lane] = ok as u64;
        });
        self.put(0, &d, m, inst.ty)?;
        if inst.dsts.len() > 1 {
            self.put(1, &p, m, ScalarType::Pred)?;
        }
        Ok(())
    }
}

/// Short PTX-like description of an instruction for fault messages.
pub(super) fn describe(i: &Instruction) -> String {
    let mut s = format!("{:?}", i.op).to_lowercase();
    if let Some(sp) = i.mods.space {
        s.push('.');
        s.push_str(&format!("{sp:?}").to_lowercase());
    }
    if let Some(a) = i.mods.atom {
        s.push('.');
        s.push_str(&format!("{a:?}").to_lowercase());
    }
    s.push('.');
    s.push_str(&format!("{:?}", i.ty).to_lowercase());
    if let Some(t) = i.ty2 {
        s.push('.');
        s.push_str(&format!("{t:?}").to_lowercase());
    }
    s
}

#[cfg(test)]
#[path = "semantics_tests.rs"]
mod tests;
