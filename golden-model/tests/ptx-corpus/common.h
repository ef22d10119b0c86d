// Minimal CUDA-like definitions for clang-14 -nocudainc.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define TID_X __nvvm_read_ptx_sreg_tid_x()
#define TID_Y __nvvm_read_ptx_sreg_tid_y()
#define NTID_X __nvvm_read_ptx_sreg_ntid_x()
#define CTAID_X __nvvm_read_ptx_sreg_ctaid_x()
#define NCTAID_X __nvvm_read_ptx_sreg_nctaid_x()
#define GTID (CTAID_X * NTID_X + TID_X)
struct float4_ { float x, y, z, w; } __attribute__((aligned(16)));
struct int2_ { int x, y; } __attribute__((aligned(8)));
