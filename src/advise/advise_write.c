/* advise_write.c - the advisor's outputs: text, JSON, CSV, and the
 * recommended cluster as a `migsched k8s-config` policy. */
#include "advise/advise_int.h"

#include "migsched/json_write.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *mode_name(ms_node_mode_t m)
{
    return m == MS_NODE_TIMESLICE ? "timeslice" : m == MS_NODE_WHOLE ? "whole" : "mig";
}

static void mode_text(char *buf, size_t n, ms_node_mode_t m, int r)
{
    if (m == MS_NODE_TIMESLICE)
        snprintf(buf, n, "timeslice=%d", r);
    else
        snprintf(buf, n, "%s", mode_name(m));
}

/* The metrics compared, lower is better except utilisation. */
typedef struct metric {
    const char *name;
    size_t off;
    bool higher_better;
} metric_t;

static const metric_t METRICS[] = {
    { "makespan_s", offsetof(ms_metrics_t, makespan_s), false },
    { "mean_jct_s", offsetof(ms_metrics_t, mean_jct_s), false },
    { "mean_wait_s", offsetof(ms_metrics_t, mean_wait_s), false },
    { "p95_wait_s", offsetof(ms_metrics_t, p95_wait_s), false },
    { "mean_slowdown", offsetof(ms_metrics_t, mean_slowdown), false },
    { "mean_utilization", offsetof(ms_metrics_t, mean_utilization), true },
};
#define NMETRICS (sizeof(METRICS) / sizeof(METRICS[0]))

static double mval(const ms_metrics_t *m, const metric_t *x)
{
    return *(const double *)(const void *)((const char *)m + x->off);
}

static double gain(const metric_t *x, double cur, double rec)
{
    return x->higher_better ? -ms_advise_gain(cur, rec) : ms_advise_gain(cur, rec);
}

ms_status_t ms_advise_write_text(FILE *f, const ms_advise_result_t *r)
{
    char a[32], b[32];
    int i, nts = 0, nlay = 0;
    size_t k;

    fprintf(f, "nodes (time-slice below %.0f%% mean GPU utilisation):\n", r->threshold);
    fprintf(f, "  %-16s %-14s %4s %-12s %7s %8s  %-12s %s\n", "node", "model", "GPUs", "mode", "util",
            "samples", "recommended", "why");
    for (i = 0; i < r->nnodes; i++) {
        const ms_advise_node_t *n = &r->nodes[i];
        char u[16];
        mode_text(a, sizeof(a), n->mode, n->replicas);
        mode_text(b, sizeof(b), n->rec_mode, n->rec_replicas);
        if (isnan(n->mean_util))
            snprintf(u, sizeof(u), "-");
        else
            snprintf(u, sizeof(u), "%.1f%%", n->mean_util);
        fprintf(f, "  %-16s %-14s %4d %-12s %7s %8ld  %-12s %s\n", n->name, n->model->name, n->ngpus,
                a, u, n->samples, n->rec_mode != n->mode ? b : "keep", n->reason);
        nts += n->rec_mode != n->mode;
    }
    for (i = 0; i < r->nnodes; i++)
        nlay += r->nodes[i].layout != NULL;
    if (nlay > 0) {
        fprintf(f, "\nMIG layouts (GPU Operator, migsched k8s-config; fit = share of the trace's "
                   "demand compute the layout's instances use):\n");
        for (i = 0; i < r->nnodes; i++)
            if (r->nodes[i].layout != NULL)
                fprintf(f, "  %-16s %-14s fit %.2f\n", r->nodes[i].name, r->nodes[i].layout,
                        r->nodes[i].layout_fit);
    }
    if (r->nsvc > 0) {
        fprintf(f, "\nlatency-sensitive services: run them on MIG instances\n");
        for (i = 0; i < r->nsvc; i++)
            fprintf(f, "  %-24s %6ld jobs, mostly %s; %ld ran time-sliced in the current "
                       "configuration\n", r->svc[i].name, r->svc[i].jobs, r->svc[i].profile,
                    r->svc[i].shared);
    } else if (r->simulated) {
        fprintf(f, "\nlatency-sensitive services: none marked (trace column latency_sensitive)\n");
    }
    if (!r->simulated) {
        fprintf(f, "\nno trace given (--trace): no layouts, services or simulated gain\n");
        return ferror(f) ? MS_EIO : MS_OK;
    }
    fprintf(f, "\nexpected gain: the trace simulated on both configurations (policy %s; %d "
               "node%s change mode)\n", r->policy, nts, nts == 1 ? "" : "s");
    fprintf(f, "  %-18s %14s %14s %9s\n", "metric", "current", "recommended", "gain");
    for (k = 0; k < NMETRICS; k++) {
        double c = mval(&r->cur, &METRICS[k]), v = mval(&r->rec, &METRICS[k]);
        fprintf(f, "  %-18s %14.3f %14.3f %+8.1f%%\n", METRICS[k].name, c, v, gain(&METRICS[k], c, v));
    }
    fprintf(f, "  %-18s %14ld %14ld\n", "jobs_completed", r->cur.jobs_completed, r->rec.jobs_completed);
    fprintf(f, "  %-18s %14ld %14ld\n", "jobs_rejected", r->cur.jobs_rejected, r->rec.jobs_rejected);
    return ferror(f) ? MS_EIO : MS_OK;
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6f", v);
    else
        fputs("null", f);
}

