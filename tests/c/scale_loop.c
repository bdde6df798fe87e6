/* The scale benchmark's workload: N iterations of push "step N", push
   "inner", pop, pop (4N events), each call timed; prints the calls' p50,
   p99.99 and maximum in ns and how many took over 100 us. */
#include <nvtxr.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2500000;
    long long *cost = malloc(sizeof *cost * (size_t)n * 4);
    if (!cost) return 1;
    char name[32];
    long k = 0;
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "step %ld", i);
        long long t0 = now();
        nvtxr_range_push(NULL, name);
        long long t1 = now();
        nvtxr_range_push(NULL, "inner");
        long long t2 = now();
        nvtxr_range_pop(NULL);
        long long t3 = now();
        nvtxr_range_pop(NULL);
        long long t4 = now();
        cost[k++] = t1 - t0;
        cost[k++] = t2 - t1;
        cost[k++] = t3 - t2;
        cost[k++] = t4 - t3;
    }
    long over = 0;
    for (long i = 0; i < k; i++) over += cost[i] > 100000;
    qsort(cost, (size_t)k, sizeof *cost, by_value);
    printf("%lld %lld %lld %ld\n", cost[k / 2], cost[(long)((double)k * 0.9999)], cost[k - 1], over);
    free(cost);
    return 0;
}
