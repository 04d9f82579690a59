/* test_bound.c - the size-class term of the lower bound (bound.c) on hand
 * examples whose optimum is known; that every policy's makespan stays
 * above the bound on random traces is test_sim.c's property. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
