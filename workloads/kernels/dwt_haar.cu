// Haar wavelet decomposition of a 1-D signal (the shape of the CUDA SDK's dwtHaar1D). Each
// CTA of T threads takes 2T consecutive samples into shared memory and runs log2(2T) levels:
// on level l only the first T >> (l-1) threads are active (the active count halves per level,
// so whole warps drop out and the last five levels leave lanes of warp 0 idle). An active
// thread t combines the pair (2t, 2t+1) into the approximation (a+b)/sqrt2, kept in shared
// memory for the next level, and the detail (a-b)/sqrt2, written to its place in the
// standard layout: details of level l occupy out[n >> l .. n >> (l-1)], where n is the
// length of this launch's input. The CTA's last approximation goes to approx[ctaid]. When
// the signal spans several CTAs the host runs the same kernel again on those approximations
// (one CTA), whose output lands in the leading part of the same layout.
#include "common.h"
#define INV_SQRT2 0.70710678118654752f

KERNEL dwt_haar(const float *RESTRICT in, float *RESTRICT out, float *RESTRICT approx,
                int n) {
  __shared__ float s[1024];
  int t = TID_X;
  int threads = NTID_X;
  int chunk = 2 * threads;
  int base = CTAID_X * chunk;
  s[t] = in[base + t];
  s[t + threads] = in[base + t + threads];
  __syncthreads();
  int level = 1;
  for (int active = threads; active > 0; active >>= 1) {
    float a = 0.0f, b = 0.0f;
    if (t < active) {
      a = s[2 * t];
      b = s[2 * t + 1];
    }
    __syncthreads(); // everybody has read before anybody overwrites
    if (t < active) {
      s[t] = (a + b) * INV_SQRT2;
      int per_cta = chunk >> level; // details of this level from one CTA
      out[(n >> level) + CTAID_X * per_cta + t] = (a - b) * INV_SQRT2;
    }
    __syncthreads();
    level++;
  }
  if (t == 0)
    approx[CTAID_X] = s[0];
}
