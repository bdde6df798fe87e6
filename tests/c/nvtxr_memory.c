/* memory_regions.c through nvtxr's own C API (nvtxr.h): the same heap over
 * a virtual range and its two regions, one region per call, registered,
 * named, one resized, both unregistered, the heap reset and unregistered;
 * then the calls' answers to bad arguments. The recording test checks every
 * recorded mark. */
#include <nvtxr.h>

#include <stdint.h>
#include <stdio.h>

#define BASE ((uintptr_t)0x10000000)

int main(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("memory");
    nvtxr_mem_heap_t *heap = nvtxr_mem_heap_register(d, (const void *)BASE, 1 << 20, "pool");
    nvtxr_mem_region_register(d, heap, (const void *)BASE, 4096);
    nvtxr_mem_region_register(d, heap, (const void *)(BASE + 4096), 256);
    nvtxr_mem_region_name(d, (const void *)BASE, "weights");
    nvtxr_mem_region_name(d, (const void *)(BASE + 4096), "bias");
    nvtxr_mem_region_resize(d, (const void *)BASE, 8192);
    nvtxr_mem_region_unregister(d, (const void *)BASE);
    nvtxr_mem_region_unregister(d, (const void *)(BASE + 4096));
    nvtxr_mem_heap_reset(d, heap);
    nvtxr_mem_heap_unregister(d, heap);
    printf("refused %d %d %d\n", nvtxr_mem_region_name(d, (const void *)BASE, NULL),
           nvtxr_mem_heap_unregister(d, NULL), nvtxr_mem_heap_reset((nvtxr_domain_t *)0x10, NULL));
    return 0;
}
