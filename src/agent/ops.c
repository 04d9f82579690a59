/* ops.c - what the agent's endpoints do, on the backend, under a->mu, on
 * the thread of the request's connection (ag_reconcile: main, at start-up).
 *
 * The backend (src/backend/, the same code as migschedd's) executes; this
 * file checks first what
 * the sim would not (a legal start, free slices, MIG enabled: the sim
 * trusts its scheduler, the agent trusts no caller), makes retries
 * harmless, and keeps the CDI directory equal to the inventory after every
 * change.
 *
 * Idempotency (docs/agent.md):
 *   POST /v1/instances: an instance of that profile at (gpu, start) running
 *     that job (or idle, for a create without job) is the answer to a
 *     retried create: 200 with it, nothing created. An idle one of that
 *     profile there is tagged with the job (a create cut short between the
 *     GI and the tag): 201. Anything else there is 409.
 *   DELETE /v1/instances/UUID: an instance that does not exist is already
 *     deleted: 200 with "deleted": false. A 404 would make a client that
 *     retries a DELETE whose answer it lost see an error for a success.
 *   POST /v1/ops: an op whose effect the inventory already shows is done
 *     (migschedd's agent backend resends an op once after a transport error).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

static char *dump(json_t *o)
{
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return s;
}

static char *fail(const ag_err_t *e, int *status)
{
    *status = e->code;
    return ag_err_body(e);
}

static json_t *inst_json(const ag_t *a, const ms_binst_t *in)
{
    const ms_profile_t *p = ms_geom_profile(a->geom[in->gpu], in->prof);

    return json_pack("{s:i,s:s,s:i,s:s,s:s,s:s}", "gpu", (int)in->gpu, "profile", p->name, "start",
                     (int)in->start, "uuid", in->uuid, "job", in->job, "gpu_uuid",
                     ms_backend_gpu_uuid(a->be, in->gpu));
}

static json_t *insts_json(const ag_t *a, const ms_binst_t *inv, int n)
{
    json_t *arr = json_array();
    int i;

    for (i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr, inst_json(a, &inv[i])) != 0) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}

/* The index in inv of the MIG instance at (gpu, start), -1 none. */
static int at(const ms_binst_t *inv, int n, int gpu, int start)
{
    int i;

    for (i = 0; i < n; i++)
        if (inv[i].gpu == gpu && inv[i].start == start)
            return i;
    return -1;
}

/* The profile index of name on gpu, or -1 with e set. */
static int profile_of(const ag_t *a, int gpu, const char *name, ag_err_t *e)
{
    int k = ms_geom_profile_find(a->geom[gpu], name);

    if (k < 0)
        ag_err_set(e, 400, "invalid", "profile", "GPU %d (%s) has no profile '%s'", gpu, a->model[gpu], name);
    return k;
}

/* Can profile k be created at start on gpu, given the inventory? */
static int placeable(const ag_t *a, const ms_binst_t *inv, int n, int gpu, int k, int start, ag_err_t *e)
{
    const ms_geom_t *g = a->geom[gpu];
    const ms_profile_t *p = ms_geom_profile(g, k);
    ms_state_t s = ms_geom_empty_state();
    int i;

    if (!a->mig[gpu]) {
        ag_err_set(e, 409, "mig-disabled", "gpu",
                   "GPU %d: MIG is disabled; the agent never changes MIG mode", gpu);
        return -1;
    }
    if (((p->start_mask >> start) & 1u) == 0) {
        ag_err_set(e, 400, "invalid", "start", "%s cannot start at memory slice %d on GPU %d (%s; legal starts mask 0x%x)",
                   p->name, start, gpu, a->model[gpu], (unsigned)p->start_mask);
        return -1;
    }
    for (i = 0; i < n; i++)
        if (inv[i].gpu == gpu && inv[i].start >= 0 &&
            (s = ms_state_place(g, s, inv[i].prof, inv[i].start)) == MS_STATE_NONE) {
            ag_err_set(e, 500, "inconsistent", "", "GPU %d: the inventory is not a valid layout", gpu);
            return -1;
        }
    if (ms_state_place(g, s, k, start) == MS_STATE_NONE) {
        ag_err_set(e, 409, "insufficient-resources", "start",
                   "insufficient resources: GPU %d has no room for %s at %d (its slices are taken, or its "
                   "compute or the profile's count is exhausted)", gpu, p->name, start);
        return -1;
    }
    return 0;
}

