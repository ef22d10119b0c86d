//! The lint gate: every generated unit must pass four tools with zero findings.
//!
//! 1. `verilator --lint-only -Wall` — any warning is a finding;
//! 2. `svlint` with the repository's `.svlint.toml` (embedded at build time, so an installed
//!    binary gates with the same rules);
//! 3. Yosys: `read_verilog`, `hierarchy -check`, `proc` (an inferred latch is a finding),
//!    `check -assert`, no latch cell, then `flatten`, `opt_clean`, `check -assert` (loops
//!    and multiple drivers across the unit and its library modules). The gate does not
//!    run `synth`: synthesis is `warpforge synth`'s job, and the baseline and RAM-inference
//!    tests synthesize every standard set below their size bounds. (A full `synth` here
//!    took 123 s of the 48-warp scoreboard's 130 s gate, the test suite's longest test,
//!    and checked nothing the structural passes do not: latches only come from `proc`.)
//! 4. `iverilog -g2005 -Wall` compile.
//!
//! The synthesizable design (the unit's module and its library modules, top = the unit)
//! goes through all four. The co-simulation wrapper (`<unit>_cosim.v`, hierarchical
//! references into the unit, never synthesized) goes through the simulators and svlint:
//! Verilator and Icarus elaborate the co-simulated design (top = the wrapper), svlint reads
//! the wrapper. Yosys reads each file with `SYNTHESIS` defined, so the simulation-only
//! checks of illegal use (`ifndef SYNTHESIS`) are outside what it sees, and inside what
//! Verilator, Icarus and svlint see.
//!
//! Each finding names the tool, the file and line, and the message. A missing tool is an
//! error naming the package that installs it.

use crate::tools::{self, ToolError, ToolSpec};
use crate::GeneratedUnit;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::tools::ToolError as LintError;

/// The svlint rules (the checked-in `.svlint.toml` at the repository root).
pub const SVLINT_CONFIG: &str = include_str!("../../.svlint.toml");

/// One of the gate's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    Verilator,
    Svlint,
    Yosys,
    Iverilog,
}

impl Tool {
    /// The gate's steps, in the order they run.
    pub const ALL: [Tool; 4] = [Tool::Verilator, Tool::Svlint, Tool::Yosys, Tool::Iverilog];

    pub fn spec(self) -> ToolSpec {
        match self {
            Tool::Verilator => tools::VERILATOR,
            Tool::Svlint => tools::SVLINT,
            Tool::Yosys => tools::YOSYS,
            Tool::Iverilog => tools::IVERILOG,
        }
    }

    pub fn name(self) -> &'static str {
        self.spec().exe
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem a tool reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub tool: Tool,
    /// The file as the tool named it (relative to the lint folder), or `-` if unknown.
    pub file: String,
    /// 1-based line, when the tool or the name lookup gives one.
    pub line: Option<u32>,
    /// The tool's rule or warning code (`WIDTH`, `case_default`, `latch`, ...), if any.
    pub rule: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: ", self.file)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(f, "{}", self.tool)?;
        if !self.rule.is_empty() {
            write!(f, " [{}]", self.rule)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The result of the gate on one unit instance.
#[derive(Debug, Clone, Serialize)]
pub struct LintReport {
    pub module: String,
    pub params: String,
    /// Where the files were linted (kept for inspection).
    pub dir: PathBuf,
    pub findings: Vec<Finding>,
}

impl LintReport {
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
}

impl fmt::Display for LintReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(
                f,
                "{} ({}): lint clean (verilator, svlint, yosys, iverilog; co-simulation wrapper: verilator, svlint, iverilog)",
                self.module, self.params
            );
        }
        writeln!(
            f,
            "{} ({}): {} lint finding(s) in {}:",
            self.module,
            self.params,
            self.findings.len(),
            self.dir.display()
        )?;
        for x in &self.findings {
            writeln!(f, "  {x}")?;
        }
        Ok(())
    }
}

/// Run the whole gate on `unit`, writing its files into a fresh scratch folder.
pub fn lint(unit: &GeneratedUnit) -> Result<LintReport, LintError> {
    let dir = tools::scratch_dir(&format!("lint-{}", unit.module()))?;
    lint_in(unit, &dir)
}

