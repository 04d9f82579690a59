/* kctl_open.c - the main thread: the control loops from migschedd's
 * settings (--leader-elect, --lease, --lease-duration, --k8s-policy and the
 * --layout-* overrides), started and stopped. Stopping a leader releases
 * the Lease (after the kctl thread ended: its state is this thread's then),
 * so a standby takes over at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/kctl_int.h"

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

/* The identity: cfg's, else $POD_NAME, else the host name and the pid. */
static void identity(svc_kctl_t *c, const svc_kctl_cfg_t *cfg)
{
    const char *id = cfg->identity ? cfg->identity : getenv("POD_NAME");
    char host[128];

    if (id && id[0]) {
        snprintf(c->id, sizeof(c->id), "%s", id);
        return;
    }
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "migschedd");
    host[sizeof(host) - 1] = '\0';
    snprintf(c->id, sizeof(c->id), "%s-%ld", host, (long)getpid());
}

/* The node layout controller and its node index; 0, or -1 with err. */
static int nodes_setup(svc_kctl_t *c, const svc_kctl_cfg_t *cfg, char *err, size_t errlen)
{
    ms_diag_t diag;
    int i;

    if (ms_nodecfg_create(&cfg->nodecfg, &c->nc, &diag) != MS_OK) {
        snprintf(err, errlen, "node layouts: %s: %s", diag.field, diag.msg);
        return -1;
    }
    for (i = 0; i < cfg->nlayouts; i++) {
        const svc_kctl_layout_t *L = &cfg->layouts[i];
        if (ms_nodecfg_add_layout(c->nc, L->name, L->model, L->prof, L->count, L->n, L->from_min,
                                  L->to_min, &diag) != MS_OK) {
            snprintf(err, errlen, "layout %s: %s: %s", L->name, diag.field, diag.msg);
            return -1;
        }
    }
    if (!(c->byname = malloc((size_t)cfg->nnodes * sizeof(*c->byname)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (i = 0; i < cfg->nnodes; i++)
        c->byname[i] = &cfg->nodes[i];
    qsort(c->byname, (size_t)cfg->nnodes, sizeof(*c->byname), svc_kctl_cmp_node);
    return 0;
}

int svc_kctl_new(const svc_kctl_cfg_t *cfg, ms_kube_t *k, svc_kctl_t **out, char *err, size_t errlen)
{
    svc_kctl_t *c;
    ms_diag_t diag;
    ms_lease_cfg_t lc;

    *out = NULL;
    if (!(c = calloc(1, sizeof(*c)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->cfg = *cfg;
    c->kube = k;
    c->clock = cfg->clock != NULL ? cfg->clock : &svc_clock_real;
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
    identity(c, cfg);
    {
        const char *fail = getenv("MIGSCHEDD_KCTL_FAIL"), *pre = "stall-before-node-write:";

        if (fail != NULL && strncmp(fail, pre, strlen(pre)) == 0)
            snprintf(c->stall_node, sizeof(c->stall_node), "%s", fail + strlen(pre));
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    atomic_init(&c->leader_until, 0.0);
    atomic_init(&c->lease_until, 0.0);
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
    if (cfg->nnodes > 0 && nodes_setup(c, cfg, err, errlen) != 0)
        goto fail;
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

/* Start the thread of a made c; on failure c is freed. */
static int run(svc_kctl_t *c, char *err, size_t errlen)
{
    if (pthread_create(&c->th, NULL, svc_kctl_main, c) != 0) {
        snprintf(err, errlen, "cannot start the control thread");
        svc_kctl_stop(c);
        return -1;
    }
    c->started = true;
    return 0;
}

int svc_kctl_start(const svc_kctl_cfg_t *cfg, ms_kube_t *k, svc_kctl_t **out, char *err, size_t errlen)
{
    svc_kctl_t *c;

    *out = NULL;
    if (svc_kctl_new(cfg, k, &c, err, errlen) != 0 || run(c, err, errlen) != 0)
        return -1;
    *out = c;
    return 0;
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

/* Stop the thread and give the Lease up (a leader hands it over at once);
 * the struct stays readable, and svc_kctl_is_leader / svc_kctl_may_act
 * answer false from here on. Idempotent. */
static void halt(svc_kctl_t *c)
{
    ms_lease_record_t w;

    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (c->started)
        pthread_join(c->th, NULL);
    c->started = false;
    atomic_store(&c->leader_until, 0.0);
    atomic_store(&c->lease_until, 0.0);
    if (c->lease && ms_lease_release(c->lease, svc_clock_wall(c->clock), &w) &&
        svc_kctl_lease_write(c, MS_LEASE_UPDATE, &w))
        ms_log("info", "lease released", json_pack("{s:s}", "identity", c->id));
    ms_lease_destroy(c->lease);
    c->lease = NULL;
}

void svc_kctl_stop(svc_kctl_t *c)
{
    if (!c)
        return;
    halt(c);
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

int svc_kctl_open(svc_t *d, int (*takeover)(void *ctx), char *err, size_t errlen)
{
    const svc_cfg_t *sc = d->cfg;
    svc_kctl_cfg_t kc;
    svc_kctl_t *c;
    ms_k8s_cfg_t *pol = NULL;
    svc_kctl_node_t *nodes = NULL;
    svc_kctl_layout_t *lays = NULL;
    char ns[256] = "migsched", name[256] = "migschedd";

    atomic_store(&d->kctl, NULL);
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
    kc.takeover = takeover;
    kc.takeover_ctx = d;
    kc.clock = d->clock;
    if (svc_kctl_new(&kc, d->kube, &c, err, errlen) != 0)
        goto fail;
    /* the strings of kc now belong to c, and before its thread runs:
     * svc_kctl_stop frees them from here on */
    c->policy = pol;
    c->own_nodes = nodes;
    c->own_layouts = lays;
    if (run(c, err, errlen) != 0)
        return -1;
    /* published whole: the lane workers (the gate), the extender's workers
     * and the HTTP threads already run and read d->kctl */
    atomic_store(&d->kctl, c);
    return 0;
fail:
    layouts_free(lays, kc.nlayouts);
    free(nodes);
    ms_k8s_cfg_free(pol);
    return -1;
}

bool svc_kctl_gate(void *ctx)
{
    const svc_t *d = ctx;

    /* with --leader-elect nothing acts before the election says so, nor
     * after it ended (svc_kctl_close) */
    const svc_kctl_t *c = atomic_load(&d->kctl);

    return !d->cfg->leader_elect || (c != NULL && svc_kctl_may_act(c));
}

/* The control thread stops and the Lease is handed over, but the struct
 * stays until svc_kctl_free: the executor's lane workers (the backend's
 * gate), the extender's workers and the HTTP threads may still read
 * d->kctl until they are stopped, and it must not be freed under them. */
void svc_kctl_close(svc_t *d)
{
    svc_kctl_t *c = atomic_load(&d->kctl);

    if (c != NULL)
        halt(c);
}

/* After every thread that reads d->kctl has stopped (main thread). */
void svc_kctl_free(svc_t *d)
{
    svc_kctl_stop(atomic_exchange(&d->kctl, NULL));
}
