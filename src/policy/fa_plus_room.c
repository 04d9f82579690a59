/* fa_plus_room.c - fa+'s make_room (see fa_plus.c for the rule): for a
 * waiting job that fits nowhere, re-lay one GPU (intra) or evict up to
 * max_moves jobs from one GPU onto others, each to its own least-loss
 * destination (inter), and make the cheapest plan only if it costs less
 * than the wait it saves.
 */
#include "policy/fa_plus_int.h"

#include <stdlib.h>
#include <string.h>

typedef ms__faplus_t faplus_t;

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

/* The GPUs a job of profile k evicted by make_room would go to, best first
 * by the pack rank (find_except's order: (key, gpu, start) over every GPU
 * and legal start), one entry per GPU, at most DEST_MAX: find_except(k, ex)
 * is then the first entry not in ex. Built on first use in each make_room
 * call, walking the rank once, where find_except walked it for every subset
 * of every candidate GPU's jobs (most of fa+'s make_room, issue 25). */
#define DEST_MAX 16

typedef struct dest {
    int8_t built;
    int8_t complete;               /* every GPU with room for k is listed */
    int n;
    int gpu[DEST_MAX];
    int8_t start[DEST_MAX];
} dest_t;

static bool dest_has(const dest_t *d, int g)
{
    int i;

    for (i = 0; i < d->n; i++)
        if (d->gpu[i] == g)
            return true;
    return false;
}

/* By a scan: each GPU's best (key, start), the smallest want of them by
 * (key, gpu). */
static void dest_scan(const ms_rank_t *r, const ms_cluster_t *c, int k, int want, dest_t *d)
{
    uint64_t key[DEST_MAX];
    int g, i, over = 0;

    for (g = 0; g < c->ngpus; g++) {
        uint64_t best;
        int bs = ms_rank_state_best(r, c->geom, c->gpus[g].state, &best);

        if (bs < 0)
            continue;
        if (d->n == want && best >= key[want - 1]) {
            over = 1;
            continue;
        }
        over |= d->n == want;
        i = d->n < want ? d->n++ : want - 1;
        for (; i > 0 && key[i - 1] > best; i--) {   /* a lower GPU stays first on ties */
            key[i] = key[i - 1];
            d->gpu[i] = d->gpu[i - 1];
            d->start[i] = d->start[i - 1];
        }
        key[i] = best;
        d->gpu[i] = g;
        d->start[i] = (int8_t)bs;
    }
    d->complete = !over;
}

/* By the states in use (ascending, nused of them): each state's best
 * (key, start) for k, then its lowest GPUs while they can enter the list.
 * The same list as the walk of the rank below: the smallest want entries
 * by (key, gpu), a GPU at its best key and, among starts of that key, its
 * lowest; complete when it holds every GPU with room for k (a state's
 * GPUs left out share the key of those listed and follow them). In a
 * make_room a few states are in use where the walk met hundreds of
 * candidates, most of them states no GPU is in (it was 40% of fa+'s
 * make_room at load 1.2, issue 25). */
static void dest_used(const faplus_t *f, const ms_cluster_t *c, int k, int want,
                      const ms_state_t *used, int nused, dest_t *d)
{
    const ms_rank_t *r = &f->pack[k];
    uint64_t key[DEST_MAX];
    int u, i;

    for (u = 0; u < nused; u++) {
        ms_state_t s = used[u];
        uint64_t best;
        int bs = ms_rank_state_best(r, c->geom, s, &best), g = -1;

        if (bs < 0)
            continue;
        while ((g = ms_cluster_next_in_state(c, s, g)) >= 0) {
            if (d->n == want &&
                (best > key[want - 1] || (best == key[want - 1] && g > d->gpu[want - 1])))
                break;   /* neither this GPU nor the state's higher ones enter */
            i = d->n < want ? d->n++ : want - 1;
            for (; i > 0 && (key[i - 1] > best || (key[i - 1] == best && d->gpu[i - 1] > g)); i--) {
                key[i] = key[i - 1];
                d->gpu[i] = d->gpu[i - 1];
                d->start[i] = d->start[i - 1];
            }
            key[i] = best;
            d->gpu[i] = g;
            d->start[i] = (int8_t)bs;
        }
    }
    d->complete = d->n == ms_cluster_count_fit(c, k);
}

