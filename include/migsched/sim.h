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
#include <stdio.h>

#include "migsched/policy.h"
#include "migsched/sched.h"
#include "migsched/segment.h"
#include "migsched/trace.h"

/* Tenants the simulator declares (--tenant NAME:weight=W,guarantee=S,
 * limit=S; sched.h has what they mean). A tenant the trace's tenant column
 * names and this list does not is declared with weight 1, guarantee 0 and
 * no limit. At most MS_SIM_MAX_TENANTS in all. */
#define MS_SIM_MAX_TENANTS 16

typedef struct ms_sim_tenant {
    char name[64];
    double weight;           /* default 1 */
    long guarantee;          /* compute slices, default 0 */
    long limit;              /* compute slices, -1 (default): none */
    double mem_limit_gb;     /* memory GB, 0 (default): none */
    double mem_guarantee_gb; /* memory GB, 0 (default): none */
    int nmodel_limits;       /* limit@MODEL=S: the canonical model name (static) */
    ms_sched_tenant_model_limit_t model_limits[MS_TENANT_MAX_MODEL_LIMITS];
} ms_sim_tenant_t;

typedef struct ms_sim_tenants {
    int n;
    ms_sim_tenant_t t[MS_SIM_MAX_TENANTS];
} ms_sim_tenants_t;

/* What one tenant got in a run (ms_metrics_t.tenants). Shares are of the
 * cluster's compute slices, time-averaged. */
typedef struct ms_tenant_metrics {
    char name[64];
    double weight;
    long guarantee, limit;
    long jobs, completed;
    double usage_share;          /* over the run (first arrival to the last event) */
    double contended_share;      /* over the contended time: every tenant with
                                  * jobs in the trace had one waiting */
    double mean_wait_s, p99_wait_s, mean_jct_s;
    long max_usage;              /* the most compute slices it held at once */
    /* Reclaim (docs/tenants.md): a job of a tenant with a guarantee arrives
     * while none of its jobs waits and it holds less than its guarantee;
     * the time until it holds its guarantee or none of its jobs waits
     * (its demand, when that is smaller). */
    long reclaims;               /* such arrivals whose episode ended */
    long reclaims_open;          /* ... still open at the end of the run */
    double reclaim_max_s, reclaim_mean_s;   /* over the ended; NAN: none */
} ms_tenant_metrics_t;

typedef struct ms_sim_cfg {
    /* The scheduler the simulator drives, as every face configures it
     * (sched.h): policy, pcfg (the policy's options), index_mode, the queue
     * discipline (queue, backfill_bound_s, aging_rate, default_estimate_s)
     * and, for a heterogeneous cluster, nodes/nnodes (they override
     * ngpus/gpus_per_node when nnodes > 0: the trace's profiles are then
     * requests resolved on each model). Defaults are
     * ms_sched_cfg_defaults'. The simulator sets its own executor; exec
     * and track_ops are ignored. */
    ms_sched_cfg_t sched;
    int ngpus;
    int gpus_per_node;           /* 0 = all on one node */
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
    /* Tenants (the --tenant rows of the option table). */
    ms_sim_tenants_t tenants;
} ms_sim_cfg_t;

void ms_sim_cfg_defaults(ms_sim_cfg_t *cfg);

#define MS_SIM_MAX_PRIOS 8

#define MS_SIM_MAX_HOURS 1024

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
    /* Tenants: filled when any is declared or the trace has a tenant column
     * (ntenants 0 otherwise, and the JSON is as without tenants). */
    int ntenants;
    ms_tenant_metrics_t tenants[MS_SIM_MAX_TENANTS];
    double contended_s;          /* time every tenant with jobs had one waiting */
    double jain_index;           /* Jain's index over the tenants with jobs of
                                  * contended_share / weight (usage_share / weight
                                  * without contended time); 1 = equal */
    /* Jain's index per hour of the run (hour h: [t0 + 3600 h, t0 + 3600 (h+1)),
     * the last one cut at the end) over the tenants that had a job waiting
     * throughout it, of x = its usage share of the hour / its weight. NAN:
     * no tenant had one waiting all the hour. The first MS_SIM_MAX_HOURS are kept; the minimum is
     * over every whole hour after the first (NAN: none). */
    long jain_hours;
    double jain_hourly_min;
    double jain_hourly[MS_SIM_MAX_HOURS];
    /* Each tenant's usage share of hour h, share_hourly[h][k]: its
     * compute-slice area in the hour / (the hour's length x capacity), the
     * x of jain_hourly before the weight (one definition, hourly() in
     * src/sim/tenants.c), for every tenant whether it waited or not. */
    double share_hourly[MS_SIM_MAX_HOURS][MS_SIM_MAX_TENANTS];
    /* Jobs larger than their tenant's limits (slices or memory) on every
     * GPU they could use: they wait to the end (run as given, so a trace
     * gives the same schedule whatever its limits' rows; docs/tenants.md,
     * "A job larger than its tenant's limit"). The first one's id and why. */
    long over_limit;
    char over_limit_id[64];
    char over_limit_why[256];
    /* Preemption and priorities (docs/tenants.md, "Preemption"): written when
     * preemption is on or the trace has more than one priority (nprio > 1). */
    bool preempt;
    long preemptions;            /* runs stopped and queued again */
    bool preempt_move;           /* --preempt-move: preempt_moves written */
    long preempt_moves;          /* victims moved instead of stopped */
    double lost_work_s;          /* their run time lost, summed (instance-seconds) */
    double work_s;               /* the completed jobs' durations, summed */
    int nprio;                   /* distinct priorities, highest first (at most
                                  * MS_SIM_MAX_PRIOS; the rest are not listed) */
    struct {
        int priority;
        long jobs;               /* completed */
        double mean_wait_s, p99_wait_s, mean_jct_s;
    } prio[MS_SIM_MAX_PRIOS];
} ms_metrics_t;

/* Run the whole trace. The geometry is the trace's. */
ms_status_t ms_sim_run(const ms_sim_cfg_t *cfg, const ms_trace_t *trace,
                       ms_metrics_t *out, ms_diag_t *diag);

/* Makespan lower bound of a trace on ngpus GPUs (algorithms.md §7). */
double ms_lower_bound(const ms_trace_t *t, int ngpus);

/* Write metrics as one JSON object (with a trailing newline):
 * src/sim/metrics_json.c, beside the type. */
void ms_metrics_write_json(FILE *f, const ms_metrics_t *m, const char *policy);

#endif
