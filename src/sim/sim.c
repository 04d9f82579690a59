/* sim.c - the discrete-event simulator (see sim.h and docs/simulator.md).
 *
 * Events: arrivals come from the sorted trace (a cursor, no heap entry);
 * completions sit in an indexed binary heap ordered by (time, seq) with one
 * entry per running job. When a job's rate changes its entry moves in place
 * (decrease/increase-key), so the heap holds no stale events and a rate
 * change costs O(jobs on the GPU x log running). (A first version used lazy
 * invalidation with version counters; the stale entries made the heap grow
 * to many times the running set and popping dominated the profile.) At
 * equal times completions come before arrivals, and arrivals before the
 * idle wake-ups of on_idle policies.
 *
 * Progress: each running job keeps (rem, upd, hold, rate): rem seconds of
 * exact-size work were left at time upd; it makes no progress before hold
 * (GI creation, migration); from max(upd, hold) on it progresses at rate.
 *
 * Queue: one FIFO per class (each profile, plus one for gangs). A pass
 * repeatedly takes the unblocked class whose head arrived first; a class
 * whose head does not fit is blocked for the rest of the pass, since
 * placement depends only on the cluster state and the job's profile. A pass
 * is O(classes) per placement, not O(queue).
 *
 * Aggregates (FragCost sum, useful compute, GPUs per busy-compute value) are
 * updated per op from the GPUs the op touches, never by scanning GPUs.
 */
#include "migsched/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

enum { J_PENDING = 0, J_WAITING, J_RUNNING, J_DONE, J_REJECTED };

/* Who produced a plan (decides which ops are legal and what is counted). */
enum { PK_SETUP = 0, PK_PLACE, PK_ROOM, PK_FINISH, PK_IDLE, PK_SIM };
static const char *const PK_NAME[] = { "setup", "place", "make_room", "on_finish",
                                       "on_idle", "simulator" };
static const char *const OP_NAME[] = { "?", "CREATE", "DESTROY", "START", "MOVE", "STOP" };

#define NCLASS_MAX (MS_MAX_PROFILES + 1)
#define MAX_CREATED 64

typedef struct ev {
    double t;
    uint64_t seq;
    int32_t job;
} ev_t;

typedef struct sjob {
    double rem, upd, hold, rate;
    double place_t, end_t;
    int32_t next;        /* queue link */
    uint32_t inst;       /* first slot in the instance pool */
    int16_t ninst;
    uint8_t st;
    uint8_t dirty;       /* rate must be recomputed and the finish rescheduled */
} sjob_t;

typedef struct sinst {
    double begin;
    int32_t gpu;
    int8_t start;
    int8_t prof;
} sinst_t;

typedef struct sim {
    const ms_sim_cfg_t *cfg;
    const ms_trace_t *tr;
    const ms_geom_t *g;
    const ms_policy_ops_t *pol;
    void *self;
    ms_cluster_t *c;
    ms_metrics_t *m;
    ms_diag_t *diag;
    int C, W, np, nclass, gpn;

    sjob_t *jobs;
    sinst_t *pool;

    ev_t *heap;
    int32_t *pos;             /* [njobs] slot in the heap, -1 if none */
    size_t hn, hcap;
    uint64_t seq;

    int32_t qhead[NCLASS_MAX], qtail[NCLASS_MAX];
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
    int32_t created_gpu[MAX_CREATED];
    int8_t created_start[MAX_CREATED];

    /* aggregates */
    int64_t *fcost;           /* FragCost per state, fixed point (FX) */
    int64_t sum_frag;         /* exact: no drift over millions of events */
    long sum_useful;
    long nbusy[256];
    double area_frag, area_util, last_t, t0;

    ms_plan_t plan;
    size_t done, progress_step, next_progress;
    long changes;             /* placements and policy plans applied */
} sim_t;

#define FX 1e12               /* FragCost fixed-point scale */

void ms_sim_cfg_defaults(ms_sim_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    ms_policy_cfg_defaults(&cfg->pcfg);
    cfg->ngpus = 1;
    cfg->gpus_per_node = 0;
    cfg->index_mode = MS_INDEX_BUCKET;
    cfg->queue = MS_QUEUE_BACKFILL;
    cfg->backfill_bound_s = 3600.0;
    cfg->beta = 0.05;
    cfg->create_s = 2.0;
    cfg->migrate_s = 10.0;
    cfg->sample_every_s = 0.0;
}

/* --- heap ---------------------------------------------------------------- */

/* An indexed binary heap of running jobs keyed by (finish time, seq): a job
 * sits in it at most once (pos[job] is its slot), so a rate change is a
 * decrease/increase-key and the heap never holds stale entries. seq is
 * renewed on every update: ties go to the job scheduled first. */

