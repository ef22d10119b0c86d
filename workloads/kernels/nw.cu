// Needleman-Wunsch global alignment score matrix (Rodinia-like). The (n+1)x(n+1) score
// matrix is cut into 32x32 tiles; the host launches one kernel per block anti-diagonal
// (2*n/32 - 1 launches), one 32-thread CTA per tile on it. Inside a tile the threads sweep
// the 63 cell anti-diagonals in shared memory, so most lanes idle on the short ones.
#include "common.h"
#define B 32

KERNEL nw_tile(int *score, const int *RESTRICT ref, int n, int penalty, int diag) {
  __shared__ int temp[B + 1][B + 1];
  __shared__ int ref_s[B][B];
  int nb = n / B;
  int tx = TID_X;
  int bi = MAX(0, diag - nb + 1) + CTAID_X; // tile row
  int bj = diag - bi;                       // tile column
  int r0 = bi * B, c0 = bj * B;             // score coordinates of temp[0][0]
  int stride = n + 1;
  for (int ty = 0; ty < B; ty++)
    ref_s[ty][tx] = ref[(r0 + ty) * n + c0 + tx];
  if (tx == 0)
    temp[0][0] = score[r0 * stride + c0];
  temp[0][tx + 1] = score[r0 * stride + c0 + tx + 1];
  temp[tx + 1][0] = score[(r0 + tx + 1) * stride + c0];
  __syncthreads();
  int x = tx + 1;
  for (int m = 0; m < 2 * B - 1; m++) {
    int y = m - tx + 1;
    if (y >= 1 && y <= B) {
      int a = temp[y - 1][x - 1] + ref_s[y - 1][x - 1];
      int b = temp[y - 1][x] - penalty;
      int c = temp[y][x - 1] - penalty;
      temp[y][x] = MAX(a, MAX(b, c));
    }
    __syncthreads();
  }
  for (int ty = 0; ty < B; ty++)
    score[(r0 + ty + 1) * stride + c0 + tx + 1] = temp[ty + 1][tx + 1];
}
