// GPU check: a CUDA graph launched inside an nvtxr range. Its two kernels
// are captured from a stream outside any range, then run by one
// cudaGraphLaunch inside "graph": CUPTI gives each node the graph launch's
// correlation id, so each is under "graph", with a flow of its own from the
// launch. Run by tests/gpu/check.sh on a machine with a GPU.
#include <cstdio>
#include <cuda_runtime.h>
#include "nvtxr.h"

__global__ void k_node1(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_node2(float *x) { x[threadIdx.x] *= 2.0f; }

int main() {
    float *x = nullptr;
    cudaStream_t stream;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess) return 2;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    k_node1<<<1, 32, 0, stream>>>(x);
    k_node2<<<1, 32, 0, stream>>>(x);
    cudaStreamEndCapture(stream, &graph);
    if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) return 3;
    nvtxr_range_push(nullptr, "graph");
    cudaGraphLaunch(exec, stream);
    nvtxr_range_pop(nullptr);
    cudaStreamSynchronize(stream);
    std::printf("graph launched: %s\n", cudaGetErrorString(cudaGetLastError()));
    return cudaFree(x) == cudaSuccess ? 0 : 4;
}
