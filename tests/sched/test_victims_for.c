/* test_victims_for.c - ms_sched_victims_for: preemption for a request the
 * scheduler does not queue (migschedd's extender picks pods to evict with
 * it; docs/kubernetes.md, "Preemption").
 *   - by hand: a 4g behind a 3g at 0 and 1g at 4..6 names the 3g and start
 *     0, and changes nothing (the 3g still runs, no plan is sent); the
 *     caller's veto, an equal priority, a node not listed, preemption off
 *     and a gang find nothing; the rate limit counts each choice; with
 *     preempt_requests_only a queued head of higher priority waits;
 *   - properties over random fills of two A100s (jobs of priorities 0..3
 *     submitted highest first, so none is preempted while filling): every
 *     victim runs, on the named GPU, with a priority below the request's,
 *     and is one the veto allows; once the victims are cancelled the
 *     request can be reserved on that node (their removal gives it a legal
 *     placement); and when nothing is named, no single running job of lower
 *     priority on a GPU frees a start (checked by cancelling each in a
 *     copy of the fill: the search missed none of size one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/rng.h"
#include "migsched/sched.h"

#define MAXJ 64

static const char *const PROF[] = { "1g", "2g", "3g", "4g", "7g" };

static ms_status_t no_plan(void *ctx, const ms_sched_plan_t *p)
{
    int *n = ctx;

    (void)p;
    (*n)++;
    return MS_OK;
}

typedef struct world {
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
    int plans;
    int prio[MAXJ];
} world_t;

static void world_make(world_t *w, bool preempt, int rate)
{
    ms_sched_cfg_t cfg;
    ms_diag_t dg;

    memset(w, 0, sizeof(*w));
    assert_int_equal(ms_cluster_spec_create(&w->cs), MS_OK);
    ms_diag_clear(&dg);
    assert_int_equal(ms_cluster_spec_add(w->cs, "n=2xA100-40GB", 0, &dg), MS_OK);
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa+");
    cfg.nodes = ms_cluster_spec_nodes(w->cs);
    cfg.nnodes = ms_cluster_spec_nnodes(w->cs);
    cfg.exec.ctx = &w->plans;
    cfg.exec.plan = no_plan;
    cfg.preempt = preempt;
    cfg.preempt_grace_s = 0.0;
    cfg.preempt_rate = rate;
    ms_diag_clear(&dg);
    if (ms_sched_create(&cfg, 0.0, &w->s, &dg) != MS_OK)
        fail_msg("ms_sched_create: %s", dg.msg);
}

static void world_free(world_t *w)
{
    ms_sched_destroy(w->s);
    ms_cluster_spec_destroy(w->cs);
}

static ms_sched_req_t req_of(const char *prof, int prio)
{
    ms_sched_req_t r;

    memset(&r, 0, sizeof(r));
    r.profile = prof;
    r.priority = prio;
    r.estimate_s = 100.0;
    r.duration_s = 100.0;
    return r;
}

/* Submit; true if it runs (a queued one is cancelled again). */
static bool submit(world_t *w, const char *prof, int prio, int32_t *slot)
{
    ms_sched_req_t r = req_of(prof, prio);
    ms_sched_job_info_t in;
    ms_diag_t dg;

    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_submit(w->s, &r, 1.0, slot, &dg), MS_OK);
    assert_int_equal(ms_sched_job(w->s, *slot, &in), MS_OK);
    if (in.state == MS_JOB_RUNNING) {
        assert_true(*slot < MAXJ);
        w->prio[*slot] = prio;
        return true;
    }
    assert_int_equal(ms_sched_cancel(w->s, *slot, 1.0), MS_OK);
    return false;
}

static int32_t g_veto = -1;

static bool veto_one(void *ctx, int32_t slot)
{
    (void)ctx;
    return slot != g_veto;
}

static const char *const NODE[] = { "n" };

/* Adopt job id of profile prof at start on global GPU gpu, of priority prio (before any
 * submit: the layout is the test's, not the policy's). */
static int32_t adopt(world_t *w, int gpu, const char *id, const char *prof, int start, int prio)
{
    const ms_geom_t *g = NULL;
    ms_sched_req_t r = req_of(prof, prio);
    ms_diag_t dg;

    (void)ms_sched_gpu(w->s, gpu, &g);
    r.id = id;
    ms_diag_clear(&dg);
    if (ms_sched_adopt(w->s, gpu, ms_geom_profile_find(g, prof), start, &r, 0.0, &dg) != MS_OK)
        fail_msg("adopt %s: %s", id, dg.msg);
    return ms_sched_find(w->s, id);
}

