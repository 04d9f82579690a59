/* experiment_int.h - private: the experiment's state and the pieces its
 * files share.
 *
 * Files:
 *   experiment.c         configuration, traces, the main grid (every variant
 *                        x load x seed), the two runs written in full, and
 *                        ms_experiment_run() itself
 *   experiment_sweeps.c  the sweeps of t, beta and the migration cost, and
 *                        the recommendation derived from them
 *   experiment_stats.c   means, sds and paired gains over seeds
 *   experiment_report.c  the main table, the CSV files and README.md
 *   experiment_svg.c     the SVG plots
 *
 * Every metrics array is indexed [...][seed]; the main grid has its own
 * seeds (nseeds), the sweeps theirs (nsw >= nseeds: their differences are
 * small). Sweeps at "2 loads" are medium and high.
 */
#ifndef MIGSCHED_EXPERIMENT_INT_H
#define MIGSCHED_EXPERIMENT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "migsched/research/experiment.h"
#include "migsched/sim.h"
#include "migsched/trace.h"

/* One scheduler configuration in the comparison. */
typedef struct ms__xp_variant {
    const char *label;     /* in tables and plots */
    const char *policy;    /* registry name */
    int balance, dynamic, migration;   /* -1: the policy's default */
    const char *what;
} ms__xp_variant_t;

#define MS__XP_NVAR 11
/* fa+ (this project's scheduler) is the headline, first in every table; the
 * ablation static -> fa-lb -> fa-lb-dp -> fa stays the faithful reproduction
 * of the seeds */
enum {
    MS__XP_V_FAPLUS = 0, MS__XP_V_STATIC = 1, MS__XP_V_LB = 2, MS__XP_V_LBDP = 3, MS__XP_V_FA = 4,
    MS__XP_V_FIRSTFIT = 5
};
extern const ms__xp_variant_t ms__xp_variants[MS__XP_NVAR];

#define MS__XP_NLOAD 3
enum { MS__XP_L_MED = 1, MS__XP_L_HIGH = 2 };
extern const double ms__xp_loads[MS__XP_NLOAD];
extern const char *const ms__xp_load_names[MS__XP_NLOAD];

#define MS__XP_NBETA 4
#define MS__XP_NBETAVAR 5
extern const double ms__xp_betas[MS__XP_NBETA];
extern const int ms__xp_beta_vars[MS__XP_NBETAVAR];   /* variants of the beta sweep */

#define MS__XP_NMIG 6
extern const double ms__xp_migs[MS__XP_NMIG];

#define MS__XP_NT_MAX 11
#define MS__XP_MAX_SEEDS 64

/* The resolved configuration. */
typedef struct ms__xp_opts {
    const char *out;
    int seeds;
    long jobs;
    bool quick;
    int sweep_seeds;
    double mean_s, sigma, beta, migrate_s, create_s;
    ms_queue_mode_t queue;
    int ngpus;
} ms__xp_opts_t;

/* Everything measured, indexed [..][seed]. */
typedef struct ms__xp_results {
    int nseeds;
    size_t njobs;
    ms_metrics_t *main;       /* [NVAR][NLOAD][seeds] */
    double *waits;            /* [NVAR][NLOAD][seeds * njobs] waits, NaN if never started */
    int nsw;                  /* seeds of the sweeps */
    int nt;
    double tval[MS__XP_NT_MAX];
    ms_metrics_t *tsweep;     /* [nt][2 loads][nsw] */
    int nbeta;
    ms_metrics_t *bsweep;     /* [NBETA][NBETAVAR][nsw] (medium load) */
    int nmig;
    ms_metrics_t *msweep;     /* [NMIG][2 loads][nsw] (fa) */
    ms_metrics_t *nomig;      /* [2 loads][nsw] (fa-lb-dp, the no-migration reference) */
    /* FragCost over time, one run each of the beta sweep's variants
     * (medium load, first seed), indexed by variant */
    double *ft[MS__XP_NVAR], *fv[MS__XP_NVAR];
    size_t fn[MS__XP_NVAR];
    ms_segment_t *gantt;      /* fa+, medium load, first seed */
    size_t ngantt;
} ms__xp_results_t;

