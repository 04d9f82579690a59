/* preempt_gang.c - a gang head's victims (cfg.preempt; docs/tenants.md,
 * "Preemption").
 *
 * A gang of q runs on q whole GPUs of one node (a full-size instance each,
 * policy/gang.c). When its head fits nowhere, the choice is a node and q
 * of its GPUs to empty: every job on a chosen GPU goes, so a GPU is a
 * candidate only when each of them may be a victim (ms__preempt_eligible)
 * and it is not fenced. A job of one instance sits on one GPU; a running
 * gang may span several, and stopping it empties all of them for one
 * victim. So, per node: for each subset G of the node's eligible gangs
 * (at most MAXG of them; a node with more keeps the rest), the GPUs that
 * G leaves holding only single-instance victims are sorted by their
 * victims (count, then lost work) and the q cheapest taken; the node's
 * cost is |G| plus theirs. Fewest victims, then least lost work, then the
 * lowest node wins, as for a single head; since the GPUs' single victims
 * are disjoint, taking the q cheapest is exact for a given G, and every G
 * is tried: the answer is the cheapest set of running jobs whose stopping
 * empties q GPUs of a node (test_preempt_gang compares it with every
 * subset on random small clusters). As for a single head, a set that
 * would take another tenant below its guarantee is not taken (the node
 * keeps its other choices), and an option with no victim is left to the
 * policy.
 *
 * Cost: only a blocked gang head with someone eligible searches (preempt.c
 * skips the rest), O(GPUs x instances + nodes x 2^gangs x GPUs per node).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

#define MAXG 10   /* gangs per node considered as victims: 2^10 subsets */

/* One GPU of the node. */
typedef struct gslot {
    int32_t l;                 /* local GPU */
    bool blocked;              /* a job that may not go, or fenced */
    uint32_t gangs;            /* the node's gangs on it */
    int n;                     /* its single-instance victims */
    double lost;
} gslot_t;

/* One node, scanned. */
typedef struct nscan {
    int ng;
    int32_t gang[MAXG];        /* the eligible gangs on it, in order met */
    double glost[MAXG];
    int ngpu;
    gslot_t *g;                /* [ngpu], cheapest first */
} nscan_t;

static int gang_index(nscan_t *ns, int32_t v, double lost)
{
    int i;

    for (i = 0; i < ns->ng && ns->gang[i] != v; i++)
        ;
    if (i == ns->ng) {
        if (ns->ng == MAXG)
            return -1;
        ns->gang[ns->ng] = v;
        ns->glost[ns->ng++] = lost;
    }
    return i;
}

static bool cheaper(const gslot_t *a, const gslot_t *b)
{
    if (a->n != b->n)
        return a->n < b->n;
    if (a->lost != b->lost)
        return a->lost < b->lost;
    return a->l < b->l;
}

/* Local GPU l into g: what emptying it would stop. */
static void scan_gpu(const ms_sched_t *s, const ms__phead_t *h, int gi, int32_t l, nscan_t *ns,
                     gslot_t *g, double *until)
{
    const ms__grp_t *gr = &s->grp[gi];
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    int i;

    memset(g, 0, sizeof(*g));
    g->l = l;
    g->blocked = s->fence_of != NULL && s->fence_of[gr->l2g[l]] != 0;
    for (i = 0; i < gpu->ninst && !g->blocked; i++) {
        int32_t v = gpu->inst[i].job;
        const ms__job_t *j;
        int k;

        if (v < 0)
            continue;   /* an idle GI: destroyed for free */
        j = &s->jobs[v];
        ms__preempt_until_note(s, h, v, until);
        if (!ms__preempt_eligible(s, h, v)) {
            g->blocked = true;
        } else if (j->gang > 1) {
            if ((k = gang_index(ns, v, ms__job_lost(j, h->now))) < 0)
                g->blocked = true;
            else
                g->gangs |= 1u << k;
        } else {
            g->n++;
            g->lost += ms__job_lost(j, h->now);
        }
    }
}

