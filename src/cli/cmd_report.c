/* cmd_report.c - `migsched report`: runs (metrics JSON + schedule CSV +
 * optional trace CSV, as `migsched simulate` and `migsched experiment`
 * write them) and fill experiments (fgd-experiment and import-alibaba
 * --fill JSON) into a directory of Markdown, CSV and SVG: a metrics table,
 * a comparison chart, utilisation and FragCost over time, wait-time CDFs,
 * a Gantt slice map of every schedule, unallocated % vs arrived % per
 * policy and the FGD table side by side with the published one. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/research/report.h"
#include "migsched/research/svg.h"

typedef struct run {
    char *src;             /* the directory or JSON file given */
    char *name;            /* file-safe name, unique (prefixed by its number) */
    char policy[64];
    ms_metrics_t m;
    bool has_sched;
    ms_segment_t *segs;
    size_t nseg;
    int ngpus;
    double *ut, *uv;       /* utilisation over time */
    size_t nu;
    double *ft, *fv;       /* FragCost over time (replayed schedule) */
    size_t nf, fskip;
    double frag_mean;      /* time-weighted mean of (ft, fv) */
    bool has_trace;
    double *waits;         /* wait per started job (trace.csv) */
    size_t nw;
} run_t;

typedef struct list {
    char **v;
    size_t n, cap;
} list_t;

static ms_status_t list_add_csv(list_t *l, const char *csv)
{
    const char *p = csv;

    while (*p != '\0') {
        const char *e = strchr(p, ',');
        size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
        if (len > 0) {
            char *s;
            if (l->n == l->cap) {
                size_t nc = l->cap ? l->cap * 2 : 8;
                char **nv = realloc(l->v, nc * sizeof(*nv));
                if (nv == NULL)
                    return MS_ENOMEM;
                l->v = nv;
                l->cap = nc;
            }
            s = malloc(len + 1);
            if (s == NULL)
                return MS_ENOMEM;
            memcpy(s, p, len);
            s[len] = '\0';
            l->v[l->n++] = s;
        }
        if (e == NULL)
            break;
        p = e + 1;
    }
    return MS_OK;
}

static void list_free(list_t *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);

    if (p == NULL)
        return NULL;
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + la + 1, b, lb + 1);
    return p;
}

