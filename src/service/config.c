/* config.c - migschedd's settings from the command line and --config FILE.
 *
 * A config file holds the same settings as the long options, one
 * `key = value` a line (`node = a=4xA100-40GB` may repeat; flags take true or
 * false), '#' comments. The file is read first and the command line applies
 * on top (nodes from both add up). Every error names the option or the file
 * and line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/svc.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: migschedd --state-dir DIR --node NAME=COUNTxMODEL[:mig|:timeslice=R|:whole] ... [options]\n"
            "  --listen HOST:PORT     address (default 127.0.0.1:7070; loopback unless --allow-remote)\n"
            "  --state-dir DIR        SQLite store and the sim backend's inventory (created if missing)\n"
            "  --backend KIND         sim (default), dry-run, nvml, or agent (each node's migsched-agent)\n"
            "  --agent NODE=URL       backend agent: the agent of a node (e.g. a=http://10.0.0.5:7071); repeat\n"
            "  --agent-token-file F   backend agent: bearer token sent to the agents\n"
            "  --node SPEC            one node; repeat (e.g. a=4xA100-40GB, c=4xA100-40GB:timeslice=4)\n"
            "  --nodes-file FILE      nodes, one spec a line\n"
            "  --policy NAME          fa+ (default), fa, static, first-fit, best-fit, fgd, mfi, node-profile, timeslice\n"

            "  --time-scale X         sim: a job of duration_s ends after duration_s / X s (default 1)\n"
            "  --op-delay S           sim: seconds each op takes (default 0.005), 0..10\n"
            "  --sim-fail KIND:N      sim: every Nth op of KIND fails (create, destroy, start, move, stop,\n"
            "                         any); also MIGSCHEDD_SIM_FAIL\n"
            "  --migrate-hook CMD     run CMD (sh -c) for every migration: the workload checkpoints on\n"
            "                         the source instance and restores on the target (docs/service.md)\n"
            "  --migrate-timeout S    the hook's deadline (default 60), 1..86400 s\n"
            "  --token-file FILE      require 'Authorization: Bearer TOKEN' on POST/DELETE (SIGHUP reloads)\n"
            "  --tls-cert FILE --tls-key FILE   serve HTTPS\n"
            "  --max-body BYTES       request bodies at most (default 65536)\n"
            "  --max-conns N          connections at most (default 256)\n"
            "  --http-threads N       HTTP threads (epoll, none blocks; default 2), 1..64\n"
            "  --commit-delay MS      a commit within MS of the last one waits for it, so the\n"
            "                         batches meanwhile share one commit and fsync (default 0.25), 0..100\n"
            "  --allow-remote         allow a non-loopback --listen address\n"
            "  --kube                 bind pods through the API server (in-cluster service account)\n"
            "  --kubeconfig FILE      ... with this kubeconfig's current context (implies --kube)\n"
            "  --kube-api URL         ... with this API server (implies --kube); with\n"
            "                         --kube-token-file FILE (bearer token) and --kube-ca FILE\n"
            "  --extender-ttl S       how long a filter's reservation waits for its bind (default 30), 1..3600 s\n"
            "  --leader-elect         with --kube*: leader election on a Lease; only the leader serves\n"
            "  --lease NS/NAME        the Lease (default migsched/migschedd)\n"
            "  --lease-duration S     its duration (default 10), 3..3600 s; a standby takes over about\n"
            "                         1.2 x S after the leader's last renewal\n"
            "  --k8s-policy FILE      with --kube*: switch the MIG layouts of the GPU Operator nodes of this\n"
            "                         cluster policy (its switching: section; docs/kubernetes.md)\n"
            "  --layout-period S      how often (default 5), 0.2..3600 s\n"
            "  --layout-hysteresis S --layout-drain-timeout S --layout-apply-timeout S (0..604800 s),\n"
            "  --layout-budget N (switches per node and hour, 1..64), --layout-min-gain N (slices,\n"
            "  0..1000000), --layout-evict: override the policy's switching section\n"
            "  --config FILE          settings as `key = value` lines (docs/service.md)\n"
            "queue and policy options (the simulator's; a flag X is also --no-X):\n");
    {
        const char *name, *help;
        int i;

        for (i = 0; (name = ms_sched_cfg_option(i, &help)) != NULL; i++)
            fprintf(f, "  --%-20s %s\n", name, help);

        for (i = 0; (name = ms_policy_cfg_option(i, &help)) != NULL; i++)
            fprintf(f, "  --%-20s %s\n", name, help);
    }
}

static int set_str(char **dst, const char *v)
{
    char *s = strdup(v);

    if (s == NULL)
        return -1;
    free(*dst);
    *dst = s;
    return 0;
}

static bool num(const char *v, double lo, double hi, double *out)
{
    char *end;
    double x;

    errno = 0;
    x = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || errno != 0 || !isfinite(x) || x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

static bool boolean(const char *v, bool *out)
{
    if (v == NULL || strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0)
        *out = true;
    else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0)
        *out = false;
    else
        return false;
    return true;
}

typedef struct opt {
    const char *name;
    bool flag;          /* takes no value on the command line */
} opt_t;

