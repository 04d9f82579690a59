/* geometry.h - MIG hardware geometry as data, and the per-GPU state tables.
 *
 * A MIG GPU is an axis of memory slices (8 on A100/H100/H200/B200, 4 on the
 * A30, 12 on the RTX PRO 6000 Blackwell). A GPU instance (GI) of profile p
 * occupies msize(p) consecutive memory slices starting at one of p's legal
 * starts; two GIs never share a memory slice. The width of the axis is
 * derived from the table (largest start + msize), never assumed to be 8.
 *
 *   A100-40GB, memory slices 0..7:     0 1 2 3 4 5 6 7
 *     1g.5gb   starts 0..6, size 1     # . . . . . . .
 *     2g.10gb  starts 0,2,4, size 2    # # . . . . . .
 *     3g.20gb  starts 0,4,   size 4    . . . . # # # #
 *     4g.20gb  start  0,     size 4    # # # # . . . .
 *     7g.40gb  start  0,     size 8    # # # # # # # #
 *
 * A GPU's whole placement state is therefore the occupancy mask of its
 * memory slices, plus the number of busy compute slices (3g@0 and 4g@0 share
 * a mask but not their compute), plus a per-profile count for the rare
 * profiles whose max_count binds before geometry does (+me variants). An
 * ms_geom_t enumerates every state reachable from the empty GPU with the
 * chosen profile set and numbers them 0..nstates-1 (a small integer: 153
 * states for the A100's classic profiles), and every per-state question (where may p start, what does placing p at s
 * lead to, what is the FragCost) is a table lookup.
 *
 * Ownership: ms_model_t values are static, immutable and never freed. An
 * ms_geom_t is created by ms_geom_create() and owned by the caller; it is
 * immutable afterwards, so any number of clusters and threads may share it.
 */
#ifndef MIGSCHED_GEOMETRY_H
#define MIGSCHED_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/status.h"

#define MS_MAX_WIDTH     16   /* widest memory-slice axis supported */
#define MS_MAX_PROFILES  16   /* profiles per model */
#define MS_STATE_NONE    0xFFFFu
#define MS_MAX_STATES    4096 /* more than any real profile set reaches */

/* A state number. The classic profile set of every model reaches fewer than
 * 256 states (one byte would do; see `migsched geometry`); extended sets
 * (double-memory 1g, +me) reach a few hundred, hence 16 bits. */
typedef uint16_t ms_state_t;

/* Profile flags. */
enum {
    MS_PF_BASE   = 1u << 0, /* one of the classic profiles (default set) */
    MS_PF_ME     = 1u << 1, /* +me: media extensions, one per GPU */
    MS_PF_ALL_ME = 1u << 2, /* +me.all: excludes every profile but -me */
    MS_PF_NO_ME  = 1u << 3, /* -me: no media engines */
    MS_PF_GFX    = 1u << 4, /* +gfx: graphics APIs */
    MS_PF_DMEM   = 1u << 5  /* 1g with double memory (1g.10gb on A100-40GB) */
};

/* One GPU-instance profile of one model. */
typedef struct ms_profile {
    const char *name;      /* product name, e.g. "3g.20gb" */
    const char *generic;   /* generic name, e.g. "3g", "1g+me", "1g.2xmem" */
    uint8_t  gi_id;        /* NVML profile ID (info.id): create/placement calls */
    uint8_t  nvml_index;   /* NVML_GPU_INSTANCE_PROFILE_* enum index */
    uint8_t  cslices;      /* compute slices */
    uint8_t  msize;        /* memory slices occupied (= NVML placement size) */
    uint16_t start_mask;   /* bit i set: start i is legal */
    uint8_t  max_count;    /* most instances of this profile per GPU */
    uint8_t  flags;        /* MS_PF_* */
} ms_profile_t;

/* One MIG-capable GPU model. */
typedef struct ms_model {
    const char *name;          /* canonical name, e.g. "A100-40GB" */
    const char *aliases;       /* comma-separated other names, e.g. "A100" */
    uint16_t mem_gb;           /* total memory */
    uint8_t  mem_slice_gb;     /* memory per memory slice (rounded) */
    uint8_t  compute_slices;   /* 7 on the 8-slice family, 4 on A30/RTX */
    uint8_t  max_gis;          /* most GPU instances per GPU */
    uint8_t  nprofiles;
    const ms_profile_t *profiles;
} ms_model_t;

/* Every model migsched knows, in a fixed order; n receives the count. */
const ms_model_t *ms_models(int *n);
/* Look a model up by canonical name or alias (case-insensitive); NULL if none. */
const ms_model_t *ms_model_find(const char *name);
/* Width of the memory-slice axis: the largest start + msize over profiles. */
int ms_model_width(const ms_model_t *m);
/* Index of a profile by product ("3g.20gb") or generic ("3g") name,
 * case-insensitive; -1 if none. */
int ms_model_profile_find(const ms_model_t *m, const char *name);

/* The precomputed state machine of one model with one active profile set. */
typedef struct ms_geom ms_geom_t;

/* Build the tables for model m with the active profiles given as a bitmask
 * over m->profiles (bit i = profile i); 0 selects the MS_PF_BASE set.
 * Returns MS_ENOTSUP for profile sets whose rules are not modelled (+me.all)
 * and MS_ERANGE if the set reaches more than MS_MAX_STATES states.
 * OUT out: caller owns; free with ms_geom_destroy(). */
