/* trace_gen.c - synthetic traces: Poisson arrivals, a profile mix and a
 * duration distribution, from the library's deterministic PRNG (rng.h:
 * xoshiro256** seeded by splitmix64), so a seed gives the same trace on
 * every platform with IEEE doubles and a correctly rounded libm log/exp.
 *
 * Rate from load: load = offered compute-slice load / (compute x ngpus), so
 *   rate = load * compute * ngpus / (E[c_p] * E[duration]).
 * Times are rounded to milliseconds (durations at least 1 ms, at most
 * MS_TRACE_MAX_S); a trace whose arrivals would pass MS_TRACE_MAX_S is
 * MS_ERANGE. The loop draws exactly njobs jobs.
 */
#include "migsched/rng.h"
#include "migsched/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rng_exp(ms_rng_t *r, double mean) { return -log1p(-ms_rng_unit(r)) * mean; }

static double rng_normal(ms_rng_t *r)
{
    double u1 = 1.0 - ms_rng_unit(r), u2 = ms_rng_unit(r);

    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static double round_ms(double v) { return floor(v * 1000.0 + 0.5) / 1000.0; }

ms_status_t ms_trace_generate(const ms_geom_t *g, const ms_gen_cfg_t *cfg, ms_trace_t **out)
{
    int np, k;
    double wsum = 0.0, ec = 0.0, edur, rate, t = 0.0, lo = 0.0, hi = 0.0, sigma = 1.0, mu = 0.0;
    double cum[MS_MAX_PROFILES];
    ms_job_t *jobs;
    ms_rng_t r;
    size_t i;
    ms_status_t st;

    if (g == NULL || cfg == NULL || out == NULL || cfg->njobs > (size_t)INT32_MAX)
        return MS_EINVAL;
    *out = NULL;
    np = ms_geom_nprofiles(g);
    for (k = 0; k < np; k++) {
        double w = cfg->mix != NULL ? cfg->mix[k] : 1.0;

        if (!(w >= 0.0) || !isfinite(w))
            return MS_EINVAL;
        wsum += w;
        ec += w * ms_geom_profile(g, k)->cslices;
        cum[k] = wsum;
    }
    if (!(wsum > 0.0))
        return MS_EINVAL;
    ec /= wsum;
    if (!(cfg->mean_s > 0.0) && cfg->dist != 1)
        return MS_EINVAL;
    switch (cfg->dist) {
    case 0:
        edur = cfg->mean_s;
        break;
    case 1:
        if (cfg->max_s > cfg->min_s) {
            lo = cfg->min_s;
            hi = cfg->max_s;
        } else if (cfg->mean_s > 0.0) {
            lo = 0.0;
            hi = 2.0 * cfg->mean_s;
        } else {
            return MS_EINVAL;
        }
        if (lo < 0.0)
            return MS_EINVAL;
        edur = (lo + hi) / 2.0;
        break;
    case 2:
        sigma = cfg->sigma > 0.0 ? cfg->sigma : 1.0;
        mu = log(cfg->mean_s) - sigma * sigma / 2.0;
        edur = cfg->mean_s;
        break;
    default:
        return MS_EINVAL;
    }
    rate = cfg->rate;
    if (!(rate > 0.0)) {
        if (!(cfg->load > 0.0) || cfg->ngpus <= 0)
            return MS_EINVAL;
        rate = cfg->load * ms_geom_compute(g) * cfg->ngpus / (ec * edur);
    }
    if (!isfinite(rate) || !(rate > 0.0))
        return MS_EINVAL;

    jobs = malloc((cfg->njobs ? cfg->njobs : 1) * sizeof(*jobs));
    if (jobs == NULL)
        return MS_ENOMEM;
    ms_rng_seed(&r, cfg->seed);
    for (i = 0; i < cfg->njobs; i++) {
        double u, d;

        t += rng_exp(&r, 1.0 / rate);
        if (!(round_ms(t) <= MS_TRACE_MAX_S)) {   /* a trace must read back */
            free(jobs);
            return MS_ERANGE;
        }
        u = ms_rng_unit(&r) * wsum;
        for (k = 0; k < np - 1 && u >= cum[k]; k++)
            ;
        while (k > 0 && (cfg->mix != NULL && cfg->mix[k] <= 0.0))
            k--;   /* u landed on a zero-weight tail: step back to a real one */
        switch (cfg->dist) {
        case 0: d = rng_exp(&r, cfg->mean_s); break;
        case 1: d = lo + (hi - lo) * ms_rng_unit(&r); break;
        default: d = exp(mu + sigma * rng_normal(&r)); break;
        }
        d = round_ms(d < MS_TRACE_MAX_S ? d : MS_TRACE_MAX_S);
        memset(&jobs[i], 0, sizeof(jobs[i]));
        jobs[i].prof = (int8_t)k;
        jobs[i].gang = 1;
        jobs[i].arrival = round_ms(t);
        jobs[i].duration = d < 0.001 ? 0.001 : d;
    }
    st = ms_trace_from_jobs(g, jobs, cfg->njobs, NULL, out);
    free(jobs);
    return st;
}
