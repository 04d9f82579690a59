/* cmd_import_alibaba.c - `migsched import-alibaba`: an Alibaba openb pod
 * list as a migsched trace plus the cluster to replay it on, or (--fill)
 * FGD's one-pass fill experiment on that MIG cluster with migsched's
 * policies. Rules: include/migsched/research/alibaba.h, docs/alibaba-mig.md. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/research/alibaba.h"

#define MAX_SEEDS 1000

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched import-alibaba --pods P.csv [--nodes N.csv] --out T.csv [options]\n"
        "       migsched import-alibaba --fill --pods P.csv (--nodes N.csv | --gpus N)\n"
        "                               [--policy NAME|all] [--seeds 42-51] [--json OUT.json]\n"
        "common options:\n"
        "  --model M          MIG model of every GPU (default A100-40GB)\n"
        "  --profiles LIST    active profile set (default: the classic ones)\n"
        "  --mapping MAP      compute (default): ceil(milli*compute/1000) compute slices;\n"
        "                     memory: ceil(milli*memory_slices/1000) memory slices\n"
        "  --node-mode MODE   regroup (default): every GPU, cut into nodes of G;\n"
        "                     whole: only nodes with exactly G GPUs\n"
        "  --gpus-per-node G  uniform node size of the MIG cluster, 1..1024 (default 8)\n"
        "import (trace) mode:\n"
        "  --out T.csv        trace CSV (job_id,arrival_s,profile,duration_s[,gpus]); - = stdout\n"
        "  --time-scale F     multiply arrival and duration by F, 1e-6..1e6 (default 1)\n"
        "  --cluster-out C    write the cluster as JSON (needs --nodes)\n"
        "fill mode (--fill):\n"
        "  --policy NAME|all  a MIG policy, or every MIG policy (default all)\n"
        "  --seeds LIST       A-B or A,B,C, seeds >= 0 (default 42-51)\n"
        "  --tune T           inflate the pod list to T x capacity, 0..100 (default 1.3)\n"
        "  --gpus N           cluster size instead of --nodes, 1..1000000\n"
        "  --no-make-room     do not call make_room/on_idle after a miss\n"
        "  --json OUT.json    every curve and summary as JSON\n"
        "Counts of kept and dropped pods go to stderr.\n");
}

typedef struct opts {
    const char *pods, *nodes, *out, *model, *profiles, *cluster_out, *policy, *seeds, *json;
    ms_ali_mapping_t mapping;
    ms_ali_node_mode_t node_mode;
    long gpn, gpus;
    double time_scale, tune;
    bool fill, no_room;
} opts_t;

/* "42-51" or "42,43,50" or "7". */
static bool parse_seeds(const char *s, uint64_t *v, int *n)
{
    const char *dash = strchr(s, '-');

    *n = 0;
    if (dash != NULL && strchr(s, ',') == NULL) {
        char a[32];
        long lo, hi;
        size_t len = (size_t)(dash - s);

        if (len == 0 || len >= sizeof(a))
            return false;
        memcpy(a, s, len);
        a[len] = '\0';
        if (!ms_cli_parse_long(a, &lo) || !ms_cli_parse_long(dash + 1, &hi) || lo < 0 ||
            hi < lo || hi - lo >= MAX_SEEDS)
            return false;
        for (long x = lo; x <= hi; x++)
            v[(*n)++] = (uint64_t)x;
        return true;
    }
    while (*s != '\0') {
        const char *comma = strchr(s, ',');
        size_t len = comma != NULL ? (size_t)(comma - s) : strlen(s);
        char a[32];
        long x;

        if (len == 0 || len >= sizeof(a) || *n >= MAX_SEEDS)
            return false;
        memcpy(a, s, len);
        a[len] = '\0';
        if (!ms_cli_parse_long(a, &x) || x < 0)
            return false;
        v[(*n)++] = (uint64_t)x;
        s = comma != NULL ? comma + 1 : s + len;
        if (comma != NULL && *s == '\0')
            return false;
    }
    return *n > 0;
}

