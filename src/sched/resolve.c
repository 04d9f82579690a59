/* resolve.c - what a request asks for on each node group (docs/sched.md,
 * "Requests"): the checks, the rule, and the answer a driver shows
 * (ms_sched_resolve_req).
 *
 * A profile is named (a product name, "3g.20gb"), or a size: a generic
 * name ("3g", compute slices) or mem_gb (with cslices). A named profile
 * must exist: on some model of the cluster, by its product name (issue 20,
 * defect 19: "5g.25gb", which no model has, was placed as 7g.40gb); it then
 * resolves on other models to the smallest profile with its memory and its
 * share of compute. A size rounds up to the smallest profile that holds it,
 * and ms_sched_resolve_req says to what.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sched/sched_int.h"

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
        return ms_geom_smallest_fit(g, ms_geom_profile_mem_gb(pg, req->prof), cs < 1 ? 1 : cs);
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
    } else if (!(req->checkpoint_s >= 0.0 && req->checkpoint_s <= 1e12)) {
        field = "checkpoint_s";
        why = "must be a number in [0, 1e12]";
    } else if (!(req->duration_s >= 0.0 && req->duration_s <= 1e15)) {
        field = "duration_s";
        why = "must be a number in [0, 1e15]";
    } else if (!(req->waited_s >= 0.0 && req->waited_s <= 1e12)) {
        field = "waited_s";
        why = "must be a number in [0, 1e12]";
    } else if (!(req->kept_s >= 0.0 && req->kept_s <= 1e12)) {
        field = "kept_s";
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

/* The (at most 3) profiles of the cluster's models nearest to mem_gb and cs
 * compute slices, as "3g.20gb (A100-40GB), ...": by memory, then compute,
 * then model order. */
