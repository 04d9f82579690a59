/* http.c - the HTTP/JSON API on libmicrohttpd, event-driven: one epoll
 * thread (or --http-threads of them) serves every connection, and nothing
 * it runs blocks.
 *
 * A handler collects the body (at most --max-body bytes, else 413), checks
 * the bearer token on mutating endpoints, validates the request, and hands
 * it to the loop (svc_call_async) with its connection suspended; the loop's
 * (or the syncer's) reply, once the batch is committed and durable, resumes
 * the connection, and the handler, called again, sends the stored answer.
 * GET /v1/jobs/{id} and /healthz never touch the loop (the committed view;
 * the process runs). A long poll (/v1/events) and an event stream park
 * their suspended connection on the event ring (svc_events_park) until an
 * event, their deadline or the shutdown. The extender's endpoints may wait
 * on the API server, so they run on a small worker pool, their connection
 * suspended meanwhile.
 *
 * Lifetime: a request's state (rq_t) belongs to libmicrohttpd's side
 * except while its connection is suspended, when it belongs to whoever
 * will resume it (the reply, the worker, the ring's wake). That one reads
 * what it needs, resumes, and never touches the request again; while a
 * connection is suspended libmicrohttpd neither reads it nor notices a
 * disconnect, so NOTIFY_COMPLETED (which frees the state) cannot run
 * before the resume. A client that went away is noticed afterwards, when
 * the answer cannot be sent; the job it posted is committed all the same.
 * Stopping resumes everything first (libmicrohttpd must not be stopped with
 * suspended connections).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "service/extender.h"
#include "service/sse.h"
#include "service/http_util.h"
#include "service/svc.h"

#define WORKERS 2                  /* threads for the extender's endpoints */
/* libmicrohttpd's memory per connection (MHD_OPTION_CONNECTION_MEMORY_LIMIT):
 * it holds a request's headers, so they are limited to about this in all
 * (431 beyond, docs/api.md; Node.js's default is the same 16 KiB). It is
 * zeroed between requests: at 64 KiB that memset was a fifth of an HTTP
 * thread's time under a stream of GETs (docs/performance.md). */
#define CONN_POOL 16384

enum { RQ_ROUTE, RQ_LOOP, RQ_WORK, RQ_POLL, RQ_ANSWERED };

typedef struct rq {
    svc_http_body_t b;             /* the request body */
    double t0;
    int rt;                        /* SVC_RT_*: the route, for the latency histogram */
    struct svc_http *h;
    struct MHD_Connection *c;
    int phase;                     /* RQ_*: what a resumed handler call answers */
    svc_msg_t *m;                  /* RQ_LOOP: the loop's answered message */
    char *verb;                    /* RQ_WORK: the extender verb */
    int wstatus;                   /* RQ_WORK: its answer */
    char *wbody;
    struct rq *wnext;              /* the worker queue */
    svc_ewait_t w;                 /* RQ_POLL: parked on the event ring */
    long limit;
} rq_t;

struct svc_http {
    struct MHD_Daemon *mhd;
    svc_t *d;
    atomic_int inflight;           /* requests begun and not completed */
    atomic_int pending;            /* connections suspended for the loop or a worker */
    atomic_bool closing;           /* stopping: no new suspension (a 503 instead) */
    atomic_int streams;            /* open /v1/events/stream responses */
    char *cert, *key;
    bool timer;                    /* the event ring's timer runs */
    /* the extender's workers */
    pthread_mutex_t wmu;
    pthread_cond_t wcv;
    rq_t *whead, *wtail;
    bool wstop;
    int nworkers;
    pthread_t wth[WORKERS];
};

static char *slurp(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    char *s;
    size_t n;

    if (f == NULL)
        return NULL;
    if ((s = malloc(max + 1)) == NULL) {
        fclose(f);
        return NULL;
    }
    n = fread(s, 1, max, f);
    if (ferror(f) || (n == max && fgetc(f) != EOF)) {
        fclose(f);
        free(s);
        return NULL;
    }
    fclose(f);
    s[n] = '\0';
    return s;
}

