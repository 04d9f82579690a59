/* cmd_bench.c - `migsched bench`: placement latency, migration search latency
 * and whole-simulation throughput, printed as a table (and optionally JSON).
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
 *
 * Simulation: each case runs in a forked child (so the peak RSS, from
 * getrusage in the child, is that case's), generating a Poisson trace in
 * memory with ms_trace_generate() and replaying it with ms_sim_run(), `fa`
 * with its defaults (every technique on).
 *
 * Benchmarks report figures; nothing here fails on time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "migsched/cluster.h"
#include "migsched/geometry.h"
#include "migsched/plan.h"
#include "migsched/policy.h"
#include "migsched/sim.h"
#include "migsched/trace.h"

#define MAX_LIST 16
/* A placement case stops timing after this long (and at least 200 decisions). */
#define MEASURE_BUDGET_NS 3000000000LL

/* --- options ------------------------------------------------------------ */

typedef struct bopts {
    bool quick;
    const char *json;
    const char *model;
    long sizes[MAX_LIST];
    int nsizes;
    const char *policies[MAX_LIST];
    int npolicies;
    char *policy_buf;
    bool idx_bucket, idx_scan;
    long scan_max;          /* largest cluster measured with MS_INDEX_SCAN */
    long iters;             /* timed decisions per case */
    long warmup;            /* churn steps before timing */
    double occupancy;       /* target busy compute fraction */
    double mig_occupancy;
    long mig_sizes[MAX_LIST];
    int nmig;
    long sim_jobs[MAX_LIST];
    int nsim;
    long sim_gpus;
    long scale_jobs;        /* 0: no scaling pair */
    long scale_small, scale_large;
    double load;
    double mean_s;
    uint64_t seed;
    bool place, mig, sim;
} bopts_t;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched bench [options]\n"
        "\n"
        "Placement latency per policy, index and cluster size; migration search\n"
        "latency (fa); whole-simulation time, events/s and peak RSS.\n"
        "\n"
        "  --quick               small sizes, few iterations (a few seconds)\n"
        "  --json OUT            also write every figure as JSON to OUT\n"
        "  --model NAME          GPU model (default A100-40GB)\n"
        "  --sizes LIST          cluster sizes in GPUs (default 100,1000,10000,100000)\n"
        "  --policies LIST       policies (default fa,best-fit,first-fit,mfi,fgd,static,\n"
        "                        node-profile,timeslice; `fa` runs without migration)\n"
        "  --index LIST          bucket,scan (default both)\n"
        "  --scan-max N          largest size measured with --index scan, and with the\n"
        "                        policies that scan GPUs (static, node-profile, timeslice)\n"
        "                        (default 10000)\n"
        "  --iters N             timed decisions per case (default 20000)\n"
        "  --occupancy F         busy compute fraction while timing (default 0.7)\n"
        "  --mig-sizes LIST      sizes for the migration search (default 1000,10000)\n"
        "  --mig-occupancy F     occupancy for the migration search (default 0.9)\n"
        "  --sim-jobs LIST       simulated jobs on --sim-gpus GPUs (default 100000,1000000)\n"
        "  --sim-gpus N          GPUs for --sim-jobs (default 10000)\n"
        "  --scale-jobs N        jobs for the scaling pair (default 100000; 0 = none)\n"
        "  --scale-gpus A,B      the scaling pair's sizes (default 1000,10000)\n"
        "  --load F              offered load of generated traces (default 0.9)\n"
        "  --mean-s F            mean job duration, exponential (default 600)\n"
        "  --seed N              seed (default 1)\n"
        "  --no-place, --no-migration, --no-sim   skip a section\n");
}

static bool parse_longs(const char *s, long *out, int *n, long lo)
{
    char buf[256], *tok, *save = NULL;

    if (s == NULL || strlen(s) >= sizeof(buf))
        return false;
    strcpy(buf, s);
    *n = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (*n >= MAX_LIST || !ms_cli_parse_long(tok, &v) || v < lo)
            return false;
        out[(*n)++] = v;
    }
    return true;
}

