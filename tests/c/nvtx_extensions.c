/* Every function of NVIDIA's NVTX extension API (payloads, deferred events
 * and time, counters, memory), as a program built against NVIDIA's headers
 * with NVTX_NO_IMPL calls it, printing what each returns. The drop-in test
 * runs it on NVIDIA's libnvtx3interop.so.1 and on nvtxr's drop-ins, with no
 * tool and under tools with and without extensions, and compares. */
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtMem.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <stdint.h>
#include <stdio.h>

/* nvToolsExtMemCudaRt.h needs CUDA's headers; these match its exports. */
nvtxMemPermissionsHandle_t nvtxMemCudaGetProcessWidePermissions(nvtxDomainHandle_t domain);
nvtxMemPermissionsHandle_t nvtxMemCudaGetDeviceWidePermissions(nvtxDomainHandle_t domain, int device);
void nvtxMemCudaSetPeerAccess(nvtxDomainHandle_t domain, nvtxMemPermissionsHandle_t permissions, int devicePeer, uint32_t flags);
void nvtxMemCudaMarkInitialized(nvtxDomainHandle_t domain, void *stream, uint8_t isPerThreadStream, const void *desc);

static int64_t clock_fn(void) { return 5; }
static int64_t clock_data_fn(void *data) { return *(int64_t *)data; }

struct sample {
    int32_t step;
    double loss;
};

int main(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("ext");
    printf("enabled %d %d\n", (int)nvtxDomainIsEnabled(d), (int)nvtxDomainIsEnabled(NULL));

    nvtxPayloadSchemaEntry_t entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "step", NULL, 0, 0, NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "loss", NULL, 0, 8, NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t schema = {0};
    schema.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE;
    schema.name = "sample";
    schema.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    schema.entries = entries;
    schema.numEntries = 2;
    schema.payloadStaticSize = sizeof(struct sample);
    uint64_t sid = nvtxPayloadSchemaRegister(d, &schema);
    printf("schema %llu\n", (unsigned long long)sid);

    nvtxPayloadEnumAttr_t enumeration = {0};
    printf("enum %llu\n", (unsigned long long)nvtxPayloadEnumRegister(d, &enumeration));

    struct sample s = {3, 0.5};
    nvtxPayloadData_t pd = {sid, sizeof s, &s};
    nvtxMarkPayload(d, &pd, 1);
    printf("push %d\n", nvtxRangePushPayload(d, &pd, 1));
    printf("pop %d\n", nvtxRangePopPayload(d, &pd, 1));
    uint64_t id = nvtxRangeStartPayload(d, &pd, 1);
    printf("start %llu\n", (unsigned long long)id);
    nvtxRangeEndPayload(d, id, &pd, 1);
    printf("timestamp %lld\n", (long long)nvtxTimestampGet());

    nvtxTimeDomainAttr_t time_domain = {0};
    uint64_t td = nvtxTimeDomainRegister(d, &time_domain);
    printf("time domain %llu\n", (unsigned long long)td);
    nvtxTimerSource(d, td, 0, clock_fn);
    int64_t base = 9;
    nvtxTimerSourceWithData(d, td, 1, clock_data_fn, &base);
    nvtxScopeAttr_t scope = {0};
    printf("scope %llu\n", (unsigned long long)nvtxScopeRegister(d, &scope));
    nvtxTimeSyncPoint(d, td, 14, 100, 200);
    nvtxTimeSyncPointTable(d, td, 14, NULL, 0);
    nvtxTimestampConversionFactor(d, td, 14, 1.5, 10, 20);
    nvtxEventSubmit(d, &pd, 1);
    nvtxEventBatchSubmit(d, NULL);

    nvtxCounterAttr_t counter = {0};
    uint64_t cid = nvtxCounterRegister(d, &counter);
    printf("counter %llu\n", (unsigned long long)cid);
    nvtxCounterSampleInt64(d, cid, -4);
    nvtxCounterSampleFloat64(d, cid, 2.25);
    nvtxCounterSample(d, cid, &s, sizeof s);
    nvtxCounterSampleNoValue(d, cid, 2);
    nvtxCounterBatchSubmit(d, NULL);

    nvtxMemVirtualRangeDesc_t range = {4096, (void *)0x10000};
    nvtxMemHeapDesc_t heap_desc = {0};
    heap_desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    heap_desc.structSize = sizeof heap_desc;
    heap_desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    heap_desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    heap_desc.typeSpecificDescSize = sizeof range;
    heap_desc.typeSpecificDesc = &range;
    nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(d, &heap_desc);
    printf("heap %s\n", heap ? "handle" : "NULL");
    nvtxMemRegionsRegister(d, NULL);
    nvtxMemRegionsResize(d, NULL);
    nvtxMemRegionsUnregister(d, NULL);
    nvtxMemRegionsName(d, NULL);
    nvtxMemPermissionsAssign(d, NULL);
    nvtxMemPermissionsHandle_t permissions = nvtxMemPermissionsCreate(d, 0);
    printf("permissions %s\n", permissions ? "handle" : "NULL");
    nvtxMemPermissionsBind(d, permissions, 1, 0);
    nvtxMemPermissionsUnbind(d, 1);
    nvtxMemPermissionsReset(d, permissions);
    nvtxMemPermissionsDestroy(d, permissions);
    nvtxMemHeapReset(d, heap);
    nvtxMemHeapUnregister(d, heap);
    printf("process-wide %s\n", nvtxMemCudaGetProcessWidePermissions(d) ? "handle" : "NULL");
    printf("device-wide %s\n", nvtxMemCudaGetDeviceWidePermissions(d, 0) ? "handle" : "NULL");
    nvtxMemCudaSetPeerAccess(d, permissions, 1, 0);
    nvtxMemCudaMarkInitialized(d, NULL, 0, NULL);

    nvtxMarkA("core still works");
    nvtxDomainDestroy(d);
    return 0;
}