static int ev_less(const ev_t *a, const ev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void heap_set(sim_t *s, size_t i, const ev_t *e)
{
    s->heap[i] = *e;
    s->pos[e->job] = (int32_t)i;
}

static void sift_up(sim_t *s, size_t i, ev_t e)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;

        if (!ev_less(&e, &s->heap[p]))
            break;
        heap_set(s, i, &s->heap[p]);
        i = p;
    }
    heap_set(s, i, &e);
}

static void sift_down(sim_t *s, size_t i, ev_t e)
{
    size_t n = s->hn;

    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const ev_t *best = &e;

        if (l < n && ev_less(&s->heap[l], best)) {
            m = l;
            best = &s->heap[l];
        }
        if (r < n && ev_less(&s->heap[r], best))
            m = r;
        if (m == i)
            break;
        heap_set(s, i, &s->heap[m]);
        i = m;
    }
    heap_set(s, i, &e);
}

/* Insert job or move it to its new finish time. */
static ms_status_t heap_update(sim_t *s, double t, int32_t job)
{
    ev_t e;
    int32_t at = s->pos[job];

    e.t = t;
    e.seq = s->seq++;
    e.job = job;
    if (at < 0) {
        if (s->hn == s->hcap) {
            size_t cap = s->hcap ? s->hcap * 2 : 1024;
            ev_t *h = realloc(s->heap, cap * sizeof(*h));

            if (h == NULL)
                return MS_ENOMEM;
            s->heap = h;
            s->hcap = cap;
        }
        sift_up(s, s->hn++, e);
    } else if (ev_less(&e, &s->heap[at])) {
        sift_up(s, (size_t)at, e);
    } else {
        sift_down(s, (size_t)at, e);
    }
    return MS_OK;
}

static void heap_pop(sim_t *s)
{
    ev_t last;

    s->pos[s->heap[0].job] = -1;
    last = s->heap[--s->hn];
    if (s->hn > 0)
        sift_down(s, 0, last);
}

/* --- rates and progress -------------------------------------------------- */

static double gpu_rate(const sim_t *s, int g)
{
    const ms_gpu_t *gpu = &s->c->gpus[g];
    int i;

    if (s->c->share == MS_SHARE_TIMESLICE) {
        double sum = 0.0;

        for (i = 0; i < gpu->ninst; i++)
            if (gpu->inst[i].job >= 0)
                sum += ms_geom_profile(s->g, gpu->inst[i].prof)->cslices;
        sum /= s->C;
        return sum > 1.0 ? 1.0 / sum : 1.0;
    } else {
        int others = ms_gpu_running(gpu) - 1;

        if (others < 0)
            others = 0;
        return 1.0 / (1.0 + s->cfg->beta * others);
    }
}

static double job_rate(const sim_t *s, int32_t j)
{
    const sjob_t *sj = &s->jobs[j];
    double r = 1.0;
    int i;

    for (i = 0; i < sj->ninst; i++) {
        double x = gpu_rate(s, s->pool[sj->inst + (uint32_t)i].gpu);

        if (x < r)
            r = x;
    }
    return r;
}

static void settle(sim_t *s, sjob_t *j)
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

static ms_status_t reschedule(sim_t *s, int32_t jid)
{
    sjob_t *j = &s->jobs[jid];
    double from = j->upd > j->hold ? j->upd : j->hold;

    return heap_update(s, from + j->rem / j->rate, jid);
}

static void touch(sim_t *s, int g)
{
    if (s->tmark[g] != s->stamp) {
        s->tmark[g] = s->stamp;
        s->touched[s->ntouched++] = g;
    }
}

/* Recompute the rate of every job on the touched GPUs. */
static ms_status_t update_rates(sim_t *s)
{
    int t, i;
    ms_status_t st;

    for (t = 0; t < s->ntouched; t++) {
        const ms_gpu_t *gpu = &s->c->gpus[s->touched[t]];

        for (i = 0; i < gpu->ninst; i++) {
            int32_t jid = gpu->inst[i].job;
            sjob_t *j;
            double r;

            if (jid < 0)
                continue;
            j = &s->jobs[jid];
            r = job_rate(s, jid);
            if (!j->dirty && r == j->rate)
                continue;
            settle(s, j);
            j->rate = r;
            j->dirty = 0;
            if ((st = reschedule(s, jid)) != MS_OK)
                return st;
        }
    }
    s->ntouched = 0;
    if (++s->stamp == 0) {
        memset(s->tmark, 0, (size_t)s->c->ngpus * sizeof(*s->tmark));
        s->stamp = 1;
    }
    return MS_OK;
}

/* --- aggregates ---------------------------------------------------------- */

static int gpu_useful(const sim_t *s, int g)
{
    const ms_gpu_t *gpu = &s->c->gpus[g];
    int i, u = 0;

    for (i = 0; i < gpu->ninst; i++) {
        int32_t j = gpu->inst[i].job;

        if (j >= 0)
            u += ms_geom_profile(s->g, s->tr->jobs[j].gang > 1 ? gpu->inst[i].prof
                                                               : s->tr->jobs[j].prof)->cslices;
    }
    return u > s->C ? s->C : u;
}

