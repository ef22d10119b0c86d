//! A mutant schema: many mutants of one Verilog text in one design, each switched on at run
//! time by a selector input, so that one Verilator build serves them all.
//!
//! A mutant build costs seconds (Verilator, then g++ on the generated C++) while its
//! lockstep run often costs less; with tens of mutants per parameter set, the builds were
//! most of the test suite's time on a machine with an empty model cache. The schema
//! ("mutant schemata", Untch, Offutt and Harrold 1993) rewrites each mutated place of the
//! text so that it reads the selector `wf_mutant`:
//!
//! - a procedural statement (an assignment, or the two a target swap touches) becomes
//!   `begin if (wf_mutant == 16'dK) begin <mutant K's statements> end else ... begin
//!   <original> end end`: each branch is a whole statement with its own width and sign
//!   context;
//! - a procedural `if` condition becomes `((wf_mutant == 16'dK) ? (|(mutant K's)) : ... :
//!   (|(original)))`: each branch reduced to one bit, its operand self-determined as a
//!   condition is;
//! - a continuous assignment's right-hand side, or a storage primitive's port connection,
//!   becomes `((wf_mutant == 16'dK) ? ($bits(T))'(mutant K's) : ... : ($bits(T))'(original))`,
//!   `T` what it drives (the net, or `instance.port`): a size cast returns what a target of
//!   that width would hold after the assignment (the operand evaluated in the wider of the
//!   two widths, as the assignment evaluates it), so each branch keeps its own width and
//!   sign context and any edit is exact, an off-by-one's unsized `2` or a signed operand
//!   included. (Without the casts the conditional would evaluate both branches in its
//!   widest one's width and in unsigned unless both are signed, so `(a + 1'b1) >> 1` next
//!   to a 32-bit `a + 2` would keep its carry.)
//!
//! With `wf_mutant = K` the design computes exactly what mutant K's own text computes (the
//! rest of the text is the original's); with 0 it is the original. A mutant is placed at
//! the smallest such site that contains its whole edit (the byte range where its text
//! differs from the original); the sites used must nest or be disjoint. A mutant with no
//! such site (an edit in a declaration, a generate condition, the left-hand side of a
//! continuous assignment...) is not in the
//! schema and is built on its own, as before. `wf_mutant` becomes the first port of the
//! mutated module and, when the design's top is a wrapper with exactly one instance of it,
//! of the wrapper too, connected through (otherwise no schema). A mutant that Verilator
//! cannot build alone may build inside the schema: its outcome is then an observation
//! the separate build could not make.
//!
//! The harness sets the selector through the shim (`wf_set_mutant`), never through the
//! unit's port table: it is not a port of the unit.

use crate::build::RtlSource;
use crate::mutants::{declares_module, lex, ram_ports, scan, skip_group, Kind, Mutant, Tok};

/// The selector input's name (a port of the schema's modules, driven by the shim).
pub const SELECTOR: &str = "wf_mutant";
/// The selector's width: mutant numbers 1..=65535 (0: the original design).
pub const SELECTOR_BITS: u32 = 16;

/// A schema of some of a text's mutants.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The rewritten text of the mutated file (with the selector port).
    pub text: String,
    /// `(mutant id, selector value)` of each mutant in the schema.
    pub members: Vec<(String, u32)>,
    /// The line (1-based) where each member's variant is written, in `members`' order.
    pub lines: Vec<usize>,
}