static int print_counts(const ms_ali_counts_t *k, const ms_geom_t *g)
{
    fprintf(stderr,
            "pods read %ld: kept %ld (gangs %ld, capped at trace end %ld); dropped: "
            "cpu-only %ld, pending (never scheduled) %ld, deletion <= creation %ld, "
            "no profile %ld\n",
            k->rows, k->kept, k->gangs, k->capped, k->cpu_only, k->pending, k->bad_time,
            k->no_profile);
    fprintf(stderr, "kept by profile:");
    for (int p = 0; p < ms_geom_nprofiles(g); p++)
        fprintf(stderr, " %s %ld", ms_geom_profile(g, p)->name, k->by_prof[p]);
    for (int s = 2; s <= MS_ALI_MAX_NUM_GPU; s++)
        if (k->gang_by_size[s] > 0)
            fprintf(stderr, ", %dx%s %ld", s, ms_geom_profile(g, ms_ali_full_profile(g))->name,
                    k->gang_by_size[s]);
    fprintf(stderr, "\nGPU request of kept pods %.1f GPUs; mapped to MIG %.1f GPUs of compute\n",
            k->requested_gpus, k->mapped_compute);
    return 0;
}

static void print_cluster(const ms_ali_cluster_t *cl, const ms_model_t *m)
{
    fprintf(stderr, "cluster: %ld GPU nodes (", cl->nodes_in);
    for (int s = 1, first = 1; s <= MS_ALI_MAX_NUM_GPU; s++)
        if (cl->nodes_by_size[s] > 0) {
            fprintf(stderr, "%s%ld x %d%s", first ? "" : ", ", cl->nodes_by_size[s], s,
                    s == MS_ALI_MAX_NUM_GPU ? "+" : "");
            first = 0;
        }
    fprintf(stderr, " GPUs), node mode %s: %ld nodes used, %ld GPUs dropped\n",
            ms_ali_node_mode_name(cl->mode), cl->nodes_used, cl->gpus_dropped);
    fprintf(stderr, "MIG cluster: %d x %s, %d GPUs per node (simulate with --model %s "
            "--gpus %d --gpus-per-node %d)\n", cl->ngpus, m->name, cl->gpus_per_node, m->name,
            cl->ngpus, cl->gpus_per_node);
}

static int write_cluster_json(const char *path, const ms_ali_cluster_t *cl, const ms_model_t *m,
                              const char *nodes)
{
    FILE *f = fopen(path, "w");
    int bad;

    if (f == NULL) {
        fprintf(stderr, "migsched import-alibaba: cannot write %s\n", path);
        return 1;
    }
    fprintf(f, "{\"model\":\"%s\",\"ngpus\":%d,\"gpus_per_node\":%d,\"node_mode\":\"%s\","
            "\"nodes_file\":\"", m->name, cl->ngpus, cl->gpus_per_node,
            ms_ali_node_mode_name(cl->mode));
    for (const char *p = nodes; *p != '\0'; p++)
        fprintf(f, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
    fprintf(f, "\",\"gpu_nodes\":%ld,\"nodes_used\":%ld,\"gpus_dropped\":%ld,"
            "\"nodes_by_gpus\":{", cl->nodes_in, cl->nodes_used, cl->gpus_dropped);
    for (int s = 1, first = 1; s <= MS_ALI_MAX_NUM_GPU; s++)
        if (cl->nodes_by_size[s] > 0) {
            fprintf(f, "%s\"%d\":%ld", first ? "" : ",", s, cl->nodes_by_size[s]);
            first = 0;
        }
    fprintf(f, "}}\n");
    bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "migsched import-alibaba: write error on %s\n", path);
        return 1;
    }
    return 0;
}

static int run_import(const opts_t *o, const ms_geom_t *g, const ms_ali_pods_t *pods,
                      const ms_ali_cluster_t *cl)
{
    ms_ali_import_cfg_t icfg;
    ms_ali_counts_t k;
    ms_trace_t *t = NULL;
    ms_diag_t d;
    ms_status_t st;
    FILE *f;
    int rc = 0;

    ms_diag_clear(&d);
    ms_ali_import_cfg_defaults(&icfg);
    icfg.mapping = o->mapping;
    icfg.time_scale = o->time_scale;
    if ((st = ms_ali_to_trace(pods, g, &icfg, &t, &k, &d)) != MS_OK)
        return ms_cli_fail("import-alibaba", st, &d);
    print_counts(&k, g);
    if (cl != NULL)
        print_cluster(cl, ms_geom_model(g));
    f = strcmp(o->out, "-") == 0 ? stdout : fopen(o->out, "w");
    if (f == NULL) {
        fprintf(stderr, "migsched import-alibaba: cannot write %s\n", o->out);
        ms_trace_free(t);
        return 1;
    }
    st = ms_trace_write(f, t);
    if (f != stdout && fclose(f) != 0)
        st = MS_EIO;
    if (st != MS_OK) {
        fprintf(stderr, "migsched import-alibaba: writing %s: %s\n", o->out, ms_strerror(st));
        rc = 1;
    }
    if (rc == 0 && o->cluster_out != NULL && cl != NULL)
        rc = write_cluster_json(o->cluster_out, cl, ms_geom_model(g), o->nodes);
    ms_trace_free(t);
    return rc;
}

