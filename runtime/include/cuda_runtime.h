/* warpforge's CUDA runtime header: what CUDA programs include, for clang++-14 -x cuda
 * -nocudainc (no CUDA SDK). Host declarations are implemented by libwarpforge_cuda
 * (runtime/src), which runs kernels on the simulated GPU; device declarations map to
 * NVPTX builtins the warpforge PTX front end supports. */
#ifndef __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_H__
#define __DRIVER_TYPES_H__
#define __CUDA_RUNTIME_API_H__
#define __VECTOR_TYPES_H__
#define CUDART_VERSION 10010
#define CUDA_VERSION 10010
#define __CUDACC__ 1
#ifndef __NVCC__
#define __NVCC__ 1
#endif

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
#define CUDART_CB

#ifdef __cplusplus
extern "C" {
#endif

/* ---- driver types ---- */
typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidHostPointer = 16,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidTexture = 18,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorMissingConfiguration = 52,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorNoKernelImageForDevice = 209,
  cudaErrorInvalidPtx = 218,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorAssert = 710,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999
} cudaError_t;
typedef cudaError_t CUresult;
#define CUDA_SUCCESS cudaSuccess

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrTextureAlignment = 14,
  cudaDevAttrGpuOverlap = 15,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrKernelExecTimeout = 17,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrComputeMode = 20,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83
};

enum cudaComputeMode { cudaComputeModeDefault = 0, cudaComputeModeExclusive = 1, cudaComputeModeProhibited = 2, cudaComputeModeExclusiveProcess = 3 };
enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2, cudaFuncCachePreferEqual = 3 };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault = 0, cudaSharedMemBankSizeFourByte = 1, cudaSharedMemBankSizeEightByte = 2 };

#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceMapHost 0x08

/* Field order is this runtime's own (runtime/src/props.rs mirrors it); programs use names. */
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  size_t sharedMemPerBlockOptin;
};

/* ---- textures (texture references on linear memory: cudaBindTexture + tex1Dfetch) ---- */
enum cudaChannelFormatKind { cudaChannelFormatKindSigned = 0, cudaChannelFormatKindUnsigned = 1, cudaChannelFormatKindFloat = 2, cudaChannelFormatKindNone = 3 };
struct cudaChannelFormatDesc { int x; int y; int z; int w; enum cudaChannelFormatKind f; };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
enum cudaTextureAddressMode { cudaAddressModeWrap = 0, cudaAddressModeClamp = 1, cudaAddressModeMirror = 2, cudaAddressModeBorder = 3 };
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
#define cudaTextureType1D 0x01
struct textureReference {
  int normalized;
  enum cudaTextureFilterMode filterMode;
  enum cudaTextureAddressMode addressMode[3];
  struct cudaChannelFormatDesc channelDesc;
  int sRGB;
  unsigned int maxAnisotropy;
  enum cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  int __cudaReserved[15];
};
enum cudaLimit { cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2 };

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUfunc_st *cudaFunction_t;
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void *userData);

struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
};

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- vector types ---- */
#define __WF_VEC2(T, N, A) struct __attribute__((aligned(A))) N##2 { T x, y; }; typedef struct N##2 N##2;
#define __WF_VEC3(T, N) struct N##3 { T x, y, z; }; typedef struct N##3 N##3;
#define __WF_VEC4(T, N, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; typedef struct N##4 N##4;
#define __WF_VECS(T, N, A2, A4) __WF_VEC2(T, N, A2) __WF_VEC3(T, N) __WF_VEC4(T, N, A4)
__WF_VECS(char, char, 2, 4)
__WF_VECS(unsigned char, uchar, 2, 4)
__WF_VECS(short, short, 4, 8)
__WF_VECS(unsigned short, ushort, 4, 8)
__WF_VECS(int, int, 8, 16)
__WF_VECS(unsigned int, uint, 8, 16)
__WF_VECS(long long, longlong, 16, 16)
__WF_VECS(unsigned long long, ulonglong, 16, 16)
__WF_VECS(float, float, 8, 16)
__WF_VECS(double, double, 16, 16)
#define __WF_MAKE2(N, T) static __inline__ __host__ __device__ N##2 make_##N##2(T x, T y) { N##2 v; v.x = x; v.y = y; return v; }
#define __WF_MAKE3(N, T) static __inline__ __host__ __device__ N##3 make_##N##3(T x, T y, T z) { N##3 v; v.x = x; v.y = y; v.z = z; return v; }
#define __WF_MAKE4(N, T) static __inline__ __host__ __device__ N##4 make_##N##4(T x, T y, T z, T w) { N##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
#define __WF_MAKES(N, T) __WF_MAKE2(N, T) __WF_MAKE3(N, T) __WF_MAKE4(N, T)
__WF_MAKES(char, char) __WF_MAKES(uchar, unsigned char) __WF_MAKES(short, short)
__WF_MAKES(ushort, unsigned short) __WF_MAKES(int, int) __WF_MAKES(uint, unsigned int)
__WF_MAKES(longlong, long long) __WF_MAKES(ulonglong, unsigned long long)
__WF_MAKES(float, float) __WF_MAKES(double, double)

