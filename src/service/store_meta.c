/* store_meta.c - the store's own state (the main thread opens and closes
 * it; the loop thread begins and commits; the syncer syncs):
 *   - the schema and its version (PRAGMA user_version): a store written by
 *     a newer migschedd is refused, an older one migrated in one
 *     transaction;
 *   - the commit number (table meta): every transaction that wrote bumps
 *     it;
 *   - the acknowledgement sidecar, STATE_DIR/migschedd.acked: after each
 *     fsync of the WAL the syncer writes there the number of the last
 *     commit that fsync made durable, before any of it is answered. It is
 *     not fsynced itself: it is only ever behind the WAL, never ahead, so
 *     it cannot accuse a sound store. At open, a store whose commit number
 *     is below the sidecar's lost acknowledged commits: a damaged or
 *     truncated WAL, a store deleted or replaced by an older copy. The
 *     daemon then refuses to start or, told so, adopts what the backend
 *     reports (restart.c, docs/operations.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/store_int.h"

/* The request's fields besides its canonical JSON (body), so that a restart
 * hands them to the scheduler without parsing 100,000 bodies (that was half
 * of the restart). A store from before them gets the columns added, NULL in
 * its old rows, which are parsed from the body as before. r_tenant (schema
 * 2, docs/tenants.md): the job's tenant, NULL the default; a store of
 * schema 1 gets the column, NULL in every row, so its jobs are the default
 * tenant's. r_ckpt: checkpoint_s, added to any store that lacks it (NULL:
 * 0, never), the schema unchanged: a binary from before it ignores the
 * column, and decides as it did for every job. kept_s, the one column of
 * the job's state among them (svc_job_t.kept_s: the run its checkpoints
 * kept over its preemptions), is added the same way (NULL: 0, none). */
#define REQ_COLS ", r_profile TEXT, r_mem_gb REAL, r_model TEXT, r_iso INTEGER, r_gang INTEGER," \
                 " r_prio INTEGER, r_migr INTEGER, r_dur REAL, r_est REAL, r_tenant TEXT, r_ckpt REAL," \
                 " kept_s REAL"
static const char *const REQ_ADD[] = {
    "r_profile TEXT", "r_mem_gb REAL", "r_model TEXT", "r_iso INTEGER", "r_gang INTEGER",
    "r_prio INTEGER", "r_migr INTEGER", "r_dur REAL", "r_est REAL", "r_tenant TEXT", "r_ckpt REAL",
    "kept_s REAL",
};

static const char SCHEMA[] =
    "CREATE TABLE jobs(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
    " body TEXT NOT NULL, state TEXT NOT NULL, submit_t REAL, start_t REAL, end_t REAL,"
    " placement TEXT, reason TEXT" REQ_COLS ");"
    "CREATE TABLE plans(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, t REAL);"
    "CREATE TABLE ops(plan INTEGER NOT NULL, idx INTEGER NOT NULL, op_id INTEGER,"
    " kind TEXT, gpu INTEGER, start INTEGER, prof INTEGER, from_gpu INTEGER, from_start INTEGER,"
    " bbm INTEGER, job TEXT, result TEXT NOT NULL, t REAL, PRIMARY KEY(plan, idx));"
    "CREATE INDEX ops_pending ON ops(result) WHERE result='pending';"
    "CREATE TABLE events(seq INTEGER PRIMARY KEY, job TEXT, state TEXT, t REAL);";

/* Version 0 is every store from before the version (the tables above, with
 * or without the request columns); 1 adds meta and the commit number. */
static const char META[] =
    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta(k, v) VALUES('commit_seq', 0);";

