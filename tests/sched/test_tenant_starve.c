/* test_tenant_starve.c - a guarantee is never starved by borrowed work for
 * longer than the grace period (issue 24's required property; docs/tenants.md,
 * "Preemption"), over random workloads driven through ms_sched with
 * --preempt (reclaim at equal priority), a grace G, no rate limit:
 *
 * after every call at time t, no tenant T has a queued job that T could
 * start within its guarantee while some GPU holds only other tenants'
 * jobs that have run for G at least and whose tenants keep their
 * guarantees without them (stopping them all empties the GPU, so the job
 * would have a legal placement there: reclaim was owed and not done).
 *
 * The driver calls ms_sched_tick at each running job's start + G (when it
 * may become a victim), so "longer than the grace period" is checked at the
 * moment it could first be violated.
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

#define MAXJ 400
#define NGPU 4

static const char *const PROF[] = { "1g", "2g", "3g", "4g", "7g" };
static const int SIZE[] = { 1, 2, 3, 4, 7 };
static const char *const TEN[] = { "a", "b", "c" };
static const long GUAR[] = { 14, 7, 0 };

typedef struct job {
    int prof, ten;
    double arrive, dur;
} job_t;

static void make(world_t *w, double grace)
{
    static const char *const N[] = { "n=4xA100-40GB" };
    ms_sched_cfg_t cfg;
    int i;

    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa");
    cfg.preempt = true;
    cfg.preempt_grace_s = grace;
    cfg.preempt_rate = 0;
    world_make_cfg(w, &cfg, N, 1);
    for (i = 0; i < 3; i++) {
        ms_sched_tenant_t t = { TEN[i], 1.0, GUAR[i], -1, 0.0, 0.0, 0, { { NULL, 0, 0, 0 } } };
        ms_diag_t dg;

        ms_diag_clear(&dg);
        if (ms_sched_tenant_set(w->s, &t, NULL, &dg) != MS_OK)
            fail_msg("tenant %s: %s", TEN[i], dg.msg);
    }
}

static long usage_of(const world_t *w, int ten)
{
    ms_sched_tenant_info_t ti;

    assert_int_equal(ms_sched_tenant_info(w->s, ms_sched_tenant_find(w->s, TEN[ten]), &ti), MS_OK);
    return ti.usage;
}

/* Would emptying GPU g be a reclaim owed to tenant t at now? */
static bool owed_on(const world_t *w, const job_t *jobs, int n, int t, int g, double grace,
                    double now)
{
    long take[3] = { 0, 0, 0 };
    int k, u, held = 0;

    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;
        int h;
        bool here = false;

        assert_int_equal(ms_sched_job(w->s, k, &in), MS_OK);
        if (in.state != MS_JOB_RUNNING && in.state != MS_JOB_STARTING)
            continue;
        for (h = 0; h < in.ninst; h++)
            here |= in.inst[h].gpu == g;
        if (!here)
            continue;
        if (jobs[k].ten == t || in.state != MS_JOB_RUNNING || now - in.start_t < grace)
            return false;   /* its own, or not a victim yet */
        take[jobs[k].ten] += SIZE[jobs[k].prof];
        held++;
    }
    if (held == 0)
        return false;   /* not borrowed work's doing */
    for (u = 0; u < 3; u++)
        if (take[u] > 0 && usage_of(w, u) - take[u] < GUAR[u])
            return false;   /* a guarantee is never taken */
    return true;
}

/* What the scheduler holds, for a failure's message. */
static void dump(const world_t *w, const job_t *jobs, int n)
{
    int k, u;

    for (u = 0; u < 3; u++)
        fprintf(stderr, "tenant %s: usage %ld, guarantee %ld\n", TEN[u], usage_of(w, u), GUAR[u]);
    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(w->s, k, &in), MS_OK);
        if (in.state == MS_JOB_DONE)
            continue;
        fprintf(stderr, "job %d %s tenant %s %s start %.0f gpu %d@%d\n", k, PROF[jobs[k].prof],
                TEN[jobs[k].ten], ms_job_state_name(in.state), in.start_t,
                in.ninst > 0 ? in.inst[0].gpu : -1, in.ninst > 0 ? in.inst[0].start : -1);
    }
}

