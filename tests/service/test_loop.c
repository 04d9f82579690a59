/* test_loop.c - the loop's handlers (src/service/handlers.c), its batch
 * (loop.c), the job sync (jobsync.c) and plan staging (stage.c), driven
 * without threads on the sim backend and a fake clock (fixture.c): the
 * test plays the syncer and the executor. What is asserted is the
 * daemon's contract: an answer, a job view and a plan leave only after
 * their commit is durable; reads see the earlier commits; a failed op rolls
 * back; the fake clock alone decides when a sim job ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/fixture.h"

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    fx_setup(f, "a=1xA100-40GB", "best-fit", NULL);
    fx_start(f);
    f->d.ready = true;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;

    fx_teardown(f);
    free(f);
    return 0;
}

/* The answer's body as JSON (rendered as the HTTP thread would). */
static json_t *body_of(fx_t *f, svc_msg_t *m)
{
    char *text = m->rjob != NULL ? svc_job_text(m->rjob->id, m->rjob->body, &m->rview, f->d.be) : strdup(m->body);
    json_t *o;

    assert_non_null(text);
    o = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(o);
    return o;
}

/* A submission's plan reaches the executor, and its job's view the
 * readers, only once the commit holding them is durable (the syncer's
 * release); the plan is journalled in that commit, before it runs. */
static void test_submit_waits_for_durability(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m = fx_submit_msg("{\"id\":\"j1\",\"profile\":\"3g.20gb\"}");
    svc_job_t *j;

    m->t_enq = f->mono;
    svc_loop_batch(&f->d, &m->link, f->wall, false);
    assert_int_equal(m->status, 201);
    assert_non_null(j = svc_jobs_find(&f->d.jobs, "j1"));
    assert_false(j->published);                            /* not yet durable */
    assert_int_equal(svc_queue_len(&f->d.exec.q), 0);      /* nor its plan */
    assert_int_equal(svc_queue_len(&f->d.sync.q), 1);
    assert_true(fx_sql(f, "SELECT COUNT(*) FROM ops WHERE job='j1' AND result='pending'") >= 1);
    assert_int_equal(fx_sql(f, "SELECT COUNT(*) FROM jobs WHERE id='j1'"), 1);
    assert_int_equal(fx_sync(f), 1);
    assert_true(j->published);
    assert_int_equal(j->pub.state, MS_JOB_STARTING);
    assert_true(svc_queue_len(&f->d.exec.q) >= 1);
    assert_true(j->inflight >= 1);
    svc_msg_free(m);
    /* the executor runs it: the job runs on an instance the backend holds */
    assert_true(fx_exec(f) >= 1);
    assert_int_equal(fx_state(f, "j1"), MS_JOB_RUNNING);
    assert_int_equal(j->inflight, 0);
    assert_int_equal(fx_sql(f, "SELECT COUNT(*) FROM ops WHERE result='pending'"), 0);
    assert_int_equal(fx_sql(f, "SELECT COUNT(*) FROM jobs WHERE id='j1' AND state='running'"), 1);
    {
        ms_binst_t *inv;
        int n, i, tagged = 0;

        assert_int_equal(ms_backend_inventory(f->d.be, &inv, &n, NULL), MS_OK);
        for (i = 0; i < n; i++)
            tagged += strcmp(inv[i].job, "j1") == 0;
        free(inv);
        assert_int_equal(tagged, 1);
    }
}

static void test_idempotent_submit(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m[3];

    m[0] = fx_submit_msg("{\"id\":\"k\",\"profile\":\"1g.5gb\"}");
    fx_batch(f, m, 1);
    assert_int_equal(m[0]->status, 201);
    m[1] = fx_submit_msg("{\"id\":\"k\",\"profile\":\"1g.5gb\"}");
    m[2] = fx_submit_msg("{\"id\":\"k\",\"profile\":\"2g.10gb\"}");
    fx_batch(f, m + 1, 2);
    assert_int_equal(m[1]->status, 200);
    assert_int_equal(m[2]->status, 409);
    assert_int_equal(fx_sql(f, "SELECT COUNT(*) FROM jobs WHERE id='k'"), 1);
    svc_msg_free(m[0]);
    svc_msg_free(m[1]);
    svc_msg_free(m[2]);
}

