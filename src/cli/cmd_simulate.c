/* cmd_simulate.c - `migsched simulate`: replay a trace on a simulated MIG
 * cluster with one policy; print a summary, optionally write the schedule
 * CSV and the metrics JSON. Policy, queue and simulator options come from
 * the one option table (options.h, opts.c). Exit codes: 0 ok, 1 input
 * error, 2 usage. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "migsched/research/report.h"
#include "migsched/schedule.h"
#include "migsched/sim.h"

#define C "simulate"
#define ALL_SCOPES (MS_OPT_POLICY | MS_OPT_QUEUE | MS_OPT_SIM)

static void usage(FILE *f)
{
    int n, i;
    const ms_policy_ops_t *const *all = ms_policies(&n);

    fprintf(f,
        "usage: migsched simulate --trace T.csv (--gpus N | --node SPEC ...) [--policy P] [options]\n"
        "  --trace FILE          job trace CSV (job_id,arrival_s,profile,duration_s[,gpus]);\n"
        "                        '-' = stdin\n"
        "  --gpus N              number of GPUs (one model, --model), 1..1000000\n"
        "  --node SPEC           a node NAME=COUNTxMODEL[:mig|:timeslice=R|:whole], repeated:\n"
        "                        a heterogeneous cluster (the schedule gains node,model)\n"
        "  --cluster FILE        nodes from a file, one SPEC a line ('#' comments)\n"
        "  --policy P            placement policy (see below; default fa+, this project's own)\n"
        "  --model M             GPU model (default A100-40GB)\n"
        "  --profiles LIST       active profile set (default: the classic ones)\n"
        "  --gpus-per-node K     GPUs per node, 1..1000000 (default: all on one node)\n"
        "  --schedule-out FILE   schedule CSV, one row per segment ('-' = stdout)\n"
        "  --metrics-out FILE    metrics JSON ('-' = stdout)\n"
        "  --out DIR             a run directory for `migsched report --runs DIR`:\n"
        "                        DIR/schedule.csv, DIR/metrics.json, DIR/trace.csv\n"
        "  --quiet               no summary\n"
        "queue, policy and simulator options (`migsched options`; a flag X is also --no-X):\n");
    ms_cli_opts_help(f, ALL_SCOPES);
    fprintf(f, "policies:");
    for (i = 0; i < n; i++)
        fprintf(f, " %s", all[i]->name);
    fprintf(f, "\n");
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct run_ctx {
    ms_schedule_writer_t *w;
    int bar;                 /* draw a progress bar on stderr */
    int last_pct;
} run_ctx_t;

static void on_segment(void *ctx, const ms_segment_t *seg)
{
    run_ctx_t *r = ctx;

    if (r->w != NULL)
        ms_schedule_on_segment(r->w, seg);
}

static void on_progress(void *ctx, size_t done, size_t total)
{
    run_ctx_t *r = ctx;
    int pct = total > 0 ? (int)(100.0 * (double)done / (double)total) : 100, i;

    if (!r->bar || pct == r->last_pct)
        return;
    r->last_pct = pct;
    fputs("\r[", stderr);
    for (i = 0; i < 40; i++)
        fputc(i < pct * 40 / 100 ? '#' : ' ', stderr);
    fprintf(stderr, "] %3d%%%s", pct, done >= total ? "\n" : "");
    fflush(stderr);
}

static void summary(const ms_sim_cfg_t *cfg, const ms_model_t *m, const ms_metrics_t *x)
{
    double gap = x->lower_bound_s > 0 ? 100.0 * (x->makespan_s / x->lower_bound_s - 1.0) : 0;

    if (cfg->sched.nnodes > 0)
        printf("policy %s on %d nodes: %ld jobs, %ld completed, %ld rejected\n",
               cfg->sched.policy->name, cfg->sched.nnodes, x->jobs_total, x->jobs_completed,
               x->jobs_rejected);
    else
        printf("policy %s on %d x %s: %ld jobs, %ld completed, %ld rejected\n",
               cfg->sched.policy->name, cfg->ngpus, m->name, x->jobs_total, x->jobs_completed,
               x->jobs_rejected);
    if (x->jobs_completed + x->jobs_rejected + x->over_limit < x->jobs_total)
        printf("warning: %ld jobs never started (no placement ever fitted)\n",
               x->jobs_total - x->jobs_completed - x->jobs_rejected - x->over_limit);
    printf("makespan      %.1f s (lower bound %.1f s, gap %.1f%%)\n", x->makespan_s,
           x->lower_bound_s, gap);
    printf("wait          mean %.1f s, p50 %.1f, p95 %.1f, p99 %.1f, max %.1f\n",
           x->mean_wait_s, x->p50_wait_s, x->p95_wait_s, x->p99_wait_s, x->max_wait_s);
    printf("execution     mean %.1f s, JCT mean %.1f s, slowdown %.3f\n", x->mean_exec_s,
           x->mean_jct_s, x->mean_slowdown);
    printf("changes       %ld migrations (%ld break-before-make), %ld reconfigurations\n",
           x->migrations, x->migrations_bbm, x->reconfigurations);
    printf("cluster       mean FragCost %.4f, mean utilisation %.1f%%\n", x->mean_fragcost,
           100.0 * x->mean_utilization);
    printf("simulated     %ld events in %.3f s\n", x->events, x->wall_s);
}

