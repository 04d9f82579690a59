/* dra_decide.c - what each pod gets (the DRA loop thread).
 *
 * A pod is ours to decide while it is unbound, not finished, carries no
 * scheduling gate but ours, and has a claim for a device of a managed
 * driver that nobody has allocated. Then:
 *   - every claim must exist (a template's claim is created by the
 *     resource-claim controller) and be one migsched can serve;
 *   - one device in all: a job in ms_sched's queue (the configured policy
 *     places it when it fits; the queue discipline decides who passes
 *     whom), which starts at once when there is room;
 *   - several, or a claim already allocated on a node, or nodes where its
 *     allocation was wiped: reserved together on one node, or the pod
 *     waits until room comes free;
 *   - once every device is placed, one write job (dra_write.c): each claim's
 *     finalizer and allocation, then the gate removed.
 * A pod whose claims are all allocated (by anyone) or not ours only loses
 * our gate. What cannot be served is said in an event on the pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

/* --- the pod's claims --------------------------------------------------------------- */

static bool managed_request(svc_dra_t *x, const dra_request_t *r)
{
    return r->cls != NULL && dra_class_managed(x, r->cls);
}

/* 1: wait (a claim is missing, being deleted, or in progress); -1:
 * refused (why); 0: *n claims, *node the node of those allocated. */
int dra_decide_resolve(svc_dra_t *x, const dra_pod_t *p, dra_pclaim_t *pc, int *n, const char **node, char *why,
                       size_t wl)
{
    int i, k, man;

    *n = 0;
    *node = NULL;
    for (i = 0; i < p->npc; i++) {
        dra_claim_t *c;

        if (p->pc[i].claim == NULL || (c = dra_claim_by_name(x, p->ns, p->pc[i].claim)) == NULL)
            return 1;   /* the resource-claim controller has not made it yet */
        if (c->deleting || (p->pc[i].tmpl != NULL && c->owner != NULL && strcmp(c->owner, p->uid) != 0))
            return 1;
        pc[*n].c = c;
        pc[*n].cs = dra_cstate(x, c->uid, false);
        pc[*n].todo = false;
        if (c->allocated) {
            const char *nd = c->node;
            int g, d;

            if (nd == NULL && c->nres > 0 &&
                dra_map_find(&x->map, c->res[0].driver, c->res[0].pool, c->res[0].device, &g, &d))
                nd = x->map.gpu[g].node;
            if (nd != NULL && *node != NULL && strcmp(nd, *node) != 0) {
                snprintf(why, wl, "its claims are allocated on different nodes (%s, %s)", *node, nd);
                return -1;
            }
            if (nd != NULL)
                *node = nd;
        } else {
            for (man = 0, k = 0; k < c->spec.nreq; k++)
                man += managed_request(x, &c->spec.req[k]);
            if (man > 0 && man < c->spec.nreq) {
                snprintf(why, wl, "claim %s mixes devices migsched manages with others", c->name);
                return -1;
            }
            if (man > 0) {
                if (c->spec.why != NULL) {
                    snprintf(why, wl, "claim %s: %s", c->name, c->spec.why);
                    return -1;
                }
                for (k = 0; k < c->spec.nreq; k++)
                    if (c->spec.req[k].why != NULL) {
                        snprintf(why, wl, "claim %s: %s", c->name, c->spec.req[k].why);
                        return -1;
                    }
                for (k = 0; k < c->spec.ncon; k++) {
                    const char *sl = strrchr(c->spec.con[k].attr, '/'), *an = sl != NULL ? sl + 1 : c->spec.con[k].attr;

                    if (strcmp(an, "parentUUID") != 0 && strcmp(an, "uuid") != 0 && strcmp(an, "productName") != 0) {
                        snprintf(why, wl, "claim %s: matchAttribute %s is not supported (parentUUID, uuid, productName)",
                                 c->name, c->spec.con[k].attr);
                        return -1;
                    }
                }
                if (pc[*n].cs != NULL && (pc[*n].cs->npend > 0 || pc[*n].cs->decided))
                    return 1;   /* queued, placed or being written */
                pc[*n].todo = true;
            }
        }
        (*n)++;
    }
    return 0;
}

/* --- the decision ----------------------------------------------------------------- */

static int pend_add(svc_dra_t *x, dra_cstate_t *cs, const dra_pod_t *p, double since, int s, int32_t slot, int req,
                    const dra_want_t *w)
{
    dra_pend_t *v = realloc(cs->pend, (size_t)(cs->npend + 1) * sizeof(*v));
    int *kinds = malloc((size_t)(w->nkinds > 0 ? w->nkinds : 1) * sizeof(*kinds));

    if (v != NULL)
        cs->pend = v;
    if (v == NULL || kinds == NULL || (cs->qpod == NULL && (cs->qpod = strdup(p->uid)) == NULL) ||
        dra_sched_slot_set(x, s, slot, dra_tab_index(&x->cst, cs->uid)) != 0) {
        free(kinds);
        return -1;
    }
    if (strcmp(cs->qpod, p->uid) != 0) {
        char *u = strdup(p->uid);

        if (u == NULL) {
            free(kinds);
            return -1;
        }
        free(cs->qpod);
        cs->qpod = u;
    }
    memcpy(kinds, w->kinds, (size_t)w->nkinds * sizeof(*kinds));
    cs->pend[cs->npend].slot = slot;
    cs->pend[cs->npend].sched = s;
    cs->pend[cs->npend].req = req;
    cs->pend[cs->npend].kinds = kinds;
    cs->pend[cs->npend].nkinds = w->nkinds;
    cs->npend++;
    cs->qsince = since;
    return 0;
}

