/* handlers.c - the loop thread: the message table (svc.h) and the handlers
 * of the job API. Each handler is given the batch's `now` and answers its
 * message (svc_reply_*); the answer travels once the batch is durable
 * (syncer.c). The extender's messages are ext_loop.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender.h"
#include "service/svc.h"
#include "service/tenants.h"

static bool always(const svc_msg_t *m)
{
    (void)m;
    return true;
}

const svc_msg_kind_info_t svc_msg_kinds[SVC_M_N] = {
    [SVC_M_SUBMIT] = { "submit", svc_h_submit, NULL },
    [SVC_M_LIST] = { "list", svc_h_list, always },
    [SVC_M_CANCEL] = { "cancel", svc_h_cancel, NULL },
    [SVC_M_DONE] = { "done", svc_h_done, NULL },
    [SVC_M_CLUSTER] = { "cluster", svc_h_cluster, always },
    [SVC_M_METRICS] = { "metrics", svc_h_metrics, always },
    [SVC_M_READY] = { "ready", svc_h_ready, always },
    [SVC_M_OPRESULT] = { "opresult", svc_h_opresult, NULL },
    [SVC_M_EXT] = { "ext", svc_ext_handle, svc_ext_is_read },
    [SVC_M_HEALTH] = { "health", svc_h_health, NULL },
    [SVC_M_TENANTS] = { "tenants", svc_h_tenants, always },
    [SVC_M_TENSET] = { "tenset", svc_h_tenset, NULL },
};

void svc_handle(svc_t *d, svc_msg_t *m, double now)
{
    if (m->kind <= 0 || m->kind >= SVC_M_N || svc_msg_kinds[m->kind].handle == NULL) {
        svc_reply_err(m, 500, "", "unknown message");
        return;
    }
    if (svc_redo_refuses(d, m)) {
        if (m->kind == SVC_M_EXT)
            svc_ext_refuse(m, "migsched: the store cannot write (is the disk full?); retry later");
        else
            svc_reply_err(m, 503, "", "the store cannot write (is the disk full?); retry later");
        return;
    }
    svc_msg_kinds[m->kind].handle(d, m, now);
}

static void gen_id(svc_t *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%06" PRIu64, d->id_prefix, ++d->id_counter);
}

/* A new job for m's request (its strings move into the job); NULL out of
 * memory (answered). */
static svc_job_t *new_job(svc_t *d, svc_msg_t *m, double now)
{
    svc_job_t *j;
    char idbuf[64];

    if (m->id == NULL) {
        do
            gen_id(d, idbuf, sizeof(idbuf));
        while (svc_jobs_find(&d->jobs, idbuf) != NULL);
    }
    if ((j = calloc(1, sizeof(*j))) == NULL || (j->id = strdup(m->id != NULL ? m->id : idbuf)) == NULL) {
        free(j);
        svc_reply_err(m, 500, "", "out of memory");
        return NULL;
    }
    j->body = m->canon;
    m->canon = NULL;
    j->req = m->req;
    memset(&m->req, 0, sizeof(m->req));
    j->slot = -1;
    j->place.node = -1;
    j->submit_t = now;
    j->state = MS_JOB_QUEUED;
    return j;
}

static const char *const MODE_NAME[] = { "mig", "timeslice", "whole" };

/* What r resolves to on this cluster, as the reply's "resolved_to" (a
 * size rounds up: the reply says to what; issue 20, defect 19): NULL when
 * out of memory or when the library has nothing to say. */
static char *resolved_to(svc_t *d, const ms_sched_req_t *r)
{
    ms_sched_resolution_t res;
    ms_diag_t diag;
    json_t *a;
    char *s;
    int i;

    ms_diag_clear(&diag);
    if (ms_sched_resolve_req(d->sched, r, &res, &diag) != MS_OK || (a = json_array()) == NULL)
        return NULL;
    for (i = 0; i < res.n && i < (int)(sizeof(res.on) / sizeof(res.on[0])); i++)
        json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:b}", "model", res.on[i].model, "sharing",
                                           (unsigned)res.on[i].mode < 3 ? MODE_NAME[res.on[i].mode] : "?",
                                           "profile", res.on[i].profile, "rounded", res.on[i].rounded));
    s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

