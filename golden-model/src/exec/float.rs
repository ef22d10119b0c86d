//! Floating-point semantics helpers: IEEE operations in all four rounding directions,
//! PTX min/max/saturation/flush-to-zero rules, conversions (incl. f16).
//!
//! Directed rounding (`.rz/.rm/.rp`) is done by computing the exact result as an unevaluated
//! sum `hi + lo` (error-free transformations: TwoSum, FMA-based TwoProduct, FMA residuals of
//! division and square root) and then rounding that sum in the requested direction. Exactness:
//! - f32 add/sub/mul/fma/div/sqrt, f64→f32, int→f32/f64: exact in every mode.
//! - f64 add/sub/mul/div/sqrt: exact, except results in the f64 subnormal range (where the
//!   FMA residual itself is rounded) — the direction may then be off by one ulp.
//! - f64 fma: the residual sign comes from double-double arithmetic; exact except in
//!   contrived cancellations or when `a*b` overflows while `a*b+c` does not (then RN result).
//!
//! NaN results of arithmetic are canonical: f32 `0x7fffffff` (what NVIDIA GPUs produce) and
//! f64 `0x7fffffffffffffff` (our choice, by symmetry). Canonicalising also makes the model
//! independent of the host CPU's NaN propagation rules.

use crate::ptx::ir::Rounding;

pub const CANON_NAN_F32: u32 = 0x7fff_ffff;
pub const CANON_NAN_F64: u64 = 0x7fff_ffff_ffff_ffff;
pub const CANON_NAN_F16: u16 = 0x7fff;

/// Rounding direction of a float result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rnd {
    N,
    Z,
    M,
    P,
}

impl Rnd {
    /// Direction of a float rounding modifier; integral variants map to their direction.
    /// No modifier means round to nearest even.
    pub fn from(r: Option<Rounding>) -> Rnd {
        match r {
            None | Some(Rounding::Rn) | Some(Rounding::Rni) => Rnd::N,
            Some(Rounding::Rz) | Some(Rounding::Rzi) => Rnd::Z,
            Some(Rounding::Rm) | Some(Rounding::Rmi) => Rnd::M,
            Some(Rounding::Rp) | Some(Rounding::Rpi) => Rnd::P,
        }
    }
}

#[inline(always)]
pub fn canon32(x: f32) -> u64 {
    if x.is_nan() {
        CANON_NAN_F32 as u64
    } else {
        x.to_bits() as u64
    }
}

#[inline(always)]
pub fn canon64(x: f64) -> u64 {
    if x.is_nan() {
        CANON_NAN_F64
    } else {
        x.to_bits()
    }
}

#[inline(always)]
pub fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

#[inline(always)]
pub fn f64_of(v: u64) -> f64 {
    f64::from_bits(v)
}

/// An f32 operand: its register bits, flushed to zero first under `.ftz`.
#[inline(always)]
pub fn read_f32(v: u64, ftz: bool) -> f32 {
    if ftz {
        ftz32(f32_of(v))
    } else {
        f32_of(v)
    }
}

/// An f64 operand: its register bits, flushed to zero first under `.ftz`.
#[inline(always)]
pub fn read_f64(v: u64, ftz: bool) -> f64 {
    if ftz {
        ftz64(f64_of(v))
    } else {
        f64_of(v)
    }
}

/// Flush a subnormal f32 to zero of the same sign.
#[inline(always)]
pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// Flush a subnormal f64 to zero of the same sign (`.ftz` on f64 is only legal on a few
/// approximate instructions).
#[inline(always)]
pub fn ftz64(x: f64) -> f64 {
    if x.is_subnormal() {
        f64::from_bits(x.to_bits() & (1 << 63))
    } else {
        x
    }
}

/// `.sat`: clamp to [0, 1]; NaN and -0.0 give +0.0.
#[inline(always)]
pub fn sat32(x: f32) -> f32 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else if x > 1.0 {
        1.0
    } else {
        x
    }
}

#[inline(always)]
pub fn sat64(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else if x > 1.0 {
        1.0
    } else {
        x
    }
}

/// IEEE nextUp / nextDown for one float format (the two formats differ only in types).
macro_rules! next_up_down {
    ($up:ident, $down:ident, $t:ty) => {
        /// Smallest value greater than `x` (IEEE nextUp).
        #[inline]
        pub fn $up(x: $t) -> $t {
            if x.is_nan() || x == <$t>::INFINITY {
                return x;
            }
            if x == 0.0 {
                return <$t>::from_bits(1);
            }
            let b = x.to_bits();
            <$t>::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
        }

        /// Largest value less than `x` (IEEE nextDown).
        #[inline]
        pub fn $down(x: $t) -> $t {
            -$up(-x)
        }
    };
}
next_up_down!(next_up32, next_down32, f32);
next_up_down!(next_up64, next_down64, f64);

