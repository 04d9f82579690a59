/* queue.c - the queue discipline: a scheduling pass (the driver's entry
 * points that run one are in events.c).
 *
 * One queue per request class, ordered by (priority desc, submission). A
 * pass repeatedly takes the unblocked class whose head comes first; a class
 * whose head does not fit is blocked for the rest of the pass, since
 * placement depends only on the cluster state and the request. A pass costs
 * O(classes) per placement, not O(queue). A start that would pass the
 * overall head is refused in FIFO mode, in backfill mode once the head
 * has waited longer than backfill_bound_s, and in EASY mode, once the head
 * has waited that long, when it would delay the head's reservation
 * (backfill.c). With aging the classes' heads
 * compare by effective priority (priority + aging_rate x hours waited;
 * within a class the order stays priority, then submission), and a job may
 * pass the head only within one point of its effective priority. When the
 * head does not fit, each of its candidate groups' make_room may move jobs
 * (once per pass).
 *
 * A pass costs O(what changed). A class whose head was offered and did not
 * start is not offered again until something happened that could change
 * the answer (worth_offering): its head changed; a candidate group freed
 * capacity (an op other than a placement's CREATE and START: an end, a
 * cancel, a move, a layout change, a rollback; with MS_POLICY_FIT_PLACE,
 * one that left a GPU where its profile fits) or its policy reported a new
 * version(); and, for a class that a reservation blocked, any op in its
 * groups, a new passing regime (another reservation, or none), or its
 * estimate now ending in time. Such a class counts as tried and failed, as
 * it would have: the pass makes the same decisions as one that offers
 * every class (tests/sched/test_incremental.c compares them plan by plan,
 * and tests/regress byte for byte). This rests on place() being pure and
 * monotone (MS_POLICY_PURE_PLACE, policy.h); classes with a candidate group
 * whose policy does not promise it are offered in every pass, as before.
 * make_room is still offered for a blocked head once per pass: its answer
 * may change with time and the policy's state.
 *
 * A pass after nothing changed walks no class (calm_pass): when the last
 * pass left every class blocked waiting for a fit, with nothing that could
 * unblock one after it, and since then no stamp and no head changed (an
 * arrival behind a waiting head, a tick), a pass would decide the same: it
 * asks the head's make_room, leaves the reservation to be made at now, and
 * counts. test_incremental compares it with full passes too. The order a
 * pass leaves is kept for the next (ord_keep), so the classes that moved
 * in it are not moved again.
 *
 * Termination: every iteration of a pass either starts a job (the queue
 * shrinks), blocks a class (at most once each), or applies make_room (at
 * most once per pass), so a pass ends after at most queue + classes + 1
 * iterations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

/* head of class a before head of class b (both non-empty) */
static inline bool head_before(const ms__cls_t *a, const ms__cls_t *b)
{
    return a->hprio > b->hprio || (a->hprio == b->hprio && a->hseq < b->hseq);
}

/* aging: the effective priority of class c's head at now */
static inline double head_eff(const ms_sched_t *s, const ms__cls_t *c, double now)
{
    return (double)c->hprio + s->cfg.aging_rate * (now - c->hsubmit) / 3600.0;
}

static inline bool head_before_aged(const ms_sched_t *s, const ms__cls_t *a,
                                    const ms__cls_t *b, double now)
{
    double x = head_eff(s, a, now), y = head_eff(s, b, now);

    return x > y || (x == y && a->hseq < b->hseq);
}

/* Place slot on its candidate groups in order; MS_ENOFIT if none. With
 * easy set, a placement that would delay the head's reservation is not
 * taken (the next group is tried), and *easy_hit says so. A group where
 * the job would take its tenant over its limit is not tried (*lim_hit). */
