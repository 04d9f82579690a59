/* common.c - helpers shared by the policies: idle-instance search and
 * dynamic partitioning (the ranked-policy skeleton is in ranked.c; the
 * profile facts are core's, src/core/fit.c). */
#include "policy/policy_int.h"

ms_status_t ms__scan_idle(const ms_cluster_t *c, int k, ms__idle_key_fn fn, void *ctx,
                          int *gpu, int *start)
{
    uint64_t best = UINT64_MAX;
    int bg = -1, bs = -1, g, i;

    for (g = 0; g < c->ngpus && best != 0; g++) {
        const ms_gpu_t *gp = &c->gpus[g];
        for (i = 0; i < gp->ninst; i++) {
            const ms_inst_t *in = &gp->inst[i];
            uint64_t key;
            if (in->job >= 0 || in->start < 0 || !ms_geom_covers(c->geom, in->prof, k))
                continue;
            key = fn(ctx, c, g, in, k);
            if (key < best) {   /* strict: lower gpu/start win ties */
                best = key;
                bg = g;
                bs = in->start;
                if (key == 0)
                    break;
            }
        }
    }
    if (bg < 0)
        return MS_ENOFIT;
    *gpu = bg;
    *start = bs;
    return MS_OK;
}

uint64_t ms__smallest_key(void *ctx, const ms_cluster_t *c, int gi, const ms_inst_t *in,
                          int k)
{
    const ms_profile_t *a = ms_geom_profile(c->geom, in->prof);
    const ms_profile_t *b = ms_geom_profile(c->geom, k);

    (void)ctx;
    (void)gi;
    return ((uint64_t)(a->cslices - b->cslices) << 8) | (uint64_t)(a->msize - b->msize);
}

bool ms__dyn_can_host(const ms_cluster_t *c, const ms_job_t *j)
{
    int per = c->gpus_per_node > 0 ? c->gpus_per_node : c->ngpus;

    if (c->share != MS_SHARE_MIG || j->prof < 0 || j->prof >= ms_geom_nprofiles(c->geom))
        return false;
    if (j->gang <= 1)
        return true;
    return ms_geom_full_profile(c->geom) >= 0 && j->gang <= per && j->gang <= c->ngpus;
}

ms_status_t ms__destroy_idle(const ms_cluster_t *c, int gi, ms_plan_t *out)
{
    const ms_gpu_t *gp = &c->gpus[gi];
    ms_status_t st;
    int i;

    for (i = 0; i < gp->ninst; i++)
        if (gp->inst[i].job < 0 && gp->inst[i].start >= 0)
            if ((st = ms_plan_add_destroy(out, gi, gp->inst[i].start)) != MS_OK)
                return st;
    return MS_OK;
}
