/* kube.c - the API-server client of kube.h: credentials, requests, and
 * list+watch with bookmarks, backoff and relist on 410 Gone. */
#include "kube/kube.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <yaml.h>

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define MAX_FILE (1 << 20)
#define MAX_RESP (256 << 20)   /* a list of many pods */

struct ms_kube {
    char *server;
    char *token;               /* a fixed token (kubeconfig's token), or NULL */
    char *token_file;          /* re-read at every request */
    char *ca_file;
    char *ca_blob;             /* PEM bytes (certificate-authority-data) */
    size_t ca_blob_len;
    bool insecure;
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void set_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

static char *slurp(const char *path, size_t *n_out)
{
    FILE *f = fopen(path, "rb");
    char *s;
    size_t n;

    if (f == NULL)
        return NULL;
    if ((s = malloc(MAX_FILE + 1)) == NULL) {
        fclose(f);
        return NULL;
    }
    n = fread(s, 1, MAX_FILE, f);
    if (ferror(f) || (n == MAX_FILE && fgetc(f) != EOF)) {
        fclose(f);
        free(s);
        return NULL;
    }
    fclose(f);
    s[n] = '\0';
    if (n_out != NULL)
        *n_out = n;
    return s;
}

static void trim_end(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* --- kubeconfig: YAML into JSON (scalars stay strings) ------------------ */

static json_t *yaml_node_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    json_t *o;

    if (n == NULL || depth > 32)
        return NULL;
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
    case YAML_SEQUENCE_NODE: {
        yaml_node_item_t *it;

        if ((o = json_array()) == NULL)
            return NULL;
        for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            json_t *v = yaml_node_json(doc, yaml_document_get_node(doc, *it), depth + 1);

            if (v != NULL)
                json_array_append_new(o, v);
        }
        return o;
    }
    case YAML_MAPPING_NODE: {
        yaml_node_pair_t *p;

        if ((o = json_object()) == NULL)
            return NULL;
        for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            json_t *v = yaml_node_json(doc, yaml_document_get_node(doc, p->value), depth + 1);
            char key[256];

            if (k == NULL || k->type != YAML_SCALAR_NODE || v == NULL || k->data.scalar.length >= sizeof(key)) {
                json_decref(v);
                continue;
            }
            memcpy(key, k->data.scalar.value, k->data.scalar.length);
            key[k->data.scalar.length] = '\0';
            json_object_set_new(o, key, v);
        }
        return o;
    }
    default:
        return NULL;
    }
}

static json_t *yaml_load(const char *text, size_t len, char *err, size_t errlen, const char *path)
{
    yaml_parser_t p;
    yaml_document_t doc;
    json_t *o = NULL;

    if (!yaml_parser_initialize(&p))
        return NULL;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        char where[64];

        snprintf(where, sizeof(where), "line %lu", (unsigned long)p.problem_mark.line + 1);
        set_err(err, errlen, "%s: not YAML (%s)", path, where);
        yaml_parser_delete(&p);
        return NULL;
    }
    o = yaml_node_json(&doc, yaml_document_get_root_node(&doc), 0);
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    return o;
}

/* The element of list (kubeconfig's clusters, users, contexts) named name,
 * its member `member`. */
