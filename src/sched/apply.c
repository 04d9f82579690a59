/* apply.c - plans: checks each op of a policy's plan (who may do what),
 * applies it to the group's cluster, keeps the job table and the job-scoped
 * GIs in step, counts what the operators want counted, and hands the plan,
 * in global numbers, to the executor.
 *
 * Job-scoped GIs: a GI that a plan creates and a START of the same plan
 * uses belongs to that job and is destroyed when the job leaves; any other
 * GI (a static layout, a GI a policy keeps) persists (persist bit).
 */
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

static const char *const OP_NAME[] = { "?", "CREATE", "DESTROY", "START", "MOVE", "STOP" };

static ms_status_t bad_op(ms_sched_t *s, int gi, ms_plan_kind_t kind, int i, const ms_op_t *op,
                          double now, const char *why)
{
    ms_diag_set(s->diag, NULL, 0, "policy",
                "policy %s: op %d (%s job %d gpu %d start %d) of its %s plan at t=%.3f: %s",
                s->grp[gi].pol->name, i, op->kind <= MS_OP_STOP ? OP_NAME[op->kind] : "?",
                (int)op->job, (int)op->gpu, (int)op->start, ms_plan_kind_name(kind), now, why);
    return MS_ESTATE;
}

static bool created_here(const ms_sched_t *s, int g, int start)
{
    int i;

    for (i = 0; i < s->ncreated; i++)
        if (s->created_gpu[i] == g && s->created_start[i] == start)
            return true;
    return false;
}

static bool is_live(uint8_t st)
{
    return st == MS_JOB_STARTING || st == MS_JOB_RUNNING || st == MS_JOB_MIGRATING ||
           st == MS_JOB_RESERVED;
}

bool ms__sched_moves_allowed(const ms_sched_t *s, const ms_plan_t *p, double now)
{
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i];

        if (op->kind != MS_OP_MOVE)
            continue;
        if (op->job < 0 || op->job >= s->njobs)
            return true;   /* run_plan reports the bad op */
        if (!s->jobs[op->job].migratable || s->jobs[op->job].state == MS_JOB_RESERVED)
            return false;
        /* a job placed or moved at this same instant has made no progress:
         * moving it again now would be a zero-length segment and a pause
         * for nothing (issue 11: make_room moved a job it had just placed) */
        if (s->jobs[op->job].placed_t == now)
            return false;
    }
    return true;
}

/* GPU l of group gr after an op that may have freed capacity: stamp each
 * profile that fits there once its idle GIs are gone (worth_offering's
 * rule for MS_POLICY_FIT_PLACE). O(instances + profiles). */
static void fit_mark(ms__grp_t *gr, int l, uint64_t stamp)
{
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    ms_state_t st = gpu->state;
    unsigned fits;
    int i;

    if (gr->nwait_all == 0)
        return;   /* no class waits here: any that blocks later is blocked after this */
    for (i = 0; i < gpu->ninst && st != MS_STATE_NONE; i++)
        if (gpu->inst[i].job < 0 && gpu->inst[i].start >= 0)
            st = ms_state_remove(gr->geom, st, gpu->inst[i].prof, gpu->inst[i].start);
    /* (an inconsistent state: every profile) */
    fits = st == MS_STATE_NONE ? (1u << ms_geom_nprofiles(gr->geom)) - 1u
                               : ms_state_fits(gr->geom, st);
    for (; fits != 0; fits &= fits - 1u)
        gr->fit_at[__builtin_ctz(fits)] = stamp;
}

