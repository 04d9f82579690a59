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

static const ms_zoo_workload_t WORKLOADS[] = {
    { "seed-4xA100", "the seed's set-up: uniform mix, lognormal 600 s, high load",
      "A100-40GB", 4, 0, 1.1, 400, "1g=1,2g=1,3g=1,4g=1,7g=1", 600, 0, 0, 1.0, 0, 0 },
    { "inference-4xA100", "inference-heavy: 1g 70%, 2g 20%, 7g 10%",
      "A100-40GB", 4, 0, 0.9, 400, "1g=70,2g=20,7g=10", 400, 0, 0, 1.0, 0, 0 },
    { "training-8xA100", "training-heavy: 3g/4g/7g, long jobs",
      "A100-40GB", 8, 8, 0.8, 300, "3g=20,4g=30,7g=50", 1800, 0, 0, 1.0, 0, 0 },
    { "bimodal-16xH100", "bimodal durations: 85% of 60 s, 15% of 3600 s",
      "H100-80GB", 16, 8, 1.0, 800, "1g=1,2g=1,3g=1,4g=1,7g=1", 60, 3600, 0.15, 0.5, 0, 0 },
    { "diurnal-32xA100", "diurnal arrivals (amplitude 0.8, 6 h period), mixed",
      "A100-40GB", 32, 8, 0.7, 1600, "1g=30,2g=25,3g=20,4g=15,7g=10", 900, 0, 0, 1.0, 0.8, 21600 },
    { "a30-8", "A30-24GB: 1g/2g/4g uniform",
      "A30-24GB", 8, 4, 0.9, 400, "1g=1,2g=1,4g=1", 600, 0, 0, 1.0, 0, 0 },
    { "hi-8xA100", "load 1.2 on 8 A100s, mix leaning small",
      "A100-40GB", 8, 8, 1.2, 500, "1g=30,2g=25,3g=20,4g=15,7g=10", 600, 0, 0, 1.0, 0, 0 },
    { "h100-256", "256 H100-80GB at load 0.6, mixed, long jobs",
      "H100-80GB", 256, 8, 0.6, 3072, "1g=40,2g=25,3g=15,4g=10,7g=10", 1200, 0, 0, 1.0, 0, 0 },
    { "cluster-1024xA100", "1,024 A100s at load 0.5, two jobs per GPU",
      "A100-40GB", 1024, 8, 0.5, 2048, "1g=30,2g=25,3g=20,4g=15,7g=10", 900, 0, 0, 1.0, 0, 0 },
    { "overload-64xA100", "load 1.3, heavy-tailed durations (sigma 1.5)",
      "A100-40GB", 64, 8, 1.3, 2000, "1g=50,2g=20,3g=10,4g=10,7g=10", 600, 0, 0, 1.5, 0, 0 },
    { "diurnal-inf-32xH100", "diurnal inference with bimodal durations and 7g jobs",
      "H100-80GB", 32, 8, 0.9, 2000, "1g=60,2g=25,7g=15", 120, 2400, 0.2, 0.5, 0.9, 14400 },
    { "a30-bimodal-32", "32 A30s, bimodal durations, load 1.0",
      "A30-24GB", 32, 4, 1.0, 1200, "1g=50,2g=30,4g=20", 90, 3000, 0.2, 0.5, 0, 0 },
    { "saturated-64xA100", "64 A100s at load 1.1 for 60 jobs per GPU: queues that persist",
      "A100-40GB", 64, 8, 1.1, 4000, "1g=3,2g=2,3g=1,4g=1,7g=1", 600, 0, 0, 1.0, 0, 0 },
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

ms_status_t ms_zoo_trace(const ms_zoo_workload_t *w, const ms_geom_t *g, uint64_t seed,
                         ms_trace_t **out, ms_diag_t *diag)
{
    double wt[MS_MAX_PROFILES], cum[MS_MAX_PROFILES], total = 0.0, ec = 0.0, ed, rate, peak, t = 0.0;
    int np = ms_geom_nprofiles(g), k;
    ms_job_t *jobs;
    ms_rng_t rng;
    ms_status_t st;
    size_t i;

    if (w->jobs == 0 || w->ngpus <= 0 || !(w->load > 0.0) || !(w->short_s > 0.0))
        return MS_EINVAL;
    if ((st = parse_mix(w->mix, g, wt, diag)) != MS_OK)
        return st;
    for (k = 0; k < np; k++) {
        total += wt[k];
        cum[k] = total;
        ec += wt[k] * ms_geom_profile(g, k)->cslices;
    }
    ec /= total;
    ed = w->p_long > 0.0 ? (1.0 - w->p_long) * w->short_s + w->p_long * w->long_s : w->short_s;
    rate = w->load * ms_geom_compute(g) * w->ngpus / (ec * ed);
    peak = rate * (1.0 + w->diurnal_amp);
    if ((jobs = calloc(w->jobs, sizeof(*jobs))) == NULL)
        return MS_ENOMEM;
    ms_rng_seed(&rng, seed * 0x9E3779B97F4A7C15ull ^ (uint64_t)w->ngpus ^ ((uint64_t)w->jobs << 20));
    for (i = 0; i < w->jobs; i++) {
        double u, x, mean;
        for (;;) {
            t += -log(1.0 - ms_rng_unit(&rng)) / peak;
            if (w->diurnal_amp <= 0.0 || w->diurnal_period_s <= 0.0)
                break;
            if (ms_rng_unit(&rng) * (1.0 + w->diurnal_amp) <
                1.0 + w->diurnal_amp * sin(2.0 * PI * t / w->diurnal_period_s))
                break;
        }
        u = ms_rng_unit(&rng) * total;
        for (k = 0; k < np - 1 && (u >= cum[k] || wt[k] <= 0.0); k++)
            ;
        mean = w->p_long > 0.0 && ms_rng_unit(&rng) < w->p_long ? w->long_s : w->short_s;
        x = w->sigma > 0.0 ? lognormal(&rng, mean, w->sigma) : mean;
        jobs[i].idx = (int32_t)i;
        jobs[i].prof = (int8_t)k;
        jobs[i].gang = 1;
        jobs[i].arrival = floor(t * 1000.0 + 0.5) / 1000.0;
        jobs[i].duration = x < 1.0 ? 1.0 : floor(x * 1000.0 + 0.5) / 1000.0;
    }
    st = ms_trace_from_jobs(g, jobs, w->jobs, NULL, out);
    free(jobs);
    return st;
}