/// Run the whole gate on `unit`, writing its files into `dir`.
pub fn lint_in(unit: &GeneratedUnit, dir: &Path) -> Result<LintReport, LintError> {
    unit.write(dir).map_err(|e| match e {
        crate::GenError::Io { path, source } => ToolError::Io { path, source },
        other => ToolError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::other(other.to_string()),
        },
    })?;
    let files: Vec<String> = unit.manifest.files.clone();
    let mut findings = vec![];
    for tool in Tool::ALL {
        findings.extend(run_tool(tool, &unit.manifest.top, &files, dir)?);
    }
    // The co-simulation wrapper, when there is one.
    if unit.manifest.cosim_top != unit.manifest.top {
        let cosim = &unit.manifest.cosim_files;
        let only: Vec<String> = cosim
            .iter()
            .filter(|f| !files.contains(f))
            .cloned()
            .collect();
        let top = &unit.manifest.cosim_top;
        for tool in [Tool::Verilator, Tool::Iverilog] {
            findings.extend(run_tool(tool, top, cosim, dir)?);
        }
        findings.extend(run_tool(Tool::Svlint, top, &only, dir)?);
    }
    Ok(LintReport {
        module: unit.module().to_string(),
        params: unit.params.to_string(),
        dir: dir.to_path_buf(),
        findings,
    })
}

/// Run one step of the gate on Verilog `files` (relative to `dir`) with top module `top`.
pub fn run_tool(
    tool: Tool,
    top: &str,
    files: &[String],
    dir: &Path,
) -> Result<Vec<Finding>, LintError> {
    let exe = tools::locate(tool.spec())?;
    let mut found = match tool {
        Tool::Verilator => verilator(&exe, top, files, dir)?,
        Tool::Svlint => svlint(&exe, files, dir)?,
        Tool::Yosys => yosys(&exe, top, files, dir)?,
        Tool::Iverilog => iverilog(&exe, top, files, dir)?,
    };
    // Findings without a line but naming a signal: point at its declaration.
    for f in &mut found {
        if f.line.is_none() {
            if let Some((file, line)) = declaration_of(&f.message, files, dir) {
                f.file = file;
                f.line = Some(line);
            }
        }
    }
    Ok(found)
}

fn args(list: &[&str], files: &[String]) -> Vec<String> {
    list.iter()
        .map(|s| s.to_string())
        .chain(files.iter().cloned())
        .collect()
}

/// A finding from the raw output when a tool failed without any message we recognise.
fn unparsed(tool: Tool, ran: &tools::Ran) -> Finding {
    Finding {
        tool,
        file: "-".into(),
        line: None,
        rule: "failed".into(),
        message: format!("exit {:?}: {}", ran.code, ran.text.trim()),
    }
}

/// `file:line[:col]: rest` → (file, line, rest).
fn split_location(s: &str) -> Option<(String, u32, String)> {
    let mut parts = s.splitn(3, ':');
    let file = parts.next()?.trim();
    let line: u32 = parts.next()?.trim().parse().ok()?;
    let mut rest = parts.next().unwrap_or("").to_string();
    // optional column
    if let Some((col, more)) = rest.split_once(':') {
        if col.trim().parse::<u32>().is_ok() {
            rest = more.to_string();
        }
    }
    if file.is_empty() || file.contains(' ') {
        return None;
    }
    Some((file.to_string(), line, rest.trim().to_string()))
}

fn verilator(
    exe: &Path,
    top: &str,
    files: &[String],
    dir: &Path,
) -> Result<Vec<Finding>, LintError> {
    let ran = tools::run(
        exe,
        &args(&["--lint-only", "-Wall", "--top-module", top], files),
        dir,
    )?;
    let mut out = vec![];
    for line in ran.text.lines() {
        // %Warning-WIDTH: f.v:12:5: message   |   %Error: f.v:12:5: message
        let Some(rest) = line.strip_prefix('%') else {
            continue;
        };
        let Some((kind, body)) = rest.split_once(": ") else {
            continue;
        };
        if !(kind.starts_with("Warning") || kind.starts_with("Error")) {
            continue;
        }
        if body.starts_with("Exiting due to") {
            continue;
        }
        let rule = kind
            .split_once('-')
            .map(|(_, c)| c.to_string())
            .unwrap_or_else(|| "error".into());
        let f = match split_location(body) {
            Some((file, l, msg)) => Finding {
                tool: Tool::Verilator,
                file,
                line: Some(l),
                rule,
                message: msg,
            },
            None => Finding {
                tool: Tool::Verilator,
                file: "-".into(),
                line: None,
                rule,
                message: body.to_string(),
            },
        };
        out.push(f);
    }
    if out.is_empty() && ran.code != Some(0) {
        out.push(unparsed(Tool::Verilator, &ran));
    }
    Ok(out)
}

