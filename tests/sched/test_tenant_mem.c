/* test_tenant_mem.c - a tenant's memory limit (ms_sched_tenant_t.mem_limit_gb;
 * docs/tenants.md, "Quotas"): memory GB its live jobs may hold, beside the
 * limit in compute slices.
 *   - by hand, on one A100-40GB: with mem-limit 20 a 3g.20gb runs, then a
 *     1g.5gb of the same tenant waits although the GPU has room, while a
 *     later 1g of another tenant runs; when the 3g ends the waiting 1g
 *     runs; raising the limit (the tenant declared again) lets a held job
 *     start at the next event; a bad limit is refused naming mem-limit;
 *   - property, random workloads of three tenants with random memory
 *     limits on 3 A100s (jobs of every profile, cancels, ends): after every
 *     call each tenant's memory (a scan of its running jobs) is at most its
 *     limit and equals what ms_sched_tenant_info says, every job that was
 *     not cancelled runs in the end, and the limits were reached;
 *   - the option: mem-limit=GB parsed, a bad value names the option;
 *   - ms_sched_tenant_check(_slot): a job over the limit on every GPU.
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

#define MAXJ 400

static ms_status_t no_plan(void *ctx, const ms_sched_plan_t *p)
{
    (void)ctx;
    (void)p;
    return MS_OK;
}

typedef struct env {
    world_t w;                     /* the scheduler and its cluster spec */
} env_t;

static void env_make(env_t *e, const char *node)
{
    ms_sched_cfg_t cfg;

    memset(e, 0, sizeof(*e));
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa+");
    cfg.exec.plan = no_plan;
    world_make_cfg(&e->w, &cfg, &node, 1);
}

static void env_free(env_t *e)
{
    world_free(&e->w);
}

static ms_status_t tenant(env_t *e, const char *name, double mem_limit, ms_diag_t *dg)
{
    ms_sched_tenant_t t = { name, 1.0, 0, -1, mem_limit, 0.0, 0, { { NULL, 0, 0, 0 } } };

    ms_diag_clear(dg);
    return ms_sched_tenant_set(e->w.s, &t, NULL, dg);
}

static int32_t submit(env_t *e, const char *prof, const char *ten, double now)
{
    return world_submit(e->w.s, prof, ten, NULL, 0, 100.0, now);
}

static ms_job_state_t job_state(const env_t *e, int32_t slot)
{
    ms_sched_job_info_t in;

    assert_int_equal(ms_sched_job(e->w.s, slot, &in), MS_OK);
    return in.state;
}

