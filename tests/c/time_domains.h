/* What tests/c/deferred_events.c (NVIDIA's API) and
 * tests/c/nvtxr_time_domains.c (nvtxr's) share, so that both stamp their
 * marks on the same clocks: the sample a mark carries, CLOCK_MONOTONIC in
 * ns, and the clocks of the registered time domains (microseconds, and half
 * nanoseconds from an offset). */
#ifndef NVTXR_TEST_TIME_DOMAINS_H
#define NVTXR_TEST_TIME_DOMAINS_H

#include <stdint.h>
#include <time.h>

typedef struct {
    int64_t at;
    int32_t value;
} sample_t;

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {0, ms * 1000000};
    nanosleep(&ts, NULL);
}

static int64_t micros(void) { return monotonic_ns() / 1000; }
static int64_t halves(void *offset) { return 2 * monotonic_ns() + *(int64_t *)offset; }

#endif