static bool parse_names(bopts_t *o, const char *s)
{
    char *tok, *save = NULL;

    free(o->policy_buf);
    o->policy_buf = malloc(strlen(s) + 1);
    if (o->policy_buf == NULL)
        return false;
    strcpy(o->policy_buf, s);
    o->npolicies = 0;
    for (tok = strtok_r(o->policy_buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->npolicies >= MAX_LIST)
            return false;
        o->policies[o->npolicies++] = tok;
    }
    return o->npolicies > 0;
}

static void defaults(bopts_t *o, bool quick)
{
    static const char *const pol[] = { "fa", "best-fit", "first-fit", "mfi", "fgd",
                                       "static", "node-profile", "timeslice" };
    int i;

    memset(o, 0, sizeof(*o));
    o->quick = quick;
    o->model = "A100-40GB";
    for (i = 0; i < (int)(sizeof(pol) / sizeof(pol[0])); i++)
        o->policies[o->npolicies++] = pol[i];
    o->idx_bucket = o->idx_scan = true;
    o->occupancy = 0.7;
    o->mig_occupancy = 0.9;
    o->load = 0.9;
    o->mean_s = 600.0;
    o->seed = 1;
    o->place = o->mig = o->sim = true;
    if (quick) {
        o->sizes[0] = 100; o->sizes[1] = 1000; o->nsizes = 2;
        o->scan_max = 1000;
        o->iters = 2000;
        o->warmup = 500;
        o->mig_sizes[0] = 100; o->nmig = 1;
        o->sim_jobs[0] = 5000; o->nsim = 1;
        o->sim_gpus = 200;
        o->scale_jobs = 5000;
        o->scale_small = 50;
        o->scale_large = 500;
    } else {
        o->sizes[0] = 100; o->sizes[1] = 1000; o->sizes[2] = 10000; o->sizes[3] = 100000;
        o->nsizes = 4;
        o->scan_max = 10000;
        o->iters = 20000;
        o->warmup = 5000;
        o->mig_sizes[0] = 1000; o->mig_sizes[1] = 10000; o->nmig = 2;
        o->sim_jobs[0] = 100000; o->sim_jobs[1] = 1000000; o->nsim = 2;
        o->sim_gpus = 10000;
        o->scale_jobs = 100000;
        o->scale_small = 1000;
        o->scale_large = 10000;
    }
}

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

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Latency summary of n samples in ns (sorts v). */
typedef struct lat {
    long n;
    double p50_us, p99_us, max_us, mean_us;
} lat_t;

static lat_t lat_summary(int64_t *v, long n)
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
    ms_plan_free(&ch->plan);
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
        int64_t t0 = now_ns(), t1;
        st = ch->pol->on_finish(ch->self, ch->c, g, ch->now, &ch->plan);
        t1 = now_ns();
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
    t0 = now_ns();
    st = ch->pol->place(ch->self, ch->c, &j, &ch->plan);
    t1 = now_ns();
    if (place_ns != NULL)
        *place_ns = t1 - t0;
    if (st == MS_OK)
        return churn_apply(ch);
    if (st != MS_ENOFIT)
        return st;
    ms_plan_clear(&ch->plan);
    ch->nofit++;
    if (room_ns != NULL && ch->pol->make_room != NULL) {
        t0 = now_ns();
        st = ch->pol->make_room(ch->self, ch->c, &j, ch->now, &ch->plan);
        t1 = now_ns();
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

typedef struct place_res {
    char policy[32];
    const char *index;
    long ngpus;
    lat_t lat;
    double per_s;           /* decisions per second, from the timed calls */
    double nofit_frac;
    double occ;             /* busy compute fraction while timing */
    double fill_s;          /* time to fill and warm up */
} place_res_t;

static ms_status_t bench_place(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
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
    t0 = now_ns();
    st = churn_create(&ch, g, pol, &pcfg, (int)ngpus, mode, o->seed * 7919u + (uint64_t)ngpus);
    if (st == MS_OK)
        st = churn_fill(&ch, o->occupancy, o->warmup);
    res->fill_s = (double)(now_ns() - t0) / 1e9;
    target = (long)(o->occupancy * (double)ch.total_c);
    nofit0 = ch.nofit;
    t1 = now_ns();
    for (i = 0; st == MS_OK && i < iters; i++) {
        while (st == MS_OK && ch.busy_c >= target && ch.nrun > 0)
            st = churn_depart(&ch, NULL);
        if (st != MS_OK)
            break;
        occ_sum += (double)ch.busy_c / (double)ch.total_c;
        st = churn_arrive(&ch, &lat[i], NULL, NULL);
        sum += lat[i];
        if (i >= 200 && now_ns() - t1 > MEASURE_BUDGET_NS) {
            i++;
            break;
        }
    }
    if (st == MS_OK) {
        res->per_s = sum > 0 ? (double)i / ((double)sum / 1e9) : 0.0;
        res->nofit_frac = (double)(ch.nofit - nofit0) / (double)i;
        res->occ = occ_sum / (double)i;
        res->lat = lat_summary(lat, i);
    }
    free(lat);
    churn_free(&ch);
    return st;
}

/* --- migration search section ------------------------------------------------ */

typedef struct mig_res {
    long ngpus;
    lat_t fin, room, place;
    long room_ok;
    double occ;
} mig_res_t;

static ms_status_t bench_mig(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
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
        res->fin = lat_summary(fin, nf);
        res->room = lat_summary(room, nr);
        res->place = lat_summary(plc, iters);
        res->occ = occ_sum / (double)iters;
    }
    free(fin); free(room); free(plc);
    churn_free(&ch);
    return st;
}

