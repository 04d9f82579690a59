/* test_tenant_metrics.c - the simulator's per-hour Jain's index and reclaim
 * times (docs/tenants.md, "The simulator"; issue 24) on hand-made runs with
 * known answers: one A100 (7 compute slices), no interference, no create
 * time, so that who holds what, and when, is fixed by the trace alone.
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

#include "migsched/geometry.h"
#include "migsched/options.h"
#include "migsched/sched.h"
#include "migsched/sim.h"
#include "migsched/trace.h"

static ms_geom_t *G;   /* A100-40GB's default profiles (main) */

static ms_trace_t *trace(const char *csv)
{
    ms_trace_t *t = NULL;
    ms_diag_t dg;
    FILE *f = fmemopen((void *)(uintptr_t)csv, strlen(csv), "r");

    assert_non_null(f);
    ms_diag_clear(&dg);
    if (ms_trace_read(f, "hand", G, &t, &dg) != MS_OK)
        fail_msg("trace: %s", dg.msg);
    fclose(f);
    return t;
}

/* opts: "name=value" pairs, NULL-terminated (value "" for a flag) */
static void run(const char *csv, const char *const *opts, ms_metrics_t *m)
{
    static const char *const BASE[] = { "beta=0", "create-s=0", NULL };
    ms_trace_t *t = trace(csv);
    ms_sim_cfg_t cfg;
    ms_opt_target_t tg;
    ms_diag_t dg;
    int pass, i;

    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = ms_policy_find("fa+");
    cfg.ngpus = 1;
    tg = ms_opt_target_sim(&cfg);
    for (pass = 0; pass < 2; pass++) {
        const char *const *o = pass == 0 ? BASE : opts;

        for (i = 0; o != NULL && o[i] != NULL; i++) {
            char name[64];
            const char *eq = strchr(o[i], '=');
            size_t n = (size_t)(eq - o[i]);

            assert_non_null(eq);
            assert_true(n < sizeof(name));
            memcpy(name, o[i], n);
            name[n] = '\0';
            ms_diag_clear(&dg);
            if (ms_opt_set(&tg, name, eq[1] ? eq + 1 : NULL, &dg) != MS_OK)
                fail_msg("--%s: %s", o[i], dg.msg);
        }
    }
    memset(m, 0, sizeof(*m));
    ms_diag_clear(&dg);
    if (ms_sim_run(&cfg, t, m, &dg) != MS_OK)
        fail_msg("sim: %s", dg.msg);
    ms_trace_free(t);
}

static const ms_tenant_metrics_t *tm(const ms_metrics_t *m, const char *name)
{
    int k;

    for (k = 0; k < m->ntenants; k++)
        if (strcmp(m->tenants[k].name, name) == 0)
            return &m->tenants[k];
    fail_msg("no tenant %s in the metrics", name);
    return NULL;
}

/* A's four 1g and B's three 1g run 0..7200 s; each has a 7g waiting
 * behind them all that time (it needs the whole GPU), then the 7g run 100
 * s each. Hours 0 and 1: both wait throughout, A holds 4/7, B 3/7: Jain
 * (4/7 + 3/7)^2 / (2 ((4/7)^2 + (3/7)^2)) = 49/50; with A's weight 2,
 * x = (2/7, 3/7): 25/26. Hour 2 (7200..7400, cut by the end) has neither
 * waiting throughout: none (NAN). The minimum is over hour 1 only. */
static const char HOURS[] = "job_id,arrival_s,profile,duration_s,tenant\n"
                            "a1,0,1g,7200,A\na2,0,1g,7200,A\na3,0,1g,7200,A\na4,0,1g,7200,A\n"
                            "b1,0,1g,7200,B\nb2,0,1g,7200,B\nb3,0,1g,7200,B\n"
                            "a5,0,7g,100,A\nb4,0,7g,100,B\n";

static void test_jain_hourly(void **state)
{
    static const char *const W2[] = { "tenant=A:weight=2", NULL };
    ms_metrics_t m;

    (void)state;
    run(HOURS, NULL, &m);
    assert_int_equal(m.jain_hours, 3);
    assert_float_equal(m.jain_hourly[0], 49.0 / 50.0, 1e-9);
    assert_float_equal(m.jain_hourly[1], 49.0 / 50.0, 1e-9);
    assert_true(isnan(m.jain_hourly[2]));
    assert_float_equal(m.jain_hourly_min, 49.0 / 50.0, 1e-9);
    /* the shares before the weight, of every tenant, waiting or not:
     * hour 2 holds each 7g's 100 s (and the reconfigurations' time) */
    assert_float_equal(m.share_hourly[0][tm(&m, "A") - m.tenants], 4.0 / 7.0, 1e-9);
    assert_float_equal(m.share_hourly[1][tm(&m, "B") - m.tenants], 3.0 / 7.0, 1e-9);
    assert_true(m.share_hourly[2][tm(&m, "A") - m.tenants] > 0.0);
    assert_float_equal(m.share_hourly[2][tm(&m, "A") - m.tenants],
                       m.share_hourly[2][tm(&m, "B") - m.tenants], 1e-9);
    run(HOURS, W2, &m);
    assert_float_equal(m.share_hourly[0][tm(&m, "A") - m.tenants], 4.0 / 7.0, 1e-9);
    assert_float_equal(m.jain_hourly[0], 25.0 / 26.0, 1e-9);
    assert_float_equal(m.jain_hourly[1], 25.0 / 26.0, 1e-9);
    assert_float_equal(m.jain_hourly_min, 25.0 / 26.0, 1e-9);
}

