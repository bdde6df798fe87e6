/* Registrations whose structs hold garbage, as NVIDIA's own CoverageCounter.c
 * passes an uninitialized nvtxCountersAttr_t: names and arrays pointing at
 * unmapped memory, and structs that are themselves unmapped, through every
 * registration call of the counters, payload and memory extensions. Under
 * `nvtxr record` the program must live on: it prints "survived" and records
 * a last range. */
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtMem.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void) {
    /* A page followed by a hole: `hole` can be neither read nor written
       (and, unlike an unmapped page, is never mapped again by someone else). */
    char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(page + 4096, 4096, PROT_NONE);
    void *hole = page + 4096;
    nvtxDomainHandle_t d = nvtxDomainCreateA("garbage");

    /* Counters: a name in the hole (sampled, so it shows), the attributes in it. */
    nvtxCounterAttr_t counter;
    memset(&counter, 0, sizeof counter);
    counter.structSize = sizeof counter;
    counter.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_INT64;
    counter.name = hole;
    uint64_t id = nvtxCounterRegister(d, &counter);
    nvtxCounterSampleInt64(d, id, 42);
    nvtxCounterRegister(d, hole);

    /* Payload schemas and enums: entries, their names, a semantics chain in the hole. */
    nvtxPayloadSchemaEntry_t entries[2] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, hole, NULL, 0, 0, hole, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "fine", NULL, 0, 4, NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t schema;
    memset(&schema, 0, sizeof schema);
    schema.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME;
    schema.name = hole;
    schema.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    schema.entries = entries;
    schema.numEntries = 2;
    nvtxPayloadSchemaRegister(d, &schema);
    schema.entries = hole;
    nvtxPayloadSchemaRegister(d, &schema);
    nvtxPayloadSchemaRegister(d, hole);
    nvtxPayloadEnumAttr_t enumeration;
    memset(&enumeration, 0, sizeof enumeration);
    enumeration.fieldMask = NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES |
                            NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE;
    enumeration.entries = hole;
    enumeration.numEntries = 3;
    enumeration.sizeOfEnum = 4;
    nvtxPayloadEnumRegister(d, &enumeration);
    nvtxPayloadEnumRegister(d, hole);

    /* Time domains and scopes: the attributes in the hole. */
    nvtxTimeDomainRegister(d, hole);
    nvtxScopeRegister(d, hole);

    /* Memory: a heap named in the hole with its range in it, regions and
       their handles out in it, a region named in it; the structs in it. */
    nvtxMemHeapDesc_t heap;
    memset(&heap, 0, sizeof heap);
    heap.extCompatID = NVTX_EXT_COMPATID_MEM;
    heap.structSize = sizeof heap;
    heap.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    heap.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    heap.typeSpecificDescSize = sizeof(nvtxMemVirtualRangeDesc_t);
    heap.typeSpecificDesc = hole;
    heap.messageType = NVTX_MESSAGE_TYPE_ASCII;
    heap.message.ascii = hole;
    nvtxMemHeapHandle_t h = nvtxMemHeapRegister(d, &heap);
    nvtxMemHeapRegister(d, hole);
    nvtxMemRegionsRegisterBatch_t regions;
    memset(&regions, 0, sizeof regions);
    regions.extCompatID = NVTX_EXT_COMPATID_MEM;
    regions.structSize = sizeof regions;
    regions.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    regions.heap = h;
    regions.regionCount = 2;
    regions.regionDescElementSize = sizeof(nvtxMemVirtualRangeDesc_t);
    regions.regionDescElements = hole;
    regions.regionHandleElementsOut = hole;
    nvtxMemRegionsRegister(d, &regions);
    nvtxMemVirtualRangeDesc_t range = {4096, page};
    regions.regionCount = 1;
    regions.regionDescElements = &range;
    nvtxMemRegionsRegister(d, &regions);
    nvtxMemRegionsRegister(d, hole);
    nvtxMemRegionNameDesc_t name;
    memset(&name, 0, sizeof name);
    name.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    name.nameType = NVTX_MESSAGE_TYPE_ASCII;
    name.region.pointer = page;
    name.name.ascii = hole;
    nvtxMemRegionsNameBatch_t names;
    memset(&names, 0, sizeof names);
    names.extCompatID = NVTX_EXT_COMPATID_MEM;
    names.structSize = sizeof names;
    names.regionCount = 1;
    names.regionElementSize = sizeof name;
    names.regionElements = &name;
    nvtxMemRegionsName(d, &names);
    nvtxMemRegionsName(d, hole);

    nvtxRangePushA("after");
    nvtxRangePop();
    printf("survived\n");
    return 0;
}
