/* test_preempt.c - preemption in ms_sched (cfg.preempt; docs/tenants.md,
 * "Preemption"), as properties over random workloads driven through the
 * real scheduler with a small event loop (each job ends duration seconds
 * after its latest start):
 *   - no victim has a priority >= its preemptor's (without tenants), or,
 *     with a tenant reclaiming its guarantee, a priority above it;
 *   - no victim is nonpreemptible or started less than the grace
 *     period ago; no victim's tenant falls below its guarantee;
 *   - after each preemption the preemptor runs (ms_sched_check after every
 *     call: every placement legal, the counts and the tenants' usage right);
 *   - at most preempt-rate preemptions in any 60 s;
 *   - every job ends done, having run its full duration in one piece (a
 *     victim is queued again, never lost);
 *   - with nobody eligible (one priority), the plans are identical to
 *     those with preemption off;
 * and, by hand, that a 4g behind a 3g at 0 and 1g at 4..6 takes the 3g
 * (the geometry), and that the simulator counts preemptions, lost work
 * and the waits per priority. (Gangs: test_preempt_gang.c.)
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
#include "migsched/rng.h"
#include "migsched/sched.h"
#include "migsched/sim.h"
#include "migsched/trace.h"
#include "sched/sched_int.h"   /* test_full_passes: search every time */

static ms_geom_t *G;   /* A100-40GB's default profiles (main) */

#define MAXJ 400
#define MAXP 4000

typedef struct pre {
    double t;
    int32_t victim, preemptor;
    long ten_usage, ten_guarantee;   /* the victim's tenant's, after its stop */
} pre_t;

typedef struct env {
    world_t w;                     /* the scheduler and its cluster spec */
    double dur[MAXJ], start[MAXJ], end[MAXJ], sub[MAXJ];
    int prio[MAXJ], ten[MAXJ];
    bool nopre[MAXJ], done[MAXJ];
    world_pre_t pl;                /* the plans' hash, the ops to confirm, the victims stopped */
    pre_t pre[MAXP];
    int npre;
    int nevents;                   /* preemption decisions (a preemptor each) */
    double ev_t[MAXP];
} env_t;

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    env_t *e = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = world_pre_op(&e->pl, p, i, MAXJ);

        if (op == NULL)
            continue;
        if (op->kind == MS_OP_STOP && op->job != e->pl.finishing && !isnan(e->start[op->job])) {
            /* a running job stopped that the driver did not end: a victim */
            world_pre_victim(&e->pl, op->job);
            assert_true(e->npre < MAXP);
            e->pre[e->npre].t = p->now;
            e->pre[e->npre].victim = op->job;
            e->pre[e->npre].preemptor = -1;
            {
                ms_sched_job_info_t ji;
                ms_sched_tenant_info_t ti;

                assert_int_equal(ms_sched_job(e->w.s, op->job, &ji), MS_OK);
                assert_int_equal(ms_sched_tenant_info(e->w.s, ji.tenant, &ti), MS_OK);
                e->pre[e->npre].ten_usage = ti.usage;
                e->pre[e->npre].ten_guarantee = ti.guarantee;
            }
            e->npre++;
            e->end[op->job] = INFINITY;
            e->start[op->job] = NAN;
        } else if (op->kind == MS_OP_START) {
            if (e->pl.npend > 0) {
                int k;

                for (k = e->npre - e->pl.npend; k < e->npre; k++)
                    e->pre[k].preemptor = op->job;
                assert_true(e->nevents < MAXP);
                e->ev_t[e->nevents++] = p->now;
                e->pl.npend = 0;
            }
            e->start[op->job] = p->now;
            e->end[op->job] = p->now + e->dur[op->job];
        }
    }
    return MS_OK;
}

static bool g_track;   /* env_make: cfg.track_ops */

static double g_max_lost;   /* preempt_max_lost_s of the next env_make */
static double g_ckpt;       /* checkpoint_s of the jobs submit makes */

