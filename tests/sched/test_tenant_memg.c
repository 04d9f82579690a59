/* test_tenant_memg.c - a tenant's memory guarantee
 * (ms_sched_tenant_t.mem_guarantee_gb; docs/tenants.md): Kueue's nominal
 * quota per resource, a head within its tenant's guarantee only when it is
 * in every declared dimension (memory when mem_guarantee_gb > 0; slices
 * when guarantee > 0 or there is no memory guarantee).
 *   - by hand, two A100-40GB: B fills the cluster while A (mem-guarantee
 *     20, no slice guarantee, a larger virtual time) is idle; A's 4g.20gb
 *     and B's wait: when a GPU frees A's starts first (tier 0; B's without
 *     the guarantee); A's next 4g.20gb, which would take it to 40 GB, is
 *     borrowing and waits behind B's by fair share;
 *   - reclaim (cfg.preempt), one A100-40GB: A below its memory guarantee
 *     preempts B's borrowed job of equal priority (not without the
 *     guarantee), and never a job that would take B below B's own memory
 *     guarantee;
 *   - validation: -1, 2e9, NaN, above the mem-limit refused naming
 *     mem-guarantee; info reports it; the option parses and refuses alike;
 *   - properties over random workloads on two A100s: with every memory
 *     guarantee 0 the plans are those of tenants declared without the
 *     field; with a slice guarantee declared and a memory guarantee no
 *     tenant can exceed (preemption off) they are those without it too;
 *     with random memory guarantees and preemption, ms_sched_check holds
 *     after every call, no victim's tenant falls below its guarantee in a
 *     declared dimension, every job ends done, and memory reclaims happen.
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
    world_t w;                     /* the scheduler and its cluster spec */
    double dur[MAXJ], end[MAXJ];
    int prio[MAXJ], ten[MAXJ];
    bool done[MAXJ];
    int32_t finishing;             /* the slot the driver is ending, -1 */
    uint64_t plans;                /* a hash of every plan, in order */
    long victims, reclaims, mem_reclaims, bad;
    int32_t pending[16];           /* victims whose preemptor is not yet seen */
    bool kept[16];                 /* their tenant kept its guarantee after their stop */
    int npend;
} env_t;

/* The victim's tenant after its stop: never below its guarantee in a
 * declared dimension (the stop is uncharged before the plan is handed). */
static bool keeps(const ms_sched_tenant_info_t *ti)
{
    bool slices = ti->guarantee > 0 || ti->mem_guarantee_gb <= 0.0;

    return (!slices || ti->usage >= ti->guarantee) &&
           (ti->mem_guarantee_gb <= 0.0 || ti->mem_gb >= ti->mem_guarantee_gb - 1e-6);
}

static void on_start(env_t *e, int32_t job, double now)
{
    ms_sched_job_info_t ji;
    ms_sched_tenant_info_t ti;
    int k;

    e->end[job] = now + e->dur[job];
    for (k = 0; k < e->npend; k++) {
        int32_t v = e->pending[k];

        if (e->ten[v] == e->ten[job])
            continue;   /* by priority in its own tenant: no guarantee of another's at stake */
        if (!e->kept[k])
            e->bad++;
        if (e->prio[v] >= e->prio[job])
            e->reclaims++;
        assert_int_equal(ms_sched_job(e->w.s, job, &ji), MS_OK);
        assert_int_equal(ms_sched_tenant_info(e->w.s, ji.tenant, &ti), MS_OK);
        if (e->prio[v] >= e->prio[job] && ti.guarantee == 0 && ti.mem_guarantee_gb > 0.0)
            e->mem_reclaims++;
    }
    e->npend = 0;
}

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    env_t *e = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        e->plans = world_fold_op(e->plans, op, p->now);
        if (op->job < 0 || op->job >= MAXJ)
            continue;
        if (op->kind == MS_OP_STOP && op->job != e->finishing && isfinite(e->end[op->job])) {
            ms_sched_job_info_t ji;
            ms_sched_tenant_info_t ti;

            assert_int_equal(ms_sched_job(e->w.s, op->job, &ji), MS_OK);
            assert_int_equal(ms_sched_tenant_info(e->w.s, ji.tenant, &ti), MS_OK);
            e->victims++;
            assert_true(e->npend < 16);
            e->kept[e->npend] = keeps(&ti);
            e->pending[e->npend++] = op->job;
            e->end[op->job] = INFINITY;
        } else if (op->kind == MS_OP_START) {
            on_start(e, op->job, p->now);
        }
    }
    return MS_OK;
}

