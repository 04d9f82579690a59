/* cmd_k8s_config.c - `migsched k8s-config`: the GPU Operator's MIG layouts
 * and device-plugin configs, and the node labels selecting them, from one
 * cluster policy file (src/k8sconf/; docs/kubernetes.md). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "k8sconf/k8sconf.h"
#include "migsched/research/report.h"

static const char *C = "k8s-config";

#define DEFAULT_URL "http://migschedd.migsched.svc:7070/extender"
#define DEFAULT_KUBECONFIG "/etc/kubernetes/scheduler.conf"

/* Written into YAML unquoted, so only characters that need no quoting. */
static bool plain_ok(const char *s, const char *extra)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("/._-", *s) != NULL || strchr(extra, *s) != NULL))
            return false;
    return true;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched k8s-config --policy FILE [--out DIR] [--namespace NS] [--labels]\n"
        "       migsched k8s-config --check-mig-parted FILE --model M\n"
        "       migsched k8s-config --scheduler-config [--extender-url URL] [--kubeconfig PATH]\n"
        "                           [--no-leader-elect]\n"
        "  --policy FILE        the cluster policy (YAML: version, layouts, nodes;\n"
        "                       docs/kubernetes.md)\n"
        "  --out DIR            write DIR/mig-parted.yaml, DIR/device-plugin/NAME.yaml,\n"
        "                       DIR/configmaps.yaml and DIR/node-labels.txt; without it the\n"
        "                       two ConfigMaps go to stdout (kubectl apply -f -)\n"
        "  --namespace NS       the GPU Operator's namespace (default gpu-operator)\n"
        "  --labels             print the node labels instead of the ConfigMaps\n"
        "  --check-mig-parted F check an existing mig-parted config against --model:\n"
        "                       profiles of that model, counts that fit one GPU\n"
        "                       (entries with a device-filter are not checked)\n");
}

static int write_file(const char *dir, const char *name, const ms_k8s_cfg_t *c, int what,
                      int plugin)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    ms_status_t st = MS_OK;
    FILE *f;

    if (path == NULL) {
        fprintf(stderr, "migsched %s: out of memory\n", C);
        return 1;
    }
    snprintf(path, n, "%s/%s", dir, name);
    if ((f = fopen(path, "w")) == NULL) {
        fprintf(stderr, "migsched %s: cannot write %s\n", C, path);
        free(path);
        return 1;
    }
    switch (what) {
    case 0: st = ms_k8s_write_mig_parted(f, c); break;
    case 1: st = ms_k8s_write_plugin(f, c, plugin, ""); break;
    default: st = ms_k8s_write_labels(f, c); break;
    }
    if (fclose(f) != 0 || st != MS_OK) {
        fprintf(stderr, "migsched %s: error writing %s\n", C, path);
        free(path);
        return 1;
    }
    free(path);
    return 0;
}

static int write_dir(const char *dir, const ms_k8s_cfg_t *c, const char *ns)
{
    char name[128];
    size_t n = strlen(dir) + sizeof("/device-plugin");
    char *sub = malloc(n);
    int i, rc = 0;
    FILE *f;

    if (sub == NULL)
        return 1;
    snprintf(sub, n, "%s/device-plugin", dir);
    if (ms_report_mkdirs(sub) != MS_OK) {
        fprintf(stderr, "migsched %s: cannot create %s\n", C, sub);
        free(sub);
        return 1;
    }
    free(sub);
    rc |= write_file(dir, "mig-parted.yaml", c, 0, 0);
    for (i = 0; i < ms_k8s_cfg_nplugins(c) && rc == 0; i++) {
        snprintf(name, sizeof(name), "device-plugin/%s.yaml", ms_k8s_cfg_plugin_name(c, i));
        rc |= write_file(dir, name, c, 1, i);
    }
    rc |= write_file(dir, "node-labels.txt", c, 3, 0);
    if (rc == 0) {
        /* configmaps.yaml names the namespace */
        n = strlen(dir) + sizeof("/configmaps.yaml");
        if ((sub = malloc(n)) == NULL)
            return 1;
        snprintf(sub, n, "%s/configmaps.yaml", dir);
        if ((f = fopen(sub, "w")) == NULL || ms_k8s_write_configmaps(f, c, ns) != MS_OK) {
            fprintf(stderr, "migsched %s: cannot write %s\n", C, sub);
            rc = 1;
        }
        if (f != NULL && fclose(f) != 0)
            rc = 1;
        free(sub);
    }
    return rc;
}

