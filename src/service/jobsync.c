/* jobsync.c - the loop thread: job state from the scheduler's view into the
 * table, the store and the events. A scheduler call marks the jobs it
 * touched (its plans' jobs are marked by the staging, the job it was about
 * by the handler); at the end of the batch every marked job is compared
 * with the scheduler's view and written where it changed, and queued for
 * publication after the commit. Also the sim jobs' own ends (a heap by end
 * time) and the two steps that add a job to the table.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender.h"
#include "service/svc.h"

#define FINISH_GAP_S 0.005   /* the loop wakes for sim job ends at most this often */

void svc_loop_mark(svc_t *d, svc_job_t *j)
{
    svc_loop_t *L = &d->loop;

    if (j == NULL || j->dirty)
        return;
    if (L->ndirty == L->capdirty) {
        size_t cap = L->capdirty ? L->capdirty * 2 : 256;
        svc_job_t **v = realloc(L->dirty, cap * sizeof(*v));

        if (v == NULL)
            return;   /* the job is synced on its next change */
        L->dirty = v;
        L->capdirty = cap;
    }
    j->dirty = true;
    L->dirty[L->ndirty++] = j;
}

void svc_loop_topub(svc_t *d, svc_job_t *j)
{
    svc_loop_t *L = &d->loop;

    if (j->topub)
        return;
    if (L->npub == L->cappub) {
        size_t cap = L->cappub ? L->cappub * 2 : 256;
        svc_job_t **v = realloc(L->pub, cap * sizeof(*v));

        if (v == NULL)
            return;   /* published on its next change */
        L->pub = v;
        L->cappub = cap;
    }
    j->topub = true;
    L->pub[L->npub++] = j;
}

int svc_table_reserve(svc_t *d)
{
    int rc;

    pthread_mutex_lock(&d->rmu);
    /* a new slot is below the scheduler's slot count now, or equal to it */
    rc = svc_jobs_reserve(&d->jobs, ms_sched_slots(d->sched) + 1);
    pthread_mutex_unlock(&d->rmu);
    return rc;
}

void svc_table_add(svc_t *d, svc_job_t *j, int32_t slot)
{
    int rc;

    pthread_mutex_lock(&d->rmu);
    rc = svc_jobs_add(&d->jobs, j);
    pthread_mutex_unlock(&d->rmu);
    rc |= svc_jobs_set_slot(&d->jobs, j, slot);
    assert(rc == 0);   /* reserved */
    (void)rc;
}

svc_job_t *svc_job_of_slot(svc_t *d, int32_t slot)
{
    svc_job_t *j = svc_jobs_by_slot(&d->jobs, slot), *sub = d->loop.submitting;
    ms_sched_job_info_t info;

    if (j != NULL)
        return j;
    if (sub != NULL && ms_sched_job(d->sched, slot, &info) == MS_OK && info.id != NULL &&
        strcmp(info.id, sub->id) == 0)
        return sub;
    return NULL;
}

void svc_ends_set(svc_t *d, svc_job_t *j, double at)
{
    if (ms__evheap_set(&d->loop.ends, j->tix, at) != 0)   /* the job runs on until cancelled or done */
        ms_log("error", "out of memory: a sim job will not end on its own", json_pack("{s:s}", "job", j->id));
}

/* Sim jobs that reached their duration end. Every batch ends those due,
 * and an idle loop wakes for the next one, but at most every FINISH_GAP_S
 * (each wake is a transaction of its own; ends that close together share
 * one). Ending them only at the 100 ms tick stretched a job of 60 ms (60 s
 * at --time-scale 1000) by up to 100 ms. A job not running when due
 * (starting, migrating) is tried again a tick later. */
void svc_finish_due(svc_t *d, double now)
{
    svc_loop_t *L = &d->loop;
    const ms__ev_t *e;
    bool ended = false;

    while ((e = ms__evheap_top(&L->ends)) != NULL && e->t <= now) {
        svc_job_t *j = d->jobs.v[e->id];

        ms__evheap_pop(&L->ends);
        if (j->slot < 0)   /* forgotten (ended) in this batch, before its sync */
            continue;
        if (j->state == MS_JOB_RUNNING) {
            svc_after_call(d, j, ms_sched_finished(d->sched, j->slot, now), "finished");
            ended = true;
        } else
            svc_ends_set(d, j, now + SVC_TICK_S);
    }
    if (ended)
        L->finish_gate = now + FINISH_GAP_S;
}

void svc_after_call(svc_t *d, svc_job_t *j, ms_status_t st, const char *what)
{
    svc_loop_mark(d, j);
    if (st != MS_OK && st != MS_ENOFIT)
        ms_log("error", "scheduler call failed",
               json_pack("{s:s,s:s,s:s}", "call", what, "status", ms_status_name(st), "job",
                         j != NULL ? j->id : ""));
}

