/* preempt.c - preemption by MIG geometry (cfg.preempt; docs/tenants.md,
 * "Preemption").
 *
 * When the head of the queue fits nowhere (and make_room did nothing), the
 * pass asks here (and for a blocked head behind it that reclaims its
 * tenant's guarantee or, with tenants, outranks it: queue.c's
 * preempts_behind): on each GPU where its profile exists, ms_victims_gpu
 * finds the cheapest set of eligible running jobs whose stopping gives the
 * profile a legal start; the cheapest over all GPUs (victims, then lost run
 * time, then the lowest GPU) is taken. The victims are stopped as a cancel
 * would stop them (an MS_PK_STOP plan each) but go back to the queue at
 * their old place (their submission time and order kept: their wait counts
 * from their submission, and they run their full duration again); then the
 * head is started at the freed start in an MS_PK_PLACE plan (DESTROYs of
 * idle GIs in the way, the CREATE, the START). With cfg.preempt_move, the
 * victims that can move elsewhere are moved first instead of stopped
 * (preempt_move.c).
 *
 * Who may be a victim of head h (priority p, tenant T): a running job
 * (not starting, migrating or reserved) of one instance, not marked
 * nonpreemptible, that has run for preempt_grace_s at least, and
 *   - has a priority below p, or
 *   - reclaim: T has a guarantee and is within it with h started (in each
 *     dimension it declares, slices and memory: ms__tenant_within), or no
 *     farther from it with h started than it is (reclaim_models), the
 *     job is another tenant's, and its priority is not above p; when T is
 *     within only by a per model guarantee (tenant_model.c), the job is
 *     on a GPU of a model where it is;
 * and, when it is another tenant's, stopping it (with the other victims
 * of that tenant on the GPU) leaves that tenant at or above its
 * guarantee in each dimension it declares (ms__tenant_keeps) and on the
 * victims' model (ms__tenant_keeps_model): a guarantee is never taken by
 * preemption.
 * A gang may be a victim as any job (stopping it frees every GPU it holds;
 * it counts as one victim, its lost work its run so far), and a gang head
 * preempts for gang GPUs of one node (preempt_gang.c). With
 * preempt_after_s, a head preempts only once it has waited that long
 * (seen at the next pass: an event or a tick).
 *
 * Cost: nothing when preemption is off. When it is on, a blocked head
 * costs O(distinct priorities + tenants) unless someone could be a victim
 * (live possible victims are counted by priority and by tenant as they
 * start and leave); only then a search over the GPUs of its candidate
 * groups, O(GPUs x instances). The rate limit (at most preempt_rate in any
 * 60 s) is checked before any search. A search that found nothing is not
 * repeated for the same head until something changed (an op, a tenant's
 * usage, an op confirmed), a running job's grace period ended, or a job
 * past preempt_max_lost_s since its last checkpoint reached its next one
 * (ms__preempt_until_note): the same answer, without asking (each class
 * keeps its head's: s->pmemo; test_preempt compares with a scheduler that
 * always searches).
 */
#include <math.h>
#include <string.h>

#include "sched/sched_int.h"

#define RATE_WINDOW_S 60.0

static bool counted(const ms__job_t *j)
{
    return !j->nopreempt && j->cls >= 0;
}

void ms__preempt_count(ms_sched_t *s, int32_t slot, int d)
{
    const ms__job_t *j = &s->jobs[slot];
    int i;

    if (!counted(j))
        return;
    ms__tenant(s, s->cls[j->cls].tenant)->pre_running += d;
    for (i = 0; i < s->npc; i++)
        if (s->pc_prio[i] == j->priority) {
            s->pc_n[i] += d;
            return;
        }
    if (d > 0 && s->npc < MS__PC_MAX) {
        s->pc_prio[s->npc] = j->priority;
        s->pc_n[s->npc++] = d;
        return;
    }
    s->pc_other += d;   /* the table was full when it started: still not in it */
}

void ms__preempt_fini(ms_sched_t *s)
{
    ms__sfree(s, s->pre_ring);
    s->pre_ring = NULL;
}

