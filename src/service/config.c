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
#include <sys/types.h>

#include "migsched/number.h"
#include "migsched/options.h"
#include "service/dra.h"
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
            "  --op-timeout S         every backend call's deadline (an agent's request; default 30),\n"
            "                         0.1..3600 s\n"
            "  --unhealthy-after N    a GPU whose ops fail N times in a row is unhealthy: nothing is\n"
            "                         placed on it until it answers a probe (default 3), 1..1000\n"
            "  --token-file FILE      require 'Authorization: Bearer TOKEN' on POST/DELETE (SIGHUP reloads)\n"
            "  --tenant NAME[:weight=W][,guarantee=S][,limit=S][,mem-limit=GB][,mem-guarantee=GB][,limit@MODEL=S]\n"
            "         [,guarantee@MODEL=S]  declare a tenant, repeatable (docs/tenants.md; SIGHUP reloads)\n"
            "  --tls-cert FILE --tls-key FILE   serve HTTPS\n"
            "  --max-body BYTES       request bodies at most (default 65536)\n"
            "  --max-conns N          connections at most (default 256)\n"
            "  --max-conns-per-ip N   connections from one client address at most (default 64)\n"
            "  --header-timeout S     a request's line and headers must arrive within S of the\n"
            "                         connection (default 10), 1..3600 s\n"
            "  --body-timeout S       its body within S of its headers (default 30), 1..3600 s\n"
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
            "  --k8s-tenant-label L   with --kube*: a pod's tenant is its label L's value (else its namespace)\n"
            "  --k8s-policy FILE      with --kube*: switch the MIG layouts of the GPU Operator nodes of this\n"
            "                         cluster policy (its switching: section; docs/kubernetes.md)\n"
            "  --layout-period S      how often (default 5), 0.2..3600 s\n"
            "  --layout-hysteresis S --layout-drain-timeout S --layout-apply-timeout S (0..604800 s),\n"
            "  --layout-budget N (switches per node and hour, 1..64), --layout-min-gain N (slices,\n"
            "  0..1000000), --layout-evict: override the policy's switching section\n");
    fprintf(f,
            "  --recovery MODE        refuse (default) or adopt: when the store is lost or damaged, or the\n"
            "                         backend runs instances of jobs it does not know, start-up stops, or\n"
            "                         goes on and adopts them as jobs (docs/operations.md)\n"
            "  --unowned-grace S      with --kube*: an instance no pod or job owns is destroyed after S\n"
            "                         (default 300), 1..604800 s\n"
            "  --extender-max-body BYTES  the extender's request bodies at most (default 16777216: 10,000\n"
            "                         nodes of 253-character names), 65536..268435456\n"
            "  --config FILE          settings as `key = value` lines (docs/service.md)\n");
    svc_dra_usage(f);
    fprintf(f, "queue and policy options (the one option table, `migsched options`; a flag X is\n"
               "also --no-X):\n");
    {
        char buf[512];
        int i;

        for (i = 0; i < ms_opt_count(); i++)
            if (ms_opt_get(i)->scope != MS_OPT_SIM)
                fputs(ms_opt_help(ms_opt_get(i), buf, sizeof(buf)), f);
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

static bool boolean(const char *v, bool *out)
{
    if (v == NULL || strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0 ||
        strcmp(v, "on") == 0)
        *out = true;
    else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
             strcmp(v, "off") == 0)
        *out = false;
    else
        return false;
    return true;
}

/* --- the daemon's own settings: a table ---------------------------------
 *
 * Each setting is a kind and the svc_cfg_t field it sets; numbers are read
 * in the library's one syntax (number.h) and checked against [lo, hi] with
 * the option table's message ("'x' is out of range; expected a number in
 * [lo, hi]"); K_OTHER settings have a function of their own. The queue's
 * and the policies' options are the library's table (options.h). */

typedef enum { K_STR, K_NUM, K_INT, K_LONG, K_FLAG, K_OTHER } kind_t;

typedef struct opt {
    const char *name;
    kind_t kind;
    size_t off;          /* the field: char *, double, int, long or bool */
    double lo, hi;       /* K_NUM, K_INT, K_LONG */
    double scale;        /* K_NUM: stored = value x scale (0: 1) */
    int (*set)(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen);
} opt_t;

