/* jobs.c - the job table (slots, string ids), request resolution per node
 * group, and request classes.
 *
 * Slots are handed out in order and reused only after ms_sched_forget, so a
 * simulator that never forgets sees slots equal to submission order. Ids
 * live in a hash map that grows without a pause (src/core/idmap.h), so
 * lookups and submissions cost O(1) whatever the number of jobs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

#define MAX_ID_LEN 4096   /* ids are any length up to this (the API's bound) */

/* The id of a slot in the id map (a slot is only there while it has one). */
static const char *slot_id(const void *ctx, int32_t slot)
{
    return ((const ms_sched_t *)ctx)->jobs[slot].id;
}

void ms__sched_ids_init(ms_sched_t *s)
{
    ms__idmap_init(&s->ids, slot_id, s, s->cfg.alloc, s->cfg.alloc_ctx);
}

int32_t ms_sched_find(const ms_sched_t *s, const char *id)
{
    return ms__idmap_find(&s->ids, id);
}

ms_status_t ms__sched_job_alloc(ms_sched_t *s, const char *id, int32_t *slot)
{
    ms__job_t *j;
    int32_t k;

    if (id != NULL) {
        if (id[0] == '\0' || strnlen(id, MAX_ID_LEN + 1) > MAX_ID_LEN)
            return MS_EINVAL;
        if (ms_sched_find(s, id) >= 0)
            return MS_EEXIST;
    }
    if (s->nfree > 0) {
        k = s->free_slots[--s->nfree];
    } else {
        if (s->njobs == INT32_MAX)
            return MS_ERANGE;
        if (s->njobs == s->capjobs) {
            int32_t cap = s->capjobs ? (s->capjobs > INT32_MAX / 2 ? INT32_MAX : s->capjobs * 2) : 1024;
            ms__job_t *v = ms__srealloc(s, s->jobs, (size_t)cap * sizeof(*v));

            if (v == NULL)
                return MS_ENOMEM;
            s->jobs = v;
            s->capjobs = cap;
        }
        k = s->njobs++;
    }
    j = &s->jobs[k];
    memset(j, 0, sizeof(*j));
    j->next = j->prev = -1;
    j->group = -1;
    j->cls = -1;
    j->state = MS_JOB_QUEUED;
    if (id != NULL) {
        size_t n = strlen(id) + 1;

        if ((j->id = ms__salloc(s, n)) == NULL ||
            (memcpy(j->id, id, n), ms__idmap_put(&s->ids, k) != 0)) {
            ms__sfree(s, j->id);
            j->id = NULL;
            ms__sched_job_release(s, k);
            return MS_ENOMEM;
        }
    }
    *slot = k;
    return MS_OK;
}

void ms__sched_job_fill(ms_sched_t *s, int32_t slot, int32_t cls, const ms_sched_req_t *req,
                        double submit_t)
{
    ms__job_t *j = &s->jobs[slot];

    j->cls = cls;
    j->submit_t = submit_t;
    j->duration = req->duration_s;
    j->estimate = req->estimate_s;
    j->checkpoint = req->checkpoint_s;
    j->done = req->kept_s;
    j->priority = req->priority;
    j->nopreempt = req->nonpreemptible;
    j->gang = (int16_t)(req->gang > 1 ? req->gang : 1);
    j->migratable = req->migratable;
    j->seq = s->seq++;
}

