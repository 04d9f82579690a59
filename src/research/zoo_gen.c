/* zoo_gen.c - the zoo's workloads and their trace generator.
 *
 * Arrivals: Poisson at the rate that offers `load` of the cluster's compute
 * slices (rate = load x compute x GPUs / (E[c_p] x E[duration])), made
 * diurnal by thinning (candidates at the peak rate, each kept with
 * probability (1 + amp sin(2 pi t / period)) / (1 + amp)), so the mean rate
 * is unchanged over whole periods. Profiles from the mix; durations
 * lognormal with the given mean and sigma, from the long mode with
 * probability p_long. The RNG is rng.h's; one stream per (workload, seed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/rng.h"
#include "migsched/research/zoo.h"

#define PI 3.14159265358979323846

/* The tenants of the tenant workloads (docs/zoo.md): name, weight,
 * guarantee, priority, load, mix, mean and sigma of durations, idle window. */
static const ms_zoo_tenant_t T_SLA[] = {
    { "sla", 1, 0, 10, 0.25, "1g=2,2g=1", 300, 1.0, 0, 0 },
    { "b1", 1, 0, 0, 0.5, "3g=1,4g=1,7g=1", 1800, 1.0, 0, 0 },
    { "b2", 1, 0, 0, 0.5, "3g=1,4g=1,7g=1", 1800, 1.0, 0, 0 },
};
static const ms_zoo_tenant_t T_W21[] = {
    { "a", 2, 0, 0, 0.75, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 1.0, 0, 0 },
    { "b", 1, 0, 0, 0.75, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 1.0, 0, 0 },
};
/* weights-2to1's streams with equal weights: the "two
 * equal-weight tenants saturating the cluster" */
static const ms_zoo_tenant_t T_EQ[] = {
    { "a", 1, 0, 0, 0.75, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 1.0, 0, 0 },
    { "b", 1, 0, 0, 0.75, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 1.0, 0, 0 },
};
static const ms_zoo_tenant_t T_RECLAIM[] = {
    { "ret", 1, 28, 0, 0.5, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 1.0, 0.3, 0.6 },
    { "bg", 1, 0, 0, 1.0, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 1.0, 0, 0 },
};

static const ms_zoo_workload_t WORKLOADS[] = {
    { "seed-4xA100", "the seed's set-up: uniform mix, lognormal 600 s, high load",
      "A100-40GB", 4, 0, 1.1, 400, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "inference-4xA100", "inference-heavy: 1g 70%, 2g 20%, 7g 10%",
      "A100-40GB", 4, 0, 0.9, 400, "1g=70,2g=20,7g=10", 400, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "training-8xA100", "training-heavy: 3g/4g/7g, long jobs",
      "A100-40GB", 8, 8, 0.8, 300, "3g=20,4g=30,7g=50", 1800, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "bimodal-16xH100", "bimodal durations: 85% of 60 s, 15% of 3600 s",
      "H100-80GB", 16, 8, 1.0, 800, "1g=1,2g=1,3g=1,4g=1,7g=1", 60, 3600, 0.15, 0.5, 0, 0, NULL, 0 },
    { "diurnal-32xA100", "diurnal arrivals (amplitude 0.8, 6 h period), mixed",
      "A100-40GB", 32, 8, 0.7, 1600, "1g=30,2g=25,3g=20,4g=15,7g=10", 900, 0, 0, 1.0, 0.8, 21600, NULL, 0 },
    { "a30-8", "A30-24GB: 1g/2g/4g uniform",
      "A30-24GB", 8, 4, 0.9, 400, "1g=1,2g=1,4g=1", 600, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "hi-8xA100", "load 1.2 on 8 A100s, mix leaning small",
      "A100-40GB", 8, 8, 1.2, 500, "1g=30,2g=25,3g=20,4g=15,7g=10", 600, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "h100-256", "256 H100-80GB at load 0.6, mixed, long jobs",
      "H100-80GB", 256, 8, 0.6, 3072, "1g=40,2g=25,3g=15,4g=10,7g=10", 1200, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "cluster-1024xA100", "1,024 A100s at load 0.5, two jobs per GPU",
      "A100-40GB", 1024, 8, 0.5, 2048, "1g=30,2g=25,3g=20,4g=15,7g=10", 900, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "overload-64xA100", "load 1.3, heavy-tailed durations (sigma 1.5)",
      "A100-40GB", 64, 8, 1.3, 2000, "1g=50,2g=20,3g=10,4g=10,7g=10", 600, 0, 0, 1.5, 0, 0, NULL, 0 },
    { "diurnal-inf-32xH100", "diurnal inference with bimodal durations and 7g jobs",
      "H100-80GB", 32, 8, 0.9, 2000, "1g=60,2g=25,7g=15", 120, 2400, 0.2, 0.5, 0.9, 14400, NULL, 0 },
    { "a30-bimodal-32", "32 A30s, bimodal durations, load 1.0",
      "A30-24GB", 32, 4, 1.0, 1200, "1g=50,2g=30,4g=20", 90, 3000, 0.2, 0.5, 0, 0, NULL, 0 },
    { "saturated-64xA100", "64 A100s at load 1.1 for 60 jobs per GPU: queues that persist",
      "A100-40GB", 64, 8, 1.1, 4000, "1g=3,2g=2,3g=1,4g=1,7g=1", 600, 0, 0, 1.0, 0, 0, NULL, 0 },
    { "sla-2batch-8xA100", "tenants: SLA inference (priority 10, 1g/2g, load 0.25) beside two "
      "batch tenants (3g/4g/7g, load 0.5 each): saturated",
      "A100-40GB", 8, 8, 1.25, 1600, "", 300, 0, 0, 1.0, 0, 0, T_SLA, 3 },
    { "weights-2to1-8xA100", "tenants: a (weight 2) and b (weight 1), load 0.75 each, mixed",
      "A100-40GB", 8, 8, 1.5, 2000, "", 600, 0, 0, 1.0, 0, 0, T_W21, 2 },
    { "reclaim-8xA100", "tenants: ret (guarantee 28 slices) idle from 30% to 60% of the span, "
      "bg (load 1.0) borrows meanwhile",
      "A100-40GB", 8, 8, 1.5, 2000, "", 600, 0, 0, 1.0, 0, 0, T_RECLAIM, 2 },
    { "equal-8xA100", "tenants: a and b of equal weight, load 0.75 each, mixed (weights-2to1's "
      "jobs)",
      "A100-40GB", 8, 8, 1.5, 2000, "", 600, 0, 0, 1.0, 0, 0, T_EQ, 2 },
};

