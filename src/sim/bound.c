/* bound.c - makespan lower bounds (algorithms.md §7) and percentiles.
 *
 * A makespan cannot beat any of:
 *   - the latest arrival + duration;
 *   - for every time t: t + (compute-slice-seconds arriving at or after t)
 *     / (compute x GPUs);
 *   - the same with memory slices over (width x GPUs).
 * Only arrival times need checking for t (the bound is piecewise linear in t
 * with slope 1 between arrivals, so its maximum over an interval sits at the
 * interval's right end, i.e. the next arrival). One backward pass with
 * suffix sums makes it O(n) on the sorted trace. A job of size p uses c_p
 * compute and m_p memory slices; a gang of G GPUs uses G whole GPUs.
 */
#include "sim/sim_int.h"

#include <math.h>

double ms__lower_bound(const ms_trace_t *t, int ngpus, const uint8_t *skip, bool memory)
{
    const ms_geom_t *g = t->geom;
    double C = ms_geom_compute(g), W = ms_geom_width(g);
    double wc = 0.0, wm = 0.0, lb = 0.0;
    size_t i;

    if (ngpus <= 0 || t->n == 0)
        return 0.0;
    for (i = t->n; i-- > 0;) {
        const ms_job_t *j = &t->jobs[i];

        if (skip == NULL || !skip[i]) {
            const ms_profile_t *p = ms_geom_profile(g, j->prof);
            double gang = j->gang > 1 ? j->gang : 1;

            if (j->gang > 1) {
                wc += gang * C * j->duration;
                wm += gang * W * j->duration;
            } else {
                wc += p->cslices * j->duration;
                wm += p->msize * j->duration;
            }
            if (j->arrival + j->duration > lb)
                lb = j->arrival + j->duration;
        }
        if (i == 0 || t->jobs[i - 1].arrival < j->arrival) {
            double a = j->arrival + wc / (C * ngpus);
            double b = j->arrival + wm / (W * ngpus);

            if (a > lb && wc > 0.0)
                lb = a;
            if (memory && b > lb && wm > 0.0)
                lb = b;
        }
    }
    return lb;
}

double ms_lower_bound(const ms_trace_t *t, int ngpus)
{
    if (t == NULL)
        return 0.0;
    return ms__lower_bound(t, ngpus, NULL, true);
}

double ms__percentile(const double *sorted, size_t n, double p)
{
    size_t k;

    if (n == 0)
        return 0.0;
    k = (size_t)ceil(p / 100.0 * (double)n);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}
