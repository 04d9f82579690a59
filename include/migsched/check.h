/* check.h - validate a schedule against its trace, independently of the
 * simulator that wrote it.
 *
 * The checks are the properties every policy must keep (the same ones the
 * property tests assert):
 *   - every row names a job of the trace, a GPU in [0, ngpus) and an
 *     instance profile at a legal start (time-slicing: start -1);
 *   - the instance is at least the job's profile (compute and memory);
 *   - no segment begins before its job arrives, and none ends before it
 *     begins;
 *   - no two segments on one GPU hold a memory slice at the same time;
 *   - every job of the trace ran: its segments cover at least its
 *     duration in time, and add up to at least duration x gang size of
 *     work. A job with no segment is a violation ("not in the schedule"),
 *     unless it can never run on the cluster (a gang larger than a node:
 *     counted as unrunnable) or opts->allow_missing is set (counted only).
 * A malformed file is an error naming file, line and field; a violation is
 * not an error but a finding, counted and described.
 */
#ifndef MIGSCHED_CHECK_H
#define MIGSCHED_CHECK_H

#include <stdio.h>

#include "migsched/nodes.h"
#include "migsched/trace.h"

#define MS_CHECK_MAX_MSGS 8

typedef struct ms_check_result {
    long segments;          /* rows read */
    long jobs_run;          /* trace jobs with at least one segment */
    long jobs_missing;      /* trace jobs with none that could have run */
    long jobs_unrunnable;   /* trace jobs with none that never fit the cluster */
    long violations;        /* findings, all kinds */
    int nmsgs;              /* the first MS_CHECK_MAX_MSGS findings, in words */
    char msgs[MS_CHECK_MAX_MSGS][160];
} ms_check_result_t;

typedef struct ms_check_opts {
    int ngpus;              /* GPUs of the cluster, > 0 */
    int gpus_per_node;      /* 0: all on one node */
    bool timeslice;         /* rows have start -1; no memory-slice check (with nodes:
                             * the MIG nodes are time-sliced, the timeslice policy) */
    bool allow_missing;     /* a job not in the schedule is no violation */
    /* A heterogeneous cluster (overrides ngpus, gpus_per_node and
     * timeslice when nnodes > 0): each GPU is checked in its own model's
     * geometry and its node's mode. Then also: a row's node,model columns
     * (if present) match the GPU; an instance has at least the job's memory
     * and share of compute; a time-sliced GPU never holds more than its
     * replicas at once, a whole GPU never two; a job with a model
     * constraint runs on that model, an isolated one (mig) never on a
     * time-sliced GPU. */
    const ms_node_spec_t *nodes;
    int nnodes;
} ms_check_opts_t;

/* Read the schedule CSV from f (name for diagnostics) and check it against
 * trace t on the cluster that o describes. */
ms_status_t ms_schedule_check(FILE *f, const char *name, const ms_trace_t *t,
                              const ms_check_opts_t *o, ms_check_result_t *res,
                              ms_diag_t *diag);

#endif
