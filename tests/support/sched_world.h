/* sched_world.h - a scheduler over a cluster spec, for the tests of
 * tests/sched (linked into every test: tests/support/). The helpers assert
 * through cmocka: include <cmocka.h> (and what it needs) first. */
#ifndef MIGSCHED_TEST_SCHED_WORLD_H
#define MIGSCHED_TEST_SCHED_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/rng.h"
#include "migsched/sched.h"

typedef struct world {
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
} world_t;

/* A scheduler with policy pol over nodes[n] ("name=NxMODEL[:mode]"),
 * created at time 0; track: cfg.track_ops; ex: the executor (NULL: none).
 * Fails the test on a bad node or a refused config. */
void world_make(world_t *w, const ms_policy_ops_t *pol, const char *const *nodes, int n, bool track,
                const ms_sched_exec_t *ex);
/* The same with cfg as the caller set it (policy, executor, queue and
 * preemption options: its nodes are filled in here). */
void world_make_cfg(world_t *w, ms_sched_cfg_t *cfg, const char *const *nodes, int n);
/* The same over two nodes, a=NxA100-40GB and h=NxH100-80GB (N = per_node):
 * the tests of quotas per GPU model. */
void world_make_a100_h100(world_t *w, ms_sched_cfg_t *cfg, int per_node);
/* The same with the policy by name. */
void world_make_named(world_t *w, const char *policy, const char *const *nodes, int n, bool track,
                      const ms_sched_exec_t *ex);
void world_free(world_t *w);

/* The tests' fingerprint of the plans they saw: h (start from FNV-1a's
 * offset basis) with op, issued at now, folded in. */
uint64_t world_fold_op(uint64_t h, const ms_op_t *op, double now);
/* A number in [0, n). */
uint64_t world_rnd(ms_rng_t *r, uint64_t n);

/* The hardware beside a scheduler: one homogeneous cluster per node group,
 * to which the ops of plans are applied when they are done; a refused op
 * fails the test. */
typedef struct hw {
    ms_cluster_t *c[8];
    int n;
} hw_t;

void hw_make(hw_t *h, const ms_sched_t *s);
void hw_apply(hw_t *h, const ms_sched_t *s, const ms_op_t *gop);
void hw_free(hw_t *h);

/* --- one job ------------------------------------------------------------- */

/* Submit a job of profile prof for tenant ten (NULL: the default), on
 * GPUs of model (NULL: any), priority prio, its estimate and duration
 * dur, at now; ms_sched_check after. Its slot (ms_sched_next_slot's, so a
 * test may note what its plan callback needs before). Fails the test on a
 * refusal. */
int32_t world_submit(ms_sched_t *s, const char *prof, const char *ten, const char *model, int prio,
                     double dur, double now);
/* End slot's run at now (ms_sched_finished), *finishing set to slot
 * meanwhile (a plan callback tells it from a victim), then -1;
 * ms_sched_check after. */
void world_finish(ms_sched_t *s, int32_t slot, double now, int32_t *finishing);
ms_job_state_t world_job_state(ms_sched_t *s, int32_t slot);
/* The model of the GPU slot runs on ("" if it holds none). */
const char *world_job_model(ms_sched_t *s, int32_t slot);

/* The simulator's option table refuses each `opt` value bad[2 i] (i < n)
 * with a diag naming the option whose message contains bad[2 i + 1]. */
void world_opt_refuses(const char *opt, const char *const *bad, int n);

/* --- a random workload --------------------------------------------------- */

/* The driver of a test's random workload on s: job k's run ends at end[k]
 * (INFINITY while it has none to end: the test's plan callback sets it when
 * the job starts), and finish (the test's) ends it at now, setting done[k],
 * with n jobs submitted so far. */
typedef struct world_wl {
    ms_sched_t *s;
    const double *end;
    const bool *done;
    void *ctx;
    void (*finish)(void *ctx, int32_t k, double now, int n);
    /* Whether job k may be left queued at the end (NULL: every job must
     * end done). */
    bool (*may_wait)(void *ctx, int32_t k);
} world_wl_t;

/* End every run of jobs [0, n) that ends by t, in time order. */
void world_wl_until(const world_wl_t *wl, int n, double t);
/* The arrival of job n after one at now: floor(unit * 40) s later, drawn
 * from r, every run that ends by then ended. */
double world_wl_next(const world_wl_t *wl, ms_rng_t *r, int n, double now);
/* The end of a workload of n jobs: every run ended, then each job done (or
 * queued, where may_wait allows); a failure names seed. */
void world_wl_end(const world_wl_t *wl, int n, uint64_t seed);

/* --- a preemption test's plans ------------------------------------------- */

#define WORLD_MAXOPS 8192
#define WORLD_MAXPEND 16

/* What a preemption test's plan callback keeps of the plans it sees: their
 * fingerprint, the op ids its driver confirms (cfg.track_ops), and the
 * victims of the preemption under way (the running jobs stopped, or moved,
 * that the driver is not ending), until their preemptor starts. */
typedef struct world_pre {
    bool track;                    /* cfg.track_ops: the driver confirms every op */
    int32_t finishing;             /* the slot the driver is ending, -1 */
    uint64_t plans;                /* a hash of every plan, in order */
    uint64_t ops[WORLD_MAXOPS];    /* op ids to confirm */
    int nops;
    int32_t pend[WORLD_MAXPEND];   /* victims, their preemptor not yet started */
    int npend;
} world_pre_t;

/* Nothing seen yet (plans at FNV-1a's offset basis, finishing -1), for a
 * scheduler with cfg.track_ops = track. */
void world_pre_init(world_pre_t *pr, bool track);
/* Op i of plan p: its id kept when tracking, the op folded into plans.
 * The op, or NULL when its job is not one of the test's [0, maxj). */
const ms_op_t *world_pre_op(world_pre_t *pr, const ms_sched_plan_t *p, int i, int maxj);
/* Job is a victim of the preemption under way: its index in pend. */
int world_pre_victim(world_pre_t *pr, int32_t job);
/* Confirm every op kept, in order (those the confirmations hand out too),
 * as an executor that never fails would, with ms_sched_check after each. */
void world_pre_confirm(world_pre_t *pr, ms_sched_t *s, double now);

#endif