static void test_by_hand(void **state)
{
    world_t w;
    ms_sched_preemption_t out;
    ms_sched_req_t r;
    ms_sched_job_info_t in;
    ms_diag_t dg;
    int32_t big;
    const char *other[] = { "nope" };
    int plans;

    (void)state;
    world_make(&w, true, 2);
    big = adopt(&w, 0, "big", "3g.20gb", 0, 0);
    adopt(&w, 0, "s4", "1g.5gb", 4, 0);
    adopt(&w, 0, "s5", "1g.5gb", 5, 0);
    adopt(&w, 0, "s6", "1g.5gb", 6, 0);
    /* the second GPU full with a job the 4g may not preempt */
    adopt(&w, 1, "whole", "7g.40gb", 0, 9);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    plans = w.plans;
    r = req_of("4g", 1);
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 5.0, NULL, NULL, &out, &dg), MS_OK);
    assert_int_equal(out.node, 0);
    assert_int_equal(out.gpu, 0);
    assert_int_equal(out.nvictims, 1);
    assert_int_equal(out.victims[0], big);
    assert_int_equal(out.start, 0);
    assert_int_equal(ms_sched_job(w.s, big, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);   /* nothing changed */
    assert_int_equal(w.plans, plans);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    /* the veto: the 3g may not go, and no set without it frees start 0 */
    g_veto = big;
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 5.0, veto_one, NULL, &out, &dg), MS_ENOFIT);
    g_veto = -1;
    /* the rate limit (2 in 60 s): the first call counted, one more may */
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 6.0, NULL, NULL, &out, &dg), MS_OK);
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 7.0, NULL, NULL, &out, &dg), MS_ENOFIT);
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 66.0, NULL, NULL, &out, &dg), MS_OK);
    /* an equal priority, a node not listed, a gang, no such profile */
    r = req_of("4g", 0);
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 200.0, NULL, NULL, &out, &dg), MS_ENOFIT);
    r = req_of("4g", 1);
    assert_int_equal(ms_sched_victims_for(w.s, &r, other, 1, 200.0, NULL, NULL, &out, &dg), MS_ENOFIT);
    r.gang = 2;
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 200.0, NULL, NULL, &out, &dg), MS_ENOFIT);
    r = req_of("bogus", 1);
    assert_int_not_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 200.0, NULL, NULL, &out, &dg), MS_OK);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    world_free(&w);
    /* preemption off */
    world_make(&w, false, 0);
    adopt(&w, 0, "a", "7g.40gb", 0, 0);
    adopt(&w, 1, "b", "7g.40gb", 0, 0);
    r = req_of("1g", 5);
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 5.0, NULL, NULL, &out, &dg), MS_ENOFIT);
    world_free(&w);
}

/* preempt_requests_only (migschedd --kube): a queued head of higher
 * priority waits, and ms_sched_victims_for still names victims. */