#ifdef __cplusplus
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ constexpr operator uint3() const { return uint3{x, y, z}; }
};
#else
typedef struct dim3 { unsigned int x, y, z; } dim3;
#endif
typedef struct dim3 dim3;

/* ---- device-side printf: clang turns printf into vprintf(fmt, packed args), which the
 * model runs natively (its output is printed after each launch) ---- */
#ifdef __cplusplus
extern "C" {
#endif
__device__ int vprintf(const char *, const char *);
__device__ int printf(const char *, ...);
#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- runtime API (libwarpforge_cuda) ---- */
#ifdef __cplusplus
extern "C" {
#endif
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol);
cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaThreadExit(void);
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config);
cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config);
cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache config);
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaRuntimeGetVersion(int *version);

cudaError_t cudaBindTexture(size_t *offset, const struct textureReference *texref, const void *devPtr, const struct cudaChannelFormatDesc *desc, size_t size);
cudaError_t cudaUnbindTexture(const struct textureReference *texref);
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit);
static __inline__ __host__ struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f) {
  struct cudaChannelFormatDesc d; d.x = x; d.y = y; d.z = z; d.w = w; d.f = f; return d;
}

cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);

cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);

cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

#ifdef __cplusplus
cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0, cudaStream_t stream = 0);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0, void *stream = 0);
#else
cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem, cudaStream_t stream);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream);
#endif
cudaError_t cudaSetupArgument(const void *arg, size_t size, size_t offset);
cudaError_t cudaLaunch(const void *func);
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
#ifdef __cplusplus
} /* extern "C" */

/* C++ conveniences of the real runtime. */
template <class T> static __inline__ cudaError_t cudaMalloc(T **devPtr, size_t size) { return cudaMalloc((void **)devPtr, size); }
template <class T> static __inline__ cudaError_t cudaMallocHost(T **ptr, size_t size) { return cudaMallocHost((void **)ptr, size); }
template <class T> static __inline__ cudaError_t cudaHostAlloc(T **ptr, size_t size, unsigned int flags) { return cudaHostAlloc((void **)ptr, size, flags); }
template <class T> static __inline__ cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count, size_t offset = 0, enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) { return cudaMemcpyToSymbol((const void *)&symbol, src, count, offset, kind); }
template <class T> static __inline__ cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count, size_t offset = 0, enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) { return cudaMemcpyFromSymbol(dst, (const void *)&symbol, count, offset, kind); }
template <class T> static __inline__ cudaError_t cudaGetSymbolAddress(void **devPtr, const T &symbol) { return cudaGetSymbolAddress(devPtr, (const void *)&symbol); }
template <class T> static __inline__ cudaError_t cudaFuncSetCacheConfig(T *func, enum cudaFuncCache config) { return cudaFuncSetCacheConfig((const void *)func, config); }
template <class T> static __inline__ cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *func) { return cudaFuncGetAttributes(attr, (const void *)func); }
static __inline__ cudaError_t cudaEventCreate(cudaEvent_t *event, unsigned int flags) { return cudaEventCreateWithFlags(event, flags); }

/* Texture references: the channel format of each element type, the texture<> template
 * (clang turns a texture<> variable into a PTX .texref and registers it), and binding. */
