/* cmd_experiment.c - `migsched experiment`: options, the progress display,
 * and the main table. The experiment itself (traces, runs, sweeps, the
 * report directory) is the library's: experiment.h, src/research/experiment*.c,
 * docs/experiment.md.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "migsched/research/experiment.h"
#include "migsched/research/report.h"

/* Progress on stderr when it is a terminal. */
typedef struct progress {
    bool tty;
    double t0;
} progress_t;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_progress(void *ctx, long done, long total, const char *what)
{
    const progress_t *p = ctx;

    if (!p->tty)
        return;
    fprintf(stderr, "\r\033[K[%ld/%ld %3.0f%%] %.1fs  %s", done, total,
            100.0 * (double)done / (double)(total > 0 ? total : 1), now_s() - p->t0, what);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched experiment [--out DIR] [--seeds N] [--jobs N] [--quick] [...]\n"
        "  --out DIR     report directory (default report/experiment)\n"
        "  --seeds N     traces per load, 1..64 (default 5; --quick 2)\n"
        "  --jobs N      jobs per trace, 1..1000000 (default 400; --quick 60)\n"
        "  --sweep-seeds N  traces per load in the t, beta and migration sweeps, 1..64\n"
        "                (default 20; --quick: --seeds)\n"
        "  --mean S      mean job duration, 0.001..1e8 seconds (default 600)\n"
        "  --sigma X     lognormal sigma of durations, 0.01..5 (default 1.0)\n"
        "  --beta B      interference per other busy instance, 0..10 (default 0.05;\n"
        "                the option table's, `migsched options`)\n"
        "  --queue Q     easy | backfill | fifo (default easy; docs/sched.md)\n"
        "  --quick       a tiny run (seconds), for tests\n"
        "  --scenario S  ablation (default) or platform: seed 002's mixed platform, MIG and\n"
        "                time-sliced A100 inference and whole-H100 training on one cluster,\n"
        "                every policy (report/platform by default)\n"
        "Runs the seed's ablation (static -> +load balancing -> +dynamic partitioning ->\n"
        "+migration) and the baselines on one node of 4 A100-40GB at three loads, sweeps\n"
        "the threshold t, beta and the migration cost, prints the main table and writes\n"
        "README.md, CSV and SVG files to DIR.\n");
}

static void print_results(const ms_experiment_t *x, const char *out, double t0)
{
    ms_experiment_summary_t s;
    int l;

    ms_experiment_summary(x, &s);
    printf("migsched experiment: %d x %s, %zu jobs per trace, %d seeds, loads ", s.ngpus,
           s.model, s.jobs, s.seeds);
    for (l = 0; l < s.nloads; l++)
        printf("%.1f%s", s.loads[l], l + 1 < s.nloads ? "/" : "\n\n");
    ms_experiment_write_table(stdout, x, false);
    printf("\nrecommended: lb threshold t = %.1f; ", s.t_best);
    if (s.mig_all)
        printf("migration pays up to %.0f s per move (all swept costs)\n", s.mig_max_s);
    else if (isnan(s.mig_limit_s))
        printf("migration did not pay at any swept cost\n");
    else
        printf("migration only if a move costs <= %.0f s\n", s.mig_limit_s);
    printf("report: %s/README.md (%.1f s)\n", out, now_s() - t0);
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
        { "queue", required_argument, NULL, 'Q' },
        { "sweep-seeds", required_argument, NULL, 'S' },
        { "quick", no_argument, NULL, 'q' },
        { "scenario", required_argument, NULL, 'x' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    ms_experiment_cfg_t cfg;
    ms_sim_cfg_t sc;           /* --beta and --queue through the option table */
    ms_opt_target_t t = ms_opt_target_sim(&sc);
    ms_experiment_t *x = NULL;
    progress_t pg;
    ms_diag_t d;
    ms_status_t st;
    long seeds = -1, jobs = -1, sweep_seeds = -1;
    double t0 = now_s();
    int c;
    const char *scenario = NULL;
    bool out_given = false;

    ms_experiment_cfg_defaults(&cfg);
    ms_sim_cfg_defaults(&sc);
    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        switch (c) {
        case 'o': cfg.out_dir = optarg; out_given = true; break;
        case 'x': scenario = optarg; break;
        case 's':
            if (!ms_cli_opt_long("experiment", "seeds", optarg, 1, 64, &seeds))
                return 2;
            cfg.seeds = (int)seeds;
            break;
        case 'S':
            if (!ms_cli_opt_long("experiment", "sweep-seeds", optarg, 1, 64, &sweep_seeds))
                return 2;
            cfg.sweep_seeds = (int)sweep_seeds;
            break;
        case 'j':
            if (!ms_cli_opt_long("experiment", "jobs", optarg, 1, 1000000, &jobs))
                return 2;
            cfg.jobs = jobs;
            break;
        case 'm':
            if (!ms_cli_opt_double("experiment", "mean", optarg, 0.001, 1e8, &cfg.mean_s))
                return 2;
            break;
        case 'g':
            if (!ms_cli_opt_double("experiment", "sigma", optarg, 0.01, 5, &cfg.sigma))
                return 2;
            break;
        case 'b':
            if (!ms_cli_opt_table("experiment", "beta", optarg, &t))
                return 2;
            cfg.beta = sc.beta;
            break;
        case 'Q':
            if (!ms_cli_opt_table("experiment", "queue", optarg, &t))
                return 2;
            cfg.queue = sc.sched.queue;
            break;
        case 'q': cfg.quick = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (scenario != NULL && strcmp(scenario, "ablation") != 0) {
        ms_platform_cfg_t pc;

        if (strcmp(scenario, "platform") != 0) {
            fprintf(stderr, "migsched experiment: --scenario is ablation (default) or platform\n");
            return 2;
        }
        memset(&pc, 0, sizeof(pc));
        pc.out_dir = out_given ? cfg.out_dir : "report/platform";
        pc.seeds = cfg.seeds;
        pc.njobs = cfg.jobs > 0 ? (size_t)cfg.jobs : 0;
        pc.quick = cfg.quick;
        if ((st = ms_platform_run(&pc, stdout, &d)) != MS_OK)
            return ms_cli_fail("experiment", st, &d);
        printf("report: %s/README.md (%.1f s)\n", pc.out_dir, now_s() - t0);
        return 0;
    }
    /* an --out that cannot be created is the user's error, said plainly */
    if (ms_report_mkdirs(cfg.out_dir) != MS_OK) {
        fprintf(stderr, "migsched experiment: cannot create '%s'\n", cfg.out_dir);
        return 1;
    }

    pg.tty = isatty(fileno(stderr)) != 0;
    pg.t0 = t0;
    cfg.ctx = &pg;
    cfg.on_progress = on_progress;
    if ((st = ms_experiment_run(&cfg, &x, &d)) != MS_OK)
        return ms_cli_fail("experiment", st, &d);
    print_results(x, cfg.out_dir, t0);
    ms_experiment_destroy(x);
    return 0;
}
