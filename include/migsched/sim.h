/* sim.h - the trace-driven discrete-event simulator.
 *
 * Virtual time; events are ordered by (time, sequence) so every run with the
 * same input, options and seed produces the same schedule byte for byte.
 *
 * Model (algorithms.md §3), each a stated default:
 *   interference  a running job progresses at 1 / (1 + beta * others), where
 *                 others = other running instances on its GPU (default beta 0.05);
 *   creation      a job on a freshly created GI starts create_s later (default 2 s);
 *   migration     a moved job makes no progress for migrate_s (default 10 s);
 *   time-slicing  jobs on one GPU share it: each runs at
 *                 min(1, 1 / sum of the c_p/compute of the jobs on the GPU).
 * Progress is integrated piecewise between events.
 *
 * Queue: the scheduler's discipline (sched.h, ms_queue_mode_t): FCFS with
 * backfilling (a later job that fits may start), except that once the head
 * has waited longer than backfill_bound_s nothing may pass it; strict FIFO;
 * or EASY reservations, each optionally with aging. Every job's estimate is
 * its trace duration, or duration x exp(estimate_error x N(0,1)) (seeded by
 * estimate_seed, drawn in arrival order), or none (no_estimates: the
 * scheduler's default_estimate_s).
 *
 * The simulator decides nothing itself: it is a clock and an event source
 * around an ms_sched_t (sched.h), which owns the queue, the policy and the
 * cluster; every plan the scheduler applies comes back to the simulator,
 * which turns it into job progress, segments and aggregates.
 */
#ifndef MIGSCHED_SIM_H
#define MIGSCHED_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/policy.h"
#include "migsched/sched.h"
#include "migsched/trace.h"

/* One execution segment of a job (a migrated job has several). */
typedef struct ms_segment {
    int32_t job;
    int32_t gpu;
    int8_t start;        /* -1 for time-slicing */
    int8_t prof;         /* the instance's profile */
    double begin_s, end_s;
} ms_segment_t;

typedef struct ms_sim_cfg {
    const ms_policy_ops_t *policy;
    ms_policy_cfg_t pcfg;
    int ngpus;
    int gpus_per_node;           /* 0 = all on one node */
    /* A heterogeneous cluster (overrides ngpus/gpus_per_node when nnodes >
     * 0): the trace's profiles are requests resolved on each model. */
    const ms_node_spec_t *nodes;
    int nnodes;
    ms_index_mode_t index_mode;
    ms_queue_mode_t queue;       /* default EASY, as the scheduler's */
    double backfill_bound_s;     /* default 3600 */
    double aging_rate;           /* priority points per hour waited (0 = off) */
    double default_estimate_s;   /* for jobs without an estimate (default 3600) */
    double estimate_error;       /* sigma of log(estimate / duration), 0..3 (0 = exact) */
    uint64_t estimate_seed;      /* default 1 */
    bool no_estimates;           /* jobs carry no estimate */
    double beta;                 /* default 0.05 */
    double create_s;             /* default 2 */
    double migrate_s;            /* default 10 */
    double sample_every_s;       /* FragCost/utilisation samples; 0 = at events only */

    /* Optional observers (all may be NULL). Called synchronously. */
    void *ctx;
    void (*on_segment)(void *ctx, const ms_segment_t *seg);   /* gpu is global */
    void (*on_sample)(void *ctx, double t, double mean_fragcost, double util,
                      int lazy, int busy, long waiting);
    void (*on_progress)(void *ctx, size_t done, size_t total);

    /* Added: while jobs wait, a policy with on_idle is also woken this often
     * (time-driven layout changes, e.g. node-profile's hysteresis);
     * 0 = pcfg.hysteresis_s, or 60 s if that is 0. */
    double idle_tick_s;
} ms_sim_cfg_t;

void ms_sim_cfg_defaults(ms_sim_cfg_t *cfg);

typedef struct ms_metrics {
    double makespan_s;
    double mean_wait_s, p50_wait_s, p95_wait_s, p99_wait_s, max_wait_s;
    double mean_exec_s;          /* start to end, including slowdowns and moves */
    double mean_jct_s;           /* arrival to end */
    double mean_slowdown;        /* exec / duration */
    long jobs_total, jobs_completed, jobs_rejected;
    long migrations, migrations_bbm, reconfigurations, layout_switches;
    double mean_fragcost;        /* time-weighted mean over GPUs */
    double mean_utilization;     /* time-weighted useful compute / capacity */
    double lower_bound_s;        /* algorithms.md §7 */
    long events;
    double wall_s;               /* filled by callers who time the run */
} ms_metrics_t;

/* Run the whole trace. The geometry is the trace's. */
ms_status_t ms_sim_run(const ms_sim_cfg_t *cfg, const ms_trace_t *trace,
                       ms_metrics_t *out, ms_diag_t *diag);

/* Makespan lower bound of a trace on ngpus GPUs (algorithms.md §7). */
double ms_lower_bound(const ms_trace_t *t, int ngpus);

/* Write metrics as one JSON object (with a trailing newline). */
void ms_metrics_write_json(FILE *f, const ms_metrics_t *m, const char *policy);

#endif
