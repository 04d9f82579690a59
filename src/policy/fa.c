/* fa.c - the seeds' fragmentation-aware framework (Ting et al.), each
 * technique switchable (algorithms.md §4).
 *
 * Conditional load balancing: a GPU is Lazy when busy/compute < t. A job
 * goes to a Lazy GPU when one can take it, else to a Busy one; among the
 * candidates the placement leaving the least FragCost wins, then the least
 * utilised GPU, then the lowest index (then the lowest start). Balancing is
 * off when cfg->balance is false or t <= 0 or t >= 1; every GPU then counts
 * as one class.
 *
 * Dynamic partitioning (cfg->dynamic): a GI of exactly the job's profile is
 * created at start and destroyed at the end. Everything is one ms_rank_t per
 * profile with key (Busy?, FragCost after, busy compute before): a GPU's
 * state determines its busy compute because a dynamic policy keeps no idle
 * GIs. With dynamic off, GPUs keep the static layout (as `static`) and a job
 * takes the idle instance with key (Busy?, surplus size, busy compute),
 * found by a scan; migration needs dynamic GIs and is then off.
 *
 * Migration (cfg->migration), decided in on_finish for the GPU g a job left:
 *   - g still Busy (or balancing off): intra-GPU re-layout of g's remaining
 *     instances into the arrangement with the lowest FragCost, if that
 *     lowers it (relayout.c; make-before-break where the target slices are
 *     free, else break-before-make);
 *   - g became Lazy and no job waits: inter-GPU, repeatedly move the one job from a Busy GPU
 *     onto g that lowers FragCost(src)+FragCost(g)+util(src) the most,
 *     provided g stays no busier than the source, while g is Lazy, at most
 *     max_moves. The sources considered are, for every Busy state, the
 *     lowest-numbered GPU in that state (ms_cluster_next_in_state), plus the
 *     GPUs already changed by this plan: the cost depends on the number of
 *     states, not of GPUs. Inter-GPU moves only balance load (less
 *     interference); while jobs wait, capacity is what is short, and
 *     spreading jobs onto the GPU that just emptied would take away the room
 *     that large profiles need, so no inter-GPU move is made then (measured:
 *     moving regardless multiplied the mean wait by ten at load 0.9; see
 *     docs/policies.md). The queue length comes from on_idle, which the
 *     simulator calls after every scheduling pass.
 *   - make_room(j): over every state where j's profile has the capacity
 *     (Ideal > 0) but no legal start, the lowest GPU in that state is
 *     re-laid with room for j; the one needing the fewest moves (then the
 *     least FragCost, then the lowest state) wins.
 */
#include "policy/policy_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct fa {
    const ms_geom_t *geom;
    ms_policy_cfg_t cfg;
    int compute;
    bool balance;
    double t;
    ms_frag_table_t ft;
    ms_rank_t rank[MS_MAX_PROFILES];
    ms__layouts_t *lay;           /* static mode only */
    long waiting;                 /* jobs waiting after the last scheduling pass */
} fa_t;

static bool busy_class(const fa_t *f, int busy)
{
    return f->balance && (double)busy / (double)f->compute >= f->t;
}

static uint64_t fa_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    const fa_t *f = ctx;
    ms_state_t a = ms_state_place(g, s, k, st);
    int busy = ms_state_compute(g, s);
    uint64_t fc = (uint64_t)(f->ft.cost[a] * 1e9 + 0.5);

    return ((uint64_t)busy_class(f, busy) << 62) | (fc << 8) | (uint64_t)busy;
}

static void fa_destroy(void *self)
{
    fa_t *f = self;
    int k;

    if (f == NULL)
        return;
    for (k = 0; k < MS_MAX_PROFILES; k++)
        ms_rank_fini(&f->rank[k]);
    free(f->lay);
    free(f);
}

