//! Kernel bodies: lexical scopes, names, labels, and device-function calls.
//!
//! **Scopes.** Every `{ }` block is a scope. A name declared in a block (`.reg`, `.local`,
//! `.shared`, `.global`, `.const`, a call's `.param`, a label) is visible in the whole block
//! and its nested blocks, and shadows the same name of an enclosing block; sibling blocks may
//! declare the same names. Inline-asm helpers rely on exactly this (`{ .reg .pred p; ... }` and
//! block-local labels, pasted once per use), and clang puts every call's scratch `.param`s in a
//! block of its own. A declaration gets its own virtual register (or storage), so a shadowing
//! register is a different register in the lowered program. Within one block, declaration
//! order does not matter (a register may be used above its `.reg`, as before). A branch
//! resolves its label in the innermost enclosing block that declares it; failing that, a
//! label of the same function declared in exactly one other block (a jump into a block).
//!
//! **Names.** Whether a name is a register, a variable or a label is decided by its
//! declaration, not by a `%`: `P1`, `$r1` and `temp_param_reg` are registers if declared with
//! `.reg`. Lookup order: special registers (`%tid.x`), then each enclosing scope (its
//! registers, then its variables), then module-scope variables.
//!
//! **Calls are inlined.** Each `call` is replaced by the callee's body, lowered again at that
//! call site with fresh registers, labels and `.local` storage. Why inlining rather than a
//! real call/return in the SIMT model:
//! - the reconvergence hardware stays as the specs describe it (the `simt_stack_spe` and
//!   `simt_stack_dpe` units and their RTL know nothing of calls): a call/return in the model
//!   would need a return-address stack per warp and reconvergence across returns, a change to
//!   every unit, its RTL and its co-simulation for a feature the specs do not have;
//! - the IPDOM analysis ([`super::cfg`]) sees one ordinary CFG per kernel, so a branch inside
//!   a device function reconverges at its post-dominator in that inlined copy, and a `ret`
//!   is a branch to the end of the inlined body, whose IPDOM is computed like any other;
//! - register allocation sees the whole kernel, so registers per thread (and occupancy)
//!   include the callee's, as ptxas would report them after inlining (which it does by
//!   default for most device functions).
//!
//! What it costs: recursion cannot be inlined and is refused with an error naming the cycle
//! (ptxas needs a stack for it); indirect calls (function pointers) are refused; the code
//! grows with every call site (inlining may add at most [`MAX_INLINED_INSTS`] instructions to
//! a kernel). A device function that is declared or defined but never called is ignored, and
//! so is a statement of its body the model does not support.
//!
//! **Built-ins.** A call of a function the module declares but does not define is refused,
//! except for the functions the model provides natively: `vprintf` (device `printf`) and the
//! libdevice `__nv_*` functions of `exec::libdevice`. The declaration must match the
//! built-in's signature; the call becomes one `Call` instruction (arguments in `srcs`, the
//! return value in `dsts`). `tex.1d.v4.T.s32` becomes a `Tex` instruction (see
//! `exec::builtins`).
//!
//! **Parameters.** A scalar `.param` of a call (the call site's scratch `.param`, or the
//! callee's formal `.param`) lives in a virtual register: `st.param` and `ld.param` of it
//! become `mov`s, as they become register moves after ptxas. The callee's formal input
//! `.param`s are the call site's registers themselves (PTX forbids writing an input `.param`),
//! and its return `.param`s are the registers that receive them, unless that register is also
//! an input (then the result is copied out after the body). A formal `.reg` parameter (the
//! pre-ABI form) is a fresh register that the argument is copied into. An aggregate `.param`
//! (`.param .align 8 .b8 p[16]`, a struct by value) lives in the thread's `.local` frame and
//! its accesses become `.local` accesses. The callee's `.local` variables are pushed on the
//! kernel's local frame for the call and popped after it (a stack), so the frame is as deep
//! as the deepest chain of calls, not the sum of all calls.

use std::collections::HashMap;

use super::ir::*;
use super::lower::{
    align_up, imm_bits, lower_dst, lower_inst, lower_src, special_reg, unknown_name, Ctx, RegClass,
    VReg, VirtualKernel,
};
use super::parser::{
    AstBlock, AstCall, AstFormal, AstGuard, AstInst, AstModule, AstOperand, AstOperandKind,
    AstStmt, AstVar, FuncKind,
};
use crate::error::PtxError;

/// Most instructions the inlined calls may add to one kernel: a bound on the memory a module
/// can make the front end use (a chain of functions each calling the next twice doubles the
/// code per level, so a small module could otherwise expand without bound). The kernel's own
/// instructions are bounded by the module's size limit.
pub const MAX_INLINED_INSTS: usize = 1 << 20;

/// Deepest nesting of blocks and inlined calls together: the emitter recurses once per
/// level, so this bounds its stack use.
const MAX_NESTING: u32 = 256;

pub(super) type ScopeId = usize;
type LabelId = usize;

/// What a variable name of a scope stands for.
#[derive(Debug, Clone, Copy)]
enum Binding {
    /// Memory with an address: a kernel parameter, a `.shared`/`.local`/`.global`/`.const`.
    Sym(SymbolId),
    /// A scalar call parameter held in a register (given on first use). `input`: a device
    /// function's formal input, which PTX does not let the function write.
    ParamReg {
        ty: ScalarType,
        reg: Option<RegId>,
        input: bool,
    },
    /// An aggregate call parameter in the thread's `.local` frame (`input` as above).
    ParamMem { sym: SymbolId, input: bool },
}

/// What a name means at one point of a body.
#[derive(Debug, Clone, Copy)]
pub(super) enum Named {
    Reg(RegId, ScalarType),
    Special(SpecialReg),
    Sym(SymbolId),
    /// A call parameter: see [`Binding`] (the `bool` is `input`).
    ParamReg(RegId, ScalarType, bool),
    ParamMem(SymbolId, bool),
}

