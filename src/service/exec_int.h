/* exec_int.h - private to the executor (exec.c, lanes.c, health.c,
 * worker.c): its lanes, its GPUs' health and backoff, its workers.
 *
 * THE MODEL. The executor thread (exec.c, the dispatcher) owns every
 * structure here; the lane workers (worker.c) only run the op or probe
 * they are handed and send it back through the executor's queue (svc_exec_t.q,
 * the queue plans arrive in), so nothing here is locked.
 *   - A lane is a node: at most one op (or probe) of a node is in flight,
 *     so a hung agent holds one worker and its own node, never another
 *     node's ops (issue 20, defect 7).
 *   - Order: each GPU keeps the plans that touch it in the order they were
 *     issued (a FIFO of references); a plan runs, op by op in its order,
 *     once it heads the FIFO of every GPU it touches. Ops that depend on
 *     each other share a GPU (slices, or the job's instance: a MOVE touches
 *     both its GPUs, so a MOVE across nodes orders both lanes), so plans of
 *     different GPUs run at once and never out of dependency order.
 *   - The contract with ms_sched (docs/sched.md: after a failure every op
 *     issued before the scheduler heard of it is discarded) is kept by a
 *     rule and a barrier, below (exec.c).
 * Lanes never sleep: a plan waits on a list (its node busy or backing off,
 * its GPU backing off or unhealthy) and is woken by the event that ends
 * the wait (the node's op returns, a timer in the executor's heap, the
 * GPU's health back), so the executor's work grows with what happens, not
 * with the cluster.
 */
#ifndef MIGSCHED_SVC_EXEC_INT_H
#define MIGSCHED_SVC_EXEC_INT_H

#include "core/evheap.h"
#include "migsched/rng.h"
#include "service/svc.h"

#define XS_BACKOFF_MIN_S 0.5      /* first wait after a failure on a GPU or node */
#define XS_BACKOFF_MAX_S 60.0     /* the most any wait grows to */
#define XS_PROBE_MIN_S 1.0        /* an unhealthy GPU's first probe */
#define XS_MAX_WORKERS 256        /* lane workers at most (one per node in flight) */
#define XS_LOG_EVERY 100          /* a failing GPU's line again after this many */

/* What a worker is handed: an op of a plan or a probe of a GPU. It travels
 * back to the executor in its queue as hdr (hdr.what = SVC_X_RESULT). One
 * per node, embedded: a node has at most one in flight. */
typedef struct xs_work {
    svc_xplan_t hdr;
    svc_qlink_t wlink;            /* in the workers' queue */
    bool probe;                   /* a probe of gpu, else op idx of plan p */
    svc_xplan_t *p;
    int idx;
    int gpu;
    int node, node2;              /* the nodes it holds (node2 -1: one) */
    uint64_t seq;                 /* dispatch order */
    double t0;                    /* the clock's mono at dispatch */
    /* the outcome (the worker's) */
    ms_status_t st;
    ms_backend_fault_t fault;
    char why[300];
} xs_work_t;

/* One GPU's place in a plan: the plan in that GPU's FIFO. */
typedef struct xs_ref {
    struct xs_ref *next;          /* the next plan's reference in the FIFO */
    svc_xplan_t *p;
    int32_t gpu;
} xs_ref_t;

/* A plan's state in the lanes (svc_xplan_t.rt). */
typedef struct xs_run {
    int next, end;                /* the next op to run; [end, n) are settled */
    int nref, heads;              /* GPUs it touches; FIFOs it heads */
    bool running;                 /* an op in flight */
    bool waiting;                 /* on a wait list or the runnable list */
    svc_xplan_t *wnext;           /* in that list */
    svc_xplan_t *rprev, *rnext;   /* registered plans, in arrival order */
    xs_ref_t ref[];               /* [nref] */
} xs_run_t;

/* A list of plans (runnable, or waiting on a node or GPU). */
typedef struct xs_list {
    svc_xplan_t *head, *tail;
} xs_list_t;

typedef struct xs_gpu {
    xs_ref_t *head, *tail;        /* its FIFO */
    int node;
    xs_list_t wait;               /* heads waiting for its backoff or health */
    double not_before, delay;     /* backoff */
    int fails;                    /* consecutive failures (the op's or the GPU's) */
    long logged_at;               /* fails when a line was last logged */
    bool unhealthy;
    double probe_at, probe_delay;
    bool probe_due;               /* waiting for its node to probe it */
} xs_gpu_t;

typedef struct xs_node {
    int first, n;                 /* its GPUs */
    bool busy;                    /* an op or probe in flight */
    xs_work_t work;               /* that op or probe */
    xs_list_t wait;               /* plans waiting for it or its backoff */
    double not_before, delay;
    int fails;                    /* consecutive failures to answer */
} xs_node_t;