/* The backend's refusal of a placement, or of an op the instance's state
 * does not allow (destroying one that runs a job, starting on one that is
 * not idle), is the caller's problem (409); any other failure ours (500),
 * with reason "gpu-lost" when the GPU failed (migschedd marks it
 * unhealthy). */
static void backend_failed(ms_status_t st, const ms_diag_t *why, ag_err_t *e)
{
    if (st == MS_ENOFIT)
        ag_err_set(e, 409, "insufficient-resources", "", "%s", why->msg);
    else if (ms_backend_fault(st, why) == MS_BF_GPU)
        ag_err_set(e, 500, MS_BACKEND_GPU_LOST, "", "%s", why->msg);
    else if (st == MS_ESTATE || st == MS_EEXIST || st == MS_ENOENT)
        ag_err_set(e, 409, "conflict", "", "%s", why->msg);
    else
        ag_err_set(e, 500, "backend", "", "%s", why->msg);
}

static int run(ag_t *a, ms_op_kind_t kind, int gpu, int start, int prof, const char *job, ag_err_t *e)
{
    ms_backend_op_t op;
    ms_diag_t why;
    ms_status_t st;

    memset(&op, 0, sizeof(op));
    op.op.kind = kind;
    op.op.gpu = gpu;
    op.op.start = (int8_t)start;
    op.op.prof = (int8_t)prof;
    op.job = job;
    op.profile = prof >= 0 ? ms_geom_profile(a->geom[gpu], prof)->name : "";
    if ((st = ms_backend_run(a->be, &op, &why)) == MS_OK)
        return 0;
    backend_failed(st, &why, e);
    return -1;
}

/* Destroy the instance whatever runs on it (DELETE, reap, a half-made
 * create taken back). */
static int destroy(ag_t *a, const ms_binst_t *in)
{
    ms_backend_op_t op;
    ms_diag_t why;

    memset(&op, 0, sizeof(op));
    op.op.kind = MS_OP_DESTROY;
    op.op.gpu = in->gpu;
    op.op.start = in->start;
    op.op.prof = in->prof;
    op.job = in->job;
    op.profile = ms_geom_profile(a->geom[in->gpu], in->prof)->name;
    op.force = true;
    return ms_backend_run(a->be, &op, &why) == MS_OK ? 0 : -1;
}

/* After a change: the CDI directory follows the inventory. */
static void sync_cdi(ag_t *a)
{
    ms_binst_t *inv;
    int n;

    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK)
        return;
    if (ag_cdi_sync(a, inv, n, false) != 0)
        ms_log("error", "the CDI directory could not be brought in line with the inventory",
                json_pack("{s:s}", "dir", a->cfg->cdi_dir));
    free(inv);
}

char *ag_inventory(ag_t *a, int *status)
{
    ms_binst_t *inv;
    json_t *gpus = json_array(), *o;
    int n, g;

    pthread_mutex_lock(&a->mu);
    if (gpus == NULL || ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
        pthread_mutex_unlock(&a->mu);
        json_decref(gpus);
        *status = 500;
        return NULL;
    }
    for (g = 0; g < a->ngpus; g++)
        json_array_append_new(gpus, json_pack("{s:i,s:s,s:s,s:b}", "index", g, "uuid",
                                              ms_backend_gpu_uuid(a->be, g), "model", a->model[g], "mig",
                                              a->mig[g]));
    o = json_pack("{s:s,s:s,s:o,s:o}", "node", a->cfg->node_name, "backend", ms_backend_name(a->be), "gpus",
                  gpus, "instances", insts_json(a, inv, n));
    free(inv);
    pthread_mutex_unlock(&a->mu);
    *status = 200;
    return dump(o);
}

