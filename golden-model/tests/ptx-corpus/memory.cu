#include "common.h"
__device__ int g_counter = 5;
__device__ int g_table[4] = {1, 2, 3, 4};
__device__ float g_scale = 1.5f;
__device__ double g_d[2] = {2.5, -1.0};
__constant__ int c_coef[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__constant__ float c_f[2] = {0.5f, 0.25f};
__shared__ int s_module[64];

__global__ void shared_reverse(int *out, const int *in) {
  __shared__ int tile[128];
  int t = TID_X;
  tile[t] = in[GTID];
  __syncthreads();
  out[GTID] = tile[NTID_X - 1 - t] * c_coef[t & 7] + g_table[t & 3];
}
__global__ void module_shared(int *out) {
  int t = TID_X;
  s_module[t & 63] = t;
  __syncthreads();
  out[GTID] = s_module[(t + 1) & 63] + g_counter;
  if (t == 0) g_counter = g_counter + 1;
}
__global__ void atomics(int *out, float *fo, unsigned *uo) {
  __shared__ int s_cnt;
  __shared__ float s_f;
  int t = TID_X;
  if (t == 0) { s_cnt = 0; s_f = 0.0f; }
  __syncthreads();
  __nvvm_atom_add_gen_i(&s_cnt, 1);
  __nvvm_atom_add_gen_f(&s_f, 0.5f);
  __syncthreads();
  int old = __nvvm_atom_add_gen_i(&out[0], t);
  __nvvm_atom_min_gen_i(&out[1], t - 5);
  __nvvm_atom_max_gen_i(&out[2], t);
  __nvvm_atom_add_gen_f(&fo[0], 1.0f * t);
  __nvvm_atom_cas_gen_i(&out[3], 0, t);
  __nvvm_atom_xchg_gen_i(&out[4], old);
  __nvvm_atom_and_gen_i(&out[5], t);
  __nvvm_atom_or_gen_i(&out[6], t);
  __nvvm_atom_xor_gen_i(&out[7], t);
  __nvvm_atom_inc_gen_ui(&uo[0], 100u);
  __nvvm_atom_dec_gen_ui(&uo[1], 100u);
  __nvvm_atom_min_gen_ui(&uo[2], (unsigned)t);
  if (t == 0) { out[8] = s_cnt; fo[1] = s_f; }
}
__global__ void vectors(float4_ *o4, const float4_ *i4, int2_ *o2, const int2_ *i2) {
  int i = GTID;
  float4_ a = i4[i];
  float4_ b; b.x = a.w; b.y = a.z * 2.0f; b.z = a.y; b.w = a.x + 1.0f;
  o4[i] = b;
  int2_ c = i2[i];
  int2_ d; d.x = c.y; d.y = c.x - c.y;
  o2[i] = d;
}
__global__ void local_array(int *out, const int *in, int k) {
  int buf[16];
  int i = GTID;
  for (int j = 0; j < 16; j++) buf[j] = in[i + j] * j;
  out[i] = buf[k & 15] + buf[(k + 3) & 15];
}
__global__ void globals_f(float *out, double *dout) {
  int i = GTID;
  out[i] = g_scale * c_f[i & 1];
  dout[i] = g_d[i & 1] * 2.0;
}
