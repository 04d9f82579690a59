/* test_preempt_gang.c - preemption of and by gangs (src/sched/preempt_gang.c;
 * docs/tenants.md, "Preemption"):
 *   - minimal: on random small clusters (nodes of 2 to 4 A100s, running
 *     single jobs and gangs of mixed priorities, some nonpreemptible), the
 *     victims of a blocked head (a gang, or a single job) are as few, and
 *     lose as little work, as the cheapest subset of the running jobs
 *     whose stopping gives the head a legal placement (every subset
 *     tried); the head runs after it;
 *   - by hand: a gang head takes a node's one gang rather than another
 *     node's three small jobs; a single head takes a low gang, which frees
 *     every GPU it held;
 *   - random workloads of singles and gangs with preemption on: every
 *     call leaves the scheduler consistent (ms_sched_check), every job
 *     ends done having run its full duration in one piece, and gangs are
 *     both victims and preemptors there; the same plans as a scheduler
 *     that searches at every blocked head (the memo skips only searches
 *     whose answer cannot have changed: gang searches note the first
 *     grace period to end as single ones do).
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
#include "migsched/geometry.h"
#include "migsched/rng.h"
#include "migsched/sched.h"
#include "sched/sched_int.h"   /* test_full_passes: search every time */

static ms_geom_t *G;   /* A100-40GB's default profiles (main) */

#define MAXJ 256
#define HEAD_PRIO 5

static const char *const PROF[] = { "1g", "2g", "3g", "4g", "7g" };

/* The plans' fingerprint of the next make (NULL: none kept). */
static uint64_t *g_plans;

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    uint64_t *h = ctx;
    int i;

    for (i = 0; i < p->n; i++)
        *h = world_fold_op(*h, &p->ops[i].op, p->now);
    return MS_OK;
}

/* rate 1: the victims of one decision, not those of a victim that then
 * preempts a lower job in turn */
static void make(world_t *w, const char *const *nodes, int n, double grace, int rate)
{
    ms_sched_cfg_t cfg;

    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa");
    cfg.preempt = true;
    cfg.preempt_grace_s = grace;
    cfg.preempt_rate = rate;
    if (g_plans != NULL) {
        cfg.exec.ctx = g_plans;
        cfg.exec.plan = on_plan;
    }
    world_make_cfg(w, &cfg, nodes, n);
}

static int32_t submit(world_t *w, const char *prof, int gang, int prio, bool nopre, double dur,
                      double now)
{
    ms_sched_req_t rq;
    ms_diag_t dg;
    int32_t slot;

    memset(&rq, 0, sizeof(rq));
    rq.profile = prof;
    rq.gang = gang;
    rq.priority = prio;
    rq.nonpreemptible = nopre;
    rq.estimate_s = dur;
    rq.duration_s = dur;
    ms_diag_clear(&dg);
    if (ms_sched_submit(w->s, &rq, now, &slot, &dg) != MS_OK)
        fail_msg("submit %s x%d: %s", prof, gang, dg.msg);
    assert_int_equal(ms_sched_check(w->s), MS_OK);
    return slot;
}

static ms_job_state_t state_of(const world_t *w, int32_t slot)
{
    ms_sched_job_info_t in;

    assert_int_equal(ms_sched_job(w->s, slot, &in), MS_OK);
    return in.state;
}

/* --- the exhaustive comparison ------------------------------------------ */

typedef struct run {
    int32_t slot;
    int prio;
    double start;
    int ninst;
    ms_sched_inst_t inst[8];
} run_t;

typedef struct world_case {
    int ngpus, gpn;
    run_t r[MAXJ];
    int nr;
    int e[16];      /* indices into r of the possible victims */
    int ne;
} case_t;

/* Would the head (gang q of whole GPUs, or profile k) have a legal
 * placement with the running jobs of mask rm (bits over c->e) stopped? */
