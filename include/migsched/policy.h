/* policy.h - one interface for every placement policy.
 *
 * A policy is a const ms_policy_ops_t (a table of functions) listed in the
 * registry (src/policy/registry.c). It reads the cluster through a const
 * pointer and answers with a plan (plan.h); it never mutates the cluster.
 * Hooks other than create/destroy/place may be NULL, and the scheduler then
 * uses the core default (no setup, anything the geometry has can be hosted,
 * no migration).
 *
 * Queue order (FCFS with backfilling, strict FIFO) lives in the simulator,
 * not here: "which job next" and "where it goes" vary independently.
 */
#ifndef MIGSCHED_POLICY_H
#define MIGSCHED_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/cluster.h"
#include "migsched/frag.h"
#include "migsched/job.h"
#include "migsched/plan.h"

#define MS_POLICY_ABI 2   /* 2: flags and version() */

/* ms_policy_ops_t.flags */
#define MS_POLICY_PURE_PLACE 0x1u   /* see `flags` below */
#define MS_POLICY_FIT_PLACE  0x2u   /* see `flags` below */
#define MS_POLICY_FIT_ANY    0x4u   /* see `flags` below */


/* Every option of every policy; each policy reads the ones it knows. */
typedef struct ms_policy_cfg {
    /* fa: the seeds' framework */
    double lb_threshold;     /* Lazy if busy/compute < t; default 0.4 */
    bool balance;            /* conditional load balancing (default on) */
    bool dynamic;            /* dynamic partitioning (default on); off = static layout */
    bool migration;          /* intra/inter-GPU migration (default on) */
    int max_moves;           /* migrations per trigger at most (default 4) */
    ms_frag_opts_t frag;     /* FragCost options */
    /* static */
    const char *static_layout; /* "4g+2g+1g" per GPU, or "A;B;C" per GPU cycled; NULL = default */
    /* fgd */
    int demand_window;       /* arrivals in the demand estimate (default 256) */
    /* node-profile */
    double hysteresis_s;     /* a node keeps a layout at least this long (default 300) */
    /* timeslice */
    int replicas;            /* jobs per GPU (default 4) */
    uint64_t seed;
    /* fa+: what a migration costs, for its rule "move only when it pays":
     * the pause of the moved job (s; pass the simulator's migrate_s,
     * default 10) and the interference per neighbour it adds (pass the
     * simulator's beta, default 0.05) */
    double migrate_cost_s;
    double interference_beta;
    /* fa+: make_room only while at most this many jobs wait (default 32):
     * with a deeper queue the capacity a move hands the head would be
     * taken by the queue anyway, so moving only reorders (docs/zoo.md) */
    int room_queue_max;
    /* set by ms_sched from its queue discipline, not an option: jobs
     * behind the head may pass it (and so fill holes) only until it has
     * waited this long (s; 0 under FIFO, the backfill bound otherwise, may
     * be INFINITY). fa+'s queue-depth gate applies only before then: past
     * it the holes would stay empty, or only what keeps the head's
     * reservation would use them, and the head has waited long */
    double pass_bound_s;
} ms_policy_cfg_t;

void ms_policy_cfg_defaults(ms_policy_cfg_t *cfg);
/* The options are set by name through the one option table (options.h,
 * ms_opt_set), which every face uses. */