static void json_metrics(FILE *f, const ms_metrics_t *m)
{
    size_t k;

    fputc('{', f);
    for (k = 0; k < NMETRICS; k++) {
        fprintf(f, "%s\"%s\":", k ? "," : "", METRICS[k].name);
        json_num(f, mval(m, &METRICS[k]));
    }
    fprintf(f, ",\"jobs_completed\":%ld,\"jobs_rejected\":%ld}", m->jobs_completed, m->jobs_rejected);
}

ms_status_t ms_advise_write_json(FILE *f, const ms_advise_result_t *r)
{
    char b[32];
    int i;
    size_t k;

    fprintf(f, "{\"threshold_pct\":");
    json_num(f, r->threshold);
    fprintf(f, ",\"policy\":");
    ms_json_write_str(f, r->policy);
    fprintf(f, ",\"nodes\":[");
    for (i = 0; i < r->nnodes; i++) {
        const ms_advise_node_t *n = &r->nodes[i];
        fprintf(f, "%s{\"name\":", i ? "," : "");
        ms_json_write_str(f, n->name);
        fprintf(f, ",\"model\":");
        ms_json_write_str(f, n->model->name);
        mode_text(b, sizeof(b), n->mode, n->replicas);
        fprintf(f, ",\"gpus\":%d,\"mode\":\"%s\",", n->ngpus, b);
        mode_text(b, sizeof(b), n->rec_mode, n->rec_replicas);
        fprintf(f, "\"recommended\":\"%s\",\"change\":%s,\"samples\":%ld,\"mean_util_pct\":", b,
                n->rec_mode != n->mode ? "true" : "false", n->samples);
        json_num(f, n->mean_util);
        fprintf(f, ",\"max_mem_used_gb\":");
        json_num(f, n->max_mem_gb);
        fprintf(f, ",\"layout\":");
        if (n->layout != NULL) {
            ms_json_write_str(f, n->layout);
            fprintf(f, ",\"layout_fit\":");
            json_num(f, n->layout_fit);
        } else {
            fprintf(f, "null,\"layout_fit\":null");
        }
        fprintf(f, ",\"reason\":");
        ms_json_write_str(f, n->reason);
        fputc('}', f);
    }
    fprintf(f, "],\"services\":[");
    for (i = 0; i < r->nsvc; i++) {
        fprintf(f, "%s{\"name\":", i ? "," : "");
        ms_json_write_str(f, r->svc[i].name);
        fprintf(f, ",\"jobs\":%ld,\"ran_time_sliced\":%ld,\"profile\":", r->svc[i].jobs,
                r->svc[i].shared);
        ms_json_write_str(f, r->svc[i].profile);
        fprintf(f, ",\"recommended\":\"mig\"}");
    }
    fprintf(f, "],\"simulated\":%s", r->simulated ? "true" : "false");
    if (r->simulated) {
        fprintf(f, ",\"current\":");
        json_metrics(f, &r->cur);
        fprintf(f, ",\"recommended\":");
        json_metrics(f, &r->rec);
        fprintf(f, ",\"gain_pct\":{");
        for (k = 0; k < NMETRICS; k++) {
            fprintf(f, "%s\"%s\":", k ? "," : "", METRICS[k].name);
            json_num(f, gain(&METRICS[k], mval(&r->cur, &METRICS[k]), mval(&r->rec, &METRICS[k])));
        }
        fputc('}', f);
    }
    fprintf(f, "}\n");
    return ferror(f) ? MS_EIO : MS_OK;
}

