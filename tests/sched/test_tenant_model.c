/* test_tenant_model.c - a tenant's per GPU model limits
 * (ms_sched_tenant_t.model_limits, limit@MODEL=S; docs/tenants.md): a job
 * is never started on a GPU of a limited model if its tenant's jobs on
 * GPUs of that model would then hold more compute slices than the limit.
 *   - by hand, one A100-40GB and one H100-80GB: a tenant with
 *     limit@H100-80GB=3 holding 3 slices on the H100 gets its next job on
 *     the A100 (the H100 has room), waits without blocking another
 *     tenant when the A100 is full, and a job constrained to H100 waits
 *     until its tenant's H100 job ends; one that could never start is
 *     reported (ms_sched_tenant_check) naming limit@H100-80GB;
 *   - validation: an unknown model, -1, 2e9, a model twice (by an alias
 *     too), more than 8 refused naming the model; info reports limits and
 *     usage; the option parses and refuses alike (guarantee@MODEL's
 *     refusals too: one parser, test_tenant_mguar.c has the rest);
 *   - properties over random workloads on 2xA100-40GB + 2xH100-80GB with
 *     random per model limits: ms_sched_check (the usage per model by a
 *     scan) holds after every call, each tenant's usage on each limited
 *     model by a scan of its live jobs never exceeds the limit and equals
 *     info's, every job ends done or was reported as never able to start;
 *     and limits that never bind (none, one on a model the cluster lacks,
 *     1e9) give the plans of tenants declared without the field.
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
    bool done[MAXJ], never[MAXJ];
    uint64_t plans;                /* a hash of every plan, in order */
} env_t;

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    env_t *e = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        e->plans = world_fold_op(e->plans, op, p->now);
        if (op->kind == MS_OP_START && op->job >= 0 && op->job < MAXJ && e->never[op->job])
            fail_msg("job %d, reported as never able to start, started", op->job);
        if (op->kind == MS_OP_START && op->job >= 0 && op->job < MAXJ && !isfinite(e->end[op->job]))
            e->end[op->job] = p->now + e->dur[op->job];
    }
    return MS_OK;
}

static void env_make(env_t *e, int per_node)
{
    ms_sched_cfg_t cfg;
    int i;

    memset(e, 0, sizeof(*e));
    e->plans = 1469598103934665603ULL;
    for (i = 0; i < MAXJ; i++)
        e->end[i] = INFINITY;
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa+");
    cfg.exec.ctx = e;
    cfg.exec.plan = on_plan;
    world_make_a100_h100(&e->w, &cfg, per_node);
}

static void env_free(env_t *e)
{
    world_free(&e->w);
}

/* Tenant name with n per model limits (models[i], lim[i]). */
static ms_status_t tenant(env_t *e, const char *name, int n, const char *const *models,
                          const long *lim, ms_diag_t *dg)
{
    ms_sched_tenant_t t;
    int i;

    memset(&t, 0, sizeof(t));
    t.name = name;
    t.weight = 1.0;
    t.limit = -1;
    t.nmodel_limits = n;
    for (i = 0; i < n && i < MS_TENANT_MAX_MODEL_LIMITS; i++) {
        t.model_limits[i].model = models[i];
        t.model_limits[i].limit = lim[i];
    }
    ms_diag_clear(dg);
    return ms_sched_tenant_set(e->w.s, &t, NULL, dg);
}

static ms_sched_req_t req_of(const char *prof, const char *ten, const char *model, double dur)
{
    ms_sched_req_t r;

    memset(&r, 0, sizeof(r));
    r.profile = prof;
    r.tenant = ten;
    r.model = model;
    r.estimate_s = dur;
    r.duration_s = dur;
    return r;
}

static int32_t submit(env_t *e, const char *prof, const char *ten, const char *model, double dur,
                      double now)
{
    int32_t slot = ms_sched_next_slot(e->w.s);

    assert_true(slot >= 0 && slot < MAXJ);
    e->dur[slot] = dur;
    return world_submit(e->w.s, prof, ten, model, 0, dur, now);
}

static void finish(env_t *e, int32_t slot, double now)
{
    e->done[slot] = true;
    e->end[slot] = INFINITY;
    assert_int_equal(ms_sched_finished(e->w.s, slot, now), MS_OK);
    assert_int_equal(ms_sched_check(e->w.s), MS_OK);
}