static int set_backend(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    if (strcmp(v, "sim") != 0 && strcmp(v, "dry-run") != 0 && strcmp(v, "nvml") != 0 &&
        strcmp(v, "agent") != 0) {
        snprintf(msg, mlen, "%s: '%.60s' is not one of sim, dry-run, nvml, agent", k, v);
        return -1;
    }
    return set_str(&c->backend, v);
}

/* --node SPEC and --nodes-file FILE add up, in order; a leading '@' marks
 * a nodes file. */
static int add_node(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    char **n = realloc(c->nodes, (size_t)(c->nnodes + 1) * sizeof(*n));
    size_t len = strlen(v) + 2;

    if (n == NULL)
        return -1;
    c->nodes = n;
    if ((c->nodes[c->nnodes] = malloc(len)) == NULL)
        return -1;
    snprintf(c->nodes[c->nnodes], len, "%s%s", strcmp(k, "nodes-file") == 0 ? "@" : "", v);
    c->nnodes++;
    return 0;
}

static int set_policy(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    if (ms_policy_find(v) == NULL) {
        snprintf(msg, mlen, "%s: no policy named '%.60s' (fa+, fa, static, first-fit, best-fit, "
                            "fgd, mfi, node-profile, timeslice)", k, v);
        return -1;
    }
    return set_str(&c->policy, v);
}

