/* The GPU benchmark's workload, with no GPU: a training loop's shape as
 * nvtxr's recording tool sees it through the test CUPTI (fake_cupti.c,
 * loaded from FAKE_CUPTI; the tool finds it through NVTXR_CUPTI). It loads
 * the library CUDA_INJECTION64_PATH names and calls its InitializeInjection,
 * as the CUDA driver does at cuInit.
 *
 * N steps (argv[1]), each: push "step"; 12 layers of push "linear", two
 * kernel launches (gemm, bias), pop, push "relu", one launch, pop; a
 * device-to-host copy and a stream synchronization; pop. Per step: 50 NVTX
 * events (pushes and pops), 38 GPU activity records and 38 launch records.
 * The step's records are handed to the tool in one buffer. The stream runs
 * one kernel or copy at a time, as a GPU's stream does: each starts once the
 * one before has ended. */
#include <cupti.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNTIME CUPTI_CB_DOMAIN_RUNTIME_API
#define LAUNCH_KERNEL CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
#define MEMCPY_ASYNC CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
#define STREAM_SYNC CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020
#define LAYERS 12

static void (*api)(int, int, uint32_t, uint64_t);
static void (*kernel)(int, uint32_t, const char *, uint32_t, uint32_t, uint32_t, uint64_t, uint64_t);
static void (*copy)(int, uint32_t, uint8_t, uint64_t, uint32_t, uint32_t, uint32_t, uint64_t, uint64_t);
static void (*sync_)(int, uint32_t, uint32_t, uint32_t, uint64_t);
static void (*context)(int, uint32_t, uint32_t);
static void (*device)(int, uint32_t, const char *, uint32_t, uint32_t, uint64_t, uint32_t, uint8_t);
static void (*complete)(int);

static void *load(void *library, const char *name) {
    void *f = dlsym(library, name);
    if (!f) { fprintf(stderr, "gpu_loop: no %s\n", name); exit(3); }
    return f;
}

static uint32_t correlation;
/* When the stream's last kernel or copy ends (CLOCK_MONOTONIC ns). */
static uint64_t queued_until;

/* The delay after which work of `ns` launched now starts on the stream. */
static uint64_t queue(uint64_t ns) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t now = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    /* 1 us apart: the test CUPTI reads its clock a little after this one. */
    uint64_t start = queued_until + 1000 > now ? queued_until + 1000 : now;
    queued_until = start + ns;
    return start - now;
}

static void launch(const char *name, uint64_t ns) {
    uint32_t id = ++correlation;
    api(RUNTIME, LAUNCH_KERNEL, id, 0);
    kernel(0, id, name, 0, 1, 7, queue(ns), ns);
}

int main(int argc, char **argv) {
    long steps = argc > 1 ? atol(argv[1]) : 1000;
    const char *cupti = getenv("FAKE_CUPTI");
    void *fake = cupti ? dlopen(cupti, RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (!fake) { fprintf(stderr, "gpu_loop: cannot load the test CUPTI\n"); return 3; }
    *(void **)&api = load(fake, "fake_api");
    *(void **)&kernel = load(fake, "fake_kernel");
    *(void **)&copy = load(fake, "fake_memcpy");
    *(void **)&sync_ = load(fake, "fake_sync");
    *(void **)&context = load(fake, "fake_context");
    *(void **)&device = load(fake, "fake_device");
    *(void **)&complete = load(fake, "fake_complete");

    const char *injection = getenv("CUDA_INJECTION64_PATH");
    if (injection && *injection) {
        void *tool = dlopen(injection, RTLD_NOW);
        int (*initialize)(void) = tool ? (int (*)(void))dlsym(tool, "InitializeInjection") : NULL;
        if (!initialize) { fprintf(stderr, "gpu_loop: no InitializeInjection in %s\n", injection); return 3; }
        initialize();
    }
    device(0, 0, "NVIDIA H200", 9, 0, 150ull << 30, 132, 0);
    context(0, 1, 0);
    for (long s = 0; s < steps; s++) {
        nvtxRangePushA("step");
        for (int l = 0; l < LAYERS; l++) {
            nvtxRangePushA("linear");
            launch("_Z4gemmPKfS0_Pfi", 40000);
            launch("_Z8add_biasPfPKfi", 3000);
            nvtxRangePop();
            nvtxRangePushA("relu");
            launch("_Z4reluPfi", 2000);
            nvtxRangePop();
        }
        uint32_t id = ++correlation;
        api(RUNTIME, MEMCPY_ASYNC, id, 0);
        copy(0, id, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 4096, 0, 1, 7, queue(3000), 3000);
        id = ++correlation;
        api(RUNTIME, STREAM_SYNC, id, 0);
        sync_(0, id, 1, 7, 1000);
        nvtxRangePop();
        complete(0);
    }
    return 0;
}
