/* Every function of NVIDIA's NVTX C API (A and W forms), as a program built
 * against NVIDIA's headers with NVTX_NO_IMPL calls it. The drop-in test runs
 * it on NVIDIA's libnvtx3interop.so.1 and on nvtxr's libnvToolsExt.so.1 /
 * libnvtx3interop.so.1, and compares what the tool receives. */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtSync.h>

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* nvToolsExtCuda.h, CudaRt.h and OpenCL.h need CUDA's and OpenCL's headers;
 * these declarations match the exported symbols. */
#define NAME_FNS(kind, T) \
    void nvtxName##kind##A(T object, const char *name); \
    void nvtxName##kind##W(T object, const wchar_t *name);
NAME_FNS(CuDevice, int) NAME_FNS(CuContext, void *) NAME_FNS(CuStream, void *) NAME_FNS(CuEvent, void *)
NAME_FNS(CudaDevice, int) NAME_FNS(CudaStream, void *) NAME_FNS(CudaEvent, void *)
NAME_FNS(ClDevice, void *) NAME_FNS(ClContext, void *) NAME_FNS(ClCommandQueue, void *) NAME_FNS(ClMemObject, void *)
NAME_FNS(ClSampler, void *) NAME_FNS(ClProgram, void *) NAME_FNS(ClEvent, void *)

static nvtxEventAttributes_t attributes(void) {
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF112233u;
    a.category = 9;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = -77;
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"wide attributes";
    return a;
}

int main(void) {
    nvtxInitialize(NULL);
    nvtxEventAttributes_t a = attributes();
    uint32_t tid = (uint32_t)syscall(SYS_gettid);

    nvtxMarkA("mark A");
    nvtxMarkW(L"mark W");
    nvtxMarkEx(&a);
    printf("pushA %d\n", nvtxRangePushA("push A"));
    printf("pushW %d\n", nvtxRangePushW(L"push W"));
    printf("pushEx %d\n", nvtxRangePushEx(&a));
    printf("pop %d %d %d\n", nvtxRangePop(), nvtxRangePop(), nvtxRangePop());
    nvtxRangeId_t r1 = nvtxRangeStartA("start A");
    nvtxRangeId_t r2 = nvtxRangeStartW(L"start W");
    nvtxRangeId_t r3 = nvtxRangeStartEx(&a);
    printf("ids %llu %llu %llu\n", (unsigned long long)r1, (unsigned long long)r2, (unsigned long long)r3);
    nvtxRangeEnd(r3);
    nvtxRangeEnd(r2);
    nvtxRangeEnd(r1);
    nvtxNameCategoryA(1, "category A");
    nvtxNameCategoryW(2, L"category W");
    nvtxNameOsThreadA(tid, "thread A");
    nvtxNameOsThreadW(tid, L"thread W");

    nvtxDomainHandle_t da = nvtxDomainCreateA("domain A");
    nvtxDomainHandle_t dw = nvtxDomainCreateW(L"domain W");
    printf("domains %s\n", da && dw ? "handles" : "NULL");
    nvtxStringHandle_t sa = nvtxDomainRegisterStringA(da, "string A");
    nvtxStringHandle_t sw = nvtxDomainRegisterStringW(dw, L"string W");
    nvtxDomainNameCategoryA(da, 3, "domain category A");
    nvtxDomainNameCategoryW(dw, 4, L"domain category W");
    nvtxEventAttributes_t ra = attributes();
    ra.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    ra.message.registered = sa;
    nvtxDomainMarkEx(da, &ra);
    printf("dpush %d\n", nvtxDomainRangePushEx(da, &ra));
    printf("dpop %d\n", nvtxDomainRangePop(da));
    nvtxEventAttributes_t rw = attributes();
    rw.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    rw.message.registered = sw;
    nvtxRangeId_t dr = nvtxDomainRangeStartEx(dw, &rw);
    nvtxDomainRangeEnd(dw, dr);
    nvtxDomainMarkEx(NULL, &a); /* the default domain, as NVIDIA's Python package sends it */

    nvtxResourceAttributes_t res = {0};
    res.version = NVTX_VERSION;
    res.size = NVTX_RESOURCE_ATTRIB_STRUCT_SIZE;
    res.identifierType = NVTX_RESOURCE_TYPE_GENERIC_POINTER;
    res.identifier.pValue = (const void *)0x1234;
    res.messageType = NVTX_MESSAGE_TYPE_ASCII;
    res.message.ascii = "resource";
    nvtxResourceHandle_t rh = nvtxDomainResourceCreate(da, &res);
    nvtxDomainResourceDestroy(rh);

    nvtxSyncUserAttributes_t sync = {0};
    sync.version = NVTX_VERSION;
    sync.size = NVTX_SYNCUSER_ATTRIB_STRUCT_SIZE;
    sync.messageType = NVTX_MESSAGE_TYPE_ASCII;
    sync.message.ascii = "lock";
    nvtxSyncUser_t su = nvtxDomainSyncUserCreate(da, &sync);
    nvtxDomainSyncUserAcquireStart(su);
    nvtxDomainSyncUserAcquireFailed(su);
    nvtxDomainSyncUserAcquireStart(su);
    nvtxDomainSyncUserAcquireSuccess(su);
    nvtxDomainSyncUserReleasing(su);
    nvtxDomainSyncUserDestroy(su);

#define NAME(kind, id) nvtxName##kind##A(id, #kind " A"); nvtxName##kind##W(id, L"" #kind " W");
    NAME(CuDevice, 0) NAME(CuContext, (void *)0x10) NAME(CuStream, (void *)0x20) NAME(CuEvent, (void *)0x30)
    NAME(CudaDevice, 1) NAME(CudaStream, (void *)0x40) NAME(CudaEvent, (void *)0x50)
    NAME(ClDevice, (void *)0x60) NAME(ClContext, (void *)0x70) NAME(ClCommandQueue, (void *)0x80)
    NAME(ClMemObject, (void *)0x90) NAME(ClSampler, (void *)0xa0) NAME(ClProgram, (void *)0xb0)
    NAME(ClEvent, (void *)0xc0)

    nvtxDomainDestroy(dw);
    nvtxDomainDestroy(da);
    nvtxDomainDestroy(NULL);
    printf("unbalanced pop %d\n", nvtxRangePop());
    return 0;
}
