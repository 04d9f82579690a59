/* test_preempt_move.c - preemption that moves a migratable victim instead
 * of stopping it (cfg.preempt_move; docs/tenants.md, "Preemption"):
 *   - by hand, on two A100-40GB: a 4g.20gb that fits nowhere takes GPU 0
 *     from a low-priority 3g.20gb; with the option the 3g is moved to GPU 1
 *     (a MOVE, never a STOP: the same job, running, never requeued);
 *     without it, or when the 3g is not migratable, it is stopped and
 *     queued again; with GPU 1 full it is stopped even with the option;
 *   - over random workloads on 2 to 4 GPUs (make_room off, so that every MOVE
 *     of a ROOM plan is a preemption's): ms_sched_check after every call, no two
 *     instances of a GPU share a memory slice, no job of a priority >= its
 *     preemptor's is stopped or moved, no victim is moved onto the
 *     preemptor's GPU, every job completes having run its full duration,
 *     and some victims are moved (the property fires);
 *   - with the option on but no job migratable, the plans equal those
 *     with the option off (the regress fixture keeps the rest of today's
 *     schedules: tests/cli/test_regress.sh).
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

static ms_geom_t *G;   /* A100-40GB's default profiles (main) */

#define MAXJ 400

typedef struct env {
    world_t w;                     /* the scheduler and its cluster spec */
    double dur[MAXJ], end[MAXJ], start[MAXJ];
    int prio[MAXJ];
    bool done[MAXJ];
    int stopped[MAXJ], moved[MAXJ];
    world_pre_t pl;                /* the plans' hash, the ops to confirm, the victims */
    int pend_gpu[WORLD_MAXPEND];   /* a victim's destination (pl.pend), -1 stopped */
    long nstops, nmoves;
} env_t;

static void preemptor(env_t *e, const ms_op_t *op)
{
    int k;

    for (k = 0; k < e->pl.npend; k++) {
        int32_t v = e->pl.pend[k];

        if (e->prio[v] >= e->prio[op->job])
            fail_msg("job %d (priority %d) took job %d (priority %d)", (int)op->job,
                     e->prio[op->job], (int)v, e->prio[v]);
        if (e->pend_gpu[k] >= 0 && e->pend_gpu[k] == op->gpu)
            fail_msg("job %d moved onto its preemptor's GPU %d", (int)v, (int)op->gpu);
    }
    e->pl.npend = 0;
}

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    env_t *e = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = world_pre_op(&e->pl, p, i, MAXJ);

        if (op == NULL)
            continue;
        if (op->kind == MS_OP_MOVE && p->kind == MS_PK_ROOM) {
            /* make_room is off: a preemption's (fa's on_finish moves too,
             * in FINISH plans: those are not victims) */
            e->pend_gpu[world_pre_victim(&e->pl, op->job)] = op->gpu;
            e->moved[op->job]++;
            e->nmoves++;
        } else if (op->kind == MS_OP_STOP && op->job != e->pl.finishing) {
            e->pend_gpu[world_pre_victim(&e->pl, op->job)] = -1;
            e->stopped[op->job]++;
            e->nstops++;
            e->end[op->job] = INFINITY;
        } else if (op->kind == MS_OP_START) {
            if (e->pl.npend > 0)
                preemptor(e, op);
            e->start[op->job] = p->now;
            e->end[op->job] = p->now + e->dur[op->job];
        }
    }
    return MS_OK;
}

/* No two instances of a GPU share a memory slice. */
static void no_overlap(const env_t *e)
{
    int g, i;

    for (g = 0; g < ms_sched_ngpus(e->w.s); g++) {
        const ms_geom_t *geom;
        const ms_gpu_t *gpu = ms_sched_gpu(e->w.s, g, &geom);
        uint16_t seen = 0;

        for (i = 0; i < gpu->ninst; i++) {
            uint16_t m = ms_geom_profile_mask(geom, gpu->inst[i].prof, gpu->inst[i].start);

            if (seen & m)
                fail_msg("GPU %d: instance at %d overlaps another", g, (int)gpu->inst[i].start);
            seen |= m;
        }
    }
}

static void settle(env_t *e, double now)
{
    assert_int_equal(ms_sched_check(e->w.s), MS_OK);
    world_pre_confirm(&e->pl, e->w.s, now);
    no_overlap(e);
}

/* The cluster of the next env_make: 0 one node of 2 GPUs, 1 of 3, 2 two
 * nodes of 2 (one group). */
static int g_cluster;

