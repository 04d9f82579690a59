/* tenant.c - tenants: who a job belongs to, what each tenant holds, and the
 * queue order between tenants (docs/tenants.md).
 *
 * A tenant's usage (compute slices and memory GB of its live jobs) is kept
 * incrementally: a job is charged when it first becomes live (its first
 * START: placed, reserved or adopted) and given back when it leaves (release)
 * or goes back to the queue (a failed START rolled back). A move keeps its
 * group and so its charge. Nothing here scans jobs.
 *
 * Classes are per tenant (jobs.c), so a tenant's usage orders its classes'
 * heads without touching job records: tier 0 (the head fits in the
 * guarantee, in each dimension it declares: ms__tenant_within) before
 * tier 1 (it borrows); in tier 1 the smaller virtual
 * time first (start-time fair queueing: the slice-seconds charged, by
 * weight). The current share alone (the first rule here) gave 1.83:1 for
 * weights 2:1 on a mixed workload: a tenant whose head is a 7g waits while
 * others fill in, and nothing remembers it; the virtual time does, and
 * gives 1.98:1 (docs/tenants.md). A class whose head would take its tenant over its
 * limit on every candidate group is left out of a pass (it blocks no one).
 * Until a tenant is declared (ten_on), none of this changes an order: every
 * job is the default tenant's and the scheduler decides as before.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sched/sched_int.h"

#define MAX_NAME 63
#define LN2 0.69314718055994530942
/* the credit a tenant keeps over the active ones when it waits again
 * (ms__tenant_backlogged): this many seconds of the whole cluster */
#define BANK_S 1800.0

void ms__tenant_init(ms_sched_t *s)
{
    int k;

    memset(&s->ten0, 0, sizeof(s->ten0));
    s->ten0.name = NULL;   /* "default", see tname() */
    s->ten0.weight = 1.0;
    s->ten0.limit = -1;
    for (k = 0; k < MS__NMODELS; k++)
        s->ten0.mlim[k] = -1;
    s->nten = 1;
    s->tot_slices = 0;
    s->tot_mem = 0.0;
    for (k = 0; k < s->ngroups; k++) {
        const ms__grp_t *gr = &s->grp[k];

        s->tot_slices += (long)gr->ngpus * ms_geom_compute(gr->geom);
        s->tot_mem += (double)gr->ngpus * ms_geom_model(gr->geom)->mem_gb;
        s->grp_mi[k] = (int8_t)ms__model_index(ms_geom_model(gr->geom));
    }
}

void ms__tenant_fini(ms_sched_t *s)
{
    int i;

    for (i = 0; i + 1 < s->nten; i++)
        ms__sfree(s, s->ten[i].name);
    ms__sfree(s, s->ten);
    s->ten = NULL;
    s->nten = s->capten = 0;
}

static const char *tname(const ms_sched_t *s, int t)
{
    const char *n = ms__tenant_c(s, t)->name;

    return n != NULL ? n : "default";
}

int ms_sched_tenant_find(const ms_sched_t *s, const char *name)
{
    int t;

    if (name == NULL || name[0] == '\0')
        return 0;
    /* tenants are teams: a handful, never a function of jobs or GPUs */
    for (t = 0; t < s->nten; t++)
        if (strcmp(tname(s, t), name) == 0)
            return t;
    return -1;
}

int ms_sched_ntenants(const ms_sched_t *s)
{
    return s->nten;
}

ms_status_t ms__tenant_of_req(const ms_sched_t *s, const ms_sched_req_t *req, int32_t *t,
                              ms_diag_t *diag)
{
    int k = ms_sched_tenant_find(s, req->tenant);

    if (k < 0) {
        ms_diag_set(diag, NULL, 0, "tenant", "no tenant '%.64s' is declared", req->tenant);
        return MS_EINVAL;
    }
    *t = k;
    return MS_OK;
}

