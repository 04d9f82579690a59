/* test_tenant_mguar.c - a tenant's per GPU model guarantees
 * (ms_sched_tenant_model_limit_t.guarantee, guarantee@MODEL=S;
 * docs/tenants.md, "Per model guarantees"): Kueue's nominalQuota per
 * ResourceFlavor, flavors tried in order.
 *   - by hand, one A100-40GB node and one H100-80GB node:
 *     - the tier: A, within guarantee@H100-80GB=7, has its 4g served
 *       before B's borrowing 4g of the same priority although B's virtual
 *       time is smaller (without the guarantee B's goes first);
 *     - placement: A's 3g, which fits on both, goes to the H100 (without
 *       the guarantee, and B's always, to the A100), also when the
 *       guarantee is declared after A's class exists;
 *     - reclaim (cfg.preempt): A below its H100 guarantee takes back B's
 *       borrowed 7g on the H100, never B's 7g on the A100 (the lower GPU,
 *       which a cluster-wide guarantee would take);
 *     - victims keep theirs: B with guarantee@H100-80GB=4 holds seven 1g
 *       on the H100; A's 4g would need four of them (B left 3 < 4): it
 *       waits (with B's guarantee 3 it takes them);
 *   - properties over random workloads on 2xA100-40GB + 2xH100-80GB with
 *     random per model (and some cluster-wide) guarantees and preemption:
 *     ms_sched_check after every call, every job done with its full
 *     duration, no victim's tenant below its guarantee on the victim's
 *     model, every reclaim by a per model guarantee alone on a model where
 *     the preemptor is then within it; and guarantees on a model the
 *     cluster lacks give the plans of none;
 *   - validation by the API with its messages; the option's entries (its
 *     refusals are in test_tenant_model.c's table: the one parser).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "support/sched_world.h"
#include "migsched/options.h"
#include "migsched/rng.h"
#include "migsched/sched.h"
#include "migsched/sim.h"

#define MAXJ 300

typedef struct env {
    world_t w;
    double dur[MAXJ], end[MAXJ];
    int prio[MAXJ];
    bool done[MAXJ];
    world_pre_t pl;                /* the plans' hash, the slot being ended, the
                                    * victims whose preemptor has not started */
    int pend_model[WORLD_MAXPEND]; /* the model index of each one's GPU */
    bool pend_kept[WORLD_MAXPEND]; /* its tenant kept its guarantee there */
    long victims, mreclaims, bad_keep, bad_reclaim;
} env_t;

static const char *const MODEL[] = { "A100-40GB", "H100-80GB" };

/* The model (index in MODEL) of global GPU g. */
static int gpu_model(const env_t *e, int32_t g)
{
    const ms_geom_t *geom = NULL;

    assert_non_null(ms_sched_gpu(e->w.s, g, &geom));
    return strcmp(ms_geom_model(geom)->name, MODEL[0]) == 0 ? 0 : 1;
}

/* Tenant k's usage and guarantee on model m (guarantee 0: none). */
static void model_of(const env_t *e, int k, int m, long *usage, long *guar)
{
    ms_sched_tenant_info_t ti;
    int i;

    assert_int_equal(ms_sched_tenant_info(e->w.s, k, &ti), MS_OK);
    *usage = -1;
    *guar = 0;
    for (i = 0; i < ti.nmodel_limits; i++)
        if (strcmp(ti.model_limits[i].model, MODEL[m]) == 0) {
            *usage = ti.model_limits[i].usage;
            *guar = ti.model_limits[i].guarantee;
        }
}

static int job_tenant(const env_t *e, int32_t job)
{
    ms_sched_job_info_t ji;

    assert_int_equal(ms_sched_job(e->w.s, job, &ji), MS_OK);
    return ji.tenant;
}

/* A victim stopped: does its tenant keep its guarantee on the victim's
 * model (the stop is uncharged before the plan is handed)? Asked of
 * another tenant's victims when their preemptor is known. */
