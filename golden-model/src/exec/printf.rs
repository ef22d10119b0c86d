//! Device-side `printf`: CUDA's `vprintf(const char *fmt, void *args)` and the buffer its
//! output waits in until the host prints it.
//!
//! **The call.** clang lowers a device `printf(fmt, ...)` to `vprintf(fmt, buf)`, where `buf`
//! is a buffer in the thread's local memory holding the arguments as CUDA's ABI packs them:
//! in order, each at an offset aligned to its size, after C's default promotions (`char` and
//! `short` become `int`, `float` becomes `double`). [`vprintf`] reads the format string and
//! the arguments through a [`GuestRead`] (generic addresses: global, local or shared), so a
//! bad pointer is the guest's fault, reported as such, never a host crash.
//!
//! **Conversions.** `%d %i %u %x %X %o %c %s %p %f %F %e %E %g %G %a %A %%` with the flags
//! `- + space # 0`, a width and a precision (numbers or `*`, read from the arguments as
//! `int`s) and the length modifiers `hh h l ll j z t L q`; `l`, `ll`, `j`, `z`, `t` and `q`
//! make an integer argument 8 bytes (device `long` is 64 bits, as on the 64-bit host), the
//! others read 4 bytes (promoted) and `hh`/`h` then truncate. The output is glibc's
//! `printf` byte for byte (the tests compare with the host's `snprintf`): `%s` of a null
//! pointer prints `(null)`, `%p` of a null pointer `(nil)`, other pointers `0x` and lowercase
//! hex. `%n` consumes its pointer argument and writes nothing (CUDA does not support it). A
//! conversion this function does not know (`%q`, `%y`, a `%` at the end of the string) is
//! printed as it stands and consumes no argument. Width and precision are capped at
//! [`MAX_FIELD`].
//!
//! **Return value.** As CUDA documents for device `printf`: the number of arguments parsed
//! (each conversion that consumed one, `*` widths and precisions included), 0 when none
//! follow the format, -1 when the format pointer is null.
//!
//! **The buffer** ([`PrintfFifo`]): every call of every lane appends one record, the output
//! of that call. The records are printed by the host after each launch (CUDA prints at
//! synchronisation points; a launch on the model runs to completion before the host goes
//! on), ordered by (launch, global warp id, the warp's own count of `vprintf` calls, lane):
//! block by block, warp by warp, each warp's calls in program order, the lanes of one call in
//! ascending order. That order depends on nothing the timing model decides, so the functional
//! and timing modes print the same bytes. The buffer holds at most `limit` bytes of output
//! (1 MiB by default, like `cudaLimitPrintfFifoSize`): when it is over, the records last in
//! that order are dropped (and counted), so what survives is the first `limit` bytes'
//! worth of records in print order, again the same in both modes.

use std::collections::BTreeMap;

/// Default size of the printf buffer: CUDA's default `cudaLimitPrintfFifoSize` (1 MiB).
pub const DEFAULT_FIFO_BYTES: usize = 1 << 20;

/// Largest width or precision honoured (larger ones are taken as this).
pub const MAX_FIELD: usize = 1 << 16;

/// Longest format string read (bytes before its NUL).
pub const MAX_FORMAT: usize = 1 << 20;

/// Reads guest memory at generic addresses (global, or the calling thread's local and
/// shared windows).
pub trait GuestRead {
    /// Fill `out` from address `addr`; an error says why the guest may not read there.
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), String>;
}

/// One call's output and its return value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formatted {
    pub text: Vec<u8>,
    /// What `vprintf` returns (see the module docs).
    pub ret: i32,
}

/// `vprintf(fmt, args)`: the output (at most about `max_len` bytes: formatting stops once
/// the output is longer) and the return value. An error is a read the guest may not make
/// (the format string, an argument, a `%s` string), described for a fault report.
pub fn vprintf(
    mem: &mut dyn GuestRead,
    fmt: u64,
    args: u64,
    max_len: usize,
) -> Result<Formatted, String> {
    if fmt == 0 {
        return Ok(Formatted {
            text: Vec::new(),
            ret: -1,
        });
    }
    let f = read_cstr(mem, fmt, MAX_FORMAT)
        .map_err(|e| format!("printf: reading the format string at {fmt:#x}: {e}"))?;
    if f.len() >= MAX_FORMAT {
        return Err(format!(
            "printf: the format string at {fmt:#x} is longer than {MAX_FORMAT} bytes"
        ));
    }
    let mut a = ArgCursor {
        mem,
        base: args,
        off: 0,
        count: 0,
    };
    let text = format(&f, &mut a, max_len)?;
    Ok(Formatted {
        text,
        ret: a.count as i32,
    })
}

