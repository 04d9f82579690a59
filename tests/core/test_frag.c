/* test_frag.c - FragCost worked values (algorithms.md §2) and properties. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "migsched/frag.h"

static ms_geom_t *a100(void)
{
    ms_geom_t *g = NULL;

    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    return g;
}

static ms_state_t put(const ms_geom_t *g, ms_state_t s, const char *p, int st)
{
    ms_state_t n = ms_state_place(g, s, ms_geom_profile_find(g, p), st);

    assert_int_not_equal(n, MS_STATE_NONE);
    return n;
}

static void test_worked_values(void **state)
{
    ms_geom_t *g = a100();

    (void)state;
    assert_float_equal(ms_frag_cost(g, 0, NULL), 0.0, 1e-12);
    assert_float_equal(ms_frag_cost(g, put(g, put(g, 0, "1g", 4), "1g", 5), NULL), 0.0, 1e-12);
    assert_float_equal(ms_frag_cost(g, put(g, put(g, 0, "1g", 1), "1g", 5), NULL), 0.625, 1e-12);
    assert_float_equal(ms_frag_cost(g, put(g, 0, "2g", 2), NULL), 0.25, 1e-12);
    assert_float_equal(ms_frag_cost(g, put(g, 0, "3g", 0), NULL), 0.4375, 1e-12);
    ms_geom_destroy(g);
}

static void test_range_and_full(void **state)
{
    ms_geom_t *g = a100();
    ms_frag_table_t t;
    int s;

    (void)state;
    ms_frag_table_fill(g, NULL, &t);
    assert_int_equal(t.nstates, ms_geom_nstates(g));
    for (s = 0; s < t.nstates; s++) {
        assert_true(t.cost[s] >= 0.0 && t.cost[s] <= 1.0);
        if (ms_state_compute(g, (ms_state_t)s) == 7)
            assert_float_equal(t.cost[s], 0.0, 1e-12);   /* nothing left to fragment */
    }
    ms_geom_destroy(g);
}

static void test_ideal_feasible(void **state)
{
    ms_geom_t *g = a100();
    ms_state_t s = put(g, put(g, 0, "1g", 1), "1g", 5);
    int k2 = ms_geom_profile_find(g, "2g"), k3 = ms_geom_profile_find(g, "3g");

    (void)state;
    assert_int_equal(ms_frag_ideal(g, s, k2), 2);
    assert_int_equal(ms_frag_feasible(g, s, k2), 1);
    assert_int_equal(ms_frag_ideal(g, s, k3), 1);
    assert_int_equal(ms_frag_feasible(g, s, k3), 0);
    /* Feasible never exceeds Ideal in any state */
    for (int st = 0; st < ms_geom_nstates(g); st++)
        for (int k = 0; k < ms_geom_nprofiles(g); k++)
            assert_true(ms_frag_feasible(g, (ms_state_t)st, k) <=
                        ms_frag_ideal(g, (ms_state_t)st, k));
    ms_geom_destroy(g);
}

static void test_options(void **state)
{
    ms_geom_t *g = a100();
    ms_state_t s = put(g, 0, "3g", 0);
    double w[5] = {0, 0, 0, 1, 0};      /* only 4g matters */
    ms_frag_opts_t o1 = { w, false }, o2 = { NULL, true };

    (void)state;
    assert_float_equal(ms_frag_cost(g, s, &o1), 1.0, 1e-12);
    /* all-profile average divides by 5 (7g has Ideal 0) */
    assert_float_equal(ms_frag_cost(g, s, &o2), 1.75 / 5.0, 1e-12);
    /* MFI: 4g has capacity (4 compute, 4 memory free) but no legal start */
    assert_int_equal(ms_frag_mfi(g, s), 4);
    assert_int_equal(ms_frag_mfi(g, 0), 0);
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_values),
        cmocka_unit_test(test_range_and_full),
        cmocka_unit_test(test_ideal_feasible),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