static void dest_build(const faplus_t *f, const ms_cluster_t *c, int k, int want,
                       const ms_state_t *used, int nused, dest_t *d)
{
    const ms_rank_t *r = &f->pack[k];
    int i = 0, j, q, m, total = ms_cluster_count_fit(c, k);
    bool cut = false;

    d->built = 1;
    d->n = 0;
    d->complete = 0;
    if (c->index == NULL || (size_t)c->ngpus * (size_t)r->width < (size_t)r->n) {
        dest_scan(r, c, k, want, d);
        return;
    }
    if (used != NULL && (size_t)nused * (size_t)r->width < (size_t)r->n) {
        dest_used(f, c, k, want, used, nused, d);
        return;
    }
    /* the walk stops once it has met every GPU with room (none, on a full
     * cluster: then at once) */
    while (i < r->n && d->n < want && d->n < total && !cut) {
        int tg[256], n = 0;
        int8_t ts[256];

        /* one key: every (state, start) of it, each state's lowest GPUs */
        for (j = i; j < r->n && r->cands[j].key == r->cands[i].key; j++) {
            int g = -1;

            for (q = 0; q < want && (g = ms_cluster_next_in_state(c, r->cands[j].state, g)) >= 0; q++) {
                if (n == (int)(sizeof(tg) / sizeof(tg[0]))) {
                    d->n = 0;   /* too many to list: find_except does the work */
                    return;
                }
                for (m = n; m > 0 && (tg[m - 1] > g || (tg[m - 1] == g && ts[m - 1] > r->cands[j].start)); m--) {
                    tg[m] = tg[m - 1];
                    ts[m] = ts[m - 1];
                }
                tg[m] = g;
                ts[m] = r->cands[j].start;
                n++;
            }
        }
        for (m = 0; m < n; m++) {
            if (dest_has(d, tg[m]))
                continue;   /* listed at a better key, or at a lower start */
            if (d->n == want) {
                cut = true;
                break;
            }
            d->gpu[d->n] = tg[m];
            d->start[d->n++] = ts[m];
        }
        i = j;
    }
    d->complete = (i >= r->n || d->n == total) && !cut;
}

/* One make_room's destination lists, and the states in use then. */
typedef struct room {
    dest_t dl[MS_MAX_PROFILES];
    const ms_state_t *used;
    int nused;
    int nfit[MS_MAX_PROFILES];       /* GPUs with room for each profile */
    uint16_t *used_fits;             /* [nused] the profiles each state has room for */
    int *used_count;                 /* [nused] its GPUs */
    bool ready;                      /* nfit counted, dl cleared, pack ranks made */
} room_t;

/* Before the first eviction is weighed in a make_room (most calls on a
 * saturated cluster weigh none): the GPUs with room per profile, the
 * destination lists unbuilt, and the pack ranks made (their first build
 * allocates, and may fail; new keys come on first use, in dest_find). */
static ms_status_t room_ready(faplus_t *f, room_t *rm)
{
    int i, u;

    for (i = 0; i < f->np; i++) {
        const ms_rank_t *pr;
        ms_status_t st;

        rm->nfit[i] = 0;
        rm->dl[i].built = 0;   /* dest_find sees only the policy's profiles */
        if (!ms__faplus_rank_made(f, &f->pack[i]) && (st = ms__faplus_rank(f, 1, i, &pr)) != MS_OK)
            return st;
    }
    for (u = 0; u < rm->nused; u++)
        for (i = 0; i < f->np; i++)
            rm->nfit[i] += (rm->used_fits[u] >> i & 1u) ? rm->used_count[u] : 0;
    rm->ready = true;
    return MS_OK;
}

/* GPUs other than h with room for some profile in mask. */
static int rooms_any(const faplus_t *f, const room_t *rm, ms_state_t hs, unsigned mask)
{
    int u, n = 0;

    for (u = 0; u < rm->nused; u++)
        if (rm->used_fits[u] & mask)
            n += rm->used_count[u];
    return n - ((f->fits[hs] & mask) != 0);
}

