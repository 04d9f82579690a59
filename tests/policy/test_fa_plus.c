/* test_fa_plus.c - fa+ (docs/policies.md): the four-job example of issue 11,
 * the demand-weighted capacity cost, and make_room's moves (intra, inter,
 * and only when they pay). */
#include "policy_test.h"

#include <math.h>

#include "migsched/rng.h"
#include "migsched/sim.h"
#include "migsched/trace.h"
#include "policy/fa_plus_int.h"

typedef struct segs {
    ms_segment_t v[64];
    int n;
} segs_t;

static void collect(void *ctx, const ms_segment_t *seg)
{
    segs_t *s = ctx;

    if (s->n < 64)
        s->v[s->n++] = *seg;
}

static double first_begin(const segs_t *s, int job)
{
    double b = INFINITY;
    int i;

    for (i = 0; i < s->n; i++)
        if (s->v[i].job == job && s->v[i].begin_s < b)
            b = s->v[i].begin_s;
    return b;
}

/* Issue 11: three long 1g jobs at t = 0, 1, 2 and a 7g at t = 3 on two
 * GPUs. fa's FragCost charges nothing for a 1g on an empty GPU and its
 * tie-break spreads, so the second 1g takes the empty GPU and the 7g waits
 * 1000 s; fa+ charges the empty GPU's 7g slot and the 7g starts at once.
 * Also with balancing or migration off: it is the placement cost. */
