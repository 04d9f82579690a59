/* victims.c - preemption by MIG geometry: which running instances of one
 * GPU to stop so that a blocked job's profile can be created there
 * (sched.h, ms_victims_gpu; docs/tenants.md).
 *
 * Freeing slices is not enough: the new instance needs a legal start whose
 * memory slices are all free, and the state after it must be one of the
 * geometry's (compute slices, per-profile counts). For each legal start of
 * the profile the instances overlapping it must go, and are enough unless
 * compute or a count (+me's one per GPU) still refuses that start; the
 * best start wins by (victims, lost work, start). Idle GIs are removed for
 * free and never counted as victims.
 *
 * Why the overlap at some start always suffices: where a count or compute
 * binds at a start, the instance that binds it (the other +me, ...) sits at
 * a start of its own whose overlap is no dearer. That is an argument, not
 * a proof for every geometry: tests/sched/test_victims.c compares the
 * answer with the cheapest of every subset of removable instances on
 * random GPUs of every model, default and extended profile sets (30,921
 * cases, equal costs; a version that also searched extra sets beyond the
 * overlap never found a cheaper one).
 */
#include <math.h>
#include <string.h>

#include "sched/sched_int.h"

typedef struct cost {
    int n;            /* running instances stopped */
    double lost;      /* their lost work */
} cost_t;

static bool cheaper(cost_t a, cost_t b)
{
    return a.n < b.n || (a.n == b.n && a.lost < b.lost);
}

/* State of gpu without the instances in rm (MS_STATE_NONE if inconsistent). */
static ms_state_t without(const ms_geom_t *g, const ms_gpu_t *gpu, uint32_t rm)
{
    ms_state_t st = gpu->state;
    int i;

    for (i = 0; i < gpu->ninst && st != MS_STATE_NONE; i++)
        if (rm >> i & 1u)
            st = ms_state_remove(g, st, gpu->inst[i].prof, gpu->inst[i].start);
    return st;
}

static cost_t cost_of(const ms_gpu_t *gpu, const ms_victim_cand_t *cand, uint32_t rm)
{
    cost_t c = { 0, 0.0 };
    int i;

    for (i = 0; i < gpu->ninst; i++)
        if ((rm >> i & 1u) && gpu->inst[i].job >= 0) {
            c.n++;
            c.lost += cand[i].lost_s;
        }
    return c;
}

ms_status_t ms_victims_gpu(const ms_geom_t *g, const ms_gpu_t *gpu, int k,
                           const ms_victim_cand_t *cand, ms_victims_t *out)
{
    const ms_profile_t *p;
    uint32_t removable = 0;
    bool found = false;
    cost_t best = { 0, 0.0 };
    int i, s, w;

    if (g == NULL || gpu == NULL || out == NULL || k < 0 || k >= ms_geom_nprofiles(g) ||
        gpu->ninst > MS_MAX_INST || (gpu->ninst > 0 && cand == NULL))
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    out->start = -1;
    p = ms_geom_profile(g, k);
    w = ms_geom_width(g);
    for (i = 0; i < gpu->ninst; i++) {
        if (gpu->inst[i].start < 0)
            return MS_EINVAL;   /* a time-slice slot: no geometry to free */
        if (gpu->inst[i].job < 0 || (cand[i].eligible && cand[i].lost_s >= 0.0 &&
                                     isfinite(cand[i].lost_s)))
            removable |= 1u << i;
    }
    for (s = 0; s < w; s++) {
        uint16_t m;
        uint32_t need = 0;
        ms_state_t st;
        cost_t c;

        if (!(p->start_mask >> s & 1u))
            continue;
        m = ms_geom_profile_mask(g, k, s);
        for (i = 0; i < gpu->ninst; i++)
            if (ms_geom_profile_mask(g, gpu->inst[i].prof, gpu->inst[i].start) & m)
                need |= 1u << i;
        if ((need & ~removable) != 0)
            continue;   /* a job that may not be stopped is in the way */
        st = without(g, gpu, need);
        if (st == MS_STATE_NONE)
            return MS_ESTATE;
        if (!(ms_state_fit(g, st, k) >> s & 1u))
            continue;   /* compute or a count binds here: another start */
        c = cost_of(gpu, cand, need);
        if (!found || cheaper(c, best)) {
            found = true;
            best = c;
            out->start = s;
            out->remove = need;
        }
    }
    if (!found)
        return MS_ENOFIT;
    out->nvictims = best.n;
    out->lost_s = best.lost;
    for (i = 0; i < gpu->ninst; i++)
        if ((out->remove >> i & 1u) && gpu->inst[i].job >= 0)
            out->victims |= 1u << i;
    return MS_OK;
}
