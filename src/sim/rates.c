/* rates.c - the simulator's rates, progress and aggregates.
 *
 * Progress: each running job keeps (rem, upd, hold, rate): rem seconds of
 * exact-size work were left at time upd; it makes no progress before hold
 * (GI creation, migration); from max(upd, hold) on it progresses at rate.
 * A rate is the slowest of the job's instances: 1 / (1 + beta x others) on
 * a MIG GPU, min(1, compute / sum of the jobs' c_p) on a time-sliced one.
 *
 * Aggregates (FragCost sum, useful compute, GPUs per busy-compute value) are
 * updated per op from the GPUs the op touches, never by scanning GPUs.
 */
#include <string.h>

#include "sim/sim_int.h"

static double gpu_rate(const ms__sim_t *s, int g)
{
    const ms_gpu_t *gpu = s->gpu[g];
    const ms__sim_grp_t *gr = &s->grp[s->ggrp[g]];
    int i;

    if (gr->share == MS_SHARE_TIMESLICE) {
        double sum = 0.0;

        for (i = 0; i < gpu->ninst; i++)
            if (gpu->inst[i].job >= 0)
                sum += ms_geom_profile(gr->g, gpu->inst[i].prof)->cslices;
        sum /= gr->C;
        return sum > 1.0 ? 1.0 / sum : 1.0;
    } else {
        int others = ms_gpu_running(gpu) - 1;

        if (others < 0)
            others = 0;
        return 1.0 / (1.0 + s->cfg->beta * others);
    }
}

static double job_rate(const ms__sim_t *s, int32_t j)
{
    const ms__sim_job_t *sj = &s->jobs[j];
    double r = 1.0;
    int i;

    for (i = 0; i < sj->ninst; i++) {
        double x = gpu_rate(s, s->pool[sj->inst + (uint32_t)i].gpu);

        if (x < r)
            r = x;
    }
    return r;
}

static ms_status_t reschedule(ms__sim_t *s, int32_t jid)
{
    ms__sim_job_t *j = &s->jobs[jid];
    double from = j->upd > j->hold ? j->upd : j->hold;

    return ms__evheap_set(&s->ends, jid, from + j->rem / j->rate) == 0 ? MS_OK : MS_ENOMEM;
}

/* Recompute the rate of every job on the touched GPUs. */
ms_status_t ms__sim_update_rates(ms__sim_t *s)
{
    int t, i;
    ms_status_t st;

    for (t = 0; t < s->ntouched; t++) {
        const ms_gpu_t *gpu = s->gpu[s->touched[t]];
        double here = -1.0;   /* this GPU's rate, once a job needs it */

        for (i = 0; i < gpu->ninst; i++) {
            int32_t jid = gpu->inst[i].job;
            ms__sim_job_t *j;
            double r;

            if (jid < 0)
                continue;
            jid = s->slot2tr[jid];
            j = &s->jobs[jid];
            if (j->ninst == 1) {   /* most jobs: the rate is this GPU's */
                if (here < 0.0)
                    here = gpu_rate(s, s->touched[t]);
                r = here < 1.0 ? here : 1.0;
            } else {
                r = job_rate(s, jid);
            }
            if (!j->dirty && r == j->rate)
                continue;
            ms__sim_settle(s, j);
            j->rate = r;
            j->dirty = 0;
            if ((st = reschedule(s, jid)) != MS_OK)
                return st;
        }
    }
    s->ntouched = 0;
    if (++s->stamp == 0) {
        memset(s->tmark, 0, (size_t)s->ngpus * sizeof(*s->tmark));
        s->stamp = 1;
    }
    return MS_OK;
}

static int gpu_useful(const ms__sim_t *s, int g)
{
    const ms_gpu_t *gpu = s->gpu[g];
    const ms__sim_grp_t *gr = &s->grp[s->ggrp[g]];
    int i, u = 0;

    for (i = 0; i < gpu->ninst; i++) {
        int32_t j = gpu->inst[i].job;

        if (j >= 0) {
            /* the job's own size on this model (a gang's instances are whole) */
            const ms_job_t *tj = &s->tr->jobs[s->slot2tr[j]];

            u += ms_geom_profile(gr->g, tj->gang > 1 || gr->g != s->tr->geom ? gpu->inst[i].prof
                                                                            : tj->prof)->cslices;
        }
    }
    return u > gr->C ? gr->C : u;
}

static void contrib(ms__sim_t *s, int g)
{
    const ms__sim_grp_t *gr = &s->grp[s->ggrp[g]];
    const ms_gpu_t *gpu = s->gpu[g];
    int64_t f = gr->fcost[gpu->state];
    int32_t u = gpu_useful(s, g);
    uint8_t lazy = (double)gpu->busy / gr->C < s->cfg->sched.pcfg.lb_threshold;

    s->sum_frag += f - s->gfrag[g];
    s->sum_useful += u - s->guse[g];
    s->nlazy += (long)lazy - (long)s->glazy[g];
    s->gfrag[g] = f;
    s->guse[g] = u;
    s->glazy[g] = lazy;
}

void ms__sim_update_contrib(ms__sim_t *s, bool all)
{
    int t;

    if (all) {
        for (t = 0; t < s->ngpus; t++)
            contrib(s, t);
    } else {
        for (t = 0; t < s->nctouched; t++)
            contrib(s, s->ctouched[t]);
    }
    s->nctouched = 0;
    if (++s->cstamp == 0) {
        memset(s->cmark, 0, (size_t)s->ngpus * sizeof(*s->cmark));
        s->cstamp = 1;
    }
}

void ms__sim_advance(ms__sim_t *s, double t)
{
    if (t > s->last_t) {
        if (s->ten_on)
            ms__sim_tenants_advance(s, t);
        s->area_frag += (double)s->sum_frag / MS__SIM_FX * (t - s->last_t);
        s->area_util += (double)s->sum_useful * (t - s->last_t);
        s->last_t = t;
    }
    s->now = t;
}

void ms__sim_sample(const ms__sim_t *s, double t)
{
    ms_sched_stats_t st;

    ms_sched_stats(s->sched, &st);
    s->cfg->on_sample(s->cfg->ctx, t, (double)s->sum_frag / MS__SIM_FX / s->ngpus,
                      (double)s->sum_useful / s->capacity, (int)s->nlazy,
                      s->ngpus - (int)s->nlazy, st.waiting);
}
