/* client.c - `migsched status|submit|jobs|cancel|watch`: the migsched CLI as
 * a client of migschedd's HTTP API (docs/api.md), over libcurl.
 *
 * Every command takes --server URL (default $MIGSCHED_SERVER, else
 * http://127.0.0.1:7070) and --token-file FILE (a bearer token for POST and
 * DELETE). Exit codes a script can use:
 *   0 ok; 1 the server refused (4xx/5xx, its error printed); 2 usage;
 *   3 the server cannot be reached; 4 no such job (404).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "client/client.h"
#include "migsched/frag.h"
#include "migsched/number.h"
#include "migsched/slicemap.h"

enum { EX_OK = 0, EX_REFUSED = 1, EX_USAGE = 2, EX_UNREACHABLE = 3, EX_NOTFOUND = 4 };

/* Option values in the library's one number syntax (number.h). */
static bool parse_long(const char *s, long *out)
{
    int64_t v;

    if (ms_number_int(s, LONG_MIN, LONG_MAX, &v) != MS_OK)
        return false;
    *out = (long)v;
    return true;
}

static bool parse_double(const char *s, double *out)
{
    return ms_number_double(s, out) == MS_OK;
}

typedef struct conn {
    const char *server;
    char *token;
    const char *cmd;
} conn_t;

typedef struct buf {
    char *s;
    size_t n;
    bool oom;
} buf_t;

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
    buf_t *b = ctx;
    size_t k = size * n;
    char *v;

    if (b->oom || (v = realloc(b->s, b->n + k + 1)) == NULL) {
        b->oom = true;
        return 0;
    }
    b->s = v;
    memcpy(b->s + b->n, p, k);
    b->n += k;
    b->s[b->n] = '\0';
    return k;
}

/* One request. Returns the HTTP status (> 0) with *out the parsed JSON body
 * (NULL if it is not JSON), or -1 when the server cannot be reached. */
static long request(const conn_t *c, const char *method, const char *path, const char *body, long timeout_s,
                    json_t **out)
{
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = NULL;
    buf_t b = { NULL, 0, false };
    char url[2048], auth[4200];
    long code = -1;
    json_error_t je;
    CURLcode rc;

    *out = NULL;
    if (h == NULL || (size_t)snprintf(url, sizeof(url), "%s%s", c->server, path) >= sizeof(url)) {
        curl_easy_cleanup(h);
        return -1;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (body != NULL) {
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    }
    if (c->token != NULL) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->token);
        hdr = curl_slist_append(hdr, auth);
    }
    if (hdr != NULL)
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    rc = curl_easy_perform(h);
    if (rc == CURLE_OK && !b.oom) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        if (b.s != NULL)
            *out = json_loads(b.s, 0, &je);
    } else {
        fprintf(stderr, "migsched %s: cannot reach %s: %s\n", c->cmd, c->server, curl_easy_strerror(rc));
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    free(b.s);
    return code;
}

/* Exit code of an answer; prints the server's error. */
static int verdict(const conn_t *c, long code, json_t *o)
{
    json_t *e;

    if (code < 0)
        return EX_UNREACHABLE;
    if (code >= 200 && code < 300)
        return EX_OK;
    e = json_object_get(json_object_get(o, "error"), "message");
    fprintf(stderr, "migsched %s: %ld: %s%s%s\n", c->cmd, code,
            json_string_value(json_object_get(json_object_get(o, "error"), "field")) != NULL
                ? json_string_value(json_object_get(json_object_get(o, "error"), "field")) : "",
            json_string_value(json_object_get(json_object_get(o, "error"), "field")) != NULL ? ": " : "",
            e != NULL ? json_string_value(e) : "(no error message)");
    return code == 404 ? EX_NOTFOUND : EX_REFUSED;
}

/* Common options: --server, --token-file. Returns the index of the first
 * other argument handled by the caller via *rest, or -1 after an error. */
static int conn_opt(conn_t *c, int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--server") == 0 && *i + 1 < argc) {
        c->server = argv[++*i];
        return 1;
    }
    if (strcmp(argv[*i], "--token-file") == 0 && *i + 1 < argc) {
        FILE *f = fopen(argv[++*i], "r");
        char line[4097];
        size_t n;

        if (f == NULL || fgets(line, sizeof(line), f) == NULL) {
            fprintf(stderr, "migsched %s: --token-file %s: %s\n", c->cmd, argv[*i],
                    f == NULL ? strerror(errno) : "empty");
            if (f != NULL)
                fclose(f);
            return -1;
        }
        fclose(f);
        n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = '\0';
        free(c->token);
        if ((c->token = strdup(line)) == NULL)
            return -1;
        return 1;
    }
    return 0;
}