/// Error-free sum: `s + e == a + b` exactly (no overflow).
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Given `c`, the round-to-nearest result, and `s`, a value whose sign is the sign of
/// (exact − c), step to the directed result (at most one ulp away). `down`/`up` step one
/// ulp in the result's format; `T::default()` is its zero.
#[inline]
fn directed<T: Copy + PartialOrd + Default>(
    c: T,
    s: f64,
    r: Rnd,
    down: fn(T) -> T,
    up: fn(T) -> T,
) -> T {
    if s == 0.0 || s.is_nan() {
        return c;
    }
    let zero = T::default();
    match r {
        Rnd::N => c,
        Rnd::Z if s < 0.0 && c > zero => down(c),
        Rnd::Z if s > 0.0 && c < zero => up(c),
        Rnd::Z => c,
        Rnd::M if s < 0.0 => down(c),
        Rnd::P if s > 0.0 => up(c),
        Rnd::M | Rnd::P => c,
    }
}

#[inline]
fn dir32(c: f32, s: f64, r: Rnd) -> f32 {
    directed(c, s, r, next_down32, next_up32)
}

#[inline]
fn dir64(c: f64, s: f64, r: Rnd) -> f64 {
    directed(c, s, r, next_down64, next_up64)
}

/// Result of an operation on finite operands that overflowed, per direction.
#[inline]
fn overflow64(negative: bool, r: Rnd) -> f64 {
    let big = match (r, negative) {
        (Rnd::N, _) | (Rnd::P, false) | (Rnd::M, true) => f64::INFINITY,
        _ => f64::MAX,
    };
    if negative {
        -big
    } else {
        big
    }
}

/// Round the exact value `hi + lo` to f32 in direction `r`. Requires `hi` to be the f64
/// nearest to the exact value (or the exact value itself with `lo == 0`), `|lo| <= ulp(hi)/2`.
pub fn round_f32(hi: f64, lo: f64, r: Rnd) -> f32 {
    let c = hi as f32;
    if !hi.is_finite() {
        return c;
    }
    if c.is_infinite() {
        // hi >= MAX + ulp/2: round to nearest gave infinity.
        let neg = hi < 0.0;
        let max = if neg { -f32::MAX } else { f32::MAX };
        return match r {
            Rnd::N => {
                // exactly at the midpoint, and the exact value is below it in magnitude
                let mid = (f32::MAX as f64) + 2f64.powi(103);
                if hi.abs() == mid && lo != 0.0 && (lo < 0.0) != neg {
                    max
                } else {
                    c
                }
            }
            Rnd::Z => max,
            Rnd::M => {
                if neg {
                    c
                } else {
                    max
                }
            }
            Rnd::P => {
                if neg {
                    max
                } else {
                    c
                }
            }
        };
    }
    let d = hi - c as f64; // exact
    match r {
        Rnd::N => {
            if lo == 0.0 || d == 0.0 {
                return c;
            }
            let other = if d > 0.0 {
                next_up32(c)
            } else {
                next_down32(c)
            };
            let is_mid = (other as f64 - hi).abs() == d.abs();
            if is_mid && (lo > 0.0) == (d > 0.0) {
                other
            } else {
                c
            }
        }
        _ => dir32(c, d + lo, r),
    }
}

/// Exact-zero result sign of `x + y` (both summands zero or cancelling exactly).
#[inline]
fn zero_sum_sign(x: f64, y: f64, r: Rnd) -> f64 {
    if x == 0.0 && y == 0.0 && x.is_sign_negative() == y.is_sign_negative() {
        x
    } else if r == Rnd::M {
        -0.0
    } else {
        0.0
    }
}

#[inline]
pub fn add32(a: f32, b: f32, r: Rnd) -> f32 {
    if r == Rnd::N {
        return a + b;
    }
    let (hi, lo) = two_sum(a as f64, b as f64);
    if !hi.is_finite() {
        return hi as f32;
    }
    if hi == 0.0 {
        return zero_sum_sign(a as f64, b as f64, r) as f32;
    }
    round_f32(hi, lo, r)
}

