//! Mutants: deliberately broken variants of the RTL that the harness must catch
//! (design.md §4: "the harness must be able to fail").
//!
//! [`generate`] tokenises the Verilog (comments, strings and attributes skipped), finds
//! every site of each operator class below and returns one mutant per site, in text order,
//! without duplicates or no-op edits. Module headers, declarations (their ranges decide
//! port widths: a mutant there is a different interface, not a bug) and `for` headers
//! (which Verilator unrolls: a mutant there can hang the build) are never mutated.
//!
//! | class | edit |
//! |---|---|
//! | `CompareFlip` | `==` ↔ `!=`, `<` ↔ `>=`, `>` ↔ `<=` (comparisons only, never a nonblocking `<=`) |
//! | `OffByOne` | `+ 1` → `+ 2`, `- 1` → `- 2` (any literal one: `1`, `4'd1`, `1'b1`) |
//! | `MaskSwap` | `& ~x` → `& x`; binary `&` ↔ `\|`; `&&` ↔ `\|\|` |
//! | `StuckBit` | bit 0 of an assigned value forced to 0 or to 1 (non-constant right-hand sides) |
//! | `DropReset` | one assignment removed from the reset branch (`if (!rst_n)`) |
//! | `InvertIf` | `if (c)` → `if (!(c))` |
//! | `SwapTargets` | two adjacent nonblocking assignments exchange their targets |
//! | `RamPort` | a port of a `wf_ram_dp` instance: write or read enable stuck at 0 or 1, write or read address off by one (a wrong spill or fill/prefetch word) |
//! | `Directed` | a unit's own hand-written edits of its storage logic (its kit's `mutants`, e.g. the registered-read fill data never selected) |
//!
//! [`select`] picks a deterministic, class-balanced subset of the seven operator classes;
//! [`run_mutants`] adds every `RamPort` and `Directed` mutant (the storage logic is small
//! and every one of them must be caught), builds each (in the build cache, so re-runs are
//! free), runs it in lockstep with a fresh stimulus and reports killed / survived / not
//! built. A mutant that makes the RTL stop (a failed check of illegal RAM use, `$stop`) is
//! killed too. A survivor is either equivalent to the original or a gap in the stimulus:
//! the report lists it so a person can tell which.

use crate::build::{BuildOptions, RtlSource};
use crate::lockstep::{Cosim, Stimulus};
use crate::CosimError;
use std::fmt;
use std::time::{Duration, Instant};
use warpforge_model::units::contract::{Params, UnitDesc};

/// The operator classes, in selection order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MutantClass {
    CompareFlip,
    OffByOne,
    MaskSwap,
    StuckBit,
    DropReset,
    InvertIf,
    SwapTargets,
    /// A port connection of a storage primitive (`wf_ram_dp`) instance.
    RamPort,
    /// A hand-written edit from the unit's co-simulation kit.
    Directed,
}

/// The operator classes [`select`] balances (the storage classes are always run in full).
pub const CLASSES: [MutantClass; 7] = [
    MutantClass::CompareFlip,
    MutantClass::OffByOne,
    MutantClass::MaskSwap,
    MutantClass::StuckBit,
    MutantClass::DropReset,
    MutantClass::InvertIf,
    MutantClass::SwapTargets,
];

/// One variant of the Verilog text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// `m` + its index in [`generate`]'s order (stable for a given text).
    pub id: String,
    pub class: MutantClass,
    /// 1-based line of the edit.
    pub line: usize,
    pub description: String,
    pub text: String,
    /// `(parameter, value)`: the mutant is equivalent unless the unit's parameter has this
    /// value (e.g. a read-enable mutant of a RAM whose read is asynchronous); run only
    /// there ([`Mutant::applies`]).
    pub only_if: Option<(String, u64)>,
}

impl Mutant {
    /// Whether the mutant can differ from the original at `params`.
    pub fn applies(&self, params: &Params) -> bool {
        match &self.only_if {
            None => true,
            Some((name, value)) => params
                .iter()
                .find(|(n, _)| n == name)
                .is_none_or(|(_, v)| v == *value),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Number,
    Op,
}

#[derive(Debug, Clone)]
pub(crate) struct Tok<'a> {
    pub(crate) kind: Kind,
    pub(crate) text: &'a str,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) line: usize,
}

const OPS: [&str; 31] = [
    "<<<", ">>>", "===", "!==", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "~&", "~|", "~^",
    "^~", "->", "**", "+:", "-:", "(*", "*)", "+", "-", "*", "/", "%", "&", "|", "^", "~",
];

pub(crate) fn lex(src: &str) -> Vec<Tok<'_>> {
    let b = src.as_bytes();
    let mut toks = vec![];
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if src[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if src[i..].starts_with("/*") {
            let end = src[i + 2..]
                .find("*/")
                .map(|e| i + 4 + e)
                .unwrap_or(b.len());
            line += src[i..end].matches('\n').count();
            i = end;
        } else if src[i..].starts_with("(*") && !src[i..].starts_with("(*)") {
            // attribute (* ... *)
            let end = src[i + 2..]
                .find("*)")
                .map(|e| i + 4 + e)
                .unwrap_or(b.len());
            line += src[i..end].matches('\n').count();
            i = end;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'`' {
            let s = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            toks.push(Tok {
                kind: Kind::Ident,
                text: &src[s..i],
                start: s,
                end: i,
                line,
            });
        } else if c.is_ascii_digit() || c == b'\'' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && b[i] == b'\'' {
                i += 1;
                if i < b.len() && (b[i] == b's' || b[i] == b'S') {
                    i += 1;
                }
                if i < b.len() && b"bBoOdDhH".contains(&b[i]) {
                    i += 1;
                }
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'?')
                {
                    i += 1;
                }
            }
            toks.push(Tok {
                kind: Kind::Number,
                text: &src[s..i],
                start: s,
                end: i,
                line,
            });
        } else {
            let s = i;
            let op = OPS.iter().find(|o| src[i..].starts_with(**o));
            i += op.map(|o| o.len()).unwrap_or(1);
            toks.push(Tok {
                kind: Kind::Op,
                text: &src[s..i],
                start: s,
                end: i,
                line,
            });
        }
    }
    toks
}

