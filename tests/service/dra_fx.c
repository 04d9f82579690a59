/* dra_fx.c - the DRA allocator's test fixture (dra_fx.h says what it plays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/kctl.h"
#include "dra_fx.h"



static double fwall(void *ctx) { return ((fx_t *)ctx)->wall; }
static double fmono(void *ctx) { return ((fx_t *)ctx)->mono; }

void fx_post(fx_t *f, int kind, const char *type, json_t *o)
{
    dra_watch_event(f->x, kind, type, o, &f->epoch[kind]);
    json_decref(o);
}

/* One loop iteration over what was posted, then a tick. */
void fx_batch(fx_t *f)
{
    svc_qlink_t *l = svc_queue_drain(&f->x->q);

    if (l != NULL)
        dra_loop_batch(f->x, l, f->mono);
    dra_loop_tick(f->x, f->mono);
}

void fx_advance(fx_t *f, double s)
{
    f->mono += s;
    f->wall += s;
    fx_batch(f);
}

void fx_init(fx_t *f, bool elect)
{
    char *argv[] = { (char *)"migschedd", (char *)"--dra", (char *)"--kube-api", (char *)"https://127.0.0.1:1",
                     (char *)(elect ? "--leader-elect" : "--dra-expire=60"), NULL };
    int k;

    memset(f, 0, sizeof(*f));
    assert_int_equal(svc_cfg_parse(&f->cfg, 5, argv), 0);
    f->cfg.dra->drivers[0] = strdup(DRV);
    f->cfg.dra->ndrivers = 1;
    f->wall = 1796190000.0;
    f->mono = 1000.0;
    f->clock.wall = fwall;
    f->clock.mono = fmono;
    f->clock.ctx = f;
    f->d.cfg = &f->cfg;
    f->d.clock = &f->clock;
    assert_non_null(f->x = dra_new(&f->d, f->cfg.dra));
    /* every kind listed, empty */
    for (k = 0; k < DRA_K_N; k++) {
        dra_watch_event(f->x, k, "BEGIN", NULL, &f->epoch[k]);
        dra_watch_event(f->x, k, "SYNCED", NULL, &f->epoch[k]);
    }
    fx_post(f, DRA_K_CLASS, "ADDED",
         json_pack("{s:{s:s},s:{s:[{s:{s:s}}]}}", "metadata", "name", "mig.nvidia.com", "spec", "selectors", "cel",
                   "expression", "device.driver == '" DRV "' && device.attributes['" DRV "'].type == 'mig'"));
    fx_post(f, DRA_K_CLASS, "ADDED",
         json_pack("{s:{s:s},s:{s:[{s:{s:s}}]}}", "metadata", "name", "gpu.nvidia.com", "spec", "selectors", "cel",
                   "expression", "device.driver == '" DRV "' && device.attributes['" DRV "'].type == 'gpu'"));
    fx_post(f, DRA_K_CLASS, "ADDED",
         json_pack("{s:{s:s},s:{s:[{s:{s:s}}]}}", "metadata", "name", "nic.example.com", "spec", "selectors", "cel",
                   "expression", "device.driver == 'nic.example.com'"));
    fx_batch(f);
}

void fx_fini(fx_t *f)
{
    svc_qlink_t *l, *n;

    for (l = svc_queue_drain(&f->x->wq); l != NULL; l = n) {
        n = l->next;
        dra_work_free(SVC_QITEM(l, dra_work_t, link));
    }
    dra_free(f->x);
    svc_cfg_free(&f->cfg);
}

int fx_setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    fx_init(f, false);
    *state = f;
    return 0;
}

int fx_teardown(void **state)
{
    fx_fini(*state);
    free(*state);
    return 0;
}

/* --- NVIDIA's slices for a node ----------------------------------------------------- */

json_t *fx_counters(int start, int size, double mem)
{
    json_t *c = json_object();
    char k[32];
    int i;

    for (i = start; i < start + size; i++) {
        snprintf(k, sizeof(k), "memory-slice-%d", i);
        json_object_set_new(c, k, json_pack("{s:s}", "value", "1"));
    }
    snprintf(k, sizeof(k), "%.0f", mem);
    json_object_set_new(c, "memory", json_pack("{s:s}", "value", k));
    return c;
}

json_t *fx_slice(const char *node, const char *name, long gen, long count)
{
    return json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:s,s:{s:s,s:i,s:i}}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceSlice", "metadata", "name", name, "spec", "driver", DRV, "nodeName", node, "pool", "name",
                     node, "generation", (int)gen, "resourceSliceCount", (int)count);
}