/* What the command line names besides the option table's settings. */
typedef struct sim_args {
    const char *trace_path, *model, *profiles, *pname;
    const char *sched_path, *metrics_path, *out_dir;
    char *own_sched, *own_metrics;   /* DIR/schedule.csv, DIR/metrics.json */
    long gpus;
    bool model_given, quiet;
    ms_cluster_spec_t *cs;           /* --node, --cluster */
} sim_args_t;

static void args_free(sim_args_t *a)
{
    ms_cluster_spec_destroy(a->cs);
    free(a->own_sched);
    free(a->own_metrics);
}

/* A --node or --cluster: 0, or the exit code after saying why. */
static int add_nodes(sim_args_t *a, bool file, const char *arg)
{
    ms_diag_t d;
    ms_status_t st;

    ms_diag_clear(&d);
    if (a->cs == NULL && ms_cluster_spec_create(&a->cs) != MS_OK) {
        fprintf(stderr, "migsched simulate: out of memory\n");
        return 1;
    }
    st = file ? ms_cluster_spec_read_file(a->cs, arg, 0, &d) : ms_cluster_spec_add(a->cs, arg, 0, &d);
    if (st == MS_OK)
        return 0;
    if (!file) {
        fprintf(stderr, "migsched simulate: --node: %s\n", d.msg);
        return 2;
    }
    return ms_cli_fail(C, st, &d);
}

/* The command line into cfg and a. Returns -1 to go on, else the exit code
 * (0 after --help). */
