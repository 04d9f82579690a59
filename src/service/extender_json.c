/* extender_json.c - the extender's wire format: parse ExtenderArgs and
 * ExtenderBindingArgs, render ExtenderFilterResult, HostPriorityList and
 * ExtenderBindingResult. No daemon state, so it is fuzzed on its own; any
 * thread (the extender workers parse, the loop renders).
 *
 * kube-scheduler's types carry no json tags, so keys are Go field names in
 * PascalCase (ExtenderArgs: Pod, Nodes, NodeNames); the embedded Pod uses the
 * API's camelCase. Go decodes our replies case-insensitively, but we write
 * the exact names, and read the exact names first, then any case.
 *
 * A body that is not the wire type (not JSON, Pod missing, NodeNames not a
 * list of strings) is a 400 naming the field. A well-formed pod the
 * extender cannot serve (two kinds of migsched.io resource, a quantity that
 * is not a whole number) is no protocol error: the caller answers with the
 * result's Error, which kube-scheduler shows in the pod's events.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "migsched/number.h"
#include "service/extender.h"

#define MAX_NODES 100000
#define MAX_GANG 64

/* o[k], exact key first, then any case (Go's decoder is case-insensitive). */
static json_t *getk(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k), *x;
    const char *kk;

    if (v != NULL || !json_is_object(o))
        return v;
    json_object_foreach(o, kk, x)
        if (strcasecmp(kk, k) == 0)
            return x;
    return NULL;
}

static char *dup_str(json_t *v)
{
    const char *s = json_string_value(v);

    if (s == NULL || strlen(s) != json_string_length(v))
        return NULL;   /* not a string, or one with a NUL inside */
    return strdup(s);
}

/* A Kubernetes quantity for an extended resource: a whole number. "1", 2,
 * "10". Returns -1 if it is none (or above 1e6). */
static long quantity(json_t *v)
{
    const char *s;
    char *end;
    long n;

    if (json_is_integer(v))
        return json_integer_value(v) >= 0 && json_integer_value(v) <= 1000000
                   ? (long)json_integer_value(v) : -1;
    if ((s = json_string_value(v)) == NULL || *s == '\0' || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    n = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || n > 1000000)
        return -1;
    return n;
}

/* The daemon's profile rule (svc_profile_syntax): a pod whose resource
 * names no profile ("mig-0g.5gb") is refused here with its reason, as
 * POST /v1/jobs refuses it with a 400. */
static bool profile_text_ok(const char *p)
{
    size_t n = strlen(p);

    return n > 0 && n <= 31 && svc_profile_syntax(p);
}

typedef struct acc {
    char prof[32];
    long mig, mem, share;
    char why[200];
} acc_t;

