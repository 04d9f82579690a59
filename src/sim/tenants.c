/* tenants.c - the simulator's tenants: declared in the scheduler at the
 * start (the configuration's, then those only the trace names), their
 * usage integrated over time between events, and their end-of-run metrics
 * with Jain's fairness index, over the run and per hour, and the reclaim
 * times of tenants with a guarantee (docs/tenants.md).
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
    d.mem_limit_gb = t->mem_limit_gb;
    d.mem_guarantee_gb = t->mem_guarantee_gb;
    d.nmodel_limits = t->nmodel_limits;
    memcpy(d.model_limits, t->model_limits, sizeof(d.model_limits));
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
    for (k = 0; k < MS_SIM_MAX_TENANTS; k++)
        s->rc_since[k] = NAN;
    return MS_OK;
}

void ms__sim_tenants_arrive(ms__sim_t *s, int k)
{
    ms_sched_tenant_info_t in;

    /* a demand that returns below the guarantee: from the arrival (the
     * submit may start it at once: a reclaim of 0 s) */
    if (k < 0 || k >= s->nten || !isnan(s->rc_since[k]) ||
        ms_sched_tenant_info(s->sched, k, &in) != MS_OK)
        return;
    if (in.guarantee > 0 && in.waiting == 0 && in.usage < in.guarantee)
        s->rc_since[k] = s->now;
}

/* Room for hour h (zeroed); false when out of memory. */
static bool hour_room(ms__sim_t *s, size_t h)
{
    size_t cap = s->caphr ? s->caphr : 64, row = MS_SIM_MAX_TENANTS * sizeof(double);
    double *a;

    if (h < s->nhr)
        return true;
    while (cap <= h)
        cap *= 2;
    if (cap > s->caphr) {
        if ((a = realloc(s->hr_area, cap * row)) == NULL)
            return false;
        s->hr_area = a;
        if ((a = realloc(s->hr_wait, cap * row)) == NULL)
            return false;
        s->hr_wait = a;
        s->caphr = cap;
    }
    memset(s->hr_area + s->nhr * MS_SIM_MAX_TENANTS, 0, (h + 1 - s->nhr) * row);
    memset(s->hr_wait + s->nhr * MS_SIM_MAX_TENANTS, 0, (h + 1 - s->nhr) * row);
    s->nhr = h + 1;
    return true;
}

/* [a, b) of the state in into the hours it covers. */
static void hours_add(ms__sim_t *s, const ms_sched_tenant_info_t *in, double a, double b)
{
    while (a < b) {
        double hf = floor((a - s->t0) / 3600.0), he, e;
        size_t h;
        int k;

        if (!(hf >= 0.0))
            hf = 0.0;
        he = s->t0 + (hf + 1.0) * 3600.0;
        if (he <= a) {   /* a on an hour's edge, rounded below it */
            hf += 1.0;
            he = s->t0 + (hf + 1.0) * 3600.0;
        }
        e = b < he ? b : he;
        h = (size_t)hf;
        if (!hour_room(s, h)) {
            s->hr_nomem = true;
            return;
        }
        for (k = 0; k < s->nten; k++) {
            s->hr_area[h * MS_SIM_MAX_TENANTS + (size_t)k] += (double)in[k].usage * (e - a);
            if (in[k].waiting > 0)
                s->hr_wait[h * MS_SIM_MAX_TENANTS + (size_t)k] += e - a;
        }
        a = e;
    }
}

/* A reclaim ends when the state since the last event holds the guarantee,
 * or nothing of the tenant waits (its demand was smaller). */
static void reclaim_ends(ms__sim_t *s, const ms_sched_tenant_info_t *in)
{
    int k;

    for (k = 0; k < s->nten; k++) {
        double d;

        if (isnan(s->rc_since[k]) || (in[k].usage < in[k].guarantee && in[k].waiting > 0))
            continue;
        d = s->last_t - s->rc_since[k];
        s->rc_n[k]++;
        s->rc_sum[k] += d;
        if (d > s->rc_max[k])
            s->rc_max[k] = d;
        s->rc_since[k] = NAN;
    }
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
    hours_add(s, in, s->last_t, t);
    reclaim_ends(s, in);
}