char *ag_create(ag_t *a, const ag_create_t *rq, int *status)
{
    ms_binst_t *inv = NULL;
    ag_err_t e;
    char *body = NULL;
    int n = 0, k, i;

    pthread_mutex_lock(&a->mu);
    if (rq->gpu >= a->ngpus) {
        ag_err_set(&e, 400, "invalid", "gpu", "this node has GPUs 0..%d", a->ngpus - 1);
        goto err;
    }
    if ((k = profile_of(a, rq->gpu, rq->profile, &e)) < 0)
        goto err;
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
        ag_err_set(&e, 500, "backend", "", "out of memory");
        goto err;
    }
    if ((i = at(inv, n, rq->gpu, rq->start)) >= 0) {
        if (inv[i].prof == k && strcmp(inv[i].job, rq->job) == 0) {
            a->st.create_existing++;
            *status = 200;   /* a retried create: the instance it made */
            body = dump(inst_json(a, &inv[i]));
            goto out;
        }
        if (inv[i].prof == k && inv[i].job[0] == '\0' && inv[i].uuid[0] == '\0') {
            ag_err_set(&e, 409, "conflict", "start",
                       "GPU %d start %d holds a GPU instance without a compute instance (not made by "
                       "migsched); remove it with POST /v1/ops {\"op\":\"reap\"}", rq->gpu, rq->start);
            goto err;
        }
        if (inv[i].prof == k && inv[i].job[0] == '\0') {
            /* an idle instance of exactly this profile and placement: a
             * create cut short between the GI and the tag (a kill), or one
             * made idle: tag it rather than refuse the retry */
            if (run(a, MS_OP_START, rq->gpu, rq->start, k, rq->job, &e) != 0) {
                a->st.create_failed++;
                goto err;
            }
            goto made;
        }
        ag_err_set(&e, 409, "conflict", "start", "GPU %d start %d holds %s %s%s", rq->gpu, rq->start,
                   ms_geom_profile(a->geom[rq->gpu], inv[i].prof)->name,
                   inv[i].job[0] ? "running job " : "(idle)", inv[i].job);
        goto err;
    }
    if (placeable(a, inv, n, rq->gpu, k, rq->start, &e) != 0 || run(a, MS_OP_CREATE, rq->gpu, rq->start, k, "", &e) != 0) {
        if (e.code == 409)
            a->st.create_refused++;
        else if (e.code >= 500)
            a->st.create_failed++;
        goto err;
    }
    if (rq->job[0] != '\0' && run(a, MS_OP_START, rq->gpu, rq->start, k, rq->job, &e) != 0) {
        ms_binst_t gone;

        /* tagging failed: take the new GI away again, nothing half-made stays */
        memset(&gone, 0, sizeof(gone));
        gone.gpu = rq->gpu;
        gone.start = (int8_t)rq->start;
        gone.prof = (int8_t)k;
        (void)destroy(a, &gone);
        a->st.create_failed++;
        goto err;
    }
made:
    free(inv);
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK || (i = at(inv, n, rq->gpu, rq->start)) < 0) {
        ag_err_set(&e, 500, "backend", "", "the new instance is not in the inventory");
        goto err;
    }
    (void)ag_cdi_sync(a, inv, n, false);
    a->st.created++;
    ms_log("info", "created", json_pack("{s:i,s:s,s:i,s:s,s:s}", "gpu", rq->gpu, "profile", rq->profile, "start",
                                         rq->start, "job", rq->job, "uuid", inv[i].uuid));
    *status = 201;
    body = dump(inst_json(a, &inv[i]));
    goto out;
err:
    body = fail(&e, status);
out:
    free(inv);
    pthread_mutex_unlock(&a->mu);
    return body;
}

char *ag_delete(ag_t *a, const char *uuid, int *status)
{
    ms_binst_t *inv = NULL;
    ag_err_t e;
    char *body;
    int n = 0, i;

    pthread_mutex_lock(&a->mu);
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
        ag_err_set(&e, 500, "backend", "", "out of memory");
        body = fail(&e, status);
        goto out;
    }
    for (i = 0; i < n && !(inv[i].start >= 0 && strcmp(inv[i].uuid, uuid) == 0); i++)
        ;
    if (i == n) {
        a->st.delete_gone++;
        *status = 200;
        body = dump(json_pack("{s:s,s:b,s:s}", "uuid", uuid, "deleted", 0, "why", "no such instance (already gone)"));
        goto out;
    }
    if (destroy(a, &inv[i]) != 0) {
        a->st.delete_failed++;
        ag_err_set(&e, 500, "backend", "", "destroying %s failed (see the agent's log)", uuid);
        body = fail(&e, status);
        goto out;
    }
    a->st.deleted++;
    sync_cdi(a);
    ms_log("info", "deleted", json_pack("{s:s,s:s}", "uuid", uuid, "job", inv[i].job));
    *status = 200;
    body = dump(json_pack("{s:s,s:b,s:s}", "uuid", uuid, "deleted", 1, "job", inv[i].job));
out:
    free(inv);
    pthread_mutex_unlock(&a->mu);
    return body;
}

