/* Cost per NVTX event through nvtxr: `record_bench THREADS EVENTS_PER_THREAD`.
 * Each thread makes push/pop pairs; prints the mean over threads of each
 * thread's ns per event. Run with no tool and with `nvtxr record`'s tool.
 * `record_bench clock N` prints the ns per clock_gettime(CLOCK_MONOTONIC)
 * and per rdtsc instead: the floor under a recorded event's cost. */
#include <nvtxr.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long events;
static pthread_barrier_t barrier;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *work(void *arg) {
    double *result = arg;
    for (int i = 0; i < 1000; i++) { nvtxr_range_push(NULL, "warm"); nvtxr_range_pop(NULL); }
    pthread_barrier_wait(&barrier);
    double t0 = now_ns();
    for (long i = 0; i < events / 2; i++) {
        nvtxr_range_push(NULL, "range");
        nvtxr_range_pop(NULL);
    }
    *result = (now_ns() - t0) / events;
    return NULL;
}

static void clocks(long n) {
    struct timespec ts;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) clock_gettime(CLOCK_MONOTONIC, &ts);
    double gettime = (now_ns() - t0) / n;
    unsigned long long sink = 0;
    t0 = now_ns();
    for (long i = 0; i < n; i++) sink += __builtin_ia32_rdtsc();
    double rdtsc = (now_ns() - t0) / n;
    printf("%.2f %.2f\n", gettime, rdtsc + (double)(sink & 0) );
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "clock")) {
        clocks(atol(argv[2]));
        return 0;
    }
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    events = argc > 2 ? atol(argv[2]) : 2000000;
    pthread_t t[64];
    double ns[64];
    pthread_barrier_init(&barrier, NULL, threads);
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, &ns[i]);
    double sum = 0;
    for (int i = 0; i < threads; i++) { pthread_join(t[i], NULL); sum += ns[i]; }
    printf("%.2f\n", sum / threads);
    return 0;
}
