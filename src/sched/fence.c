/* fence.c - GPUs the scheduler must not place on: a cordoned GPU (the
 * service marks a GPU that keeps failing unhealthy) and GIs the hardware
 * has that this scheduler does not own (a create refused because another
 * scheduler's instance holds the slices).
 *
 * Every policy decides from the view's occupancy (state numbers, the
 * index, each GPU's instances), so a fence is occupancy: on a fenced GPU
 * an internal job of the scheduler (no id, never migratable, never ending)
 * holds
 *   - the foreign GIs: created in the view where their slices are free, or
 *     the view's idle GI when it is the same one;
 *   - when cordoned, every idle GI and, in the view only, GIs that fill the
 *     free slices until no profile fits (largest first); on a time-sliced
 *     or whole GPU every free slot.
 * To every policy, the extender's holds and scores, and EASY's
 * reservations (the fence never ends) the space is taken; no plan names
 * the fence and no executor sees its ops (they are applied to the view
 * directly, through ms__sched_cluster_op like every change of a cluster,
 * so the incremental pass and EASY's trackers see the fence come and go).
 * The jobs that run on a cordoned GPU go on and leave as usual;
 * the fence takes what they free: every plan's GPUs are fenced again after
 * it is applied (apply.c), and a rollback (ops.c) lifts every fence while
 * it undoes the view and puts them back before the scheduling pass.
 *
 * The fence's job is RUNNING while it holds something and DONE (no
 * instances) otherwise, so ms_sched_check's rules hold as for any job,
 * but it has no class and is never charged to a tenant (tenant.c); its
 * instance array is allocated when the fence is made, so fencing again
 * after a plan never allocates. Cost: nothing while no GPU is fenced;
 * O(instances of the GPU) per fenced GPU a plan touches.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

/* The fence of global GPU g, NULL if none. */
static ms__fence_t *fence_get(const ms_sched_t *s, int32_t g)
{
    if (s->fence_of == NULL || g < 0 || g >= s->ngpus || s->fence_of[g] == 0)
        return NULL;
    return &s->fence[s->fence_of[g] - 1];
}

/* Apply a fence op to the view through ms__sched_cluster_op, like every
 * change of a cluster: it stamps the group (a STOP or DESTROY frees
 * capacity, so lifting a fence re-offers the classes it blocked; a CREATE
 * or START only takes capacity) and marks the GPU for the EASY trackers. */
static ms_status_t view_op(ms_sched_t *s, int gi, int kind, int32_t job, int l, int start, int prof)
{
    ms_op_t op;

    memset(&op, 0, sizeof(op));
    op.kind = (uint8_t)kind;
    op.job = job;
    op.gpu = l;
    op.start = (int8_t)start;
    op.prof = (int8_t)prof;
    op.from_gpu = -1;
    op.from_start = -1;
    return ms__sched_cluster_op(s, gi, &op, kind == MS_OP_CREATE || kind == MS_OP_START);
}

/* The fence's job holds instance (start, prof) of its GPU. */
static void hold(ms_sched_t *s, ms__fence_t *f, int start, int prof, double now)
{
    ms__job_t *j = &s->jobs[f->slot];

    if (j->ninst == 0) {
        j->state = MS_JOB_RUNNING;
        j->group = s->g2grp[f->gpu];
        j->start_t = now;
        j->placed_t = now;
    }
    j->insts[j->ninst].gpu = f->gpu;
    j->insts[j->ninst].start = (int8_t)start;
    j->insts[j->ninst].prof = (int8_t)prof;
    j->ninst++;
    /* a job of one instance keeps it in inst1 (ms__sched_insts) */
    j->gang = (int16_t)j->ninst;
    j->inst1 = j->insts[0];
}

/* Lift the fence from the view: the GPU as its own jobs left it. */
static void fence_clear(ms_sched_t *s, ms__fence_t *f)
{
    ms__job_t *j = &s->jobs[f->slot];
    int gi = s->g2grp[f->gpu], l = s->g2l[f->gpu], i;

    /* a STOP idles the first instance of the job it finds: every one is
     * idle after ninst of them, then the GIs the fence made go */
    for (i = 0; i < j->ninst; i++)
        (void)view_op(s, gi, MS_OP_STOP, f->slot, l, j->insts[i].start, j->insts[i].prof);
    for (i = 0; i < j->ninst; i++) {
        const ms_sched_inst_t *in = &j->insts[i];

        if (in->start >= 0 && (f->made >> in->start & 1u))
            (void)view_op(s, gi, MS_OP_DESTROY, -1, l, in->start, in->prof);
    }
    j->ninst = 0;
    j->gang = 1;
    j->group = -1;
    j->state = MS_JOB_DONE;
    f->made = 0;
    f->fill = 0;
}

