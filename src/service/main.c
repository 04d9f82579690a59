/* main.c - migschedd: the ms_sched scheduler as a crash-safe service. The
 * main thread.
 *
 * Start-up: settings, the state directory (locked: one daemon per
 * directory), the cluster, the backend, the store, the port, the
 * reconciliation and the core threads (lifecycle.c, restart.c), the
 * Kubernetes control loops (their takeover callback is the extender's,
 * ext_takeover.c), then the HTTP server and the pod watch. The main thread
 * then waits for signals: SIGHUP reloads the token file; SIGTERM or SIGINT
 * stop the daemon: no new connections, requests in progress are answered
 * (at most 5 s), the executor finishes the plan it runs, the loop commits,
 * everything is freed.
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

#include "service/dra.h"
#include "service/extender.h"
#include "service/kctl.h"
#include "service/svc.h"
#include "service/tenants.h"

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

/* What the backend's configuration points into (main's until the end). */
typedef struct gpu_maps {
    const ms_geom_t **geom;
    bool *mig;
    const char **agent;
    int *local;
} gpu_maps_t;

static void maps_free(gpu_maps_t *m)
{
    free(m->geom);
    free(m->mig);
    free(m->agent);
    free(m->local);
}

/* The backend --backend names, over the nodes' GPUs. */
static int open_backend(svc_t *d, const svc_cfg_t *cfg, gpu_maps_t *m)
{
    const ms_node_spec_t *nd = ms_cluster_spec_nodes(d->spec);
    int nn = ms_cluster_spec_nnodes(d->spec), i, g, k = 0;
    ms_backend_cfg_t bc;
    ms_diag_t why;

    memset(&bc, 0, sizeof(bc));
    bc.kind = cfg->backend;
    bc.state_dir = cfg->state_dir;
    bc.ngpus = ms_cluster_spec_ngpus(d->spec);
    bc.op_delay_s = cfg->op_delay_s;
    bc.fail = cfg->sim_fail;
    /* each global GPU's geometry and whether its node is MIG (nvml) */
    m->geom = calloc((size_t)(bc.ngpus > 0 ? bc.ngpus : 1), sizeof(*m->geom));
    m->mig = calloc((size_t)(bc.ngpus > 0 ? bc.ngpus : 1), sizeof(*m->mig));
    if (m->geom == NULL || m->mig == NULL) {
        fprintf(stderr, "migschedd: out of memory\n");
        return -1;
    }
    for (i = 0; i < nn; i++)
        for (g = 0; g < nd[i].ngpus; g++, k++) {
            m->geom[k] = nd[i].geom;
            m->mig[k] = nd[i].mode == MS_NODE_MIG;
        }
    bc.gpu_geom = m->geom;
    bc.gpu_mig = m->mig;
    if (strcmp(cfg->backend, "agent") == 0 && agent_map(cfg, nd, nn, bc.ngpus, &m->agent, &m->local) != 0)
        return -1;
    bc.gpu_agent = m->agent;
    bc.gpu_local = m->local;
    bc.agent_token_file = cfg->agent_token_file;
    bc.keep_foreign = true;   /* the agent's DRA driver's instances are never ours */
    if (ms_backend_open(&bc, &d->be, &why) != MS_OK) {
        if (why.file[0] != '\0' && why.line > 0)
            fprintf(stderr, "migschedd: --backend %s: %s line %ld: %s\n", cfg->backend, why.file, why.line,
                    why.msg);
        else if (why.file[0] != '\0')
            fprintf(stderr, "migschedd: --backend %s: %s: %s\n", cfg->backend, why.file, why.msg);
        else
            fprintf(stderr, "migschedd: --backend %s: %s\n", cfg->backend, why.msg);
        return -1;
    }
    return 0;
}

/* Everything before the port: 0, or 1 (printed). */
static int prepare(svc_t *d, svc_cfg_t *cfg, int *lockfd, gpu_maps_t *maps)
{
    char why[512];

    if (mkdir(cfg->state_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "migschedd: --state-dir %s: %s\n", cfg->state_dir, strerror(errno));
        return 1;
    }
    if ((*lockfd = lock_dir(cfg->state_dir)) < 0) {
        fprintf(stderr, "migschedd: --state-dir %s: %s\n", cfg->state_dir,
                *lockfd == -2 ? "another migschedd uses it" : "cannot create its lock file");
        return 1;
    }
    if (build_spec(cfg, &d->spec) != 0 || svc_token_load(d) != 0 || open_backend(d, cfg, maps) != 0)
        return 1;
    if (svc_store_open_err(&d->store, cfg->state_dir, why, sizeof(why)) != 0) {
        fprintf(stderr, "migschedd: the store %s/migschedd.db: %s\n", cfg->state_dir, why);
        return 1;
    }
    id_prefix(d->id_prefix, sizeof(d->id_prefix));
    d->started = svc_clock_wall(d->clock);
    return 0;
}