/// The bytes of the NUL-terminated string at `addr`, at most `max` of them.
pub fn read_cstr(mem: &mut dyn GuestRead, addr: u64, max: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 64];
    while out.len() < max {
        let a = addr.wrapping_add(out.len() as u64);
        // Whole chunks while they are readable, then byte by byte up to the fault.
        let n = chunk.len().min(max - out.len());
        let got = if mem.read(a, &mut chunk[..n]).is_ok() {
            n
        } else {
            mem.read(a, &mut chunk[..1])
                .map_err(|e| format!("byte {} of the string at {addr:#x}: {e}", out.len()))?;
            1
        };
        for &b in &chunk[..got] {
            if b == 0 {
                return Ok(out);
            }
            out.push(b);
        }
    }
    Ok(out)
}

/// The argument buffer of one call.
struct ArgCursor<'m> {
    mem: &'m mut dyn GuestRead,
    base: u64,
    off: u64,
    count: u32,
}

impl ArgCursor<'_> {
    /// The next argument of `size` (4 or 8) bytes, at the next offset aligned to its size.
    fn next(&mut self, size: u64) -> Result<u64, String> {
        self.off = self.off.div_ceil(size) * size;
        let addr = self.base.wrapping_add(self.off);
        let mut b = [0u8; 8];
        self.mem.read(addr, &mut b[..size as usize]).map_err(|e| {
            format!(
                "printf: argument {} (at {addr:#x}, offset {} of the argument buffer \
                     {:#x}): {e}",
                self.count + 1,
                self.off,
                self.base
            )
        })?;
        self.off += size;
        self.count += 1;
        Ok(u64::from_le_bytes(b))
    }
}

#[derive(Default, Clone, Copy)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

#[derive(Clone, Copy, PartialEq)]
enum Len {
    Hh,
    H,
    Default,
    Long,
}