const ms_zoo_workload_t *ms_zoo_workloads(int *n)
{
    if (n != NULL)
        *n = (int)(sizeof(WORKLOADS) / sizeof(WORKLOADS[0]));
    return WORKLOADS;
}

/* "1g=70,2g=20": weights per active profile. */
static ms_status_t parse_mix(const char *mix, const ms_geom_t *g, double *w, ms_diag_t *diag)
{
    const char *p = mix;
    double total = 0.0;
    int k;

    for (k = 0; k < ms_geom_nprofiles(g); k++)
        w[k] = 0.0;
    while (*p != '\0') {
        const char *eq = strchr(p, '='), *end;
        char name[32], *num_end;
        size_t len;
        double v;

        if (eq == NULL || (size_t)(eq - p) >= sizeof(name))
            goto bad;
        len = (size_t)(eq - p);
        memcpy(name, p, len);
        name[len] = '\0';
        v = strtod(eq + 1, &num_end);
        end = num_end;
        if (end == eq + 1 || !(v >= 0.0) || (*end != ',' && *end != '\0') ||
            (k = ms_geom_profile_find(g, name)) < 0)
            goto bad;
        w[k] += v;
        total += v;
        p = *end == ',' ? end + 1 : end;
    }
    if (total > 0.0)
        return MS_OK;
bad:
    ms_diag_set(diag, "zoo", 0, "mix", "bad profile mix '%s' for %s", mix,
                ms_geom_model(g)->name);
    return MS_EINVAL;
}

static double lognormal(ms_rng_t *r, double mean, double sigma)
{
    double u1 = ms_rng_unit(r), u2 = ms_rng_unit(r), z;

    if (u1 < 1e-300)
        u1 = 1e-300;
    z = sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
    return exp(log(mean) - 0.5 * sigma * sigma + sigma * z);
}

/* One stream of arrivals: a workload's, or one tenant's. */
typedef struct stream {
    const char *mix;
    double load, short_s, long_s, p_long, sigma, amp, period;
    double idle_from_s, idle_to_s;   /* no arrivals in [from, to) */
    double wt[MS_MAX_PROFILES], cum[MS_MAX_PROFILES], total;
    double rate;                     /* mean arrivals per second */
} stream_t;