ms_status_t ms__preempt_check(const ms_sched_t *s)
{
    long n[MS__PC_MAX], other = 0, tot = 0;
    int32_t slot;
    int i, t;

    memset(n, 0, sizeof(n));
    for (slot = 0; slot < s->njobs; slot++) {
        const ms__job_t *j = &s->jobs[slot];

        if (j->state == MS__SLOT_FREE || j->charge <= 0 || !counted(j))
            continue;
        for (i = 0; i < s->npc && s->pc_prio[i] != j->priority; i++)
            ;
        if (i < s->npc)
            n[i]++;
        else
            other++;
        tot++;
    }
    for (i = 0; i < s->npc; i++)
        if (n[i] != s->pc_n[i])
            return MS_ESTATE;
    if (other != s->pc_other)
        return MS_ESTATE;
    for (t = 0; t < s->nten; t++)
        tot -= ms__tenant_c(s, t)->pre_running;
    return tot == 0 ? MS_OK : MS_ESTATE;
}

/* May another preemption happen at now under the rate limit? */
static bool rate_ok(const ms_sched_t *s, double now)
{
    int r = s->cfg.preempt_rate;

    if (r <= 0 || s->pre_n < r)
        return true;
    /* the oldest of the last r: one more now would make r + 1 within less
     * than the window */
    return now - s->pre_ring[s->pre_head] >= RATE_WINDOW_S;
}

static ms_status_t rate_note(ms_sched_t *s, double now)
{
    int r = s->cfg.preempt_rate;

    if (r <= 0)
        return MS_OK;
    if (s->pre_ring == NULL && (s->pre_ring = ms__salloc(s, (size_t)r * sizeof(double))) == NULL)
        return MS_ENOMEM;
    if (s->pre_n < r) {
        s->pre_ring[(s->pre_head + s->pre_n) % r] = now;
        s->pre_n++;
    } else {
        s->pre_ring[s->pre_head] = now;
        s->pre_head = (s->pre_head + 1) % r;
    }
    return MS_OK;
}

/* The models on which class c's head reclaims (bit per ms_models()
 * index): every one (~0u) when its tenant has a cluster-wide guarantee,
 * slices or memory, and is within it with d slices and mem GB more; else
 * those where it is within its tenant's per model guarantee (reclaim
 * there only: Kueue reclaims a flavor's nominal quota on that flavor);
 * 0: none. */
static uint32_t models_within(const ms_sched_t *s, const ms__cls_t *c, long d, double mem)
{
    const ms__tenant_t *t = ms__tenant_c(s, c->tenant);

    if (!s->ten_on)
        return 0;
    if ((t->guarantee > 0 || t->mem_guarantee > 0.0) && ms__tenant_within(t, d, mem))
        return ~0u;
    return ms__tenant_within_models(s, c);
}

/* The models on which class c's head reclaims: cluster-wide, when its
 * start leaves the tenant no farther from its guarantee than it is now
 * (2 usage + head <= 2 guarantee, in each declared dimension: within it
 * with half the head started). Within it with the whole head is the
 * usual case; the rest is a head larger than what is still owed: ret, 6
 * slices short with only 7g jobs waiting, could never reclaim them, and
 * bg's borrowed work kept them until it ended on its own
 * (reclaim-8xA100 with --preempt: 742 s on seed 4, 980 s on seed 7;
 * test_tenant_starve's test_straddle). Half, not any head: 1 slice
 * short, a 7g would stop borrowed work to take 6 slices more than the
 * guarantee. The victims keep their tenants' guarantees as before, so a
 * guarantee is still never taken; per model guarantees stay whole-head. */
static uint32_t reclaim_models(const ms_sched_t *s, const ms__cls_t *c)
{
    return models_within(s, c, ((long)c->hdem + 1) / 2, (double)c->hmem / 2.0);
}

static bool reclaims(const ms_sched_t *s, const ms__cls_t *c)
{
    return reclaim_models(s, c) != 0;
}

bool ms__preempt_reclaims(const ms_sched_t *s, int32_t cls)
{
    return reclaims(s, &s->cls[cls]);
}

