/* sim.c - the discrete-event simulator (see sim.h and docs/simulator.md):
 * set-up, configuration checks, the event handlers and the event loop.
 *
 * Events: arrivals come from the sorted trace (a cursor, no heap entry);
 * completions sit in an indexed binary heap ordered by (time, seq) with one
 * entry per running job (src/core/evheap.c). When a job's rate changes its entry moves
 * in place, so the heap holds no stale events and a rate change costs
 * O(jobs on the GPU x log running). At equal times completions come before
 * arrivals, and arrivals before the idle wake-ups of on_idle policies.
 *
 * Files (the state, ms__sim_t, and their shared functions are in sim_int.h):
 *   sim.c      set-up, configuration checks, arrivals and finishes, the loop
 *   rates.c    rates and progress (settle/reschedule), aggregates, samples
 *   apply.c    the scheduler's plans -> job events, segments, aggregates
 *   metrics.c  the end-of-run metrics
 *   tenants.c  tenants: declared, their usage integrated, their metrics
 *   bound.c    the makespan lower bound and percentiles
 */
#include "migsched/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hugemem.h"
#include "sim/sim_int.h"

void ms_sim_cfg_defaults(ms_sim_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    ms_sched_cfg_defaults(&cfg->sched);
    cfg->ngpus = 1;
    cfg->gpus_per_node = 0;
    cfg->estimate_seed = 1;
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

/* The estimate a job's request carries: its duration, with a multiplicative
 * lognormal error (median 1: duration x exp(E x N(0,1)), Box-Muller), or
 * none. Drawn in arrival order from the run's own stream. */
static double job_estimate(ms__sim_t *s, double duration)
{
    double u1, u2, e;

    if (s->cfg->no_estimates)
        return 0.0;
    if (!(s->cfg->estimate_error > 0.0))
        return duration;
    do
        u1 = ms_rng_unit(&s->est_rng);
    while (u1 <= 0.0);
    u2 = ms_rng_unit(&s->est_rng);
    e = duration * exp(s->cfg->estimate_error * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    return e < 1e12 ? e : 1e12;   /* the scheduler's range */
}

static ms_status_t on_arrival(ms__sim_t *s, int32_t jid)
{
    const ms_job_t *j = &s->tr->jobs[jid];
    ms_sched_req_t rq;
    int32_t slot = -1;
    ms_diag_t d;
    ms_status_t st;

    memset(&rq, 0, sizeof(rq));
    rq.prof_geom = s->tr->geom;
    rq.prof = j->prof;
    rq.gang = j->gang;
    rq.duration_s = j->duration;
    rq.estimate_s = job_estimate(s, j->duration);
    rq.migratable = true;
    if (s->tr->req != NULL) {
        const ms_job_req_t *x = &s->tr->req[jid];

        rq.model = x->model != NULL ? x->model->name : NULL;
        rq.isolation = (ms_isolation_t)x->isolation;
        rq.priority = x->priority;
        rq.checkpoint_s = x->checkpoint_s;
        rq.tenant = ms__sim_tenant_name(s, (size_t)jid);
        if (x->mem_gb > 0.0) {
            /* resolved on each model by its memory, not by the trace model's profile */
            rq.prof_geom = NULL;
            rq.mem_gb = x->mem_gb;
        }
    }
    s->jobs[jid].st = MS__J_WAITING;
    ms_diag_clear(&d);
    /* the scheduler's plans during this submit already name its slot; the
     * simulator forgets a job when it ends, so slots are taken again and
     * the scheduler's job table stays the size of what waits or runs (at
     * 1,000,000 jobs and load 1.2, a fifth of the jobs at most) */
    s->slot2tr[ms_sched_next_slot(s->sched)] = jid;
    if (s->ten_on)
        ms__sim_tenants_arrive(s, s->tr->req != NULL ? s->tr2t[s->tr->req[jid].tenant] : 0);
    st = ms_sched_submit(s->sched, &rq, s->now, &slot, &d);
    if (slot >= 0) {
        s->jobs[jid].slot = slot;
        if (s->slot2tr[slot] != jid)
            return MS_ESTATE;
        if (s->ten_on)
            ms__sim_tenants_over_limit(s, jid, slot);
    }
    if (st == MS_ENOFIT && slot < 0) {
        s->jobs[jid].st = MS__J_REJECTED;
        s->m->jobs_rejected++;
        count_done(s);
        return MS_OK;
    }
    if (st != MS_OK && s->diag != NULL && s->diag->msg[0] == '\0')
        ms_diag_set(s->diag, NULL, 0, d.field, "job %d: %s", (int)jid, d.msg);
    return st;
}

static ms_status_t on_finish(ms__sim_t *s, int32_t jid)
{
    ms__sim_job_t *j = &s->jobs[jid];
    int i;
    ms_status_t st;

    for (i = 0; i < j->ninst; i++)
        ms__sim_emit_segment(s, jid, &s->pool[j->inst + (uint32_t)i]);
    j->st = MS__J_DONE;
    j->end_t = s->now;
    if ((st = ms_sched_finished(s->sched, j->slot, s->now)) != MS_OK ||
        (st = ms_sched_forget(s->sched, j->slot)) != MS_OK)
        return st;
    s->m->jobs_completed++;
    count_done(s);
    return MS_OK;
}

/* --- the run ------------------------------------------------------------- */

static void sim_free(ms__sim_t *s)
{
    int k;

    ms_sched_destroy(s->sched);
    for (k = 0; s->grp != NULL && k < s->ngroups; k++)
        free(s->grp[k].fcost);
    free(s->grp);
    free(s->gpu);
    free(s->ggrp);
    free(s->jobs);
    free(s->slot2tr);
    free(s->pool);
    ms__evheap_fini(&s->ends);
    free(s->touched);
    free(s->tmark);
    free(s->ctouched);
    free(s->cmark);
    free(s->gfrag);
    free(s->guse);
    free(s->glazy);
    free(s->tr2t);
    free(s->hr_area);
    free(s->hr_wait);
}

static ms_status_t make_sched(ms__sim_t *s, const ms_sim_cfg_t *cfg, const ms_trace_t *tr)
{
    ms_sched_cfg_t sc;
    ms_status_t st;

    sc = cfg->sched;
    /* no executor yet: the policies' setup plans (GIs only) run before the
     * simulator has its tables; sim_init counts them in afterwards */
    memset(&sc.exec, 0, sizeof(sc.exec));
    sc.track_ops = false;
    if (cfg->sched.nnodes <= 0) {
        /* the shorthand: ngpus GPUs of the trace's model, gpn a node (the
         * last node may be short) */
        ms_cluster_spec_t *cs = NULL;

        if ((st = ms_cluster_spec_create(&cs)) != MS_OK ||
            (st = ms_cluster_spec_add_gpus(cs, "n", cfg->ngpus,
                                           cfg->gpus_per_node > 0 ? cfg->gpus_per_node : cfg->ngpus,
                                           tr->geom, MS_NODE_MIG, 0)) != MS_OK) {
            ms_cluster_spec_destroy(cs);
            return st;
        }
        sc.nodes = ms_cluster_spec_nodes(cs);
        sc.nnodes = ms_cluster_spec_nnodes(cs);
        st = ms_sched_create(&sc, s->now, &s->sched, s->diag);
        ms_cluster_spec_destroy(cs);
        return st;
    }
    return ms_sched_create(&sc, s->now, &s->sched, s->diag);
}

static ms_status_t sim_init(ms__sim_t *s, const ms_sim_cfg_t *cfg, const ms_trace_t *tr)
{
    size_t i, npool = 0;
    int k, g;
    ms_status_t st;

    s->stamp = 1;
    s->cstamp = 1;
    ms_rng_seed(&s->est_rng, cfg->estimate_seed);
    s->t0 = s->last_t = s->now = tr->n > 0 ? tr->jobs[0].arrival : 0.0;
    s->ngpus = cfg->sched.nnodes > 0 ? 0 : cfg->ngpus;
    for (k = 0; k < cfg->sched.nnodes; k++)
        s->ngpus += cfg->sched.nodes[k].ngpus;
    for (i = 0; i < tr->n; i++)
        npool += tr->jobs[i].gang > 1 ? (size_t)tr->jobs[i].gang : 1;
    s->jobs = calloc(tr->n ? tr->n : 1, sizeof(*s->jobs));
    s->slot2tr = malloc((tr->n ? tr->n : 1) * sizeof(*s->slot2tr));
    s->pool = calloc(npool ? npool : 1, sizeof(*s->pool));
    ms__mem_huge(s->jobs, tr->n * sizeof(*s->jobs));
    ms__mem_huge(s->slot2tr, tr->n * sizeof(*s->slot2tr));
    ms__mem_huge(s->pool, npool * sizeof(*s->pool));
    s->touched = malloc((size_t)s->ngpus * sizeof(*s->touched));
    s->tmark = calloc((size_t)s->ngpus, sizeof(*s->tmark));
    s->ctouched = malloc((size_t)s->ngpus * sizeof(*s->ctouched));
    s->cmark = calloc((size_t)s->ngpus, sizeof(*s->cmark));
    s->gfrag = calloc((size_t)s->ngpus, sizeof(*s->gfrag));
    s->guse = calloc((size_t)s->ngpus, sizeof(*s->guse));
    s->glazy = calloc((size_t)s->ngpus, sizeof(*s->glazy));
    s->gpu = malloc((size_t)s->ngpus * sizeof(*s->gpu));
    s->ggrp = malloc((size_t)s->ngpus * sizeof(*s->ggrp));
    if (s->jobs == NULL || s->slot2tr == NULL || ms__evheap_ids(&s->ends, (int32_t)tr->n) != 0 || s->pool == NULL ||
        s->touched == NULL || s->tmark == NULL || s->ctouched == NULL || s->cmark == NULL ||
        s->gfrag == NULL || s->guse == NULL || s->glazy == NULL || s->gpu == NULL ||
        s->ggrp == NULL)
        return MS_ENOMEM;
    npool = 0;
    for (i = 0; i < tr->n; i++) {
        s->jobs[i].inst = (uint32_t)npool;
        s->jobs[i].slot = -1;
        npool += tr->jobs[i].gang > 1 ? (size_t)tr->jobs[i].gang : 1;
    }
    s->progress_step = tr->n / 200 > 0 ? tr->n / 200 : 1;
    s->next_progress = s->progress_step;

    if ((st = make_sched(s, cfg, tr)) != MS_OK || (st = ms__sim_tenants_init(s)) != MS_OK)
        return st;
    if (ms_sched_ngpus(s->sched) != s->ngpus)
        return MS_ESTATE;
    s->ngroups = ms_sched_ngroups(s->sched);
    if ((s->grp = calloc((size_t)s->ngroups, sizeof(*s->grp))) == NULL)
        return MS_ENOMEM;
    s->capacity = 0.0;
    for (k = 0; k < s->ngroups; k++) {
        const ms_cluster_t *c = ms_sched_group_cluster(s->sched, k);
        ms__sim_grp_t *gr = &s->grp[k];
        ms_frag_table_t *ft;
        int ns = ms_geom_nstates(c->geom), q;

        gr->g = c->geom;
        gr->C = ms_geom_compute(c->geom);
        gr->share = c->share;
        gr->fcost = malloc((size_t)ns * sizeof(*gr->fcost));
        ft = malloc(sizeof(*ft));
        if (gr->fcost == NULL || ft == NULL) {
            free(ft);
            return MS_ENOMEM;
        }
        ms_frag_table_fill(c->geom, &cfg->sched.pcfg.frag, ft);
        for (q = 0; q < ns; q++)
            gr->fcost[q] = llround(ft->cost[q] * MS__SIM_FX);
        free(ft);
        s->capacity += (double)gr->C * c->ngpus;
    }
    for (g = 0; g < s->ngpus; g++) {
        int gi;

        s->gpu[g] = ms_sched_gpu(s->sched, g, NULL);
        ms_sched_gpu_where(s->sched, g, NULL, &gi, NULL);
        s->ggrp[g] = (int16_t)gi;
    }
    ms__sim_update_contrib(s, true);
    {
        ms_sched_exec_t ex;

        ex.ctx = s;
        ex.plan = ms__sim_on_plan;
        ms_sched_set_exec(s->sched, &ex);
    }
    return MS_OK;
}

static ms_status_t check_cfg(const ms_sim_cfg_t *cfg, const ms_trace_t *tr, ms_diag_t *diag)
{
    const char *field = NULL, *why = NULL;

    /* the policy and the nodes are checked by ms_sched_create */
    if (cfg->sched.policy == NULL) {
        field = "policy";
        why = "a policy is required";
    } else if (cfg->sched.nnodes <= 0 && cfg->ngpus <= 0) {
        field = "gpus";
        why = "at least one GPU is required";
    } else if (cfg->sched.nnodes < 0 || (cfg->sched.nnodes > 0 && cfg->sched.nodes == NULL)) {
        field = "node";
        why = "a node list needs its nodes";
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
    } else if (!(cfg->sched.backfill_bound_s >= 0.0)) {
        field = "backfill-bound";
        why = "must be >= 0";
    } else if (!(cfg->estimate_error >= 0.0 && cfg->estimate_error <= 3.0)) {
        field = "estimate-error";
        why = "must be in [0, 3]";
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
    long events_at_tick = -1;
    bool tick_changed = false;
    ms_status_t st;

    if (cfg == NULL || trace == NULL || out == NULL)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    if ((st = check_cfg(cfg, trace, diag)) != MS_OK)
        return st;
    memset(&s, 0, sizeof(s));
    s.cfg = cfg;
    s.tr = trace;
    s.m = out;
    s.diag = diag;
    out->jobs_total = (long)trace->n;
    if ((st = sim_init(&s, cfg, trace)) != MS_OK)
        goto done;

    next_sample = cfg->sample_every_s > 0.0 ? s.t0 : INFINITY;
    tick = cfg->idle_tick_s > 0.0 ? cfg->idle_tick_s
         : cfg->sched.pcfg.hysteresis_s > 0.0 ? cfg->sched.pcfg.hysteresis_s : 60.0;
    for (;;) {
        double tf, ta, t;
        int kind;   /* 0 finish, 1 arrival, 2 idle tick */
        ms_sched_stats_t ss;

        tf = ms__evheap_top(&s.ends) != NULL ? ms__evheap_top(&s.ends)->t : INFINITY;
        ta = ai < trace->n ? trace->jobs[ai].arrival : INFINITY;
        ms_sched_stats(s.sched, &ss);
        /* wake an on_idle policy while jobs wait (time-driven layout changes:
         * node-profile's hysteresis), but only if something happened since
         * the last wake-up: an arrival or a finish, or a change that wake-up
         * made. A wake-up that changes nothing is not repeated until the next
         * event, so the number of wake-ups is bounded by events and changes,
         * never by simulated time (a 1e9 s job costs what a 10 s job costs). */
        if (next_tick == INFINITY && ss.waiting > 0 && cfg->sched.policy->on_idle != NULL &&
            (out->events != events_at_tick || tick_changed))
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
            int32_t j = ms__evheap_top(&s.ends)->id;

            ms__evheap_pop(&s.ends);
            st = on_finish(&s, j);
        } else if (kind == 1) {
            st = on_arrival(&s, (int32_t)ai++);
        } else {
            long before = ss.changes;

            next_tick = INFINITY;
            st = ms_sched_tick(s.sched, s.now);
            ms_sched_stats(s.sched, &ss);
            tick_changed = ss.changes != before;
            events_at_tick = out->events;
        }
        if (st != MS_OK)
            goto done;
        if (cfg->on_sample != NULL && cfg->sample_every_s <= 0.0)
            ms__sim_sample(&s, t);
    }
    {
        ms_sched_stats_t ss;

        ms_sched_stats(s.sched, &ss);
        out->migrations = ss.migrations;
        out->migrations_bbm = ss.migrations_bbm;
        out->reconfigurations = ss.reconfigurations;
        out->layout_switches = ss.layout_switches;
        out->preempt_moves = ss.preempt_moves;
        out->preempt_move = cfg->sched.preempt && cfg->sched.preempt_move;
    }
    st = ms__sim_finish_metrics(&s);
    if (st == MS_OK && s.ten_on)
        st = ms__sim_tenants_finish(&s);
    if (st == MS_OK && cfg->on_progress != NULL)
        cfg->on_progress(cfg->ctx, s.done, trace->n);
done:
    sim_free(&s);
    return st;
}
