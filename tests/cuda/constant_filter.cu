// A 1-D convolution whose taps live in a __constant__ array set with cudaMemcpyToSymbol
// (and changed between launches); a __device__ counter read back with
// cudaMemcpyFromSymbol and through cudaGetSymbolAddress.
#include <cstdio>
#include <vector>
#define TAPS 7

__constant__ int taps[TAPS];
__constant__ int bias = 3;  // an initialiser that exists only in the PTX
__device__ unsigned int hits;

__global__ void conv(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int s = bias;
  for (int k = 0; k < TAPS; k++) {
    int j = i + k - TAPS / 2;
    if (j >= 0 && j < n) s += taps[k] * in[j];
  }
  out[i] = s;
  if (s % 5 == 0) atomicAdd(&hits, 1u);
}

int main() {
  const int n = 5000;
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; i++) in[i] = (i * 13 + 7) % 101 - 50;
  int *d_in, *d_out;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_out, n * sizeof(int));
  cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  int bad = 0;
  unsigned total_ref = 0;
  for (int round = 0; round < 2; round++) {
    int h_taps[TAPS];
    for (int k = 0; k < TAPS; k++) h_taps[k] = (k + 1) * (round ? -1 : 1) + round * 2;
    if (cudaMemcpyToSymbol(taps, h_taps, sizeof h_taps) != cudaSuccess) { printf("FAIL: cudaMemcpyToSymbol\n"); return 1; }
    int back[TAPS];
    cudaMemcpyFromSymbol(back, taps, sizeof back);
    for (int k = 0; k < TAPS; k++) bad += back[k] != h_taps[k];
    conv<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
    cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) {
      int s = 3;
      for (int k = 0; k < TAPS; k++) {
        int j = i + k - TAPS / 2;
        if (j >= 0 && j < n) s += h_taps[k] * in[j];
      }
      bad += out[i] != s;
      total_ref += s % 5 == 0;
    }
  }
  unsigned gpu_hits = 0, via_addr = 0;
  cudaMemcpyFromSymbol(&gpu_hits, hits, sizeof gpu_hits);
  unsigned *p_hits;
  if (cudaGetSymbolAddress((void **)&p_hits, hits) != cudaSuccess) { printf("FAIL: cudaGetSymbolAddress\n"); return 1; }
  cudaMemcpy(&via_addr, p_hits, sizeof via_addr, cudaMemcpyDeviceToHost);
  bad += gpu_hits != total_ref;
  bad += via_addr != total_ref;
  int b;
  cudaMemcpyFromSymbol(&b, bias, sizeof b);
  bad += b != 3;
  // An unknown symbol is an error, as CUDA reports it.
  static int not_a_symbol;
  bad += cudaMemcpyToSymbol(not_a_symbol, &b, sizeof b) != cudaErrorInvalidSymbol;
  bad += cudaGetLastError() != cudaErrorInvalidSymbol;
  printf("constant_filter: %d elements, hits %u (cpu %u), %d mismatches\n", n, gpu_hits, total_ref, bad);
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad != 0;
}
