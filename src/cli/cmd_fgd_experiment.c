/* cmd_fgd_experiment.c - `migsched fgd-experiment`: FGD's fill experiment
 * (Weng et al., ATC '23) on the Alibaba openb trace, several seeds, one or
 * all six policies; JSON (and optional CSV) out, a short table on stdout. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "migsched/json_write.h"
#include "migsched/research/fgd.h"

#define DEFAULT_NODES "../shared/traces/alibaba-openb/openb_node_list_gpu_node.csv"
#define MAX_SEEDS 1000

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched fgd-experiment --pods P.csv --policy NAME --json OUT.json\n"
        "           [--nodes N.csv] [--seeds 42-51] [--csv OUT.csv] [--tune 1.3]\n"
        "           [--threshold 95]\n"
        "  --nodes N.csv    node list (default " DEFAULT_NODES ")\n"
        "  --pods P.csv     pod list, e.g. openb_pod_list_default.csv\n"
        "  --policy NAME    random, dot-product, clustering, packing, best-fit, fgd, all\n"
        "  --seeds LIST     seeds >= 0: 42-51, 42,43 or 42, at most %d (default 42-51)\n"
        "  --json OUT.json  write the results as one JSON object\n"
        "  --csv OUT.csv    also write the mean curves as CSV\n"
        "  --tune R         inflate the workload to R x GPU capacity, 0..100 (default 1.3)\n"
        "  --threshold PCT  typical-pod popularity threshold, 0.001..100 (default 95)\n",
        MAX_SEEDS);
}

/* "42-51", "1,5,7", "42" (mixable: "1-3,9"). */
static bool parse_seeds(const char *s, long *seeds, int *n)
{
    char buf[512], *tok, *save = NULL;
    size_t len;

    *n = 0;

    if (s == NULL || (len = strlen(s)) >= sizeof(buf))
        return false;
    memcpy(buf, s, len + 1);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(tok + 1, '-');
        long a, b;

        if (dash != NULL) {
            *dash = '\0';
            if (!ms_cli_parse_long(tok, &a) || !ms_cli_parse_long(dash + 1, &b) || b < a)
                return false;
        } else {
            if (!ms_cli_parse_long(tok, &a))
                return false;
            b = a;
        }
        if (a < 0 || b - a >= MAX_SEEDS)
            return false;
        for (long v = a; v <= b; v++) {
            if (*n >= MAX_SEEDS)
                return false;
            seeds[(*n)++] = v;
        }
    }
    return *n > 0;
}

typedef struct agg {
    ms_fgd_policy_t policy;
    int nseeds;
    double at100[MAX_SEEDS];
    double mean_u[MS_FGD_NBINS], sd_u[MS_FGD_NBINS];
    double mean_r[MS_FGD_NBINS], mean_f[MS_FGD_NBINS];
    int have[MS_FGD_NBINS];               /* seeds with a point in the bin */
    double failed_mean, npods_mean;
    double wall_s;
} agg_t;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ms_status_t run_policy(const ms_fgd_nodes_t *nodes, const ms_fgd_pods_t *pods,
                              const ms_fgd_classes_t *cls, ms_fgd_policy_t pol,
                              const long *seeds, int nseeds, double tune, bool progress,
                              agg_t *a)
{
    double t0 = now_s();
    double sq[MS_FGD_NBINS] = { 0 };
    ms_fgd_curve_t *cv = malloc(sizeof(*cv));

    if (cv == NULL)
        return MS_ENOMEM;
    memset(a, 0, sizeof(*a));
    a->policy = pol;
    a->nseeds = nseeds;
    for (int s = 0; s < nseeds; s++) {
        ms_fgd_opts_t o = { pol, (uint64_t)seeds[s], tune };
        ms_status_t st = ms_fgd_run(nodes, pods, cls, &o, cv);

        if (st != MS_OK) {
            free(cv);
            return st;
        }
        if (progress)
            fprintf(stderr, "\r%-12s seed %ld (%d/%d)   ", ms_fgd_policy_name(pol), seeds[s],
                    s + 1, nseeds);
        a->at100[s] = cv->have[100] ? cv->unalloc_pct[100] : NAN;
        a->failed_mean += (double)cv->nfailed / nseeds;
        a->npods_mean += (double)cv->npods / nseeds;
        for (int b = 0; b < MS_FGD_NBINS; b++)
            if (cv->have[b]) {
                a->have[b]++;
                a->mean_u[b] += cv->unalloc_pct[b];
                sq[b] += cv->unalloc_pct[b] * cv->unalloc_pct[b];
                a->mean_r[b] += cv->frag_rate_pct[b];
                a->mean_f[b] += cv->frag_amount_pct[b];
            }
    }
    for (int b = 0; b < MS_FGD_NBINS; b++)
        if (a->have[b] > 0) {
            double m = a->have[b];
            a->mean_u[b] /= m;
            a->mean_r[b] /= m;
            a->mean_f[b] /= m;
            a->sd_u[b] = sqrt(fmax(0.0, sq[b] / m - a->mean_u[b] * a->mean_u[b]));
        }
    a->wall_s = now_s() - t0;
    free(cv);
    return MS_OK;
}