static ms_status_t try_place(ms_sched_t *s, int32_t slot, double now, bool easy, bool *easy_hit,
                             bool *lim_hit)
{
    const ms__cls_t *c = &s->cls[s->jobs[slot].cls];
    int i;
    ms_status_t st;

    *easy_hit = false;
    *lim_hit = false;
    if (c->node >= 0) {
        if (!ms__tenant_fits(s, slot, s->node_grp[c->node])) {
            *lim_hit = true;
            return MS_ENOFIT;
        }
        if (easy && !ms__easy_node_ok(s, slot, c->node, now)) {
            *easy_hit = true;
            return MS_ENOFIT;
        }
        /* a node constraint: the restricted-placement rule on that node */
        s->st.place_calls++;
        st = ms__sched_place_on(s, slot, &c->node, 1, now);
        if (st == MS_OK && s->jobs[slot].ninst != s->jobs[slot].gang)
            st = MS_ESTATE;
        return st;
    }
    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i];
        ms__grp_t *gr = &s->grp[gi];
        ms_job_t v = ms__sched_view(s, slot, gi);
        ms__job_t *j;

        if (!ms__tenant_fits(s, slot, gi)) {
            *lim_hit = true;
            continue;
        }
        ms_plan_clear(&s->plan);
        s->st.place_calls++;
        st = gr->pol->place(gr->self, gr->c, &v, &s->plan);
        ms__sched_pol_seen(s, gi);
        if (st == MS_ENOFIT)
            continue;
        if (st != MS_OK) {
            ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: place(job %d) failed: %s",
                        gr->pol->name, (int)slot, ms_strerror(st));
            return st;
        }
        if (easy && !ms__easy_plan_ok(s, slot, gi, now)) {
            *easy_hit = true;
            continue;
        }
        s->placing = slot;
        st = ms__sched_run_plan(s, gi, MS_PK_PLACE, now);
        s->placing = -1;
        if (st != MS_OK)
            return st;
        j = &s->jobs[slot];
        if ((j->state != MS_JOB_RUNNING && j->state != MS_JOB_STARTING) || j->ninst != j->gang) {
            ms_diag_set(s->diag, NULL, 0, "policy",
                        "policy %s: place(job %d) answered OK but started %d of its %d instances",
                        gr->pol->name, (int)slot, (int)j->ninst, (int)j->gang);
            return MS_ESTATE;
        }
        return MS_OK;
    }
    return MS_ENOFIT;
}

/* make_room for the head, on its candidate groups in order. */
static ms_status_t try_room(ms_sched_t *s, int32_t slot, double now, bool *acted)
{
    const ms__cls_t *c = &s->cls[s->jobs[slot].cls];
    int i;
    ms_status_t st;

    *acted = false;
    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i];
        ms__grp_t *gr = &s->grp[gi];
        ms_job_t v = ms__sched_view(s, slot, gi);

        if (gr->pol->make_room == NULL)
            continue;
        ms_plan_clear(&s->plan);
        st = gr->pol->make_room(gr->self, gr->c, &v, now, &s->plan);
        ms__sched_pol_seen(s, gi);
        if (st == MS_OK && s->plan.n > 0 && ms__sched_moves_allowed(s, &s->plan, now)) {
            *acted = true;
            return ms__sched_run_plan(s, gi, MS_PK_ROOM, now);
        }
        if (st != MS_OK && st != MS_ENOFIT) {
            ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: make_room failed: %s",
                        gr->pol->name, ms_strerror(st));
            return st;
        }
    }
    return MS_OK;
}

/* Note the passing regime of this attempt (anyone may pass, or only what
 * keeps the reservation in s->easy_*): a change may let a class that a
 * reservation blocked start. */
static void regime_note(ms_sched_t *s, bool easy, double now)
{
    bool held = easy && s->easy_head >= 0;
    double t = held && s->easy_t > now ? s->easy_t : -INFINITY;   /* -inf: "now" */
    int i;
    bool same = held == s->lr_easy;

    if (same && held) {
        same = s->lr_head == s->easy_head && s->lr_n == s->easy_n && s->lr_t == t &&
               s->easy_n <= (int)(sizeof(s->lr_gpu) / sizeof(s->lr_gpu[0]));
        for (i = 0; same && i < s->easy_n; i++)
            same = s->lr_gpu[i] == s->easy_gpu[i] && s->lr_mask[i] == s->easy_mask[i];
    }
    if (same)
        return;
    s->resv_at = ++s->stamp;
    s->lr_easy = held;
    if (!held)
        return;
    s->lr_head = s->easy_head;
    s->lr_t = t;
    s->lr_n = s->easy_n <= (int)(sizeof(s->lr_gpu) / sizeof(s->lr_gpu[0])) ? s->easy_n : 0;
    for (i = 0; i < s->lr_n; i++) {
        s->lr_gpu[i] = s->easy_gpu[i];
        s->lr_mask[i] = s->easy_mask[i];
    }
}

