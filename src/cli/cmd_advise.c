/* cmd_advise.c - `migsched advise`: seed 002's road map from utilisation
 * samples and the recent trace (include/migsched/advise.h). */
#include <curl/curl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/policy.h"
#include "migsched/advise.h"

static const char *C = "advise";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched advise (--node SPEC ... | --cluster FILE) (--util CSV | --dcgm FILE|URL) ...\n"
        "                       [--trace T.csv] [--threshold PCT] [--replicas N] [--policy P]\n"
        "                       [--json | --csv] [--policy-out FILE]\n"
        "  --node SPEC         a node NAME=COUNTxMODEL[:mig|:timeslice=R|:whole] as it runs now,\n"
        "                      repeated (or --cluster FILE, one a line)\n"
        "  --util CSV          utilisation samples time,node,gpu,util[,mem_used_gb] (util in %%);\n"
        "                      repeatable\n"
        "  --dcgm FILE|URL     dcgm-exporter metrics (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED with\n"
        "                      gpu and Hostname labels), a file or an http(s) URL scraped once;\n"
        "                      repeatable\n"
        "  --trace T.csv       the recent workload (simulate's format); optional columns\n"
        "                      latency_sensitive (1/0) and service. With it: layouts, services,\n"
        "                      and the gain simulated on the current vs the recommended cluster\n"
        "  --threshold PCT     time-slice nodes below this mean utilisation, 0..100 (default 40)\n"
        "  --replicas N        time-slicing replicas recommended, 2..16 (default 4)\n"
        "  --policy P          the simulations' policy (default fa+)\n"
        "  --json | --csv      machine-readable output instead of the text\n"
        "  --policy-out FILE   the recommended cluster as a `migsched k8s-config` policy\n");
}

/* A scrape of at most 64 MiB into a temporary file. */
typedef struct fetch {
    FILE *f;
    size_t n;
} fetch_t;

static size_t on_data(char *p, size_t sz, size_t nm, void *ctx)
{
    fetch_t *x = ctx;
    size_t n = sz * nm;

    if (x->n + n > ((size_t)64 << 20))
        return 0;
    x->n += n;
    return fwrite(p, 1, n, x->f);
}

static FILE *scrape(const char *url)
{
    CURL *h = curl_easy_init();
    fetch_t x = { tmpfile(), 0 };
    long code = 0;
    CURLcode rc;

    if (h == NULL || x.f == NULL) {
        if (h != NULL)
            curl_easy_cleanup(h);
        if (x.f != NULL)
            fclose(x.f);
        fprintf(stderr, "migsched %s: --dcgm %s: out of resources\n", C, url);
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK || code != 200) {
        fprintf(stderr, "migsched %s: --dcgm %s: %s\n", C, url,
                rc != CURLE_OK ? curl_easy_strerror(rc) : "HTTP status is not 200");
        fclose(x.f);
        return NULL;
    }
    rewind(x.f);
    return x.f;
}

enum { O_NODE = 1, O_CLUSTER, O_UTIL, O_DCGM, O_TRACE, O_THR, O_REP, O_POLICY, O_JSON, O_CSV,
       O_POUT, O_HELP };

/* What the command line names. */
typedef struct adv_args {
    const char **inputs;       /* argv strings, kinds[i] 'u' (CSV) or 'd' (DCGM) */
    char *kinds;
    int ninputs;
    const char *trace_path, *pname, *pout;
    bool json, csv;
    ms_cluster_spec_t *cs;
} adv_args_t;

static void args_free(adv_args_t *x)
{
    ms_cluster_spec_destroy(x->cs);
    free(x->inputs);
    free(x->kinds);
}

