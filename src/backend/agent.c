/* agent.c - the agent backend (backend.h): each node's migsched-agent
 * executes that node's ops (docs/agent.md).
 *
 * The daemon numbers GPUs globally; an agent numbers its own node's GPUs
 * from 0. Every op goes to the agent of its GPU as POST /v1/ops with
 * node-local numbers, and the agent answers with its node's whole
 * inventory after the op, which replaces that node's mirror kept here. The
 * mirror is only a cache of the agents' truth (read from every agent at
 * open, and again by refresh: a standby that becomes the leader reads
 * every agent afresh, since its copy is the past), so inventory and uuid
 * lookups never wait on the network. An agent that does not answer at
 * open is reported stale, not fatal (a standby must start while a node is
 * down); one whose GPUs are not the node's is.
 *
 * Deadlines: each op is one request, sent once, within the op's deadline
 * (connect within 5 s of it). When no answer comes, a request that never
 * left (no connection) failed; one that may have been acted on is checked:
 * the node's inventory is read within what is left of the deadline and the
 * op is done if its effect is there (the agent's own retries are
 * idempotent, but a hung agent must not cost two deadlines: issue 20,
 * defect 7). Otherwise the op fails as "unreachable" and the executor backs
 * off; /v1/cluster's backend.in_sync shows any difference. A create the
 * agent refuses because its slices are taken (409) re-reads the node's
 * inventory, so that the daemon re-plans with what the agent reported.
 *
 * A MOVE between GPUs of two nodes is two calls: START on the target node's
 * idle instance, then STOP on the source's.
 *
 * Any thread (backend.h): requests hold no lock, so an op on one node never
 * waits for a slow agent of another; each node's mirror has its own mutex,
 * held to replace or copy it.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/agent_int.h"
#include "daemon/daemon.h"

typedef struct ab_node {
    char *url;                      /* base URL, no trailing slash */
    int first, n;                   /* global GPUs first .. first + n - 1 */
    pthread_mutex_t mu;             /* guards the mirror: v, nv, cap */
    bool mu_init;
    ms_binst_t *v;
    int nv, cap;
    atomic_bool known;              /* read once: its GPUs' uuids are set (never again) */
} ab_node_t;

typedef struct ab {
    int ngpus;
    const ms_geom_t **geom;         /* [ngpus] */
    int *node_of;                   /* [ngpus] index into nodes */
    ab_node_t *nodes;
    int nnodes;
    char (*gpu_uuid)[48];           /* [ngpus]; fixed once open */
    char *auth;                     /* "Authorization: Bearer ...", NULL none */
    bool curl;                      /* curl_global_init done */
} ab_t;

/* The time left before deadline (CLOCK_MONOTONIC seconds). */
static double left(double deadline)
{
    return deadline - ms_clock_mono();
}

/* Replace node's mirror with the instances the agent listed (node-local
 * GPU numbers, profile names). The list is built first, then swapped in
 * under the node's lock. */
static int refresh(ab_t *a, int node, const json_t *insts)
{
    ab_node_t *nd = &a->nodes[node];
    ms_binst_t *v, *old;
    size_t i;
    int n = 0, rc = 0;
    json_t *o;

    if (!json_is_array(insts))
        return -1;
    if ((v = calloc(json_array_size(insts) + 1, sizeof(*v))) == NULL)
        return -1;
    json_array_foreach(insts, i, o) {
        json_int_t gl = json_integer_value(json_object_get(o, "gpu"));
        json_int_t st = json_integer_value(json_object_get(o, "start"));
        const char *prof = json_string_value(json_object_get(o, "profile"));
        const char *job = json_string_value(json_object_get(o, "job"));
        const char *uuid = json_string_value(json_object_get(o, "uuid"));
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
        v[n].gpu = g;
        v[n].start = (int8_t)st;
        v[n].prof = (int8_t)p;
        snprintf(v[n].job, sizeof(v[n].job), "%s", job != NULL ? job : "");
        snprintf(v[n].uuid, sizeof(v[n].uuid), "%s", uuid != NULL ? uuid : "");
        n++;
    }
    pthread_mutex_lock(&nd->mu);
    old = nd->v;
    nd->v = v;
    nd->nv = n;
    nd->cap = (int)json_array_size(insts) + 1;
    pthread_mutex_unlock(&nd->mu);
    free(old);
    return rc;
}