/* Could offering class k's head now answer differently from the last time
 * it did not start? Only if its head changed, or one of its groups freed
 * capacity (for a policy with MS_POLICY_FIT_PLACE, a GPU where its profile
 * now fits; else anywhere) or its policy a new version, or, when a reservation blocked
 * it, any op there, a new passing regime, or its estimate now ends in
 * time; or its policy does not promise a pure place(). passing: the head
 * would pass the queue's head (else no reservation applies to it). */
static bool worth_offering(const ms_sched_t *s, int k, bool passing, double now)
{
    const ms__cls_t *c = &s->cls[k];
    const ms__cwatch_t *w = &s->cwatch[k];
    int i;

    if (c->blk == MS__BLK_NONE || c->blk_hgen != c->hgen || s->test_full_passes)
        return true;
    if (c->blk == MS__BLK_NOFIT && !s->impure && c->blk_at >= s->wake_at)
        return false;   /* nothing freed, reweighed or lowered anywhere since */
    if (c->blk_lim && ms__tenant_c(s, c->tenant)->dec_at > c->blk_at)
        return true;   /* its tenant's limit kept it off a group, and its usage fell */
    if (c->blk == MS__BLK_EASY &&
        (!passing || s->resv_at > c->blk_at || ms__easy_ends_in_time(s, c->qhead, now)))
        return true;
    if (c->node >= 0) {
        /* restricted placement on one node: the scheduler's own rule */
        const ms__grp_t *gr = &s->grp[s->node_grp[c->node]];

        return gr->free_at > c->blk_at || (c->blk == MS__BLK_EASY && gr->any_at > c->blk_at);
    }
    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i];
        const ms__grp_t *gr = &s->grp[gi];
        uint64_t bit = (uint64_t)1 << i;
        /* capacity freed where it matters: for a policy that places only
         * where the profile fits (MS_POLICY_FIT_PLACE), a GPU it now fits;
         * else anywhere in the group (s->cwatch: ms__sched_cls_order) */
        uint64_t freed = (w->fit & bit) ? gr->fit_at[(int)c->prof[gi]] : gr->free_at;
        /* a new version() could place it elsewhere (past the reservation:
         * EASY) or admit a GPU it refused, except under MS_POLICY_FIT_ANY,
         * where a job that fitted nowhere still does not (fa+'s new
         * demand weights: 1 arrival in 7 of the deep-queue bench re-offered
         * every class, for the same MS_ENOFIT) */
        bool reweighed = gr->pol_at > c->blk_at && !((w->any & bit) && c->blk == MS__BLK_NOFIT);

        if ((w->impure & bit) || freed > c->blk_at || reweighed ||
            (c->blk == MS__BLK_EASY && gr->any_at > c->blk_at))
            return true;
    }
    return false;
}

/* Class a's head before class b's (both non-empty) in the pass's order. */
static inline bool cls_before(const ms_sched_t *s, int a, int b, double now)
{
    if (s->ten_on) {
        int r = ms__tenant_cmp(s, &s->cls[a], &s->cls[b]);

        if (r != 0)
            return r < 0;
    }
    return s->cfg.aging_rate > 0.0 ? head_before_aged(s, &s->cls[a], &s->cls[b], now)
                                   : head_before(&s->cls[a], &s->cls[b]);
}

/* Insert class k into ord[0..*n), kept in head order; its place. */
static int ord_insert(const ms_sched_t *s, int32_t *ord, int *n, int k, double now)
{
    int i = *n;

    for (; i > 0 && cls_before(s, k, ord[i - 1], now); i--)
        ord[i] = ord[i - 1];
    ord[i] = k;
    (*n)++;
    return i;
}

/* Insert class k if its tenant's limit lets its head start somewhere (a
 * class left out blocks no one and is not the head); its place, or *n. */