static bool feasible(const case_t *c, uint32_t rm, int q, int k)
{
    bool gone[MAXJ] = { false };
    int i, g, n;

    for (i = 0; i < c->ne; i++)
        if (rm >> i & 1u)
            gone[c->e[i]] = true;
    if (q > 1) {
        for (g = 0; g < c->ngpus; g += c->gpn) {
            int busy[8] = { 0 }, h;

            for (i = 0; i < c->nr; i++)
                for (h = 0; h < c->r[i].ninst; h++)
                    if (!gone[i] && c->r[i].inst[h].gpu >= g && c->r[i].inst[h].gpu < g + c->gpn)
                        busy[c->r[i].inst[h].gpu - g] = 1;
            for (n = 0, h = 0; h < c->gpn; h++)
                n += !busy[h];
            if (n >= q)
                return true;
        }
        return false;
    }
    for (g = 0; g < c->ngpus; g++) {
        ms_state_t st = ms_geom_empty_state();
        int h;

        for (i = 0; i < c->nr; i++)
            for (h = 0; h < c->r[i].ninst; h++)
                if (!gone[i] && c->r[i].inst[h].gpu == g)
                    st = ms_state_place(G, st, c->r[i].inst[h].prof, c->r[i].inst[h].start);
        assert_true(st != MS_STATE_NONE);
        if (ms_state_fit(G, st, k) != 0)
            return true;
    }
    return false;
}

/* The cheapest subset (count, then lost work at now); -1 if none. */
static int cheapest(const case_t *c, int q, int k, double now, double *lost)
{
    uint32_t rm;
    int best = -1;

    *lost = INFINITY;
    for (rm = 0; rm < (1u << c->ne); rm++) {
        int n = __builtin_popcount(rm), i;
        double l = 0.0;

        if (best >= 0 && n > best)
            continue;
        for (i = 0; i < c->ne; i++)
            if (rm >> i & 1u)
                l += now - c->r[c->e[i]].start;
        if (best >= 0 && n == best && l >= *lost)
            continue;
        if (!feasible(c, rm, q, k))
            continue;
        best = n;
        *lost = l;
    }
    return best;
}

