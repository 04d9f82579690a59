/* sim_int.h - private: pieces of the simulator shared between its files.
 *
 * The simulator's state (sim_t) and the functions its files call across
 * each other. Never installed; see sim.c for the design and the list of
 * files. Cross-file functions are ms__sim_*; the small hot helpers used by
 * more than one file are static inline here.
 */
#ifndef MIGSCHED_SIM_INT_H
#define MIGSCHED_SIM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/evheap.h"
#include "migsched/rng.h"
#include "migsched/sim.h"

/* Lower bound of algorithms.md §7 over the jobs with skip[i] == 0 (skip may
 * be NULL); memory == false leaves out the memory-slice term (time-slicing
 * does not partition memory). O(n): the trace is sorted by arrival. */
double ms__lower_bound(const ms_trace_t *t, int ngpus, const uint8_t *skip, bool memory);

/* Sort n doubles ascending, equal values (-0.0 and +0.0 too) in their
 * input order: the array a stable qsort by value gives (glibc's is a merge
 * sort), by radix in O(n) (the waits of 1,000,000 jobs by qsort were 0.2e9
 * instructions a sort; issue 25). Values with a NaN go to qsort. */
void ms__sort_doubles(double *v, size_t n);

/* Nearest-rank percentile (p in 0..100) of a sorted array of n > 0 values. */
double ms__percentile(const double *sorted, size_t n, double p);

/* --- the simulator's state ----------------------------------------------- */

/* Job states (the simulator's own view; the scheduler has the real one). */
enum { MS__J_PENDING = 0, MS__J_WAITING, MS__J_RUNNING, MS__J_DONE, MS__J_REJECTED };

#define MS__SIM_FX 1e12                            /* FragCost fixed-point scale */

typedef struct ms__sim_job {
    double rem, upd, hold, rate;
    double done;         /* work its checkpoints kept over its preemptions */
    double place_t, end_t;
    uint32_t inst;       /* first slot in the instance pool */
    int32_t slot;        /* the scheduler's slot, -1 before arrival */
    int16_t ninst;
    uint8_t st;
    uint8_t dirty;       /* rate must be recomputed and the finish rescheduled */
} ms__sim_job_t;

typedef struct ms__sim_inst {
    double begin;
    int32_t gpu;         /* global */
    int8_t start;
    int8_t prof;
} ms__sim_inst_t;

/* What the simulator keeps per node group (read from the scheduler). */
typedef struct ms__sim_grp {
    const ms_geom_t *g;
    int C;
    ms_share_mode_t share;
    int64_t *fcost;           /* FragCost per state, fixed point (MS__SIM_FX) */
} ms__sim_grp_t;

typedef struct ms__sim {
    const ms_sim_cfg_t *cfg;
    const ms_trace_t *tr;
    ms_rng_t est_rng;         /* estimate errors */
    ms_sched_t *sched;
    ms_metrics_t *m;
    ms_diag_t *diag;
    int ngpus, ngroups;
    ms__sim_grp_t *grp;       /* [ngroups] */
    const ms_gpu_t **gpu;     /* [ngpus] the scheduler's GPUs (stable pointers) */
    int16_t *ggrp;            /* [ngpus] group of each GPU */

    ms__sim_job_t *jobs;      /* [trace jobs] */
    int32_t *slot2tr;         /* [trace jobs] scheduler slot -> trace index */
    ms__sim_inst_t *pool;

    ms__evheap_t ends;        /* running jobs (trace index) by (finish time, seq) */

    double now;
    int *touched;             /* GPUs whose jobs' rates must be recomputed */
    int ntouched;
    uint32_t *tmark;
    uint32_t stamp;
    int *ctouched;            /* GPUs whose aggregate contribution changed */
    int nctouched;
    uint32_t *cmark;
    uint32_t cstamp;

    /* aggregates: per-GPU contributions cached, totals exact */
    int64_t *gfrag;           /* [ngpus] */
    int32_t *guse;            /* [ngpus] */
    uint8_t *glazy;           /* [ngpus] */
    int64_t sum_frag;         /* exact: no drift over millions of events */
    long sum_useful, nlazy;
    double capacity;          /* compute slices of the whole cluster */
    double area_frag, area_util, last_t, t0;

    size_t done, progress_step, next_progress;

    /* tenants (tenants.c): on when any is declared or the trace names one */
    bool ten_on;
    int nten;                          /* the scheduler's tenants */
    int32_t *tr2t;                     /* [trace tenants + 1] trace tenant -> scheduler's */
    bool ten_jobs[MS_SIM_MAX_TENANTS]; /* the trace has jobs of it */
    double ten_area[MS_SIM_MAX_TENANTS], ten_carea[MS_SIM_MAX_TENANTS];
    long ten_max[MS_SIM_MAX_TENANTS];
    double contended_s;
    /* per hour (tenants.c): each tenant's usage area and time with a job
     * waiting, [nhr][MS_SIM_MAX_TENANTS] each */
    double *hr_area, *hr_wait;
    size_t nhr, caphr;
    /* reclaim episodes (tenants.c): open since (NAN: none), ended ones */
    double rc_since[MS_SIM_MAX_TENANTS];
    long rc_n[MS_SIM_MAX_TENANTS];
    double rc_sum[MS_SIM_MAX_TENANTS], rc_max[MS_SIM_MAX_TENANTS];
    bool hr_nomem;                     /* an hour could not be added */
} ms__sim_t;