typedef struct ms_policy_ops {
    int abi;                 /* MS_POLICY_ABI */
    const char *name;        /* "fa", "best-fit", ... */
    const char *help;        /* one line */
    ms_share_mode_t share;   /* MIG, or time-slicing */

    /* OUT self: policy state, freed by destroy. The cluster is empty. */
    ms_status_t (*create)(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self);
    void (*destroy)(void *self);

    /* Optional: ops that prepare an empty cluster (static layouts). */
    ms_status_t (*setup)(void *self, const ms_cluster_t *c, ms_plan_t *out);
    /* Optional: can any GPU of this cluster ever host j under this policy?
     * A job for which this is false is rejected at arrival. */
    bool (*can_host)(void *self, const ms_cluster_t *c, const ms_job_t *j);
    /* Optional: every arrival is announced (demand estimates). */
    void (*on_arrival)(void *self, const ms_job_t *j);

    /* Place j now: append ops to out and return MS_OK, or MS_ENOFIT. */
    ms_status_t (*place)(void *self, const ms_cluster_t *c, const ms_job_t *j,
                         ms_plan_t *out);
    /* Optional: a job left GPU g (its GI is already gone or idle); may append
     * migrations or layout changes. */
    ms_status_t (*on_finish)(void *self, const ms_cluster_t *c, int g, double now,
                             ms_plan_t *out);
    /* Optional: j fits nowhere; may append moves that make room (then place
     * is called again). Return MS_ENOFIT if it cannot help. */
    ms_status_t (*make_room)(void *self, const ms_cluster_t *c, const ms_job_t *j,
                             double now, ms_plan_t *out);
    /* Optional: the queue's waiting jobs, for policies that plan layouts from
     * demand (node-profile). n_by_prof[k] = waiting jobs of profile k. */
    ms_status_t (*on_idle)(void *self, const ms_cluster_t *c, const int *n_by_prof,
                           double now, ms_plan_t *out);

    /* What the scheduler may assume about place(), so that a queue pass
     * costs O(what changed) (docs/sched.md, "Queue passes"). With
     * MS_POLICY_PURE_PLACE, place() has no side effect, its answer depends
     * only on the cluster, the job and version(), and an MS_ENOFIT stays one
     * while the cluster only loses capacity (placements) and version() is
     * unchanged: a job that did not fit is offered again only after an op
     * that frees or creates capacity, or a new version(). Without the flag,
     * every waiting class is offered to place() in every pass.
     * MS_POLICY_FIT_PLACE (with PURE_PLACE, on a MIG cluster) promises more
     * for a job of one instance of profile p: place() chooses among GPUs
     * each admissible by its own state (and version()) alone, and only
     * where p has a free legal start once the GPU's idle GIs are gone (the
     * ranked policies: ms_rank_find over the states). A job that did not
     * fit is then offered again only after an op other than a placement
     * leaves some GPU where p would fit so, or a new version(): an end
     * that frees a 3g re-offers the 1g, 2g and 3g waiting, not the 7g.
     * MS_POLICY_FIT_ANY (with FIT_PLACE) promises more still, whatever
     * version(): place() answers MS_ENOFIT for a job of one instance
     * exactly when no GPU has a free legal start for its profile (its GIs
     * as they are, idle ones included). A new version() then changes which
     * GPU, never whether: a job that fitted nowhere is not offered again
     * for a new version() alone (fa+: new demand weights). */
    uint32_t flags;
    /* Optional (NULL: place() depends on the cluster and the job alone): a
     * value that differs whenever place() may answer differently for the
     * same cluster and job (new demand weights, ...). Called after every
     * hook, so it must be O(1). */
    uint64_t (*version)(void *self);
} ms_policy_ops_t;

/* The registry: every policy, in a fixed order. */
const ms_policy_ops_t *const *ms_policies(int *n);
const ms_policy_ops_t *ms_policy_find(const char *name);

/* Check a static layout spec ("4g+2g+1g" or "7g;4g+3g", NULL = the default)
 * against a geometry; on error diag names the layout that does not fit. */
ms_status_t ms_policy_layout_check(const ms_geom_t *g, const char *spec, ms_diag_t *diag);

/* node-profile's whole-node layout kinds (seed 002; docs/policies.md):
 * "inference-peak", "balanced" and "training" on geometry g, as the
 * instances one GPU of such a node holds (sorted by start; *n of them, at
 * most MS_MAX_INST). The same layouts the policy switches nodes to, so a
 * GPU Operator config (migsched k8s-config) names what the simulator
 * models. MS_ENOENT for another kind, MS_ENOTSUP if g cannot form it. */
ms_status_t ms_policy_node_layout(const ms_geom_t *g, const char *kind, ms_gi_t *gis, int *n);

/* Shared helper for gangs (j->gang > 1): the lowest node with gang empty
 * GPUs gets a full-size instance on each. Used by every MIG policy. */
ms_status_t ms_policy_place_gang(const ms_cluster_t *c, const ms_job_t *j, ms_plan_t *out);

#endif
