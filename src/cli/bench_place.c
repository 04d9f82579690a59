/* bench_place.c - `migsched bench`: placement latency and the migration search.
 *
 * Placement: a cluster is filled to a steady occupancy (default 70% of the
 * compute busy) with a uniform random profile mix, by driving arrivals
 * through the policy's place() and ms_cluster_apply(), and departures
 * through a STOP op, the policy's on_finish() and ms_cluster_apply(). Then
 * each measured step is departures while at or above the target, then one
 * arrival; only the arrival's place() call is timed, one clock_gettime pair
 * around each decision. Decisions that answer MS_ENOFIT are timed as well
 * (they are decisions too, and usually the slowest ones).
 *
 * Migration search: the same churn with `fa` and every technique on, at a
 * higher occupancy so that jobs do not fit; on_finish() (after every
 * departure) and make_room() (after every MS_ENOFIT) are timed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "migsched/cluster.h"
#include "migsched/geometry.h"
#include "migsched/plan.h"
#include "migsched/policy.h"

/* A placement case stops timing after this long (and at least 200 decisions). */
#define MEASURE_BUDGET_NS 3000000000LL

/* --- small utilities ----------------------------------------------------- */

typedef struct rng { uint64_t s; } rng_t;

static uint64_t rng_next(rng_t *r)   /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rng_below(rng_t *r, uint64_t n) { return rng_next(r) % n; }

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Latency summary of n samples in ns (sorts v). */
lat_t ms__bench_lat_summary(int64_t *v, long n)
{
    lat_t l;
    double sum = 0.0;
    long i;

    memset(&l, 0, sizeof(l));
    l.n = n;
    if (n <= 0)
        return l;
    qsort(v, (size_t)n, sizeof(*v), cmp_i64);
    for (i = 0; i < n; i++)
        sum += (double)v[i];
    /* nearest rank */
    l.p50_us = (double)v[(n * 50 + 99) / 100 - 1] / 1e3;
    l.p99_us = (double)v[(n * 99 + 99) / 100 - 1] / 1e3;
    l.max_us = (double)v[n - 1] / 1e3;
    l.mean_us = sum / (double)n / 1e3;
    return l;
}

/* --- the churn driver ----------------------------------------------------- */

typedef struct churn {
    const ms_geom_t *g;
    const ms_policy_ops_t *pol;
    void *self;
    ms_cluster_t *c;
    ms_plan_t plan;
    rng_t rng;
    double now;
    int np;
    long total_c;           /* compute slices in the cluster */
    long busy_c;            /* busy compute, from the cluster */
    /* running jobs: run[pos[j]] == j, loc[j] = its GPU */
    int32_t *run;
    long nrun;
    int32_t *pos, *loc;
    long cap;               /* size of pos/loc (job ids) */
    int32_t next_job;
    long nofit;
} churn_t;

static void churn_free(churn_t *ch)
{
    if (ch->pol != NULL && ch->self != NULL)
        ch->pol->destroy(ch->self);
    ms_cluster_destroy(ch->c);
    ms_plan_fini(&ch->plan);
    free(ch->run);
    free(ch->pos);
    free(ch->loc);
    memset(ch, 0, sizeof(*ch));
}

static ms_status_t grow_jobs(churn_t *ch, long need)
{
    long cap = ch->cap ? ch->cap : 1024;
    int32_t *p, *l, *r;

    if (need < ch->cap)
        return MS_OK;
    while (cap <= need)
        cap *= 2;
    p = realloc(ch->pos, (size_t)cap * sizeof(*p));
    if (p == NULL)
        return MS_ENOMEM;
    ch->pos = p;
    l = realloc(ch->loc, (size_t)cap * sizeof(*l));
    if (l == NULL)
        return MS_ENOMEM;
    ch->loc = l;
    r = realloc(ch->run, (size_t)cap * sizeof(*r));
    if (r == NULL)
        return MS_ENOMEM;
    ch->run = r;
    ch->cap = cap;
    return MS_OK;
}

