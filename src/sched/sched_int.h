/* sched_int.h - private: the scheduler's state and the functions its files
 * share. Never installed.
 *
 * Files:
 *   sched.c     create/destroy, node groups, the view accessors
 *   spec.c      cluster specs: "NAME=COUNTxMODEL[:mode]" and cluster files
 *   jobs.c      the job table, the id map, request classes
 *   resolve.c   request checks and resolution per group
 *   queue.c     per-class queues, the scheduling pass, submit/finish/cancel/tick
 *   apply.c     plan legality, applying ops to a group's cluster, job-scoped
 *               GIs, counters, handing plans to the executor
 *   ops.c       pending ops: done, failed, rollback
 *   reserve.c   reservations, restricted placement, node scores, adopt
 *   tenant.c    tenants: quotas, usage kept per start and end, the
 *               queue order between tenants (docs/tenants.md)
 *   backfill.c  EASY: the head's reservation from scratch (the oracle) and
 *               the test a passing job's plan must pass
 *   resv.c      EASY: the reservation kept incrementally (per group and
 *               profile, each GPU's free-up time in a min-tree)
 *   fence.c     cordoned GPUs and GIs held for others: occupancy no plan sees
 *   preempt.c   preemption: victims for a blocked head, their requeue, the
 *               preemptor's placement, the rate limit and the counts that
 *               skip the search when no one is eligible
 *   preempt_move.c  cfg.preempt_move: victims moved instead of stopped
 *   preempt_gang.c  a gang head's victims: the GPUs of one node emptied
 *
 * Invariants (ms_sched_check tests them):
 *   - a job is in exactly one class queue iff its state is QUEUED;
 *   - a job in STARTING/RUNNING/MIGRATING/RESERVED holds ninst == gang
 *     instances (a gang is started whole within one plan), each of which is
 *     an instance of its group's cluster whose job field is the slot;
 *   - every cluster instance with job >= 0 belongs to a live job;
 *   - persist bits are a subset of the GPU's existing GIs;
 *   - a job is charged to its tenant iff it is live, except a fence's job
 *     (no class), which is never charged; each tenant's usage and counts
 *     are the sums over its jobs.
 */
#ifndef MIGSCHED_SCHED_INT_H
#define MIGSCHED_SCHED_INT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/idmap.h"
#include "migsched/sched.h"

#define MS__MAX_GROUPS 64          /* distinct node kinds */
#define MS__NMODELS 16             /* at least ms_models()'s count (tenant.c) */
#define MS__MAX_CREATED 64         /* GIs remembered per plan (fresh flags) */

/* An incrementally kept EASY input (resv.c): for one group and one kind of
 * head, each leaf's free-up time without `now` (now = -inf: a running job
 * ends at start + estimate; -inf = it fits at once), in a min-tree so that
 * the earliest leaf and the first leaf free by a time are O(log n). A
 * leaf whose GPU changed is recomputed when the tracker is next read. */
typedef struct ms__rtrack {
    int key;                       /* >= 0: a single-GPU profile; < 0: a gang of -key */
    int nleaf, size;               /* leaves: GPUs, or nodes for gangs; size: a power of two */
    double *tree;                  /* [2 * size]: leaf i at size + i, INFINITY past nleaf */
    int32_t *dirty;                /* [nleaf] leaves to recompute */
    uint8_t *mark;                 /* [nleaf] in dirty */
    uint16_t *lmask;               /* [nleaf] a profile's slices at its leaf's time
                                    * (single-GPU trackers; the time's own when it
                                    * is ahead of now: resv.c) */
    int ndirty;
} ms__rtrack_t;

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
    long nwait_all;                /* their sum */
    ms_frag_table_t *ft;           /* FragCost per state (restricted placement, scores) */
    /* what could let a blocked class start (stamps of s->stamp): */
    uint64_t free_at;              /* capacity freed or GIs created (not by a placement) */
    uint64_t any_at;               /* any op */
    uint64_t pol_at;               /* the policy's version() changed */
    uint64_t pol_ver;
    /* [p]: an op other than a placement left a GPU where profile p fits
     * once its idle GIs are gone (MS_POLICY_FIT_PLACE: what can unblock a
     * class of p here) */
    uint64_t fit_at[MS_MAX_PROFILES];
    ms__rtrack_t *trk;             /* [ntrk] EASY trackers, made on first use */
    int ntrk;
    int touched1;                  /* 1 + the GPU last marked in every tracker,
                                    * none synced or made since (0: none); an
                                    * event's ops mostly touch one GPU in a row */
    /* memory slices of each profile at each start, and each profile's legal
     * starts in order with their slices (EASY, without calls per start) */
    uint16_t pmask[MS_MAX_PROFILES][MS_MAX_WIDTH];
    uint8_t nstarts[MS_MAX_PROFILES];
    uint16_t smask[MS_MAX_PROFILES][MS_MAX_WIDTH];
} ms__grp_t;

