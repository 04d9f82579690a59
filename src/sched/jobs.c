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

void ms__sched_job_release(ms_sched_t *s, int32_t slot)
{
    ms__job_t *j = &s->jobs[slot];

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

/* --- resolution --------------------------------------------------------- */

static double prof_mem_gb(const ms_geom_t *g, int k)
{
    return ms_geom_profile_mem_gb(g, k);
}

/* "3g" -> 3, "3g.20gb" -> 3 and 20; false for anything else. */
static bool parse_profile_name(const char *name, int *cs, double *mem)
{
    const char *p = name;
    int c = 0;
    double m = 0.0;

    while (*p >= '0' && *p <= '9' && c < 1000)
        c = c * 10 + (*p++ - '0');
    if (p == name || *p++ != 'g' || c == 0)
        return false;
    *cs = c;
    *mem = 0.0;
    if (*p == '\0')
        return true;
    if (*p++ != '.')
        return false;
    if (!(*p >= '0' && *p <= '9'))
        return false;
    while (*p >= '0' && *p <= '9' && m < 1e6)
        m = m * 10.0 + (*p++ - '0');
    if (strcmp(p, "gb") != 0)
        return false;
    *mem = m;
    return true;
}

static int resolve_on(const ms_sched_req_t *req, const ms_geom_t *g)
{
    int C = ms_geom_compute(g), k;

    if (req->prof_geom != NULL) {
        const ms_geom_t *pg = req->prof_geom;
        const ms_profile_t *p;
        int cs;

        if (pg == g)
            return req->prof;
        if (ms_geom_model(pg) == ms_geom_model(g)) {
            k = ms_geom_profile_find(g, ms_geom_profile(pg, req->prof)->name);
            if (k >= 0)
                return k;
        }
        p = ms_geom_profile(pg, req->prof);
        cs = (int)ceil((double)p->cslices * C / ms_geom_compute(pg) - 1e-9);
        return ms_geom_smallest_fit(g, prof_mem_gb(pg, req->prof), cs < 1 ? 1 : cs);
    }
    if (req->profile != NULL) {
        int cs;
        double mem;

        if ((k = ms_geom_profile_find(g, req->profile)) >= 0)
            return k;
        if (!parse_profile_name(req->profile, &cs, &mem))
            return -1;
        if (mem > 0.0) {
            /* a product name of another model: its memory and compute share */
            double share = 7.0;
            const ms_model_t *mine = ms_geom_model(g);
            int i, nm;
            const ms_model_t *ms = ms_models(&nm);

            for (i = 0; i < nm; i++)
                if (&ms[i] != mine && ms_model_profile_find(&ms[i], req->profile) >= 0) {
                    share = ms[i].compute_slices;
                    break;
                }
            cs = (int)ceil((double)cs * C / share - 1e-9);
            return ms_geom_smallest_fit(g, mem, cs < 1 ? 1 : cs);
        }
        return ms_geom_smallest_fit(g, 0.0, cs);
    }
    return ms_geom_smallest_fit(g, req->mem_gb, req->cslices > 0 ? req->cslices : 1);
}

static bool req_valid(const ms_sched_req_t *req, ms_diag_t *diag)
{
    int n = (req->profile != NULL) + (req->mem_gb != 0.0) + (req->prof_geom != NULL);
    const char *why = NULL, *field = "profile";

    if (n != 1) {
        why = "give exactly one of profile and mem_gb";
    } else if (req->prof_geom != NULL &&
               (req->prof < 0 || req->prof >= ms_geom_nprofiles(req->prof_geom))) {
        why = "profile index out of range";
    } else if (req->mem_gb != 0.0 && !(req->mem_gb > 0.0 && req->mem_gb <= 1e6)) {
        field = "mem_gb";
        why = "must be a number in (0, 1e6]";
    } else if (req->cslices < 0 || req->cslices > 64) {
        field = "cslices";
        why = "must be 0..64";
    } else if (req->gang < 0 || req->gang > 1024) {
        field = "gang";
        why = "must be 1..1024";
    } else if (!(req->estimate_s >= 0.0 && req->estimate_s <= 1e12)) {
        field = "estimate_s";
        why = "must be a number in [0, 1e12]";
    } else if (!(req->duration_s >= 0.0 && req->duration_s <= 1e15)) {
        field = "duration_s";
        why = "must be a number in [0, 1e15]";
    } else if (!(req->waited_s >= 0.0 && req->waited_s <= 1e12)) {
        field = "waited_s";
        why = "must be a number in [0, 1e12]";
    } else if ((unsigned)req->isolation > MS_ISO_MIG) {
        field = "isolation";
        why = "must be any or mig";
    }
    if (why == NULL)
        return true;
    ms_diag_set(diag, NULL, 0, field, "%s", why);
    return false;
}

static bool cls_same(const ms__cls_t *a, const ms__cls_t *b, int ngroups)
{
    return a->gang == b->gang && a->node == b->node &&
           memcmp(a->prof, b->prof, (size_t)ngroups) == 0;
}

/* Candidate groups, best first: the smallest instance (memory, then compute
 * share), MIG before time-sliced before whole, then configuration order. */
static void cls_order(const ms_sched_t *s, ms__cls_t *c)
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
}