/* Tenant name's usage on model by info ( -1: no limit on it). */
static long info_usage(const env_t *e, const char *name, const char *model)
{
    ms_sched_tenant_info_t in;
    int i;

    assert_int_equal(ms_sched_tenant_info(e->w.s, ms_sched_tenant_find(e->w.s, name), &in), MS_OK);
    for (i = 0; i < in.nmodel_limits; i++)
        if (strcmp(in.model_limits[i].model, model) == 0)
            return in.model_limits[i].usage;
    return -1;
}

/* --- by hand ------------------------------------------------------------ */

static void test_by_hand(void **state)
{
    static const char *const H[] = { "H100-80GB" };
    static const long L3[] = { 3 }, L2[] = { 2 };
    env_t e;
    ms_diag_t dg;
    ms_sched_req_t r;
    int32_t o1, j1, j2, j3, o2, j4;

    (void)state;
    env_make(&e, 1);
    assert_int_equal(tenant(&e, "T", 1, H, L3, &dg), MS_OK);
    assert_int_equal(tenant(&e, "O", 0, NULL, NULL, &dg), MS_OK);
    /* O's 4g fills 4 of the A100's 7 slices; T's 3g on the H100 takes T
     * to its H100 limit */
    o1 = submit(&e, "4g", "O", "A100-40GB", 1000.0, 0.0);
    j1 = submit(&e, "3g", "T", "H100-80GB", 1000.0, 1.0);
    assert_int_equal(world_job_state(e.w.s, j1), MS_JOB_RUNNING);
    assert_string_equal(world_job_model(e.w.s, j1), "H100-80GB");
    assert_int_equal(info_usage(&e, "T", "H100-80GB"), 3);
    /* T's next 3g, any model: the H100 has room (4 slices), T's limit
     * keeps it off; it goes on the A100 */
    j2 = submit(&e, "3g", "T", NULL, 1000.0, 2.0);
    assert_int_equal(world_job_state(e.w.s, j2), MS_JOB_RUNNING);
    assert_string_equal(world_job_model(e.w.s, j2), "A100-40GB");
    assert_int_equal(info_usage(&e, "T", "H100-80GB"), 3);
    /* the A100 is full: T's 1g waits, and O's 1g behind it starts on the H100 */
    j3 = submit(&e, "1g", "T", NULL, 1000.0, 3.0);
    assert_int_equal(world_job_state(e.w.s, j3), MS_JOB_QUEUED);
    o2 = submit(&e, "1g", "O", NULL, 1000.0, 4.0);
    assert_int_equal(world_job_state(e.w.s, o2), MS_JOB_RUNNING);
    assert_string_equal(world_job_model(e.w.s, o2), "H100-80GB");
    r = req_of("1g", "T", NULL, 1000.0);   /* it waits for room on the A100 */
    assert_false(ms_sched_tenant_holds(e.w.s, &r));
    /* constrained to H100: waits while T is at its limit there, for its tenant */
    j4 = submit(&e, "3g", "T", "H100-80GB", 1000.0, 5.0);
    assert_int_equal(world_job_state(e.w.s, j4), MS_JOB_QUEUED);
    r = req_of("3g", "T", "H100-80GB", 1000.0);
    assert_true(ms_sched_tenant_holds(e.w.s, &r));
    /* T's A100 job ends: its 1g goes there; the H100 job still waits */
    finish(&e, j2, 10.0);
    assert_int_equal(world_job_state(e.w.s, j3), MS_JOB_RUNNING);
    assert_string_equal(world_job_model(e.w.s, j3), "A100-40GB");
    assert_int_equal(world_job_state(e.w.s, j4), MS_JOB_QUEUED);
    /* T's H100 job ends: the constrained one starts there */
    finish(&e, j1, 20.0);
    assert_int_equal(world_job_state(e.w.s, j4), MS_JOB_RUNNING);
    assert_string_equal(world_job_model(e.w.s, j4), "H100-80GB");
    assert_int_equal(info_usage(&e, "T", "H100-80GB"), 3);
    assert_int_equal(world_job_state(e.w.s, o1), MS_JOB_RUNNING);
    /* lowering the limit stops nothing */
    assert_int_equal(tenant(&e, "T", 1, H, L2, &dg), MS_OK);
    assert_int_equal(world_job_state(e.w.s, j4), MS_JOB_RUNNING);
    assert_int_equal(ms_sched_check(e.w.s), MS_OK);
    /* could never start: a 3g on H100 only, with limit@H100-80GB=2 */
    r = req_of("3g", "T", "H100-80GB", 10.0);
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_tenant_check(e.w.s, &r, &dg), MS_ENOFIT);
    assert_non_null(strstr(dg.msg, "limit@H100-80GB"));
    assert_non_null(strstr(dg.msg, "could never start"));
    r = req_of("3g", "T", NULL, 10.0);   /* the A100 takes it */
    assert_int_equal(ms_sched_tenant_check(e.w.s, &r, &dg), MS_OK);
    env_free(&e);
}

