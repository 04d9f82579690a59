/* test_victims.c - preemption by geometry (ms_victims_gpu): on random GPUs
 * of every model (its default profiles and, where the geometry supports
 * them, all of them), the answer costs exactly what the cheapest of all
 * subsets of removable instances costs (victims, then lost work), it is a
 * legal placement, and it never stops an ineligible job; a hand example
 * where freeing enough slices is not enough.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/rng.h"
#include "migsched/sched.h"

/* A random GPU: random creations that the geometry accepts, each running
 * a job (lost work 0..1000 s in whole seconds, so ties happen) or idle. */
static void random_gpu(const ms_geom_t *g, ms_rng_t *r, ms_gpu_t *gpu, ms_victim_cand_t *cand)
{
    int tries, np = ms_geom_nprofiles(g), w = ms_geom_width(g);

    memset(gpu, 0, sizeof(*gpu));
    gpu->state = ms_geom_empty_state();
    for (tries = 0; tries < 40 && gpu->ninst < MS_MAX_INST; tries++) {
        int k = (int)ms_rng_below(r, (uint64_t)np), s = (int)ms_rng_below(r, (uint64_t)w);
        ms_state_t st = ms_state_place(g, gpu->state, k, s);
        ms_inst_t *in;

        if (st == MS_STATE_NONE)
            continue;
        gpu->state = st;
        in = &gpu->inst[gpu->ninst];
        in->prof = (int8_t)k;
        in->start = (int8_t)s;
        in->job = ms_rng_below(r, 5) == 0 ? -1 : gpu->ninst;
        cand[gpu->ninst].eligible = ms_rng_below(r, 4) != 0;
        cand[gpu->ninst].lost_s = (double)ms_rng_below(r, 4) * 250.0;
        gpu->ninst++;
    }
}

static ms_state_t without(const ms_geom_t *g, const ms_gpu_t *gpu, uint32_t rm)
{
    ms_state_t st = gpu->state;
    int i;

    for (i = 0; i < gpu->ninst && st != MS_STATE_NONE; i++)
        if (rm >> i & 1u)
            st = ms_state_remove(g, st, gpu->inst[i].prof, gpu->inst[i].start);
    return st;
}

/* Every subset of removable instances: the cheapest (victims, lost) that
 * lets k be created somewhere. */
static bool oracle(const ms_geom_t *g, const ms_gpu_t *gpu, const ms_victim_cand_t *cand, int k,
                   int *n, double *lost)
{
    uint32_t rm, all = (1u << gpu->ninst) - 1u;
    bool found = false;
    int i;

    for (rm = 0; rm <= all; rm++) {
        ms_state_t st;
        int c = 0;
        double l = 0.0;
        bool ok = true;

        for (i = 0; i < gpu->ninst && ok; i++) {
            if (!(rm >> i & 1u) || gpu->inst[i].job < 0)
                continue;
            ok = cand[i].eligible;
            c++;
            l += cand[i].lost_s;
        }
        if (!ok || (st = without(g, gpu, rm)) == MS_STATE_NONE || ms_state_fit(g, st, k) == 0)
            continue;
        if (!found || c < *n || (c == *n && l < *lost)) {
            found = true;
            *n = c;
            *lost = l;
        }
        if (rm == all)
            break;
    }
    return found;
}

static long check_geom(const ms_geom_t *g, uint64_t seed, int rounds)
{
    ms_rng_t r;
    long found = 0;
    int round, k, i;

    ms_rng_seed(&r, seed);
    for (round = 0; round < rounds; round++) {
        ms_gpu_t gpu;
        ms_victim_cand_t cand[MS_MAX_INST];

        random_gpu(g, &r, &gpu, cand);
        for (k = 0; k < ms_geom_nprofiles(g); k++) {
            ms_victims_t v;
            ms_status_t st = ms_victims_gpu(g, &gpu, k, cand, &v);
            int on = 0;
            double ol = 0.0;
            bool any = oracle(g, &gpu, cand, k, &on, &ol);
            ms_state_t after;
            bool beyond = false;

            if (!any) {
                assert_int_equal(st, MS_ENOFIT);
                continue;
            }
            assert_int_equal(st, MS_OK);
            found++;
            if (v.nvictims != on || fabs(v.lost_s - ol) > 1e-9)
                fail_msg("%s profile %s: %d victims losing %g s; the cheapest subset has %d "
                         "losing %g s", ms_geom_model(g)->name, ms_geom_profile(g, k)->name,
                         v.nvictims, v.lost_s, on, ol);
            /* a legal placement, and only what may go goes */
            after = without(g, &gpu, v.remove);
            assert_true(after != MS_STATE_NONE);
            assert_true(ms_state_fit(g, after, k) >> v.start & 1u);
            for (i = 0; i < gpu.ninst; i++) {
                bool rm = v.remove >> i & 1u, vic = v.victims >> i & 1u;

                assert_true(vic == (rm && gpu.inst[i].job >= 0));
                if (vic)
                    assert_true(cand[i].eligible);
                if (rm && !(ms_geom_profile_mask(g, gpu.inst[i].prof, gpu.inst[i].start) &
                            ms_geom_profile_mask(g, k, v.start)))
                    beyond = true;
            }
            /* it removes only what overlaps the start (victims.c says
             * why that suffices; the costs above check it) */
            assert_false(beyond);
        }
    }
    return found;
}