static void bad(acc_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(acc_t *a, const char *fmt, ...)
{
    va_list ap;

    if (a->why[0] != '\0')
        return;   /* the first reason */
    va_start(ap, fmt);
    vsnprintf(a->why, sizeof(a->why), fmt, ap);
    va_end(ap);
}

/* One container's resources: requests where it has the key, else limits. */
static int add_resources(acc_t *a, json_t *res, const char *field, svc_err_t *err)
{
    json_t *req, *lim, *src[2], *x;
    const char *k;
    int s;

    if (res == NULL || json_is_null(res))
        return 0;
    if (!json_is_object(res)) {
        svc_err_set(err, 400, field, "must be an object");
        return -1;
    }
    req = getk(res, "requests");
    lim = getk(res, "limits");
    src[0] = req;
    src[1] = lim;
    for (s = 0; s < 2; s++) {
        if (src[s] == NULL || json_is_null(src[s]))
            continue;
        if (!json_is_object(src[s])) {
            svc_err_set(err, 400, field, "requests and limits must be objects");
            return -1;
        }
        json_object_foreach(src[s], k, x) {
            const char *r;
            long q;

            if (strncmp(k, SVC_EXT_PREFIX, strlen(SVC_EXT_PREFIX)) != 0)
                continue;
            if (s == 1 && req != NULL && json_is_object(req) && json_object_get(req, k) != NULL)
                continue;   /* requests win; limits only default them */
            r = k + strlen(SVC_EXT_PREFIX);
            if ((q = quantity(x)) < 0) {
                bad(a, "migsched: %.120s must be a whole number", k);
                continue;
            }
            if (q == 0)
                continue;
            if (strncmp(r, "mig-", 4) == 0) {
                if (!profile_text_ok(r + 4)) {
                    bad(a, "migsched: resource %.120s: no such profile name", k);
                } else if (a->prof[0] != '\0' && strcmp(a->prof, r + 4) != 0) {
                    bad(a, "migsched: a pod may ask for one MIG profile (also %.40s)", r + 4);
                } else {
                    snprintf(a->prof, sizeof(a->prof), "%s", r + 4);
                    a->mig += q;
                }
            } else if (strcmp(r, "mem-gb") == 0) {
                a->mem += q;
            } else if (strcmp(r, "gpu-share") == 0) {
                a->share += q;
            } else if (strcmp(r, "gang") != 0) {
                bad(a, "migsched: unknown resource %.120s (mig-<profile>, mem-gb, gpu-share)", k);
            }
        }
    }
    return 0;
}

int svc_ext_pod_priority(json_t *x, int *prio)
{
    json_int_t v;

    if (x == NULL || json_is_null(x))
        return 0;
    if (!json_is_integer(x))
        return -1;
    v = json_integer_value(x);
    *prio = v > 1000000 ? 1000000 : v < -1000000 ? -1000000 : (int)v;
    return 0;
}

/* spec.priority, spec.preemptionPolicy, and the tenant (the label's
 * value, else the namespace). */
static int parse_prio_tenant(json_t *md, json_t *spec, const char *tenant_label, svc_ext_pod_t *p,
                             svc_err_t *err)
{
    json_t *x = spec != NULL ? getk(spec, "priority") : NULL, *labels = getk(md, "labels");

    if (svc_ext_pod_priority(x, &p->priority) != 0) {
        svc_err_set(err, 400, "Pod.spec.priority", "must be an integer");
        return -1;
    }
    x = spec != NULL ? getk(spec, "preemptionPolicy") : NULL;
    if (x != NULL && !json_is_null(x) && !json_is_string(x)) {
        svc_err_set(err, 400, "Pod.spec.preemptionPolicy", "must be a string");
        return -1;
    }
    p->never_preempts = x != NULL && json_is_string(x) && strcmp(json_string_value(x), "Never") == 0;
    if (labels != NULL && !json_is_null(labels) && !json_is_object(labels)) {
        svc_err_set(err, 400, "Pod.metadata.labels", "must be an object");
        return -1;
    }
    x = tenant_label != NULL && json_is_object(labels) ? json_object_get(labels, tenant_label) : NULL;
    if (x != NULL && (!json_is_string(x) || json_string_length(x) > 63)) {
        svc_err_set(err, 400, "Pod.metadata.labels", "the tenant label's value must be a string of at most 63 bytes");
        return -1;
    }
    p->tenant = x != NULL && json_string_length(x) > 0 ? dup_str(x) : strdup(p->ns);
    if (p->tenant == NULL) {
        svc_err_set(err, 400, "Pod.metadata.labels", "the tenant label's value must be a string without NUL");
        return -1;
    }
    return 0;
}

int svc_ext_parse_pod(json_t *pod, const char *tenant_label, svc_ext_pod_t *p, svc_err_t *err)
{
    json_t *md, *spec, *x, *ann;
    acc_t a;
    const char *lists[2] = { "containers", "initContainers" };
    int l, kinds;
    long gang = 1;
    size_t i;

    memset(&a, 0, sizeof(a));
    if (!json_is_object(pod)) {
        svc_err_set(err, 400, "Pod", "must be an object (the v1.Pod)");
        return -1;
    }
    md = getk(pod, "metadata");
    if (!json_is_object(md)) {
        svc_err_set(err, 400, "Pod.metadata", "must be an object");
        return -1;
    }
    if ((x = getk(md, "uid")) == NULL || !json_is_string(x) || json_string_length(x) == 0 ||
        json_string_length(x) > 128) {
        svc_err_set(err, 400, "Pod.metadata.uid", "must be a non-empty string of at most 128 bytes");
        return -1;
    }
    if ((p->uid = dup_str(x)) == NULL) {
        svc_err_set(err, 400, "Pod.metadata.uid", "must be a string without NUL");
        return -1;
    }
    x = getk(md, "name");
    if (!json_is_string(x) || json_string_length(x) == 0 || json_string_length(x) > 253 ||
        (p->name = dup_str(x)) == NULL) {
        svc_err_set(err, 400, "Pod.metadata.name", "must be a non-empty string of at most 253 bytes");
        return -1;
    }
    x = getk(md, "namespace");
    if (x != NULL && !json_is_null(x) &&
        (!json_is_string(x) || json_string_length(x) > 63)) {
        svc_err_set(err, 400, "Pod.metadata.namespace", "must be a string of at most 63 bytes");
        return -1;
    }
    p->ns = x != NULL && json_string_length(x) > 0 ? dup_str(x) : strdup("default");
    if (p->ns == NULL) {
        svc_err_set(err, 400, "Pod.metadata.namespace", "must be a string without NUL");
        return -1;
    }
    ann = getk(md, "annotations");
    if (ann != NULL && !json_is_null(ann) && !json_is_object(ann)) {
        svc_err_set(err, 400, "Pod.metadata.annotations", "must be an object");
        return -1;
    }
    if (ann != NULL && (x = json_object_get(ann, SVC_EXT_PREFIX "gang")) != NULL) {
        if ((gang = quantity(x)) < 1 || gang > MAX_GANG) {
            bad(&a, "migsched: annotation migsched.io/gang must be a whole number in [1, 64]");
            gang = 1;
        }
    }
    if (ann != NULL && (x = json_object_get(ann, SVC_EXT_PREFIX "checkpoint-s")) != NULL &&
        (!json_is_string(x) || ms_number_double(json_string_value(x), &p->checkpoint_s) != MS_OK ||
         !(p->checkpoint_s >= 0.0 && p->checkpoint_s <= 1e9))) {
        bad(&a, "migsched: annotation migsched.io/checkpoint-s must be seconds in [0, 1e9]");
        p->checkpoint_s = 0.0;
    }
    spec = getk(pod, "spec");
    if (spec != NULL && !json_is_null(spec) && !json_is_object(spec)) {
        svc_err_set(err, 400, "Pod.spec", "must be an object");
        return -1;
    }
    if (parse_prio_tenant(md, json_is_object(spec) ? spec : NULL, tenant_label, p, err) != 0)
        return -1;
    for (l = 0; l < 2 && spec != NULL; l++) {
        json_t *cs = getk(spec, lists[l]), *c;
        char field[64];

        if (cs == NULL || json_is_null(cs))
            continue;
        snprintf(field, sizeof(field), "Pod.spec.%s", lists[l]);
        if (!json_is_array(cs)) {
            svc_err_set(err, 400, field, "must be a list");
            return -1;
        }
        json_array_foreach(cs, i, c) {
            snprintf(field, sizeof(field), "Pod.spec.%s[%zu].resources", lists[l], i);
            if (!json_is_object(c)) {
                svc_err_set(err, 400, field, "each container must be an object");
                return -1;
            }
            if (add_resources(&a, getk(c, "resources"), field, err) != 0)
                return -1;
        }
    }
    kinds = (a.mig > 0) + (a.mem > 0) + (a.share > 0);
    if (kinds > 1)
        bad(&a, "migsched: a pod may ask for one of migsched.io/mig-<profile>, mem-gb and gpu-share");
    else if (kinds == 0)
        bad(&a, "migsched: the pod asks for no migsched.io resource");
    if (a.share > 1)
        bad(&a, "migsched: migsched.io/gpu-share must be 1");
    if (a.mem > 1024)
        bad(&a, "migsched: migsched.io/mem-gb must be at most 1024");
    if (a.mig > 1 && gang > 1 && a.mig != gang)
        bad(&a, "migsched: migsched.io/gang and the MIG count disagree");
    if (a.mig > MAX_GANG)
        bad(&a, "migsched: at most 64 GPUs in one pod");
    p->gang = a.mig > 1 ? (int)a.mig : (int)gang;
    p->share = a.share > 0;
    p->mem_gb = (double)a.mem;
    if (a.mig > 0 && (p->profile = strdup(a.prof)) == NULL) {
        svc_err_set(err, 500, "", "out of memory");
        return -1;
    }
    if (p->share && p->gang > 1)
        bad(&a, "migsched: a gang takes whole GPUs, not time-sliced shares");
    if (a.why[0] != '\0' && (p->bad = strdup(a.why)) == NULL) {
        svc_err_set(err, 500, "", "out of memory");
        return -1;
    }
    return 0;
}

void svc_ext_pod_free(svc_ext_pod_t *p)
{
    free(p->uid);
    free(p->name);
    free(p->ns);
    free(p->profile);
    free(p->bad);
    free(p->tenant);
    memset(p, 0, sizeof(*p));
}

void svc_ext_args_free(svc_ext_args_t *a)
{
    int i;

    if (a == NULL)
        return;
    svc_ext_pod_free(&a->pod);
    for (i = 0; a->names_buf == NULL && i < a->nnodes; i++)
        free(a->nodes[i]);
    free(a->nodes);
    free(a->names_buf);
    a->nodes = NULL;
    a->names_buf = NULL;
    a->nnodes = 0;
}

static int add_node(svc_ext_args_t *a, json_t *v, const char *field, svc_err_t *err)
{
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 253) {
        svc_err_set(err, 400, field, "node names must be non-empty strings of at most 253 bytes");
        return -1;
    }
    if ((a->nodes[a->nnodes] = dup_str(v)) == NULL) {
        svc_err_set(err, 400, field, "node names must be strings without NUL");
        return -1;
    }
    a->nnodes++;
    return 0;
}

