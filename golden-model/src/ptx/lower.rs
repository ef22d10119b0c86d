//! AST to IR: decodes opcodes and modifiers, lays out symbols, resolves labels, registers and
//! immediates. Registers stay *virtual* here (one id per PTX register that is used); the
//! register allocator ([`super::regalloc`]) maps them to physical slots afterwards.
//!
//! Memory layout choices:
//! - `.param`: declaration order, each at its alignment (explicit `.align` or element size).
//! - `.global` / `.const` (module or kernel scope): one module image each, declaration order.
//! - `.shared`: every module-scope static `.shared` variable is laid out first, in declaration
//!   order, and counts in *every* kernel's `shared_bytes`; each kernel's own `.shared`
//!   variables follow. A module-scope `.extern .shared` array (dynamic shared memory) gets a
//!   per-kernel symbol (same name) at the end of that kernel's static segment, aligned; the
//!   kernel's `shared_bytes` then includes the alignment padding, so dynamic shared memory
//!   starts exactly at `shared_bytes`.
//! - `.local`: per-thread frame of the kernel, declaration order.

use std::collections::HashMap;

use super::ir::*;
use super::parser::{
    scalar_type, state_space, AstEntry, AstImm, AstInst, AstModule, AstOperand, AstOperandKind,
    AstStmt, AstVar, InitVal, MemBase,
};
use crate::error::PtxError;

/// Register file class of a virtual register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegClass {
    /// Up to 32 bits: one 32-bit register.
    R32,
    /// 64 bits: an aligned pair of 32-bit registers.
    R64,
    /// Predicate file.
    Pred,
}

#[derive(Debug, Clone)]
pub struct VReg {
    pub name: String,
    pub ty: ScalarType,
    pub class: RegClass,
}

/// A kernel whose instructions still use virtual register ids (indices into `vregs`).
#[derive(Debug, Clone)]
pub struct VirtualKernel {
    pub kernel: Kernel,
    pub vregs: Vec<VReg>,
}

pub struct Lowered {
    pub symbols: Vec<Symbol>,
    pub kernels: Vec<VirtualKernel>,
    pub global_bytes: u64,
    pub const_bytes: u64,
}

fn align_up(v: u64, a: u64) -> u64 {
    let a = a.max(1);
    v.div_ceil(a).saturating_mul(a)
}

struct Layout {
    global: u64,
    konst: u64,
}

struct Ctx<'a> {
    file: &'a str,
    symbols: Vec<Symbol>,
    module_syms: HashMap<String, SymbolId>,
    layout: Layout,
    module_shared_end: u64,
}

impl Ctx<'_> {
    fn err<T>(&self, loc: SrcLoc, msg: impl Into<String>) -> Result<T, PtxError> {
        Err(PtxError {
            file: self.file.to_string(),
            line: loc.line,
            col: loc.col,
            message: msg.into(),
        })
    }

    /// Creates the symbol of a variable; `offset` is assigned by the caller's layout.
    fn make_symbol(&self, v: &AstVar) -> Result<Symbol, PtxError> {
        let elem = v.ty.size_bytes() as u64 * v.vec as u64;
        let mut count: u64 = 1;
        let mut unsized_dim = false;
        for &d in &v.dims {
            if d == 0 {
                unsized_dim = true;
            } else {
                count = count.saturating_mul(d);
            }
        }
        let align = v.align.unwrap_or(elem as u32).max(1);
        let mut init = Vec::new();
        if let Some(vals) = &v.init {
            if unsized_dim {
                count = (vals.len() as u64).div_ceil(v.vec as u64).max(1);
            }
            if count.saturating_mul(elem) > 1 << 26 {
                return self.err(
                    v.loc,
                    format!("initialised variable `{}` is too large", v.name),
                );
            }
            let scalars = count.saturating_mul(v.vec as u64);
            if vals.len() as u64 > scalars {
                return self.err(v.loc, format!("too many initialisers for `{}`", v.name));
            }
            for val in vals {
                let bits = init_bits(val, v.ty).map_err(|m| PtxError {
                    file: self.file.to_string(),
                    line: v.loc.line,
                    col: v.loc.col,
                    message: format!("{m} in initialiser of `{}`", v.name),
                })?;
                init.extend_from_slice(&bits.to_le_bytes()[..v.ty.size_bytes() as usize]);
            }
            init.resize((scalars * v.ty.size_bytes() as u64) as usize, 0);
        } else if unsized_dim {
            count = 0;
        }
        let size = count.saturating_mul(elem);
        if size > 1 << 32 {
            return self.err(v.loc, format!("variable `{}` is too large", v.name));
        }
        // Scalars keep their type (launch arguments are checked against it); arrays and
        // vectors (e.g. by-value struct params) are only sized.
        let ty = (count == 1 && v.vec == 1 && !unsized_dim).then_some(v.ty);
        Ok(Symbol {
            name: v.name.clone(),
            space: v.space,
            offset: 0,
            size,
            align,
            ty,
            init,
        })
    }

    fn add_static(&mut self, mut s: Symbol) -> SymbolId {
        match s.space {
            StateSpace::Global => {
                s.offset = align_up(self.layout.global, s.align as u64);
                self.layout.global = s.offset + s.size;
            }
            StateSpace::Const => {
                s.offset = align_up(self.layout.konst, s.align as u64);
                self.layout.konst = s.offset + s.size;
            }
            _ => {}
        }
        self.symbols.push(s);
        (self.symbols.len() - 1) as SymbolId
    }
}

