/* http.c - the HTTP threads: the HTTP/JSON API on libmicrohttpd,
 * event-driven: one epoll thread (or --http-threads of them) serves every
 * connection, and nothing it runs blocks. (http_server.c starts and stops
 * it, on the main thread.)
 *
 * A handler collects the body (at most --max-body bytes, else 413), checks
 * the bearer token on mutating endpoints, validates the request, and hands
 * it to the loop (svc_call_async) with its connection suspended; the
 * syncer's reply, once the batch is committed and durable, resumes the
 * connection, and the handler, called again, sends the stored answer.
 * GET /v1/jobs/{id} and /healthz never touch the loop (the committed view;
 * the process runs). A long poll (/v1/events) and an event stream park
 * their suspended connection on the event ring (svc_events_park) until an
 * event, their deadline or the shutdown. The extender's endpoints may wait
 * on the API server, so they go to the extender's workers (ext_worker.c),
 * their connection suspended meanwhile.
 *
 * Lifetime: a request's state (rq_t) belongs to libmicrohttpd's side
 * except while its connection is suspended, when it belongs to whoever
 * will resume it (the reply, the worker, the ring's wake). That one reads
 * what it needs, resumes, and never touches the request again; while a
 * connection is suspended libmicrohttpd neither reads it nor notices a
 * disconnect, so NOTIFY_COMPLETED (which frees the state) cannot run
 * before the resume. A client that went away is noticed afterwards, when
 * the answer cannot be sent; the job it posted is committed all the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra.h"
#include "service/http_int.h"
#include "service/sse.h"

enum { RQ_ROUTE, RQ_LOOP, RQ_WORK, RQ_POLL, RQ_ANSWERED };

typedef struct rq {
    ms_http_body_t b;              /* the request body */
    double t0;
    int rt;                        /* SVC_RT_*: the route, for the latency histogram */
    struct svc_http *h;
    struct MHD_Connection *c;
    int phase;                     /* RQ_*: what a resumed handler call answers */
    svc_msg_t *m;                  /* RQ_LOOP: the loop's answered message */
    svc_ext_job_t job;             /* RQ_WORK: the extender call and its answer */
    char *verb;
    svc_ewait_t w;                 /* RQ_POLL: parked on the event ring */
    long limit;
} rq_t;

static double mono(const svc_http_t *h)
{
    return svc_clock_mono(h->d->clock);
}

static bool token_ok(svc_t *d, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    bool ok;

    pthread_mutex_lock(&d->tmu);   /* SIGHUP may replace the token */
    ok = d->token == NULL || ms_http_bearer_ok(h, d->token, d->token_len);
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
    svc_metrics_http(&h->d->met, status, r->rt, mono(h) - r->t0);
    return ret;
}

static enum MHD_Result send_err(svc_http_t *h, struct MHD_Connection *c, rq_t *r, int status,
                                const char *field, const char *msg)
{
    svc_err_t e;

    svc_err_set(&e, status, field, "%s", msg);
    return reply(h, c, r, status, svc_err_body(&e), NULL);
}

/* The syncer's thread: m is answered and r's connection suspended; r is
 * not touched after the resume. */
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

/* A worker's thread: the call is answered; r is the handler's again. */
static void work_done(svc_ext_job_t *j)
{
    rq_t *r = SVC_QITEM(j, rq_t, job);
    svc_http_t *h = r->h;

    MHD_resume_connection(r->c);
    atomic_fetch_sub(&h->pending, 1);
}

static enum MHD_Result via_worker(svc_http_t *h, struct MHD_Connection *c, rq_t *r, const char *verb,
                                  int (*push)(svc_t *d, svc_ext_job_t *j))
{
    if ((r->verb = strdup(verb)) == NULL)
        return MHD_NO;
    atomic_fetch_add(&h->pending, 1);
    if (atomic_load(&h->closing)) {
        atomic_fetch_sub(&h->pending, 1);
        return send_err(h, c, r, 503, "", "shutting down");
    }
    r->phase = RQ_WORK;
    r->job.verb = r->verb;
    r->job.body = r->b.buf != NULL ? r->b.buf : "";
    r->job.len = r->b.len;
    r->job.status = 500;
    r->job.out = NULL;
    r->job.done = work_done;
    MHD_suspend_connection(c);
    if (push(h->d, &r->job) != 0) {   /* no workers: answered at once */
        r->job.status = 503;
        r->job.out = strdup("{\"error\":{\"message\":\"not served by this daemon (stopping, or not in this mode)\"}}");
        MHD_resume_connection(c);
        atomic_fetch_sub(&h->pending, 1);
    }
    return MHD_YES;
}