/* ExtenderArgs from its tree o (owned by the caller). names: NodeNames
 * read from the raw body (ext_names.c; o's NodeNames is then []), taken
 * into out; NULL: from o. */
static int args_from_tree(json_t *o, const char *tenant_label, svc_ext_names_t *names_in,
                          svc_ext_args_t *out, svc_err_t *err)
{
    json_t *names, *nodes, *items = NULL, *x;
    size_t i, n;
    char *p;

    if (!json_is_object(o)) {
        svc_err_set(err, 400, "", "ExtenderArgs must be a JSON object");
        return -1;
    }
    if (getk(o, "Pod") == NULL) {
        svc_err_set(err, 400, "Pod", "is required");
        return -1;
    }
    if (svc_ext_parse_pod(getk(o, "Pod"), tenant_label, &out->pod, err) != 0)
        return -1;
    names = getk(o, "NodeNames");
    nodes = getk(o, "Nodes");
    if (names_in != NULL) {
        n = (size_t)names_in->n;
    } else if (names != NULL && !json_is_null(names)) {
        if (!json_is_array(names)) {
            svc_err_set(err, 400, "NodeNames", "must be a list of node names or null");
            return -1;
        }
        n = json_array_size(names);
    } else if (nodes != NULL && !json_is_null(nodes)) {
        /* nodeCacheCapable: false sends whole Node objects; take their names */
        items = json_is_object(nodes) ? getk(nodes, "items") : NULL;
        if (!json_is_array(items)) {
            svc_err_set(err, 400, "Nodes.items", "must be a list of nodes");
            return -1;
        }
        n = json_array_size(items);
    } else {
        svc_err_set(err, 400, "NodeNames", "is required (configure the extender with nodeCacheCapable: true)");
        return -1;
    }
    if (n > MAX_NODES) {
        svc_err_set(err, 413, "NodeNames", "at most %d nodes", MAX_NODES);
        return -1;
    }
    if ((out->nodes = calloc(n > 0 ? n : 1, sizeof(*out->nodes))) == NULL) {
        svc_err_set(err, 500, "", "out of memory");
        return -1;
    }
    if (names_in != NULL) {
        /* the scan checked each name as add_node does */
        out->names_buf = names_in->buf;
        names_in->buf = NULL;
        for (p = out->names_buf; out->nnodes < (int)n; p += strlen(p) + 1)
            out->nodes[out->nnodes++] = p;
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (items == NULL) {
            x = json_array_get(names, i);
            if (add_node(out, x, "NodeNames", err) != 0)
                return -1;
        } else {
            json_t *md = json_array_get(items, i);

            md = json_is_object(md) ? getk(md, "metadata") : NULL;
            x = json_is_object(md) ? getk(md, "name") : NULL;
            if (add_node(out, x, "Nodes.items[].metadata.name", err) != 0)
                return -1;
        }
    }
    return 0;
}

