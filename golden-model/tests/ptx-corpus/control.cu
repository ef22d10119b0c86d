#include "common.h"
// if/else, if-only, nested divergence, early return.
__global__ void if_else(int *out, const int *in, int n) {
  int i = GTID;
  if (i >= n) return;
  int v = in[i];
  if (v & 1)
    out[i] = v * 3 + 1;
  else
    out[i] = v / 2;
}
__global__ void if_only(int *out, const int *in) {
  int i = GTID;
  int v = in[i];
  if (v > 10) v = v - 10;
  out[i] = v;
}
__global__ void nested(int *out, const int *in) {
  int i = GTID;
  int v = in[i];
  int r = 0;
  if (v > 0) {
    if (v > 100) r = v * v;
    else r = v + 7;
    r ^= i;
  } else {
    if (v < -100) r = -v;
  }
  out[i] = r;
}
__global__ void loop_divergent(int *out, const int *in, int n) {
  int i = GTID;
  int v = in[i];
  int steps = 0;
  while (v != 1 && steps < n) {
    if (v & 1) v = 3 * v + 1; else v >>= 1;
    steps++;
  }
  out[i] = steps;
}
__global__ void loop_break(float *out, const float *in, int n) {
  int i = GTID;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) {
    float x = in[i * n + k];
    if (x < 0.0f) break;
    acc += x;
  }
  out[i] = acc;
}
__global__ void multi_ret(int *out, const int *in) {
  int i = GTID;
  int v = in[i];
  if (v == 0) { out[i] = 1; return; }
  if (v == 1) { out[i] = 2; return; }
  out[i] = v;
}