static void on_victim(env_t *e, const ms_op_t *op)
{
    long u, g;
    int m = gpu_model(e, op->gpu), k;

    model_of(e, job_tenant(e, op->job), m, &u, &g);
    e->victims++;
    k = world_pre_victim(&e->pl, op->job);
    e->pend_kept[k] = g <= 0 || u >= g;
    e->pend_model[k] = m;
    e->end[op->job] = INFINITY;
}

/* The preemptor of the victims pending started: another tenant's victims
 * kept their tenants' per model guarantees; a reclaim (a victim of
 * another tenant at a priority not below its) by a tenant without a
 * cluster-wide guarantee is by a per model one, so on that model, within
 * it with the preemptor started. */
static void on_preemptor(env_t *e, const ms_op_t *op)
{
    ms_sched_tenant_info_t ti;
    int k, t = job_tenant(e, op->job), m = gpu_model(e, op->gpu);
    long u, g;

    assert_int_equal(ms_sched_tenant_info(e->w.s, t, &ti), MS_OK);
    for (k = 0; k < e->pl.npend; k++) {
        int32_t v = e->pl.pend[k];

        if (job_tenant(e, v) == t)
            continue;   /* by priority in its own tenant: no other's guarantee at stake */
        if (!e->pend_kept[k])
            e->bad_keep++;
        if (e->prio[v] < e->prio[op->job] || ti.guarantee > 0)
            continue;
        e->mreclaims++;
        model_of(e, t, m, &u, &g);
        if (e->pend_model[k] != m || g <= 0 || u > g)
            e->bad_reclaim++;
    }
    e->pl.npend = 0;
}

/* One op of a plan (the test's jobs only). */
static void on_op(env_t *e, const ms_op_t *op, double now)
{
    if (op->kind == MS_OP_START) {
        if (e->pl.npend > 0)
            on_preemptor(e, op);
        e->end[op->job] = now + e->dur[op->job];
    } else if (op->kind == MS_OP_STOP && op->job != e->pl.finishing && isfinite(e->end[op->job])) {
        on_victim(e, op);   /* a running job the driver is not ending */
    }
}

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    env_t *e = ctx;
    const ms_op_t *op;
    int i;

    for (i = 0; i < p->n; i++)
        if ((op = world_pre_op(&e->pl, p, i, MAXJ)) != NULL)
            on_op(e, op, p->now);
    return MS_OK;
}

static void env_make(env_t *e, int per_node, bool preempt, double grace)
{
    ms_sched_cfg_t cfg;
    int i;

    memset(e, 0, sizeof(*e));
    world_pre_init(&e->pl, false);
    for (i = 0; i < MAXJ; i++)
        e->end[i] = INFINITY;
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa+");
    cfg.exec = (ms_sched_exec_t){ e, on_plan };
    cfg.preempt = preempt;
    cfg.preempt_grace_s = grace;
    cfg.preempt_rate = 0;   /* every preemption the rules allow */
    world_make_a100_h100(&e->w, &cfg, per_node);
}

static void env_free(env_t *e)
{
    world_free(&e->w);
}

/* Tenant name with cluster-wide guarantee g and the per model entries
 * ml[0..n) (model, limit (< 0: none), usage (ignored), guarantee). */
static ms_status_t tenant(env_t *e, const char *name, long g, int n,
                          const ms_sched_tenant_model_limit_t *ml, ms_diag_t *dg)
{
    ms_sched_tenant_t t = { name, 1.0, g, -1, 0.0, 0.0, n, { { NULL, 0, 0, 0 } } };

    memcpy(t.model_limits, ml, (size_t)n * sizeof(*ml));
    ms_diag_clear(dg);
    return ms_sched_tenant_set(e->w.s, &t, NULL, dg);
}

/* Tenant name with guarantee@H100-80GB=hg (0: none), nothing else. */
static void tenant_h100(env_t *e, const char *name, long hg)
{
    ms_sched_tenant_model_limit_t ml = { "H100-80GB", -1, 0, hg };
    ms_diag_t dg;

    if (tenant(e, name, 0, hg > 0, &ml, &dg) != MS_OK)
        fail_msg("tenant %s: %s", name, dg.msg);
}