/* Is class best's head owed its tenant's guarantee (within it with the
 * whole head started) while the head of the queue, class head, would
 * borrow and another tenant does? Then no reservation for that head holds
 * it back: borrowed capacity, even promised, never keeps a guarantee
 * waiting (test_tenant_starve). Whole heads here, not reclaim's halves:
 * this rule holds without --preempt too, whose schedules a head larger
 * than what is owed does not change. */
bool ms__preempt_owed(const ms_sched_t *s, int best, int head)
{
    const ms__cls_t *b = &s->cls[best], *h = &s->cls[head];
    int t;

    if (!s->ten_on || models_within(s, b, b->hdem, b->hmem) == 0 ||
        models_within(s, h, h->hdem, h->hmem) != 0)
        return false;
    for (t = 0; t < s->nten; t++)
        if (t != s->cls[best].tenant && ms__tenant_over(ms__tenant_c(s, t)))
            return true;
    return false;   /* nobody else borrows (one tenant: as without tenants) */
}

/* A start took tenant t over its guarantee: its jobs may now be victims
 * of a blocked head within its own guarantee that found none before in
 * this pass; offer those again (else the reclaim waited for the next
 * event, however long, while borrowed work ran: test_tenant_starve). */
void ms__preempt_reclaim_again(const ms_sched_t *s, uint8_t *blocked, int32_t t)
{
    int k;

    if (!s->cfg.preempt || !ms__tenant_over(ms__tenant_c(s, t)))
        return;
    for (k = 0; k < s->ncls; k++)
        if (blocked[k] && s->cls[k].tenant != t && s->cls[k].qhead >= 0 && reclaims(s, &s->cls[k]))
            blocked[k] = 0;
}

/* Could anyone be a victim at all (the fast skip)? */
static bool anyone(const ms_sched_t *s, const ms__phead_t *h)
{
    int i, t;

    if (s->pc_other > 0)
        return true;
    for (i = 0; i < s->npc; i++)
        if (s->pc_n[i] > 0 && s->pc_prio[i] < h->prio)
            return true;
    if (!h->reclaim)
        return false;
    for (t = 0; t < s->nten; t++) {
        const ms__tenant_t *u = ms__tenant_c(s, t);

        if (t != h->tenant && u->pre_running > 0 && ms__tenant_over(u))
            return true;
    }
    return false;
}

void ms__preempt_until_note(const ms_sched_t *s, const ms__phead_t *h, int32_t v, double *until)
{
    const ms__job_t *j = &s->jobs[v];
    double end = j->start_t + s->cfg.preempt_grace_s, lost;

    if (h->now - j->start_t < s->cfg.preempt_grace_s && end < *until)
        *until = end;
    /* past the bound on a victim's loss since its last checkpoint: within
     * it again at its next one */
    if (s->cfg.preempt_max_lost_s > 0.0 && j->checkpoint > 0.0 && j->state == MS_JOB_RUNNING &&
        (lost = ms__job_lost(j, h->now)) > s->cfg.preempt_max_lost_s &&
        (end = h->now - lost + j->checkpoint) < *until)
        *until = end;
}

bool ms__preempt_eligible(const ms_sched_t *s, const ms__phead_t *h, int32_t v)
{
    const ms__job_t *j;
    int32_t t;
    int mi;

    if (v < 0 || v >= s->njobs || v == h->slot)
        return false;
    j = &s->jobs[v];
    if (j->state != MS_JOB_RUNNING || !counted(j))
        return false;
    if (!(h->now - j->start_t >= s->cfg.preempt_grace_s))
        return false;
    if (s->cfg.preempt_max_lost_s > 0.0 && ms__job_lost(j, h->now) > s->cfg.preempt_max_lost_s)
        return false;   /* it would lose too much: the bound on one victim's loss */
    if (h->ok != NULL && !h->ok(h->ok_ctx, v))
        return false;
    t = s->cls[j->cls].tenant;
    mi = s->grp_mi[j->charge_grp];
    /* reclaim by a per model guarantee: only on that model's GPUs */
    if (j->priority >= h->prio &&
        !(h->reclaim && t != h->tenant && j->priority <= h->prio &&
          (h->rmodels == ~0u || (mi >= 0 && (h->rmodels >> mi & 1u)))))
        return false;
    if (t != h->tenant) {
        const ms__tenant_t *u = ms__tenant_c(s, t);

        if (!ms__tenant_keeps(u, j->charge, j->charge_mem) || !ms__tenant_keeps_model(u, mi, j->charge))
            return false;
    }
    return true;
}