void ms__sched_job_release(ms_sched_t *s, int32_t slot)
{
    ms__job_t *j = &s->jobs[slot];

    ms__tenant_uncharge(s, slot, -1.0);   /* a job dropped half placed gives its charge back */
    if (j->id != NULL) {
        ms__idmap_del(&s->ids, slot);
        ms__sfree(s, j->id);
        j->id = NULL;
    }
    ms__sfree(s, j->insts);
    j->insts = NULL;
    j->state = MS__SLOT_FREE;
    if (slot == s->njobs - 1) {
        s->njobs--;
        return;
    }
    if (s->nfree == s->capfree) {
        int32_t cap = s->capfree ? s->capfree * 2 : 64;
        int32_t *v = ms__srealloc(s, s->free_slots, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return;   /* the slot stays unused: a leak of one record, not an error */
        s->free_slots = v;
        s->capfree = cap;
    }
    s->free_slots[s->nfree++] = slot;
}

int32_t ms_sched_next_slot(const ms_sched_t *s)
{
    return s->nfree > 0 ? s->free_slots[s->nfree - 1] : s->njobs;
}

ms_status_t ms_sched_forget(ms_sched_t *s, int32_t slot)
{
    uint8_t st;

    if (slot < 0 || slot >= s->njobs || s->jobs[slot].state == MS__SLOT_FREE)
        return MS_ENOENT;
    st = s->jobs[slot].state;
    if (st != MS_JOB_DONE && st != MS_JOB_CANCELLED && st != MS_JOB_FAILED)
        return MS_ESTATE;
    ms__sched_job_release(s, slot);
    return MS_OK;
}

/* --- classes ------------------------------------------------------------ */

static double prof_mem_gb(const ms_geom_t *g, int k)
{
    return ms_geom_profile_mem_gb(g, k);
}

static bool cls_same(const ms__cls_t *a, const ms__cls_t *b, int ngroups)
{
    return a->gang == b->gang && a->node == b->node && a->tenant == b->tenant &&
           memcmp(a->prof, b->prof, (size_t)ngroups) == 0;
}

/* Candidate groups, best first: the smallest instance (memory, then compute
 * share), MIG before time-sliced before whole, then configuration order;
 * then those of models where the class's tenant has a per model guarantee
 * before the others (ms__tenant_prefer: Kueue tries a ClusterQueue's
 * flavors in order). */
void ms__sched_cls_order(const ms_sched_t *s, ms__cls_t *c, ms__cwatch_t *w)
{
    int k, i, n = 0;

    for (k = 0; k < s->ngroups; k++) {
        const ms__grp_t *g = &s->grp[k];
        double mk, ck;

        if (c->prof[k] < 0)
            continue;
        mk = g->mode == MS_NODE_WHOLE ? ms_geom_model(g->geom)->mem_gb : prof_mem_gb(g->geom, c->prof[k]);
        ck = g->mode == MS_NODE_WHOLE ? 1.0
                                      : (double)ms_geom_profile(g->geom, c->prof[k])->cslices /
                                            ms_geom_compute(g->geom);
        for (i = n; i > 0; i--) {
            const ms__grp_t *o = &s->grp[c->order[i - 1]];
            int ok = c->order[i - 1];
            double mo = o->mode == MS_NODE_WHOLE ? ms_geom_model(o->geom)->mem_gb
                                                 : prof_mem_gb(o->geom, c->prof[ok]);
            double co = o->mode == MS_NODE_WHOLE ? 1.0
                                                 : (double)ms_geom_profile(o->geom, c->prof[ok])->cslices /
                                                       ms_geom_compute(o->geom);

            if (mo < mk || (mo == mk && (co < ck || (co == ck && o->mode <= g->mode))))
                break;
            c->order[i] = c->order[i - 1];
        }
        c->order[i] = (int8_t)k;
        n++;
    }
    c->norder = n;
    ms__tenant_prefer(s, c);
    w->fit = w->any = w->impure = 0;
    for (i = 0; i < c->norder; i++) {
        const ms__grp_t *g = &s->grp[c->order[i]];
        uint64_t bit = (uint64_t)1 << i;

        if ((g->pol->flags & MS_POLICY_FIT_PLACE) && !c->gang && g->c->share == MS_SHARE_MIG &&
            c->prof[c->order[i]] >= 0) {
            w->fit |= bit;
            if (g->pol->flags & MS_POLICY_FIT_ANY)
                w->any |= bit;
        }
        if (!(g->pol->flags & MS_POLICY_PURE_PLACE))
            w->impure |= bit;
    }
}

ms_status_t ms__sched_resolve(ms_sched_t *s, const ms_sched_req_t *req, int32_t *cls,
                              ms_diag_t *diag)
{
    ms__cls_t c;
    int k, node = -1;
    ms_status_t st;

    memset(&c, 0, sizeof(c));
    if ((st = ms__sched_resolve_profiles(s, req, c.prof, &node, diag)) != MS_OK)
        return st;
    if ((st = ms__tenant_of_req(s, req, &c.tenant, diag)) != MS_OK)
        return st;
    c.gang = req->gang > 1;
    c.node = node;
    c.qhead = c.qtail = -1;
    for (k = 0; k < s->ncls; k++)
        if (cls_same(&s->cls[k], &c, s->ngroups)) {
            *cls = k;
            return MS_OK;
        }
    if (s->ncls == s->capcls) {
        int cap = s->capcls ? s->capcls * 2 : 16;
        ms__cls_t *v;
        ms__pmemo_t *pm;
        ms__cwatch_t *cw;
        int32_t *po, *pd;

        /* the pass's kept order grows with the classes (queue.c) */
        if ((po = ms__srealloc(s, s->pord, (size_t)cap * sizeof(*po))) == NULL)
            return MS_ENOMEM;
        s->pord = po;
        if ((pd = ms__srealloc(s, s->pdirty, (size_t)cap * sizeof(*pd))) == NULL)
            return MS_ENOMEM;
        s->pdirty = pd;
        if ((pm = ms__srealloc(s, s->pmemo, (size_t)cap * sizeof(*pm))) == NULL)
            return MS_ENOMEM;
        s->pmemo = pm;
        if ((cw = ms__srealloc(s, s->cwatch, (size_t)cap * sizeof(*cw))) == NULL)
            return MS_ENOMEM;
        s->cwatch = cw;
        if ((v = ms__srealloc(s, s->cls, (size_t)cap * sizeof(*v))) == NULL)
            return MS_ENOMEM;
        s->cls = v;
        s->capcls = cap;
    }
    ms__sched_cls_order(s, &c, &s->cwatch[s->ncls]);
    ms__tenant_cls_demand(s, &c);
    s->cls[s->ncls] = c;
    memset(&s->pmemo[s->ncls], 0, sizeof(s->pmemo[s->ncls]));
    s->pmemo[s->ncls].head = -1;
    *cls = s->ncls++;
    return MS_OK;
}
