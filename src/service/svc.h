/* svc.h - private to migschedd: the daemon's map and its shared types.
 *
 * THREADS (docs/service.md). Each file of src/service says at its top which
 * thread runs its code; the few helpers any thread may call are named so
 * (svc_call*, svc_post, the queue, the events, the job table's readers).
 *   main      main.c, config.c, lifecycle.c, restart.c, http_server.c,
 *             ext_kube.c, kctl_open.c: start-up (options, the state
 *             directory, the backend, the store, the reconciliation with the
 *             backend's inventory), then signals (SIGTERM/SIGINT: stop;
 *             SIGHUP: reload the token file and the tenants), then the ordered shutdown.
 *   loop      loop.c, handlers.c, jobsync.c, stage.c, render.c, ext_loop.c,
 *             ext_adopt.c, ext_pods.c, ext_preempt.c, gpuhealth.c: owns the ms_sched_t, the job table's
 *             writes, the extender's pod map and the store's write
 *             connection; takes every message that arrived as one batch,
 *             handles it in one transaction, commits, hands the batch to the
 *             syncer.
 *   syncer    syncer.c: fsyncs the WAL once for every batch committed
 *             meanwhile, then releases those batches in order (replies,
 *             committed job views, events, plans to the executor).
 *   executor  exec.c, lanes.c, health.c: the dispatcher: plans into lanes
 *             (one a node), ops in order per GPU, the failure rule and
 *             barrier, backoff, GPU health and probes; posts each outcome
 *             (SVC_M_OPRESULT) and each GPU's health (SVC_M_HEALTH).
 *   lanes     worker.c, hook.c: a pool of threads, each running one node's
 *             op (a MOVE's hook first) or probe on the backend at a time.
 *   HTTP      http.c, sse.c: libmicrohttpd's epoll thread (or a pool of
 *             --http-threads): parse, validate, post to the loop and
 *             suspend the connection; never sleep.
 *   timer     evtimer.c: wakes the waiters parked on the event ring (long
 *             polls, event streams) at their deadlines.
 *   guard     src/daemon/http_guard.c (started by http_server.c): shuts down
 *             the connections of clients too slow to send a request's head
 *             (--header-timeout) or body (--body-timeout); the HTTP threads
 *             note each request's phase in it (its lock is a leaf).
 *   workers   ext_worker.c, ext_bind.c, ext_evict.c (and ext_pdb.c, pure):
 *             threads run the extender's endpoints, which may wait on the
 *             loop and the API server (a filter's evictions after its answer).
 *   watch     ext_watch.c (--kube): the pod list+watch; frees what pods held.
 *   nudge     ext_nudge.c (--kube): annotates the pods the loop names
 *             (preemptors whose room is made or whose set was refused),
 *             so that kube-scheduler tries them again.
 *   kctl      kctl.c, kctl_nodes.c, ext_takeover.c (--leader-elect,
 *             --k8s-policy): the Lease and the node layout loop; on becoming
 *             the leader it calls its takeover callback (ext_takeover.c)
 *             before it serves.
 *
 * LOCKS, in the order they may be taken (a lock is only ever taken while
 * holding one listed above it; every other lock is a leaf: nothing is
 * locked or called out while it is held):
 *   1. svc_t.rmu         the job table's arrays and each job's committed view
 *                        (loop writes, HTTP threads read, the syncer installs
 *                        views); held by the syncer while it publishes the
 *                        batch's events (2.)
 *   2. svc_events_t.mu   the event ring and the waiters parked on it; a
 *                        waiter's wake callback (MHD_resume_connection) runs
 *                        under it
 *   leaves: every svc_queue_t.mu (queue.h), a caller's svc_waiter_t.mu
 *   (call.c), svc_exec_t.mu (the failure epoch; the executor's own state
 *   is its thread's alone, exec_int.h), svc_t.tmu (the token), the HTTP
 *   guard's (src/daemon/http_guard.c),
 *   svc_metrics_t.http_mu, svc_kctl_t.mu (its stop flag), the backend's
 *   locks (src/backend/), the API client's (src/kube/), stderr's.
 *
 * THE MESSAGE TABLE: every message the loop takes, its handler (on the loop
 * thread), who posts it and how the answer travels (handlers.c holds it as
 * data: svc_msg_kinds). A read is answered before the batch's writes: it
 * shows the earlier commits and waits for their fsync only.
 *
 *   kind      handler         read   posted by (thread)           reply path
 *   SUBMIT    svc_h_submit    no     HTTP: POST /v1/jobs          syncer, after the fsync:
 *   LIST      svc_h_list      yes    HTTP: GET /v1/jobs             on_reply resumes the
 *   CANCEL    svc_h_cancel    no     HTTP: DELETE /v1/jobs/{id}     suspended connection
 *   DONE      svc_h_done      no     HTTP: POST /v1/jobs/{id}/done  (svc_call_async), whose
 *   CLUSTER   svc_h_cluster   yes    HTTP: GET /v1/cluster          handler renders and
 *   METRICS   svc_h_metrics   yes    HTTP: GET /metrics             sends it
 *   READY     svc_h_ready     yes    HTTP: GET /readyz
 *   TENANTS, TENSET (tenants.h): GET /v1/tenants (a read); SIGHUP's set (main, svc_call)
 *   OPRESULT  svc_h_opresult  no     executor (svc_post)          none: the syncer frees it
 *   HEALTH    svc_h_health    no     executor (svc_post)          none: the syncer frees it
 *             (gpuhealth.c)
 *   EXT       svc_ext_handle  STATE  workers, watch, kctl         syncer, after the fsync:
 *             (ext_loop.c)    only   (svc_ext_call: svc_call)       signals the waiting thread
 */