ms_status_t ms__sched_cluster_op(ms_sched_t *s, int gi, const ms_op_t *op, bool consume)
{
    ms__grp_t *gr = &s->grp[gi];
    ms_status_t st;

    if ((st = ms_cluster_apply_op(gr->c, op)) != MS_OK)
        return st;
    gr->any_at = ++s->stamp;
    if (!consume && gr->c->share == MS_SHARE_MIG && (gr->pol->flags & MS_POLICY_FIT_PLACE)) {
        fit_mark(gr, op->gpu, s->stamp);
        if (op->kind == MS_OP_MOVE && op->from_gpu >= 0 && op->from_gpu != op->gpu)
            fit_mark(gr, op->from_gpu, s->stamp);
    }
    if (!consume)
        gr->free_at = s->wake_at = s->stamp;
    /* the nodes whose GPUs changed: their kept scores are stale (reserve.c) */
    if (s->node_gen != NULL) {
        s->node_gen[gr->lnode[op->gpu / gr->gpn]] = s->stamp;
        if (op->kind == MS_OP_MOVE && op->from_gpu >= 0)
            s->node_gen[gr->lnode[op->from_gpu / gr->gpn]] = s->stamp;
    }
    ms__resv_touch(s, gi, op->gpu);
    if (op->kind == MS_OP_MOVE && op->from_gpu != op->gpu)
        ms__resv_touch(s, gi, op->from_gpu);
    return MS_OK;
}

void ms__sched_pol_seen(ms_sched_t *s, int gi)
{
    ms__grp_t *gr = &s->grp[gi];
    uint64_t v;

    if (gr->pol->version == NULL)
        return;
    v = gr->pol->version(gr->self);
    if (v != gr->pol_ver) {
        gr->pol_ver = v;
        gr->pol_at = s->wake_at = ++s->stamp;
    }
}

/* Can op i of s->plan (of kind `kind`) only take capacity away? A
 * placement's START, and a CREATE that the same placement starts a job on.
 * Everything else (a STOP, a DESTROY, a MOVE, a GI made by another kind of
 * plan: a layout, a make_room) may let a blocked job start. */
static bool consumes(const ms_sched_t *s, ms_plan_kind_t kind, int i)
{
    const ms_op_t *op = &s->plan.ops[i];
    int k;

    if (kind != MS_PK_PLACE)
        return false;
    if (op->kind == MS_OP_START)
        return true;
    if (op->kind != MS_OP_CREATE)
        return false;
    for (k = i + 1; k < s->plan.n; k++)
        if (s->plan.ops[k].kind == MS_OP_START && s->plan.ops[k].gpu == op->gpu &&
            s->plan.ops[k].start == op->start)
            return true;
    return false;
}

ms_status_t ms__sched_grow_gops(ms_sched_t *s, int n)
{
    ms_sched_op_t *v;
    int cap;

    if (n <= s->gcap)
        return MS_OK;
    cap = s->gcap ? s->gcap : 64;
    while (cap < n)
        cap *= 2;
    if ((v = ms__srealloc(s, s->gops, (size_t)cap * sizeof(*v))) == NULL)
        return MS_ENOMEM;
    s->gops = v;
    s->gcap = cap;
    return MS_OK;
}

