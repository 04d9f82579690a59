/* client.c - one unary gRPC call with a deadline (rpc.h).
 *
 * A fresh channel per call: the targets are the kubelet's local sockets and
 * the calls are rare (a registration, a pod lookup), so nothing is cached
 * that a kubelet restart could leave stale. The call runs on the caller's
 * thread (a completion queue of its own, plucked) and never outlives its
 * deadline by more than the cancellation's round trip.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "rpc/rpc.h"
#include "rpc/rpc_int.h"

static gpr_timespec after_s(double s)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis((int64_t)(s * 1000.0), GPR_TIMESPAN));
}

static void slice_text(grpc_slice sl, char *buf, size_t len)
{
    size_t n = GRPC_SLICE_LENGTH(sl);

    if (len == 0)
        return;
    if (n >= len)
        n = len - 1;
    memcpy(buf, GRPC_SLICE_START_PTR(sl), n);
    buf[n] = '\0';
}

/* Wait for tag; on timeout cancel the call and wait for it once more (the
 * tag always comes after a cancel). */
static bool wait_tag(grpc_completion_queue *cq, grpc_call *call, void *tag, gpr_timespec deadline)
{
    grpc_event ev = grpc_completion_queue_pluck(cq, tag, deadline, NULL);

    if (ev.type == GRPC_QUEUE_TIMEOUT) {
        grpc_call_cancel(call, NULL);
        ev = grpc_completion_queue_pluck(cq, tag, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    }
    return ev.type == GRPC_OP_COMPLETE && ev.success != 0;
}

int ms_rpc_call(const char *target, const char *method, const uint8_t *req, size_t len, double timeout_s,
                ms_rpc_buf_t *resp, char *err, size_t errlen)
{
    grpc_channel_credentials *cr;
    grpc_channel *ch = NULL;
    grpc_completion_queue *cq = NULL;
    grpc_call *call = NULL;
    grpc_byte_buffer *send = NULL, *recv = NULL;
    grpc_metadata_array md, trail;
    grpc_slice details = grpc_empty_slice();
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_arg arg;
    grpc_channel_args args;
    grpc_op ops[6];
    gpr_timespec deadline = after_s(timeout_s);
    int code = MS_RPC_INTERNAL, tag = 1;

    resp->data = NULL;
    resp->len = 0;
    snprintf(err, errlen, "out of memory");
    grpc_init();
    grpc_metadata_array_init(&md);
    grpc_metadata_array_init(&trail);
    arg.type = GRPC_ARG_INTEGER;
    arg.key = (char *)(uintptr_t)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    arg.value.integer = (int)MS_RPC_MAX_MSG;
    args.num_args = 1;
    args.args = &arg;
    cr = grpc_insecure_credentials_create();
    if (cr != NULL)
        ch = grpc_channel_create(target, cr, &args);
    grpc_channel_credentials_release(cr);
    cq = grpc_completion_queue_create_for_pluck(NULL);
    if (ch == NULL || cq == NULL || (send = ms__rpc_bytes_to_bb(req, len)) == NULL)
        goto out;
    call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, grpc_slice_from_static_string(method),
                                    NULL, deadline, NULL);
    if (call == NULL)
        goto out;
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trail;
    ops[5].data.recv_status_on_client.status = &status;
    ops[5].data.recv_status_on_client.status_details = &details;
    if (grpc_call_start_batch(call, ops, 6, &tag, NULL) != GRPC_CALL_OK) {
        snprintf(err, errlen, "gRPC: cannot start the call");
        goto out;
    }
    /* the status op completes with the call: a deadline the core enforces,
     * plus a second for the cancellation of a stuck one */
    if (!wait_tag(cq, call, &tag, gpr_time_add(deadline, gpr_time_from_millis(1000, GPR_TIMESPAN)))) {
        snprintf(err, errlen, "%s: the call did not complete", method);
        code = MS_RPC_DEADLINE_EXCEEDED;
        goto out;
    }
    code = (int)status;
    if (code != MS_RPC_OK) {
        char d[400];

        slice_text(details, d, sizeof(d));
        snprintf(err, errlen, "%s on %s: status %d%s%s", method, target, code, d[0] ? ": " : "", d);
        goto out;
    }
    if (recv != NULL && ms__rpc_bb_to_bytes(recv, resp) != 0) {
        snprintf(err, errlen, "%s: the answer is too large or memory ran out", method);
        code = MS_RPC_INTERNAL;
        goto out;
    }
    err[0] = '\0';
out:
    if (call != NULL)
        grpc_call_unref(call);
    if (send != NULL)
        grpc_byte_buffer_destroy(send);
    if (recv != NULL)
        grpc_byte_buffer_destroy(recv);
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&md);
    grpc_metadata_array_destroy(&trail);
    if (cq != NULL) {
        grpc_completion_queue_shutdown(cq);
        while (grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
               GRPC_QUEUE_SHUTDOWN)
            ;
        grpc_completion_queue_destroy(cq);
    }
    if (ch != NULL)
        grpc_channel_destroy(ch);
    grpc_shutdown();
    if (code != MS_RPC_OK)
        ms_rpc_buf_free(resp);
    return code;
}