#ifndef MIGSCHED_SVC_H
#define MIGSCHED_SVC_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/evheap.h"
#include "core/idmap.h"
#include "daemon/daemon.h"
#include "migsched/policy.h"
#include "migsched/sched.h"
#include "service/config.h"
#include "service/store.h"
#include "service/queue.h"

/* --- the clock (clock.c) ------------------------------------------------- */

/* Every time the daemon decides by comes through this: the real clocks by
 * default (svc_clock_real), a fake one in tests (tests/service/). Handlers
 * are given `now`; none reads a clock itself. */
typedef struct svc_clock {
    double (*wall)(void *ctx);     /* CLOCK_REALTIME seconds: job times, Lease times */
    double (*mono)(void *ctx);     /* CLOCK_MONOTONIC seconds: durations, deadlines */
    void *ctx;
} svc_clock_t;

extern const svc_clock_t svc_clock_real;

static inline double svc_clock_wall(const svc_clock_t *c) { return c->wall(c->ctx); }
static inline double svc_clock_mono(const svc_clock_t *c) { return c->mono(c->ctx); }
/* When `until` (c's monotonic time) falls on the real monotonic clock
 * (ms_clock_mono, what ms_kube_request_by takes), at most max_s from now:
 * a deadline a request can carry past a pause of its thread. Any thread. */
double svc_clock_real_deadline(const svc_clock_t *c, double until, double max_s);

/* --- jobs (jobs.c): the table the loop writes and readers look up -------- */

/* A validated request (api.c parses it). Strings owned. */
typedef struct svc_req {
    char *profile;
    double mem_gb;
    char *model, *tenant;          /* tenant: NULL the default (docs/tenants.md) */
    ms_isolation_t isolation;
    int gang, priority;
    bool migratable;
    double duration_s, estimate_s;
    double checkpoint_s;           /* how often it saves its progress; 0 never
                                    * (docs/tenants.md, "Jobs that checkpoint") */
    json_t *labels;                /* object of strings, owned reference */
} svc_req_t;

/* A node's name: a Kubernetes node name is a DNS subdomain, at most 253
 * characters; kept whole in placements, the store and the pod annotation. */
#define SVC_NODE_NAME_MAX 253

typedef struct svc_place {
    int node;                      /* -1 when not placed */
    char node_name[SVC_NODE_NAME_MAX + 1];
    int gpu;                       /* index within the node */
    int gpu_global;
    int start;                     /* -1 time-slice slot / whole GPU */
    char profile[32];
    int ninst;
} svc_place_t;

/* What a reader may see of a job: its state as of the last commit. The
 * syncer copies it into svc_job_t.pub after each fsync (under svc_t.rmu),
 * so an HTTP thread answers GET /v1/jobs/{id} without waiting for the loop
 * and never sees a state that a crash could take back. */
typedef struct svc_jview {
    int state;
    double submit_t, start_t, end_t;
    double kept_s;                 /* the run its checkpoints kept over its preemptions */
    svc_place_t place;
    char *reason;                  /* NULL when none; owned */
    char *resolved;                /* POST's reply only: what the request resolves
                                    * to (a JSON array, "resolved_to"); owned */
} svc_jview_t;

typedef struct svc_job {
    char *id;
    char *body;                    /* canonical request JSON: idempotency */
    svc_req_t req;
    int state;                     /* ms_job_state_t */
    double submit_t, start_t, end_t;
    int32_t slot;                  /* in ms_sched, -1 once forgotten */
    int inflight;                  /* ops sent to the executor, not settled */
    uint64_t seq;                  /* submission order (the store's rowid) */
    int32_t tix;                   /* its index in the table (svc_jobs_t.v) */
    double finish_at;              /* sim: when it ends on its own, 0 none */
    svc_place_t place;
    bool dirty, counted_wait;
    bool need_write;               /* changed outside the scheduler's view: write it */
    char reason[300];              /* why it failed, "" */
    double unowned_since;          /* loop (own.c): > 0 for a job made from an instance no pod
                                    * or job owned, since then (the clock's mono) */
    svc_jview_t pub;               /* committed view (svc_t.rmu); valid once published */
    bool published;                /* (svc_t.rmu) */
    bool topub;                    /* loop: changed in this batch, publish after the commit */
    int preempts; char by[128];    /* loop: preemptions seen (the scheduler's count); by whom, last */
    double kept_s;                 /* the run its checkpoints kept over its preemptions (the
                                    * scheduler's kept_s), stored: a restart hands it back */
} svc_job_t;

