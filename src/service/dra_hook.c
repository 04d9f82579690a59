/* dra_hook.c - the webhook worker: the /dra/ requests the HTTP threads
 * hand over (their connections suspended meanwhile), because an answer
 * may wait on the DRA loop and on the API server:
 *   POST /dra/webhook   the mutating admission webhook (AdmissionReview
 *                       v1): a pod whose claims ask for a device of a
 *                       managed driver gets our scheduling gate. The loop
 *                       answers from what the watches delivered; a
 *                       template or claim it has not seen yet is read from
 *                       the API server once (one that cannot be read: no
 *                       gate; the pod cannot start without it anyway).
 *                       Every replica answers it, leader or not. The
 *                       answer comes within --dra-webhook-timeout of the
 *                       request, loop and API server included: late, the
 *                       pod is admitted unchanged, as failurePolicy Ignore
 *                       would at the API server's timeout (an ungated pod
 *                       only waits, fenced, until the allocator sees it);
 *                       with no loop at all (stopping) it is gated.
 *   GET /dra/status     the allocator's counts and gate-to-allocation
 *                       latency as JSON
 *   GET /dra/readyz     200 once every kind was listed (the webhook can
 *                       answer), else 503
 * svc_dra_push runs on the HTTP thread that queues the request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "kube/kube.h"
#include "service/dra_int.h"

static char *err_body(const char *msg)
{
    json_t *o = json_pack("{s:{s:s}}", "error", "message", msg);
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);   /* json_dumps does not take it: every error answer leaked it */
    return s;
}

static long left_ms(double deadline)
{
    double left = deadline - ms_clock_mono();

    return left <= 0 ? 0 : (long)(left * 1000) + 1;
}

/* Fetch what the loop did not know ("t/NAME": a template, "c/NAME": a
 * claim, in namespace ns) within the deadline, and hand it to the loop. */
static void fetch(svc_dra_t *x, const char *ns, const char *ref, double deadline)
{
    bool tmpl = ref[0] == 't';
    char *path;
    char err[256], *text = NULL;
    long status = 0, ms = left_ms(deadline);
    json_t *o;
    int epoch;

    if (ms <= 0)
        return;
    path = dra_strf("/apis/resource.k8s.io/v1/namespaces/%s/%s/%s", ns,
                    tmpl ? "resourceclaimtemplates" : "resourceclaims", ref + 2);
    if (path == NULL)
        return;
    if (ms_kube_request_within(x->d->kube, "GET", path, NULL, ms, &status, &text, err, sizeof(err)) == 0 &&
        status == 200 && (o = json_loads(text, 0, NULL)) != NULL) {
        epoch = 1 << 30;   /* as new as any list: a relist that lacks it drops it */
        dra_watch_event(x, tmpl ? DRA_K_TMPL : DRA_K_CLAIM, "ADDED", o, &epoch);
        json_decref(o);
    }
    free(text);
    free(path);
}

/* Ask the loop whether the pod (the review in body) needs our gate: 1
 * gate, 0 not, -1 some references are unknown (*out's unknown), -2 no
 * loop, -3 no answer by the deadline (the loop keeps the question and
 * frees it; *out is NULL). The message owns its own parse of the review,
 * so that a question left behind never points into this thread's memory. */
static int ask(svc_dra_t *x, const char *body, size_t len, double deadline, dra_msg_t **out)
{
    dra_msg_t *m = calloc(1, sizeof(*m));
    char why[300];
    double left = deadline - ms_clock_mono();
    int rc;

    *out = m;
    if (m == NULL)
        return -2;
    m->kind = DRA_M_HOOK;
    m->okind = -1;
    if ((m->review = calloc(1, sizeof(*m->review))) == NULL ||
        dra_parse_review(body, len, m->review, why, sizeof(why)) != 0) {
        free(m->review);   /* parsed once already: only out of memory fails here */
        m->review = NULL;
        return -2;
    }
    if (left <= 0)
        return -3;   /* never queued: freed by the caller */
    rc = dra_call_within(x, m, left);
    if (rc == 1) {
        *out = NULL;
        return -3;
    }
    if (rc != 0)
        return -2;
    if (m->gate)
        return 1;
    return m->nunknown > 0 ? -1 : 0;
}

