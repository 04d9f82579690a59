/* report.h - reading runs back for reports: metrics JSON, schedule CSV,
 * and what can be computed from a schedule alone.
 *
 * The inverse of ms_metrics_write_json() and the schedule writer
 * (schedule.h), for `migsched report`. Readers take a caller-given stream,
 * fill an ms_diag_t on malformed input and never print.
 */
#ifndef MIGSCHED_REPORT_H
#define MIGSCHED_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "migsched/sim.h"

/* Read one flat JSON object as written by ms_metrics_write_json(). Unknown
 * keys are ignored, missing ones stay 0, null becomes NaN. If policy is not
 * NULL it receives the "policy" string (truncated to plen - 1 bytes; "" if
 * absent). */
ms_status_t ms_report_read_metrics(FILE *f, const char *name, ms_metrics_t *m,
                                   char *policy, size_t plen, ms_diag_t *diag);

/* Read a schedule CSV (job_id,gpu,start,profile,begin_s,end_s; columns in
 * any order, extra ones ignored). Profiles are looked up in g. seg.job is
 * the job_id when it is a non-negative integer, else the row's ordinal.
 * OUT segs: malloc'd array of *n segments (free()); *ngpus = largest GPU
 * number + 1 (0 if empty). */
ms_status_t ms_report_read_schedule(FILE *f, const char *name, const ms_geom_t *g,
                                    ms_segment_t **segs, size_t *n, int *ngpus,
                                    ms_diag_t *diag);

/* Utilisation over time from a schedule: the fraction of the ngpus GPUs'
 * compute slices held by running segments (time-slice segments count their
 * profile's compute, capped per GPU at the GPU's compute), as a step
 * function: value u[i] holds from t[i] to t[i+1]. The last point is the
 * schedule's end with u = 0. OUT t, u: malloc'd arrays of *npts (free()). */
ms_status_t ms_report_util_series(const ms_geom_t *g, int ngpus, const ms_segment_t *segs,
                                  size_t n, double **t, double **u, size_t *npts);

/* Create directory path and its missing parents (mode 0777 & ~umask);
 * an existing directory is fine. */
ms_status_t ms_report_mkdirs(const char *path);

/* Open dir/name for writing ("w"). OUT f: the caller fcloses it. */
ms_status_t ms_report_fopen(const char *dir, const char *name, FILE **f);

/* --- a report directory (report_dir.c): what `migsched report` writes -- */

/* The inputs: run directories (metrics.json, optional schedule.csv and
 * trace.csv, as `simulate --out` writes them), metrics JSON files alone,
 * `fgd-experiment --json` files and `import-alibaba --fill --json` files;
 * the schedules' model is geom's. */
typedef struct ms_report_inputs {
    const char *const *runs;
    size_t nruns;
    const char *const *metrics;
    size_t nmetrics;
    const char *const *fgd;
    size_t nfgd;
    const char *const *fill;
    size_t nfill;
    const ms_geom_t *geom;
} ms_report_inputs_t;

/* Read every input (an error names its file, line and field; nothing is
 * written then), create out and write out/README.md with, per kind of
 * input: metrics.csv, compare.svg, utilisation.svg, fragcost_time.svg,
 * timeseries.csv, wait_cdf.svg, waits.csv, gantt_*.svg (runs);
 * fgd_*.svg, fgd_table.csv, fgd_curves.csv (fgd); fill_*.svg,
 * fill_table.csv, fill_curves.csv (fill). */
ms_status_t ms_report_write_dir(const ms_report_inputs_t *in, const char *out,
                                ms_diag_t *diag);

/* Mean and sample standard deviation of x[0..n) over finite values
 * (sd 0 with fewer than two; mean NaN with none). */
void ms_report_mean_sd(const double *x, size_t n, double *mean, double *sd);

/* --- series computed from a schedule (report_series.c) ----------------- */

/* FragCost over time: the segments are replayed onto per-GPU placement
 * states (ms_state_place at begin, ms_state_remove at end; at equal times
 * ends first) and the mean over the ngpus GPUs of ms_frag_cost (default
 * options) is recorded as a step function: v[i] holds from t[i] to t[i+1].
 * Only the instances that run jobs are seen: idle GPU instances a policy
 * keeps are not in a schedule, and time-slice segments (start -1) are
 * skipped. A segment that cannot be placed on its GPU's replayed state
 * (overlap) is skipped and counted in *skipped (may be NULL).
 * OUT t, v: malloc'd arrays of *npts (free()). */
ms_status_t ms_report_frag_series(const ms_geom_t *g, int ngpus, const ms_segment_t *segs,
                                  size_t n, double **t, double **v, size_t *npts,
                                  size_t *skipped);

/* Time-weighted mean of a step series (t, v) of npts points over
 * [t[0], t[npts-1]]; NaN if the span is empty. */
double ms_report_step_mean(const double *t, const double *v, size_t npts);

