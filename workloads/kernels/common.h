// Shared definitions for warpforge workload kernels. No CUDA headers are available (or
// needed): clang-14 is run with -nocudainc -nocudalib, so the CUDA keywords are spelled as
// the attributes they stand for and thread indices come from NVVM builtins.
#pragma once

#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
// Helpers must inline: the checked-in PTX may contain no `call` and no `.func`.
#define __device__ static __attribute__((device)) __attribute__((always_inline)) inline
#define KERNEL extern "C" __global__ void
#define RESTRICT __restrict__

#define TID_X ((int)__nvvm_read_ptx_sreg_tid_x())
#define TID_Y ((int)__nvvm_read_ptx_sreg_tid_y())
#define NTID_X ((int)__nvvm_read_ptx_sreg_ntid_x())
#define NTID_Y ((int)__nvvm_read_ptx_sreg_ntid_y())
#define CTAID_X ((int)__nvvm_read_ptx_sreg_ctaid_x())
#define CTAID_Y ((int)__nvvm_read_ptx_sreg_ctaid_y())
#define NCTAID_X ((int)__nvvm_read_ptx_sreg_nctaid_x())
#define NCTAID_Y ((int)__nvvm_read_ptx_sreg_nctaid_y())

// Floating point: clang compiles CUDA with -ffp-contract=fast, which fuses any float
// multiply feeding an add into fma.rn.f32 (the backend also lowers __nvvm_mul_rn_f to a
// plain fmul first, and `#pragma clang fp contract` is ignored). Kernels whose CPU
// reference must reproduce every rounding therefore write multiply-adds as explicit FMA
// (f32::mul_add in Rust) and use a plain `*` only where the product feeds an FMA's addend
// or a comparison, where it cannot be fused.
#define FMA(a, b, c) __builtin_fmaf((a), (b), (c))

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

// Atomics on generic addresses (shared or global; the backend picks the state space when
// it can prove it).
#define ATOMIC_ADD_I(p, v) __nvvm_atom_add_gen_i((int *)(p), (v))
#define ATOMIC_ADD_F(p, v) __nvvm_atom_add_gen_f((p), (v))
#define ATOMIC_MIN_I(p, v) __nvvm_atom_min_gen_i((p), (v))
#define ATOMIC_CAS_I(p, cmp, v) __nvvm_atom_cas_gen_i((p), (cmp), (v))

// Warp shuffle. The NVVM builtin needs the ptx60 target feature, which clang only enables
// when it finds a CUDA SDK; the instruction itself is plain PTX 6.0 (sm_70), so it is
// written as inline assembly (this is also how CUDA's own headers implement it).
__device__ int shfl_down_i32(int v, int delta) {
  int r;
  asm volatile("shfl.sync.down.b32 %0, %1, %2, 31, -1;" : "=r"(r) : "r"(v), "r"(delta));
  return r;
}