const char *const ms__store_sql[S_N] = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    ("INSERT INTO jobs(id, body, state, submit_t, start_t, end_t, placement, reason, r_profile, r_mem_gb,"
     " r_model, r_iso, r_gang, r_prio, r_migr, r_dur, r_est, r_tenant, r_ckpt, kept_s)"
     " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
    "UPDATE jobs SET state=?, start_t=?, end_t=?, placement=?, reason=?, kept_s=? WHERE seq=?",
    "INSERT INTO plans(kind, t) VALUES(?,?)",
    ("INSERT INTO ops(plan, idx, op_id, kind, gpu, start, prof, from_gpu, from_start, bbm, job, result)"
     " VALUES(?,?,?,?,?,?,?,?,?,?,?,'pending')"),
    "UPDATE ops SET result=?, t=? WHERE plan=? AND idx=?",
    "INSERT INTO events(seq, job, state, t) VALUES(?,?,?,?)",
    ("INSERT OR REPLACE INTO jobs(seq, id, body, state, submit_t, start_t, end_t, placement, reason, r_profile,"
     " r_mem_gb, r_model, r_iso, r_gang, r_prio, r_migr, r_dur, r_est, r_tenant, r_ckpt, kept_s)"
     " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
    "UPDATE meta SET v=? WHERE k='commit_seq'",
    "INSERT OR REPLACE INTO events(seq, job, state, t) VALUES(?,?,?,?)",
};

/* Run statement k and reset it. Every statement binds all of its
 * parameters on every use, so the bindings are not cleared (that, and
 * copying each bound string, was a seventh of the loop's time a submission:
 * docs/performance.md). */
int ms__store_step(svc_store_t *s, int k)
{
    int rc;

    /* after a failed write the transaction is doomed (the caller rolls it
     * back), and SQLite may have rolled it back already: a later write
     * would then commit on its own */
    if (s->tx_failed && k != S_BEGIN && k != S_ROLLBACK)
        return -1;
    rc = sqlite3_step(s->st[k]);

    sqlite3_reset(s->st[k]);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        s->last_err = rc;
        s->tx_failed = true;   /* the transaction lacks this write: never commit it */
        /* a full disk is the loop's to report (redo.c), once, not every write */
        if ((rc & 0xff) != SQLITE_FULL)
            ms__store_log(s, ms__store_sql[k]);
        return -1;
    }
    return 0;
}

#define ACK_MAGIC "migschedd-acked 1 "
#define ACK_LEN 64

void ms__store_log(svc_store_t *s, const char *what)
{
    ms_log("error", "store", json_pack("{s:s,s:s}", "op", what, "sqlite", sqlite3_errmsg(s->db)));
}

static void why_db(svc_store_t *s, const char *what, char *why, size_t len)
{
    int rc = sqlite3_extended_errcode(s->db);

    snprintf(why, len, "%s: %s%s", what, sqlite3_errmsg(s->db),
             (rc & 0xff) == SQLITE_FULL ? " (the disk is full)" : "");
}

static long scalar(svc_store_t *s, const char *sql, bool *ok)
{
    sqlite3_stmt *st;
    long v = 0;

    *ok = false;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        v = (long)sqlite3_column_int64(st, 0);
        *ok = true;
    }
    sqlite3_finalize(st);
    return v;
}

/* A store made before the request columns, or before r_tenant: add each
 * one it lacks (NULL in old rows). */
