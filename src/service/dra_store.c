/* dra_store.c - the DRA loop's tables (the DRA loop thread): the API's
 * objects by key, what the loop keeps beside claims and pods, which
 * drivers and classes are managed, and the list of pods to try at the end
 * of the batch. No decisions here: every other DRA file may use it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

/* --- tables ------------------------------------------------------------------- */

static const char *tab_key(const void *ctx, int32_t v)
{
    const dra_tab_t *t = ctx;

    return t->key(t->v[v]);
}

void dra_tab_init(dra_tab_t *t, const char *(*key)(const void *obj), void (*del)(void *obj))
{
    memset(t, 0, sizeof(*t));
    t->key = key;
    t->del = del;
    ms__idmap_init(&t->ids, tab_key, t, NULL, NULL);
}

void dra_tab_fini(dra_tab_t *t)
{
    int32_t i;

    for (i = 0; i < t->n; i++)
        if (t->v[i] != NULL)
            t->del(t->v[i]);
    free(t->v);
    free(t->freel);
    free(t->epoch);
    ms__idmap_fini(&t->ids);
    memset(t, 0, sizeof(*t));
}

void *dra_tab_get(const dra_tab_t *t, const char *key)
{
    int32_t i = ms__idmap_find(&t->ids, key);

    return i >= 0 ? t->v[i] : NULL;
}

int32_t dra_tab_index(const dra_tab_t *t, const char *key)
{
    return ms__idmap_find(&t->ids, key);
}

int dra_tab_put(dra_tab_t *t, void *o, int epoch)
{
    int32_t i = ms__idmap_find(&t->ids, t->key(o));

    if (i >= 0) {
        t->del(t->v[i]);
        t->v[i] = o;
        t->epoch[i] = epoch;
        return 0;
    }
    if (t->nfree == 0 && t->n == t->cap) {
        int32_t cap = t->cap ? t->cap * 2 : 64;
        void **v = realloc(t->v, (size_t)cap * sizeof(*v));
        int32_t *fl;
        int *ep;

        if (v != NULL)
            t->v = v;
        fl = v != NULL ? realloc(t->freel, (size_t)cap * sizeof(*fl)) : NULL;
        if (fl != NULL)
            t->freel = fl;
        ep = fl != NULL ? realloc(t->epoch, (size_t)cap * sizeof(*ep)) : NULL;
        if (ep == NULL) {
            t->del(o);
            return -1;
        }
        t->epoch = ep;
        t->cap = cap;
    }
    if (ms__idmap_reserve(&t->ids) != 0) {
        t->del(o);
        return -1;
    }
    i = t->nfree > 0 ? t->freel[--t->nfree] : t->n++;
    t->v[i] = o;
    t->epoch[i] = epoch;
    (void)ms__idmap_put(&t->ids, i);
    return 0;
}

/* Take the object out without freeing it (the caller does). */
void *dra_tab_take(dra_tab_t *t, const char *key)
{
    int32_t i = ms__idmap_find(&t->ids, key);
    void *o;

    if (i < 0)
        return NULL;
    ms__idmap_del(&t->ids, i);
    o = t->v[i];
    t->v[i] = NULL;
    t->freel[t->nfree++] = i;
    return o;
}

bool dra_tab_del(dra_tab_t *t, const char *key)
{
    void *o = dra_tab_take(t, key);

    if (o != NULL)
        t->del(o);
    return o != NULL;
}

/* --- keys and destructors ---------------------------------------------------------- */

static const char *k_slice(const void *o) { return ((const dra_slice_t *)o)->name; }
static const char *k_class(const void *o) { return ((const dra_class_t *)o)->name; }
static const char *k_claim(const void *o) { return ((const dra_claim_t *)o)->uid; }
static const char *k_tmpl(const void *o) { return ((const dra_tmpl_t *)o)->key; }
static const char *k_pod(const void *o) { return ((const dra_pod_t *)o)->uid; }
static const char *k_cst(const void *o) { return ((const dra_cstate_t *)o)->uid; }
static const char *k_pst(const void *o) { return ((const dra_pstate_t *)o)->uid; }

static void d_slice(void *o) { dra_slice_free(o); free(o); }
static void d_class(void *o) { dra_class_free(o); free(o); }
static void d_claim(void *o) { dra_claim_free(o); free(o); }
static void d_tmpl(void *o) { dra_tmpl_free(o); free(o); }
static void d_pod(void *o) { dra_pod_free(o); free(o); }