/* Is the op's effect already there? (a resent op) */
static bool already(const ms_binst_t *inv, int n, const ag_op_t *rq, int k)
{
    int i = at(inv, n, rq->gpu, rq->start), j;

    switch (rq->kind) {
    case MS_OP_CREATE:
        return i >= 0 && inv[i].prof == k && inv[i].job[0] == '\0';
    case MS_OP_DESTROY:
        return rq->start >= 0 && i < 0;
    case MS_OP_START:
        return rq->start >= 0 && i >= 0 && strcmp(inv[i].job, rq->job) == 0;
    case MS_OP_STOP:
        if (rq->start >= 0)
            return i < 0 || strcmp(inv[i].job, rq->job) != 0;
        for (j = 0; j < n; j++)
            if (inv[j].gpu == rq->gpu && inv[j].start < 0 && strcmp(inv[j].job, rq->job) == 0)
                return false;
        return true;
    case MS_OP_MOVE:
        if (rq->start < 0 || i < 0 || strcmp(inv[i].job, rq->job) != 0)
            return false;
        j = at(inv, n, rq->from_gpu, rq->from_start);
        return rq->from_start >= 0 && (j < 0 || strcmp(inv[j].job, rq->job) != 0);
    default:
        return false;
    }
}

char *ag_op(ag_t *a, const ag_op_t *rq, int *status)
{
    ms_binst_t *inv = NULL;
    ag_err_t e;
    char *body;
    int n = 0, k = -1, i;

    pthread_mutex_lock(&a->mu);
    if (rq->gpu >= a->ngpus || (rq->kind == MS_OP_MOVE && rq->from_gpu >= a->ngpus)) {
        ag_err_set(&e, 400, "invalid", "gpu", "this node has GPUs 0..%d", a->ngpus - 1);
        goto err;
    }
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
        ag_err_set(&e, 500, "backend", "", "out of memory");
        goto err;
    }
    if (rq->profile[0] != '\0' && (k = profile_of(a, rq->gpu, rq->profile, &e)) < 0)
        goto err;
    if (rq->kind == AG_OP_REAP) {
        ms_binst_t in;

        for (i = 0; i < n; i++)
            if (inv[i].gpu == rq->gpu && inv[i].start == rq->start &&
                (rq->start >= 0 || strcmp(inv[i].job, rq->job) == 0))
                break;
        if (i < n) {
            in = inv[i];
            if (destroy(a, &in) != 0) {
                ag_err_set(&e, 500, "backend", "", "destroying the instance at GPU %d start %d failed", rq->gpu,
                           rq->start);
                goto err;
            }
        }
    } else if (!already(inv, n, rq, k)) {
        ms_backend_op_t op;
        ms_diag_t why;
        ms_status_t st;

        if (rq->kind == MS_OP_CREATE && placeable(a, inv, n, rq->gpu, k, rq->start, &e) != 0)
            goto err;
        memset(&op, 0, sizeof(op));
        op.op.kind = (uint8_t)rq->kind;
        op.op.gpu = rq->gpu;
        op.op.start = (int8_t)rq->start;
        op.op.prof = (int8_t)(k >= 0 ? k : 0);
        op.op.from_gpu = rq->from_gpu >= 0 ? rq->from_gpu : 0;
        op.op.from_start = (int8_t)rq->from_start;
        op.op.bbm = rq->bbm;
        op.job = rq->job;
        op.profile = rq->profile;
        if ((st = ms_backend_run(a->be, &op, &why)) != MS_OK) {
            backend_failed(st, &why, &e);
            goto err;
        }
    }
    a->st.ops_ok++;
    free(inv);
    inv = NULL;
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
        ag_err_set(&e, 500, "backend", "", "out of memory");
        goto err;
    }
    (void)ag_cdi_sync(a, inv, n, false);
    *status = 200;
    body = dump(json_pack("{s:b,s:o}", "ok", 1, "instances", insts_json(a, inv, n)));
    goto out;
err:
    a->st.ops_failed++;
    body = fail(&e, status);
out:
    free(inv);
    pthread_mutex_unlock(&a->mu);
    return body;
}

int ag_reconcile(ag_t *a)
{
    ms_binst_t *inv;
    int n, rc;
    uint64_t w, r;

    pthread_mutex_lock(&a->mu);
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
        pthread_mutex_unlock(&a->mu);
        return -1;
    }
    w = a->st.cdi_written;
    r = a->st.cdi_removed;
    rc = ag_cdi_sync(a, inv, n, true);
    ms_log(rc == 0 ? "info" : "error", "reconciled the CDI directory with the inventory",
            json_pack("{s:s,s:i,s:I,s:I}", "dir", a->cfg->cdi_dir, "instances", n, "written",
                      (json_int_t)(a->st.cdi_written - w), "removed", (json_int_t)(a->st.cdi_removed - r)));
    free(inv);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Atomic, not under a->mu: an answer must not wait for a create that
 * holds the mutex for the seconds a driver takes. */