/* A request no GPU of the cluster can ever serve is refused, and nothing
 * of it stays (table, store, scheduler). */
static void test_unservable_refused(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m = fx_submit_msg("{\"id\":\"big\",\"mem_gb\":500}");

    fx_batch(f, &m, 1);
    assert_true(m->status >= 400 && m->status < 500);
    assert_null(svc_jobs_find(&f->d.jobs, "big"));
    assert_int_equal(fx_sql(f, "SELECT COUNT(*) FROM jobs WHERE id='big'"), 0);
    assert_int_equal(ms_sched_find(f->d.sched, "big"), -1);
    svc_msg_free(m);
}

/* Cancel: a queued job at once; a starting one is 409 (its instance is
 * being made); an unknown one 404. */
static void test_cancel(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m[3];

    assert_int_equal(fx_run(f, "{\"id\":\"a\",\"profile\":\"4g.20gb\"}"), MS_JOB_RUNNING);
    m[0] = fx_submit_msg("{\"id\":\"b\",\"profile\":\"7g.40gb\"}");   /* no room: queued */
    m[1] = fx_submit_msg("{\"id\":\"c\",\"profile\":\"3g.20gb\"}");   /* its instance is made */
    fx_batch(f, m, 2);
    assert_int_equal(fx_state(f, "b"), MS_JOB_QUEUED);
    assert_int_equal(fx_state(f, "c"), MS_JOB_STARTING);
    svc_msg_free(m[0]);
    svc_msg_free(m[1]);
    m[0] = fx_msg(SVC_M_CANCEL, "b");
    m[1] = fx_msg(SVC_M_CANCEL, "nope");
    m[2] = fx_msg(SVC_M_CANCEL, "c");
    fx_batch(f, m, 3);
    assert_int_equal(m[0]->status, 200);
    assert_int_equal(m[1]->status, 404);
    assert_int_equal(m[2]->status, 409);
    assert_int_equal(fx_state(f, "b"), MS_JOB_CANCELLED);
    assert_int_equal(fx_sql(f, "SELECT COUNT(*) FROM events WHERE job='b' AND state='cancelled'"), 1);
    svc_msg_free(m[0]);
    svc_msg_free(m[1]);
    svc_msg_free(m[2]);
    while (fx_exec(f) > 0)
        ;
    assert_int_equal(fx_state(f, "c"), MS_JOB_RUNNING);
    m[0] = fx_msg(SVC_M_CANCEL, "c");
    fx_batch(f, m, 1);
    assert_int_equal(m[0]->status, 200);
    assert_int_equal(fx_state(f, "c"), MS_JOB_CANCELLED);
    svc_msg_free(m[0]);
}

/* Done: only a running job; its GPU goes to the next in the queue. */
static void test_done_frees_the_gpu(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m[1];

    assert_int_equal(fx_run(f, "{\"id\":\"x\",\"profile\":\"7g.40gb\"}"), MS_JOB_RUNNING);
    assert_int_equal(fx_run(f, "{\"id\":\"y\",\"profile\":\"7g.40gb\"}"), MS_JOB_QUEUED);
    m[0] = fx_msg(SVC_M_DONE, "y");
    fx_batch(f, m, 1);
    assert_int_equal(m[0]->status, 409);
    svc_msg_free(m[0]);
    m[0] = fx_msg(SVC_M_DONE, "x");
    fx_batch(f, m, 1);
    assert_int_equal(m[0]->status, 200);
    assert_int_equal(fx_state(f, "x"), MS_JOB_DONE);
    svc_msg_free(m[0]);
    while (fx_exec(f) > 0)
        ;
    f->wall += SVC_TICK_S;   /* the tick's pass over the queue */
    fx_batch(f, m, 0);
    while (fx_exec(f) > 0)
        ;
    assert_int_equal(fx_state(f, "y"), MS_JOB_RUNNING);
}

/* Reads come first in a batch: they show the earlier commits, not the
 * batch's own writes. */