/* The node's slices: one with the counter sets, one per GPU (the whole
 * GPU and every base profile at every legal start), as NVIDIA's driver
 * publishes them (DynamicMIG). */
void fx_publish(fx_t *f, const char *node, const char *model, const char *product, int ngpus, long gen)
{
    const ms_model_t *m = ms_model_find(model);
    double gib = 1073741824.0;
    json_t *cs, *sets = json_array();
    char name[128], uuid[64], dn[64], set[32];
    int g, k, s;

    assert_non_null(m);
    snprintf(name, sizeof(name), "%s-counters", node);
    cs = fx_slice(node, name, gen, ngpus + 1);
    for (g = 0; g < ngpus; g++) {
        snprintf(set, sizeof(set), "gpu-%d-counter-set", g);
        json_array_append_new(sets, json_pack("{s:s,s:o}", "name", set, "counters", fx_counters(0, 8, m->mem_gb * gib)));
    }
    json_object_set_new(json_object_get(cs, "spec"), "sharedCounters", sets);
    fx_post(f, DRA_K_SLICE, "ADDED", cs);
    for (g = 0; g < ngpus; g++) {
        json_t *sl, *devs = json_array();

        snprintf(name, sizeof(name), "%s-gpu-%d", node, g);
        snprintf(uuid, sizeof(uuid), "GPU-%s-%d", node, g);
        snprintf(set, sizeof(set), "gpu-%d-counter-set", g);
        sl = fx_slice(node, name, gen, ngpus + 1);
        snprintf(dn, sizeof(dn), "gpu-%d", g);
        json_array_append_new(devs, json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:s}},s:{s:{s:s}},s:[{s:s,s:o}]}", "name", dn,
                                              "attributes", "type", "string", "gpu", "uuid", "string", uuid,
                                              "productName", "string", product, "capacity", "memory", "value", "40Gi",
                                              "consumesCounters", "counterSet", set, "counters",
                                              fx_counters(0, 8, m->mem_gb * gib)));
        for (k = 0; k < m->nprofiles; k++) {
            const ms_profile_t *p = &m->profiles[k];
            char tok[32], *o = tok;
            const char *i;

            if ((p->flags & MS_PF_BASE) == 0)
                continue;
            for (i = p->name; *i != '\0'; i++)
                if (*i != '.')
                    *o++ = *i;
            *o = '\0';
            for (s = 0; s < 16; s++) {
                double mem = (double)p->msize * m->mem_slice_gb * gib * 0.95;

                if (((p->start_mask >> s) & 1u) == 0)
                    continue;
                snprintf(dn, sizeof(dn), "gpu-%d-mig-%s-%d-%d", g, tok, p->gi_id, s);
                json_array_append_new(devs, json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:s},s:{s:s}},s:{s:{s:I}},"
                                                      "s:[{s:s,s:o}]}",
                                                      "name", dn, "attributes", "type", "string", "mig", "profile",
                                                      "string", p->name, "parentUUID", "string", uuid, "productName",
                                                      "string", product, "capacity", "memory", "value",
                                                      (json_int_t)mem, "consumesCounters", "counterSet", set,
                                                      "counters", fx_counters(s, p->msize, mem)));
            }
        }
        /* the capacity value must be a string quantity */
        {
            size_t i;
            json_t *d;

            json_array_foreach(devs, i, d) {
                json_t *v = json_object_get(json_object_get(json_object_get(d, "capacity"), "memory"), "value");
                char q[32];

                if (json_is_integer(v)) {
                    snprintf(q, sizeof(q), "%lld", (long long)json_integer_value(v));
                    json_object_set_new(json_object_get(json_object_get(d, "capacity"), "memory"), "value", json_string(q));
                }
            }
        }
        json_object_set_new(json_object_get(sl, "spec"), "devices", devs);
        fx_post(f, DRA_K_SLICE, "ADDED", sl);
    }
}

void fx_a100_cluster(fx_t *f, int nodes, int gpus)
{
    char n[16];
    int i;

    for (i = 0; i < nodes; i++) {
        snprintf(n, sizeof(n), "n%d", i + 1);
        fx_publish(f, n, "A100-40GB", "NVIDIA A100-SXM4-40GB", gpus, 1);
    }
    fx_advance(f, 1.0);   /* past the rebuild gap */
}

/* --- claims and pods ------------------------------------------------------------------- */

json_t *fx_request(const char *name, const char *cls, const char *cel, int count)
{
    json_t *ex = json_pack("{s:s,s:i}", "deviceClassName", cls, "count", count);

    if (cel != NULL)
        json_object_set_new(ex, "selectors", json_pack("[{s:{s:s}}]", "cel", "expression", cel));
    return json_pack("{s:s,s:o}", "name", name, "exactly", ex);
}