/* Create GI (k, st) in the view and hold it: true if it was placed. */
static bool make_held(ms_sched_t *s, ms__fence_t *f, int k, int st, bool fill, double now)
{
    int gi = s->g2grp[f->gpu], l = s->g2l[f->gpu];

    if (view_op(s, gi, MS_OP_CREATE, -1, l, st, k) != MS_OK)
        return false;
    if (view_op(s, gi, MS_OP_START, f->slot, l, st, k) != MS_OK) {
        (void)view_op(s, gi, MS_OP_DESTROY, -1, l, st, k);
        return false;
    }
    f->made = (uint16_t)(f->made | (1u << st));
    if (fill)
        f->fill = (uint16_t)(f->fill | (1u << st));
    hold(s, f, st, k, now);
    return true;
}

/* The largest profile that fits the GPU's state anywhere (its lowest
 * start in *st); -1 when none. */
static int largest_fit(const ms_geom_t *g, ms_state_t state, int *st)
{
    int k, best = -1, np = ms_geom_nprofiles(g);
    uint16_t at = 0;

    for (k = 0; k < np; k++) {
        uint16_t fit = ms_state_fit(g, state, k);

        if (fit != 0 && (best < 0 || ms_geom_profile(g, k)->msize > ms_geom_profile(g, best)->msize)) {
            best = k;
            at = fit;
        }
    }
    if (best >= 0) {
        *st = 0;
        while (!(at >> *st & 1u))
            (*st)++;
    }
    return best;
}

/* Put the fence on the view: the foreign GIs, then (cordoned) everything
 * else that is free or idle. */
static void fence_fill(ms_sched_t *s, ms__fence_t *f, double now)
{
    int gi = s->g2grp[f->gpu], l = s->g2l[f->gpu], i, k, st;
    ms_cluster_t *c = s->grp[gi].c;
    const ms_gpu_t *gpu = &c->gpus[l];
    ms__job_t *j = &s->jobs[f->slot];

    if (c->share != MS_SHARE_MIG) {
        int prof = 0;

        while (f->cordoned && gpu->ninst < c->replicas && j->ninst < MS_MAX_INST &&
               view_op(s, gi, MS_OP_START, f->slot, l, -1, prof) == MS_OK)
            hold(s, f, -1, prof, now);
        return;
    }
    for (i = 0; i < f->nforeign; i++) {
        const ms_gi_t *x = &f->foreign[i];
        int ii = ms_gpu_find_inst(gpu, x->start);

        if (j->ninst >= MS_MAX_INST)
            break;
        if (ii >= 0) {   /* the view has a GI there: the same idle one is the foreign one */
            if (gpu->inst[ii].job < 0 && gpu->inst[ii].prof == x->prof &&
                view_op(s, gi, MS_OP_START, f->slot, l, x->start, x->prof) == MS_OK)
                hold(s, f, x->start, x->prof, now);
            continue;
        }
        (void)make_held(s, f, x->prof, x->start, false, now);   /* overlaps the view's own: left */
    }
    if (!f->cordoned)
        return;
    for (i = 0; i < gpu->ninst && j->ninst < MS_MAX_INST; i++)
        if (gpu->inst[i].job < 0 &&
            view_op(s, gi, MS_OP_START, f->slot, l, gpu->inst[i].start, gpu->inst[i].prof) == MS_OK)
            hold(s, f, gpu->inst[i].start, gpu->inst[i].prof, now);
    /* each round adds a GI, and a GPU holds at most MS_MAX_INST */
    while (j->ninst < MS_MAX_INST && (k = largest_fit(c->geom, gpu->state, &st)) >= 0)
        if (!make_held(s, f, k, st, true, now))
            break;
}