static int add_req_cols(svc_store_t *s)
{
    enum { NADD = sizeof(REQ_ADD) / sizeof(REQ_ADD[0]) };
    sqlite3_stmt *st;
    bool have[NADD] = { false };
    size_t i;
    int r;

    if (sqlite3_prepare_v2(s->db, "PRAGMA table_info(jobs)", -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);

        for (i = 0; name != NULL && i < NADD; i++)   /* "r_gang INTEGER": the name, then a space */
            if (strncmp(REQ_ADD[i], name, strlen(name)) == 0 && REQ_ADD[i][strlen(name)] == ' ')
                have[i] = true;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return -1;
    for (i = 0; i < NADD; i++) {
        char sql[128];

        if (have[i])
            continue;
        snprintf(sql, sizeof(sql), "ALTER TABLE jobs ADD COLUMN %s", REQ_ADD[i]);
        if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return -1;
    }
    return 0;
}

/* The schema at SVC_STORE_SCHEMA: created, migrated, or refused (newer). */
static int schema(svc_store_t *s, char *why, size_t len)
{
    bool ok;
    long v = scalar(s, "PRAGMA user_version", &ok);
    bool have = scalar(s, "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='jobs'", &ok) > 0;
    char sql[64];

    if (!ok) {
        why_db(s, "reading the schema", why, len);
        return -1;
    }
    if (v > SVC_STORE_SCHEMA) {
        snprintf(why, len,
                 "it was written by a newer migschedd (store schema %ld; this one reads up to %d): run that "
                 "version, or move the store away (docs/operations.md)", v, SVC_STORE_SCHEMA);
        return -1;
    }
    s->fresh = !have;
    s->from_version = (int)v;
    if (have && v == SVC_STORE_SCHEMA) {
        if (add_req_cols(s) != 0) {   /* (a no-op but on a store edited by hand) */
            why_db(s, "the request columns", why, len);
            return -1;
        }
        return 0;
    }
    snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", SVC_STORE_SCHEMA);
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
        (!have && sqlite3_exec(s->db, SCHEMA, NULL, NULL, NULL) != SQLITE_OK) ||
        (have && add_req_cols(s) != 0) || sqlite3_exec(s->db, META, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        why_db(s, have ? "migrating the store" : "creating the store", why, len);
        if (!sqlite3_get_autocommit(s->db))
            (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    if (have)
        ms_log("info", "store migrated", json_pack("{s:i,s:i}", "from", (int)v, "to", SVC_STORE_SCHEMA));
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

/* The sidecar: opened (created empty) and read: -1 when it holds nothing. */
static int open_ack(svc_store_t *s, const char *dir)
{
    char path[4096], buf[ACK_LEN + 1], *end;
    ssize_t n;
    long long v;

    s->acked = -1;
    snprintf(path, sizeof(path), "%s/migschedd.acked", dir);
    if ((s->ack_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return -1;
    n = pread(s->ack_fd, buf, ACK_LEN, 0);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    if (n > 0 && strncmp(buf, ACK_MAGIC, strlen(ACK_MAGIC)) == 0) {
        errno = 0;
        v = strtoll(buf + strlen(ACK_MAGIC), &end, 10);
        if (errno == 0 && end != buf + strlen(ACK_MAGIC) && v >= 0)
            s->acked = v;
    }
    s->ack_written = s->acked;
    return 0;
}

/* The number into the sidecar (one pwrite of a fixed-size record). */
static int write_ack(svc_store_t *s, int64_t v)
{
    char buf[ACK_LEN];

    if (s->ack_fd < 0)
        return 0;
    memset(buf, ' ', sizeof(buf));
    buf[ACK_LEN - 1] = '\n';
    snprintf(buf, ACK_LEN - 1, ACK_MAGIC "%" PRId64, v);
    buf[strlen(buf)] = ' ';
    if (pwrite(s->ack_fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
        return -1;
    s->ack_written = v;
    return 0;
}

static int prepare(svc_store_t *s, char *why, size_t len)
{
    bool ok;
    int i;

    for (i = 0; i < S_N; i++)
        if (sqlite3_prepare_v2(s->db, ms__store_sql[i], -1, &s->st[i], NULL) != SQLITE_OK) {
            why_db(s, ms__store_sql[i], why, len);
            return -1;
        }
    s->seq = scalar(s, "SELECT v FROM meta WHERE k='commit_seq'", &ok);
    if (!ok) {
        why_db(s, "reading the commit number", why, len);
        return -1;
    }
    atomic_store(&s->committed, s->seq);
    return 0;
}

int svc_store_open_err(svc_store_t **out, const char *dir, char *why, size_t len)
{
    svc_store_t *s = calloc(1, sizeof(*s));
    char path[4096];

    *out = NULL;
    why[0] = '\0';
    if (s == NULL) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    s->wal_fd = s->ack_fd = -1;
    if ((size_t)snprintf(path, sizeof(path), "%s/migschedd.db-wal", dir) >= sizeof(path) ||
        (size_t)snprintf(path, sizeof(path), "%s/migschedd.db", dir) >= sizeof(path)) {
        snprintf(why, len, "the state directory's path is too long");
        free(s);
        return -1;
    }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        why_db(s, "open", why, len);
        svc_store_close(s);
        return -1;
    }
    sqlite3_busy_timeout(s->db, 5000);
    /* synchronous=NORMAL: a commit writes the WAL but does not fsync it;
     * svc_store_sync does, on the syncer thread, before anything the
     * commit holds is acknowledged (checkpoints still sync as SQLite does) */
    if (sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL, NULL) != SQLITE_OK) {
        why_db(s, "journal mode", why, len);
        svc_store_close(s);
        return -1;
    }
    if (schema(s, why, len) != 0 || prepare(s, why, len) != 0) {
        svc_store_close(s);
        return -1;
    }
    if (open_wal(s, dir) != 0 || open_ack(s, dir) != 0) {
        snprintf(why, len, "cannot open %s/migschedd.db-wal or migschedd.acked: %s", dir, strerror(errno));
        svc_store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

int svc_store_open(svc_store_t **out, const char *dir)
{
    char why[512];

    if (svc_store_open_err(out, dir, why, sizeof(why)) != 0) {
        ms_log("error", "store", json_pack("{s:s,s:s}", "dir", dir, "why", why));
        return -1;
    }
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
    if (s->ack_fd >= 0)
        close(s->ack_fd);
    free(s);
}

bool svc_store_damaged(const svc_store_t *s, char *why, size_t len)
{
    if (s->acked <= s->seq)
        return false;
    if (s->fresh)
        snprintf(why, len,
                 "the store is missing (lost or deleted), but migschedd.acked says %" PRId64
                 " commits were acknowledged", s->acked);
    else
        snprintf(why, len,
                 "the store holds %" PRId64 " commits, but %" PRId64
                 " were acknowledged (migschedd.acked): its WAL was damaged or truncated, or an older copy "
                 "replaced it", s->seq, s->acked);
    return true;
}

int svc_store_accept(svc_store_t *s)
{
    s->acked = s->seq;
    return write_ack(s, s->seq);
}

bool svc_store_fresh(const svc_store_t *s)
{
    return s->fresh;
}

int svc_store_begin(svc_store_t *s)
{
    s->tx_failed = false;
    s->changes0 = sqlite3_total_changes64(s->db);
    if (ms__store_step(s, S_BEGIN) != 0)
        return -1;
    s->tx_failed = false;
    return 0;
}

int svc_store_commit(svc_store_t *s)
{
    bool wrote = sqlite3_total_changes64(s->db) != s->changes0;

    if (s->tx_failed)
        return -1;   /* a write is missing: the caller rolls back */
    if (wrote) {
        sqlite3_bind_int64(s->st[S_SEQ], 1, (sqlite3_int64)(s->seq + 1));
        if (ms__store_step(s, S_SEQ) != 0)
            return -1;
    }
    if (ms__store_step(s, S_COMMIT) != 0)
        return -1;
    if (wrote) {
        s->seq++;
        atomic_store(&s->committed, s->seq);
    }
    return 0;
}

void svc_store_rollback(svc_store_t *s)
{
    if (!sqlite3_get_autocommit(s->db))
        (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->tx_failed = false;
}

int svc_store_error(const svc_store_t *s, char *why, size_t len)
{
    int rc = s->last_err;

    snprintf(why, len, "%s%s", sqlite3_errstr(rc), (rc & 0xff) == SQLITE_FULL ? " (the disk is full)" : "");
    return rc;
}

int svc_store_sync(svc_store_t *s)
{
    int64_t c = atomic_load(&s->committed);

    if (fdatasync(s->wal_fd) != 0)
        return -1;
    /* after the fsync, before anything it covers is answered; a failed
     * write only leaves the sidecar behind, which is safe */
    if (c > s->ack_written)
        (void)write_ack(s, c);
    return 0;
}

long svc_store_set_max_pages(svc_store_t *s, long pages)
{
    char sql[64];
    bool ok;

    snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%ld", pages);
    return scalar(s, sql, &ok);
}