/// Formats `f` with the arguments of `a` (see the module docs).
fn format(f: &[u8], a: &mut ArgCursor, max_len: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < f.len() {
        if out.len() > max_len {
            break;
        }
        if f[i] != b'%' {
            let end = f[i..]
                .iter()
                .position(|&c| c == b'%')
                .map_or(f.len(), |p| i + p);
            out.extend_from_slice(&f[i..end]);
            i = end;
            continue;
        }
        let start = i;
        i += 1;
        let mut s = Spec::default();
        while let Some(&c) = f.get(i) {
            match c {
                b'-' => s.left = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'#' => s.alt = true,
                b'0' => s.zero = true,
                _ => break,
            }
            i += 1;
        }
        if f.get(i) == Some(&b'*') {
            i += 1;
            let w = a.next(4)? as u32 as i32;
            if w < 0 {
                s.left = true;
            }
            s.width = (w.unsigned_abs() as usize).min(MAX_FIELD);
        } else {
            s.width = digits(f, &mut i);
        }
        if f.get(i) == Some(&b'.') {
            i += 1;
            if f.get(i) == Some(&b'*') {
                i += 1;
                let p = a.next(4)? as u32 as i32;
                s.prec = (p >= 0).then_some((p as usize).min(MAX_FIELD));
            } else {
                s.prec = Some(digits(f, &mut i));
            }
        }
        let mut len = Len::Default;
        loop {
            match f.get(i) {
                Some(b'h') => len = if len == Len::H { Len::Hh } else { Len::H },
                Some(b'l' | b'j' | b'z' | b't' | b'q') => len = Len::Long,
                Some(b'L') => {}
                _ => break,
            }
            i += 1;
        }
        let Some(&conv) = f.get(i) else {
            // A `%` spec cut off by the end of the string: printed as it stands.
            out.extend_from_slice(&f[start..]);
            break;
        };
        i += 1;
        let isize = if len == Len::Long { 8 } else { 4 };
        match conv {
            b'%' => out.push(b'%'),
            b'd' | b'i' => {
                let raw = a.next(isize)?;
                let v: i64 = match (len, isize) {
                    (Len::Hh, _) => raw as i8 as i64,
                    (Len::H, _) => raw as i16 as i64,
                    (_, 4) => raw as u32 as i32 as i64,
                    _ => raw as i64,
                };
                let sign = if v < 0 {
                    "-"
                } else if s.plus {
                    "+"
                } else if s.space {
                    " "
                } else {
                    ""
                };
                let mut digs = v.unsigned_abs().to_string();
                if s.prec == Some(0) && v == 0 {
                    digs.clear();
                }
                int_field(&mut out, &s, sign, "", digs);
            }
            b'u' | b'x' | b'X' | b'o' => {
                let raw = a.next(isize)?;
                let v: u64 = match (len, isize) {
                    (Len::Hh, _) => raw as u8 as u64,
                    (Len::H, _) => raw as u16 as u64,
                    (_, 4) => raw as u32 as u64,
                    _ => raw,
                };
                let (mut digs, prefix) = match conv {
                    b'u' => (v.to_string(), ""),
                    b'x' => (format!("{v:x}"), if s.alt && v != 0 { "0x" } else { "" }),
                    b'X' => (format!("{v:X}"), if s.alt && v != 0 { "0X" } else { "" }),
                    _ => (format!("{v:o}"), ""),
                };
                if s.prec == Some(0) && v == 0 {
                    digs.clear();
                }
                if conv == b'o' && s.alt && !digs.starts_with('0') {
                    let p = s.prec.unwrap_or(0);
                    if digs.len() >= p {
                        digs.insert(0, '0');
                    }
                }
                int_field(&mut out, &s, "", prefix, digs);
            }
            b'c' => {
                let v = a.next(4)? as u8;
                pad_bytes(&mut out, &s, &[v]);
            }
            b's' => {
                let p = a.next(8)?;
                let max = s.prec.unwrap_or(usize::MAX).min(max_len + 1);
                let text = if p == 0 {
                    // glibc prints `(null)` whole or not at all.
                    if s.prec.is_some_and(|q| q < 6) {
                        Vec::new()
                    } else {
                        b"(null)".to_vec()
                    }
                } else {
                    read_cstr(a.mem, p, max).map_err(|e| {
                        format!(
                            "printf: the %s string of argument {} (at {p:#x}): {e}",
                            a.count
                        )
                    })?
                };
                pad_bytes(&mut out, &s, &text);
            }
            b'p' => {
                let p = a.next(8)?;
                let text = if p == 0 {
                    "(nil)".to_string()
                } else {
                    format!("0x{p:x}")
                };
                let s = Spec { zero: false, ..s };
                pad_bytes(&mut out, &s, text.as_bytes());
            }
            b'n' => {
                a.next(8)?;
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(a.next(8)?);
                float_field(&mut out, &s, conv, v);
            }
            _ => out.extend_from_slice(&f[start..i]),
        }
    }
    Ok(out)
}

/// A decimal number at `f[*i..]` (0 if none), capped at [`MAX_FIELD`].
fn digits(f: &[u8], i: &mut usize) -> usize {
    let mut v = 0usize;
    while let Some(&c) = f.get(*i) {
        if !c.is_ascii_digit() {
            break;
        }
        v = (v * 10 + (c - b'0') as usize).min(MAX_FIELD);
        *i += 1;
    }
    v
}

/// `text` padded with spaces to the width (left- or right-aligned).
fn pad_bytes(out: &mut Vec<u8>, s: &Spec, text: &[u8]) {
    let pad = s.width.saturating_sub(text.len());
    if !s.left {
        out.resize(out.len() + pad, b' ');
    }
    out.extend_from_slice(text);
    if s.left {
        out.resize(out.len() + pad, b' ');
    }
}

/// An integer conversion: `sign`, `prefix` (`0x`), the digits zero-extended to the
/// precision, padded to the width (with zeros after the prefix for `0` without a precision).
fn int_field(out: &mut Vec<u8>, s: &Spec, sign: &str, prefix: &str, digs: String) {
    let zeros = s.prec.unwrap_or(0).saturating_sub(digs.len());
    let zero_pad = s.zero && !s.left && s.prec.is_none();
    padded_number(out, s, zero_pad, [sign, prefix], zeros, digs.as_bytes());
}

