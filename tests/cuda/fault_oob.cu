// Out-of-bounds writes. 64 threads write the 64 ints after the end of a 60-int buffer: the
// first 4 land in the alignment padding (allocations are 256-byte aligned), the others in the
// next buffer. With WARPFORGE_STRICT_BOUNDS=1 that is a fault (as compute-sanitizer reports):
// the runtime prints the model's fault report and ends the program with a non-zero status.
// By default, as on a real GPU, the bytes after the buffer are mapped device memory: the
// writes land in the neighbour, which the program checks (PASS). With the argument `far` the
// writes go 256 MiB past the buffer, outside mapped memory: a fault in both modes.
#include <cstdio>
#include <cstring>

__global__ void overrun(int *a, long n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i + n] = i;  // every thread writes out of bounds
}

int main(int argc, char **argv) {
  long off = 60;
  if (argc > 1 && strcmp(argv[1], "far") == 0) off = 64L << 20;
  int *d, *next;
  cudaMalloc(&d, 60 * sizeof(int));
  cudaMalloc(&next, 64 * sizeof(int));
  cudaMemset(next, 0, 64 * sizeof(int));
  overrun<<<1, 64>>>(d, off);
  cudaDeviceSynchronize();
  if (next != d + 64) {  // 240 bytes rounded up to 256
    printf("FAIL: buffers are not adjacent (%p, %p)\n", (void *)d, (void *)next);
    return 1;
  }
  int h[64];
  cudaMemcpy(h, next, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 60; i++) {
    if (h[i] != i + 4) {
      printf("FAIL: next[%d] = %d\n", i, h[i]);
      return 1;
    }
  }
  printf("the overrun landed in the next buffer\nPASS\n");
  return 0;
}