/* Do tenant t's victims among v[0..n) (v[0] is one) leave it its per
 * model guarantees, model by model? */
static bool keeps_models(const ms_sched_t *s, int32_t t, const int32_t *v, int n)
{
    const ms__tenant_t *u = ms__tenant_c(s, t);
    long take[MS__NMODELS] = { 0 };
    int i, mi;

    if (u->nmg == 0)
        return true;
    for (i = 0; i < n; i++) {
        const ms__job_t *j = &s->jobs[v[i]];

        if (s->cls[j->cls].tenant == t && (mi = s->grp_mi[j->charge_grp]) >= 0)
            take[mi] += j->charge;
    }
    for (mi = 0; mi < MS__NMODELS; mi++)
        if (take[mi] > 0 && !ms__tenant_keeps_model(u, mi, take[mi]))
            return false;
    return true;
}

bool ms__preempt_keeps(const ms_sched_t *s, const ms__phead_t *h, const int32_t *victims, int n)
{
    int i, k;

    for (i = 0; i < n; i++) {
        int32_t t = s->cls[s->jobs[victims[i]].cls].tenant;
        long take = 0;
        double take_mem = 0.0;

        if (t == h->tenant)
            continue;
        for (k = 0; k < i && s->cls[s->jobs[victims[k]].cls].tenant != t; k++)
            ;
        if (k < i)
            continue;   /* its tenant was checked with its first victim */
        for (k = i; k < n; k++)
            if (s->cls[s->jobs[victims[k]].cls].tenant == t) {
                take += s->jobs[victims[k]].charge;
                take_mem += s->jobs[victims[k]].charge_mem;
            }
        if (!ms__tenant_keeps(ms__tenant_c(s, t), take, take_mem) || !keeps_models(s, t, victims + i, n - i))
            return false;
    }
    return true;
}

/* No tenant but the head's loses more than it holds above its guarantee
 * (each victim alone was checked; here the victims of a tenant together). */
static bool guarantees_kept(const ms_sched_t *s, const ms__phead_t *h, const ms_gpu_t *gpu,
                            uint32_t victims)
{
    int32_t v[MS_MAX_INST];
    int i, n = 0;

    for (i = 0; i < gpu->ninst; i++)
        if (victims >> i & 1u)
            v[n++] = gpu->inst[i].job;
    return ms__preempt_keeps(s, h, v, n);
}

/* The best choice so far. */
typedef struct choice {
    int gi, l;                    /* group, local GPU; gi < 0: none */
    int32_t gpu;                  /* global */
    ms_victims_t v;
    double until;                 /* the first end of a grace period seen */
} choice_t;

static bool better(const choice_t *b, const ms_victims_t *v, int32_t gpu)
{
    if (b->gi < 0)
        return true;
    if (v->nvictims != b->v.nvictims)
        return v->nvictims < b->v.nvictims;
    if (v->lost_s != b->v.lost_s)
        return v->lost_s < b->v.lost_s;
    return gpu < b->gpu;
}

