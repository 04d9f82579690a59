/* experiment.h - the fragmentation-aware scheduler's experiment: the seed's
 * ablation on one node of four A100-40GB GPUs, the baselines, and sweeps of
 * the load-balancing threshold t, the interference beta and the migration
 * cost (docs/experiment.md).
 *
 * Workload (stated choices): Poisson arrivals at an offered load of 0.5 /
 * 0.8 / 1.1 of the cluster's compute slices, a uniform mix over the five
 * classic profiles, lognormal durations (default mean 600 s, sigma 1), a
 * fresh trace per (load, seed), the same traces for every policy.
 *
 * ms_experiment_run() runs everything and writes the report directory
 * (README.md, CSV, SVG, and runs/ with two full runs for `migsched report`).
 * It never prints: progress goes to an optional callback, and the main table
 * is written by ms_experiment_write_table() to a caller-given stream. Runs
 * are deterministic: the same configuration gives the same files, except the
 * wall times (runs.csv's wall_s, the README's duration).
 */
#ifndef MIGSCHED_EXPERIMENT_H
#define MIGSCHED_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "migsched/sched.h"
#include "migsched/status.h"

typedef struct ms_experiment ms_experiment_t;

typedef struct ms_experiment_cfg {
    const char *out_dir;   /* report directory, created with its parents
                            * (default "report/experiment"); borrowed */
    int seeds;             /* traces per load, 1..64; 0 = 5 (2 with quick) */
    long jobs;             /* jobs per trace, 1..1000000; 0 = 400 (60 with quick) */
    int sweep_seeds;       /* traces per load in the sweeps, 1..64, raised to
                            * seeds; 0 = 20 (seeds with quick) */
    double mean_s;         /* mean job duration, seconds, > 0 (default 600) */
    double sigma;          /* lognormal sigma of durations, (0, 5] (default 1) */
    double beta;           /* interference per other busy instance, [0, 10]
                            * (default: the simulator's, 0.05) */
    bool quick;            /* a tiny run: 3 thresholds, 2 betas, 2 migration costs */
    ms_queue_mode_t queue; /* the queue discipline (default: the simulator's) */

    /* Optional: called after each step (a run, or writing the report) with
     * the steps done so far, the total, and what the step was. */
    void *ctx;
    void (*on_progress)(void *ctx, long done, long total, const char *what);
} ms_experiment_cfg_t;

/* What the caller needs to describe a finished experiment. */
typedef struct ms_experiment_summary {
    const char *model;     /* GPU model name; static storage */
    int ngpus;             /* GPUs in the node */
    size_t jobs;           /* jobs per trace */
    int seeds, sweep_seeds;
    int nloads;
    double loads[4];       /* offered loads, low to high */
    double t_best;         /* recommended load-balancing threshold */
    bool mig_all;          /* migration pays at every swept cost */
    double mig_limit_s;    /* largest swept cost up to which it pays; NaN: at none */
    double mig_max_s;      /* the largest swept migration cost */
    double wall_s;         /* seconds ms_experiment_run() took up to the report */
} ms_experiment_summary_t;

void ms_experiment_cfg_defaults(ms_experiment_cfg_t *cfg);

/* Run the experiment and write the report into cfg->out_dir.
 * IN cfg: borrowed for the call. OUT out: caller owns; free with
 * ms_experiment_destroy(); untouched on failure. diag (may be NULL) says
 * what failed. */
ms_status_t ms_experiment_run(const ms_experiment_cfg_t *cfg, ms_experiment_t **out,
                              ms_diag_t *diag);

/* IN x: borrowed. OUT out: filled. */
void ms_experiment_summary(const ms_experiment_t *x, ms_experiment_summary_t *out);

/* The main table (policy x load: makespan, waits, execution time, gain over
 * static, gap to the bound, FragCost, migrations) as fixed-width text, or as
 * Markdown (the README's). Write errors show in ferror(f). */
void ms_experiment_write_table(FILE *f, const ms_experiment_t *x, bool markdown);

/* NULL is fine. */
void ms_experiment_destroy(ms_experiment_t *x);

/* Seed 002's mixed platform (`experiment --scenario platform`): MIG and
 * time-sliced A100 inference nodes and whole-GPU H100 training nodes on one
 * heterogeneous cluster, every policy at three loads; writes README.md,
 * platform.csv and SVG charts to out_dir and, if table is not NULL, the
 * tables as text. */
typedef struct ms_platform_cfg {
    const char *out_dir;   /* borrowed; created with its parents */
    int seeds;             /* traces per load; 0 = 5 (2 with quick) */
    size_t njobs;          /* jobs per trace; 0 = 3000 (300 with quick) */
    bool quick;
    void *ctx;
    void (*on_progress)(void *ctx, size_t done, size_t total);
} ms_platform_cfg_t;

ms_status_t ms_platform_run(const ms_platform_cfg_t *cfg, FILE *table, ms_diag_t *diag);

#endif