static int parse_args(int argc, char **argv, ms_sim_cfg_t *cfg, sim_args_t *a)
{
    enum { O_TRACE = 256, O_GPUS, O_POLICY, O_MODEL, O_PROFILES, O_GPN, O_SCHED, O_METRICS,
           O_QUIET, O_HELP, O_OUT, O_NODE, O_CLUSTER };
    static const struct option own[] = {
        { "trace", required_argument, NULL, O_TRACE },
        { "node", required_argument, NULL, O_NODE },
        { "cluster", required_argument, NULL, O_CLUSTER },
        { "gpus", required_argument, NULL, O_GPUS },
        { "policy", required_argument, NULL, O_POLICY },
        { "model", required_argument, NULL, O_MODEL },
        { "profiles", required_argument, NULL, O_PROFILES },
        { "gpus-per-node", required_argument, NULL, O_GPN },
        { "schedule-out", required_argument, NULL, O_SCHED },
        { "metrics-out", required_argument, NULL, O_METRICS },
        { "quiet", no_argument, NULL, O_QUIET },
        { "out", required_argument, NULL, O_OUT },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    ms_opt_target_t t = ms_opt_target_sim(cfg);
    struct option *opts = ms_cli_opts(own, ALL_SCOPES);
    int c, rc = -1;
    long v;

    if (opts == NULL) {
        fprintf(stderr, "migsched simulate: out of memory\n");
        return 1;
    }
    optind = 1;
    while (rc < 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_TRACE: a->trace_path = optarg; break;
        case O_GPUS: rc = ms_cli_opt_long(C, "gpus", optarg, 1, 1000000, &a->gpus) ? -1 : 2; break;
        case O_POLICY: a->pname = optarg; break;
        case O_MODEL: a->model = optarg; a->model_given = true; break;
        case O_NODE:
        case O_CLUSTER:
            rc = add_nodes(a, c == O_CLUSTER, optarg);
            rc = rc != 0 ? rc : -1;
            break;
        case O_PROFILES: a->profiles = optarg; break;
        case O_GPN:
            if (ms_cli_opt_long(C, "gpus-per-node", optarg, 1, 1000000, &v))
                cfg->gpus_per_node = (int)v;
            else
                rc = 2;
            break;
        case O_SCHED: a->sched_path = optarg; break;
        case O_METRICS: a->metrics_path = optarg; break;
        case O_QUIET: a->quiet = true; break;
        case O_OUT: a->out_dir = optarg; break;
        case O_HELP: usage(stdout); rc = 0; break;
        default:
            if (ms_cli_opts_is(c))
                rc = ms_cli_opts_set(C, c, optarg, &t) ? -1 : 2;
            else {
                usage(stderr);
                rc = 2;
            }
        }
    }
    free(opts);
    if (rc >= 0)
        return rc;
    if (optind != argc || a->trace_path == NULL || (a->gpus <= 0) == (a->cs == NULL)) {
        ms_cli_usage_error(C, optind != argc ? argv[optind] : NULL,
                           "--trace and one of --gpus and --node/--cluster are required");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* --out DIR: the schedule and the metrics go into it. 0 or the exit code. */
static int out_dir(sim_args_t *a)
{
    size_t n;

    if (a->out_dir == NULL)
        return 0;
    if (a->sched_path != NULL || a->metrics_path != NULL) {
        fprintf(stderr, "migsched simulate: --out writes the schedule and the metrics; "
                        "leave off --schedule-out and --metrics-out\n");
        return 2;
    }
    n = strlen(a->out_dir) + 16;
    a->own_sched = malloc(n);
    a->own_metrics = malloc(n);
    if (a->own_sched == NULL || a->own_metrics == NULL || ms_report_mkdirs(a->out_dir) != MS_OK) {
        fprintf(stderr, "migsched simulate: cannot create the directory '%s'\n", a->out_dir);
        return 1;
    }
    snprintf(a->own_sched, n, "%s/schedule.csv", a->out_dir);
    snprintf(a->own_metrics, n, "%s/metrics.json", a->out_dir);
    a->sched_path = a->own_sched;
    a->metrics_path = a->own_metrics;
    return 0;
}

/* No output may overwrite the trace or the other output. 0 or 2. */
static int check_paths(const sim_args_t *a)
{
    if (a->sched_path != NULL && (ms_cli_same_file(a->sched_path, a->trace_path) ||
                                  (a->metrics_path != NULL &&
                                   ms_cli_same_file(a->sched_path, a->metrics_path)))) {
        fprintf(stderr, "migsched simulate: --schedule-out '%s' is the trace or the metrics "
                        "file; it would overwrite it\n", a->sched_path);
        return 2;
    }
    if (a->metrics_path != NULL && ms_cli_same_file(a->metrics_path, a->trace_path)) {
        fprintf(stderr, "migsched simulate: --metrics-out '%s' is the trace; it would "
                        "overwrite it\n", a->metrics_path);
        return 2;
    }
    if (a->sched_path != NULL && a->metrics_path != NULL && strcmp(a->sched_path, "-") == 0 &&
        strcmp(a->metrics_path, "-") == 0) {
        fprintf(stderr, "migsched simulate: --schedule-out and --metrics-out cannot both be "
                        "stdout\n");
        return 2;
    }
    return 0;
}

/* The trace beside its run (DIR/trace.csv), for the report's wait times. */
static int copy_trace(const sim_args_t *a, const ms_trace_t *t)
{
    size_t n = strlen(a->out_dir) + 16;
    char *tp = malloc(n);
    FILE *tf;
    ms_diag_t d;
    int rc = 0;

    if (tp == NULL)
        return ms_cli_fail(C, MS_ENOMEM, NULL);
    snprintf(tp, n, "%s/trace.csv", a->out_dir);
    if (!ms_cli_same_file(tp, a->trace_path)) {   /* else the run's own trace: there */
        tf = fopen(tp, "w");
        if (tf == NULL || ms_trace_write(tf, t) != MS_OK || fclose(tf) != 0) {
            ms_diag_clear(&d);
            ms_diag_set(&d, tp, 0, "out", "cannot write the trace copy");
            rc = ms_cli_fail(C, MS_EIO, &d);
        }
    }
    free(tp);
    return rc;
}

static int write_metrics(const char *path, const ms_metrics_t *x, const char *policy)
{
    FILE *mf = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    ms_diag_t d;

    ms_diag_clear(&d);
    if (mf == NULL) {
        ms_diag_set(&d, path, 0, "metrics-out", "cannot create the file");
        return ms_cli_fail(C, MS_EIO, &d);
    }
    ms_metrics_write_json(mf, x, policy);
    if (mf != stdout ? fclose(mf) != 0 : fflush(mf) != 0) {
        ms_diag_set(&d, path, 0, "metrics-out", "write failed");
        return ms_cli_fail(C, MS_EIO, &d);
    }
    return 0;
}

/* Run the trace with the schedule written as it goes; then the metrics and
 * the summary. 0 or the exit code. */
static int run(const sim_args_t *a, ms_sim_cfg_t *cfg, const ms_model_t *m, const ms_trace_t *t)
{
    FILE *sf = NULL;
    run_ctx_t r;
    ms_metrics_t x;
    ms_diag_t d;
    ms_status_t st;
    double t0;

    ms_diag_clear(&d);
    memset(&r, 0, sizeof(r));
    r.last_pct = -1;
    if (a->sched_path != NULL) {
        sf = strcmp(a->sched_path, "-") == 0 ? stdout : fopen(a->sched_path, "w");
        if (sf == NULL || ms_schedule_writer_open(sf, t, &r.w) != MS_OK ||
            (a->cs != NULL &&
             ms_schedule_writer_set_nodes(r.w, cfg->sched.nodes, cfg->sched.nnodes) != MS_OK)) {
            (void)ms_schedule_writer_close(r.w);
            if (sf != NULL && sf != stdout)
                fclose(sf);
            ms_diag_set(&d, a->sched_path, 0, "schedule-out", "cannot create the file");
            return ms_cli_fail(C, MS_EIO, &d);
        }
    }
    r.bar = isatty(STDERR_FILENO) && t->n >= 200000;
    cfg->ctx = &r;
    cfg->on_segment = on_segment;
    cfg->on_progress = on_progress;
    t0 = now_s();
    st = ms_sim_run(cfg, t, &x, &d);
    x.wall_s = now_s() - t0;
    if (r.w != NULL) {
        ms_status_t cst = ms_schedule_writer_close(r.w);

        if (sf != stdout ? fclose(sf) != 0 : fflush(sf) != 0)
            cst = MS_EIO;
        if (st == MS_OK && cst != MS_OK) {
            ms_diag_set(&d, a->sched_path, 0, "schedule-out", "write failed");
            st = cst;
        }
    }
    if (st != MS_OK)
        return ms_cli_fail(C, st, &d);
    if (a->metrics_path != NULL && write_metrics(a->metrics_path, &x, cfg->sched.policy->name) != 0)
        return 1;
    /* on stderr, --quiet or not: the trace and the limits disagree */
    if (x.over_limit > 0)
        fprintf(stderr, "migsched simulate: warning: %ld jobs larger than their tenant's limit "
                        "never started (the first, %s: %s)\n", x.over_limit, x.over_limit_id,
                x.over_limit_why);
    if (!a->quiet && !(a->metrics_path != NULL && strcmp(a->metrics_path, "-") == 0) &&
        !(a->sched_path != NULL && strcmp(a->sched_path, "-") == 0))
        summary(cfg, m, &x);
    return 0;
}

int ms_cli_simulate(int argc, char **argv)
{
    sim_args_t a;
    ms_sim_cfg_t cfg;
    ms_geom_t *g = NULL;
    ms_trace_t *t = NULL;
    ms_diag_t d;
    ms_status_t st;
    int rc;

    memset(&a, 0, sizeof(a));
    a.model = "A100-40GB";
    a.profiles = "";
    a.pname = "fa+";   /* the zoo's best on every workload (docs/zoo.md) */
    ms_sim_cfg_defaults(&cfg);
    ms_diag_clear(&d);
    if ((rc = parse_args(argc, argv, &cfg, &a)) >= 0 || (rc = out_dir(&a)) != 0)
        goto out;
    if (a.cs != NULL) {
        cfg.sched.nodes = ms_cluster_spec_nodes(a.cs);
        cfg.sched.nnodes = ms_cluster_spec_nnodes(a.cs);
        a.gpus = ms_cluster_spec_ngpus(a.cs);
        /* the trace's profile names are read on the first node's model
         * unless --model says otherwise; each node resolves them its way */
        if (!a.model_given)
            a.model = ms_geom_model(cfg.sched.nodes[0].geom)->name;
    }
    cfg.ngpus = (int)a.gpus;
    if ((cfg.sched.policy = ms_policy_find(a.pname)) == NULL) {
        fprintf(stderr, "migsched simulate: unknown policy '%s'\n", a.pname);
        usage(stderr);
        rc = 2;
        goto out;
    }
    if ((rc = ms_cli_geom(C, a.model, a.profiles, &g)) != 0)
        goto out;
    if (cfg.sched.pcfg.static_layout != NULL &&
        (st = ms_policy_layout_check(g, cfg.sched.pcfg.static_layout, &d)) != MS_OK) {
        ms_cli_fail(C, st, &d);
        rc = 2;   /* an option value: usage */
        goto out;
    }
    if ((rc = check_paths(&a)) != 0)
        goto out;
    if ((st = ms_cli_read_trace(a.trace_path, g, &t, &d)) != MS_OK) {
        rc = ms_cli_fail(C, st, &d);
        goto out;
    }
    if (a.out_dir == NULL || (rc = copy_trace(&a, t)) == 0)
        rc = run(&a, &cfg, ms_geom_model(g), t);
out:
    ms_trace_free(t);
    ms_geom_destroy(g);
    args_free(&a);
    return rc < 0 ? 0 : rc;
}
