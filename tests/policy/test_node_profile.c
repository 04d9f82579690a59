/* test_node_profile.c - node-profile (seed 002, reworked for issue 11): it
 * starts from static's layouts and behaves as static while nothing
 * switches; a drained node switches when another kind hosts more of what
 * waits; an empty node follows the arrival mix when a job lands on it; a
 * nearly drained node is cordoned for that; a node that runs a job is never
 * switched (docs/policies.md). */
#include "policy_test.h"

#include "migsched/rng.h"

typedef struct np {
    const ms_policy_ops_t *ops;
    void *self;
    ms_cluster_t *c;
    ms_geom_t *g;
} np_t;

static np_t pol_new(const char *name, ms_geom_t *g, int ngpus, int per)
{
    np_t p;
    ms_policy_cfg_t cfg;
    ms_plan_t plan;

    p.g = g;
    p.c = pt_cluster(g, ngpus, per, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_defaults(&cfg);   /* hysteresis 300 s */
    p.ops = ms_policy_find(name);
    assert_non_null(p.ops);
    assert_int_equal(p.ops->create(&cfg, p.c, &p.self), MS_OK);
    ms_plan_init(&plan);
    assert_int_equal(p.ops->setup(p.self, p.c, &plan), MS_OK);
    pt_apply(p.c, &plan);
    ms_plan_fini(&plan);
    return p;
}

static np_t np_new(int ngpus, int per)
{
    return pol_new("node-profile", pt_a100(), ngpus, per);
}

static void pol_free(np_t *p, bool geom)
{
    p->ops->destroy(p->self);
    ms_cluster_destroy(p->c);
    if (geom)
        ms_geom_destroy(p->g);
}

/* Place a job of profile `prof`; on success apply and return its GPU. */
static int place(np_t *p, int32_t idx, int prof)
{
    ms_job_t j = pt_job(idx, prof);
    ms_plan_t plan;
    ms_status_t st;
    int gpu = -1, start;

    ms_plan_init(&plan);
    st = p->ops->place(p->self, p->c, &j, &plan);
    if (st == MS_OK) {
        pt_apply(p->c, &plan);
        pt_where(p->c, idx, &gpu, &start);
        assert_true(gpu >= 0);
    } else {
        assert_int_equal(st, MS_ENOFIT);
        assert_int_equal(plan.n, 0);
    }
    ms_plan_fini(&plan);
    return gpu;
}

/* on_idle with wait[] waiting; applies the plan, returns its length. */
static int idle_w(np_t *p, const int *wait, double now)
{
    ms_plan_t plan;
    int len;

    ms_plan_init(&plan);
    assert_int_equal(p->ops->on_idle(p->self, p->c, wait, now, &plan), MS_OK);
    len = plan.n;
    pt_apply(p->c, &plan);
    ms_plan_fini(&plan);
    return len;
}

static int idle(np_t *p, const char *prof, int n, double now)
{
    int wait[MS_MAX_PROFILES] = {0};

    if (n > 0)
        wait[pt_prof(p->g, prof)] = n;
    return idle_w(p, wait, now);
}

/* Stop a job and run on_finish for its GPU; returns the plan's length. */
static int finish(np_t *p, int32_t job, double now)
{
    int gpus[8], n, i, len = 0;
    ms_plan_t plan;

    pt_stop(p->c, job, gpus, &n);
    for (i = 0; i < n; i++) {
        ms_plan_init(&plan);
        assert_int_equal(p->ops->on_finish(p->self, p->c, gpus[i], now, &plan), MS_OK);
        len += plan.n;
        pt_apply(p->c, &plan);
        ms_plan_fini(&plan);
    }
    return len;
}

/* n arrivals of profile prof announced (the recent arrival mix). */
static void arrive(np_t *p, int prof, int n)
{
    ms_job_t j = pt_job(100, prof);
    int i;

    for (i = 0; i < n; i++)
        p->ops->on_arrival(p->self, &j);
}

/* GIs of profile `prof` on GPU g. */
static int count(const np_t *p, int g, const char *prof)
{
    int i, n = 0, k = pt_prof(p->g, prof);

    for (i = 0; i < p->c->gpus[g].ninst; i++)
        n += p->c->gpus[g].inst[i].prof == k;
    return n;
}

static bool same_gpu(const ms_gpu_t *a, const ms_gpu_t *b)
{
    int i;

    if (a->ninst != b->ninst || a->state != b->state)
        return false;
    for (i = 0; i < a->ninst; i++)
        if (a->inst[i].prof != b->inst[i].prof || a->inst[i].start != b->inst[i].start)
            return false;
    return true;
}

/* It starts from static's layouts, GPU by GPU, and while nothing waits it
 * places exactly as static does (random arrivals and departures, on_idle
 * after each step with nothing waiting). */
static void test_static_until_it_switches(void **state)
{
    ms_geom_t *g = pt_a100();
    np_t a = pol_new("node-profile", g, 8, 4), b = pol_new("static", g, 8, 4);
    int32_t live[64];
    int nlive = 0, step, gi;
    ms_rng_t r;

    (void)state;
    for (gi = 0; gi < 8; gi++)
        assert_true(same_gpu(&a.c->gpus[gi], &b.c->gpus[gi]));
    ms_rng_seed(&r, 3);
    for (step = 0; step < 400; step++) {
        if (nlive > 0 && (nlive == 64 || ms_rng_below(&r, 3) == 0)) {
            int i = (int)ms_rng_below(&r, (uint64_t)nlive);
            finish(&a, live[i], step);
            finish(&b, live[i], step);
            live[i] = live[--nlive];
        } else {
            int k = (int)ms_rng_below(&r, 5), ga = place(&a, step, k), gb = place(&b, step, k);
            assert_int_equal(ga, gb);
            if (ga >= 0)
                live[nlive++] = step;
        }
        assert_int_equal(idle(&a, NULL, 0, step), 0);
        for (gi = 0; gi < 8; gi++)
            assert_true(same_gpu(&a.c->gpus[gi], &b.c->gpus[gi]));
    }
    pol_free(&a, false);
    pol_free(&b, false);
    ms_geom_destroy(g);
}

/* Two nodes of two GPUs: node 0 = 7g | 4g+3g, node 1 = 3g+2g+1g+1g |
 * 2g+2g+1g+1g+1g (the static cycle). With GPU 0's 7g busy a second 7g
 * fits nowhere: node 1 is drained and hosts none of it, so it switches to
 * training (7g on both GPUs) in this on_idle, and the 7g starts there. The
 * nodes are smaller than the cycle, so the switch must also suit the
 * cluster: with 7g jobs as the recent arrivals (64, SERVICE_MIN) it then
 * serves three of them at once instead of one. */
/* ms_policy_node_layout, the layouts `migsched k8s-config` writes: on
 * every model each kind is a valid layout (training one full-size GI,
 * inference-peak only the smallest profile, as often as it fits: no other
 * instance can be added); on the A100 exactly docs/policies.md's. */
static void test_node_layout_kinds(void **state)
{
    static const char *const kinds[] = { "inference-peak", "balanced", "training" };
    const ms_model_t *models;
    ms_gi_t gis[MS_MAX_INST];
    int nm, i, k, n, j;

    (void)state;
    models = ms_models(&nm);
    for (i = 0; i < nm; i++) {
        ms_geom_t *g = NULL;
        assert_int_equal(ms_geom_create(&models[i], 0, &g), MS_OK);
        for (k = 0; k < 3; k++) {
            ms_state_t s = ms_geom_empty_state();
            assert_int_equal(ms_policy_node_layout(g, kinds[k], gis, &n), MS_OK);
            assert_true(n >= 1 && n <= MS_MAX_INST);
            assert_true(ms_geom_layout_valid(g, gis, n));
            for (j = 0; j < n; j++)
                s = ms_state_place(g, s, gis[j].prof, gis[j].start);
            assert_int_not_equal(s, MS_STATE_NONE);
            if (k == 0) {
                for (j = 0; j < n; j++)
                    assert_int_equal(gis[j].prof, 0);   /* the smallest */
                assert_int_equal(ms_state_fit(g, s, 0), 0);
            }
            if (k == 2) {
                assert_int_equal(n, 1);
                assert_int_equal(ms_geom_profile(g, gis[0].prof)->cslices, ms_geom_compute(g));
            }
        }
        assert_int_equal(ms_policy_node_layout(g, "nope", gis, &n), MS_ENOENT);
        assert_int_equal(ms_policy_node_layout(g, NULL, gis, &n), MS_EINVAL);
        ms_geom_destroy(g);
    }
    {
        ms_geom_t *g = pt_a100();
        assert_int_equal(ms_policy_node_layout(g, "balanced", gis, &n), MS_OK);
        assert_int_equal(n, 4);
        for (j = 0; j < 3; j++) {
            assert_int_equal(gis[j].prof, pt_prof(g, "2g"));
            assert_int_equal(gis[j].start, 2 * j);
        }
        assert_int_equal(gis[3].prof, pt_prof(g, "1g"));
        assert_int_equal(ms_policy_node_layout(g, "inference-peak", gis, &n), MS_OK);
        assert_int_equal(n, 7);
        ms_geom_destroy(g);
    }
}

static void test_drained_node_switches(void **state)
{
    np_t p = np_new(4, 2);
    int seven;

    (void)state;
    seven = pt_prof(p.g, "7g");
    assert_int_equal(count(&p, 0, "7g"), 1);
    assert_int_equal(count(&p, 2, "3g"), 1);
    assert_int_equal(place(&p, 1, seven), 0);
    assert_int_equal(place(&p, 2, seven), -1);
    arrive(&p, seven, 64);
    assert_true(idle(&p, "7g", 1, 0.0) > 0);
    assert_int_equal(count(&p, 2, "7g"), 1);
    assert_int_equal(count(&p, 3, "7g"), 1);
    assert_int_equal(count(&p, 1, "4g"), 1);             /* node 0 keeps static */
    {   /* the switched GPUs hold exactly the training layout k8s-config writes */
        ms_gi_t gis[MS_MAX_INST];
        int n;
        assert_int_equal(ms_policy_node_layout(p.g, "training", gis, &n), MS_OK);
        assert_int_equal(n, 1);
        assert_int_equal(p.c->gpus[3].ninst, 1);
        assert_int_equal(p.c->gpus[3].inst[0].prof, gis[0].prof);
        assert_int_equal(p.c->gpus[3].inst[0].start, gis[0].start);
    }
    assert_int_equal(place(&p, 2, seven), 2);
    /* a drained node whose layout hosts as much as any other keeps it */
    finish(&p, 2, 10.0);
    assert_int_equal(idle(&p, "7g", 1, 20.0), 0);
    pol_free(&p, true);
}

/* A busy node whose running jobs use at most 40% of its compute is cordoned
 * when another kind would host at least 1.5x the compute of a demand of at
 * least the node's size; it takes no new job, and when its last job leaves
 * on_finish switches it. One node of 2 GPUs (7g | 4g+3g): a 3g runs, eight
 * 7g jobs wait (56 slices); static hosts one 7g now (7), training two (14);
 * with 7g jobs as the recent arrivals the (one-node) cluster gains. */
static void test_cordon_then_switch(void **state)
{
    np_t p = np_new(2, 2);
    int three, one;

    (void)state;
    three = pt_prof(p.g, "3g");
    one = pt_prof(p.g, "1g");
    assert_int_equal(place(&p, 1, three), 1);            /* the 3g GI of GPU 1 */
    arrive(&p, pt_prof(p.g, "7g"), 64);
    /* within hysteresis of the start? a node that never switched is past it */
    assert_int_equal(idle(&p, "7g", 8, 1000.0), 0);      /* cordoned: no ops */
    assert_int_equal(place(&p, 2, one), -1);             /* no new job */
    assert_true(finish(&p, 1, 1100.0) > 0);              /* drained: switched */
    assert_int_equal(count(&p, 0, "7g"), 1);
    assert_int_equal(count(&p, 1, "7g"), 1);
    assert_int_equal(place(&p, 2, one), 0);              /* open again */
    pol_free(&p, true);
}

/* The two rules a cordon must also pass when it starts (the set-up of
 * test_cordon_then_switch, eight 7g waiting), on a node of the whole
 * static cycle (4 GPUs: 7g | 4g+3g | 3g+2g+1g+1g | 2g+2g+1g+1g+1g) and on
 * one of 2 GPUs (7g | 4g+3g), the whole cluster each time:
 * - the mix rule (4 GPUs; 2 GPUs: the cluster's service, with 64
 *   arrivals): with 1g jobs as the recent arrival mix, training (a 7g GI a
 *   GPU) would run fewer of them at once than static (twelve GIs; three),
 *   so no cordon; with 7g jobs as the mix it would run more (four against
 *   one; two against one), so the cordon comes;
 * - the drain rule: with the 7g mix of mean duration 100 s, a 3g expected
 *   to run until t = 10000 s keeps the node open at t = 1000 s. */
static void cordon_rules_case(int per, int pass)
{
    np_t p = np_new(per, per);
    int three = pt_prof(p.g, "3g"), one = pt_prof(p.g, "1g"), seven = pt_prof(p.g, "7g");
    ms_job_t run = pt_job(1, three), a;
    ms_plan_t plan;
    int i;

    run.duration = pass == 2 ? 10000.0 : 100.0;
    ms_plan_init(&plan);
    assert_int_equal(p.ops->place(p.self, p.c, &run, &plan), MS_OK);
    pt_apply(p.c, &plan);
    ms_plan_fini(&plan);
    for (i = 0; i < (per == 4 ? 16 : 64); i++) {   /* the recent arrival mix, after the 3g started */
        a = pt_job(100 + i, pass == 0 ? one : seven);
        a.arrival = 1.0 + i;
        a.duration = 100.0;
        p.ops->on_arrival(p.self, &a);
    }
    assert_int_equal(idle(&p, "7g", 8, 1000.0), 0);
    /* open (pass 0: mix rule; pass 2: drain rule) or cordoned (pass 1) */
    if (pass == 1)
        assert_int_equal(place(&p, 2, one), -1);
    else   /* 4 GPUs: a 1g GI of GPU 2; 2 GPUs: the idle 4g of GPU 1 */
        assert_int_equal(place(&p, 2, one), per == 4 ? 2 : 1);
    pol_free(&p, true);
}

static void test_cordon_rules(void **state)
{
    int pass;

    (void)state;
    for (pass = 0; pass < 3; pass++) {
        cordon_rules_case(4, pass);
        cordon_rules_case(2, pass);
    }
}

/* No cordon when the node is busier than 40% of its compute, nor for a
 * small demand, nor when nothing waits. */
static void test_no_cordon(void **state)
{
    np_t p = np_new(2, 2);
    int four, three, one;

    (void)state;
    four = pt_prof(p.g, "4g");
    three = pt_prof(p.g, "3g");
    one = pt_prof(p.g, "1g");
    assert_int_equal(place(&p, 1, four), 1);
    assert_int_equal(place(&p, 2, three), 1);            /* 7 of 14 slices busy */
    assert_int_equal(idle(&p, "7g", 8, 1000.0), 0);
    assert_int_equal(place(&p, 3, one), 0);              /* open: the 7g GI */
    finish(&p, 3, 1000.0);
    finish(&p, 1, 1000.0);                               /* 3 of 14 busy */
    assert_int_equal(idle(&p, "7g", 1, 1000.0), 0);      /* the idle 7g GI hosts it */
    assert_int_equal(place(&p, 4, one), 1);              /* open: the idle 4g GI */
    finish(&p, 4, 1000.0);
    assert_int_equal(idle(&p, NULL, 0, 1000.0), 0);
    assert_int_equal(place(&p, 5, one), 1);
    pol_free(&p, true);
}

/* Property: a node that runs a job is never switched. Random arrivals,
 * departures and waiting counts on 3 nodes of 2 GPUs; before every on_idle
 * and on_finish plan the GIs of every node with a running job are noted,
 * and after it they are the same. */
static void check_busy_nodes_kept(const ms_gpu_t *before, const ms_cluster_t *c)
{
    int n, g;

    for (n = 0; n < 3; n++) {
        int run = 0;
        for (g = 2 * n; g < 2 * n + 2; g++)
            run += ms_gpu_running(&before[g]);
        if (run == 0)
            continue;
        for (g = 2 * n; g < 2 * n + 2; g++)
            assert_true(same_gpu(&before[g], &c->gpus[g]));
    }
}

static void test_busy_node_never_switches(void **state)
{
    int seed, switches = 0;

    (void)state;
    for (seed = 1; seed <= 20; seed++) {
        np_t p = np_new(6, 2);
        int32_t live[64];
        int nlive = 0, step;
        ms_rng_t r;

        ms_rng_seed(&r, (uint64_t)seed);
        for (step = 0; step < 300; step++) {
            ms_gpu_t before[6];
            int wait[MS_MAX_PROFILES] = {0}, k, gpus[8], n, i;
            memcpy(before, p.c->gpus, sizeof(before));
            if (nlive > 0 && (nlive == 64 || ms_rng_below(&r, 3) == 0)) {
                int q = (int)ms_rng_below(&r, (uint64_t)nlive);
                ms_plan_t plan;
                pt_stop(p.c, live[q], gpus, &n);
                memcpy(before, p.c->gpus, sizeof(before));
                for (i = 0; i < n; i++) {
                    ms_plan_init(&plan);
                    assert_int_equal(p.ops->on_finish(p.self, p.c, gpus[i], step * 100.0, &plan),
                                     MS_OK);
                    pt_apply(p.c, &plan);
                    ms_plan_fini(&plan);
                }
                check_busy_nodes_kept(before, p.c);
                live[q] = live[--nlive];
            } else {
                /* announced first, as the simulator does: place may then
                 * re-cut an empty node for the mix, never a busy one */
                ms_job_t j = pt_job(step, (int)ms_rng_below(&r, 5));
                p.ops->on_arrival(p.self, &j);
                memcpy(before, p.c->gpus, sizeof(before));
                if (place(&p, step, j.prof) >= 0)
                    live[nlive++] = step;
                check_busy_nodes_kept(before, p.c);
            }
            for (k = 0; k < 5; k++)
                wait[k] = (int)ms_rng_below(&r, 6);
            memcpy(before, p.c->gpus, sizeof(before));
            switches += idle_w(&p, wait, step * 100.0) > 0;
            check_busy_nodes_kept(before, p.c);
        }
        pol_free(&p, true);
    }
    assert_true(switches > 0);   /* the property was exercised */
}

/* An empty node takes the kind that hosts the recent arrival mix at least
 * twice as well as its layout, when a job is placed on it: after 64 7g
 * arrivals (nodes of 2 GPUs are smaller than the cycle: the cluster must
 * gain, and know 64 arrivals), node 0 (7g | 4g+3g hosts one 7g, training
 * two) is re-cut as the first 7g starts, node 1 when the third does.
 * Without arrivals announced nothing switches. */
static void test_empty_node_follows_the_mix(void **state)
{
    np_t p = np_new(4, 2), q = np_new(4, 2);
    ms_job_t j;
    int i, seven;

    (void)state;
    seven = pt_prof(p.g, "7g");
    j = pt_job(100, seven);
    for (i = 0; i < 64; i++)
        p.ops->on_arrival(p.self, &j);
    assert_int_equal(place(&p, 1, seven), 0);
    assert_int_equal(count(&p, 1, "7g"), 1);             /* node 0 training */
    assert_int_equal(count(&p, 1, "4g"), 0);
    assert_int_equal(count(&p, 2, "3g"), 1);             /* node 1 untouched */
    assert_int_equal(place(&p, 2, seven), 1);
    assert_int_equal(place(&p, 3, seven), 2);            /* node 1 re-cut now */
    assert_int_equal(count(&p, 3, "7g"), 1);
    /* the same jobs with no arrivals announced: static's placements */
    assert_int_equal(place(&q, 1, seven), 0);
    assert_int_equal(place(&q, 2, seven), -1);
    assert_int_equal(count(&q, 1, "4g"), 1);
    pol_free(&p, true);
    pol_free(&q, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_node_follows_the_mix),
        cmocka_unit_test(test_static_until_it_switches),
        cmocka_unit_test(test_node_layout_kinds),
        cmocka_unit_test(test_drained_node_switches),
        cmocka_unit_test(test_cordon_then_switch),
        cmocka_unit_test(test_no_cordon),
        cmocka_unit_test(test_cordon_rules),
        cmocka_unit_test(test_busy_node_never_switches),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