static void env_make(env_t *e, bool move, bool track)
{
    const char *nodes[2] = { g_cluster == 1 ? "n=3xA100-40GB" : "n=2xA100-40GB", "m=2xA100-40GB" };
    ms_sched_cfg_t cfg;
    int i;

    memset(e, 0, sizeof(*e));
    world_pre_init(&e->pl, track);
    for (i = 0; i < MAXJ; i++) {
        e->end[i] = INFINITY;
        e->start[i] = NAN;
    }
    ms_sched_cfg_defaults(&cfg);
    assert_false(cfg.preempt_move);   /* off by default */
    cfg.policy = ms_policy_find("fa");
    cfg.exec.ctx = e;
    cfg.exec.plan = on_plan;
    cfg.no_room = true;   /* every MOVE is a preemption's */
    cfg.preempt = true;
    cfg.preempt_move = move;
    cfg.preempt_grace_s = 0.0;
    cfg.preempt_rate = 0;
    cfg.track_ops = track;
    world_make_cfg(&e->w, &cfg, nodes, g_cluster == 2 ? 2 : 1);
}

static void env_free(env_t *e)
{
    world_free(&e->w);
}

static int32_t submit(env_t *e, const char *prof, int prio, bool mig, double dur, double now)
{
    ms_sched_req_t rq;
    ms_diag_t dg;
    int32_t slot = ms_sched_next_slot(e->w.s);

    assert_true(slot < MAXJ);
    e->dur[slot] = dur;
    e->prio[slot] = prio;
    memset(&rq, 0, sizeof(rq));
    rq.profile = prof;
    rq.priority = prio;
    rq.migratable = mig;
    rq.estimate_s = dur;
    rq.duration_s = dur;
    ms_diag_clear(&dg);
    if (ms_sched_submit(e->w.s, &rq, now, &slot, &dg) != MS_OK)
        fail_msg("submit %s: %s", prof, dg.msg);
    settle(e, now);
    return slot;
}

/* A running job adopted at (gpu, start) at t = 0. */
static int32_t adopt(env_t *e, const char *id, int gpu, const char *prof, int start, int prio,
                     bool mig)
{
    ms_sched_req_t rq;
    ms_diag_t dg;
    int32_t slot = ms_sched_next_slot(e->w.s);

    memset(&rq, 0, sizeof(rq));
    rq.id = id;
    rq.profile = prof;
    rq.priority = prio;
    rq.migratable = mig;
    rq.estimate_s = 1000.0;
    e->dur[slot] = 1000.0;
    e->prio[slot] = prio;
    ms_diag_clear(&dg);
    if (ms_sched_adopt(e->w.s, gpu, ms_geom_profile_find(G, prof), start, &rq, 0.0, &dg) != MS_OK)
        fail_msg("adopt %s: %s", id, dg.msg);
    e->start[slot] = 0.0;
    e->end[slot] = 1000.0;
    return ms_sched_find(e->w.s, id);
}

/* --- by hand ------------------------------------------------------------- */

/* GPU 0: the victim, a low-priority 3g.20gb at start 0 (a 4g.20gb's only
 * start on an A100-40GB; a 3g at start 4 leaves it room), and a
 * high-priority 1g.5gb at 4. GPU 1: a high-priority 2g.10gb at 0 (no 4g
 * there; a 3g fits at 4) or, full, a high-priority 7g. The 4g
 * (priority 5) fits nowhere. */
static void scene(env_t *e, bool move, bool mig, bool full, int32_t *victim, int32_t *head)
{
    env_make(e, move, false);
    *victim = adopt(e, "v", 0, "3g.20gb", 0, 0, mig);
    adopt(e, "hi0", 0, "1g.5gb", 4, 9, true);
    if (full)
        adopt(e, "hi1", 1, "7g.40gb", 0, 9, true);
    else
        adopt(e, "hi1", 1, "2g.10gb", 0, 9, true);
    settle(e, 0.0);
    *head = submit(e, "4g", 5, false, 100.0, 10.0);
}

