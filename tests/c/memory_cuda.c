/* The CUDA runtime's part of NVTX's memory extension through NVIDIA's
 * header (nvToolsExtMemCudaRt.h): the process-wide and a device-wide
 * permissions object, peer access for one device and for all, and two
 * regions marked initialized by a stream. Built against CUDA's headers, or
 * without a CUDA toolkit against tests/c/cuda-stubs (it launches nothing:
 * the stream is an address). The recording test checks every mark. */
#include <nvtx3/nvToolsExtMemCudaRt.h>

#include <stdint.h>
#include <stdio.h>

#define BASE ((uintptr_t)0x20000000)

int main(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("memory");

    nvtxMemPermissionsHandle_t process = nvtxMemCudaGetProcessWidePermissions(d);
    nvtxMemPermissionsHandle_t device = nvtxMemCudaGetDeviceWidePermissions(d, 1);
    nvtxMemCudaSetPeerAccess(d, device, 0, NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
    nvtxMemCudaSetPeerAccess(d, process, NVTX_MEM_CUDA_PEER_ALL_DEVICES,
                             NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ | NVTX_MEM_PERMISSIONS_REGION_FLAGS_WRITE);

    nvtxMemVirtualRangeDesc_t regions[2] = {{4096, (const void*)BASE}, {512, (const void*)(BASE + 4096)}};
    nvtxMemMarkInitializedBatch_t init = {0};
    init.extCompatID = NVTX_EXT_COMPATID_MEM;
    init.structSize = sizeof init;
    init.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    init.regionDescCount = 2;
    init.regionDescElementSize = sizeof regions[0];
    init.regionDescElements = regions;
    nvtxMemCudaMarkInitialized(d, (cudaStream_t)(uintptr_t)0x5000, 1, &init);

    printf("handles %s\n", process && device && process != device ? "distinct" : "missing");
    return 0;
}
