/* tenants.c - the simulator's tenants: declared in the scheduler at the
 * start (the configuration's, then those only the trace names), their
 * usage integrated over time between events, and their end-of-run metrics
 * with Jain's fairness index (docs/tenants.md).
 *
 * Usage is read from the scheduler (ms_sched_tenant_info: kept there per
 * start and end), O(tenants) per event, so the simulator and the scheduler
 * cannot disagree about who held what.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

static ms_status_t declare(ms__sim_t *s, const ms_sim_tenant_t *t)
{
    ms_sched_tenant_t d;
    ms_diag_t dg;
    ms_status_t st;

    d.name = t->name;
    d.weight = t->weight;
    d.guarantee = t->guarantee;
    d.limit = t->limit;
    ms_diag_clear(&dg);
    if ((st = ms_sched_tenant_set(s->sched, &d, NULL, &dg)) != MS_OK)
        ms_diag_set(s->diag, NULL, 0, "tenant", "%s: %s", t->name, dg.msg);
    return st;
}

ms_status_t ms__sim_tenants_init(ms__sim_t *s)
{
    const ms_sim_tenants_t *ts = &s->cfg->tenants;
    int k;
    size_t i;
    ms_status_t st;

    s->ten_on = ts->n > 0 || s->tr->ntenants > 0;
    if (!s->ten_on)
        return MS_OK;
    for (k = 0; k < ts->n; k++)
        if ((st = declare(s, &ts->t[k])) != MS_OK)
            return st;
    if ((s->tr2t = calloc((size_t)s->tr->ntenants + 1, sizeof(*s->tr2t))) == NULL)
        return MS_ENOMEM;
    for (k = 0; k < s->tr->ntenants; k++) {
        int t = ms_sched_tenant_find(s->sched, s->tr->tenants[k]);

        if (t < 0) {
            ms_sim_tenant_t d;

            memset(&d, 0, sizeof(d));
            snprintf(d.name, sizeof(d.name), "%s", s->tr->tenants[k]);
            d.weight = 1.0;
            d.limit = -1;
            if (ms_sched_ntenants(s->sched) >= MS_SIM_MAX_TENANTS) {
                ms_diag_set(s->diag, NULL, 0, "tenant", "more than %d tenants (the trace's "
                            "and --tenant's, the default included)", MS_SIM_MAX_TENANTS);
                return MS_ERANGE;
            }
            if ((st = declare(s, &d)) != MS_OK)
                return st;
            t = ms_sched_tenant_find(s->sched, s->tr->tenants[k]);
        }
        s->tr2t[k + 1] = t;
    }
    s->nten = ms_sched_ntenants(s->sched);
    if (s->nten > MS_SIM_MAX_TENANTS) {
        ms_diag_set(s->diag, NULL, 0, "tenant", "more than %d tenants", MS_SIM_MAX_TENANTS);
        return MS_ERANGE;
    }
    for (i = 0; i < s->tr->n; i++)
        s->ten_jobs[s->tr->req != NULL ? s->tr2t[s->tr->req[i].tenant] : 0] = true;
    return MS_OK;
}

void ms__sim_tenants_advance(ms__sim_t *s, double t)
{
    ms_sched_tenant_info_t in[MS_SIM_MAX_TENANTS];
    double dt = t - s->last_t;
    bool contended = true;
    int k;

    for (k = 0; k < s->nten; k++) {
        (void)ms_sched_tenant_info(s->sched, k, &in[k]);
        if (s->ten_jobs[k] && in[k].waiting == 0)
            contended = false;
    }
    for (k = 0; k < s->nten; k++) {
        s->ten_area[k] += (double)in[k].usage * dt;
        if (contended)
            s->ten_carea[k] += (double)in[k].usage * dt;
        if (in[k].usage > s->ten_max[k])
            s->ten_max[k] = in[k].usage;
    }
    if (contended)
        s->contended_s += dt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Waits and completion times per tenant: the waits grouped by tenant
 * (a counting sort), each group sorted for its percentile. */
static ms_status_t waits(ms__sim_t *s)
{
    ms_metrics_t *m = s->m;
    size_t n = s->tr->n, i, at[MS_SIM_MAX_TENANTS + 1], fill[MS_SIM_MAX_TENANTS];
    double *w = malloc((n ? n : 1) * sizeof(*w)), sw[MS_SIM_MAX_TENANTS] = { 0 },
           sj[MS_SIM_MAX_TENANTS] = { 0 };
    int k;

    if (w == NULL)
        return MS_ENOMEM;
    memset(at, 0, sizeof(at));
    for (i = 0; i < n; i++) {
        int t = s->tr->req != NULL ? s->tr2t[s->tr->req[i].tenant] : 0;

        m->tenants[t].jobs++;
        if (s->jobs[i].st == MS__J_DONE)
            at[t + 1]++;
    }
    for (k = 0; k < s->nten; k++) {
        at[k + 1] += at[k];
        fill[k] = at[k];
    }
    for (i = 0; i < n; i++) {
        const ms__sim_job_t *j = &s->jobs[i];
        int t = s->tr->req != NULL ? s->tr2t[s->tr->req[i].tenant] : 0;

        if (j->st != MS__J_DONE)
            continue;
        w[fill[t]++] = j->place_t - s->tr->jobs[i].arrival;
        sw[t] += j->place_t - s->tr->jobs[i].arrival;
        sj[t] += j->end_t - s->tr->jobs[i].arrival;
    }
    for (k = 0; k < s->nten; k++) {
        size_t c = at[k + 1] - at[k];
        ms_tenant_metrics_t *tm = &m->tenants[k];

        tm->completed = (long)c;
        if (c == 0)
            continue;
        qsort(w + at[k], c, sizeof(*w), cmp_double);
        tm->mean_wait_s = sw[k] / (double)c;
        tm->mean_jct_s = sj[k] / (double)c;
        tm->p99_wait_s = ms__percentile(w + at[k], c, 99);
    }
    free(w);
    return MS_OK;
}

ms_status_t ms__sim_tenants_finish(ms__sim_t *s)
{
    ms_metrics_t *m = s->m;
    double span = s->last_t - s->t0, sx = 0.0, sxx = 0.0;
    int k, nj = 0;

    m->ntenants = s->nten;
    m->contended_s = s->contended_s;
    for (k = 0; k < s->nten; k++) {
        ms_tenant_metrics_t *tm = &m->tenants[k];
        ms_sched_tenant_info_t in;

        (void)ms_sched_tenant_info(s->sched, k, &in);
        snprintf(tm->name, sizeof(tm->name), "%s", in.name);
        tm->weight = in.weight;
        tm->guarantee = in.guarantee;
        tm->limit = in.limit;
        tm->max_usage = s->ten_max[k];
        tm->usage_share = span > 0.0 ? s->ten_area[k] / (span * s->capacity) : 0.0;
        tm->contended_share = s->contended_s > 0.0
                                  ? s->ten_carea[k] / (s->contended_s * s->capacity) : 0.0;
    }
    if (waits(s) != MS_OK)
        return MS_ENOMEM;
    for (k = 0; k < s->nten; k++) {
        const ms_tenant_metrics_t *tm = &m->tenants[k];
        double x;

        if (!s->ten_jobs[k])
            continue;
        x = (s->contended_s > 0.0 ? tm->contended_share : tm->usage_share) / tm->weight;
        sx += x;
        sxx += x * x;
        nj++;
    }
    m->jain_index = nj > 0 && sxx > 0.0 ? sx * sx / ((double)nj * sxx) : 1.0;
    return MS_OK;
}
