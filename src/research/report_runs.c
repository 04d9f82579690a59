/* report_runs.c - the runs of a report directory (report_dir.c): each run
 * read back (metrics JSON, and from a run directory its schedule CSV, the
 * series computed from it, its trace's wait times), then its files:
 * metrics.csv, compare.svg, utilisation.svg, a Gantt per schedule,
 * fragcost_time.svg and timeseries.csv, wait_cdf.svg and waits.csv, and
 * the README's "Runs" section. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "research/report_int.h"

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

ms_status_t ms__report_load_run(ms__report_run_t *r, size_t idx, const char *src, bool is_dir,
                                const ms_geom_t *g, ms_diag_t *d)
{
    char *path;
    FILE *f;
    ms_status_t st;

    memset(r, 0, sizeof(*r));
    r->src = malloc(strlen(src) + 1);
    r->name = ms__report_safe_name(idx, src);
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

void ms__report_run_free(ms__report_run_t *r)
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

static const char *label(const ms__report_run_t *r)
{
    return r->policy[0] != '\0' ? r->policy : r->name;
}

/* A step chart over time of every run with a schedule: utilisation, or
 * FragCost (runs with FragCost points only); written only when some run
 * has one. *nrun (if not NULL): how many runs it shows. */
static ms_status_t time_chart(const char *out, const char *file, const char *title,
                              const char *ylabel, const ms__report_run_t *runs, size_t n,
                              bool frag, int *nrun)
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
    st = k > 0 ? ms__report_lines(out, file, &ch, s, k) : MS_OK;
    free(s);
    if (nrun != NULL)
        *nrun = k;
    return st;
}

static ms_status_t metrics_csv(const char *out, const ms__report_run_t *runs, size_t n)
{
    FILE *f;
    ms_status_t st;
    size_t i;

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
    return ms__report_closef(f, MS_OK);
}

/* tenants.csv: one row per tenant with jobs of each run that has tenants
 * (nothing when none has) */