void svc_h_submit(svc_t *d, svc_msg_t *m, double now)
{
    svc_job_t *j;
    ms_sched_req_t r;
    ms_diag_t diag;
    ms_status_t st;
    int32_t slot = -1;

    if (m->id != NULL && (j = svc_jobs_find(&d->jobs, m->id)) != NULL) {
        if (strcmp(j->body, m->canon) == 0)
            svc_reply_view(m, 200, j);
        else
            svc_reply_err(m, 409, "id", "a job with this id exists with another request");
        return;
    }
    if (!svc_tenant_declared(d, m->req.tenant)) {   /* docs/tenants.md, "migschedd" */
        svc_reply_err(m, 422, "tenant", "no tenant of this name is declared (tenant = NAME:... in the "
                                        "configuration, or --tenant)");
        return;
    }
    if ((j = new_job(d, m, now)) == NULL)
        return;
    if (svc_table_reserve(d) != 0) {   /* before the scheduler has the job */
        svc_reply_err(m, 500, "", "out of memory");
        svc_job_free(j);
        return;
    }
    svc_job_sched_req(j, &r);
    ms_diag_clear(&diag);
    /* larger than its tenant's limits on every GPU: it would wait for ever
     * (a bad request is left to submit's own answer) */
    if (ms_sched_tenant_check(d->sched, &r, &diag) == MS_ENOFIT) {
        svc_reply_err(m, 422, "tenant", diag.msg);
        svc_job_free(j);
        return;
    }
    ms_diag_clear(&diag);
    d->loop.submitting = j;
    st = ms_sched_submit(d->sched, &r, now, &slot, &diag);
    d->loop.submitting = NULL;
    if (st != MS_OK && slot < 0) {
        /* 400: malformed; 422: well-formed, but this cluster cannot host it
         * (docs/api.md, "Errors"). The profile's syntax was checked when the
         * body was parsed (svc_profile_syntax): a profile the library
         * refuses now is one this cluster lacks ("1g+me" where no GPU has
         * +me profiles), a 422. */
        bool here = st == MS_ENOFIT || st == MS_ENOENT || (st == MS_EINVAL && strcmp(diag.field, "profile") == 0);

        svc_reply_err(m, here ? 422 : 400, diag.field[0] ? diag.field : "profile",
                      diag.msg[0] ? diag.msg : ms_strerror(st));
        svc_job_free(j);
        return;
    }
    svc_table_add(d, j, slot);
    svc_after_call(d, j, st, "submit");
    svc_job_sync(d, j, now);   /* insert: gets its seq */
    svc_reply_view(m, 201, j);
    if (m->rjob == j)
        m->rview.resolved = resolved_to(d, &r);
}

static bool label_match(svc_job_t *j, const char *kv)
{
    const char *eq = strchr(kv, '='), *v;
    char key[64];

    if (eq == NULL || (size_t)(eq - kv) >= sizeof(key))
        return false;
    if (j->req.labels == NULL) {   /* loaded from the store's columns: from the body, once */
        json_error_t je;
        json_t *b = json_loads(j->body, 0, &je), *l = json_object_get(b, "labels");

        if (json_is_object(l))
            j->req.labels = json_incref(l);
        json_decref(b);
    }
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    v = json_string_value(json_object_get(j->req.labels, key));
    return v != NULL && strcmp(v, eq + 1) == 0;
}

/* The list's filters: the state wanted (-1 any) and the first table index
 * after the cursor; false when m is answered (a bad filter). */
static bool list_from(svc_t *d, svc_msg_t *m, int *want, size_t *lo)
{
    uint64_t after = 0;
    size_t hi = d->jobs.n;
    char *end;
    int k;

    *want = -1;
    *lo = 0;
    if (m->q_state != NULL) {
        for (k = 0; k < MS_JOB_NSTATES; k++)
            if (strcmp(ms_job_state_name((ms_job_state_t)k), m->q_state) == 0)
                *want = k;
        if (*want < 0) {
            svc_reply_err(m, 400, "state",
                          "queued, reserved, starting, running, migrating, done, cancelled or failed");
            return false;
        }
    }
    if (m->q_cursor != NULL) {
        /* digits only: strtoull takes "-1" (as 2^64 - 1), " 5" and "+5" */
        errno = 0;
        after = strtoull(m->q_cursor, &end, 10);
        if (!(*m->q_cursor >= '0' && *m->q_cursor <= '9') || *end != '\0' || errno != 0) {
            svc_reply_err(m, 400, "cursor", "the cursor must be a value of \"next\" from an earlier page");
            return false;
        }
    }
    while (*lo < hi) {   /* the first job with seq > after */
        size_t mid = *lo + (hi - *lo) / 2;

        if (d->jobs.v[mid]->seq <= after)
            *lo = mid + 1;
        else
            hi = mid;
    }
    return true;
}