/// `sign` and `prefix`, `zeros` zeros, then `body`, padded to the width: with spaces before
/// (or after, left-aligned), or with zeros after the prefix when `zero_pad`.
fn padded_number(
    out: &mut Vec<u8>,
    s: &Spec,
    zero_pad: bool,
    [sign, prefix]: [&str; 2],
    zeros: usize,
    body: &[u8],
) {
    let len = sign.len() + prefix.len() + zeros + body.len();
    let pad = s.width.saturating_sub(len);
    if !s.left && !zero_pad {
        out.resize(out.len() + pad, b' ');
    }
    out.extend_from_slice(sign.as_bytes());
    out.extend_from_slice(prefix.as_bytes());
    if zero_pad {
        out.resize(out.len() + pad, b'0');
    }
    out.resize(out.len() + zeros, b'0');
    out.extend_from_slice(body);
    if s.left {
        out.resize(out.len() + pad, b' ');
    }
}

/// A floating-point conversion (`conv` one of `fFeEgGaA`).
fn float_field(out: &mut Vec<u8>, s: &Spec, conv: u8, v: f64) {
    let upper = conv.is_ascii_uppercase();
    let sign = if v.is_sign_negative() {
        "-"
    } else if s.plus {
        "+"
    } else if s.space {
        " "
    } else {
        ""
    };
    let x = v.abs();
    let (prefix, body) = if !x.is_finite() {
        let t = if x.is_nan() { "nan" } else { "inf" };
        let s2 = Spec { zero: false, ..*s };
        let t = if upper { t.to_uppercase() } else { t.into() };
        let text = format!("{sign}{t}");
        pad_bytes(out, &s2, text.as_bytes());
        return;
    } else {
        match conv.to_ascii_lowercase() {
            b'f' => ("", fixed(x, s.prec.unwrap_or(6), s.alt)),
            b'e' => ("", exp(x, s.prec.unwrap_or(6), s.alt)),
            b'g' => ("", general(x, s.prec, s.alt)),
            _ => (if upper { "0X" } else { "0x" }, hex(x, s.prec, s.alt)),
        }
    };
    let body = if upper { body.to_uppercase() } else { body };
    let zero_pad = s.zero && !s.left;
    padded_number(out, s, zero_pad, [sign, prefix], 0, body.as_bytes());
}

/// `%f` of a finite non-negative `x` (Rust's formatting is exact and rounds ties to even, as
/// glibc's does in the default rounding mode).
fn fixed(x: f64, prec: usize, alt: bool) -> String {
    let mut t = format!("{x:.prec$}");
    if alt && prec == 0 {
        t.push('.');
    }
    t
}

/// `%e` of a finite non-negative `x`: mantissa, `e`, sign, at least two exponent digits.
fn exp(x: f64, prec: usize, alt: bool) -> String {
    let t = format!("{x:.prec$e}");
    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let dot = if alt && prec == 0 { "." } else { "" };
    let sign = if e < 0 { '-' } else { '+' };
    format!("{m}{dot}e{sign}{:02}", e.unsigned_abs())
}

/// `%g` of a finite non-negative `x`.
fn general(x: f64, prec: Option<usize>, alt: bool) -> String {
    let p = match prec {
        None => 6,
        Some(0) => 1,
        Some(p) => p,
    };
    // The exponent `%e` would print at precision p - 1 (after its rounding).
    let t = format!("{x:.*e}", p - 1);
    let e: i64 = t
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let mut r = if (-4..p as i64).contains(&e) {
        fixed(x, (p as i64 - 1 - e) as usize, alt)
    } else {
        exp(x, p - 1, alt)
    };
    if !alt {
        let (m, tail) = match r.find('e') {
            Some(k) => (r[..k].to_string(), r[k..].to_string()),
            None => (r.clone(), String::new()),
        };
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m
        };
        r = m + &tail;
    }
    r
}