/* Apply ch->plan and follow the jobs it starts or moves. */
static ms_status_t churn_apply(churn_t *ch)
{
    ms_status_t st;
    int i, bad = -1;

    st = ms_cluster_apply(ch->c, &ch->plan, &bad);
    if (st != MS_OK)
        return st;
    for (i = 0; i < ch->plan.n; i++) {
        const ms_op_t *op = &ch->plan.ops[i];
        if (op->kind == MS_OP_START) {
            ch->pos[op->job] = (int32_t)ch->nrun;
            ch->run[ch->nrun++] = op->job;
            ch->loc[op->job] = op->gpu;
            ch->busy_c += ms_geom_profile(ch->g, op->prof)->cslices;
        } else if (op->kind == MS_OP_MOVE) {
            ch->loc[op->job] = op->gpu;
        }
    }
    ms_plan_clear(&ch->plan);
    return MS_OK;
}

static ms_status_t churn_create(churn_t *ch, const ms_geom_t *g, const ms_policy_ops_t *pol,
                                const ms_policy_cfg_t *pcfg, int ngpus,
                                ms_index_mode_t mode, uint64_t seed)
{
    ms_cluster_cfg_t cc;
    ms_status_t st;

    memset(ch, 0, sizeof(*ch));
    ms_plan_init(&ch->plan);
    ch->g = g;
    ch->np = ms_geom_nprofiles(g);
    ch->rng.s = seed;
    memset(&cc, 0, sizeof(cc));
    cc.geom = g;
    cc.ngpus = ngpus;
    cc.gpus_per_node = ngpus >= 8 ? 8 : ngpus;
    cc.share = pol->share;
    cc.replicas = pol->share == MS_SHARE_TIMESLICE ? pcfg->replicas : 0;
    cc.index_mode = mode;
    ch->total_c = (long)ngpus * ms_geom_compute(g);
    if ((st = ms_cluster_create(&cc, &ch->c)) != MS_OK)
        return st;
    if ((st = grow_jobs(ch, 1024)) != MS_OK)
        return st;
    if ((st = pol->create(pcfg, ch->c, &ch->self)) != MS_OK) {
        ch->self = NULL;
        return st;
    }
    ch->pol = pol;
    if (pol->setup != NULL) {
        if ((st = pol->setup(ch->self, ch->c, &ch->plan)) != MS_OK)
            return st;
        if ((st = churn_apply(ch)) != MS_OK)
            return st;
    }
    return MS_OK;
}

/* One departure: a random running job stops, then the policy's on_finish.
 * *fin_ns (if not NULL) receives the time of on_finish alone. */
static ms_status_t churn_depart(churn_t *ch, int64_t *fin_ns)
{
    long r;
    int32_t j, last;
    ms_op_t op;
    ms_status_t st;
    int g;

    if (ch->nrun == 0)
        return MS_OK;
    r = (long)rng_below(&ch->rng, (uint64_t)ch->nrun);
    j = ch->run[r];
    g = ch->loc[j];
    last = ch->run[--ch->nrun];
    ch->run[r] = last;
    ch->pos[last] = (int32_t)r;
    memset(&op, 0, sizeof(op));
    op.kind = MS_OP_STOP;
    op.job = j;
    op.gpu = g;
    op.start = -1;
    op.from_gpu = -1;
    op.from_start = -1;
    {
        const ms_gpu_t *gp = &ch->c->gpus[g];
        int i = ms_gpu_find_job(gp, j);
        if (i < 0)
            return MS_ESTATE;
        ch->busy_c -= ms_geom_profile(ch->g, gp->inst[i].prof)->cslices;
    }
    if ((st = ms_cluster_apply_op(ch->c, &op)) != MS_OK)
        return st;
    ch->now += 1.0;
    if (ch->pol->on_finish != NULL) {
        int64_t t0 = ms__bench_now_ns(), t1;
        st = ch->pol->on_finish(ch->self, ch->c, g, ch->now, &ch->plan);
        t1 = ms__bench_now_ns();
        if (fin_ns != NULL)
            *fin_ns = t1 - t0;
        if (st != MS_OK && st != MS_ENOFIT)
            return st;
        return churn_apply(ch);
    }
    return MS_OK;
}

