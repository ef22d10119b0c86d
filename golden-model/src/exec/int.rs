//! Integer semantics helpers (pure functions on raw register bits).
//!
//! Register convention (see [`ext`]): a value of an N-bit integer type is written to its
//! 64-bit register slot sign-extended (signed types) or zero-extended (unsigned and bit
//! types); readers use only the low N bits, so either convention is invisible to PTX code,
//! but sign-extension makes `ld.s8` into a wider register come out as PTX defines.
//!
//! Undefined behaviour in PTX, defined here:
//! - integer division by zero: unsigned quotient = all ones of the type width; signed
//!   quotient = -1 (all ones as well); remainder by zero = the dividend.
//! - signed `MIN / -1` = `MIN`, `MIN % -1` = 0 (two's-complement wraparound).

use crate::ptx::ir::ScalarType;

/// Mask of the low `bits` bits (bits in 1..=64).
#[inline(always)]
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Sign-extend the low `bits` bits of `v` to 64 bits.
#[inline(always)]
pub fn sext(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        let s = 64 - bits;
        (((v << s) as i64) >> s) as u64
    }
}

/// The register bits of a value of type `ty`: sign-extended for signed integers,
/// zero-extended for everything else (unsigned, bit types, floats, predicates as 0/1).
#[inline(always)]
pub fn ext(ty: ScalarType, v: u64) -> u64 {
    use ScalarType::*;
    match ty {
        S8 => sext(v, 8),
        S16 => sext(v, 16),
        S32 => sext(v, 32),
        S64 | U64 | B64 | F64 => v,
        U8 | B8 => v & 0xff,
        U16 | B16 | F16 => v & 0xffff,
        U32 | B32 | F32 => v & 0xffff_ffff,
        Pred => v & 1,
    }
}

/// The mask [`ext`] applies for a type that is not a signed integer (all ones for 64 bits).
#[inline(always)]
pub fn ext_mask(ty: ScalarType) -> u64 {
    use ScalarType::*;
    match ty {
        Pred => 1,
        _ => mask(ty.bits()),
    }
}

/// Read a register value of type `ty` as a 64-bit two's-complement integer (sign- or
/// zero-extended from the type's width). Uses only the low bits of `v`.
#[inline(always)]
pub fn read_int(ty: ScalarType, v: u64) -> u64 {
    if ty.is_signed() {
        sext(v, ty.bits())
    } else {
        v & mask(ty.bits())
    }
}

/// Like [`read_int`] for a width and signedness given separately.
#[inline(always)]
pub fn read_int_bits(v: u64, bits: u32, signed: bool) -> u64 {
    if signed {
        sext(v, bits)
    } else {
        v & mask(bits)
    }
}

/// The type of the same signedness and twice the width (`mul.wide`).
pub fn wide_type(ty: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match ty {
        S8 => S16,
        S16 => S32,
        S32 => S64,
        U8 | B8 => U16,
        U16 | B16 => U32,
        U32 | B32 => U64,
        _ => return None,
    })
}

/// High half of the full product of two `bits`-wide integers (already extended).
#[inline(always)]
pub fn mul_hi(a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    if bits == 64 {
        if signed {
            (((a as i64 as i128) * (b as i64 as i128)) >> 64) as u64
        } else {
            (((a as u128) * (b as u128)) >> 64) as u64
        }
    } else {
        // a, b are extended from `bits` <= 32, so the product fits in 64 bits.
        if signed {
            (((a as i64).wrapping_mul(b as i64)) >> bits) as u64
        } else {
            a.wrapping_mul(b) >> bits
        }
    }
}

/// Full product of two `bits`-wide (<= 32) integers (`mul.wide`), as 2*bits bits.
#[inline(always)]
pub fn mul_wide(a: u64, b: u64, signed: bool) -> u64 {
    if signed {
        (a as i64).wrapping_mul(b as i64) as u64
    } else {
        a.wrapping_mul(b)
    }
}

/// Integer division with PTX's undefined cases defined (see module docs). `a`, `b` are
/// extended per `ty`; the result is not yet re-extended.
#[inline(always)]
pub fn div(a: u64, b: u64, ty: ScalarType) -> u64 {
    let bits = ty.bits();
    if ty.is_signed() {
        if b & mask(bits) == 0 {
            return u64::MAX;
        }
        let (a, b) = (a as i64, b as i64);
        if bits == 64 {
            a.wrapping_div(b) as u64
        } else {
            // Narrow MIN / -1 overflows the narrow type only: wraps to MIN after truncation.
            (a / b) as u64
        }
    } else {
        if b == 0 {
            return mask(bits);
        }
        a / b
    }
}

