/* zoo_report.c - the zoo's Markdown, CSV and SVG output (zoo.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/research/report.h"
#include "migsched/research/svg.h"
#include "research/zoo_int.h"

static const char *const METRIC[MS_ZOO_NMETRIC] = {
    "makespan_s", "mean_wait_s", "p99_wait_s", "mean_jct_s", "mean_exec_s",
    "migrations", "gap_pct", "lower_bound_s", "jain", "t1_share", "t1_p99_wait_s",
    "jain_hourly_min", "t1_reclaim_max_s", "t1_reclaim_mean_s", "t2_share"
};
static const char *const BASELINES[] = { "first-fit", "best-fit", "fgd", "mfi" };

/* The baseline with the lowest mean of metric m on workload w, -1 if none. */
static int best_baseline(const ms_zoo_t *z, int w, int m)
{
    int best = -1, i, v;
    double bm = 0.0, mean, ci;

    for (i = 0; i < (int)(sizeof(BASELINES) / sizeof(BASELINES[0])); i++) {
        if ((v = ms_zoo_find_variant(z, BASELINES[i])) < 0)
            continue;
        ms_zoo_stat(z, w, v, m, &mean, &ci);
        if (best < 0 || mean < bm) {
            best = v;
            bm = mean;
        }
    }
    return best;
}

/* Paired relative difference of a over b on metric m, in %: mean and 95%
 * half-width over the seeds. */
static void paired(const ms_zoo_t *z, int w, int a, int b, int m, double *mean, double *ci)
{
    double s = 0.0, ss = 0.0, d[1024];
    int i, n = z->seeds < 1024 ? z->seeds : 1024;
    static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                2.262, 2.228 };

    for (i = 0; i < n; i++) {
        double x = *ms__zoo_val(z, w, a, i, m), y = *ms__zoo_val(z, w, b, i, m);
        d[i] = y > 0.0 ? 100.0 * (x / y - 1.0) : 0.0;
        s += d[i];
    }
    s /= n;
    for (i = 0; i < n; i++)
        ss += (d[i] - s) * (d[i] - s);
    *mean = s;
    *ci = n > 1 ? (n - 1 <= 10 ? t[n - 1] : 1.96) * sqrt(ss / (n - 1)) / sqrt((double)n) : 0.0;
}

static ms_status_t close_file(FILE *f, const char *dir, const char *name, ms_diag_t *diag)
{
    bool bad = ferror(f) != 0;

    if (fclose(f) != 0 || bad) {
        ms_diag_set(diag, dir, 0, name, "write failed");
        return MS_EIO;
    }
    return MS_OK;
}

static void write_pm(FILE *f, double mean, double ci, int prec)
{
    if (!isfinite(mean))
        fprintf(f, " stuck |");
    else
        fprintf(f, " %.*f ± %.*f |", prec, mean, prec, ci);
}

void ms_zoo_write_summary(FILE *f, const ms_zoo_t *z)
{
    int w, fp = ms_zoo_find_variant(z, "fa+"), fa = ms_zoo_find_variant(z, "fa");

    fprintf(f, "| workload | fa+ mean JCT (s) | best baseline (JCT) | fa+ vs it: JCT | "
               "makespan | fa+ vs fa: JCT | best makespan vs lower bound |\n"
               "|---|---:|---|---:|---:|---:|---:|\n");
    for (w = 0; w < z->nw; w++) {
        int bj = best_baseline(z, w, MS_ZOO_JCT), bm = best_baseline(z, w, MS_ZOO_MAKESPAN);
        double mean, ci, lb, lbci, best = INFINITY;
        int v;

        fprintf(f, "| %s |", z->wl[w].name);
        if (fp >= 0) {
            ms_zoo_stat(z, w, fp, MS_ZOO_JCT, &mean, &ci);
            write_pm(f, mean, ci, 0);
        } else {
            fprintf(f, " |");
        }
        if (bj >= 0)
            fprintf(f, " %s |", z->var[bj].label);
        else
            fprintf(f, " |");
        if (fp >= 0 && bj >= 0) {
            paired(z, w, fp, bj, MS_ZOO_JCT, &mean, &ci);
            fprintf(f, " %+.1f%% ± %.1f |", mean, ci);
            paired(z, w, fp, bm, MS_ZOO_MAKESPAN, &mean, &ci);
            fprintf(f, " %+.1f%% ± %.1f (vs %s) |", mean, ci, z->var[bm].label);
        } else {
            fprintf(f, " | |");
        }
        if (fp >= 0 && fa >= 0) {
            paired(z, w, fp, fa, MS_ZOO_JCT, &mean, &ci);
            fprintf(f, " %+.1f%% ± %.1f |", mean, ci);
        } else {
            fprintf(f, " |");
        }
        for (v = 0; v < z->nv; v++) {
            ms_zoo_stat(z, w, v, MS_ZOO_MAKESPAN, &mean, &ci);
            if (mean < best)
                best = mean;
        }
        ms_zoo_stat(z, w, 0, MS_ZOO_LB, &lb, &lbci);
        fprintf(f, " %+.1f%% |\n", lb > 0.0 ? 100.0 * (best / lb - 1.0) : 0.0);
    }
}

