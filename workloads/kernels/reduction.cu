// Sum reduction: each thread accumulates a grid-stride slice (two elements per step), then
// a shared-memory tree with __syncthreads; thread 0 writes one partial per block. The host
// launches it again on the partials with one block. blockDim must be a power of two <= 256.
#include "common.h"

KERNEL reduce_sum(const float *RESTRICT in, float *RESTRICT out, int n) {
  __shared__ float sdata[256];
  int tid = TID_X;
  int bd = NTID_X;
  int stride = NCTAID_X * bd * 2;
  float sum = 0.0f;
  for (int i = CTAID_X * bd * 2 + tid; i < n; i += stride) {
    sum += in[i];
    if (i + bd < n)
      sum += in[i + bd];
  }
  sdata[tid] = sum;
  __syncthreads();
  for (int s = bd / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    out[CTAID_X] = sdata[0];
}
