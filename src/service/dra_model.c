/* dra_model.c - what a watched change sets off (the DRA loop thread):
 * the objects go into the tables (dra_store.c), a claim's devices are
 * synced with ms_sched, pods are marked to be tried.
 *
 * A change never decides on the spot: it marks what must be looked at
 * again (the map when slices change, pods when their claims change) and
 * the end of the batch does it once (dra_loop.c), so a burst of watch
 * events costs one rebuild and one try per pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

static void d_claim(dra_claim_t *c)
{
    dra_claim_free(c);
    free(c);
}

/* --- what a change sets off --------------------------------------------------------- */

/* Every pod that waits on the reserve path (several devices at once) gets
 * another try: room came free. Pods in ms_sched's queue need none. */
static void retry_waiting(svc_dra_t *x)
{
    int32_t i;

    for (i = 0; i < x->pst.n; i++) {
        dra_pstate_t *p = x->pst.v[i];

        if (p != NULL && p->wait_multi)
            dra_model_retry(x, p->uid);
    }
}

static bool same_results(const dra_claim_t *a, const dra_claim_t *b)
{
    int i;

    if (a->allocated != b->allocated || a->nres != b->nres)
        return false;
    for (i = 0; i < a->nres; i++)
        if (strcmp(a->res[i].device, b->res[i].device) != 0 || strcmp(a->res[i].pool, b->res[i].pool) != 0)
            return false;
    return true;
}

/* A claim changed (old: its previous version, or NULL; c: the new one, or
 * NULL when it went). */
/* Is the pod of uid still there, unbound and not going (a claim
 * deallocated after its pod went is no wipe)? */
static bool waiting(svc_dra_t *x, const char *uid)
{
    const dra_pod_t *p = dra_tab_get(&x->tab[DRA_K_POD], uid);

    return p != NULL && p->node == NULL && !p->done && !p->deleting;
}

static void claim_changed(svc_dra_t *x, const dra_claim_t *old, dra_claim_t *c, double now)
{
    const char *uid = c != NULL ? c->uid : old->uid;
    /* an allocation seen for the first time (ours after a restart, anyone
     * else's) gets its state, so that its devices are held */
    dra_cstate_t *cs = dra_cstate(x, uid, c != NULL && c->allocated);
    const char *owner = c != NULL ? c->owner : old->owner;

    /* an allocation of ours went while its pod still waits: kube-scheduler's
     * PostFilter wiped it (the node failed another of its filters), or it
     * expired: the pod is not tried on that node again for a while */
    if (old != NULL && old->allocated && old->ours && old->node != NULL && (c == NULL || !c->allocated) &&
        owner != NULL && waiting(x, owner)) {
        dra_pstate_t *p = dra_pstate(x, owner, true);

        if (p != NULL && p->nexcl < 8 && (p->excl[p->nexcl] = strdup(old->node)) != NULL) {
            p->excl_until[p->nexcl++] = now + 60.0;
            x->st.wiped++;
        }
    }
    if (cs != NULL && cs->expiring_rv != NULL && (c == NULL || c->rv == NULL || strcmp(c->rv, cs->expiring_rv) != 0)) {
        free(cs->expiring_rv);
        cs->expiring_rv = NULL;
    }
    if (cs != NULL && x->built)
        dra_sched_sync_claim(x, c, cs, now);
    if (c == NULL && cs != NULL && cs->nheld == 0 && cs->npend == 0)
        (void)dra_tab_del(&x->cst, uid);
    if (old == NULL || c == NULL || !same_results(old, c) || c->deleting)
        retry_waiting(x);
    if (owner != NULL)
        dra_model_retry(x, owner);
    else if (c != NULL)
        x->retry_named = true;   /* a pod may name it: every waiting pod is tried */
}

static void claim_put(svc_dra_t *x, dra_claim_t *c, int epoch, double now)
{
    dra_tab_t *t = &x->tab[DRA_K_CLAIM];
    int32_t oi = dra_tab_index(t, c->uid), i;
    dra_claim_t *old;

    /* the name index first: it reads the objects it holds */
    if (oi >= 0 && ms__idmap_find(&x->claim_by_name, ((dra_claim_t *)t->v[oi])->nskey) == oi)
        ms__idmap_del(&x->claim_by_name, oi);
    if ((i = ms__idmap_find(&x->claim_by_name, c->nskey)) >= 0) {
        dra_claim_t *prev = t->v[i];

        ms__idmap_del(&x->claim_by_name, i);
        if (strcmp(prev->uid, c->uid) != 0) {   /* the same name, another claim: that one is gone */
            prev = dra_tab_take(t, prev->uid);
            claim_changed(x, prev, NULL, now);
            d_claim(prev);
        }
    }
    old = dra_tab_take(t, c->uid);
    if (dra_tab_put(t, c, epoch) != 0) {
        if (old != NULL) {
            claim_changed(x, old, NULL, now);
            d_claim(old);
        }
        return;
    }
    if (ms__idmap_reserve(&x->claim_by_name) == 0)
        (void)ms__idmap_put(&x->claim_by_name, dra_tab_index(t, c->uid));
    claim_changed(x, old, c, now);
    if (old != NULL)
        d_claim(old);
}

