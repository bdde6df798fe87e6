/* A test double of libcupti, written from NVIDIA's CUPTI 13 headers: the
 * entry points nvtxr's recording tool calls, plus `fake_*` functions a test
 * program calls to script what a CUDA driver and GPU would do (API calls on
 * the calling thread, activity records in buffers completed when and in the
 * order the script says).
 *
 * Environment: FAKE_CUPTI_BUSY=1 makes cuptiSubscribe fail as when another
 * profiler holds CUPTI; FAKE_CUPTI_OWN_CLOCK=1 refuses the timestamp
 * callback (GPU times on CUPTI's own clock, 1 s ahead of CLOCK_MONOTONIC);
 * FAKE_CUPTI_ENABLE_FAILS=1 makes cuptiActivityEnable fail;
 * FAKE_CUPTI_REFUSE_KIND=N makes it refuse activity kind N alone;
 * FAKE_CUPTI_RECORD_FAILS=N makes cuptiActivityGetNextRecord fail on the
 * Nth record it is asked for (once), as on a record it cannot read;
 * FAKE_CUPTI_FLUSH_FAILS=1 makes cuptiActivityFlushAll fail, handing
 * nothing over; FAKE_CUPTI_FLUSH_HANGS=1 makes its default flush (flag 0,
 * not the forced one) never return; FAKE_CUPTI_VERSION=N makes cuptiGetVersion say N (an
 * older CUPTI's version).
 *
 * As CUPTI does, it asks for a queue's buffer when the queue's first record
 * comes, from the buffer callbacks registered then, and hands it back to
 * those registered when it is completed: another client that registers its
 * own (cuda_app.c's ANOTHER_CLIENT) gets the buffers lent before. */
#include <cupti.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Per API (callback domain, id): whether its calls are recorded. */
static uint8_t api_enabled[8][4096];
static uint8_t kind_enabled[CUPTI_ACTIVITY_KIND_COUNT];
static CUpti_ActivityThreadIdType thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static CUpti_BuffersCallbackRequestFunc request_buffer;
static CUpti_BuffersCallbackCompleteFunc complete_buffer;
static CUpti_TimestampCallbackFunc timestamp_callback;
static int subscribed;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Records waiting for a buffer: a few queues the script completes in any order. */
#define QUEUES 4
#define QUEUE_BYTES (1 << 16)
/* API records wait in the last queue, completed by the flush at exit. */
#define API_QUEUE (QUEUES - 1)
static uint8_t queue[QUEUES][QUEUE_BYTES];
static size_t queued[QUEUES];
/* The buffer each queue's records will be handed back in: asked for when
 * its first record comes, from the buffer callbacks registered then (as
 * CUPTI asks for a buffer ahead), handed back to those registered when it
 * is completed (another client may have registered its own meanwhile). */
static uint8_t *held[QUEUES];
static size_t held_size[QUEUES];
static size_t dropped_for_next;

static uint64_t monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The GPU's clock as CUPTI gives it. */
static uint64_t gpu_now(void) {
    return timestamp_callback ? timestamp_callback() : monotonic() + 1000000000ull;
}