/* One GPU: its cheapest victims for profile k, into *b if better. */
static ms_status_t search_gpu(const ms_sched_t *s, const ms__phead_t *h, int gi, int l, int k,
                              choice_t *b)
{
    const ms__grp_t *gr = &s->grp[gi];
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    ms_victim_cand_t cand[MS_MAX_INST];
    ms_victims_t v;
    int32_t g = gr->l2g[l];
    bool any = false;
    int i;
    ms_status_t st;

    if (s->fence_of != NULL && s->fence_of[g] != 0)
        return MS_OK;   /* cordoned or holding others' GIs: never placed on */
    for (i = 0; i < gpu->ninst; i++) {
        int32_t v_slot = gpu->inst[i].job;

        if (v_slot >= 0 && v_slot < s->njobs)
            ms__preempt_until_note(s, h, v_slot, &b->until);

        cand[i].eligible = v_slot >= 0 && ms__preempt_eligible(s, h, v_slot);
        /* the work lost: its run since its start or its last checkpoint
         * (not weighted by its size: with slice-seconds the smaller
         * victims it preferred freed less, and more preemptions followed
         * on the zoo's SLA workload) */
        cand[i].lost_s = cand[i].eligible ? ms__job_lost(&s->jobs[v_slot], h->now) : 0.0;
        any |= cand[i].eligible;
    }
    if (!any)
        return MS_OK;
    st = ms_victims_gpu(gr->geom, gpu, k, cand, &v);
    if (st == MS_ENOFIT)
        return MS_OK;
    if (st != MS_OK)
        return st;
    /* no victim: the policy declined that placement (its layout); not ours
     * to overrule */
    if (v.nvictims == 0 || !guarantees_kept(s, h, gpu, v.victims) || !better(b, &v, g))
        return MS_OK;
    b->gi = gi;
    b->l = l;
    b->gpu = g;
    b->v = v;
    return MS_OK;
}

static void choice_init(choice_t *b)
{
    memset(b, 0, sizeof(*b));
    b->gi = -1;
    b->until = INFINITY;
}

/* May the head's class go on group gi at all (a MIG group with its
 * profile, within its tenant's limit)? */
static bool group_ok(const ms_sched_t *s, const ms__phead_t *h, int gi)
{
    const ms__cls_t *c = &s->cls[h->cls];

    return s->grp[gi].c->share == MS_SHARE_MIG && c->prof[gi] >= 0 && ms__tenant_fits_cls(s, h->cls, 1, gi);
}

static ms_status_t search(ms_sched_t *s, const ms__phead_t *h, choice_t *b)
{
    const ms__cls_t *c = &s->cls[h->cls];
    int i, l;
    ms_status_t st;

    choice_init(b);
    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i], from = 0, to;
        const ms__grp_t *gr = &s->grp[gi];

        if (!group_ok(s, h, gi))
            continue;
        to = gr->ngpus;
        if (c->node >= 0) {
            if (s->node_grp[c->node] != gi)
                continue;
            from = s->g2l[s->node_first[c->node]];
            to = from + s->nodes[c->node].ngpus;
        }
        for (l = from; l < to; l++)
            if ((st = search_gpu(s, h, gi, l, c->prof[gi], b)) != MS_OK)
                return st;
    }
    return MS_OK;
}

/* Stop victim v and queue it again at its old place. */
static ms_status_t requeue(ms_sched_t *s, int32_t v, double now)
{
    ms__job_t *j = &s->jobs[v];
    ms_status_t st;

    {
        double lost = ms__job_lost(j, now);

        s->st.preempt_lost_s += lost;
        j->done += now - j->start_t - lost;   /* what its checkpoints kept */
    }
    if ((st = ms__sched_release(s, v, MS_JOB_CANCELLED, now)) != MS_OK)
        return st;
    j = &s->jobs[v];
    j->group = -1;
    j->end_t = 0.0;
    j->npreempt++;
    s->st.preemptions++;
    ms__sched_enqueue(s, v);
    return MS_OK;
}

/* Start the head at profile k, start st of local GPU l of group gi: the
 * idle GIs in the way go, the instance is created (or an idle one of that
 * profile at that start is taken), the head starts on it. */