static int ord_offer(const ms_sched_t *s, int32_t *ord, int *n, int k, double now)
{
    if (!s->ten_on || ms__tenant_eligible(s, &s->cls[k]))
        return ord_insert(s, ord, n, k, now);
    return *n;
}

/* Tenant t's usage grew: its classes' keys changed (tier, share, or the
 * limit now leaves one out). Drop those the limit leaves out, then an
 * insertion sort, which moves only t's classes: O(classes in the pass)
 * comparisons plus their moves. */
static void ord_retenant(const ms_sched_t *s, int32_t *ord, int *n, int32_t t, double now)
{
    int i, w = 0;

    for (i = 0; i < *n; i++)
        if (s->cls[ord[i]].tenant != t || ms__tenant_eligible(s, &s->cls[ord[i]]))
            ord[w++] = ord[i];
    *n = w;
    for (i = 1; i < w; i++) {
        int32_t k = ord[i];
        int at = i;

        for (; at > 0 && cls_before(s, k, ord[at - 1], now); at--)
            ord[at] = ord[at - 1];
        ord[at] = k;
    }
}

static void ord_remove_at(int32_t *ord, int *n, int i)
{
    memmove(&ord[i], &ord[i + 1], (size_t)(*n - i - 1) * sizeof(*ord));
    (*n)--;
}

/* The kept order (pass_order) is consistent (ms_sched_check): its classes
 * that no head change marked since are non-empty and in strict head order
 * (so each once), and every other non-empty class is marked. */
ms_status_t ms__sched_order_check(const ms_sched_t *s)
{
    int i, k, prev = -1, n = 0;

    if (!s->pord_ok)
        return MS_OK;
    for (i = 0; i < s->npord; i++) {
        const ms__cls_t *c;

        if (s->pord[i] < 0 || s->pord[i] >= s->ncls)
            return MS_ESTATE;
        c = &s->cls[s->pord[i]];
        if (c->pdirty)
            continue;
        if (c->qhead < 0 || (prev >= 0 && !head_before(&s->cls[prev], c)))
            return MS_ESTATE;
        prev = s->pord[i];
        n++;
    }
    for (k = 0; k < s->ncls; k++)
        n -= s->cls[k].qhead >= 0 && !s->cls[k].pdirty;
    return n == 0 ? MS_OK : MS_ESTATE;
}

/* Class k's place in ord[0..n), or -1. */
static int ord_find(const int32_t *ord, int n, int k)
{
    int i;

    for (i = 0; i < n && ord[i] != k; i++)
        ;
    return i < n ? i : -1;
}

static void ord_remove(int32_t *ord, int *n, int k)
{
    int i = ord_find(ord, *n, k);

    if (i >= 0)
        ord_remove_at(ord, n, i);
}

/* Preemption for the head j of class best (preempt.c); when it placed
 * it, the order of the pass as after a start, and the victims' classes
 * again (their heads changed, their tenants' usage fell). */
static ms_status_t preempt_for(ms_sched_t *s, int32_t *ord, int *nord, int best, int32_t j,
                               double now, bool *placed)
{
    int32_t victims[MS__PREEMPT_MAXV];
    int nv = 0, i;
    ms_status_t st;

    st = ms__preempt_try(s, j, now, placed, victims, &nv);
    /* every class whose head changed leaves the order before any goes back
     * in: an insertion into an order that still holds another moved class
     * at its old place can land out of order (a pass then offered classes
     * out of head order after a preemption that requeued jobs of two) */
    for (i = 0; i < nv; i++)
        ord_remove(ord, nord, s->jobs[victims[i]].cls);
    if (st == MS_OK && *placed)
        ord_remove(ord, nord, best);
    for (i = 0; i < nv; i++) {
        int vc = s->jobs[victims[i]].cls;

        if (ord_find(ord, *nord, vc) < 0 && s->cls[vc].qhead >= 0)
            ord_offer(s, ord, nord, vc, now);
    }
    if (st == MS_OK && *placed && ord_find(ord, *nord, best) < 0 && s->cls[best].qhead >= 0)
        ord_offer(s, ord, nord, best, now);
    if (s->ten_on) {
        for (i = 0; i < nv; i++)
            ord_retenant(s, ord, nord, s->cls[s->jobs[victims[i]].cls].tenant, now);
        if (st == MS_OK && *placed)
            ord_retenant(s, ord, nord, s->cls[best].tenant, now);
    }
    if (st != MS_OK || !*placed)
        return st;
    s->st.changes++;
    return MS_OK;
}

