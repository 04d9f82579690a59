/* http.c - the agent's HTTP/JSON API on libmicrohttpd (docs/agent.md): the
 * handlers run on libmicrohttpd's thread of their connection, ag_http_start
 * and ag_http_stop on main.
 *
 *   GET    /healthz               {"ok": true}: the process runs
 *   GET    /metrics               Prometheus text
 *   GET    /v1/inventory          GPUs and instances
 *   POST   /v1/instances          create {gpu, profile, start, job}
 *   DELETE /v1/instances/UUID     destroy
 *   POST   /v1/ops                one plan op (migschedd's agent backend)
 *
 * With --token-file every request but /healthz needs
 * "Authorization: Bearer TOKEN": the inventory tells which jobs run where,
 * and the metrics are cheap to guard too. Loopback only unless
 * --allow-remote (a DaemonSet pod on the host network gives it, with a
 * token).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "agent/agent.h"
#include "daemon/http_guard.h"


struct ag_http {
    struct MHD_Daemon *mhd;
    ag_t *a;
    atomic_int active;
    ms_http_guard_t *guard;       /* slow clients' deadlines */
    char *cert, *key;             /* TLS, or NULL */
};

/* libmicrohttpd's idle timeout; the guard holds a kept-alive connection to
 * it, trickle or not */
#define IDLE_S 75

typedef struct rq {
    ms_http_body_t b;             /* the request body */
} rq_t;

/* Start-up only: the agent does not reload its token (restart it). */
int ag_token_load(ag_t *a)
{
    char err[512];

    if (a->cfg->token_file == NULL)
        return 0;
    if ((a->token = ms_http_token_read(a->cfg->token_file, &a->token_len, err, sizeof(err))) == NULL) {
        fprintf(stderr, "migsched-agent: --token-file: %s\n", err);
        return -1;
    }
    return 0;
}

static bool token_ok(const ag_t *a, struct MHD_Connection *c)
{
    return a->token == NULL ||
           ms_http_bearer_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"), a->token,
                              a->token_len);
}

static enum MHD_Result reply(ag_http_t *h, struct MHD_Connection *c, int status, char *body, const char *ctype)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;

    if (body == NULL) {
        status = 500;
        if ((body = strdup("{\"error\":{\"reason\":\"backend\",\"field\":\"\",\"message\":\"out of memory\"}}")) == NULL)
            return MHD_NO;
    }
    resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype != NULL ? ctype : "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    ag_http_count(h->a, status);
    return ret;
}

static enum MHD_Result send_err(ag_http_t *h, struct MHD_Connection *c, int status, const char *reason,
                                const char *field, const char *msg)
{
    ag_err_t e;

    ag_err_set(&e, status, reason, field, "%s", msg);
    return reply(h, c, status, ag_err_body(&e), NULL);
}

