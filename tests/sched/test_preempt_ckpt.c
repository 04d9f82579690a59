/* test_preempt_ckpt.c - preemption of jobs that checkpoint (the trace's
 * checkpoint_s, ms_sched_req_t.checkpoint_s; docs/tenants.md, "Jobs that
 * checkpoint"), through the simulator and the trace reader:
 *   - a victim loses only its run since its last checkpoint, and the
 *     cheapest victim is chosen by that: a 7g that checkpointed 100 s ago
 *     is stopped rather than one that started 300 s ago without
 *     checkpoints (and, the column taken out, the other way round);
 *   - the victim's next run is what was left after its last checkpoint
 *     (its end, and the makespan, say so), and the schedule passes
 *     `migsched check`'s rule that every job ran at least its duration;
 *   - the column's errors name the file, the line and the field;
 *   - the kept run survives a restart (ms_sched_req_t.kept_s, as migschedd
 *     hands it back from its store): a rebuilt scheduler, by submit or by
 *     adopt, counts it and adds the next preemption's to it; a bad value
 *     is refused naming kept_s.
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

#include "migsched/policy.h"
#include "migsched/sched.h"
#include "migsched/sim.h"
#include "migsched/trace.h"

static ms_geom_t *G;   /* A100-40GB's default profiles (main) */

static ms_trace_t *read_csv(const char *csv, ms_diag_t *dg, ms_status_t *st)
{
    ms_trace_t *tr = NULL;
    FILE *f = fmemopen((void *)(uintptr_t)csv, strlen(csv), "r");

    assert_non_null(f);
    ms_diag_clear(dg);
    *st = ms_trace_read(f, "t.csv", G, &tr, dg);
    fclose(f);
    return tr;
}

static void run(const char *csv, ms_metrics_t *m)
{
    ms_sim_cfg_t cfg;
    ms_diag_t dg;
    ms_status_t st;
    ms_trace_t *tr = read_csv(csv, &dg, &st);

    if (st != MS_OK)
        fail_msg("trace: %s", dg.msg);
    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = ms_policy_find("fa+");
    cfg.ngpus = 2;
    cfg.create_s = 0.0;   /* work starts at the placement: the times below are exact */
    cfg.sched.preempt = true;
    cfg.sched.preempt_grace_s = 0.0;
    if (ms_sim_run(&cfg, tr, m, &dg) != MS_OK)
        fail_msg("sim: %s", dg.msg);
    ms_trace_free(tr);
}

/* Two GPUs, each held by a 7g: a since 0 (checkpointing every 600 s), b
 * since 400. A 1g of priority 10 comes at 700 and runs 100 s. */
static void test_victim_by_checkpoint(void **state)
{
    ms_metrics_t m;

    (void)state;
    run("job_id,arrival_s,profile,duration_s,priority,checkpoint_s\n"
        "a,0,7g.40gb,2000,0,600\n"
        "b,400,7g.40gb,2000,0,\n"
        "s,700,1g.5gb,100,10,\n", &m);
    assert_int_equal(m.jobs_completed, 3);
    assert_int_equal(m.preemptions, 1);
    /* a lost 700 - 600 s (b would have lost 300) */
    assert_true(fabs(m.lost_work_s - 100.0) < 1e-6);
    assert_true(m.prio[0].priority == 10 && m.prio[0].p99_wait_s < 1e-6);
    /* a ran again from 800 (s's end) for 2000 - 600 s, to 2200: b's end at
     * 2400 is the last (from the start it would have ended at 2800) */
    assert_true(fabs(m.makespan_s - 2400.0) < 1e-6);

    /* without the checkpoints the cheaper victim is b (300 s against 700) */
    run("job_id,arrival_s,profile,duration_s,priority\n"
        "a,0,7g.40gb,2000,0\n"
        "b,400,7g.40gb,2000,0\n"
        "s,700,1g.5gb,100,10\n", &m);
    assert_int_equal(m.preemptions, 1);
    assert_true(fabs(m.lost_work_s - 300.0) < 1e-6);
    /* b runs its 2000 s again from 800 */
    assert_true(fabs(m.makespan_s - 2800.0) < 1e-6);
}

/* A victim preempted twice keeps what each run checkpointed: c (every
 * 500 s, 3000 s of work) is stopped at 1200 (kept 1000) and, run again
 * from 1300, at 2000 (700 s into the run: kept 500 more); it ends at
 * 2100 + 1500. */
static void test_twice(void **state)
{
    ms_metrics_t m;

    (void)state;
    run("job_id,arrival_s,profile,duration_s,priority,checkpoint_s\n"
        "c,0,7g.40gb,3000,0,500\n"
        "d,0,7g.40gb,9000,5,\n"
        "s1,1200,1g.5gb,100,10,\n"
        "s2,2000,1g.5gb,100,10,\n", &m);
    assert_int_equal(m.jobs_completed, 4);
    assert_int_equal(m.preemptions, 2);
    assert_true(fabs(m.lost_work_s - (200.0 + 200.0)) < 1e-6);
    assert_true(fabs(m.makespan_s - 9000.0) < 1e-6);   /* d: its 1200 s and 2000 s cost more */
    /* c ended at 3600 (5100 from the start each time): JCTs 3600, 9000,
     * 100 and 100 */
    assert_true(fabs(m.mean_jct_s - 3200.0) < 1e-6);
}

