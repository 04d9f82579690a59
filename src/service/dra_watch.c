/* dra_watch.c - the watch threads: one list+watch per kind the allocator
 * reads (ResourceSlices, DeviceClasses, ResourceClaims,
 * ResourceClaimTemplates, pods), each object parsed here, off the loop,
 * and posted to it. Pods without claims are none of the allocator's
 * business and are dropped here. A relist (after a 410 or a broken
 * watch) numbers its objects with a new epoch, and its end (SYNCED) tells
 * the loop that what the list lacked is gone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "service/dra_int.h"

static const char *const PATHS[DRA_K_N] = {
    "/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/deviceclasses",
    "/apis/resource.k8s.io/v1/resourceclaims", "/apis/resource.k8s.io/v1/resourceclaimtemplates", "/api/v1/pods",
};

typedef struct wctx {
    svc_dra_t *x;
    int kind;
    int epoch;
    bool listing;
    long bad;                      /* objects refused (logged: the first few) */
} wctx_t;

static void post(svc_dra_t *x, dra_msg_t *m)
{
    if (svc_queue_push(&x->q, &m->link) != 0)
        dra_msg_free(m);
}

/* Parse obj of kind k: the object (malloc'd) or NULL (why). */
static void *parse(int k, json_t *obj, char *why, size_t wl)
{
    static const size_t SZ[DRA_K_N] = { sizeof(dra_slice_t), sizeof(dra_class_t), sizeof(dra_claim_t),
                                        sizeof(dra_tmpl_t), sizeof(dra_pod_t) };
    void *o = calloc(1, SZ[k]);
    int rc;

    if (o == NULL) {
        snprintf(why, wl, "out of memory");
        return NULL;
    }
    switch (k) {
    case DRA_K_SLICE: rc = dra_parse_slice(obj, o, why, wl); break;
    case DRA_K_CLASS: rc = dra_parse_class(obj, o, why, wl); break;
    case DRA_K_CLAIM: rc = dra_parse_claim(obj, o, why, wl); break;
    case DRA_K_TMPL: rc = dra_parse_tmpl(obj, o, why, wl); break;
    default: rc = dra_parse_pod(obj, o, why, wl); break;
    }
    if (rc != 0) {
        free(o);
        return NULL;
    }
    return o;
}

/* The key an object is known by (for a deletion). */
static char *key_of(int k, json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *uid = json_string_value(json_object_get(md, "uid"));

    if (k == DRA_K_CLAIM || k == DRA_K_POD)
        return uid != NULL ? strdup(uid) : NULL;
    if (k == DRA_K_TMPL)
        return ns != NULL && name != NULL ? dra_strf("%s/%s", ns, name) : NULL;
    return name != NULL ? strdup(name) : NULL;
}

static bool pod_has_claims(json_t *obj)
{
    return json_array_size(json_object_get(json_object_get(obj, "spec"), "resourceClaims")) > 0;
}

void dra_watch_event(svc_dra_t *x, int k, const char *type, json_t *obj, int *epoch)
{
    dra_msg_t *m;
    char why[300];

    if (strcmp(type, "SYNCED") == 0 || strcmp(type, "LIST") == 0 || strcmp(type, "BEGIN") == 0) {
        if (strcmp(type, "BEGIN") == 0) {
            (*epoch)++;
            return;
        }
        if (strcmp(type, "SYNCED") == 0) {
            if ((m = calloc(1, sizeof(*m))) == NULL)
                return;
            m->kind = DRA_M_SYNCED;
            m->okind = k;
            m->epoch = *epoch;
            post(x, m);
            return;
        }
    }
    if (obj == NULL || (k == DRA_K_POD && !pod_has_claims(obj)))
        return;
    if ((m = calloc(1, sizeof(*m))) == NULL)
        return;
    m->kind = DRA_M_OBJ;
    m->okind = k;
    m->epoch = *epoch;
    if (strcmp(type, "DELETED") == 0) {
        m->del = true;
        if ((m->key = key_of(k, obj)) == NULL) {
            free(m);
            return;
        }
    } else if ((m->obj = parse(k, obj, why, sizeof(why))) == NULL) {
        const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));

        ms_log("error", "dra: an object migsched cannot read is ignored",
               json_pack("{s:s,s:s,s:s}", "path", PATHS[k], "name", name != NULL ? name : "?", "why", why));
        free(m);
        return;
    }
    post(x, m);
}

static void on_event(void *ctx, const char *type, json_t *obj)
{
    wctx_t *w = ctx;

    /* a list begins: its objects carry a new epoch */
    if (!w->listing && (strcmp(type, "LIST") == 0 || strcmp(type, "SYNCED") == 0)) {
        dra_watch_event(w->x, w->kind, "BEGIN", NULL, &w->epoch);
        w->listing = true;
    }
    if (strcmp(type, "SYNCED") == 0)
        w->listing = false;
    dra_watch_event(w->x, w->kind, type, obj, &w->epoch);
}

typedef struct wstart {
    svc_dra_t *x;
    int kind;
} wstart_t;

void *dra_watch_main(void *arg)
{
    wstart_t *s = arg;
    wctx_t w;

    memset(&w, 0, sizeof(w));
    w.x = s->x;
    w.kind = s->kind;
    free(s);
    (void)ms_kube_watch(w.x->d->kube, PATHS[w.kind], NULL, on_event, &w, &w.x->stop);
    return NULL;
}

int dra_watch_start(svc_dra_t *x, int k)
{
    wstart_t *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return -1;
    s->x = x;
    s->kind = k;
    if (pthread_create(&x->wa_th[k], NULL, dra_watch_main, s) != 0) {
        free(s);
        return -1;
    }
    x->wa_running[k] = true;
    return 0;
}
