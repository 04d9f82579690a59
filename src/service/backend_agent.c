/* backend_agent.c - the agent backend: each node's migsched-agent executes
 * that node's ops (docs/agent.md).
 *
 * migschedd numbers GPUs globally; an agent numbers its own node's GPUs from
 * 0. Every op goes to the agent of its GPU as POST /v1/ops with node-local
 * numbers, and the agent answers with its node's whole inventory after the
 * op, which replaces that node's part of the mirror kept here. The mirror is
 * only a cache of the agents' truth (read from every agent at open), so
 * inventory and uuid lookups from the loop never wait on the network.
 *
 * A request that fails in transport (connection refused, timeout) is sent
 * once more: the agent treats a repeated op as done when the hardware
 * already shows its effect (an idle instance of that profile where a create
 * was asked, none where a destroy was), so a retry never creates twice. If
 * the retry fails too the op fails, and the mirror is re-read from the agent
 * when it answers again; /v1/cluster's backend.in_sync then shows any
 * difference from the scheduler's view.
 *
 * A MOVE between GPUs of two nodes is two calls: START on the target node's
 * idle instance, then STOP on the source's. Only the executor thread (or the
 * loop before the executor starts) calls the op functions; the mirror has
 * its own mutex for the loop's reads.
 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/backend.h"
#include "service/svc.h"

#define ABE_MAX_REPLY (16L << 20)   /* an agent's answer is small; refuse a runaway */
#define ABE_TIMEOUT_S 60L           /* a real MIG create takes seconds, not minutes */

typedef struct abe_node {
    char *url;                      /* base URL, no trailing slash */
    int first, n;                   /* global GPUs first .. first + n - 1 */
} abe_node_t;

struct svc_abe {
    int ngpus;
    const ms_geom_t **geom;         /* [ngpus] */
    int *node_of;                   /* [ngpus] index into nodes */
    abe_node_t *nodes;
    int nnodes;
    char (*gpu_uuid)[48];
    char *auth;                     /* "Authorization: Bearer ...", NULL none */
    pthread_mutex_t mu;             /* guards v, n, cap */
    svc_binst_t *v;
    int n, cap;
    bool curl;                      /* curl_global_init done */
};

static const char *const OPNAME[] = { "?", "create", "destroy", "start", "move", "stop" };

static char open_err[512];          /* open's message: one open at start-up */

typedef struct buf {
    char *p;
    size_t n;
    bool over;
} buf_t;

static size_t on_data(char *d, size_t sz, size_t nm, void *ctx)
{
    buf_t *b = ctx;
    size_t k = sz * nm;
    char *p;

    if (b->over || b->n + k > (size_t)ABE_MAX_REPLY) {
        b->over = true;
        return 0;
    }
    if ((p = realloc(b->p, b->n + k + 1)) == NULL)
        return 0;
    b->p = p;
    memcpy(b->p + b->n, d, k);
    b->n += k;
    b->p[b->n] = '\0';
    return k;
}

/* One HTTP exchange. Returns the status code (0: no answer, msg says why);
 * *reply receives the parsed JSON body (NULL if none or not JSON). */
static long call(const svc_abe_t *a, int node, const char *method, const char *path, json_t *body,
                 json_t **reply, char *msg, size_t mlen)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hdr = NULL, *h2;
    char url[1024], *text = NULL;
    buf_t b = { NULL, 0, false };
    long code = 0;
    CURLcode rc;

    *reply = NULL;
    msg[0] = '\0';
    if (c == NULL || (size_t)snprintf(url, sizeof(url), "%s%s", a->nodes[node].url, path) >= sizeof(url)) {
        snprintf(msg, mlen, "out of memory or URL too long");
        curl_easy_cleanup(c);
        return 0;
    }
    if (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL) {
        snprintf(msg, mlen, "out of memory");
        curl_easy_cleanup(c);
        return 0;
    }
    if ((h2 = curl_slist_append(hdr, "Content-Type: application/json")) != NULL)
        hdr = h2;
    if (a->auth != NULL && (h2 = curl_slist_append(hdr, a->auth)) != NULL)
        hdr = h2;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, ABE_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    if (text != NULL)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
    rc = curl_easy_perform(c);
    if (rc != CURLE_OK)
        snprintf(msg, mlen, "agent %s: %s", a->nodes[node].url,
                 b.over ? "the answer is too large" : curl_easy_strerror(rc));
    else {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        if (b.p != NULL) {
            json_error_t je;

            *reply = json_loads(b.p, 0, &je);
        }
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(c);
    free(text);
    free(b.p);
    return code;
}