int svc_ext_parse_args_tree(const char *body, size_t len, const char *tenant_label, svc_ext_args_t *out,
                            svc_err_t *err)
{
    json_error_t je;
    json_t *o;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je)) == NULL) {
        svc_err_set(err, 400, "", "not JSON: %s (line %d)", je.text, je.line);
        return -1;
    }
    rc = args_from_tree(o, tenant_label, NULL, out, err);
    json_decref(o);
    if (rc != 0)
        svc_ext_args_free(out);
    return rc;
}

/* The body as jansson reads it when NodeNames was read by ext_names.c:
 * its bytes with that array given as "[]" (json_load_callback). */
typedef struct elided {
    const char *s;
    size_t len, start, end, at;
} elided_t;

static size_t elided_read(void *buf, size_t cap, void *data)
{
    elided_t *e = data;
    size_t k;

    if (e->at < e->start) {
        k = e->start - e->at < cap ? e->start - e->at : cap;
        memcpy(buf, e->s + e->at, k);
    } else if (e->at < e->start + 2) {
        k = e->start + 2 - e->at < cap ? e->start + 2 - e->at : cap;
        memcpy(buf, &"[]"[e->at - e->start], k);
    } else {
        size_t from = e->end + (e->at - e->start - 2);

        k = e->len - from < cap ? e->len - from : cap;
        memcpy(buf, e->s + from, k);
    }
    e->at += k;
    return k;
}