fn init_bits(v: &InitVal, ty: ScalarType) -> Result<u64, String> {
    let imm = match v {
        InitVal::Int(i) => AstImm::Int(*i),
        InitVal::F32Bits(b) => AstImm::F32Bits(*b),
        InitVal::F64Bits(b) => AstImm::F64Bits(*b),
        InitVal::Float(f) => AstImm::Float(*f),
    };
    imm_bits(&imm, ty)
}

/// Converts an immediate to the raw bits of `ty`: integers are truncated to the type's width
/// (sign-extended to 64 bits for signed types), floats are IEEE bits of the type.
pub fn imm_bits(imm: &AstImm, ty: ScalarType) -> Result<u64, String> {
    use ScalarType::*;
    let bits = ty.bits();
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    Ok(match ty {
        F32 => match *imm {
            AstImm::Int(v) => (v as f32).to_bits() as u64,
            AstImm::F32Bits(b) => b as u64,
            AstImm::F64Bits(b) => (f64::from_bits(b) as f32).to_bits() as u64,
            AstImm::Float(f) => (f as f32).to_bits() as u64,
        },
        F64 => match *imm {
            AstImm::Int(v) => (v as f64).to_bits(),
            AstImm::F32Bits(b) => (f32::from_bits(b) as f64).to_bits(),
            AstImm::F64Bits(b) => b,
            AstImm::Float(f) => f.to_bits(),
        },
        Pred => match *imm {
            AstImm::Int(v) => (v != 0) as u64,
            _ => return Err("float immediate for a predicate".into()),
        },
        _ => {
            let raw = match *imm {
                AstImm::Int(v) => v as u64,
                AstImm::F32Bits(b) if bits == 32 => b as u64,
                AstImm::F64Bits(b) if bits == 64 => b,
                _ => return Err(format!("float immediate for an integer type `.{ty:?}`")),
            };
            let v = raw & mask;
            if ty.is_signed() && bits < 64 && (v >> (bits - 1)) & 1 == 1 {
                v | !mask
            } else {
                v
            }
        }
    })
}

pub fn lower(file: &str, ast: &AstModule) -> Result<Lowered, PtxError> {
    let mut cx = Ctx {
        file,
        symbols: Vec::new(),
        module_syms: HashMap::new(),
        layout: Layout {
            global: 0,
            konst: 0,
        },
        module_shared_end: 0,
    };
    for v in &ast.vars {
        if cx.module_syms.contains_key(&v.name) {
            return cx.err(v.loc, format!("duplicate symbol `{}`", v.name));
        }
        let mut s = cx.make_symbol(v)?;
        match v.space {
            StateSpace::Shared if v.is_extern => {
                // Dynamic shared memory: placed per kernel (see module docs).
                s.size = 0;
            }
            StateSpace::Shared => {
                s.offset = align_up(cx.module_shared_end, s.align as u64);
                cx.module_shared_end = s.offset + s.size;
            }
            StateSpace::Global | StateSpace::Const => {
                if v.is_extern {
                    return cx.err(
                        v.loc,
                        format!("`.extern` {:?} variables are not supported", v.space),
                    );
                }
            }
            _ => {
                return cx.err(
                    v.loc,
                    format!("module-scope `{:?}` variables are not supported", v.space),
                );
            }
        }
        let id = cx.add_static(s);
        cx.module_syms.insert(v.name.clone(), id);
    }
    let mut kernels = Vec::new();
    let mut names = HashMap::new();
    for e in &ast.entries {
        if names.insert(e.name.clone(), ()).is_some() {
            return cx.err(e.loc, format!("duplicate kernel `{}`", e.name));
        }
        kernels.push(lower_entry(&mut cx, e)?);
    }
    Ok(Lowered {
        symbols: cx.symbols,
        kernels,
        global_bytes: cx.layout.global,
        const_bytes: cx.layout.konst,
    })
}

/// Declared registers of one kernel: single names and `%r<N>` ranges, with lazily assigned
/// virtual ids (only registers that are used get one).
struct Regs {
    singles: HashMap<String, ScalarType>,
    ranges: HashMap<String, (ScalarType, u32)>,
    ids: HashMap<String, RegId>,
    vregs: Vec<VReg>,
}

