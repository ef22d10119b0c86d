//! PTX lexer: source text to tokens, each with its line and column (1-based).
//!
//! PTX identifiers never contain `.`, so a word with dots (`ld.global.u32`, `%tid.x`) is lexed
//! as one [`Tok::Word`]; the parser splits it. A word starting with `.` is a directive or a
//! type/state-space keyword (`.reg`, `.u32`). Comments (`//`, `/* */`) are skipped.
//!
//! Identifiers follow the PTX ISA (§4.4): `[a-zA-Z][a-zA-Z0-9_$]*` or `[_$%][a-zA-Z0-9_$]+`,
//! so `$L__BB0_2`, `__local_depot0`, `%SP` and `temp_param_reg` are all names; whether a name
//! is a register, a variable or a label is decided by its declaration, not by a `%`. The
//! lexer accepts a superset (words also carry `.`-separated modifiers); declarations check
//! their names with [`is_identifier`].

use crate::error::PtxError;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// Identifier, register, opcode with modifiers (`ld.global.u32`, `%r1`, `%tid.x`, `LBB0_1`).
    Word(String),
    /// `.name` (directive or keyword), without the dot.
    Dot(String),
    /// Integer literal (decimal, hex `0x`, octal `0..`, binary `0b`), unsigned magnitude.
    Int(u64),
    /// `0fXXXXXXXX`: raw f32 bits.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: raw f64 bits.
    F64Bits(u64),
    /// Decimal floating literal (`1.5`, `2e3`).
    Float(f64),
    /// String literal (`.pragma "nounroll"`, `.file 1 "k.cu"`).
    Str(String),
    /// Single punctuation character: `, ; : { } [ ] ( ) + - @ ! = < > |`.
    Punct(char),
    /// The `MAJOR.MINOR` operand of `.version`, lexed as two integers (as a float, `7.10`
    /// would read as `7.1`).
    Version(u32, u32),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%'
}
fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.'
}

/// Whether `s` is a PTX identifier (ISA §4.4): `[a-zA-Z][a-zA-Z0-9_$]*` or
/// `[_$%][a-zA-Z0-9_$]+`.
pub fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    let follow = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$';
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() => b[1..].iter().all(follow),
        Some(b'_' | b'$' | b'%') => b.len() > 1 && b[1..].iter().all(follow),
        _ => false,
    }
}

/// Describes a token for error messages.
pub fn describe(t: &Tok) -> String {
    match t {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Dot(w) => format!("`.{w}`"),
        Tok::Int(v) => format!("`{v}`"),
        Tok::F32Bits(v) => format!("`0f{v:08X}`"),
        Tok::F64Bits(v) => format!("`0d{v:016X}`"),
        Tok::Float(v) => format!("`{v}`"),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Version(a, b) => format!("`{a}.{b}`"),
    }
}

pub fn lex(file: &str, src: &str) -> Result<Vec<Token>, PtxError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let err = |line: u32, col: u32, message: String| PtxError {
        file: file.to_string(),
        line,
        col,
        message,
    };
    while i < b.len() {
        let c = b[i];
        // Whitespace and newlines.
        if c == b'\n' {
            i += 1;
            line += 1;
            col = 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        // Comments.
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let (sl, sc) = (line, col);
            i += 2;
            col += 2;
            loop {
                if i >= b.len() {
                    return Err(err(sl, sc, "unterminated `/*` comment".into()));
                }
                if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    i += 2;
                    col += 2;
                    break;
                }
                if b[i] == b'\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
                i += 1;
            }
            continue;
        }
        let (tl, tc) = (line, col);
        let start = i;
        let after_version =
            matches!(out.last(), Some(Token { tok: Tok::Dot(d), .. }) if d == "version");
        let tok = if after_version && c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            let text = &src[start..i];
            let num = |t: &str| {
                (!t.is_empty() && t.len() <= 4 && t.bytes().all(|c| c.is_ascii_digit()))
                    .then(|| t.parse::<u32>().ok())
                    .flatten()
            };
            match text.split_once('.').map(|(a, b)| (num(a), num(b))) {
                Some((Some(a), Some(b))) => Tok::Version(a, b),
                _ => {
                    return Err(err(
                        tl,
                        tc,
                        format!("malformed `.version` number `{text}` (expected MAJOR.MINOR)"),
                    ))
                }
            }
        } else if is_word_start(c) {
            i += 1;
            while i < b.len() && is_word_char(b[i]) {
                i += 1;
            }
            Tok::Word(src[start..i].to_string())
        } else if c == b'.' && b.get(i + 1).is_some_and(|&d| is_word_start(d)) {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            Tok::Dot(src[start + 1..i].to_string())
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                // exponent sign: 1e-5
                i += 1;
                if i < b.len()
                    && (b[i] == b'-' || b[i] == b'+')
                    && matches!(b[i - 1], b'e' | b'E')
                    && !src[start..i].starts_with("0x")
                    && !src[start..i].starts_with("0X")
                    && !src[start..i].starts_with("0f")
                    && !src[start..i].starts_with("0d")
                {
                    i += 1;
                }
            }
            let text = &src[start..i];
            parse_number(text).ok_or_else(|| err(tl, tc, format!("malformed number `{text}`")))?
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += 1;
            }
            if i >= b.len() || b[i] != b'"' {
                return Err(err(tl, tc, "unterminated string literal".into()));
            }
            i += 1;
            Tok::Str(src[start + 1..i - 1].to_string())
        } else if b",;:{}[]()+-@!=<>|".contains(&c) {
            i += 1;
            Tok::Punct(c as char)
        } else {
            // Report the whole (possibly multi-byte) character.
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(err(tl, tc, format!("unexpected character `{ch}`")));
        };
        col += src[start..i].chars().count() as u32;
        out.push(Token {
            tok,
            line: tl,
            col: tc,
        });
    }
    Ok(out)
}