/* What migration buys: every variant X against X/nomig, where both ran. */
static void write_migration(FILE *f, const ms_zoo_t *z)
{
    int a, w, any = 0;

    for (a = 0; a < z->nv; a++) {
        char nomig[MS__ZOO_LABEL + 8];
        size_t len = strlen(z->var[a].label);
        int b;
        if (strstr(z->var[a].label, "nomig") != NULL || len + 7 > sizeof(nomig))
            continue;
        memcpy(nomig, z->var[a].label, len);
        memcpy(nomig + len, "/nomig", 7);
        if ((b = ms_zoo_find_variant(z, nomig)) < 0)
            continue;
        if (!any++)
            fprintf(f, "\n## What migration buys\n\nPaired difference of each variant with "
                       "migration against the same variant without it (negative = migration "
                       "helps), mean ± 95%% CI over seeds; moves = migrations per run.\n\n"
                       "| workload | variant | mean JCT | mean wait | mean exec | makespan | moves |\n"
                       "|---|---|---:|---:|---:|---:|---:|\n");
        for (w = 0; w < z->nw; w++) {
            double m1, c1, m2, c2, m3, c3, m4, c4, mv, cv;
            paired(z, w, a, b, MS_ZOO_JCT, &m1, &c1);
            paired(z, w, a, b, MS_ZOO_WAIT, &m2, &c2);
            paired(z, w, a, b, MS_ZOO_EXEC, &m3, &c3);
            paired(z, w, a, b, MS_ZOO_MAKESPAN, &m4, &c4);
            ms_zoo_stat(z, w, a, MS_ZOO_MIGR, &mv, &cv);
            fprintf(f, "| %s | %s | %+.1f%% ± %.1f | %+.1f%% ± %.1f | %+.2f%% ± %.2f | "
                       "%+.1f%% ± %.1f | %.0f |\n",
                    z->wl[w].name, z->var[a].label, m1, c1, m2, c2, m3, c3, m4, c4, mv);
        }
    }
}

/* Every variant against the best variant of each workload (by the mean over
 * seeds): the mean and worst excess over workloads, and the workloads where
 * it is the best or within 2% of it. */
void ms_zoo_write_ranking(FILE *f, const ms_zoo_t *z)
{
    static const int ms[2] = { MS_ZOO_JCT, MS_ZOO_MAKESPAN };
    int v, w, q;

    fprintf(f, "| variant | mean JCT: mean excess | worst | within 2%% | makespan: mean excess | "
               "worst | within 2%% |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (v = 0; v < z->nv; v++) {
        fprintf(f, "| %s |", z->var[v].label);
        for (q = 0; q < 2; q++) {
            double sum = 0.0, worst = 0.0;
            int near = 0;
            for (w = 0; w < z->nw; w++) {
                double best = INFINITY, mine, ci, x;
                int u;
                for (u = 0; u < z->nv; u++) {
                    ms_zoo_stat(z, w, u, ms[q], &x, &ci);
                    if (x < best)
                        best = x;
                }
                ms_zoo_stat(z, w, v, ms[q], &mine, &ci);
                x = best > 0.0 ? 100.0 * (mine / best - 1.0) : 0.0;
                sum += x;
                if (x > worst)
                    worst = x;
                near += x <= 2.0;
            }
            if (isfinite(sum))
                fprintf(f, " %+.1f%% | %+.1f%% | %d/%d |", sum / z->nw, worst, near, z->nw);
            else
                fprintf(f, " stuck | stuck | %d/%d |", near, z->nw);
        }
        fputc('\n', f);
    }
}

