/* experiment_stats.c - the experiment's aggregates over seeds: means and
 * sample sds of one metric, paired gains over a baseline, the gap to the
 * lower bound, and the sweeps' per-point means.
 */
#include <math.h>

#include "migsched/research/report.h"
#include "research/experiment_int.h"

double ms__xp_mean(const ms_metrics_t *m, int n, size_t off)
{
    double x[64], mu, sd;
    int i;

    for (i = 0; i < n && i < 64; i++)
        x[i] = *(const double *)(const void *)((const char *)&m[i] + off);
    ms_report_mean_sd(x, (size_t)(n < 64 ? n : 64), &mu, &sd);
    return mu;
}

double ms__xp_sd(const ms_metrics_t *m, int n, size_t off)
{
    double x[64], mu, sd;
    int i;

    for (i = 0; i < n && i < 64; i++)
        x[i] = *(const double *)(const void *)((const char *)&m[i] + off);
    ms_report_mean_sd(x, (size_t)(n < 64 ? n : 64), &mu, &sd);
    return sd;
}

double ms__xp_gain(const ms_metrics_t *base, const ms_metrics_t *x, int n, size_t off)
{
    double s = 0.0;
    int i, k = 0;

    for (i = 0; i < n; i++) {
        double b = *(const double *)(const void *)((const char *)&base[i] + off);
        double v = *(const double *)(const void *)((const char *)&x[i] + off);
        if (isfinite(b) && isfinite(v) && b > 0.0) {
            s += (b - v) / b;
            k++;
        }
    }
    return k > 0 ? 100.0 * s / k : NAN;
}

double ms__xp_gap(const ms_metrics_t *m, int n)
{
    double s = 0.0;
    int i, k = 0;

    for (i = 0; i < n; i++)
        if (m[i].lower_bound_s > 0.0 && isfinite(m[i].makespan_s)) {
            s += m[i].makespan_s / m[i].lower_bound_s - 1.0;
            k++;
        }
    return k > 0 ? 100.0 * s / k : NAN;
}

long ms__xp_sum_long(const ms_metrics_t *m, int n, size_t off)
{
    long s = 0;
    int i;

    for (i = 0; i < n; i++)
        s += *(const long *)(const void *)((const char *)&m[i] + off);
    return s;
}

double ms__xp_tsw(const ms__xp_results_t *r, int i, int k, size_t off)
{
    return ms__xp_mean(&r->tsweep[((size_t)i * 2 + (size_t)k) * (size_t)r->nsw], r->nsw, off);
}

double ms__xp_msw(const ms__xp_results_t *r, int i, int k, size_t off)
{
    return ms__xp_mean(&r->msweep[((size_t)i * 2 + (size_t)k) * (size_t)r->nsw], r->nsw, off);
}

double ms__xp_nomig(const ms__xp_results_t *r, int k, size_t off)
{
    return ms__xp_mean(&r->nomig[(size_t)k * (size_t)r->nsw], r->nsw, off);
}