static void conn_init(conn_t *c, const char *cmd)
{
    const char *env = getenv("MIGSCHED_SERVER");

    c->server = env != NULL && *env ? env : "http://127.0.0.1:7070";
    c->token = NULL;
    c->cmd = cmd;
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void conn_free(conn_t *c)
{
    free(c->token);
    curl_global_cleanup();
}

static const char *jstr(json_t *o, const char *k, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s != NULL ? s : dflt;
}

/* --- status ------------------------------------------------------------- */

#define MAX_MODELS 16

typedef struct gcache {
    const char *name[MAX_MODELS];
    ms_geom_t *g[MAX_MODELS];
    int n;
} gcache_t;

static ms_geom_t *geom_of(gcache_t *gc, const char *model)
{
    const ms_model_t *m = ms_model_find(model);
    int i;

    for (i = 0; i < gc->n; i++)
        if (strcmp(gc->name[i], model) == 0)
            return gc->g[i];
    if (m == NULL || gc->n == MAX_MODELS || ms_geom_create(m, 0, &gc->g[gc->n]) != MS_OK)
        return NULL;
    gc->name[gc->n] = model;
    return gc->g[gc->n++];
}

static void print_status(json_t *o)
{
    gcache_t gc;
    json_t *n, *g, *in;
    size_t i, k, q;
    int e;

    memset(&gc, 0, sizeof(gc));
    json_array_foreach(json_object_get(o, "nodes"), i, n) {
        const char *model = jstr(n, "model", "?"), *mode = jstr(n, "mode", "mig");
        ms_geom_t *geom = strcmp(mode, "mig") == 0 ? geom_of(&gc, model) : NULL;

        printf("node %s: %zu x %s (%s)\n", jstr(n, "name", "?"), json_array_size(json_object_get(n, "gpus")), model,
               mode);
        json_array_foreach(json_object_get(n, "gpus"), k, g) {
            char label[32], note[96];
            json_t *insts = json_object_get(g, "instances");

            snprintf(label, sizeof(label), "  GPU %-3d", (int)json_integer_value(json_object_get(g, "gpu")));
            snprintf(note, sizeof(note), "  FragCost %.3f  %s", json_number_value(json_object_get(g, "fragcost")),
                     jstr(g, "load", "?"));
            if (geom != NULL) {
                ms_gi_t gis[MS_MAX_WIDTH];
                const char *tags[MS_MAX_WIDTH];
                int ng = 0;

                json_array_foreach(insts, q, in) {
                    int p = ms_geom_profile_find(geom, jstr(in, "profile", ""));

                    if (p < 0 || ng == MS_MAX_WIDTH)
                        continue;
                    gis[ng].prof = (int8_t)p;
                    gis[ng].start = (int8_t)json_integer_value(json_object_get(in, "start"));
                    tags[ng] = jstr(in, "job", NULL);
                    ng++;
                }
                ms_slicemap_row(stdout, geom, label, gis, ng, tags, note);
            } else {
                printf("%s |", label);
                json_array_foreach(insts, q, in)
                    printf(" %s:%s |", jstr(in, "profile", "?"), jstr(in, "job", "-"));
                for (e = (int)json_array_size(insts); e < (int)json_integer_value(json_object_get(g, "replicas")); e++)
                    printf(" free |");
                printf("  %s\n", jstr(g, "load", "?"));
            }
        }
        if (geom != NULL)
            ms_slicemap_ruler(stdout, geom, 10);
    }
    printf("queue (%lld):", (long long)json_integer_value(json_object_get(o, "queued")));
    json_array_foreach(json_object_get(o, "queue"), i, n)
        printf(" %s", json_string_value(n));
    printf("\n");
    for (e = 0; e < gc.n; e++)
        ms_geom_destroy(gc.g[e]);
}

/* The tenants' table (GET /v1/tenants, docs/tenants.md). */
static void print_tenants(json_t *a)
{
    json_t *t;
    size_t i;

    if (json_array_size(a) == 0)
        return;
    printf("tenants:\n  %-20s %7s %9s %7s %9s %13s %7s %7s %7s %7s\n", "name", "weight", "guarantee",
           "limit", "mem-limit", "mem-guarantee", "usage", "share", "running", "waiting");
    json_array_foreach(a, i, t) {
        json_t *lim = json_object_get(t, "limit_slices"), *mem = json_object_get(t, "limit_mem_gb");
        json_t *mg = json_object_get(t, "guarantee_mem_gb");
        char limit[24], memlim[32], memg[32];

        if (json_is_integer(lim))
            snprintf(limit, sizeof(limit), "%lld", (long long)json_integer_value(lim));
        else
            snprintf(limit, sizeof(limit), "-");
        /* GB, as the JSON and --tenant's mem-limit give it; null: none */
        if (json_is_number(mem))
            snprintf(memlim, sizeof(memlim), "%gGB", json_number_value(mem));
        else
            snprintf(memlim, sizeof(memlim), "-");
        if (json_is_number(mg))
            snprintf(memg, sizeof(memg), "%gGB", json_number_value(mg));
        else
            snprintf(memg, sizeof(memg), "-");
        printf("  %-20s %7g %9lld %7s %9s %13s %7lld %7.3f %7lld %7lld%s\n", jstr(t, "name", "?"),
               json_number_value(json_object_get(t, "weight")),
               (long long)json_integer_value(json_object_get(t, "guarantee_slices")), limit, memlim, memg,
               (long long)json_integer_value(json_object_get(t, "usage_slices")),
               json_number_value(json_object_get(t, "share")),
               (long long)json_integer_value(json_object_get(t, "running")),
               (long long)json_integer_value(json_object_get(t, "waiting")),
               json_is_false(json_object_get(t, "declared")) ? "  (no longer declared)" : "");
    }
}

int ms_cli_status(int argc, char **argv)
{
    conn_t c;
    json_t *o, *ten = NULL;
    long code;
    int i, rc, r;
    bool as_json = false;

    conn_init(&c, "status");
    for (i = 1; i < argc; i++) {
        if ((r = conn_opt(&c, argc, argv, &i)) < 0) {
            conn_free(&c);
            return EX_USAGE;
        }
        if (r == 0 && strcmp(argv[i], "--json") == 0) {
            as_json = true;
            continue;
        }
        if (r == 0) {
            fprintf(stderr, "usage: migsched status [--server URL] [--json]\n");
            conn_free(&c);
            return strcmp(argv[i], "--help") == 0 ? 0 : EX_USAGE;
        }
    }
    code = request(&c, "GET", "/v1/cluster", NULL, 30, &o);
    if ((rc = verdict(&c, code, o)) == EX_OK) {
        /* a daemon from before tenants answers 404: the status without them */
        if (request(&c, "GET", "/v1/tenants", NULL, 30, &ten) == 200 && json_is_object(ten))
            json_object_set(o, "tenants", json_object_get(ten, "tenants"));
        if (as_json) {
            char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);

            if (s == NULL)
                rc = EX_REFUSED;
            else
                printf("%s\n", s);
            free(s);
        } else {
            print_status(o);
            print_tenants(json_object_get(o, "tenants"));
        }
    }
    json_decref(ten);
    json_decref(o);
    conn_free(&c);
    return rc;
}

