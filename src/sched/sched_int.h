/* sched_int.h - private: the scheduler's state and the functions its files
 * share. Never installed.
 *
 * Files:
 *   sched.c     create/destroy, node groups, the view accessors
 *   spec.c      cluster specs: "NAME=COUNTxMODEL[:mode]" and cluster files
 *   jobs.c      the job table, the id map, request resolution, classes
 *   queue.c     per-class queues, the scheduling pass, submit/finish/cancel/tick
 *   apply.c     plan legality, applying ops to a group's cluster, job-scoped
 *               GIs, counters, handing plans to the executor
 *   ops.c       pending ops: done, failed, rollback
 *   reserve.c   reservations, restricted placement, node scores, adopt
 *
 * Invariants (ms_sched_check tests them):
 *   - a job is in exactly one class queue iff its state is QUEUED;
 *   - a job in STARTING/RUNNING/MIGRATING/RESERVED holds ninst == gang
 *     instances (a gang is started whole within one plan), each of which is
 *     an instance of its group's cluster whose job field is the slot;
 *   - every cluster instance with job >= 0 belongs to a live job;
 *   - persist bits are a subset of the GPU's existing GIs.
 */
#ifndef MIGSCHED_SCHED_INT_H
#define MIGSCHED_SCHED_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/idmap.h"
#include "migsched/sched.h"

#define MS__MAX_GROUPS 64          /* distinct node kinds */
#define MS__MAX_CREATED 64         /* GIs remembered per plan (fresh flags) */

/* One node group: nodes of one model, mode and GPU count. */
typedef struct ms__grp {
    ms_node_mode_t mode;
    const ms_geom_t *geom;
    int gpn;                       /* GPUs per node */
    bool short_tail;               /* its last node has fewer (then it is closed) */
    int nnodes, ngpus;
    ms_cluster_t *c;               /* local GPU numbers */
    const ms_policy_ops_t *pol;
    void *self;
    ms_policy_cfg_t pcfg;
    uint16_t *persist;             /* [ngpus] GIs kept after their job ends */
    int32_t *l2g;                  /* [ngpus] local -> global GPU */
    int32_t *lnode;                /* [nnodes] local node -> global node */
    int nwait[MS_MAX_PROFILES];    /* queued jobs by their profile here */
    ms_frag_table_t *ft;           /* FragCost per state (restricted placement, scores) */
} ms__grp_t;

/* A request class: requests that resolve identically (so a class whose head
 * does not fit is blocked for the rest of a pass). Gangs of any size share
 * one class per resolution, as before the scheduler existed. */
typedef struct ms__cls {
    int8_t prof[MS__MAX_GROUPS];   /* per group: profile, -1 = cannot run there */
    int8_t order[MS__MAX_GROUPS];  /* candidate groups, best first */
    int norder;
    bool gang;
    int32_t node;                  /* node constraint, -1 = none */
    int32_t qhead, qtail;
    /* the head's queue key, cached: a pass compares classes without
     * touching the (large, randomly placed) job records */
    int32_t hprio;
    uint64_t hseq;
    double hsubmit;                /* aging: the head's submission time */
} ms__cls_t;

typedef struct ms__job {
    char *id;                      /* owned; NULL = anonymous */
    double submit_t, start_t, end_t, expires_t;
    double placed_t;               /* its last START or MOVE */
    double duration, estimate;
    uint64_t seq;                  /* submission order */
    int32_t next, prev;            /* class queue links */
    int32_t cls;
    int32_t priority;
    int16_t gang, ninst;
    int16_t group;                 /* running in, -1 */
    uint8_t state;                 /* ms_job_state_t; 0xff = free slot */
    uint8_t migratable;
    uint8_t inq;                   /* in its class queue */
    ms_sched_inst_t inst1;         /* gang == 1 */
    ms_sched_inst_t *insts;        /* gang > 1: [gang] */
} ms__job_t;

#define MS__SLOT_FREE 0xffu

/* A pending op (cfg.track_ops). */
typedef struct ms__pend {
    uint64_t id, plan;             /* op id; id of its plan's first op */
    ms_op_t op;                    /* local numbers */
    int16_t group;
    uint8_t kind;                  /* the plan's kind */
    uint8_t fresh;
    uint8_t done;                  /* 0 pending, 1 done, 2 rolled back */
    uint8_t from_prof_persist;     /* DESTROY: the GI was a persistent one */
    int8_t from_prof;              /* MOVE: the source GI's profile */
} ms__pend_t;

struct ms_sched {
    ms_sched_cfg_t cfg;
    ms_node_spec_t *nodes;         /* [nnodes]; names point into names[] */
    char **names;                  /* [nnodes] owned */
    int nnodes, ngpus, ngroups;
    ms__grp_t grp[MS__MAX_GROUPS];
    int16_t *g2grp;                /* [ngpus] */
    int32_t *g2l;                  /* [ngpus] */
    int32_t *node_grp;             /* [nnodes] */
    int32_t *node_first;           /* [nnodes] first global GPU */
    int32_t *node_hash;            /* [node_hcap] node + 1 by name (0 empty): the extender
                                    * names thousands of nodes per call */
    uint32_t node_hcap;            /* a power of two >= 2 x nnodes */
    int32_t *node_lidx;            /* [nnodes] the node's index in its group */

    /* jobs */
    ms__job_t *jobs;
    int32_t njobs, capjobs;        /* slots used (high-water), capacity */
    int32_t *free_slots;
    int32_t nfree, capfree;
    ms__idmap_t ids;               /* id -> slot (src/core/idmap.h) */
    uint64_t seq;

    /* classes */
    ms__cls_t *cls;
    int ncls, capcls;

