//! libdevice's `__nv_*` math functions, executed natively.
//!
//! clang compiles the math of CUDA's headers to calls of libdevice functions (`__nv_expf`,
//! `__nv_pow`...) that PTX declares `.extern .func` and `ptxas` links from `libdevice.bc`.
//! The model has no libdevice: the PTX front end recognises a call to one of the functions
//! of [`NV_FUNCS`] by name and checks it against the signature here, and the call becomes
//! one `Call` instruction that computes the function on the host.
//!
//! **Accuracy.** Each function is the host's: Rust's `f32`/`f64` methods, which on Linux
//! call glibc's libm (and the IEEE operations themselves for `sqrt`, `fma`, `fmin`, `floor`...,
//! which are exact). glibc documents its `exp`, `log`, `pow`, `sin`, `cos` (double) and
//! `expf`, `logf`, `powf`, `sinf`, `cosf` as correctly rounded in nearly every case and
//! within 1 ulp always; the rest of glibc's libm is within a few ulp (its
//! manual's table lists 1-3 ulp for tanh, erf, cbrt, atan2, lgamma on x86-64). Every one is
//! inside CUDA's documented bounds for the same function (CUDA C Programming Guide, "Mathematical
//! Functions": expf 2 ulp, logf 1 ulp, powf 4 ulp, sinf/cosf 2 ulp, exp/log 1 ulp, pow 2 ulp,
//! sin/cos 2 ulp, erff 2 ulp, cbrtf 1 ulp, tanhf 2 ulp, atan2f 3 ulp), so the model's results
//! are at least as accurate as a real GPU's, but not bit-identical to them: a program that
//! compares with a CPU reference computed with the same libm gets the CPU's bits. Results
//! are deterministic for a given host libm (as the `ex2`/`lg2`/`sin`/`cos.approx`
//! instructions are). `__nv_fast_*` (what `-use_fast_math` calls) are the accurate
//! functions too. Functions Rust's standard library lacks (`erf`, `erfc`, `tgamma`,
//! `lgamma`, `j0`...) are glibc's, called directly.

use crate::ptx::ir::ScalarType;

/// How a function maps lanes: its signature and the host implementation.
#[derive(Clone, Copy)]
pub enum NvImpl {
    F1(fn(f32) -> f32),
    F2(fn(f32, f32) -> f32),
    F3(fn(f32, f32, f32) -> f32),
    D1(fn(f64) -> f64),
    D2(fn(f64, f64) -> f64),
    D3(fn(f64, f64, f64) -> f64),
    /// `int f(float)` (`__nv_isnanf`, `__nv_ilogbf`...).
    FI(fn(f32) -> i32),
    DI(fn(f64) -> i32),
    /// `float f(float, int)` (`__nv_ldexpf`, `__nv_powif`...).
    FFI(fn(f32, i32) -> f32),
    DDI(fn(f64, i32) -> f64),
}

/// One libdevice function the model provides.
#[derive(Clone, Copy)]
pub struct NvFunc {
    pub name: &'static str,
    pub imp: NvImpl,
}

