/* test_kctl.c - leader election and its takeover callback
 * (src/service/kctl.c, kctl_api.c, kctl_open.c) against a Lease kept by a
 * small fake API server on loopback, each round driven by the test on a
 * fake clock (svc_kctl_lease_round). Becoming the leader calls the
 * takeover callback once, and the replica serves only once it succeeded
 * (a failed one is retried at the next round, still not serving); a renewal
 * does not call it again; losing the Lease to another replica stops the
 * serving, and winning it back calls it again; stopping releases the
 * Lease. kctl knows nothing of the extender: the callback is all it
 * calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/kctl.h"

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/ns/leases"

/* The API server: one Lease, its resourceVersion, optimistic updates. */
typedef struct api {
    pthread_mutex_t mu;
    json_t *lease;                 /* NULL: 404 */
    long rv;
    int creates, updates, conflicts;
} api_t;

typedef struct upload {
    char *p;
    size_t n;
} upload_t;

static json_t *stored(api_t *a)
{
    char rv[32];

    snprintf(rv, sizeof(rv), "%ld", a->rv);
    json_object_set_new(json_object_get(a->lease, "metadata"), "resourceVersion", json_string(rv));
    return a->lease;
}

/* What the server answers a complete request: status and body (malloc'd). */
static unsigned answer(api_t *a, const char *method, const char *url, const char *body, char **out)
{
    json_t *in = body != NULL ? json_loads(body, 0, NULL) : NULL;
    unsigned status = 200;

    *out = NULL;
    pthread_mutex_lock(&a->mu);
    if (strcmp(method, "GET") == 0 && strcmp(url, LEASES "/l") == 0) {
        if (a->lease == NULL)
            status = 404;
        else
            *out = json_dumps(stored(a), JSON_COMPACT);
    } else if (strcmp(method, "POST") == 0 && strcmp(url, LEASES) == 0 && in != NULL) {
        if (a->lease != NULL) {
            status = 409;
        } else {
            a->lease = json_incref(in);
            a->rv++;
            a->creates++;
            status = 201;
            *out = json_dumps(stored(a), JSON_COMPACT);
        }
    } else if (strcmp(method, "PATCH") == 0 && strcmp(url, LEASES "/l") == 0 && in != NULL && a->lease != NULL) {
        const char *rv = json_string_value(json_object_get(json_object_get(in, "metadata"), "resourceVersion"));

        if (rv == NULL || strtol(rv, NULL, 10) != a->rv) {
            status = 409;
            a->conflicts++;
        } else {
            json_object_update(json_object_get(a->lease, "spec"), json_object_get(in, "spec"));
            a->rv++;
            a->updates++;
            *out = json_dumps(stored(a), JSON_COMPACT);
        }
    } else {
        status = 400;
    }
    pthread_mutex_unlock(&a->mu);
    json_decref(in);
    return status;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *len, void **con_cls)
{
    upload_t *u = *con_cls;
    struct MHD_Response *r;
    enum MHD_Result ret;
    unsigned status;
    char *out;

    (void)version;
    if (u == NULL) {
        if ((u = calloc(1, sizeof(*u))) == NULL)
            return MHD_NO;
        *con_cls = u;
        return MHD_YES;
    }
    if (*len > 0) {
        char *p = realloc(u->p, u->n + *len + 1);

        if (p == NULL)
            return MHD_NO;
        memcpy(p + u->n, data, *len);
        u->p = p;
        u->n += *len;
        u->p[u->n] = '\0';
        *len = 0;
        return MHD_YES;
    }
    status = answer(cls, method, url, u->p, &out);
    if (out == NULL)
        out = strdup("{}");
    r = MHD_create_response_from_buffer(strlen(out), out, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    upload_t *u = *con_cls;

    (void)cls;
    (void)c;
    (void)toe;
    if (u != NULL) {
        free(u->p);
        free(u);
        *con_cls = NULL;
    }
}

typedef struct kfx {
    api_t api;
    struct MHD_Daemon *mhd;
    ms_kube_t *kube;
    double wall, mono;
    svc_clock_t clock;
    int takeovers, fail_next;
    svc_kctl_t *c;
} kfx_t;

static double fwall(void *ctx)
{
    return ((kfx_t *)ctx)->wall;
}

static double fmono(void *ctx)
{
    return ((kfx_t *)ctx)->mono;
}

static int takeover(void *ctx)
{
    kfx_t *f = ctx;

    f->takeovers++;
    if (f->fail_next > 0) {
        f->fail_next--;
        return -1;
    }
    return 0;
}

static int setup(void **state)
{
    kfx_t *f = calloc(1, sizeof(*f));
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;
    ms_kube_cfg_t kc;
    svc_kctl_cfg_t cfg;
    char url[64], err[256];

    if (f == NULL)
        return -1;
    pthread_mutex_init(&f->api.mu, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);   /* loopback only, any free port */
    f->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
                              handler, &f->api, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                              MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (f->mhd == NULL || (info = MHD_get_daemon_info(f->mhd, MHD_DAEMON_INFO_BIND_PORT)) == NULL)
        return -1;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)info->port);
    memset(&kc, 0, sizeof(kc));
    kc.api = url;
    if (ms_kube_open(&kc, &f->kube, err, sizeof(err)) != 0)
        return -1;
    f->wall = 1.8e9;
    f->mono = 1000;
    f->clock.wall = fwall;
    f->clock.mono = fmono;
    f->clock.ctx = f;
    svc_kctl_cfg_defaults(&cfg);
    cfg.ns = "ns";
    cfg.lease = "l";
    cfg.identity = "me";
    cfg.lease_s = 10;
    cfg.takeover = takeover;
    cfg.takeover_ctx = f;
    cfg.clock = &f->clock;
    if (svc_kctl_new(&cfg, f->kube, &f->c, err, sizeof(err)) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    kfx_t *f = *state;

    svc_kctl_stop(f->c);
    ms_kube_close(f->kube);
    MHD_stop_daemon(f->mhd);
    json_decref(f->api.lease);
    pthread_mutex_destroy(&f->api.mu);
    free(f);
    return 0;
}

