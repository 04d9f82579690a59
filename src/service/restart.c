/* restart.c - start-up, on the main thread before the loop starts: the jobs
 * from the store, the scheduler, and the reconciliation of its view with
 * the backend's inventory, which is the truth for what exists
 * (docs/service.md and docs/operations.md state the rule):
 *   - the backend is read afresh (an agent that does not answer stops the
 *     start: without its inventory nothing can be decided about its node);
 *   - the store lost or damaged (acknowledged commits missing), or an
 *     instance tagged with a job the store does not know: start-up refuses
 *     with the reason, or with --recovery adopt goes on and adopts such an
 *     instance as a job of its own (recover.c); it never destroys it;
 *   - an instance tagged with a job the store knows and has not ended
 *     (queued included: its start's commit may be what was lost), and
 *     complete (a gang on all its GPUs), is adopted (own.c) and the job
 *     runs on; an idle instance becomes an idle GI of the view, unless a
 *     plan the crash cut short created it or was to destroy it (the
 *     journal's unsettled ops): then it is ours and transient;
 *   - what is left is destroyed: the instances of jobs the store knows
 *     ended (their end was acknowledged), the part of a gang found on only
 *     some of its GPUs (the gang is placed anew), an idle GI where the
 *     policy's own setup wants another; setup GIs missing are created;
 *   - a job that was starting, running or migrating but has no instance is
 *     queued again, and every queued job is submitted again, by priority.
 * A half-done migration is thereby finished (the job's tag moved) or rolled
 * back (it did not), nothing is created twice (nothing is replayed), and the
 * journal's unsettled ops are marked abandoned. Everything happens in one
 * transaction, committed and fsynced before the loop starts.
 *
 * In Kubernetes mode (--kube) start-up does not touch the backend at all:
 * the store is a cache, the API server says who owns what, and the replica
 * may be a standby. Its view is built when it becomes the leader
 * (ext_takeover.c, ext_adopt.c); until then every GPU is stale.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/own.h"
#include "service/svc.h"
#include "service/tenants.h"

#define RESTART_READ_S 10.0   /* each agent has this long to answer at start-up */

/* One stored job into the table (the store calls it for each, in order). */
static int load_one(void *ctx, svc_job_t *j)
{
    svc_t *d = ctx;
    svc_err_t err;
    char *id = NULL, *canon = NULL;
    double now = svc_clock_wall(d->clock);
    int rc;

    /* the store's request columns (gang >= 1) spare parsing the body; a row
     * from before them is parsed */
    if (j->req.gang < 1 && svc_req_parse(j->body, strlen(j->body), &id, &j->req, &canon, &err) != 0) {
        /* keep it (it was acknowledged) but never run it */
        ms_log("error", "a stored job's request does not parse; it is marked failed",
               json_pack("{s:s,s:s}", "job", j->id, "error", err.msg));
        if (!svc_job_terminal(j->state)) {
            j->state = MS_JOB_FAILED;
            j->end_t = now;
            snprintf(j->reason, sizeof(j->reason), "the stored request does not parse: %s", err.msg);
            j->need_write = true;
            svc_loop_mark(d, j);
        }
    }
    free(id);
    free(canon);
    if (!svc_job_terminal(j->state) && svc_tenant_keep(d, j->req.tenant) != 0)
        return -1;
    if (j->state == MS_JOB_RESERVED) {
        /* a hold (the extender's) does not outlive the daemon: the
         * scheduler that asked for it filters again */
        j->state = MS_JOB_CANCELLED;
        j->end_t = now;
        j->need_write = true;
        svc_loop_mark(d, j);
    }
    if (j->place.node >= 0 && (j->place.node = ms_sched_node_find(d->sched, j->place.node_name)) < 0)
        j->place.node = -1;
    j->counted_wait = j->start_t > 0;
    pthread_mutex_lock(&d->rmu);
    rc = svc_jobs_add(&d->jobs, j);
    pthread_mutex_unlock(&d->rmu);
    if (rc != 0) {
        svc_job_free(j);
        return -1;
    }
    return 0;
}

