/* test_tenants.c - tenants in ms_sched (docs/tenants.md): a guarantee is
 * served before borrowed work; a limit is never exceeded and the usage the
 * scheduler keeps per start and end equals a scan of its jobs (a property
 * over random workloads with cancels); one tenant without a limit decides
 * exactly as none (a property over random traces); in the simulator two
 * equal tenants saturating the cluster get a Jain index >= 0.95 and weights
 * 2:1 shares within 5% of 2:1; the trace's tenant column and the --tenant
 * option, with their errors.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/sched_world.h"
#include "migsched/options.h"
#include "migsched/rng.h"
#include "migsched/sched.h"
#include "migsched/sim.h"
#include "migsched/trace.h"
#include "sched/sched_int.h"   /* test_full_passes: the pass that offers every class */

static ms_geom_t *G;   /* A100-40GB's default profiles (main) */

/* --- a scheduler on one node of A100s ----------------------------------- */

typedef struct env {
    world_t w;                     /* the scheduler and its cluster spec */
    double started[512];           /* by slot: when it started, NAN before */
    uint64_t plans;                /* a hash of every plan, in order */
    int order[512];                /* by slot: the how-manyth START it was, -1 before */
    int nstarts;
} env_t;

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    env_t *e = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        e->plans = world_fold_op(e->plans, op, p->now);
    }
    for (i = 0; i < p->n; i++)
        if (p->ops[i].op.kind == MS_OP_START && p->ops[i].op.job < 512 &&
            isnan(e->started[p->ops[i].op.job])) {
            e->started[p->ops[i].op.job] = p->now;
            e->order[p->ops[i].op.job] = e->nstarts++;
        }
    return MS_OK;
}

static void env_make_hl(env_t *e, const char *node, const char *node2, double half_life)
{
    ms_sched_cfg_t cfg;
    const char *nodes[2] = { node, node2 };
    int i;

    memset(e, 0, sizeof(*e));
    e->plans = 1469598103934665603ULL;
    for (i = 0; i < 512; i++) {
        e->started[i] = NAN;
        e->order[i] = -1;
    }
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa");
    cfg.exec.ctx = e;
    cfg.exec.plan = on_plan;
    cfg.tenant_half_life_s = half_life;
    world_make_cfg(&e->w, &cfg, nodes, node2 != NULL ? 2 : 1);
}

static void env_make2(env_t *e, const char *node, const char *node2)
{
    env_make_hl(e, node, node2, 0.0);
}

static void env_make(env_t *e, const char *node)
{
    env_make2(e, node, NULL);
}

static void env_free(env_t *e)
{
    world_free(&e->w);
}

static void tenant(env_t *e, const char *name, double w, long g, long lim)
{
    ms_sched_tenant_t t = { name, w, g, lim, 0.0, 0.0, 0, { { NULL, 0, 0, 0 } } };
    ms_diag_t dg;

    ms_diag_clear(&dg);
    if (ms_sched_tenant_set(e->w.s, &t, NULL, &dg) != MS_OK)
        fail_msg("tenant %s: %s", name, dg.msg);
}

static int32_t submit(env_t *e, const char *prof, const char *ten, double now)
{
    return world_submit(e->w.s, prof, ten, NULL, 0, 100.0, now);
}

/* --- a guarantee goes before borrowed work ------------------------------ */

/* Two A100s (14 slices), full: A (weight 0.5, a guarantee of 6) runs a
 * 4g, B a 7g and a 3g. B queues seven 1g, then A two. When the 7g ends,
 * A's two start first, within its guarantee, and B's first five after
 * them. Without the guarantee, fair share alone (A's 4 slices at weight
 * 0.5 weigh more than B's 3 at 1) and submission order both give B all
 * seven. */
static void test_guarantee_first(void **state)
{
    env_t e;
    int32_t big, run[2], b[7], a[2];
    ms_sched_tenant_info_t in;
    int i, t;

    (void)state;
    env_make(&e, "n=2xA100-40GB");
    tenant(&e, "A", 0.5, 6, -1);
    tenant(&e, "B", 1.0, 0, -1);
    run[0] = submit(&e, "4g", "A", 0.0);
    big = submit(&e, "7g", "B", 0.0);
    run[1] = submit(&e, "3g", "B", 0.0);
    assert_false(isnan(e.started[big]) || isnan(e.started[run[0]]) || isnan(e.started[run[1]]));
    for (i = 0; i < 7; i++)
        b[i] = submit(&e, "1g", "B", 1.0 + i);
    for (i = 0; i < 2; i++)
        a[i] = submit(&e, "1g", "A", 10.0 + i);
    assert_int_equal(ms_sched_finished(e.w.s, big, 100.0), MS_OK);
    for (i = 0; i < 2; i++)
        assert_true(e.started[a[i]] == 100.0);
    for (i = 0; i < 5; i++)
        assert_true(e.started[b[i]] == 100.0);
    for (i = 5; i < 7; i++)
        assert_true(isnan(e.started[b[i]]));
    t = ms_sched_tenant_find(e.w.s, "A");
    assert_int_equal(ms_sched_tenant_info(e.w.s, t, &in), MS_OK);
    assert_int_equal(in.usage, 6);
    assert_int_equal(in.running, 3);
    assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    env_free(&e);
}