static void env_make(env_t *e, const char *node, bool preempt, double grace, int rate,
                     double after)
{
    ms_sched_cfg_t cfg;
    int i;

    memset(e, 0, sizeof(*e));
    world_pre_init(&e->pl, g_track);
    for (i = 0; i < MAXJ; i++) {
        e->start[i] = NAN;
        e->end[i] = INFINITY;
    }
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa");
    cfg.exec.ctx = e;
    cfg.exec.plan = on_plan;
    cfg.preempt = preempt;
    cfg.preempt_grace_s = grace;
    cfg.preempt_rate = rate;
    cfg.preempt_after_s = after;
    cfg.preempt_max_lost_s = g_max_lost;
    cfg.track_ops = g_track;
    world_make_cfg(&e->w, &cfg, &node, 1);
}

static void env_free(env_t *e)
{
    world_free(&e->w);
}

static void tenant(env_t *e, const char *name, long g)
{
    ms_sched_tenant_t t = { name, 1.0, g, -1, 0.0, 0.0, 0, { { NULL, 0, 0, 0 } } };
    ms_diag_t dg;

    ms_diag_clear(&dg);
    if (ms_sched_tenant_set(e->w.s, &t, NULL, &dg) != MS_OK)
        fail_msg("tenant %s: %s", name, dg.msg);
}

static const char *const TEN[] = { NULL, "a", "b" };

static int32_t submit(env_t *e, const char *prof, int prio, bool nopre, int ten, double dur,
                      double now)
{
    ms_sched_req_t rq;
    ms_diag_t dg;
    int32_t slot = ms_sched_next_slot(e->w.s);

    assert_true(slot < MAXJ);
    e->dur[slot] = dur;
    e->sub[slot] = now;
    e->prio[slot] = prio;
    e->nopre[slot] = nopre;
    e->ten[slot] = ten;
    memset(&rq, 0, sizeof(rq));
    rq.profile = prof;
    rq.priority = prio;
    rq.nonpreemptible = nopre;
    rq.tenant = TEN[ten];
    rq.estimate_s = dur;
    rq.duration_s = dur;
    rq.checkpoint_s = g_ckpt;
    ms_diag_clear(&dg);
    if (ms_sched_submit(e->w.s, &rq, now, &slot, &dg) != MS_OK)
        fail_msg("submit %s: %s", prof, dg.msg);
    assert_int_equal(ms_sched_check(e->w.s), MS_OK);
    world_pre_confirm(&e->pl, e->w.s, now);   /* ops are kept only when tracked */
    return slot;
}

/* End every job whose run reaches its duration by t, in time order. */
static void run_until(env_t *e, int n, double t)
{
    for (;;) {
        int32_t k, best = -1;

        for (k = 0; k < n; k++)
            if (!e->done[k] && e->end[k] <= t && (best < 0 || e->end[k] < e->end[best]))
                best = k;
        if (best < 0)
            return;
        e->pl.finishing = best;
        e->done[best] = true;
        {
            double now = e->end[best];

            e->end[best] = INFINITY;
            assert_int_equal(ms_sched_finished(e->w.s, best, now), MS_OK);
            world_pre_confirm(&e->pl, e->w.s, now);
        }
        e->pl.finishing = -1;
        assert_int_equal(ms_sched_check(e->w.s), MS_OK);
    }
}

/* --- the properties over random workloads -------------------------------- */

static const char *const PROF[] = { "1g", "2g", "3g", "4g", "7g" };

typedef struct wl {
    uint64_t seed;
    int n;
    bool preempt, tenants, one_prio, full;
    double grace, after;
    int rate;
} wl_t;

/* Run one random workload; every property is checked as it goes or at
 * the end. */
static void run_wl(env_t *e, const wl_t *w)
{
    ms_rng_t r;
    double now = 0.0;
    int i, k;

    env_make(e, "n=2xA100-40GB", w->preempt, w->grace, w->rate, w->after);
    e->w.s->test_full_passes = w->full;
    if (w->tenants) {
        tenant(e, "a", 7);
        tenant(e, "b", 0);
    }
    ms_rng_seed(&r, w->seed);
    for (i = 0; i < w->n; i++) {
        const char *prof = PROF[ms_rng_unit(&r) < 0.5 ? (int)(ms_rng_unit(&r) * 2) : (int)(ms_rng_unit(&r) * 5)];
        int prio = w->one_prio ? 0 : (int)(ms_rng_unit(&r) * 4);
        bool nopre = ms_rng_unit(&r) < 0.1;
        int ten = w->tenants ? 1 + (int)(ms_rng_unit(&r) * 2) : 0;
        double dur = 30.0 + ms_rng_unit(&r) * 400.0;

        now += ms_rng_unit(&r) * 40.0;
        run_until(e, i, now);
        submit(e, prof, prio, nopre, ten, dur, now);
    }
    run_until(e, w->n, INFINITY);
    /* everyone ran its full duration in the end: done, and nothing waits */
    for (k = 0; k < w->n; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(e->w.s, k, &in), MS_OK);
        if (in.state != MS_JOB_DONE)
            fail_msg("seed %llu: job %d is %s at the end", (unsigned long long)w->seed, k,
                     ms_job_state_name(in.state));
        assert_true(e->done[k]);
        assert_true(fabs(in.end_t - in.start_t - e->dur[k]) < 1e-6);
    }
}