/* Does the view hold the inventory's instance b (same job, or both idle)? */
static bool view_has(svc_t *d, const ms_binst_t *b)
{
    const ms_geom_t *g;
    const ms_gpu_t *gpu = ms_sched_gpu(d->sched, b->gpu, &g);
    int i;

    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];
        svc_job_t *j = in->job >= 0 ? svc_jobs_by_slot(&d->jobs, in->job) : NULL;

        if (in->start != b->start || in->prof != b->prof)
            continue;
        if (in->job < 0 && b->job[0] == '\0')
            return true;
        if (j != NULL && strcmp(j->id, b->job) == 0)
            return true;
    }
    return false;
}

/* Does the inventory hold the view's idle GI in? */
static bool inv_has(const ms_binst_t *v, int n, int gpu, const ms_inst_t *in)
{
    int i;

    for (i = 0; i < n; i++)
        if (v[i].gpu == gpu && v[i].start == in->start && v[i].prof == in->prof && v[i].job[0] == '\0')
            return true;
    return false;
}

/* Is the idle instance b one that a plan cut short by the crash created
 * or was to destroy (pairs from svc_store_unsettled_gis)? Then it is ours
 * and transient, not a GI the view should keep: a dynamic policy never
 * destroys an idle GI it did not plan, so kept it would block its slices
 * for good (a cancel's DESTROY cut short left a 7g on which no 1g could
 * ever start). */
static bool transient(const int *pairs, int npairs, const ms_binst_t *b)
{
    int k;

    for (k = 0; k < npairs; k++)
        if (pairs[2 * k] == b->gpu && pairs[2 * k + 1] == b->start)
            return true;
    return false;
}

/* Adopt the instances of every job the store knows and has not ended, a
 * job of its own for each unknown tag (--recovery adopt; recover.c said
 * that may go on), and the idle GIs but the transient ones (inv sorted by
 * tag). */
static void adopt(svc_t *d, const ms_binst_t *inv, int n, const int *pairs, int npairs, double now)
{
    char why[300];
    int i, e;

    for (i = 0; i < n; i = e) {
        svc_job_t *j;

        e = svc_own_group_end(inv, i, n);
        if (inv[i].job[0] == '\0') {
            for (; i < e; i++)
                if (!transient(pairs, npairs, &inv[i]))
                    (void)svc_own_idle(d, &inv[i]);
            continue;
        }
        j = svc_jobs_find(&d->jobs, inv[i].job);
        if (j == NULL && ms_backend_tag_foreign(inv[i].job)) {
            /* another owner's (the agent's DRA driver): its slices held */
            if (svc_own_found(d, inv + i, e - i, SVC_LABEL_FOREIGN, now, why, sizeof(why)) == NULL)
                ms_log("error", "reconcile: another owner's instance cannot be held in the view; left as it is",
                       json_pack("{s:s,s:i,s:s}", "tag", inv[i].job, "gpu", (int)inv[i].gpu, "why", why));
            continue;
        }
        if (j == NULL) {
            if (d->cfg->recovery_adopt && svc_own_found(d, inv + i, e - i, SVC_LABEL_RECOVERED, now, why,
                                                        sizeof(why)) == NULL)
                ms_log("error", "reconcile: an instance of an unknown job cannot be adopted; left as it is",
                       json_pack("{s:s,s:i,s:s}", "job", inv[i].job, "gpu", (int)inv[i].gpu, "why", why));
            continue;
        }
        if (svc_job_terminal(j->state) || j->slot >= 0)
            continue;
        if (svc_own_adopt(d, j, inv + i, e - i, now, why, sizeof(why)) != 0)
            ms_log("warn", "cannot adopt a job's instances; the job is queued again",
                   json_pack("{s:s,s:s}", "job", j->id, "why", why));
    }
}

/* One of start-up's own calls on the backend (force: never delayed, never
 * an injected failure). */
static int backend_call(svc_t *d, int kind, int gpu, int start, int prof, const char *job)
{
    const ms_geom_t *g = NULL;
    ms_backend_op_t op;
    ms_diag_t why;

    (void)ms_sched_gpu(d->sched, gpu, &g);
    memset(&op, 0, sizeof(op));
    op.op.kind = (uint8_t)kind;
    op.op.gpu = gpu;
    op.op.start = (int8_t)start;
    op.op.prof = (int8_t)prof;
    op.op.job = -1;
    op.job = job;
    op.profile = g != NULL && prof >= 0 && prof < ms_geom_nprofiles(g) ? ms_geom_profile(g, prof)->name : "";
    op.force = true;
    return ms_backend_run(d->be, &op, &why) == MS_OK ? 0 : -1;
}

