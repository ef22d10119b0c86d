/* warpforge: profiler control (no-ops; the simulator reports every launch at exit). */
#ifndef __CUDA_PROFILER_API_H__
#define __CUDA_PROFILER_API_H__
#include "cuda_runtime.h"
#ifdef __cplusplus
extern "C" {
#endif
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
#ifdef __cplusplus
}
#endif
#endif
