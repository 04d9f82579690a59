/* svc.h - private to migschedd: the daemon's shared types.
 *
 * Threads and ownership (docs/service.md):
 *   - the loop thread (loop.c) owns the ms_sched_t, the job table (jobs.c)
 *     and the store's write connection (store.c). Nothing else touches them.
 *   - HTTP threads (http.c: libmicrohttpd's epoll thread, or a small pool
 *     of them, --http-threads) parse and validate a request, put a message
 *     on the loop's queue and suspend the connection; the reply resumes it
 *     (svc_call_async). No HTTP thread ever sleeps on the loop, the event
 *     ring or the API server. A queue, not a mutex around ms_sched: the loop takes every message
 *     that arrived while it was busy as one batch and commits the batch in
 *     one SQLite transaction (group commit), so one fsync acknowledges many
 *     submissions; a mutex would serialise one fsync per request.
 *   - the executor thread (exec.c) runs plan ops on the backend, in order,
 *     and posts each outcome back to the loop's queue.
 *   - the main thread waits for signals (SIGTERM/SIGINT: stop; SIGHUP: reload
 *     the token file).
 */
#ifndef MIGSCHED_SVC_H
#define MIGSCHED_SVC_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/idmap.h"
#include "migsched/policy.h"
#include "migsched/sched.h"
#include "service/backend.h"
#include "service/jtext.h"

/* --- configuration (config.c) ------------------------------------------ */

typedef struct svc_cfg {
    char *listen;                  /* "HOST:PORT" */
    char *state_dir;
    char *backend;                 /* sim, dry-run, nvml, agent */
    char **nodes;                  /* node spec texts */
    int nnodes;
    char *policy;
    ms_policy_cfg_t pcfg;
    ms_sched_cfg_t qcfg;           /* its queue fields only (queue, backfill-bound,
                                    * aging-rate, default-estimate: ms_sched_cfg_set) */
    char *static_layout;           /* owned copy behind pcfg.static_layout */
    double time_scale;             /* sim: duration_s / time_scale real seconds */
    double op_delay_s;             /* sim: seconds per op */
    char *sim_fail;                /* sim: "KIND:N" every Nth op of KIND fails */
    char *migrate_hook;            /* shell command that moves a job's work (MOVE ops) */
    double migrate_timeout_s;      /* the hook's deadline */
    char *token_file, *tls_cert, *tls_key;
    long max_body;                 /* bytes */
    int max_conns;
    int http_threads;              /* libmicrohttpd's epoll threads (a pool when > 1) */
    double commit_delay_s;         /* a commit waits until this long after the last one */
    bool allow_remote;             /* listen beyond loopback */
    /* Kubernetes (extender.h, src/kube/kube.h) */
    bool kube;                     /* bind through the API server */
    char *kube_api, *kube_token_file, *kube_ca, *kubeconfig;
    double ext_ttl_s;              /* extender reservations (default 30 s) */
    /* Kubernetes control loops (kctl.h) */
    bool leader_elect;             /* take part in leader election on a Lease */
    char *lease;                   /* "NAMESPACE/NAME" (default migsched/migschedd) */
    double lease_s;                /* lease duration (default 10 s) */
    char *k8s_policy;              /* cluster policy file: node layouts to switch */
    double layout_period_s;        /* node layout loop period (default 5 s) */
    /* overrides of the policy's switching section; < 0: not given */
    double layout_hysteresis_s, layout_drain_s, layout_apply_s;
    int layout_budget, layout_min_gain;
    bool layout_evict;
    char **agents;                 /* backend agent: "NODE=URL" texts */
    int nagents;
    char *agent_token_file;        /* backend agent: bearer token for the agents */
} svc_cfg_t;

/* Parse argv (and --config FILE). Returns 0, or prints the error and returns
 * 2 (usage) / 1; returns -1 after --help. */
