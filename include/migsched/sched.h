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
#include "migsched/nodes.h"
#include "migsched/plan.h"
#include "migsched/policy.h"

/* --- nodes: ms_node_spec_t and the cluster description are nodes.h's --- */

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
    const char *tenant;     /* a declared tenant (ms_sched_tenant_set); NULL or
                             * "" = the default tenant */
    bool nonpreemptible;    /* never a preemption's victim (cfg.preempt); by
                             * default every job may be one */
    double checkpoint_s;    /* the job saves its progress every checkpoint_s
                             * of its run (0 = never): a preemption loses only
                             * the run since its last checkpoint, and its next
                             * run is estimated that much shorter */
    double kept_s;          /* restart: the run its checkpoints kept over its
                             * past preemptions (ms_sched_job_info_t.kept_s,
                             * >= 0), so its next run is estimated, and its
                             * tenant charged, as before the restart */
} ms_sched_req_t;

/* What a request resolves to on this cluster (ms_sched_resolve_req): per
 * GPU model and sharing mode that can host it, the profile it gets there,
 * and whether that is more than it asked for (a size rounded up, or
 * another model's product name resolved by memory and compute share). */
typedef struct ms_sched_resolution {
    int n;
    struct {
        const char *model;          /* the model's canonical name */
        ms_node_mode_t mode;
        const char *profile;        /* the product name it gets */
        bool rounded;
    } on[64];
} ms_sched_resolution_t;

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
    int tenant;             /* its tenant's index (ms_sched_tenant_info) */
    int preemptions;        /* times it was stopped and queued again (cfg.preempt) */
    double kept_s;          /* run its checkpoints kept over those stops
                             * (req.checkpoint_s): its next run is that much
                             * shorter */
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
    /* Preemption (docs/tenants.md, "Preemption"): when the head of the queue
     * (a MIG job) fits nowhere, stop the cheapest set of running jobs on
     * one GPU whose removal gives it a legal placement (ms_victims_gpu),
     * or, for a gang of q, that empties q GPUs of one node, and start it
     * there; the victims go back to the queue at their old place and run
     * again from their last checkpoint (req.checkpoint_s; from the start
     * without one). Victims are the fewest jobs, then the least work lost
     * (each one's run since its last checkpoint). A victim has a strictly lower priority
     * (or, for a tenant below its guarantee, a priority not above the
     * head's and a tenant over its guarantee), is preemptible (a gang is a
     * victim as one job), and has run for preempt_grace_s at least; no
     * victim's tenant is taken below its guarantee. Off by default. */
    bool preempt;
    /* Only ms_sched_victims_for picks victims (its caller acts on them);
     * a queued head never preempts. migschedd --kube: a pod is evicted,
     * never stopped under it, and a /v1/jobs job must not stop a pod's
     * instance. Default false. */
    bool preempt_requests_only;
    /* A victim that is migratable (and free: not moved or placed at this
     * instant) is moved to another GPU of its group, make-before-break,
     * when its profile has a free legal start there (not the preemptor's
     * GPU; the lowest GPU, then start), instead of stopped: it keeps its
     * run and its tenant's charge (preempt_move.c). Default false. */
    bool preempt_move;
    double preempt_grace_s;          /* default 60 */
    double preempt_after_s;          /* a head preempts once it has waited this
                                      * long (seen at the next pass); default 0 */
    int preempt_rate;                /* at most N preemptions in any 60 s; 0 = no limit
                                      * (default 10) */
    double preempt_max_lost_s;       /* a job that has run longer than this since
                                      * its last checkpoint is no victim: the work
                                      * one preemption loses is bounded; 0
                                      * (default): no bound */
    /* Tenants' virtual times decay with this half-life (Slurm's decayed
     * usage; docs/tenants.md): past service counts less as it ages, and
     * counts even across a time without demand. 0 (default): no decay,
     * and a tenant that waits again after none starts at the least
     * virtual time of the active tenants. */
    double tenant_half_life_s;
    /* Optional allocator for everything the scheduler allocates itself
     * (not its policies' and clusters'): like realloc, and fn(ctx, p, 0)
     * frees p. NULL = libc. Tests fail the n-th allocation with it. */
    void *(*alloc)(void *ctx, void *p, size_t n);
    void *alloc_ctx;
    ms_sched_exec_t exec;
} ms_sched_cfg_t;

