/* dra_place.c - what a claim request may get and where it goes (the DRA
 * loop thread).
 *
 * A request's selectors (its class's and its own, the CEL subset of
 * dra_cel.c) are evaluated once per device kind (a profile of a model of
 * a driver, with the attributes all its devices share), not per device:
 * the cost of a decision does not grow with the cluster. The matching
 * kinds give, per model, the smallest matching profile (by memory, then
 * compute): that is what ms_sched is asked for. Where ms_sched places it
 * is the configured policy's choice (fa+: FragCost); the device is then
 * the one published at that (GPU, profile, start).
 *
 * One device for a pod goes through ms_sched's queue (dra_decide.c).
 * Several at once (several requests, a count, several claims, a
 * matchAttribute on the GPU) are reserved together on one node with the
 * restricted-placement rule, or not at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

#define MAX_PROGS (2 * DRA_MAX_SEL)

/* Compile the class's and the request's expressions. n, or -1 (w says why). */
static int compile(const dra_class_t *cls, const dra_request_t *rq, dra_cel_t **prog, dra_want_t *w)
{
    int n = 0, i, k;

    for (k = 0; k < 2; k++) {
        char *const *cel = k == 0 ? cls->cel : rq->cel;
        int ncel = k == 0 ? cls->ncel : rq->ncel;

        for (i = 0; i < ncel && n < MAX_PROGS; i++) {
            if (dra_cel_compile(cel[i], &prog[n], w->why, sizeof(w->why)) != 0) {
                w->refused = true;
                for (; n > 0; n--)
                    dra_cel_free(prog[n - 1]);
                return -1;
            }
            n++;
        }
    }
    return n;
}

void dra_place_want(svc_dra_t *x, const dra_claim_t *c, int r, dra_want_t *w)
{
    const dra_request_t *rq = &c->spec.req[r];
    const dra_class_t *cls = dra_tab_get(&x->tab[DRA_K_CLASS], rq->cls);
    dra_cel_t *prog[MAX_PROGS];
    bool mig_match = false;
    char last[200] = "";
    int np, k, i, m;

    memset(w, 0, sizeof(*w));
    w->sched = -1;
    if (cls == NULL) {
        snprintf(w->why, sizeof(w->why), "request %s: DeviceClass %s does not exist", rq->name, rq->cls);
        return;
    }
    if ((np = compile(cls, rq, prog, w)) < 0)
        return;
    for (k = 0; k < x->map.nkind && w->nkinds < DRA_MAX_KINDS; k++) {
        dra_devview_t v;
        char why[200];

        dra_kind_view(&x->map.kind[k], &v);
        for (i = 0; i < np; i++)
            if (dra_cel_eval(prog[i], &v, why, sizeof(why)) != DRA_CEL_TRUE) {
                if (why[0] != '\0')
                    snprintf(last, sizeof(last), "%s", why);
                break;
            }
        if (i < np)
            continue;
        w->kinds[w->nkinds++] = k;
        mig_match = mig_match || x->map.kind[k].mig_gpu;
    }
    for (i = 0; i < np; i++)
        dra_cel_free(prog[i]);
    if (w->nkinds == 0) {
        snprintf(w->why, sizeof(w->why), "request %s: no device of a managed driver matches class %s and its selectors%s%s",
                 rq->name, rq->cls, last[0] ? ": " : "", last);
        return;
    }
    /* MIG GPUs first: a whole GPU only where no MIG device matches */
    w->sched = mig_match ? 0 : 1;
    for (i = 0, k = 0; k < w->nkinds; k++) {
        const dra_kind_t *kd = &x->map.kind[w->kinds[k]];

        if (kd->mig_gpu != mig_match)
            continue;
        w->kinds[i++] = w->kinds[k];
        for (m = 0; m < w->nmodels && w->geom[m] != kd->geom; m++)
            ;
        if (m == w->nmodels) {
            if (m == DRA_MAX_MODELS)
                continue;
            w->geom[m] = kd->geom;
            w->prof[m] = kd->prof;
            w->nmodels++;
        } else {
            double a = ms_geom_profile_mem_gb(kd->geom, kd->prof), b = ms_geom_profile_mem_gb(kd->geom, w->prof[m]);

            if (a < b || (a == b && ms_geom_profile(kd->geom, kd->prof)->cslices <
                                        ms_geom_profile(kd->geom, w->prof[m])->cslices))
                w->prof[m] = kd->prof;
        }
    }
    w->nkinds = i;
}

