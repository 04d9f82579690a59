/* test_cordon.c - GPUs the scheduler must not place on (src/sched/fence.c):
 * a cordoned GPU gets nothing new from any policy, reservation or score
 * while its running jobs go on and leave; uncordoned it is the GPU its own
 * jobs left; GIs held for someone else keep their slices taken; and, under
 * an executor that fails ops, with GPUs cordoned and lifted at random, no
 * plan ever creates, starts or moves onto a cordoned GPU, the invariants
 * hold after every step and, everything settled and lifted, the hardware
 * holds exactly the view's instances.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/rng.h"
#include "migsched/sched.h"
#include "support/sched_world.h"

static const char *const SIZES[] = { "1g", "2g", "3g", "4g", "7g" };

/* Jobs of the caller's (not the fence's) on global GPU g. */
static int own_jobs_on(const ms_sched_t *s, int g)
{
    const ms_gpu_t *gpu = ms_sched_gpu(s, g, NULL);
    ms_sched_fence_t fe;
    int i, n = 0;

    (void)ms_sched_gpu_fenced(s, g, &fe);
    for (i = 0; i < gpu->ninst; i++)
        n += gpu->inst[i].job >= 0 && gpu->inst[i].job != fe.slot;
    return n;
}

static int32_t submit(ms_sched_t *s, const char *profile, int gang, double now)
{
    ms_sched_req_t q;
    int32_t slot = -1;
    ms_diag_t d;

    memset(&q, 0, sizeof(q));
    q.profile = profile;
    q.gang = gang;
    q.migratable = true;
    assert_int_equal(ms_sched_submit(s, &q, now, &slot, &d), MS_OK);
    return slot;
}

/* Every policy, on MIG, time-sliced and whole GPUs: a cordoned GPU gets
 * nothing while others have room, and nothing at all once they are full;
 * uncordoned, it is used again and holds nothing of the fence. */
static void test_cordon_every_policy(void **state)
{
    static const char *const nodes[] = { "a=2xA100-40GB", "t=2xA100-40GB:timeslice=2", "w=2xA30-24GB:whole" };
    int np, p;
    const ms_policy_ops_t *const *all = ms_policies(&np);

    (void)state;
    for (p = 0; p < np; p++) {
        world_t w;
        int g, k, cordoned[] = { 0, 2, 4 };
        double now = 1.0;
        ms_sched_stats_t st;

        world_make_named(&w, all[p]->name, nodes, 3, false, NULL);
        for (k = 0; k < 3; k++)
            assert_int_equal(ms_sched_gpu_cordon(w.s, cordoned[k], true, now), MS_OK);
        assert_int_equal(ms_sched_check(w.s), MS_OK);
        for (k = 0; k < 40; k++) {
            (void)submit(w.s, SIZES[k % 3], 1, now);
            now += 1.0;
            if (ms_sched_check(w.s) != MS_OK)
                fail_msg("%s: invariants broken after submit %d", all[p]->name, k);
        }
        for (k = 0; k < 3; k++)
            if (own_jobs_on(w.s, cordoned[k]) != 0)
                fail_msg("%s: a job was placed on cordoned GPU %d", all[p]->name, cordoned[k]);
        ms_sched_stats(w.s, &st);
        assert_true(st.running > 0);   /* the others took jobs */
        assert_true(st.waiting > 0);   /* and the queue is not served from the cordoned ones */
        for (k = 0; k < 3; k++) {
            ms_sched_fence_t fe;

            assert_int_equal(ms_sched_gpu_cordon(w.s, cordoned[k], false, now), MS_OK);
            assert_false(ms_sched_gpu_fenced(w.s, cordoned[k], &fe));
            assert_false(fe.cordoned);
            assert_int_equal(fe.slot, -1);
        }
        assert_int_equal(ms_sched_tick(w.s, now + 1), MS_OK);   /* a pass */
        assert_int_equal(ms_sched_check(w.s), MS_OK);
        for (g = 0, k = 0; k < 3; k++)
            g += own_jobs_on(w.s, cordoned[k]);
        if (g == 0)
            fail_msg("%s: the uncordoned GPUs took nothing from the queue", all[p]->name);
        world_free(&w);
    }
}

