/* experiment.c - the experiment's configuration, traces and main grid, the
 * two runs written out in full, and ms_experiment_run() (see experiment.h,
 * experiment_int.h for the files, docs/experiment.md for the set-up).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "migsched/research/report.h"
#include "migsched/schedule.h"
#include "research/experiment_int.h"

const ms__xp_variant_t ms__xp_variants[MS__XP_NVAR] = {
    { "fa+", "fa+", -1, -1, -1, "this project's scheduler (the default of simulate and the service)" },
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

const double ms__xp_loads[MS__XP_NLOAD] = { 0.5, 0.8, 1.1 };
const char *const ms__xp_load_names[MS__XP_NLOAD] = { "low", "medium", "high" };

const double ms__xp_betas[MS__XP_NBETA] = { 0.0, 0.05, 0.1, 0.2 };
const int ms__xp_beta_vars[MS__XP_NBETAVAR] = { MS__XP_V_STATIC, MS__XP_V_LB, MS__XP_V_LBDP,
                                                 MS__XP_V_FA, MS__XP_V_FIRSTFIT };

const double ms__xp_migs[MS__XP_NMIG] = { 0.0, 10.0, 30.0, 60.0, 120.0, 300.0 };

#define MODEL "A100-40GB"

/* --- one run ------------------------------------------------------------- */

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

double ms__xp_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ms__xp_progress(ms_experiment_t *x, const char *what)
{
    x->done++;
    if (x->cfg->on_progress != NULL)
        x->cfg->on_progress(x->cfg->ctx, x->done, x->total, what);
}

/* Run one configuration. t < 0 and the others < 0 keep the defaults; ob
 * (may be NULL) observes the run. */
static ms_status_t run_with(const ms__xp_opts_t *o, const ms_trace_t *tr, const ms__xp_variant_t *v,
                            double t, double beta, double migrate_s, obs_t *ob,
                            ms_metrics_t *m, ms_diag_t *d)
{
    ms_sim_cfg_t cfg;
    double t0;
    ms_status_t st;

    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = ms_policy_find(v->policy);
    if (cfg.sched.policy == NULL) {
        ms_diag_set(d, NULL, 0, "policy", "policy '%s' is not in the registry", v->policy);
        return MS_ENOENT;
    }
    ms_policy_cfg_defaults(&cfg.sched.pcfg);
    if (v->balance >= 0)
        cfg.sched.pcfg.balance = v->balance != 0;
    if (v->dynamic >= 0)
        cfg.sched.pcfg.dynamic = v->dynamic != 0;
    if (v->migration >= 0)
        cfg.sched.pcfg.migration = v->migration != 0;
    if (t >= 0.0)
        cfg.sched.pcfg.lb_threshold = t;
    cfg.ngpus = o->ngpus;
    cfg.gpus_per_node = 0;
    cfg.beta = beta >= 0.0 ? beta : o->beta;
    cfg.migrate_s = migrate_s >= 0.0 ? migrate_s : o->migrate_s;
    cfg.create_s = o->create_s;
    cfg.sched.queue = o->queue;
    /* fa+ is told what a move costs, as simulate does */
    cfg.sched.pcfg.migrate_cost_s = cfg.migrate_s;
    cfg.sched.pcfg.interference_beta = cfg.beta;
    if (ob != NULL) {
        cfg.ctx = ob;
        cfg.on_segment = obs_segment;
        if (ob->keep_samples) {
            cfg.on_sample = obs_sample;
            cfg.sample_every_s = 60.0;
        }
    }
    t0 = ms__xp_now();
    st = ms_sim_run(&cfg, tr, m, d);
    m->wall_s = ms__xp_now() - t0;
    if (st == MS_OK && ob != NULL && ob->err != MS_OK)
        st = ob->err;
    return st;
}

ms_status_t ms__xp_run_one(const ms__xp_opts_t *o, const ms_trace_t *tr,
                           const ms__xp_variant_t *v, double t, double beta,
                           double migrate_s, ms_metrics_t *m, ms_diag_t *d)
{
    return run_with(o, tr, v, t, beta, migrate_s, NULL, m, d);
}

/* Trace, schedule and metrics of one run in out/runs/name/, for `migsched
 * report`. */