static enum MHD_Result route(ag_http_t *h, struct MHD_Connection *c, rq_t *r, const char *url, const char *method)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;
    ag_t *a = h->a;
    ag_err_t e;
    int status = 500;
    char *body;

    if (strcmp(url, "/healthz") == 0)
        return get ? reply(h, c, 200, strdup("{\"ok\":true}"), NULL)
                   : send_err(h, c, 405, "method", "", "method not allowed");
    if (!token_ok(a, c))
        return send_err(h, c, 401, "unauthorized", "Authorization", "a valid bearer token is required");
    if (r->b.too_big)
        return send_err(h, c, 413, "invalid", "", "the body is too large");
    if (strcmp(url, "/metrics") == 0 && get)
        return reply(h, c, 200, ag_metrics(a), "text/plain; version=0.0.4; charset=utf-8");
    if (strcmp(url, "/v1/inventory") == 0 && get) {
        body = ag_inventory(a, &status);
        return reply(h, c, status, body, NULL);
    }
    if (strcmp(url, "/v1/instances") == 0 && post) {
        ag_create_t rq;

        if (ag_parse_create(r->b.buf, r->b.len, &rq, &e) != 0)
            return reply(h, c, e.code, ag_err_body(&e), NULL);
        body = ag_create(a, &rq, &status);
        return reply(h, c, status, body, NULL);
    }
    if (strcmp(url, "/v1/ops") == 0 && post) {
        ag_op_t rq;

        if (ag_parse_op(r->b.buf, r->b.len, &rq, &e) != 0)
            return reply(h, c, e.code, ag_err_body(&e), NULL);
        body = ag_op(a, &rq, &status);
        return reply(h, c, status, body, NULL);
    }
    if (strncmp(url, "/v1/instances/", 14) == 0 && (del || get)) {
        const char *uuid = url + 14;

        if (!ag_uuid_valid(uuid))
            return send_err(h, c, 400, "invalid", "uuid", "an instance uuid: 1-47 of A-Z a-z 0-9 - _ . :");
        if (get) {
            /* one instance: the inventory's entry, 404 if none */
            ms_binst_t *inv;
            int n, i;

            pthread_mutex_lock(&a->mu);
            if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
                pthread_mutex_unlock(&a->mu);
                return send_err(h, c, 500, "backend", "", "out of memory");
            }
            for (i = 0; i < n && !(inv[i].start >= 0 && strcmp(inv[i].uuid, uuid) == 0); i++)
                ;
            body = NULL;
            if (i < n) {
                json_t *o = json_pack("{s:i,s:s,s:i,s:s,s:s,s:s}", "gpu", (int)inv[i].gpu, "profile",
                                      ms_geom_profile(a->geom[inv[i].gpu], inv[i].prof)->name, "start",
                                      (int)inv[i].start, "uuid", inv[i].uuid, "job", inv[i].job, "gpu_uuid",
                                      ms_backend_gpu_uuid(a->be, inv[i].gpu));

                body = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
                json_decref(o);
            }
            free(inv);
            pthread_mutex_unlock(&a->mu);
            if (i == n)
                return send_err(h, c, 404, "not-found", "uuid", "no such instance");
            return reply(h, c, 200, body, NULL);
        }
        body = ag_delete(a, uuid, &status);
        return reply(h, c, status, body, NULL);
    }
    if (strcmp(url, "/metrics") == 0 || strcmp(url, "/v1/inventory") == 0 || strcmp(url, "/v1/instances") == 0 ||
        strcmp(url, "/v1/ops") == 0 || strncmp(url, "/v1/instances/", 14) == 0)
        return send_err(h, c, 405, "method", "", "method not allowed");
    return send_err(h, c, 404, "not-found", "", "no such endpoint");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    ag_http_t *h = cls;
    rq_t *r = *con_cls;
    enum MHD_Result ret;

    (void)version;
    if (r == NULL) {
        if ((r = calloc(1, sizeof(*r))) == NULL)
            return MHD_NO;
        *con_cls = r;
        ms_http_guard_headers(c);   /* the body has its own deadline */
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (ms_http_body_add(&r->b, upload, *upload_size, (size_t)h->a->cfg->max_body) != 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    ms_http_guard_request(c);   /* in whole: an op may take the driver's seconds */
    atomic_fetch_add(&h->active, 1);
    ret = route(h, c, r, url, method);
    atomic_fetch_sub(&h->active, 1);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    rq_t *r = *con_cls;

    (void)cls;
    (void)toe;
    ms_http_guard_completed(c);   /* kept alive: the next request's deadlines */
    if (r != NULL) {
        ms_http_body_free(&r->b);
        free(r);
        *con_cls = NULL;
    }
}

/* A TLS file (at most 1 MiB), or NULL after saying why, naming it. */
static char *tls_file(const char *opt, const char *path)
{
    FILE *f;
    char *s = NULL;
    size_t n;
    const char *why = NULL;

    errno = 0;
    if ((f = fopen(path, "rb")) == NULL)
        why = strerror(errno != 0 ? errno : EIO);
    else if ((s = malloc((1 << 20) + 1)) == NULL)
        why = "out of memory";
    else {
        errno = 0;
        n = fread(s, 1, 1 << 20, f);
        if (ferror(f))
            why = strerror(errno != 0 ? errno : EIO);
        else if (n == 1 << 20 && fgetc(f) != EOF)
            why = "larger than 1 MiB";
        else
            s[n] = '\0';
    }
    if (f != NULL)
        fclose(f);
    if (why != NULL) {
        fprintf(stderr, "migsched-agent: %s %s: %s\n", opt, path, why);
        free(s);
        return NULL;
    }
    return s;
}

static void http_free(ag_http_t *h)
{
    ms_http_guard_stop(h->guard);
    free(h->cert);
    free(h->key);
    free(h);
}

int ag_http_start(ag_t *a, ag_http_t **out)
{
    ag_http_t *h = calloc(1, sizeof(*h));
    const ag_cfg_t *cfg = a->cfg;
    struct sockaddr_in sa;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
                     MHD_USE_ITC;
    struct MHD_OptionItem tls[4] = { { MHD_OPTION_END, 0, NULL } };
    int rc;

    *out = NULL;
    if (h == NULL)
        return -1;
    h->a = a;
    if ((rc = ms_http_parse_listen(cfg->listen, cfg->allow_remote, &sa)) != 0) {
        fprintf(stderr, "migsched-agent: --listen %s: %s\n", cfg->listen,
                rc == -2 ? "not a loopback address (give --allow-remote, and a --token-file)"
                         : "HOST:PORT with an IPv4 address or localhost");
        http_free(h);
        return -1;
    }
    if ((cfg->tls_cert != NULL) != (cfg->tls_key != NULL)) {
        fprintf(stderr, "migsched-agent: TLS needs both --tls-cert and --tls-key\n");
        http_free(h);
        return -1;
    }
    if (cfg->tls_cert != NULL) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            fprintf(stderr, "migsched-agent: this libmicrohttpd is built without TLS\n");
            http_free(h);
            return -1;
        }
        if ((h->cert = tls_file("--tls-cert", cfg->tls_cert)) == NULL ||
            (h->key = tls_file("--tls-key", cfg->tls_key)) == NULL) {
            http_free(h);
            return -1;
        }
        flags |= MHD_USE_TLS;
        tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert };
        tls[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, h->key };
        tls[2] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)MS_HTTP_TLS_PRIORITIES };
        tls[3] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    }
    if (ms_http_guard_start(&h->guard, cfg->header_timeout_s, cfg->body_timeout_s, (double)IDLE_S) != 0) {
        fprintf(stderr, "migsched-agent: cannot start the HTTP deadline thread\n");
        http_free(h);
        return -1;
    }
    h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handler, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                              MHD_OPTION_ARRAY, tls, MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_conns,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_conns_per_ip,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_NOTIFY_COMPLETED,
                              completed, h, MHD_OPTION_NOTIFY_CONNECTION, ms_http_guard_notify, h->guard,
                              MHD_OPTION_URI_LOG_CALLBACK, ms_http_guard_uri, h->guard, MHD_OPTION_END);
    if (h->mhd == NULL) {
        ms_log("error", "cannot listen", json_pack("{s:s}", "listen", cfg->listen));
        http_free(h);
        return -1;
    }
    *out = h;
    return 0;
}

/* Stop accepting, let requests in progress finish (at most 5 s), stop. */
void ag_http_stop(ag_http_t *h)
{
    double t0 = ms_clock_mono();
    MHD_socket s;

    if (h == NULL)
        return;
    s = MHD_quiesce_daemon(h->mhd);
    while (atomic_load(&h->active) > 0 && ms_clock_mono() - t0 < 5.0) {
        struct timespec ts = { 0, 10000000L };

        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(h->mhd);
    if (s != MHD_INVALID_SOCKET)
        close(s);
    http_free(h);   /* the guard after the server: no connection is left */
}
