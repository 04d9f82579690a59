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

#endif