static ms_status_t fa_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    fa_t *f = calloc(1, sizeof(*f));
    ms_status_t st = MS_OK;
    int k;

    if (f == NULL)
        return MS_ENOMEM;
    f->geom = c->geom;
    f->cfg = *cfg;
    f->compute = ms_geom_compute(c->geom);
    f->t = cfg->lb_threshold;
    f->balance = cfg->balance && f->t > 0.0 && f->t < 1.0;
    ms_frag_table_fill(c->geom, &cfg->frag, &f->ft);
    if (cfg->dynamic) {
        for (k = 0; k < ms_geom_nprofiles(c->geom) && st == MS_OK; k++)
            st = ms_rank_build(&f->rank[k], c->geom, k, fa_key, f);
    } else if ((f->lay = malloc(sizeof(*f->lay))) == NULL) {
        st = MS_ENOMEM;
    } else {
        st = cfg->static_layout == NULL ? ms__layouts_default(c->geom, f->lay)
                                        : ms__layouts_parse(c->geom, cfg->static_layout, f->lay, NULL);
    }
    if (st != MS_OK) {
        fa_destroy(f);
        return st;
    }
    *self = f;
    return MS_OK;
}

/* --- static mode ------------------------------------------------------- */

static ms_status_t fa_setup(void *self, const ms_cluster_t *c, ms_plan_t *out)
{
    const fa_t *f = self;
    int g, n0 = out->n;
    ms_status_t st;

    if (f->lay == NULL)
        return MS_OK;
    for (g = 0; g < c->ngpus; g++)
        if ((st = ms__layout_restore(c, g, &f->lay->l[g % f->lay->n], out)) != MS_OK) {
            out->n = n0;
            return st;
        }
    return MS_OK;
}

static uint64_t static_key(void *ctx, const ms_cluster_t *c, int gi, const ms_inst_t *in, int k)
{
    const fa_t *f = ctx;
    int busy = c->gpus[gi].busy;

    return ((uint64_t)busy_class(f, busy) << 48) |
           (ms__smallest_key(NULL, c, gi, in, k) << 16) | (uint64_t)busy;
}

static bool fa_can_host(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    const fa_t *f = self;
    int i, q, used;

    if (!ms__dyn_can_host(c, j))
        return false;
    if (f->lay == NULL || j->gang > 1)
        return true;
    used = c->ngpus < f->lay->n ? c->ngpus : f->lay->n;
    for (i = 0; i < used; i++)
        for (q = 0; q < f->lay->l[i].n; q++)
            if (ms_geom_covers(c->geom, f->lay->l[i].gi[q].prof, j->prof))
                return true;
    return false;
}

/* --- placement --------------------------------------------------------- */

static ms_status_t fa_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    fa_t *f = self;
    int g, s;
    ms_status_t st;

    if (j->gang > 1)
        return ms_policy_place_gang(c, j, out);
    if (j->prof < 0 || j->prof >= ms_geom_nprofiles(c->geom))
        return MS_EINVAL;
    if (f->lay != NULL) {
        if ((st = ms__scan_idle(c, j->prof, static_key, f, &g, &s)) != MS_OK)
            return st;
        return ms_plan_add_start(out, j->idx, g, s, c->gpus[g].inst[ms_gpu_find_inst(&c->gpus[g], s)].prof);
    }
    return ms__rank_place(&f->rank[j->prof], c, j, out);
}

/* --- inter-GPU migration ------------------------------------------------ */

/* A GPU as this plan has changed it. */
typedef struct vgpu {
    int gpu;
    ms_state_t state;
    int busy;
    int n;
    ms_inst_t inst[MS_MAX_INST];
} vgpu_t;

typedef struct overlay {
    int n;
    vgpu_t v[MS_MAX_INST * 2 + 2];
} overlay_t;

static vgpu_t *ov_find(overlay_t *o, int gpu)
{
    int i;

    for (i = 0; i < o->n; i++)
        if (o->v[i].gpu == gpu)
            return &o->v[i];
    return NULL;
}

static vgpu_t *ov_get(overlay_t *o, const ms_cluster_t *c, int gpu)
{
    vgpu_t *v = ov_find(o, gpu);
    ms__relayout_t r;

    if (v != NULL || o->n == (int)(sizeof(o->v) / sizeof(o->v[0])))
        return v;
    v = &o->v[o->n++];
    ms__relayout_load(c, gpu, &r);
    v->gpu = gpu;
    v->state = r.state;
    v->n = r.n;
    memcpy(v->inst, r.inst, sizeof(r.inst));
    v->busy = c->gpus[gpu].busy;
    return v;
}

typedef struct cand {
    double delta;
    int src, idx, st;
} cand_t;