/// Integer remainder (sign of the dividend, as C); by zero gives the dividend.
#[inline(always)]
pub fn rem(a: u64, b: u64, ty: ScalarType) -> u64 {
    if b & mask(ty.bits()) == 0 {
        return a;
    }
    if ty.is_signed() {
        (a as i64).wrapping_rem(b as i64) as u64
    } else {
        a % b
    }
}

/// Clamp a signed value to the range of a `bits`-wide signed integer.
#[inline(always)]
pub fn clamp_signed(v: i128, bits: u32) -> u64 {
    let max = (1i128 << (bits - 1)) - 1;
    let min = -(1i128 << (bits - 1));
    v.clamp(min, max) as i64 as u64
}

/// Clamp to the range of a `bits`-wide unsigned integer.
#[inline(always)]
pub fn clamp_unsigned(v: i128, bits: u32) -> u64 {
    let max = if bits >= 64 {
        u64::MAX as i128
    } else {
        (1i128 << bits) - 1
    };
    v.clamp(0, max) as u64
}

/// `shl`: amounts >= width give 0. `b` is the full (unsigned 32-bit) shift amount.
#[inline(always)]
pub fn shl(a: u64, b: u64, bits: u32) -> u64 {
    if b >= bits as u64 {
        0
    } else {
        a << b
    }
}

/// `shr`: `a` extended per type; amounts >= width give 0 (unsigned) or sign fill (signed).
#[inline(always)]
pub fn shr(a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    if signed {
        let s = b.min(63);
        ((a as i64) >> s) as u64
    } else if b >= bits as u64 {
        0
    } else {
        (a & mask(bits)) >> b
    }
}

/// `bfe`: extract `len` bits starting at `pos` (both from the low 8 bits of their operand),
/// sign-extending from the field's top bit for signed types (PTX pseudo-code, incl. the
/// clamping of `pos + len - 1` to the msb).
#[inline(always)]
pub fn bfe(a: u64, pos: u64, len: u64, bits: u32, signed: bool) -> u64 {
    let pos = (pos & 0xff) as u32;
    let len = (len & 0xff) as u32;
    let msb = bits - 1;
    let a = a & mask(bits);
    let sbit = if !signed || len == 0 {
        0
    } else {
        let i = (pos + len - 1).min(msb);
        (a >> i) & 1
    };
    // Field bits that come from `a`: i < len and pos + i <= msb.
    let avail = if pos > msb {
        0
    } else {
        (msb + 1 - pos).min(len)
    };
    let field = if avail == 0 {
        0
    } else {
        (a >> pos) & mask(avail)
    };
    let fill = if sbit == 1 {
        mask(bits) & !mask(avail)
    } else {
        0
    };
    field | fill
}

/// `bfi`: insert the low `len` bits of `a` into `b` at `pos`.
#[inline(always)]
pub fn bfi(a: u64, b: u64, pos: u64, len: u64, bits: u32) -> u64 {
    let pos = (pos & 0xff) as u32;
    let len = (len & 0xff) as u32;
    if pos >= bits || len == 0 {
        return b & mask(bits);
    }
    let n = len.min(bits - pos);
    let m = mask(n) << pos;
    ((b & !m) | ((a << pos) & m)) & mask(bits)
}

/// `prmt.b32` default mode: each selector nibble picks a byte of `{b, a}` (a = bytes 0..3);
/// bit 3 of the nibble replicates that byte's sign bit instead.
#[inline(always)]
pub fn prmt(a: u32, b: u32, c: u32) -> u32 {
    let src = ((b as u64) << 32) | a as u64;
    let mut d = 0u32;
    for i in 0..4 {
        let sel = (c >> (4 * i)) & 0xf;
        let byte = ((src >> (8 * (sel & 7))) & 0xff) as u32;
        let byte = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        d |= byte << (8 * i);
    }
    d
}

/// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`: funnel shift of `b:a` (b high).
#[inline(always)]
pub fn shf(a: u32, b: u32, c: u32, left: bool, wrap: bool) -> u32 {
    let n = if wrap { c & 31 } else { c.min(32) };
    let v = ((b as u64) << 32) | a as u64;
    if left {
        ((v << n) >> 32) as u32
    } else {
        (v >> n) as u32
    }
}

/// `brev`: reverse the low `bits` bits.
#[inline(always)]
pub fn brev(a: u64, bits: u32) -> u64 {
    a.reverse_bits() >> (64 - bits)
}

