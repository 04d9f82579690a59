/* cmd_zoo.c - `migsched zoo`: the workload zoo benchmark (zoo.h,
 * src/research/zoo*.c, docs/zoo.md). Options, progress, the summary table. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "migsched/number.h"
#include "migsched/research/zoo.h"

typedef struct zprog {
    bool tty;
    double t0;
} zprog_t;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_progress(void *ctx, long done, long total, const char *what)
{
    const zprog_t *p = ctx;

    if (!p->tty)
        return;
    fprintf(stderr, "\r\033[K[%ld/%ld] %.1fs  %s", done, total, now_s() - p->t0, what);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static void usage(FILE *f)
{
    int n, i;
    const ms_zoo_workload_t *w = ms_zoo_workloads(&n);

    fprintf(f,
        "usage: migsched zoo [--out DIR] [--seeds N] [--variants LIST] [--only LIST] [--quick]\n"
        "  --out DIR              report directory (default report/zoo)\n"
        "  --seeds N              traces per workload, 1..1000 (default 10; --quick 2)\n"
        "  --seed0 S              first seed (default 1)\n"
        "  --jobs-scale X         jobs per trace x X, (0, 100] (default 1)\n"
        "  --variants LIST        comma list of policy[/OPTION]...: an option below as\n"
        "                         NAME=VALUE (or NAME, no-NAME), or nomig, nobal, t=X, mig=S,\n"
        "                         roomq=N, fifo, easy, backfill, bound=S, aging=R, esterr=E,\n"
        "                         or node=N (the workloads' GPUs in nodes of N, 1..1024)\n"
        "                         (default fa+,fa,first-fit,best-fit,fgd,mfi,static,node-profile,\n"
        "                         fa+/nomig,fa/nomig)\n"
        "  --only LIST            comma list of workloads (default all but those with tenants)\n"
        "  --quick                3 small workloads, 2 seeds, a quarter of the jobs (seconds)\n"
        "  --traces DIR           also write each trace as DIR/WORKLOAD-SEED.csv (to simulate one\n"
        "                         run again: `migsched simulate --trace` with its --tenant's)\n"
        "queue, policy and simulator options for every variant (`migsched options`):\n");
    ms_cli_opts_help(f, MS_OPT_POLICY | MS_OPT_QUEUE | MS_OPT_SIM);
    fprintf(f, "Writes zoo.md, zoo.csv, zoo_runs.csv, zoo_jct.svg and zoo_makespan.svg to DIR\n"
               "and prints the summary table. Workloads:\n");
    for (i = 0; i < n; i++)
        fprintf(f, "  %-20s %s\n", w[i].name, w[i].what);
}

static int bad(const char *opt, const char *range)
{
    fprintf(stderr, "migsched zoo: %s wants %s\n", opt, range);
    return 2;
}

/* The command line into cfg: -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, ms_zoo_cfg_t *cfg, const char **out)
{
    static const struct option own[] = {
        { "out", required_argument, NULL, 'o' },
        { "seeds", required_argument, NULL, 's' },
        { "seed0", required_argument, NULL, '0' },
        { "jobs-scale", required_argument, NULL, 'j' },
        { "variants", required_argument, NULL, 'v' },
        { "only", required_argument, NULL, 'w' },
        { "quick", no_argument, NULL, 'q' },
        { "traces", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    ms_opt_target_t t = ms_opt_target_sim(&cfg->sim);
    struct option *opts = ms_cli_opts(own, MS_OPT_POLICY | MS_OPT_QUEUE | MS_OPT_SIM);
    int c, rc = -1;
    long v;

    if (opts == NULL)
        return bad("memory", "more");
    optind = 1;
    while (rc < 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'o': *out = optarg; break;
        case 's':
            if (!ms_cli_parse_long(optarg, &v) || v < 1 || v > 1000)
                rc = bad("--seeds", "1..1000");
            cfg->seeds = (int)v;
            break;
        case '0':
            if (ms_number_uint(optarg, UINT64_MAX, &cfg->seed0) != MS_OK)
                rc = bad("--seed0", "an integer in [0, 18446744073709551615]");
            break;
        case 'j':
            if (!ms_cli_parse_double(optarg, &cfg->jobs_scale) || !(cfg->jobs_scale > 0.0) ||
                cfg->jobs_scale > 100.0)
                rc = bad("--jobs-scale", "(0, 100]");
            break;
        case 'v': cfg->variants = optarg; break;
        case 'w': cfg->only = optarg; break;
        case 'q': cfg->quick = true; break;
        case 't': cfg->trace_dir = optarg; break;
        case 'h': usage(stdout); rc = 0; break;
        default:
            if (ms_cli_opts_is(c))
                rc = ms_cli_opts_set("zoo", c, optarg, &t) ? -1 : 2;
            else {
                usage(stderr);
                rc = 2;
            }
        }
    }
    free(opts);
    if (rc < 0 && optind != argc) {
        fprintf(stderr, "migsched zoo: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        rc = 2;
    }
    return rc;
}

int ms_cli_zoo(int argc, char **argv)
{
    const char *out = "report/zoo";
    ms_zoo_cfg_t cfg;
    ms_zoo_t *z = NULL;
    zprog_t pg;
    ms_diag_t d;
    ms_status_t st;
    int rc;

    ms_zoo_cfg_defaults(&cfg);
    ms_diag_clear(&d);
    if ((rc = parse_args(argc, argv, &cfg, &out)) >= 0)
        return rc;
    pg.tty = isatty(fileno(stderr)) != 0;
    pg.t0 = now_s();
    cfg.ctx = &pg;
    cfg.on_progress = on_progress;
    if ((st = ms_zoo_run(&cfg, &z, &d)) != MS_OK) {
        ms_cli_fail("zoo", st, &d);
        /* a bad --variants or --only is an option value: usage */
        return st == MS_EINVAL ? 2 : 1;
    }
    if ((st = ms_zoo_write(z, out, &d)) != MS_OK) {
        ms_zoo_destroy(z);
        return ms_cli_fail("zoo", st, &d);
    }
    printf("migsched zoo: %d workloads x %d variants, %.1f s\n\n", ms_zoo_nworkloads(z),
           ms_zoo_nvariants(z), now_s() - pg.t0);
    ms_zoo_write_summary(stdout, z);
    printf("\nreport: %s/zoo.md\n", out);
    ms_zoo_destroy(z);
    return 0;
}