/* Best job to move from source v onto the target dst. */
static void consider(const fa_t *f, const vgpu_t *src, const vgpu_t *dst, cand_t *best)
{
    const ms_geom_t *g = f->geom;
    const double *cost = f->ft.cost;
    int i, st;

    for (i = 0; i < src->n; i++) {
        int k = src->inst[i].prof, cs = ms_geom_profile(g, k)->cslices, bst = -1;
        uint16_t fit = ms_state_fit(g, dst->state, k);
        ms_state_t hs = ms_state_remove(g, src->state, k, src->inst[i].start), ds = MS_STATE_NONE;
        double before, after, delta;

        if (fit == 0 || hs == MS_STATE_NONE)
            continue;
        for (st = 0; st < ms_geom_width(g); st++) {
            ms_state_t a;
            if (!((fit >> st) & 1u))
                continue;
            a = ms_state_place(g, dst->state, k, st);
            if (a != MS_STATE_NONE && (bst < 0 || cost[a] < cost[ds] - 1e-12)) {
                bst = st;
                ds = a;
            }
        }
        if (bst < 0 || dst->busy + cs > src->busy - cs)
            continue;   /* would leave the target busier than the source */
        before = cost[src->state] + cost[dst->state] + (double)src->busy / f->compute;
        after = cost[hs] + cost[ds] + (double)(src->busy - cs) / f->compute;
        delta = after - before;
        if (delta > -1e-9)
            continue;
        if (best->src < 0 || delta < best->delta - 1e-12 ||
            (delta < best->delta + 1e-12 && src->gpu < best->src)) {
            best->delta = delta;
            best->src = src->gpu;
            best->idx = i;
            best->st = bst;
        }
    }
}

static ms_status_t inter(fa_t *f, const ms_cluster_t *c, int g, ms_plan_t *out)
{
    overlay_t *o = malloc(sizeof(*o));
    vgpu_t *dst;
    ms_status_t st = MS_OK;
    int moves, s, i;

    if (o == NULL)
        return MS_ENOMEM;
    o->n = 0;
    dst = ov_get(o, c, g);
    for (moves = 0; moves < f->cfg.max_moves && busy_class(f, dst->busy) == 0; moves++) {
        cand_t best = {0.0, -1, -1, -1};
        vgpu_t *src;
        ms_inst_t in;

        /* representatives: the lowest GPU of every Busy state not yet touched */
        for (s = 0; s < ms_geom_nstates(f->geom); s++) {
            int h = -1;
            vgpu_t tmp;
            ms__relayout_t r;
            if (!busy_class(f, ms_state_compute(f->geom, (ms_state_t)s)))
                continue;
            while ((h = ms_cluster_next_in_state(c, (ms_state_t)s, h)) >= 0 && ov_find(o, h) != NULL)
                ;
            if (h < 0 || ms_gpu_running(&c->gpus[h]) == 0)
                continue;
            ms__relayout_load(c, h, &r);
            tmp.gpu = h;
            tmp.state = r.state;
            tmp.busy = c->gpus[h].busy;
            tmp.n = r.n;
            memcpy(tmp.inst, r.inst, sizeof(r.inst));
            if (busy_class(f, tmp.busy))
                consider(f, &tmp, dst, &best);
        }
        for (i = 0; i < o->n; i++)
            if (o->v[i].gpu != g && busy_class(f, o->v[i].busy))
                consider(f, &o->v[i], dst, &best);
        if (best.src < 0 || (src = ov_get(o, c, best.src)) == NULL)
            break;
        dst = ov_find(o, g);
        in = src->inst[best.idx];
        st = ms_plan_add_move_mbb(out, in.job, src->gpu, in.start, g, best.st, in.prof);
        if (st != MS_OK)
            break;
        src->state = ms_state_remove(f->geom, src->state, in.prof, in.start);
        src->busy -= ms_geom_profile(f->geom, in.prof)->cslices;
        memmove(&src->inst[best.idx], &src->inst[best.idx + 1],
                (size_t)(src->n - best.idx - 1) * sizeof(src->inst[0]));
        src->n--;
        dst->state = ms_state_place(f->geom, dst->state, in.prof, best.st);
        dst->busy += ms_geom_profile(f->geom, in.prof)->cslices;
        in.start = (int8_t)best.st;
        dst->inst[dst->n++] = in;
    }
    free(o);
    return st;
}

