/* cmd_bench.c - `migsched bench`: placement latency, migration search latency
 * and whole-simulation throughput, printed as a table (and optionally JSON).
 *
 * This file holds the options and the order of the cases; the measuring is
 * in bench_place.c (placement, migration search) and bench_sim.c (forked
 * whole simulations), the formatting in bench_report.c; bench.h says what
 * they share.
 *
 * Benchmarks report figures; nothing here fails on time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "cli/cli.h"
#include "migsched/cluster.h"
#include "migsched/geometry.h"
#include "migsched/policy.h"

/* --- options ------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched bench [options]\n"
        "\n"
        "Placement latency per policy, index and cluster size; whole decisions through\n"
        "the scheduler; migration search latency (fa); the cost of one event as the\n"
        "queue grows; whole-simulation time, events/s and peak RSS.\n"
        "\n"
        "  --quick               small sizes, few iterations (a few seconds)\n"
        "  --json OUT            also write every figure as JSON to OUT\n"
        "  --model NAME          GPU model (default A100-40GB)\n"
        "  --sizes LIST          cluster sizes in GPUs, each 1..10000000\n"
        "                        (default 100,1000,10000,100000)\n"
        "  --policies LIST       policies (default fa,best-fit,first-fit,mfi,fgd,static,\n"
        "                        node-profile,timeslice; `fa` runs without migration)\n"
        "  --index LIST          bucket,scan (default both)\n"
        "  --scan-max N          largest size measured with --index scan, and with the\n"
        "                        policies that scan GPUs (static, node-profile, timeslice),\n"
        "                        0..10000000 (default 10000)\n"
        "  --iters N             timed decisions per case, 1..100000000 (default 20000)\n"
        "  --occupancy F         busy compute fraction while timing, (0, 1] (default 0.7)\n"
        "  --mig-sizes LIST      sizes for the migration search, each 1..10000000\n"
        "                        (default 1000,10000)\n"
        "  --mig-occupancy F     occupancy for the migration search, (0, 1] (default 0.9)\n"
        "  --queue-sizes LIST    GPUs for the queue-depth cases, each 8..10000000\n"
        "                        (default 1000,10000)\n"
        "  --queue-depths LIST   jobs waiting, each 0..10000000 (default 0,10000,100000)\n"
        "  --queue-policies LIST policies of the queue-depth cases (default fa+,best-fit)\n"
        "  --sim-jobs LIST       simulated jobs on --sim-gpus GPUs, each 1..10000000\n"
        "                        (default 1000000)\n"
        "  --sim-gpus N          GPUs for --sim-jobs, 1..10000000 (default 10000)\n"
        "  --sim-policies LIST   policies of the simulations (default fa+,best-fit)\n"
        "  --sim-loads LIST      offered loads of the simulations, each 1e-6..1000\n"
        "                        (default 0.9,1.2)\n"
        "  --scale-jobs N        jobs for the scaling pair, 0..100000000 (default 100000;\n"
        "                        0 = none)\n"
        "  --scale-gpus A,B      the scaling pair's sizes, each 1..10000000\n"
        "                        (default 1000,10000)\n"
        "  --load F              offered load of the scaling pair, 1e-6..1000 (default 0.9)\n"
        "  --mean-s F            mean job duration, lognormal, 0.001..1e8 (default 600)\n"
        "  --seed N              seed, 0..2^63-1 (default 1)\n"
        "  --no-place, --no-migration, --no-queue, --no-sim   skip a section\n");
}

static bool parse_longs(const char *s, long *out, int *n, long lo, long hi)
{
    char buf[256], *tok, *save = NULL;
    size_t len;

    if (s == NULL || (len = strlen(s)) >= sizeof(buf))
        return false;
    memcpy(buf, s, len + 1);
    *n = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (*n >= MAX_LIST || !ms_cli_parse_long(tok, &v) || v < lo || v > hi)
            return false;
        out[(*n)++] = v;
    }
    return true;
}

/* A comma list of names into names[] (pointing into *buf, owned). */
static bool parse_names(char **buf, const char **names, int *n, const char *s)
{
    char *tok, *save = NULL;
    size_t len = strlen(s) + 1;

    free(*buf);
    *buf = malloc(len);
    if (*buf == NULL)
        return false;
    memcpy(*buf, s, len);
    *n = 0;
    for (tok = strtok_r(*buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (*n >= MAX_LIST)
            return false;
        names[(*n)++] = tok;
    }
    return *n > 0;
}

static bool parse_doubles(const char *s, double *out, int *n, double lo, double hi)
{
    char buf[256], *tok, *save = NULL;
    size_t len;

    if (s == NULL || (len = strlen(s)) >= sizeof(buf))
        return false;
    memcpy(buf, s, len + 1);
    *n = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (*n >= MAX_LIST || !ms_cli_parse_double(tok, &v) || !(v >= lo && v <= hi))
            return false;
        out[(*n)++] = v;
    }
    return *n > 0;
}

