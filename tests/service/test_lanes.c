/* test_lanes.c - the executor's lanes, backoff and GPU health
 * (src/service/exec.c, lanes.c, health.c, gpuhealth.c; issue 20, defects
 * 5, 6, 7 and 8), on the fake clock: the lanes run on the test's thread
 * (SVC_EXEC_MANUAL hands each op out and the test completes it, as a hung
 * or slow agent would; SVC_EXEC_INLINE runs it on the sim backend), so
 * nothing here depends on timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/fixture.h"

static svc_xplan_t *plan(int64_t id, uint64_t epoch, int n)
{
    svc_xplan_t *p = calloc(1, sizeof(*p));

    assert_non_null(p);
    assert_non_null(p->ops = calloc((size_t)n, sizeof(*p->ops)));
    p->plan_id = id;
    p->epoch = epoch;
    p->n = n;
    return p;
}

static void op(svc_xplan_t *p, int i, int kind, int gpu, int start, int prof, const char *job)
{
    svc_xop_t *o = &p->ops[i];

    o->idx = i;
    o->op_id = (uint64_t)(p->plan_id * 10 + i);
    o->op.kind = (uint8_t)kind;
    o->op.gpu = gpu;
    o->op.start = (int8_t)start;
    o->op.prof = (int8_t)prof;
    o->op.job = -1;
    snprintf(o->job, sizeof(o->job), "%s", job);
    snprintf(o->prof_name, sizeof(o->prof_name), "3g.20gb");
}

static int prof_3g(fx_t *f)
{
    return ms_geom_profile_find(ms_cluster_spec_nodes(f->spec)[0].geom, "3g.20gb");
}

/* The outcomes the loop got, as "plan:idx:result" words (freed). */
static void outcomes(fx_t *f, char *buf, size_t len)
{
    svc_qlink_t *l = svc_queue_drain(&f->d.loop.q), *next;

    buf[0] = '\0';
    for (; l != NULL; l = next) {
        svc_msg_t *m = SVC_QITEM(l, svc_msg_t, link);
        size_t n = strlen(buf);

        next = l->next;
        if (m->kind == SVC_M_OPRESULT)
            snprintf(buf + n, len - n, "%s%d:%d:%d", n > 0 ? " " : "", (int)m->plan_id, m->idx, m->result);
        svc_msg_free(m);
    }
}

/* Defect 7: one hung agent stalled every node's ops. A node whose op does
 * not return holds its own lane only: the other node's op is handed out
 * at once and its outcome reaches the loop while the first still hangs. */
static void test_hung_node_holds_only_its_lane(void **state)
{
    fx_t f;
    svc_xplan_t *p[3];
    char got[128];
    int64_t id;
    int idx, gpu, k;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB b=1xA100-40GB", "best-fit", NULL);
    f.d.exec.mode = SVC_EXEC_MANUAL;
    k = prof_3g(&f);
    p[0] = plan(1, 0, 1);
    op(p[0], 0, MS_OP_CREATE, 0, 0, k, "");   /* node a: its agent hangs */
    p[1] = plan(2, 0, 1);
    op(p[1], 0, MS_OP_CREATE, 0, 4, k, "");   /* node a again: it waits */
    p[2] = plan(3, 0, 1);
    op(p[2], 0, MS_OP_CREATE, 1, 0, k, "");   /* node b */
    for (k = 0; k < 3; k++)
        assert_int_equal(svc_queue_push(&f.d.exec.q, &p[k]->link), 0);
    assert_int_equal(svc_exec_step(&f.d, f.mono), 2);   /* a's first op and b's */
    assert_true(svc_exec_manual_peek(&f.d, &id, &idx, &gpu));
    assert_int_equal(id, 1);
    svc_exec_manual_done(&f.d, 3, 0, MS_OK, NULL, f.mono);   /* b answers */
    outcomes(&f, got, sizeof(got));
    assert_string_equal(got, "3:0:0");
    f.mono += 60;   /* a still hangs: its second op waits, nothing else does */
    assert_int_equal(svc_exec_step(&f.d, f.mono), 0);
    svc_exec_manual_done(&f.d, 1, 0, MS_OK, NULL, f.mono);
    assert_true(svc_exec_manual_peek(&f.d, &id, &idx, &gpu));
    assert_int_equal(id, 2);   /* handed out as soon as a's lane is free */
    svc_exec_manual_done(&f.d, 2, 0, MS_OK, NULL, f.mono);
    outcomes(&f, got, sizeof(got));
    assert_string_equal(got, "1:0:0 2:0:0");
    fx_teardown(&f);
}