fn parse_number(t: &str) -> Option<Tok> {
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0f") {
        if h.len() == 8 {
            return u32::from_str_radix(h, 16).ok().map(Tok::F32Bits);
        }
        return None;
    }
    if let Some(h) = lower.strip_prefix("0d") {
        if h.len() == 16 {
            return u64::from_str_radix(h, 16).ok().map(Tok::F64Bits);
        }
        return None;
    }
    // Integer suffix `U` (unsigned) is allowed by PTX.
    let digits = lower.strip_suffix('u').unwrap_or(&lower);
    if let Some(h) = digits.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok().map(Tok::Int);
    }
    if let Some(h) = digits.strip_prefix("0b") {
        return u64::from_str_radix(h, 2).ok().map(Tok::Int);
    }
    if digits.bytes().all(|c| c.is_ascii_digit()) {
        if digits.len() > 1 && digits.starts_with('0') {
            return u64::from_str_radix(&digits[1..], 8).ok().map(Tok::Int);
        }
        return digits.parse::<u64>().ok().map(Tok::Int);
    }
    if lower.contains('.') || lower.contains('e') {
        return lower.parse::<f64>().ok().map(Tok::Float);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex("t.ptx", s)
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn words_numbers_punct() {
        assert_eq!(
            toks("@!%p1 ld.global.v4.f32 {%f1}, [%rd1+-4]; // c\n"),
            vec![
                Tok::Punct('@'),
                Tok::Punct('!'),
                Tok::Word("%p1".into()),
                Tok::Word("ld.global.v4.f32".into()),
                Tok::Punct('{'),
                Tok::Word("%f1".into()),
                Tok::Punct('}'),
                Tok::Punct(','),
                Tok::Punct('['),
                Tok::Word("%rd1".into()),
                Tok::Punct('+'),
                Tok::Punct('-'),
                Tok::Int(4),
                Tok::Punct(']'),
                Tok::Punct(';'),
            ]
        );
        assert_eq!(
            toks("0f3F800000 0d4008000000000000 0x10 1.5 1e-3 010 7U"),
            vec![
                Tok::F32Bits(0x3F80_0000),
                Tok::F64Bits(0x4008_0000_0000_0000),
                Tok::Int(16),
                Tok::Float(1.5),
                Tok::Float(1e-3),
                Tok::Int(8),
                Tok::Int(7),
            ]
        );
        assert_eq!(
            toks(".reg /* x\n y */ .b32 $L__BB0_2:"),
            vec![
                Tok::Dot("reg".into()),
                Tok::Dot("b32".into()),
                Tok::Word("$L__BB0_2".into()),
                Tok::Punct(':'),
            ]
        );
    }

    #[test]
    fn versions_and_identifiers() {
        assert_eq!(
            toks(".version 7.10\n.version 6.4"),
            vec![
                Tok::Dot("version".into()),
                Tok::Version(7, 10),
                Tok::Dot("version".into()),
                Tok::Version(6, 4),
            ]
        );
        assert!(lex("f", ".version 7").is_err());
        assert!(lex("f", ".version 7.x").is_err());
        for ok in [
            "a",
            "P1",
            "$r1",
            "$L__BB0_2",
            "%rd",
            "__local_depot0",
            "temp_param_reg",
        ] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in ["", "_", "$", "%", "1a", "a.b", "%r-1", "a%b"] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn positions() {
        let t = lex("f", "a\n  /* x */ bc").unwrap();
        assert_eq!((t[1].line, t[1].col), (2, 11));
        let e = lex("f", "a\n  #").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        assert!(lex("f", "/* open").is_err());
        assert!(lex("f", "0fZZ").is_err());
    }
}