json_t *fx_profile_req(const char *name, const char *profile)
{
    char cel[160];

    snprintf(cel, sizeof(cel), "device.attributes['" DRV "'].profile == '%s'", profile);
    return fx_request(name, "mig.nvidia.com", cel, 1);
}

/* A claim of pod (its template's claim: owned by the pod). */
json_t *fx_claim(fx_t *f, const char *pod, json_t *requests, json_t *constraints)
{
    char name[64], uid[64], puid[64];
    json_t *c;

    snprintf(name, sizeof(name), "%s-gpu", pod);
    snprintf(uid, sizeof(uid), "claim-%s", pod);
    snprintf(puid, sizeof(puid), "pod-%s", pod);
    c = json_pack("{s:{s:s,s:s,s:s,s:s,s:[{s:s,s:s,s:s,s:s}]},s:{s:{s:o}}}", "metadata", "name", name, "namespace", "t",
                  "uid", uid, "resourceVersion", "10", "ownerReferences", "apiVersion", "v1", "kind", "Pod", "name", pod,
                  "uid", puid, "spec", "devices", "requests", requests);
    if (constraints != NULL)
        json_object_set_new(json_object_get(json_object_get(c, "spec"), "devices"), "constraints", constraints);
    f->nclaim++;
    return c;
}

json_t *fx_pod(const char *name, bool gated)
{
    char cn[64], uid[64];
    json_t *p;

    snprintf(cn, sizeof(cn), "%s-gpu", name);
    snprintf(uid, sizeof(uid), "pod-%s", name);
    p = json_pack("{s:{s:s,s:s,s:s,s:s},s:{s:[{s:s,s:s}]},s:{s:s,s:[{s:s,s:s}]}}", "metadata", "name", name, "namespace",
                  "t", "uid", uid, "resourceVersion", "5", "spec", "resourceClaims", "name", "gpu",
                  "resourceClaimTemplateName", "tmpl", "status", "phase", "Pending", "resourceClaimStatuses", "name", "gpu",
                  "resourceClaimName", cn);
    if (gated)
        json_object_set_new(json_object_get(p, "spec"), "schedulingGates", json_pack("[{s:s}]", "name", SVC_DRA_GATE));
    return p;
}

/* A pod asking for one device of profile. */
void fx_ask(fx_t *f, const char *name, const char *profile)
{
    fx_post(f, DRA_K_CLAIM, "ADDED", fx_claim(f, name, json_pack("[o]", fx_profile_req("mig", profile)), NULL));
    fx_post(f, DRA_K_POD, "ADDED", fx_pod(name, true));
    fx_batch(f);
}

/* --- the writers, played ----------------------------------------------------------------- */



/* Take the next write job of kind, or NULL. */
dra_work_t *fx_take(fx_t *f, int kind)
{
    svc_qlink_t *l = svc_queue_drain(&f->x->wq), *n, *keep = NULL, **tail = &keep;
    dra_work_t *got = NULL;

    for (; l != NULL; l = n) {
        dra_work_t *w = SVC_QITEM(l, dra_work_t, link);

        n = l->next;
        if (got == NULL && w->kind == kind) {
            got = w;
            continue;
        }
        if (w->kind == DRA_W_RULE) {   /* answered: nothing to wait for */
            dra_work_free(w);
            continue;
        }
        l->next = NULL;
        *tail = l;
        tail = &l->next;
    }
    for (l = keep; l != NULL; l = n) {
        n = l->next;
        (void)svc_queue_push(&f->x->wq, l);
    }
    return got;
}

char *fx_events_text(fx_t *f)
{
    svc_qlink_t *l = svc_queue_drain(&f->x->wq), *n;
    static char buf[4096];

    buf[0] = '\0';
    for (; l != NULL; l = n) {
        dra_work_t *w = SVC_QITEM(l, dra_work_t, link);

        n = l->next;
        if (w->kind == DRA_W_EVENT)
            strncat(buf, w->body, sizeof(buf) - strlen(buf) - 1);
        if (w->kind == DRA_W_EVENT || w->kind == DRA_W_RULE)
            dra_work_free(w);
        else
            (void)svc_queue_push(&f->x->wq, l);
    }
    return buf;
}

/* Answer w (ok or a 409), and when ok post its claims back allocated, as
 * the API server's watch would. */