/// The value of a Verilog integer literal, if it is a plain known number.
fn literal_value(t: &str) -> Option<u64> {
    let t = t.replace('_', "");
    match t.find('\'') {
        None => t.parse().ok(),
        Some(q) => {
            let rest = t[q + 1..].trim_start_matches(['s', 'S']);
            let (radix, digits) = match rest.chars().next()? {
                'b' | 'B' => (2, &rest[1..]),
                'o' | 'O' => (8, &rest[1..]),
                'd' | 'D' => (10, &rest[1..]),
                'h' | 'H' => (16, &rest[1..]),
                _ => return None,
            };
            u64::from_str_radix(digits, radix).ok()
        }
    }
}

/// A constant right-hand side: a literal, or a replication of a one-bit literal
/// (`{W{1'b0}}`, `{W{1'b1}}`), whose value does not depend on the target's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Const {
    Num(u64),
    AllOnes,
}

fn constant(toks: &[Tok]) -> Option<Const> {
    match toks {
        [t] if t.kind == Kind::Number => literal_value(t.text).map(Const::Num),
        [open, .., inner_open, bit, inner_close, close]
            if open.text == "{"
                && inner_open.text == "{"
                && inner_close.text == "}"
                && close.text == "}"
                && bit.kind == Kind::Number =>
        {
            match literal_value(bit.text)? {
                0 => Some(Const::Num(0)),
                1 if bit.text.starts_with("1'") => Some(Const::AllOnes),
                _ => None,
            }
        }
        _ => None,
    }
}

const DECL_KEYWORDS: [&str; 12] = [
    "input",
    "output",
    "inout",
    "wire",
    "reg",
    "logic",
    "parameter",
    "localparam",
    "integer",
    "genvar",
    "function",
    "task",
];

/// A nonblocking or continuous assignment statement.
#[derive(Debug, Clone)]
pub(crate) struct Assign {
    /// Token index of the first LHS token.
    pub(crate) lhs_first: usize,
    /// Token index of the `<=` / `=`.
    pub(crate) op: usize,
    /// Token index of the terminating `;`.
    pub(crate) semi: usize,
    pub(crate) nonblocking: bool,
    /// Inside the then-branch of a reset `if`.
    in_reset: bool,
    /// The single-statement body of an `if`/`else`/loop (not a plain block statement).
    pub(crate) guarded: bool,
}

pub(crate) struct Sites {
    compare: Vec<usize>,
    off_by_one: Vec<usize>,
    mask: Vec<usize>,
    /// `(open, close)`: the parentheses of an `if` header.
    pub(crate) ifs: Vec<(usize, usize)>,
    pub(crate) assigns: Vec<Assign>,
}

pub(crate) fn scan(toks: &[Tok]) -> Sites {
    let mut s = Sites {
        compare: vec![],
        off_by_one: vec![],
        mask: vec![],
        ifs: vec![],
        assigns: vec![],
    };
    let mut paren = 0i32;
    let mut bracket = 0i32;
    // Statement state.
    let mut stmt_start = 0usize;
    let mut assigned: Option<(usize, bool)> = None; // (op index, nonblocking)
    let mut guarded = false;
    let mut decl = false;
    // The declaration is of a net/variable (`wire x = e;` is a continuous assignment whose
    // right-hand side is mutated; parameter values are not).
    let mut decl_net = false;
    let mut in_header = false; // module header up to its `;`
                               // Paren groups that are statement headers (if/for/case/while/@): (depth, kind, open idx)
    let mut headers: Vec<(i32, &str, usize)> = vec![];
    let mut pending_header: Option<&str> = None;
    let mut for_depth: Option<i32> = None;
    // Reset branch tracking: begin/end depth at which the reset branch closes.
    let mut block_depth = 0i32;
    let mut reset_pending = false; // the reset `if` header just closed
    let mut reset_until: Option<i32> = None; // block depth of the reset `begin`
    let mut reset_single = false; // single-statement reset branch

    let operand_end = |t: &Tok| t.kind != Kind::Op || matches!(t.text, ")" | "]" | "}");
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let skip = in_header || decl || for_depth.is_some();
        match (t.kind, t.text) {
            (Kind::Ident, "module") => {
                in_header = true;
            }
            (Kind::Ident, kw)
                if paren == 0
                    && !in_header
                    && DECL_KEYWORDS.contains(&kw)
                    && assigned.is_none() =>
            {
                if !decl {
                    decl_net = matches!(kw, "wire" | "reg" | "logic");
                }
                decl = true;
            }
            (Kind::Ident, "begin") => {
                block_depth += 1;
                if reset_pending {
                    reset_until = Some(block_depth);
                    reset_pending = false;
                }
                // A named block `begin : name`: its statements start after the name.
                if toks.get(i + 1).is_some_and(|t| t.text == ":")
                    && toks.get(i + 2).is_some_and(|t| t.kind == Kind::Ident)
                {
                    i += 2;
                }
                stmt_start = i + 1;
                assigned = None;
                guarded = false;
            }
            (Kind::Ident, "end") => {
                if reset_until == Some(block_depth) {
                    reset_until = None;
                }
                block_depth -= 1;
                stmt_start = i + 1;
                assigned = None;
                guarded = false;
            }
            (
                Kind::Ident,
                "else" | "default" | "endcase" | "endmodule" | "always" | "initial" | "generate"
                | "endgenerate" | "endfunction" | "endtask",
            ) => {
                stmt_start = i + 1;
                assigned = None;
                guarded = t.text == "else";
            }
            (Kind::Ident, "if" | "case" | "casez" | "casex" | "while" | "for" | "repeat") => {
                pending_header = Some(t.text);
                if reset_pending {
                    // `if (!rst_n) if (...)`: treat as a single-statement branch.
                    reset_pending = false;
                    reset_single = true;
                }
            }
            (Kind::Op, "@") => pending_header = Some("@"),
            (Kind::Op, "(") => {
                if let Some(kind) = pending_header.take() {
                    headers.push((paren, kind, i));
                    if kind == "for" && for_depth.is_none() {
                        for_depth = Some(paren);
                    }
                }
                paren += 1;
            }
            (Kind::Op, ")") => {
                paren -= 1;
                if let Some(&(d, kind, open)) = headers.last() {
                    if d == paren {
                        headers.pop();
                        if for_depth == Some(paren) {
                            for_depth = None;
                        }
                        if kind == "if" && !skip {
                            s.ifs.push((open, i));
                            let cond: String = toks[open + 1..i].iter().map(|t| t.text).collect();
                            if matches!(
                                cond.as_str(),
                                "!rst_n" | "~rst_n" | "rst_n==1'b0" | "rst_n==0" | "(!rst_n)"
                            ) {
                                reset_pending = true;
                            }
                        }
                        stmt_start = i + 1;
                        assigned = None;
                        guarded = true;
                    }
                }
            }
            (Kind::Op, "[") => bracket += 1,
            (Kind::Op, "]") => bracket -= 1,
            (Kind::Op, ";") => {
                if let Some((op, nb)) = assigned {
                    if !skip && paren == 0 {
                        s.assigns.push(Assign {
                            lhs_first: stmt_start,
                            op,
                            semi: i,
                            nonblocking: nb,
                            in_reset: reset_until.is_some() || reset_pending || reset_single,
                            guarded,
                        });
                    }
                }
                if reset_pending {
                    // single-statement reset branch ended
                    reset_pending = false;
                }
                reset_single = false;
                if paren == 0 {
                    in_header = false;
                    decl = false;
                }
                stmt_start = i + 1;
                assigned = None;
                guarded = false;
            }
            (Kind::Op, ":") if paren == 0 && bracket == 0 && assigned.is_none() => {
                // case label
                stmt_start = i + 1;
            }
            (Kind::Op, "=") if paren == 0 && bracket == 0 && assigned.is_none() => {
                if decl && decl_net && !in_header {
                    decl = false;
                    stmt_start = i - 1; // the declared name
                }
                assigned = Some((i, false));
            }
            (Kind::Op, "<=") if paren == 0 && bracket == 0 && assigned.is_none() => {
                assigned = Some((i, true));
            }
            (Kind::Op, "==" | "!=" | "<" | ">=" | ">" | "<=") if !skip => {
                s.compare.push(i);
            }
            (Kind::Op, "+" | "-")
                if !skip
                    && i > 0
                    && operand_end(&toks[i - 1])
                    && toks.get(i + 1).is_some_and(|n| {
                        n.kind == Kind::Number && literal_value(n.text) == Some(1)
                    }) =>
            {
                s.off_by_one.push(i);
            }
            (Kind::Op, "&" | "|") if !skip && i > 0 && operand_end(&toks[i - 1]) => {
                s.mask.push(i);
            }
            (Kind::Op, "&&" | "||") if !skip => s.mask.push(i),
            _ => {}
        }
        i += 1;
    }
    s
}