/* A request class: requests that resolve identically (so a class whose head
 * does not fit is blocked for the rest of a pass). Gangs of any size share
 * one class per resolution, as before the scheduler existed. */
/* A class's kept placement scores (reserve.c): score[n] holds for node n
 * while gen[n] == s->node_gen[n] + 1 (0: none kept). */
typedef struct ms__nscore {
    int8_t *score;                 /* [nnodes] */
    uint64_t *gen;                 /* [nnodes] */
} ms__nscore_t;

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
    /* the last time its head was offered and did not start (queue.c): it
     * is not offered again until something could change the answer */
    uint32_t hgen;                 /* the head changed (head_key) */
    uint32_t blk_hgen;
    uint8_t blk;                   /* MS__BLK_*: why it did not start */
    uint8_t blk_lim;               /* its tenant's limit kept it off a group */
    uint64_t blk_at;               /* s->stamp then */
    uint8_t pdirty;                /* listed in s->pdirty */
    /* tenants (tenant.c): classes are per tenant */
    int32_t tenant;
    int32_t dem1;                  /* compute slices of one instance, the least
                                    * over its candidate groups */
    float mem1;                    /* its memory GB where it takes dem1 */
    float memmin;                  /* memory GB of one instance, the least over
                                    * its candidate groups (a memory limit) */
    int32_t hdem;                  /* the head's: dem1 x its gang */
    int16_t hgang;                 /* the head's gang (per model guarantees) */
    float hmem;                    /* the head's: mem1 x its gang */
    float hmemmin;                 /* the head's: memmin x its gang */
} ms__cls_t;

/* worth_offering's rule for each of a class's groups, by its place in
 * the class's order (bit i; s->cwatch[cls], made by ms__sched_cls_order;
 * apart, as the memo below, so that the class records stay as they were):
 * capacity counts where its profile fits (MS_POLICY_FIT_PLACE on MIG, not
 * a gang), a new version does not re-offer it blocked with no fit
 * (MS_POLICY_FIT_ANY), the policy is not pure (always re-offered). */
typedef struct ms__cwatch {
    uint64_t fit, any, impure;
} ms__cwatch_t;

/* A class's preemption memo (preempt.c; s->pmemo[cls], beside s->cls so
 * that the pass's class records stay small): its head's last search found
 * nothing; not repeated for that head while nothing changed (s->stamp:
 * ops, usage; ops confirmed: a job starting becomes running) before until
 * (a grace period's end, a checkpoint). Per class: the queue's head and
 * the heads behind it that may preempt (queue.c's preempts_behind) each
 * keep theirs. */
typedef struct ms__pmemo {
    int32_t head;                  /* -1: none */
    long ops;
    uint64_t stamp;
    double until;
} ms__pmemo_t;

#define MS__BLK_NONE 0             /* offer it */
#define MS__BLK_NOFIT 1            /* no candidate group could place it */
#define MS__BLK_EASY 2             /* a placement would have delayed the head's reservation */