/* ---- fill --------------------------------------------------------------- */

typedef struct stat1 { double mean, sd, median; } stat1_t;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stat1_t stats(double *v, int n)
{
    stat1_t s = { 0, 0, 0 };

    if (n <= 0)
        return s;
    for (int i = 0; i < n; i++)
        s.mean += v[i];
    s.mean /= n;
    for (int i = 0; i < n; i++)
        s.sd += (v[i] - s.mean) * (v[i] - s.mean);
    s.sd = n > 1 ? sqrt(s.sd / (n - 1)) : 0.0;
    qsort(v, (size_t)n, sizeof(*v), cmp_d);
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return s;
}

static void json_curve(FILE *f, const char *key, const ms_ali_curve_t *c, const double *v)
{
    fprintf(f, "\"%s\":[", key);
    for (int x = 0; x < MS_ALI_NBINS; x++) {
        if (c->have[x])
            fprintf(f, "%s%.4f", x ? "," : "", v[x]);
        else
            fprintf(f, "%snull", x ? "," : "");
    }
    fprintf(f, "]");
}

/* A value at x = 100 (or the run's final value when the bin is empty). */
static double at100(const ms_ali_curve_t *c, const double *v, double fin)
{
    return c->have[100] ? v[100] : fin;
}

enum { M_COMP, M_MEM, M_GPU, M_FRAG, M_FAILPCT, NM };
static const char *const M_NAME[NM] = {
    "unalloc_compute_pct", "unalloc_mem_pct", "unalloc_gpu_pct", "fragcost", "failed_pods_pct"
};

/* The MIG policies to fill with: all, or the one --policy names. Returns
 * -1 to go on, else the exit code. */
static int pick_policies(const char *name, const ms_policy_ops_t **pols, int *npol)
{
    int nall;
    const ms_policy_ops_t *const *all = ms_policies(&nall);
    const ms_policy_ops_t *p;

    *npol = 0;
    if (strcmp(name, "all") == 0) {
        for (int i = 0; i < nall && *npol < 64; i++)
            if (all[i]->share == MS_SHARE_MIG)
                pols[(*npol)++] = all[i];
        return -1;
    }
    if ((p = ms_policy_find(name)) == NULL) {
        fprintf(stderr, "migsched import-alibaba: unknown policy '%s'\n", name);
        return 2;
    }
    if (p->share != MS_SHARE_MIG) {
        fprintf(stderr, "migsched import-alibaba: policy '%s' does not use MIG; the fill "
                "experiment measures MIG slices\n", name);
        return 2;
    }
    pols[(*npol)++] = p;
    return -1;
}

