/* dra.c - the DRA driver's options, its two gRPC servers and their
 * sockets (dra.h).
 *
 *   DIR_PLUGINS/<driver>/dra.sock       the DRA service (dra/v1:
 *                                       NodePrepareResources,
 *                                       NodeUnprepareResources)
 *   DIR_REGISTRY/<driver>-reg.sock      the Registration service the
 *                                       kubelet's plugin watcher calls
 *                                       (GetInfo, NotifyRegistrationStatus)
 * The kubelet's plugin watcher registers every socket it finds in its
 * plugins_registry directory, at its own start too, so a restarted kubelet
 * finds the driver again by itself. The manager thread checks every 0.5 s
 * that both socket files are still the ones this process made, and serves
 * a removed one again (the watcher then sees a new socket and registers it
 * anew). A clean stop removes the registration socket first: the kubelet
 * deregisters the driver, and wipes its slices 30 s later unless it is
 * back (--dra-cleanup deletes them at once).
 *
 * Threads: the options, start and stop on main; h_info and h_status on the
 * registration server's thread, h_prepare and h_unprepare (and get_claim)
 * on the DRA service's; manage() on the manager thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/daemon.h"
#include "agent/dp.h"
#include "agent/dra.h"

#define PREP_PATH "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
#define UNPREP_PATH "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
#define SOCK_MAX 107                       /* sun_path */

typedef struct dra_srv {
    const char *what;
    char path[SOCK_MAX + 1];
    const ms_rpc_method_t *m;
    int nm;
    ms_rpc_server_t *srv;
    dev_t dev;
    ino_t ino;
} dra_srv_t;

struct ag_dra {
    ag_t *a;
    ms_kube_t *kube;
    ag_dra_pub_t *pub;
    ag_dra_ctx_t ctx;
    dra_srv_t reg, svc;
    pthread_t thr;
    bool thr_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
};

/* --- options -------------------------------------------------------------- */

static ag_dra_cfg_t *cfg_of(ag_cfg_t *c)
{
    if (c->dra == NULL && (c->dra = calloc(1, sizeof(*c->dra))) != NULL)
        c->dra->resync_s = 60;
    return c->dra;
}

static int set(char **dst, const char *v)
{
    char *s = strdup(v);

    if (s == NULL)
        return -1;
    free(*dst);
    *dst = s;
    return 0;
}

/* A driver name: a DNS subdomain of at most 63 characters, and never
 * NVIDIA's (a GPU is managed by one driver only). */
static bool driver_ok(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > 63 || (n >= 10 && strcmp(s + n - 10, "nvidia.com") == 0))
        return false;
    for (i = 0; i < n; i++) {
        char c = s[i];
        bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

        if (!an && c != '-' && c != '.')
            return false;
        if (!an && (i == 0 || i == n - 1 || s[i - 1] == '.' || s[i - 1] == '-'))
            return false;
    }
    return true;
}

int ag_dra_opt(ag_cfg_t *c, const char *name, const char *value)
{
    ag_dra_cfg_t *d;
    char *end;

    if (strncmp(name, "dra", 3) != 0 || (name[3] != '\0' && name[3] != '-'))
        return 0;
    if ((d = cfg_of(c)) == NULL)
        return -1;
    if (strcmp(name, "dra") == 0)
        return d->on = true, 1;
    if (strcmp(name, "dra-cleanup") == 0)
        return d->cleanup = true, 1;
    if (value == NULL) {
        fprintf(stderr, "migsched-agent: --%s needs a value\n", name);
        return -1;
    }
    if (strcmp(name, "dra-driver") == 0) {
        if (!driver_ok(value)) {
            fprintf(stderr, "migsched-agent: --dra-driver '%s': a DNS subdomain of at most 63 characters, and "
                            "not NVIDIA's (a GPU has one driver)\n", value);
            return -1;
        }
        return set(&d->driver, value) == 0 ? 2 : -1;
    }
    if (strcmp(name, "dra-plugins-dir") == 0)
        return set(&d->plugins_dir, value) == 0 ? 2 : -1;
    if (strcmp(name, "dra-registry-dir") == 0)
        return set(&d->registry_dir, value) == 0 ? 2 : -1;
    if (strcmp(name, "dra-resync") == 0) {
        errno = 0;
        d->resync_s = strtod(value, &end);
        if (*value == '\0' || *end != '\0' || errno != 0 || !(d->resync_s >= 1 && d->resync_s <= 3600)) {
            fprintf(stderr, "migsched-agent: --dra-resync must be seconds in [1, 3600]\n");
            return -1;
        }
        return 2;
    }
    return 0;
}