typedef struct ms__job {
    char *id;                      /* owned; NULL = anonymous */
    double submit_t, start_t, end_t, expires_t;
    double placed_t;               /* its last START or MOVE */
    double duration, estimate;
    double checkpoint;             /* req.checkpoint_s: its progress saved every
                                    * checkpoint s of its run; 0 never */
    double done;                   /* run kept by checkpoints over its past
                                    * preemptions: its estimate is that much less */
    uint64_t seq;                  /* submission order */
    int32_t next, prev;            /* class queue links */
    int32_t cls;
    int32_t priority;
    int16_t gang, ninst;
    int16_t group;                 /* running in, -1 */
    uint8_t state;                 /* ms_job_state_t; 0xff = free slot */
    uint8_t migratable;
    uint8_t inq;                   /* in its class queue */
    uint8_t nopreempt;             /* never a victim (req.nonpreemptible) */
    int16_t charge_grp;            /* the group its charge is on (per model usage) */
    int32_t npreempt;              /* times preempted */
    int32_t charge;                /* compute slices charged to its tenant, 0 = none */
    float charge_mem;              /* memory GB charged with them */
    double vcharge;                /* service charged to its tenant's vt at its
                                    * start (tenant.c), corrected at its end */
    ms_sched_inst_t inst1;         /* gang == 1 */
    ms_sched_inst_t *insts;        /* gang > 1: [gang] */
} ms__job_t;

#define MS__SLOT_FREE 0xffu

