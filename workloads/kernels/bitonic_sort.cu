// Bitonic sort of n = 2^k unsigned keys (ascending), structured like the CUDA SDK sample:
//  - bitonic_sort_shared: sorts each chunk of 2*blockDim keys in shared memory, alternating
//    direction per chunk so pairs of chunks form bitonic sequences;
//  - bitonic_merge_global: one compare-exchange step with stride j >= 2*blockDim;
//  - bitonic_merge_shared: finishes a merge stage (strides < 2*blockDim) in shared memory.
// Each thread handles one compare-exchange pair; the host launches the stages.
#include "common.h"
#define CHUNK 512 // 2 * blockDim (blockDim = 256)

__device__ void cmp_swap(unsigned *a, unsigned *b, bool up) {
  unsigned x = *a, y = *b;
  if ((x > y) == up) {
    *a = y;
    *b = x;
  }
}

KERNEL bitonic_sort_shared(unsigned *keys) {
  __shared__ unsigned s[CHUNK];
  int base = CTAID_X * CHUNK;
  int t = TID_X;
  s[t] = keys[base + t];
  s[t + CHUNK / 2] = keys[base + t + CHUNK / 2];
  for (int k = 2; k <= CHUNK; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      __syncthreads();
      int i = 2 * t - (t & (j - 1)); // lower index of this thread's pair
      bool up = ((base + i) & k) == 0; // the last stage (k = CHUNK) alternates per chunk
      cmp_swap(&s[i], &s[i + j], up);
    }
  }
  __syncthreads();
  keys[base + t] = s[t];
  keys[base + t + CHUNK / 2] = s[t + CHUNK / 2];
}

KERNEL bitonic_merge_global(unsigned *keys, int n, int k, int j) {
  int t = CTAID_X * NTID_X + TID_X;
  if (t >= n / 2)
    return;
  int i = 2 * t - (t & (j - 1));
  bool up = (i & k) == 0;
  cmp_swap(&keys[i], &keys[i + j], up);
}

KERNEL bitonic_merge_shared(unsigned *keys, int k) {
  __shared__ unsigned s[CHUNK];
  int base = CTAID_X * CHUNK;
  int t = TID_X;
  s[t] = keys[base + t];
  s[t + CHUNK / 2] = keys[base + t + CHUNK / 2];
  bool up = (base & k) == 0;
  for (int j = CHUNK / 2; j > 0; j >>= 1) {
    __syncthreads();
    int i = 2 * t - (t & (j - 1));
    cmp_swap(&s[i], &s[i + j], up);
  }
  __syncthreads();
  keys[base + t] = s[t];
  keys[base + t + CHUNK / 2] = s[t + CHUNK / 2];
}
