/* dra_open.c - the main thread's part of --dra mode: its options (for
 * config.c), the DRA state, its threads started and stopped in order, and
 * the takeover callback that kctl's thread calls on becoming the leader.
 *
 * Start: the API client, the DRA loop, the writers, the webhook worker,
 * the watches, leader election (--leader-elect; its takeover rebuilds the
 * DRA state and waits for the loop to have done it), the HTTP front (the
 * webhook at /dra/webhook over --tls-cert/--tls-key). The core's loop
 * never starts: /v1/ answers 503. Stop, in the reverse order: the Lease
 * released, the HTTP front, the watches, the webhook worker, the loop (it
 * takes what was posted), then the writers finish what is queued.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/dra_int.h"
#include "service/kctl.h"

/* --- options ----------------------------------------------------------------------- */

bool svc_dra_on(const svc_cfg_t *c)
{
    return c->dra != NULL && c->dra->on;
}

static svc_dra_cfg_t *cfg_of(svc_cfg_t *c)
{
    if (c->dra == NULL && (c->dra = calloc(1, sizeof(*c->dra))) != NULL) {
        c->dra->expire_s = 120;
        c->dra->fence = true;
        c->dra->retry_s = 2;
        c->dra->hook_timeout_s = 3;
    }
    return c->dra;
}

void svc_dra_usage(FILE *f)
{
    fprintf(f, "  --dra                  be the placement brain for Kubernetes DRA (with --kube*; no --node):\n"
               "                         watch slices, classes, claims and pods, gate pods at admission\n"
               "                         (POST /dra/webhook), allocate MIG devices, fence kube-scheduler (docs/dra.md)\n"
               "  --dra-driver NAME      a DRA driver whose devices migschedd allocates; repeat (default\n"
               "                         gpu.nvidia.com and mig.migsched.io)\n"
               "  --dra-expire S         clear an allocation no pod reserved after S s (default 120), 5..86400\n"
               "  --dra-fence BOOL       a DeviceTaintRule per driver keeps kube-scheduler off its devices (default true)\n"
               "  --dra-retry S          a pod whose write failed is tried again after S s (default 2), 0.1..600\n"
               "  --dra-webhook-timeout S  the webhook answers within S s of the request (default 3; below the\n"
               "                         webhook's timeoutSeconds); late, the pod is admitted unchanged, 0.05..30\n");
}

int svc_dra_cfg_set(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen)
{
    svc_dra_cfg_t *d = cfg_of(c);
    char *end;
    double x;

    if (d == NULL)
        return -1;
    if (strcmp(k, "dra") == 0 || strcmp(k, "dra-fence") == 0) {
        bool *b = k[3] == '\0' ? &d->on : &d->fence;

        if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0)
            *b = true;
        else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0)
            *b = false;
        else {
            snprintf(msg, mlen, "%s must be true or false", k);
            return -1;
        }
        return 0;
    }
    if (strcmp(k, "dra-driver") == 0) {
        size_t i, n = strlen(v);

        for (i = 0; i < n; i++)
            if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '-' || v[i] == '.'))
                break;
        if (n == 0 || n > 63 || i < n) {
            snprintf(msg, mlen, "dra-driver must be a driver name (a DNS subdomain of at most 63 characters)");
            return -1;
        }
        if (d->ndrivers == SVC_DRA_MAX_DRIVERS) {
            snprintf(msg, mlen, "dra-driver: at most %d drivers", SVC_DRA_MAX_DRIVERS);
            return -1;
        }
        return (d->drivers[d->ndrivers] = strdup(v)) == NULL ? -1 : (d->ndrivers++, 0);
    }
    if (strcmp(k, "dra-expire") == 0 || strcmp(k, "dra-retry") == 0) {
        bool exp = k[4] == 'e';

        x = strtod(v, &end);
        if (*v == '\0' || *end != '\0' || !isfinite(x) || x < (exp ? 5 : 0.1) || x > (exp ? 86400 : 600)) {
            snprintf(msg, mlen, "%s must be seconds in [%s]", k, exp ? "5, 86400" : "0.1, 600");
            return -1;
        }
        *(exp ? &d->expire_s : &d->retry_s) = x;
        return 0;
    }
    if (strcmp(k, "dra-webhook-timeout") == 0) {
        x = strtod(v, &end);
        if (*v == '\0' || *end != '\0' || !isfinite(x) || x < 0.05 || x > 30) {
            snprintf(msg, mlen, "%s must be seconds in [0.05, 30]", k);
            return -1;
        }
        d->hook_timeout_s = x;
        return 0;
    }
    snprintf(msg, mlen, "unknown setting '%s'", k);
    return -1;
}