void ms_sched_cfg_defaults(ms_sched_cfg_t *cfg);
/* The queue's options ("queue", "backfill-bound", "aging-rate",
 * "default-estimate") are set by name through the one option table
 * (options.h, ms_opt_set), with the policies'. */

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
/* Check a request and say what it resolves to, without submitting it (the
 * call a service makes to answer a bad request with a 4xx, or to tell a
 * user what a size became). MS_OK with *out filled; MS_EINVAL: malformed
 * (diag names the field: an unknown model or node, a profile that is neither
 * a size "3g" nor a product name "3g.20gb", ...); MS_ENOENT: a product name
 * that no GPU model of this cluster has (diag's message names the nearest
 * profiles, e.g. "5g.25gb"); MS_ENOFIT: no node could ever host it. Submit,
 * reserve and node scores answer the same statuses for the same requests. */
ms_status_t ms_sched_resolve_req(const ms_sched_t *s, const ms_sched_req_t *req,
                                 ms_sched_resolution_t *out, ms_diag_t *diag);
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
/* The slot the next new job (submit, reserve, adopt) will take: a driver
 * that keys its own records by slot maps it before the call, whose plans
 * already name it. A forgotten slot is taken again (the last forgotten
 * first). */
int32_t ms_sched_next_slot(const ms_sched_t *s);

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
/* The same scores, each node's kept per request class while none of its
 * GPUs has changed (any op: place, release, hold, move, layout, fence), so
 * a call costs the GPUs of the nodes that changed since, not of every
 * listed node (the extender: issue 25). Equal to ms_sched_node_scores. */
ms_status_t ms_sched_node_scores_kept(ms_sched_t *s, const ms_sched_req_t *req,
                                      const char *const *nodes, int nnodes, int *scores,
                                      ms_diag_t *diag);

/* --- restart ----------------------------------------------------------- */

/* Adopt an instance that exists on the hardware (before any submit): an
 * idle GI (job_id NULL) or one running the given job. A job with gang > 1
 * is adopted by calling this once per GPU with the same id. */
ms_status_t ms_sched_adopt(ms_sched_t *s, int32_t gpu, int prof, int start,
                           const ms_sched_req_t *job, double now, ms_diag_t *diag);

/* --- tenants (docs/tenants.md) ------------------------------------------ */

/* A tenant: a team whose jobs share the cluster under a quota, cluster-wide,
 * in compute slices (a 3g instance holds 3; a whole GPU of a whole-GPU or
 * time-sliced node holds its model's compute slices; a gang holds its size
 * times that). Tenant 0 is "default" (weight 1, guarantee 0, no limit): the
 * tenant of every job that names none.
 *   guarantee  a job whose tenant holds at most guarantee - its size is
 *              offered before any job that would borrow (Kueue's nominal
 *              quota, KAI's deserved quota); with mem_guarantee_gb, in
 *              memory too (each declared dimension, below);
 *   limit      a job is never started if its tenant would then hold more
 *              (Kueue's borrowing limit, as an absolute cap; < 0: none);
 *   weight     between jobs that borrow, the tenant with the least
 *              virtual time goes first: the compute slice-seconds its jobs
 *              were charged over its weight, each job's estimate charged
 *              at its start and corrected to its run at its end (start-time
 *              fair queueing); a tenant that waits again after none starts
 *              no earlier than the least of the active tenants'. At equal
 *              virtual times, the smaller dominant share (the larger of its
 *              slice and memory shares) over its weight, then the smaller
 *              with its head started.
 * Within a tenant, and between tenants of the same tier and share, the
 * order is the one without tenants: priority (with aging), then
 * submission. So with no tenant declared, or one tenant without a limit,
 * the scheduler decides exactly as without tenants. */
#define MS_TENANT_MAX_MODEL_LIMITS 8

