/* test_node_profile.c - node-profile (seed 002): when a node switches layout,
 * when it is cordoned, and when hysteresis holds (docs/policies.md). */
#include "policy_test.h"

typedef struct np {
    const ms_policy_ops_t *ops;
    void *self;
    ms_cluster_t *c;
    ms_geom_t *g;
} np_t;

static np_t np_new(int ngpus, int per)
{
    np_t p;
    ms_policy_cfg_t cfg;
    ms_plan_t plan;

    p.g = pt_a100();
    p.c = pt_cluster(p.g, ngpus, per, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_defaults(&cfg);   /* hysteresis 300 s */
    p.ops = ms_policy_find("node-profile");
    assert_non_null(p.ops);
    assert_int_equal(p.ops->create(&cfg, p.c, &p.self), MS_OK);
    ms_plan_init(&plan);
    assert_int_equal(p.ops->setup(p.self, p.c, &plan), MS_OK);
    pt_apply(p.c, &plan);
    ms_plan_free(&plan);
    return p;
}

static void np_free(np_t *p)
{
    p->ops->destroy(p->self);
    ms_cluster_destroy(p->c);
    ms_geom_destroy(p->g);
}

/* Place a job of profile `prof`; on success apply and return its GPU. */
static int place(np_t *p, int32_t idx, const char *prof)
{
    ms_job_t j = pt_job(idx, pt_prof(p->g, prof));
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
    ms_plan_free(&plan);
    return gpu;
}

/* on_idle with n jobs of profile `prof` waiting (n = 0: none); applies the
 * plan and returns its length. */
static int idle(np_t *p, const char *prof, int n, double now)
{
    int wait[MS_MAX_PROFILES] = {0}, len;
    ms_plan_t plan;

    if (n > 0)
        wait[pt_prof(p->g, prof)] = n;
    ms_plan_init(&plan);
    assert_int_equal(p->ops->on_idle(p->self, p->c, wait, now, &plan), MS_OK);
    len = plan.n;
    pt_apply(p->c, &plan);
    ms_plan_free(&plan);
    return len;
}

/* Stop a job and run on_finish for its GPU. */
static void finish(np_t *p, int32_t job, double now)
{
    int gpus[8], n, i;
    ms_plan_t plan;

    pt_stop(p->c, job, gpus, &n);
    for (i = 0; i < n; i++) {
        ms_plan_init(&plan);
        assert_int_equal(p->ops->on_finish(p->self, p->c, gpus[i], now, &plan), MS_OK);
        pt_apply(p->c, &plan);
        ms_plan_free(&plan);
    }
}

/* GIs of profile `prof` on GPU g. */
static int count(const np_t *p, int g, const char *prof)
{
    int i, n = 0, k = pt_prof(p->g, prof);

    for (i = 0; i < p->c->gpus[g].ninst; i++)
        n += p->c->gpus[g].inst[i].prof == k;
    return n;
}

/* An idle cluster serves a 7g job at once: the balanced node (no 7g) is
 * drained and switches in the same scheduling pass. */
static void test_idle_cluster_serves_7g(void **state)
{
    np_t p = np_new(4, 4);

    (void)state;
    assert_int_equal(count(&p, 0, "2g"), 3);              /* balanced */
    assert_int_equal(place(&p, 1, "7g"), -1);
    assert_true(idle(&p, "7g", 1, 0.0) > 0);
    assert_int_equal(count(&p, 3, "7g"), 1);              /* the whole node */
    assert_int_equal(place(&p, 1, "7g"), 0);
    np_free(&p);
}

/* A drained node whose layout hosts nothing that waits switches at once,
 * hysteresis or not. */
static void test_drained_switches_within_hysteresis(void **state)
{
    np_t p = np_new(2, 2);
    int i;

    (void)state;
    assert_true(idle(&p, "1g", 10, 0.0) > 0);             /* inference-peak */
    assert_int_equal(count(&p, 0, "1g"), 7);
    for (i = 0; i < 10; i++)
        assert_true(place(&p, 10 + i, "1g") >= 0);
    for (i = 0; i < 10; i++)
        finish(&p, 10 + i, 50.0);
    /* t = 60 < 300: a 3g job waits; 7x1g hosts nothing of it */
    assert_int_equal(place(&p, 1, "3g"), -1);
    assert_true(idle(&p, "3g", 1, 60.0) > 0);
    assert_int_equal(count(&p, 0, "7g"), 1);
    assert_int_equal(place(&p, 1, "3g"), 0);
    np_free(&p);
}

/* A node whose GIs are all busy does not count as capacity: with node 0's
 * 7g GIs full, the drained balanced node 1 switches (seen on the Alibaba
 * replay, where 7g jobs waited for node 0's departures for days). */
static void test_full_node_is_no_capacity(void **state)
{
    np_t p = np_new(4, 2);

    (void)state;
    assert_true(idle(&p, "7g", 2, 0.0) > 0);
    assert_int_equal(place(&p, 1, "7g"), 0);
    assert_int_equal(place(&p, 2, "7g"), 1);
    assert_int_equal(count(&p, 2, "2g"), 3);              /* node 1 balanced */
    /* long after: node 0 is past its hysteresis and still full */
    assert_int_equal(place(&p, 3, "7g"), -1);
    assert_true(idle(&p, "7g", 1, 1e6) > 0);
    assert_int_equal(count(&p, 2, "7g"), 1);
    assert_int_equal(place(&p, 3, "7g"), 2);
    np_free(&p);
}

/* The same with node 1 switched recently (to inference-peak) and drained:
 * it hosts nothing that waits, so it switches although within hysteresis. */
static void test_recent_drained_node_switches(void **state)
{
    np_t p = np_new(4, 2);

    (void)state;
    assert_true(idle(&p, "7g", 2, 0.0) > 0);              /* node 0 training */
    assert_int_equal(place(&p, 1, "7g"), 0);
    assert_int_equal(place(&p, 2, "7g"), 1);
    assert_true(idle(&p, "1g", 6, 1000.0) > 0);           /* node 1 inference */
    assert_int_equal(count(&p, 2, "1g"), 7);
    assert_int_equal(place(&p, 3, "7g"), -1);
    assert_true(idle(&p, "7g", 1, 1010.0) > 0);
    assert_int_equal(count(&p, 2, "7g"), 1);
    assert_int_equal(place(&p, 3, "7g"), 2);
    np_free(&p);
}

/* Hysteresis holds where the layout still hosts what waits: a drained
 * training node (hosts 1g on its 7g GIs) does not go inference-peak before
 * hysteresis_s; after it, the seed's rule (inf > 4) switches it. */
static void test_hysteresis_holds(void **state)
{
    np_t p = np_new(2, 2);

    (void)state;
    assert_true(idle(&p, "3g", 1, 0.0) > 0);
    assert_int_equal(place(&p, 1, "3g"), 0);
    finish(&p, 1, 100.0);
    assert_int_equal(idle(&p, "1g", 10, 200.0), 0);
    assert_int_equal(count(&p, 0, "7g"), 1);
    assert_true(idle(&p, "1g", 10, 300.0) > 0);
    assert_int_equal(count(&p, 0, "1g"), 7);
    np_free(&p);
}

/* A busy node is cordoned only past its hysteresis and only when something
 * waits that the new layout hosts; then it gets no new job until drained. */
static void test_cordon(void **state)
{
    np_t p = np_new(2, 2);

    (void)state;
    assert_true(idle(&p, "7g", 2, 0.0) > 0);
    assert_int_equal(place(&p, 1, "7g"), 0);
    assert_int_equal(place(&p, 2, "7g"), 1);
    /* within hysteresis: 1g jobs wait, the node keeps its layout, open */
    assert_int_equal(idle(&p, "1g", 10, 100.0), 0);
    finish(&p, 2, 150.0);
    assert_int_equal(place(&p, 3, "1g"), 1);
    /* nothing waits: no cordon, whatever the running mix */
    assert_int_equal(idle(&p, NULL, 0, 1000.0), 0);
    finish(&p, 3, 1000.0);
    assert_int_equal(place(&p, 4, "4g"), 1);
    finish(&p, 4, 1000.0);
    /* past hysteresis, 10 x 1g wait: cordoned for inference-peak */
    assert_int_equal(idle(&p, "1g", 10, 1000.0), 0);
    assert_int_equal(place(&p, 5, "1g"), -1);
    /* drained: switches */
    finish(&p, 1, 1100.0);
    assert_true(idle(&p, "1g", 10, 1100.0) > 0);
    assert_int_equal(count(&p, 0, "1g"), 7);
    assert_int_equal(count(&p, 1, "1g"), 7);
    assert_true(place(&p, 5, "1g") >= 0);
    np_free(&p);
}

/* With nothing waiting no node is cordoned, whatever it runs: a balanced
 * node running five 1g jobs (the seed's rule alone says inference-peak)
 * still takes a 2g job. */
static void test_no_cordon_without_demand(void **state)
{
    np_t p = np_new(8, 8);
    int i;

    (void)state;
    for (i = 0; i < 5; i++)
        assert_int_equal(place(&p, 10 + i, "1g"), i);     /* the 1g GIs */
    assert_int_equal(idle(&p, NULL, 0, 1000.0), 0);
    assert_true(place(&p, 20, "2g") >= 0);
    np_free(&p);
}

/* Waiting demand is spread: each drained node takes what its new layout
 * hosts, the rest of the nodes keep theirs. */
static void test_demand_spread(void **state)
{
    np_t p = np_new(6, 2);

    (void)state;
    assert_true(idle(&p, "7g", 3, 0.0) > 0);
    assert_int_equal(count(&p, 0, "7g"), 1);
    assert_int_equal(count(&p, 2, "7g"), 1);              /* 2 nodes for 3 jobs */
    assert_int_equal(count(&p, 4, "2g"), 3);              /* third stays balanced */
    np_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_cluster_serves_7g),
        cmocka_unit_test(test_drained_switches_within_hysteresis),
        cmocka_unit_test(test_full_node_is_no_capacity),
        cmocka_unit_test(test_recent_drained_node_switches),
        cmocka_unit_test(test_hysteresis_holds),
        cmocka_unit_test(test_cordon),
        cmocka_unit_test(test_no_cordon_without_demand),
        cmocka_unit_test(test_demand_spread),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