static void free_opts(bopts_t *o)
{
    free(o->policy_buf);
    free(o->sim_policy_buf);
    free(o->queue_policy_buf);
}

static void defaults(bopts_t *o, bool quick)
{
    static const char *const pol[] = { "fa", "best-fit", "first-fit", "mfi", "fgd",
                                       "static", "node-profile", "timeslice" };
    int i;

    memset(o, 0, sizeof(*o));
    o->quick = quick;
    o->model = "A100-40GB";
    for (i = 0; i < (int)(sizeof(pol) / sizeof(pol[0])); i++)
        o->policies[o->npolicies++] = pol[i];
    o->idx_bucket = o->idx_scan = true;
    o->occupancy = 0.7;
    o->mig_occupancy = 0.9;
    o->load = 0.9;
    o->mean_s = 600.0;
    o->seed = 1;
    o->place = o->mig = o->sim = o->queue = true;
    o->sim_policies[0] = "fa+";
    o->sim_policies[1] = "best-fit";
    o->nsimpol = 2;
    o->queue_policies[0] = "fa+";
    o->queue_policies[1] = "best-fit";
    o->nqpol = 2;
    o->sim_loads[0] = 0.9;
    o->sim_loads[1] = 1.2;
    o->nloads = 2;
    if (quick) {
        o->sizes[0] = 100; o->sizes[1] = 1000; o->nsizes = 2;
        o->scan_max = 1000;
        o->iters = 2000;
        o->warmup = 500;
        o->mig_sizes[0] = 100; o->nmig = 1;
        o->sim_jobs[0] = 5000; o->nsim = 1;
        o->sim_gpus = 200;
        o->queue_sizes[0] = 200; o->nqsizes = 1;
        o->queue_depths[0] = 0; o->queue_depths[1] = 1000; o->nqdepths = 2;
        o->scale_jobs = 5000;
        o->scale_small = 50;
        o->scale_large = 500;
    } else {
        o->sizes[0] = 100; o->sizes[1] = 1000; o->sizes[2] = 10000; o->sizes[3] = 100000;
        o->nsizes = 4;
        o->scan_max = 10000;
        o->iters = 20000;
        o->warmup = 5000;
        o->mig_sizes[0] = 1000; o->mig_sizes[1] = 10000; o->nmig = 2;
        o->sim_jobs[0] = 1000000; o->nsim = 1;
        o->sim_gpus = 10000;
        o->queue_sizes[0] = 1000; o->queue_sizes[1] = 10000; o->nqsizes = 2;
        o->queue_depths[0] = 0; o->queue_depths[1] = 10000; o->queue_depths[2] = 100000;
        o->nqdepths = 3;
        o->scale_jobs = 100000;
        o->scale_small = 1000;
        o->scale_large = 10000;
    }
}

/* --- the command ---------------------------------------------------------------- */