void ms__sim_tenants_over_limit(ms__sim_t *s, int32_t jid, int32_t slot)
{
    ms_metrics_t *m = s->m;
    ms_diag_t d;

    ms_diag_clear(&d);
    if (ms_sched_tenant_check_slot(s->sched, slot, &d) != MS_ENOFIT)
        return;
    if (m->over_limit++ > 0)
        return;
    if (s->tr->names != NULL)
        snprintf(m->over_limit_id, sizeof(m->over_limit_id), "%s",
                 s->tr->names + s->tr->name_off[jid]);
    else
        snprintf(m->over_limit_id, sizeof(m->over_limit_id), "%d", (int)jid);
    snprintf(m->over_limit_why, sizeof(m->over_limit_why), "%s", d.msg);
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
        ms__sort_doubles(w + at[k], c);
        tm->mean_wait_s = sw[k] / (double)c;
        tm->mean_jct_s = sj[k] / (double)c;
        tm->p99_wait_s = ms__percentile(w + at[k], c, 99);
    }
    free(w);
    return MS_OK;
}

/* Jain's index of each hour over the tenants with a job waiting
 * throughout it (each could have been given more all hour: a tenant whose
 * queue emptied got what it asked, and one whose jobs ran out in the hour,
 * as at the end of a run, holds less for no fault of the scheduler), and
 * the least over the whole hours after the first. */
static void hourly(ms__sim_t *s)
{
    ms_metrics_t *m = s->m;
    size_t h;
    int k;

    m->jain_hours = (long)s->nhr;
    m->jain_hourly_min = NAN;
    for (h = 0; h < s->nhr; h++) {
        double len = s->last_t - (s->t0 + 3600.0 * (double)h), sx = 0.0, sxx = 0.0, j;
        int n = 0;

        if (len > 3600.0)
            len = 3600.0;
        for (k = 0; k < s->nten && len > 0.0; k++) {
            double share = s->hr_area[h * MS_SIM_MAX_TENANTS + (size_t)k] /
                           (len * s->capacity), x;

            if (h < MS_SIM_MAX_HOURS)
                m->share_hourly[h][k] = share;
            /* a millionth of the hour's length: the rounding of its sum */
            if (s->hr_wait[h * MS_SIM_MAX_TENANTS + (size_t)k] < len * (1.0 - 1e-9) - 1e-9)
                continue;
            x = share / m->tenants[k].weight;
            sx += x;
            sxx += x * x;
            n++;
        }
        j = n == 0 ? NAN : sxx > 0.0 ? sx * sx / ((double)n * sxx) : 1.0;
        if (h < MS_SIM_MAX_HOURS)
            m->jain_hourly[h] = j;
        if (h >= 1 && len >= 3600.0 && !isnan(j) && !(j >= m->jain_hourly_min))
            m->jain_hourly_min = j;
    }
}

ms_status_t ms__sim_tenants_finish(ms__sim_t *s)
{
    ms_metrics_t *m = s->m;
    ms_sched_tenant_info_t now[MS_SIM_MAX_TENANTS];
    double span = s->last_t - s->t0, sx = 0.0, sxx = 0.0;
    int k, nj = 0;

    m->ntenants = s->nten;
    m->contended_s = s->contended_s;
    /* the state after the last event ends what it ends, as an interval
     * after it would */
    for (k = 0; k < s->nten; k++)
        (void)ms_sched_tenant_info(s->sched, k, &now[k]);
    reclaim_ends(s, now);
    for (k = 0; k < s->nten; k++) {
        ms_tenant_metrics_t *tm = &m->tenants[k];
        const ms_sched_tenant_info_t *inp = &now[k];

        snprintf(tm->name, sizeof(tm->name), "%s", inp->name);
        tm->weight = inp->weight;
        tm->guarantee = inp->guarantee;
        tm->limit = inp->limit;
        tm->max_usage = s->ten_max[k];
        tm->usage_share = span > 0.0 ? s->ten_area[k] / (span * s->capacity) : 0.0;
        tm->contended_share = s->contended_s > 0.0
                                  ? s->ten_carea[k] / (s->contended_s * s->capacity) : 0.0;
        tm->reclaims = s->rc_n[k];
        tm->reclaims_open = isnan(s->rc_since[k]) ? 0 : 1;
        tm->reclaim_max_s = s->rc_n[k] > 0 ? s->rc_max[k] : NAN;
        tm->reclaim_mean_s = s->rc_n[k] > 0 ? s->rc_sum[k] / (double)s->rc_n[k] : NAN;
    }
    if (s->hr_nomem)
        return MS_ENOMEM;
    hourly(s);
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
