/* dra_sched.c - ms_sched over the published GPUs (the DRA loop thread).
 *
 * Two schedulers: one for GPUs with MIG on (the configured policy, fa+ by
 * default), one for GPUs with MIG off (whole GPUs), so a request for a MIG
 * device can never be placed on a whole GPU and the other way round. Each
 * GPU is an ms_sched node of one GPU (named driver:node/gpu), so a
 * placement can be restricted to one GPU (matchAttribute on parentUUID)
 * or to one node's GPUs (the devices of one claim).
 *
 * ms_sched holds, as running jobs, every device in use: every allocation
 * in the API server, whoever wrote it (dra_sched_sync_claim adopts it),
 * and each decision of ours whose write is in flight. Nothing executes:
 * the DRA driver creates the instance when the kubelet prepares the claim,
 * so track_ops is off, and migration and make_room are off (a device a pod
 * holds cannot move under it). The node set changes only as slices do:
 * then the schedulers are built afresh (dra_sched_build) and every device
 * in use adopted again; queued pods are tried again in the order they
 * queued, with their wait carried over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

void dra_sched_drop(svc_dra_t *x)
{
    int32_t i;
    int s;

    for (s = 0; s < 2; s++) {
        ms_sched_destroy(x->sched[s]);
        x->sched[s] = NULL;
        free(x->slot_claim[s]);
        x->slot_claim[s] = NULL;
        x->nslot[s] = 0;
        free(x->gmap[s]);
        x->gmap[s] = NULL;
    }
    for (i = 0; i < x->cst.n; i++) {
        dra_cstate_t *cs = x->cst.v[i];

        if (cs != NULL) {
            cs->nheld = 0;
            dra_sched_unpend(x, cs, 0);   /* their schedulers are gone: nothing to release */
        }
    }
    x->built = false;
}

ms_status_t dra_sched_exec(void *ctx, const ms_sched_plan_t *p)
{
    struct dra_sctx *sc = ctx;
    svc_dra_t *x = sc->x;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        if (op->kind != MS_OP_START)
            continue;   /* CREATE, DESTROY: the driver's, at prepare; STOP: a claim went */
        if (x->nstarted == x->capstarted) {
            int cap = x->capstarted ? x->capstarted * 2 : 32;
            void *v = realloc(x->started, (size_t)cap * sizeof(*x->started));

            if (v == NULL)
                return MS_ENOMEM;
            x->started = v;
            x->capstarted = cap;
        }
        x->started[x->nstarted].sched = sc->k;
        x->started[x->nstarted].slot = op->job;
        x->started[x->nstarted].gpu = op->gpu;
        x->started[x->nstarted].prof = op->prof;
        x->started[x->nstarted].start = op->start;
        x->nstarted++;
    }
    return MS_OK;
}

/* Record which claim a slot serves (-1: none). */
int dra_sched_slot_set(svc_dra_t *x, int s, int32_t slot, int32_t cst_index)
{
    if (slot < 0)
        return -1;
    if (slot >= x->nslot[s]) {
        int32_t n = x->nslot[s] ? x->nslot[s] : 64, i;
        int32_t *v;

        while (n <= slot)
            n *= 2;
        if ((v = realloc(x->slot_claim[s], (size_t)n * sizeof(*v))) == NULL)
            return -1;
        for (i = x->nslot[s]; i < n; i++)
            v[i] = -1;
        x->slot_claim[s] = v;
        x->nslot[s] = n;
    }
    x->slot_claim[s][slot] = cst_index;
    return 0;
}

void dra_sched_release(svc_dra_t *x, int s, int32_t slot, double now)
{
    ms_sched_job_info_t ji;

    if (x->sched[s] == NULL || slot < 0 || ms_sched_job(x->sched[s], slot, &ji) != MS_OK)
        return;
    if (ji.state == MS_JOB_QUEUED || ji.state == MS_JOB_RESERVED || svc_job_live((int)ji.state))
        (void)ms_sched_cancel(x->sched[s], slot, now);
    (void)ms_sched_forget(x->sched[s], slot);
    if (slot < x->nslot[s])
        x->slot_claim[s][slot] = -1;
}