/* A start moves its tenant's other classes too. One A100 runs a 7g; A
 * queues a 1g and a 2g, B a 3g (a share of 0.5: memory dominates). When
 * the 7g ends, A's 1g goes first (the smallest share with its head
 * started), and then B's 3g before A's 2g: A now holds a share, B none.
 * A pass that re-sorted only the class that started would keep A's 2g
 * ahead of B. */
static void test_resort_after_start(void **state)
{
    env_t e;
    int32_t big, a1, a2, b3;

    (void)state;
    env_make(&e, "n=1xA100-40GB");
    tenant(&e, "A", 1.0, 0, -1);
    tenant(&e, "B", 1.0, 0, -1);
    big = submit(&e, "7g", NULL, 0.0);
    a1 = submit(&e, "1g", "A", 1.0);
    a2 = submit(&e, "2g", "A", 2.0);
    b3 = submit(&e, "3g", "B", 3.0);
    assert_int_equal(ms_sched_finished(e.w.s, big, 100.0), MS_OK);
    assert_true(e.started[a1] == 100.0 && e.started[a2] == 100.0 && e.started[b3] == 100.0);
    assert_true(e.order[a1] < e.order[b3]);
    assert_true(e.order[b3] < e.order[a2]);
    env_free(&e);
}

/* A class that a limit kept off a group is offered again when the limit
 * is raised, though no GPU changed. A 1g of T fits on the whole-GPU node
 * only (the MIG GPU runs a 7g), where it would hold 7 slices, over T's
 * limit of 5; raised to 7, the next tick starts it there. */
static void test_raise_limit(void **state)
{
    env_t e;
    int32_t big, j;

    (void)state;
    env_make2(&e, "m=1xA100-40GB", "w=1xA100-40GB:whole");
    tenant(&e, "T", 1.0, 0, 5);
    big = submit(&e, "7g", NULL, 0.0);
    assert_false(isnan(e.started[big]));
    j = submit(&e, "1g", "T", 1.0);
    assert_true(isnan(e.started[j]));
    assert_int_equal(ms_sched_tick(e.w.s, 2.0), MS_OK);
    assert_true(isnan(e.started[j]));
    tenant(&e, "T", 1.0, 0, 7);
    assert_int_equal(ms_sched_tick(e.w.s, 3.0), MS_OK);
    assert_true(e.started[j] == 3.0);
    assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    env_free(&e);
}

/* An unknown tenant is a request error naming the field. */
static void test_unknown_tenant(void **state)
{
    env_t e;
    ms_sched_req_t rq;
    ms_diag_t dg;
    int32_t slot = -1;
    ms_sched_tenant_t bad = { "a b", 1.0, 0, -1, 0.0, 0.0, 0, { { NULL, 0, 0, 0 } } };
    ms_sched_tenant_t low = { "x", 1.0, 5, 4, 0.0, 0.0, 0, { { NULL, 0, 0, 0 } } };

    (void)state;
    env_make(&e, "n=1xA100-40GB");
    memset(&rq, 0, sizeof(rq));
    rq.profile = "1g";
    rq.tenant = "nobody";
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_submit(e.w.s, &rq, 0.0, &slot, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "tenant");
    assert_int_equal(ms_sched_tenant_set(e.w.s, &bad, NULL, &dg), MS_EINVAL);
    assert_int_equal(ms_sched_tenant_set(e.w.s, &low, NULL, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "limit");
    assert_int_equal(ms_sched_ntenants(e.w.s), 1);
    env_free(&e);
}

/* A reservation (the extender's hold) is a start too: a tenant's limit
 * holds it back, with the field that says why, and a released hold gives
 * its slices back. */
static void test_reserve_limit(void **state)
{
    env_t e;
    ms_sched_req_t rq;
    ms_diag_t dg;
    int32_t a = -1, b = -1;

    (void)state;
    env_make(&e, "n=2xA100-40GB");
    tenant(&e, "L", 1.0, 0, 3);
    memset(&rq, 0, sizeof(rq));
    rq.tenant = "L";
    rq.profile = "4g";
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_reserve(e.w.s, &rq, NULL, 0, 60.0, 0.0, &a, &dg), MS_ENOFIT);
    assert_string_equal(dg.field, "tenant");
    rq.profile = "2g";
    assert_int_equal(ms_sched_reserve(e.w.s, &rq, NULL, 0, 60.0, 0.0, &a, &dg), MS_OK);
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_reserve(e.w.s, &rq, NULL, 0, 60.0, 0.0, &b, &dg), MS_ENOFIT);
    assert_string_equal(dg.field, "tenant");
    assert_int_equal(ms_sched_cancel(e.w.s, a, 1.0), MS_OK);
    assert_int_equal(ms_sched_reserve(e.w.s, &rq, NULL, 0, 60.0, 1.0, &b, &dg), MS_OK);
    assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    env_free(&e);
}