static void refresh_or_warn(ab_t *a, int node, const json_t *insts)
{
    if (refresh(a, node, insts) != 0)
        ms_log("warn", "agent: an instance in the inventory could not be mirrored",
               json_pack("{s:s}", "agent", a->nodes[node].url));
}

/* What an op leaves behind, to tell from an inventory whether an
 * unanswered request was acted on (global GPU numbers). */
typedef struct effect {
    int kind;                       /* MS_OP_*, or -1 for the agent's reap */
    int gpu, start, prof;
    int from_gpu, from_start;
    const char *job;
} effect_t;

/* (nd->mu held) The mirror's instance at (gpu, start) (a slot: running
 * job), -1 none. */
static int mirror_at(const ab_node_t *nd, int gpu, int start, const char *job)
{
    int i;

    for (i = 0; i < nd->nv; i++)
        if (nd->v[i].gpu == gpu && nd->v[i].start == start &&
            (start >= 0 || job == NULL || strcmp(nd->v[i].job, job) == 0))
            return i;
    return -1;
}

/* Does node's mirror show the op's effect? */
static bool effect_there(ab_t *a, int node, const effect_t *e)
{
    ab_node_t *nd = &a->nodes[node];
    const char *job = e->job != NULL ? e->job : "";
    int i, f;
    bool yes = false;

    pthread_mutex_lock(&nd->mu);
    i = mirror_at(nd, e->gpu, e->start, e->start < 0 ? job : NULL);
    switch (e->kind) {
    case MS_OP_CREATE:
        yes = i >= 0 && nd->v[i].prof == e->prof && nd->v[i].job[0] == '\0';
        break;
    case MS_OP_DESTROY:
    case -1:
        yes = i < 0;
        break;
    case MS_OP_START:
        yes = i >= 0 && strcmp(nd->v[i].job, job) == 0;
        break;
    case MS_OP_STOP:
        yes = i < 0 || strcmp(nd->v[i].job, job) != 0;
        break;
    case MS_OP_MOVE:
        f = mirror_at(nd, e->from_gpu, e->from_start, job);
        yes = i >= 0 && strcmp(nd->v[i].job, job) == 0 && (f < 0 || strcmp(nd->v[f].job, job) != 0);
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&nd->mu);
    return yes;
}

/* GET /v1/inventory of node within the deadline: the mirror replaced. */
static long reread(ab_t *a, int node, double deadline, json_t **inv, ms_diag_t *why)
{
    long code;

    *inv = NULL;
    if (left(deadline) <= 0) {
        ms_diag_set(why, NULL, 0, MS_BACKEND_UNREACHABLE, "agent %.120s: the deadline passed", a->nodes[node].url);
        return 0;
    }
    code = ms__agent_call(a->nodes[node].url, a->auth, "GET", "/v1/inventory", NULL, left(deadline), inv, NULL, why);
    if (code == 200)
        refresh_or_warn(a, node, json_object_get(*inv, "instances"));
    return code;
}

/* An agent's error answer as a status, why naming whose fault it is. */
static ms_status_t answer_failed(ab_t *a, int node, const effect_t *eff, long code, json_t *r, ms_diag_t *why)
{
    const json_t *err = json_object_get(r, "error");
    const char *m = json_string_value(json_object_get(err, "message"));
    const char *reason = json_string_value(json_object_get(err, "reason"));
    bool taken = code == 409 && reason != NULL &&
                 (strcmp(reason, "insufficient-resources") == 0 || (eff->kind == MS_OP_CREATE && strcmp(reason, "conflict") == 0));
    bool lost = code >= 500 && reason != NULL && strcmp(reason, MS_BACKEND_GPU_LOST) == 0;

    ms_diag_set(why, NULL, 0, taken ? MS_BACKEND_REFUSED : lost ? MS_BACKEND_GPU_LOST : "",
                "agent %.100s: HTTP %ld: %.120s", a->nodes[node].url, code, m != NULL ? m : "no error message");
    if (taken)
        return MS_ENOFIT;
    return code == 409 ? MS_ESTATE : code == 400 ? MS_EINVAL : code == 404 ? MS_ENOENT : MS_EIO;
}

