/* test_policies.c - unit tests of each policy on small hand-built clusters. */
#include "policy_test.h"
#include "policy/policy_int.h"

#include "migsched/frag.h"

typedef struct pol {
    const ms_policy_ops_t *ops;
    void *self;
} pol_t;

static pol_t pol_new(const char *name, const ms_policy_cfg_t *cfg, ms_cluster_t *c)
{
    pol_t p;
    ms_plan_t plan;

    p.ops = ms_policy_find(name);
    assert_non_null(p.ops);
    assert_int_equal(p.ops->create(cfg, c, &p.self), MS_OK);
    if (p.ops->setup != NULL) {
        ms_plan_init(&plan);
        assert_int_equal(p.ops->setup(p.self, c, &plan), MS_OK);
        pt_apply(c, &plan);
        ms_plan_fini(&plan);
    }
    return p;
}

/* Place job j and apply; returns where it went. */
static ms_status_t place(pol_t *p, ms_cluster_t *c, int32_t idx, int prof, int *gpu, int *start)
{
    ms_job_t j = pt_job(idx, prof);
    ms_plan_t plan;
    ms_status_t st;

    ms_plan_init(&plan);
    if (p->ops->on_arrival != NULL)
        p->ops->on_arrival(p->self, &j);
    st = p->ops->place(p->self, c, &j, &plan);
    if (st == MS_OK)
        pt_apply(c, &plan);
    else
        assert_int_equal(plan.n, 0);
    ms_plan_fini(&plan);
    pt_where(c, idx, gpu, start);
    return st;
}

/* Stop job, then run on_finish for its GPU and apply. Returns plan size. */
static int finish(pol_t *p, ms_cluster_t *c, int32_t job, ms_plan_t *keep)
{
    int gpus[8], n, i, total = 0;
    ms_plan_t plan;

    pt_stop(c, job, gpus, &n);
    for (i = 0; i < n; i++) {
        ms_plan_init(&plan);
        if (p->ops->on_finish != NULL)
            assert_int_equal(p->ops->on_finish(p->self, c, gpus[i], 0.0, &plan), MS_OK);
        total += plan.n;
        if (keep != NULL)
            for (int q = 0; q < plan.n; q++)
                assert_int_equal(ms_plan_add(keep, &plan.ops[q]), MS_OK);
        pt_apply(c, &plan);
        ms_plan_fini(&plan);
    }
    return total;
}

static void test_registry(void **state)
{
    int n, i, k;
    const ms_policy_ops_t *const *all = ms_policies(&n);
    const char *want[] = {"fa", "fa+", "static", "first-fit", "best-fit", "mfi", "fgd",
                          "node-profile", "timeslice"};

    (void)state;
    assert_int_equal(n, 9);
    for (i = 0; i < n; i++) {
        assert_int_equal(all[i]->abi, MS_POLICY_ABI);
        assert_non_null(all[i]->create);
        assert_non_null(all[i]->destroy);
        assert_non_null(all[i]->place);
        assert_non_null(all[i]->help);
        assert_ptr_equal(ms_policy_find(all[i]->name), all[i]);
        for (k = 0; k < i; k++)
            assert_string_not_equal(all[i]->name, all[k]->name);
    }
    for (i = 0; i < 9; i++)
        assert_string_equal(all[i]->name, want[i]);   /* the fixed order */
    assert_null(ms_policy_find("nope"));
    assert_null(ms_policy_find(NULL));
}