/* --- the limit is never exceeded (property) ------------------------------ */

/* Usage by tenant from a scan of the jobs (what tenant.c keeps per start
 * and end, computed the slow way). */
static void scan_usage(const env_t *e, long *usage, int n)
{
    int32_t k;

    memset(usage, 0, (size_t)n * sizeof(*usage));
    for (k = 0; k < ms_sched_slots(e->w.s); k++) {
        ms_sched_job_info_t ji;
        int i;

        if (ms_sched_job(e->w.s, k, &ji) != MS_OK)
            continue;
        if (ji.state != MS_JOB_STARTING && ji.state != MS_JOB_RUNNING &&
            ji.state != MS_JOB_MIGRATING && ji.state != MS_JOB_RESERVED)
            continue;
        for (i = 0; i < ji.ninst; i++) {
            const ms_geom_t *g;

            (void)ms_sched_gpu(e->w.s, ji.inst[i].gpu, &g);
            usage[ji.tenant] += ms_geom_profile(g, ji.inst[i].prof)->cslices;
        }
    }
}

static void check_usage(const env_t *e, const long *limit, long *peak)
{
    long scan[8];
    int t, n = ms_sched_ntenants(e->w.s);

    scan_usage(e, scan, n);
    for (t = 0; t < n; t++) {
        ms_sched_tenant_info_t in;

        assert_int_equal(ms_sched_tenant_info(e->w.s, t, &in), MS_OK);
        assert_int_equal(in.usage, scan[t]);
        if (limit[t] >= 0 && in.usage > limit[t])
            fail_msg("tenant %s holds %ld slices, its limit is %ld", in.name, in.usage, limit[t]);
        if (in.usage > peak[t])
            peak[t] = in.usage;
    }
}

static uint64_t limit_property(uint64_t seed, long *peak_seen, bool full, long *place_calls)
{
    static const char *const SIZES[] = { "1g", "2g", "3g", "4g", "7g" };
    static const char *const NAMES[] = { "t0", "t1", "t2" };
    env_t e;
    ms_rng_t r;
    long limit[8], peak[8] = { 0 };
    double dur[512], t = 0.0;
    int32_t slot[512];
    int n, j, done = 0, k;

    env_make(&e, "n=3xA100-40GB");
    e.w.s->test_full_passes = full;
    ms_rng_seed(&r, seed);
    limit[0] = -1;
    for (k = 0; k < 3; k++) {
        limit[k + 1] = 7 + (long)ms_rng_below(&r, 8);
        tenant(&e, NAMES[k], 1.0 + (double)ms_rng_below(&r, 3),
               (long)ms_rng_below(&r, (uint64_t)limit[k + 1] + 1), limit[k + 1]);
    }
    n = 150 + (int)ms_rng_below(&r, 150);
    for (j = 0; j < n; j++) {
        const char *ten = ms_rng_below(&r, 4) == 0 ? NULL : NAMES[ms_rng_below(&r, 3)];

        t += floor(ms_rng_unit(&r) * 30.0);
        slot[j] = submit(&e, SIZES[ms_rng_below(&r, 5)], ten, t);
        dur[j] = 50.0 + floor(ms_rng_unit(&r) * 600.0);
        check_usage(&e, limit, peak);
        /* now and then a job leaves early: cancelled queued or running */
        if (ms_rng_below(&r, 10) == 0) {
            int v = (int)ms_rng_below(&r, (uint64_t)j + 1);
            ms_sched_job_info_t ji;

            assert_int_equal(ms_sched_job(e.w.s, slot[v], &ji), MS_OK);
            if (ji.state == MS_JOB_QUEUED || ji.state == MS_JOB_RUNNING) {
                assert_int_equal(ms_sched_cancel(e.w.s, slot[v], t), MS_OK);
                check_usage(&e, limit, peak);
            }
        }
        /* finish what ended by t */
        for (k = 0; k <= j; k++) {
            ms_sched_job_info_t ji;

            assert_int_equal(ms_sched_job(e.w.s, slot[k], &ji), MS_OK);
            if (ji.state == MS_JOB_RUNNING && e.started[slot[k]] + dur[k] <= t) {
                assert_int_equal(ms_sched_finished(e.w.s, slot[k], t), MS_OK);
                check_usage(&e, limit, peak);
            }
        }
        assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    }
    /* drain: every job that was not cancelled runs (the limits hold each
     * tenant back, never forever) */
    for (k = 0; k < 100000 && done < n; k++) {
        done = 0;
        t += 100.0;
        for (j = 0; j < n; j++) {
            ms_sched_job_info_t ji;

            assert_int_equal(ms_sched_job(e.w.s, slot[j], &ji), MS_OK);
            if (ji.state == MS_JOB_RUNNING)
                assert_int_equal(ms_sched_finished(e.w.s, slot[j], t), MS_OK);
            else if (ji.state != MS_JOB_QUEUED)
                done++;
            check_usage(&e, limit, peak);
        }
    }
    assert_int_equal(done, n);
    for (k = 0; k < 4; k++)
        if (peak[k] > peak_seen[k])
            peak_seen[k] = peak[k];
    {
        ms_sched_stats_t ss;
        uint64_t h = e.plans;

        ms_sched_stats(e.w.s, &ss);
        *place_calls += ss.place_calls;
        env_free(&e);
        return h;
    }
}