int svc_cfg_parse(svc_cfg_t *cfg, int argc, char **argv);
void svc_cfg_free(svc_cfg_t *cfg);

/* --- logging (log.c): one JSON object a line on stderr ----------------- */

/* fields may be NULL; it is stolen. */
void svc_log(const char *level, const char *msg, json_t *fields);
double svc_now(void);                 /* CLOCK_REALTIME, seconds */
double svc_mono(void);                /* CLOCK_MONOTONIC, seconds */

/* --- jobs (jobs.c) ------------------------------------------------------ */

/* A validated request (api.c parses it). Strings owned. */
typedef struct svc_req {
    char *profile;
    double mem_gb;
    char *model;
    ms_isolation_t isolation;
    int gang, priority;
    bool migratable;
    double duration_s, estimate_s;
    json_t *labels;                /* object of strings, owned reference */
} svc_req_t;

typedef struct svc_place {
    int node;                      /* -1 when not placed */
    char node_name[64];
    int gpu;                       /* index within the node */
    int gpu_global;
    int start;                     /* -1 time-slice slot / whole GPU */
    char profile[32];
    int ninst;
} svc_place_t;

/* What a reader may see of a job: its state as of the last commit. The loop
 * copies it into svc_job_t.pub after each commit (under svc_t.rmu), so an
 * HTTP thread answers GET /v1/jobs/{id} without waiting for the loop and
 * never sees a state that a crash could take back. */
typedef struct svc_jview {
    int state;
    double submit_t, start_t, end_t;
    svc_place_t place;
    char *reason;                  /* NULL when none; owned */
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
    svc_jview_t pub;               /* committed view (svc_t.rmu); valid once published */
    bool published;                /* (svc_t.rmu) */
    bool topub;                    /* loop: changed in this batch, publish after the commit */
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

/* --- API parsing and rendering (api.c) ---------------------------------- */

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
bool svc_id_valid(const char *id);
/* A job's JSON (docs/api.md) from a view, appended to t; any thread: id and
 * body never change once the job is in the table. */
void svc_job_render(svc_jtext_t *t, const char *id, const char *body, const svc_jview_t *v,
                    svc_backend_t *be);
/* The same as a malloc'd string; NULL out of memory. */
char *svc_job_text(const char *id, const char *body, const svc_jview_t *v, svc_backend_t *be);

/* --- store (store.c) ---------------------------------------------------- */

typedef struct svc_store svc_store_t;

int svc_store_open(svc_store_t **out, const char *dir);
void svc_store_close(svc_store_t *s);
int svc_store_begin(svc_store_t *s);
int svc_store_commit(svc_store_t *s);
void svc_store_rollback(svc_store_t *s);
/* Insert a new job; sets j->seq. */
int svc_store_job_insert(svc_store_t *s, svc_job_t *j);
int svc_store_job_update(svc_store_t *s, const svc_job_t *j);
/* Load every job, in seq order; fn takes ownership of each job. */
int svc_store_load(svc_store_t *s, int (*fn)(void *ctx, svc_job_t *j), void *ctx);
/* Journal a plan and its n ops; returns its id (> 0) in *plan_id. */
struct svc_xop;
int svc_store_plan(svc_store_t *s, const char *kind, double t, const struct svc_xop *ops, int n,
                   int64_t *plan_id);
int svc_store_op_result(svc_store_t *s, int64_t plan_id, int idx, const char *result, double t);
int svc_store_event(svc_store_t *s, uint64_t seq, const char *job, const char *state, double t);
uint64_t svc_store_last_event(svc_store_t *s);
/* Plans whose ops are not all settled (after a crash): how many. */
long svc_store_unsettled(svc_store_t *s);
/* Make every committed transaction durable (fsync of the WAL); any thread,
 * while the loop goes on committing. */
int svc_store_sync(svc_store_t *s);
/* Mark every unsettled op "abandoned" (reconciled from the inventory). */
int svc_store_abandon(svc_store_t *s, double t);

/* --- metrics (metrics.c) ------------------------------------------------ */

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
    SVC_RT_PAGE, SVC_RT_EXTENDER, SVC_RT_N
};
extern const char *const svc_rt_method[SVC_RT_N], *const svc_rt_path[SVC_RT_N];