static ms_sched_t *make_sched(svc_dra_t *x, int s, double now)
{
    const svc_cfg_t *sc = x->d->cfg;
    ms_node_spec_t *nodes;
    char **names;
    ms_sched_cfg_t cfg;
    ms_sched_t *out = NULL;
    ms_diag_t diag;
    int i, n = 0;

    nodes = calloc((size_t)x->map.ngpu + 1, sizeof(*nodes));
    names = calloc((size_t)x->map.ngpu + 1, sizeof(*names));
    free(x->gmap[s]);
    x->gmap[s] = calloc((size_t)x->map.ngpu + 1, sizeof(*x->gmap[s]));
    for (i = 0; nodes != NULL && names != NULL && x->gmap[s] != NULL && i < x->map.ngpu; i++) {
        dra_gpu_t *g = &x->map.gpu[i];
        size_t len = strlen(g->driver) + strlen(g->node) + strlen(g->label) + 3;

        g->gpu = g->sched == s ? n : g->gpu;
        if (g->sched != s)
            continue;
        if ((names[n] = malloc(len)) == NULL)
            goto out;
        snprintf(names[n], len, "%s:%s/%s", g->driver, g->node, g->label);
        free(g->sname);
        if ((g->sname = strdup(names[n])) == NULL)
            goto out;
        x->gmap[s][n] = i;
        nodes[n].name = names[n];
        nodes[n].geom = g->geom;
        nodes[n].ngpus = 1;
        nodes[n].mode = g->mig ? MS_NODE_MIG : MS_NODE_WHOLE;
        n++;
    }
    if (nodes == NULL || names == NULL || x->gmap[s] == NULL || n == 0)
        goto out;
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find(sc->policy);
    cfg.pcfg = sc->pcfg;
    cfg.pcfg.migration = false;            /* a device a pod holds never moves */
    cfg.queue = sc->qcfg.queue;
    cfg.backfill_bound_s = sc->qcfg.backfill_bound_s;
    cfg.aging_rate = sc->qcfg.aging_rate;
    cfg.default_estimate_s = sc->qcfg.default_estimate_s;
    cfg.nodes = nodes;
    cfg.nnodes = n;
    cfg.no_room = true;
    cfg.track_ops = false;
    x->sctx[s].x = x;
    x->sctx[s].k = s;
    cfg.exec.ctx = &x->sctx[s];
    cfg.exec.plan = dra_sched_exec;
    ms_diag_clear(&diag);
    if (cfg.policy == NULL || ms_sched_create(&cfg, now, &out, &diag) != MS_OK) {
        ms_log("error", "dra: cannot build the scheduler",
               json_pack("{s:s,s:s,s:s}", "policy", sc->policy, "field", diag.field, "why", diag.msg));
        out = NULL;
    }
out:
    for (i = 0; names != NULL && i < n; i++)
        free(names[i]);
    free(names);
    free(nodes);
    return out;
}

typedef struct requeue {
    char *pod;
    double since;
} requeue_t;

static int cmp_requeue(const void *a, const void *b)
{
    const requeue_t *x = a, *y = b;

    return x->since < y->since ? -1 : x->since > y->since ? 1 : 0;
}

int dra_sched_build(svc_dra_t *x, double now)
{
    requeue_t *rq;
    int nrq = 0, s;
    int32_t i;

    /* the pods whose jobs were queued: tried again, in their order */
    if ((rq = calloc((size_t)x->cst.n + 1, sizeof(*rq))) == NULL)
        return -1;
    for (i = 0; i < x->cst.n; i++) {
        dra_cstate_t *cs = x->cst.v[i];

        if (cs != NULL && cs->npend > 0 && cs->qpod != NULL) {
            rq[nrq].pod = cs->qpod;
            rq[nrq++].since = cs->qsince;
        }
    }
    dra_sched_drop(x);
    for (i = 0; i < x->map.ngpu; i++)
        x->map.gpu[i].gpu = -1;
    for (s = 0; s < 2; s++)
        x->sched[s] = make_sched(x, s, now);
    x->built = true;
    x->last_build = now;
    x->st.rebuilds++;
    for (i = 0; i < x->tab[DRA_K_CLAIM].n; i++) {
        dra_claim_t *c = x->tab[DRA_K_CLAIM].v[i];
        dra_cstate_t *cs;

        if (c != NULL && (cs = dra_cstate(x, c->uid, c->allocated)) != NULL)
            dra_sched_sync_claim(x, c, cs, now);
    }
    qsort(rq, (size_t)nrq, sizeof(*rq), cmp_requeue);
    for (s = 0; s < nrq; s++)
        dra_model_retry(x, rq[s].pod);
    free(rq);
    return 0;
}

/* --- a claim's devices in ms_sched ------------------------------------------------- */

typedef struct target {
    int gpu, dev;
} target_t;

static bool held_has(const dra_cstate_t *cs, int gpu, int dev)
{
    int i;

    for (i = 0; i < cs->nheld; i++)
        if (cs->held[i].gpu == gpu && cs->held[i].dev == dev)
            return true;
    return false;
}