static void test_limit_property(void **state)
{
    long peak[8] = { 0 }, calls = 0;
    uint64_t seed;

    (void)state;
    for (seed = 1; seed <= 12; seed++)
        (void)limit_property(seed, peak, false, &calls);
    /* the property had something to hold back: tenants reached their limits */
    assert_true(peak[1] >= 7 && peak[2] >= 7 && peak[3] >= 7);
}

/* The pass that skips classes nothing could unblock (issue 25) decides
 * exactly as one that offers every class, with tenants, limits and
 * cancels: the same plans in the same order, for fewer placement calls. */
static void test_incremental_same(void **state)
{
    long peak[8] = { 0 }, inc = 0, full = 0;
    uint64_t seed;

    (void)state;
    for (seed = 21; seed <= 32; seed++) {
        uint64_t a = limit_property(seed, peak, false, &inc);
        uint64_t b = limit_property(seed, peak, true, &full);

        if (a != b)
            fail_msg("seed %llu: the incremental pass decided otherwise",
                     (unsigned long long)seed);
    }
    print_message("placement calls: %ld incremental, %ld offering every class\n", inc, full);
    assert_true(inc < full);
}

/* --- the simulator ------------------------------------------------------- */

/* A trace of n jobs arriving 50 a second (saturation), profiles drawn
 * from profs[0..np), durations from 300 to 900 s, tenants by turn from
 * names[0..nt). */
static ms_trace_t *sat_trace(int n, const char *const *profs, int np, const char *const *names,
                             int nt, uint64_t seed)
{
    size_t cap = (size_t)n * 64 + 64, k = 0;
    char *buf = malloc(cap);
    ms_rng_t r;
    ms_trace_t *t = NULL;
    ms_diag_t dg;
    FILE *f;
    int j;

    assert_non_null(buf);
    ms_rng_seed(&r, seed);
    k += (size_t)snprintf(buf + k, cap - k, "job_id,arrival_s,profile,duration_s,tenant\n");
    for (j = 0; j < n; j++)
        k += (size_t)snprintf(buf + k, cap - k, "j%d,%d,%s,%.0f,%s\n", j, j / 50,
                              profs[ms_rng_below(&r, (uint64_t)np)],
                              300.0 + floor(ms_rng_unit(&r) * 600.0), names[j % nt]);
    f = fmemopen(buf, k, "r");
    assert_non_null(f);
    ms_diag_clear(&dg);
    if (ms_trace_read(f, "sat", G, &t, &dg) != MS_OK)
        fail_msg("trace: %s", dg.msg);
    fclose(f);
    free(buf);
    return t;
}

static void sim(const ms_trace_t *t, int ngpus, const char *tenant_opt, ms_metrics_t *m)
{
    ms_sim_cfg_t cfg;
    ms_opt_target_t tg;
    ms_diag_t dg;

    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = ms_policy_find("fa");
    cfg.ngpus = ngpus;
    tg = ms_opt_target_sim(&cfg);
    ms_diag_clear(&dg);
    if (tenant_opt != NULL && ms_opt_set(&tg, "tenant", tenant_opt, &dg) != MS_OK)
        fail_msg("--tenant %s: %s", tenant_opt, dg.msg);
    if (ms_sim_run(&cfg, t, m, &dg) != MS_OK)
        fail_msg("sim: %s", dg.msg);
}

static const ms_tenant_metrics_t *tm(const ms_metrics_t *m, const char *name)
{
    int k;

    for (k = 0; k < m->ntenants; k++)
        if (strcmp(m->tenants[k].name, name) == 0)
            return &m->tenants[k];
    fail_msg("no tenant %s in the metrics", name);
    return NULL;
}

/* Two equal tenants; A submits 3 jobs for each of B's (FIFO would give A
 * three quarters). Jain's index over their contended shares >= 0.95. */
static void test_jain_equal(void **state)
{
    static const char *const NAMES[] = { "A", "A", "A", "B" };
    static const char *const PROFS[] = { "1g", "2g", "3g" };
    size_t p;

    (void)state;
    for (p = 0; p < sizeof(PROFS) / sizeof(PROFS[0]); p++) {
        ms_trace_t *t = sat_trace(1600, &PROFS[p], 1, NAMES, 4, 7 + p);
        ms_metrics_t m;
        double a, b;

        sim(t, 6, NULL, &m);
        a = tm(&m, "A")->contended_share;
        b = tm(&m, "B")->contended_share;
        print_message("equal weights, %s: A %.4f B %.4f over %.0f s contended, Jain %.4f\n",
                      PROFS[p], a, b, m.contended_s, m.jain_index);
        assert_true(m.contended_s > 10000.0);
        assert_true(m.jain_index >= 0.95);
        assert_int_equal(tm(&m, "A")->completed + tm(&m, "B")->completed, 1600);
        ms_trace_free(t);
    }
}

