/* cluster.h - GPUs, their instances, and the state index.
 *
 * A cluster is ngpus GPUs of one model (one ms_geom_t), grouped into nodes of
 * gpus_per_node. Each GPU holds its state number (see geometry.h), the busy
 * compute of the instances that run jobs, and its instance list. In
 * time-slicing mode a GPU has no instances; it has up to `replicas` slots
 * (start == -1) that jobs share in time.
 *
 * The index keeps, per state, the set of GPUs in that state (a two-level
 * bitset), so "the lowest-numbered GPU in state s" is O(1)-ish and a policy
 * that ranks (state, start) candidates never looks at individual GPUs.
 * MS_INDEX_SCAN keeps no index and answers every query by scanning the GPUs,
 * for comparison; both give the same answers by construction.
 *
 * Ownership and mutation: the cluster owns its arrays. Policies get a const
 * pointer and must not mutate; only ms_cluster_apply() (plan.h) changes
 * instance state, and it keeps state, busy compute and index consistent.
 */
#ifndef MIGSCHED_CLUSTER_H
#define MIGSCHED_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/geometry.h"

#define MS_MAX_INST 16          /* instances (or time-slice slots) per GPU */

typedef enum ms_index_mode { MS_INDEX_BUCKET = 0, MS_INDEX_SCAN = 1 } ms_index_mode_t;
typedef enum ms_share_mode { MS_SHARE_MIG = 0, MS_SHARE_TIMESLICE = 1 } ms_share_mode_t;

/* One GPU instance (or time-slice slot). */
typedef struct ms_inst {
    int32_t job;     /* job index running here, -1 if idle */
    int8_t prof;     /* active profile index (of the GI, or of the job in a slot) */
    int8_t start;    /* first memory slice; -1 for a time-slice slot */
} ms_inst_t;

typedef struct ms_gpu {
    ms_state_t state;      /* placement state of the existing GIs */
    uint8_t busy;          /* compute slices of instances running a job */
    uint8_t ninst;
    ms_inst_t inst[MS_MAX_INST];
} ms_gpu_t;

typedef struct ms_index ms_index_t;

typedef struct ms_cluster {
    const ms_geom_t *geom;     /* borrowed; outlives the cluster */
    int ngpus;
    int gpus_per_node;         /* >= 1; node of GPU g is g / gpus_per_node */
    ms_share_mode_t share;
    int replicas;              /* time-slicing: jobs per GPU at most */
    ms_index_mode_t index_mode;
    ms_gpu_t *gpus;            /* [ngpus] */
    ms_index_t *index;         /* NULL in scan mode */
    uint64_t version;          /* changes with every op applied: a policy may
                                * keep an answer while it is the same */
    uint64_t freed;            /* changes with every op that may free room
                                * (STOP, DESTROY, MOVE): an answer that only
                                * more room could change stands while it is
                                * the same */
} ms_cluster_t;

typedef struct ms_cluster_cfg {
    const ms_geom_t *geom;
    int ngpus;
    int gpus_per_node;         /* 0 means ngpus (one node) */
    ms_share_mode_t share;
    int replicas;              /* time-slicing only, 1..MS_MAX_INST */
    ms_index_mode_t index_mode;
} ms_cluster_cfg_t;

/* OUT out: caller owns; free with ms_cluster_destroy(). */
ms_status_t ms_cluster_create(const ms_cluster_cfg_t *cfg, ms_cluster_t **out);
void ms_cluster_destroy(ms_cluster_t *c);   /* NULL-safe */

/* Lowest-numbered GPU in state s with number > after (-1 = from the start);
 * -1 if none. O(ngpus/4096) with the index, O(ngpus) when scanning. */
int ms_cluster_next_in_state(const ms_cluster_t *c, ms_state_t s, int after);
/* How many GPUs are in state s. */
int ms_cluster_count_in_state(const ms_cluster_t *c, ms_state_t s);
/* How many GPUs have room for profile k (a legal free start). O(1) with
 * the bucket index, O(GPUs) without. */
int ms_cluster_count_fit(const ms_cluster_t *c, int k);
/* The states some GPU is in, ascending and distinct, into out (room for
 * min(states of the geometry, GPUs)); their number. O(states) with the
 * bucket index, O(GPUs + states) without. */
int ms_cluster_states_in_use(const ms_cluster_t *c, ms_state_t *out);

/* Index of the instance at memory slice `start` on GPU g, or -1. */
int ms_gpu_find_inst(const ms_gpu_t *gpu, int start);
/* Index of the instance running job j on GPU g, or -1. */
int ms_gpu_find_job(const ms_gpu_t *gpu, int32_t job);
/* Number of instances on the GPU that run a job. */
int ms_gpu_running(const ms_gpu_t *gpu);

/* Debug check of every invariant (state matches instances, busy matches,
 * index matches); returns MS_OK or MS_ESTATE. Used by tests and asserts. */
ms_status_t ms_cluster_check(const ms_cluster_t *c);

/* Utilisation of a GPU as the seed defines it: busy compute / compute slices. */
static inline double ms_gpu_util(const ms_cluster_t *c, int g)
{
    return (double)c->gpus[g].busy / (double)ms_geom_compute(c->geom);
}

#endif