typedef struct svc_metrics {
    svc_hist_t wait;               /* job wait seconds (loop) */
    uint64_t ops[6][3];            /* [op kind][done, failed, abandoned] (loop) */
    uint64_t migrations[2][2];     /* [mbb, bbm][ok, failed] (loop) */
    /* where the loop's time goes (loop): batches, messages, and the seconds
     * messages waited in the queue, handling them and the scheduler's work
     * ("decide"), the commit (fsync), and answering plus publishing */
    uint64_t loop_batches, loop_msgs;
    double loop_wait_s, loop_decide_s, loop_commit_s, loop_reply_s;
    /* the syncer's fsyncs (written by it, read by the loop) */
    atomic_ullong syncs, sync_ns;
    pthread_mutex_t http_mu;       /* guards the rest */
    uint64_t http_codes[600];
    svc_hist_t http_dur[SVC_RT_N]; /* by route (SVC_RT_*) */
} svc_metrics_t;

void svc_metrics_init(svc_metrics_t *m);
void svc_metrics_destroy(svc_metrics_t *m);
void svc_metrics_http(svc_metrics_t *m, int code, int route, double secs);

/* --- the daemon --------------------------------------------------------- */

enum svc_msg_kind {
    SVC_M_SUBMIT = 1, SVC_M_GET, SVC_M_LIST, SVC_M_CANCEL, SVC_M_DONE, SVC_M_CLUSTER,
    SVC_M_METRICS, SVC_M_READY, SVC_M_OPRESULT,
    SVC_M_EXT                      /* the Kubernetes extender (extender.c) */
};

typedef struct svc_msg {
    int kind;
    struct svc_msg *next;
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
    svc_job_t *job;
    void *ext;                     /* SVC_M_EXT: its message (extender_int.h) */
    double t_enq;                  /* svc_mono() when queued */
    pthread_cond_t *wcv;           /* the waiting thread's (svc_call) */
    /* svc_call_async: called once m is answered, by the thread that
     * answered it, with no lock held; from then m is the caller's */
    void (*on_reply)(struct svc_msg *m);
    void *reply_arg;
    /* reply */
    bool done;
    svc_job_t *rjob;               /* set: the HTTP thread renders rjob with rview */
    svc_jview_t rview;             /* owned (reason) */
    int status;
    char *body;                    /* malloc'd; the HTTP side frees it */
    const char *ctype;
} svc_msg_t;

/* One op as the executor runs it. */
typedef struct svc_xop {
    ms_op_t op;                    /* global GPU numbers */
    uint64_t op_id;                /* ms_sched's id */
    int idx;                       /* in its plan */
    char job[128];                 /* the job's id ("" none); long ids cut (sim tag) */
    svc_job_t *jp;
    char prof_name[32];
} svc_xop_t;

typedef struct svc_xplan {
    struct svc_xplan *next;
    int64_t plan_id;
    uint64_t epoch;         /* failures the loop had processed when it was made */
    int kind;
    int n;
    svc_xop_t *ops;
} svc_xplan_t;

typedef struct svc_event {
    uint64_t seq;
    double t;
    char job[128];
    char state[16];
} svc_event_t;

#define SVC_EVENTS 8192