/* Another replica holds the Lease now, renewed at the fake wall time. */
static void held_by_other(kfx_t *f)
{
    char t[40];

    svc_kctl_time_format(f->wall, t, sizeof(t));
    pthread_mutex_lock(&f->api.mu);
    json_object_set_new(json_object_get(f->api.lease, "spec"), "holderIdentity", json_string("other"));
    json_object_set_new(json_object_get(f->api.lease, "spec"), "renewTime", json_string(t));
    f->api.rv++;
    pthread_mutex_unlock(&f->api.mu);
}

static const char *holder(kfx_t *f)
{
    return json_string_value(json_object_get(json_object_get(f->api.lease, "spec"), "holderIdentity"));
}

static void test_takeover_once_per_leadership(void **state)
{
    kfx_t *f = *state;

    assert_false(svc_kctl_is_leader(f->c));
    svc_kctl_lease_round(f->c);               /* no Lease: created, leader */
    assert_int_equal(f->api.creates, 1);
    assert_string_equal(holder(f), "me");
    assert_int_equal(f->takeovers, 1);
    assert_true(svc_kctl_is_leader(f->c));
    f->mono += 2;
    f->wall += 2;
    svc_kctl_lease_round(f->c);               /* renewed: no second takeover */
    assert_int_equal(f->api.updates, 1);
    assert_int_equal(f->takeovers, 1);
    assert_true(svc_kctl_is_leader(f->c));
    /* cut off: no renewal within the renew deadline stops the serving by
     * the clock alone, before anyone else may take the Lease */
    f->mono += 7.5;
    assert_false(svc_kctl_is_leader(f->c));
    /* another replica took it: we wait, then win it back once it expired */
    held_by_other(f);
    svc_kctl_lease_round(f->c);
    assert_false(svc_kctl_is_leader(f->c));
    assert_string_equal(holder(f), "other");
    f->mono += 11;
    f->wall += 11;
    svc_kctl_lease_round(f->c);
    assert_string_equal(holder(f), "me");
    assert_true(svc_kctl_is_leader(f->c));
    assert_int_equal(f->takeovers, 2);        /* a new leadership, a new takeover */
}

static void test_failed_takeover_does_not_serve(void **state)
{
    kfx_t *f = *state;

    f->fail_next = 2;
    svc_kctl_lease_round(f->c);
    assert_string_equal(holder(f), "me");     /* it holds the Lease... */
    assert_false(svc_kctl_is_leader(f->c));   /* ...but does not serve */
    f->mono += 2;
    f->wall += 2;
    svc_kctl_lease_round(f->c);
    assert_false(svc_kctl_is_leader(f->c));
    assert_int_equal(f->takeovers, 2);
    f->mono += 2;
    f->wall += 2;
    svc_kctl_lease_round(f->c);
    assert_true(svc_kctl_is_leader(f->c));
    assert_int_equal(f->takeovers, 3);
}

/* Stopping a leader hands the Lease over: the holder is emptied. */
static void test_stop_releases(void **state)
{
    kfx_t *f = *state;

    svc_kctl_lease_round(f->c);
    assert_true(svc_kctl_is_leader(f->c));
    svc_kctl_stop(f->c);
    f->c = NULL;
    assert_string_equal(holder(f), "");
}

static void test_times(void **state)
{
    char buf[40];
    double t;

    (void)state;
    assert_true(svc_kctl_time_parse("2026-12-01T10:00:00.25Z", &t));
    svc_kctl_time_format(t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-12-01T10:00:00.250000Z");
    assert_false(svc_kctl_time_parse("2026-12-01T10:00:00+01:00", &t));
    assert_false(svc_kctl_time_parse("2026-13-01T10:00:00Z", &t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_takeover_once_per_leadership, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_takeover_does_not_serve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_releases, setup, teardown),
        cmocka_unit_test(test_times),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