typedef struct svc_jobs {
    svc_job_t **v;                 /* by seq order */
    size_t n, cap;
    ms__idmap_t ids;               /* id -> index in v */
    svc_job_t **by_slot;           /* slot -> job */
    int32_t nslots;
} svc_jobs_t;

void svc_jobs_init(svc_jobs_t *t);
void svc_jobs_free(svc_jobs_t *t);
svc_job_t *svc_jobs_find(const svc_jobs_t *t, const char *id);
/* Add (the table owns j); -1 out of memory (the table is unchanged). */
int svc_jobs_add(svc_jobs_t *t, svc_job_t *j);
/* Index j by its scheduler slot (-1: none); -1 out of memory. */
int svc_jobs_set_slot(svc_jobs_t *t, svc_job_t *j, int32_t slot);
/* Room for one svc_jobs_add and for svc_jobs_set_slot of any slot below
 * nslots, so that neither fails after the scheduler has taken the job
 * (which cannot be undone without a plan): 0, or -1 out of memory. Under
 * the readers' lock, as svc_jobs_add. */
int svc_jobs_reserve(svc_jobs_t *t, int32_t nslots);
svc_job_t *svc_jobs_by_slot(const svc_jobs_t *t, int32_t slot);
void svc_job_free(svc_job_t *j);
/* A copy of j's current state (reason strdup'd); -1 out of memory. */
int svc_jview_of(const svc_job_t *j, svc_jview_t *v);
/* The same, borrowing j's reason (the loop only, while j does not change). */
void svc_jview_now(const svc_job_t *j, svc_jview_t *v);
void svc_req_free(svc_req_t *r);
/* The ms_sched request of a job (borrows its strings). */
void svc_job_sched_req(const svc_job_t *j, ms_sched_req_t *out);
bool svc_job_terminal(int state);      /* done, cancelled, failed */
bool svc_job_live(int state);          /* starting, running, migrating */

/* --- API parsing and rendering (api.c; any thread) ----------------------- */

typedef struct svc_err {
    int code;                      /* HTTP status */
    char field[64];
    char msg[256];
} svc_err_t;

void svc_err_set(svc_err_t *e, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* {"error": {"field": ..., "message": ...}} as a malloc'd string. */
char *svc_err_body(const svc_err_t *e);
/* Parse a POST /v1/jobs body: id (may be NULL), request, canonical body. */
int svc_req_parse(const char *body, size_t len, char **id, svc_req_t *req, char **canon,
                  svc_err_t *err);
/* A job id: 1-127 of A-Z a-z 0-9 - _ . :, but not "." or "..". */
bool svc_id_valid(const char *id);
/* A profile's syntax: a name some GPU model has, product or generic, in
 * any case ("3g.20gb", "1g.10gb+me", "1g+me", "1g.2xmem"), or the shapes
 * the library resolves: a size "Ng" (1-99) or a product name "Ng.Mgb". A
 * request whose profile fails it is a 400 (malformed); one that passes but
 * that no GPU of the cluster has is a 422 (docs/api.md, "Errors"). */
bool svc_profile_syntax(const char *s);
/* A job's JSON (docs/api.md) from a view, appended to t; any thread: id and
 * body never change once the job is in the table. */
void svc_job_render(ms_jtext_t *t, const char *id, const char *body, const svc_jview_t *v,
                    ms_backend_t *be);
/* The same as a malloc'd string; NULL out of memory. */
char *svc_job_text(const char *id, const char *body, const svc_jview_t *v, ms_backend_t *be);

/* --- metrics (metrics.c; any thread) ------------------------------------- */

#define SVC_HIST_MAX 20

typedef struct svc_hist {
    int n;
    double le[SVC_HIST_MAX];
    uint64_t bucket[SVC_HIST_MAX];  /* non-cumulative counts */
    uint64_t count;
    double sum;
} svc_hist_t;

void svc_hist_init(svc_hist_t *h, const double *le, int n);
void svc_hist_add(svc_hist_t *h, double v);

/* The routes that label migsched_http_request_duration_seconds (method,
 * route): a latency target is per endpoint, and a long poll's 25 s must
 * not hide a submission's milliseconds. */
enum {
    SVC_RT_OTHER, SVC_RT_JOBS_POST, SVC_RT_JOBS_LIST, SVC_RT_JOB_GET, SVC_RT_JOB_DELETE, SVC_RT_JOB_DONE,
    SVC_RT_EVENTS, SVC_RT_STREAM, SVC_RT_CLUSTER, SVC_RT_METRICS, SVC_RT_HEALTHZ, SVC_RT_READYZ,
    SVC_RT_PAGE, SVC_RT_EXT_FILTER, SVC_RT_TENANTS, SVC_RT_EXT_PRIORITIZE, SVC_RT_EXT_BIND, SVC_RT_N
};
extern const char *const svc_rt_method[SVC_RT_N], *const svc_rt_path[SVC_RT_N];

typedef struct svc_metrics {
    svc_hist_t wait;               /* job wait seconds (loop) */
    uint64_t ops[6][3];            /* [op kind][done, failed, abandoned] (loop) */
    uint64_t migrations[2][2];     /* [mbb, bbm][ok, failed] (loop) */
    /* where the loop's time goes (loop): batches, messages, and the seconds
     * messages waited in the queue, handling them and the scheduler's work
     * ("decide"), the commit, and answering plus publishing */
    uint64_t loop_batches, loop_msgs;
    double loop_wait_s, loop_decide_s, loop_commit_s, loop_reply_s;
    /* the syncer's fsyncs (written by it, read by the loop) */
    atomic_ullong syncs, sync_ns;
    uint64_t store_failures;       /* commits that failed (loop; redo.c) */
    uint64_t preempted[64];        /* victims by tenant index, below 64 (loop; jobsync.c) */
    pthread_mutex_t http_mu;       /* guards the rest */
    uint64_t http_codes[600];
    svc_hist_t http_dur[SVC_RT_N]; /* by route (SVC_RT_*) */
} svc_metrics_t;

void svc_metrics_init(svc_metrics_t *m);
void svc_metrics_destroy(svc_metrics_t *m);
void svc_metrics_http(svc_metrics_t *m, int code, int route, double secs);

/* --- messages to the loop (call.c; any thread) --------------------------- */

enum svc_msg_kind {
    SVC_M_SUBMIT = 1, SVC_M_LIST, SVC_M_CANCEL, SVC_M_DONE, SVC_M_CLUSTER, SVC_M_METRICS, SVC_M_READY,
    SVC_M_OPRESULT, SVC_M_TENANTS, SVC_M_TENSET,
    SVC_M_EXT,                     /* the Kubernetes extender (ext_loop.c) */
    SVC_M_HEALTH,                  /* a GPU's health changed (executor -> gpuhealth.c) */
    SVC_M_N
};

/* A thread blocked in svc_call until its message is answered. */
typedef struct svc_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
} svc_waiter_t;

