/* Just enough of CUDA's driver API header for NVIDIA's nvToolsExtMemCudaRt.h
 * to compile where no CUDA toolkit is installed: the opaque handle it names.
 * Only tests/c/memory_cuda.c uses it; on a GPU machine the real header does
 * (tests/gpu/check.sh). */
#ifndef NVTXR_TEST_CUDA_STUB_H
#define NVTXR_TEST_CUDA_STUB_H
typedef struct CUarray_st *CUarray;
#endif
