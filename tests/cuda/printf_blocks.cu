// Device printf from several threads of several blocks: every conversion of CUDA's printf,
// a %s from device memory, the value printf returns, and a second launch that overflows a
// printf buffer made small with cudaDeviceSetLimit. The device output goes to stdout after
// each launch; this program writes the lines it expects (formatted on the CPU with the same
// format and arguments, in the order warpforge documents: block, warp, call, lane) to the
// file named by argv[1], and tests/integration/cuda_programs.rs compares the two.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define FMT "b%d t%2d [%s] d=%5d i=%-4i| u=%u x=%#x X=%08X o=%o c=%c ll=%lld llu=%llu f=%.3f e=%e g=%g p=%s%%\n"

__device__ int ret_of_first[2];

__global__ void hello(const int *vals, const char *name, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int tid = threadIdx.x;
  if (t < n && (tid % 32 == 0 || tid == 33)) {
    int v = vals[t];
    int r = printf(FMT, blockIdx.x, tid, name, v, -v, (unsigned)-v, v, v, v, 'a' + t % 26,
                   (long long)v << 33, (unsigned long long)v * 1000003ull, v * 0.5f,
                   (double)v * 1e-3, v / 3.0, "ok");
    if (tid == 0) ret_of_first[blockIdx.x] = r;
  }
  __syncthreads();
  if (tid == 0) printf("block %d done (printf returned %d)\n", blockIdx.x, ret_of_first[blockIdx.x]);
}

__global__ void flood(int lines) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < lines) printf("flood line %04d\n", t);
}

int main(int argc, char **argv) {
  const int blocks = 2, threads = 64, n = blocks * threads;
  int h[n];
  for (int i = 0; i < n; i++) h[i] = i * 37 - 1000;
  int *d;
  char *dname;
  const char name[] = "warpforge";
  cudaMalloc(&d, sizeof h);
  cudaMalloc(&dname, sizeof name);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemcpy(dname, name, sizeof name, cudaMemcpyHostToDevice);
  printf("host: before launch\n");
  hello<<<blocks, threads>>>(d, dname, n);
  cudaDeviceSynchronize();
  printf("host: after launch\n");

  // 100 lines of 16 bytes into a 1000-byte buffer: 62 fit, the rest are dropped.
  size_t lim = 0;
  cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1000);
  cudaDeviceGetLimit(&lim, cudaLimitPrintfFifoSize);
  flood<<<4, 32>>>(100);
  cudaDeviceSynchronize();
  printf("host: limit %zu\n", lim);

  // The CPU's version of the device output, in warpforge's documented order.
  if (argc > 1) {
    FILE *f = fopen(argv[1], "w");
    for (int b = 0; b < blocks; b++) {
      for (int w = 0; w < threads / 32; w++) {
        for (int lane = 0; lane < 32; lane++) {
          int tid = w * 32 + lane, t = b * threads + tid;
          if (!(tid % 32 == 0 || tid == 33)) continue;
          int v = h[t];
          fprintf(f, FMT, b, tid, name, v, -v, (unsigned)-v, v, v, v, 'a' + t % 26,
                  (long long)v << 33, (unsigned long long)v * 1000003ull, (double)(v * 0.5f),
                  (double)v * 1e-3, v / 3.0, "ok");
        }
        if (w == 0) fprintf(f, "block %d done (printf returned %d)\n", b, 16);
      }
    }
    for (int t = 0; t < 62; t++) fprintf(f, "flood line %04d\n", t);
    fclose(f);
  }
  printf("PASS\n");
  return 0;
}
