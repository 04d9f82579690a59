/* cmd_experiment.c - `migsched experiment`: the seed's ablation on one node
 * of four A100-40GB GPUs, the baselines, and sweeps of the load-balancing
 * threshold t, the interference beta and the migration cost; writes a
 * report directory (Markdown, CSV, SVG) and prints the main table.
 *
 * Workload (stated choices, see docs/experiment.md): Poisson arrivals at an
 * offered load of 0.5 / 0.8 / 1.1 of the cluster's compute slices, a
 * uniform mix over the five classic profiles, lognormal durations (mean
 * 600 s, sigma 1: GPU job durations are heavy-tailed), a fresh trace per
 * (load, seed), the same traces for every policy.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "migsched/report.h"
#include "migsched/schedule.h"
#include "migsched/sim.h"
#include "migsched/svg.h"
#include "migsched/trace.h"

/* One scheduler configuration in the comparison. */
typedef struct variant {
    const char *label;     /* in tables and plots */
    const char *policy;    /* registry name */
    int balance, dynamic, migration;   /* -1: the policy's default */
    const char *what;
} variant_t;

static const variant_t VARIANTS[] = {
    { "static", "static", -1, -1, -1, "static partitioning (baseline): fixed per-GPU layouts" },
    { "fa-lb", "fa", 1, 0, 0, "+ conditional load balancing (static layouts, no migration)" },
    { "fa-lb-dp", "fa", 1, 1, 0, "+ dynamic partitioning (no migration)" },
    { "fa", "fa", 1, 1, 1, "+ migration: the seed's full scheduler" },
    { "first-fit", "first-fit", -1, -1, -1, "first fit on dynamic GIs" },
    { "best-fit", "best-fit", -1, -1, -1, "best fit on dynamic GIs" },
    { "fgd", "fgd", -1, -1, -1, "FGD adapted to MIG" },
    { "mfi", "mfi", -1, -1, -1, "MFI greedy (Zambianco et al.)" },
    { "node-profile", "node-profile", -1, -1, -1, "node-level layout switching (seed 002)" },
    { "timeslice", "timeslice", -1, -1, -1, "time-slicing, 4 replicas per GPU, no isolation" },
};
#define NVAR ((int)(sizeof(VARIANTS) / sizeof(VARIANTS[0])))
enum { V_STATIC = 0, V_LB = 1, V_LBDP = 2, V_FA = 3 };

static const double LOADS[] = { 0.5, 0.8, 1.1 };
static const char *const LOAD_NAMES[] = { "low", "medium", "high" };
#define NLOAD 3
enum { L_MED = 1, L_HIGH = 2 };

static const double BETAS[] = { 0.0, 0.05, 0.1, 0.2 };
#define NBETA 4
static const int BETA_VARS[] = { V_STATIC, V_LB, V_LBDP, V_FA, 4 /* first-fit */ };
#define NBETAVAR 5

static const double MIGS[] = { 0.0, 10.0, 30.0, 60.0, 120.0, 300.0 };
#define NMIG 6

#define NT_MAX 11

typedef struct opts {
    const char *out;
    int seeds;
    long jobs;
    bool quick;
    int sweep_seeds;
    double mean_s, sigma, beta, migrate_s, create_s;
    int ngpus;
} opts_t;

/* Everything measured, indexed [..][seed]. */
typedef struct results {
    int nseeds;
    size_t njobs;
    ms_metrics_t *main;       /* [NVAR][NLOAD][seeds] */
    double *waits;            /* [NVAR][NLOAD][seeds * njobs] waits, NaN if never started */
    int nsw;                  /* seeds of the sweeps (>= nseeds: the sweeps' differences are small) */
    int nt;
    double tval[NT_MAX];
    ms_metrics_t *tsweep;     /* [nt][2 loads][nsw] */
    int nbeta;
    ms_metrics_t *bsweep;     /* [NBETA][NBETAVAR][nsw] (medium load) */
    int nmig;
    ms_metrics_t *msweep;     /* [NMIG][2 loads][nsw] (fa) */
    ms_metrics_t *nomig;      /* [2 loads][nsw] (fa-lb-dp, the no-migration reference) */
    /* FragCost over time, one run each (medium load, first seed) */
    double *ft[NBETAVAR], *fv[NBETAVAR];
    size_t fn[NBETAVAR];
    ms_segment_t *gantt;      /* fa, medium load, first seed */
    size_t ngantt;
} results_t;

#define MAIN(r, v, l, s) (&(r)->main[((size_t)(v) * NLOAD + (size_t)(l)) * (size_t)(r)->nseeds + (size_t)(s)])

/* The observer of one run. */
typedef struct obs {
    const ms_trace_t *tr;
    double *first;            /* [n] first begin per job, or NULL */
    ms_segment_t *segs;       /* kept segments, if keep_segs */
    size_t nseg, segcap;
    bool keep_segs;
    double *st, *sv;          /* samples (t, mean FragCost), if keep_samples */
    size_t ns, scap;
    bool keep_samples;
    ms_schedule_writer_t *w;
    ms_status_t err;
} obs_t;

static void obs_segment(void *ctx, const ms_segment_t *seg)
{
    obs_t *o = ctx;

    if (o->first != NULL && seg->job >= 0 && (size_t)seg->job < o->tr->n &&
        !(o->first[seg->job] <= seg->begin_s))
        o->first[seg->job] = seg->begin_s;
    if (o->keep_segs && o->err == MS_OK) {
        if (o->nseg == o->segcap) {
            size_t nc = o->segcap ? o->segcap * 2 : 512;
            ms_segment_t *ns = realloc(o->segs, nc * sizeof(*ns));
            if (ns == NULL) {
                o->err = MS_ENOMEM;
                return;
            }
            o->segs = ns;
            o->segcap = nc;
        }
        o->segs[o->nseg++] = *seg;
    }
    if (o->w != NULL)
        ms_schedule_on_segment(o->w, seg);
}

static void obs_sample(void *ctx, double t, double frag, double util, int lazy, int busy,
                       long waiting)
{
    obs_t *o = ctx;

    (void)util;
    (void)lazy;
    (void)busy;
    (void)waiting;
    if (!o->keep_samples || o->err != MS_OK)
        return;
    if (o->ns == o->scap) {
        size_t nc = o->scap ? o->scap * 2 : 512;
        double *a = realloc(o->st, nc * sizeof(*a)), *b;
        if (a == NULL) {
            o->err = MS_ENOMEM;
            return;
        }
        o->st = a;
        b = realloc(o->sv, nc * sizeof(*b));
        if (b == NULL) {
            o->err = MS_ENOMEM;
            return;
        }
        o->sv = b;
        o->scap = nc;
    }
    o->st[o->ns] = t;
    o->sv[o->ns++] = frag;
}