/* --- submit ------------------------------------------------------------- */

int ms_cli_submit(int argc, char **argv)
{
    conn_t c;
    json_t *req = json_object(), *labels = json_object(), *o = NULL;
    long code;
    int i, r, rc = EX_USAGE;
    char *body = NULL;

    conn_init(&c, "submit");
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        long n;

        if ((r = conn_opt(&c, argc, argv, &i)) < 0)
            goto out;
        if (r > 0)
            continue;
        if (strcmp(a, "--migratable") == 0) {
            json_object_set_new(req, "migratable", json_true());
            continue;
        }
        if (v == NULL)
            goto usage;
        i++;
        if (strcmp(a, "--id") == 0 || strcmp(a, "--profile") == 0 || strcmp(a, "--model") == 0 ||
            strcmp(a, "--isolation") == 0 || strcmp(a, "--tenant") == 0)
            json_object_set_new(req, a + 2, json_string(v));
        else if (strcmp(a, "--mem-gb") == 0 && parse_double(v, &x))
            json_object_set_new(req, "mem_gb", json_real(x));
        else if (strcmp(a, "--duration") == 0 && parse_double(v, &x))
            json_object_set_new(req, "duration_s", json_real(x));
        else if (strcmp(a, "--estimate") == 0 && parse_double(v, &x))
            json_object_set_new(req, "estimate_s", json_real(x));
        else if ((strcmp(a, "--gang") == 0 || strcmp(a, "--priority") == 0) && parse_long(v, &n))
            json_object_set_new(req, a + 2, json_integer(n));
        else if (strcmp(a, "--label") == 0 && strchr(v, '=') != NULL) {
            char key[64];
            size_t kl = (size_t)(strchr(v, '=') - v);

            if (kl == 0 || kl >= sizeof(key))
                goto usage;
            memcpy(key, v, kl);
            key[kl] = '\0';
            json_object_set_new(labels, key, json_string(strchr(v, '=') + 1));
        } else {
            fprintf(stderr, "migsched submit: bad option or value: %s %s\n", a, v);
            goto usage;
        }
    }
    if (json_object_size(labels) > 0)
        json_object_set(req, "labels", labels);
    if ((body = json_dumps(req, JSON_COMPACT)) == NULL)
        goto out;
    code = request(&c, "POST", "/v1/jobs", body, 30, &o);
    if ((rc = verdict(&c, code, o)) == EX_OK) {
        json_t *p = json_object_get(o, "placement");

        printf("%s %s", jstr(o, "id", "?"), jstr(o, "state", "?"));
        if (p != NULL)
            printf(" %s/%d@%d %s", jstr(p, "node", "?"), (int)json_integer_value(json_object_get(p, "gpu")),
                   (int)json_integer_value(json_object_get(p, "start")), jstr(p, "profile", "?"));
        printf("\n");
    }
    goto out;
