/* Just enough of CUDA's runtime header for NVIDIA's nvToolsExtMemCudaRt.h
 * to compile where no CUDA toolkit is installed: the opaque handles it
 * names (see cuda.h beside it). */
#ifndef NVTXR_TEST_CUDA_RUNTIME_STUB_H
#define NVTXR_TEST_CUDA_RUNTIME_STUB_H
typedef struct CUstream_st *cudaStream_t;
typedef struct cudaArray *cudaArray_t;
#endif
