/* main.c - migsched-agent: one node's MIG executor over HTTP (docs/agent.md).
 *
 * Start-up: options, the state directory (locked: one agent per directory),
 * the node's GPUs (--node-spec or NVML), the backend (it reads its
 * inventory: for nvml the hardware's GIs), the CDI directory reconciled to
 * that inventory, then the HTTP server. Nothing else is remembered across a
 * restart: a kill -9 loses nothing the hardware does not hold. SIGTERM or
 * SIGINT: no new connections, requests in progress are answered (at most
 * 5 s), everything is freed, exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/dp.h"
#include "agent/dra.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: migsched-agent [--node-spec COUNTxMODEL[:mig|:timeslice=R|:whole]] [options]\n"
            "  --listen HOST:PORT     address (default 127.0.0.1:7071; loopback unless --allow-remote)\n"
            "  --backend KIND         nvml (default), sim, or dry-run\n"
            "  --node-spec SPEC       the node's GPUs, e.g. 4xA100-40GB (required with sim and dry-run;\n"
            "                         nvml discovers them, or checks them against SPEC)\n"
            "  --node-name NAME       this node's name (default: the host name)\n"
            "  --state-dir DIR        the backend's inventory file (default /var/lib/migsched-agent)\n"
            "  --cdi-dir DIR          CDI spec files (default /var/run/cdi)\n"
            "  --caps-root DIR        the driver's MIG capabilities (default /proc/driver/nvidia/capabilities)\n"
            "  --dev-root DIR         the driver's device nodes are under DIR/dev on this host (CDI hostPath)\n"
            "  --token-file FILE      require 'Authorization: Bearer TOKEN' on everything but /healthz\n"
            "  --op-delay S           sim: seconds each op takes (default 0), 0..10\n"
            "  --sim-fail KIND:N      sim: every Nth op of KIND fails (create, destroy, start, move, stop, any)\n"
            "  --tls-cert FILE --tls-key FILE   serve HTTPS (TLS 1.2 and 1.3)\n"
            "  --max-body BYTES       request bodies at most (default 65536)\n"
            "  --max-conns N          connections at most (default 64), 4..10000\n"
            "  --max-conns-per-ip N   connections from one client address at most (default 32)\n"
            "  --header-timeout S     a request's line and headers must arrive within S of the\n"
            "                         connection (default 10), 1..3600 s\n"
            "  --body-timeout S       its body within S of its headers (default 30), 1..3600 s\n"
            "  --allow-remote         allow a non-loopback --listen address\n"
            "MIGSCHEDD_NVML_LIB names the NVML library to load (default libnvidia-ml.so.1).\n");
    ag_dp_usage(f);
    ag_dra_usage(f);
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
    if (*v == '\0' || *end != '\0' || errno != 0 || !(x >= lo && x <= hi))
        return false;
    *out = x;
    return true;
}

int ag_cfg_parse(ag_cfg_t *c, int argc, char **argv)
{
    static const char *const STR[] = { "listen", "backend", "node-spec", "node-name", "state-dir", "cdi-dir",
                                       "caps-root", "token-file", "sim-fail", "dev-root", "tls-cert", "tls-key",
                                       NULL };
    /* the numbers: name, range, the field */
    static const struct {
        const char *name;
        double lo, hi;
        size_t off;
        bool integer;
    } NUM[] = {
        { "op-delay", 0, 10, offsetof(ag_cfg_t, op_delay_s), false },
        { "max-body", 256, 64 << 20, offsetof(ag_cfg_t, max_body), true },
        { "max-conns", 4, 10000, offsetof(ag_cfg_t, max_conns), true },
        { "max-conns-per-ip", 1, 10000, offsetof(ag_cfg_t, max_conns_per_ip), true },
        { "header-timeout", 1, 3600, offsetof(ag_cfg_t, header_timeout_s), false },
        { "body-timeout", 1, 3600, offsetof(ag_cfg_t, body_timeout_s), false },
        { NULL, 0, 0, 0, false },
    };
    char **dst[12];
    char host[256];
    int i, k;

    memset(c, 0, sizeof(*c));
    dst[0] = &c->listen;
    dst[1] = &c->backend;
    dst[2] = &c->node_spec;
    dst[3] = &c->node_name;
    dst[4] = &c->state_dir;
    dst[5] = &c->cdi_dir;
    dst[6] = &c->caps_root;
    dst[7] = &c->token_file;
    dst[8] = &c->sim_fail;
    dst[9] = &c->dev_root;
    dst[10] = &c->tls_cert;
    dst[11] = &c->tls_key;
    c->max_body = 65536;
    c->max_conns = 64;
    c->max_conns_per_ip = 32;
    c->header_timeout_s = 10;
    c->body_timeout_s = 30;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        double x;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return -1;
        }
        if (strcmp(a, "--allow-remote") == 0) {
            c->allow_remote = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "migsched-agent: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if ((k = ag_dra_opt(c, a + 2, i + 1 < argc ? argv[i + 1] : NULL)) != 0) {
            if (k < 0)
                return 2;
            i += k - 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "migsched-agent: %s needs a value\n", a);
            return 2;
        }
        for (k = 0; STR[k] != NULL && strcmp(STR[k], a + 2) != 0; k++)
            ;
        if (STR[k] != NULL) {
            if (set_str(dst[k], argv[++i]) != 0)
                return 2;
            continue;
        }
        for (k = 0; NUM[k].name != NULL && strcmp(NUM[k].name, a + 2) != 0; k++)
            ;
        if (NUM[k].name != NULL) {
            char *field = (char *)c + NUM[k].off;

            if (!num(argv[++i], NUM[k].lo, NUM[k].hi, &x) || (NUM[k].integer && x != floor(x))) {
                fprintf(stderr, "migsched-agent: %s must be %s in [%g, %g]\n", a,
                        NUM[k].integer ? "an integer" : "a number", NUM[k].lo, NUM[k].hi);
                return 2;
            }
            if (strcmp(NUM[k].name, "max-body") == 0)
                *(long *)(void *)field = (long)x;
            else if (NUM[k].integer)
                *(int *)(void *)field = (int)x;
            else
                *(double *)(void *)field = x;
            continue;
        }
        if ((k = ag_dp_opt(c, a + 2, argv[i + 1])) != 0) {
            if (k < 0)
                return 2;
            i++;
            continue;
        }
        fprintf(stderr, "migsched-agent: unknown option '%s'\n", a);
        usage(stderr);
        return 2;
    }
    if ((c->listen == NULL && set_str(&c->listen, "127.0.0.1:7071") != 0) ||
        (c->backend == NULL && set_str(&c->backend, "nvml") != 0) ||
        (c->state_dir == NULL && set_str(&c->state_dir, "/var/lib/migsched-agent") != 0) ||
        (c->cdi_dir == NULL && set_str(&c->cdi_dir, "/var/run/cdi") != 0) ||
        (c->caps_root == NULL && set_str(&c->caps_root, "/proc/driver/nvidia/capabilities") != 0))
        return 2;
    if (c->node_name == NULL) {
        if (gethostname(host, sizeof(host)) != 0)
            snprintf(host, sizeof(host), "node");
        host[sizeof(host) - 1] = '\0';
        if (set_str(&c->node_name, host) != 0)
            return 2;
    }
    if (strcmp(c->backend, "sim") != 0 && strcmp(c->backend, "dry-run") != 0 && strcmp(c->backend, "nvml") != 0) {
        fprintf(stderr, "migsched-agent: --backend must be nvml, sim or dry-run\n");
        return 2;
    }
    return 0;
}

