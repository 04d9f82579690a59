/* fa_plus_int.h - private: fa+'s state, shared by fa_plus.c (demand
 * weights, ranks, placement) and fa_plus_room.c (make_room). Never
 * installed. */
#ifndef MIGSCHED_FA_PLUS_INT_H
#define MIGSCHED_FA_PLUS_INT_H

#include "policy/policy_int.h"

typedef struct ms__faplus {
    const ms_geom_t *geom;
    ms_policy_cfg_t cfg;
    int np, compute, ns;
    int full;                      /* the full-GPU profile, -1 none */
    bool balance;
    double t;
    /* demand */
    int window;
    int8_t *ring;
    int head, filled;
    long arrivals;
    int count[MS_MAX_PROFILES];
    int built_q[MS_MAX_PROFILES];  /* quantised weights the ranks were built with */
    uint64_t ver;                  /* weights taken */
    double mean_dur;               /* EWMA of recent durations */
    double w[MS_MAX_PROFILES];
    /* per state */
    uint8_t *feas;                 /* [ns * np] Feasible_p(s) */
    int nfv;                       /* distinct Feasible vectors (rows of feas) */
    uint16_t *fv_of;               /* [ns] state s's vector */
    uint16_t *fv_state;            /* [nfv] a state with that vector */
    double *fv_cap;                /* [nfv] its Cap for w */
    uint16_t *fits;                /* [ns] bit p: profile p fits state s */
    uint16_t *fragp;               /* [ns] bit p: p's slices free in s but cut (ideal > 0) */
    uint16_t pmask[MS_MAX_PROFILES][MS_MAX_WIDTH];   /* slices of profile p at each start */
    uint16_t starts[MS_MAX_PROFILES];                /* profile p's legal starts */
    uint8_t *busy;                 /* [ns] busy compute of state s */
    uint64_t *hi;                  /* [3 * ns] class and busy bits of s's key per rank mode */
    ms_state_t *after;             /* [np * ns * width] state s after k at st */
    int width;
    /* make_room found no plan at all (no move, whatever its cost) for
     * profile none_prof with the weights none_ver, and no op has freed
     * room since (the cluster's `freed` was none_freed): placements alone
     * only take room, so it is not searched again until one frees some
     * (issue 25: a blocked head is retried when an event could unblock it) */
    uint64_t none_freed, none_ver;
    int none_prof;
    uint64_t searches;             /* make_room searches made (the tests count them) */
    double cap[MS_MAX_STATES];     /* Cap(s) for w */
    double negcap[MS_MAX_STATES];  /* -Cap(s): the relayout cost (lower better) */
    ms_rank_t rank[MS_MAX_PROFILES];
    ms_rank_t pack[MS_MAX_PROFILES];   /* the cost alone, no classes: evictions */
    ms_rank_t tight[MS_MAX_PROFILES];  /* while jobs wait: an empty GPU is not Lazy */
    uint64_t built[3][MS_MAX_PROFILES];/* the weights (ver) each rank was built with */
    int building;                      /* 0 rank, 1 pack, 2 tight */
    long waiting;                      /* after the last scheduling pass */
} ms__faplus_t;

/* Has rank r its candidates for f's geometry? (Else ms__faplus_rank builds
 * it, which allocates; re-keying an existing one does not.) */
static inline bool ms__faplus_rank_made(const ms__faplus_t *f, const ms_rank_t *r)
{
    return r->cands != NULL && r->width == f->width;
}

/* Rank `mode` (0 rank, 1 pack, 2 tight) of profile k at the current
 * weights (rebuilt on first use after they changed). */
ms_status_t ms__faplus_rank(ms__faplus_t *f, int mode, int k, const ms_rank_t **out);
/* The make_room hook (fa_plus_room.c). */
ms_status_t ms__faplus_make_room(void *self, const ms_cluster_t *c, const ms_job_t *j, double now,
                                 ms_plan_t *out);

#endif