/* A tenant (tenant.c). */
typedef struct ms__tenant {
    char *name;                    /* owned; the default's is static */
    double weight;
    long guarantee, limit;         /* compute slices; limit < 0: none */
    double mem_limit;              /* memory GB; <= 0: none */
    double mem_guarantee;          /* memory GB; <= 0: none (ms__tenant_within) */
    long usage;                    /* compute slices its live jobs hold */
    double mem;                    /* memory GB they hold */
    long running, waiting;
    long pre_running;              /* of them, possible victims (preempt.c) */
    uint64_t dec_at;               /* s->stamp when its usage fell or its quota changed */
    /* per GPU model (index in ms_models()): compute slices its live jobs
     * hold on GPUs of the model, kept for every model so that a limit
     * declared later starts from the truth; the limit (< 0: none) and
     * the limited models in declaration order (ms_sched_tenant_info) */
    int nml;
    int8_t ml[MS_TENANT_MAX_MODEL_LIMITS];
    long musage[MS__NMODELS];
    long mlim[MS__NMODELS];
    /* per model guarantees (guarantee@MODEL; 0: none) and how many models
     * have one: 0 is every fast path (tenant_model.c) */
    long mguar[MS__NMODELS];
    int nmg;
    /* its virtual time (tenant.c): the service its jobs were charged,
     * slice-seconds / weight, each job's estimate at its start, corrected
     * to what it ran at its end */
    double vt;
} ms__tenant_t;
/* A fenced GPU (fence.c): cordoned, or holding GIs that are not ours. */
typedef struct ms__fence {
    int32_t gpu;                   /* global */
    int32_t slot;                  /* the fence's job */
    bool cordoned;
    int nforeign;
    ms_gi_t foreign[MS_MAX_INST];  /* the hardware's GIs that are not ours */
    uint16_t made;                 /* starts of the GIs the fence created in the view */
    uint16_t fill;                 /* of those, the ones the hardware lacks (cordon fill) */
} ms__fence_t;

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
    uint64_t *node_gen;            /* [nnodes] s->stamp at the last op on one of
                                    * its GPUs (ms__sched_cluster_op): its
                                    * placement scores hold while it is the same */
    struct ms__nscore *nsc;        /* [nnsc] by class: kept node scores
                                    * (ms_sched_node_scores_kept) */
    int32_t nnsc;

    /* jobs */
    ms__job_t *jobs;
    int32_t njobs, capjobs;        /* slots used (high-water), capacity */
    int32_t *free_slots;
    int32_t nfree, capfree;
    ms__idmap_t ids;               /* id -> slot (src/core/idmap.h) */
    uint64_t seq;

    /* classes */
    ms__cls_t *cls;
    ms__pmemo_t *pmemo;            /* [capcls] */
    ms__cwatch_t *cwatch;          /* [capcls] */
    int ncls, capcls;
    /* the non-empty classes in head order, kept from pass to pass (queue.c,
     * without tenants or aging): [capcls] each; pdirty lists the classes
     * whose head changed since (each once: ms__cls_t.pdirty) */
    int32_t *pord, *pdirty;
    int npord, npdirty;
    bool pord_ok;

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
    /* a head whose reservation this pass skipped (every class behind it
     * that would pass it was blocked and unchanged), made when asked for
     * (ms_sched_head_reservation) at easy_want_t; -1 = none */
    int32_t easy_want;
    double easy_want_t;
    double easy_t;                 /* when its placement frees up */
    int easy_n, easy_cap;          /* reserved GPUs */
    int32_t *easy_gpu;             /* [easy_cap] global */
    uint16_t *easy_mask;           /* [easy_cap] memory slices it needs there */
    double *easy_tmp;              /* [easy_cap] scratch (a node's GPUs) */

    /* what blocked classes compare against (queue.c) */
    uint64_t stamp;                /* counts changes: ops, policy versions, regimes */
    uint64_t wake_at;              /* the last free_at, pol_at or dec_at of
                                    * any group or tenant: a class blocked
                                    * with no fit after it sleeps on */
    bool impure;                   /* a group's policy lacks MS_POLICY_PURE_PLACE */
    uint64_t qgen;                 /* counts changes of any class's head */
    /* The last pass settled (queue.c, calm_pass): it left every class
     * blocked with nothing that could unblock one after it, none blocked
     * by a reservation. While no stamp and no head changed since, a pass
     * would decide the same (but for the head's make_room, which it asks,
     * and where it leaves the reservation; its order is s->pord). */
    bool calm_ok;
    uint64_t calm_stamp, calm_qgen;
    uint64_t resv_at;              /* the passing regime (free, or which
                                    * reservation) last changed */
    bool lr_easy;                  /* the last regime: a reservation held */
    int32_t lr_head;
    int lr_n;
    double lr_t;                   /* -inf: "now" */
    int32_t lr_gpu[64];            /* a gang reserves at most a node (<= 64 GPUs) */
    uint16_t lr_mask[64];
    /* the last incremental reservation (resv.c): reused while its head is
     * the same, no GPU changed (rc_touched) and its time is still ahead */
    int32_t rc_head;
    uint64_t rc_at;                /* s->stamp when computed */
    uint64_t rc_touched;           /* s->stamp of the last GPU touched */
    double rc_t;
    int rc_n;
    /* virtual times are kept scaled by exp((t - vt_ref) / tau) with
     * tau = half-life / ln 2 when they decay (tenant.c) */
    double vt_ref;
    /* tenants (tenant.c): [0] is the default; ten_on once any is declared
     * (until then the queue order is exactly the one without tenants) */
    ms__tenant_t *ten;
    int nten, capten;
    ms__tenant_t ten0;
    bool ten_on;
    long tot_slices;               /* compute slices of the cluster */
    double tot_mem;                /* memory GB of the cluster */
    int8_t grp_mi[MS__MAX_GROUPS]; /* each group's model: its index in ms_models() */
    /* for the tests: offer every waiting class in every pass, and compute
     * every reservation from scratch (the behaviour before issue 25, which
     * must make the same decisions) */
    bool test_full_passes, test_resv_scan;
    /* fences (fence.c) */
    ms__fence_t *fence;
    int nfence, capfence;
    int32_t *fence_of;             /* [ngpus] index + 1 into fence, 0 none (NULL until used) */
    bool fence_lifted;             /* a rollback has lifted them from the view */
    /* preemption (preempt.c): live possible victims (preemptible, single
     * instance) counted by priority, a few distinct priorities in a table
     * (an entry, once made, stays), the rest in pc_other; the times of the
     * last preempt_rate preemptions in a ring */
#define MS__PC_MAX 16
    int32_t pc_prio[MS__PC_MAX];
    long pc_n[MS__PC_MAX];
    int npc;
    long pc_other;
    double *pre_ring;              /* [preempt_rate] */
    int pre_head, pre_n;
};

/* --- spec.c ------------------------------------------------------------- */
/* How many times a stored node name was read to find or add a name (each
 * add reads O(1) of them: the tests count this, not the time). */
long ms__cluster_spec_name_reads(const ms_cluster_spec_t *cs);

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
/* Slot's job from req, of class cls, submitted at submit_t (and the next
 * sequence number): a submit's and a reservation's new job alike. */