fn svlint(exe: &Path, files: &[String], dir: &Path) -> Result<Vec<Finding>, LintError> {
    let cfg = dir.join(".svlint.toml");
    std::fs::write(&cfg, SVLINT_CONFIG).map_err(|source| ToolError::Io {
        path: cfg.clone(),
        source,
    })?;
    let ran = tools::run(exe, &args(&["--config", ".svlint.toml"], files), dir)?;
    Ok(parse_svlint(&ran))
}

/// svlint's report: per failure `Fail: RULE`, then `--> FILE:LINE:COL`, the source line and
/// `hint  : TEXT` (with ANSI colours, which are removed first).
fn parse_svlint(ran: &tools::Ran) -> Vec<Finding> {
    let text = strip_ansi(&ran.text);
    let mut out: Vec<Finding> = vec![];
    for line in text.lines() {
        let t = line.trim();
        if let Some(rule) = t.strip_prefix("Fail:").or_else(|| t.strip_prefix("Error:")) {
            out.push(Finding {
                tool: Tool::Svlint,
                file: "-".into(),
                line: None,
                rule: rule.trim().to_string(),
                message: String::new(),
            });
        } else if let (Some(loc), Some(f)) = (t.strip_prefix("-->"), out.last_mut()) {
            if let Some((file, l, _)) = split_location(&format!("{}:", loc.trim())) {
                f.file = file;
                f.line = Some(l);
            }
        } else if let (Some(pos), Some(f)) = (t.find("hint  :"), out.last_mut()) {
            f.message = t[pos + "hint  :".len()..].trim().to_string();
        }
    }
    if out.is_empty() && ran.code != Some(0) {
        out.push(unparsed(Tool::Svlint, ran));
    }
    out
}

/// `s` without ANSI escape sequences (`ESC [ ... letter`, `ESC ( B`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    out
}

/// The Yosys gate script.
fn yosys_script(top: &str, files: &[String]) -> String {
    let mut s = String::new();
    for f in files {
        s += &format!("read_verilog {f}\n");
    }
    s += &format!("hierarchy -check -top {top}\n");
    s += "proc\n";
    s += "check -assert\n";
    // Latches come from `proc` (proc_dlatch) and from nothing after it.
    s += "select -assert-none t:$dlatch t:$adlatch t:$dlatchsr t:$sr\n";
    // Loops and drivers across module boundaries (a unit and its RAM primitive).
    s += "flatten\n";
    s += "opt_clean\n";
    s += "check -assert\n";
    s
}

fn yosys(exe: &Path, top: &str, files: &[String], dir: &Path) -> Result<Vec<Finding>, LintError> {
    let script = dir.join("lint.ys");
    std::fs::write(&script, yosys_script(top, files)).map_err(|source| ToolError::Io {
        path: script.clone(),
        source,
    })?;
    let ran = tools::run(exe, &["-s".into(), "lint.ys".into()], dir)?;
    let mut out: Vec<Finding> = vec![];
    let mut latches = 0;
    let mut lines = ran.text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("Latch inferred for signal ") {
            // Latch inferred for signal `\m.\sig' from process `\m.$proc$f.v:17$4': ...
            latches += 1;
            let sig = rest
                .split('\'')
                .next()
                .unwrap_or("")
                .rsplit('\\')
                .next()
                .unwrap_or("")
                .to_string();
            let (file, l) = source_location(rest).unwrap_or(("-".into(), 0));
            out.push(Finding {
                tool: Tool::Yosys,
                file,
                line: (l > 0).then_some(l),
                rule: "latch".into(),
                message: format!(
                    "latch inferred for `{sig}` (incomplete assignment in a combinational block)"
                ),
            });
            continue;
        }
        let (is_warning, msg) = if let Some(m) = line.strip_prefix("Warning: ") {
            (true, m)
        } else if let Some(m) = line.strip_prefix("ERROR: ") {
            (false, m)
        } else {
            continue;
        };
        // Details follow on indented lines.
        let mut detail = vec![];
        while let Some(next) = lines.peek() {
            if next.starts_with("    ") {
                detail.push(next.trim().to_string());
                lines.next();
            } else {
                break;
            }
        }
        if !is_warning
            && (msg.starts_with("Found ") && msg.contains("problems in 'check -assert'")
                || msg.starts_with("Assertion failed: selection is not empty") && latches > 0)
        {
            continue; // already reported by the warnings / latch lines above
        }
        let full = if detail.is_empty() {
            msg.to_string()
        } else {
            format!("{msg} {}", detail.join("; "))
        };
        let (file, l) = source_location(&full).unwrap_or(("-".into(), 0));
        out.push(Finding {
            tool: Tool::Yosys,
            file,
            line: (l > 0).then_some(l),
            rule: if is_warning { "warning" } else { "error" }.into(),
            message: full,
        });
    }
    if out.is_empty() && ran.code != Some(0) {
        out.push(unparsed(Tool::Yosys, &ran));
    }
    Ok(out)
}