static void env_make(env_t *e, const char *node, bool preempt, double grace)
{
    ms_sched_cfg_t cfg;
    int i;

    memset(e, 0, sizeof(*e));
    e->plans = 1469598103934665603ULL;
    e->finishing = -1;
    for (i = 0; i < MAXJ; i++)
        e->end[i] = INFINITY;
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa+");
    cfg.exec.ctx = e;
    cfg.exec.plan = on_plan;
    cfg.preempt = preempt;
    cfg.preempt_grace_s = grace;
    cfg.preempt_rate = 0;
    cfg.preempt_after_s = 0.0;
    world_make_cfg(&e->w, &cfg, &node, 1);
}

static void env_free(env_t *e)
{
    world_free(&e->w);
}

static ms_status_t tenant(env_t *e, const char *name, long g, double mem_limit, double mem_g,
                          ms_diag_t *dg)
{
    ms_sched_tenant_t t = { name, 1.0, g, -1, mem_limit, mem_g, 0, { { NULL, 0, 0, 0 } } };

    ms_diag_clear(dg);
    return ms_sched_tenant_set(e->w.s, &t, NULL, dg);
}

static void tenant_ok(env_t *e, const char *name, long g, double mem_g)
{
    ms_diag_t dg;

    if (tenant(e, name, g, 0.0, mem_g, &dg) != MS_OK)
        fail_msg("tenant %s: %s", name, dg.msg);
}

static int32_t submit(env_t *e, const char *prof, const char *ten, int tk, int prio, double dur,
                      double now)
{
    int32_t slot = ms_sched_next_slot(e->w.s);

    assert_true(slot >= 0 && slot < MAXJ);
    e->dur[slot] = dur;
    e->prio[slot] = prio;
    e->ten[slot] = tk;
    return world_submit(e->w.s, prof, ten, NULL, prio, dur, now);
}

static void finish(env_t *e, int32_t slot, double now)
{
    e->done[slot] = true;
    e->end[slot] = INFINITY;
    world_finish(e->w.s, slot, now, &e->finishing);
}

/* --- by hand ------------------------------------------------------------ */

/* The tier: A ran two 7g for 1000 s (a large virtual time), then B fills
 * both GPUs; A's 4g.20gb (a1) and then B's (b1) wait. One GPU frees: the
 * first in the order starts (4g + 4g do not fit one GPU). */
static void tier_case(double a_mem_g, bool *a1_first, bool *b1_before_a2)
{
    env_t e;
    int32_t x, y, bx, by, a1, b1, a2;

    env_make(&e, "n=2xA100-40GB", false, 60.0);
    tenant_ok(&e, "A", 0, a_mem_g);
    tenant_ok(&e, "B", 0, 0.0);
    x = submit(&e, "7g.40gb", "A", 0, 0, 100.0, 0.0);
    y = submit(&e, "7g.40gb", "A", 0, 0, 100.0, 0.0);
    finish(&e, x, 1000.0);
    finish(&e, y, 1000.0);
    bx = submit(&e, "7g.40gb", "B", 1, 0, 100.0, 1000.0);
    by = submit(&e, "7g.40gb", "B", 1, 0, 100.0, 1000.0);
    assert_int_equal(world_job_state(e.w.s, by), MS_JOB_RUNNING);
    a1 = submit(&e, "4g.20gb", "A", 0, 0, 100.0, 1001.0);
    b1 = submit(&e, "4g.20gb", "B", 1, 0, 100.0, 1002.0);
    assert_int_equal(world_job_state(e.w.s, a1), MS_JOB_QUEUED);
    assert_int_equal(world_job_state(e.w.s, b1), MS_JOB_QUEUED);
    finish(&e, bx, 1100.0);
    *a1_first = world_job_state(e.w.s, a1) == MS_JOB_RUNNING;
    assert_true(*a1_first != (world_job_state(e.w.s, b1) == MS_JOB_RUNNING));
    /* the second 4g of the tenant that started: it would borrow */
    a2 = submit(&e, "4g.20gb", "A", 0, 0, 100.0, 1101.0);
    finish(&e, by, 1200.0);
    if (*a1_first) {
        *b1_before_a2 = world_job_state(e.w.s, b1) == MS_JOB_RUNNING;
        assert_true(*b1_before_a2 != (world_job_state(e.w.s, a2) == MS_JOB_RUNNING));
    }
    env_free(&e);
}