/* The non-empty classes into ord in the order of their heads (the head
 * first), *nord of them. Without tenants or aging that order changes only
 * where a head did: it is kept from pass to pass (s->pord) and only the
 * classes whose head changed since move, O(classes x changed) rather than
 * an insertion sort of every class (most of a deep-queue pass's own cost,
 * issue 25). With them (the order depends on usage or on now) every pass
 * sorts, as before. */
static void pass_order(ms_sched_t *s, int32_t *ord, int *nord, double now)
{
    int i, k, w;

    if (s->ten_on || s->cfg.aging_rate > 0.0 || s->test_full_passes) {
        /* (the tests' full passes sort every time: the oracle) */
        for (i = 0; i < s->npdirty; i++)
            s->cls[s->pdirty[i]].pdirty = 0;
        s->npdirty = 0;
        s->pord_ok = false;
        for (k = 0; k < s->ncls; k++)
            if (s->cls[k].qhead >= 0)
                ord_offer(s, ord, nord, k, now);
        return;
    }
    if (!s->pord_ok) {
        s->npord = 0;
        for (k = 0; k < s->ncls; k++)
            if (s->cls[k].qhead >= 0)
                ord_insert(s, s->pord, &s->npord, k, now);
    } else if (s->npdirty > 0) {
        for (i = w = 0; i < s->npord; i++)
            if (!s->cls[s->pord[i]].pdirty)
                s->pord[w++] = s->pord[i];
        s->npord = w;
        for (i = 0; i < s->npdirty; i++)
            if (s->cls[s->pdirty[i]].qhead >= 0)
                ord_insert(s, s->pord, &s->npord, s->pdirty[i], now);
    }
    for (i = 0; i < s->npdirty; i++)
        s->cls[s->pdirty[i]].pdirty = 0;
    s->npdirty = 0;
    s->pord_ok = true;
    if (s->npord > 0)   /* (no class yet: no array) */
        memcpy(ord, s->pord, (size_t)s->npord * sizeof(*ord));
    *nord = s->npord;
}

/* The rules for class best passing class head, the queue's head: past
 * the bound, under EASY only what keeps the head's reservation passes it
 * (*easy), otherwise nothing (PASS_STOP). A class blocked with no fit
 * and nothing changed since (the answer needs no reservation), with no
 * preemption to try, is skipped without making the reservation
 * (PASS_SKIP: an arrival behind a blocked head, most passes of a deep
 * queue; ms_sched_head_reservation makes it if asked). Else the
 * reservation is made if needed and the passing regime noted. *worth:
 * worth_offering(best) when asked here, else left as is. */
typedef enum pass_rule { PASS_OFFER, PASS_SKIP, PASS_STOP } pass_rule_t;

/* May the blocked head of class best preempt though the head of class
 * head comes first? When its tenant reclaims its guarantee, and, with
 * tenants, when it outranks that head: the order between tenants is fair
 * share, but a job of a higher priority than the first one waiting may
 * still stop lower-priority work (issue 24: an SLA job whose tenant was
 * behind a batch tenant by virtual time waited while only the batch head
 * could preempt, and then nobody could). Without tenants the order is by
 * priority already (or aged: the aged order is kept). */
static inline bool preempts_behind(const ms_sched_t *s, int best, int head)
{
    return ms__preempt_reclaims(s, best) || (s->ten_on && s->cls[best].hprio > s->cls[head].hprio);
}

/* Has the head h waited past the backfill bound (jobs pass it then only
 * under EASY, by keeping its reservation)? */
static inline bool past_bound(const ms_sched_t *s, int32_t h, double now)
{
    return now - s->jobs[h].submit_t > s->cfg.backfill_bound_s;
}