CUptiResult cuptiGetVersion(uint32_t *version) {
    const char *said = getenv("FAKE_CUPTI_VERSION");
    *version = said ? (uint32_t)strtoul(said, NULL, 10) : CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str) {
    switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
    case CUPTI_ERROR_NOT_COMPATIBLE: *str = "CUPTI_ERROR_NOT_COMPATIBLE"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; break;
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata) {
    (void)userdata; (void)callback; /* no callback is enabled: never called */
    if (getenv("FAKE_CUPTI_BUSY") || subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    subscribed = 1;
    *subscriber = (CUpti_SubscriberHandle)&subscribed;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
    if (!subscribed || subscriber != (CUpti_SubscriberHandle)&subscribed) return CUPTI_ERROR_INVALID_PARAMETER;
    subscribed = 0;
    return CUPTI_SUCCESS;
}

/* The names of the callbacks the scripts use, and some that are not traced. */
static const char *callback_name(CUpti_CallbackDomain domain, uint32_t cbid) {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: return "cudaLaunchKernel_v7000";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: return "cudaMemcpyAsync_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: return "cudaMemsetAsync_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000: return "cudaMemcpyPeerAsync_v4000";
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020: return "cudaStreamSynchronize_v3020";
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000: return "cudaGraphLaunch_v10000";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: return "cudaMalloc_v3020";
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return "cuLaunchKernel";
    case CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent: return "cuCtxGetCurrent";
    }
    return NULL;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name) {
    *name = callback_name(domain, cbid);
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

static CUptiResult enable_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint8_t enable) {
    if (getenv("FAKE_CUPTI_WHOLE_API")) return CUPTI_ERROR_NOT_SUPPORTED;
    if (getenv("FAKE_CUPTI_NO_DRIVER_API") && domain == CUPTI_CB_DOMAIN_DRIVER_API) return CUPTI_ERROR_NOT_SUPPORTED;
    if (cbid >= 4096 || !callback_name(domain, cbid)) return CUPTI_ERROR_INVALID_PARAMETER;
    api_enabled[domain][cbid] = enable;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
    return enable_api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, enable);
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
    return enable_api(CUPTI_CB_DOMAIN_DRIVER_API, cbid, enable);
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
    thread_id_type = type;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
    if (getenv("FAKE_CUPTI_ENABLE_FAILS")) return CUPTI_ERROR_NOT_INITIALIZED;
    const char *refused = getenv("FAKE_CUPTI_REFUSE_KIND");
    if (refused && (unsigned)atoi(refused) == (unsigned)kind) return CUPTI_ERROR_NOT_COMPATIBLE;
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT) return CUPTI_ERROR_INVALID_KIND;
    kind_enabled[kind] = 1;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT) return CUPTI_ERROR_INVALID_KIND;
    kind_enabled[kind] = 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete) {
    request_buffer = request;
    complete_buffer = complete;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
    if (getenv("FAKE_CUPTI_OWN_CLOCK")) return CUPTI_ERROR_NOT_SUPPORTED;
    timestamp_callback = f;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp) { *timestamp = gpu_now(); return CUPTI_SUCCESS; }

/* Records in a buffer follow each other, each its kind's size. */
static size_t record_size(const uint8_t *r) {
    switch (((const CUpti_Activity *)r)->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel13);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy7);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset5);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext4);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice6);
    case CUPTI_ACTIVITY_KIND_RUNTIME: case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: abort(); /* a kind this double never queues: fail, never loop */
    }
}