impl Regs {
    fn lookup(&mut self, name: &str) -> Result<(RegId, ScalarType), String> {
        if let Some(&id) = self.ids.get(name) {
            return Ok((id, self.vregs[id as usize].ty));
        }
        let ty = if let Some(&t) = self.singles.get(name) {
            Some(t)
        } else {
            let digits = name
                .bytes()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .count();
            let (prefix, num) = name.split_at(name.len() - digits);
            if digits == 0 || (digits > 1 && num.starts_with('0')) {
                None
            } else {
                match (self.ranges.get(prefix), num.parse::<u64>()) {
                    (Some(&(t, n)), Ok(k)) if k < n as u64 => Some(t),
                    _ => None,
                }
            }
        };
        let Some(ty) = ty else {
            return Err(format!("unknown register `{name}`"));
        };
        if self.vregs.len() >= u16::MAX as usize {
            return Err("too many registers in one kernel (more than 65535)".into());
        }
        let class = match ty {
            ScalarType::Pred => RegClass::Pred,
            t if t.bits() > 32 => RegClass::R64,
            _ => RegClass::R32,
        };
        let id = self.vregs.len() as RegId;
        self.vregs.push(VReg {
            name: name.to_string(),
            ty,
            class,
        });
        self.ids.insert(name.to_string(), id);
        Ok((id, ty))
    }
}

