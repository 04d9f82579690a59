/* rpc_int.h - private to src/rpc/: messages between our buffers and gRPC's. */
#ifndef MIGSCHED_RPC_INT_H
#define MIGSCHED_RPC_INT_H

#include <grpc/byte_buffer.h>

#include "rpc/rpc.h"

/* A byte buffer holding a copy of data[0..len) (NULL: out of memory). */
grpc_byte_buffer *ms__rpc_bytes_to_bb(const uint8_t *data, size_t len);
/* The whole of bb copied into *out (malloc'd). 0, or -1: out of memory or
 * larger than MS_RPC_MAX_MSG. */
int ms__rpc_bb_to_bytes(grpc_byte_buffer *bb, ms_rpc_buf_t *out);

#endif