static void test_moved(void **state)
{
    static env_t e;
    ms_sched_job_info_t in;
    ms_sched_stats_t st;
    ms_sched_tenant_info_t ti;
    int32_t v, h;

    (void)state;
    scene(&e, true, true, false, &v, &h);
    assert_int_equal(ms_sched_job(e.w.s, h, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);
    assert_int_equal(in.inst[0].gpu, 0);
    assert_int_equal(in.inst[0].start, 0);
    assert_int_equal(ms_sched_job(e.w.s, v, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);   /* never stopped, never queued */
    assert_int_equal(in.inst[0].gpu, 1);
    assert_int_equal(in.inst[0].start, 4);
    assert_int_equal(in.preemptions, 0);
    assert_true(in.start_t == 0.0);               /* its run goes on */
    assert_int_equal(e.stopped[v], 0);
    assert_int_equal(e.moved[v], 1);
    /* still charged: 3g + 1g + 2g + the 4g (a stop would leave 7) */
    assert_int_equal(ms_sched_tenant_info(e.w.s, in.tenant, &ti), MS_OK);
    assert_int_equal(ti.usage, 10);
    ms_sched_stats(e.w.s, &st);
    assert_int_equal(st.preemptions, 0);
    assert_int_equal(st.preempt_moves, 1);
    assert_true(st.preempt_lost_s == 0.0);
    env_free(&e);
}

static void test_stopped(void **state)
{
    static env_t e;
    ms_sched_job_info_t in;
    ms_sched_stats_t st;
    int32_t v, h;
    int c;

    (void)state;
    /* 0: the option off; 1: on, the victim not migratable; 2: on, GPU 1 full */
    for (c = 0; c < 3; c++) {
        scene(&e, c != 0, c != 1, c == 2, &v, &h);
        assert_int_equal(ms_sched_job(e.w.s, h, &in), MS_OK);
        assert_int_equal(in.state, MS_JOB_RUNNING);
        assert_int_equal(in.inst[0].gpu, 0);
        assert_int_equal(e.stopped[v], 1);
        assert_int_equal(e.moved[v], 0);
        assert_int_equal(ms_sched_job(e.w.s, v, &in), MS_OK);
        assert_int_equal(in.preemptions, 1);
        /* queued again; with room on GPU 1 it starts there at once, anew */
        assert_int_equal(in.state, c == 2 ? MS_JOB_QUEUED : MS_JOB_RUNNING);
        if (c != 2)
            assert_true(in.start_t == 10.0);
        ms_sched_stats(e.w.s, &st);
        assert_int_equal(st.preemptions, 1);
        assert_int_equal(st.preempt_moves, 0);
        assert_true(fabs(st.preempt_lost_s - 10.0) < 1e-9);
        env_free(&e);
    }
}

/* --- properties ----------------------------------------------------------- */

static const char *const PROF[] = { "1g", "2g", "3g", "4g", "7g" };

/* End every job whose run reaches its duration by t, in time order. */
static void run_until(env_t *e, int n, double t)
{
    for (;;) {
        int32_t k, best = -1;
        double now;

        for (k = 0; k < n; k++)
            if (!e->done[k] && e->end[k] <= t && (best < 0 || e->end[k] < e->end[best]))
                best = k;
        if (best < 0)
            return;
        now = e->end[best];
        e->pl.finishing = best;
        e->done[best] = true;
        e->end[best] = INFINITY;
        assert_int_equal(ms_sched_finished(e->w.s, best, now), MS_OK);
        settle(e, now);
        e->pl.finishing = -1;
    }
}

/* One random workload; mig: the share of migratable jobs. */
static void run_wl(env_t *e, uint64_t seed, bool move, bool track, double mig)
{
    ms_rng_t r;
    double now = 0.0;
    int i, k, n = 160;

    env_make(e, move, track);
    ms_rng_seed(&r, seed);
    for (i = 0; i < n; i++) {
        const char *prof = PROF[ms_rng_unit(&r) < 0.5 ? (int)(ms_rng_unit(&r) * 2) : (int)(ms_rng_unit(&r) * 5)];
        int prio = (int)(ms_rng_unit(&r) * 4);
        bool m = ms_rng_unit(&r) < mig;
        double dur = 30.0 + ms_rng_unit(&r) * 400.0;

        now += ms_rng_unit(&r) * 40.0;
        run_until(e, i, now);
        submit(e, prof, prio, m, dur, now);
    }
    run_until(e, n, INFINITY);
    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(e->w.s, k, &in), MS_OK);
        if (in.state != MS_JOB_DONE)
            fail_msg("seed %llu: job %d is %s at the end", (unsigned long long)seed, k,
                     ms_job_state_name(in.state));
        /* in one piece: a moved job's run went on, a stopped one's began anew */
        assert_true(fabs(in.end_t - in.start_t - e->dur[k]) < 1e-6);
    }
}

static void test_properties(void **state)
{
    static env_t e;
    long moves = 0, stops = 0;
    int i;

    (void)state;
    for (i = 0; i < 24; i++) {
        ms_sched_stats_t st;

        g_cluster = i % 3;
        run_wl(&e, 7000 + (uint64_t)i, true, i % 4 == 1, 0.7);
        ms_sched_stats(e.w.s, &st);
        assert_int_equal(st.preempt_moves, e.nmoves);
        assert_int_equal(st.preemptions, e.nstops);
        moves += e.nmoves;
        stops += e.nstops;
        env_free(&e);
    }
    g_cluster = 0;
    print_message("over 24 workloads: %ld victims moved, %ld stopped\n", moves, stops);
    assert_true(moves > 20);
    assert_true(stops > 20);
}

/* Nothing migratable: the option changes nothing. */
static void test_off_identical(void **state)
{
    static env_t a, b;
    int i;

    (void)state;
    for (i = 0; i < 8; i++) {
        g_cluster = i % 3;
        run_wl(&a, 9000 + (uint64_t)i, false, false, 0.0);
        run_wl(&b, 9000 + (uint64_t)i, true, false, 0.0);
        assert_int_equal(b.nmoves, 0);
        assert_true(a.nstops > 0);
        assert_true(a.pl.plans == b.pl.plans);
        env_free(&a);
        env_free(&b);
    }
    g_cluster = 0;
}

int main(void)
{
    int rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moved),
        cmocka_unit_test(test_stopped),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_off_identical),
    };

    if (ms_geom_create(ms_model_find("A100-40GB"), 0, &G) != MS_OK)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    ms_geom_destroy(G);
    return rc;
}
