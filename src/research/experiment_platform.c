/* experiment_platform.c - `migsched experiment --scenario platform`: seed
 * 002's mixed platform on one heterogeneous cluster, every policy.
 *
 * The platform (seed 002's road map): an inference fleet of A100-40GB, half
 * of it MIG and half time-sliced 4 ways, and training on whole H100-80GB
 * GPUs (MIG off). The workload: 80% inference jobs (1g 60%, 2g 40%;
 * lognormal durations with mean 300 s), of which 30% are latency-sensitive
 * and ask for isolation (a MIG instance or a whole GPU, never time-sliced);
 * 1.5% training jobs (a whole H100: 7g on model H100-80GB; a quarter of them
 * gangs of 2; mean 1800 s), which loads the 8 training GPUs about as much
 * as inference loads the 16 inference GPUs. Poisson arrivals at three
 * loads, relative to the cluster's GPU count. Every policy places the MIG nodes' jobs; time-sliced
 * and whole nodes always use time-slicing (with 4 and 1 replicas), except
 * under the timeslice policy, which time-slices the MIG nodes too.
 *
 * Reported per policy and load (mean over seeds): mean and p99 wait, mean
 * JCT overall and per class (inference, isolated inference, training),
 * slowdown, makespan, and rejected jobs; Markdown, CSV and SVG bar charts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/research/experiment.h"
#include "migsched/research/report.h"
#include "migsched/rng.h"
#include "migsched/sched.h"
#include "migsched/sim.h"
#include "migsched/research/svg.h"

#define NLOAD 3
#define NCLASS 3

static const double LOADS[NLOAD] = { 0.5, 0.8, 1.1 };
static const char *const LOAD_NAMES[NLOAD] = { "low", "medium", "high" };
static const char *const CLASS_NAMES[NCLASS] = { "inference", "isolated inference", "training" };
static const char *const POLICIES[] = { "fa+", "fa", "first-fit", "best-fit", "fgd", "mfi", "static",
                                        "node-profile", "timeslice" };
#define NPOL ((int)(sizeof(POLICIES) / sizeof(POLICIES[0])))
static const char *const NODES[] = {
    "mig0=4xA100-40GB", "mig1=4xA100-40GB",
    "ts0=4xA100-40GB:timeslice=4", "ts1=4xA100-40GB:timeslice=4",
    "train0=4xH100-80GB:whole", "train1=4xH100-80GB:whole",
};
#define NNODES ((int)(sizeof(NODES) / sizeof(NODES[0])))
#define NGPUS 24
#define INF_SHARE 0.985   /* inference jobs among all */

typedef struct cell {
    double wait, p99, jct, slow, span, rejected;
    double cjct[NCLASS];
    int cn[NCLASS];
} cell_t;

typedef struct obs {
    const ms_trace_t *tr;
    const uint8_t *cls;
    double *first, *last;
} obs_t;

static void on_seg(void *ctx, const ms_segment_t *seg)
{
    obs_t *o = ctx;

    if (seg->job < 0 || (size_t)seg->job >= o->tr->n)
        return;
    if (!(o->first[seg->job] <= seg->begin_s))
        o->first[seg->job] = seg->begin_s;
    if (!(o->last[seg->job] >= seg->end_s))
        o->last[seg->job] = seg->end_s;
}

static double lognormal(ms_rng_t *r, double mean, double sigma)
{
    double u1 = ms_rng_unit(r), u2 = ms_rng_unit(r);
    double z = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);

    return mean * exp(sigma * z - 0.5 * sigma * sigma);
}

