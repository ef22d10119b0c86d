// Back-propagation layer (the shape of Rodinia's backprop): an input layer of n units feeds
// H = 16 hidden units through an (n+1) x (H+1) weight matrix (row 0 and column 0 are the
// bias row/column, as in the original network layout).
//  - backprop_forward: grid (1, n/16) of 16x16 CTAs. CTA `by` takes input units
//    16*by+1 .. 16*by+16 (rows) against the 16 hidden units (columns). Only the tx == 0
//    column loads the inputs into shared memory (a programmatic branch that diverges in
//    every warp alike), every thread multiplies its weight by its row's input, and a
//    shared-memory tree sums the 16 rows: level i keeps the rows with ty % 2^i == 0 (half of
//    the warps' lanes drop out per level, the same way in every warp). Column tx of row 0
//    then holds the CTA's partial sum for hidden unit tx, which the tx == 0 lanes write out
//    transposed (partial[by * H + ty] = sum[ty]), as the original does.
//  - backprop_adjust: the weight update w += eta * delta[j] * x[i] + momentum * dw_old with
//    the new step kept in `oldw`; the bias row (row 0) is updated by the ty == 0 threads of
//    CTA 0 only.
#include "common.h"
#define H 16 // hidden units = CTA width and height
#define LOG2_H 4

KERNEL backprop_forward(const float *RESTRICT input, const float *RESTRICT weights,
                        float *RESTRICT partial) {
  __shared__ float node[H];
  __shared__ float prod[H][H];
  int by = CTAID_Y, tx = TID_X, ty = TID_Y;
  int row = H * by + ty + 1;             // input unit (row 0 is the bias)
  int w = row * (H + 1) + tx + 1;        // weight of (input row, hidden unit tx + 1)
  if (tx == 0)
    node[ty] = input[row];
  __syncthreads();
  prod[ty][tx] = weights[w] * node[ty];
  __syncthreads();
  for (int i = 1; i <= LOG2_H; i++) {
    int step = 1 << i;
    if (ty % step == 0)
      prod[ty][tx] = prod[ty][tx] + prod[ty + step / 2][tx];
    __syncthreads();
  }
  if (tx == 0)
    partial[by * H + ty] = prod[0][ty];
}

KERNEL backprop_adjust(const float *RESTRICT delta, const float *RESTRICT input,
                       float *RESTRICT weights, float *RESTRICT oldw, float eta,
                       float momentum) {
  int by = CTAID_Y, tx = TID_X, ty = TID_Y;
  int row = H * by + ty + 1;
  int col = tx + 1;
  int w = row * (H + 1) + col;
  // step = momentum * oldw + (eta * delta) * x: the product feeds the fma's addend.
  float step = FMA(momentum, oldw[w], eta * delta[col] * input[row]);
  weights[w] = weights[w] + step;
  oldw[w] = step;
  __syncthreads();
  if (ty == 0 && by == 0) {
    float b = FMA(momentum, oldw[col], eta * delta[col]);
    weights[col] = weights[col] + b;
    oldw[col] = b;
  }
}