static void json_num(FILE *f, bool ok, double v)
{
    if (ok && isfinite(v))
        fprintf(f, "%.4f", v);
    else
        fputs("null", f);
}

static void json_curve(FILE *f, const char *key, const agg_t *a, const double *v)
{
    fprintf(f, ",\n  \"%s\": [", key);
    for (int b = 0; b < MS_FGD_NBINS; b++) {
        if (b)
            fputc(',', f);
        json_num(f, a->have[b] > 0, v[b]);
    }
    fputc(']', f);
}

static void json_policy(FILE *f, const agg_t *a, const long *seeds)
{
    fprintf(f, "  \"policy\": \"%s\",\n", ms_fgd_policy_name(a->policy));
    fprintf(f, "  \"unallocated_pct_at_100\": ");
    json_num(f, a->have[100] > 0, a->mean_u[100]);
    fprintf(f, ",\n  \"unallocated_pct_sd_at_100\": ");
    json_num(f, a->have[100] > 0, a->sd_u[100]);
    fprintf(f, ",\n  \"unallocated_pct_at_100_per_seed\": {");
    for (int s = 0; s < a->nseeds; s++) {
        fprintf(f, "%s\"%ld\": ", s ? ", " : "", seeds[s]);
        json_num(f, true, a->at100[s]);
    }
    fprintf(f, "},\n  \"failed_pods_mean\": %.1f,\n  \"pods_mean\": %.1f,\n"
               "  \"wall_s\": %.3f,\n  \"arrived_pct\": [",
            a->failed_mean, a->npods_mean, a->wall_s);
    for (int b = 0; b < MS_FGD_NBINS; b++)
        fprintf(f, "%s%d", b ? "," : "", b);
    fputc(']', f);
    json_curve(f, "unallocated_pct", a, a->mean_u);
    json_curve(f, "unallocated_pct_sd", a, a->sd_u);
    json_curve(f, "frag_rate_pct", a, a->mean_r);
    json_curve(f, "frag_amount_pct", a, a->mean_f);
    fputc('\n', f);
}

static int write_json(const char *path, const char *nodes_path, const char *pods_path,
                      const ms_fgd_nodes_t *nodes, const ms_fgd_classes_t *cls,
                      const long *seeds, int nseeds, double tune, const agg_t *aggs,
                      int nagg, bool all)
{
    FILE *f = fopen(path, "w");

    if (f == NULL) {
        fprintf(stderr, "migsched fgd-experiment: cannot write %s\n", path);
        return 1;
    }
    fprintf(f, "{\n  \"experiment\": \"fgd-fill\",\n  \"nodes\": ");
    ms_json_write_str(f, nodes_path);
    fprintf(f, ",\n  \"pods\": ");
    ms_json_write_str(f, pods_path);
    fprintf(f, ",\n  \"gpus\": %ld,\n  \"node_count\": %zu,\n  \"tune\": %.3f,\n  \"seeds\": [",
            nodes->total_gpus, nodes->n, tune);
    for (int s = 0; s < nseeds; s++)
        fprintf(f, "%s%ld", s ? "," : "", seeds[s]);
    fprintf(f, "],\n  \"typical_classes\": %zu,\n  \"distinct_tuples\": %zu,\n"
               "  \"typical_coverage_pct\": %.4f,\n  \"prng\": \"xoshiro256** (not Go math/rand)\",\n",
            cls->n, cls->ndistinct, 100.0 * (double)cls->covered / (double)cls->total);
    if (!all) {
        json_policy(f, &aggs[0], seeds);
    } else {
        fprintf(f, "  \"policies\": [\n");
        for (int i = 0; i < nagg; i++) {
            fprintf(f, "{\n");
            json_policy(f, &aggs[i], seeds);
            fprintf(f, "}%s\n", i + 1 < nagg ? "," : "");
        }
        fprintf(f, "  ]\n");
    }
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "migsched fgd-experiment: error writing %s\n", path);
        return 1;
    }
    return 0;
}

