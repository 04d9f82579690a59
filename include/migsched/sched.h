/* sched.h - the scheduling loop as one object: ms_sched_t.
 *
 * The simulator, the fill experiment, the bench, the service and the
 * Kubernetes extender all drive the same ms_sched_t, so they make the same
 * decisions by construction. It owns:
 *   - the cluster: nodes in node groups; a group is the nodes of one GPU
 *     model, sharing mode and size, held as one homogeneous ms_cluster_t
 *     with its own policy instance and state index (so placement cost stays
 *     flat in cluster size: it grows with the number of distinct node kinds,
 *     never with nodes or GPUs);
 *   - the job table: string ids of any length (an id -> slot map), the
 *     request, its resolution per group, the state machine and placement;
 *   - the queue discipline (per-class FIFOs, FCFS with bounded backfill, or
 *     strict FIFO), make_room for the head, on_finish and on_idle hooks;
 *   - plan legality (who may do what) and job-scoped GIs (a GI created for a
 *     job goes when the job leaves);
 *   - asynchronous execution: every op it decides is applied to its view at
 *     once ("assumed") and, when op tracking is on, stays pending until the
 *     caller confirms or fails it; a failure rolls the view back;
 *   - reservations (hold a placement for a named request for T seconds) and
 *     restricted placement and per-node scores (for the extender).
 * Time always comes in as a parameter; it does no I/O, keeps no globals and
 * never prints.
 *
 * What a driver calls, and in which order (docs/sched.md has the sequence
 * diagrams):
 *   ms_sched_create(cfg)            once; with an executor callback
 *   ms_sched_submit(req, now)       a job arrives; plans go to the executor
 *   ms_sched_finished(slot, now)    a job ended on its own (or was told to)
 *   ms_sched_cancel(slot, now)      a user cancels a job (queued or running)
 *   ms_sched_tick(now)              time passed: expire reservations, wake
 *                                   time-driven policies
 *   ms_sched_op_done/op_failed(id)  the executor's outcome of each op, when
 *                                   cfg.track_ops is set
 * Every call may emit plans: the executor callback receives each decision
 * (an ordered list of ops) synchronously, in the order they were applied to
 * the view; the caller executes them later, in that order.
 *
 * GPU numbers in ops are global: nodes in the order of the configuration,
 * each node's GPUs in order. Job numbers in ops are slots.
 */
#ifndef MIGSCHED_SCHED_H
#define MIGSCHED_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "migsched/cluster.h"
#include "migsched/job.h"
#include "migsched/plan.h"
#include "migsched/policy.h"

/* --- nodes ------------------------------------------------------------- */

/* How a node shares its GPUs. */
typedef enum ms_node_mode {
    MS_NODE_MIG = 0,        /* MIG instances (the policy decides) */
    MS_NODE_TIMESLICE = 1,  /* up to `replicas` jobs share each GPU in time */
    MS_NODE_WHOLE = 2       /* MIG off: one job per GPU, the whole GPU */
} ms_node_mode_t;

typedef struct ms_node_spec {
    const char *name;       /* unique, non-empty */
    const ms_geom_t *geom;  /* borrowed; its model and active profiles */
    int ngpus;              /* >= 1 */
    ms_node_mode_t mode;
    int replicas;           /* timeslice: 1..MS_MAX_INST (0 = the policy cfg's) */
} ms_node_spec_t;

/* A parsed cluster description: "NAME=COUNTxMODEL[:mig|:timeslice=R|:whole]"
 * per node. Owns the geometries it created (one per distinct model). */
typedef struct ms_cluster_spec ms_cluster_spec_t;

ms_status_t ms_cluster_spec_create(ms_cluster_spec_t **out);
void ms_cluster_spec_destroy(ms_cluster_spec_t *cs);           /* NULL-safe */
/* Add one node from its text form; profile_set as for ms_geom_create (0 =
 * the classic set). diag names the part that is wrong. */
ms_status_t ms_cluster_spec_add(ms_cluster_spec_t *cs, const char *text, uint32_t profile_set,
                                ms_diag_t *diag);
