/* Deferred events through NVIDIA's payload extension (nvToolsExtPayload.h):
 * a range whose begin and end were taken with nvtxTimestampGet around other
 * work (a mark made in between) and submitted afterwards; a batch of marks
 * stamped with CLOCK_MONOTONIC ns (a time semantic); an event in a time
 * domain nvtxr does not convert. The recording test checks each one's time
 * and fields. */
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSemanticsTime.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct {
    int64_t begin;
    int64_t end;
    const char* name;
    int32_t step;
} span_t;

typedef struct {
    int64_t at;
    int32_t value;
} sample_t;

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("deferred");

    nvtxPayloadSchemaEntry_t span_entries[] = {
        {NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_RANGE_BEGIN, NVTX_PAYLOAD_ENTRY_TYPE_INT64,
         "begin", NULL, 0, offsetof(span_t, begin), NULL, NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_RANGE_END, NVTX_PAYLOAD_ENTRY_TYPE_INT64, "end",
         NULL, 0, offsetof(span_t, end), NULL, NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_EVENT_MESSAGE, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "name", NULL, 0,
         offsetof(span_t, name), NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "step", NULL, 0, offsetof(span_t, step), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t span_attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE,
        NULL, NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, NVTX_PAYLOAD_SCHEMA_FLAG_RANGE_STARTEND, span_entries, 4,
        sizeof(span_t), 0, 0, NULL};
    uint64_t span_schema = nvtxPayloadSchemaRegister(d, &span_attr);

    nvtxSemanticsTime_t monotonic = {{sizeof monotonic, NVTX_SEMANTIC_ID_TIME_V1, NVTX_TIME_SEMANTIC_VERSION, NULL},
                                     NVTX_TIMESTAMP_TYPE_CPU_CLOCK_GETTIME_MONOTONIC};
    nvtxPayloadSchemaEntry_t sample_entries[] = {
        {NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_MARK, NVTX_PAYLOAD_ENTRY_TYPE_INT64, "at", NULL,
         0, offsetof(sample_t, at), &monotonic.header, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "value", NULL, 0, offsetof(sample_t, value), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t sample_attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE,
        "sample", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, 0, sample_entries, 2, sizeof(sample_t), 0, 0, NULL};
    uint64_t sample_schema = nvtxPayloadSchemaRegister(d, &sample_attr);

    /* A range around a mark, submitted afterwards. */
    span_t span = {nvtxTimestampGet(), 0, "deferred work", 7};
    nvtxDomainMarkEx(d, &(nvtxEventAttributes_t){.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                                 .messageType = NVTX_MESSAGE_TYPE_ASCII,
                                                 .message.ascii = "in between"});
    span.end = nvtxTimestampGet();
    nvtxPayloadData_t pd = {span_schema, sizeof span, &span};
    nvtxMarkA("before submit");
    nvtxEventSubmit(d, &pd, 1);

    /* Three marks stamped 1 ms apart on CLOCK_MONOTONIC, in one batch. */
    int64_t t0 = monotonic_ns() - 10000000;
    sample_t samples[3] = {{t0, 1}, {t0 + 1000000, 2}, {t0 + 2000000, 3}};
    nvtxEventBatch_t batch;
    memset(&batch, 0, sizeof batch);
    batch.eventSchemaId = sample_schema;
    batch.size = sizeof samples;
    batch.events = samples;
    nvtxEventBatchSubmit(d, &batch);

    /* A time domain nvtxr does not convert: recorded now, with the reason. */
    nvtxSemanticsTime_t unknown = monotonic;
    unknown.timeDomainId = NVTX_TIMESTAMP_TYPE_CPU_CLOCK_GETTIME_REALTIME;
    sample_entries[0].semantics = &unknown.header;
    sample_attr.name = "realtime";
    uint64_t realtime_schema = nvtxPayloadSchemaRegister(d, &sample_attr);
    sample_t late = {12345, 4};
    nvtxPayloadData_t late_pd = {realtime_schema, sizeof late, &late};
    nvtxEventSubmit(d, &late_pd, 1);
    printf("deferred events submitted\n");
    return 0;
}
