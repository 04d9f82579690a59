/* dra_obj.c - the API's DRA objects as the allocator reads them (any
 * thread; pure): ResourceSlice, DeviceClass, ResourceClaim (and its
 * template's spec), Pod, AdmissionReview; resource.k8s.io/v1 as served by
 * kube-apiserver v1.37.
 *
 * The input is untrusted (fuzz/fuzz_dra.c): every string is bounded, every
 * array counted against the DRA_MAX_* limits, a wrong type is an error
 * naming the field; nothing is guessed. What the allocator cannot serve
 * (a prioritized list, allocationMode All, admin access, capacity
 * requests) is not an error: the request keeps a reason (why) that the
 * allocator posts as an event.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"
#include "service/kctl.h"

static int bad(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A string member of at most max bytes: 0 (absent and optional: *out NULL),
 * -1 with why. */
static int get_str(json_t *o, const char *k, size_t max, bool need, char **out, const char *field, char *why,
                   size_t wl)
{
    json_t *v = json_object_get(o, k);
    const char *s;

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return need ? bad(why, wl, "%s%s: missing", field, k) : 0;
    if ((s = json_string_value(v)) == NULL)
        return bad(why, wl, "%s%s: not a string", field, k);
    if (strlen(s) > max || (need && s[0] == '\0'))
        return bad(why, wl, "%s%s: %s", field, k, s[0] == '\0' ? "empty" : "too long");
    if ((*out = strdup(s)) == NULL)
        return bad(why, wl, "out of memory");
    return 0;
}

/* An array member of at most max items: its size, or -1. Absent: 0 and *a NULL. */
static int get_arr(json_t *o, const char *k, int max, json_t **a, const char *field, char *why, size_t wl)
{
    json_t *v = json_object_get(o, k);

    *a = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return bad(why, wl, "%s%s: not a list", field, k);
    if (json_array_size(v) > (size_t)max)
        return bad(why, wl, "%s%s: more than %d entries", field, k, max);
    *a = v;
    return (int)json_array_size(v);
}

static json_t *obj(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);

    return json_is_object(v) ? v : NULL;
}

const dra_val_t *dra_kv_get(const dra_kv_t *kv, int n, const char *key)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return &kv[i].v;
    return NULL;
}

static void kv_free(dra_kv_t *kv, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].v.s);
    }
    free(kv);
}

static void cset_free(dra_cset_t *s, int n)
{
    int i, k;

    for (i = 0; i < n; i++) {
        free(s[i].name);
        for (k = 0; k < s[i].n; k++)
            free(s[i].c[k].name);
        free(s[i].c);
    }
    free(s);
}

/* A qualified key: name as is when it has a domain, else driver/name. */
static char *qualify(const char *driver, const char *name)
{
    size_t n = strlen(driver) + strlen(name) + 2;
    char *s;

    if (strchr(name, '/') != NULL)
        return strdup(name);
    if ((s = malloc(n)) != NULL)
        snprintf(s, n, "%s/%s", driver, name);
    return s;
}