/* Checks of one op before it touches the cluster. */
static ms_status_t check_op(ms_sched_t *s, int gi, ms_plan_kind_t kind, int i, const ms_op_t *op,
                            double now, int *slot_inst)
{
    const ms__grp_t *gr = &s->grp[gi];
    const ms_cluster_t *c = gr->c;
    int W = ms_geom_width(gr->geom), k;
    const ms__job_t *j = NULL;

    if (op->gpu < 0 || op->gpu >= c->ngpus)
        return bad_op(s, gi, kind, i, op, now, "no such GPU");
    if (op->kind == MS_OP_START || op->kind == MS_OP_MOVE || op->kind == MS_OP_STOP) {
        if (op->job < 0 || op->job >= s->njobs || s->jobs[op->job].state == MS__SLOT_FREE)
            return bad_op(s, gi, kind, i, op, now, "no such job");
        j = &s->jobs[op->job];
    }
    switch (op->kind) {
    case MS_OP_CREATE:
    case MS_OP_DESTROY:
        if (op->start < 0 || op->start >= W)
            return bad_op(s, gi, kind, i, op, now, "bad start");
        return MS_OK;
    case MS_OP_START:
        if (kind != MS_PK_PLACE || op->job != s->placing)
            return bad_op(s, gi, kind, i, op, now, "only place() may start a job, and only its own");
        if (is_live(j->state) && j->ninst >= j->gang)
            return bad_op(s, gi, kind, i, op, now, "the job already holds all its instances");
        if (j->state != MS_JOB_QUEUED && !is_live(j->state))
            return bad_op(s, gi, kind, i, op, now, "the job is not waiting");
        if (is_live(j->state) && j->group != gi)
            return bad_op(s, gi, kind, i, op, now, "a gang spans one group");
        if (c->share == MS_SHARE_MIG && (op->start < 0 || op->start >= W))
            return bad_op(s, gi, kind, i, op, now, "bad start");
        return MS_OK;
    case MS_OP_MOVE: {
        const ms_sched_inst_t *in;

        if (!is_live(j->state) || j->group != gi)
            return bad_op(s, gi, kind, i, op, now, "the job is not running");
        if (op->from_gpu < 0 || op->from_gpu >= c->ngpus)
            return bad_op(s, gi, kind, i, op, now, "no such source GPU");
        in = j->gang > 1 ? j->insts : &j->inst1;
        for (k = 0; k < j->ninst; k++)
            if (in[k].gpu == gr->l2g[op->from_gpu] && in[k].start == op->from_start)
                break;
        if (k == j->ninst)
            return bad_op(s, gi, kind, i, op, now, "the job does not run at the source");
        *slot_inst = k;
        return MS_OK;
    }
    case MS_OP_STOP:
        if (kind != MS_PK_STOP && kind != MS_PK_ROLLBACK)
            return bad_op(s, gi, kind, i, op, now, "STOP is the scheduler's");
        return MS_OK;
    default:
        return bad_op(s, gi, kind, i, op, now, "unknown op");
    }
}

/* Apply one op and keep the job table and persist bits in step. */
static ms_status_t apply_one(ms_sched_t *s, int gi, ms_plan_kind_t kind, int i,
                             const ms_op_t *op, double now, uint8_t *fresh)
{
    ms__grp_t *gr = &s->grp[gi];
    ms_cluster_t *c = gr->c;
    int g = op->gpu, k = -1;
    ms__job_t *j;
    ms_status_t st;

    *fresh = 0;
    if ((st = check_op(s, gi, kind, i, op, now, &k)) != MS_OK)
        return st;
    if (ms__sched_cluster_op(s, gi, op, consumes(s, kind, i)) != MS_OK)
        return bad_op(s, gi, kind, i, op, now,
                      "the cluster refused it (overlap, illegal start, busy or missing instance)");
    j = op->job >= 0 && op->job < s->njobs ? &s->jobs[op->job] : NULL;
    switch (op->kind) {
    case MS_OP_CREATE:
        if (kind != MS_PK_SETUP)
            s->st.reconfigurations++;
        gr->persist[g] = (uint16_t)(gr->persist[g] | (1u << op->start));
        if (s->ncreated < MS__MAX_CREATED) {
            s->created_gpu[s->ncreated] = g;
            s->created_start[s->ncreated] = op->start;
            s->ncreated++;
        }
        break;
    case MS_OP_DESTROY:
        if (kind != MS_PK_SETUP)
            s->st.reconfigurations++;
        gr->persist[g] = (uint16_t)(gr->persist[g] & ~(1u << op->start));
        break;
    case MS_OP_START: {
        const ms_gpu_t *gpu = &c->gpus[g];
        int ii = c->share == MS_SHARE_MIG ? ms_gpu_find_inst(gpu, op->start)
                                          : ms_gpu_find_job(gpu, op->job);
        ms_sched_inst_t *in;

        if (j->state == MS_JOB_QUEUED) {
            if (j->inq)
                ms__sched_dequeue(s, op->job);
            j->state = s->cfg.track_ops ? MS_JOB_STARTING : MS_JOB_RUNNING;
            j->start_t = now;
            j->group = (int16_t)gi;
            j->ninst = 0;
            s->st.running++;
            ms__tenant_charge(s, op->job, gi);
        }
        in = &ms__sched_insts(j)[j->ninst++];
        j->placed_t = now;
        in->gpu = gr->l2g[g];
        in->start = op->start;
        in->prof = (int8_t)(ii >= 0 ? gpu->inst[ii].prof : op->prof);
        if (c->share == MS_SHARE_MIG && created_here(s, g, op->start)) {
            /* a GI made for this job goes when the job ends */
            gr->persist[g] = (uint16_t)(gr->persist[g] & ~(1u << op->start));
            *fresh = 1;
        }
        break;
    }
    case MS_OP_MOVE: {
        ms_sched_inst_t *in = &ms__sched_insts(j)[k];
        const ms_gpu_t *gpu = &c->gpus[g];
        int ii = ms_gpu_find_inst(gpu, op->start);

        if (op->bbm) {
            gr->persist[g] = (uint16_t)(gr->persist[g] & ~(1u << op->from_start));
            gr->persist[g] = (uint16_t)(gr->persist[g] & ~(1u << op->start));
            s->st.migrations_bbm++;
        } else if (created_here(s, g, op->start)) {
            gr->persist[g] = (uint16_t)(gr->persist[g] & ~(1u << op->start));
            *fresh = 1;
        }
        in->gpu = gr->l2g[g];
        in->start = op->start;
        in->prof = (int8_t)(ii >= 0 ? gpu->inst[ii].prof : op->prof);
        j->placed_t = now;
        if (s->cfg.track_ops && j->state == MS_JOB_RUNNING)
            j->state = MS_JOB_MIGRATING;
        s->st.migrations++;
        break;
    }
    case MS_OP_STOP:
        break;
    default:
        break;
    }
    return MS_OK;
}