static void contrib(sim_t *s, int g, int sign)
{
    const ms_gpu_t *gpu = &s->c->gpus[g];

    s->sum_frag += sign * s->fcost[gpu->state];
    s->sum_useful += sign * gpu_useful(s, g);
    s->nbusy[gpu->busy] += sign;
}

static void advance(sim_t *s, double t)
{
    if (t > s->last_t) {
        s->area_frag += (double)s->sum_frag / FX * (t - s->last_t);
        s->area_util += (double)s->sum_useful * (t - s->last_t);
        s->last_t = t;
    }
    s->now = t;
}

static void sample(sim_t *s, double t)
{
    int b, lazy = 0;
    double thr = s->cfg->pcfg.lb_threshold;

    for (b = 0; b < 256; b++)
        if (s->nbusy[b] > 0 && (double)b / s->C < thr)
            lazy += (int)s->nbusy[b];
    s->cfg->on_sample(s->cfg->ctx, t, (double)s->sum_frag / FX / s->c->ngpus,
                      (double)s->sum_useful / ((double)s->C * s->c->ngpus), lazy,
                      s->c->ngpus - lazy, s->waiting);
}

/* --- plans --------------------------------------------------------------- */

static ms_status_t bad_op(sim_t *s, int kind, int i, const ms_op_t *op, const char *why)
{
    ms_diag_set(s->diag, NULL, 0, "policy",
                "policy %s: op %d (%s job %d gpu %d start %d) of its %s plan at t=%.3f: %s",
                s->pol->name, i, op->kind <= MS_OP_STOP ? OP_NAME[op->kind] : "?",
                (int)op->job, (int)op->gpu, (int)op->start, PK_NAME[kind], s->now, why);
    return MS_ESTATE;
}

static bool created_here(const sim_t *s, int g, int start)
{
    int i;

    for (i = 0; i < s->ncreated; i++)
        if (s->created_gpu[i] == g && s->created_start[i] == start)
            return true;
    return false;
}

static void emit_segment(sim_t *s, int32_t jid, const sinst_t *in)
{
    ms_segment_t seg;

    if (s->cfg->on_segment == NULL)
        return;
    seg.job = jid;
    seg.gpu = in->gpu;
    seg.start = in->start;
    seg.prof = in->prof;
    seg.begin_s = in->begin;
    seg.end_s = s->now;
    s->cfg->on_segment(s->cfg->ctx, &seg);
}