/* The hardware follows the view where the view knows better: the
 * instances of jobs the store knows but did not adopt (they ended, or a
 * gang is found in part) and idle GIs the view has no room for are
 * destroyed; an instance of a job the store does not know is never (it
 * was adopted, or it stays as it is: recover.c). The setup's GIs the
 * hardware lacks are created. */
static void follow_view(svc_t *d, const ms_binst_t *inv, int n)
{
    int i, g, e;

    for (i = 0; i < n; i++) {
        if (view_has(d, &inv[i]) || (inv[i].job[0] != '\0' && svc_jobs_find(&d->jobs, inv[i].job) == NULL) ||
            ms_backend_tag_foreign(inv[i].job))
            continue;
        ms_log("info", inv[i].job[0] != '\0' ? "reconcile: destroying the instance of a job that ended"
                                              : "reconcile: destroying an idle instance the view has no room for",
               json_pack("{s:i,s:i,s:i,s:s}", "gpu", (int)inv[i].gpu, "start", (int)inv[i].start, "prof",
                         (int)inv[i].prof, "job", inv[i].job));
        if (backend_call(d, MS_OP_DESTROY, inv[i].gpu, inv[i].start, inv[i].prof, inv[i].job) != 0)
            ms_log("error", "reconcile: destroy failed", NULL);
        d->destroyed_at_start++;
    }
    for (g = 0; g < ms_sched_ngpus(d->sched); g++) {
        const ms_geom_t *geom;
        const ms_gpu_t *gpu = ms_sched_gpu(d->sched, g, &geom);

        for (e = 0; e < gpu->ninst; e++)
            if (gpu->inst[e].job < 0 && gpu->inst[e].start >= 0 && !inv_has(inv, n, g, &gpu->inst[e]) &&
                backend_call(d, MS_OP_CREATE, g, gpu->inst[e].start, gpu->inst[e].prof, "") != 0)
                ms_log("error", "reconcile: create failed", NULL);
    }
}

/* The order in which start-up submits the jobs it queues: the queue's own
 * (priority, highest first, then the order they came in). Submitting
 * places at once where there is room, so in store order a job of
 * priority 0 took the GPU a job of priority 10 then preempted it from
 * again (a needless STOP, CREATE and START, and a "running" that was not). */
