/* first_fit.c - first-fit on dynamic GIs: the lowest GPU, then the lowest
 * legal free start. One rank per profile whose keys are all 0, so the
 * bucket search returns the lowest GPU in any state where the profile fits. */
#include "policy/policy_int.h"

static uint64_t ff_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    (void)ctx; (void)g; (void)s; (void)k; (void)st;
    return 0;
}

static ms_status_t ff_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    (void)cfg;
    return ms__rankpol_create(c->geom, ff_key, NULL, self);
}

const ms_policy_ops_t ms_policy_first_fit = {
    .abi = MS_POLICY_ABI,
    .name = "first-fit",
    .help = "dynamic GIs; lowest GPU, then lowest legal start",
    .share = MS_SHARE_MIG,
    .create = ff_create,
    .destroy = ms__rankpol_destroy,
    .can_host = ms__dyn_can_host_hook,
    .place = ms__rankpol_place_hook,
    .flags = MS_POLICY_PURE_PLACE | MS_POLICY_FIT_PLACE,
    .on_finish = ms__dyn_on_finish,
};
