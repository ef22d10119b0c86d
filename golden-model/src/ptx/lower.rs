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
//! - `.local`: per-thread frame of the kernel, declaration order; the `.local` variables of an
//!   inlined device function are pushed on that frame for the call and popped after it, as a
//!   stack (see [`super::emit`]).
//!
//! Kernel bodies (scopes, names, labels, device-function calls) are lowered by
//! [`super::emit`]; this module lowers the module scope and one instruction at a time.

use std::collections::HashMap;

use super::emit::{self, KernelCx, Named, ScopeId};
use super::ir::*;
use super::parser::{
    scalar_type, state_space, AstFormal, AstFunc, AstImm, AstInst, AstModule, AstOperand,
    AstOperandKind, AstVar, FuncKind, InitVal, MemBase,
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

pub(super) fn align_up(v: u64, a: u64) -> u64 {
    let a = a.max(1);
    v.div_ceil(a).saturating_mul(a)
}

struct Layout {
    global: u64,
    konst: u64,
}

/// Module-wide lowering state.
pub(super) struct Ctx<'a> {
    pub(super) file: &'a str,
    pub(super) symbols: Vec<Symbol>,
    pub(super) module_syms: HashMap<String, SymbolId>,
    layout: Layout,
    pub(super) module_shared_end: u64,
    /// `.global`/`.const` variables declared in device-function bodies, by the (line, column)
    /// of their declaration: static storage, one per declaration however often (and from
    /// however many kernels) the function is inlined.
    pub(super) func_statics: HashMap<(u32, u32), SymbolId>,
}

