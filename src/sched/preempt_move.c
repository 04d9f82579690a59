/* preempt_move.c - a preemption's victims moved instead of stopped
 * (cfg.preempt_move; docs/tenants.md, "Preemption").
 *
 * preempt.c chooses the victims as without the option (the same set, GPU
 * and start: the option changes what happens to them, never whom it
 * takes). Here each victim that may move (migratable, one instance,
 * running, not placed or moved at this same instant: that would be a
 * zero-length segment and a pause for nothing, as in
 * ms__sched_moves_allowed) gets a destination: the lowest GPU of its own
 * group, then the lowest start, where its profile has a free legal start
 * now, never the preemptor's GPU, never a fenced GPU, on its class's node
 * when it has one. The victims are placed one after another on a scratch
 * copy of the GPUs' states, so two moves never take the same slices.
 * The lowest (GPU, start) rather than the group's policy: place() plans a
 * START for a queued job and may change the policy's own state, so it
 * cannot be asked about a running job without side effects.
 *
 * The moves are one plan of make_room's kind (MS_PK_ROOM), with
 * make_room's ops (ms_plan_add_move_mbb: CREATE at the destination, MOVE,
 * DESTROY of the old GI), issued before the stops of the other victims
 * and the preemptor's placement: an executor runs them in order, and a
 * failed move rolls back everything after it (docs/sched.md,
 * "Asynchronous execution"). A moved job stays live: it loses no work
 * and its tenant's charge stays (so no guarantee can be taken by it).
 */
#include "sched/sched_int.h"

/* A GPU's state as the moves planned so far left it. */
typedef struct scratch {
    int l[MS_MAX_INST];
    ms_state_t st[MS_MAX_INST];
    int n;
} scratch_t;

static bool may_move(const ms_sched_t *s, int32_t v, double now)
{
    const ms__job_t *j = &s->jobs[v];

    return j->migratable && j->gang == 1 && j->ninst == 1 && j->cls >= 0 &&
           j->state == MS_JOB_RUNNING && j->placed_t != now;
}

/* The lowest (GPU, start) of group gi, not local GPU lx, where victim v's
 * profile has a free legal start in sc's states; sc takes it. */
static bool dest(const ms_sched_t *s, int gi, int lx, int32_t v, scratch_t *sc, int *dl,
                 int *ds)
{
    const ms__grp_t *gr = &s->grp[gi];
    const ms__job_t *j = &s->jobs[v];
    const ms__cls_t *c = &s->cls[j->cls];
    int k = j->inst1.prof, from = 0, to = gr->ngpus, l, i;

    if (c->node >= 0) {
        if (s->node_grp[c->node] != gi)
            return false;
        from = s->g2l[s->node_first[c->node]];
        to = from + s->nodes[c->node].ngpus;
    }
    for (l = from; l < to; l++) {
        ms_state_t st = gr->c->gpus[l].state, ns;
        uint16_t fit;

        if (l == lx || (s->fence_of != NULL && s->fence_of[gr->l2g[l]] != 0))
            continue;
        for (i = 0; i < sc->n && sc->l[i] != l; i++)
            ;
        if (i < sc->n)
            st = sc->st[i];
        if ((fit = ms_state_fit(gr->geom, st, k)) == 0)
            continue;
        *ds = __builtin_ctz(fit);
        if ((ns = ms_state_place(gr->geom, st, k, *ds)) == MS_STATE_NONE)
            continue;
        if (i == sc->n) {
            if (sc->n == MS_MAX_INST)
                return false;   /* more GPUs touched than victims: cannot happen */
            sc->l[sc->n++] = l;
        }
        sc->st[i] = ns;
        *dl = l;
        return true;
    }
    return false;
}

ms_status_t ms__preempt_move(ms_sched_t *s, int gi, int l, int32_t *victims, int *n, double now)
{
    scratch_t sc;
    int i, kept = 0, moved = 0;
    ms_status_t st;

    sc.n = 0;
    ms_plan_clear(&s->plan);
    for (i = 0; i < *n; i++) {
        int32_t v = victims[i];
        const ms__job_t *j = &s->jobs[v];
        int dl, ds;

        if (!may_move(s, v, now) || !dest(s, gi, l, v, &sc, &dl, &ds)) {
            victims[kept++] = v;   /* stopped as without the option */
            continue;
        }
        if ((st = ms_plan_add_move_mbb(&s->plan, v, s->g2l[j->inst1.gpu], j->inst1.start, dl, ds,
                                       j->inst1.prof)) != MS_OK)
            return st;
        moved++;
    }
    *n = kept;
    if (moved == 0)
        return MS_OK;
    if ((st = ms__sched_run_plan(s, gi, MS_PK_ROOM, now)) != MS_OK)
        return st;
    s->st.preempt_moves += moved;
    return MS_OK;
}