/* One trace; cls[i] receives each job's class. */
static ms_status_t gen(const ms_geom_t *g, size_t n, double load, uint64_t seed, ms_trace_t **out,
                       uint8_t **cls)
{
    ms_job_t *jobs = calloc(n ? n : 1, sizeof(*jobs));
    ms_job_req_t *req = calloc(n ? n : 1, sizeof(*req));
    uint8_t *c = calloc(n ? n : 1, 1);
    int p1 = ms_geom_profile_find(g, "1g"), p2 = ms_geom_profile_find(g, "2g");
    int p7 = ms_geom_profile_find(g, "7g");
    const ms_model_t *h100 = ms_model_find("H100-80GB");
    ms_rng_t r;
    double t = 0.0, demand, rate;
    size_t i;
    ms_status_t st;

    if (jobs == NULL || req == NULL || c == NULL || p1 < 0 || p2 < 0 || p7 < 0 || h100 == NULL) {
        free(jobs);
        free(req);
        free(c);
        return jobs == NULL || req == NULL || c == NULL ? MS_ENOMEM : MS_EINVAL;
    }
    /* mean demand in GPU-seconds per job: inference 0.985 x (0.6/7 + 0.8/7)
     * x 300, training 0.015 x 1.25 x 1800 */
    demand = INF_SHARE * (0.6 * 1.0 / 7.0 + 0.4 * 2.0 / 7.0) * 300.0 +
             (1.0 - INF_SHARE) * 1.25 * 1800.0;
    rate = load * NGPUS / demand;
    ms_rng_seed(&r, seed);
    for (i = 0; i < n; i++) {
        double u = ms_rng_unit(&r);

        t += -log(1.0 - ms_rng_unit(&r)) / rate;
        jobs[i].idx = (int32_t)i;
        jobs[i].arrival = t;
        jobs[i].gang = 1;
        if (u < INF_SHARE) {
            jobs[i].prof = (int8_t)(ms_rng_unit(&r) < 0.6 ? p1 : p2);
            jobs[i].duration = lognormal(&r, 300.0, 1.0);
            c[i] = ms_rng_unit(&r) < 0.3 ? 1 : 0;
            req[i].isolation = c[i] == 1 ? MS_ISO_MIG : MS_ISO_ANY;
        } else {
            jobs[i].prof = (int8_t)p7;
            jobs[i].gang = (int16_t)(ms_rng_unit(&r) < 0.25 ? 2 : 1);
            jobs[i].duration = lognormal(&r, 1800.0, 0.6);
            req[i].model = h100;
            c[i] = 2;
        }
        if (jobs[i].duration < 1.0)
            jobs[i].duration = 1.0;
    }
    st = ms_trace_from_jobs(g, jobs, n, NULL, out);
    free(jobs);
    if (st != MS_OK) {
        free(req);
        free(c);
        return st;
    }
    (*out)->req = req;   /* jobs were in arrival order: indices kept */
    *cls = c;
    return MS_OK;
}

static ms_status_t run_one(const ms_trace_t *tr, const uint8_t *cls, const ms_node_spec_t *nodes,
                           const ms_policy_ops_t *pol, cell_t *acc, ms_diag_t *d)
{
    ms_sim_cfg_t sc;
    ms_metrics_t m;
    obs_t o;
    size_t i;
    double sum[NCLASS] = { 0 };
    int cnt[NCLASS] = { 0 }, k;
    ms_status_t st;

    o.tr = tr;
    o.cls = cls;
    o.first = malloc(tr->n * sizeof(*o.first));
    o.last = malloc(tr->n * sizeof(*o.last));
    if (o.first == NULL || o.last == NULL) {
        free(o.first);
        free(o.last);
        return MS_ENOMEM;
    }
    for (i = 0; i < tr->n; i++)
        o.first[i] = o.last[i] = NAN;
    ms_sim_cfg_defaults(&sc);
    sc.sched.policy = pol;
    sc.sched.nodes = nodes;
    sc.sched.nnodes = NNODES;
    sc.ctx = &o;
    sc.on_segment = on_seg;
    st = ms_sim_run(&sc, tr, &m, d);
    if (st == MS_OK) {
        for (i = 0; i < tr->n; i++)
            if (o.last[i] == o.last[i]) {   /* it ran */
                sum[cls[i]] += o.last[i] - tr->jobs[i].arrival;
                cnt[cls[i]]++;
            }
        acc->wait += m.mean_wait_s;
        acc->p99 += m.p99_wait_s;
        acc->jct += m.mean_jct_s;
        acc->slow += m.mean_slowdown;
        acc->span += m.makespan_s;
        acc->rejected += (double)m.jobs_rejected;
        for (k = 0; k < NCLASS; k++)
            if (cnt[k] > 0) {
                acc->cjct[k] += sum[k] / cnt[k];
                acc->cn[k]++;
            }
    }
    free(o.first);
    free(o.last);
    return st;
}