static inline pass_rule_t pass_behind(ms_sched_t *s, int best, int head, double now,
                                      bool may_preempt, bool *easy, int *worth, ms_status_t *st)
{
    int32_t h = s->cls[head].qhead;
    bool skip;

    *easy = past_bound(s, h, now) && (!s->ten_on || !ms__preempt_owed(s, best, head));
    if (*easy && s->cfg.queue != MS_QUEUE_EASY)
        return PASS_STOP;
    if (s->cls[best].blk == MS__BLK_NOFIT)
        *worth = worth_offering(s, best, true, now);
    skip = *worth == 0 && !(s->cfg.preempt && may_preempt && preempts_behind(s, best, head));
    if (skip)
        s->st.skipped++;
    if (*easy && s->easy_head != h) {
        if (skip && !s->ten_on) {
            /* left to ms_sched_head_reservation (with tenants a class
             * behind may pass without it, owed, and change the cluster
             * before the next needs it: made here, as a pass that asked
             * this one) */
            s->easy_head = -1;
            s->easy_want = h;
            s->easy_want_t = now;
        } else {
            s->easy_want = -1;
            if ((*st = ms__easy_reserve(s, h, now)) != MS_OK)
                return PASS_STOP;
        }
    }
    if (skip)
        return PASS_SKIP;
    regime_note(s, *easy, now);
    return PASS_OFFER;
}

/* Class ord[first] started its head: its new head (if any) takes its place
 * in the order; the new first (ord[0..first) is blocked still, but where
 * the class went). With tenants its tenant's usage grew: their order. */
static inline int ord_started(ms_sched_t *s, int32_t *ord, int *nord, int first,
                             uint8_t *blocked, double now)
{
    int best = ord[first], at = *nord;

    s->st.changes++;
    ord_remove_at(ord, nord, first);
    if (s->cls[best].qhead >= 0)
        at = ord_offer(s, ord, nord, best, now);
    if (s->ten_on) {
        ord_retenant(s, ord, nord, s->cls[best].tenant, now);
        ms__preempt_reclaim_again(s, blocked, s->cls[best].tenant);
        return 0;
    }
    return at < first ? at : first;
}

/* After a pass: the order it leaves is the kept one (every head that
 * changed in it moved in ord, in the total order pass_order keeps;
 * ms__sched_order_check), so the next pass starts from it instead of
 * moving them again. */
static void ord_keep(ms_sched_t *s, const int32_t *ord, int nord)
{
    int i;

    if (!s->pord_ok)
        return;
    for (i = 0; i < s->npdirty; i++)
        s->cls[s->pdirty[i]].pdirty = 0;
    s->npdirty = 0;
    if (nord > 0)
        memcpy(s->pord, ord, (size_t)nord * sizeof(*ord));
    s->npord = nord;
}

/* After a pass: did it settle (calm_pass)? It ended with every class
 * blocked, or at the head (FIFO, or past the bound without EASY: the
 * classes behind it are not visited), visiting `settled` classes; none of
 * them could be worth offering again (wake_at as when it began: nothing
 * freed, reweighed or lowered during it, after a class was passed over)
 * and none waits on a reservation (those rules depend on the time).
 * O(classes). */
static void calm_note(ms_sched_t *s, const int32_t *ord, int nord, int settled, uint64_t wake0)
{
    int i;

    s->calm_ok = settled > 0 && nord > 0 && s->pord_ok && s->wake_at == wake0 && !s->ten_on &&
                 !s->impure && !s->cfg.preempt && s->cfg.aging_rate <= 0.0 && !s->test_full_passes;
    for (i = 0; s->calm_ok && i < settled && i < nord; i++)
        s->calm_ok = s->cls[ord[i]].blk == MS__BLK_NOFIT;
    if (!s->calm_ok)
        return;
    s->calm_stamp = s->stamp;
    s->calm_qgen = s->qgen;
}

/* How a pass begins: from the start, or (calm_pass) with the head's
 * make_room asked already, which acted (the head is offered again) or did
 * not (the head stays blocked). */
typedef enum pass_from { FROM_START, FROM_ROOM_ACTED, FROM_HEAD_BLOCKED } pass_from_t;