/* Does the map have a GPU of geometry i in scheduler s? */
static bool geom_in(const svc_dra_t *x, int i, int s)
{
    return x->map.gsched != NULL && (x->map.gsched[i] >> s & 1) != 0;
}

bool dra_place_req(const svc_dra_t *x, const dra_want_t *w, ms_sched_req_t *r)
{
    double mem = 1e18;
    int cs = 1000, i, m, f;

    if (w->sched < 0 || w->nmodels == 0)
        return false;
    if (w->nmodels == 1) {
        r->profile = ms_geom_profile(w->geom[0], w->prof[0])->name;
        r->model = ms_geom_model(w->geom[0])->name;
        return true;
    }
    for (m = 0; m < w->nmodels; m++) {
        double mg = ms_geom_profile_mem_gb(w->geom[m], w->prof[m]);
        int c = ms_geom_profile(w->geom[m], w->prof[m])->cslices;

        mem = mg < mem ? mg : mem;
        cs = c < cs ? c : cs;
    }
    /* the smallest-fit rule must give each matching model its profile
     * (any profile on a whole GPU) and every other model present nothing */
    for (i = 0; i < x->map.ngeoms; i++) {
        const ms_geom_t *g = x->map.geoms[i];

        if (!geom_in(x, i, w->sched))
            continue;
        f = ms_geom_smallest_fit(g, mem, cs);
        for (m = 0; m < w->nmodels && w->geom[m] != g; m++)
            ;
        if (m == w->nmodels ? f >= 0 : (w->sched == 0 ? f != w->prof[m] : f < 0))
            return false;
    }
    r->mem_gb = mem;
    r->cslices = cs;
    return true;
}

static bool has_kind(const int *kinds, int n, int k)
{
    int i;

    for (i = 0; i < n; i++)
        if (kinds[i] == k)
            return true;
    return false;
}

int dra_place_device(const svc_dra_t *x, const int *kinds, int nkinds, int gpu, int prof, int start)
{
    const dra_gpu_t *g = &x->map.gpu[gpu];
    int d;

    if (!g->mig)
        return g->whole >= 0 && has_kind(kinds, nkinds, g->dev[g->whole].kindix) ? g->whole : -1;
    if (prof < 0 || prof >= ms_geom_nprofiles(g->geom) || start < 0 || start >= ms_geom_width(g->geom))
        return -1;
    d = g->at[prof * ms_geom_width(g->geom) + start];
    if (d >= 0 && has_kind(kinds, nkinds, g->dev[d].kindix))
        return d;
    /* the full-size profile at 0 is also the whole-GPU device */
    if (g->whole >= 0 && g->dev[g->whole].prof == prof && start == 0 &&
        has_kind(kinds, nkinds, g->dev[g->whole].kindix))
        return g->whole;
    return -1;
}

/* --- several devices at once on one node ---------------------------------------------- */

static bool excluded(const dra_pstate_t *ps, const char *node)
{
    int i;

    for (i = 0; ps != NULL && i < ps->nexcl; i++)
        if (strcmp(ps->excl[i], node) == 0)
            return true;
    return false;
}

/* Do requests a and b of claim c share a matchAttribute on a GPU's uuid? */
static bool same_gpu(const dra_claim_t *c, int a, int b)
{
    int i, k, hit;

    for (i = 0; i < c->spec.ncon; i++) {
        const dra_constraint_t *con = &c->spec.con[i];
        const char *slash = strrchr(con->attr, '/');
        const char *n = slash != NULL ? slash + 1 : con->attr;

        if (strcmp(n, "parentUUID") != 0 && strcmp(n, "uuid") != 0)
            continue;
        if (con->nreqs == 0)
            return true;
        for (hit = 0, k = 0; k < con->nreqs; k++)
            hit += strcmp(con->reqs[k], c->spec.req[a].name) == 0 || strcmp(con->reqs[k], c->spec.req[b].name) == 0;
        if (hit >= (a == b ? 1 : 2))
            return true;
    }
    return false;
}

