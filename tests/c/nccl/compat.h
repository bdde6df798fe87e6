/* Names NCCL's NVTX files take from the NVTX headers NCCL vendors (and from
 * NCCL's nvtx.h), mapped onto today's NVIDIA headers. Include before
 * nvtx_payload_schemas.h. */
#ifndef NCCL_NVTX_COMPAT_H_
#define NCCL_NVTX_COMPAT_H_
#include <nvtx3/nvToolsExtPayload.h>
/* An empty marker around the entry lists (older nvToolsExtPayloadHelper.h). */
#define NCCL_NVTX_PAYLOAD_ENTRIES
/* NCCL's nvtx.h: the reduction operation's enum schema id. */
#define NVTX_PAYLOAD_ENTRY_NCCL_REDOP (NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 24)
#endif