/// The first `NAME.v:LINE` in a Yosys message (cell and process names carry their source).
fn source_location(s: &str) -> Option<(String, u32)> {
    let mut i = 0;
    while let Some(pos) = s[i..].find(".v:") {
        let dot = i + pos;
        let start = s[..dot]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_-/.".contains(c)))
            .map(|p| p + 1)
            .unwrap_or(0);
        let digits: String = s[dot + 3..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if start < dot && !digits.is_empty() {
            return Some((s[start..dot + 2].to_string(), digits.parse().ok()?));
        }
        i = dot + 3;
    }
    None
}

fn iverilog(
    exe: &Path,
    top: &str,
    files: &[String],
    dir: &Path,
) -> Result<Vec<Finding>, LintError> {
    let ran = tools::run(
        exe,
        &args(&["-g2005", "-Wall", "-o", "lint.vvp", "-s", top], files),
        dir,
    )?;
    let mut out = vec![];
    for line in ran.text.lines() {
        // f.v:12: error: message   |   f.v:12: warning: message   |   f.v:3: syntax error
        let Some((file, l, msg)) = split_location(line) else {
            continue;
        };
        let (rule, msg) = match msg.split_once(": ") {
            Some((k, m)) if k == "error" || k == "warning" || k == "sorry" => (k.to_string(), m),
            _ => ("error".to_string(), msg.as_str()),
        };
        out.push(Finding {
            tool: Tool::Iverilog,
            file,
            line: Some(l),
            rule,
            message: msg.to_string(),
        });
    }
    if out.is_empty() && ran.code != Some(0) {
        out.push(unparsed(Tool::Iverilog, &ran));
    }
    Ok(out)
}

/// For a message naming a signal (`Wire m.\sig is used but has no driver`), the file and
/// line of the first line declaring `sig`.
fn declaration_of(message: &str, files: &[String], dir: &Path) -> Option<(String, u32)> {
    let name = message
        .split_whitespace()
        .find_map(|w| w.rsplit_once(".\\").map(|(_, n)| n))?
        .trim_end_matches([':', '.', ',', '\''])
        .split('[')
        .next()?
        .to_string();
    for f in files {
        let text = std::fs::read_to_string(dir.join(f)).ok()?;
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let declares = ["wire", "reg", "input", "output", "integer"]
                .iter()
                .any(|k| code.split_whitespace().any(|w| w == *k));
            let names_it = code
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == name);
            if declares && names_it {
                return Some((f.clone(), i as u32 + 1));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        assert_eq!(
            split_location("a.v:12:5: Operator x"),
            Some(("a.v".into(), 12, "Operator x".into()))
        );
        assert_eq!(
            split_location("a.v:3: syntax error"),
            Some(("a.v".into(), 3, "syntax error".into()))
        );
        assert_eq!(
            source_location("cell $and$bad.v:12$1 ($and)"),
            Some(("bad.v".into(), 12))
        );
        assert_eq!(
            source_location("`\\m.$proc$dir/m.v:17$4': x"),
            Some(("dir/m.v".into(), 17))
        );
        assert_eq!(source_location("no location"), None);
    }

    #[test]
    fn svlint_report() {
        let text = "\x1b[31mFail\x1b[37m: case_default\n\x1b[34m   -->\x1b[37m m.v:59:5\n\x1b[34m   |\n\
                    59 |     case (x)\n   |     ^^^^ hint  : Use a default.\n   |  reason: x\n\x1b(B\x1b[m\n";
        let found = parse_svlint(&tools::Ran {
            code: Some(1),
            text: text.into(),
        });
        assert_eq!(
            found,
            vec![Finding {
                tool: Tool::Svlint,
                file: "m.v".into(),
                line: Some(59),
                rule: "case_default".into(),
                message: "Use a default.".into(),
            }]
        );
    }
}
