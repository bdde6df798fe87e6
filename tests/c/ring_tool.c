/* The recording benchmark's reference: a minimal NVTX tool that keeps each
 * thread's events in a ring in memory, the floor a recorder that writes
 * anything can reach. Built with NVIDIA's headers (nvToolsExt.h, for its tool-side types) as a shared
 * library and loaded through NVTX_INJECTION64_PATH.
 *
 * Each push, pop and mark appends a record to its thread's ring (1 MiB,
 * mapped on the thread's first event, found through an initial-exec TLS
 * slot): the time-stamp counter (8 bytes), the kind (1), the text's length
 * (1) and the text, up to 255 bytes, copied. No lock, no file, no depth kept;
 * the ring wraps and overwrites, so unlike nvtxr's recorder it loses events. */
#include <nvtx3/nvToolsExt.h> /* and, through it, nvtxDetail/nvtxTypes.h */

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#define RING (1u << 20)
#define MAX_RECORD (8 + 1 + 1 + 255)

struct ring {
    size_t at;
    unsigned char bytes[RING];
};

static __thread struct ring *mine __attribute__((tls_model("initial-exec")));

static struct ring *ring(void) {
    struct ring *r = mine;
    if (__builtin_expect(r == NULL, 0)) {
        void *p = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        mine = r = p;
    }
    return r;
}

static void append(unsigned char kind, const char *text) {
    uint64_t now = __rdtsc();
    struct ring *r = ring();
    if (r == NULL) return;
    size_t at = r->at;
    if (at > RING - MAX_RECORD) at = 0;
    unsigned char *out = r->bytes + at;
    size_t n = text ? strnlen(text, 255) : 0;
    memcpy(out, &now, 8);
    out[8] = kind;
    out[9] = (unsigned char)n;
    memcpy(out + 10, text, n);
    r->at = at + 10 + n;
}

static void mark_a(const char *message) { append(1, message); }
static int push_a(const char *message) { append(2, message); return 0; }
static int pop(void) { append(3, NULL); return 0; }

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
    const NvtxExportTableCallbacks *callbacks = get_export_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (callbacks == NULL || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) ||
        size <= NVTX_CBID_CORE_RangePop)
        return 0;
    *table[NVTX_CBID_CORE_MarkA] = (NvtxFunctionPointer)mark_a;
    *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push_a;
    *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
    return 1;
}
