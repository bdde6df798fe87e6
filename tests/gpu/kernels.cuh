// The GPU check's kernels, launched one at a time, for nvtxr_kernels.cu and
// nvtx3_kernels.cu (the same sequence through nvtxr.h and NVIDIA's header).
#include <cuda_runtime.h>

__global__ void k_setup(float *x) { x[threadIdx.x] = 1.0f; }
__global__ void k_forward(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void k_backward(float *x) { x[threadIdx.x] -= 1.0f; }
__global__ void k_epoch(float *x) { x[threadIdx.x] += 3.0f; }
__global__ void k_outside(float *x) { x[threadIdx.x] = 0.0f; }

static void run(void (*kernel)(float *), float *x) {
    kernel<<<1, 32>>>(x);
    cudaDeviceSynchronize();
}
