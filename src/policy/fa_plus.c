/* fa_plus.c - "fa+", this project's scheduler: the seeds' framework (fa.c)
 * with the blind spots the measurements of issue 11 found, fixed.
 *
 * Placement (dynamic GIs). The cost of a placement is the demand-weighted
 * capacity it destroys:
 *   Cap(s)  = sum over profiles p of w_p * Feasible_p(s) * c_p / compute
 *   loss    = Cap(before) - Cap(after)
 * (Cap is the compute, in GPUs, that the demand's profiles could still take
 * on the GPU, each profile counted on its own, FGD's idea on MIG's slots)
 * where w_p is p's share of the last demand_window arrivals, blended with a
 * uniform prior (one pseudo-arrival per profile), so a profile the demand
 * needs is never free to destroy. fa's FragCost averages only over profiles
 * that still have Ideal_p > 0: a 1g on an empty GPU costs nothing there
 * (the 7g drops out of the mean) and the least-used tie-break then spreads
 * small jobs over empty GPUs, so whole-GPU jobs wait. Here the same 1g
 * costs the GPU's 7g, 4g and 3g slots, weighted by how often they are
 * asked for, and goes next to the other small jobs.
 *   Rank key = (Busy?, loss, busy compute before), lower wins: the seed's
 * Lazy/Busy classes are kept (a Busy GPU is used only when no Lazy one can
 * take the job, which bounds interference), but within a class the least
 * loss wins and then the *least* used GPU, which spreads only jobs whose
 * loss is equal, i.e. where spreading costs the demand nothing. While
 * capacity is tight (jobs wait, or at most half the GPUs are empty; see
 * tight()) an empty GPU counts as Busy: it then competes on cost, which
 * keeps it for a job that needs it whole. Options as fa: --lb-threshold,
 * --no-balance; dynamic partitioning is always on.
 * The ranks depend on the weights: at every 32nd arrival, if the quantised
 * mix changed, the weights are taken and the ranks rebuilt before their
 * next use (until issue 25 both at the first placement after that arrival,
 * which in the simulator is the same moment: the arrival's own pass places
 * first). place() depends on nothing else but the cluster and whether jobs
 * wait: version() says when either changed, so a queue pass need not offer
 * a job that did not fit again before that or an op that frees capacity.
 *
 * Migration only where a move helps a waiting job (issue 11 item 4: fa's
 * on_finish compaction costs each moved job migrate_s and never shortened
 * execution or freed a GPU). So on_finish moves nothing; make_room(j), for
 * a job that fits nowhere, tries
 *   - intra-GPU: re-lay one GPU with room for j (relayout.c), and
 *   - inter-GPU: evict up to max_moves jobs from one GPU onto others (each
 *     to its own least-loss destination, one eviction per destination) so
 *     that j fits there: this frees a whole GPU for a 7g, or the slot a
 *     waiting job needs;
 * A plan costs job-seconds: migrate_cost_s per move (the moved job's
 * pause) plus, per eviction, interference_beta x (jobs on the destination)
 * x half the mean duration of recent arrivals (each new pair of
 * neighbours slows both jobs by beta for their overlap, about a quarter of
 * a mean job each way). The cheapest plan wins (intra first on ties) and
 * is made only if it costs less than the wait it saves, estimated as half
 * the mean duration of recent arrivals (the expected residual run time of
 * the job whose end j would otherwise wait for).
 */
#include "policy/fa_plus_int.h"

#include <stdlib.h>
#include <string.h>

#define REBUILD_EVERY 32
#define WQ 64.0                  /* weights are quantised to 1/WQ for rebuilds */

typedef ms__faplus_t faplus_t;

static bool busy_class(const faplus_t *f, int busy)
{
    return f->balance && (double)busy / (double)f->compute >= f->t;
}

/* The class and busy bits of the key of placing into state s in rank
 * `mode` (they depend on s alone: kept per state in f->hi). */
static uint64_t key_hi(const faplus_t *f, int mode, ms_state_t s)
{
    int busy = f->busy[s];
    bool cls;

    if (mode == 1)
        cls = false;                                   /* pack: the cost alone */
    else if (mode == 2)
        cls = busy == 0 || busy_class(f, busy);        /* tight: empty is not Lazy */
    else
        cls = busy_class(f, busy);
    return ((uint64_t)cls << 62) | (uint64_t)busy;
}

/* The key of placing into state s, leaving state a, with s's class and
 * busy bits hi: (class, loss, busy). */
