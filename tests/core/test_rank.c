/* test_rank.c - ranks rebuilt from their last order (ms_rank_rekey) equal a
 * fresh build, and the cluster's O(1) / O(states) queries (count_fit,
 * states_in_use) equal a look at every GPU, in both index modes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/plan.h"
#include "migsched/rank.h"
#include "migsched/rng.h"

typedef struct wkey {
    double w[MS_MAX_STATES];
    int mode;
} wkey_t;

/* keys like fa+'s: a weight per state, differences, coarse ties */
static uint64_t key_fn(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    const wkey_t *w = ctx;
    ms_state_t a = ms_state_place(g, s, k, st);
    double d = w->w[s] - w->w[a];
    uint64_t q = (uint64_t)((d < 0 ? -d : d) * (w->mode ? 16.0 : 1e6));

    return (q << 8) | (uint64_t)ms_state_compute(g, s);
}

static void test_rekey_equals_build(void **state)
{
    static const char *const models[] = { "A100-40GB", "H100-80GB", "A30-24GB" };
    size_t m;

    (void)state;
    for (m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
        ms_geom_t *g;
        ms_rng_t r;
        wkey_t *w = calloc(1, sizeof(*w));
        int k, round, s;

        assert_non_null(w);
        assert_int_equal(ms_geom_create(ms_model_find(models[m]), 0, &g), MS_OK);
        ms_rng_seed(&r, 7 + m);
        for (k = 0; k < ms_geom_nprofiles(g); k++) {
            ms_rank_t a, b;

            memset(&a, 0, sizeof(a));
            memset(&b, 0, sizeof(b));
            for (round = 0; round < 60; round++) {
                /* small moves mostly, sometimes a shuffle (the qsort path) */
                for (s = 0; s < ms_geom_nstates(g); s++)
                    w->w[s] = round % 10 == 9 ? ms_rng_unit(&r)
                                              : w->w[s] + 0.01 * (ms_rng_unit(&r) - 0.5);
                w->mode = round % 3 == 0;
                assert_int_equal(ms_rank_build(&a, g, k, key_fn, w), MS_OK);
                assert_int_equal(round == 0 ? ms_rank_build(&b, g, k, key_fn, w)
                                            : ms_rank_rekey(&b, g, key_fn, w),
                                 MS_OK);
                assert_int_equal(a.n, b.n);
                for (s = 0; s < a.n; s++)   /* field by field: the structs have padding */
                    if (a.cands[s].key != b.cands[s].key || a.cands[s].state != b.cands[s].state ||
                        a.cands[s].start != b.cands[s].start)
                        fail_msg("%s profile %d round %d: candidate %d differs", models[m], k,
                                 round, s);
                assert_memory_equal(a.key_of, b.key_of,
                                    (size_t)ms_geom_nstates(g) * (size_t)a.width * sizeof(a.key_of[0]));
            }
            ms_rank_fini(&a);
            ms_rank_fini(&b);
        }
        free(w);
        ms_geom_destroy(g);
    }
}

static void test_cluster_queries(void **state)
{
    int mode;

    (void)state;
    for (mode = 0; mode < 4; mode++) {
        ms_geom_t *g;
        ms_cluster_t *c;
        ms_cluster_cfg_t cc;
        ms_rng_t r;
        ms_plan_t p;
        int step, failed;
        ms_state_t *used;

        assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
        memset(&cc, 0, sizeof(cc));
        cc.geom = g;
        cc.ngpus = mode % 2 == 1 ? 40 : 300;   /* more GPUs than states, and fewer */
        cc.gpus_per_node = 8;
        cc.index_mode = mode == 0 || mode == 3 ? MS_INDEX_BUCKET : MS_INDEX_SCAN;
        assert_int_equal(ms_cluster_create(&cc, &c), MS_OK);
        /* the room the contract promises is enough: min(states, GPUs)
         * (the scan's sort once wrote a state per GPU there) */
        used = malloc((size_t)(cc.ngpus < ms_geom_nstates(g) ? cc.ngpus : ms_geom_nstates(g)) *
                      sizeof(*used));
        assert_non_null(used);
        ms_plan_init(&p);
        ms_rng_seed(&r, 99);
        for (step = 0; step < 3000; step++) {
            int gi = (int)(ms_rng_next(&r) % (uint64_t)c->ngpus), k, n, s, q;
            const ms_gpu_t *gpu = &c->gpus[gi];

            ms_plan_clear(&p);
            if (gpu->ninst > 0 && ms_rng_next(&r) % 3 == 0) {
                assert_int_equal(ms_plan_add_destroy(&p, gi, gpu->inst[0].start), MS_OK);
            } else {
                k = (int)(ms_rng_next(&r) % (uint64_t)ms_geom_nprofiles(g));
                uint16_t fit = ms_state_fit(g, gpu->state, k);

                if (fit == 0)
                    continue;
                assert_int_equal(ms_plan_add_create(&p, gi, k, __builtin_ctz(fit)), MS_OK);
            }
            assert_int_equal(ms_cluster_apply(c, &p, &failed), MS_OK);
            for (k = 0; k < ms_geom_nprofiles(g); k++) {
                int want = 0, x;

                for (x = 0; x < c->ngpus; x++)
                    want += ms_state_fit(g, c->gpus[x].state, k) != 0;
                assert_int_equal(ms_cluster_count_fit(c, k), want);
            }
            n = ms_cluster_states_in_use(c, used);
            for (s = 0, q = 0; s < ms_geom_nstates(g); s++) {
                int x, any = 0;

                for (x = 0; x < c->ngpus && !any; x++)
                    any = c->gpus[x].state == s;
                if (any) {
                    assert_true(q < n);
                    assert_int_equal(used[q++], s);
                }
            }
            assert_int_equal(q, n);
        }
        ms_plan_fini(&p);
        free(used);
        ms_cluster_destroy(c);
        ms_geom_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rekey_equals_build),
        cmocka_unit_test(test_cluster_queries),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
