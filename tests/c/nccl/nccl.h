/* The part of NCCL's public header (`nccl.h`) that nvtx_payload_schemas.h
 * uses: the reduction operations, numbered as NCCL numbers them. */
#ifndef NCCL_H_
#define NCCL_H_
#include <stddef.h>
#include <stdint.h>
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;
#endif
