/* kctl.c - migschedd's Kubernetes control loops (kctl.h): the Lease and the
 * node MIG layout controller, carried out through the API server.
 *
 * Both decisions are the library's (src/control/); this file only reads
 * what they need and writes what they say. A write that fails is logged and
 * retried at the next period: every write is idempotent (a label set twice,
 * a cordon repeated), and a Lease update carries the resourceVersion it
 * read, so of two replicas writing at once one wins and the other is told
 * 409 Conflict.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "k8sconf/k8sconf.h"
#include "migsched/lease.h"
#include "service/extender.h"
#include "service/kctl.h"
#include "service/svc.h"

#define ANNOT_CORDON "migsched.io/cordoned"
#define LABEL_CONFIG "nvidia.com/mig.config"
#define LABEL_STATE "nvidia.com/mig.config.state"

struct svc_kctl {
    svc_kctl_cfg_t cfg;
    ms_kube_t *kube;
    svc_t *d;
    bool adopted;                    /* took over bound pods in this leadership */
    ms_lease_t *lease;
    ms_nodecfg_t *nc;
    char id[MS_LEASE_ID_MAX + 1];
    char ns[64], lease_name[254];     /* cfg.ns and cfg.lease point here */
    char rv[64];                     /* the Lease's resourceVersion as read */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, started;
    bool leader;                     /* the control thread's view */
    _Atomic double leader_until;     /* monotonic; read by HTTP threads */
    double next_nodes;
    /* the node-loop's names, sorted for bsearch */
    const svc_kctl_node_t **byname;
    /* svc_kctl_open's: what cfg's pointers point into */
    ms_k8s_cfg_t *policy;
    svc_kctl_node_t *own_nodes;
    svc_kctl_layout_t *own_layouts;
};

void svc_kctl_cfg_defaults(svc_kctl_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->elect = true;
    cfg->ns = "migsched";
    cfg->lease = "migschedd";
    cfg->lease_s = 10;
    cfg->period_s = 5;
    ms_nodecfg_cfg_defaults(&cfg->nodecfg);
}

/* --- times ----------------------------------------------------------------- */

bool svc_kctl_time_parse(const char *s, double *out)
{
    struct tm tm;
    int y, mo, d, h, mi, sec, n = 0;
    double frac = 0, scale = 0.1;
    time_t t;

    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
        return false;
    s += n;
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return false;
        for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
            frac += (*s - '0') * scale;
    }
    if (strcmp(s, "Z") != 0)
        return false;                /* the API server always writes UTC */
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return false;
    t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *out = (double)t + frac;
    return true;
}

void svc_kctl_time_format(double t, char *buf, size_t len)
{
    time_t s = (time_t)floor(t);
    long us = (long)((t - floor(t)) * 1e6);
    struct tm tm;
    char base[32];

    if (us > 999999)
        us = 999999;
    gmtime_r(&s, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", base, us);
}

/* --- API helpers ------------------------------------------------------------- */

/* A request whose JSON answer is parsed; *status the HTTP status. NULL when
 * no answer came or it is not JSON. */
static json_t *api_json(svc_kctl_t *c, const char *method, const char *path, json_t *body,
                        long *status)
{
    char err[256], *resp = NULL, *b = NULL;
    json_t *j = NULL;

    *status = 0;
    if (body && !(b = json_dumps(body, JSON_COMPACT)))
        return NULL;
    if (ms_kube_request(c->kube, method, path, b, status, &resp, err, sizeof(err)) != 0) {
        svc_log("warn", "kube request failed",
                json_pack("{s:s, s:s, s:s}", "method", method, "path", path, "error", err));
    } else if (resp) {
        j = json_loads(resp, 0, NULL);
    }
    free(b);
    free(resp);
    return j;
}

/* A write; true on a 2xx. When rv is given, the object's new
 * resourceVersion goes there (the next update's precondition). */
static bool api_write(svc_kctl_t *c, const char *method, const char *path, json_t *body,
                      const char *what, char *rv, size_t rvlen)
{
    long status;
    json_t *r = api_json(c, method, path, body, &status);
    bool ok = status >= 200 && status < 300;
    const char *v = json_string_value(json_object_get(json_object_get(r, "metadata"), "resourceVersion"));

    if (ok && rv != NULL && v != NULL)
        snprintf(rv, rvlen, "%s", v);
    if (!ok && status)
        svc_log("warn", what,
                json_pack("{s:s, s:i, s:s}", "path", path, "status", (int)status, "message",
                          r && json_is_string(json_object_get(r, "message"))
                              ? json_string_value(json_object_get(r, "message")) : ""));
    json_decref(r);
    return ok;
}

/* --- the Lease --------------------------------------------------------------- */

static void lease_path(const svc_kctl_t *c, bool item, char *buf, size_t len)
{
    char ns[256], name[256];

    if (!ms_kube_escape(c->cfg.ns, ns, sizeof(ns)) || !ms_kube_escape(c->cfg.lease, name, sizeof(name))) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len, "/apis/coordination.k8s.io/v1/namespaces/%s/leases%s%s", ns, item ? "/" : "",
             item ? name : "");
}