/* --- validation and the option -------------------------------------------- */

static void test_validation(void **state)
{
    static const char *const M9[] = { "A30", "A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB",
                                      "H100-96GB", "H200-141GB", "GH200-144GB", "B200-180GB" };
    static const long L9[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    static const char *const UNK[] = { "Z100" }, *const DUP[] = { "H100-80GB", "h100" };
    static const char *const TWO[] = { "H100-80GB", "A30" };
    static const long NEG[] = { -1 }, BIG[] = { 2000000000L }, D2[] = { 3, 4 };
    env_t e;
    ms_diag_t dg;
    ms_sched_tenant_info_t in;

    (void)state;
    env_make(&e, 1);
    assert_int_equal(tenant(&e, "t", 1, UNK, L9, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "limit@Z100");
    assert_non_null(strstr(dg.msg, "no such GPU model"));
    assert_int_equal(tenant(&e, "t", 1, M9 + 3, NEG, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "limit@H100-80GB");
    assert_non_null(strstr(dg.msg, "tenant t: limit@H100-80GB must be 0..1e9"));
    assert_int_equal(tenant(&e, "t", 1, M9 + 3, BIG, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "limit@H100-80GB");
    assert_int_equal(tenant(&e, "t", 2, DUP, D2, &dg), MS_EINVAL);   /* an alias, twice */
    assert_string_equal(dg.field, "limit@h100");
    assert_non_null(strstr(dg.msg, "model H100-80GB is limited twice"));
    assert_int_equal(tenant(&e, "t", 9, M9, L9, &dg), MS_EINVAL);
    assert_non_null(strstr(dg.msg, "at most 8"));
    assert_int_equal(ms_sched_tenant_find(e.w.s, "t"), -1);   /* nothing declared */
    assert_int_equal(tenant(&e, "t", 8, M9, L9, &dg), MS_OK);
    assert_int_equal(tenant(&e, "u", 2, TWO, D2, &dg), MS_OK);   /* A30: a limit on nothing */
    assert_int_equal(ms_sched_tenant_info(e.w.s, ms_sched_tenant_find(e.w.s, "u"), &in), MS_OK);
    assert_int_equal(in.nmodel_limits, 2);
    assert_string_equal(in.model_limits[0].model, "H100-80GB");
    assert_true(in.model_limits[0].limit == 3 && in.model_limits[0].usage == 0);
    assert_string_equal(in.model_limits[1].model, "A30");
    assert_true(in.model_limits[1].limit == 4);
    assert_int_equal(tenant(&e, "u", 0, NULL, NULL, &dg), MS_OK);   /* declared again: none */
    assert_int_equal(ms_sched_tenant_info(e.w.s, ms_sched_tenant_find(e.w.s, "u"), &in), MS_OK);
    assert_int_equal(in.nmodel_limits, 0);
    assert_int_equal(ms_sched_tenant_info(e.w.s, 0, &in), MS_OK);
    assert_int_equal(in.nmodel_limits, 0);
    env_free(&e);
}

static void test_option(void **state)
{
    static const char *const BAD[] = {
        "a:limit@Z100=3", "limit@Z100: no such GPU model",
        "a:limit@=3", "no such GPU model",
        "a:limit@H100-80GB=-1", "limit@H100-80GB must be a whole number",
        "a:limit@H100-80GB=2e9", "limit@H100-80GB must be a whole number",
        "a:limit@H100-80GB=x", "limit@H100-80GB must be a whole number",
        "a:limit@H100-80GB=3,limit@H100=4", "limit@H100: model H100-80GB is limited twice",
        /* guarantee@MODEL, the same parser */
        "a:guarantee@Z100=3", "guarantee@Z100: no such GPU model",
        "a:guarantee@H100-80GB=0", "guarantee@H100-80GB must be a whole number of compute slices in 1..1e9",
        "a:guarantee@H100-80GB=-1", "guarantee@H100-80GB must be a whole number",
        "a:guarantee@H100-80GB=x", "guarantee@H100-80GB must be a whole number",
        "a:guarantee@H100-80GB=2e9", "guarantee@H100-80GB must be a whole number",
        "a:guarantee@H100-80GB=3,guarantee@h100=4", "guarantee@h100: model H100-80GB is guaranteed twice",
        "a:guarantee@H100-80GB=8,limit@H100=7", "guarantee@H100-80GB (8) above limit@H100-80GB (7)",
        "a:limit@h100=2,guarantee@H100-80GB=3", "guarantee@H100-80GB (3) above limit@H100-80GB (2)",
        ("a:limit@A30=1,limit@A100-40GB=1,limit@A100-80GB=1,limit@H100-80GB=1,limit@H100-94GB=1,"
         "limit@H100-96GB=1,limit@H200-141GB=1,limit@GH200-144GB=1,guarantee@B200-180GB=1"),
        "at most 8",   /* a guarantee's entry counts as a limit's */
    };
    ms_sim_cfg_t c;
    ms_opt_target_t t;
    ms_diag_t dg;

    (void)state;
    ms_sim_cfg_defaults(&c);
    t = ms_opt_target_sim(&c);
    ms_diag_clear(&dg);
    assert_int_equal(ms_opt_set(&t, "tenant", "a:guarantee=7,limit@H100-80GB=14,limit@a100=21,limit=30",
                                &dg), MS_OK);
    assert_int_equal(c.tenants.n, 1);
    assert_int_equal(c.tenants.t[0].nmodel_limits, 2);
    assert_string_equal(c.tenants.t[0].model_limits[0].model, "H100-80GB");
    assert_true(c.tenants.t[0].model_limits[0].limit == 14);
    assert_string_equal(c.tenants.t[0].model_limits[1].model, "A100-40GB");   /* canonical */
    assert_true(c.tenants.t[0].model_limits[1].limit == 21 && c.tenants.t[0].limit == 30 &&
                c.tenants.t[0].guarantee == 7);
    assert_int_equal(ms_opt_set(&t, "tenant", "b", &dg), MS_OK);
    assert_int_equal(c.tenants.t[1].nmodel_limits, 0);
    world_opt_refuses("tenant", BAD, (int)(sizeof(BAD) / sizeof(BAD[0]) / 2));
}

/* --- properties over random workloads -------------------------------------- */

static const char *const TNAME[] = { "a", "b", "c" };
static const char *const MODEL[] = { "A100-40GB", "H100-80GB" };

/* The mode of a workload's per model limits. */
enum { L_UNSET, L_ELSEWHERE, L_HUGE, L_RANDOM };

static void declare(env_t *e, int mode, ms_rng_t *r)
{
    static const char *const A30[] = { "A30" };
    static const long ONE[] = { 1 }, HUGE[] = { 1000000000L, 1000000000L };
    ms_diag_t dg;
    int k;

    for (k = 0; k < 3; k++) {
        const char *mods[2];
        long lim[2];
        int n = 0, m;
        ms_status_t st;

        if (mode == L_UNSET)
            st = tenant(e, TNAME[k], 0, NULL, NULL, &dg);
        else if (mode == L_ELSEWHERE)
            st = tenant(e, TNAME[k], 1, A30, ONE, &dg);
        else if (mode == L_HUGE)
            st = tenant(e, TNAME[k], 2, MODEL, HUGE, &dg);
        else {
            for (m = 0; m < 2; m++)
                if (ms_rng_below(r, 2)) {
                    mods[n] = MODEL[m];
                    lim[n++] = (long)ms_rng_below(r, 11);
                }
            st = tenant(e, TNAME[k], n, mods, lim, &dg);
        }
        if (st != MS_OK)
            fail_msg("tenant %s: %s", TNAME[k], dg.msg);
    }
}

/* Each tenant's usage on each model by a scan of its live jobs: never
 * over its limit, and the one info reports. */
static void scan(const env_t *e, int n)
{
    long use[3][2] = { { 0 } };
    int32_t k;
    int t, m, i;

    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;

        assert_int_equal(ms_sched_job(e->w.s, k, &in), MS_OK);
        if (in.state != MS_JOB_STARTING && in.state != MS_JOB_RUNNING && in.state != MS_JOB_RESERVED &&
            in.state != MS_JOB_MIGRATING)
            continue;
        for (i = 0; i < in.ninst; i++) {
            const ms_geom_t *g = NULL;

            assert_non_null(ms_sched_gpu(e->w.s, in.inst[i].gpu, &g));
            m = strcmp(ms_geom_model(g)->name, MODEL[0]) == 0 ? 0 : 1;
            use[in.tenant - 1][m] += ms_geom_profile(g, in.inst[i].prof)->cslices;
        }
    }
    for (t = 0; t < 3; t++) {
        ms_sched_tenant_info_t ti;

        assert_int_equal(ms_sched_tenant_info(e->w.s, t + 1, &ti), MS_OK);
        for (i = 0; i < ti.nmodel_limits; i++) {
            m = strcmp(ti.model_limits[i].model, MODEL[0]) == 0 ? 0
              : strcmp(ti.model_limits[i].model, MODEL[1]) == 0 ? 1 : -1;
            if (m < 0)
                continue;
            if (use[t][m] > ti.model_limits[i].limit || use[t][m] != ti.model_limits[i].usage)
                fail_msg("tenant %s on %s: %ld by a scan, %ld by info, limit %ld", TNAME[t], MODEL[m],
                         use[t][m], ti.model_limits[i].usage, ti.model_limits[i].limit);
        }
    }
}

static void wl_finish(void *ctx, int32_t k, double now, int n)
{
    finish(ctx, k, now);
    scan(ctx, n);
}

static bool wl_never(void *ctx, int32_t k)
{
    return ((env_t *)ctx)->never[k];
}

/* n random jobs; OUT the number reported as never able to start. */
static int run_wl(env_t *e, uint64_t seed, int mode, int n)
{
    static const char *const PROF[] = { "1g", "2g", "3g", "4g", "7g" };
    ms_rng_t r;
    double now = 0.0;
    int i, never = 0;
    world_wl_t wl;

    env_make(e, 2);
    ms_rng_seed(&r, seed);
    declare(e, mode, &r);
    wl = (world_wl_t){ e->w.s, e->end, e->done, e, wl_finish, wl_never };
    for (i = 0; i < n; i++) {
        int tk = (int)ms_rng_below(&r, 3), mk = (int)ms_rng_below(&r, 4);
        ms_sched_req_t q = req_of(PROF[ms_rng_below(&r, 5)], TNAME[tk], mk < 2 ? MODEL[mk] : NULL,
                                  30.0 + floor(ms_rng_unit(&r) * 400.0));
        ms_diag_t dg;

        now = world_wl_next(&wl, &r, i, now);
        ms_diag_clear(&dg);
        e->never[i] = ms_sched_tenant_check(e->w.s, &q, &dg) == MS_ENOFIT;
        never += e->never[i];
        assert_int_equal(submit(e, q.profile, q.tenant, q.model, q.duration_s, now), i);
        scan(e, i + 1);
    }
    world_wl_end(&wl, n, seed);
    return never;
}

static void test_properties(void **state)
{
    static env_t e;
    uint64_t seed;
    int never = 0;

    (void)state;
    for (seed = 1; seed <= 16; seed++) {
        uint64_t h[3];
        int v;

        /* limits that never bind: the plans of tenants without them */
        for (v = 0; v < 3; v++) {
            run_wl(&e, seed, v == 0 ? L_UNSET : v == 1 ? L_ELSEWHERE : L_HUGE, 120);
            h[v] = e.plans;
            env_free(&e);
        }
        assert_true(h[0] == h[1] && h[0] == h[2]);
        never += run_wl(&e, seed, L_RANDOM, 160);
        env_free(&e);
    }
    print_message("jobs reported as never able to start: %d\n", never);
    assert_true(never > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_option),
        cmocka_unit_test(test_properties),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
