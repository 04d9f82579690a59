/* dra_commit.c - decisions to writes and back (the DRA loop thread): a
 * pod whose devices are all placed gets one write job (dra_write.c) with
 * each claim's finalizer and allocation (results, the class's and the
 * claim's config, the node, allocationTimestamp) and the removal of our
 * gate; the writer's outcome confirms the decision (the watch then shows
 * the allocation) or undoes it, and the pod is tried again after
 * --dra-retry. Also the webhook's question: does a pod need our gate?
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

void dra_decide_event(svc_dra_t *x, const dra_pod_t *p, const char *reason, const char *msg, double now)
{
    dra_pstate_t *ps = dra_pstate(x, p->uid, true);
    dra_work_t *w;

    if (ps == NULL || strncmp(ps->last_event, msg, sizeof(ps->last_event) - 1) == 0)
        return;
    snprintf(ps->last_event, sizeof(ps->last_event), "%s", msg);
    ms_log("info", "dra: pod waits", json_pack("{s:s,s:s,s:s,s:s}", "pod", p->name, "namespace", p->ns, "reason",
                                              reason, "why", msg));
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return;
    w->kind = DRA_W_EVENT;
    if ((w->path = dra_strf("/api/v1/namespaces/%s/events", p->ns)) == NULL) {
        dra_work_free(w);
        return;
    }
    w->body = dra_out_event(p->ns, p->name, p->uid, reason, msg, svc_clock_wall(x->d->clock));
    (void)now;
    dra_write_push(x, w);
}

bool dra_decide_gated(const dra_pod_t *p, bool *others)
{
    bool ours = false;
    int i;

    *others = false;
    for (i = 0; i < p->ngates; i++) {
        if (strcmp(p->gates[i], SVC_DRA_GATE) == 0)
            ours = true;
        else
            *others = true;
    }
    return ours;
}

static int other_gates(const dra_pod_t *p, char ***out)
{
    int i, n = 0;

    *out = calloc((size_t)p->ngates + 1, sizeof(**out));
    if (*out == NULL)
        return -1;
    for (i = 0; i < p->ngates; i++)
        if (strcmp(p->gates[i], SVC_DRA_GATE) != 0 && ((*out)[n] = strdup(p->gates[i])) != NULL)
            n++;
    return n;
}

dra_work_t *dra_decide_work(const dra_pod_t *p, int kind)
{
    dra_work_t *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return NULL;
    w->kind = kind;
    if ((w->pod_uid = strdup(p->uid)) == NULL || (w->pod_ns = strdup(p->ns)) == NULL ||
        (w->pod_name = strdup(p->name)) == NULL || (p->rv != NULL && (w->pod_rv = strdup(p->rv)) == NULL) ||
        (w->ngates = other_gates(p, &w->gates)) < 0) {
        w->ngates = 0;
        dra_work_free(w);
        return NULL;
    }
    return w;
}

void dra_commit_ungate(svc_dra_t *x, const dra_pod_t *p, dra_pstate_t *ps)
{
    dra_work_t *w = dra_decide_work(p, DRA_W_UNGATE);

    if (w == NULL)
        return;
    w->ungate = true;
    ps->busy = true;
    dra_write_push(x, w);
}


/* The allocation of claim c from its decision. */
static json_t *allocation(svc_dra_t *x, const dra_claim_t *c, const dra_cstate_t *cs, const char **node, double now)
{
    dra_out_result_t res[DRA_MAX_RESULTS];
    json_t *cfgs[DRA_MAX_RESULTS], *config, *al;
    const char *reqs[DRA_MAX_RESULTS];
    int i, n = cs->ndec < DRA_MAX_RESULTS ? cs->ndec : DRA_MAX_RESULTS, ncfg = 0;

    for (i = 0; i < n; i++) {
        const dra_gpu_t *g = &x->map.gpu[cs->dec[i].gpu];
        const dra_request_t *rq = &c->spec.req[cs->decreq[i]];
        const dra_class_t *cls = dra_tab_get(&x->tab[DRA_K_CLASS], rq->cls);
        int k;

        res[i].request = rq->name;
        res[i].driver = g->driver;
        res[i].pool = g->pool;
        res[i].device = g->dev[cs->dec[i].dev].name;
        *node = g->node;
        for (k = 0; k < ncfg && strcmp(reqs[k], rq->name) != 0; k++)
            ;
        if (k == ncfg && cls != NULL && cls->config != NULL) {
            cfgs[ncfg] = cls->config;
            reqs[ncfg++] = rq->name;
        }
    }
    if ((config = dra_out_config(cfgs, reqs, ncfg, c->spec.config)) == NULL)
        return NULL;
    al = dra_out_allocation(res, n, *node, config, svc_clock_wall(x->d->clock));
    json_decref(config);
    (void)now;
    return al;
}

