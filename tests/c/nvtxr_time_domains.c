/* Deferred events in registered time domains through nvtxr's own C API:
 * what tests/c/deferred_events.c does through NVIDIA's header. Five time
 * domains, each related to CLOCK_MONOTONIC another way (sync points, a
 * conversion factor, a table of instants to another registered domain,
 * timer sources with and without data), and one related to nothing; a
 * mark stamped in each at the instant of a "reference" mark, submitted
 * later. Then the calls nvtxr refuses. The recording test checks where
 * each mark lands; with no tool every call returns 0. */
#include <nvtxr.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "time_domains.h"

/* A schema for a mark stamped in `time_domain`, named `name`. */
static uint64_t stamped_in(nvtxr_domain_t *d, const char *name, uint64_t time_domain) {
    nvtxr_time_semantics_t time = NVTXR_TIME_SEMANTICS(time_domain);
    nvtxr_payload_entry_t entries[] = {
        {NVTXR_ENTRY_TIMESTAMP | NVTXR_ENTRY_MARK, NVTXR_TYPE_INT64, "at", NULL, 0,
         offsetof(sample_t, at), &time, NULL},
        {0, NVTXR_TYPE_INT32, "value", NULL, 0, offsetof(sample_t, value), NULL, NULL},
    };
    nvtxr_payload_schema_t schema = NVTXR_PAYLOAD_SCHEMA_INIT;
    schema.kind = NVTXR_SCHEMA_STATIC;
    schema.name = name;
    schema.entries = entries;
    schema.entry_count = 2;
    schema.static_size = sizeof(sample_t);
    return nvtxr_payload_schema_register(d, &schema);
}

static void submit_at(nvtxr_domain_t *d, uint64_t schema, int64_t at, int32_t value) {
    sample_t sample = {at, value};
    nvtxr_payload_data_t data = {schema, sizeof sample, &sample};
    nvtxr_event_submit(d, &data, 1);
}

static uint64_t time_domain(nvtxr_domain_t *d, uint64_t id, int64_t resolution) {
    nvtxr_time_domain_t t = NVTXR_TIME_DOMAIN_INIT;
    t.id = id;
    t.flags = NVTXR_TIMER_MONOTONIC;
    t.resolution = resolution;
    t.start = NVTXR_TIMER_START_BOOT;
    return nvtxr_time_domain_register(d, &t);
}

int main(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("deferred");
    uint64_t us = time_domain(d, 0, 1000000);
    uint64_t fixed = time_domain(d, NVTXR_TIME_DOMAIN_ID_STATIC_START + 5, 2000000000);
    uint64_t again = time_domain(d, NVTXR_TIME_DOMAIN_ID_STATIC_START + 5, 2000000000);
    uint64_t chained = time_domain(d, 0, 0);
    uint64_t timer = time_domain(d, 0, 1000000);
    uint64_t timer_data = time_domain(d, 0, 2000000000);
    uint64_t unrelated = time_domain(d, 0, 0);
    printf("time domains: dynamic %d, static %d, again %d\n", us >= ((uint64_t)1 << 32),
           fixed == NVTXR_TIME_DOMAIN_ID_STATIC_START + 5, again == fixed);

    /* us: two sync points with CLOCK_MONOTONIC, 2 ms apart. */
    int statuses[6];
    statuses[0] = nvtxr_time_sync_point(d, us, NVTXR_TIMESTAMP_MONOTONIC, micros(), monotonic_ns());
    sleep_ms(2);
    int64_t ns = monotonic_ns();
    statuses[1] = nvtxr_time_sync_point(d, us, NVTXR_TIMESTAMP_MONOTONIC, ns / 1000, ns);
    /* fixed: half nanoseconds from 777, as a conversion factor to CLOCK_MONOTONIC. */
    statuses[2] = nvtxr_time_conversion_factor(d, fixed, NVTXR_TIMESTAMP_MONOTONIC, 0.5, 777 + 2 * ns, ns);
    /* chained: 3 per microsecond from 11, a table of instants to us (two hops). */
    nvtxr_time_pair_t table[2] = {{11 + 3 * 1000, 1000}, {11 + 3 * 2000, 2000}};
    statuses[3] = nvtxr_time_sync_points(d, chained, us, table, 2);
    /* timer and timer_data: the tool reads their clocks itself. */
    static int64_t offset = 12345;
    statuses[4] = nvtxr_timer_source(d, timer, 0, micros);
    statuses[5] = nvtxr_timer_source_with_data(d, timer_data, 0, halves, &offset);
    printf("statuses %d %d %d %d %d %d\n", statuses[0], statuses[1], statuses[2], statuses[3],
           statuses[4], statuses[5]);

    uint64_t in_us = stamped_in(d, "in us", us);
    uint64_t in_fixed = stamped_in(d, "in half ns", fixed);
    uint64_t in_chained = stamped_in(d, "chained", chained);
    uint64_t in_timer = stamped_in(d, "from a timer", timer);
    uint64_t in_timer_data = stamped_in(d, "from a timer with data", timer_data);
    uint64_t in_unrelated = stamped_in(d, "unrelated", unrelated);
    sleep_ms(2);
    int64_t ref = monotonic_ns();
    nvtxr_mark(NULL, "reference");
    sleep_ms(2);
    submit_at(d, in_us, ref / 1000, 1);
    submit_at(d, in_fixed, 777 + 2 * ref, 2);
    submit_at(d, in_chained, 11 + 3 * (ref / 1000), 3);
    submit_at(d, in_timer, ref / 1000, 4);
    submit_at(d, in_timer_data, 2 * ref + offset, 5);
    submit_at(d, in_unrelated, ref, 6);

    /* Refused: a NULL or uninitialized domain description, an id below the
       static range (the tool's refusal), NULL pairs with a count, no clock. */
    nvtxr_time_domain_t uninitialized = {0};
    nvtxr_time_domain_t low = NVTXR_TIME_DOMAIN_INIT;
    low.id = 5;
    printf("refused %llu %llu %llu %d %d %d\n",
           (unsigned long long)nvtxr_time_domain_register(d, NULL),
           (unsigned long long)nvtxr_time_domain_register(d, &uninitialized),
           (unsigned long long)nvtxr_time_domain_register(d, &low),
           nvtxr_time_sync_points(d, us, NVTXR_TIMESTAMP_MONOTONIC, NULL, 2),
           nvtxr_timer_source(d, timer, 0, NULL),
           nvtxr_timer_source_with_data(d, timer, 0, NULL, NULL));
    return 0;
}