int svc_token_load(svc_t *d)
{
    char *t;
    size_t n;

    if (d->cfg->token_file == NULL)
        return 0;
    if ((t = slurp(d->cfg->token_file, 4096)) == NULL) {
        svc_log("error", "cannot read the token file (at most 4096 bytes)",
                json_pack("{s:s}", "file", d->cfg->token_file));
        return -1;
    }
    n = strlen(t);
    while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t'))
        t[--n] = '\0';
    if (n < 16) {
        svc_log("error", "the token must have at least 16 characters", json_pack("{s:s}", "file", d->cfg->token_file));
        free(t);
        return -1;
    }
    pthread_mutex_lock(&d->tmu);
    free(d->token);
    d->token = t;
    d->token_len = n;
    pthread_mutex_unlock(&d->tmu);
    return 0;
}

static bool token_ok(svc_t *d, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    bool ok;

    pthread_mutex_lock(&d->tmu);   /* SIGHUP may replace the token */
    ok = d->token == NULL || svc_http_bearer_ok(h, d->token, d->token_len);
    pthread_mutex_unlock(&d->tmu);
    return ok;
}

static enum MHD_Result reply(svc_http_t *h, struct MHD_Connection *c, rq_t *r, int status, char *body,
                            const char *ctype)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;

    if (body == NULL) {
        status = 500;
        body = strdup("{\"error\":{\"message\":\"out of memory\"}}");
        if (body == NULL)
            return MHD_NO;
    }
    resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype != NULL ? ctype : "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    svc_metrics_http(&h->d->met, status, r->rt, svc_mono() - r->t0);
    return ret;
}

static enum MHD_Result send_err(svc_http_t *h, struct MHD_Connection *c, rq_t *r, int status,
                                const char *field, const char *msg)
{
    svc_err_t e;

    svc_err_set(&e, status, field, "%s", msg);
    return reply(h, c, r, status, svc_err_body(&e), NULL);
}

/* The loop's (or the syncer's) thread: m is answered and r's connection
 * suspended; r is not touched after the resume. */
static void loop_done(svc_msg_t *m)
{
    rq_t *r = m->reply_arg;
    svc_http_t *h = r->h;

    MHD_resume_connection(r->c);
    atomic_fetch_sub(&h->pending, 1);
}

/* Suspend first, then post: the reply's resume can never come before the
 * suspension. */
static enum MHD_Result via_loop(svc_http_t *h, struct MHD_Connection *c, rq_t *r, svc_msg_t *m)
{
    atomic_fetch_add(&h->pending, 1);
    if (atomic_load(&h->closing)) {   /* svc_http_stop has stopped waiting for pending */
        atomic_fetch_sub(&h->pending, 1);
        svc_msg_free(m);
        return send_err(h, c, r, 503, "", "shutting down");
    }
    r->m = m;
    r->phase = RQ_LOOP;
    MHD_suspend_connection(c);
    if (svc_call_async(h->d, m, loop_done, r) != 0) {
        m->status = 503;
        m->body = strdup("{\"error\":{\"message\":\"shutting down\"}}");
        MHD_resume_connection(c);
        atomic_fetch_sub(&h->pending, 1);
    }
    return MHD_YES;
}

/* --- the extender's workers ---------------------------------------------- */

static void *worker(void *arg)
{
    svc_http_t *h = arg;

    for (;;) {
        rq_t *r;
        struct MHD_Connection *c;

        pthread_mutex_lock(&h->wmu);
        while (h->whead == NULL && !h->wstop)
            pthread_cond_wait(&h->wcv, &h->wmu);
        if ((r = h->whead) == NULL) {
            pthread_mutex_unlock(&h->wmu);
            return NULL;   /* stopping, nothing queued */
        }
        h->whead = r->wnext;
        if (h->whead == NULL)
            h->wtail = NULL;
        pthread_mutex_unlock(&h->wmu);
        r->wnext = NULL;
        svc_ext_http(h->d, r->verb, r->b.buf != NULL ? r->b.buf : "", r->b.len, &r->wstatus, &r->wbody);
        c = r->c;
        MHD_resume_connection(c);   /* r is the handler's again */
        atomic_fetch_sub(&h->pending, 1);
    }
}