static ms_status_t write_run_dir(const ms__xp_opts_t *o, const char *name, const ms_trace_t *tr,
                                 const ms__xp_variant_t *v, ms_diag_t *d)
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
        st = run_with(o, tr, v, -1.0, -1.0, -1.0, &ob, &m, d);
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

/* --- the main grid ------------------------------------------------------- */

/* One trace per load and seed (the sweeps' seeds at medium and high load). */
static ms_status_t gen_traces(ms_experiment_t *x, ms_diag_t *d)
{
    const ms__xp_opts_t *o = &x->o;
    const ms__xp_results_t *r = &x->r;
    int l, s;
    ms_status_t st = MS_OK;

    for (l = 0; l < MS__XP_NLOAD && st == MS_OK; l++)
        for (s = 0; s < (l == 0 ? r->nseeds : r->nsw) && st == MS_OK; s++) {
            ms_gen_cfg_t gc;
            memset(&gc, 0, sizeof(gc));
            gc.njobs = r->njobs;
            gc.load = ms__xp_loads[l];
            gc.ngpus = o->ngpus;
            gc.mix = NULL;
            gc.dist = 2;
            gc.mean_s = o->mean_s;
            gc.sigma = o->sigma;
            gc.seed = 20250u + (uint64_t)s * 7919u + (uint64_t)l;
            st = ms_trace_generate(x->g, &gc, &x->tr[l][s]);
            if (st != MS_OK)
                ms_diag_set(d, NULL, 0, "trace", "cannot generate a trace");
        }
    return st;
}

/* the FragCost-over-time plot shows the beta sweep's variants */
static bool is_beta_var(int v)
{
    int k;

    for (k = 0; k < MS__XP_NBETAVAR; k++)
        if (ms__xp_beta_vars[k] == v)
            return true;
    return false;
}

/* Every variant x load x seed, keeping the waits, the FragCost samples of
 * the beta sweep's variants and the segments of fa (medium load, seed 1). */
static ms_status_t run_grid(ms_experiment_t *x, ms_diag_t *d)
{
    const ms__xp_opts_t *o = &x->o;
    ms__xp_results_t *r = &x->r;
    int l, s, v;
    ms_status_t st = MS_OK;
    obs_t ob;
    char what[160];

    for (v = 0; v < MS__XP_NVAR && st == MS_OK; v++)
        for (l = 0; l < MS__XP_NLOAD && st == MS_OK; l++)
            for (s = 0; s < r->nseeds && st == MS_OK; s++) {
                double *w = r->waits + (((size_t)v * MS__XP_NLOAD + (size_t)l) * (size_t)r->nseeds +
                                        (size_t)s) * r->njobs;
                size_t j;
                memset(&ob, 0, sizeof(ob));
                ob.tr = x->tr[l][s];
                ob.first = w;
                for (j = 0; j < r->njobs; j++)
                    w[j] = NAN;
                ob.keep_samples = l == MS__XP_L_MED && s == 0 && is_beta_var(v);
                ob.keep_segs = l == MS__XP_L_MED && s == 0 && v == MS__XP_V_FAPLUS;
                snprintf(what, sizeof(what), "%s, %s load, seed %d", ms__xp_variants[v].label,
                         ms__xp_load_names[l], s + 1);
                st = run_with(o, x->tr[l][s], &ms__xp_variants[v], -1.0, -1.0, -1.0, &ob,
                             MS__XP_MAIN(r, v, l, s), d);
                for (j = 0; j < r->njobs; j++)
                    if (isfinite(w[j]))
                        w[j] -= x->tr[l][s]->jobs[j].arrival;
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
                ms__xp_progress(x, what);
            }
    return st;
}

/* --- the experiment ------------------------------------------------------ */

static void results_free(ms__xp_results_t *r)
{
    int i;

    free(r->main);
    free(r->waits);
    free(r->tsweep);
    free(r->bsweep);
    free(r->msweep);
    free(r->nomig);
    for (i = 0; i < MS__XP_NVAR; i++) {
        free(r->ft[i]);
        free(r->fv[i]);
    }
    free(r->gantt);
}

