// Kernels calling __device__ functions (escape-time iteration counts and a histogram with
// atomics); integer results, exact against the CPU.
#include <cstdio>
#include <vector>

__host__ __device__ int escape(int cx, int cy, int limit) {
  // fixed point, 12 fractional bits
  int x = 0, y = 0, i = 0;
  while (i < limit) {
    int xx = (x * x) >> 12, yy = (y * y) >> 12;
    if (xx + yy > (4 << 12)) break;
    y = ((2 * x * y) >> 12) + cy;
    x = xx - yy + cx;
    i++;
  }
  return i;
}

__device__ int bucket(int v, int buckets, int limit) { return v * buckets / (limit + 1); }

__global__ void mandel(int *iters, unsigned *hist, int w, int h, int limit) {
  int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y;
  if (px >= w) return;
  int cx = -2 * 4096 + px * (3 * 4096) / w, cy = -4096 + py * (2 * 4096) / h;
  int v = escape(cx, cy, limit);
  iters[py * w + px] = v;
  atomicAdd(&hist[bucket(v, 8, limit)], 1u);
}

int main() {
  const int w = 96, h = 40, limit = 64;
  int *d_it; unsigned *d_hist;
  cudaMalloc(&d_it, w * h * sizeof(int));
  cudaMalloc(&d_hist, 8 * sizeof(unsigned));
  cudaMemset(d_hist, 0, 8 * sizeof(unsigned));
  mandel<<<dim3((w + 63) / 64, h), 64>>>(d_it, d_hist, w, h, limit);
  std::vector<int> it(w * h);
  unsigned hist[8];
  cudaMemcpy(it.data(), d_it, w * h * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost);
  int bad = 0;
  unsigned ref_hist[8] = {0};
  for (int py = 0; py < h; py++)
    for (int px = 0; px < w; px++) {
      int cx = -2 * 4096 + px * (3 * 4096) / w, cy = -4096 + py * (2 * 4096) / h;
      int v = escape(cx, cy, limit);
      bad += it[py * w + px] != v;
      ref_hist[v * 8 / (limit + 1)]++;
    }
  for (int b = 0; b < 8; b++) bad += hist[b] != ref_hist[b];
  printf("devfunc: %dx%d, %d mismatches\n", w, h, bad);
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad != 0;
}
