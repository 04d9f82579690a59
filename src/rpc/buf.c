/* buf.c - messages between our malloc'd buffers and gRPC's byte buffers. */
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>

#include "rpc/rpc_int.h"

grpc_byte_buffer *ms__rpc_bytes_to_bb(const uint8_t *data, size_t len)
{
    grpc_slice sl = len > 0 ? grpc_slice_from_copied_buffer((const char *)data, len) : grpc_empty_slice();
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);

    grpc_slice_unref(sl);
    return bb;
}

int ms__rpc_bb_to_bytes(grpc_byte_buffer *bb, ms_rpc_buf_t *out)
{
    grpc_byte_buffer_reader r;
    grpc_slice sl;
    size_t n;

    out->data = NULL;
    out->len = 0;
    if (!grpc_byte_buffer_reader_init(&r, bb))
        return -1;
    sl = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    n = GRPC_SLICE_LENGTH(sl);
    if (n > MS_RPC_MAX_MSG) {
        grpc_slice_unref(sl);
        return -1;
    }
    if (n > 0) {
        if ((out->data = malloc(n)) == NULL) {
            grpc_slice_unref(sl);
            return -1;
        }
        memcpy(out->data, GRPC_SLICE_START_PTR(sl), n);
    }
    out->len = n;
    grpc_slice_unref(sl);
    return 0;
}