static enum MHD_Result via_worker(svc_http_t *h, struct MHD_Connection *c, rq_t *r, const char *verb)
{
    if ((r->verb = strdup(verb)) == NULL)
        return MHD_NO;
    atomic_fetch_add(&h->pending, 1);
    if (atomic_load(&h->closing)) {
        atomic_fetch_sub(&h->pending, 1);
        return send_err(h, c, r, 503, "", "shutting down");
    }
    r->phase = RQ_WORK;
    r->wstatus = 500;
    MHD_suspend_connection(c);
    pthread_mutex_lock(&h->wmu);
    r->wnext = NULL;
    if (h->wtail != NULL)
        h->wtail->wnext = r;
    else
        h->whead = r;
    h->wtail = r;
    pthread_cond_signal(&h->wcv);
    pthread_mutex_unlock(&h->wmu);
    return MHD_YES;
}

/* The answer of a request whose connection was resumed. */
static enum MHD_Result resumed(svc_http_t *h, struct MHD_Connection *c, rq_t *r)
{
    int phase = r->phase;
    enum MHD_Result ret;

    r->phase = RQ_ANSWERED;
    if (phase == RQ_LOOP) {
        svc_msg_t *m = r->m;

        r->m = NULL;
        ret = reply(h, c, r, m->status, svc_msg_body(h->d, m), m->ctype);
        svc_msg_free(m);
        return ret;
    }
    if (phase == RQ_WORK) {
        char *body = r->wbody;

        r->wbody = NULL;
        return reply(h, c, r, r->wstatus, body, NULL);
    }
    if (phase == RQ_POLL)
        return reply(h, c, r, 200, svc_events_get(h->d, r->w.since, r->limit), NULL);
    return MHD_NO;   /* called again after its answer: not expected */
}

static char *arg_dup(struct MHD_Connection *c, const char *k)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);

    return v != NULL ? strdup(v) : NULL;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return false;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static char *status_page(void)
{
    size_t n = 1, i;
    char *s, *p;

    for (i = 0; svc_status_html[i] != NULL; i++)
        n += strlen(svc_status_html[i]);
    if ((s = malloc(n)) == NULL)
        return NULL;
    for (p = s, i = 0; svc_status_html[i] != NULL; i++) {
        size_t k = strlen(svc_status_html[i]);

        memcpy(p, svc_status_html[i], k);
        p += k;
    }
    *p = '\0';
    return s;
}

/* GET /v1/events/stream (sse.c): from Last-Event-ID + 1, else ?since=N;
 * ?heartbeat=S, ?limit=N. */
static enum MHD_Result events_stream(svc_http_t *h, struct MHD_Connection *c, rq_t *r)
{
    const char *v;
    long since = 1, hb = 15, last, limit = 0;
    struct MHD_Response *resp;
    enum MHD_Result ret;

    if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since")) != NULL &&
        !parse_long(v, 0, 0x7fffffffffffffffL, &since))
        return send_err(h, c, r, 400, "since", "an event sequence number >= 0");
    if ((v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID")) != NULL) {
        if (!parse_long(v, 0, 0x7ffffffffffffffeL, &last))
            return send_err(h, c, r, 400, "Last-Event-ID", "the id of an event of this stream");
        since = last + 1;
    }
    if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "heartbeat")) != NULL &&
        !parse_long(v, 1, 60, &hb))
        return send_err(h, c, r, 400, "heartbeat", "seconds in [1, 60]");
    if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit")) != NULL &&
        !parse_long(v, 1, 1000000000L, &limit))
        return send_err(h, c, r, 400, "limit", "an integer in [1, 1000000000]");
    if (since < 1)
        since = 1;   /* as for the long poll, 0 and 1 both mean from the start */
    if ((resp = svc_sse_response(h->d, c, &h->streams, (uint64_t)since, (double)hb, (uint64_t)limit)) == NULL) {
        char msg[96];

        snprintf(msg, sizeof(msg), "at most %d event streams are open; retry later", svc_sse_max(h->d));
        return send_err(h, c, r, 503, "", msg);
    }
    ret = MHD_queue_response(c, 200, resp);
    MHD_destroy_response(resp);
    svc_metrics_http(&h->d->met, 200, r->rt, svc_mono() - r->t0);
    return ret;
}