void ms__sched_job_fill(ms_sched_t *s, int32_t slot, int32_t cls, const ms_sched_req_t *req,
                        double submit_t);
void ms__sched_job_release(ms_sched_t *s, int32_t slot);
ms_status_t ms__sched_resolve(ms_sched_t *s, const ms_sched_req_t *req, int32_t *cls,
                              ms_diag_t *diag);
/* Class c's candidate groups, best first (c->order, c->norder), from its
 * profiles and tenant. */
void ms__sched_cls_order(const ms_sched_t *s, ms__cls_t *c, ms__cwatch_t *w);
ms_status_t ms__sched_order_check(const ms_sched_t *s);   /* queue.c */

/* --- resolve.c ---------------------------------------------------------- */
/* Check req and resolve it on every group: prof[k] its profile on group k
 * (-1: it cannot run there), *node its node constraint (-1 none).
 * MS_EINVAL (malformed; diag names the field), MS_ENOENT (a product name no
 * model of the cluster has; diag names the nearest profiles), MS_ENOFIT (no
 * group can ever host it). */
ms_status_t ms__sched_resolve_profiles(const ms_sched_t *s, const ms_sched_req_t *req, int8_t *prof,
                                       int *node, ms_diag_t *diag);
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
/* A job's run time as EASY and the tenants' charge count it: its estimate
 * (the default without one), less the run its checkpoints kept over its
 * past preemptions. */
static inline double ms__job_est(const ms_sched_t *s, const ms__job_t *j)
{
    double e = j->estimate > 0.0 ? j->estimate : s->cfg.default_estimate_s;

    return j->done > 0.0 ? (e > j->done ? e - j->done : 0.0) : e;
}
/* The work a preemption at now would lose: its run since its start, or
 * since its last checkpoint (counted in run time from its start: the
 * scheduler does not see the work itself). */
static inline double ms__job_lost(const ms__job_t *j, double now)
{
    double run = now - j->start_t;

    return j->checkpoint > 0.0 && run > 0.0 ? fmod(run, j->checkpoint) : run;
}

/* --- queue.c ------------------------------------------------------------ */
void ms__sched_enqueue(ms_sched_t *s, int32_t slot);
void ms__sched_dequeue(ms_sched_t *s, int32_t slot);
/* A scheduling pass, on_idle, and another pass if that changed a layout. */
ms_status_t ms__sched_schedule(ms_sched_t *s, double now);

/* --- backfill.c: EASY reservations ------------------------------------- */
/* Compute the reservation of the head (slot) at now: s->easy_*, from
 * scratch over every GPU of its groups (the oracle of the incremental one;
 * node-constrained heads use it: O(the node's GPUs)). */
ms_status_t ms__easy_reserve_scan(ms_sched_t *s, int32_t head, double now);
/* The same, kept incrementally (resv.c): O(groups + changed GPUs x log). */
ms_status_t ms__easy_reserve(ms_sched_t *s, int32_t head, double now);
/* Room for n reserved GPUs in s->easy_*. */
ms_status_t ms__easy_grow(ms_sched_t *s, int n);
/* When profile k fits on local GPU l of gr if the running jobs end as
 * estimated (INFINITY: never, under its kept GIs); *mask: its slices then.
 * With now = -INFINITY the time does not depend on now: the time at now is
 * max(now, that). */
double ms__easy_gpu_free_at(const ms_sched_t *s, const ms__grp_t *gr, int l, int k, double now,
                            uint16_t *mask);
/* When local GPU l of gr runs nothing (-INFINITY with now = -INFINITY if
 * it runs nothing now). */
double ms__easy_gpu_empty_at(const ms_sched_t *s, const ms__grp_t *gr, int l, double now);
/* A gang of `gang` on local node nd of group gi: fills s->easy_* if it is
 * earlier than *best (gbuf: scratch of a node's GPUs). */
void ms__easy_gang_node(ms_sched_t *s, int gi, int nd, int gang, double now, double *best,
                        int32_t *gbuf);
/* Does slot's estimate end by the reservation? */
bool ms__easy_ends_in_time(const ms_sched_t *s, int32_t slot, double now);

/* --- resv.c ------------------------------------------------------------- */
/* Local GPU l of group gi changed (an op, or a job's start time): the
 * trackers recompute it when next read. */