static ms_status_t apply_one(sim_t *s, int kind, int i, const ms_op_t *op)
{
    ms_cluster_t *c = s->c;
    int g = op->gpu, g2 = -1, k;
    sjob_t *j = NULL;
    ms_status_t st;
    uint32_t slot = 0;

    if (g < 0 || g >= c->ngpus)
        return bad_op(s, kind, i, op, "no such GPU");
    if (op->kind == MS_OP_START || op->kind == MS_OP_MOVE || op->kind == MS_OP_STOP) {
        if (op->job < 0 || (size_t)op->job >= s->tr->n)
            return bad_op(s, kind, i, op, "no such job");
        j = &s->jobs[op->job];
    }
    switch (op->kind) {
    case MS_OP_CREATE:
    case MS_OP_DESTROY:
        if (op->start < 0 || op->start >= s->W)
            return bad_op(s, kind, i, op, "bad start");
        break;
    case MS_OP_START:
        if (kind != PK_PLACE || op->job != s->placing)
            return bad_op(s, kind, i, op, "only place() may start a job, and only its own");
        if (j->st == J_RUNNING && j->ninst >= s->tr->jobs[op->job].gang)
            return bad_op(s, kind, i, op, "the job already holds all its instances");
        if (j->st != J_WAITING && j->st != J_RUNNING)
            return bad_op(s, kind, i, op, "the job is not waiting");
        if (c->share == MS_SHARE_MIG && (op->start < 0 || op->start >= s->W))
            return bad_op(s, kind, i, op, "bad start");
        break;
    case MS_OP_MOVE:
        if (j->st != J_RUNNING)
            return bad_op(s, kind, i, op, "the job is not running");
        if (op->from_gpu < 0 || op->from_gpu >= c->ngpus)
            return bad_op(s, kind, i, op, "no such source GPU");
        for (k = 0; k < j->ninst; k++) {
            const sinst_t *in = &s->pool[j->inst + (uint32_t)k];

            if (in->gpu == op->from_gpu && in->start == op->from_start)
                break;
        }
        if (k == j->ninst)
            return bad_op(s, kind, i, op, "the job does not run at the source");
        slot = j->inst + (uint32_t)k;
        if (op->from_gpu != g)
            g2 = op->from_gpu;
        break;
    case MS_OP_STOP:
        if (kind != PK_SIM)
            return bad_op(s, kind, i, op, "STOP is the simulator's");
        break;
    default:
        return bad_op(s, kind, i, op, "unknown op");
    }

    contrib(s, g, -1);
    if (g2 >= 0)
        contrib(s, g2, -1);
    st = ms_cluster_apply_op(c, op);
    contrib(s, g, +1);
    if (g2 >= 0)
        contrib(s, g2, +1);
    if (st != MS_OK)
        return bad_op(s, kind, i, op, "the cluster refused it (overlap, illegal start, "
                                      "busy or missing instance)");

    switch (op->kind) {
    case MS_OP_CREATE:
        if (kind != PK_SETUP)
            s->m->reconfigurations++;
        s->persist[g] = (uint16_t)(s->persist[g] | (1u << op->start));
        if (s->ncreated < MAX_CREATED) {
            s->created_gpu[s->ncreated] = g;
            s->created_start[s->ncreated] = op->start;
            s->ncreated++;
        }
        break;
    case MS_OP_DESTROY:
        if (kind != PK_SETUP)
            s->m->reconfigurations++;
        s->persist[g] = (uint16_t)(s->persist[g] & ~(1u << op->start));
        break;
    case MS_OP_START: {
        sinst_t *in;
        const ms_gpu_t *gpu = &c->gpus[g];
        int ii = c->share == MS_SHARE_MIG ? ms_gpu_find_inst(gpu, op->start)
                                          : ms_gpu_find_job(gpu, op->job);

        if (j->st == J_WAITING) {
            j->st = J_RUNNING;
            j->place_t = s->now;
            j->rem = s->tr->jobs[op->job].duration;
            j->upd = j->hold = s->now;
            j->rate = 0.0;
            j->ninst = 0;
        }
        in = &s->pool[j->inst + (uint32_t)j->ninst++];
        in->gpu = g;
        in->start = op->start;
        in->prof = ii >= 0 ? gpu->inst[ii].prof : op->prof;
        in->begin = s->now;
        if (c->share == MS_SHARE_MIG && created_here(s, g, op->start)) {
            /* a GI made for this job: it waits for the creation, and the
             * GI goes when the job ends (dynamic partitioning) */
            if (s->now + s->cfg->create_s > j->hold)
                j->hold = s->now + s->cfg->create_s;
            s->persist[g] = (uint16_t)(s->persist[g] & ~(1u << op->start));
        }
        j->dirty = 1;
        touch(s, g);
        break;
    }
    case MS_OP_MOVE: {
        sinst_t *in = &s->pool[slot];
        const ms_gpu_t *gpu = &c->gpus[g];
        int ii = ms_gpu_find_inst(gpu, op->start);

        emit_segment(s, op->job, in);
        settle(s, j);
        if (op->bbm) {
            s->persist[g] = (uint16_t)(s->persist[g] & ~(1u << op->from_start));
            s->persist[g] = (uint16_t)(s->persist[g] & ~(1u << op->start));
            s->m->migrations_bbm++;
        } else if (created_here(s, g, op->start)) {
            s->persist[g] = (uint16_t)(s->persist[g] & ~(1u << op->start));
        }
        in->gpu = g;
        in->start = op->start;
        in->prof = ii >= 0 ? gpu->inst[ii].prof : op->prof;
        in->begin = s->now;
        if (s->now + s->cfg->migrate_s > j->hold)
            j->hold = s->now + s->cfg->migrate_s;
        s->m->migrations++;
        j->dirty = 1;
        touch(s, g);
        touch(s, op->from_gpu);
        break;
    }
    case MS_OP_STOP:
        touch(s, g);
        break;
    default:
        break;
    }
    return MS_OK;
}

/* Apply s->plan op by op, then bring rates up to date. */
static ms_status_t run_plan(sim_t *s, int kind)
{
    int i;
    ms_status_t st;

    s->ncreated = 0;
    if (kind != PK_SIM && kind != PK_PLACE && s->plan.n > 0)
        s->changes++;
    for (i = 0; i < s->plan.n; i++)
        if ((st = apply_one(s, kind, i, &s->plan.ops[i])) != MS_OK)
            return st;
    if (kind == PK_IDLE) {
        /* layout switches: nodes whose GIs this plan changed */
        int32_t last_node = -1;

        for (i = 0; i < s->plan.n; i++) {
            const ms_op_t *op = &s->plan.ops[i];
            int32_t node = op->gpu / s->gpn;

            if ((op->kind == MS_OP_CREATE || op->kind == MS_OP_DESTROY) && node != last_node) {
                s->m->layout_switches++;
                last_node = node;
            }
        }
    }
    return update_rates(s);
}

/* --- queue --------------------------------------------------------------- */