ms_status_t ms__sched_run_plan(ms_sched_t *s, int gi, ms_plan_kind_t kind, double now)
{
    ms__grp_t *gr = &s->grp[gi];
    ms_sched_plan_t gp;
    uint64_t plan_id = 0;
    int i;
    ms_status_t st;

    s->ncreated = 0;
    if (kind != MS_PK_STOP && kind != MS_PK_PLACE && s->plan.n > 0)
        s->st.changes++;
    /* every allocation before the first op: a plan is applied whole or not */
    if ((st = ms__sched_grow_gops(s, s->plan.n)) != MS_OK)
        return st;
    if (s->cfg.track_ops && (st = ms__sched_pend_reserve(s, (size_t)s->plan.n)) != MS_OK)
        return st;
    for (i = 0; i < s->plan.n; i++) {
        const ms_op_t *op = &s->plan.ops[i];
        ms_sched_op_t *go = &s->gops[i];
        ms_op_t rec = *op;
        uint8_t persist = 0;
        int8_t from_prof = -1;

        if (s->cfg.track_ops && (op->kind == MS_OP_DESTROY || op->kind == MS_OP_MOVE) &&
            op->gpu >= 0 && op->gpu < gr->c->ngpus && op->from_gpu < gr->c->ngpus) {
            /* what undoing it will need, read before it is applied */
            int sg = op->kind == MS_OP_MOVE ? op->from_gpu : op->gpu;
            int ss = op->kind == MS_OP_MOVE ? op->from_start : op->start;
            int ii = sg >= 0 ? ms_gpu_find_inst(&gr->c->gpus[sg], ss) : -1;

            if (ii >= 0 && op->kind == MS_OP_DESTROY) {
                rec.prof = gr->c->gpus[sg].inst[ii].prof;
                persist = (gr->persist[sg] >> ss) & 1u;
            } else if (ii >= 0) {
                from_prof = gr->c->gpus[sg].inst[ii].prof;
            }
        }
        if ((st = apply_one(s, gi, kind, i, op, now, &go->fresh)) != MS_OK)
            return st;
        go->op = *op;
        go->op.gpu = gr->l2g[op->gpu];
        go->op.from_gpu = op->kind == MS_OP_MOVE ? gr->l2g[op->from_gpu] : -1;
        go->id = 0;
        if (s->cfg.track_ops) {
            if ((st = ms__sched_pend_push(s, gi, kind, &rec, go->fresh, persist, from_prof,
                                          plan_id, &go->id)) != MS_OK)
                return st;
            if (plan_id == 0)
                plan_id = go->id;
        }
    }
    if (kind == MS_PK_IDLE) {
        /* layout switches: nodes whose GIs this plan changed */
        int32_t last_node = -1;

        for (i = 0; i < s->plan.n; i++) {
            const ms_op_t *op = &s->plan.ops[i];
            int32_t node = op->gpu / gr->gpn;

            if ((op->kind == MS_OP_CREATE || op->kind == MS_OP_DESTROY) && node != last_node) {
                s->st.layout_switches++;
                last_node = node;
            }
        }
    }
    ms__fence_after_plan(s, gi, now);   /* what the plan freed on a fenced GPU */
    if (s->cfg.exec.plan == NULL || s->plan.n == 0)
        return MS_OK;
    gp.kind = kind;
    gp.now = now;
    gp.n = s->plan.n;
    gp.ops = s->gops;
    return s->cfg.exec.plan(s->cfg.exec.ctx, &gp);
}