/* Read a cluster file: one node a line in the same syntax, '#' comments and
 * blank lines ignored; diag names file and line. */
ms_status_t ms_cluster_spec_read_file(ms_cluster_spec_t *cs, const char *path,
                                      uint32_t profile_set, ms_diag_t *diag);
/* Add `count` nodes of one kind named PREFIX0, PREFIX1, ... (the
 * `--gpus N --gpus-per-node K --model M` shorthand). geom is borrowed. */
ms_status_t ms_cluster_spec_add_group(ms_cluster_spec_t *cs, const char *prefix, int nodes,
                                      const ms_geom_t *geom, int gpus_per_node,
                                      ms_node_mode_t mode, int replicas);
/* ngpus GPUs in nodes of gpus_per_node, the last node short if need be
 * (`--gpus 10 --gpus-per-node 4` is nodes of 4, 4 and 2). */
ms_status_t ms_cluster_spec_add_gpus(ms_cluster_spec_t *cs, const char *prefix, int ngpus,
                                     int gpus_per_node, const ms_geom_t *geom, ms_node_mode_t mode,
                                     int replicas);
int ms_cluster_spec_nnodes(const ms_cluster_spec_t *cs);
const ms_node_spec_t *ms_cluster_spec_nodes(const ms_cluster_spec_t *cs);
int ms_cluster_spec_ngpus(const ms_cluster_spec_t *cs);
/* True when every node has one model and mode and the same GPU count. */
bool ms_cluster_spec_homogeneous(const ms_cluster_spec_t *cs);

/* --- requests and jobs ------------------------------------------------- */

typedef enum ms_isolation {
    MS_ISO_ANY = 0,         /* MIG instance, time-sliced or whole GPU */
    MS_ISO_MIG = 1          /* a MIG instance or a whole GPU, never time-sliced */
} ms_isolation_t;

/* What a user asks for. Exactly one of: profile (a product name such as
 * "3g.20gb" or a generic size such as "3g"), mem_gb (> 0; optionally with
 * cslices), or prof_geom + prof (a profile index of that geometry: traces).
 * Resolution on a model (the rule, docs/sched.md):
 *   generic "Ng"      the smallest profile with >= N compute slices;
 *   product name      itself on its own model; elsewhere the smallest
 *                     profile with at least its memory and its share of
 *                     compute;
 *   mem_gb [cslices]  the smallest profile with >= mem_gb and >= cslices;
 *   smallest          by memory, then compute slices, then table order.
 */
typedef struct ms_sched_req {
    const char *id;         /* any length; NULL = anonymous (simulator) */
    const char *profile;
    double mem_gb;
    int cslices;
    const ms_geom_t *prof_geom;
    int prof;
    int gang;               /* >= 1 (0 = 1); > 1: whole GPUs on one node */
    int priority;           /* higher first; 0 default */
    bool migratable;
    double estimate_s;      /* duration estimate, 0 = unknown */
    double duration_s;      /* simulator: exact work; else 0 */
    double waited_s;        /* restart: how long it has queued already (>= 0) */
    const char *model;      /* constraint: only this model (NULL = any) */
    const char *node;       /* constraint: only this node (NULL = any) */
    ms_isolation_t isolation;
} ms_sched_req_t;

typedef enum ms_job_state {
    MS_JOB_QUEUED = 0,
    MS_JOB_RESERVED,        /* a held placement that nothing executes yet */
    MS_JOB_STARTING,        /* its START (and CREATE) ops are pending */
    MS_JOB_RUNNING,
    MS_JOB_MIGRATING,       /* a MOVE of it is pending */
    MS_JOB_DONE,
    MS_JOB_CANCELLED,
    MS_JOB_FAILED,
    MS_JOB_NSTATES
} ms_job_state_t;

const char *ms_job_state_name(ms_job_state_t st);   /* "queued", ... */

/* One instance a job runs on. */
typedef struct ms_sched_inst {
    int32_t gpu;            /* global */
    int8_t start;           /* -1: a time-slice slot or a whole GPU */
    int8_t prof;            /* the instance's profile in its group's geometry */
} ms_sched_inst_t;