/* Read the Lease into *r (exists false on 404). false when it could not be read. */
static bool lease_read(svc_kctl_t *c, ms_lease_record_t *r)
{
    char path[768];
    long status;
    json_t *j, *spec;
    const char *h, *rv;

    memset(r, 0, sizeof(*r));
    lease_path(c, true, path, sizeof(path));
    j = api_json(c, "GET", path, NULL, &status);
    if (status == 404) {
        json_decref(j);
        c->rv[0] = '\0';
        return true;
    }
    if (status != 200 || !j) {
        json_decref(j);
        return false;
    }
    spec = json_object_get(j, "spec");
    r->exists = true;
    h = json_string_value(json_object_get(spec, "holderIdentity"));
    snprintf(r->holder, sizeof(r->holder), "%s", h ? h : "");
    r->duration_s = (double)json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    if (!svc_kctl_time_parse(json_string_value(json_object_get(spec, "acquireTime")), &r->acquire_t))
        r->acquire_t = 0;
    if (!svc_kctl_time_parse(json_string_value(json_object_get(spec, "renewTime")), &r->renew_t))
        r->renew_t = 0;
    r->transitions = (long)json_integer_value(json_object_get(spec, "leaseTransitions"));
    rv = json_string_value(json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
    snprintf(c->rv, sizeof(c->rv), "%s", rv ? rv : "");
    json_decref(j);
    return true;
}

static json_t *lease_spec(const ms_lease_record_t *w)
{
    char acq[40], ren[40];

    svc_kctl_time_format(w->acquire_t, acq, sizeof(acq));
    svc_kctl_time_format(w->renew_t, ren, sizeof(ren));
    return json_pack("{s:s, s:i, s:s, s:s, s:I}", "holderIdentity", w->holder,
                     "leaseDurationSeconds", (int)ceil(w->duration_s), "acquireTime", acq,
                     "renewTime", ren, "leaseTransitions", (json_int_t)w->transitions);
}

static bool lease_write(svc_kctl_t *c, ms_lease_do_t what, const ms_lease_record_t *w)
{
    char path[768];
    json_t *body;
    bool ok;

    lease_path(c, what == MS_LEASE_UPDATE, path, sizeof(path));
    if (what == MS_LEASE_CREATE)
        body = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", "coordination.k8s.io/v1",
                         "kind", "Lease", "metadata", "name", c->cfg.lease, "namespace", c->cfg.ns,
                         "spec", lease_spec(w));
    else    /* a merge patch that names the version read: refused (409) if it moved */
        body = json_pack("{s:{s:s}, s:o}", "metadata", "resourceVersion", c->rv, "spec", lease_spec(w));
    if (!body)
        return false;
    ok = api_write(c, what == MS_LEASE_CREATE ? "POST" : "PATCH", path, body, "lease write refused",
                   c->rv, sizeof(c->rv));
    json_decref(body);
    return ok;
}

