/* cmd_report.c - `migsched report`: runs (metrics JSON + schedule CSV +
 * optional trace CSV, as `migsched simulate` and `migsched experiment`
 * write them) and fill experiments (fgd-experiment and import-alibaba
 * --fill JSON) into a directory of Markdown, CSV and SVG. The report
 * itself is the library's (ms_report_write_dir, research/report.h,
 * src/research/report_dir.c); this file parses the options. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/research/report.h"

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
    ms_report_inputs_t in;
    ms_geom_t *g = NULL;
    ms_diag_t d;
    ms_status_t st = MS_OK;
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
    if (st == MS_OK && rc == 0 && (st = ms_geom_create(mdl, 0, &g)) == MS_OK) {
        memset(&in, 0, sizeof(in));
        in.runs = (const char *const *)dirs.v;
        in.nruns = dirs.n;
        in.metrics = (const char *const *)jsons.v;
        in.nmetrics = jsons.n;
        in.fgd = (const char *const *)fgds.v;
        in.nfgd = fgds.n;
        in.fill = (const char *const *)fills.v;
        in.nfill = fills.n;
        in.geom = g;
        st = ms_report_write_dir(&in, out, &d);
        if (st == MS_OK)
            printf("migsched report: %zu run(s), %zu fgd, %zu fill -> %s/README.md\n",
                   dirs.n + jsons.n, fgds.n, fills.n, out);
    }
    if (st != MS_OK)
        rc = ms_cli_fail("report", st, &d);
    ms_geom_destroy(g);
    list_free(&dirs);
    list_free(&jsons);
    list_free(&fgds);
    list_free(&fills);
    return rc < 0 ? 0 : rc;
}
