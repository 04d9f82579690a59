/* test_store.c - the daemon's store (src/service/store.c, store_meta.c) on a
 * real SQLite file: a job reads back as it was written (its request from
 * the columns, its state, times and placement); only committed
 * transactions survive a reopen; plans and their ops are journalled pending
 * and settle; the unsettled are counted and abandoned; events keep their
 * sequence. The schema's version: a new store is at SVC_STORE_SCHEMA, a
 * store from before the version is migrated with its jobs, one from a
 * newer migschedd is refused. Acknowledged commits that went missing (the
 * store deleted, its WAL truncated after a kill -9) are found at open. A
 * write that fails (a full disk) fails its transaction's commit, and the
 * same writes commit once there is room. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "service/svc.h"

typedef struct loaded {
    svc_job_t *v[8];
    int n;
} loaded_t;

static int keep(void *ctx, svc_job_t *j)
{
    loaded_t *l = ctx;

    if (l->n == 8) {
        svc_job_free(j);
        return -1;
    }
    l->v[l->n++] = j;
    return 0;
}

static void loaded_free(loaded_t *l)
{
    int i;

    for (i = 0; i < l->n; i++)
        svc_job_free(l->v[i]);
    l->n = 0;
}

static svc_job_t *job(const char *id, const char *body)
{
    svc_job_t *j = calloc(1, sizeof(*j));
    svc_err_t err;
    char *rid = NULL;

    assert_non_null(j);
    assert_non_null(j->id = strdup(id));
    assert_int_equal(svc_req_parse(body, strlen(body), &rid, &j->req, &j->body, &err), 0);
    free(rid);
    j->slot = -1;
    j->place.node = -1;
    j->state = MS_JOB_QUEUED;
    j->submit_t = 100.5;
    return j;
}

static void test_jobs_round_trip(void **state)
{
    char dir[64] = "/tmp/ms-store-XXXXXX", cmd[96];
    svc_store_t *s;
    svc_job_t *a, *b;
    loaded_t l = { { 0 }, 0 };

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(svc_store_open(&s, dir), 0);
    a = job("a", "{\"profile\":\"3g.20gb\",\"priority\":3,\"duration_s\":12.5,\"labels\":{\"k\":\"v\"},"
                 "\"checkpoint_s\":600}");
    b = job("b", "{\"mem_gb\":10,\"gang\":2,\"migratable\":true}");
    assert_int_equal(svc_store_begin(s), 0);
    assert_int_equal(svc_store_job_insert(s, a), 0);
    assert_int_equal(svc_store_job_insert(s, b), 0);
    assert_true(a->seq > 0 && b->seq > a->seq);
    assert_int_equal(svc_store_commit(s), 0);
    /* an update committed, one rolled back */
    a->state = MS_JOB_RUNNING;
    a->start_t = 101.25;
    a->place.node = 0;
    snprintf(a->place.node_name, sizeof(a->place.node_name), "n1");
    a->place.gpu = 1;
    a->place.start = 4;
    snprintf(a->place.profile, sizeof(a->place.profile), "3g.20gb");
    a->place.ninst = 1;
    a->kept_s = 37.5;   /* a preemption kept that much of its run */
    assert_int_equal(svc_store_begin(s), 0);
    assert_int_equal(svc_store_job_update(s, a), 0);
    assert_int_equal(svc_store_commit(s), 0);
    b->state = MS_JOB_FAILED;
    assert_int_equal(svc_store_begin(s), 0);
    assert_int_equal(svc_store_job_update(s, b), 0);
    svc_store_rollback(s);
    assert_int_equal(svc_store_sync(s), 0);
    svc_store_close(s);

    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_int_equal(svc_store_load(s, keep, &l), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[0]->id, "a");
    assert_string_equal(l.v[0]->body, a->body);
    assert_int_equal(l.v[0]->state, MS_JOB_RUNNING);
    assert_true(l.v[0]->start_t == 101.25 && l.v[0]->submit_t == 100.5);
    assert_string_equal(l.v[0]->place.node_name, "n1");
    assert_int_equal(l.v[0]->place.gpu, 1);
    assert_int_equal(l.v[0]->place.start, 4);
    assert_string_equal(l.v[0]->req.profile, "3g.20gb");
    assert_int_equal(l.v[0]->req.priority, 3);
    assert_true(l.v[0]->req.duration_s == 12.5);
    assert_true(l.v[0]->req.checkpoint_s == 600.0);   /* r_ckpt */
    assert_true(l.v[1]->req.checkpoint_s == 0.0);
    assert_true(l.v[0]->kept_s == 37.5);   /* kept_s, written by the update */
    assert_true(l.v[1]->kept_s == 0.0);
    assert_string_equal(l.v[1]->id, "b");
    assert_int_equal(l.v[1]->state, MS_JOB_QUEUED);   /* the rolled back update is gone */
    assert_int_equal(l.v[1]->req.gang, 2);
    assert_true(l.v[1]->req.migratable);
    assert_true(l.v[1]->req.mem_gb == 10);
    loaded_free(&l);
    svc_store_close(s);
    svc_job_free(a);
    svc_job_free(b);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_plans_events_and_abandon(void **state)
{
    char dir[64] = "/tmp/ms-store-XXXXXX", cmd[96];
    svc_store_t *s;
    svc_xop_t ops[3];
    int64_t p1, p2;
    int i;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_int_equal(svc_store_last_event(s), 0);
    memset(ops, 0, sizeof(ops));
    for (i = 0; i < 3; i++) {
        ops[i].op.kind = (uint8_t)(i == 0 ? MS_OP_CREATE : MS_OP_START);
        ops[i].idx = i;
        snprintf(ops[i].job, sizeof(ops[i].job), "j%d", i);
    }
    assert_int_equal(svc_store_begin(s), 0);
    assert_int_equal(svc_store_plan(s, "place", 1.0, ops, 3, &p1), 0);
    assert_int_equal(svc_store_plan(s, "place", 2.0, ops, 2, &p2), 0);
    assert_true(p1 > 0 && p2 > p1);
    assert_int_equal(svc_store_event(s, 7, "j0", "queued", 1.0), 0);
    assert_int_equal(svc_store_event(s, 8, "j0", "starting", 1.0), 0);
    assert_int_equal(svc_store_commit(s), 0);
    assert_int_equal(svc_store_unsettled(s), 5);   /* every op pending */
    assert_int_equal(svc_store_last_event(s), 8);
    assert_int_equal(svc_store_begin(s), 0);
    assert_int_equal(svc_store_op_result(s, p1, 0, "done", 3.0), 0);
    assert_int_equal(svc_store_op_result(s, p1, 1, "failed", 3.0), 0);
    assert_int_equal(svc_store_op_result(s, p1, 2, "discarded", 3.0), 0);
    assert_int_equal(svc_store_commit(s), 0);
    assert_int_equal(svc_store_unsettled(s), 2);
    assert_int_equal(svc_store_begin(s), 0);
    assert_int_equal(svc_store_abandon(s, 4.0), 0);
    assert_int_equal(svc_store_commit(s), 0);
    assert_int_equal(svc_store_unsettled(s), 0);
    svc_store_close(s);
    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_int_equal(svc_store_unsettled(s), 0);
    assert_int_equal(svc_store_last_event(s), 8);
    svc_store_close(s);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* SQL on the store's database through a connection of its own. */
static long sql_long(const char *dir, const char *sql)
{
    char path[128];
    sqlite3 *db;
    sqlite3_stmt *st;
    long v = -1;

    snprintf(path, sizeof(path), "%s/migschedd.db", dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void sql_do(const char *dir, const char *sql)
{
    char path[128];
    sqlite3 *db;

    snprintf(path, sizeof(path), "%s/migschedd.db", dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static void rm_dir(const char *dir)
{
    char cmd[96];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* One committed, synced transaction with a job named id. */
static void commit_job(svc_store_t *s, const char *id)
{
    svc_job_t *j = job(id, "{\"profile\":\"1g.5gb\"}");

    assert_int_equal(svc_store_begin(s), 0);
    assert_int_equal(svc_store_job_insert(s, j), 0);
    assert_int_equal(svc_store_commit(s), 0);
    assert_int_equal(svc_store_sync(s), 0);
    svc_job_free(j);
}

static void test_schema_version(void **state)
{
    char dir[64] = "/tmp/ms-store-XXXXXX", why[512];
    svc_store_t *s;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(svc_store_open_err(&s, dir, why, sizeof(why)), 0);
    assert_true(svc_store_fresh(s));
    svc_store_close(s);
    assert_int_equal(sql_long(dir, "PRAGMA user_version"), SVC_STORE_SCHEMA);
    assert_int_equal(svc_store_open_err(&s, dir, why, sizeof(why)), 0);
    assert_false(svc_store_fresh(s));
    svc_store_close(s);
    /* a newer migschedd's store: refused, untouched */
    sql_do(dir, "PRAGMA user_version=7");
    assert_int_equal(svc_store_open_err(&s, dir, why, sizeof(why)), -1);
    assert_null(s);
    assert_non_null(strstr(why, "newer migschedd"));
    assert_non_null(strstr(why, "schema 7"));
    assert_int_equal(sql_long(dir, "PRAGMA user_version"), 7);
    rm_dir(dir);
}

static void test_migrates_an_old_store(void **state)
{
    char dir[64] = "/tmp/ms-store-XXXXXX", why[512];
    svc_store_t *s;
    loaded_t l = { { 0 }, 0 };

    (void)state;
    assert_non_null(mkdtemp(dir));
    /* the schema of the first stores: no request columns, no version */
    sql_do(dir, "CREATE TABLE jobs(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,"
                " state TEXT NOT NULL, submit_t REAL, start_t REAL, end_t REAL, placement TEXT, reason TEXT);"
                "CREATE TABLE plans(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, t REAL);"
                "CREATE TABLE ops(plan INTEGER NOT NULL, idx INTEGER NOT NULL, op_id INTEGER, kind TEXT,"
                " gpu INTEGER, start INTEGER, prof INTEGER, from_gpu INTEGER, from_start INTEGER, bbm INTEGER,"
                " job TEXT, result TEXT NOT NULL, t REAL, PRIMARY KEY(plan, idx));"
                "CREATE TABLE events(seq INTEGER PRIMARY KEY, job TEXT, state TEXT, t REAL);"
                "INSERT INTO jobs(id, body, state, submit_t) VALUES('old', '{\"profile\":\"2g.10gb\"}', 'queued', 5);");
    assert_int_equal(sql_long(dir, "PRAGMA user_version"), 0);
    assert_int_equal(svc_store_open_err(&s, dir, why, sizeof(why)), 0);
    assert_false(svc_store_fresh(s));
    assert_int_equal(svc_store_load(s, keep, &l), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.v[0]->id, "old");
    assert_int_equal(l.v[0]->req.gang, 0);   /* no columns: the body is parsed at restart */
    loaded_free(&l);
    commit_job(s, "new");
    svc_store_close(s);
    assert_int_equal(sql_long(dir, "PRAGMA user_version"), SVC_STORE_SCHEMA);
    assert_int_equal(sql_long(dir, "SELECT r_gang FROM jobs WHERE id='new'"), 1);
    assert_int_equal(sql_long(dir, "SELECT count(*) FROM jobs WHERE r_ckpt = 0"), 1);   /* added, written */
    assert_int_equal(sql_long(dir, "SELECT count(*) FROM jobs WHERE kept_s = 0"), 1);
    assert_int_equal(sql_long(dir, "SELECT v FROM meta WHERE k='commit_seq'"), 1);
    rm_dir(dir);
}

/* In a child that exits without closing (a kill -9 leaves the WAL as it
 * is): n committed, synced transactions. */
static void commits_then_crash(const char *dir, const char *prefix, int n)
{
    pid_t pid = fork();
    int st, i;

    assert_true(pid >= 0);
    if (pid == 0) {   /* no cmocka assertion here: it would jump into the parent's copy */
        svc_store_t *s;
        svc_job_t j;
        char id[16];

        if (svc_store_open(&s, dir) != 0)
            _exit(1);
        for (i = 0; i < n; i++) {
            memset(&j, 0, sizeof(j));
            snprintf(id, sizeof(id), "%s%d", prefix, i);
            j.id = id;
            j.body = (char *)(uintptr_t)"{\"profile\":\"1g.5gb\"}";
            j.req.gang = 1;
            j.place.node = -1;
            if (svc_store_begin(s) != 0 || svc_store_job_insert(s, &j) != 0 || svc_store_commit(s) != 0 ||
                svc_store_sync(s) != 0)
                _exit(2 + i);
        }
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_lost_acknowledged_commits(void **state)
{
    char dir[64] = "/tmp/ms-store-XXXXXX", why[512], path[128], cmd[256];
    svc_store_t *s;

    (void)state;
    assert_non_null(mkdtemp(dir));
    commits_then_crash(dir, "a", 3);
    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_false(svc_store_damaged(s, why, sizeof(why)));   /* all 3 replayed from the WAL */
    svc_store_close(s);

    /* the WAL cut back to its header after a crash: the commits in it are gone */
    commits_then_crash(dir, "b", 2);
    snprintf(path, sizeof(path), "%s/migschedd.db-wal", dir);
    assert_int_equal(truncate(path, 32), 0);
    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_true(svc_store_damaged(s, why, sizeof(why)));
    assert_non_null(strstr(why, "WAL was damaged or truncated"));
    /* told to go on: what it holds counts from here */
    assert_int_equal(svc_store_accept(s), 0);
    svc_store_close(s);
    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_false(svc_store_damaged(s, why, sizeof(why)));
    svc_store_close(s);

    /* the store deleted, the sidecar left: a lost store */
    snprintf(cmd, sizeof(cmd), "rm -f '%s'/migschedd.db '%s'/migschedd.db-wal '%s'/migschedd.db-shm", dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_true(svc_store_fresh(s));
    assert_true(svc_store_damaged(s, why, sizeof(why)));
    assert_non_null(strstr(why, "store is missing"));
    svc_store_close(s);
    rm_dir(dir);
}

static void test_full_disk_fails_the_commit(void **state)
{
    char dir[64] = "/tmp/ms-store-XXXXXX";
    svc_store_t *s;
    svc_job_t *v[400];
    loaded_t l = { { 0 }, 0 };
    char id[16], why[256];
    int i, n = 0, failed = 0;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(svc_store_open(&s, dir), 0);
    commit_job(s, "before");
    /* no page more than the database has now: the disk is full */
    svc_store_set_max_pages(s, 1);
    assert_int_equal(svc_store_begin(s), 0);
    for (i = 0; i < 400; i++) {
        snprintf(id, sizeof(id), "j%03d", i);
        v[n] = job(id, "{\"profile\":\"1g.5gb\",\"labels\":{\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}");
        if (svc_store_job_insert(s, v[n]) != 0)
            failed++;
        n++;
    }
    assert_true(failed > 0);
    assert_int_equal(svc_store_commit(s), -1);   /* never with a write missing */
    assert_int_equal(svc_store_error(s, why, sizeof(why)) & 0xff, SQLITE_FULL);
    assert_non_null(strstr(why, "disk is full"));
    svc_store_rollback(s);
    /* space returns: the same rows, written again, commit */
    svc_store_set_max_pages(s, 1073741823);
    assert_int_equal(svc_store_begin(s), 0);
    for (i = 0; i < n; i++)   /* the rows that had a seq first, as redo.c does */
        if (v[i]->seq != 0)
            assert_int_equal(svc_store_job_put(s, v[i]), 0);
    for (i = 0; i < n; i++)
        if (v[i]->seq == 0)
            assert_int_equal(svc_store_job_put(s, v[i]), 0);
    assert_int_equal(svc_store_commit(s), 0);
    assert_int_equal(svc_store_sync(s), 0);
    svc_store_close(s);
    assert_int_equal(sql_long(dir, "SELECT COUNT(*) FROM jobs"), n + 1);
    assert_int_equal(sql_long(dir, "SELECT COUNT(DISTINCT seq) FROM jobs"), n + 1);
    assert_int_equal(svc_store_open(&s, dir), 0);
    assert_int_equal(svc_store_load(s, keep, &l), -1);   /* keep holds 8: it stops the load */
    assert_string_equal(l.v[0]->id, "before");
    assert_string_equal(l.v[1]->id, "j000");
    loaded_free(&l);
    svc_store_close(s);
    for (i = 0; i < n; i++)
        svc_job_free(v[i]);
    rm_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_round_trip),
        cmocka_unit_test(test_plans_events_and_abandon),
        cmocka_unit_test(test_schema_version),
        cmocka_unit_test(test_migrates_an_old_store),
        cmocka_unit_test(test_lost_acknowledged_commits),
        cmocka_unit_test(test_full_disk_fails_the_commit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