/* One arrival of a random profile. *place_ns receives place()'s time;
 * *room_ns (if not NULL) make_room()'s time when place answered MS_ENOFIT
 * (else -1), and *room_ok whether make_room made the job fit. */
static ms_status_t churn_arrive(churn_t *ch, int64_t *place_ns, int64_t *room_ns, bool *room_ok)
{
    ms_job_t j;
    ms_status_t st;
    int64_t t0, t1;

    if ((st = grow_jobs(ch, (long)ch->next_job + 1)) != MS_OK)
        return st;
    memset(&j, 0, sizeof(j));
    j.idx = ch->next_job++;
    j.prof = (int8_t)rng_below(&ch->rng, (uint64_t)ch->np);
    j.gang = 1;
    j.arrival = ch->now;
    j.duration = 600.0;
    if (room_ns != NULL)
        *room_ns = -1;
    if (room_ok != NULL)
        *room_ok = false;
    if (ch->pol->on_arrival != NULL)
        ch->pol->on_arrival(ch->self, &j);
    t0 = ms__bench_now_ns();
    st = ch->pol->place(ch->self, ch->c, &j, &ch->plan);
    t1 = ms__bench_now_ns();
    if (place_ns != NULL)
        *place_ns = t1 - t0;
    if (st == MS_OK)
        return churn_apply(ch);
    if (st != MS_ENOFIT)
        return st;
    ms_plan_clear(&ch->plan);
    ch->nofit++;
    if (room_ns != NULL && ch->pol->make_room != NULL) {
        t0 = ms__bench_now_ns();
        st = ch->pol->make_room(ch->self, ch->c, &j, ch->now, &ch->plan);
        t1 = ms__bench_now_ns();
        *room_ns = t1 - t0;
        if (st == MS_ENOFIT) {
            ms_plan_clear(&ch->plan);
            return MS_OK;
        }
        if (st != MS_OK || (st = churn_apply(ch)) != MS_OK)
            return st;
        st = ch->pol->place(ch->self, ch->c, &j, &ch->plan);
        if (st == MS_OK) {
            if (room_ok != NULL)
                *room_ok = true;
            return churn_apply(ch);
        }
        ms_plan_clear(&ch->plan);
        return st == MS_ENOFIT ? MS_OK : st;
    }
    return MS_OK;
}

/* Fill to the target occupancy, then churn `warm` steps. */
static ms_status_t churn_fill(churn_t *ch, double occ, long warm)
{
    long target = (long)(occ * (double)ch->total_c), fails = 0, i;
    ms_status_t st;

    while (ch->busy_c < target && fails < 1000) {
        long before = ch->nofit;
        if ((st = churn_arrive(ch, NULL, NULL, NULL)) != MS_OK)
            return st;
        fails = ch->nofit > before ? fails + 1 : 0;
    }
    for (i = 0; i < warm; i++) {
        while (ch->busy_c >= target && ch->nrun > 0)
            if ((st = churn_depart(ch, NULL)) != MS_OK)
                return st;
        if ((st = churn_arrive(ch, NULL, NULL, NULL)) != MS_OK)
            return st;
    }
    return MS_OK;
}

/* --- placement section ------------------------------------------------------ */

