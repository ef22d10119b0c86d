// 2D 5-point Jacobi step on a width x height grid (row-major), block 32x8. Boundary cells
// are copied; interior cells get c1 * ((N + S) + (W + E)) + c0 * centre. The host
// ping-pongs two buffers for several iterations. The product c0 * centre only feeds the
// explicit FMA's addend, so it stays a separately rounded mul.f32.
#include "common.h"

KERNEL stencil2d(const float *RESTRICT in, float *RESTRICT out, int width, int height,
                 float c0, float c1) {
  int x = CTAID_X * NTID_X + TID_X;
  int y = CTAID_Y * NTID_Y + TID_Y;
  if (x >= width || y >= height)
    return;
  int i = y * width + x;
  if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
    out[i] = in[i];
  } else {
    float ns = in[i - width] + in[i + width];
    float we = in[i - 1] + in[i + 1];
    out[i] = FMA(c1, ns + we, c0 * in[i]);
  }
}