/* A job running on the GPU goes on; when it leaves, the fence takes its
 * slices; uncordoned, the GPU is as its jobs left it (no fill GI). */
static void test_cordon_running_job(void **state)
{
    static const char *const nodes[] = { "a=1xA100-40GB", "b=1xA100-40GB" };
    world_t w;
    int32_t j0, j1;
    const ms_gpu_t *gpu;
    ms_sched_fence_t fe;
    ms_sched_job_info_t ji;

    (void)state;
    world_make_named(&w, "first-fit", nodes, 2, false, NULL);
    j0 = submit(w.s, "3g", 1, 1.0);
    assert_int_equal(ms_sched_job(w.s, j0, &ji), MS_OK);
    assert_int_equal(ji.inst[0].gpu, 0);
    assert_int_equal(ms_sched_gpu_cordon(w.s, 0, true, 2.0), MS_OK);
    assert_true(ms_sched_gpu_fenced(w.s, 0, &fe));
    assert_true(fe.cordoned);
    assert_true(fe.view_only != 0);   /* the free slices are held in the view */
    assert_int_equal(fe.foreign, 0);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    {
        ms_sched_tenant_info_t ti;   /* the fence is no tenant's usage: the 3g's alone */

        assert_int_equal(ms_sched_tenant_info(w.s, 0, &ti), MS_OK);
        assert_int_equal(ti.running, 1);
        assert_int_equal(ti.usage, 3);
    }
    assert_int_equal(ms_sched_job(w.s, j0, &ji), MS_OK);
    assert_int_equal(ji.state, MS_JOB_RUNNING);
    j1 = submit(w.s, "3g", 1, 3.0);
    assert_int_equal(ms_sched_job(w.s, j1, &ji), MS_OK);
    assert_int_equal(ji.inst[0].gpu, 1);   /* first-fit's first GPU is cordoned */
    assert_int_equal(ms_sched_finished(w.s, j0, 4.0), MS_OK);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    assert_int_equal(own_jobs_on(w.s, 0), 0);
    (void)submit(w.s, "1g", 1, 4.5);   /* first-fit would take GPU 0's freed slices */
    assert_int_equal(own_jobs_on(w.s, 0), 0);
    (void)submit(w.s, "7g", 1, 5.0);   /* only GPU 0 could host it: it waits */
    assert_int_equal(own_jobs_on(w.s, 0), 0);
    assert_int_equal(ms_sched_gpu_cordon(w.s, 0, false, 6.0), MS_OK);
    gpu = ms_sched_gpu(w.s, 0, NULL);
    assert_int_equal(gpu->ninst, 0);   /* first-fit destroyed the job's GI; no fill GI is left */
    assert_int_equal(ms_sched_tick(w.s, 7.0), MS_OK);
    assert_int_equal(own_jobs_on(w.s, 0), 1);   /* the 7g */
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    world_free(&w);
}

/* GIs held for another scheduler take their slices; a new list replaces
 * the old one. */
static void test_hold_foreign(void **state)
{
    static const char *const nodes[] = { "a=1xA100-40GB" };
    world_t w;
    const ms_geom_t *geom;
    ms_gi_t held;
    int32_t j3, j7;
    ms_sched_job_info_t ji;

    (void)state;
    world_make_named(&w, "best-fit", nodes, 1, false, NULL);
    (void)ms_sched_gpu(w.s, 0, &geom);
    held.prof = (int8_t)ms_geom_profile_find(geom, "4g.20gb");
    held.start = 0;
    assert_int_equal(ms_sched_gpu_hold(w.s, 0, &held, 1, 1.0), MS_OK);
    {
        ms_sched_fence_t fe;

        assert_true(ms_sched_gpu_fenced(w.s, 0, &fe));
        assert_false(fe.cordoned);
        assert_int_equal(fe.foreign, 1u);   /* the 4g at 0, not in the view alone */
        assert_int_equal(fe.view_only, 0);
    }
    j7 = submit(w.s, "7g", 1, 2.0);
    assert_int_equal(ms_sched_job(w.s, j7, &ji), MS_OK);
    assert_int_equal(ji.state, MS_JOB_QUEUED);
    assert_int_equal(ms_sched_cancel(w.s, j7, 2.5), MS_OK);
    j3 = submit(w.s, "3g", 1, 3.0);
    assert_int_equal(ms_sched_job(w.s, j3, &ji), MS_OK);
    assert_int_equal(ji.state, MS_JOB_RUNNING);
    assert_int_equal(ji.inst[0].start, 4);   /* beside the held 4g */
    assert_int_equal(ms_sched_gpu_hold(w.s, 0, NULL, 0, 4.0), MS_OK);
    assert_false(ms_sched_gpu_fenced(w.s, 0, NULL));
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    held.start = 1;   /* not a legal start of 4g */
    assert_int_equal(ms_sched_gpu_hold(w.s, 0, &held, 1, 5.0), MS_EINVAL);
    assert_int_equal(ms_sched_gpu_cordon(w.s, 9, true, 5.0), MS_EINVAL);
    world_free(&w);
}

