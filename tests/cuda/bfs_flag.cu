// BFS in the shape of Rodinia's bfs: frontier masks, the host relaunches both kernels until
// a device flag stays clear. Checked against a CPU BFS.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <queue>

struct Node { int start; int count; };

__global__ void expand(const Node *nodes, const int *edges, bool *mask, bool *updating,
                       const bool *visited, int *cost, int n) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id < n && mask[id]) {
    mask[id] = false;
    for (int i = nodes[id].start; i < nodes[id].start + nodes[id].count; i++) {
      int nb = edges[i];
      if (!visited[nb]) {
        cost[nb] = cost[id] + 1;
        updating[nb] = true;
      }
    }
  }
}

__global__ void settle(bool *mask, bool *updating, bool *visited, bool *again, int n) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id < n && updating[id]) {
    mask[id] = true;
    visited[id] = true;
    *again = true;
    updating[id] = false;
  }
}

int main() {
  const int n = 3000, degree = 3;
  unsigned seed = 12345;
  auto rnd = [&]() { seed = seed * 1103515245u + 12345u; return (seed >> 8) % n; };
  std::vector<Node> nodes(n);
  std::vector<int> edges;
  for (int i = 0; i < n; i++) {
    nodes[i].start = edges.size();
    int d = 1 + rnd() % degree;
    for (int k = 0; k < d; k++) edges.push_back(rnd());
    edges.push_back((i + 1) % n == 0 ? 0 : i + 1 == n ? 0 : (i * 7 + 1) % n);
    nodes[i].count = edges.size() - nodes[i].start;
  }
  std::vector<char> mask(n, 0), visited(n, 0);
  std::vector<int> cost(n, -1);
  mask[0] = visited[0] = 1;
  cost[0] = 0;

  Node *d_nodes; int *d_edges, *d_cost; bool *d_mask, *d_upd, *d_vis, *d_again;
  cudaMalloc(&d_nodes, n * sizeof(Node));
  cudaMalloc(&d_edges, edges.size() * sizeof(int));
  cudaMalloc(&d_cost, n * sizeof(int));
  cudaMalloc(&d_mask, n); cudaMalloc(&d_upd, n); cudaMalloc(&d_vis, n); cudaMalloc(&d_again, 1);
  cudaMemcpy(d_nodes, nodes.data(), n * sizeof(Node), cudaMemcpyHostToDevice);
  cudaMemcpy(d_edges, edges.data(), edges.size() * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_cost, cost.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_mask, mask.data(), n, cudaMemcpyHostToDevice);
  cudaMemcpy(d_vis, visited.data(), n, cudaMemcpyHostToDevice);
  cudaMemset(d_upd, 0, n);
  int block = 256, grid = (n + block - 1) / block, levels = 0;
  bool again;
  do {
    again = false;
    cudaMemcpy(d_again, &again, 1, cudaMemcpyHostToDevice);
    expand<<<grid, block>>>(d_nodes, d_edges, d_mask, d_upd, d_vis, d_cost, n);
    settle<<<grid, block>>>(d_mask, d_upd, d_vis, d_again, n);
    cudaMemcpy(&again, d_again, 1, cudaMemcpyDeviceToHost);
    levels++;
  } while (again);
  if (cudaGetLastError() != cudaSuccess) { printf("FAIL: launch error\n"); return 1; }
  std::vector<int> gpu(n);
  cudaMemcpy(gpu.data(), d_cost, n * sizeof(int), cudaMemcpyDeviceToHost);

  std::vector<int> ref(n, -1);
  std::queue<int> q; q.push(0); ref[0] = 0;
  while (!q.empty()) {
    int u = q.front(); q.pop();
    for (int i = nodes[u].start; i < nodes[u].start + nodes[u].count; i++)
      if (ref[edges[i]] < 0) { ref[edges[i]] = ref[u] + 1; q.push(edges[i]); }
  }
  int bad = 0;
  for (int i = 0; i < n; i++) bad += gpu[i] != ref[i];
  printf("bfs: %d nodes, %d levels, %d mismatches\n", n, levels, bad);
  printf(bad ? "FAIL\n" : "PASS\n");
  cudaFree(d_nodes); cudaFree(d_edges); cudaFree(d_cost);
  return bad != 0;
}