static void test_against_every_subset(void **state)
{
    int nm, mi;
    const ms_model_t *models = ms_models(&nm);
    long found = 0;

    (void)state;
    for (mi = 0; mi < nm; mi++) {
        const ms_model_t *m = &models[mi];
        /* the default profiles, and every profile but +me.all (whose rules
         * are not modelled): +me's one-per-GPU count binds there */
        uint32_t sets[2] = { 0, 0 };
        int si, pi;

        for (pi = 0; pi < m->nprofiles && pi < 32; pi++)
            if (!(m->profiles[pi].flags & MS_PF_ALL_ME))
                sets[1] |= 1u << pi;
        for (si = 0; si < 2; si++) {
            ms_geom_t *g = NULL;

            if (ms_geom_create(m, sets[si], &g) != MS_OK)
                continue;   /* a set whose rules are not modelled */
            found += check_geom(g, 1000 + (uint64_t)mi * 2 + (uint64_t)si, 300);
            ms_geom_destroy(g);
        }
    }
    print_message("%ld preemptions checked against every subset\n", found);
    assert_true(found > 1000);
}

/* A100-40GB: 3g at 0 (lost 100), 1g at 4, 5 and 6 (lost 10 each, the one
 * at 6 may not be stopped). A 4g (starts 0 only) must stop the 3g: one
 * victim, although the three 1g free as many slices, and stopping the 1g
 * at 4 and 5 loses less. A 7g cannot be placed (the 1g at 6 stays). */
static void test_hand(void **state)
{
    ms_geom_t *g = NULL;
    ms_gpu_t gpu;
    ms_victim_cand_t cand[4] = { { true, 100 }, { true, 10 }, { true, 10 }, { false, 10 } };
    ms_victims_t v;
    int k3, k1, k4, k7, i;
    static const int START[4] = { 0, 4, 5, 6 };

    (void)state;
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    k1 = ms_geom_profile_find(g, "1g.5gb");
    k3 = ms_geom_profile_find(g, "3g.20gb");
    k4 = ms_geom_profile_find(g, "4g.20gb");
    k7 = ms_geom_profile_find(g, "7g.40gb");
    memset(&gpu, 0, sizeof(gpu));
    gpu.state = ms_geom_empty_state();
    for (i = 0; i < 4; i++) {
        int k = i == 0 ? k3 : k1;

        gpu.state = ms_state_place(g, gpu.state, k, START[i]);
        assert_true(gpu.state != MS_STATE_NONE);
        gpu.inst[i].prof = (int8_t)k;
        gpu.inst[i].start = (int8_t)START[i];
        gpu.inst[i].job = 10 + i;
    }
    gpu.ninst = 4;
    assert_int_equal(ms_victims_gpu(g, &gpu, k4, cand, &v), MS_OK);
    assert_int_equal(v.start, 0);
    assert_int_equal(v.nvictims, 1);
    assert_int_equal(v.victims, 1u);
    assert_true(v.lost_s == 100.0);
    assert_int_equal(ms_victims_gpu(g, &gpu, k7, cand, &v), MS_ENOFIT);
    /* a 1g: slice 7 is free but no 1g starts there; the cheapest victim
     * is the 1g at 4 (lost 10, the lowest start of the two cheapest) */
    assert_int_equal(ms_victims_gpu(g, &gpu, k1, cand, &v), MS_OK);
    assert_int_equal(v.nvictims, 1);
    assert_int_equal(v.start, 4);
    assert_int_equal(v.victims, 2u);
    assert_true(v.lost_s == 10.0);
    /* bad arguments */
    assert_int_equal(ms_victims_gpu(g, &gpu, -1, cand, &v), MS_EINVAL);
    assert_int_equal(ms_victims_gpu(g, &gpu, k1, NULL, &v), MS_EINVAL);
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_against_every_subset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