/// `%a` of a finite non-negative `x`, without the `0x` (glibc's form: `1.8p+1`; subnormals
/// as `0.xxxp-1022`; with a precision, the hex digits rounded to nearest, ties to even).
fn hex(x: f64, prec: Option<usize>, alt: bool) -> String {
    let bits = x.to_bits();
    let biased = (bits >> 52) as i64;
    let mut mant = bits & ((1 << 52) - 1);
    let (mut lead, e) = match (biased, mant) {
        (0, 0) => (0u64, 0i64),
        (0, _) => (0, -1022),
        _ => (1, biased - 1023),
    };
    let mut ndig = match prec {
        Some(p) => p,
        None => {
            // The fewest hex digits that hold the fraction exactly.
            let mut n = 13;
            while n > 0 && (mant >> (4 * (13 - n))) & 0xf == 0 {
                n -= 1;
            }
            n
        }
    };
    if ndig < 13 {
        let drop = 4 * (13 - ndig) as u32;
        let rem = mant & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        mant >>= drop;
        // Ties go to the even digit: the last kept hex digit, or the leading one.
        let odd = if ndig == 0 { lead & 1 } else { mant & 1 };
        if rem > half || (rem == half && odd == 1) {
            mant += 1;
            if mant >> (4 * ndig) != 0 {
                mant &= (1u64 << (4 * ndig)) - 1;
                lead += 1;
            }
        }
    } else {
        ndig = ndig.min(MAX_FIELD);
    }
    let mut frac = if ndig == 0 {
        String::new()
    } else if ndig <= 13 {
        format!("{mant:0w$x}", w = ndig)
    } else {
        format!("{mant:013x}")
    };
    if ndig > 13 {
        frac.extend(std::iter::repeat_n('0', ndig - 13));
    }
    let dot = if !frac.is_empty() || alt { "." } else { "" };
    let sign = if e < 0 { '-' } else { '+' };
    format!("{lead}{dot}{frac}p{sign}{}", e.unsigned_abs())
}

/// Where one record goes in print order: (launch, global warp id, the warp's call count,
/// lane).
pub type RecordKey = (u64, u32, u32, u8);

/// The printf buffer of one GPU (see the module docs).
#[derive(Debug, Clone)]
pub struct PrintfFifo {
    limit: usize,
    /// The current launch's number (the first field of every record's key).
    launch: u64,
    records: BTreeMap<RecordKey, Vec<u8>>,
    bytes: usize,
    dropped: u64,
}

impl Default for PrintfFifo {
    fn default() -> Self {
        PrintfFifo {
            limit: DEFAULT_FIFO_BYTES,
            launch: 0,
            records: BTreeMap::new(),
            bytes: 0,
            dropped: 0,
        }
    }
}

/// What [`PrintfFifo::take`] hands the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrintfOutput {
    /// Every kept record, in print order.
    pub text: Vec<u8>,
    /// Records dropped because the buffer was full.
    pub dropped: u64,
    /// The buffer's size when they were dropped.
    pub limit: usize,
}

impl PrintfOutput {
    /// Write the text to stdout and, if records were dropped, a note naming `kernel` to
    /// stderr (what the CUDA runtime and `warpforge run` do after each launch).
    pub fn print(&self, kernel: &str) {
        use std::io::Write;
        if !self.text.is_empty() {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&self.text);
            let _ = out.flush();
        }
        if self.dropped > 0 {
            eprintln!(
                "warpforge: the printf buffer ({} bytes, cudaLimitPrintfFifoSize) was full: {} \
                 printf record(s) of kernel `{kernel}` dropped",
                self.limit, self.dropped
            );
        }
    }
}

impl PrintfFifo {
    /// The buffer's size in bytes of output (`cudaDeviceSetLimit(cudaLimitPrintfFifoSize)`).
    pub fn limit(&self) -> usize {
        self.limit
    }
    pub fn set_limit(&mut self, bytes: usize) {
        self.limit = bytes;
        self.trim();
    }
    /// Records of the next launch sort after every record of this one.
    pub fn next_launch(&mut self) {
        self.launch += 1;
    }
    /// Append the output of the call of `lane` that was warp `warp`'s `call`-th.
    pub fn push(&mut self, warp: u32, call: u32, lane: u8, text: Vec<u8>) {
        self.bytes += text.len();
        if let Some(old) = self.records.insert((self.launch, warp, call, lane), text) {
            self.bytes -= old.len();
        }
        self.trim();
    }
    fn trim(&mut self) {
        while self.bytes > self.limit {
            let Some((_, t)) = self.records.pop_last() else {
                break;
            };
            self.bytes -= t.len();
            self.dropped += 1;
        }
    }
    /// Bytes held.
    pub fn len(&self) -> usize {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
    /// Everything buffered, in print order; the buffer is empty afterwards.
    pub fn take(&mut self) -> PrintfOutput {
        let mut text = Vec::with_capacity(self.bytes);
        for t in std::mem::take(&mut self.records).into_values() {
            text.extend_from_slice(&t);
        }
        self.bytes = 0;
        PrintfOutput {
            text,
            dropped: std::mem::take(&mut self.dropped),
            limit: self.limit,
        }
    }
}

#[cfg(test)]
#[path = "printf_tests.rs"]
mod tests;
