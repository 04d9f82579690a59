/* relayout.c - re-laying one GPU's instances (fa's intra-GPU migration and
 * make_room).
 *
 * Given the running instances of a GPU (and optionally one more profile to
 * make room for), enumerate every arrangement of the same multiset at legal
 * starts (identical profiles in ascending starts, so each arrangement once),
 * and keep the one with the lowest FragCost, then the fewest moved jobs,
 * then the first in enumeration order (profiles largest first, starts
 * ascending). Jobs keep their slice where the arrangement has a GI of
 * their profile there; the others take the remaining slots in ascending
 * order. An arrangement is only kept if its moves can be sequenced: each
 * step is make-before-break when the target's slices are free, else
 * break-before-make when they are free but for the job's own old GI; an
 * arrangement that needs a swap is skipped.
 */
#include "policy/policy_int.h"

#include <string.h>

typedef struct rl_ctx {
    const ms_geom_t *g;
    const double *cost;         /* FragCost per state */
    ms__relayout_t *r;
    int n;                      /* items, extra included */
    int8_t prof[MS_MAX_INST + 1];
    int8_t to[MS_MAX_INST + 1];
    int max_moves;
    double best_cost;
    int best_moves;
    bool found;
} rl_ctx_t;

/* Order the moves; false if some move can never be made. */
static bool sequence(const ms_geom_t *g, ms_state_t s, ms__move_t *mv, int n)
{
    bool done[MS_MAX_INST] = {false};
    ms__move_t out[MS_MAX_INST];
    int step, i;

    for (step = 0; step < n; step++) {
        int pick = -1, bbm = 0;
        for (i = 0; i < n && pick < 0; i++)
            if (!done[i] && ms_state_place(g, s, mv[i].prof, mv[i].to) != MS_STATE_NONE)
                pick = i;
        for (i = 0; i < n && pick < 0; i++) {
            ms_state_t s2;
            if (done[i])
                continue;
            s2 = ms_state_remove(g, s, mv[i].prof, mv[i].from);
            if (s2 != MS_STATE_NONE && ms_state_place(g, s2, mv[i].prof, mv[i].to) != MS_STATE_NONE) {
                pick = i;
                bbm = 1;
            }
        }
        if (pick < 0)
            return false;
        if (bbm) {
            s = ms_state_remove(g, s, mv[pick].prof, mv[pick].from);
            s = ms_state_place(g, s, mv[pick].prof, mv[pick].to);
        } else {
            s = ms_state_place(g, s, mv[pick].prof, mv[pick].to);
            s = ms_state_remove(g, s, mv[pick].prof, mv[pick].from);
        }
        if (s == MS_STATE_NONE)
            return false;
        out[step] = mv[pick];
        out[step].bbm = (int8_t)bbm;
        done[pick] = true;
    }
    memcpy(mv, out, (size_t)n * sizeof(*mv));
    return true;
}

/* A complete arrangement: assign jobs to slots, count moves, keep if best. */
static void leaf(rl_ctx_t *x, ms_state_t final)
{
    ms__relayout_t *r = x->r;
    ms__move_t mv[MS_MAX_INST];
    bool slot_used[MS_MAX_INST + 1] = {false}, placed[MS_MAX_INST] = {false};
    double cost = x->cost[final];
    int i, q, nmv = 0, extra_to = -1;

    if (x->found && cost > x->best_cost + 1e-12)
        return;
    /* jobs that already sit on a slot of their profile stay */
    for (i = 0; i < r->n; i++)
        for (q = 0; q < x->n; q++)
            if (!slot_used[q] && x->prof[q] == r->inst[i].prof && x->to[q] == r->inst[i].start) {
                slot_used[q] = placed[i] = true;
                break;
            }
    for (i = 0; i < r->n; i++) {
        if (placed[i])
            continue;
        for (q = 0; q < x->n; q++)
            if (!slot_used[q] && x->prof[q] == r->inst[i].prof)
                break;
        slot_used[q] = true;
        mv[nmv].job = r->inst[i].job;
        mv[nmv].prof = r->inst[i].prof;
        mv[nmv].from = r->inst[i].start;
        mv[nmv].to = x->to[q];
        mv[nmv].bbm = 0;
        nmv++;
    }
    for (q = 0; q < x->n; q++)
        if (!slot_used[q])
            extra_to = x->to[q];
    if (nmv > x->max_moves)
        return;
    if (x->found && cost >= x->best_cost - 1e-12 && nmv >= x->best_moves)
        return;
    if (!sequence(x->g, r->state, mv, nmv))
        return;
    x->found = true;
    x->best_cost = cost;
    x->best_moves = nmv;
    r->nmoves = nmv;
    memcpy(r->moves, mv, (size_t)nmv * sizeof(mv[0]));
    r->extra_start = extra_to;
    r->cost_after = cost;
    r->state_after = final;
}

