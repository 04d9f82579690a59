/* cmd_advise.c - `migsched advise`: seed 002's road map from utilisation
 * samples and the recent trace (include/migsched/research/advise.h). */
#include <curl/curl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/policy.h"
#include "migsched/research/advise.h"

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

int ms_cli_advise(int argc, char **argv)
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
    const char **inputs = NULL;   /* argv strings; a leading 'd' or 'u' in kinds */
    char *kinds = NULL;
    int ninputs = 0, c, rc = MS_CLI_OK, i, json = 0, csv = 0;
    const char *trace_path = NULL, *pname = "fa+", *pout = NULL;
    ms_cluster_spec_t *cs = NULL;
    ms_advise_cfg_t cfg;
    ms_advise_t *a = NULL;
    ms_advise_result_t res;
    ms_trace_t *t = NULL;
    ms_geom_t *tg = NULL;
    ms_diag_t d;
    ms_status_t st;
    long v;

    memset(&res, 0, sizeof(res));
    ms_diag_clear(&d);
    ms_advise_cfg_defaults(&cfg);
    if ((inputs = calloc((size_t)argc, sizeof(*inputs))) == NULL ||
        (kinds = calloc((size_t)argc, 1)) == NULL || ms_cluster_spec_create(&cs) != MS_OK) {
        fprintf(stderr, "migsched %s: out of memory\n", C);
        rc = MS_CLI_EDATA;
        goto out;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case O_NODE:
            if ((st = ms_cluster_spec_add(cs, optarg, 0, &d)) != MS_OK) {
                fprintf(stderr, "migsched %s: --node: %s\n", C, d.msg);
                rc = MS_CLI_EUSAGE;
                goto out;
            }
            break;
        case O_CLUSTER:
            if ((st = ms_cluster_spec_read_file(cs, optarg, 0, &d)) != MS_OK) {
                rc = ms_cli_fail(C, st, &d);
                goto out;
            }
            break;
        case O_UTIL:
        case O_DCGM:
            inputs[ninputs] = optarg;
            kinds[ninputs++] = c == O_UTIL ? 'u' : 'd';
            break;
        case O_TRACE: trace_path = optarg; break;
        case O_THR: ok = ms_cli_opt_double(C, "threshold", optarg, 0, 100, &cfg.ts_threshold); break;
        case O_REP:
            ok = ms_cli_opt_long(C, "replicas", optarg, 2, MS_MAX_INST, &v);
            cfg.replicas = (int)v;
            break;
        case O_POLICY: pname = optarg; break;
        case O_JSON: json = 1; break;
        case O_CSV: csv = 1; break;
        case O_POUT: pout = optarg; break;
        case O_HELP: usage(stdout); goto out;
        default: usage(stderr); rc = MS_CLI_EUSAGE; goto out;
        }
        if (!ok) {
            rc = MS_CLI_EUSAGE;
            goto out;
        }
    }
    if (optind != argc || ms_cluster_spec_nnodes(cs) == 0 || ninputs == 0 || (json && csv)) {
        ms_cli_usage_error(C, optind != argc ? argv[optind] : NULL,
                           json && csv ? "--json and --csv exclude each other"
                                       : "the cluster (--node/--cluster) and utilisation samples "
                                         "(--util/--dcgm) are required");
        usage(stderr);
        rc = MS_CLI_EUSAGE;
        goto out;
    }
    if ((cfg.sim.policy = ms_policy_find(pname)) == NULL) {
        fprintf(stderr, "migsched %s: --policy: unknown policy '%s'\n", C, pname);
        rc = MS_CLI_EUSAGE;
        goto out;
    }
    if (ms_advise_create(ms_cluster_spec_nodes(cs), ms_cluster_spec_nnodes(cs), &a) != MS_OK) {
        rc = ms_cli_fail(C, MS_ENOMEM, NULL);
        goto out;
    }
    for (i = 0; i < ninputs; i++) {
        const char *p = inputs[i];
        bool url = kinds[i] == 'd' && (strncmp(p, "http://", 7) == 0 || strncmp(p, "https://", 8) == 0);
        FILE *f = url ? scrape(p) : strcmp(p, "-") == 0 ? stdin : fopen(p, "rb");
        if (f == NULL) {
            if (!url) {
                ms_diag_set(&d, p, 0, "", "cannot open");
                ms_cli_fail(C, MS_EIO, &d);
            }
            rc = MS_CLI_EDATA;
            goto out;
        }
        st = kinds[i] == 'u' ? ms_advise_read_util_csv(a, f, p, &d) : ms_advise_read_dcgm(a, f, p, &d);
        if (f != stdin)
            fclose(f);
        if (st != MS_OK) {
            rc = ms_cli_fail(C, st, &d);
            goto out;
        }
    }
    if (trace_path != NULL) {
        /* the trace's profile names are read on the first node's model, as
         * simulate reads them; each node resolves them its way */
        const ms_node_spec_t *n0 = &ms_cluster_spec_nodes(cs)[0];
        if ((rc = ms_cli_geom(C, ms_geom_model(n0->geom)->name, "", &tg)) != 0)
            goto out;
        if ((st = ms_cli_read_trace(trace_path, tg, &t, &d)) != MS_OK ||
            (st = ms_advise_set_trace(a, t, strcmp(trace_path, "-") == 0 ? NULL : trace_path,
                                      &d)) != MS_OK) {
            rc = ms_cli_fail(C, st, &d);
            goto out;
        }
    }
    if ((st = ms_advise_run(a, &cfg, &res, &d)) != MS_OK) {
        rc = ms_cli_fail(C, st, &d);
        goto out;
    }
    st = json ? ms_advise_write_json(stdout, &res) : csv ? ms_advise_write_csv(stdout, &res)
                                                         : ms_advise_write_text(stdout, &res);
    if (st != MS_OK || fflush(stdout) != 0) {
        fprintf(stderr, "migsched %s: write error\n", C);
        rc = MS_CLI_EDATA;
        goto out;
    }
    if (pout != NULL) {
        FILE *f = fopen(pout, "w");
        if (f == NULL || ms_advise_write_policy(f, &res) != MS_OK || fclose(f) != 0) {
            fprintf(stderr, "migsched %s: cannot write %s\n", C, pout);
            rc = MS_CLI_EDATA;
        }
    }
out:
    ms_advise_result_free(&res);
    ms_advise_destroy(a);
    ms_trace_free(t);
    ms_geom_destroy(tg);
    ms_cluster_spec_destroy(cs);
    free(inputs);
    free(kinds);
    return rc;
}