/* Defect 8: SIGTERM ran every op left in the plan. Stopping lets the op in
 * progress finish and report; nothing more is handed out, and the rest
 * stays pending (no outcome: the journal keeps it unsettled). */
static void test_stop_finishes_only_the_op_in_progress(void **state)
{
    fx_t f;
    svc_xplan_t *p[2];
    char got[128];
    int64_t id;
    int idx, gpu, k;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB b=1xA100-40GB", "best-fit", NULL);
    f.d.exec.mode = SVC_EXEC_MANUAL;
    k = prof_3g(&f);
    p[0] = plan(1, 0, 3);
    op(p[0], 0, MS_OP_CREATE, 0, 0, k, "");
    op(p[0], 1, MS_OP_START, 0, 0, k, "j1");
    op(p[0], 2, MS_OP_STOP, 0, 0, k, "j1");
    p[1] = plan(2, 0, 1);
    op(p[1], 0, MS_OP_CREATE, 1, 0, k, "");
    assert_int_equal(svc_queue_push(&f.d.exec.q, &p[0]->link), 0);
    assert_int_equal(svc_exec_step(&f.d, f.mono), 1);
    atomic_store(&f.d.exec.stop, true);   /* SIGTERM while op 0 runs */
    assert_int_equal(svc_queue_push(&f.d.exec.q, &p[1]->link), 0);   /* arrives after */
    assert_int_equal(svc_exec_step(&f.d, f.mono), 0);
    svc_exec_manual_done(&f.d, 1, 0, MS_OK, NULL, f.mono);
    assert_false(svc_exec_manual_peek(&f.d, &id, &idx, &gpu));
    assert_int_equal(svc_exec_step(&f.d, f.mono + 100), 0);
    outcomes(&f, got, sizeof(got));
    assert_string_equal(got, "1:0:0");
    fx_teardown(&f);
}

/* The GPU (0..) a job's instance is on in the backend, -1 none. */
static int job_gpu(fx_t *f, const char *job)
{
    ms_binst_t *inv;
    int n, i, g = -1;

    assert_int_equal(ms_backend_inventory(f->d.be, &inv, &n, NULL), MS_OK);
    for (i = 0; i < n; i++)
        if (strcmp(inv[i].job, job) == 0)
            g = inv[i].gpu;
    free(inv);
    return g;
}