static void test_reads_before_writes(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m[2];
    json_t *o;

    m[0] = fx_submit_msg("{\"id\":\"w\",\"profile\":\"1g.5gb\"}");
    m[1] = fx_msg(SVC_M_LIST, NULL);
    fx_batch(f, m, 2);
    assert_int_equal(m[0]->status, 201);
    assert_int_equal(m[1]->status, 200);
    o = body_of(f, m[1]);
    assert_int_equal(json_array_size(json_object_get(o, "jobs")), 0);
    json_decref(o);
    svc_msg_free(m[0]);
    svc_msg_free(m[1]);
    m[0] = fx_msg(SVC_M_LIST, NULL);
    fx_batch(f, m, 1);
    o = body_of(f, m[0]);
    assert_int_equal(json_array_size(json_object_get(o, "jobs")), 1);
    json_decref(o);
    svc_msg_free(m[0]);
}

/* The list: by state, by label, a page at a time with its cursor; bad
 * filters are 400 naming the field. */
static void test_list_filters_and_pages(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m[3];
    json_t *o;
    char cursor[32];

    fx_run(f, "{\"id\":\"l1\",\"profile\":\"1g.5gb\",\"labels\":{\"team\":\"a\"}}");
    fx_run(f, "{\"id\":\"l2\",\"profile\":\"1g.5gb\",\"labels\":{\"team\":\"b\"}}");
    fx_run(f, "{\"id\":\"l3\",\"profile\":\"1g.5gb\",\"labels\":{\"team\":\"a\"}}");
    m[0] = fx_msg(SVC_M_LIST, NULL);
    assert_non_null(m[0]->q_label = strdup("team=a"));
    m[1] = fx_msg(SVC_M_LIST, NULL);
    m[1]->q_limit = 2;
    m[2] = fx_msg(SVC_M_LIST, NULL);
    assert_non_null(m[2]->q_state = strdup("sleeping"));
    fx_batch(f, m, 3);
    o = body_of(f, m[0]);
    assert_int_equal(json_array_size(json_object_get(o, "jobs")), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o, "jobs"), 1), "id")), "l3");
    json_decref(o);
    o = body_of(f, m[1]);
    assert_int_equal(json_array_size(json_object_get(o, "jobs")), 2);
    assert_true(json_is_string(json_object_get(o, "next")));
    snprintf(cursor, sizeof(cursor), "%s", json_string_value(json_object_get(o, "next")));
    json_decref(o);
    assert_int_equal(m[2]->status, 400);
    o = body_of(f, m[2]);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "error"), "field")), "state");
    json_decref(o);
    svc_msg_free(m[0]);
    svc_msg_free(m[1]);
    svc_msg_free(m[2]);
    /* by state: the one queued (a whole GPU while three 1g run) */
    assert_int_equal(fx_run(f, "{\"id\":\"l4\",\"profile\":\"7g.40gb\"}"), MS_JOB_QUEUED);
    m[0] = fx_msg(SVC_M_LIST, NULL);
    assert_non_null(m[0]->q_state = strdup("queued"));
    fx_batch(f, m, 1);
    o = body_of(f, m[0]);
    assert_int_equal(json_array_size(json_object_get(o, "jobs")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o, "jobs"), 0), "id")), "l4");
    json_decref(o);
    svc_msg_free(m[0]);
    m[0] = fx_msg(SVC_M_LIST, NULL);
    assert_non_null(m[0]->q_cursor = strdup(cursor));
    m[1] = fx_msg(SVC_M_LIST, NULL);
    assert_non_null(m[1]->q_cursor = strdup("x1"));
    fx_batch(f, m, 2);
    o = body_of(f, m[0]);
    assert_int_equal(json_array_size(json_object_get(o, "jobs")), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o, "jobs"), 0), "id")), "l3");
    assert_true(json_is_null(json_object_get(o, "next")));
    json_decref(o);
    assert_int_equal(m[1]->status, 400);
    svc_msg_free(m[0]);
    svc_msg_free(m[1]);
}

/* A failed op: its outcome is journalled, the executor's epoch moves (the
 * plans made before it are discarded), the scheduler rolls the job back
 * and places it again; the view and the backend agree afterwards. */