struct Gen<'a> {
    src: &'a str,
    out: Vec<Mutant>,
}

impl Gen<'_> {
    fn push(
        &mut self,
        class: MutantClass,
        line: usize,
        description: String,
        edits: &[(usize, usize, String)],
    ) {
        self.push_if(class, line, description, edits, None)
    }

    fn push_if(
        &mut self,
        class: MutantClass,
        line: usize,
        description: String,
        edits: &[(usize, usize, String)],
        only_if: Option<(String, u64)>,
    ) {
        let mut edits = edits.to_vec();
        edits.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut text = self.src.to_string();
        for (s, e, r) in edits {
            text.replace_range(s..e, &r);
        }
        if text == self.src || self.out.iter().any(|m| m.text == text) {
            return;
        }
        self.out.push(Mutant {
            id: String::new(),
            class,
            line,
            description,
            text,
            only_if,
        });
    }
}

/// Every mutant of `verilog` (see the module docs), deterministic, deduplicated.
pub fn generate(verilog: &str) -> Vec<Mutant> {
    let toks = lex(verilog);
    let sites = scan(&toks);
    let mut g = Gen {
        src: verilog,
        out: vec![],
    };
    let span = |a: usize, b: usize| verilog[toks[a].start..toks[b].end].to_string();
    for &i in &sites.compare {
        let t = &toks[i];
        let r = match t.text {
            "==" => "!=",
            "!=" => "==",
            "<" => ">=",
            ">=" => "<",
            ">" => "<=",
            "<=" => ">",
            _ => continue,
        };
        g.push(
            MutantClass::CompareFlip,
            t.line,
            format!("line {}: `{}` → `{r}`", t.line, t.text),
            &[(t.start, t.end, r.into())],
        );
    }
    for &i in &sites.off_by_one {
        let (op, n) = (&toks[i], &toks[i + 1]);
        g.push(
            MutantClass::OffByOne,
            op.line,
            format!(
                "line {}: `{} {}` → `{} 2`",
                op.line, op.text, n.text, op.text
            ),
            &[(n.start, n.end, "2".into())],
        );
    }
    for &i in &sites.mask {
        let t = &toks[i];
        if t.text == "&" && toks.get(i + 1).is_some_and(|n| n.text == "~") {
            let n = &toks[i + 1];
            g.push(
                MutantClass::MaskSwap,
                t.line,
                format!("line {}: `& ~x` → `& x` (mask not inverted)", t.line),
                &[(n.start, n.end, String::new())],
            );
        }
        let r = match t.text {
            "&" => "|",
            "|" => "&",
            "&&" => "||",
            "||" => "&&",
            _ => continue,
        };
        g.push(
            MutantClass::MaskSwap,
            t.line,
            format!("line {}: `{}` → `{r}`", t.line, t.text),
            &[(t.start, t.end, r.into())],
        );
    }
    for a in &sites.assigns {
        if a.op + 1 >= a.semi {
            continue;
        }
        let rhs_first = a.op + 1;
        let rhs_last = a.semi - 1;
        let constant = constant(&toks[rhs_first..=rhs_last]).is_some();
        let lhs = span(a.lhs_first, a.op - 1);
        let rhs = span(rhs_first, rhs_last);
        let (s, e) = (toks[rhs_first].start, toks[rhs_last].end);
        let line = toks[a.op].line;
        if !constant {
            g.push(
                MutantClass::StuckBit,
                line,
                format!("line {line}: bit 0 of `{lhs}` stuck at 0"),
                &[(s, e, format!("(({rhs}) >> 1) << 1"))],
            );
            g.push(
                MutantClass::StuckBit,
                line,
                format!("line {line}: bit 0 of `{lhs}` stuck at 1"),
                &[(s, e, format!("({rhs}) | 1'b1"))],
            );
        }
        if a.in_reset && a.nonblocking {
            g.push(
                MutantClass::DropReset,
                line,
                format!("line {line}: reset of `{lhs}` dropped"),
                &[(
                    toks[a.lhs_first].start,
                    toks[a.semi].end,
                    // An empty block, not nothing: in an unbraced `if (!rst_n) x <= 0;` the
                    // branch keeps a statement (the next one does not move under the `if`).
                    format!("begin /* reset of {lhs} dropped */ end"),
                )],
            );
        }
    }
    for &(open, close) in &sites.ifs {
        let cond = span(open + 1, close - 1);
        let line = toks[open].line;
        g.push(
            MutantClass::InvertIf,
            line,
            format!("line {line}: `if ({cond})` inverted"),
            &[(toks[open].start, toks[close].end, format!("(!({cond}))"))],
        );
    }
    for w in sites.assigns.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let plain = |x: &Assign| x.nonblocking && !x.guarded;
        if !plain(a) || !plain(b) || b.lhs_first != a.semi + 1 {
            continue;
        }
        let (la, lb) = (span(a.lhs_first, a.op - 1), span(b.lhs_first, b.op - 1));
        let (ra, rb) = (span(a.op + 1, a.semi - 1), span(b.op + 1, b.semi - 1));
        let value = |x: &Assign| constant(&toks[x.op + 1..x.semi]);
        if ra == rb || la == lb || (value(a).is_some() && value(a) == value(b)) {
            continue; // the swap would be equivalent (e.g. two registers reset to zero)
        }
        let line = toks[b.op].line;
        g.push(
            MutantClass::SwapTargets,
            line,
            format!("line {line}: targets `{la}` and `{lb}` swapped"),
            &[
                (toks[a.lhs_first].start, toks[a.op - 1].end, lb.clone()),
                (toks[b.lhs_first].start, toks[b.op - 1].end, la.clone()),
            ],
        );
    }
    for RamConnection {
        port,
        span: (s, e),
        line,
        rd_reg,
        ..
    } in ram_ports(&toks, verilog)
    {
        let text = &verilog[s..e];
        // The read enable only qualifies the range check of an asynchronous read.
        let only_if = match (port, rd_reg) {
            ("rd_en", RdReg::Param(p)) => Some((p.to_string(), 1)),
            ("rd_en", RdReg::Const(false)) => continue,
            _ => None,
        };
        let edits: Vec<(String, String)> = match port {
            "wr_en" => vec![
                ("1'b0".into(), "RAM write enable stuck at 0".into()),
                ("1'b1".into(), "RAM write enable stuck at 1".into()),
            ],
            "rd_en" => vec![
                ("1'b0".into(), "RAM read enable stuck at 0".into()),
                ("1'b1".into(), "RAM read enable stuck at 1".into()),
            ],
            "wr_addr" => vec![(
                format!("({text}) + 1'b1"),
                "RAM write address off by one (spill to the wrong word)".into(),
            )],
            "rd_addr" => vec![(
                format!("({text}) + 1'b1"),
                "RAM read address off by one (fill or prefetch of the wrong word)".into(),
            )],
            _ => vec![],
        };
        for (to, what) in edits {
            g.push_if(
                MutantClass::RamPort,
                line,
                format!("line {line}: .{port}({text}) → .{port}({to}): {what}"),
                &[(s, e, to)],
                only_if.clone(),
            );
        }
    }
    let mut out = g.out;
    for (k, m) in out.iter_mut().enumerate() {
        m.id = format!("m{k:03}");
    }
    out
}