static inline uint64_t key_of(const faplus_t *f, uint64_t hi, ms_state_t s, ms_state_t a)
{
    double loss = f->cap[s] - f->cap[a];
    uint64_t lq;

    if (loss < 0.0)
        loss = 0.0;
    lq = (uint64_t)(loss * 1e9 + 0.5);   /* loss <= 1: fits in 30 bits */
    return hi | (lq << 8);
}

static uint64_t fp_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    const faplus_t *f = ctx;

    return key_of(f, f->hi[(size_t)f->building * (size_t)f->ns + s], s, ms_state_place(g, s, k, st));
}

static void weights(const faplus_t *f, double *w)
{
    int k, total = 0;

    for (k = 0; k < f->np; k++)
        total += f->count[k];
    for (k = 0; k < f->np; k++)
        w[k] = ((double)f->count[k] + 1.0) / ((double)total + (double)f->np);
}

/* Take the weights of the current mix; the ranks follow before their next
 * use (ms__faplus_rank). */
static void fp_weigh(faplus_t *f)
{
    int k, s;

    double term[MS_MAX_PROFILES][MS_MAX_WIDTH + 1];
    int n, u;

    weights(f, f->w);
    /* each (profile, Feasible) term once, by the same expression as per
     * state, and each distinct Feasible vector's sum once, in the same
     * order, so the same sums: a profile look-up, two conversions and a
     * division per state and profile were 5% of a 200k-job simulate
     * (issue 25) */
    for (k = 0; k < f->np; k++) {
        double cs = (double)ms_geom_profile(f->geom, k)->cslices;

        for (n = 0; n <= f->width; n++)
            term[k][n] = f->w[k] * (double)n * cs / (double)f->compute;
    }
    for (u = 0; u < f->nfv; u++) {
        const uint8_t *fs = f->feas + (size_t)f->fv_state[u] * (size_t)f->np;
        double v = 0.0;

        for (k = 0; k < f->np; k++)
            v += term[k][fs[k]];
        f->fv_cap[u] = v;
    }
    for (s = 0; s < f->ns; s++) {
        f->cap[s] = f->fv_cap[f->fv_of[s]];
        f->negcap[s] = -f->cap[s];
    }
    for (k = 0; k < f->np; k++)
        f->built_q[k] = (int)(f->w[k] * WQ + 0.5);
    f->ver++;
}

/* Rank `mode` (0 rank, 1 pack, 2 tight) of profile k, brought to the
 * current weights when first used after they changed: a rank not used in
 * between is not rebuilt, and a rebuild re-sorts from the last order
 * (ms_rank_rekey). The ranks rebuilt before each use, in place of all
 * fifteen at once with a qsort each, were most of fa+'s cost over
 * best-fit's (issue 25). */
ms_status_t ms__faplus_rank(ms__faplus_t *f, int mode, int k, const ms_rank_t **out)
{
    ms_rank_t *all = mode == 0 ? f->rank : mode == 1 ? f->pack : f->tight;
    ms_status_t st = MS_OK;

    if (f->built[mode][k] != f->ver) {
        ms_rank_t *r = &all[k];

        if (!ms__faplus_rank_made(f, r)) {
            f->building = mode;
            st = ms_rank_build(r, f->geom, k, fp_key, f);
            f->building = 0;
            if (st != MS_OK)
                return st;
        } else {
            /* new keys for the same candidates (fa+ excludes none), from
             * the tables: no geometry call per candidate */
            const ms_state_t *aft = f->after + (size_t)k * (size_t)f->ns * (size_t)f->width;
            const uint64_t *hi = f->hi + (size_t)mode * (size_t)f->ns;
            uint64_t prev = 0;
            bool sorted = true;
            int i;

            /* the candidates are in (key, state, start) order of the last
             * keys: if the new keys keep it (a key never below the one
             * before, and the order of (state, start) within a key holds
             * by that order) the re-sort, which would move nothing, is
             * skipped */
            for (i = 0; i < r->n; i++) {
                ms_rank_cand_t *cd = &r->cands[i];
                size_t at = (size_t)cd->state * (size_t)f->width + (size_t)cd->start;
                uint64_t key = key_of(f, hi[cd->state], cd->state, aft[at]);

                sorted &= key > prev || i == 0 ||
                          (key == prev && (r->cands[i - 1].state < cd->state ||
                                           (r->cands[i - 1].state == cd->state &&
                                            r->cands[i - 1].start < cd->start)));
                cd->key = key;
                r->key_of[at] = key;
                prev = key;
            }
            if (!sorted)
                ms_rank_resort(r);
        }
        f->built[mode][k] = f->ver;
    }
    *out = &all[k];
    return MS_OK;
}

