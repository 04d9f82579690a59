/* server.c - a gRPC server on one unix socket over gRPC's C core (rpc.h).
 *
 * Threads: the server's own thread (serve) owns the completion queue and
 * runs every handler; ms_rpc_server_notify may start a stream's send from
 * any thread, under s->mu. Each call is a struct with one tag per kind of
 * batch; it counts its batches in flight (pending, under s->mu) and is
 * freed by the server's thread when the last one completes. Every call has
 * a RECV_CLOSE_ON_SERVER batch from its start, which completes only when
 * the call is over (finished or cancelled), so a call in the stream list
 * always has a batch in flight and notify never touches a freed call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "rpc/rpc.h"
#include "rpc/rpc_int.h"

enum { T_NEW, T_RECV, T_SEND, T_STATUS, T_CLOSE, T_SHUTDOWN };

typedef struct rs_call rs_call_t;

typedef struct rs_tag {
    int kind;
    rs_call_t *call;
} rs_tag_t;

struct rs_call {
    ms_rpc_server_t *s;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *recv;
    grpc_byte_buffer *send;         /* the stream message in flight */
    grpc_byte_buffer *reply;        /* the unary answer */
    grpc_slice status_msg;
    bool has_status_msg;
    const ms_rpc_method_t *method;
    rs_tag_t t_new, t_recv, t_send, t_status, t_close;
    int cancelled;
    int pending;                    /* batches in flight (s->mu) */
    bool in_flight, dirty, closed, listed, ending;   /* streams (s->mu) */
    rs_call_t *next;                /* s->streams */
};

struct ms_rpc_server {
    grpc_server *srv;
    grpc_completion_queue *cq;
    pthread_t thr;
    bool started, thr_started;
    const ms_rpc_method_t *m;
    int nm;
    void *ctx;
    pthread_mutex_t mu;
    rs_call_t *streams;
    int nstreams;
    bool stopping;
    rs_tag_t t_shutdown;
    char path[108];
    dev_t dev;
    ino_t ino;
    bool have_ino;
};

void ms_rpc_buf_free(ms_rpc_buf_t *b)
{
    if (b == NULL)
        return;
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

static void call_free(rs_call_t *c)
{
    if (c->call != NULL)
        grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->recv != NULL)
        grpc_byte_buffer_destroy(c->recv);
    if (c->send != NULL)
        grpc_byte_buffer_destroy(c->send);
    if (c->reply != NULL)
        grpc_byte_buffer_destroy(c->reply);
    if (c->has_status_msg)
        grpc_slice_unref(c->status_msg);
    free(c);
}

/* One batch of ops on c with tag t; counts it. False when it could not
 * start (the call is then left to its other batches). s->mu held. */
static bool start_locked(rs_call_t *c, grpc_op *ops, size_t n, rs_tag_t *t)
{
    if (grpc_call_start_batch(c->call, ops, n, t, NULL) != GRPC_CALL_OK)
        return false;
    c->pending++;
    return true;
}

static bool start(rs_call_t *c, grpc_op *ops, size_t n, rs_tag_t *t)
{
    bool ok;

    pthread_mutex_lock(&c->s->mu);
    ok = start_locked(c, ops, n, t);
    pthread_mutex_unlock(&c->s->mu);
    return ok;
}

static void request_new(ms_rpc_server_t *s)
{
    rs_call_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return;   /* no new calls until memory comes back: the next completion retries */
    c->s = s;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    c->t_new = (rs_tag_t){ T_NEW, c };
    c->t_recv = (rs_tag_t){ T_RECV, c };
    c->t_send = (rs_tag_t){ T_SEND, c };
    c->t_status = (rs_tag_t){ T_STATUS, c };
    c->t_close = (rs_tag_t){ T_CLOSE, c };
    if (grpc_server_request_call(s->srv, &c->call, &c->details, &c->md, s->cq, s->cq, &c->t_new) != GRPC_CALL_OK)
        call_free(c);
}

/* The final status, with the answer before it when ok. */
static void finish(rs_call_t *c, int code, const char *msg, const ms_rpc_buf_t *out)
{
    grpc_op ops[2];
    size_t n = 0;

    memset(ops, 0, sizeof(ops));
    if (code == MS_RPC_OK && out != NULL) {
        c->reply = ms__rpc_bytes_to_bb(out->data, out->len);
        if (c->reply == NULL) {
            code = MS_RPC_INTERNAL;
            msg = "out of memory";
        } else {
            ops[n].op = GRPC_OP_SEND_MESSAGE;
            ops[n++].data.send_message.send_message = c->reply;
        }
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)code;
    if (msg != NULL && msg[0] != '\0') {
        c->status_msg = grpc_slice_from_copied_string(msg);
        c->has_status_msg = true;
        ops[n].data.send_status_from_server.status_details = &c->status_msg;
    }
    n++;
    start(c, ops, n, &c->t_status);
}