/// The library module whose instances' ports [`MutantClass::RamPort`] mutates.
pub const RAM_MODULE: &str = "wf_ram_dp";

/// How a RAM instance sets its `RD_REG` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RdReg<'a> {
    Const(bool),
    /// From the unit's parameter of that name.
    Param(&'a str),
}

/// A connection `.port (expr)` of a [`RAM_MODULE`] instance.
pub(crate) struct RamConnection<'a> {
    pub(crate) instance: &'a str,
    pub(crate) port: &'a str,
    /// The byte span of `expr`.
    pub(crate) span: (usize, usize),
    pub(crate) line: usize,
    /// The instance's read mode.
    pub(crate) rd_reg: RdReg<'a>,
}

/// The port connections of every [`RAM_MODULE`] instance.
pub(crate) fn ram_ports<'a>(toks: &[Tok<'a>], src: &str) -> Vec<RamConnection<'a>> {
    let mut out = vec![];
    let mut i = 0;
    while i < toks.len() {
        if !(toks[i].kind == Kind::Ident && toks[i].text == RAM_MODULE) {
            i += 1;
            continue;
        }
        // Skip the parameter list `#( ... )`, then the instance name, to the port list.
        let mut j = i + 1;
        // The primitive's default is a registered read.
        let mut rd_reg = RdReg::Const(true);
        if toks.get(j).is_some_and(|t| t.text == "#") {
            let close = skip_group(toks, j + 1);
            for k in j + 1..close.saturating_sub(3) {
                if toks[k].text == "." && toks[k + 1].text == "RD_REG" && toks[k + 2].text == "(" {
                    let v = &toks[k + 3];
                    rd_reg = match (v.kind, literal_value(v.text)) {
                        (Kind::Number, Some(n)) => RdReg::Const(n != 0),
                        _ => RdReg::Param(v.text),
                    };
                }
            }
            j = close + 1;
        }
        let instance = toks.get(j).map_or("", |t| t.text);
        j += 1; // past the instance name
        if toks.get(j).is_none_or(|t| t.text != "(") {
            i += 1;
            continue;
        }
        let end = skip_group(toks, j);
        let mut k = j + 1;
        while k + 2 < end {
            if toks[k].text == "." && toks[k + 1].kind == Kind::Ident && toks[k + 2].text == "(" {
                let close = skip_group(toks, k + 2);
                if close > k + 3 {
                    let span = (toks[k + 3].start, toks[close - 1].end);
                    debug_assert!(span.1 <= src.len());
                    out.push(RamConnection {
                        instance,
                        port: toks[k + 1].text,
                        span,
                        line: toks[k + 1].line,
                        rd_reg,
                    });
                }
                k = close + 1;
            } else {
                k += 1;
            }
        }
        i = end + 1;
    }
    out
}