/* A failure the scheduler is to hear of: the rule it sets and its message. */
typedef struct xs_fail {
    uint64_t op_id;
    uint64_t m;                   /* the epoch the loop reaches when it has handled it */
    svc_msg_t *msg;               /* NULL once posted */
} xs_fail_t;

struct svc_xs {
    int ngpus, nnodes;
    xs_gpu_t *gpu;                /* [ngpus] */
    xs_node_t *node;              /* [nnodes] */
    int unhealthy_after;          /* consecutive failures that make a GPU unhealthy */
    double op_timeout_s;
    int mode;                     /* SVC_EXEC_THREADS, _INLINE, _MANUAL */
    ms_rng_t rng;                 /* jitter */
    ms__evheap_t timers;          /* ids: [0,G) GPU wakes, [G,G+N) node wakes, [G+N,2G+N) probes */
    xs_list_t runnable;
    svc_xplan_t *reg_head, *reg_tail;   /* registered plans, arrival order */
    long nreg;
    uint64_t last_epoch;          /* of the last plan that arrived */
    uint64_t seq;                 /* dispatches */
    /* failures: the rules (every one not yet known to be past), the posts
     * waiting for their barrier (in m order), the discards waiting for
     * them */
    xs_fail_t *fails;
    int nfails, capfails, nposted;   /* fails[nposted..nfails) not posted yet */
    uint64_t m;                   /* failures so far */
    svc_qlink_t *held, **held_tail;   /* discard outcomes (svc_msg_t) */
    /* in flight */
    xs_work_t **flight;
    int nflight, capflight;
    /* workers (worker.c) */
    svc_queue_t workq;
    bool workq_init;
    pthread_t *workers;
    int nworkers;
    xs_work_t *manual;            /* SVC_EXEC_MANUAL: handed out, not run (tests) */
    bool stopping;
    svc_xplan_t stop_item;        /* svc_exec_stop's marker (what = SVC_X_STOP) */
    svc_qlink_t *intake, **intake_tail;   /* arrived, not registered yet (out of memory) */
    /* GPUs that just became unhealthy (health.c marks, exec.c fails what
     * would go onto them); GPUs whose probe is due (health.c, exec.c) */
    int32_t *newly, *probeq;      /* [ngpus] each */
    int nnewly, nprobeq;
};

/* lanes.c: the FIFOs, registration, readiness, the wait lists */
/* The plan's ops' GPUs into their FIFOs (rt allocated): 0, or -1 out of
 * memory (nothing registered). */
int xs_register(svc_t *d, svc_xplan_t *p);
/* The plan leaves every FIFO it is in (it must head them all) and the
 * registered list; the plans behind it that now head all theirs become
 * runnable. Frees it. */
void xs_unregister(svc_t *d, svc_xplan_t *p);
void xs_list_push(xs_list_t *l, svc_xplan_t *p);
svc_xplan_t *xs_list_pop(xs_list_t *l);
/* Every plan of src onto the runnable list. */
void xs_list_wake(svc_t *d, xs_list_t *src);
/* The node(s) an op holds: the GPU's node and, for a MOVE from another
 * node, that one (-1 none). */
void xs_op_nodes(const struct svc_xs *x, const ms_op_t *op, int *n1, int *n2);
/* Does the op put something onto GPU g (CREATE, START, a MOVE's target)? */
bool xs_places_on(const ms_op_t *op, int g);

/* health.c: backoff, failures, unhealthy GPUs, probes */
/* An op's or probe's outcome on its GPU and node (logs, rate-limited);
 * true when it made the GPU (or its node's GPUs) unhealthy. */
bool xs_health_outcome(svc_t *d, const xs_work_t *w, const char *what, double now);
/* Mark GPU g unhealthy (post the loop's HEALTH message first), or healthy
 * again (then its waiting plans are woken). */
void xs_health_set(svc_t *d, int g, bool healthy, const char *why, double now);
/* When the op may run on its GPU and node (their backoff): 0 now. */
double xs_not_before(const struct svc_xs *x, const ms_op_t *op);
/* Arm the timer of id at t (0 or -1 out of memory). */
int xs_timer(struct svc_xs *x, int32_t id, double t);
/* The timers due at now: wake GPUs' and nodes' waits, mark probes due. */
void xs_timers_fire(svc_t *d, double now);

/* worker.c: the lane workers */
/* Hand w to a worker (started if none is idle); -1: none could start
 * (the work is run on this thread). */
int xs_worker_hand(svc_t *d, xs_work_t *w);
/* Run w here (the workers' body; the inline mode's call). */
void xs_work_run(svc_t *d, xs_work_t *w);
void xs_workers_stop(svc_t *d);

#endif
