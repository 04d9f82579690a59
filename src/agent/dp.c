/* dp.c - the device plugin's servers and their registration with the
 * kubelet (dp.h).
 *
 * One gRPC server per resource on DIR/migsched-<id>.sock. The manager
 * thread checks once a second that each socket file is still there and
 * that the kubelet's registration socket (DIR/kubelet.sock) is the one it
 * registered with: a kubelet that starts removes every socket in DIR and
 * forgets its plugins, so a missing socket means a new server, and a new
 * kubelet.sock a new registration. A registration that fails (the kubelet
 * is down, or still holds the previous connection of this socket) is tried
 * again after 0.5 s, doubling to 10 s. Servers keep serving while the
 * kubelet is away: the kubelet's checkpoint keeps the allocations of
 * running containers, and ListAndWatch resumes when it connects again.
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

#define REGISTER_TIMEOUT_S 10.0
#define BACKOFF_MIN_S 0.5
#define BACKOFF_MAX_S 10.0

typedef struct dp_srv {
    ag_dp_t *d;
    const ag_dp_res_t *r;
    ms_rpc_server_t *srv;
    char sock[96];              /* the socket's name in DIR */
    bool registered;
    dev_t kdev;                 /* the kubelet.sock it registered with */
    ino_t kino;
    double next_try, backoff;
    long failures;
} dp_srv_t;

struct ag_dp {
    ag_t *a;
    ms_kube_t *kube;
    ag_dp_res_t *res;
    int nres;
    dp_srv_t *srv;              /* [nres] */
    pthread_t thr;
    bool thr_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
};

static const char *const OPTS[] = { "device-plugin-dir", "pod-resources-socket", "kube-api", "kube-token-file",
                                    "kube-ca", "kubeconfig", NULL };

int ag_dp_opt(ag_cfg_t *c, const char *name, const char *value)
{
    char **dst[6], *s;
    int k;

    for (k = 0; OPTS[k] != NULL && strcmp(OPTS[k], name) != 0; k++)
        ;
    if (OPTS[k] == NULL)
        return 0;
    if (c->dp == NULL && (c->dp = calloc(1, sizeof(*c->dp))) == NULL)
        return -1;
    dst[0] = &c->dp->dir;
    dst[1] = &c->dp->pod_resources;
    dst[2] = &c->dp->kube_api;
    dst[3] = &c->dp->kube_token_file;
    dst[4] = &c->dp->kube_ca;
    dst[5] = &c->dp->kubeconfig;
    if ((s = strdup(value)) == NULL)
        return -1;
    free(*dst[k]);
    *dst[k] = s;
    return 1;
}

void ag_dp_usage(FILE *f)
{
    fprintf(f, "kubelet device plugin (docs/kubernetes.md, \"Delivery\"):\n"
               "  --device-plugin-dir DIR       serve the migsched.io resources to the kubelet from DIR\n"
               "                                (its device-plugins directory, /var/lib/kubelet/device-plugins)\n"
               "  --pod-resources-socket PATH   the kubelet's pod-resources API\n"
               "                                (default /var/lib/kubelet/pod-resources/kubelet.sock)\n"
               "  --kube-api URL --kube-token-file FILE [--kube-ca FILE] | --kubeconfig FILE\n"
               "                                the API server (default: in-cluster), to read pods on this node\n");
}