fn special_reg(name: &str) -> Option<SpecialReg> {
    use SpecialReg::*;
    let comp = |s: &str| match s {
        "x" => Some(0u8),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    if let Some((base, c)) = name.split_once('.') {
        let c = comp(c)?;
        return match base {
            "%tid" => Some(Tid(c)),
            "%ntid" => Some(Ntid(c)),
            "%ctaid" => Some(Ctaid(c)),
            "%nctaid" => Some(Nctaid(c)),
            _ => None,
        };
    }
    Some(match name {
        "%laneid" => LaneId,
        "%warpid" => WarpId,
        "%nwarpid" => NWarpId,
        "%smid" => SmId,
        "%nsmid" => NSmId,
        "%gridid" => GridId,
        "%lanemask_eq" => LaneMaskEq,
        "%lanemask_le" => LaneMaskLe,
        "%lanemask_lt" => LaneMaskLt,
        "%lanemask_ge" => LaneMaskGe,
        "%lanemask_gt" => LaneMaskGt,
        "%clock" => Clock,
        "%clock64" => Clock64,
        _ => return None,
    })
}

struct KernelCx<'a, 'b> {
    cx: &'a mut Ctx<'b>,
    local_syms: HashMap<String, SymbolId>,
    /// Per-kernel placement of module-scope `.extern .shared` symbols.
    extern_shared: HashMap<SymbolId, SymbolId>,
    shared_end: u64,
    regs: Regs,
    labels: HashMap<String, u32>,
}

impl KernelCx<'_, '_> {
    fn symbol(&mut self, name: &str) -> Option<SymbolId> {
        if let Some(&id) = self.local_syms.get(name) {
            return Some(id);
        }
        let id = *self.cx.module_syms.get(name)?;
        let s = &self.cx.symbols[id as usize];
        if s.space == StateSpace::Shared && s.size == 0 {
            if let Some(&c) = self.extern_shared.get(&id) {
                return Some(c);
            }
            let mut clone = s.clone();
            clone.offset = align_up(self.shared_end, clone.align as u64);
            self.shared_end = clone.offset;
            self.cx.symbols.push(clone);
            let c = (self.cx.symbols.len() - 1) as SymbolId;
            self.extern_shared.insert(id, c);
            return Some(c);
        }
        Some(id)
    }
}

fn lower_entry(cx: &mut Ctx, e: &AstEntry) -> Result<VirtualKernel, PtxError> {
    let mut kc = KernelCx {
        cx,
        local_syms: HashMap::new(),
        extern_shared: HashMap::new(),
        shared_end: 0,
        regs: Regs {
            singles: HashMap::new(),
            ranges: HashMap::new(),
            ids: HashMap::new(),
            vregs: Vec::new(),
        },
        labels: HashMap::new(),
    };
    // Parameters.
    let mut params = Vec::new();
    let mut param_bytes = 0u64;
    for p in &e.params {
        if kc.local_syms.contains_key(&p.name) {
            return kc
                .cx
                .err(p.loc, format!("duplicate parameter `{}`", p.name));
        }
        let mut s = kc.cx.make_symbol(p)?;
        s.offset = align_up(param_bytes, s.align as u64);
        param_bytes = s.offset + s.size;
        kc.cx.symbols.push(s);
        let id = (kc.cx.symbols.len() - 1) as SymbolId;
        kc.local_syms.insert(p.name.clone(), id);
        params.push(id);
    }
    // Kernel-scope variables.
    let mut shared_end = kc.cx.module_shared_end;
    let mut local_end = 0u64;
    for v in &e.vars {
        if kc.local_syms.contains_key(&v.name) {
            return kc.cx.err(v.loc, format!("duplicate symbol `{}`", v.name));
        }
        let mut s = kc.cx.make_symbol(v)?;
        let id = match v.space {
            StateSpace::Shared => {
                s.offset = align_up(shared_end, s.align as u64);
                shared_end = s.offset + s.size;
                kc.cx.symbols.push(s);
                (kc.cx.symbols.len() - 1) as SymbolId
            }
            StateSpace::Local => {
                s.offset = align_up(local_end, s.align as u64);
                local_end = s.offset + s.size;
                kc.cx.symbols.push(s);
                (kc.cx.symbols.len() - 1) as SymbolId
            }
            _ => kc.cx.add_static(s),
        };
        kc.local_syms.insert(v.name.clone(), id);
    }
    kc.shared_end = shared_end;
    // Registers.
    for r in &e.regs {
        let dup = match r.count {
            Some(n) => kc.regs.ranges.insert(r.name.clone(), (r.ty, n)).is_some(),
            None => kc.regs.singles.insert(r.name.clone(), r.ty).is_some(),
        };
        if dup || special_reg(&r.name).is_some() {
            return kc.cx.err(
                r.loc,
                format!("duplicate or reserved register name `{}`", r.name),
            );
        }
    }
    // Labels -> instruction indices.
    let mut n = 0u32;
    for s in &e.body {
        match s {
            AstStmt::Label(l, loc) => {
                if kc.labels.insert(l.clone(), n).is_some() {
                    return kc.cx.err(*loc, format!("duplicate label `{l}`"));
                }
            }
            AstStmt::Inst(_) => n += 1,
        }
    }
    let mut insts = Vec::with_capacity(n as usize + 1);
    for s in &e.body {
        if let AstStmt::Inst(i) = s {
            insts.push(lower_inst(&mut kc, i)?);
        }
    }
    // Falling off the end (or a label at the very end) behaves like `ret`: make it explicit so
    // that every PC is an instruction.
    let ends_closed = insts.last().is_some_and(|i: &Instruction| {
        i.guard.is_none() && matches!(i.op, Opcode::Ret | Opcode::Exit | Opcode::Bra)
    });
    if !ends_closed || kc.labels.values().any(|&t| t as usize == insts.len()) {
        insts.push(Instruction {
            guard: None,
            op: Opcode::Ret,
            ty: ScalarType::B32,
            ty2: None,
            mods: Modifiers::default(),
            dsts: vec![],
            srcs: vec![],
            addr: None,
            target: None,
            rpc: None,
            class: InstClass::Ctrl,
            loc: e.end_loc,
        });
    }
    if insts.len() > (u32::MAX - 1) as usize {
        return kc.cx.err(e.loc, "kernel too large");
    }
    let kernel = Kernel {
        name: e.name.clone(),
        params,
        param_bytes,
        insts,
        num_regs: 0,
        regs_per_thread: 0,
        preds_per_thread: 0,
        shared_bytes: kc.shared_end,
        local_bytes: local_end,
        loc: e.loc,
    };
    Ok(VirtualKernel {
        kernel,
        vregs: kc.regs.vregs,
    })
}

/// Opcode and modifiers decoded from the dotted opcode text.
struct Decoded {
    op: Opcode,
    ty: ScalarType,
    ty2: Option<ScalarType>,
    mods: Modifiers,
    sync: bool,
}

/// The base opcode of the first part of an opcode text (`ld` of `ld.global.u32`).
pub fn opcode_of(base: &str) -> Option<Opcode> {
    use Opcode::*;
    Some(match base {
        "mov" => Mov,
        "cvt" => Cvt,
        "cvta" => Cvta,
        "selp" => Selp,
        "setp" => Setp,
        "set" => Set,
        "add" => Add,
        "sub" => Sub,
        "mul" => Mul,
        "mad" => Mad,
        "fma" => Fma,
        "div" => Div,
        "rem" => Rem,
        "abs" => Abs,
        "neg" => Neg,
        "min" => Min,
        "max" => Max,
        "sqrt" => Sqrt,
        "rsqrt" => Rsqrt,
        "rcp" => Rcp,
        "sin" => Sin,
        "cos" => Cos,
        "lg2" => Lg2,
        "ex2" => Ex2,
        "copysign" => Copysign,
        "testp" => Testp,
        "and" => And,
        "or" => Or,
        "xor" => Xor,
        "not" => Not,
        "cnot" => Cnot,
        "shl" => Shl,
        "shr" => Shr,
        "popc" => Popc,
        "clz" => Clz,
        "brev" => Brev,
        "bfe" => Bfe,
        "bfi" => Bfi,
        "prmt" => Prmt,
        "shf" => Shf,
        "ld" => Ld,
        "st" => St,
        "atom" => Atom,
        "red" => Red,
        "bra" => Bra,
        "ret" => Ret,
        "exit" => Exit,
        "bar" | "barrier" => BarSync,
        "membar" | "fence" => Membar,
        "vote" => Vote,
        "shfl" => Shfl,
        _ => return None,
    })
}

fn decode(text: &str) -> Result<Decoded, String> {
    use Opcode::*;
    let mut parts = text.split('.');
    let base = parts.next().unwrap_or("");
    let Some(op) = opcode_of(base) else {
        return Err(format!("unsupported opcode `{text}`"));
    };
    let mut types = Vec::new();
    let mut m = Modifiers::default();
    let mut sync = false;
    let mut bar_kind_seen = false;
    let is_mem = matches!(op, Ld | St | Atom | Red);
    let float_arith = matches!(
        op,
        Cvt | Add
            | Sub
            | Mul
            | Mad
            | Fma
            | Div
            | Sqrt
            | Rsqrt
            | Rcp
            | Sin
            | Cos
            | Lg2
            | Ex2
            | Abs
            | Neg
            | Min
            | Max
            | Setp
            | Set
            | Testp
            | Copysign
    );
    for p in parts {
        if let Some(t) = scalar_type(p) {
            types.push(t);
            continue;
        }
        let ok = match p {
            "rn" | "rz" | "rm" | "rp" | "rni" | "rzi" | "rmi" | "rpi"
                if matches!(op, Cvt | Add | Sub | Mul | Mad | Fma | Div | Sqrt | Rcp) =>
            {
                m.rounding = Some(match p {
                    "rn" => Rounding::Rn,
                    "rz" => Rounding::Rz,
                    "rm" => Rounding::Rm,
                    "rp" => Rounding::Rp,
                    "rni" => Rounding::Rni,
                    "rzi" => Rounding::Rzi,
                    "rmi" => Rounding::Rmi,
                    _ => Rounding::Rpi,
                });
                true
            }
            "ftz" if float_arith => {
                m.ftz = true;
                true
            }
            "sat" if matches!(op, Cvt | Add | Sub | Mul | Mad | Fma) => {
                m.sat = true;
                true
            }
            "approx" if matches!(op, Div | Sqrt | Rsqrt | Rcp | Sin | Cos | Lg2 | Ex2) => {
                m.approx = true;
                true
            }
            // div.full.f32: approx false, rounding none (see module docs of ir).
            "full" if op == Div => true,
            "lo" | "hi" | "wide" if matches!(op, Mul | Mad) => {
                m.mul_mode = Some(match p {
                    "lo" => MulMode::Lo,
                    "hi" => MulMode::Hi,
                    _ => MulMode::Wide,
                });
                true
            }
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "lo" | "ls" | "hi" | "hs" | "equ" | "neu"
            | "ltu" | "leu" | "gtu" | "geu" | "num" | "nan"
                if matches!(op, Setp | Set) && m.cmp.is_none() =>
            {
                m.cmp = Some(match p {
                    "eq" => CmpOp::Eq,
                    "ne" => CmpOp::Ne,
                    "lt" => CmpOp::Lt,
                    "le" => CmpOp::Le,
                    "gt" => CmpOp::Gt,
                    "ge" => CmpOp::Ge,
                    "lo" => CmpOp::Lo,
                    "ls" => CmpOp::Ls,
                    "hi" => CmpOp::Hi,
                    "hs" => CmpOp::Hs,
                    "equ" => CmpOp::Equ,
                    "neu" => CmpOp::Neu,
                    "ltu" => CmpOp::Ltu,
                    "leu" => CmpOp::Leu,
                    "gtu" => CmpOp::Gtu,
                    "geu" => CmpOp::Geu,
                    "num" => CmpOp::Num,
                    _ => CmpOp::Nan,
                });
                true
            }
            "and" | "or" | "xor" if matches!(op, Setp | Set) && m.cmp.is_some() => {
                m.bool_op = Some(match p {
                    "and" => BoolOp::And,
                    "or" => BoolOp::Or,
                    _ => BoolOp::Xor,
                });
                true
            }
            "global" | "shared" | "local" | "const" | "param"
                if (is_mem || op == Cvta) && m.space.is_none() =>
            {
                let s = state_space(p);
                if matches!(op, Atom | Red)
                    && !matches!(s, Some(StateSpace::Global | StateSpace::Shared))
                {
                    false
                } else {
                    m.space = s;
                    true
                }
            }
            "v2" | "v4" if matches!(op, Ld | St) => {
                m.vec = if p == "v2" { 2 } else { 4 };
                true
            }
            // Cache / ordering qualifiers: accepted, no effect on the functional model.
            "nc" if op == Ld => true,
            "volatile" | "weak" | "relaxed" | "acquire" | "release" | "ca" | "cg" | "cs" | "lu"
            | "cv" | "wb" | "wt"
                if is_mem =>
            {
                true
            }
            "cta" | "gpu" | "sys" if matches!(op, Atom | Red | Membar) => true,
            "gl" if op == Membar => true,
            "sc" | "acq_rel" if op == Membar => true,
            "add" | "min" | "max" | "inc" | "dec" | "exch" | "cas" | "and" | "or" | "xor"
                if matches!(op, Atom | Red) && m.atom.is_none() =>
            {
                m.atom = Some(match p {
                    "add" => AtomOp::Add,
                    "min" => AtomOp::Min,
                    "max" => AtomOp::Max,
                    "inc" => AtomOp::Inc,
                    "dec" => AtomOp::Dec,
                    "exch" => AtomOp::Exch,
                    "cas" => AtomOp::Cas,
                    "and" => AtomOp::And,
                    "or" => AtomOp::Or,
                    _ => AtomOp::Xor,
                });
                true
            }
            "all" | "any" | "uni" | "ballot" if op == Vote && m.vote.is_none() => {
                m.vote = Some(match p {
                    "all" => VoteMode::All,
                    "any" => VoteMode::Any,
                    "uni" => VoteMode::Uni,
                    _ => VoteMode::Ballot,
                });
                true
            }
            "up" | "down" | "bfly" | "idx" if op == Shfl && m.shfl.is_none() => {
                m.shfl = Some(match p {
                    "up" => ShflMode::Up,
                    "down" => ShflMode::Down,
                    "bfly" => ShflMode::Bfly,
                    _ => ShflMode::Idx,
                });
                true
            }
            "sync" if matches!(op, Vote | Shfl) => {
                sync = true;
                true
            }
            "sync" if op == BarSync => {
                bar_kind_seen = true;
                true
            }
            "aligned" if op == BarSync => true,
            "uni" if op == Bra => {
                m.uni = true;
                true
            }
            "to" if op == Cvta => {
                m.cvta_to = true;
                true
            }
            "l" | "r" if op == Shf => {
                m.shf_left = p == "l";
                true
            }
            "wrap" | "clamp" if op == Shf => {
                m.shf_wrap = p == "wrap";
                true
            }
            "finite" | "infinite" | "number" | "notanumber" | "normal" | "subnormal"
                if op == Testp =>
            {
                m.testp = match p {
                    "finite" => 0,
                    "infinite" => 1,
                    "number" => 2,
                    "notanumber" => 3,
                    "normal" => 4,
                    _ => 5,
                };
                true
            }
            _ => false,
        };
        if !ok {
            return Err(format!("unsupported modifier `.{p}` in `{text}`"));
        }
    }
    if op == BarSync && base == "bar" && !bar_kind_seen && text != "bar" {
        return Err(format!("unsupported opcode `{text}`"));
    }
    if op == BarSync && base == "barrier" && !bar_kind_seen {
        return Err(format!("unsupported opcode `{text}`"));
    }
    let want_types = match op {
        Cvt | Set => 2,
        Bra | Ret | Exit | BarSync | Membar => 0,
        _ => 1,
    };
    if types.len() != want_types {
        return Err(format!(
            "`{text}` needs {want_types} type suffix{}",
            if want_types == 1 { "" } else { "es" }
        ));
    }
    match op {
        Setp | Set if m.cmp.is_none() => return Err(format!("missing comparison in `{text}`")),
        Atom | Red if m.atom.is_none() => return Err(format!("missing operation in `{text}`")),
        Vote if m.vote.is_none() => return Err(format!("missing mode in `{text}`")),
        Shfl if m.shfl.is_none() => return Err(format!("missing mode in `{text}`")),
        Cvta if m.space.is_none() => return Err(format!("missing state space in `{text}`")),
        Ld | St => {
            if m.vec == 0 {
                m.vec = 1;
            }
            if m.space.is_none() {
                m.space = Some(StateSpace::Generic);
            }
        }
        Atom | Red if m.space.is_none() => m.space = Some(StateSpace::Generic),
        _ => {}
    }
    let (ty, ty2) = match op {
        Cvt | Set => (types[0], Some(types[1])),
        Selp => (types[0], Some(types[0])),
        _ => (types.first().copied().unwrap_or(ScalarType::B32), None),
    };
    Ok(Decoded {
        op,
        ty,
        ty2,
        mods: m,
        sync,
    })
}

fn double_width(t: ScalarType) -> ScalarType {
    use ScalarType::*;
    match t {
        S16 => S32,
        U16 => U32,
        S32 => S64,
        U32 => U64,
        B16 => B32,
        B32 => B64,
        other => other,
    }
}

/// The type an immediate in source position `idx` is converted to.
fn src_type(d: &Decoded, idx: usize) -> ScalarType {
    use Opcode::*;
    let ty = d.ty;
    match d.op {
        Cvt => d.ty2.unwrap_or(ty),
        Setp => {
            if idx < 2 {
                ty
            } else {
                ScalarType::Pred
            }
        }
        Set => {
            if idx < 2 {
                d.ty2.unwrap_or(ty)
            } else {
                ScalarType::Pred
            }
        }
        Selp => {
            if idx < 2 {
                ty
            } else {
                ScalarType::Pred
            }
        }
        Shl | Shr | Bfe if idx >= 1 => ScalarType::U32,
        Bfi | Shf if idx >= 2 => ScalarType::U32,
        Shfl if idx >= 1 => ScalarType::U32,
        Vote => {
            if idx == 0 {
                ScalarType::Pred
            } else {
                ScalarType::B32
            }
        }
        Mad if d.mods.mul_mode == Some(MulMode::Wide) && idx == 2 => double_width(ty),
        BarSync => ScalarType::U32,
        _ => ty,
    }
}

fn class_of(d: &Decoded) -> InstClass {
    use Opcode::*;
    let f64_involved = d.ty == ScalarType::F64 || d.ty2 == Some(ScalarType::F64);
    match d.op {
        Ld | St | Atom | Red => InstClass::Mem,
        Bra | Ret | Exit | BarSync | Membar | Vote | Shfl => InstClass::Ctrl,
        Div | Rem if !d.ty.is_float() => InstClass::Div,
        Div if d.ty == ScalarType::F64 => InstClass::Div,
        Div if d.mods.approx || d.mods.rounding.is_none() => InstClass::Sfu,
        Div => InstClass::Div,
        Sqrt | Rsqrt | Rcp | Sin | Cos | Lg2 | Ex2 if f64_involved => InstClass::Dp,
        Sqrt | Rsqrt | Rcp | Sin | Cos | Lg2 | Ex2 => InstClass::Sfu,
        Mov | Selp | Cvta => InstClass::Alu,
        _ if f64_involved => InstClass::Dp,
        Fma | Mad if d.ty.is_float() => InstClass::Fma,
        _ => InstClass::Alu,
    }
}

fn lower_inst(kc: &mut KernelCx, i: &AstInst) -> Result<Instruction, PtxError> {
    use Opcode::*;
    let file = kc.cx.file;
    let err = |loc: SrcLoc, message: String| PtxError {
        file: file.to_string(),
        line: loc.line,
        col: loc.col,
        message,
    };
    let d = decode(&i.opcode).map_err(|m| err(i.loc, m))?;
    let guard = match &i.guard {
        Some(g) => {
            let (reg, ty) = kc.regs.lookup(&g.reg).map_err(|m| err(g.loc, m))?;
            if ty != ScalarType::Pred {
                return Err(err(
                    g.loc,
                    format!("guard `{}` is not a predicate register", g.reg),
                ));
            }
            Some(Guard {
                reg,
                negate: g.negate,
            })
        }
        None => None,
    };
    let ops = &i.operands;
    // Which operands are destinations, which the memory operand.
    let (n_dst_ops, mem_idx) = match d.op {
        Ld => (1, Some(1)),
        St => (0, Some(0)),
        Atom => (1, Some(1)),
        Red => (0, Some(0)),
        Bra | Ret | Exit | BarSync | Membar => (0, None),
        _ => (1, None),
    };
    let mut dsts = Vec::new();
    let mut srcs = Vec::new();
    let mut addr = None;
    let mut target = None;
    if ops.len() < n_dst_ops + mem_idx.map_or(0, |m| m + 1 - n_dst_ops) {
        return Err(err(i.loc, format!("too few operands for `{}`", i.opcode)));
    }
    let mut src_idx = 0usize;
    for (k, o) in ops.iter().enumerate() {
        if k < n_dst_ops {
            let mut flat: Vec<&AstOperand> = Vec::new();
            match &o.kind {
                AstOperandKind::Vec(v) if matches!(d.op, Ld | Mov) => flat.extend(v.iter()),
                AstOperandKind::Pair(a, b) if matches!(d.op, Setp | Shfl) => {
                    flat.push(a);
                    flat.push(b);
                }
                _ => flat.push(o),
            }
            for f in flat {
                dsts.push(lower_dst(kc, f).map_err(|m| err(f.loc, m))?);
            }
            continue;
        }
        if Some(k) == mem_idx {
            let AstOperandKind::Mem { base, offset } = &o.kind else {
                return Err(err(
                    o.loc,
                    format!("expected a memory operand `[...]` for `{}`", i.opcode),
                ));
            };
            let base = match base {
                MemBase::Reg(r) => {
                    let (id, ty) = kc.regs.lookup(r).map_err(|m| err(o.loc, m))?;
                    if ty == ScalarType::Pred {
                        return Err(err(o.loc, format!("predicate `{r}` used as an address")));
                    }
                    AddrBase::Reg(id)
                }
                MemBase::Sym(s) => AddrBase::Symbol(
                    kc.symbol(s)
                        .ok_or_else(|| err(o.loc, format!("unknown symbol `{s}`")))?,
                ),
                MemBase::Abs => AddrBase::Absolute,
            };
            addr = Some(Address {
                base,
                offset: *offset,
            });
            continue;
        }
        if d.op == Bra {
            let AstOperandKind::Sym(l) = &o.kind else {
                return Err(err(o.loc, "expected a label as branch target".into()));
            };
            if target.is_some() {
                return Err(err(o.loc, "too many operands for `bra`".into()));
            }
            target = Some(
                *kc.labels
                    .get(l)
                    .ok_or_else(|| err(o.loc, format!("undefined label `{l}`")))?,
            );
            continue;
        }
        let mut flat: Vec<&AstOperand> = Vec::new();
        match &o.kind {
            AstOperandKind::Vec(v) if matches!(d.op, St | Mov) => flat.extend(v.iter()),
            _ => flat.push(o),
        }
        for f in flat {
            let ty = src_type(&d, src_idx);
            srcs.push(lower_src(kc, f, ty).map_err(|m| err(f.loc, m))?);
            src_idx += 1;
        }
    }
    // Operand counts, so that the executor can index without checks.
    let nd = dsts.len();
    let ns = srcs.len();
    let vec = d.mods.vec as usize;
    let ok = match d.op {
        Mov => (nd == 1 && (1..=4).contains(&ns)) || ((1..=4).contains(&nd) && ns == 1),
        Cvt | Cvta | Abs | Neg | Not | Cnot | Popc | Clz | Brev | Sqrt | Rsqrt | Rcp | Sin
        | Cos | Lg2 | Ex2 | Testp => nd == 1 && ns == 1,
        Add | Sub | Mul | Div | Rem | Min | Max | And | Or | Xor | Shl | Shr | Copysign => {
            nd == 1 && ns == 2
        }
        Mad | Fma | Selp | Bfe | Prmt | Shf => nd == 1 && ns == 3,
        Bfi => nd == 1 && ns == 4,
        Setp => (nd == 1 || nd == 2) && ns == 2 + d.mods.bool_op.is_some() as usize,
        Set => nd == 1 && ns == 2 + d.mods.bool_op.is_some() as usize,
        Ld => nd == vec && ns == 0 && addr.is_some(),
        St => nd == 0 && ns == vec && addr.is_some(),
        Atom => nd == 1 && addr.is_some() && ns == 1 + (d.mods.atom == Some(AtomOp::Cas)) as usize,
        Red => nd == 0 && ns == 1 && addr.is_some() && d.mods.atom != Some(AtomOp::Cas),
        Bra => target.is_some(),
        Ret | Exit | Membar => nd == 0 && ns == 0,
        BarSync => nd == 0 && (ns == 1 || ns == 2),
        Vote => nd == 1 && ns == 1 + d.sync as usize,
        Shfl => (nd == 1 || nd == 2) && ns == 3 + d.sync as usize,
    };
    if !ok {
        return Err(err(
            i.loc,
            format!("wrong number or kind of operands for `{}`", i.opcode),
        ));
    }
    let class = class_of(&d);
    Ok(Instruction {
        guard,
        op: d.op,
        ty: d.ty,
        ty2: d.ty2,
        mods: d.mods,
        dsts,
        srcs,
        addr,
        target,
        rpc: None,
        class,
        loc: i.guard.as_ref().map_or(i.loc, |g| g.loc),
    })
}

fn lower_dst(kc: &mut KernelCx, o: &AstOperand) -> Result<Operand, String> {
    match &o.kind {
        AstOperandKind::Sink => Ok(Operand::Sink),
        AstOperandKind::Reg(r) => {
            if special_reg(r).is_some() {
                return Err(format!("cannot write special register `{r}`"));
            }
            Ok(Operand::Reg(kc.regs.lookup(r)?.0))
        }
        _ => Err("expected a destination register".into()),
    }
}

fn lower_src(kc: &mut KernelCx, o: &AstOperand, ty: ScalarType) -> Result<Operand, String> {
    match &o.kind {
        AstOperandKind::Reg(r) => {
            if let Some(s) = special_reg(r) {
                return Ok(Operand::Special(s));
            }
            Ok(Operand::Reg(kc.regs.lookup(r)?.0))
        }
        AstOperandKind::Imm(imm) => Ok(Operand::Imm(imm_bits(imm, ty)?)),
        AstOperandKind::Sym(s) => kc
            .symbol(s)
            .map(Operand::SymbolAddr)
            .ok_or_else(|| format!("unknown symbol `{s}`")),
        AstOperandKind::Sink => Err("`_` is only allowed as a destination".into()),
        AstOperandKind::NotReg(r) => {
            Err(format!("negated predicate operand `!{r}` is not supported"))
        }
        AstOperandKind::Mem { .. } => Err("unexpected memory operand".into()),
        AstOperandKind::Vec(_) => Err("unexpected vector operand".into()),
        AstOperandKind::Pair(_, _) => Err("unexpected `|` operand pair".into()),
    }
}