static int cmp_resubmit(const void *a, const void *b)
{
    const svc_job_t *x = *(svc_job_t *const *)a, *y = *(svc_job_t *const *)b;

    if (x->req.priority != y->req.priority)
        return x->req.priority > y->req.priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void resubmit(svc_t *d, svc_job_t *j, double now)
{
    ms_sched_req_t r;
    ms_diag_t diag;
    int32_t slot = -1;
    ms_status_t st;

    svc_job_sched_req(j, &r);
    /* its wait so far, the restart's downtime included: the backfill bound
     * and aging see the waits they saw before (docs/sched.md, "Restart") */
    r.waited_s = j->submit_t > 0 && now > j->submit_t ? now - j->submit_t : 0;
    ms_diag_clear(&diag);
    d->loop.submitting = j;
    st = ms_sched_submit(d->sched, &r, now, &slot, &diag);
    d->loop.submitting = NULL;
    if (slot >= 0) {
        (void)svc_jobs_set_slot(&d->jobs, j, slot);
        return;
    }
    j->state = MS_JOB_FAILED;
    j->end_t = now;
    j->need_write = true;
    snprintf(j->reason, sizeof(j->reason), "after restart: %s", diag.msg[0] ? diag.msg : ms_strerror(st));
    svc_event_add(d, j->id, "failed", NULL, now);
}

/* Jobs that lost their instances, and every queued job, in the queue's
 * order (cmp_resubmit). */
static int requeue(svc_t *d, double now)
{
    svc_job_t **todo = calloc(d->jobs.n + 1, sizeof(*todo));
    size_t k, n = 0;

    if (todo == NULL) {
        snprintf(d->start_why, sizeof(d->start_why), "out of memory queueing the stored jobs");
        return -1;
    }
    for (k = 0; k < d->jobs.n; k++) {
        svc_job_t *j = d->jobs.v[k];

        if (svc_job_terminal(j->state) || j->slot >= 0)
            continue;
        if (ms_backend_tag_foreign(j->id)) {
            /* the slices of another owner's instance, held while it ran:
             * its owner removed it (never placed anew under its tag) */
            j->state = MS_JOB_DONE;
            j->end_t = now;
            j->need_write = true;
            svc_event_add(d, j->id, "done", NULL, now);
            continue;
        }
        if (j->state != MS_JOB_QUEUED) {   /* lost its instances: queued again */
            svc_event_add(d, j->id, "queued", NULL, now);
            j->state = MS_JOB_QUEUED;
            j->start_t = 0;
            j->place.node = -1;
            j->finish_at = 0;
            j->need_write = true;
        }
        svc_loop_mark(d, j);
        todo[n++] = j;
    }
    qsort(todo, n, sizeof(*todo), cmp_resubmit);
    for (k = 0; k < n; k++)
        resubmit(d, todo[k], now);
    free(todo);
    return 0;
}

/* The backend's inventory read afresh: every GPU's, or an error naming
 * the first that could not be read. */
static int read_inventory(svc_t *d, ms_binst_t **inv, int *n)
{
    int ng = ms_sched_ngpus(d->sched), g;
    bool *stale = calloc((size_t)ng + 1, sizeof(*stale));
    ms_diag_t why;

    if (stale == NULL)
        return -1;
    for (g = 0; g < ng; g++)
        stale[g] = true;
    ms_diag_clear(&why);
    if (ms_backend_refresh(d->be, stale, ng, RESTART_READ_S, &why) != MS_OK) {
        snprintf(d->start_why, sizeof(d->start_why), "the backend's inventory: %s", why.msg);
        free(stale);
        return -1;
    }
    for (g = 0; g < ng && !stale[g]; g++)
        ;
    free(stale);
    if (g < ng) {
        int node, group, local;

        ms_sched_gpu_where(d->sched, g, &node, &group, &local);
        snprintf(d->start_why, sizeof(d->start_why),
                 "node %s's inventory cannot be read (%s); start-up decides nothing without every node's",
                 ms_sched_node(d->sched, node)->name, why.msg[0] ? why.msg : "its agent does not answer");
        return -1;
    }
    if (ms_backend_inventory(d->be, inv, n, &why) != MS_OK) {
        snprintf(d->start_why, sizeof(d->start_why), "cannot read the backend's inventory: %s", why.msg);
        return -1;
    }
    return 0;
}

static int reconcile(svc_t *d, double now)
{
    ms_binst_t *inv = NULL;
    int n = 0, *pairs = NULL, npairs = 0;

    if (read_inventory(d, &inv, &n) != 0)
        return -1;
    svc_own_sort(inv, n);
    if (svc_recover_check(d, inv, n) != 0 || svc_store_unsettled_gis(d->store, &pairs, &npairs) != 0) {
        free(inv);
        return -1;
    }
    adopt(d, inv, n, pairs, npairs, now);
    follow_view(d, inv, n);   /* destroys the transient ones: the view has none */
    free(pairs);
    free(inv);
    d->loop.reconciling = false;   /* the requeue's plans are staged */
    return requeue(d, now);
}

int svc_sched_build(svc_t *d, double now)
{
    ms_sched_cfg_t cfg;
    ms_diag_t diag;
    char why[256];
    const ms_policy_ops_t *pol = ms_policy_find(d->cfg->policy);
    ms_status_t st;

    if (pol == NULL) {
        ms_log("error", "unknown policy", json_pack("{s:s}", "policy", d->cfg->policy));
        return -1;
    }
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = pol;
    cfg.pcfg = d->cfg->pcfg;
    cfg.queue = d->cfg->qcfg.queue;
    cfg.backfill_bound_s = d->cfg->qcfg.backfill_bound_s;
    cfg.aging_rate = d->cfg->qcfg.aging_rate;
    cfg.default_estimate_s = d->cfg->qcfg.default_estimate_s;
    cfg.preempt = d->cfg->qcfg.preempt;   /* victims' STOPs staged like a cancel's (stage.c) */
    /* with --kube a victim is a pod, evicted (ext_preempt.c), never stopped */
    cfg.preempt_requests_only = d->cfg->kube;
    cfg.preempt_grace_s = d->cfg->qcfg.preempt_grace_s;
    cfg.preempt_after_s = d->cfg->qcfg.preempt_after_s;
    cfg.preempt_rate = d->cfg->qcfg.preempt_rate;
    cfg.preempt_max_lost_s = d->cfg->qcfg.preempt_max_lost_s;
    cfg.preempt_move = d->cfg->qcfg.preempt_move;   /* a ROOM plan of moves, staged as make_room's */
    cfg.tenant_half_life_s = d->cfg->qcfg.tenant_half_life_s;
    cfg.nodes = ms_cluster_spec_nodes(d->spec);
    cfg.nnodes = ms_cluster_spec_nnodes(d->spec);
    cfg.track_ops = true;
    cfg.exec.ctx = d;
    cfg.exec.plan = svc_stage_plan;
    ms_diag_clear(&diag);
    if ((st = ms_sched_create(&cfg, now, &d->sched, &diag)) != MS_OK) {
        ms_log("error", "cannot create the scheduler",
               json_pack("{s:s,s:s,s:s}", "status", ms_status_name(st), "field", diag.field, "why", diag.msg));
        return -1;
    }
    if (svc_tenants_apply(d, &d->cfg->tenants, why, sizeof(why)) != 0) {
        ms_log("error", "cannot declare the tenants", json_pack("{s:s}", "why", why));
        return -1;
    }
    return 0;
}

/* Every stored job is durable: its committed view is its view now, and
 * every event so far is visible. */
static void publish_all(svc_t *d)
{
    size_t k;

    pthread_mutex_lock(&d->rmu);
    for (k = 0; k < d->jobs.n; k++) {
        svc_job_t *j = d->jobs.v[k];

        free(j->pub.reason);
        (void)svc_jview_of(j, &j->pub);   /* out of memory: without its reason */
        j->published = true;
        j->topub = false;
    }
    pthread_mutex_unlock(&d->rmu);
    d->loop.npub = 0;
    svc_events_publish_to(d, svc_events_next(d));
}

int svc_restart(svc_t *d, double now)
{
    double t0 = svc_clock_mono(d->clock), t_load, t_rec;
    svc_qlink_t *l, *next;
    long unsettled;

    d->loop.reconciling = true;
    if (svc_sched_build(d, now) != 0)
        return -1;
    if (svc_events_init(d, svc_store_last_event(d->store) + 1) != 0)
        return -1;
    if (svc_store_load(d->store, load_one, d) != 0)
        return -1;
    t_load = svc_clock_mono(d->clock);
    d->restored_jobs = (long)d->jobs.n;
    unsettled = svc_store_unsettled(d->store);
    if (svc_store_begin(d->store) != 0)
        return -1;
    if (d->cfg->kube) {
        /* the store is a cache and this replica may be a standby: the
         * backend is not touched, the view is built at the takeover */
        d->loop.reconciling = false;
        svc_own_all_stale(d);
        if (svc_recover_cache(d) != 0 || svc_store_abandon(d->store, now) != 0) {
            svc_store_rollback(d->store);
            return -1;
        }
    } else if (reconcile(d, now) != 0 || svc_store_abandon(d->store, now) != 0) {
        svc_store_rollback(d->store);
        return -1;
    }
    t_rec = svc_clock_mono(d->clock);
    svc_sync_dirty(d, now);
    if (svc_store_commit(d->store) != 0 || svc_store_sync(d->store) != 0)
        return -1;
    publish_all(d);
    /* the requeue's plans are durable: they wait for the executor's thread */
    for (l = svc_queue_drain(&d->loop.staged); l != NULL; l = next) {
        next = l->next;
        (void)svc_queue_push(&d->exec.q, l);
    }
    ms_log("info", "started",
           json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f}", "jobs", (json_int_t)d->restored_jobs, "adopted",
                     (json_int_t)d->adopted, "destroyed", (json_int_t)d->destroyed_at_start, "unsettled_ops",
                     (json_int_t)unsettled, "seconds", svc_clock_mono(d->clock) - t0,
                     /* where it went: the store read, reconciliation with the
                      * resubmission of the queue, writing and publishing */
                     "load_s", t_load - t0, "reconcile_s", t_rec - t_load, "commit_s",
                     svc_clock_mono(d->clock) - t_rec));
    return 0;
}