static int held_add(dra_cstate_t *cs, int s, int32_t slot, int gpu, int dev)
{
    if (cs->nheld == cs->capheld) {
        int cap = cs->capheld ? cs->capheld * 2 : 4;
        dra_held_t *v = realloc(cs->held, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return -1;
        cs->held = v;
        cs->capheld = cap;
    }
    cs->held[cs->nheld].slot = slot;
    cs->held[cs->nheld].sched = s;
    cs->held[cs->nheld].gpu = gpu;
    cs->held[cs->nheld].dev = dev;
    cs->nheld++;
    return 0;
}

/* Adopt one device for the claim: a running job on its GPU at its place. */
static void adopt(svc_dra_t *x, dra_cstate_t *cs, int gpu, int dev, double now)
{
    const dra_gpu_t *g = &x->map.gpu[gpu];
    const dra_dev_t *dv = &g->dev[dev];
    ms_sched_t *sd = x->sched[g->sched];
    ms_sched_req_t req;
    ms_diag_t diag;
    char id[160];
    int32_t slot;

    if (sd == NULL || g->gpu < 0 || dv->prof < 0)
        return;
    snprintf(id, sizeof(id), "%s/%d/%d", cs->uid, gpu, dev);
    memset(&req, 0, sizeof(req));
    req.id = id;
    req.profile = ms_geom_profile(g->geom, dv->prof)->name;
    ms_diag_clear(&diag);
    if (ms_sched_adopt(sd, g->gpu, dv->prof, g->mig ? dv->start : -1, &req, now, &diag) != MS_OK ||
        (slot = ms_sched_find(sd, id)) < 0) {
        /* someone else holds those memory slices: two claims name one
         * device or overlapping ones (nothing in the API server prevents it) */
        x->st.conflicts++;
        ms_log("error", "dra: a device in use overlaps another",
               json_pack("{s:s,s:s,s:s,s:s}", "claim", cs->uid, "node", g->node, "device", dv->name, "why", diag.msg));
        return;
    }
    if (held_add(cs, g->sched, slot, gpu, dev) != 0 ||
        dra_sched_slot_set(x, g->sched, slot, dra_tab_index(&x->cst, cs->uid)) != 0)
        dra_sched_release(x, g->sched, slot, now);
}

void dra_sched_sync_claim(svc_dra_t *x, dra_claim_t *c, dra_cstate_t *cs, double now)
{
    target_t t[DRA_MAX_RESULTS];
    int nt = 0, i, k, gpu, dev;

    if (c != NULL && c->allocated) {
        for (i = 0; i < c->nres && nt < DRA_MAX_RESULTS; i++)
            if (dra_map_find(&x->map, c->res[i].driver, c->res[i].pool, c->res[i].device, &gpu, &dev)) {
                t[nt].gpu = gpu;
                t[nt++].dev = dev;
            }
        if (cs->decided) {
            /* ours, seen: the decision is done (or someone else's won) */
            cs->decided = false;
            cs->ndec = 0;
        }
    } else if (c != NULL && cs->decided) {
        for (i = 0; i < cs->ndec && nt < DRA_MAX_RESULTS; i++) {
            t[nt].gpu = cs->dec[i].gpu;
            t[nt++].dev = cs->dec[i].dev;
        }
    } else if (c == NULL) {
        cs->decided = false;
        cs->ndec = 0;
    }
    if (!x->built)
        return;
    /* what is held and no longer wanted goes */
    for (i = 0; i < cs->nheld;) {
        for (k = 0; k < nt && (t[k].gpu != cs->held[i].gpu || t[k].dev != cs->held[i].dev); k++)
            ;
        if (k < nt) {
            i++;
            continue;
        }
        dra_sched_release(x, cs->held[i].sched, cs->held[i].slot, now);
        cs->held[i] = cs->held[--cs->nheld];
    }
    for (k = 0; k < nt; k++)
        if (!held_has(cs, t[k].gpu, t[k].dev))
            adopt(x, cs, t[k].gpu, t[k].dev, now);
    if (nt > 0 || c == NULL || c->deleting)
        dra_sched_unpend(x, cs, now);
}

void dra_sched_unpend(svc_dra_t *x, dra_cstate_t *cs, double now)
{
    int i;

    for (i = 0; i < cs->npend; i++) {
        dra_sched_release(x, cs->pend[i].sched, cs->pend[i].slot, now);
        free(cs->pend[i].kinds);
    }
    cs->npend = 0;
}

int dra_sched_hold(svc_dra_t *x, dra_cstate_t *cs, int s, int32_t slot, int gpu, int dev, int req)
{
    (void)x;
    if (cs->ndec == cs->capdec) {
        int cap = cs->capdec ? cs->capdec * 2 : 4;
        dra_held_t *v = realloc(cs->dec, (size_t)cap * sizeof(*v));
        int *r;

        if (v == NULL)
            return -1;
        cs->dec = v;
        if ((r = realloc(cs->decreq, (size_t)cap * sizeof(*r))) == NULL)
            return -1;
        cs->decreq = r;
        cs->capdec = cap;
    }
    if (held_add(cs, s, slot, gpu, dev) != 0)
        return -1;
    cs->dec[cs->ndec].slot = slot;
    cs->dec[cs->ndec].sched = s;
    cs->dec[cs->ndec].gpu = gpu;
    cs->dec[cs->ndec].dev = dev;
    cs->decreq[cs->ndec++] = req;
    return 0;
}
