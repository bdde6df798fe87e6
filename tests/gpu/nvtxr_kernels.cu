// GPU check: kernels launched inside nvtxr's ranges, for Nsight Compute's
// NVTX filters (`ncu --nvtx --nvtx-include ...`). Run by tests/gpu/check.sh
// on a machine with a GPU; the same sequence as nvtx3_kernels.cu, which uses
// NVIDIA's header.
#include <cstdio>
#include <cuda_runtime.h>
#include "kernels.cuh"
#include "nvtxr.h"

int main() {
    float *x = nullptr;
    if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess) return 2;
    nvtxr_domain_t *train = nvtxr_domain_create("train");
    const nvtxr_string_t *backward = nvtxr_string_register(train, "backward");

    nvtxr_range_push(nullptr, "setup");
    run(k_setup, x);
    nvtxr_range_pop(nullptr);

    nvtxr_range_push(train, "forward");
    run(k_forward, x);
    nvtxr_range_push_string(train, backward);
    run(k_backward, x);
    nvtxr_range_pop(train);
    nvtxr_range_pop(train);

    uint64_t epoch = nvtxr_range_start(nullptr, "epoch");
    run(k_epoch, x);
    nvtxr_range_end(nullptr, epoch);

    run(k_outside, x);
    nvtxr_mark(train, "done");
    std::printf("tool attached: %d\n", nvtxr_tool_attached() ? 1 : 0);
    nvtxr_domain_destroy(train);
    return cudaFree(x) == cudaSuccess ? 0 : 3;
}