/* Replace node's part of the mirror with the instances the agent listed
 * (node-local GPU numbers, profile names). */
static int refresh(svc_abe_t *a, int node, const json_t *insts)
{
    const abe_node_t *nd = &a->nodes[node];
    size_t i;
    int k, rc = 0;
    json_t *o;

    if (!json_is_array(insts))
        return -1;
    pthread_mutex_lock(&a->mu);
    for (k = 0; k < a->n;)
        if (a->v[k].gpu >= nd->first && a->v[k].gpu < nd->first + nd->n)
            a->v[k] = a->v[--a->n];
        else
            k++;
    json_array_foreach(insts, i, o) {
        json_int_t gl = json_integer_value(json_object_get(o, "gpu"));
        json_int_t st = json_integer_value(json_object_get(o, "start"));
        const char *prof = json_string_value(json_object_get(o, "profile"));
        const char *job = json_string_value(json_object_get(o, "job"));
        const char *uuid = json_string_value(json_object_get(o, "uuid"));
        svc_binst_t *in;
        int g, p;

        if (gl < 0 || gl >= nd->n || st < -1 || st > 15 || prof == NULL) {
            rc = -1;
            continue;
        }
        g = nd->first + (int)gl;
        if ((p = ms_geom_profile_find(a->geom[g], prof)) < 0) {
            rc = -1;   /* a profile this daemon's geometry lacks: its slices stay unknown */
            continue;
        }
        if (a->n == a->cap) {
            int cap = a->cap ? a->cap * 2 : 64;
            svc_binst_t *v = realloc(a->v, (size_t)cap * sizeof(*v));

            if (v == NULL) {
                rc = -1;
                break;
            }
            a->v = v;
            a->cap = cap;
        }
        in = &a->v[a->n++];
        memset(in, 0, sizeof(*in));
        in->gpu = g;
        in->start = (int8_t)st;
        in->prof = (int8_t)p;
        snprintf(in->job, sizeof(in->job), "%s", job != NULL ? job : "");
        snprintf(in->uuid, sizeof(in->uuid), "%s", uuid != NULL ? uuid : "");
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Re-read one node's inventory (after a transport failure). */
static void reread(svc_abe_t *a, int node)
{
    json_t *r;
    char msg[256];

    if (call(a, node, "GET", "/v1/inventory", NULL, &r, msg, sizeof(msg)) == 200)
        refresh(a, node, json_object_get(r, "instances"));
    json_decref(r);
}

/* POST /v1/ops on one node; 0 ok (mirror refreshed), -1 with why. */
static int post_op(svc_abe_t *a, int node, json_t *body, const char **why)
{
    static __thread char msg[512];
    json_t *r = NULL;
    long code;
    int try;

    for (try = 0; try < 2; try++) {
        code = call(a, node, "POST", "/v1/ops", body, &r, msg, sizeof(msg));
        if (code != 0)
            break;
        if (try == 0) {
            struct timespec ts = { 0, 200000000L };

            nanosleep(&ts, NULL);
        }
    }
    json_decref(body);
    if (code == 0) {
        reread(a, node);
        *why = msg;
        return -1;
    }
    if (code != 200) {
        const char *m = json_string_value(json_object_get(json_object_get(r, "error"), "message"));

        snprintf(msg, sizeof(msg), "agent %s: HTTP %ld: %.400s", a->nodes[node].url, code,
                 m != NULL ? m : "no error message");
        json_decref(r);
        *why = msg;
        return -1;
    }
    if (refresh(a, node, json_object_get(r, "instances")) != 0)
        svc_log("warn", "agent: an instance in the inventory could not be mirrored",
                json_pack("{s:s}", "agent", a->nodes[node].url));
    json_decref(r);
    return 0;
}

static json_t *op_body(const svc_abe_t *a, const char *kind, int gpu, int start, const char *prof,
                       const char *job)
{
    return json_pack("{s:s,s:i,s:i,s:s,s:s}", "op", kind, "gpu", gpu - a->nodes[a->node_of[gpu]].first,
                     "start", start, "profile", prof != NULL ? prof : "", "job", job != NULL ? job : "");
}

int svc_abe_op(svc_abe_t *a, const ms_op_t *op, const char *job, const char *prof_name, const char **why)
{
    int node, from;
    json_t *body;

    if (op->gpu < 0 || op->gpu >= a->ngpus || op->kind < MS_OP_CREATE || op->kind > MS_OP_STOP ||
        (op->kind == MS_OP_MOVE && (op->from_gpu < 0 || op->from_gpu >= a->ngpus))) {
        *why = "op out of range";
        return -1;
    }
    node = a->node_of[op->gpu];
    if (op->kind == MS_OP_MOVE && (from = a->node_of[op->from_gpu]) != node) {
        /* across nodes: the job starts on the target's idle instance (or a
         * time-slice slot), then stops on the source */
        if (post_op(a, node, op_body(a, "start", op->gpu, op->start, prof_name, job), why) != 0)
            return -1;
        return post_op(a, from, op_body(a, "stop", op->from_gpu, op->from_start, "", job), why);
    }
    if ((body = op_body(a, OPNAME[op->kind], op->gpu, op->start, prof_name, job)) == NULL) {
        *why = "out of memory";
        return -1;
    }
    if (op->kind == MS_OP_MOVE) {
        json_object_set_new(body, "from_gpu", json_integer(op->from_gpu - a->nodes[node].first));
        json_object_set_new(body, "from_start", json_integer(op->from_start));
        json_object_set_new(body, "bbm", json_boolean(op->bbm));
    }
    return post_op(a, node, body, why);
}

int svc_abe_destroy(svc_abe_t *a, const svc_binst_t *in)
{
    const char *why;
    const ms_profile_t *p;

    if (in->gpu < 0 || in->gpu >= a->ngpus)
        return -1;
    p = ms_geom_profile(a->geom[in->gpu], in->prof);
    return post_op(a, a->node_of[in->gpu], op_body(a, "reap", in->gpu, in->start, p->name, in->job), &why);
}

int svc_abe_create(svc_abe_t *a, int gpu, int prof, int start)
{
    const char *why;

    if (gpu < 0 || gpu >= a->ngpus)
        return -1;
    return post_op(a, a->node_of[gpu],
                   op_body(a, "create", gpu, start, ms_geom_profile(a->geom[gpu], prof)->name, ""), &why);
}

int svc_abe_inventory(svc_abe_t *a, svc_binst_t **out, int *n)
{
    pthread_mutex_lock(&a->mu);
    *out = malloc((size_t)(a->n > 0 ? a->n : 1) * sizeof(**out));
    if (*out == NULL) {
        pthread_mutex_unlock(&a->mu);
        return -1;
    }
    if (a->n > 0)
        memcpy(*out, a->v, (size_t)a->n * sizeof(**out));
    *n = a->n;
    pthread_mutex_unlock(&a->mu);
    return 0;
}

const char *svc_abe_gpu_uuid(const svc_abe_t *a, int gpu)
{
    return gpu >= 0 && gpu < a->ngpus ? a->gpu_uuid[gpu] : "";
}

void svc_abe_inst_uuid(svc_abe_t *a, int gpu, int start, const char *job, char *buf, size_t len)
{
    int i;

    pthread_mutex_lock(&a->mu);
    for (i = 0; i < a->n; i++)
        if (a->v[i].gpu == gpu && a->v[i].start == start &&
            (start >= 0 || job == NULL || strcmp(a->v[i].job, job) == 0))
            break;
    snprintf(buf, len, "%s", i < a->n ? a->v[i].uuid : "");
    pthread_mutex_unlock(&a->mu);
}

/* The agent's GPUs must be the node's: count and models. */
static int check_node(svc_abe_t *a, int node, const json_t *inv)
{
    const abe_node_t *nd = &a->nodes[node];
    const json_t *gpus = json_object_get(inv, "gpus");
    int g;

    if (json_array_size(gpus) != (size_t)nd->n) {
        snprintf(open_err, sizeof(open_err), "agent %.300s reports %zu GPUs, the node has %d", nd->url,
                 json_array_size(gpus), nd->n);
        return -1;
    }
    for (g = 0; g < nd->n; g++) {
        const json_t *o = json_array_get(gpus, (size_t)g);
        const char *model = json_string_value(json_object_get(o, "model"));
        const char *uuid = json_string_value(json_object_get(o, "uuid"));
        const ms_model_t *want = ms_geom_model(a->geom[nd->first + g]);

        if (model == NULL || ms_model_find(model) != want) {
            snprintf(open_err, sizeof(open_err), "agent %.300s: GPU %d is a %.64s, the node says %s",
                     nd->url, g, model != NULL ? model : "?", want->name);
            return -1;
        }
        snprintf(a->gpu_uuid[nd->first + g], sizeof(a->gpu_uuid[0]), "%.47s", uuid != NULL ? uuid : "");
    }
    return 0;
}

static int load_token(svc_abe_t *a, const char *path)
{
    FILE *f = fopen(path, "r");
    char tok[4097];
    size_t n, len;

    if (f == NULL)
        return -1;
    n = fread(tok, 1, sizeof(tok) - 1, f);
    fclose(f);
    tok[n] = '\0';
    while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' ' || tok[n - 1] == '\t'))
        tok[--n] = '\0';
    if (n == 0 || strpbrk(tok, "\r\n") != NULL)
        return -1;
    len = n + 32;
    if ((a->auth = malloc(len)) == NULL)
        return -1;
    snprintf(a->auth, len, "Authorization: Bearer %s", tok);
    return 0;
}

