/* mfi.c - MFI (Zambianco et al.) on dynamic GIs: the placement with the least
 * growth of ms_frag_mfi (memory-slice weighted count of profiles the GPU has
 * the capacity for but cannot place); ties: lowest GPU, lowest start. */
#include "policy/policy_int.h"

static uint64_t mfi_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    int growth = ms_frag_mfi(g, ms_state_place(g, s, k, st)) - ms_frag_mfi(g, s);

    (void)ctx;
    return (uint64_t)((int64_t)growth + (1 << 20));
}

static ms_status_t mfi_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    (void)cfg;
    return ms__rankpol_create(c->geom, mfi_key, NULL, self);
}

const ms_policy_ops_t ms_policy_mfi = {
    .abi = MS_POLICY_ABI,
    .name = "mfi",
    .help = "dynamic GIs; least growth of the MFI fragmentation count",
    .share = MS_SHARE_MIG,
    .create = mfi_create,
    .destroy = ms__rankpol_destroy,
    .can_host = ms__dyn_can_host_hook,
    .place = ms__rankpol_place_hook,
    .flags = MS_POLICY_PURE_PLACE | MS_POLICY_FIT_PLACE,
    .on_finish = ms__dyn_on_finish,
};