static int32_t submit_on(env_t *e, const char *prof, const char *ten, const char *model, int prio,
                         double dur, double now)
{
    int32_t slot = ms_sched_next_slot(e->w.s);

    /* what the plan callback needs at its START, before it is submitted */
    assert_true(slot >= 0 && slot < MAXJ);
    e->dur[slot] = dur;
    e->prio[slot] = prio;
    return world_submit(e->w.s, prof, ten, model, prio, dur, now);
}

static int32_t submit(env_t *e, const char *prof, const char *ten, int prio, double dur, double now)
{
    return submit_on(e, prof, ten, NULL, prio, dur, now);
}

static void finish(env_t *e, int32_t slot, double now)
{
    e->done[slot] = true;
    e->end[slot] = INFINITY;
    world_finish(e->w.s, slot, now, &e->pl.finishing);
}

/* --- by hand ------------------------------------------------------------ */

/* A ran a 7g on each GPU for 1000 s (a large virtual time); then B fills
 * both; A's 4g (a1) and B's (b1) wait; B's H100 job ends: the first in
 * the order starts there (4g + 4g do not fit one GPU). */
static bool tier_case(long a_hg)
{
    env_t e;
    int32_t x, y, bx, by, a1, b1;
    bool a_first;

    env_make(&e, 1, false, 60.0);
    tenant_h100(&e, "A", a_hg);
    tenant_h100(&e, "B", 0);
    x = submit(&e, "7g", "A", 0, 100.0, 0.0);
    y = submit(&e, "7g", "A", 0, 100.0, 0.0);
    finish(&e, x, 1000.0);
    finish(&e, y, 1000.0);
    bx = submit(&e, "7g", "B", 0, 1000.0, 1000.0);
    by = submit(&e, "7g", "B", 0, 1000.0, 1000.0);
    assert_int_equal(world_job_state(e.w.s, by), MS_JOB_RUNNING);
    a1 = submit(&e, "4g", "A", 0, 100.0, 1001.0);
    b1 = submit(&e, "4g", "B", 0, 100.0, 1002.0);
    assert_int_equal(world_job_state(e.w.s, a1), MS_JOB_QUEUED);
    assert_int_equal(world_job_state(e.w.s, b1), MS_JOB_QUEUED);
    finish(&e, strcmp(world_job_model(e.w.s, bx), MODEL[1]) == 0 ? bx : by, 1100.0);
    a_first = world_job_state(e.w.s, a1) == MS_JOB_RUNNING;
    assert_true(a_first != (world_job_state(e.w.s, b1) == MS_JOB_RUNNING));
    env_free(&e);
    return a_first;
}

static void test_tier(void **state)
{
    (void)state;
    assert_false(tier_case(0));   /* B's virtual time is smaller */
    assert_true(tier_case(7));    /* A within its H100 guarantee: 0 + 4 <= 7 */
}

static void test_placement(void **state)
{
    env_t e;
    int32_t a, b, a2;

    (void)state;
    env_make(&e, 1, false, 60.0);
    tenant_h100(&e, "A", 7);
    tenant_h100(&e, "B", 0);
    tenant_h100(&e, "C", 0);
    a = submit(&e, "3g", "A", 0, 100.0, 0.0);
    b = submit(&e, "3g", "B", 0, 100.0, 0.0);
    assert_string_equal(world_job_model(e.w.s, a), MODEL[1]);   /* its guaranteed model first */
    assert_string_equal(world_job_model(e.w.s, b), MODEL[0]);   /* the smaller instance first */
    /* C's class exists (on the A100) before its guarantee: then the H100 */
    finish(&e, b, 10.0);
    b = submit(&e, "3g", "C", 0, 100.0, 10.0);
    assert_string_equal(world_job_model(e.w.s, b), MODEL[0]);
    tenant_h100(&e, "C", 7);
    a2 = submit(&e, "3g", "C", 0, 100.0, 11.0);
    assert_string_equal(world_job_model(e.w.s, a2), MODEL[1]);
    /* and back without it */
    tenant_h100(&e, "C", 0);
    finish(&e, b, 12.0);
    b = submit(&e, "3g", "C", 0, 100.0, 12.0);
    assert_string_equal(world_job_model(e.w.s, b), MODEL[0]);
    env_free(&e);
}