static void d_cst(void *o)
{
    dra_cstate_t *c = o;

    int i;

    for (i = 0; i < c->npend; i++)
        free(c->pend[i].kinds);
    free(c->pend);
    free(c->uid);
    free(c->expiring_rv);
    free(c->held);
    free(c->dec);
    free(c->decreq);
    free(c->qpod);
    free(c);
}

static void d_pst(void *o)
{
    dra_pstate_t *p = o;
    int i;

    for (i = 0; i < p->nexcl; i++)
        free(p->excl[i]);
    free(p->uid);
    free(p);
}

static const char *claim_nskey(const void *ctx, int32_t v)
{
    const svc_dra_t *x = ctx;

    return ((const dra_claim_t *)x->tab[DRA_K_CLAIM].v[v])->nskey;
}

int dra_store_init(svc_dra_t *x)
{
    dra_tab_init(&x->tab[DRA_K_SLICE], k_slice, d_slice);
    dra_tab_init(&x->tab[DRA_K_CLASS], k_class, d_class);
    dra_tab_init(&x->tab[DRA_K_CLAIM], k_claim, d_claim);
    dra_tab_init(&x->tab[DRA_K_TMPL], k_tmpl, d_tmpl);
    dra_tab_init(&x->tab[DRA_K_POD], k_pod, d_pod);
    dra_tab_init(&x->cst, k_cst, d_cst);
    dra_tab_init(&x->pst, k_pst, d_pst);
    ms__idmap_init(&x->claim_by_name, claim_nskey, x, NULL, NULL);
    return 0;
}

void dra_store_fini(svc_dra_t *x)
{
    int k;

    for (k = 0; k < DRA_K_N; k++)
        dra_tab_fini(&x->tab[k]);
    dra_tab_fini(&x->cst);
    dra_tab_fini(&x->pst);
    ms__idmap_fini(&x->claim_by_name);
}

dra_claim_t *dra_claim_by_name(svc_dra_t *x, const char *ns, const char *name)
{
    char key[2 * DRA_NAME_MAX + 4];
    int32_t i;

    if ((size_t)snprintf(key, sizeof(key), "%s/%s", ns, name) >= sizeof(key))
        return NULL;
    i = ms__idmap_find(&x->claim_by_name, key);
    return i >= 0 ? x->tab[DRA_K_CLAIM].v[i] : NULL;
}

dra_cstate_t *dra_cstate(svc_dra_t *x, const char *uid, bool make)
{
    dra_cstate_t *c = dra_tab_get(&x->cst, uid);

    if (c != NULL || !make)
        return c;
    if ((c = calloc(1, sizeof(*c))) == NULL || (c->uid = strdup(uid)) == NULL) {
        free(c);
        return NULL;
    }
    return dra_tab_put(&x->cst, c, 0) == 0 ? c : NULL;
}

dra_pstate_t *dra_pstate(svc_dra_t *x, const char *uid, bool make)
{
    dra_pstate_t *p = dra_tab_get(&x->pst, uid);

    if (p != NULL || !make)
        return p;
    if ((p = calloc(1, sizeof(*p))) == NULL || (p->uid = strdup(uid)) == NULL) {
        free(p);
        return NULL;
    }
    return dra_tab_put(&x->pst, p, 0) == 0 ? p : NULL;
}

bool dra_driver_managed(const svc_dra_t *x, const char *driver)
{
    int i;

    for (i = 0; i < x->cfg->ndrivers; i++)
        if (strcmp(x->cfg->drivers[i], driver) == 0)
            return true;
    return false;
}

bool dra_class_managed(svc_dra_t *x, const char *cls)
{
    const dra_class_t *c = dra_tab_get(&x->tab[DRA_K_CLASS], cls);
    int i, k;

    if (c == NULL)
        return false;
    /* by name: its selectors say a managed driver (NVIDIA's classes and
     * migsched-agent's do) */
    for (i = 0; i < c->ncel; i++)
        for (k = 0; k < x->cfg->ndrivers; k++)
            if (strstr(c->cel[i], x->cfg->drivers[k]) != NULL)
                return true;
    return false;
}

/* Try this pod again at the end of the batch. */
void dra_model_retry(svc_dra_t *x, const char *uid)
{
    dra_pstate_t *p = dra_pstate(x, uid, true);
    char **v, *s;
    int n = 0;

    if (p == NULL || p->in_retry)
        return;
    while (x->retry != NULL && x->retry[n] != NULL)
        n++;
    if ((s = strdup(uid)) == NULL || (v = realloc(x->retry, (size_t)(n + 2) * sizeof(*v))) == NULL) {
        free(s);
        return;
    }
    v[n] = s;
    v[n + 1] = NULL;
    x->retry = v;
    p->in_retry = true;
}