void ms_experiment_cfg_defaults(ms_experiment_cfg_t *cfg)
{
    ms_sim_cfg_t sc;

    memset(cfg, 0, sizeof(*cfg));
    ms_sim_cfg_defaults(&sc);
    cfg->out_dir = "report/experiment";
    cfg->mean_s = 600.0;
    cfg->sigma = 1.0;
    cfg->beta = sc.beta;
    cfg->queue = sc.sched.queue;
}

static ms_status_t check_cfg(const ms_experiment_cfg_t *cfg, ms_diag_t *d)
{
    const char *field = NULL, *why = NULL;

    if (cfg->out_dir == NULL || cfg->out_dir[0] == '\0') {
        field = "out";
        why = "an output directory is required";
    } else if (cfg->seeds < 0 || cfg->seeds > MS__XP_MAX_SEEDS) {
        field = "seeds";
        why = "wants 1..64 (0 = default)";
    } else if (cfg->sweep_seeds < 0 || cfg->sweep_seeds > MS__XP_MAX_SEEDS) {
        field = "sweep-seeds";
        why = "wants 1..64 (0 = default)";
    } else if (cfg->jobs < 0 || cfg->jobs > 1000000) {
        field = "jobs";
        why = "wants 1..1000000 (0 = default)";
    } else if (!(cfg->mean_s > 0.0) || !isfinite(cfg->mean_s)) {
        field = "mean";
        why = "wants a positive number";
    } else if (!(cfg->sigma > 0.0) || cfg->sigma > 5.0) {
        field = "sigma";
        why = "wants (0, 5]";
    } else if (!(cfg->beta >= 0.0) || cfg->beta > 10.0) {
        field = "beta";
        why = "wants [0, 10]";
    }
    if (field == NULL)
        return MS_OK;
    ms_diag_set(d, NULL, 0, field, "%s", why);
    return MS_EINVAL;
}

/* Resolve the defaults and size the result arrays. */
static ms_status_t setup(ms_experiment_t *x, const ms_experiment_cfg_t *cfg)
{
    ms__xp_opts_t *o = &x->o;
    ms__xp_results_t *r = &x->r;
    const ms_model_t *model;
    ms_sim_cfg_t sc;
    size_t nm;
    int i;
    ms_status_t st;

    ms_sim_cfg_defaults(&sc);
    o->out = cfg->out_dir;
    o->quick = cfg->quick;
    o->mean_s = cfg->mean_s;
    o->sigma = cfg->sigma;
    o->beta = cfg->beta;
    o->queue = cfg->queue;
    o->migrate_s = sc.migrate_s;
    o->create_s = sc.create_s;
    o->ngpus = 4;
    o->seeds = cfg->seeds > 0 ? cfg->seeds : (o->quick ? 2 : 5);
    o->jobs = cfg->jobs > 0 ? cfg->jobs : (o->quick ? 60 : 400);
    o->sweep_seeds = cfg->sweep_seeds > 0 ? cfg->sweep_seeds : (o->quick ? o->seeds : 20);
    if (o->sweep_seeds < o->seeds)
        o->sweep_seeds = o->seeds;

    x->model = MODEL;
    model = ms_model_find(MODEL);
    if (model == NULL)
        return MS_ENOENT;
    if ((st = ms_geom_create(model, 0, &x->g)) != MS_OK)
        return st;

    r->nseeds = o->seeds;
    r->njobs = (size_t)o->jobs;
    r->nsw = o->sweep_seeds;
    if (o->quick) {
        r->nt = 3;
        r->tval[0] = 0.0;
        r->tval[1] = 0.4;
        r->tval[2] = 1.0;
        r->nbeta = 2;
        r->nmig = 2;
    } else {
        r->nt = MS__XP_NT_MAX;
        for (i = 0; i < MS__XP_NT_MAX; i++)
            r->tval[i] = i / 10.0;
        r->nbeta = MS__XP_NBETA;
        r->nmig = MS__XP_NMIG;
    }
    nm = (size_t)MS__XP_NVAR * MS__XP_NLOAD * (size_t)r->nseeds;
    r->main = calloc(nm, sizeof(*r->main));
    r->waits = malloc(nm * r->njobs * sizeof(*r->waits));
    r->tsweep = calloc((size_t)r->nt * 2 * (size_t)r->nsw, sizeof(*r->tsweep));
    r->bsweep = calloc((size_t)MS__XP_NBETA * MS__XP_NBETAVAR * (size_t)r->nsw, sizeof(*r->bsweep));
    r->msweep = calloc((size_t)MS__XP_NMIG * 2 * (size_t)r->nsw, sizeof(*r->msweep));
    r->nomig = calloc(2 * (size_t)r->nsw, sizeof(*r->nomig));
    if (r->main == NULL || r->waits == NULL || r->tsweep == NULL || r->bsweep == NULL ||
        r->msweep == NULL || r->nomig == NULL)
        return MS_ENOMEM;
    x->total = (long)nm + (long)r->nsw * (2L * r->nt + (long)MS__XP_NBETAVAR * r->nbeta +
                                          2L * r->nmig + 2L) + 1;
    return MS_OK;
}

