/* report.h - reading runs back for reports: metrics JSON, schedule CSV,
 * and what can be computed from a schedule alone.
 *
 * The inverse of ms_metrics_write_json() and the schedule writer
 * (schedule.h), for `migsched report`. Readers take a caller-given stream,
 * fill an ms_diag_t on malformed input and never print.
 */
#ifndef MIGSCHED_REPORT_H
#define MIGSCHED_REPORT_H

#include <stddef.h>
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

/* Mean and sample standard deviation of x[0..n) over finite values
 * (sd 0 with fewer than two; mean NaN with none). */
void ms_report_mean_sd(const double *x, size_t n, double *mean, double *sd);

#endif
