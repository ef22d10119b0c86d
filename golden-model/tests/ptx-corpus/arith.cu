#include "common.h"
__global__ void float_math(float *out, const float *in) {
  int i = GTID;
  float x = in[i];
  float y = __builtin_sqrtf(x) + __builtin_fminf(x, 2.0f) + __builtin_fmaxf(x, -1.0f);
  y = y * x + 3.0f;
  y = y / (x + 1.0f);
  y += __builtin_fabsf(x - 5.0f);
  y += __nvvm_cos_approx_ftz_f(x) + __nvvm_ex2_approx_ftz_f(x) + __nvvm_lg2_approx_ftz_f(x) + __nvvm_sqrt_rn_ftz_f(x);
  out[i] = y;
}
__global__ void float_ftz_approx(float *out, const float *in) {
  int i = GTID;
  float x = in[i];
  out[i] = __nvvm_rsqrt_approx_f(x) + (float)__nvvm_rcp_approx_ftz_d((double)x) + __nvvm_rcp_rn_f(x) + __nvvm_div_rn_f(x, 7.0f) + __nvvm_fma_rz_f(x, x, 1.0f) + __nvvm_div_approx_f(x, 3.0f) +
           __nvvm_sqrt_approx_f(x) + __nvvm_sin_approx_f(x) + __nvvm_lg2_approx_f(x) + __nvvm_ex2_approx_f(x);
}
__global__ void double_math(double *out, const double *in) {
  int i = GTID;
  double x = in[i];
  double y = __builtin_sqrt(x) * 3.0 + x / 7.0;
  y = __builtin_fma(x, y, 1.0);
  y = __builtin_fmin(y, 100.0) - __builtin_fmax(x, -3.5);
  y += __builtin_fabs(x);
  out[i] = y;
}
__global__ void int_div(int *out, const int *in, unsigned *uout, const unsigned *uin) {
  int i = GTID;
  int a = in[i], b = in[i + 1];
  out[i] = a / b + a % b;
  unsigned ua = uin[i], ub = uin[i + 1];
  uout[i] = ua / ub + ua % ub;
}
__global__ void int64_math(long long *out, const long long *in, unsigned long long *uo) {
  int i = GTID;
  long long a = in[i], b = in[i + 1];
  out[i] = a * b + (a >> 3) - (b << 5) + a / b + a % b;
  unsigned long long ua = (unsigned long long)a;
  uo[i] = (ua >> 7) ^ (ua * 0x9E3779B97F4A7C15ull) | (ua / 3);
}
__global__ void minmax_abs(int *out, const int *in, unsigned *uo) {
  int i = GTID;
  int a = in[i], b = in[i + 1];
  out[i] = __builtin_abs(a) + (a < b ? a : b) + (a > b ? a : b);
  unsigned ua = (unsigned)a, ub = (unsigned)b;
  uo[i] = (ua < ub ? ua : ub) + (ua > ub ? ua : ub);
  long long la = a;
  out[i + 1] = (int)(__builtin_llabs(la * 3) >> 1);
}
__global__ void selp_test(int *out, const int *in, float *fo) {
  int i = GTID;
  int a = in[i];
  out[i] = (a > 5) ? 17 : -3;
  fo[i] = (a & 2) ? 1.0f : 2.5f;
}
__global__ void conversions(const int *in, char *c, short *s, long long *l, float *f, double *d,
                            unsigned char *uc, unsigned short *us, unsigned long long *ul) {
  int i = GTID;
  int x = in[i];
  c[i] = (char)x;
  s[i] = (short)x;
  l[i] = (long long)x;
  uc[i] = (unsigned char)x;
  us[i] = (unsigned short)x;
  ul[i] = (unsigned long long)(unsigned)x;
  float fx = (float)x;
  double dx = (double)x;
  f[i] = fx + (float)(unsigned)x + (float)l[i + 1] + (float)ul[i + 1] + (float)d[i + 1];
  d[i] = dx + (double)f[i + 1] + (double)(unsigned)x + (double)ul[i + 2] + (double)l[i + 2];
  l[i + 3] = (long long)f[i + 2] + (long long)d[i + 3];
  ul[i + 3] = (unsigned long long)f[i + 3] + (unsigned long long)d[i + 4];
  s[i + 1] = (short)f[i + 4];
  c[i + 1] = (char)d[i + 5];
  us[i + 1] = (unsigned short)c[i + 2] + (unsigned short)s[i + 2];
  uc[i + 1] = (unsigned char)(int)f[i + 5] + (unsigned char)(unsigned)d[i + 6];
  l[i + 4] = (long long)c[i + 3] + (long long)s[i + 3] + (long long)uc[i + 2] + (long long)us[i + 2];
}
__global__ void mul_wide_hi(long long *out, const int *in, unsigned *uo) {
  int i = GTID;
  int a = in[i], b = in[i + 1];
  out[i] = (long long)a * (long long)b;
  uo[i] = __nvvm_mulhi_ui((unsigned)a, (unsigned)b) + __nvvm_mulhi_i(a, b);
  uo[i + 1] = (unsigned)a * (unsigned)b + (unsigned)in[i + 2];
  out[i + 1] = (long long)__nvvm_mulhi_ll((long long)a, 77) + (long long)__nvvm_mulhi_ull(a, 99);
}
__device__ static inline unsigned bfe_u32(unsigned x, unsigned p, unsigned l) {
  unsigned r; asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(l)); return r;
}
__device__ static inline int bfe_s32(int x, unsigned p, unsigned l) {
  int r; asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(l)); return r;
}
__device__ static inline unsigned bfi_b32(unsigned a, unsigned b, unsigned p, unsigned l) {
  unsigned r; asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(p), "r"(l)); return r;
}
__global__ void bit_ops(unsigned *out, const unsigned *in, unsigned long long *lo) {
  int i = GTID;
  unsigned x = in[i];
  out[i] = __builtin_popcount(x) + __builtin_clz(x | 1) + __builtin_bitreverse32(x) + ((x >> 5) & 0x3f);
  unsigned long long y = ((unsigned long long)x << 32) | in[i + 1];
  lo[i] = __builtin_popcountll(y) + __builtin_clzll(y | 1) + __builtin_bitreverse64(y) + ~y;
  out[i + 1] = bfe_u32(x, 3, 7) + (unsigned)bfe_s32((int)x, 2, 9) + bfi_b32(x, in[i+3], 4, 8) + __nvvm_prmt(x, in[i+2], 0x3210);
  out[i + 2] = (x << 7) | (x >> 25);
}
__global__ void sregs(unsigned *out) {
  int i = GTID;
  out[i] = __nvvm_read_ptx_sreg_tid_y() + __nvvm_read_ptx_sreg_tid_z() + __nvvm_read_ptx_sreg_ntid_y() +
           __nvvm_read_ptx_sreg_ntid_z() + __nvvm_read_ptx_sreg_ctaid_y() + __nvvm_read_ptx_sreg_ctaid_z() +
           __nvvm_read_ptx_sreg_nctaid_x() + __nvvm_read_ptx_sreg_nctaid_y() + __nvvm_read_ptx_sreg_nctaid_z() +
           __nvvm_read_ptx_sreg_warpid() + __nvvm_read_ptx_sreg_nwarpid() + __nvvm_read_ptx_sreg_smid() +
           __nvvm_read_ptx_sreg_nsmid() + __nvvm_read_ptx_sreg_gridid() + __nvvm_read_ptx_sreg_lanemask_eq() +
           __nvvm_read_ptx_sreg_lanemask_le() + __nvvm_read_ptx_sreg_lanemask_ge() + __nvvm_read_ptx_sreg_lanemask_gt() +
           __nvvm_read_ptx_sreg_clock() + (unsigned)__nvvm_read_ptx_sreg_clock64();
  __nvvm_membar_gl();
  __nvvm_membar_cta();
  __nvvm_membar_sys();
}
__global__ void temporaries(float *out, const float *in) {
  int i = GTID;
  float a0 = in[i], a1 = in[i + 1], a2 = in[i + 2], a3 = in[i + 3];
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 48; k++) {
    float t = a0 * (float)k + a1;
    t = t * a2 - a3;
    s += t * t;
    a0 = a1 + s; a1 = a2 * 0.5f; a2 = a3 + t; a3 = t;
  }
  out[i] = s;
}