static void check(const world_t *w, const job_t *jobs, int n, double grace, double now,
                  uint64_t seed, long *waits_seen)
{
    int k, g;

    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;
        int t = jobs[k].ten;

        assert_int_equal(ms_sched_job(w->s, k, &in), MS_OK);
        if (in.state != MS_JOB_QUEUED || GUAR[t] == 0 || usage_of(w, t) + SIZE[jobs[k].prof] > GUAR[t])
            continue;
        (*waits_seen)++;
        for (g = 0; g < NGPU; g++)
            if (owed_on(w, jobs, n, t, g, grace, now)) {
                dump(w, jobs, n);
                fail_msg("seed %llu, t=%.3f: job %d (%s of tenant %s, within its guarantee) waits "
                         "while GPU %d holds only borrowed work past its grace",
                         (unsigned long long)seed, now, k, PROF[jobs[k].prof], TEN[t], g);
            }
    }
}

/* The next time after now at which something happens: an arrival, an
 * end, a running job's grace ending. *what: 0 arrival, 1 end (slot in
 * *who), 2 tick. */
static double next_event(const world_t *w, const job_t *jobs, int n, int next_arr, double grace,
                         double now, int *what, int32_t *who)
{
    double best = next_arr < n ? jobs[next_arr].arrive : INFINITY;
    int k;

    *what = 0;
    for (k = 0; k < next_arr; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(w->s, k, &in), MS_OK);
        if (in.state != MS_JOB_RUNNING)
            continue;
        if (in.start_t + jobs[k].dur < best) {
            best = in.start_t + jobs[k].dur;
            *what = 1;
            *who = k;
        }
        if (in.start_t + grace > now && in.start_t + grace < best) {
            best = in.start_t + grace;
            *what = 2;
        }
    }
    return best;
}

static void run_one(uint64_t seed, double grace, long *waits_seen, long *preempted)
{
    job_t jobs[MAXJ];
    world_t w;
    ms_rng_t r;
    double now = 0.0, t = 0.0;
    int n = 200, next_arr = 0, k;

    ms_rng_seed(&r, seed);
    for (k = 0; k < n; k++) {
        uint64_t x = world_rnd(&r, 10);

        t += (double)world_rnd(&r, 60);
        jobs[k].arrive = t;
        jobs[k].ten = x < 4 ? 0 : x < 7 ? 1 : 2;
        jobs[k].prof = (int)world_rnd(&r, 5);
        jobs[k].dur = 50.0 + (double)world_rnd(&r, 550);
    }
    make(&w, grace);
    for (;;) {
        int what;
        int32_t who = -1;
        double at = next_event(&w, jobs, n, next_arr, grace, now, &what, &who);

        if (at == INFINITY)
            break;
        now = at;
        if (what == 0) {
            ms_sched_req_t rq;
            ms_diag_t dg;
            int32_t slot;

            memset(&rq, 0, sizeof(rq));
            rq.profile = PROF[jobs[next_arr].prof];
            rq.tenant = TEN[jobs[next_arr].ten];
            rq.estimate_s = jobs[next_arr].dur;
            rq.duration_s = jobs[next_arr].dur;
            ms_diag_clear(&dg);
            if (ms_sched_submit(w.s, &rq, now, &slot, &dg) != MS_OK)
                fail_msg("submit: %s", dg.msg);
            assert_int_equal(slot, next_arr);
            next_arr++;
        } else if (what == 1) {
            assert_int_equal(ms_sched_finished(w.s, who, now), MS_OK);
        } else {
            assert_int_equal(ms_sched_tick(w.s, now), MS_OK);
        }
        assert_int_equal(ms_sched_check(w.s), MS_OK);
        check(&w, jobs, next_arr, grace, now, seed, waits_seen);
    }
    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(w.s, k, &in), MS_OK);
        assert_int_equal(in.state, MS_JOB_DONE);
        assert_true(fabs(in.end_t - in.start_t - jobs[k].dur) < 1e-6);
        *preempted += in.preemptions;
    }
    world_free(&w);
}

