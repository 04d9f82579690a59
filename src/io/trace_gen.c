/* trace_gen.c - synthetic traces: Poisson arrivals, a profile mix and a
 * duration distribution, from a private deterministic PRNG (xoshiro256**
 * seeded by splitmix64), so a seed gives the same trace on every platform
 * with IEEE doubles and a correctly rounded libm log/exp.
 *
 * Rate from load: load = offered compute-slice load / (compute x ngpus), so
 *   rate = load * compute * ngpus / (E[c_p] * E[duration]).
 * Times are rounded to milliseconds (durations at least 1 ms).
 */
#include "migsched/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rng { uint64_t s[4]; } rng_t;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng_t *r)
{
    uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

/* Uniform in [0, 1). */
static double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

static double rng_exp(rng_t *r, double mean) { return -log1p(-rng_unit(r)) * mean; }

static double rng_normal(rng_t *r)
{
    double u1 = 1.0 - rng_unit(r), u2 = rng_unit(r);

    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static double round_ms(double v) { return floor(v * 1000.0 + 0.5) / 1000.0; }

ms_status_t ms_trace_generate(const ms_geom_t *g, const ms_gen_cfg_t *cfg, ms_trace_t **out)
{
    int np, k;
    double wsum = 0.0, ec = 0.0, edur, rate, t = 0.0, lo = 0.0, hi = 0.0, sigma = 1.0, mu = 0.0;
    double cum[MS_MAX_PROFILES];
    ms_job_t *jobs;
    rng_t r;
    uint64_t x;
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
    x = cfg->seed;
    for (k = 0; k < 4; k++)
        r.s[k] = splitmix64(&x);
    for (i = 0; i < cfg->njobs; i++) {
        double u, d;

        t += rng_exp(&r, 1.0 / rate);
        u = rng_unit(&r) * wsum;
        for (k = 0; k < np - 1 && u >= cum[k]; k++)
            ;
        while (k > 0 && (cfg->mix != NULL && cfg->mix[k] <= 0.0))
            k--;   /* u landed on a zero-weight tail: step back to a real one */
        switch (cfg->dist) {
        case 0: d = rng_exp(&r, cfg->mean_s); break;
        case 1: d = lo + (hi - lo) * rng_unit(&r); break;
        default: d = exp(mu + sigma * rng_normal(&r)); break;
        }
        d = round_ms(d);
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
