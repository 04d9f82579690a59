/* tenants.c - migschedd's tenants (docs/tenants.md, "migschedd").
 *
 * Threads: svc_tenants_reload runs on main (SIGHUP); svc_tenant_keep on
 * main at start-up, before the loop; everything else on the loop, which
 * owns the scheduler and svc_t.tenants (the declared set). The reload
 * reads the whole configuration again on main and posts the new set to the
 * loop (svc_call), so the scheduler is only ever touched by its owner.
 */
#include <stdlib.h>
#include <string.h>

#include "service/tenants.h"

static const ms_sim_tenant_t *find(const ms_sim_tenants_t *ts, const char *name)
{
    int i;

    for (i = 0; i < ts->n; i++)
        if (strcmp(ts->t[i].name, name) == 0)
            return &ts->t[i];
    return NULL;
}

bool svc_tenant_declared(const svc_t *d, const char *name)
{
    return name == NULL || strcmp(name, "default") == 0 || find(&d->tenants, name) != NULL;
}

int svc_tenants_apply(svc_t *d, const ms_sim_tenants_t *ts, char *why, size_t len)
{
    ms_sched_tenant_info_t info;
    ms_sched_tenant_t t;
    ms_diag_t diag;
    ms_status_t st;
    int i, n = ms_sched_ntenants(d->sched);

    /* the ones no longer declared first: back to what an undeclared tenant has */
    for (i = 0; i < n; i++) {
        if (ms_sched_tenant_info(d->sched, i, &info) != MS_OK || find(ts, info.name) != NULL)
            continue;
        t.name = info.name;
        t.weight = 1.0;
        t.guarantee = 0;
        t.limit = -1;
        t.mem_limit_gb = 0.0;
        t.mem_guarantee_gb = 0.0;
        t.nmodel_limits = 0;
        ms_diag_clear(&diag);
        if (info.weight != 1.0 || info.guarantee != 0 || info.limit >= 0 || info.mem_limit_gb > 0.0 ||
            info.mem_guarantee_gb > 0.0 || info.nmodel_limits > 0) {
            if ((st = ms_sched_tenant_set(d->sched, &t, NULL, &diag)) != MS_OK) {
                snprintf(why, len, "tenant %s: %s", info.name, diag.msg[0] ? diag.msg : ms_strerror(st));
                return -1;
            }
        }
    }
    for (i = 0; i < ts->n; i++) {
        t.name = ts->t[i].name;
        t.weight = ts->t[i].weight;
        t.guarantee = ts->t[i].guarantee;
        t.limit = ts->t[i].limit;
        t.mem_limit_gb = ts->t[i].mem_limit_gb;
        t.mem_guarantee_gb = ts->t[i].mem_guarantee_gb;
        t.nmodel_limits = ts->t[i].nmodel_limits;
        memcpy(t.model_limits, ts->t[i].model_limits, sizeof(t.model_limits));
        ms_diag_clear(&diag);
        if ((st = ms_sched_tenant_set(d->sched, &t, NULL, &diag)) != MS_OK) {
            snprintf(why, len, "tenant %s: %s: %s", t.name, diag.field[0] ? diag.field : "tenant",
                     diag.msg[0] ? diag.msg : ms_strerror(st));
            return -1;
        }
    }
    d->tenants = *ts;
    return 0;
}

int svc_tenant_keep(svc_t *d, const char *name)
{
    ms_sched_tenant_t t = { name, 1.0, 0, -1, 0.0, 0.0, 0, { { NULL, 0, 0, 0 } } };
    ms_diag_t diag;
    ms_status_t st;

    if (name == NULL || ms_sched_tenant_find(d->sched, name) >= 0)
        return 0;
    ms_diag_clear(&diag);
    if ((st = ms_sched_tenant_set(d->sched, &t, NULL, &diag)) != MS_OK) {
        ms_log("error", "a stored job's tenant cannot be kept",
               json_pack("{s:s,s:s}", "tenant", name, "why", diag.msg[0] ? diag.msg : ms_strerror(st)));
        return -1;
    }
    ms_log("warn", "a stored job names a tenant the configuration does not declare: it is kept "
                   "with weight 1 and no quota", json_pack("{s:s}", "tenant", name));
    return 0;
}