void dra_commit_pod(svc_dra_t *x, const char *uid, double now)
{
    dra_pod_t *p = dra_tab_get(&x->tab[DRA_K_POD], uid);
    dra_pstate_t *ps = dra_pstate(x, uid, false);
    const char *node;
    bool others;
    dra_work_t *w;
    int i, k = 0;

    if (p == NULL || ps == NULL || ps->busy || p->node != NULL || p->done || p->deleting)
        return;
    for (i = 0; i < p->npc; i++) {
        dra_claim_t *c = p->pc[i].claim != NULL ? dra_claim_by_name(x, p->ns, p->pc[i].claim) : NULL;
        dra_cstate_t *cs = c != NULL ? dra_cstate(x, c->uid, false) : NULL;

        if (c == NULL || (cs != NULL && cs->npend > 0))
            return;   /* another device of the pod is still queued */
    }
    if ((w = dra_decide_work(p, DRA_W_ALLOC)) == NULL || (w->cl = calloc((size_t)p->npc, sizeof(*w->cl))) == NULL) {
        dra_work_free(w);
        return;
    }
    for (i = 0; i < p->npc; i++) {
        dra_claim_t *c = dra_claim_by_name(x, p->ns, p->pc[i].claim);
        dra_cstate_t *cs = c != NULL ? dra_cstate(x, c->uid, false) : NULL;
        dra_wclaim_t *wc = &w->cl[k];

        if (cs == NULL || !cs->decided || cs->writing || c->allocated)
            continue;
        if ((wc->ns = strdup(c->ns)) == NULL || (wc->name = strdup(c->name)) == NULL ||
            (wc->uid = strdup(c->uid)) == NULL || (c->rv != NULL && (wc->rv = strdup(c->rv)) == NULL) ||
            (wc->meta = dra_out_claim_meta(c, x->identity)) == NULL ||
            (wc->alloc = allocation(x, c, cs, &node, now)) == NULL) {
            w->ncl = k + 1;
            dra_work_free(w);
            return;
        }
        cs->writing = true;
        k++;
    }
    w->ncl = k;
    w->ungate = dra_decide_gated(p, &others);
    if (k == 0 && !w->ungate) {
        dra_work_free(w);
        return;
    }
    ps->busy = true;
    x->st.decisions++;
    dra_write_push(x, w);
}

void dra_decide_written(svc_dra_t *x, dra_work_t *w, double now)
{
    dra_pstate_t *ps = w->pod_uid != NULL ? dra_pstate(x, w->pod_uid, false) : NULL;
    bool failed = !w->ok;
    int i;

    if (w->kind == DRA_W_RULE) {
        if (w->ok)
            x->fenced_n++;
        return;
    }
    if (w->kind == DRA_W_DEALLOC) {
        dra_cstate_t *cs = w->claim_uid != NULL ? dra_cstate(x, w->claim_uid, false) : NULL;

        if (w->ok)
            x->st.expired++;
        else if (cs != NULL) {   /* tried again at the next scan */
            free(cs->expiring_rv);
            cs->expiring_rv = NULL;
        }
        return;
    }
    if (w->kind != DRA_W_ALLOC && w->kind != DRA_W_UNGATE)
        return;
    for (i = 0; i < w->ncl; i++) {
        dra_cstate_t *cs = dra_cstate(x, w->cl[i].uid, false);

        if (cs == NULL)
            continue;
        cs->writing = false;
        if (w->cl[i].ok) {
            x->st.writes_ok++;
            continue;
        }
        failed = true;
        x->st.writes_failed++;
        cs->decided = false;
        cs->ndec = 0;
        dra_sched_sync_claim(x, dra_tab_get(&x->tab[DRA_K_CLAIM], w->cl[i].uid), cs, now);
    }
    if (w->ungated)
        x->st.ungated++;
    if (ps == NULL)
        return;
    ps->ungated = ps->ungated || w->ungated;
    ps->busy = false;
    if (!failed && w->ncl > 0 && !ps->counted && ps->seen > 0) {
        dra_stats_lat(x, w->t_done > 0 ? w->t_done - ps->seen : now - ps->seen);
        ps->counted = true;
    }
    if (failed) {
        ps->retry_at = now + x->cfg->retry_s;
        ms_log("info", "dra: write failed, the pod is tried again",
               json_pack("{s:s,s:s,s:i}", "pod", w->pod_name, "why", w->why, "status", (int)w->status));
    } else {
        dra_model_retry(x, w->pod_uid);
    }
}

void dra_stats_lat(svc_dra_t *x, double s)
{
    dra_stats_t *st = &x->st;

    if (st->caplat == 0) {
        if ((st->lat = calloc(65536, sizeof(*st->lat))) == NULL)
            return;
        st->caplat = 65536;
    }
    st->lat[st->lathead] = s;
    st->lathead = (st->lathead + 1) % st->caplat;
    if (st->nlat < st->caplat)
        st->nlat++;
}