void svc_dra_cfg_free(svc_cfg_t *c)
{
    int i;

    if (c->dra == NULL)
        return;
    for (i = 0; i < c->dra->ndrivers; i++)
        free(c->dra->drivers[i]);
    free(c->dra);
    c->dra = NULL;
}

/* --- the state ---------------------------------------------------------------------- */

/* The tests' failpoints (svc_dra_t.die_before_ungate, die_between_writes,
 * stall_prefix, stall_status_prefix) from MIGSCHEDD_DRA_FAIL:
 * "before-ungate", "between-writes", "hook-stall:PREFIX",
 * "stall-before-status:PREFIX", comma separated; anything else is ignored. */
static void failpoints(svc_dra_t *x, const char *spec)
{
    while (spec != NULL && *spec != '\0') {
        size_t n = strcspn(spec, ",");

        if (n == 13 && strncmp(spec, "before-ungate", n) == 0)
            x->die_before_ungate = true;
        else if (n == 14 && strncmp(spec, "between-writes", n) == 0)
            x->die_between_writes = true;
        else if (n > 11 && n - 11 < sizeof(x->stall_prefix) && strncmp(spec, "hook-stall:", 11) == 0)
            snprintf(x->stall_prefix, sizeof(x->stall_prefix), "%.*s", (int)(n - 11), spec + 11);
        else if (n > 20 && n - 20 < sizeof(x->stall_status_prefix) && strncmp(spec, "stall-before-status:", 20) == 0)
            snprintf(x->stall_status_prefix, sizeof(x->stall_status_prefix), "%.*s", (int)(n - 20), spec + 20);
        spec += n + (spec[n] == ',');
    }
}

svc_dra_t *dra_new(svc_t *d, const svc_dra_cfg_t *cfg)
{
    svc_dra_t *x = calloc(1, sizeof(*x));
    const char *id = getenv("POD_NAME");
    char host[128];

    if (x == NULL)
        return NULL;
    x->d = d;
    x->cfg = cfg;
    failpoints(x, getenv("MIGSCHEDD_DRA_FAIL"));
    if (svc_queue_init(&x->q) != 0 || svc_queue_init(&x->wq) != 0 || svc_queue_init(&x->hq) != 0 ||
        dra_store_init(x) != 0) {
        free(x);
        return NULL;
    }
    if (id != NULL && id[0] != '\0')
        snprintf(x->identity, sizeof(x->identity), "%s", id);
    else {
        if (gethostname(host, sizeof(host)) != 0)
            snprintf(host, sizeof(host), "migschedd");
        host[sizeof(host) - 1] = '\0';
        snprintf(x->identity, sizeof(x->identity), "%.100s-%ld", host, (long)getpid());
    }
    return x;
}

void dra_free(svc_dra_t *x)
{
    svc_qlink_t *l, *next;
    int i;

    if (x == NULL)
        return;
    for (l = svc_queue_drain(&x->q); l != NULL; l = next) {
        dra_msg_t *m = SVC_QITEM(l, dra_msg_t, link);

        next = l->next;
        if (m->waiter != NULL)
            dra_msg_answer(m);   /* a caller that left (every other has returned by now) */
        else
            dra_msg_free(m);
    }
    for (l = svc_queue_drain(&x->wq); l != NULL; l = next) {
        next = l->next;
        dra_work_free(SVC_QITEM(l, dra_work_t, link));
    }
    dra_sched_drop(x);
    dra_map_free(&x->map);
    dra_store_fini(x);
    for (i = 0; x->retry != NULL && x->retry[i] != NULL; i++)
        free(x->retry[i]);
    free(x->retry);
    free(x->started);
    free(x->st.lat);
    svc_queue_destroy(&x->q);
    svc_queue_destroy(&x->wq);
    svc_queue_destroy(&x->hq);
    free(x);
}