/* Weights 2:1 (A 2, B 1), the same number of jobs each: shares within 5%
 * of 2:1 while both wait. */
static void test_weights_2to1(void **state)
{
    static const char *const NAMES[] = { "A", "B" };
    static const char *const PROFS[] = { "1g", "2g" };
    size_t p;

    (void)state;
    for (p = 0; p < sizeof(PROFS) / sizeof(PROFS[0]); p++) {
        ms_trace_t *t = sat_trace(1600, &PROFS[p], 1, NAMES, 2, 11 + p);
        ms_metrics_t m;
        double a, b;

        sim(t, 6, "A:weight=2", &m);
        a = tm(&m, "A")->contended_share;
        b = tm(&m, "B")->contended_share;
        print_message("weights 2:1, %s: A %.4f B %.4f (ratio %.3f) over %.0f s contended\n",
                      PROFS[p], a, b, a / b, m.contended_s);
        assert_true(m.contended_s > 10000.0);
        assert_true(fabs(a / b / 2.0 - 1.0) <= 0.05);
        ms_trace_free(t);
    }
}

/* docs/tenants.md's mixed workload (gen-trace --jobs 2000 --load 1.5
 * --gpus 8 --dist lognormal --mean 600 --sigma 1 --seed 7; every profile
 * of an A100-40GB), jobs alternating between tenants a and b, fa+ on 8
 * GPUs. The CSV is the generator's with a tenant column appended. */
static ms_trace_t *mixed_trace(void)
{
    ms_gen_cfg_t gc;
    ms_trace_t *base = NULL, *t = NULL;
    char *text = NULL, *out, *line, *save = NULL;
    size_t len = 0, cap, k = 0;
    ms_diag_t dg;
    FILE *f;
    long row = 0;

    memset(&gc, 0, sizeof(gc));
    gc.njobs = 2000;
    gc.load = 1.5;
    gc.ngpus = 8;
    gc.dist = 2;
    gc.mean_s = 600.0;
    gc.sigma = 1.0;
    gc.seed = 7;
    assert_int_equal(ms_trace_generate(G, &gc, &base), MS_OK);
    f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(ms_trace_write(f, base), MS_OK);
    fclose(f);
    ms_trace_free(base);
    cap = len + 2 * 2001 + 16;
    out = malloc(cap);
    assert_non_null(out);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        const char *ten = row == 0 ? "tenant" : row % 2 ? "b" : "a";

        k += (size_t)snprintf(out + k, cap - k, "%s,%s\n", line, ten);
        assert_true(k < cap);
        row++;
    }
    assert_int_equal(row, 2001);
    free(text);
    f = fmemopen(out, k, "r");
    assert_non_null(f);
    ms_diag_clear(&dg);
    if (ms_trace_read(f, "mixed", G, &t, &dg) != MS_OK)
        fail_msg("trace: %s", dg.msg);
    fclose(f);
    free(out);
    return t;
}

/* Weights 2:1 on the mixed workload: a 7g head of the heavier tenant
 * waits while smaller jobs fill in, and dominant shares are not compute
 * shares; the order by the service charged (start-time fair queueing)
 * still gives shares within 5% of 2:1 while both wait. Without it (the
 * order by current share) the ratio is 1.83. */
static void test_weights_2to1_mixed(void **state)
{
    ms_trace_t *t = mixed_trace();
    ms_sim_cfg_t cfg;
    ms_opt_target_t tg;
    ms_metrics_t m;
    ms_diag_t dg;
    double a, b;

    (void)state;
    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = ms_policy_find("fa+");   /* the simulator's default */
    cfg.ngpus = 8;
    tg = ms_opt_target_sim(&cfg);
    ms_diag_clear(&dg);
    assert_int_equal(ms_opt_set(&tg, "tenant", "a:weight=2", &dg), MS_OK);
    if (ms_sim_run(&cfg, t, &m, &dg) != MS_OK)
        fail_msg("sim: %s", dg.msg);
    a = tm(&m, "a")->contended_share;
    b = tm(&m, "b")->contended_share;
    print_message("weights 2:1, mixed: a %.4f b %.4f (ratio %.3f) over %.0f s contended, "
                  "makespan %.0f s\n", a, b, a / b, m.contended_s, m.makespan_s);
    assert_true(m.contended_s > 30000.0);
    assert_int_equal(tm(&m, "a")->completed + tm(&m, "b")->completed, 2000);
    assert_true(fabs(a / b / 2.0 - 1.0) <= 0.05);
    ms_trace_free(t);
}

/* A tenant that had nothing to run banks a bounded credit: A saturates 6
 * GPUs alone for 12000 s, then B submits as much as A. Ordered by service
 * charged alone, B would take every start until it had caught up A's
 * 12000 s of the whole cluster; a tenant that waits again starts at most
 * 1800 s of the cluster before the least virtual time of the active ones,
 * so they share by weight soon after: Jain's index over the contended time
 * >= 0.95 (0.9689; 0.5101 without the bound). */