static int job_class(const sim_t *s, int32_t j)
{
    return s->tr->jobs[j].gang > 1 ? s->np : s->tr->jobs[j].prof;
}

static void enqueue(sim_t *s, int32_t j)
{
    int k = job_class(s, j);

    s->jobs[j].next = -1;
    s->jobs[j].st = J_WAITING;
    if (s->qtail[k] >= 0)
        s->jobs[s->qtail[k]].next = j;
    else
        s->qhead[k] = j;
    s->qtail[k] = j;
    s->waiting++;
    s->nwait[s->tr->jobs[j].prof]++;
}

static void dequeue_head(sim_t *s, int k)
{
    int32_t j = s->qhead[k];

    s->qhead[k] = s->jobs[j].next;
    if (s->qhead[k] < 0)
        s->qtail[k] = -1;
    s->waiting--;
    s->nwait[s->tr->jobs[j].prof]--;
}

static ms_status_t try_place(sim_t *s, int32_t j)
{
    ms_status_t st;

    ms_plan_clear(&s->plan);
    st = s->pol->place(s->self, s->c, &s->tr->jobs[j], &s->plan);
    if (st == MS_ENOFIT)
        return st;
    if (st != MS_OK) {
        ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: place(job %d) failed: %s",
                    s->pol->name, (int)j, ms_strerror(st));
        return st;
    }
    s->placing = j;
    st = run_plan(s, PK_PLACE);
    s->placing = -1;
    if (st != MS_OK)
        return st;
    if (s->jobs[j].st != J_RUNNING ||
        s->jobs[j].ninst != (s->tr->jobs[j].gang > 1 ? s->tr->jobs[j].gang : 1)) {
        ms_diag_set(s->diag, NULL, 0, "policy",
                    "policy %s: place(job %d) answered OK but started %d of its %d instances",
                    s->pol->name, (int)j, (int)s->jobs[j].ninst, (int)s->tr->jobs[j].gang);
        return MS_ESTATE;
    }
    return MS_OK;
}

static ms_status_t sched_pass(sim_t *s)
{
    bool blocked[NCLASS_MAX];
    bool tried_room = false;
    int k;
    ms_status_t st;

    memset(blocked, 0, sizeof(blocked));
    for (;;) {
        int best = -1, head = -1;
        int32_t j;

        for (k = 0; k < s->nclass; k++) {
            if (s->qhead[k] < 0)
                continue;
            if (head < 0 || s->qhead[k] < s->qhead[head])
                head = k;
            if (!blocked[k] && (best < 0 || s->qhead[k] < s->qhead[best]))
                best = k;
        }
        if (best < 0)
            break;
        if (best != head) {
            /* this start would pass the overall head */
            if (s->cfg->queue == MS_QUEUE_FIFO)
                break;
            if (s->now - s->tr->jobs[s->qhead[head]].arrival > s->cfg->backfill_bound_s)
                break;
        }
        j = s->qhead[best];
        st = try_place(s, j);
        if (st == MS_OK) {
            dequeue_head(s, best);
            s->changes++;
            continue;
        }
        if (st != MS_ENOFIT)
            return st;
        if (best == head && !tried_room && s->pol->make_room != NULL) {
            tried_room = true;
            ms_plan_clear(&s->plan);
            st = s->pol->make_room(s->self, s->c, &s->tr->jobs[j], s->now, &s->plan);
            if (st == MS_OK && s->plan.n > 0) {
                if ((st = run_plan(s, PK_ROOM)) != MS_OK)
                    return st;
                continue;   /* place the head again */
            }
            if (st != MS_OK && st != MS_ENOFIT) {
                ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: make_room failed: %s",
                            s->pol->name, ms_strerror(st));
                return st;
            }
        }
        blocked[best] = true;
    }
    return MS_OK;
}

static ms_status_t schedule(sim_t *s)
{
    ms_status_t st = sched_pass(s);

    if (st != MS_OK || s->pol->on_idle == NULL)
        return st;
    ms_plan_clear(&s->plan);
    st = s->pol->on_idle(s->self, s->c, s->nwait, s->now, &s->plan);
    if (st == MS_ENOFIT || (st == MS_OK && s->plan.n == 0))
        return MS_OK;
    if (st != MS_OK) {
        ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: on_idle failed: %s",
                    s->pol->name, ms_strerror(st));
        return st;
    }
    if ((st = run_plan(s, PK_IDLE)) != MS_OK)
        return st;
    return sched_pass(s);
}

/* --- events -------------------------------------------------------------- */

static void count_done(sim_t *s)
{
    s->done++;
    if (s->cfg->on_progress != NULL && s->done >= s->next_progress) {
        s->cfg->on_progress(s->cfg->ctx, s->done, s->tr->n);
        s->next_progress += s->progress_step;
    }
}