static ms_status_t sched_pass(ms_sched_t *s, double now, pass_from_t from)
{
    bool tried_room = from != FROM_START;
    int settled = 0;   /* how the pass ended: 0 not settled, else the classes it visited */
    const bool fifo = s->cfg.queue == MS_QUEUE_FIFO, aging = s->cfg.aging_rate > 0.0;
    uint64_t wake0;
    int nord = 0, first = 0;
    /* preemption: at most one attempt per job waiting at the start of the
     * pass (each that succeeds starts one; the bound ends the pass even if
     * victims and preemptors were to take turns) */
    long npre = 0, maxpre = s->st.waiting + 1;
    ms_status_t st;
    uint8_t blocked_small[64];
    int32_t ord_small[64];
    uint8_t *blocked = blocked_small;
    int32_t *ord = ord_small;

    if (s->ncls > (int)sizeof(blocked_small)) {
        /* many request classes: pass-local arrays (freed below) */
        blocked = ms__scalloc(s, (size_t)s->ncls, 1);
        ord = ms__salloc(s, (size_t)s->ncls * sizeof(*ord));
        if (blocked == NULL || ord == NULL) {
            ms__sfree(s, blocked);
            ms__sfree(s, ord);
            return MS_ENOMEM;
        }
    } else {
        memset(blocked_small, 0, sizeof(blocked_small));
    }
    /* the non-empty classes in the order of their heads (the head first):
     * each step takes the first unblocked one, and a start moves only its
     * own class (the order is total: heads differ in seq) */
    pass_order(s, ord, &nord, now);
    st = MS_OK;
    s->easy_head = -1;
    s->easy_want = -1;
    s->st.passes++;
    s->calm_ok = false;
    wake0 = s->wake_at;
    if (from == FROM_HEAD_BLOCKED && nord > 0)
        blocked[ord[0]] = 1;
    for (;;) {
        int best, head;
        int32_t j;
        bool easy = false, easy_hit = false, lim_hit = false;
        int worth = -1;   /* worth_offering(best), once asked */
        pass_rule_t pr;

        if (nord == 0)
            break;
        head = ord[0];
        /* ord[0..first) is blocked (a class is never unblocked within a
         * pass; first goes back to 0 whenever ord changes): the search
         * resumes there instead of at 0, O(classes) a pass, not squared */
        while (first < nord && blocked[ord[first]])
            first++;
        if (first == nord) {
            settled = nord;   /* every class */
            break;
        }
        best = ord[first];
        if (best != head) {
            /* this start would pass the overall head */
            if (fifo) {
                settled = 1;   /* the head alone */
                break;
            }
            if (aging && head_eff(s, &s->cls[best], now) < head_eff(s, &s->cls[head], now) - 1.0)
                break;   /* best is the highest of the rest: nothing else passes either */
            pr = pass_behind(s, best, head, now, npre < maxpre, &easy, &worth, &st);
            if (pr == PASS_STOP) {
                settled = st == MS_OK;   /* the head alone */
                break;
            }
            if (pr == PASS_SKIP) {
                blocked[best] = 1;
                continue;
            }
        }
        j = s->cls[best].qhead;
        if (worth < 0)
            worth = worth_offering(s, best, best != head, now);
        if (!worth) {
            /* it would not start: nothing that could change that happened
             * since it last did not (the same answer, without asking) */
            s->st.skipped++;
            st = MS_ENOFIT;
        } else {
            st = try_place(s, j, now, easy, &easy_hit, &lim_hit);
            if (st == MS_OK) {
                first = ord_started(s, ord, &nord, first, blocked, now);
                continue;
            }
            if (st != MS_ENOFIT)
                break;
            s->cls[best].blk_lim = lim_hit;
            s->cls[best].blk = easy_hit ? MS__BLK_EASY : MS__BLK_NOFIT;
            s->cls[best].blk_hgen = s->cls[best].hgen;
            s->cls[best].blk_at = s->stamp;
        }
        st = MS_OK;
        if (best == head && !tried_room && !s->cfg.no_room) {
            bool acted;

            tried_room = true;
            if ((st = try_room(s, j, now, &acted)) != MS_OK)
                break;
            if (acted)
                continue;   /* place the head again */
        }
        /* the overall head preempts; so does a blocked head within its
         * tenant's guarantee (reclaim), wherever it is in the order: a
         * guarantee owed is not held up by another blocked head, its own
         * tenant's older job that would borrow included (issue 24's "a
         * guarantee is never starved by borrowed work"; test_tenant_starve),
         * and one that outranks the head (preempts_behind) */
        if (s->cfg.preempt && npre < maxpre && (best == head || preempts_behind(s, best, head))) {
            bool placed;

            npre++;
            st = preempt_for(s, ord, &nord, best, j, now, &placed);
            first = 0;   /* the victims' classes moved */
            if (st != MS_OK)
                break;
            if (placed)
                continue;
        }
        blocked[best] = 1;
    }
    if (st == MS_OK) {
        ord_keep(s, ord, nord);
        calm_note(s, ord, nord, settled, wake0);
    }
    if (blocked != blocked_small) {
        ms__sfree(s, blocked);
        ms__sfree(s, ord);
    }
    return st;
}

