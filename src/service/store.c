/* store.c - durable state in STATE_DIR/migschedd.db (SQLite, WAL,
 * synchronous=FULL: a committed transaction survives a crash and a power
 * cut). The loop thread is the only user.
 *
 *   jobs    every acknowledged job: its canonical request and its last state
 *   plans   every plan, journalled before its ops go to the executor
 *   ops     each op of a plan and its outcome (pending, done, failed,
 *           discarded, abandoned)
 *   events  the job state changes that GET /v1/events serves
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "service/svc.h"

enum { S_BEGIN, S_COMMIT, S_ROLLBACK, S_JINS, S_JUPD, S_PLAN, S_OP, S_OPRES, S_EVENT, S_N };

static const char *const SQL[S_N] = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    ("INSERT INTO jobs(id, body, state, submit_t, start_t, end_t, placement, reason, r_profile, r_mem_gb,"
     " r_model, r_iso, r_gang, r_prio, r_migr, r_dur, r_est) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
    "UPDATE jobs SET state=?, start_t=?, end_t=?, placement=?, reason=? WHERE seq=?",
    "INSERT INTO plans(kind, t) VALUES(?,?)",
    ("INSERT INTO ops(plan, idx, op_id, kind, gpu, start, prof, from_gpu, from_start, bbm, job, result)"
     " VALUES(?,?,?,?,?,?,?,?,?,?,?,'pending')"),
    "UPDATE ops SET result=?, t=? WHERE plan=? AND idx=?",
    "INSERT INTO events(seq, job, state, t) VALUES(?,?,?,?)",
};

/* The request's fields besides its canonical JSON (body), so that a restart
 * hands them to the scheduler without parsing 100,000 bodies (that was half
 * of the restart). A store from before them gets the columns added, NULL in
 * its old rows, which are parsed from the body as before. */
#define REQ_COLS ", r_profile TEXT, r_mem_gb REAL, r_model TEXT, r_iso INTEGER, r_gang INTEGER," \
                 " r_prio INTEGER, r_migr INTEGER, r_dur REAL, r_est REAL"
static const char *const REQ_ADD[] = {
    "r_profile TEXT", "r_mem_gb REAL", "r_model TEXT", "r_iso INTEGER", "r_gang INTEGER",
    "r_prio INTEGER", "r_migr INTEGER", "r_dur REAL", "r_est REAL",
};