/* The route a request is counted under (svc_rt_method, svc_rt_path); what
 * the handler below does with it is decided there. */
static int route_id(const char *url, bool get, bool post, bool del)
{
    const char *m = get ? "GET" : post ? "POST" : del ? "DELETE" : "", *slash;
    int k;

    for (k = 1; k < SVC_RT_N; k++)   /* the paths without a parameter */
        if (strchr(svc_rt_path[k], '{') == NULL && strcmp(url, svc_rt_path[k]) == 0 &&
            strcmp(m, svc_rt_method[k]) == 0)
            return k;
    if (strncmp(url, "/extender/", 10) == 0)
        return post ? SVC_RT_EXTENDER : SVC_RT_OTHER;
    if (strncmp(url, "/v1/jobs/", 9) != 0)
        return SVC_RT_OTHER;
    slash = strchr(url + 9, '/');
    if (slash == NULL)
        return get ? SVC_RT_JOB_GET : del ? SVC_RT_JOB_DELETE : SVC_RT_OTHER;
    return post && strcmp(slash, "/done") == 0 ? SVC_RT_JOB_DONE : SVC_RT_OTHER;
}

static enum MHD_Result route(svc_http_t *h, struct MHD_Connection *c, rq_t *r, const char *url,
                             const char *method)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;
    svc_msg_t *m;
    const char *v;

    r->rt = route_id(url, get, post, del);

    if (strcmp(url, "/healthz") == 0 && get)
        return reply(h, c, r, 200, strdup("{\"ok\":true}"), NULL);
    if (strcmp(url, "/") == 0 && get)
        return reply(h, c, r, 200, status_page(), "text/html; charset=utf-8");
    if (strcmp(url, "/v1/events") == 0 && get) {
        long since = 0, timeout = 25, limit = 1000;

        if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since")) != NULL &&
            !parse_long(v, 0, 0x7fffffffffffffffL, &since))
            return send_err(h, c, r, 400, "since", "an event sequence number >= 0");
        if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeout")) != NULL &&
            !parse_long(v, 0, 60, &timeout))
            return send_err(h, c, r, 400, "timeout", "seconds in [0, 60]");
        if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit")) != NULL &&
            !parse_long(v, 1, 10000, &limit))
            return send_err(h, c, r, 400, "limit", "an integer in [1, 10000]");
        r->limit = limit;
        r->w.since = (uint64_t)since;
        r->w.deadline = svc_mono() + (double)timeout;
        r->w.wake = svc_conn_wake;
        r->w.arg = c;
        r->phase = RQ_POLL;
        if (timeout > 0 && svc_events_park(h->d, &r->w, svc_conn_suspend))
            return MHD_YES;   /* resumed by an event, the deadline or the shutdown */
        r->phase = RQ_ANSWERED;
        return reply(h, c, r, 200, svc_events_get(h->d, (uint64_t)since, limit), NULL);
    }
    if (strncmp(url, "/extender/", 10) == 0) {   /* kube-scheduler (extender.c) */
        if (!post)
            return send_err(h, c, r, 405, "", "method not allowed");
        if (!token_ok(h->d, c))
            return send_err(h, c, r, 401, "Authorization", "a valid bearer token is required");
        if (r->b.too_big)
            return send_err(h, c, r, 413, "", "the body is too large");
        return via_worker(h, c, r, url + 10);   /* it may wait on the loop and the API server */
    }

    if (strcmp(url, "/v1/events/stream") == 0 && get)
        return events_stream(h, c, r);
    if ((m = calloc(1, sizeof(*m))) == NULL)
        return send_err(h, c, r, 500, "", "out of memory");
    if ((strcmp(url, "/readyz") == 0 || strcmp(url, "/metrics") == 0 || strcmp(url, "/v1/cluster") == 0) && get) {
        m->kind = url[1] == 'r' ? SVC_M_READY : url[1] == 'm' ? SVC_M_METRICS : SVC_M_CLUSTER;
        return via_loop(h, c, r, m);
    }
    if (strcmp(url, "/v1/jobs") == 0 && post) {
        svc_err_t e;

        free(m);
        if (!token_ok(h->d, c))
            return send_err(h, c, r, 401, "Authorization", "a valid bearer token is required");
        if (r->b.too_big)
            return send_err(h, c, r, 413, "", "the body is too large");
        if ((m = calloc(1, sizeof(*m))) == NULL)
            return send_err(h, c, r, 500, "", "out of memory");
        m->kind = SVC_M_SUBMIT;
        if (svc_req_parse(r->b.buf != NULL ? r->b.buf : "", r->b.len, &m->id, &m->req, &m->canon, &e) != 0) {
            svc_msg_free(m);
            return reply(h, c, r, e.code, svc_err_body(&e), NULL);
        }
        return via_loop(h, c, r, m);
    }
    if (strcmp(url, "/v1/jobs") == 0 && get) {
        m->kind = SVC_M_LIST;
        m->q_state = arg_dup(c, "state");
        m->q_label = arg_dup(c, "label");
        m->q_cursor = arg_dup(c, "cursor");
        if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit")) != NULL &&
            !parse_long(v, 1, 1000, &m->q_limit)) {
            svc_msg_free(m);
            return send_err(h, c, r, 400, "limit", "an integer in [1, 1000]");
        }
        if (m->q_label != NULL && strchr(m->q_label, '=') == NULL) {
            svc_msg_free(m);
            return send_err(h, c, r, 400, "label", "KEY=VALUE");
        }
        return via_loop(h, c, r, m);
    }
    if (strcmp(url, "/v1/jobs") == 0 || ((strcmp(url, "/readyz") == 0 || strcmp(url, "/metrics") == 0 ||
                                           strcmp(url, "/v1/cluster") == 0 || strcmp(url, "/v1/events") == 0 ||
                                           strcmp(url, "/v1/events/stream") == 0 ||
                                           strcmp(url, "/healthz") == 0 || strcmp(url, "/") == 0) && !get)) {
        svc_msg_free(m);
        return send_err(h, c, r, 405, "", "method not allowed");
    }
    if (strncmp(url, "/v1/jobs/", 9) == 0) {
        const char *id = url + 9, *slash = strchr(id, '/');
        size_t n = slash != NULL ? (size_t)(slash - id) : strlen(id);
        bool done = slash != NULL && strcmp(slash, "/done") == 0;

        if (slash != NULL && !done) {
            svc_msg_free(m);
            return send_err(h, c, r, 404, "", "no such endpoint");
        }
        if ((m->id = malloc(n + 1)) == NULL) {
            svc_msg_free(m);
            return send_err(h, c, r, 500, "", "out of memory");
        }
        memcpy(m->id, id, n);
        m->id[n] = '\0';
        if (!svc_id_valid(m->id)) {
            svc_msg_free(m);
            return send_err(h, c, r, 400, "id", "1-127 characters of A-Z a-z 0-9 - _ . :");
        }
        if ((done && post) || (!done && del)) {
            if (!token_ok(h->d, c)) {
                svc_msg_free(m);
                return send_err(h, c, r, 401, "Authorization", "a valid bearer token is required");
            }
            m->kind = done ? SVC_M_DONE : SVC_M_CANCEL;
            return via_loop(h, c, r, m);
        }
        if (!done && get) {   /* the committed view: no queue, no wait for a commit */
            char *body = NULL;
            int status = svc_job_read(h->d, m->id, &body);

            svc_msg_free(m);
            return reply(h, c, r, status, body, NULL);
        }
        svc_msg_free(m);
        return send_err(h, c, r, 405, "", "method not allowed");
    }
    svc_msg_free(m);
    return send_err(h, c, r, 404, "", "no such endpoint");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    svc_http_t *h = cls;
    rq_t *r = *con_cls;

    (void)version;
    if (r == NULL) {
        if ((r = calloc(1, sizeof(*r))) == NULL)
            return MHD_NO;
        r->t0 = svc_mono();
        r->h = h;
        r->c = c;
        *con_cls = r;
        atomic_fetch_add(&h->inflight, 1);
        return MHD_YES;
    }
    if (r->phase != RQ_ROUTE)
        return resumed(h, c, r);
    if (*upload_size > 0) {
        if (svc_http_body_add(&r->b, upload, *upload_size, (size_t)h->d->cfg->max_body) != 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    return route(h, c, r, url, method);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    svc_http_t *h = cls;
    rq_t *r = *con_cls;

    (void)c;
    (void)toe;
    if (r != NULL) {   /* never while suspended (the header comment) */
        atomic_fetch_sub(&h->inflight, 1);
        svc_http_body_free(&r->b);
        svc_msg_free(r->m);   /* answered, but the client went away first */
        free(r->verb);
        free(r->wbody);
        free(r);
        *con_cls = NULL;
    }
}

static void workers_stop(svc_http_t *h)
{
    int i;

    pthread_mutex_lock(&h->wmu);
    h->wstop = true;
    pthread_cond_broadcast(&h->wcv);
    pthread_mutex_unlock(&h->wmu);
    for (i = 0; i < h->nworkers; i++)
        pthread_join(h->wth[i], NULL);
    h->nworkers = 0;
}

static void http_free(svc_http_t *h)
{
    if (h->timer)
        svc_events_timer_stop(h->d);
    workers_stop(h);
    pthread_mutex_destroy(&h->wmu);
    pthread_cond_destroy(&h->wcv);
    free(h->cert);
    free(h->key);
    free(h);
}

int svc_http_listen(svc_t *d)
{
    struct sockaddr_in sa;
    int rc, fd, one = 1;

    d->listen_fd = -1;
    if ((rc = svc_http_parse_listen(d->cfg->listen, d->cfg->allow_remote, &sa)) != 0) {
        svc_log("error", rc == -2 ? "--listen: not a loopback address (give --allow-remote to listen on it)"
                                  : "--listen: HOST:PORT with an IPv4 address or localhost",
                json_pack("{s:s}", "listen", d->cfg->listen));
        return -1;
    }
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, SOMAXCONN) != 0) {
        svc_log("error", "cannot listen", json_pack("{s:s,s:s}", "listen", d->cfg->listen, "why", strerror(errno)));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    d->listen_fd = fd;
    return 0;
}

