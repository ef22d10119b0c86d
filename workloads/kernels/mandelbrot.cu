// Escape-time Mandelbrot set: per-pixel iteration counts differ wildly, so warps diverge
// and lanes wait on the slowest one. The arithmetic is written with explicit FMAs (plain
// products only feed FMA addends) so clang cannot fuse differently from the CPU reference
// and the counts match exactly.
#include "common.h"

KERNEL mandelbrot(int *RESTRICT iters, int width, int height, float x0, float y0, float dx,
                  float dy, int max_iter) {
  int px = CTAID_X * NTID_X + TID_X;
  int py = CTAID_Y * NTID_Y + TID_Y;
  if (px >= width || py >= height)
    return;
  float cx = FMA((float)px, dx, x0);
  float cy = FMA((float)py, dy, y0);
  float x = 0.0f, y = 0.0f;
  int i = 0;
  while (i < max_iter) {
    float xx = x * x;
    float yy = y * y;
    if (FMA(y, y, xx) > 4.0f) // |z|^2
      break;
    float xn = FMA(x, x, -yy) + cx; // x^2 - y^2 + cx
    y = FMA(x + x, y, cy);          // 2xy + cy
    x = xn;
    i++;
  }
  iters[py * width + px] = i;
}
