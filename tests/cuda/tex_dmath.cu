// A texture reference on linear memory (cudaBindTexture + tex1Dfetch, with fetches past the
// bound range, which return 0) and double-precision math in device code (exp, log, pow, sin,
// cos through libdevice's __nv_*, which warpforge runs natively), checked against the CPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>

texture<float, 1, cudaReadModeElementType> tex_in;
texture<int, 1, cudaReadModeElementType> tex_idx;

__global__ void gather(float *out, int n, int bound) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    // Element i and element i + bound/2 (past the bound range for the upper half: 0).
    out[i] = tex1Dfetch(tex_in, i) + 10.0f * tex1Dfetch(tex_in, i + bound / 2) +
             (float)tex1Dfetch(tex_idx, i % 7);
  }
}

__global__ void dmath(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double v = x[i];
    y[i] = exp(v) + log(v + 1.5) + pow(v + 2.0, 1.25) + sin(3.0 * v) * cos(v) + tanh(v) +
           atan2(v, 2.0) + cbrt(v * 5.0) + erf(v);
  }
}

static double cpu_dmath(double v) {
  return exp(v) + log(v + 1.5) + pow(v + 2.0, 1.25) + sin(3.0 * v) * cos(v) + tanh(v) +
         atan2(v, 2.0) + cbrt(v * 5.0) + erf(v);
}

int main() {
  const int n = 1000, bound = 600;
  float *hin = (float *)malloc(n * sizeof(float));
  float *hout = (float *)malloc(n * sizeof(float));
  int hidx[7];
  for (int i = 0; i < n; i++) hin[i] = (float)(i % 97) * 0.25f - 3.0f;
  for (int k = 0; k < 7; k++) hidx[k] = 100 * k - 300;
  float *din, *dout;
  int *didx;
  cudaMalloc(&din, n * sizeof(float));
  cudaMalloc(&dout, n * sizeof(float));
  cudaMalloc(&didx, sizeof hidx);
  cudaMemcpy(din, hin, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(didx, hidx, sizeof hidx, cudaMemcpyHostToDevice);
  size_t off = 1;
  // Only the first `bound` floats are bound: fetches at bound and beyond return 0.
  if (cudaBindTexture(&off, tex_in, din, bound * sizeof(float)) != cudaSuccess || off != 0) {
    printf("FAIL: cudaBindTexture\n");
    return 1;
  }
  cudaBindTexture(0, tex_idx, didx, sizeof hidx);
  gather<<<(n + 127) / 128, 128>>>(dout, n, bound);
  cudaMemcpy(hout, dout, n * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    float a = i < bound ? hin[i] : 0.0f;
    float b = i + bound / 2 < bound ? hin[i + bound / 2] : 0.0f;
    float want = a + 10.0f * b + (float)hidx[i % 7];
    if (hout[i] != want) {
      if (bad++ < 5) printf("tex: out[%d] = %g, want %g\n", i, hout[i], want);
    }
  }
  cudaUnbindTexture(tex_in);
  cudaUnbindTexture(tex_idx);

  const int m = 513;
  double *hx = (double *)malloc(m * sizeof(double));
  double *hy = (double *)malloc(m * sizeof(double));
  for (int i = 0; i < m; i++) hx[i] = -1.0 + 4.0 * i / (m - 1);
  double *dx, *dy;
  cudaMalloc(&dx, m * sizeof(double));
  cudaMalloc(&dy, m * sizeof(double));
  cudaMemcpy(dx, hx, m * sizeof(double), cudaMemcpyHostToDevice);
  dmath<<<(m + 63) / 64, 64>>>(dx, dy, m);
  cudaMemcpy(hy, dy, m * sizeof(double), cudaMemcpyDeviceToHost);
  // The model evaluates each function with the host's libm (correctly rounded or within
  // 1 ulp); the sum of eight terms may differ from the CPU's in the last bits only.
  double worst = 0;
  for (int i = 0; i < m; i++) {
    double want = cpu_dmath(hx[i]);
    double rel = fabs(hy[i] - want) / fmax(fabs(want), 1e-300);
    if (rel > worst) worst = rel;
    if (!(rel <= 1e-14)) {
      if (bad++ < 10) printf("dmath: y[%d] = %.17g, want %.17g\n", i, hy[i], want);
    }
  }
  printf("tex: %d fetches checked; dmath: worst relative error %.3g\n", n, worst);
  printf(bad ? "FAIL\n" : "PASS\n");
  return bad ? 1 : 0;
}
