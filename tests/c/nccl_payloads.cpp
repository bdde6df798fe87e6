/* NCCL's published NVTX payload schemas (nccl/nvtx_payload_schemas.h,
 * NCCL's file) registered and sent as NCCL sends them (its src/include/nvtx.h
 * and src/init_nvtx.cc): the reduction operation enum; each call a range in
 * domain "NCCL" named by a registered string, with its parameters as an
 * extended payload on the push (NVTX3_FUNC_WITH_PARAMS) or, for the
 * communicator calls, on the pop (NVTX3_RANGE_ADD_PAYLOAD). The recording
 * test checks every decoded field. */
#include "nccl/compat.h"
#include "nccl/nvtx_payload_schemas.h"

#include <cstdio>

namespace {

// NCCL's static schema ids (src/include/nvtx.h's NVTX_SID_*).
constexpr uint64_t sid(uint64_t n) { return NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + n; }
constexpr uint64_t CommInitRank = sid(0), AllGather = sid(4), AllReduce = sid(5), Broadcast = sid(6),
                   Reduce = sid(8), Send = sid(9), CommSplit = sid(13);

nvtxDomainHandle_t nccl;

// NCCL's payload_schema class: a static schema of the struct's size.
template <typename T, size_t N>
void schema(const nvtxPayloadSchemaEntry_t (&entries)[N], uint64_t id) {
    nvtxPayloadSchemaAttr_t attr{NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID,
                                 nullptr, NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, NVTX_PAYLOAD_SCHEMA_FLAG_NONE, entries,
                                 N - 1, sizeof(T), 0, id, nullptr};
    nvtxPayloadSchemaRegister(nccl, &attr);
}

// NVTX3_FUNC_WITH_PARAMS: the call's name, its parameters on the push.
template <typename T>
void call(const char* name, uint64_t id, const T& params) {
    nvtxPayloadData_t data[] = {{id, sizeof params, &params}};
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = nvtxDomainRegisterStringA(nccl, name);
    NVTX_PAYLOAD_EVTATTR_SET_MULTIPLE(attr, data);
    nvtxDomainRangePushEx(nccl, &attr);
    nvtxDomainRangePop(nccl);
}

// NVTX3_RANGE + NVTX3_RANGE_ADD_PAYLOAD: the parameters on the pop.
template <typename T>
void call_with_payload_at_pop(const char* name, uint64_t id, const T& params) {
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = nvtxDomainRegisterStringA(nccl, name);
    nvtxDomainRangePushEx(nccl, &attr);
    nvtxPayloadData_t data = {id, sizeof params, &params};
    nvtxRangePopPayload(nccl, &data, 1);
}

}  // namespace

int main() {
    nccl = nvtxDomainCreateA("NCCL");
    // src/init_nvtx.cc's enum of reduction operations.
    static constexpr const nvtxPayloadEnum_t ops[] = {
        {"Sum", ncclSum, 0}, {"Product", ncclProd, 0}, {"Max", ncclMax, 0}, {"Min", ncclMin, 0}, {"Avg", ncclAvg, 0}};
    const nvtxPayloadEnumAttr_t ops_attr{NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES |
                                             NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE | NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID,
                                         nullptr, ops, 5, sizeof(ncclRedOp_t), NVTX_PAYLOAD_ENTRY_NCCL_REDOP, nullptr};
    nvtxPayloadEnumRegister(nccl, &ops_attr);

    schema<NcclNvtxParamsAllReduce>(NcclNvtxParamsAllReduceSchema, AllReduce);
    schema<NcclNvtxParamsAllGather>(NcclNvtxParamsAllGatherSchema, AllGather);
    schema<NcclNvtxParamsBroadcast>(NcclNvtxParamsBroadcastSchema, Broadcast);
    schema<NcclNvtxParamsReduce>(NcclNvtxParamsReduceSchema, Reduce);
    schema<NcclNvtxParamsSendRecv>(NcclNvtxParamsSendRecvSchema, Send);
    schema<NcclNvtxParamsCommInitRank>(NcclNvtxParamsCommInitRankSchema, CommInitRank);
    schema<NcclNvtxParamsCommSplit>(NcclNvtxParamsCommSplitSchema, CommSplit);

    const uint64_t comm = 0xfedcba9876543210ull;
    call("ncclAllReduce", AllReduce, NcclNvtxParamsAllReduce{comm, 1 << 20, ncclMax});
    call("ncclAllGather", AllGather, NcclNvtxParamsAllGather{comm, 4096});
    call("ncclBroadcast", Broadcast, NcclNvtxParamsBroadcast{comm, 512, 3});
    call("ncclReduce", Reduce, NcclNvtxParamsReduce{comm, 256, 0, ncclAvg});
    call("ncclSend", Send, NcclNvtxParamsSendRecv{comm, 64, 7});
    call_with_payload_at_pop("ncclCommInitRank", CommInitRank, NcclNvtxParamsCommInitRank{comm, 8, 2, 1});
    call_with_payload_at_pop("ncclCommSplit", CommSplit, NcclNvtxParamsCommSplit{comm + 1, comm, 4, 1, 1, 5, -1});
    std::printf("nccl payloads sent\n");
    return 0;
}
