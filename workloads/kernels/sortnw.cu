// Sorting network over a batch of independent 512-element arrays of (key, value) pairs (the
// shape of the CUDA SDK's sortingNetworks sample in its odd-even variant), one CTA of 256
// threads per array, entirely in shared memory. Unlike bitonic_sort it uses Batcher's
// odd-even merge network: in the merge steps after the first of each stage only the threads
// whose offset inside the stage's stride block is >= the step's stride compare
// (`offset >= stride`, a programmatic branch whose idle set of lanes changes every step),
// and the comparator itself is data-dependent twice over: equal keys fall back to comparing
// the values (a branch taken only on ties), and the direction (ascending or descending) of
// each array is read from memory (`dirs`), not derived from the thread index. Values are
// distinct, so the order is total and the result unique.
#include "common.h"
#define N 512 // pairs per array = 2 * blockDim

__device__ void compare_exchange(unsigned *key, unsigned *val, int a, int b, bool up) {
  unsigned ka = key[a], kb = key[b];
  bool greater = ka > kb;
  if (ka == kb)
    greater = val[a] > val[b];
  if (greater == up) {
    unsigned va = val[a];
    key[a] = kb;
    key[b] = ka;
    val[a] = val[b];
    val[b] = va;
  }
}

KERNEL sortnw_oddeven(unsigned *keys, unsigned *vals, const unsigned *RESTRICT dirs) {
  __shared__ unsigned sk[N];
  __shared__ unsigned sv[N];
  int t = TID_X;
  int base = CTAID_X * N;
  bool up = dirs[CTAID_X] != 0;
  sk[t] = keys[base + t];
  sv[t] = vals[base + t];
  sk[t + N / 2] = keys[base + t + N / 2];
  sv[t + N / 2] = vals[base + t + N / 2];
  for (int size = 2; size <= N; size <<= 1) {
    int stride = size / 2;
    int offset = t & (stride - 1);
    // First step of the stage: merge the two sorted halves' counterparts.
    __syncthreads();
    int pos = 2 * t - (t & (stride - 1));
    compare_exchange(sk, sv, pos, pos + stride, up);
    for (stride >>= 1; stride > 0; stride >>= 1) {
      __syncthreads();
      pos = 2 * t - (t & (stride - 1));
      if (offset >= stride)
        compare_exchange(sk, sv, pos - stride, pos, up);
    }
  }
  __syncthreads();
  keys[base + t] = sk[t];
  vals[base + t] = sv[t];
  keys[base + t + N / 2] = sk[t + N / 2];
  vals[base + t + N / 2] = sv[t + N / 2];
}