/* attributes (caps false) or capacity (caps true) of a device. */
static int parse_kv(json_t *o, const char *driver, bool caps, dra_kv_t **out, int *nout, const char *field, char *why,
                    size_t wl)
{
    const char *k;
    json_t *v, *x;
    dra_kv_t *kv;
    int n = 0;

    *out = NULL;
    *nout = 0;
    if (o == NULL)
        return 0;
    if (json_object_size(o) > DRA_MAX_KV)
        return bad(why, wl, "%s: more than %d entries", field, DRA_MAX_KV);
    if ((kv = calloc(json_object_size(o) + 1, sizeof(*kv))) == NULL)
        return bad(why, wl, "out of memory");
    json_object_foreach(o, k, v) {
        dra_val_t *val = &kv[n].v;

        if (strlen(k) > DRA_NAME_MAX || k[0] == '\0' || !json_is_object(v)) {
            kv_free(kv, n);
            return bad(why, wl, "%s.%.64s: not a valid entry", field, k);
        }
        if ((kv[n].key = qualify(driver, k)) == NULL) {
            kv_free(kv, n);
            return bad(why, wl, "out of memory");
        }
        n++;
        if (caps) {
            const char *q = json_string_value(json_object_get(v, "value"));

            val->kind = DRA_V_QTY;
            if (q == NULL || dra_qty_parse(q, &val->q) != 0) {
                kv_free(kv, n);
                return bad(why, wl, "%s.%.64s.value: not a quantity", field, k);
            }
        } else if ((x = json_object_get(v, "string")) != NULL || (x = json_object_get(v, "version")) != NULL) {
            const char *s = json_string_value(x);

            val->kind = json_object_get(v, "string") != NULL ? DRA_V_STR : DRA_V_VER;
            if (s == NULL || strlen(s) > 64 || (val->s = strdup(s)) == NULL) {
                kv_free(kv, n);
                return bad(why, wl, "%s.%.64s: not a string of at most 64 characters", field, k);
            }
        } else if ((x = json_object_get(v, "int")) != NULL) {
            val->kind = DRA_V_INT;
            if (!json_is_integer(x)) {
                kv_free(kv, n);
                return bad(why, wl, "%s.%.64s.int: not an integer", field, k);
            }
            val->i = json_integer_value(x);
        } else if ((x = json_object_get(v, "bool")) != NULL) {
            val->kind = DRA_V_BOOL;
            if (!json_is_boolean(x)) {
                kv_free(kv, n);
                return bad(why, wl, "%s.%.64s.bool: not a boolean", field, k);
            }
            val->b = json_is_true(x);
        } else {
            kv_free(kv, n);
            return bad(why, wl, "%s.%.64s: no string, version, int or bool", field, k);
        }
    }
    *out = kv;
    *nout = n;
    return 0;
}

/* {name: {value: qty}} */
static int parse_counters(json_t *o, dra_cset_t *s, const char *field, char *why, size_t wl)
{
    const char *k;
    json_t *v;

    if (!json_is_object(o))
        return bad(why, wl, "%scounters: not an object", field);
    if (json_object_size(o) > DRA_MAX_COUNTERS)
        return bad(why, wl, "%scounters: more than %d", field, DRA_MAX_COUNTERS);
    if ((s->c = calloc(json_object_size(o) + 1, sizeof(*s->c))) == NULL)
        return bad(why, wl, "out of memory");
    json_object_foreach(o, k, v) {
        const char *q = json_string_value(json_object_get(v, "value"));

        if (strlen(k) > DRA_NAME_MAX || q == NULL || dra_qty_parse(q, &s->c[s->n].value) != 0)
            return bad(why, wl, "%scounters.%.64s: not a counter with a quantity value", field, k);
        if ((s->c[s->n].name = strdup(k)) == NULL)
            return bad(why, wl, "out of memory");
        s->n++;
    }
    return 0;
}

/* sharedCounters (key "name") or consumesCounters (key "counterSet"). */
static int parse_sets(json_t *a, int n, const char *namekey, dra_cset_t **out, int *nout, const char *field, char *why,
                      size_t wl)
{
    dra_cset_t *s;
    char f[96];
    int i;

    *out = NULL;
    *nout = 0;
    if (n <= 0)
        return 0;
    if ((s = calloc((size_t)n, sizeof(*s))) == NULL)
        return bad(why, wl, "out of memory");
    for (i = 0; i < n; i++) {
        json_t *e = json_array_get(a, (size_t)i);

        snprintf(f, sizeof(f), "%s[%d].", field, i);
        if (!json_is_object(e) || get_str(e, namekey, DRA_NAME_MAX, true, &s[i].name, f, why, wl) != 0 ||
            parse_counters(json_object_get(e, "counters"), &s[i], f, why, wl) != 0) {
            if (!json_is_object(e))
                bad(why, wl, "%s: not an object", f);
            cset_free(s, i + 1);
            return -1;
        }
    }
    *out = s;
    *nout = n;
    return 0;
}