typedef struct ms_sched_tenant_model_limit {
    const char *model;       /* ms_sched_tenant_info: the canonical name (static) */
    long limit;              /* compute slices; < 0: none on this model (only
                              * with a guarantee: an entry declares one or both) */
    long usage;              /* ms_sched_tenant_info: compute slices its live
                              * jobs hold on GPUs of the model (ignored by set) */
    long guarantee;          /* guarantee@MODEL: compute slices guaranteed on
                              * GPUs of the model, 1..1e9 and at most limit when
                              * that is set; 0: none (docs/tenants.md, "Per
                              * model guarantees"). Last: positional initializers */
} ms_sched_tenant_model_limit_t;

typedef struct ms_sched_tenant {
    const char *name;        /* 1..63 bytes of [A-Za-z0-9._-] */
    double weight;           /* > 0, <= 1e6 */
    long guarantee;          /* compute slices, >= 0 */
    long limit;              /* compute slices, >= guarantee; < 0: none */
    /* memory GB its live jobs may hold at most (a 3g.20gb holds 20, a
     * whole GPU its model's memory); 0: no limit. */
    double mem_limit_gb;
    /* memory GB guaranteed, 0..1e9 and <= mem_limit_gb when that is set;
     * 0: none. Kueue's nominal quota per resource: a head is within its
     * tenant's guarantee only when it is in every declared dimension
     * (memory when this is > 0; slices when guarantee > 0 or this is 0),
     * so with 0 everything is as before (docs/tenants.md). */
    double mem_guarantee_gb;
    /* Per GPU model limits in compute slices (Kueue's quota per
     * ResourceFlavor, as a cap): a job is never started on a GPU of model
     * `model` (a name or alias of ms_model_find) if its tenant's jobs on
     * GPUs of that model would then hold more than `limit` (0..1e9). At
     * most MS_TENANT_MAX_MODEL_LIMITS, each model once; both these and
     * `limit` apply. A model the cluster lacks is accepted (a limit on
     * nothing). An entry may carry a per model guarantee instead or too
     * (its `guarantee`, Kueue's nominal quota per ResourceFlavor): a head
     * is within its tenant's guarantee when the cluster-wide test holds or
     * its slices on a GPU model it can run on fit in that model's
     * guarantee; the tenant's classes try those models' groups first, and
     * preemption never takes it below one. Last: there are positional
     * initializers. */
    int nmodel_limits;
    ms_sched_tenant_model_limit_t model_limits[MS_TENANT_MAX_MODEL_LIMITS];
} ms_sched_tenant_t;

typedef struct ms_sched_tenant_info {
    const char *name;
    double weight;
    long guarantee, limit;
    double mem_limit_gb;     /* 0: none */
    long usage;              /* compute slices its live jobs hold now */
    double mem_gb;           /* memory they hold */
    double share;            /* dominant share of the cluster (0..1) */
    long running, waiting;   /* live jobs (starting, running, reserved); queued */
    double mem_guarantee_gb; /* 0: none */
    int nmodel_limits;       /* per model limits, as declared, with usage */
    ms_sched_tenant_model_limit_t model_limits[MS_TENANT_MAX_MODEL_LIMITS];
} ms_sched_tenant_info_t;

/* Declare a tenant or change one (the name finds it; "default" is tenant
 * 0). Lowering a limit below the usage stops nothing: it holds new starts
 * back. OUT idx (may be NULL). MS_EINVAL with diag naming the field. */
ms_status_t ms_sched_tenant_set(ms_sched_t *s, const ms_sched_tenant_t *t, int *idx,
                                ms_diag_t *diag);
/* The index of a tenant by name, or -1. */
int ms_sched_tenant_find(const ms_sched_t *s, const char *name);
/* True when req's tenant's limits (compute slices or memory) keep it off
 * every group it could run on now: it waits for its tenant, not for room
 * (the extender's reason). False for a bad request. */
bool ms_sched_tenant_holds(ms_sched_t *s, const ms_sched_req_t *req);
/* Whether a job fits its tenant's limits (compute slices, memory GB) on
 * some group it could run on with the tenant holding nothing: MS_OK (also
 * without tenants, or with no group for it: another check's), else
 * MS_ENOFIT with diag (field "tenant") naming the tenant, its limit and
 * the job's least need: it could never start. By request (resolved as
 * submit would: MS_EINVAL/MS_ENOENT for a bad one) or by a submitted
 * job's slot (reads only). */
