/* ops.c - asynchronous execution: pending ops, their outcomes, rollback.
 *
 * With cfg.track_ops every applied op is also recorded here, in the order
 * it was issued, until its whole plan is settled. The contract with the
 * executor: it runs ops in the order they were issued, and when one fails
 * it discards every op issued after it (later plans may build on what the
 * failed op was to do: a slice its DESTROY was to free, a GI its CREATE was
 * to make). So a failure of op k rolls back k and every later pending op,
 * newest first, each by its inverse:
 *   CREATE -> destroy the GI      DESTROY -> create it again
 *   START  -> stop; the job is requeued at its old place in the queue
 *   MOVE   -> move back (make-before-break: to the source GI, which the
 *             rollback of the plan's later DESTROY has re-created)
 *   STOP   -> nothing (the job is over for the scheduler either way)
 * GIs that the plan created, whose CREATE succeeded and that are idle after
 * the rollback, are destroyed by an MS_PK_ROLLBACK plan: no ghost instance.
 */
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

/* The pending array is sorted by id (ids only grow). */
static size_t find_pend(const ms_sched_t *s, uint64_t id)
{
    size_t lo = 0, hi = s->npend;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->pend[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->npend && s->pend[lo].id == id ? lo : (size_t)-1;
}

ms_status_t ms__sched_pend_push(ms_sched_t *s, int gi, ms_plan_kind_t kind, const ms_op_t *rec,
                                uint8_t fresh, uint8_t persist, int8_t from_prof,
                                uint64_t plan_id, uint64_t *id)
{
    ms__pend_t *p;

    if (s->npend == s->cappend) {
        size_t cap = s->cappend ? s->cappend * 2 : 64;
        ms__pend_t *v = ms__srealloc(s, s->pend, cap * sizeof(*v));

        if (v == NULL)
            return MS_ENOMEM;
        s->pend = v;
        s->cappend = cap;
    }
    p = &s->pend[s->npend++];
    memset(p, 0, sizeof(*p));
    p->id = s->next_op++;
    p->plan = plan_id != 0 ? plan_id : p->id;
    p->op = *rec;
    p->group = (int16_t)gi;
    p->kind = (uint8_t)kind;
    p->fresh = fresh;
    p->from_prof_persist = persist;
    p->from_prof = from_prof;
    *id = p->id;
    return MS_OK;
}

ms_status_t ms__sched_pend_reserve(ms_sched_t *s, size_t n)
{
    size_t cap = s->cappend ? s->cappend : 64;
    ms__pend_t *v;

    if (s->npend + n <= s->cappend)
        return MS_OK;
    while (cap < s->npend + n)
        cap *= 2;
    if ((v = ms__srealloc(s, s->pend, cap * sizeof(*v))) == NULL)
        return MS_ENOMEM;
    s->pend = v;
    s->cappend = cap;
    return MS_OK;
}

size_t ms_sched_pending(const ms_sched_t *s)
{
    size_t i, n = 0;

    for (i = 0; i < s->npend; i++)
        n += s->pend[i].done == 0;
    return n;
}

/* Drop the records of plans whose every op is done. */
static void compact(ms_sched_t *s)
{
    size_t i = 0, o = 0;

    while (i < s->npend) {
        size_t e = i;
        bool all = true;

        while (e < s->npend && s->pend[e].plan == s->pend[i].plan) {
            all &= s->pend[e].done != 0;
            e++;
        }
        if (!all) {
            memmove(&s->pend[o], &s->pend[i], (e - i) * sizeof(*s->pend));
            o += e - i;
        }
        i = e;
    }
    s->npend = o;
}

/* Does slot still have a pending op of this kind? */
static bool has_pending(const ms_sched_t *s, int32_t slot, int kind)
{
    size_t i;

    for (i = 0; i < s->npend; i++)
        if (!s->pend[i].done && s->pend[i].op.job == slot && s->pend[i].op.kind == kind)
            return true;
    return false;
}

ms_status_t ms_sched_op_done(ms_sched_t *s, uint64_t op_id, double now)
{
    size_t i = find_pend(s, op_id);
    ms__pend_t *p;
    ms__job_t *j;

    (void)now;
    if (i == (size_t)-1 || s->pend[i].done)
        return MS_ENOENT;
    p = &s->pend[i];
    p->done = 1;
    s->st.ops_done++;
    if ((p->op.kind == MS_OP_START || p->op.kind == MS_OP_MOVE) && p->op.job >= 0 &&
        p->op.job < s->njobs) {
        j = &s->jobs[p->op.job];
        if (j->state == MS_JOB_STARTING && !has_pending(s, p->op.job, MS_OP_START))
            j->state = MS_JOB_RUNNING;
        else if (j->state == MS_JOB_MIGRATING && !has_pending(s, p->op.job, MS_OP_MOVE))
            j->state = MS_JOB_RUNNING;
    }
    compact(s);
    return MS_OK;
}

/* The instance record of slot at (global gpu, start), or NULL. */
static ms_sched_inst_t *job_inst(ms_sched_t *s, int32_t slot, int gpu, int start)
{
    ms__job_t *j = &s->jobs[slot];
    ms_sched_inst_t *in = ms__sched_insts(j);
    int k;

    for (k = 0; k < j->ninst; k++)
        if (in[k].gpu == gpu && in[k].start == start)
            return &in[k];
    return NULL;
}

/* Undo one applied op on the view. */
static ms_status_t undo(ms_sched_t *s, const ms__pend_t *p)
{
    ms__grp_t *gr = &s->grp[p->group];
    const ms_op_t *op = &p->op;
    ms_op_t inv;
    int g = op->gpu;
    ms__job_t *j = op->job >= 0 && op->job < s->njobs ? &s->jobs[op->job] : NULL;

    memset(&inv, 0, sizeof(inv));
    inv.job = -1;
    inv.from_gpu = -1;
    inv.from_start = -1;
    switch (op->kind) {
    case MS_OP_CREATE:
        inv.kind = MS_OP_DESTROY;
        inv.gpu = g;
        inv.start = op->start;
        if (ms__sched_cluster_op(s, p->group, &inv, false) != MS_OK)
            return MS_ESTATE;
        gr->persist[g] = (uint16_t)(gr->persist[g] & ~(1u << op->start));
        return MS_OK;
    case MS_OP_DESTROY:
        inv.kind = MS_OP_CREATE;
        inv.gpu = g;
        inv.start = op->start;
        inv.prof = op->prof;
        if (ms__sched_cluster_op(s, p->group, &inv, false) != MS_OK)
            return MS_ESTATE;
        if (p->from_prof_persist)
            gr->persist[g] = (uint16_t)(gr->persist[g] | (1u << op->start));
        return MS_OK;
    case MS_OP_START: {
        ms_sched_inst_t *in, *all;
        int k;

        inv.kind = MS_OP_STOP;
        inv.job = op->job;
        inv.gpu = g;
        inv.start = op->start;
        inv.prof = op->prof;
        if (j == NULL)
            return MS_ESTATE;
        if ((in = job_inst(s, op->job, gr->l2g[g], op->start)) == NULL)
            return MS_OK;   /* it ended (or moved) meanwhile: nothing holds the GI */
        if (ms__sched_cluster_op(s, p->group, &inv, false) != MS_OK)
            return MS_ESTATE;
        all = ms__sched_insts(j);
        k = (int)(in - all);
        memmove(&all[k], &all[k + 1], (size_t)(j->ninst - k - 1) * sizeof(*all));
        j->ninst--;
        if (j->ninst == 0 && (j->state == MS_JOB_STARTING || j->state == MS_JOB_RUNNING)) {
            j->group = -1;
            s->st.running--;
            ms__tenant_uncharge(s, op->job, -1.0);
            ms__sched_enqueue(s, op->job);   /* its old place: the queue orders by seq */
        }
        return MS_OK;
    }
    case MS_OP_MOVE: {
        ms_sched_inst_t *in;

        inv.kind = MS_OP_MOVE;
        inv.job = op->job;
        inv.bbm = op->bbm;
        inv.gpu = op->from_gpu;
        inv.start = op->from_start;
        inv.prof = p->from_prof;
        inv.from_gpu = g;
        inv.from_start = op->start;
        if (j == NULL || ms__sched_cluster_op(s, p->group, &inv, false) != MS_OK)
            return MS_ESTATE;
        if ((in = job_inst(s, op->job, gr->l2g[g], op->start)) == NULL)
            return MS_ESTATE;
        in->gpu = gr->l2g[op->from_gpu];
        in->start = op->from_start;
        in->prof = p->from_prof;
        if (j->state == MS_JOB_MIGRATING && !has_pending(s, op->job, MS_OP_MOVE))
            j->state = MS_JOB_RUNNING;
        s->st.migrations--;
        return MS_OK;
    }
    default:
        return MS_OK;
    }
}

/* Stop what a partly started gang holds and queue it again. */
static ms_status_t requeue_partial(ms_sched_t *s, int32_t slot, double now)
{
    ms__job_t *j = &s->jobs[slot];
    ms__grp_t *gr = &s->grp[j->group];
    const ms_sched_inst_t *in = ms__sched_insts(j);
    int gi = j->group, q;
    ms_status_t st;

    ms_plan_clear(&s->plan);
    for (q = 0; q < j->ninst; q++) {
        int g = s->g2l[in[q].gpu];
        ms_op_t op;

        memset(&op, 0, sizeof(op));
        op.kind = MS_OP_STOP;
        op.job = slot;
        op.gpu = g;
        op.start = in[q].start;
        op.prof = in[q].prof;
        op.from_gpu = -1;
        op.from_start = -1;
        if ((st = ms_plan_add(&s->plan, &op)) != MS_OK)
            return st;
        if (gr->c->share == MS_SHARE_MIG && !(gr->persist[g] & (1u << in[q].start)) &&
            (st = ms_plan_add_destroy(&s->plan, g, in[q].start)) != MS_OK)
            return st;
    }
    if ((st = ms__sched_run_plan(s, gi, MS_PK_ROLLBACK, now)) != MS_OK)
        return st;
    j->ninst = 0;
    j->group = -1;
    s->st.running--;
    ms__tenant_uncharge(s, slot, -1.0);
    ms__sched_enqueue(s, slot);
    return MS_OK;
}

/* Hand the executor again the pending STOP plans issued after index from
 * (it dropped them with everything after a failure). */
static ms_status_t reissue_stops(ms_sched_t *s, size_t from, double now)
{
    size_t k = from;

    while (k < s->npend) {
        size_t e = k;
        ms_sched_plan_t gp;
        int n = 0;

        if (s->pend[k].done || s->pend[k].kind != MS_PK_STOP) {
            k++;
            continue;
        }
        while (e < s->npend && s->pend[e].plan == s->pend[k].plan)
            e++;
        ms_status_t st;

        if ((st = ms__sched_grow_gops(s, (int)(e - k))) != MS_OK)
            return st;
        for (; k < e; k++) {
            const ms__pend_t *p = &s->pend[k];
            const ms__grp_t *gr = &s->grp[p->group];
            ms_sched_op_t *go = &s->gops[n++];

            go->op = p->op;
            go->op.gpu = gr->l2g[p->op.gpu];
            go->op.from_gpu = -1;
            go->id = p->id;
            go->fresh = 0;
        }
        if (s->cfg.exec.plan != NULL) {
            gp.kind = MS_PK_STOP;
            gp.now = now;
            gp.n = n;
            gp.ops = s->gops;
            if ((st = s->cfg.exec.plan(s->cfg.exec.ctx, &gp)) != MS_OK)
                return st;
        }
    }
    return MS_OK;
}

/* The rollback of the pending op at index i (op_failed without its
 * scheduling pass). */
static ms_status_t roll_back(ms_sched_t *s, size_t i, double now)
{
    size_t a, e, k;
    uint64_t plan;
    int gi;
    ms_status_t st = MS_OK;

    plan = s->pend[i].plan;
    gi = s->pend[i].group;
    for (a = i; a > 0 && s->pend[a - 1].plan == plan; a--)
        ;
    for (e = i; e < s->npend && s->pend[e].plan == plan; e++)
        ;
    s->st.ops_failed++;
    (void)e;
    /* the failed op and every later pending op, newest first; a STOP plan
     * is a fact (the job ended), not a decision: it stays, and is issued
     * again below (its ops touch only the ended job's GIs, which no pending
     * decision touches, so it commutes with the undone ops) */
    for (k = s->npend; k > i; k--) {
        ms__pend_t *p = &s->pend[k - 1];

        if (p->done || (p->kind == MS_PK_STOP && p->plan != plan))
            continue;   /* an in-order executor has done none of the others */
        p->done = 2;    /* rolled back (before undo: it is no longer pending) */
        if ((st = undo(s, p)) != MS_OK)
            return st;
    }
    if ((st = reissue_stops(s, i + 1, now)) != MS_OK)
        return st;
    /* a gang is all or nothing: one whose START failed after others of its
     * STARTs were done gives those up too (STOP, job-scoped DESTROYs), then
     * waits in the queue again */
    for (k = i; k < s->npend; k++) {
        const ms__pend_t *p = &s->pend[k];

        if (p->done == 2 && p->op.kind == MS_OP_START && p->op.job >= 0 &&
            p->op.job < s->njobs && s->jobs[p->op.job].ninst > 0 &&
            s->jobs[p->op.job].ninst < s->jobs[p->op.job].gang &&
            (st = requeue_partial(s, p->op.job, now)) != MS_OK)
            return st;
    }
    /* GIs the plan created (and that exist) but nothing uses now */
    ms_plan_clear(&s->plan);
    for (k = a; k < i; k++) {
        const ms__pend_t *p = &s->pend[k];
        const ms_gpu_t *gpu;
        int ii;

        if (p->op.kind != MS_OP_CREATE)
            continue;
        gpu = &s->grp[p->group].c->gpus[p->op.gpu];
        ii = ms_gpu_find_inst(gpu, p->op.start);
        if (ii >= 0 && gpu->inst[ii].job < 0 && !(s->grp[p->group].persist[p->op.gpu] & (1u << p->op.start)) &&
            (st = ms_plan_add_destroy(&s->plan, p->op.gpu, p->op.start)) != MS_OK)
            return st;
    }
    compact(s);
    if (s->plan.n > 0 && (st = ms__sched_run_plan(s, gi, MS_PK_ROLLBACK, now)) != MS_OK)
        return st;
    return MS_OK;
}

ms_status_t ms_sched_op_failed(ms_sched_t *s, uint64_t op_id, double now)
{
    size_t i = find_pend(s, op_id);
    ms_status_t st;

    if (i == (size_t)-1 || s->pend[i].done)
        return MS_ENOENT;
    /* the undo may need slices a fence took meanwhile (fence.c): lifted
     * while the view is rolled back, put back before the pass */
    ms__fence_lift_all(s);
    st = roll_back(s, i, now);
    ms__fence_put_all(s, now);
    if (st != MS_OK)
        return st;
    return ms__sched_schedule(s, now);
}