static void test_by_hand(void **state)
{
    env_t e;
    ms_diag_t dg;
    ms_sched_tenant_info_t in;
    int32_t big, small, other;

    (void)state;
    env_make(&e, "n=1xA100-40GB");
    assert_int_equal(tenant(&e, "a", 20.0, &dg), MS_OK);
    assert_int_equal(tenant(&e, "b", 0.0, &dg), MS_OK);
    assert_int_equal(tenant(&e, "c", -1.0, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "mem-limit");
    assert_int_equal(tenant(&e, "c", NAN, &dg), MS_EINVAL);
    big = submit(&e, "3g.20gb", "a", 0.0);
    assert_int_equal(job_state(&e, big), MS_JOB_RUNNING);
    small = submit(&e, "1g.5gb", "a", 1.0);
    assert_int_equal(job_state(&e, small), MS_JOB_QUEUED);   /* 25 GB > 20: held back */
    other = submit(&e, "1g.5gb", "b", 2.0);
    assert_int_equal(job_state(&e, other), MS_JOB_RUNNING);  /* another tenant passes it */
    assert_int_equal(ms_sched_tenant_info(e.w.s, ms_sched_tenant_find(e.w.s, "a"), &in), MS_OK);
    assert_true(fabs(in.mem_gb - 20.0) < 1e-9 && in.mem_limit_gb == 20.0);
    assert_int_equal(ms_sched_finished(e.w.s, big, 100.0), MS_OK);
    assert_int_equal(job_state(&e, small), MS_JOB_RUNNING);
    /* a second 3g of a waits (5 + 20 > 20) until the limit is raised */
    big = submit(&e, "3g.20gb", "a", 101.0);
    assert_int_equal(job_state(&e, big), MS_JOB_QUEUED);
    assert_int_equal(tenant(&e, "a", 25.0, &dg), MS_OK);
    assert_int_equal(ms_sched_tick(e.w.s, 102.0), MS_OK);
    assert_int_equal(job_state(&e, big), MS_JOB_RUNNING);
    assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    env_free(&e);
}

/* Each tenant's memory by a scan of its live jobs. */
static void scan_mem(const env_t *e, double *mem, int n)
{
    int32_t k;
    int i;

    for (i = 0; i < n; i++)
        mem[i] = 0.0;
    for (k = 0; k < ms_sched_slots(e->w.s); k++) {
        ms_sched_job_info_t ji;

        if (ms_sched_job(e->w.s, k, &ji) != MS_OK ||
            (ji.state != MS_JOB_RUNNING && ji.state != MS_JOB_STARTING) || ji.tenant < 0 || ji.tenant >= n)
            continue;
        for (i = 0; i < ji.ninst; i++) {
            const ms_geom_t *g = NULL;

            (void)ms_sched_gpu(e->w.s, ji.inst[i].gpu, &g);
            mem[ji.tenant] += ms_geom_profile_mem_gb(g, ji.inst[i].prof);
        }
    }
}

static void check_mem(const env_t *e, const double *limit, double *peak)
{
    double scan[8];
    int t, n = ms_sched_ntenants(e->w.s);

    assert_true(n <= 8);
    scan_mem(e, scan, n);
    for (t = 0; t < n; t++) {
        ms_sched_tenant_info_t in;

        assert_int_equal(ms_sched_tenant_info(e->w.s, t, &in), MS_OK);
        assert_true(fabs(in.mem_gb - scan[t]) < 1e-3);
        if (limit[t] > 0.0 && scan[t] > limit[t] + 1e-6)
            fail_msg("tenant %s holds %.1f GB, its limit is %.1f", in.name, scan[t], limit[t]);
        if (scan[t] > peak[t])
            peak[t] = scan[t];
    }
}

static void one_run(uint64_t seed, double *reached)
{
    static const char *const SIZES[] = { "1g", "2g", "3g", "4g", "7g" };
    static const char *const NAMES[] = { "t0", "t1", "t2" };
    env_t e;
    ms_rng_t r;
    ms_diag_t dg;
    double limit[8] = { 0 }, peak[8] = { 0 }, dur[MAXJ], start[MAXJ], t = 0.0;
    int32_t slot[MAXJ];
    int n, j, k, done = 0;

    env_make(&e, "n=3xA100-40GB");
    ms_rng_seed(&r, seed);
    for (k = 0; k < 3; k++) {
        /* 40..75 GB: a 7g.40gb can always run once its tenant holds nothing */
        limit[k + 1] = 40.0 + 5.0 * (double)ms_rng_below(&r, 8);
        assert_int_equal(tenant(&e, NAMES[k], limit[k + 1], &dg), MS_OK);
    }
    n = 150 + (int)ms_rng_below(&r, 100);
    for (j = 0; j < n; j++) {
        const char *ten = ms_rng_below(&r, 4) == 0 ? NULL : NAMES[ms_rng_below(&r, 3)];

        t += floor(ms_rng_unit(&r) * 30.0);
        slot[j] = submit(&e, SIZES[ms_rng_below(&r, 5)], ten, t);
        dur[j] = 50.0 + floor(ms_rng_unit(&r) * 600.0);
        start[j] = job_state(&e, slot[j]) == MS_JOB_RUNNING ? t : NAN;
        check_mem(&e, limit, peak);
        if (ms_rng_below(&r, 10) == 0) {   /* now and then one leaves early */
            int v = (int)ms_rng_below(&r, (uint64_t)j + 1);
            ms_job_state_t st = job_state(&e, slot[v]);

            if (st == MS_JOB_QUEUED || st == MS_JOB_RUNNING) {
                assert_int_equal(ms_sched_cancel(e.w.s, slot[v], t), MS_OK);
                check_mem(&e, limit, peak);
            }
        }
        for (k = 0; k <= j; k++) {
            ms_job_state_t st = job_state(&e, slot[k]);

            if (st == MS_JOB_RUNNING && isnan(start[k]))
                start[k] = t;   /* it started at an earlier event */
            if (st == MS_JOB_RUNNING && start[k] + dur[k] <= t) {
                assert_int_equal(ms_sched_finished(e.w.s, slot[k], t), MS_OK);
                check_mem(&e, limit, peak);
            }
        }
        assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    }
    /* drain: every job not cancelled runs in the end */
    for (k = 0; k < 100000 && done < n; k++) {
        done = 0;
        t += 100.0;
        for (j = 0; j < n; j++) {
            ms_job_state_t st = job_state(&e, slot[j]);

            if (st == MS_JOB_RUNNING)
                assert_int_equal(ms_sched_finished(e.w.s, slot[j], t), MS_OK);
            else if (st != MS_JOB_QUEUED)
                done++;
            check_mem(&e, limit, peak);
        }
    }
    assert_int_equal(done, n);
    for (k = 1; k < 4; k++)
        if (peak[k] >= limit[k] - 5.0)
            reached[k]++;
    env_free(&e);
}

/* ms_sched_tenant_check: a job within its tenant's memory limit alone
 * passes; one larger on every GPU is MS_ENOFIT naming the tenant, the
 * limit and the need, by request and by slot (it is still queued: the
 * scheduler runs what it is given), and not with the limit raised. */
static void test_check(void **state)
{
    ms_sched_req_t r;
    ms_diag_t dg;
    env_t e;
    int32_t slot;

    (void)state;
    env_make(&e, "a=1xA100-40GB");
    assert_int_equal(tenant(&e, "m", 10.0, &dg), MS_OK);
    memset(&r, 0, sizeof(r));
    r.tenant = "m";
    r.profile = "2g.10gb";
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_tenant_check(e.w.s, &r, &dg), MS_OK);
    r.profile = "3g.20gb";
    assert_int_equal(ms_sched_tenant_check(e.w.s, &r, &dg), MS_ENOFIT);
    assert_string_equal(dg.field, "tenant");
    assert_non_null(strstr(dg.msg, "tenant 'm' may hold 10 GB (mem-limit) and the job needs 20 GB"));
    slot = submit(&e, "3g.20gb", "m", 0.0);
    assert_int_equal(job_state(&e, slot), MS_JOB_QUEUED);
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_tenant_check_slot(e.w.s, slot, &dg), MS_ENOFIT);
    assert_non_null(strstr(dg.msg, "needs 20 GB"));
    assert_int_equal(tenant(&e, "m", 20.0, &dg), MS_OK);
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_tenant_check_slot(e.w.s, slot, &dg), MS_OK);
    env_free(&e);
}