/* Local node nd of group gi into ns, its GPUs cheapest first. */
static void scan_node(const ms_sched_t *s, const ms__phead_t *h, int gi, int nd, nscan_t *ns,
                      double *until)
{
    const ms__grp_t *gr = &s->grp[gi];
    int32_t lo = (int32_t)nd * gr->gpn, hi = lo + gr->gpn, l;
    int k;

    if (hi > gr->ngpus)
        hi = gr->ngpus;
    ns->ng = 0;
    ns->ngpu = 0;
    for (l = lo; l < hi; l++) {
        gslot_t cur;

        scan_gpu(s, h, gi, l, ns, &cur, until);
        if (cur.blocked)
            continue;
        for (k = ns->ngpu; k > 0 && cheaper(&cur, &ns->g[k - 1]); k--)
            ns->g[k] = ns->g[k - 1];
        ns->g[k] = cur;
        ns->ngpu++;
    }
}

/* The q GPUs that gang subset G empties cheapest, their cost into *nv,
 * *lost; their indices in ns->g into pick (room for q). False: fewer than
 * q GPUs left free of other gangs. */
static bool pick_gpus(const nscan_t *ns, uint32_t G, int q, int *nv, double *lost, int *pick)
{
    int i, n = 0;

    *nv = 0;
    *lost = 0.0;
    for (i = 0; i < ns->ng; i++)
        if (G >> i & 1u) {
            (*nv)++;
            *lost += ns->glost[i];
        }
    for (i = 0; i < ns->ngpu && n < q; i++) {
        if (ns->g[i].gangs & ~G)
            continue;   /* a gang that stays holds it */
        *nv += ns->g[i].n;
        *lost += ns->g[i].lost;
        pick[n++] = i;
    }
    return n == q;
}

/* The victims of (G, pick) into victims (gangs, then each picked GPU's
 * jobs in instance order): false if more than MS__PREEMPT_MAXV. */
static bool collect(const ms_sched_t *s, int gi, const nscan_t *ns, uint32_t G, const int *pick,
                    int q, int32_t *victims, int *n)
{
    int i, k;

    *n = 0;
    for (i = 0; i < ns->ng; i++)
        if (G >> i & 1u) {
            if (*n == MS__PREEMPT_MAXV)
                return false;
            victims[(*n)++] = ns->gang[i];
        }
    for (i = 0; i < q; i++) {
        const ms_gpu_t *gpu = &s->grp[gi].c->gpus[ns->g[pick[i]].l];

        for (k = 0; k < gpu->ninst; k++) {
            int32_t v = gpu->inst[k].job;

            if (v < 0 || s->jobs[v].gang > 1)
                continue;
            if (*n == MS__PREEMPT_MAXV)
                return false;
            victims[(*n)++] = v;
        }
    }
    return true;
}

static bool better(const ms__gpick_t *b, int nv, double lost, int32_t first)
{
    if (b->gi < 0)
        return true;
    if (nv != b->nvictims)
        return nv < b->nvictims;
    if (lost != b->lost_s)
        return lost < b->lost_s;
    return first < b->first;
}

/* Every subset of the node's gangs: the cheapest into *b if better. */
static void try_node(const ms_sched_t *s, const ms__phead_t *h, int gi, int nd, const nscan_t *ns,
                     int *pick, int32_t *victims, ms__gpick_t *b)
{
    int32_t first = s->grp[gi].l2g[(int32_t)nd * s->grp[gi].gpn];
    uint32_t G;
    int nv, n;
    double lost;

    for (G = 0; G < (1u << ns->ng); G++) {
        if (!pick_gpus(ns, G, h->gang, &nv, &lost, pick) || nv == 0 || !better(b, nv, lost, first))
            continue;
        if (!collect(s, gi, ns, G, pick, h->gang, victims, &n) || !ms__preempt_keeps(s, h, victims, n))
            continue;
        b->gi = gi;
        b->lnode = nd;
        b->gangs = G;
        b->nvictims = nv;
        b->lost_s = lost;
        b->first = first;
    }
}

/* May the gang go on group gi at all (MIG, a full-size profile, its
 * tenant's limits)? */
static bool group_ok(const ms_sched_t *s, const ms__phead_t *h, int gi)
{
    const ms__grp_t *gr = &s->grp[gi];

    return gr->c->share == MS_SHARE_MIG && s->cls[h->cls].prof[gi] >= 0 &&
           ms_geom_full_profile(gr->geom) >= 0 && h->gang <= gr->gpn &&
           ms__tenant_fits_cls(s, h->cls, h->gang, gi);
}

/* Scratch for one group's nodes. */
typedef struct scratch {
    nscan_t ns;
    int *pick;
    int32_t *victims;
} scratch_t;

