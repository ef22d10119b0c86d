// A kernel that writes past the end of its allocation: the runtime prints the model's fault
// report and ends the program with a non-zero status (it never prints PASS).
#include <cstdio>

__global__ void overrun(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i + n] = i;  // every thread writes out of bounds
}

int main() {
  int *d;
  cudaMalloc(&d, 64 * sizeof(int));
  overrun<<<1, 64>>>(d, 64);
  cudaDeviceSynchronize();
  printf("PASS (unexpected: the fault was not reported)\n");
  return 0;
}