static void test_column_errors(void **state)
{
    ms_diag_t dg;
    ms_status_t st;
    ms_trace_t *tr;

    (void)state;
    tr = read_csv("job_id,arrival_s,profile,duration_s,checkpoint_s\n"
                  "a,0,1g.5gb,10,60\n"
                  "b,1,1g.5gb,10,-5\n", &dg, &st);
    assert_int_equal(st, MS_EPARSE);
    assert_null(tr);
    assert_int_equal(dg.line, 3);
    assert_string_equal(dg.field, "checkpoint_s");
    assert_non_null(strstr(dg.msg, "out of range"));
    tr = read_csv("job_id,arrival_s,profile,duration_s,checkpoint_s\n"
                  "a,0,1g.5gb,10,often\n", &dg, &st);
    assert_int_equal(st, MS_EPARSE);
    assert_null(tr);
    assert_string_equal(dg.field, "checkpoint_s");
    assert_non_null(strstr(dg.msg, "not a number"));
    tr = read_csv("job_id,arrival_s,profile,duration_s,checkpoint_s\n"
                  "a,0,1g.5gb,10,60\n"
                  "b,1,1g.5gb,10,\n", &dg, &st);
    assert_int_equal(st, MS_OK);
    assert_non_null(tr);
    assert_non_null(tr->req);
    assert_true(tr->req[0].checkpoint_s == 60.0 && tr->req[1].checkpoint_s == 0.0);
    ms_trace_free(tr);
}

static ms_status_t no_plan(void *ctx, const ms_sched_plan_t *p)
{
    (void)ctx;
    (void)p;
    return MS_OK;
}

/* One A100-40GB, fa+, preemption with no grace. */
static ms_sched_t *sched_one(ms_cluster_spec_t **cs)
{
    ms_sched_cfg_t cfg;
    ms_sched_t *s = NULL;
    ms_diag_t dg;

    assert_int_equal(ms_cluster_spec_create(cs), MS_OK);
    ms_diag_clear(&dg);
    assert_int_equal(ms_cluster_spec_add(*cs, "n=1xA100-40GB", 0, &dg), MS_OK);
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa+");
    cfg.nodes = ms_cluster_spec_nodes(*cs);
    cfg.nnodes = ms_cluster_spec_nnodes(*cs);
    cfg.exec.plan = no_plan;
    cfg.preempt = true;
    cfg.preempt_grace_s = 0.0;
    if (ms_sched_create(&cfg, 0.0, &s, &dg) != MS_OK)
        fail_msg("ms_sched_create: %s", dg.msg);
    return s;
}

static ms_sched_req_t ck_req(double kept)
{
    ms_sched_req_t r;

    memset(&r, 0, sizeof(r));
    r.id = "ck";
    r.profile = "7g";
    r.estimate_s = 1000.0;
    r.checkpoint_s = 100.0;
    r.kept_s = kept;
    return r;
}

/* A 1g of priority 10 at t preempts ck; what ck has kept then. */
static double preempt_at(ms_sched_t *s, const char *id, double t)
{
    ms_sched_req_t hi;
    ms_sched_job_info_t in;
    int32_t slot = -1;
    ms_diag_t dg;

    memset(&hi, 0, sizeof(hi));
    hi.id = id;
    hi.profile = "1g";
    hi.priority = 10;
    hi.estimate_s = 10.0;
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_submit(s, &hi, t, &slot, &dg), MS_OK);
    assert_int_equal(ms_sched_job(s, ms_sched_find(s, "ck"), &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_QUEUED);
    assert_int_equal(in.preemptions, 1);
    return in.kept_s;
}

static void test_kept_over_restart(void **state)
{
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
    ms_sched_req_t r;
    ms_sched_job_info_t in;
    int32_t slot = -1;
    ms_diag_t dg;
    double kept;

    (void)state;
    /* ran through: 250 s run, checkpoints every 100 s: 200 kept */
    s = sched_one(&cs);
    r = ck_req(0.0);
    assert_int_equal(ms_sched_submit(s, &r, 0.0, &slot, &dg), MS_OK);
    kept = preempt_at(s, "hi", 250.0);
    assert_true(fabs(kept - 200.0) < 1e-9);
    ms_sched_destroy(s);
    ms_cluster_spec_destroy(cs);
    /* rebuilt, submitted with what it kept: a second stop 130 s into its
     * next run keeps 100 more */
    s = sched_one(&cs);
    r = ck_req(kept);
    assert_int_equal(ms_sched_submit(s, &r, 1000.0, &slot, &dg), MS_OK);
    assert_int_equal(ms_sched_job(s, slot, &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);
    assert_true(fabs(in.kept_s - 200.0) < 1e-9);
    assert_true(fabs(preempt_at(s, "hi2", 1130.0) - 300.0) < 1e-9);
    ms_sched_destroy(s);
    ms_cluster_spec_destroy(cs);
    /* rebuilt, adopted running on its 7g at start 0 */
    s = sched_one(&cs);
    r = ck_req(kept);
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_adopt(s, 0, ms_geom_profile_find(G, "7g.40gb"), 0, &r, 1000.0, &dg), MS_OK);
    assert_int_equal(ms_sched_job(s, ms_sched_find(s, "ck"), &in), MS_OK);
    assert_int_equal(in.state, MS_JOB_RUNNING);
    assert_true(fabs(in.kept_s - 200.0) < 1e-9);
    /* a bad value: refused, named */
    r = ck_req(-1.0);
    r.id = "bad";
    ms_diag_clear(&dg);
    assert_int_equal(ms_sched_submit(s, &r, 1000.0, &slot, &dg), MS_EINVAL);
    assert_string_equal(dg.field, "kept_s");
    ms_sched_destroy(s);
    ms_cluster_spec_destroy(cs);
}

int main(void)
{
    int rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_victim_by_checkpoint),
        cmocka_unit_test(test_twice),
        cmocka_unit_test(test_column_errors),
        cmocka_unit_test(test_kept_over_restart),
    };

    if (ms_geom_create(ms_model_find("A100-40GB"), 0, &G) != MS_OK)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    ms_geom_destroy(G);
    return rc;
}
