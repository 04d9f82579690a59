/* cmd_report.c - `migsched report`: runs (metrics JSON + schedule CSV, as
 * `migsched simulate` writes them) into a directory of Markdown, CSV and
 * SVG: a metrics table, a comparison chart, utilisation over time and a
 * Gantt slice map of every schedule. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/report.h"
#include "migsched/svg.h"

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

static ms_status_t write_report(const char *out, const ms_geom_t *g, run_t *runs, size_t n)
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
    {
        ms_svg_series_t *s = calloc(n > 0 ? n : 1, sizeof(*s));
        ms_svg_chart_t ch;
        int k = 0;

        if (s == NULL)
            return MS_ENOMEM;
        for (i = 0; i < n; i++)
            if (runs[i].has_sched) {
                s[k].name = label(&runs[i]);
                s[k].x = runs[i].ut;
                s[k].y = runs[i].uv;
                s[k].n = runs[i].nu;
                k++;
            }
        memset(&ch, 0, sizeof(ch));
        ch.title = "Utilisation over time (busy compute slices / all, from the schedule)";
        ch.xlabel = "time (s)";
        ch.ylabel = "utilisation";
        ch.step = true;
        ch.y_from_zero = true;
        st = k > 0 ? ms_report_fopen(out, "utilisation.svg", &f) : MS_OK;
        if (st == MS_OK && k > 0)
            st = closef(f, ms_svg_lines(f, &ch, s, k));
        free(s);
        if (st != MS_OK)
            return st;
    }

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

    /* README.md */
    if ((st = ms_report_fopen(out, "README.md", &f)) != MS_OK)
        return st;
    fprintf(f, "# migsched report\n\n%zu run(s), model %s.\n\n", n, ms_geom_model(g)->name);
    fprintf(f, "| run | policy | makespan s | lower bound s | gap | mean wait s | p99 wait s | "
               "mean exec s | mean JCT s | slowdown | FragCost | util | migrations | rejected |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < n; i++) {
        const ms_metrics_t *m = &runs[i].m;
        fprintf(f, "| `%s` | %s | %.0f | %.0f | %.1f%% | %.0f | %.0f | %.0f | %.0f | %.3f | %.3f | "
                   "%.3f | %ld | %ld |\n",
                runs[i].src, runs[i].policy[0] ? runs[i].policy : "-", m->makespan_s,
                m->lower_bound_s,
                m->lower_bound_s > 0.0 ? 100.0 * (m->makespan_s / m->lower_bound_s - 1.0) : NAN,
                m->mean_wait_s, m->p99_wait_s, m->mean_exec_s, m->mean_jct_s, m->mean_slowdown,
                m->mean_fragcost, m->mean_utilization, m->migrations, m->jobs_rejected);
    }
    fprintf(f, "\nCSV: `metrics.csv`.\n\n![compare](compare.svg)\n\n");
    {
        bool any = false;
        for (i = 0; i < n; i++)
            any = any || runs[i].has_sched;
        if (any)
            fprintf(f, "## Utilisation over time\n\n![utilisation](utilisation.svg)\n\n"
                       "## Schedules\n\n");
    }
    for (i = 0; i < n; i++)
        if (runs[i].has_sched && runs[i].ngpus > 0)
            fprintf(f, "### %s\n\n%zu segments on %d GPUs.\n\n![gantt](gantt_%s.svg)\n\n",
                    label(&runs[i]), runs[i].nseg, runs[i].ngpus, runs[i].name);
    return closef(f, MS_OK);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched report (--runs DIR1,DIR2,... | --metrics M1.json,...) --out DIR\n"
        "                       [--model M]\n"
        "  --runs LIST     run directories, each with metrics.json and (optional) schedule.csv\n"
        "  --metrics LIST  metrics JSON files (no schedules: no Gantt, no utilisation)\n"
        "  --out DIR       report directory (created)\n"
        "  --model M       GPU model of the schedules (default A100-40GB)\n"
        "Writes README.md, metrics.csv, compare.svg, utilisation.svg and gantt_*.svg.\n");
}

int ms_cli_report(int argc, char **argv)
{
    static const struct option lopts[] = {
        { "runs", required_argument, NULL, 'r' },
        { "metrics", required_argument, NULL, 'm' },
        { "out", required_argument, NULL, 'o' },
        { "model", required_argument, NULL, 'M' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    list_t dirs = { NULL, 0, 0 }, jsons = { NULL, 0, 0 };
    const char *out = NULL, *model = "A100-40GB";
    const ms_model_t *mdl;
    ms_geom_t *g = NULL;
    run_t *runs = NULL;
    size_t n = 0, i;
    ms_diag_t d;
    ms_status_t st = MS_OK;
    int c, rc = 0;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        switch (c) {
        case 'r': st = list_add_csv(&dirs, optarg); break;
        case 'm': st = list_add_csv(&jsons, optarg); break;
        case 'o': out = optarg; break;
        case 'M': model = optarg; break;
        case 'h': usage(stdout); list_free(&dirs); list_free(&jsons); return 0;
        default: usage(stderr); list_free(&dirs); list_free(&jsons); return 2;
        }
        if (st != MS_OK)
            break;
    }
    if (st == MS_OK && (out == NULL || optind != argc || dirs.n + jsons.n == 0)) {
        usage(stderr);
        list_free(&dirs);
        list_free(&jsons);
        return 2;
    }
    mdl = ms_model_find(model);
    if (st == MS_OK && mdl == NULL) {
        fprintf(stderr, "migsched report: unknown model '%s'\n", model);
        list_free(&dirs);
        list_free(&jsons);
        return 2;
    }
    if (st == MS_OK)
        st = ms_geom_create(mdl, 0, &g);
    if (st == MS_OK) {
        runs = calloc(dirs.n + jsons.n, sizeof(*runs));
        if (runs == NULL)
            st = MS_ENOMEM;
    }
    for (i = 0; st == MS_OK && i < dirs.n + jsons.n; i++) {
        bool is_dir = i < dirs.n;
        st = load_run(&runs[i], i, is_dir ? dirs.v[i] : jsons.v[i - dirs.n], is_dir, g, &d);
        n = i + 1;
    }
    if (st == MS_OK && (st = ms_report_mkdirs(out)) != MS_OK)
        ms_diag_set(&d, out, 0, "", "cannot create the directory");
    if (st == MS_OK) {
        st = write_report(out, g, runs, n);
        if (st != MS_OK)
            ms_diag_set(&d, out, 0, "", "cannot write the report: %s", ms_strerror(st));
    }
    if (st == MS_OK)
        printf("migsched report: %zu run(s) -> %s/README.md\n", n, out);
    else
        rc = ms_cli_fail("report", st, &d);
    for (i = 0; i < n; i++)
        run_free(&runs[i]);
    free(runs);
    ms_geom_destroy(g);
    list_free(&dirs);
    list_free(&jsons);
    return rc;
}