/* The stream's profile weights and arrival rate on ngpus GPUs of g. */
static ms_status_t stream_prepare(stream_t *st, const ms_geom_t *g, int ngpus, ms_diag_t *diag)
{
    int np = ms_geom_nprofiles(g), k;
    double ec = 0.0, ed;
    ms_status_t rc;

    if ((rc = parse_mix(st->mix, g, st->wt, diag)) != MS_OK)
        return rc;
    st->total = 0.0;
    for (k = 0; k < np; k++) {
        st->total += st->wt[k];
        st->cum[k] = st->total;
        ec += st->wt[k] * ms_geom_profile(g, k)->cslices;
    }
    ec /= st->total;
    ed = st->p_long > 0.0 ? (1.0 - st->p_long) * st->short_s + st->p_long * st->long_s
                          : st->short_s;
    st->rate = st->load * ms_geom_compute(g) * ngpus / (ec * ed);
    return MS_OK;
}

/* n jobs of the stream into jobs[0..n), arrivals from 0. */
static void stream_gen(const stream_t *st, const ms_geom_t *g, ms_rng_t *rng, ms_job_t *jobs,
                       size_t n)
{
    double peak = st->rate * (1.0 + st->amp), t = 0.0;
    int np = ms_geom_nprofiles(g), k;
    size_t i;

    for (i = 0; i < n; i++) {
        double u, x, mean;
        for (;;) {
            t += -log(1.0 - ms_rng_unit(rng)) / peak;
            if (t >= st->idle_from_s && t < st->idle_to_s) {
                t = st->idle_to_s;   /* the tenant is away: nothing arrives */
                continue;
            }
            if (st->amp <= 0.0 || st->period <= 0.0)
                break;
            if (ms_rng_unit(rng) * (1.0 + st->amp) < 1.0 + st->amp * sin(2.0 * PI * t / st->period))
                break;
        }
        u = ms_rng_unit(rng) * st->total;
        for (k = 0; k < np - 1 && (u >= st->cum[k] || st->wt[k] <= 0.0); k++)
            ;
        mean = st->p_long > 0.0 && ms_rng_unit(rng) < st->p_long ? st->long_s : st->short_s;
        x = st->sigma > 0.0 ? lognormal(rng, mean, st->sigma) : mean;
        jobs[i].idx = (int32_t)i;
        jobs[i].prof = (int8_t)k;
        jobs[i].gang = 1;
        jobs[i].arrival = floor(t * 1000.0 + 0.5) / 1000.0;
        jobs[i].duration = x < 1.0 ? 1.0 : floor(x * 1000.0 + 0.5) / 1000.0;
    }
}

static uint64_t stream_seed(const ms_zoo_workload_t *w, uint64_t seed)
{
    return seed * 0x9E3779B97F4A7C15ull ^ (uint64_t)w->ngpus ^ ((uint64_t)w->jobs << 20);
}

/* A job of a tenant workload, while the streams are merged. */
typedef struct tjob {
    ms_job_t j;
    uint16_t tenant;   /* 1 + its index */
} tjob_t;

static int tjob_cmp(const void *a, const void *b)
{
    const tjob_t *x = a, *y = b;

    if (x->j.arrival != y->j.arrival)
        return x->j.arrival < y->j.arrival ? -1 : 1;
    if (x->tenant != y->tenant)
        return x->tenant < y->tenant ? -1 : 1;
    return x->j.idx < y->j.idx ? -1 : x->j.idx > y->j.idx;
}

/* The trace's tenant column and priorities, from the merged jobs. */
static ms_status_t set_tenants(const ms_zoo_workload_t *w, const tjob_t *tj, ms_trace_t *tr)
{
    size_t i;
    int k;

    if ((tr->req = calloc(tr->n, sizeof(*tr->req))) == NULL ||
        (tr->tenants = calloc((size_t)w->ntenants, sizeof(*tr->tenants))) == NULL)
        return MS_ENOMEM;
    for (k = 0; k < w->ntenants; k++) {
        size_t len = strlen(w->tenants[k].name) + 1;

        if ((tr->tenants[k] = malloc(len)) == NULL)
            return MS_ENOMEM;
        memcpy(tr->tenants[k], w->tenants[k].name, len);
        tr->ntenants = k + 1;
    }
    for (i = 0; i < tr->n; i++) {
        tr->req[i].tenant = tj[i].tenant;
        tr->req[i].priority = w->tenants[tj[i].tenant - 1].priority;
    }
    return MS_OK;
}

