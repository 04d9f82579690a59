/* main.c - migschedd: the ms_sched scheduler as a crash-safe service.
 *
 * Start-up: settings, the state directory (locked: one daemon per
 * directory), the cluster, the backend, the store, reconciliation (loop.c),
 * then the HTTP server. The main thread then waits for signals: SIGHUP
 * reloads the token file; SIGTERM or SIGINT stop the daemon: no new
 * connections, requests in progress are answered (at most 5 s), the
 * executor finishes the op it runs, the loop commits, everything is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service/kctl.h"
#include "service/svc.h"

static int build_spec(svc_cfg_t *cfg, ms_cluster_spec_t **out)
{
    ms_cluster_spec_t *cs;
    ms_diag_t diag;
    int i;

    if (ms_cluster_spec_create(&cs) != MS_OK)
        return -1;
    for (i = 0; i < cfg->nnodes; i++) {
        const char *t = cfg->nodes[i];
        ms_status_t st;

        ms_diag_clear(&diag);
        st = t[0] == '@' ? ms_cluster_spec_read_file(cs, t + 1, 0, &diag) : ms_cluster_spec_add(cs, t, 0, &diag);
        if (st != MS_OK) {
            if (diag.file[0])
                fprintf(stderr, "migschedd: %s:%ld: %s%s%s\n", diag.file, diag.line, diag.field,
                        diag.field[0] ? ": " : "", diag.msg);
            else
                fprintf(stderr, "migschedd: --node %s: %s%s%s\n", t, diag.field, diag.field[0] ? ": " : "",
                        diag.msg[0] ? diag.msg : ms_strerror(st));
            ms_cluster_spec_destroy(cs);
            return -1;
        }
    }
    *out = cs;
    return 0;
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

static void id_prefix(char *buf, size_t len)
{
    unsigned char r[4] = { 0 };
    FILE *f = fopen("/dev/urandom", "rb");

    if (f != NULL) {
        if (fread(r, 1, sizeof(r), f) != sizeof(r))
            memset(r, 0, sizeof(r));
        fclose(f);
    }
    snprintf(buf, len, "j%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
}

/* backend agent: each GPU's agent URL (borrowed from cfg) and its index in
 * its node, from the --agent NODE=URL settings; every node needs one. */