static void test_tier(void **state)
{
    bool a1_first = false, b1_before_a2 = false;

    (void)state;
    /* without the memory guarantee B goes first: its virtual time is smaller */
    tier_case(0.0, &a1_first, &b1_before_a2);
    assert_false(a1_first);
    /* with it A's head is within (0 + 20 <= 20): tier 0, first; its next
     * 4g (20 + 20 > 20) borrows, and waits behind B's by fair share */
    tier_case(20.0, &a1_first, &b1_before_a2);
    assert_true(a1_first);
    assert_true(b1_before_a2);
}

/* Reclaim on one A100-40GB, every job priority 0, grace 0. */
static void test_reclaim(void **state)
{
    env_t e;
    ms_sched_stats_t st;
    int32_t b7, a3, b3a, b3b, a3b, b4, b1g;
    int pass;

    (void)state;
    /* A (mem-guarantee 20) takes back B's borrowed 7g; not without it */
    for (pass = 0; pass < 2; pass++) {
        env_make(&e, "n=1xA100-40GB", true, 0.0);
        tenant_ok(&e, "A", 0, pass ? 20.0 : 0.0);
        tenant_ok(&e, "B", 0, 0.0);
        b7 = submit(&e, "7g.40gb", "B", 1, 0, 1000.0, 0.0);
        a3 = submit(&e, "3g.20gb", "A", 0, 0, 100.0, 10.0);
        assert_int_equal(world_job_state(e.w.s, a3), pass ? MS_JOB_RUNNING : MS_JOB_QUEUED);
        assert_int_equal(world_job_state(e.w.s, b7), pass ? MS_JOB_QUEUED : MS_JOB_RUNNING);
        ms_sched_stats(e.w.s, &st);
        assert_int_equal(st.preemptions, pass);
        assert_int_equal(e.bad, 0);
        env_free(&e);
    }
    /* B with a memory guarantee of 20 runs two 3g.20gb (40 GB: 20 borrowed);
     * A (mem-guarantee 40) takes one back, and its second 3g (within: 20 +
     * 20 <= 40) does not take B's other, which would leave B 0 < 20.
     * Without B's guarantee it would. */
    for (pass = 0; pass < 2; pass++) {
        env_make(&e, "n=1xA100-40GB", true, 0.0);
        tenant_ok(&e, "A", 0, 40.0);
        tenant_ok(&e, "B", 0, pass ? 0.0 : 20.0);
        b3a = submit(&e, "3g.20gb", "B", 1, 0, 1000.0, 0.0);
        b3b = submit(&e, "3g.20gb", "B", 1, 0, 1000.0, 0.0);
        assert_int_equal(world_job_state(e.w.s, b3b), MS_JOB_RUNNING);
        a3 = submit(&e, "3g.20gb", "A", 0, 0, 100.0, 10.0);
        assert_int_equal(world_job_state(e.w.s, a3), MS_JOB_RUNNING);
        assert_true((world_job_state(e.w.s, b3a) == MS_JOB_QUEUED) != (world_job_state(e.w.s, b3b) == MS_JOB_QUEUED));
        a3b = submit(&e, "3g.20gb", "A", 0, 0, 100.0, 20.0);
        ms_sched_stats(e.w.s, &st);
        if (pass == 0) {
            assert_int_equal(world_job_state(e.w.s, a3b), MS_JOB_QUEUED);
            assert_int_equal(st.preemptions, 1);
            assert_int_equal(e.bad, 0);
        } else {
            assert_int_equal(world_job_state(e.w.s, a3b), MS_JOB_RUNNING);
            assert_int_equal(st.preemptions, 2);
        }
        env_free(&e);
    }
    /* B (mem-guarantee 20) runs a 4g.20gb and a 1g.5gb: over its guarantee
     * by 5 GB, so it has borrowed work; A's 4g.20gb (within its 20) starts
     * only at 0, where B's 4g is, and stopping it would leave B 5 GB: it
     * waits. Without B's guarantee it takes the 4g. */
    for (pass = 0; pass < 2; pass++) {
        env_make(&e, "n=1xA100-40GB", true, 0.0);
        tenant_ok(&e, "A", 0, 20.0);
        tenant_ok(&e, "B", 0, pass ? 0.0 : 20.0);
        b4 = submit(&e, "4g.20gb", "B", 1, 0, 1000.0, 0.0);
        b1g = submit(&e, "1g.5gb", "B", 1, 0, 1000.0, 0.0);
        a3 = submit(&e, "4g.20gb", "A", 0, 0, 100.0, 10.0);
        ms_sched_stats(e.w.s, &st);
        assert_int_equal(world_job_state(e.w.s, a3), pass ? MS_JOB_RUNNING : MS_JOB_QUEUED);
        assert_int_equal(world_job_state(e.w.s, b4), pass ? MS_JOB_QUEUED : MS_JOB_RUNNING);
        assert_int_equal(world_job_state(e.w.s, b1g), MS_JOB_RUNNING);
        assert_int_equal(st.preemptions, pass);
        env_free(&e);
    }
}

