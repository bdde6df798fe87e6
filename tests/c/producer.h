/* One small NVTX API over two producers, so the differential test and the
 * benchmark run the very same code through nvtxr or through NVIDIA's NVTX3
 * (header-only, or libnvtx3interop.so.1 with -DNVTX_NO_IMPL).
 * Build with -DUSE_NVIDIA for NVIDIA's, without for nvtxr. */
#ifndef NVTXR_PRODUCER_H
#define NVTXR_PRODUCER_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef USE_NVIDIA
#include <nvtx3/nvToolsExt.h>

typedef nvtxDomainHandle_t p_domain;
typedef nvtxStringHandle_t p_string;
#define P_NAME "NVIDIA"

static inline nvtxEventAttributes_t p_attr(void) {
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}
static inline nvtxEventAttributes_t p_attr_full(const char *msg, uint32_t argb, uint32_t category, double payload) {
    nvtxEventAttributes_t a = p_attr();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
    a.category = category;
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = payload;
    return a;
}
static inline nvtxEventAttributes_t p_attr_string(p_string s) {
    nvtxEventAttributes_t a = p_attr();
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    return a;
}

#define P_INITIALIZE() nvtxInitialize(NULL)
#define P_MARK(msg) nvtxMarkA(msg)
#define P_PUSH(msg) nvtxRangePushA(msg)
#define P_POP() nvtxRangePop()
#define P_START(msg) nvtxRangeStartA(msg)
#define P_END(id) nvtxRangeEnd(id)
#define P_MARK_FULL(msg, argb, cat, pl) do { nvtxEventAttributes_t a_ = p_attr_full(msg, argb, cat, pl); nvtxMarkEx(&a_); } while (0)
#define P_PUSH_FULL(msg, argb, cat, pl) do { nvtxEventAttributes_t a_ = p_attr_full(msg, argb, cat, pl); nvtxRangePushEx(&a_); } while (0)
#define P_START_FULL(msg, argb, cat, pl) nvtxRangeStartEx((nvtxEventAttributes_t[]){p_attr_full(msg, argb, cat, pl)})
#define P_NAME_CATEGORY(id, name) nvtxNameCategoryA(id, name)
#define P_NAME_THREAD(name) nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), name)
#define P_DOMAIN_CREATE(name) nvtxDomainCreateA(name)
#define P_DOMAIN_DESTROY(d) nvtxDomainDestroy(d)
#define P_REGISTER(d, text) nvtxDomainRegisterStringA(d, text)
#define P_DOMAIN_MARK(d, msg) do { nvtxEventAttributes_t a_ = p_attr(); a_.messageType = NVTX_MESSAGE_TYPE_ASCII; a_.message.ascii = msg; nvtxDomainMarkEx(d, &a_); } while (0)
#define P_DOMAIN_MARK_STRING(d, s) do { nvtxEventAttributes_t a_ = p_attr_string(s); nvtxDomainMarkEx(d, &a_); } while (0)
#define P_DOMAIN_PUSH_STRING(d, s) nvtxDomainRangePushEx(d, (nvtxEventAttributes_t[]){p_attr_string(s)})
#define P_DOMAIN_PUSH_FULL(d, msg, argb, cat, pl) nvtxDomainRangePushEx(d, (nvtxEventAttributes_t[]){p_attr_full(msg, argb, cat, pl)})
#define P_DOMAIN_POP(d) nvtxDomainRangePop(d)
#define P_DOMAIN_START_STRING(d, s) nvtxDomainRangeStartEx(d, (nvtxEventAttributes_t[]){p_attr_string(s)})
#define P_DOMAIN_END(d, id) nvtxDomainRangeEnd(d, id)
#define P_DOMAIN_NAME_CATEGORY(d, id, name) nvtxDomainNameCategoryA(d, id, name)

