// GPU check: the sequence of nvtxr_kernels.cu through NVIDIA's NVTX 3 header.
// Built three ways by tests/gpu/check.sh: header-only with NVIDIA's own
// loader (the reference), and -DNVTX_NO_IMPL linked against each of nvtxr's
// drop-ins (libnvtx3interop.so.1, libnvToolsExt.so.1).
#include <cstdio>
#include <cuda_runtime.h>
#include "kernels.cuh"
#include <nvtx3/nvToolsExt.h>

static nvtxEventAttributes_t registered(nvtxStringHandle_t message) {
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = message;
    return a;
}

static nvtxEventAttributes_t ascii(const char *message) {
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    return a;
}

int main() {
    float *x = nullptr;
    if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess) return 2;
    nvtxDomainHandle_t train = nvtxDomainCreateA("train");
    nvtxStringHandle_t backward = nvtxDomainRegisterStringA(train, "backward");

    nvtxRangePushA("setup");
    run(k_setup, x);
    nvtxRangePop();

    nvtxEventAttributes_t forward = ascii("forward");
    nvtxDomainRangePushEx(train, &forward);
    run(k_forward, x);
    nvtxEventAttributes_t back = registered(backward);
    nvtxDomainRangePushEx(train, &back);
    run(k_backward, x);
    nvtxDomainRangePop(train);
    nvtxDomainRangePop(train);

    nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
    run(k_epoch, x);
    nvtxRangeEnd(epoch);

    run(k_outside, x);
    nvtxEventAttributes_t done = ascii("done");
    nvtxDomainMarkEx(train, &done);
    std::printf("tool attached: n/a\n");
    nvtxDomainDestroy(train);
    return cudaFree(x) == cudaSuccess ? 0 : 3;
}
