/* frag.c - FragCost, MFI and FGD scores per state. */
#include "migsched/frag.h"

#include "core/geom_int.h"

/* Instances of k in s where the state tracks the count; 0 otherwise, which
 * is exact for Ideal/Feasible because free compute binds first for every
 * profile whose max_count is not below its geometric maximum. */
static int tracked_count(const ms_geom_t *g, ms_state_t s, int k)
{
    int n = ms_state_count(g, s, k);

    return n < 0 ? 0 : n;
}

/* Tabled by ms_geom_create (geom_int.h):
 *   min(freeCompute / c_p, freeMem / m_p, max_p - count_p). */
int ms_frag_ideal(const ms_geom_t *g, ms_state_t s, int k)
{
    return ms__geom_ideal(g, s, k);
}

int ms_frag_feasible(const ms_geom_t *g, ms_state_t s, int k)
{
    const ms_profile_t *p = ms_geom_profile(g, k);
    unsigned mask = ms_state_mask(g, s);
    int free_c = ms_geom_compute(g) - ms_state_compute(g, s);
    int room = p->max_count - tracked_count(g, s, k);
    int n = 0, st;

    for (st = 0; st < ms_geom_width(g); st++) {
        unsigned pm = ms_geom_profile_mask(g, k, st);
        if (!((p->start_mask >> st) & 1u) || (mask & pm))
            continue;
        if (n >= room || free_c < p->cslices)
            break;
        mask |= pm;
        free_c -= p->cslices;
        n++;
    }
    return n;
}

double ms_frag_cost(const ms_geom_t *g, ms_state_t s, const ms_frag_opts_t *opts)
{
    double num = 0.0, den = 0.0;
    int k;

    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        int ideal = ms_frag_ideal(g, s, k);
        double w = (opts != NULL && opts->weights != NULL) ? opts->weights[k] : 1.0;

        if (ideal > 0) {
            num += w * (double)(ideal - ms_frag_feasible(g, s, k)) / (double)ideal;
            den += w;
        } else if (opts != NULL && opts->all_profiles) {
            den += w;
        }
    }
    return den > 0.0 ? num / den : 0.0;
}

int ms_frag_mfi(const ms_geom_t *g, ms_state_t s)
{
    int k, v = 0;

    for (k = 0; k < ms_geom_nprofiles(g); k++)
        if (ms_frag_ideal(g, s, k) > 0 && ms_frag_feasible(g, s, k) == 0)
            v += ms_geom_profile(g, k)->msize;
    return v;
}

double ms_frag_fgd(const ms_geom_t *g, ms_state_t s, const double *w)
{
    int free_c = ms_geom_compute(g) - ms_state_compute(g, s);
    double f = 0.0, wsum = 0.0;
    int k;

    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        double wk = w != NULL ? w[k] : 1.0;
        int feas = ms_frag_feasible(g, s, k);
        int unusable = feas == 0 ? free_c : free_c - feas * ms_geom_profile(g, k)->cslices;

        f += wk * (double)unusable;
        wsum += wk;
    }
    return wsum > 0.0 ? f / wsum : 0.0;
}

void ms_frag_table_fill(const ms_geom_t *g, const ms_frag_opts_t *opts,
                        ms_frag_table_t *out)
{
    int s;

    out->nstates = ms_geom_nstates(g);
    for (s = 0; s < out->nstates; s++)
        out->cost[s] = ms_frag_cost(g, (ms_state_t)s, opts);
}