/* Read NodeNames from the raw body and the rest with jansson: the same
 * result as svc_ext_parse_args_tree, without a jansson string per node
 * (issue 25: a third of a filter at 5,000 nodes). Any body the scan does
 * not take, or jansson refuses with the array elided, goes to
 * svc_ext_parse_args_tree, whose errors are then the answer. */
int svc_ext_parse_args(const char *body, size_t len, const char *tenant_label, svc_ext_args_t *out,
                       svc_err_t *err)
{
    svc_ext_names_t names;
    elided_t e;
    json_t *o, *nn;
    int rc;

    if (svc_ext_names_scan(body, len, &names) != 0)
        return svc_ext_parse_args_tree(body, len, tenant_label, out, err);
    e = (elided_t){ .s = body, .len = len, .start = names.start, .end = names.end };
    o = json_load_callback(elided_read, &e, JSON_REJECT_DUPLICATES, NULL);
    nn = json_is_object(o) ? json_object_get(o, "NodeNames") : NULL;
    if (!json_is_array(nn) || json_array_size(nn) != 0) {
        /* refused (the whole body's parse gives the error), or not what
         * the scan saw: never for a valid body */
        json_decref(o);
        free(names.buf);
        return svc_ext_parse_args_tree(body, len, tenant_label, out, err);
    }
    memset(out, 0, sizeof(*out));
    rc = args_from_tree(o, tenant_label, &names, out, err);
    json_decref(o);
    free(names.buf);   /* NULL once taken */
    if (rc != 0)
        svc_ext_args_free(out);
    return rc;
}