static int agent_map(const svc_cfg_t *cfg, const ms_node_spec_t *nd, int nn, int ngpus,
                     const char ***url, int **local)
{
    int i, g, k = 0, a;

    *url = calloc((size_t)(ngpus > 0 ? ngpus : 1), sizeof(**url));
    *local = calloc((size_t)(ngpus > 0 ? ngpus : 1), sizeof(**local));
    if (*url == NULL || *local == NULL) {
        fprintf(stderr, "migschedd: out of memory\n");
        return -1;
    }
    for (i = 0; i < nn; i++) {
        size_t len = strlen(nd[i].name);
        const char *u = NULL;

        for (a = 0; a < cfg->nagents; a++)
            if (strncmp(cfg->agents[a], nd[i].name, len) == 0 && cfg->agents[a][len] == '=')
                u = cfg->agents[a] + len + 1;
        if (u == NULL) {
            fprintf(stderr, "migschedd: --backend agent: node %s has no --agent %s=URL\n", nd[i].name,
                    nd[i].name);
            return -1;
        }
        for (g = 0; g < nd[i].ngpus; g++, k++) {
            (*url)[k] = u;
            (*local)[k] = g;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    svc_cfg_t cfg;
    svc_t d;
    svc_http_t *http = NULL;
    svc_backend_cfg_t bc;
    const ms_geom_t **gpu_geom = NULL;
    bool *gpu_mig = NULL;
    const char **gpu_agent = NULL;
    int *gpu_local = NULL;
    sigset_t set;
    const char *err = "";
    int rc, lockfd = -1, sig;

    memset(&d, 0, sizeof(d));
    d.listen_fd = -1;
    if ((rc = svc_cfg_parse(&cfg, argc, argv)) != 0) {
        svc_cfg_free(&cfg);
        return rc < 0 ? 0 : rc;
    }
    d.cfg = &cfg;
    rc = 1;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);   /* every thread inherits it */
    pthread_mutex_init(&d.tmu, NULL);
    svc_metrics_init(&d.met);
    if (mkdir(cfg.state_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "migschedd: --state-dir %s: %s\n", cfg.state_dir, strerror(errno));
        goto out;
    }
    if ((lockfd = lock_dir(cfg.state_dir)) < 0) {
        fprintf(stderr, "migschedd: --state-dir %s: %s\n", cfg.state_dir,
                lockfd == -2 ? "another migschedd uses it" : "cannot create its lock file");
        goto out;
    }
    if (build_spec(&cfg, &d.spec) != 0)
        goto out;
    if (svc_token_load(&d) != 0)
        goto out;
    memset(&bc, 0, sizeof(bc));
    bc.kind = cfg.backend;
    bc.state_dir = cfg.state_dir;
    bc.ngpus = ms_cluster_spec_ngpus(d.spec);
    bc.op_delay_s = cfg.op_delay_s;
    bc.fail = cfg.sim_fail;
    {
        /* each global GPU's geometry and whether its node is MIG (nvml) */
        const ms_node_spec_t *nd = ms_cluster_spec_nodes(d.spec);
        int nn = ms_cluster_spec_nnodes(d.spec), i, g, k = 0;

        gpu_geom = calloc((size_t)(bc.ngpus > 0 ? bc.ngpus : 1), sizeof(*gpu_geom));
        gpu_mig = calloc((size_t)(bc.ngpus > 0 ? bc.ngpus : 1), sizeof(*gpu_mig));
        if (gpu_geom == NULL || gpu_mig == NULL) {
            fprintf(stderr, "migschedd: out of memory\n");
            goto out;
        }
        for (i = 0; i < nn; i++)
            for (g = 0; g < nd[i].ngpus; g++, k++) {
                gpu_geom[k] = nd[i].geom;
                gpu_mig[k] = nd[i].mode == MS_NODE_MIG;
            }
        bc.gpu_geom = gpu_geom;
        bc.gpu_mig = gpu_mig;
        if (strcmp(cfg.backend, "agent") == 0 &&
            agent_map(&cfg, nd, nn, bc.ngpus, &gpu_agent, &gpu_local) != 0)
            goto out;
        bc.gpu_agent = gpu_agent;
        bc.gpu_local = gpu_local;
        bc.agent_token_file = cfg.agent_token_file;
    }
    if (svc_backend_open(&bc, &d.be, &err) != 0) {
        fprintf(stderr, "migschedd: --backend %s: %s\n", cfg.backend, err);
        goto out;
    }
    if (svc_store_open(&d.store, cfg.state_dir) != 0) {
        fprintf(stderr, "migschedd: cannot open the store in %s\n", cfg.state_dir);
        goto out;
    }
    id_prefix(d.id_prefix, sizeof(d.id_prefix));
    d.started = svc_now();
    if (svc_ext_init(&d) != 0 || svc_ext_kube_open(&d) != 0)
        goto out_stop;
    /* the port first: a daemon that cannot have it must exit before its
     * start-up reconciles and decides anything (a second daemon would
     * otherwise act and then fail) */
    if (svc_http_listen(&d) != 0)
        goto out_stop;
    if (svc_start(&d) != 0) {
        fprintf(stderr, "migschedd: start-up failed (see the log above)\n");
        goto out_stop;
    }
    {
        char kerr[512];

        if (svc_kctl_open(&d, kerr, sizeof(kerr)) != 0) {
            fprintf(stderr, "migschedd: %s\n", kerr);
            rc = 2;
            goto out_stop;
        }
    }
    if (svc_http_start(&d, &http) != 0 || svc_ext_watch_start(&d) != 0)
        goto out_stop;
    svc_log("info", "listening", json_pack("{s:s,s:s,s:s,s:b}", "listen", cfg.listen, "backend", cfg.backend,
                                           "policy", cfg.policy, "tls", cfg.tls_cert != NULL));
    for (;;) {
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            if (svc_token_load(&d) == 0)
                svc_log("info", "SIGHUP: token file reloaded", NULL);
            continue;
        }
        if (sig == SIGPIPE)
            continue;
        svc_log("info", "stopping", json_pack("{s:i}", "signal", sig));
        break;
    }
    rc = 0;
out_stop:
    svc_kctl_close(&d);             /* a leader hands the Lease over first */
    svc_http_stop(http);
    if (d.listen_fd >= 0)
        close(d.listen_fd);
    svc_ext_watch_stop(&d);
    if (d.loop_th != 0) {
        svc_stop(&d);
    }
    svc_events_free(&d);
    ms_sched_destroy(d.sched);
    svc_jobs_free(&d.jobs);
    svc_ext_free(&d);
    svc_ext_kube_close(&d);
    if (rc == 0)
        svc_log("info", "stopped", NULL);
out:
    svc_store_close(d.store);
    svc_backend_close(d.be);
    free(gpu_geom);
    free(gpu_mig);
    free(gpu_agent);
    free(gpu_local);
    ms_cluster_spec_destroy(d.spec);
    free(d.token);
    pthread_mutex_destroy(&d.tmu);
    svc_metrics_destroy(&d.met);
    if (lockfd >= 0)
        close(lockfd);
    svc_cfg_free(&cfg);
    return rc;
}