void dra_slice_free(dra_slice_t *s)
{
    int i;

    if (s == NULL)
        return;
    for (i = 0; i < s->ndev; i++) {
        free(s->dev[i].name);
        kv_free(s->dev[i].attrs, s->dev[i].nattrs);
        kv_free(s->dev[i].caps, s->dev[i].ncaps);
        cset_free(s->dev[i].cons, s->dev[i].ncons);
    }
    free(s->dev);
    cset_free(s->sets, s->nsets);
    free(s->name);
    free(s->driver);
    free(s->pool);
    free(s->node);
    memset(s, 0, sizeof(*s));
}

static int parse_device(json_t *e, const char *driver, dra_pdev_t *d, int i, char *why, size_t wl)
{
    char f[64];
    json_t *a;
    int n;

    snprintf(f, sizeof(f), "spec.devices[%d].", i);
    if (!json_is_object(e))
        return bad(why, wl, "spec.devices[%d]: not an object", i);
    if (get_str(e, "name", 63, true, &d->name, f, why, wl) != 0)
        return -1;
    snprintf(f, sizeof(f), "spec.devices[%d].attributes", i);
    if (parse_kv(obj(e, "attributes"), driver, false, &d->attrs, &d->nattrs, f, why, wl) != 0)
        return -1;
    snprintf(f, sizeof(f), "spec.devices[%d].capacity", i);
    if (parse_kv(obj(e, "capacity"), driver, true, &d->caps, &d->ncaps, f, why, wl) != 0)
        return -1;
    snprintf(f, sizeof(f), "spec.devices[%d].", i);
    if ((n = get_arr(e, "consumesCounters", DRA_MAX_SETS, &a, f, why, wl)) < 0)
        return -1;
    snprintf(f, sizeof(f), "spec.devices[%d].consumesCounters", i);
    if (parse_sets(a, n, "counterSet", &d->cons, &d->ncons, f, why, wl) != 0)
        return -1;
    d->multi = json_is_true(json_object_get(e, "allowMultipleAllocations"));
    return 0;
}

int dra_parse_slice(json_t *o, dra_slice_t *s, char *why, size_t wl)
{
    json_t *md = obj(o, "metadata"), *sp = obj(o, "spec"), *pool, *a;
    json_int_t g, c;
    int n, i;

    memset(s, 0, sizeof(*s));
    if (md == NULL || sp == NULL || (pool = obj(sp, "pool")) == NULL)
        return bad(why, wl, "ResourceSlice: metadata, spec or spec.pool missing");
    if (get_str(md, "name", DRA_NAME_MAX, true, &s->name, "metadata.", why, wl) != 0 ||
        get_str(sp, "driver", 63, true, &s->driver, "spec.", why, wl) != 0 ||
        get_str(pool, "name", DRA_NAME_MAX, true, &s->pool, "spec.pool.", why, wl) != 0 ||
        get_str(sp, "nodeName", DRA_NAME_MAX, false, &s->node, "spec.", why, wl) != 0)
        goto fail;
    g = json_integer_value(json_object_get(pool, "generation"));
    c = json_integer_value(json_object_get(pool, "resourceSliceCount"));
    if (!json_is_integer(json_object_get(pool, "resourceSliceCount")) || c < 1 || c > 100000 || g < 0) {
        bad(why, wl, "spec.pool: generation and resourceSliceCount must be integers (count >= 1)");
        goto fail;
    }
    s->gen = g;
    s->count = c;
    if ((n = get_arr(sp, "devices", DRA_MAX_DEVICES, &a, "spec.", why, wl)) < 0)
        goto fail;
    if (n > 0 && (s->dev = calloc((size_t)n, sizeof(*s->dev))) == NULL) {
        bad(why, wl, "out of memory");
        goto fail;
    }
    for (i = 0; i < n; i++) {
        s->ndev = i + 1;
        if (parse_device(json_array_get(a, (size_t)i), s->driver, &s->dev[i], i, why, wl) != 0)
            goto fail;
    }
    if ((n = get_arr(sp, "sharedCounters", DRA_MAX_SETS, &a, "spec.", why, wl)) < 0 ||
        parse_sets(a, n, "name", &s->sets, &s->nsets, "spec.sharedCounters", why, wl) != 0)
        goto fail;
    return 0;
fail:
    dra_slice_free(s);
    return -1;
}