static long g_reclaims;   /* victims of a priority >= their preemptor's */

static void check_victims(const env_t *e, const wl_t *w)
{
    int i, k;

    for (i = 0; i < e->npre; i++) {
        const pre_t *p = &e->pre[i];

        if (p->preemptor < 0)
            fail_msg("seed %llu: victim %d at %.3f without a preemptor",
                     (unsigned long long)w->seed, p->victim, p->t);
        if (p->t - e->sub[p->preemptor] < w->after)
            fail_msg("seed %llu: job %d preempted after %.3f s of wait (preempt-after %.0f)",
                     (unsigned long long)w->seed, p->preemptor, p->t - e->sub[p->preemptor],
                     w->after);
        assert_false(e->nopre[p->victim]);
        /* another tenant's guarantee is never taken */
        if (e->ten[p->victim] != e->ten[p->preemptor] && p->ten_usage < p->ten_guarantee)
            fail_msg("seed %llu: job %d took tenant %d below its guarantee (%ld < %ld)",
                     (unsigned long long)w->seed, p->preemptor, e->ten[p->victim], p->ten_usage,
                     p->ten_guarantee);
        if (e->prio[p->victim] >= e->prio[p->preemptor]) {
            /* only a tenant below its guarantee (a) reclaims, and only from
             * another tenant, never from a higher priority */
            if (!(w->tenants && e->ten[p->preemptor] == 1 && e->ten[p->victim] == 2 &&
                  e->prio[p->victim] <= e->prio[p->preemptor]))
                fail_msg("seed %llu: job %d (priority %d) preempted job %d (priority %d)",
                         (unsigned long long)w->seed, p->preemptor, e->prio[p->preemptor],
                         p->victim, e->prio[p->victim]);
            g_reclaims++;
        }
    }
    /* the rate: at most rate decisions in any 60 s (windows (t - 60, t]) */
    if (w->rate > 0)
        for (i = 0; i < e->nevents; i++) {
            int in = 0;

            for (k = 0; k <= i; k++)
                in += e->ev_t[k] > e->ev_t[i] - 60.0;
            if (in > w->rate)
                fail_msg("seed %llu: %d preemptions in the 60 s before %.3f (rate %d)",
                         (unsigned long long)w->seed, in, e->ev_t[i], w->rate);
        }
}

static void test_properties(void **state)
{
    static env_t e;
    long total = 0;
    int i;

    (void)state;
    g_reclaims = 0;
    for (i = 0; i < 24; i++) {
        wl_t w;

        memset(&w, 0, sizeof(w));
        w.seed = 1000 + (uint64_t)i;
        w.n = 160;
        w.preempt = true;
        w.tenants = i % 3 == 2;
        w.grace = (double)(i % 4) * 40.0;
        w.rate = i % 5 == 4 ? 0 : 1 + i % 3;
        w.after = i % 2 ? 0.0 : 50.0;
        run_wl(&e, &w);
        check_victims(&e, &w);
        total += e.npre;
        env_free(&e);
    }
    /* the workloads do preempt (a property that never fires proves nothing) */
    print_message("preemptions over 24 workloads: %ld, by reclaim: %ld\n", total, g_reclaims);
    assert_true(total > 50);
    assert_true(g_reclaims > 0);
}

/* Grace: no victim had run less than grace, and with a bound on the lost
 * work (preempt_max_lost_s) none had run longer than it. The start of a
 * victim is read back from the scheduler before its STOP reaches the
 * driver: its job info's start_t is that of the run being stopped. */