/* One hour in all: nothing after the first, so no minimum. A tenant alone
 * waiting throughout an hour is equal to itself (1). */
static void test_jain_hourly_short(void **state)
{
    ms_metrics_t m;

    (void)state;
    run("job_id,arrival_s,profile,duration_s,tenant\n"
        "a1,0,7g,3000,A\na2,0,7g,100,A\nb1,3500,1g,10,B\n", NULL, &m);
    assert_int_equal(m.jain_hours, 1);
    assert_float_equal(m.jain_hourly[0], 1.0, 1e-12);
    assert_true(isnan(m.jain_hourly_min));
}

/* G (guarantee 4 slices) returns at 100 s with four 1g while O's seven 1g
 * fill the GPU until 1000 s and seven more of O's wait. Without
 * preemption G waits for the ends: at 1000 s its jobs go first (its
 * guarantee's tier) and it holds 4: a reclaim of 900 s. At 2100 s it
 * returns with two 1g, room for them: they start at once, its demand (2)
 * below its guarantee is met: 0 s. Two reclaims, max 900, mean 450. O has
 * no guarantee: none. */
static const char RECLAIM[] = "job_id,arrival_s,profile,duration_s,tenant\n"
                              "o1,0,1g,1000,O\no2,0,1g,1000,O\no3,0,1g,1000,O\no4,0,1g,1000,O\n"
                              "o5,0,1g,1000,O\no6,0,1g,1000,O\no7,0,1g,1000,O\n"
                              "o8,0,1g,1000,O\no9,0,1g,1000,O\no10,0,1g,1000,O\no11,0,1g,1000,O\n"
                              "o12,0,1g,1000,O\no13,0,1g,1000,O\no14,0,1g,1000,O\n"
                              "g1,100,1g,500,G\ng2,100,1g,500,G\ng3,100,1g,500,G\ng4,100,1g,500,G\n"
                              "g5,2100,1g,100,G\ng6,2100,1g,100,G\n";

static void test_reclaim(void **state)
{
    static const char *const GUAR[] = { "tenant=G:guarantee=4", NULL };
    static const char *const PRE[] = { "tenant=G:guarantee=4", "preempt=", "preempt-grace=0",
                                       NULL };
    const ms_tenant_metrics_t *g;
    ms_metrics_t m;

    (void)state;
    run(RECLAIM, GUAR, &m);
    g = tm(&m, "G");
    assert_int_equal(g->reclaims, 2);
    assert_int_equal(g->reclaims_open, 0);
    assert_float_equal(g->reclaim_max_s, 900.0, 1e-9);
    assert_float_equal(g->reclaim_mean_s, 450.0, 1e-9);
    assert_int_equal(tm(&m, "O")->reclaims, 0);
    assert_true(isnan(tm(&m, "O")->reclaim_max_s));
    /* with --preempt G takes back borrowed work at once (each of its four
     * heads stops one of O's 1g): both reclaims 0 s */
    run(RECLAIM, PRE, &m);
    g = tm(&m, "G");
    assert_int_equal(g->reclaims, 2);
    assert_float_equal(g->reclaim_max_s, 0.0, 1e-9);
    assert_true(m.preemptions >= 4);
}

/* G (guarantee 7) returns at 500 s with a 7g while O's 7g holds the GPU
 * until 1000 s; its 1g arriving at 600 s, while the 7g waits, opens no
 * second reclaim. At 1000 s G's 7g starts (first of G's by submission):
 * one reclaim of 500 s. */
static void test_reclaim_once_per_return(void **state)
{
    static const char *const GUAR[] = { "tenant=G:guarantee=7", NULL };
    const ms_tenant_metrics_t *g;
    ms_metrics_t m;

    (void)state;
    run("job_id,arrival_s,profile,duration_s,tenant\n"
        "o1,0,7g,1000,O\ng1,500,7g,100,G\ng2,600,1g,100,G\n", GUAR, &m);
    g = tm(&m, "G");
    assert_int_equal(g->reclaims, 1);
    assert_int_equal(g->reclaims_open, 0);
    assert_float_equal(g->reclaim_max_s, 500.0, 1e-9);
}

int main(void)
{
    int rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jain_hourly),
        cmocka_unit_test(test_jain_hourly_short),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_reclaim_once_per_return),
    };

    if (ms_geom_create(ms_model_find("A100-40GB"), 0, &G) != MS_OK)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    ms_geom_destroy(G);
    return rc;
}
