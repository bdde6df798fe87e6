/* NVTX counters through NVIDIA's counters extension (nvToolsExtCounters.h):
 * a dynamic and a static counter id, integer and floating-point samples.
 * The recording test checks that `nvtxr record` shows every sample. */
#include <nvtx3/nvToolsExtCounters.h>

#include <stdint.h>
#include <stdio.h>

int main(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("train");
    nvtxCounterAttr_t batches = {0};
    batches.structSize = sizeof batches;
    batches.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_INT64;
    batches.name = "batches";
    uint64_t batch_id = nvtxCounterRegister(d, &batches);

    nvtxCounterAttr_t loss = batches;
    loss.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE;
    loss.name = "loss";
    loss.counterId = ((uint64_t)1 << 24) + 5;
    uint64_t loss_id = nvtxCounterRegister(d, &loss);

    for (int i = 0; i < 5; i++) {
        nvtxRangePushA("step");
        nvtxCounterSampleInt64(d, batch_id, 10 * i);
        nvtxCounterSampleFloat64(d, loss_id, 1.0 / (i + 1));
        nvtxRangePop();
    }
    printf("counters %s %llu\n", batch_id >= ((uint64_t)1 << 32) ? "dynamic" : "?", (unsigned long long)loss_id);
    return 0;
}