static void claim_del(svc_dra_t *x, const char *uid, double now)
{
    dra_tab_t *t = &x->tab[DRA_K_CLAIM];
    int32_t i = dra_tab_index(t, uid);
    dra_claim_t *old;

    if (i < 0)
        return;
    if (ms__idmap_find(&x->claim_by_name, ((dra_claim_t *)t->v[i])->nskey) == i)
        ms__idmap_del(&x->claim_by_name, i);
    old = dra_tab_take(t, uid);
    claim_changed(x, old, NULL, now);
    d_claim(old);
}

/* A pod went, or will not run: its queued jobs go, its state too. Only
 * a pod the loop tried has any (bound pods cost nothing here). */
static void pod_gone(svc_dra_t *x, const dra_pod_t *p, double now)
{
    int i;

    if (p == NULL || dra_tab_get(&x->pst, p->uid) == NULL)
        return;
    for (i = 0; i < p->npc; i++) {
        dra_claim_t *c = p->pc[i].claim != NULL ? dra_claim_by_name(x, p->ns, p->pc[i].claim) : NULL;
        dra_cstate_t *cs = c != NULL ? dra_cstate(x, c->uid, false) : NULL;

        if (cs != NULL && cs->npend > 0 && cs->qpod != NULL && strcmp(cs->qpod, p->uid) == 0)
            dra_sched_unpend(x, cs, now);
    }
    (void)dra_tab_del(&x->pst, p->uid);
}

void dra_model_apply(svc_dra_t *x, dra_msg_t *m, double now)
{
    int k = m->okind;
    const char *key;
    dra_pod_t *p;

    if (k < 0 || k >= DRA_K_N)
        return;
    if (k == DRA_K_SLICE)
        x->map_dirty = true;
    if (k == DRA_K_CLASS)
        x->retry_named = true;
    if (m->del) {
        key = m->key;
        if (key == NULL)
            return;
        if (k == DRA_K_CLAIM)
            claim_del(x, key, now);
        else if (k == DRA_K_POD) {
            pod_gone(x, dra_tab_get(&x->tab[k], key), now);
            (void)dra_tab_del(&x->tab[k], key);
        } else
            (void)dra_tab_del(&x->tab[k], key);
        return;
    }
    if (m->obj == NULL)
        return;
    if (k == DRA_K_CLAIM) {
        claim_put(x, m->obj, m->epoch, now);
        m->obj = NULL;
        return;
    }
    p = k == DRA_K_POD ? m->obj : NULL;
    if (dra_tab_put(&x->tab[k], m->obj, m->epoch) != 0) {
        m->obj = NULL;
        return;
    }
    m->obj = NULL;
    if (p != NULL) {
        if (p->done || p->deleting || p->node != NULL)
            pod_gone(x, p, now);
        else if (p->npc > 0)
            dra_model_retry(x, p->uid);
    }
}

/* The watch of kind k relisted (epoch): what it did not list is gone. */
void dra_model_synced(svc_dra_t *x, int k, int epoch, double now)
{
    dra_tab_t *t = &x->tab[k];
    int32_t i;

    if (k < 0 || k >= DRA_K_N)
        return;
    for (i = 0; i < t->n; i++) {
        char key[2 * DRA_NAME_MAX + 4];

        if (t->v[i] == NULL || t->epoch[i] >= epoch)
            continue;
        snprintf(key, sizeof(key), "%s", t->key(t->v[i]));
        if (k == DRA_K_CLAIM)
            claim_del(x, key, now);
        else {
            if (k == DRA_K_POD)
                pod_gone(x, t->v[i], now);
            (void)dra_tab_del(t, key);
        }
        if (k == DRA_K_SLICE)
            x->map_dirty = true;
    }
    atomic_fetch_or(&x->synced_kinds, 1 << k);
}