static void lease_round(svc_kctl_t *c)
{
    ms_lease_record_t seen, w;
    ms_lease_do_t what;
    double mono = svc_mono();
    bool was = c->leader, now_leader;

    if (lease_read(c, &seen)) {
        what = ms_lease_decide(c->lease, &seen, mono, svc_now(), &w);
        if (what != MS_LEASE_WAIT)
            ms_lease_written(c->lease, lease_write(c, what, &w), mono);
    }
    {
        double until = ms_lease_leader_until(c->lease);

        if (until <= svc_mono())
            c->adopted = false;
        else if (!c->adopted && c->d != NULL) {
            /* serve only once the pods the last leader bound are ours */
            if (svc_ext_adopt(c->d) == 0)
                c->adopted = true;
            else
                until = 0;           /* try again next round */
        } else {
            c->adopted = true;
        }
        atomic_store(&c->leader_until, c->adopted ? until : 0.0);
    }
    now_leader = svc_kctl_is_leader(c);
    c->leader = now_leader;
    if (now_leader != was)
        svc_log("info", now_leader ? "became the leader" : "no longer the leader",
                json_pack("{s:s, s:s}", "identity", c->id, "lease", c->cfg.lease));
}

/* --- the node loop ----------------------------------------------------------- */

static int cmp_node(const void *a, const void *b)
{
    return strcmp((*(const svc_kctl_node_t *const *)a)->name, (*(const svc_kctl_node_t *const *)b)->name);
}

static const svc_kctl_node_t *managed(const svc_kctl_t *c, const char *name)
{
    svc_kctl_node_t key = { name, NULL, 0 };
    const svc_kctl_node_t *kp = &key, **hit;

    if (!name)
        return NULL;
    hit = bsearch(&kp, c->byname, (size_t)c->cfg.nnodes, sizeof(*c->byname), cmp_node);
    return hit ? *hit : NULL;
}

/* Sum of a pod's requests (and limits where no request) named with prefix;
 * calls fn for each such resource name and count. Returns true when the pod
 * asks for any GPU resource (nvidia.com/ or migsched.io/). */
static bool pod_gpu(json_t *pod, void (*fn)(void *, const char *, long), void *ctx)
{
    json_t *ctrs = json_object_get(json_object_get(pod, "spec"), "containers"), *ctr;
    size_t i;
    bool gpu = false;

    json_array_foreach(ctrs, i, ctr) {
        json_t *res = json_object_get(ctr, "resources");
        json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
        json_t *set = json_object_size(req) ? req : lim, *v;
        const char *k;

        json_object_foreach(set, k, v) {
            char *end;
            long n;
            if (strncmp(k, "nvidia.com/", 11) != 0 && strncmp(k, "migsched.io/", 12) != 0)
                continue;
            gpu = true;
            if (!json_is_string(v))
                continue;
            errno = 0;
            n = strtol(json_string_value(v), &end, 10);
            if (fn && !errno && *end == '\0' && n > 0)
                fn(ctx, k, n);
        }
    }
    return gpu;
}

static bool pod_unschedulable(json_t *pod)
{
    json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions"), *cd;
    size_t i;

    json_array_foreach(conds, i, cd) {
        const char *type = json_string_value(json_object_get(cd, "type"));
        const char *st = json_string_value(json_object_get(cd, "status"));
        const char *why = json_string_value(json_object_get(cd, "reason"));
        if (type && strcmp(type, "PodScheduled") == 0)
            return st && strcmp(st, "False") == 0 && why && strcmp(why, "Unschedulable") == 0;
    }
    return false;
}

typedef struct demand_ctx {
    svc_kctl_t *c;
} demand_ctx_t;

/* An unschedulable pod's nvidia.com/mig-<profile> requests become demand
 * of the first model that has a layout with that profile. */
static void add_demand(void *ctx, const char *res, long n)
{
    svc_kctl_t *c = ((demand_ctx_t *)ctx)->c;
    const char *p = res + strlen("nvidia.com/mig-");
    int i, j, slices = 0;

    if (strncmp(res, "nvidia.com/mig-", 15) != 0)
        return;
    while (*p >= '0' && *p <= '9' && slices < 100)
        slices = slices * 10 + (*p++ - '0');
    if (*p != 'g')
        return;
    for (i = 0; i < c->cfg.nlayouts; i++) {
        const svc_kctl_layout_t *L = &c->cfg.layouts[i];
        for (j = 0; j < L->n; j++) {
            char name[64];
            size_t k;
            /* the device plugin writes '+' of a profile name as '.' */
            snprintf(name, sizeof(name), "%s", L->prof[j]);
            for (k = 0; name[k]; k++)
                if (name[k] == '+')
                    name[k] = '.';
            if (strcmp(name, res + 15) == 0) {
                if (n > 1000000)
                    n = 1000000;
                (void)ms_nodecfg_demand(c->nc, L->model, slices, (int)n);
                return;
            }
        }
    }
}

