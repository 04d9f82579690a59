/* trace.h - job traces: CSV in, jobs out.
 *
 * Format (header required, columns in any order, extra columns ignored):
 *   job_id,arrival_s,profile,duration_s[,gpus][,mem_gb][,model][,isolation][,priority]
 *   [,tenant][,checkpoint_s]
 * job_id is any non-empty token without commas; profile is a product
 * ("3g.20gb") or generic ("3g") name of the trace's model; gpus (or gang;
 * optional, default 1) asks for a gang of whole GPUs on one node. A row
 * gives profile or mem_gb (the other empty; with a mem_gb column the
 * profile column may be absent): memory resolves on each model of a
 * heterogeneous cluster to its smallest profile with that memory. model
 * (only that model), isolation (any or mig) and priority (higher first) are
 * constraints, kept in ms_trace_t.req when the header has such a column.
 * tenant (1..63 of [A-Za-z0-9._-]; empty: the default tenant) names the
 * team a job belongs to (sched.h, tenants); a trace names at most
 * MS_TRACE_MAX_TENANTS. checkpoint_s (seconds in [0, MS_TRACE_MAX_S];
 * empty or 0: never) is how often the job saves its progress: preempted,
 * it loses only the work since its last checkpoint (sched.h).
 * Rows need not be sorted; the trace is sorted by (arrival, row) after
 * reading.
 *
 * A bad row is an error naming file, line and field; nothing is half-read.
 * The reader streams (one line in memory at a time). It is strict: numbers
 * are decimal (number.h), arrival_s and duration_s lie in
 * [0, MS_TRACE_MAX_S], job ids are unique, a row may not have more fields
 * than the header, a NUL byte is an error, a UTF-8 byte-order mark is
 * skipped.
 */
#ifndef MIGSCHED_TRACE_H
#define MIGSCHED_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "migsched/geometry.h"
#include "migsched/job.h"

/* What a job asks beyond its profile and gang (optional, per job): the
 * constraints a heterogeneous cluster resolves (sched.h). */
typedef struct ms_job_req {
    double mem_gb;             /* > 0: the job asked for memory, not a profile
                              * (prof is then the smallest fit on the trace's model) */
    const ms_model_t *model;   /* only this model; NULL = any */
    uint8_t isolation;         /* ms_isolation_t: 0 any, 1 mig */
    int32_t priority;          /* higher first */
    uint16_t tenant;           /* 0: none (the default tenant), else 1 + its
                                * index in ms_trace_t.tenants */
    double checkpoint_s;       /* its progress saved every checkpoint_s of its
                                * run; 0 never (a preempted job starts over) */
} ms_job_req_t;

#define MS_TRACE_MAX_TENANTS 1000

/* The largest arrival or duration a trace may hold: about 31.7 years. It
 * keeps every simulated time below 2^53 microseconds, so the schedule's six
 * decimals are exact and a short job is never lost to rounding. */
#define MS_TRACE_MAX_S 1e9

typedef struct ms_trace {
    ms_job_t *jobs;        /* [n], sorted by arrival, then input order; jobs[i].idx == i */
    size_t n;
    char *names;           /* all job ids, NUL-separated */
    size_t *name_off;      /* [n] offset of job i's id in names */
    const ms_geom_t *geom; /* borrowed: profiles are this geometry's indices */
    ms_job_req_t *req;     /* [n] or NULL (no constraints); freed with the trace */
    char **tenants;        /* [ntenants] the tenant column's names, in order of
                            * first appearance; NULL without that column */
    int ntenants;
} ms_trace_t;

/* Read a trace from f (name is used in diagnostics). Unknown profiles are an
 * error unless they are the model's but not active, which is also an error
 * (enable them with --profiles). OUT out: free with ms_trace_free(). */
ms_status_t ms_trace_read(FILE *f, const char *name, const ms_geom_t *g,
                          ms_trace_t **out, ms_diag_t *diag);
ms_status_t ms_trace_read_file(const char *path, const ms_geom_t *g,
                               ms_trace_t **out, ms_diag_t *diag);
void ms_trace_free(ms_trace_t *t);   /* NULL-safe */
static inline const char *ms_trace_name(const ms_trace_t *t, size_t i)
{
    return t->names + t->name_off[i];
}

/* Build a trace in memory (tests, generators): jobs are copied and sorted;
 * names may be NULL (ids become "0", "1", ...). Jobs outside the reader's
 * rules (times in [0, MS_TRACE_MAX_S]) or two equal names: MS_EINVAL. */
ms_status_t ms_trace_from_jobs(const ms_geom_t *g, const ms_job_t *jobs, size_t n,
                               const char *const *names, ms_trace_t **out);

/* Write a trace as CSV (header + rows). */
ms_status_t ms_trace_write(FILE *f, const ms_trace_t *t);

/* Synthetic workload: Poisson arrivals. */
typedef struct ms_gen_cfg {
    size_t njobs;
    double rate;           /* arrivals per second; 0 = derive from load */
    double load;           /* offered load vs cluster compute (used when rate == 0) */
    int ngpus;             /* for load */
    const double *mix;     /* weight per active profile; NULL = uniform */
    int dist;              /* 0 exponential, 1 uniform [min,max], 2 lognormal */
    double mean_s, min_s, max_s, sigma;
    uint64_t seed;
} ms_gen_cfg_t;
ms_status_t ms_trace_generate(const ms_geom_t *g, const ms_gen_cfg_t *cfg, ms_trace_t **out);

#endif