/// `clz`: leading zeros of the low `bits` bits.
#[inline(always)]
pub fn clz(a: u64, bits: u32) -> u64 {
    ((a & mask(bits)).leading_zeros() - (64 - bits)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use ScalarType::*;

    #[test]
    fn ext_and_read() {
        assert_eq!(ext(S8, 0x80), 0xffff_ffff_ffff_ff80);
        assert_eq!(ext(U8, 0x1ff), 0xff);
        assert_eq!(read_int(S16, 0xdead_8000), (-32768i64) as u64);
        assert_eq!(read_int(U32, 0xffff_ffff_0000_0001), 1);
        assert_eq!(ext(Pred, 3), 1);
    }

    #[test]
    fn division_edge_cases() {
        assert_eq!(div(7, 0, U32), 0xffff_ffff);
        assert_eq!(div(7, 0, U64), u64::MAX);
        assert_eq!(ext(S32, div(7, 0, S32)) as i64, -1);
        assert_eq!(rem(7, 0, U32), 7);
        assert_eq!(rem(sext(0xffff_fff9, 32), 0, S32) as i64, -7);
        let min32 = read_int(S32, 0x8000_0000);
        let m1 = read_int(S32, 0xffff_ffff);
        assert_eq!(ext(S32, div(min32, m1, S32)), ext(S32, 0x8000_0000));
        assert_eq!(ext(S32, rem(min32, m1, S32)), 0);
        assert_eq!(div(i64::MIN as u64, u64::MAX, S64), i64::MIN as u64);
        assert_eq!(rem(i64::MIN as u64, u64::MAX, S64), 0);
        assert_eq!(ext(S32, div(sext(-7i64 as u64, 32), 2, S32)) as i64, -3);
        assert_eq!(ext(S32, rem(sext(-7i64 as u64, 32), 2, S32)) as i64, -1);
    }

    #[test]
    fn shifts_past_width() {
        assert_eq!(shl(1, 32, 32) & mask(32), 0);
        assert_eq!(shl(1, 31, 32) & mask(32), 0x8000_0000);
        assert_eq!(shl(1, 1 << 33, 64), 0);
        assert_eq!(shr(0x8000_0000, 40, 32, false), 0);
        assert_eq!(
            shr(sext(0x8000_0000, 32), 40, 32, true) & mask(32),
            0xffff_ffff
        );
        assert_eq!(shr(sext(0x4000_0000, 32), 40, 32, true) & mask(32), 0);
        assert_eq!(shr(sext(0x8000, 16), 3, 16, true) & mask(16), 0xf000);
        assert_eq!(shr(0xffff_8000, 3, 16, false), 0x1000);
    }

    #[test]
    fn mul_hi_wide() {
        // unsigned 32: 0xffffffff^2 = 0xfffffffe_00000001
        assert_eq!(mul_hi(0xffff_ffff, 0xffff_ffff, 32, false), 0xffff_fffe);
        assert_eq!(
            mul_wide(0xffff_ffff, 0xffff_ffff, false),
            0xffff_fffe_0000_0001
        );
        // signed 32: -1 * -1 = 1 → hi 0; -2^31 * 2 = -2^32 → hi -1
        let m1 = sext(0xffff_ffff, 32);
        assert_eq!(mul_hi(m1, m1, 32, true) & mask(32), 0);
        assert_eq!(
            mul_hi(sext(0x8000_0000, 32), 2, 32, true) & mask(32),
            0xffff_ffff
        );
        assert_eq!(
            mul_wide(sext(0x8000_0000, 32), 2, true) as i64,
            -(1i64 << 32)
        );
        assert_eq!(mul_hi(u64::MAX, u64::MAX, 64, false), u64::MAX - 1);
        assert_eq!(mul_hi(u64::MAX, u64::MAX, 64, true), 0);
        assert_eq!(mul_hi(i64::MIN as u64, 2, 64, true), u64::MAX);
    }

    #[test]
    fn bit_field_ops() {
        assert_eq!(bfe(0xf0, 4, 4, 32, false), 0xf);
        assert_eq!(bfe(0xf0, 4, 4, 32, true), 0xffff_ffff);
        assert_eq!(bfe(0x70, 4, 4, 32, true), 0x7);
        assert_eq!(bfe(0x8000_0000, 31, 10, 32, true), 0xffff_ffff);
        assert_eq!(bfe(0x8000_0000, 40, 10, 32, true), 0xffff_ffff);
        assert_eq!(bfe(0x8000_0000, 40, 10, 32, false), 0);
        assert_eq!(bfe(0x1234, 0, 0, 32, true), 0);
        assert_eq!(bfe(0xabcd, 0x104, 0x108, 32, false), 0xbc); // only low 8 bits count
        assert_eq!(bfi(0xff, 0, 4, 4, 32), 0xf0);
        assert_eq!(bfi(0xff, 0xffff_ffff, 30, 8, 32), 0xffff_ffff);
        assert_eq!(bfi(0, 0xffff_ffff, 30, 8, 32), 0x3fff_ffff);
        assert_eq!(bfi(1, 5, 40, 1, 32), 5);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x3210), 0x4433_2211);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x7654), 0x8877_6655);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x0123), 0x1122_3344);
        assert_eq!(prmt(0x0000_8011, 0, 0x0009), 0x1111_11ff);
        assert_eq!(shf(0x8000_0001, 0x1, 1, true, true), 0x3);
        assert_eq!(shf(0x1, 0x2, 33, true, true), 0x4);
        assert_eq!(shf(0x1, 0x2, 33, true, false), 0x1);
        assert_eq!(shf(0x1, 0x2, 33, false, false), 0x2);
        assert_eq!(shf(0x1, 0x3, 1, false, true), 0x8000_0000);
        assert_eq!(brev(1, 32), 0x8000_0000);
        assert_eq!(clz(1, 32), 31);
        assert_eq!(clz(0, 32), 32);
        assert_eq!(clz(0, 64), 64);
    }

    fn bfe_ref(a: u64, pos: u64, len: u64, bits: u32, signed: bool) -> u64 {
        let msb = bits - 1;
        let pos = (pos & 0xff) as u32;
        let len = (len & 0xff) as u32;
        let sbit = if !signed || len == 0 {
            0
        } else {
            (a >> (pos + len - 1).min(msb)) & 1
        };
        let mut d = 0;
        for i in 0..=msb {
            let bit = if i < len && pos + i <= msb {
                (a >> (pos + i)) & 1
            } else {
                sbit
            };
            d |= bit << i;
        }
        d
    }

    proptest! {
        #[test]
        fn bfe_matches_ptx_pseudocode(a: u64, pos in 0u64..300, len in 0u64..300, signed: bool, w64: bool) {
            let bits = if w64 { 64 } else { 32 };
            let a = a & mask(bits);
            prop_assert_eq!(bfe(a, pos, len, bits, signed), bfe_ref(a, pos, len, bits, signed));
        }

        #[test]
        fn mul_hi_32_matches_reference(a: u32, b: u32) {
            prop_assert_eq!(mul_hi(a as u64, b as u64, 32, false) as u32,
                (((a as u64) * (b as u64)) >> 32) as u32);
            let r = (((a as i32 as i64) * (b as i32 as i64)) >> 32) as u32;
            prop_assert_eq!(mul_hi(sext(a as u64, 32), sext(b as u64, 32), 32, true) as u32, r);
        }

        #[test]
        fn div_rem_match_reference(a: i32, b: i32) {
            let (sa, sb) = (a as i64 as u64, b as i64 as u64);
            if b != 0 {
                prop_assert_eq!(ext(S32, div(sa, sb, S32)) as i64, a.wrapping_div(b) as i64);
                prop_assert_eq!(ext(S32, rem(sa, sb, S32)) as i64, a.wrapping_rem(b) as i64);
                let (ua, ub) = (a as u32, b as u32);
                prop_assert_eq!(div(ua as u64, ub as u64, U32), (ua / ub) as u64);
                prop_assert_eq!(rem(ua as u64, ub as u64, U32), (ua % ub) as u64);
            }
        }

        #[test]
        fn shifts_match_reference(a: u32, b in 0u64..100) {
            let expect_shl = if b >= 32 { 0 } else { a << b };
            prop_assert_eq!(shl(a as u64, b, 32) as u32, expect_shl);
            let expect_shr = if b >= 32 { 0 } else { a >> b };
            prop_assert_eq!(shr(a as u64, b, 32, false) as u32, expect_shr);
            let expect_sar = (a as i32) >> b.min(31);
            prop_assert_eq!(shr(sext(a as u64, 32), b, 32, true) as u32, expect_sar as u32);
        }

        #[test]
        fn bfi_matches_reference(a: u32, b: u32, pos in 0u64..40, len in 0u64..40) {
            let mut f = b;
            for i in 0..len as u32 {
                if pos as u32 + i <= 31 {
                    let bit = (a >> i) & 1;
                    f = (f & !(1 << (pos as u32 + i))) | (bit << (pos as u32 + i));
                }
            }
            prop_assert_eq!(bfi(a as u64, b as u64, pos, len, 32) as u32, f);
        }
    }
}