#[inline]
pub fn mul32(a: f32, b: f32, r: Rnd) -> f32 {
    if r == Rnd::N {
        return a * b;
    }
    // The product of two 24-bit significands is exact in f64.
    round_f32(a as f64 * b as f64, 0.0, r)
}

/// `canon32(fma32(a, b, c, Rnd::N))` of every lane's raw f32 bits. A host with FMA
/// instructions runs the 32 lanes as a few vector instructions; otherwise each lane calls
/// the library `fmaf` (the same correctly rounded result: IEEE 754 fusedMultiplyAdd).
pub fn fma32_rn_lanes(a: &[u64; 32], b: &[u64; 32], c: &[u64; 32]) -> [u64; 32] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports the `fma` target feature (checked just above).
        return unsafe { fma32_rn_lanes_fma(a, b, c) };
    }
    fma32_rn_lanes_any(a, b, c)
}

#[inline(always)]
fn fma32_rn_lanes_any(a: &[u64; 32], b: &[u64; 32], c: &[u64; 32]) -> [u64; 32] {
    let mut out = [0u64; 32];
    for l in 0..32 {
        out[l] = canon32(f32_of(a[l]).mul_add(f32_of(b[l]), f32_of(c[l])));
    }
    out
}

/// [`fma32_rn_lanes`] compiled with the `fma` feature, so `mul_add` is an instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma32_rn_lanes_fma(a: &[u64; 32], b: &[u64; 32], c: &[u64; 32]) -> [u64; 32] {
    fma32_rn_lanes_any(a, b, c)
}

/// Fused multiply-add with a single rounding, any direction.
#[inline]
pub fn fma32(a: f32, b: f32, c: f32, r: Rnd) -> f32 {
    if r == Rnd::N {
        // The host's fused multiply-add is the same correctly rounded result (see the
        // `fma32_rn_*` tests), several times faster than the exact f64 route below.
        return a.mul_add(b, c);
    }
    let p = a as f64 * b as f64; // exact
    let (hi, lo) = two_sum(p, c as f64);
    if !hi.is_finite() {
        return hi as f32;
    }
    if hi == 0.0 {
        return zero_sum_sign(p, c as f64, r) as f32;
    }
    round_f32(hi, lo, r)
}

#[inline]
pub fn div32(a: f32, b: f32, r: Rnd) -> f32 {
    if r == Rnd::N {
        return a / b;
    }
    let (a, b) = (a as f64, b as f64);
    let q = a / b;
    if !q.is_finite() || q == 0.0 {
        return q as f32;
    }
    let rr = (-q).mul_add(b, a); // exact a - q*b
    round_f32(q, rr / b, r)
}

#[inline]
pub fn sqrt32(a: f32, r: Rnd) -> f32 {
    if r == Rnd::N {
        return a.sqrt();
    }
    let a = a as f64;
    let s = a.sqrt();
    if !s.is_finite() || s == 0.0 {
        return s as f32;
    }
    let rr = (-s).mul_add(s, a);
    round_f32(s, rr / (2.0 * s), r)
}

#[inline]
pub fn add64(a: f64, b: f64, r: Rnd) -> f64 {
    let s = a + b;
    if r == Rnd::N {
        return s;
    }
    if !s.is_finite() {
        return if a.is_finite() && b.is_finite() {
            overflow64(s < 0.0, r)
        } else {
            s
        };
    }
    if s == 0.0 {
        return zero_sum_sign(a, b, r);
    }
    let (_, e) = two_sum(a, b);
    dir64(s, e, r)
}

#[inline]
pub fn mul64(a: f64, b: f64, r: Rnd) -> f64 {
    let p = a * b;
    if r == Rnd::N {
        return p;
    }
    if !p.is_finite() {
        return if a.is_finite() && b.is_finite() {
            overflow64(p < 0.0, r)
        } else {
            p
        };
    }
    let e = a.mul_add(b, -p);
    if p == 0.0 && e == 0.0 {
        return p;
    }
    dir64(p, e, r)
}

#[inline]
pub fn fma64(a: f64, b: f64, c: f64, r: Rnd) -> f64 {
    let h = a.mul_add(b, c);
    if r == Rnd::N {
        return h;
    }
    if !h.is_finite() {
        let finite = a.is_finite() && b.is_finite() && c.is_finite();
        return if finite { overflow64(h < 0.0, r) } else { h };
    }
    let ph = a * b;
    if !ph.is_finite() {
        return h;
    }
    let pl = a.mul_add(b, -ph);
    let (sh, sl) = two_sum(ph, c);
    let res = ((sh - h) + sl) + pl;
    if h == 0.0 {
        if res == 0.0 {
            return zero_sum_sign(ph, c, r);
        }
        return dir64(h, res, r);
    }
    dir64(h, res, r)
}

