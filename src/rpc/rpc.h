/* rpc.h - gRPC over unix sockets in C: a small server and a unary client
 * on gRPC's C core (Debian's libgrpc-dev), for the kubelet's plugin APIs
 * (device plugin v1beta1, pod resources v1, plugin registration v1, DRA
 * v1: proto/, compiled with protoc-c at build time, mk/rpc.mk).
 *
 * The module moves bytes: messages are encoded and decoded by the caller
 * with the protobuf-c code generated from proto/ (rpc_pb.h includes it),
 * so a handler is a plain function of request bytes to response bytes and
 * can be fuzzed and unit-tested without a socket.
 *
 * Server: one socket, one completion queue, one thread that owns every
 * call of the server (ms_rpc_server_start creates it). Unary handlers run
 * on that thread, one at a time, so a handler that blocks holds back only
 * its own server's calls (each handler bounds its work with deadlines).
 * A server-streaming method keeps its calls open; ms_rpc_server_notify (any
 * thread) sends every open stream a new message built by the method's
 * snapshot function, coalescing notifications that come while a send is in
 * flight; a stream ends when the client cancels it or the server stops.
 *
 * Client: ms_rpc_call, one unary call with a deadline on a fresh channel
 * (the kubelet's sockets are local; a call is rare: a registration, a
 * lookup).
 *
 * Status codes are gRPC's (0 OK, 2 UNKNOWN, 3 INVALID_ARGUMENT, 4
 * DEADLINE_EXCEEDED, 5 NOT_FOUND, 9 FAILED_PRECONDITION, 12 UNIMPLEMENTED,
 * 13 INTERNAL, 14 UNAVAILABLE).
 */
#ifndef MIGSCHED_RPC_H
#define MIGSCHED_RPC_H

#include <stddef.h>
#include <stdint.h>

enum {
    MS_RPC_OK = 0,
    MS_RPC_UNKNOWN = 2,
    MS_RPC_INVALID_ARGUMENT = 3,
    MS_RPC_DEADLINE_EXCEEDED = 4,
    MS_RPC_NOT_FOUND = 5,
    MS_RPC_FAILED_PRECONDITION = 9,
    MS_RPC_UNIMPLEMENTED = 12,
    MS_RPC_INTERNAL = 13,
    MS_RPC_UNAVAILABLE = 14,
};

/* The largest message either side accepts (the kubelet's answers for a
 * node's pods are far smaller). */
#define MS_RPC_MAX_MSG (4u << 20)

/* A message: malloc'd bytes (data may be NULL when len is 0). */
typedef struct ms_rpc_buf {
    uint8_t *data;
    size_t len;
} ms_rpc_buf_t;

void ms_rpc_buf_free(ms_rpc_buf_t *b);

/* A unary handler: the request's bytes in, the response's bytes in *out
 * (malloc'd; left empty for an empty message). Returns MS_RPC_OK, or a
 * status code with msg (NUL-terminated, at most msglen) sent to the client. */
typedef int (*ms_rpc_unary_fn)(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg,
                               size_t msglen);

/* A server-streaming method's messages: the current state as one message
 * (*out malloc'd). Called when a stream opens and after each notify. A
 * non-OK return ends the stream with that status. */
typedef int (*ms_rpc_snapshot_fn)(void *ctx, ms_rpc_buf_t *out, char *msg, size_t msglen);

typedef struct ms_rpc_method {
    const char *path;              /* "/package.Service/Method" */
    ms_rpc_unary_fn unary;         /* exactly one of unary and snapshot */
    ms_rpc_snapshot_fn snapshot;   /* server streaming; the request is read and ignored */
} ms_rpc_method_t;

typedef struct ms_rpc_server ms_rpc_server_t;

/* Listen on the unix socket PATH (an existing socket file there is
 * removed first: a stale one from a previous run), serve methods[0..n)
 * with ctx until ms_rpc_server_stop. The methods array must outlive the
 * server. 0, or -1 with err. */
int ms_rpc_server_start(const char *path, const ms_rpc_method_t *methods, int n, void *ctx,
                        ms_rpc_server_t **out, char *err, size_t errlen);
/* Every open stream gets a fresh snapshot (any thread). */
void ms_rpc_server_notify(ms_rpc_server_t *s);
/* Open streams right now (tests, logs). */
int ms_rpc_server_streams(ms_rpc_server_t *s);
/* Cancel every call, join the thread, free, remove the socket file (only
 * if it is still the one this server created). NULL-safe. */
void ms_rpc_server_stop(ms_rpc_server_t *s);

/* One unary call: target "unix:///path/to.sock" (or "unix:path"), method
 * "/package.Service/Method". Returns the call's status code (MS_RPC_OK with
 * *resp malloc'd), or a code and err (the server's message, or why no
 * answer came: MS_RPC_DEADLINE_EXCEEDED, MS_RPC_UNAVAILABLE, ...). */
int ms_rpc_call(const char *target, const char *method, const uint8_t *req, size_t len, double timeout_s,
                ms_rpc_buf_t *resp, char *err, size_t errlen);

#endif