static ms_status_t on_arrival(sim_t *s, int32_t jid)
{
    const ms_job_t *j = &s->tr->jobs[jid];
    bool ok = j->gang <= 1 || (j->gang <= s->gpn && j->gang <= s->c->ngpus);

    if (ok && s->pol->can_host != NULL)
        ok = s->pol->can_host(s->self, s->c, j);
    if (!ok) {
        s->jobs[jid].st = J_REJECTED;
        s->m->jobs_rejected++;
        count_done(s);
        return MS_OK;
    }
    if (s->pol->on_arrival != NULL)
        s->pol->on_arrival(s->self, j);
    enqueue(s, jid);
    return schedule(s);
}

static ms_status_t on_finish(sim_t *s, int32_t jid)
{
    sjob_t *j = &s->jobs[jid];
    int i;
    ms_status_t st;

    ms_plan_clear(&s->plan);
    for (i = 0; i < j->ninst; i++) {
        const sinst_t *in = &s->pool[j->inst + (uint32_t)i];
        ms_op_t op;

        emit_segment(s, jid, in);
        memset(&op, 0, sizeof(op));
        op.kind = MS_OP_STOP;
        op.job = jid;
        op.gpu = in->gpu;
        op.start = in->start;
        op.prof = in->prof;
        op.from_gpu = -1;
        op.from_start = -1;
        if ((st = ms_plan_push(&s->plan, &op)) != MS_OK)
            return st;
        if (s->c->share == MS_SHARE_MIG && !(s->persist[in->gpu] & (1u << in->start)) &&
            (st = ms_plan_destroy(&s->plan, in->gpu, in->start)) != MS_OK)
            return st;
    }
    j->st = J_DONE;
    j->end_t = s->now;
    if ((st = run_plan(s, PK_SIM)) != MS_OK)
        return st;
    s->m->jobs_completed++;
    count_done(s);
    if (s->pol->on_finish != NULL) {
        for (i = 0; i < j->ninst; i++) {
            ms_plan_clear(&s->plan);
            st = s->pol->on_finish(s->self, s->c, s->pool[j->inst + (uint32_t)i].gpu,
                                   s->now, &s->plan);
            if (st == MS_ENOFIT)
                continue;
            if (st != MS_OK) {
                ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: on_finish failed: %s",
                            s->pol->name, ms_strerror(st));
                return st;
            }
            if (s->plan.n > 0 && (st = run_plan(s, PK_FINISH)) != MS_OK)
                return st;
        }
    }
    return schedule(s);
}

/* --- metrics ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static ms_status_t finish_metrics(sim_t *s)
{
    ms_metrics_t *m = s->m;
    size_t i, n = 0;
    double *w, sw = 0.0, se = 0.0, sj = 0.0, ss = 0.0, span;
    uint8_t *skip;

    w = malloc((s->tr->n ? s->tr->n : 1) * sizeof(*w));
    skip = malloc(s->tr->n ? s->tr->n : 1);
    if (w == NULL || skip == NULL) {
        free(w);
        free(skip);
        return MS_ENOMEM;
    }
    m->makespan_s = 0.0;
    for (i = 0; i < s->tr->n; i++) {
        const sjob_t *j = &s->jobs[i];
        const ms_job_t *tj = &s->tr->jobs[i];

        skip[i] = j->st == J_REJECTED;
        if (j->st != J_DONE)
            continue;
        w[n++] = j->place_t - tj->arrival;
        sw += j->place_t - tj->arrival;
        se += j->end_t - j->place_t;
        sj += j->end_t - tj->arrival;
        ss += tj->duration > 0.0 ? (j->end_t - j->place_t) / tj->duration : 1.0;
        if (j->end_t > m->makespan_s)
            m->makespan_s = j->end_t;
    }
    qsort(w, n, sizeof(*w), cmp_double);
    if (n > 0) {
        m->mean_wait_s = sw / (double)n;
        m->mean_exec_s = se / (double)n;
        m->mean_jct_s = sj / (double)n;
        m->mean_slowdown = ss / (double)n;
        m->p50_wait_s = ms__percentile(w, n, 50);
        m->p95_wait_s = ms__percentile(w, n, 95);
        m->p99_wait_s = ms__percentile(w, n, 99);
        m->max_wait_s = w[n - 1];
    }
    span = s->last_t - s->t0;
    if (span > 0.0) {
        m->mean_fragcost = s->area_frag / (span * s->c->ngpus);
        m->mean_utilization = s->area_util / (span * (double)s->C * s->c->ngpus);
    } else {
        m->mean_fragcost = (double)s->sum_frag / FX / s->c->ngpus;
        m->mean_utilization = (double)s->sum_useful / ((double)s->C * s->c->ngpus);
    }
    m->lower_bound_s = ms__lower_bound(s->tr, s->c->ngpus, skip,
                                       s->c->share == MS_SHARE_MIG);
    free(w);
    free(skip);
    return MS_OK;
}

/* --- the run ------------------------------------------------------------- */