/* A job's public view. */
typedef struct ms_sched_job_info {
    const char *id;         /* NULL for anonymous jobs */
    ms_job_state_t state;
    int group;              /* the group it runs in, -1 if none */
    int ninst;
    const ms_sched_inst_t *inst;   /* [ninst], valid until the next call */
    double submit_t, start_t, end_t;
    int priority, gang;
    bool migratable;
} ms_sched_job_info_t;

/* --- plans as the executor sees them ----------------------------------- */

typedef enum ms_plan_kind {
    MS_PK_SETUP = 0,        /* the policy prepares empty GPUs (static layouts) */
    MS_PK_PLACE,            /* a job starts */
    MS_PK_ROOM,             /* make_room for the head of the queue */
    MS_PK_FINISH,           /* on_finish: migration, layout restore */
    MS_PK_IDLE,             /* on_idle: node layout changes */
    MS_PK_STOP,             /* a job left: its STOP and job-scoped DESTROYs */
    MS_PK_ROLLBACK,         /* clean-up after a failed op */
    MS_PK_NKINDS
} ms_plan_kind_t;

const char *ms_plan_kind_name(ms_plan_kind_t k);

typedef struct ms_sched_op {
    ms_op_t op;             /* gpu/from_gpu global, job = slot */
    uint64_t id;            /* op id for op_done/op_failed (0 when not tracked) */
    uint8_t fresh;          /* START/MOVE onto a GI created by this same plan */
} ms_sched_op_t;

typedef struct ms_sched_plan {
    ms_plan_kind_t kind;
    double now;
    int n;
    const ms_sched_op_t *ops;
} ms_sched_plan_t;

/* The executor: receives every applied decision. Returning an error makes
 * the calling ms_sched_* function fail with it (the view keeps the plan: a
 * simulator error is fatal, a service treats ops as pending anyway). */
typedef struct ms_sched_exec {
    void *ctx;
    ms_status_t (*plan)(void *ctx, const ms_sched_plan_t *p);
} ms_sched_exec_t;

/* --- the scheduler ----------------------------------------------------- */

/* The queue discipline (docs/sched.md, "Queue disciplines"): which waiting
 * job may start when the head of the queue (the first by priority, then
 * submission; with aging, by effective priority) does not fit.
 *   BACKFILL  any later job that fits may start, until the head has waited
 *             backfill_bound_s; then nothing passes it
 *   FIFO      nothing ever passes the head
 *   EASY      BACKFILL until the head has waited backfill_bound_s (0: from
 *             the start, classic EASY), then reservation-based backfilling:
 *             the head gets a reservation at the earliest time a placement
 *             for it frees up if running jobs end as estimated; a later job
 *             may start only if by its own estimate it ends before that
 *             time or it uses none of the reservation's slices
 * Aging (aging_rate > 0, with any of them): a job's effective priority is
 * priority + aging_rate x hours waited; the head is the job with the highest
 * effective priority, and a job may pass it only while its own effective
 * priority is at least the head's minus 1. So a job is passed only by jobs
 * submitted less than (1 + their priority - its priority) / aging_rate hours
 * after it, which bounds its wait. */
typedef enum ms_queue_mode {
    MS_QUEUE_BACKFILL = 0,
    MS_QUEUE_FIFO = 1,
    MS_QUEUE_EASY = 2
} ms_queue_mode_t;

/* "backfill", "fifo", "easy" ("?" otherwise). */
const char *ms_queue_mode_name(ms_queue_mode_t q);
/* The inverse; MS_EINVAL for another name. */
ms_status_t ms_queue_mode_parse(const char *name, ms_queue_mode_t *out);

