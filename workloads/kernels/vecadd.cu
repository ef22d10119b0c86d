// c[i] = a[i] + b[i]: the regular, fully coalesced baseline.
#include "common.h"

KERNEL vecadd(const float *RESTRICT a, const float *RESTRICT b, float *RESTRICT c, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i < n)
    c[i] = a[i] + b[i];
}