json_t *svc_tenants_json(svc_t *d)
{
    json_t *a = json_array(), *o = json_object();
    ms_sched_tenant_info_t info;
    int i, n = ms_sched_ntenants(d->sched);

    if (a == NULL || o == NULL) {
        json_decref(a);
        json_decref(o);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        json_t *bym;
        int k;

        if (ms_sched_tenant_info(d->sched, i, &info) != MS_OK || (bym = json_object()) == NULL)
            continue;
        /* limit@MODEL and guarantee@MODEL, by model: {} when it has none;
         * a model with a guarantee and no limit has limit null, one with a
         * limit alone guarantee 0 (as the cluster-wide figures) */
        for (k = 0; k < info.nmodel_limits; k++) {
            const ms_sched_tenant_model_limit_t *e = &info.model_limits[k];

            json_object_set_new(bym, e->model,
                                json_pack("{s:o,s:I,s:I}", "limit_slices",
                                          e->limit >= 0 ? json_integer(e->limit) : json_null(),
                                          "guarantee_slices", (json_int_t)e->guarantee, "usage_slices",
                                          (json_int_t)e->usage));
        }
        json_array_append_new(
            a, json_pack("{s:s,s:b,s:f,s:I,s:o,s:o,s:o,s:I,s:f,s:f,s:I,s:I,s:o}", "name", info.name, "declared",
                         svc_tenant_declared(d, info.name), "weight", info.weight, "guarantee_slices",
                         (json_int_t)info.guarantee, "limit_slices",
                         info.limit >= 0 ? json_integer(info.limit) : json_null(), "limit_mem_gb",
                         info.mem_limit_gb > 0.0 ? json_real(info.mem_limit_gb) : json_null(), "guarantee_mem_gb",
                         info.mem_guarantee_gb > 0.0 ? json_real(info.mem_guarantee_gb) : json_null(),
                         "usage_slices",
                         (json_int_t)info.usage, "usage_mem_gb", info.mem_gb, "share", info.share,
                         "running", (json_int_t)info.running, "waiting", (json_int_t)info.waiting,
                         "limits_by_model", bym));
    }
    json_object_set_new(o, "tenants", a);
    json_object_set_new(o, "half_life_s", json_real(ms_sched_tenant_half_life(d->sched)));
    return o;
}

void svc_h_tenants(svc_t *d, svc_msg_t *m, double now)
{
    json_t *o = svc_tenants_json(d);

    (void)now;
    if (o == NULL)
        svc_reply_err(m, 500, "", "out of memory");
    else
        svc_reply_json(m, 200, o);
}

/* After a reload: each queued job now larger than its tenant's limits
 * stays queued (a limit raised again lets it start, as before it), and
 * says so once, an "over-limit" event (by: its tenant) and a warning
 * with the reason (docs/tenants.md). */
static void over_limit(svc_t *d, double now)
{
    ms_diag_t diag;
    size_t k;

    for (k = 0; k < d->jobs.n; k++) {
        svc_job_t *j = d->jobs.v[k];

        if (j->state != MS_JOB_QUEUED || j->slot < 0)
            continue;
        ms_diag_clear(&diag);
        if (ms_sched_tenant_check_slot(d->sched, j->slot, &diag) != MS_ENOFIT)
            continue;
        svc_event_add(d, j->id, "over-limit", j->req.tenant != NULL ? j->req.tenant : "default", now);
        ms_log("warn", "SIGHUP: a queued job is larger than its tenant's limit; it stays queued",
               json_pack("{s:s,s:s}", "job", j->id, "why", diag.msg));
    }
}

void svc_h_tenset(svc_t *d, svc_msg_t *m, double now)
{
    const svc_tenset_t *set = m->ext;
    char why[256];
    ms_diag_t diag;
    ms_status_t st;

    if (svc_tenants_apply(d, &set->ts, why, sizeof(why)) != 0) {
        svc_reply_err(m, 422, "tenant", why);
        return;
    }
    ms_diag_clear(&diag);
    if (set->half_life_s != ms_sched_tenant_half_life(d->sched) &&
        (st = ms_sched_set_tenant_half_life(d->sched, set->half_life_s, now, &diag)) != MS_OK) {
        /* the file's value passed the option table's range: not expected */
        svc_reply_err(m, 422, "tenant-half-life", diag.msg[0] ? diag.msg : ms_strerror(st));
        return;
    }
    over_limit(d, now);
    svc_reply_json(m, 200, json_pack("{s:i,s:f}", "tenants", set->ts.n, "half_life_s", set->half_life_s));
}

void svc_tenants_reload(svc_t *d, svc_tenset_t *set)
{
    svc_msg_t *m = calloc(1, sizeof(*m));

    if (m == NULL) {
        ms_log("error", "SIGHUP: out of memory; the tenants stay", NULL);
        return;
    }
    m->kind = SVC_M_TENSET;
    m->ext = set;   /* read only by the loop's svc_h_tenset */
    svc_call(d, m);
    m->ext = NULL;   /* ours, not an extender message */
    if (m->status == 200)
        ms_log("info", "SIGHUP: tenants reloaded",
               json_pack("{s:i,s:f}", "tenants", set->ts.n, "half_life_s", set->half_life_s));
    else
        ms_log("error", "SIGHUP: the tenants could not be applied; the previous ones stay",
               json_pack("{s:i,s:s?}", "status", m->status, "why", m->body));
    svc_msg_free(m);
}