/* The command line into x and cfg: -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, adv_args_t *x, ms_advise_cfg_t *cfg)
{
    static const struct option opts[] = {
        { "node", required_argument, NULL, O_NODE },
        { "cluster", required_argument, NULL, O_CLUSTER },
        { "util", required_argument, NULL, O_UTIL },
        { "dcgm", required_argument, NULL, O_DCGM },
        { "trace", required_argument, NULL, O_TRACE },
        { "threshold", required_argument, NULL, O_THR },
        { "replicas", required_argument, NULL, O_REP },
        { "policy", required_argument, NULL, O_POLICY },
        { "json", no_argument, NULL, O_JSON },
        { "csv", no_argument, NULL, O_CSV },
        { "policy-out", required_argument, NULL, O_POUT },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    ms_diag_t d;
    ms_status_t st;
    int c, rc = -1;
    long v;

    ms_diag_clear(&d);
    if ((x->inputs = calloc((size_t)argc, sizeof(*x->inputs))) == NULL ||
        (x->kinds = calloc((size_t)argc, 1)) == NULL || ms_cluster_spec_create(&x->cs) != MS_OK) {
        fprintf(stderr, "migsched %s: out of memory\n", C);
        return MS_CLI_EDATA;
    }
    optind = 1;
    while (rc < 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_NODE:
            if ((st = ms_cluster_spec_add(x->cs, optarg, 0, &d)) != MS_OK) {
                fprintf(stderr, "migsched %s: --node: %s\n", C, d.msg);
                rc = MS_CLI_EUSAGE;
            }
            break;
        case O_CLUSTER:
            if ((st = ms_cluster_spec_read_file(x->cs, optarg, 0, &d)) != MS_OK)
                rc = ms_cli_fail(C, st, &d);
            break;
        case O_UTIL:
        case O_DCGM:
            x->inputs[x->ninputs] = optarg;
            x->kinds[x->ninputs++] = c == O_UTIL ? 'u' : 'd';
            break;
        case O_TRACE: x->trace_path = optarg; break;
        case O_THR:
            if (!ms_cli_opt_double(C, "threshold", optarg, 0, 100, &cfg->ts_threshold))
                rc = MS_CLI_EUSAGE;
            break;
        case O_REP:
            if (ms_cli_opt_long(C, "replicas", optarg, 2, MS_MAX_INST, &v))
                cfg->replicas = (int)v;
            else
                rc = MS_CLI_EUSAGE;
            break;
        case O_POLICY: x->pname = optarg; break;
        case O_JSON: x->json = true; break;
        case O_CSV: x->csv = true; break;
        case O_POUT: x->pout = optarg; break;
        case O_HELP: usage(stdout); rc = MS_CLI_OK; break;
        default: usage(stderr); rc = MS_CLI_EUSAGE; break;
        }
    }
    if (rc >= 0)
        return rc;
    if (optind != argc || ms_cluster_spec_nnodes(x->cs) == 0 || x->ninputs == 0 ||
        (x->json && x->csv)) {
        ms_cli_usage_error(C, optind != argc ? argv[optind] : NULL,
                           x->json && x->csv ? "--json and --csv exclude each other"
                                             : "the cluster (--node/--cluster) and utilisation "
                                               "samples (--util/--dcgm) are required");
        usage(stderr);
        return MS_CLI_EUSAGE;
    }
    if ((cfg->sim.sched.policy = ms_policy_find(x->pname)) == NULL) {
        fprintf(stderr, "migsched %s: --policy: unknown policy '%s'\n", C, x->pname);
        return MS_CLI_EUSAGE;
    }
    return -1;
}

/* Every --util and --dcgm input into a: 0 or the exit code. */
static int read_inputs(ms_advise_t *a, const adv_args_t *x)
{
    ms_diag_t d;
    ms_status_t st;
    int i;

    ms_diag_clear(&d);
    for (i = 0; i < x->ninputs; i++) {
        const char *p = x->inputs[i];
        bool url = x->kinds[i] == 'd' &&
                   (strncmp(p, "http://", 7) == 0 || strncmp(p, "https://", 8) == 0);
        FILE *f = url ? scrape(p) : strcmp(p, "-") == 0 ? stdin : fopen(p, "rb");

        if (f == NULL) {
            if (!url) {
                ms_diag_set(&d, p, 0, "", "cannot open");
                ms_cli_fail(C, MS_EIO, &d);
            }
            return MS_CLI_EDATA;
        }
        st = x->kinds[i] == 'u' ? ms_advise_read_util_csv(a, f, p, &d)
                                : ms_advise_read_dcgm(a, f, p, &d);
        if (f != stdin)
            fclose(f);
        if (st != MS_OK)
            return ms_cli_fail(C, st, &d);
    }
    return 0;
}