static void test_requests_only(void **state)
{
    world_t w;
    ms_sched_preemption_t out;
    ms_sched_req_t r;
    ms_sched_job_info_t in;
    ms_diag_t dg;
    int32_t a, slot;

    (void)state;
    world_make(&w, true, 0);
    ms_sched_destroy(w.s);
    {
        ms_sched_cfg_t cfg;

        ms_sched_cfg_defaults(&cfg);
        cfg.policy = ms_policy_find("fa+");
        cfg.nodes = ms_cluster_spec_nodes(w.cs);
        cfg.nnodes = ms_cluster_spec_nnodes(w.cs);
        cfg.exec.ctx = &w.plans;
        cfg.exec.plan = no_plan;
        cfg.preempt = true;
        cfg.preempt_requests_only = true;
        cfg.preempt_grace_s = 0.0;
        ms_diag_clear(&dg);
        assert_int_equal(ms_sched_create(&cfg, 0.0, &w.s, &dg), MS_OK);
    }
    a = adopt(&w, 0, "a", "7g.40gb", 0, 0);
    adopt(&w, 1, "b", "7g.40gb", 0, 0);
    r = req_of("1g", 5);
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_submit(w.s, &r, 1.0, &slot, &dg), MS_OK);
    assert_int_equal(ms_sched_job(w.s, slot, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    assert_int_equal(ms_sched_job(w.s, a, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);
    assert_int_equal(ms_sched_tick(w.s, 100.0), MS_OK);
    assert_int_equal(ms_sched_job(w.s, slot, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    assert_int_equal(ms_sched_victims_for(w.s, &r, NODE, 1, 100.0, NULL, NULL, &out, &dg), MS_OK);
    assert_int_equal(out.nvictims, 1);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    world_free(&w);
}

/* Fill w from seed: jobs of priorities 3..0, highest first, until one
 * does not run. */
static void fill(world_t *w, uint64_t seed)
{
    ms_rng_t g;
    int prio, n = 0;
    int32_t slot;

    ms_rng_seed(&g, seed);
    for (prio = 3; prio >= 0; prio--)
        while (n < 40 && submit(w, PROF[ms_rng_below(&g, 5)], prio, &slot))
            n++;
}

/* Does cancelling running job v of w (a copy made from the same seed)
 * let r be reserved on node n? */
static bool one_frees(uint64_t seed, int32_t v, const ms_sched_req_t *r)
{
    world_t c;
    ms_sched_job_info_t in;
    ms_diag_t dg;
    int32_t slot;
    bool ok;

    world_make(&c, true, 0);
    fill(&c, seed);
    assert_int_equal(ms_sched_job(c.s, v, &in), MS_OK);
    assert_int_equal(ms_sched_cancel(c.s, v, 2.0), MS_OK);
    ms_diag_clear(&dg);
    ok = ms_sched_reserve(c.s, r, NODE, 1, 10.0, 2.0, &slot, &dg) == MS_OK;
    world_free(&c);
    return ok;
}

static void test_properties(void **state)
{
    int seed, found = 0, none = 0;

    (void)state;
    for (seed = 1; seed <= 150; seed++) {
        world_t w;
        ms_sched_preemption_t out;
        ms_sched_req_t r = req_of(PROF[seed % 5], 1 + seed % 4);
        ms_sched_job_info_t in;
        ms_diag_t dg;
        int32_t slot, k;
        int i;

        world_make(&w, true, 0);
        fill(&w, (uint64_t)seed);
        ms_diag_clear(&dg);
        if (ms_sched_reserve(w.s, &r, NODE, 1, 10.0, 2.0, &slot, &dg) == MS_OK) {
            world_free(&w);   /* it fits without anyone going */
            continue;
        }
        g_veto = seed % 3 == 0 ? (int32_t)(seed % 7) : -1;
        if (ms_sched_victims_for(w.s, &r, NODE, 1, 2.0, veto_one, NULL, &out, &dg) != MS_OK) {
            /* no single lower-priority job the veto allows frees a start */
            for (k = 0; k < MAXJ; k++)
                if (ms_sched_job(w.s, k, &in) == MS_OK && in.state == MS_JOB_RUNNING &&
                    w.prio[k] < r.priority && k != g_veto)
                    assert_false(one_frees((uint64_t)seed, k, &r));
            none++;
            world_free(&w);
            continue;
        }
        found++;
        assert_true(out.nvictims >= 1);
        for (i = 0; i < out.nvictims; i++) {
            int32_t v = out.victims[i];

            assert_int_equal(ms_sched_job(w.s, v, &in), MS_OK);
            assert_int_equal(in.state, MS_JOB_RUNNING);
            assert_int_equal(in.inst[0].gpu, out.gpu);
            assert_true(w.prio[v] < r.priority);
            assert_true(v != g_veto);
        }
        for (i = 0; i < out.nvictims; i++)
            assert_int_equal(ms_sched_cancel(w.s, out.victims[i], 2.0), MS_OK);
        assert_int_equal(ms_sched_check(w.s), MS_OK);
        ms_diag_clear(&dg);
        assert_int_equal(ms_sched_reserve(w.s, &r, NODE, 1, 10.0, 2.0, &slot, &dg), MS_OK);
        world_free(&w);
    }
    g_veto = -1;
    print_message("victims_for: %d requests given victims, %d none\n", found, none);
    assert_true(found > 20 && none > 5);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_requests_only),
        cmocka_unit_test(test_properties),
    };

    return cmocka_run_group_tests(t, NULL, NULL);
}