void ag_cfg_free(ag_cfg_t *c)
{
    free(c->listen);
    free(c->backend);
    free(c->node_spec);
    free(c->node_name);
    free(c->state_dir);
    free(c->cdi_dir);
    free(c->caps_root);
    free(c->token_file);
    free(c->sim_fail);
    free(c->dev_root);
    free(c->tls_cert);
    free(c->tls_key);
    ag_dp_cfg_free(c);
    ag_dra_cfg_free(c);
    memset(c, 0, sizeof(*c));
}

static int lock_dir(const char *dir)
{
    char path[4096];
    int fd;

    if ((size_t)snprintf(path, sizeof(path), "%s/lock", dir) >= sizeof(path))
        return -1;
    if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -2;
    }
    return fd;
}

/* FNV-1a of the node name: the sim's made-up uuids differ between nodes. */
static uint32_t salt_of(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (h & 0xffffu) << 16 | 0x8000u;
}

int main(int argc, char **argv)
{
    ag_cfg_t cfg;
    ag_t a;
    ag_http_t *http = NULL;
    ag_dp_t *dp = NULL;
    ag_dra_t *dra = NULL;
    ms_backend_cfg_t bc;
    sigset_t set;
    ms_diag_t why;
    int rc, lockfd = -1, sig;

    memset(&a, 0, sizeof(a));
    if ((rc = ag_cfg_parse(&cfg, argc, argv)) != 0) {
        ag_cfg_free(&cfg);
        return rc < 0 ? 0 : rc;
    }
    a.cfg = &cfg;
    rc = 1;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_mutex_init(&a.mu, NULL);
    if (mkdir(cfg.state_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "migsched-agent: --state-dir %s: %s\n", cfg.state_dir, strerror(errno));
        goto out;
    }
    if (mkdir(cfg.cdi_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "migsched-agent: --cdi-dir %s: %s\n", cfg.cdi_dir, strerror(errno));
        goto out;
    }
    if ((lockfd = lock_dir(cfg.state_dir)) < 0) {
        fprintf(stderr, "migsched-agent: --state-dir %s: %s\n", cfg.state_dir,
                lockfd == -2 ? "another migsched-agent uses it" : "cannot create its lock file");
        goto out;
    }
    if (ag_token_load(&a) != 0 || ag_node_init(&a) != 0)
        goto out;
    a.salt = salt_of(cfg.node_name);
    memset(&bc, 0, sizeof(bc));
    bc.kind = cfg.backend;
    bc.state_dir = cfg.state_dir;
    bc.ngpus = a.ngpus;
    bc.op_delay_s = cfg.op_delay_s;
    bc.fail = cfg.sim_fail;
    bc.gpu_geom = a.geom;
    bc.gpu_mig = a.mig;
    bc.uuid_salt = a.salt;
    if (ms_backend_open(&bc, &a.be, &why) != MS_OK) {
        if (why.file[0] != '\0')
            fprintf(stderr, "migsched-agent: --backend %s: %s line %ld: %s\n", cfg.backend, why.file, why.line,
                    why.msg);
        else
            fprintf(stderr, "migsched-agent: --backend %s: %s\n", cfg.backend, why.msg);
        goto out;
    }
    if (ag_reconcile(&a) != 0) {
        fprintf(stderr, "migsched-agent: --cdi-dir %s: cannot bring it in line with the inventory\n", cfg.cdi_dir);
        goto out;
    }
    if (ag_http_start(&a, &http) != 0)
        goto out;
    if (ag_dp_start(&a, &dp) != 0 || ag_dra_start(&a, &dra) != 0)
        goto out;
    if (cfg.allow_remote && a.token == NULL)
        ms_log("warn", "--allow-remote without --token-file: anyone who reaches the port can create and "
                        "destroy instances", NULL);
    ms_log("info", "listening", json_pack("{s:s,s:s,s:s,s:i,s:s}", "listen", cfg.listen, "backend", cfg.backend,
                                           "node", cfg.node_name, "gpus", a.ngpus, "cdi_dir", cfg.cdi_dir));
    for (;;) {
        if (sigwait(&set, &sig) != 0 || sig == SIGPIPE)
            continue;
        ms_log("info", "stopping", json_pack("{s:i}", "signal", sig));
        break;
    }
    rc = 0;
out:
    ag_dra_stop(dra);
    ag_dp_stop(dp);
    ag_http_stop(http);
    ms_backend_close(a.be);
    ag_node_free(&a);
    free(a.token);
    pthread_mutex_destroy(&a.mu);
    if (lockfd >= 0)
        close(lockfd);
    ag_cfg_free(&cfg);
    return rc;
}
