// Blocked LU decomposition without pivoting (Rodinia-like), in place, row-major n x n with
// n a multiple of 16. Per 16-wide block step `off` the host launches:
//  lud_diagonal  (1 CTA, 16 threads): Doolittle on the diagonal tile in shared memory;
//  lud_perimeter (one CTA of 32 threads per remaining tile): threads 0-15 solve the tile
//                right of the diagonal (one column each, unit-lower L), threads 16-31 the
//                tile below it (one row each, divide by U's diagonal);
//  lud_internal  (16x16 threads per trailing tile): A -= L * U through shared memory.
// Every element sees a[i][j] = fma(-a[i][k], a[k][j], a[i][j]) for k ascending, then a
// division for i > j, exactly as in the unblocked right-looking algorithm.
#include "common.h"
#define BS 16

KERNEL lud_diagonal(float *a, int n, int off) {
  __shared__ float d[BS][BS];
  int tx = TID_X;
  for (int i = 0; i < BS; i++)
    d[i][tx] = a[(off + i) * n + off + tx];
  __syncthreads();
  for (int k = 0; k < BS - 1; k++) {
    if (tx > k)
      d[tx][k] = d[tx][k] / d[k][k];
    __syncthreads();
    if (tx > k)
      for (int i = k + 1; i < BS; i++)
        d[i][tx] = FMA(-d[i][k], d[k][tx], d[i][tx]);
    __syncthreads();
  }
  for (int i = 0; i < BS; i++)
    a[(off + i) * n + off + tx] = d[i][tx];
}

KERNEL lud_perimeter(float *a, int n, int off) {
  __shared__ float d[BS][BS];
  int tx = TID_X;
  int t = off + (CTAID_X + 1) * BS; // first row/column of this perimeter tile
  if (tx < BS)
    for (int i = 0; i < BS; i++)
      d[i][tx] = a[(off + i) * n + off + tx];
  __syncthreads();
  if (tx < BS) {
    int col = t + tx;
    for (int i = 1; i < BS; i++) {
      float v = a[(off + i) * n + col];
      for (int k = 0; k < i; k++)
        v = FMA(-d[i][k], a[(off + k) * n + col], v);
      a[(off + i) * n + col] = v;
    }
  } else {
    int row = t + tx - BS;
    for (int j = 0; j < BS; j++) {
      float v = a[row * n + off + j];
      for (int k = 0; k < j; k++)
        v = FMA(-a[row * n + off + k], d[k][j], v);
      a[row * n + off + j] = v / d[j][j];
    }
  }
}

KERNEL lud_internal(float *a, int n, int off) {
  __shared__ float l[BS][BS];
  __shared__ float u[BS][BS];
  int tx = TID_X, ty = TID_Y;
  int row = off + (CTAID_Y + 1) * BS + ty;
  int col = off + (CTAID_X + 1) * BS + tx;
  l[ty][tx] = a[row * n + off + tx];
  u[ty][tx] = a[(off + ty) * n + col];
  __syncthreads();
  float v = a[row * n + col];
#pragma unroll
  for (int k = 0; k < BS; k++)
    v = FMA(-l[ty][k], u[k][tx], v);
  a[row * n + col] = v;
}