/* The reply body of m: m->body, or m->rjob rendered here, off the loop. */
static char *msg_body(svc_t *d, svc_msg_t *m)
{
    char *body;

    if (m->rjob == NULL) {
        body = m->body;
        m->body = NULL;
        return body;
    }
    return svc_job_text(m->rjob->id, m->rjob->body, &m->rview, d->be);
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
        ret = reply(h, c, r, m->status, msg_body(h->d, m), m->ctype);
        svc_msg_free(m);
        return ret;
    }
    if (phase == RQ_WORK) {
        char *body = r->job.out;

        r->job.out = NULL;
        return reply(h, c, r, r->job.status, body, NULL);
    }
    if (phase == RQ_POLL)
        return reply(h, c, r, 200, svc_events_get(h->d, r->w.since, r->limit), NULL);
    return MHD_NO;   /* called again after its answer: not expected */
}

/* GET /v1/jobs/{id} from the committed views, without the loop: the status
 * and a malloc'd JSON body. */
static int job_read(svc_t *d, const char *id, char **body)
{
    svc_job_t *j;
    svc_jview_t v;
    int rc = 0;

    pthread_mutex_lock(&d->rmu);
    j = svc_jobs_find(&d->jobs, id);
    if (j != NULL && j->published) {
        v = j->pub;
        if (v.reason != NULL && (v.reason = strdup(v.reason)) == NULL)
            rc = -1;
    } else
        j = NULL;
    pthread_mutex_unlock(&d->rmu);
    if (j == NULL || rc != 0) {
        svc_err_t e;

        svc_err_set(&e, j == NULL ? 404 : 500, j == NULL ? "id" : "", "%s",
                    j == NULL ? "no such job" : "out of memory");
        *body = svc_err_body(&e);
        return e.code;
    }
    /* id and body never change once the job is in the table */
    *body = svc_job_text(j->id, j->body, &v, d->be);
    free(v.reason);
    return 200;
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
    svc_metrics_http(&h->d->met, 200, r->rt, mono(h) - r->t0);
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
    if (strncmp(url, "/v1/jobs/", 9) != 0)
        return SVC_RT_OTHER;
    slash = strchr(url + 9, '/');
    if (slash == NULL)
        return get ? SVC_RT_JOB_GET : del ? SVC_RT_JOB_DELETE : SVC_RT_OTHER;
    return post && strcmp(slash, "/done") == 0 ? SVC_RT_JOB_DONE : SVC_RT_OTHER;
}
/* GET /v1/events: the long poll, parked on the event ring until an event,
 * its timeout or the shutdown. */
static enum MHD_Result long_poll(svc_http_t *h, struct MHD_Connection *c, rq_t *r)
{
    const char *v;
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
    r->w.deadline = mono(h) + (double)timeout;
    r->w.wake = svc_conn_wake;
    r->w.arg = c;
    r->phase = RQ_POLL;
    if (timeout > 0 && svc_events_park(h->d, &r->w, svc_conn_suspend, mono(h)))
        return MHD_YES;   /* resumed by an event, the deadline or the shutdown */
    r->phase = RQ_ANSWERED;
    return reply(h, c, r, 200, svc_events_get(h->d, (uint64_t)since, limit), NULL);
}

/* POST /v1/jobs: a submission; GET /v1/jobs: a page of the list. */
static enum MHD_Result jobs(svc_http_t *h, struct MHD_Connection *c, rq_t *r, bool post)
{
    svc_msg_t *m = calloc(1, sizeof(*m));
    const char *v;
    svc_err_t e;

    if (m == NULL)
        return send_err(h, c, r, 500, "", "out of memory");
    if (post) {
        if (!token_ok(h->d, c)) {
            svc_msg_free(m);
            return send_err(h, c, r, 401, "Authorization", "a valid bearer token is required");
        }
        if (r->b.too_big) {
            svc_msg_free(m);
            return send_err(h, c, r, 413, "", "the body is too large");
        }
        m->kind = SVC_M_SUBMIT;
        if (svc_req_parse(r->b.buf != NULL ? r->b.buf : "", r->b.len, &m->id, &m->req, &m->canon, &e) != 0) {
            svc_msg_free(m);
            return reply(h, c, r, e.code, svc_err_body(&e), NULL);
        }
        return via_loop(h, c, r, m);
    }
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

/* /v1/jobs/{id} (GET: the committed view; DELETE: cancel) and
 * /v1/jobs/{id}/done (POST). */
static enum MHD_Result job(svc_http_t *h, struct MHD_Connection *c, rq_t *r, const char *url, bool get,
                           bool post, bool del)
{
    const char *id = url + 9, *slash = strchr(id, '/');
    size_t n = slash != NULL ? (size_t)(slash - id) : strlen(id);
    bool done = slash != NULL && strcmp(slash, "/done") == 0;
    svc_msg_t *m;

    if (slash != NULL && !done)
        return send_err(h, c, r, 404, "", "no such endpoint");
    if ((m = calloc(1, sizeof(*m))) == NULL || (m->id = malloc(n + 1)) == NULL) {
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
        int status = job_read(h->d, m->id, &body);

        svc_msg_free(m);
        return reply(h, c, r, status, body, NULL);
    }
    svc_msg_free(m);
    return send_err(h, c, r, 405, "", "method not allowed");
}

/* The paths without a parameter, any method but the ones served. */
static bool known_path(const char *url)
{
    static const char *const P[] = { "/readyz", "/metrics", "/v1/cluster", "/v1/events", "/v1/events/stream",
                                     "/healthz", "/", "/v1/tenants", NULL };
    int i;

    for (i = 0; P[i] != NULL; i++)
        if (strcmp(url, P[i]) == 0)
            return true;
    return false;
}

static enum MHD_Result route(svc_http_t *h, struct MHD_Connection *c, rq_t *r, const char *url,
                             const char *method)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;

