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
 * on_idle picks each node's target layout (seed 002's Reconcile) from the
 * demand left uncovered: the waiting jobs per class, less what idle GIs can
 * host (a GI hosts its own class and every smaller one; a node whose GIs
 * are all busy offers nothing, however its layout looks):
 *   1. anti-starvation (inferred): if jobs of a class wait and no node's
 *      layout hosts that class, one node (a drained one, then one already
 *      heading there, then one past its hysteresis, then the fewest running
 *      jobs) is given the layout of that class (training before balanced);
 *   2. busy open nodes serve from their idle GIs;
 *   3. drained nodes in order: while demand is left, the seed's rule on it
 *        train > 0 && inf == 0 -> training; inf > 4 -> inference-peak;
 *        else balanced;
 *      past hysteresis_s, or at once if the node's layout hosts nothing
 *      that waits; the layout's capacity comes off the demand;
 *   4. busy nodes past hysteresis_s (cordoned ones first), while demand is
 *      left: the seed's rule on it plus the node's running jobs; a new
 *      layout that hosts some of that demand cordons the node (no new job)
 *      until it drains. With no demand left every node keeps its layout
 *      and cordons are lifted.
 * A drained node switches at once; setup gives every node the balanced
 * layout, and a node that never switched is past its hysteresis.
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

/* Layouts are nested: a layout hosts every class up to its own. */
static bool hosts(int layout, int cl)
{
    return layout >= cl;
}

/* Does the layout host any class that still has uncovered demand? */
static bool hosts_any(int layout, const int *rem)
{
    int cl;

    for (cl = 0; cl < NCLASS; cl++)
        if (rem[cl] > 0 && hosts(layout, cl))
            return true;
    return false;
}

static bool any_demand(const int *rem)
{
    return rem[INF] > 0 || rem[BAL] > 0 || rem[TRN] > 0;
}

/* Take off rem what idle GIs gis[cl] (counted by the class of the GI) can
 * host: larger classes first, each on the smallest GI class that fits it. */
static void absorb(int *rem, const int *gis)
{
    int left[NCLASS], cl, l;

    memcpy(left, gis, sizeof(left));
    for (cl = TRN; cl >= INF; cl--)
        for (l = cl; l < NCLASS && rem[cl] > 0; l++) {
            int take = rem[cl] < left[l] ? rem[cl] : left[l];
            rem[cl] -= take;
            left[l] -= take;
        }
}

/* What node n hosts in layout l once drained. */
static void absorb_layout(const np_t *p, const ms_cluster_t *c, int n, int l, int *rem)
{
    int gis[NCLASS], cl, lo = n * p->per, hi = lo + p->per < c->ngpus ? lo + p->per : c->ngpus;

    for (cl = 0; cl < NCLASS; cl++)
        gis[cl] = p->cap[l][cl] * (hi - lo);
    absorb(rem, gis);
}

/* Step 1's choice: a drained node (it switches now), then one already
 * heading to cl, then one past its hysteresis, then the fewest running jobs
 * (then the lowest index). */
static bool better(const np_t *p, int a, int b, int cl, const int *total, double now)
{
    int da = total[a] == 0, db = total[b] == 0;
    int ta = p->nodes[a].target == cl, tb = p->nodes[b].target == cl;
    int ha = now - p->nodes[a].since >= p->hysteresis, hb = now - p->nodes[b].since >= p->hysteresis;

    if (da != db)
        return da > db;
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
    int rem[NCLASS] = {0}, k, n, g, i, cl, pass, n0 = out->n;
    int (*run)[NCLASS] = calloc((size_t)p->nnodes, sizeof(*run));
    int (*idle)[NCLASS] = calloc((size_t)p->nnodes, sizeof(*idle));
    int *total = calloc((size_t)p->nnodes, sizeof(*total));
    bool *assigned = calloc((size_t)p->nnodes, sizeof(*assigned));
    ms_status_t st = MS_OK;

    if (run == NULL || idle == NULL || total == NULL || assigned == NULL) {
        st = MS_ENOMEM;
        goto out;
    }
    for (k = 0; n_by_prof != NULL && k < ms_geom_nprofiles(p->geom); k++)
        if (p->cls[k] >= 0)
            rem[p->cls[k]] += n_by_prof[k];
    for (g = 0; g < c->ngpus; g++)
        for (i = 0; i < c->gpus[g].ninst; i++) {
            const ms_inst_t *in = &c->gpus[g].inst[i];
            if (p->cls[in->prof] < 0)
                continue;
            if (in->job < 0) {
                idle[g / p->per][p->cls[in->prof]]++;
                continue;
            }
            total[g / p->per]++;
            /* the class of the job is not known here; that of its GI is */
            run[g / p->per][p->cls[in->prof]]++;
        }
    /* 1. classes nobody can host: one node (drained ones first, their
     * hysteresis waived) takes the layout of that class */
    for (cl = TRN; cl >= BAL; cl--) {
        int best = -1;
        bool served = false;
        if (rem[cl] <= 0)
            continue;
        for (n = 0; n < p->nnodes; n++)
            served |= hosts(p->nodes[n].cordoned ? p->nodes[n].target : p->nodes[n].cur, cl) ||
                      (assigned[n] && hosts(p->nodes[n].target, cl));
        if (served)
            continue;
        for (n = 0; n < p->nnodes; n++) {
            if (assigned[n] || (now - p->nodes[n].since < p->hysteresis && total[n] > 0))
                continue;
            if (best < 0 || better(p, n, best, cl, total, now))
                best = n;
        }
        if (best >= 0) {
            assigned[best] = true;
            p->nodes[best].target = cl;
            absorb_layout(p, c, best, cl, rem);
        }
    }
    /* 2. busy nodes that stay open serve from their idle GIs first */
    for (n = 0; n < p->nnodes; n++)
        if (!assigned[n] && total[n] > 0 && !p->nodes[n].cordoned)
            absorb(rem, idle[n]);
    /* 3. drained nodes: the seed's rule on the demand left; a node whose
     * layout hosts nothing that waits ignores its hysteresis */
    for (n = 0; n < p->nnodes; n++) {
        node_t *nd = &p->nodes[n];
        if (assigned[n] || total[n] > 0)
            continue;
        assigned[n] = true;
        nd->target = nd->cur;
        if (any_demand(rem) &&
            (now - nd->since >= p->hysteresis || !hosts_any(nd->cur, rem)))
            nd->target = seed_rule(rem[INF], rem[TRN]);
        absorb_layout(p, c, n, nd->target, rem);
    }
    /* 4. busy nodes past their hysteresis (those already cordoned first):
     * the seed's rule on the demand left plus the node's running jobs; a
     * node is cordoned only for a layout that hosts some of that demand */
    for (pass = 0; pass < 2; pass++)
        for (n = 0; n < p->nnodes; n++) {
            node_t *nd = &p->nodes[n];
            int t = nd->cur;
            if (assigned[n] || nd->cordoned != (pass == 0))
                continue;
            assigned[n] = true;
            if (any_demand(rem) && now - nd->since >= p->hysteresis) {
                t = seed_rule(rem[INF] + run[n][INF], rem[TRN] + run[n][TRN]);
                if (!hosts_any(t, rem))
                    t = nd->cur;
            }
            nd->target = t;
            if (t != nd->cur)
                absorb_layout(p, c, n, t, rem);
            else if (nd->cordoned)
                absorb(rem, idle[n]);
        }
    /* 5. switch drained nodes, cordon the others */
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
    free(idle);
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
