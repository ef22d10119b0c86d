// Breadth-first search, Rodinia style: the frontier is a byte mask. Kernel 1 expands every
// frontier node over its CSR edges, kernel 2 turns the newly reached nodes into the next
// frontier and raises *over. The host relaunches both until *over stays 0.
#include "common.h"

KERNEL bfs_expand(const int *RESTRICT row_ptr, const int *RESTRICT edges,
                  unsigned char *mask, unsigned char *updating, const unsigned char *visited,
                  int *cost, int n) {
  int tid = CTAID_X * NTID_X + TID_X;
  if (tid < n && mask[tid]) {
    mask[tid] = 0;
    int end = row_ptr[tid + 1];
    for (int e = row_ptr[tid]; e < end; e++) {
      int id = edges[e];
      if (!visited[id]) {
        cost[id] = cost[tid] + 1;
        updating[id] = 1;
      }
    }
  }
}

KERNEL bfs_update(unsigned char *mask, unsigned char *updating, unsigned char *visited,
                  int *over, int n) {
  int tid = CTAID_X * NTID_X + TID_X;
  if (tid < n && updating[tid]) {
    mask[tid] = 1;
    visited[tid] = 1;
    *over = 1;
    updating[tid] = 0;
  }
}