static double g_grace;
static int g_bad;

static ms_status_t on_plan_grace(void *ctx, const ms_sched_plan_t *p)
{
    env_t *e = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        if (op->kind == MS_OP_STOP && op->job != e->pl.finishing && op->job < MAXJ &&
            !isnan(e->start[op->job]) &&
            (p->now - e->start[op->job] < g_grace ||
             (g_max_lost > 0.0 && p->now - e->start[op->job] > g_max_lost)))
            g_bad++;
    }
    return on_plan(ctx, p);
}

static void test_grace(void **state)
{
    static env_t e;
    long total = 0, bounded = 0;
    int i;

    (void)state;
    for (i = 0; i < 16; i++) {
        wl_t w;
        ms_sched_exec_t ex = { &e, on_plan_grace };

        memset(&w, 0, sizeof(w));
        w.seed = 2000 + (uint64_t)i;
        w.n = 160;
        w.preempt = true;
        w.grace = 150.0;
        w.rate = 0;
        g_grace = w.grace;
        g_max_lost = i >= 8 ? 260.0 : 0.0;   /* durations are 30..430 s */
        g_bad = 0;
        /* run_wl with the grace-checking executor */
        env_make(&e, "n=2xA100-40GB", true, w.grace, 0, 0.0);
        ms_sched_set_exec(e.w.s, &ex);
        {
            ms_rng_t r;
            double now = 0.0;
            int j;

            ms_rng_seed(&r, w.seed);
            for (j = 0; j < w.n; j++) {
                const char *prof = PROF[(int)(ms_rng_unit(&r) * 5)];
                int prio = (int)(ms_rng_unit(&r) * 4);
                double dur = 30.0 + ms_rng_unit(&r) * 400.0;

                now += ms_rng_unit(&r) * 40.0;
                run_until(&e, j, now);
                submit(&e, prof, prio, false, 0, dur, now);
            }
            run_until(&e, w.n, INFINITY);
        }
        assert_int_equal(g_bad, 0);
        check_victims(&e, &w);
        total += e.npre;
        bounded += i >= 8 ? e.npre : 0;
        env_free(&e);
    }
    g_max_lost = 0.0;
    print_message("preemptions with a grace of 150 s: %ld, of them with at most 260 s lost: %ld\n", total,
                  bounded);
    assert_true(total > 10);
    assert_true(bounded > 5);
}

/* With nobody eligible (every job of one priority, no tenants) the plans
 * are those of preemption off, decision for decision. */
static void test_off_identical(void **state)
{
    static env_t a, b;
    int i;

    (void)state;
    for (i = 0; i < 8; i++) {
        wl_t w;

        memset(&w, 0, sizeof(w));
        w.seed = 3000 + (uint64_t)i;
        w.n = 160;
        w.one_prio = true;
        w.grace = 0.0;
        run_wl(&a, &w);
        w.preempt = true;
        run_wl(&b, &w);
        assert_int_equal(b.npre, 0);
        assert_true(a.pl.plans == b.pl.plans);
        env_free(&a);
        env_free(&b);
    }
}

/* Adopt a running job of profile prof at start (as a restart would). */
static int32_t adopt(env_t *e, const char *id, const char *prof, int start, double dur)
{
    ms_sched_req_t rq;
    ms_diag_t dg;
    int32_t slot = ms_sched_next_slot(e->w.s);

    memset(&rq, 0, sizeof(rq));
    rq.id = id;
    rq.profile = prof;
    rq.estimate_s = dur;
    e->dur[slot] = dur;
    ms_diag_clear(&dg);
    if (ms_sched_adopt(e->w.s, 0, ms_geom_profile_find(G, prof), start, &rq, 0.0, &dg) != MS_OK)
        fail_msg("adopt %s: %s", id, dg.msg);
    e->start[slot] = 0.0;
    e->end[slot] = dur;
    return ms_sched_find(e->w.s, id);
}

/* The same properties with op tracking (a service's mode): the victims'
 * STOPs and the preemptor's ops pending until confirmed, a job starting
 * until its START is done; and the memo decides as searching every time
 * (a job that becomes running when its START is confirmed may be a
 * victim: no op of the view marks it). */
