// Gaussian elimination in the shape of Rodinia's gaussian: for every pivot t, two kernels
// whose grid shrinks with t and which take t as a scalar (2(n-1) launches). Floats, checked
// against the same elimination on the CPU within a tolerance; events time the whole run in
// simulated time.
#include <cstdio>
#include <cmath>
#include <vector>

__global__ void fan1(float *m, const float *a, int n, int t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n - 1 - t) return;
  m[n * (i + t + 1) + t] = a[n * (i + t + 1) + t] / a[n * t + t];
}

__global__ void fan2(const float *m, float *a, float *b, int n, int t) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n - 1 - t || y >= n - t) return;
  a[n * (x + 1 + t) + (y + t)] -= m[n * (x + 1 + t) + t] * a[n * t + (y + t)];
  if (y == 0) b[x + 1 + t] -= m[n * (x + 1 + t) + t] * b[t];
}

int main() {
  const int n = 40;
  std::vector<float> a(n * n), b(n), m(n * n, 0.0f);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) a[i * n + j] = (i == j) ? n + 1.0f : 1.0f / (1 + (i + 2 * j) % 7);
    b[i] = 1.0f + i % 5;
  }
  float *d_a, *d_b, *d_m;
  cudaMalloc(&d_a, n * n * 4); cudaMalloc(&d_b, n * 4); cudaMalloc(&d_m, n * n * 4);
  cudaMemcpy(d_a, a.data(), n * n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_b, b.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_m, m.data(), n * n * 4, cudaMemcpyHostToDevice);
  cudaEvent_t start, stop;
  cudaEventCreate(&start); cudaEventCreate(&stop);
  cudaEventRecord(start, 0);
  int launches = 0;
  for (int t = 0; t < n - 1; t++) {
    fan1<<<(n - 1 - t + 31) / 32, 32>>>(d_m, d_a, n, t);
    dim3 blk(8, 8), grd((n - 1 - t + 7) / 8, (n - t + 7) / 8);
    fan2<<<grd, blk>>>(d_m, d_a, d_b, n, t);
    launches += 2;
  }
  cudaEventRecord(stop, 0);
  cudaEventSynchronize(stop);
  float ms = -1;
  cudaEventElapsedTime(&ms, start, stop);
  if (cudaGetLastError() != cudaSuccess) { printf("FAIL: launch error\n"); return 1; }
  std::vector<float> ga(n * n), gb(n);
  cudaMemcpy(ga.data(), d_a, n * n * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(gb.data(), d_b, n * 4, cudaMemcpyDeviceToHost);
  for (int t = 0; t < n - 1; t++)
    for (int i = t + 1; i < n; i++) {
      float f = a[i * n + t] / a[t * n + t];
      for (int j = t; j < n; j++) a[i * n + j] -= f * a[t * n + j];
      b[i] -= f * b[t];
    }
  // back substitution on both
  auto solve = [&](std::vector<float> &A, std::vector<float> &B) {
    std::vector<float> x(n);
    for (int i = n - 1; i >= 0; i--) {
      float s = B[i];
      for (int j = i + 1; j < n; j++) s -= A[i * n + j] * x[j];
      x[i] = s / A[i * n + i];
    }
    return x;
  };
  std::vector<float> xg = solve(ga, gb), xr = solve(a, b);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += !(std::fabs(xg[i] - xr[i]) <= 1e-4f * (1 + std::fabs(xr[i])));
  bad += !(ms >= 0);
  printf("gauss_steps: n=%d, %d launches, simulated %.4f ms, %d mismatches\n", n, launches, ms, bad);
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad != 0;
}
