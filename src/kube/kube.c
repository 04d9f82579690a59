/* kube.c - the API-server client of kube.h: where the credentials come
 * from (in-cluster, a kubeconfig through kubeconfig.c, or a URL and token
 * file), requests, and list+watch with bookmarks, backoff and relist on
 * 410 Gone. */
#include "kube/kube_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define MAX_RESP (256 << 20)   /* a list of many pods */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void ms__kube_set_err(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

static void lock_cb(CURL *h, curl_lock_data data, curl_lock_access a, void *ctx)
{
    ms_kube_t *k = ctx;

    (void)h;
    (void)a;
    pthread_mutex_lock(&k->locks[data]);
}

static void unlock_cb(CURL *h, curl_lock_data data, void *ctx)
{
    ms_kube_t *k = ctx;

    (void)h;
    pthread_mutex_unlock(&k->locks[data]);
}

int ms_kube_open(const ms_kube_cfg_t *cfg, ms_kube_t **out, char *err, size_t errlen)
{
    ms_kube_t *k = calloc(1, sizeof(*k));
    int i;

    *out = NULL;
    if (k == NULL)
        return -1;
    pthread_once(&g_once, global_init);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&k->locks[i], NULL);
    if (cfg->api != NULL) {
        if (strncmp(cfg->api, "https://", 8) != 0 && strncmp(cfg->api, "http://", 7) != 0) {
            ms__kube_set_err(err, errlen, "--kube-api %s: an http:// or https:// URL", cfg->api);
            goto fail;
        }
        if ((k->server = strdup(cfg->api)) == NULL ||
            (cfg->token_file != NULL && (k->token_file = strdup(cfg->token_file)) == NULL) ||
            (cfg->ca_file != NULL && (k->ca_file = strdup(cfg->ca_file)) == NULL))
            goto fail;
    } else if (cfg->kubeconfig != NULL) {
        if (ms__kube_from_kubeconfig(k, cfg->kubeconfig, err, errlen) != 0)
            goto fail;
    } else {
        const char *h = getenv("KUBERNETES_SERVICE_HOST"), *p = getenv("KUBERNETES_SERVICE_PORT");
        const char *dir = cfg->sa_dir != NULL ? cfg->sa_dir : SA_DIR;
        size_t n;

        if (h == NULL || p == NULL) {
            ms__kube_set_err(err, errlen, "not in a cluster (no KUBERNETES_SERVICE_HOST/PORT): give --kubeconfig or --kube-api");
            goto fail;
        }
        n = strlen(h) + strlen(p) + 16;
        if ((k->server = malloc(n)) == NULL)
            goto fail;
        snprintf(k->server, n, strchr(h, ':') != NULL ? "https://[%s]:%s" : "https://%s:%s", h, p);
        n = strlen(dir) + 16;
        if ((k->token_file = malloc(n)) == NULL || (k->ca_file = malloc(n)) == NULL)
            goto fail;
        snprintf(k->token_file, n, "%s/token", dir);
        snprintf(k->ca_file, n, "%s/ca.crt", dir);
    }
    ms__kube_trim_end(k->server);
    while (strlen(k->server) > 0 && k->server[strlen(k->server) - 1] == '/')
        k->server[strlen(k->server) - 1] = '\0';
    if (k->token_file != NULL) {
        char *t = ms__kube_token_read(k->token_file, err, errlen);

        if (t == NULL)
            goto fail;
        free(t);
    }
    if (k->token != NULL && !ms__kube_token_ok(k->token)) {
        ms__kube_set_err(err, errlen, "%s: the user's token is not visible ASCII on one line", cfg->kubeconfig);
        goto fail;
    }
    if ((k->share = curl_share_init()) == NULL)
        goto fail;
    curl_share_setopt(k->share, CURLSHOPT_LOCKFUNC, lock_cb);
    curl_share_setopt(k->share, CURLSHOPT_UNLOCKFUNC, unlock_cb);
    curl_share_setopt(k->share, CURLSHOPT_USERDATA, k);
    curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    *out = k;
    return 0;