static int write_csv(const char *path, const agg_t *aggs, int nagg)
{
    FILE *f = fopen(path, "w");

    if (f == NULL) {
        fprintf(stderr, "migsched fgd-experiment: cannot write %s\n", path);
        return 1;
    }
    fprintf(f, "policy,arrived_pct,unallocated_pct,unallocated_pct_sd,frag_rate_pct,"
               "frag_amount_pct\n");
    for (int i = 0; i < nagg; i++)
        for (int b = 0; b < MS_FGD_NBINS; b++) {
            const agg_t *a = &aggs[i];
            if (a->have[b] == 0)
                continue;
            fprintf(f, "%s,%d,%.4f,%.4f,%.4f,%.4f\n", ms_fgd_policy_name(a->policy), b,
                    a->mean_u[b], a->sd_u[b], a->mean_r[b], a->mean_f[b]);
        }
    if (fclose(f) != 0) {
        fprintf(stderr, "migsched fgd-experiment: error writing %s\n", path);
        return 1;
    }
    return 0;
}

static void print_table(const agg_t *aggs, int nagg, const ms_fgd_classes_t *cls, int nseeds)
{
    static const int cols[] = { 50, 80, 90, 95, 100, 110, 130 };

    printf("typical pods: %zu classes cover %.2f%% of %ld pods; %d seed(s)\n", cls->n,
           100.0 * (double)cls->covered / (double)cls->total, cls->total, nseeds);
    printf("unallocated GPU %% by arrived %% (mean over seeds)\n");
    printf("%-12s", "policy");
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
        printf(" %7d", cols[k]);
    printf(" %7s %7s\n", "sd@100", "wall_s");
    for (int i = 0; i < nagg; i++) {
        const agg_t *a = &aggs[i];
        printf("%-12s", ms_fgd_policy_name(a->policy));
        for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
            if (a->have[cols[k]] > 0)
                printf(" %7.2f", a->mean_u[cols[k]]);
            else
                printf(" %7s", "-");
        }
        printf(" %7.2f %7.2f\n", a->sd_u[100], a->wall_s);
    }
}

