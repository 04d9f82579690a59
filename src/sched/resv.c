/* resv.c - the EASY reservation of a blocked head, kept incrementally.
 *
 * backfill.c's ms__easy_reserve_scan walks every GPU of the head's groups
 * in every pass that needs the reservation: O(GPUs x instances), 80% of a
 * deep-queue simulation (issue 25). Here each group keeps, per kind of head
 * asked for so far (a single-GPU profile k, or a gang of q), a tracker: for
 * every leaf (GPU; node for gangs) the time it can host that head if the
 * running jobs end as estimated, computed with now = -inf, in a min-tree.
 * That time does not depend on now: at a real now a leaf's time is
 * max(now, its value), because only the order of the expected ends decides
 * and max(now, .) keeps the order (backfill.c). So the scan's answer, the
 * first leaf in order with the smallest time, is
 *   - the first leaf whose value is <= now, at time now, if there is one
 *     (a descent of the tree);
 *   - else the first leaf with the smallest value, at that value;
 * over the head's groups in their candidate order, the first group winning
 * ties. When that time is now, the chosen leaf is evaluated once more at
 * the real now, which gives the scan's time and slices exactly (jobs past
 * their estimate end together at now, so the slices at a time <= now
 * depend on now); a time ahead of now, and its slices, kept with the leaf,
 * are the scan's already (in a deep queue, most reservations: one GPU
 * evaluation an event fewer, issue 25).
 *
 * A leaf changes only when its GPU does: every op goes through
 * ms__sched_cluster_op, which marks the GPU's leaves in every tracker of
 * its group, as does a job's new start time (bind); marked leaves are
 * recomputed when the tracker is next read. Cost: O(ops x trackers) to
 * mark, O(marked x instances x log leaves) to read, O(groups + log leaves)
 * per reservation; a tracker's first read is O(its group). The tests
 * compare it with the scan after every event of random traces.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

/* Leaf i's value from the group's current state (and, for a profile, its
 * slices then in t->lmask[i]). */
static double leaf_value(ms_sched_t *s, const ms__grp_t *gr, ms__rtrack_t *t, int i)
{
    s->st.resv_evals++;
    if (t->key >= 0) {
        t->lmask[i] = 0xffffu;
        return ms__easy_gpu_free_at(s, gr, i, t->key, -INFINITY, &t->lmask[i]);
    } else {
        int gang = -t->key, lo = i * gr->gpn, n = gr->ngpus - lo, a, b;
        double e[64];

        if (n > gr->gpn)
            n = gr->gpn;
        if (n < gang || n > 64)
            return INFINITY;
        for (a = 0; a < n; a++) {
            double x = ms__easy_gpu_empty_at(s, gr, lo + a, -INFINITY);

            for (b = a; b > 0 && e[b - 1] > x; b--)
                e[b] = e[b - 1];
            e[b] = x;
        }
        return e[gang - 1];
    }
}

static void tree_set(ms__rtrack_t *t, int i, double v)
{
    int n = t->size + i;

    t->tree[n] = v;
    for (n >>= 1; n >= 1; n >>= 1) {
        double m = t->tree[2 * n] < t->tree[2 * n + 1] ? t->tree[2 * n] : t->tree[2 * n + 1];

        if (t->tree[n] == m)
            break;   /* nothing above changes either */
        t->tree[n] = m;
    }
}

/* The first leaf whose value is <= x, or -1. */
static int tree_first_le(const ms__rtrack_t *t, double x)
{
    int n = 1;

    if (!(t->tree[1] <= x))
        return -1;
    while (n < t->size)
        n = t->tree[2 * n] <= x ? 2 * n : 2 * n + 1;
    return n - t->size;
}

static void track_free(const ms_sched_t *s, ms__rtrack_t *t)
{
    ms__sfree(s, t->tree);
    ms__sfree(s, t->dirty);
    ms__sfree(s, t->mark);
    ms__sfree(s, t->lmask);
}

void ms__resv_fini(ms_sched_t *s)
{
    int k, i;

    for (k = 0; k < s->ngroups; k++) {
        for (i = 0; i < s->grp[k].ntrk; i++)
            track_free(s, &s->grp[k].trk[i]);
        ms__sfree(s, s->grp[k].trk);
        s->grp[k].trk = NULL;
        s->grp[k].ntrk = 0;
    }
}

/* The tracker of `key` in group gi, made (and filled) on first use. */
static ms_status_t track_get(ms_sched_t *s, int gi, int key, ms__rtrack_t **out)
{
    ms__grp_t *gr = &s->grp[gi];
    ms__rtrack_t *t, *v;
    int i, size = 1;

    for (i = 0; i < gr->ntrk; i++)
        if (gr->trk[i].key == key) {
            *out = &gr->trk[i];
            return MS_OK;
        }
    if ((v = ms__srealloc(s, gr->trk, (size_t)(gr->ntrk + 1) * sizeof(*v))) == NULL)
        return MS_ENOMEM;
    gr->trk = v;
    t = &v[gr->ntrk];
    memset(t, 0, sizeof(*t));
    t->key = key;
    t->nleaf = key >= 0 ? gr->ngpus : gr->nnodes;
    while (size < t->nleaf)
        size *= 2;
    t->size = size;
    t->tree = ms__salloc(s, 2 * (size_t)size * sizeof(*t->tree));
    t->dirty = ms__salloc(s, (size_t)t->nleaf * sizeof(*t->dirty));
    t->mark = ms__scalloc(s, (size_t)t->nleaf, 1);
    t->lmask = ms__salloc(s, (size_t)t->nleaf * sizeof(*t->lmask));
    if (t->tree == NULL || t->dirty == NULL || t->mark == NULL || t->lmask == NULL) {
        track_free(s, t);
        return MS_ENOMEM;
    }
    for (i = 0; i < size; i++)
        t->tree[size + i] = i < t->nleaf ? leaf_value(s, gr, t, i) : INFINITY;
    for (i = size - 1; i >= 1; i--)
        t->tree[i] = t->tree[2 * i] < t->tree[2 * i + 1] ? t->tree[2 * i] : t->tree[2 * i + 1];
    gr->ntrk++;
    gr->touched1 = 0;   /* the new tracker has no marks yet */
    *out = t;
    return MS_OK;
}