/// The index of the `)` that closes the group opened at `open`
/// (or the last token when unbalanced).
pub(crate) fn skip_group(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.text {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    toks.len().saturating_sub(1)
}

/// A unit's hand-written mutant: replace the first occurrence of `from` (which must occur
/// in the generated text) with `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectedMutant {
    pub description: &'static str,
    pub from: &'static str,
    pub to: &'static str,
    /// `(parameter, value)`: equivalent unless the parameter has that value.
    pub only_if: Option<(&'static str, u64)>,
}

/// A generated mutant argued equivalent to the original (it can change no output), declared
/// in the unit's kit with the argument, so that its survival is explained in the report
/// rather than left for a person to judge. Matched by the original line's text and the edit.
#[derive(Debug, Clone, Copy)]
pub struct KnownEquivalent {
    /// A substring of the mutated line as generated (before the edit).
    pub line: &'static str,
    /// A substring of the mutant's description: its edit, e.g. "`- 1` → `- 2`".
    pub edit: &'static str,
    /// Why no output can change.
    pub reason: &'static str,
    /// The parameters at which the argument holds (elsewhere the mutant must be killed).
    pub when: fn(&Params) -> bool,
}

impl KnownEquivalent {
    /// The declaration of `desc`'s kit that explains mutant `m` of `verilog` at `params`.
    pub fn of(
        desc: &'static UnitDesc,
        verilog: &str,
        m: &Mutant,
        params: &Params,
    ) -> Option<&'static KnownEquivalent> {
        let line = verilog.lines().nth(m.line.checked_sub(1)?)?;
        crate::kits::kit(desc)?
            .equivalents
            .iter()
            .find(|e| line.contains(e.line) && m.description.contains(e.edit) && (e.when)(params))
    }
}

/// Every mutant of a unit's module text: [`generate`]'s, then the unit's kit's directed
/// ones (ids `d00`, `d01`...). A directed edit whose `from` is not in the text is an error
/// naming it (the template changed under it).
pub fn candidates(desc: &'static UnitDesc, verilog: &str) -> Result<Vec<Mutant>, String> {
    let mut out = generate(verilog);
    let directed = crate::kits::kit(desc).map_or(&[][..], |k| k.mutants);
    for (k, d) in directed.iter().enumerate() {
        let Some(at) = verilog.find(d.from) else {
            return Err(format!(
                "{}: directed mutant `{}`: `{}` is not in the generated RTL",
                desc.name, d.description, d.from
            ));
        };
        let line = verilog[..at].matches('\n').count() + 1;
        out.push(Mutant {
            id: format!("d{k:02}"),
            class: MutantClass::Directed,
            line,
            description: format!("line {line}: {}", d.description),
            text: verilog.replacen(d.from, d.to, 1),
            only_if: d.only_if.map(|(p, v)| (p.to_string(), v)),
        });
    }
    Ok(out)
}

/// Indices `0..k` in a spread order: 0, k/2, k/4, 3k/4, k/8... then any left over, so the
/// first few picks of a class come from all over the file, not from its first lines.
fn spread(k: usize) -> Vec<usize> {
    let mut order = vec![];
    let mut seen = vec![false; k];
    let mut den = 1usize;
    while den <= 2 * k.max(1) {
        for num in (0..den).filter(|n| den == 1 || n % 2 == 1) {
            let i = num * k / den;
            if i < k && !seen[i] {
                seen[i] = true;
                order.push(i);
            }
        }
        den *= 2;
    }
    order.extend((0..k).filter(|&i| !seen[i]));
    order
}

/// A deterministic, class-balanced subset of at most `n` mutants: round robin over the
/// classes in [`CLASSES`] order, each class in a spread order over the text.
pub fn select(mutants: &[Mutant], n: usize) -> Vec<Mutant> {
    let by_class: Vec<Vec<&Mutant>> = CLASSES
        .iter()
        .map(|c| {
            let v: Vec<&Mutant> = mutants.iter().filter(|m| m.class == *c).collect();
            spread(v.len()).into_iter().map(|i| v[i]).collect()
        })
        .collect();
    let mut out = vec![];
    let mut round = 0;
    while out.len() < n && by_class.iter().any(|v| v.len() > round) {
        for v in &by_class {
            if out.len() < n {
                if let Some(m) = v.get(round) {
                    out.push((*m).clone());
                }
            }
        }
        round += 1;
    }
    out
}

/// How a mutant fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MutantOutcome {
    /// The lockstep run diverged.
    Killed { cycle: u64, port: String },
    /// The RTL raised `$finish`/`$stop`/a fatal error (e.g. a combinational loop).
    KilledByError { cycle: u64, message: String },
    /// Every cycle matched: an equivalent mutant or a gap in the stimulus.
    Survived { cycles: u64 },
    /// Verilator or the compiler rejected it (excluded from the kill ratio).
    NotBuilt { error: String },
}

#[derive(Debug, Clone)]
pub struct MutantResult {
    pub id: String,
    pub class: MutantClass,
    pub description: String,
    pub outcome: MutantOutcome,
    /// Build (or cache fetch) plus run time.
    pub time: Duration,
    /// For a survivor: the kit's argument that it is equivalent, if it has one.
    pub equivalent: Option<&'static str>,
    /// Run from the mutant schema's build (`mutant_schema`), not a build of its own.
    pub from_schema: bool,
}

#[derive(Debug, Clone)]
pub struct MutantReport {
    pub unit: String,
    pub params: String,
    /// Mutants [`generate`] found.
    pub generated: usize,
    pub killed: usize,
    /// Every survivor, the equivalent ones included.
    pub survived: usize,
    /// Survivors the unit's kit argues equivalent ([`KnownEquivalent`]).
    pub equivalent: usize,
    pub not_built: usize,
    pub results: Vec<MutantResult>,
    /// Why the mutant schema was not used, when it was tried and failed to build (its
    /// mutants were then built one by one).
    pub schema_error: Option<String>,
    /// The error of a first schema build that failed when a second one, without the
    /// mutants on the lines the error names, built (those mutants were built alone).
    pub schema_retry: Option<String>,
}

impl MutantReport {
    /// The mutation score: killed / (killed + survivors not argued equivalent). Mutants
    /// that did not build and equivalent ones do not count (no stimulus can kill them).
    pub fn kill_ratio(&self) -> f64 {
        let n = self.killed + self.survived - self.equivalent;
        if n == 0 {
            0.0
        } else {
            self.killed as f64 / n as f64
        }
    }

    pub fn survivors(&self) -> impl Iterator<Item = &MutantResult> {
        self.results
            .iter()
            .filter(|r| matches!(r.outcome, MutantOutcome::Survived { .. }))
    }

    /// Survivors the unit's kit does not explain as equivalent: gaps in the stimulus.
    pub fn unexplained(&self) -> impl Iterator<Item = &MutantResult> {
        self.survivors().filter(|r| r.equivalent.is_none())
    }
}

