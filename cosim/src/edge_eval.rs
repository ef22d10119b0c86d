//! The clock edge without re-settling the inputs: a copy of Verilator's root `_eval`
//! without its input-combinational ("ico") loop, for the shim's `wf_edge`.
//!
//! Why: Verilator 5.006's `_eval` starts every call with the ico region, which recomputes
//! all the logic that depends on top-level inputs, whether or not an input changed. The
//! lockstep harness evaluates twice per cycle: once after setting the cycle's inputs
//! (`wf_eval`, clock low: the combinational outputs settle) and once for the rising edge
//! (`wf_edge`), with the same inputs. In the second call the ico region recomputes exactly
//! the values the first one left, which was 15-40% of a model's per-cycle host
//! instructions (the `capri_capt`'s 32-entry match logic, the stacks' next-state muxes).
//! The edge only needs the active/NBA loop: the clock's trigger, the flops, and the logic
//! downstream of them (which Verilator schedules in the NBA region as well).
//!
//! This is only equivalent when no logic in the ico region reads `clk` as data (a gated
//! clock, `assign x = clk & ...`): then the edge would change an ico input. The generated
//! sources are checked for that, and for the exact shape of `_eval` this was written
//! against; anything else gives `None` and the shim evaluates the whole model at the edge,
//! as before.

use crate::shim::{direct_eval_signature, SAMPLE_PORT};

/// The name of the edge-only function the shim defines and calls.
pub const EDGE_EVAL_FN: &str = "wf_root_eval_edge";

/// The C++ definition of [`EDGE_EVAL_FN`] for model class `prefix`, derived from
/// `sources` (the text of the generated per-cycle logic files, `*__DepSet_*.cpp` without
/// `__Slow`; not the trace code, which records the clock), or `None` when `_eval` is not
/// in the expected shape or some logic reads the clock as data.
pub fn derive(prefix: &str, sources: &[String]) -> Option<String> {
    let signature = format!("{} {{", direct_eval_signature(prefix));
    let text = sources.iter().find(|t| t.contains(&signature))?;
    if sources.iter().any(|t| reads_clock_as_data(t)) {
        return None;
    }
    let start = text.find(&signature)? + signature.len();
    let body_len = matching_brace(&text[start..])?;
    let body = &text[start..start + body_len];
    let edge_body = without_ico_loop(body)?;
    if edge_body.contains("__Vico") {
        return None;
    }
    let root = format!("{prefix}___024root");
    let mut prototypes: Vec<String> = called_root_functions(&edge_body, &root)
        .into_iter()
        .map(|f| format!("void {f}({root}* vlSelf);\n"))
        .collect();
    prototypes.sort();
    prototypes.dedup();
    Some(format!(
        "// Verilator's {root}___eval without its input-combinational loop (edge_eval.rs).\n\
         {protos}static void {EDGE_EVAL_FN}({root}* vlSelf) {{{edge_body}}}\n",
        protos = prototypes.concat(),
    ))
}

/// Whether a per-cycle logic source reads an input the shim drives itself (`clk`, the
/// wrapper's state-sampling strobe, or an inlined alias `...__DOT__clk`) anywhere but in an
/// edge trigger (`__VactTriggered... = vlSelf->clk & ~prev`, `__Vtrigrprev__TOP__clk =
/// vlSelf->clk`) and the debug width check. The strobe falls back to 0 with no evaluation
/// before the next edge, so logic reading it as data would be stale too.
fn reads_clock_as_data(text: &str) -> bool {
    text.lines().any(|line| {
        SHIM_DRIVEN.iter().any(|&port| {
            names_port(line, port)
                && !line.contains("__VactTriggered")
                && !line.contains(&format!("__Vtrigrprev__TOP__{port} ="))
                && !line.contains("overWidthError")
                && !line.contains("& 0xfeU")
        })
    })
}

/// The inputs the shim sets itself rather than the harness.
const SHIM_DRIVEN: [&str; 2] = ["clk", SAMPLE_PORT];

/// `line` has an identifier `port` or `..._DOT__port` (not `clk_en`, not a trigger's own
/// `__Vtrigrprev__TOP__clk`).
fn names_port(line: &str, port: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|token| {
            token == port
                || token
                    .strip_suffix(port)
                    .is_some_and(|head| head.ends_with("__DOT__"))
        })
}