static const opt_t OPTS[] = {
    { "listen", false }, { "state-dir", false }, { "backend", false }, { "node", false },
    { "nodes-file", false }, { "policy", false }, { "time-scale", false }, { "op-delay", false }, { "sim-fail", false },
    { "migrate-hook", false }, { "migrate-timeout", false },
    { "token-file", false }, { "tls-cert", false }, { "tls-key", false }, { "max-body", false },
    { "max-conns", false }, { "http-threads", false }, { "commit-delay", false }, { "allow-remote", true }, { "config", false },
    { "kube", true }, { "kubeconfig", false }, { "kube-api", false }, { "kube-token-file", false },
    { "kube-ca", false }, { "extender-ttl", false },
    { "leader-elect", true }, { "lease", false }, { "lease-duration", false }, { "k8s-policy", false },
    { "layout-period", false }, { "layout-hysteresis", false }, { "layout-drain-timeout", false },
    { "layout-apply-timeout", false }, { "layout-budget", false }, { "layout-min-gain", false },
    { "layout-evict", true }, { "agent", false }, { "agent-token-file", false }, { NULL, false },
};

/* A policy option (src/policy/cfg.c owns the names, ranges and messages, so
 * every option `simulate` knows works here with the same errors). v NULL: a
 * command-line flag. "no-X = true|false" in a file is X = false|true. A
 * string value (static-layout) is kept in c->static_layout: the library
 * borrows it. */
/* One of the queue discipline's options (ms_sched_cfg_option)? */
static bool queue_opt(const char *k)
{
    const char *n;
    int i;

    for (i = 0; (n = ms_sched_cfg_option(i, NULL)) != NULL; i++)
        if (strcmp(n, k) == 0)
            return true;
    return false;
}

static int policy_opt(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    ms_diag_t diag;
    ms_status_t st;
    bool b;

    ms_diag_clear(&diag);
    if (queue_opt(k)) {
        st = ms_sched_cfg_set(&c->qcfg, k, v, &diag);
        if (st == MS_OK)
            return 0;
        snprintf(msg, mlen, "%s", diag.msg[0] ? diag.msg : ms_strerror(st));
        return -1;
    }
    if (strcmp(k, "static-layout") == 0 && v != NULL) {
        if (set_str(&c->static_layout, v) != 0)
            return -1;
        v = c->static_layout;
    }
    if (strncmp(k, "no-", 3) == 0 && v != NULL && boolean(v, &b))
        st = ms_policy_cfg_set(&c->pcfg, k + 3, b ? "false" : "true", &diag);
    else
        st = ms_policy_cfg_set(&c->pcfg, k, v, &diag);
    if (st == MS_OK)
        return 0;
    if (st == MS_ENOENT)
        snprintf(msg, mlen, "unknown setting '%s'", k);
    else
        snprintf(msg, mlen, "%s", diag.msg[0] ? diag.msg : ms_strerror(st));
    return -1;
}

