/* Extended payloads through nvtxr's own C API: an enum, a static schema
 * (offsets from offsetof, a nested schema laid out by the tool, an inline
 * and a pointer string, a fixed array, a hidden field) and a dynamic one,
 * carried by a mark, a push/pop and a start/end range; a deferred range
 * (nvtxr_timestamp, nvtxr_event_submit); and the calls nvtxr refuses. The
 * recording test checks every decoded value. */
#include <nvtxr.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    int32_t x;
    double y;
} point_t;

typedef struct {
    int64_t begin;
    int64_t end;
    const char *name;
} span_t;

typedef struct {
    uint64_t comm;
    size_t bytes;
    int32_t op;
    char tag[8];
    const char *label;
    point_t at;
    int16_t dims[3];
    int64_t hidden;
} params_t;

#define POINT_ID NVTXR_SCHEMA_ID_STATIC_START
#define OP_ID (POINT_ID + 1)

int main(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("comm");

    nvtxr_payload_enum_value_t ops[] = {{"sum", 0, 0}, {"max", 3, 0}};
    nvtxr_payload_enum_t op = NVTXR_PAYLOAD_ENUM_INIT;
    op.name = "op";
    op.values = ops;
    op.value_count = 2;
    op.value_size = sizeof(int32_t);
    op.schema_id = OP_ID;
    uint64_t op_id = nvtxr_payload_enum_register(d, &op);

    nvtxr_payload_entry_t point_entries[] = {
        {0, NVTXR_TYPE_INT32, "x", NULL, 0, 0, NULL, NULL},
        {0, NVTXR_TYPE_DOUBLE, "y", NULL, 0, 0, NULL, NULL},
    };
    nvtxr_payload_schema_t point = NVTXR_PAYLOAD_SCHEMA_INIT;
    point.kind = NVTXR_SCHEMA_STATIC;
    point.name = "point";
    point.entries = point_entries;
    point.entry_count = 2;
    point.schema_id = POINT_ID;
    uint64_t point_id = nvtxr_payload_schema_register(d, &point);

    nvtxr_payload_entry_t entries[] = {
        {0, NVTXR_TYPE_UINT64, "comm", NULL, 0, offsetof(params_t, comm), NULL, NULL},
        {0, NVTXR_TYPE_SIZE, "bytes", NULL, 0, offsetof(params_t, bytes), NULL, NULL},
        {0, OP_ID, "op", NULL, 0, offsetof(params_t, op), NULL, NULL},
        {0, NVTXR_TYPE_CSTRING, "tag", NULL, 8, offsetof(params_t, tag), NULL, NULL},
        {NVTXR_ENTRY_EVENT_MESSAGE, NVTXR_TYPE_CSTRING_UTF8, "label", NULL, 0, offsetof(params_t, label), NULL,
         NULL},
        {0, POINT_ID, "at", NULL, 0, offsetof(params_t, at), NULL, NULL},
        {NVTXR_ENTRY_ARRAY_FIXED_SIZE, NVTXR_TYPE_INT16, "dims", NULL, 3, offsetof(params_t, dims), NULL, NULL},
        {NVTXR_ENTRY_HIDE, NVTXR_TYPE_INT64, "hidden", NULL, 0, offsetof(params_t, hidden), NULL, NULL},
    };
    nvtxr_payload_schema_t schema = NVTXR_PAYLOAD_SCHEMA_INIT;
    schema.kind = NVTXR_SCHEMA_STATIC;
    schema.name = "params";
    schema.entries = entries;
    schema.entry_count = sizeof entries / sizeof entries[0];
    schema.static_size = sizeof(params_t);
    uint64_t params_id = nvtxr_payload_schema_register(d, &schema);

    nvtxr_payload_entry_t dyn_entries[] = {
        {0, NVTXR_TYPE_UINT8, "n", NULL, 0, 0, NULL, NULL},
        {NVTXR_ENTRY_ARRAY_LENGTH_INDEX, NVTXR_TYPE_INT32, "values", NULL, 0, 0, NULL, NULL},
    };
    nvtxr_payload_schema_t dyn_schema = NVTXR_PAYLOAD_SCHEMA_INIT;
    dyn_schema.kind = NVTXR_SCHEMA_DYNAMIC;
    dyn_schema.entries = dyn_entries;
    dyn_schema.entry_count = 2;
    uint64_t dyn_id = nvtxr_payload_schema_register(d, &dyn_schema);

    params_t p;
    memset(&p, 0, sizeof p);
    p.comm = 0xfedcba9876543210ull;
    p.bytes = 1048576;
    p.op = 3;
    strcpy(p.tag, "grad");
    p.label = "allreduce";
    p.at.x = -7;
    p.at.y = 2.25;
    p.dims[0] = 1;
    p.dims[1] = -2;
    p.dims[2] = 3;
    p.hidden = 42;
    nvtxr_payload_data_t pd = {params_id, sizeof p, &p};

    /* A mark named by its message entry. */
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.payloads = &pd;
    e.payload_count = 1;
    int marked = nvtxr_mark_ex(d, &e);

    /* A push/pop range with a message of its own. */
    p.op = 0;
    e.message = "step";
    int pushed = nvtxr_range_push_ex(d, &e);
    nvtxr_range_pop(d);

    /* A start/end range with a dynamic payload and a predefined-type one. */
    unsigned char dyn[4 + 8];
    memset(dyn, 0, sizeof dyn);
    dyn[0] = 2;
    int32_t values[2] = {10, -20};
    memcpy(dyn + 4, values, sizeof values);
    double loss = 0.25;
    nvtxr_payload_data_t two[2] = {{dyn_id, sizeof dyn, dyn}, {NVTXR_TYPE_DOUBLE, sizeof loss, &loss}};
    nvtxr_event_t s = NVTXR_EVENT_INIT;
    s.message = "window";
    s.payloads = two;
    s.payload_count = 2;
    uint64_t id = nvtxr_range_start_ex(d, &s);
    nvtxr_range_end(d, id);

    /* A deferred range: its times taken around a mark, submitted after. */
    nvtxr_payload_entry_t span_entries[] = {
        {NVTXR_ENTRY_TIMESTAMP | NVTXR_ENTRY_RANGE_BEGIN, NVTXR_TYPE_INT64, "begin", NULL, 0, offsetof(span_t, begin),
         NULL, NULL},
        {NVTXR_ENTRY_TIMESTAMP | NVTXR_ENTRY_RANGE_END, NVTXR_TYPE_INT64, "end", NULL, 0, offsetof(span_t, end), NULL,
         NULL},
        {NVTXR_ENTRY_EVENT_MESSAGE, NVTXR_TYPE_CSTRING, "name", NULL, 0, offsetof(span_t, name), NULL, NULL},
    };
    nvtxr_payload_schema_t span_schema = NVTXR_PAYLOAD_SCHEMA_INIT;
    span_schema.kind = NVTXR_SCHEMA_STATIC;
    span_schema.entries = span_entries;
    span_schema.entry_count = 3;
    span_schema.static_size = sizeof(span_t);
    uint64_t span_id = nvtxr_payload_schema_register(d, &span_schema);
    span_t span = {nvtxr_timestamp(), 0, "deferred"};
    nvtxr_mark(d, "inside");
    span.end = nvtxr_timestamp();
    nvtxr_payload_data_t span_pd = {span_id, sizeof span, &span};
    int submitted = nvtxr_event_submit(d, &span_pd, 1);
    int bad_submit = nvtxr_event_submit(d, NULL, 1);

    /* Refused: no schema, an uninitialized one, no entries; payloads NULL
     * with a count; both kinds of payload. */
    nvtxr_payload_schema_t unset;
    memset(&unset, 0, sizeof unset);
    unset.entries = entries;
    unset.entry_count = 1;
    nvtxr_payload_schema_t empty = NVTXR_PAYLOAD_SCHEMA_INIT;
    empty.kind = NVTXR_SCHEMA_STATIC;
    uint64_t refused = nvtxr_payload_schema_register(d, NULL) + nvtxr_payload_schema_register(d, &unset) +
                       nvtxr_payload_schema_register(d, &empty) + nvtxr_payload_enum_register(d, NULL);
    nvtxr_event_t null_payloads = NVTXR_EVENT_INIT;
    null_payloads.payload_count = 2;
    nvtxr_event_t both = NVTXR_EVENT_INIT;
    both.payload_type = NVTXR_PAYLOAD_U64;
    both.payloads = &pd;
    both.payload_count = 1;
    int bad1 = nvtxr_mark_ex(d, &null_payloads);
    int bad2 = nvtxr_mark_ex(d, &both);

    printf("ids %llu %llu %s %s\n", (unsigned long long)(op_id ? op_id - POINT_ID : 0),
           (unsigned long long)(point_id ? point_id - POINT_ID : 0), params_id ? "params" : "none",
           dyn_id ? "dyn" : "none");
    printf("status %d %d refused %llu %d %d\n", marked, pushed >= 0 || pushed == NVTXR_NO_PUSH_POP_TRACKING,
           (unsigned long long)refused, bad1, bad2);
    printf("deferred %d %d\n", submitted, bad_submit);
    return 0;
}