static void write_faults(fx_t *f, const char *text)
{
    char path[128];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/sim-faults", f->dir);
    if (text == NULL) {
        assert_int_equal(remove(path), 0);
        return;
    }
    assert_non_null(fp = fopen(path, "w"));
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

/* The loop's ticks and the executor at the fake clock for secs, in steps. */
static void run_for(fx_t *f, double secs, double step)
{
    svc_msg_t *none = NULL;
    double end = f->mono + secs;

    while (f->mono < end) {
        f->mono += step;
        f->wall += step;
        fx_batch(f, &none, 0);
        while (fx_exec(f) > 0)
            ;
    }
}

static bool metrics_has(fx_t *f, const char *line)
{
    svc_msg_t *m = fx_msg(SVC_M_METRICS, NULL);
    bool found;

    fx_batch(f, &m, 1);
    assert_non_null(m->body);
    found = strstr(m->body, line) != NULL;
    svc_msg_free(m);
    return found;
}

static bool in_sync(fx_t *f)
{
    svc_msg_t *m = fx_msg(SVC_M_CLUSTER, NULL);
    json_t *o, *be;
    bool ok;

    fx_batch(f, &m, 1);
    assert_non_null(m->body);
    o = json_loads(m->body, 0, NULL);
    assert_non_null(o);
    be = json_object_get(o, "backend");
    ok = json_is_true(json_object_get(be, "in_sync"));
    json_decref(o);
    svc_msg_free(m);
    return ok;
}

/* Defect 6: a GPU that fell off the bus kept getting its job. It is marked
 * unhealthy at its first "gpu-lost" (an event, the metric), the scheduler
 * places the job on the healthy GPU, and the lost GPU is tried no more
 * (one failed create in a minute, not thousands); once it answers a
 * probe it is healthy again and takes work. */
static void test_lost_gpu_unhealthy_and_job_replaced(void **state)
{
    fx_t f;
    svc_msg_t *m;

    (void)state;
    fx_setup(&f, "a=2xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    write_faults(&f, "lost 0\n");
    m = fx_submit_msg("{\"id\":\"j1\",\"profile\":\"7g.40gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 60, 0.05);
    assert_int_equal(fx_state(&f, "j1"), MS_JOB_RUNNING);
    assert_int_equal(job_gpu(&f, "j1"), 1);
    assert_int_equal(f.d.met.ops[MS_OP_CREATE][1], 1);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM events WHERE job='gpu-0' AND state='unhealthy'"), 1);
    assert_true(metrics_has(&f, "migsched_gpu_healthy{node=\"a\",gpu=\"0\","));
    assert_false(svc_gpu_healthy(&f.d, 0));
    assert_true(svc_gpu_healthy(&f.d, 1));
    /* back on the bus: the next probe finds it, and it takes a job */
    write_faults(&f, NULL);
    run_for(&f, 120, 0.5);
    assert_true(svc_gpu_healthy(&f.d, 0));
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM events WHERE job='gpu-0' AND state='healthy'"), 1);
    m = fx_submit_msg("{\"id\":\"j2\",\"profile\":\"7g.40gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 5, 0.05);
    assert_int_equal(fx_state(&f, "j2"), MS_JOB_RUNNING);
    assert_int_equal(job_gpu(&f, "j2"), 0);
    assert_true(in_sync(&f));
    fx_teardown(&f);
}

/* Defect 6: failed ops were retried at once, forever (about 2,400 a
 * second). A GPU whose every op fails, never made unhealthy here (so only
 * the backoff bounds the retries): a minute of fake time at 50 ms ticks
 * (1,200 loop passes, each of which could retry) sees about log2(60 /
 * 0.5) attempts. */
static void test_failures_back_off(void **state)
{
    fx_t f;
    const char *const extra[] = { "--unhealthy-after", "1000", NULL };
    svc_msg_t *m;
    uint64_t tries;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB", "best-fit", extra);
    fx_start(&f);
    write_faults(&f, "fail 0\n");
    m = fx_submit_msg("{\"id\":\"j1\",\"profile\":\"3g.20gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 60, 0.05);
    tries = f.d.met.ops[MS_OP_CREATE][1];
    print_message("failed creates in 60 s: %llu\n", (unsigned long long)tries);
    assert_true(tries >= 3);
    assert_true(tries <= 15);
    assert_true(svc_gpu_healthy(&f.d, 0));
    write_faults(&f, NULL);
    run_for(&f, 300, 0.5);
    assert_int_equal(fx_state(&f, "j1"), MS_JOB_RUNNING);
    assert_true(in_sync(&f));
    fx_teardown(&f);
}

/* Defect 5: a failed STOP or DESTROY left an idle instance that was never
 * retried. It is tried again (after the backoff) until it succeeds, it is
 * never reported failed, and a job that needs its slices does not start
 * before it succeeded; afterwards the view and the backend agree. */
static void test_failed_stop_retried_until_done(void **state)
{
    fx_t f;
    svc_msg_t *m;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"j1\",\"profile\":\"7g.40gb\"}"), MS_JOB_RUNNING);
    write_faults(&f, "fail 0\n");   /* the agent dies as the job ends */
    m = fx_msg(SVC_M_DONE, "j1");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    m = fx_submit_msg("{\"id\":\"j2\",\"profile\":\"7g.40gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 30, 0.05);
    assert_int_equal(f.d.met.ops[MS_OP_STOP][1], 0);   /* never failed: pending */
    assert_int_not_equal(fx_state(&f, "j2"), MS_JOB_RUNNING);
    assert_int_equal(job_gpu(&f, "j2"), -1);
    write_faults(&f, NULL);   /* it answers again */
    run_for(&f, 300, 0.5);
    assert_int_equal(f.d.met.ops[MS_OP_STOP][1], 0);
    assert_true(f.d.met.ops[MS_OP_STOP][0] >= 1);
    assert_int_equal(fx_state(&f, "j1"), MS_JOB_DONE);
    assert_int_equal(fx_state(&f, "j2"), MS_JOB_RUNNING);
    assert_int_equal(job_gpu(&f, "j1"), -1);
    assert_true(in_sync(&f));
    fx_teardown(&f);
}

/* A STOP whose job is no longer on its instance (the agent restarted and
 * lost it, someone stopped it by hand) has nothing to undo: it is taken as
 * done, not retried forever behind everything else on its GPU, and the GPU
 * stays healthy and takes the next job. */
static void test_stop_of_a_gone_job_is_done(void **state)
{
    fx_t f;
    svc_msg_t *m;
    ms_backend_op_t stop;
    ms_binst_t *inv;
    ms_diag_t why;
    int n;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"j1\",\"profile\":\"7g.40gb\"}"), MS_JOB_RUNNING);
    assert_int_equal(ms_backend_inventory(f.d.be, &inv, &n, NULL), MS_OK);
    assert_int_equal(n, 1);
    memset(&stop, 0, sizeof(stop));   /* stopped behind the daemon's back */
    stop.op.kind = MS_OP_STOP;
    stop.op.gpu = 0;
    stop.op.start = inv[0].start;
    stop.op.prof = inv[0].prof;
    stop.job = "j1";
    free(inv);
    assert_int_equal(ms_backend_run(f.d.be, &stop, &why), MS_OK);
    m = fx_msg(SVC_M_DONE, "j1");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    m = fx_submit_msg("{\"id\":\"j2\",\"profile\":\"7g.40gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 30, 0.05);
    assert_true(svc_gpu_healthy(&f.d, 0));
    assert_int_equal(fx_state(&f, "j2"), MS_JOB_RUNNING);
    assert_true(in_sync(&f));
    fx_teardown(&f);
}

/* Defect 6: a create the backend refused (its slices taken by an instance
 * the view does not know) was retried on the same placement. The view
 * holds what the backend reports there, and the job is placed elsewhere
 * with one refusal. */
static void test_refused_create_replans(void **state)
{
    fx_t f;
    svc_msg_t *m;
    ms_backend_op_t create;
    ms_diag_t why;

    (void)state;
    fx_setup(&f, "a=2xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    memset(&create, 0, sizeof(create));   /* someone else's 1g on GPU 0, behind our back */
    create.op.kind = MS_OP_CREATE;
    create.op.gpu = 0;
    create.op.start = 6;
    create.op.prof = (int8_t)ms_geom_profile_find(ms_cluster_spec_nodes(f.spec)[0].geom, "1g.5gb");
    create.job = "";
    assert_int_equal(ms_backend_run(f.d.be, &create, &why), MS_OK);
    m = fx_submit_msg("{\"id\":\"j1\",\"profile\":\"7g.40gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 30, 0.05);
    assert_int_equal(fx_state(&f, "j1"), MS_JOB_RUNNING);
    assert_int_equal(job_gpu(&f, "j1"), 1);
    assert_int_equal(f.d.met.ops[MS_OP_CREATE][1], 1);
    assert_true(svc_gpu_healthy(&f.d, 0));   /* a refusal is not the GPU's fault */
    fx_teardown(&f);
}

/* A Lease lost in the middle of ops (the last closing note's gap): the
 * backend's gate refuses every op while this replica may not act. Those
 * refusals say nothing about the GPU: it is not made unhealthy however many
 * creates the gate refuses, and a STOP the gate refused is not "taken as
 * done" (it was never sent): it runs once the gate opens, and the view and
 * the backend agree. Before, the refusal passed for the op's own failure:
 * three refused creates made the GPU unhealthy, and a refused STOP was
 * taken as done, leaving the job on its instance. */
static atomic_bool gate_open;

static bool gate(void *ctx)
{
    (void)ctx;
    return atomic_load(&gate_open);
}

static void test_gate_refusals_are_not_failures(void **state)
{
    fx_t f;
    svc_msg_t *m;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    atomic_store(&gate_open, false);
    ms_backend_set_gate(f.d.be, gate, NULL);
    m = fx_submit_msg("{\"id\":\"j1\",\"profile\":\"7g.40gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 120, 0.05);
    assert_true(f.d.met.ops[MS_OP_CREATE][1] >= 3);   /* refused, more than --unhealthy-after's 3 */
    assert_true(svc_gpu_healthy(&f.d, 0));
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM events WHERE job='gpu-0' AND state='unhealthy'"), 0);
    atomic_store(&gate_open, true);
    run_for(&f, 300, 0.5);
    assert_int_equal(fx_state(&f, "j1"), MS_JOB_RUNNING);
    atomic_store(&gate_open, false);
    m = fx_msg(SVC_M_DONE, "j1");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    run_for(&f, 30, 0.05);
    atomic_store(&gate_open, true);
    run_for(&f, 300, 0.5);
    assert_int_equal(fx_state(&f, "j1"), MS_JOB_DONE);
    assert_true(svc_gpu_healthy(&f.d, 0));
    assert_true(in_sync(&f));
    ms_backend_set_gate(f.d.be, NULL, NULL);
    fx_teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hung_node_holds_only_its_lane),
        cmocka_unit_test(test_stop_finishes_only_the_op_in_progress),
        cmocka_unit_test(test_lost_gpu_unhealthy_and_job_replaced),
        cmocka_unit_test(test_failures_back_off),
        cmocka_unit_test(test_failed_stop_retried_until_done),
        cmocka_unit_test(test_refused_create_replans),
        cmocka_unit_test(test_stop_of_a_gone_job_is_done),
        cmocka_unit_test(test_gate_refusals_are_not_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