/* Can the jobs of subset sub of h's jobs r each have a GPU of their own
 * (find_except excludes the GPUs taken)? Only if there are as many GPUs
 * other than h with room for their profiles as jobs, for each profile
 * and for all of them together (Hall's condition for those two sets; a
 * subset that fails it has no destinations, and most subsets a saturated
 * cluster offers fail it: one GPU with room, a 7g head needing two or more
 * jobs moved). Skipping them before any destination list is built leaves
 * the plans as they were. */
static bool rooms_enough(const faplus_t *f, const room_t *rm, ms_state_t hs,
                         const ms__relayout_t *r, unsigned sub, int n)
{
    int want[MS_MAX_PROFILES] = { 0 }, i;
    unsigned mask = 0;

    for (i = 0; i < r->n; i++) {
        int p = r->inst[i].prof;

        if (!((sub >> i) & 1u))
            continue;
        mask |= 1u << p;
        if (++want[p] > rm->nfit[p] - (int)(f->fits[hs] >> p & 1u))
            return false;
    }
    return n <= rooms_any(f, rm, hs, mask);
}

/* find_except through the list of profile k's destinations. Profile k's
 * pack rank is brought to the current weights here, on first use in the
 * call: make_room built every rank whose keys it might read before
 * (rebuilding all of them each call, after new weights, was a fifth of
 * make_room with jobs waiting, issue 25); a rank that already exists is
 * re-keyed without allocating, so this cannot fail. */