static void test_no_idle_credit(void **state)
{
    size_t cap = 4000 * 48 + 64, k = 0;
    char *buf = malloc(cap);
    ms_trace_t *t = NULL;
    ms_metrics_t m;
    ms_diag_t dg;
    FILE *f;
    int j;

    (void)state;
    assert_non_null(buf);
    k += (size_t)snprintf(buf + k, cap - k, "job_id,arrival_s,profile,duration_s,tenant\n");
    for (j = 0; j < 4000; j++) {
        /* A: one job per 5 s from 0 to 15000 s (100 s on a 2g: 18 at a
         * time on 6 GPUs serve one per 5.6 s: its queue grows); B the
         * same from 12000 s to 17000 s */
        bool is_a = j < 3000;
        double at = is_a ? j * 5.0 : 12000.0 + (j - 3000) * 5.0;

        k += (size_t)snprintf(buf + k, cap - k, "j%d,%.0f,2g,100,%s\n", j, at, is_a ? "A" : "B");
    }
    f = fmemopen(buf, k, "r");
    assert_non_null(f);
    ms_diag_clear(&dg);
    if (ms_trace_read(f, "idle", G, &t, &dg) != MS_OK)
        fail_msg("trace: %s", dg.msg);
    fclose(f);
    free(buf);
    sim(t, 6, NULL, &m);
    print_message("B from 12000 s: A %.4f B %.4f over %.0f s contended, Jain %.4f\n",
                  tm(&m, "A")->contended_share, tm(&m, "B")->contended_share, m.contended_s,
                  m.jain_index);
    assert_true(m.contended_s > 5000.0);
    assert_true(m.jain_index >= 0.95);
    ms_trace_free(t);
}

/* One tenant without a limit decides as none (any weight, any guarantee):
 * the same segments, in the same order, on random traces. */
typedef struct segs {
    uint64_t h;
    long n;
} segs_t;

static void on_seg(void *ctx, const ms_segment_t *sg)
{
    segs_t *x = ctx;
    uint64_t v[4];
    size_t i;

    memcpy(&v[0], &sg->begin_s, sizeof(double));
    memcpy(&v[1], &sg->end_s, sizeof(double));
    v[2] = (uint64_t)sg->job;
    v[3] = (uint64_t)sg->gpu << 8 | (uint64_t)(uint8_t)sg->start;
    for (i = 0; i < 4; i++)
        x->h = (x->h ^ v[i]) * 1099511628211ULL;
    x->n++;
}

/* --- decayed usage ------------------------------------------------------- */

/* One A100. A ran a 7g from 0 to 1000 s (7000 slice-seconds), B a 1g from
 * 1900 to 2000 s (100); a default-tenant 7g holds the GPU from 2000 to
 * 3000 s, while A (2001 s) and B (2002 s) each queue a 7g: equal current
 * usage (none), so the past decides who starts at 3000 s. Returns 1 if B's
 * starts first, 0 if A's, and the plans' hash. With set_at >= 0 the
 * half-life becomes set_hl at that time (ms_sched_set_tenant_half_life,
 * migschedd's SIGHUP). */
static int past_decides_set(double half_life, double set_at, double set_hl, uint64_t *plans)
{
    env_t e;
    int32_t a0, b0, d0, a1, b1;
    int first;
    ms_diag_t dg;

    env_make_hl(&e, "n=1xA100-40GB", NULL, half_life);
    tenant(&e, "A", 1.0, 0, -1);
    tenant(&e, "B", 1.0, 0, -1);
    a0 = submit(&e, "7g", "A", 0.0);
    assert_int_equal(ms_sched_finished(e.w.s, a0, 1000.0), MS_OK);
    if (set_at >= 0.0 && set_at < 1900.0) {
        ms_diag_clear(&dg);
        assert_int_equal(ms_sched_set_tenant_half_life(e.w.s, set_hl, set_at, &dg), MS_OK);
        assert_true(ms_sched_tenant_half_life(e.w.s) == set_hl);
    }
    b0 = submit(&e, "1g", "B", 1900.0);
    d0 = submit(&e, "7g", NULL, 1950.0);
    assert_int_equal(ms_sched_finished(e.w.s, b0, 2000.0), MS_OK);
    assert_true(e.started[d0] == 2000.0);
    a1 = submit(&e, "7g", "A", 2001.0);
    b1 = submit(&e, "7g", "B", 2002.0);
    if (set_at >= 2002.0) {
        ms_diag_clear(&dg);
        assert_int_equal(ms_sched_set_tenant_half_life(e.w.s, set_hl, set_at, &dg), MS_OK);
        /* out of range: refused, the half-life kept */
        assert_int_equal(ms_sched_set_tenant_half_life(e.w.s, -1.0, set_at, &dg), MS_EINVAL);
        assert_string_equal(dg.field, "tenant-half-life");
        assert_true(ms_sched_tenant_half_life(e.w.s) == set_hl);
    }
    assert_int_equal(ms_sched_finished(e.w.s, d0, 3000.0), MS_OK);
    assert_true(e.started[a1] == 3000.0 || e.started[b1] == 3000.0);
    first = e.started[b1] == 3000.0;
    assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    *plans = e.plans;
    env_free(&e);
    return first;
}

