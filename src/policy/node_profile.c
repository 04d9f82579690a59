/* node_profile.c - seed 002's node-level MIG profile switching.
 *
 * Every node runs one of three whole-node layouts on all its GPUs:
 *   inference-peak  as many of the smallest classic profile as fit (7x1g)
 *   balanced        as many 2g as fit, the rest filled greedily (3x2g+1g)
 *   training        one full-size instance (1x7g)
 * A job takes the smallest idle instance that is at least its profile
 * (lowest GPU, lowest start) on a node that is not draining.
 *
 * Profiles map to classes by the smallest layout that hosts them:
 * inference = fits the inference-peak instance (1g), balanced = fits a
 * balanced instance (2g), training = needs the full GPU (3g, 4g, 7g).
 *
 * on_idle picks each node's target layout (seed 002's Reconcile):
 *   1. anti-starvation (inferred): if jobs of a class wait and no node's
 *      layout can host that class, one eligible node (one already heading
 *      there, then one past its hysteresis, then the fewest running jobs)
 *      is given the layout of that class (training before balanced);
 *   2. every other eligible node, in order, applies the seed's rule to
 *      inf = waiting inference jobs not yet covered + inference jobs running
 *      on the node, train = the same for training jobs:
 *        train > 0 && inf == 0 -> training; inf > 4 -> inference-peak;
 *        else balanced;
 *      the capacity of the chosen layout is taken off the waiting counts, so
 *      nodes spread over the demand.
 * Eligible: the node has kept its layout for hysteresis_s (waived in step 1
 * for a drained node, so a class nobody hosts cannot starve). A node whose
 * target differs from its layout switches at once when it is drained (no
 * running job); otherwise it is cordoned (gets no new job) until it drains.
 * Setup gives every node the balanced layout; it may switch at once.
 */
#include "policy/policy_int.h"

#include <stdlib.h>
#include <string.h>

enum { INF = 0, BAL = 1, TRN = 2, NCLASS = 3 };

typedef struct node {
    int cur, target;
    bool cordoned;
    double since;
} node_t;

typedef struct np {
    const ms_geom_t *geom;
    double hysteresis;
    int per, nnodes;
    ms__layout_t lay[NCLASS];
    int cls[MS_MAX_PROFILES];      /* class of each profile, -1 if none hosts it */
    int cap[NCLASS][NCLASS];       /* jobs of class c one GPU in layout l hosts */
    node_t *nodes;
} np_t;

static int smallest_base(const ms_geom_t *g, int min_c)
{
    int k;

    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        const ms_profile_t *p = ms_geom_profile(g, k);
        if ((p->flags & MS_PF_BASE) && p->cslices >= min_c)
            return k;
    }
    return -1;
}

/* k as often as it fits, then the largest profile that fits, repeatedly. */
static ms_status_t fill_layout(const ms_geom_t *g, int k, bool fill, ms__layout_t *out)
{
    int profs[MS_MAX_INST], n = 0, q;
    ms_state_t s = ms_geom_empty_state();
    uint16_t fit;

    while (k >= 0 && n < MS_MAX_INST && (fit = ms_state_fit(g, s, k)) != 0) {
        int st = 0;
        while (!((fit >> st) & 1u))
            st++;
        s = ms_state_place(g, s, k, st);
        profs[n++] = k;
    }
    for (q = ms_geom_nprofiles(g) - 1; fill && q >= 0 && n < MS_MAX_INST;) {
        int st = 0;
        if (!(ms_geom_profile(g, q)->flags & MS_PF_BASE) || (fit = ms_state_fit(g, s, q)) == 0) {
            q--;
            continue;
        }
        while (!((fit >> st) & 1u))
            st++;
        s = ms_state_place(g, s, q, st);
        profs[n++] = q;
    }
    return n > 0 ? ms__layout_assign(g, profs, n, out) : MS_ENOTSUP;
}

static void np_destroy(void *self)
{
    np_t *p = self;

    if (p == NULL)
        return;
    free(p->nodes);
    free(p);
}