ms_status_t ms_sched_tenant_check(ms_sched_t *s, const ms_sched_req_t *req, ms_diag_t *diag);
ms_status_t ms_sched_tenant_check_slot(const ms_sched_t *s, int32_t slot, ms_diag_t *diag);
/* Tenants are 0 .. ms_sched_ntenants() - 1 (at least the default). */
int ms_sched_ntenants(const ms_sched_t *s);
ms_status_t ms_sched_tenant_info(const ms_sched_t *s, int idx, ms_sched_tenant_info_t *out);
/* The half-life of the tenants' decayed usage (cfg.tenant_half_life_s),
 * and a new one from now on (migschedd's SIGHUP): the service received so
 * far keeps what it weighs at now and decays with the new half-life from
 * then (0: no more decay). MS_EINVAL (field tenant-half-life) outside
 * [0, 1e12]. */
double ms_sched_tenant_half_life(const ms_sched_t *s);
ms_status_t ms_sched_set_tenant_half_life(ms_sched_t *s, double half_life_s, double now,
                                          ms_diag_t *diag);

/* --- preemption by geometry (src/sched/victims.c) ----------------------- */

/* What the caller knows of instance i of a GPU: whether its job may be
 * stopped for the preemptor (lower priority, preemptible: the caller's
 * rule) and the work stopping it loses (>= 0). Ignored for idle GIs. */
typedef struct ms_victim_cand {
    bool eligible;
    double lost_s;
} ms_victim_cand_t;

typedef struct ms_victims {
    uint32_t victims;        /* bit i: instance i runs a job that is stopped */
    uint32_t remove;         /* bit i: instance i goes (victims and idle GIs in the way) */
    int start;               /* where the preemptor's profile is then created */
    int nvictims;
    double lost_s;           /* the victims' lost work */
} ms_victims_t;

/* On one MIG GPU of geometry g (gpu as ms_cluster_t keeps it: inst[i].job
 * < 0 is an idle GI), the cheapest set of running instances, all eligible
 * (cand[0..ninst)), whose stopping, with any idle GIs removed, lets profile
 * k be created at a legal start: fewest victims, then least lost work,
 * then the lowest start. Freed slices are not enough: the start's memory
 * slices must all be free and the state after it legal (compute, counts).
 * MS_ENOFIT if no such set exists (e.g. a job that may not be stopped is in
 * every start's way); MS_EINVAL for a bad argument or a time-sliced GPU.
 * Pure: it reads the GPU and changes nothing. O(legal starts) state
 * look-ups, plus a subset search where compute or counts bind. */
ms_status_t ms_victims_gpu(const ms_geom_t *g, const ms_gpu_t *gpu, int k,
                           const ms_victim_cand_t *cand, ms_victims_t *out);

/* Preemption for a request the scheduler does not queue (the extender's
 * pods: kube-scheduler holds the queue). ok(ctx, slot): may that running
 * job be a victim at all (NULL: every one may; migschedd says no to a pod
 * whose eviction a PodDisruptionBudget refused). */
typedef bool (*ms_sched_victim_ok_fn)(void *ctx, int32_t slot);

typedef struct ms_sched_preemption {
    int node;                      /* index (ms_sched_node) */
    int32_t gpu;                   /* global */
    int start;                     /* where req's profile goes once they are gone */
    int nvictims;
    int32_t victims[MS_MAX_INST];  /* the running jobs' slots */
    double lost_s;                 /* their run time so far, summed */
} ms_sched_preemption_t;

/* The cheapest victims on one GPU of the given nodes whose stopping gives
 * req a legal placement, by cfg.preempt's rules for a queued head (lower
 * priority, or a tenant reclaiming its guarantee; preemptible, one
 * instance, run for preempt_grace_s; no other tenant taken below its
 * guarantee; no cordoned GPU; fewest victims, then least lost work, then
 * the lowest GPU), and under its rate limit, which counts the choice: the
 * caller acts on it (stops or evicts them). Changes nothing else.
 * MS_OK (out filled), MS_ENOFIT when there is none (a gang, preemption
 * off, the rate spent included), or the request's error (MS_ENOENT,
 * MS_EINVAL) with diag. O(GPUs of the nodes x instances). */