int ms_cli_k8s_config(int argc, char **argv)
{
    static const struct option opts[] = {
        { "policy", required_argument, NULL, 'p' },
        { "out", required_argument, NULL, 'o' },
        { "namespace", required_argument, NULL, 'n' },
        { "labels", no_argument, NULL, 'l' },
        { "check-mig-parted", required_argument, NULL, 'c' },
        { "model", required_argument, NULL, 'm' },
        { "scheduler-config", no_argument, NULL, 's' },
        { "extender-url", required_argument, NULL, 'u' },
        { "kubeconfig", required_argument, NULL, 'k' },
        { "no-leader-elect", no_argument, NULL, 'L' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *policy = NULL, *out = NULL, *ns = "gpu-operator", *check = NULL, *model = NULL;
    int labels = 0, sched = 0, c, rc, i;
    ms_k8s_sched_opts_t so = { DEFAULT_URL, DEFAULT_KUBECONFIG, 1 };
    bool sched_opt = false;
    ms_k8s_cfg_t *cfg = NULL;
    ms_diag_t d;
    ms_status_t st;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': policy = optarg; break;
        case 'o': out = optarg; break;
        case 'n': ns = optarg; break;
        case 'l': labels = 1; break;
        case 'c': check = optarg; break;
        case 'm': model = optarg; break;
        case 's': sched = 1; break;
        case 'u': so.extender_url = optarg; sched_opt = true; break;
        case 'k': so.kubeconfig = optarg; sched_opt = true; break;
        case 'L': so.leader_elect = 0; sched_opt = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return MS_CLI_EUSAGE;
        }
    }
    if (sched) {
        if (optind != argc || policy != NULL || check != NULL || out != NULL || labels ||
            model != NULL) {
            ms_cli_usage_error(C, optind != argc ? argv[optind] : NULL,
                               "--scheduler-config takes only --extender-url, --kubeconfig, "
                               "--no-leader-elect");
            return MS_CLI_EUSAGE;
        }
        if ((strncmp(so.extender_url, "http://", 7) != 0 &&
             strncmp(so.extender_url, "https://", 8) != 0) || !plain_ok(so.extender_url, ":")) {
            fprintf(stderr, "migsched %s: --extender-url: '%s': expected http(s)://HOST:PORT/PATH "
                            "of [A-Za-z0-9:/._-]\n", C, so.extender_url);
            return MS_CLI_EUSAGE;
        }
        if (!plain_ok(so.kubeconfig, "")) {
            fprintf(stderr, "migsched %s: --kubeconfig: '%s': expected a path of [A-Za-z0-9/._-]\n",
                    C, so.kubeconfig);
            return MS_CLI_EUSAGE;
        }
        return ms_k8s_write_scheduler_config(stdout, &so) == MS_OK ? MS_CLI_OK : MS_CLI_EDATA;
    }
    if (sched_opt) {
        ms_cli_usage_error(C, NULL, "--extender-url, --kubeconfig and --no-leader-elect need "
                           "--scheduler-config");
        return MS_CLI_EUSAGE;
    }
    if (optind != argc || (policy == NULL) == (check == NULL) ||
        (check != NULL && (model == NULL || out != NULL || labels)) ||
        (policy != NULL && model != NULL)) {
        ms_cli_usage_error(C, optind != argc ? argv[optind] : NULL,
                           "give --policy FILE, or --check-mig-parted FILE with --model");
        usage(stderr);
        return MS_CLI_EUSAGE;
    }
    for (i = 0; ns[i] != '\0'; i++)
        if (!((ns[i] >= 'a' && ns[i] <= 'z') || (ns[i] >= '0' && ns[i] <= '9') || ns[i] == '-') ||
            i >= 63) {
            fprintf(stderr, "migsched %s: --namespace: '%s' is not a namespace name "
                            "(1-63 of [a-z0-9-])\n", C, ns);
            return MS_CLI_EUSAGE;
        }
    if (ns[0] == '\0') {
        fprintf(stderr, "migsched %s: --namespace: empty\n", C);
        return MS_CLI_EUSAGE;
    }
    if (check != NULL) {
        const ms_model_t *m = ms_model_find(model);
        int n = 0;
        if (m == NULL) {
            fprintf(stderr, "migsched %s: --model: unknown model '%s' (see migsched models)\n", C,
                    model);
            return MS_CLI_EUSAGE;
        }
        if ((st = ms_k8s_check_mig_parted(check, m, &n, &d)) != MS_OK)
            return ms_cli_fail(C, st, &d);
        printf("%s: %d mig-parted configs, every entry placeable on %s\n", check, n, m->name);
        return MS_CLI_OK;
    }
    if ((st = ms_k8s_cfg_read(policy, &cfg, &d)) != MS_OK)
        return ms_cli_fail(C, st, &d);
    if (out != NULL) {
        rc = write_dir(out, cfg, ns);
        if (rc == 0)
            printf("wrote %s/mig-parted.yaml, %d device-plugin configs, configmaps.yaml, "
                   "node-labels.txt (%d nodes)\n", out, ms_k8s_cfg_nplugins(cfg),
                   ms_k8s_cfg_nnodes(cfg));
    } else {
        st = labels ? ms_k8s_write_labels(stdout, cfg) : ms_k8s_write_configmaps(stdout, cfg, ns);
        rc = st == MS_OK ? 0 : 1;
    }
    ms_k8s_cfg_free(cfg);
    return rc;
}