/* Apply one setting; msg receives what is wrong. */
static int apply(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    double x;
    bool b;

#define NEED_NUM(lo, hi, what)                                                       \
    if (!num(v, lo, hi, &x)) {                                                       \
        snprintf(msg, mlen, "%s must be %s", k, what);                               \
        return -1;                                                                   \
    }
    if (strcmp(k, "listen") == 0)
        return set_str(&c->listen, v);
    if (strcmp(k, "state-dir") == 0)
        return set_str(&c->state_dir, v);
    if (strcmp(k, "backend") == 0) {
        if (strcmp(v, "sim") != 0 && strcmp(v, "dry-run") != 0 && strcmp(v, "nvml") != 0 &&
            strcmp(v, "agent") != 0) {
            snprintf(msg, mlen, "backend must be sim, dry-run, nvml or agent");
            return -1;
        }
        return set_str(&c->backend, v);
    }
    if (strcmp(k, "node") == 0 || strcmp(k, "nodes-file") == 0) {
        char **n = realloc(c->nodes, (size_t)(c->nnodes + 1) * sizeof(*n));
        size_t len = strlen(v) + 2;

        if (n == NULL)
            return -1;
        c->nodes = n;
        /* a leading '@' marks a nodes file */
        if ((c->nodes[c->nnodes] = malloc(len)) == NULL)
            return -1;
        snprintf(c->nodes[c->nnodes], len, "%s%s", k[4] == '-' ? "@" : "", v);
        c->nnodes++;
        return 0;
    }
    if (strcmp(k, "policy") == 0) {
        if (ms_policy_find(v) == NULL) {
            snprintf(msg, mlen, "policy: no policy named '%s' (fa, static, first-fit, best-fit, fgd, mfi, node-profile, timeslice)", v);
            return -1;
        }
        return set_str(&c->policy, v);
    }
    if (strcmp(k, "allow-remote") == 0) {
        if (!boolean(v, &b)) {
            snprintf(msg, mlen, "%s must be true or false", k);
            return -1;
        }
        c->allow_remote = b;
        return 0;
    }
    if (strcmp(k, "time-scale") == 0) {
        NEED_NUM(1e-6, 1e9, "a number in [1e-6, 1e9]");
        c->time_scale = x;
        return 0;
    }
    if (strcmp(k, "op-delay") == 0) {
        NEED_NUM(0, 10, "seconds in [0, 10]");
        c->op_delay_s = x;
        return 0;
    }
    if (strcmp(k, "sim-fail") == 0)
        return set_str(&c->sim_fail, v);
    if (strcmp(k, "migrate-hook") == 0)
        return set_str(&c->migrate_hook, v);
    if (strcmp(k, "migrate-timeout") == 0) {
        NEED_NUM(1, 86400, "seconds in [1, 86400]");
        c->migrate_timeout_s = x;
        return 0;
    }
    if (strcmp(k, "token-file") == 0)
        return set_str(&c->token_file, v);
    if (strcmp(k, "agent") == 0) {
        const char *eq = strchr(v, '=');
        char **a;

        if (eq == NULL || eq == v || (strncmp(eq + 1, "http://", 7) != 0 && strncmp(eq + 1, "https://", 8) != 0)) {
            snprintf(msg, mlen, "agent must be NODE=URL with an http:// or https:// URL");
            return -1;
        }
        if ((a = realloc(c->agents, (size_t)(c->nagents + 1) * sizeof(*a))) == NULL)
            return -1;
        c->agents = a;
        if ((c->agents[c->nagents] = strdup(v)) == NULL)
            return -1;
        c->nagents++;
        return 0;
    }
    if (strcmp(k, "agent-token-file") == 0)
        return set_str(&c->agent_token_file, v);
    if (strcmp(k, "tls-cert") == 0)
        return set_str(&c->tls_cert, v);
    if (strcmp(k, "tls-key") == 0)
        return set_str(&c->tls_key, v);
    if (strcmp(k, "max-body") == 0) {
        NEED_NUM(256, 64 << 20, "bytes in [256, 67108864]");
        c->max_body = (long)x;
        return 0;
    }
    if (strcmp(k, "max-conns") == 0) {
        NEED_NUM(4, 10000, "an integer in [4, 10000]");
        c->max_conns = (int)x;
        return 0;
    }
    if (strcmp(k, "commit-delay") == 0) {
        NEED_NUM(0, 100, "milliseconds in [0, 100]");
        c->commit_delay_s = x / 1000.0;
        return 0;
    }
    if (strcmp(k, "http-threads") == 0) {
        NEED_NUM(1, 64, "an integer in [1, 64]");
        c->http_threads = (int)x;
        return 0;
    }
    if (strcmp(k, "kube") == 0) {
        if (!boolean(v, &c->kube)) {
            snprintf(msg, mlen, "kube must be true or false");
            return -1;
        }
        return 0;
    }
    if (strcmp(k, "kubeconfig") == 0 || strcmp(k, "kube-api") == 0) {
        c->kube = true;
        return set_str(k[4] == 'c' ? &c->kubeconfig : &c->kube_api, v);
    }
    if (strcmp(k, "kube-token-file") == 0)
        return set_str(&c->kube_token_file, v);
    if (strcmp(k, "kube-ca") == 0)
        return set_str(&c->kube_ca, v);
    if (strcmp(k, "extender-ttl") == 0) {
        NEED_NUM(1, 3600, "seconds in [1, 3600]");
        c->ext_ttl_s = x;
        return 0;
    }
    if (strcmp(k, "leader-elect") == 0 || strcmp(k, "layout-evict") == 0) {
        if (!boolean(v, k[1] == 'e' ? &c->leader_elect : &c->layout_evict)) {
            snprintf(msg, mlen, "%s must be true or false", k);
            return -1;
        }
        return 0;
    }
    if (strcmp(k, "lease") == 0) {
        const char *sl = strchr(v, '/');
        if (sl == NULL || sl == v || sl[1] == '\0' || strchr(sl + 1, '/') != NULL || strlen(v) > 317) {
            snprintf(msg, mlen, "lease must be NAMESPACE/NAME");
            return -1;
        }
        return set_str(&c->lease, v);
    }
    if (strcmp(k, "lease-duration") == 0) {
        NEED_NUM(3, 3600, "seconds in [3, 3600]");
        c->lease_s = x;
        return 0;
    }
    if (strcmp(k, "k8s-policy") == 0)
        return set_str(&c->k8s_policy, v);
    if (strcmp(k, "layout-period") == 0) {
        NEED_NUM(0.2, 3600, "seconds in [0.2, 3600]");
        c->layout_period_s = x;
        return 0;
    }
    if (strcmp(k, "layout-hysteresis") == 0 || strcmp(k, "layout-drain-timeout") == 0 ||
        strcmp(k, "layout-apply-timeout") == 0) {
        NEED_NUM(0, 604800, "seconds in [0, 604800]");
        *(k[7] == 'h' ? &c->layout_hysteresis_s : k[7] == 'd' ? &c->layout_drain_s : &c->layout_apply_s) = x;
        return 0;
    }
    if (strcmp(k, "layout-budget") == 0) {
        NEED_NUM(1, 64, "an integer in [1, 64]");
        if (x != floor(x)) {
            snprintf(msg, mlen, "%s must be an integer in [1, 64]", k);
            return -1;
        }
        c->layout_budget = (int)x;
        return 0;
    }
    if (strcmp(k, "layout-min-gain") == 0) {
        NEED_NUM(0, 1000000, "an integer in [0, 1000000]");
        if (x != floor(x)) {
            snprintf(msg, mlen, "%s must be an integer in [0, 1000000]", k);
            return -1;
        }
        c->layout_min_gain = (int)x;
        return 0;
    }
    return policy_opt(c, k, v, msg, mlen);
#undef NEED_NUM
}

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

