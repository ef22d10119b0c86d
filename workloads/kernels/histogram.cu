// 256-bin byte histogram: per-block histogram in shared memory with shared atomics
// (skewed input makes many lanes hit the same bin), then one global atomic per bin.
#include "common.h"
#define BINS 256

KERNEL histogram(const unsigned char *RESTRICT data, int n, int *RESTRICT hist) {
  __shared__ int local[BINS];
  for (int b = TID_X; b < BINS; b += NTID_X)
    local[b] = 0;
  __syncthreads();
  for (int i = CTAID_X * NTID_X + TID_X; i < n; i += NCTAID_X * NTID_X)
    ATOMIC_ADD_I(&local[data[i]], 1);
  __syncthreads();
  for (int b = TID_X; b < BINS; b += NTID_X) {
    int v = local[b];
    if (v != 0)
      ATOMIC_ADD_I(&hist[b], v);
  }
}