void svc_ext_bind_free(svc_ext_bind_t *b)
{
    if (b == NULL)
        return;
    free(b->name);
    free(b->ns);
    free(b->uid);
    free(b->node);
    memset(b, 0, sizeof(*b));
}

int svc_ext_parse_bind(const char *body, size_t len, svc_ext_bind_t *out, svc_err_t *err)
{
    static const char *const K[] = { "PodName", "PodNamespace", "PodUID", "Node" };
    json_error_t je;
    json_t *o;
    char **dst[4];
    int i, rc = -1;

    memset(out, 0, sizeof(*out));
    dst[0] = &out->name;
    dst[1] = &out->ns;
    dst[2] = &out->uid;
    dst[3] = &out->node;
    if ((o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je)) == NULL) {
        svc_err_set(err, 400, "", "not JSON: %s (line %d)", je.text, je.line);
        return -1;
    }
    if (!json_is_object(o)) {
        svc_err_set(err, 400, "", "ExtenderBindingArgs must be a JSON object");
        goto out;
    }
    for (i = 0; i < 4; i++) {
        json_t *v = getk(o, K[i]);

        if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 253 ||
            (*dst[i] = dup_str(v)) == NULL) {
            svc_err_set(err, 400, K[i], "must be a non-empty string of at most 253 bytes");
            goto out;
        }
    }
    rc = 0;
out:
    json_decref(o);
    if (rc != 0)
        svc_ext_bind_free(out);
    return rc;
}

static char *dump(json_t *o)
{
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return s;
}

/* The filter and prioritize replies hold one entry per listed node (5,000
 * and more), so they are written straight into one buffer instead of a
 * jansson tree that json_dumps then copies (issue 25: the tree and its
 * dump were a quarter of a filter's time at 5,000 nodes). */
typedef struct out {
    char *s;
    size_t len, cap;
    bool oom;
} out_t;

static void out_grow(out_t *o, size_t more)
{
    size_t cap;
    char *s;

    if (o->oom || o->len + more + 1 <= o->cap)
        return;
    for (cap = o->cap ? o->cap : 256; cap < o->len + more + 1; cap *= 2)
        ;
    if ((s = realloc(o->s, cap)) == NULL) {
        o->oom = true;
        return;
    }
    o->s = s;
    o->cap = cap;
}

static void out_raw(out_t *o, const char *t, size_t n)
{
    out_grow(o, n);
    if (o->oom)
        return;
    memcpy(o->s + o->len, t, n);
    o->len += n;
    o->s[o->len] = '\0';
}

#define OUT_LIT(o, lit) out_raw(o, lit, sizeof(lit) - 1)

/* Length of the valid UTF-8 sequence at p (of at most n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    size_t k, i;
    unsigned cp;

    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        k = 2, cp = p[0] & 0x1fu;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        k = 3, cp = p[0] & 0x0fu;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        k = 4, cp = p[0] & 0x07u;
    else
        return 0;
    if (k > n)
        return 0;
    for (i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return k;
}

/* A JSON string: quotes, backslashes and control characters escaped; a
 * byte that is not UTF-8 (a reason cut inside a character) becomes
 * U+FFFD, as jansson would have refused the string. */
