/* metrics_json.c - one run's metrics as one JSON object. */
#include "migsched/sim.h"
#include "migsched/json_write.h"

#include <math.h>

/* JSON has no NaN or infinity: write null for them. */
static void num(FILE *f, const char *key, double v, int last)
{
    if (isfinite(v))
        fprintf(f, "  \"%s\": %.6f%s\n", key, v, last ? "" : ",");
    else
        fprintf(f, "  \"%s\": null%s\n", key, last ? "" : ",");
}

static void lng(FILE *f, const char *key, long v)
{
    fprintf(f, "  \"%s\": %ld,\n", key, v);
}

static void str(FILE *f, const char *key, const char *s)
{
    fprintf(f, "  \"%s\": ", key);
    ms_json_write_str(f, s);
    fputs(",\n", f);
}

/* Tenants, flat like the rest (the format is one object of numbers and
 * strings, which `report` reads back): their count, then tenantK_* keys
 * for K = 0 .., then Jain's index. Only with tenants: the JSON of a run
 * without them is as before. */
static void tenants(FILE *f, const ms_metrics_t *m)
{
    char key[64];
    int k;

    lng(f, "ntenants", m->ntenants);
    for (k = 0; k < m->ntenants; k++) {
        const ms_tenant_metrics_t *t = &m->tenants[k];

#define TK(name) (snprintf(key, sizeof(key), "tenant%d_%s", k, name), key)
        str(f, TK("name"), t->name);
        num(f, TK("weight"), t->weight, 0);
        lng(f, TK("guarantee"), t->guarantee);
        lng(f, TK("limit"), t->limit);
        lng(f, TK("jobs"), t->jobs);
        lng(f, TK("completed"), t->completed);
        num(f, TK("usage_share"), t->usage_share, 0);
        num(f, TK("contended_share"), t->contended_share, 0);
        lng(f, TK("max_usage"), t->max_usage);
        num(f, TK("mean_wait_s"), t->mean_wait_s, 0);
        num(f, TK("p99_wait_s"), t->p99_wait_s, 0);
        num(f, TK("mean_jct_s"), t->mean_jct_s, 0);
        lng(f, TK("reclaims"), t->reclaims);
        lng(f, TK("reclaims_open"), t->reclaims_open);
        num(f, TK("reclaim_max_s"), t->reclaim_max_s, 0);
        num(f, TK("reclaim_mean_s"), t->reclaim_mean_s, 0);
#undef TK
    }
    num(f, "contended_s", m->contended_s, 0);
    num(f, "jain_index", m->jain_index, 0);
    lng(f, "jain_hours", m->jain_hours);
    for (k = 0; k < m->jain_hours && k < MS_SIM_MAX_HOURS; k++) {
        snprintf(key, sizeof(key), "jain_hour%d", k);
        num(f, key, m->jain_hourly[k], 0);
    }
    num(f, "jain_hourly_min", m->jain_hourly_min, 0);
    /* after the hours' count, so that a reader knows how many to expect */
    for (k = 0; k < m->ntenants; k++) {
        long h;

        for (h = 0; h < m->jain_hours && h < MS_SIM_MAX_HOURS; h++) {
            snprintf(key, sizeof(key), "tenant%d_share_hour%ld", k, h);
            num(f, key, m->share_hourly[h][k], 0);
        }
    }
}

/* Preemption and the waits per priority class, flat as the tenants'
 * (prioK_* for K = 0 .., the highest priority first). Only when preemption
 * is on or the trace has several priorities: otherwise as before. */
static void priorities(FILE *f, const ms_metrics_t *m)
{
    char key[64];
    int k;

    lng(f, "preemptions", m->preemptions);
    if (m->preempt_move)
        lng(f, "preempt_moves", m->preempt_moves);
    num(f, "lost_work_s", m->lost_work_s, 0);
    num(f, "work_s", m->work_s, 0);
    num(f, "lost_work_frac", m->work_s > 0.0 ? m->lost_work_s / m->work_s : 0.0, 0);
    lng(f, "nprio", m->nprio);
    for (k = 0; k < m->nprio; k++) {
#define PK(name) (snprintf(key, sizeof(key), "prio%d_%s", k, name), key)
        lng(f, PK("priority"), m->prio[k].priority);
        lng(f, PK("jobs"), m->prio[k].jobs);
        num(f, PK("mean_wait_s"), m->prio[k].mean_wait_s, 0);
        num(f, PK("p99_wait_s"), m->prio[k].p99_wait_s, 0);
        num(f, PK("mean_jct_s"), m->prio[k].mean_jct_s, 0);
#undef PK
    }
}

void ms_metrics_write_json(FILE *f, const ms_metrics_t *m, const char *policy)
{
    double gap = m->lower_bound_s > 0.0 ? m->makespan_s / m->lower_bound_s - 1.0 : 0.0;

    fprintf(f, "{\n");
    if (policy != NULL)
        str(f, "policy", policy);
    num(f, "makespan_s", m->makespan_s, 0);
    num(f, "mean_wait_s", m->mean_wait_s, 0);
    num(f, "p50_wait_s", m->p50_wait_s, 0);
    num(f, "p95_wait_s", m->p95_wait_s, 0);
    num(f, "p99_wait_s", m->p99_wait_s, 0);
    num(f, "max_wait_s", m->max_wait_s, 0);
    num(f, "mean_exec_s", m->mean_exec_s, 0);
    num(f, "mean_jct_s", m->mean_jct_s, 0);
    num(f, "mean_slowdown", m->mean_slowdown, 0);
    lng(f, "jobs_total", m->jobs_total);
    lng(f, "jobs_completed", m->jobs_completed);
    lng(f, "jobs_rejected", m->jobs_rejected);
    lng(f, "migrations", m->migrations);
    lng(f, "migrations_bbm", m->migrations_bbm);
    lng(f, "reconfigurations", m->reconfigurations);
    lng(f, "layout_switches", m->layout_switches);
    num(f, "mean_fragcost", m->mean_fragcost, 0);
    num(f, "mean_utilization", m->mean_utilization, 0);
    num(f, "lower_bound_s", m->lower_bound_s, 0);
    num(f, "lower_bound_gap", gap, 0);
    lng(f, "events", m->events);
    if (m->ntenants > 0)
        tenants(f, m);
    if (m->preempt || m->nprio > 1)
        priorities(f, m);
    num(f, "wall_s", m->wall_s, 1);
    fprintf(f, "}\n");
}