typedef struct svc_msg {
    int kind;                      /* enum svc_msg_kind */
    svc_qlink_t link;              /* in the loop's queue, then in its batch and ticket */
    /* request */
    char *id;
    svc_req_t req;
    char *canon;
    char *q_state, *q_label, *q_cursor;
    long q_limit;
    /* op result (executor) */
    int64_t plan_id;
    int idx;
    uint64_t op_id;
    int result;                    /* 0 done, 1 failed, 2 discarded */
    int op_kind, op_bbm;
    int gpu;                       /* the op's (refused) or HEALTH's GPU */
    bool refused;                  /* a failed CREATE whose slices are taken */
    bool healthy;                  /* HEALTH */
    char *why;                     /* HEALTH: why (owned) */
    svc_job_t *job;
    void *ext;                     /* SVC_M_EXT: its message (extender_int.h); TENSET: the set */
    double t_enq;                  /* the clock's mono when queued */
    svc_waiter_t *waiter;          /* svc_call's */
    /* svc_call_async: called once m is answered, by the thread that
     * answered it, with no lock held; from then m is the caller's */
    void (*on_reply)(struct svc_msg *m);
    void *reply_arg;
    /* reply */
    svc_job_t *rjob;               /* set: the HTTP thread renders rjob with rview */
    svc_jview_t rview;             /* owned (reason) */
    int status;
    char *body;                    /* malloc'd; the HTTP side frees it */
    const char *ctype;
} svc_msg_t;

struct svc;

/* One row of the message table (see the top of this file). */
typedef struct svc_msg_kind_info {
    const char *name;
    void (*handle)(struct svc *d, svc_msg_t *m, double now);
    bool (*is_read)(const svc_msg_t *m);   /* NULL: never a read */
} svc_msg_kind_info_t;

/* handlers.c: the table, by kind (svc_msg_kinds[0] is unused). */
extern const svc_msg_kind_info_t svc_msg_kinds[SVC_M_N];

/* --- plans to the executor ----------------------------------------------- */

/* One op as the executor runs it. */
typedef struct svc_xop {
    ms_op_t op;                    /* global GPU numbers */
    uint64_t op_id;                /* ms_sched's id */
    int idx;                       /* in its plan */
    char job[128];                 /* the job's id ("" none); long ids cut (sim tag) */
    svc_job_t *jp;
    char prof_name[32];
} svc_xop_t;

/* What the executor's queue carries: plans, and its lanes' results (an
 * xs_work_t, exec_int.h, whose first member is a plan header). */
enum { SVC_X_PLAN = 0, SVC_X_RESULT, SVC_X_STOP };

