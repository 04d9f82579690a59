/* test_frag_ideal_table.c - ms_frag_ideal is a table lookup filled by
 * ms_geom_create; it must equal frag.h's formula, computed here from the
 * public accessors, for every state and profile of every model, with the
 * default profile set and with every profile that can be enabled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "migsched/frag.h"
#include "migsched/geometry.h"

static int formula(const ms_geom_t *g, ms_state_t s, int k)
{
    const ms_profile_t *p = ms_geom_profile(g, k);
    int free_c = ms_geom_compute(g) - ms_state_compute(g, s);
    int free_m = ms_geom_width(g) - __builtin_popcount(ms_state_mask(g, s));
    int n = ms_state_count(g, s, k);
    int a = free_c / p->cslices, b = free_m / p->msize;
    int c = p->max_count - (n < 0 ? 0 : n);
    int v = a < b ? a : b;

    return v < c ? v : c;
}

static void check_geom(const ms_geom_t *g)
{
    int s, k;

    for (s = 0; s < ms_geom_nstates(g); s++)
        for (k = 0; k < ms_geom_nprofiles(g); k++)
            assert_int_equal(ms_frag_ideal(g, (ms_state_t)s, k), formula(g, (ms_state_t)s, k));
}

static void test_every_model(void **state)
{
    int nm, i, checked = 0;
    const ms_model_t *m = ms_models(&nm);

    (void)state;
    for (i = 0; i < nm; i++) {
        ms_geom_t *g = NULL;
        uint32_t all = 0;
        int p;

        assert_int_equal(ms_geom_create(&m[i], 0, &g), MS_OK);
        check_geom(g);
        ms_geom_destroy(g);
        checked++;
        for (p = 0; p < m[i].nprofiles; p++)
            if (!(m[i].profiles[p].flags & MS_PF_ALL_ME))
                all |= 1u << p;
        g = NULL;
        if (ms_geom_create(&m[i], all, &g) == MS_OK) {
            check_geom(g);
            ms_geom_destroy(g);
            checked++;
        }
    }
    assert_true(checked > nm);
}

/* The empty A100 state: the classic values the seeds list. */
static void test_a100_empty(void **state)
{
    const ms_model_t *m = ms_model_find("A100-40GB");
    ms_geom_t *g = NULL;
    int k;

    (void)state;
    assert_non_null(m);
    assert_int_equal(ms_geom_create(m, 0, &g), MS_OK);
    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        const ms_profile_t *p = ms_geom_profile(g, k);
        int want = 7 / p->cslices < 8 / p->msize ? 7 / p->cslices : 8 / p->msize;
        if (want > p->max_count)
            want = p->max_count;
        assert_int_equal(ms_frag_ideal(g, ms_geom_empty_state(), k), want);
    }
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_model),
        cmocka_unit_test(test_a100_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