/* A workload with tenants: each tenant's stream alone (its own seed), n
 * jobs split by the streams' rates so that all span the same time, merged
 * by arrival. */
static ms_status_t tenant_trace(const ms_zoo_workload_t *w, const ms_geom_t *g, uint64_t seed,
                                ms_trace_t **out, ms_diag_t *diag)
{
    stream_t st[MS_SIM_MAX_TENANTS];
    size_t cnt[MS_SIM_MAX_TENANTS], n = 0, i;
    double rate = 0.0, span;
    tjob_t *tj;
    ms_job_t *jobs;
    ms_status_t rc = MS_OK;
    int k;

    if (w->ntenants <= 0 || w->ntenants > MS_SIM_MAX_TENANTS - 1)
        return MS_EINVAL;
    for (k = 0; k < w->ntenants; k++) {
        const ms_zoo_tenant_t *t = &w->tenants[k];

        memset(&st[k], 0, sizeof(st[k]));
        st[k].mix = t->mix;
        st[k].load = t->load;
        st[k].short_s = t->mean_s;
        st[k].sigma = t->sigma;
        if (!(t->load > 0.0) || !(t->mean_s > 0.0))
            return MS_EINVAL;
        if ((rc = stream_prepare(&st[k], g, w->ngpus, diag)) != MS_OK)
            return rc;
        rate += st[k].rate;
    }
    span = (double)w->jobs / rate;
    for (k = 0; k < w->ntenants; k++) {
        cnt[k] = (size_t)ceil((double)w->jobs * st[k].rate / rate);
        st[k].idle_from_s = w->tenants[k].idle_from * span;
        st[k].idle_to_s = w->tenants[k].idle_to * span;
        n += cnt[k];
    }
    tj = calloc(n, sizeof(*tj));
    jobs = calloc(n, sizeof(*jobs));
    if (tj == NULL || jobs == NULL) {
        rc = MS_ENOMEM;
        goto out;
    }
    for (k = 0, i = 0; k < w->ntenants; i += cnt[k], k++) {
        ms_rng_t rng;
        size_t q;

        ms_rng_seed(&rng, stream_seed(w, seed) ^ ((uint64_t)(k + 1) << 40));
        stream_gen(&st[k], g, &rng, jobs + i, cnt[k]);
        for (q = 0; q < cnt[k]; q++) {
            tj[i + q].j = jobs[i + q];
            tj[i + q].tenant = (uint16_t)(k + 1);
        }
    }
    qsort(tj, n, sizeof(*tj), tjob_cmp);
    for (i = 0; i < n; i++) {
        jobs[i] = tj[i].j;
        jobs[i].idx = (int32_t)i;
    }
    if ((rc = ms_trace_from_jobs(g, jobs, n, NULL, out)) == MS_OK &&
        (rc = set_tenants(w, tj, *out)) != MS_OK) {
        ms_trace_free(*out);
        *out = NULL;
    }
out:
    free(tj);
    free(jobs);
    return rc;
}

ms_status_t ms_zoo_trace(const ms_zoo_workload_t *w, const ms_geom_t *g, uint64_t seed,
                         ms_trace_t **out, ms_diag_t *diag)
{
    stream_t st;
    ms_job_t *jobs;
    ms_rng_t rng;
    ms_status_t rc;

    if (w->jobs == 0 || w->ngpus <= 0 || !(w->load > 0.0) || !(w->short_s > 0.0))
        return MS_EINVAL;
    if (w->ntenants > 0)
        return tenant_trace(w, g, seed, out, diag);
    memset(&st, 0, sizeof(st));
    st.mix = w->mix;
    st.load = w->load;
    st.short_s = w->short_s;
    st.long_s = w->long_s;
    st.p_long = w->p_long;
    st.sigma = w->sigma;
    st.amp = w->diurnal_amp;
    st.period = w->diurnal_period_s;
    if ((rc = stream_prepare(&st, g, w->ngpus, diag)) != MS_OK)
        return rc;
    if ((jobs = calloc(w->jobs, sizeof(*jobs))) == NULL)
        return MS_ENOMEM;
    ms_rng_seed(&rng, stream_seed(w, seed));
    stream_gen(&st, g, &rng, jobs, w->jobs);
    rc = ms_trace_from_jobs(g, jobs, w->jobs, NULL, out);
    free(jobs);
    return rc;
}