/* CSV fields: node and service names are tokens without commas (the
 * cluster spec and the trace reader refuse commas). */
ms_status_t ms_advise_write_csv(FILE *f, const ms_advise_result_t *r)
{
    char a[32], b[32];
    int i;
    size_t k;

    fprintf(f, "section,name,field,current,recommended\n");
    for (i = 0; i < r->nnodes; i++) {
        const ms_advise_node_t *n = &r->nodes[i];
        mode_text(a, sizeof(a), n->mode, n->replicas);
        mode_text(b, sizeof(b), n->rec_mode, n->rec_replicas);
        fprintf(f, "node,%s,mode,%s,%s\n", n->name, a, b);
        if (!isnan(n->mean_util))
            fprintf(f, "node,%s,mean_util_pct,%.6f,\n", n->name, n->mean_util);
        fprintf(f, "node,%s,samples,%ld,\n", n->name, n->samples);
        if (n->layout != NULL)
            fprintf(f, "node,%s,layout,,%s\n", n->name, n->layout);
    }
    for (i = 0; i < r->nsvc; i++)
        fprintf(f, "service,%s,isolation,%s,mig\n", r->svc[i].name,
                r->svc[i].shared > 0 ? "time-sliced" : "any");
    if (r->simulated)
        for (k = 0; k < NMETRICS; k++)
            fprintf(f, "metric,%s,value,%.6f,%.6f\n", METRICS[k].name, mval(&r->cur, &METRICS[k]),
                    mval(&r->rec, &METRICS[k]));
    return ferror(f) ? MS_EIO : MS_OK;
}

ms_status_t ms_advise_write_policy(FILE *f, const ms_advise_result_t *r)
{
    int i;

    fprintf(f, "# The cluster as `migsched advise` recommends it; feed it to\n"
               "#   migsched k8s-config --policy FILE --out DIR\n"
               "version: v1\nnodes:\n");
    for (i = 0; i < r->nnodes; i++) {
        const ms_advise_node_t *n = &r->nodes[i];
        fprintf(f, "  - name: ");
        ms_json_write_str(f, n->name);   /* a JSON string is a YAML double-quoted scalar */
        fprintf(f, "\n    model: %s\n    gpus: %d\n    mode: %s\n", n->model->name, n->ngpus,
                mode_name(n->rec_mode));
        if (n->rec_mode == MS_NODE_TIMESLICE)
            fprintf(f, "    replicas: %d\n", n->rec_replicas > 1 ? n->rec_replicas : 2);
        if (n->rec_mode == MS_NODE_MIG)
            fprintf(f, "    layout: %s\n", n->layout != NULL ? n->layout : "balanced");
    }
    return ferror(f) ? MS_EIO : MS_OK;
}