static void test_tracked(void **state)
{
    static env_t e, f;
    long total = 0;
    int i;

    (void)state;
    g_track = true;
    for (i = 0; i < 8; i++) {
        wl_t w;

        memset(&w, 0, sizeof(w));
        w.seed = 5000 + (uint64_t)i;
        w.n = 160;
        w.preempt = true;
        w.tenants = i % 2 == 1;
        w.grace = 30.0;
        w.rate = 0;
        run_wl(&e, &w);
        check_victims(&e, &w);
        total += e.npre;
        /* and the same plans as searching every time */
        w.full = true;
        run_wl(&f, &w);
        assert_true(e.pl.plans == f.pl.plans);
        env_free(&f);
        env_free(&e);
    }
    g_track = false;
    print_message("preemptions with tracked ops: %ld\n", total);
    assert_true(total > 10);
}

/* A search that found nothing is not repeated until something changed, a
 * grace period ended or a job past the loss bound reached its next
 * checkpoint: the decisions are those of a scheduler that searches every
 * time (test_full_passes), with fewer searches. */
static void test_memo_same(void **state)
{
    static env_t a, b;
    long sa = 0, sb = 0;
    int i;

    (void)state;
    for (i = 0; i < 16; i++) {
        wl_t w;
        ms_sched_stats_t st;

        /* the second half: jobs that checkpoint every 60 s and victims
         * that may lose at most 40 s (one too long since its checkpoint
         * becomes a victim again at its next one) */
        g_ckpt = i < 8 ? 0.0 : 60.0;
        g_max_lost = i < 8 ? 0.0 : 40.0;
        memset(&w, 0, sizeof(w));
        w.seed = 4000 + (uint64_t)i;
        w.n = 160;
        w.preempt = true;
        w.tenants = i % 2 == 1;
        w.grace = i < 8 ? 200.0 : 0.0;
        w.rate = 2;
        w.full = true;
        run_wl(&a, &w);
        ms_sched_stats(a.w.s, &st);
        sa += st.preempt_searches;
        w.full = false;
        run_wl(&b, &w);
        ms_sched_stats(b.w.s, &st);
        sb += st.preempt_searches;
        assert_true(a.npre > 0);
        assert_int_equal(a.npre, b.npre);
        assert_true(a.pl.plans == b.pl.plans);
        env_free(&a);
        env_free(&b);
    }
    g_ckpt = 0.0;
    g_max_lost = 0.0;
    print_message("victim searches: %ld always, %ld with the memo\n", sa, sb);
    assert_true(sb < sa);
}

/* The geometry: an A100 with a 3g at 0 and 1g at 4, 5, 6 (all priority
 * 0); a 4g of priority 1 can start only at 0, so the 3g goes, however
 * cheap the three 1g would be together (7 - 3 = 4 slices free without
 * them would not do); and the 4g starts there at once. */
