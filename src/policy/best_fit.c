/* best_fit.c - best-fit on dynamic GIs: the placement that leaves the least
 * free compute on the GPU (then the least free memory slices; then the
 * lowest GPU and start). Ranked by (state, start). */
#include "policy/policy_int.h"

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
    (void)cfg;
    return ms__rankpol_create(c->geom, bf_key, NULL, self);
}

const ms_policy_ops_t ms_policy_best_fit = {
    .abi = MS_POLICY_ABI,
    .name = "best-fit",
    .help = "dynamic GIs; least free compute left after placement",
    .share = MS_SHARE_MIG,
    .create = bf_create,
    .destroy = ms__rankpol_destroy,
    .can_host = ms__dyn_can_host_hook,
    .place = ms__rankpol_place_hook,
    .flags = MS_POLICY_PURE_PLACE | MS_POLICY_FIT_PLACE,
    .on_finish = ms__dyn_on_finish,
};