impl NvFunc {
    /// The parameter types, in order.
    pub fn params(&self) -> &'static [ScalarType] {
        use ScalarType::*;
        match self.imp {
            NvImpl::F1(_) | NvImpl::FI(_) => &[F32],
            NvImpl::F2(_) => &[F32, F32],
            NvImpl::F3(_) => &[F32, F32, F32],
            NvImpl::D1(_) | NvImpl::DI(_) => &[F64],
            NvImpl::D2(_) => &[F64, F64],
            NvImpl::D3(_) => &[F64, F64, F64],
            NvImpl::FFI(_) => &[F32, S32],
            NvImpl::DDI(_) => &[F64, S32],
        }
    }
    /// The return type.
    pub fn ret(&self) -> ScalarType {
        match self.imp {
            NvImpl::F1(_) | NvImpl::F2(_) | NvImpl::F3(_) | NvImpl::FFI(_) => ScalarType::F32,
            NvImpl::D1(_) | NvImpl::D2(_) | NvImpl::D3(_) | NvImpl::DDI(_) => ScalarType::F64,
            NvImpl::FI(_) | NvImpl::DI(_) => ScalarType::S32,
        }
    }
    /// The result's raw register bits from the arguments' raw register bits.
    pub fn eval(&self, a: u64, b: u64, c: u64) -> u64 {
        let f = |x: u64| f32::from_bits(x as u32);
        let d = f64::from_bits;
        let rf = |x: f32| x.to_bits() as u64;
        let rd = |x: f64| x.to_bits();
        match self.imp {
            NvImpl::F1(g) => rf(g(f(a))),
            NvImpl::F2(g) => rf(g(f(a), f(b))),
            NvImpl::F3(g) => rf(g(f(a), f(b), f(c))),
            NvImpl::D1(g) => rd(g(d(a))),
            NvImpl::D2(g) => rd(g(d(a), d(b))),
            NvImpl::D3(g) => rd(g(d(a), d(b), d(c))),
            NvImpl::FI(g) => g(f(a)) as i64 as u64,
            NvImpl::DI(g) => g(d(a)) as i64 as u64,
            NvImpl::FFI(g) => rf(g(f(a), b as u32 as i32)),
            NvImpl::DDI(g) => rd(g(d(a), b as u32 as i32)),
        }
    }
}

/// The index in [`NV_FUNCS`] of the function named `name`.
pub fn lookup(name: &str) -> Option<u16> {
    NV_FUNCS
        .iter()
        .position(|f| f.name == name)
        .map(|i| i as u16)
}

mod c {
    extern "C" {
        pub fn erf(x: f64) -> f64;
        pub fn erfc(x: f64) -> f64;
        pub fn tgamma(x: f64) -> f64;
        pub fn lgamma_r(x: f64, sign: *mut i32) -> f64;
        pub fn erff(x: f32) -> f32;
        pub fn erfcf(x: f32) -> f32;
        pub fn tgammaf(x: f32) -> f32;
        pub fn lgammaf_r(x: f32, sign: *mut i32) -> f32;
        pub fn j0(x: f64) -> f64;
        pub fn j1(x: f64) -> f64;
        pub fn y0(x: f64) -> f64;
        pub fn y1(x: f64) -> f64;
        pub fn remainder(x: f64, y: f64) -> f64;
        pub fn remainderf(x: f32, y: f32) -> f32;
        pub fn nextafter(x: f64, y: f64) -> f64;
        pub fn nextafterf(x: f32, y: f32) -> f32;
        pub fn logb(x: f64) -> f64;
        pub fn logbf(x: f32) -> f32;
        pub fn ilogb(x: f64) -> i32;
        pub fn ilogbf(x: f32) -> i32;
        pub fn ldexp(x: f64, e: i32) -> f64;
        pub fn ldexpf(x: f32, e: i32) -> f32;
        pub fn nearbyint(x: f64) -> f64;
        pub fn nearbyintf(x: f32) -> f32;
    }
}