fail:
    ms_kube_close(k);
    return -1;
}

void ms_kube_close(ms_kube_t *k)
{
    int i;

    if (k == NULL)
        return;
    if (k->share != NULL)
        curl_share_cleanup(k->share);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&k->locks[i]);
    free(k->server);
    free(k->token);
    free(k->token_file);
    free(k->ca_file);
    free(k->ca_blob);
    free(k);
}

const char *ms_kube_server(const ms_kube_t *k)
{
    return k->server;
}

bool ms_kube_escape(const char *s, char *buf, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~';

        if (o + (plain ? 1 : 3) >= len)
            return false;
        if (plain) {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '%';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    if (o >= len)
        return false;
    buf[o] = '\0';
    return true;
}

/* --- requests ----------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
    bool too_big;
} buf_t;

static size_t on_data(char *data, size_t sz, size_t nm, void *ctx)
{
    buf_t *b = ctx;
    size_t n = sz * nm;

    if (b->n + n + 1 > MAX_RESP) {
        b->too_big = true;
        return 0;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *q = realloc(b->p, cap);

        if (q == NULL)
            return 0;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
    return n;
}

/* A curl handle for path with auth and TLS set up; *hdrs to free. */
static CURL *handle(ms_kube_t *k, const char *path, const char *ctype, struct curl_slist **hdrs, char *err,
                    size_t errlen)
{
    CURL *h = curl_easy_init();
    size_t n = strlen(k->server) + strlen(path) + 1;
    char *url = malloc(n), *tok = NULL, *auth = NULL;

    *hdrs = NULL;
    if (h == NULL || url == NULL) {
        free(url);
        if (h != NULL)
            curl_easy_cleanup(h);
        ms__kube_set_err(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(url, n, "%s%s", k->server, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    free(url);
    curl_easy_setopt(h, CURLOPT_SHARE, k->share);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (k->ca_file != NULL)
        curl_easy_setopt(h, CURLOPT_CAINFO, k->ca_file);
    if (k->ca_blob != NULL) {
        struct curl_blob blob = { k->ca_blob, k->ca_blob_len, CURL_BLOB_COPY };

        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (k->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (k->token_file != NULL && (tok = ms__kube_token_read(k->token_file, err, errlen)) == NULL) {
        curl_easy_cleanup(h);
        return NULL;
    }
    if (tok == NULL && k->token != NULL)
        tok = strdup(k->token);
    if (tok != NULL) {
        n = strlen(tok) + 32;
        if ((auth = malloc(n)) != NULL) {
            snprintf(auth, n, "Authorization: Bearer %s", tok);
            *hdrs = curl_slist_append(*hdrs, auth);
        }
        free(auth);
        free(tok);
    }
    *hdrs = curl_slist_append(*hdrs, "Accept: application/json");
    if (ctype != NULL) {
        char ct[96];

        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
        *hdrs = curl_slist_append(*hdrs, ct);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
    return h;
}

int ms_kube_request(ms_kube_t *k, const char *method, const char *path, const char *body,
                    long *status, char **resp, char *err, size_t errlen)
{
    return ms_kube_request_within(k, method, path, body, 30000, status, resp, err, errlen);
}

int ms_kube_request_within(ms_kube_t *k, const char *method, const char *path, const char *body, long timeout_ms,
                           long *status, char **resp, char *err, size_t errlen)
{
    struct timespec now;

    if (timeout_ms < 1)
        timeout_ms = 1;   /* a caller's 0 is the shortest wait, not "already late" */
    clock_gettime(CLOCK_MONOTONIC, &now);
    return ms_kube_request_by(k, method, path, body,
                              (double)now.tv_sec + (double)now.tv_nsec * 1e-9 + (double)timeout_ms * 1e-3, status,
                              resp, err, errlen);
}

/* Milliseconds left before deadline (CLOCK_MONOTONIC seconds); <= 0 when
 * it has passed. */
static long ms_left(double deadline)
{
    struct timespec now;
    double left;

    clock_gettime(CLOCK_MONOTONIC, &now);
    left = (deadline - ((double)now.tv_sec + (double)now.tv_nsec * 1e-9)) * 1e3;
    return left <= 0 ? 0 : left >= 86400e3 ? 86400000L : (long)ceil(left);
}

int ms_kube_request_by(ms_kube_t *k, const char *method, const char *path, const char *body, double deadline,
                       long *status, char **resp, char *err, size_t errlen)
{
    struct curl_slist *hdrs = NULL;
    const char *ctype = strcmp(method, "PATCH") == 0 ? "application/merge-patch+json"
                        : body != NULL              ? "application/json"
                                                    : NULL;
    CURL *h = handle(k, path, ctype, &hdrs, err, errlen);
    buf_t b = { NULL, 0, 0, false };
    CURLcode rc;
    long timeout_ms;

    *status = 0;
    if (resp != NULL)
        *resp = NULL;
    if (h == NULL)
        return -1;
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body != NULL) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    /* read last, just before the transfer: a caller held up after it chose
     * the deadline (a thread descheduled, a process stopped) sends nothing
     * late; inside the transfer curl's own clock (monotonic too) ends it */
    if ((timeout_ms = ms_left(deadline)) <= 0) {
        ms__kube_set_err(err, errlen, "%s: its deadline passed before it was sent", method);
        curl_easy_cleanup(h);
        curl_slist_free_all(hdrs);
        return MS_KUBE_LATE;
    }
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
    rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    else
        ms__kube_set_err(err, errlen, "%s %s", method, curl_easy_strerror(rc));
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK || b.too_big) {
        if (b.too_big)
            ms__kube_set_err(err, errlen, "%s: the answer is too large", method);
        free(b.p);
        return -1;
    }
    if (resp != NULL)
        *resp = b.p;
    else
        free(b.p);
    return 0;
}

/* --- list + watch ------------------------------------------------------- */

typedef struct wctx {
    ms_kube_event_fn fn;
    void *ctx;
    volatile int *stop;
    buf_t line;
    char rv[64];
    bool gone;                 /* 410: relist */
    long events;
} wctx_t;

static void watch_line(wctx_t *w, const char *s, size_t n)
{
    json_error_t je;
    json_t *ev = json_loadb(s, n, 0, &je), *obj;
    const char *type, *rv;

    if (ev == NULL)
        return;
    type = json_string_value(json_object_get(ev, "type"));
    obj = json_object_get(ev, "object");
    if (type != NULL && obj != NULL) {
        if (strcmp(type, "ERROR") == 0) {
            json_t *code = json_object_get(obj, "code");

            if (json_integer_value(code) == 410)
                w->gone = true;
        } else {
            rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
            if (rv != NULL && strlen(rv) < sizeof(w->rv))
                snprintf(w->rv, sizeof(w->rv), "%s", rv);
            if (strcmp(type, "BOOKMARK") != 0)
                w->fn(w->ctx, type, obj);
            w->events++;
        }
    }
    json_decref(ev);
}

static size_t on_watch(char *data, size_t sz, size_t nm, void *ctx)
{
    wctx_t *w = ctx;
    size_t n = sz * nm, i, from = 0;

    for (i = 0; i < n; i++) {
        if (data[i] != '\n')
            continue;
        if (w->line.n > 0) {
            if (on_data(data + from, 1, i - from, &w->line) != i - from)
                return 0;
            watch_line(w, w->line.p, w->line.n);
            w->line.n = 0;
        } else {
            watch_line(w, data + from, i - from);
        }
        from = i + 1;
    }
    if (from < n && on_data(data + from, 1, n - from, &w->line) != n - from)
        return 0;
    return n;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    wctx_t *w = ctx;

    (void)a;
    (void)b;
    (void)c;
    (void)d;
    return *w->stop ? 1 : 0;
}

static void nap(double s, volatile int *stop)
{
    while (s > 0 && !*stop) {
        double t = s > 0.1 ? 0.1 : s;
        struct timespec ts = { 0, (long)(t * 1e9) };

        nanosleep(&ts, NULL);
        s -= t;
    }
}

static int do_list(ms_kube_t *k, const char *path, const char *query, wctx_t *w)
{
    char *p, *resp = NULL, err[256];
    size_t n = strlen(path) + (query != NULL ? strlen(query) : 0) + 8;
    long status;
    json_t *o, *items, *it;
    const char *rv;
    size_t i;

    if ((p = malloc(n)) == NULL)
        return -1;
    snprintf(p, n, "%s%s%s", path, query != NULL && *query ? "?" : "", query != NULL ? query : "");
    if (ms_kube_request(k, "GET", p, NULL, &status, &resp, err, sizeof(err)) != 0 || status != 200) {
        free(p);
        free(resp);
        return -1;
    }
    free(p);
    o = json_loads(resp, 0, NULL);
    free(resp);
    items = json_object_get(o, "items");
    rv = json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
    if (!json_is_array(items) || rv == NULL || strlen(rv) >= sizeof(w->rv)) {
        json_decref(o);
        return -1;
    }
    snprintf(w->rv, sizeof(w->rv), "%s", rv);
    json_array_foreach(items, i, it)
        w->fn(w->ctx, "LIST", it);
    w->fn(w->ctx, "SYNCED", NULL);
    json_decref(o);
    return 0;
}

int ms_kube_watch(ms_kube_t *k, const char *path, const char *query, ms_kube_event_fn fn, void *ctx,
                  volatile int *stop)
{
    wctx_t w;
    double backoff = 0.2;
    bool listed = false;

    memset(&w, 0, sizeof(w));
    w.fn = fn;
    w.ctx = ctx;
    w.stop = stop;
    while (!*stop) {
        struct curl_slist *hdrs = NULL;
        char *p, err[256];
        size_t n;
        CURL *h;
        CURLcode rc;
        long status = 0;
        struct timespec t0, t1;

        if (!listed) {
            if (do_list(k, path, query, &w) != 0) {
                nap(backoff, stop);
                backoff = backoff * 2 > 10 ? 10 : backoff * 2;
                continue;
            }
            listed = true;
        }
        n = strlen(path) + (query != NULL ? strlen(query) : 0) + strlen(w.rv) + 96;
        if ((p = malloc(n)) == NULL) {
            nap(1, stop);
            continue;
        }
        snprintf(p, n, "%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=%s%s%s", path,
                 w.rv, query != NULL && *query ? "&" : "", query != NULL ? query : "");
        h = handle(k, p, NULL, &hdrs, err, sizeof(err));
        free(p);
        if (h == NULL) {
            nap(backoff, stop);
            backoff = backoff * 2 > 10 ? 10 : backoff * 2;
            continue;
        }
        w.gone = false;
        w.events = 0;
        w.line.n = 0;
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_watch);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &w);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, &w);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
        /* no event and no bookmark for 2 minutes: the connection is dead */
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 120L);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = curl_easy_perform(h);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(h);
        curl_slist_free_all(hdrs);
        if (*stop)
            break;
        if (status == 410 || w.gone) {
            listed = false;   /* our version is too old: relist */
            continue;
        }
        if (rc == CURLE_OK && status == 200 &&
            (w.events > 0 || (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9 >= 1.0)) {
            backoff = 0.2;   /* a normal end (timeoutSeconds): watch on */
            continue;
        }
        /* (a watch that a server or proxy ends at once with nothing in it
         * backs off like a failure instead of being retried in a loop) */
        if (w.events > 0)
            backoff = 0.2;
        nap(backoff, stop);
        backoff = backoff * 2 > 10 ? 10 : backoff * 2;
        if (status != 200 && status != 0)
            listed = false;
    }
    free(w.line.p);
    return 0;
}