/* --- rates.c: rates, progress and aggregates ----------------------------- */

/* Bring j's remaining work up to s->now at its current rate. */
static inline void ms__sim_settle(const ms__sim_t *s, ms__sim_job_t *j)
{
    double from = j->upd > j->hold ? j->upd : j->hold;

    if (s->now > from && j->rate > 0.0) {
        j->rem -= j->rate * (s->now - from);
        if (j->rem < 0.0)
            j->rem = 0.0;
    }
    if (s->now > j->upd)
        j->upd = s->now;
}

/* Mark GPU g: the rates of its jobs are recomputed by the next
 * ms__sim_update_rates(). */
static inline void ms__sim_touch(ms__sim_t *s, int g)
{
    if (s->tmark[g] != s->stamp) {
        s->tmark[g] = s->stamp;
        s->touched[s->ntouched++] = g;
    }
}

/* Recompute the rate of every job on the touched GPUs, reschedule the
 * finishes that changed, and clear the touched set. */
ms_status_t ms__sim_update_rates(ms__sim_t *s);
/* GPU g's share of the aggregates may have changed. */
static inline void ms__sim_ctouch(ms__sim_t *s, int g)
{
    if (s->cmark[g] != s->cstamp) {
        s->cmark[g] = s->cstamp;
        s->ctouched[s->nctouched++] = g;
    }
}
/* Recompute the contributions of the GPUs marked by ms__sim_ctouch (or
 * every GPU when all is set) and clear the marks. */
void ms__sim_update_contrib(ms__sim_t *s, bool all);
/* Integrate the aggregates up to t and move the clock to t. */
void ms__sim_advance(ms__sim_t *s, double t);
/* Report one sample to cfg->on_sample (which must be set). */
void ms__sim_sample(const ms__sim_t *s, double t);

/* --- apply.c: the scheduler's plans -> job events -------------------------- */

/* Report the end of one execution segment to cfg->on_segment, if set. */
void ms__sim_emit_segment(const ms__sim_t *s, int32_t jid, const ms__sim_inst_t *in);
/* The executor callback of the scheduler: applies one plan's job events,
 * then brings aggregates and rates up to date. */
ms_status_t ms__sim_on_plan(void *ctx, const ms_sched_plan_t *p);

/* --- tenants.c ----------------------------------------------------------- */

/* Declare cfg's tenants and the trace's others in the scheduler. */
ms_status_t ms__sim_tenants_init(ms__sim_t *s);
/* The scheduler's tenant of trace job i. */
static inline const char *ms__sim_tenant_name(const ms__sim_t *s, size_t i)
{
    const ms_job_req_t *x = s->tr->req != NULL ? &s->tr->req[i] : NULL;

    return x != NULL && x->tenant > 0 ? s->tr->tenants[x->tenant - 1] : NULL;
}
/* Integrate each tenant's usage from s->last_t to t. */
void ms__sim_tenants_advance(ms__sim_t *s, double t);
/* A job of tenant k arrives (before its submit): a reclaim may begin. */
void ms__sim_tenants_arrive(ms__sim_t *s, int k);
/* After trace job jid's submit (slot): counts it in over_limit when it is
 * larger than its tenant's limits (ms_sched_tenant_check_slot). */
void ms__sim_tenants_over_limit(ms__sim_t *s, int32_t jid, int32_t slot);
/* Fill s->m's tenant metrics at the end of the run. */
ms_status_t ms__sim_tenants_finish(ms__sim_t *s);

/* --- metrics.c ----------------------------------------------------------- */

/* A lower bound on a cluster of several node kinds: the latest
 * arrival + duration, and the first arrival plus the trace's work in GPU
 * fractions (each job at its smallest share of a GPU on any model it can
 * run on) over the GPU count. */
double ms__lower_bound_mixed(const ms__sim_t *s, const uint8_t *skip);
/* Fill the waits, means, percentiles, FragCost, utilisation and lower
 * bound of s->m at the end of the run. */
ms_status_t ms__sim_finish_metrics(ms__sim_t *s);

#endif