/* Written as text (svc_job_render): a page is up to 1,000 jobs. */
void svc_h_list(svc_t *d, svc_msg_t *m, double now)
{
    ms_jtext_t t = { 0 };
    size_t lo, i;
    long n = 0, limit = m->q_limit > 0 ? m->q_limit : 100;
    int want;
    bool more = false;

    (void)now;
    if (!list_from(d, m, &want, &lo))
        return;
    ms_jtext_raw(&t, "{\"jobs\":[");
    for (i = lo; i < d->jobs.n; i++) {
        svc_job_t *j = d->jobs.v[i];
        svc_jview_t v;

        if (want >= 0 && j->state != want)
            continue;
        if (m->q_label != NULL && !label_match(j, m->q_label))
            continue;
        if (n == limit) {
            more = true;
            break;
        }
        if (n > 0)
            ms_jtext_raw(&t, ",");
        svc_jview_now(j, &v);
        svc_job_render(&t, j->id, j->body, &v, d->be);
        n++;
    }
    ms_jtext_raw(&t, "],\"next\":");
    if (more) {   /* the cursor (a string): the next page starts after v[i - 1] */
        ms_jtext_raw(&t, "\"");
        ms_jtext_int(&t, (long long)d->jobs.v[i - 1]->seq);
        ms_jtext_raw(&t, "\"");
    } else
        ms_jtext_raw(&t, "null");
    ms_jtext_raw(&t, "}");
    m->status = 200;
    if ((m->body = ms_jtext_take(&t)) == NULL)
        svc_reply_err(m, 500, "", "out of memory");
}

void svc_h_cancel(svc_t *d, svc_msg_t *m, double now)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, m->id);
    ms_status_t st;

    if (j == NULL) {
        svc_reply_err(m, 404, "id", "no such job");
        return;
    }
    if (!svc_job_terminal(j->state) && j->slot >= 0) {
        if (j->state == MS_JOB_STARTING || j->state == MS_JOB_MIGRATING) {
            svc_reply_err(m, 409, "state", "the job's instance is being set up; retry in a moment");
            return;
        }
        st = ms_sched_cancel(d->sched, j->slot, now);
        svc_after_call(d, j, st, "cancel");
        svc_job_sync(d, j, now);
    }
    svc_reply_view(m, 200, j);
}

void svc_h_done(svc_t *d, svc_msg_t *m, double now)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, m->id);
    ms_status_t st;

    if (j == NULL) {
        svc_reply_err(m, 404, "id", "no such job");
        return;
    }
    if (j->state == MS_JOB_DONE) {
        svc_reply_view(m, 200, j);
        return;
    }
    if (j->state != MS_JOB_RUNNING || j->slot < 0) {
        svc_reply_err(m, 409, "state", "only a running job can be done");
        return;
    }
    st = ms_sched_finished(d->sched, j->slot, now);
    svc_after_call(d, j, st, "finished");
    svc_job_sync(d, j, now);
    svc_reply_view(m, 200, j);
}

void svc_h_cluster(svc_t *d, svc_msg_t *m, double now)
{
    (void)now;
    svc_reply_json(m, 200, svc_cluster_json(d));
}

void svc_h_metrics(svc_t *d, svc_msg_t *m, double now)
{
    (void)now;
    m->status = 200;
    m->ctype = "text/plain; version=0.0.4; charset=utf-8";
    if ((m->body = svc_metrics_text(d)) == NULL)
        svc_reply_err(m, 500, "", "out of memory");
}

/* A standby is alive but not ready: a Service sends its traffic,
 * kube-scheduler's extender calls included, to the leader only. */
void svc_h_ready(svc_t *d, svc_msg_t *m, double now)
{
    bool serving = svc_ext_serving(d), store = !d->loop.store_down, ready = d->ready && serving && store;

    (void)now;
    svc_reply_json(m, ready ? 200 : 503,
                   json_pack("{s:b,s:b,s:b,s:I}", "ready", ready, "leader", serving, "store", store,
                             "pending_ops", (json_int_t)ms_sched_pending(d->sched)));
}

void svc_h_opresult(svc_t *d, svc_msg_t *m, double now)
{
    static const char *const RES[] = { "done", "failed", "discarded" };
    ms_status_t st = MS_OK;
    int k = m->op_kind >= 1 && m->op_kind <= MS_OP_STOP ? m->op_kind : 0;

    (void)svc_redo_op_result(d, m->plan_id, m->idx, RES[m->result], now);
    d->met.ops[k][m->result]++;
    if (k == MS_OP_MOVE && m->result < 2)
        d->met.migrations[m->op_bbm ? 1 : 0][m->result]++;
    if (m->result == 0) {
        st = ms_sched_op_done(d->sched, m->op_id, now);
    } else if (m->result == 1) {
        /* plans made from here on come after the failure: the executor runs
         * them (those made before are discarded, and op_failed rolls them back) */
        pthread_mutex_lock(&d->exec.mu);
        d->exec.epoch++;
        pthread_mutex_unlock(&d->exec.mu);
        if (m->refused)   /* the backend's truth first: the pass after the rollback sees it */
            svc_gpu_reconcile(d, m->gpu, now);
        st = ms_sched_op_failed(d->sched, m->op_id, now);
    }
    if (m->job != NULL) {
        m->job->inflight--;
        svc_loop_mark(d, m->job);
    }
    if (st != MS_OK && st != MS_ENOENT)
        ms_log("error", "op outcome", json_pack("{s:s}", "status", ms_status_name(st)));
}
