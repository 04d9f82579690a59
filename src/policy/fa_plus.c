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
 * The ranks depend on the weights and are rebuilt, deterministically, at
 * the first placement after every 32nd arrival if the quantised mix changed.
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
#include "policy/policy_int.h"

#include <stdlib.h>
#include <string.h>

#define REBUILD_EVERY 32
#define WQ 64.0                  /* weights are quantised to 1/WQ for rebuilds */

typedef struct faplus {
    const ms_geom_t *geom;
    ms_policy_cfg_t cfg;
    int np, compute, ns;
    bool balance;
    double t;
    /* demand */
    int window;
    int8_t *ring;
    int head, filled;
    long arrivals;
    int count[MS_MAX_PROFILES];
    int built_q[MS_MAX_PROFILES];  /* quantised weights the ranks were built with */
    bool dirty;
    double mean_dur;               /* EWMA of recent durations */
    double w[MS_MAX_PROFILES];
    /* per state */
    uint8_t *feas;                 /* [ns * np] Feasible_p(s) */
    double cap[MS_MAX_STATES];     /* Cap(s) for w */
    double negcap[MS_MAX_STATES];  /* -Cap(s): the relayout cost (lower better) */
    ms_rank_t rank[MS_MAX_PROFILES];
    ms_rank_t pack[MS_MAX_PROFILES];   /* the cost alone, no classes: evictions */
    ms_rank_t tight[MS_MAX_PROFILES];  /* while jobs wait: an empty GPU is not Lazy */
    int building;                      /* 0 rank, 1 pack, 2 tight */
    long waiting;                      /* after the last scheduling pass */
} faplus_t;

static bool busy_class(const faplus_t *f, int busy)
{
    return f->balance && (double)busy / (double)f->compute >= f->t;
}

static uint64_t fp_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    const faplus_t *f = ctx;
    ms_state_t a = ms_state_place(g, s, k, st);
    int busy = ms_state_compute(g, s);
    double loss = f->cap[s] - f->cap[a];
    uint64_t lq;

    bool cls;

    if (loss < 0.0)
        loss = 0.0;
    lq = (uint64_t)(loss * 1e9 + 0.5);   /* loss <= 1: fits in 30 bits */
    if (f->building == 1)
        cls = false;                                   /* pack: the cost alone */
    else if (f->building == 2)
        cls = busy == 0 || busy_class(f, busy);        /* tight: empty is not Lazy */
    else
        cls = busy_class(f, busy);
    return ((uint64_t)cls << 62) | (lq << 8) | (uint64_t)busy;
}

static void weights(const faplus_t *f, double *w)
{
    int k, total = 0;

    for (k = 0; k < f->np; k++)
        total += f->count[k];
    for (k = 0; k < f->np; k++)
        w[k] = ((double)f->count[k] + 1.0) / ((double)total + (double)f->np);
}