/* --- validation and the option -------------------------------------------- */

static void test_validation(void **state)
{
    env_t e;
    ms_diag_t dg;
    ms_sched_tenant_info_t in;
    static const double BAD[] = { -1.0, 2e9, NAN };
    size_t i;

    (void)state;
    env_make(&e, "n=1xA100-40GB", false, 60.0);
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        assert_int_equal(tenant(&e, "tm", 0, 0.0, BAD[i], &dg), MS_EINVAL);
        assert_string_equal(dg.field, "mem-guarantee");
        assert_non_null(strstr(dg.msg, "tenant tm: mem-guarantee"));
    }
    assert_int_equal(tenant(&e, "tm", 0, 10.0, 20.0, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "mem-guarantee");
    assert_non_null(strstr(dg.msg, "tenant tm: mem-guarantee (20 GB) must be at most the mem-limit (10 GB)"));
    assert_int_equal(ms_sched_tenant_find(e.w.s, "tm"), -1);   /* nothing declared */
    assert_int_equal(tenant(&e, "tm", 0, 20.0, 20.0, &dg), MS_OK);
    assert_int_equal(tenant(&e, "tn", 2, 0.0, 1e9, &dg), MS_OK);   /* no mem-limit: any */
    assert_int_equal(ms_sched_tenant_info(e.w.s, ms_sched_tenant_find(e.w.s, "tm"), &in), MS_OK);
    assert_true(in.mem_guarantee_gb == 20.0 && in.mem_limit_gb == 20.0);
    assert_int_equal(ms_sched_tenant_info(e.w.s, 0, &in), MS_OK);
    assert_true(in.mem_guarantee_gb == 0.0);
    env_free(&e);
}

static void test_option(void **state)
{
    ms_sim_cfg_t c;
    ms_opt_target_t t;
    ms_diag_t dg;
    static const char *const BAD[] = { "a:mem-guarantee=-1", "a:mem-guarantee=x", "a:mem-guarantee=2e9",
                                       "a:mem-guarantee=", "a:mem-limit=10,mem-guarantee=20" };
    size_t i;

    (void)state;
    ms_sim_cfg_defaults(&c);
    t = ms_opt_target_sim(&c);
    ms_diag_clear(&dg);
    assert_int_equal(ms_opt_set(&t, "tenant", "a:guarantee=3,mem-guarantee=20.5,mem-limit=40", &dg), MS_OK);
    assert_int_equal(c.tenants.n, 1);
    assert_true(c.tenants.t[0].mem_guarantee_gb == 20.5 && c.tenants.t[0].mem_limit_gb == 40.0 &&
                c.tenants.t[0].guarantee == 3);
    assert_int_equal(ms_opt_set(&t, "tenant", "b", &dg), MS_OK);
    assert_true(c.tenants.t[1].mem_guarantee_gb == 0.0);
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        ms_diag_clear(&dg);
        assert_int_not_equal(ms_opt_set(&t, "tenant", BAD[i], &dg), MS_OK);
        assert_string_equal(dg.field, "tenant");
        assert_non_null(strstr(dg.msg, "mem-guarantee"));
    }
}

/* --- properties over random workloads -------------------------------------- */

typedef struct wl {
    uint64_t seed;
    bool preempt;
    double grace;
    long g[3];                     /* slice guarantees of a, b, c */
    double mg[3];                  /* memory guarantees; < 0: the field left unset */
} wl_t;

static const char *const TNAME[] = { "a", "b", "c" };

static void wl_finish(void *ctx, int32_t k, double now, int n)
{
    (void)n;
    finish(ctx, k, now);
}

