/* bench.h - private: the pieces of `migsched bench` shared between its files.
 *
 * cmd_bench.c      options and orchestration (which cases run, in what order)
 * bench_place.c    placement latency and the migration search (the churn driver)
 * bench_sched.c    whole decisions through ms_sched on a heterogeneous cluster
 * bench_queue.c    the cost of one event as the queue grows (steady states)
 * bench_sim.c      whole-simulation cases, each in a forked child (peak RSS)
 * bench_report.c   the tables on stdout and the JSON objects
 *
 * Never installed. Cross-file functions are ms__bench_*.
 */
#ifndef MIGSCHED_CLI_BENCH_H
#define MIGSCHED_CLI_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "migsched/cluster.h"
#include "migsched/geometry.h"
#include "migsched/policy.h"
#include "migsched/status.h"

#define MAX_LIST 16

/* --- options ------------------------------------------------------------ */

typedef struct bopts {
    bool quick;
    const char *json;
    const char *model;
    long sizes[MAX_LIST];
    int nsizes;
    const char *policies[MAX_LIST];
    int npolicies;
    char *policy_buf;
    bool idx_bucket, idx_scan;
    long scan_max;          /* largest cluster measured with MS_INDEX_SCAN */
    long iters;             /* timed decisions per case */
    long warmup;            /* churn steps before timing */
    double occupancy;       /* target busy compute fraction */
    double mig_occupancy;
    long mig_sizes[MAX_LIST];
    int nmig;
    long sim_jobs[MAX_LIST];
    int nsim;
    long sim_gpus;
    const char *sim_policies[MAX_LIST];   /* the simulation cases' policies */
    int nsimpol;
    char *sim_policy_buf;
    double sim_loads[MAX_LIST];
    int nloads;
    long queue_sizes[MAX_LIST];            /* the queue-depth section */
    int nqsizes;
    long queue_depths[MAX_LIST];
    int nqdepths;
    const char *queue_policies[MAX_LIST];
    int nqpol;
    char *queue_policy_buf;
    long scale_jobs;        /* 0: no scaling pair */
    long scale_small, scale_large;
    double load;
    double mean_s;
    uint64_t seed;
    bool place, mig, sim, queue;
} bopts_t;

/* --- results ------------------------------------------------------------ */

/* Latency summary of n samples. */
typedef struct lat {
    long n;
    double p50_us, p99_us, max_us, mean_us;
} lat_t;

typedef struct place_res {
    char policy[32];
    const char *index;
    long ngpus;
    lat_t lat;
    double per_s;           /* decisions per second, from the timed calls */
    double nofit_frac;
    double occ;             /* busy compute fraction while timing */
    double fill_s;          /* time to fill and warm up */
} place_res_t;

typedef struct mig_res {
    long ngpus;
    lat_t fin, room, place;
    long room_ok;
    double occ;
} mig_res_t;

typedef struct sim_res {
    char policy[32];
    double load;
    long njobs, ngpus;
    int status;             /* ms_status_t of the child, or -1 if it died */
    double gen_s, sim_s;
    double cpu_s;           /* user + system CPU of ms_sim_run alone */
    long events, completed, rejected, migrations;
    double makespan_s, mean_wait_s, util;
    long rss_kb;            /* peak RSS of the child */
} sim_res_t;

typedef struct queue_res {
    char policy[32];
    long ngpus, depth;
    int status;
    double fill_s;
    long events;
    lat_t lat;                  /* per event */
    double place_calls;         /* per event: placements offered to the policy */
    double resv_evals;          /* per event: GPUs evaluated for reservations */
    double skipped;             /* per event: blocked heads not offered */
    double calm;                /* per event: passes that walked no class */
    long waiting, running;      /* at the end */
} queue_res_t;

typedef struct sched_res {
    char policy[40];
    long ngpus;
    int ngroups;
    lat_t submit, resv;
    double nofit_frac;
} sched_res_t;

/* --- bench_place.c: timing, placement and migration search -------------- */

/* CLOCK_MONOTONIC in ns; inline so that every timed call pays the same
 * clock_gettime pair that ms__bench_clock_pair_ns() measures. */
static inline int64_t ms__bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Median, p99, max and mean of n latencies in ns (sorts v). */
lat_t ms__bench_lat_summary(int64_t *v, long n);

/* Median cost of one back-to-back clock_gettime pair, in ns. */
double ms__bench_clock_pair_ns(void);

/* One placement case: `pol` (without migration if no_mig) on ngpus GPUs with
 * index `mode`, iters timed place() calls (fewer past the time budget). */
ms_status_t ms__bench_place(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
                            bool no_mig, ms_index_mode_t mode, long ngpus, long iters,
                            place_res_t *res);

/* One migration search case: `pol` (fa) with every technique on, ngpus GPUs. */
ms_status_t ms__bench_mig(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
                          long ngpus, long iters, mig_res_t *res);

/* --- bench_sched.c: decisions through ms_sched (heterogeneous) ---------- */

ms_status_t ms__bench_sched(const bopts_t *o, const ms_policy_ops_t *pol, bool no_mig,
                            long ngpus, long iters, sched_res_t *res);
void ms__bench_sched_header(void);
void ms__bench_sched_row(const sched_res_t *r, FILE *json, bool *first);

/* --- bench_queue.c: one event at a queue depth ------------------------- */

ms_status_t ms__bench_queue(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
                            long ngpus, long depth, long iters, queue_res_t *r);
void ms__bench_queue_header(void);
void ms__bench_queue_row(const queue_res_t *r, const queue_res_t *none, FILE *json, bool *first);

/* --- bench_sim.c: whole simulations ------------------------------------- */

/* One simulation case in a forked child: `policy` at `load` (lognormal
 * durations); r->status is -1 if the child died. */
void ms__bench_sim(const bopts_t *o, const ms_geom_t *g, const char *policy, double load,
                   long njobs, long ngpus, sim_res_t *r);

/* --- bench_report.c: the tables and the JSON ---------------------------- */

/* The lines above the tables, and the JSON's opening (json may be NULL). */
void ms__bench_preamble(const bopts_t *o, const char *model, FILE *json);
/* The JSON's closing. */
void ms__bench_json_end(FILE *json);

/* In every row printer, json may be NULL; *first says whether no result
 * object has been written yet (it is cleared after writing one). */
void ms__bench_place_header(const bopts_t *o);
void ms__bench_place_unknown(const char *policy);
void ms__bench_place_skipped(const char *name, const char *index, long ngpus, long scan_max);
void ms__bench_place_failed(const char *name, const char *index, long ngpus, ms_status_t st);
void ms__bench_place_row(const char *name, const char *policy, bool no_mig,
                         const place_res_t *r, FILE *json, bool *first);

/* The title, then the column names if have_fa, else a line saying why not. */
void ms__bench_mig_header(const bopts_t *o, bool have_fa);
void ms__bench_mig_failed(long ngpus, ms_status_t st);
void ms__bench_mig_row(const mig_res_t *r, FILE *json, bool *first);

void ms__bench_sim_header(const bopts_t *o);
void ms__bench_sim_row(const sim_res_t *r, const char *tag, FILE *json, bool *first);
/* The scaling line, if both cases succeeded. */
void ms__bench_scaling(const bopts_t *o, const sim_res_t *small, const sim_res_t *big,
                       FILE *json, bool *first);

#endif