template <class T> static __inline__ __host__ cudaChannelFormatDesc cudaCreateChannelDesc(void) { return cudaCreateChannelDesc(0, 0, 0, 0, cudaChannelFormatKindNone); }
#define __WF_CHDESC(T, X, Y, Z, W, K) template <> __inline__ __host__ cudaChannelFormatDesc cudaCreateChannelDesc<T>(void) { return cudaCreateChannelDesc(X, Y, Z, W, K); }
#define __WF_CHDESC_INT(T, B, K) __WF_CHDESC(T##1, B, 0, 0, 0, K) __WF_CHDESC(T##2, B, B, 0, 0, K) __WF_CHDESC(T##4, B, B, B, B, K)
struct char1 { signed char x; }; struct uchar1 { unsigned char x; }; struct short1 { short x; }; struct ushort1 { unsigned short x; };
struct int1 { int x; }; struct uint1 { unsigned int x; }; struct float1 { float x; };
__WF_CHDESC(char, 8, 0, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC(signed char, 8, 0, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC(unsigned char, 8, 0, 0, 0, cudaChannelFormatKindUnsigned)
__WF_CHDESC(char1, 8, 0, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC(char2, 8, 8, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC(char4, 8, 8, 8, 8, cudaChannelFormatKindSigned)
__WF_CHDESC_INT(uchar, 8, cudaChannelFormatKindUnsigned)
__WF_CHDESC(short, 16, 0, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC(short1, 16, 0, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC(short2, 16, 16, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC(short4, 16, 16, 16, 16, cudaChannelFormatKindSigned)
__WF_CHDESC(unsigned short, 16, 0, 0, 0, cudaChannelFormatKindUnsigned)
__WF_CHDESC_INT(ushort, 16, cudaChannelFormatKindUnsigned)
__WF_CHDESC(int, 32, 0, 0, 0, cudaChannelFormatKindSigned)
__WF_CHDESC_INT(int, 32, cudaChannelFormatKindSigned)
__WF_CHDESC(unsigned int, 32, 0, 0, 0, cudaChannelFormatKindUnsigned)
__WF_CHDESC_INT(uint, 32, cudaChannelFormatKindUnsigned)
__WF_CHDESC(float, 32, 0, 0, 0, cudaChannelFormatKindFloat)
__WF_CHDESC_INT(float, 32, cudaChannelFormatKindFloat)
#undef __WF_CHDESC_INT
#undef __WF_CHDESC

template <class T, int texType = cudaTextureType1D, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct __attribute__((device_builtin_texture_type)) texture : public textureReference {
  __host__ texture(int norm = 0, enum cudaTextureFilterMode fMode = cudaFilterModePoint, enum cudaTextureAddressMode aMode = cudaAddressModeClamp) {
    normalized = norm; filterMode = fMode;
    addressMode[0] = aMode; addressMode[1] = aMode; addressMode[2] = aMode;
    channelDesc = cudaCreateChannelDesc<T>(); sRGB = 0;
  }
  __host__ texture(int norm, enum cudaTextureFilterMode fMode, enum cudaTextureAddressMode aMode, struct cudaChannelFormatDesc desc) {
    normalized = norm; filterMode = fMode;
    addressMode[0] = aMode; addressMode[1] = aMode; addressMode[2] = aMode;
    channelDesc = desc; sRGB = 0;
  }
};
template <class T, int dim, enum cudaTextureReadMode readMode>
static __inline__ __host__ cudaError_t cudaBindTexture(size_t *offset, const struct texture<T, dim, readMode> &tex, const void *devPtr, size_t size = ~(size_t)0) { return cudaBindTexture(offset, &tex, devPtr, &tex.channelDesc, size); }
template <class T, int dim, enum cudaTextureReadMode readMode>
static __inline__ __host__ cudaError_t cudaBindTexture(size_t *offset, const struct texture<T, dim, readMode> &tex, const void *devPtr, const struct cudaChannelFormatDesc &desc, size_t size = ~(size_t)0) { return cudaBindTexture(offset, &tex, devPtr, &desc, size); }
template <class T, int dim, enum cudaTextureReadMode readMode>
static __inline__ __host__ cudaError_t cudaUnbindTexture(const struct texture<T, dim, readMode> &tex) { return cudaUnbindTexture(&tex); }
#endif

#include "__warpforge_device.h"

#endif /* __CUDA_RUNTIME_H__ */
