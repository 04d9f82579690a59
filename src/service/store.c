/* store.c - durable state in STATE_DIR/migschedd.db (SQLite, WAL,
 * synchronous=NORMAL: a commit writes the WAL, and the syncer's fsync of it
 * makes it survive a crash and a power cut). The loop thread is the only
 * user of the connection; the syncer thread only fsyncs the WAL
 * (svc_store_sync); restart.c uses it on the main thread before the loop
 * starts.
 *
 *   jobs    every acknowledged job: its canonical request and its last state
 *   plans   every plan, journalled before its ops go to the executor
 *   ops     each op of a plan and its outcome (pending, done, failed,
 *           discarded, abandoned)
 *   events  the job state changes that GET /v1/events serves
 *   meta    the commit number (store_meta.c: the schema's version, its
 *           migration, and the check that no acknowledged commit is missing)
 *
 * A write that fails (a full disk: SQLITE_FULL) marks the open transaction
 * failed: its commit is refused and the caller rolls it back and writes it
 * again from memory later (redo.c), so a transaction is never committed
 * with one of its writes missing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/store_int.h"

static int step(svc_store_t *s, int k)
{
    return ms__store_step(s, k);
}

/* Written as text (jtext.h): sync_job stores it on every state change. */
static char *place_json(const svc_job_t *j)
{
    ms_jtext_t t = { 0 };

    if (j->place.node < 0)
        return NULL;
    ms_jtext_raw(&t, "{\"node\":");
    ms_jtext_str(&t, j->place.node_name);
    ms_jtext_raw(&t, ",\"gpu\":");
    ms_jtext_int(&t, j->place.gpu);
    ms_jtext_raw(&t, ",\"gpu_global\":");
    ms_jtext_int(&t, j->place.gpu_global);
    ms_jtext_raw(&t, ",\"start\":");
    ms_jtext_int(&t, j->place.start);
    ms_jtext_raw(&t, ",\"profile\":");
    ms_jtext_str(&t, j->place.profile);
    ms_jtext_raw(&t, ",\"gpus\":");
    ms_jtext_int(&t, j->place.ninst);
    ms_jtext_raw(&t, "}");
    return ms_jtext_take(&t);
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

/* A job's columns into st from parameter o + 1 on (id .. kept_s); the
 * placement's text is the caller's to free once stepped. */
static void bind_job(sqlite3_stmt *st, int o, const svc_job_t *j, const char *place)
{
    bind_text(st, o + 1, j->id);
    bind_text(st, o + 2, j->body);
    bind_text(st, o + 3, ms_job_state_name((ms_job_state_t)j->state));
    sqlite3_bind_double(st, o + 4, j->submit_t);
    sqlite3_bind_double(st, o + 5, j->start_t);
    sqlite3_bind_double(st, o + 6, j->end_t);
    bind_text(st, o + 7, place);
    bind_text(st, o + 8, j->reason);
    bind_text(st, o + 9, j->req.profile);
    sqlite3_bind_double(st, o + 10, j->req.mem_gb);
    bind_text(st, o + 11, j->req.model);
    sqlite3_bind_int(st, o + 12, (int)j->req.isolation);
    sqlite3_bind_int(st, o + 13, j->req.gang);
    sqlite3_bind_int(st, o + 14, j->req.priority);
    sqlite3_bind_int(st, o + 15, j->req.migratable ? 1 : 0);
    sqlite3_bind_double(st, o + 16, j->req.duration_s);
    sqlite3_bind_double(st, o + 17, j->req.estimate_s);
    bind_text(st, o + 18, j->req.tenant);
    sqlite3_bind_double(st, o + 19, j->req.checkpoint_s);
    sqlite3_bind_double(st, o + 20, j->kept_s);
}

int svc_store_job_insert(svc_store_t *s, svc_job_t *j)
{
    char *p = place_json(j);
    int rc;

    bind_job(s->st[S_JINS], 0, j, p);
    rc = step(s, S_JINS);
    free(p);
    if (rc == 0)
        j->seq = (uint64_t)sqlite3_last_insert_rowid(s->db);
    return rc;
}

int svc_store_job_put(svc_store_t *s, svc_job_t *j)
{
    char *p;
    int rc;

    if (j->seq == 0)   /* its insert never made it: a new row */
        return svc_store_job_insert(s, j);
    p = place_json(j);
    sqlite3_bind_int64(s->st[S_JPUT], 1, (sqlite3_int64)j->seq);
    bind_job(s->st[S_JPUT], 1, j, p);
    rc = step(s, S_JPUT);
    free(p);
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
    sqlite3_bind_double(st, 6, j->kept_s);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)j->seq);
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

/* The stored request columns (9..18) into r; labels stay NULL (the job
 * table reads them from the body when a query needs them). */