static ms_status_t write_md(const ms_zoo_t *z, const char *dir, ms_diag_t *diag)
{
    FILE *f;
    ms_status_t st;
    int w, v, m;

    if ((st = ms_report_fopen(dir, "zoo.md", &f)) != MS_OK) {
        ms_diag_set(diag, dir, 0, "zoo.md", "cannot create");
        return st;
    }
    fprintf(f, "# The workload zoo\n\n%d workloads x %d variants x %d seeds (seeds %llu..%llu), "
               "interference beta %.2f, GI creation %.0f s, migration %.0f s unless a variant "
               "says mig=S, queue %s unless it says otherwise. Mean ± 95%% confidence half-width "
               "(Student t) over seeds; relative figures are paired per seed. "
               "Baselines: first-fit, best-fit, fgd, mfi.\n\n",
            z->nw, z->nv, z->seeds, (unsigned long long)z->cfg.seed0,
            (unsigned long long)(z->cfg.seed0 + (uint64_t)z->seeds - 1), z->cfg.sim.beta,
            z->cfg.sim.create_s, z->cfg.sim.migrate_s,
            ms_queue_mode_name(z->cfg.sim.sched.queue));
    fprintf(f, "## Workloads\n\n| workload | model | GPUs | load | jobs | mix | durations | "
               "arrivals |\n|---|---|---:|---:|---:|---|---|---|\n");
    for (w = 0; w < z->nw; w++) {
        const ms_zoo_workload_t *x = &z->wl[w];
        fprintf(f, "| %s | %s | %d | %.1f | %zu | %s | ", x->name, x->model, x->ngpus, x->load,
                x->jobs, x->ntenants > 0 ? x->what : x->mix);
        if (x->ntenants > 0)
            fprintf(f, "per tenant (docs/zoo.md) | ");
        else if (x->p_long > 0.0)
            fprintf(f, "lognormal %.0f s / %.0f s (p %.2f), sigma %.1f | ", x->short_s, x->long_s,
                    x->p_long, x->sigma);
        else
            fprintf(f, "lognormal %.0f s, sigma %.1f | ", x->short_s, x->sigma);
        if (x->diurnal_amp > 0.0)
            fprintf(f, "diurnal, amplitude %.1f, period %.0f h |\n", x->diurnal_amp,
                    x->diurnal_period_s / 3600.0);
        else
            fprintf(f, "Poisson |\n");
    }
    fprintf(f, "\n## fa+ against the best baseline and fa\n\n");
    ms_zoo_write_summary(f, z);
    fprintf(f, "\n## Every variant against the best of each workload\n\n");
    ms_zoo_write_ranking(f, z);
    write_migration(f, z);
    fprintf(f, "\n## Every variant\n\nTimes in seconds; gap = makespan over the lower bound - 1 (%%).\n");
    for (w = 0; w < z->nw; w++) {
        double lb, lbci;
        ms_zoo_stat(z, w, 0, MS_ZOO_LB, &lb, &lbci);
        fprintf(f, "\n### %s\n\n%s. Lower bound %.0f ± %.0f s.\n\n| variant | makespan | mean wait | "
                   "p99 wait | mean JCT | mean exec | migrations | gap %% |\n"
                   "|---|---:|---:|---:|---:|---:|---:|---:|\n",
                z->wl[w].name, z->wl[w].what, lb, lbci);
        for (v = 0; v < z->nv; v++) {
            fprintf(f, "| %s |", z->var[v].label);
            for (m = 0; m < MS_ZOO_LB; m++) {
                double mean, ci;
                ms_zoo_stat(z, w, v, m, &mean, &ci);
                write_pm(f, mean, ci, m == MS_ZOO_GAP ? 1 : 0);
            }
            fputc('\n', f);
        }
    }
    fprintf(f, "\nPlots: zoo_jct.svg, zoo_makespan.svg (each variant over the best baseline "
               "of its workload). Data: zoo.csv, zoo_runs.csv.\n");
    return close_file(f, dir, "zoo.md", diag);
}

