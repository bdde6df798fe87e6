/* Deferred events through NVIDIA's payload extension (nvToolsExtPayload.h):
 * a range whose begin and end were taken with nvtxTimestampGet around other
 * work (a mark made in between) and submitted afterwards; a batch of marks
 * stamped with CLOCK_MONOTONIC ns (a time semantic); an event in a time
 * domain nvtxr does not convert; marks stamped in registered time domains,
 * each related to CLOCK_MONOTONIC another way (sync points, a conversion
 * factor, a table of sync points to another registered domain, timer
 * sources), all taken at the instant of a "reference" mark. The recording
 * test checks each one's time and fields. */
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSemanticsTime.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "time_domains.h"

typedef struct {
    int64_t begin;
    int64_t end;
    const char* name;
    int32_t step;
} span_t;

/* A schema for a mark stamped in `time_domain`, named `name`. */
static uint64_t stamped_in(nvtxDomainHandle_t d, const char* name, uint64_t time_domain) {
    static nvtxSemanticsTime_t semantics[16];
    static int used;
    nvtxSemanticsTime_t* time = &semantics[used++];
    *time = (nvtxSemanticsTime_t){{sizeof *time, NVTX_SEMANTIC_ID_TIME_V1, NVTX_TIME_SEMANTIC_VERSION, NULL},
                                  time_domain};
    nvtxPayloadSchemaEntry_t entries[] = {
        {NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_MARK, NVTX_PAYLOAD_ENTRY_TYPE_INT64, "at", NULL,
         0, offsetof(sample_t, at), &time->header, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "value", NULL, 0, offsetof(sample_t, value), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE,
        name, NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, 0, entries, 2, sizeof(sample_t), 0, 0, NULL};
    return nvtxPayloadSchemaRegister(d, &attr);
}

static void submit_at(nvtxDomainHandle_t d, uint64_t schema, int64_t at, int32_t value) {
    sample_t sample = {at, value};
    nvtxPayloadData_t pd = {schema, sizeof sample, &sample};
    nvtxEventSubmit(d, &pd, 1);
}

static uint64_t time_domain(nvtxDomainHandle_t d, uint64_t id, int64_t resolution) {
    nvtxTimeDomainAttr_t attr = {NVTX_SCOPE_CURRENT_SW_THREAD, 0, id, NVTX_TIMER_FLAG_CLOCK_MONOTONIC, resolution,
                                 NVTX_TIMER_START_SYSTEM_BOOT};
    return nvtxTimeDomainRegister(d, &attr);
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

    /* Registered time domains. */
    uint64_t us = time_domain(d, 0, 1000000);
    uint64_t fixed = time_domain(d, NVTX_TIME_DOMAIN_ID_STATIC_START + 5, 2000000000);
    uint64_t again = time_domain(d, NVTX_TIME_DOMAIN_ID_STATIC_START + 5, 2000000000);
    uint64_t refused = time_domain(d, 5, 0);
    uint64_t chained = time_domain(d, 0, 0);
    uint64_t timer = time_domain(d, 0, 1000000);
    uint64_t timer_data = time_domain(d, 0, 2000000000);
    uint64_t unrelated = time_domain(d, 0, 0);
    printf("time domains: dynamic %d, static %d, again %d, refused %d\n", us >= NVTX_TIME_DOMAIN_ID_DYNAMIC_START,
           fixed == NVTX_TIME_DOMAIN_ID_STATIC_START + 5, again == fixed, refused == 0);
    /* us: two sync points with CLOCK_MONOTONIC, 2 ms apart. */
    nvtxTimeSyncPoint(d, us, NVTX_TIMESTAMP_TYPE_CPU_CLOCK_GETTIME_MONOTONIC, micros(), monotonic_ns());
    sleep_ms(2);
    int64_t ns = monotonic_ns();
    nvtxTimeSyncPoint(d, us, NVTX_TIMESTAMP_TYPE_CPU_CLOCK_GETTIME_MONOTONIC, ns / 1000, ns);
    /* fixed: half nanoseconds from 777, as a conversion factor to CLOCK_MONOTONIC. */
    nvtxTimestampConversionFactor(d, fixed, NVTX_TIMESTAMP_TYPE_CPU_CLOCK_GETTIME_MONOTONIC, 0.5, 777 + 2 * ns, ns);
    /* chained: 3 per microsecond from 11, a table of sync points to us (two hops). */
    nvtxSyncPoint_t table[2] = {{11 + 3 * 1000, 1000}, {11 + 3 * 2000, 2000}};
    nvtxTimeSyncPointTable(d, chained, us, table, 2);
    /* timer and timer_data: the tool reads their clocks itself. */
    static int64_t offset = 12345;
    nvtxTimerSource(d, timer, NVTX_TIMER_SOURCE_SAFE_CALL_AFTER_PROCESS_TEARDOWN, micros);
    nvtxTimerSourceWithData(d, timer_data, NVTX_TIMER_SOURCE_SAFE_CALL_AFTER_PROCESS_TEARDOWN, halves, &offset);
    uint64_t in_us = stamped_in(d, "in us", us);
    uint64_t in_fixed = stamped_in(d, "in half ns", fixed);
    uint64_t in_chained = stamped_in(d, "chained", chained);
    uint64_t in_timer = stamped_in(d, "from a timer", timer);
    uint64_t in_timer_data = stamped_in(d, "from a timer with data", timer_data);
    uint64_t in_unrelated = stamped_in(d, "unrelated", unrelated);
    sleep_ms(2);
    /* Each stamped at the reference mark's instant, submitted later. */
    int64_t ref = monotonic_ns();
    nvtxMarkA("reference");
    sleep_ms(2);
    submit_at(d, in_us, ref / 1000, 1);
    submit_at(d, in_fixed, 777 + 2 * ref, 2);
    submit_at(d, in_chained, 11 + 3 * (ref / 1000), 3);
    submit_at(d, in_timer, ref / 1000, 4);
    submit_at(d, in_timer_data, 2 * ref + offset, 5);
    submit_at(d, in_unrelated, ref, 6);
    printf("deferred events submitted\n");
    return 0;
}
