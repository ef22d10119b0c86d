#include "common.h"
extern __shared__ int dyn_smem[];
// Remainder alone, restrict (ld.global.nc), nounroll loop, dynamic shared memory,
// 64-bit multiply-add and select, an infinite loop with no path to exit.
__global__ void rem_only(int *out, const int *in, unsigned *uo, long long *lo) {
  int i = GTID;
  out[i] = in[i] % in[i + 1];
  uo[i] = (unsigned)in[i] % (unsigned)in[i + 2];
  lo[i] = (long long)in[i] % 1000003ll + (long long)in[i + 3] % (long long)in[i + 4];
}
__global__ void restrict_nc(float *__restrict__ out, const float *__restrict__ in, int n) {
  int i = GTID;
  float s = 0.0f;
#pragma nounroll
  for (int k = 0; k < n; k++) s += in[i + k] * 0.5f;
  out[i] = s;
}
__global__ void dyn_shared(int *out, const int *in) {
  int t = TID_X;
  dyn_smem[t] = in[GTID];
  __syncthreads();
  out[GTID] = dyn_smem[t ^ 1];
}
__global__ void mad64(long long *out, const long long *in, double *dout) {
  int i = GTID;
  long long a = in[i], b = in[i + 1], c = in[i + 2];
  out[i] = a * b + c;
  out[i + 1] = a > b ? a : c;
  dout[i] = (double)a / (double)b;
}
__global__ void spin_forever(volatile int *flag) {
  int t = TID_X;
  if (t == 0) {
    while (1) { flag[0] = flag[1] + 1; }
  }
  flag[2] = t;
}
__global__ void unsigned_loop(unsigned *out, unsigned n) {
  unsigned i = GTID;
  unsigned acc = 1;
  for (unsigned k = i; k < n; k += 32) {
    acc = acc * 33u + k;
    if (acc == 12345u) continue;
    acc ^= acc >> 7;
  }
  out[i] = acc;
}