static ms_status_t place_at(ms_sched_t *s, int32_t slot, int gi, int l, int k, int at, double now)
{
    ms__grp_t *gr = &s->grp[gi];
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    uint16_t m = ms_geom_profile_mask(gr->geom, k, at);
    bool reuse = false;
    ms_op_t op;
    int i;
    ms_status_t st;

    ms_plan_clear(&s->plan);
    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];

        if (!(ms_geom_profile_mask(gr->geom, in->prof, in->start) & m))
            continue;
        if (in->job >= 0)
            return MS_ESTATE;   /* a victim still there: a bug */
        if (in->prof == k && in->start == at)
            reuse = true;
        else if ((st = ms_plan_add_destroy(&s->plan, l, in->start)) != MS_OK)
            return st;
    }
    if (!reuse && (st = ms_plan_add_create(&s->plan, l, k, at)) != MS_OK)
        return st;
    memset(&op, 0, sizeof(op));
    op.kind = MS_OP_START;
    op.job = slot;
    op.gpu = l;
    op.start = (int8_t)at;
    op.prof = (int8_t)k;
    op.from_gpu = -1;
    op.from_start = -1;
    if ((st = ms_plan_add(&s->plan, &op)) != MS_OK)
        return st;
    s->placing = slot;
    st = ms__sched_run_plan(s, gi, MS_PK_PLACE, now);
    s->placing = -1;
    return st;
}

/* Gang head h: its cheapest node's victims stopped, it started on the
 * emptied GPUs (no victim is moved: a gang's GPUs are whole). */
static ms_status_t take_gang(ms_sched_t *s, const ms__phead_t *h, const ms__gpick_t *b,
                             int32_t *victims, int *nvict)
{
    int32_t gpus[MS__PREEMPT_MAXV], *gp = gpus;
    int i, n = 0;
    ms_status_t st;

    if (h->gang > MS__PREEMPT_MAXV && (gp = ms__salloc(s, (size_t)h->gang * sizeof(*gp))) == NULL)
        return MS_ENOMEM;
    st = ms__preempt_gang_victims(s, h, b, victims, &n, gp);
    for (i = 0; i < n && st == MS_OK; i++)
        if ((st = requeue(s, victims[i], h->now)) == MS_OK)
            *nvict = i + 1;
    if (st == MS_OK)
        st = rate_note(s, h->now);
    if (st == MS_OK)
        st = ms__preempt_gang_place(s, h->slot, b->gi, gp, h->now);
    if (gp != gpus)
        ms__sfree(s, gp);
    return st;
}

/* Single head h: the victims on the chosen GPU moved or stopped, the head
 * started at the freed start. */
static ms_status_t take_one(ms_sched_t *s, const ms__phead_t *h, const choice_t *b,
                            int32_t *victims, int *nvict)
{
    const ms_gpu_t *gpu = &s->grp[b->gi].c->gpus[b->l];
    int i, n = 0;
    ms_status_t st;

    /* the victims' slots first: stopping one changes the GPU's list */
    for (i = 0; i < gpu->ninst; i++)
        if (b->v.victims >> i & 1u)
            victims[n++] = gpu->inst[i].job;
    if (s->cfg.preempt_move && (st = ms__preempt_move(s, b->gi, b->l, victims, &n, h->now)) != MS_OK)
        return st;
    for (i = 0; i < n; i++) {
        if ((st = requeue(s, victims[i], h->now)) != MS_OK)
            return st;
        *nvict = i + 1;
    }
    if ((st = rate_note(s, h->now)) != MS_OK)
        return st;
    return place_at(s, h->slot, b->gi, b->l, s->cls[h->cls].prof[b->gi], b->v.start, h->now);
}

