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
    const ms_gpu_t *gpu = &s->c->gpus[g];
    int i;

    if (s->c->share == MS_SHARE_TIMESLICE) {
        double sum = 0.0;

        for (i = 0; i < gpu->ninst; i++)
            if (gpu->inst[i].job >= 0)
                sum += ms_geom_profile(s->g, gpu->inst[i].prof)->cslices;
        sum /= s->C;
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

    return ms__sim_heap_update(s, from + j->rem / j->rate, jid);
}

/* Recompute the rate of every job on the touched GPUs. */
ms_status_t ms__sim_update_rates(ms__sim_t *s)
{
    int t, i;
    ms_status_t st;

    for (t = 0; t < s->ntouched; t++) {
        const ms_gpu_t *gpu = &s->c->gpus[s->touched[t]];

        for (i = 0; i < gpu->ninst; i++) {
            int32_t jid = gpu->inst[i].job;
            ms__sim_job_t *j;
            double r;

            if (jid < 0)
                continue;
            j = &s->jobs[jid];
            r = job_rate(s, jid);
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
        memset(s->tmark, 0, (size_t)s->c->ngpus * sizeof(*s->tmark));
        s->stamp = 1;
    }
    return MS_OK;
}

static int gpu_useful(const ms__sim_t *s, int g)
{
    const ms_gpu_t *gpu = &s->c->gpus[g];
    int i, u = 0;

    for (i = 0; i < gpu->ninst; i++) {
        int32_t j = gpu->inst[i].job;

        if (j >= 0)
            u += ms_geom_profile(s->g, s->tr->jobs[j].gang > 1 ? gpu->inst[i].prof
                                                               : s->tr->jobs[j].prof)->cslices;
    }
    return u > s->C ? s->C : u;
}

void ms__sim_contrib(ms__sim_t *s, int g, int sign)
{
    const ms_gpu_t *gpu = &s->c->gpus[g];

    s->sum_frag += sign * s->fcost[gpu->state];
    s->sum_useful += sign * gpu_useful(s, g);
    s->nbusy[gpu->busy] += sign;
}

void ms__sim_advance(ms__sim_t *s, double t)
{
    if (t > s->last_t) {
        s->area_frag += (double)s->sum_frag / MS__SIM_FX * (t - s->last_t);
        s->area_util += (double)s->sum_useful * (t - s->last_t);
        s->last_t = t;
    }
    s->now = t;
}

void ms__sim_sample(const ms__sim_t *s, double t)
{
    int b, lazy = 0;
    double thr = s->cfg->pcfg.lb_threshold;

    for (b = 0; b < 256; b++)
        if (s->nbusy[b] > 0 && (double)b / s->C < thr)
            lazy += (int)s->nbusy[b];
    s->cfg->on_sample(s->cfg->ctx, t, (double)s->sum_frag / MS__SIM_FX / s->c->ngpus,
                      (double)s->sum_useful / ((double)s->C * s->c->ngpus), lazy,
                      s->c->ngpus - lazy, s->waiting);
}
