/* plan.c - building plans and applying them to a cluster.
 *
 * ms_cluster_apply_op() is the only code that changes instances; it keeps
 * each GPU's state number, busy compute and index bucket in step.
 */
#include "migsched/plan.h"

#include <stdlib.h>
#include <string.h>

#include "core/index.h"

void ms_plan_init(ms_plan_t *p)
{
    p->ops = NULL;
    p->n = p->cap = 0;
}

void ms_plan_fini(ms_plan_t *p)
{
    if (p == NULL)
        return;
    free(p->ops);
    ms_plan_init(p);
}

ms_status_t ms_plan_add(ms_plan_t *p, const ms_op_t *op)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        ms_op_t *ops = realloc(p->ops, (size_t)cap * sizeof(*ops));
        if (ops == NULL)
            return MS_ENOMEM;
        p->ops = ops;
        p->cap = cap;
    }
    p->ops[p->n++] = *op;
    return MS_OK;
}

static ms_op_t op_make(int kind, int32_t job, int gpu, int start, int prof)
{
    ms_op_t op;

    memset(&op, 0, sizeof(op));
    op.kind = (uint8_t)kind;
    op.job = job;
    op.gpu = gpu;
    op.start = (int8_t)start;
    op.prof = (int8_t)prof;
    op.from_gpu = -1;
    op.from_start = -1;
    return op;
}

ms_status_t ms_plan_add_create(ms_plan_t *p, int gpu, int prof, int start)
{
    ms_op_t op = op_make(MS_OP_CREATE, -1, gpu, start, prof);
    return ms_plan_add(p, &op);
}

ms_status_t ms_plan_add_destroy(ms_plan_t *p, int gpu, int start)
{
    ms_op_t op = op_make(MS_OP_DESTROY, -1, gpu, start, -1);
    return ms_plan_add(p, &op);
}

ms_status_t ms_plan_add_start(ms_plan_t *p, int32_t job, int gpu, int start, int prof)
{
    ms_op_t op = op_make(MS_OP_START, job, gpu, start, prof);
    return ms_plan_add(p, &op);
}

ms_status_t ms_plan_add_move_mbb(ms_plan_t *p, int32_t job, int from_gpu, int from_start,
                             int gpu, int start, int prof)
{
    ms_op_t op = op_make(MS_OP_MOVE, job, gpu, start, prof);
    ms_status_t st;

    op.from_gpu = from_gpu;
    op.from_start = (int8_t)from_start;
    if ((st = ms_plan_add_create(p, gpu, prof, start)) != MS_OK)
        return st;
    if ((st = ms_plan_add(p, &op)) != MS_OK)
        return st;
    return ms_plan_add_destroy(p, from_gpu, from_start);
}

ms_status_t ms_plan_add_move_bbm(ms_plan_t *p, int32_t job, int gpu, int from_start,
                             int start, int prof)
{
    ms_op_t op = op_make(MS_OP_MOVE, job, gpu, start, prof);

    op.from_gpu = gpu;
    op.from_start = (int8_t)from_start;
    op.bbm = 1;
    return ms_plan_add(p, &op);
}

ms_status_t ms_plan_add_whole_gpu(ms_plan_t *p, const ms_cluster_t *c, int gpu, int32_t job,
                                  bool keep_full)
{
    int full = ms_geom_full_profile(c->geom), s0, i;
    const ms_gpu_t *gp;
    bool keep = false;
    ms_status_t st;

    if (gpu < 0 || gpu >= c->ngpus)
        return MS_ESTATE;
    if (full < 0)
        return MS_ENOFIT;
    s0 = ms_geom_first_start(c->geom, full);
    gp = &c->gpus[gpu];
    for (i = 0; i < gp->ninst; i++) {
        const ms_inst_t *in = &gp->inst[i];

        if (in->job >= 0)
            return MS_ESTATE;
        if (keep_full && in->prof == full && in->start == s0)
            keep = true;   /* the instance it needs, idle: no destroy and create */
        else if (in->start >= 0 && (st = ms_plan_add_destroy(p, gpu, in->start)) != MS_OK)
            return st;
    }
    if (!keep && (st = ms_plan_add_create(p, gpu, full, s0)) != MS_OK)
        return st;
    return ms_plan_add_start(p, job, gpu, s0, full);
}

/* --- applying ---------------------------------------------------------- */

static void set_state(ms_cluster_t *c, int g, ms_state_t ns)
{
    ms_gpu_t *gpu = &c->gpus[g];

    if (gpu->state == ns)
        return;
    if (c->index != NULL) {
        ms__index_del(c->index, gpu->state, g);
        ms__index_add(c->index, ns, g);
    }
    gpu->state = ns;
}

/* Insert an instance keeping the list sorted by start (slots: append). */
static int inst_insert(ms_gpu_t *gpu, int32_t job, int prof, int start)
{
    int i = gpu->ninst;

    if (gpu->ninst >= MS_MAX_INST)
        return -1;
    if (start >= 0)
        while (i > 0 && gpu->inst[i - 1].start > start) {
            gpu->inst[i] = gpu->inst[i - 1];
            i--;
        }
    gpu->inst[i].job = job;
    gpu->inst[i].prof = (int8_t)prof;
    gpu->inst[i].start = (int8_t)start;
    gpu->ninst++;
    return i;
}

static void inst_remove(ms_gpu_t *gpu, int i)
{
    memmove(&gpu->inst[i], &gpu->inst[i + 1],
            (size_t)(gpu->ninst - i - 1) * sizeof(gpu->inst[0]));
    gpu->ninst--;
}

static int gpu_ok(const ms_cluster_t *c, int g)
{
    return g >= 0 && g < c->ngpus;
}

