/* policy_int.h - private: helpers shared by the policies in src/policy/.
 *
 * Nothing here is installed. Cross-file internal names use the `ms__`
 * prefix; everything else in a policy file is static.
 *
 * Conventions every policy follows:
 *   - a hook that answers MS_ENOFIT (or fails) leaves `out` exactly as it
 *     found it (ops appended so far are dropped);
 *   - ties are broken by lowest GPU, then lowest start, so both index modes
 *     and every run give the same plans.
 */
#ifndef MIGSCHED_POLICY_INT_H
#define MIGSCHED_POLICY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/policy.h"
#include "migsched/rank.h"

#define MS__MAX_LAYOUTS 64   /* per-GPU layouts in one static spec */

/* The profile facts (full-GPU profile, first start, covers) are core's:
 * ms_geom_full_profile, ms_geom_first_start, ms_geom_covers (geometry.h). */

/* --- layouts ----------------------------------------------------------- */

typedef struct ms__layout {
    int n;
    ms_gi_t gi[MS_MAX_INST];   /* sorted by start */
} ms__layout_t;

typedef struct ms__layouts {
    int n;
    ms__layout_t l[MS__MAX_LAYOUTS];
} ms__layouts_t;

/* Give starts to a multiset of profiles: largest first, each at its lowest
 * legal free start, backtracking to the next start only where the rest
 * would not fit (so the result is the greedy one whenever greedy works).
 * MS_ENOFIT if no arrangement exists. */
ms_status_t ms__layout_assign(const ms_geom_t *g, const int *profs, int n,
                              ms__layout_t *out);
/* Parse "4g+2g+1g" or "7g;4g+3g;..." (product or generic names, '+'
 * between instances, ';' between GPU layouts). diag names the layout. */
ms_status_t ms__layouts_parse(const ms_geom_t *g, const char *spec,
                              ms__layouts_t *out, ms_diag_t *diag);
/* The default static layouts for a geometry (see docs/policies.md). */
ms_status_t ms__layouts_default(const ms_geom_t *g, ms__layouts_t *out);
/* Ops that turn GPU gi's instances into layout l without touching running
 * jobs: DESTROY idle GIs that are not in l, CREATE l's missing GIs where
 * their slices are free. Appends nothing when the GPU already matches. */
ms_status_t ms__layout_restore(const ms_cluster_t *c, int gi, const ms__layout_t *l,
                               ms_plan_t *out);
/* True if the GPU holds exactly layout l (same profiles at same starts). */
bool ms__layout_matches(const ms_gpu_t *gpu, const ms__layout_t *l);

/* --- searches ---------------------------------------------------------- */

/* Key of running a job of profile k on idle instance `in` of GPU gi; lower
 * wins, UINT64_MAX excludes. */
typedef uint64_t (*ms__idle_key_fn)(void *ctx, const ms_cluster_t *c, int gi,
                                    const ms_inst_t *in, int k);
/* Minimum (key, gpu, start) over every idle instance that covers k; stops
 * early at the first key 0. O(GPUs x instances). MS_ENOFIT if none. */
ms_status_t ms__scan_idle(const ms_cluster_t *c, int k, ms__idle_key_fn fn, void *ctx,
                          int *gpu, int *start);
/* Key of the plain "smallest idle instance" rule: size above k. */
uint64_t ms__smallest_key(void *ctx, const ms_cluster_t *c, int gi, const ms_inst_t *in,
                          int k);

/* --- dynamic partitioning, shared by the ranked policies --------------- */
/* (ms__rankpol_* and the hooks below live in ranked.c) */

/* Can a dynamically partitioning policy ever host j on this cluster? */
bool ms__dyn_can_host(const ms_cluster_t *c, const ms_job_t *j);
/* DESTROY every idle GI on GPU gi (a dynamic policy keeps none). */
ms_status_t ms__destroy_idle(const ms_cluster_t *c, int gi, ms_plan_t *out);

/* A policy that is nothing but a rank per profile (first-fit, best-fit,
 * MFI, FGD): place = CREATE + START at ms_rank_find's answer. */
typedef struct ms__rankpol {
    const ms_geom_t *geom;
    int np;
    ms_rank_t rank[MS_MAX_PROFILES];
    ms_rank_key_fn key;
    void *keyctx;
} ms__rankpol_t;

ms_status_t ms__rankpol_build(ms__rankpol_t *rp, const ms_geom_t *g, ms_rank_key_fn fn,
                              void *ctx);
void ms__rankpol_fini(ms__rankpol_t *rp);
/* CREATE + START of j at the best ranked candidate (gangs go to
 * ms_policy_place_gang). */
ms_status_t ms__rankpol_place(const ms__rankpol_t *rp, const ms_cluster_t *c,
                              const ms_job_t *j, ms_plan_t *out);
/* CREATE + START of single-GPU job j at rank's best candidate (rank is
 * j->prof's); `out` unchanged unless MS_OK. */
ms_status_t ms__rank_place(const ms_rank_t *rank, const ms_cluster_t *c, const ms_job_t *j,
                           ms_plan_t *out);

/* Ops hooks of a policy whose self is a heap ms__rankpol_t (ranked.c): its
 * create calls ms__rankpol_create with its key; destroy and place are these. */
ms_status_t ms__rankpol_create(const ms_geom_t *g, ms_rank_key_fn fn, void *ctx, void **self);
void ms__rankpol_destroy(void *self);
ms_status_t ms__rankpol_place_hook(void *self, const ms_cluster_t *c, const ms_job_t *j,
                                   ms_plan_t *out);
/* can_host and on_finish hooks of a dynamic-GI policy: ms__dyn_can_host,
 * and DESTROY the GPU's idle GIs when a job leaves (self unused). */
bool ms__dyn_can_host_hook(void *self, const ms_cluster_t *c, const ms_job_t *j);
ms_status_t ms__dyn_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                              ms_plan_t *out);

/* --- re-laying one GPU (relayout.c) ----------------------------------- */

typedef struct ms__move {
    int32_t job;
    int8_t prof, from, to;
    int8_t bbm;              /* break-before-make */
} ms__move_t;

typedef struct ms__relayout {
    int gpu;
    int n;                           /* running instances */
    ms_inst_t inst[MS_MAX_INST];
    ms_state_t state;                /* GPU state without its idle GIs */
    /* result of ms__relayout_best */
    int nmoves;
    ms__move_t moves[MS_MAX_INST];   /* in the order they can be made */
    int extra_start;                 /* where the extra profile goes, -1 */
    double cost_after;
    ms_state_t state_after;
} ms__relayout_t;

/* Load GPU gi's running instances (its idle GIs count as destroyed). */
void ms__relayout_load(const ms_cluster_t *c, int gi, ms__relayout_t *r);
/* Best arrangement of r's instances plus `extra` (a profile, or -1) by
 * FragCost (cost[] per state), then fewest moves, with at most max_moves
 * moves that can be sequenced. False if none. */
bool ms__relayout_best(const ms_geom_t *g, const double *cost, ms__relayout_t *r,
                       int extra, int max_moves);
/* DESTROY the GPU's idle GIs, then the moves in order. */
ms_status_t ms__relayout_emit(const ms_cluster_t *c, const ms__relayout_t *r, ms_plan_t *out);

#endif
