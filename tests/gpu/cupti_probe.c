/* A CUDA injection library for the GPU check's cost split (check.sh): it
 * asks CUPTI for what nvtxr's recording tool asks, one part at a time, so
 * that each part's cost is measured on its own, in the same machine, with
 * nothing of nvtxr loaded. It keeps nothing: it counts the records CUPTI
 * hands back and prints the counts at exit.
 *
 * Always: the device, context, concurrent-kernel, memcpy and memset records
 * (what the tool always enables). PROBE, a comma-separated list, adds:
 *   apis       the per-API records of the launch, copy, set, graph-launch and
 *              synchronization entry points (cuptiActivityEnableRuntimeApi /
 *              DriverApi, one API at a time; the tool's set: the prefixes
 *              of record/tool/src/gpu/cupti.rs's `traced`)
 *   runtime_apis  the same, of the runtime's entry points alone (a runtime
 *              launch calls the driver: are both recorded, at twice the cost?)
 *   subscribe  a cuptiSubscribe with no callback enabled (the tool holds
 *              CUPTI so)
 *   unsubscribe  with subscribe: the subscriber let go at once (cuptiUnsubscribe),
 *              as a tool would that only checks no other profiler holds CUPTI:
 *              does holding it cost?
 *   clock      CUPTI's clock given (cuptiActivityRegisterTimestampCallback) as the
 *              tool gives it: the time-stamp counter on a straight line
 *              measured over 200 us (CLOCK_MONOTONIC off x86-64)
 *   tid        API records with the system's thread ids (cuptiSetThreadIdType)
 *   overhead   CUPTI's records of its own overhead (CUPTI_ACTIVITY_KIND_OVERHEAD),
 *              summed by kind (its instrumentation, buffer flushes, ...) and
 *              printed at exit: where CUPTI itself says its time went
 * libcupti is dlopen'ed from PROBE_CUPTI (default "libcupti.so.13").
 * Build: gcc -shared -fPIC -O2 -I<CUPTI and CUDA includes> cupti_probe.c -ldl */
#include <cupti.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUFFER (4u << 20)

static CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
static CUptiResult (*flush_all)(uint32_t);
static atomic_ulong activities, api_records, buffers;
static unsigned long apis_enabled;
/* CUPTI's overhead records by kind (CUpti_ActivityOverheadKind: the
 * driver's compiler, 1, at slot 0; CUPTI's own kinds, n << 16, at slot n;
 * any other in the last): how many, and their ns. */
#define OVERHEAD_SLOTS 16
static atomic_ulong overheads[OVERHEAD_SLOTS], overhead_ns[OVERHEAD_SLOTS];
static const char *overhead_names[OVERHEAD_SLOTS] = {
    "driver compiler", "buffer flush", "instrumentation", "resource", "module loading",
    "lazy function loading", "command buffer full", "buffer request", "UVM init",
    [OVERHEAD_SLOTS - 1] = "other",
};

static void count_overhead(const CUpti_Activity *r) {
    /* Every version of the record begins as the first (CUpti_ActivityOverhead). */
    const CUpti_ActivityOverhead *o = (const CUpti_ActivityOverhead *)r;
    unsigned kind = (unsigned)o->overheadKind;
    unsigned slot = kind == CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER ? 0 : kind >> 16;
    if (slot >= OVERHEAD_SLOTS || (slot == 0 && kind != CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER)) slot = OVERHEAD_SLOTS - 1;
    overheads[slot]++;
    overhead_ns[slot] += o->end > o->start ? o->end - o->start : 0;
}

static void *need(void *cupti, const char *name) {
    void *f = dlsym(cupti, name);
    if (!f) fprintf(stderr, "PROBE no %s\n", name);
    return f;
}

static int wanted(const char *part) {
    const char *list = getenv("PROBE");
    size_t n = strlen(part);
    for (const char *p = list; p && (p = strstr(p, part)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, BUFFER);
    *size = *buffer ? BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
    (void)context; (void)stream; (void)size;
    CUpti_Activity *r = NULL;
    while (next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == CUPTI_ACTIVITY_KIND_DRIVER) api_records++;
        else if (r->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) count_overhead(r);
        else activities++;
    }
    buffers++;
    free(buffer);
}

static uint64_t CUPTIAPI monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>
/* The tool's clock for CUPTI: the counter on its calibration's line. */
static uint64_t line_ticks, line_ns;
static double ns_per_tick;

static uint64_t CUPTIAPI counter_line(void) {
    return line_ns + (uint64_t)((double)(__rdtsc() - line_ticks) * ns_per_tick);
}