ms_status_t ms__sched_resolve(ms_sched_t *s, const ms_sched_req_t *req, int32_t *cls,
                              ms_diag_t *diag)
{
    ms__cls_t c;
    const ms_model_t *want = NULL;
    int k, node = -1, gang = req->gang > 1 ? req->gang : 1, any = 0;

    if (!req_valid(req, diag))
        return MS_EINVAL;
    if (req->model != NULL && (want = ms_model_find(req->model)) == NULL) {
        ms_diag_set(diag, NULL, 0, "model", "unknown GPU model '%s'", req->model);
        return MS_EINVAL;
    }
    if (req->node != NULL && (node = ms_sched_node_find(s, req->node)) < 0) {
        ms_diag_set(diag, NULL, 0, "node", "no node named '%s'", req->node);
        return MS_EINVAL;
    }
    memset(&c, 0, sizeof(c));
    c.gang = gang > 1;
    c.node = node;
    c.qhead = c.qtail = -1;
    for (k = 0; k < s->ngroups; k++) {
        const ms__grp_t *g = &s->grp[k];
        int p = -1;

        c.prof[k] = -1;
        if (want != NULL && ms_geom_model(g->geom) != want)
            continue;
        if (req->isolation == MS_ISO_MIG && g->c->share == MS_SHARE_TIMESLICE &&
            g->mode != MS_NODE_WHOLE)
            continue;   /* time-sliced (a timeslice node, or the timeslice policy) */
        if (node >= 0 && s->node_grp[node] != k)
            continue;
        if (gang > g->gpn || gang > g->ngpus)
            continue;
        p = resolve_on(req, g->geom);
        c.prof[k] = (int8_t)p;
        any |= p >= 0;
    }
    if (!any) {
        ms_diag_set(diag, NULL, 0, req->profile != NULL ? "profile" : "mem_gb",
                    "no node of this cluster has a GPU that can host it");
        return MS_ENOFIT;
    }
    for (k = 0; k < s->ncls; k++)
        if (cls_same(&s->cls[k], &c, s->ngroups)) {
            *cls = k;
            return MS_OK;
        }
    if (s->ncls == s->capcls) {
        int cap = s->capcls ? s->capcls * 2 : 16;
        ms__cls_t *v = ms__srealloc(s, s->cls, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return MS_ENOMEM;
        s->cls = v;
        s->capcls = cap;
    }
    cls_order(s, &c);
    s->cls[s->ncls] = c;
    *cls = s->ncls++;
    return MS_OK;
}