/* --- simulation section --------------------------------------------------------- */

typedef struct sim_res {
    long njobs, ngpus;
    int status;             /* ms_status_t of the child, or -1 if it died */
    double gen_s, sim_s;
    double cpu_s;           /* user + system CPU of ms_sim_run alone */
    long events, completed, rejected, migrations;
    double makespan_s, mean_wait_s, util;
    long rss_kb;            /* peak RSS of the child */
} sim_res_t;

static double cpu_now(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void sim_child(const bopts_t *o, const ms_geom_t *g, sim_res_t *r)
{
    double c0;
    ms_gen_cfg_t gc;
    ms_sim_cfg_t sc;
    ms_trace_t *tr = NULL;
    ms_metrics_t m;
    ms_diag_t d;
    struct rusage ru;
    int64_t t0;
    ms_status_t st;

    memset(&gc, 0, sizeof(gc));
    gc.njobs = (size_t)r->njobs;
    gc.load = o->load;
    gc.ngpus = (int)r->ngpus;
    gc.dist = 0;
    gc.mean_s = o->mean_s;
    gc.seed = o->seed;
    t0 = now_ns();
    st = ms_trace_generate(g, &gc, &tr);
    r->gen_s = (double)(now_ns() - t0) / 1e9;
    if (st == MS_OK) {
        ms_sim_cfg_defaults(&sc);
        sc.policy = ms_policy_find("fa");
        sc.pcfg.seed = o->seed;
        sc.ngpus = (int)r->ngpus;
        sc.gpus_per_node = 8;
        sc.index_mode = MS_INDEX_BUCKET;
        memset(&m, 0, sizeof(m));
        ms_diag_clear(&d);
        c0 = cpu_now();
        t0 = now_ns();
        st = sc.policy == NULL ? MS_ENOENT : ms_sim_run(&sc, tr, &m, &d);
        r->sim_s = (double)(now_ns() - t0) / 1e9;
        r->cpu_s = cpu_now() - c0;
        r->events = m.events;
        r->completed = m.jobs_completed;
        r->rejected = m.jobs_rejected;
        r->migrations = m.migrations;
        r->makespan_s = m.makespan_s;
        r->mean_wait_s = m.mean_wait_s;
        r->util = m.mean_utilization;
    }
    ms_trace_free(tr);
    r->status = (int)st;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        r->rss_kb = ru.ru_maxrss;
}

static void bench_sim(const bopts_t *o, const ms_geom_t *g, long njobs, long ngpus, sim_res_t *r)
{
    int fds[2], wst = 0;
    pid_t pid;
    sim_res_t got;
    size_t off = 0;

    memset(r, 0, sizeof(*r));
    r->njobs = njobs;
    r->ngpus = ngpus;
    r->status = -1;
    fflush(NULL);
    if (pipe(fds) != 0)
        return;
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        const char *p;
        size_t left = sizeof(*r);
        close(fds[0]);
        sim_child(o, g, r);
        p = (const char *)r;
        while (left > 0) {
            ssize_t w = write(fds[1], p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            p += w;
            left -= (size_t)w;
        }
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    while (off < sizeof(got)) {
        ssize_t n = read(fds[0], (char *)&got + off, sizeof(got) - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(fds[0]);
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    if (off == sizeof(got) && WIFEXITED(wst) && WEXITSTATUS(wst) == 0)
        *r = got;
}

/* --- output --------------------------------------------------------------------- */

static void json_lat(FILE *f, const char *name, const lat_t *l)
{
    fprintf(f, "\"%s\": {\"n\": %ld, \"p50_us\": %.4f, \"p99_us\": %.4f, \"max_us\": %.4f, "
               "\"mean_us\": %.4f}", name, l->n, l->p50_us, l->p99_us, l->max_us, l->mean_us);
}

static void machine_line(FILE *f)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    fprintf(f, "machine: %ld online CPUs; compiler %s; one thread\n", cpus,
#if defined(__VERSION__)
            __VERSION__
#else
            "unknown"
#endif
    );
}

static double clock_overhead_ns(void)
{
    int64_t v[1001];
    int i;

    for (i = 0; i < 1001; i++) {
        int64_t a = now_ns(), b = now_ns();
        v[i] = b - a;
    }
    qsort(v, 1001, sizeof(v[0]), cmp_i64);
    return (double)v[500];
}

/* --- the command ---------------------------------------------------------------- */

static int parse_args(int argc, char **argv, bopts_t *o)
{
    int i;
    bool quick = false;

    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
    defaults(o, quick);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        double d;
        int cnt;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--quick") == 0) {
            continue;
        } else if (strcmp(a, "--no-place") == 0) {
            o->place = false;
            continue;
        } else if (strcmp(a, "--no-migration") == 0) {
            o->mig = false;
            continue;
        } else if (strcmp(a, "--no-sim") == 0) {
            o->sim = false;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "migsched bench: %s needs a value (or is unknown)\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--json") == 0) {
            o->json = v;
        } else if (strcmp(a, "--model") == 0) {
            o->model = v;
        } else if (strcmp(a, "--sizes") == 0) {
            if (!parse_longs(v, o->sizes, &o->nsizes, 1))
                goto bad;
        } else if (strcmp(a, "--mig-sizes") == 0) {
            if (!parse_longs(v, o->mig_sizes, &o->nmig, 1))
                goto bad;
        } else if (strcmp(a, "--sim-jobs") == 0) {
            if (!parse_longs(v, o->sim_jobs, &o->nsim, 1))
                goto bad;
        } else if (strcmp(a, "--policies") == 0) {
            if (!parse_names(o, v))
                goto bad;
        } else if (strcmp(a, "--index") == 0) {
            o->idx_bucket = strstr(v, "bucket") != NULL;
            o->idx_scan = strstr(v, "scan") != NULL;
            if (!o->idx_bucket && !o->idx_scan)
                goto bad;
        } else if (strcmp(a, "--scan-max") == 0) {
            if (!ms_cli_parse_long(v, &o->scan_max) || o->scan_max < 0)
                goto bad;
        } else if (strcmp(a, "--iters") == 0) {
            if (!ms_cli_parse_long(v, &o->iters) || o->iters < 1)
                goto bad;
        } else if (strcmp(a, "--occupancy") == 0) {
            if (!ms_cli_parse_double(v, &o->occupancy) || o->occupancy <= 0 || o->occupancy > 1)
                goto bad;
        } else if (strcmp(a, "--mig-occupancy") == 0) {
            if (!ms_cli_parse_double(v, &o->mig_occupancy) || o->mig_occupancy <= 0 ||
                o->mig_occupancy > 1)
                goto bad;
        } else if (strcmp(a, "--sim-gpus") == 0) {
            if (!ms_cli_parse_long(v, &o->sim_gpus) || o->sim_gpus < 1)
                goto bad;
        } else if (strcmp(a, "--scale-jobs") == 0) {
            if (!ms_cli_parse_long(v, &o->scale_jobs) || o->scale_jobs < 0)
                goto bad;
        } else if (strcmp(a, "--scale-gpus") == 0) {
            long p[MAX_LIST];
            if (!parse_longs(v, p, &cnt, 1) || cnt != 2)
                goto bad;
            o->scale_small = p[0];
            o->scale_large = p[1];
        } else if (strcmp(a, "--load") == 0) {
            if (!ms_cli_parse_double(v, &d) || d <= 0)
                goto bad;
            o->load = d;
        } else if (strcmp(a, "--mean-s") == 0) {
            if (!ms_cli_parse_double(v, &d) || d <= 0)
                goto bad;
            o->mean_s = d;
        } else if (strcmp(a, "--seed") == 0) {
            if (!ms_cli_parse_long(v, &n) || n < 0)
                goto bad;
            o->seed = (uint64_t)n;
        } else {
            fprintf(stderr, "migsched bench: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        continue;
bad:
        fprintf(stderr, "migsched bench: bad value for %s: '%s'\n", a, v);
        return 2;
    }
    return -1;
}

static int run_place(const bopts_t *o, const ms_geom_t *g, FILE *json, bool *first)
{
    int pi, si, mi;

    printf("\nPlacement: one decision (place() only), steady state at ~%.0f%% busy compute,\n"
           "uniform profile mix; departures while at/above target, then one arrival\n", o->occupancy * 100);
    printf("%-13s %-6s %7s %7s %6s %5s %9s %9s %9s %12s %7s\n", "policy", "index", "GPUs",
           "n", "occ%", "nofit", "p50 us", "p99 us", "max us", "decisions/s", "fill s");
    for (pi = 0; pi < o->npolicies; pi++) {
        const ms_policy_ops_t *pol = ms_policy_find(o->policies[pi]);
        bool no_mig = strcmp(o->policies[pi], "fa") == 0;
        /* policies whose place() scans every GPU whatever the index */
        bool scans = pol != NULL && (strcmp(pol->name, "static") == 0 ||
                                     strcmp(pol->name, "node-profile") == 0 ||
                                     strcmp(pol->name, "timeslice") == 0);

        if (pol == NULL) {
            printf("%-13s (not in the registry; skipped)\n", o->policies[pi]);
            continue;
        }
        for (si = 0; si < o->nsizes; si++) {
            for (mi = 0; mi < 2; mi++) {
                ms_index_mode_t mode = mi == 0 ? MS_INDEX_BUCKET : MS_INDEX_SCAN;
                long iters = o->iters;
                place_res_t r;
                ms_status_t st;
                char name[40];

                snprintf(name, sizeof(name), "%s%s", pol->name, no_mig ? "-nomig" : "");
                if ((mi == 0 && !o->idx_bucket) || (mi == 1 && !o->idx_scan))
                    continue;
                if ((mi == 1 || scans) && o->sizes[si] > o->scan_max) {
                    if (mi == 0 || !scans)
                        printf("%-13s %-6s %7ld  skipped: above --scan-max %ld\n", name,
                               mi == 0 ? "bucket" : "scan", o->sizes[si], o->scan_max);
                    continue;
                }
                if (mi == 1 && o->sizes[si] > 1000) {   /* O(GPUs) per decision: cap */
                    iters = o->iters * 1000 / o->sizes[si];
                    if (iters < 200)
                        iters = o->iters < 200 ? o->iters : 200;
                }
                st = bench_place(o, g, pol, no_mig, mode, o->sizes[si], iters, &r);
                if (st != MS_OK) {
                    printf("%-13s %-6s %7ld  failed: %s\n", name, r.index, o->sizes[si],
                           ms_strerror(st));
                    continue;
                }
                printf("%-13s %-6s %7ld %7ld %6.1f %5.3f %9.3f %9.3f %9.1f %12.0f %7.2f\n", name,
                       r.index, r.ngpus, r.lat.n, r.occ * 100, r.nofit_frac, r.lat.p50_us,
                       r.lat.p99_us, r.lat.max_us, r.per_s, r.fill_s);
                fflush(stdout);
                if (json != NULL) {
                    fprintf(json, "%s\n    {\"section\": \"place\", \"policy\": \"%s\", "
                                  "\"migration\": %s, \"index\": \"%s\", \"gpus\": %ld, "
                                  "\"occupancy\": %.4f, \"nofit_frac\": %.4f, "
                                  "\"decisions_per_s\": %.0f, \"fill_s\": %.3f, ",
                            *first ? "" : ",", pol->name, no_mig ? "false" : "true", r.index,
                            r.ngpus, r.occ, r.nofit_frac, r.per_s, r.fill_s);
                    json_lat(json, "latency", &r.lat);
                    fprintf(json, "}");
                    *first = false;
                }
            }
        }
    }
    return 0;
}

static int run_mig(const bopts_t *o, const ms_geom_t *g, FILE *json, bool *first)
{
    const ms_policy_ops_t *pol = ms_policy_find("fa");
    int si;

    printf("\nMigration search: fa, every technique on, bucket index, ~%.0f%% busy compute;\n"
           "on_finish() after each departure, make_room() after each MS_ENOFIT\n",
           o->mig_occupancy * 100);
    if (pol == NULL) {
        printf("(fa is not in the registry; skipped)\n");
        return 0;
    }
    printf("%7s %6s %-10s %7s %9s %9s %9s %9s\n", "GPUs", "occ%", "call", "n", "p50 us",
           "p99 us", "max us", "made room");
    for (si = 0; si < o->nmig; si++) {
        mig_res_t r;
        ms_status_t st = bench_mig(o, g, pol, o->mig_sizes[si], o->iters, &r);
        int k;

        if (st != MS_OK) {
            printf("%7ld  failed: %s\n", o->mig_sizes[si], ms_strerror(st));
            continue;
        }
        for (k = 0; k < 3; k++) {
            const lat_t *l = k == 0 ? &r.place : k == 1 ? &r.fin : &r.room;
            const char *nm = k == 0 ? "place" : k == 1 ? "on_finish" : "make_room";
            printf("%7ld %6.1f %-10s %7ld %9.3f %9.3f %9.1f", r.ngpus, r.occ * 100, nm, l->n,
                   l->p50_us, l->p99_us, l->max_us);
            if (k == 2)
                printf(" %9ld", r.room_ok);
            printf("\n");
        }
        fflush(stdout);
        if (json != NULL) {
            fprintf(json, "%s\n    {\"section\": \"migration\", \"policy\": \"fa\", \"gpus\": %ld, "
                          "\"occupancy\": %.4f, \"made_room\": %ld, ",
                    *first ? "" : ",", r.ngpus, r.occ, r.room_ok);
            json_lat(json, "place", &r.place);
            fprintf(json, ", ");
            json_lat(json, "on_finish", &r.fin);
            fprintf(json, ", ");
            json_lat(json, "make_room", &r.room);
            fprintf(json, "}");
            *first = false;
        }
    }
    return 0;
}

static void print_sim(const sim_res_t *r, const char *tag, FILE *json, bool *first)
{
    if (r->status != MS_OK) {
        printf("%9ld %7ld  failed: %s\n", r->njobs, r->ngpus,
               r->status < 0 ? "child died" : ms_strerror((ms_status_t)r->status));
    } else {
        printf("%9ld %7ld %7.2f %8.2f %8.2f %10ld %12.0f %8.1f %9ld %8ld %10.0f %6.3f\n",
               r->njobs, r->ngpus, r->gen_s, r->sim_s, r->cpu_s, r->events,
               r->sim_s > 0 ? (double)r->events / r->sim_s : 0.0, (double)r->rss_kb / 1024.0,
               r->completed, r->migrations, r->mean_wait_s, r->util);
    }
    fflush(stdout);
    if (json != NULL) {
        fprintf(json, "%s\n    {\"section\": \"simulate\", \"case\": \"%s\", \"policy\": \"fa\", "
                      "\"jobs\": %ld, \"gpus\": %ld, \"status\": %d, \"gen_s\": %.4f, "
                      "\"sim_s\": %.4f, \"cpu_s\": %.4f, \"events\": %ld, \"events_per_s\": %.0f, "
                      "\"peak_rss_kb\": %ld, \"completed\": %ld, \"rejected\": %ld, "
                      "\"migrations\": %ld, \"makespan_s\": %.3f, \"mean_wait_s\": %.3f, "
                      "\"utilization\": %.4f}",
                *first ? "" : ",", tag, r->njobs, r->ngpus, r->status, r->gen_s, r->sim_s,
                r->cpu_s, r->events, r->sim_s > 0 ? (double)r->events / r->sim_s : 0.0, r->rss_kb,
                r->completed, r->rejected, r->migrations, r->makespan_s, r->mean_wait_s,
                r->util);
        *first = false;
    }
}

static int run_sims(const bopts_t *o, const ms_geom_t *g, FILE *json, bool *first)
{
    sim_res_t big, small, r;
    bool have_big = false;
    int i;

    printf("\nSimulation: fa (every technique on), Poisson arrivals at load %.2f, uniform mix,\n"
           "exponential durations (mean %.0f s), nodes of 8 GPUs; one forked child per case\n",
           o->load, o->mean_s);
    printf("%9s %7s %7s %8s %8s %10s %12s %8s %9s %8s %10s %6s\n", "jobs", "GPUs", "gen s",
           "sim s", "cpu s", "events", "events/s", "RSS MB", "completed", "migr", "mean wait", "util");
    memset(&big, 0, sizeof(big));
    for (i = 0; i < o->nsim; i++) {
        bench_sim(o, g, o->sim_jobs[i], o->sim_gpus, &r);
        print_sim(&r, "size", json, first);
        if (o->scale_jobs > 0 && r.njobs == o->scale_jobs && r.ngpus == o->scale_large) {
            big = r;
            have_big = true;
        }
    }
    if (o->scale_jobs <= 0)
        return 0;
    bench_sim(o, g, o->scale_jobs, o->scale_small, &small);
    print_sim(&small, "scale-small", json, first);
    if (!have_big) {
        bench_sim(o, g, o->scale_jobs, o->scale_large, &big);
        print_sim(&big, "scale-large", json, first);
    }
    if (small.status == MS_OK && big.status == MS_OK && small.sim_s > 0) {
        double ratio = big.sim_s / small.sim_s;
        double cratio = small.cpu_s > 0 ? big.cpu_s / small.cpu_s : 0.0;
        printf("scaling: %ld jobs on %ld GPUs took %.2fx the wall time (%.2fx the CPU time) "
               "on %ld GPUs\n", o->scale_jobs, o->scale_large, ratio, cratio, o->scale_small);
        if (json != NULL) {
            fprintf(json, "%s\n    {\"section\": \"scaling\", \"jobs\": %ld, \"small_gpus\": %ld, "
                          "\"large_gpus\": %ld, \"ratio\": %.4f, \"cpu_ratio\": %.4f}",
                    *first ? "" : ",", o->scale_jobs, o->scale_small, o->scale_large, ratio,
                    cratio);
            *first = false;
        }
    }
    return 0;
}

int ms_cli_bench(int argc, char **argv)
{
    bopts_t o;
    const ms_model_t *m;
    ms_geom_t *g = NULL;
    FILE *json = NULL;
    bool first = true;
    ms_status_t st;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.policy_buf);
        return rc;
    }
    m = ms_model_find(o.model);
    if (m == NULL) {
        fprintf(stderr, "migsched bench: unknown model '%s'\n", o.model);
        free(o.policy_buf);
        return 2;
    }
    if ((st = ms_geom_create(m, 0, &g)) != MS_OK) {
        free(o.policy_buf);
        return ms_cli_fail("bench", st, NULL);
    }
    if (o.json != NULL && (json = fopen(o.json, "w")) == NULL) {
        fprintf(stderr, "migsched bench: cannot write %s: %s\n", o.json, strerror(errno));
        ms_geom_destroy(g);
        free(o.policy_buf);
        return 1;
    }
    printf("migsched bench%s: model %s, seed %llu\n", o.quick ? " --quick" : "", m->name,
           (unsigned long long)o.seed);
    machine_line(stdout);
    printf("clock_gettime(CLOCK_MONOTONIC) pair: %.0f ns (included in every latency below)\n",
           clock_overhead_ns());
    if (json != NULL)
        fprintf(json, "{\"model\": \"%s\", \"quick\": %s, \"seed\": %llu, \"clock_pair_ns\": %.0f,"
                      " \"results\": [", m->name, o.quick ? "true" : "false",
                (unsigned long long)o.seed, clock_overhead_ns());
    if (o.place)
        run_place(&o, g, json, &first);
    if (o.mig)
        run_mig(&o, g, json, &first);
    if (o.sim)
        run_sims(&o, g, json, &first);
    if (json != NULL) {
        fprintf(json, "\n]}\n");
        if (fclose(json) != 0) {
            fprintf(stderr, "migsched bench: error writing %s\n", o.json);
            rc = 1;
        }
    }
    ms_geom_destroy(g);
    free(o.policy_buf);
    return rc < 0 ? 0 : rc;
}