/* The fence of g, made (with its job) if need be; NULL out of memory. */
static ms__fence_t *fence_make(ms_sched_t *s, int32_t g)
{
    ms__fence_t *f;
    int32_t slot;

    if ((f = fence_get(s, g)) != NULL)
        return f;
    if (s->fence_of == NULL && (s->fence_of = ms__scalloc(s, (size_t)s->ngpus, sizeof(*s->fence_of))) == NULL)
        return NULL;
    if (s->nfence == s->capfence) {
        int cap = s->capfence ? s->capfence * 2 : 8;
        ms__fence_t *v = ms__srealloc(s, s->fence, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return NULL;
        s->fence = v;
        s->capfence = cap;
    }
    if (ms__sched_job_alloc(s, NULL, &slot) != MS_OK)
        return NULL;
    if ((s->jobs[slot].insts = ms__scalloc(s, MS_MAX_INST, sizeof(ms_sched_inst_t))) == NULL) {
        ms__sched_job_release(s, slot);
        return NULL;
    }
    s->jobs[slot].state = MS_JOB_DONE;
    s->jobs[slot].gang = 1;
    s->jobs[slot].estimate = INFINITY;   /* EASY: it never frees what it holds */
    s->jobs[slot].seq = s->seq++;
    f = &s->fence[s->nfence];
    memset(f, 0, sizeof(*f));
    f->gpu = g;
    f->slot = slot;
    s->fence_of[g] = ++s->nfence;
    return f;
}

/* Drop g's fence (lifted already) and its job. */
static void fence_drop(ms_sched_t *s, ms__fence_t *f)
{
    int idx = (int)(f - s->fence);

    ms__sched_job_release(s, f->slot);
    s->fence_of[f->gpu] = 0;
    if (idx != s->nfence - 1) {
        s->fence[idx] = s->fence[s->nfence - 1];
        s->fence_of[s->fence[idx].gpu] = idx + 1;
    }
    s->nfence--;
}

void ms__fence_lift_all(ms_sched_t *s)
{
    int i;

    for (i = 0; i < s->nfence; i++)
        fence_clear(s, &s->fence[i]);
    s->fence_lifted = s->nfence > 0;
}

void ms__fence_put_all(ms_sched_t *s, double now)
{
    int i;

    s->fence_lifted = false;
    for (i = 0; i < s->nfence; i++) {
        fence_clear(s, &s->fence[i]);
        fence_fill(s, &s->fence[i], now);
    }
}

void ms__fence_after_plan(ms_sched_t *s, int gi, double now)
{
    const ms__grp_t *gr = &s->grp[gi];
    int i;

    if (s->nfence == 0 || s->fence_lifted)
        return;
    for (i = 0; i < s->plan.n; i++) {
        const ms_op_t *op = &s->plan.ops[i];
        ms__fence_t *f;

        if (op->gpu >= 0 && op->gpu < gr->ngpus && (f = fence_get(s, gr->l2g[op->gpu])) != NULL) {
            fence_clear(s, f);
            fence_fill(s, f, now);
        }
        if (op->kind == MS_OP_MOVE && op->from_gpu >= 0 && op->from_gpu < gr->ngpus &&
            (f = fence_get(s, gr->l2g[op->from_gpu])) != NULL) {
            fence_clear(s, f);
            fence_fill(s, f, now);
        }
    }
}

/* Set g's fence to (cordoned, foreign) and put it on the view. */
static ms_status_t fence_set(ms_sched_t *s, int32_t g, bool cordoned, const ms_gi_t *gis, int n, bool set_gis,
                             double now)
{
    ms__fence_t *f = fence_get(s, g);

    if (f == NULL) {
        if (!cordoned && (!set_gis || n == 0))
            return MS_OK;
        if ((f = fence_make(s, g)) == NULL)
            return MS_ENOMEM;
    }
    fence_clear(s, f);
    f->cordoned = cordoned;
    if (set_gis) {
        f->nforeign = n;
        if (n > 0)
            memcpy(f->foreign, gis, (size_t)n * sizeof(*gis));
    }
    if (!f->cordoned && f->nforeign == 0) {
        fence_drop(s, f);
        return MS_OK;
    }
    if (!s->fence_lifted)
        fence_fill(s, f, now);
    return MS_OK;
}

ms_status_t ms_sched_gpu_cordon(ms_sched_t *s, int32_t gpu, bool on, double now)
{
    const ms__fence_t *f;

    if (gpu < 0 || gpu >= s->ngpus)
        return MS_EINVAL;
    f = fence_get(s, gpu);
    if ((f != NULL && f->cordoned == on) || (f == NULL && !on))
        return MS_OK;
    return fence_set(s, gpu, on, NULL, 0, false, now);
}

ms_status_t ms_sched_gpu_hold(ms_sched_t *s, int32_t gpu, const ms_gi_t *gis, int n, double now)
{
    const ms__fence_t *f;
    const ms_geom_t *g;
    int i;

    if (gpu < 0 || gpu >= s->ngpus || n < 0 || n > MS_MAX_INST || (n > 0 && gis == NULL))
        return MS_EINVAL;
    g = s->grp[s->g2grp[gpu]].geom;
    for (i = 0; i < n; i++) {
        const ms_profile_t *p;

        if (gis[i].prof < 0 || gis[i].prof >= ms_geom_nprofiles(g))
            return MS_EINVAL;
        p = ms_geom_profile(g, gis[i].prof);
        if (gis[i].start < 0 || !(p->start_mask >> gis[i].start & 1u))
            return MS_EINVAL;
    }
    f = fence_get(s, gpu);
    return fence_set(s, gpu, f != NULL && f->cordoned, gis, n, true, now);
}

bool ms_sched_gpu_fenced(const ms_sched_t *s, int32_t gpu, ms_sched_fence_t *out)
{
    const ms__fence_t *f = fence_get(s, gpu);

    if (out != NULL) {
        out->cordoned = f != NULL && f->cordoned;
        out->slot = f != NULL ? f->slot : -1;
        out->view_only = f != NULL ? f->fill : 0;
        out->foreign = f != NULL ? (uint16_t)(f->made & ~f->fill) : 0;
    }
    return f != NULL;
}