static void sim_free(sim_t *s)
{
    if (s->self != NULL)
        s->pol->destroy(s->self);
    ms_cluster_destroy(s->c);
    free(s->jobs);
    free(s->pool);
    free(s->heap);
    free(s->pos);
    free(s->touched);
    free(s->tmark);
    free(s->persist);
    free(s->fcost);
    ms_plan_free(&s->plan);
}

static ms_status_t sim_init(sim_t *s, const ms_sim_cfg_t *cfg, const ms_trace_t *tr)
{
    ms_cluster_cfg_t cc;
    ms_frag_table_t *ft;
    size_t i, npool = 0;
    int k, ns;
    ms_status_t st;

    s->C = ms_geom_compute(s->g);
    s->W = ms_geom_width(s->g);
    s->np = ms_geom_nprofiles(s->g);
    s->nclass = s->np + 1;
    s->gpn = cfg->gpus_per_node > 0 ? cfg->gpus_per_node : cfg->ngpus;
    s->placing = -1;
    s->stamp = 1;
    for (k = 0; k < NCLASS_MAX; k++)
        s->qhead[k] = s->qtail[k] = -1;
    ms_plan_init(&s->plan);

    memset(&cc, 0, sizeof(cc));
    cc.geom = s->g;
    cc.ngpus = cfg->ngpus;
    cc.gpus_per_node = s->gpn;
    cc.share = s->pol->share;
    cc.replicas = cfg->pcfg.replicas > 0 ? cfg->pcfg.replicas : 4;
    if (cc.replicas > MS_MAX_INST)
        cc.replicas = MS_MAX_INST;
    cc.index_mode = cfg->index_mode;
    if ((st = ms_cluster_create(&cc, &s->c)) != MS_OK) {
        ms_diag_set(s->diag, NULL, 0, "cluster", "cannot create the cluster: %s",
                    ms_strerror(st));
        return st;
    }

    for (i = 0; i < tr->n; i++)
        npool += tr->jobs[i].gang > 1 ? (size_t)tr->jobs[i].gang : 1;
    s->jobs = calloc(tr->n ? tr->n : 1, sizeof(*s->jobs));
    s->pos = malloc((tr->n ? tr->n : 1) * sizeof(*s->pos));
    s->pool = calloc(npool ? npool : 1, sizeof(*s->pool));
    s->touched = malloc((size_t)cfg->ngpus * sizeof(*s->touched));
    s->tmark = calloc((size_t)cfg->ngpus, sizeof(*s->tmark));
    s->persist = calloc((size_t)cfg->ngpus, sizeof(*s->persist));
    ns = ms_geom_nstates(s->g);
    s->fcost = malloc((size_t)ns * sizeof(*s->fcost));
    ft = malloc(sizeof(*ft));
    if (s->jobs == NULL || s->pos == NULL || s->pool == NULL || s->touched == NULL || s->tmark == NULL ||
        s->persist == NULL || s->fcost == NULL || ft == NULL) {
        free(ft);
        return MS_ENOMEM;
    }
    ms_frag_table_fill(s->g, &cfg->pcfg.frag, ft);
    for (k = 0; k < ns; k++)
        s->fcost[k] = llround(ft->cost[k] * FX);
    free(ft);
    npool = 0;
    for (i = 0; i < tr->n; i++) {
        s->jobs[i].inst = (uint32_t)npool;
        s->jobs[i].next = -1;
        s->pos[i] = -1;
        npool += tr->jobs[i].gang > 1 ? (size_t)tr->jobs[i].gang : 1;
    }
    /* every GPU starts empty */
    s->nbusy[0] = cfg->ngpus;
    s->sum_frag = s->fcost[ms_geom_empty_state()] * cfg->ngpus;
    s->t0 = s->last_t = s->now = tr->n > 0 ? tr->jobs[0].arrival : 0.0;
    s->progress_step = tr->n / 200 > 0 ? tr->n / 200 : 1;
    s->next_progress = s->progress_step;

    if ((st = s->pol->create(&cfg->pcfg, s->c, &s->self)) != MS_OK) {
        s->self = NULL;
        ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: create failed: %s",
                    s->pol->name, ms_strerror(st));
        return st;
    }
    if (s->pol->setup != NULL) {
        ms_plan_clear(&s->plan);
        if ((st = s->pol->setup(s->self, s->c, &s->plan)) != MS_OK) {
            ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: setup failed: %s",
                        s->pol->name, ms_strerror(st));
            return st;
        }
        if ((st = run_plan(s, PK_SETUP)) != MS_OK)
            return st;
    }
    return MS_OK;
}

