#include "common.h"
// Needs PTX >= 6.0 for the *_sync intrinsics: see gen.sh.
__global__ void warp_ops(int *out, const int *in, unsigned *ballots) {
  int i = GTID;
  int v = in[i];
  int s = v;
  s += __nvvm_shfl_sync_down_i32(0xffffffffu, s, 16, 31);
  s += __nvvm_shfl_sync_down_i32(0xffffffffu, s, 8, 31);
  s += __nvvm_shfl_sync_up_i32(0xffffffffu, s, 1, 0);
  s += __nvvm_shfl_sync_bfly_i32(0xffffffffu, s, 4, 31);
  s += __nvvm_shfl_sync_idx_i32(0xffffffffu, s, 0, 31);
  float f = __nvvm_shfl_sync_down_f32(0xffffffffu, (float)v, 2, 31);
  out[i] = s + (int)f;
  unsigned b = __nvvm_vote_ballot_sync(0xffffffffu, v > 0);
  int all = __nvvm_vote_all_sync(0xffffffffu, v > 0);
  int any = __nvvm_vote_any_sync(0xffffffffu, v > 1);
  int uni = __nvvm_vote_uni_sync(0xffffffffu, v > 2);
  ballots[i] = b + all + 2 * any + 4 * uni + __nvvm_read_ptx_sreg_laneid() + __nvvm_read_ptx_sreg_lanemask_lt();
}