ms_status_t ms__sched_run_quiet(ms_sched_t *s, int gi, ms_plan_kind_t kind, double now)
{
    ms_sched_exec_t saved = s->cfg.exec;
    bool track = s->cfg.track_ops;
    ms_status_t st;

    s->cfg.exec.plan = NULL;
    s->cfg.track_ops = false;
    st = ms__sched_run_plan(s, gi, kind, now);
    s->cfg.exec = saved;
    s->cfg.track_ops = track;
    return st;
}

ms_status_t ms__sched_release(ms_sched_t *s, int32_t slot, ms_job_state_t final, double now)
{
    ms__job_t *j = &s->jobs[slot];
    ms__grp_t *gr = &s->grp[j->group];
    const ms_sched_inst_t *in = ms__sched_insts(j);
    bool reserved = j->state == MS_JOB_RESERVED;
    int i;
    ms_status_t st;

    ms_plan_clear(&s->plan);
    for (i = 0; i < j->ninst; i++) {
        int g = s->g2l[in[i].gpu];
        ms_op_t op;

        memset(&op, 0, sizeof(op));
        op.kind = MS_OP_STOP;
        op.job = slot;
        op.gpu = g;
        op.start = in[i].start;
        op.prof = in[i].prof;
        op.from_gpu = -1;
        op.from_start = -1;
        if ((st = ms_plan_add(&s->plan, &op)) != MS_OK)
            return st;
        if (gr->c->share == MS_SHARE_MIG && !(gr->persist[g] & (1u << in[i].start)) &&
            (st = ms_plan_add_destroy(&s->plan, g, in[i].start)) != MS_OK)
            return st;
    }
    j->state = (uint8_t)final;
    j->end_t = now;
    ms__tenant_uncharge(s, slot, now - j->start_t);
    if (reserved) {
        /* nothing was executed: undo the view quietly. Every release of a
         * hold (cancel, expiry, a failed reserve) leaves the expiry list
         * here: a cancelled hold left on it was released again at its
         * expiry, from a freed slot (group -1). */
        long reconf = s->st.reconfigurations;

        ms__sched_resv_del(s, slot);
        st = ms__sched_run_quiet(s, j->group, MS_PK_STOP, now);
        s->st.reconfigurations = reconf;
        s->reserved--;
    } else {
        st = ms__sched_run_plan(s, j->group, MS_PK_STOP, now);
        s->st.running--;
    }
    j->ninst = 0;
    return st;
}