/* Send the current snapshot on a stream; s->mu held, no send in flight. */
static void stream_send_locked(rs_call_t *c)
{
    ms_rpc_buf_t out = { NULL, 0 };
    grpc_op op;
    char msg[256] = "";
    int code = c->method->snapshot(c->s->ctx, &out, msg, sizeof(msg));

    c->dirty = false;
    if (code == MS_RPC_OK) {
        if (c->send != NULL)
            grpc_byte_buffer_destroy(c->send);
        c->send = ms__rpc_bytes_to_bb(out.data, out.len);
        ms_rpc_buf_free(&out);
        if (c->send == NULL) {
            code = MS_RPC_INTERNAL;
            snprintf(msg, sizeof(msg), "out of memory");
        }
    }
    memset(&op, 0, sizeof(op));
    if (code != MS_RPC_OK) {
        c->ending = true;
        op.op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        op.data.send_status_from_server.status = (grpc_status_code)code;
        c->status_msg = grpc_slice_from_copied_string(msg);
        c->has_status_msg = true;
        op.data.send_status_from_server.status_details = &c->status_msg;
        start_locked(c, &op, 1, &c->t_status);
        return;
    }
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = c->send;
    c->in_flight = start_locked(c, &op, 1, &c->t_send);
}

static const ms_rpc_method_t *find_method(const ms_rpc_server_t *s, grpc_slice path)
{
    int i;

    for (i = 0; i < s->nm; i++)
        if (grpc_slice_str_cmp(path, s->m[i].path) == 0)
            return &s->m[i];
    return NULL;
}

static void on_new(ms_rpc_server_t *s, rs_call_t *c, bool ok)
{
    grpc_op ops[2];
    bool stopping;

    pthread_mutex_lock(&s->mu);
    stopping = s->stopping;
    pthread_mutex_unlock(&s->mu);
    if (!ok) {   /* the server is shutting down */
        call_free(c);
        return;
    }
    if (!stopping)
        request_new(s);
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[0].data.recv_close_on_server.cancelled = &c->cancelled;
    if (!start(c, ops, 1, &c->t_close)) {
        call_free(c);
        return;
    }
    c->method = find_method(s, c->details.method);
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (c->method == NULL) {
        start(c, ops, 1, &c->t_send);
        finish(c, MS_RPC_UNIMPLEMENTED, "unknown method", NULL);
        return;
    }
    ops[1].op = GRPC_OP_RECV_MESSAGE;
    ops[1].data.recv_message.recv_message = &c->recv;
    start(c, ops, 2, &c->t_recv);
}

static void on_recv(ms_rpc_server_t *s, rs_call_t *c, bool ok)
{
    ms_rpc_buf_t in = { NULL, 0 }, out = { NULL, 0 };
    char msg[512] = "";
    int code;

    if (!ok)
        return;   /* cancelled: T_CLOSE follows */
    if (c->recv != NULL && ms__rpc_bb_to_bytes(c->recv, &in) != 0) {
        finish(c, MS_RPC_INTERNAL, "out of memory", NULL);
        return;
    }
    if (c->method->unary != NULL) {
        code = c->method->unary(s->ctx, in.data, in.len, &out, msg, sizeof(msg));
        msg[sizeof(msg) - 1] = '\0';
        finish(c, code, msg, &out);
        ms_rpc_buf_free(&in);
        ms_rpc_buf_free(&out);
        return;
    }
    ms_rpc_buf_free(&in);
    pthread_mutex_lock(&s->mu);
    if (!c->closed && !s->stopping) {
        c->listed = true;
        c->next = s->streams;
        s->streams = c;
        s->nstreams++;
        stream_send_locked(c);
    }
    pthread_mutex_unlock(&s->mu);
}

static void unlist_locked(ms_rpc_server_t *s, rs_call_t *c)
{
    rs_call_t **p;

    if (!c->listed)
        return;
    for (p = &s->streams; *p != NULL; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            s->nstreams--;
            break;
        }
    c->listed = false;
}

/* A batch of c completed: the stream's next send, or the end of the call. */
static void on_done(ms_rpc_server_t *s, rs_call_t *c, int kind, bool ok)
{
    bool last;

    pthread_mutex_lock(&s->mu);
    if (kind == T_CLOSE) {
        c->closed = true;
        unlist_locked(s, c);
    } else if (kind == T_SEND && c->method != NULL && c->method->snapshot != NULL) {
        c->in_flight = false;
        if (!ok)
            unlist_locked(s, c);
        else if (c->dirty && c->listed && !c->closed && !c->ending && !s->stopping)
            stream_send_locked(c);
    }
    last = --c->pending == 0;
    pthread_mutex_unlock(&s->mu);
    if (last)
        call_free(c);
}

