// y = A x with A in CSR, one thread per row (scalar CSR): row lengths vary, so lanes of a
// warp loop different trip counts and gather x irregularly.
#include "common.h"

KERNEL spmv_csr(int rows, const int *RESTRICT row_ptr, const int *RESTRICT cols,
                const float *RESTRICT vals, const float *RESTRICT x, float *RESTRICT y) {
  int r = CTAID_X * NTID_X + TID_X;
  if (r < rows) {
    float sum = 0.0f;
    int end = row_ptr[r + 1];
    for (int j = row_ptr[r]; j < end; j++)
      sum = FMA(vals[j], x[cols[j]], sum);
    y[r] = sum;
  }
}
