/* warpforge: the device side of cuda_runtime.h (built-in variables, synchronisation,
 * atomics, warp vote/shuffle, math). Everything maps to NVPTX builtins whose PTX the
 * warpforge front end runs; the PTX has no `call`, so every helper is force-inlined. */
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
/* Double-precision transcendentals need libdevice (__nv_exp...), which warpforge does not
 * provide: a device call to one of these is a compile error ("call to deleted function")
 * rather than a silent fall back to the float version. */
__device__ double exp(double) = delete;
__device__ double exp2(double) = delete;
__device__ double log(double) = delete;
__device__ double log2(double) = delete;
__device__ double log10(double) = delete;
__device__ double pow(double, double) = delete;
__device__ double sin(double) = delete;
__device__ double cos(double) = delete;
__device__ double tan(double) = delete;
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