/* The recent trace, read on the first node's model as simulate reads it
 * (each node resolves its profiles its way). OUT t, tg: the caller frees. */
static int read_trace(ms_advise_t *a, const adv_args_t *x, ms_trace_t **t, ms_geom_t **tg)
{
    const ms_node_spec_t *n0 = &ms_cluster_spec_nodes(x->cs)[0];
    ms_diag_t d;
    ms_status_t st;
    int rc;

    ms_diag_clear(&d);
    if ((rc = ms_cli_geom(C, ms_geom_model(n0->geom)->name, "", tg)) != 0)
        return rc;
    if ((st = ms_cli_read_trace(x->trace_path, *tg, t, &d)) != MS_OK ||
        (st = ms_advise_set_trace(a, *t, strcmp(x->trace_path, "-") == 0 ? NULL : x->trace_path,
                                  &d)) != MS_OK)
        return ms_cli_fail(C, st, &d);
    return 0;
}

/* The recommendation on stdout (text, JSON or CSV) and --policy-out. */
static int write_result(const adv_args_t *x, const ms_advise_result_t *res)
{
    ms_status_t st = x->json  ? ms_advise_write_json(stdout, res)
                   : x->csv   ? ms_advise_write_csv(stdout, res)
                              : ms_advise_write_text(stdout, res);

    if (st != MS_OK || fflush(stdout) != 0) {
        fprintf(stderr, "migsched %s: write error\n", C);
        return MS_CLI_EDATA;
    }
    if (x->pout != NULL) {
        FILE *f = fopen(x->pout, "w");

        if (f == NULL || ms_advise_write_policy(f, res) != MS_OK || fclose(f) != 0) {
            fprintf(stderr, "migsched %s: cannot write %s\n", C, x->pout);
            return MS_CLI_EDATA;
        }
    }
    return 0;
}

int ms_cli_advise(int argc, char **argv)
{
    adv_args_t x;
    ms_advise_cfg_t cfg;
    ms_advise_t *a = NULL;
    ms_advise_result_t res;
    ms_trace_t *t = NULL;
    ms_geom_t *tg = NULL;
    ms_diag_t d;
    ms_status_t st;
    int rc;

    memset(&x, 0, sizeof(x));
    x.pname = "fa+";
    memset(&res, 0, sizeof(res));
    ms_diag_clear(&d);
    ms_advise_cfg_defaults(&cfg);
    if ((rc = parse_args(argc, argv, &x, &cfg)) >= 0)
        goto out;
    if (ms_advise_create(ms_cluster_spec_nodes(x.cs), ms_cluster_spec_nnodes(x.cs), &a) != MS_OK) {
        rc = ms_cli_fail(C, MS_ENOMEM, NULL);
        goto out;
    }
    if ((rc = read_inputs(a, &x)) != 0 ||
        (x.trace_path != NULL && (rc = read_trace(a, &x, &t, &tg)) != 0))
        goto out;
    if ((st = ms_advise_run(a, &cfg, &res, &d)) != MS_OK) {
        rc = ms_cli_fail(C, st, &d);
        goto out;
    }
    rc = write_result(&x, &res);
out:
    ms_advise_result_free(&res);
    ms_advise_destroy(a);
    ms_trace_free(t);
    ms_geom_destroy(tg);
    args_free(&x);
    return rc;
}
