// Pathfinder (Rodinia dynproc): minimum-cost path down a grid, each step moving to one of
// the three cells below. Each launch advances `iteration` rows (a pyramid of height
// iteration) in shared memory; blocks overlap by a halo of `iteration` columns on each
// side and only the shrinking valid range of threads computes, with clamped boundaries.
#include "common.h"
#define BLOCK 256
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))

KERNEL pathfinder(int iteration, const int *RESTRICT wall, const int *RESTRICT src,
                  int *RESTRICT dst, int cols, int start_step, int border) {
  __shared__ int prev[BLOCK];
  __shared__ int result[BLOCK];
  int bx = CTAID_X, tx = TID_X;
  int small_block_cols = BLOCK - iteration * 2;
  int blk_x = small_block_cols * bx - border;
  int blk_x_max = blk_x + BLOCK - 1;
  int xidx = blk_x + tx;
  int valid_x_min = (blk_x < 0) ? -blk_x : 0;
  int valid_x_max = (blk_x_max > cols - 1) ? BLOCK - 1 - (blk_x_max - cols + 1) : BLOCK - 1;
  int W = tx - 1, E = tx + 1;
  W = (W < valid_x_min) ? valid_x_min : W;
  E = (E > valid_x_max) ? valid_x_max : E;
  bool is_valid = IN_RANGE(tx, valid_x_min, valid_x_max);
  if (IN_RANGE(xidx, 0, cols - 1))
    prev[tx] = src[xidx];
  __syncthreads();
  bool computed = false;
  for (int i = 0; i < iteration; i++) {
    computed = false;
    if (IN_RANGE(tx, i + 1, BLOCK - i - 2) && is_valid) {
      computed = true;
      int shortest = MIN(prev[W], prev[tx]);
      shortest = MIN(shortest, prev[E]);
      result[tx] = shortest + wall[cols * (start_step + i + 1) + xidx];
    }
    __syncthreads();
    if (i == iteration - 1)
      break;
    if (computed)
      prev[tx] = result[tx];
    __syncthreads();
  }
  if (computed)
    dst[xidx] = result[tx];
}