/* One job's arrival, as read from a trace for the wait times. */
typedef struct ms_report_arrival {
    int32_t id;            /* the numeric job_id */
    double arrival_s;
} ms_report_arrival_t;

/* Read the job arrivals of a trace CSV (job_id,arrival_s,...; columns in
 * any order, others ignored). job_id must be an integer in [0, 2^31 - 2]
 * (as in the traces migsched writes), each once. OUT a: malloc'd array of
 * *n entries, one per row, sorted by id (its size follows the rows, never
 * the largest id). */
ms_status_t ms_report_read_arrivals(FILE *f, const char *name, ms_report_arrival_t **a,
                                    size_t *n, ms_diag_t *diag);

/* Wait time of every job that has a segment: its first segment's begin
 * minus its arrival (a[] sorted by id, as read above; segments whose job
 * is not in a[] are ignored). Gang jobs count once.
 * OUT w: malloc'd array of *nw waits in id order (free(); NULL if none). */
ms_status_t ms_report_wait_times(const ms_report_arrival_t *a, size_t na,
                                 const ms_segment_t *segs, size_t n, double **w, size_t *nw);

/* Empirical CDF of x[0..n): sorted copy in *xs and the cumulative fraction
 * in *p (p[i] = (i + 1) / n), both malloc'd (NULL when n is 0). */
ms_status_t ms_report_cdf(const double *x, size_t n, double **xs, double **p);

/* --- fill-experiment JSON (report_exp_json.c, on report_json.c) --------
 *
 * Readers for the JSON that `migsched fgd-experiment --json` and
 * `migsched import-alibaba --fill --json` write, over a small general JSON
 * parser (RFC 8259 values; \u escapes outside ASCII become '?'; nesting
 * up to 64 levels). A missing or mistyped key is MS_EPARSE with
 * diag->field naming its path ("policies[2].arrived_pct") and diag->line
 * the line of the object that lacks it; malformed JSON names the line and
 * what was expected. */

/* One policy's curve of an fgd-experiment run. */
typedef struct ms_report_fgd_pol {
    char *policy;            /* "random", "dot-product", ..., "fgd" */
    double at100, at100_sd;  /* unallocated GPU % at 100 % arrived, mean and sd */
    double failed_pods_mean; /* NaN if absent */
    size_t n;                /* points */
    double *arrived;         /* [n] arrived %, ascending */
    double *unalloc;         /* [n] unallocated GPU %, mean over seeds */
    double *unalloc_sd;      /* [n] its sd (NaN where absent) */
} ms_report_fgd_pol_t;

typedef struct ms_report_fgd {
    char *trace;             /* short name: "default" from .../openb_pod_list_default.csv */
    char *pods;              /* the pod list as written ("" if absent) */
    long gpus;
    size_t nseeds;
    size_t npol;
    ms_report_fgd_pol_t *pol;
} ms_report_fgd_t;

/* Read `fgd-experiment --json` output (one policy at the top level or a
 * "policies" array). OUT out: free with ms_report_fgd_free(). */
ms_status_t ms_report_read_fgd(FILE *f, const char *name, ms_report_fgd_t **out,
                               ms_diag_t *diag);
void ms_report_fgd_free(ms_report_fgd_t *r);   /* NULL-safe */

typedef struct ms_report_stat { double mean, sd; } ms_report_stat_t;

/* One MIG policy of an import-alibaba --fill run. */
typedef struct ms_report_fill_pol {
    char *policy;
    /* at 100 % arrived, over seeds */
    ms_report_stat_t compute, mem, gpu, fragcost, failed;
    size_t n;                /* curve points; point i is at i % arrived */
    double *compute_pct;     /* [n] unallocated compute slices %, mean over runs */
    double *gpu_pct;         /* [n] unallocated (wholly free) GPUs %, mean over runs */
    double *fragcost_curve;  /* [n] mean FragCost, mean over runs */
} ms_report_fill_pol_t;

typedef struct ms_report_fill {
    char *trace;             /* short name from "pods" */
    char *pods, *model, *mapping;
    long ngpus;
    size_t nseeds;
    size_t npol;
    ms_report_fill_pol_t *pol;
} ms_report_fill_t;

ms_status_t ms_report_read_fill(FILE *f, const char *name, ms_report_fill_t **out,
                                ms_diag_t *diag);
void ms_report_fill_free(ms_report_fill_t *r);  /* NULL-safe */

/* The published FGD numbers (Weng et al., ATC '23; shared/reference/fgd.md
 * §2): unallocated GPU % at 100 % arrived, mean of 10 seeds, for trace
 * ("default", "cpu050", ...) and policy (our names: "random",
 * "dot-product", "clustering", "packing", "best-fit", "fgd"). Returns
 * false (and leaves *v) where none is published. sd, if not NULL,
 * receives the published seed sd where known (default trace), else NaN. */
bool ms_report_fgd_published(const char *trace, const char *policy, double *v, double *sd);

#endif