static void test_first_best_fit(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 2, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t ff, bf;
    int gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    ff = pol_new("first-fit", &cfg, c);
    bf = pol_new("best-fit", &cfg, c);
    pt_run(c, 0, "1g", 0, 100);
    pt_run(c, 1, "4g", 0, 101);
    /* 2g: first-fit takes GPU 0 at its first free legal start; best-fit the
     * GPU left with the least free compute (GPU 1: 1 slice left) */
    {
        ms_plan_t p;
        ms_job_t j = pt_job(1, pt_prof(g, "2g"));
        ms_plan_init(&p);
        assert_int_equal(ff.ops->place(ff.self, c, &j, &p), MS_OK);
        assert_int_equal(p.n, 2);
        assert_int_equal(p.ops[0].kind, MS_OP_CREATE);
        assert_int_equal(p.ops[0].gpu, 0);
        assert_int_equal(p.ops[0].start, 2);
        ms_plan_fini(&p);
    }
    assert_int_equal(place(&bf, c, 2, pt_prof(g, "2g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 1);
    assert_int_equal(st, 4);
    ff.ops->destroy(ff.self);
    bf.ops->destroy(bf.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_mfi_hand(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 1, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t p;
    int gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    p = pol_new("mfi", &cfg, c);
    /* 1g at 0..3 strands the 4g (MFI +4); 1g@4 strands nothing */
    assert_int_equal(place(&p, c, 1, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 0);
    assert_int_equal(st, 4);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

/* Policy choice == brute-force minimum of a per-state score growth. */
static void check_min_growth(const char *name, const double *w)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 3, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t p;
    int k, gi, s, gpu, st, job = 10;

    ms_policy_cfg_defaults(&cfg);
    p = pol_new(name, &cfg, c);
    pt_run(c, 0, "3g", 4, 1);
    pt_run(c, 1, "1g", 2, 2);
    pt_run(c, 2, "2g", 0, 3);
    for (k = 0; k < ms_geom_nprofiles(g) - 1; k++) {
        double best = 1e300, got;
        int ok = 0;
        for (gi = 0; gi < c->ngpus; gi++)
            for (s = 0; s < 8; s++) {
                ms_state_t a, b = c->gpus[gi].state;
                double v;
                if (!((ms_state_fit(g, b, k) >> s) & 1u))
                    continue;
                a = ms_state_place(g, b, k, s);
                v = w != NULL ? ms_frag_fgd(g, a, w) - ms_frag_fgd(g, b, w)
                              : (double)(ms_frag_mfi(g, a) - ms_frag_mfi(g, b));
                if (v < best)
                    best = v;
                ok = 1;
            }
        if (!ok)
            continue;
        {
            ms_job_t j = pt_job(job, k);
            ms_plan_t plan;
            ms_state_t b, a;
            ms_plan_init(&plan);
            assert_int_equal(p.ops->place(p.self, c, &j, &plan), MS_OK);
            gpu = plan.ops[0].gpu;
            st = plan.ops[0].start;
            b = c->gpus[gpu].state;
            a = ms_state_place(g, b, k, st);
            got = w != NULL ? ms_frag_fgd(g, a, w) - ms_frag_fgd(g, b, w)
                            : (double)(ms_frag_mfi(g, a) - ms_frag_mfi(g, b));
            assert_float_equal(got, best, 1e-6);
            ms_plan_fini(&plan);
        }
    }
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_mfi_fgd_min_growth(void **state)
{
    double uniform[MS_MAX_PROFILES];
    int k;

    (void)state;
    for (k = 0; k < MS_MAX_PROFILES; k++)
        uniform[k] = 0.2;
    check_min_growth("mfi", NULL);
    check_min_growth("fgd", uniform);   /* no arrival yet: uniform weights */
}

static void test_fgd_demand(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 1, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t p;
    int i, gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    cfg.demand_window = 64;
    p = pol_new("fgd", &cfg, c);
    pt_run(c, 0, "1g", 0, 1);
    /* 64 arrivals of 4g... cannot go anywhere but they set the mix: then a
     * 1g must keep 3g@4 free (4g is already impossible) */
    for (i = 0; i < 64; i++) {
        ms_job_t j = pt_job(100 + i, pt_prof(g, "3g"));
        p.ops->on_arrival(p.self, &j);
    }
    assert_int_equal(place(&p, c, 2, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 0);
    assert_true(st < 4);   /* 3g@4 stays free */
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

/* --- fa -------------------------------------------------------------------- */

static void test_fa_prefers_lazy(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 2, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t p;
    int gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    p = pol_new("fa", &cfg, c);
    pt_run(c, 0, "3g", 0, 1);   /* 3/7 >= 0.4: Busy; 1g@4.. keeps FragCost low */
    pt_run(c, 1, "2g", 2, 2);   /* 2/7: Lazy */
    assert_int_equal(place(&p, c, 3, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 1);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

/* With balancing off the choice is the global least FragCost after. */
static void fa_least_cost(double t, bool balance)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 3, 0, MS_SHARE_MIG, MS_INDEX_SCAN);
    ms_policy_cfg_t cfg;
    ms_frag_table_t ft;
    pol_t p;
    int k, gi, s;

    ms_policy_cfg_defaults(&cfg);
    cfg.lb_threshold = t;
    cfg.balance = balance;
    ms_frag_table_fill(g, NULL, &ft);
    p = pol_new("fa", &cfg, c);
    pt_run(c, 0, "3g", 0, 1);
    pt_run(c, 1, "1g", 1, 2);
    pt_run(c, 2, "4g", 0, 3);
    for (k = 0; k < 3; k++) {
        double best = 1e300;
        ms_job_t j = pt_job(10 + k, k);
        ms_plan_t plan;
        for (gi = 0; gi < 3; gi++)
            for (s = 0; s < 8; s++)
                if ((ms_state_fit(g, c->gpus[gi].state, k) >> s) & 1u) {
                    double v = ft.cost[ms_state_place(g, c->gpus[gi].state, k, s)];
                    if (v < best)
                        best = v;
                }
        ms_plan_init(&plan);
        assert_int_equal(p.ops->place(p.self, c, &j, &plan), MS_OK);
        assert_float_equal(ft.cost[ms_state_place(g, c->gpus[plan.ops[0].gpu].state, k,
                                                  plan.ops[0].start)], best, 1e-9);
        ms_plan_fini(&plan);
    }
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_fa_least_fragcost_and_off_switches(void **state)
{
    (void)state;
    fa_least_cost(0.0, true);
    fa_least_cost(1.0, true);
    fa_least_cost(0.4, false);
}

static void test_fa_intra_migration(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 1, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    ms_frag_table_t ft;
    ms_plan_t keep;
    pol_t p;
    int gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    cfg.lb_threshold = 0.2;     /* 2/7 stays Busy after the finish */
    ms_frag_table_fill(g, NULL, &ft);
    p = pol_new("fa", &cfg, c);
    pt_run(c, 0, "1g", 1, 1);
    pt_run(c, 0, "1g", 3, 2);
    pt_run(c, 0, "1g", 5, 3);
    ms_plan_init(&keep);
    assert_true(finish(&p, c, 2, &keep) > 0);
    assert_float_equal(ft.cost[c->gpus[0].state], 0.0, 1e-12);
    pt_where(c, 1, &gpu, &st);
    assert_int_equal(gpu, 0);
    pt_where(c, 3, &gpu, &st);
    assert_int_equal(gpu, 0);
    assert_int_equal(ms_gpu_running(&c->gpus[0]), 2);
    ms_plan_fini(&keep);

    /* migration off: nothing moves */
    p.ops->destroy(p.self);
    cfg.migration = false;
    p = pol_new("fa", &cfg, c);
    pt_run(c, 0, "1g", 2, 4);
    ms_plan_init(&keep);
    finish(&p, c, 4, &keep);
    for (int i = 0; i < keep.n; i++)
        assert_int_not_equal(keep.ops[i].kind, MS_OP_MOVE);
    ms_plan_fini(&keep);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_fa_inter_migration(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 2, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    ms_plan_t keep;
    pol_t p;
    int i, moved = 0;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    p = pol_new("fa", &cfg, c);
    pt_run(c, 0, "3g", 4, 1);
    pt_run(c, 0, "2g", 0, 2);
    pt_run(c, 0, "1g", 2, 3);
    pt_run(c, 1, "1g", 0, 4);
    pt_run(c, 1, "1g", 1, 5);
    ms_plan_init(&keep);
    finish(&p, c, 5, &keep);   /* GPU 1 is now Lazy (1/7) */
    for (i = 0; i < keep.n; i++)
        if (keep.ops[i].kind == MS_OP_MOVE) {
            assert_int_equal(keep.ops[i].from_gpu, 0);
            assert_int_equal(keep.ops[i].gpu, 1);
            moved++;
        }
    assert_true(moved >= 1);
    assert_true(c->gpus[1].busy > 1);
    assert_true(c->gpus[1].busy <= c->gpus[0].busy);
    ms_plan_fini(&keep);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_fa_make_room(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 1, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    ms_plan_t plan;
    ms_job_t j;
    pol_t p;
    int gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    p = pol_new("fa", &cfg, c);
    pt_run(c, 0, "1g", 1, 1);
    pt_run(c, 0, "1g", 5, 2);
    j = pt_job(3, pt_prof(g, "4g"));
    ms_plan_init(&plan);
    assert_int_equal(p.ops->place(p.self, c, &j, &plan), MS_ENOFIT);
    assert_int_equal(p.ops->make_room(p.self, c, &j, 0.0, &plan), MS_OK);
    assert_true(plan.n > 0);
    pt_apply(c, &plan);
    assert_int_equal(place(&p, c, 3, j.prof, &gpu, &st), MS_OK);
    assert_int_equal(gpu, 0);
    assert_int_equal(st, 0);
    assert_int_equal(ms_gpu_running(&c->gpus[0]), 3);
    /* nothing more can help a 3g: no capacity */
    j = pt_job(4, pt_prof(g, "3g"));
    assert_int_equal(p.ops->make_room(p.self, c, &j, 0.0, &plan), MS_ENOFIT);
    assert_int_equal(plan.n, 0);
    ms_plan_fini(&plan);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_fa_static_mode(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 2, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t p;
    int gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    cfg.dynamic = false;
    cfg.static_layout = "4g+2g+1g";
    p = pol_new("fa", &cfg, c);
    assert_int_equal(c->gpus[0].ninst, 3);
    assert_int_equal(place(&p, c, 1, pt_prof(g, "4g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 0);                 /* both Lazy: lowest index */
    assert_int_equal(place(&p, c, 2, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 1);                 /* GPU 0 is Busy now */
    assert_int_equal(st, 6);
    finish(&p, c, 1, NULL);
    assert_int_equal(c->gpus[0].ninst, 3);    /* the layout stays */
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

/* --- static ---------------------------------------------------------------- */

static void test_static_default_hosts_every_profile(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 4, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t p;
    int k, gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    p = pol_new("static", &cfg, c);
    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        ms_job_t j = pt_job(k, k);
        assert_true(p.ops->can_host(p.self, c, &j));
    }
    for (k = ms_geom_nprofiles(g) - 1; k >= 0; k--) {
        assert_int_equal(place(&p, c, k, k, &gpu, &st), MS_OK);
        /* exact-size instance exists for each classic profile */
        assert_int_equal(c->gpus[gpu].inst[ms_gpu_find_inst(&c->gpus[gpu], st)].prof, k);
    }
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

/* Every model's default static layouts are maximal: a GPU laid out by
 * one has no room left for any active profile. (The generic default for
 * models without the 8-slice names once gave the A30 a layout of one 1g
 * instance, leaving three of its four slices to nothing.) */
static void test_static_default_layouts_maximal(void **state)
{
    const ms_model_t *models;
    int nm, m;

    (void)state;
    models = ms_models(&nm);
    for (m = 0; m < nm; m++) {
        ms_geom_t *g = NULL;
        ms__layouts_t lays;
        int i, k, j;

        assert_int_equal(ms_geom_create(&models[m], 0, &g), MS_OK);
        assert_int_equal(ms__layouts_default(g, &lays), MS_OK);
        assert_true(lays.n > 0);
        for (i = 0; i < lays.n; i++) {
            ms_state_t s = ms_geom_empty_state();

            for (j = 0; j < lays.l[i].n; j++) {
                s = ms_state_place(g, s, lays.l[i].gi[j].prof, lays.l[i].gi[j].start);
                assert_int_not_equal(s, MS_STATE_NONE);
            }
            for (k = 0; k < ms_geom_nprofiles(g); k++)
                if (ms_state_fit(g, s, k) != 0)
                    fail_msg("%s: default layout %d has room for profile %d", models[m].name, i, k);
        }
        ms_geom_destroy(g);
    }
}

static void test_static_layouts(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 2, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    ms_diag_t d;
    void *self = NULL;
    pol_t p;
    int gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    cfg.static_layout = "4g+4g";
    assert_int_not_equal(ms_policy_find("static")->create(&cfg, c, &self), MS_OK);
    cfg.static_layout = "3g+banana";
    assert_int_not_equal(ms_policy_find("static")->create(&cfg, c, &self), MS_OK);
    cfg.static_layout = "3g+2g+1g+1g";   /* needs 3g@4: greedy 3g@0 would fail */
    p = pol_new("static", &cfg, c);
    assert_int_equal(c->gpus[0].ninst, 4);
    assert_int_equal(c->gpus[0].inst[3].start, 4);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);

    c = pt_cluster(g, 2, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    cfg.static_layout = "4g+2g+1g";
    p = pol_new("static", &cfg, c);
    {
        ms_job_t j = pt_job(9, pt_prof(g, "7g"));
        assert_false(p.ops->can_host(p.self, c, &j));
    }
    assert_int_equal(place(&p, c, 1, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 0);
    assert_int_equal(st, 6);
    assert_int_equal(place(&p, c, 2, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 1);
    assert_int_equal(st, 6);
    assert_int_equal(place(&p, c, 3, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    assert_int_equal(gpu, 0);
    assert_int_equal(st, 4);
    finish(&p, c, 3, NULL);
    assert_int_equal(c->gpus[0].ninst, 3);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);

    c = pt_cluster(g, 3, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    cfg.static_layout = "7g;4g+3g";
    p = pol_new("static", &cfg, c);
    assert_int_equal(c->gpus[0].ninst, 1);
    assert_int_equal(c->gpus[1].ninst, 2);
    assert_int_equal(c->gpus[2].ninst, 1);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_diag_clear(&d);
    ms_geom_destroy(g);
}

/* --- timeslice, node-profile, gangs ------------------------------------------ */

static void test_timeslice(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 2, 0, MS_SHARE_TIMESLICE, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    pol_t p;
    int i, gpu, st;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    cfg.replicas = 2;
    p = pol_new("timeslice", &cfg, c);
    for (i = 0; i < 4; i++) {
        assert_int_equal(place(&p, c, i, pt_prof(g, "3g"), &gpu, &st), MS_OK);
        assert_int_equal(gpu, i % 2);
        assert_int_equal(st, -1);
    }
    assert_int_equal(place(&p, c, 9, 0, &gpu, &st), MS_ENOFIT);
    finish(&p, c, 1, NULL);
    assert_int_equal(place(&p, c, 10, 0, &gpu, &st), MS_OK);
    assert_int_equal(gpu, 1);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

/* node-profile starts from static's layouts (the rest of its behaviour is
 * test_node_profile.c's): the default cycle, 7g | 4g+3g, on a 2x2 cluster,
 * and a drained node switches in on_idle when another kind hosts more of
 * what waits. */
static void test_node_profile(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 4, 2, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    ms_plan_t plan;
    int wait[MS_MAX_PROFILES] = {0}, gpu, st, i;
    pol_t p;

    (void)state;
    ms_policy_cfg_defaults(&cfg);
    p = pol_new("node-profile", &cfg, c);
    assert_int_equal(c->gpus[0].ninst, 1);          /* static: 7g */
    assert_int_equal(c->gpus[1].ninst, 2);          /* 4g + 3g */
    assert_int_equal(c->gpus[2].ninst, 4);          /* 3g + 2g + 1g + 1g */
    /* thirty 1g jobs wait beyond what idle GIs host: each drained node goes
     * 7x1g, the layout that hosts the most of them (nodes of 2 GPUs, less
     * than the static cycle: the cluster must gain too, known from 64
     * arrivals; docs/policies.md) */
    for (i = 0; i < 64; i++) {
        ms_job_t a = pt_job(100 + i, pt_prof(g, "1g"));
        p.ops->on_arrival(p.self, &a);
    }
    wait[pt_prof(g, "1g")] = 30;
    ms_plan_init(&plan);
    assert_int_equal(p.ops->on_idle(p.self, c, wait, 0.0, &plan), MS_OK);
    pt_apply(c, &plan);
    assert_int_equal(c->gpus[0].ninst + c->gpus[2].ninst, 7 + 7);
    assert_int_equal(place(&p, c, 1, pt_prof(g, "1g"), &gpu, &st), MS_OK);
    ms_plan_fini(&plan);
    p.ops->destroy(p.self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_gang(void **state)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 4, 2, MS_SHARE_MIG, MS_INDEX_BUCKET);
    ms_plan_t plan;
    ms_job_t j = pt_job(7, pt_prof(g, "7g"));

    (void)state;
    pt_run(c, 0, "1g", 0, 1);
    j.gang = 2;
    ms_plan_init(&plan);
    assert_int_equal(ms_policy_place_gang(c, &j, &plan), MS_OK);
    pt_apply(c, &plan);
    assert_int_equal(ms_gpu_find_job(&c->gpus[2], 7), 0);
    assert_int_equal(ms_gpu_find_job(&c->gpus[3], 7), 0);
    j.idx = 8;
    assert_int_equal(ms_policy_place_gang(c, &j, &plan), MS_ENOFIT);
    assert_int_equal(plan.n, 0);
    j.gang = 3;
    assert_int_equal(ms_policy_place_gang(c, &j, &plan), MS_ENOFIT);
    ms_plan_fini(&plan);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_first_best_fit),
        cmocka_unit_test(test_mfi_hand),
        cmocka_unit_test(test_mfi_fgd_min_growth),
        cmocka_unit_test(test_fgd_demand),
        cmocka_unit_test(test_fa_prefers_lazy),
        cmocka_unit_test(test_fa_least_fragcost_and_off_switches),
        cmocka_unit_test(test_fa_intra_migration),
        cmocka_unit_test(test_fa_inter_migration),
        cmocka_unit_test(test_fa_make_room),
        cmocka_unit_test(test_fa_static_mode),
        cmocka_unit_test(test_static_default_hosts_every_profile),
        cmocka_unit_test(test_static_default_layouts_maximal),
        cmocka_unit_test(test_static_layouts),
        cmocka_unit_test(test_timeslice),
        cmocka_unit_test(test_node_profile),
        cmocka_unit_test(test_gang),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