static int load_req(sqlite3_stmt *st, svc_req_t *r)
{
    const char *prof = (const char *)sqlite3_column_text(st, 9);
    const char *model = (const char *)sqlite3_column_text(st, 11);
    const char *tenant = (const char *)sqlite3_column_text(st, 18);   /* NULL: the default */

    if ((prof != NULL && (r->profile = strdup(prof)) == NULL) ||
        (model != NULL && (r->model = strdup(model)) == NULL) ||
        (tenant != NULL && (r->tenant = strdup(tenant)) == NULL))
        return -1;
    r->mem_gb = sqlite3_column_double(st, 10);
    r->isolation = (ms_isolation_t)sqlite3_column_int(st, 12);
    r->gang = sqlite3_column_int(st, 13);
    r->priority = sqlite3_column_int(st, 14);
    r->migratable = sqlite3_column_int(st, 15) != 0;
    r->duration_s = sqlite3_column_double(st, 16);
    r->estimate_s = sqlite3_column_double(st, 17);
    r->checkpoint_s = sqlite3_column_double(st, 19);   /* NULL (a store from before it): 0 */
    return 0;
}

int svc_store_load(svc_store_t *s, int (*fn)(void *ctx, svc_job_t *j), void *ctx)
{
    sqlite3_stmt *st;
    int rc = 0, r;

    if (sqlite3_prepare_v2(s->db,
                           "SELECT seq, id, body, state, submit_t, start_t, end_t, placement, reason,"
                           " r_profile, r_mem_gb, r_model, r_iso, r_gang, r_prio, r_migr, r_dur, r_est, r_tenant,"
                           " r_ckpt, kept_s FROM jobs ORDER BY seq", -1, &st, NULL) != SQLITE_OK) {
        ms__store_log(s, "load");
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
            /* said here: start-up stops on it (issue 20, defect 20) */
            ms_log("error", j == NULL ? "out of memory reading the store" : "a stored job cannot be read",
                   json_pack("{s:I,s:s?,s:s?}", "seq", (json_int_t)sqlite3_column_int64(st, 0), "id", id,
                             "state", state));
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
        j->kept_s = sqlite3_column_double(st, 20);   /* NULL (a store from before it): 0 */
        if (!(j->kept_s >= 0.0 && j->kept_s <= 1e12))
            j->kept_s = 0.0;   /* a damaged value: its next run is whole, as before the column */
        if (sqlite3_column_type(st, 13) != SQLITE_NULL && load_req(st, &j->req) != 0) {
            svc_job_free(j);
            rc = -1;
            break;
        }
        if ((rc = fn(ctx, j)) != 0)
            break;
    }
    if (r != SQLITE_DONE && rc == 0) {
        ms__store_log(s, "load");
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

static int event_row(svc_store_t *s, int k, uint64_t seq, const char *job, const char *state, double t)
{
    sqlite3_stmt *st = s->st[k];

    sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
    bind_text(st, 2, job);
    bind_text(st, 3, state);
    sqlite3_bind_double(st, 4, t);
    return step(s, k);
}

int svc_store_event(svc_store_t *s, uint64_t seq, const char *job, const char *state, double t)
{
    return event_row(s, S_EVENT, seq, job, state, t);
}

int svc_store_event_put(svc_store_t *s, uint64_t seq, const char *job, const char *state, double t)
{
    return event_row(s, S_EVPUT, seq, job, state, t);
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

int svc_store_unsettled_gis(svc_store_t *s, int **pairs, int *n)
{
    /* the plans with a pending op, by the pending-ops index; their ops by
     * the primary key (plan, idx) */
    static const char SQL[] = "SELECT gpu, start FROM ops WHERE kind IN ('create', 'destroy') AND plan IN "
                              "(SELECT plan FROM ops WHERE result='pending')";
    sqlite3_stmt *st;
    int cap = 0, rc;

    *pairs = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(s->db, SQL, -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            int *v = cap < 1000000 ? realloc(*pairs, (size_t)(cap ? cap * 2 : 16) * 2 * sizeof(*v)) : NULL;

            if (v == NULL) {
                rc = SQLITE_NOMEM;
                break;
            }
            *pairs = v;
            cap = cap ? cap * 2 : 16;
        }
        (*pairs)[2 * *n] = sqlite3_column_int(st, 0);
        (*pairs)[2 * *n + 1] = sqlite3_column_int(st, 1);
        (*n)++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(*pairs);
        *pairs = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

int svc_store_abandon(svc_store_t *s, double t)
{
    char sql[128];

    snprintf(sql, sizeof(sql), "UPDATE ops SET result='abandoned', t=%.6f WHERE result='pending'", t);
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        s->tx_failed = true;
        ms__store_log(s, "abandon");
        return -1;
    }
    return 0;
}
