//! The lowered form of a PTX module that the functional and timing models execute.
//!
//! The parser turns PTX text into this IR once per module: labels are resolved to
//! instruction indices (the "PC" of this model is an instruction index, not a byte address),
//! virtual registers are mapped to physical register slots by the liveness-based allocator,
//! and every branch carries its reconvergence PC (immediate post-dominator).
//!
//! Register values are stored as raw `u64` bit patterns whatever their PTX type: an `.f32`
//! lives in the low 32 bits, a predicate is 0 or 1. The instruction's type says how to read
//! them. This keeps the per-warp register file a flat `Vec<u64>` (struct of arrays: one
//! row of `WARP_SIZE` lanes per physical register).

use std::collections::HashMap;

/// Sentinel reconvergence PC meaning "end of kernel" (spec reconvergence-dpe.md A1).
pub const END_PC: u32 = u32::MAX;

/// Physical register slot index into a warp's register file.
pub type RegId = u16;

/// PTX scalar types. `Pred` is the `.pred` register type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F32,
    F64,
    Pred,
}

impl ScalarType {
    /// Size in bytes (a predicate counts as 1).
    pub fn size_bytes(self) -> u32 {
        use ScalarType::*;
        match self {
            B8 | U8 | S8 | Pred => 1,
            B16 | U16 | S16 | F16 => 2,
            B32 | U32 | S32 | F32 => 4,
            B64 | U64 | S64 | F64 => 8,
        }
    }
    pub fn bits(self) -> u32 {
        self.size_bytes() * 8
    }
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
        )
    }
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F16 | ScalarType::F32 | ScalarType::F64)
    }
}

/// PTX state spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Param,
    Global,
    Shared,
    Local,
    Const,
    /// Generic addressing (no state-space qualifier on ld/st/atom).
    Generic,
}

/// Special (read-only) registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    Tid(u8), // 0=x 1=y 2=z
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    LaneMaskEq,
    LaneMaskLe,
    LaneMaskLt,
    LaneMaskGe,
    LaneMaskGt,
    Clock,
    Clock64,
}

/// A source or destination operand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    Reg(RegId),
    /// Immediate raw bits, already converted to the instruction's type (floats as IEEE bits).
    Imm(u64),
    Special(SpecialReg),
    /// Address of a symbol (e.g. `mov.u64 %rd1, smem_var;`), resolved at load time to the
    /// symbol's address in its state space.
    SymbolAddr(SymbolId),
    /// `_` sink operand (e.g. atom with no use of the result).
    Sink,
}

/// Base of a memory operand `[base+offset]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AddrBase {
    Reg(RegId),
    Symbol(SymbolId),
    /// Absolute address `[imm]`.
    Absolute,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Address {
    pub base: AddrBase,
    pub offset: i64,
}

pub type SymbolId = u32;

/// A named object with an address: kernel parameter, module/kernel variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Symbol {
    pub name: String,
    pub space: StateSpace,
    /// Byte offset inside its space (param: in the param buffer; shared: in the CTA's static
    /// shared segment; local: in the thread's local frame; global/const: module image).
    pub offset: u64,
    pub size: u64,
    pub align: u32,
    /// Declared element type (kernel parameters use it to type-check launch arguments).
    pub ty: Option<ScalarType>,
    /// Initial bytes (global/const variables with initialisers); empty means zero-filled.
    pub init: Vec<u8>,
}

/// Base operation. Type and modifiers live in [`Instruction`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    // data movement / conversion
    Mov,
    Cvt,
    Cvta,
    Selp,
    Setp,
    Set,
    // integer and float arithmetic
    Add,
    Sub,
    Mul,
    Mad,
    Fma,
    Div,
    Rem,
    Abs,
    Neg,
    Min,
    Max,
    // float special functions
    Sqrt,
    Rsqrt,
    Rcp,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Copysign,
    Testp,
    // bit manipulation
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Shl,
    Shr,
    Popc,
    Clz,
    Brev,
    Bfe,
    Bfi,
    Prmt,
    Shf,
    // memory
    Ld,
    St,
    Atom,
    Red,
    // control
    Bra,
    Ret,
    Exit,
    BarSync,
    Membar,
    Vote,
    Shfl,
    /// A call of a function the model provides natively (`mods.builtin` says which): the
    /// arguments are `srcs`, the return value (if any) `dsts[0]` (see `exec::builtins`).
    Call,
    /// `tex.1d.v4.DTYPE.s32 {d0..d3}, [handle, {x}]`: a fetch from the linear memory bound
    /// to a texture reference; `srcs` = [handle, x], `ty` = DTYPE (see `exec::builtins`).
    Tex,
}

/// A function the model provides natively, called from PTX but defined in no PTX module:
/// CUDA's device-side `vprintf`, and libdevice's `__nv_*` math functions (an index into
/// `exec::libdevice::NV_FUNCS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    Vprintf,
    Nv(u16),
}

/// Integer multiply mode (`mul.lo`, `mul.hi`, `mul.wide`, same for `mad`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MulMode {
    Lo,
    Hi,
    Wide,
}

