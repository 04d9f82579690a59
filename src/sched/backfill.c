/* backfill.c - reservation-based (EASY) backfilling: the head's reservation
 * and the test a later job's placement must pass.
 *
 * The reservation. For every GPU that could host the head (its candidate
 * groups, or its node), the time at which its profile fits there if the
 * running jobs end as estimated (start + estimate, or now for a job past
 * its estimate): the instances of running jobs are removed in order of
 * expected end until a legal start of the profile is free. Idle job-scoped
 * GIs count as free (the dynamic policies destroy them to make room). A GI
 * the group keeps after its job (a static layout's, node-profile's: the
 * persist bits) never goes: it is the head's when its job ends if it has
 * the head's profile, and it blocks its slices otherwise. A time-sliced or
 * whole GPU frees up when fewer than `replicas` jobs remain. A gang needs
 * `gang` empty GPUs of one node: the node's time is the gang-th smallest
 * time at which its GPUs empty. The reservation is the earliest such time,
 * on the first GPU (or node) that reaches it, with the slices its placement
 * needs there (the first free legal start, or the kept GI; the whole GPU
 * for gangs and non-MIG GPUs). No reservation when no GPU can ever host
 * the head under its kept GIs (node-profile may re-cut a node for it).
 *
 * The test. A later job may start now if by its estimate it ends no later
 * than the reservation, or if its plan creates, starts or moves nothing
 * into the reserved slices. With exact estimates (and no migration) the
 * reserved slices are then free at the reservation time, so a policy that
 * places whenever a legal start is free starts the head no later than it
 * (tests/sched/test_queue.c checks it over random traces).
 *
 * Cost: this scan is O(GPUs of the head's candidate groups x instances); the
 * scheduler keeps the same answer incrementally (resv.c) and scans only for
 * a head constrained to one node (O(its GPUs)) and in the tests, which
 * compare the two. The per-placement test is O(ops x reserved GPUs).
 */
#include <math.h>
#include <string.h>

#include "sched/sched_int.h"

static double job_end(const ms_sched_t *s, int32_t slot, double now)
{
    const ms__job_t *j = &s->jobs[slot];
    double e = j->start_t + ms__job_est(s, j);

    return e > now ? e : now;
}

/* The first legal start of profile k free in occupancy occ; -1 if none. */
static int first_start(const ms_geom_t *g, int k, uint16_t occ)
{
    const ms_profile_t *p = ms_geom_profile(g, k);
    int st;

    for (st = 0; st < MS_MAX_WIDTH; st++)
        if ((p->start_mask >> st & 1u) && (ms_geom_profile_mask(g, k, st) & occ) == 0)
            return st;
    return -1;
}

/* sort a small array of (end, mask) pairs by end */
static void sort_pairs(double *e, uint16_t *m, int n)
{
    int i, k;

    for (i = 1; i < n; i++) {
        double x = e[i];
        uint16_t y = m[i];

        for (k = i; k > 0 && e[k - 1] > x; k--) {
            e[k] = e[k - 1];
            m[k] = m[k - 1];
        }
        e[k] = x;
        m[k] = y;
    }
}

/* When profile k fits on local GPU l of group gr; *mask: the slices then;
 * INFINITY if never under the GPU's kept GIs. With now = -INFINITY, every
 * running job ends at start + estimate and "fits at once" is -INFINITY:
 * the answer at a real now is then max(now, that), because only the order
 * of the ends matters and max(now, .) keeps it (resv.c relies on it; the
 * slices at a time <= now are not, since the jobs past their estimate end
 * together at now: resv.c recomputes the chosen GPU at the real now). */