ms_status_t ms__preempt_try(ms_sched_t *s, int32_t slot, double now, bool *placed,
                            int32_t *victims, int *nvict)
{
    const ms__job_t *j = &s->jobs[slot];
    const ms__cls_t *c = &s->cls[j->cls];
    choice_t b;
    ms__gpick_t gb;
    ms__phead_t h;
    ms__pmemo_t *memo;
    bool found;
    double until;
    ms_status_t st;

    *placed = false;
    *nvict = 0;
    if (!s->cfg.preempt || s->cfg.preempt_requests_only || j->state != MS_JOB_QUEUED ||
        !rate_ok(s, now) || now - j->submit_t < s->cfg.preempt_after_s)
        return MS_OK;
    memset(&h, 0, sizeof(h));
    h.slot = slot;
    h.cls = j->cls;
    h.prio = j->priority;
    h.tenant = c->tenant;
    h.gang = j->gang;
    h.now = now;
    h.rmodels = reclaim_models(s, c);
    h.reclaim = h.rmodels != 0;
    if (!anyone(s, &h))
        return MS_OK;
    memo = &s->pmemo[h.cls];
    if (memo->head == slot && memo->stamp == s->stamp && now < memo->until &&
        memo->ops == s->st.ops_done + s->st.ops_failed && !s->test_full_passes)
        return MS_OK;   /* the same answer as the last search: nothing changed */
    s->st.preempt_searches++;
    if (h.gang > 1) {
        st = ms__preempt_gang_search(s, &h, &gb);
        found = gb.gi >= 0;
        until = gb.until;
    } else {
        st = search(s, &h, &b);
        found = b.gi >= 0;
        until = b.until;
    }
    if (st != MS_OK)
        return st;
    if (!found) {
        memo->head = slot;
        memo->stamp = s->stamp;
        memo->ops = s->st.ops_done + s->st.ops_failed;
        memo->until = until;
        return MS_OK;
    }
    memo->head = -1;
    st = h.gang > 1 ? take_gang(s, &h, &gb, victims, nvict) : take_one(s, &h, &b, victims, nvict);
    if (st != MS_OK)
        return st;
    j = &s->jobs[slot];
    if (j->state != MS_JOB_RUNNING && j->state != MS_JOB_STARTING)
        return MS_ESTATE;
    *placed = true;
    return MS_OK;
}

/* The victims on the given nodes for a request that is not queued. */
ms_status_t ms_sched_victims_for(ms_sched_t *s, const ms_sched_req_t *req, const char *const *nodes,
                                 int nnodes, double now, ms_sched_victim_ok_fn ok, void *ctx,
                                 ms_sched_preemption_t *out, ms_diag_t *diag)
{
    const ms__cls_t *c;
    const ms_gpu_t *gpu;
    choice_t b;
    ms__phead_t h;
    int32_t cls;
    int i, l;
    ms_status_t st;

    memset(out, 0, sizeof(*out));
    out->node = -1;
    out->gpu = -1;
    if (req == NULL || (nodes == NULL && nnodes > 0) || nnodes < 0)
        return MS_EINVAL;
    if ((st = ms__sched_resolve(s, req, &cls, diag)) != MS_OK)
        return st;
    if (!s->cfg.preempt || req->gang > 1 || !rate_ok(s, now))
        return MS_ENOFIT;
    c = &s->cls[cls];
    memset(&h, 0, sizeof(h));
    h.slot = -1;
    h.cls = cls;
    h.gang = 1;
    h.prio = req->priority;
    h.tenant = c->tenant;
    h.now = now;
    h.rmodels = reclaim_models(s, c);
    h.reclaim = h.rmodels != 0;
    h.ok = ok;
    h.ok_ctx = ctx;
    if (!anyone(s, &h))
        return MS_ENOFIT;
    s->st.preempt_searches++;
    choice_init(&b);
    for (i = 0; i < nnodes; i++) {
        int node = ms_sched_node_find(s, nodes[i]), gi, from;

        if (node < 0 || !group_ok(s, &h, gi = s->node_grp[node]))
            continue;
        from = s->g2l[s->node_first[node]];
        for (l = from; l < from + s->nodes[node].ngpus; l++)
            if ((st = search_gpu(s, &h, gi, l, c->prof[gi], &b)) != MS_OK)
                return st;
    }
    if (b.gi < 0)
        return MS_ENOFIT;
    if ((st = rate_note(s, now)) != MS_OK)
        return st;
    gpu = &s->grp[b.gi].c->gpus[b.l];
    for (i = 0; i < gpu->ninst; i++)
        if (b.v.victims >> i & 1u)
            out->victims[out->nvictims++] = gpu->inst[i].job;
    ms_sched_gpu_where(s, b.gpu, &out->node, NULL, NULL);
    out->gpu = b.gpu;
    out->start = b.v.start;
    out->lost_s = b.v.lost_s;
    return MS_OK;
}