static void free_traces(ms_experiment_t *x)
{
    int l, s;

    for (l = 0; l < MS__XP_NLOAD; l++)
        for (s = 0; s < MS__XP_MAX_SEEDS; s++) {
            ms_trace_free(x->tr[l][s]);
            x->tr[l][s] = NULL;
        }
}

ms_status_t ms_experiment_run(const ms_experiment_cfg_t *cfg, ms_experiment_t **out,
                              ms_diag_t *diag)
{
    ms_experiment_t *x;
    double t0 = ms__xp_now();
    ms_status_t st;

    if (cfg == NULL || out == NULL)
        return MS_EINVAL;
    if ((st = check_cfg(cfg, diag)) != MS_OK)
        return st;
    if ((x = calloc(1, sizeof(*x))) == NULL)
        return MS_ENOMEM;
    x->cfg = cfg;
    if ((st = setup(x, cfg)) != MS_OK)
        goto fail;
    if ((st = ms_report_mkdirs(x->o.out)) != MS_OK) {
        ms_diag_set(diag, NULL, 0, "out", "cannot create '%s'", x->o.out);
        goto fail;
    }

    st = gen_traces(x, diag);
    if (st == MS_OK)
        st = run_grid(x, diag);
    if (st == MS_OK)
        st = ms__xp_run_sweeps(x, diag);
    if (st == MS_OK)
        st = write_run_dir(&x->o, "faplus-medium", x->tr[MS__XP_L_MED][0],
                           &ms__xp_variants[MS__XP_V_FAPLUS], diag);
    if (st == MS_OK)
        st = write_run_dir(&x->o, "static-medium", x->tr[MS__XP_L_MED][0],
                           &ms__xp_variants[MS__XP_V_STATIC], diag);
    ms__xp_progress(x, "writing the report");
    free_traces(x);
    if (st != MS_OK)
        goto fail;

    ms__xp_recommend(&x->r, &x->rc);
    x->wall_s = ms__xp_now() - t0;
    st = ms__xp_write_csvs(&x->o, &x->r);
    if (st == MS_OK)
        st = ms__xp_write_svgs(&x->o, x->g, &x->r);
    if (st == MS_OK)
        st = ms__xp_write_readme(&x->o, &x->r, &x->rc, x->wall_s);
    if (st != MS_OK)
        goto fail;
    x->cfg = NULL;
    x->o.out = NULL;   /* borrowed from cfg */
    *out = x;
    return MS_OK;

fail:
    ms_experiment_destroy(x);
    return st;
}

void ms_experiment_summary(const ms_experiment_t *x, ms_experiment_summary_t *out)
{
    int l;

    memset(out, 0, sizeof(*out));
    out->model = x->model;
    out->ngpus = x->o.ngpus;
    out->jobs = x->r.njobs;
    out->seeds = x->r.nseeds;
    out->sweep_seeds = x->r.nsw;
    out->nloads = MS__XP_NLOAD;
    for (l = 0; l < MS__XP_NLOAD; l++)
        out->loads[l] = ms__xp_loads[l];
    out->t_best = x->rc.t_best;
    out->mig_all = x->rc.mig_all;
    out->mig_limit_s = x->rc.mig_limit;
    out->mig_max_s = ms__xp_migs[x->r.nmig - 1];
    out->wall_s = x->wall_s;
}

void ms_experiment_destroy(ms_experiment_t *x)
{
    if (x == NULL)
        return;
    free_traces(x);
    results_free(&x->r);
    ms_geom_destroy(x->g);
    free(x);
}