static void rec(rl_ctx_t *x, int i, ms_state_t s)
{
    uint16_t fit;
    int st;

    if (i == x->n) {
        leaf(x, s);
        return;
    }
    fit = ms_state_fit(x->g, s, x->prof[i]);
    for (st = 0; st < ms_geom_width(x->g); st++) {
        ms_state_t ns;
        if (!((fit >> st) & 1u))
            continue;
        if (i > 0 && x->prof[i - 1] == x->prof[i] && st <= x->to[i - 1])
            continue;
        ns = ms_state_place(x->g, s, x->prof[i], st);
        if (ns == MS_STATE_NONE)
            continue;
        x->to[i] = (int8_t)st;
        rec(x, i + 1, ns);
    }
}

void ms__relayout_load(const ms_cluster_t *c, int gi, ms__relayout_t *r)
{
    const ms_gpu_t *gp = &c->gpus[gi];
    ms_state_t s = gp->state;
    int i;

    r->gpu = gi;
    r->n = 0;
    for (i = 0; i < gp->ninst; i++) {
        const ms_inst_t *in = &gp->inst[i];
        if (in->start < 0)
            continue;
        if (in->job < 0) {
            s = ms_state_remove(c->geom, s, in->prof, in->start);
            continue;
        }
        r->inst[r->n++] = *in;
    }
    r->state = s;
}

bool ms__relayout_best(const ms_geom_t *g, const double *cost, ms__relayout_t *r,
                       int extra, int max_moves)
{
    rl_ctx_t x;
    int i, j;

    memset(&x, 0, sizeof(x));
    x.g = g;
    x.cost = cost;
    x.r = r;
    x.max_moves = max_moves;
    for (i = 0; i < r->n; i++)
        x.prof[x.n++] = r->inst[i].prof;
    if (extra >= 0)
        x.prof[x.n++] = (int8_t)extra;
    for (i = 1; i < x.n; i++)   /* largest profile first */
        for (j = i; j > 0 && x.prof[j - 1] < x.prof[j]; j--) {
            int8_t t = x.prof[j];
            x.prof[j] = x.prof[j - 1];
            x.prof[j - 1] = t;
        }
    r->nmoves = 0;
    r->extra_start = -1;
    rec(&x, 0, ms_geom_empty_state());
    return x.found;
}

ms_status_t ms__relayout_emit(const ms_cluster_t *c, const ms__relayout_t *r, ms_plan_t *out)
{
    ms_status_t st;
    int i;

    if ((st = ms__destroy_idle(c, r->gpu, out)) != MS_OK)
        return st;
    for (i = 0; i < r->nmoves; i++) {
        const ms__move_t *m = &r->moves[i];
        st = m->bbm ? ms_plan_add_move_bbm(out, m->job, r->gpu, m->from, m->to, m->prof)
                    : ms_plan_add_move_mbb(out, m->job, r->gpu, m->from, r->gpu, m->to, m->prof);
        if (st != MS_OK)
            return st;
    }
    return MS_OK;
}