impl MutantReport {
    /// (killed, run) of the operator-class mutants ([`CLASSES`]) and of the storage ones
    /// (`RamPort`, `Directed`).
    pub fn split(&self) -> [(usize, usize); 2] {
        let mut out = [(0, 0); 2];
        for r in &self.results {
            let k = !CLASSES.contains(&r.class) as usize;
            match r.outcome {
                MutantOutcome::Killed { .. } | MutantOutcome::KilledByError { .. } => {
                    out[k].0 += 1;
                    out[k].1 += 1;
                }
                MutantOutcome::Survived { .. } => out[k].1 += 1,
                MutantOutcome::NotBuilt { .. } => {}
            }
        }
        out
    }
}

impl fmt::Display for MutantReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [(ok, n), (sk, sn)] = self.split();
        writeln!(
            f,
            "mutants of {} ({}): {} run of {} generated: {} killed, {} survived ({} equivalent), {} not built; mutation score {:.1}% of the non-equivalent (operator classes {ok}/{n}, storage {sk}/{sn})",
            self.unit,
            self.params,
            self.results.len(),
            self.generated,
            self.killed,
            self.survived,
            self.equivalent,
            self.not_built,
            100.0 * self.kill_ratio()
        )?;
        let from_schema = self.results.iter().filter(|r| r.from_schema).count();
        if from_schema > 0 {
            writeln!(
                f,
                "  {from_schema} of them run from one mutant-schema build, {} built alone",
                self.results.len() - from_schema
            )?;
        }
        let first_error = |e: &'_ str| {
            (e.lines().find(|l| l.contains("%Error")))
                .or_else(|| e.lines().find(|l| !l.trim().is_empty()))
                .unwrap_or("")
                .to_string()
        };
        if let Some(e) = &self.schema_error {
            writeln!(
                f,
                "  the mutant schema did not build (each mutant was built alone): {}",
                first_error(e)
            )?;
        }
        if let Some(e) = &self.schema_retry {
            writeln!(
                f,
                "  the mutant schema built without the mutants on the lines its first build's errors name, or reading a net declared there (built alone): {}",
                first_error(e)
            )?;
        }
        for r in &self.results {
            let o = match &r.outcome {
                MutantOutcome::Killed { cycle, port } => {
                    format!("killed at cycle {cycle} on {port}")
                }
                MutantOutcome::KilledByError { cycle, message } => {
                    format!("killed at cycle {cycle} by RTL error: {message}")
                }
                MutantOutcome::Survived { cycles } => match r.equivalent {
                    Some(why) => format!("survived {cycles} cycles: equivalent ({why})"),
                    None => {
                        format!("SURVIVED {cycles} cycles (equivalent, or the stimulus misses it)")
                    }
                },
                MutantOutcome::NotBuilt { error } => {
                    let first = error.lines().find(|l| l.contains("%Error")).unwrap_or("");
                    format!("not built (excluded) {first}")
                }
            };
            // Which mutants the schema could not place, when there was one.
            let alone = if from_schema > 0 && !r.from_schema {
                "built alone, "
            } else {
                ""
            };
            writeln!(
                f,
                "  {} {:?} {}: {o} [{alone}{:.2} s]",
                r.id,
                r.class,
                r.description,
                r.time.as_secs_f64()
            )?;
        }
        Ok(())
    }
}

/// Options of [`run_mutants`].
#[derive(Debug, Clone)]
pub struct MutantOptions {
    /// At most this many mutants (a class-balanced [`select`]ion).
    pub max_mutants: usize,
    /// Cycle limit of each run.
    pub max_cycles: u64,
    /// Default: [`BuildOptions::for_mutants`] (the builds, not the runs, are most of a
    /// mutant's cost).
    pub build: BuildOptions,
    /// Index of the file to mutate (default: the one that declares the unit's module, not
    /// a library module or the co-simulation wrapper).
    pub file: Option<usize>,
    /// Build the mutants together as one mutant schema (`mutant_schema`) and switch each
    /// on at run time; the mutants it cannot place are built alone. Off: every mutant is
    /// built alone (the outcomes are the same; see the schema's module documentation).
    pub schema: bool,
}

impl Default for MutantOptions {
    fn default() -> Self {
        MutantOptions {
            max_mutants: 16,
            max_cycles: 200_000,
            build: BuildOptions::default().for_mutants(),
            file: None,
            schema: true,
        }
    }
}

