/* experiment_sweeps.c - the experiment's sweeps and what they recommend.
 *
 * On the sweeps' own seeds (nsw per load): fa over the load-balancing
 * threshold t at medium and high load; the interference beta over the
 * ablation's variants and first-fit at medium load; fa over the migration
 * cost at medium and high load, against fa-lb-dp (never migrates).
 */
#include <math.h>

#include "research/experiment_int.h"

#define F(field) MS__XP_F(field)

ms_status_t ms__xp_run_sweeps(ms_experiment_t *x, ms_diag_t *d)
{
    const ms__xp_opts_t *o = &x->o;
    const ms__xp_variant_t *fa = &ms__xp_variants[MS__XP_V_FA];
    const ms__xp_variant_t *lbdp = &ms__xp_variants[MS__XP_V_LBDP];
    const char *const *names = ms__xp_load_names;
    ms__xp_results_t *r = &x->r;
    size_t nsw = (size_t)r->nsw;
    int s, i, k;
    ms_status_t st = MS_OK;
    char what[160];

    /* the threshold sweep: fa at medium and high load */
    for (i = 0; i < r->nt && st == MS_OK; i++)
        for (k = 0; k < 2 && st == MS_OK; k++)
            for (s = 0; s < r->nsw && st == MS_OK; s++) {
                const ms_trace_t *tr = x->tr[MS__XP_L_MED + k][s];

                snprintf(what, sizeof(what), "t sweep: t=%.2f, %s load, seed %d", r->tval[i],
                         names[MS__XP_L_MED + k], s + 1);
                st = ms__xp_run_one(o, tr, fa, r->tval[i], -1.0, -1.0,
                                    &r->tsweep[((size_t)i * 2 + (size_t)k) * nsw + (size_t)s], d);
                ms__xp_progress(x, what);
            }

    /* the interference sweep at medium load */
    for (i = 0; i < r->nbeta && st == MS_OK; i++)
        for (k = 0; k < MS__XP_NBETAVAR && st == MS_OK; k++)
            for (s = 0; s < r->nsw && st == MS_OK; s++) {
                const ms__xp_variant_t *v = &ms__xp_variants[ms__xp_beta_vars[k]];
                size_t at = ((size_t)i * MS__XP_NBETAVAR + (size_t)k) * nsw + (size_t)s;

                snprintf(what, sizeof(what), "beta sweep: beta=%.2f, %s, seed %d",
                         ms__xp_betas[i], v->label, s + 1);
                st = ms__xp_run_one(o, x->tr[MS__XP_L_MED][s], v, -1.0, ms__xp_betas[i], -1.0,
                                    &r->bsweep[at], d);
                ms__xp_progress(x, what);
            }

    /* the migration-cost sweep: fa at medium and high load, against fa-lb-dp */
    for (k = 0; k < 2 && st == MS_OK; k++)
        for (s = 0; s < r->nsw && st == MS_OK; s++) {
            snprintf(what, sizeof(what), "migration sweep: no migration, %s load, seed %d",
                     names[MS__XP_L_MED + k], s + 1);
            st = ms__xp_run_one(o, x->tr[MS__XP_L_MED + k][s], lbdp, -1.0, -1.0, -1.0,
                                &r->nomig[(size_t)k * nsw + (size_t)s], d);
            ms__xp_progress(x, what);
        }
    for (i = 0; i < r->nmig && st == MS_OK; i++)
        for (k = 0; k < 2 && st == MS_OK; k++)
            for (s = 0; s < r->nsw && st == MS_OK; s++) {
                snprintf(what, sizeof(what), "migration sweep: %gs, %s load, seed %d",
                         ms__xp_migs[i], names[MS__XP_L_MED + k], s + 1);
                st = ms__xp_run_one(o, x->tr[MS__XP_L_MED + k][s], fa, -1.0, -1.0, ms__xp_migs[i],
                                    &r->msweep[((size_t)i * 2 + (size_t)k) * nsw + (size_t)s], d);
                ms__xp_progress(x, what);
            }
    return st;
}

/* t: the threshold with the least mean relative regret in makespan and mean
 * JCT over medium and high load. Migration: the largest swept cost at which
 * fa's mean JCT still beats fa without migration at both loads. */
void ms__xp_recommend(const ms__xp_results_t *r, ms__xp_reco_t *rc)
{
    int i, k, best = 0;

    for (i = 0; i < r->nt; i++)
        rc->t_score[i] = 0.0;
    for (k = 0; k < 2; k++) {
        double mk_min = INFINITY, jct_min = INFINITY;
        for (i = 0; i < r->nt; i++) {
            mk_min = fmin(mk_min, ms__xp_tsw(r, i, k, F(makespan_s)));
            jct_min = fmin(jct_min, ms__xp_tsw(r, i, k, F(mean_jct_s)));
        }
        for (i = 0; i < r->nt; i++)
            rc->t_score[i] += 0.25 * (ms__xp_tsw(r, i, k, F(makespan_s)) / mk_min - 1.0) +
                              0.25 * (ms__xp_tsw(r, i, k, F(mean_jct_s)) / jct_min - 1.0);
    }
    for (i = 1; i < r->nt; i++)
        if (rc->t_score[i] < rc->t_score[best] - 1e-12)
            best = i;
    rc->t_best = r->tval[best];
    rc->t_best_i = best;
    rc->t_seed_i = 0;
    for (i = 1; i < r->nt; i++)
        if (fabs(r->tval[i] - 0.4) < fabs(r->tval[rc->t_seed_i] - 0.4))
            rc->t_seed_i = i;

    /* the costs from 0 up to the first one at which migration stops paying */
    rc->mig_limit = NAN;
    rc->mig_all = true;
    for (i = 0; i < r->nmig && rc->mig_all; i++) {
        bool pays = true;
        for (k = 0; k < 2; k++)
            if (!(ms__xp_msw(r, i, k, F(mean_jct_s)) < ms__xp_nomig(r, k, F(mean_jct_s))))
                pays = false;
        if (pays)
            rc->mig_limit = ms__xp_migs[i];
        else
            rc->mig_all = false;
    }
}