static void test_property(void **state)
{
    double reached[8] = { 0 };
    uint64_t seed;

    (void)state;
    for (seed = 1; seed <= 10; seed++)
        one_run(seed, reached);
    /* the property had something to hold: tenants came near their limits */
    assert_true(reached[1] >= 5 && reached[2] >= 5 && reached[3] >= 5);
}

static void test_option(void **state)
{
    ms_sim_cfg_t c;
    ms_opt_target_t t;
    ms_diag_t dg;
    static const char *const BAD[] = { "a:mem-limit=-1", "a:mem-limit=x", "a:mem-limit=2e9", "a:mem-limit=" };
    size_t i;

    (void)state;
    ms_sim_cfg_defaults(&c);
    t = ms_opt_target_sim(&c);
    ms_diag_clear(&dg);
    assert_int_equal(ms_opt_set(&t, "tenant", "a:limit=10,mem-limit=40.5", &dg), MS_OK);
    assert_int_equal(c.tenants.n, 1);
    assert_true(c.tenants.t[0].mem_limit_gb == 40.5 && c.tenants.t[0].limit == 10);
    assert_int_equal(ms_opt_set(&t, "tenant", "b", &dg), MS_OK);
    assert_true(c.tenants.t[1].mem_limit_gb == 0.0);
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        ms_diag_clear(&dg);
        assert_int_not_equal(ms_opt_set(&t, "tenant", BAD[i], &dg), MS_OK);
        assert_string_equal(dg.field, "tenant");
        assert_non_null(strstr(dg.msg, "mem-limit"));
    }
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_property),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_option),
    };

    return cmocka_run_group_tests(t, NULL, NULL);
}