/* One random case: true if it was compared (not skipped). */
static bool one_case(uint64_t seed, int *gang_heads, long *gang_victims)
{
    static const char *const N2[] = { "a=2xA100-40GB", "b=2xA100-40GB" };
    static const char *const N4[] = { "a=4xA100-40GB" };
    static const char *const N3[] = { "a=3xA100-40GB", "b=3xA100-40GB" };
    const char *const *nodes;
    world_t w;
    case_t c;
    ms_rng_t r;
    int m, i, nn, q, k, want;
    double now, want_lost, lost = 0.0;
    int32_t head;
    int nv = 0;
    bool compared = false, nopre[MAXJ] = { false };

    ms_rng_seed(&r, seed);
    memset(&c, 0, sizeof(c));
    switch (world_rnd(&r, 3)) {
    case 0: nodes = N2; nn = 2; c.gpn = 2; break;
    case 1: nodes = N4; nn = 1; c.gpn = 4; break;
    default: nodes = N3; nn = 2; c.gpn = 3; break;
    }
    c.ngpus = nn * c.gpn;
    make(&w, nodes, nn, 100.0, 1);
    m = 4 + (int)world_rnd(&r, 12);
    for (i = 0; i < m; i++) {
        static const int PR[] = { 0, 1, 2, 9 };
        bool gang = world_rnd(&r, 10) < 3;
        int gq = gang ? 2 + (int)world_rnd(&r, (uint64_t)c.gpn - 1) : 1;
        const char *p = gang ? "7g" : PROF[world_rnd(&r, 5)];

        int prio = PR[world_rnd(&r, 4)];
        bool np = world_rnd(&r, 10) == 0;

        assert_int_equal(submit(&w, p, gq, prio, np, 1e6, (double)i * 3.0), i);
        nopre[i] = np;
    }
    /* the background that waits goes: only running jobs are in the case */
    for (i = 0; i < m; i++)
        if (state_of(&w, i) == MS_JOB_QUEUED)
            assert_int_equal(ms_sched_cancel(w.s, i, 60.0), MS_OK);
    for (i = 0; i < m; i++) {
        ms_sched_job_info_t in;
        run_t *x = &c.r[c.nr];

        assert_int_equal(ms_sched_job(w.s, i, &in), MS_OK);
        if (in.state != MS_JOB_RUNNING)
            continue;
        x->slot = i;
        x->prio = in.priority;
        x->start = in.start_t;
        x->ninst = in.ninst;
        assert_true(in.ninst <= 8);
        memcpy(x->inst, in.inst, (size_t)in.ninst * sizeof(*x->inst));
        c.nr++;
    }
    /* who may be a victim: below the head's priority, preemptible (the
     * grace of 100 s has passed for all: they started before 50 s) */
    for (i = 0; i < c.nr; i++) {
        if (c.r[i].prio < HEAD_PRIO && !nopre[c.r[i].slot]) {
            if (c.ne == 16)
                goto out;   /* too many to try every subset: skipped */
            c.e[c.ne++] = i;
        }
    }
    now = 150.0 + (double)world_rnd(&r, 100);
    q = world_rnd(&r, 2) == 0 ? 2 + (int)world_rnd(&r, (uint64_t)c.gpn - 1) : 1;
    k = q > 1 ? ms_geom_full_profile(G) : (int)world_rnd(&r, 5);
    if (q == 1)
        k = ms_geom_profile_find(G, PROF[k]);
    if (feasible(&c, 0, q, k))
        goto out;   /* it fits as it is: no preemption to compare */
    want = cheapest(&c, q, k, now, &want_lost);
    head = submit(&w, q > 1 ? "7g" : ms_geom_profile(G, k)->name, q, HEAD_PRIO, false, 10.0, now);
    for (i = 0; i < c.nr; i++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(w.s, c.r[i].slot, &in), MS_OK);
        if (in.preemptions > 0) {
            nv++;
            lost += now - c.r[i].start;
            if (in.gang > 1)
                (*gang_victims)++;
            assert_true(in.priority < HEAD_PRIO);
        }
    }
    if (want < 0) {
        assert_int_equal(nv, 0);
        assert_int_equal(state_of(&w, head), MS_JOB_QUEUED);
    } else {
        if (nv != want || fabs(lost - want_lost) > 1e-6) {
            for (i = 0; i < c.nr; i++) {
                int h;

                fprintf(stderr, "job %d prio %d start %.0f e%d:", c.r[i].slot, c.r[i].prio, c.r[i].start,
                        nopre[c.r[i].slot]);
                for (h = 0; h < c.r[i].ninst; h++)
                    fprintf(stderr, " g%d/%s@%d", c.r[i].inst[h].gpu, ms_geom_profile(G, c.r[i].inst[h].prof)->name,
                            c.r[i].inst[h].start);
                fprintf(stderr, "\n");
            }
            fprintf(stderr, "head q %d k %d\n", q, k);
            fail_msg("seed %llu: %d victims losing %.1f s; the cheapest set: %d losing %.1f s",
                     (unsigned long long)seed, nv, lost, want, want_lost);
        }
        assert_int_equal(state_of(&w, head), MS_JOB_RUNNING);
        *gang_heads += q > 1;
    }
    compared = true;
out:
    world_free(&w);
    return compared;
}

static void test_minimal(void **state)
{
    int i, n = 0, gang_heads = 0;
    long gang_victims = 0;

    (void)state;
    for (i = 0; i < 1500; i++)
        n += one_case(5000 + (uint64_t)i, &gang_heads, &gang_victims);
    print_message("compared %d cases of 1500; gang heads placed %d; gang victims %ld\n", n,
                  gang_heads, gang_victims);
    /* the cases do what they are for */
    assert_true(n > 500);
    assert_true(gang_heads > 50);
    assert_true(gang_victims > 50);
}

/* --- by hand -------------------------------------------------------------- */

/* Node a: three 2g jobs on each of its two GPUs (six victims to empty
 * both); node b: one gang of two (priority 0) on both of its GPUs. A gang
 * of two at priority 1 takes b's gang, one victim, and runs on b. */