impl Ctx<'_> {
    pub(super) fn err<T>(&self, loc: SrcLoc, msg: impl Into<String>) -> Result<T, PtxError> {
        Err(PtxError {
            file: self.file.to_string(),
            line: loc.line,
            col: loc.col,
            message: msg.into(),
        })
    }

    /// Creates the symbol of a variable; `offset` is assigned by the caller's layout.
    pub(super) fn make_symbol(&self, v: &AstVar) -> Result<Symbol, PtxError> {
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

    pub(super) fn add_static(&mut self, mut s: Symbol) -> SymbolId {
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
        func_statics: HashMap::new(),
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
    let funcs = function_table(&cx, ast)?;
    let mut kernels = Vec::new();
    for (i, f) in ast.funcs.iter().enumerate() {
        if f.kind == FuncKind::Entry {
            kernels.push(emit::lower_entry(&mut cx, ast, &funcs, i)?);
        }
    }
    Ok(Lowered {
        symbols: cx.symbols,
        kernels,
        global_bytes: cx.layout.global,
        const_bytes: cx.layout.konst,
    })
}

/// Every kernel and function name to the index of its definition in `ast.funcs` (or of its
/// declaration, if the module only declares it). A function may be declared any number of
/// times (clang declares a function before its first call) and defined once.
fn function_table(cx: &Ctx, ast: &AstModule) -> Result<HashMap<String, usize>, PtxError> {
    let mut table: HashMap<String, usize> = HashMap::new();
    for (i, f) in ast.funcs.iter().enumerate() {
        let Some(&j) = table.get(&f.name) else {
            table.insert(f.name.clone(), i);
            continue;
        };
        let g = &ast.funcs[j];
        match (f.kind, g.kind) {
            (FuncKind::Entry, FuncKind::Entry) => {
                return cx.err(f.loc, format!("duplicate kernel `{}`", f.name))
            }
            (FuncKind::Entry, _) | (_, FuncKind::Entry) => {
                return cx.err(
                    f.loc,
                    format!(
                        "`{}` is declared both as a kernel and as a function (line {})",
                        f.name, g.loc.line
                    ),
                )
            }
            _ => {}
        }
        if f.body.is_some() && g.body.is_some() {
            return cx.err(
                f.loc,
                format!(
                    "duplicate function `{}` (also defined at line {})",
                    f.name, g.loc.line
                ),
            );
        }
        if !same_signature(f, g) {
            return cx.err(
                f.loc,
                format!(
                    "`{}` does not match its declaration at line {} (parameters and return \
                     values must agree in number, kind and size)",
                    f.name, g.loc.line
                ),
            );
        }
        if f.body.is_some() {
            table.insert(f.name.clone(), i);
        }
    }
    Ok(table)
}

fn same_signature(a: &AstFunc, b: &AstFunc) -> bool {
    // (register or `.param`, bytes) of each formal.
    fn shape(list: &[AstFormal]) -> Vec<(bool, u64)> {
        list.iter()
            .map(|p| {
                let n: u64 = p.var.dims.iter().map(|&d| d.max(1)).product();
                let elem = p.var.ty.size_bytes() as u64 * p.var.vec as u64;
                (p.reg, n.saturating_mul(elem))
            })
            .collect()
    }
    shape(&a.rets) == shape(&b.rets) && shape(&a.params) == shape(&b.params)
}

pub(super) fn special_reg(name: &str) -> Option<SpecialReg> {
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
        "tex" => Tex,
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
            // `ret.uni`: a uniformity promise, like `bra.uni`.
            "uni" if op == Ret => true,
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

/// A `bra` whose label is resolved once the whole kernel is emitted (labels may be declared
/// after the branch, in any enclosing block): the label's name and the operand's location.
pub(super) type PendingLabel = (String, SrcLoc);

/// Lowers one instruction in scope `s`. A `bra` comes back with a placeholder target and its
/// label; `ld.param`/`st.param` of a call parameter held in a register come back as `mov`.
pub(super) fn lower_inst(
    kc: &mut KernelCx,
    s: ScopeId,
    i: &AstInst,
) -> Result<(Instruction, Option<PendingLabel>), PtxError> {
    use Opcode::*;
    let file = kc.cx.file;
    let err = |loc: SrcLoc, message: String| PtxError {
        file: file.to_string(),
        line: loc.line,
        col: loc.col,
        message,
    };
    let d = decode(&i.opcode).map_err(|m| err(i.loc, m))?;
    let guard = kc.guard(s, &i.guard)?;
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
    let mut label = None;
    // A call parameter as the memory operand (see `param_access` below).
    let mut param: Option<(Named, &str, SrcLoc)> = None;
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
                dsts.push(lower_dst(kc, s, f).map_err(|m| err(f.loc, m))?);
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
                MemBase::Reg(n) | MemBase::Sym(n) => {
                    match kc.resolve(s, n).map_err(|m| err(o.loc, m))? {
                        Some(Named::Reg(id, ty)) => {
                            if ty == ScalarType::Pred {
                                return Err(err(
                                    o.loc,
                                    format!("predicate `{n}` used as an address"),
                                ));
                            }
                            AddrBase::Reg(id)
                        }
                        Some(Named::Sym(id)) => AddrBase::Symbol(id),
                        Some(Named::Special(_)) => {
                            return Err(err(
                                o.loc,
                                format!("special register `{n}` used as an address"),
                            ))
                        }
                        Some(p @ (Named::ParamReg(..) | Named::ParamMem(..))) => {
                            param = Some((p, n.as_str(), o.loc));
                            AddrBase::Absolute
                        }
                        None => return Err(err(o.loc, unknown_name(n))),
                    }
                }
                MemBase::Abs => AddrBase::Absolute,
            };
            addr = Some(Address {
                base,
                offset: *offset,
            });
            continue;
        }
        if d.op == Bra {
            let (AstOperandKind::Sym(l) | AstOperandKind::Reg(l)) = &o.kind else {
                return Err(err(o.loc, "expected a label as branch target".into()));
            };
            if target.is_some() {
                return Err(err(o.loc, "too many operands for `bra`".into()));
            }
            // Resolved by the caller once every label is known.
            target = Some(u32::MAX);
            label = Some((l.clone(), o.loc));
            continue;
        }
        let mut flat: Vec<&AstOperand> = Vec::new();
        match &o.kind {
            AstOperandKind::Vec(v) if matches!(d.op, St | Mov) => flat.extend(v.iter()),
            _ => flat.push(o),
        }
        for f in flat {
            let ty = src_type(&d, src_idx);
            srcs.push(lower_src(kc, s, f, ty).map_err(|m| err(f.loc, m))?);
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
        // Built by `emit` (calls of built-ins, `tex`), never decoded from text.
        Call | Tex => false,
    };
    if !ok {
        return Err(err(
            i.loc,
            format!("wrong number or kind of operands for `{}`", i.opcode),
        ));
    }
    let class = class_of(&d);
    let mut inst = Instruction {
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
    };
    if let Some((p, name, loc)) = param {
        param_access(&mut inst, p, name).map_err(|m| err(loc, m))?;
    }
    Ok((inst, label))
}

