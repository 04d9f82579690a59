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

#include "migsched/sim.h"

/* Lower bound of algorithms.md §7 over the jobs with skip[i] == 0 (skip may
 * be NULL); memory == false leaves out the memory-slice term (time-slicing
 * does not partition memory). O(n): the trace is sorted by arrival. */
double ms__lower_bound(const ms_trace_t *t, int ngpus, const uint8_t *skip, bool memory);

/* Nearest-rank percentile (p in 0..100) of a sorted array of n > 0 values. */
double ms__percentile(const double *sorted, size_t n, double p);

/* --- the simulator's state ----------------------------------------------- */

/* Job states. */
enum { MS__J_PENDING = 0, MS__J_WAITING, MS__J_RUNNING, MS__J_DONE, MS__J_REJECTED };

/* Who produced a plan (decides which ops are legal and what is counted). */
enum { MS__PK_SETUP = 0, MS__PK_PLACE, MS__PK_ROOM, MS__PK_FINISH, MS__PK_IDLE, MS__PK_SIM };

#define MS__SIM_NCLASS_MAX (MS_MAX_PROFILES + 1)   /* one queue per profile, plus gangs */
#define MS__SIM_MAX_CREATED 64                     /* GIs remembered per plan */
#define MS__SIM_FX 1e12                            /* FragCost fixed-point scale */

typedef struct ms__sim_ev {
    double t;
    uint64_t seq;
    int32_t job;
} ms__sim_ev_t;

typedef struct ms__sim_job {
    double rem, upd, hold, rate;
    double place_t, end_t;
    int32_t next;        /* queue link */
    uint32_t inst;       /* first slot in the instance pool */
    int16_t ninst;
    uint8_t st;
    uint8_t dirty;       /* rate must be recomputed and the finish rescheduled */
} ms__sim_job_t;

typedef struct ms__sim_inst {
    double begin;
    int32_t gpu;
    int8_t start;
    int8_t prof;
} ms__sim_inst_t;

typedef struct ms__sim {
    const ms_sim_cfg_t *cfg;
    const ms_trace_t *tr;
    const ms_geom_t *g;
    const ms_policy_ops_t *pol;
    void *self;
    ms_cluster_t *c;
    ms_metrics_t *m;
    ms_diag_t *diag;
    int C, W, np, nclass, gpn;

    ms__sim_job_t *jobs;
    ms__sim_inst_t *pool;

    ms__sim_ev_t *heap;
    int32_t *pos;             /* [njobs] slot in the heap, -1 if none */
    size_t hn, hcap;
    uint64_t seq;

    int32_t qhead[MS__SIM_NCLASS_MAX], qtail[MS__SIM_NCLASS_MAX];
    long waiting;
    int nwait[MS_MAX_PROFILES];

    double now;
    int *touched;
    int ntouched;
    uint32_t *tmark;
    uint32_t stamp;
    uint16_t *persist;        /* per GPU: GIs kept after their job ends */

    /* plan context */
    int32_t placing;
    int ncreated;
    int32_t created_gpu[MS__SIM_MAX_CREATED];
    int8_t created_start[MS__SIM_MAX_CREATED];

    /* aggregates */
    int64_t *fcost;           /* FragCost per state, fixed point (MS__SIM_FX) */
    int64_t sum_frag;         /* exact: no drift over millions of events */
    long sum_useful;
    long nbusy[256];
    double area_frag, area_util, last_t, t0;

    ms_plan_t plan;
    size_t done, progress_step, next_progress;
    long changes;             /* placements and policy plans applied */
} ms__sim_t;

/* --- heap.c: running jobs by (finish time, seq) -------------------------- */

/* Insert job or move it to its new finish time t. */
ms_status_t ms__sim_heap_update(ms__sim_t *s, double t, int32_t job);
/* Remove the earliest entry (the heap must not be empty). */
void ms__sim_heap_pop(ms__sim_t *s);

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
/* Add (sign +1) or remove (-1) GPU g's share of the aggregates. */
void ms__sim_contrib(ms__sim_t *s, int g, int sign);
/* Integrate the aggregates up to t and move the clock to t. */
void ms__sim_advance(ms__sim_t *s, double t);
/* Report one sample to cfg->on_sample (which must be set). */
void ms__sim_sample(const ms__sim_t *s, double t);

/* --- apply.c: plans -> job events ---------------------------------------- */

/* Report the end of one execution segment to cfg->on_segment, if set. */
void ms__sim_emit_segment(const ms__sim_t *s, int32_t jid, const ms__sim_inst_t *in);
/* Apply s->plan (produced by kind, MS__PK_*) op by op, then bring rates up
 * to date. An illegal op is MS_ESTATE with a diagnostic. */
ms_status_t ms__sim_run_plan(ms__sim_t *s, int kind);

/* --- queue.c: queues and the scheduling pass ----------------------------- */

/* Append job j to its class's queue; it is waiting from now on. */
void ms__sim_enqueue(ms__sim_t *s, int32_t j);
/* A scheduling pass, then on_idle (if the policy has it) and, if that
 * changed the layout, another pass. */
ms_status_t ms__sim_schedule(ms__sim_t *s);

/* --- metrics.c ----------------------------------------------------------- */

/* Fill the waits, means, percentiles, FragCost, utilisation and lower
 * bound of s->m at the end of the run. */
ms_status_t ms__sim_finish_metrics(ms__sim_t *s);

#endif