static void test_gang_takes_gang(void **state)
{
    static const char *const N[] = { "a=2xA100-40GB", "b=2xA100-40GB" };
    ms_sched_job_info_t in;
    world_t w;
    int32_t low, head;
    int i;

    (void)state;
    make(&w, N, 2, 0.0, 0);
    for (i = 0; i < 6; i++) {
        ms_sched_req_t rq;
        ms_diag_t dg;
        char id[16];

        memset(&rq, 0, sizeof(rq));
        snprintf(id, sizeof(id), "s%d", i);
        rq.id = id;
        rq.profile = "2g";
        rq.estimate_s = 1e6;
        ms_diag_clear(&dg);
        if (ms_sched_adopt(w.s, i / 3, ms_geom_profile_find(G, "2g.10gb"), 2 * (i % 3), &rq, 0.0, &dg) != MS_OK)
            fail_msg("adopt: %s", dg.msg);
    }
    low = submit(&w, "7g", 2, 0, false, 1e6, 0.0);
    assert_int_equal(state_of(&w, low), MS_JOB_RUNNING);
    head = submit(&w, "7g", 2, 1, false, 100.0, 10.0);
    assert_int_equal(ms_sched_job(w.s, head, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);
    assert_int_equal(in.ninst, 2);
    assert_int_equal(in.inst[0].gpu, 2);
    assert_int_equal(in.inst[1].gpu, 3);
    assert_int_equal(ms_sched_job(w.s, low, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    assert_int_equal(in.preemptions, 1);
    for (i = 0; i < 6; i++)
        assert_int_equal(state_of(&w, i), MS_JOB_RUNNING);
    world_free(&w);
}

/* One node of two GPUs held by a gang of priority 0; a 3g of priority 1
 * takes the gang (the only way), and both GPUs are free of it after. */
static void test_single_takes_gang(void **state)
{
    static const char *const N[] = { "a=2xA100-40GB" };
    ms_sched_job_info_t in;
    world_t w;
    int32_t low, head;

    (void)state;
    make(&w, N, 1, 0.0, 0);
    low = submit(&w, "7g", 2, 0, false, 1e6, 0.0);
    head = submit(&w, "3g", 1, 1, false, 100.0, 10.0);
    assert_int_equal(state_of(&w, head), MS_JOB_RUNNING);
    assert_int_equal(ms_sched_job(w.s, low, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    assert_int_equal(in.ninst, 0);
    /* another 3g now fits on the GPU the gang left (no more victims) */
    assert_int_equal(state_of(&w, submit(&w, "4g", 1, 0, false, 100.0, 11.0)), MS_JOB_RUNNING);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    world_free(&w);
}

/* --- random workloads ----------------------------------------------------- */

/* Preemptions by gang heads: calls in which a gang started and a job was
 * preempted (with a gang head blocked, nobody else preempts first: it
 * was the pass's head). */
static long g_by_gang;

static long preemptions(const world_t *w)
{
    ms_sched_stats_t st;

    ms_sched_stats(w->s, &st);
    return st.preemptions;
}

static void note_gang_start(const world_t *w, int n, const bool *was_running, long p0)
{
    int k;

    if (preemptions(w) == p0)
        return;
    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(w->s, k, &in), MS_OK);
        if (in.gang > 1 && in.state == MS_JOB_RUNNING && !was_running[k]) {
            g_by_gang++;
            return;
        }
    }
}

static void running_now(const world_t *w, int n, bool *was)
{
    int k;

    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(w->s, k, &in), MS_OK);
        was[k] = in.state == MS_JOB_RUNNING;
    }
}

/* End, in time order, every running job whose run reaches its duration by
 * t (dur[] by slot). */
static void run_until(world_t *w, int n, const double *dur, double t)
{
    for (;;) {
        int32_t k, best = -1;
        double at = INFINITY;

        for (k = 0; k < n; k++) {
            ms_sched_job_info_t in;

            assert_int_equal(ms_sched_job(w->s, k, &in), MS_OK);
            if (in.state == MS_JOB_RUNNING && in.start_t + dur[k] <= t && in.start_t + dur[k] < at) {
                at = in.start_t + dur[k];
                best = k;
            }
        }
        if (best < 0)
            return;
        {
            bool was[MAXJ];
            long p0 = preemptions(w);

            running_now(w, n, was);
            assert_int_equal(ms_sched_finished(w->s, best, at), MS_OK);
            assert_int_equal(ms_sched_check(w->s), MS_OK);
            note_gang_start(w, n, was, p0);
        }
    }
}

/* One random workload of singles and gangs (seed); full: the scheduler
 * searches for victims at every blocked head (test_full_passes), the
 * oracle of the memo. Adds to *pre, *of_gang; returns the plans'
 * fingerprint, *searches the victim searches. */
static uint64_t run_random(int seed, bool full, long *pre, long *of_gang, long *searches)
{
    static const char *const N[] = { "a=4xA100-40GB", "b=4xA100-40GB", "c=2xA100-40GB" };
    double dur[MAXJ], now = 0.0;
    int prio[MAXJ], gang[MAXJ], n = 120, i;
    uint64_t plans = 1469598103934665603ULL;
    ms_sched_stats_t st;
    world_t w;
    ms_rng_t r;

    ms_rng_seed(&r, 9000 + (uint64_t)seed);
    g_plans = &plans;
    make(&w, N, 3, (double)(seed % 3) * 30.0, seed % 4 == 3 ? 2 : 0);
    g_plans = NULL;
    w.s->test_full_passes = full;
    for (i = 0; i < n; i++) {
        bool was[MAXJ];
        long p0;

        gang[i] = world_rnd(&r, 4) == 0 ? 2 + (int)world_rnd(&r, 3) : 1;
        prio[i] = (int)world_rnd(&r, 4);
        dur[i] = 50.0 + (double)world_rnd(&r, 600);
        now += (double)world_rnd(&r, 40);
        run_until(&w, i, dur, now);
        running_now(&w, i, was);
        was[i] = false;
        p0 = preemptions(&w);
        assert_int_equal(submit(&w, gang[i] > 1 ? "7g" : PROF[world_rnd(&r, 5)], gang[i], prio[i],
                                world_rnd(&r, 10) == 0, dur[i], now), i);
        note_gang_start(&w, i + 1, was, p0);
    }
    run_until(&w, n, dur, INFINITY);
    for (i = 0; i < n; i++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(w.s, i, &in), MS_OK);
        if (in.state != MS_JOB_DONE)
            fail_msg("seed %d: job %d is %s at the end", seed, i, ms_job_state_name(in.state));
        assert_true(fabs(in.end_t - in.start_t - dur[i]) < 1e-6);
        *pre += in.preemptions;
        *of_gang += gang[i] > 1 ? in.preemptions : 0;
    }
    ms_sched_stats(w.s, &st);
    *searches = st.preempt_searches;
    world_free(&w);
    return plans;
}