static ms_status_t write_bars(const char *dir, const char *file, const char *title,
                              const char *ylabel, const double *v, int nseries,
                              const char *const *series)
{
    char path[1024];
    FILE *f;
    ms_svg_chart_t ch;
    ms_svg_bars_t b;
    ms_status_t st;

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    if ((f = fopen(path, "w")) == NULL)
        return MS_EIO;
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.ylabel = ylabel;
    ch.y_from_zero = true;
    memset(&b, 0, sizeof(b));
    b.ngroups = NPOL;
    b.nseries = nseries;
    b.groups = POLICIES;
    b.series = series;
    b.value = v;
    st = ms_svg_bars(f, &ch, &b);
    if (fclose(f) != 0 && st == MS_OK)
        st = MS_EIO;
    return st;
}

ms_status_t ms_platform_run(const ms_platform_cfg_t *cfg, FILE *table, ms_diag_t *d)
{
    ms_cluster_spec_t *cs = NULL;
    ms_geom_t *g = NULL;
    cell_t cells[NPOL][NLOAD];
    int p, l, s, k;
    ms_status_t st;
    char path[1024];
    FILE *csv = NULL, *md = NULL;
    int seeds = cfg->seeds > 0 ? cfg->seeds : (cfg->quick ? 2 : 5);
    size_t njobs = cfg->njobs > 0 ? cfg->njobs : (cfg->quick ? 300 : 3000);
    double bars[NPOL * NCLASS], wbars[NPOL * NLOAD];

    memset(cells, 0, sizeof(cells));
    if ((st = ms_cluster_spec_create(&cs)) != MS_OK)
        return st;
    for (k = 0; k < NNODES && st == MS_OK; k++)
        st = ms_cluster_spec_add(cs, NODES[k], 0, d);
    if (st == MS_OK)
        st = ms_geom_create(ms_model_find("A100-40GB"), 0, &g);
    for (l = 0; l < NLOAD && st == MS_OK; l++)
        for (s = 0; s < seeds && st == MS_OK; s++) {
            ms_trace_t *tr = NULL;
            uint8_t *cls = NULL;

            st = gen(g, njobs, LOADS[l], 7000u + 131u * (uint64_t)s + (uint64_t)l, &tr, &cls);
            for (p = 0; p < NPOL && st == MS_OK; p++) {
                st = run_one(tr, cls, ms_cluster_spec_nodes(cs), ms_policy_find(POLICIES[p]),
                             &cells[p][l], d);
                if (cfg->on_progress != NULL)
                    cfg->on_progress(cfg->ctx, (size_t)((l * seeds + s) * NPOL + p + 1),
                                     (size_t)(NLOAD * seeds * NPOL));
            }
            ms_trace_free(tr);
            free(cls);
        }
    if (st != MS_OK)
        goto out;
    for (p = 0; p < NPOL; p++)
        for (l = 0; l < NLOAD; l++) {
            cell_t *c = &cells[p][l];

            c->wait /= seeds;
            c->p99 /= seeds;
            c->jct /= seeds;
            c->slow /= seeds;
            c->span /= seeds;
            c->rejected /= seeds;
            for (k = 0; k < NCLASS; k++)
                c->cjct[k] = c->cn[k] > 0 ? c->cjct[k] / c->cn[k] : 0.0;
        }
    if ((st = ms_report_mkdirs(cfg->out_dir)) != MS_OK) {
        ms_diag_set(d, cfg->out_dir, 0, "out", "cannot create the report directory");
        goto out;
    }
    snprintf(path, sizeof(path), "%s/platform.csv", cfg->out_dir);
    csv = fopen(path, "w");
    snprintf(path, sizeof(path), "%s/README.md", cfg->out_dir);
    md = fopen(path, "w");
    if (csv == NULL || md == NULL) {
        ms_diag_set(d, path, 0, "out", "cannot write the report");
        st = MS_EIO;
        goto out;
    }
    fprintf(csv, "policy,load,mean_wait_s,p99_wait_s,mean_jct_s,jct_inference_s,"
                 "jct_isolated_s,jct_training_s,slowdown,makespan_s,rejected\n");
    fprintf(md, "# Seed 002's mixed platform\n\n"
                "`migsched experiment --scenario platform`: %d nodes, %d GPUs: MIG inference "
                "(2 x 4 A100-40GB), time-sliced inference (2 x 4 A100-40GB, 4 ways), training on "
                "whole H100-80GB (2 x 4, MIG off). %zu jobs a trace, %d seeds a load; 98.5%% "
                "inference (1g/2g, mean 300 s; 30%% of them ask for isolation), 1.5%% training "
                "(a whole H100, a quarter of them gangs of 2, mean 1800 s), so both pools see "
                "about the same load. Means over seeds.\n\n",
            NNODES, NGPUS, njobs, seeds);
    for (l = 0; l < NLOAD; l++) {
        fprintf(md, "## %s load (%.1f)\n\n| policy | mean wait s | p99 wait s | mean JCT s | "
                    "inference JCT | isolated JCT | training JCT | slowdown | makespan s | rejected |\n"
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                LOAD_NAMES[l], LOADS[l]);
        if (table != NULL)
            fprintf(table, "%s load (%.1f)\n%-13s %9s %9s %9s %9s %9s %9s %8s %10s\n",
                    LOAD_NAMES[l], LOADS[l], "policy", "wait", "p99 wait", "JCT", "inf JCT",
                    "iso JCT", "train JCT", "slowdown", "makespan");
        for (p = 0; p < NPOL; p++) {
            const cell_t *c = &cells[p][l];

            fprintf(csv, "%s,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.3f,%.1f\n", POLICIES[p],
                    LOADS[l], c->wait, c->p99, c->jct, c->cjct[0], c->cjct[1], c->cjct[2], c->slow,
                    c->span, c->rejected);
            fprintf(md, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | %.0f | %.1f |\n",
                    POLICIES[p], c->wait, c->p99, c->jct, c->cjct[0], c->cjct[1], c->cjct[2],
                    c->slow, c->span, c->rejected);
            if (table != NULL)
                fprintf(table, "%-13s %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %8.3f %10.0f\n",
                        POLICIES[p], c->wait, c->p99, c->jct, c->cjct[0], c->cjct[1], c->cjct[2],
                        c->slow, c->span);
            if (l == 1)
                for (k = 0; k < NCLASS; k++)
                    bars[p * NCLASS + k] = c->cjct[k];
            wbars[p * NLOAD + l] = c->wait;
        }
        fprintf(md, "\n");
    }
    fprintf(md, "![JCT per class, medium load](jct_classes.svg)\n\n![mean wait](wait.svg)\n\n"
                "Readings: isolated inference can only use the MIG A100s (or a whole H100), so "
                "its JCT shows how well a policy keeps MIG capacity for it; time-slicing the "
                "MIG nodes too (the timeslice policy) leaves isolated jobs only the training "
                "GPUs. Training runs on whole H100s under every policy (the node mode decides).\n");
    st = write_bars(cfg->out_dir, "jct_classes.svg", "Mean JCT per class, medium load", "seconds",
                    bars, NCLASS, CLASS_NAMES);
    if (st == MS_OK)
        st = write_bars(cfg->out_dir, "wait.svg", "Mean wait per load", "seconds", wbars, NLOAD,
                        LOAD_NAMES);
out:
    if (csv != NULL && fclose(csv) != 0 && st == MS_OK)
        st = MS_EIO;
    if (md != NULL && fclose(md) != 0 && st == MS_OK)
        st = MS_EIO;
    ms_geom_destroy(g);
    ms_cluster_spec_destroy(cs);
    return st;
}
