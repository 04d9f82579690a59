/* fixture.h - migschedd's core without its threads, for the unit tests of
 * tests/service/ (fixture.c): the real store (SQLite in a temporary
 * directory), the real sim backend, the real scheduler and handlers, and a
 * fake clock the test moves. The test plays the threads: fx_batch is one
 * loop iteration, fx_sync the syncer's release, fx_exec the executor.
 */
#ifndef MIGSCHED_TESTS_SVC_FIXTURE_H
#define MIGSCHED_TESTS_SVC_FIXTURE_H

#include "service/svc.h"

typedef struct fx {
    char dir[64];                  /* the state directory (removed by fx_teardown) */
    char nodes[2048];              /* the node specs, one per word (cut in place) */
    svc_cfg_t cfg;
    svc_t d;
    ms_cluster_spec_t *spec;
    double wall, mono;             /* the fake clock: what it reads now */
    svc_clock_t clock;
    bool started;
} fx_t;

/* A daemon on a fresh state directory: node specs ("a=1xA100-40GB", or
 * several separated by spaces), policy ("best-fit"), extra options
 * (NULL-terminated, may be NULL). Asserts. */
void fx_setup(fx_t *f, const char *node, const char *policy, const char *const *extra);
/* The same on an existing state directory (a restart). */
void fx_setup_dir(fx_t *f, const char *dir, const char *node, const char *policy, const char *const *extra);
/* Start-up's reconciliation (svc_restart) at the fake clock's time. */
void fx_start(fx_t *f);
/* The same, its outcome returned (0, or -1: f->d.start_why says why). */
int fx_try_start(fx_t *f);
/* Everything freed, the state directory kept; fx_teardown removes it. */
void fx_stop(fx_t *f);
void fx_teardown(fx_t *f);

/* A POST /v1/jobs message for body (asserts that it parses). */
svc_msg_t *fx_submit_msg(const char *body);
/* A message of kind with an id (cancel, done), or none (NULL). */
svc_msg_t *fx_msg(int kind, const char *id);
/* One loop iteration on msgs[0..n) at the clock's wall time, then the
 * syncer's release of every ticket. The messages stay the caller's. */
void fx_batch(fx_t *f, svc_msg_t **msgs, int n);
/* The syncer: every queued ticket released (after an fsync). Returns how
 * many. */
int fx_sync(fx_t *f);
/* The executor (inline, on this thread, at the fake clock): what the
 * syncer released taken, the ops that may run now run on the backend, and
 * their outcomes handled in one loop iteration. Returns how many ops ran
 * (or 1 when only outcomes came), 0 when nothing happened. */
int fx_exec(fx_t *f);
/* Submit body, then run what it planned; the job's state after. */
int fx_run(fx_t *f, const char *body);
/* A job's state in the table (-1: no such job). */
int fx_state(fx_t *f, const char *id);
/* SQL answered by the store's database, the first column of the first row
 * as a long (a second connection, read only). */
long fx_sql(fx_t *f, const char *sql);

#endif