static int past_decides(double half_life, uint64_t *plans)
{
    return past_decides_set(half_life, -1.0, 0.0, plans);
}

/* --tenant-half-life: with a half-life of an hour, A's larger and older
 * past still counts more than B's: B first. With one of a minute (or a
 * second), A's is forgotten and B's recent 100 slice-seconds weigh more:
 * A first. Without
 * decay (0, the default) the order is the undecayed one (B first: B waits
 * again at the default tenant's virtual time, A keeps its own), and the
 * plans are those of a scheduler that never heard of the option. */
static void test_half_life(void **state)
{
    static const char *const HL[] = { NULL, "0" };
    ms_trace_t *t = mixed_trace();
    uint64_t p0, p;
    segs_t seg[2];
    size_t o;
    env_t e;
    ms_sched_cfg_t cfg;
    ms_diag_t dg;

    (void)state;
    assert_int_equal(past_decides(3600.0, &p), 1);
    assert_int_equal(past_decides(60.0, &p), 0);
    /* a half-life of 1 s: 1900 s is e^1317, past a double, unless the
     * virtual times are brought back to a new reference (vt_renorm) */
    assert_int_equal(past_decides(1.0, &p), 0);
    assert_int_equal(past_decides(0.0, &p0), 1);
    /* set at run time (migschedd's SIGHUP): from 1500 s on, a minute's
     * half-life forgets A's past as one given at the start does, an
     * hour's does not; set back to none at 2500 s, the order of the
     * decayed times stays (A first) */
    assert_int_equal(past_decides_set(0.0, 1500.0, 60.0, &p), 0);
    assert_int_equal(past_decides_set(0.0, 1500.0, 3600.0, &p), 1);
    assert_int_equal(past_decides_set(60.0, 2500.0, 0.0, &p), 0);
    assert_int_equal(past_decides_set(3600.0, 2500.0, 60.0, &p), 1);
    /* out of range: refused, naming the option */
    memset(&e, 0, sizeof(e));
    assert_int_equal(ms_cluster_spec_create(&e.w.cs), MS_OK);
    assert_int_equal(ms_cluster_spec_add(e.w.cs, "n=1xA100-40GB", 0, &dg), MS_OK);
    ms_sched_cfg_defaults(&cfg);
    assert_true(cfg.tenant_half_life_s == 0.0);
    cfg.policy = ms_policy_find("fa");
    cfg.nodes = ms_cluster_spec_nodes(e.w.cs);
    cfg.nnodes = ms_cluster_spec_nnodes(e.w.cs);
    cfg.tenant_half_life_s = -1.0;
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_create(&cfg, 0.0, &e.w.s, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "tenant-half-life");
    ms_cluster_spec_destroy(e.w.cs);
    /* --tenant-half-life 0 is no option: the mixed workload at 2:1, the
     * same segments in the same order */
    for (o = 0; o < 2; o++) {
        ms_sim_cfg_t sc;
        ms_opt_target_t tg;
        ms_metrics_t m;

        seg[o].h = 1469598103934665603ULL;
        seg[o].n = 0;
        ms_sim_cfg_defaults(&sc);
        sc.sched.policy = ms_policy_find("fa+");
        sc.ngpus = 8;
        sc.ctx = &seg[o];
        sc.on_segment = on_seg;
        tg = ms_opt_target_sim(&sc);
        ms_diag_clear(&dg);
        assert_int_equal(ms_opt_set(&tg, "tenant", "a:weight=2", &dg), MS_OK);
        if (HL[o] != NULL)
            assert_int_equal(ms_opt_set(&tg, "tenant-half-life", HL[o], &dg), MS_OK);
        assert_int_equal(ms_sim_run(&sc, t, &m, &dg), MS_OK);
    }
    assert_true(seg[0].n > 2000 && seg[0].n == seg[1].n && seg[0].h == seg[1].h);
    ms_trace_free(t);
}

static void test_one_tenant_identical(void **state)
{
    static const char *const ONE[] = { "solo" };
    static const char *const PROFS[] = { "1g", "2g", "3g", "4g", "7g" };
    uint64_t seed;

    (void)state;
    for (seed = 1; seed <= 6; seed++) {
        const char *opts[] = { NULL, "solo", "solo:weight=3,guarantee=18", "solo:guarantee=20" };
        ms_trace_t *t = sat_trace(400, PROFS, 5, ONE, 1, seed);
        segs_t ref = { 1469598103934665603ULL, 0 };
        size_t o;

        for (o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
            ms_sim_cfg_t cfg;
            ms_opt_target_t tg;
            ms_metrics_t m;
            ms_diag_t dg;
            segs_t x = { 1469598103934665603ULL, 0 };

            ms_sim_cfg_defaults(&cfg);
            cfg.sched.policy = ms_policy_find("fa+");
            cfg.ngpus = 3;
            cfg.ctx = &x;
            cfg.on_segment = on_seg;
            tg = ms_opt_target_sim(&cfg);
            if (opts[o] != NULL)
                assert_int_equal(ms_opt_set(&tg, "tenant", opts[o], &dg), MS_OK);
            assert_int_equal(ms_sim_run(&cfg, t, &m, &dg), MS_OK);
            if (o == 0)
                ref = x;
            assert_true(x.n > 0 && x.n == ref.n && x.h == ref.h);
        }
        ms_trace_free(t);
    }
}