static void test_never_starved(void **state)
{
    long waits = 0, pre = 0;
    int i;

    (void)state;
    for (i = 0; i < 24; i++)
        run_one(7000 + (uint64_t)i, (double)(i % 3) * 60.0, &waits, &pre);
    print_message("within-guarantee waits checked: %ld; preemptions: %ld\n", waits, pre);
    /* the workloads do contend (a property never put to the test proves nothing) */
    assert_true(waits > 1000);
    assert_true(pre > 50);
}

/* Tenant a (guarantee 14) holds the profiles own[0..nown), c (none) the
 * rest of the 4 A100s, all started at 0; at 100 (past the 60 s grace) a
 * asks for a 7g. Its slot. */
static int32_t straddle_world(world_t *w, const char *const *own, int nown, const char *const *cs,
                              int ncs)
{
    int32_t slot;
    int i;

    make(w, 60.0);
    for (i = 0; i < ncs; i++)
        world_submit(w->s, cs[i], "c", NULL, 0, 1000.0, 0.0);
    for (i = 0; i < nown; i++)
        world_submit(w->s, own[i], "a", NULL, 0, 1000.0, 0.0);
    for (i = 0; i < ncs + nown; i++)
        assert_int_equal(world_job_state(w->s, i), MS_JOB_RUNNING);
    assert_int_equal(usage_of(w, 0) + usage_of(w, 2), 28);   /* full: the 7g only by a victim */
    slot = world_submit(w->s, "7g", "a", NULL, 0, 1000.0, 100.0);
    assert_int_equal(ms_sched_check(w->s), MS_OK);
    return slot;
}

/* A head larger than what its tenant is still owed (reclaim-8xA100:
 * ret 6 slices short of 28 with only 7g jobs waiting, borrowed work kept
 * the 6 slices 742 s on seed 4): a at 8 of its 14 asks for a 7g, 15 with
 * it started, 1 over but nearer its guarantee than 6 under, so it
 * reclaims c's borrowed 7g at once; at 11 (3 under) a 7g would take it 4
 * over, farther than it is, so it waits without a preemption. */
static void test_straddle(void **state)
{
    static const char *const near_a[] = { "4g", "3g", "1g" };
    static const char *const near_c[] = { "7g", "7g", "4g", "2g" };
    static const char *const far_a[] = { "4g", "4g", "3g" };
    static const char *const far_c[] = { "7g", "7g", "3g" };
    world_t w;
    int32_t slot;
    int i, stopped = 0;

    (void)state;
    slot = straddle_world(&w, near_a, 3, near_c, 4);
    assert_int_equal(world_job_state(w.s, slot), MS_JOB_RUNNING);
    for (i = 0; i < 4; i++)
        stopped += world_job_state(w.s, i) == MS_JOB_QUEUED;
    assert_int_equal(stopped, 1);   /* one of c's 7gs, the fewest victims */
    assert_int_equal(usage_of(&w, 0), 15);
    assert_int_equal(usage_of(&w, 2), 13);
    world_free(&w);

    slot = straddle_world(&w, far_a, 3, far_c, 3);
    assert_int_equal(world_job_state(w.s, slot), MS_JOB_QUEUED);
    for (i = 0; i < 6; i++)
        assert_int_equal(world_job_state(w.s, i), MS_JOB_RUNNING);
    assert_int_equal(usage_of(&w, 0), 11);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_starved),
        cmocka_unit_test(test_straddle),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