#[derive(Debug, Default)]
struct Scope {
    parent: Option<ScopeId>,
    /// The function instance (the kernel, or one inlined call) the block belongs to: its
    /// index in `KernelCx::instance_labels`.
    instance: usize,
    /// Single registers: type and virtual register (given on first use).
    regs: HashMap<String, (ScalarType, Option<RegId>)>,
    /// `%r<N>` ranges by prefix: type and count.
    ranges: HashMap<String, (ScalarType, u32)>,
    /// Members of `ranges` in use.
    range_regs: HashMap<String, (RegId, ScalarType)>,
    vars: HashMap<String, Binding>,
    labels: HashMap<String, LabelId>,
}

/// The function being emitted: the kernel itself, or one inlined call of a device function.
struct Frame {
    instance: usize,
    /// In an inlined function: the label at the end of its body, where `ret` branches.
    ret_label: Option<LabelId>,
}

/// A branch whose target is resolved when the whole kernel has been emitted.
struct Fixup {
    inst: usize,
    target: FixTarget,
    loc: SrcLoc,
}

enum FixTarget {
    /// A label by name, looked up from the branch's scope.
    Named { scope: ScopeId, name: String },
    /// A label the emitter made (the end of an inlined body, the skip of a guarded call).
    Label(LabelId),
}

/// Per-kernel lowering state.
pub(super) struct KernelCx<'a, 'b> {
    pub(super) cx: &'a mut Ctx<'b>,
    ast: &'a AstModule,
    /// Function name -> index of its definition (or declaration) in `ast.funcs`.
    funcs: &'a HashMap<String, usize>,
    kernel_name: &'a str,
    kernel_loc: SrcLoc,
    scopes: Vec<Scope>,
    vregs: Vec<VReg>,
    insts: Vec<Instruction>,
    label_pc: Vec<Option<u32>>,
    fixups: Vec<Fixup>,
    /// Every label of each function instance being emitted, by name (for jumps into a
    /// block): a stack, the kernel first, the innermost inlined call last. An instance's
    /// branches are resolved when it ends, and its scopes and labels dropped, so the front
    /// end's memory follows the depth of calls, not their number.
    instance_labels: Vec<HashMap<String, Vec<LabelId>>>,
    /// Per-kernel copies of module-scope `.extern .shared` symbols, in order of first use;
    /// they are placed after every static `.shared` variable once the kernel is emitted.
    extern_shared: Vec<(SymbolId, SymbolId)>,
    shared_end: u64,
    /// `.shared` variables of device-function bodies, by declaration (line, column): one per
    /// kernel, shared by every inlined copy (static storage, like a module-scope one).
    func_shared: HashMap<(u32, u32), SymbolId>,
    /// Top of the thread's `.local` frame, and its high-water mark (the frame's size).
    local_top: u64,
    local_max: u64,
    /// Functions being inlined, outermost first (a call to one of them is recursion); the
    /// kernel itself is the first.
    inline_stack: Vec<usize>,
    /// Instructions emitted by inlined calls so far.
    inlined: usize,
    depth: u32,
}

/// Lowers kernel `ast.funcs[fi]` with every device-function call inlined.
pub(super) fn lower_entry(
    cx: &mut Ctx,
    ast: &AstModule,
    funcs: &HashMap<String, usize>,
    fi: usize,
) -> Result<VirtualKernel, PtxError> {
    let e = &ast.funcs[fi];
    let Some(body) = &e.body else {
        return cx.err(
            e.loc,
            "kernel declarations without a body are not supported",
        );
    };
    let shared_end = cx.module_shared_end;
    let mut kc = KernelCx {
        cx,
        ast,
        funcs,
        kernel_name: &e.name,
        kernel_loc: e.loc,
        scopes: Vec::new(),
        vregs: Vec::new(),
        insts: Vec::new(),
        label_pc: Vec::new(),
        fixups: Vec::new(),
        instance_labels: Vec::new(),
        extern_shared: Vec::new(),
        shared_end,
        func_shared: HashMap::new(),
        local_top: 0,
        local_max: 0,
        inline_stack: vec![fi],
        inlined: 0,
        depth: 0,
    };
    let instance = kc.new_instance();
    let root = kc.new_scope(None, instance);
    // Parameters share the scope of the body's outermost declarations.
    let mut params = Vec::new();
    let mut param_bytes = 0u64;
    for p in &e.params {
        let p = &p.var;
        if kc.scopes[root].vars.contains_key(&p.name) {
            return kc
                .cx
                .err(p.loc, format!("duplicate parameter `{}`", p.name));
        }
        let mut s = kc.cx.make_symbol(p)?;
        s.offset = align_up(param_bytes, s.align as u64);
        param_bytes = s.offset + s.size;
        kc.cx.symbols.push(s);
        let id = (kc.cx.symbols.len() - 1) as SymbolId;
        kc.scopes[root]
            .vars
            .insert(p.name.clone(), Binding::Sym(id));
        params.push(id);
    }
    let frame = Frame {
        instance,
        ret_label: None,
    };
    kc.emit_block(body, root, &frame, false)?;
    kc.resolve_fixups(0)?;
    // Dynamic shared memory starts after every static `.shared` variable (see `lower`).
    for &(_, c) in &kc.extern_shared {
        let s = &mut kc.cx.symbols[c as usize];
        s.offset = align_up(kc.shared_end, s.align as u64);
        kc.shared_end = s.offset;
    }
    let mut insts = std::mem::take(&mut kc.insts);
    // Falling off the end (or a label at the very end) behaves like `ret`: make it explicit so
    // that every PC is an instruction.
    let ends_closed = insts.last().is_some_and(|i: &Instruction| {
        i.guard.is_none() && matches!(i.op, Opcode::Ret | Opcode::Exit | Opcode::Bra)
    });
    let end = insts.len() as u32;
    if !ends_closed || kc.label_pc.contains(&Some(end)) {
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
            loc: body.end_loc,
        });
    }
    if insts.len() > (u32::MAX - 1) as usize {
        return kc.err(e.loc, "kernel too large");
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
        local_bytes: kc.local_max,
        loc: e.loc,
    };
    Ok(VirtualKernel {
        kernel,
        vregs: kc.vregs,
    })
}

