// k-means assignment step (Rodinia-like): features are stored transposed
// (feature[d * npoints + p]) so loads coalesce; each thread loops over all centroids and
// keeps the nearest (first on ties). The host recomputes the centroids between launches.
#include "common.h"

KERNEL kmeans_assign(const float *RESTRICT features, const float *RESTRICT centroids,
                     int *RESTRICT membership, int npoints, int nclusters, int nfeatures) {
  int p = CTAID_X * NTID_X + TID_X;
  if (p >= npoints)
    return;
  int best = 0;
  float best_dist = 3.0e38f;
  for (int c = 0; c < nclusters; c++) {
    float dist = 0.0f;
    for (int d = 0; d < nfeatures; d++) {
      float diff = features[d * npoints + p] - centroids[c * nfeatures + d];
      dist = FMA(diff, diff, dist);
    }
    if (dist < best_dist) {
      best_dist = dist;
      best = c;
    }
  }
  membership[p] = best;
}
