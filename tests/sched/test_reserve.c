/* test_reserve.c - restricted placement (ms_sched_reserve with a node list,
 * ms_sched_node_scores) on clusters whose nodes of one model have different
 * GPU counts (issue 20, defect 4), and a property over random heterogeneous
 * clusters: restricted placement finds room on a node exactly when a plain
 * look at that node's GPUs does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/rng.h"
#include "migsched/sched.h"
#include "support/sched_world.h"
#include "sched/sched_int.h"

static const char *const MODELS[] = { "A100-40GB", "H100-80GB", "A30-24GB" };
static const char *const SIZES[] = { "1g", "2g", "3g", "4g", "7g" };

/* The defect as reported: the bigger node first, so the smaller one joins
 * its group as a short last node. Every 1g.10gb of the small node's seven
 * must be found there, by a hold restricted to it and by its score. */
static void test_mixed_node_sizes(void **state)
{
    static const char *const nodes[] = { "big=2xH100-80GB", "small=1xH100-80GB" };
    static const char *const pols[] = { "fa+", "best-fit", "first-fit", "fa" };
    const char *small[] = { "small" };
    const char *both[] = { "big", "small" };
    size_t p;

    (void)state;
    for (p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
        world_t w;
        ms_sched_req_t q;
        ms_diag_t d;
        int32_t slot;
        int i, scores[2];
        char id[32];

        world_make_named(&w, pols[p], nodes, 2, false, NULL);
        assert_int_equal(ms_sched_ngroups(w.s), 1);   /* one group, a short last node */
        memset(&q, 0, sizeof(q));
        q.profile = "1g.10gb";
        for (i = 0; i < 7; i++) {
            ms_sched_job_info_t ji;

            snprintf(id, sizeof(id), "hold-%d", i);
            q.id = id;
            assert_int_equal(ms_sched_node_scores(w.s, &q, both, 2, scores, &d), MS_OK);
            assert_true(scores[0] >= 0);
            if (scores[1] < 0)
                fail_msg("%s: the small node scores -1 with %d of 7 slots free", pols[p], 7 - i);
            if (ms_sched_reserve(w.s, &q, small, 1, 60.0, 1.0, &slot, &d) != MS_OK)
                fail_msg("%s: no room on the small node with %d of 7 slots free: %s", pols[p],
                         7 - i, d.msg);
            assert_int_equal(ms_sched_job(w.s, slot, &ji), MS_OK);
            assert_int_equal(ji.inst[0].gpu, 2);   /* the small node's one GPU */
            assert_int_equal(ms_sched_check(w.s), MS_OK);
        }
        q.id = "hold-7";
        assert_int_equal(ms_sched_reserve(w.s, &q, small, 1, 60.0, 1.0, &slot, &d), MS_ENOFIT);
        assert_int_equal(ms_sched_node_scores(w.s, &q, both, 2, scores, &d), MS_OK);
        assert_true(scores[0] >= 0);
        assert_int_equal(scores[1], -1);
        /* a gang of 2 fits only the big node */
        q.id = "gang";
        q.profile = "7g";
        q.gang = 2;
        assert_int_equal(ms_sched_reserve(w.s, &q, small, 1, 60.0, 1.0, &slot, &d), MS_ENOFIT);
        assert_int_equal(ms_sched_reserve(w.s, &q, both, 2, 60.0, 1.0, &slot, &d), MS_OK);
        assert_int_equal(ms_sched_check(w.s), MS_OK);
        world_free(&w);
    }
}

/* --- the property ---------------------------------------------------------- */

/* Does some GPU of global node nd have room for class cls now, by a direct
 * look at its instances (the oracle)? */
static bool node_has_room(const ms_sched_t *s, int nd, int32_t cls, int gang)
{
    const ms_node_spec_t *spec = ms_sched_node(s, nd);
    int first = ms_sched_node_first_gpu(s, nd), g, grp, empty = 0;
    int k;

    ms_sched_gpu_where(s, first, NULL, &grp, NULL);
    k = s->cls[cls].prof[grp];
    if (k < 0)
        return false;
    for (g = first; g < first + spec->ngpus; g++) {
        const ms_geom_t *geom;
        const ms_gpu_t *gpu = ms_sched_gpu(s, g, &geom);
        const ms_cluster_t *c = ms_sched_group_cluster(s, grp);
        const char *pol = s->grp[grp].pol->name;
        bool dyn = c->share == MS_SHARE_MIG && strcmp(pol, "static") != 0 &&
                   strcmp(pol, "node-profile") != 0 &&
                   (strncmp(pol, "fa", 2) != 0 || s->grp[grp].pcfg.dynamic);
        int i, used = 0;

        empty += gpu->ninst == 0;
        if (gang > 1)
            continue;
        if (c->share != MS_SHARE_MIG) {
            for (i = 0; i < gpu->ninst; i++)
                used += gpu->inst[i].job >= 0;
            if (used < c->replicas)
                return true;
            continue;
        }
        for (i = 0; i < gpu->ninst; i++)
            if (gpu->inst[i].job < 0 && ms_geom_covers(geom, gpu->inst[i].prof, k))
                return true;
        if (dyn && ms_state_fit(geom, gpu->state, k) != 0)
            return true;
    }
    return gang > 1 && empty >= gang;
}