/* B fills both GPUs with a 7g each (the A100's the lower GPU, equal lost
 * work); A (guarantee@H100-80GB=7, or none) asks for a 3g. */
static void test_reclaim(void **state)
{
    env_t e;
    ms_sched_stats_t st;
    int32_t b1, b2, ba, bh, a3;
    int pass;

    (void)state;
    for (pass = 0; pass < 2; pass++) {
        env_make(&e, 1, true, 0.0);
        tenant_h100(&e, "A", pass ? 7 : 0);
        tenant_h100(&e, "B", 0);
        b1 = submit(&e, "7g", "B", 0, 1000.0, 0.0);
        b2 = submit(&e, "7g", "B", 0, 1000.0, 0.0);
        ba = strcmp(world_job_model(e.w.s, b1), MODEL[0]) == 0 ? b1 : b2;
        bh = ba == b1 ? b2 : b1;
        assert_string_equal(world_job_model(e.w.s, bh), MODEL[1]);
        a3 = submit(&e, "3g", "A", 0, 100.0, 10.0);
        ms_sched_stats(e.w.s, &st);
        assert_int_equal(st.preemptions, pass);
        assert_int_equal(world_job_state(e.w.s, ba), MS_JOB_RUNNING);   /* never the A100's */
        assert_int_equal(world_job_state(e.w.s, bh), pass ? MS_JOB_QUEUED : MS_JOB_RUNNING);
        assert_int_equal(world_job_state(e.w.s, a3), pass ? MS_JOB_RUNNING : MS_JOB_QUEUED);
        if (pass)
            assert_string_equal(world_job_model(e.w.s, a3), MODEL[1]);
        env_free(&e);
    }
}

/* B's 7g fills the A100, seven 1g the H100 (B holds 7 there); A
 * (guarantee@H100-80GB=7) asks for a 4g, which starts only at 0 of the
 * H100: four of B's 1g would go, leaving B 3 there. */
static void test_victims_keep(void **state)
{
    env_t e;
    ms_sched_stats_t st;
    int32_t a4, one[7];
    int pass, i;

    (void)state;
    for (pass = 0; pass < 2; pass++) {
        env_make(&e, 1, true, 0.0);
        tenant_h100(&e, "A", 7);
        tenant_h100(&e, "B", 0);   /* its 7g on the A100 (first without a guarantee) */
        (void)submit(&e, "7g", "B", 0, 1000.0, 0.0);
        for (i = 0; i < 7; i++) {
            one[i] = submit(&e, "1g", "B", 0, 1000.0, 0.0);
            assert_string_equal(world_job_model(e.w.s, one[i]), MODEL[1]);
        }
        tenant_h100(&e, "B", pass ? 3 : 4);
        a4 = submit(&e, "4g", "A", 0, 100.0, 10.0);
        ms_sched_stats(e.w.s, &st);
        assert_int_equal(world_job_state(e.w.s, a4), pass ? MS_JOB_RUNNING : MS_JOB_QUEUED);
        assert_int_equal(st.preemptions, pass ? 4 : 0);   /* four 1g */
        assert_int_equal(e.bad_keep, 0);
        env_free(&e);
    }
}

/* --- validation and the option -------------------------------------------- */