static void declare(env_t *e, const wl_t *w)
{
    ms_diag_t dg;
    int k;

    for (k = 0; k < 3; k++) {
        ms_sched_tenant_t t;

        /* "unset": the struct zeroed and the older fields given, as code
         * written before the field would (sim/tenants.c's memset) */
        memset(&t, 0, sizeof(t));
        t.name = TNAME[k];
        t.weight = 1.0;
        t.guarantee = w->g[k];
        t.limit = -1;
        if (w->mg[k] >= 0.0)
            t.mem_guarantee_gb = w->mg[k];
        ms_diag_clear(&dg);
        if (ms_sched_tenant_set(e->w.s, &t, NULL, &dg) != MS_OK)
            fail_msg("tenant %s: %s", TNAME[k], dg.msg);
    }
}

static void run_wl(env_t *e, const wl_t *w, int n)
{
    static const char *const PROF[] = { "1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb" };
    ms_rng_t r;
    double now = 0.0;
    int i;
    world_wl_t wl;

    env_make(e, "n=2xA100-40GB", w->preempt, w->grace);
    declare(e, w);
    ms_rng_seed(&r, w->seed);
    wl = (world_wl_t){ e->w.s, e->end, e->done, e, wl_finish, NULL };
    for (i = 0; i < n; i++) {
        const char *prof = PROF[ms_rng_below(&r, 5)];
        int tk = (int)ms_rng_below(&r, 3);
        int prio = ms_rng_below(&r, 4) == 0 ? 1 : 0;
        double dur = 30.0 + floor(ms_rng_unit(&r) * 400.0);

        now = world_wl_next(&wl, &r, i, now);
        assert_int_equal(submit(e, prof, TNAME[tk], tk, prio, dur, now), i);
    }
    world_wl_end(&wl, n, w->seed);
}

static void test_properties(void **state)
{
    static env_t e;
    long victims = 0, reclaims = 0, mem_reclaims = 0;
    uint64_t seed;

    (void)state;
    for (seed = 1; seed <= 12; seed++) {
        wl_t w;
        uint64_t h[2];
        int k, v;
        ms_rng_t r;

        /* every memory guarantee 0, given or not: the same plans */
        memset(&w, 0, sizeof(w));
        w.seed = seed;
        w.preempt = seed % 2 == 0;
        w.grace = (double)(seed % 3) * 30.0;
        ms_rng_seed(&r, seed * 7919u);
        for (k = 0; k < 3; k++)
            w.g[k] = ms_rng_below(&r, 2) ? (long)ms_rng_below(&r, 8) : 0;
        for (v = 0; v < 2; v++) {
            for (k = 0; k < 3; k++)
                w.mg[k] = v ? 0.0 : -1.0;
            run_wl(&e, &w, 120);
            h[v] = e.plans;
            env_free(&e);
        }
        assert_true(h[0] == h[1]);
        /* slices declared (guarantee > 0) and a memory guarantee nobody
         * reaches, preemption off: memory never decides, the same plans */
        w.preempt = false;
        for (v = 0; v < 2; v++) {
            for (k = 0; k < 3; k++) {
                w.g[k] = 1 + k;
                w.mg[k] = v ? 1e6 : 0.0;
            }
            run_wl(&e, &w, 120);
            h[v] = e.plans;
            env_free(&e);
        }
        assert_true(h[0] == h[1]);
        /* random memory guarantees, with preemption: the guarantees kept */
        w.preempt = true;
        for (k = 0; k < 3; k++) {
            w.g[k] = ms_rng_below(&r, 3) == 0 ? 1 + (long)ms_rng_below(&r, 6) : 0;
            w.mg[k] = 10.0 * (double)ms_rng_below(&r, 5);
        }
        run_wl(&e, &w, 160);
        if (e.bad != 0)
            fail_msg("seed %llu: %ld victims took their tenant below its guarantee",
                     (unsigned long long)seed, e.bad);
        victims += e.victims;
        reclaims += e.reclaims;
        mem_reclaims += e.mem_reclaims;
        env_free(&e);
    }
    print_message("victims %ld, by reclaim %ld, by a memory guarantee alone %ld\n", victims,
                  reclaims, mem_reclaims);
    assert_true(mem_reclaims > 0);   /* the property had something to hold */
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_tier),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_option),
        cmocka_unit_test(test_properties),
    };

    return cmocka_run_group_tests(t, NULL, NULL);
}
