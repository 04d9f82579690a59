/* node_kinds.c - the seed's whole-node layout kinds (node_profile_int.h):
 * inference-peak, balanced and training, for node-profile and for
 * ms_policy_node_layout (`migsched k8s-config`). */
#include <string.h>

#include "policy/node_profile_int.h"
#include "policy/policy_int.h"

static int smallest_base(const ms_geom_t *g, int min_c)
{
    int k;

    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        const ms_profile_t *p = ms_geom_profile(g, k);
        if ((p->flags & MS_PF_BASE) && p->cslices >= min_c)
            return k;
    }
    return -1;
}

/* k as often as it fits, then the largest profile that fits, repeatedly. */
static ms_status_t fill_layout(const ms_geom_t *g, int k, bool fill, ms__layout_t *out)
{
    int profs[MS_MAX_INST], n = 0, q;
    ms_state_t s = ms_geom_empty_state();
    uint16_t fit;

    while (k >= 0 && n < MS_MAX_INST && (fit = ms_state_fit(g, s, k)) != 0) {
        int st = 0;
        while (!((fit >> st) & 1u))
            st++;
        s = ms_state_place(g, s, k, st);
        profs[n++] = k;
    }
    for (q = ms_geom_nprofiles(g) - 1; fill && q >= 0 && n < MS_MAX_INST;) {
        int st = 0;
        if (!(ms_geom_profile(g, q)->flags & MS_PF_BASE) || (fit = ms_state_fit(g, s, q)) == 0) {
            q--;
            continue;
        }
        while (!((fit >> st) & 1u))
            st++;
        s = ms_state_place(g, s, q, st);
        profs[n++] = q;
    }
    return n > 0 ? ms__layout_assign(g, profs, n, out) : MS_ENOTSUP;
}

ms_status_t ms__np_kind_layout(const ms_geom_t *g, int kind, ms__layout_t *out)
{
    int two;

    switch (kind) {
    case MS__NP_INF:
        return fill_layout(g, smallest_base(g, 1), false, out);
    case MS__NP_BAL:
        if ((two = ms_geom_profile_find(g, "2g")) < 0)
            two = smallest_base(g, 2);
        return fill_layout(g, two, true, out);
    case MS__NP_TRN:
        return fill_layout(g, ms_geom_full_profile(g), false, out);
    default:
        return MS_EINVAL;
    }
}

ms_status_t ms_policy_node_layout(const ms_geom_t *g, const char *kind, ms_gi_t *gis, int *n)
{
    ms__layout_t l;
    ms_status_t st;
    int k;

    if (g == NULL || kind == NULL || gis == NULL || n == NULL)
        return MS_EINVAL;
    if (strcmp(kind, "inference-peak") == 0)
        k = MS__NP_INF;
    else if (strcmp(kind, "balanced") == 0)
        k = MS__NP_BAL;
    else if (strcmp(kind, "training") == 0)
        k = MS__NP_TRN;
    else
        return MS_ENOENT;
    if ((st = ms__np_kind_layout(g, k, &l)) != MS_OK)
        return st;
    memcpy(gis, l.gi, (size_t)l.n * sizeof(gis[0]));
    *n = l.n;
    return MS_OK;
}