static json_t *named(json_t *list, const char *name, const char *member)
{
    size_t i;
    json_t *e;

    if (!json_is_array(list) || name == NULL)
        return NULL;
    json_array_foreach(list, i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));

        if (n != NULL && strcmp(n, name) == 0)
            return json_object_get(e, member);
    }
    return NULL;
}

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static char *b64decode(const char *s, size_t *outlen)
{
    size_t n = strlen(s), o = 0;
    char *out = malloc(n / 4 * 3 + 4);
    unsigned acc = 0;
    int bits = 0;

    if (out == NULL)
        return NULL;
    for (; *s; s++) {
        int v;

        if (*s == '=' || *s == '\n' || *s == '\r' || *s == ' ')
            continue;
        if ((v = b64val((unsigned char)*s)) < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

static char *rel_path(const char *base, const char *p)
{
    const char *slash = strrchr(base, '/');
    size_t n;
    char *s;

    if (p[0] == '/' || slash == NULL)
        return strdup(p);
    n = (size_t)(slash - base) + 1 + strlen(p) + 1;
    if ((s = malloc(n)) != NULL)
        snprintf(s, n, "%.*s/%s", (int)(slash - base), base, p);
    return s;
}

static int from_kubeconfig(ms_kube_t *k, const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = slurp(path, &len);
    json_t *o, *ctx, *cl, *us, *v;
    const char *cur, *s;
    int rc = -1;

    if (text == NULL) {
        set_err(err, errlen, "--kubeconfig %s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    o = yaml_load(text, len, err, errlen, path);
    free(text);
    if (!json_is_object(o)) {
        if (o != NULL)
            set_err(err, errlen, "%s: %s", path, "not a kubeconfig (a mapping)");
        json_decref(o);
        return -1;
    }
    cur = json_string_value(json_object_get(o, "current-context"));
    ctx = named(json_object_get(o, "contexts"), cur, "context");
    if (!json_is_object(ctx)) {
        set_err(err, errlen, "%s: current-context names no context", path);
        goto out;
    }
    cl = named(json_object_get(o, "clusters"), json_string_value(json_object_get(ctx, "cluster")), "cluster");
    us = named(json_object_get(o, "users"), json_string_value(json_object_get(ctx, "user")), "user");
    if (!json_is_object(cl) || (s = json_string_value(json_object_get(cl, "server"))) == NULL) {
        set_err(err, errlen, "%s: the context's cluster has no server", path);
        goto out;
    }
    if ((k->server = strdup(s)) == NULL)
        goto out;
    if ((s = json_string_value(json_object_get(cl, "certificate-authority"))) != NULL &&
        (k->ca_file = rel_path(path, s)) == NULL)
        goto out;
    if ((s = json_string_value(json_object_get(cl, "certificate-authority-data"))) != NULL &&
        (k->ca_blob = b64decode(s, &k->ca_blob_len)) == NULL) {
        set_err(err, errlen, "%s: certificate-authority-data is not base64", path);
        goto out;
    }
    v = json_object_get(cl, "insecure-skip-tls-verify");
    k->insecure = v != NULL && json_string_value(v) != NULL && strcmp(json_string_value(v), "true") == 0;
    if (json_is_object(us)) {
        if (json_object_get(us, "client-certificate") != NULL ||
            json_object_get(us, "client-certificate-data") != NULL) {
            set_err(err, errlen, "%s: client certificates are not supported; use a token", path);
            goto out;
        }
        if ((s = json_string_value(json_object_get(us, "token"))) != NULL && (k->token = strdup(s)) == NULL)
            goto out;
        if ((s = json_string_value(json_object_get(us, "tokenFile"))) != NULL &&
            (k->token_file = rel_path(path, s)) == NULL)
            goto out;
    }
    rc = 0;
out:
    json_decref(o);
    return rc;
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
            set_err(err, errlen, "--kube-api %s: an http:// or https:// URL", cfg->api);
            goto fail;
        }
        if ((k->server = strdup(cfg->api)) == NULL ||
            (cfg->token_file != NULL && (k->token_file = strdup(cfg->token_file)) == NULL) ||
            (cfg->ca_file != NULL && (k->ca_file = strdup(cfg->ca_file)) == NULL))
            goto fail;
    } else if (cfg->kubeconfig != NULL) {
        if (from_kubeconfig(k, cfg->kubeconfig, err, errlen) != 0)
            goto fail;
    } else {
        const char *h = getenv("KUBERNETES_SERVICE_HOST"), *p = getenv("KUBERNETES_SERVICE_PORT");
        const char *dir = cfg->sa_dir != NULL ? cfg->sa_dir : SA_DIR;
        size_t n;

        if (h == NULL || p == NULL) {
            set_err(err, errlen, "not in a cluster (no KUBERNETES_SERVICE_HOST/PORT): give --kubeconfig or --kube-api");
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
    trim_end(k->server);
    while (strlen(k->server) > 0 && k->server[strlen(k->server) - 1] == '/')
        k->server[strlen(k->server) - 1] = '\0';
    if (k->token_file != NULL) {
        char *t = slurp(k->token_file, NULL);

        if (t == NULL) {
            set_err(err, errlen, "cannot read the token file %s", k->token_file);
            goto fail;
        }
        free(t);
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
        set_err(err, errlen, "out of memory");
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
    if (k->token_file != NULL && (tok = slurp(k->token_file, NULL)) == NULL) {
        set_err(err, errlen, "cannot read the token file %s", k->token_file);
        curl_easy_cleanup(h);
        return NULL;
    }
    if (tok == NULL && k->token != NULL)
        tok = strdup(k->token);
    if (tok != NULL) {
        trim_end(tok);
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
    struct curl_slist *hdrs = NULL;
    const char *ctype = strcmp(method, "PATCH") == 0 ? "application/merge-patch+json"
                        : body != NULL              ? "application/json"
                                                    : NULL;
    CURL *h = handle(k, path, ctype, &hdrs, err, errlen);
    buf_t b = { NULL, 0, 0, false };
    CURLcode rc;

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
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    else
        set_err(err, errlen, "%s %s", method, curl_easy_strerror(rc));
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK || b.too_big) {
        if (b.too_big)
            set_err(err, errlen, "%s: the answer is too large", method);
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