typedef struct ms_sched_cfg {
    const ms_policy_ops_t *policy;   /* for MIG nodes; time-sliced and whole
                                      * nodes use the timeslice policy */
    ms_policy_cfg_t pcfg;
    const ms_node_spec_t *nodes;     /* [nnodes], copied */
    int nnodes;
    ms_index_mode_t index_mode;
    ms_queue_mode_t queue;           /* default EASY (docs/zoo.md chose it) */
    double backfill_bound_s;         /* BACKFILL, EASY; default 3600, may be INFINITY */
    double aging_rate;               /* priority points per hour waited; 0 = off */
    double default_estimate_s;       /* EASY: a job's run time when its request
                                      * has no estimate_s (default 3600) */
    bool track_ops;                  /* ops stay pending until confirmed */
    bool no_room;                    /* place only: no make_room, no on_idle */
    /* Optional allocator for everything the scheduler allocates itself
     * (not its policies' and clusters'): like realloc, and fn(ctx, p, 0)
     * frees p. NULL = libc. Tests fail the n-th allocation with it. */
    void *(*alloc)(void *ctx, void *p, size_t n);
    void *alloc_ctx;
    ms_sched_exec_t exec;
} ms_sched_cfg_t;

void ms_sched_cfg_defaults(ms_sched_cfg_t *cfg);
/* Set one option by name: the queue's ("queue", "backfill-bound",
 * "aging-rate", "default-estimate"; "inf" is accepted for backfill-bound)
 * or any of ms_policy_cfg_set's for cfg->pcfg. A value out of range is
 * MS_ERANGE, an unknown name MS_ENOENT; diag names the option and range. */
ms_status_t ms_sched_cfg_set(ms_sched_cfg_t *cfg, const char *name, const char *value,
                             ms_diag_t *diag);
/* The i-th queue option name (and its help), NULL past the last (the
 * policy's are ms_policy_cfg_option's). */
const char *ms_sched_cfg_option(int i, const char **help);

typedef struct ms_sched ms_sched_t;

/* Create and run the policies' setup (its plans go to the executor). */
ms_status_t ms_sched_create(const ms_sched_cfg_t *cfg, double now, ms_sched_t **out,
                            ms_diag_t *diag);
void ms_sched_destroy(ms_sched_t *s);   /* NULL-safe */
/* Replace the executor (e.g. after creating without one). */
void ms_sched_set_exec(ms_sched_t *s, const ms_sched_exec_t *exec);

/* A job arrives. OUT slot. MS_ENOFIT: no GPU of this cluster can ever host
 * it (nothing is kept; diag says why); MS_EEXIST: the id is taken;
 * MS_EINVAL: the request is malformed (diag names the field). */
ms_status_t ms_sched_submit(ms_sched_t *s, const ms_sched_req_t *req, double now,
                            int32_t *slot, ms_diag_t *diag);
/* A running job ended (its instances are released), or a queued job is
 * withdrawn. */
ms_status_t ms_sched_finished(ms_sched_t *s, int32_t slot, double now);
/* Cancel: a queued job leaves the queue; a reserved one releases its hold;
 * a running one is stopped and its instance destroyed. */
ms_status_t ms_sched_cancel(ms_sched_t *s, int32_t slot, double now);
/* Time passed: expire reservations, then a scheduling pass with on_idle. */
ms_status_t ms_sched_tick(ms_sched_t *s, double now);
/* Forget a finished job (done, cancelled or failed): its slot and id may be
 * reused. */
ms_status_t ms_sched_forget(ms_sched_t *s, int32_t slot);

/* The slot of a job id, or -1. */
int32_t ms_sched_find(const ms_sched_t *s, const char *id);
ms_status_t ms_sched_job(const ms_sched_t *s, int32_t slot, ms_sched_job_info_t *out);
/* Slots in use (jobs not forgotten) are < this. */
int32_t ms_sched_slots(const ms_sched_t *s);

/* --- asynchronous execution (cfg.track_ops) ---------------------------- */

ms_status_t ms_sched_op_done(ms_sched_t *s, uint64_t op_id, double now);
/* The op failed: it and every later pending op of its plan are rolled back
 * in reverse order (the executor stops a plan at its first failure); a job
 * whose START failed is requeued at its old place in the queue, a failed
 * MOVE leaves the job on its source instance, and GIs the rolled-back plan
 * created and that are still there get DESTROYs (an MS_PK_ROLLBACK plan).
 * Then a scheduling pass. */
