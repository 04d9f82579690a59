/* first_fit.c - first-fit on dynamic GIs: the lowest GPU, then the lowest
 * legal free start. One rank per profile whose keys are all 0, so the
 * bucket search returns the lowest GPU in any state where the profile fits. */
#include "policy/policy_int.h"

#include <stdlib.h>

static uint64_t ff_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    (void)ctx; (void)g; (void)s; (void)k; (void)st;
    return 0;
}

static ms_status_t ff_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    ms__rankpol_t *rp = calloc(1, sizeof(*rp));
    ms_status_t st;

    (void)cfg;
    if (rp == NULL)
        return MS_ENOMEM;
    if ((st = ms__rankpol_build(rp, c->geom, ff_key, NULL)) != MS_OK) {
        ms__rankpol_fini(rp);
        free(rp);
        return st;
    }
    *self = rp;
    return MS_OK;
}

static void ff_destroy(void *self)
{
    if (self == NULL)
        return;
    ms__rankpol_fini(self);
    free(self);
}

static bool ff_can_host(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    (void)self;
    return ms__dyn_can_host(c, j);
}

static ms_status_t ff_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    return ms__rankpol_place(self, c, j, out);
}

static ms_status_t ff_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                ms_plan_t *out)
{
    (void)self; (void)now;
    return ms__destroy_idle(c, g, out);
}

const ms_policy_ops_t ms_policy_first_fit = {
    .abi = MS_POLICY_ABI,
    .name = "first-fit",
    .help = "dynamic GIs; lowest GPU, then lowest legal start",
    .share = MS_SHARE_MIG,
    .create = ff_create,
    .destroy = ff_destroy,
    .can_host = ff_can_host,
    .place = ff_place,
    .on_finish = ff_on_finish,
};