static void webhook(svc_dra_t *x, const char *body, size_t len, double deadline, int *status, char **out)
{
    dra_review_t rv;
    dra_msg_t *m = NULL;
    char why[300];
    int rc, i;

    if (dra_parse_review(body, len, &rv, why, sizeof(why)) != 0) {
        *status = 400;
        *out = err_body(why);
        return;
    }
    rc = rv.is_pod_create && rv.pod.npc > 0 ? ask(x, body, len, deadline, &m) : 0;
    if (rc == -1) {   /* read what the loop has not seen, then ask again */
        for (i = 0; i < m->nunknown; i++)
            fetch(x, rv.pod.ns, m->unknown[i], deadline);
        dra_msg_free(m);
        rc = ask(x, body, len, deadline, &m);
        /* a template or claim that does not exist: the pod cannot start
         * anyway, and not because of us */
        if (rc == -1)
            rc = 0;
    }
    dra_msg_free(m);
    if (rc == -3) {
        /* Late: answered as the API server would answer for us at its own
         * timeout (failurePolicy: Ignore), but before it, so admission never
         * waits out timeoutSeconds and this worker is free for the next
         * request. The pod goes ungated; the fence keeps kube-scheduler off
         * managed devices, and the leader decides for it when the loop
         * gets to it (gated or not). */
        atomic_fetch_add(&x->hook_late, 1);
        ms_log("warn", "dra: webhook answered without the allocator (deadline passed): pod admitted unchanged",
               json_pack("{s:s?,s:s?,s:f}", "namespace", rv.pod.ns, "pod", rv.pod.name, "timeout_s",
                         x->cfg->hook_timeout_s));
        rc = 0;
    }
    *status = 200;
    *out = dra_out_review(&rv, rc != 0);   /* -2 (stopping): gated, the safe answer */
    dra_review_free(&rv);
}

static void status_json(svc_dra_t *x, double deadline, int *status, char **out)
{
    dra_msg_t *m = calloc(1, sizeof(*m));
    double left = deadline - ms_clock_mono();
    int rc = -1;

    if (m != NULL && left > 0) {
        m->kind = DRA_M_STATUS;
        m->okind = -1;
        rc = dra_call_within(x, m, left);
        if (rc == 1)
            m = NULL;   /* the loop's now */
    }
    if (rc != 0 || m->body == NULL) {
        *status = 503;
        *out = err_body(rc == 1 ? "the allocator did not answer in time" : "the allocator is not running");
    } else {
        *status = 200;
        *out = m->body;
        m->body = NULL;
    }
    dra_msg_free(m);
}

void dra_hook_serve(svc_dra_t *x, const char *verb, const char *body, size_t len, double deadline, int *status,
                    char **out)
{
    *out = NULL;
    if (strcmp(verb, "POST webhook") == 0) {
        webhook(x, body, len, deadline, status, out);
    } else if (strcmp(verb, "GET status") == 0) {
        status_json(x, deadline, status, out);
    } else if (strcmp(verb, "GET readyz") == 0) {
        bool ok = atomic_load(&x->synced_kinds) == (1 << DRA_K_N) - 1;

        *status = ok ? 200 : 503;
        *out = ok ? strdup("{\"ok\":true}") : err_body("not every kind has been listed yet");
    } else if (strncmp(verb, "POST ", 5) == 0 || strncmp(verb, "GET ", 4) == 0) {
        *status = 404;
        *out = err_body("no such endpoint (POST /dra/webhook, GET /dra/status, GET /dra/readyz)");
    } else {
        *status = 405;
        *out = err_body("method not allowed");
    }
}

/* A request queued for the worker, with when it came: its deadline runs
 * from there, so requests queued behind a slow one are not late twice. */
typedef struct hook_item {
    svc_qlink_t link;
    svc_ext_job_t *job;
    double t_recv;                 /* ms_clock_mono() */
} hook_item_t;

/* An HTTP thread's: hand a /dra/ request to the worker. */
int svc_dra_push(svc_t *d, svc_ext_job_t *j)
{
    hook_item_t *it;

    if (d->dra == NULL || (it = calloc(1, sizeof(*it))) == NULL)
        return -1;
    it->job = j;
    it->t_recv = ms_clock_mono();
    if (svc_queue_push(&d->dra->hq, &it->link) != 0) {
        free(it);
        return -1;
    }
    return 0;
}

void *dra_hook_main(void *arg)
{
    svc_dra_t *x = arg;
    svc_qlink_t *l;

    while ((l = svc_queue_pop(&x->hq)) != NULL) {
        hook_item_t *it = SVC_QITEM(l, hook_item_t, link);
        svc_ext_job_t *j = it->job;

        dra_hook_serve(x, j->verb, j->body, j->len, it->t_recv + x->cfg->hook_timeout_s, &j->status, &j->out);
        free(it);
        j->done(j);
    }
    return NULL;
}