static ms_status_t check_cfg(const ms_sim_cfg_t *cfg, const ms_trace_t *tr, ms_diag_t *diag)
{
    const char *field = NULL, *why = NULL;

    if (cfg->policy == NULL || cfg->policy->create == NULL || cfg->policy->destroy == NULL ||
        cfg->policy->place == NULL) {
        field = "policy";
        why = "a policy with create, destroy and place is required";
    } else if (cfg->policy->abi != MS_POLICY_ABI) {
        field = "policy";
        why = "policy ABI mismatch";
    } else if (cfg->ngpus <= 0) {
        field = "gpus";
        why = "at least one GPU is required";
    } else if (cfg->gpus_per_node < 0) {
        field = "gpus-per-node";
        why = "must be >= 0";
    } else if (!(cfg->beta >= 0.0) || !isfinite(cfg->beta)) {
        field = "beta";
        why = "must be a finite number >= 0";
    } else if (!(cfg->create_s >= 0.0) || !isfinite(cfg->create_s)) {
        field = "create-s";
        why = "must be a finite number >= 0";
    } else if (!(cfg->migrate_s >= 0.0) || !isfinite(cfg->migrate_s)) {
        field = "migrate-s";
        why = "must be a finite number >= 0";
    } else if (!(cfg->backfill_bound_s >= 0.0)) {
        field = "backfill-bound";
        why = "must be >= 0";
    } else if (!(cfg->sample_every_s >= 0.0)) {
        field = "sample-every";
        why = "must be >= 0";
    } else if (tr->geom == NULL || tr->n > (size_t)INT32_MAX) {
        field = "trace";
        why = "trace without geometry, or too many jobs";
    } else if (!(cfg->idle_tick_s >= 0.0)) {
        field = "idle-tick";
        why = "must be >= 0";
    }
    if (field == NULL)
        return MS_OK;
    ms_diag_set(diag, NULL, 0, field, "%s", why);
    return MS_EINVAL;
}

ms_status_t ms_sim_run(const ms_sim_cfg_t *cfg, const ms_trace_t *trace,
                       ms_metrics_t *out, ms_diag_t *diag)
{
    sim_t s;
    size_t ai = 0;
    double next_sample, tick, next_tick = INFINITY;
    long changes_at_tick = -1;
    ms_status_t st;

    if (cfg == NULL || trace == NULL || out == NULL)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    if ((st = check_cfg(cfg, trace, diag)) != MS_OK)
        return st;
    memset(&s, 0, sizeof(s));
    s.cfg = cfg;
    s.tr = trace;
    s.g = trace->geom;
    s.pol = cfg->policy;
    s.m = out;
    s.diag = diag;
    out->jobs_total = (long)trace->n;
    if ((st = sim_init(&s, cfg, trace)) != MS_OK)
        goto done;

    next_sample = cfg->sample_every_s > 0.0 ? s.t0 : INFINITY;
    tick = cfg->idle_tick_s > 0.0 ? cfg->idle_tick_s
         : cfg->pcfg.hysteresis_s > 0.0 ? cfg->pcfg.hysteresis_s : 60.0;
    for (;;) {
        double tf, ta, t;
        int kind;   /* 0 finish, 1 arrival, 2 idle tick */

        tf = s.hn > 0 ? s.heap[0].t : INFINITY;
        ta = ai < trace->n ? trace->jobs[ai].arrival : INFINITY;
        /* wake an on_idle policy while jobs wait; stop when nothing runs,
         * nothing arrives and the last wake-up changed nothing (stuck) */
        if (next_tick == INFINITY && s.waiting > 0 && s.pol->on_idle != NULL &&
            (tf < INFINITY || ta < INFINITY || s.changes != changes_at_tick))
            next_tick = s.now + tick;
        if (tf == INFINITY && ta == INFINITY && next_tick == INFINITY)
            break;
        kind = tf <= ta && tf <= next_tick ? 0 : ta <= next_tick ? 1 : 2;
        t = kind == 0 ? tf : kind == 1 ? ta : next_tick;
        if (cfg->on_sample != NULL) {
            while (next_sample <= t) {
                advance(&s, next_sample);
                sample(&s, next_sample);
                next_sample += cfg->sample_every_s;
            }
        }
        advance(&s, t);
        out->events++;
        if (kind == 0) {
            int32_t j = s.heap[0].job;

            heap_pop(&s);
            st = on_finish(&s, j);
        } else if (kind == 1) {
            st = on_arrival(&s, (int32_t)ai++);
        } else {
            next_tick = INFINITY;
            changes_at_tick = s.changes;
            st = schedule(&s);
        }
        if (st != MS_OK)
            goto done;
        if (cfg->on_sample != NULL && cfg->sample_every_s <= 0.0)
            sample(&s, t);
    }
    st = finish_metrics(&s);
    if (st == MS_OK && cfg->on_progress != NULL)
        cfg->on_progress(cfg->ctx, s.done, trace->n);
done:
    sim_free(&s);
    return st;
}