typedef struct svc_xplan {
    svc_qlink_t link;              /* staged, in a ticket, then in the executor's queue */
    int what;                      /* SVC_X_*: a plan unless the executor's */
    int64_t plan_id;
    uint64_t epoch;                /* failures the loop had processed when it was made */
    int kind;
    int n;
    svc_xop_t *ops;
    struct xs_run *rt;             /* the executor's: its place in the lanes */
} svc_xplan_t;

void svc_xplan_free(svc_xplan_t *p);                 /* exec.c; NULL-safe */
void svc_xplan_free_chain(svc_qlink_t *l);            /* exec.c: a chain of plans */

/* --- events (events.c; any thread, under svc_events_t.mu) ---------------- */

typedef struct svc_event {
    uint64_t seq;
    double t;
    char job[128];
    char state[16];
    char by[128];                  /* "preempted": the preemptor's id; "over-limit": the tenant; else "" */
} svc_event_t;

#define SVC_EVENTS 8192

/* A waiter parked on the event ring (an HTTP connection suspended in a long
 * poll or an event stream). */
typedef struct svc_ewait {
    struct svc_ewait *prev, *next;
    uint64_t since;                /* woken once an event with seq >= since is published */
    double deadline;               /* the clock's mono: woken then */
    bool parked;                   /* (mu) */
    /* under mu, once w has left the list: resume the connection; it must
     * not take mu or block */
    void (*wake)(struct svc_ewait *w);
    void *arg;
} svc_ewait_t;

typedef struct svc_events {
    pthread_mutex_t mu;            /* lock 2 (see the top) */
    bool mu_init;
    svc_event_t *ring;             /* [SVC_EVENTS] */
    uint64_t next;                 /* seq of the next event */
    uint64_t first;                /* oldest seq in the ring */
    uint64_t pub;                  /* events < this are committed and visible */
    bool stop;                     /* shutting down: long polls return */
    svc_ewait_t *wait_head;        /* parked waiters */
    int nwait;
    /* the timer thread (evtimer.c) */
    pthread_cond_t timer_cv;       /* CLOCK_MONOTONIC */
    double timer_at;               /* when the timer wakes next (the clock's mono) */
    bool timer_run;
    pthread_t timer_th;
} svc_events_t;

/* --- the loop's, the syncer's and the executor's state ------------------- */

#define SVC_TICK_S 0.1             /* the scheduler's tick (holds expire, the queue is passed) */

/* loop.c, handlers.c, jobsync.c, stage.c: the loop thread's alone, but for
 * the queue. */
typedef struct svc_loop {
    svc_queue_t q;                 /* messages to the loop (svc_post, svc_call*) */
    pthread_t th;
    bool running;                  /* started (lifecycle.c) */
    svc_job_t **dirty;             /* jobs changed in this batch: sync them */
    size_t ndirty, capdirty;
    svc_job_t **pub;               /* jobs to publish after the commit */
    size_t npub, cappub;
    ms__evheap_t ends;             /* sim jobs (table index) by when they end */
    double finish_gate;            /* no wake for job ends before this */
    svc_job_t *submitting;         /* the job ms_sched_submit is taking */
    svc_queue_t staged;            /* plans journalled in the open transaction */
    svc_job_t *stopped[16]; int nstopped;   /* stage.c: STOPs since the last PLACE (a ring) */
    bool reconciling;              /* start-up: plans are not staged */
    int sched_err;
    uint64_t commits;              /* transactions committed */
    bool open_tx;                  /* a transaction is open (commit delay) */
    double last_tick, last_commit; /* wall, mono */
    svc_qlink_t *held, **held_tail;   /* handled, not yet committed */
    /* redo.c: the store cannot write (a full disk); what failed stays in memory, written again */
    bool store_down;
    double down_since, down_logged;   /* mono */
    uint64_t ev_durable;           /* events below this seq are committed */
    struct svc_oprec *oprecs;      /* op outcomes since the last commit */
    size_t noprec, capoprec;
} svc_loop_t;

/* syncer.c: a batch's commit is fsynced off the loop, which goes on with the
 * next batch meanwhile; each ticket (a batch's replies, views, events and
 * plans) is released once the commits it needs are durable. */
typedef struct svc_ticket {
    svc_qlink_t link;
    uint64_t need;                 /* commits that must be durable first */
    svc_qlink_t *msgs;             /* answered (op outcomes: freed) */
    svc_job_t **pj;                /* views to install: pv[i] into pj[i]->pub */
    svc_jview_t *pv;
    size_t npub;
    uint64_t ev_next;              /* events below this become visible (0: none) */
    svc_qlink_t *plans;            /* to the executor */
} svc_ticket_t;

typedef struct svc_syncer {
    svc_queue_t q;                 /* tickets, in commit order */
    pthread_t th;
    bool running;
    uint64_t synced;               /* the syncer's: commits known durable */
} svc_syncer_t;

/* exec.c: the executor contract (docs/sched.md): after a failure every op
 * issued before the scheduler heard of it is discarded. epoch counts the
 * failures the loop processed (plans carry it: stage.c); the executor keeps
 * its rules (exec_int.h). */