static ms_status_t tenants_csv(const char *out, const ms__report_run_t *runs, size_t n)
{
    FILE *f;
    ms_status_t st;
    size_t i;
    int k;

    for (i = 0; i < n && runs[i].m.ntenants == 0; i++)
        ;
    if (i == n)
        return MS_OK;
    if ((st = ms_report_fopen(out, "tenants.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "run,tenant,weight,guarantee,limit,jobs,completed,usage_share,contended_share,"
               "max_usage,mean_wait_s,p99_wait_s,mean_jct_s,jain_index,jain_hourly_min,"
               "reclaims,reclaims_open,reclaim_max_s,reclaim_mean_s\n");
    for (i = 0; i < n; i++)
        for (k = 0; k < runs[i].m.ntenants; k++) {
            const ms_tenant_metrics_t *t = &runs[i].m.tenants[k];
            const ms_metrics_t *m = &runs[i].m;

            if (t->jobs == 0)
                continue;
            fprintf(f, "%s,%s,%.6g,%ld,%ld,%ld,%ld,%.6f,%.6f,%ld,%.3f,%.3f,%.3f,%.6f,",
                    runs[i].name, t->name, t->weight, t->guarantee, t->limit, t->jobs,
                    t->completed, t->usage_share, t->contended_share, t->max_usage,
                    t->mean_wait_s, t->p99_wait_s, t->mean_jct_s, m->jain_index);
            /* empty: no whole hour after the first had demand (or a run
             * written before the per-hour index); no reclaim ended */
            if (m->jain_hours > 0 && isfinite(m->jain_hourly_min))
                fprintf(f, "%.6f", m->jain_hourly_min);
            fprintf(f, ",%ld,%ld,", t->reclaims, t->reclaims_open);
            if (t->reclaims > 0 && isfinite(t->reclaim_max_s) && isfinite(t->reclaim_mean_s))
                fprintf(f, "%.3f,%.3f", t->reclaim_max_s, t->reclaim_mean_s);
            else
                fputc(',', f);
            fputc('\n', f);
        }
    return ms__report_closef(f, MS_OK);
}

/* jain_hourly.csv: Jain's index of each hour of each run with tenants
 * (empty where no tenant had a job waiting) */
static ms_status_t jain_hourly_csv(const char *out, const ms__report_run_t *runs, size_t n)
{
    FILE *f;
    ms_status_t st;
    size_t i;
    long h;

    for (i = 0; i < n && runs[i].m.jain_hours == 0; i++)
        ;
    if (i == n)
        return MS_OK;
    if ((st = ms_report_fopen(out, "jain_hourly.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "run,hour,jain_index\n");
    for (i = 0; i < n; i++)
        for (h = 0; h < runs[i].m.jain_hours && h < MS_SIM_MAX_HOURS; h++) {
            double j = runs[i].m.jain_hourly[h];

            if (isfinite(j))
                fprintf(f, "%s,%ld,%.6f\n", runs[i].name, h, j);
            else
                fprintf(f, "%s,%ld,\n", runs[i].name, h);
        }
    return ms__report_closef(f, MS_OK);
}

/* share_<run>.svg for one run with tenants and hours: each tenant with
 * jobs, its usage share of each hour (x = the hour's start, in hours from
 * the first arrival), and dashed in its colour the share its weight
 * targets, weight / the weights of the tenants with jobs (what it would
 * hold while all of them saturate the cluster). */
static ms_status_t share_svg(const char *out, const ms__report_run_t *r)
{
    const ms_metrics_t *m = &r->m;
    long nh = m->jain_hours < MS_SIM_MAX_HOURS ? m->jain_hours : MS_SIM_MAX_HOURS, h;
    ms_svg_series_t s[2 * MS_SIM_MAX_TENANTS];
    /* a row of nh per tenant, then the hours' x */
    double *y = calloc((MS_SIM_MAX_TENANTS + 1) * (size_t)nh, sizeof(*y)), *hx,
           ty[MS_SIM_MAX_TENANTS][2], tx[2] = { 0.0, (double)(nh - 1) }, sumw = 0.0;
    char file[300], names[MS_SIM_MAX_TENANTS][96];
    ms_svg_chart_t ch;
    ms_status_t st;
    int k, nt = 0, ns, of[MS_SIM_MAX_TENANTS];

    if (y == NULL)
        return MS_ENOMEM;
    hx = y + (size_t)nh * MS_SIM_MAX_TENANTS;
    for (h = 0; h < nh; h++)
        hx[h] = (double)h;
    memset(s, 0, sizeof(s));
    for (k = 0; k < m->ntenants; k++)
        if (m->tenants[k].jobs > 0)
            sumw += m->tenants[k].weight;
    for (k = 0; k < m->ntenants; k++) {
        if (m->tenants[k].jobs == 0)
            continue;
        for (h = 0; h < nh; h++)
            y[(size_t)nt * (size_t)nh + (size_t)h] = m->share_hourly[h][k];
        s[nt] = (ms_svg_series_t){ .name = m->tenants[k].name, .x = hx,
                                   .y = y + (size_t)nt * (size_t)nh, .n = (size_t)nh };
        of[nt++] = k;
    }
    ns = nt;
    for (k = 0; k < nt && sumw > 0.0; k++) {
        ty[k][0] = ty[k][1] = m->tenants[of[k]].weight / sumw;
        snprintf(names[k], sizeof(names[k]), "%s target", s[k].name);
        s[ns++] = (ms_svg_series_t){ .name = names[k], .x = tx, .y = ty[k], .n = 2,
                                     .dashed = true, .color = k + 1 };
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = "Tenants' usage share per hour (dashed: the weights' target)";
    ch.xlabel = "hour from the first arrival";
    ch.ylabel = "share of the compute slices";
    ch.y_from_zero = true;
    snprintf(file, sizeof(file), "share_%s.svg", r->name);
    st = ms__report_lines(out, file, &ch, s, ns);
    free(y);
    return st;
}

static ms_status_t share_svgs(const char *out, const ms__report_run_t *runs, size_t n)
{
    ms_status_t st = MS_OK;
    size_t i;

    for (i = 0; i < n && st == MS_OK; i++)
        if (runs[i].m.ntenants > 0 && runs[i].m.jain_hours > 0)
            st = share_svg(out, &runs[i]);
    return st;
}

/* compare.svg: groups = metrics, series = runs */
static ms_status_t compare_svg(const char *out, const ms__report_run_t *runs, size_t n)
{
    static const char *const GROUPS[] = { "makespan", "mean wait", "p99 wait", "mean exec",
                                          "mean JCT" };
    FILE *f;
    ms_status_t st;
    size_t i;
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
        st = ms__report_closef(f, ms_svg_bars(f, &ch, &b));
    free(val);
    free(names);
    return st;
}

/* a Gantt per schedule */
static ms_status_t gantts(const char *out, const ms_geom_t *g, const ms__report_run_t *runs,
                          size_t n)
{
    FILE *f;
    ms_status_t st;
    size_t i;
    char file[128];

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
        st = ms__report_closef(f, ms_svg_gantt(f, &ch, g, runs[i].ngpus, runs[i].segs,
                                                runs[i].nseg));
        if (st != MS_OK)
            return st;
    }
    return MS_OK;
}

/* FragCost over time; utilisation and FragCost as CSV */
static ms_status_t timeseries(const char *out, const ms__report_run_t *runs, size_t n)
{
    FILE *f;
    ms_status_t st;
    size_t i, j;
    int k = 0;

    if ((st = time_chart(out, "fragcost_time.svg",
                         "FragCost over time (mean over GPUs, replayed from the schedule)",
                         "FragCost", runs, n, true, &k)) != MS_OK)
        return st;
    if (k == 0)
        return MS_OK;
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
    return ms__report_closef(f, MS_OK);
}

/* wait-time CDFs: every run with a trace */
static ms_status_t wait_cdfs(const char *out, const ms__report_run_t *runs, size_t n)
{
    FILE *f;
    ms_status_t st;
    size_t i;
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
        st = ms__report_closef(f, ms_svg_cdf(f, &ch, names, smp, cnt, k));
    free(names);
    free(smp);
    free(cnt);
    if (st != MS_OK || k == 0)
        return st;
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
    return ms__report_closef(f, st);
}

/* The README's table of runs. */
static void runs_table(FILE *md, const ms_geom_t *g, const ms__report_run_t *runs, size_t n)
{
    size_t i;

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
                "a job). CSV: `metrics.csv`, `timeseries.csv`, `waits.csv` (and `tenants.csv`, "
                "`jain_hourly.csv` when a run has tenants; then `share_<run>.svg` plots each "
                "tenant's share per hour against its weight's target).\n\n"
                "![compare](compare.svg)\n\n");
}

/* The README's charts over time, wait times and schedules. */
static ms_status_t runs_sections(FILE *md, const ms__report_run_t *runs, size_t n)
{
    bool any = false, anyw = false;
    size_t i;

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
    for (i = 0; i < n; i++)
        if (runs[i].has_sched && runs[i].ngpus > 0)
            fprintf(md, "#### %s\n\n%zu segments on %d GPUs.\n\n![gantt](gantt_%s.svg)\n\n",
                    label(&runs[i]), runs[i].nseg, runs[i].ngpus, runs[i].name);
    return ferror(md) ? MS_EIO : MS_OK;
}

ms_status_t ms__report_write_runs(const char *out, const ms_geom_t *g,
                                  const ms__report_run_t *runs, size_t n, FILE *md)
{
    ms_status_t st;

    if ((st = metrics_csv(out, runs, n)) != MS_OK || (st = tenants_csv(out, runs, n)) != MS_OK ||
        (st = jain_hourly_csv(out, runs, n)) != MS_OK || (st = share_svgs(out, runs, n)) != MS_OK ||
        (st = compare_svg(out, runs, n)) != MS_OK)
        return st;
    st = time_chart(out, "utilisation.svg",
                    "Utilisation over time (busy compute slices / all, from the schedule)",
                    "utilisation", runs, n, false, NULL);
    if (st != MS_OK || (st = gantts(out, g, runs, n)) != MS_OK ||
        (st = timeseries(out, runs, n)) != MS_OK || (st = wait_cdfs(out, runs, n)) != MS_OK)
        return st;
    runs_table(md, g, runs, n);
    return runs_sections(md, runs, n);
}
