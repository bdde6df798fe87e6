/* NVTX counters beyond scalar samples, through NVIDIA's counters extension
 * (nvToolsExtCounters.h): a group of counters sampled in its schema's
 * layout, "no value" samples, and batches of samples taken earlier (one
 * timestamp each, and a first time with an interval). The recording test
 * checks every series' values and times. */
#include <nvtx3/nvToolsExtCounters.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint32_t util;
    double temp;
} gpu_t;

static void pause_ms(void) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
}

int main(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("hw");

    nvtxPayloadSchemaEntry_t fields[] = {
        {NVTX_PAYLOAD_ENTRY_FLAG_COUNTER, NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "util", NULL, 0, offsetof(gpu_t, util), NULL,
         NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_COUNTER, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "temp", NULL, 0, offsetof(gpu_t, temp), NULL,
         NULL},
    };
    nvtxPayloadSchemaAttr_t group = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE,
        NULL, NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, NVTX_PAYLOAD_SCHEMA_FLAG_COUNTER_GROUP, fields, 2, sizeof(gpu_t), 0, 0,
        NULL};
    nvtxCounterAttr_t gpu_attr = {0};
    gpu_attr.structSize = sizeof gpu_attr;
    gpu_attr.schemaId = nvtxPayloadSchemaRegister(d, &group);
    gpu_attr.name = "gpu";
    uint64_t gpu = nvtxCounterRegister(d, &gpu_attr);
    gpu_t a = {50, 70.5}, b = {60, 71.5};
    nvtxCounterSample(d, gpu, &a, sizeof a);
    nvtxCounterSample(d, gpu, &b, sizeof b);

    nvtxCounterAttr_t queue_attr = gpu_attr;
    queue_attr.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_INT64;
    queue_attr.name = "queue";
    uint64_t queue = nvtxCounterRegister(d, &queue_attr);
    nvtxCounterSampleInt64(d, queue, 5);
    nvtxCounterSampleNoValue(d, queue, NVTX_COUNTER_SAMPLE_ZERO);
    nvtxCounterSampleNoValue(d, queue, NVTX_COUNTER_SAMPLE_UNCHANGED);

    /* Three losses, each stamped right after a mark, submitted together. */
    nvtxCounterAttr_t loss_attr = gpu_attr;
    loss_attr.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE;
    loss_attr.name = "loss";
    uint64_t loss = nvtxCounterRegister(d, &loss_attr);
    double losses[3] = {0.5, 0.25, 0.125};
    int64_t stamps[3];
    for (int i = 0; i < 3; i++) {
        nvtxDomainMarkEx(d, &(nvtxEventAttributes_t){.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                                     .messageType = NVTX_MESSAGE_TYPE_ASCII, .message.ascii = "step"});
        stamps[i] = nvtxTimestampGet();
        pause_ms();
    }
    nvtxCounterBatch_t batch;
    memset(&batch, 0, sizeof batch);
    batch.counterId = loss;
    batch.counters = losses;
    batch.countersSize = sizeof losses;
    batch.timestamps = stamps;
    batch.timestampsSize = sizeof stamps;
    nvtxCounterBatchSubmit(d, &batch);

    /* Four rates, evenly spaced from a first time. */
    nvtxCounterAttr_t rate_attr = queue_attr;
    rate_attr.name = "rate";
    uint64_t rate = nvtxCounterRegister(d, &rate_attr);
    int64_t rates[4] = {10, 20, 30, 40};
    int64_t begin = nvtxTimestampGet();
    pause_ms();
    int64_t pair[2] = {begin, nvtxTimestampGet() - begin};
    batch.counterId = rate;
    batch.counters = rates;
    batch.countersSize = sizeof rates;
    batch.flags = NVTX_COUNTER_BATCH_FLAG_BEGINTIME_INTERVAL_PAIR;
    batch.timestamps = pair;
    batch.timestampsSize = sizeof pair;
    nvtxCounterBatchSubmit(d, &batch);
    printf("counters sampled\n");
    return 0;
}