enum { SVC_EXEC_THREADS = 0, SVC_EXEC_INLINE, SVC_EXEC_MANUAL };

typedef struct svc_exec {
    svc_queue_t q;                 /* plans in issue order, and the lanes' results */
    pthread_t th;
    bool running;
    atomic_bool stop;              /* finish the op in progress on each lane, then end */
    pthread_mutex_t mu;            /* a leaf: epoch */
    uint64_t epoch;
    int mode;                      /* SVC_EXEC_THREADS (the daemon); tests: INLINE runs
                                    * each op on the caller's thread, MANUAL hands it out */
    struct svc_xs *xs;             /* the executor thread's (exec_int.h) */
} svc_exec_t;

/* A GPU's health as the loop knows it (gpuhealth.c; render.c reads it). */
typedef struct svc_ghealth {
    bool unhealthy;
    double since;                  /* wall time of the last change */
    char why[160];
} svc_ghealth_t;

/* --- ownership (own.c, recover.c; ext_adopt.c in Kubernetes mode) ------- */

#define SVC_LABEL_RECOVERED "migsched.io/recovered"   /* adopted by --recovery adopt */
#define SVC_LABEL_FOUND "migsched.io/found"           /* an instance found with no owner (Kubernetes) */
#define SVC_LABEL_FOREIGN "migsched.io/foreign"       /* another owner's (a dra: tag): held, never destroyed */

/* The loop's (main's before the loop starts). */
typedef struct svc_own {
    bool *stale;                   /* [ngpus]: this replica has not read the GPU's
                                    * inventory since it leads (Kubernetes mode: every GPU
                                    * until the takeover); NULL: none is */
    int ngpus, nstale;
    struct svc_job **found;        /* jobs made from instances no owner claimed yet */
    int nfound, capfound;
    atomic_int unowned;            /* nfound (the metric; any thread reads) */
    long destroyed;                /* found jobs cancelled past the grace period */
} svc_own_t;

/* --- the daemon ---------------------------------------------------------- */

typedef struct svc {
    svc_cfg_t *cfg;
    const svc_clock_t *clock;      /* &svc_clock_real unless a test's */
    bool inited;                   /* svc_init succeeded */
    int listen_fd;                 /* bound by svc_http_listen, MHD's once started; -1 none */
    ms_cluster_spec_t *spec;
    ms_sched_t *sched;             /* the loop's (restart.c before it starts) */
    svc_store_t *store;
    ms_backend_t *be;
    svc_jobs_t jobs;
    pthread_mutex_t rmu;           /* lock 1: readers vs the loop: the table's arrays, each job's pub */
    svc_metrics_t met;
    uint64_t id_counter;
    char id_prefix[24];
    svc_loop_t loop;
    svc_syncer_t sync;
    svc_exec_t exec;
    svc_events_t ev;

    /* auth (http_server.c loads, http.c checks) */
    pthread_mutex_t tmu;
    char *token;
    size_t token_len;

    /* the Kubernetes extender (extender.h) and API-server client */
    struct svc_ext *ext;           /* the pod map (the loop's) */
    struct ms_kube *kube;
    struct svc_kctl *_Atomic kctl; /* kctl.h; NULL none; stored whole by main, read by all */
    struct svc_ext_watch *watch;   /* the pod watch (ext_kube.c); NULL none */
    struct svc_ext_workers *workers;   /* the extender's worker pool (ext_worker.c) */
    /* a test's failpoints, MIGSCHEDD_EXT_FAIL=stall-before-binding:PREFIX
     * or stall-before-eviction:PREFIX (set by main at start-up, read by
     * the workers): a bind of a pod, or an eviction (not a dry run) of a
     * victim, whose name starts with PREFIX sleeps 5 s between choosing
     * its request's deadline and sending it (tests/k8s/
     * test_e2e_stale_bind.sh, test_e2e_stale_evict.sh) */
    char ext_stall_bind[32];
    char ext_stall_evict[32];
    svc_ghealth_t *health;         /* [GPUs] the loop's (gpuhealth.c); NULL: all healthy */
    long unhealthy;                /* GPUs unhealthy now (the loop's) */
    struct svc_dra *dra;           /* --dra mode (dra.h); NULL otherwise */
    svc_own_t own;
    char start_why[768];           /* why start-up refused ("" none): main prints it */
    bool ready;
    atomic_bool stopping;          /* main: SIGTERM came; the loop gives up what it cannot store */
    double started;
    long restored_jobs, adopted, destroyed_at_start;
    ms_sim_tenants_t tenants;      /* declared now (the loop's; tenants.c) */
} svc_t;

/* lifecycle.c (main): everything the loop needs (locks, queues, the job
 * table, events), then restart.c's reconciliation, then the syncer, the
 * executor and the loop; and their ordered stop. */
int svc_init(svc_t *d);
int svc_start(svc_t *d);
void svc_stop(svc_t *d);
void svc_fini(svc_t *d);

