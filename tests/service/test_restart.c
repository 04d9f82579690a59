/* test_restart.c - start-up's reconciliation (src/service/restart.c,
 * recover.c, own.c) when the store and the backend's inventory disagree,
 * on the sim backend and a fake clock: the inventory is the truth for what
 * exists. A live job whose instances are all there is adopted and runs on;
 * an instance of a job the store does not know stops start-up (nothing
 * changed) unless --recovery adopt, which adopts it as a job of its own; a
 * job whose instance vanished is queued again and placed anew; a gang found
 * on part of its GPUs is dropped and placed anew; a hold does not outlive
 * the daemon; unsettled ops are abandoned, never replayed. A lost store
 * (issue 20, defect 10: start-up destroyed every running instance) and a
 * WAL cut after a crash: refused, then adopted; nothing destroyed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/fixture.h"

#define NODE "a=2xA100-40GB"

/* The sim's snapshot (a clean stop leaves the whole inventory in it). */
static json_t *inv_load(const fx_t *f)
{
    char path[128];
    json_t *o;

    snprintf(path, sizeof(path), "%s/sim-inventory.json", f->dir);
    assert_non_null(o = json_load_file(path, 0, NULL));
    return o;
}

static void inv_save(const fx_t *f, json_t *o)
{
    char path[128];

    snprintf(path, sizeof(path), "%s/sim-inventory.json", f->dir);
    assert_int_equal(json_dump_file(o, path, JSON_COMPACT), 0);
    json_decref(o);
}

/* Drop the instances tagged job on gpu (-1: any GPU). */
static void inv_drop(json_t *o, const char *job, int gpu)
{
    json_t *arr = json_object_get(o, "instances");
    size_t i = json_array_size(arr);

    while (i-- > 0) {
        json_t *x = json_array_get(arr, i);

        if (strcmp(json_string_value(json_object_get(x, "job")), job) == 0 &&
            (gpu < 0 || json_integer_value(json_object_get(x, "gpu")) == gpu))
            json_array_remove(arr, i);
    }
}

static void inv_add(json_t *o, int gpu, int start, int prof, const char *job)
{
    json_array_append_new(json_object_get(o, "instances"),
                          json_pack("{s:i,s:i,s:i,s:s,s:s}", "gpu", gpu, "start", start, "prof", prof, "job", job,
                                    "uuid", "MIG-00000000-0000-4000-8000-0000000000ff"));
}

