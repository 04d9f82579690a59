/* best_fit.c - best-fit on dynamic GIs: the placement that leaves the least
 * free compute on the GPU (then the least free memory slices; then the
 * lowest GPU and start). Ranked by (state, start). */
#include "policy/policy_int.h"

#include <stdlib.h>

static uint64_t bf_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    ms_state_t a = ms_state_place(g, s, k, st);
    unsigned mask = ms_state_mask(g, a);
    int free_c = ms_geom_compute(g) - ms_state_compute(g, a), free_m = ms_geom_width(g);

    (void)ctx;
    while (mask) {
        mask &= mask - 1u;
        free_m--;
    }
    return ((uint64_t)free_c << 8) | (uint64_t)free_m;
}

static ms_status_t bf_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    ms__rankpol_t *rp = calloc(1, sizeof(*rp));
    ms_status_t st;

    (void)cfg;
    if (rp == NULL)
        return MS_ENOMEM;
    if ((st = ms__rankpol_build(rp, c->geom, bf_key, NULL)) != MS_OK) {
        ms__rankpol_fini(rp);
        free(rp);
        return st;
    }
    *self = rp;
    return MS_OK;
}

static void bf_destroy(void *self)
{
    if (self == NULL)
        return;
    ms__rankpol_fini(self);
    free(self);
}

static bool bf_can_host(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    (void)self;
    return ms__dyn_can_host(c, j);
}

static ms_status_t bf_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    return ms__rankpol_place(self, c, j, out);
}

static ms_status_t bf_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                ms_plan_t *out)
{
    (void)self; (void)now;
    return ms__destroy_idle(c, g, out);
}

const ms_policy_ops_t ms_policy_best_fit = {
    .abi = MS_POLICY_ABI,
    .name = "best-fit",
    .help = "dynamic GIs; least free compute left after placement",
    .share = MS_SHARE_MIG,
    .create = bf_create,
    .destroy = bf_destroy,
    .can_host = bf_can_host,
    .place = bf_place,
    .on_finish = bf_on_finish,
};