static int add_agent(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    const char *eq = strchr(v, '=');
    char **a;

    if (eq == NULL || eq == v ||
        (strncmp(eq + 1, "http://", 7) != 0 && strncmp(eq + 1, "https://", 8) != 0)) {
        snprintf(msg, mlen, "%s: '%.60s' is not NODE=URL with an http:// or https:// URL", k, v);
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

/* --kubeconfig FILE and --kube-api URL imply --kube. */
static int set_kube_src(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    c->kube = true;
    return set_str(strcmp(k, "kubeconfig") == 0 ? &c->kubeconfig : &c->kube_api, v);
}

static int set_lease(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    const char *sl = strchr(v, '/');

    if (sl == NULL || sl == v || sl[1] == '\0' || strchr(sl + 1, '/') != NULL ||
        strlen(v) > 317) {
        snprintf(msg, mlen, "%s: '%.60s' is not NAMESPACE/NAME", k, v);
        return -1;
    }
    return set_str(&c->lease, v);
}

static int set_recovery(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    if (strcmp(v, "refuse") != 0 && strcmp(v, "adopt") != 0) {
        snprintf(msg, mlen, "%s must be refuse or adopt", k);
        return -1;
    }
    c->recovery_adopt = v[0] == 'a';
    return 0;
}

#define F(f) offsetof(svc_cfg_t, f)

static const opt_t OPTS[] = {
    { "listen", K_STR, F(listen), 0, 0, 0, NULL },
    { "state-dir", K_STR, F(state_dir), 0, 0, 0, NULL },
    { "backend", K_OTHER, 0, 0, 0, 0, set_backend },
    { "node", K_OTHER, 0, 0, 0, 0, add_node },
    { "nodes-file", K_OTHER, 0, 0, 0, 0, add_node },
    { "policy", K_OTHER, 0, 0, 0, 0, set_policy },
    { "time-scale", K_NUM, F(time_scale), 1e-6, 1e9, 0, NULL },
    { "op-delay", K_NUM, F(op_delay_s), 0, 10, 0, NULL },
    { "sim-fail", K_STR, F(sim_fail), 0, 0, 0, NULL },
    { "migrate-hook", K_STR, F(migrate_hook), 0, 0, 0, NULL },
    { "migrate-timeout", K_NUM, F(migrate_timeout_s), 1, 86400, 0, NULL },
    { "op-timeout", K_NUM, F(op_timeout_s), 0.1, 3600, 0, NULL },
    { "unhealthy-after", K_INT, F(unhealthy_after), 1, 1000, 0, NULL },
    { "token-file", K_STR, F(token_file), 0, 0, 0, NULL },
    { "tls-cert", K_STR, F(tls_cert), 0, 0, 0, NULL },
    { "tls-key", K_STR, F(tls_key), 0, 0, 0, NULL },
    { "max-body", K_LONG, F(max_body), 256, 64 << 20, 0, NULL },
    { "max-conns", K_INT, F(max_conns), 4, 10000, 0, NULL },
    { "max-conns-per-ip", K_INT, F(max_conns_per_ip), 1, 10000, 0, NULL },
    { "header-timeout", K_NUM, F(header_timeout_s), 1, 3600, 0, NULL },
    { "body-timeout", K_NUM, F(body_timeout_s), 1, 3600, 0, NULL },
    { "http-threads", K_INT, F(http_threads), 1, 64, 0, NULL },
    { "commit-delay", K_NUM, F(commit_delay_s), 0, 100, 0.001, NULL },   /* ms */
    { "allow-remote", K_FLAG, F(allow_remote), 0, 0, 0, NULL },
    { "config", K_OTHER, 0, 0, 0, 0, NULL },   /* read first, by svc_cfg_parse */
    { "kube", K_FLAG, F(kube), 0, 0, 0, NULL },
    { "kubeconfig", K_OTHER, 0, 0, 0, 0, set_kube_src },
    { "kube-api", K_OTHER, 0, 0, 0, 0, set_kube_src },
    { "kube-token-file", K_STR, F(kube_token_file), 0, 0, 0, NULL },
    { "kube-ca", K_STR, F(kube_ca), 0, 0, 0, NULL },
    { "extender-ttl", K_NUM, F(ext_ttl_s), 1, 3600, 0, NULL },
    { "extender-filter-nodes", K_INT, F(ext_filter_nodes), 0, 100000, 0, NULL },
    { "leader-elect", K_FLAG, F(leader_elect), 0, 0, 0, NULL },
    { "lease", K_OTHER, 0, 0, 0, 0, set_lease },
    { "lease-duration", K_NUM, F(lease_s), 3, 3600, 0, NULL },
    { "k8s-policy", K_STR, F(k8s_policy), 0, 0, 0, NULL },
    { "k8s-tenant-label", K_STR, F(k8s_tenant_label), 0, 0, 0, NULL },
    { "layout-period", K_NUM, F(layout_period_s), 0.2, 3600, 0, NULL },
    { "layout-hysteresis", K_NUM, F(layout_hysteresis_s), 0, 604800, 0, NULL },
    { "layout-drain-timeout", K_NUM, F(layout_drain_s), 0, 604800, 0, NULL },
    { "layout-apply-timeout", K_NUM, F(layout_apply_s), 0, 604800, 0, NULL },
    { "layout-budget", K_INT, F(layout_budget), 1, 64, 0, NULL },
    { "layout-min-gain", K_INT, F(layout_min_gain), 0, 1000000, 0, NULL },
    { "layout-evict", K_FLAG, F(layout_evict), 0, 0, 0, NULL },
    { "agent", K_OTHER, 0, 0, 0, 0, add_agent },
    { "agent-token-file", K_STR, F(agent_token_file), 0, 0, 0, NULL },
    /* --dra mode (dra_open.c parses its own) */
    { "dra", K_FLAG, 0, 0, 0, 0, svc_dra_cfg_set },
    { "dra-driver", K_OTHER, 0, 0, 0, 0, svc_dra_cfg_set },
    { "dra-expire", K_OTHER, 0, 0, 0, 0, svc_dra_cfg_set },
    { "dra-fence", K_OTHER, 0, 0, 0, 0, svc_dra_cfg_set },
    { "dra-retry", K_OTHER, 0, 0, 0, 0, svc_dra_cfg_set },
    { "dra-webhook-timeout", K_OTHER, 0, 0, 0, 0, svc_dra_cfg_set },
    { "recovery", K_OTHER, 0, 0, 0, 0, set_recovery },
    { "unowned-grace", K_NUM, F(unowned_grace_s), 1, 604800, 0, NULL },
    { "extender-max-body", K_LONG, F(ext_max_body), 65536, 256 << 20, 0, NULL },
    { NULL, K_OTHER, 0, 0, 0, 0, NULL },
};

static const opt_t *own_opt(const char *k, size_t klen)
{
    const opt_t *o;

    for (o = OPTS; o->name != NULL; o++)
        if (strlen(o->name) == klen && strncmp(o->name, k, klen) == 0)
            return o;
    return NULL;
}

/* A number for a K_NUM, K_INT or K_LONG setting, in [lo, hi]. */
static int own_number(const opt_t *o, const char *v, double *x, char *msg, size_t mlen)
{
    bool integer = o->kind != K_NUM;
    ms_status_t st;
    int64_t i;

    if (integer) {
        st = ms_number_int(v, (int64_t)o->lo, (int64_t)o->hi, &i);
        *x = (double)i;
    } else {
        st = ms_number_double(v, x);
        if (st == MS_OK && !(*x >= o->lo && *x <= o->hi))
            st = MS_ERANGE;
    }
    if (st == MS_OK)
        return 0;
    snprintf(msg, mlen, "%s: '%.60s' is %s; expected %s in [%g, %g]", o->name, v,
             st == MS_ERANGE ? "out of range" : integer ? "not an integer" : "not a decimal number",
             integer ? "an integer" : "a number", o->lo, o->hi);
    return -1;
}

/* Apply one of the daemon's own settings; msg receives what is wrong. */
static int apply_own(svc_cfg_t *c, const opt_t *o, const char *v, char *msg, size_t mlen)
{
    char *field = (char *)c + o->off;
    double x;

    switch (o->kind) {
    case K_STR:
        return set_str((char **)(void *)field, v);
    case K_FLAG:
        if (o->set != NULL)   /* a flag kept elsewhere (--dra) */
            return o->set(c, o->name, v, msg, mlen);
        if (!boolean(v, (bool *)(void *)field)) {
            snprintf(msg, mlen, "%s: '%.60s' is not true or false", o->name, v);
            return -1;
        }
        return 0;
    case K_NUM:
    case K_INT:
    case K_LONG:
        if (own_number(o, v, &x, msg, mlen) != 0)
            return -1;
        if (o->kind == K_NUM)
            *(double *)(void *)field = o->scale != 0 ? x * o->scale : x;
        else if (o->kind == K_INT)
            *(int *)(void *)field = (int)x;
        else
            *(long *)(void *)field = (long)x;
        return 0;
    case K_OTHER:
        break;
    }
    if (o->set == NULL) {
        snprintf(msg, mlen, "%s: cannot be set here", o->name);
        return -1;
    }
    return o->set(c, o->name, v, msg, mlen);
}

/* A tenant (the simulator's option, which the daemon takes too): the
 * table's own parser and rules (a name again replaces its declaration, at
 * most MS_SIM_MAX_TENANTS), through a scratch simulator configuration. */
static ms_status_t add_tenant(svc_cfg_t *c, const char *k, const char *v, ms_diag_t *diag)
{
    ms_sim_cfg_t *sim = calloc(1, sizeof(*sim));
    ms_opt_target_t t = { NULL, NULL, sim };
    ms_status_t st;

    if (sim == NULL)
        return MS_ENOMEM;
    sim->tenants = c->tenants;
    if ((st = ms_opt_set(&t, k, v, diag)) == MS_OK)
        c->tenants = sim->tenants;
    free(sim);
    return st;
}

/* One of the library's queue or policy options (options.h): the same
 * names, ranges and messages as `migsched simulate`. v NULL: a flag. The
 * string option (static-layout) is borrowed by the library: the daemon
 * keeps its copy in c->static_layout. */
static int apply_table(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    ms_opt_target_t t = { &c->pcfg, &c->qcfg, NULL };
    const ms_opt_t *o = ms_opt_find(k, NULL);
    ms_diag_t diag;
    ms_status_t st;

    if (o != NULL && o->type == MS_OPT_STRING && v != NULL) {
        if (set_str(&c->static_layout, v) != 0)
            return -1;
        v = c->static_layout;
    }
    ms_diag_clear(&diag);
    if (o != NULL && o->type == MS_OPT_TENANT)
        st = add_tenant(c, k, v, &diag);
    else
        st = ms_opt_set(&t, k, v, &diag);
    if (st == MS_OK)
        return 0;
    if (o == NULL)
        snprintf(msg, mlen, "unknown setting '%s'", k);
    else
        snprintf(msg, mlen, "%s: %.200s", o->name, diag.msg[0] ? diag.msg : ms_strerror(st));
    return -1;
}

/* Apply one setting (a file's key = value); msg receives what is wrong. */
static int apply(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    const opt_t *o = own_opt(k, strlen(k));

    return o != NULL ? apply_own(c, o, v, msg, mlen) : apply_table(c, k, v, msg, mlen);
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

/* A read that ends before the end of the file (a directory, out of memory,
 * an I/O error) is an error naming the file, never a short file; a NUL in
 * a line is an error naming the line, never a line cut at it. 0, or 1 with
 * why ("FILE:LINE: field: what"). */
static int read_file(svc_cfg_t *c, const char *path, char *why, size_t wlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long no = 0;
    int rc = 0;

    if (f == NULL) {
        snprintf(why, wlen, "--config %s: %s", path, strerror(errno));
        return 1;
    }
    for (;;) {
        char *s, *eq, msg[256];

        errno = 0;
        if ((n = getline(&line, &cap, f)) < 0) {
            if (!feof(f)) {
                if (no > 0)
                    snprintf(why, wlen, "--config %s: %s (after line %ld)", path,
                             strerror(errno != 0 ? errno : EIO), no);
                else
                    snprintf(why, wlen, "--config %s: %s", path, strerror(errno != 0 ? errno : EIO));
                rc = 1;
            }
            break;
        }
        no++;
        if ((size_t)n != strlen(line)) {
            snprintf(why, wlen, "%s:%ld: a NUL byte at column %zu", path, no, strlen(line) + 1);
            rc = 1;
            break;
        }
        if ((s = strchr(line, '#')) != NULL)
            *s = '\0';
        s = trim(line);
        if (*s == '\0')
            continue;
        if ((eq = strchr(s, '=')) == NULL) {
            snprintf(why, wlen, "%s:%ld: expected `key = value`", path, no);
            rc = 1;
            break;
        }
        *eq = '\0';
        msg[0] = '\0';
        if (apply(c, trim(s), trim(eq + 1), msg, sizeof(msg)) != 0) {
            snprintf(why, wlen, "%s:%ld: %s", path, no, msg[0] ? msg : "out of memory");
            rc = 1;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* Every --config FILE of argv, in order; 0, or 1 with why. */
static int read_files(svc_cfg_t *c, int argc, char **argv, char *why, size_t wlen)
{
    int i;

    for (i = 1; i < argc; i++)
        if ((strcmp(argv[i], "--config") == 0 && i + 1 < argc && read_file(c, argv[i + 1], why, wlen) != 0) ||
            (strncmp(argv[i], "--config=", 9) == 0 && read_file(c, argv[i] + 9, why, wlen) != 0))
            return 1;
    return 0;
}

static int defaults(svc_cfg_t *c)
{
    const char *env = getenv("MIGSCHEDD_SIM_FAIL");

    memset(c, 0, sizeof(*c));
    ms_policy_cfg_defaults(&c->pcfg);
    ms_sched_cfg_defaults(&c->qcfg);
    if (set_str(&c->listen, "127.0.0.1:7070") != 0 || set_str(&c->backend, "sim") != 0 ||
        set_str(&c->policy, "fa+") != 0)
        return 1;
    c->time_scale = 1.0;
    c->op_delay_s = 0.005;
    c->migrate_timeout_s = 60.0;
    c->op_timeout_s = 30.0;
    c->unhealthy_after = 3;
    c->max_body = 65536;
    c->ext_max_body = 16L << 20;
    c->ext_filter_nodes = 16;
    c->unowned_grace_s = 300;
    c->max_conns = 256;
    c->max_conns_per_ip = 64;
    c->header_timeout_s = 10;
    c->body_timeout_s = 30;
    c->http_threads = 2;
    c->commit_delay_s = 0.00025;
    c->lease_s = 10;
    c->layout_period_s = 5;
    c->layout_hysteresis_s = c->layout_drain_s = c->layout_apply_s = -1;
    c->layout_budget = c->layout_min_gain = -1;
    if (env != NULL && *env != '\0' && set_str(&c->sim_fail, env) != 0)
        return 1;
    return 0;
}

/* argv[*i], with its value if it takes one (--key value, or --key=value as
 * manifests write it): 0, or 2 after saying what is wrong. A daemon
 * setting's flag (K_FLAG) and the table's booleans take no separate
 * value. */
static int one_arg(svc_cfg_t *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *val, *eqv;
    const opt_t *o;
    const ms_opt_t *t = NULL;
    char msg[256] = "", name[64];
    size_t klen;
    bool flag;

    if (strncmp(a, "--", 2) != 0) {
        fprintf(stderr, "migschedd: unexpected argument '%s'\n", a);
        usage(stderr);
        return 2;
    }
    eqv = strchr(a + 2, '=');
    klen = eqv != NULL ? (size_t)(eqv - (a + 2)) : strlen(a + 2);
    if ((o = own_opt(a + 2, klen)) == NULL && klen < sizeof(name)) {
        memcpy(name, a + 2, klen);
        name[klen] = '\0';
        t = ms_opt_find(name, NULL);
    }
    if (o == NULL && t == NULL) {
        fprintf(stderr, "migschedd: unknown option '%s'\n", a);
        usage(stderr);
        return 2;
    }
    flag = o != NULL ? o->kind == K_FLAG : t->type == MS_OPT_BOOL;
    if (eqv != NULL)
        val = eqv + 1;
    else if (flag)
        val = o != NULL ? "true" : NULL;
    else if (t != NULL && t->scope == MS_OPT_SIM && t->type != MS_OPT_TENANT)
        val = NULL;   /* the table says it is not the daemon's (but for --tenant) */
    else if (*i + 1 >= argc) {
        fprintf(stderr, "migschedd: %s needs a value\n", a);
        return 2;
    } else
        val = argv[++*i];
    if (o != NULL && strcmp(o->name, "config") == 0)
        return 0;   /* read before the rest */
    if ((o != NULL ? apply_own(c, o, val, msg, sizeof(msg))
                   : apply_table(c, name, val, msg, sizeof(msg))) != 0) {
        fprintf(stderr, "migschedd: --%s\n", msg[0] ? msg : "out of memory");
        return 2;
    }
    return 0;
}

/* What no single setting can check. */
static int check(const svc_cfg_t *c)
{
    if (c->state_dir == NULL && !svc_dra_on(c)) {
        fprintf(stderr, "migschedd: --state-dir is required\n");
        usage(stderr);
        return 2;
    }
    if ((c->leader_elect || c->k8s_policy != NULL || c->k8s_tenant_label != NULL) && !c->kube) {
        fprintf(stderr, "migschedd: --leader-elect, --k8s-policy and --k8s-tenant-label need --kube, --kubeconfig "
                        "or --kube-api\n");
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
    if (svc_dra_on(c) && (c->nnodes > 0 || !c->kube)) {
        fprintf(stderr, "migschedd: --dra takes its nodes from the ResourceSlices: it needs --kube, --kubeconfig "
                        "or --kube-api and no --node\n");
        return 2;
    }
    if (c->nnodes == 0 && !svc_dra_on(c)) {
        fprintf(stderr, "migschedd: give at least one --node (or --nodes-file)\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

int svc_cfg_parse(svc_cfg_t *c, int argc, char **argv)
{
    char why[512];
    int i, rc;

    if (defaults(c) != 0)
        return 1;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return -1;
        }
    if (read_files(c, argc, argv, why, sizeof(why)) != 0) {
        fprintf(stderr, "migschedd: %s\n", why);
        return 2;
    }
    for (i = 1; i < argc; i++)
        if ((rc = one_arg(c, argc, argv, &i)) != 0)
            return rc;
    c->argc = argc;
    c->argv = argv;
    return check(c);
}

int svc_cfg_tenants(const svc_cfg_t *cfg, ms_sim_tenants_t *out, double *half_life_s, char *why,
                    size_t len)
{
    svc_cfg_t c;
    char msg[256];
    int i, rc = 0;

    why[0] = '\0';
    if (defaults(&c) != 0) {
        snprintf(why, len, "out of memory");
        svc_cfg_free(&c);
        return -1;
    }
    if (read_files(&c, cfg->argc, cfg->argv, why, len) != 0)
        rc = -1;
    for (i = 1; rc == 0 && i < cfg->argc; i++) {
        const char *a = cfg->argv[i], *v = NULL, *k = "tenant";

        if (strncmp(a, "--tenant=", 9) == 0)
            v = a + 9;
        else if (strcmp(a, "--tenant") == 0 && i + 1 < cfg->argc)
            v = cfg->argv[++i];
        else if (strncmp(a, "--tenant-half-life=", 19) == 0)
            v = a + 19, k = "tenant-half-life";
        else if (strcmp(a, "--tenant-half-life") == 0 && i + 1 < cfg->argc)
            v = cfg->argv[++i], k = "tenant-half-life";
        msg[0] = '\0';
        if (v != NULL && apply_table(&c, k, v, msg, sizeof(msg)) != 0) {
            snprintf(why, len, "--%s", msg[0] ? msg : "out of memory");
            rc = -1;
        }
    }
    if (rc == 0) {
        *out = c.tenants;
        *half_life_s = c.qcfg.tenant_half_life_s;
    }
    svc_cfg_free(&c);
    return rc;
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
    free(c->k8s_tenant_label);
    free(c->kube_api);
    free(c->kube_token_file);
    free(c->kube_ca);
    free(c->kubeconfig);
    svc_dra_cfg_free(c);
    memset(c, 0, sizeof(*c));
}