static void test_geometry(void **state)
{
    static env_t e;
    ms_sched_job_info_t in;
    int32_t big, h;

    (void)state;
    env_make(&e, "n=1xA100-40GB", true, 0.0, 0, 0.0);
    big = adopt(&e, "big", "3g.20gb", 0, 1000.0);
    adopt(&e, "s4", "1g.5gb", 4, 1000.0);
    adopt(&e, "s5", "1g.5gb", 5, 1000.0);
    adopt(&e, "s6", "1g.5gb", 6, 1000.0);
    assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    h = submit(&e, "4g", 1, false, 0, 100.0, 10.0);
    assert_int_equal(ms_sched_job(e.w.s, h, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);
    assert_int_equal(in.inst[0].start, 0);
    assert_int_equal(e.npre, 1);
    assert_int_equal(e.pre[0].victim, big);
    assert_int_equal(e.pre[0].preemptor, h);
    assert_int_equal(ms_sched_job(e.w.s, big, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    assert_int_equal(in.preemptions, 1);
    assert_true(in.submit_t == 0.0);   /* its wait counts from its submission */
    env_free(&e);
}

/* With tenants the order between them is fair share: a blocked head of a
 * higher priority than the queue's head preempts too. One A100: tenant a
 * ran a 7g for 1000 s (its virtual time far ahead), b runs a short 7g and
 * queues another (b's head first by virtual time, with nobody below its
 * priority 0 to stop); a's 1g of priority 10 stops b's running 7g and
 * starts. (Before, only the head preempted: the 1g waited behind a head
 * that could do nothing, issue 24's seed-3 tail.) */
static void test_outranks_head(void **state)
{
    static env_t e;
    ms_sched_job_info_t in;
    int32_t b1, b2, hi;

    (void)state;
    env_make(&e, "n=1xA100-40GB", true, 0.0, 0, 0.0);
    tenant(&e, "a", 0);
    tenant(&e, "b", 0);
    submit(&e, "7g", 10, false, 1, 1000.0, 0.0);
    run_until(&e, 1, 1000.0);
    b1 = submit(&e, "7g", 0, false, 2, 100.0, 1000.0);
    b2 = submit(&e, "7g", 0, false, 2, 100.0, 1000.5);
    assert_int_equal(ms_sched_job(e.w.s, b2, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    hi = submit(&e, "1g", 10, false, 1, 10.0, 1001.0);
    assert_int_equal(ms_sched_job(e.w.s, hi, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);
    assert_int_equal(e.npre, 1);
    assert_int_equal(e.pre[0].victim, b1);
    assert_int_equal(e.pre[0].preemptor, hi);
    assert_int_equal(ms_sched_job(e.w.s, b1, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    env_free(&e);
}

/* Off (the default): the same 4g waits. */
static void test_default_off(void **state)
{
    static env_t e;
    ms_sched_cfg_t d;
    ms_sched_job_info_t in;
    int32_t h;
    int i;

    (void)state;
    ms_sched_cfg_defaults(&d);
    assert_false(d.preempt);
    env_make(&e, "n=1xA100-40GB", false, 0.0, 0, 0.0);
    for (i = 0; i < 7; i++)
        submit(&e, "1g", 0, false, 0, 1000.0, 0.0);
    h = submit(&e, "4g", 1, false, 0, 100.0, 10.0);
    assert_int_equal(ms_sched_job(e.w.s, h, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    assert_int_equal(e.npre, 0);
    env_free(&e);
}

/* --- the simulator ---------------------------------------------------------- */

static void test_sim_metrics(void **state)
{
    const char *csv = "job_id,arrival_s,profile,duration_s,priority\n"
                      "0,0,7g.40gb,1000,0\n"
                      "1,100,1g.5gb,50,5\n"
                      "2,110,1g.5gb,50,5\n";
    ms_trace_t *tr = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    ms_diag_t dg;
    FILE *f = fmemopen((void *)(uintptr_t)csv, strlen(csv), "r");

    (void)state;
    assert_non_null(f);
    ms_diag_clear(&dg);
    if (ms_trace_read(f, "t.csv", G, &tr, &dg) != MS_OK)
        fail_msg("trace: %s", dg.msg);
    fclose(f);
    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = ms_policy_find("fa");
    cfg.ngpus = 1;
    assert_int_equal(ms_sim_run(&cfg, tr, &m, &dg), MS_OK);
    assert_int_equal(m.preemptions, 0);
    assert_int_equal(m.nprio, 2);
    assert_int_equal(m.prio[0].priority, 5);
    assert_true(m.prio[0].p99_wait_s > 800.0);   /* behind the 7g */
    cfg.sched.preempt = true;
    cfg.sched.preempt_grace_s = 0.0;
    assert_int_equal(ms_sim_run(&cfg, tr, &m, &dg), MS_OK);
    assert_int_equal(m.jobs_completed, 3);
    assert_int_equal(m.preemptions, 1);
    assert_true(fabs(m.lost_work_s - 100.0) < 1e-6);
    assert_true(m.prio[0].p99_wait_s < 20.0);
    /* the 7g ran its full 1000 s after the 1g: the makespan says so */
    assert_true(m.makespan_s >= 1100.0);
    ms_trace_free(tr);
}

int main(void)
{
    int rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry),
        cmocka_unit_test(test_default_off),
        cmocka_unit_test(test_outranks_head),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_grace),
        cmocka_unit_test(test_off_identical),
        cmocka_unit_test(test_memo_same),
        cmocka_unit_test(test_tracked),
        cmocka_unit_test(test_sim_metrics),
    };

    if (ms_geom_create(ms_model_find("A100-40GB"), 0, &G) != MS_OK)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    ms_geom_destroy(G);
    return rc;
}