static void *serve(void *arg)
{
    ms_rpc_server_t *s = arg;

    for (;;) {
        grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        rs_tag_t *t;

        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        t = ev.tag;
        switch (t->kind) {
        case T_SHUTDOWN:
            grpc_completion_queue_shutdown(s->cq);
            break;
        case T_NEW:
            on_new(s, t->call, ev.success != 0);
            break;
        case T_RECV:
            on_recv(s, t->call, ev.success != 0);
            on_done(s, t->call, T_RECV, ev.success != 0);
            break;
        default:
            on_done(s, t->call, t->kind, ev.success != 0);
            break;
        }
    }
    return NULL;
}

int ms_rpc_server_start(const char *path, const ms_rpc_method_t *methods, int n, void *ctx,
                        ms_rpc_server_t **out, char *err, size_t errlen)
{
    ms_rpc_server_t *s;
    grpc_server_credentials *cr;
    grpc_arg arg;
    grpc_channel_args args;
    char addr[128];
    struct stat st;
    int port;

    *out = NULL;
    if (strlen(path) >= sizeof(s->path)) {
        snprintf(err, errlen, "%s: a unix socket path is at most %zu bytes", path, sizeof(s->path) - 1);
        return -1;
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            snprintf(err, errlen, "%s exists and is not a socket", path);
            return -1;
        }
        if (unlink(path) != 0 && errno != ENOENT) {
            snprintf(err, errlen, "%s: cannot remove the old socket: %s", path, strerror(errno));
            return -1;
        }
    }
    if ((s = calloc(1, sizeof(*s))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    grpc_init();
    pthread_mutex_init(&s->mu, NULL);
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->m = methods;
    s->nm = n;
    s->ctx = ctx;
    s->t_shutdown.kind = T_SHUTDOWN;
    arg.type = GRPC_ARG_INTEGER;
    arg.key = (char *)(uintptr_t)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    arg.value.integer = (int)MS_RPC_MAX_MSG;
    args.num_args = 1;
    args.args = &arg;
    s->cq = grpc_completion_queue_create_for_next(NULL);
    s->srv = grpc_server_create(&args, NULL);
    if (s->cq == NULL || s->srv == NULL) {
        snprintf(err, errlen, "gRPC: cannot create a server");
        goto fail;
    }
    grpc_server_register_completion_queue(s->srv, s->cq, NULL);
    snprintf(addr, sizeof(addr), "unix:%s", path);
    cr = grpc_insecure_server_credentials_create();
    port = grpc_server_add_http2_port(s->srv, addr, cr);
    grpc_server_credentials_release(cr);
    if (port == 0) {
        snprintf(err, errlen, "%s: cannot listen (is the directory there and writable?)", path);
        goto fail;
    }
    grpc_server_start(s->srv);
    s->started = true;
    if (stat(path, &st) == 0) {
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        s->have_ino = true;
    }
    request_new(s);
    if (pthread_create(&s->thr, NULL, serve, s) != 0) {
        snprintf(err, errlen, "cannot start the server's thread");
        goto fail;
    }
    s->thr_started = true;
    *out = s;
    return 0;
fail:
    ms_rpc_server_stop(s);
    return -1;
}

void ms_rpc_server_notify(ms_rpc_server_t *s)
{
    rs_call_t *c;

    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    for (c = s->streams; c != NULL && !s->stopping; c = c->next) {
        if (c->closed || c->ending)
            continue;
        if (c->in_flight)
            c->dirty = true;
        else
            stream_send_locked(c);
    }
    pthread_mutex_unlock(&s->mu);
}

int ms_rpc_server_streams(ms_rpc_server_t *s)
{
    int n;

    pthread_mutex_lock(&s->mu);
    n = s->nstreams;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void ms_rpc_server_stop(ms_rpc_server_t *s)
{
    struct stat st;

    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_mutex_unlock(&s->mu);
    if (s->srv != NULL) {
        if (!s->started) {
            /* never started: nothing to shut down */
        } else if (s->thr_started) {
            grpc_server_shutdown_and_notify(s->srv, s->cq, &s->t_shutdown);
            grpc_server_cancel_all_calls(s->srv);
            pthread_join(s->thr, NULL);
        } else if (s->cq != NULL) {
            /* never served: drain the shutdown (and a requested call) here */
            grpc_server_shutdown_and_notify(s->srv, s->cq, &s->t_shutdown);
            grpc_server_cancel_all_calls(s->srv);
            serve(s);
        }
        grpc_server_destroy(s->srv);
    }
    if (s->cq != NULL)
        grpc_completion_queue_destroy(s->cq);
    if (s->have_ino && lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        unlink(s->path);
    pthread_mutex_destroy(&s->mu);
    free(s);
    grpc_shutdown();
}
