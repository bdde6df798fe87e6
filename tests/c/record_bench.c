/* Cost per NVTX event through nvtxr: `record_bench THREADS EVENTS_PER_THREAD`.
 * Each thread makes push/pop pairs; prints the mean over threads of each
 * thread's ns per event, then the process's user and system CPU time per
 * event (every thread's, a tool's own included). Run with no tool and with
 * `nvtxr record`'s tool.
 * `record_bench clock N` prints the ns per clock_gettime(CLOCK_MONOTONIC)
 * and per rdtsc instead: the floor under a recorded event's cost.
 * `record_bench tails THREADS EVENTS_PER_THREAD` times every call instead
 * and prints, over all threads' calls, the p50, p99.99 and maximum in ns
 * and how many took over 100 us. */
#include <nvtxr.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* Each call's ns, per thread. */
static long long *costs[64];

static void *timed_work(void *arg) {
    long long *cost = costs[(long)arg];
    pthread_barrier_wait(&barrier);
    for (long i = 0; i < events; i += 2) {
        double t0 = now_ns();
        nvtxr_range_push(NULL, "range");
        double t1 = now_ns();
        nvtxr_range_pop(NULL);
        cost[i] = (long long)(t1 - t0);
        cost[i + 1] = (long long)(now_ns() - t1);
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void tails(int threads) {
    long n = events * threads;
    long long *all = malloc(sizeof *all * (size_t)n);
    pthread_t t[64];
    pthread_barrier_init(&barrier, NULL, threads);
    for (long i = 0; i < threads; i++) {
        costs[i] = all + i * events;
        pthread_create(&t[i], NULL, timed_work, (void *)i);
    }
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    long over = 0;
    for (long i = 0; i < n; i++) over += all[i] > 100000;
    qsort(all, (size_t)n, sizeof *all, by_value);
    printf("%lld %lld %lld %ld\n", all[n / 2], all[(long)((double)n * 0.9999)], all[n - 1], over);
    free(all);
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
    if (argc > 3 && !strcmp(argv[1], "tails")) {
        events = atol(argv[3]) / 2 * 2;
        tails(atoi(argv[2]));
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
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    double all = (double)events * threads;
    printf("%.2f %.2f %.2f\n", sum / threads,
           (usage.ru_utime.tv_sec * 1e9 + usage.ru_utime.tv_usec * 1e3) / all,
           (usage.ru_stime.tv_sec * 1e9 + usage.ru_stime.tv_usec * 1e3) / all);
    return 0;
}
