/* warpforge: the device side of cuda_runtime.h (built-in variables, synchronisation,
 * atomics, warp vote/shuffle, math, textures). Everything maps to NVPTX builtins whose PTX
 * the warpforge front end runs, or to the functions it provides natively (vprintf and
 * libdevice's __nv_* math); every helper is force-inlined. */
#ifndef __WARPFORGE_DEVICE_H__
#define __WARPFORGE_DEVICE_H__

#define __WF_DEV static __device__ __forceinline__
#define __WF_DEV_HD static __host__ __device__ __forceinline__

/* ---- threadIdx, blockIdx, blockDim, gridDim, warpSize ---- */
#define __WF_BUILTIN_FIELD(FIELD, INTRINSIC)                                                  \
  __declspec(property(get = __fetch_builtin_##FIELD)) unsigned int FIELD;                    \
  static __device__ __forceinline__ unsigned int __fetch_builtin_##FIELD(void) { return INTRINSIC; }
#define __WF_BUILTIN_STRUCT(NAME, SREG)                                                       \
  struct __cuda_builtin_##NAME##_t {                                                          \
    __WF_BUILTIN_FIELD(x, __nvvm_read_ptx_sreg_##SREG##_x())                                  \
    __WF_BUILTIN_FIELD(y, __nvvm_read_ptx_sreg_##SREG##_y())                                  \
    __WF_BUILTIN_FIELD(z, __nvvm_read_ptx_sreg_##SREG##_z())                                  \
    __device__ operator dim3() const { return dim3(x, y, z); }                                \
    __device__ operator uint3() const { return make_uint3(x, y, z); }                         \
  };                                                                                          \
  extern const __device__ __cuda_builtin_##NAME##_t NAME;
__WF_BUILTIN_STRUCT(threadIdx, tid)
__WF_BUILTIN_STRUCT(blockIdx, ctaid)
__WF_BUILTIN_STRUCT(blockDim, ntid)
__WF_BUILTIN_STRUCT(gridDim, nctaid)
static constexpr int warpSize = 32;

/* ---- synchronisation ---- */
/* __syncthreads() is a clang builtin. */
__WF_DEV int __syncthreads_count(int p) { return __nvvm_bar0_popc(p); }
__WF_DEV int __syncthreads_and(int p) { return __nvvm_bar0_and(p); }
__WF_DEV int __syncthreads_or(int p) { return __nvvm_bar0_or(p); }
__WF_DEV void __threadfence(void) { __nvvm_membar_gl(); }
__WF_DEV void __threadfence_block(void) { __nvvm_membar_cta(); }
__WF_DEV void __threadfence_system(void) { __nvvm_membar_sys(); }
__WF_DEV void __syncwarp(unsigned mask = 0xffffffffu) { (void)mask; }

/* ---- atomics ---- */
__WF_DEV int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__WF_DEV unsigned atomicAdd(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v); }
__WF_DEV unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { return (unsigned long long)__nvvm_atom_add_gen_ll((long long *)p, (long long)v); }
__WF_DEV float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
__WF_DEV int atomicSub(int *p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
__WF_DEV unsigned atomicSub(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_add_gen_i((int *)p, -(int)v); }
__WF_DEV int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
__WF_DEV unsigned atomicExch(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_xchg_gen_i((int *)p, (int)v); }
__WF_DEV float atomicExch(float *p, float v) { return __builtin_bit_cast(float, __nvvm_atom_xchg_gen_i((int *)p, __builtin_bit_cast(int, v))); }
__WF_DEV int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }
__WF_DEV unsigned atomicMin(unsigned *p, unsigned v) { return __nvvm_atom_min_gen_ui(p, v); }
__WF_DEV int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
__WF_DEV unsigned atomicMax(unsigned *p, unsigned v) { return __nvvm_atom_max_gen_ui(p, v); }
__WF_DEV int atomicCAS(int *p, int c, int v) { return __nvvm_atom_cas_gen_i(p, c, v); }
__WF_DEV unsigned atomicCAS(unsigned *p, unsigned c, unsigned v) { return (unsigned)__nvvm_atom_cas_gen_i((int *)p, (int)c, (int)v); }
__WF_DEV unsigned long long atomicCAS(unsigned long long *p, unsigned long long c, unsigned long long v) { return (unsigned long long)__nvvm_atom_cas_gen_ll((long long *)p, (long long)c, (long long)v); }
__WF_DEV int atomicAnd(int *p, int v) { return __nvvm_atom_and_gen_i(p, v); }
__WF_DEV unsigned atomicAnd(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_and_gen_i((int *)p, (int)v); }
__WF_DEV int atomicOr(int *p, int v) { return __nvvm_atom_or_gen_i(p, v); }
__WF_DEV unsigned atomicOr(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_or_gen_i((int *)p, (int)v); }
__WF_DEV int atomicXor(int *p, int v) { return __nvvm_atom_xor_gen_i(p, v); }
__WF_DEV unsigned atomicXor(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_xor_gen_i((int *)p, (int)v); }
__WF_DEV unsigned atomicInc(unsigned *p, unsigned v) { return __nvvm_atom_inc_gen_ui(p, v); }
__WF_DEV unsigned atomicDec(unsigned *p, unsigned v) { return __nvvm_atom_dec_gen_ui(p, v); }

/* ---- warp vote and shuffle (need -Xclang -target-feature -Xclang +ptx64) ---- */
#define __WF_FULL 0xffffffffu
__WF_DEV unsigned __ballot_sync(unsigned m, int p) { return __nvvm_vote_ballot_sync(m, p); }
__WF_DEV int __any_sync(unsigned m, int p) { return __nvvm_vote_any_sync(m, p); }
__WF_DEV int __all_sync(unsigned m, int p) { return __nvvm_vote_all_sync(m, p); }
__WF_DEV unsigned __ballot(int p) { return __nvvm_vote_ballot_sync(__WF_FULL, p); }
__WF_DEV int __any(int p) { return __nvvm_vote_any_sync(__WF_FULL, p); }
__WF_DEV int __all(int p) { return __nvvm_vote_all_sync(__WF_FULL, p); }
__WF_DEV unsigned __activemask(void) { return __nvvm_vote_ballot_sync(__WF_FULL, 1); }
__WF_DEV int __shfl_sync(unsigned m, int v, int l, int w = 32) { return __nvvm_shfl_sync_idx_i32(m, v, l, ((32 - w) << 8) | 0x1f); }
__WF_DEV float __shfl_sync(unsigned m, float v, int l, int w = 32) { return __nvvm_shfl_sync_idx_f32(m, v, l, ((32 - w) << 8) | 0x1f); }
__WF_DEV int __shfl_up_sync(unsigned m, int v, unsigned d, int w = 32) { return __nvvm_shfl_sync_up_i32(m, v, d, (32 - w) << 8); }
__WF_DEV float __shfl_up_sync(unsigned m, float v, unsigned d, int w = 32) { return __nvvm_shfl_sync_up_f32(m, v, d, (32 - w) << 8); }
__WF_DEV int __shfl_down_sync(unsigned m, int v, unsigned d, int w = 32) { return __nvvm_shfl_sync_down_i32(m, v, d, ((32 - w) << 8) | 0x1f); }
__WF_DEV float __shfl_down_sync(unsigned m, float v, unsigned d, int w = 32) { return __nvvm_shfl_sync_down_f32(m, v, d, ((32 - w) << 8) | 0x1f); }
__WF_DEV int __shfl_xor_sync(unsigned m, int v, int l, int w = 32) { return __nvvm_shfl_sync_bfly_i32(m, v, l, ((32 - w) << 8) | 0x1f); }
__WF_DEV float __shfl_xor_sync(unsigned m, float v, int l, int w = 32) { return __nvvm_shfl_sync_bfly_f32(m, v, l, ((32 - w) << 8) | 0x1f); }
#define __shfl(v, l, ...) __shfl_sync(__WF_FULL, v, l, ##__VA_ARGS__)
#define __shfl_up(v, d, ...) __shfl_up_sync(__WF_FULL, v, d, ##__VA_ARGS__)
#define __shfl_down(v, d, ...) __shfl_down_sync(__WF_FULL, v, d, ##__VA_ARGS__)
#define __shfl_xor(v, l, ...) __shfl_xor_sync(__WF_FULL, v, l, ##__VA_ARGS__)

/* ---- integer and bit intrinsics ---- */
__WF_DEV int __popc(unsigned x) { return __builtin_popcount(x); }
__WF_DEV int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__WF_DEV int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
__WF_DEV int __ffs(int x) { return __builtin_ffs(x); }
__WF_DEV unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
__WF_DEV int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
__WF_DEV unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
__WF_DEV int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
__WF_DEV unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
__WF_DEV float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__WF_DEV int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
__WF_DEV float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
__WF_DEV unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
__WF_DEV long long clock64(void) { return __nvvm_read_ptx_sreg_clock64(); }
__WF_DEV int clock(void) { return __nvvm_read_ptx_sreg_clock(); }

/* ---- math: the device overloads of <math.h> the PTX special functions cover ----
 * sqrt/div are IEEE (sqrt.rn, div.rn); exp/log/sin/cos use the hardware approximations
 * (ex2/lg2/sin/cos.approx), as nvcc's -use_fast_math does. */
#define __WF_LOG2E_F 1.4426950408889634f
#define __WF_LN2_F 0.6931471805599453f
__WF_DEV float sqrtf(float x) { return __builtin_sqrtf(x); }
__WF_DEV double sqrt(double x) { return __builtin_sqrt(x); }
__WF_DEV float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
__WF_DEV float fabsf(float x) { return __builtin_fabsf(x); }
__WF_DEV double fabs(double x) { return __builtin_fabs(x); }
__WF_DEV float floorf(float x) { return __builtin_floorf(x); }
__WF_DEV double floor(double x) { return __builtin_floor(x); }
__WF_DEV float ceilf(float x) { return __builtin_ceilf(x); }
__WF_DEV double ceil(double x) { return __builtin_ceil(x); }
__WF_DEV float truncf(float x) { return __builtin_truncf(x); }
__WF_DEV float roundf(float x) { return __builtin_roundf(x); }
__WF_DEV float rintf(float x) { return __builtin_rintf(x); }
__WF_DEV float fminf(float a, float b) { return __builtin_fminf(a, b); }
__WF_DEV float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
__WF_DEV double fmin(double a, double b) { return __builtin_fmin(a, b); }
__WF_DEV double fmax(double a, double b) { return __builtin_fmax(a, b); }
__WF_DEV float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__WF_DEV double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
__WF_DEV float copysignf(float a, float b) { return __builtin_copysignf(a, b); }
__WF_DEV float exp2f(float x) { return __nvvm_ex2_approx_f(x); }
__WF_DEV float expf(float x) { return __nvvm_ex2_approx_f(x * __WF_LOG2E_F); }
__WF_DEV float __expf(float x) { return __nvvm_ex2_approx_f(x * __WF_LOG2E_F); }
__WF_DEV float log2f(float x) { return __nvvm_lg2_approx_f(x); }
__WF_DEV float __log2f(float x) { return __nvvm_lg2_approx_f(x); }
__WF_DEV float __log10f(float x) { return __nvvm_lg2_approx_f(x) * 0.30102999566398120f; }
__WF_DEV float __exp10f(float x) { return __nvvm_ex2_approx_f(x * 3.3219280948873623f); }
__WF_DEV float exp10f(float x) { return __nvvm_ex2_approx_f(x * 3.3219280948873623f); }
__WF_DEV float __fsqrt_rn(float x) { return __builtin_sqrtf(x); }
__WF_DEV float __fadd_rn(float a, float b) { return a + b; }
__WF_DEV float __fsub_rn(float a, float b) { return a - b; }
__WF_DEV float __fmul_rn(float a, float b) { return a * b; }
__WF_DEV float __fdiv_rn(float a, float b) { return a / b; }
__WF_DEV float __fmaf_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__WF_DEV float __int2float_rn(int x) { return (float)x; }
__WF_DEV int __float2int_rz(float x) { return (int)x; }
__WF_DEV float logf(float x) { return __nvvm_lg2_approx_f(x) * __WF_LN2_F; }
__WF_DEV float __logf(float x) { return __nvvm_lg2_approx_f(x) * __WF_LN2_F; }
__WF_DEV float log10f(float x) { return __nvvm_lg2_approx_f(x) * 0.30102999566398120f; }
__WF_DEV float powf(float a, float b) { return __nvvm_ex2_approx_f(b * __nvvm_lg2_approx_f(a)); }
__WF_DEV float __powf(float a, float b) { return __nvvm_ex2_approx_f(b * __nvvm_lg2_approx_f(a)); }
__WF_DEV float sinf(float x) { return __nvvm_sin_approx_f(x); }
__WF_DEV float cosf(float x) { return __nvvm_cos_approx_f(x); }
__WF_DEV float __sinf(float x) { return __nvvm_sin_approx_f(x); }
__WF_DEV float __cosf(float x) { return __nvvm_cos_approx_f(x); }
__WF_DEV float tanf(float x) { return __nvvm_sin_approx_f(x) / __nvvm_cos_approx_f(x); }
__WF_DEV float __fdividef(float a, float b) { return a / b; }
__WF_DEV float __frcp_rn(float x) { return 1.0f / x; }
__WF_DEV float __saturatef(float x) { return __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f); }
#ifdef __cplusplus
/* float overloads of <cmath> (std::exp(float) etc. would call expf, which PTX lacks). */
__WF_DEV float exp(float x) { return expf(x); }
__WF_DEV float exp2(float x) { return exp2f(x); }
__WF_DEV float log(float x) { return logf(x); }
__WF_DEV float log2(float x) { return log2f(x); }
__WF_DEV float log10(float x) { return log10f(x); }
__WF_DEV float pow(float a, float b) { return powf(a, b); }
__WF_DEV float sin(float x) { return sinf(x); }
__WF_DEV float cos(float x) { return cosf(x); }
__WF_DEV float tan(float x) { return tanf(x); }
__WF_DEV float sqrt(float x) { return sqrtf(x); }
__WF_DEV float fabs(float x) { return fabsf(x); }
__WF_DEV float floor(float x) { return floorf(x); }
__WF_DEV float ceil(float x) { return ceilf(x); }
__WF_DEV float fmin(float a, float b) { return fminf(a, b); }
__WF_DEV float fmax(float a, float b) { return fmaxf(a, b); }
__WF_DEV float abs(float x) { return fabsf(x); }
__WF_DEV double abs(double x) { return __builtin_fabs(x); }
__WF_DEV double trunc(double x) { return __builtin_trunc(x); }
__WF_DEV double round(double x) { return __builtin_round(x); }
__WF_DEV double copysign(double a, double b) { return __builtin_copysign(a, b); }
/* Double precision, and the float functions no PTX instruction covers: libdevice's
 * __nv_* functions, which the warpforge front end runs natively (golden-model
 * src/exec/libdevice.rs; results are the host libm's, within CUDA's stated ulp bounds). */
extern "C" {
__device__ double __nv_exp(double);
__device__ double __nv_exp2(double);
__device__ double __nv_exp10(double);
__device__ double __nv_expm1(double);
__device__ double __nv_log(double);
__device__ double __nv_log2(double);
__device__ double __nv_log10(double);
__device__ double __nv_log1p(double);
__device__ double __nv_sin(double);
__device__ double __nv_cos(double);
__device__ double __nv_tan(double);
__device__ double __nv_asin(double);
__device__ double __nv_acos(double);
__device__ double __nv_atan(double);
__device__ double __nv_sinh(double);
__device__ double __nv_cosh(double);
__device__ double __nv_tanh(double);
__device__ double __nv_asinh(double);
__device__ double __nv_acosh(double);
__device__ double __nv_atanh(double);
__device__ double __nv_cbrt(double);
__device__ double __nv_erf(double);
__device__ double __nv_erfc(double);
__device__ double __nv_tgamma(double);
__device__ double __nv_lgamma(double);
__device__ double __nv_rsqrt(double);
__device__ double __nv_pow(double, double);
__device__ double __nv_atan2(double, double);
__device__ double __nv_fmod(double, double);
__device__ double __nv_hypot(double, double);
__device__ double __nv_remainder(double, double);
__device__ float __nv_tanhf(float);
__device__ float __nv_asinf(float);
__device__ float __nv_acosf(float);
__device__ float __nv_atanf(float);
__device__ float __nv_sinhf(float);
__device__ float __nv_coshf(float);
__device__ float __nv_asinhf(float);
__device__ float __nv_acoshf(float);
__device__ float __nv_atanhf(float);
__device__ float __nv_cbrtf(float);
__device__ float __nv_erff(float);
__device__ float __nv_erfcf(float);
__device__ float __nv_tgammaf(float);
__device__ float __nv_lgammaf(float);
__device__ float __nv_expm1f(float);
__device__ float __nv_log1pf(float);
__device__ float __nv_atan2f(float, float);
__device__ float __nv_fmodf(float, float);
__device__ float __nv_hypotf(float, float);
__device__ float __nv_remainderf(float, float);
}
__WF_DEV double exp(double x) { return __nv_exp(x); }
__WF_DEV double exp2(double x) { return __nv_exp2(x); }
__WF_DEV double exp10(double x) { return __nv_exp10(x); }
__WF_DEV double expm1(double x) { return __nv_expm1(x); }
__WF_DEV double log(double x) { return __nv_log(x); }
__WF_DEV double log2(double x) { return __nv_log2(x); }
__WF_DEV double log10(double x) { return __nv_log10(x); }
__WF_DEV double log1p(double x) { return __nv_log1p(x); }
__WF_DEV double sin(double x) { return __nv_sin(x); }
__WF_DEV double cos(double x) { return __nv_cos(x); }
__WF_DEV double tan(double x) { return __nv_tan(x); }
__WF_DEV double asin(double x) { return __nv_asin(x); }
__WF_DEV double acos(double x) { return __nv_acos(x); }
__WF_DEV double atan(double x) { return __nv_atan(x); }
__WF_DEV double sinh(double x) { return __nv_sinh(x); }
__WF_DEV double cosh(double x) { return __nv_cosh(x); }
__WF_DEV double tanh(double x) { return __nv_tanh(x); }
__WF_DEV double asinh(double x) { return __nv_asinh(x); }
__WF_DEV double acosh(double x) { return __nv_acosh(x); }
__WF_DEV double atanh(double x) { return __nv_atanh(x); }
__WF_DEV double cbrt(double x) { return __nv_cbrt(x); }
__WF_DEV double erf(double x) { return __nv_erf(x); }
__WF_DEV double erfc(double x) { return __nv_erfc(x); }
__WF_DEV double tgamma(double x) { return __nv_tgamma(x); }
__WF_DEV double lgamma(double x) { return __nv_lgamma(x); }
__WF_DEV double rsqrt(double x) { return __nv_rsqrt(x); }
__WF_DEV double pow(double a, double b) { return __nv_pow(a, b); }
__WF_DEV double atan2(double a, double b) { return __nv_atan2(a, b); }
__WF_DEV double fmod(double a, double b) { return __nv_fmod(a, b); }
__WF_DEV double hypot(double a, double b) { return __nv_hypot(a, b); }
__WF_DEV double remainder(double a, double b) { return __nv_remainder(a, b); }
__WF_DEV float tanhf(float x) { return __nv_tanhf(x); }
__WF_DEV float tanh(float x) { return __nv_tanhf(x); }
__WF_DEV float asinf(float x) { return __nv_asinf(x); }
__WF_DEV float asin(float x) { return __nv_asinf(x); }
__WF_DEV float acosf(float x) { return __nv_acosf(x); }
__WF_DEV float acos(float x) { return __nv_acosf(x); }
__WF_DEV float atanf(float x) { return __nv_atanf(x); }
__WF_DEV float atan(float x) { return __nv_atanf(x); }
__WF_DEV float sinhf(float x) { return __nv_sinhf(x); }
__WF_DEV float sinh(float x) { return __nv_sinhf(x); }
__WF_DEV float coshf(float x) { return __nv_coshf(x); }
__WF_DEV float cosh(float x) { return __nv_coshf(x); }
__WF_DEV float asinhf(float x) { return __nv_asinhf(x); }
__WF_DEV float asinh(float x) { return __nv_asinhf(x); }
__WF_DEV float acoshf(float x) { return __nv_acoshf(x); }
__WF_DEV float acosh(float x) { return __nv_acoshf(x); }
__WF_DEV float atanhf(float x) { return __nv_atanhf(x); }
__WF_DEV float atanh(float x) { return __nv_atanhf(x); }
__WF_DEV float cbrtf(float x) { return __nv_cbrtf(x); }
__WF_DEV float cbrt(float x) { return __nv_cbrtf(x); }
__WF_DEV float erff(float x) { return __nv_erff(x); }
__WF_DEV float erf(float x) { return __nv_erff(x); }
__WF_DEV float erfcf(float x) { return __nv_erfcf(x); }
__WF_DEV float erfc(float x) { return __nv_erfcf(x); }
__WF_DEV float tgammaf(float x) { return __nv_tgammaf(x); }
__WF_DEV float tgamma(float x) { return __nv_tgammaf(x); }
__WF_DEV float lgammaf(float x) { return __nv_lgammaf(x); }
__WF_DEV float lgamma(float x) { return __nv_lgammaf(x); }
__WF_DEV float expm1f(float x) { return __nv_expm1f(x); }
__WF_DEV float expm1(float x) { return __nv_expm1f(x); }
__WF_DEV float log1pf(float x) { return __nv_log1pf(x); }
__WF_DEV float log1p(float x) { return __nv_log1pf(x); }
__WF_DEV float atan2f(float a, float b) { return __nv_atan2f(a, b); }
__WF_DEV float atan2(float a, float b) { return __nv_atan2f(a, b); }
__WF_DEV float fmodf(float a, float b) { return __nv_fmodf(a, b); }
__WF_DEV float fmod(float a, float b) { return __nv_fmodf(a, b); }
__WF_DEV float hypotf(float a, float b) { return __nv_hypotf(a, b); }
__WF_DEV float hypot(float a, float b) { return __nv_hypotf(a, b); }
__WF_DEV float remainderf(float a, float b) { return __nv_remainderf(a, b); }
__WF_DEV float remainder(float a, float b) { return __nv_remainderf(a, b); }
#endif
#ifdef __cplusplus
/* ---- tex1Dfetch on texture references bound to linear memory (tex.1d.v4.T.s32) ----
 * A texture<> value converts to the texref's handle in inline asm (as clang's own texture
 * header does); the model fetches element x of the bound memory, 0 out of range. */
template <class __H> static __device__ __forceinline__ unsigned long long __wf_tex_handle(__H __t) {
  unsigned long long __h;
  asm("mov.b64 %0, %1;" : "=l"(__h) : "l"(__t));
  return __h;
}
__WF_DEV float4 __wf_tex1d_f(unsigned long long __h, int __x) {
  float4 __r;
  asm("tex.1d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5}];" : "=f"(__r.x), "=f"(__r.y), "=f"(__r.z), "=f"(__r.w) : "l"(__h), "r"(__x));
  return __r;
}
__WF_DEV int4 __wf_tex1d_s(unsigned long long __h, int __x) {
  int4 __r;
  asm("tex.1d.v4.s32.s32 {%0, %1, %2, %3}, [%4, {%5}];" : "=r"(__r.x), "=r"(__r.y), "=r"(__r.z), "=r"(__r.w) : "l"(__h), "r"(__x));
  return __r;
}
__WF_DEV uint4 __wf_tex1d_u(unsigned long long __h, int __x) {
  uint4 __r;
  asm("tex.1d.v4.u32.s32 {%0, %1, %2, %3}, [%4, {%5}];" : "=r"(__r.x), "=r"(__r.y), "=r"(__r.z), "=r"(__r.w) : "l"(__h), "r"(__x));
  return __r;
}
#define __WF_TEX1D(T, KIND, RET, MODE, ...)                                                     \
  static __device__ __forceinline__ RET tex1Dfetch(texture<T, cudaTextureType1D, MODE> __t, int __x) { \
    auto __v = __wf_tex1d_##KIND(__wf_tex_handle(__t), __x);                                   \
    RET __r = {__VA_ARGS__};                                                                   \
    return __r;                                                                                \
  }
#define __WF_TEX1D_E(T, KIND, ...) __WF_TEX1D(T, KIND, T, cudaReadModeElementType, __VA_ARGS__)
__WF_TEX1D_E(float, f, __v.x)
__WF_TEX1D_E(float1, f, __v.x)
__WF_TEX1D_E(float2, f, __v.x, __v.y)
__WF_TEX1D_E(float4, f, __v.x, __v.y, __v.z, __v.w)
__WF_TEX1D_E(int, s, __v.x)
__WF_TEX1D_E(int1, s, __v.x)
__WF_TEX1D_E(int2, s, __v.x, __v.y)
__WF_TEX1D_E(int4, s, __v.x, __v.y, __v.z, __v.w)
__WF_TEX1D_E(unsigned int, u, __v.x)
__WF_TEX1D_E(uint1, u, __v.x)
__WF_TEX1D_E(uint2, u, __v.x, __v.y)
__WF_TEX1D_E(uint4, u, __v.x, __v.y, __v.z, __v.w)
__WF_TEX1D_E(char, s, (char)__v.x)
__WF_TEX1D_E(signed char, s, (signed char)__v.x)
__WF_TEX1D_E(unsigned char, u, (unsigned char)__v.x)
__WF_TEX1D_E(uchar4, u, (unsigned char)__v.x, (unsigned char)__v.y, (unsigned char)__v.z, (unsigned char)__v.w)
__WF_TEX1D_E(short, s, (short)__v.x)
__WF_TEX1D_E(unsigned short, u, (unsigned short)__v.x)
/* cudaReadModeNormalizedFloat: 8- and 16-bit integers read as floats in [0, 1] or [-1, 1]. */
__WF_TEX1D(unsigned char, f, float, cudaReadModeNormalizedFloat, __v.x)
__WF_TEX1D(signed char, f, float, cudaReadModeNormalizedFloat, __v.x)
__WF_TEX1D(char, f, float, cudaReadModeNormalizedFloat, __v.x)
__WF_TEX1D(unsigned short, f, float, cudaReadModeNormalizedFloat, __v.x)
__WF_TEX1D(short, f, float, cudaReadModeNormalizedFloat, __v.x)
__WF_TEX1D(uchar4, f, float4, cudaReadModeNormalizedFloat, __v.x, __v.y, __v.z, __v.w)
#undef __WF_TEX1D_E
#undef __WF_TEX1D
#endif

__WF_DEV int abs(int x) { return x < 0 ? -x : x; }
__WF_DEV int min(int a, int b) { return a < b ? a : b; }
__WF_DEV int max(int a, int b) { return a > b ? a : b; }
__WF_DEV unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__WF_DEV unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__WF_DEV float min(float a, float b) { return __builtin_fminf(a, b); }
__WF_DEV float max(float a, float b) { return __builtin_fmaxf(a, b); }
__WF_DEV float fdividef(float a, float b) { return a / b; }

#endif /* __WARPFORGE_DEVICE_H__ */