int svc_abe_open(const svc_backend_cfg_t *cfg, svc_abe_t **out, const char **err)
{
    svc_abe_t *a = calloc(1, sizeof(*a));
    size_t ng = (size_t)(cfg->ngpus > 0 ? cfg->ngpus : 1);
    int g, k;

    *out = NULL;
    *err = "out of memory";
    if (a == NULL)
        return -1;
    pthread_mutex_init(&a->mu, NULL);
    a->ngpus = cfg->ngpus;
    a->geom = calloc(ng, sizeof(*a->geom));
    a->node_of = calloc(ng, sizeof(*a->node_of));
    a->nodes = calloc(ng, sizeof(*a->nodes));
    a->gpu_uuid = calloc(ng, sizeof(*a->gpu_uuid));
    if (a->geom == NULL || a->node_of == NULL || a->nodes == NULL || a->gpu_uuid == NULL)
        goto fail;
    if (cfg->gpu_agent == NULL || cfg->gpu_local == NULL || cfg->gpu_geom == NULL) {
        *err = "the agent backend needs --agent NODE=URL for every node";
        goto fail;
    }
    if (cfg->agent_token_file != NULL && load_token(a, cfg->agent_token_file) != 0) {
        *err = "cannot read --agent-token-file (one non-empty line)";
        goto fail;
    }
    /* a node is a run of GPUs with one URL and local numbers 0, 1, ... */
    for (g = 0; g < cfg->ngpus; g++) {
        a->geom[g] = cfg->gpu_geom[g];
        if (cfg->gpu_local[g] == 0) {
            abe_node_t *nd = &a->nodes[a->nnodes++];

            if ((nd->url = strdup(cfg->gpu_agent[g])) == NULL)
                goto fail;
            k = (int)strlen(nd->url);
            while (k > 0 && nd->url[k - 1] == '/')
                nd->url[--k] = '\0';
            nd->first = g;
        }
        if (a->nnodes == 0 || cfg->gpu_local[g] != g - a->nodes[a->nnodes - 1].first) {
            *err = "the agent backend: bad GPU numbering";
            goto fail;
        }
        a->nodes[a->nnodes - 1].n++;
        a->node_of[g] = a->nnodes - 1;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        goto fail;
    a->curl = true;
    for (k = 0; k < a->nnodes; k++) {
        json_t *r;
        char msg[300];
        long code = call(a, k, "GET", "/v1/inventory", NULL, &r, msg, sizeof(msg));

        if (code != 200 || r == NULL) {
            if (code == 0)
                snprintf(open_err, sizeof(open_err), "%s", msg);
            else
                snprintf(open_err, sizeof(open_err), "agent %.300s: GET /v1/inventory answered %ld",
                         a->nodes[k].url, code);
            json_decref(r);
            *err = open_err;
            goto fail;
        }
        if (check_node(a, k, r) != 0) {
            json_decref(r);
            *err = open_err;
            goto fail;
        }
        if (refresh(a, k, json_object_get(r, "instances")) != 0)
            svc_log("warn", "agent: an instance in the inventory could not be mirrored",
                    json_pack("{s:s}", "agent", a->nodes[k].url));
        json_decref(r);
    }
    *out = a;
    return 0;
fail:
    svc_abe_close(a);
    return -1;
}

void svc_abe_close(svc_abe_t *a)
{
    int k;

    if (a == NULL)
        return;
    if (a->nodes != NULL)
        for (k = 0; k < a->nnodes; k++)
            free(a->nodes[k].url);
    free(a->nodes);
    free(a->geom);
    free(a->node_of);
    free(a->gpu_uuid);
    free(a->auth);
    free(a->v);
    pthread_mutex_destroy(&a->mu);
    if (a->curl)
        curl_global_cleanup();
    free(a);
}