static void random_cluster(ms_rng_t *r, char buf[][64], const char **nodes, int *n)
{
    int i;

    *n = 2 + (int)world_rnd(r, 7);
    for (i = 0; i < *n; i++) {
        const char *mode = "";

        switch (world_rnd(r, 6)) {
        case 1: mode = ":timeslice=3"; break;
        case 2: mode = ":whole"; break;
        default: break;
        }
        /* few models and sizes, so that nodes of one model share a group
         * with a shorter last node often */
        snprintf(buf[i], 64, "n%d=%dx%s%s", i, 1 + (int)world_rnd(r, 4), MODELS[world_rnd(r, 2)], mode);
        nodes[i] = buf[i];
    }
}

static void property_run(const char *policy, uint64_t seed)
{
    ms_rng_t r;
    char buf[8][64];
    const char *nodes[8];
    int nn, step, nd;
    world_t w;
    int32_t live[256];
    int nlive = 0;
    double now = 0.0;

    const char *names[8];

    ms_rng_seed(&r, seed);
    random_cluster(&r, buf, nodes, &nn);
    world_make_named(&w, policy, nodes, nn, false, NULL);
    for (nd = 0; nd < nn; nd++)
        names[nd] = ms_sched_node(w.s, nd)->name;
    for (step = 0; step < 200; step++) {
        ms_sched_req_t q;
        ms_diag_t d;
        int32_t slot, cls;
        int scores[8];
        char id[32];

        now += 1.0;
        memset(&q, 0, sizeof(q));
        q.profile = SIZES[world_rnd(&r, 5)];
        q.gang = world_rnd(&r, 6) == 0 ? 2 : 1;
        if (q.gang > 1)
            q.profile = "7g";
        if (ms__sched_resolve(w.s, &q, &cls, &d) != MS_OK)
            continue;
        /* the scores of every node against the oracle */
        assert_int_equal(ms_sched_node_scores(w.s, &q, names, nn, scores, &d), MS_OK);
        for (nd = 0; nd < nn; nd++) {
            bool room = node_has_room(w.s, nd, cls, q.gang);

            if ((scores[nd] >= 0) != room)
                fail_msg("%s seed %llu step %d: node %s (%s) scores %d, its GPUs say %s room for "
                         "%s x%d", policy, (unsigned long long)seed, step, ms_sched_node(w.s, nd)->name,
                         nodes[nd], scores[nd], room ? "" : "no", q.profile, q.gang);
        }
        /* then hold it on one random node, or end a hold */
        nd = (int)world_rnd(&r, (uint64_t)nn);
        snprintf(id, sizeof(id), "h%d", step);
        q.id = id;
        if (nlive > 0 && world_rnd(&r, 3) == 0) {
            int i = (int)world_rnd(&r, (uint64_t)nlive);

            assert_int_equal(ms_sched_cancel(w.s, live[i], now), MS_OK);
            assert_int_equal(ms_sched_forget(w.s, live[i]), MS_OK);
            live[i] = live[--nlive];
        } else if (nlive < 256) {
            const char *one[1];
            bool room = node_has_room(w.s, nd, cls, q.gang);
            ms_status_t st;

            one[0] = ms_sched_node(w.s, nd)->name;
            st = ms_sched_reserve(w.s, &q, one, 1, 1e6, now, &slot, &d);
            if ((st == MS_OK) != room)
                fail_msg("%s seed %llu step %d: a hold on %s answers %s, its GPUs say %s room",
                         policy, (unsigned long long)seed, step, one[0], ms_strerror(st),
                         room ? "" : "no");
            if (st == MS_OK) {
                ms_sched_job_info_t ji;
                int node;

                assert_int_equal(ms_sched_job(w.s, slot, &ji), MS_OK);
                ms_sched_gpu_where(w.s, ji.inst[0].gpu, &node, NULL, NULL);
                assert_int_equal(node, nd);
                live[nlive++] = slot;
            }
        }
        assert_int_equal(ms_sched_check(w.s), MS_OK);
    }
    world_free(&w);
}

static void test_restricted_matches_gpus(void **state)
{
    int n, i;
    uint64_t seed;
    const ms_policy_ops_t *const *all = ms_policies(&n);

    (void)state;
    for (i = 0; i < n; i++)
        for (seed = 1; seed <= 8; seed++)
            property_run(all[i]->name, seed * 104729u + (uint64_t)i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_node_sizes),
        cmocka_unit_test(test_restricted_matches_gpus),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