typedef struct svc {
    svc_cfg_t *cfg;
    int listen_fd;                 /* bound by svc_http_listen, MHD's once started; -1 none */
    ms_cluster_spec_t *spec;
    ms_sched_t *sched;
    svc_store_t *store;
    svc_backend_t *be;
    svc_jobs_t jobs;
    pthread_mutex_t rmu;           /* readers vs the loop: the table's arrays and each job's pub; taken before emu where both are */
    svc_metrics_t met;
    uint64_t id_counter;
    char id_prefix[24];

    /* the loop's queue */
    pthread_mutex_t mu;
    pthread_cond_t cv;             /* new messages */
    pthread_cond_t reply_cv;       /* replies (broadcast; each waiter checks done) */
    svc_msg_t *qhead, *qtail;
    bool stopping, stopped;
    pthread_t loop_th;

    /* staged plans: journalled in the current transaction, handed to the
     * executor after its commit */
    svc_xplan_t *staged_head, *staged_tail;
    bool reconciling;
    int sched_err;

    /* the syncer (loop.c): commits are fsynced off the loop, which goes on
     * with the next batch meanwhile; each ticket (a batch's replies, views,
     * events and plans) is released once the commits it needs are durable */
    pthread_mutex_t smu;
    pthread_cond_t scv;
    struct svc_ticket *shead, *stail;
    uint64_t commits;              /* loop: transactions committed */
    bool sstop;
    pthread_t sync_th;

    /* executor */
    pthread_mutex_t xmu;
    pthread_cond_t xcv;
    svc_xplan_t *xhead, *xtail;
    bool xstop;
    /* the executor contract (docs/sched.md): after a failure every op issued
     * before the scheduler heard of it is discarded. xepoch counts failures
     * the loop processed (plans carry it); xdiscard: plans of an epoch up to
     * it are discarded (set by the executor when an op fails) */
    uint64_t xepoch;
    uint64_t xdiscard;
    bool xdiscarding;
    pthread_t exec_th;

    /* events */
    pthread_mutex_t emu;
    svc_event_t *ev;               /* ring [SVC_EVENTS] */
    uint64_t ev_next;              /* seq of the next event */
    uint64_t ev_first;             /* oldest seq in the ring */
    uint64_t ev_pub;               /* events < this are committed and visible */
    bool ev_stop;                  /* shutting down: long polls return */
    /* parked waiters (long polls, event streams: svc_events_park), under
     * emu; the timer thread wakes them at their deadlines */
    struct svc_ewait *ew_head;
    int ew_n;
    pthread_cond_t ew_cv;          /* CLOCK_MONOTONIC: the timer's */
    double ew_at;                  /* when the timer wakes next (svc_mono) */
    bool ew_run;
    pthread_t ew_th;

    /* auth */
    pthread_mutex_t tmu;
    char *token;
    size_t token_len;

    /* the Kubernetes extender (extender.c) and API-server client */
    struct svc_ext *ext;
    struct ms_kube *kube;
    struct svc_kctl *kctl;         /* leader election, node layouts (kctl.h); NULL none */
    pthread_t watch_th;
    bool watching;
    volatile int watch_stop;

    bool ready;
    double started;
    long restored_jobs, adopted, destroyed_at_start;
} svc_t;

/* loop.c */
int svc_start(svc_t *d);                 /* reconcile, then start loop + executor */
void svc_stop(svc_t *d);                 /* drain, flush, join */
/* Post a message and wait for its reply (threads that may block: the
 * extender's worker, the API-server watch). */
void svc_call(svc_t *d, svc_msg_t *m);
/* Post a message; fn(m) is called once it is answered (m->reply_arg = arg),
 * on the loop's or the syncer's thread with no lock held: it must not
 * block. -1 when the loop has stopped (m is not posted, fn not called). */
int svc_call_async(svc_t *d, svc_msg_t *m, void (*fn)(svc_msg_t *m), void *arg);
void svc_post(svc_t *d, svc_msg_t *m);   /* no reply wanted (executor) */
void svc_msg_free(svc_msg_t *m);
/* Mark a job changed outside a scheduler plan (the extender): the loop
 * syncs it to the table, store and events at the end of the batch. */