/* Progress on stderr when it is a terminal. */
typedef struct progress {
    bool tty;
    long done, total;
    double t0;
} progress_t;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_step(progress_t *p, const char *what)
{
    p->done++;
    if (!p->tty)
        return;
    fprintf(stderr, "\r\033[K[%ld/%ld %3.0f%%] %.1fs  %s", p->done, p->total,
            100.0 * (double)p->done / (double)(p->total > 0 ? p->total : 1),
            now_s() - p->t0, what);
    if (p->done == p->total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* Run one configuration. t < 0 and the others < 0 keep the defaults. */
static ms_status_t run_one(const opts_t *o, const ms_trace_t *tr, const variant_t *v,
                           double t, double beta, double migrate_s, obs_t *ob,
                           ms_metrics_t *m, ms_diag_t *d)
{
    ms_sim_cfg_t cfg;
    double t0;
    ms_status_t st;

    ms_sim_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find(v->policy);
    if (cfg.policy == NULL) {
        ms_diag_set(d, NULL, 0, "policy", "policy '%s' is not in the registry", v->policy);
        return MS_ENOENT;
    }
    ms_policy_cfg_defaults(&cfg.pcfg);
    if (v->balance >= 0)
        cfg.pcfg.balance = v->balance != 0;
    if (v->dynamic >= 0)
        cfg.pcfg.dynamic = v->dynamic != 0;
    if (v->migration >= 0)
        cfg.pcfg.migration = v->migration != 0;
    if (t >= 0.0)
        cfg.pcfg.lb_threshold = t;
    cfg.ngpus = o->ngpus;
    cfg.gpus_per_node = 0;
    cfg.beta = beta >= 0.0 ? beta : o->beta;
    cfg.migrate_s = migrate_s >= 0.0 ? migrate_s : o->migrate_s;
    cfg.create_s = o->create_s;
    if (ob != NULL) {
        cfg.ctx = ob;
        cfg.on_segment = obs_segment;
        if (ob->keep_samples) {
            cfg.on_sample = obs_sample;
            cfg.sample_every_s = 60.0;
        }
    }
    t0 = now_s();
    st = ms_sim_run(&cfg, tr, m, d);
    m->wall_s = now_s() - t0;
    if (st == MS_OK && ob != NULL && ob->err != MS_OK)
        st = ob->err;
    return st;
}

/* --- output helpers ------------------------------------------------------ */

static double mean_of(const ms_metrics_t *m, int n, size_t off)
{
    double x[64], mu, sd;
    int i;

    for (i = 0; i < n && i < 64; i++)
        x[i] = *(const double *)(const void *)((const char *)&m[i] + off);
    ms_report_mean_sd(x, (size_t)(n < 64 ? n : 64), &mu, &sd);
    return mu;
}

static double sd_of(const ms_metrics_t *m, int n, size_t off)
{
    double x[64], mu, sd;
    int i;

    for (i = 0; i < n && i < 64; i++)
        x[i] = *(const double *)(const void *)((const char *)&m[i] + off);
    ms_report_mean_sd(x, (size_t)(n < 64 ? n : 64), &mu, &sd);
    return sd;
}

#define F(field) offsetof(ms_metrics_t, field)

/* Mean over seeds of the paired relative improvement (base - x) / base. */
static double paired_gain(const ms_metrics_t *base, const ms_metrics_t *x, int n, size_t off)
{
    double s = 0.0;
    int i, k = 0;

    for (i = 0; i < n; i++) {
        double b = *(const double *)(const void *)((const char *)&base[i] + off);
        double v = *(const double *)(const void *)((const char *)&x[i] + off);
        if (isfinite(b) && isfinite(v) && b > 0.0) {
            s += (b - v) / b;
            k++;
        }
    }
    return k > 0 ? 100.0 * s / k : NAN;
}

static double gap_pct(const ms_metrics_t *m, int n)
{
    double s = 0.0;
    int i, k = 0;

    for (i = 0; i < n; i++)
        if (m[i].lower_bound_s > 0.0 && isfinite(m[i].makespan_s)) {
            s += m[i].makespan_s / m[i].lower_bound_s - 1.0;
            k++;
        }
    return k > 0 ? 100.0 * s / k : NAN;
}

static long sum_long(const ms_metrics_t *m, int n, size_t off)
{
    long s = 0;
    int i;

    for (i = 0; i < n; i++)
        s += *(const long *)(const void *)((const char *)&m[i] + off);
    return s;
}

/* --- the experiment ------------------------------------------------------ */

static void results_free(results_t *r)
{
    int i;

    free(r->main);
    free(r->waits);
    free(r->tsweep);
    free(r->bsweep);
    free(r->msweep);
    free(r->nomig);
    for (i = 0; i < NBETAVAR; i++) {
        free(r->ft[i]);
        free(r->fv[i]);
    }
    free(r->gantt);
}

static ms_status_t write_run_dir(const opts_t *o, const char *name, const ms_trace_t *tr,
                                 const variant_t *v, ms_diag_t *d)
{
    char dir[4096];
    FILE *f = NULL;
    obs_t ob;
    ms_metrics_t m;
    ms_status_t st, st2;

    if ((size_t)snprintf(dir, sizeof(dir), "%s/runs/%s", o->out, name) >= sizeof(dir))
        return MS_ERANGE;
    if ((st = ms_report_mkdirs(dir)) != MS_OK)
        return st;
    if ((st = ms_report_fopen(dir, "trace.csv", &f)) != MS_OK)
        return st;
    st = ms_trace_write(f, tr);
    if (fclose(f) != 0 && st == MS_OK)
        st = MS_EIO;
    if (st != MS_OK)
        return st;
    if ((st = ms_report_fopen(dir, "schedule.csv", &f)) != MS_OK)
        return st;
    memset(&ob, 0, sizeof(ob));
    ob.tr = tr;
    st = ms_schedule_writer_open(f, tr, &ob.w);
    if (st == MS_OK)
        st = run_one(o, tr, v, -1.0, -1.0, -1.0, &ob, &m, d);
    st2 = ms_schedule_writer_close(ob.w);
    if (st == MS_OK)
        st = st2;
    if (fclose(f) != 0 && st == MS_OK)
        st = MS_EIO;
    if (st != MS_OK)
        return st;
    if ((st = ms_report_fopen(dir, "metrics.json", &f)) != MS_OK)
        return st;
    ms_metrics_write_json(f, &m, v->label);
    if (ferror(f))
        st = MS_EIO;
    if (fclose(f) != 0)
        st = MS_EIO;
    return st;
}

static ms_status_t run_all(const opts_t *o, const ms_geom_t *g, results_t *r,
                           progress_t *pg, ms_diag_t *d)
{
    ms_trace_t *tr[NLOAD][64];
    int l, s, v, i, k;
    ms_status_t st = MS_OK;
    obs_t ob;
    char what[160];

    memset(tr, 0, sizeof(tr));
    for (l = 0; l < NLOAD && st == MS_OK; l++)
        for (s = 0; s < (l == 0 ? r->nseeds : r->nsw) && st == MS_OK; s++) {
            ms_gen_cfg_t gc;
            memset(&gc, 0, sizeof(gc));
            gc.njobs = r->njobs;
            gc.load = LOADS[l];
            gc.ngpus = o->ngpus;
            gc.mix = NULL;
            gc.dist = 2;
            gc.mean_s = o->mean_s;
            gc.sigma = o->sigma;
            gc.seed = 20250u + (uint64_t)s * 7919u + (uint64_t)l;
            st = ms_trace_generate(g, &gc, &tr[l][s]);
            if (st != MS_OK)
                ms_diag_set(d, NULL, 0, "trace", "cannot generate a trace");
        }

    /* 1. the main grid: every variant x load x seed */
    for (v = 0; v < NVAR && st == MS_OK; v++)
        for (l = 0; l < NLOAD && st == MS_OK; l++)
            for (s = 0; s < r->nseeds && st == MS_OK; s++) {
                double *w = r->waits + (((size_t)v * NLOAD + (size_t)l) * (size_t)r->nseeds +
                                        (size_t)s) * r->njobs;
                size_t j;
                memset(&ob, 0, sizeof(ob));
                ob.tr = tr[l][s];
                ob.first = w;
                for (j = 0; j < r->njobs; j++)
                    w[j] = NAN;
                ob.keep_samples = l == L_MED && s == 0 && v < NBETAVAR;
                ob.keep_segs = l == L_MED && s == 0 && v == V_FA;
                snprintf(what, sizeof(what), "%s, %s load, seed %d", VARIANTS[v].label,
                         LOAD_NAMES[l], s + 1);
                st = run_one(o, tr[l][s], &VARIANTS[v], -1.0, -1.0, -1.0, &ob,
                             MAIN(r, v, l, s), d);
                for (j = 0; j < r->njobs; j++)
                    if (isfinite(w[j]))
                        w[j] -= tr[l][s]->jobs[j].arrival;
                if (ob.keep_samples && st == MS_OK) {
                    r->ft[v] = ob.st;
                    r->fv[v] = ob.sv;
                    r->fn[v] = ob.ns;
                } else {
                    free(ob.st);
                    free(ob.sv);
                }
                if (ob.keep_segs && st == MS_OK) {
                    r->gantt = ob.segs;
                    r->ngantt = ob.nseg;
                } else {
                    free(ob.segs);
                }
                progress_step(pg, what);
            }

    /* 2. the threshold sweep: fa at medium and high load */
    for (i = 0; i < r->nt && st == MS_OK; i++)
        for (k = 0; k < 2 && st == MS_OK; k++)
            for (s = 0; s < r->nsw && st == MS_OK; s++) {
                snprintf(what, sizeof(what), "t sweep: t=%.2f, %s load, seed %d", r->tval[i],
                         LOAD_NAMES[L_MED + k], s + 1);
                st = run_one(o, tr[L_MED + k][s], &VARIANTS[V_FA], r->tval[i], -1.0, -1.0, NULL,
                             &r->tsweep[((size_t)i * 2 + (size_t)k) * (size_t)r->nsw + (size_t)s], d);
                progress_step(pg, what);
            }

    /* 3. the interference sweep at medium load */
    for (i = 0; i < r->nbeta && st == MS_OK; i++)
        for (k = 0; k < NBETAVAR && st == MS_OK; k++)
            for (s = 0; s < r->nsw && st == MS_OK; s++) {
                snprintf(what, sizeof(what), "beta sweep: beta=%.2f, %s, seed %d", BETAS[i],
                         VARIANTS[BETA_VARS[k]].label, s + 1);
                st = run_one(o, tr[L_MED][s], &VARIANTS[BETA_VARS[k]], -1.0, BETAS[i], -1.0, NULL,
                             &r->bsweep[((size_t)i * NBETAVAR + (size_t)k) * (size_t)r->nsw + (size_t)s], d);
                progress_step(pg, what);
            }

    /* 4. the migration-cost sweep: fa at medium and high load */
    for (k = 0; k < 2 && st == MS_OK; k++)
        for (s = 0; s < r->nsw && st == MS_OK; s++) {
            snprintf(what, sizeof(what), "migration sweep: no migration, %s load, seed %d",
                     LOAD_NAMES[L_MED + k], s + 1);
            st = run_one(o, tr[L_MED + k][s], &VARIANTS[V_LBDP], -1.0, -1.0, -1.0, NULL,
                         &r->nomig[(size_t)k * (size_t)r->nsw + (size_t)s], d);
            progress_step(pg, what);
        }
    for (i = 0; i < r->nmig && st == MS_OK; i++)
        for (k = 0; k < 2 && st == MS_OK; k++)
            for (s = 0; s < r->nsw && st == MS_OK; s++) {
                snprintf(what, sizeof(what), "migration sweep: %gs, %s load, seed %d", MIGS[i],
                         LOAD_NAMES[L_MED + k], s + 1);
                st = run_one(o, tr[L_MED + k][s], &VARIANTS[V_FA], -1.0, -1.0, MIGS[i], NULL,
                             &r->msweep[((size_t)i * 2 + (size_t)k) * (size_t)r->nsw + (size_t)s], d);
                progress_step(pg, what);
            }

    /* 5. two runs written out in full, for `migsched report` */
    if (st == MS_OK)
        st = write_run_dir(o, "fa-medium", tr[L_MED][0], &VARIANTS[V_FA], d);
    if (st == MS_OK)
        st = write_run_dir(o, "static-medium", tr[L_MED][0], &VARIANTS[V_STATIC], d);
    progress_step(pg, "writing the report");

    for (l = 0; l < NLOAD; l++)
        for (s = 0; s < r->nsw; s++)
            ms_trace_free(tr[l][s]);
    return st;
}

/* --- report -------------------------------------------------------------- */

typedef struct reco {
    double t_best, t_score[NT_MAX];
    int t_best_i, t_seed_i;   /* index of the best t and of the seed's 0.4 (nearest) */
    double mig_limit;     /* largest swept migration cost that still pays, NaN if none */
    bool mig_all;         /* every swept cost pays */
} reco_t;

static double tsw(const results_t *r, int i, int k, size_t off)
{
    return mean_of(&r->tsweep[((size_t)i * 2 + (size_t)k) * (size_t)r->nsw], r->nsw, off);
}

static double msw(const results_t *r, int i, int k, size_t off)
{
    return mean_of(&r->msweep[((size_t)i * 2 + (size_t)k) * (size_t)r->nsw], r->nsw, off);
}

static double nomig(const results_t *r, int k, size_t off)
{
    return mean_of(&r->nomig[(size_t)k * (size_t)r->nsw], r->nsw, off);
}

/* t: the threshold with the least mean relative regret in makespan and mean
 * JCT over medium and high load. Migration: the largest swept cost at which
 * fa's mean JCT still beats fa without migration at both loads. */
static void recommend(const results_t *r, reco_t *rc)
{
    int i, k, best = 0;

    for (i = 0; i < r->nt; i++)
        rc->t_score[i] = 0.0;
    for (k = 0; k < 2; k++) {
        double mk_min = INFINITY, jct_min = INFINITY;
        for (i = 0; i < r->nt; i++) {
            mk_min = fmin(mk_min, tsw(r, i, k, F(makespan_s)));
            jct_min = fmin(jct_min, tsw(r, i, k, F(mean_jct_s)));
        }
        for (i = 0; i < r->nt; i++)
            rc->t_score[i] += 0.25 * (tsw(r, i, k, F(makespan_s)) / mk_min - 1.0) +
                              0.25 * (tsw(r, i, k, F(mean_jct_s)) / jct_min - 1.0);
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
            if (!(msw(r, i, k, F(mean_jct_s)) < nomig(r, k, F(mean_jct_s))))
                pays = false;
        if (pays)
            rc->mig_limit = MIGS[i];
        else
            rc->mig_all = false;
    }
}

static void print_main_table(FILE *f, const results_t *r, bool md)
{
    int v, l;

    if (md)
        fprintf(f, "| policy | load | makespan s | mean wait s | p99 wait s | mean exec s | "
                   "makespan vs static | gap to bound | mean FragCost | migrations |\n"
                   "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    else
        fprintf(f, "%-13s %-6s %11s %9s %11s %9s %11s %10s %10s %6s\n", "policy", "load",
                "makespan_s", "wait_s", "p99wait_s", "exec_s", "vs_static", "gap_lb", "fragcost",
                "migr");
    for (l = 0; l < NLOAD; l++)
        for (v = 0; v < NVAR; v++) {
            const ms_metrics_t *m = MAIN(r, v, l, 0);
            const ms_metrics_t *b = MAIN(r, V_STATIC, l, 0);
            int n = r->nseeds;
            double imp = paired_gain(b, m, n, F(makespan_s)), gap = gap_pct(m, n);
            if (md)
                fprintf(f, "| %s | %s (%.1f) | %.0f ± %.0f | %.0f | %.0f | %.0f | %+.1f%% | %.1f%% | %.3f | %.1f |\n",
                        VARIANTS[v].label, LOAD_NAMES[l], LOADS[l], mean_of(m, n, F(makespan_s)),
                        sd_of(m, n, F(makespan_s)), mean_of(m, n, F(mean_wait_s)),
                        mean_of(m, n, F(p99_wait_s)), mean_of(m, n, F(mean_exec_s)), imp, gap,
                        mean_of(m, n, F(mean_fragcost)),
                        (double)sum_long(m, n, F(migrations)) / n);
            else
                fprintf(f, "%-13s %-6s %11.0f %9.0f %11.0f %9.0f %+10.1f%% %9.1f%% %10.3f %6.1f\n",
                        VARIANTS[v].label, LOAD_NAMES[l], mean_of(m, n, F(makespan_s)),
                        mean_of(m, n, F(mean_wait_s)), mean_of(m, n, F(p99_wait_s)),
                        mean_of(m, n, F(mean_exec_s)), imp, gap, mean_of(m, n, F(mean_fragcost)),
                        (double)sum_long(m, n, F(migrations)) / n);
        }
}

static ms_status_t close_checked(FILE *f, ms_status_t st)
{
    if (ferror(f) && st == MS_OK)
        st = MS_EIO;
    if (fclose(f) != 0 && st == MS_OK)
        st = MS_EIO;
    return st;
}

static ms_status_t write_csvs(const opts_t *o, const results_t *r)
{
    FILE *f;
    ms_status_t st;
    int v, l, s, i, k;
    int n = r->nseeds;

    if ((st = ms_report_fopen(o->out, "summary.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "policy,load_name,load,seeds,makespan_s,makespan_sd,mean_wait_s,mean_wait_sd,"
               "p99_wait_s,mean_exec_s,mean_jct_s,mean_slowdown,makespan_vs_static_pct,"
               "wait_vs_static_pct,gap_to_bound_pct,lower_bound_s,mean_fragcost,"
               "mean_utilization,migrations,reconfigurations,jobs_rejected\n");
    for (v = 0; v < NVAR; v++)
        for (l = 0; l < NLOAD; l++) {
            const ms_metrics_t *m = MAIN(r, v, l, 0), *b = MAIN(r, V_STATIC, l, 0);
            fprintf(f, "%s,%s,%.2f,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.3f,%.3f,%.3f,"
                       "%.3f,%.5f,%.5f,%.2f,%.2f,%.2f\n",
                    VARIANTS[v].label, LOAD_NAMES[l], LOADS[l], n, mean_of(m, n, F(makespan_s)),
                    sd_of(m, n, F(makespan_s)), mean_of(m, n, F(mean_wait_s)),
                    sd_of(m, n, F(mean_wait_s)), mean_of(m, n, F(p99_wait_s)),
                    mean_of(m, n, F(mean_exec_s)), mean_of(m, n, F(mean_jct_s)),
                    mean_of(m, n, F(mean_slowdown)), paired_gain(b, m, n, F(makespan_s)),
                    paired_gain(b, m, n, F(mean_wait_s)), gap_pct(m, n),
                    mean_of(m, n, F(lower_bound_s)), mean_of(m, n, F(mean_fragcost)),
                    mean_of(m, n, F(mean_utilization)),
                    (double)sum_long(m, n, F(migrations)) / n,
                    (double)sum_long(m, n, F(reconfigurations)) / n,
                    (double)sum_long(m, n, F(jobs_rejected)) / n);
        }
    if ((st = close_checked(f, MS_OK)) != MS_OK)
        return st;

    if ((st = ms_report_fopen(o->out, "runs.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "policy,load_name,load,seed,makespan_s,lower_bound_s,mean_wait_s,p99_wait_s,"
               "mean_exec_s,mean_jct_s,mean_slowdown,mean_fragcost,mean_utilization,migrations,"
               "migrations_bbm,reconfigurations,jobs_completed,jobs_rejected,wall_s\n");
    for (v = 0; v < NVAR; v++)
        for (l = 0; l < NLOAD; l++)
            for (s = 0; s < n; s++) {
                const ms_metrics_t *m = MAIN(r, v, l, s);
                fprintf(f, "%s,%s,%.2f,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.5f,%.5f,%ld,%ld,"
                           "%ld,%ld,%ld,%.4f\n",
                        VARIANTS[v].label, LOAD_NAMES[l], LOADS[l], s + 1, m->makespan_s,
                        m->lower_bound_s, m->mean_wait_s, m->p99_wait_s, m->mean_exec_s,
                        m->mean_jct_s, m->mean_slowdown, m->mean_fragcost, m->mean_utilization,
                        m->migrations, m->migrations_bbm, m->reconfigurations, m->jobs_completed,
                        m->jobs_rejected, m->wall_s);
            }
    if ((st = close_checked(f, MS_OK)) != MS_OK)
        return st;

    n = r->nsw;   /* the sweeps have their own seeds */
    if ((st = ms_report_fopen(o->out, "sweep_t.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "t,load_name,makespan_s,mean_wait_s,p99_wait_s,mean_exec_s,mean_jct_s,"
               "mean_slowdown,mean_fragcost,migrations\n");
    for (i = 0; i < r->nt; i++)
        for (k = 0; k < 2; k++) {
            const ms_metrics_t *m = &r->tsweep[((size_t)i * 2 + (size_t)k) * (size_t)n];
            fprintf(f, "%.2f,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.5f,%.2f\n", r->tval[i],
                    LOAD_NAMES[L_MED + k], mean_of(m, n, F(makespan_s)),
                    mean_of(m, n, F(mean_wait_s)), mean_of(m, n, F(p99_wait_s)),
                    mean_of(m, n, F(mean_exec_s)), mean_of(m, n, F(mean_jct_s)),
                    mean_of(m, n, F(mean_slowdown)), mean_of(m, n, F(mean_fragcost)),
                    (double)sum_long(m, n, F(migrations)) / n);
        }
    if ((st = close_checked(f, MS_OK)) != MS_OK)
        return st;

    if ((st = ms_report_fopen(o->out, "sweep_beta.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "beta,policy,makespan_s,mean_wait_s,mean_exec_s,mean_jct_s,mean_slowdown\n");
    for (i = 0; i < r->nbeta; i++)
        for (k = 0; k < NBETAVAR; k++) {
            const ms_metrics_t *m = &r->bsweep[((size_t)i * NBETAVAR + (size_t)k) * (size_t)n];
            fprintf(f, "%.3f,%s,%.3f,%.3f,%.3f,%.3f,%.5f\n", BETAS[i],
                    VARIANTS[BETA_VARS[k]].label, mean_of(m, n, F(makespan_s)),
                    mean_of(m, n, F(mean_wait_s)), mean_of(m, n, F(mean_exec_s)),
                    mean_of(m, n, F(mean_jct_s)), mean_of(m, n, F(mean_slowdown)));
        }
    if ((st = close_checked(f, MS_OK)) != MS_OK)
        return st;

    if ((st = ms_report_fopen(o->out, "sweep_migration.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "migrate_s,load_name,makespan_s,mean_wait_s,mean_exec_s,mean_jct_s,migrations,"
               "nomig_mean_jct_s\n");
    for (i = 0; i < r->nmig; i++)
        for (k = 0; k < 2; k++) {
            const ms_metrics_t *m = &r->msweep[((size_t)i * 2 + (size_t)k) * (size_t)n];
            fprintf(f, "%.1f,%s,%.3f,%.3f,%.3f,%.3f,%.2f,%.3f\n", MIGS[i], LOAD_NAMES[L_MED + k],
                    mean_of(m, n, F(makespan_s)), mean_of(m, n, F(mean_wait_s)),
                    mean_of(m, n, F(mean_exec_s)), mean_of(m, n, F(mean_jct_s)),
                    (double)sum_long(m, n, F(migrations)) / n,
                    nomig(r, k, F(mean_jct_s)));
        }
    return close_checked(f, MS_OK);
}

/* Grouped bars of one metric: groups = loads, series = variants. */
static ms_status_t svg_metric_bars(const opts_t *o, const results_t *r, const char *file,
                                   const char *title, const char *ylabel, size_t off)
{
    double val[NLOAD * NVAR], err[NLOAD * NVAR];
    const char *series[NVAR], *groups[NLOAD];
    ms_svg_chart_t ch;
    ms_svg_bars_t b;
    FILE *f;
    int v, l;
    ms_status_t st;

    for (v = 0; v < NVAR; v++)
        series[v] = VARIANTS[v].label;
    for (l = 0; l < NLOAD; l++) {
        groups[l] = LOAD_NAMES[l];
        for (v = 0; v < NVAR; v++) {
            val[l * NVAR + v] = mean_of(MAIN(r, v, l, 0), r->nseeds, off);
            err[l * NVAR + v] = sd_of(MAIN(r, v, l, 0), r->nseeds, off);
        }
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.ylabel = ylabel;
    ch.xlabel = "offered load (low 0.5, medium 0.8, high 1.1); error bars: sd over seeds";
    ch.width = 900;
    b.ngroups = NLOAD;
    b.nseries = NVAR;
    b.groups = groups;
    b.series = series;
    b.value = val;
    b.err = err;
    if ((st = ms_report_fopen(o->out, file, &f)) != MS_OK)
        return st;
    return close_checked(f, ms_svg_bars(f, &ch, &b));
}

static ms_status_t svg_lines_file(const opts_t *o, const char *file, const ms_svg_chart_t *ch,
                                  const ms_svg_series_t *s, int n)
{
    FILE *f;
    ms_status_t st;

    if ((st = ms_report_fopen(o->out, file, &f)) != MS_OK)
        return st;
    return close_checked(f, ms_svg_lines(f, ch, s, n));
}

static ms_status_t write_svgs(const opts_t *o, const ms_geom_t *g, const results_t *r)
{
    ms_status_t st;
    ms_svg_chart_t ch;
    ms_svg_series_t ser[NBETAVAR > 2 ? NBETAVAR : 2];
    double xs[NT_MAX > NMIG ? NT_MAX : NMIG], ys[NBETAVAR][NT_MAX > NBETA ? NT_MAX : NBETA];
    int i, k, l;
    FILE *f;

    if ((st = svg_metric_bars(o, r, "makespan.svg", "Makespan by policy and load", "makespan (s)",
                              F(makespan_s))) != MS_OK ||
        (st = svg_metric_bars(o, r, "wait.svg", "Mean waiting time by policy and load",
                              "mean wait (s)", F(mean_wait_s))) != MS_OK ||
        (st = svg_metric_bars(o, r, "exec.svg", "Mean execution time by policy and load",
                              "mean execution time (s)", F(mean_exec_s))) != MS_OK)
        return st;

    /* FragCost over time, medium load, first seed */
    memset(&ch, 0, sizeof(ch));
    ch.title = "Mean FragCost over time (medium load, seed 1)";
    ch.xlabel = "time (s)";
    ch.ylabel = "mean FragCost over the 4 GPUs";
    ch.y_from_zero = true;
    ch.step = true;
    for (k = 0; k < NBETAVAR; k++) {
        ser[k].name = VARIANTS[BETA_VARS[k]].label;
        ser[k].x = r->ft[BETA_VARS[k]];
        ser[k].y = r->fv[BETA_VARS[k]];
        ser[k].n = r->fn[BETA_VARS[k]];
    }
    if ((st = svg_lines_file(o, "fragcost_time.svg", &ch, ser, NBETAVAR)) != MS_OK)
        return st;

    /* Gantt of fa, medium load, first seed */
    memset(&ch, 0, sizeof(ch));
    ch.title = "Slice map over time: fa, medium load, seed 1";
    ch.xlabel = "time (s); rows: GPU x memory slice";
    ch.width = 1200;
    if ((st = ms_report_fopen(o->out, "gantt_fa_medium.svg", &f)) != MS_OK)
        return st;
    if ((st = close_checked(f, ms_svg_gantt(f, &ch, g, o->ngpus, r->gantt, r->ngantt))) != MS_OK)
        return st;

    /* wait CDFs, all seeds pooled, medium and high load */
    for (l = L_MED; l <= L_HIGH; l++) {
        const double *samples[NVAR];
        size_t n[NVAR];
        const char *names[NVAR];
        char file[64], title[96];
        int v;
        for (v = 0; v < NVAR; v++) {
            samples[v] = r->waits + ((size_t)v * NLOAD + (size_t)l) * (size_t)r->nseeds * r->njobs;
            n[v] = (size_t)r->nseeds * r->njobs;
            names[v] = VARIANTS[v].label;
        }
        snprintf(file, sizeof(file), "wait_cdf_%s.svg", LOAD_NAMES[l]);
        snprintf(title, sizeof(title), "Waiting-time CDF, %s load (all seeds)", LOAD_NAMES[l]);
        memset(&ch, 0, sizeof(ch));
        ch.title = title;
        ch.xlabel = "waiting time (s)";
        ch.ylabel = "fraction of jobs";
        if ((st = ms_report_fopen(o->out, file, &f)) != MS_OK)
            return st;
        if ((st = close_checked(f, ms_svg_cdf(f, &ch, names, samples, n, NVAR))) != MS_OK)
            return st;
    }

    /* t sweep: four charts, medium and high load */
    {
        static const struct { const char *file, *title, *ylabel; size_t off; } TS[] = {
            { "sweep_t_makespan.svg", "fa: makespan vs threshold t", "makespan (s)", F(makespan_s) },
            { "sweep_t_wait.svg", "fa: mean wait vs threshold t", "mean wait (s)", F(mean_wait_s) },
            { "sweep_t_fragcost.svg", "fa: mean FragCost vs threshold t", "mean FragCost", F(mean_fragcost) },
            { "sweep_t_slowdown.svg", "fa: mean slowdown vs threshold t", "mean slowdown (exec / duration)", F(mean_slowdown) },
        };
        int c;
        for (i = 0; i < r->nt; i++)
            xs[i] = r->tval[i];
        for (c = 0; c < 4; c++) {
            for (k = 0; k < 2; k++) {
                for (i = 0; i < r->nt; i++)
                    ys[k][i] = tsw(r, i, k, TS[c].off);
                ser[k].name = LOAD_NAMES[L_MED + k];
                ser[k].x = xs;
                ser[k].y = ys[k];
                ser[k].n = (size_t)r->nt;
            }
            memset(&ch, 0, sizeof(ch));
            ch.title = TS[c].title;
            ch.xlabel = "load-balancing threshold t";
            ch.ylabel = TS[c].ylabel;
            if ((st = svg_lines_file(o, TS[c].file, &ch, ser, 2)) != MS_OK)
                return st;
        }
    }

    /* beta sweep: mean JCT per policy */
    for (i = 0; i < r->nbeta; i++)
        xs[i] = BETAS[i];
    for (k = 0; k < NBETAVAR; k++) {
        for (i = 0; i < r->nbeta; i++)
            ys[k][i] = mean_of(&r->bsweep[((size_t)i * NBETAVAR + (size_t)k) * (size_t)r->nsw],
                               r->nsw, F(mean_jct_s));
        ser[k].name = VARIANTS[BETA_VARS[k]].label;
        ser[k].x = xs;
        ser[k].y = ys[k];
        ser[k].n = (size_t)r->nbeta;
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = "Interference: mean job completion time vs beta (medium load)";
    ch.xlabel = "beta (slowdown per other busy instance on the GPU)";
    ch.ylabel = "mean JCT (s)";
    if ((st = svg_lines_file(o, "sweep_beta.svg", &ch, ser, NBETAVAR)) != MS_OK)
        return st;

    /* migration cost sweep: fa's mean JCT vs the no-migration variant */
    {
        double base[2][NMIG];
        ms_svg_series_t ms4[4];
        static const char *const NM[4] = { "fa, medium", "fa-lb-dp (no migration), medium",
                                           "fa, high", "fa-lb-dp (no migration), high" };
        for (i = 0; i < r->nmig; i++)
            xs[i] = MIGS[i];
        for (k = 0; k < 2; k++)
            for (i = 0; i < r->nmig; i++) {
                ys[k][i] = msw(r, i, k, F(mean_jct_s));
                base[k][i] = nomig(r, k, F(mean_jct_s));
            }
        for (k = 0; k < 4; k++) {
            ms4[k].name = NM[k];
            ms4[k].x = xs;
            ms4[k].y = k % 2 == 0 ? ys[k / 2] : base[k / 2];
            ms4[k].n = (size_t)r->nmig;
        }
        memset(&ch, 0, sizeof(ch));
        ch.title = "Migration cost: mean JCT vs time per move";
        ch.xlabel = "migrate_s (no progress while a job moves)";
        ch.ylabel = "mean JCT (s)";
        if ((st = svg_lines_file(o, "sweep_migration.svg", &ch, ms4, 4)) != MS_OK)
            return st;
    }
    return MS_OK;
}

static ms_status_t write_readme(const opts_t *o, const results_t *r, const reco_t *rc,
                                double wall)
{
    FILE *f;
    ms_status_t st;
    int n = r->nseeds, i, k, l, v;

    if ((st = ms_report_fopen(o->out, "README.md", &f)) != MS_OK)
        return st;
    fprintf(f, "# migsched experiment: the fragmentation-aware scheduler, ablated\n\n"
               "Generated by `migsched experiment%s --seeds %d --sweep-seeds %d --jobs %zu` in %.1f s.\n"
               "docs/experiment.md explains the set-up and discusses the results.\n\n",
            o->quick ? " --quick" : "", n, r->nsw, r->njobs, wall);
    fprintf(f, "## Set-up\n\n"
               "- Cluster: one node, %d x A100-40GB, the five classic profiles "
               "(1g.5gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb).\n"
               "- Workload: %zu jobs per trace, Poisson arrivals at offered load 0.5 / 0.8 / 1.1 of "
               "the cluster's compute slices, profiles uniform over the five, durations lognormal "
               "(mean %.0f s, sigma %.1f); %d seeds per load (%d in the sweeps); every policy sees the same "
               "traces.\n"
               "- Simulator: interference beta %.2f (a job runs at 1/(1 + beta x other busy "
               "instances on its GPU)), GI creation %.0f s, migration %.0f s without progress, "
               "FCFS with backfilling.\n"
               "- Variants:\n",
            o->ngpus, r->njobs, o->mean_s, o->sigma, n, r->nsw, o->beta, o->create_s, o->migrate_s);
    for (v = 0; v < NVAR; v++)
        fprintf(f, "  - `%s`: %s\n", VARIANTS[v].label, VARIANTS[v].what);
    fprintf(f, "\nMetrics are means over seeds (makespan also ± sd); \"makespan vs static\" is the "
               "mean paired improvement over the static baseline on the same trace (positive = "
               "better); \"gap to bound\" is makespan / lower bound - 1 (algorithms.md §7). "
               "Waiting time is first start minus arrival; execution time is first start to end, "
               "including interference slowdown and migrations.\n\n");
    fprintf(f, "## Results\n\n");
    print_main_table(f, r, true);

    fprintf(f, "\n## The seed's claims, measured\n\n"
               "| claim (seed 000) | load | measured |\n|---|---|---:|\n");
    for (l = 0; l < NLOAD; l++)
        fprintf(f, "| all three techniques: makespan 13-35%% better than static | %s | %+.1f%% |\n",
                LOAD_NAMES[l], paired_gain(MAIN(r, V_STATIC, l, 0), MAIN(r, V_FA, l, 0), n, F(makespan_s)));
    for (l = 0; l < NLOAD; l++)
        fprintf(f, "| dynamic partitioning: mean wait >= 30%% lower than static (static -> fa-lb-dp / fa-lb -> fa-lb-dp) | %s | %+.1f%% / %+.1f%% |\n",
                LOAD_NAMES[l],
                paired_gain(MAIN(r, V_STATIC, l, 0), MAIN(r, V_LBDP, l, 0), n, F(mean_wait_s)),
                paired_gain(MAIN(r, V_LB, l, 0), MAIN(r, V_LBDP, l, 0), n, F(mean_wait_s)));
    for (l = 0; l < NLOAD; l++)
        fprintf(f, "| migration: execution time 6-10%% lower (fa-lb-dp -> fa) | %s | %+.1f%% |\n",
                LOAD_NAMES[l], paired_gain(MAIN(r, V_LBDP, l, 0), MAIN(r, V_FA, l, 0), n, F(mean_exec_s)));
    fprintf(f, "\nPositive = lower (better) than the reference.\n\n");

    fprintf(f, "![makespan](makespan.svg)\n\n![mean wait](wait.svg)\n\n![mean execution time](exec.svg)\n\n"
               "![wait CDF medium](wait_cdf_medium.svg)\n\n![wait CDF high](wait_cdf_high.svg)\n\n"
               "![FragCost over time](fragcost_time.svg)\n\n![Gantt](gantt_fa_medium.svg)\n\n");

    n = r->nsw;   /* the sweeps have their own seeds */
    fprintf(f, "## Sweep of the load-balancing threshold t (fa, all techniques on)\n\n"
               "%d seeds per point. Utilisation moves in steps of 1/7, so thresholds between two "
               "multiples of 1/7 (0.3 and 0.4, 0.6 and 0.7) classify GPUs identically. "
               "t = 0 and t = 1 switch balancing off (no GPU is Lazy, or every GPU is).\n\n"
               "| t | load | makespan s | mean wait s | mean exec s | mean JCT s | mean slowdown | mean FragCost | score |\n"
               "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n", n);
    for (i = 0; i < r->nt; i++)
        for (k = 0; k < 2; k++)
            fprintf(f, "| %.1f | %s | %.0f | %.0f | %.0f | %.0f | %.4f | %.4f | %.4f |\n", r->tval[i],
                    LOAD_NAMES[L_MED + k], tsw(r, i, k, F(makespan_s)), tsw(r, i, k, F(mean_wait_s)),
                    tsw(r, i, k, F(mean_exec_s)), tsw(r, i, k, F(mean_jct_s)),
                    tsw(r, i, k, F(mean_slowdown)), tsw(r, i, k, F(mean_fragcost)),
                    rc->t_score[i]);
    fprintf(f, "\nScore per t (mean relative regret in makespan and mean JCT over medium and high "
               "load; 0 = best in both):");
    for (i = 0; i < r->nt; i++)
        fprintf(f, " t=%.1f: %.4f%s", r->tval[i], rc->t_score[i], i + 1 < r->nt ? ";" : "\n\n");
    fprintf(f, "![t vs makespan](sweep_t_makespan.svg)\n\n![t vs wait](sweep_t_wait.svg)\n\n"
               "![t vs FragCost](sweep_t_fragcost.svg)\n\n![t vs slowdown](sweep_t_slowdown.svg)\n\n");

    fprintf(f, "## Sweep of the interference beta (medium load, %d seeds)\n\n"
               "| beta | policy | makespan s | mean wait s | mean exec s | mean JCT s | mean slowdown |\n"
               "|---:|---|---:|---:|---:|---:|---:|\n", n);
    for (i = 0; i < r->nbeta; i++)
        for (k = 0; k < NBETAVAR; k++) {
            const ms_metrics_t *m = &r->bsweep[((size_t)i * NBETAVAR + (size_t)k) * (size_t)n];
            fprintf(f, "| %.2f | %s | %.0f | %.0f | %.0f | %.0f | %.4f |\n", BETAS[i],
                    VARIANTS[BETA_VARS[k]].label, mean_of(m, n, F(makespan_s)),
                    mean_of(m, n, F(mean_wait_s)), mean_of(m, n, F(mean_exec_s)),
                    mean_of(m, n, F(mean_jct_s)), mean_of(m, n, F(mean_slowdown)));
        }
    fprintf(f, "\n![beta sweep](sweep_beta.svg)\n\n");

    fprintf(f, "## Sweep of the migration cost (fa vs fa-lb-dp, which never migrates; %d seeds)\n\n"
               "| migrate_s | load | fa mean JCT s | fa-lb-dp mean JCT s | fa mean exec s | migrations per run |\n"
               "|---:|---|---:|---:|---:|---:|\n", n);
    for (i = 0; i < r->nmig; i++)
        for (k = 0; k < 2; k++)
            fprintf(f, "| %.0f | %s | %.0f | %.0f | %.0f | %.1f |\n", MIGS[i], LOAD_NAMES[L_MED + k],
                    msw(r, i, k, F(mean_jct_s)),
                    nomig(r, k, F(mean_jct_s)),
                    msw(r, i, k, F(mean_exec_s)),
                    (double)sum_long(&r->msweep[((size_t)i * 2 + (size_t)k) * (size_t)n], n,
                                     F(migrations)) / n);
    fprintf(f, "\n![migration sweep](sweep_migration.svg)\n\n");

    fprintf(f, "## Recommended deployment parameters (derived from the sweeps above)\n\n"
               "| parameter | value | why |\n|---|---|---|\n");
    fprintf(f, "| lb threshold t | %.1f | least mean relative regret in makespan and mean JCT at "
               "medium and high load (the seed's 0.4 scores %.4f, this t %.4f) |\n",
            rc->t_best, rc->t_score[rc->t_seed_i], rc->t_score[rc->t_best_i]);
    if (rc->mig_all)
        fprintf(f, "| migration | on; pays at every swept cost up to %.0f s per move "
                   "(%.0f%% of the mean duration) | fa's mean JCT stays below fa-lb-dp's at medium "
                   "and high load |\n", MIGS[r->nmig - 1], 100.0 * MIGS[r->nmig - 1] / o->mean_s);
    else if (isnan(rc->mig_limit))
        fprintf(f, "| migration | off | at no swept cost did fa's mean JCT beat fa-lb-dp's at both "
                   "medium and high load |\n");
    else
        fprintf(f, "| migration | on only if a move (checkpoint, copy, restore) costs <= %.0f s, "
                   "about %.0f%% of the mean job duration | at every swept cost up to this one "
                   "fa's mean JCT beats fa-lb-dp's at medium and high load; at the next swept cost "
                   "it no longer does at one of them |\n",
                rc->mig_limit, 100.0 * rc->mig_limit / o->mean_s);
    fprintf(f, "| max moves per trigger | 4 (default) | not swept: a bound on reconfiguration "
               "churn |\n"
               "| dynamic partitioning | on | see the ablation: it is what removes internal "
               "fragmentation |\n"
               "| monitoring | per-GPU FragCost, Lazy/Busy counts, reconfigurations and "
               "migrations per hour, wait-time p99 | as seed 000 lists; all are in runs.csv and the "
               "plots |\n\n");
    fprintf(f, "## Files\n\n"
               "- `summary.csv`: one row per policy and load (means over seeds)\n"
               "- `runs.csv`: one row per run\n"
               "- `sweep_t.csv`, `sweep_beta.csv`, `sweep_migration.csv`\n"
               "- `runs/fa-medium/`, `runs/static-medium/`: trace, schedule and metrics of one "
               "run each (feed them to `migsched report --runs`)\n");
    return close_checked(f, MS_OK);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched experiment [--out DIR] [--seeds N] [--jobs N] [--quick] [...]\n"
        "  --out DIR     report directory (default report/experiment)\n"
        "  --seeds N     traces per load (default 5; --quick 2)\n"
        "  --jobs N      jobs per trace (default 400; --quick 60)\n"
        "  --sweep-seeds N  traces per load in the t, beta and migration sweeps\n"
        "                (default 20; --quick: --seeds)\n"
        "  --mean S      mean job duration in seconds (default 600)\n"
        "  --sigma X     lognormal sigma of durations (default 1.0)\n"
        "  --beta B      interference per other busy instance (default 0.05)\n"
        "  --quick       a tiny run (seconds), for tests\n"
        "Runs the seed's ablation (static -> +load balancing -> +dynamic partitioning ->\n"
        "+migration) and the baselines on one node of 4 A100-40GB at three loads, sweeps\n"
        "the threshold t, beta and the migration cost, prints the main table and writes\n"
        "README.md, CSV and SVG files to DIR.\n");
}

int ms_cli_experiment(int argc, char **argv)
{
    static const struct option lopts[] = {
        { "out", required_argument, NULL, 'o' },
        { "seeds", required_argument, NULL, 's' },
        { "jobs", required_argument, NULL, 'j' },
        { "mean", required_argument, NULL, 'm' },
        { "sigma", required_argument, NULL, 'g' },
        { "beta", required_argument, NULL, 'b' },
        { "sweep-seeds", required_argument, NULL, 'S' },
        { "quick", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opts_t o;
    results_t r;
    reco_t rc;
    progress_t pg;
    const ms_model_t *model;
    ms_geom_t *g = NULL;
    ms_diag_t d;
    ms_status_t st;
    long seeds = -1, jobs = -1, sweep_seeds = -1;
    double t0 = now_s(), wall;
    int c, i;
    size_t nm;

    memset(&o, 0, sizeof(o));
    o.out = "report/experiment";
    o.mean_s = 600.0;
    o.sigma = 1.0;
    o.ngpus = 4;
    {
        ms_sim_cfg_t sc;
        ms_sim_cfg_defaults(&sc);
        o.beta = sc.beta;
        o.migrate_s = sc.migrate_s;
        o.create_s = sc.create_s;
    }
    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.out = optarg; break;
        case 's':
            if (!ms_cli_parse_long(optarg, &seeds) || seeds < 1 || seeds > 64) {
                fprintf(stderr, "migsched experiment: --seeds wants 1..64\n");
                return 2;
            }
            break;
        case 'S':
            if (!ms_cli_parse_long(optarg, &sweep_seeds) || sweep_seeds < 1 || sweep_seeds > 64) {
                fprintf(stderr, "migsched experiment: --sweep-seeds wants 1..64\n");
                return 2;
            }
            break;
        case 'j':
            if (!ms_cli_parse_long(optarg, &jobs) || jobs < 1 || jobs > 1000000) {
                fprintf(stderr, "migsched experiment: --jobs wants 1..1000000\n");
                return 2;
            }
            break;
        case 'm':
            if (!ms_cli_parse_double(optarg, &o.mean_s) || !(o.mean_s > 0.0)) {
                fprintf(stderr, "migsched experiment: --mean wants a positive number\n");
                return 2;
            }
            break;
        case 'g':
            if (!ms_cli_parse_double(optarg, &o.sigma) || !(o.sigma > 0.0) || o.sigma > 5.0) {
                fprintf(stderr, "migsched experiment: --sigma wants (0, 5]\n");
                return 2;
            }
            break;
        case 'b':
            if (!ms_cli_parse_double(optarg, &o.beta) || !(o.beta >= 0.0) || o.beta > 10.0) {
                fprintf(stderr, "migsched experiment: --beta wants [0, 10]\n");
                return 2;
            }
            break;
        case 'q': o.quick = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    o.seeds = seeds > 0 ? (int)seeds : (o.quick ? 2 : 5);
    o.jobs = jobs > 0 ? jobs : (o.quick ? 60 : 400);
    o.sweep_seeds = sweep_seeds > 0 ? (int)sweep_seeds : (o.quick ? o.seeds : 20);
    if (o.sweep_seeds < o.seeds)
        o.sweep_seeds = o.seeds;

    model = ms_model_find("A100-40GB");
    if (model == NULL || (st = ms_geom_create(model, 0, &g)) != MS_OK)
        return ms_cli_fail("experiment", model == NULL ? MS_ENOENT : st, NULL);

    memset(&r, 0, sizeof(r));
    r.nseeds = o.seeds;
    r.njobs = (size_t)o.jobs;
    r.nsw = o.sweep_seeds;
    if (o.quick) {
        r.nt = 3;
        r.tval[0] = 0.0;
        r.tval[1] = 0.4;
        r.tval[2] = 1.0;
        r.nbeta = 2;
        r.nmig = 2;
    } else {
        r.nt = NT_MAX;
        for (i = 0; i < NT_MAX; i++)
            r.tval[i] = i / 10.0;
        r.nbeta = NBETA;
        r.nmig = NMIG;
    }
    nm = (size_t)NVAR * NLOAD * (size_t)r.nseeds;
    r.main = calloc(nm, sizeof(*r.main));
    r.waits = malloc(nm * r.njobs * sizeof(*r.waits));
    r.tsweep = calloc((size_t)r.nt * 2 * (size_t)r.nsw, sizeof(*r.tsweep));
    r.bsweep = calloc((size_t)NBETA * NBETAVAR * (size_t)r.nsw, sizeof(*r.bsweep));
    r.msweep = calloc((size_t)NMIG * 2 * (size_t)r.nsw, sizeof(*r.msweep));
    r.nomig = calloc(2 * (size_t)r.nsw, sizeof(*r.nomig));
    if (r.main == NULL || r.waits == NULL || r.tsweep == NULL || r.bsweep == NULL ||
        r.msweep == NULL || r.nomig == NULL) {
        results_free(&r);
        ms_geom_destroy(g);
        return ms_cli_fail("experiment", MS_ENOMEM, NULL);
    }

    st = ms_report_mkdirs(o.out);
    if (st != MS_OK) {
        fprintf(stderr, "migsched experiment: cannot create '%s'\n", o.out);
        results_free(&r);
        ms_geom_destroy(g);
        return 1;
    }
    pg.tty = isatty(fileno(stderr)) != 0;
    pg.done = 0;
    pg.total = (long)nm + (long)r.nsw * (2L * r.nt + (long)NBETAVAR * r.nbeta + 2L * r.nmig + 2L) + 1;
    pg.t0 = t0;
    st = run_all(&o, g, &r, &pg, &d);
    if (st == MS_OK) {
        recommend(&r, &rc);
        wall = now_s() - t0;
        st = write_csvs(&o, &r);
        if (st == MS_OK)
            st = write_svgs(&o, g, &r);
        if (st == MS_OK)
            st = write_readme(&o, &r, &rc, wall);
    }
    if (st != MS_OK) {
        results_free(&r);
        ms_geom_destroy(g);
        return ms_cli_fail("experiment", st, &d);
    }
    printf("migsched experiment: %d x A100-40GB, %zu jobs per trace, %d seeds, loads 0.5/0.8/1.1\n\n",
           o.ngpus, r.njobs, r.nseeds);
    print_main_table(stdout, &r, false);
    printf("\nrecommended: lb threshold t = %.1f; ", rc.t_best);
    if (rc.mig_all)
        printf("migration pays up to %.0f s per move (all swept costs)\n", MIGS[r.nmig - 1]);
    else if (isnan(rc.mig_limit))
        printf("migration did not pay at any swept cost\n");
    else
        printf("migration only if a move costs <= %.0f s\n", rc.mig_limit);
    printf("report: %s/README.md (%.1f s)\n", o.out, now_s() - t0);
    results_free(&r);
    ms_geom_destroy(g);
    return 0;
}
