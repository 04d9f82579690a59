/* bench_queue.c - `migsched bench`: what one scheduling event costs as the
 * queue grows (issue 25: "a decision's cost grows with neither the cluster
 * nor the queue").
 *
 * A cluster of N A100-40GB in nodes of 8 under the default queue (EASY
 * after the 3600 s backfill bound) in a steady state with `depth` jobs
 * waiting: jobs end in the order of their expected ends (start + duration,
 * durations lognormal with mean 600 s and sigma 1, the estimate exact), and
 * after each end as many jobs arrive as started, so the queue keeps its
 * depth; the waiting jobs were submitted 4,000 s earlier (waited_s), so the
 * head is past the bound and every pass that passes it keeps its
 * reservation. The classic five profiles, uniformly. With depth 0 an
 * arrival comes whenever the cluster has room left (busy compute below
 * 90%): nothing waits. Each event (an ms_sched_finished, or an
 * ms_sched_submit, and the scheduling pass it runs) is timed alone; jobs
 * are forgotten when they end. The scheduler's counters say what the
 * passes did per event (placements offered to the policy, GPUs evaluated
 * for reservations, blocked heads skipped, calm passes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "core/evheap.h"
#include "migsched/rng.h"
#include "migsched/sched.h"

#define MEASURE_BUDGET_NS 3000000000LL
#define WAITED_S 4000.0

static const char *const QSIZES[] = { "1g", "2g", "3g", "4g", "7g" };

typedef struct qb {
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
    ms_rng_t rng;
    double now;
    ms__evheap_t ends;             /* running slots by expected end */
    double *dur;                   /* [capdur] by slot */
    int32_t capdur;
    long started;                  /* STARTs of the last call (arrivals to make) */
    const ms_geom_t *geom;
    long busy, cap;                /* busy compute slices, of the cluster's */
    ms_status_t err;
} qb_t;

