// C = A * B (row-major, A is MxK, B is KxN) with 16x16 shared-memory tiles; block 16x16.
// Dimensions need not be multiples of 16: out-of-range tile elements load as 0.
#include "common.h"
#define TILE 16

KERNEL sgemm(const float *RESTRICT A, const float *RESTRICT B, float *RESTRICT C, int M, int N,
             int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = TID_X, ty = TID_Y;
  int row = CTAID_Y * TILE + ty;
  int col = CTAID_X * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; k++)
      acc = FMA(As[ty][k], Bs[k][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N)
    C[row * N + col] = acc;
}