#[inline]
pub fn div64(a: f64, b: f64, r: Rnd) -> f64 {
    let q = a / b;
    if r == Rnd::N {
        return q;
    }
    if !q.is_finite() {
        let finite = a.is_finite() && b.is_finite() && b != 0.0;
        return if finite { overflow64(q < 0.0, r) } else { q };
    }
    if q == 0.0 && a == 0.0 {
        return q;
    }
    let rr = (-q).mul_add(b, a);
    dir64(q, if b < 0.0 { -rr } else { rr }, r)
}

#[inline]
pub fn sqrt64(a: f64, r: Rnd) -> f64 {
    let s = a.sqrt();
    if r == Rnd::N || !s.is_finite() || s == 0.0 {
        return s;
    }
    dir64(s, (-s).mul_add(s, a), r)
}

/// PTX `min.f32/f64`: NaN only if both are NaN; otherwise the non-NaN operand;
/// -0.0 is less than +0.0.
#[inline(always)]
pub fn fmin<T: FloatLike>(a: T, b: T) -> T {
    if a.nan() {
        return b;
    }
    if b.nan() {
        return a;
    }
    if a.zero() && b.zero() {
        return if a.neg() { a } else { b };
    }
    if a.lt(b) {
        a
    } else {
        b
    }
}

/// PTX `max.f32/f64`: NaN only if both are NaN; +0.0 is greater than -0.0.
#[inline(always)]
pub fn fmax<T: FloatLike>(a: T, b: T) -> T {
    if a.nan() {
        return b;
    }
    if b.nan() {
        return a;
    }
    if a.zero() && b.zero() {
        return if a.neg() { b } else { a };
    }
    if b.lt(a) {
        a
    } else {
        b
    }
}

/// The few float operations `fmin`/`fmax` need, for f32 and f64.
pub trait FloatLike: Copy {
    fn nan(self) -> bool;
    fn zero(self) -> bool;
    fn neg(self) -> bool;
    fn lt(self, o: Self) -> bool;
}
impl FloatLike for f32 {
    fn nan(self) -> bool {
        self.is_nan()
    }
    fn zero(self) -> bool {
        self == 0.0
    }
    fn neg(self) -> bool {
        self.is_sign_negative()
    }
    fn lt(self, o: Self) -> bool {
        self < o
    }
}
impl FloatLike for f64 {
    fn nan(self) -> bool {
        self.is_nan()
    }
    fn zero(self) -> bool {
        self == 0.0
    }
    fn neg(self) -> bool {
        self.is_sign_negative()
    }
    fn lt(self, o: Self) -> bool {
        self < o
    }
}

/// Round to an integral value (`cvt.rni/rzi/rmi/rpi` on floats).
#[inline(always)]
pub fn round_integral64(x: f64, r: Rnd) -> f64 {
    match r {
        Rnd::N => x.round_ties_even(),
        Rnd::Z => x.trunc(),
        Rnd::M => x.floor(),
        Rnd::P => x.ceil(),
    }
}

#[inline(always)]
pub fn round_integral32(x: f32, r: Rnd) -> f32 {
    match r {
        Rnd::N => x.round_ties_even(),
        Rnd::Z => x.trunc(),
        Rnd::M => x.floor(),
        Rnd::P => x.ceil(),
    }
}

/// Float (already integral) to integer of `bits` width: NaN → 0, saturating to the range.
/// Returns the integer as raw bits (sign-extended for signed).
#[inline(always)]
pub fn f64_to_int(x: f64, bits: u32, signed: bool) -> u64 {
    // Rust's float→int `as` saturates and maps NaN to 0, exactly PTX's rule.
    match (bits, signed) {
        (8, true) => x as i8 as i64 as u64,
        (16, true) => x as i16 as i64 as u64,
        (32, true) => x as i32 as i64 as u64,
        (64, true) => x as i64 as u64,
        (8, false) => x as u8 as u64,
        (16, false) => x as u16 as u64,
        (32, false) => x as u32 as u64,
        _ => x as u64,
    }
}