impl Schema {
    /// The members written on any of `lines` (a build error names the line of the variant
    /// that caused it).
    pub fn members_on<'a>(&'a self, lines: &'a [usize]) -> impl Iterator<Item = &'a str> + 'a {
        self.members
            .iter()
            .zip(&self.lines)
            .filter(|(_, l)| lines.contains(l))
            .map(|((id, _), _)| id.as_str())
    }

    /// The selector value of mutant `id`, if it is in the schema.
    pub fn selector_of(&self, id: &str) -> Option<u32> {
        self.members.iter().find(|(m, _)| m == id).map(|&(_, k)| k)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum SiteKind {
    /// A continuous assignment's right-hand side or a port connection; the text (one line)
    /// of what it drives, the net or `instance.port`. Each branch is cast to its width
    /// (`($bits(target))'(e)`), so any edit is exact.
    Assign(String),
    /// A procedural `if` condition: each branch reduced to one bit (`|(e)`, its operand
    /// self-determined, as a condition is), so any edit is exact.
    Cond,
    /// A procedural statement (one assignment, or two adjacent ones): each branch a whole
    /// statement with its own context, so any edit is exact.
    Stmt,
}

/// A place of the original text that can be switched: a byte range and how.
#[derive(Debug, Clone)]
struct Site {
    start: usize,
    end: usize,
    kind: SiteKind,
    /// `(selector value, the mutant's text of this range)`.
    variants: Vec<(u32, String)>,
}

/// Token ranges `[first, last]` of procedural code: `always`/`initial` blocks with a
/// `begin ... end` body, functions and tasks. (An `if` outside them is a generate `if`,
/// decided at elaboration: it cannot read a run-time selector.)
fn procedural_regions(toks: &[Tok]) -> Vec<(usize, usize)> {
    let mut out = vec![];
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.kind != Kind::Ident {
            i += 1;
            continue;
        }
        let close = |kw: &str| (i + 1..toks.len()).find(|&j| toks[j].text == kw);
        match t.text {
            "function" => {
                if let Some(e) = close("endfunction") {
                    out.push((i, e));
                    i = e;
                }
            }
            "task" => {
                if let Some(e) = close("endtask") {
                    out.push((i, e));
                    i = e;
                }
            }
            "always" | "initial" | "always_ff" | "always_comb" => {
                let mut j = i + 1;
                if toks.get(j).is_some_and(|t| t.text == "@") {
                    j += 1;
                    match toks.get(j) {
                        Some(t) if t.text == "(" => j = skip_group(toks, j) + 1,
                        Some(_) => j += 1,
                        None => {}
                    }
                }
                if toks.get(j).is_some_and(|t| t.text == "begin") {
                    let mut depth = 0i32;
                    let mut k = j;
                    while k < toks.len() {
                        match toks[k].text {
                            "begin" => depth += 1,
                            "end" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        k += 1;
                    }
                    out.push((i, k.min(toks.len() - 1)));
                    i = k;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The target of a continuous assignment whose statement tokens run from `first` to `op`
/// (the `=`): the tokens after the last `assign` (a generate block's label may come before
/// it; a net declaration's initialiser has only the declared name), on one line. `None`
/// when the target is not a plain net, part-select or concatenation.
fn continuous_target(src: &str, toks: &[Tok], first: usize, op: usize) -> Option<String> {
    let from = (first..op)
        .rev()
        .find(|&i| toks[i].text == "assign")
        .map_or(first, |i| i + 1);
    let target = toks.get(from..op).filter(|t| !t.is_empty())?;
    let plain = target[0].kind == Kind::Ident || target[0].text == "{";
    plain.then(|| one_line(&src[target[0].start..target[target.len() - 1].end]))?
}

/// Whether `rhs` (a continuous assignment's right-hand side tokens) is one value: not
/// `x, b = y` of `assign a = x, b = y;` or `wire a = x, b = y;`, where the assignment's
/// scan ends at the `;` (such a statement is built alone).
fn single_value(rhs: &[Tok]) -> bool {
    let mut depth = 0i32;
    for t in rhs {
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "," if depth == 0 => return false,
            _ => {}
        }
    }
    true
}

/// Every switchable range of `src`: (start byte, end byte, kind).
fn candidate_sites(src: &str, toks: &[Tok]) -> Vec<(usize, usize, SiteKind)> {
    let regions = procedural_regions(toks);
    let procedural = |k: usize| regions.iter().any(|&(a, b)| a <= k && k <= b);
    let sites = scan(toks);
    // A size cast is exact for integral values on a net with one driver: a real would be
    // rounded (its fraction lost in the original's branch too), and Verilator resolves the
    // drivers of a tristate or wired net differently once one of them is a conditional.
    // Such a file switches no continuous assignment (its mutants there are built alone).
    let no_casts = toks.iter().any(|t| {
        matches!(
            t.text,
            "real"
                | "shortreal"
                | "realtime"
                | "$itor"
                | "$bitstoreal"
                | "$realtobits"
                | "$rtoi"
                | "tri"
                | "tri0"
                | "tri1"
                | "triand"
                | "trior"
                | "trireg"
                | "wand"
                | "wor"
        ) || (t.kind == Kind::Number && t.text.contains(['z', 'Z']))
    });
    let mut out = vec![];
    for a in &sites.assigns {
        if procedural(a.lhs_first) {
            out.push((toks[a.lhs_first].start, toks[a.semi].end, SiteKind::Stmt));
        } else if a.op + 1 < a.semi && !no_casts && single_value(&toks[a.op + 1..a.semi]) {
            if let Some(target) = continuous_target(src, toks, a.lhs_first, a.op) {
                let rhs = (toks[a.op + 1].start, toks[a.semi - 1].end);
                out.push((rhs.0, rhs.1, SiteKind::Assign(target)));
            }
        }
    }
    for w in sites.assigns.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if b.lhs_first == a.semi + 1 && !a.guarded && !b.guarded && procedural(a.lhs_first) {
            out.push((toks[a.lhs_first].start, toks[b.semi].end, SiteKind::Stmt));
        }
    }
    for &(open, close) in &sites.ifs {
        if procedural(open) && close > open + 1 {
            out.push((toks[open + 1].start, toks[close - 1].end, SiteKind::Cond));
        }
    }
    for c in ram_ports(toks, src) {
        let target = format!("{}.{}", c.instance, c.port);
        out.push((c.span.0, c.span.1, SiteKind::Assign(target)));
    }
    out.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
    out.dedup_by_key(|(s, e, _)| (*s, *e));
    out
}

/// The byte range of `original` that `mutated` replaces: `(start, end in original, end in
/// mutated)` (the longest common prefix and suffix excluded).
fn edit_range(original: &str, mutated: &str) -> (usize, usize, usize) {
    let (o, m) = (original.as_bytes(), mutated.as_bytes());
    let prefix = o.iter().zip(m).take_while(|(a, b)| a == b).count();
    let max_suffix = o.len().min(m.len()) - prefix;
    let suffix = o
        .iter()
        .rev()
        .zip(m.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    (prefix, o.len() - suffix, m.len() - suffix)
}

/// The schema of `mutants` (all mutants of `original`). Mutants that cannot be placed are
/// left out ([`Schema::members`] lists those in). `None` when no mutant can be placed or
/// the text does not declare `module` with an ANSI port list.
pub fn build(original: &str, module: &str, mutants: &[Mutant]) -> Option<Schema> {
    let toks = lex(original);
    let candidates = candidate_sites(original, &toks);
    let mut sites: Vec<Site> = vec![];
    let mut members = vec![];
    let mut lines = vec![];
    for m in mutants {
        let Ok(k) = u32::try_from(members.len() + 1) else {
            break;
        };
        if k >= 1 << SELECTOR_BITS {
            break;
        }
        let (a, b, _) = edit_range(original, &m.text);
        // The smallest candidate containing the edit.
        let Some((s, e, kind)) = candidates
            .iter()
            .filter(|&&(s, e, _)| s <= a && b <= e)
            .min_by_key(|&&(s, e, _)| e - s)
            .cloned()
        else {
            continue;
        };
        // The sites in use must nest or be disjoint (the rendering is a tree walk).
        let laminar = sites.iter().all(|x| {
            (x.start == s && x.end == e)
                || x.end <= s
                || e <= x.start
                || (x.start <= s && e <= x.end)
                || (s <= x.start && x.end <= e)
        });
        if !laminar {
            continue;
        }
        let grown = m.text.len() as isize - original.len() as isize;
        let Some(text) = m
            .text
            .get(s..(e as isize + grown) as usize)
            .and_then(one_line)
        else {
            continue;
        };
        match sites.iter_mut().find(|x| x.start == s && x.end == e) {
            Some(x) => x.variants.push((k, text.to_string())),
            None => sites.push(Site {
                start: s,
                end: e,
                kind,
                variants: vec![(k, text.to_string())],
            }),
        }
        members.push((m.id.clone(), k));
        lines.push(1 + original[..s].matches('\n').count());
    }
    if members.is_empty() {
        return None;
    }
    sites.sort_by_key(|x| (x.start, std::cmp::Reverse(x.end)));
    let body = render(original, 0, original.len(), &sites);
    let text = add_selector_port(&body, module)?;
    Some(Schema {
        text,
        members,
        lines,
    })
}

/// `text` on one line, its tokens as written (comments and attributes dropped by the
/// lexer). A switch adds its variants on the line where the site starts, so every line of
/// the original keeps its number (a `$stop` or a Verilator message names the line the user
/// sees in the original). `None` for text with a string literal (the lexer drops strings).
fn one_line(text: &str) -> Option<String> {
    if text.contains('"') {
        return None;
    }
    // Each token as written; a gap between two tokens (white space, a comment, an
    // attribute) becomes one space, and adjacent tokens stay adjacent (`1.5`, `pk::K`,
    // `==?`, an escaped name's `\esc` and the space that ends it).
    let mut out = String::new();
    let mut last = None;
    for t in lex(text) {
        if last.is_some_and(|end| end < t.start) {
            out.push(' ');
        }
        out.push_str(&text[t.start..t.end]);
        last = Some(t.end);
    }
    if out.contains('\\') {
        // An escaped name ends at white space: never at the `)` written after it.
        out.push(' ');
    }
    Some(out)
}

/// The design `rtl` with file `file` (which declares `module`) replaced by the schema of
/// `mutants` (mutants of that file), the selector connected through the design's top when
/// the top is another module; with the schema. `None` when no mutant can be placed or the
/// selector cannot be connected (then every mutant is built alone).
pub fn source(
    module: &str,
    rtl: &RtlSource,
    file: usize,
    mutants: &[Mutant],
) -> Option<(RtlSource, Schema)> {
    let text = &rtl.files.get(file)?.1;
    if !declares_module(text, module) {
        return None;
    }
    let schema = build(text, module, mutants)?;
    let mut src = rtl.with_file_text(file, schema.text.clone());
    if rtl.top != module {
        let top = src
            .files
            .iter()
            .position(|(_, t)| declares_module(t, &rtl.top))?;
        src.files[top].1 = connect_through(&src.files[top].1, &rtl.top, module)?;
    }
    Some((src, schema))
}

/// `src[lo..hi]` with every site in `sites` (sorted by start, then longest first; all
/// within the range, nested or disjoint) replaced by its switch.
fn render(src: &str, lo: usize, hi: usize, sites: &[Site]) -> String {
    let mut out = String::new();
    let mut pos = lo;
    let mut i = 0;
    while i < sites.len() {
        let site = &sites[i];
        let inner_end = (i + 1..sites.len())
            .find(|&j| sites[j].start >= site.end)
            .unwrap_or(sites.len());
        out.push_str(&src[pos..site.start]);
        let original = render(src, site.start, site.end, &sites[i + 1..inner_end]);
        out.push_str(&switch(site, &original));
        pos = site.end;
        i = inner_end;
    }
    out.push_str(&src[pos..hi]);
    out
}

fn switch(site: &Site, original: &str) -> String {
    let sel = |k: u32| format!("{SELECTOR} == {SELECTOR_BITS}'d{k}");
    match &site.kind {
        SiteKind::Assign(target) => {
            let cast = |e: &str| format!("($bits({target}))'({e})");
            let mut s = String::from("(");
            for (k, text) in &site.variants {
                s.push_str(&format!("({}) ? {} : ", sel(*k), cast(text)));
            }
            s.push_str(&format!("{})", cast(original)));
            s
        }
        SiteKind::Cond => {
            let mut s = String::from("(");
            for (k, text) in &site.variants {
                s.push_str(&format!("({}) ? (|({text})) : ", sel(*k)));
            }
            s.push_str(&format!("(|({original})))"));
            s
        }
        SiteKind::Stmt => {
            let mut s = String::from("begin ");
            for (k, text) in &site.variants {
                s.push_str(&format!("if ({}) begin {text} end else ", sel(*k)));
            }
            s.push_str(&format!("begin {original} end end"));
            s
        }
    }
}

/// The byte offset just after the `(` that opens `module`'s port list (after its
/// parameter list), and whether the list is empty.
fn port_list_open(toks: &[Tok], module: &str) -> Option<(usize, bool)> {
    let at = toks
        .windows(2)
        .position(|w| w[0].text == "module" && w[1].text == module)?;
    let mut j = at + 2;
    if toks.get(j)?.text == "#" {
        j = skip_group(toks, j + 1) + 1;
    }
    let open = toks.get(j).filter(|t| t.text == "(")?;
    let empty = toks.get(j + 1)?.text == ")";
    Some((open.end, empty))
}

/// `text` with the selector as the first input of `module`.
fn add_selector_port(text: &str, module: &str) -> Option<String> {
    let (at, empty) = port_list_open(&lex(text), module)?;
    let decl = format!(
        " input wire [{}:0] {SELECTOR}{} /* mutant schema: the mutant switched on (0: none) */",
        SELECTOR_BITS - 1,
        if empty { "" } else { "," }
    );
    let mut out = text.to_string();
    out.insert_str(at, &decl);
    Some(out)
}

/// `text` (which declares `top` and instantiates `module` in it) with the selector as an
/// input of `top`, connected to every instance of `module`.
pub fn connect_through(text: &str, top: &str, module: &str) -> Option<String> {
    let mut out = add_selector_port(text, top)?;
    let toks = lex(&out);
    // `top`'s body: from its `module` to the next `endmodule`.
    let first = toks
        .windows(2)
        .position(|w| w[0].text == "module" && w[1].text == top)?;
    let last = (first..toks.len()).find(|&i| toks[i].text == "endmodule")?;
    // The instance `module [#(...)] name (`: insert after its `(`.
    let mut at = vec![];
    for (i, t) in toks.iter().enumerate().take(last).skip(first + 2) {
        if t.kind != Kind::Ident || t.text != module {
            continue;
        }
        let mut j = i + 1;
        if toks.get(j).is_some_and(|t| t.text == "#") {
            j = skip_group(&toks, j + 1) + 1;
        }
        if toks.get(j).is_some_and(|t| t.kind == Kind::Ident)
            && toks.get(j + 1).is_some_and(|t| t.text == "(")
        {
            let empty = toks.get(j + 2).is_some_and(|t| t.text == ")");
            at.push((toks[j + 1].end, empty));
        }
    }
    // Exactly one recognised instance (an instance array or a second instance would be
    // left unconnected, its selector reading 0: every mutant the original).
    if at.len() != 1 {
        return None;
    }
    for (pos, empty) in at.into_iter().rev() {
        let conn = format!(" .{SELECTOR}({SELECTOR}){}", if empty { "" } else { "," });
        out.insert_str(pos, &conn);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutants::{generate, MutantClass};

    const V: &str = r#"
module m #(parameter integer W = 4) (input wire clk, input wire rst_n, input wire [3:0] a,
          output reg [3:0] q, output reg [3:0] r, output wire y);
  wire [3:0] w = a + 4'd1;
  assign y = (a == 4'd3) && (q != 4'd0);
  generate
    if (W > 1) begin : g_w
      wire unused = w[0];
    end
  endgenerate
  always @(posedge clk) begin
    if (!rst_n) begin
      q <= 4'd0;
      r <= 4'd1;
    end else begin
      if (a < q) q <= q + 1'b1;
      r <= (r | a) & ~q;
    end
  end
endmodule
"#;

    #[test]
    fn every_mutant_that_can_be_switched_exactly_is_placed() {
        let mutants = generate(V);
        let schema = build(V, "m", &mutants).expect("a schema");
        // Left out: the generate condition's mutants (flipped, inverted). The off-by-one of
        // the continuous `wire w = a + 4'd1` is in (its branches cast to `w`'s width).
        let left_out: Vec<&str> = mutants
            .iter()
            .filter(|m| schema.selector_of(&m.id).is_none())
            .map(|m| m.description.as_str())
            .collect();
        let expected: Vec<&str> = mutants
            .iter()
            .filter(|m| !m.text.contains("if (W > 1)"))
            .map(|m| m.description.as_str())
            .collect();
        assert_eq!(left_out, expected);
        assert_eq!(expected.len(), 2, "{expected:?}");
        assert!(mutants
            .iter()
            .any(|m| m.description.contains("`+ 4'd1` → `+ 2`")
                && schema.selector_of(&m.id).is_some()));
        let values: Vec<u32> = schema.members.iter().map(|&(_, k)| k).collect();
        assert_eq!(values, (1..=values.len() as u32).collect::<Vec<_>>());
        assert!(schema.text.contains(
            "module m #(parameter integer W = 4) ( input wire [15:0] wf_mutant, /* mutant schema"
        ));
        // Each member's switch is in the text, the original's too.
        for (_, k) in &schema.members {
            assert!(
                schema.text.contains(&format!("wf_mutant == 16'd{k})")),
                "{k}"
            );
        }
        assert!(schema.text.contains("if (W > 1) begin : g_w"));
        // Every line keeps its number.
        assert_eq!(schema.text.lines().count(), V.lines().count());
        let line = |t: &str, s: &str| t.lines().position(|l| l.contains(s));
        assert_eq!(line(&schema.text, "endgenerate"), line(V, "endgenerate"));
    }

    #[test]
    fn statements_and_expressions_nest() {
        let mutants = generate(V);
        let schema = build(V, "m", &mutants).unwrap();
        // The reset branch's two assignments: dropped each (statement switches), swapped
        // (a pair switch around both), their values stuck (none: constants).
        let reset = &schema.text[schema.text.find("always @(posedge clk)").unwrap()..];
        let reset = &reset[..reset
            .find("end else begin\n      if")
            .unwrap_or(reset.len())];
        // A dropped reset is an empty block (the comment goes with the line break).
        assert!(
            reset.contains("begin begin end end else begin q <= 4'd0; end"),
            "{reset}"
        );
        assert!(
            reset.matches("begin if (wf_mutant == ").count() >= 2,
            "{reset}"
        );
        // A continuous assignment's switch casts every branch to its target's width and
        // keeps the original last.
        assert!(
            schema.text.contains(": ($bits(w))'(a + 4'd1))"),
            "{}",
            schema.text
        );
    }

    /// The mutants of `v` and their schema, which must hold every one of them.
    fn all_placed(v: &str, module: &str) -> (Vec<Mutant>, Schema) {
        let mutants = generate(v);
        let schema = build(v, module, &mutants).unwrap();
        for m in &mutants {
            assert!(schema.selector_of(&m.id).is_some(), "{}", m.description);
        }
        (mutants, schema)
    }

    #[test]
    fn continuous_assignments_switch_cast_to_their_target() {
        let v = "module s (input wire signed [3:0] a, input wire [3:0] b, output wire [3:0] y,\n                 output wire [3:0] z, output wire [7:0] c);\n  assign y = $signed(a) >>> 1;\n  assign z = b + 1'b1;\n  genvar i;\n  generate for (i = 0; i < 2; i = i + 1) begin : g\n    assign c[i*4 +: 4] = b | 4'd1;\n  end endgenerate\nendmodule\n";
        // Every mutant is in, the signed site's and the off-by-one's too: cast to the
        // target's width, each branch is evaluated as its own assignment would be.
        let (mutants, schema) = all_placed(v, "s");
        assert!(mutants.iter().any(|m| m.line == 3));
        assert!(mutants.iter().any(|m| m.class == MutantClass::OffByOne));
        assert!(schema.text.contains("($bits(y))'($signed(a) >>> 1))"));
        // In a generate block the target is what follows `assign`, not the block's label.
        assert!(
            schema.text.contains("($bits(c[i*4 +: 4]))'(b | 4'd1))"),
            "{}",
            schema.text
        );
    }

    #[test]
    fn a_storage_port_connection_switch_casts_to_the_port() {
        let v = "module s (input wire clk, input wire [2:0] a, output wire [7:0] q);\n  wf_ram_dp #(.ADDR_W(3), .DATA_W(8)) u_ram (\n    .clk(clk), .wr_en(1'b1), .wr_addr(a), .wr_data(8'd5),\n    .rd_en(1'b1), .rd_addr(a - 1'b1), .rd_data(q));\nendmodule\n";
        // The address edits and the off-by-one of `a - 1'b1` (an unsized `2`) are all in.
        let (mutants, schema) = all_placed(v, "s");
        assert!(mutants.iter().any(|m| m.class == MutantClass::OffByOne));
        assert!(mutants.iter().any(|m| m.class == MutantClass::RamPort));
        assert!(
            schema.text.contains(": ($bits(u_ram.rd_addr))'(a - 1'b1))"),
            "{}",
            schema.text
        );
    }

    #[test]
    fn a_named_block_s_statements_start_after_its_name() {
        let v = "module n (input wire clk, input wire rst_n, input wire [3:0] a, output reg [3:0] q);\n  always @(posedge clk) begin : seq\n    if (!rst_n) begin : rst\n      q <= 4'd0;\n    end else begin : run\n      q <= a + 1'b1;\n    end\n  end\nendmodule\n";
        let (_, schema) = all_placed(v, "n");
        // The labels stay where they were, outside the switches.
        assert!(schema
            .text
            .contains("begin : rst\n      begin if (wf_mutant"));
        assert!(schema
            .text
            .contains("begin : run\n      begin if (wf_mutant"));
    }

    #[test]
    fn continuous_assignments_a_cast_would_change_are_left_alone() {
        let placed = |v: &str, line: usize| {
            let mutants = generate(v);
            let schema = build(v, "c", &mutants);
            let on_line: Vec<_> = mutants.iter().filter(|m| m.line == line).collect();
            assert!(!on_line.is_empty(), "{v}");
            on_line.iter().all(|m| {
                schema
                    .as_ref()
                    .is_some_and(|s| s.selector_of(&m.id).is_some())
            })
        };
        let head = "module c (input wire [3:0] a, input wire s, output wire [3:0] y, output wire [3:0] w);\n";
        // The plain case is placed.
        assert!(placed(
            &format!("{head}  assign y = a + 1'b1;\n  assign w = a;\nendmodule\n"),
            2
        ));
        // A real in the file: a cast would round it.
        assert!(!placed(
            &format!("{head}  real r;\n  assign y = a + 1'b1;\n  assign w = a;\nendmodule\n"),
            3
        ));
        // A tristate driver.
        assert!(!placed(
            &format!("{head}  assign y = s ? a + 1'b1 : 4'bzzzz;\n  assign w = a;\nendmodule\n"),
            2
        ));
        // Two declarators in one statement: the first one's scan runs to the `;`.
        assert!(!placed(
            &format!("{head}  wire [3:0] d = a + 1'b1, e = a;\n  assign y = d ^ e;\n  assign w = a;\nendmodule\n"),
            2
        ));
        // After a function, the target is the assignment's, not `endfunction`.
        let f = format!("{head}  function [3:0] inc;\n    input [3:0] v;\n    inc = v + 1'b1;\n  endfunction\n  assign y = a + 1'b1;\n  assign w = inc(a);\nendmodule\n");
        assert!(placed(&f, 6));
        let mutants = generate(&f);
        let schema = build(&f, "c", &mutants).unwrap();
        assert!(
            schema.text.contains(": ($bits(y))'(a + 1'b1));"),
            "{}",
            schema.text
        );
        assert!(mutants
            .iter()
            .all(|m| !m.description.contains("endfunction")));
    }

    #[test]
    fn a_variant_keeps_its_tokens_as_written() {
        assert_eq!(
            one_line("x == 1.5 /* c */ ? pk::K\n  : y[3:0]").unwrap(),
            "x == 1.5 ? pk::K : y[3:0]"
        );
        assert_eq!(one_line("a + \\esc ").unwrap(), "a + \\esc ");
        assert_eq!(one_line("\"s\""), None);
    }

    #[test]
    fn the_edit_range_is_the_differing_bytes() {
        assert_eq!(edit_range("a == b;", "a != b;"), (2, 3, 3));
        assert_eq!(edit_range("x <= y;", "/* no */"), (0, 7, 8));
        assert_eq!(edit_range("q + 1", "q + 2"), (4, 5, 5));
        assert_eq!(edit_range("aa", "aaa"), (2, 2, 3));
    }

    #[test]
    fn the_selector_is_connected_through_a_wrapper() {
        let top = "module t #(parameter integer N = 1) (input wire clk, output wire y);\n    m #(.W(N)) u_unit (\n        .clk(clk), .y(y)\n    );\nendmodule\n";
        let out = connect_through(top, "t", "m").unwrap();
        assert!(out.contains("( input wire [15:0] wf_mutant, /* mutant schema"));
        assert!(out.contains("u_unit ( .wf_mutant(wf_mutant),\n        .clk(clk)"));
        assert!(connect_through(top, "t", "other").is_none());
    }
}