/// The length of `text` up to (not including) the `}` that closes a block whose `{` was
/// just before `text`.
fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `body` with the ico loop (`vlSelf->__VicoIterCount = 0U; __VicoContinue = 1U;
/// while (__VicoContinue) {...}`) removed, and the `__VicoContinue` local it declares.
fn without_ico_loop(body: &str) -> Option<String> {
    const START: &str = "vlSelf->__VicoIterCount = 0U;";
    const LOOP: &str = "while (__VicoContinue) {";
    let start = body.find(START)?;
    let loop_at = start + body[start..].find(LOOP)?;
    // Only the `__VicoContinue = 1U;` assignment between the two.
    let between = body[start + START.len()..loop_at].trim();
    if between != "__VicoContinue = 1U;" {
        return None;
    }
    let loop_body = loop_at + LOOP.len();
    let end = loop_body + matching_brace(&body[loop_body..])? + 1;
    let mut out = String::with_capacity(body.len());
    out.push_str(&body[..start]);
    out.push_str(&body[end..]);
    // The declaration of the loop's flag, now unused.
    Some(
        out.lines()
            .filter(|l| l.trim() != "CData/*0:0*/ __VicoContinue;")
            .map(|l| format!("{l}\n"))
            .collect(),
    )
}

/// The `<root>___name` functions `body` calls.
fn called_root_functions(body: &str, root: &str) -> Vec<String> {
    let prefix = format!("{root}___");
    body.match_indices(&prefix)
        .filter_map(|(i, _)| {
            let rest = &body[i..];
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            rest[name_len..]
                .starts_with('(')
                .then(|| rest[..name_len].to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of Verilator 5.006's root `_eval` (abridged from a generated model).
    const EVAL: &str = r#"
void Vwf___024root___eval(Vwf___024root* vlSelf) {
    if (false && vlSelf) {}  // Prevent unused
    // Init
    CData/*0:0*/ __VicoContinue;
    VlTriggerVec<2> __VpreTriggered;
    CData/*0:0*/ __VnbaContinue;
    // Body
    vlSelf->__VicoIterCount = 0U;
    __VicoContinue = 1U;
    while (__VicoContinue) {
        __VicoContinue = 0U;
        Vwf___024root___eval_triggers__ico(vlSelf);
        if (vlSelf->__VicoTriggered.any()) {
            __VicoContinue = 1U;
            Vwf___024root___eval_ico(vlSelf);
        }
    }
    __VnbaContinue = 1U;
    while (__VnbaContinue) {
        __VnbaContinue = 0U;
        Vwf___024root___eval_triggers__act(vlSelf);
        if (vlSelf->__VnbaTriggered.any()) {
            Vwf___024root___eval_nba(vlSelf);
        }
    }
}
void Vwf___024root___eval_triggers__act(Vwf___024root* vlSelf) {
    vlSelf->__VactTriggered.at(1U) = ((IData)(vlSelf->clk)
    vlSelf->__Vtrigrprev__TOP__clk = vlSelf->clk;
}
"#;

    #[test]
    fn the_edge_function_is_eval_without_the_ico_loop() {
        let f = derive("Vwf", &[EVAL.to_string()]).expect("the expected shape");
        assert!(f.contains("static void wf_root_eval_edge(Vwf___024root* vlSelf) {"));
        assert!(!f.contains("__Vico"), "{f}");
        assert!(!f.contains("eval_ico"), "{f}");
        assert!(f.contains("Vwf___024root___eval_nba(vlSelf);"));
        assert!(f.contains("void Vwf___024root___eval_nba(Vwf___024root* vlSelf);\n"));
        assert!(f.contains("void Vwf___024root___eval_triggers__act(Vwf___024root* vlSelf);"));
        // Only the body of `_eval`: not the next function.
        assert_eq!(f.matches("__Vtrigrprev__TOP__clk").count(), 0);
        assert_eq!(
            f.matches('{').count(),
            f.matches('}').count(),
            "balanced braces: {f}"
        );
    }

    #[test]
    fn a_clock_read_as_data_or_another_shape_keeps_the_full_eval() {
        let gated = format!("{EVAL}\n    vlSelf->gclk = (vlSelf->clk & vlSelf->en);\n");
        assert_eq!(derive("Vwf", &[gated]), None);
        // A longer member name that starts with `clk` is not the clock.
        let clk_en = format!("{EVAL}\n    vlSelf->x = vlSelf->clk_en;\n");
        assert!(derive("Vwf", &[clk_en]).is_some());
        let alias = format!("{EVAL}\n    vlSelf->x = vlSelf->top__DOT__dut__DOT__clk;\n");
        assert_eq!(derive("Vwf", &[alias]), None);
        let strobe = format!("{EVAL}\n    vlSelf->x = (1U & vlSelf->wf_sample);\n");
        assert_eq!(derive("Vwf", &[strobe]), None);
        let trigger = format!(
            "{EVAL}\n    vlSelf->__VactTriggered.at(0U) = ((IData)(vlSelf->wf_sample)\n    \
             vlSelf->__Vtrigrprev__TOP__wf_sample = vlSelf->wf_sample;\n"
        );
        assert!(derive("Vwf", &[trigger]).is_some());
        let reshaped = EVAL.replace("__VicoContinue = 1U;\n    while", "while");
        assert_eq!(derive("Vwf", &[reshaped]), None);
        assert_eq!(derive("Vother", &[EVAL.to_string()]), None);
    }
}