static bool dest_find(faplus_t *f, const ms_cluster_t *c, room_t *rm, int k, const int *ex,
                      int nex, int *gpu, int *start)
{
    dest_t *d = &rm->dl[k];
    int i, q;

    if (!d->built) {
        const ms_rank_t *pr;

        (void)ms__faplus_rank(f, 1, k, &pr);
        dest_build(f, c, k, DEST_MAX, rm->used, rm->nused, d);
    }
    for (i = 0; i < d->n; i++) {
        bool skip = false;

        for (q = 0; q < nex; q++)
            skip |= ex[q] == d->gpu[i];
        if (!skip) {
            *gpu = d->gpu[i];
            *start = d->start[i];
            return true;
        }
    }
    if (d->complete)
        return false;
    return find_except(f, c, k, ex, nex, gpu, start);
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

/* The fewest of GPU h's jobs that any placement of k overlaps: a subset
 * with fewer makes no room for k on h (on a saturated cluster most GPUs
 * need more moves than there are GPUs with room, and are passed over
 * without loading their jobs). Counted from h's instances, idle ones
 * (removed for free) left out: a state number does not say how its slices
 * are cut into instances, so it is not kept per state. */
static int min_removals(const faplus_t *f, const ms_cluster_t *c, int h, int k)
{
    const ms_gpu_t *gp = &c->gpus[h];
    uint16_t m[MS_MAX_INST];
    unsigned sub;
    int best = MS_MAX_INST, i, n = 0;

    for (i = 0; i < gp->ninst; i++)
        if (gp->inst[i].start >= 0 && gp->inst[i].job >= 0)
            m[n++] = f->pmask[gp->inst[i].prof][gp->inst[i].start];
    for (sub = f->starts[k]; sub != 0 && best > 0; sub &= sub - 1) {
        uint16_t km = f->pmask[k][__builtin_ctz(sub)];
        int cnt = 0;

        for (i = 0; i < n; i++)
            cnt += (m[i] & km) != 0;
        if (cnt < best)
            best = cnt;
    }
    return best;
}

/* Subset sub (n jobs of r, mc compute slices) left GPU h in state s: if
 * k fits there and each job has a destination of its own, the plan as e;
 * kept in *best if it beats it (the cheapest, then the fewest jobs, then
 * the least compute moved; on a tie the first one walked). */
static void evict_subset(faplus_t *f, const ms_cluster_t *c, const ms__relayout_t *r, int k,
                         unsigned sub, int n, int mc, ms_state_t s, room_t *rm, evict_t *best,
                         bool *found)
{
    int i, ex[MS_MAX_INST + 1], nex = 1;
    evict_t e;

    if (s == MS_STATE_NONE || ms_state_fit(f->geom, s, k) == 0 ||
        !rooms_enough(f, rm, c->gpus[r->gpu].state, r, sub, n))
        return;
    e.gpu = r->gpu;
    e.n = 0;
    e.moved_c = mc;
    e.cost = 0.0;
    ex[0] = r->gpu;
    for (i = 0; i < r->n; i++) {
        int dg, ds;
        if (!((sub >> i) & 1u))
            continue;
        if (!dest_find(f, c, rm, r->inst[i].prof, ex, nex, &dg, &ds))
            return;
        e.idx[e.n] = i;
        e.dst[e.n] = dg;
        e.dst_start[e.n] = ds;
        e.cost += move_cost(f, c, dg);
        e.n++;
        ex[nex++] = dg;
    }
    if (!*found || e.cost < best->cost - 1e-9 ||
        (e.cost < best->cost + 1e-9 &&
         (e.n < best->n || (e.n == best->n && e.moved_c < best->moved_c)))) {
        *best = e;
        *found = true;
    }
}

/* Evict a subset of GPU h's running jobs so that k fits on h, each job to
 * its own least-loss destination elsewhere: the cheapest subset, then the
 * fewest jobs, then the least compute moved, then the first in bit order.
 * cap: the most jobs a subset may hold (max_moves, and no more than the
 * GPUs other than h with room). */
static bool evict_plan(faplus_t *f, const ms_cluster_t *c, int h, int k, int cap, room_t *rm,
                       evict_t *best)
{
    const ms_geom_t *g = f->geom;
    ms__relayout_t r;
    unsigned sub, movable = 0;
    uint16_t keep = 0, starts = ms_geom_profile(g, k)->start_mask;
    int i0;
    bool found = false;
    /* the state without subset sub's instances, from the subset without
     * its highest one: the same removals in the same (ascending) order as
     * removing them one by one, one removal per subset instead of n */
    ms_state_t left[1u << 12];
    int moved[1u << 12];
    uint8_t cnt[1u << 12];           /* jobs in the subset */

    ms__relayout_load(c, h, &r);
    if (r.n == 0 || r.n > 12)
        return false;
    /* only jobs that have somewhere to go (a GPU other than h with room for
     * them) can be in a subset that works: walk the subsets of those, in
     * the same ascending order (on a full cluster, none: O(1)) */
    for (i0 = 0; i0 < r.n; i0++) {
        int p = r.inst[i0].prof;

        if (rm->nfit[p] > (ms_state_fit(g, c->gpus[h].state, p) != 0))
            movable |= 1u << i0;
        else
            keep = (uint16_t)(keep | ms_geom_profile_mask(g, p, r.inst[i0].start));
    }
    /* the jobs that cannot move stay: if no legal start of k is clear of
     * them, no subset of the others makes room (on a 7g's behalf, any GPU
     * with one such job) */
    for (sub = starts; sub != 0; sub &= sub - 1)
        if ((ms_geom_profile_mask(g, k, __builtin_ctz(sub)) & keep) == 0)
            break;
    if (sub == 0)
        return false;
    if (cap == 1) {
        /* one job at most (a saturated cluster: one GPU with room): the
         * subsets of one, in the walk's order, without the walk over all */
        for (sub = movable; sub != 0; sub &= sub - 1) {
            int i = __builtin_ctz(sub);

            evict_subset(f, c, &r, k, 1u << i, 1, ms_geom_profile(g, r.inst[i].prof)->cslices,
                         ms_state_remove(g, r.state, r.inst[i].prof, r.inst[i].start), rm, best,
                         &found);
        }
        return found;
    }
    cnt[0] = 0;
    left[0] = r.state;
    moved[0] = 0;
    for (sub = (0u - movable) & movable; sub != 0; sub = (sub - movable) & movable) {
        int n = cnt[sub] = (uint8_t)(cnt[sub & (sub - 1)] + 1);
        int hi = 31 - __builtin_clz(sub);
        unsigned rest = sub & ~(1u << hi);
        ms_state_t s = left[rest];

        if (s != MS_STATE_NONE)
            s = ms_state_remove(g, s, r.inst[hi].prof, r.inst[hi].start);
        left[sub] = s;
        moved[sub] = moved[rest] + ms_geom_profile(g, r.inst[hi].prof)->cslices;
        if (n <= cap)
            evict_subset(f, c, &r, k, sub, n, moved[sub], s, rm, best, &found);
    }
    return found;
}

ms_status_t ms__faplus_make_room(void *self, const ms_cluster_t *c, const ms_job_t *j, double now,
                                 ms_plan_t *out)
{
    faplus_t *f = self;
    ms__relayout_t rl[2], *r = &rl[0], *intra = &rl[1];   /* a GPU's jobs; the best intra */
    evict_t ev, best_ev;
    room_t rm;
    int s, n0 = out->n, i, u, cap, nused = 0;
    ms_state_t used[MS_MAX_STATES];     /* the states in use: at most all of them */
    uint16_t used_fits[MS_MAX_STATES];
    int used_count[MS_MAX_STATES];
    double saved = 0.5 * f->mean_dur, intra_cost = 0.0;
    ms_status_t st = MS_OK;
    bool have_ev = false, use_intra, room = false;
    int nroom = 0;                      /* GPUs with room for some profile */

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
    if (f->none_prof == j->prof && f->none_freed == c->freed && f->none_ver == f->ver)
        return MS_ENOFIT;   /* nothing to find, as the last time */
    f->searches++;
    /* the states in use, ascending: as a walk over every state that skips
     * those no GPU is in; evictions need a GPU with room for some profile
     * (on a saturated cluster often none: then nothing more is counted) */
    nused = ms_cluster_states_in_use(c, used);
    for (u = 0; u < nused; u++) {
        used_fits[u] = (uint16_t)(f->fits[used[u]] & ((1u << f->np) - 1u));
        room |= used_fits[u] != 0;
    }
    for (u = 0; room && u < nused; u++) {
        used_count[u] = ms_cluster_count_in_state(c, used[u]);
        nroom += used_fits[u] != 0 ? used_count[u] : 0;
    }
    intra->gpu = -1;
    rm.used = used;
    rm.nused = nused;
    rm.used_fits = used_fits;
    rm.used_count = used_count;
    rm.ready = false;
    best_ev.gpu = -1;   /* the fields compared (the rest is read only once have_ev) */
    best_ev.n = 0;
    best_ev.cost = 0.0;
    for (u = 0; u < nused; u++) {
        int h;
        bool frag;

        s = (int)used[u];
        if (f->busy[s] == 0)   /* (an empty GPU has nothing to move) */
            continue;
        /* re-laid in place only if k's slices are free but cut */
        frag = (f->fragp[s] >> j->prof) & 1u;
        /* an eviction needs a GPU but h with room (before loading h's
         * jobs), and each job moved takes a GPU of its own: no more jobs
         * than GPUs other than h with room for any profile */
        cap = nroom - (used_fits[u] != 0);
        if (cap > f->cfg.max_moves)
            cap = f->cfg.max_moves;
        if ((!frag && cap <= 0) || (h = ms_cluster_next_in_state(c, (ms_state_t)s, -1)) < 0)
            continue;
        if (frag) {
            ms__relayout_load(c, h, r);
            if (ms__relayout_best(f->geom, f->negcap, r, j->prof, f->cfg.max_moves) &&
                (intra->gpu < 0 || r->nmoves < intra->nmoves ||
                 (r->nmoves == intra->nmoves && r->cost_after < intra->cost_after - 1e-12)))
                *intra = *r;
        }
        if (cap <= 0 || min_removals(f, c, h, j->prof) > cap)
            continue;
        if (!rm.ready && (st = room_ready(f, &rm)) != MS_OK)
            return st;
        if (evict_plan(f, c, h, j->prof, cap, &rm, &ev) &&
            (!have_ev || ev.cost < best_ev.cost - 1e-9 ||
             (ev.cost < best_ev.cost + 1e-9 && ev.n < best_ev.n))) {
            best_ev = ev;
            have_ev = true;
        }
    }
    if (intra->gpu < 0 && !have_ev) {
        f->none_prof = j->prof;
        f->none_freed = c->freed;
        f->none_ver = f->ver;
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
    return st;
}