static int parse_args(int argc, char **argv, bopts_t *o)
{
    int i;
    bool quick = false;

    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
    defaults(o, quick);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        double d;
        int cnt;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--quick") == 0) {
            continue;
        } else if (strcmp(a, "--no-place") == 0) {
            o->place = false;
            continue;
        } else if (strcmp(a, "--no-migration") == 0) {
            o->mig = false;
            continue;
        } else if (strcmp(a, "--no-sim") == 0) {
            o->sim = false;
            continue;
        } else if (strcmp(a, "--no-queue") == 0) {
            o->queue = false;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "migsched bench: %s needs a value (or is unknown)\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--json") == 0) {
            o->json = v;
        } else if (strcmp(a, "--model") == 0) {
            o->model = v;
        } else if (strcmp(a, "--sizes") == 0) {
            if (!parse_longs(v, o->sizes, &o->nsizes, 1, 10000000))
                goto bad;
        } else if (strcmp(a, "--mig-sizes") == 0) {
            if (!parse_longs(v, o->mig_sizes, &o->nmig, 1, 10000000))
                goto bad;
        } else if (strcmp(a, "--sim-jobs") == 0) {
            if (!parse_longs(v, o->sim_jobs, &o->nsim, 1, 10000000))
                goto bad;
        } else if (strcmp(a, "--policies") == 0) {
            if (!parse_names(&o->policy_buf, o->policies, &o->npolicies, v))
                goto bad;
        } else if (strcmp(a, "--sim-policies") == 0) {
            if (!parse_names(&o->sim_policy_buf, o->sim_policies, &o->nsimpol, v))
                goto bad;
        } else if (strcmp(a, "--queue-policies") == 0) {
            if (!parse_names(&o->queue_policy_buf, o->queue_policies, &o->nqpol, v))
                goto bad;
        } else if (strcmp(a, "--sim-loads") == 0) {
            if (!parse_doubles(v, o->sim_loads, &o->nloads, 1e-6, 1000))
                goto bad;
        } else if (strcmp(a, "--queue-sizes") == 0) {
            if (!parse_longs(v, o->queue_sizes, &o->nqsizes, 8, 10000000))
                goto bad;
        } else if (strcmp(a, "--queue-depths") == 0) {
            if (!parse_longs(v, o->queue_depths, &o->nqdepths, 0, 10000000))
                goto bad;
        } else if (strcmp(a, "--index") == 0) {
            o->idx_bucket = strstr(v, "bucket") != NULL;
            o->idx_scan = strstr(v, "scan") != NULL;
            if (!o->idx_bucket && !o->idx_scan)
                goto bad;
        } else if (strcmp(a, "--scan-max") == 0) {
            if (!ms_cli_parse_long(v, &o->scan_max) || o->scan_max < 0 || o->scan_max > 10000000)
                goto bad;
        } else if (strcmp(a, "--iters") == 0) {
            if (!ms_cli_parse_long(v, &o->iters) || o->iters < 1 || o->iters > 100000000)
                goto bad;
        } else if (strcmp(a, "--occupancy") == 0) {
            if (!ms_cli_parse_double(v, &o->occupancy) || o->occupancy <= 0 || o->occupancy > 1)
                goto bad;
        } else if (strcmp(a, "--mig-occupancy") == 0) {
            if (!ms_cli_parse_double(v, &o->mig_occupancy) || o->mig_occupancy <= 0 ||
                o->mig_occupancy > 1)
                goto bad;
        } else if (strcmp(a, "--sim-gpus") == 0) {
            if (!ms_cli_parse_long(v, &o->sim_gpus) || o->sim_gpus < 1 || o->sim_gpus > 10000000)
                goto bad;
        } else if (strcmp(a, "--scale-jobs") == 0) {
            if (!ms_cli_parse_long(v, &o->scale_jobs) || o->scale_jobs < 0 ||
                o->scale_jobs > 100000000)
                goto bad;
        } else if (strcmp(a, "--scale-gpus") == 0) {
            long p[MAX_LIST];
            if (!parse_longs(v, p, &cnt, 1, 10000000) || cnt != 2)
                goto bad;
            o->scale_small = p[0];
            o->scale_large = p[1];
        } else if (strcmp(a, "--load") == 0) {
            if (!ms_cli_parse_double(v, &d) || d < 1e-6 || d > 1000)
                goto bad;
            o->load = d;
        } else if (strcmp(a, "--mean-s") == 0) {
            if (!ms_cli_parse_double(v, &d) || d < 0.001 || d > 1e8)
                goto bad;
            o->mean_s = d;
        } else if (strcmp(a, "--seed") == 0) {
            if (!ms_cli_parse_long(v, &n) || n < 0)
                goto bad;
            o->seed = (uint64_t)n;
        } else {
            fprintf(stderr, "migsched bench: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        continue;
bad:
        fprintf(stderr, "migsched bench: bad value for %s: '%s' (see --help for its range)\n",
                a, v);
        return 2;
    }
    return -1;
}