/* restart.c (main, before the loop starts): load the store, build the
 * scheduler, reconcile it with the backend's inventory, requeue; 0 or -1
 * (logged). */
int svc_restart(svc_t *d, double now);
/* The scheduler alone (restart.c; tests). */
int svc_sched_build(svc_t *d, double now);

/* own.c, recover.c: service/own.h; tenants.c: service/tenants.h */

/* call.c (any thread) */
/* Post a message and wait for its reply (threads that may block: the
 * extender's workers, the pod watch, kctl). */
void svc_call(svc_t *d, svc_msg_t *m);
/* Post a message; fn(m) is called once it is answered (m->reply_arg = arg),
 * on the syncer's thread with no lock held: it must not block. -1 when the
 * loop has stopped (m is not posted, fn not called). */
int svc_call_async(svc_t *d, svc_msg_t *m, void (*fn)(svc_msg_t *m), void *arg);
/* Post a message no one waits for (the executor's outcomes). */
void svc_post(svc_t *d, svc_msg_t *m);
void svc_msg_free(svc_msg_t *m);
/* The syncer: m's answer goes to its caller (waiter or callback); from here
 * m is the caller's. */
void svc_msg_answer(svc_msg_t *m);
/* Set m's answer (loop): a JSON body, a job's view, an error. */
void svc_reply_json(svc_msg_t *m, int status, json_t *o);
void svc_reply_view(svc_msg_t *m, int status, svc_job_t *j);
void svc_reply_err(svc_msg_t *m, int status, const char *field, const char *msg);

/* loop.c (the loop thread) */
void *svc_loop_main(void *d);
/* One batch (messages linked by link.next) at `now`: reads answered first,
 * then the writes, the sim ends, the tick, the sync; committed unless the
 * commit delay holds it (force: commit). Tests drive the loop with it. */
void svc_loop_batch(svc_t *d, svc_qlink_t *batch, double now, bool force_commit);

/* handlers.c (loop) */
void svc_handle(svc_t *d, svc_msg_t *m, double now);
void svc_h_submit(svc_t *d, svc_msg_t *m, double now);
void svc_h_list(svc_t *d, svc_msg_t *m, double now);
void svc_h_cancel(svc_t *d, svc_msg_t *m, double now);
void svc_h_done(svc_t *d, svc_msg_t *m, double now);
void svc_h_cluster(svc_t *d, svc_msg_t *m, double now);
void svc_h_metrics(svc_t *d, svc_msg_t *m, double now);
void svc_h_ready(svc_t *d, svc_msg_t *m, double now);
void svc_h_opresult(svc_t *d, svc_msg_t *m, double now);

/* jobsync.c (loop): the scheduler's view into the table, store and events */
/* Mark a job changed (by a plan or outside one: the extender): synced to
 * the table, store and events at the end of the batch. */
void svc_loop_mark(svc_t *d, svc_job_t *j);
/* Publish j's view after the next commit. */
void svc_loop_topub(svc_t *d, svc_job_t *j);
void svc_job_sync(svc_t *d, svc_job_t *j, double now);
/* A sim job's run from its start (duration_s > 0): its duration in the
 * daemon's seconds, less what its checkpoints kept over its preemptions
 * (the scheduler counts them in the daemon's seconds); never below 0. */
double svc_job_sim_run(const svc_t *d, const svc_job_t *j);
void svc_sync_dirty(svc_t *d, double now);
/* What a scheduler call about j changed (its plans' jobs are marked by the
 * staging); logs an unexpected status. */
void svc_after_call(svc_t *d, svc_job_t *j, ms_status_t st, const char *what);
/* A sim job ends on its own at `at` / end the due ones. */
void svc_ends_set(svc_t *d, svc_job_t *j, double at);
void svc_finish_due(svc_t *d, double now);
/* A new job into the table, in two steps around the scheduler call that
 * takes it (submit, reserve, adopt), which only a cancel's plan can undo:
 * svc_table_reserve makes the room first (0, or -1 out of memory: nothing
 * taken yet), svc_table_add then cannot fail. Both under the readers'
 * lock (HTTP threads look jobs up in the table). */
int svc_table_reserve(svc_t *d);
void svc_table_add(svc_t *d, svc_job_t *j, int32_t slot);
/* The table's job of a scheduler slot, or the one being submitted. */
svc_job_t *svc_job_of_slot(svc_t *d, int32_t slot);

/* stage.c (loop): the scheduler's executor callback journals each plan in
 * the open transaction and stages it; the commit's ticket takes the staged
 * plans to the executor. */
ms_status_t svc_stage_plan(void *d, const ms_sched_plan_t *p);

/* redo.c (loop): a store that cannot write. svc_redo_op_result records an
 * op's outcome (kept until a commit holds it) and writes it;
 * svc_redo_write writes again what failed commits held, at the start of a
 * batch's transaction; svc_redo_failed rolls a failed commit back and keeps
 * everything; svc_redo_committed clears what a commit made durable;
 * svc_redo_refuses tells the messages refused with 503 meanwhile (new
 * submissions). */