#define MS__XP_MAIN(r, v, l, s) \
    (&(r)->main[((size_t)(v) * MS__XP_NLOAD + (size_t)(l)) * (size_t)(r)->nseeds + (size_t)(s)])

/* The recommendation derived from the sweeps. */
typedef struct ms__xp_reco {
    double t_best, t_score[MS__XP_NT_MAX];
    int t_best_i, t_seed_i;   /* index of the best t and of the seed's 0.4 (nearest) */
    double mig_limit;         /* largest swept migration cost that still pays, NaN if none */
    bool mig_all;             /* every swept cost pays */
} ms__xp_reco_t;

struct ms_experiment {
    ms__xp_opts_t o;
    ms__xp_results_t r;
    ms__xp_reco_t rc;
    ms_geom_t *g;
    const char *model;
    ms_trace_t *tr[MS__XP_NLOAD][MS__XP_MAX_SEEDS];   /* during the run only */
    const ms_experiment_cfg_t *cfg;                 /* during the run only */
    long done, total;                               /* progress steps */
    double wall_s;
};

/* --- experiment.c -------------------------------------------------------- */

/* Monotonic clock, seconds. */
double ms__xp_now(void);
/* Count one step and tell the caller's progress callback. */
void ms__xp_progress(ms_experiment_t *x, const char *what);
/* Run variant v on tr. t < 0 and the others < 0 keep the defaults. No
 * observer: only the metrics (with wall_s). */
ms_status_t ms__xp_run_one(const ms__xp_opts_t *o, const ms_trace_t *tr,
                           const ms__xp_variant_t *v, double t, double beta,
                           double migrate_s, ms_metrics_t *m, ms_diag_t *d);

/* --- experiment_sweeps.c ------------------------------------------------- */

/* The t, beta and migration-cost sweeps on x->tr. */
ms_status_t ms__xp_run_sweeps(ms_experiment_t *x, ms_diag_t *d);
void ms__xp_recommend(const ms__xp_results_t *r, ms__xp_reco_t *rc);

/* --- experiment_stats.c -------------------------------------------------- */

#define MS__XP_F(field) offsetof(ms_metrics_t, field)

/* Over n runs, of the double (or long) field at byte offset off. */
double ms__xp_mean(const ms_metrics_t *m, int n, size_t off);
double ms__xp_sd(const ms_metrics_t *m, int n, size_t off);
long ms__xp_sum_long(const ms_metrics_t *m, int n, size_t off);
/* Mean over seeds of the paired relative improvement (base - x) / base, in %. */
double ms__xp_gain(const ms_metrics_t *base, const ms_metrics_t *x, int n, size_t off);
/* Mean makespan / lower bound - 1, in %. */
double ms__xp_gap(const ms_metrics_t *m, int n);
/* Means over the sweeps' seeds: t sweep [i][load k], migration sweep [i][k],
 * the no-migration reference [k]. */
double ms__xp_tsw(const ms__xp_results_t *r, int i, int k, size_t off);
double ms__xp_msw(const ms__xp_results_t *r, int i, int k, size_t off);
double ms__xp_nomig(const ms__xp_results_t *r, int k, size_t off);

/* --- experiment_report.c / experiment_svg.c ------------------------------ */

/* Check f for write errors and close it: st, or MS_EIO if st was MS_OK. */
ms_status_t ms__xp_close_checked(FILE *f, ms_status_t st);
void ms__xp_write_table(FILE *f, const ms__xp_results_t *r, bool md);
ms_status_t ms__xp_write_csvs(const ms__xp_opts_t *o, const ms__xp_results_t *r);
ms_status_t ms__xp_write_readme(const ms__xp_opts_t *o, const ms__xp_results_t *r,
                                const ms__xp_reco_t *rc, double wall);
ms_status_t ms__xp_write_svgs(const ms__xp_opts_t *o, const ms_geom_t *g,
                              const ms__xp_results_t *r);

#endif