ms_status_t ms_geom_create(const ms_model_t *m, uint32_t profile_set,
                           ms_geom_t **out);
void ms_geom_destroy(ms_geom_t *g);   /* NULL-safe */

/* Parse a comma-separated profile list ("1g,2g,3g.20gb") into a profile set
 * for ms_geom_create(); "" or NULL gives 0 (the default set). */
ms_status_t ms_geom_parse_profile_set(const ms_model_t *m, const char *list,
                                      uint32_t *out, ms_diag_t *diag);

/* --- read-only accessors (all O(1)) ----------------------------------- */
const ms_model_t *ms_geom_model(const ms_geom_t *g);
int  ms_geom_width(const ms_geom_t *g);          /* memory-slice axis */
int  ms_geom_compute(const ms_geom_t *g);        /* compute slices per GPU */
int  ms_geom_nprofiles(const ms_geom_t *g);      /* active profiles */
int  ms_geom_nstates(const ms_geom_t *g);
/* Active profile k (0..nprofiles-1), ordered by ascending size. */
const ms_profile_t *ms_geom_profile(const ms_geom_t *g, int k);
/* Memory of active profile k in GB (from its product name: "2g.10gb" is 10). */
double ms_geom_profile_mem_gb(const ms_geom_t *g, int k);
/* The smallest active profile with >= mem_gb and >= cslices compute
 * slices, by memory then compute (never +me/+gfx); -1 if none (fit.c). */
int ms_geom_smallest_fit(const ms_geom_t *g, double mem_gb, int cslices);
/* Three facts of the fit rule that policies, the scheduler and the
 * importers share (fit.c):
 * the active profile that fills a whole GPU (all compute, all memory
 * slices), preferring a classic one; -1 if the set has none; */
int ms_geom_full_profile(const ms_geom_t *g);
/* the lowest legal start of active profile k; */
int ms_geom_first_start(const ms_geom_t *g, int k);
/* whether an instance of profile inst can run a job of profile job: at
 * least as many compute slices and memory slices. */
bool ms_geom_covers(const ms_geom_t *g, int inst, int job);
/* Active profile index by name (product or generic); -1 if none active. */
int  ms_geom_profile_find(const ms_geom_t *g, const char *name);
/* Occupancy of profile k at start s: ((1 << msize) - 1) << s. */
uint16_t ms_geom_profile_mask(const ms_geom_t *g, int k, int s);
/* The empty GPU's state (always 0). */
static inline ms_state_t ms_geom_empty_state(void) { return 0; }

uint16_t ms_state_mask(const ms_geom_t *g, ms_state_t s);    /* memory slices */
int      ms_state_compute(const ms_geom_t *g, ms_state_t s); /* busy compute */
/* Instances of profile k in state s if the state tracks k's count (profiles
 * whose max_count binds before geometry, e.g. +me), else -1. */
int      ms_state_count(const ms_geom_t *g, ms_state_t s, int k);
/* Legal starts of profile k that are free in state s (bit i = start i). */
uint16_t ms_state_fit(const ms_geom_t *g, ms_state_t s, int k);
/* Profiles with a free legal start in state s (bit k = profile k). */
uint16_t ms_state_fits(const ms_geom_t *g, ms_state_t s);
/* State after creating profile k at start st; MS_STATE_NONE if illegal. */
ms_state_t ms_state_place(const ms_geom_t *g, ms_state_t s, int k, int st);
/* State after destroying an instance of profile k at start st that the
 * caller knows exists; MS_STATE_NONE if inconsistent with s. */
ms_state_t ms_state_remove(const ms_geom_t *g, ms_state_t s, int k, int st);
/* Look up the state with this mask, compute and (if tracked) counts. Used by
 * code that rebuilds a state from an instance list. counts may be NULL when
 * no profile's count is tracked. */
ms_state_t ms_state_find(const ms_geom_t *g, uint16_t mask, int compute,
                         const uint8_t *counts);

/* A layout is a set of (profile, start) instances on one GPU. */
typedef struct ms_gi {
    int8_t prof;    /* active profile index */
    int8_t start;   /* first memory slice */
} ms_gi_t;

/* Enumeration facts (used by tests and `migsched geometry`). */
typedef struct ms_geom_counts {
    long placement_sets;   /* all valid sets of instances, empty included */
    long masks;            /* distinct occupancy masks among them */
    long maximal;          /* sets to which no instance can be added */
    long maximal_multisets;/* distinct profile multisets among maximal sets */
} ms_geom_counts_t;
void ms_geom_count(const ms_geom_t *g, ms_geom_counts_t *out);

/* Enumerate the maximal layouts in canonical order (ascending by the
 * (start, profile) sequence). fn is called once per layout with n instances
 * sorted by start; returning non-zero stops the walk. */
void ms_geom_each_maximal(const ms_geom_t *g,
                          int (*fn)(void *ctx, const ms_gi_t *gis, int n),
                          void *ctx);

/* True if the layout is valid: legal starts, disjoint, counts within max. */
bool ms_geom_layout_valid(const ms_geom_t *g, const ms_gi_t *gis, int n);

#endif