static CUpti_TimestampCallbackFunc calibrated(void) {
    line_ticks = __rdtsc();
    line_ns = monotonic();
    uint64_t now;
    while ((now = monotonic()) < line_ns + 200000) {}
    ns_per_tick = (double)(now - line_ns) / (double)(__rdtsc() - line_ticks);
    return counter_line;
}
#else
static CUpti_TimestampCallbackFunc calibrated(void) { return monotonic; }
#endif

static void CUPTIAPI no_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c, const void *data) {
    (void)u; (void)d; (void)c; (void)data;
}

static void at_exit(void) {
    flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "PROBE %s: %lu activity records, %lu API records (%lu APIs enabled), %lu buffers\n",
            getenv("PROBE") ? getenv("PROBE") : "", (unsigned long)activities,
            (unsigned long)api_records, apis_enabled, (unsigned long)buffers);
    for (int i = 0; i < OVERHEAD_SLOTS; i++)
        if (overheads[i])
            fprintf(stderr, "PROBE overhead %s: %lu records, %lu ns\n",
                    overhead_names[i] ? overhead_names[i] : "unnamed", (unsigned long)overheads[i],
                    (unsigned long)overhead_ns[i]);
}

/* The tool's traced entry points: record/tool/src/gpu/cupti.rs's `traced`. */
static int traced(const char *name) {
    static const char *prefixes[] = {
        "cudaLaunch", "cuLaunch", "cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset",
        "cudaGraphLaunch", "cuGraphLaunch", "cudaDeviceSynchronize", "cudaStreamSynchronize",
        "cudaEventSynchronize", "cudaStreamWaitEvent", "cuCtxSynchronize", "cuStreamSynchronize",
        "cuEventSynchronize", "cuStreamWaitEvent",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    return 0;
}

int InitializeInjection(void) {
    const char *path = getenv("PROBE_CUPTI") ? getenv("PROBE_CUPTI") : "libcupti.so.13";
    void *cupti = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!cupti) { fprintf(stderr, "PROBE cannot load %s: %s\n", path, dlerror()); return 1; }
    CUptiResult (*enable)(CUpti_ActivityKind) = need(cupti, "cuptiActivityEnable");
    CUptiResult (*callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
        need(cupti, "cuptiActivityRegisterCallbacks");
    next_record = need(cupti, "cuptiActivityGetNextRecord");
    flush_all = need(cupti, "cuptiActivityFlushAll");
    if (!enable || !callbacks || !next_record || !flush_all) return 1;
    if (wanted("subscribe")) {
        CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) = need(cupti, "cuptiSubscribe");
        CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) = need(cupti, "cuptiUnsubscribe");
        CUpti_SubscriberHandle s;
        if (subscribe && subscribe(&s, no_callback, NULL) != CUPTI_SUCCESS) fprintf(stderr, "PROBE subscribe refused\n");
        else if (wanted("unsubscribe") && unsubscribe && unsubscribe(s) != CUPTI_SUCCESS) fprintf(stderr, "PROBE unsubscribe refused\n");
    }
    if (wanted("tid")) {
        CUptiResult (*tid)(CUpti_ActivityThreadIdType) = need(cupti, "cuptiSetThreadIdType");
        if (tid) tid(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    }
    callbacks(requested, completed);
    if (wanted("clock")) {
        CUptiResult (*clock)(CUpti_TimestampCallbackFunc) = need(cupti, "cuptiActivityRegisterTimestampCallback");
        if (clock && clock(calibrated()) != CUPTI_SUCCESS) fprintf(stderr, "PROBE clock refused\n");
    }
    int runtime_only = wanted("runtime_apis");
    if (wanted("apis") || runtime_only) {
        CUptiResult (*name)(CUpti_CallbackDomain, uint32_t, const char **) = need(cupti, "cuptiGetCallbackName");
        CUptiResult (*runtime)(CUpti_CallbackId, uint8_t) = need(cupti, "cuptiActivityEnableRuntimeApi");
        CUptiResult (*driver)(CUpti_CallbackId, uint8_t) = need(cupti, "cuptiActivityEnableDriverApi");
        for (uint32_t cbid = 1; name && runtime && driver && cbid < 4096; cbid++) {
            const char *n;
            if (name(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &n) == CUPTI_SUCCESS && n && traced(n))
                apis_enabled += runtime(cbid, 1) == CUPTI_SUCCESS;
            if (!runtime_only && name(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &n) == CUPTI_SUCCESS && n && traced(n))
                apis_enabled += driver(cbid, 1) == CUPTI_SUCCESS;
        }
    }
    CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (enable(kinds[i]) != CUPTI_SUCCESS) fprintf(stderr, "PROBE kind %d refused\n", (int)kinds[i]);
    if (wanted("overhead") && enable(CUPTI_ACTIVITY_KIND_OVERHEAD) != CUPTI_SUCCESS)
        fprintf(stderr, "PROBE overhead records refused\n");
    atexit(at_exit);
    return 1;
}