int svc_http_start(svc_t *d, svc_http_t **out)
{
    svc_http_t *h = calloc(1, sizeof(*h));
    /* one epoll thread (a pool of them with --http-threads N > 1); the
     * suspended connections are resumed through its inter-thread channel */
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    /* a pool only for N > 1 (libmicrohttpd warns about a pool of 0 or 1) */
    struct MHD_OptionItem pool[] = { { MHD_OPTION_THREAD_POOL_SIZE, d->cfg->http_threads, NULL },
                                     { MHD_OPTION_END, 0, NULL } };

    *out = NULL;
    if (h == NULL)
        return -1;
    h->d = d;
    pthread_mutex_init(&h->wmu, NULL);
    pthread_cond_init(&h->wcv, NULL);
    if (d->listen_fd < 0) {   /* svc_http_listen comes first, before start-up */
        svc_log("error", "no socket to serve: svc_http_listen was not called", NULL);
        http_free(h);
        return -1;
    }
    if (d->cfg->tls_cert != NULL || d->cfg->tls_key != NULL) {
        if (d->cfg->tls_cert == NULL || d->cfg->tls_key == NULL) {
            svc_log("error", "TLS needs both --tls-cert and --tls-key", NULL);
            http_free(h);
            return -1;
        }
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            svc_log("error", "this libmicrohttpd is built without TLS", NULL);
            http_free(h);
            return -1;
        }
        h->cert = slurp(d->cfg->tls_cert, 1 << 20);
        h->key = slurp(d->cfg->tls_key, 1 << 20);
        if (h->cert == NULL || h->key == NULL) {
            svc_log("error", "cannot read the TLS certificate or key", NULL);
            http_free(h);
            return -1;
        }
        flags |= MHD_USE_TLS;
    }
    for (; h->nworkers < WORKERS; h->nworkers++)
        if (pthread_create(&h->wth[h->nworkers], NULL, worker, h) != 0) {
            svc_log("error", "cannot start the HTTP workers", NULL);
            http_free(h);
            return -1;
        }
    if (svc_events_timer_start(d) != 0) {
        svc_log("error", "cannot start the event timer", NULL);
        http_free(h);
        return -1;
    }
    h->timer = true;
    if (d->cfg->http_threads < 2)
        pool[0].option = MHD_OPTION_END;
    if (h->cert != NULL)
        h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handler, h, MHD_OPTION_LISTEN_SOCKET, d->listen_fd,
                                  MHD_OPTION_ARRAY, pool,
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned)d->cfg->max_conns,
                                  MHD_OPTION_CONNECTION_TIMEOUT, 75u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                  (size_t)CONN_POOL, MHD_OPTION_NOTIFY_COMPLETED, completed, h,
                                  MHD_OPTION_HTTPS_MEM_CERT, h->cert, MHD_OPTION_HTTPS_MEM_KEY, h->key,
                                  MHD_OPTION_END);
    else
        h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handler, h, MHD_OPTION_LISTEN_SOCKET, d->listen_fd,
                                  MHD_OPTION_ARRAY, pool,
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned)d->cfg->max_conns,
                                  MHD_OPTION_CONNECTION_TIMEOUT, 75u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                  (size_t)CONN_POOL, MHD_OPTION_NOTIFY_COMPLETED, completed, h, MHD_OPTION_END);
    if (h->mhd == NULL) {
        svc_log("error", "cannot serve HTTP", json_pack("{s:s}", "listen", d->cfg->listen));
        http_free(h);
        return -1;   /* the socket stays d's: main closes it */
    }
    d->listen_fd = -1;   /* libmicrohttpd closes it when it stops */
    *out = h;
    return 0;
}

static void nap(void)
{
    struct timespec ts = { 0, 10000000L };

    nanosleep(&ts, NULL);
}

/* Stop accepting; end the long polls and streams; let the requests in
 * progress finish (at most 5 s; a keep-alive client may go on sending);
 * then refuse new suspensions, wait for every suspended connection to be
 * resumed (the loop still runs, so the replies come) and stop. */
void svc_http_stop(svc_http_t *h)
{
    double t0 = svc_mono();
    MHD_socket s;

    if (h == NULL)
        return;
    s = MHD_quiesce_daemon(h->mhd);
    svc_events_wake(h->d);
    while (atomic_load(&h->inflight) > 0 && svc_mono() - t0 < 5.0)
        nap();
    atomic_store(&h->closing, true);
    while (atomic_load(&h->pending) > 0 || svc_events_parked(h->d) > 0)
        nap();
    /* the last resumed ones send their answers */
    t0 = svc_mono();
    while (atomic_load(&h->inflight) > 0 && svc_mono() - t0 < 1.0)
        nap();
    MHD_stop_daemon(h->mhd);
    if (s != MHD_INVALID_SOCKET)
        close(s);
    http_free(h);
}