static ms_status_t fp_build(faplus_t *f)
{
    int k, s;
    ms_status_t st;

    weights(f, f->w);
    for (s = 0; s < f->ns; s++) {
        double v = 0.0;
        for (k = 0; k < f->np; k++)
            v += f->w[k] * (double)f->feas[(size_t)s * (size_t)f->np + (size_t)k] *
                 (double)ms_geom_profile(f->geom, k)->cslices / (double)f->compute;
        f->cap[s] = v;
        f->negcap[s] = -v;
    }
    for (k = 0; k < f->np; k++)
        f->built_q[k] = (int)(f->w[k] * WQ + 0.5);
    f->dirty = false;
    for (k = 0; k < f->np; k++)
        if ((st = ms_rank_build(&f->rank[k], f->geom, k, fp_key, f)) != MS_OK)
            return st;
    f->building = 1;
    for (k = 0; k < f->np && st == MS_OK; k++)
        st = ms_rank_build(&f->pack[k], f->geom, k, fp_key, f);
    f->building = 2;
    for (k = 0; k < f->np && st == MS_OK; k++)
        st = ms_rank_build(&f->tight[k], f->geom, k, fp_key, f);
    f->building = 0;
    return st;
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
    f->t = cfg->lb_threshold;
    f->balance = cfg->balance && f->t > 0.0 && f->t < 1.0;
    f->window = cfg->demand_window > 0 ? cfg->demand_window : 256;
    f->ring = malloc((size_t)f->window * sizeof(*f->ring));
    f->feas = malloc((size_t)f->ns * (size_t)f->np);
    if (f->ring == NULL || f->feas == NULL) {
        fp_destroy(f);
        return MS_ENOMEM;
    }
    for (s = 0; s < f->ns; s++)
        for (k = 0; k < f->np; k++)
            f->feas[(size_t)s * (size_t)f->np + (size_t)k] =
                (uint8_t)ms_frag_feasible(g, (ms_state_t)s, k);
    if ((st = fp_build(f)) != MS_OK) {
        fp_destroy(f);
        return st;
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
        if ((int)(w[k] * WQ + 0.5) != f->built_q[k])
            f->dirty = true;
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
    int full = ms__full_profile(f->geom);
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
    ms_status_t st;

    if (j->gang > 1)
        return ms_policy_place_gang(c, j, out);
    if (j->prof < 0 || j->prof >= f->np)
        return MS_EINVAL;
    if (f->dirty && (st = fp_build(f)) != MS_OK)
        return st;
    return ms__rank_place(tight(f, c) ? &f->tight[j->prof] : &f->rank[j->prof], c, j, out);
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

/* --- make_room ------------------------------------------------------------ */

/* The best (cost, busy, gpu, start) for profile k over GPUs not in
 * ex[0..nex), by the cost alone: an evicted job goes where it destroys the
 * least capacity, not to a Lazy GPU first (with the classes evictions went
 * to empty GPUs, freeing one GPU by filling another; 100k jobs on 1,000
 * A100s at load 1.1: mean JCT 2376 s with the classes, 2343 s without). */
static bool find_except(const faplus_t *f, const ms_cluster_t *c, int k, const int *ex,
                        int nex, int *gpu, int *start)
{
    const ms_rank_t *r = &f->pack[k];
    int i, q, bg = -1, bs = -1;
    uint64_t key = 0;

    if ((size_t)c->ngpus * (size_t)r->width < (size_t)r->n) {
        /* Fewer (GPU, start) pairs than candidates: scan the GPUs for the
         * same minimum of (key, gpu, start) (ms_rank's scan and bucket
         * searches agree the same way). A full small cluster calls this
         * for every subset of every GPU's jobs in each make_room; walking
         * all the candidates made a restart that resubmits 100,000 queued
         * jobs take 40 s. */
        uint64_t best = UINT64_MAX;
        int g, st;

        for (g = 0; g < c->ngpus; g++) {
            ms_state_t s = c->gpus[g].state;
            uint16_t fit = ms_state_fit(c->geom, s, k);
            bool skip = false;

            for (q = 0; q < nex; q++)
                skip |= ex[q] == g;
            for (st = 0; !skip && fit != 0 && st < r->width; st++) {
                uint64_t kk;

                if (!((fit >> st) & 1u))
                    continue;
                kk = r->key_of[(size_t)s * (size_t)r->width + (size_t)st];
                if (kk < best) {   /* strict: a lower gpu/start already wins a tie */
                    best = kk;
                    bg = g;
                    bs = st;
                }
            }
        }
        *gpu = bg;
        *start = bs;
        return bg >= 0;
    }
    for (i = 0; i < r->n; i++) {
        const ms_rank_cand_t *cd = &r->cands[i];
        int g = -1;
        bool skip;

        if (bg >= 0 && cd->key != key)
            break;
        do {
            g = ms_cluster_next_in_state(c, cd->state, g);
            skip = false;
            for (q = 0; g >= 0 && q < nex; q++)
                skip |= ex[q] == g;
        } while (g >= 0 && skip);
        if (g < 0)
            continue;
        if (bg < 0 || g < bg || (g == bg && cd->start < bs)) {
            bg = g;
            bs = cd->start;
            key = cd->key;
        }
    }
    *gpu = bg;
    *start = bs;
    return bg >= 0;
}

typedef struct evict {
    int gpu, n;
    int idx[MS_MAX_INST];            /* instances of the source, in r.inst */
    int dst[MS_MAX_INST], dst_start[MS_MAX_INST];
    int moved_c;                     /* compute slices moved */
    double cost;                     /* estimated job-seconds lost */
} evict_t;

/* What moving one job onto GPU d costs, in job-seconds: its migration pause
 * and the interference it adds to d's running jobs for about half a mean
 * job (their expected residual run time). */
static double move_cost(const faplus_t *f, const ms_cluster_t *c, int d)
{
    return f->cfg.migrate_cost_s +
           f->cfg.interference_beta * (double)ms_gpu_running(&c->gpus[d]) * 0.5 * f->mean_dur;
}

/* Evict a subset of GPU h's running jobs so that k fits on h, each job to
 * its own least-loss destination elsewhere: the cheapest subset, then the
 * fewest jobs, then the least compute moved, then the first in bit order. */
static bool evict_plan(const faplus_t *f, const ms_cluster_t *c, int h, int k, int max_moves,
                       evict_t *best)
{
    const ms_geom_t *g = f->geom;
    ms__relayout_t r;
    unsigned sub, nsub;
    bool found = false;
    /* the state without subset sub's instances, from the subset without
     * its highest one: the same removals in the same (ascending) order as
     * removing them one by one, one removal per subset instead of n */
    ms_state_t left[1u << 12];
    int moved[1u << 12];

    ms__relayout_load(c, h, &r);
    if (r.n == 0 || r.n > 12)
        return false;
    nsub = 1u << r.n;
    left[0] = r.state;
    moved[0] = 0;
    for (sub = 1; sub < nsub; sub++) {
        int n = __builtin_popcount(sub), i, mc, ex[MS_MAX_INST + 1], nex = 1;
        int hi = 31 - __builtin_clz(sub);
        unsigned rest = sub & ~(1u << hi);
        ms_state_t s = left[rest];
        evict_t e;

        if (s != MS_STATE_NONE)
            s = ms_state_remove(g, s, r.inst[hi].prof, r.inst[hi].start);
        left[sub] = s;
        moved[sub] = mc = moved[rest] + ms_geom_profile(g, r.inst[hi].prof)->cslices;
        if (n > max_moves)
            continue;
        if (s == MS_STATE_NONE || ms_state_fit(g, s, k) == 0)
            continue;
        e.gpu = h;
        e.n = 0;
        e.moved_c = mc;
        e.cost = 0.0;
        ex[0] = h;
        for (i = 0; i < r.n; i++) {
            int dg, ds;
            if (!((sub >> i) & 1u))
                continue;
            if (!find_except(f, c, r.inst[i].prof, ex, nex, &dg, &ds))
                break;
            e.idx[e.n] = i;
            e.dst[e.n] = dg;
            e.dst_start[e.n] = ds;
            e.cost += move_cost(f, c, dg);
            e.n++;
            ex[nex++] = dg;
        }
        if (e.n != n)
            continue;
        if (!found || e.cost < best->cost - 1e-9 ||
            (e.cost < best->cost + 1e-9 &&
             (e.n < best->n || (e.n == best->n && e.moved_c < best->moved_c)))) {
            *best = e;
            found = true;
        }
    }
    return found;
}

static int cmp_state(const void *a, const void *b)
{
    ms_state_t x = *(const ms_state_t *)a, y = *(const ms_state_t *)b;

    return (x > y) - (x < y);
}

/* The states some GPU of c is in, ascending and distinct, into v: the
 * states, in order, in which a walk over every state of the geometry finds
 * a GPU; O(GPUs log GPUs) instead of O(states) when the cluster has fewer
 * GPUs than the geometry has states. */
static int used_states(const ms_cluster_t *c, ms_state_t *v)
{
    int g, n = 0, k = 0;

    for (g = 0; g < c->ngpus; g++)
        v[n++] = c->gpus[g].state;
    qsort(v, (size_t)n, sizeof(*v), cmp_state);
    for (g = 0; g < n; g++)
        if (k == 0 || v[g] != v[k - 1])
            v[k++] = v[g];
    return k;
}

static ms_status_t fp_make_room(void *self, const ms_cluster_t *c, const ms_job_t *j,
                                double now, ms_plan_t *out)
{
    faplus_t *f = self;
    ms__relayout_t *r, *intra;
    evict_t ev, best_ev;
    int s, n0 = out->n, i, u, nused = 0;
    ms_state_t *used = NULL;
    double saved = 0.5 * f->mean_dur, intra_cost = 0.0;
    ms_status_t st = MS_OK;
    bool have_ev = false, use_intra;

    if (!f->cfg.migration || f->cfg.max_moves <= 0 || j->gang > 1 || j->prof < 0 ||
        j->prof >= f->np)
        return MS_ENOFIT;
    /* A deep queue takes whatever capacity a move would hand j: the move
     * would only reorder (saturated-64xA100: +5.4% mean JCT with moves at
     * any depth, +0.2% with this gate; docs/zoo.md). Only while jobs may
     * still pass the head: past that (at once under FIFO, after the
     * backfill bound otherwise) the holes stay empty or go only to what
     * keeps the head's reservation, and the head has waited long (without
     * this the gate cost fa+ 16 points of mean JCT under FIFO and raised
     * its p99 wait by up to 31% under EASY). */
    if (f->waiting > f->cfg.room_queue_max && now - j->arrival < f->cfg.pass_bound_s)
        return MS_ENOFIT;
    if ((r = malloc(2 * sizeof(*r))) == NULL)
        return MS_ENOMEM;
    if (c->ngpus > 0 && c->ngpus < f->ns) {
        if ((used = malloc((size_t)c->ngpus * sizeof(*used))) == NULL) {
            free(r);
            return MS_ENOMEM;
        }
        nused = used_states(c, used);
    }
    intra = r + 1;
    intra->gpu = -1;
    memset(&best_ev, 0, sizeof(best_ev));
    for (u = 0; used != NULL ? u < nused : u < f->ns; u++) {
        int h;

        s = used != NULL ? (int)used[u] : u;
        if (ms_state_compute(f->geom, (ms_state_t)s) == 0 ||
            (h = ms_cluster_next_in_state(c, (ms_state_t)s, -1)) < 0)
            continue;
        if (ms_frag_ideal(f->geom, (ms_state_t)s, j->prof) > 0) {
            ms__relayout_load(c, h, r);
            if (ms__relayout_best(f->geom, f->negcap, r, j->prof, f->cfg.max_moves) &&
                (intra->gpu < 0 || r->nmoves < intra->nmoves ||
                 (r->nmoves == intra->nmoves && r->cost_after < intra->cost_after - 1e-12)))
                *intra = *r;
        }
        if (evict_plan(f, c, h, j->prof, f->cfg.max_moves, &ev) &&
            (!have_ev || ev.cost < best_ev.cost - 1e-9 ||
             (ev.cost < best_ev.cost + 1e-9 && ev.n < best_ev.n))) {
            best_ev = ev;
            have_ev = true;
        }
    }
    /* a move within a GPU adds no neighbour: it costs the pause alone */
    if (intra->gpu >= 0)
        intra_cost = intra->nmoves * f->cfg.migrate_cost_s;
    use_intra = intra->gpu >= 0 && (!have_ev || intra_cost <= best_ev.cost + 1e-9);
    if (use_intra && intra_cost < saved) {
        st = ms__relayout_emit(c, intra, out);
    } else if (!use_intra && have_ev && best_ev.cost < saved) {
        ms__relayout_load(c, best_ev.gpu, r);
        st = ms__destroy_idle(c, best_ev.gpu, out);
        for (i = 0; i < best_ev.n && st == MS_OK; i++) {
            const ms_inst_t *in = &r->inst[best_ev.idx[i]];
            st = ms_plan_add_move_mbb(out, in->job, best_ev.gpu, in->start, best_ev.dst[i],
                                  best_ev.dst_start[i], in->prof);
        }
    } else {
        st = MS_ENOFIT;
    }
    if (st != MS_OK)
        out->n = n0;
    free(used);
    free(r);
    return st;
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
    .on_finish = ms__dyn_on_finish,
    .make_room = fp_make_room,
    .on_idle = fp_on_idle,
};