static ms_status_t write_csv(const ms_zoo_t *z, const char *dir, ms_diag_t *diag)
{
    FILE *f;
    ms_status_t st;
    int w, v, m, s;

    if ((st = ms_report_fopen(dir, "zoo.csv", &f)) != MS_OK) {
        ms_diag_set(diag, dir, 0, "zoo.csv", "cannot create");
        return st;
    }
    fprintf(f, "workload,variant,seeds");
    for (m = 0; m < MS_ZOO_NMETRIC; m++)
        fprintf(f, ",%s,%s_ci95", METRIC[m], METRIC[m]);
    fputc('\n', f);
    for (w = 0; w < z->nw; w++)
        for (v = 0; v < z->nv; v++) {
            fprintf(f, "%s,%s,%d", z->wl[w].name, z->var[v].label, z->seeds);
            for (m = 0; m < MS_ZOO_NMETRIC; m++) {
                double mean, ci;
                ms_zoo_stat(z, w, v, m, &mean, &ci);
                fprintf(f, ",%.3f,%.3f", mean, ci);
            }
            fputc('\n', f);
        }
    if ((st = close_file(f, dir, "zoo.csv", diag)) != MS_OK)
        return st;
    if ((st = ms_report_fopen(dir, "zoo_runs.csv", &f)) != MS_OK) {
        ms_diag_set(diag, dir, 0, "zoo_runs.csv", "cannot create");
        return st;
    }
    fprintf(f, "workload,variant,seed");
    for (m = 0; m < MS_ZOO_NMETRIC; m++)
        fprintf(f, ",%s", METRIC[m]);
    fputc('\n', f);
    for (w = 0; w < z->nw; w++)
        for (v = 0; v < z->nv; v++)
            for (s = 0; s < z->seeds; s++) {
                fprintf(f, "%s,%s,%llu", z->wl[w].name, z->var[v].label,
                        (unsigned long long)(z->cfg.seed0 + (uint64_t)s));
                for (m = 0; m < MS_ZOO_NMETRIC; m++)
                    fprintf(f, ",%.3f", *ms__zoo_val(z, w, v, s, m));
                fputc('\n', f);
            }
    return close_file(f, dir, "zoo_runs.csv", diag);
}

static ms_status_t write_bars(const ms_zoo_t *z, const char *dir, const char *name, int m,
                              const char *title, ms_diag_t *diag)
{
    const char **groups = calloc((size_t)z->nw, sizeof(*groups));
    const char **series = calloc((size_t)z->nv, sizeof(*series));
    double *val = calloc((size_t)z->nw * (size_t)z->nv, sizeof(*val));
    ms_svg_chart_t ch;
    ms_svg_bars_t b;
    FILE *f = NULL;
    ms_status_t st = MS_OK;
    int w, v;

    if (groups == NULL || series == NULL || val == NULL) {
        st = MS_ENOMEM;
        goto out;
    }
    for (v = 0; v < z->nv; v++)
        series[v] = z->var[v].label;
    for (w = 0; w < z->nw; w++) {
        int bb = best_baseline(z, w, m);
        double ref = 0.0, ci;
        groups[w] = z->wl[w].name;
        if (bb >= 0)
            ms_zoo_stat(z, w, bb, m, &ref, &ci);
        for (v = 0; v < z->nv; v++) {
            double mean;
            ms_zoo_stat(z, w, v, m, &mean, &ci);
            val[w * z->nv + v] = ref > 0.0 ? mean / ref : NAN;
        }
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.ylabel = "relative to the best baseline";
    ch.width = 1200;
    ch.y_from_zero = true;
    ch.ymax = 3.0;
    b.ngroups = z->nw;
    b.nseries = z->nv;
    b.groups = groups;
    b.series = series;
    b.value = val;
    b.err = NULL;
    if ((st = ms_report_fopen(dir, name, &f)) != MS_OK) {
        ms_diag_set(diag, dir, 0, name, "cannot create");
        goto out;
    }
    st = ms_svg_bars(f, &ch, &b);
    if (st == MS_OK)
        st = close_file(f, dir, name, diag);
    else
        fclose(f);
out:
    free(groups);
    free(series);
    free(val);
    return st;
}

ms_status_t ms_zoo_write(const ms_zoo_t *z, const char *dir, ms_diag_t *diag)
{
    ms_status_t st;

    if ((st = ms_report_mkdirs(dir)) != MS_OK) {
        ms_diag_set(diag, dir, 0, "--out", "cannot create the directory");
        return st;
    }
    if ((st = write_md(z, dir, diag)) != MS_OK || (st = write_csv(z, dir, diag)) != MS_OK ||
        (st = write_bars(z, dir, "zoo_jct.svg", MS_ZOO_JCT, "Mean JCT", diag)) != MS_OK)
        return st;
    return write_bars(z, dir, "zoo_makespan.svg", MS_ZOO_MAKESPAN, "Makespan", diag);
}
