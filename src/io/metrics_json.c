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
    num(f, "wall_s", m->wall_s, 1);
    fprintf(f, "}\n");
}