static int read_file(svc_cfg_t *c, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    long no = 0;
    int rc = 0;

    if (f == NULL) {
        fprintf(stderr, "migschedd: --config %s: %s\n", path, strerror(errno));
        return 1;
    }
    while (getline(&line, &cap, f) != -1) {
        char *s, *eq, msg[256];

        no++;
        if ((s = strchr(line, '#')) != NULL)
            *s = '\0';
        s = trim(line);
        if (*s == '\0')
            continue;
        if ((eq = strchr(s, '=')) == NULL) {
            fprintf(stderr, "migschedd: %s:%ld: expected `key = value`\n", path, no);
            rc = 1;
            break;
        }
        *eq = '\0';
        msg[0] = '\0';
        if (strcmp(trim(s), "config") == 0 || apply(c, trim(s), trim(eq + 1), msg, sizeof(msg)) != 0) {
            fprintf(stderr, "migschedd: %s:%ld: %s\n", path, no, msg[0] ? msg : "cannot be set here");
            rc = 1;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

int svc_cfg_parse(svc_cfg_t *c, int argc, char **argv)
{
    const char *env = getenv("MIGSCHEDD_SIM_FAIL");
    int i, k;

    memset(c, 0, sizeof(*c));
    ms_policy_cfg_defaults(&c->pcfg);
    ms_sched_cfg_defaults(&c->qcfg);
    if (set_str(&c->listen, "127.0.0.1:7070") != 0 || set_str(&c->backend, "sim") != 0 ||
        set_str(&c->policy, "fa+") != 0)
        return 1;
    c->time_scale = 1.0;
    c->op_delay_s = 0.005;
    c->migrate_timeout_s = 60.0;
    c->max_body = 65536;
    c->max_conns = 256;
    c->http_threads = 2;
    c->commit_delay_s = 0.00025;
    c->lease_s = 10;
    c->layout_period_s = 5;
    c->layout_hysteresis_s = c->layout_drain_s = c->layout_apply_s = -1;
    c->layout_budget = c->layout_min_gain = -1;
    if (env != NULL && *env != '\0' && set_str(&c->sim_fail, env) != 0)
        return 1;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return -1;
        }
    for (i = 1; i < argc; i++)
        if ((strcmp(argv[i], "--config") == 0 && i + 1 < argc && read_file(c, argv[i + 1]) != 0) ||
            (strncmp(argv[i], "--config=", 9) == 0 && read_file(c, argv[i] + 9) != 0))
            return 2;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val, *eqv;
        char msg[256] = "";
        size_t klen;

        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "migschedd: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        /* --key value, or --key=value as manifests write it */
        eqv = strchr(a + 2, '=');
        klen = eqv != NULL ? (size_t)(eqv - (a + 2)) : strlen(a + 2);
        for (k = 0; OPTS[k].name != NULL &&
                    (strlen(OPTS[k].name) != klen || strncmp(OPTS[k].name, a + 2, klen) != 0);
             k++)
            ;
        if (OPTS[k].name == NULL) {
            /* a queue or policy option: a flag if it sets itself without a
             * value (queue options always take one) */
            ms_policy_cfg_t probe = c->pcfg;
            ms_diag_t diag;
            ms_status_t st;
            char name[64];

            if (klen >= sizeof(name)) {
                fprintf(stderr, "migschedd: unknown option '%s'\n", a);
                usage(stderr);
                return 2;
            }
            memcpy(name, a + 2, klen);
            name[klen] = '\0';
            ms_diag_clear(&diag);
            st = queue_opt(name) ? MS_EINVAL : ms_policy_cfg_set(&probe, name, NULL, &diag);
            if (st == MS_ENOENT) {
                fprintf(stderr, "migschedd: unknown option '%s'\n", a);
                usage(stderr);
                return 2;
            }
            if (eqv != NULL)
                val = eqv + 1;
            else if (st == MS_OK)
                val = NULL;
            else if (i + 1 >= argc) {
                fprintf(stderr, "migschedd: %s needs a value\n", a);
                return 2;
            } else
                val = argv[++i];
            if (policy_opt(c, name, val, msg, sizeof(msg)) != 0) {
                fprintf(stderr, "migschedd: --%s\n", msg[0] ? msg : "out of memory");
                return 2;
            }
            continue;
        }
        if (eqv != NULL)
            val = eqv + 1;
        else if (OPTS[k].flag)
            val = "true";
        else if (i + 1 >= argc) {
            fprintf(stderr, "migschedd: %s needs a value\n", a);
            return 2;
        } else
            val = argv[++i];
        if (strcmp(OPTS[k].name, "config") == 0)
            continue;
        if (apply(c, OPTS[k].name, val, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "migschedd: --%s\n", msg[0] ? msg : "out of memory");
            return 2;
        }
    }
    if (c->state_dir == NULL) {
        fprintf(stderr, "migschedd: --state-dir is required\n");
        usage(stderr);
        return 2;
    }
    if ((c->leader_elect || c->k8s_policy != NULL) && !c->kube) {
        fprintf(stderr, "migschedd: --leader-elect and --k8s-policy need --kube, --kubeconfig or --kube-api\n");
        return 2;
    }
    if ((c->kube_token_file != NULL || c->kube_ca != NULL) && c->kube_api == NULL) {
        fprintf(stderr, "migschedd: --kube-token-file and --kube-ca go with --kube-api URL\n");
        return 2;
    }
    if (c->nagents > 0 && strcmp(c->backend, "agent") != 0) {
        fprintf(stderr, "migschedd: --agent needs --backend agent\n");
        return 2;
    }
    if (c->nnodes == 0) {
        fprintf(stderr, "migschedd: give at least one --node (or --nodes-file)\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

void svc_cfg_free(svc_cfg_t *c)
{
    int i;

    free(c->listen);
    free(c->state_dir);
    free(c->backend);
    for (i = 0; i < c->nnodes; i++)
        free(c->nodes[i]);
    free(c->nodes);
    free(c->policy);
    free(c->static_layout);
    free(c->sim_fail);
    free(c->migrate_hook);
    free(c->token_file);
    for (i = 0; i < c->nagents; i++)
        free(c->agents[i]);
    free(c->agents);
    free(c->agent_token_file);
    free(c->tls_cert);
    free(c->tls_key);
    free(c->lease);
    free(c->k8s_policy);
    free(c->kube_api);
    free(c->kube_token_file);
    free(c->kube_ca);
    free(c->kubeconfig);
    memset(c, 0, sizeof(*c));
}