static bool name_ok(const char *n)
{
    size_t i, len;

    if (n == NULL || (len = strnlen(n, MAX_NAME + 1)) == 0 || len > MAX_NAME)
        return false;
    for (i = 0; i < len; i++) {
        char c = n[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

ms_status_t ms_sched_tenant_set(ms_sched_t *s, const ms_sched_tenant_t *t, int *idx,
                                ms_diag_t *diag)
{
    ms__tenant_t *r;
    int k, k0, mi[MS_TENANT_MAX_MODEL_LIMITS];
    bool reorder;
    ms_status_t st;

    if (t == NULL || !name_ok(t->name)) {
        ms_diag_set(diag, NULL, 0, "tenant", "a tenant's name is 1..%d of [A-Za-z0-9._-]", MAX_NAME);
        return MS_EINVAL;
    }
    if (!(t->weight > 0.0 && t->weight <= 1e6)) {
        ms_diag_set(diag, NULL, 0, "weight", "tenant %s: weight must be in (0, 1e6]", t->name);
        return MS_EINVAL;
    }
    if (t->guarantee < 0 || t->guarantee > 1000000000L) {
        ms_diag_set(diag, NULL, 0, "guarantee", "tenant %s: guarantee must be 0..1e9 slices",
                    t->name);
        return MS_EINVAL;
    }
    if (t->limit >= 0 && (t->limit < t->guarantee || t->limit > 1000000000L)) {
        ms_diag_set(diag, NULL, 0, "limit",
                    "tenant %s: limit must be at least the guarantee (%ld) and at most 1e9 slices",
                    t->name, t->guarantee);
        return MS_EINVAL;
    }
    if (!(t->mem_limit_gb >= 0.0 && t->mem_limit_gb <= 1e9)) {
        ms_diag_set(diag, NULL, 0, "mem-limit", "tenant %s: mem-limit must be 0..1e9 GB (0: none)", t->name);
        return MS_EINVAL;
    }
    if (!(t->mem_guarantee_gb >= 0.0 && t->mem_guarantee_gb <= 1e9)) {
        ms_diag_set(diag, NULL, 0, "mem-guarantee", "tenant %s: mem-guarantee must be 0..1e9 GB (0: none)",
                    t->name);
        return MS_EINVAL;
    }
    if (t->mem_limit_gb > 0.0 && t->mem_guarantee_gb > t->mem_limit_gb) {
        ms_diag_set(diag, NULL, 0, "mem-guarantee", "tenant %s: mem-guarantee (%g GB) must be at most "
                    "the mem-limit (%g GB)", t->name, t->mem_guarantee_gb, t->mem_limit_gb);
        return MS_EINVAL;
    }
    if ((st = ms__tenant_check_models(t, mi, diag)) != MS_OK)
        return st;
    k = ms_sched_tenant_find(s, t->name);
    if (k < 0) {
        size_t n = strlen(t->name) + 1;
        char *name;

        if (s->nten > 30000) {
            ms_diag_set(diag, NULL, 0, "tenant", "too many tenants");
            return MS_ERANGE;
        }
        if (s->nten - 1 == s->capten) {
            int cap = s->capten ? s->capten * 2 : 8;
            ms__tenant_t *v = ms__srealloc(s, s->ten, (size_t)cap * sizeof(*v));

            if (v == NULL)
                return MS_ENOMEM;
            s->ten = v;
            s->capten = cap;
        }
        if ((name = ms__salloc(s, n)) == NULL)
            return MS_ENOMEM;
        memcpy(name, t->name, n);
        k = s->nten++;
        r = ms__tenant(s, k);
        memset(r, 0, sizeof(*r));
        r->name = name;
    }
    r = ms__tenant(s, k);
    k0 = k;
    r->weight = t->weight;
    r->guarantee = t->guarantee;
    r->limit = t->limit < 0 ? -1 : t->limit;
    r->mem_limit = t->mem_limit_gb;
    r->mem_guarantee = t->mem_guarantee_gb;
    reorder = ms__tenant_set_models(r, t, mi);
    /* a raised limit may let a held-back class start: offer it again */
    r->dec_at = s->wake_at = ++s->stamp;
    if (reorder)   /* its classes try its guaranteed models first (or no more) */
        ms__tenant_reorder(s, k0);
    s->ten_on = true;
    if (idx != NULL)
        *idx = k0;
    return MS_OK;
}

/* The dominant share of a tenant holding `slices` and `mem` GB. */
static double dom_of(const ms_sched_t *s, double slices, double mem)
{
    double a = s->tot_slices > 0 ? slices / (double)s->tot_slices : 0.0;
    double b = s->tot_mem > 0.0 ? mem / s->tot_mem : 0.0;

    return a > b ? a : b;
}

static double dom_share(const ms_sched_t *s, const ms__tenant_t *t)
{
    return dom_of(s, (double)t->usage, t->mem);
}

ms_status_t ms_sched_tenant_info(const ms_sched_t *s, int idx, ms_sched_tenant_info_t *out)
{
    const ms__tenant_t *t;
    int k;

    if (idx < 0 || idx >= s->nten)
        return MS_ENOENT;
    t = ms__tenant_c(s, idx);
    out->name = tname(s, idx);
    out->weight = t->weight;
    out->guarantee = t->guarantee;
    out->limit = t->limit;
    out->mem_limit_gb = t->mem_limit;
    out->usage = t->usage;
    out->mem_gb = t->mem;
    out->share = dom_share(s, t);
    out->running = t->running;
    out->waiting = t->waiting;
    out->mem_guarantee_gb = t->mem_guarantee;
    out->nmodel_limits = t->nml;
    for (k = 0; k < t->nml; k++) {
        out->model_limits[k].model = ms_models(NULL)[t->ml[k]].name;
        out->model_limits[k].limit = t->mlim[t->ml[k]];
        out->model_limits[k].usage = t->musage[t->ml[k]];
        out->model_limits[k].guarantee = t->mguar[t->ml[k]];
    }
    return MS_OK;
}

double ms_sched_tenant_half_life(const ms_sched_t *s)
{
    return s->cfg.tenant_half_life_s;
}

ms_status_t ms_sched_set_tenant_half_life(ms_sched_t *s, double half_life_s, double now,
                                          ms_diag_t *diag)
{
    double hl = s->cfg.tenant_half_life_s;
    int k;

    if (!(half_life_s >= 0.0 && half_life_s <= 1e12) || !isfinite(now)) {
        ms_diag_set(diag, NULL, 0, "tenant-half-life", "must be in [0, 1e12] seconds (0: no decay)");
        return MS_EINVAL;
    }
    /* every virtual time to what it weighs at now under the old half-life
     * (a common factor: the order between tenants stays), and now the new
     * reference, so the new half-life decays from here. A job running
     * across the change has its end's correction weighed by the new one:
     * an approximation for those jobs only. */
    if (hl > 0.0) {
        double f = exp(-(now - s->vt_ref) * LN2 / hl);

        for (k = 0; k < s->nten; k++)
            ms__tenant(s, k)->vt *= f;
    }
    s->vt_ref = now;
    s->cfg.tenant_half_life_s = half_life_s;
    return MS_OK;
}

int32_t ms__tenant_slices(const ms_sched_t *s, const ms__cls_t *c, int gi, double *mem)
{
    const ms__grp_t *gr = &s->grp[gi];

    if (gr->mode == MS_NODE_WHOLE) {
        if (mem != NULL)
            *mem = ms_geom_model(gr->geom)->mem_gb;
        return ms_geom_compute(gr->geom);
    }
    if (mem != NULL)
        *mem = ms_geom_profile_mem_gb(gr->geom, c->prof[gi]);
    return ms_geom_profile(gr->geom, c->prof[gi])->cslices;
}

void ms__tenant_cls_demand(const ms_sched_t *s, ms__cls_t *c)
{
    int i;

    c->dem1 = 0;
    c->mem1 = 0.0f;
    c->memmin = 0.0f;
    for (i = 0; i < c->norder; i++) {
        double mem = 0.0;
        int32_t d = ms__tenant_slices(s, c, c->order[i], &mem);

        if (i == 0 || d < c->dem1) {
            c->dem1 = d;
            c->mem1 = (float)mem;
        }
        if (i == 0 || (float)mem < c->memmin)
            c->memmin = (float)mem;
    }
}

/* The weight of service attributed at time t in the virtual times: with
 * a half-life, exp((t - vt_ref) / tau), so that every virtual time decays
 * by the same factor between events and the order between tenants changes
 * only at events (a common factor is never applied); 1 without. */
static double vt_scale(const ms_sched_t *s, double t)
{
    double hl = s->cfg.tenant_half_life_s;

    return hl > 0.0 ? exp((t - s->vt_ref) * LN2 / hl) : 1.0;
}

/* Before the scale of time t grows past e^200: every virtual time times
 * the scale of t, and t the new reference (O(tenants); a job's charge is
 * kept unscaled with its start, so nothing else changes). */
static void vt_renorm(ms_sched_t *s, double t)
{
    double hl = s->cfg.tenant_half_life_s, f;
    int k;

    if (!(hl > 0.0) || (t - s->vt_ref) * LN2 / hl <= 200.0)
        return;
    f = exp(-(t - s->vt_ref) * LN2 / hl);
    for (k = 0; k < s->nten; k++)
        ms__tenant(s, k)->vt *= f;
    s->vt_ref = t;
}

void ms__tenant_charge(ms_sched_t *s, int32_t slot, int gi)
{
    ms__job_t *j = &s->jobs[slot];
    const ms__cls_t *c = &s->cls[j->cls];
    ms__tenant_t *t = ms__tenant(s, c->tenant);
    double mem = 0.0;

    if (j->charge > 0)
        return;
    j->charge = ms__tenant_slices(s, c, gi, &mem) * j->gang;
    j->charge_mem = (float)(mem * j->gang);
    t->usage += j->charge;
    t->mem += j->charge_mem;
    j->charge_grp = (int16_t)gi;
    if (s->grp_mi[gi] >= 0)
        t->musage[s->grp_mi[gi]] += j->charge;
    /* start-time fair queueing: the service is charged when it starts, so
     * that a tenant does not take every start of a pass */
    j->vcharge = (double)j->charge * ms__job_est(s, j) / t->weight;
    vt_renorm(s, j->start_t);
    t->vt += j->vcharge * vt_scale(s, j->start_t);
    t->running++;
    ms__preempt_count(s, slot, +1);
}

void ms__tenant_uncharge(ms_sched_t *s, int32_t slot, double ran_s)
{
    ms__job_t *j = &s->jobs[slot];
    ms__tenant_t *t;

    if (j->charge <= 0)
        return;
    t = ms__tenant(s, s->cls[j->cls].tenant);
    t->usage -= j->charge;
    t->mem -= j->charge_mem;
    if (s->grp_mi[j->charge_grp] >= 0)
        t->musage[s->grp_mi[j->charge_grp]] -= j->charge;
    /* what it was charged becomes what it held */
    t->vt += ((ran_s > 0.0 ? (double)j->charge * ran_s / t->weight : 0.0) - j->vcharge) *
             vt_scale(s, j->start_t);
    j->vcharge = 0.0;
    if (t->usage == 0)
        t->mem = 0.0;   /* no rounding left over when it holds nothing */
    t->running--;
    ms__preempt_count(s, slot, -1);
    j->charge = 0;
    j->charge_mem = 0.0f;
    t->dec_at = s->wake_at = ++s->stamp;
}

void ms__tenant_backlogged(ms_sched_t *s, int32_t t)
{
    ms__tenant_t *r = ms__tenant(s, t);
    double vmin = INFINITY;
    int k;

    /* bounded credit for time without demand: a tenant that waits again
     * starts no earlier than BANK_S of the whole cluster before the least
     * virtual time of those active (running or waiting). Without a bound a
     * tenant back from a week away would take everything until it caught
     * up; with none (lifted to the least) a light tenant, one whose queue
     * empties between its bursts, lost its lead at every burst and waited
     * behind the heavy ones' heads: the SLA workload's p99 wait went from
     * 1648 to 3021 s (docs/tenants.md). O(tenants), only when a tenant's
     * queue fills again. */
    if (s->cfg.tenant_half_life_s > 0.0)
        return;   /* decayed usage: the past counts, and fades by itself */
    for (k = 0; k < s->nten; k++) {
        const ms__tenant_t *o = ms__tenant_c(s, k);

        if (k != t && (o->running > 0 || o->waiting > 0) && o->vt < vmin)
            vmin = o->vt;
    }
    if (vmin != INFINITY && r->vt < vmin - BANK_S * (double)s->tot_slices)
        r->vt = vmin - BANK_S * (double)s->tot_slices;
}

/* May tenant t take mem GB more under its memory limit? (Usage is a sum
 * of floats: a hair of slack so that a limit of exactly 40 holds 40.) */
static bool mem_ok(const ms__tenant_t *t, double mem)
{
    return t->mem_limit <= 0.0 || t->mem + mem <= t->mem_limit + 1e-6;
}

bool ms__tenant_fits_cls(const ms_sched_t *s, int32_t cls, int gang, int gi)
{
    const ms__cls_t *c = &s->cls[cls];
    const ms__tenant_t *t = ms__tenant_c(s, c->tenant);
    double mem = 0.0;
    long d;

    if (t->limit < 0 && t->mem_limit <= 0.0 && t->nml == 0)
        return true;   /* no limit (every tenant until one is set): asked at every placement */
    d = (long)ms__tenant_slices(s, c, gi, &mem) * gang;
    return (t->limit < 0 || t->usage + d <= t->limit) && mem_ok(t, mem * gang) &&
           ms__tenant_model_ok(s, t, gi, d);
}

bool ms__tenant_model_ok(const ms_sched_t *s, const ms__tenant_t *t, int gi, long d)
{
    int mi = s->grp_mi[gi];

    return t->nml == 0 || mi < 0 || t->mlim[mi] < 0 || t->musage[mi] + d <= t->mlim[mi];
}

bool ms_sched_tenant_holds(ms_sched_t *s, const ms_sched_req_t *req)
{
    ms_diag_t diag;
    int32_t cls;
    int i, gang = req != NULL && req->gang > 1 ? req->gang : 1;

    ms_diag_clear(&diag);
    if (req == NULL || !s->ten_on || ms__sched_resolve(s, req, &cls, &diag) != MS_OK)
        return false;
    for (i = 0; i < s->cls[cls].norder; i++)
        if (ms__tenant_fits_cls(s, cls, gang, s->cls[cls].order[i]))
            return false;
    return s->cls[cls].norder > 0;
}

/* A job of class cls (gang GPUs) against its tenant's limits with the
 * tenant holding nothing (ms_sched_tenant_check). */
static ms_status_t check_cls(const ms_sched_t *s, int32_t cls, int gang, ms_diag_t *diag)
{
    const ms__cls_t *c = &s->cls[cls];
    const ms__tenant_t *t = ms__tenant_c(s, c->tenant);
    long need = -1, mneed_sl = 0;
    double mneed = 0.0;
    int i, mgi = -1;

    if (!s->ten_on || c->norder == 0)
        return MS_OK;
    for (i = 0; i < c->norder; i++) {
        double mem = 0.0;
        int gi = c->order[i], mi = s->grp_mi[gi];
        long d = (long)ms__tenant_slices(s, c, gi, &mem) * gang;

        mem *= gang;
        if ((t->limit < 0 || d <= t->limit) && (t->mem_limit <= 0.0 || mem <= t->mem_limit + 1e-6)) {
            if (mi < 0 || t->mlim[mi] < 0 || d <= t->mlim[mi])
                return MS_OK;
            if (mgi < 0)   /* only its model's limit keeps it off gi */
                mgi = gi, mneed_sl = d;
        }
        if (need < 0 || d < need)
            need = d;
        if (i == 0 || mem < mneed)
            mneed = mem;
    }
    if (mgi >= 0) {
        const char *m = ms_models(NULL)[s->grp_mi[mgi]].name;

        ms_diag_set(diag, NULL, 0, "tenant", "tenant '%s' may hold %ld compute slices on %s GPUs "
                    "(limit@%s) and the job needs %ld there, and no other GPU model it could run "
                    "on takes it within the tenant's limits: it could never start", t->name,
                    t->mlim[s->grp_mi[mgi]], m, m, mneed_sl);
    } else if (t->limit >= 0 && need > t->limit)
        ms_diag_set(diag, NULL, 0, "tenant", "tenant '%s' may hold %ld compute slices (limit) and "
                    "the job needs %ld: it could never start", t->name, t->limit, need);
    else if (t->mem_limit > 0.0 && mneed > t->mem_limit + 1e-6)
        ms_diag_set(diag, NULL, 0, "tenant", "tenant '%s' may hold %g GB (mem-limit) and the job "
                    "needs %g GB: it could never start", t->name, t->mem_limit, mneed);
    else   /* each GPU model fails one of the two */
        ms_diag_set(diag, NULL, 0, "tenant", "tenant '%s' may hold %ld compute slices and %g GB "
                    "(limit, mem-limit) and the job needs %ld slices and %g GB at least, not both "
                    "on one GPU model: it could never start", t->name, t->limit, t->mem_limit,
                    need, mneed);
    return MS_ENOFIT;
}

ms_status_t ms_sched_tenant_check(ms_sched_t *s, const ms_sched_req_t *req, ms_diag_t *diag)
{
    int32_t cls;
    ms_status_t st;

    if (req == NULL || !s->ten_on)
        return MS_OK;
    if ((st = ms__sched_resolve(s, req, &cls, diag)) != MS_OK)
        return st;
    return check_cls(s, cls, req->gang > 1 ? req->gang : 1, diag);
}

ms_status_t ms_sched_tenant_check_slot(const ms_sched_t *s, int32_t slot, ms_diag_t *diag)
{
    if (!s->ten_on || slot < 0 || slot >= s->njobs)
        return MS_OK;
    return check_cls(s, s->jobs[slot].cls, s->jobs[slot].gang, diag);
}

bool ms__tenant_eligible(const ms_sched_t *s, const ms__cls_t *c)
{
    const ms__tenant_t *t = ms__tenant_c(s, c->tenant);
    int i;

    if (!((t->limit < 0 || t->usage + c->hdem <= t->limit) && mem_ok(t, c->hmemmin)))
        return false;
    if (t->nml == 0 || c->qhead < 0)
        return true;
    /* per model limits: the head fits on one of its candidate groups
     * (O(candidate groups), only for a tenant that declares them) */
    for (i = 0; i < c->norder; i++)
        if (ms__tenant_fits_cls(s, (int32_t)(c - s->cls), s->jobs[c->qhead].gang, c->order[i]))
            return true;
    return false;
}

/* The guarantee's declared dimensions (Kueue's nominal quota is per
 * resource, and a workload is within it only when every resource with a
 * quota is): memory when it has a memory guarantee; compute slices when it
 * has a slice guarantee or no memory guarantee, so that without one every
 * answer below is the slices' alone, as before memory had a guarantee. */
static bool slices_declared(const ms__tenant_t *t)
{
    return t->guarantee > 0 || t->mem_guarantee <= 0.0;
}

/* (The memory figures are sums of floats: a hair of slack, as mem_ok.) */
bool ms__tenant_within(const ms__tenant_t *t, long d, double mem)
{
    return (!slices_declared(t) || t->usage + d <= t->guarantee) &&
           (t->mem_guarantee <= 0.0 || t->mem + mem <= t->mem_guarantee + 1e-6);
}

bool ms__tenant_over(const ms__tenant_t *t)
{
    /* with per model guarantees it borrows only if over by both measures
     * (within by either is within: ms__tenant_within_cls) */
    return ((slices_declared(t) && t->usage > t->guarantee) ||
            (t->mem_guarantee > 0.0 && t->mem > t->mem_guarantee + 1e-6)) &&
           (t->nmg == 0 || ms__tenant_over_models(t));
}

bool ms__tenant_keeps(const ms__tenant_t *t, long take, double take_mem)
{
    return (!slices_declared(t) || t->usage - take >= t->guarantee) &&
           (t->mem_guarantee <= 0.0 || t->mem - take_mem >= t->mem_guarantee - 1e-6);
}

int ms__tenant_cmp(const ms_sched_t *s, const ms__cls_t *a, const ms__cls_t *b)
{
    const ms__tenant_t *ta, *tb;
    bool ga, gb;
    double sa, sb;

    if (a->tenant == b->tenant)
        return 0;   /* within a tenant: the usual order (priority, submission) */
    ta = ms__tenant_c(s, a->tenant);
    tb = ms__tenant_c(s, b->tenant);
    ga = ms__tenant_within_cls(s, a);
    gb = ms__tenant_within_cls(s, b);
    if (ga != gb)
        return ga ? -1 : 1;
    if (ga)
        return 0;   /* both within their guarantees: the usual order */
    /* the smaller virtual time first (the service charged so far, by
     * weight); then the smaller weighted share; at equal shares, the smaller with
     * its head started (so that two tenants at the fair split do not take
     * turns by submission order) */
    if (ta->vt != tb->vt)
        return ta->vt < tb->vt ? -1 : 1;
    sa = dom_share(s, ta) / ta->weight;
    sb = dom_share(s, tb) / tb->weight;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    sa = dom_of(s, (double)(ta->usage + a->hdem), ta->mem + a->hmem) / ta->weight;
    sb = dom_of(s, (double)(tb->usage + b->hdem), tb->mem + b->hmem) / tb->weight;
    return sa < sb ? -1 : sa > sb ? 1 : 0;
}

ms_status_t ms__tenant_check(const ms_sched_t *s)
{
    int t;
    int32_t i;

    /* a live job is charged and nothing else is, but a fence's job (the
     * only one without a class, fence.c) is never charged, live or not: a
     * fence is no tenant's usage; each tenant's usage and counts are the
     * sums of its jobs' (O(tenants x jobs): the tests') */
    for (i = 0; i < s->njobs; i++) {
        const ms__job_t *j = &s->jobs[i];
        bool live = j->state == MS_JOB_STARTING || j->state == MS_JOB_RUNNING ||
                    j->state == MS_JOB_MIGRATING || j->state == MS_JOB_RESERVED;

        if (j->state == MS__SLOT_FREE)
            continue;
        if (j->cls < 0 ? j->charge != 0 || j->charge_mem != 0.0f : live != (j->charge > 0))
            return MS_ESTATE;
    }
    for (t = 0; t < s->nten; t++) {
        const ms__tenant_t *r = ms__tenant_c(s, t);
        long usage = 0, running = 0, waiting = 0, mu[MS__NMODELS] = { 0 };
        int m, nmg;

        for (i = 0; i < s->njobs; i++) {
            const ms__job_t *j = &s->jobs[i];

            if (j->state == MS__SLOT_FREE || j->cls < 0 || s->cls[j->cls].tenant != t)
                continue;
            usage += j->charge;
            running += j->charge > 0;
            waiting += j->state == MS_JOB_QUEUED && j->inq;
            if (j->charge > 0) {
                if (j->charge_grp < 0 || j->charge_grp >= s->ngroups)
                    return MS_ESTATE;
                if (s->grp_mi[j->charge_grp] >= 0)
                    mu[s->grp_mi[j->charge_grp]] += j->charge;
            }
        }
        if (usage != r->usage || running != r->running || waiting != r->waiting ||
            !isfinite(r->vt))
            return MS_ESTATE;
        /* per model usage, for every model (a limit declared later starts
         * from it); the declared list and the limits agree */
        for (m = 0; m < MS__NMODELS; m++)
            if (mu[m] != r->musage[m])
                return MS_ESTATE;
        for (m = 0; m < r->nml; m++)
            if (r->ml[m] < 0 || r->ml[m] >= MS__NMODELS ||
                (r->mlim[r->ml[m]] < 0 && r->mguar[r->ml[m]] <= 0))
                return MS_ESTATE;
        for (m = 0, nmg = 0; m < MS__NMODELS; m++)
            nmg += r->mguar[m] > 0;
        if (nmg != r->nmg)
            return MS_ESTATE;
    }
    return MS_OK;
}
