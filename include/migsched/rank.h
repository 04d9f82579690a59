/* rank.h - placement by ranked (state, start) candidates.
 *
 * Most placement policies score a candidate placement by the GPU's state and
 * the start alone (FragCost after, best fit, MFI growth, Lazy before Busy,
 * ...). Such a policy builds, once per profile, the list of every (state,
 * start) pair where the profile fits, with a 64-bit key (lower is better),
 * sorted by key. Finding the best GPU in the cluster is then a walk down the
 * list that stops at the first key whose state bucket is non-empty: the
 * cost depends on the number of states (153 on an A100), not of GPUs.
 *
 * The winner is the minimum of (key, gpu, start) over every GPU and legal
 * free start; both index modes compute exactly that, so schedules match.
 */
#ifndef MIGSCHED_RANK_H
#define MIGSCHED_RANK_H

#include <stdint.h>

#include "migsched/cluster.h"

typedef struct ms_rank_cand {
    uint64_t key;
    ms_state_t state;
    int8_t start;
} ms_rank_cand_t;

/* Candidates of one profile, sorted by (key, state, start). */
typedef struct ms_rank {
    int prof;
    int n;
    ms_rank_cand_t *cands;
    uint64_t *key_of;        /* [nstates * width]: key per (state, start), UINT64_MAX if unfit */
    int width;
} ms_rank_t;

/* Key of placing profile k at start st on a GPU in state s. Return
 * UINT64_MAX to exclude the candidate. */
typedef uint64_t (*ms_rank_key_fn)(void *ctx, const ms_geom_t *g, ms_state_t s,
                                   int k, int st);

/* Build (or rebuild, reusing memory) the rank of profile k. */
ms_status_t ms_rank_build(ms_rank_t *r, const ms_geom_t *g, int k,
                          ms_rank_key_fn fn, void *ctx);
void ms_rank_fini(ms_rank_t *r);   /* frees arrays; NULL-safe */
/* Rebuild a built rank whose keys changed but whose candidates did not (fn
 * excludes the same (state, start) pairs as at the last build: a policy
 * whose keys are weights over the same fits). fn is called once per
 * candidate, not per pair, and the candidates are re-sorted from their last
 * order (O(n + the pairs that swapped)); the result is what ms_rank_build
 * gives. A candidate that fn now excludes falls back to ms_rank_build. */
ms_status_t ms_rank_rekey(ms_rank_t *r, const ms_geom_t *g, ms_rank_key_fn fn, void *ctx);
/* The sorting half of ms_rank_rekey, for a caller that wrote the new keys
 * itself (cands[i].key and key_of, for the same candidates): re-sort from
 * the last order. */
void ms_rank_resort(ms_rank_t *r);

/* What a GPU in state s offers the rank's profile: the lowest start of the
 * least key there (*key set to it), or -1 when no start fits. Inline: it
 * runs once per state or GPU in the searches of rank.c and fa+'s
 * make_room. */
static inline int ms_rank_state_best(const ms_rank_t *r, const ms_geom_t *g, ms_state_t s,
                                     uint64_t *key)
{
    const uint64_t *ko = r->key_of + (size_t)s * (size_t)r->width;
    uint16_t fit = ms_state_fit(g, s, r->prof);
    uint64_t best = UINT64_MAX;
    int st, bs = -1;

    for (st = 0; fit != 0 && st < r->width; st++)
        if (((fit >> st) & 1u) && ko[st] < best) {   /* strict: the lower start wins ties */
            best = ko[st];
            bs = st;
        }
    *key = best;
    return bs;
}

/* Best (gpu, start) for the rank's profile: MS_OK, or MS_ENOFIT. */
ms_status_t ms_rank_find(const ms_rank_t *r, const ms_cluster_t *c, int *gpu, int *start);

/* Convert a score in [-1e6, 1e6] to a key slice that orders like the score
 * (9 decimal places); used to compose keys from doubles. */
static inline uint64_t ms_rank_score_key(double v)
{
    double x = (v + 1e6) * 1e6;

    if (x < 0.0)
        x = 0.0;
    return (uint64_t)(x + 0.5);
}

#endif
