/* NVTX's memory extension through NVIDIA's header (nvToolsExtMem.h): a
 * sub-allocator heap over a virtual range, two regions registered in it
 * (their handles out), named (by address and by handle); a permissions
 * object created, assigned to both regions, bound to the thread, unbound,
 * reset and destroyed, the process-wide one reset; one region resized, both
 * unregistered, the heap reset and unregistered. The recording test checks
 * every recorded mark. */
#include <nvtx3/nvToolsExtMem.h>

#include <stdint.h>
#include <stdio.h>

#define BASE ((uintptr_t)0x10000000)

int main(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("memory");

    nvtxMemVirtualRangeDesc_t pool = {1 << 20, (const void*)BASE};
    nvtxMemHeapDesc_t heap_desc = {0};
    heap_desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    heap_desc.structSize = sizeof heap_desc;
    heap_desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    heap_desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    heap_desc.typeSpecificDescSize = sizeof pool;
    heap_desc.typeSpecificDesc = &pool;
    heap_desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
    heap_desc.message.ascii = "pool";
    nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(d, &heap_desc);

    nvtxMemVirtualRangeDesc_t regions[2] = {{4096, (const void*)BASE}, {256, (const void*)(BASE + 4096)}};
    nvtxMemRegionHandle_t handles[2] = {0, 0};
    nvtxMemRegionsRegisterBatch_t reg = {0};
    reg.extCompatID = NVTX_EXT_COMPATID_MEM;
    reg.structSize = sizeof reg;
    reg.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    reg.heap = heap;
    reg.regionCount = 2;
    reg.regionDescElementSize = sizeof regions[0];
    reg.regionDescElements = regions;
    reg.regionHandleElementsOut = handles;
    nvtxMemRegionsRegister(d, &reg);

    nvtxMemRegionNameDesc_t names[2] = {{0}, {0}};
    names[0].regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    names[0].nameType = NVTX_MESSAGE_TYPE_ASCII;
    names[0].region.pointer = (const void*)BASE;
    names[0].name.ascii = "weights";
    names[1].regionRefType = NVTX_MEM_REGION_REF_TYPE_HANDLE;
    names[1].nameType = NVTX_MESSAGE_TYPE_ASCII;
    names[1].region.handle = handles[1];
    names[1].name.ascii = "bias";
    nvtxMemRegionsNameBatch_t name_batch = {0};
    name_batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    name_batch.structSize = sizeof name_batch;
    name_batch.regionCount = 2;
    name_batch.regionElementSize = sizeof names[0];
    name_batch.regionElements = names;
    nvtxMemRegionsName(d, &name_batch);

    nvtxMemPermissionsHandle_t perm =
        nvtxMemPermissionsCreate(d, NVTX_MEM_PERMISSIONS_CREATE_FLAGS_EXCLUDE_GLOBAL_WRITE);
    nvtxMemPermissionsAssignRegionDesc_t access[2] = {{0}, {0}};
    access[0].flags = NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ;
    access[0].regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    access[0].region.pointer = (const void*)BASE;
    access[1].flags = NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ | NVTX_MEM_PERMISSIONS_REGION_FLAGS_WRITE;
    access[1].regionRefType = NVTX_MEM_REGION_REF_TYPE_HANDLE;
    access[1].region.handle = handles[1];
    nvtxMemPermissionsAssignBatch_t assign = {0};
    assign.extCompatID = NVTX_EXT_COMPATID_MEM;
    assign.structSize = sizeof assign;
    assign.permissions = perm;
    assign.regionCount = 2;
    assign.regionElementSize = sizeof access[0];
    assign.regionElements = access;
    nvtxMemPermissionsAssign(d, &assign);
    nvtxMemPermissionsBind(d, perm, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD,
                           NVTX_MEM_PERMISSIONS_BIND_FLAGS_STRICT_WRITE);
    nvtxMemPermissionsUnbind(d, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD);
    nvtxMemPermissionsReset(d, perm);
    nvtxMemPermissionsDestroy(d, perm);
    nvtxMemPermissionsReset(d, NVTX_MEM_PERMISSIONS_HANDLE_PROCESS_WIDE);

    nvtxMemVirtualRangeDesc_t grown = {8192, (const void*)BASE};
    nvtxMemRegionsResizeBatch_t resize = {0};
    resize.extCompatID = NVTX_EXT_COMPATID_MEM;
    resize.structSize = sizeof resize;
    resize.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    resize.regionDescCount = 1;
    resize.regionDescElementSize = sizeof grown;
    resize.regionDescElements = &grown;
    nvtxMemRegionsResize(d, &resize);

    nvtxMemRegionRef_t refs[2];
    refs[0].pointer = (const void*)BASE;
    refs[1].handle = handles[1];
    nvtxMemRegionsUnregisterBatch_t unreg = {0};
    unreg.extCompatID = NVTX_EXT_COMPATID_MEM;
    unreg.structSize = sizeof unreg;
    unreg.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    unreg.refCount = 2;
    unreg.refElementSize = sizeof refs[0];
    unreg.refElements = refs;
    nvtxMemRegionsUnregister(d, &unreg);

    nvtxMemHeapReset(d, heap);
    nvtxMemHeapUnregister(d, heap);
    printf("handles %s\n", handles[1] == (nvtxMemRegionHandle_t)(BASE + 4096) ? "addresses" : "other");
    return 0;
}
