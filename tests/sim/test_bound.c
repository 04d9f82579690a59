/* test_bound.c - the size-class term of the lower bound (bound.c) on hand
 * examples whose optimum is known; that every policy's makespan stays
 * above the bound on random traces is test_sim.c's property. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/sim.h"
#include "sim/sim_int.h"

static ms_job_t mk(const ms_geom_t *g, const char *prof, double at, double dur)
{
    ms_job_t j = { 0 };

    j.prof = (int8_t)ms_geom_profile_find(g, prof);
    j.gang = 1;
    j.arrival = at;
    j.duration = dur;
    return j;
}

static double lb_of(const ms_geom_t *g, const ms_job_t *jobs, size_t n, int ngpus)
{
    ms_trace_t *t = NULL;
    double v;

    assert_int_equal(ms_trace_from_jobs(g, jobs, n, NULL, &t), MS_OK);
    v = ms_lower_bound(t, ngpus);
    ms_trace_free(t);
    return v;
}

static void test_classes(void **state)
{
    ms_geom_t *g = NULL;
    ms_job_t j[4];

    (void)state;
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    /* two 4g x 10 s on one GPU: both need slices 0-3, so 20 s (compute
     * alone says 80/7 = 11.4) */
    j[0] = mk(g, "4g", 0, 10);
    j[1] = mk(g, "4g", 0, 10);
    assert_float_equal(lb_of(g, j, 2, 1), 20.0, 1e-9);
    assert_float_equal(lb_of(g, j, 2, 2), 10.0, 1e-9);
    /* a 4g and a 7g: 20 s (optimal) */
    j[1] = mk(g, "7g", 0, 10);
    assert_float_equal(lb_of(g, j, 2, 1), 20.0, 1e-9);
    /* four 2g x 10 s: at most three 2g at once (starts 0, 2, 4): 40/3 */
    j[0] = mk(g, "2g", 0, 10);
    j[1] = mk(g, "2g", 0, 10);
    j[2] = mk(g, "2g", 0, 10);
    j[3] = mk(g, "2g", 0, 10);
    assert_float_equal(lb_of(g, j, 4, 1), 40.0 / 3.0, 1e-9);
    /* a 4g and a 3g fit together: the class term does not overcount */
    j[0] = mk(g, "4g", 0, 10);
    j[1] = mk(g, "3g", 0, 10);
    assert_float_equal(lb_of(g, j, 2, 1), 10.0, 1e-9);
    /* time-slicing partitions nothing: only compute (80/7) */
    j[0] = mk(g, "4g", 0, 10);
    j[1] = mk(g, "4g", 0, 10);
    {
        ms_trace_t *t = NULL;
        assert_int_equal(ms_trace_from_jobs(g, j, 2, NULL, &t), MS_OK);
        assert_float_equal(ms__lower_bound(t, 1, NULL, false), 80.0 / 7.0, 1e-9);
        ms_trace_free(t);
    }
    ms_geom_destroy(g);
    /* A30: 4g is the whole GPU, 2g at 0 and 2: two 2g at once */
    assert_int_equal(ms_geom_create(ms_model_find("A30-24GB"), 0, &g), MS_OK);
    j[0] = mk(g, "2g", 0, 10);
    j[1] = mk(g, "2g", 0, 10);
    j[2] = mk(g, "2g", 0, 10);
    assert_float_equal(lb_of(g, j, 3, 1), 15.0, 1e-9);
    ms_geom_destroy(g);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* ms__sort_doubles gives what a stable sort by value gives (the waits'
 * percentiles read it): ascending, and -0.0 / +0.0, which compare equal,
 * in their input order; checked against an insertion sort (stable) on
 * random arrays with repeats, negatives, huge and tiny values, with and
 * without -0.0 (with it, the qsort fallback), of sizes on both sides of
 * its small-array cut. */
static void test_sort_doubles(void **state)
{
    static const double pool[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 1e300, -1e300, 5e-324,
                                   -5e-324, 3600.0, 1e-9, 12345.678 };
    enum { MAXN = 3000 };
    double *a = malloc(MAXN * sizeof(*a)), *b = malloc(MAXN * sizeof(*b));
    uint64_t x = 88172645463325252ull;
    int round;

    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    for (round = 0; round < 60; round++) {
        size_t n = (size_t)(round < 30 ? round * 3 : (round - 29) * 97), i, k;

        for (i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[i] = (x & 3) ? pool[(x >> 8) % 12] : (double)(int64_t)(x >> 11) / 1e6;
            if ((x >> 40) % 5 == 0)
                a[i] = -a[i];
            if (round % 2 == 0 && a[i] == 0.0)
                a[i] = 0.0;   /* no -0.0: the radix path, not the fallback */
        }
        memcpy(b, a, n * sizeof(*a));
        for (i = 1; i < n; i++) {   /* stable reference */
            double v = b[i];
            for (k = i; k > 0 && cmp_dbl(&b[k - 1], &v) > 0; k--)
                b[k] = b[k - 1];
            b[k] = v;
        }
        ms__sort_doubles(a, n);
        assert_memory_equal(a, b, n * sizeof(*a));   /* bit for bit: zeros' signs too */
    }
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_sort_doubles),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
