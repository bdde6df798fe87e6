/* NVTX extended payloads through NVIDIA's payload extension
 * (nvToolsExtPayload.h): a static schema covering each kind of entry (a
 * registered enum, a nested schema laid out by the tool, an inline string,
 * a pointer string, a fixed array, a registered string handle, the event's
 * message), a dynamic schema with a variable-length array, payloads on
 * marks, push/pop and start/end ranges, the way NCCL sends them (a core
 * event whose payload type is NVTX_PAYLOAD_TYPE_EXT), predefined-type
 * payloads, and bad schemas and payloads. The recording test checks every
 * decoded value. */
#include <nvtx3/nvToolsExtPayload.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { OP_SUM = 0, OP_MAX = 3 };

typedef struct {
    int32_t x;
    double y;
} point_t;

typedef struct {
    uint64_t comm;
    size_t bytes;
    int32_t op;
    float ratio;
    char tag[8];
    const char* label;
    point_t at;
    int16_t dims[3];
    nvtxStringHandle_t phase;
    int64_t delta;
} params_t;

#define SCHEMA_POINT ((uint64_t)1 << 24)
#define ENUM_OP (SCHEMA_POINT + 1)
#define SCHEMA_PARAMS (SCHEMA_POINT + 2)

int main(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("comm");

    nvtxPayloadEnum_t ops[] = {{"sum", OP_SUM, 0}, {"max", OP_MAX, 0}};
    nvtxPayloadEnumAttr_t op_attr = {
        NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME | NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES |
            NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE |
            NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID,
        "op", ops, 2, sizeof(int32_t), ENUM_OP, NULL};
    uint64_t op_id = nvtxPayloadEnumRegister(d, &op_attr);

    /* Offsets left to the tool (0 after the first entry). */
    nvtxPayloadSchemaEntry_t point_entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "x", NULL, 0, 0, NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "y", NULL, 0, 0, NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t point_attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID,
        "point", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, 0, point_entries, 2, 0, 0, SCHEMA_POINT, NULL};
    uint64_t point_id = nvtxPayloadSchemaRegister(d, &point_attr);

    nvtxPayloadSchemaEntry_t entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "comm", NULL, 0, offsetof(params_t, comm), NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "bytes", NULL, 0, offsetof(params_t, bytes), NULL, NULL},
        {0, ENUM_OP, "op", NULL, 0, offsetof(params_t, op), NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_FLOAT, "ratio", NULL, 0, offsetof(params_t, ratio), NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "tag", NULL, 8, offsetof(params_t, tag), NULL, NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_EVENT_MESSAGE, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8, "label", NULL, 0,
         offsetof(params_t, label), NULL, NULL},
        {0, SCHEMA_POINT, "at", NULL, 0, offsetof(params_t, at), NULL, NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE, NVTX_PAYLOAD_ENTRY_TYPE_INT16, "dims", NULL, 3,
         offsetof(params_t, dims), NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE, "phase", NULL, 0,
         offsetof(params_t, phase), NULL, NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_HIDE, NVTX_PAYLOAD_ENTRY_TYPE_INT64, "hidden", NULL, 0,
         offsetof(params_t, delta), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID,
        "params", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, 0, entries, sizeof entries / sizeof entries[0],
        sizeof(params_t), 0, SCHEMA_PARAMS, NULL};
    uint64_t params_id = nvtxPayloadSchemaRegister(d, &attr);

    /* A dynamic schema: a count, then that many int32 values (no offsets). */
    nvtxPayloadSchemaEntry_t dyn_entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT8, "n", NULL, 0, 0, NULL, NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_LENGTH_INDEX, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "values", NULL, 0, 0,
         NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT16, "after", NULL, 0, 0, NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t dyn_attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES,
        NULL, NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC, 0, dyn_entries, 3, 0, 0, 0, NULL};
    uint64_t dyn_id = nvtxPayloadSchemaRegister(d, &dyn_attr);

    /* Refused: a static id below the static range; an entry of no known type. */
    nvtxPayloadSchemaAttr_t bad = point_attr;
    bad.schemaId = 5;
    uint64_t bad_id = nvtxPayloadSchemaRegister(d, &bad);
    nvtxPayloadSchemaEntry_t unknown_entries[] = {{0, 999, "what", NULL, 0, 0, NULL, NULL}};
    nvtxPayloadSchemaAttr_t unknown = point_attr;
    unknown.entries = unknown_entries;
    unknown.numEntries = 1;
    unknown.schemaId = SCHEMA_POINT + 9;
    uint64_t unknown_id = nvtxPayloadSchemaRegister(d, &unknown);

    params_t p;
    memset(&p, 0, sizeof p);
    p.comm = 0xfedcba9876543210ull;
    p.bytes = 1048576;
    p.op = OP_MAX;
    p.ratio = 0.5f;
    strcpy(p.tag, "grad");
    p.label = "allreduce";
    p.at.x = -7;
    p.at.y = 2.25;
    p.dims[0] = 1;
    p.dims[1] = -2;
    p.dims[2] = 3;
    p.phase = nvtxDomainRegisterStringA(d, "backward");
    p.delta = 42;
    nvtxPayloadData_t pd = {params_id, sizeof p, &p};

    /* A mark named by its EVENT_MESSAGE entry. */
    nvtxMarkPayload(d, &pd, 1);

    /* Push/pop: the pop's payload (a predefined type) joins the range's. */
    uint64_t done = 7;
    nvtxPayloadData_t pop_pd = {NVTX_PAYLOAD_ENTRY_TYPE_UINT64, sizeof done, &done};
    p.label = "pushed";
    nvtxRangePushPayload(d, &pd, 1);
    nvtxRangePopPayload(d, &pop_pd, 1);

    /* NCCL's way: a core event whose payload type is NVTX_PAYLOAD_TYPE_EXT. */
    p.op = OP_SUM;
    nvtxEventAttributes_t ea;
    memset(&ea, 0, sizeof ea);
    ea.version = NVTX_VERSION;
    ea.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    ea.messageType = NVTX_MESSAGE_TYPE_ASCII;
    ea.message.ascii = "ncclAllReduce";
    nvtxPayloadData_t ext_pd;
    NVTX_PAYLOAD_EVTATTR_SET_DATA(ea, &ext_pd, params_id, &p, sizeof p);
    nvtxDomainRangePushEx(d, &ea);
    nvtxDomainRangePop(d);

    /* Start/end with a dynamic payload, and a predefined-type array at the end. */
    /* n at 0, values at 4 (int32 alignment), after at 16. */
    unsigned char dyn[18];
    memset(dyn, 0, sizeof dyn);
    dyn[0] = 3;
    int32_t values[3] = {10, -20, 30};
    memcpy(dyn + 4, values, sizeof values);
    uint16_t after = 65535;
    memcpy(dyn + 16, &after, 2);
    nvtxPayloadData_t dyn_pd = {dyn_id, sizeof dyn, dyn};
    nvtxRangeId_t id = nvtxRangeStartPayload(d, &dyn_pd, 1);
    double losses[2] = {0.25, -1.5};
    nvtxPayloadData_t end_pd = {NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, sizeof losses, losses};
    nvtxRangeEndPayload(d, id, &end_pd, 1);

    /* An array whose length is another payload of the event (payload 0). */
    nvtxPayloadSchemaEntry_t histogram_entries[] = {
        {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_LENGTH_PAYLOAD_INDEX, NVTX_PAYLOAD_ENTRY_TYPE_FLOAT, "samples", NULL, 0, 0,
         NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t histogram_attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES,
        "histogram", NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC, 0, histogram_entries, 1, 0, 0, 0, NULL};
    uint64_t histogram_id = nvtxPayloadSchemaRegister(d, &histogram_attr);
    uint32_t n = 3;
    float samples[3] = {0.5f, 1.5f, 2.5f};
    nvtxPayloadData_t histogram_pd[2] = {{NVTX_PAYLOAD_ENTRY_TYPE_UINT32, sizeof n, &n},
                                         {histogram_id, sizeof samples, samples}};
    nvtxMarkPayload(d, histogram_pd, 2);

    /* A union whose member an entry before it selects (the union's schema
       type NVTX_PAYLOAD_SCHEMA_TYPE_UNION): an int, a double, then a member
       that does not exist. */
    typedef struct {
        uint8_t kind;
        union {
            int32_t i;
            double d;
        } value;
    } tagged_t;
    nvtxPayloadSchemaEntry_t union_entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "i", NULL, 0, 0, NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "d", NULL, 0, 0, NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t union_attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE,
        NULL, NVTX_PAYLOAD_SCHEMA_TYPE_UNION, 0, union_entries, 2, sizeof(double), 0, 0, NULL};
    uint64_t union_id = nvtxPayloadSchemaRegister(d, &union_attr);
    nvtxPayloadSchemaEntry_t tagged_entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT8, "kind", NULL, 0, offsetof(tagged_t, kind), NULL, NULL},
        {0, union_id, "value", NULL, 0, offsetof(tagged_t, value), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t tagged_attr = {
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
            NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE,
        "tagged", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, 0, tagged_entries, 2, sizeof(tagged_t), 0, 0, NULL};
    uint64_t tagged_id = nvtxPayloadSchemaRegister(d, &tagged_attr);
    tagged_t tagged[3];
    memset(tagged, 0, sizeof tagged);
    tagged[0].kind = 0;
    tagged[0].value.i = -5;
    tagged[1].kind = 1;
    tagged[1].value.d = 2.5;
    tagged[2].kind = 7;
    for (int i = 0; i < 3; i++) {
        nvtxPayloadData_t tagged_pd = {tagged_id, sizeof tagged[i], &tagged[i]};
        nvtxMarkPayload(d, &tagged_pd, 1);
    }

    /* Bad payloads: an unregistered schema, a payload shorter than its schema;
       an array whose length would be in itself. */
    nvtxPayloadData_t unregistered = {SCHEMA_POINT + 100, sizeof p, &p};
    nvtxMarkPayload(d, &unregistered, 1);
    nvtxPayloadData_t short_pd = {params_id, 12, &p};
    nvtxMarkPayload(d, &short_pd, 1);
    nvtxMarkPayload(d, &histogram_pd[1], 1);

    printf("ids %llu %llu %llu %s %llu %llu\n", (unsigned long long)(op_id - SCHEMA_POINT),
           (unsigned long long)(point_id - SCHEMA_POINT), (unsigned long long)(params_id - SCHEMA_POINT),
           dyn_id >= ((uint64_t)1 << 32) ? "dynamic" : "?", (unsigned long long)bad_id,
           (unsigned long long)unknown_id);
    return 0;
}
