/* frag.h - FragCost and the other per-state fragmentation scores.
 *
 * FragCost (algorithms.md §2), for a GPU in state s and the active profiles P:
 *   Ideal_p    = min(freeCompute / c_p, freeMem / m_p, max_p - count_p)
 *   Feasible_p = instances of p that fit at once in the free slices now
 *                (greedy over ascending legal starts; exact for MIG's
 *                aligned placements)
 *   FragCost   = mean over {p : Ideal_p > 0} of (Ideal_p - Feasible_p) / Ideal_p,
 *                0 if no profile has Ideal_p > 0. Range 0..1, higher is worse.
 * Options: weight each profile (e.g. by its share of recent demand, FGD's
 * idea) and average over all profiles instead of those with Ideal_p > 0.
 *
 * FragCost depends only on the state, so an ms_frag_table_t computes it once
 * per state; lookups are O(1).
 *
 * The module also holds the per-state scores of two baselines:
 *   MFI (Zambianco et al.): sum of m_p over the profiles the GPU could hold by
 *   capacity (Ideal_p > 0) but cannot place (Feasible_p == 0);
 *   FGD adapted to MIG: sum over p of w_p times the free compute slices that
 *   p cannot use (all of them if p does not fit, else those left over after
 *   packing p greedily).
 */
#ifndef MIGSCHED_FRAG_H
#define MIGSCHED_FRAG_H

#include <stdbool.h>

#include "migsched/geometry.h"

typedef struct ms_frag_opts {
    const double *weights;   /* per active profile, NULL = all 1 */
    bool all_profiles;       /* average over every profile, not only Ideal>0 */
} ms_frag_opts_t;

/* Ideal_p and Feasible_p of active profile k in state s. */
int ms_frag_ideal(const ms_geom_t *g, ms_state_t s, int k);
int ms_frag_feasible(const ms_geom_t *g, ms_state_t s, int k);

/* FragCost of state s; opts may be NULL for the defaults. */
double ms_frag_cost(const ms_geom_t *g, ms_state_t s, const ms_frag_opts_t *opts);

/* MFI's per-state count (memory-slice weighted). */
int ms_frag_mfi(const ms_geom_t *g, ms_state_t s);

/* FGD-on-MIG fragment of state s for demand weights w (NULL = uniform). */
double ms_frag_fgd(const ms_geom_t *g, ms_state_t s, const double *w);

/* Precomputed FragCost per state. */
typedef struct ms_frag_table {
    int nstates;
    double cost[MS_MAX_STATES];
} ms_frag_table_t;

void ms_frag_table_fill(const ms_geom_t *g, const ms_frag_opts_t *opts,
                        ms_frag_table_t *out);

#endif