static void test_validation(void **state)
{
    static const ms_sched_tenant_model_limit_t
        L3G4[] = { { "H100-80GB", 3, 0, 4 } }, GNEG[] = { { "H100-80GB", -1, 0, -1 } },
        GBIG[] = { { "H100-80GB", -1, 0, 2000000000L } }, NONE[] = { { "H100-80GB", -1, 0, 0 } },
        TWICE[] = { { "H100-80GB", -1, 0, 2 }, { "h100", -1, 0, 2 } }, G4[] = { { "H100-80GB", -1, 0, 4 } },
        L3[] = { { "H100-80GB", 3, 0, 0 } };
    env_t e;
    ms_diag_t dg;
    ms_sched_tenant_info_t in;

    (void)state;
    env_make(&e, 1, false, 60.0);
    assert_int_equal(tenant(&e, "t", 0, 1, L3G4, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "guarantee@H100-80GB");
    assert_non_null(strstr(dg.msg, "tenant t: guarantee@H100-80GB (4) must be at most limit@H100-80GB (3)"));
    assert_int_equal(tenant(&e, "t", 0, 1, GNEG, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "guarantee@H100-80GB");
    assert_int_equal(tenant(&e, "t", 0, 1, GBIG, &dg), MS_EINVAL);
    assert_non_null(strstr(dg.msg, "tenant t: guarantee@H100-80GB must be 0..1e9"));
    assert_int_equal(tenant(&e, "t", 0, 1, NONE, &dg), MS_EINVAL);   /* declares nothing */
    assert_string_equal(dg.field, "limit@H100-80GB");
    assert_int_equal(tenant(&e, "t", 0, 2, TWICE, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "guarantee@h100");
    assert_non_null(strstr(dg.msg, "model H100-80GB is guaranteed twice"));
    assert_int_equal(ms_sched_tenant_find(e.w.s, "t"), -1);   /* nothing declared */
    assert_int_equal(tenant(&e, "t", 0, 1, G4, &dg), MS_OK);
    assert_int_equal(ms_sched_tenant_info(e.w.s, ms_sched_tenant_find(e.w.s, "t"), &in), MS_OK);
    assert_int_equal(in.nmodel_limits, 1);
    assert_string_equal(in.model_limits[0].model, "H100-80GB");
    assert_true(in.model_limits[0].limit == -1 && in.model_limits[0].guarantee == 4 &&
                in.model_limits[0].usage == 0);
    assert_int_equal(tenant(&e, "t", 0, 1, L3, &dg), MS_OK);   /* a limit alone */
    assert_int_equal(ms_sched_tenant_info(e.w.s, ms_sched_tenant_find(e.w.s, "t"), &in), MS_OK);
    assert_true(in.model_limits[0].limit == 3 && in.model_limits[0].guarantee == 0);
    env_free(&e);
}

/* (its refusals: test_tenant_model.c's test_option, the parser's one table) */
static void test_option(void **state)
{
    static ms_sim_cfg_t c;
    static const char *const V = "a:guarantee@H100-80GB=14,limit@h100=28,guarantee@a100=7";
    ms_opt_target_t t;
    ms_diag_t dg;
    const ms_sched_tenant_model_limit_t *ml = c.tenants.t[0].model_limits;

    (void)state;
    ms_sim_cfg_defaults(&c);
    t = ms_opt_target_sim(&c);
    ms_diag_clear(&dg);
    if (ms_opt_set(&t, "tenant", V, &dg) != MS_OK)
        fail_msg("%s: %s", V, dg.msg);
    /* one entry per model: H100's both, then the A100's guarantee alone */
    assert_true(c.tenants.n == 1 && c.tenants.t[0].nmodel_limits == 2);
    assert_true(strcmp(ml[0].model, "H100-80GB") == 0 && ml[0].guarantee == 14 && ml[0].limit == 28);
    assert_true(strcmp(ml[1].model, "A100-40GB") == 0 && ml[1].guarantee == 7 && ml[1].limit == -1);
}

/* --- properties over random workloads -------------------------------------- */

static const char *const TNAME[] = { "a", "b", "c" };

typedef struct wl {
    uint64_t seed;
    double grace;
    long g[3];                     /* cluster-wide slice guarantees */
    long mg[3][2];                 /* per model guarantees (MODEL order) */
    bool elsewhere;                /* put them on A30 (no such GPU here) instead */
} wl_t;

static void wl_finish(void *ctx, int32_t k, double now, int n)
{
    (void)n;
    finish(ctx, k, now);
}

/* Each tenant's cluster-wide and per model guarantees (on A30, which the
 * cluster lacks, when elsewhere: one entry). */
static void declare(env_t *e, const wl_t *w)
{
    ms_diag_t dg;
    int k, m;

    for (k = 0; k < 3; k++) {
        ms_sched_tenant_model_limit_t ml[2];
        int n = 0;

        for (m = 0; m < 2 && !(w->elsewhere && n == 1); m++)
            if (w->mg[k][m] > 0)
                ml[n++] = (ms_sched_tenant_model_limit_t){ w->elsewhere ? "A30" : MODEL[m], -1, 0, w->mg[k][m] };
        if (tenant(e, TNAME[k], w->g[k], n, ml, &dg) != MS_OK)
            fail_msg("tenant %s: %s", TNAME[k], dg.msg);
    }
}

/* A random job: any of five profiles, any tenant, one in five at
 * priority 1, one in four on one model (the other model's guarantee then
 * cannot serve it). */
typedef struct job {
    const char *prof, *model;
    int tk, prio;
    double dur;
} job_t;

static job_t draw(ms_rng_t *r)
{
    static const char *const PROF[] = { "1g", "2g", "3g", "4g", "7g" };
    job_t j;
    int mk;

    j.prof = PROF[ms_rng_below(r, 5)];
    j.tk = (int)ms_rng_below(r, 3);
    j.prio = ms_rng_below(r, 5) == 0 ? 1 : 0;
    mk = (int)ms_rng_below(r, 8);
    j.model = mk < 2 ? MODEL[mk] : NULL;
    j.dur = 30.0 + floor(ms_rng_unit(r) * 400.0);
    return j;
}

static void run_wl(env_t *e, const wl_t *w, int n)
{
    ms_rng_t r;
    double now = 0.0;
    int i;
    world_wl_t wl;

    env_make(e, 2, true, w->grace);
    declare(e, w);
    ms_rng_seed(&r, w->seed);
    wl = (world_wl_t){ e->w.s, e->end, e->done, e, wl_finish, NULL };
    for (i = 0; i < n; i++) {
        job_t j = draw(&r);

        now = world_wl_next(&wl, &r, i, now);
        assert_int_equal(submit_on(e, j.prof, TNAME[j.tk], j.model, j.prio, j.dur, now), i);
    }
    world_wl_end(&wl, n, w->seed);
}

static void test_properties(void **state)
{
    static env_t e;
    long victims = 0, mreclaims = 0;
    uint64_t seed;

    (void)state;
    for (seed = 1; seed <= 16; seed++) {
        wl_t w;
        uint64_t h[2];
        int k, m, v;
        ms_rng_t r;

        memset(&w, 0, sizeof(w));
        w.seed = seed;
        w.grace = (double)(seed % 3) * 30.0;
        ms_rng_seed(&r, seed * 7919u);
        for (k = 0; k < 3; k++) {
            w.g[k] = ms_rng_below(&r, 4) == 0 ? 1 + (long)ms_rng_below(&r, 7) : 0;
            for (m = 0; m < 2; m++)
                w.mg[k][m] = ms_rng_below(&r, 2) ? 1 + (long)ms_rng_below(&r, 14) : 0;
        }
        /* guarantees on a model the cluster lacks: the plans of none */
        for (v = 0; v < 2; v++) {
            wl_t x = w;

            x.elsewhere = v == 1;
            if (v == 0)
                memset(x.mg, 0, sizeof(x.mg));
            run_wl(&e, &x, 100);
            h[v] = e.pl.plans;
            env_free(&e);
        }
        assert_true(h[0] == h[1]);
        run_wl(&e, &w, 160);
        if (e.bad_keep != 0 || e.bad_reclaim != 0)
            fail_msg("seed %llu: %ld victims below their per model guarantee, %ld reclaims off "
                     "their model", (unsigned long long)seed, e.bad_keep, e.bad_reclaim);
        victims += e.victims;
        mreclaims += e.mreclaims;
        env_free(&e);
    }
    print_message("victims %ld, by a per model guarantee alone %ld\n", victims, mreclaims);
    assert_true(mreclaims > 0);   /* else (c) held of nothing */
}

int main(void)
{
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(test_tier),
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_victims_keep),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_option),
        cmocka_unit_test(test_properties),
    };

    return cmocka_run_group_tests(cases, NULL, NULL);
}