static void fp_destroy(void *self)
{
    faplus_t *f = self;
    int k;

    if (f == NULL)
        return;
    for (k = 0; k < MS_MAX_PROFILES; k++) {
        ms_rank_fini(&f->rank[k]);
        ms_rank_fini(&f->pack[k]);
        ms_rank_fini(&f->tight[k]);
    }
    free(f->ring);
    free(f->feas);
    free(f->fits);
    free(f->busy);
    free(f->fragp);
    free(f->after);
    free(f->fv_of);
    free(f->fv_state);
    free(f->fv_cap);
    free(f->hi);
    free(f);
}

static ms_status_t fp_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    faplus_t *f = calloc(1, sizeof(*f));
    const ms_geom_t *g = c->geom;
    ms_status_t st;
    int k, s;

    if (f == NULL)
        return MS_ENOMEM;
    f->geom = g;
    f->cfg = *cfg;
    f->np = ms_geom_nprofiles(g);
    f->ns = ms_geom_nstates(g);
    f->compute = ms_geom_compute(g);
    f->full = ms_geom_full_profile(g);
    f->t = cfg->lb_threshold;
    f->balance = cfg->balance && f->t > 0.0 && f->t < 1.0;
    f->window = cfg->demand_window > 0 ? cfg->demand_window : 256;
    f->ring = malloc((size_t)f->window * sizeof(*f->ring));
    f->feas = malloc((size_t)f->ns * (size_t)f->np);
    f->fits = calloc((size_t)f->ns, sizeof(*f->fits));
    f->busy = malloc((size_t)f->ns);
    f->fragp = calloc((size_t)f->ns, sizeof(*f->fragp));
    f->width = ms_geom_width(g);
    f->after = malloc((size_t)f->np * (size_t)f->ns * (size_t)f->width * sizeof(*f->after));
    f->fv_of = malloc((size_t)f->ns * sizeof(*f->fv_of));
    f->fv_state = malloc((size_t)f->ns * sizeof(*f->fv_state));
    f->fv_cap = malloc((size_t)f->ns * sizeof(*f->fv_cap));
    f->hi = malloc(3 * (size_t)f->ns * sizeof(*f->hi));
    f->none_prof = -1;
    if (f->ring == NULL || f->feas == NULL || f->fits == NULL || f->busy == NULL ||
        f->fragp == NULL || f->after == NULL || f->fv_of == NULL || f->fv_state == NULL ||
        f->fv_cap == NULL || f->hi == NULL) {
        fp_destroy(f);
        return MS_ENOMEM;
    }
    for (s = 0; s < f->ns; s++)
        for (k = 0; k < f->np; k++) {
            int w;

            if (ms_state_fit(g, (ms_state_t)s, k) != 0)
                f->fits[s] = (uint16_t)(f->fits[s] | 1u << k);
            if (ms_frag_ideal(g, (ms_state_t)s, k) > 0)
                f->fragp[s] = (uint16_t)(f->fragp[s] | 1u << k);
            for (w = 0; w < f->width; w++)
                f->after[((size_t)k * (size_t)f->ns + (size_t)s) * (size_t)f->width + (size_t)w] =
                    ms_state_place(g, (ms_state_t)s, k, w);
        }
    for (s = 0; s < f->ns; s++)
        f->busy[s] = (uint8_t)ms_state_compute(g, (ms_state_t)s);
    for (k = 0; k < f->np; k++) {
        f->starts[k] = ms_geom_profile(g, k)->start_mask;
        for (s = 0; s < f->width && s < MS_MAX_WIDTH; s++)
            f->pmask[k][s] = ms_geom_profile_mask(g, k, s);
    }
    for (k = 0; k < 3; k++)
        for (s = 0; s < f->ns; s++)
            f->hi[(size_t)k * (size_t)f->ns + (size_t)s] = key_hi(f, k, (ms_state_t)s);
    for (s = 0; s < f->ns; s++)
        for (k = 0; k < f->np; k++)
            f->feas[(size_t)s * (size_t)f->np + (size_t)k] =
                (uint8_t)ms_frag_feasible(g, (ms_state_t)s, k);
    /* the distinct Feasible vectors (fp_weigh sums each once) */
    for (s = 0; s < f->ns; s++) {
        int u;

        for (u = 0; u < f->nfv; u++)
            if (memcmp(f->feas + (size_t)f->fv_state[u] * (size_t)f->np,
                       f->feas + (size_t)s * (size_t)f->np, (size_t)f->np) == 0)
                break;
        if (u == f->nfv)
            f->fv_state[f->nfv++] = (uint16_t)s;
        f->fv_of[s] = (uint16_t)u;
    }
    fp_weigh(f);
    for (k = 0; k < f->np; k++) {
        const ms_rank_t *r;

        if ((st = ms__faplus_rank(f, 0, k, &r)) != MS_OK || (st = ms__faplus_rank(f, 1, k, &r)) != MS_OK ||
            (st = ms__faplus_rank(f, 2, k, &r)) != MS_OK) {
            fp_destroy(f);
            return st;
        }
    }
    *self = f;
    return MS_OK;
}