int ms_cli_fgd_experiment(int argc, char **argv)
{
    static const struct option opts[] = {
        { "nodes", required_argument, NULL, 'n' },
        { "pods", required_argument, NULL, 'p' },
        { "policy", required_argument, NULL, 'P' },
        { "seeds", required_argument, NULL, 's' },
        { "json", required_argument, NULL, 'j' },
        { "csv", required_argument, NULL, 'c' },
        { "tune", required_argument, NULL, 't' },
        { "threshold", required_argument, NULL, 'T' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *nodes_path = DEFAULT_NODES, *pods_path = NULL, *policy = NULL;
    const char *json = NULL, *csv = NULL, *seeds_arg = "42-51";
    double tune = 1.3, threshold = 95.0;
    long *seeds = NULL;
    int nseeds = 0, c, nagg = 0, rc = 0;
    bool all = false, progress;
    ms_fgd_policy_t pol = MS_FGD_FGD;
    ms_fgd_nodes_t nodes;
    ms_fgd_pods_t pods;
    ms_fgd_classes_t cls;
    agg_t *aggs = NULL;
    ms_diag_t d;
    ms_status_t st;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n': nodes_path = optarg; break;
        case 'p': pods_path = optarg; break;
        case 'P': policy = optarg; break;
        case 's': seeds_arg = optarg; break;
        case 'j': json = optarg; break;
        case 'c': csv = optarg; break;
        case 't':
            if (!ms_cli_opt_double("fgd-experiment", "tune", optarg, 0, 100, &tune))
                return 2;
            break;
        case 'T':
            if (!ms_cli_opt_double("fgd-experiment", "threshold", optarg, 0.001, 100, &threshold))
                return 2;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (pods_path == NULL || policy == NULL || json == NULL || optind != argc) {
        usage(stderr);
        return 2;
    }
    if (strcmp(policy, "all") == 0) {
        all = true;
    } else if (ms_fgd_policy_parse(policy, &pol) != MS_OK) {
        fprintf(stderr, "migsched fgd-experiment: unknown policy '%s'\n", policy);
        return 2;
    }
    seeds = malloc(MAX_SEEDS * sizeof(*seeds));
    if (seeds == NULL)
        return ms_cli_fail("fgd-experiment", MS_ENOMEM, NULL);
    if (!parse_seeds(seeds_arg, seeds, &nseeds)) {
        fprintf(stderr, "migsched fgd-experiment: bad --seeds '%s'\n", seeds_arg);
        free(seeds);
        return 2;
    }
    if ((st = ms_fgd_nodes_read(nodes_path, &nodes, &d)) != MS_OK) {
        free(seeds);
        return ms_cli_fail("fgd-experiment", st, &d);
    }
    if ((st = ms_fgd_pods_read(pods_path, &pods, &d)) != MS_OK) {
        ms_fgd_nodes_free(&nodes);
        free(seeds);
        return ms_cli_fail("fgd-experiment", st, &d);
    }
    ms_fgd_pods_bind(&pods, &nodes);
    if ((st = ms_fgd_typical(&pods, threshold, &cls)) != MS_OK) {
        rc = ms_cli_fail("fgd-experiment", st, NULL);
        goto out;
    }
    aggs = calloc(MS_FGD_NPOLICIES, sizeof(*aggs));
    if (aggs == NULL) {
        rc = ms_cli_fail("fgd-experiment", MS_ENOMEM, NULL);
        goto out;
    }
    if (nodes.total_gpus <= 0) {
        ms_diag_set(&d, nodes_path, 0, "", "no node of the list has a GPU (CPU-only nodes): "
                                           "there is no cluster to fill");
        rc = ms_cli_fail("fgd-experiment", MS_EINVAL, &d);
        goto out;
    }
    progress = isatty(STDERR_FILENO) != 0;
    for (int i = 0; i < MS_FGD_NPOLICIES; i++) {
        ms_fgd_policy_t p = all ? (ms_fgd_policy_t)i : pol;

        st = run_policy(&nodes, &pods, &cls, p, seeds, nseeds, tune, progress, &aggs[nagg]);
        if (st != MS_OK) {
            ms_diag_clear(&d);
            if (st == MS_EINVAL && tune > 0)
                ms_diag_set(&d, pods_path, 0, "", "the pod list has no GPU demand (every pod "
                            "asks for 0 GPUs): there is nothing to fill the cluster with");
            else if (st == MS_ERANGE)
                ms_diag_set(&d, pods_path, 0, "", "the pod list is far too small to fill the "
                            "cluster (more than %zu pods after tuning)",
                            MS_FGD_TUNE_MAX(pods.n));
            rc = ms_cli_fail("fgd-experiment", st, &d);
            goto out;
        }
        nagg++;
        if (!all)
            break;
    }
    if (progress)
        fprintf(stderr, "\r%40s\r", "");
    rc = write_json(json, nodes_path, pods_path, &nodes, &cls, seeds, nseeds, tune, aggs, nagg,
                    all);
    if (rc == 0 && csv != NULL)
        rc = write_csv(csv, aggs, nagg);
    if (rc == 0)
        print_table(aggs, nagg, &cls, nseeds);
out:
    ms_fgd_classes_free(&cls);
    ms_fgd_pods_free(&pods);
    ms_fgd_nodes_free(&nodes);
    free(aggs);
    free(seeds);
    return rc;
}