static long records_asked;

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record) {
    const char *fails = getenv("FAKE_CUPTI_RECORD_FAILS");
    if (fails && ++records_asked == atol(fails)) return CUPTI_ERROR_INVALID_KIND;
    uint8_t *next = *record ? (uint8_t *)*record + record_size((uint8_t *)*record) : buffer;
    if (next >= buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

static size_t dropped_now;
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream, size_t *dropped) {
    (void)context; (void)stream;
    *dropped = dropped_now;
    return CUPTI_SUCCESS;
}

/* Queue `q`'s buffer, asked for if it has none (the lock held). */
static void hold(int q) {
    size_t max;
    if (!held[q] && request_buffer) request_buffer(&held[q], &held_size[q], &max);
}

/* Hands queue `q`'s records to the tool in one buffer. */
void fake_complete(int q) {
    pthread_mutex_lock(&lock);
    hold(q);
    if (!request_buffer) { /* no tool registered: the records are lost, as with no profiler */
        queued[q] = 0;
        pthread_mutex_unlock(&lock);
        return;
    }
    uint8_t *buffer = held[q];
    size_t size = held_size[q];
    held[q] = NULL;
    size_t n = queued[q];
    if (buffer && size >= n) memcpy(buffer, queue[q], n);
    queued[q] = 0;
    dropped_now = dropped_for_next;
    dropped_for_next = 0;
    complete_buffer(NULL, 0, buffer, size, n);
    dropped_now = 0;
    pthread_mutex_unlock(&lock);
}

static void enqueue(int q, const void *record, size_t size);

/* Every queued record is complete (its times are set when it is queued),
 * so the default flush (flag 0) hands over what the forced one does. With
 * the overhead kind enabled, each flush hands over a record of its own
 * overhead (1 us). */
CUptiResult cuptiActivityFlushAll(uint32_t flag) {
    if (getenv("FAKE_CUPTI_FLUSH_FAILS")) return CUPTI_ERROR_UNKNOWN;
    if (flag == 0 && getenv("FAKE_CUPTI_FLUSH_HANGS"))
        for (;;) pause();
    if (kind_enabled[CUPTI_ACTIVITY_KIND_OVERHEAD]) {
        CUpti_ActivityOverhead3 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
        r.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
        r.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
        r.objectId.pt.processId = (uint32_t)getpid();
        r.start = gpu_now();
        r.end = r.start + 1000;
        enqueue(API_QUEUE, &r, sizeof r);
    }
    for (int q = 0; q < QUEUES; q++)
        if (queued[q]) fake_complete(q);
    return CUPTI_SUCCESS;
}

/* Queues a record; a full queue is completed first, as CUPTI hands over a
 * full buffer. */
static void enqueue(int q, const void *record, size_t size) {
    pthread_mutex_lock(&lock);
    int full = queued[q] + size > QUEUE_BYTES;
    pthread_mutex_unlock(&lock);
    if (full) fake_complete(q);
    pthread_mutex_lock(&lock);
    hold(q);
    memcpy(queue[q] + queued[q], record, size);
    queued[q] += size;
    pthread_mutex_unlock(&lock);
}

/* The next buffer completed says CUPTI dropped `n` records. */
void fake_drop(size_t n) { dropped_for_next = n; }

/* An API call on the calling thread, `busy_ns` long, with correlation id
 * `correlation`: its record, when its API's are enabled (one by one, or
 * the whole domain's kind). */
void fake_api(int domain, int cbid, uint32_t correlation, uint64_t busy_ns) {
    CUpti_ActivityKind kind = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    int recorded = kind_enabled[kind] || api_enabled[domain][cbid];
    CUpti_ActivityAPI r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.cbid = (CUpti_CallbackId)cbid;
    r.start = gpu_now();
    uint64_t until = monotonic() + busy_ns;
    while (monotonic() < until) {}
    r.end = gpu_now();
    r.processId = (uint32_t)getpid();
    r.threadId = thread_id_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
        ? (uint32_t)syscall(SYS_gettid) : (uint32_t)(uintptr_t)pthread_self();
    r.correlationId = correlation;
    if (recorded) enqueue(API_QUEUE, &r, sizeof r);
}

/* A GPU's description, as CUPTI gives it when the device activity kind is
 * enabled: the process's device `id`, the machine's GPU `physical` (its
 * UUID, 9d5b0000-0000-0000-0000-00000000000N for N = physical). `name`
 * must live until the buffer is completed. */
void fake_device(int q, uint32_t id, const char *name, uint32_t major, uint32_t minor,
                 uint64_t memory, uint32_t multiprocessors, uint8_t physical) {
    CUpti_ActivityDevice6 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    r.id = id;
    r.uuid.bytes[0] = (char)0x9d;
    r.uuid.bytes[1] = 0x5b;
    r.uuid.bytes[15] = (char)physical;
    r.name = name;
    r.computeCapabilityMajor = major;
    r.computeCapabilityMinor = minor;
    r.globalMemorySize = memory;
    r.numMultiprocessors = multiprocessors;
    /* A Hopper GPU's limits. */
    r.l2CacheSize = 50 << 20;
    r.coreClockRate = 1980000;
    r.numThreadsPerWarp = 32;
    r.maxThreadsPerBlock = 1024;
    r.maxRegistersPerBlock = 65536;
    r.maxSharedMemoryPerBlock = 49152;
    r.maxWarpsPerMultiprocessor = 64;
    r.maxBlocksPerMultiprocessor = 32;
    r.maxSharedMemoryPerMultiprocessor = 233472;
    r.maxRegistersPerMultiprocessor = 65536;
    r.globalMemoryBandwidth = 4800000000ull; /* kB/s */
    r.constantMemorySize = 65536;
    r.maxIPC = 4;
    r.numMemcpyEngines = 2;
    r.maxBlockDimX = 1024; r.maxBlockDimY = 1024; r.maxBlockDimZ = 64;
    r.maxGridDimX = 2147483647; r.maxGridDimY = 65535; r.maxGridDimZ = 65535;
    enqueue(q, &r, sizeof r);
}

void fake_context(int q, uint32_t context, uint32_t device) {
    CUpti_ActivityContext4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    r.contextId = context;
    r.deviceId = device;
    enqueue(q, &r, sizeof r);
}

/* The graph and node of the kernels, copies and sets scripted next (0, 0:
 * launched on their own). */
static uint32_t graph_id;
static uint64_t graph_node_id;

void fake_graph_node(uint32_t graph, uint64_t node) {
    graph_id = graph;
    graph_node_id = node;
}

/* The launch type (CUpti_ActivityLaunchType) and shared memory limit
 * (CUpti_FuncShmemLimitConfig) of the kernels scripted next (0, 0: a
 * regular launch with the default limit). */
static uint8_t launch_type;
static CUpti_FuncShmemLimitConfig shared_limit;

void fake_kernel_launch(uint8_t type, uint32_t limit) {
    launch_type = type;
    shared_limit = (CUpti_FuncShmemLimitConfig)limit;
}

/* A kernel that starts `delay_ns` from now on the GPU's clock and runs `ns`. */
void fake_kernel(int q, uint32_t correlation, const char *name, uint32_t device, uint32_t context,
                 uint32_t stream, uint64_t delay_ns, uint64_t ns) {
    if (!kind_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) return;
    CUpti_ActivityKernel13 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.start = gpu_now() + delay_ns;
    r.end = r.start + ns;
    r.deviceId = device; r.contextId = context; r.streamId = stream;
    r.correlationId = correlation;
    r.gridX = 128; r.gridY = 2; r.gridZ = 1;
    r.blockX = 256; r.blockY = 1; r.blockZ = 1;
    r.registersPerThread = 40;
    r.staticSharedMemory = 4096;
    r.dynamicSharedMemory = 512;
    r.localMemoryPerThread = 16;
    r.localMemoryTotal = 16 * 128 * 2 * 256;
    /* CUPTI's grid ids are unique in the process. */
    static int64_t grids = 1;
    r.gridId = __atomic_fetch_add(&grids, 1, __ATOMIC_RELAXED);
    r.sharedMemoryExecuted = 8192;
    r.name = name;
    r.graphId = graph_id; r.graphNodeId = graph_node_id;
    r.launchType = launch_type; r.shmemLimitConfig = shared_limit;
    enqueue(q, &r, sizeof r);
}

void fake_memcpy(int q, uint32_t correlation, uint8_t kind, uint64_t bytes, uint32_t device,
                 uint32_t context, uint32_t stream, uint64_t delay_ns, uint64_t ns) {
    CUpti_ActivityMemcpy7 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = kind;
    r.srcKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.dstKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.bytes = bytes;
    r.start = gpu_now() + delay_ns;
    r.end = r.start + ns;
    r.deviceId = device; r.contextId = context; r.streamId = stream;
    r.correlationId = correlation;
    r.graphId = graph_id; r.graphNodeId = graph_node_id;
    enqueue(q, &r, sizeof r);
}

/* A copy from one GPU to another (recorded when its kind is enabled, as
 * CUPTI records them), on `device`'s stream. */
void fake_peer_copy(int q, uint32_t correlation, uint64_t bytes, uint32_t src_device, uint32_t src_context,
                    uint32_t dst_device, uint32_t dst_context, uint32_t device, uint32_t context,
                    uint32_t stream, uint64_t delay_ns, uint64_t ns) {
    if (!kind_enabled[CUPTI_ACTIVITY_KIND_MEMCPY2]) return;
    CUpti_ActivityMemcpyPtoP4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    r.srcKind = r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.bytes = bytes;
    r.start = gpu_now() + delay_ns;
    r.end = r.start + ns;
    r.deviceId = device; r.contextId = context; r.streamId = stream;
    r.srcDeviceId = src_device; r.srcContextId = src_context;
    r.dstDeviceId = dst_device; r.dstContextId = dst_context;
    r.correlationId = correlation;
    r.graphId = graph_id; r.graphNodeId = graph_node_id;
    enqueue(q, &r, sizeof r);
}

void fake_memset(int q, uint32_t correlation, uint32_t value, uint64_t bytes, uint32_t device,
                 uint32_t context, uint32_t stream, uint64_t delay_ns, uint64_t ns) {
    CUpti_ActivityMemset5 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    r.value = value;
    r.bytes = bytes;
    r.start = gpu_now() + delay_ns;
    r.end = r.start + ns;
    r.deviceId = device; r.contextId = context; r.streamId = stream;
    r.correlationId = correlation;
    r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.graphId = graph_id; r.graphNodeId = graph_node_id;
    enqueue(q, &r, sizeof r);
}

void fake_sync(int q, uint32_t correlation, uint32_t context, uint32_t stream, uint64_t ns) {
    if (!kind_enabled[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]) return;
    CUpti_ActivitySynchronization2 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    r.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    r.start = gpu_now();
    r.end = r.start + ns;
    r.correlationId = correlation;
    r.contextId = context; r.streamId = stream;
    r.cudaEventId = 0;
    enqueue(q, &r, sizeof r);
}

/* A kernel launched through cudaLaunchKernel on the calling thread (device
 * 0, context 1), running `ns`, for scripts that do not spell CUPTI's
 * numbers (the Python tests). `name` must live until the buffer is
 * completed. */
void fake_launch_ns(uint32_t correlation, const char *name, uint32_t stream, uint64_t ns) {
    fake_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, correlation, 10000);
    fake_kernel(0, correlation, name, 0, 1, stream, 0, ns);
}

/* fake_launch_ns of a 20 us kernel. */
void fake_launch(uint32_t correlation, const char *name, uint32_t stream) {
    fake_launch_ns(correlation, name, stream, 20000);
}