static void nearest(const ms_sched_t *s, double mem, int cs, char *buf, size_t len)
{
    struct near {
        double d;
        const char *prof, *model;
    } best[3];
    int nb = 0, k, p, i;
    size_t o = 0;

    for (k = 0; k < s->ngroups; k++) {
        const ms_geom_t *g = s->grp[k].geom;

        for (p = 0; p < ms_geom_nprofiles(g); p++) {
            const ms_profile_t *pr = ms_geom_profile(g, p);
            double d = fabs(ms_geom_profile_mem_gb(g, p) - mem) * 64.0 + abs((int)pr->cslices - cs);
            bool dup = false;

            for (i = 0; i < nb && !dup; i++)
                dup = strcmp(best[i].prof, pr->name) == 0 && best[i].model == ms_geom_model(g)->name;
            if (dup || (nb == 3 && d >= best[2].d))
                continue;
            i = nb < 3 ? nb++ : 2;
            for (; i > 0 && best[i - 1].d > d; i--)
                best[i] = best[i - 1];
            best[i].d = d;
            best[i].prof = pr->name;
            best[i].model = ms_geom_model(g)->name;
        }
    }
    buf[0] = '\0';
    for (i = 0; i < nb && o < len; i++) {
        int w = snprintf(buf + o, len - o, "%s%s (%s)", i > 0 ? ", " : "", best[i].prof,
                         best[i].model);

        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* A named profile: active on some group, a generic size, or a product name
 * that some model of the cluster has. */
static ms_status_t check_name(const ms_sched_t *s, const char *name, ms_diag_t *diag)
{
    int k, cs = 0;
    double mem = 0.0;
    char near[192];

    for (k = 0; k < s->ngroups; k++)
        if (ms_geom_profile_find(s->grp[k].geom, name) >= 0)
            return MS_OK;
    if (!parse_profile_name(name, &cs, &mem)) {
        ms_diag_set(diag, NULL, 0, "profile",
                    "'%.64s' is not a profile: give a size (\"3g\") or a product name (\"3g.20gb\")",
                    name);
        return MS_EINVAL;
    }
    if (mem <= 0.0)
        return MS_OK;   /* a size: the smallest profile with that much compute */
    for (k = 0; k < s->ngroups; k++)
        if (ms_model_profile_find(ms_geom_model(s->grp[k].geom), name) >= 0)
            return MS_OK;
    nearest(s, mem, cs, near, sizeof(near));
    ms_diag_set(diag, NULL, 0, "profile",
                "no GPU model of this cluster has profile '%.32s'; the nearest: %s (or ask by size: "
                "\"%dg\", mem_gb)", name, near, cs);
    return MS_ENOENT;
}

ms_status_t ms__sched_resolve_profiles(const ms_sched_t *s, const ms_sched_req_t *req, int8_t *prof,
                                       int *node, ms_diag_t *diag)
{
    const ms_model_t *want = NULL;
    int k, gang = req->gang > 1 ? req->gang : 1, any = 0;
    ms_status_t st;

    *node = -1;
    if (!req_valid(req, diag))
        return MS_EINVAL;
    if (req->model != NULL && (want = ms_model_find(req->model)) == NULL) {
        ms_diag_set(diag, NULL, 0, "model", "unknown GPU model '%s'", req->model);
        return MS_EINVAL;
    }
    if (req->node != NULL && (*node = ms_sched_node_find(s, req->node)) < 0) {
        ms_diag_set(diag, NULL, 0, "node", "no node named '%s'", req->node);
        return MS_EINVAL;
    }
    if (req->profile != NULL && (st = check_name(s, req->profile, diag)) != MS_OK)
        return st;
    for (k = 0; k < s->ngroups; k++) {
        const ms__grp_t *g = &s->grp[k];
        int p = -1;

        prof[k] = -1;
        if (want != NULL && ms_geom_model(g->geom) != want)
            continue;
        if (req->isolation == MS_ISO_MIG && g->c->share == MS_SHARE_TIMESLICE &&
            g->mode != MS_NODE_WHOLE)
            continue;   /* time-sliced (a timeslice node, or the timeslice policy) */
        if (*node >= 0 && s->node_grp[*node] != k)
            continue;
        if (gang > g->gpn || gang > g->ngpus)
            continue;
        p = resolve_on(req, g->geom);
        prof[k] = (int8_t)p;
        any |= p >= 0;
    }
    if (!any) {
        ms_diag_set(diag, NULL, 0, req->profile != NULL ? "profile" : "mem_gb",
                    "no node of this cluster has a GPU that can host it");
        return MS_ENOFIT;
    }
    return MS_OK;
}

/* Is profile k of g more than the request asked for? */
static bool rounded(const ms_sched_req_t *req, const ms_geom_t *g, int k)
{
    const ms_profile_t *p = ms_geom_profile(g, k);
    int cs;
    double mem;

    if (req->prof_geom != NULL)
        return strcmp(ms_geom_profile(req->prof_geom, req->prof)->name, p->name) != 0;
    if (req->profile != NULL) {
        if (strcasecmp(req->profile, p->name) == 0)
            return false;
        if (!parse_profile_name(req->profile, &cs, &mem))
            return strcasecmp(req->profile, p->generic) != 0;
        if (mem > 0.0)
            return true;   /* another model's product: resolved by memory and share */
        return (int)p->cslices != cs;
    }
    return ms_geom_profile_mem_gb(g, k) > req->mem_gb + 1e-9 ||
           (req->cslices > 0 && (int)p->cslices > req->cslices);
}

ms_status_t ms_sched_resolve_req(const ms_sched_t *s, const ms_sched_req_t *req,
                                 ms_sched_resolution_t *out, ms_diag_t *diag)
{
    int8_t prof[MS__MAX_GROUPS];
    int k, node;
    int32_t tenant;
    ms_status_t st;

    if (s == NULL || req == NULL || out == NULL)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    if ((st = ms__sched_resolve_profiles(s, req, prof, &node, diag)) != MS_OK)
        return st;
    if ((st = ms__tenant_of_req(s, req, &tenant, diag)) != MS_OK)
        return st;
    for (k = 0; k < s->ngroups; k++) {
        const ms_geom_t *g = s->grp[k].geom;
        int i;
        bool dup = false;

        if (prof[k] < 0)
            continue;
        for (i = 0; i < out->n && !dup; i++)   /* one line per model and mode */
            dup = out->on[i].model == ms_geom_model(g)->name && out->on[i].mode == s->grp[k].mode;
        if (dup)
            continue;
        out->on[out->n].model = ms_geom_model(g)->name;
        out->on[out->n].mode = s->grp[k].mode;
        out->on[out->n].profile = ms_geom_profile(g, prof[k])->name;
        out->on[out->n].rounded = rounded(req, g, prof[k]);
        out->n++;
    }
    return MS_OK;
}