/* The port, the reconciliation and the threads; 0, or the exit status. */
static int serve(svc_t *d, svc_cfg_t *cfg, svc_http_t **http)
{
    char kerr[512];

    if (svc_init(d) != 0 || svc_ext_init(d) != 0) {
        fprintf(stderr, "migschedd: start-up failed: out of memory or locks\n");
        return 1;
    }
    if (svc_ext_kube_open(d) != 0)   /* says why */
        return 1;
    /* the port first: a daemon that cannot have it must exit before its
     * start-up reconciles and decides anything (a second daemon would
     * otherwise act and then fail) */
    if (svc_http_listen(d) != 0)
        return 1;
    /* a standby never acts on the backend: every op passes the Lease */
    if (cfg->leader_elect)
        ms_backend_set_gate(d->be, svc_kctl_gate, d);
    if (svc_start(d) != 0) {   /* it logs the step that failed, and the step itself why */
        if (d->start_why[0] != '\0')
            fprintf(stderr, "migschedd: start-up refused: %s\n", d->start_why);
        else
            fprintf(stderr, "migschedd: start-up failed (see the log above)\n");
        return 1;
    }
    if (svc_kctl_open(d, svc_ext_takeover, kerr, sizeof(kerr)) != 0) {
        fprintf(stderr, "migschedd: %s\n", kerr);
        return 2;
    }
    if (svc_http_start(d, http) != 0)   /* says why */
        return 1;
    if (svc_ext_watch_start(d) != 0) {
        fprintf(stderr, "migschedd: start-up failed: cannot start the pod watch thread\n");
        return 1;
    }
    ms_log("info", "listening", json_pack("{s:s,s:s,s:s,s:b}", "listen", cfg->listen, "backend", cfg->backend,
                                          "policy", cfg->policy, "tls", cfg->tls_cert != NULL));
    return 0;
}

/* SIGHUP: the configuration's tenants read again and handed to the loop;
 * a bad file keeps the old set and says why. */
static void reload_tenants(svc_t *d)
{
    svc_tenset_t *ts = calloc(1, sizeof(*ts));
    char why[512];

    if (ts == NULL)
        ms_log("error", "SIGHUP: out of memory; the tenants stay", NULL);
    else if (svc_cfg_tenants(d->cfg, &ts->ts, &ts->half_life_s, why, sizeof(why)) != 0)
        ms_log("error", "SIGHUP: the configuration's tenants are not usable; the previous ones stay",
               json_pack("{s:s}", "why", why));
    else
        svc_tenants_reload(d, ts);
    free(ts);
}

static void wait_signals(svc_t *d, const sigset_t *set)
{
    int sig;

    for (;;) {
        if (sigwait(set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            if (svc_token_load(d) == 0)
                ms_log("info", "SIGHUP: token file reloaded", NULL);
            if (d->sched != NULL)   /* not in --dra mode: its scheduler has no tenants */
                reload_tenants(d);
            continue;
        }
        if (sig == SIGPIPE)
            continue;
        ms_log("info", "stopping", json_pack("{s:i}", "signal", sig));
        return;
    }
}

/* --dra mode (dra_open.c): no nodes, backend or store of its own. */
static int dra_main(svc_t *d, const sigset_t *set)
{
    svc_http_t *http = NULL;
    int rc = svc_dra_serve(d, &http);

    if (rc == 0)
        wait_signals(d, set);
    svc_dra_stop(d, http);
    if (d->listen_fd >= 0)
        close(d->listen_fd);
    if (d->inited) {
        svc_fini(d);
        svc_ext_free(d);
    }
    if (rc == 0)
        ms_log("info", "stopped", NULL);
    return rc;
}

int main(int argc, char **argv)
{
    svc_cfg_t cfg;
    svc_t d;
    svc_http_t *http = NULL;
    gpu_maps_t maps;
    sigset_t set;
    int rc, lockfd = -1;

    memset(&d, 0, sizeof(d));
    memset(&maps, 0, sizeof(maps));
    d.listen_fd = -1;
    d.clock = &svc_clock_real;
    if ((rc = svc_cfg_parse(&cfg, argc, argv)) != 0) {
        svc_cfg_free(&cfg);
        return rc < 0 ? 0 : rc;
    }
    d.cfg = &cfg;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);   /* every thread inherits it */
    pthread_mutex_init(&d.tmu, NULL);
    svc_metrics_init(&d.met);
    if (svc_dra_on(&cfg)) {
        rc = dra_main(&d, &set);
    } else if ((rc = prepare(&d, &cfg, &lockfd, &maps)) == 0 && (rc = serve(&d, &cfg, &http)) == 0) {
        wait_signals(&d, &set);
        rc = 0;
    }
    if (d.inited) {
        atomic_store(&d.stopping, true);   /* a loop that cannot store gives up what it holds */
        svc_kctl_close(&d);             /* a leader hands the Lease over first */
        svc_http_stop(http);
        if (d.listen_fd >= 0)
            close(d.listen_fd);
        svc_ext_watch_stop(&d);
        svc_stop(&d);
        svc_fini(&d);
        svc_ext_free(&d);
        svc_ext_kube_close(&d);
        svc_kctl_free(&d);              /* no thread reads d->kctl any more */
        if (rc == 0)
            ms_log("info", "stopped", NULL);
    }
    svc_store_close(d.store);
    ms_backend_close(d.be);
    maps_free(&maps);
    ms_cluster_spec_destroy(d.spec);
    free(d.token);
    pthread_mutex_destroy(&d.tmu);
    svc_metrics_destroy(&d.met);
    if (lockfd >= 0)
        close(lockfd);
    svc_cfg_free(&cfg);
    return rc;
}