    r->rt = route_id(url, get, post, del);
    if (strcmp(url, "/healthz") == 0 && get)
        return reply(h, c, r, 200, strdup("{\"ok\":true}"), NULL);
    if (strcmp(url, "/") == 0 && get)
        return reply(h, c, r, 200, status_page(), "text/html; charset=utf-8");
    if (strcmp(url, "/v1/events") == 0 && get)
        return long_poll(h, c, r);
    if (strncmp(url, "/extender/", 10) == 0) {   /* kube-scheduler (ext_worker.c) */
        if (!post)
            return send_err(h, c, r, 405, "", "method not allowed");
        if (!token_ok(h->d, c))
            return send_err(h, c, r, 401, "Authorization", "a valid bearer token is required");
        if (r->b.too_big)
            return send_err(h, c, r, 413, "", "the body is too large");
        return via_worker(h, c, r, url + 10, svc_ext_workers_push);   /* it may wait on the loop and the API server */
    }
    if (strncmp(url, "/dra/", 5) == 0) {   /* --dra: the admission webhook, status (dra_hook.c) */
        char verb[96];

        if (r->b.too_big)
            return send_err(h, c, r, 413, "", "the body is too large");
        snprintf(verb, sizeof(verb), "%s %.64s", method, url + 5);
        return via_worker(h, c, r, verb, svc_dra_push);
    }
    if (strcmp(url, "/v1/events/stream") == 0 && get)
        return events_stream(h, c, r);
    if ((strcmp(url, "/readyz") == 0 || strcmp(url, "/metrics") == 0 || strcmp(url, "/v1/cluster") == 0 ||
         strcmp(url, "/v1/tenants") == 0) && get) {
        svc_msg_t *m = calloc(1, sizeof(*m));

        if (m == NULL)
            return send_err(h, c, r, 500, "", "out of memory");
        m->kind = url[1] == 'r' ? SVC_M_READY : url[1] == 'm' ? SVC_M_METRICS
                : url[4] == 't' ? SVC_M_TENANTS : SVC_M_CLUSTER;
        return via_loop(h, c, r, m);
    }
    if (strcmp(url, "/v1/jobs") == 0 && (post || get))
        return jobs(h, c, r, post);
    if (strcmp(url, "/v1/jobs") == 0 || (known_path(url) && !get))
        return send_err(h, c, r, 405, "", "method not allowed");
    if (strncmp(url, "/v1/jobs/", 9) == 0)
        return job(h, c, r, url, get, post, del);
    return send_err(h, c, r, 404, "", "no such endpoint");
}

enum MHD_Result svc_http_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    svc_http_t *h = cls;
    rq_t *r = *con_cls;

    (void)version;
    if (r == NULL) {
        if ((r = calloc(1, sizeof(*r))) == NULL)
            return MHD_NO;
        r->t0 = mono(h);
        r->h = h;
        r->c = c;
        *con_cls = r;
        atomic_fetch_add(&h->inflight, 1);
        ms_http_guard_headers(c);   /* the body has its own deadline */
        return MHD_YES;
    }
    if (r->phase != RQ_ROUTE)
        return resumed(h, c, r);
    if (*upload_size > 0) {
        /* kube-scheduler's filter lists every feasible node: the extender's
         * limit is sized for the largest cluster, the job API's stays small */
        long limit = strncmp(url, "/extender/", 10) == 0 ? h->d->cfg->ext_max_body : h->d->cfg->max_body;

        if (ms_http_body_add(&r->b, upload, *upload_size, (size_t)limit) != 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    ms_http_guard_request(c);   /* in whole: its answer may wait as long as it must */
    return route(h, c, r, url, method);
}

void svc_http_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    svc_http_t *h = cls;
    rq_t *r = *con_cls;

    (void)toe;
    ms_http_guard_completed(c);   /* kept alive: the next request's deadlines */
    if (r != NULL) {   /* never while suspended (the header comment) */
        atomic_fetch_sub(&h->inflight, 1);
        ms_http_body_free(&r->b);
        svc_msg_free(r->m);   /* answered, but the client went away first */
        free(r->verb);
        free(r->job.out);
        free(r);
        *con_cls = NULL;
    }
}