/* --- classes and claims ------------------------------------------------------- */

static void strv_free(char **v, int n)
{
    int i;

    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* selectors: [{cel: {expression}}] into texts. */
static int parse_selectors(json_t *o, char ***out, int *nout, const char *field, char *why, size_t wl)
{
    json_t *a;
    int n, i;

    *out = NULL;
    *nout = 0;
    if ((n = get_arr(o, "selectors", DRA_MAX_SEL, &a, field, why, wl)) <= 0)
        return n;
    if ((*out = calloc((size_t)n, sizeof(**out))) == NULL)
        return bad(why, wl, "out of memory");
    for (i = 0; i < n; i++) {
        json_t *cel = obj(json_array_get(a, (size_t)i), "cel");
        char f[96];

        snprintf(f, sizeof(f), "%sselectors[%d].cel.", field, i);
        if (cel == NULL) {
            strv_free(*out, i);
            *out = NULL;
            return bad(why, wl, "%sselectors[%d]: only cel selectors exist", field, i);
        }
        if (get_str(cel, "expression", DRA_CEL_MAX, true, &(*out)[i], f, why, wl) != 0) {
            strv_free(*out, i);
            *out = NULL;
            return -1;
        }
    }
    *nout = n;
    return 0;
}

void dra_class_free(dra_class_t *c)
{
    if (c == NULL)
        return;
    free(c->name);
    strv_free(c->cel, c->ncel);
    json_decref(c->config);
    memset(c, 0, sizeof(*c));
}

int dra_parse_class(json_t *o, dra_class_t *c, char *why, size_t wl)
{
    json_t *sp = obj(o, "spec"), *cfg;

    memset(c, 0, sizeof(*c));
    if (get_str(obj(o, "metadata"), "name", DRA_NAME_MAX, true, &c->name, "metadata.", why, wl) != 0)
        return -1;
    if (sp != NULL && parse_selectors(sp, &c->cel, &c->ncel, "spec.", why, wl) != 0) {
        dra_class_free(c);
        return -1;
    }
    cfg = json_object_get(sp, "config");
    if (json_is_array(cfg) && json_array_size(cfg) > 0 && json_array_size(cfg) <= 32)
        c->config = json_incref(cfg);
    return 0;
}

static void request_free(dra_request_t *r)
{
    free(r->name);
    free(r->cls);
    strv_free(r->cel, r->ncel);
    free(r->why);
}

void dra_cspec_free(dra_cspec_t *s)
{
    int i;

    if (s == NULL)
        return;
    for (i = 0; i < s->nreq; i++)
        request_free(&s->req[i]);
    free(s->req);
    for (i = 0; i < s->ncon; i++) {
        free(s->con[i].attr);
        strv_free(s->con[i].reqs, s->con[i].nreqs);
    }
    free(s->con);
    json_decref(s->config);
    free(s->why);
    memset(s, 0, sizeof(*s));
}

static int why_dup(char **dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why_dup(char **dst, const char *fmt, ...)
{
    char buf[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    free(*dst);
    return (*dst = strdup(buf)) == NULL ? -1 : 0;
}

static int parse_request(json_t *e, dra_request_t *r, int i, char *why, size_t wl)
{
    json_t *ex = obj(e, "exactly"), *v;
    const char *mode;
    char f[96];

    snprintf(f, sizeof(f), "spec.devices.requests[%d].", i);
    if (!json_is_object(e))
        return bad(why, wl, "%s: not an object", f);
    if (get_str(e, "name", 63, true, &r->name, f, why, wl) != 0)
        return -1;
    r->count = 1;
    if (ex == NULL)
        return why_dup(&r->why, "request %s: %s", r->name,
                       json_object_get(e, "firstAvailable") != NULL ? "firstAvailable (a prioritized list) is not supported"
                                                                     : "no exactly: nothing migsched can allocate");
    snprintf(f, sizeof(f), "spec.devices.requests[%d].exactly.", i);
    if (get_str(ex, "deviceClassName", DRA_NAME_MAX, true, &r->cls, f, why, wl) != 0 ||
        parse_selectors(ex, &r->cel, &r->ncel, f, why, wl) != 0)
        return -1;
    mode = json_string_value(json_object_get(ex, "allocationMode"));
    if (mode != NULL && strcmp(mode, "ExactCount") != 0)
        return why_dup(&r->why, "request %s: allocationMode %.32s is not supported", r->name, mode);
    if ((v = json_object_get(ex, "count")) != NULL && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > DRA_MAX_COUNT)
            return bad(why, wl, "%scount: an integer in [1, %d]", f, DRA_MAX_COUNT);
        r->count = (int)json_integer_value(v);
    }
    if (json_is_true(json_object_get(ex, "adminAccess")))
        return why_dup(&r->why, "request %s: adminAccess is not supported", r->name);
    if (json_object_get(ex, "capacity") != NULL)
        return why_dup(&r->why, "request %s: capacity requests are not supported", r->name);
    return 0;
}

static int parse_constraints(json_t *dv, dra_cspec_t *s, char *why, size_t wl)
{
    json_t *a, *ra;
    int n, i, k, m;

    if ((n = get_arr(dv, "constraints", DRA_MAX_REQ, &a, "spec.devices.", why, wl)) <= 0)
        return n;
    if ((s->con = calloc((size_t)n, sizeof(*s->con))) == NULL)
        return bad(why, wl, "out of memory");
    for (i = 0; i < n; i++) {
        json_t *e = json_array_get(a, (size_t)i);
        dra_constraint_t *c = &s->con[i];
        char f[96];

        s->ncon = i + 1;
        snprintf(f, sizeof(f), "spec.devices.constraints[%d].", i);
        if (!json_is_object(e))
            return bad(why, wl, "%s: not an object", f);
        if (json_object_get(e, "matchAttribute") == NULL)
            return why_dup(&s->why, "constraint %d: only matchAttribute is supported", i) == 0 ? 0 : -1;
        if (get_str(e, "matchAttribute", DRA_NAME_MAX, true, &c->attr, f, why, wl) != 0 ||
            (m = get_arr(e, "requests", DRA_MAX_REQ, &ra, f, why, wl)) < 0)
            return -1;
        if (m > 0 && (c->reqs = calloc((size_t)m, sizeof(*c->reqs))) == NULL)
            return bad(why, wl, "out of memory");
        for (k = 0; k < m; k++) {
            const char *rn = json_string_value(json_array_get(ra, (size_t)k));

            if (rn == NULL || strlen(rn) > 63 || (c->reqs[k] = strdup(rn)) == NULL)
                return bad(why, wl, "%srequests[%d]: not a request name", f, k);
            c->nreqs = k + 1;
        }
    }
    return 0;
}

/* spec.devices of a claim or a template's spec.spec. */
static int parse_cspec(json_t *spec, dra_cspec_t *s, char *why, size_t wl)
{
    json_t *dv = obj(spec, "devices"), *a, *cfg;
    int n, i;

    memset(s, 0, sizeof(*s));
    if (dv == NULL)
        return 0;   /* a claim for nothing */
    if ((n = get_arr(dv, "requests", DRA_MAX_REQ, &a, "spec.devices.", why, wl)) < 0)
        return -1;
    if (n > 0 && (s->req = calloc((size_t)n, sizeof(*s->req))) == NULL)
        return bad(why, wl, "out of memory");
    for (i = 0; i < n; i++) {
        s->nreq = i + 1;
        if (parse_request(json_array_get(a, (size_t)i), &s->req[i], i, why, wl) != 0)
            goto fail;
    }
    if (parse_constraints(dv, s, why, wl) != 0)
        goto fail;
    cfg = json_object_get(dv, "config");
    if (json_is_array(cfg) && json_array_size(cfg) > 0 && json_array_size(cfg) <= 32)
        s->config = json_incref(cfg);
    return 0;
fail:
    dra_cspec_free(s);
    return -1;
}

void dra_claim_free(dra_claim_t *c)
{
    int i;

    if (c == NULL)
        return;
    free(c->uid);
    free(c->ns);
    free(c->name);
    free(c->rv);
    free(c->nskey);
    free(c->owner);
    strv_free(c->fin, c->nfin);
    dra_cspec_free(&c->spec);
    for (i = 0; i < c->nres; i++) {
        free(c->res[i].request);
        free(c->res[i].driver);
        free(c->res[i].pool);
        free(c->res[i].device);
    }
    free(c->res);
    free(c->node);
    strv_free(c->reserved, c->nreserved);
    memset(c, 0, sizeof(*c));
}

static char *ns_key(const char *ns, const char *name)
{
    size_t n = strlen(ns) + strlen(name) + 2;
    char *s = malloc(n);

    if (s != NULL)
        snprintf(s, n, "%s/%s", ns, name);
    return s;
}

/* The uid of the Pod among the owner references (a template's claim is
 * owned by its pod): 0 (*out NULL when none), -1 out of memory. */
static int owner_pod(json_t *md, char **out)
{
    json_t *a = json_object_get(md, "ownerReferences"), *e;
    size_t i;

    *out = NULL;
    json_array_foreach(a, i, e) {
        const char *k = json_string_value(json_object_get(e, "kind"));
        const char *av = json_string_value(json_object_get(e, "apiVersion"));
        const char *uid = json_string_value(json_object_get(e, "uid"));

        if (k != NULL && av != NULL && uid != NULL && strcmp(k, "Pod") == 0 && strcmp(av, "v1") == 0 &&
            strlen(uid) <= 64)
            return (*out = strdup(uid)) == NULL ? -1 : 0;
    }
    return 0;
}

/* The node of "matchFields metadata.name In [node]", or NULL. */
static char *alloc_node(json_t *ns)
{
    json_t *terms = json_object_get(ns, "nodeSelectorTerms"), *mf, *e, *vals;
    const char *key, *op, *v;

    if (!json_is_array(terms) || json_array_size(terms) != 1)
        return NULL;
    mf = json_object_get(json_array_get(terms, 0), "matchFields");
    if (!json_is_array(mf) || json_array_size(mf) != 1)
        return NULL;
    e = json_array_get(mf, 0);
    key = json_string_value(json_object_get(e, "key"));
    op = json_string_value(json_object_get(e, "operator"));
    vals = json_object_get(e, "values");
    if (key == NULL || op == NULL || strcmp(key, "metadata.name") != 0 || strcmp(op, "In") != 0 ||
        !json_is_array(vals) || json_array_size(vals) != 1 || (v = json_string_value(json_array_get(vals, 0))) == NULL ||
        strlen(v) > DRA_NAME_MAX)
        return NULL;
    return strdup(v);
}

static int parse_status(json_t *st, dra_claim_t *c, char *why, size_t wl)
{
    json_t *al = obj(st, "allocation"), *a;
    const char *ts;
    int n, i;

    if (al != NULL) {
        c->allocated = true;
        if ((n = get_arr(obj(al, "devices"), "results", DRA_MAX_RESULTS, &a, "status.allocation.devices.", why, wl)) < 0)
            return -1;
        if (n > 0 && (c->res = calloc((size_t)n, sizeof(*c->res))) == NULL)
            return bad(why, wl, "out of memory");
        for (i = 0; i < n; i++) {
            json_t *e = json_array_get(a, (size_t)i);
            char f[96];

            snprintf(f, sizeof(f), "status.allocation.devices.results[%d].", i);
            c->nres = i + 1;
            if (get_str(e, "request", 127, true, &c->res[i].request, f, why, wl) != 0 ||
                get_str(e, "driver", 63, true, &c->res[i].driver, f, why, wl) != 0 ||
                get_str(e, "pool", DRA_NAME_MAX, true, &c->res[i].pool, f, why, wl) != 0 ||
                get_str(e, "device", 63, true, &c->res[i].device, f, why, wl) != 0)
                return -1;
        }
        c->node = alloc_node(obj(al, "nodeSelector"));
        if ((ts = json_string_value(json_object_get(al, "allocationTimestamp"))) != NULL &&
            !svc_kctl_time_parse(ts, &c->alloc_t))
            c->alloc_t = 0;
    }
    if ((n = get_arr(st, "reservedFor", DRA_MAX_RESERVED, &a, "status.", why, wl)) < 0)
        return -1;
    if (n > 0 && (c->reserved = calloc((size_t)n, sizeof(*c->reserved))) == NULL)
        return bad(why, wl, "out of memory");
    for (i = 0; i < n; i++) {
        json_t *e = json_array_get(a, (size_t)i);
        const char *res = json_string_value(json_object_get(e, "resource"));
        const char *grp = json_string_value(json_object_get(e, "apiGroup"));
        const char *uid = json_string_value(json_object_get(e, "uid"));

        if (res != NULL && strcmp(res, "pods") == 0 && (grp == NULL || grp[0] == '\0') && uid != NULL &&
            strlen(uid) <= 64) {
            if ((c->reserved[c->nreserved] = strdup(uid)) == NULL)
                return bad(why, wl, "out of memory");
            c->nreserved++;
        } else {
            c->reserved_other = true;
        }
    }
    return 0;
}

int dra_parse_claim(json_t *o, dra_claim_t *c, char *why, size_t wl)
{
    json_t *md = obj(o, "metadata"), *a, *ann;
    int n, i;

    memset(c, 0, sizeof(*c));
    if (md == NULL)
        return bad(why, wl, "ResourceClaim: no metadata");
    if (get_str(md, "uid", 64, true, &c->uid, "metadata.", why, wl) != 0 ||
        get_str(md, "namespace", 63, true, &c->ns, "metadata.", why, wl) != 0 ||
        get_str(md, "name", DRA_NAME_MAX, true, &c->name, "metadata.", why, wl) != 0 ||
        get_str(md, "resourceVersion", 64, false, &c->rv, "metadata.", why, wl) != 0)
        goto fail;
    c->deleting = json_object_get(md, "deletionTimestamp") != NULL && !json_is_null(json_object_get(md, "deletionTimestamp"));
    if ((n = get_arr(md, "finalizers", 32, &a, "metadata.", why, wl)) < 0)
        goto fail;
    if (n > 0 && (c->fin = calloc((size_t)n, sizeof(*c->fin))) == NULL)
        goto oom;
    for (i = 0; i < n; i++) {
        const char *f = json_string_value(json_array_get(a, (size_t)i));

        if (f == NULL || strlen(f) > DRA_NAME_MAX) {
            bad(why, wl, "metadata.finalizers[%d]: not a name", i);
            goto fail;
        }
        if ((c->fin[i] = strdup(f)) == NULL)
            goto oom;
        c->nfin = i + 1;
    }
    ann = obj(md, "annotations");
    c->ours = ann != NULL && json_object_get(ann, "migsched.io/dra-allocator") != NULL;
    if ((c->nskey = ns_key(c->ns, c->name)) == NULL || owner_pod(md, &c->owner) != 0)
        goto oom;
    if (parse_cspec(obj(o, "spec"), &c->spec, why, wl) != 0 || parse_status(obj(o, "status"), c, why, wl) != 0)
        goto fail;
    return 0;
oom:
    bad(why, wl, "out of memory");
fail:
    dra_claim_free(c);
    return -1;
}

void dra_tmpl_free(dra_tmpl_t *t)
{
    if (t == NULL)
        return;
    free(t->ns);
    free(t->name);
    free(t->key);
    dra_cspec_free(&t->spec);
    memset(t, 0, sizeof(*t));
}

int dra_parse_tmpl(json_t *o, dra_tmpl_t *t, char *why, size_t wl)
{
    json_t *md = obj(o, "metadata");

    memset(t, 0, sizeof(*t));
    if (get_str(md, "namespace", 63, true, &t->ns, "metadata.", why, wl) != 0 ||
        get_str(md, "name", DRA_NAME_MAX, true, &t->name, "metadata.", why, wl) != 0 ||
        parse_cspec(obj(obj(o, "spec"), "spec"), &t->spec, why, wl) != 0) {
        dra_tmpl_free(t);
        return -1;
    }
    if ((t->key = ns_key(t->ns, t->name)) == NULL) {
        dra_tmpl_free(t);
        return bad(why, wl, "out of memory");
    }
    return 0;
}