static double lognormal_600(ms_rng_t *r)
{
    double u1, u2;

    do
        u1 = ms_rng_unit(r);
    while (u1 <= 0.0);
    u2 = ms_rng_unit(r);
    /* mean exp(mu + 1/2) = 600 with sigma 1 */
    return exp(log(600.0) - 0.5 + sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static ms_status_t dur_room(qb_t *b, int32_t slot)
{
    if (slot >= b->capdur) {
        int32_t cap = b->capdur ? b->capdur : 4096;
        double *v;

        while (cap <= slot)
            cap *= 2;
        if ((v = realloc(b->dur, (size_t)cap * sizeof(*v))) == NULL)
            return MS_ENOMEM;
        b->dur = v;
        b->capdur = cap;
    }
    return MS_OK;
}

/* The executor: a START is a job that runs until now + its duration. */
static ms_status_t qb_plan(void *ctx, const ms_sched_plan_t *p)
{
    qb_t *b = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        int32_t j = p->ops[i].op.job;

        if (p->ops[i].op.kind == MS_OP_STOP)
            b->busy -= ms_geom_profile(b->geom, p->ops[i].op.prof)->cslices;
        if (p->ops[i].op.kind != MS_OP_START)
            continue;
        b->busy += ms_geom_profile(b->geom, p->ops[i].op.prof)->cslices;
        if (j < 0 || j >= b->capdur || ms__evheap_set(&b->ends, j, p->now + b->dur[j]) != 0) {
            b->err = MS_ENOMEM;
            return MS_ENOMEM;
        }
        b->started++;
    }
    return MS_OK;
}

static void qb_free(qb_t *b)
{
    ms_sched_destroy(b->s);
    ms_cluster_spec_destroy(b->cs);
    ms__evheap_fini(&b->ends);
    free(b->dur);
}

static ms_status_t qb_create(qb_t *b, const ms_geom_t *g, const ms_policy_ops_t *pol, long ngpus,
                             uint64_t seed)
{
    ms_sched_cfg_t cfg;
    ms_diag_t d;
    ms_status_t st;

    memset(b, 0, sizeof(*b));
    b->geom = g;
    b->cap = ngpus * ms_geom_compute(g);
    ms_rng_seed(&b->rng, seed);
    ms__evheap_init(&b->ends);
    if ((st = ms_cluster_spec_create(&b->cs)) != MS_OK ||
        (st = ms_cluster_spec_add_gpus(b->cs, "n", (int)ngpus, 8, g, MS_NODE_MIG, 0)) != MS_OK)
        return st;
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = pol;
    cfg.nodes = ms_cluster_spec_nodes(b->cs);
    cfg.nnodes = ms_cluster_spec_nnodes(b->cs);
    cfg.exec.ctx = b;
    cfg.exec.plan = qb_plan;
    return ms_sched_create(&cfg, 0.0, &b->s, &d);
}

/* One arrival; *ns its time. */
static ms_status_t qb_arrive(qb_t *b, double waited, int64_t *ns)
{
    ms_sched_req_t q;
    int32_t slot = ms_sched_next_slot(b->s);
    int64_t t0;
    ms_diag_t d;
    ms_status_t st;

    memset(&q, 0, sizeof(q));
    q.profile = QSIZES[ms_rng_below(&b->rng, 5)];
    q.migratable = true;
    if ((st = dur_room(b, slot)) != MS_OK)
        return st;
    b->dur[slot] = lognormal_600(&b->rng);
    q.estimate_s = b->dur[slot];
    q.waited_s = waited;
    t0 = ms__bench_now_ns();
    st = ms_sched_submit(b->s, &q, b->now, &slot, &d);
    *ns = ms__bench_now_ns() - t0;
    return st != MS_OK ? st : b->err;
}

/* The earliest end; *ns its time. */
static ms_status_t qb_end(qb_t *b, int64_t *ns)
{
    const ms__ev_t *e = ms__evheap_top(&b->ends);
    int32_t slot;
    int64_t t0;
    ms_status_t st;

    if (e == NULL)
        return MS_ENOENT;
    slot = e->id;
    if (e->t > b->now)
        b->now = e->t;
    ms__evheap_pop(&b->ends);
    t0 = ms__bench_now_ns();
    st = ms_sched_finished(b->s, slot, b->now);
    *ns = ms__bench_now_ns() - t0;
    if (st == MS_OK)
        st = ms_sched_forget(b->s, slot);
    return st != MS_OK ? st : b->err;
}

static double busy_frac(const qb_t *b)
{
    return (double)b->busy / (double)b->cap;
}

/* Fill: the cluster full (or to 90% with depth 0), then depth waiting, at
 * the time the cluster filled. (The clock went on 10 ms an arrival for the
 * waiting ones too: 100,000 of them put it 1,000 s past the jobs that
 * started, so at 10,000 GPUs every measured end was of a job past its
 * estimate and every reservation was "now", a state no simulation with
 * exact estimates reaches; issue 25, docs/performance.md.) */
static ms_status_t qb_fill(qb_t *b, long depth)
{
    ms_sched_stats_t x;
    int64_t ns;
    ms_status_t st;
    long n = 0;

    for (;;) {
        ms_sched_stats(b->s, &x);
        if (depth == 0 ? (n % 64 == 0 && busy_frac(b) >= 0.9) || x.waiting > 0 : x.waiting >= depth)
            break;
        if (x.waiting == 0)
            b->now += 0.01;
        if ((st = qb_arrive(b, depth > 0 && x.waiting > 0 ? WAITED_S : 0.0, &ns)) != MS_OK)
            return st;
        n++;
    }
    return MS_OK;
}

/* Room left for an arrival with depth 0: nothing waits and busy compute is
 * under 90%. */
static bool room_left(const qb_t *b)
{
    ms_sched_stats_t x;

    ms_sched_stats(b->s, &x);
    return x.waiting == 0 && busy_frac(b) < 0.9;
}

/* One step of the steady state: an end and the arrivals that keep the
 * depth (or, with depth 0 and room left, one arrival). Every event's time
 * goes to lat (when given). */
static ms_status_t qb_step(qb_t *b, long depth, int64_t *lat, long *n, long cap)
{
    int64_t ns;
    long k;
    ms_status_t st;

    if (depth == 0 && room_left(b)) {
        st = qb_arrive(b, 0.0, &ns);
        if (lat != NULL && *n < cap)
            lat[(*n)++] = ns;
        return st;
    }
    b->started = 0;
    if ((st = qb_end(b, &ns)) != MS_OK)
        return st;
    if (lat != NULL && *n < cap)
        lat[(*n)++] = ns;
    for (k = depth > 0 ? b->started : 0; k > 0 && st == MS_OK; k--) {
        st = qb_arrive(b, WAITED_S, &ns);
        if (lat != NULL && *n < cap)
            lat[(*n)++] = ns;
    }
    return st;
}

/* The measured events, apart (and never inlined) so that
 * `valgrind --tool=callgrind --toggle-collect=qb_measure` counts their
 * instructions alone (docs/performance.md). */
__attribute__((noinline)) static ms_status_t qb_measure(qb_t *b, long depth, int64_t *lat,
                                                        long *n, long iters)
{
    int64_t t0 = ms__bench_now_ns();
    ms_status_t st = MS_OK;

    while (*n < iters && st == MS_OK && !(*n >= 200 && ms__bench_now_ns() - t0 > MEASURE_BUDGET_NS))
        st = qb_step(b, depth, lat, n, iters);
    return st;
}

ms_status_t ms__bench_queue(const bopts_t *o, const ms_geom_t *g, const ms_policy_ops_t *pol,
                            long ngpus, long depth, long iters, queue_res_t *r)
{
    qb_t b;
    int64_t *lat = NULL, t0;
    long n = 0, w;
    ms_sched_stats_t a, z;
    ms_status_t st;

    memset(r, 0, sizeof(*r));
    snprintf(r->policy, sizeof(r->policy), "%s", pol->name);
    r->ngpus = ngpus;
    r->depth = depth;
    t0 = ms__bench_now_ns();
    if ((st = qb_create(&b, g, pol, ngpus, o->seed)) != MS_OK || (st = qb_fill(&b, depth)) != MS_OK)
        goto out;
    /* a steady state first (the ends reach the jobs placed while filling) */
    for (w = 0; w < iters / 4 && st == MS_OK; w++)
        st = qb_step(&b, depth, NULL, &n, 0);
    r->fill_s = (double)(ms__bench_now_ns() - t0) / 1e9;
    if (st != MS_OK)
        goto out;
    if ((lat = malloc((size_t)iters * sizeof(*lat))) == NULL) {
        st = MS_ENOMEM;
        goto out;
    }
    ms_sched_stats(b.s, &a);
    if ((st = qb_measure(&b, depth, lat, &n, iters)) != MS_OK)
        goto out;
    ms_sched_stats(b.s, &z);
    r->events = n;
    r->lat = ms__bench_lat_summary(lat, n);
    r->place_calls = n > 0 ? (double)(z.place_calls - a.place_calls) / (double)n : 0.0;
    r->resv_evals = n > 0 ? (double)(z.resv_evals - a.resv_evals) / (double)n : 0.0;
    r->skipped = n > 0 ? (double)(z.skipped - a.skipped) / (double)n : 0.0;
    r->calm = n > 0 ? (double)(z.calm_passes - a.calm_passes) / (double)n : 0.0;
    r->waiting = z.waiting;
    r->running = z.running;
out:
    free(lat);
    qb_free(&b);
    r->status = (int)st;
    return st;
}
