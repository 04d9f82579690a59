/* test_geometry.c - the MIG geometry facts, pinned. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/geometry.h"

static ms_geom_t *geom(const char *model, const char *profiles)
{
    const ms_model_t *m = ms_model_find(model);
    uint32_t set = 0;
    ms_geom_t *g = NULL;

    assert_non_null(m);
    assert_int_equal(ms_geom_parse_profile_set(m, profiles, &set, NULL), MS_OK);
    assert_int_equal(ms_geom_create(m, set, &g), MS_OK);
    return g;
}

static void test_a100_counts(void **state)
{
    ms_geom_t *g = geom("A100-40GB", "");
    ms_geom_counts_t c;

    (void)state;
    assert_int_equal(ms_geom_width(g), 8);
    assert_int_equal(ms_geom_nprofiles(g), 5);
    ms_geom_count(g, &c);
    assert_int_equal(c.placement_sets, 298);
    assert_int_equal(c.masks, 144);
    assert_int_equal(c.maximal, 19);
    assert_int_equal(c.maximal_multisets, 14);
    ms_geom_destroy(g);
}

static void test_a100_dmem_counts(void **state)
{
    ms_geom_t *g = geom("A100-40GB", "1g,1g.10gb,2g,3g,4g,7g");
    ms_geom_counts_t c;

    (void)state;
    ms_geom_count(g, &c);
    assert_int_equal(c.placement_sets, 723);
    assert_int_equal(c.masks, 192);
    assert_int_equal(c.maximal, 78);
    assert_int_equal(c.maximal_multisets, 38);
    ms_geom_destroy(g);
}

static void test_a30_and_rtx(void **state)
{
    ms_geom_t *g = geom("A30", "");
    ms_geom_counts_t c;

    (void)state;
    assert_int_equal(ms_geom_width(g), 4);
    ms_geom_count(g, &c);
    assert_int_equal(c.placement_sets, 26);
    assert_int_equal(c.masks, 16);
    assert_int_equal(c.maximal, 5);
    ms_geom_destroy(g);

    g = geom("RTX-PRO-6000", "");
    assert_int_equal(ms_geom_width(g), 12);
    ms_geom_count(g, &c);
    assert_int_equal(c.placement_sets, 26);
    assert_int_equal(c.masks, 16);
    assert_int_equal(c.maximal, 5);
    ms_geom_destroy(g);
}

static void test_every_model(void **state)
{
    int n, i;
    const ms_model_t *m = ms_models(&n);

    (void)state;
    assert_true(n >= 11);
    for (i = 0; i < n; i++) {
        ms_geom_t *g = NULL;
        int w = ms_model_width(&m[i]);
        assert_true(w == 4 || w == 8 || w == 12);
        assert_int_equal(ms_geom_create(&m[i], 0, &g), MS_OK);
        /* the full profile exists and fills the axis from 0 */
        assert_int_equal(ms_state_fit(g, 0, ms_geom_nprofiles(g) - 1), 1);
        /* ms_state_fits is the profiles with a free start, in every state */
        for (int s = 0; s < ms_geom_nstates(g); s++)
            for (int k = 0; k < ms_geom_nprofiles(g); k++)
                assert_int_equal(ms_state_fits(g, (ms_state_t)s) >> k & 1u,
                                 ms_state_fit(g, (ms_state_t)s, k) != 0);
        ms_geom_destroy(g);
    }
}

static void test_names(void **state)
{
    const ms_model_t *m = ms_model_find("a100");
    const ms_model_t *h = ms_model_find("H200");
    int k;

    (void)state;
    assert_non_null(m);
    assert_string_equal(m->name, "A100-40GB");
    k = ms_model_profile_find(m, "3g.20gb");
    assert_true(k >= 0);
    assert_int_equal(ms_model_profile_find(m, "3g"), k);
    assert_int_equal(m->profiles[k].gi_id, 9);
    assert_int_equal(ms_model_profile_find(m, "5g"), -1);
    assert_non_null(h);
    assert_string_equal(h->profiles[ms_model_profile_find(h, "7g")].name, "7g.141gb");
    assert_int_equal(h->profiles[ms_model_profile_find(h, "1g")].gi_id, 19);
    assert_null(ms_model_find("V100"));
}

static void test_transitions(void **state)
{
    ms_geom_t *g = geom("A100-40GB", "");
    int k1 = ms_geom_profile_find(g, "1g"), k3 = ms_geom_profile_find(g, "3g");
    int k4 = ms_geom_profile_find(g, "4g"), k7 = ms_geom_profile_find(g, "7g");
    ms_state_t s3, s4, s;

    (void)state;
    s3 = ms_state_place(g, 0, k3, 0);
    s4 = ms_state_place(g, 0, k4, 0);
    assert_int_not_equal(s3, MS_STATE_NONE);
    assert_int_not_equal(s3, s4);                     /* same mask, other compute */
    assert_int_equal(ms_state_mask(g, s3), ms_state_mask(g, s4));
    assert_int_equal(ms_state_place(g, 0, k3, 2), MS_STATE_NONE); /* illegal start */
    assert_int_equal(ms_state_place(g, s4, k4, 0), MS_STATE_NONE); /* overlap */
    assert_int_equal(ms_state_fit(g, s4, k3), 1u << 4);
    assert_int_equal(ms_state_fit(g, s4, k7), 0);
    s = ms_state_place(g, s4, k3, 4);
    assert_int_equal(ms_state_mask(g, s), 0xFF);
    assert_int_equal(ms_state_compute(g, s), 7);
    assert_int_equal(ms_state_remove(g, s, k3, 4), s4);
    assert_int_equal(ms_state_remove(g, s4, k4, 0), 0);
    /* 1g never reaches slice 7 */
    assert_int_equal(ms_state_fit(g, 0, k1), 0x7F);
    ms_geom_destroy(g);
}