static void set_place(svc_t *d, svc_job_t *j, const ms_sched_job_info_t *info)
{
    int node, group, local, first;
    const ms_geom_t *g = NULL;

    if (info->ninst <= 0)
        return;
    ms_sched_gpu_where(d->sched, info->inst[0].gpu, &node, &group, &local);
    first = ms_sched_node_first_gpu(d->sched, node);
    j->place.node = node;
    snprintf(j->place.node_name, sizeof(j->place.node_name), "%s", ms_sched_node(d->sched, node)->name);
    j->place.gpu_global = info->inst[0].gpu;
    j->place.gpu = info->inst[0].gpu - first;
    j->place.start = info->inst[0].start;
    j->place.ninst = info->ninst;
    (void)ms_sched_gpu(d->sched, info->inst[0].gpu, &g);
    snprintf(j->place.profile, sizeof(j->place.profile), "%s",
             g != NULL && info->inst[0].prof >= 0 ? ms_geom_profile(g, info->inst[0].prof)->name : "");
}

/* j's state, placement and times from the scheduler's view; true if any
 * changed. */
static bool from_view(svc_t *d, svc_job_t *j, double now)
{
    ms_sched_job_info_t info;
    svc_place_t before = j->place;
    bool changed = false;

    if (j->slot < 0 || ms_sched_job(d->sched, j->slot, &info) != MS_OK)
        return false;
    if ((int)info.state != j->state) {
        j->state = (int)info.state;
        changed = true;
    }
    set_place(d, j, &info);
    if (memcmp(&before, &j->place, sizeof(before)) != 0)
        changed = true;
    if (info.start_t > 0 && j->state != MS_JOB_QUEUED && j->start_t == 0) {
        j->start_t = info.start_t;
        changed = true;
    }
    if (svc_job_terminal(j->state) && j->end_t == 0) {
        j->end_t = info.end_t > 0 ? info.end_t : now;
        changed = true;
    }
    if (info.kept_s != j->kept_s) {   /* a preemption kept some of its run */
        j->kept_s = info.kept_s;
        changed = true;
    }
    if (j->state == MS_JOB_QUEUED && j->start_t != 0) {   /* requeued after a failed start */
        j->start_t = 0;
        changed = true;
    }
    return changed;
}

/* Was j preempted since its last sync (the scheduler stopped it and
 * queued it again)? Counted by its tenant for /metrics. */
static bool preempted(svc_t *d, svc_job_t *j)
{
    ms_sched_job_info_t info;

    if (j->slot < 0 || ms_sched_job(d->sched, j->slot, &info) != MS_OK || info.preemptions <= j->preempts)
        return false;
    j->preempts = info.preemptions;
    if (info.tenant >= 0 && info.tenant < (int)(sizeof(d->met.preempted) / sizeof(d->met.preempted[0])))
        d->met.preempted[info.tenant]++;
    return true;
}

double svc_job_sim_run(const svc_t *d, const svc_job_t *j)
{
    double run = j->req.duration_s / d->cfg->time_scale - j->kept_s;

    return run > 0 ? run : 0;
}

void svc_job_sync(svc_t *d, svc_job_t *j, double now)
{
    bool fresh = j->seq == 0, changed;
    int old = fresh ? MS_JOB_QUEUED : j->state;

    j->dirty = false;
    changed = from_view(d, j, now);
    if (fresh)
        (void)svc_store_job_insert(d->store, j);
    else if (changed || j->need_write)
        (void)svc_store_job_update(d->store, j);
    if (fresh || changed || j->need_write || !j->published)
        svc_loop_topub(d, j);
    j->need_write = false;
    if (fresh)
        svc_event_add(d, j->id, "queued", NULL, j->submit_t);
    if (preempted(d, j))
        svc_event_add(d, j->id, "preempted", j->by, now);
    if (j->state != old)
        svc_event_add(d, j->id, ms_job_state_name((ms_job_state_t)j->state), NULL, now);
    if (old == MS_JOB_STARTING && j->state != old)
        svc_ext_job_moved(d);   /* a bind waiting for its instance asks again */
    if (old == MS_JOB_QUEUED && j->state != MS_JOB_QUEUED && !j->counted_wait && j->start_t > 0) {
        svc_hist_add(&d->met.wait, j->start_t - j->submit_t);
        j->counted_wait = true;
    }
    if (j->state == MS_JOB_RUNNING && j->finish_at == 0 && j->req.duration_s > 0) {
        j->finish_at = now + svc_job_sim_run(d, j);
        svc_ends_set(d, j, j->finish_at);
    }
    if (j->state == MS_JOB_QUEUED)
        j->finish_at = 0;
    if (j->state == MS_JOB_QUEUED || svc_job_terminal(j->state))
        ms__evheap_del(&d->loop.ends, j->tix);   /* it no longer ends on its own */
    if (svc_job_terminal(j->state) && j->inflight == 0 && j->slot >= 0) {
        (void)ms_sched_forget(d->sched, j->slot);
        (void)svc_jobs_set_slot(&d->jobs, j, -1);
    }
}

void svc_sync_dirty(svc_t *d, double now)
{
    svc_loop_t *L = &d->loop;
    size_t i;

    /* svc_job_sync may mark more (never: it calls nothing that plans) */
    for (i = 0; i < L->ndirty; i++)
        svc_job_sync(d, L->dirty[i], now);
    L->ndirty = 0;
    L->nstopped = 0;   /* stage.c's STOPs name jobs of this batch only */
}