/* --- under a failing executor, with cordons coming and going ------------- */

typedef struct fake_exec {
    ms_sched_op_t *q;
    size_t head, n, cap;
    const ms_sched_t *s;       /* set once created */
    int bad;                   /* plans that placed onto a cordoned GPU */
} fake_exec_t;

static ms_status_t fake_plan(void *ctx, const ms_sched_plan_t *p)
{
    fake_exec_t *f = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;
        ms_sched_fence_t fe;

        fe.cordoned = false;
        if (f->s != NULL && (op->kind == MS_OP_CREATE || op->kind == MS_OP_START || op->kind == MS_OP_MOVE))
            (void)ms_sched_gpu_fenced(f->s, op->gpu, &fe);
        f->bad += fe.cordoned;
        if (f->n == f->cap) {
            f->cap = f->cap ? f->cap * 2 : 256;
            f->q = realloc(f->q, f->cap * sizeof(*f->q));
            assert_non_null(f->q);
        }
        f->q[f->n++] = p->ops[i];
    }
    return MS_OK;
}

static void run_failing(const char *policy, uint64_t seed)
{
    static const char *const nodes[] = { "a=2xA100-40GB", "b=1xH100-80GB", "c=2xA100-40GB:timeslice=2" };
    fake_exec_t f;
    ms_sched_exec_t ex;
    world_t w;
    hw_t h;
    ms_rng_t r;
    double now = 0.0;
    int step, g;
    int32_t live[512];
    int nlive = 0, ncordon = 0;

    memset(&f, 0, sizeof(f));
    ex.ctx = &f;
    ex.plan = fake_plan;
    world_make_named(&w, policy, nodes, 3, true, &ex);
    f.s = w.s;
    hw_make(&h, w.s);
    ms_rng_seed(&r, seed);
    for (step = 0; step < 500 || f.head < f.n; step++) {
        uint64_t a = world_rnd(&r, 12);

        now += 0.5;
        if (step < 500 && a < 3 && nlive < 500) {
            ms_sched_req_t q;
            int32_t slot;
            ms_diag_t d;

            memset(&q, 0, sizeof(q));
            q.profile = SIZES[world_rnd(&r, 5)];
            q.migratable = true;
            if (ms_sched_submit(w.s, &q, now, &slot, &d) == MS_OK)
                live[nlive++] = slot;
        } else if (step < 500 && a < 5 && nlive > 0) {
            int i = (int)world_rnd(&r, (uint64_t)nlive);
            ms_sched_job_info_t ji;

            assert_int_equal(ms_sched_job(w.s, live[i], &ji), MS_OK);
            if (ji.state == MS_JOB_RUNNING || ji.state == MS_JOB_QUEUED) {
                assert_int_equal(ms_sched_finished(w.s, live[i], now), MS_OK);
                live[i] = live[--nlive];
            }
        } else if (step < 500 && a == 5) {
            int gg = (int)world_rnd(&r, (uint64_t)ms_sched_ngpus(w.s));
            ms_sched_fence_t fe;

            (void)ms_sched_gpu_fenced(w.s, gg, &fe);
            assert_int_equal(ms_sched_gpu_cordon(w.s, gg, !fe.cordoned, now), MS_OK);
            ncordon++;
        } else if (f.head < f.n) {
            ms_sched_op_t q = f.q[f.head++];

            if (world_rnd(&r, 5) == 0 && q.op.kind != MS_OP_STOP && q.op.kind != MS_OP_DESTROY) {
                size_t k, before = f.n;

                assert_int_equal(ms_sched_op_failed(w.s, q.id, now), MS_OK);
                for (k = f.head; k < before; k++)   /* the contract: the rest is dropped */
                    f.q[k].id = 0;
            } else {
                hw_apply(&h, w.s, &q.op);
                assert_int_equal(ms_sched_op_done(w.s, q.id, now), MS_OK);
            }
            while (f.head < f.n && f.q[f.head].id == 0)
                f.head++;
        }
        if (f.bad != 0)
            fail_msg("%s seed %llu step %d: a plan placed onto a cordoned GPU", policy, (unsigned long long)seed,
                     step);
        if (ms_sched_check(w.s) != MS_OK)
            fail_msg("%s seed %llu step %d: invariants broken", policy, (unsigned long long)seed, step);
    }
    assert_true(ncordon > 5);
    for (g = 0; g < ms_sched_ngpus(w.s); g++)
        assert_int_equal(ms_sched_gpu_cordon(w.s, g, false, now), MS_OK);
    assert_int_equal(ms_sched_pending(w.s), 0);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    for (g = 0; g < ms_sched_ngpus(w.s); g++) {
        int grp, local;
        const ms_gpu_t *v = ms_sched_gpu(w.s, g, NULL), *hg;

        ms_sched_gpu_where(w.s, g, NULL, &grp, &local);
        hg = &h.c[grp]->gpus[local];
        if (v->state != hg->state || v->ninst != hg->ninst)
            fail_msg("%s seed %llu: GPU %d differs from the hardware (%d vs %d instances)", policy,
                     (unsigned long long)seed, g, v->ninst, hg->ninst);
    }
    hw_free(&h);
    free(f.q);
    world_free(&w);
}

