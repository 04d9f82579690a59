/* events.c - the driver's entry points for a job's events: submit,
 * finished, cancel. Each changes the job and the cluster, then runs a
 * scheduling pass (queue.c). The scheduler's thread, as all of src/sched.
 */
#include <string.h>

#include "sched/sched_int.h"

ms_status_t ms_sched_submit(ms_sched_t *s, const ms_sched_req_t *req, double now,
                            int32_t *slot, ms_diag_t *diag)
{
    int32_t k, cls;
    ms__job_t *j;
    ms__cls_t *c;
    ms_status_t st;
    bool ok = false;
    int i;

    s->diag = diag;
    if (req == NULL || !(now >= -1e18 && now <= 1e18)) {
        ms_diag_set(diag, NULL, 0, "now", "submit needs a request and a finite time");
        return MS_EINVAL;
    }
    if ((st = ms__sched_resolve(s, req, &cls, diag)) != MS_OK)
        return st;
    if (req->id != NULL && ms_sched_find(s, req->id) >= 0) {
        ms_diag_set(diag, NULL, 0, "id", "a job with id '%s' exists", req->id);
        return MS_EEXIST;
    }
    if ((st = ms__sched_job_alloc(s, req->id, &k)) != MS_OK) {
        ms_diag_set(diag, NULL, 0, "id", "%s", st == MS_EINVAL ? "ids are 1..4096 bytes"
                                                                : ms_strerror(st));
        return st;
    }
    ms__sched_job_fill(s, k, cls, req, now - req->waited_s);
    j = &s->jobs[k];
    c = &s->cls[cls];
    /* rejection: can any candidate group ever host it? */
    for (i = 0; i < c->norder && !ok; i++) {
        ms__grp_t *gr = &s->grp[c->order[i]];
        ms_job_t v = ms__sched_view(s, k, c->order[i]);

        ok = gr->pol->can_host == NULL || gr->pol->can_host(gr->self, gr->c, &v);
    }
    if (!ok) {
        ms__sched_job_release(s, k);
        ms_diag_set(diag, NULL, 0, "profile", "no GPU of this cluster can ever host it under policy %s",
                    s->cfg.policy->name);
        s->diag = NULL;
        return MS_ENOFIT;
    }
    if (j->gang > 1 && (j->insts = ms__scalloc(s, (size_t)j->gang, sizeof(*j->insts))) == NULL) {
        ms__sched_job_release(s, k);
        return MS_ENOMEM;
    }
    for (i = 0; i < c->norder; i++) {
        ms__grp_t *gr = &s->grp[c->order[i]];

        if (gr->pol->on_arrival != NULL) {
            ms_job_t v = ms__sched_view(s, k, c->order[i]);

            gr->pol->on_arrival(gr->self, &v);
            ms__sched_pol_seen(s, c->order[i]);
        }
    }
    ms__sched_enqueue(s, k);
    *slot = k;
    st = ms__sched_schedule(s, now);
    s->diag = NULL;
    return st;
}

ms_status_t ms_sched_finished(ms_sched_t *s, int32_t slot, double now)
{
    ms__job_t *j;
    ms_sched_inst_t gpus[1];
    ms_sched_inst_t *in;
    int i, n, gi;
    ms_status_t st;

    if (slot < 0 || slot >= s->njobs || s->jobs[slot].state == MS__SLOT_FREE)
        return MS_ENOENT;
    j = &s->jobs[slot];
    if (j->state == MS_JOB_QUEUED) {
        ms__sched_dequeue(s, slot);
        j->state = MS_JOB_DONE;
        j->end_t = now;
        return MS_OK;
    }
    if (j->state != MS_JOB_RUNNING && j->state != MS_JOB_STARTING &&
        j->state != MS_JOB_MIGRATING)
        return MS_ESTATE;
    gi = j->group;
    n = j->ninst;
    /* the GPUs it left, for on_finish (copied: release clears them) */
    in = n > 1 ? ms__salloc(s, (size_t)n * sizeof(*in)) : gpus;
    if (in == NULL)
        return MS_ENOMEM;
    memcpy(in, ms__sched_insts(j), (size_t)n * sizeof(*in));
    st = ms__sched_release(s, slot, MS_JOB_DONE, now);
    if (st == MS_OK && s->grp[gi].pol->on_finish != NULL) {
        ms__grp_t *gr = &s->grp[gi];

        for (i = 0; i < n && st == MS_OK; i++) {
            ms_plan_clear(&s->plan);
            st = gr->pol->on_finish(gr->self, gr->c, s->g2l[in[i].gpu], now, &s->plan);
            ms__sched_pol_seen(s, gi);
            if (st == MS_ENOFIT) {
                st = MS_OK;
                continue;
            }
            if (st != MS_OK) {
                ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: on_finish failed: %s",
                            gr->pol->name, ms_strerror(st));
                break;
            }
            if (s->plan.n > 0 && ms__sched_moves_allowed(s, &s->plan, now))
                st = ms__sched_run_plan(s, gi, MS_PK_FINISH, now);
        }
    }
    if (in != gpus)
        ms__sfree(s, in);
    if (st != MS_OK)
        return st;
    return ms__sched_schedule(s, now);
}

ms_status_t ms_sched_cancel(ms_sched_t *s, int32_t slot, double now)
{
    ms__job_t *j;
    ms_status_t st;

    if (slot < 0 || slot >= s->njobs || s->jobs[slot].state == MS__SLOT_FREE)
        return MS_ENOENT;
    j = &s->jobs[slot];
    switch (j->state) {
    case MS_JOB_QUEUED:
        ms__sched_dequeue(s, slot);
        j->state = MS_JOB_CANCELLED;
        j->end_t = now;
        return ms__sched_schedule(s, now);
    case MS_JOB_RESERVED:
    case MS_JOB_STARTING:
    case MS_JOB_RUNNING:
    case MS_JOB_MIGRATING:
        if ((st = ms__sched_release(s, slot, MS_JOB_CANCELLED, now)) != MS_OK)
            return st;
        return ms__sched_schedule(s, now);
    default:
        return MS_ESTATE;
    }
}
