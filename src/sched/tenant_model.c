/* tenant_model.c - a tenant's quotas per GPU model (docs/tenants.md):
 * limit@MODEL, a cap (Kueue's quota per ResourceFlavor, checked where the
 * cluster-wide limit is: tenant.c), and guarantee@MODEL, a guarantee on
 * GPUs of one model (Kueue's nominalQuota per ResourceFlavor).
 *
 * A per model guarantee G on model M makes a class head "within" when its
 * tenant's slices on M (kept per model at each charge, tenant.c) plus the
 * head's slices on a group of M times its gang stay <= G: beside the
 * cluster-wide test, not instead (either suffices). The tier, reclaim and
 * the guarantee-owed rules ask ms__tenant_within_cls. Kueue assigns a
 * flavor before admission, trying flavors in order; our queue orders heads
 * before placement, so the head is within if it is on any model it can run
 * on, and its class tries the groups of guaranteed models first
 * (ms__tenant_prefer), which is where it then lands when there is room.
 * Reclaim by a per model guarantee takes victims only on the models where
 * the head is within (preempt.c), and a victim's tenant keeps its
 * guarantee on the victim's model (ms__tenant_keeps_model).
 *
 * A tenant with no per model guarantee (nmg == 0: every tenant until one is
 * declared) takes none of these paths: every answer is tenant.c's.
 */
#include <stdio.h>

#include "sched/sched_int.h"

#define MAX_SLICES 1000000000L

/* static, so a pointer difference; -1 past MS__NMODELS (not expected) */
int ms__model_index(const ms_model_t *m)
{
    int i = (int)(m - ms_models(NULL));

    return i >= 0 && i < MS__NMODELS ? i : -1;
}

/* Entry i of t, its model known (mi[i]): its values' own rules. */
static ms_status_t check_entry(const ms_sched_tenant_t *t, int i, const char *name, ms_diag_t *diag)
{
    char field[64];
    long l = t->model_limits[i].limit, g = t->model_limits[i].guarantee;

    if (g < 0 || g > MAX_SLICES) {
        snprintf(field, sizeof(field), "guarantee@%.40s", name);
        ms_diag_set(diag, NULL, 0, field, "tenant %s: %s must be 0..1e9 slices (0: none)", t->name, field);
        return MS_EINVAL;
    }
    snprintf(field, sizeof(field), "limit@%.40s", name);
    /* no limit (< 0) only beside a guarantee: an entry declares something */
    if (l > MAX_SLICES || (l < 0 && g == 0)) {
        ms_diag_set(diag, NULL, 0, field, "tenant %s: %s must be 0..1e9 slices", t->name, field);
        return MS_EINVAL;
    }
    if (l >= 0 && g > l) {
        snprintf(field, sizeof(field), "guarantee@%.40s", name);
        ms_diag_set(diag, NULL, 0, field, "tenant %s: guarantee@%.40s (%ld) must be at most limit@%.40s (%ld)",
                    t->name, name, g, name, l);
        return MS_EINVAL;
    }
    return MS_OK;
}

ms_status_t ms__tenant_check_models(const ms_sched_tenant_t *t, int *mi, ms_diag_t *diag)
{
    char field[64];
    int i, k;
    ms_status_t st;

    if (t->nmodel_limits < 0 || t->nmodel_limits > MS_TENANT_MAX_MODEL_LIMITS) {
        ms_diag_set(diag, NULL, 0, "limit@MODEL", "tenant %s: at most %d per model limits", t->name,
                    MS_TENANT_MAX_MODEL_LIMITS);
        return MS_EINVAL;
    }
    for (i = 0; i < t->nmodel_limits; i++) {
        const char *name = t->model_limits[i].model;
        const ms_model_t *m = ms_model_find(name);

        /* the field an entry is known by: its limit, else its guarantee */
        snprintf(field, sizeof(field), "%s@%.40s", t->model_limits[i].limit < 0 &&
                 t->model_limits[i].guarantee > 0 ? "guarantee" : "limit", name != NULL ? name : "");
        if (m == NULL) {
            ms_diag_set(diag, NULL, 0, field, "tenant %s: %s: no such GPU model", t->name, field);
            return MS_EINVAL;
        }
        if ((mi[i] = ms__model_index(m)) < 0) {
            ms_diag_set(diag, NULL, 0, field, "tenant %s: %s: the model is past MS__NMODELS", t->name, field);
            return MS_EINVAL;
        }
        if ((st = check_entry(t, i, name, diag)) != MS_OK)
            return st;
        for (k = 0; k < i; k++)
            if (mi[k] == mi[i]) {
                ms_diag_set(diag, NULL, 0, field, "tenant %s: %s: model %s is %s twice", t->name, field,
                            m->name, t->model_limits[i].limit < 0 ? "guaranteed" : "limited");
                return MS_EINVAL;
            }
    }
    return MS_OK;
}