static int run_place(const bopts_t *o, const ms_geom_t *g, FILE *json, bool *first)
{
    int pi, si, mi;

    ms__bench_place_header(o);
    for (pi = 0; pi < o->npolicies; pi++) {
        const ms_policy_ops_t *pol = ms_policy_find(o->policies[pi]);
        bool no_mig = strcmp(o->policies[pi], "fa") == 0;
        /* policies whose place() scans every GPU whatever the index */
        bool scans = pol != NULL && (strcmp(pol->name, "static") == 0 ||
                                     strcmp(pol->name, "node-profile") == 0 ||
                                     strcmp(pol->name, "timeslice") == 0);

        if (pol == NULL) {
            ms__bench_place_unknown(o->policies[pi]);
            continue;
        }
        for (si = 0; si < o->nsizes; si++) {
            for (mi = 0; mi < 2; mi++) {
                ms_index_mode_t mode = mi == 0 ? MS_INDEX_BUCKET : MS_INDEX_SCAN;
                long iters = o->iters;
                place_res_t r;
                ms_status_t st;
                char name[40];

                snprintf(name, sizeof(name), "%s%s", pol->name, no_mig ? "-nomig" : "");
                if ((mi == 0 && !o->idx_bucket) || (mi == 1 && !o->idx_scan))
                    continue;
                if ((mi == 1 || scans) && o->sizes[si] > o->scan_max) {
                    if (mi == 0 || !scans)
                        ms__bench_place_skipped(name, mi == 0 ? "bucket" : "scan",
                                                o->sizes[si], o->scan_max);
                    continue;
                }
                if (mi == 1 && o->sizes[si] > 1000) {   /* O(GPUs) per decision: cap */
                    iters = o->iters * 1000 / o->sizes[si];
                    if (iters < 200)
                        iters = o->iters < 200 ? o->iters : 200;
                }
                st = ms__bench_place(o, g, pol, no_mig, mode, o->sizes[si], iters, &r);
                if (st != MS_OK) {
                    ms__bench_place_failed(name, r.index, o->sizes[si], st);
                    continue;
                }
                ms__bench_place_row(name, pol->name, no_mig, &r, json, first);
            }
        }
    }
    return 0;
}

static int run_sched(const bopts_t *o, FILE *json, bool *first)
{
    static const char *const pols[] = { "fa", "best-fit", "first-fit", "mfi" };
    size_t pi;
    int si;

    ms__bench_sched_header();
    for (pi = 0; pi < sizeof(pols) / sizeof(pols[0]); pi++) {
        const ms_policy_ops_t *pol = ms_policy_find(pols[pi]);

        for (si = 0; pol != NULL && si < o->nsizes; si++) {
            sched_res_t r;
            ms_status_t st;

            if (o->sizes[si] > 10000)
                continue;   /* the heterogeneous target is 10,000 GPUs */
            st = ms__bench_sched(o, pol, strcmp(pols[pi], "fa") == 0, o->sizes[si], o->iters, &r);
            if (st != MS_OK) {
                printf("%-13s %7ld  failed: %s\n", pols[pi], o->sizes[si], ms_strerror(st));
                continue;
            }
            ms__bench_sched_row(&r, json, first);
        }
    }
    return 0;
}