ms_status_t ms_sched_op_failed(ms_sched_t *s, uint64_t op_id, double now);
/* Pending ops, oldest first. */
size_t ms_sched_pending(const ms_sched_t *s);

/* --- reservations, restricted placement, scores (the extender) --------- */

/* Hold the best placement for req on one of the given nodes until now +
 * ttl_s: with nodes NULL, the policy's own choice (its cost); with a list,
 * the restricted-placement rule over those nodes (O(their GPUs)). OUT slot
 * (state MS_JOB_RESERVED); nothing is sent to the executor. MS_ENOFIT if
 * none of the nodes can host it now. */
ms_status_t ms_sched_reserve(ms_sched_t *s, const ms_sched_req_t *req,
                             const char *const *nodes, int nnodes, double ttl_s, double now,
                             int32_t *slot, ms_diag_t *diag);
/* Turn a reservation into a starting job: its ops go to the executor. */
ms_status_t ms_sched_bind(ms_sched_t *s, int32_t slot, double now);
/* Best placement for req on each node: score 0..10 (10 best; -1 where the
 * node cannot host it now). scores[i] for nodes[i]. */
ms_status_t ms_sched_node_scores(ms_sched_t *s, const ms_sched_req_t *req,
                                 const char *const *nodes, int nnodes, int *scores,
                                 ms_diag_t *diag);

/* --- restart ----------------------------------------------------------- */

/* Adopt an instance that exists on the hardware (before any submit): an
 * idle GI (job_id NULL) or one running the given job. A job with gang > 1
 * is adopted by calling this once per GPU with the same id. */
ms_status_t ms_sched_adopt(ms_sched_t *s, int32_t gpu, int prof, int start,
                           const ms_sched_req_t *job, double now, ms_diag_t *diag);

/* --- the view ---------------------------------------------------------- */

typedef struct ms_sched_stats {
    long waiting;                /* queued jobs */
    long running;                /* starting, running or migrating */
    long reserved;
    long changes;                /* placements and policy plans applied */
    long reconfigurations;       /* CREATE and DESTROY outside setup */
    long migrations, migrations_bbm;
    long layout_switches;        /* node layouts changed by on_idle */
    long ops_done, ops_failed;
} ms_sched_stats_t;

void ms_sched_stats(const ms_sched_t *s, ms_sched_stats_t *out);

int ms_sched_ngpus(const ms_sched_t *s);
int ms_sched_nnodes(const ms_sched_t *s);
int ms_sched_ngroups(const ms_sched_t *s);
const ms_node_spec_t *ms_sched_node(const ms_sched_t *s, int node);
int ms_sched_node_find(const ms_sched_t *s, const char *name);
/* First global GPU of a node. */
int ms_sched_node_first_gpu(const ms_sched_t *s, int node);
/* Where a global GPU is: its node, group, and index within its group. */
void ms_sched_gpu_where(const ms_sched_t *s, int gpu, int *node, int *group, int *local);
/* A group's cluster (read-only), policy and mode. */
const ms_cluster_t *ms_sched_group_cluster(const ms_sched_t *s, int group);
ms_node_mode_t ms_sched_group_mode(const ms_sched_t *s, int group);
/* The GPU itself and its geometry. */
const ms_gpu_t *ms_sched_gpu(const ms_sched_t *s, int gpu, const ms_geom_t **geom);
/* The head's reservation under MS_QUEUE_EASY, as the last scheduling pass
 * computed it (when the head did not fit and another job wanted to pass
 * it): the head's slot and the time its placement frees up by the running
 * jobs' estimates. MS_ENOENT when the last pass made none. */
ms_status_t ms_sched_head_reservation(const ms_sched_t *s, int32_t *slot, double *t);
/* Check every invariant of every group and the job table (tests). */
ms_status_t ms_sched_check(const ms_sched_t *s);

#endif
