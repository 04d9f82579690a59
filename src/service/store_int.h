/* store_int.h - private to store.c and store_meta.c: the store's
 * connection, its prepared statements and what it knows of its own health.
 */
#ifndef MIGSCHED_SVC_STORE_INT_H
#define MIGSCHED_SVC_STORE_INT_H

#include <sqlite3.h>
#include <stdatomic.h>

#include "service/svc.h"

enum {
    S_BEGIN, S_COMMIT, S_ROLLBACK, S_JINS, S_JUPD, S_PLAN, S_OP, S_OPRES, S_EVENT,
    S_JPUT,                        /* a job's row again, with its seq (redo.c) */
    S_SEQ,                         /* the commit number (meta) */
    S_EVPUT,                       /* an event's row again (redo.c) */
    S_N
};

extern const char *const ms__store_sql[S_N];

struct svc_store {
    sqlite3 *db;
    sqlite3_stmt *st[S_N];
    int wal_fd;                    /* the WAL, for svc_store_sync */
    int ack_fd;                    /* STATE_DIR/migschedd.acked; -1 none */
    /* the loop's (main's before the loop starts) */
    int64_t seq;                   /* the number of the last commit that wrote */
    sqlite3_int64 changes0;        /* sqlite3_total_changes64 at BEGIN */
    bool tx_failed;                /* a write of the open transaction failed */
    int last_err;                  /* SQLite's code of the last failed step */
    /* the last commit's number, for the syncer (written after the commit) */
    _Atomic int64_t committed;
    int64_t ack_written;           /* the syncer's: the number last in the sidecar */
    /* found at open */
    bool fresh;                    /* the database was created now */
    int from_version;              /* its schema version before a migration */
    int64_t acked;                 /* the sidecar's number (-1: none) */
};

/* store.c: statement k stepped and reset; a failure marks the open
 * transaction failed and is logged (a full disk is not: redo.c reports it). */
int ms__store_step(svc_store_t *s, int k);
/* store_meta.c */
void ms__store_log(svc_store_t *s, const char *what);

#endif
