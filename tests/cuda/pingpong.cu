// A hotspot/pathfinder-like stencil: shared-memory tiles, two buffers swapped across
// launches. Integer arithmetic, so the GPU must match the CPU exactly.
#include <cstdio>
#include <vector>
#define TILE 16

__global__ void step(const int *in, int *out, int w, int h) {
  __shared__ int t[TILE + 2][TILE + 2];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
  auto at = [&](int xx, int yy) {
    xx = xx < 0 ? 0 : xx >= w ? w - 1 : xx;
    yy = yy < 0 ? 0 : yy >= h ? h - 1 : yy;
    return in[yy * w + xx];
  };
  t[ly][lx] = at(x, y);
  if (threadIdx.x == 0) t[ly][0] = at(x - 1, y);
  if (threadIdx.x == TILE - 1) t[ly][TILE + 1] = at(x + 1, y);
  if (threadIdx.y == 0) t[0][lx] = at(x, y - 1);
  if (threadIdx.y == TILE - 1) t[TILE + 1][lx] = at(x, y + 1);
  __syncthreads();
  if (x < w && y < h)
    out[y * w + x] = (4 * t[ly][lx] + t[ly][lx - 1] + t[ly][lx + 1] + t[ly - 1][lx] + t[ly + 1][lx]) / 8 + (x == w / 2 && y == h / 2 ? 100 : 0);
}

int main() {
  const int w = 70, h = 45, iters = 12;
  std::vector<int> a(w * h);
  for (int i = 0; i < w * h; i++) a[i] = (i * 37) % 1000;
  int *d[2];
  cudaMalloc(&d[0], w * h * sizeof(int));
  cudaMalloc(&d[1], w * h * sizeof(int));
  cudaMemcpy(d[0], a.data(), w * h * sizeof(int), cudaMemcpyHostToDevice);
  dim3 block(TILE, TILE), grid((w + TILE - 1) / TILE, (h + TILE - 1) / TILE);
  int src = 0;
  for (int i = 0; i < iters; i++) {
    step<<<grid, block>>>(d[src], d[1 - src], w, h);
    src = 1 - src;
  }
  std::vector<int> gpu(w * h);
  cudaMemcpy(gpu.data(), d[src], w * h * sizeof(int), cudaMemcpyDeviceToHost);

  std::vector<int> cur = a, nxt(w * h);
  auto at = [&](int x, int y) {
    x = x < 0 ? 0 : x >= w ? w - 1 : x; y = y < 0 ? 0 : y >= h ? h - 1 : y;
    return cur[y * w + x];
  };
  for (int i = 0; i < iters; i++) {
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        nxt[y * w + x] = (4 * at(x, y) + at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1)) / 8 + (x == w / 2 && y == h / 2 ? 100 : 0);
    cur.swap(nxt);
  }
  int bad = 0;
  for (int i = 0; i < w * h; i++) bad += gpu[i] != cur[i];
  printf("pingpong: %dx%d, %d launches, %d mismatches\n", w, h, iters, bad);
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad != 0;
}