void ms__resv_touch(ms_sched_t *s, int gi, int l);
void ms__resv_fini(ms_sched_t *s);
/* May slot (not the head) start now with the plan in s->plan (group gi's
 * local numbers) without delaying the reservation? */
bool ms__easy_plan_ok(const ms_sched_t *s, int32_t slot, int gi, double now);
/* The same for a placement restricted to one global node. */
bool ms__easy_node_ok(const ms_sched_t *s, int32_t slot, int32_t node, double now);

/* --- tenant.c ----------------------------------------------------------- */
static inline ms__tenant_t *ms__tenant(ms_sched_t *s, int32_t t)
{
    return t == 0 ? &s->ten0 : &s->ten[t - 1];
}
static inline const ms__tenant_t *ms__tenant_c(const ms_sched_t *s, int32_t t)
{
    return t == 0 ? &s->ten0 : &s->ten[t - 1];
}
/* The default tenant and the cluster's totals (at create). */
void ms__tenant_init(ms_sched_t *s);
void ms__tenant_fini(ms_sched_t *s);
/* The tenant a request names: MS_EINVAL (diag: field "tenant") if unknown. */
ms_status_t ms__tenant_of_req(const ms_sched_t *s, const ms_sched_req_t *req, int32_t *t,
                              ms_diag_t *diag);
/* Class c's dem1 from its profiles (at its creation). */
void ms__tenant_cls_demand(const ms_sched_t *s, ms__cls_t *c);
/* Compute slices (and memory GB) one instance of class c takes on group gi. */
int32_t ms__tenant_slices(const ms_sched_t *s, const ms__cls_t *c, int gi, double *mem);
/* Charge slot's instances on group gi to its tenant (it became live), or
 * give them back (it left, or went back to the queue). Idempotent. */
void ms__tenant_charge(ms_sched_t *s, int32_t slot, int gi);
/* ran_s: the seconds it held them (< 0: none, a start undone) */
void ms__tenant_uncharge(ms_sched_t *s, int32_t slot, double ran_s);
/* Tenant t has jobs waiting again after none (queue.c). */
void ms__tenant_backlogged(ms_sched_t *s, int32_t t);
/* A job of class cls and gang size gang, queued or not: may it start on
 * group gi without taking its tenant over its limit? */
bool ms__tenant_fits_cls(const ms_sched_t *s, int32_t cls, int gang, int gi);
/* The same for slot. Inline: without tenants there is no limit, and the
 * question is asked at every placement offered. */
static inline bool ms__tenant_fits(const ms_sched_t *s, int32_t slot, int gi)
{
    return !s->ten_on || ms__tenant_fits_cls(s, s->jobs[slot].cls, s->jobs[slot].gang, gi);
}
/* May class c's head start anywhere without that (false: the pass leaves
 * the class out; it does not block anyone)? */
bool ms__tenant_eligible(const ms_sched_t *s, const ms__cls_t *c);
/* The guarantee, in each dimension the tenant declares (memory when
 * mem_guarantee > 0; slices when guarantee > 0 or no memory guarantee):
 * would t stay within it with d slices and mem GB more (tier 0, reclaim)?
 * Is t over it in some dimension (borrowing)? Does t keep it in every
 * dimension after take slices and take_mem GB are taken from it (a
 * victim's tenant)? */
bool ms__tenant_within(const ms__tenant_t *t, long d, double mem);
bool ms__tenant_over(const ms__tenant_t *t);
bool ms__tenant_keeps(const ms__tenant_t *t, long take, double take_mem);
/* Order between the heads of classes a and b by tenant (ten_on): < 0 a
 * first, > 0 b first, 0 the same tier and share (then the usual order). */
int ms__tenant_cmp(const ms_sched_t *s, const ms__cls_t *a, const ms__cls_t *b);
/* Per model limits: would d more compute slices on group gi take t over
 * the limit of gi's model (none: fine)? */
bool ms__tenant_model_ok(const ms_sched_t *s, const ms__tenant_t *t, int gi, long d);

/* --- tenant_model.c ----------------------------------------------------- */
/* t's per model limits and guarantees (OUT mi: each entry's model index),
 * checked before anything is written; diag's field names the entry
 * (limit@MODEL, guarantee@MODEL). */