static void sql_exec(const fx_t *f, const char *sql)
{
    char path[128];
    sqlite3 *db;

    snprintf(path, sizeof(path), "%s/migschedd.db", f->dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static int instances_of(fx_t *f, const char *job)
{
    ms_binst_t *inv;
    int n, i, k = 0;

    assert_int_equal(ms_backend_inventory(f->d.be, &inv, &n, NULL), MS_OK);
    for (i = 0; i < n; i++)
        k += strcmp(inv[i].job, job) == 0;
    free(inv);
    return k;
}

/* Submit body (job id): it waits. */
static void submit_queued(fx_t *f, const char *body, const char *id)
{
    svc_msg_t *m = fx_submit_msg(body);

    fx_batch(f, &m, 1);
    svc_msg_free(m);
    assert_int_equal(fx_state(f, id), MS_JOB_QUEUED);
}

static bool in_sync(fx_t *f)
{
    svc_msg_t *m = fx_msg(SVC_M_CLUSTER, NULL);
    json_t *o;
    bool yes;

    fx_batch(f, &m, 1);
    o = json_loads(m->body, 0, NULL);
    yes = json_is_true(json_object_get(json_object_get(o, "backend"), "in_sync"));
    json_decref(o);
    svc_msg_free(m);
    return yes;
}

static void test_store_and_inventory_disagree(void **state)
{
    fx_t f;
    char dir[64];
    json_t *inv;
    svc_msg_t *m;
    double t_start;

    (void)state;
    fx_setup(&f, NODE, "best-fit", NULL);
    fx_start(&f);
    /* kept: a live job whose instance is there */
    assert_int_equal(fx_run(&f, "{\"id\":\"keep\",\"profile\":\"3g.20gb\",\"duration_s\":100}"), MS_JOB_RUNNING);
    t_start = svc_jobs_find(&f.d.jobs, "keep")->start_t;
    /* lost: a live job whose instance will vanish */
    assert_int_equal(fx_run(&f, "{\"id\":\"lost\",\"profile\":\"1g.5gb\"}"), MS_JOB_RUNNING);
    /* a gang of two GPUs, of which one instance will vanish */
    assert_int_equal(fx_run(&f, "{\"id\":\"gang\",\"profile\":\"7g.40gb\",\"gang\":2}"), MS_JOB_QUEUED);
    /* half made: its plan journalled, never run */
    m = fx_submit_msg("{\"id\":\"half\",\"profile\":\"1g.5gb\"}");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    assert_true(fx_sql(&f, "SELECT COUNT(*) FROM ops WHERE result='pending'") >= 1);
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);

    inv = inv_load(&f);
    inv_drop(inv, "lost", -1);
    inv_add(inv, 1, 6, 0, "ghost");       /* an unknown job's instance (1g at 6) */
    inv_add(inv, 1, 5, 0, "");            /* an idle instance nothing wants */
    inv_save(&f, inv);
    sql_exec(&f, "INSERT INTO jobs(id, body, state, submit_t) VALUES('held',"
                 "'{\"id\":\"held\",\"profile\":\"1g.5gb\"}','reserved',1)");

    /* an unknown job's instance: start-up refuses, and changes nothing */
    fx_setup_dir(&f, dir, NODE, "best-fit", NULL);
    f.wall += 10;
    assert_int_equal(fx_try_start(&f), -1);
    assert_non_null(strstr(f.d.start_why, "job ghost on GPU 1"));
    assert_non_null(strstr(f.d.start_why, "--recovery adopt"));
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(instances_of(&f, "ghost"), 1);
    assert_int_equal(instances_of(&f, "keep"), 1);
    assert_int_equal(instances_of(&f, ""), 1);   /* the idle one */
    fx_stop(&f);
    /* told to adopt: ghost becomes a job of its own, nothing is destroyed */
    {
        const char *extra[] = { "--recovery", "adopt", NULL };

        fx_setup_dir(&f, dir, NODE, "best-fit", extra);
    }
    f.wall += 10;
    fx_start(&f);
    assert_int_equal(f.d.adopted, 2);
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(fx_state(&f, "keep"), MS_JOB_RUNNING);
    /* a sim job keeps its original end: 100 s after its start */
    assert_true(svc_jobs_find(&f.d.jobs, "keep")->finish_at == t_start + 100);
    assert_int_equal(instances_of(&f, "ghost"), 1);
    assert_int_equal(fx_state(&f, "ghost"), MS_JOB_RUNNING);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM jobs WHERE id='ghost' AND body LIKE '%recovered%'"), 1);
    assert_int_equal(fx_state(&f, "held"), MS_JOB_CANCELLED);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM events WHERE job='lost' AND state='queued'"), 2);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM ops WHERE result='pending'"), 0);
    assert_true(fx_sql(&f, "SELECT COUNT(*) FROM ops WHERE result='abandoned'") >= 1);
    assert_int_equal(svc_store_unsettled(f.d.store), 0);
    /* what lost its instance is placed anew, nothing is created twice */
    while (fx_exec(&f) > 0)
        ;
    assert_int_equal(fx_state(&f, "lost"), MS_JOB_RUNNING);
    assert_int_equal(fx_state(&f, "half"), MS_JOB_RUNNING);
    assert_int_equal(instances_of(&f, "keep"), 1);
    assert_int_equal(instances_of(&f, "lost"), 1);
    assert_int_equal(instances_of(&f, "half"), 1);
    assert_true(in_sync(&f));
    fx_teardown(&f);
}

/* A gang found on only part of its GPUs is not adopted: the part left is
 * destroyed and the gang placed anew, on all its GPUs. */
static void test_partial_gang_placed_anew(void **state)
{
    fx_t f;
    char dir[64];
    json_t *inv;

    (void)state;
    fx_setup(&f, NODE, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"g\",\"profile\":\"7g.40gb\",\"gang\":2}"), MS_JOB_RUNNING);
    assert_int_equal(instances_of(&f, "g"), 2);
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    inv = inv_load(&f);
    inv_drop(inv, "g", 1);
    inv_save(&f, inv);
    fx_setup_dir(&f, dir, NODE, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(f.d.adopted, 0);
    assert_int_equal(f.d.destroyed_at_start, 1);
    assert_int_not_equal(fx_state(&f, "g"), MS_JOB_RUNNING);
    while (fx_exec(&f) > 0)
        ;
    assert_int_equal(fx_state(&f, "g"), MS_JOB_RUNNING);
    assert_int_equal(instances_of(&f, "g"), 2);
    assert_true(in_sync(&f));
    fx_teardown(&f);
}