usage:
    fprintf(stderr, "usage: migsched submit (--profile P | --mem-gb N) [--id ID] [--model M] [--isolation any|mig]\n"
                    "       [--gang N] [--priority N] [--migratable] [--duration S] [--estimate S] [--label K=V]...\n"
                    "       [--tenant NAME]\n"
                    "       [--server URL] [--token-file FILE]\n");
    rc = EX_USAGE;
out:
    free(body);
    json_decref(o);
    json_decref(req);
    json_decref(labels);
    conn_free(&c);
    return rc;
}

/* --- jobs, cancel ------------------------------------------------------- */

static void print_job_line(json_t *j)
{
    json_t *p = json_object_get(j, "placement");
    char where[96] = "-";

    if (p != NULL)
        snprintf(where, sizeof(where), "%s/%d@%d %s", jstr(p, "node", "?"),
                 (int)json_integer_value(json_object_get(p, "gpu")),
                 (int)json_integer_value(json_object_get(p, "start")), jstr(p, "profile", "?"));
    printf("%-24s %-10s %s\n", jstr(j, "id", "?"), jstr(j, "state", "?"), where);
}

int ms_cli_jobs(int argc, char **argv)
{
    conn_t c;
    char path[1024], *cur = NULL;
    const char *state = NULL, *label = NULL;
    long limit = 100, code;
    bool all = false;
    int i, r, rc = EX_OK;

    conn_init(&c, "jobs");
    for (i = 1; i < argc; i++) {
        if ((r = conn_opt(&c, argc, argv, &i)) < 0) {
            conn_free(&c);
            return EX_USAGE;
        }
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--state") == 0 && i + 1 < argc)
            state = argv[++i];
        else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc)
            label = argv[++i];
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc && parse_long(argv[i + 1], &limit))
            i++;
        else {
            fprintf(stderr, "usage: migsched jobs [--state S] [--label K=V] [--limit N] [--all] [--server URL]\n");
            conn_free(&c);
            return EX_USAGE;
        }
    }
    printf("%-24s %-10s %s\n", "ID", "STATE", "PLACEMENT");
    for (;;) {
        json_t *o, *j;
        size_t k;
        char *q_state = state != NULL ? curl_easy_escape(NULL, state, 0) : NULL;
        char *q_label = label != NULL ? curl_easy_escape(NULL, label, 0) : NULL;

        snprintf(path, sizeof(path), "/v1/jobs?limit=%ld%s%s%s%s%s%s", limit, q_state ? "&state=" : "",
                 q_state ? q_state : "", q_label ? "&label=" : "", q_label ? q_label : "", cur ? "&cursor=" : "",
                 cur ? cur : "");
        curl_free(q_state);
        curl_free(q_label);
        free(cur);
        cur = NULL;
        code = request(&c, "GET", path, NULL, 30, &o);
        if ((rc = verdict(&c, code, o)) != EX_OK) {
            json_decref(o);
            break;
        }
        json_array_foreach(json_object_get(o, "jobs"), k, j)
            print_job_line(j);
        if (all && json_is_string(json_object_get(o, "next")))
            cur = strdup(json_string_value(json_object_get(o, "next")));
        json_decref(o);
        if (cur == NULL)
            break;
    }
    free(cur);
    conn_free(&c);
    return rc;
}