/* --- hooks ---------------------------------------------------------------- */

static ms_status_t fa_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                ms_plan_t *out)
{
    fa_t *f = self;
    ms__relayout_t r;
    int n0 = out->n;
    ms_status_t st;

    (void)now;
    if (f->lay != NULL) {
        st = ms__layout_restore(c, g, &f->lay->l[g % f->lay->n], out);
        if (st != MS_OK)
            out->n = n0;
        return st;
    }
    if ((st = ms__destroy_idle(c, g, out)) != MS_OK || !f->cfg.migration || f->cfg.max_moves <= 0)
        goto done;
    if (!f->balance || busy_class(f, c->gpus[g].busy)) {
        ms__relayout_load(c, g, &r);
        if (r.n > 0 && ms__relayout_best(f->geom, f->ft.cost, &r, -1, f->cfg.max_moves) &&
            r.cost_after < f->ft.cost[r.state] - 1e-12) {
            int i;
            for (i = 0; i < r.nmoves && st == MS_OK; i++) {
                const ms__move_t *m = &r.moves[i];
                st = m->bbm ? ms_plan_add_move_bbm(out, m->job, g, m->from, m->to, m->prof)
                            : ms_plan_add_move_mbb(out, m->job, g, m->from, g, m->to, m->prof);
            }
        }
    } else if (f->waiting == 0) {
        st = inter(f, c, g, out);
    }
done:
    if (st != MS_OK)
        out->n = n0;
    return st;
}

static ms_status_t fa_make_room(void *self, const ms_cluster_t *c, const ms_job_t *j,
                                double now, ms_plan_t *out)
{
    fa_t *f = self;
    ms__relayout_t *r, *best;
    int s, n0 = out->n;
    ms_status_t st = MS_ENOFIT;

    (void)now;
    if (f->lay != NULL || !f->cfg.migration || f->cfg.max_moves <= 0 || j->gang > 1 ||
        j->prof < 0 || j->prof >= ms_geom_nprofiles(c->geom))
        return MS_ENOFIT;
    if ((r = malloc(2 * sizeof(*r))) == NULL)
        return MS_ENOMEM;
    best = r + 1;
    best->gpu = -1;
    for (s = 0; s < ms_geom_nstates(f->geom); s++) {
        int h;
        if (ms_state_fit(f->geom, (ms_state_t)s, j->prof) != 0 ||
            ms_frag_ideal(f->geom, (ms_state_t)s, j->prof) <= 0)
            continue;
        if ((h = ms_cluster_next_in_state(c, (ms_state_t)s, -1)) < 0)
            continue;
        ms__relayout_load(c, h, r);
        if (!ms__relayout_best(f->geom, f->ft.cost, r, j->prof, f->cfg.max_moves))
            continue;
        if (best->gpu < 0 || r->nmoves < best->nmoves ||
            (r->nmoves == best->nmoves && r->cost_after < best->cost_after - 1e-12))
            *best = *r;
    }
    if (best->gpu >= 0 && (st = ms__relayout_emit(c, best, out)) != MS_OK)
        out->n = n0;
    free(r);
    return st;
}

/* Remember the queue length; fa plans no layout here. */
static ms_status_t fa_on_idle(void *self, const ms_cluster_t *c, const int *n_by_prof,
                              double now, ms_plan_t *out)
{
    fa_t *f = self;
    int k;

    (void)now;
    (void)out;
    f->waiting = 0;
    for (k = 0; k < ms_geom_nprofiles(c->geom); k++)
        f->waiting += n_by_prof[k];
    return MS_OK;
}

const ms_policy_ops_t ms_policy_fa = {
    .abi = MS_POLICY_ABI,
    .name = "fa",
    .help = "fragmentation-aware: load balancing, dynamic GIs, migration (the seeds' framework)",
    .share = MS_SHARE_MIG,
    .create = fa_create,
    .destroy = fa_destroy,
    .setup = fa_setup,
    .can_host = fa_can_host,
    .place = fa_place,
    .flags = MS_POLICY_PURE_PLACE,
    .on_finish = fa_on_finish,
    .make_room = fa_make_room,
    .on_idle = fa_on_idle,
};
