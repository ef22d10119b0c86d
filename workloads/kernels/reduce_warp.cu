// Integer sum with warp shuffles: grid-stride accumulation, a shfl.sync.down tree inside
// each warp, then lane 0 of every warp adds its value to the result with a global atomic.
#include "common.h"

KERNEL reduce_warp(const int *RESTRICT in, int *RESTRICT out, int n) {
  int sum = 0;
  for (int i = CTAID_X * NTID_X + TID_X; i < n; i += NCTAID_X * NTID_X)
    sum += in[i];
  for (int d = 16; d > 0; d >>= 1)
    sum += shfl_down_i32(sum, d);
  if ((TID_X & 31) == 0)
    ATOMIC_ADD_I(out, sum);
}