bool ms__tenant_set_models(ms__tenant_t *r, const ms_sched_tenant_t *t, const int *mi)
{
    long was[MS__NMODELS];
    bool changed = false;
    int k;

    for (k = 0; k < MS__NMODELS; k++) {
        was[k] = r->mguar[k];
        r->mlim[k] = -1;
        r->mguar[k] = 0;
    }
    r->nmg = 0;
    for (r->nml = 0; r->nml < t->nmodel_limits; r->nml++) {
        const ms_sched_tenant_model_limit_t *e = &t->model_limits[r->nml];

        r->ml[r->nml] = (int8_t)mi[r->nml];
        r->mlim[mi[r->nml]] = e->limit < 0 ? -1 : e->limit;
        r->mguar[mi[r->nml]] = e->guarantee;
        r->nmg += e->guarantee > 0;
    }
    /* the classes' orders follow which models have a guarantee, not how much */
    for (k = 0; k < MS__NMODELS; k++)
        changed |= (was[k] > 0) != (r->mguar[k] > 0);
    return changed;
}

void ms__tenant_prefer(const ms_sched_t *s, ms__cls_t *c)
{
    const ms__tenant_t *t = ms__tenant_c(s, c->tenant);
    int8_t rest[MS__MAX_GROUPS];
    int i, n = 0, nr = 0;

    if (t->nmg == 0)
        return;
    /* a stable partition: each part keeps the order it had */
    for (i = 0; i < c->norder; i++) {
        int mi = s->grp_mi[c->order[i]];

        if (mi >= 0 && t->mguar[mi] > 0)
            c->order[n++] = c->order[i];
        else
            rest[nr++] = c->order[i];
    }
    for (i = 0; i < nr; i++)
        c->order[n + i] = rest[i];
}

void ms__tenant_reorder(ms_sched_t *s, int32_t k)
{
    int i;

    for (i = 0; i < s->ncls; i++) {
        ms__cls_t *c = &s->cls[i];

        if (c->tenant != k)
            continue;
        ms__sched_cls_order(s, c, &s->cwatch[i]);
        ms__tenant_cls_demand(s, c);
        c->hgen++;   /* offer it again: where it would go changed */
        s->qgen++;
        if (c->qhead >= 0) {
            c->hdem = c->dem1 * c->hgang;
            c->hmem = c->mem1 * (float)c->hgang;
            c->hmemmin = c->memmin * (float)c->hgang;
        }
    }
}

uint32_t ms__tenant_within_models(const ms_sched_t *s, const ms__cls_t *c)
{
    const ms__tenant_t *t = ms__tenant_c(s, c->tenant);
    uint32_t in = 0;
    int i, gang = c->hgang > 0 ? c->hgang : 1;   /* (a request not queued: one) */

    if (t->nmg == 0)
        return 0;
    /* O(candidate groups), only for a tenant with a per model guarantee */
    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i], mi = s->grp_mi[gi];

        if (mi < 0 || t->mguar[mi] <= 0 || (in >> mi & 1u))
            continue;
        if (t->musage[mi] + (long)ms__tenant_slices(s, c, gi, NULL) * gang <= t->mguar[mi])
            in |= 1u << mi;
    }
    return in;
}

bool ms__tenant_within_cls(const ms_sched_t *s, const ms__cls_t *c)
{
    const ms__tenant_t *t = ms__tenant_c(s, c->tenant);

    if (t->nmg == 0)
        return ms__tenant_within(t, c->hdem, c->hmem);
    /* the cluster-wide test counts only where it is declared: without it a
     * tenant of per model guarantees alone is within nowhere else */
    if ((t->guarantee > 0 || t->mem_guarantee > 0.0) && ms__tenant_within(t, c->hdem, c->hmem))
        return true;
    return ms__tenant_within_models(s, c) != 0;
}

bool ms__tenant_over_models(const ms__tenant_t *t)
{
    int mi;

    for (mi = 0; mi < MS__NMODELS; mi++)
        if (t->musage[mi] > t->mguar[mi])
            return true;
    return false;
}

bool ms__tenant_keeps_model(const ms__tenant_t *t, int mi, long take)
{
    return t->nmg == 0 || mi < 0 || t->mguar[mi] <= 0 || t->musage[mi] - take >= t->mguar[mi];
}