void ag_dra_usage(FILE *f)
{
    fprintf(f, "Kubernetes DRA driver (docs/dra.md):\n"
               "  --dra                       publish the GPUs as ResourceSlices and serve the kubelet's DRA\n"
               "                              plugin API (the API server options above apply)\n"
               "  --dra-driver NAME           the driver's name (default " AG_DRA_DRIVER ")\n"
               "  --dra-plugins-dir DIR       the DRA socket is DIR/NAME/dra.sock (default /var/lib/kubelet/plugins)\n"
               "  --dra-registry-dir DIR      the kubelet's plugin registry (default /var/lib/kubelet/plugins_registry)\n"
               "  --dra-resync S              re-read the slices at least every S seconds (default 60)\n"
               "  --dra-cleanup               delete this node's slices of the driver on a clean stop\n");
}

void ag_dra_cfg_free(ag_cfg_t *c)
{
    if (c->dra == NULL)
        return;
    free(c->dra->driver);
    free(c->dra->plugins_dir);
    free(c->dra->registry_dir);
    free(c->dra);
    c->dra = NULL;
}

/* --- the handlers -------------------------------------------------------- */

static int h_info(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    ag_dra_t *d = ctx;

    if (ag_dra_info_resp(d->ctx.driver, d->svc.path, out) != MS_RPC_OK) {
        snprintf(msg, msglen, "out of memory");
        return MS_RPC_INTERNAL;
    }
    return MS_RPC_OK;
}

static int h_status(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    ag_dra_t *d = ctx;
    char err[512];
    bool ok;

    if (ag_dra_status_decode(req, len, &ok, err, sizeof(err)) != 0) {
        snprintf(msg, msglen, "RegistrationStatus: not a valid message");
        return MS_RPC_INVALID_ARGUMENT;
    }
    if (ok)
        ms_log("info", "dra: registered with the kubelet",
                json_pack("{s:s,s:s}", "driver", d->ctx.driver, "endpoint", d->svc.path));
    else
        ms_log("error", "dra: the kubelet refused the registration",
                json_pack("{s:s,s:s}", "driver", d->ctx.driver, "error", err));
    return MS_RPC_OK;   /* RegistrationStatusResponse is empty */
}

static int serve_claims(ag_dra_t *d, const uint8_t *req, size_t len, bool prepare, ms_rpc_buf_t *out, char *msg,
                        size_t msglen)
{
    ag_dra_ref_t *refs = NULL;
    ag_dra_answer_t *ans;
    int n = 0, i, code;

    if ((code = ag_dra_refs_decode(req, len, prepare, &refs, &n, msg, msglen)) != MS_RPC_OK)
        return code;
    if ((ans = calloc((size_t)(n > 0 ? n : 1), sizeof(*ans))) == NULL) {
        free(refs);
        snprintf(msg, msglen, "out of memory");
        return MS_RPC_INTERNAL;
    }
    for (i = 0; i < n; i++) {
        if (prepare)
            ag_dra_prepare(&d->ctx, &refs[i], &ans[i]);
        else
            ag_dra_unprepare(&d->ctx, &refs[i], &ans[i]);
    }
    code = prepare ? ag_dra_prepare_resp(ans, n, out) : ag_dra_unprepare_resp(ans, n, out);
    if (code != MS_RPC_OK)
        snprintf(msg, msglen, "out of memory");
    free(ans);
    free(refs);
    return code;
}

static int h_prepare(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    return serve_claims(ctx, req, len, true, out, msg, msglen);
}