static void test_cordon_under_failures(void **state)
{
    const char *pols[] = { "first-fit", "best-fit", "fa", "fa+", "static", "mfi", "fgd", "node-profile" };
    size_t p;
    uint64_t seed;

    (void)state;
    for (p = 0; p < sizeof(pols) / sizeof(pols[0]); p++)
        for (seed = 1; seed <= 5; seed++)
            run_failing(pols[p], seed * 104729u + p);
}

/* EASY: a 7g that waits reserves a GPU that will free up, never a cordoned
 * one, and the reservation never starts it there. */
static void test_cordon_easy(void **state)
{
    static const char *const nodes[] = { "a=2xA100-40GB" };
    world_t w;
    int32_t head, slot, j;
    double t;
    ms_sched_job_info_t ji;

    (void)state;
    world_make_named(&w, "first-fit", nodes, 1, false, NULL);
    j = submit(w.s, "3g", 1, 1.0);           /* GPU 0 */
    (void)submit(w.s, "3g", 1, 1.0);          /* GPU 0 */
    (void)submit(w.s, "3g", 1, 1.0);          /* GPU 1 */
    assert_int_equal(ms_sched_gpu_cordon(w.s, 1, true, 2.0), MS_OK);
    head = submit(w.s, "7g", 1, 3.0);
    assert_int_equal(ms_sched_finished(w.s, j, 10000.0), MS_OK);   /* past the bound; a pass */
    slot = submit(w.s, "1g", 1, 10001.0);
    assert_int_equal(ms_sched_job(w.s, head, &ji), MS_OK);
    assert_int_equal(ji.state, MS_JOB_QUEUED);
    if (ms_sched_head_reservation(w.s, &j, &t) == MS_OK) {
        assert_int_equal(j, head);
        assert_true(t < 1e300);   /* on GPU 0, whose jobs end; never the fence's */
    }
    assert_int_equal(ms_sched_job(w.s, slot, &ji), MS_OK);
    if (ji.ninst > 0)
        assert_int_equal(ji.inst[0].gpu, 0);
    assert_int_equal(own_jobs_on(w.s, 1), 1);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cordon_every_policy),
        cmocka_unit_test(test_cordon_running_job),
        cmocka_unit_test(test_hold_foreign),
        cmocka_unit_test(test_cordon_under_failures),
        cmocka_unit_test(test_cordon_easy),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
