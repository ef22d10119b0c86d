/* warpforge: the driver-API header programs include alongside the runtime's. */
#ifndef __WARPFORGE_CUDA_H__
#define __WARPFORGE_CUDA_H__
#include "cuda_runtime.h"
#endif