impl KernelCx<'_, '_> {
    fn err<T>(&self, loc: SrcLoc, msg: impl Into<String>) -> Result<T, PtxError> {
        self.cx.err(loc, msg)
    }

    fn new_instance(&mut self) -> usize {
        self.instance_labels.push(HashMap::new());
        self.instance_labels.len() - 1
    }

    fn new_scope(&mut self, parent: Option<ScopeId>, instance: usize) -> ScopeId {
        self.scopes.push(Scope {
            parent,
            instance,
            ..Scope::default()
        });
        self.scopes.len() - 1
    }

    fn new_label(&mut self) -> LabelId {
        self.label_pc.push(None);
        self.label_pc.len() - 1
    }

    fn here(&self) -> Option<u32> {
        Some(self.insts.len() as u32)
    }

    fn new_vreg(&mut self, name: &str, ty: ScalarType) -> Result<RegId, String> {
        if self.vregs.len() >= u16::MAX as usize {
            return Err(
                "too many registers in one kernel (more than 65535, device-function calls \
                 inlined)"
                    .into(),
            );
        }
        let class = match ty {
            ScalarType::Pred => RegClass::Pred,
            t if t.bits() > 32 => RegClass::R64,
            _ => RegClass::R32,
        };
        self.vregs.push(VReg {
            name: name.to_string(),
            ty,
            class,
        });
        Ok((self.vregs.len() - 1) as RegId)
    }

    fn push(&mut self, inst: Instruction) -> Result<(), PtxError> {
        if self.inline_stack.len() > 1 {
            if self.inlined >= MAX_INLINED_INSTS {
                return self.err(
                    self.kernel_loc,
                    format!(
                        "the device-function calls of kernel `{}` add more than \
                         {MAX_INLINED_INSTS} instructions once inlined",
                        self.kernel_name
                    ),
                );
            }
            self.inlined += 1;
        }
        self.insts.push(inst);
        Ok(())
    }