static int h_unprepare(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    return serve_claims(ctx, req, len, false, out, msg, msglen);
}

static const ms_rpc_method_t REG[] = {
    { "/pluginregistration.Registration/GetInfo", h_info, NULL },
    { "/pluginregistration.Registration/NotifyRegistrationStatus", h_status, NULL },
};
static const ms_rpc_method_t SVC[] = {
    { PREP_PATH, h_prepare, NULL },
    { UNPREP_PATH, h_unprepare, NULL },
};

/* The claim from the API server (the DRA service's thread). */
static int get_claim(void *kctx, const char *ns, const char *name, char **json, char *why, size_t whylen)
{
    char ens[200], ename[800], path[1200], err[256];
    long status = 0;

    *json = NULL;
    if (!ms_kube_escape(ns, ens, sizeof(ens)) || !ms_kube_escape(name, ename, sizeof(ename))) {
        snprintf(why, whylen, "name too long");
        return -1;
    }
    snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ens, ename);
    if (ms_kube_request(kctx, "GET", path, NULL, &status, json, err, sizeof(err)) != 0) {
        snprintf(why, whylen, "the API server did not answer: %s", err);
        return -1;
    }
    if (status == 200 && *json != NULL)
        return 0;
    free(*json);
    *json = NULL;
    if (status == 404)
        return 1;
    snprintf(why, whylen, "the API server answered %ld", status);
    return -1;
}

/* --- sockets -------------------------------------------------------------- */

static int serve(ag_dra_t *d, dra_srv_t *s)
{
    char err[512];
    struct stat st;

    ms_rpc_server_stop(s->srv);
    s->srv = NULL;
    if (ms_rpc_server_start(s->path, s->m, s->nm, d, &s->srv, err, sizeof(err)) != 0) {
        ms_log("error", "dra: cannot serve", json_pack("{s:s,s:s,s:s}", "socket", s->what, "path", s->path, "error", err));
        return -1;
    }
    if (lstat(s->path, &st) == 0) {
        s->dev = st.st_dev;
        s->ino = st.st_ino;
    }
    return 0;
}

/* Is s's socket file still the one it made? */
static bool intact(const dra_srv_t *s)
{
    struct stat st;

    return s->srv != NULL && lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino;
}

static void *manage(void *arg)
{
    ag_dra_t *d = arg;
    struct timespec ts;

    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        dra_srv_t *order[2] = { &d->svc, &d->reg };   /* the endpoint before its registration */
        int i;

        pthread_mutex_unlock(&d->mu);
        for (i = 0; i < 2; i++)
            if (!intact(order[i])) {
                ms_log("warn", "dra: socket gone; serving it again",
                        json_pack("{s:s,s:s}", "socket", order[i]->what, "path", order[i]->path));
                (void)serve(d, order[i]);
            }
        pthread_mutex_lock(&d->mu);
        if (d->stop)
            break;
        ts = ms_clock_after(CLOCK_REALTIME, 0.5);
        pthread_cond_timedwait(&d->cv, &d->mu, &ts);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

static int sock_path(char *buf, const char *dir, const char *a, const char *b, const char *what)
{
    int k = snprintf(buf, SOCK_MAX + 1, "%s/%s%s", dir, a, b);

    if (k > 0 && k <= SOCK_MAX)
        return 0;
    fprintf(stderr, "migsched-agent: the DRA %s socket %s/%s%s is longer than a unix socket path may be (%d)\n", what,
            dir, a, b, SOCK_MAX);
    return -1;
}

static int mkdirs(const char *path)
{
    char buf[4096];
    size_t i, n = strlen(path);

    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, path, n + 1);
    for (i = 1; i <= n; i++)
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];

            buf[i] = '\0';
            if (mkdir(buf, 0750) != 0 && errno != EEXIST)
                return -1;
            buf[i] = c;
        }
    return 0;
}