// SAFETY (every wrapper below): pure libm functions of plain values; `lgamma_r` writes the
// sign through a pointer to a local.
fn erf(x: f64) -> f64 {
    unsafe { c::erf(x) }
}
fn erfc(x: f64) -> f64 {
    unsafe { c::erfc(x) }
}
fn tgamma(x: f64) -> f64 {
    unsafe { c::tgamma(x) }
}
fn lgamma(x: f64) -> f64 {
    let mut s = 0;
    unsafe { c::lgamma_r(x, &mut s) }
}
fn erff(x: f32) -> f32 {
    unsafe { c::erff(x) }
}
fn erfcf(x: f32) -> f32 {
    unsafe { c::erfcf(x) }
}
fn tgammaf(x: f32) -> f32 {
    unsafe { c::tgammaf(x) }
}
fn lgammaf(x: f32) -> f32 {
    let mut s = 0;
    unsafe { c::lgammaf_r(x, &mut s) }
}
fn j0(x: f64) -> f64 {
    unsafe { c::j0(x) }
}
fn j1(x: f64) -> f64 {
    unsafe { c::j1(x) }
}
fn y0(x: f64) -> f64 {
    unsafe { c::y0(x) }
}
fn y1(x: f64) -> f64 {
    unsafe { c::y1(x) }
}
fn j0f(x: f32) -> f32 {
    j0(x as f64) as f32
}
fn j1f(x: f32) -> f32 {
    j1(x as f64) as f32
}
fn y0f(x: f32) -> f32 {
    y0(x as f64) as f32
}
fn y1f(x: f32) -> f32 {
    y1(x as f64) as f32
}
fn remainder(x: f64, y: f64) -> f64 {
    unsafe { c::remainder(x, y) }
}
fn remainderf(x: f32, y: f32) -> f32 {
    unsafe { c::remainderf(x, y) }
}
fn nextafter(x: f64, y: f64) -> f64 {
    unsafe { c::nextafter(x, y) }
}
fn nextafterf(x: f32, y: f32) -> f32 {
    unsafe { c::nextafterf(x, y) }
}
fn logb(x: f64) -> f64 {
    unsafe { c::logb(x) }
}
fn logbf(x: f32) -> f32 {
    unsafe { c::logbf(x) }
}
fn ilogb(x: f64) -> i32 {
    unsafe { c::ilogb(x) }
}
fn ilogbf(x: f32) -> i32 {
    unsafe { c::ilogbf(x) }
}
fn ldexp(x: f64, e: i32) -> f64 {
    unsafe { c::ldexp(x, e) }
}
fn ldexpf(x: f32, e: i32) -> f32 {
    unsafe { c::ldexpf(x, e) }
}
fn nearbyint(x: f64) -> f64 {
    unsafe { c::nearbyint(x) }
}
fn nearbyintf(x: f32) -> f32 {
    unsafe { c::nearbyintf(x) }
}

/// `pow(x, n)` for an integer `n` (libdevice's `powi`): the real power, rounded once.
fn powi(x: f64, n: i32) -> f64 {
    x.powf(n as f64)
}
fn powif(x: f32, n: i32) -> f32 {
    x.powf(n as f32)
}
/// `sin(pi x)` / `cos(pi x)` exact at integers and half-integers (as CUDA's are).
fn sinpi(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    let r = x % 2.0;
    if r == r.trunc() {
        return 0.0f64.copysign(x);
    }
    if (r * 2.0) == (r * 2.0).trunc() {
        return if r == 0.5 || r == -1.5 { 1.0 } else { -1.0 };
    }
    (std::f64::consts::PI * r).sin()
}
fn cospi(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    let r = (x % 2.0).abs();
    if r == 0.5 || r == 1.5 {
        return 0.0;
    }
    if r == 0.0 {
        return 1.0;
    }
    if r == 1.0 {
        return -1.0;
    }
    (std::f64::consts::PI * r).cos()
}
fn sinpif(x: f32) -> f32 {
    sinpi(x as f64) as f32
}
fn cospif(x: f32) -> f32 {
    cospi(x as f64) as f32
}
fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}
fn rsqrtf(x: f32) -> f32 {
    (1.0 / (x as f64).sqrt()) as f32
}
fn rcbrt(x: f64) -> f64 {
    1.0 / x.cbrt()
}
fn rcbrtf(x: f32) -> f32 {
    (1.0 / (x as f64).cbrt()) as f32
}
fn exp10(x: f64) -> f64 {
    10f64.powf(x)
}
fn exp10f(x: f32) -> f32 {
    10f32.powf(x)
}
fn fdim(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x > y {
        x - y
    } else {
        0.0
    }
}
fn fdimf(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else if x > y {
        x - y
    } else {
        0.0
    }
}
fn saturatef(x: f32) -> f32 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}
fn normcdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}
fn normcdff(x: f32) -> f32 {
    normcdf(x as f64) as f32
}
fn fmod(x: f64, y: f64) -> f64 {
    x % y
}
fn fmodf(x: f32, y: f32) -> f32 {
    x % y
}