/* POST /v1/ops on one node, sent once, within the deadline; MS_OK with the
 * mirror refreshed, else why. body is consumed. */
static ms_status_t post_op(ab_t *a, int node, json_t *body, const effect_t *eff, double deadline, ms_diag_t *why)
{
    json_t *r = NULL, *inv = NULL;
    long code;
    bool sent = false;
    ms_status_t st;
    ms_diag_t ignore;

    if (body == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    code = left(deadline) > 0 ? ms__agent_call(a->nodes[node].url, a->auth, "POST", "/v1/ops", body, left(deadline),
                                               &r, &sent, why)
                              : 0;
    json_decref(body);
    if (code == 200) {
        refresh_or_warn(a, node, json_object_get(r, "instances"));
        json_decref(r);
        return MS_OK;
    }
    if (code == 0) {
        if (why->msg[0] == '\0')
            ms_diag_set(why, NULL, 0, MS_BACKEND_UNREACHABLE, "agent %.120s: no answer within the op's deadline",
                        a->nodes[node].url);
        /* the agent may have acted on it: look, once, with what time is left */
        if (sent && reread(a, node, deadline, &inv, &ignore) == 200 && effect_there(a, node, eff)) {
            ms_log("info", "agent: an op's answer was lost; the inventory shows it done",
                   json_pack("{s:s,s:s}", "agent", a->nodes[node].url, "op",
                             eff->kind < 0 ? "reap" : ms_backend_op_name(eff->kind)));
            json_decref(inv);
            ms_diag_clear(why);
            return MS_OK;
        }
        json_decref(inv);
        snprintf(why->field, sizeof(why->field), "%s", MS_BACKEND_UNREACHABLE);
        return MS_EIO;
    }
    st = answer_failed(a, node, eff, code, r, why);
    json_decref(r);
    if (st == MS_ENOFIT) {   /* re-plan with the agent's truth */
        (void)reread(a, node, deadline, &inv, &ignore);
        json_decref(inv);
    }
    return st;
}

static json_t *op_body(const ab_t *a, const char *kind, int gpu, int start, const char *prof, const char *job)
{
    return json_pack("{s:s,s:i,s:i,s:s,s:s}", "op", kind, "gpu", gpu - a->nodes[a->node_of[gpu]].first,
                     "start", start, "profile", prof != NULL ? prof : "", "job", job != NULL ? job : "");
}

static double deadline_of(double timeout_s)
{
    return ms_clock_mono() + (timeout_s > 0 ? timeout_s : MS__AGENT_TIMEOUT_S);
}

static ms_status_t ab_run(void *impl, const ms_backend_op_t *bop, ms_diag_t *why)
{
    ab_t *a = impl;
    const ms_op_t *op = &bop->op;
    double deadline = deadline_of(bop->timeout_s);
    bool reap = bop->force && op->kind == MS_OP_DESTROY;
    const char *kind = reap ? "reap" : ms_backend_op_name(op->kind);
    effect_t eff;
    int node, from;
    json_t *body;
    ms_status_t st;

    if (op->gpu < 0 || op->gpu >= a->ngpus || op->kind < MS_OP_CREATE || op->kind > MS_OP_STOP ||
        (op->kind == MS_OP_MOVE && (op->from_gpu < 0 || op->from_gpu >= a->ngpus))) {
        ms_diag_set(why, NULL, 0, "", "op out of range");
        return MS_EINVAL;
    }
    memset(&eff, 0, sizeof(eff));
    eff.kind = reap ? -1 : op->kind;
    eff.gpu = op->gpu;
    eff.start = op->start;
    eff.prof = op->prof;
    eff.from_gpu = op->from_gpu;
    eff.from_start = op->from_start;
    eff.job = bop->job;
    node = a->node_of[op->gpu];
    if (op->kind == MS_OP_MOVE && (from = a->node_of[op->from_gpu]) != node) {
        /* across nodes: the job starts on the target's idle instance (or a
         * time-slice slot), then stops on the source */
        eff.kind = MS_OP_START;
        if ((st = post_op(a, node, op_body(a, "start", op->gpu, op->start, bop->profile, bop->job), &eff, deadline,
                          why)) != MS_OK)
            return st;
        eff.kind = MS_OP_STOP;
        eff.gpu = op->from_gpu;
        eff.start = op->from_start;
        return post_op(a, from, op_body(a, "stop", op->from_gpu, op->from_start, "", bop->job), &eff, deadline, why);
    }
    if ((body = op_body(a, kind, op->gpu, op->start, bop->profile, bop->job)) != NULL && op->kind == MS_OP_MOVE) {
        json_object_set_new(body, "from_gpu", json_integer(op->from_gpu - a->nodes[node].first));
        json_object_set_new(body, "from_start", json_integer(op->from_start));
        json_object_set_new(body, "bbm", json_boolean(op->bbm));
    }
    return post_op(a, node, body, &eff, deadline, why);
}

/* The node's agent answers and lists the GPU: its inventory replaces the
 * mirror. */
static ms_status_t ab_probe(void *impl, int gpu, double timeout_s, ms_diag_t *why)
{
    ab_t *a = impl;
    json_t *inv = NULL;
    const json_t *gpus;
    int node;
    long code;

    if (gpu < 0 || gpu >= a->ngpus) {
        ms_diag_set(why, NULL, 0, "gpu", "no such GPU");
        return MS_EINVAL;
    }
    node = a->node_of[gpu];
    code = reread(a, node, deadline_of(timeout_s), &inv, why);
    gpus = json_object_get(inv, "gpus");
    if (code == 200 && json_is_array(gpus) && (size_t)(gpu - a->nodes[node].first) < json_array_size(gpus)) {
        json_decref(inv);
        return MS_OK;
    }
    if (code != 0)
        ms_diag_set(why, NULL, 0, "", "agent %.120s: GET /v1/inventory answered %ld without GPU %d", a->nodes[node].url, code,
                    gpu - a->nodes[node].first);
    json_decref(inv);
    return MS_EIO;
}

static ms_status_t ab_inventory(void *impl, ms_binst_t **out, int *n, ms_diag_t *why)
{
    ab_t *a = impl;
    ms_binst_t *v = NULL, *nv;
    int k, total = 0;

    for (k = 0; k < a->nnodes; k++) {
        ab_node_t *nd = &a->nodes[k];

        pthread_mutex_lock(&nd->mu);
        if ((nv = realloc(v, (size_t)(total + nd->nv + 1) * sizeof(*v))) == NULL) {
            pthread_mutex_unlock(&nd->mu);
            free(v);
            ms_diag_set(why, NULL, 0, "", "out of memory");
            return MS_ENOMEM;
        }
        v = nv;
        if (nd->nv > 0)
            memcpy(v + total, nd->v, (size_t)nd->nv * sizeof(*v));
        total += nd->nv;
        pthread_mutex_unlock(&nd->mu);
    }
    if (v == NULL && (v = malloc(sizeof(*v))) == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    *out = v;
    *n = total;
    return MS_OK;
}

/* The agents name their own instances: nothing to adopt. */
static ms_status_t ab_adopt_uuid(void *impl, int gpu, int start, const char *uuid, ms_diag_t *why)
{
    (void)impl;
    (void)gpu;
    (void)start;
    (void)uuid;
    (void)why;
    return MS_OK;
}

static const char *ab_gpu_uuid(const void *impl, int gpu)
{
    const ab_t *a = impl;

    return gpu >= 0 && gpu < a->ngpus && atomic_load(&a->nodes[a->node_of[gpu]].known) ? a->gpu_uuid[gpu] : "";
}

static void ab_inst_uuid(void *impl, int gpu, int start, const char *job, char *buf, size_t len)
{
    ab_t *a = impl;
    ab_node_t *nd;
    int i;

    buf[0] = '\0';
    if (gpu < 0 || gpu >= a->ngpus)
        return;
    nd = &a->nodes[a->node_of[gpu]];
    pthread_mutex_lock(&nd->mu);
    for (i = 0; i < nd->nv; i++)
        if (nd->v[i].gpu == gpu && nd->v[i].start == start &&
            (start >= 0 || job == NULL || strcmp(nd->v[i].job, job) == 0))
            break;
    snprintf(buf, len, "%s", i < nd->nv ? nd->v[i].uuid : "");
    pthread_mutex_unlock(&nd->mu);
}

/* --- open and close ---------------------------------------------------------- */

/* The agent's GPUs must be the node's: count and models. */
static ms_status_t check_node(ab_t *a, int node, const json_t *inv, ms_diag_t *why)
{
    const ab_node_t *nd = &a->nodes[node];
    const json_t *gpus = json_object_get(inv, "gpus");
    int g;

    if (json_array_size(gpus) != (size_t)nd->n) {
        ms_diag_set(why, NULL, 0, "", "agent %.150s reports %zu GPUs, the node has %d", nd->url,
                    json_array_size(gpus), nd->n);
        return MS_EINVAL;
    }
    for (g = 0; g < nd->n; g++) {
        const json_t *o = json_array_get(gpus, (size_t)g);
        const char *model = json_string_value(json_object_get(o, "model"));
        const char *uuid = json_string_value(json_object_get(o, "uuid"));
        const ms_model_t *want = ms_geom_model(a->geom[nd->first + g]);

        if (model == NULL || ms_model_find(model) != want) {
            ms_diag_set(why, NULL, 0, "", "agent %.150s: GPU %d is a %.40s, the node says %s", nd->url, g,
                        model != NULL ? model : "?", want->name);
            return MS_EINVAL;
        }
        if (!atomic_load(&nd->known))
            snprintf(a->gpu_uuid[nd->first + g], sizeof(a->gpu_uuid[0]), "%.47s", uuid != NULL ? uuid : "");
    }
    return MS_OK;
}

static int load_token(ab_t *a, const char *path)
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

static void ab_close(void *impl)
{
    ab_t *a = impl;
    int k;

    if (a == NULL)
        return;
    for (k = 0; a->nodes != NULL && k < a->nnodes; k++) {
        free(a->nodes[k].url);
        free(a->nodes[k].v);
        if (a->nodes[k].mu_init)
            pthread_mutex_destroy(&a->nodes[k].mu);
    }
    free(a->nodes);
    free(a->geom);
    free(a->node_of);
    free(a->gpu_uuid);
    free(a->auth);
    if (a->curl)
        curl_global_cleanup();
    free(a);
}

/* A node is a run of GPUs with one URL and local numbers 0, 1, ... */
static ms_status_t map_nodes(ab_t *a, const ms_backend_cfg_t *cfg, ms_diag_t *why)
{
    int g, k;

    for (g = 0; g < cfg->ngpus; g++) {
        a->geom[g] = cfg->gpu_geom[g];
        if (cfg->gpu_local[g] == 0) {
            ab_node_t *nd = &a->nodes[a->nnodes++];

            if ((nd->url = strdup(cfg->gpu_agent[g])) == NULL || pthread_mutex_init(&nd->mu, NULL) != 0) {
                ms_diag_set(why, NULL, 0, "", "out of memory");
                return MS_ENOMEM;
            }
            nd->mu_init = true;
            k = (int)strlen(nd->url);
            while (k > 0 && nd->url[k - 1] == '/')
                nd->url[--k] = '\0';
            nd->first = g;
        }
        if (a->nnodes == 0 || cfg->gpu_local[g] != g - a->nodes[a->nnodes - 1].first) {
            ms_diag_set(why, NULL, 0, "", "the agent backend: bad GPU numbering");
            return MS_EINVAL;
        }
        a->nodes[a->nnodes - 1].n++;
        a->node_of[g] = a->nnodes - 1;
    }
    return MS_OK;
}

/* One agent's inventory, checked against its node, into its mirror:
 * MS_OK, MS_EIO when it did not answer in time, MS_EINVAL when its GPUs
 * are not the node's. */
static ms_status_t read_node(ab_t *a, int k, double timeout_s, ms_diag_t *why)
{
    json_t *r;
    long code = ms__agent_call(a->nodes[k].url, a->auth, "GET", "/v1/inventory", NULL, timeout_s, &r, NULL, why);
    ms_status_t st;

    if (code != 200 || r == NULL) {
        if (code != 0)
            ms_diag_set(why, NULL, 0, "", "agent %.150s: GET /v1/inventory answered %ld", a->nodes[k].url, code);
        json_decref(r);
        return MS_EIO;
    }
    if ((st = check_node(a, k, r, why)) != MS_OK) {
        json_decref(r);
        return st;
    }
    atomic_store(&a->nodes[k].known, true);   /* after the uuids */
    refresh_or_warn(a, k, json_object_get(r, "instances"));
    json_decref(r);
    return MS_OK;
}

#define READERS 8   /* agents read at once by a refresh */

typedef struct reading {
    ab_t *a;
    const bool *want;              /* [nnodes] */
    ms_status_t *st;               /* [nnodes] */
    ms_diag_t *why;                /* [nnodes] */
    double timeout_s;
    atomic_int next;
} reading_t;

static void *reader(void *arg)
{
    reading_t *r = arg;
    int k;

    while ((k = atomic_fetch_add(&r->next, 1)) < r->a->nnodes)
        if (r->want[k])
            r->st[k] = read_node(r->a, k, r->timeout_s, &r->why[k]);
    return NULL;
}

/* The agents of the nodes marked in want read at once (one slow agent
 * costs its deadline, not every node's); st[k] each one's outcome. */
static ms_status_t read_nodes(ab_t *a, const bool *want, ms_status_t *st, ms_diag_t *why, double timeout_s)
{
    reading_t r = { a, want, st, why, timeout_s, 0 };
    pthread_t th[READERS];
    int i, n = 0;

    for (i = 0; i < a->nnodes; i++) {
        st[i] = MS_OK;
        ms_diag_clear(&why[i]);
        n += want[i];
    }
    for (i = 0; i < n && i < READERS; i++)
        if (pthread_create(&th[i], NULL, reader, &r) != 0)
            break;
    if (i == 0)
        reader(&r);   /* no thread: read them here, one after the other */
    while (i-- > 0)
        pthread_join(th[i], NULL);
    return MS_OK;
}

/* refresh (backend.h): the nodes of the GPUs marked stale, read again. */
static ms_status_t ab_refresh(void *impl, bool *stale, double timeout_s, ms_diag_t *why)
{
    ab_t *a = impl;
    bool *want = calloc((size_t)a->nnodes + 1, sizeof(*want));
    ms_status_t *st = calloc((size_t)a->nnodes + 1, sizeof(*st));
    ms_diag_t *nwhy = calloc((size_t)a->nnodes + 1, sizeof(*nwhy));
    ms_status_t rc = MS_OK;
    int g, k;

    if (want == NULL || st == NULL || nwhy == NULL) {
        free(want);
        free(st);
        free(nwhy);
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    for (g = 0; g < a->ngpus; g++)
        want[a->node_of[g]] |= stale[g];
    read_nodes(a, want, st, nwhy, timeout_s);
    for (k = 0; k < a->nnodes; k++) {
        if (!want[k])
            continue;
        if (st[k] != MS_OK && rc == MS_OK) {
            *why = nwhy[k];   /* the first node that failed says why */
            rc = st[k] == MS_EINVAL ? MS_EINVAL : MS_OK;
        }
        for (g = a->nodes[k].first; g < a->nodes[k].first + a->nodes[k].n; g++)
            stale[g] = st[k] != MS_OK;
    }
    free(want);
    free(st);
    free(nwhy);
    return rc;
}

#define OPEN_READ_S 5.0   /* an agent has this long to answer at open */

/* Every agent's inventory, checked against its node: a node whose GPUs
 * differ is an error; one whose agent does not answer is logged and left
 * stale (its GPUs' uuids unknown until a refresh reads it). */
static ms_status_t read_agents(ab_t *a, ms_diag_t *why)
{
    bool *stale = calloc((size_t)a->ngpus + 1, sizeof(*stale));
    ms_status_t st;
    int g;

    if (stale == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    for (g = 0; g < a->ngpus; g++)
        stale[g] = true;
    st = ab_refresh(a, stale, OPEN_READ_S, why);
    for (g = 0; st == MS_OK && g < a->ngpus; g++)
        if (stale[g] && a->node_of[g] != (g > 0 ? a->node_of[g - 1] : -1))
            ms_log("warn", "agent: no inventory at open; its node is stale until it answers",
                   json_pack("{s:s,s:s}", "agent", a->nodes[a->node_of[g]].url, "why", why->msg));
    free(stale);
    if (st == MS_OK)
        ms_diag_clear(why);
    return st;
}

static ms_status_t ab_open(const ms_backend_cfg_t *cfg, void **impl, ms_diag_t *why)
{
    ab_t *a = calloc(1, sizeof(*a));
    size_t ng = (size_t)(cfg->ngpus > 0 ? cfg->ngpus : 1);
    ms_status_t st = MS_ENOMEM;

    *impl = NULL;
    ms_diag_set(why, NULL, 0, "", "out of memory");
    if (a == NULL)
        return MS_ENOMEM;
    a->ngpus = cfg->ngpus;
    a->geom = calloc(ng, sizeof(*a->geom));
    a->node_of = calloc(ng, sizeof(*a->node_of));
    a->nodes = calloc(ng, sizeof(*a->nodes));
    a->gpu_uuid = calloc(ng, sizeof(*a->gpu_uuid));
    if (a->geom == NULL || a->node_of == NULL || a->nodes == NULL || a->gpu_uuid == NULL)
        goto fail;
    if (cfg->gpu_agent == NULL || cfg->gpu_local == NULL || cfg->gpu_geom == NULL) {
        ms_diag_set(why, NULL, 0, "agent", "the agent backend needs --agent NODE=URL for every node");
        st = MS_EINVAL;
        goto fail;
    }
    if (cfg->agent_token_file != NULL && load_token(a, cfg->agent_token_file) != 0) {
        ms_diag_set(why, cfg->agent_token_file, 0, "agent-token-file",
                    "cannot read --agent-token-file (one non-empty line)");
        st = MS_EINVAL;
        goto fail;
    }
    if ((st = map_nodes(a, cfg, why)) != MS_OK)
        goto fail;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        st = MS_EIO;
        goto fail;
    }
    a->curl = true;
    ms_diag_clear(why);
    if ((st = read_agents(a, why)) != MS_OK)
        goto fail;
    *impl = a;
    return MS_OK;
fail:
    ab_close(a);
    return st;
}

const ms_backend_ops_t ms_backend_agent = {
    .name = "agent",
    .open = ab_open,
    .close = ab_close,
    .inventory = ab_inventory,
    .create = ab_run,
    .destroy = ab_run,
    .start = ab_run,
    .stop = ab_run,
    .move = ab_run,
    .adopt_uuid = ab_adopt_uuid,
    .gpu_uuid = ab_gpu_uuid,
    .inst_uuid = ab_inst_uuid,
    .probe = ab_probe,
    .refresh = ab_refresh,
};
