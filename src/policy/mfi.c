/* mfi.c - MFI (Zambianco et al.) on dynamic GIs: the placement with the least
 * growth of ms_frag_mfi (memory-slice weighted count of profiles the GPU has
 * the capacity for but cannot place); ties: lowest GPU, lowest start. */
#include "policy/policy_int.h"

#include <stdlib.h>

static uint64_t mfi_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    int growth = ms_frag_mfi(g, ms_state_place(g, s, k, st)) - ms_frag_mfi(g, s);

    (void)ctx;
    return (uint64_t)((int64_t)growth + (1 << 20));
}

static ms_status_t mfi_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    ms__rankpol_t *rp = calloc(1, sizeof(*rp));
    ms_status_t st;

    (void)cfg;
    if (rp == NULL)
        return MS_ENOMEM;
    if ((st = ms__rankpol_build(rp, c->geom, mfi_key, NULL)) != MS_OK) {
        ms__rankpol_fini(rp);
        free(rp);
        return st;
    }
    *self = rp;
    return MS_OK;
}

static void mfi_destroy(void *self)
{
    if (self == NULL)
        return;
    ms__rankpol_fini(self);
    free(self);
}

static bool mfi_can_host(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    (void)self;
    return ms__dyn_can_host(c, j);
}

static ms_status_t mfi_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    return ms__rankpol_place(self, c, j, out);
}

static ms_status_t mfi_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                ms_plan_t *out)
{
    (void)self; (void)now;
    return ms__destroy_idle(c, g, out);
}

const ms_policy_ops_t ms_policy_mfi = {
    .abi = MS_POLICY_ABI,
    .name = "mfi",
    .help = "dynamic GIs; least growth of the MFI fragmentation count",
    .share = MS_SHARE_MIG,
    .create = mfi_create,
    .destroy = mfi_destroy,
    .can_host = mfi_can_host,
    .place = mfi_place,
    .on_finish = mfi_on_finish,
};