/* The random workloads; each again with a search at every blocked head:
 * the same plans (the memo skips only searches whose answer cannot have
 * changed, gang searches included). */
static void test_random(void **state)
{
    long pre = 0, of_gang = 0, pre_full = 0, of_full = 0, s_memo = 0, s_full = 0;
    int seed;

    (void)state;
    for (seed = 0; seed < 20; seed++) {
        long a, b;
        uint64_t memo = run_random(seed, false, &pre, &of_gang, &a);
        uint64_t full = run_random(seed, true, &pre_full, &of_full, &b);

        if (memo != full)
            fail_msg("seed %d: the memo's plans differ from searching every time", seed);
        s_memo += a;
        s_full += b;
    }
    print_message("preemptions: %ld, of gangs %ld, by gangs %ld; searches %ld (%ld every time)\n",
                  pre, of_gang, g_by_gang / 2, s_memo, s_full);
    assert_true(pre > 50);
    assert_true(of_gang > 5);
    assert_true(g_by_gang > 10);
    assert_true(pre == pre_full && s_memo <= s_full);
}

int main(void)
{
    int rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_takes_gang),
        cmocka_unit_test(test_single_takes_gang),
        cmocka_unit_test(test_minimal),
        cmocka_unit_test(test_random),
    };

    if (ms_geom_create(ms_model_find("A100-40GB"), 0, &G) != MS_OK)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    ms_geom_destroy(G);
    return rc;
}