static ms_status_t np_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    const ms_geom_t *g = c->geom;
    np_t *p = calloc(1, sizeof(*p));
    int k, l, i, two;
    ms_status_t st;

    if (p == NULL)
        return MS_ENOMEM;
    p->geom = g;
    p->hysteresis = cfg->hysteresis_s;
    p->per = c->gpus_per_node > 0 ? c->gpus_per_node : c->ngpus;
    p->nnodes = (c->ngpus + p->per - 1) / p->per;
    two = ms_geom_profile_find(g, "2g");
    if (two < 0)
        two = smallest_base(g, 2);
    if ((st = fill_layout(g, smallest_base(g, 1), false, &p->lay[INF])) != MS_OK ||
        (st = fill_layout(g, two, true, &p->lay[BAL])) != MS_OK ||
        (st = fill_layout(g, ms__full_profile(g), false, &p->lay[TRN])) != MS_OK ||
        (p->nodes = calloc((size_t)p->nnodes, sizeof(*p->nodes))) == NULL) {
        np_destroy(p);
        return st != MS_OK ? st : MS_ENOMEM;
    }
    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        p->cls[k] = -1;
        for (l = NCLASS - 1; l >= 0; l--)
            for (i = 0; i < p->lay[l].n; i++)
                if (ms__covers(g, p->lay[l].gi[i].prof, k))
                    p->cls[k] = l;
    }
    for (l = 0; l < NCLASS; l++)
        for (i = 0; i < p->lay[l].n; i++) {
            int c0 = -1;
            for (k = 0; k < ms_geom_nprofiles(g); k++)
                if (p->lay[l].gi[i].prof == k)
                    c0 = p->cls[k];
            if (c0 >= 0)
                p->cap[l][c0]++;
        }
    for (i = 0; i < p->nnodes; i++) {
        p->nodes[i].cur = p->nodes[i].target = BAL;
        p->nodes[i].since = -1e300;
    }
    *self = p;
    return MS_OK;
}

static ms_status_t node_restore(const np_t *p, const ms_cluster_t *c, int node, ms_plan_t *out)
{
    int g, hi = (node + 1) * p->per < c->ngpus ? (node + 1) * p->per : c->ngpus;
    ms_status_t st;

    for (g = node * p->per; g < hi; g++)
        if ((st = ms__layout_restore(c, g, &p->lay[p->nodes[node].cur], out)) != MS_OK)
            return st;
    return MS_OK;
}

static ms_status_t np_setup(void *self, const ms_cluster_t *c, ms_plan_t *out)
{
    const np_t *p = self;
    int n, n0 = out->n;
    ms_status_t st;

    for (n = 0; n < p->nnodes; n++)
        if ((st = node_restore(p, c, n, out)) != MS_OK) {
            out->n = n0;
            return st;
        }
    return MS_OK;
}

static bool np_can_host(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    const np_t *p = self;

    if (j->gang > 1)
        return ms__dyn_can_host(c, j);
    return c->share == MS_SHARE_MIG && j->prof >= 0 && j->prof < ms_geom_nprofiles(c->geom) &&
           p->cls[j->prof] >= 0;
}

static uint64_t np_key(void *ctx, const ms_cluster_t *c, int gi, const ms_inst_t *in, int k)
{
    const np_t *p = ctx;

    if (p->nodes[gi / p->per].cordoned)
        return UINT64_MAX;
    return ms__smallest_key(NULL, c, gi, in, k);
}

static ms_status_t np_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    int g, s;
    ms_status_t st;

    if (j->gang > 1)
        return ms_policy_place_gang(c, j, out);
    if ((st = ms__scan_idle(c, j->prof, np_key, self, &g, &s)) != MS_OK)
        return st;
    return ms_plan_start(out, j->idx, g, s, c->gpus[g].inst[ms_gpu_find_inst(&c->gpus[g], s)].prof);
}

static ms_status_t np_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                ms_plan_t *out)
{
    const np_t *p = self;
    int n0 = out->n;
    ms_status_t st;

    (void)now;
    st = ms__layout_restore(c, g, &p->lay[p->nodes[g / p->per].cur], out);
    if (st != MS_OK)
        out->n = n0;
    return st;
}

static int seed_rule(int inf, int train)
{
    if (train > 0 && inf == 0)
        return TRN;
    if (inf > 4)
        return INF;
    return BAL;
}

/* Step 1's choice: a node already heading to cl, then one past its
 * hysteresis, then the fewest running jobs (then the lowest index). */
