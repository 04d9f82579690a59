/* ranked.c - the skeleton of a policy that is nothing but a rank per
 * profile on dynamic GIs (first-fit, best-fit, MFI, FGD): build/free the
 * ranks, place = CREATE + START at the rank's answer, and the ops hooks
 * those policies share. */
#include "policy/policy_int.h"

#include <stdlib.h>
#include <string.h>

ms_status_t ms__rankpol_build(ms__rankpol_t *rp, const ms_geom_t *g, ms_rank_key_fn fn,
                              void *ctx)
{
    ms_status_t st;
    int k;

    if (rp->geom == NULL) {
        memset(rp, 0, sizeof(*rp));
        rp->geom = g;
        rp->np = ms_geom_nprofiles(g);
    }
    rp->key = fn;
    rp->keyctx = ctx;
    for (k = 0; k < rp->np; k++)
        if ((st = ms_rank_build(&rp->rank[k], g, k, fn, ctx)) != MS_OK)
            return st;
    return MS_OK;
}

void ms__rankpol_fini(ms__rankpol_t *rp)
{
    int k;

    for (k = 0; k < MS_MAX_PROFILES; k++)
        ms_rank_fini(&rp->rank[k]);
}

ms_status_t ms__rank_place(const ms_rank_t *rank, const ms_cluster_t *c, const ms_job_t *j,
                           ms_plan_t *out)
{
    int n0 = out->n, g, s;
    ms_status_t st;

    if ((st = ms_rank_find(rank, c, &g, &s)) != MS_OK)
        return st;
    if ((st = ms_plan_add_create(out, g, j->prof, s)) == MS_OK)
        st = ms_plan_add_start(out, j->idx, g, s, j->prof);
    if (st != MS_OK)
        out->n = n0;
    return st;
}

ms_status_t ms__rankpol_place(const ms__rankpol_t *rp, const ms_cluster_t *c,
                              const ms_job_t *j, ms_plan_t *out)
{
    if (j->gang > 1)
        return ms_policy_place_gang(c, j, out);
    if (j->prof < 0 || j->prof >= rp->np)
        return MS_EINVAL;
    return ms__rank_place(&rp->rank[j->prof], c, j, out);
}

/* --- ops hooks of a plain ranked policy (self is an ms__rankpol_t) ------ */

ms_status_t ms__rankpol_create(const ms_geom_t *g, ms_rank_key_fn fn, void *ctx, void **self)
{
    ms__rankpol_t *rp = calloc(1, sizeof(*rp));
    ms_status_t st;

    if (rp == NULL)
        return MS_ENOMEM;
    if ((st = ms__rankpol_build(rp, g, fn, ctx)) != MS_OK) {
        ms__rankpol_fini(rp);
        free(rp);
        return st;
    }
    *self = rp;
    return MS_OK;
}

void ms__rankpol_destroy(void *self)
{
    if (self == NULL)
        return;
    ms__rankpol_fini(self);
    free(self);
}

ms_status_t ms__rankpol_place_hook(void *self, const ms_cluster_t *c, const ms_job_t *j,
                                   ms_plan_t *out)
{
    return ms__rankpol_place(self, c, j, out);
}

/* --- hooks of every dynamic-GI policy (self unused) --------------------- */

bool ms__dyn_can_host_hook(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    (void)self;
    return ms__dyn_can_host(c, j);
}

ms_status_t ms__dyn_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                              ms_plan_t *out)
{
    (void)self; (void)now;
    return ms__destroy_idle(c, g, out);
}
