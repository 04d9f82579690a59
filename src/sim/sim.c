/* sim.c - the discrete-event simulator (see sim.h and docs/simulator.md):
 * set-up, configuration checks, the event handlers and the event loop.
 *
 * Events: arrivals come from the sorted trace (a cursor, no heap entry);
 * completions sit in an indexed binary heap ordered by (time, seq) with one
 * entry per running job (heap.c). When a job's rate changes its entry moves
 * in place, so the heap holds no stale events and a rate change costs
 * O(jobs on the GPU x log running). At equal times completions come before
 * arrivals, and arrivals before the idle wake-ups of on_idle policies.
 *
 * Files (the state, ms__sim_t, and their shared functions are in sim_int.h):
 *   sim.c      set-up, configuration checks, arrivals and finishes, the loop
 *   heap.c     the completion heap
 *   rates.c    rates and progress (settle/reschedule), aggregates, samples
 *   apply.c    plans -> cluster ops and job events, with the legality checks
 *   queue.c    per-class queues, the scheduling pass, on_idle
 *   metrics.c  the end-of-run metrics
 *   bound.c    the makespan lower bound and percentiles
 */
#include "migsched/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

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

/* --- events -------------------------------------------------------------- */

static void count_done(ms__sim_t *s)
{
    s->done++;
    if (s->cfg->on_progress != NULL && s->done >= s->next_progress) {
        s->cfg->on_progress(s->cfg->ctx, s->done, s->tr->n);
        s->next_progress += s->progress_step;
    }
}

static ms_status_t on_arrival(ms__sim_t *s, int32_t jid)
{
    const ms_job_t *j = &s->tr->jobs[jid];
    bool ok = j->gang <= 1 || (j->gang <= s->gpn && j->gang <= s->c->ngpus);

    if (ok && s->pol->can_host != NULL)
        ok = s->pol->can_host(s->self, s->c, j);
    if (!ok) {
        s->jobs[jid].st = MS__J_REJECTED;
        s->m->jobs_rejected++;
        count_done(s);
        return MS_OK;
    }
    if (s->pol->on_arrival != NULL)
        s->pol->on_arrival(s->self, j);
    ms__sim_enqueue(s, jid);
    return ms__sim_schedule(s);
}

static ms_status_t on_finish(ms__sim_t *s, int32_t jid)
{
    ms__sim_job_t *j = &s->jobs[jid];
    int i;
    ms_status_t st;

    ms_plan_clear(&s->plan);
    for (i = 0; i < j->ninst; i++) {
        const ms__sim_inst_t *in = &s->pool[j->inst + (uint32_t)i];
        ms_op_t op;

        ms__sim_emit_segment(s, jid, in);
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
    j->st = MS__J_DONE;
    j->end_t = s->now;
    if ((st = ms__sim_run_plan(s, MS__PK_SIM)) != MS_OK)
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
            if (s->plan.n > 0 && (st = ms__sim_run_plan(s, MS__PK_FINISH)) != MS_OK)
                return st;
        }
    }
    return ms__sim_schedule(s);
}

/* --- the run ------------------------------------------------------------- */

static void sim_free(ms__sim_t *s)
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

static ms_status_t sim_init(ms__sim_t *s, const ms_sim_cfg_t *cfg, const ms_trace_t *tr)
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
    for (k = 0; k < MS__SIM_NCLASS_MAX; k++)
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
        s->fcost[k] = llround(ft->cost[k] * MS__SIM_FX);
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
        if ((st = ms__sim_run_plan(s, MS__PK_SETUP)) != MS_OK)
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
    ms__sim_t s;
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
                ms__sim_advance(&s, next_sample);
                ms__sim_sample(&s, next_sample);
                next_sample += cfg->sample_every_s;
            }
        }
        ms__sim_advance(&s, t);
        out->events++;
        if (kind == 0) {
            int32_t j = s.heap[0].job;

            ms__sim_heap_pop(&s);
            st = on_finish(&s, j);
        } else if (kind == 1) {
            st = on_arrival(&s, (int32_t)ai++);
        } else {
            next_tick = INFINITY;
            changes_at_tick = s.changes;
            st = ms__sim_schedule(&s);
        }
        if (st != MS_OK)
            goto done;
        if (cfg->on_sample != NULL && cfg->sample_every_s <= 0.0)
            ms__sim_sample(&s, t);
    }
    st = ms__sim_finish_metrics(&s);
    if (st == MS_OK && cfg->on_progress != NULL)
        cfg->on_progress(cfg->ctx, s.done, trace->n);
done:
    sim_free(&s);
    return st;
}