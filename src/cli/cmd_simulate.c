/* cmd_simulate.c - `migsched simulate`: replay a trace on a simulated MIG
 * cluster with one policy; print a summary, optionally write the schedule
 * CSV and the metrics JSON. Exit codes: 0 ok, 1 input error, 2 usage. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <limits.h>

#include "cli/cli.h"
#include "migsched/research/report.h"
#include "migsched/schedule.h"
#include "migsched/sim.h"

#define C "simulate"

static void usage(FILE *f)
{
    int n, i;
    const ms_policy_ops_t *const *all = ms_policies(&n);

    fprintf(f,
        "usage: migsched simulate --trace T.csv (--gpus N | --node SPEC ...) [--policy P] [options]\n"
        "  --trace FILE        job trace CSV (job_id,arrival_s,profile,duration_s[,gpus]);\n"
        "                      '-' = stdin\n"
        "  --gpus N            number of GPUs (one model, --model), 1..1000000\n"
        "  --node SPEC         a node NAME=COUNTxMODEL[:mig|:timeslice=R|:whole], repeated:\n"
        "                      a heterogeneous cluster (the schedule gains node,model)\n"
        "  --cluster FILE      nodes from a file, one SPEC a line ('#' comments)\n"
        "  --policy P          placement policy (see below; default fa+, this project's own)\n"
        "  --model M           GPU model (default A100-40GB)\n"
        "  --profiles LIST     active profile set (default: the classic ones)\n"
        "  --gpus-per-node K   GPUs per node, 1..1000000 (default: all on one node)\n"
        "  --lb-threshold T    fa: Lazy if busy/compute < T, 0..1 (default 0.4)\n"
        "  --no-balance        fa: no conditional load balancing\n"
        "  --no-dynamic        fa: static layout instead of dynamic partitioning\n"
        "  --no-migration      fa: no migration\n"
        "  --max-moves N       fa: migrations per trigger, 0..1000000 (default 4)\n"
        "  --room-queue-max N  fa+: move jobs for a waiting one only while at most N\n"
        "                      wait, 0..1000000000 (default 32)\n"
        "  --static-layout L   static layout, e.g. 4g+2g+1g or 7g;4g+3g (cycled per GPU)\n"
        "  --replicas R        timeslice: jobs per GPU, 1..%d (default 4)\n"
        "  --hysteresis S      node-profile: seconds a node keeps a layout, 0..1e9\n"
        "                      (default 300)\n"
        "  --beta B            interference per other running instance, 0..10\n"
        "                      (default 0.05)\n"
        "  --create-s S        GI creation delay, 0..1e9 seconds (default 2)\n"
        "  --migrate-s S       migration pause, 0..1e9 seconds (default 10)\n"
        "  --queue Q           easy | backfill | fifo (default easy: backfill, and after\n"
        "                      --backfill-bound only what keeps the head's reservation)\n"
        "  --backfill-bound S  backfill: the head may be passed for S seconds at most,\n"
        "                      0..1e9 or inf (default 3600)\n"
        "  --aging-rate R      priority points a job gains per hour waited; a job passes\n"
        "                      the head only within 1 point of it, 0..1e6 (default 0: off)\n"
        "  --estimate-error E  easy: estimates are duration x exp(E x N(0,1)), 0..3\n"
        "                      (default 0: exact)\n"
        "  --estimate-seed S   seed of the estimate errors (default 1)\n"
        "  --no-estimates      jobs carry no estimate (easy uses --default-estimate)\n"
        "  --default-estimate S  easy: run time of a job without estimate, (0, 1e12]\n"
        "                      seconds (default 3600)\n"
        "  --index I           bucket | scan (default bucket; same schedule)\n"
        "  --seed S            policy seed, any 64-bit integer (default 0)\n"
        "  --schedule-out FILE schedule CSV, one row per segment ('-' = stdout)\n"
        "  --metrics-out FILE  metrics JSON ('-' = stdout)\n"
        "  --out DIR           a run directory for `migsched report --runs DIR`:\n"
        "                      DIR/schedule.csv, DIR/metrics.json, DIR/trace.csv\n"
        "  --quiet             no summary\n"
        "policies:", MS_MAX_INST);
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

    if (cfg->nnodes > 0)
        printf("policy %s on %d nodes: %ld jobs, %ld completed, %ld rejected\n",
               cfg->policy->name, cfg->nnodes, x->jobs_total, x->jobs_completed,
               x->jobs_rejected);
    else
        printf("policy %s on %d x %s: %ld jobs, %ld completed, %ld rejected\n",
               cfg->policy->name, cfg->ngpus, m->name, x->jobs_total, x->jobs_completed,
               x->jobs_rejected);
    if (x->jobs_completed + x->jobs_rejected < x->jobs_total)
        printf("warning: %ld jobs never started (no placement ever fitted)\n",
               x->jobs_total - x->jobs_completed - x->jobs_rejected);
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

int ms_cli_simulate(int argc, char **argv)
{
    enum {
        O_TRACE = 256, O_GPUS, O_POLICY, O_MODEL, O_PROFILES, O_GPN, O_LBT, O_NOBAL,
        O_NODYN, O_NOMIG, O_MAXMOVES, O_ROOMQ, O_LAYOUT, O_REPLICAS, O_HYST, O_BETA, O_CREATE,
        O_MIGRATE, O_QUEUE, O_BOUND, O_INDEX, O_SEED, O_SCHED, O_METRICS, O_QUIET, O_HELP,
        O_OUT, O_NODE, O_CLUSTER, O_AGING, O_ESTERR, O_ESTSEED, O_NOEST, O_DEFEST
    };
    static const struct option opts[] = {
        { "trace", required_argument, NULL, O_TRACE },
        { "node", required_argument, NULL, O_NODE },
        { "cluster", required_argument, NULL, O_CLUSTER },
        { "gpus", required_argument, NULL, O_GPUS },
        { "policy", required_argument, NULL, O_POLICY },
        { "model", required_argument, NULL, O_MODEL },
        { "profiles", required_argument, NULL, O_PROFILES },
        { "gpus-per-node", required_argument, NULL, O_GPN },
        { "lb-threshold", required_argument, NULL, O_LBT },
        { "no-balance", no_argument, NULL, O_NOBAL },
        { "no-dynamic", no_argument, NULL, O_NODYN },
        { "no-migration", no_argument, NULL, O_NOMIG },
        { "max-moves", required_argument, NULL, O_MAXMOVES },
        { "room-queue-max", required_argument, NULL, O_ROOMQ },
        { "static-layout", required_argument, NULL, O_LAYOUT },
        { "replicas", required_argument, NULL, O_REPLICAS },
        { "hysteresis", required_argument, NULL, O_HYST },
        { "beta", required_argument, NULL, O_BETA },
        { "create-s", required_argument, NULL, O_CREATE },
        { "migrate-s", required_argument, NULL, O_MIGRATE },
        { "queue", required_argument, NULL, O_QUEUE },
        { "backfill-bound", required_argument, NULL, O_BOUND },
        { "aging-rate", required_argument, NULL, O_AGING },
        { "estimate-error", required_argument, NULL, O_ESTERR },
        { "estimate-seed", required_argument, NULL, O_ESTSEED },
        { "no-estimates", no_argument, NULL, O_NOEST },
        { "default-estimate", required_argument, NULL, O_DEFEST },
        { "index", required_argument, NULL, O_INDEX },
        { "seed", required_argument, NULL, O_SEED },
        { "schedule-out", required_argument, NULL, O_SCHED },
        { "metrics-out", required_argument, NULL, O_METRICS },
        { "quiet", no_argument, NULL, O_QUIET },
        { "out", required_argument, NULL, O_OUT },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    const char *trace_path = NULL, *model = "A100-40GB", *profiles = "", *pname = NULL;
    const char *sched_path = NULL, *metrics_path = NULL, *out_dir = NULL;
    char *own_sched = NULL, *own_metrics = NULL;
    long v, gpus = 0;
    int c, rc = 0, quiet = 0;
    const ms_model_t *m;
    ms_geom_t *g = NULL;
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t x;
    ms_diag_t d;
    ms_status_t st;
    FILE *sf = NULL;
    run_ctx_t r;
    double t0;
    ms_cluster_spec_t *cs = NULL;
    bool model_given = false;

    ms_diag_clear(&d);
    ms_sim_cfg_defaults(&cfg);
    memset(&r, 0, sizeof(r));
    r.last_pct = -1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        bool ok = true;

        switch (c) {
        case O_TRACE: trace_path = optarg; break;
        case O_GPUS: ok = ms_cli_opt_long(C, "gpus", optarg, 1, 1000000, &gpus); break;
        case O_POLICY: pname = optarg; break;
        case O_MODEL: model = optarg; model_given = true; break;
        case O_NODE:
        case O_CLUSTER:
            if (cs == NULL && ms_cluster_spec_create(&cs) != MS_OK) {
                fprintf(stderr, "migsched simulate: out of memory\n");
                return 1;
            }
            st = c == O_NODE ? ms_cluster_spec_add(cs, optarg, 0, &d)
                             : ms_cluster_spec_read_file(cs, optarg, 0, &d);
            if (st != MS_OK) {
                ms_cluster_spec_destroy(cs);
                if (c == O_NODE) {
                    fprintf(stderr, "migsched simulate: --node: %s\n", d.msg);
                    return 2;
                }
                return ms_cli_fail("simulate", st, &d);
            }
            break;
        case O_PROFILES: profiles = optarg; break;
        case O_GPN:
            ok = ms_cli_opt_long(C, "gpus-per-node", optarg, 1, 1000000, &v);
            cfg.gpus_per_node = (int)v;
            break;
        case O_LBT:
            ok = ms_cli_opt_double(C, "lb-threshold", optarg, 0, 1, &cfg.pcfg.lb_threshold);
            break;
        case O_NOBAL: cfg.pcfg.balance = false; break;
        case O_NODYN: cfg.pcfg.dynamic = false; break;
        case O_NOMIG: cfg.pcfg.migration = false; break;
        case O_MAXMOVES:
            ok = ms_cli_opt_long(C, "max-moves", optarg, 0, 1000000, &v);
            cfg.pcfg.max_moves = (int)v;
            break;
        case O_ROOMQ:
            ok = ms_cli_opt_long(C, "room-queue-max", optarg, 0, 1000000000, &v);
            cfg.pcfg.room_queue_max = (int)v;
            break;
        case O_LAYOUT: cfg.pcfg.static_layout = optarg; break;
        case O_REPLICAS:
            ok = ms_cli_opt_long(C, "replicas", optarg, 1, MS_MAX_INST, &v);
            cfg.pcfg.replicas = (int)v;
            break;
        case O_HYST:
            ok = ms_cli_opt_double(C, "hysteresis", optarg, 0, 1e9, &cfg.pcfg.hysteresis_s);
            break;
        case O_BETA: ok = ms_cli_opt_double(C, "beta", optarg, 0, 10, &cfg.beta); break;
        case O_CREATE: ok = ms_cli_opt_double(C, "create-s", optarg, 0, 1e9, &cfg.create_s); break;
        case O_MIGRATE:
            ok = ms_cli_opt_double(C, "migrate-s", optarg, 0, 1e9, &cfg.migrate_s);
            break;
        case O_QUEUE: ok = ms_queue_mode_parse(optarg, &cfg.queue) == MS_OK; break;
        case O_BOUND:
            if (strcmp(optarg, "inf") == 0)
                cfg.backfill_bound_s = INFINITY;
            else
                ok = ms_cli_opt_double(C, "backfill-bound", optarg, 0, 1e9, &cfg.backfill_bound_s);
            break;
        case O_AGING:
            ok = ms_cli_opt_double(C, "aging-rate", optarg, 0, 1e6, &cfg.aging_rate);
            break;
        case O_ESTERR:
            ok = ms_cli_opt_double(C, "estimate-error", optarg, 0, 3, &cfg.estimate_error);
            break;
        case O_ESTSEED:
            ok = ms_cli_opt_long(C, "estimate-seed", optarg, 0, LONG_MAX, &v);
            cfg.estimate_seed = (uint64_t)v;
            break;
        case O_NOEST: cfg.no_estimates = true; break;
        case O_DEFEST:
            ok = ms_cli_opt_double(C, "default-estimate", optarg, 1e-6, 1e12,
                                   &cfg.default_estimate_s);
            break;
        case O_INDEX:
            if (strcmp(optarg, "bucket") == 0)
                cfg.index_mode = MS_INDEX_BUCKET;
            else if (strcmp(optarg, "scan") == 0)
                cfg.index_mode = MS_INDEX_SCAN;
            else
                ok = false;
            break;
        case O_SEED:
            ok = ms_cli_opt_long(C, "seed", optarg, LONG_MIN, LONG_MAX, &v);
            cfg.pcfg.seed = (uint64_t)v;
            break;
        case O_SCHED: sched_path = optarg; break;
        case O_METRICS: metrics_path = optarg; break;
        case O_QUIET: quiet = 1; break;
        case O_OUT: out_dir = optarg; break;
        case O_HELP: usage(stdout); ms_cluster_spec_destroy(cs); return 0;
        default: usage(stderr); ms_cluster_spec_destroy(cs); return 2;
        }
        if (!ok) {
            if (c == O_QUEUE || c == O_INDEX)
                fprintf(stderr, "migsched simulate: --%s: '%s' is not one of %s\n",
                        c == O_QUEUE ? "queue" : "index", optarg,
                        c == O_QUEUE ? "backfill, fifo, easy" : "bucket, scan");
            ms_cluster_spec_destroy(cs);
            return 2;
        }
    }
    if (pname == NULL)
        pname = "fa+";   /* the zoo's best on every workload (docs/zoo.md) */
    if (optind != argc || trace_path == NULL || (gpus <= 0) == (cs == NULL)) {
        ms_cli_usage_error(C, optind != argc ? argv[optind] : NULL,
                           "--trace and one of --gpus and --node/--cluster are required");
        usage(stderr);
        ms_cluster_spec_destroy(cs);
        return 2;
    }
    if (out_dir != NULL) {
        size_t n = strlen(out_dir) + 16;

        if (sched_path != NULL || metrics_path != NULL) {
            fprintf(stderr, "migsched simulate: --out writes the schedule and the metrics; "
                            "leave off --schedule-out and --metrics-out\n");
            ms_cluster_spec_destroy(cs);
            return 2;
        }
        own_sched = malloc(n);
        own_metrics = malloc(n);
        if (own_sched == NULL || own_metrics == NULL || ms_report_mkdirs(out_dir) != MS_OK) {
            fprintf(stderr, "migsched simulate: cannot create the directory '%s'\n", out_dir);
            free(own_sched);
            free(own_metrics);
            ms_cluster_spec_destroy(cs);
            return 1;
        }
        snprintf(own_sched, n, "%s/schedule.csv", out_dir);
        snprintf(own_metrics, n, "%s/metrics.json", out_dir);
        sched_path = own_sched;
        metrics_path = own_metrics;
    }
    if (cs != NULL) {
        cfg.nodes = ms_cluster_spec_nodes(cs);
        cfg.nnodes = ms_cluster_spec_nnodes(cs);
        gpus = ms_cluster_spec_ngpus(cs);
        /* the trace's profile names are read on the first node's model
         * unless --model says otherwise; each node resolves them its way */
        if (!model_given)
            model = ms_geom_model(cfg.nodes[0].geom)->name;
    }
    cfg.ngpus = (int)gpus;
    cfg.pcfg.migrate_cost_s = cfg.migrate_s;   /* fa+ weighs a move by what it costs */
    cfg.pcfg.interference_beta = cfg.beta;
    cfg.policy = ms_policy_find(pname);
    if (cfg.policy == NULL) {
        fprintf(stderr, "migsched simulate: unknown policy '%s'\n", pname);
        usage(stderr);
        rc = 2;
        goto out;
    }
    if ((rc = ms_cli_geom("simulate", model, profiles, &g)) != 0)
        goto out;
    m = ms_geom_model(g);
    if (cfg.pcfg.static_layout != NULL &&
        (st = ms_policy_layout_check(g, cfg.pcfg.static_layout, &d)) != MS_OK) {
        ms_cli_fail("simulate", st, &d);
        rc = 2;   /* an option value: usage */
        goto out;
    }
    if (sched_path != NULL && (ms_cli_same_file(sched_path, trace_path) ||
                               (metrics_path != NULL &&
                                ms_cli_same_file(sched_path, metrics_path)))) {
        fprintf(stderr, "migsched simulate: --schedule-out '%s' is the trace or the metrics "
                        "file; it would overwrite it\n", sched_path);
        rc = 2;
        goto out;
    }
    if (metrics_path != NULL && ms_cli_same_file(metrics_path, trace_path)) {
        fprintf(stderr, "migsched simulate: --metrics-out '%s' is the trace; it would "
                        "overwrite it\n", metrics_path);
        rc = 2;
        goto out;
    }
    if (sched_path != NULL && metrics_path != NULL && strcmp(sched_path, "-") == 0 &&
        strcmp(metrics_path, "-") == 0) {
        fprintf(stderr, "migsched simulate: --schedule-out and --metrics-out cannot both be "
                        "stdout\n");
        rc = 2;
        goto out;
    }
    if ((st = ms_cli_read_trace(trace_path, g, &t, &d)) != MS_OK) {
        rc = ms_cli_fail("simulate", st, &d);
        goto out;
    }
    if (out_dir != NULL) {   /* the trace beside its run, for the report's wait times */
        size_t n = strlen(out_dir) + 16;
        char *tp = malloc(n);
        FILE *tf = NULL;

        if (tp != NULL) {
            snprintf(tp, n, "%s/trace.csv", out_dir);
            if (ms_cli_same_file(tp, trace_path))
                tf = NULL;   /* the run's own trace: already there */
            else if ((tf = fopen(tp, "w")) == NULL || ms_trace_write(tf, t) != MS_OK ||
                     fclose(tf) != 0) {
                ms_diag_set(&d, tp, 0, "out", "cannot write the trace copy");
                free(tp);
                rc = ms_cli_fail("simulate", MS_EIO, &d);
                goto out;
            }
        }
        free(tp);
        if (tp == NULL) {
            rc = ms_cli_fail("simulate", MS_ENOMEM, NULL);
            goto out;
        }
    }
    if (sched_path != NULL) {
        sf = strcmp(sched_path, "-") == 0 ? stdout : fopen(sched_path, "w");
        if (sf == NULL || ms_schedule_writer_open(sf, t, &r.w) != MS_OK ||
            (cs != NULL && ms_schedule_writer_set_nodes(r.w, cfg.nodes, cfg.nnodes) != MS_OK)) {
            ms_diag_set(&d, sched_path, 0, "schedule-out", "cannot create the file");
            rc = ms_cli_fail("simulate", MS_EIO, &d);
            goto out;
        }
    }
    r.bar = isatty(STDERR_FILENO) && t->n >= 200000;
    cfg.ctx = &r;
    cfg.on_segment = on_segment;
    cfg.on_progress = on_progress;

    t0 = now_s();
    st = ms_sim_run(&cfg, t, &x, &d);
    x.wall_s = now_s() - t0;
    if (st != MS_OK) {
        rc = ms_cli_fail("simulate", st, &d);
        goto out;
    }
    if (r.w != NULL) {
        st = ms_schedule_writer_close(r.w);
        r.w = NULL;
        if (sf != stdout ? fclose(sf) != 0 : fflush(sf) != 0)
            st = MS_EIO;
        sf = NULL;
        if (st != MS_OK) {
            ms_diag_set(&d, sched_path, 0, "schedule-out", "write failed");
            rc = ms_cli_fail("simulate", st, &d);
            goto out;
        }
    }
    if (metrics_path != NULL) {
        FILE *mf = strcmp(metrics_path, "-") == 0 ? stdout : fopen(metrics_path, "w");

        if (mf == NULL) {
            ms_diag_set(&d, metrics_path, 0, "metrics-out", "cannot create the file");
            rc = ms_cli_fail("simulate", MS_EIO, &d);
            goto out;
        }
        ms_metrics_write_json(mf, &x, cfg.policy->name);
        if (mf != stdout ? fclose(mf) != 0 : fflush(mf) != 0) {
            ms_diag_set(&d, metrics_path, 0, "metrics-out", "write failed");
            rc = ms_cli_fail("simulate", MS_EIO, &d);
            goto out;
        }
    }
    if (!quiet && !(metrics_path != NULL && strcmp(metrics_path, "-") == 0) &&
        !(sched_path != NULL && strcmp(sched_path, "-") == 0))
        summary(&cfg, m, &x);
out:
    if (r.w != NULL)
        (void)ms_schedule_writer_close(r.w);
    if (sf != NULL && sf != stdout)
        fclose(sf);
    ms_trace_free(t);
    ms_geom_destroy(g);
    ms_cluster_spec_destroy(cs);
    free(own_sched);
    free(own_metrics);
    return rc;
}