#ifdef NVTX_NO_IMPL
/* nvToolsExtCuda.h / CudaRt.h need CUDA's headers; the exported symbols only need these. */
void nvtxNameCuDeviceA(int device, const char *name);
void nvtxNameCuStreamA(void *stream, const char *name);
void nvtxNameCudaDeviceA(int device, const char *name);
void nvtxNameCudaEventA(void *event, const char *name);
#define P_NAME_CU_DEVICE(i, n) nvtxNameCuDeviceA(i, n)
#define P_NAME_CU_STREAM(p, n) nvtxNameCuStreamA(p, n)
#define P_NAME_CUDA_DEVICE(i, n) nvtxNameCudaDeviceA(i, n)
#define P_NAME_CUDA_EVENT(p, n) nvtxNameCudaEventA(p, n)
#else
/* Header-only, NVIDIA's CUDA naming needs CUDA's own headers: not available. */
#define P_NAME_CU_DEVICE(i, n) ((void)(i), (void)(n))
#define P_NAME_CU_STREAM(p, n) ((void)(p), (void)(n))
#define P_NAME_CUDA_DEVICE(i, n) ((void)(i), (void)(n))
#define P_NAME_CUDA_EVENT(p, n) ((void)(p), (void)(n))
#endif

#else /* nvtxr */
#include <nvtxr.h>

typedef nvtxr_domain_t *p_domain;
typedef const nvtxr_string_t *p_string;
#define P_NAME "nvtxr"

static inline nvtxr_event_t p_event_full(const char *msg, uint32_t argb, uint32_t category, double payload) {
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.message = msg;
    e.color_type = NVTXR_COLOR_ARGB;
    e.color = argb;
    e.category = category;
    e.payload_type = NVTXR_PAYLOAD_F64;
    e.payload.as_f64 = payload;
    return e;
}

#define P_INITIALIZE() nvtxr_initialize()
#define P_MARK(msg) nvtxr_mark(NULL, msg)
#define P_PUSH(msg) nvtxr_range_push(NULL, msg)
#define P_POP() nvtxr_range_pop(NULL)
#define P_START(msg) nvtxr_range_start(NULL, msg)
#define P_END(id) nvtxr_range_end(NULL, id)
#define P_MARK_FULL(msg, argb, cat, pl) do { nvtxr_event_t e_ = p_event_full(msg, argb, cat, pl); nvtxr_mark_ex(NULL, &e_); } while (0)
#define P_PUSH_FULL(msg, argb, cat, pl) do { nvtxr_event_t e_ = p_event_full(msg, argb, cat, pl); nvtxr_range_push_ex(NULL, &e_); } while (0)
#define P_START_FULL(msg, argb, cat, pl) nvtxr_range_start_ex(NULL, (nvtxr_event_t[]){p_event_full(msg, argb, cat, pl)})
#define P_NAME_CATEGORY(id, name) nvtxr_name_category(NULL, id, name)
#define P_NAME_THREAD(name) nvtxr_name_current_thread(name)
#define P_DOMAIN_CREATE(name) nvtxr_domain_create(name)
#define P_DOMAIN_DESTROY(d) nvtxr_domain_destroy(d)
#define P_REGISTER(d, text) nvtxr_string_register(d, text)
#define P_DOMAIN_MARK(d, msg) nvtxr_mark(d, msg)
#define P_DOMAIN_MARK_STRING(d, s) nvtxr_mark_string(d, s)
#define P_DOMAIN_PUSH_STRING(d, s) nvtxr_range_push_string(d, s)
#define P_DOMAIN_PUSH_FULL(d, msg, argb, cat, pl) nvtxr_range_push_ex(d, (nvtxr_event_t[]){p_event_full(msg, argb, cat, pl)})
#define P_DOMAIN_POP(d) nvtxr_range_pop(d)
#define P_DOMAIN_START_STRING(d, s) nvtxr_range_start_string(d, s)
#define P_DOMAIN_END(d, id) nvtxr_range_end(d, id)
#define P_DOMAIN_NAME_CATEGORY(d, id, name) nvtxr_name_category(d, id, name)
#define P_NAME_CU_DEVICE(i, n) nvtxr_name_cu_device(i, n)
#define P_NAME_CU_STREAM(p, n) nvtxr_name_cu_stream(p, n)
#define P_NAME_CUDA_DEVICE(i, n) nvtxr_name_cuda_device(i, n)
#define P_NAME_CUDA_EVENT(p, n) nvtxr_name_cuda_event(p, n)
#endif

#endif
