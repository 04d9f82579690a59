/* plan.h - decisions as data.
 *
 * A policy never mutates the cluster; it returns a plan, a short list of
 * operations that ms_cluster_apply() executes in order:
 *
 *   CREATE  gpu, prof, start         create an idle GI (dynamic partitioning)
 *   DESTROY gpu, start               destroy an idle GI
 *   START   job, gpu, start, prof    run a waiting job on the idle GI at
 *                                    (gpu, start); time-slicing: start = -1
 *                                    takes a slot and prof is the job's profile
 *   MOVE    job, from_gpu, from_start -> gpu, start
 *           make-before-break: the target GI must already exist and be idle
 *           (a CREATE earlier in the plan); the old GI is left idle, and the
 *           policy DESTROYs it afterwards if it partitions dynamically.
 *           With bbm set (break-before-make, for a target that overlaps the
 *           old GI on the same GPU) the old GI is destroyed and the target
 *           created by the MOVE itself.
 *   STOP    job, gpu, start          a job ends (used by the simulator, not by
 *                                    policies): the GI becomes idle
 *
 * The simulator, the service and dry runs all consume the same plan; the
 * service journals it before executing it.
 */
#ifndef MIGSCHED_PLAN_H
#define MIGSCHED_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/cluster.h"

typedef enum ms_op_kind {
    MS_OP_CREATE = 1,
    MS_OP_DESTROY = 2,
    MS_OP_START = 3,
    MS_OP_MOVE = 4,
    MS_OP_STOP = 5
} ms_op_kind_t;

typedef struct ms_op {
    uint8_t kind;        /* ms_op_kind_t */
    uint8_t bbm;         /* MOVE only: break-before-make */
    int8_t prof;         /* CREATE/START: profile; MOVE: target GI profile */
    int8_t start;        /* target memory slice (-1: time-slice slot) */
    int8_t from_start;   /* MOVE: the job's current slice */
    int32_t gpu;         /* target GPU */
    int32_t from_gpu;    /* MOVE: the job's current GPU */
    int32_t job;         /* START/MOVE/STOP: job index, else -1 */
} ms_op_t;

typedef struct ms_plan {
    ms_op_t *ops;
    int n, cap;
} ms_plan_t;

/* Lifecycle: a plan is a value (init/fini in place); heap objects use
 * _create/_destroy. The builders append one op each (ms_plan_add_*). */
void ms_plan_init(ms_plan_t *p);
void ms_plan_fini(ms_plan_t *p);          /* frees ops; p may be reused after init */
static inline void ms_plan_clear(ms_plan_t *p) { p->n = 0; }

ms_status_t ms_plan_add(ms_plan_t *p, const ms_op_t *op);
ms_status_t ms_plan_add_create(ms_plan_t *p, int gpu, int prof, int start);
ms_status_t ms_plan_add_destroy(ms_plan_t *p, int gpu, int start);
ms_status_t ms_plan_add_start(ms_plan_t *p, int32_t job, int gpu, int start, int prof);
/* Make-before-break move of a dynamically partitioned job: CREATE the target,
 * MOVE, DESTROY the old GI. */
ms_status_t ms_plan_add_move_mbb(ms_plan_t *p, int32_t job, int from_gpu, int from_start,
                                 int gpu, int start, int prof);
/* Break-before-make move (target overlaps the old GI on the same GPU). */
ms_status_t ms_plan_add_move_bbm(ms_plan_t *p, int32_t job, int gpu, int from_start,
                                 int start, int prof);
/* Job `job` on the whole of GPU gpu of c (a gang's GPU): its idle GIs
 * destroyed, a full-size instance created at its first start, and the
 * job started there; with keep_full, an idle full-size instance already
 * there is kept and used instead. MS_ESTATE if a job runs on the GPU,
 * MS_ENOFIT if the model has no full-size profile. */
ms_status_t ms_plan_add_whole_gpu(ms_plan_t *p, const ms_cluster_t *c, int gpu, int32_t job,
                                  bool keep_full);

/* Execute every op in order. On an invalid op (overlap, illegal start, wrong
 * job) returns MS_ESTATE with *failed_op set, leaving the ops before it
 * applied: plans come from policies, so this is a policy bug, not input. */
ms_status_t ms_cluster_apply(ms_cluster_t *c, const ms_plan_t *p, int *failed_op);
/* Execute one op. */
ms_status_t ms_cluster_apply_op(ms_cluster_t *c, const ms_op_t *op);

#endif