/* --- the trace column and the option ------------------------------------- */

static ms_status_t read_str(const char *text, ms_trace_t **t, ms_diag_t *dg)
{
    FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
    ms_status_t st;

    assert_non_null(f);
    ms_diag_clear(dg);
    st = ms_trace_read(f, "t.csv", G, t, dg);
    fclose(f);
    return st;
}

static void test_trace_column(void **state)
{
    ms_trace_t *t = NULL;
    ms_diag_t dg;
    char *buf = NULL;
    size_t len = 0;
    FILE *w;

    (void)state;
    assert_int_equal(read_str("job_id,arrival_s,profile,duration_s,tenant\n"
                              "a,0,1g,10,team-1\nb,1,2g,10,\nc,2,3g,10,ops\nd,3,1g,5,team-1\n",
                              &t, &dg), MS_OK);
    assert_int_equal(t->ntenants, 2);
    assert_string_equal(t->tenants[0], "team-1");
    assert_string_equal(t->tenants[1], "ops");
    assert_int_equal(t->req[0].tenant, 1);
    assert_int_equal(t->req[1].tenant, 0);
    assert_int_equal(t->req[2].tenant, 2);
    assert_int_equal(t->req[3].tenant, 1);
    /* written back with the column */
    w = open_memstream(&buf, &len);
    assert_int_equal(ms_trace_write(w, t), MS_OK);
    fclose(w);
    assert_non_null(strstr(buf, ",tenant\n"));
    assert_non_null(strstr(buf, ",ops\n"));
    free(buf);
    ms_trace_free(t);
    /* without the column: as before */
    assert_int_equal(read_str("job_id,arrival_s,profile,duration_s\na,0,1g,10\n", &t, &dg), MS_OK);
    assert_int_equal(t->ntenants, 0);
    assert_null(t->tenants);
    assert_null(t->req);
    ms_trace_free(t);
    /* a bad name: file, line and field */
    assert_int_equal(read_str("job_id,arrival_s,profile,duration_s,tenant\na,0,1g,10,x\n"
                              "b,0,1g,10,bad name\n", &t, &dg), MS_EPARSE);
    assert_null(t);
    assert_string_equal(dg.field, "tenant");
    assert_int_equal(dg.line, 3);
    assert_non_null(strstr(dg.msg, "bad name"));
}

static void test_option(void **state)
{
    ms_sim_cfg_t c;
    ms_opt_target_t t;
    ms_diag_t dg;
    static const char *const BAD[] = { "", ":weight=1", "a:weight=0", "a:weight=x",
                                       "a:guarantee=-1", "a:limit=2,guarantee=3", "a:colour=red",
                                       "a:weight", "a b" };
    size_t i;

    (void)state;
    ms_sim_cfg_defaults(&c);
    t = ms_opt_target_sim(&c);
    assert_int_equal(ms_opt_set(&t, "tenant", "a:weight=2.5,guarantee=3,limit=10", &dg), MS_OK);
    assert_int_equal(ms_opt_set(&t, "tenant", "b", &dg), MS_OK);
    assert_int_equal(ms_opt_set(&t, "tenant", "a:limit=12", &dg), MS_OK);   /* a again */
    assert_int_equal(c.tenants.n, 2);
    assert_string_equal(c.tenants.t[0].name, "a");
    assert_true(c.tenants.t[0].weight == 1.0 && c.tenants.t[0].limit == 12 &&
                c.tenants.t[0].guarantee == 0);
    assert_true(c.tenants.t[1].weight == 1.0 && c.tenants.t[1].limit == -1);
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        ms_diag_clear(&dg);
        assert_int_not_equal(ms_opt_set(&t, "tenant", BAD[i], &dg), MS_OK);
        assert_string_equal(dg.field, "tenant");
        assert_int_equal(c.tenants.n, 2);
    }
}

int main(void)
{
    int rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guarantee_first),
        cmocka_unit_test(test_resort_after_start),
        cmocka_unit_test(test_raise_limit),
        cmocka_unit_test(test_unknown_tenant),
        cmocka_unit_test(test_reserve_limit),
        cmocka_unit_test(test_limit_property),
        cmocka_unit_test(test_incremental_same),
        cmocka_unit_test(test_jain_equal),
        cmocka_unit_test(test_weights_2to1),
        cmocka_unit_test(test_weights_2to1_mixed),
        cmocka_unit_test(test_no_idle_credit),
        cmocka_unit_test(test_half_life),
        cmocka_unit_test(test_one_tenant_identical),
        cmocka_unit_test(test_trace_column),
        cmocka_unit_test(test_option),
    };

    if (ms_geom_create(ms_model_find("A100-40GB"), 0, &G) != MS_OK)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    ms_geom_destroy(G);
    return rc;
}
