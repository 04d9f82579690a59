/* store.h - the daemon's SQLite store (store.c, store_meta.c): jobs,
 * the journal of plans and ops, events. The loop writes; the syncer
 * fsyncs. Split from svc.h, which includes it. */
#ifndef MIGSCHED_SERVICE_STORE_H
#define MIGSCHED_SERVICE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct svc_store svc_store_t;
struct svc_xop;
struct svc_job;


/* The schema this migschedd writes (PRAGMA user_version): 0 is every store
 * from before the version, 1 adds the commit number, 2 r_tenant (store_meta.c). */
#define SVC_STORE_SCHEMA 2

/* Open (create, migrate) the store in dir; 0, or -1 with why (a store
 * from a newer migschedd, an unreadable file, a full disk). */
int svc_store_open_err(svc_store_t **out, const char *dir, char *why, size_t len);
int svc_store_open(svc_store_t **out, const char *dir);   /* why logged */
void svc_store_close(svc_store_t *s);
/* Commits that were acknowledged are missing (the WAL damaged, the store
 * lost or replaced): true with why. */
bool svc_store_damaged(const svc_store_t *s, char *why, size_t len);
/* Go on with the store as it is (--recovery adopt): what it holds now is
 * what counts from here. */
int svc_store_accept(svc_store_t *s);
bool svc_store_fresh(const svc_store_t *s);   /* created at this open */
int svc_store_begin(svc_store_t *s);
/* Commit; -1 when it fails or when a write of the transaction failed: the
 * transaction is then the caller's to roll back (nothing of it is on disk). */
int svc_store_commit(svc_store_t *s);
void svc_store_rollback(svc_store_t *s);
/* The last failure: SQLite's code, and why in words. */
int svc_store_error(const svc_store_t *s, char *why, size_t len);
/* Insert a new job; sets j->seq. */
int svc_store_job_insert(svc_store_t *s, struct svc_job *j);
int svc_store_job_update(svc_store_t *s, const struct svc_job *j);
/* A job's row whole, with its seq (inserted when it has none): redo.c. */
int svc_store_job_put(svc_store_t *s, struct svc_job *j);
/* Load every job, in seq order; fn takes ownership of each job. */
int svc_store_load(svc_store_t *s, int (*fn)(void *ctx, struct svc_job *j), void *ctx);
/* Journal a plan and its n ops; returns its id (> 0) in *plan_id. */
int svc_store_plan(svc_store_t *s, const char *kind, double t, const struct svc_xop *ops, int n,
                   int64_t *plan_id);
int svc_store_op_result(svc_store_t *s, int64_t plan_id, int idx, const char *result, double t);
int svc_store_event(svc_store_t *s, uint64_t seq, const char *job, const char *state, double t);
int svc_store_event_put(svc_store_t *s, uint64_t seq, const char *job, const char *state, double t);
uint64_t svc_store_last_event(svc_store_t *s);
/* Plans whose ops are not all settled (after a crash): how many. */
long svc_store_unsettled(svc_store_t *s);
/* The GIs such plans created or were to destroy, as (gpu, start) pairs in
 * *pairs (2 * *n ints, the caller frees): start-up's own, transient
 * (restart.c). 0, or -1 out of memory or on a failed read. */
int svc_store_unsettled_gis(svc_store_t *s, int **pairs, int *n);
/* Make every committed transaction durable (fsync of the WAL) and record
 * how far (migschedd.acked); the syncer's thread, while the loop goes on
 * committing. */
int svc_store_sync(svc_store_t *s);
/* Mark every unsettled op "abandoned" (reconciled from the inventory). */
int svc_store_abandon(svc_store_t *s, double t);
/* Tests: the database may not grow beyond this many pages (a full disk:
 * writes that need more fail with SQLITE_FULL); returns the limit now. */
long svc_store_set_max_pages(svc_store_t *s, long pages);

#endif