/* A pass that can only decide as the last one did (s->calm_*): no stamp
 * and no head changed since (an arrival behind a waiting head, a tick:
 * most of a deep queue's events). Every class waits for a fit, which
 * depends on neither the time nor the reservation, so the time that
 * passed changes only what is made here: the head's make_room, asked as
 * the pass would (its answer may depend on the time; when it acts, the
 * pass goes on from there), the head's reservation, left to be made at
 * now when past the bound, and the counts. Issue 25: a pass after an
 * event that cannot unblock anything costs no scan. *done: answered here. */
static ms_status_t calm_pass(ms_sched_t *s, double now, bool *done)
{
    int32_t h;
    bool easy, acted = false;
    ms_status_t st;

    *done = false;
    /* settled, nothing changed: the kept order is the last pass's (no head
     * changed, so nothing is marked in it; calm_note needs no tenants and
     * no aging, so it is kept), its first class the head's */
    if (!s->calm_ok || s->stamp != s->calm_stamp || s->qgen != s->calm_qgen ||
        s->test_full_passes || (h = s->cls[s->pord[0]].qhead) < 0)
        return MS_OK;
    easy = past_bound(s, h, now);
    s->st.skipped++;   /* the head, not offered */
    if (!s->cfg.no_room) {
        if ((st = try_room(s, h, now, &acted)) != MS_OK)
            return st;
        if (acted || s->stamp != s->calm_stamp) {
            /* it changed the cluster (or a version): the rest of the pass */
            *done = true;
            return sched_pass(s, now, acted ? FROM_ROOM_ACTED : FROM_HEAD_BLOCKED);
        }
    }
    *done = true;
    s->st.passes++;
    s->st.calm_passes++;
    s->easy_head = -1;
    s->easy_want = -1;
    if (s->cfg.queue == MS_QUEUE_FIFO || s->npord == 1 ||
        (easy && s->cfg.queue != MS_QUEUE_EASY))
        return MS_OK;   /* nothing behind the head is visited */
    s->st.skipped += s->npord - 1;
    if (easy) {
        s->easy_want = h;   /* as pass_behind leaves it */
        s->easy_want_t = now;
    }
    return MS_OK;
}

ms_status_t ms__sched_schedule(ms_sched_t *s, double now)
{
    bool acted = false, done;
    ms_status_t st = calm_pass(s, now, &done);
    int k;

    if (st == MS_OK && !done)
        st = sched_pass(s, now, FROM_START);
    if (st != MS_OK || s->cfg.no_room)
        return st;
    for (k = 0; k < s->ngroups; k++) {
        ms__grp_t *gr = &s->grp[k];

        if (gr->pol->on_idle == NULL)
            continue;
        ms_plan_clear(&s->plan);
        st = gr->pol->on_idle(gr->self, gr->c, gr->nwait, now, &s->plan);
        ms__sched_pol_seen(s, k);
        if (st == MS_ENOFIT || (st == MS_OK && s->plan.n == 0))
            continue;
        if (st != MS_OK) {
            ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: on_idle failed: %s",
                        gr->pol->name, ms_strerror(st));
            return st;
        }
        if ((st = ms__sched_run_plan(s, k, MS_PK_IDLE, now)) != MS_OK)
            return st;
        acted = true;
    }
    return acted ? sched_pass(s, now, FROM_START) : MS_OK;
}