ms_status_t ms_sched_victims_for(ms_sched_t *s, const ms_sched_req_t *req,
                                 const char *const *nodes, int nnodes, double now,
                                 ms_sched_victim_ok_fn ok, void *ctx,
                                 ms_sched_preemption_t *out, ms_diag_t *diag);
/* --- GPUs the scheduler must not place on ------------------------------ */

/* Cordon (on) or uncordon (off) a global GPU: while cordoned nothing new
 * is placed on it, by any policy, reservation or score. The view takes its
 * free slices, idle GIs and free time slots with a fence (an internal job
 * of the scheduler, with no id, that never moves or ends and that no plan
 * names), so to every policy the GPU is full; the jobs running there go on
 * and leave as usual, and the fence takes what they free. Idempotent. A
 * service cordons a GPU that keeps failing and lifts it once the GPU
 * answers again. */
ms_status_t ms_sched_gpu_cordon(ms_sched_t *s, int32_t gpu, bool on, double now);
/* Hold GIs that the hardware has and this scheduler does not own (another
 * scheduler's instances, found when a create was refused): the view keeps
 * their slices taken (with the same fence) until a later call lists them
 * no more. gis (n <= MS_MAX_INST, profiles of the GPU's geometry at legal
 * starts) replace the GPU's previous list; one that overlaps an instance
 * of the view's own is not held. MIG GPUs only (others ignore the list). */
ms_status_t ms_sched_gpu_hold(ms_sched_t *s, int32_t gpu, const ms_gi_t *gis, int n, double now);
/* What the fence holds on a GPU: an instance whose job is slot is the
 * fence's; of those, the GIs at the starts in view_only exist in the view
 * alone (no hardware has them; on a time-sliced GPU every slot of the
 * fence is the view's alone), those in foreign are the held GIs of
 * ms_sched_gpu_hold, and the others are idle GIs of the view's own that a
 * cordon holds. */
typedef struct ms_sched_fence {
    bool cordoned;
    int32_t slot;           /* -1: no fence */
    uint16_t view_only, foreign;
} ms_sched_fence_t;

/* Is the GPU fenced (cordoned, or holding GIs)? out (may be NULL) says how. */
bool ms_sched_gpu_fenced(const ms_sched_t *s, int32_t gpu, ms_sched_fence_t *out);

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
    /* the work of scheduling passes, counted (tests assert on these, not on
     * time): a pass offers each waiting class's head to the policy only
     * when something happened that could let it start (docs/sched.md) */
    long passes;                 /* scheduling passes */
    long place_calls;            /* placement attempts of queued jobs: policy
                                  * place() and restricted placement calls */
    long skipped;                /* blocked heads not offered again: nothing
                                  * that could unblock them happened */
    long resv_evals;             /* GPUs (or nodes, for gangs) whose free-up
                                  * time an EASY reservation computed */
    long calm_passes;            /* passes answered without walking the
                                  * classes: nothing changed since the last,
                                  * which left every class blocked (an
                                  * arrival behind a waiting head) */
    long preemptions;            /* jobs stopped and queued again (cfg.preempt) */
    double preempt_lost_s;       /* their run time lost (now - start), summed */
    long preempt_searches;       /* victim searches (a blocked head, someone eligible) */
    long preempt_moves;          /* victims moved instead (cfg.preempt_move;
                                  * also counted in migrations) */
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
/* The head's reservation under MS_QUEUE_EASY, as of the last scheduling
 * pass (when the head did not fit and another job wanted to pass it): the
 * head's slot and the time its placement frees up by the running jobs'
 * estimates. MS_ENOENT when the last pass needed none. (Not const: a pass
 * that skipped every job behind the head leaves it to be made here.) */
ms_status_t ms_sched_head_reservation(ms_sched_t *s, int32_t *slot, double *t);
/* Check every invariant of every group and the job table (tests). */
ms_status_t ms_sched_check(const ms_sched_t *s);

#endif