static void fp_on_arrival(void *self, const ms_job_t *j)
{
    faplus_t *f = self;
    double w[MS_MAX_PROFILES];
    int k;

    if (j->prof < 0 || j->prof >= f->np)
        return;
    if (f->filled == f->window)
        f->count[f->ring[f->head]]--;
    else
        f->filled++;
    f->ring[f->head] = j->prof;
    f->count[j->prof]++;
    f->head = (f->head + 1) % f->window;
    f->mean_dur = f->arrivals == 0 ? j->duration : 0.95 * f->mean_dur + 0.05 * j->duration;
    if (++f->arrivals % REBUILD_EVERY != 0)
        return;
    weights(f, w);
    for (k = 0; k < f->np; k++)
        if ((int)(w[k] * WQ + 0.5) != f->built_q[k]) {
            fp_weigh(f);
            return;
        }
}

static uint64_t fp_version(void *self)
{
    const faplus_t *f = self;

    return f->ver << 1 | (uint64_t)(f->waiting > 0);   /* tight() reads waiting > 0 */
}

/* Is capacity short? Jobs wait, or at most half of the GPUs (or the share
 * of full-GPU jobs in the demand, if larger) are empty. Then an empty GPU
 * is not Lazy: it is kept for the jobs that need it whole rather than
 * spread onto. (Spreading onto empty GPUs while nothing waits touched every
 * GPU of a saturated 1,000-GPU cluster and left none for 7g jobs: 100k
 * jobs at load 1.1, mean JCT 2343 s, fgd 2211 s; with this rule 2136 s.
 * At low load it costs the 256- and 1,024-GPU zoo workloads 2-5% of JCT
 * against fa, which spreads freely.) O(1) with the bucket index. */
static bool tight(const faplus_t *f, const ms_cluster_t *c)
{
    int full = f->full;
    double reserve;

    if (f->waiting > 0)
        return true;
    reserve = full >= 0 ? f->w[full] * (double)c->ngpus : 0.0;
    if (reserve < 0.5 * (double)c->ngpus)
        reserve = 0.5 * (double)c->ngpus;
    return (double)ms_cluster_count_in_state(c, ms_geom_empty_state()) <= reserve;
}

static ms_status_t fp_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    faplus_t *f = self;
    const ms_rank_t *r;
    ms_status_t st;

    if (j->gang > 1)
        return ms_policy_place_gang(c, j, out);
    if (j->prof < 0 || j->prof >= f->np)
        return MS_EINVAL;
    if ((st = ms__faplus_rank(f, tight(f, c) ? 2 : 0, j->prof, &r)) != MS_OK)
        return st;
    return ms__rank_place(r, c, j, out);
}

/* Remember the queue length after each scheduling pass (tight()). */
static ms_status_t fp_on_idle(void *self, const ms_cluster_t *c, const int *n_by_prof,
                              double now, ms_plan_t *out)
{
    faplus_t *f = self;
    int k;

    (void)now;
    (void)out;
    f->waiting = 0;
    for (k = 0; k < ms_geom_nprofiles(c->geom); k++)
        f->waiting += n_by_prof[k];
    return MS_OK;
}

const ms_policy_ops_t ms_policy_fa_plus = {
    .abi = MS_POLICY_ABI,
    .name = "fa+",
    .help = "fa with a demand-weighted capacity cost, packing within Lazy/Busy, "
            "migration only to start a waiting job",
    .share = MS_SHARE_MIG,
    .create = fp_create,
    .destroy = fp_destroy,
    .can_host = ms__dyn_can_host_hook,
    .on_arrival = fp_on_arrival,
    .place = fp_place,
    .flags = MS_POLICY_PURE_PLACE | MS_POLICY_FIT_PLACE | MS_POLICY_FIT_ANY,
    .version = fp_version,
    .on_finish = ms__dyn_on_finish,
    .make_room = ms__faplus_make_room,
    .on_idle = fp_on_idle,
};
