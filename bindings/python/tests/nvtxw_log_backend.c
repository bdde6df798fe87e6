/* A test NVTXW backend: logs every call it receives, with every field of
 * what it was given, one line per call, to the file $NVTXW_LOG_OUT. Handles
 * and ids are numbered in order of creation, so the same calls give the
 * same log whichever producer sends them (NVIDIA's `nvtx.writer` or
 * nvtxr's). $NVTXW_LOG_FAIL names a call that fails (NVTXW_RESULT_FAILED);
 * $NVTXW_LOG_VERSION set makes nvtxwGetInterface refuse every version. */
#include <nvtxw3/nvtxw3.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out(void) {
    static FILE *f;
    if (!f) {
        const char *path = getenv("NVTXW_LOG_OUT");
        f = path ? fopen(path, "a") : stderr;
        if (!f) f = stderr;
        setvbuf(f, NULL, _IOLBF, 0);
    }
    return f;
}

static int fails(const char *call) {
    const char *fail = getenv("NVTXW_LOG_FAIL");
    return fail && strcmp(fail, call) == 0;
}

static void str(const char *s) {
    if (s)
        fprintf(out(), "\"%s\"", s);
    else
        fprintf(out(), "NULL");
}

static void hex(const void *p, size_t n) {
    const unsigned char *b = p;
    if (!b) {
        fprintf(out(), "NULL");
        return;
    }
    for (size_t i = 0; i < n; i++) fprintf(out(), "%02x", b[i]);
}

/* Handles are small numbers with a kind in the high bits. */
#define SESSION 0x1000
#define DOMAIN 0x2000
#define STREAM 0x3000
#define STRING 0x4000
static uintptr_t next[5];
static void *make(uintptr_t kind) { return (void *)(kind + ++next[kind >> 12]); }

static uint64_t next_id = 1ull << 32;

static void semantics(const nvtxSemanticsHeader_t *h) {
    for (; h; h = h->next) {
        fprintf(out(), " semantics{size=%u id=%u version=%u", h->structSize, h->semanticId, h->version);
        if (h->semanticId == NVTX_SEMANTIC_ID_COUNTERS_V1) {
            const nvtxSemanticsCounter_t *c = (const nvtxSemanticsCounter_t *)h;
            fprintf(out(), " flags=%" PRIu64 " unit=", c->flags);
            str(c->unit);
            fprintf(out(), " scale=%" PRIu64 "/%" PRIu64 " limit=%" PRId64, c->unitScaleNumerator,
                    c->unitScaleDenominator, c->limitType);
            /* Only the limits the flags say are set (NVIDIA's package leaves the others unset). */
            if (c->flags & NVTX_COUNTER_FLAG_LIMIT_MIN) fprintf(out(), " min=%" PRIx64, c->min.u64);
            if (c->flags & NVTX_COUNTER_FLAG_LIMIT_MAX) fprintf(out(), " max=%" PRIx64, c->max.u64);
        }
        fprintf(out(), "}");
    }
}