/* A job the nodes can no longer hold fails after the restart, with why. */
static void test_job_that_no_longer_fits_fails(void **state)
{
    fx_t f;
    char dir[64];
    svc_job_t *j;

    (void)state;
    fx_setup(&f, NODE, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"g1\",\"profile\":\"7g.40gb\",\"gang\":2}"), MS_JOB_RUNNING);
    submit_queued(&f, "{\"id\":\"g2\",\"profile\":\"7g.40gb\",\"gang\":2}", "g2");
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    {
        json_t *inv = inv_load(&f);   /* the node shrank to one GPU */

        inv_drop(inv, "g1", -1);
        json_object_set_new(inv, "ngpus", json_integer(1));
        inv_save(&f, inv);
    }
    fx_setup_dir(&f, dir, "a=1xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    assert_non_null(j = svc_jobs_find(&f.d.jobs, "g2"));
    assert_int_equal(j->state, MS_JOB_FAILED);
    assert_non_null(strstr(j->reason, "after restart"));
    fx_teardown(&f);
}

/* Issue 20, defect 10: a lost store made start-up destroy every running
 * instance as unowned. Now it refuses, with the reason, and changes
 * nothing; told to adopt, it adopts every instance as a running job. */
static void test_lost_store(void **state)
{
    fx_t f;
    char dir[64], cmd[256];
    const char *extra[] = { "--recovery", "adopt", NULL };

    (void)state;
    fx_setup(&f, NODE, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"a\",\"profile\":\"3g.20gb\"}"), MS_JOB_RUNNING);
    assert_int_equal(fx_run(&f, "{\"id\":\"g\",\"profile\":\"7g.40gb\",\"gang\":1}"), MS_JOB_RUNNING);
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    snprintf(cmd, sizeof(cmd), "rm -f '%s'/migschedd.db '%s'/migschedd.db-wal '%s'/migschedd.db-shm", dir, dir, dir);
    assert_int_equal(system(cmd), 0);

    fx_setup_dir(&f, dir, NODE, "best-fit", NULL);
    assert_int_equal(fx_try_start(&f), -1);
    assert_non_null(strstr(f.d.start_why, "store is missing"));
    assert_non_null(strstr(f.d.start_why, "2 instances of jobs the store does not know"));
    assert_int_equal(instances_of(&f, "a"), 1);
    assert_int_equal(instances_of(&f, "g"), 1);
    fx_stop(&f);
    /* refused again: the refusal wrote nothing */
    fx_setup_dir(&f, dir, NODE, "best-fit", NULL);
    assert_int_equal(fx_try_start(&f), -1);
    fx_stop(&f);

    fx_setup_dir(&f, dir, NODE, "best-fit", extra);
    fx_start(&f);
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(f.d.adopted, 2);
    assert_int_equal(fx_state(&f, "a"), MS_JOB_RUNNING);
    assert_int_equal(fx_state(&f, "g"), MS_JOB_RUNNING);
    assert_int_equal(instances_of(&f, "a"), 1);
    assert_true(in_sync(&f));
    fx_stop(&f);
    /* from here the store is whole again: a plain start agrees */
    fx_setup_dir(&f, dir, NODE, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_state(&f, "a"), MS_JOB_RUNNING);
    assert_int_equal(f.d.destroyed_at_start, 0);
    fx_teardown(&f);
}

/* The WAL cut after a crash (what kill -9 leaves, copied while the store
 * is open, then truncated): acknowledged commits are missing. Refused;
 * adopted when told; nothing destroyed, and every job that had an
 * instance runs. */
static void test_wal_cut_after_a_crash(void **state)
{
    fx_t f;
    char dir[64], crash[80], cmd[512];
    const char *extra[] = { "--recovery", "adopt", NULL };

    (void)state;
    fx_setup(&f, NODE, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"a\",\"profile\":\"3g.20gb\"}"), MS_JOB_RUNNING);
    assert_int_equal(fx_run(&f, "{\"id\":\"b\",\"profile\":\"1g.5gb\"}"), MS_JOB_RUNNING);
    snprintf(dir, sizeof(dir), "%s", f.dir);
    snprintf(crash, sizeof(crash), "%s-crash", dir);
    snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s' && truncate -s 32 '%s'/migschedd.db-wal", dir, crash, crash);
    assert_int_equal(system(cmd), 0);
    fx_teardown(&f);

    fx_setup_dir(&f, crash, NODE, "best-fit", NULL);
    assert_int_equal(fx_try_start(&f), -1);
    /* (the schema itself was only in the WAL: the store reads as missing) */
    if (strstr(f.d.start_why, "acknowledged") == NULL)
        fail_msg("%s", f.d.start_why);
    assert_int_equal(instances_of(&f, "a"), 1);
    assert_int_equal(instances_of(&f, "b"), 1);
    fx_stop(&f);
    fx_setup_dir(&f, crash, NODE, "best-fit", extra);
    fx_start(&f);
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(fx_state(&f, "a"), MS_JOB_RUNNING);
    assert_int_equal(fx_state(&f, "b"), MS_JOB_RUNNING);
    assert_true(in_sync(&f));
    fx_teardown(&f);
}

