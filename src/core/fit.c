/* fit.c - which profile of a model fits a request: the rule every face
 * uses (docs/sched.md), and the facts of it that policies, the scheduler
 * and the importers share (the full-GPU profile, a profile's first start,
 * whether one instance covers a job). Memory comes from the product name ("2g.10gb" is
 * 10 GB), which is what NVIDIA sells; the slice count times the memory per
 * slice stands in where a name has no size. */
#include "migsched/geometry.h"
#include "core/geom_int.h"

#include <string.h>

/* Read once per profile when a geometry is made (geometry.c keeps it:
 * the scheduler asks at every start and end). */
double ms__profile_mem_gb(const ms_model_t *m, const ms_profile_t *p)
{
    const char *dot = strchr(p->name, '.');
    double v = 0.0;

    if (dot != NULL)
        for (dot++; *dot >= '0' && *dot <= '9' && v < 1e6; dot++)
            v = v * 10.0 + (*dot - '0');
    if (v <= 0.0)
        v = (double)p->msize * m->mem_slice_gb;
    return v;
}

int ms_geom_smallest_fit(const ms_geom_t *g, double mem_gb, int cslices)
{
    int k, best = -1, np = ms_geom_nprofiles(g);
    double bm = 0.0;

    for (k = 0; k < np; k++) {
        const ms_profile_t *p = ms_geom_profile(g, k);
        double m = ms_geom_profile_mem_gb(g, k);

        if (p->cslices < cslices || m + 1e-9 < mem_gb)
            continue;
        if (p->flags & (MS_PF_ME | MS_PF_ALL_ME | MS_PF_GFX))
            continue;
        if (best < 0 || m < bm || (m == bm && p->cslices < ms_geom_profile(g, best)->cslices)) {
            best = k;
            bm = m;
        }
    }
    return best;
}

int ms_geom_full_profile(const ms_geom_t *g)
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

int ms_geom_first_start(const ms_geom_t *g, int k)
{
    uint16_t m = ms_geom_profile(g, k)->start_mask;
    int s;

    for (s = 0; s < ms_geom_width(g); s++)
        if ((m >> s) & 1u)
            return s;
    return -1;
}

bool ms_geom_covers(const ms_geom_t *g, int inst, int job)
{
    const ms_profile_t *a = ms_geom_profile(g, inst), *b = ms_geom_profile(g, job);

    return a->cslices >= b->cslices && a->msize >= b->msize;
}