void fx_answer(fx_t *f, dra_work_t *w, bool ok, alloc_t *out)
{
    dra_msg_t *m = calloc(1, sizeof(*m));
    int i;

    assert_non_null(m);
    if (out != NULL)
        memset(out, 0, sizeof(*out));
    w->ok = ok;
    w->ungated = ok && w->ungate;
    w->status = ok ? 200 : 409;
    for (i = 0; i < w->ncl; i++) {
        w->cl[i].ok = ok;
        if (!ok)
            snprintf(w->cl[i].why, sizeof(w->cl[i].why), "409 Conflict");
    }
    if (ok && out != NULL && w->ncl > 0) {
        json_t *res = json_object_get(json_object_get(w->cl[0].alloc, "devices"), "results"), *r;
        size_t k;

        snprintf(out->pod, sizeof(out->pod), "%s", w->pod_name);
        snprintf(out->claim, sizeof(out->claim), "%s", w->cl[0].name);
        json_array_foreach(res, k, r)
            if (out->ndev < 8)
                snprintf(out->dev[out->ndev++], 64, "%s", json_string_value(json_object_get(r, "device")));
        snprintf(out->node, sizeof(out->node), "%s",
                 json_string_value(json_array_get(json_object_get(json_array_get(json_object_get(json_array_get(
                     json_object_get(json_object_get(w->cl[0].alloc, "nodeSelector"), "nodeSelectorTerms"), 0),
                     "matchFields"), 0), "values"), 0)));
        out->al = json_incref(w->cl[0].alloc);
    }
    m->kind = DRA_M_WRITTEN;
    m->okind = -1;
    m->work = w;
    assert_int_equal(svc_queue_push(&f->x->q, &m->link), 0);
    fx_batch(f);
}

/* The claim of pod, as the API server holds it after our write (the
 * annotation, the finalizer, the allocation; reservedFor with the pod when
 * reserved). */
void fx_allocated(fx_t *f, const char *podname, json_t *al, bool reserved)
{
    char name[64], uid[64], puid[64];
    dra_claim_t *c;
    json_t *o, *st;

    snprintf(name, sizeof(name), "%s-gpu", podname);
    snprintf(uid, sizeof(uid), "claim-%s", podname);
    snprintf(puid, sizeof(puid), "pod-%s", podname);
    c = dra_claim_by_name(f->x, "t", name);
    assert_non_null(c);
    o = json_pack("{s:{s:s,s:s,s:s,s:s,s:{s:s},s:[s],s:[{s:s,s:s,s:s,s:s}]},s:{s:{s:[]}},s:{s:O}}", "metadata", "name",
                  name, "namespace", "t", "uid", uid, "resourceVersion", "11", "annotations", "migsched.io/dra-allocator",
                  "me", "finalizers", "resource.kubernetes.io/delete-protection", "ownerReferences", "apiVersion", "v1",
                  "kind", "Pod", "name", podname, "uid", puid, "spec", "devices", "requests", "status", "allocation", al);
    /* the spec as it was */
    {
        json_t *reqs = json_array();
        int r;

        for (r = 0; r < c->spec.nreq; r++)
            json_array_append_new(reqs, fx_profile_req(c->spec.req[r].name, "x"));
        json_object_set_new(json_object_get(json_object_get(o, "spec"), "devices"), "requests", reqs);
    }
    st = json_object_get(o, "status");
    if (reserved)
        json_object_set_new(st, "reservedFor", json_pack("[{s:s,s:s,s:s}]", "resource", "pods", "name", podname, "uid", puid));
    fx_post(f, DRA_K_CLAIM, "MODIFIED", o);
    fx_batch(f);
}

/* Decide, write and confirm one pod's device; its allocation. */
void fx_place(fx_t *f, const char *name, const char *profile, alloc_t *a)
{
    dra_work_t *w;

    fx_ask(f, name, profile);
    w = fx_take(f, DRA_W_ALLOC);
    if (w == NULL)
        fail_msg("no allocation for %s (%s): %s", name, profile, fx_events_text(f));
    assert_true(w->ungate);
    fx_answer(f, w, true, a);
    fx_allocated(f, name, a->al, true);
}

/* --- the model checked: what the map says of a device --------------------------------------- */

/* The memory slices device dev of node's GPU occupies, as a mask, and its GPU. */
int fx_slices_of(fx_t *f, const char *node, const char *dev, int *gpu)
{
    int g, d, w;

    assert_true(dra_map_find(&f->x->map, DRV, node, dev, &g, &d));
    *gpu = g;
    w = ms_geom_profile(f->x->map.gpu[g].geom, f->x->map.gpu[g].dev[d].prof)->msize;
    return ((1 << w) - 1) << f->x->map.gpu[g].dev[d].start;
}