void ag_dp_cfg_free(ag_cfg_t *c)
{
    if (c->dp == NULL)
        return;
    free(c->dp->dir);
    free(c->dp->pod_resources);
    free(c->dp->kube_api);
    free(c->dp->kube_token_file);
    free(c->dp->kube_ca);
    free(c->dp->kubeconfig);
    free(c->dp);
    c->dp = NULL;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the handlers (each resource's server thread) ---------------------- */

static int h_options(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    return ag_dp_options(out);
}

static int h_list(void *ctx, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    const dp_srv_t *s = ctx;

    return ag_dp_list(s->r, out);
}

static int h_preferred(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    const dp_srv_t *s = ctx;

    return ag_dp_preferred(s->r, req, len, out, msg, msglen);
}

static int h_allocate(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    const dp_srv_t *s = ctx;
    int code = ag_dp_allocate(s->r, req, len, out, msg, msglen);

    if (code != MS_RPC_OK)
        ms_log("warn", "device plugin: Allocate refused",
                json_pack("{s:s,s:i,s:s}", "resource", s->r->name, "code", code, "error", msg));
    return code;
}

static int h_prestart(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    const dp_srv_t *s = ctx;
    int code = ag_dp_prestart(s->d->a, s->d->kube, s->r, req, len, msg, msglen);

    if (code != MS_RPC_OK)
        ms_log("warn", "device plugin: PreStartContainer refused",
                json_pack("{s:s,s:i,s:s}", "resource", s->r->name, "code", code, "error", msg));
    return code;   /* PreStartContainerResponse is empty: *out stays empty */
}

static const ms_rpc_method_t METHODS[] = {
    { "/v1beta1.DevicePlugin/GetDevicePluginOptions", h_options, NULL },
    { "/v1beta1.DevicePlugin/ListAndWatch", NULL, h_list },
    { "/v1beta1.DevicePlugin/GetPreferredAllocation", h_preferred, NULL },
    { "/v1beta1.DevicePlugin/Allocate", h_allocate, NULL },
    { "/v1beta1.DevicePlugin/PreStartContainer", h_prestart, NULL },
};

/* --- the manager thread ----------------------------------------------- */

static int serve(dp_srv_t *s)
{
    char path[4200], err[512];

    ms_rpc_server_stop(s->srv);
    s->srv = NULL;
    s->registered = false;
    snprintf(path, sizeof(path), "%s/%s", s->d->a->cfg->dp->dir, s->sock);
    if (ms_rpc_server_start(path, METHODS, (int)(sizeof(METHODS) / sizeof(METHODS[0])), s, &s->srv, err,
                            sizeof(err)) != 0) {
        ms_log("error", "device plugin: cannot serve", json_pack("{s:s,s:s}", "resource", s->r->name, "error", err));
        return -1;
    }
    return 0;
}

static void try_register(dp_srv_t *s, const struct stat *kst, double now)
{
    ms_rpc_buf_t req = { NULL, 0 }, resp = { NULL, 0 };
    char target[4200], err[512];
    int code;

    if (now < s->next_try)
        return;
    snprintf(target, sizeof(target), "unix://%s/kubelet.sock", s->d->a->cfg->dp->dir);
    code = ag_dp_register_req(s->r, s->sock, &req);
    if (code == MS_RPC_OK)
        code = ms_rpc_call(target, "/v1beta1.Registration/Register", req.data, req.len, REGISTER_TIMEOUT_S, &resp,
                           err, sizeof(err));
    else
        snprintf(err, sizeof(err), "out of memory");
    ms_rpc_buf_free(&req);
    ms_rpc_buf_free(&resp);
    if (code == MS_RPC_OK) {
        s->registered = true;
        s->kdev = kst->st_dev;
        s->kino = kst->st_ino;
        s->backoff = 0;
        s->failures = 0;
        ms_log("info", "device plugin registered",
                json_pack("{s:s,s:s,s:i}", "resource", s->r->name, "socket", s->sock, "slots", s->r->count));
        return;
    }
    s->backoff = s->backoff > 0 ? s->backoff * 2 : BACKOFF_MIN_S;
    if (s->backoff > BACKOFF_MAX_S)
        s->backoff = BACKOFF_MAX_S;
    s->next_try = now + s->backoff;
    if (s->failures++ % 30 == 0)
        ms_log("warn", "device plugin: registration failed; retrying",
                json_pack("{s:s,s:s,s:f}", "resource", s->r->name, "error", err, "retry_s", s->backoff));
}

/* One round: sockets there, registrations current. */
static void tend(ag_dp_t *d)
{
    char path[4200];
    struct stat kst, st;
    bool kubelet;
    double now = now_s();
    int i;

    snprintf(path, sizeof(path), "%s/kubelet.sock", d->a->cfg->dp->dir);
    kubelet = stat(path, &kst) == 0;
    for (i = 0; i < d->nres; i++) {
        dp_srv_t *s = &d->srv[i];

        snprintf(path, sizeof(path), "%s/%s", d->a->cfg->dp->dir, s->sock);
        if (s->srv == NULL || lstat(path, &st) != 0) {
            if (s->srv != NULL)
                ms_log("info", "device plugin: socket removed (kubelet restart?); serving again",
                        json_pack("{s:s}", "resource", s->r->name));
            if (serve(s) != 0)
                continue;
        }
        if (!kubelet)
            continue;
        if (s->registered && (s->kdev != kst.st_dev || s->kino != kst.st_ino))
            s->registered = false;   /* a new kubelet */
        if (!s->registered)
            try_register(s, &kst, now);
    }
}

static void *manage(void *arg)
{
    ag_dp_t *d = arg;
    struct timespec ts;

    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        pthread_mutex_unlock(&d->mu);
        tend(d);
        pthread_mutex_lock(&d->mu);
        if (d->stop)
            break;
        ts = ms_clock_after(CLOCK_REALTIME, 0.5);
        pthread_cond_timedwait(&d->cv, &d->mu, &ts);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

int ag_dp_start(ag_t *a, ag_dp_t **out)
{
    ag_dp_cfg_t *c = a->cfg->dp;
    ms_kube_cfg_t kc;
    ag_dp_t *d;
    char err[512];
    int i;

    *out = NULL;
    if (c == NULL)
        return 0;
    if (c->dir == NULL) {
        /* the API server options alone serve the DRA driver (dra.h) */
        if (c->pod_resources == NULL)
            return 0;
        fprintf(stderr, "migsched-agent: --pod-resources-socket needs --device-plugin-dir\n");
        return -1;
    }
    if (c->pod_resources == NULL && (c->pod_resources = strdup("/var/lib/kubelet/pod-resources/kubelet.sock")) == NULL)
        return -1;
    if ((d = calloc(1, sizeof(*d))) == NULL)
        return -1;
    d->a = a;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    memset(&kc, 0, sizeof(kc));
    kc.api = c->kube_api;
    kc.token_file = c->kube_token_file;
    kc.ca_file = c->kube_ca;
    kc.kubeconfig = c->kubeconfig;
    if (ms_kube_open(&kc, &d->kube, err, sizeof(err)) != 0) {
        fprintf(stderr, "migsched-agent: the device plugin's API server: %s\n", err);
        goto fail;
    }
    if (ag_dp_resources(a, &d->res, &d->nres) != 0 ||
        (d->srv = calloc((size_t)(d->nres > 0 ? d->nres : 1), sizeof(*d->srv))) == NULL) {
        fprintf(stderr, "migsched-agent: out of memory\n");
        goto fail;
    }
    for (i = 0; i < d->nres; i++) {
        d->srv[i].d = d;
        d->srv[i].r = &d->res[i];
        snprintf(d->srv[i].sock, sizeof(d->srv[i].sock), "migsched-%s.sock", d->res[i].id);
        if (serve(&d->srv[i]) != 0) {
            fprintf(stderr, "migsched-agent: --device-plugin-dir %s: cannot serve %s there\n", c->dir,
                    d->srv[i].sock);
            goto fail;
        }
    }
    if (pthread_create(&d->thr, NULL, manage, d) != 0) {
        fprintf(stderr, "migsched-agent: cannot start the device plugin's thread\n");
        goto fail;
    }
    d->thr_started = true;
    ms_log("info", "device plugin serving", json_pack("{s:s,s:i}", "dir", c->dir, "resources", d->nres));
    *out = d;
    return 0;
fail:
    ag_dp_stop(d);
    return -1;
}

void ag_dp_stop(ag_dp_t *d)
{
    int i;

    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    if (d->thr_started)
        pthread_join(d->thr, NULL);
    if (d->srv != NULL)
        for (i = 0; i < d->nres; i++)
            ms_rpc_server_stop(d->srv[i].srv);
    ms_kube_close(d->kube);
    free(d->srv);
    free(d->res);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}