static ms_status_t scratch_make(const ms_sched_t *s, int gpn, int q, scratch_t *x)
{
    memset(x, 0, sizeof(*x));
    x->ns.g = ms__salloc(s, (size_t)gpn * sizeof(*x->ns.g));
    x->pick = ms__salloc(s, (size_t)q * sizeof(*x->pick));
    x->victims = ms__salloc(s, MS__PREEMPT_MAXV * sizeof(*x->victims));
    return x->ns.g != NULL && x->pick != NULL && x->victims != NULL ? MS_OK : MS_ENOMEM;
}

static void scratch_free(const ms_sched_t *s, scratch_t *x)
{
    ms__sfree(s, x->ns.g);
    ms__sfree(s, x->pick);
    ms__sfree(s, x->victims);
}

/* The local nodes of group gi the head may use: [*from, *to). */
static void node_range(const ms_sched_t *s, const ms__phead_t *h, int gi, int *from, int *to)
{
    const ms__grp_t *gr = &s->grp[gi];
    int node = s->cls[h->cls].node;

    *from = 0;
    *to = (gr->ngpus + gr->gpn - 1) / gr->gpn;
    if (node >= 0 && s->node_grp[node] != gi) {
        *to = 0;   /* pinned to a node of another group */
    } else if (node >= 0) {
        *from = s->g2l[s->node_first[node]] / gr->gpn;
        *to = *from + 1;
    }
}

ms_status_t ms__preempt_gang_search(ms_sched_t *s, const ms__phead_t *h, ms__gpick_t *b)
{
    const ms__cls_t *c = &s->cls[h->cls];
    int i, nd, from, to;
    ms_status_t st;

    memset(b, 0, sizeof(*b));
    b->gi = -1;
    b->until = INFINITY;
    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i];
        scratch_t x;

        if (!group_ok(s, h, gi))
            continue;
        if ((st = scratch_make(s, s->grp[gi].gpn, h->gang, &x)) != MS_OK) {
            scratch_free(s, &x);
            return st;
        }
        node_range(s, h, gi, &from, &to);
        for (nd = from; nd < to; nd++) {
            scan_node(s, h, gi, nd, &x.ns, &b->until);
            if (x.ns.ngpu >= h->gang)
                try_node(s, h, gi, nd, &x.ns, x.pick, x.victims, b);
        }
        scratch_free(s, &x);
    }
    return MS_OK;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

ms_status_t ms__preempt_gang_victims(ms_sched_t *s, const ms__phead_t *h, const ms__gpick_t *b,
                                     int32_t *victims, int *nvictims, int32_t *gpus)
{
    scratch_t x;
    double until = INFINITY, lost;
    int i, nv;
    ms_status_t st;

    *nvictims = 0;
    if ((st = scratch_make(s, s->grp[b->gi].gpn, h->gang, &x)) == MS_OK) {
        scan_node(s, h, b->gi, b->lnode, &x.ns, &until);
        if (!pick_gpus(&x.ns, b->gangs, h->gang, &nv, &lost, x.pick) || nv != b->nvictims ||
            !collect(s, b->gi, &x.ns, b->gangs, x.pick, h->gang, victims, nvictims))
            st = MS_ESTATE;   /* the node changed between the search and now: a bug */
    }
    if (st == MS_OK) {
        for (i = 0; i < h->gang; i++)
            gpus[i] = x.ns.g[x.pick[i]].l;
        qsort(gpus, (size_t)h->gang, sizeof(*gpus), cmp_i32);
    }
    scratch_free(s, &x);
    return st;
}

ms_status_t ms__preempt_gang_place(ms_sched_t *s, int32_t slot, int gi, const int32_t *gpus,
                                   double now)
{
    ms__grp_t *gr = &s->grp[gi];
    int q;
    ms_status_t st;

    ms_plan_clear(&s->plan);
    for (q = 0; q < s->jobs[slot].gang; q++)   /* (MS_ESTATE: a victim still there, a bug) */
        if ((st = ms_plan_add_whole_gpu(&s->plan, gr->c, gpus[q], slot, true)) != MS_OK)
            return st;
    s->placing = slot;
    st = ms__sched_run_plan(s, gi, MS_PK_PLACE, now);
    s->placing = -1;
    return st;
}