ms_status_t ms__tenant_check_models(const ms_sched_tenant_t *t, int *mi, ms_diag_t *diag);
/* Store t's entries (checked: mi) in r; true when the models with a
 * guarantee changed (the classes' orders then follow: ms__tenant_reorder). */
bool ms__tenant_set_models(ms__tenant_t *r, const ms_sched_tenant_t *t, const int *mi);
/* Tenant k's classes: their candidate groups ordered again, with what
 * follows from the order (demand, the head's figures). */
void ms__tenant_reorder(ms_sched_t *s, int32_t k);
/* Class c's candidate groups (built by jobs.c's order): those of models
 * where its tenant has a per model guarantee first, the rest as they were. */
void ms__tenant_prefer(const ms_sched_t *s, ms__cls_t *c);
/* The models (bit per ms_models() index) on which c's head fits in its
 * tenant's per model guarantee; 0 without one. */
uint32_t ms__tenant_within_models(const ms_sched_t *s, const ms__cls_t *c);
/* Is c's head within its tenant's guarantee: cluster-wide
 * (ms__tenant_within) or on some model it can run on? */
bool ms__tenant_within_cls(const ms_sched_t *s, const ms__cls_t *c);
/* Does tenant t hold more than its guarantee on some model (with none
 * declared there: anything)? Only meaningful with t->nmg > 0. */
bool ms__tenant_over_models(const ms__tenant_t *t);
/* Does tenant t keep its guarantee on model mi (< 0: no model) without
 * take slices there? */
bool ms__tenant_keeps_model(const ms__tenant_t *t, int mi, long take);
/* Every tenant's usage and counts against its jobs (ms_sched_check). */
ms_status_t ms__tenant_check(const ms_sched_t *s);

/* --- apply.c ------------------------------------------------------------ */
/* Apply one op to group gi's cluster and note what it may unblock (every
 * change of a cluster goes through here): consume is true for a
 * placement's START and for a CREATE that the same placement starts on,
 * which can only take capacity away. */
ms_status_t ms__sched_cluster_op(ms_sched_t *s, int gi, const ms_op_t *op, bool consume);
/* Group gi's policy may have changed its version() (after a hook call). */
void ms__sched_pol_seen(ms_sched_t *s, int gi);
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

/* --- fence.c ------------------------------------------------------------ */
/* After group gi's plan s->plan was applied: fence its GPUs again. */
void ms__fence_after_plan(ms_sched_t *s, int gi, double now);
/* Lift every fence from the view (a rollback undoes the view under them) /
 * put them back. */
void ms__fence_lift_all(ms_sched_t *s);
void ms__fence_put_all(ms_sched_t *s, double now);

/* --- preempt.c ---------------------------------------------------------- */
/* slot became live (d = +1) or left (-1): its count as a possible victim
 * (called with the tenant charge, so exactly once each way). */
void ms__preempt_count(ms_sched_t *s, int32_t slot, int d);
void ms__preempt_fini(ms_sched_t *s);
/* The most jobs one preemption stops (a gang head's victims on a node;
 * a single head's are at most MS_MAX_INST). */
#define MS__PREEMPT_MAXV 64
/* The head slot fits nowhere: preempt for it if cfg.preempt and the rules
 * allow. *placed: it now runs; victims[0..*nvict) (room for
 * MS__PREEMPT_MAXV) were queued again. */
ms_status_t ms__preempt_try(ms_sched_t *s, int32_t slot, double now, bool *placed,
                            int32_t *victims, int *nvict);
/* The counts against a scan of the jobs (ms_sched_check). */
ms_status_t ms__preempt_check(const ms_sched_t *s);
/* Does class cls's head reclaim (its tenant has a guarantee and is within
 * it with the head started)? */
bool ms__preempt_reclaims(const ms_sched_t *s, int32_t cls);
/* The pass's rules for a guarantee owed (docs/tenants.md, "Never
 * starved"): may class best's head pass head's EASY reservation freely
 * (it is within its guarantee, head would borrow, and another tenant
 * borrows)? */