static double gpu_free_at_ref(const ms_sched_t *s, const ms__grp_t *gr, int l, int k, double now,
                              uint16_t *mask)
{
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    double e[MS_MAX_INST], best = INFINITY;
    uint16_t m[MS_MAX_INST], occ = 0, perm = 0;
    int n = 0, i, st;

    if (gr->c->share != MS_SHARE_MIG) {
        int cap = gr->c->replicas > 0 ? gr->c->replicas : 1;

        for (i = 0; i < gpu->ninst; i++)
            if (gpu->inst[i].job >= 0) {
                e[n] = job_end(s, gpu->inst[i].job, now);
                m[n++] = 0;
            }
        sort_pairs(e, m, n);
        *mask = 0xffffu;
        return n < cap ? now : e[n - cap];
    }
    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];
        uint16_t im = ms_geom_profile_mask(gr->c->geom, in->prof, in->start);

        if (in->start >= 0 && (gr->persist[l] >> in->start & 1u)) {
            /* a kept GI (static layouts, node-profile): it stays when its
             * job ends, so it is the head's only if it has its profile */
            double t = in->job >= 0 ? job_end(s, in->job, now) : now;

            perm = (uint16_t)(perm | im);
            if (in->prof == k && t < best) {
                best = t;
                *mask = im;
            }
            continue;
        }
        if (in->job < 0)
            continue;   /* an idle job-scoped GI: the policy destroys it */
        e[n] = job_end(s, in->job, now);
        m[n] = im;
        occ = (uint16_t)(occ | im);
        n++;
    }
    sort_pairs(e, m, n);
    if ((st = first_start(gr->c->geom, k, (uint16_t)(occ | perm))) >= 0) {
        *mask = ms_geom_profile_mask(gr->c->geom, k, st);
        return now;
    }
    for (i = 0; i < n && !(e[i] >= best); i++) {
        /* a fit needs the removal of every instance that ends with this one */
        occ = perm;
        for (st = i + 1; st < n; st++)
            occ = (uint16_t)(occ | m[st]);
        if (i + 1 < n && e[i + 1] == e[i])
            continue;
        if ((st = first_start(gr->c->geom, k, occ)) >= 0) {
            *mask = ms_geom_profile_mask(gr->c->geom, k, st);
            return e[i];
        }
    }
    if (best < INFINITY || perm != 0)
        return best;
    /* an empty GPU always hosts a profile of its geometry */
    *mask = 0xffffu;
    return n > 0 ? e[n - 1] : now;
}

/* The first legal start of profile k free in occ, from the group's table;
 * -1 if none. */
static inline int first_free(const ms__grp_t *gr, int k, uint16_t occ)
{
    int i;

    for (i = 0; i < gr->nstarts[k]; i++)
        if ((gr->smask[k][i] & occ) == 0)
            return i;
    return -1;
}

/* Instance in (slices im) of local GPU l: a GI the group keeps after its
 * job (the persist bits)? Then its slices go into *perm and, if it has
 * profile k and frees sooner than *best, it is the head's: *best, *mask. */
static inline bool kept_gi(const ms_sched_t *s, const ms__grp_t *gr, int l, const ms_inst_t *in,
                           uint16_t im, int k, double now, uint16_t *perm, double *best,
                           uint16_t *mask)
{
    double t;

    if (in->start < 0 || !(gr->persist[l] >> in->start & 1u))
        return false;
    t = in->job >= 0 ? job_end(s, in->job, now) : now;
    *perm = (uint16_t)(*perm | im);
    if (in->prof == k && t < *best) {
        *best = t;
        *mask = im;
    }
    return true;
}

/* ms__easy_gpu_free_at for a profile with one legal start (a 7g; a 4g on
 * an A100), without the sort: its slices km are free once the last job on
 * them ends (the latest end among the instances that overlap km), unless
 * a kept GI lies on them: then only a kept GI of k itself hosts it (it
 * can only be at km), at its job's end. The suffix walk's answer, bit for
 * bit. O(instances); most blocked heads are of these profiles. */
static double free_at_one_start(const ms_sched_t *s, const ms__grp_t *gr, int l, int k,
                                double now, uint16_t *mask)
{
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    uint16_t km = gr->smask[k][0], perm = 0;
    double best = INFINITY, last = -INFINITY;   /* (a job's end is finite) */
    int i;

    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];
        uint16_t im = in->start >= 0 ? gr->pmask[in->prof][in->start] : 0;

        if (kept_gi(s, gr, l, in, im, k, now, &perm, &best, mask))
            continue;
        if (in->job >= 0 && (im & km) != 0) {
            double e = job_end(s, in->job, now);

            if (e > last)
                last = e;
        }
    }
    if ((km & perm) != 0)
        return best;   /* kept GIs on its slices: one of k itself, or never */
    *mask = km;
    return last > -INFINITY ? last : now;
}

/* gpu_free_at_ref's answer, bit for bit, with the masks from the group's
 * table and the occupancy of the instances after each one as suffix ORs
 * (O(n) instead of O(n^2) and no call per start): the trackers evaluate a
 * GPU at every change of it (resv.c); the scan, the tests' oracle, keeps
 * the plain version. */