/* One device: a job in ms_sched's queue. 0, -1 (not expressible: the
 * reserve path), -2 (refused, evented). */
static int queue_one(svc_dra_t *x, const dra_pod_t *p, dra_pstate_t *ps, dra_claim_t *c, int r, const dra_want_t *w,
                     double now)
{
    dra_cstate_t *cs = dra_cstate(x, c->uid, true);
    ms_sched_req_t req;
    ms_diag_t diag;
    char id[160], msg[300];
    int32_t slot = -1;

    memset(&req, 0, sizeof(req));
    if (cs == NULL || !dra_place_req(x, w, &req))
        return -1;
    snprintf(id, sizeof(id), "%s/q%d", c->uid, r);
    req.id = id;
    req.priority = p->priority;   /* its PriorityClass orders the queue */
    req.waited_s = now > ps->seen ? now - ps->seen : 0;
    ms_diag_clear(&diag);
    if (ms_sched_submit(x->sched[w->sched], &req, now, &slot, &diag) != MS_OK || slot < 0) {
        snprintf(msg, sizeof(msg), "claim %s request %s: %s", c->name, c->spec.req[r].name,
                 diag.msg[0] ? diag.msg : "migsched cannot host it");
        dra_decide_event(x, p, "MigschedCannotHost", msg, now);
        return -2;
    }
    if (pend_add(x, cs, p, ps->seen, w->sched, slot, r, w) != 0) {
        dra_sched_release(x, w->sched, slot, now);
        return -2;
    }
    return 0;
}

/* Several devices, on one node: reserved together, or the pod waits. */
static void reserve_all(svc_dra_t *x, const dra_pod_t *p, dra_pstate_t *ps, dra_pclaim_t *pc, int n,
                        const char *node, dra_want_t *wants, int *wix, double now)
{
    dra_slot_t sl[DRA_MAX_RESULTS];
    int ns = 0, i, r, k, j = 0;

    for (i = 0; i < n; i++) {
        if (!pc[i].todo)
            continue;
        for (r = 0; r < pc[i].c->spec.nreq; r++, j++)
            for (k = 0; k < pc[i].c->spec.req[r].count && ns < DRA_MAX_RESULTS; k++) {
                sl[ns].c = pc[i].c;
                sl[ns].cs = dra_cstate(x, pc[i].c->uid, true);
                sl[ns].req = r;
                sl[ns].k = k;
                sl[ns].w = &wants[wix[j]];
                if (sl[ns].cs == NULL)
                    return;
                ns++;
            }
    }
    if (ns == 0 || dra_place_reserve(x, ps, sl, ns, node, now) != 0) {
        ps->wait_multi = true;   /* room coming free tries it again */
        return;
    }
    ps->wait_multi = false;
    for (i = 0; i < ns; i++)
        if (pend_add(x, sl[i].cs, p, ps->seen, sl[i].w->sched, sl[i].slot, sl[i].req, sl[i].w) != 0)
            dra_sched_release(x, sl[i].w->sched, sl[i].slot, now);
}

/* What each request may get; -1 when one cannot be served (evented) or
 * matches nothing (evented, the pod waits for slices to change). */
static int wants_of(svc_dra_t *x, const dra_pod_t *p, dra_pclaim_t *pc, int n, dra_want_t *wants, int *wix,
                    int *nslots, double now)
{
    int i, r, j = 0;

    *nslots = 0;
    for (i = 0; i < n; i++) {
        if (!pc[i].todo)
            continue;
        for (r = 0; r < pc[i].c->spec.nreq; r++, j++) {
            if (j >= DRA_MAX_RESULTS)
                return -1;
            dra_place_want(x, pc[i].c, r, &wants[j]);
            wix[j] = j;
            if (wants[j].sched < 0) {
                dra_decide_event(x, p, wants[j].refused ? "MigschedRefused" : "MigschedNoDevice", wants[j].why, now);
                return -1;
            }
            *nslots += pc[i].c->spec.req[r].count;
        }
    }
    return 0;
}

