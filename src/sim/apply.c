/* apply.c - the scheduler's plans as the simulator sees them: each plan,
 * already applied to the scheduler's cluster, becomes job events (start,
 * migration, stop), execution segments, and updates of the aggregates and
 * the rates of the jobs on the GPUs it touched.
 *
 * Timing: a job that starts on a GI its own plan created waits create_s;
 * a moved job makes no progress for migrate_s.
 */
#include <math.h>
#include <string.h>

#include "sim/sim_int.h"

void ms__sim_emit_segment(const ms__sim_t *s, int32_t jid, const ms__sim_inst_t *in)
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

/* The profile of the instance a job now holds at (g, start). */
static int8_t inst_prof(const ms__sim_t *s, int g, int start, int32_t slot, int8_t fallback)
{
    const ms_gpu_t *gpu = s->gpu[g];
    int ii = s->grp[s->ggrp[g]].share == MS_SHARE_MIG ? ms_gpu_find_inst(gpu, start)
                                                      : ms_gpu_find_job(gpu, slot);

    return ii >= 0 ? gpu->inst[ii].prof : fallback;
}

static ms_status_t on_start(ms__sim_t *s, const ms_sched_op_t *so)
{
    const ms_op_t *op = &so->op;
    int32_t tj = s->slot2tr[op->job];
    ms__sim_job_t *j = &s->jobs[tj];
    ms__sim_inst_t *in;

    if (j->st == MS__J_WAITING) {
        j->st = MS__J_RUNNING;
        j->place_t = s->now;
        j->rem = s->tr->jobs[tj].duration - j->done;
        j->upd = j->hold = s->now;
        j->rate = 0.0;
        j->ninst = 0;
    }
    if (j->ninst >= (s->tr->jobs[tj].gang > 1 ? s->tr->jobs[tj].gang : 1))
        return MS_ESTATE;
    in = &s->pool[j->inst + (uint32_t)j->ninst++];
    in->gpu = op->gpu;
    in->start = op->start;
    in->prof = inst_prof(s, op->gpu, op->start, op->job, op->prof);
    in->begin = s->now;
    if (so->fresh && s->now + s->cfg->create_s > j->hold)
        j->hold = s->now + s->cfg->create_s;
    j->dirty = 1;
    ms__sim_touch(s, op->gpu);
    return MS_OK;
}

static ms_status_t on_move(ms__sim_t *s, const ms_sched_op_t *so)
{
    const ms_op_t *op = &so->op;
    int32_t tj = s->slot2tr[op->job];
    ms__sim_job_t *j = &s->jobs[tj];
    ms__sim_inst_t *in = NULL;
    int k;

    for (k = 0; k < j->ninst; k++) {
        ms__sim_inst_t *x = &s->pool[j->inst + (uint32_t)k];

        if (x->gpu == op->from_gpu && x->start == op->from_start) {
            in = x;
            break;
        }
    }
    if (in == NULL)
        return MS_ESTATE;
    ms__sim_emit_segment(s, tj, in);
    ms__sim_settle(s, j);
    in->gpu = op->gpu;
    in->start = op->start;
    in->prof = inst_prof(s, op->gpu, op->start, op->job, op->prof);
    in->begin = s->now;
    if (s->now + s->cfg->migrate_s > j->hold)
        j->hold = s->now + s->cfg->migrate_s;
    j->dirty = 1;
    ms__sim_touch(s, op->gpu);
    ms__sim_touch(s, op->from_gpu);
    return MS_OK;
}

/* A STOP of a job the simulator still runs: the scheduler preempted it
 * (a job that ends is marked done before the scheduler hears of it). Its
 * run is lost but for the work done by its last checkpoint (one every
 * checkpoint_s of its run from its placement, the trace's column, as the
 * scheduler counts them; the work then is the work now less what the
 * current rate did since); it waits again and will run the rest. */
static void preempted(ms__sim_t *s, int32_t slot)
{
    int32_t tj = s->slot2tr[slot];
    ms__sim_job_t *j = &s->jobs[tj];
    double every = s->tr->req != NULL ? s->tr->req[tj].checkpoint_s : 0.0, kept = 0.0;
    int i;

    if (j->st != MS__J_RUNNING)
        return;
    for (i = 0; i < j->ninst; i++)
        ms__sim_emit_segment(s, tj, &s->pool[j->inst + (uint32_t)i]);
    if (every > 0.0) {
        double last = j->place_t + floor((s->now - j->place_t) / every) * every, work, since;

        ms__sim_settle(s, j);
        work = s->tr->jobs[tj].duration - j->done - j->rem;
        since = s->now - (last > j->hold ? last : j->hold);
        kept = last > j->place_t ? work - j->rate * (since > 0.0 ? since : 0.0) : 0.0;
        kept = kept < 0.0 ? 0.0 : kept > work ? work : kept;
        j->done += kept;
    }
    s->m->preemptions++;
    s->m->lost_work_s += s->now - j->place_t - kept;
    ms__evheap_del(&s->ends, tj);
    j->st = MS__J_WAITING;
    j->ninst = 0;
    j->rate = 0.0;
    j->dirty = 0;
}

ms_status_t ms__sim_on_plan(void *ctx, const ms_sched_plan_t *p)
{
    ms__sim_t *s = ctx;
    int i;
    ms_status_t st = MS_OK;

    for (i = 0; i < p->n && st == MS_OK; i++) {
        const ms_sched_op_t *so = &p->ops[i];

        ms__sim_ctouch(s, so->op.gpu);
        switch (so->op.kind) {
        case MS_OP_START:
            st = on_start(s, so);
            break;
        case MS_OP_MOVE:
            ms__sim_ctouch(s, so->op.from_gpu);
            st = on_move(s, so);
            break;
        case MS_OP_STOP:
            ms__sim_touch(s, so->op.gpu);
            preempted(s, so->op.job);
            break;
        default:
            break;
        }
    }
    if (st != MS_OK) {
        ms_diag_set(s->diag, NULL, 0, "sched", "a %s plan at t=%.3f does not match the simulator's jobs",
                    ms_plan_kind_name(p->kind), s->now);
        return st;
    }
    ms__sim_update_contrib(s, false);
    return ms__sim_update_rates(s);
}
