// MUMmer-like exact matching of many short reads against a reference (the irregular,
// data-dependent shape of MUMmerGPU, with a suffix array in place of its suffix tree). One
// thread per query. Starting at offset s = 0 the thread finds the longest prefix of
// query[s..] that occurs in the reference by a binary search over the suffix array
// (each probe compares characters until the first mismatch, so its trip count depends on
// the data), keeps the match if it is at least MIN_MATCH long, and jumps past the
// mismatching character (s += length + 1). Reads copied from the reference with a few
// substitutions need few long searches, random reads many short ones: every loop level's
// trip count differs between neighbouring lanes.
//
// Output per query q: count[q] matches, and for match m < MAX_MATCHES at slot q*MAX_MATCHES+m
// its query offset, length and reference position. Of the two suffixes next to the
// insertion point the lower one wins ties.
#include "common.h"
#define MIN_MATCH 10
#define MAX_MATCHES 8

// Length of the common prefix of pattern p[0..plen) and the suffix of ref at pos.
__device__ int common_prefix(const unsigned char *ref, int rlen, int pos,
                             const unsigned char *p, int plen) {
  int m = 0;
  while (m < plen && pos + m < rlen && ref[pos + m] == p[m])
    m++;
  return m;
}

KERNEL mum_match(const unsigned char *RESTRICT ref, int rlen, const unsigned *RESTRICT sa,
                 const unsigned char *RESTRICT queries, const unsigned *RESTRICT qoff,
                 int nq, int *RESTRICT count, int *RESTRICT mstart, int *RESTRICT mlen,
                 int *RESTRICT mpos) {
  int q = CTAID_X * NTID_X + TID_X;
  if (q >= nq)
    return;
  const unsigned char *query = queries + qoff[q];
  int qlen = (int)(qoff[q + 1] - qoff[q]);
  int found = 0;
  for (int s = 0; s + MIN_MATCH <= qlen && found < MAX_MATCHES;) {
    const unsigned char *p = query + s;
    int plen = qlen - s;
    // First suffix that is not less than p (comparing at most plen characters).
    int lo = 0, hi = rlen;
    while (lo < hi) {
      int mid = (lo + hi) >> 1;
      int pos = (int)sa[mid];
      int m = common_prefix(ref, rlen, pos, p, plen);
      bool less = m < plen && (pos + m == rlen || ref[pos + m] < p[m]);
      if (less)
        lo = mid + 1;
      else
        hi = mid;
    }
    int best = 0, best_pos = 0;
    if (lo < rlen) {
      best_pos = (int)sa[lo];
      best = common_prefix(ref, rlen, best_pos, p, plen);
    }
    if (lo > 0) {
      int pos = (int)sa[lo - 1];
      int m = common_prefix(ref, rlen, pos, p, plen);
      if (m > best) {
        best = m;
        best_pos = pos;
      }
    }
    if (best >= MIN_MATCH) {
      int slot = q * MAX_MATCHES + found;
      mstart[slot] = s;
      mlen[slot] = best;
      mpos[slot] = best_pos;
      found++;
    }
    s += best + 1;
  }
  count[q] = found;
}
