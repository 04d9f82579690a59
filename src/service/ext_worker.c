/* ext_worker.c - the extender workers: the threads that run kube-scheduler's
 * calls (POST /extender/{filter,prioritize,bind}), which may wait on the
 * loop and, with --kube, on the API server (ext_bind.c); the HTTP thread
 * that took the request has suspended its connection meanwhile, and the
 * request's done callback resumes it. svc_ext_workers_start/stop run on the
 * main thread, svc_ext_workers_push on an HTTP thread.
 *
 * Two pools with their own queues: FILTERS threads for filter and
 * prioritize (they only wait on the loop), BINDS threads for binds (a
 * --kube bind waits up to 8 s for its instance, then on the API server).
 * A filter that picked victims to evict (--preempt) evicts them after its
 * answer, on its thread (ext_evict.c: at most two API calls per victim,
 * each within 5 s). A bind never holds a thread that a filter needs (issue 25: two shared
 * threads held by two slow binds delayed every filter behind them);
 * kube-scheduler binds pods in parallel (its binding cycles run in their
 * own goroutines), so BINDS of them wait at once before a bind queues.
 */
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"

#define FILTERS 2
#define BINDS 16

typedef struct pool {
    svc_queue_t q;                 /* svc_ext_job_t */
    svc_t *d;
    int n;
    bool init;
    pthread_t th[BINDS > FILTERS ? BINDS : FILTERS];
} pool_t;

struct svc_ext_workers {
    pool_t filters, binds;
};

/* One call: parse, route, answer (*status, *out malloc'd). Returns a
 * filter's message when it picked victims to evict (ext_preempt.c), for
 * after the answer, else NULL. */
static ext_msg_t *serve(svc_t *d, const char *verb, const char *body, size_t len, int *status, char **out)
{
    ext_msg_t *e = svc_ext_msg_new(0);
    svc_err_t err;
    int rc;

    *out = NULL;
    if (e == NULL) {
        *status = 500;
        return NULL;
    }
    memset(&err, 0, sizeof(err));
    if (!svc_ext_serving(d)) {
        /* a standby (its /readyz says 503, so a Service sends nothing here) */
        svc_ext_msg_free(e);
        svc_err_set(&err, 503, "", "migsched: this replica is a standby; the leader serves the extender");
        *status = err.code;
        *out = svc_err_body(&err);
        return NULL;
    }
    if (strcmp(verb, "filter") == 0 || strcmp(verb, "prioritize") == 0) {
        e->verb = verb[0] == 'f' ? EXT_FILTER : EXT_PRIORITIZE;
        rc = svc_ext_parse_args(body, len, d->cfg->k8s_tenant_label, &e->args, &err);
    } else if (strcmp(verb, "bind") == 0) {
        e->verb = EXT_BIND;
        rc = svc_ext_parse_bind(body, len, &e->bind, &err);
    } else {
        svc_err_set(&err, 404, "", "no such extender verb (filter, prioritize, bind)");
        rc = -1;
    }
    if (rc != 0) {
        svc_ext_msg_free(e);
        *status = err.code;
        *out = svc_err_body(&err);
        return NULL;
    }
    if (e->verb == EXT_BIND && d->kube != NULL) {
        svc_ext_kube_bind(d, e, status, out);   /* frees e */
        return NULL;
    }
    e = svc_ext_call(d, e, status, out);
    if (e != NULL && e->nevict > 0)
        return e;
    svc_ext_msg_free(e);
    return NULL;
}

static void *worker_main(void *arg)
{
    pool_t *w = arg;
    svc_qlink_t *l;

    /* the requests queued before the stop are still served */
    while ((l = svc_queue_pop(&w->q)) != NULL) {
        svc_ext_job_t *j = SVC_QITEM(l, svc_ext_job_t, link);

        ext_msg_t *later;

        j->status = 500;
        later = serve(w->d, j->verb, j->body != NULL ? j->body : "", j->len, &j->status, &j->out);
        j->done(j);   /* j is its owner's again */
        if (later != NULL)
            svc_ext_evict(w->d, later);   /* kube-scheduler has its answer */
    }
    return NULL;
}

static void pool_stop(pool_t *p)
{
    int i;

    if (!p->init)
        return;
    svc_queue_close(&p->q);
    for (i = 0; i < p->n; i++)
        pthread_join(p->th[i], NULL);
    svc_queue_destroy(&p->q);
    p->init = false;
}

static int pool_start(pool_t *p, svc_t *d, int n)
{
    if (svc_queue_init(&p->q) != 0)
        return -1;
    p->init = true;
    p->d = d;
    for (p->n = 0; p->n < n; p->n++)
        if (pthread_create(&p->th[p->n], NULL, worker_main, p) != 0)
            return -1;
    return 0;
}

int svc_ext_workers_start(svc_t *d)
{
    struct svc_ext_workers *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return -1;
    d->workers = w;
    if (pool_start(&w->filters, d, FILTERS) != 0 || pool_start(&w->binds, d, BINDS) != 0) {
        svc_ext_workers_stop(d);
        return -1;
    }
    return 0;
}

void svc_ext_workers_stop(svc_t *d)
{
    struct svc_ext_workers *w = d->workers;

    if (w == NULL)
        return;
    pool_stop(&w->filters);
    pool_stop(&w->binds);
    free(w);
    d->workers = NULL;
}

int svc_ext_workers_push(svc_t *d, svc_ext_job_t *j)
{
    struct svc_ext_workers *w = d->workers;

    if (w == NULL)
        return -1;
    /* the verb is the URL's: anything but a bind (an unknown verb's 404
     * too) goes to the filters' pool */
    return svc_queue_push(strcmp(j->verb, "bind") == 0 ? &w->binds.q : &w->filters.q, &j->link);
}