static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS jobs(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
    " body TEXT NOT NULL, state TEXT NOT NULL, submit_t REAL, start_t REAL, end_t REAL,"
    " placement TEXT, reason TEXT" REQ_COLS ");"
    "CREATE TABLE IF NOT EXISTS plans(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, t REAL);"
    "CREATE TABLE IF NOT EXISTS ops(plan INTEGER NOT NULL, idx INTEGER NOT NULL, op_id INTEGER,"
    " kind TEXT, gpu INTEGER, start INTEGER, prof INTEGER, from_gpu INTEGER, from_start INTEGER,"
    " bbm INTEGER, job TEXT, result TEXT NOT NULL, t REAL, PRIMARY KEY(plan, idx));"
    "CREATE INDEX IF NOT EXISTS ops_pending ON ops(result) WHERE result='pending';"
    "CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY, job TEXT, state TEXT, t REAL);";

struct svc_store {
    sqlite3 *db;
    sqlite3_stmt *st[S_N];
    int wal_fd;                    /* the WAL, for svc_store_sync */
};

static void log_db(svc_store_t *s, const char *what)
{
    svc_log("error", "store", json_pack("{s:s,s:s}", "op", what, "sqlite", sqlite3_errmsg(s->db)));
}

/* A store made before the request columns: add them (NULL in old rows). */
static int add_req_cols(svc_store_t *s)
{
    sqlite3_stmt *st;
    bool have = false;
    size_t i;
    int r;

    if (sqlite3_prepare_v2(s->db, "PRAGMA table_info(jobs)", -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);

        if (name != NULL && strcmp(name, "r_gang") == 0)
            have = true;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return -1;
    for (i = 0; !have && i < sizeof(REQ_ADD) / sizeof(REQ_ADD[0]); i++) {
        char sql[128];

        snprintf(sql, sizeof(sql), "ALTER TABLE jobs ADD COLUMN %s", REQ_ADD[i]);
        if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return -1;
    }
    return 0;
}

/* The WAL exists once the schema's transaction wrote it (journal_mode=WAL
 * keeps it while the connection is open); its directory entry is made
 * durable once here. */
static int open_wal(svc_store_t *s, const char *dir)
{
    char path[4096];
    int dfd;

    snprintf(path, sizeof(path), "%s/migschedd.db-wal", dir);
    if ((s->wal_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    if ((dfd = open(dir, O_RDONLY | O_CLOEXEC)) >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return fsync(s->wal_fd) == 0 ? 0 : -1;
}

int svc_store_sync(svc_store_t *s)
{
    return fdatasync(s->wal_fd) == 0 ? 0 : -1;
}

int svc_store_open(svc_store_t **out, const char *dir)
{
    svc_store_t *s = calloc(1, sizeof(*s));
    char path[4096];
    int i;

    *out = NULL;
    if (s == NULL)
        return -1;
    s->wal_fd = -1;
    if ((size_t)snprintf(path, sizeof(path), "%s/migschedd.db-wal", dir) >= sizeof(path) ||
        (size_t)snprintf(path, sizeof(path), "%s/migschedd.db", dir) >= sizeof(path)) {
        free(s);
        return -1;
    }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        log_db(s, "open");
        svc_store_close(s);
        return -1;
    }
    sqlite3_busy_timeout(s->db, 5000);
    /* synchronous=NORMAL: a commit writes the WAL but does not fsync it;
     * svc_store_sync does, on the syncer thread, before anything the
     * commit holds is acknowledged (checkpoints still sync as SQLite does) */
    if (sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(s->db, SCHEMA, NULL, NULL, NULL) != SQLITE_OK) {
        log_db(s, "schema");
        svc_store_close(s);
        return -1;
    }
    if (open_wal(s, dir) != 0) {
        svc_log("error", "store: cannot open the WAL for syncing", json_pack("{s:s}", "dir", dir));
        svc_store_close(s);
        return -1;
    }
    if (add_req_cols(s) != 0) {
        log_db(s, "schema: the request columns");
        svc_store_close(s);
        return -1;
    }
    for (i = 0; i < S_N; i++)
        if (sqlite3_prepare_v2(s->db, SQL[i], -1, &s->st[i], NULL) != SQLITE_OK) {
            log_db(s, SQL[i]);
            svc_store_close(s);
            return -1;
        }
    *out = s;
    return 0;
}

void svc_store_close(svc_store_t *s)
{
    int i;

    if (s == NULL)
        return;
    for (i = 0; i < S_N; i++)
        sqlite3_finalize(s->st[i]);
    sqlite3_close(s->db);
    if (s->wal_fd >= 0)
        close(s->wal_fd);
    free(s);
}

/* Run statement k and reset it. Every statement binds all of its
 * parameters on every use, so the bindings are not cleared (that, and
 * copying each bound string, was a seventh of the loop's time a submission:
 * docs/performance.md). */
static int step(svc_store_t *s, int k)
{
    int rc = sqlite3_step(s->st[k]);

    sqlite3_reset(s->st[k]);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        log_db(s, SQL[k]);
        return -1;
    }
    return 0;
}

int svc_store_begin(svc_store_t *s) { return step(s, S_BEGIN); }
int svc_store_commit(svc_store_t *s) { return step(s, S_COMMIT); }
void svc_store_rollback(svc_store_t *s) { (void)step(s, S_ROLLBACK); }

/* Written as text (jtext.h): sync_job stores it on every state change. */
static char *place_json(const svc_job_t *j)
{
    svc_jtext_t t = { 0 };

    if (j->place.node < 0)
        return NULL;
    svc_jtext_raw(&t, "{\"node\":");
    svc_jtext_str(&t, j->place.node_name);
    svc_jtext_raw(&t, ",\"gpu\":");
    svc_jtext_int(&t, j->place.gpu);
    svc_jtext_raw(&t, ",\"gpu_global\":");
    svc_jtext_int(&t, j->place.gpu_global);
    svc_jtext_raw(&t, ",\"start\":");
    svc_jtext_int(&t, j->place.start);
    svc_jtext_raw(&t, ",\"profile\":");
    svc_jtext_str(&t, j->place.profile);
    svc_jtext_raw(&t, ",\"gpus\":");
    svc_jtext_int(&t, j->place.ninst);
    svc_jtext_raw(&t, "}");
    return svc_jtext_take(&t);
}

/* SQLITE_STATIC: not copied. Every caller's string outlives the step(),
 * which resets the statement before it returns, and the next use binds
 * the parameter again before stepping. */
static void bind_text(sqlite3_stmt *st, int i, const char *t)
{
    if (t == NULL)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
}

int svc_store_job_insert(svc_store_t *s, svc_job_t *j)
{
    sqlite3_stmt *st = s->st[S_JINS];
    char *p = place_json(j);
    int rc;

    bind_text(st, 1, j->id);
    bind_text(st, 2, j->body);
    bind_text(st, 3, ms_job_state_name((ms_job_state_t)j->state));
    sqlite3_bind_double(st, 4, j->submit_t);
    sqlite3_bind_double(st, 5, j->start_t);
    sqlite3_bind_double(st, 6, j->end_t);
    bind_text(st, 7, p);
    bind_text(st, 8, j->reason);
    bind_text(st, 9, j->req.profile);
    sqlite3_bind_double(st, 10, j->req.mem_gb);
    bind_text(st, 11, j->req.model);
    sqlite3_bind_int(st, 12, (int)j->req.isolation);
    sqlite3_bind_int(st, 13, j->req.gang);
    sqlite3_bind_int(st, 14, j->req.priority);
    sqlite3_bind_int(st, 15, j->req.migratable ? 1 : 0);
    sqlite3_bind_double(st, 16, j->req.duration_s);
    sqlite3_bind_double(st, 17, j->req.estimate_s);
    rc = step(s, S_JINS);
    free(p);
    if (rc == 0)
        j->seq = (uint64_t)sqlite3_last_insert_rowid(s->db);
    return rc;
}

int svc_store_job_update(svc_store_t *s, const svc_job_t *j)
{
    sqlite3_stmt *st = s->st[S_JUPD];
    char *p = place_json(j);
    int rc;

    bind_text(st, 1, ms_job_state_name((ms_job_state_t)j->state));
    sqlite3_bind_double(st, 2, j->start_t);
    sqlite3_bind_double(st, 3, j->end_t);
    bind_text(st, 4, p);
    bind_text(st, 5, j->reason);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)j->seq);
    rc = step(s, S_JUPD);
    free(p);
    return rc;
}

static int state_of(const char *name)
{
    int k;

    for (k = 0; k < MS_JOB_NSTATES; k++)
        if (strcmp(ms_job_state_name((ms_job_state_t)k), name) == 0)
            return k;
    return -1;
}

static void load_place(svc_job_t *j, const char *text)
{
    json_error_t je;
    json_t *o = text != NULL ? json_loads(text, 0, &je) : NULL;
    const char *n;

    j->place.node = -1;
    if (o == NULL)
        return;
    n = json_string_value(json_object_get(o, "node"));
    snprintf(j->place.node_name, sizeof(j->place.node_name), "%s", n != NULL ? n : "");
    j->place.node = 0;   /* re-resolved from the name by the loop */
    j->place.gpu = (int)json_integer_value(json_object_get(o, "gpu"));
    j->place.gpu_global = (int)json_integer_value(json_object_get(o, "gpu_global"));
    j->place.start = (int)json_integer_value(json_object_get(o, "start"));
    j->place.ninst = (int)json_integer_value(json_object_get(o, "gpus"));
    n = json_string_value(json_object_get(o, "profile"));
    snprintf(j->place.profile, sizeof(j->place.profile), "%s", n != NULL ? n : "");
    json_decref(o);
}

/* The stored request columns (9..17) into r; labels stay NULL (the job
 * table reads them from the body when a query needs them). */
static int load_req(sqlite3_stmt *st, svc_req_t *r)
{
    const char *prof = (const char *)sqlite3_column_text(st, 9);
    const char *model = (const char *)sqlite3_column_text(st, 11);

    if ((prof != NULL && (r->profile = strdup(prof)) == NULL) ||
        (model != NULL && (r->model = strdup(model)) == NULL))
        return -1;
    r->mem_gb = sqlite3_column_double(st, 10);
    r->isolation = (ms_isolation_t)sqlite3_column_int(st, 12);
    r->gang = sqlite3_column_int(st, 13);
    r->priority = sqlite3_column_int(st, 14);
    r->migratable = sqlite3_column_int(st, 15) != 0;
    r->duration_s = sqlite3_column_double(st, 16);
    r->estimate_s = sqlite3_column_double(st, 17);
    return 0;
}

int svc_store_load(svc_store_t *s, int (*fn)(void *ctx, svc_job_t *j), void *ctx)
{
    sqlite3_stmt *st;
    int rc = 0, r;

    if (sqlite3_prepare_v2(s->db,
                           "SELECT seq, id, body, state, submit_t, start_t, end_t, placement, reason,"
                           " r_profile, r_mem_gb, r_model, r_iso, r_gang, r_prio, r_migr, r_dur, r_est"
                           " FROM jobs ORDER BY seq", -1, &st, NULL) != SQLITE_OK) {
        log_db(s, "load");
        return -1;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        svc_job_t *j = calloc(1, sizeof(*j));
        const char *id = (const char *)sqlite3_column_text(st, 1);
        const char *body = (const char *)sqlite3_column_text(st, 2);
        const char *state = (const char *)sqlite3_column_text(st, 3);
        const char *reason = (const char *)sqlite3_column_text(st, 8);

        if (j == NULL || id == NULL || body == NULL || state == NULL ||
            (j->id = strdup(id)) == NULL || (j->body = strdup(body)) == NULL ||
            (j->state = state_of(state)) < 0) {
            svc_job_free(j);
            rc = -1;
            break;
        }
        j->seq = (uint64_t)sqlite3_column_int64(st, 0);
        j->submit_t = sqlite3_column_double(st, 4);
        j->start_t = sqlite3_column_double(st, 5);
        j->end_t = sqlite3_column_double(st, 6);
        j->slot = -1;
        load_place(j, (const char *)sqlite3_column_text(st, 7));
        snprintf(j->reason, sizeof(j->reason), "%s", reason != NULL ? reason : "");
        if (sqlite3_column_type(st, 13) != SQLITE_NULL && load_req(st, &j->req) != 0) {
            svc_job_free(j);
            rc = -1;
            break;
        }
        if ((rc = fn(ctx, j)) != 0)
            break;
    }
    if (r != SQLITE_DONE && rc == 0) {
        log_db(s, "load");
        rc = -1;
    }
    sqlite3_finalize(st);
    return rc;
}

static const char *const OP_KIND[] = { "?", "create", "destroy", "start", "move", "stop" };

/* The plan's row, then a row per op (bound straight from the ops: a jansson
 * array in between cost more than the inserts, docs/performance.md). */
int svc_store_plan(svc_store_t *s, const char *kind, double t, const svc_xop_t *ops, int n,
                   int64_t *plan_id)
{
    sqlite3_stmt *st = s->st[S_PLAN];
    int i;

    bind_text(st, 1, kind);
    sqlite3_bind_double(st, 2, t);
    if (step(s, S_PLAN) != 0)
        return -1;
    *plan_id = sqlite3_last_insert_rowid(s->db);
    st = s->st[S_OP];
    for (i = 0; i < n; i++) {
        const ms_op_t *op = &ops[i].op;

        sqlite3_bind_int64(st, 1, *plan_id);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)ops[i].op_id);
        bind_text(st, 4, op->kind <= MS_OP_STOP ? OP_KIND[op->kind] : "?");
        sqlite3_bind_int(st, 5, (int)op->gpu);
        sqlite3_bind_int(st, 6, (int)op->start);
        sqlite3_bind_int(st, 7, (int)op->prof);
        sqlite3_bind_int(st, 8, (int)op->from_gpu);
        sqlite3_bind_int(st, 9, (int)op->from_start);
        sqlite3_bind_int(st, 10, (int)op->bbm);
        bind_text(st, 11, ops[i].job);
        if (step(s, S_OP) != 0)
            return -1;
    }
    return 0;
}