/* Reserve one slot on the listed GPUs (their ms_sched node names) of
 * model m of its want: 0, or -1. */
static int reserve_on(svc_dra_t *x, dra_slot_t *s, int m, const char **names, int nn, double now)
{
    const dra_want_t *w = s->w;
    ms_sched_req_t req;
    ms_sched_job_info_t ji;
    ms_diag_t diag;
    char id[160];
    int32_t slot;

    if (nn == 0)
        return -1;
    snprintf(id, sizeof(id), "%s/p%d/%d", s->c->uid, s->req, s->k);
    memset(&req, 0, sizeof(req));
    req.id = id;
    req.profile = ms_geom_profile(w->geom[m], w->prof[m])->name;
    req.model = ms_geom_model(w->geom[m])->name;
    ms_diag_clear(&diag);
    if (ms_sched_reserve(x->sched[w->sched], &req, names, nn, 3600, now, &slot, &diag) != MS_OK)
        return -1;
    if (ms_sched_job(x->sched[w->sched], slot, &ji) != MS_OK || ji.ninst < 1 || ji.inst[0].gpu < 0) {
        dra_sched_release(x, w->sched, slot, now);
        return -1;
    }
    s->slot = slot;
    s->gpu = x->gmap[w->sched][ji.inst[0].gpu];
    return 0;
}

/* The GPUs slot j may use: of model m, on node (or any node but the
 * excluded), on GPU only_gpu when >= 0. */
static int candidates(svc_dra_t *x, const dra_pstate_t *ps, const dra_want_t *w, int m, const char *node,
                      int only_gpu, const char **names)
{
    int i, n = 0;

    for (i = 0; i < x->map.ngpu; i++) {
        const dra_gpu_t *g = &x->map.gpu[i];

        if (g->sched != w->sched || g->geom != w->geom[m] || g->gpu < 0 || g->sname == NULL ||
            (node != NULL && strcmp(g->node, node) != 0) || (node == NULL && excluded(ps, g->node)) ||
            (only_gpu >= 0 && i != only_gpu))
            continue;
        names[n++] = g->sname;
    }
    return n;
}

/* The other slots, on node, after slot 0 got its GPU. */
static int reserve_rest(svc_dra_t *x, const dra_pstate_t *ps, dra_slot_t *sl, int n, const char *node,
                        const char **names, double now)
{
    int j, i, m, tie;

    for (j = 1; j < n; j++) {
        tie = -1;
        for (i = 0; i < j && tie < 0; i++)
            if (sl[i].c == sl[j].c && same_gpu(sl[j].c, sl[i].req, sl[j].req))
                tie = sl[i].gpu;
        for (m = 0; m < sl[j].w->nmodels; m++)
            if (reserve_on(x, &sl[j], m, names, candidates(x, ps, sl[j].w, m, node, tie, names), now) == 0)
                break;
        if (m == sl[j].w->nmodels)
            return -1;
    }
    return 0;
}

int dra_place_reserve(svc_dra_t *x, const dra_pstate_t *ps, dra_slot_t *sl, int n, const char *node, double now)
{
    const char **names = calloc((size_t)x->map.ngpu + 1, sizeof(*names));
    const dra_want_t *w0 = sl[0].w;
    int m, j;

    if (names == NULL || n < 1)
        goto fail;
    for (m = 0; m < w0->nmodels; m++) {
        for (j = 0; j < n; j++)
            sl[j].slot = -1;
        if (reserve_on(x, &sl[0], m, names, candidates(x, ps, w0, m, node, -1, names), now) == 0 &&
            reserve_rest(x, ps, sl, n, x->map.gpu[sl[0].gpu].node, names, now) == 0) {
            for (j = 0; j < n; j++)
                (void)ms_sched_bind(x->sched[sl[j].w->sched], sl[j].slot, now);
            free(names);
            return 0;
        }
        for (j = 0; j < n; j++)
            if (sl[j].slot >= 0)
                dra_sched_release(x, sl[j].w->sched, sl[j].slot, now);
    }
fail:
    for (j = 0; j < n; j++)
        sl[j].slot = -1;
    free(names);
    return -1;
}
