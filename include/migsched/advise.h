/* advise.h - seed 002's road map as a tool: from per-GPU utilisation
 * samples and the recent workload, recommend
 *   1. which nodes to move to time-slicing (mean utilisation below a
 *      threshold, 40% by default: "reclaim the waste first"),
 *   2. which latency-sensitive services to move onto MIG instances (their
 *      jobs then never share a GPU in time: "then isolation"),
 *   3. which whole-node MIG layout (inference-peak, balanced, training) fits
 *      the demand on each node that stays on MIG,
 * and the expected gain: the recent history (a trace) simulated on the
 * current configuration and on the recommended one, same policy, same
 * simulator (sim.h), metrics side by side.
 *
 * Inputs, strict (errors name file, line and field):
 *   utilisation CSV   time,node,gpu,util[,mem_used_gb]; time in seconds
 *                     (>= 0), node a cluster node, gpu in [0, its GPUs),
 *                     util in percent [0, 100], memory in [0, the GPU's]
 *   DCGM exporter     Prometheus text: DCGM_FI_DEV_GPU_UTIL{gpu="0",
 *                     Hostname="node-a",...} 37 [timestamp-ms] per GPU and
 *                     DCGM_FI_DEV_FB_USED (MiB); other metrics and lines
 *                     with GPU_I_ID (MIG instances, where DCGM reports no
 *                     GPU_UTIL) are skipped; several scrapes concatenated
 *                     are several samples
 *   trace classes     the trace's optional columns latency_sensitive
 *                     (0/1/true/false/yes/no) and service (a name grouping
 *                     jobs; default the job id)
 *
 * The simulated gain covers the mode changes (time-slicing, MIG isolation
 * for latency-sensitive jobs); layouts are recommended for the GPU
 * Operator (`migsched k8s-config`) but not simulated, because the dynamic
 * policies re-cut GPUs on demand. The simulator runs each job at its
 * profile's full speed, so a GPU that is really 20% busy shares better than
 * simulated: the gain is conservative for time-slicing (docs/cli.md).
 *
 * An operator's tool, not research: its own module, src/advise/, above the
 * simulator (it runs ms_sim_run twice) and beside the research tooling.
 */
#ifndef MIGSCHED_ADVISE_H
#define MIGSCHED_ADVISE_H

#include <stdbool.h>
#include <stdio.h>

#include "migsched/sched.h"
#include "migsched/sim.h"
#include "migsched/trace.h"

typedef struct ms_advise ms_advise_t;

/* An advisor over nodes (borrowed: they and their geometries must outlive
 * it). OUT out: free with ms_advise_destroy(). */
ms_status_t ms_advise_create(const ms_node_spec_t *nodes, int nnodes, ms_advise_t **out);
void ms_advise_destroy(ms_advise_t *a);   /* NULL-safe */

/* Add utilisation samples from a CSV or DCGM text stream. */
ms_status_t ms_advise_read_util_csv(ms_advise_t *a, FILE *f, const char *name, ms_diag_t *d);
ms_status_t ms_advise_read_dcgm(ms_advise_t *a, FILE *f, const char *name, ms_diag_t *d);
long ms_advise_nsamples(const ms_advise_t *a);

/* The trace of the recent history (borrowed) and its classes, read from
 * the same file (path) again for the latency_sensitive and service columns;
 * a trace without them (or path NULL) has no latency-sensitive jobs. */
ms_status_t ms_advise_set_trace(ms_advise_t *a, const ms_trace_t *t, const char *path,
                                ms_diag_t *d);

typedef struct ms_advise_cfg {
    double ts_threshold;     /* percent: below it a node goes time-sliced (40) */
    int replicas;            /* time-slicing replicas recommended (4) */
    ms_sim_cfg_t sim;        /* policy and model settings of the simulations;
                              * nodes/nnodes are set by the advisor */
} ms_advise_cfg_t;
void ms_advise_cfg_defaults(ms_advise_cfg_t *c);

typedef struct ms_advise_node {
    const char *name;
    const ms_model_t *model;
    int ngpus;
    ms_node_mode_t mode, rec_mode;
    int replicas, rec_replicas;      /* timeslice modes only */
    long samples;
    double mean_util;                /* percent; NaN without samples */
    double max_mem_gb;               /* largest memory used seen (0 if not given) */
    const char *layout;              /* rec_mode mig with a trace: the layout kind */
    double layout_fit;               /* its share of demand compute used, 0..1 */
    const char *reason;              /* why, in words (static) */
} ms_advise_node_t;

typedef struct ms_advise_service {
    const char *name;
    long jobs;
    long shared;                     /* jobs that ran time-sliced in the current run */
    const char *profile;             /* the profile its jobs ask for most */
} ms_advise_service_t;

typedef struct ms_advise_result {
    ms_advise_node_t *nodes;
    int nnodes;
    ms_advise_service_t *svc;        /* latency-sensitive services */
    int nsvc;
    bool simulated;                  /* a trace was given */
    ms_metrics_t cur, rec;
    double threshold;
    const char *policy;
} ms_advise_result_t;

/* Recommend, and simulate when a trace is set. OUT res: free with
 * ms_advise_result_free(). */
ms_status_t ms_advise_run(ms_advise_t *a, const ms_advise_cfg_t *cfg, ms_advise_result_t *res,
                          ms_diag_t *d);
void ms_advise_result_free(ms_advise_result_t *r);

/* Gain of the recommendation on a metric where lower is better, in percent
 * of the current value ((cur - rec) / cur * 100; 0 when cur is 0). */
double ms_advise_gain(double cur, double rec);

/* Writers: text for people, one JSON object, a long-format CSV
 * (section,name,field,current,recommended), and the recommended cluster as
 * a `migsched k8s-config` policy file. */
ms_status_t ms_advise_write_text(FILE *f, const ms_advise_result_t *r);
ms_status_t ms_advise_write_json(FILE *f, const ms_advise_result_t *r);
ms_status_t ms_advise_write_csv(FILE *f, const ms_advise_result_t *r);
ms_status_t ms_advise_write_policy(FILE *f, const ms_advise_result_t *r);

#endif