int ag_dra_start(ag_t *a, ag_dra_t **out)
{
    ag_dra_cfg_t *c = a->cfg->dra;
    ag_dp_cfg_t *kc = a->cfg->dp;
    ms_kube_cfg_t k;
    ag_dra_t *d;
    char err[512], dir[4096];
    const char *pdir, *rdir;

    *out = NULL;
    if (c == NULL)
        return 0;
    if (!c->on) {
        fprintf(stderr, "migsched-agent: the --dra-* options need --dra\n");
        return -1;
    }
    if (c->driver == NULL && set(&c->driver, AG_DRA_DRIVER) != 0)
        return -1;
    pdir = c->plugins_dir != NULL ? c->plugins_dir : "/var/lib/kubelet/plugins";
    rdir = c->registry_dir != NULL ? c->registry_dir : "/var/lib/kubelet/plugins_registry";
    if ((d = calloc(1, sizeof(*d))) == NULL)
        return -1;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    d->a = a;
    d->svc.what = "DRA service";
    d->svc.m = SVC;
    d->svc.nm = (int)(sizeof(SVC) / sizeof(SVC[0]));
    d->reg.what = "registration";
    d->reg.m = REG;
    d->reg.nm = (int)(sizeof(REG) / sizeof(REG[0]));
    if (sock_path(d->svc.path, pdir, c->driver, "/dra.sock", "service") != 0 ||
        sock_path(d->reg.path, rdir, c->driver, "-reg.sock", "registration") != 0)
        goto fail;
    snprintf(dir, sizeof(dir), "%s/%s", pdir, c->driver);
    if (mkdirs(dir) != 0 || mkdirs(rdir) != 0) {
        fprintf(stderr, "migsched-agent: cannot make the DRA socket directories %s, %s: %s\n", dir, rdir,
                strerror(errno));
        goto fail;
    }
    memset(&k, 0, sizeof(k));
    if (kc != NULL) {
        k.api = kc->kube_api;
        k.token_file = kc->kube_token_file;
        k.ca_file = kc->kube_ca;
        k.kubeconfig = kc->kubeconfig;
    }
    if (ms_kube_open(&k, &d->kube, err, sizeof(err)) != 0) {
        fprintf(stderr, "migsched-agent: the DRA driver's API server: %s\n", err);
        goto fail;
    }
    d->ctx.a = a;
    d->ctx.driver = c->driver;
    d->ctx.pool = a->cfg->node_name;
    d->ctx.get_claim = get_claim;
    d->ctx.kctx = d->kube;
    if (ag_dra_x_claim_specs_sync(a) != 0)
        ms_log("error", "dra: the claims' CDI specs could not be brought in line with the inventory",
                json_pack("{s:s}", "dir", a->cfg->cdi_dir));
    if (serve(d, &d->svc) != 0 || serve(d, &d->reg) != 0) {
        fprintf(stderr, "migsched-agent: cannot serve the DRA sockets %s, %s\n", d->svc.path, d->reg.path);
        goto fail;
    }
    if (ag_dra_pub_start(a, d->kube, c->driver, c->resync_s, &d->pub) != 0) {
        fprintf(stderr, "migsched-agent: cannot start the DRA publisher\n");
        goto fail;
    }
    if (pthread_create(&d->thr, NULL, manage, d) != 0) {
        fprintf(stderr, "migsched-agent: cannot start the DRA driver's thread\n");
        goto fail;
    }
    d->thr_on = true;
    ms_log("info", "dra: serving", json_pack("{s:s,s:s,s:s,s:s}", "driver", c->driver, "pool", a->cfg->node_name,
                                              "endpoint", d->svc.path, "registration", d->reg.path));
    *out = d;
    return 0;
fail:
    ag_dra_stop(d);
    return -1;
}

void ag_dra_stop(ag_dra_t *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    if (d->thr_on)
        pthread_join(d->thr, NULL);
    ms_rpc_server_stop(d->reg.srv);   /* the kubelet deregisters the driver first */
    ms_rpc_server_stop(d->svc.srv);
    ag_dra_pub_stop(d->pub, d->a->cfg->dra->cleanup);
    ms_kube_close(d->kube);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}