static json_t *node_patch(const ms_nodecfg_act_t *a)
{
    switch (a->kind) {
    case MS_NODECFG_CORDON:
        return json_pack("{s:{s:b}, s:{s:{s:s}}}", "spec", "unschedulable", 1, "metadata",
                         "annotations", ANNOT_CORDON, "true");
    case MS_NODECFG_UNCORDON:
        return json_pack("{s:{s:b}, s:{s:{s:n}}}", "spec", "unschedulable", 0, "metadata",
                         "annotations", ANNOT_CORDON);
    case MS_NODECFG_SET_CONFIG:
        /* clearing the state in the same patch: a "success" seen later is
         * mig-manager's answer to this label, not a stale one */
        return json_pack("{s:{s:{s:s, s:n}}}", "metadata", "labels", LABEL_CONFIG, a->config,
                         LABEL_STATE);
    case MS_NODECFG_EVICT:
        break;
    }
    return NULL;
}

static void evict_gpu_pods(svc_kctl_t *c, json_t *pods, const char *node)
{
    json_t *pod;
    size_t i;

    json_array_foreach(pods, i, pod) {
        json_t *meta = json_object_get(pod, "metadata"), *body;
        const char *nn = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        char path[1024], ens[256], ename[512];

        if (!nn || strcmp(nn, node) != 0 || !name || !ns || !pod_gpu(pod, NULL, NULL))
            continue;
        if (!ms_kube_escape(ns, ens, sizeof(ens)) || !ms_kube_escape(name, ename, sizeof(ename)))
            continue;
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", ens, ename);
        body = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "policy/v1", "kind", "Eviction",
                         "metadata", "name", name, "namespace", ns);
        if (body)
            (void)api_write(c, "POST", path, body, "eviction refused", NULL, 0);
        json_decref(body);
    }
}

static void nodes_round(svc_kctl_t *c)
{
    long status;
    json_t *nodes = NULL, *pods = NULL, *items, *it;
    int *gpu_pods = NULL;
    const ms_nodecfg_act_t *acts;
    demand_ctx_t dc = { c };
    int nacts = 0, i;
    size_t k;

    nodes = api_json(c, "GET", "/api/v1/nodes", NULL, &status);
    if (status != 200 || !nodes)
        goto out;
    pods = api_json(c, "GET", "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed",
                    NULL, &status);
    if (status != 200 || !pods)
        goto out;
    if (!(gpu_pods = calloc((size_t)c->cfg.nnodes, sizeof(*gpu_pods))))
        goto out;
    items = json_object_get(pods, "items");
    json_array_foreach(items, k, it) {
        const char *nn = json_string_value(json_object_get(json_object_get(it, "spec"), "nodeName"));
        const svc_kctl_node_t *m;
        if (nn && nn[0]) {
            if ((m = managed(c, nn)) && pod_gpu(it, NULL, NULL))
                gpu_pods[m - c->cfg.nodes]++;
        } else if (pod_unschedulable(it)) {
            pod_gpu(it, add_demand, &dc);
        }
    }
    items = json_object_get(nodes, "items");
    json_array_foreach(items, k, it) {
        json_t *meta = json_object_get(it, "metadata");
        json_t *labels = json_object_get(meta, "labels"), *ann = json_object_get(meta, "annotations");
        const svc_kctl_node_t *m = managed(c, json_string_value(json_object_get(meta, "name")));
        ms_nodecfg_obs_t o;
        ms_diag_t diag;
        if (!m)
            continue;
        memset(&o, 0, sizeof(o));
        o.name = m->name;
        o.model = m->model;
        o.ngpus = m->ngpus;
        o.config = json_string_value(json_object_get(labels, LABEL_CONFIG));
        o.config_state = json_string_value(json_object_get(labels, LABEL_STATE));
        o.unschedulable = json_is_true(json_object_get(json_object_get(it, "spec"), "unschedulable"));
        o.cordoned_by_us = json_object_get(ann, ANNOT_CORDON) != NULL;
        o.gpu_pods = gpu_pods[m - c->cfg.nodes];
        if (ms_nodecfg_observe(c->nc, &o, &diag) != MS_OK)
            svc_log("warn", "node not observed", json_pack("{s:s, s:s}", "node", m->name, "error", diag.msg));
    }
    if (ms_nodecfg_step(c->nc, svc_now(), &acts, &nacts) != MS_OK)
        goto out;
    for (i = 0; i < nacts; i++) {
        const ms_nodecfg_act_t *a = &acts[i];
        static const char *const kind[] = { "", "cordon", "set-config", "evict", "uncordon" };
        char path[600], en[512];
        json_t *body;

        if (!svc_kctl_is_leader(c))
            break;                       /* lost the Lease mid-round: stop writing */
        svc_log("info", "node layout action",
                json_pack("{s:s, s:s, s:s, s:s}", "node", a->node, "action", kind[a->kind],
                          "config", a->config ? a->config : "", "reason", a->reason));
        if (a->kind == MS_NODECFG_EVICT) {
            evict_gpu_pods(c, pods, a->node);
            continue;
        }
        if (!ms_kube_escape(a->node, en, sizeof(en)) || !(body = node_patch(a)))
            continue;
        snprintf(path, sizeof(path), "/api/v1/nodes/%s", en);
        (void)api_write(c, "PATCH", path, body, "node patch refused", NULL, 0);
        json_decref(body);
    }
out:
    free(gpu_pods);
    json_decref(nodes);
    json_decref(pods);
}

