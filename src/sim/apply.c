/* apply.c - the simulator's plans: checks each op of a policy's plan (who
 * may do what), applies it to the cluster, and turns it into job events
 * (start, migration, stop), GI bookkeeping (which GIs outlive their job)
 * and counters (reconfigurations, migrations, layout switches).
 */
#include <string.h>

#include "sim/sim_int.h"

static const char *const PK_NAME[] = { "setup", "place", "make_room", "on_finish",
                                       "on_idle", "simulator" };
static const char *const OP_NAME[] = { "?", "CREATE", "DESTROY", "START", "MOVE", "STOP" };

static ms_status_t bad_op(ms__sim_t *s, int kind, int i, const ms_op_t *op, const char *why)
{
    ms_diag_set(s->diag, NULL, 0, "policy",
                "policy %s: op %d (%s job %d gpu %d start %d) of its %s plan at t=%.3f: %s",
                s->pol->name, i, op->kind <= MS_OP_STOP ? OP_NAME[op->kind] : "?",
                (int)op->job, (int)op->gpu, (int)op->start, PK_NAME[kind], s->now, why);
    return MS_ESTATE;
}

static bool created_here(const ms__sim_t *s, int g, int start)
{
    int i;

    for (i = 0; i < s->ncreated; i++)
        if (s->created_gpu[i] == g && s->created_start[i] == start)
            return true;
    return false;
}

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

static ms_status_t apply_one(ms__sim_t *s, int kind, int i, const ms_op_t *op)
{
    ms_cluster_t *c = s->c;
    int g = op->gpu, g2 = -1, k;
    ms__sim_job_t *j = NULL;
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
        if (kind != MS__PK_PLACE || op->job != s->placing)
            return bad_op(s, kind, i, op, "only place() may start a job, and only its own");
        if (j->st == MS__J_RUNNING && j->ninst >= s->tr->jobs[op->job].gang)
            return bad_op(s, kind, i, op, "the job already holds all its instances");
        if (j->st != MS__J_WAITING && j->st != MS__J_RUNNING)
            return bad_op(s, kind, i, op, "the job is not waiting");
        if (c->share == MS_SHARE_MIG && (op->start < 0 || op->start >= s->W))
            return bad_op(s, kind, i, op, "bad start");
        break;
    case MS_OP_MOVE:
        if (j->st != MS__J_RUNNING)
            return bad_op(s, kind, i, op, "the job is not running");
        if (op->from_gpu < 0 || op->from_gpu >= c->ngpus)
            return bad_op(s, kind, i, op, "no such source GPU");
        for (k = 0; k < j->ninst; k++) {
            const ms__sim_inst_t *in = &s->pool[j->inst + (uint32_t)k];

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
        if (kind != MS__PK_SIM)
            return bad_op(s, kind, i, op, "STOP is the simulator's");
        break;
    default:
        return bad_op(s, kind, i, op, "unknown op");
    }

    ms__sim_contrib(s, g, -1);
    if (g2 >= 0)
        ms__sim_contrib(s, g2, -1);
    st = ms_cluster_apply_op(c, op);
    ms__sim_contrib(s, g, +1);
    if (g2 >= 0)
        ms__sim_contrib(s, g2, +1);
    if (st != MS_OK)
        return bad_op(s, kind, i, op, "the cluster refused it (overlap, illegal start, "
                                      "busy or missing instance)");

    switch (op->kind) {
    case MS_OP_CREATE:
        if (kind != MS__PK_SETUP)
            s->m->reconfigurations++;
        s->persist[g] = (uint16_t)(s->persist[g] | (1u << op->start));
        if (s->ncreated < MS__SIM_MAX_CREATED) {
            s->created_gpu[s->ncreated] = g;
            s->created_start[s->ncreated] = op->start;
            s->ncreated++;
        }
        break;
    case MS_OP_DESTROY:
        if (kind != MS__PK_SETUP)
            s->m->reconfigurations++;
        s->persist[g] = (uint16_t)(s->persist[g] & ~(1u << op->start));
        break;
    case MS_OP_START: {
        ms__sim_inst_t *in;
        const ms_gpu_t *gpu = &c->gpus[g];
        int ii = c->share == MS_SHARE_MIG ? ms_gpu_find_inst(gpu, op->start)
                                          : ms_gpu_find_job(gpu, op->job);

        if (j->st == MS__J_WAITING) {
            j->st = MS__J_RUNNING;
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
        ms__sim_touch(s, g);
        break;
    }
    case MS_OP_MOVE: {
        ms__sim_inst_t *in = &s->pool[slot];
        const ms_gpu_t *gpu = &c->gpus[g];
        int ii = ms_gpu_find_inst(gpu, op->start);

        ms__sim_emit_segment(s, op->job, in);
        ms__sim_settle(s, j);
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
        ms__sim_touch(s, g);
        ms__sim_touch(s, op->from_gpu);
        break;
    }
    case MS_OP_STOP:
        ms__sim_touch(s, g);
        break;
    default:
        break;
    }
    return MS_OK;
}

/* Apply s->plan op by op, then bring rates up to date. */
ms_status_t ms__sim_run_plan(ms__sim_t *s, int kind)
{
    int i;
    ms_status_t st;

    s->ncreated = 0;
    if (kind != MS__PK_SIM && kind != MS__PK_PLACE && s->plan.n > 0)
        s->changes++;
    for (i = 0; i < s->plan.n; i++)
        if ((st = apply_one(s, kind, i, &s->plan.ops[i])) != MS_OK)
            return st;
    if (kind == MS__PK_IDLE) {
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
    return ms__sim_update_rates(s);
}
