/* common.c - helpers shared by the policies: profile facts, idle-instance
 * search and dynamic partitioning (the ranked-policy skeleton is in
 * ranked.c). */
#include "policy/policy_int.h"


int ms__full_profile(const ms_geom_t *g)
{
    int k, best = -1;

    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        const ms_profile_t *p = ms_geom_profile(g, k);
        if (p->cslices != ms_geom_compute(g) || p->msize != ms_geom_width(g))
            continue;
        if (best < 0 || ((p->flags & MS_PF_BASE) && !(ms_geom_profile(g, best)->flags & MS_PF_BASE)))
            best = k;
    }
    return best;
}

int ms__first_start(const ms_geom_t *g, int k)
{
    uint16_t m = ms_geom_profile(g, k)->start_mask;
    int s;

    for (s = 0; s < ms_geom_width(g); s++)
        if ((m >> s) & 1u)
            return s;
    return -1;
}

bool ms__covers(const ms_geom_t *g, int inst, int job)
{
    const ms_profile_t *a = ms_geom_profile(g, inst), *b = ms_geom_profile(g, job);

    return a->cslices >= b->cslices && a->msize >= b->msize;
}

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
            if (in->job >= 0 || in->start < 0 || !ms__covers(c->geom, in->prof, k))
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
    return ms__full_profile(c->geom) >= 0 && j->gang <= per && j->gang <= c->ngpus;
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