int ms_cli_cancel(int argc, char **argv)
{
    conn_t c;
    char path[512];
    int i, r, rc = EX_OK, n = 0;

    conn_init(&c, "cancel");
    for (i = 1; i < argc; i++) {
        json_t *o;
        char *id;
        long code;
        int one;

        if ((r = conn_opt(&c, argc, argv, &i)) < 0) {
            conn_free(&c);
            return EX_USAGE;
        }
        if (r > 0)
            continue;
        if (argv[i][0] == '-') {
            fprintf(stderr, "usage: migsched cancel ID... [--server URL] [--token-file FILE]\n");
            conn_free(&c);
            return EX_USAGE;
        }
        id = curl_easy_escape(NULL, argv[i], 0);
        snprintf(path, sizeof(path), "/v1/jobs/%s", id != NULL ? id : "");
        curl_free(id);
        code = request(&c, "DELETE", path, NULL, 30, &o);
        if ((one = verdict(&c, code, o)) == EX_OK)
            printf("%s %s\n", jstr(o, "id", "?"), jstr(o, "state", "?"));
        else if (rc == EX_OK)
            rc = one;
        json_decref(o);
        n++;
    }
    conn_free(&c);
    if (n == 0) {
        fprintf(stderr, "usage: migsched cancel ID... [--server URL] [--token-file FILE]\n");
        return EX_USAGE;
    }
    return rc;
}

/* --- watch -------------------------------------------------------------- */

int ms_cli_watch(int argc, char **argv)
{
    conn_t c;
    const char *job = NULL, *until = NULL;
    long since = 0, count = -1, code;
    int i, r, rc = EX_OK;

    conn_init(&c, "watch");
    for (i = 1; i < argc; i++) {
        if ((r = conn_opt(&c, argc, argv, &i)) < 0) {
            conn_free(&c);
            return EX_USAGE;
        }
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--job") == 0 && i + 1 < argc)
            job = argv[++i];
        else if (strcmp(argv[i], "--until") == 0 && i + 1 < argc)
            until = argv[++i];
        else if (strcmp(argv[i], "--since") == 0 && i + 1 < argc && parse_long(argv[i + 1], &since) && since >= 0)
            i++;
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc && parse_long(argv[i + 1], &count) && count > 0)
            i++;
        else {
            fprintf(stderr, "usage: migsched watch [--job ID] [--until STATE] [--since N] [--count N] [--server URL]\n"
                            "  prints job state changes as they happen; --until STATE (with --job) exits 0\n"
                            "  when the job reaches it; --count N exits after N events\n");
            conn_free(&c);
            return EX_USAGE;
        }
    }
    for (;;) {
        char path[128];
        json_t *o, *e;
        size_t k;

        snprintf(path, sizeof(path), "/v1/events?since=%ld&timeout=25", since);
        code = request(&c, "GET", path, NULL, 40, &o);
        if ((rc = verdict(&c, code, o)) != EX_OK) {
            json_decref(o);
            break;
        }
        json_array_foreach(json_object_get(o, "events"), k, e) {
            const char *id = jstr(e, "job", ""), *st = jstr(e, "state", "");

            if (job != NULL && strcmp(job, id) != 0)
                continue;
            printf("%lld %.3f %s %s\n", (long long)json_integer_value(json_object_get(e, "seq")),
                   json_number_value(json_object_get(e, "t")), id, st);
            fflush(stdout);
            if ((until != NULL && strcmp(until, st) == 0) || (count > 0 && --count == 0)) {
                json_decref(o);
                conn_free(&c);
                return EX_OK;
            }
        }
        since = (long)json_integer_value(json_object_get(o, "next"));
        json_decref(o);
    }
    conn_free(&c);
    return rc;
}
