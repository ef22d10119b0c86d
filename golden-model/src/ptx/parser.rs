//! Recursive-descent parser: tokens to an AST that keeps PTX's shape (opcode text, operand
//! list) with a source location on everything. Meaning (types, symbols, labels) is given to
//! it by [`super::lower`].

use super::ir::{ScalarType, SrcLoc, StateSpace};
use super::lexer::{describe, is_identifier, Tok, Token};
use crate::error::PtxError;

#[derive(Debug, Clone, PartialEq)]
pub struct AstModule {
    pub vars: Vec<AstVar>,
    /// Kernels (`.entry`) and device functions (`.func`), declarations and definitions, in
    /// file order.
    pub funcs: Vec<AstFunc>,
}

/// One element of a variable initialiser.
#[derive(Debug, Clone, PartialEq)]
pub enum InitVal {
    Int(i128),
    F32Bits(u32),
    F64Bits(u64),
    Float(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct AstVar {
    pub space: StateSpace,
    pub is_extern: bool,
    pub align: Option<u32>,
    pub ty: ScalarType,
    /// Vector width of the element type (`.v2 .f32`), 1 if none.
    pub vec: u32,
    pub name: String,
    /// Array dimensions; a `0` dimension means `[]` (unsized).
    pub dims: Vec<u64>,
    pub init: Option<Vec<InitVal>>,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AstRegDecl {
    pub ty: ScalarType,
    pub name: String,
    /// `%r<14>` declares `%r0` .. `%r13`.
    pub count: Option<u32>,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuncKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

/// A formal parameter or return value of a function: a `.param` variable, or (the older,
/// non-ABI form) a `.reg` register, in which case `var.space` is `Param` and `reg` is set.
#[derive(Debug, Clone, PartialEq)]
pub struct AstFormal {
    pub var: AstVar,
    pub reg: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AstFunc {
    pub kind: FuncKind,
    pub name: String,
    /// Location of the `.entry` / `.func` directive.
    pub loc: SrcLoc,
    /// `.extern`: defined in another module (a declaration).
    pub is_extern: bool,
    /// Return values (`.func` only).
    pub rets: Vec<AstFormal>,
    pub params: Vec<AstFormal>,
    /// `None` for a declaration (prototype) ending in `;`.
    pub body: Option<AstBlock>,
}

/// A `{ }` block: the function body or a nested scope. Declarations are collected per block
/// (a name declared anywhere in a block is visible in the whole block and its nested blocks,
/// and shadows the same name of an enclosing block).
#[derive(Debug, Clone, PartialEq)]
pub struct AstBlock {
    pub regs: Vec<AstRegDecl>,
    /// `.shared` / `.local` / `.global` / `.const` variables and call-site `.param`s.
    pub vars: Vec<AstVar>,
    pub stmts: Vec<AstStmt>,
    /// Location of the closing `}` (for the implicit final `ret` of a kernel).
    pub end_loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AstStmt {
    Label(String, SrcLoc),
    Inst(AstInst),
    Call(AstCall),
    Block(AstBlock),
    /// A statement of a device function body that the model does not support (an unknown
    /// opcode, an indirect-call prototype): reported only if the function is called, so a
    /// module may carry functions it never calls.
    Unsupported {
        message: String,
        loc: SrcLoc,
    },
}

/// `[@p] call[.uni] [(rets),] func[, (args)];`
#[derive(Debug, Clone, PartialEq)]
pub struct AstCall {
    pub guard: Option<AstGuard>,
    pub func: String,
    pub func_loc: SrcLoc,
    pub rets: Vec<AstOperand>,
    pub args: Vec<AstOperand>,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AstGuard {
    pub reg: String,
    pub negate: bool,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AstInst {
    pub guard: Option<AstGuard>,
    /// Full opcode text with modifiers, e.g. `ld.global.v4.f32`.
    pub opcode: String,
    pub loc: SrcLoc,
    pub operands: Vec<AstOperand>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AstImm {
    Int(i128),
    F32Bits(u32),
    F64Bits(u64),
    Float(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum MemBase {
    /// `%`-name (register).
    Reg(String),
    /// Other identifier (variable or parameter).
    Sym(String),
    Abs,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AstOperandKind {
    /// `%`-prefixed name: register or special register.
    Reg(String),
    /// `!%p` (negated predicate source).
    NotReg(String),
    /// Plain identifier: label or symbol.
    Sym(String),
    Imm(AstImm),
    Mem {
        base: MemBase,
        offset: i64,
    },
    /// `{a, b, ...}`.
    Vec(Vec<AstOperand>),
    /// `[handle, {x, ...}]`: a texture and its coordinates (`tex`).
    Tex {
        handle: String,
        coords: Vec<AstOperand>,
    },
    /// `%p|%q` (two destinations of setp/shfl).
    Pair(Box<AstOperand>, Box<AstOperand>),
    /// `_`.
    Sink,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AstOperand {
    pub kind: AstOperandKind,
    pub loc: SrcLoc,
}

pub fn scalar_type(s: &str) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match s {
        "b8" => B8,
        "b16" => B16,
        "b32" => B32,
        "b64" => B64,
        "u8" => U8,
        "u16" => U16,
        "u32" => U32,
        "u64" => U64,
        "s8" => S8,
        "s16" => S16,
        "s32" => S32,
        "s64" => S64,
        "f16" => F16,
        "f32" => F32,
        "f64" => F64,
        "pred" => Pred,
        _ => return None,
    })
}

pub fn state_space(s: &str) -> Option<StateSpace> {
    Some(match s {
        "global" => StateSpace::Global,
        "shared" => StateSpace::Shared,
        "local" => StateSpace::Local,
        "const" => StateSpace::Const,
        "param" => StateSpace::Param,
        _ => return None,
    })
}

struct Parser<'a> {
    file: &'a str,
    toks: &'a [Token],
    pos: usize,
}

type PResult<T> = Result<T, PtxError>;

/// The newest PTX ISA version this front end reads. The constructs it accepts mean the same
/// in every ISA up to 8.5 (newer ISAs add instructions and state spaces, which are reported
/// as unsupported one by one); a file declaring a newer version may use syntax or semantics
/// this front end has never been checked against, so it is refused with one clear error
/// rather than half-understood.
pub const MAX_PTX_VERSION: (u32, u32) = (8, 5);

const INDIRECT_CALLS: &str =
    "indirect calls (through a function pointer, with `.callprototype`) are not supported";

/// Parses the whole token stream of one PTX file.
pub fn parse(file: &str, toks: &[Token]) -> PResult<AstModule> {
    let mut p = Parser { file, toks, pos: 0 };
    p.module()
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    fn peek_at(&self, n: usize) -> Option<&'a Tok> {
        self.toks.get(self.pos + n).map(|t| &t.tok)
    }
    fn loc(&self) -> SrcLoc {
        match self.toks.get(self.pos).or_else(|| self.toks.last()) {
            Some(t) => SrcLoc {
                line: t.line,
                col: t.col,
            },
            None => SrcLoc { line: 1, col: 1 },
        }
    }
    fn err_at<T>(&self, loc: SrcLoc, msg: impl Into<String>) -> PResult<T> {
        Err(PtxError {
            file: self.file.to_string(),
            line: loc.line,
            col: loc.col,
            message: msg.into(),
        })
    }
    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        self.err_at(self.loc(), msg)
    }
    fn found(&self) -> String {
        match self.peek() {
            Some(t) => describe(t),
            None => "end of file".into(),
        }
    }
    fn bump(&mut self) -> Option<&'a Tok> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char, what: &str) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(format!("expected `{c}` {what}, found {}", self.found()))
        }
    }
    fn is_dot(&self, name: &str) -> bool {
        matches!(self.peek(), Some(Tok::Dot(d)) if d == name)
    }
    fn word(&mut self, what: &str) -> PResult<String> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                Ok(w.clone())
            }
            _ => self.err(format!("expected {what}, found {}", self.found())),
        }
    }
    fn uint(&mut self, what: &str) -> PResult<u64> {
        match self.peek() {
            Some(Tok::Int(v)) => {
                self.pos += 1;
                Ok(*v)
            }
            _ => self.err(format!("expected {what}, found {}", self.found())),
        }
    }
    /// Skips tokens up to and including the next `;` (for ignored directives).
    fn skip_statement(&mut self) -> PResult<()> {
        let start = self.loc();
        while let Some(t) = self.bump() {
            if *t == Tok::Punct(';') {
                return Ok(());
            }
        }
        self.err_at(start, "expected `;` after directive")
    }

    fn module(&mut self) -> PResult<AstModule> {
        let mut m = AstModule {
            vars: Vec::new(),
            funcs: Vec::new(),
        };
        while let Some(t) = self.peek() {
            let loc = self.loc();
            match t {
                Tok::Dot(d) => match d.as_str() {
                    "version" => {
                        self.pos += 1;
                        self.version()?;
                    }
                    "target" | "address_size" => {
                        self.pos += 1;
                        // Operands are on the rest of the line (no `;`).
                        let line = loc.line;
                        while self.toks.get(self.pos).is_some_and(|t| t.line == line) {
                            self.pos += 1;
                        }
                    }
                    "file" | "loc" => {
                        self.pos += 1;
                        let line = loc.line;
                        while self.toks.get(self.pos).is_some_and(|t| t.line == line) {
                            self.pos += 1;
                        }
                    }
                    "pragma" => {
                        self.pos += 1;
                        self.skip_statement()?;
                    }
                    "visible" | "extern" | "weak" | "entry" | "func" | "global" | "shared"
                    | "const" | "local" | "align" => self.module_decl(&mut m)?,
                    "section" => return self.err("unsupported directive `.section` (debug info)"),
                    other => return self.err(format!("unsupported directive `.{other}`")),
                },
                _ => {
                    return self.err(format!(
                        "expected a directive at module scope, found {}",
                        self.found()
                    ))
                }
            }
        }
        Ok(m)
    }

    /// The operand of `.version` (the directive is consumed): a newer PTX ISA than
    /// [`MAX_PTX_VERSION`] is refused here, before anything it might mean differently.
    fn version(&mut self) -> PResult<()> {
        let loc = self.loc();
        let Some(Tok::Version(major, minor)) = self.peek() else {
            return self.err(format!(
                "expected a version `MAJOR.MINOR` after `.version`, found {}",
                self.found()
            ));
        };
        let (major, minor) = (*major, *minor);
        self.pos += 1;
        let (max_major, max_minor) = MAX_PTX_VERSION;
        if (major, minor) > MAX_PTX_VERSION {
            return self.err_at(
                loc,
                format!(
                    "unsupported `.version {major}.{minor}`: this front end reads PTX ISA up to \
                     {max_major}.{max_minor}"
                ),
            );
        }
        Ok(())
    }

    fn module_decl(&mut self, m: &mut AstModule) -> PResult<()> {
        let mut is_extern = false;
        loop {
            if self.is_dot("visible") || self.is_dot("weak") {
                self.pos += 1;
            } else if self.is_dot("extern") {
                is_extern = true;
                self.pos += 1;
            } else {
                break;
            }
        }
        if self.is_dot("func") {
            let f = self.function(FuncKind::Func, is_extern)?;
            m.funcs.push(f);
            return Ok(());
        }
        if self.is_dot("entry") {
            let e = self.function(FuncKind::Entry, is_extern)?;
            m.funcs.push(e);
            return Ok(());
        }
        let v = self.var_decl(is_extern, true, false)?;
        m.vars.push(v);
        Ok(())
    }

    /// `.space [.align N] [.vN] .type name[dims] [= init] ;` — the leading space keyword is at
    /// the current token. `list_item`: an element of a parameter list (no `;`).
    fn var_decl(&mut self, is_extern: bool, allow_init: bool, list_item: bool) -> PResult<AstVar> {
        let loc = self.loc();
        let space = match self.peek() {
            Some(Tok::Dot(d)) => match state_space(d) {
                Some(s) => s,
                None => return self.err(format!("expected a state space, found `.{d}`")),
            },
            _ => return self.err(format!("expected a state space, found {}", self.found())),
        };
        self.pos += 1;
        let (align, ty, vec) = self.var_type_prefix()?;
        let name_loc = self.loc();
        let name = self.word("a variable name")?;
        if !is_identifier(&name) {
            return self.err_at(name_loc, format!("`{name}` is not a valid variable name"));
        }
        let dims = self.dims()?;
        let mut init = None;
        if self.eat_punct('=') {
            if !allow_init {
                return self.err("initialisers are only allowed on module-scope variables");
            }
            let mut vals = Vec::new();
            self.init_value(&mut vals, 0)?;
            init = Some(vals);
        }
        if !list_item {
            self.expect_punct(';', "after variable declaration")?;
        }
        Ok(AstVar {
            space,
            is_extern,
            align,
            ty,
            vec,
            name,
            dims,
            init,
            loc,
        })
    }

    fn var_type_prefix(&mut self) -> PResult<(Option<u32>, ScalarType, u32)> {
        let mut align = None;
        let mut vec = 1;
        loop {
            match self.peek() {
                Some(Tok::Dot(d)) if d == "align" => {
                    self.pos += 1;
                    let a = self.uint("an alignment")?;
                    if a == 0 || !a.is_power_of_two() || a > 4096 {
                        return self.err(format!("bad alignment {a}"));
                    }
                    align = Some(a as u32);
                }
                Some(Tok::Dot(d)) if d == "v2" || d == "v4" => {
                    vec = if d == "v2" { 2 } else { 4 };
                    self.pos += 1;
                }
                Some(Tok::Dot(d)) if d == "ptr" => {
                    // `.param .u64 .ptr .global .align 1 name` (pointer annotations).
                    self.pos += 1;
                    while let Some(Tok::Dot(d)) = self.peek() {
                        if state_space(d).is_some() {
                            self.pos += 1;
                        } else {
                            break;
                        }
                    }
                }
                Some(Tok::Dot(d)) if d == "texref" => {
                    // `.global .texref name;`: a texture reference, whose address is the
                    // handle `tex` fetches through (a 64-bit slot; see exec::builtins).
                    self.pos += 1;
                    return Ok((align, ScalarType::B64, vec));
                }
                Some(Tok::Dot(d)) => {
                    let d = d.clone();
                    if let Some(t) = scalar_type(&d) {
                        self.pos += 1;
                        // `.ptr` annotations may follow the type.
                        while self.is_dot("ptr") {
                            self.pos += 1;
                            while let Some(Tok::Dot(d)) = self.peek() {
                                if state_space(d).is_some() {
                                    self.pos += 1;
                                } else if d == "align" {
                                    self.pos += 1;
                                    self.uint("an alignment")?;
                                } else {
                                    break;
                                }
                            }
                        }
                        return Ok((align, t, vec));
                    }
                    return self.err(format!("unsupported type `.{d}`"));
                }
                _ => return self.err(format!("expected a type, found {}", self.found())),
            }
        }
    }

    fn dims(&mut self) -> PResult<Vec<u64>> {
        let mut dims = Vec::new();
        while self.eat_punct('[') {
            if self.eat_punct(']') {
                dims.push(0);
                continue;
            }
            let n = self.uint("an array size")?;
            if n == 0 || n > (1 << 32) {
                return self.err(format!("bad array size {n}"));
            }
            dims.push(n);
            self.expect_punct(']', "after array size")?;
        }
        Ok(dims)
    }

    fn init_value(&mut self, out: &mut Vec<InitVal>, depth: u32) -> PResult<()> {
        if depth > 8 {
            return self.err("initialiser nested too deeply");
        }
        if self.eat_punct('{') {
            if self.eat_punct('}') {
                return Ok(());
            }
            loop {
                self.init_value(out, depth + 1)?;
                if self.eat_punct(',') {
                    continue;
                }
                self.expect_punct('}', "to close the initialiser")?;
                return Ok(());
            }
        }
        let neg = self.eat_punct('-');
        let v = match self.peek() {
            Some(Tok::Int(v)) => InitVal::Int(if neg { -(*v as i128) } else { *v as i128 }),
            Some(Tok::F32Bits(v)) if !neg => InitVal::F32Bits(*v),
            Some(Tok::F64Bits(v)) if !neg => InitVal::F64Bits(*v),
            Some(Tok::Float(v)) => InitVal::Float(if neg { -*v } else { *v }),
            Some(Tok::Word(w)) => {
                return self.err(format!(
                    "unsupported initialiser `{w}` (address initialisers are not supported)"
                ))
            }
            _ => return self.err(format!("expected an initial value, found {}", self.found())),
        };
        self.pos += 1;
        out.push(v);
        Ok(())
    }

    /// `.entry name (params) directives { body }` or `.func [(rets)] name [(params)]
    /// [.noreturn] { body }` / `;` — the `.entry`/`.func` keyword is at the current token.
    fn function(&mut self, kind: FuncKind, is_extern: bool) -> PResult<AstFunc> {
        let loc = self.loc();
        self.pos += 1; // .entry / .func
        let what = match kind {
            FuncKind::Entry => "kernel",
            FuncKind::Func => "function",
        };
        let mut rets = Vec::new();
        if kind == FuncKind::Func && self.is_punct('(') {
            rets = self.formal_list("return value")?;
        }
        let name_loc = self.loc();
        let name = self.word(&format!("a {what} name"))?;
        if !is_identifier(&name) {
            return self.err_at(name_loc, format!("`{name}` is not a valid {what} name"));
        }
        let mut params = Vec::new();
        if self.is_punct('(') {
            params = self.formal_list("parameter")?;
        }
        if kind == FuncKind::Entry {
            if let Some(p) = params.iter().find(|p| p.reg) {
                return self.err_at(
                    p.var.loc,
                    format!("kernel parameter `{}` must be a `.param`", p.var.name),
                );
            }
        }
        // Performance directives: accepted and ignored.
        while let Some(Tok::Dot(d)) = self.peek() {
            match d.as_str() {
                "maxntid" | "reqntid" | "minnctapersm" | "maxnctapersm" | "maxnreg"
                | "noreturn" | "pragma" => {
                    self.pos += 1;
                    while !self.is_punct('{') && !matches!(self.peek(), Some(Tok::Dot(_)) | None) {
                        if self.is_punct(';') {
                            // `.pragma "...";` ends here; a `;` that ends a function
                            // declaration (`.noreturn;`) is left for the check below.
                            if d == "pragma" || kind == FuncKind::Entry {
                                self.pos += 1;
                            }
                            break;
                        }
                        self.pos += 1;
                    }
                }
                other => return self.err(format!("unsupported {what} directive `.{other}`")),
            }
        }
        if self.eat_punct(';') {
            if kind == FuncKind::Entry {
                return self.err_at(loc, "kernel declarations without a body are not supported");
            }
            return Ok(AstFunc {
                kind,
                name,
                loc,
                is_extern,
                rets,
                params,
                body: None,
            });
        }
        let open = self.loc();
        self.expect_punct('{', &format!("to open the {what} body"))?;
        if is_extern {
            return self.err_at(
                open,
                format!("`.extern` {what} `{name}` may not have a body"),
            );
        }
        let body = self.block(kind, loc, 0)?;
        Ok(AstFunc {
            kind,
            name,
            loc,
            is_extern,
            rets,
            params,
            body: Some(body),
        })
    }

    /// `( .param ... , .reg ... )`: a parameter or return-value list.
    fn formal_list(&mut self, what: &str) -> PResult<Vec<AstFormal>> {
        self.paren_list(what, |p| {
            if p.is_dot("param") {
                let var = p.var_decl(false, false, true)?;
                Ok(AstFormal { var, reg: false })
            } else if p.is_dot("reg") {
                let loc = p.loc();
                p.pos += 1;
                let (align, ty, vec) = p.var_type_prefix()?;
                let name_loc = p.loc();
                let name = p.word("a register name")?;
                if !is_identifier(&name) {
                    return p.err_at(name_loc, format!("`{name}` is not a valid register name"));
                }
                if vec != 1 {
                    return p.err_at(loc, "vector registers (`.reg .v2`) are not supported");
                }
                Ok(AstFormal {
                    var: AstVar {
                        space: StateSpace::Param,
                        is_extern: false,
                        align,
                        ty,
                        vec,
                        name,
                        dims: Vec::new(),
                        init: None,
                        loc,
                    },
                    reg: true,
                })
            } else {
                p.err(format!(
                    "expected `.param` or `.reg` in {what} list, found {}",
                    p.found()
                ))
            }
        })
    }

    /// `( item, item, ... )`, possibly empty: the formal and actual lists of functions and
    /// calls (`what` names the list in errors).
    fn paren_list<T>(
        &mut self,
        what: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        self.expect_punct('(', &format!("to open the {what} list"))?;
        let mut out = Vec::new();
        if self.eat_punct(')') {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat_punct(',') {
                continue;
            }
            self.expect_punct(')', &format!("to close the {what} list"))?;
            return Ok(out);
        }
    }

    /// Statements up to the matching `}` (the `{` is consumed); nested `{ }` blocks become
    /// [`AstStmt::Block`]s. `func_loc` is the function's location (for an unterminated body).
    fn block(&mut self, kind: FuncKind, func_loc: SrcLoc, depth: u32) -> PResult<AstBlock> {
        if depth > 64 {
            return self.err("blocks nested too deeply");
        }
        let mut blk = AstBlock {
            regs: Vec::new(),
            vars: Vec::new(),
            stmts: Vec::new(),
            end_loc: func_loc,
        };
        let body = match kind {
            FuncKind::Entry => "kernel body",
            FuncKind::Func => "function body",
        };
        loop {
            let loc = self.loc();
            match self.peek() {
                None => {
                    return self.err_at(func_loc, format!("unterminated {body} (missing `}}`)"))
                }
                Some(Tok::Punct('}')) => {
                    self.pos += 1;
                    blk.end_loc = loc;
                    return Ok(blk);
                }
                Some(Tok::Punct('{')) => {
                    self.pos += 1;
                    let inner = self.block(kind, func_loc, depth + 1)?;
                    blk.stmts.push(AstStmt::Block(inner));
                }
                Some(Tok::Dot(d)) => match d.as_str() {
                    "reg" => self.reg_decl(&mut blk)?,
                    "shared" | "local" | "global" | "const" | "param" => {
                        let v = self.var_decl(false, false, false)?;
                        blk.vars.push(v);
                    }
                    "pragma" => {
                        self.pos += 1;
                        self.skip_statement()?;
                    }
                    "loc" | "file" => {
                        self.pos += 1;
                        let line = loc.line;
                        while self.toks.get(self.pos).is_some_and(|t| t.line == line) {
                            self.pos += 1;
                        }
                    }
                    "callprototype" if kind == FuncKind::Func => {
                        self.skip_statement()?;
                        blk.stmts.push(AstStmt::Unsupported {
                            message: INDIRECT_CALLS.into(),
                            loc,
                        });
                    }
                    "callprototype" => return self.err(INDIRECT_CALLS),
                    other => {
                        return self.err(format!("unsupported directive `.{other}` in {body}"))
                    }
                },
                Some(Tok::Word(w)) if self.peek_at(1) == Some(&Tok::Punct(':')) => {
                    let w = w.clone();
                    if !is_identifier(&w) {
                        return self.err(format!("`{w}` is not a valid label"));
                    }
                    self.pos += 2;
                    blk.stmts.push(AstStmt::Label(w, loc));
                }
                Some(Tok::Word(_)) | Some(Tok::Punct('@')) => {
                    let st = self.instruction(kind)?;
                    blk.stmts.push(st);
                }
                Some(_) => {
                    return self.err(format!(
                        "expected an instruction, label or directive, found {}",
                        self.found()
                    ))
                }
            }
        }
    }

    fn reg_decl(&mut self, blk: &mut AstBlock) -> PResult<()> {
        self.pos += 1; // .reg
        let (_align, ty, vec) = self.var_type_prefix()?;
        if vec != 1 {
            return self.err("vector registers (`.reg .v2`) are not supported");
        }
        loop {
            let loc = self.loc();
            let name = self.word("a register name")?;
            if !is_identifier(&name) {
                return self.err_at(loc, format!("`{name}` is not a valid register name"));
            }
            let mut count = None;
            if self.eat_punct('<') {
                let n = self.uint("a register count")?;
                if n > 1 << 20 {
                    return self.err(format!("register count {n} too large"));
                }
                count = Some(n as u32);
                self.expect_punct('>', "after register count")?;
            }
            blk.regs.push(AstRegDecl {
                ty,
                name,
                count,
                loc,
            });
            if self.eat_punct(',') {
                continue;
            }
            self.expect_punct(';', "after register declaration")?;
            return Ok(());
        }
    }

    /// One instruction, `call` included. In a device function body an unsupported opcode is
    /// recorded (see [`AstStmt::Unsupported`]); in a kernel it is an error at once.
    fn instruction(&mut self, kind: FuncKind) -> PResult<AstStmt> {
        let mut guard = None;
        if self.is_punct('@') {
            let loc = self.loc();
            self.pos += 1;
            let negate = self.eat_punct('!');
            let reg = self.word("a guard predicate")?;
            guard = Some(AstGuard { reg, negate, loc });
        }
        let loc = self.loc();
        let opcode = self.word("an opcode")?;
        let base = opcode.split('.').next().unwrap_or("");
        if base == "call" {
            return self.call(guard, opcode, loc).map(AstStmt::Call);
        }
        if super::lower::opcode_of(base).is_none() {
            let message = format!("unsupported opcode `{opcode}`");
            if kind == FuncKind::Func {
                self.skip_statement()?;
                return Ok(AstStmt::Unsupported { message, loc });
            }
            return self.err_at(loc, message);
        }
        let mut operands = Vec::new();
        if !self.is_punct(';') {
            loop {
                operands.push(self.operand(0)?);
                if self.eat_punct(',') {
                    continue;
                }
                break;
            }
        }
        if !self.eat_punct(';') {
            return self.err(format!(
                "expected `;` after instruction `{opcode}`, found {}",
                self.found()
            ));
        }
        Ok(AstStmt::Inst(AstInst {
            guard,
            opcode,
            loc,
            operands,
        }))
    }

    /// `call[.uni] [(rets),] func [, (args)] [, prototype];` (the opcode is consumed).
    fn call(&mut self, guard: Option<AstGuard>, opcode: String, loc: SrcLoc) -> PResult<AstCall> {
        if opcode != "call" && opcode != "call.uni" {
            return self.err_at(loc, format!("unsupported opcode `{opcode}`"));
        }
        let mut rets = Vec::new();
        if self.is_punct('(') {
            rets = self.call_list("return value")?;
            self.expect_punct(',', "after the return values of `call`")?;
        }
        let func_loc = self.loc();
        let func = self.word("the called function's name")?;
        let mut args = Vec::new();
        if self.eat_punct(',') {
            if !self.is_punct('(') {
                // `call f, prototype;`-like forms without arguments are indirect calls.
                return self.err(INDIRECT_CALLS);
            }
            args = self.call_list("argument")?;
            if self.eat_punct(',') {
                // A fourth operand: a `.callprototype` or a jump table of an indirect call.
                return self.err(INDIRECT_CALLS);
            }
        }
        if !self.eat_punct(';') {
            return self.err(format!(
                "expected `;` after instruction `{opcode}`, found {}",
                self.found()
            ));
        }
        Ok(AstCall {
            guard,
            func,
            func_loc,
            rets,
            args,
            loc,
        })
    }

    /// `( a, b, ... )` of a call: names and immediates.
    fn call_list(&mut self, what: &str) -> PResult<Vec<AstOperand>> {
        self.paren_list(what, |p| {
            let o = p.operand(1)?;
            if matches!(
                o.kind,
                AstOperandKind::Mem { .. } | AstOperandKind::NotReg(_)
            ) {
                return p.err_at(o.loc, format!("expected a name or a number as {what}"));
            }
            Ok(o)
        })
    }

    fn operand(&mut self, depth: u32) -> PResult<AstOperand> {
        let loc = self.loc();
        let kind = match self.peek() {
            Some(Tok::Punct('{')) if depth == 0 => {
                self.pos += 1;
                let mut elems = Vec::new();
                loop {
                    elems.push(self.operand(1)?);
                    if self.eat_punct(',') {
                        continue;
                    }
                    self.expect_punct('}', "to close the vector operand")?;
                    break;
                }
                AstOperandKind::Vec(elems)
            }
            Some(Tok::Punct('['))
                if matches!(
                    self.toks.get(self.pos + 1).map(|t| &t.tok),
                    Some(Tok::Word(_))
                ) && matches!(
                    self.toks.get(self.pos + 2).map(|t| &t.tok),
                    Some(Tok::Punct(','))
                ) =>
            {
                self.pos += 1;
                let handle = self.word("a texture")?;
                self.expect_punct(',', "after the texture")?;
                let loc = self.loc();
                let coords = match self.operand(0)? {
                    AstOperand {
                        kind: AstOperandKind::Vec(v),
                        ..
                    } => v,
                    _ => return self.err_at(loc, "expected texture coordinates `{...}`"),
                };
                self.expect_punct(']', "to close the texture operand")?;
                AstOperandKind::Tex { handle, coords }
            }
            Some(Tok::Punct('[')) => {
                self.pos += 1;
                let (base, offset) = self.address()?;
                AstOperandKind::Mem { base, offset }
            }
            Some(Tok::Punct('!')) => {
                self.pos += 1;
                let r = self.word("a predicate register after `!`")?;
                AstOperandKind::NotReg(r)
            }
            Some(Tok::Word(w)) => {
                self.pos += 1;
                if w == "_" {
                    AstOperandKind::Sink
                } else if w.starts_with('%') {
                    AstOperandKind::Reg(w.clone())
                } else {
                    AstOperandKind::Sym(w.clone())
                }
            }
            Some(Tok::Punct('-'))
            | Some(Tok::Int(_))
            | Some(Tok::F32Bits(_))
            | Some(Tok::F64Bits(_))
            | Some(Tok::Float(_)) => AstOperandKind::Imm(self.imm()?),
            _ => return self.err(format!("expected an operand, found {}", self.found())),
        };
        let op = AstOperand { kind, loc };
        if depth == 0 && self.is_punct('|') {
            self.pos += 1;
            let second = self.operand(1)?;
            return Ok(AstOperand {
                kind: AstOperandKind::Pair(Box::new(op), Box::new(second)),
                loc,
            });
        }
        Ok(op)
    }

    fn imm(&mut self) -> PResult<AstImm> {
        let neg = self.eat_punct('-');
        let v = match self.peek() {
            Some(Tok::Int(v)) => AstImm::Int(if neg { -(*v as i128) } else { *v as i128 }),
            Some(Tok::F32Bits(v)) => AstImm::F32Bits(if neg { v ^ 0x8000_0000 } else { *v }),
            Some(Tok::F64Bits(v)) => AstImm::F64Bits(if neg { v ^ (1 << 63) } else { *v }),
            Some(Tok::Float(v)) => AstImm::Float(if neg { -*v } else { *v }),
            _ => return self.err(format!("expected a number, found {}", self.found())),
        };
        self.pos += 1;
        Ok(v)
    }

    /// Inside `[ ... ]`: `reg`, `sym`, `imm`, each optionally `+ off`, `+-off`, `-off`.
    fn address(&mut self) -> PResult<(MemBase, i64)> {
        let base = match self.peek() {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                if w.starts_with('%') {
                    MemBase::Reg(w.clone())
                } else {
                    MemBase::Sym(w.clone())
                }
            }
            _ => {
                let v = self.signed_int("an address")?;
                self.expect_punct(']', "to close the address")?;
                return Ok((MemBase::Abs, v));
            }
        };
        let mut offset = 0i64;
        // `+off`, `+-off` or `-off` (the sign is read by `signed_int`).
        if self.eat_punct('+') || self.is_punct('-') {
            offset = self.signed_int("an address offset")?;
        }
        self.expect_punct(']', "to close the address")?;
        Ok((base, offset))
    }

    fn signed_int(&mut self, what: &str) -> PResult<i64> {
        let neg = self.eat_punct('-');
        let v = self.uint(what)?;
        if v > i64::MAX as u64 {
            return self.err(format!("{what} {v} out of range"));
        }
        Ok(if neg { -(v as i64) } else { v as i64 })
    }
}