void svc_loop_mark(svc_job_t *j);
/* A new job into the table, in two steps around the scheduler call that
 * takes it (submit, reserve, adopt), which only a cancel's plan can undo:
 * svc_table_reserve makes the room first (0, or -1 out of memory: nothing
 * taken yet), svc_table_add then cannot fail. Both under the readers'
 * lock (HTTP threads look jobs up in the table); the loop's thread only. */
int svc_table_reserve(svc_t *d);
void svc_table_add(svc_t *d, svc_job_t *j, int32_t slot);
/* GET /v1/jobs/{id} from the committed views, without the loop: the status
 * and a malloc'd JSON body. */
int svc_job_read(svc_t *d, const char *id, char **body);
/* The reply body of m (the HTTP side): m->body, or m->rjob rendered. */
char *svc_msg_body(svc_t *d, svc_msg_t *m);

/* exec.c */
int svc_exec_start(svc_t *d);
void svc_exec_stop(svc_t *d);
void svc_exec_push(svc_t *d, svc_xplan_t *p);
void svc_xplan_free(svc_xplan_t *p);

/* events.c */
int svc_events_init(svc_t *d, uint64_t next);
void svc_events_free(svc_t *d);
void svc_event_add(svc_t *d, const char *job, const char *state, double t);
void svc_events_publish(svc_t *d);   /* after a commit */
void svc_events_publish_to(svc_t *d, uint64_t next);   /* events < next are durable */
uint64_t svc_events_next(svc_t *d);  /* seq of the next event to be added */
void svc_events_wake(svc_t *d);      /* shutdown */
/* The published events with seq >= since, at most limit, as the JSON of
 * GET /v1/events; never waits. */
char *svc_events_get(svc_t *d, uint64_t since, long limit);

/* A waiter parked on the event ring (an HTTP connection suspended in a long
 * poll or an event stream). */
typedef struct svc_ewait {
    struct svc_ewait *prev, *next;
    uint64_t since;                /* woken once an event with seq >= since is published */
    double deadline;               /* svc_mono(): woken then */
    bool parked;                   /* (d->emu) */
    /* under d->emu, once w has left the list: resume the connection; it
     * must not take emu or block */
    void (*wake)(struct svc_ewait *w);
    void *arg;
} svc_ewait_t;

/* Park w (its since, deadline, wake and arg set) unless an event >= since
 * is published, the deadline has passed or the daemon stops: then false,
 * nothing parked. suspend(arg) runs under d->emu before w is listed, so the
 * wake cannot come before the suspension. */
bool svc_events_park(svc_t *d, svc_ewait_t *w, void (*suspend)(void *arg));
/* Parked waiters now. */
int svc_events_parked(svc_t *d);
/* The timer thread that wakes waiters at their deadlines. */
int svc_events_timer_start(svc_t *d);
void svc_events_timer_stop(svc_t *d);

/* render.c: /v1/cluster and /metrics (loop thread) */
json_t *svc_cluster_json(svc_t *d);
char *svc_metrics_text(svc_t *d);

/* http.c */
typedef struct svc_http svc_http_t;
/* Bind and listen on --listen (d->listen_fd), before start-up touches any
 * state: a daemon that cannot have its port exits before it reconciles. */
int svc_http_listen(svc_t *d);
/* Serve on the socket that svc_http_listen bound (an error without one). */
int svc_http_start(svc_t *d, svc_http_t **out);
void svc_http_stop(svc_http_t *h);
int svc_token_load(svc_t *d);

/* extender.c, extender_kube.c: the Kubernetes side (main.c) */
int svc_ext_init(svc_t *d);
void svc_ext_free(svc_t *d);
int svc_ext_kube_open(svc_t *d);
void svc_ext_kube_close(svc_t *d);
int svc_ext_watch_start(svc_t *d);
void svc_ext_watch_stop(svc_t *d);

/* status_page.c */
extern const char *const svc_status_html[];   /* lines, NULL-terminated */

#endif