static nvtxwResultCode_t SessionBegin(const nvtxwSessionAttributes_t *a, nvtxwSessionHandle_t *s) {
    fprintf(out(), "SessionBegin size=%zu name=", a->structSize);
    str(a->name);
    fprintf(out(), " config=");
    str(a->configString);
    if (fails("SessionBegin")) return fprintf(out(), " -> failed\n"), NVTXW_RESULT_FAILED;
    *s = make(SESSION);
    fprintf(out(), " -> %p\n", (void *)*s);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t SessionEnd(nvtxwSessionHandle_t s) {
    fprintf(out(), "SessionEnd %p\n", (void *)s);
    return fails("SessionEnd") ? NVTXW_RESULT_FAILED : NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t DomainRegister(nvtxwSessionHandle_t s, const nvtxwDomainAttributes_t *a,
                                        nvtxDomainHandle_t *d) {
    fprintf(out(), "DomainRegister %p size=%zu name=", (void *)s, a ? a->structSize : 0);
    str(a ? a->name : NULL);
    *d = make(DOMAIN);
    fprintf(out(), " -> %p\n", (void *)*d);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t CategoryRegister(nvtxDomainHandle_t d, uint32_t id, const char *name) {
    fprintf(out(), "CategoryRegister %p %u ", (void *)d, id);
    str(name);
    fprintf(out(), "\n");
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t StringRegister(nvtxDomainHandle_t d, const char *s, nvtxStringHandle_t *h) {
    fprintf(out(), "StringRegister %p ", (void *)d);
    str(s);
    *h = make(STRING);
    fprintf(out(), " -> %p\n", (void *)*h);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t ResourceRegister(nvtxDomainHandle_t d, const nvtxResourceAttributes_t *a) {
    (void)a;
    fprintf(out(), "ResourceRegister %p\n", (void *)d);
    return NVTXW_RESULT_NOT_SUPPORTED;
}

static nvtxwResultCode_t ScopeRegister(nvtxDomainHandle_t d, const nvtxScopeAttr_t *a, uint64_t *id) {
    fprintf(out(), "ScopeRegister %p size=%zu path=", (void *)d, a->structSize);
    str(a->path);
    *id = next_id++;
    fprintf(out(), " parent=%" PRIu64 " id=%" PRIu64 " -> %" PRIu64 "\n", a->parentScope, a->scopeId, *id);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t SchemaRegister(nvtxDomainHandle_t d, const nvtxPayloadSchemaAttr_t *a,
                                        uint64_t *id) {
    fprintf(out(), "SchemaRegister %p mask=%" PRIu64 " name=", (void *)d, a->fieldMask);
    str(a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME ? a->name : NULL);
    fprintf(out(), " type=%" PRIu64 " flags=%" PRIu64 " size=%zu entries=%zu",
            a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE ? a->type : 0,
            a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS ? a->flags : 0,
            a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE ? a->payloadStaticSize : 0,
            a->numEntries);
    for (size_t i = 0; i < a->numEntries; i++) {
        const nvtxPayloadSchemaEntry_t *e = &a->entries[i];
        fprintf(out(), " [flags=%" PRIu64 " type=%" PRIu64 " name=", e->flags, e->type);
        str(e->name);
        fprintf(out(), " description=");
        str(e->description);
        fprintf(out(), " detail=%" PRIu64 " offset=%" PRIu64, e->arrayOrUnionDetail, e->offset);
        semantics(e->semantics);
        fprintf(out(), "]");
    }
    if (fails("SchemaRegister")) return fprintf(out(), " -> failed\n"), NVTXW_RESULT_FAILED;
    *id = next_id++;
    fprintf(out(), " -> %" PRIu64 "\n", *id);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t EnumRegister(nvtxDomainHandle_t d, const nvtxPayloadEnumAttr_t *a, uint64_t *id) {
    (void)a;
    (void)id;
    fprintf(out(), "EnumRegister %p\n", (void *)d);
    return NVTXW_RESULT_NOT_SUPPORTED;
}

static nvtxwResultCode_t CounterRegister(nvtxDomainHandle_t d, const nvtxCounterAttr_t *a, uint64_t *id) {
    fprintf(out(), "CounterRegister %p size=%zu schema=%" PRIu64 " name=", (void *)d, a->structSize,
            a->schemaId);
    str(a->name);
    fprintf(out(), " description=");
    str(a->description);
    fprintf(out(), " scope=%" PRIu64 " id=%" PRIu64, a->scopeId, a->counterId);
    semantics(a->semantics);
    *id = next_id++;
    fprintf(out(), " -> %" PRIu64 "\n", *id);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t TimeDomainRegister(nvtxDomainHandle_t d, const nvtxTimeDomainAttr_t *a,
                                            uint64_t *id) {
    (void)a;
    (void)id;
    fprintf(out(), "TimeDomainRegister %p\n", (void *)d);
    return NVTXW_RESULT_NOT_SUPPORTED;
}

static nvtxwResultCode_t StreamOpen(nvtxwSessionHandle_t s, const nvtxwStreamAttributes_t *a,
                                    nvtxwStreamHandle_t *h) {
    fprintf(out(), "StreamOpen %p size=%zu name=", (void *)s, a->structSize);
    str(a->name);
    fprintf(out(), " domain=%p scope=%" PRIu64 " time=%" PRIu64 " interleaving=%d ordering=%d skid=%d/%" PRId64,
            (void *)a->domain, a->scopeId, a->timeDomainId, a->orderInterleaving, a->orderingType,
            a->orderingSkid, a->orderingSkidAmount);
    *h = make(STREAM);
    fprintf(out(), " -> %p\n", (void *)*h);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t StreamClose(nvtxwStreamHandle_t h) {
    fprintf(out(), "StreamClose %p\n", (void *)h);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t EventWrite(nvtxwStreamHandle_t h, const nvtxPayloadData_t *p, size_t n) {
    fprintf(out(), "EventWrite %p", (void *)h);
    for (size_t i = 0; i < n; i++) {
        fprintf(out(), " [schema=%" PRIu64 " size=%zu ", p[i].schemaId, p[i].size);
        hex(p[i].payload, p[i].size);
        fprintf(out(), "]");
    }
    fprintf(out(), "\n");
    return fails("EventWrite") ? NVTXW_RESULT_FAILED : NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t EventBatchWrite(nvtxwStreamHandle_t h, const nvtxEventBatch_t *b) {
    fprintf(out(), "EventBatchWrite %p schema=%" PRIu64 " scope=%" PRIu64 " flags=%" PRIu64
            " flex=%zu/%zu size=%zu ",
            (void *)h, b->eventSchemaId, b->scope, b->flags, b->flexDataSize, b->flexDataOffset, b->size);
    hex(b->events, b->size);
    fprintf(out(), "\n");
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t CounterWrite(nvtxwStreamHandle_t h, int64_t t, uint64_t id, const void *data,
                                      size_t size) {
    fprintf(out(), "CounterWrite %p t=%" PRId64 " counter=%" PRIu64 " size=%zu ", (void *)h, t, id, size);
    hex(data, size);
    fprintf(out(), "\n");
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t CounterNoValueWrite(nvtxwStreamHandle_t h, int64_t t, uint64_t id, uint8_t why) {
    fprintf(out(), "CounterNoValueWrite %p t=%" PRId64 " counter=%" PRIu64 " reason=%u\n", (void *)h, t,
            id, why);
    return NVTXW_RESULT_SUCCESS;
}

static nvtxwResultCode_t CounterBatchWrite(nvtxwStreamHandle_t h, const nvtxCounterBatch_t *b) {
    fprintf(out(), "CounterBatchWrite %p counter=%" PRIu64 " flags=%" PRIu64 " size=%zu ", (void *)h,
            b->counterId, b->flags, b->countersSize);
    hex(b->counters, b->countersSize);
    fprintf(out(), " timestamps=%zu ", b->timestampsSize);
    hex(b->timestamps, b->timestampsSize);
    fprintf(out(), "\n");
    return NVTXW_RESULT_SUCCESS;
}

static const nvtxwInterface_v2_t table = {
    .SessionBegin = SessionBegin,
    .SessionEnd = SessionEnd,
    .DomainRegister = DomainRegister,
    .CategoryRegister = CategoryRegister,
    .StringRegister = StringRegister,
    .ResourceRegister = ResourceRegister,
    .ScopeRegister = ScopeRegister,
    .SchemaRegister = SchemaRegister,
    .EnumRegister = EnumRegister,
    .CounterRegister = CounterRegister,
    .TimeDomainRegister = TimeDomainRegister,
    .StreamOpen = StreamOpen,
    .StreamClose = StreamClose,
    .EventWrite = EventWrite,
    .EventBatchWrite = EventBatchWrite,
    .CounterWrite = CounterWrite,
    .CounterNoValueWrite = CounterNoValueWrite,
    .CounterBatchWrite = CounterBatchWrite,
};

__attribute__((visibility("default"))) nvtxwResultCode_t nvtxwGetInterface(nvtxwInterfaceVersion_t version,
                                                                          const void **iface) {
    fprintf(out(), "GetInterface %d\n", version);
    if (getenv("NVTXW_LOG_VERSION") || version != NVTXW_INTERFACE_VERSION)
        return NVTXW_RESULT_INTERFACE_VERSION_NOT_SUPPORTED;
    *iface = &table;
    return NVTXW_RESULT_SUCCESS;
}

__attribute__((visibility("default"))) void nvtxwFinalize(void) { fprintf(out(), "Finalize\n"); }
