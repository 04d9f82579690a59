/* metrics.c - the simulator's end-of-run metrics: waits and their
 * percentiles, execution and completion times, slowdown, time-weighted
 * FragCost and utilisation, and the makespan lower bound.
 */
#include <math.h>
#include <stdlib.h>

#include "sim/sim_int.h"

static int job_prio(const ms__sim_t *s, size_t i)
{
    return s->tr->req != NULL ? s->tr->req[i].priority : 0;
}

/* Waits and JCT per priority class (the distinct priorities of the trace,
 * highest first, at most MS_SIM_MAX_PRIOS of them), after the whole
 * run's (ndone completed jobs); w is scratch. */
static void prio_metrics(ms__sim_t *s, double *w, size_t ndone)
{
    ms_metrics_t *m = s->m;
    size_t i;
    int k, q;

    m->nprio = 0;
    for (i = 0; i < s->tr->n; i++) {
        int p = job_prio(s, i);

        for (k = 0; k < m->nprio && m->prio[k].priority != p; k++)
            ;
        if (k < m->nprio)
            continue;
        if (m->nprio == MS_SIM_MAX_PRIOS && p < m->prio[m->nprio - 1].priority)
            continue;
        if (m->nprio < MS_SIM_MAX_PRIOS)
            m->nprio++;
        for (k = m->nprio - 1; k > 0 && m->prio[k - 1].priority < p; k--)
            m->prio[k].priority = m->prio[k - 1].priority;
        m->prio[k].priority = p;
    }
    if (m->nprio == 1) {
        /* one class: every completed job, in the same order, so the same
         * sums and sorted waits as the whole run's (a second sort of the
         * waits was a third of the metrics' cost, issue 25) */
        m->prio[0].jobs = (long)ndone;
        m->prio[0].mean_wait_s = ndone > 0 ? m->mean_wait_s : 0.0;
        m->prio[0].mean_jct_s = ndone > 0 ? m->mean_jct_s : 0.0;
        m->prio[0].p99_wait_s = ndone > 0 ? m->p99_wait_s : 0.0;
        return;
    }
    for (q = 0; q < m->nprio; q++) {
        size_t n = 0;
        double sw = 0.0, sj = 0.0;

        for (i = 0; i < s->tr->n; i++) {
            const ms__sim_job_t *j = &s->jobs[i];

            if (j->st != MS__J_DONE || job_prio(s, i) != m->prio[q].priority)
                continue;
            w[n++] = j->place_t - s->tr->jobs[i].arrival;
            sw += j->place_t - s->tr->jobs[i].arrival;
            sj += j->end_t - s->tr->jobs[i].arrival;
        }
        m->prio[q].jobs = (long)n;
        m->prio[q].mean_wait_s = m->prio[q].p99_wait_s = m->prio[q].mean_jct_s = 0.0;
        if (n == 0)
            continue;
        ms__sort_doubles(w, n);
        m->prio[q].mean_wait_s = sw / (double)n;
        m->prio[q].mean_jct_s = sj / (double)n;
        m->prio[q].p99_wait_s = ms__percentile(w, n, 99);
    }
}

ms_status_t ms__sim_finish_metrics(ms__sim_t *s)
{
    ms_metrics_t *m = s->m;
    size_t i, n = 0;
    double *w, sw = 0.0, se = 0.0, sj = 0.0, ss = 0.0, span;
    uint8_t *skip;

    w = malloc((s->tr->n ? s->tr->n : 1) * sizeof(*w));
    skip = malloc(s->tr->n ? s->tr->n : 1);
    if (w == NULL || skip == NULL) {
        free(w);
        free(skip);
        return MS_ENOMEM;
    }
    m->makespan_s = 0.0;
    for (i = 0; i < s->tr->n; i++) {
        const ms__sim_job_t *j = &s->jobs[i];
        const ms_job_t *tj = &s->tr->jobs[i];

        skip[i] = j->st == MS__J_REJECTED;
        if (j->st != MS__J_DONE)
            continue;
        w[n++] = j->place_t - tj->arrival;
        sw += j->place_t - tj->arrival;
        se += j->end_t - j->place_t;
        sj += j->end_t - tj->arrival;
        ss += tj->duration > 0.0 ? (j->end_t - j->place_t) / tj->duration : 1.0;
        m->work_s += tj->duration;
        if (j->end_t > m->makespan_s)
            m->makespan_s = j->end_t;
    }
    ms__sort_doubles(w, n);
    if (n > 0) {
        m->mean_wait_s = sw / (double)n;
        m->mean_exec_s = se / (double)n;
        m->mean_jct_s = sj / (double)n;
        m->mean_slowdown = ss / (double)n;
        m->p50_wait_s = ms__percentile(w, n, 50);
        m->p95_wait_s = ms__percentile(w, n, 95);
        m->p99_wait_s = ms__percentile(w, n, 99);
        m->max_wait_s = w[n - 1];
    }
    span = s->last_t - s->t0;
    if (span > 0.0) {
        m->mean_fragcost = s->area_frag / (span * s->ngpus);
        /* one group: the product in the order it always had (byte-identical) */
        m->mean_utilization = s->ngroups == 1
                                  ? s->area_util / (span * (double)s->grp[0].C * s->ngpus)
                                  : s->area_util / (span * s->capacity);
    } else {
        m->mean_fragcost = (double)s->sum_frag / MS__SIM_FX / s->ngpus;
        m->mean_utilization = (double)s->sum_useful / s->capacity;
    }
    m->lower_bound_s = s->ngroups == 1 && s->grp[0].g == s->tr->geom
                           ? ms__lower_bound(s->tr, s->ngpus, skip, s->grp[0].share == MS_SHARE_MIG)
                           : ms__lower_bound_mixed(s, skip);
    m->preempt = s->cfg->sched.preempt;
    prio_metrics(s, w, n);
    free(w);
    free(skip);
    return MS_OK;
}

double ms__lower_bound_mixed(const ms__sim_t *s, const uint8_t *skip)
{
    size_t i;
    double lb = 0.0, work = 0.0, first = INFINITY;
    int k;

    for (i = 0; i < s->tr->n; i++) {
        const ms_job_t *j = &s->tr->jobs[i];
        double share = INFINITY;

        if (skip != NULL && skip[i])
            continue;
        if (j->arrival < first)
            first = j->arrival;
        if (j->arrival + j->duration > lb)
            lb = j->arrival + j->duration;
        for (k = 0; k < s->ngroups; k++) {
            /* a job needs at least one compute slice of C on any model */
            double x = j->gang > 1 ? (double)j->gang : 1.0 / s->grp[k].C;

            if (x < share)
                share = x;
        }
        if (share < INFINITY)
            work += share * j->duration;
    }
    if (first < INFINITY && first + work / s->ngpus > lb)
        lb = first + work / s->ngpus;
    return lb;
}