static void json_head(FILE *jf, const opts_t *o, const ms_geom_t *g, int ngpus, int gpn,
                      const uint64_t *seeds, int nseeds)
{
    fprintf(jf, "{\"experiment\":\"alibaba-mig-fill\",\"pods\":\"");
    for (const char *p = o->pods; *p != '\0'; p++)
        fprintf(jf, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
    fprintf(jf, "\",\"model\":\"%s\",\"mapping\":\"%s\",\"ngpus\":%d,\"gpus_per_node\":%d,"
            "\"node_mode\":\"%s\",\"tune\":%.4f,\"make_room\":%s,\"seeds\":[",
            ms_geom_model(g)->name, ms_ali_mapping_name(o->mapping), ngpus, gpn,
            o->nodes != NULL ? ms_ali_node_mode_name(o->node_mode) : "none", o->tune,
            o->no_room ? "false" : "true");
    for (int s = 0; s < nseeds; s++)
        fprintf(jf, "%s%llu", s ? "," : "", (unsigned long long)seeds[s]);
    fprintf(jf, "],\"policies\":[");
}

/* Each metric at 100 % arrived over the seeds' curves (vals: scratch of
 * nseeds). */
static void fill_stats(const ms_ali_curve_t *curves, int nseeds, double *vals, stat1_t *sm)
{
    for (int m = 0; m < NM; m++) {
        for (int s = 0; s < nseeds; s++) {
            const ms_ali_curve_t *c = &curves[s];
            switch (m) {
            case M_COMP: vals[s] = at100(c, c->unalloc_compute_pct, c->final_unalloc_compute_pct); break;
            case M_MEM: vals[s] = at100(c, c->unalloc_mem_pct, c->final_unalloc_mem_pct); break;
            case M_GPU: vals[s] = at100(c, c->unalloc_gpu_pct, c->final_unalloc_gpu_pct); break;
            case M_FRAG: vals[s] = at100(c, c->fragcost, c->final_fragcost); break;
            default:
                vals[s] = at100(c, c->failed_pct,
                                c->ngpu_pods ? 100.0 * (double)c->nfailed / (double)c->ngpu_pods : 0);
            }
        }
        sm[m] = stats(vals, nseeds);
    }
}

/* One policy's object of the --json file. */
static void json_policy(FILE *jf, bool first, const char *name, const stat1_t *sm,
                        const ms_ali_curve_t *curves, const uint64_t *seeds, int nseeds)
{
    fprintf(jf, "%s{\"policy\":\"%s\",\"at_100\":{", first ? "" : ",", name);
    for (int m = 0; m < NM; m++)
        fprintf(jf, "%s\"%s\":{\"mean\":%.4f,\"sd\":%.4f,\"median\":%.4f}", m ? "," : "",
                M_NAME[m], sm[m].mean, sm[m].sd, sm[m].median);
    fprintf(jf, "},\"runs\":[");
    for (int s = 0; s < nseeds; s++) {
        const ms_ali_curve_t *c = &curves[s];

        fprintf(jf, "%s{\"seed\":%llu,\"pods\":%zu,\"gpu_pods\":%zu,\"failed\":%zu,"
                "\"rejected\":%zu,\"moves\":%ld,\"arrived_pct\":%.4f,\"mapped_pct\":%.4f,"
                "\"final\":{\"unalloc_compute_pct\":%.4f,\"unalloc_mem_pct\":%.4f,"
                "\"unalloc_gpu_pct\":%.4f,\"fragcost\":%.6f},\"curve\":{",
                s ? "," : "", (unsigned long long)seeds[s], c->npods, c->ngpu_pods,
                c->nfailed, c->nrejected, c->moves, c->arrived_pct, c->mapped_pct,
                c->final_unalloc_compute_pct, c->final_unalloc_mem_pct,
                c->final_unalloc_gpu_pct, c->final_fragcost);
        json_curve(jf, "unalloc_compute_pct", c, c->unalloc_compute_pct);
        fputc(',', jf);
        json_curve(jf, "unalloc_mem_pct", c, c->unalloc_mem_pct);
        fputc(',', jf);
        json_curve(jf, "unalloc_gpu_pct", c, c->unalloc_gpu_pct);
        fputc(',', jf);
        json_curve(jf, "fragcost", c, c->fragcost);
        fputc(',', jf);
        json_curve(jf, "failed_pct", c, c->failed_pct);
        fprintf(jf, "}}");
    }
    fprintf(jf, "]}");
}

/* Fill with every seed under one policy: 0 or the exit code. */
static int fill_policy(const opts_t *o, const ms_geom_t *g, const ms_ali_pods_t *pods,
                       const ms_policy_ops_t *pol, int ngpus, int gpn, const uint64_t *seeds,
                       int nseeds, ms_ali_curve_t *curves)
{
    ms_ali_fill_cfg_t fc;

    ms_ali_fill_cfg_defaults(&fc);
    fc.policy = pol;
    fc.mapping = o->mapping;
    fc.ngpus = ngpus;
    fc.gpus_per_node = gpn;
    fc.tune = o->tune;
    fc.make_room = !o->no_room;
    for (int s = 0; s < nseeds; s++) {
        ms_diag_t d;
        ms_status_t st;

        ms_diag_clear(&d);
        fc.seed = seeds[s];
        if ((st = ms_ali_fill_run(pods, g, &fc, &curves[s], &d)) != MS_OK)
            return ms_cli_fail("import-alibaba", st, &d);
    }
    return 0;
}

static int run_fill(const opts_t *o, const ms_geom_t *g, const ms_ali_pods_t *pods, int ngpus,
                    int gpn, const uint64_t *seeds, int nseeds)
{
    const ms_policy_ops_t *pols[64];
    int npol = 0, rc;
    ms_ali_curve_t *curves = NULL;
    double *vals = NULL;
    FILE *jf = NULL;

    if ((rc = pick_policies(o->policy, pols, &npol)) >= 0)
        return rc;
    rc = 0;
    curves = calloc((size_t)nseeds, sizeof(*curves));
    vals = calloc((size_t)nseeds, sizeof(*vals));
    if (curves == NULL || vals == NULL) {
        free(curves);
        free(vals);
        fprintf(stderr, "migsched import-alibaba: out of memory\n");
        return 1;
    }
    if (o->json != NULL) {
        if ((jf = fopen(o->json, "w")) == NULL) {
            fprintf(stderr, "migsched import-alibaba: cannot write %s\n", o->json);
            free(curves);
            free(vals);
            return 1;
        }
        json_head(jf, o, g, ngpus, gpn, seeds, nseeds);
    }
    printf("MIG fill: %s, %s mapping, %d x %s (%d per node), tune %.2f, %d seed(s)\n",
           o->pods, ms_ali_mapping_name(o->mapping), ngpus, ms_geom_model(g)->name, gpn,
           o->tune, nseeds);
    printf("values at 100%% arrived, mean +- sd over seeds\n");
    printf("%-14s %16s %16s %16s %14s %14s\n", "policy", "unalloc compute%", "unalloc memory%",
           "unalloc GPUs%", "FragCost", "failed pods%");
    for (int pi = 0; pi < npol && rc == 0; pi++) {
        stat1_t sm[NM];

        if ((rc = fill_policy(o, g, pods, pols[pi], ngpus, gpn, seeds, nseeds, curves)) != 0)
            break;
        fill_stats(curves, nseeds, vals, sm);
        printf("%-14s %9.2f +- %4.2f %9.2f +- %4.2f %9.2f +- %4.2f %7.4f+-%.4f %7.2f +- %4.2f\n",
               pols[pi]->name, sm[M_COMP].mean, sm[M_COMP].sd, sm[M_MEM].mean, sm[M_MEM].sd,
               sm[M_GPU].mean, sm[M_GPU].sd, sm[M_FRAG].mean, sm[M_FRAG].sd,
               sm[M_FAILPCT].mean, sm[M_FAILPCT].sd);
        fflush(stdout);
        if (jf != NULL)
            json_policy(jf, pi == 0, pols[pi]->name, sm, curves, seeds, nseeds);
    }
    if (jf != NULL) {
        int bad;

        fprintf(jf, "]}\n");
        bad = ferror(jf);
        if ((fclose(jf) != 0 || bad) && rc == 0) {
            fprintf(stderr, "migsched import-alibaba: write error on %s\n", o->json);
            rc = 1;
        }
    }
    free(curves);
    free(vals);
    return rc;
}

/* ---- main --------------------------------------------------------------- */

/* The command line into o: -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, opts_t *o)
{
    static const struct option lopts[] = {
        { "pods", required_argument, NULL, 'P' },
        { "nodes", required_argument, NULL, 'N' },
        { "out", required_argument, NULL, 'o' },
        { "model", required_argument, NULL, 'm' },
        { "profiles", required_argument, NULL, 'p' },
        { "mapping", required_argument, NULL, 'M' },
        { "node-mode", required_argument, NULL, 'n' },
        { "gpus-per-node", required_argument, NULL, 'G' },
        { "gpus", required_argument, NULL, 'g' },
        { "time-scale", required_argument, NULL, 't' },
        { "cluster-out", required_argument, NULL, 'c' },
        { "fill", no_argument, NULL, 'f' },
        { "policy", required_argument, NULL, 'y' },
        { "seeds", required_argument, NULL, 's' },
        { "tune", required_argument, NULL, 'T' },
        { "no-make-room", no_argument, NULL, 'R' },
        { "json", required_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    o->model = "A100-40GB";
    o->profiles = "";
    o->policy = "all";
    o->seeds = "42-51";
    o->gpn = 8;
    o->time_scale = 1.0;
    o->tune = 1.3;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        switch (c) {
        case 'P': o->pods = optarg; break;
        case 'N': o->nodes = optarg; break;
        case 'o': o->out = optarg; break;
        case 'm': o->model = optarg; break;
        case 'p': o->profiles = optarg; break;
        case 'M':
            if (ms_ali_mapping_parse(optarg, &o->mapping) != MS_OK) {
                fprintf(stderr, "migsched import-alibaba: --mapping is compute or memory\n");
                return 2;
            }
            break;
        case 'n':
            if (ms_ali_node_mode_parse(optarg, &o->node_mode) != MS_OK) {
                fprintf(stderr, "migsched import-alibaba: --node-mode is regroup or whole\n");
                return 2;
            }
            break;
        case 'G':
            if (!ms_cli_opt_long("import-alibaba", "gpus-per-node", optarg, 1, 1024, &o->gpn))
                return 2;
            break;
        case 'g':
            if (!ms_cli_opt_long("import-alibaba", "gpus", optarg, 1, 1000000, &o->gpus))
                return 2;
            break;
        case 't':
            if (!ms_cli_opt_double("import-alibaba", "time-scale", optarg, 1e-6, 1e6,
                                   &o->time_scale))
                return 2;
            break;
        case 'c': o->cluster_out = optarg; break;
        case 'f': o->fill = true; break;
        case 'y': o->policy = optarg; break;
        case 's': o->seeds = optarg; break;
        case 'T':
            if (!ms_cli_opt_double("import-alibaba", "tune", optarg, 0, 100, &o->tune))
                return 2;
            break;
        case 'R': o->no_room = true; break;
        case 'j': o->json = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || o->pods == NULL || (!o->fill && o->out == NULL) ||
        (o->fill && o->nodes == NULL && o->gpus == 0)) {
        usage(stderr);
        return 2;
    }
    return -1;
}

int ms_cli_import_alibaba(int argc, char **argv)
{
    opts_t o;
    const ms_model_t *m;
    ms_geom_t *g = NULL;
    ms_ali_pods_t pods;
    ms_ali_nodes_t nodes;
    ms_ali_cluster_t cl;
    bool have_cl = false;
    ms_diag_t d;
    ms_status_t st;
    uint64_t *seeds = NULL;
    int nseeds = 0, rc;

    memset(&o, 0, sizeof(o));
    memset(&pods, 0, sizeof(pods));
    memset(&nodes, 0, sizeof(nodes));
    ms_diag_clear(&d);
    if ((rc = parse_args(argc, argv, &o)) >= 0)
        return rc;
    if (o.fill) {
        seeds = malloc(MAX_SEEDS * sizeof(*seeds));
        if (seeds == NULL) {
            fprintf(stderr, "migsched import-alibaba: out of memory\n");
            return 1;
        }
        if (!parse_seeds(o.seeds, seeds, &nseeds)) {
            fprintf(stderr, "migsched import-alibaba: bad --seeds '%s' (A-B or A,B,...)\n",
                    o.seeds);
            free(seeds);
            return 2;
        }
    }
    if ((rc = ms_cli_geom("import-alibaba", o.model, o.profiles, &g)) != 0) {
        free(seeds);
        return rc;
    }
    m = ms_geom_model(g);
    rc = 0;
    if ((st = ms_ali_pods_read_file(o.pods, &pods, &d)) != MS_OK) {
        rc = ms_cli_fail("import-alibaba", st, &d);
        goto done;
    }
    if (o.nodes != NULL) {
        if ((st = ms_ali_nodes_read_file(o.nodes, &nodes, &d)) != MS_OK) {
            rc = ms_cli_fail("import-alibaba", st, &d);
            goto done;
        }
        st = ms_ali_cluster_from_nodes(&nodes, o.node_mode, (int)o.gpn, &cl);
        if (st != MS_OK) {
            fprintf(stderr, "migsched import-alibaba: %s: no GPU is left for the cluster (%s)\n",
                    o.nodes, ms_strerror(st));
            rc = 1;
            goto done;
        }
        have_cl = true;
    }
    if (!o.fill) {
        rc = run_import(&o, g, &pods, have_cl ? &cl : NULL);
    } else {
        int ngpus = o.gpus > 0 ? (int)o.gpus : cl.ngpus;

        if (have_cl)
            print_cluster(&cl, m);
        rc = run_fill(&o, g, &pods, ngpus, (int)o.gpn, seeds, nseeds);
    }
done:
    ms_ali_pods_free(&pods);
    ms_ali_nodes_free(&nodes);
    ms_geom_destroy(g);
    free(seeds);
    return rc;
}