int svc_store_op_result(svc_store_t *s, int64_t plan_id, int idx, const char *result, double t)
{
    sqlite3_stmt *st = s->st[S_OPRES];

    bind_text(st, 1, result);
    sqlite3_bind_double(st, 2, t);
    sqlite3_bind_int64(st, 3, plan_id);
    sqlite3_bind_int(st, 4, idx);
    return step(s, S_OPRES);
}

int svc_store_event(svc_store_t *s, uint64_t seq, const char *job, const char *state, double t)
{
    sqlite3_stmt *st = s->st[S_EVENT];

    sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
    bind_text(st, 2, job);
    bind_text(st, 3, state);
    sqlite3_bind_double(st, 4, t);
    return step(s, S_EVENT);
}

static long scalar(svc_store_t *s, const char *sql)
{
    sqlite3_stmt *st;
    long v = 0;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

uint64_t svc_store_last_event(svc_store_t *s)
{
    return (uint64_t)scalar(s, "SELECT COALESCE(MAX(seq), 0) FROM events");
}

long svc_store_unsettled(svc_store_t *s)
{
    return scalar(s, "SELECT COUNT(*) FROM ops WHERE result='pending'");
}

int svc_store_abandon(svc_store_t *s, double t)
{
    char sql[128];

    snprintf(sql, sizeof(sql), "UPDATE ops SET result='abandoned', t=%.6f WHERE result='pending'", t);
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        log_db(s, "abandon");
        return -1;
    }
    return 0;
}