double ms__easy_gpu_free_at(const ms_sched_t *s, const ms__grp_t *gr, int l, int k, double now,
                            uint16_t *mask)
{
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    double e[MS_MAX_INST], best = INFINITY;
    uint16_t m[MS_MAX_INST], suf[MS_MAX_INST + 1], occ = 0, perm = 0;
    int n = 0, i, st;

    if (gr->c->share != MS_SHARE_MIG)
        return gpu_free_at_ref(s, gr, l, k, now, mask);
    if (gr->nstarts[k] == 1)
        return free_at_one_start(s, gr, l, k, now, mask);
    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];
        uint16_t im = in->start >= 0 ? gr->pmask[in->prof][in->start] : 0;

        if (kept_gi(s, gr, l, in, im, k, now, &perm, &best, mask))
            continue;
        if (in->job < 0)
            continue;
        e[n] = job_end(s, in->job, now);
        m[n] = im;
        occ = (uint16_t)(occ | im);
        n++;
    }
    sort_pairs(e, m, n);
    if ((st = first_free(gr, k, (uint16_t)(occ | perm))) >= 0) {
        *mask = gr->smask[k][st];
        return now;
    }
    suf[n] = perm;
    for (i = n - 1; i >= 0; i--)
        suf[i] = (uint16_t)(suf[i + 1] | m[i]);
    for (i = 0; i < n && !(e[i] >= best); i++) {
        if (i + 1 < n && e[i + 1] == e[i])
            continue;
        if ((st = first_free(gr, k, suf[i + 1])) >= 0) {
            *mask = gr->smask[k][st];
            return e[i];
        }
    }
    if (best < INFINITY || perm != 0)
        return best;
    *mask = 0xffffu;
    return n > 0 ? e[n - 1] : now;
}

/* When local GPU l of gr runs nothing. */
double ms__easy_gpu_empty_at(const ms_sched_t *s, const ms__grp_t *gr, int l, double now)
{
    const ms_gpu_t *gpu = &gr->c->gpus[l];
    double t = now;
    int i;

    for (i = 0; i < gpu->ninst; i++)
        if (gpu->inst[i].job >= 0) {
            double e = job_end(s, gpu->inst[i].job, now);

            if (e > t)
                t = e;
        }
    return t;
}

static void dsort(double *a, int32_t *b, int n)
{
    int i, k;

    for (i = 1; i < n; i++) {
        double x = a[i];
        int32_t y = b[i];

        for (k = i; k > 0 && a[k - 1] > x; k--) {
            a[k] = a[k - 1];
            b[k] = b[k - 1];
        }
        a[k] = x;
        b[k] = y;
    }
}

/* A gang on local node nd of group gi: when gang of its GPUs are empty.
 * Fills the reservation if it is earlier than *best. */
void ms__easy_gang_node(ms_sched_t *s, int gi, int nd, int gang, double now, double *best,
                        int32_t *gbuf)
{
    const ms__grp_t *gr = &s->grp[gi];
    int first = nd * gr->gpn, n = gr->ngpus - first, i;

    if (n > gr->gpn)
        n = gr->gpn;
    if (n < gang)
        return;
    s->st.resv_evals++;
    for (i = 0; i < n; i++) {
        s->easy_tmp[i] = ms__easy_gpu_empty_at(s, gr, first + i, now);
        gbuf[i] = gr->l2g[first + i];
    }
    dsort(s->easy_tmp, gbuf, n);
    if (s->easy_tmp[gang - 1] < *best) {
        *best = s->easy_tmp[gang - 1];
        s->easy_n = gang;
        for (i = 0; i < gang; i++) {
            s->easy_gpu[i] = gbuf[i];
            s->easy_mask[i] = 0xffffu;
        }
    }
}

/* Room for a node's GPUs in the reservation's arrays. */
ms_status_t ms__easy_grow(ms_sched_t *s, int n)
{
    int32_t *g;
    uint16_t *m;
    double *t;

    if (n <= s->easy_cap)
        return MS_OK;
    g = ms__srealloc(s, s->easy_gpu, (size_t)n * 2 * sizeof(*g));
    if (g == NULL)
        return MS_ENOMEM;
    s->easy_gpu = g;
    m = ms__srealloc(s, s->easy_mask, (size_t)n * sizeof(*m));
    if (m == NULL)
        return MS_ENOMEM;
    s->easy_mask = m;
    t = ms__srealloc(s, s->easy_tmp, (size_t)n * sizeof(*t));
    if (t == NULL)
        return MS_ENOMEM;
    s->easy_tmp = t;
    s->easy_cap = n;
    return MS_OK;
}

/* One group's GPUs [lo, hi) (local) for a single-GPU head of profile k. */
static void scan_gpus(ms_sched_t *s, int gi, int lo, int hi, int k, double now, double *best)
{
    const ms__grp_t *gr = &s->grp[gi];
    int l;

    for (l = lo; l < hi && *best > now; l++) {
        uint16_t mask = 0xffffu;
        double t = gpu_free_at_ref(s, gr, l, k, now, &mask);

        s->st.resv_evals++;
        if (t < *best) {
            *best = t;
            s->easy_n = 1;
            s->easy_gpu[0] = gr->l2g[l];
            s->easy_mask[0] = mask;
        }
    }
}