/* --- the thread --------------------------------------------------------------- */

static void *kctl_main(void *arg)
{
    svc_kctl_t *c = arg;
    double retry = c->cfg.lease_s / 5;

    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        struct timespec ts;
        double wake;

        pthread_mutex_unlock(&c->mu);
        if (c->cfg.elect)
            lease_round(c);
        if (c->nc && svc_kctl_is_leader(c) && svc_mono() >= c->next_nodes) {
            nodes_round(c);
            c->next_nodes = svc_mono() + c->cfg.period_s;
        }
        wake = c->cfg.elect ? retry : c->cfg.period_s;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)wake;
        ts.tv_nsec += (long)((wake - floor(wake)) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&c->mu);
        while (!c->stop && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int svc_kctl_start(const svc_kctl_cfg_t *cfg, ms_kube_t *k, svc_t *d, svc_kctl_t **out,
                   char *err, size_t errlen)
{
    svc_kctl_t *c;
    ms_diag_t diag;
    ms_lease_cfg_t lc;
    const char *id = cfg->identity ? cfg->identity : getenv("POD_NAME");
    int i;

    *out = NULL;
    if (!(c = calloc(1, sizeof(*c)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->cfg = *cfg;
    c->kube = k;
    c->d = d;
    if (strlen(cfg->ns) >= sizeof(c->ns) || strlen(cfg->lease) >= sizeof(c->lease_name) ||
        !cfg->ns[0] || !cfg->lease[0]) {
        snprintf(err, errlen, "--lease: a namespace of 1..63 and a name of 1..253 characters");
        free(c);
        return -1;
    }
    memcpy(c->ns, cfg->ns, strlen(cfg->ns) + 1);
    memcpy(c->lease_name, cfg->lease, strlen(cfg->lease) + 1);
    c->cfg.ns = c->ns;
    c->cfg.lease = c->lease_name;
    if (id && id[0]) {
        snprintf(c->id, sizeof(c->id), "%s", id);
    } else {
        char host[128];
        if (gethostname(host, sizeof(host)) != 0)
            snprintf(host, sizeof(host), "migschedd");
        host[sizeof(host) - 1] = '\0';
        snprintf(c->id, sizeof(c->id), "%s-%ld", host, (long)getpid());
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    atomic_init(&c->leader_until, 0.0);
    if (cfg->elect) {
        ms_lease_cfg_defaults(&lc);
        lc.identity = c->id;
        lc.duration_s = cfg->lease_s;
        lc.renew_deadline_s = cfg->lease_s * 0.7;
        lc.retry_s = cfg->lease_s / 5;
        if (ms_lease_create(&lc, &c->lease, &diag) != MS_OK) {
            snprintf(err, errlen, "--lease-duration: %s", diag.msg);
            goto fail;
        }
    }
    if (cfg->nnodes > 0) {
        if (ms_nodecfg_create(&cfg->nodecfg, &c->nc, &diag) != MS_OK) {
            snprintf(err, errlen, "node layouts: %s: %s", diag.field, diag.msg);
            goto fail;
        }
        for (i = 0; i < cfg->nlayouts; i++) {
            const svc_kctl_layout_t *L = &cfg->layouts[i];
            if (ms_nodecfg_add_layout(c->nc, L->name, L->model, L->prof, L->count, L->n, L->from_min,
                                      L->to_min, &diag) != MS_OK) {
                snprintf(err, errlen, "layout %s: %s: %s", L->name, diag.field, diag.msg);
                goto fail;
            }
        }
        if (!(c->byname = malloc((size_t)cfg->nnodes * sizeof(*c->byname)))) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        for (i = 0; i < cfg->nnodes; i++)
            c->byname[i] = &cfg->nodes[i];
        qsort(c->byname, (size_t)cfg->nnodes, sizeof(*c->byname), cmp_node);
    }
    if (pthread_create(&c->th, NULL, kctl_main, c) != 0) {
        snprintf(err, errlen, "cannot start the control thread");
        goto fail;
    }
    c->started = true;
    *out = c;
    return 0;
fail:
    ms_lease_destroy(c->lease);
    ms_nodecfg_destroy(c->nc);
    free(c->byname);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    return -1;
}

static void layouts_free(svc_kctl_layout_t *lays, int n)
{
    int i;

    for (i = 0; lays != NULL && i < n; i++) {
        free(lays[i].prof);
        free(lays[i].count);
    }
    free(lays);
}

void svc_kctl_stop(svc_kctl_t *c)
{
    ms_lease_record_t w;

    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (c->started)
        pthread_join(c->th, NULL);
    atomic_store(&c->leader_until, 0.0);
    if (c->lease && ms_lease_release(c->lease, svc_now(), &w) &&
        lease_write(c, MS_LEASE_UPDATE, &w))
        svc_log("info", "lease released", json_pack("{s:s}", "identity", c->id));
    ms_lease_destroy(c->lease);
    ms_nodecfg_destroy(c->nc);
    free(c->byname);
    free(c->own_nodes);
    layouts_free(c->own_layouts, c->cfg.nlayouts);
    ms_k8s_cfg_free(c->policy);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

/* The policy's MIG nodes and, per model, its switching layouts. */
static int policy_load(const svc_cfg_t *sc, svc_kctl_cfg_t *kc, ms_k8s_cfg_t **pol,
                       svc_kctl_node_t **nodes, svc_kctl_layout_t **lays, char *err, size_t errlen)
{
    const ms_k8s_switching_t *sw;
    ms_diag_t diag;
    int i, w, n;

    ms_diag_clear(&diag);
    if (ms_k8s_cfg_read(sc->k8s_policy, pol, &diag) != MS_OK) {
        snprintf(err, errlen, "%s:%ld: %s%s%s", diag.file[0] ? diag.file : sc->k8s_policy, diag.line,
                 diag.field, diag.field[0] ? ": " : "", diag.msg);
        return -1;
    }
    if ((sw = ms_k8s_cfg_switching(*pol)) == NULL) {
        snprintf(err, errlen, "%s: no switching: section, so there are no layouts to switch "
                 "(docs/kubernetes.md)", sc->k8s_policy);
        return -1;
    }
    n = ms_k8s_cfg_nnodes(*pol);
    *nodes = calloc((size_t)n + 1, sizeof(**nodes));
    *lays = calloc((size_t)ms_k8s_cfg_nconfigs(*pol) + 1, sizeof(**lays));
    if (*nodes == NULL || *lays == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (i = 0; i < n; i++) {
        const ms_k8s_node_t *nd = ms_k8s_cfg_node(*pol, i);
        if (nd->mode != MS_K8S_MIG)
            continue;
        (*nodes)[kc->nnodes].name = nd->name;
        (*nodes)[kc->nnodes].model = nd->model->name;
        (*nodes)[kc->nnodes].ngpus = nd->gpus;
        kc->nnodes++;
    }
    for (i = 0; i < ms_k8s_cfg_nconfigs(*pol); i++) {
        ms_k8s_config_t cf;
        svc_kctl_layout_t *L = &(*lays)[kc->nlayouts];
        bool cand = false;

        ms_k8s_cfg_config(*pol, i, &cf);
        for (w = 0; w < sw->nlayouts; w++)
            cand |= strcmp(sw->layouts[w], cf.layout) == 0;
        if (!cand || !cf.uniform || cf.model == NULL)
            continue;
        /* the profile names and counts live in the policy object's config;
         * copy the arrays' pointers out of this call's struct */
        L->name = cf.name;
        L->model = cf.model->name;
        L->n = cf.nprof;
        L->from_min = L->to_min = -1;
        for (w = 0; w < sw->nwindows; w++)
            if (strcmp(sw->windows[w].layout, cf.layout) == 0) {
                L->from_min = sw->windows[w].from_min;
                L->to_min = sw->windows[w].to_min;
            }
        {
            const char **pv = calloc((size_t)(cf.nprof > 0 ? cf.nprof : 1), sizeof(*pv));
            int *cv = calloc((size_t)(cf.nprof > 0 ? cf.nprof : 1), sizeof(*cv));
            int k;
            if (pv == NULL || cv == NULL) {
                free(pv);
                free(cv);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            for (k = 0; k < cf.nprof; k++) {
                pv[k] = cf.prof[k];
                cv[k] = cf.count[k];
            }
            L->prof = pv;
            L->count = cv;
        }
        kc->nlayouts++;
    }
    kc->nodes = *nodes;
    kc->layouts = *lays;
    kc->nodecfg.hysteresis_s = sc->layout_hysteresis_s >= 0 ? sc->layout_hysteresis_s : sw->hysteresis_s;
    kc->nodecfg.drain_timeout_s = sc->layout_drain_s >= 0 ? sc->layout_drain_s : sw->drain_timeout_s;
    kc->nodecfg.apply_timeout_s = sc->layout_apply_s >= 0 ? sc->layout_apply_s : sw->apply_timeout_s;
    kc->nodecfg.max_switches_per_hour = sc->layout_budget > 0 ? sc->layout_budget : sw->per_hour;
    kc->nodecfg.min_gain = sc->layout_min_gain >= 0 ? sc->layout_min_gain : sw->min_gain;
    kc->nodecfg.evict = sc->layout_evict || sw->evict;
    return 0;
}

int svc_kctl_open(svc_t *d, char *err, size_t errlen)
{
    const svc_cfg_t *sc = d->cfg;
    svc_kctl_cfg_t kc;
    ms_k8s_cfg_t *pol = NULL;
    svc_kctl_node_t *nodes = NULL;
    svc_kctl_layout_t *lays = NULL;
    char ns[256] = "migsched", name[256] = "migschedd";

    d->kctl = NULL;
    if (!sc->leader_elect && sc->k8s_policy == NULL)
        return 0;
    if (d->kube == NULL) {
        snprintf(err, errlen, "--leader-elect and --k8s-policy need the API server (--kube*)");
        return -1;
    }
    svc_kctl_cfg_defaults(&kc);
    kc.elect = sc->leader_elect;
    kc.lease_s = sc->lease_s;
    kc.period_s = sc->layout_period_s;
    if (sc->lease != NULL) {
        const char *sl = strchr(sc->lease, '/');
        snprintf(ns, sizeof(ns), "%.*s", (int)(sl - sc->lease), sc->lease);
        snprintf(name, sizeof(name), "%s", sl + 1);
    }
    kc.ns = ns;
    kc.lease = name;
    if (sc->k8s_policy != NULL && policy_load(sc, &kc, &pol, &nodes, &lays, err, errlen) != 0)
        goto fail;
    if (svc_kctl_start(&kc, d->kube, d, &d->kctl, err, errlen) != 0)
        goto fail;
    /* the strings of kc now belong to the control thread's copy */
    d->kctl->policy = pol;
    d->kctl->own_nodes = nodes;
    d->kctl->own_layouts = lays;
    return 0;
fail:
    layouts_free(lays, kc.nlayouts);
    free(nodes);
    ms_k8s_cfg_free(pol);
    return -1;
}

void svc_kctl_close(svc_t *d)
{
    svc_kctl_stop(d->kctl);
    d->kctl = NULL;
}

bool svc_kctl_is_leader(const svc_kctl_t *c)
{
    if (!c)
        return true;
    if (!c->cfg.elect)
        return true;
    /* the deadline, not a flag: a replica cut off from the API server stops
     * by itself, between two rounds as well */
    return svc_mono() < atomic_load(&c->leader_until);
}

const char *svc_kctl_identity(const svc_kctl_t *c)
{
    return c ? c->id : "";
}