int svc_redo_op_result(svc_t *d, int64_t plan_id, int idx, const char *result, double now);
void svc_redo_write(svc_t *d, double now);
void svc_redo_failed(svc_t *d);
void svc_redo_committed(svc_t *d);
bool svc_redo_refuses(const svc_t *d, const svc_msg_t *m);
void svc_redo_give_up(svc_t *d);
void svc_redo_free(svc_t *d);

/* syncer.c (the syncer thread) */
void *svc_syncer_main(void *d);
/* Release one ticket whose commits are durable (the syncer; restart.c for
 * the first). */
void svc_ticket_release(svc_t *d, svc_ticket_t *t);

/* exec.c */
/* (main) The executor's lanes for d's nodes (svc_init; d->spec set): 0 or
 * -1; freed by svc_exec_fini (svc_fini). */
int svc_exec_init(svc_t *d);
void svc_exec_fini(svc_t *d);
/* The executor thread's body. */
void *svc_exec_main(void *d);
/* (main) Stop it: each lane finishes the op in progress, the rest stays
 * pending in the journal; then join it. */
void svc_exec_stop(svc_t *d);
/* Tests play the executor thread (modes INLINE, MANUAL): take what the
 * queue holds, fire the timers due at now (the clock's mono) and run what
 * may run; the ops run (INLINE) or handed out (MANUAL). */
int svc_exec_step(svc_t *d, double now);
/* MANUAL: the op handed out first (NULL none): its plan and op index;
 * complete it with st (and why) as a lane would. */
bool svc_exec_manual_peek(svc_t *d, int64_t *plan_id, int *idx, int *gpu);
void svc_exec_manual_done(svc_t *d, int64_t plan_id, int idx, ms_status_t st, const char *field, double now);
/* hook.c (a lane worker): the migration hook for a MOVE; 0, or -1 with why. */
int svc_hook_run(svc_t *d, const svc_xop_t *x, char *why, size_t len);

/* gpuhealth.c (loop): a GPU's health changed (SVC_M_HEALTH): the
 * scheduler cordons or uncordons it, an event, the status page and
 * /metrics show it. */
void svc_h_health(svc_t *d, svc_msg_t *m, double now);
/* A create on gpu was refused: hold what the backend has there and the
 * view does not (before the rollback's pass). */
void svc_gpu_reconcile(svc_t *d, int gpu, double now);
bool svc_gpu_healthy(const svc_t *d, int gpu);

/* events.c (any thread, under svc_events_t.mu) */
int svc_events_init(svc_t *d, uint64_t next);
void svc_events_free(svc_t *d);
void svc_event_add(svc_t *d, const char *job, const char *state, const char *by, double t);   /* loop */
void svc_events_publish_to(svc_t *d, uint64_t next);   /* events < next are durable */
uint64_t svc_events_next(svc_t *d);  /* seq of the next event to be added */
void svc_events_wake(svc_t *d);      /* shutdown */
/* fn(ctx, e) for each event in the ring with seq >= since, published or
 * not, in order (the loop: redo.c writes them again); stops at fn's first
 * non-zero and returns it. */
int svc_events_each(svc_t *d, uint64_t since, int (*fn)(void *ctx, const svc_event_t *e), void *ctx);
/* The published events with seq >= since, at most limit, as the JSON of
 * GET /v1/events; never waits. */
char *svc_events_get(svc_t *d, uint64_t since, long limit);
/* Park w (its since, deadline, wake and arg set) unless an event >= since
 * is published, the deadline has passed (at now, the clock's mono) or the
 * daemon stops: then false, nothing parked. suspend(arg) runs under the
 * ring's lock before w is listed, so the wake cannot come before the
 * suspension. */
bool svc_events_park(svc_t *d, svc_ewait_t *w, void (*suspend)(void *arg), double now);
/* Parked waiters now. */
int svc_events_parked(svc_t *d);
/* (the timer thread, holding svc_events_t.mu) Wake the waiters whose
 * deadline passed at now; the earliest deadline left (now + 1 s at most). */
double svc_events_expire(svc_t *d, double now);

/* evtimer.c (main starts and stops the timer thread) */
int svc_evtimer_start(svc_t *d);
void svc_evtimer_stop(svc_t *d);

/* render.c (loop): /v1/cluster and /metrics */
json_t *svc_cluster_json(svc_t *d);
char *svc_metrics_text(svc_t *d);

/* http_server.c (main) */
typedef struct svc_http svc_http_t;
/* Bind and listen on --listen (d->listen_fd), before start-up touches any
 * state: a daemon that cannot have its port exits before it reconciles. */
int svc_http_listen(svc_t *d);
/* Serve on the socket that svc_http_listen bound (an error without one). */
int svc_http_start(svc_t *d, svc_http_t **out);
void svc_http_stop(svc_http_t *h);
int svc_token_load(svc_t *d);

/* status_page.c */
extern const char *const svc_status_html[];   /* lines, NULL-terminated */

#endif