void ag_http_count(ag_t *a, int status)
{
    if (status >= 100 && status < 600)
        atomic_fetch_add(&a->http[status / 100], 1);
}

static int metric(char **s, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int metric(char **s, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    int k;

    for (;;) {
        va_start(ap, fmt);
        k = vsnprintf(*s + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if (k < 0)
            return -1;
        if ((size_t)k < *cap - *len) {
            *len += (size_t)k;
            return 0;
        }
        {
            size_t nc = *cap * 2 + (size_t)k;
            char *p = realloc(*s, nc);

            if (p == NULL)
                return -1;
            *s = p;
            *cap = nc;
        }
    }
}

char *ag_metrics(ag_t *a)
{
    size_t len = 0, cap = 4096;
    char *s = malloc(cap);
    ms_binst_t *inv = NULL;
    ag_stats_t st;
    int n = 0, rc = 0, c;

    if (s == NULL)
        return NULL;
    s[0] = '\0';
    pthread_mutex_lock(&a->mu);
    st = a->st;
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK)
        n = -1;
    pthread_mutex_unlock(&a->mu);
    free(inv);
    rc |= metric(&s, &len, &cap,
                 "# HELP migsched_agent_instances Instances on this node's GPUs (MIG instances and time-slice slots).\n"
                 "# TYPE migsched_agent_instances gauge\nmigsched_agent_instances %d\n", n);
    rc |= metric(&s, &len, &cap,
                 "# HELP migsched_agent_creates_total POST /v1/instances by result.\n"
                 "# TYPE migsched_agent_creates_total counter\n"
                 "migsched_agent_creates_total{result=\"created\"} %llu\n"
                 "migsched_agent_creates_total{result=\"existing\"} %llu\n"
                 "migsched_agent_creates_total{result=\"refused\"} %llu\n"
                 "migsched_agent_creates_total{result=\"failed\"} %llu\n",
                 (unsigned long long)st.created, (unsigned long long)st.create_existing,
                 (unsigned long long)st.create_refused, (unsigned long long)st.create_failed);
    rc |= metric(&s, &len, &cap,
                 "# HELP migsched_agent_deletes_total DELETE /v1/instances/UUID by result.\n"
                 "# TYPE migsched_agent_deletes_total counter\n"
                 "migsched_agent_deletes_total{result=\"deleted\"} %llu\n"
                 "migsched_agent_deletes_total{result=\"gone\"} %llu\n"
                 "migsched_agent_deletes_total{result=\"failed\"} %llu\n",
                 (unsigned long long)st.deleted, (unsigned long long)st.delete_gone,
                 (unsigned long long)st.delete_failed);
    rc |= metric(&s, &len, &cap,
                 "# HELP migsched_agent_ops_total POST /v1/ops (migschedd's plan ops) by result.\n"
                 "# TYPE migsched_agent_ops_total counter\n"
                 "migsched_agent_ops_total{result=\"success\"} %llu\nmigsched_agent_ops_total{result=\"failed\"} %llu\n",
                 (unsigned long long)st.ops_ok, (unsigned long long)st.ops_failed);
    rc |= metric(&s, &len, &cap,
                 "# HELP migsched_agent_cdi_specs_total CDI spec files written and removed.\n"
                 "# TYPE migsched_agent_cdi_specs_total counter\n"
                 "migsched_agent_cdi_specs_total{action=\"written\"} %llu\n"
                 "migsched_agent_cdi_specs_total{action=\"removed\"} %llu\n",
                 (unsigned long long)st.cdi_written, (unsigned long long)st.cdi_removed);
    rc |= metric(&s, &len, &cap, "# HELP migsched_agent_http_requests_total HTTP answers by status class.\n"
                                 "# TYPE migsched_agent_http_requests_total counter\n");
    for (c = 2; c <= 5; c++)
        rc |= metric(&s, &len, &cap, "migsched_agent_http_requests_total{code=\"%dxx\"} %llu\n", c,
                     (unsigned long long)atomic_load(&a->http[c]));
    if (rc != 0) {
        free(s);
        return NULL;
    }
    return s;
}