    /// One more level of blocks or calls (see [`MAX_NESTING`]); `leave` undoes it.
    fn enter(&mut self, loc: SrcLoc) -> Result<(), PtxError> {
        if self.depth >= MAX_NESTING {
            return self.err(
                loc,
                format!("blocks and calls nested more than {MAX_NESTING} deep"),
            );
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ------------------------------------------------------------------ names

    /// What `name` means in scope `s` (`None`: nothing by that name). A register or a
    /// register-held parameter gets its virtual register on first use.
    pub(super) fn resolve(&mut self, s: ScopeId, name: &str) -> Result<Option<Named>, String> {
        if let Some(sp) = special_reg(name) {
            return Ok(Some(Named::Special(sp)));
        }
        let mut cur = Some(s);
        while let Some(id) = cur {
            if let Some(&(ty, reg)) = self.scopes[id].regs.get(name) {
                let r = match reg {
                    Some(r) => r,
                    None => {
                        let r = self.new_vreg(name, ty)?;
                        self.scopes[id].regs.insert(name.to_string(), (ty, Some(r)));
                        r
                    }
                };
                return Ok(Some(Named::Reg(r, ty)));
            }
            if let Some(&(r, ty)) = self.scopes[id].range_regs.get(name) {
                return Ok(Some(Named::Reg(r, ty)));
            }
            if let Some(ty) = range_member(&self.scopes[id].ranges, name) {
                let r = self.new_vreg(name, ty)?;
                self.scopes[id].range_regs.insert(name.to_string(), (r, ty));
                return Ok(Some(Named::Reg(r, ty)));
            }
            if let Some(&b) = self.scopes[id].vars.get(name) {
                return Ok(Some(match b {
                    Binding::Sym(x) => Named::Sym(x),
                    Binding::ParamMem { sym, input } => Named::ParamMem(sym, input),
                    Binding::ParamReg {
                        ty,
                        reg: Some(r),
                        input,
                    } => Named::ParamReg(r, ty, input),
                    Binding::ParamReg {
                        ty,
                        reg: None,
                        input,
                    } => {
                        let r = self.new_vreg(name, ty)?;
                        self.scopes[id].vars.insert(
                            name.to_string(),
                            Binding::ParamReg {
                                ty,
                                reg: Some(r),
                                input,
                            },
                        );
                        Named::ParamReg(r, ty, input)
                    }
                }));
            }
            cur = self.scopes[id].parent;
        }
        Ok(self.module_symbol(name).map(Named::Sym))
    }

    /// A register by name (guards and the like).
    pub(super) fn reg(&mut self, s: ScopeId, name: &str) -> Result<(RegId, ScalarType), String> {
        match self.resolve(s, name)? {
            Some(Named::Reg(r, ty)) => Ok((r, ty)),
            Some(_) => Err(format!("`{name}` is not a register")),
            None => Err(format!("unknown register `{name}`")),
        }
    }

    /// A module-scope variable. A module-scope `.extern .shared` array gets a per-kernel
    /// copy, placed at the end of the kernel's static segment when the kernel is done.
    fn module_symbol(&mut self, name: &str) -> Option<SymbolId> {
        let id = *self.cx.module_syms.get(name)?;
        let s = &self.cx.symbols[id as usize];
        if s.space == StateSpace::Shared && s.size == 0 {
            if let Some(&(_, c)) = self.extern_shared.iter().find(|(m, _)| *m == id) {
                return Some(c);
            }
            let copy = s.clone();
            self.cx.symbols.push(copy);
            let c = (self.cx.symbols.len() - 1) as SymbolId;
            self.extern_shared.push((id, c));
            return Some(c);
        }
        Some(id)
    }

    // ------------------------------------------------------------------ blocks

    /// Declares a block's registers and variables in scope `s`.
    fn declare_block(&mut self, s: ScopeId, blk: &AstBlock, frame: &Frame) -> Result<(), PtxError> {
        for r in &blk.regs {
            let sc = &mut self.scopes[s];
            let dup = match r.count {
                Some(n) => sc.ranges.insert(r.name.clone(), (r.ty, n)).is_some(),
                None => {
                    sc.vars.contains_key(&r.name)
                        || sc.regs.insert(r.name.clone(), (r.ty, None)).is_some()
                }
            };
            if dup || special_reg(&r.name).is_some() {
                return self.err(
                    r.loc,
                    format!("duplicate or reserved register name `{}`", r.name),
                );
            }
        }
        for v in &blk.vars {
            let sc = &self.scopes[s];
            if sc.vars.contains_key(&v.name)
                || sc.regs.contains_key(&v.name)
                || special_reg(&v.name).is_some()
            {
                return self.err(v.loc, format!("duplicate symbol `{}`", v.name));
            }
            let b = self.declare_var(v, frame)?;
            self.scopes[s].vars.insert(v.name.clone(), b);
        }
        Ok(())
    }

    /// Storage for a variable declared in a body.
    fn declare_var(&mut self, v: &AstVar, frame: &Frame) -> Result<Binding, PtxError> {
        let in_func = frame.ret_label.is_some();
        let key = (v.loc.line, v.loc.col);
        let mut s = self.cx.make_symbol(v)?;
        Ok(match v.space {
            StateSpace::Param => match s.ty {
                Some(ty) => Binding::ParamReg {
                    ty,
                    reg: None,
                    input: false,
                },
                None => {
                    s.space = StateSpace::Local;
                    Binding::ParamMem {
                        sym: self.push_local(s),
                        input: false,
                    }
                }
            },
            StateSpace::Local => Binding::Sym(self.push_local(s)),
            StateSpace::Shared => {
                // Only device-function declarations are recorded (a kernel's blocks are
                // emitted once), and a (line, column) names one declaration.
                if let Some(&id) = self.func_shared.get(&key) {
                    return Ok(Binding::Sym(id));
                }
                s.offset = align_up(self.shared_end, s.align as u64);
                self.shared_end = s.offset + s.size;
                self.cx.symbols.push(s);
                let id = (self.cx.symbols.len() - 1) as SymbolId;
                if in_func {
                    self.func_shared.insert(key, id);
                }
                Binding::Sym(id)
            }
            StateSpace::Global | StateSpace::Const => {
                if let Some(&id) = self.cx.func_statics.get(&key) {
                    return Ok(Binding::Sym(id));
                }
                let id = self.cx.add_static(s);
                if in_func {
                    self.cx.func_statics.insert(key, id);
                }
                Binding::Sym(id)
            }
            StateSpace::Generic => {
                return self.err(v.loc, format!("`{}` has no state space", v.name))
            }
        })
    }

    /// Places a `.local` symbol on top of the thread's frame.
    fn push_local(&mut self, mut s: Symbol) -> SymbolId {
        s.offset = align_up(self.local_top, s.align as u64);
        self.local_top = s.offset + s.size;
        self.local_max = self.local_max.max(self.local_top);
        self.cx.symbols.push(s);
        (self.cx.symbols.len() - 1) as SymbolId
    }

    /// Emits a block in scope `s` (already made; the block's declarations are added to it).
    /// `tail`: the block ends its function, so a final `ret` there needs no branch.
    fn emit_block(
        &mut self,
        blk: &AstBlock,
        s: ScopeId,
        frame: &Frame,
        tail: bool,
    ) -> Result<(), PtxError> {
        self.enter(blk.end_loc)?;
        self.declare_block(s, blk, frame)?;
        let n = blk.stmts.len();
        for (k, st) in blk.stmts.iter().enumerate() {
            let tail = tail && k + 1 == n;
            match st {
                AstStmt::Label(name, loc) => self.define_label(s, frame, name, *loc)?,
                AstStmt::Inst(i) => self.emit_inst(s, frame, i, tail)?,
                AstStmt::Call(c) => self.inline_call(s, c)?,
                AstStmt::Block(b) => {
                    let inner = self.new_scope(Some(s), frame.instance);
                    self.emit_block(b, inner, frame, tail)?;
                }
                AstStmt::Unsupported { message, loc } => return self.err(*loc, message.clone()),
            }
        }
        self.leave();
        Ok(())
    }

    fn define_label(
        &mut self,
        s: ScopeId,
        frame: &Frame,
        name: &str,
        loc: SrcLoc,
    ) -> Result<(), PtxError> {
        if self.scopes[s].labels.contains_key(name) {
            return self.err(loc, format!("duplicate label `{name}`"));
        }
        let id = self.new_label();
        self.label_pc[id] = self.here();
        self.scopes[s].labels.insert(name.to_string(), id);
        self.instance_labels[frame.instance]
            .entry(name.to_string())
            .or_default()
            .push(id);
        Ok(())
    }

    fn emit_inst(
        &mut self,
        s: ScopeId,
        frame: &Frame,
        i: &AstInst,
        tail: bool,
    ) -> Result<(), PtxError> {
        if i.opcode == "tex" || i.opcode.starts_with("tex.") {
            let inst = self.lower_tex(s, i)?;
            return self.push(inst);
        }
        let (mut inst, label) = lower_inst(self, s, i)?;
        if let Some((name, loc)) = label {
            self.fixups.push(Fixup {
                inst: self.insts.len(),
                target: FixTarget::Named { scope: s, name },
                loc,
            });
        }
        if let (Opcode::Ret, Some(end)) = (inst.op, frame.ret_label) {
            // `ret` of an inlined function: a branch to the end of its body; the function's
            // last statement falls through to it.
            if tail && inst.guard.is_none() {
                return Ok(());
            }
            inst.op = Opcode::Bra;
            inst.mods = Modifiers::default();
            inst.target = Some(u32::MAX);
            self.fixups.push(Fixup {
                inst: self.insts.len(),
                target: FixTarget::Label(end),
                loc: inst.loc,
            });
        }
        self.push(inst)
    }

    /// Sets the target of every branch recorded since fixup `from` (every label they may
    /// name is placed by then).
    fn resolve_fixups(&mut self, from: usize) -> Result<(), PtxError> {
        for f in self.fixups.split_off(from) {
            let id = match f.target {
                FixTarget::Label(id) => id,
                FixTarget::Named { scope, name } => self.find_label(scope, &name, f.loc)?,
            };
            let pc = self.label_pc[id].expect("every label is placed when its block is emitted");
            self.insts[f.inst].target = Some(pc);
        }
        Ok(())
    }

    fn find_label(&self, s: ScopeId, name: &str, loc: SrcLoc) -> Result<LabelId, PtxError> {
        let mut cur = Some(s);
        while let Some(id) = cur {
            if let Some(&l) = self.scopes[id].labels.get(name) {
                return Ok(l);
            }
            cur = self.scopes[id].parent;
        }
        match self.instance_labels[self.scopes[s].instance]
            .get(name)
            .map(Vec::as_slice)
        {
            Some([l]) => Ok(*l),
            Some(_) => self.err(
                loc,
                format!(
                    "label `{name}` is declared in several blocks, none of which encloses \
                     this branch"
                ),
            ),
            None => self.err(loc, format!("undefined label `{name}`")),
        }
    }

    // ------------------------------------------------------------------ calls

    /// Inlines `call` at the current position (see the module docs).
    fn inline_call(&mut self, s: ScopeId, c: &AstCall) -> Result<(), PtxError> {
        let ast = self.ast;
        let Some(&fi) = self.funcs.get(&c.func) else {
            let msg = match self.resolve(s, &c.func) {
                Ok(Some(Named::Reg(..))) => {
                    "indirect calls (through a function pointer) are not supported".to_string()
                }
                _ => format!("call to undefined function `{}`", c.func),
            };
            return self.err(c.func_loc, msg);
        };
        let f = &ast.funcs[fi];
        let name = f.name.as_str();
        if f.kind == FuncKind::Entry {
            return self.err(
                c.func_loc,
                format!("`{name}` is a kernel (`.entry`) and cannot be called"),
            );
        }
        let Some(body) = &f.body else {
            if let Some(b) = builtin(name) {
                return self.call_builtin(s, c, f, b);
            }
            let what = if name.starts_with("__nv_") {
                "a libdevice function the model does not provide (it runs the float and \
                 double math of libdevice natively: see exec::libdevice)"
            } else {
                "calls into other modules or libraries are not supported (the model \
                 provides `vprintf` and libdevice's float and double math)"
            };
            return self.err(
                c.func_loc,
                format!(
                    "call to `{name}`, which this module declares (line {}) but does not \
                     define: {what}",
                    f.loc.line
                ),
            );
        };
        if let Some(pos) = self.inline_stack.iter().position(|&x| x == fi) {
            let chain: Vec<&str> = self.inline_stack[pos..]
                .iter()
                .map(|&x| ast.funcs[x].name.as_str())
                .chain([name])
                .collect();
            return self.err(
                c.func_loc,
                format!(
                    "recursive call to `{name}` ({}): device functions are inlined at each \
                     call, so recursion is not supported",
                    chain.join(" -> ")
                ),
            );
        }
        if c.args.len() != f.params.len() {
            return self.err(
                c.loc,
                format!(
                    "`{name}` takes {} argument(s) but the call passes {}",
                    f.params.len(),
                    c.args.len()
                ),
            );
        }
        if c.rets.len() != f.rets.len() {
            return self.err(
                c.loc,
                format!(
                    "`{name}` returns {} value(s) but the call receives {}",
                    f.rets.len(),
                    c.rets.len()
                ),
            );
        }
        self.enter(c.loc)?;
        // A guarded call is a branch around the inlined body.
        let skip = match &c.guard {
            Some(g) => {
                let l = self.new_label();
                self.emit_skip(s, g, l, c.loc)?;
                Some(l)
            }
            None => None,
        };
        let fixups = self.fixups.len();
        let instance = self.new_instance();
        let root = self.new_scope(None, instance);
        let saved_local = self.local_top;
        let mut inputs = Vec::new();
        for (formal, arg) in f.params.iter().zip(&c.args) {
            self.bind_arg(s, root, name, formal, arg, c.loc, &mut inputs)?;
        }
        let mut copy_out = Vec::new();
        for (formal, ret) in f.rets.iter().zip(&c.rets) {
            self.bind_ret(s, root, name, formal, ret, &inputs, &mut copy_out)?;
        }
        let end = self.new_label();
        self.inline_stack.push(fi);
        let callee = Frame {
            instance,
            ret_label: Some(end),
        };
        self.emit_block(body, root, &callee, true)?;
        self.inline_stack.pop();
        self.label_pc[end] = self.here();
        // The instance is complete: resolve its branches, drop its scopes and labels.
        self.resolve_fixups(fixups)?;
        self.scopes.truncate(root);
        self.instance_labels.pop();
        for (dst, src, ty) in copy_out {
            self.push(mov(ty, Operand::Reg(dst), Operand::Reg(src), c.loc))?;
        }
        // The callee's `.local` variables are dead: pop them off the frame.
        self.local_top = saved_local;
        if let Some(l) = skip {
            self.label_pc[l] = self.here();
        }
        self.leave();
        Ok(())
    }

    /// A call of a function the model provides (`vprintf`, `__nv_*`): one `Call` instruction
    /// whose sources are the arguments and whose destination receives the return value. The
    /// module's declaration must match the function's signature (sizes of the parameters and
    /// the return value).
    fn call_builtin(
        &mut self,
        s: ScopeId,
        c: &AstCall,
        f: &super::parser::AstFunc,
        b: Builtin,
    ) -> Result<(), PtxError> {
        use ScalarType::*;
        let name = f.name.as_str();
        let (params, ret, class): (&[ScalarType], ScalarType, InstClass) = match b {
            Builtin::Vprintf => (&[B64, B64], S32, InstClass::Alu),
            Builtin::Nv(i) => {
                let nf = &crate::exec::libdevice::NV_FUNCS[i as usize];
                let class = if nf.params()[0] == F64 {
                    InstClass::Dp
                } else {
                    InstClass::Sfu
                };
                (nf.params(), nf.ret(), class)
            }
        };
        let sig = |ts: &[ScalarType]| {
            ts.iter()
                .map(|t| format!(".{}", format!("{t:?}").to_lowercase()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let size_of = |fm: &AstFormal| {
            (fm.var.dims.is_empty() && fm.var.vec == 1).then_some(fm.var.ty.size_bytes())
        };
        let declared_ok = f.params.len() == params.len()
            && f.rets.len() == 1
            && f.params
                .iter()
                .zip(params)
                .all(|(p, t)| size_of(p) == Some(t.size_bytes()))
            && size_of(&f.rets[0]) == Some(ret.size_bytes());
        if !declared_ok {
            return self.err(
                f.loc,
                format!(
                    "`{name}` is declared with a signature the model's built-in does not have \
                     (it takes {} and returns .{})",
                    sig(params),
                    format!("{ret:?}").to_lowercase()
                ),
            );
        }
        if c.args.len() != params.len() || c.rets.len() > 1 {
            return self.err(
                c.loc,
                format!(
                    "`{name}` takes {} argument(s) and returns one value, but the call passes \
                     {} and receives {}",
                    params.len(),
                    c.args.len(),
                    c.rets.len()
                ),
            );
        }
        let mut srcs = Vec::new();
        for (arg, &ty) in c.args.iter().zip(params) {
            let v = match &arg.kind {
                AstOperandKind::Imm(imm) => {
                    Operand::Imm(imm_bits(imm, ty).map_err(|m| self.cx_err(arg.loc, m))?)
                }
                _ => match self.arg_name(s, arg)? {
                    (_, Some(Named::Reg(r, t) | Named::ParamReg(r, t, _))) => {
                        self.check_size(t, ty, "argument", name, arg.loc)?;
                        Operand::Reg(r)
                    }
                    (n, _) => {
                        return self.err(
                            arg.loc,
                            format!(
                                "argument `{n}` of `{name}` is not a value (a register, a \
                                 scalar `.param` or a number)"
                            ),
                        )
                    }
                },
            };
            srcs.push(v);
        }
        let mut dsts = Vec::new();
        if let Some(r) = c.rets.first() {
            match self.arg_name(s, r)? {
                (_, Some(Named::Reg(reg, t) | Named::ParamReg(reg, t, false))) => {
                    self.check_size(t, ret, "return value", name, r.loc)?;
                    dsts.push(Operand::Reg(reg));
                }
                (n, _) => {
                    return self.err(
                        r.loc,
                        format!(
                            "the return value of `{name}` must be received in a register or \
                             a scalar `.param` of the caller, not `{n}`"
                        ),
                    )
                }
            }
        }
        let guard = self.guard(s, &c.guard)?;
        self.push(Instruction {
            guard,
            op: Opcode::Call,
            ty: ret,
            ty2: None,
            mods: Modifiers {
                builtin: Some(b),
                ..Modifiers::default()
            },
            dsts,
            srcs,
            addr: None,
            target: None,
            rpc: None,
            class,
            loc: c.loc,
        })
    }

    /// `tex.1d.v4.DTYPE.s32 {d0, d1, d2, d3}, [tex, {x}]` (see exec::builtins).
    fn lower_tex(&mut self, s: ScopeId, i: &AstInst) -> Result<Instruction, PtxError> {
        use ScalarType::*;
        let parts: Vec<&str> = i.opcode.split('.').collect();
        let dty = match parts.as_slice() {
            ["tex", "1d", "v4", d, "s32"] => match *d {
                "f32" => Some(F32),
                "s32" => Some(S32),
                "u32" => Some(U32),
                _ => None,
            },
            _ => None,
        };
        let Some(dty) = dty else {
            return self.err(
                i.loc,
                format!(
                    "unsupported texture instruction `{}`: the model runs \
                     `tex.1d.v4.{{f32,s32,u32}}.s32` (tex1Dfetch on linear memory)",
                    i.opcode
                ),
            );
        };
        let bad = |kc: &Self| {
            kc.err(
                i.loc,
                format!(
                    "`{}` takes `{{d0, d1, d2, d3}}, [texture, {{x}}]`",
                    i.opcode
                ),
            )
        };
        let [d, t] = i.operands.as_slice() else {
            return bad(self);
        };
        let (AstOperandKind::Vec(ds), AstOperandKind::Tex { handle, coords }) = (&d.kind, &t.kind)
        else {
            return bad(self);
        };
        if ds.len() != 4 || coords.len() != 1 {
            return bad(self);
        }
        let mut dsts = Vec::new();
        for o in ds {
            dsts.push(lower_dst(self, s, o).map_err(|m| self.cx_err(o.loc, m))?);
        }
        let h = match self.resolve(s, handle).map_err(|m| self.cx_err(t.loc, m))? {
            Some(Named::Reg(r, ty)) if ty.size_bytes() == 8 => Operand::Reg(r),
            Some(Named::Sym(id)) if self.cx.symbols[id as usize].space == StateSpace::Global => {
                Operand::SymbolAddr(id)
            }
            Some(_) => {
                return self.err(
                    t.loc,
                    format!("`{handle}` is not a texture (a `.texref` or a 64-bit register)"),
                )
            }
            None => return self.err(t.loc, unknown_name(handle)),
        };
        let x = lower_src(self, s, &coords[0], S32).map_err(|m| self.cx_err(coords[0].loc, m))?;
        let guard = self.guard(s, &i.guard)?;
        Ok(Instruction {
            guard,
            op: Opcode::Tex,
            ty: dty,
            ty2: Some(S32),
            mods: Modifiers {
                space: Some(StateSpace::Global),
                vec: 4,
                ..Modifiers::default()
            },
            dsts,
            srcs: vec![h, x],
            addr: None,
            target: None,
            rpc: None,
            class: InstClass::Mem,
            loc: i.guard.as_ref().map_or(i.loc, |g| g.loc),
        })
    }

    /// `@!p bra skip` for a call guarded by `@p`.
    fn emit_skip(
        &mut self,
        s: ScopeId,
        g: &AstGuard,
        skip: LabelId,
        loc: SrcLoc,
    ) -> Result<(), PtxError> {
        let (reg, ty) = self.reg(s, &g.reg).map_err(|m| self.cx_err(g.loc, m))?;
        if ty != ScalarType::Pred {
            return self.err(
                g.loc,
                format!("guard `{}` is not a predicate register", g.reg),
            );
        }
        self.fixups.push(Fixup {
            inst: self.insts.len(),
            target: FixTarget::Label(skip),
            loc,
        });
        self.push(Instruction {
            guard: Some(Guard {
                reg,
                negate: !g.negate,
            }),
            op: Opcode::Bra,
            ty: ScalarType::B32,
            ty2: None,
            mods: Modifiers::default(),
            dsts: vec![],
            srcs: vec![],
            addr: None,
            target: Some(u32::MAX),
            rpc: None,
            class: InstClass::Ctrl,
            loc: g.loc,
        })
    }

    fn cx_err(&self, loc: SrcLoc, message: String) -> PtxError {
        PtxError {
            file: self.cx.file.to_string(),
            line: loc.line,
            col: loc.col,
            message,
        }
    }

    /// An instruction's guard (`@%p`, `@!%p`), named in scope `s`: a predicate register.
    pub(super) fn guard(
        &mut self,
        s: ScopeId,
        guard: &Option<AstGuard>,
    ) -> Result<Option<Guard>, PtxError> {
        let Some(g) = guard else {
            return Ok(None);
        };
        let (reg, ty) = self.reg(s, &g.reg).map_err(|m| self.cx_err(g.loc, m))?;
        if ty != ScalarType::Pred {
            return self.err(
                g.loc,
                format!("guard `{}` is not a predicate register", g.reg),
            );
        }
        Ok(Some(Guard {
            reg,
            negate: g.negate,
        }))
    }

    /// Binds formal parameter `formal` of `func` (in the callee's scope `root`) to argument
    /// `arg` (in the caller's scope `s`). Registers the callee reads its inputs from, when
    /// they are the caller's own, are added to `inputs`.
    #[allow(clippy::too_many_arguments)]
    fn bind_arg(
        &mut self,
        s: ScopeId,
        root: ScopeId,
        func: &str,
        formal: &AstFormal,
        arg: &AstOperand,
        loc: SrcLoc,
        inputs: &mut Vec<RegId>,
    ) -> Result<(), PtxError> {
        let fv = &formal.var;
        let fsym = self.new_formal(root, fv)?;
        let Some(fty) = fsym.ty.filter(|_| fv.vec == 1) else {
            // An aggregate: the caller's `.param` array in the local frame, by reference.
            let sym = match self.arg_name(s, arg)? {
                (_, Some(Named::ParamMem(sym, _))) => sym,
                (n, _) => {
                    return self.err(
                        arg.loc,
                        format!(
                            "parameter `{}` of `{func}` is an aggregate of {} bytes: the \
                             argument must be a `.param` array, not `{n}`",
                            fv.name, fsym.size
                        ),
                    )
                }
            };
            return self.bind_aggregate(root, fv, sym, fsym.size, arg.loc, true, |have| {
                format!(
                    "argument of {have} bytes for the {}-byte parameter `{}` of `{func}`",
                    fsym.size, fv.name
                )
            });
        };
        let value = match &arg.kind {
            AstOperandKind::Imm(imm) => {
                Operand::Imm(imm_bits(imm, fty).map_err(|m| self.cx_err(arg.loc, m))?)
            }
            _ => match self.arg_name(s, arg)? {
                (_, Some(Named::Reg(r, ty) | Named::ParamReg(r, ty, _))) => {
                    self.check_size(ty, fty, &fv.name, func, arg.loc)?;
                    Operand::Reg(r)
                }
                (_, Some(Named::Special(sp))) => Operand::Special(sp),
                (n, _) => {
                    return self.err(
                        arg.loc,
                        format!(
                            "argument `{n}` for parameter `{}` of `{func}` is not a value \
                             (a register, a scalar `.param` or a number)",
                            fv.name
                        ),
                    )
                }
            },
        };
        if let (false, Operand::Reg(r)) = (formal.reg, value) {
            // An input `.param` is read-only in the callee: it can be the caller's register.
            inputs.push(r);
            self.scopes[root].vars.insert(
                fv.name.clone(),
                Binding::ParamReg {
                    ty: fty,
                    reg: Some(r),
                    input: true,
                },
            );
            return Ok(());
        }
        let v = self
            .new_vreg(&fv.name, fty)
            .map_err(|m| self.cx_err(loc, m))?;
        self.push(mov(fty, Operand::Reg(v), value, loc))?;
        let sc = &mut self.scopes[root];
        if formal.reg {
            sc.regs.insert(fv.name.clone(), (fty, Some(v)));
        } else {
            sc.vars.insert(
                fv.name.clone(),
                Binding::ParamReg {
                    ty: fty,
                    reg: Some(v),
                    input: true,
                },
            );
        }
        Ok(())
    }

    /// The symbol of a callee's formal `fv`, refused when the callee's root scope `root`
    /// already binds its name (a parameter and a return value of the same name).
    fn new_formal(&mut self, root: ScopeId, fv: &AstVar) -> Result<Symbol, PtxError> {
        let fsym = self.cx.make_symbol(fv)?;
        if self.scopes[root].vars.contains_key(&fv.name)
            || self.scopes[root].regs.contains_key(&fv.name)
        {
            return self.err(fv.loc, format!("duplicate parameter `{}`", fv.name));
        }
        Ok(fsym)
    }

    /// Binds aggregate formal `fv` to the caller's `.param` array `sym` (an input parameter
    /// or the return value's receiver), which must hold at least `need` bytes; `too_small`
    /// words the error from the bytes it has.
    #[allow(clippy::too_many_arguments)]
    fn bind_aggregate(
        &mut self,
        root: ScopeId,
        fv: &AstVar,
        sym: SymbolId,
        need: u64,
        loc: SrcLoc,
        input: bool,
        too_small: impl FnOnce(u64) -> String,
    ) -> Result<(), PtxError> {
        let have = self.cx.symbols[sym as usize].size;
        if have < need {
            return self.err(loc, too_small(have));
        }
        self.scopes[root]
            .vars
            .insert(fv.name.clone(), Binding::ParamMem { sym, input });
        Ok(())
    }

    /// Binds return value `formal` of `func` to the call's receiver `ret`; a copy from a
    /// fresh register after the body is added to `copy_out` when the receiver is also an
    /// input of the call.
    #[allow(clippy::too_many_arguments)]
    fn bind_ret(
        &mut self,
        s: ScopeId,
        root: ScopeId,
        func: &str,
        formal: &AstFormal,
        ret: &AstOperand,
        inputs: &[RegId],
        copy_out: &mut Vec<(RegId, RegId, ScalarType)>,
    ) -> Result<(), PtxError> {
        let fv = &formal.var;
        let fsym = self.new_formal(root, fv)?;
        if matches!(ret.kind, AstOperandKind::Imm(_)) {
            return self.err(ret.loc, "a return value cannot be received in a number");
        }
        let (n, named) = self.arg_name(s, ret)?;
        let Some(fty) = fsym.ty.filter(|_| fv.vec == 1) else {
            let Some(Named::ParamMem(sym, false)) = named else {
                return self.err(
                    ret.loc,
                    format!(
                        "return value `{}` of `{func}` is an aggregate of {} bytes: it must be \
                         received in a `.param` array of the caller (not an input parameter), \
                         not `{n}`",
                        fv.name, fsym.size
                    ),
                );
            };
            return self.bind_aggregate(root, fv, sym, fsym.size, ret.loc, false, |have| {
                format!(
                    "{have}-byte receiver for the {}-byte return value `{}` of `{func}`",
                    fsym.size, fv.name
                )
            });
        };
        let r = match named {
            Some(Named::Reg(r, ty) | Named::ParamReg(r, ty, false)) => {
                self.check_size(ty, fty, &fv.name, func, ret.loc)?;
                r
            }
            _ => {
                return self.err(
                    ret.loc,
                    format!(
                        "return value `{}` of `{func}` must be received in a register or a \
                         scalar `.param` of the caller (not an input parameter), not `{n}`",
                        fv.name
                    ),
                )
            }
        };
        let r = if inputs.contains(&r) {
            let v = self
                .new_vreg(&fv.name, fty)
                .map_err(|m| self.cx_err(ret.loc, m))?;
            copy_out.push((r, v, fty));
            v
        } else {
            r
        };
        let sc = &mut self.scopes[root];
        if formal.reg {
            sc.regs.insert(fv.name.clone(), (fty, Some(r)));
        } else {
            sc.vars.insert(
                fv.name.clone(),
                Binding::ParamReg {
                    ty: fty,
                    reg: Some(r),
                    input: false,
                },
            );
        }
        Ok(())
    }

    /// The name of a call operand and what it means in the caller's scope.
    fn arg_name<'o>(
        &mut self,
        s: ScopeId,
        o: &'o AstOperand,
    ) -> Result<(&'o str, Option<Named>), PtxError> {
        match &o.kind {
            AstOperandKind::Reg(n) | AstOperandKind::Sym(n) => {
                match self.resolve(s, n).map_err(|m| self.cx_err(o.loc, m))? {
                    None => self.err(o.loc, unknown_name(n)),
                    named => Ok((n.as_str(), named)),
                }
            }
            _ => self.err(o.loc, "expected a name or a number"),
        }
    }

    fn check_size(
        &self,
        have: ScalarType,
        want: ScalarType,
        param: &str,
        func: &str,
        loc: SrcLoc,
    ) -> Result<(), PtxError> {
        let pred = |t: ScalarType| t == ScalarType::Pred;
        if have.size_bytes() != want.size_bytes() || pred(have) != pred(want) {
            return self.err(
                loc,
                format!(
                    "a `.{}` value for the `.{}` parameter `{param}` of `{func}`",
                    format!("{have:?}").to_lowercase(),
                    format!("{want:?}").to_lowercase()
                ),
            );
        }
        Ok(())
    }
}

/// `mov.TY dst, src` at `loc` (argument and result copies of an inlined call).
fn mov(ty: ScalarType, dst: Operand, src: Operand, loc: SrcLoc) -> Instruction {
    Instruction {
        guard: None,
        op: Opcode::Mov,
        ty,
        ty2: None,
        mods: Modifiers::default(),
        dsts: vec![dst],
        srcs: vec![src],
        addr: None,
        target: None,
        rpc: None,
        class: InstClass::Alu,
        loc,
    }
}

/// The type of `name` if it is a member of one of `ranges` (`%r<14>` holds `%r0`..`%r13`;
/// `%r01` is not a member).
fn range_member(ranges: &HashMap<String, (ScalarType, u32)>, name: &str) -> Option<ScalarType> {
    let digits = name
        .bytes()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let (prefix, num) = name.split_at(name.len() - digits);
    if digits == 0 || (digits > 1 && num.starts_with('0')) {
        return None;
    }
    match (ranges.get(prefix), num.parse::<u64>()) {
        (Some(&(t, n)), Ok(k)) if k < n as u64 => Some(t),
        _ => None,
    }
}

/// The built-in a call of the undefined function `name` runs, if any.
fn builtin(name: &str) -> Option<Builtin> {
    if name == "vprintf" {
        return Some(Builtin::Vprintf);
    }
    crate::exec::libdevice::lookup(name).map(Builtin::Nv)
}