void dra_decide_pod(svc_dra_t *x, dra_pod_t *p, double now)
{
    dra_pclaim_t pc[DRA_MAX_PODCLAIMS];
    dra_want_t *wants;
    dra_pstate_t *ps;
    const char *node;
    int wix[DRA_MAX_RESULTS], n, i, todo = 0, nslots, first = -1, rc;
    char why[300];
    bool others;

    if (!x->built || !dra_leading(x, now) || p->node != NULL || p->done || p->deleting || p->npc == 0)
        return;
    if ((ps = dra_pstate(x, p->uid, true)) == NULL || ps->busy || ps->retry_at > now)
        return;
    (void)dra_decide_gated(p, &others);
    if (others)
        return;   /* another controller holds it back: not before it lets go */
    if (ps->seen == 0)
        ps->seen = now;
    for (i = 0; i < ps->nexcl;) {   /* exclusions expire */
        if (ps->excl_until[i] > now) {
            i++;
            continue;
        }
        free(ps->excl[i]);
        ps->excl[i] = ps->excl[ps->nexcl - 1];
        ps->excl_until[i] = ps->excl_until[--ps->nexcl];
    }
    if ((rc = dra_decide_resolve(x, p, pc, &n, &node, why, sizeof(why))) != 0) {
        if (rc < 0)
            dra_decide_event(x, p, "MigschedRefused", why, now);
        return;
    }
    for (i = 0; i < n; i++)
        if (pc[i].todo && todo++ == 0)
            first = i;
    if (todo == 0) {
        if (dra_decide_gated(p, &others) && !ps->ungated)
            dra_commit_ungate(x, p, ps);   /* allocated by someone, or not ours */
        return;
    }
    if ((wants = calloc(DRA_MAX_RESULTS, sizeof(*wants))) == NULL)
        return;
    if (wants_of(x, p, pc, n, wants, wix, &nslots, now) == 0) {
        rc = -1;
        if (nslots == 1 && todo == 1 && node == NULL && ps->nexcl == 0)
            for (i = 0; i < pc[first].c->spec.nreq; i++)
                if (pc[first].c->spec.req[i].count == 1)
                    rc = queue_one(x, p, ps, pc[first].c, i, &wants[0], now);
        if (rc == -1)
            reserve_all(x, p, ps, pc, n, node, wants, wix, now);
    }
    free(wants);
    dra_decide_started(x, now);
}

/* One START: its claim's decision. The pod whose devices are all placed
 * is returned in *pod (borrowed), else NULL. */
static void started_one(svc_dra_t *x, int s, int32_t slot, int gpu, int prof, int start, const char **pod, double now)
{
    dra_cstate_t *cs;
    int32_t ci;
    int i, mg, d;

    *pod = NULL;
    if (slot < 0 || slot >= x->nslot[s] || (ci = x->slot_claim[s][slot]) < 0 || ci >= x->cst.n ||
        (cs = x->cst.v[ci]) == NULL || gpu < 0 || gpu >= x->map.ngpu)
        return;
    for (i = 0; i < cs->npend && cs->pend[i].slot != slot; i++)
        ;
    if (i == cs->npend || x->gmap[s] == NULL)
        return;
    mg = x->gmap[s][gpu];
    d = dra_place_device(x, cs->pend[i].kinds, cs->pend[i].nkinds, mg, prof, start);
    if (d < 0 || dra_sched_hold(x, cs, s, slot, mg, d, cs->pend[i].req) != 0) {
        /* placed where no matching device is published: undone, tried again */
        ms_log("error", "dra: a placement has no matching device",
               json_pack("{s:s,s:s,s:i,s:i}", "claim", cs->uid, "gpu", x->map.gpu[mg].label, "prof", prof, "start", start));
        dra_sched_release(x, s, slot, now);
        free(cs->pend[i].kinds);
        cs->pend[i] = cs->pend[--cs->npend];
        dra_sched_unpend(x, cs, now);
        cs->decided = false;
        cs->ndec = 0;
        dra_sched_sync_claim(x, dra_tab_get(&x->tab[DRA_K_CLAIM], cs->uid), cs, now);
        if (cs->qpod != NULL) {
            dra_pstate_t *ps = dra_pstate(x, cs->qpod, false);

            if (ps != NULL)
                ps->retry_at = now + x->cfg->retry_s;
        }
        return;
    }
    free(cs->pend[i].kinds);
    cs->pend[i] = cs->pend[--cs->npend];
    if (cs->npend == 0) {
        cs->decided = true;
        *pod = cs->qpod;
    }
}

void dra_decide_started(svc_dra_t *x, double now)
{
    /* releasing a slot may start queued jobs: until no START is left */
    while (x->nstarted > 0) {
        int n = x->nstarted, i;
        const char **pods = calloc((size_t)n, sizeof(*pods));
        struct { int sched; int32_t slot; int gpu, prof, start; } *v = malloc((size_t)n * sizeof(*v));

        if (v == NULL || pods == NULL) {
            free(v);
            free(pods);
            x->nstarted = 0;
            return;
        }
        memcpy(v, x->started, (size_t)n * sizeof(*v));
        x->nstarted = 0;
        for (i = 0; i < n; i++)
            started_one(x, v[i].sched, v[i].slot, v[i].gpu, v[i].prof, v[i].start, &pods[i], now);
        for (i = 0; i < n; i++)
            if (pods[i] != NULL) {
                char *uid = strdup(pods[i]);

                if (uid != NULL)
                    dra_commit_pod(x, uid, now);
                free(uid);
            }
        free(v);
        free(pods);
    }
}