static bool better(const np_t *p, int a, int b, int cl, const int *total, double now)
{
    int ta = p->nodes[a].target == cl, tb = p->nodes[b].target == cl;
    int ha = now - p->nodes[a].since >= p->hysteresis, hb = now - p->nodes[b].since >= p->hysteresis;

    if (ta != tb)
        return ta > tb;
    if (ha != hb)
        return ha > hb;
    return total[a] < total[b];
}

static ms_status_t np_on_idle(void *self, const ms_cluster_t *c, const int *n_by_prof,
                              double now, ms_plan_t *out)
{
    np_t *p = self;
    int wait[NCLASS] = {0}, k, n, g, i, cl, n0 = out->n;
    int (*run)[NCLASS] = calloc((size_t)p->nnodes, sizeof(*run));
    int *total = calloc((size_t)p->nnodes, sizeof(*total));
    bool *assigned = calloc((size_t)p->nnodes, sizeof(*assigned));
    ms_status_t st = MS_OK;

    if (run == NULL || total == NULL || assigned == NULL) {
        st = MS_ENOMEM;
        goto out;
    }
    for (k = 0; n_by_prof != NULL && k < ms_geom_nprofiles(p->geom); k++)
        if (p->cls[k] >= 0)
            wait[p->cls[k]] += n_by_prof[k];
    for (g = 0; g < c->ngpus; g++)
        for (i = 0; i < c->gpus[g].ninst; i++) {
            const ms_inst_t *in = &c->gpus[g].inst[i];
            if (in->job < 0)
                continue;
            total[g / p->per]++;
            /* the class of the job is not known here; that of its GI is */
            if (p->cls[in->prof] >= 0)
                run[g / p->per][p->cls[in->prof]]++;
        }
    /* 1. classes nobody can host */
    for (cl = TRN; cl >= BAL; cl--) {
        int best = -1;
        bool served = false;
        if (wait[cl] == 0)
            continue;
        for (n = 0; n < p->nnodes; n++)
            served |= p->nodes[n].cur >= cl;
        if (served)
            continue;
        for (n = 0; n < p->nnodes; n++) {
            /* hysteresis is waived for a drained node: nobody can host the
             * class, and waiting for the clock would only starve it */
            if (assigned[n] || (now - p->nodes[n].since < p->hysteresis && total[n] > 0))
                continue;
            if (best < 0 || better(p, n, best, cl, total, now))
                best = n;
        }
        if (best >= 0) {
            assigned[best] = true;
            p->nodes[best].target = cl;
            for (i = 0; i < NCLASS; i++)
                wait[i] -= p->cap[cl][i] * p->per;
        }
    }
    /* 2. the seed's rule on what is left */
    for (n = 0; n < p->nnodes; n++) {
        int t;
        if (assigned[n])
            continue;
        if (now - p->nodes[n].since < p->hysteresis) {
            p->nodes[n].target = p->nodes[n].cur;
            continue;
        }
        t = seed_rule((wait[INF] > 0 ? wait[INF] : 0) + run[n][INF],
                      (wait[TRN] > 0 ? wait[TRN] : 0) + run[n][TRN]);
        p->nodes[n].target = t;
        for (i = 0; i < NCLASS; i++)
            wait[i] -= p->cap[t][i] * p->per;
    }
    /* 3. switch drained nodes, cordon the others */
    for (n = 0; n < p->nnodes && st == MS_OK; n++) {
        node_t *nd = &p->nodes[n];
        if (nd->target == nd->cur) {
            nd->cordoned = false;
        } else if (total[n] > 0) {
            nd->cordoned = true;
        } else {
            nd->cur = nd->target;
            nd->since = now;
            nd->cordoned = false;
            st = node_restore(p, c, n, out);
        }
    }
out:
    if (st != MS_OK)
        out->n = n0;
    free(run);
    free(total);
    free(assigned);
    return st;
}

const ms_policy_ops_t ms_policy_node_profile = {
    .abi = MS_POLICY_ABI,
    .name = "node-profile",
    .help = "seed 002: whole-node layouts (7x1g / 3x2g / 1x7g) switched when drained",
    .share = MS_SHARE_MIG,
    .create = np_create,
    .destroy = np_destroy,
    .setup = np_setup,
    .can_host = np_can_host,
    .place = np_place,
    .on_finish = np_on_finish,
    .on_idle = np_on_idle,
};