/* kctl's thread, on becoming the leader: the loop rebuilds everything
 * from what the watches delivered; 0 once it has (kctl serves then), -1
 * to be asked again (not every kind listed yet). */
static int takeover(void *ctx)
{
    svc_t *d = ctx;
    dra_msg_t *m = calloc(1, sizeof(*m));
    int rc;

    if (m == NULL)
        return -1;
    m->kind = DRA_M_TAKEOVER;
    m->okind = -1;
    rc = dra_call(d->dra, m) == 0 ? m->rc : -1;
    dra_msg_free(m);
    return rc;
}

/* --- start and stop ------------------------------------------------------------------ */

static int start_threads(svc_t *d, svc_dra_t *x)
{
    int i, k;

    if (pthread_create(&x->loop_th, NULL, dra_loop_main, x) != 0)
        return -1;
    x->loop_running = true;
    for (i = 0; i < 2; i++) {
        if (pthread_create(&x->wth[i], NULL, dra_write_main, x) != 0)
            return -1;
        x->nwriters++;
    }
    if (pthread_create(&x->hth, NULL, dra_hook_main, x) != 0)
        return -1;
    x->hook_running = true;
    for (k = 0; k < DRA_K_N; k++)
        if (dra_watch_start(x, k) != 0)
            return -1;
    (void)d;
    return 0;
}

int svc_dra_serve(svc_t *d, svc_http_t **http)
{
    svc_cfg_t *cfg = d->cfg;
    char kerr[512];

    if (cfg->dra->ndrivers == 0 && ((cfg->dra->drivers[0] = strdup("gpu.nvidia.com")) == NULL ||
                                    (cfg->dra->drivers[1] = strdup("mig.migsched.io")) == NULL))
        return 1;
    if (cfg->dra->ndrivers == 0)
        cfg->dra->ndrivers = 2;
    if (svc_init(d) != 0 || svc_events_init(d, 1) != 0 || svc_ext_init(d) != 0 || svc_ext_kube_open(d) != 0)
        return 1;
    /* no jobs of its own: the core's loop never runs, /v1/ answers 503 */
    svc_queue_close(&d->loop.q);
    if ((d->dra = dra_new(d, cfg->dra)) == NULL)
        return 1;
    if (svc_http_listen(d) != 0)
        return 1;
    if (start_threads(d, d->dra) != 0) {
        fprintf(stderr, "migschedd: cannot start the DRA threads\n");
        return 1;
    }
    if (svc_kctl_open(d, takeover, kerr, sizeof(kerr)) != 0) {
        fprintf(stderr, "migschedd: %s\n", kerr);
        return 2;
    }
    if (svc_http_start(d, http) != 0)
        return 1;
    ms_log("info", "listening", json_pack("{s:s,s:s,s:s,s:b,s:s}", "listen", cfg->listen, "mode", "dra", "policy",
                                          cfg->policy, "tls", cfg->tls_cert != NULL, "identity", d->dra->identity));
    return 0;
}

void svc_dra_stop(svc_t *d, svc_http_t *http)
{
    svc_dra_t *x = d->dra;
    int i;

    svc_kctl_close(d);                  /* a leader hands the Lease over first */
    svc_http_stop(http);
    if (x != NULL) {
        x->stop = 1;
        for (i = 0; i < DRA_K_N; i++)
            if (x->wa_running[i])
                pthread_join(x->wa_th[i], NULL);
        svc_queue_close(&x->hq);
        if (x->hook_running)
            pthread_join(x->hth, NULL);
        svc_queue_close(&x->q);
        if (x->loop_running)
            pthread_join(x->loop_th, NULL);
        svc_queue_close(&x->wq);
        for (i = 0; i < x->nwriters; i++)
            pthread_join(x->wth[i], NULL);
        dra_free(x);
        d->dra = NULL;
    }
    svc_ext_kube_close(d);
    svc_kctl_free(d);                   /* no thread reads d->kctl any more */
}
