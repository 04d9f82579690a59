/* stage.c - the loop thread: plan staging. ms_sched hands every plan it
 * decides to its executor callback (svc_stage_plan, registered by
 * restart.c) while the loop handles a batch; the plan is journalled in the
 * batch's open transaction (the store's plans and ops) and staged. The
 * batch's commit puts the staged plans in its ticket, and the syncer hands
 * them to the executor once the commit is durable: so a plan is on disk
 * before its first op runs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "service/svc.h"

/* The profile's product name on the GPU ("" none). */
static void prof_name(svc_t *d, int gpu, int prof, char *buf, size_t len)
{
    const ms_geom_t *g = NULL;

    buf[0] = '\0';
    if (gpu < 0 || gpu >= ms_sched_ngpus(d->sched))
        return;
    (void)ms_sched_gpu(d->sched, gpu, &g);
    if (g != NULL && prof >= 0 && prof < ms_geom_nprofiles(g))
        snprintf(buf, len, "%s", ms_geom_profile(g, prof)->name);
}

/* Preemption (cfg.preempt): the scheduler stops each victim in a STOP
 * plan, queues it again (its preemption count goes up), then starts the
 * head in a PLACE plan, all in one call. So the jobs of the last STOPs
 * that are queued again with a count above the one jobsync.c has seen are
 * that PLACE's victims: each is told its preemptor's id (the START's job),
 * which the "preempted" event carries. A cancel's STOP leaves its job
 * cancelled, and is not counted. */
static void note_preemption(svc_t *d, const ms_sched_plan_t *p)
{
    svc_loop_t *L = &d->loop;
    const svc_job_t *head = NULL;
    ms_sched_job_info_t info;
    int i, n;

    if (!d->cfg->qcfg.preempt)
        return;   /* (with --kube no queued job preempts: cfg.preempt_requests_only) */
    if (p->kind == MS_PK_STOP) {
        for (i = 0; i < p->n; i++)
            if (p->ops[i].op.kind == MS_OP_STOP && p->ops[i].op.job >= 0)
                L->stopped[L->nstopped++ % 16] = svc_job_of_slot(d, p->ops[i].op.job);
        return;
    }
    if (p->kind != MS_PK_PLACE || L->nstopped == 0) {
        L->nstopped = 0;   /* a victim's STOP is followed by its preemptor's PLACE */
        return;
    }
    for (i = 0; i < p->n && head == NULL; i++)
        if (p->ops[i].op.kind == MS_OP_START && p->ops[i].op.job >= 0)
            head = svc_job_of_slot(d, p->ops[i].op.job);
    n = L->nstopped < 16 ? L->nstopped : 16;
    for (i = 0; i < n && head != NULL; i++) {
        svc_job_t *v = L->stopped[i];

        if (v != NULL && v->slot >= 0 && ms_sched_job(d->sched, v->slot, &info) == MS_OK &&
            info.state == MS_JOB_QUEUED && info.preemptions > v->preempts)
            snprintf(v->by, sizeof(v->by), "%s", head->id);
    }
    L->nstopped = 0;
}

ms_status_t svc_stage_plan(void *ctx, const ms_sched_plan_t *p)
{
    svc_t *d = ctx;
    svc_xplan_t *x;
    int i;

    if (d->loop.reconciling || p->n == 0)
        return MS_OK;   /* start-up: the inventory diff does it (restart.c) */
    note_preemption(d, p);
    if ((x = calloc(1, sizeof(*x))) == NULL || (x->ops = calloc((size_t)p->n, sizeof(*x->ops))) == NULL) {
        svc_xplan_free(x);
        d->loop.sched_err = 1;
        return MS_ENOMEM;
    }
    x->n = p->n;
    x->kind = p->kind;
    pthread_mutex_lock(&d->exec.mu);
    x->epoch = d->exec.epoch;
    pthread_mutex_unlock(&d->exec.mu);
    for (i = 0; i < p->n; i++) {
        svc_xop_t *o = &x->ops[i];
        svc_job_t *j = p->ops[i].op.job >= 0 ? svc_job_of_slot(d, p->ops[i].op.job) : NULL;

        o->op = p->ops[i].op;
        o->op_id = p->ops[i].id;
        o->idx = i;
        o->jp = j;
        snprintf(o->job, sizeof(o->job), "%s", j != NULL ? j->id : "");
        prof_name(d, o->op.gpu, o->op.prof, o->prof_name, sizeof(o->prof_name));
        if (j != NULL) {
            j->inflight++;
            svc_loop_mark(d, j);
        }
    }
    /* staged even when the journal write fails (a full disk): the view has
     * the plan already, and a failed write fails the transaction's commit,
     * so the plan runs only once redo.c has journalled it again */
    (void)svc_store_plan(d->store, ms_plan_kind_name(p->kind), p->now, x->ops, x->n, &x->plan_id);
    (void)svc_queue_push(&d->loop.staged, &x->link);   /* the loop's own queue: never closed */
    return MS_OK;
}