/* Every maximal layout is valid and cannot take one more instance. */
static int check_maximal(void *ctx, const ms_gi_t *gis, int n)
{
    const ms_geom_t *g = ctx;
    ms_state_t s = 0;
    int i, k;

    assert_true(ms_geom_layout_valid(g, gis, n));
    for (i = 0; i < n; i++) {
        s = ms_state_place(g, s, gis[i].prof, gis[i].start);
        assert_int_not_equal(s, MS_STATE_NONE);
    }
    for (k = 0; k < ms_geom_nprofiles(g); k++)
        assert_int_equal(ms_state_fit(g, s, k), 0);
    return 0;
}

static void test_maximal_layouts(void **state)
{
    ms_geom_t *g = geom("A100-40GB", "");

    (void)state;
    ms_geom_each_maximal(g, check_maximal, g);
    ms_geom_destroy(g);
}

static void test_me_count_tracked(void **state)
{
    ms_geom_t *g = geom("A100-40GB", "1g,1g+me,2g,3g,4g,7g");
    int me = ms_geom_profile_find(g, "1g+me");
    ms_state_t s;

    (void)state;
    assert_true(me >= 0);
    s = ms_state_place(g, 0, me, 3);
    assert_int_not_equal(s, MS_STATE_NONE);
    assert_int_equal(ms_state_count(g, s, me), 1);
    assert_int_equal(ms_state_fit(g, s, me), 0);   /* one +me per GPU */
    assert_int_equal(ms_state_remove(g, s, me, 3), 0);
    ms_geom_destroy(g);
}

static void test_bad_profiles(void **state)
{
    const ms_model_t *m = ms_model_find("A100-40GB");
    const ms_model_t *r = ms_model_find("RTX-PRO-6000");
    uint32_t set;
    ms_diag_t d;
    ms_geom_t *g = NULL;

    (void)state;
    assert_int_equal(ms_geom_parse_profile_set(m, "1g,5g", &set, &d), MS_EINVAL);
    assert_non_null(strstr(d.msg, "5g"));
    assert_int_equal(ms_geom_parse_profile_set(r, "1g+me.all", &set, &d), MS_OK);
    assert_int_equal(ms_geom_create(r, set, &g), MS_ENOTSUP);
    assert_null(g);
}

/* The fit rule's shared facts (fit.c), as a property over every model's
 * classic set and the A100's extended one: the full profile takes the whole
 * GPU and is classic where a classic one does; the first start is the
 * lowest bit of the start mask and a legal placement on the empty GPU;
 * covers is exactly "at least the compute and the memory". */
static void test_fit_facts(void **state)
{
    int n, i;
    const ms_model_t *all = ms_models(&n);

    (void)state;
    for (i = 0; i <= n; i++) {
        ms_geom_t *g = i < n ? geom(all[i].name, "") : geom("A100-40GB", "1g,1g.10gb,1g+me,7g");
        int k, j, full = ms_geom_full_profile(g);

        assert_true(full >= 0);
        assert_int_equal(ms_geom_profile(g, full)->cslices, ms_geom_compute(g));
        assert_int_equal(ms_geom_profile(g, full)->msize, ms_geom_width(g));
        assert_true(ms_geom_profile(g, full)->flags & MS_PF_BASE);
        for (k = 0; k < ms_geom_nprofiles(g); k++) {
            const ms_profile_t *p = ms_geom_profile(g, k);
            int s = ms_geom_first_start(g, k);

            assert_true(s >= 0 && ((p->start_mask >> s) & 1u));
            assert_true((p->start_mask & ((1u << s) - 1u)) == 0);
            assert_int_not_equal(ms_state_place(g, ms_geom_empty_state(), k, s), MS_STATE_NONE);
            for (j = 0; j < ms_geom_nprofiles(g); j++) {
                const ms_profile_t *q = ms_geom_profile(g, j);
                assert_int_equal(ms_geom_covers(g, k, j),
                                 p->cslices >= q->cslices && p->msize >= q->msize);
            }
        }
        ms_geom_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a100_counts),
        cmocka_unit_test(test_a100_dmem_counts),
        cmocka_unit_test(test_a30_and_rtx),
        cmocka_unit_test(test_every_model),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_maximal_layouts),
        cmocka_unit_test(test_me_count_tracked),
        cmocka_unit_test(test_bad_profiles),
        cmocka_unit_test(test_fit_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