bool ms__preempt_owed(const ms_sched_t *s, int best, int head);
/* A start took tenant t's usage up: if t is now over its guarantee, clear
 * blocked[k] of every blocked class head within its own guarantee (of
 * another tenant), so that it may preempt t's jobs in this pass. */
void ms__preempt_reclaim_again(const ms_sched_t *s, uint8_t *blocked, int32_t t);

/* What a victim search knows of its head (preempt.c, preempt_gang.c). */
typedef struct ms__phead {
    int32_t slot;                  /* -1: a request that is not queued */
    int32_t cls;
    int32_t prio;
    int32_t tenant;
    int gang;                      /* GPUs it needs (1: one instance) */
    bool reclaim;
    uint32_t rmodels;              /* reclaim's models (bit per ms_models()
                                    * index; ~0u: any): preempt.c */
    double now;
    ms_sched_victim_ok_fn ok;      /* the caller's veto (NULL none) */
    void *ok_ctx;
} ms__phead_t;
/* Lower *until to the moment job v may become a victim of h: the end of
 * its grace period, or, when it would lose more than preempt_max_lost_s,
 * its next checkpoint (the moment a search that found nothing may answer
 * otherwise: the memo). */
void ms__preempt_until_note(const ms_sched_t *s, const ms__phead_t *h, int32_t v, double *until);
/* May running job v be a victim of h? */
bool ms__preempt_eligible(const ms_sched_t *s, const ms__phead_t *h, int32_t v);
/* Do the victims[0..n) together leave every tenant but h's at or above its
 * guarantee? */
bool ms__preempt_keeps(const ms_sched_t *s, const ms__phead_t *h, const int32_t *victims, int n);

/* A model's index in ms_models() (tenant_model.c), -1 past MS__NMODELS. */
int ms__model_index(const ms_model_t *m);

/* --- preempt_gang.c ----------------------------------------------------- */
/* A gang head's choice: gang GPUs of one node emptied. */
typedef struct ms__gpick {
    int gi, lnode;                 /* group, local node; gi < 0: none */
    uint32_t gangs;                /* which of the node's gangs go (node order) */
    int nvictims;
    double lost_s;
    int32_t first;                 /* the node's first global GPU (ties) */
    double until;                  /* the first end of a grace period seen */
} ms__gpick_t;
/* The cheapest node for gang head h (fewest victims, then least lost work,
 * then the lowest node); b->gi < 0: none. */
ms_status_t ms__preempt_gang_search(ms_sched_t *s, const ms__phead_t *h, ms__gpick_t *b);
/* The choice b again: its victims (room for MS__PREEMPT_MAXV) and its
 * local GPUs (room for h->gang), lowest first. */
ms_status_t ms__preempt_gang_victims(ms_sched_t *s, const ms__phead_t *h, const ms__gpick_t *b,
                                     int32_t *victims, int *nvictims, int32_t *gpus);
/* Start gang job slot on the local GPUs gpus[0..gang) of group gi, each
 * emptied by its victims: idle GIs go, one full-size instance each. */
ms_status_t ms__preempt_gang_place(ms_sched_t *s, int32_t slot, int gi, const int32_t *gpus,
                                   double now);

/* --- preempt_move.c ----------------------------------------------------- */
/* cfg.preempt_move: move each victims[i] (on local GPU l of group gi) that
 * may move and has a destination, in one MS_PK_ROOM plan; victims[0..*n)
 * are then those left to stop, in their order. */
ms_status_t ms__preempt_move(ms_sched_t *s, int gi, int l, int32_t *victims, int *n, double now);

/* --- ops.c -------------------------------------------------------------- */
/* Room for n more records, so that a plan never fails half applied. */
ms_status_t ms__sched_pend_reserve(ms_sched_t *s, size_t n);
/* Record an applied op; rec is the op with what undoing it needs (DESTROY:
 * the GI's profile in rec->prof, persist its persist bit; MOVE: from_prof). */
ms_status_t ms__sched_pend_push(ms_sched_t *s, int gi, ms_plan_kind_t kind, const ms_op_t *rec,
                                uint8_t fresh, uint8_t persist, int8_t from_prof,
                                uint64_t plan_id, uint64_t *id);

#endif