/// Floating-point / conversion rounding modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Float rounding: to nearest even, toward zero, toward -inf, toward +inf.
    Rn,
    Rz,
    Rm,
    Rp,
    /// Float-to-integer rounding variants (`cvt.rni` etc.).
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// Comparison operator of `setp`/`set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    // unsigned integer comparisons
    Lo,
    Ls,
    Hi,
    Hs,
    // float: ordered/unordered
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// Boolean combine of `setp.CMP.BOOL` (`setp.lt.and.s32 p, a, b, c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    Exch,
    Cas,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// All modifiers an instruction may carry. Unused fields are at their defaults.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Modifiers {
    pub rounding: Option<Rounding>,
    pub ftz: bool,
    pub sat: bool,
    pub approx: bool,
    pub mul_mode: Option<MulMode>,
    pub cmp: Option<CmpOp>,
    pub bool_op: Option<BoolOp>,
    pub space: Option<StateSpace>,
    /// Vector width of ld/st (1, 2 or 4).
    pub vec: u8,
    pub atom: Option<AtomOp>,
    pub vote: Option<VoteMode>,
    pub shfl: Option<ShflMode>,
    /// `.uni` on bra: the compiler promised a uniform branch.
    pub uni: bool,
    /// `cvta.to.X` (true) versus `cvta.X` (false).
    pub cvta_to: bool,
    /// `shf.l` (true) or `shf.r` (false); `.wrap` vs `.clamp` in `shf_wrap`.
    pub shf_left: bool,
    pub shf_wrap: bool,
    /// `testp.OP` selector: 0 finite, 1 infinite, 2 number, 3 notanumber, 4 normal, 5 subnormal.
    pub testp: u8,
    /// The function of a `call` of a built-in (`Opcode::Call`).
    pub builtin: Option<Builtin>,
}

/// Guard predicate `@%p` or `@!%p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    pub reg: RegId,
    pub negate: bool,
}

/// Source position, for error and fault reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SrcLoc {
    pub line: u32,
    pub col: u32,
}

/// Classification used by the timing model to pick a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstClass {
    /// Integer / simple float ALU.
    Alu,
    /// Single-precision multiply-add class.
    Fma,
    /// Double precision.
    Dp,
    /// Special function unit (sqrt, rcp, sin, div.f32 approximations ...).
    Sfu,
    /// Integer/float divide and remainder (long, software-like sequences on real GPUs).
    Div,
    /// Memory access through the LSU.
    Mem,
    /// Branch / exit / barrier / vote / shuffle handled at issue.
    Ctrl,
}

/// One lowered PTX instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    pub guard: Option<Guard>,
    pub op: Opcode,
    /// Primary type (e.g. `.s32` of `add.s32`, destination type of `cvt`, value type of ld/st).
    pub ty: ScalarType,
    /// Secondary type: source type of `cvt`, comparison type of `set`, operand type of `selp`.
    pub ty2: Option<ScalarType>,
    pub mods: Modifiers,
    /// Destinations: usually one; up to four for vector loads; two for `setp p|q`.
    pub dsts: Vec<Operand>,
    /// Source operands in PTX order (for st: the value(s) to store; address is in `addr`).
    pub srcs: Vec<Operand>,
    /// Memory operand of ld/st/atom/red.
    pub addr: Option<Address>,
    /// Branch target PC (instruction index) for `bra`.
    pub target: Option<u32>,
    /// Reconvergence PC (immediate post-dominator) for `bra`; `END_PC` if the branch's
    /// IPDOM is the kernel exit. Filled for every `bra`, uniform or not.
    pub rpc: Option<u32>,
    /// Pipeline class for the timing model. (bar.sync keeps its barrier id in `srcs[0]`
    /// and its optional thread count in `srcs[1]`.)
    pub class: InstClass,
    pub loc: SrcLoc,
}

/// A kernel ready to run.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    /// Parameters in declaration order: symbol ids into `Module::symbols` (space Param).
    pub params: Vec<SymbolId>,
    /// Total size of the param buffer in bytes.
    pub param_bytes: u64,
    pub insts: Vec<Instruction>,
    /// Number of physical register slots (each holds up to 64 bits) after allocation.
    pub num_regs: u16,
    /// Registers per thread as the hardware would count them: 32-bit registers, a 64-bit
    /// value counting as two, predicates not counted (they live in a separate file).
    pub regs_per_thread: u32,
    /// Predicate registers per thread after allocation.
    pub preds_per_thread: u32,
    /// Static shared memory bytes per CTA (kernel-scope and module-scope .shared).
    pub shared_bytes: u64,
    /// Local memory bytes per thread.
    pub local_bytes: u64,
    /// Source location of the `.entry` directive.
    pub loc: SrcLoc,
}

/// A parsed and lowered PTX module.
#[derive(Debug, Clone)]
pub struct Module {
    /// File name used in error and fault messages.
    pub file: String,
    pub kernels: Vec<Kernel>,
    /// Every symbol of the module (params of all kernels, globals, consts, shared, local).
    pub symbols: Vec<Symbol>,
    /// Module-scope `.global` image size (bytes) and `.const` bank size.
    pub global_bytes: u64,
    pub const_bytes: u64,
    pub kernel_index: HashMap<String, usize>,
}

impl Module {
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernel_index.get(name).map(|&i| &self.kernels[i])
    }
}