static void out_str(out_t *o, const char *t)
{
    const unsigned char *p = (const unsigned char *)(t != NULL ? t : "");
    size_t n = strlen((const char *)p), i = 0, run = 0, k;

    out_grow(o, n + 2);
    OUT_LIT(o, "\"");
    while (i < n) {
        char esc[8];

        if (p[i] >= 0x20 && p[i] != '"' && p[i] != '\\' && p[i] < 0x80) {
            i++;
            run++;
            continue;
        }
        out_raw(o, (const char *)p + i - run, run);
        run = 0;
        if (p[i] >= 0x80) {
            if ((k = utf8_len(p + i, n - i)) > 0) {
                out_raw(o, (const char *)p + i, k);
                i += k;
            } else {
                OUT_LIT(o, "\\ufffd");
                i++;
            }
            continue;
        }
        if (p[i] == '"')
            OUT_LIT(o, "\\\"");
        else if (p[i] == '\\')
            OUT_LIT(o, "\\\\");
        else if (p[i] == '\n')
            OUT_LIT(o, "\\n");
        else if (p[i] == '\t')
            OUT_LIT(o, "\\t");
        else {
            snprintf(esc, sizeof(esc), "\\u%04x", p[i]);
            out_raw(o, esc, 6);
        }
        i++;
    }
    out_raw(o, (const char *)p + i - run, run);
    OUT_LIT(o, "\"");
}

static char *out_done(out_t *o)
{
    if (o->oom) {
        free(o->s);
        return NULL;
    }
    return o->s;
}

/* The reasons of the nodes that fail (unres: those that never can) as a
 * JSON object's members. */
static void out_reasons(out_t *o, const svc_ext_verdict_t *v, int n, bool unres)
{
    int i, k = 0;

    OUT_LIT(o, "{");
    for (i = 0; i < n; i++) {
        if (v[i].reason == NULL || v[i].unresolvable != unres || v[i].omitted)
            continue;
        if (k++ > 0)
            OUT_LIT(o, ",");
        out_str(o, v[i].node);
        OUT_LIT(o, ":");
        out_str(o, v[i].reason);
    }
    OUT_LIT(o, "}");
}

char *svc_ext_filter_reply(const svc_ext_verdict_t *v, int n, const char *error)
{
    out_t o = { NULL, 0, 0, false };
    int i, k = 0;

    out_grow(&o, 128 + (size_t)(n > 0 ? n : 0) * 24);
    OUT_LIT(&o, "{\"Nodes\":null,\"NodeNames\":[");
    for (i = 0; i < n; i++) {
        if (v[i].reason != NULL || v[i].omitted)
            continue;
        if (k++ > 0)
            OUT_LIT(&o, ",");
        out_str(&o, v[i].node);
    }
    OUT_LIT(&o, "],\"FailedNodes\":");
    out_reasons(&o, v, n, false);
    OUT_LIT(&o, ",\"FailedAndUnresolvableNodes\":");
    out_reasons(&o, v, n, true);
    OUT_LIT(&o, ",\"Error\":");
    out_str(&o, error);
    OUT_LIT(&o, "}");
    return out_done(&o);
}

char *svc_ext_prioritize_reply(const char *const *nodes, const int *scores, int n)
{
    out_t o = { NULL, 0, 0, false };
    int i;

    out_grow(&o, 16 + (size_t)(n > 0 ? n : 0) * 40);
    OUT_LIT(&o, "[");
    for (i = 0; i < n; i++) {
        char num[24];

        if (i > 0)
            OUT_LIT(&o, ",");
        OUT_LIT(&o, "{\"Host\":");
        out_str(&o, nodes[i]);
        out_raw(&o, num, (size_t)snprintf(num, sizeof(num), ",\"Score\":%d}", scores[i]));
    }
    OUT_LIT(&o, "]");
    return out_done(&o);
}

char *svc_ext_bind_reply(const char *error)
{
    return dump(json_pack("{s:s}", "Error", error != NULL ? error : ""));
}