static void run_four(const char *pol, bool balance, bool migration, segs_t *s,
                     ms_metrics_t *m)
{
    ms_geom_t *g = pt_a100();
    ms_job_t jobs[4];
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    int i, one = pt_prof(g, "1g"), seven = pt_prof(g, "7g");

    for (i = 0; i < 4; i++) {
        jobs[i] = pt_job(i, i < 3 ? one : seven);
        jobs[i].arrival = i;
        jobs[i].duration = i < 3 ? 10000.0 : 1000.0;
    }
    assert_int_equal(ms_trace_from_jobs(g, jobs, 4, NULL, &t), MS_OK);
    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = ms_policy_find(pol);
    assert_non_null(cfg.sched.policy);
    cfg.ngpus = 2;
    cfg.sched.pcfg.balance = balance;
    cfg.sched.pcfg.migration = migration;
    cfg.ctx = s;
    cfg.on_segment = collect;
    s->n = 0;
    assert_int_equal(ms_sim_run(&cfg, t, m, NULL), MS_OK);
    assert_int_equal(m->jobs_completed, 4);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

static void test_four_jobs(void **state)
{
    segs_t s;
    ms_metrics_t m;
    int b, mig;

    (void)state;
    for (b = 0; b < 2; b++)
        for (mig = 0; mig < 2; mig++) {
            run_four("fa+", b, mig, &s, &m);
            assert_float_equal(first_begin(&s, 3), 3.0, 1e-9);   /* the 7g at once */
            assert_int_equal(m.migrations, 0);
        }
    /* the contrast the issue measured: fa makes the 7g wait */
    run_four("fa", true, true, &s, &m);
    assert_true(first_begin(&s, 3) > 1000.0);
}

typedef struct fp {
    const ms_policy_ops_t *ops;
    void *self;
    ms_cluster_t *c;
    ms_geom_t *g;
} fp_t;

static fp_t fp_new(int ngpus, ms_policy_cfg_t *cfg)
{
    fp_t p;
    ms_policy_cfg_t d;

    if (cfg == NULL) {
        ms_policy_cfg_defaults(&d);
        cfg = &d;
    }
    p.g = pt_a100();
    p.c = pt_cluster(p.g, ngpus, 0, MS_SHARE_MIG, MS_INDEX_BUCKET);
    p.ops = ms_policy_find("fa+");
    assert_non_null(p.ops);
    assert_int_equal(p.ops->create(cfg, p.c, &p.self), MS_OK);
    return p;
}

static void fp_free(fp_t *p)
{
    p->ops->destroy(p->self);
    ms_cluster_destroy(p->c);
    ms_geom_destroy(p->g);
}

/* Property: with balancing off and the uniform demand of the prior, a 1g
 * never opens an empty GPU while a GPU that already runs something can take
 * it: on an empty GPU it costs the 7g (7 slices' worth) and a 3g or 4g,
 * more than any slots it can take elsewhere. Random fills of 1g/2g/3g jobs
 * on 4 GPUs. (Under a skewed demand it may: a 4g slot in high demand can be
 * worth more than an empty GPU's 7g.) */
static void test_small_jobs_keep_empty_gpus(void **state)
{
    ms_policy_cfg_t cfg;
    ms_rng_t r;
    int trial;

    (void)state;
    ms_rng_seed(&r, 7);
    ms_policy_cfg_defaults(&cfg);
    cfg.balance = false;
    for (trial = 0; trial < 200; trial++) {
        fp_t p = fp_new(4, &cfg);
        int step, k1 = pt_prof(p.g, "1g");
        for (step = 0; step < 12; step++) {
            int k = step == 0 ? k1 : (int)ms_rng_below(&r, 3), gi, used_fits = 0;
            ms_job_t j = pt_job(step, k);
            ms_plan_t plan;
            ms_status_t st;
            for (gi = 0; gi < 4; gi++)
                used_fits |= p.c->gpus[gi].ninst > 0 &&
                             ms_state_fit(p.g, p.c->gpus[gi].state, k) != 0;
            ms_plan_init(&plan);
            st = p.ops->place(p.self, p.c, &j, &plan);
            if (st == MS_OK) {
                /* CREATE then START: the GPU is the START's */
                int g = plan.ops[plan.n - 1].gpu;
                if (used_fits && k == k1)
                    assert_true(p.c->gpus[g].ninst > 0);
                pt_apply(p.c, &plan);
            }
            ms_plan_fini(&plan);
        }
        fp_free(&p);
    }
}

/* make_room: a 7g fits nowhere on two GPUs with 1g jobs (GPU 0: two, GPU 1:
 * one). fa+ evicts the single 1g of GPU 1 onto GPU 0 (one move), and the 7g
 * then fits on GPU 1. With moves too expensive to pay it does nothing. */
static void test_make_room_frees_a_gpu(void **state)
{
    ms_policy_cfg_t cfg;
    int pass;

    (void)state;
    for (pass = 0; pass < 2; pass++) {
        fp_t p;
        ms_plan_t plan;
        ms_job_t small = pt_job(99, 0), big;
        ms_status_t st;

        ms_policy_cfg_defaults(&cfg);
        cfg.migrate_cost_s = pass == 0 ? 10.0 : 1e6;
        p = fp_new(2, &cfg);
        small.duration = 1000.0;
        p.ops->on_arrival(p.self, &small);   /* mean duration 1000 s */
        pt_run(p.c, 0, "1g", 0, 1);
        pt_run(p.c, 0, "1g", 1, 2);
        pt_run(p.c, 1, "1g", 3, 3);
        big = pt_job(4, pt_prof(p.g, "7g"));
        ms_plan_init(&plan);
        assert_int_equal(p.ops->place(p.self, p.c, &big, &plan), MS_ENOFIT);
        st = p.ops->make_room(p.self, p.c, &big, 0.0, &plan);
        if (pass == 1) {
            assert_int_equal(st, MS_ENOFIT);
            assert_int_equal(plan.n, 0);
        } else {
            int q, moves = 0;
            assert_int_equal(st, MS_OK);
            for (q = 0; q < plan.n; q++)
                if (plan.ops[q].kind == MS_OP_MOVE) {
                    moves++;
                    assert_int_equal(plan.ops[q].job, 3);
                    assert_int_equal(plan.ops[q].from_gpu, 1);
                    assert_int_equal(plan.ops[q].gpu, 0);
                }
            assert_int_equal(moves, 1);
            pt_apply(p.c, &plan);
            assert_int_equal(p.ops->place(p.self, p.c, &big, &plan), MS_OK);
            assert_int_equal(plan.ops[plan.n - 1].gpu, 1);
            pt_apply(p.c, &plan);
        }
        ms_plan_fini(&plan);
        fp_free(&p);
    }
}

/* The plan of the 4-GPU case below: GPU 2's two jobs moved, job 3 (its 1g)
 * to GPU 3, the other (its 2g) to GPU 0. */
static void assert_own_gpus_plan(const ms_plan_t *plan)
{
    int q, moves = 0;

    for (q = 0; q < plan->n; q++) {
        if (plan->ops[q].kind != MS_OP_MOVE)
            continue;
        moves++;
        assert_int_equal(plan->ops[q].from_gpu, 2);
        assert_int_equal(plan->ops[q].gpu, plan->ops[q].job == 3 ? 3 : 0);
    }
    assert_int_equal(moves, 2);
}

/* make_room sends each evicted job to a GPU of its own. A 7g needs GPU 2
 * (1g@0, 2g@2) emptied: with GPU 0 (4g@0, room for a 1g or a 2g) the only
 * GPU with room, no plan (one GPU for two jobs, though each profile alone
 * has one); with GPU 3 (4g@0, 2g@4: room for a 1g at 6) as well, the 1g
 * goes there, the 2g to GPU 0, and the 7g fits on GPU 2. */
static void test_make_room_own_gpus(void **state)
{
    int ngpus;

    (void)state;
    for (ngpus = 3; ngpus <= 4; ngpus++) {
        fp_t p = fp_new(ngpus, NULL);
        ms_plan_t plan;
        ms_job_t big = pt_job(9, pt_prof(p.g, "7g"));
        ms_status_t st;

        big.duration = 1000.0;
        p.ops->on_arrival(p.self, &big);   /* mean duration 1000 s: moves pay */
        pt_run(p.c, 0, "4g", 0, 1);
        pt_run(p.c, 1, "7g", 0, 2);
        pt_run(p.c, 2, "1g", 0, 3);
        pt_run(p.c, 2, "2g", 2, 4);
        if (ngpus == 4) {
            pt_run(p.c, 3, "4g", 0, 5);
            pt_run(p.c, 3, "2g", 4, 6);
        }
        ms_plan_init(&plan);
        assert_int_equal(p.ops->place(p.self, p.c, &big, &plan), MS_ENOFIT);
        st = p.ops->make_room(p.self, p.c, &big, 0.0, &plan);
        if (ngpus == 3) {
            assert_int_equal(st, MS_ENOFIT);
            assert_int_equal(plan.n, 0);
        } else {
            assert_int_equal(st, MS_OK);
            assert_own_gpus_plan(&plan);
            pt_apply(p.c, &plan);
            assert_int_equal(p.ops->place(p.self, p.c, &big, &plan), MS_OK);
            assert_int_equal(plan.ops[plan.n - 1].gpu, 2);
            pt_apply(p.c, &plan);
        }
        ms_plan_fini(&plan);
        fp_free(&p);
    }
}

/* A search that found nothing is not made again while ops only take room
 * (issue 25: retried when an event could unblock it). GPU 0 (4g@0) is the
 * only GPU with room and GPU 2's two jobs need two: no plan, one search;
 * a 1g placed on GPU 0 (CREATE + START) searches nothing; once the 1g of
 * the full GPU 3 ends (STOP + DESTROY), the search is made and finds GPU
 * 2's 1g a place there and its 2g one on GPU 0. */
static void test_make_room_waits_for_room(void **state)
{
    fp_t p = fp_new(4, NULL);
    const ms__faplus_t *f = p.self;
    ms_plan_t plan;
    ms_job_t big = pt_job(9, pt_prof(p.g, "7g"));
    ms_op_t op;
    int gpus[1], n;
    uint64_t searched;

    (void)state;
    big.duration = 1000.0;
    p.ops->on_arrival(p.self, &big);
    pt_run(p.c, 0, "4g", 0, 1);
    pt_run(p.c, 1, "7g", 0, 2);
    pt_run(p.c, 2, "1g", 0, 3);
    pt_run(p.c, 2, "2g", 2, 4);
    pt_run(p.c, 3, "4g", 0, 5);
    pt_run(p.c, 3, "2g", 4, 6);
    pt_run(p.c, 3, "1g", 6, 7);
    ms_plan_init(&plan);
    searched = f->searches;
    assert_int_equal(p.ops->make_room(p.self, p.c, &big, 0.0, &plan), MS_ENOFIT);
    assert_int_equal(f->searches, searched + 1);
    assert_int_equal(p.ops->make_room(p.self, p.c, &big, 0.0, &plan), MS_ENOFIT);
    pt_run(p.c, 0, "1g", 6, 8);
    assert_int_equal(p.ops->make_room(p.self, p.c, &big, 0.0, &plan), MS_ENOFIT);
    assert_int_equal(f->searches, searched + 1);
    pt_stop(p.c, 7, gpus, &n);
    assert_int_equal(n, 1);
    memset(&op, 0, sizeof(op));
    op.kind = MS_OP_DESTROY;
    op.gpu = 3;
    op.start = 6;
    op.prof = (int8_t)pt_prof(p.g, "1g");
    op.from_gpu = op.from_start = -1;
    assert_int_equal(ms_cluster_apply_op(p.c, &op), MS_OK);
    assert_int_equal(p.ops->make_room(p.self, p.c, &big, 0.0, &plan), MS_OK);
    assert_int_equal(f->searches, searched + 2);
    assert_own_gpus_plan(&plan);
    ms_plan_fini(&plan);
    fp_free(&p);
}

/* make_room inside one GPU: 1g@1 and 1g@5 leave no room for a 4g (needs
 * slices 0-3) nor a 3g at 4; re-laying one 1g makes room without another GPU. */
static void test_make_room_intra(void **state)
{
    fp_t p = fp_new(1, NULL);
    ms_plan_t plan;
    ms_job_t j;
    int q, moves = 0;

    (void)state;
    pt_run(p.c, 0, "1g", 1, 1);
    pt_run(p.c, 0, "1g", 5, 2);
    j = pt_job(3, pt_prof(p.g, "4g"));
    j.duration = 1000.0;
    p.ops->on_arrival(p.self, &j);
    ms_plan_init(&plan);
    assert_int_equal(p.ops->place(p.self, p.c, &j, &plan), MS_ENOFIT);
    assert_int_equal(p.ops->make_room(p.self, p.c, &j, 0.0, &plan), MS_OK);
    for (q = 0; q < plan.n; q++)
        moves += plan.ops[q].kind == MS_OP_MOVE;
    assert_int_equal(moves, 1);
    pt_apply(p.c, &plan);
    assert_int_equal(p.ops->place(p.self, p.c, &j, &plan), MS_OK);
    pt_apply(p.c, &plan);
    ms_plan_fini(&plan);
    fp_free(&p);
}

/* The queue-depth gate: the same intra-GPU room as above is made while at
 * most room_queue_max jobs wait (the last pass's count, from on_idle), and
 * not once more wait, since a deep queue would take the capacity anyway;
 * but still once the head has waited past the time jobs may pass it
 * (pass_bound_s, which ms_sched sets from its queue: 0 under FIFO). */
static void test_make_room_queue_gate(void **state)
{
    int waiting;

    (void)state;
    for (waiting = 2; waiting <= 4; waiting++) {
        ms_policy_cfg_t cfg;
        int wait[MS_MAX_PROFILES] = {0};
        ms_plan_t plan;
        ms_job_t j;
        fp_t p;

        ms_policy_cfg_defaults(&cfg);
        cfg.room_queue_max = 2;
        cfg.pass_bound_s = 100.0;
        p = fp_new(1, &cfg);
        pt_run(p.c, 0, "1g", 1, 1);
        pt_run(p.c, 0, "1g", 5, 2);
        j = pt_job(3, pt_prof(p.g, "4g"));
        j.duration = 1000.0;
        p.ops->on_arrival(p.self, &j);
        wait[pt_prof(p.g, "4g")] = waiting;
        ms_plan_init(&plan);
        assert_int_equal(p.ops->on_idle(p.self, p.c, wait, 0.0, &plan), MS_OK);
        /* j arrived at 0; at 150 s it has waited past the bound */
        assert_int_equal(p.ops->make_room(p.self, p.c, &j, waiting == 4 ? 150.0 : 50.0, &plan),
                         waiting != 3 ? MS_OK : MS_ENOFIT);
        assert_true(waiting != 3 ? plan.n > 0 : plan.n == 0);
        ms_plan_fini(&plan);
        fp_free(&p);
    }
}

/* Lazy first while capacity is plentiful, an empty GPU kept while it is
 * tight: GPU 0 runs a 3g (Busy at t = 0.4), GPUs 1-3 are empty. A 1g goes
 * to an empty (Lazy) GPU while three of four GPUs are empty and nothing
 * waits; once a job waits (on_idle said so) it goes next to the 3g. */
static void test_tight_keeps_empty_gpus(void **state)
{
    int pass;

    (void)state;
    for (pass = 0; pass < 2; pass++) {
        fp_t p = fp_new(4, NULL);
        int wait[MS_MAX_PROFILES] = {0};
        ms_plan_t plan;
        ms_job_t j = pt_job(2, pt_prof(p.g, "1g"));

        pt_run(p.c, 0, "3g", 0, 1);
        ms_plan_init(&plan);
        if (pass == 1)
            wait[pt_prof(p.g, "7g")] = 1;
        assert_int_equal(p.ops->on_idle(p.self, p.c, wait, 0.0, &plan), MS_OK);
        assert_int_equal(plan.n, 0);
        assert_int_equal(p.ops->place(p.self, p.c, &j, &plan), MS_OK);
        assert_int_equal(plan.ops[plan.n - 1].gpu, pass == 0 ? 1 : 0);
        ms_plan_fini(&plan);
        fp_free(&p);
    }
}

/* Gangs and bad profiles. */
static void test_gang_and_errors(void **state)
{
    fp_t p = fp_new(4, NULL);
    ms_plan_t plan;
    ms_job_t j = pt_job(1, 0);

    (void)state;
    ms_plan_init(&plan);
    j.gang = 2;
    assert_int_equal(p.ops->place(p.self, p.c, &j, &plan), MS_OK);
    pt_apply(p.c, &plan);
    assert_int_equal(ms_gpu_running(&p.c->gpus[0]) + ms_gpu_running(&p.c->gpus[1]), 2);
    j = pt_job(2, 99);
    assert_int_equal(p.ops->place(p.self, p.c, &j, &plan), MS_EINVAL);
    assert_int_equal(p.ops->make_room(p.self, p.c, &j, 0.0, &plan), MS_ENOFIT);
    assert_int_equal(plan.n, 0);
    ms_plan_fini(&plan);
    fp_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_jobs),
        cmocka_unit_test(test_small_jobs_keep_empty_gpus),
        cmocka_unit_test(test_make_room_frees_a_gpu),
        cmocka_unit_test(test_make_room_own_gpus),
        cmocka_unit_test(test_make_room_waits_for_room),
        cmocka_unit_test(test_make_room_intra),
        cmocka_unit_test(test_make_room_queue_gate),
        cmocka_unit_test(test_tight_keeps_empty_gpus),
        cmocka_unit_test(test_gang_and_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