/// Build and run mutants of `rtl` against the unit model. The unmutated design must pass
/// first (an error otherwise). Each mutant gets a fresh stimulus from `make_stimulus`.
/// Mutants are built one after the other: each build already runs two compiler processes.
pub fn run_mutants<S, F>(
    desc: &'static UnitDesc,
    params: &Params,
    rtl: &RtlSource,
    mut make_stimulus: F,
    opts: &MutantOptions,
) -> Result<MutantReport, CosimError>
where
    S: Stimulus + Send,
    F: FnMut() -> S,
{
    let original = Cosim::new(desc, params.clone(), rtl.clone(), &opts.build)?
        .with_failure_dir(None)
        .with_max_cycles(opts.max_cycles);
    original.run(&mut make_stimulus()).map_err(|e| match e {
        CosimError::Divergence(d) => CosimError::Build {
            stage: "mutants".into(),
            log: format!("the unmutated RTL does not match the model:\n{d}"),
        },
        e => e,
    })?;
    let file = opts.file.unwrap_or_else(|| rtl.file_of_module(desc.name));
    let all = candidates(desc, &rtl.files[file].1).map_err(|log| CosimError::Build {
        stage: "mutants".into(),
        log,
    })?;
    // A balanced selection of the operator classes, then every storage mutant that is not
    // equivalent at these parameters.
    let mut chosen = select(&all, opts.max_mutants);
    chosen.extend(
        all.iter()
            .filter(|m| !CLASSES.contains(&m.class) && m.applies(params))
            .cloned(),
    );
    let mut report = MutantReport {
        unit: desc.name.to_string(),
        params: params.to_string(),
        generated: all.len(),
        killed: 0,
        survived: 0,
        equivalent: 0,
        not_built: 0,
        results: vec![],
        schema_error: None,
        schema_retry: None,
    };
    let schema = if opts.schema {
        schema_model(desc, params, rtl, file, &chosen, opts, &mut report)?
    } else {
        None
    };
    for m in chosen {
        let t0 = Instant::now();
        let equivalent =
            KnownEquivalent::of(desc, &rtl.files[file].1, &m, params).map(|e| e.reason);
        // From the schema's build, else alone.
        let member = schema
            .as_ref()
            .and_then(|(c, sch)| Some(c.clone().with_mutant(sch.selector_of(&m.id)?)));
        let from_schema = member.is_some();
        let built = member.unwrap_or_else(|| {
            let src = rtl.with_file_text(file, m.text.clone());
            Cosim::new(desc, params.clone(), src, &opts.build)
        });
        let outcome = match built {
            Err(e @ (CosimError::Build { .. } | CosimError::Load(_))) => MutantOutcome::NotBuilt {
                error: e.to_string(),
            },
            Err(e) => return Err(e),
            Ok(c) => {
                let c = c.with_failure_dir(None).with_max_cycles(opts.max_cycles);
                match c.run(&mut make_stimulus()) {
                    Ok(s) => MutantOutcome::Survived { cycles: s.cycles },
                    Err(CosimError::Divergence(d)) => MutantOutcome::Killed {
                        cycle: d.cycle,
                        port: d.port().to_string(),
                    },
                    Err(CosimError::Rtl { cycle, message, .. }) => {
                        MutantOutcome::KilledByError { cycle, message }
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        match outcome {
            MutantOutcome::Killed { .. } | MutantOutcome::KilledByError { .. } => {
                report.killed += 1
            }
            MutantOutcome::Survived { .. } => {
                report.survived += 1;
                report.equivalent += equivalent.is_some() as usize;
            }
            MutantOutcome::NotBuilt { .. } => report.not_built += 1,
        }
        report.results.push(MutantResult {
            id: m.id,
            class: m.class,
            description: m.description,
            equivalent: equivalent.filter(|_| matches!(outcome, MutantOutcome::Survived { .. })),
            outcome,
            time: t0.elapsed(),
            from_schema,
        });
    }
    Ok(report)
}

/// Builds of a mutant schema tried before every mutant is built alone.
const SCHEMA_ATTEMPTS: usize = 4;

/// The mutant schema of `chosen` built (one build for all its members, cached; each member
/// runs on a clone with its selector value), or `None` when no mutant can be placed or the
/// schema does not build (`report.schema_error` says why; every mutant is then built alone).
/// When the build fails, the members written on the lines its errors name are left out
/// and the schema is built again (a few times at most: Verilator stops at the first
/// syntax error, before elaboration errors): a mutant Verilator cannot compile (an internal
/// error, an illegal zero replication) is then built alone.
fn schema_model(
    desc: &'static UnitDesc,
    params: &Params,
    rtl: &RtlSource,
    file: usize,
    chosen: &[Mutant],
    opts: &MutantOptions,
    report: &mut MutantReport,
) -> Result<Option<(Cosim, crate::mutant_schema::Schema)>, CosimError> {
    let mut members = chosen.to_vec();
    for attempt in 0..SCHEMA_ATTEMPTS {
        let Some((src, schema)) = crate::mutant_schema::source(desc.name, rtl, file, &members)
        else {
            return Ok(None);
        };
        let error = match Cosim::new(desc, params.clone(), src, &opts.build)
            .and_then(|c| c.with_mutant(0))
        {
            Ok(c) => {
                // A build after a failed one: its error now explains the left-out members.
                report.schema_retry = report.schema_error.take();
                return Ok(Some((c, schema)));
            }
            Err(e @ (CosimError::Build { .. } | CosimError::Load(_))) => e.to_string(),
            Err(e) => return Err(e),
        };
        let lines = error_lines(&error, &rtl.files[file].0);
        let mut culprits: Vec<String> = schema.members_on(&lines).map(str::to_owned).collect();
        if culprits.is_empty() {
            // Verilator's internal errors can name the declaration of a net that a variant
            // reads rather than the variant's own line (`slp_perm` at S=4: an off-by-one
            // part-select `m[0:1]` two dozen lines below `wire m = ...`): then the members
            // that read a net declared on the named lines are the suspects.
            let text = &rtl.files[file].1;
            let names = names_declared_on(text, &lines);
            let suspect = lines_reading(text, &names);
            culprits = schema.members_on(&suspect).map(str::to_owned).collect();
        }
        // The first build's error says most (later ones follow from what it left out).
        report.schema_error.get_or_insert(error);
        if attempt + 1 == SCHEMA_ATTEMPTS || culprits.is_empty() {
            break;
        }
        members.retain(|m| !culprits.contains(&m.id));
    }
    Ok(None)
}

/// The lines of file `name` that Verilator's `%Error` messages in `log` name
/// (`%Error: name:68:202: ...`, `%Error: Internal Error: name:55:38: ...`).
fn error_lines(log: &str, name: &str) -> Vec<usize> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let pattern = format!("{base}:");
    let mut out = vec![];
    for l in log.lines().filter(|l| l.contains("%Error")) {
        for (at, _) in l.match_indices(&pattern) {
            let digits: String = l[at + pattern.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if let Ok(n) = digits.parse() {
                out.push(n);
            }
        }
    }
    out
}

/// The nets and variables declared or continuously assigned on `lines` of `text`
/// (`wire [3:0] m = ...;` and `assign m = ...;` give `m`).
fn names_declared_on<'a>(text: &'a str, lines: &[usize]) -> Vec<&'a str> {
    const DECLARE: [&str; 9] = [
        "wire", "reg", "logic", "integer", "assign", "input", "output", "inout", "genvar",
    ];
    let toks = lex(text);
    let mut names = vec![];
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        i += 1;
        if !lines.contains(&t.line) || !DECLARE.contains(&t.text) {
            continue;
        }
        // Past `signed`, `reg` (of `output reg`) and packed ranges, to the first name.
        let mut depth = 0;
        while let Some(n) = toks.get(i) {
            match n.text {
                "[" => depth += 1,
                "]" => depth -= 1,
                "signed" | "reg" | "wire" | "logic" => {}
                _ if depth == 0 && n.kind == Kind::Ident => {
                    names.push(n.text);
                    i += 1;
                    break;
                }
                _ if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
    }
    names
}

/// The lines of `text` on which any of `names` is written.
fn lines_reading(text: &str, names: &[&str]) -> Vec<usize> {
    let mut lines: Vec<usize> = lex(text)
        .iter()
        .filter(|t| t.kind == Kind::Ident && names.contains(&t.text))
        .map(|t| t.line)
        .collect();
    lines.dedup();
    lines
}

/// Whether `text` declares module `top`.
pub fn declares_module(text: &str, top: &str) -> bool {
    let toks = lex(text);
    toks.windows(2)
        .any(|w| w[0].text == "module" && w[1].text == top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_line_names_its_net_and_the_lines_that_read_it() {
        let text = "module t (input [3:0] a, output reg [1:0] q);\n\
                    wire signed [3:0] m = a + 1;\n\
                    assign q = m[1:0];\n\
                    always @(*) x = a;\n\
                    wire y = m[3];\n";
        assert_eq!(names_declared_on(text, &[2]), ["m"]);
        assert_eq!(names_declared_on(text, &[1]), ["a", "q"]);
        assert_eq!(names_declared_on(text, &[3]), ["q"]);
        assert!(names_declared_on(text, &[4]).is_empty());
        assert_eq!(lines_reading(text, &["m"]), [2, 3, 5]);
    }

    const V: &str = r#"
module m (input clk, input rst_n, input [3:0] a, output reg [3:0] q, output reg [3:0] r,
          output y);
  localparam [3:0] K = 4'd1 + 4'd1;
  wire [3:0] w = a + 4'd1;
  // comment with == and <= inside
  assign y = (a == 4'd3) && (q != 4'd0);
  always @(posedge clk) begin
    if (!rst_n) begin
      q <= 4'd0;
      r <= 4'd1;
      y2 <= 2'd1;
      z <= {4{1'b0}};
      z2 <= 2'd0;
    end else begin
      if (a < q) q <= q + 1'b1;
      r <= (r | a) & ~q;
      q <= q - 4'd1;
    end
  end
endmodule
"#;

    #[test]
    fn finds_each_class_and_never_touches_declarations_or_nonblocking_assignments() {
        let ms = generate(V);
        let count = |c| ms.iter().filter(|m| m.class == c).count();
        // ==, !=, < (the `<=` are all nonblocking assignments; the one in the comment is
        // skipped).
        assert_eq!(count(MutantClass::CompareFlip), 3, "{ms:#?}");
        // q + 1, q - 1 and the wire initializer a + 1, not the localparam.
        assert_eq!(count(MutantClass::OffByOne), 3, "{ms:#?}");
        // && , |, &, & ~
        assert_eq!(count(MutantClass::MaskSwap), 4);
        assert_eq!(count(MutantClass::DropReset), 5, "{ms:#?}");
        assert_eq!(count(MutantClass::InvertIf), 2, "{ms:#?}");
        // w, y, q+1, r, q-1: two each (the constant reset values are not mutated)
        assert_eq!(count(MutantClass::StuckBit), 10, "{ms:#?}");
        assert!(ms
            .iter()
            .any(|m| m.description.contains("bit 0 of `w` stuck at 1")));
        // q <= 0; r <= 1 (adjacent, different values), y2 <= 1; z <= 0 and r <= ..; q <= q
        // - 1; not r <= 4'd1; y2 <= 2'd1 nor z <= {4{1'b0}}; z2 <= 2'd0 (same value:
        // equivalent), not `if (..) q <= ..; r <= ..`.
        assert_eq!(count(MutantClass::SwapTargets), 3, "{ms:#?}");
        for m in &ms {
            assert!(m.text.contains("input [3:0] a"), "{}", m.description);
            assert_ne!(m.text, V);
        }
        let drop = ms
            .iter()
            .find(|m| m.class == MutantClass::DropReset)
            .unwrap();
        assert!(drop.text.contains("/* reset of q dropped */"));
        assert!(!drop.text.contains("q <= 4'd0;"));
        let ids: std::collections::HashSet<_> = ms.iter().map(|m| &m.id).collect();
        assert_eq!(ids.len(), ms.len());
        assert_eq!(generate(V), ms, "deterministic");
    }

    #[test]
    fn ram_instance_ports_are_mutated() {
        let v = "module u (input clk);\n  wf_ram_dp #(.WIDTH(8), .WORDS(4)) u_ram (\n    .clk (clk),\n    .wr_en (spill && x),\n    .wr_addr (p[1:0]),\n    .wr_data (d),\n    .rd_en (fill),\n    .rd_addr (p[1:0] - 1'b1),\n    .rd_data (q)\n  );\nendmodule\n";
        let ms: Vec<Mutant> = generate(v)
            .into_iter()
            .filter(|m| m.class == MutantClass::RamPort)
            .collect();
        assert_eq!(ms.len(), 6, "{ms:#?}");
        // Registered read by default: the read-enable mutants always apply.
        assert!(ms.iter().all(|m| m.only_if.is_none()));
        let asy = generate(&v.replace(".WORDS(4))", ".WORDS(4), .RD_REG(RAM_RD_REG))"));
        let rd_en: Vec<&Mutant> = asy
            .iter()
            .filter(|m| m.description.contains(".rd_en"))
            .collect();
        assert_eq!(rd_en.len(), 2);
        assert!(rd_en
            .iter()
            .all(|m| m.only_if == Some(("RAM_RD_REG".to_string(), 1))));
        assert!(ms[0].text.contains(".wr_en (1'b0)") && ms[0].line == 4);
        assert!(ms[1].text.contains(".wr_en (1'b1)"));
        assert!(ms[2].text.contains(".wr_addr ((p[1:0]) + 1'b1)"));
        assert!(ms[5].text.contains(".rd_addr ((p[1:0] - 1'b1) + 1'b1)"));
        // The parameter list is not a port list.
        assert!(ms.iter().all(|m| m.text.contains(".WIDTH(8)")));
    }

    #[test]
    fn selection_is_balanced_and_deterministic() {
        let ms = generate(V);
        let sel = select(&ms, 7);
        let classes: Vec<MutantClass> = sel.iter().map(|m| m.class).collect();
        assert_eq!(classes, CLASSES.to_vec());
        assert_eq!(select(&ms, 100).len(), ms.len());
    }

    #[test]
    fn spread_order_is_a_permutation() {
        assert_eq!(spread(5), vec![0, 2, 1, 3, 4]);
        for k in 0..40 {
            let mut s = spread(k);
            s.sort();
            assert_eq!(s, (0..k).collect::<Vec<_>>());
        }
    }

    #[test]
    fn literal_values() {
        assert_eq!(literal_value("1"), Some(1));
        assert_eq!(literal_value("4'd1"), Some(1));
        assert_eq!(literal_value("1'b1"), Some(1));
        assert_eq!(literal_value("8'h01"), Some(1));
        assert_eq!(literal_value("'d2"), Some(2));
        assert_eq!(literal_value("4'bxx01"), None);
    }
}