static int run_mig(const bopts_t *o, const ms_geom_t *g, FILE *json, bool *first)
{
    const ms_policy_ops_t *pol = ms_policy_find("fa");
    int si;

    ms__bench_mig_header(o, pol != NULL);
    if (pol == NULL)
        return 0;
    for (si = 0; si < o->nmig; si++) {
        mig_res_t r;
        ms_status_t st = ms__bench_mig(o, g, pol, o->mig_sizes[si], o->iters, &r);

        if (st != MS_OK) {
            ms__bench_mig_failed(o->mig_sizes[si], st);
            continue;
        }
        ms__bench_mig_row(&r, json, first);
    }
    return 0;
}

static int run_queue(const bopts_t *o, const ms_geom_t *g, FILE *json, bool *first)
{
    int pi, si, di;

    ms__bench_queue_header();
    for (pi = 0; pi < o->nqpol; pi++) {
        const ms_policy_ops_t *pol = ms_policy_find(o->queue_policies[pi]);

        if (pol == NULL) {
            printf("%-9s unknown policy\n", o->queue_policies[pi]);
            continue;
        }
        for (si = 0; si < o->nqsizes; si++) {
            queue_res_t none, r;

            memset(&none, 0, sizeof(none));
            none.status = -1;
            for (di = 0; di < o->nqdepths; di++) {
                (void)ms__bench_queue(o, g, pol, o->queue_sizes[si], o->queue_depths[di],
                                      o->iters, &r);
                if (o->queue_depths[di] == 0)
                    none = r;
                ms__bench_queue_row(&r, &none, json, first);
            }
        }
    }
    return 0;
}

static int run_sims(const bopts_t *o, const ms_geom_t *g, FILE *json, bool *first)
{
    sim_res_t big, small, r;
    int i, p, l;

    ms__bench_sim_header(o);
    for (p = 0; p < o->nsimpol; p++)
        for (l = 0; l < o->nloads; l++)
            for (i = 0; i < o->nsim; i++) {
                ms__bench_sim(o, g, o->sim_policies[p], o->sim_loads[l], o->sim_jobs[i],
                              o->sim_gpus, &r);
                ms__bench_sim_row(&r, "size", json, first);
            }
    if (o->scale_jobs <= 0 || o->nsimpol == 0)
        return 0;
    /* the same jobs on two cluster sizes, the first policy, at --load */
    ms__bench_sim(o, g, o->sim_policies[0], o->load, o->scale_jobs, o->scale_small, &small);
    ms__bench_sim_row(&small, "scale-small", json, first);
    ms__bench_sim(o, g, o->sim_policies[0], o->load, o->scale_jobs, o->scale_large, &big);
    ms__bench_sim_row(&big, "scale-large", json, first);
    ms__bench_scaling(o, &small, &big, json, first);
    return 0;
}

int ms_cli_bench(int argc, char **argv)
{
    bopts_t o;
    const ms_model_t *m;
    ms_geom_t *g = NULL;
    FILE *json = NULL;
    bool first = true;
    ms_status_t st;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free_opts(&o);
        return rc;
    }
    m = ms_model_find(o.model);
    if (m == NULL) {
        fprintf(stderr, "migsched bench: unknown model '%s'\n", o.model);
        free_opts(&o);
        return 2;
    }
    if ((st = ms_geom_create(m, 0, &g)) != MS_OK) {
        free_opts(&o);
        return ms_cli_fail("bench", st, NULL);
    }
    if (o.json != NULL && (json = fopen(o.json, "w")) == NULL) {
        fprintf(stderr, "migsched bench: cannot write %s: %s\n", o.json, strerror(errno));
        ms_geom_destroy(g);
        free_opts(&o);
        return 1;
    }
    ms__bench_preamble(&o, m->name, json);
    if (o.place)
        run_place(&o, g, json, &first);
    if (o.place)
        run_sched(&o, json, &first);
    if (o.mig)
        run_mig(&o, g, json, &first);
    if (o.queue)
        run_queue(&o, g, json, &first);
    if (o.sim)
        run_sims(&o, g, json, &first);
    if (json != NULL) {
        ms__bench_json_end(json);
        if (fclose(json) != 0) {
            fprintf(stderr, "migsched bench: error writing %s\n", o.json);
            rc = 1;
        }
    }
    ms_geom_destroy(g);
    free_opts(&o);
    return rc < 0 ? 0 : rc;
}