macro_rules! table {
    ($($name:literal => $kind:ident($f:expr)),* $(,)?) => {
        /// Every libdevice function the model provides (the float and double math of
        /// libdevice; its integer, conversion and SIMD-in-a-word helpers are not here).
        pub static NV_FUNCS: &[NvFunc] = &[$(NvFunc { name: $name, imp: NvImpl::$kind($f) }),*];
    };
}

table! {
    // single precision
    "__nv_sqrtf" => F1(f32::sqrt),
    "__nv_fsqrt_rn" => F1(f32::sqrt),
    "__nv_rsqrtf" => F1(rsqrtf),
    "__nv_frsqrt_rn" => F1(rsqrtf),
    "__nv_cbrtf" => F1(f32::cbrt),
    "__nv_rcbrtf" => F1(rcbrtf),
    "__nv_expf" => F1(f32::exp),
    "__nv_fast_expf" => F1(f32::exp),
    "__nv_exp2f" => F1(f32::exp2),
    "__nv_exp10f" => F1(exp10f),
    "__nv_fast_exp10f" => F1(exp10f),
    "__nv_expm1f" => F1(f32::exp_m1),
    "__nv_logf" => F1(f32::ln),
    "__nv_fast_logf" => F1(f32::ln),
    "__nv_log2f" => F1(f32::log2),
    "__nv_fast_log2f" => F1(f32::log2),
    "__nv_log10f" => F1(f32::log10),
    "__nv_fast_log10f" => F1(f32::log10),
    "__nv_log1pf" => F1(f32::ln_1p),
    "__nv_logbf" => F1(logbf),
    "__nv_powf" => F2(f32::powf),
    "__nv_fast_powf" => F2(f32::powf),
    "__nv_sinf" => F1(f32::sin),
    "__nv_fast_sinf" => F1(f32::sin),
    "__nv_cosf" => F1(f32::cos),
    "__nv_fast_cosf" => F1(f32::cos),
    "__nv_tanf" => F1(f32::tan),
    "__nv_fast_tanf" => F1(f32::tan),
    "__nv_sinpif" => F1(sinpif),
    "__nv_cospif" => F1(cospif),
    "__nv_asinf" => F1(f32::asin),
    "__nv_acosf" => F1(f32::acos),
    "__nv_atanf" => F1(f32::atan),
    "__nv_atan2f" => F2(f32::atan2),
    "__nv_sinhf" => F1(f32::sinh),
    "__nv_coshf" => F1(f32::cosh),
    "__nv_tanhf" => F1(f32::tanh),
    "__nv_asinhf" => F1(f32::asinh),
    "__nv_acoshf" => F1(f32::acosh),
    "__nv_atanhf" => F1(f32::atanh),
    "__nv_erff" => F1(erff),
    "__nv_erfcf" => F1(erfcf),
    "__nv_tgammaf" => F1(tgammaf),
    "__nv_lgammaf" => F1(lgammaf),
    "__nv_normcdff" => F1(normcdff),
    "__nv_j0f" => F1(j0f),
    "__nv_j1f" => F1(j1f),
    "__nv_y0f" => F1(y0f),
    "__nv_y1f" => F1(y1f),
    "__nv_fabsf" => F1(f32::abs),
    "__nv_floorf" => F1(f32::floor),
    "__nv_ceilf" => F1(f32::ceil),
    "__nv_truncf" => F1(f32::trunc),
    "__nv_roundf" => F1(f32::round),
    "__nv_rintf" => F1(f32::round_ties_even),
    "__nv_nearbyintf" => F1(nearbyintf),
    "__nv_saturatef" => F1(saturatef),
    "__nv_fmodf" => F2(fmodf),
    "__nv_remainderf" => F2(remainderf),
    "__nv_hypotf" => F2(f32::hypot),
    "__nv_fminf" => F2(f32::min),
    "__nv_fmaxf" => F2(f32::max),
    "__nv_fdimf" => F2(fdimf),
    "__nv_copysignf" => F2(f32::copysign),
    "__nv_nextafterf" => F2(nextafterf),
    "__nv_fast_fdividef" => F2(|a, b| a / b),
    "__nv_fmaf" => F3(f32::mul_add),
    "__nv_fmaf_rn" => F3(f32::mul_add),
    "__nv_isnanf" => FI(|x| x.is_nan() as i32),
    "__nv_isinff" => FI(|x| x.is_infinite() as i32),
    "__nv_finitef" => FI(|x| x.is_finite() as i32),
    "__nv_signbitf" => FI(|x| x.is_sign_negative() as i32),
    "__nv_ilogbf" => FI(ilogbf),
    "__nv_ldexpf" => FFI(ldexpf),
    "__nv_scalbnf" => FFI(ldexpf),
    "__nv_powif" => FFI(powif),
    // double precision
    "__nv_sqrt" => D1(f64::sqrt),
    "__nv_dsqrt_rn" => D1(f64::sqrt),
    "__nv_rsqrt" => D1(rsqrt),
    "__nv_cbrt" => D1(f64::cbrt),
    "__nv_rcbrt" => D1(rcbrt),
    "__nv_exp" => D1(f64::exp),
    "__nv_exp2" => D1(f64::exp2),
    "__nv_exp10" => D1(exp10),
    "__nv_expm1" => D1(f64::exp_m1),
    "__nv_log" => D1(f64::ln),
    "__nv_log2" => D1(f64::log2),
    "__nv_log10" => D1(f64::log10),
    "__nv_log1p" => D1(f64::ln_1p),
    "__nv_logb" => D1(logb),
    "__nv_pow" => D2(f64::powf),
    "__nv_sin" => D1(f64::sin),
    "__nv_cos" => D1(f64::cos),
    "__nv_tan" => D1(f64::tan),
    "__nv_sinpi" => D1(sinpi),
    "__nv_cospi" => D1(cospi),
    "__nv_asin" => D1(f64::asin),
    "__nv_acos" => D1(f64::acos),
    "__nv_atan" => D1(f64::atan),
    "__nv_atan2" => D2(f64::atan2),
    "__nv_sinh" => D1(f64::sinh),
    "__nv_cosh" => D1(f64::cosh),
    "__nv_tanh" => D1(f64::tanh),
    "__nv_asinh" => D1(f64::asinh),
    "__nv_acosh" => D1(f64::acosh),
    "__nv_atanh" => D1(f64::atanh),
    "__nv_erf" => D1(erf),
    "__nv_erfc" => D1(erfc),
    "__nv_tgamma" => D1(tgamma),
    "__nv_lgamma" => D1(lgamma),
    "__nv_normcdf" => D1(normcdf),
    "__nv_j0" => D1(j0),
    "__nv_j1" => D1(j1),
    "__nv_y0" => D1(y0),
    "__nv_y1" => D1(y1),
    "__nv_fabs" => D1(f64::abs),
    "__nv_floor" => D1(f64::floor),
    "__nv_ceil" => D1(f64::ceil),
    "__nv_trunc" => D1(f64::trunc),
    "__nv_round" => D1(f64::round),
    "__nv_rint" => D1(f64::round_ties_even),
    "__nv_nearbyint" => D1(nearbyint),
    "__nv_fmod" => D2(fmod),
    "__nv_remainder" => D2(remainder),
    "__nv_hypot" => D2(f64::hypot),
    "__nv_fmin" => D2(f64::min),
    "__nv_fmax" => D2(f64::max),
    "__nv_fdim" => D2(fdim),
    "__nv_copysign" => D2(f64::copysign),
    "__nv_nextafter" => D2(nextafter),
    "__nv_fma" => D3(f64::mul_add),
    "__nv_fma_rn" => D3(f64::mul_add),
    "__nv_isnand" => DI(|x| x.is_nan() as i32),
    "__nv_isinfd" => DI(|x| x.is_infinite() as i32),
    "__nv_isfinited" => DI(|x| x.is_finite() as i32),
    "__nv_signbitd" => DI(|x| x.is_sign_negative() as i32),
    "__nv_ilogb" => DI(ilogb),
    "__nv_ldexp" => DDI(ldexp),
    "__nv_scalbn" => DDI(ldexp),
    "__nv_powi" => DDI(powi),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, args: &[f64]) -> f64 {
        let func = NV_FUNCS[lookup(name).unwrap_or_else(|| panic!("{name}")) as usize];
        let bits: Vec<u64> = func
            .params()
            .iter()
            .zip(args.iter().chain([0.0, 0.0].iter()))
            .map(|(t, &v)| match t {
                ScalarType::F32 => (v as f32).to_bits() as u64,
                ScalarType::S32 => v as i32 as u32 as u64,
                _ => v.to_bits(),
            })
            .chain([0, 0])
            .collect();
        let r = func.eval(bits[0], bits[1], bits[2]);
        match func.ret() {
            ScalarType::F32 => f32::from_bits(r as u32) as f64,
            ScalarType::S32 => r as i64 as f64,
            _ => f64::from_bits(r),
        }
    }

    #[test]
    fn names_are_unique_and_signatures_consistent() {
        for (i, a) in NV_FUNCS.iter().enumerate() {
            assert!(a.name.starts_with("__nv_"), "{}", a.name);
            assert_eq!(lookup(a.name), Some(i as u16), "duplicate {}", a.name);
            // `__nv_Xf` is the single-precision twin of `__nv_X`.
            if let Some(d) = a.name.strip_suffix('f').and_then(lookup) {
                let d = &NV_FUNCS[d as usize];
                assert_eq!(a.params()[0], ScalarType::F32, "{}", a.name);
                assert_eq!(d.params()[0], ScalarType::F64, "{}", d.name);
                assert_eq!(a.params().len(), d.params().len(), "{}", a.name);
            }
        }
        assert!(lookup("__nv_nosuch").is_none());
    }

    #[test]
    fn known_values() {
        let e = std::f64::consts::E;
        assert_eq!(f("__nv_exp", &[1.0]), e);
        assert_eq!(f("__nv_log", &[e]), 1.0);
        assert_eq!(f("__nv_pow", &[2.0, 10.0]), 1024.0);
        assert!(f("__nv_pow", &[-8.0, 1.0 / 3.0]).is_nan());
        assert_eq!(f("__nv_sin", &[0.0]), 0.0);
        assert_eq!(f("__nv_cos", &[0.0]), 1.0);
        assert_eq!(f("__nv_sqrtf", &[2.0]), (2.0f32).sqrt() as f64);
        assert_eq!(f("__nv_expf", &[0.0]), 1.0);
        assert_eq!(f("__nv_logf", &[1.0]), 0.0);
        assert_eq!(f("__nv_powf", &[3.0, 4.0]), 81.0);
        assert_eq!(f("__nv_fmodf", &[7.5, 2.0]), 1.5);
        assert_eq!(f("__nv_fmod", &[-7.5, 2.0]), -1.5);
        assert_eq!(f("__nv_exp2f", &[10.0]), 1024.0);
        assert_eq!(f("__nv_log2f", &[1024.0]), 10.0);
        assert_eq!(f("__nv_log10f", &[1000.0]), 3.0);
        assert_eq!(f("__nv_cbrtf", &[27.0]), 3.0);
        assert_eq!(f("__nv_erff", &[0.0]), 0.0);
        assert!((f("__nv_erf", &[1.0]) - 0.8427007929497149).abs() < 1e-16);
        assert_eq!(f("__nv_tgamma", &[5.0]), 24.0);
        assert_eq!(
            f("__nv_atan2f", &[1.0, 1.0]),
            std::f32::consts::FRAC_PI_4 as f64
        );
        assert_eq!(f("__nv_tanhf", &[0.0]), 0.0);
        assert_eq!(f("__nv_sinpi", &[1.0]), 0.0);
        assert_eq!(f("__nv_sinpi", &[0.5]), 1.0);
        assert_eq!(f("__nv_cospi", &[1.0]), -1.0);
        assert_eq!(f("__nv_cospif", &[0.5]), 0.0);
        assert_eq!(f("__nv_ldexpf", &[1.5, 4.0]), 24.0);
        assert_eq!(f("__nv_ilogb", &[1024.0]), 10.0);
        assert_eq!(f("__nv_powi", &[2.0, -2.0]), 0.25);
        assert_eq!(f("__nv_rintf", &[2.5]), 2.0);
        assert_eq!(f("__nv_roundf", &[2.5]), 3.0);
        assert_eq!(f("__nv_fma", &[2.0, 3.0, 1.0]), 7.0);
        assert_eq!(f("__nv_saturatef", &[f64::NAN]), 0.0);
    }

    #[test]
    fn nan_and_infinity() {
        let inf = f64::INFINITY;
        assert_eq!(f("__nv_exp", &[inf]), inf);
        assert_eq!(f("__nv_exp", &[-inf]), 0.0);
        assert_eq!(f("__nv_expf", &[100.0]), inf);
        assert_eq!(f("__nv_log", &[0.0]), -inf);
        assert!(f("__nv_log", &[-1.0]).is_nan());
        assert!(f("__nv_logf", &[f64::NAN]).is_nan());
        assert!(f("__nv_sin", &[inf]).is_nan());
        assert!(f("__nv_cosf", &[-inf]).is_nan());
        assert_eq!(f("__nv_pow", &[f64::NAN, 0.0]), 1.0);
        assert_eq!(f("__nv_pow", &[0.0, -1.0]), inf);
        assert_eq!(f("__nv_powf", &[1.0, f64::NAN]), 1.0);
        assert_eq!(f("__nv_tanhf", &[inf]), 1.0);
        assert_eq!(f("__nv_atan2", &[0.0, -1.0]), std::f64::consts::PI);
        assert!(f("__nv_fmod", &[inf, 1.0]).is_nan());
        assert_eq!(f("__nv_isnanf", &[f64::NAN]), 1.0);
        assert_eq!(f("__nv_isinfd", &[-inf]), 1.0);
        assert_eq!(f("__nv_finitef", &[inf]), 0.0);
        assert_eq!(f("__nv_signbitd", &[-0.0]), 1.0);
        assert_eq!(f("__nv_fmin", &[f64::NAN, 2.0]), 2.0);
        assert_eq!(f("__nv_erfc", &[inf]), 0.0);
        assert_eq!(f("__nv_sqrt", &[-0.0]).to_bits(), (-0.0f64).to_bits());
        assert!(f("__nv_sqrtf", &[-1.0]).is_nan());
    }

    /// Against the Rust reference over a sweep of arguments: the table calls what it says.
    #[test]
    fn matches_the_rust_reference() {
        type Reference = (&'static str, fn(f64) -> f64);
        let pairs: [Reference; 5] = [
            ("__nv_exp", f64::exp),
            ("__nv_log", f64::ln),
            ("__nv_sin", f64::sin),
            ("__nv_cos", f64::cos),
            ("__nv_tanh", f64::tanh),
        ];
        for (name, r) in pairs {
            for k in 1..200 {
                let x = k as f64 * 0.173 - 3.0;
                let want = r(x);
                let got = f(name, &[x]);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{name}({x})"
                );
            }
        }
        for k in 1..200 {
            let x = k as f32 * 0.173;
            let got = f("__nv_powf", &[x as f64, 1.7]);
            assert_eq!(got, x.powf(1.7) as f64);
            let got = f("__nv_pow", &[x as f64, -2.3]);
            assert_eq!(got, (x as f64).powf(-2.3));
        }
    }
}