/// Integer to f32 with rounding direction `r` (exact).
#[inline]
pub fn int_to_f32(v: i128, r: Rnd) -> f32 {
    let c = v as f32; // round to nearest even
    if r == Rnd::N {
        return c;
    }
    let diff = v - c as i128;
    dir32(c, diff.signum() as f64, r)
}

/// Integer to f64 with rounding direction `r` (exact).
#[inline]
pub fn int_to_f64(v: i128, r: Rnd) -> f64 {
    let c = v as f64;
    if r == Rnd::N {
        return c;
    }
    let diff = v - c as i128;
    dir64(c, diff.signum() as f64, r)
}

/// IEEE binary16 bits to f64 (exact; NaN → NaN).
pub fn f16_to_f64(h: u16) -> f64 {
    let neg = h & 0x8000 != 0;
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    let mag = match e {
        0 => m * 2f64.powi(-24),
        31 => {
            if m == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => (1024.0 + m) * 2f64.powi(e - 25),
    };
    if neg {
        -mag
    } else {
        mag
    }
}

/// f64 to IEEE binary16 bits, rounding in direction `r` (exact; NaN → canonical 0x7fff).
pub fn f64_to_f16(x: f64, r: Rnd) -> u16 {
    if x.is_nan() {
        return CANON_NAN_F16;
    }
    let neg = x.is_sign_negative();
    let sign: u16 = if neg { 0x8000 } else { 0 };
    let a = x.abs();
    if a == f64::INFINITY {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    // Unbiased exponent of a (a is > 0; f64 subnormals are far below f16's range).
    let e = if a.is_subnormal() {
        -1075
    } else {
        ((a.to_bits() >> 52) as i32) - 1023
    };
    let qexp = e.max(-14) - 10; // quantum of the f16 result is 2^qexp
    let m = a * 2f64.powi(-qexp.max(-1000)); // exact power-of-two scaling
    let mi = match (r, neg) {
        (Rnd::N, _) => m.round_ties_even(),
        (Rnd::Z, _) | (Rnd::M, false) | (Rnd::P, true) => m.floor(),
        (Rnd::M, true) | (Rnd::P, false) => m.ceil(),
    };
    if mi == 0.0 {
        return sign;
    }
    // Uniform encoding: subnormal (qexp = -24) gives bits = mi, normal gives
    // ((e + 15) << 10) + (mi - 1024); a carry out of the significand bumps the exponent.
    let bits = (((qexp + 25) as i64) << 10) + mi as i64 - 1024;
    if bits >= 0x7c00 {
        let to_inf = matches!((r, neg), (Rnd::N, _) | (Rnd::P, false) | (Rnd::M, true));
        return sign | if to_inf { 0x7c00 } else { 0x7bff };
    }
    sign | bits as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn f64_to_f32_rounding_directions() {
        // 1 + 2^-24 + 2^-30: between 1 and 1+2^-23, above the midpoint.
        let x = 1.0f64 + 2f64.powi(-24) + 2f64.powi(-30);
        assert_eq!(round_f32(x, 0.0, Rnd::N), 1.0 + f32::EPSILON);
        assert_eq!(round_f32(x, 0.0, Rnd::Z), 1.0);
        assert_eq!(round_f32(x, 0.0, Rnd::M), 1.0);
        assert_eq!(round_f32(x, 0.0, Rnd::P), 1.0 + f32::EPSILON);
        assert_eq!(round_f32(-x, 0.0, Rnd::Z), -1.0);
        assert_eq!(round_f32(-x, 0.0, Rnd::M), -1.0 - f32::EPSILON);
        // overflow
        assert_eq!(round_f32(1e39, 0.0, Rnd::Z), f32::MAX);
        assert_eq!(round_f32(1e39, 0.0, Rnd::N), f32::INFINITY);
        assert_eq!(round_f32(-1e39, 0.0, Rnd::P), -f32::MAX);
        assert_eq!(round_f32(-1e39, 0.0, Rnd::M), f32::NEG_INFINITY);
        // tiny
        assert_eq!(round_f32(1e-50, 0.0, Rnd::P), f32::from_bits(1));
        assert_eq!(round_f32(1e-50, 0.0, Rnd::Z), 0.0);
        assert_eq!(round_f32(-1e-50, 0.0, Rnd::M), -f32::from_bits(1));
        assert!(round_f32(-1e-50, 0.0, Rnd::P).is_sign_negative());
    }

    #[test]
    fn midpoint_with_tail_rounds_correctly() {
        // hi exactly at the midpoint 1 + 2^-24, the tail decides.
        let hi = 1.0f64 + 2f64.powi(-24);
        assert_eq!(round_f32(hi, 0.0, Rnd::N), 1.0); // tie → even
        assert_eq!(round_f32(hi, 1e-30, Rnd::N), 1.0 + f32::EPSILON);
        assert_eq!(round_f32(hi, -1e-30, Rnd::N), 1.0);
        let hi = 1.0f64 + 3.0 * 2f64.powi(-24); // tie → even is upward here
        assert_eq!(round_f32(hi, 0.0, Rnd::N), 1.0 + 2.0 * f32::EPSILON);
        assert_eq!(round_f32(hi, -1e-30, Rnd::N), 1.0 + f32::EPSILON);
    }

    #[test]
    fn add_directed_and_zero_signs() {
        let a = 1.0f32;
        let b = 2f32.powi(-30);
        assert_eq!(add32(a, b, Rnd::N), 1.0);
        assert_eq!(add32(a, b, Rnd::P), next_up32(1.0));
        assert_eq!(add32(a, -b, Rnd::Z), next_down32(1.0));
        assert_eq!(add32(a, -b, Rnd::N), 1.0);
        assert!(add32(1.0, -1.0, Rnd::M).is_sign_negative());
        assert!(add32(1.0, -1.0, Rnd::Z).is_sign_positive());
        assert!(add32(-0.0, -0.0, Rnd::P).is_sign_negative());
        assert!(add64(1.0, -1.0, Rnd::M).is_sign_negative());
        assert_eq!(add64(1.0, 2f64.powi(-60), Rnd::P), next_up64(1.0));
        assert_eq!(add64(f64::MAX, f64::MAX, Rnd::Z), f64::MAX);
        assert_eq!(
            mul64(1.0 + f64::EPSILON, 1.0 + f64::EPSILON, Rnd::P),
            1.0 + 3.0 * f64::EPSILON
        );
        assert_eq!(
            mul64(1.0 + f64::EPSILON, 1.0 + f64::EPSILON, Rnd::M),
            1.0 + 2.0 * f64::EPSILON
        );
        assert_eq!(div64(1.0, 3.0, Rnd::P), next_up64(1.0 / 3.0));
        assert_eq!(div64(1.0, 3.0, Rnd::Z), 1.0 / 3.0);
        assert_eq!(div64(-1.0, 3.0, Rnd::M), next_down64(-1.0 / 3.0));
        let (m, p) = (sqrt64(2.0, Rnd::M), sqrt64(2.0, Rnd::P));
        assert_eq!(p, next_up64(m));
        assert!(m.mul_add(m, -2.0) < 0.0 && p.mul_add(p, -2.0) > 0.0);
        assert_eq!(sqrt64(2.0, Rnd::Z), m);
        assert!(sqrt64(2.0, Rnd::N) == m || sqrt64(2.0, Rnd::N) == p);
        assert_eq!(div32(1.0, 3.0, Rnd::P), 1.0f32 / 3.0);
        assert_eq!(div32(1.0, 3.0, Rnd::Z), next_down32(1.0f32 / 3.0));
        let (m, p) = (sqrt32(2.0, Rnd::M), sqrt32(2.0, Rnd::P));
        assert_eq!(p, next_up32(m));
        assert!((m as f64) * (m as f64) < 2.0 && (p as f64) * (p as f64) > 2.0);
        assert_eq!(sqrt32(2.0, Rnd::Z), m);
        assert_eq!(sqrt32(2.0, Rnd::N), 2f32.sqrt());
        assert_eq!(fma64(1.0, 1.0, 2f64.powi(-80), Rnd::P), next_up64(1.0));
        assert_eq!(fma64(1.0, 1.0, -(2f64.powi(-80)), Rnd::Z), next_down64(1.0));
    }

    #[test]
    fn fma_single_rounding_differs_from_mul_add() {
        let a = 1.0f32 + f32::EPSILON;
        let b = 1.0f32 - f32::EPSILON;
        let c = -1.0f32;
        // a*b = 1 - 2^-46 exactly: mul rounds it to 1.0 so mul+add gives 0, fma keeps it.
        assert_eq!(a * b + c, 0.0);
        assert_eq!(fma32(a, b, c, Rnd::N), -(2f32.powi(-46)));
    }

    #[test]
    fn min_max_nan_and_zero() {
        assert_eq!(fmin(f32::NAN, 1.0f32), 1.0);
        assert_eq!(fmax(2.0f32, f32::NAN), 2.0);
        assert!(fmin(f32::NAN, f32::NAN).is_nan());
        assert!(fmin(0.0f32, -0.0).is_sign_negative());
        assert!(fmin(-0.0f32, 0.0).is_sign_negative());
        assert!(fmax(-0.0f32, 0.0).is_sign_positive());
        assert!(fmax(0.0f64, -0.0).is_sign_positive());
        assert_eq!(fmin(-3.0f64, 2.0), -3.0);
    }

    #[test]
    fn int_to_float_rounding() {
        let v = (1i128 << 24) + 1;
        assert_eq!(int_to_f32(v, Rnd::N), 16777216.0);
        assert_eq!(int_to_f32(v, Rnd::Z), 16777216.0);
        assert_eq!(int_to_f32(v, Rnd::P), 16777218.0);
        assert_eq!(int_to_f32(-v, Rnd::M), -16777218.0);
        assert_eq!(int_to_f32(-v, Rnd::Z), -16777216.0);
        assert_eq!(int_to_f32((1i128 << 24) + 3, Rnd::N), 16777220.0); // tie to even
        let big = u64::MAX as i128;
        assert_eq!(int_to_f64(big, Rnd::N), 18446744073709551616.0);
        assert_eq!(int_to_f64(big, Rnd::Z), next_down64(18446744073709551616.0));
    }

    #[test]
    fn float_to_int_saturates_and_nan_is_zero() {
        assert_eq!(f64_to_int(f64::NAN, 32, true), 0);
        assert_eq!(f64_to_int(1e20, 32, true), i32::MAX as u64);
        assert_eq!(f64_to_int(-1e20, 32, true) as i64, i32::MIN as i64);
        assert_eq!(f64_to_int(-5.0, 32, false), 0);
        assert_eq!(f64_to_int(1e20, 16, false), 0xffff);
        assert_eq!(round_integral64(2.5, Rnd::N), 2.0);
        assert_eq!(round_integral64(-2.5, Rnd::M), -3.0);
        assert_eq!(round_integral32(2.1, Rnd::P), 3.0);
    }

    #[test]
    fn f16_conversions() {
        assert_eq!(f64_to_f16(1.0, Rnd::N), 0x3c00);
        assert_eq!(f64_to_f16(65504.0, Rnd::N), 0x7bff);
        assert_eq!(f64_to_f16(65520.0, Rnd::N), 0x7c00);
        assert_eq!(f64_to_f16(65519.0, Rnd::N), 0x7bff);
        assert_eq!(f64_to_f16(1e6, Rnd::Z), 0x7bff);
        assert_eq!(f64_to_f16(-1e6, Rnd::P), 0xfbff);
        assert_eq!(f64_to_f16(2f64.powi(-24), Rnd::N), 0x0001);
        assert_eq!(f64_to_f16(2f64.powi(-26), Rnd::N), 0x0000);
        assert_eq!(f64_to_f16(2f64.powi(-26), Rnd::P), 0x0001);
        assert_eq!(f64_to_f16(-2.0, Rnd::N), 0xc000);
        assert_eq!(f64_to_f16(f64::NAN, Rnd::N), 0x7fff);
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11), Rnd::N), 0x3c00); // tie → even
        assert_eq!(f64_to_f16(1.0 + 3.0 * 2f64.powi(-11), Rnd::N), 0x3c02);
        assert_eq!(f64_to_f16(2047.5 * 2f64.powi(-10), Rnd::N), 0x4000); // carry
        for h in 0u16..=0xffff {
            let x = f16_to_f64(h);
            if x.is_nan() {
                continue;
            }
            assert_eq!(f64_to_f16(x, Rnd::N), h, "{h:#x}");
        }
    }

    fn f32_in_range() -> impl Strategy<Value = f32> {
        (any::<bool>(), 120u32..145, any::<u32>())
            .prop_map(|(s, e, m)| f32::from_bits(((s as u32) << 31) | (e << 23) | (m & 0x7f_ffff)))
    }

    /// The exact f64 route of `fma32` (what `Rnd::N` computed before it used the host fma).
    fn fma32_rn_exact(a: f32, b: f32, c: f32) -> f32 {
        let p = a as f64 * b as f64;
        let (hi, lo) = two_sum(p, c as f64);
        if !hi.is_finite() {
            return hi as f32;
        }
        if hi == 0.0 {
            return zero_sum_sign(p, c as f64, Rnd::N) as f32;
        }
        round_f32(hi, lo, Rnd::N)
    }

    #[test]
    fn fma32_rn_host_fma_matches_exact_route() {
        // Random operands biased towards nearby exponents, tiny values (subnormal results)
        // and cancellation, where the two routes could disagree.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for i in 0..2_000_000u32 {
            let r = next();
            let e = |k: u32| match i % 4 {
                0 => (r >> k) as u32 & 0xff,
                1 => 1 + ((r >> k) as u32 & 0x3f),
                2 => 100 + ((r >> k) as u32 & 0x3f),
                _ => 120 + ((r >> k) as u32 & 0xf),
            };
            let m = next();
            let f = |e: u32, k: u32| f32::from_bits(((m >> k) as u32 & 0x807f_ffff) | (e << 23));
            let (a, b, mut c) = (f(e(0), 0), f(e(8), 21), f(e(16), 42));
            if i % 8 == 7 {
                c = -(a * b); // near-total cancellation
            }
            let x = fma32_rn_exact(a, b, c);
            let y = fma32(a, b, c, Rnd::N);
            assert!(
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                "{a:e} * {b:e} + {c:e}: {x:e} vs {y:e}"
            );
        }
    }

    proptest! {
        /// The 32-lane fma (host FMA instructions where present) and its portable route
        /// both give the exact route's result on every lane.
        #[test]
        fn fma32_rn_lanes_match_exact_route(
            a in proptest::array::uniform32(f32_in_range()),
            b in proptest::array::uniform32(f32_in_range()),
            c in proptest::array::uniform32(f32_in_range()),
        ) {
            let raw = |x: [f32; 32]| x.map(|v| v.to_bits() as u64);
            let (ra, rb, rc) = (raw(a), raw(b), raw(c));
            let (fast, portable) = (fma32_rn_lanes(&ra, &rb, &rc), fma32_rn_lanes_any(&ra, &rb, &rc));
            for l in 0..32 {
                let want = canon32(fma32_rn_exact(a[l], b[l], c[l]));
                prop_assert_eq!(fast[l], want, "lane {}", l);
                prop_assert_eq!(portable[l], want, "lane {}", l);
            }
        }

        #[test]
        fn fma32_rn_matches_std(a: f32, b: f32, c: f32) {
            let x = fma32(a, b, c, Rnd::N);
            let y = a.mul_add(b, c);
            prop_assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
        }

        #[test]
        fn directed_mul32_brackets_exact(a in f32_in_range(), b in f32_in_range()) {
            let exact = a as f64 * b as f64;
            let m = mul32(a, b, Rnd::M);
            let p = mul32(a, b, Rnd::P);
            prop_assert!((m as f64) <= exact && (next_up32(m) as f64) > exact);
            prop_assert!((p as f64) >= exact && (next_down32(p) as f64) < exact);
            let z = mul32(a, b, Rnd::Z);
            prop_assert_eq!(z, if exact >= 0.0 { m } else { p });
        }

        #[test]
        fn directed_add32_brackets_exact(a in f32_in_range(), b in f32_in_range()) {
            // exponents within 25 of each other: the sum is exact in f64
            let exact = a as f64 + b as f64;
            let m = add32(a, b, Rnd::M);
            let p = add32(a, b, Rnd::P);
            prop_assert!((m as f64) <= exact && (next_up32(m) as f64) > exact);
            prop_assert!((p as f64) >= exact && (next_down32(p) as f64) < exact);
        }

        #[test]
        fn int_to_f32_directed_brackets(v: i64) {
            let m = int_to_f32(v as i128, Rnd::M);
            let p = int_to_f32(v as i128, Rnd::P);
            let v = v as i128;
            prop_assert!((m as i128) <= v && (p as i128) >= v);
            prop_assert!(m == p || next_up32(m) == p);
            prop_assert_eq!(int_to_f32(v, Rnd::N), v as f32);
        }

        #[test]
        fn f64_to_f32_directed_brackets(x in -1e30f64..1e30) {
            let m = round_f32(x, 0.0, Rnd::M);
            let p = round_f32(x, 0.0, Rnd::P);
            prop_assert!((m as f64) <= x && (p as f64) >= x);
            prop_assert!(m == p || next_up32(m) == p);
            let n = round_f32(x, 0.0, Rnd::N);
            prop_assert_eq!(n, x as f32);
            prop_assert_eq!(round_f32(x, 0.0, Rnd::Z), if x >= 0.0 { m } else { p });
        }
    }
}