ms_status_t ms__bench_place(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
                            bool no_mig, ms_index_mode_t mode, long ngpus, long iters,
                            place_res_t *res)
{
    ms_policy_cfg_t pcfg;
    churn_t ch;
    int64_t *lat = NULL, t0, t1, sum = 0;
    long target, i, nofit0;
    double occ_sum = 0.0;
    ms_status_t st;

    memset(res, 0, sizeof(*res));
    snprintf(res->policy, sizeof(res->policy), "%s", pol->name);
    res->index = mode == MS_INDEX_SCAN ? "scan" : "bucket";
    res->ngpus = ngpus;
    ms_policy_cfg_defaults(&pcfg);
    pcfg.seed = o->seed;
    if (no_mig)
        pcfg.migration = false;
    lat = malloc((size_t)iters * sizeof(*lat));
    if (lat == NULL)
        return MS_ENOMEM;
    t0 = ms__bench_now_ns();
    st = churn_create(&ch, g, pol, &pcfg, (int)ngpus, mode, o->seed * 7919u + (uint64_t)ngpus);
    if (st == MS_OK)
        st = churn_fill(&ch, o->occupancy, o->warmup);
    res->fill_s = (double)(ms__bench_now_ns() - t0) / 1e9;
    target = (long)(o->occupancy * (double)ch.total_c);
    nofit0 = ch.nofit;
    t1 = ms__bench_now_ns();
    for (i = 0; st == MS_OK && i < iters; i++) {
        while (st == MS_OK && ch.busy_c >= target && ch.nrun > 0)
            st = churn_depart(&ch, NULL);
        if (st != MS_OK)
            break;
        occ_sum += (double)ch.busy_c / (double)ch.total_c;
        st = churn_arrive(&ch, &lat[i], NULL, NULL);
        sum += lat[i];
        if (i >= 200 && ms__bench_now_ns() - t1 > MEASURE_BUDGET_NS) {
            i++;
            break;
        }
    }
    if (st == MS_OK) {
        res->per_s = sum > 0 ? (double)i / ((double)sum / 1e9) : 0.0;
        res->nofit_frac = (double)(ch.nofit - nofit0) / (double)i;
        res->occ = occ_sum / (double)i;
        res->lat = ms__bench_lat_summary(lat, i);
    }
    free(lat);
    churn_free(&ch);
    return st;
}

/* --- migration search section ------------------------------------------------ */

ms_status_t ms__bench_mig(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
                          long ngpus, long iters, mig_res_t *res)
{
    ms_policy_cfg_t pcfg;
    churn_t ch;
    int64_t *fin = NULL, *room = NULL, *plc = NULL;
    long target, i, nf = 0, nr = 0;
    double occ_sum = 0.0;
    ms_status_t st;

    memset(res, 0, sizeof(*res));
    res->ngpus = ngpus;
    ms_policy_cfg_defaults(&pcfg);
    pcfg.seed = o->seed;
    fin = malloc((size_t)iters * 2 * sizeof(*fin));
    room = malloc((size_t)iters * sizeof(*room));
    plc = malloc((size_t)iters * sizeof(*plc));
    if (fin == NULL || room == NULL || plc == NULL) {
        free(fin); free(room); free(plc);
        return MS_ENOMEM;
    }
    st = churn_create(&ch, g, pol, &pcfg, (int)ngpus, MS_INDEX_BUCKET,
                      o->seed * 104729u + (uint64_t)ngpus);
    if (st == MS_OK)
        st = churn_fill(&ch, o->mig_occupancy, o->warmup);
    target = (long)(o->mig_occupancy * (double)ch.total_c);
    for (i = 0; st == MS_OK && i < iters; i++) {
        int64_t rn = -1;
        bool ok = false;
        while (st == MS_OK && ch.busy_c >= target && ch.nrun > 0) {
            int64_t fn = -1;
            if ((st = churn_depart(&ch, &fn)) != MS_OK)
                break;
            if (fn >= 0 && nf < iters * 2)
                fin[nf++] = fn;
        }
        if (st != MS_OK)
            break;
        occ_sum += (double)ch.busy_c / (double)ch.total_c;
        if ((st = churn_arrive(&ch, &plc[i], &rn, &ok)) != MS_OK)
            break;
        if (rn >= 0)
            room[nr++] = rn;
        res->room_ok += ok;
    }
    if (st == MS_OK) {
        res->fin = ms__bench_lat_summary(fin, nf);
        res->room = ms__bench_lat_summary(room, nr);
        res->place = ms__bench_lat_summary(plc, iters);
        res->occ = occ_sum / (double)iters;
    }
    free(fin); free(room); free(plc);
    churn_free(&ch);
    return st;
}

/* --- the clock ------------------------------------------------------------------ */

double ms__bench_clock_pair_ns(void)
{
    int64_t v[1001];
    int i;

    for (i = 0; i < 1001; i++) {
        int64_t a = ms__bench_now_ns(), b = ms__bench_now_ns();
        v[i] = b - a;
    }
    qsort(v, 1001, sizeof(v[0]), cmp_i64);
    return (double)v[500];
}
