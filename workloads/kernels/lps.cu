// 3-D Laplace solver, one Jacobi sweep per launch (the shape of the GPGPU-Sim suite's LPS):
// u2 = mean of the six neighbours of u1 inside an nx x ny x nz grid, boundary points copied.
// CTAs of 32x4 threads tile the x-y plane; each thread marches along z. Threads outside the
// grid (nx, ny need not be multiples of the CTA) do nothing, threads on the x/y faces and the
// k = 0 / nz-1 planes take the copy path, the rest the six-point average: lanes 0 and 31 of
// the warps on the x faces diverge from their neighbours on every plane.
#include "common.h"

KERNEL lps_jacobi(const float *RESTRICT u1, float *RESTRICT u2, int nx, int ny, int nz) {
  int i = CTAID_X * NTID_X + TID_X;
  int j = CTAID_Y * NTID_Y + TID_Y;
  if (i >= nx || j >= ny)
    return;
  int plane = nx * ny;
  int idx = j * nx + i;
  bool face = i == 0 || i == nx - 1 || j == 0 || j == ny - 1;
  for (int k = 0; k < nz; k++) {
    if (face || k == 0 || k == nz - 1) {
      u2[idx] = u1[idx];
    } else {
      float s = u1[idx - 1] + u1[idx + 1];
      s = s + u1[idx - nx];
      s = s + u1[idx + nx];
      s = s + u1[idx - plane];
      s = s + u1[idx + plane];
      u2[idx] = s * (1.0f / 6.0f);
    }
    idx += plane;
  }
}