/// Rewrites an access to a call parameter (a call site's `.param` or a device function's
/// formal `.param`; see `emit`): one held in a register becomes a `mov` of the access's type
/// (`ld.param.u8` reads the low byte zero-extended, exactly as the load would from the
/// little-endian bytes); one held in the thread's local frame becomes a `.local` access.
fn param_access(inst: &mut Instruction, p: Named, name: &str) -> Result<(), String> {
    use Opcode::*;
    if !matches!(inst.op, Ld | St) || inst.mods.space != Some(StateSpace::Param) {
        return Err(format!(
            "call parameter `{name}` can only be accessed with `ld.param` and `st.param`"
        ));
    }
    let offset = inst.addr.map_or(0, |a| a.offset);
    if let (St, Named::ParamReg(.., true) | Named::ParamMem(_, true)) = (inst.op, p) {
        return Err(format!(
            "`{name}` is an input parameter of its function, which PTX does not allow writing"
        ));
    }
    match p {
        Named::ParamReg(reg, pty, _) => {
            if inst.mods.vec != 1 || offset != 0 {
                return Err(format!(
                    "`{name}` is a scalar call parameter (held in a register): it is accessed \
                     whole, at offset 0 and without a vector"
                ));
            }
            if inst.ty.size_bytes() > pty.size_bytes() {
                return Err(format!(
                    "{}-byte access to the {}-byte call parameter `{name}`",
                    inst.ty.size_bytes(),
                    pty.size_bytes()
                ));
            }
            if inst.op == Ld {
                inst.srcs = vec![Operand::Reg(reg)];
            } else {
                inst.dsts = vec![Operand::Reg(reg)];
            }
            inst.op = Mov;
            inst.mods = Modifiers::default();
            inst.addr = None;
            inst.class = InstClass::Alu;
        }
        Named::ParamMem(sym, _) => {
            inst.mods.space = Some(StateSpace::Local);
            inst.addr = Some(Address {
                base: AddrBase::Symbol(sym),
                offset,
            });
        }
        _ => unreachable!("only call parameters are rewritten"),
    }
    Ok(())
}

/// The error for a name that resolves to nothing: registers are usually `%`-named.
pub(super) fn unknown_name(n: &str) -> String {
    if n.starts_with('%') {
        format!("unknown register `{n}`")
    } else {
        format!("unknown symbol `{n}`")
    }
}

pub(super) fn lower_dst(kc: &mut KernelCx, s: ScopeId, o: &AstOperand) -> Result<Operand, String> {
    match &o.kind {
        AstOperandKind::Sink => Ok(Operand::Sink),
        AstOperandKind::Reg(r) | AstOperandKind::Sym(r) => match kc.resolve(s, r)? {
            Some(Named::Reg(id, _)) => Ok(Operand::Reg(id)),
            Some(Named::Special(_)) => Err(format!("cannot write special register `{r}`")),
            Some(Named::ParamReg(..) | Named::ParamMem(..)) => Err(format!(
                "call parameter `{r}` is written with `st.param`, not as a destination"
            )),
            Some(Named::Sym(_)) => Err(format!("`{r}` is a variable, not a register")),
            None => Err(format!("unknown register `{r}`")),
        },
        _ => Err("expected a destination register".into()),
    }
}

pub(super) fn lower_src(
    kc: &mut KernelCx,
    s: ScopeId,
    o: &AstOperand,
    ty: ScalarType,
) -> Result<Operand, String> {
    match &o.kind {
        AstOperandKind::Reg(r) | AstOperandKind::Sym(r) => match kc.resolve(s, r)? {
            Some(Named::Reg(id, _)) => Ok(Operand::Reg(id)),
            Some(Named::Special(sp)) => Ok(Operand::Special(sp)),
            Some(Named::Sym(id)) => Ok(Operand::SymbolAddr(id)),
            Some(Named::ParamReg(..) | Named::ParamMem(..)) => Err(format!(
                "call parameter `{r}` is read with `ld.param` (its address cannot be taken)"
            )),
            None => Err(unknown_name(r)),
        },
        AstOperandKind::Imm(imm) => Ok(Operand::Imm(imm_bits(imm, ty)?)),
        AstOperandKind::Sink => Err("`_` is only allowed as a destination".into()),
        AstOperandKind::NotReg(r) => {
            Err(format!("negated predicate operand `!{r}` is not supported"))
        }
        AstOperandKind::Mem { .. } => Err("unexpected memory operand".into()),
        AstOperandKind::Vec(_) => Err("unexpected vector operand".into()),
        AstOperandKind::Pair(_, _) => Err("unexpected `|` operand pair".into()),
        AstOperandKind::Tex { .. } => Err("unexpected texture operand".into()),
    }
}