static void test_failed_op_rolls_back(void **state)
{
    fx_t f;
    const char *const extra[] = { "--sim-fail", "create:2", NULL };
    svc_msg_t *m;
    json_t *o;
    int i;

    (void)state;
    fx_setup(&f, "a=2xA100-40GB", "best-fit", extra);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"f1\",\"profile\":\"3g.20gb\"}"), MS_JOB_RUNNING);
    m = fx_submit_msg("{\"id\":\"f2\",\"profile\":\"3g.20gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    fx_exec(&f);                      /* the second create fails */
    assert_int_equal(f.d.exec.epoch, 1);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM ops WHERE result='failed'"), 1);
    assert_int_equal(f.d.met.ops[MS_OP_CREATE][1], 1);
    assert_int_not_equal(fx_state(&f, "f2"), MS_JOB_RUNNING);
    for (i = 0; i < 20 && fx_state(&f, "f2") != MS_JOB_RUNNING; i++) {
        f.wall += SVC_TICK_S;
        f.mono += 1.0;   /* past the GPU's backoff (0.5 s at most, the first time) */
        fx_batch(&f, &m, 0);
        fx_exec(&f);
    }
    assert_int_equal(fx_state(&f, "f2"), MS_JOB_RUNNING);
    m = fx_msg(SVC_M_CLUSTER, NULL);
    fx_batch(&f, &m, 1);
    o = body_of(&f, m);
    assert_true(json_is_true(json_object_get(json_object_get(o, "backend"), "in_sync")));
    json_decref(o);
    svc_msg_free(m);
    fx_teardown(&f);
}

/* A sim job ends when the fake clock passes its duration, and not before. */
static void test_sim_job_ends_by_the_clock(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m = NULL;

    assert_int_equal(fx_run(f, "{\"id\":\"d1\",\"profile\":\"1g.5gb\",\"duration_s\":30}"), MS_JOB_RUNNING);
    f->wall += 29.0;
    fx_batch(f, &m, 0);
    assert_int_equal(fx_state(f, "d1"), MS_JOB_RUNNING);
    f->wall += 1.5;
    fx_batch(f, &m, 0);
    assert_int_equal(fx_state(f, "d1"), MS_JOB_DONE);
    assert_int_equal(fx_sql(f, "SELECT COUNT(*) FROM events WHERE job='d1' AND state='done'"), 1);
    while (fx_exec(f) > 0)
        ;
}

/* /readyz and /v1/cluster come from the loop's view. */
static void test_ready_and_cluster(void **state)
{
    fx_t *f = *state;
    svc_msg_t *m[3];
    json_t *o;

    fx_run(f, "{\"id\":\"r1\",\"profile\":\"2g.10gb\"}");
    m[0] = fx_msg(SVC_M_READY, NULL);
    m[1] = fx_msg(SVC_M_CLUSTER, NULL);
    m[2] = fx_msg(SVC_M_METRICS, NULL);
    fx_batch(f, m, 3);
    assert_int_equal(m[0]->status, 200);
    o = body_of(f, m[0]);
    assert_true(json_is_true(json_object_get(o, "ready")));
    json_decref(o);
    o = body_of(f, m[1]);
    assert_true(json_is_true(json_object_get(json_object_get(o, "backend"), "in_sync")));
    json_decref(o);
    assert_int_equal(m[2]->status, 200);
    assert_non_null(strstr(m[2]->body, "migsched_jobs{state=\"running\"} 1"));
    svc_msg_free(m[0]);
    svc_msg_free(m[1]);
    svc_msg_free(m[2]);
}

/* The message table: every kind has a handler, and reads are the kinds
 * that change nothing. */
static void test_message_table(void **state)
{
    svc_msg_t m;
    int k;

    (void)state;
    memset(&m, 0, sizeof(m));
    for (k = 1; k < SVC_M_N; k++) {
        assert_non_null(svc_msg_kinds[k].name);
        assert_non_null(svc_msg_kinds[k].handle);
    }
    m.kind = SVC_M_LIST;
    assert_true(svc_msg_kinds[SVC_M_LIST].is_read(&m));
    assert_null(svc_msg_kinds[SVC_M_SUBMIT].is_read);
    assert_null(svc_msg_kinds[SVC_M_OPRESULT].is_read);
    assert_null(svc_msg_kinds[SVC_M_CANCEL].is_read);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_submit_waits_for_durability, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idempotent_submit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unservable_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_done_frees_the_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_before_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_filters_and_pages, setup, teardown),
        cmocka_unit_test(test_failed_op_rolls_back),
        cmocka_unit_test_setup_teardown(test_sim_job_ends_by_the_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ready_and_cluster, setup, teardown),
        cmocka_unit_test(test_message_table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
