/* bound.c - makespan lower bounds (algorithms.md §7, tightened) and
 * percentiles.
 *
 * A makespan cannot beat any of:
 *   - the latest arrival + duration;
 *   - for every time t: t + (compute-slice-seconds arriving at or after t)
 *     / (compute x GPUs);
 *   - the same with memory slices over (width x GPUs);
 *   - (added, issue 11) for every t and every size class S_c = {profiles
 *     with at least c compute slices}: t + (job-seconds of S_c arriving at
 *     or after t) / (M_c x GPUs), where M_c is the most instances of S_c
 *     that one GPU can hold at once (the maximum over the geometry's
 *     maximal layouts). A GPU's instances always form a layout, so at most
 *     M_c jobs of S_c run on it at a time, each at rate <= 1. On an A100:
 *     M = 1 for {4g, 7g} (both need slices 0-3), 2 for {3g, 4g, 7g}, 3 for
 *     {2g and up}: two 4g jobs need twice their duration on one GPU, where
 *     the compute bound gives 8/7 of it. A gang of G GPUs counts G whole
 *     GPUs (M_c units each).
 * Only arrival times need checking for t (the bound is piecewise linear in t
 * with slope 1 between arrivals, so its maximum over an interval sits at the
 * interval's right end, i.e. the next arrival). One backward pass with
 * suffix sums makes it O(n x classes) on the sorted trace. A job of size p
 * uses c_p compute and m_p memory slices. Time-slicing (memory == false)
 * partitions nothing: only the compute and per-job terms apply.
 */
#include "sim/sim_int.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Size classes: thresholds on compute slices, and M per class. */
typedef struct classes {
    const ms_geom_t *g;
    int n;
    int cmin[MS_MAX_PROFILES];
    int most[MS_MAX_PROFILES];
} classes_t;

static int count_layout(void *ctx, const ms_gi_t *gis, int n)
{
    classes_t *cl = ctx;
    int q, i;

    for (q = 0; q < cl->n; q++) {
        int k = 0;
        for (i = 0; i < n; i++)
            k += ms_geom_profile(cl->g, gis[i].prof)->cslices >= cl->cmin[q];
        if (k > cl->most[q])
            cl->most[q] = k;
    }
    return 0;
}

static void classes_fill(const ms_geom_t *g, classes_t *cl)
{
    int k, q;

    memset(cl, 0, sizeof(*cl));
    cl->g = g;
    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        int c = ms_geom_profile(g, k)->cslices;
        for (q = 0; q < cl->n && cl->cmin[q] != c; q++)
            ;
        if (q == cl->n)
            cl->cmin[cl->n++] = c;
    }
    ms_geom_each_maximal(g, count_layout, cl);
}

double ms__lower_bound(const ms_trace_t *t, int ngpus, const uint8_t *skip, bool memory)
{
    const ms_geom_t *g = t->geom;
    double C = ms_geom_compute(g), W = ms_geom_width(g);
    double wc = 0.0, wm = 0.0, lb = 0.0, ws[MS_MAX_PROFILES] = {0.0};
    classes_t cl;
    size_t i;
    int q;

    if (ngpus <= 0 || t->n == 0)
        return 0.0;
    classes_fill(g, &cl);
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
            for (q = 0; q < cl.n; q++)
                if (j->gang > 1)
                    ws[q] += gang * cl.most[q] * j->duration;
                else if (p->cslices >= cl.cmin[q])
                    ws[q] += j->duration;
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
            for (q = 0; memory && q < cl.n; q++) {
                double x = cl.most[q] > 0 ? j->arrival + ws[q] / ((double)cl.most[q] * ngpus) : 0.0;
                if (x > lb && ws[q] > 0.0)
                    lb = x;
            }
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The order of a double as an unsigned key, and back: flip the sign bit
 * of a positive value and every bit of a negative one. */
static uint64_t to_key(double x)
{
    uint64_t u;

    memcpy(&u, &x, sizeof(u));
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static double from_key(uint64_t k)
{
    uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
    double x;

    memcpy(&x, &u, sizeof(x));
    return x;
}

#define RBITS 11
#define RPASS 6                        /* 6 x 11 bits >= 64 */
#define RBINS (1u << RBITS)

/* The i-th 8-byte key of a buffer that is either the keys or v's doubles
 * (the passes go back and forth between them: one array of n keys is
 * allocated, not two). memcpy: a key is never read as a double. */
static inline uint64_t key_ld(const void *base, size_t i)
{
    uint64_t k;

    memcpy(&k, (const unsigned char *)base + i * sizeof(k), sizeof(k));
    return k;
}

static inline void key_st(void *base, size_t i, uint64_t k)
{
    memcpy((unsigned char *)base + i * sizeof(k), &k, sizeof(k));
}

void ms__sort_doubles(double *v, size_t n)
{
    static_assert(sizeof(double) == sizeof(uint64_t), "a double is 64 bits");
    size_t (*cnt)[RBINS] = NULL, i;
    uint64_t *key = NULL;
    void *src, *dst;
    int b;

    if (n < 256)
        goto fallback;
    /* -0.0 and +0.0 compare equal but have two keys; a NaN has no order:
     * both (never seen in a wait) go to qsort */
    for (i = 0; i < n; i++)
        if (isnan(v[i]) || (v[i] == 0.0 && signbit(v[i])))
            goto fallback;
    cnt = calloc(RPASS, sizeof(*cnt));
    key = malloc(n * sizeof(*key));
    if (cnt == NULL || key == NULL)
        goto fallback;
    for (i = 0; i < n; i++) {
        uint64_t k = key[i] = to_key(v[i]);

        for (b = 0; b < RPASS; b++)
            cnt[b][(k >> (RBITS * b)) & (RBINS - 1)]++;
    }
    /* LSD radix, RBITS a pass: stable; a digit every key shares needs no
     * pass (the top ones, for waits of similar size) */
    src = key;
    dst = v;
    for (b = 0; b < RPASS; b++) {
        size_t at = 0, c;
        unsigned d;

        if (cnt[b][(key_ld(src, 0) >> (RBITS * b)) & (RBINS - 1)] == n)
            continue;
        for (d = 0; d < RBINS; d++) {
            c = cnt[b][d];
            cnt[b][d] = at;
            at += c;
        }
        for (i = 0; i < n; i++) {
            uint64_t k = key_ld(src, i);

            key_st(dst, cnt[b][(k >> (RBITS * b)) & (RBINS - 1)]++, k);
        }
        dst = src;
        src = src == (void *)key ? (void *)v : (void *)key;
    }
    for (i = 0; i < n; i++)
        v[i] = from_key(key_ld(src, i));
    free(cnt);
    free(key);
    return;
fallback:
    free(cnt);
    free(key);
    qsort(v, n, sizeof(*v), cmp_double);
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