/* An instance another owner tagged (the agent's DRA driver: dra:<claim
 * uid>) is neither a reason to refuse start-up nor ever destroyed: its
 * slices are held in the view, a forced destroy of it and a cancel of the
 * job that holds it are refused, and the next job is placed around it.
 * (On main start-up refused, and with --recovery adopt a cancel
 * destroyed it.) */
static void test_foreign_instance_never_destroyed(void **state)
{
    fx_t f;
    char dir[64];
    json_t *inv;
    ms_backend_op_t op;
    ms_diag_t why;
    svc_msg_t *m;

    (void)state;
    fx_setup(&f, NODE, "best-fit", NULL);
    fx_start(&f);
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    inv = inv_load(&f);
    inv_add(inv, 0, 0, 4, "dra:claim-1");   /* a 7g.40gb on GPU 0 */
    inv_save(&f, inv);

    fx_setup_dir(&f, dir, NODE, "best-fit", NULL);
    f.wall += 10;
    fx_start(&f);
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(instances_of(&f, "dra:claim-1"), 1);
    /* a forced destroy (start-up's kind) is refused */
    memset(&op, 0, sizeof(op));
    op.op.kind = MS_OP_DESTROY;
    op.op.gpu = 0;
    op.op.start = 0;
    op.op.prof = 4;
    op.job = "";
    op.profile = "7g.40gb";
    op.force = true;
    assert_int_equal(ms_backend_run(f.d.be, &op, &why), MS_ESTATE);
    assert_non_null(strstr(why.msg, "another owner"));
    /* the next 7g goes to the other GPU; a third finds no room */
    assert_int_equal(fx_run(&f, "{\"id\":\"big\",\"profile\":\"7g.40gb\"}"), MS_JOB_RUNNING);
    assert_int_equal(svc_jobs_find(&f.d.jobs, "big")->place.gpu, 1);
    /* a cancel of what holds it does not destroy it */
    m = fx_msg(SVC_M_CANCEL, "dra:claim-1");
    fx_batch(&f, &m, 1);
    svc_msg_free(m);
    fx_exec(&f);
    fx_exec(&f);
    assert_int_equal(instances_of(&f, "dra:claim-1"), 1);
    fx_teardown(&f);
}

/* A queued job's wait and a victim's kept run outlive the daemon: start-up
 * submits the queued job with its wait so far (the scheduler's submit time
 * is the stored one, not the restart's) and with the run its checkpoints
 * kept (a preemption's, stored in kept_s). */
static void test_wait_and_kept_run_restored(void **state)
{
    fx_t f;
    char dir[64];
    svc_job_t *j;
    ms_sched_job_info_t in;

    (void)state;
    fx_setup(&f, NODE, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(fx_run(&f, "{\"id\":\"r1\",\"profile\":\"7g.40gb\"}"), MS_JOB_RUNNING);
    assert_int_equal(fx_run(&f, "{\"id\":\"r2\",\"profile\":\"7g.40gb\"}"), MS_JOB_RUNNING);
    submit_queued(&f, "{\"id\":\"q\",\"profile\":\"7g.40gb\",\"checkpoint_s\":60}", "q");
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    /* as a preemption leaves it (tests/cli/test_service_preempt.sh writes
     * it so, through a kill -9) */
    sql_exec(&f, "UPDATE jobs SET kept_s = 120 WHERE id = 'q'");
    fx_setup_dir(&f, dir, NODE, "best-fit", NULL);
    f.wall += 500.0;   /* down for 500 s */
    fx_start(&f);
    assert_non_null(j = svc_jobs_find(&f.d.jobs, "q"));
    assert_int_equal(j->state, MS_JOB_QUEUED);
    assert_int_equal(ms_sched_job(f.d.sched, j->slot, &in), MS_OK);
    assert_true(in.submit_t == 1000000.0);   /* not the restart's time */
    assert_true(in.kept_s == 120.0);
    assert_true(j->kept_s == 120.0);
    fx_teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_store),
        cmocka_unit_test(test_foreign_instance_never_destroyed),
        cmocka_unit_test(test_wal_cut_after_a_crash),
        cmocka_unit_test(test_store_and_inventory_disagree),
        cmocka_unit_test(test_partial_gang_placed_anew),
        cmocka_unit_test(test_job_that_no_longer_fits_fails),
        cmocka_unit_test(test_wait_and_kept_run_restored),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