    /* the plan being built and its global copy */
    ms_plan_t plan;
    ms_sched_op_t *gops;
    int gcap;
    int32_t placing;
    int ncreated;
    int32_t created_gpu[MS__MAX_CREATED];
    int8_t created_start[MS__MAX_CREATED];

    /* pending ops */
    ms__pend_t *pend;
    size_t npend, cappend;
    uint64_t next_op;

    ms_sched_stats_t st;
    long reserved;
    int32_t *resv;                 /* slots of the reservations */
    int nresv, capresv;
    ms_diag_t *diag;               /* of the current call, may be NULL */

    /* EASY: the head's reservation (backfill.c) */
    int32_t easy_head;             /* slot, -1 = none this pass */
    double easy_t;                 /* when its placement frees up */
    int easy_n, easy_cap;          /* reserved GPUs */
    int32_t *easy_gpu;             /* [easy_cap] global */
    uint16_t *easy_mask;           /* [easy_cap] memory slices it needs there */
    double *easy_tmp;              /* [easy_cap] scratch (a node's GPUs) */
};

/* --- sched.c: allocation ------------------------------------------------ */
/* Every allocation of the scheduler goes through cfg.alloc (libc's when
 * NULL), so a test can fail the n-th one. */
void *ms__salloc(const ms_sched_t *s, size_t n);
void *ms__scalloc(const ms_sched_t *s, size_t n, size_t size);
void *ms__srealloc(const ms_sched_t *s, void *p, size_t n);
void ms__sfree(const ms_sched_t *s, void *p);

/* --- jobs.c ------------------------------------------------------------- */
/* The id map (set up before anything is submitted) */
void ms__sched_ids_init(ms_sched_t *s);
ms_status_t ms__sched_job_alloc(ms_sched_t *s, const char *id, int32_t *slot);
void ms__sched_job_release(ms_sched_t *s, int32_t slot);
ms_status_t ms__sched_resolve(ms_sched_t *s, const ms_sched_req_t *req, int32_t *cls,
                              ms_diag_t *diag);
/* The ms_job_t that group gi's policy sees for slot. */
static inline ms_job_t ms__sched_view(const ms_sched_t *s, int32_t slot, int gi)
{
    const ms__job_t *j = &s->jobs[slot];
    ms_job_t v;

    v.idx = slot;
    v.prof = s->cls[j->cls].prof[gi];
    v.gang = j->gang;
    v.arrival = j->submit_t;
    v.duration = j->duration > 0.0 ? j->duration : j->estimate;
    return v;
}
static inline ms_sched_inst_t *ms__sched_insts(ms__job_t *j)
{
    return j->gang > 1 ? j->insts : &j->inst1;
}

/* --- queue.c ------------------------------------------------------------ */
void ms__sched_enqueue(ms_sched_t *s, int32_t slot);
void ms__sched_dequeue(ms_sched_t *s, int32_t slot);
/* A scheduling pass, on_idle, and another pass if that changed a layout. */
ms_status_t ms__sched_schedule(ms_sched_t *s, double now);

/* --- backfill.c: EASY reservations ------------------------------------- */
/* Compute the reservation of the head (slot) at now: s->easy_*. */
ms_status_t ms__easy_reserve(ms_sched_t *s, int32_t head, double now);
/* May slot (not the head) start now with the plan in s->plan (group gi's
 * local numbers) without delaying the reservation? */
bool ms__easy_plan_ok(const ms_sched_t *s, int32_t slot, int gi, double now);
/* The same for a placement restricted to one global node. */
bool ms__easy_node_ok(const ms_sched_t *s, int32_t slot, int32_t node, double now);

/* --- apply.c ------------------------------------------------------------ */
/* Apply s->plan (group gi's local numbers, produced by kind) op by op, then
 * hand it to the executor. An illegal op is MS_ESTATE with a diagnostic. */
ms_status_t ms__sched_run_plan(ms_sched_t *s, int gi, ms_plan_kind_t kind, double now);
/* The same without the executor or op tracking: the view only. */
ms_status_t ms__sched_run_quiet(ms_sched_t *s, int gi, ms_plan_kind_t kind, double now);
/* Room for n global ops in s->gops. */
ms_status_t ms__sched_grow_gops(ms_sched_t *s, int n);
/* The STOP (and job-scoped DESTROY) plan of a job leaving; marks it ended. */
ms_status_t ms__sched_release(ms_sched_t *s, int32_t slot, ms_job_state_t final, double now);
/* Take slot off the list of reservations that expire (no-op if absent). */
void ms__sched_resv_del(ms_sched_t *s, int32_t slot);
/* Validate a migration plan's jobs: false if it moves a job that may not move. */
bool ms__sched_moves_allowed(const ms_sched_t *s, const ms_plan_t *p, double now);

/* --- reserve.c ---------------------------------------------------------- */
/* Place slot on the best GPU of the given global nodes (NULL = all) by the
 * restricted-placement rule; MS_ENOFIT if none fits now. */
ms_status_t ms__sched_place_on(ms_sched_t *s, int32_t slot, const int32_t *nodes, int nn,
                               double now);

/* --- ops.c -------------------------------------------------------------- */
/* Room for n more records, so that a plan never fails half applied. */
ms_status_t ms__sched_pend_reserve(ms_sched_t *s, size_t n);
/* Record an applied op; rec is the op with what undoing it needs (DESTROY:
 * the GI's profile in rec->prof, persist its persist bit; MOVE: from_prof). */
ms_status_t ms__sched_pend_push(ms_sched_t *s, int gi, ms_plan_kind_t kind, const ms_op_t *rec,
                                uint8_t fresh, uint8_t persist, int8_t from_prof,
                                uint64_t plan_id, uint64_t *id);

#endif
