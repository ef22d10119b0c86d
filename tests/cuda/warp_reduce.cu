// A reduction with warp shuffles and votes, launched with the C++ stream/event API and
// shared memory given at launch; device properties from the simulated GPU.
#include <cstdio>
#include <vector>

__global__ void reduce(const int *in, long long *out, unsigned *nonzero_warps, int n) {
  extern __shared__ int partial[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  unsigned ballot = __ballot_sync(0xffffffffu, i < n && in[i] != 0);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    partial[warp] = v;
    if (ballot) atomicAdd(nonzero_warps, 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    long long s = 0;
    for (int w = 0; w < blockDim.x / 32; w++) s += partial[w];
    atomicAdd((unsigned long long *)out, (unsigned long long)s);
  }
}

int main() {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess || p.warpSize != 32 || p.multiProcessorCount < 1) {
    printf("FAIL: device properties\n");
    return 1;
  }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  printf("device: %s, %d SMs, cc %d.%d\n", p.name, sms, p.major, p.minor);
  const int n = 10000, block = 256;
  std::vector<int> h(n);
  for (int i = 0; i < n; i++) h[i] = (i % 97 == 0) ? 0 : (i * 31) % 1001 - 500;
  int *d_in; long long *d_out; unsigned *d_nz;
  cudaMalloc(&d_in, n * 4); cudaMalloc(&d_out, 8); cudaMalloc(&d_nz, 4);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaMemcpyAsync(d_in, h.data(), n * 4, cudaMemcpyHostToDevice, s);
  cudaMemsetAsync(d_out, 0, 8, s);
  cudaMemsetAsync(d_nz, 0, 4, s);
  reduce<<<(n + block - 1) / block, block, block / 32 * sizeof(int), s>>>(d_in, d_out, d_nz, n);
  long long sum = 0; unsigned nz = 0;
  cudaMemcpyAsync(&sum, d_out, 8, cudaMemcpyDeviceToHost, s);
  cudaMemcpyAsync(&nz, d_nz, 4, cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  long long ref = 0; unsigned ref_nz = 0;
  for (int i = 0; i < n; i++) ref += h[i];
  int warps = (n + 31) / 32;
  for (int w = 0; w < warps; w++) {
    bool any = false;
    for (int l = 0; l < 32 && w * 32 + l < n; l++) any |= h[w * 32 + l] != 0;
    ref_nz += any;
  }
  // A bad launch configuration is reported, not run.
  reduce<<<1, 2048>>>(d_in, d_out, d_nz, n);
  cudaError_t e = cudaGetLastError();
  int bad = (sum != ref) + (nz != ref_nz) + (e != cudaErrorInvalidConfiguration);
  printf("warp_reduce: sum %lld (cpu %lld), warps %u (cpu %u), bad launch: %s\n", sum, ref, nz, ref_nz, cudaGetErrorString(e));
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad != 0;
}