static int cslices(const ms_cluster_t *c, int prof)
{
    return ms_geom_profile(c->geom, prof)->cslices;
}

ms_status_t ms_cluster_apply_op(ms_cluster_t *c, const ms_op_t *op)
{
    const ms_geom_t *g = c->geom;
    ms_gpu_t *gpu;
    ms_state_t ns;
    int i, j;

    if (!gpu_ok(c, op->gpu))
        return MS_ESTATE;
    c->version++;
    c->freed += op->kind == MS_OP_STOP || op->kind == MS_OP_DESTROY || op->kind == MS_OP_MOVE;
    gpu = &c->gpus[op->gpu];
    switch (op->kind) {
    case MS_OP_CREATE:
        if (c->share != MS_SHARE_MIG || op->prof < 0 || op->prof >= ms_geom_nprofiles(g))
            return MS_ESTATE;
        ns = ms_state_place(g, gpu->state, op->prof, op->start);
        if (ns == MS_STATE_NONE || inst_insert(gpu, -1, op->prof, op->start) < 0)
            return MS_ESTATE;
        set_state(c, op->gpu, ns);
        return MS_OK;

    case MS_OP_DESTROY:
        if (c->share != MS_SHARE_MIG)
            return MS_ESTATE;
        i = ms_gpu_find_inst(gpu, op->start);
        if (i < 0 || gpu->inst[i].job >= 0)
            return MS_ESTATE;
        ns = ms_state_remove(g, gpu->state, gpu->inst[i].prof, op->start);
        if (ns == MS_STATE_NONE)
            return MS_ESTATE;
        inst_remove(gpu, i);
        set_state(c, op->gpu, ns);
        return MS_OK;

    case MS_OP_START:
        if (op->job < 0 || op->prof < 0 || op->prof >= ms_geom_nprofiles(g))
            return MS_ESTATE;
        if (c->share == MS_SHARE_TIMESLICE) {
            if (op->start != -1 || gpu->ninst >= c->replicas)
                return MS_ESTATE;
            if (inst_insert(gpu, op->job, op->prof, -1) < 0)
                return MS_ESTATE;
            gpu->busy = (uint8_t)(gpu->busy + cslices(c, op->prof));
            return MS_OK;
        }
        i = ms_gpu_find_inst(gpu, op->start);
        if (i < 0 || gpu->inst[i].job >= 0)
            return MS_ESTATE;
        /* the GI must be at least the job's profile */
        if (cslices(c, gpu->inst[i].prof) < cslices(c, op->prof))
            return MS_ESTATE;
        gpu->inst[i].job = op->job;
        gpu->busy = (uint8_t)(gpu->busy + cslices(c, gpu->inst[i].prof));
        return MS_OK;

    case MS_OP_STOP:
        i = ms_gpu_find_job(gpu, op->job);
        if (op->job < 0 || i < 0)
            return MS_ESTATE;
        gpu->busy = (uint8_t)(gpu->busy - cslices(c, gpu->inst[i].prof));
        if (c->share == MS_SHARE_TIMESLICE)
            inst_remove(gpu, i);
        else
            gpu->inst[i].job = -1;
        return MS_OK;

    case MS_OP_MOVE: {
        ms_gpu_t *from;
        int8_t from_prof;

        if (c->share != MS_SHARE_MIG || !gpu_ok(c, op->from_gpu) || op->job < 0)
            return MS_ESTATE;
        from = &c->gpus[op->from_gpu];
        j = ms_gpu_find_inst(from, op->from_start);
        if (j < 0 || from->inst[j].job != op->job)
            return MS_ESTATE;
        from_prof = from->inst[j].prof;
        if (op->bbm) {
            /* destroy the old GI, create the new one, same GPU */
            if (op->from_gpu != op->gpu)
                return MS_ESTATE;
            ns = ms_state_remove(g, gpu->state, from_prof, op->from_start);
            if (ns == MS_STATE_NONE)
                return MS_ESTATE;
            ns = ms_state_place(g, ns, op->prof, op->start);
            if (ns == MS_STATE_NONE)
                return MS_ESTATE;
            gpu->busy = (uint8_t)(gpu->busy - cslices(c, from_prof));
            inst_remove(gpu, j);
            if (inst_insert(gpu, op->job, op->prof, op->start) < 0)
                return MS_ESTATE;
            gpu->busy = (uint8_t)(gpu->busy + cslices(c, op->prof));
            set_state(c, op->gpu, ns);
            return MS_OK;
        }
        i = ms_gpu_find_inst(gpu, op->start);
        if (i < 0 || gpu->inst[i].job >= 0 || (gpu == from && i == j))
            return MS_ESTATE;
        if (cslices(c, gpu->inst[i].prof) < cslices(c, from_prof) &&
            cslices(c, gpu->inst[i].prof) < cslices(c, op->prof))
            return MS_ESTATE;
        gpu->inst[i].job = op->job;
        gpu->busy = (uint8_t)(gpu->busy + cslices(c, gpu->inst[i].prof));
        from->inst[j].job = -1;
        from->busy = (uint8_t)(from->busy - cslices(c, from_prof));
        return MS_OK;
    }
    default:
        return MS_ESTATE;
    }
}

ms_status_t ms_cluster_apply(ms_cluster_t *c, const ms_plan_t *p, int *failed_op)
{
    int i;

    for (i = 0; i < p->n; i++) {
        ms_status_t st = ms_cluster_apply_op(c, &p->ops[i]);
        if (st != MS_OK) {
            if (failed_op != NULL)
                *failed_op = i;
            return st;
        }
    }
    return MS_OK;
}
