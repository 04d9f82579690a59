/* cmd_zoo.c - `migsched zoo`: the workload zoo benchmark (zoo.h,
 * src/research/zoo*.c, docs/zoo.md). Options, progress, the summary table. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
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
        "  --out DIR        report directory (default report/zoo)\n"
        "  --seeds N        traces per workload (default 10; --quick 2)\n"
        "  --seed0 S        first seed (default 1)\n"
        "  --jobs-scale X   jobs per trace x X (default 1)\n"
        "  --variants LIST  comma list of policy[/nomig|/nobal|/t=X|/mig=S|/roomq=N|/fifo|/easy|\n"
        "                   /backfill|/bound=S|/aging=R|/esterr=E]...\n"
        "                   (default fa+,fa,first-fit,best-fit,fgd,mfi,static,node-profile,\n"
        "                   fa+/nomig,fa/nomig)\n"
        "  --only LIST      comma list of workloads (default all)\n"
        "  --beta B         interference (default 0.05)\n"
        "  --migrate-s S    migration cost (default 10)\n"
        "  --queue Q        easy | backfill | fifo (default easy)\n"
        "  --backfill-bound S  backfill bound, s or inf (default 3600)\n"
        "  --aging-rate R   aging, priority points per hour waited (default 0)\n"
        "  --estimate-error E  estimates duration x exp(E x N(0,1)), 0..3 (default 0)\n"
        "  --quick          3 small workloads, 2 seeds, a quarter of the jobs (seconds)\n"
        "Writes zoo.md, zoo.csv, zoo_runs.csv, zoo_jct.svg and zoo_makespan.svg to DIR\n"
        "and prints the summary table. Workloads:\n");
    for (i = 0; i < n; i++)
        fprintf(f, "  %-20s %s\n", w[i].name, w[i].what);
}

static int bad(const char *opt, const char *range)
{
    fprintf(stderr, "migsched zoo: %s wants %s\n", opt, range);
    return 2;
}

int ms_cli_zoo(int argc, char **argv)
{
    static const struct option lopts[] = {
        { "out", required_argument, NULL, 'o' },
        { "seeds", required_argument, NULL, 's' },
        { "seed0", required_argument, NULL, '0' },
        { "jobs-scale", required_argument, NULL, 'j' },
        { "variants", required_argument, NULL, 'v' },
        { "only", required_argument, NULL, 'w' },
        { "beta", required_argument, NULL, 'b' },
        { "migrate-s", required_argument, NULL, 'm' },
        { "queue", required_argument, NULL, 'Q' },
        { "backfill-bound", required_argument, NULL, 'B' },
        { "aging-rate", required_argument, NULL, 'A' },
        { "estimate-error", required_argument, NULL, 'E' },
        { "quick", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *out = "report/zoo";
    ms_zoo_cfg_t cfg;
    ms_zoo_t *z = NULL;
    zprog_t pg;
    ms_diag_t d;
    ms_status_t st;
    long v;
    int c;

    ms_zoo_cfg_defaults(&cfg);
    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 's':
            if (!ms_cli_parse_long(optarg, &v) || v < 1 || v > 1000)
                return bad("--seeds", "1..1000");
            cfg.seeds = (int)v;
            break;
        case '0':
            if (!ms_cli_parse_long(optarg, &v) || v < 0)
                return bad("--seed0", "a number >= 0");
            cfg.seed0 = (uint64_t)v;
            break;
        case 'j':
            if (!ms_cli_parse_double(optarg, &cfg.jobs_scale) || !(cfg.jobs_scale > 0.0) ||
                cfg.jobs_scale > 100.0)
                return bad("--jobs-scale", "(0, 100]");
            break;
        case 'v': cfg.variants = optarg; break;
        case 'w': cfg.only = optarg; break;
        case 'b':
            if (!ms_cli_parse_double(optarg, &cfg.beta) || !(cfg.beta >= 0.0) || cfg.beta > 10.0)
                return bad("--beta", "[0, 10]");
            break;
        case 'm':
            if (!ms_cli_parse_double(optarg, &cfg.migrate_s) || !(cfg.migrate_s >= 0.0) ||
                cfg.migrate_s > 1e6)
                return bad("--migrate-s", "[0, 1e6]");
            break;
        case 'Q':
            if (ms_queue_mode_parse(optarg, &cfg.queue) != MS_OK)
                return bad("--queue", "backfill, fifo or easy");
            break;
        case 'B':
            if (strcmp(optarg, "inf") == 0)
                cfg.backfill_bound_s = INFINITY;
            else if (!ms_cli_parse_double(optarg, &cfg.backfill_bound_s) ||
                     !(cfg.backfill_bound_s >= 0.0) || cfg.backfill_bound_s > 1e12)
                return bad("--backfill-bound", "[0, 1e12] or inf");
            break;
        case 'A':
            if (!ms_cli_parse_double(optarg, &cfg.aging_rate) || !(cfg.aging_rate >= 0.0) ||
                cfg.aging_rate > 1e6)
                return bad("--aging-rate", "[0, 1e6]");
            break;
        case 'E':
            if (!ms_cli_parse_double(optarg, &cfg.estimate_error) ||
                !(cfg.estimate_error >= 0.0) || cfg.estimate_error > 3.0)
                return bad("--estimate-error", "[0, 3]");
            break;
        case 'q': cfg.quick = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "migsched zoo: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    pg.tty = isatty(fileno(stderr)) != 0;
    pg.t0 = now_s();
    cfg.ctx = &pg;
    cfg.on_progress = on_progress;
    if ((st = ms_zoo_run(&cfg, &z, &d)) != MS_OK)
        return ms_cli_fail("zoo", st, &d);
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
