// Escape-time Mandelbrot set: per-pixel iteration counts differ wildly, so warps diverge
// and lanes wait on the slowest one. Multiplies use FMUL (no fusing) so the CPU reference
// reproduces every rounding and the counts match exactly.
#include "common.h"

KERNEL mandelbrot(int *RESTRICT iters, int width, int height, float x0, float y0, float dx,
                  float dy, int max_iter) {
  int px = CTAID_X * NTID_X + TID_X;
  int py = CTAID_Y * NTID_Y + TID_Y;
  if (px >= width || py >= height)
    return;
  float cx = x0 + FMUL((float)px, dx);
  float cy = y0 + FMUL((float)py, dy);
  float x = 0.0f, y = 0.0f;
  int i = 0;
  while (i < max_iter) {
    float xx = FMUL(x, x);
    float yy = FMUL(y, y);
    if (xx + yy > 4.0f)
      break;
    float xy = FMUL(x, y);
    y = (xy + xy) + cy;
    x = (xx - yy) + cx;
    i++;
  }
  iters[py * width + px] = i;
}