void ms__resv_touch(ms_sched_t *s, int gi, int l)
{
    ms__grp_t *gr = &s->grp[gi];
    int i;

    s->rc_touched = ++s->stamp;
    if (gr->touched1 == l + 1)
        return;   /* marked in every tracker already (issue 25) */
    gr->touched1 = l + 1;
    for (i = 0; i < gr->ntrk; i++) {
        ms__rtrack_t *t = &gr->trk[i];
        int leaf = t->key >= 0 ? l : l / gr->gpn;

        if (!t->mark[leaf]) {
            t->mark[leaf] = 1;
            t->dirty[t->ndirty++] = leaf;
        }
    }
}

/* Bring the marked leaves up to date. */
static void track_sync(ms_sched_t *s, ms__grp_t *gr, ms__rtrack_t *t)
{
    if (t->ndirty > 0)
        gr->touched1 = 0;   /* its marks go: the next touch marks again */
    while (t->ndirty > 0) {
        int leaf = t->dirty[--t->ndirty];

        t->mark[leaf] = 0;
        tree_set(t, leaf, leaf_value(s, gr, t, leaf));
    }
}

ms_status_t ms__easy_reserve(ms_sched_t *s, int32_t head, double now)
{
    const ms__job_t *j = &s->jobs[head];
    const ms__cls_t *c = &s->cls[j->cls];
    ms__rtrack_t *t[MS__MAX_GROUPS];
    double best = INFINITY;
    int i, need = 1, win = -1, leaf;
    ms_status_t st;

    if (c->node >= 0 || s->test_resv_scan)
        return ms__easy_reserve_scan(s, head, now);   /* one node: O(its GPUs) */
    if (s->rc_head == head && s->rc_n > 0 && s->rc_t > now && s->rc_touched <= s->rc_at) {
        /* the same head, no GPU changed since (no op, no new start time),
         * and its time still ahead (so it does not depend on now): the same
         * reservation, in s->easy_* still (the scan clears rc_head) */
        s->easy_head = head;
        s->easy_t = s->rc_t;
        s->easy_n = s->rc_n;
        return MS_OK;
    }
    s->rc_head = -1;
    s->easy_head = -1;
    s->easy_n = 0;
    for (i = 0; i < s->ngroups; i++)
        if (s->grp[i].gpn > need)
            need = s->grp[i].gpn;
    if ((st = ms__easy_grow(s, need)) != MS_OK)
        return st;
    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i];

        if ((st = track_get(s, gi, j->gang > 1 ? -j->gang : c->prof[gi], &t[i])) != MS_OK)
            return st;
        track_sync(s, &s->grp[gi], t[i]);
        if (t[i]->tree[1] <= now) {
            win = i;   /* free by now: the first such group wins */
            best = now;
            break;
        }
        if (t[i]->tree[1] < best) {
            best = t[i]->tree[1];
            win = i;
        }
    }
    if (win < 0)
        return MS_OK;   /* no GPU can ever host it under its kept GIs */
    leaf = tree_first_le(t[win], best);
    /* the scan's answer on that leaf at the real now: its time and slices */
    if (j->gang > 1) {
        best = INFINITY;
        ms__easy_gang_node(s, c->order[win], leaf, j->gang, now, &best, s->easy_gpu + s->easy_cap);
    } else {
        const ms__grp_t *gr = &s->grp[c->order[win]];
        uint16_t mask = t[win]->lmask[leaf];

        if (!(best > now)) {
            /* at or before now: the jobs past their estimate end together
             * at now, which decides the slices; a time ahead of now is the
             * same at -inf and at now, slices and all (the ends after now
             * keep their order, and those before it all come first) */
            s->st.resv_evals++;
            mask = 0xffffu;
            best = ms__easy_gpu_free_at(s, gr, leaf, c->prof[c->order[win]], now, &mask);
        }
        s->easy_n = 1;
        s->easy_gpu[0] = gr->l2g[leaf];
        s->easy_mask[0] = mask;
    }
    if (s->easy_n > 0) {
        s->easy_head = head;
        s->easy_t = best;
    }
    if (s->easy_n > 0 && best > now) {
        /* a time ahead is the leaf's own (not now's): reusable later */
        s->rc_head = head;
        s->rc_at = s->stamp;
        s->rc_t = best;
        s->rc_n = s->easy_n;
    }
    return MS_OK;
}