/* "3-fa_medium" from run number 3 and path "runs/fa medium/". */
static char *safe_name(size_t idx, const char *src)
{
    const char *b = src, *p;
    size_t len, i, k;
    char *out;

    len = strlen(src);
    while (len > 1 && src[len - 1] == '/')
        len--;
    for (p = src; p < src + len; p++)
        if (*p == '/')
            b = p + 1;
    len = (size_t)(src + len - b);
    if (len > 5 && strncmp(b + len - 5, ".json", 5) == 0)
        len -= 5;
    if (len > 60)
        len = 60;
    out = malloc(len + 24);
    if (out == NULL)
        return NULL;
    k = (size_t)snprintf(out, 24, "%zu-", idx + 1);
    for (i = 0; i < len; i++) {
        char c = b[i];
        out[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_') ? c : '_';
    }
    out[k] = '\0';
    return out;
}

static ms_status_t load_run(run_t *r, size_t idx, const char *src, bool is_dir,
                            const ms_geom_t *g, ms_diag_t *d)
{
    char *path;
    FILE *f;
    ms_status_t st;

    memset(r, 0, sizeof(*r));
    r->src = malloc(strlen(src) + 1);
    r->name = safe_name(idx, src);
    if (r->src == NULL || r->name == NULL)
        return MS_ENOMEM;
    memcpy(r->src, src, strlen(src) + 1);
    path = is_dir ? join(src, "metrics.json") : r->src;
    if (path == NULL)
        return MS_ENOMEM;
    f = fopen(path, "r");
    if (f == NULL) {
        ms_diag_set(d, path, 0, "", "cannot open");
        if (is_dir)
            free(path);
        return MS_EIO;
    }
    st = ms_report_read_metrics(f, path, &r->m, r->policy, sizeof(r->policy), d);
    fclose(f);
    if (is_dir)
        free(path);
    if (st != MS_OK || !is_dir)
        return st;
    path = join(src, "schedule.csv");
    if (path == NULL)
        return MS_ENOMEM;
    f = fopen(path, "r");
    if (f != NULL) {
        st = ms_report_read_schedule(f, path, g, &r->segs, &r->nseg, &r->ngpus, d);
        fclose(f);
        r->has_sched = st == MS_OK;
        if (st == MS_OK && r->ngpus > 0)
            st = ms_report_util_series(g, r->ngpus, r->segs, r->nseg, &r->ut, &r->uv, &r->nu);
        if (st == MS_OK && r->ngpus > 0) {
            st = ms_report_frag_series(g, r->ngpus, r->segs, r->nseg, &r->ft, &r->fv, &r->nf,
                                       &r->fskip);
            r->frag_mean = ms_report_step_mean(r->ft, r->fv, r->nf);
        }
    }
    free(path);
    if (st != MS_OK || !r->has_sched)
        return st;
    path = join(src, "trace.csv");
    if (path == NULL)
        return MS_ENOMEM;
    f = fopen(path, "r");
    if (f != NULL) {
        ms_report_arrival_t *arr = NULL;
        size_t na = 0;
        st = ms_report_read_arrivals(f, path, &arr, &na, d);
        fclose(f);
        if (st == MS_OK)
            st = ms_report_wait_times(arr, na, r->segs, r->nseg, &r->waits, &r->nw);
        r->has_trace = st == MS_OK;
        free(arr);
    }
    free(path);
    return st;
}

static void run_free(run_t *r)
{
    free(r->src);
    free(r->name);
    free(r->segs);
    free(r->ut);
    free(r->uv);
    free(r->ft);
    free(r->fv);
    free(r->waits);
}

static ms_status_t closef(FILE *f, ms_status_t st)
{
    if (ferror(f) && st == MS_OK)
        st = MS_EIO;
    if (fclose(f) != 0 && st == MS_OK)
        st = MS_EIO;
    return st;
}

static const char *label(const run_t *r)
{
    return r->policy[0] != '\0' ? r->policy : r->name;
}

/* The line chart of s[0..k) into out/file. */
static ms_status_t write_lines(const char *out, const char *file, const ms_svg_chart_t *ch,
                               const ms_svg_series_t *s, int k)
{
    FILE *f;
    ms_status_t st = ms_report_fopen(out, file, &f);

    if (st == MS_OK)
        st = closef(f, ms_svg_lines(f, ch, s, k));
    return st;
}

/* A step chart over time of every run with a schedule: utilisation, or
 * FragCost (runs with FragCost points only); written only when some run
 * has one. *nrun (if not NULL): how many runs it shows. */
static ms_status_t time_chart(const char *out, const char *file, const char *title,
                              const char *ylabel, const run_t *runs, size_t n, bool frag,
                              int *nrun)
{
    ms_svg_series_t *s = calloc(n > 0 ? n : 1, sizeof(*s));
    ms_svg_chart_t ch;
    ms_status_t st;
    size_t i;
    int k = 0;

    if (s == NULL)
        return MS_ENOMEM;
    for (i = 0; i < n; i++)
        if (runs[i].has_sched && (!frag || runs[i].nf > 0)) {
            s[k].name = label(&runs[i]);
            s[k].x = frag ? runs[i].ft : runs[i].ut;
            s[k].y = frag ? runs[i].fv : runs[i].uv;
            s[k].n = frag ? runs[i].nf : runs[i].nu;
            k++;
        }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.xlabel = "time (s)";
    ch.ylabel = ylabel;
    ch.step = true;
    ch.y_from_zero = true;
    st = k > 0 ? write_lines(out, file, &ch, s, k) : MS_OK;
    free(s);
    if (nrun != NULL)
        *nrun = k;
    return st;
}

static ms_status_t write_runs(const char *out, const ms_geom_t *g, run_t *runs, size_t n,
                              FILE *md)
{
    FILE *f;
    ms_status_t st;
    size_t i;
    char file[128];

    /* metrics.csv */
    if ((st = ms_report_fopen(out, "metrics.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "run,policy,makespan_s,lower_bound_s,mean_wait_s,p50_wait_s,p95_wait_s,"
               "p99_wait_s,max_wait_s,mean_exec_s,mean_jct_s,mean_slowdown,mean_fragcost,"
               "mean_utilization,migrations,reconfigurations,jobs_total,jobs_completed,"
               "jobs_rejected\n");
    for (i = 0; i < n; i++) {
        const ms_metrics_t *m = &runs[i].m;
        fprintf(f, "%s,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.5f,%.5f,%ld,%ld,"
                   "%ld,%ld,%ld\n",
                runs[i].name, runs[i].policy, m->makespan_s, m->lower_bound_s, m->mean_wait_s,
                m->p50_wait_s, m->p95_wait_s, m->p99_wait_s, m->max_wait_s, m->mean_exec_s,
                m->mean_jct_s, m->mean_slowdown, m->mean_fragcost, m->mean_utilization,
                m->migrations, m->reconfigurations, m->jobs_total, m->jobs_completed,
                m->jobs_rejected);
    }
    if ((st = closef(f, MS_OK)) != MS_OK)
        return st;

    /* compare.svg: groups = metrics, series = runs */
    {
        static const char *const GROUPS[] = { "makespan", "mean wait", "p99 wait", "mean exec",
                                              "mean JCT" };
        double *val = malloc(5 * (n > 0 ? n : 1) * sizeof(*val));
        const char **names = malloc((n > 0 ? n : 1) * sizeof(*names));
        ms_svg_bars_t b;
        ms_svg_chart_t ch;

        if (val == NULL || names == NULL) {
            free(val);
            free(names);
            return MS_ENOMEM;
        }
        for (i = 0; i < n; i++) {
            const ms_metrics_t *m = &runs[i].m;
            names[i] = label(&runs[i]);
            val[0 * n + i] = m->makespan_s;
            val[1 * n + i] = m->mean_wait_s;
            val[2 * n + i] = m->p99_wait_s;
            val[3 * n + i] = m->mean_exec_s;
            val[4 * n + i] = m->mean_jct_s;
        }
        memset(&b, 0, sizeof(b));
        b.ngroups = 5;
        b.nseries = (int)n;
        b.groups = GROUPS;
        b.series = names;
        b.value = val;
        memset(&ch, 0, sizeof(ch));
        ch.title = "Runs compared";
        ch.ylabel = "seconds";
        ch.width = 900;
        st = ms_report_fopen(out, "compare.svg", &f);
        if (st == MS_OK)
            st = closef(f, ms_svg_bars(f, &ch, &b));
        free(val);
        free(names);
        if (st != MS_OK)
            return st;
    }

    /* utilisation.svg: every run with a schedule */
    if ((st = time_chart(out, "utilisation.svg",
                         "Utilisation over time (busy compute slices / all, from the schedule)",
                         "utilisation", runs, n, false, NULL)) != MS_OK)
        return st;

    /* a Gantt per schedule */
    for (i = 0; i < n; i++) {
        ms_svg_chart_t ch;
        char title[160];

        if (!runs[i].has_sched || runs[i].ngpus <= 0)
            continue;
        snprintf(file, sizeof(file), "gantt_%s.svg", runs[i].name);
        snprintf(title, sizeof(title), "Slice map over time: %.100s", label(&runs[i]));
        memset(&ch, 0, sizeof(ch));
        ch.title = title;
        ch.xlabel = "time (s); rows: GPU x memory slice";
        ch.width = 1200;
        if ((st = ms_report_fopen(out, file, &f)) != MS_OK)
            return st;
        if ((st = closef(f, ms_svg_gantt(f, &ch, g, runs[i].ngpus, runs[i].segs, runs[i].nseg))) != MS_OK)
            return st;
    }

    /* FragCost over time, utilisation and FragCost as CSV */
    {
        int k = 0;

        if ((st = time_chart(out, "fragcost_time.svg",
                             "FragCost over time (mean over GPUs, replayed from the schedule)",
                             "FragCost", runs, n, true, &k)) != MS_OK)
            return st;
        if (k > 0) {
            size_t j;
            if ((st = ms_report_fopen(out, "timeseries.csv", &f)) != MS_OK)
                return st;
            fprintf(f, "run,policy,series,t_s,value\n");
            for (i = 0; i < n; i++) {
                for (j = 0; j < runs[i].nu; j++)
                    fprintf(f, "%s,%s,utilisation,%.3f,%.6f\n", runs[i].name, runs[i].policy,
                            runs[i].ut[j], runs[i].uv[j]);
                for (j = 0; j < runs[i].nf; j++)
                    fprintf(f, "%s,%s,fragcost,%.3f,%.6f\n", runs[i].name, runs[i].policy,
                            runs[i].ft[j], runs[i].fv[j]);
            }
            if ((st = closef(f, MS_OK)) != MS_OK)
                return st;
        }
    }

    /* wait-time CDFs: every run with a trace */
    {
        const char **names = calloc(n > 0 ? n : 1, sizeof(*names));
        const double **smp = calloc(n > 0 ? n : 1, sizeof(*smp));
        size_t *cnt = calloc(n > 0 ? n : 1, sizeof(*cnt));
        ms_svg_chart_t ch;
        int k = 0;

        if (names == NULL || smp == NULL || cnt == NULL) {
            free(names);
            free(smp);
            free(cnt);
            return MS_ENOMEM;
        }
        for (i = 0; i < n; i++)
            if (runs[i].has_trace) {
                names[k] = label(&runs[i]);
                smp[k] = runs[i].waits;
                cnt[k] = runs[i].nw;
                k++;
            }
        memset(&ch, 0, sizeof(ch));
        ch.title = "Wait time CDF (first start - arrival)";
        ch.xlabel = "wait (s)";
        ch.ylabel = "fraction of jobs";
        st = k > 0 ? ms_report_fopen(out, "wait_cdf.svg", &f) : MS_OK;
        if (st == MS_OK && k > 0)
            st = closef(f, ms_svg_cdf(f, &ch, names, smp, cnt, k));
        free(names);
        free(smp);
        free(cnt);
        if (st != MS_OK)
            return st;
        if (k > 0) {
            if ((st = ms_report_fopen(out, "waits.csv", &f)) != MS_OK)
                return st;
            fprintf(f, "run,policy,wait_s,cdf\n");
            for (i = 0; i < n && st == MS_OK; i++) {
                double *xs = NULL, *pp = NULL;
                size_t j;
                if (!runs[i].has_trace)
                    continue;
                st = ms_report_cdf(runs[i].waits, runs[i].nw, &xs, &pp);
                for (j = 0; st == MS_OK && j < runs[i].nw; j++)
                    fprintf(f, "%s,%s,%.3f,%.6f\n", runs[i].name, runs[i].policy, xs[j], pp[j]);
                free(xs);
                free(pp);
            }
            if ((st = closef(f, st)) != MS_OK)
                return st;
        }
    }

    /* the Markdown section */
    fprintf(md, "## Runs\n\n%zu run(s), model %s.\n\n", n, ms_geom_model(g)->name);
    fprintf(md, "| run | policy | makespan s | lower bound s | gap | mean wait s | p99 wait s | "
                "mean exec s | mean JCT s | slowdown | FragCost | FragCost (sched) | util | "
                "migrations | rejected |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < n; i++) {
        const ms_metrics_t *m = &runs[i].m;
        fprintf(md, "| `%s` | %s | %.0f | %.0f | %.1f%% | %.0f | %.0f | %.0f | %.0f | %.3f | "
                    "%.3f | %.3f | %.3f | %ld | %ld |\n",
                runs[i].src, runs[i].policy[0] ? runs[i].policy : "-", m->makespan_s,
                m->lower_bound_s,
                m->lower_bound_s > 0.0 ? 100.0 * (m->makespan_s / m->lower_bound_s - 1.0) : NAN,
                m->mean_wait_s, m->p99_wait_s, m->mean_exec_s, m->mean_jct_s, m->mean_slowdown,
                m->mean_fragcost, runs[i].has_sched ? runs[i].frag_mean : NAN,
                m->mean_utilization, m->migrations, m->jobs_rejected);
    }
    fprintf(md, "\n\"FragCost\" is the simulator's time-weighted mean over GPUs of the GPU "
                "instance layout (idle instances a policy keeps included); \"FragCost (sched)\" "
                "is the same mean computed here from the schedule alone (only instances that run "
                "a job). CSV: `metrics.csv`, `timeseries.csv`, `waits.csv`.\n\n"
                "![compare](compare.svg)\n\n");
    {
        bool any = false, anyw = false;
        for (i = 0; i < n; i++) {
            any = any || runs[i].has_sched;
            anyw = anyw || runs[i].has_trace;
        }
        if (any)
            fprintf(md, "### Utilisation over time\n\n![utilisation](utilisation.svg)\n\n"
                        "### FragCost over time\n\n![fragcost](fragcost_time.svg)\n\n");
        for (i = 0; i < n; i++)
            if (runs[i].fskip > 0)
                fprintf(md, "%s: %zu segment(s) overlapped a running one on replay and were "
                            "left out of the FragCost series.\n\n", label(&runs[i]),
                        runs[i].fskip);
        if (anyw) {
            fprintf(md, "### Wait times\n\n![wait CDF](wait_cdf.svg)\n\n"
                        "| run | jobs started | p50 wait s | p90 wait s | max wait s |\n"
                        "|---|---:|---:|---:|---:|\n");
            for (i = 0; i < n; i++) {
                double *xs = NULL, *pp = NULL;
                size_t nw = runs[i].nw;
                if (!runs[i].has_trace || nw == 0)
                    continue;
                if (ms_report_cdf(runs[i].waits, nw, &xs, &pp) != MS_OK)
                    return MS_ENOMEM;
                fprintf(md, "| %s | %zu | %.0f | %.0f | %.0f |\n", label(&runs[i]), nw,
                        xs[(nw - 1) / 2], xs[(size_t)(0.9 * (double)(nw - 1))], xs[nw - 1]);
                free(xs);
                free(pp);
            }
            fputc('\n', md);
        }
        if (any)
            fprintf(md, "### Schedules\n\n");
    }
    for (i = 0; i < n; i++)
        if (runs[i].has_sched && runs[i].ngpus > 0)
            fprintf(md, "#### %s\n\n%zu segments on %d GPUs.\n\n![gantt](gantt_%s.svg)\n\n",
                    label(&runs[i]), runs[i].nseg, runs[i].ngpus, runs[i].name);
    return ferror(md) ? MS_EIO : MS_OK;
}

/* --- fill experiments ---------------------------------------------------- */

/* Points of (x, y) from the first x >= from: offset into the arrays. */
static size_t from_x(const double *x, size_t n, double from)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (x != NULL ? x[i] >= from : (double)i >= from)
            return i;
    return n;
}

static const char *const FGD_POLICIES[6] = { "random", "dot-product", "clustering", "packing",
                                             "best-fit", "fgd" };

static const ms_report_fgd_pol_t *fgd_find(const ms_report_fgd_t *r, const char *policy)
{
    size_t i;

    for (i = 0; i < r->npol; i++)
        if (strcmp(r->pol[i].policy, policy) == 0)
            return &r->pol[i];
    return NULL;
}

static ms_status_t fgd_chart(const char *out, const char *file, const ms_report_fgd_t *r,
                             double from, const char *title)
{
    ms_svg_series_t *s = calloc(r->npol, sizeof(*s));
    ms_svg_chart_t ch;
    ms_status_t st;
    size_t i;

    if (s == NULL)
        return MS_ENOMEM;
    for (i = 0; i < r->npol; i++) {
        size_t o = from_x(r->pol[i].arrived, r->pol[i].n, from);
        s[i].name = r->pol[i].policy;
        s[i].x = r->pol[i].arrived + o;
        s[i].y = r->pol[i].unalloc + o;
        s[i].n = r->pol[i].n - o;
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.xlabel = "arrived workload (% of cluster GPU capacity)";
    ch.ylabel = "unallocated GPUs (%)";
    ch.y_from_zero = true;
    st = write_lines(out, file, &ch, s, (int)r->npol);
    free(s);
    return st;
}

static ms_status_t write_fgd(const char *out, ms_report_fgd_t **fr, size_t nf, FILE *md)
{
    FILE *tab, *cur;
    ms_status_t st;
    size_t k, i, j, ncell = 0, nwithin = 0;
    double worst = -1.0;
    const char *worst_t = "", *worst_p = "";

    if ((st = ms_report_fopen(out, "fgd_table.csv", &tab)) != MS_OK)
        return st;
    if ((st = ms_report_fopen(out, "fgd_curves.csv", &cur)) != MS_OK) {
        fclose(tab);
        return st;
    }
    fprintf(tab, "trace,policy,seeds,ours_mean,ours_sd,published,published_sd,diff,"
                 "within_1sd\n");
    fprintf(cur, "trace,policy,arrived_pct,unallocated_pct,unallocated_pct_sd\n");
    fprintf(md, "## FGD fill experiment (`migsched fgd-experiment`)\n\n"
                "Unallocated GPU %% at 100 %% arrived workload: ours (mean ± sd over seeds) / "
                "published (Weng et al., ATC '23, mean of 10 seeds; "
                "shared/reference/fgd.md §2). Δ = ours − published; a cell is marked * "
                "when |Δ| exceeds our sd.\n\n| trace | seeds |");
    for (j = 0; j < 6; j++)
        fprintf(md, " %s |", FGD_POLICIES[j]);
    fprintf(md, "\n|---|---:|");
    for (j = 0; j < 6; j++)
        fprintf(md, "---|");
    fputc('\n', md);
    for (k = 0; k < nf; k++) {
        const ms_report_fgd_t *r = fr[k];
        fprintf(md, "| %s | %zu |", r->trace, r->nseeds);
        for (j = 0; j < 6; j++) {
            const ms_report_fgd_pol_t *q = fgd_find(r, FGD_POLICIES[j]);
            double pub;
            if (q == NULL) {
                fprintf(md, " – |");
                continue;
            }
            if (ms_report_fgd_published(r->trace, q->policy, &pub, NULL))
                fprintf(md, " %.2f ± %.2f / %.2f%s |", q->at100, q->at100_sd, pub,
                        fabs(q->at100 - pub) > q->at100_sd ? " *" : "");
            else
                fprintf(md, " %.2f ± %.2f / – |", q->at100, q->at100_sd);
        }
        fputc('\n', md);
    }
    fputc('\n', md);

    for (k = 0; k < nf; k++) {
        const ms_report_fgd_t *r = fr[k];
        char *nm = safe_name(k, r->trace);
        char file[160], zfile[160], title[200];

        if (nm == NULL) {
            st = MS_ENOMEM;
            break;
        }
        snprintf(file, sizeof(file), "fgd_%s.svg", nm);
        snprintf(zfile, sizeof(zfile), "fgd_%s_zoom.svg", nm);
        free(nm);
        snprintf(title, sizeof(title), "Unallocated GPUs vs arrived workload: %.60s (%zu seeds)",
                 r->trace, r->nseeds);
        st = fgd_chart(out, file, r, -INFINITY, title);
        snprintf(title, sizeof(title), "%.60s, from 85 %% arrived", r->trace);
        if (st == MS_OK)
            st = fgd_chart(out, zfile, r, 85.0, title);
        if (st != MS_OK)
            break;
        fprintf(md, "### %s\n\n`%s`, %ld GPUs, %zu seed(s).\n\n![%s](%s)\n![%s zoomed](%s)\n\n"
                    "| policy | ours at 100 %% | sd | published | Δ | within 1 sd | failed pods "
                    "(mean) |\n|---|---:|---:|---:|---:|---|---:|\n",
                r->trace, r->pods, r->gpus, r->nseeds, r->trace, file, r->trace, zfile);
        for (i = 0; i < r->npol; i++) {
            const ms_report_fgd_pol_t *q = &r->pol[i];
            double pub, psd;
            bool has = ms_report_fgd_published(r->trace, q->policy, &pub, &psd);
            bool within = has && fabs(q->at100 - pub) <= q->at100_sd;

            if (has) {
                ncell++;
                nwithin += within;
                if (fabs(q->at100 - pub) > worst) {
                    worst = fabs(q->at100 - pub);
                    worst_t = r->trace;
                    worst_p = q->policy;
                }
                fprintf(md, "| %s | %.2f | %.2f | %.2f | %+.2f | %s | %.1f |\n", q->policy,
                        q->at100, q->at100_sd, pub, q->at100 - pub, within ? "yes" : "**no**",
                        q->failed_pods_mean);
                char sdb[32] = "";
                if (!isnan(psd))
                    snprintf(sdb, sizeof(sdb), "%.2f", psd);
                fprintf(tab, "%s,%s,%zu,%.4f,%.4f,%.2f,%s,%.4f,%d\n", r->trace, q->policy,
                        r->nseeds, q->at100, q->at100_sd, pub, sdb, q->at100 - pub, within);
            } else {
                fprintf(md, "| %s | %.2f | %.2f | – | – | – | %.1f |\n", q->policy, q->at100,
                        q->at100_sd, q->failed_pods_mean);
                fprintf(tab, "%s,%s,%zu,%.4f,%.4f,,,,\n", r->trace, q->policy, r->nseeds,
                        q->at100, q->at100_sd);
            }
            for (j = 0; j < q->n; j++)
                fprintf(cur, "%s,%s,%g,%.4f,%.4f\n", r->trace, q->policy, q->arrived[j],
                        q->unalloc[j], q->unalloc_sd != NULL ? q->unalloc_sd[j] : NAN);
        }
        fputc('\n', md);
    }
    if (st == MS_OK && ncell > 0)
        fprintf(md, "Of the %zu cells with a published value, %zu are within one sd of ours; "
                    "the largest |Δ| is %.2f points (%s, %s).\n\n",
                ncell, nwithin, worst, worst_t, worst_p);
    fprintf(md, "CSV: `fgd_table.csv` (the table), `fgd_curves.csv` (every curve).\n\n");
    st = closef(tab, st);
    st = closef(cur, st);
    return st != MS_OK ? st : ferror(md) ? MS_EIO : MS_OK;
}

static ms_status_t fill_chart(const char *out, const char *file, const ms_report_fill_t *r,
                              bool gpu, const char *title)
{
    ms_svg_series_t *s = calloc(r->npol, sizeof(*s));
    ms_svg_chart_t ch;
    ms_status_t st;
    size_t i;

    if (s == NULL)
        return MS_ENOMEM;
    for (i = 0; i < r->npol; i++) {
        s[i].name = r->pol[i].policy;
        s[i].x = NULL;   /* point i is at i % arrived */
        s[i].y = gpu ? r->pol[i].gpu_pct : r->pol[i].compute_pct;
        s[i].n = r->pol[i].n;
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.xlabel = "arrived workload (% of cluster GPU capacity)";
    ch.ylabel = gpu ? "wholly free GPUs (%)" : "unallocated compute slices (%)";
    ch.y_from_zero = true;
    st = write_lines(out, file, &ch, s, (int)r->npol);
    free(s);
    return st;
}

static ms_status_t write_fill(const char *out, ms_report_fill_t **fl, size_t nl, FILE *md)
{
    FILE *tab, *cur;
    ms_status_t st = MS_OK;
    size_t k, i, j;

    if ((st = ms_report_fopen(out, "fill_table.csv", &tab)) != MS_OK)
        return st;
    if ((st = ms_report_fopen(out, "fill_curves.csv", &cur)) != MS_OK) {
        fclose(tab);
        return st;
    }
    fprintf(tab, "trace,mapping,model,gpus,seeds,policy,unalloc_compute_mean,"
                 "unalloc_compute_sd,unalloc_mem_mean,unalloc_mem_sd,unalloc_gpu_mean,"
                 "unalloc_gpu_sd,fragcost_mean,fragcost_sd,failed_pods_pct_mean,"
                 "failed_pods_pct_sd\n");
    fprintf(cur, "trace,mapping,policy,arrived_pct,unalloc_compute_pct,unalloc_gpu_pct,"
                 "fragcost\n");
    fprintf(md, "## MIG fill experiment (`migsched import-alibaba --fill`)\n\n"
                "FGD's one-pass fill protocol on MIG GPUs; values at 100 %% arrived, "
                "mean ± sd over seeds.\n\n");
    for (k = 0; k < nl && st == MS_OK; k++) {
        const ms_report_fill_t *r = fl[k];
        char both[160], *nm;
        char cfile[200], gfile[200], title[240];

        snprintf(both, sizeof(both), "%.60s-%.30s", r->trace, r->mapping);
        nm = safe_name(k, both);
        if (nm == NULL) {
            st = MS_ENOMEM;
            break;
        }
        snprintf(cfile, sizeof(cfile), "fill_%s_compute.svg", nm);
        snprintf(gfile, sizeof(gfile), "fill_%s_gpu.svg", nm);
        free(nm);
        snprintf(title, sizeof(title), "MIG fill, %.40s (%.20s): unallocated compute slices",
                 r->trace, r->mapping);
        st = fill_chart(out, cfile, r, false, title);
        snprintf(title, sizeof(title), "MIG fill, %.40s (%.20s): wholly free GPUs",
                 r->trace, r->mapping);
        if (st == MS_OK)
            st = fill_chart(out, gfile, r, true, title);
        if (st != MS_OK)
            break;
        fprintf(md, "### %s, %s mapping\n\n`%s`, %ld x %s, %zu seed(s).\n\n"
                    "![compute](%s)\n![GPUs](%s)\n\n"
                    "| policy | unalloc compute %% | unalloc memory %% | unalloc GPUs %% | "
                    "FragCost | failed pods %% |\n|---|---:|---:|---:|---:|---:|\n",
                r->trace, r->mapping, r->pods, r->ngpus, r->model, r->nseeds, cfile, gfile);
        for (i = 0; i < r->npol; i++) {
            const ms_report_fill_pol_t *q = &r->pol[i];
            fprintf(md, "| %s | %.2f ± %.2f | %.2f ± %.2f | %.2f ± %.2f | %.4f ± %.4f | "
                        "%.2f ± %.2f |\n", q->policy, q->compute.mean, q->compute.sd,
                    q->mem.mean, q->mem.sd, q->gpu.mean, q->gpu.sd, q->fragcost.mean,
                    q->fragcost.sd, q->failed.mean, q->failed.sd);
            fprintf(tab, "%s,%s,%s,%ld,%zu,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.6f,%.6f,%.4f,"
                         "%.4f\n", r->trace, r->mapping, r->model, r->ngpus, r->nseeds,
                    q->policy, q->compute.mean, q->compute.sd, q->mem.mean, q->mem.sd,
                    q->gpu.mean, q->gpu.sd, q->fragcost.mean, q->fragcost.sd, q->failed.mean,
                    q->failed.sd);
            for (j = 0; j < q->n; j++)
                fprintf(cur, "%s,%s,%s,%zu,%.4f,%.4f,%.6f\n", r->trace, r->mapping, q->policy,
                        j, q->compute_pct[j], q->gpu_pct[j], q->fragcost_curve[j]);
        }
        fputc('\n', md);
    }
    fprintf(md, "CSV: `fill_table.csv` (the tables), `fill_curves.csv` (every curve, mean over "
                "seeds).\n\n");
    st = closef(tab, st);
    st = closef(cur, st);
    return st != MS_OK ? st : ferror(md) ? MS_EIO : MS_OK;
}

typedef ms_status_t (*json_reader_fn)(FILE *f, const char *name, void **out, ms_diag_t *d);

static ms_status_t read_fgd_v(FILE *f, const char *name, void **out, ms_diag_t *d)
{
    ms_report_fgd_t *r = NULL;
    ms_status_t st = ms_report_read_fgd(f, name, &r, d);

    *out = r;
    return st;
}

static ms_status_t read_fill_v(FILE *f, const char *name, void **out, ms_diag_t *d)
{
    ms_report_fill_t *r = NULL;
    ms_status_t st = ms_report_read_fill(f, name, &r, d);

    *out = r;
    return st;
}

static ms_status_t read_all(const list_t *l, json_reader_fn fn, void **out, ms_diag_t *d)
{
    size_t i;
    ms_status_t st = MS_OK;

    for (i = 0; i < l->n && st == MS_OK; i++) {
        FILE *f = fopen(l->v[i], "r");
        if (f == NULL) {
            ms_diag_set(d, l->v[i], 0, "", "cannot open");
            return MS_EIO;
        }
        st = fn(f, l->v[i], &out[i], d);
        fclose(f);
    }
    return st;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched report [--runs DIR1,DIR2,...] [--metrics M1.json,...]\n"
        "                       [--fgd F1.json,...] [--fill F1.json,...] --out DIR\n"
        "                       [--model M]\n"
        "  --runs LIST     run directories, each with metrics.json, optional schedule.csv\n"
        "                  and optional trace.csv, as `simulate --out DIR` writes (and\n"
        "                  `migsched experiment` in its runs/)\n"
        "  --metrics LIST  metrics JSON files (no schedules: no Gantt, no utilisation)\n"
        "  --fgd LIST      `migsched fgd-experiment --json` files (one per trace)\n"
        "  --fill LIST     `migsched import-alibaba --fill --json` files\n"
        "  --out DIR       report directory (created)\n"
        "  --model M       GPU model of the schedules (default A100-40GB)\n"
        "Writes README.md and, per input kind: metrics.csv, compare.svg, utilisation.svg,\n"
        "fragcost_time.svg, timeseries.csv, wait_cdf.svg, waits.csv, gantt_*.svg (runs);\n"
        "fgd_*.svg, fgd_table.csv, fgd_curves.csv (--fgd); fill_*.svg, fill_table.csv,\n"
        "fill_curves.csv (--fill). At least one input list is required.\n");
}

int ms_cli_report(int argc, char **argv)
{
    static const struct option lopts[] = {
        { "runs", required_argument, NULL, 'r' },
        { "metrics", required_argument, NULL, 'm' },
        { "fgd", required_argument, NULL, 'F' },
        { "fill", required_argument, NULL, 'L' },
        { "out", required_argument, NULL, 'o' },
        { "model", required_argument, NULL, 'M' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    list_t dirs = { NULL, 0, 0 }, jsons = { NULL, 0, 0 }, fgds = { NULL, 0, 0 },
           fills = { NULL, 0, 0 };
    const char *out = NULL, *model = "A100-40GB";
    const ms_model_t *mdl;
    ms_geom_t *g = NULL;
    run_t *runs = NULL;
    void **fgdr = NULL, **fillr = NULL;
    size_t n = 0, i;
    ms_diag_t d;
    ms_status_t st = MS_OK;
    FILE *md = NULL;
    int c, rc = 0;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        switch (c) {
        case 'r': st = list_add_csv(&dirs, optarg); break;
        case 'm': st = list_add_csv(&jsons, optarg); break;
        case 'F': st = list_add_csv(&fgds, optarg); break;
        case 'L': st = list_add_csv(&fills, optarg); break;
        case 'o': out = optarg; break;
        case 'M': model = optarg; break;
        case 'h':
            usage(stdout);
            rc = -1;
            break;
        default:
            usage(stderr);
            rc = 2;
            break;
        }
        if (st != MS_OK || rc != 0)
            break;
    }
    if (st == MS_OK && rc == 0 &&
        (out == NULL || optind != argc || dirs.n + jsons.n + fgds.n + fills.n == 0)) {
        usage(stderr);
        rc = 2;
    }
    mdl = ms_model_find(model);
    if (st == MS_OK && rc == 0 && mdl == NULL) {
        fprintf(stderr, "migsched report: unknown model '%s'\n", model);
        rc = 2;
    }
    if (rc != 0) {
        list_free(&dirs);
        list_free(&jsons);
        list_free(&fgds);
        list_free(&fills);
        return rc < 0 ? 0 : rc;
    }
    if (st == MS_OK)
        st = ms_geom_create(mdl, 0, &g);
    if (st == MS_OK) {
        runs = calloc(dirs.n + jsons.n + 1, sizeof(*runs));
        fgdr = calloc(fgds.n + 1, sizeof(*fgdr));
        fillr = calloc(fills.n + 1, sizeof(*fillr));
        if (runs == NULL || fgdr == NULL || fillr == NULL)
            st = MS_ENOMEM;
    }
    for (i = 0; st == MS_OK && i < dirs.n + jsons.n; i++) {
        bool is_dir = i < dirs.n;
        st = load_run(&runs[i], i, is_dir ? dirs.v[i] : jsons.v[i - dirs.n], is_dir, g, &d);
        n = i + 1;
    }
    if (st == MS_OK)
        st = read_all(&fgds, read_fgd_v, fgdr, &d);
    if (st == MS_OK)
        st = read_all(&fills, read_fill_v, fillr, &d);
    if (st == MS_OK && (st = ms_report_mkdirs(out)) != MS_OK)
        ms_diag_set(&d, out, 0, "", "cannot create the directory");
    if (st == MS_OK) {
        st = ms_report_fopen(out, "README.md", &md);
        if (st == MS_OK) {
            fprintf(md, "# migsched report\n\nWritten by `migsched report`; inputs:\n\n");
            for (i = 0; i < n; i++)
                fprintf(md, "- run `%s`\n", runs[i].src);
            for (i = 0; i < fgds.n; i++)
                fprintf(md, "- fgd-experiment `%s`\n", fgds.v[i]);
            for (i = 0; i < fills.n; i++)
                fprintf(md, "- import-alibaba --fill `%s`\n", fills.v[i]);
            fputc('\n', md);
            if (n > 0)
                st = write_runs(out, g, runs, n, md);
            if (st == MS_OK && fgds.n > 0)
                st = write_fgd(out, (ms_report_fgd_t **)fgdr, fgds.n, md);
            if (st == MS_OK && fills.n > 0)
                st = write_fill(out, (ms_report_fill_t **)fillr, fills.n, md);
            st = closef(md, st);
        }
        if (st != MS_OK)
            ms_diag_set(&d, out, 0, "", "cannot write the report: %s", ms_strerror(st));
    }
    if (st == MS_OK)
        printf("migsched report: %zu run(s), %zu fgd, %zu fill -> %s/README.md\n", n, fgds.n,
               fills.n, out);
    else
        rc = ms_cli_fail("report", st, &d);
    for (i = 0; i < n; i++)
        run_free(&runs[i]);
    free(runs);
    for (i = 0; fgdr != NULL && i < fgds.n; i++)
        ms_report_fgd_free(fgdr[i]);
    for (i = 0; fillr != NULL && i < fills.n; i++)
        ms_report_fill_free(fillr[i]);
    free(fgdr);
    free(fillr);
    ms_geom_destroy(g);
    list_free(&dirs);
    list_free(&jsons);
    list_free(&fgds);
    list_free(&fills);
    return rc;
}