ms_status_t ms__easy_reserve_scan(ms_sched_t *s, int32_t head, double now)
{
    const ms__job_t *j = &s->jobs[head];
    const ms__cls_t *c = &s->cls[j->cls];
    double best = INFINITY;
    int i, need = 1;
    ms_status_t st;

    s->easy_head = -1;
    s->easy_n = 0;
    s->rc_head = -1;   /* s->easy_* is no longer resv.c's last answer */
    for (i = 0; i < s->ngroups; i++)
        if (s->grp[i].gpn > need)
            need = s->grp[i].gpn;
    if ((st = ms__easy_grow(s, need)) != MS_OK)
        return st;
    if (c->node >= 0) {
        int gi = s->node_grp[c->node];
        int l0 = s->g2l[s->node_first[c->node]];
        int n = s->nodes[c->node].ngpus;

        if (c->prof[gi] < 0)
            return MS_OK;
        if (j->gang > 1)
            ms__easy_gang_node(s, gi, l0 / s->grp[gi].gpn, j->gang, now, &best, s->easy_gpu + s->easy_cap);
        else
            scan_gpus(s, gi, l0, l0 + n, c->prof[gi], now, &best);
    } else {
        for (i = 0; i < c->norder; i++) {
            int gi = c->order[i], nd;
            const ms__grp_t *gr = &s->grp[gi];

            if (j->gang > 1) {
                for (nd = 0; nd < gr->nnodes; nd++)
                    ms__easy_gang_node(s, gi, nd, j->gang, now, &best, s->easy_gpu + s->easy_cap);
            } else {
                scan_gpus(s, gi, 0, gr->ngpus, c->prof[gi], now, &best);
            }
        }
    }
    if (s->easy_n > 0) {
        s->easy_head = head;
        s->easy_t = best;
    }
    return MS_OK;
}

/* Does an op into (gpu, mask) touch the reservation? */
static bool hits(const ms_sched_t *s, int32_t gpu, uint16_t mask)
{
    int i;

    for (i = 0; i < s->easy_n; i++)
        if (s->easy_gpu[i] == gpu && (s->easy_mask[i] & mask) != 0)
            return true;
    return false;
}

bool ms__easy_ends_in_time(const ms_sched_t *s, int32_t slot, double now)
{
    /* a small tolerance: a job whose estimate ends exactly at the
     * reservation is harmless (completions come before starts) */
    return now + ms__job_est(s, &s->jobs[slot]) <= s->easy_t + 1e-9 * (1.0 + fabs(s->easy_t));
}

bool ms__easy_plan_ok(const ms_sched_t *s, int32_t slot, int gi, double now)
{
    const ms__grp_t *gr = &s->grp[gi];
    int i;

    if (s->easy_head < 0 || slot == s->easy_head || ms__easy_ends_in_time(s, slot, now))
        return true;
    for (i = 0; i < s->plan.n; i++) {
        const ms_op_t *op = &s->plan.ops[i];
        uint16_t mask;

        if (op->kind != MS_OP_CREATE && op->kind != MS_OP_START && op->kind != MS_OP_MOVE)
            continue;
        if (op->gpu < 0 || op->gpu >= gr->ngpus)
            return false;
        mask = gr->c->share == MS_SHARE_MIG && op->start >= 0 && op->prof >= 0
                   ? ms_geom_profile_mask(gr->c->geom, op->prof, op->start)
                   : 0xffffu;
        if (hits(s, gr->l2g[op->gpu], mask))
            return false;
    }
    return true;
}

bool ms__easy_node_ok(const ms_sched_t *s, int32_t slot, int32_t node, double now)
{
    int i;
    int32_t lo = s->node_first[node], hi = lo + s->nodes[node].ngpus;

    if (s->easy_head < 0 || slot == s->easy_head || ms__easy_ends_in_time(s, slot, now))
        return true;
    for (i = 0; i < s->easy_n; i++)
        if (s->easy_gpu[i] >= lo && s->easy_gpu[i] < hi)
            return false;
    return true;
}

ms_status_t ms_sched_head_reservation(ms_sched_t *s, int32_t *slot, double *t)
{
    ms_status_t st;

    if (s == NULL)
        return MS_ENOENT;
    if (s->easy_head < 0 && s->easy_want >= 0 && s->easy_want < s->njobs &&
        s->jobs[s->easy_want].state == MS_JOB_QUEUED) {
        /* the pass skipped it: made now, on the cluster it left (nothing
         * changed after the skip that did not make it; a job that left the
         * queue since, without a pass, has none) */
        if ((st = ms__easy_reserve(s, s->easy_want, s->easy_want_t)) != MS_OK)
            return st;
        s->easy_want = -1;
    }
    if (s->easy_head < 0)
        return MS_ENOENT;
    if (slot != NULL)
        *slot = s->easy_head;
    if (t != NULL)
        *t = s->easy_t;
    return MS_OK;
}
