/* node_profile.c - seed 002's node-level MIG profile switching, reworked
 * for issue 11 so that it is never worse than static partitioning by more
 * than noise, and better where the demand is skewed.
 *
 * Every node runs one layout kind on all its GPUs:
 *   static          the `static` policy's per-GPU layouts (GPU g gets
 *                   layout g mod count of the default cycle): the start;
 *   inference-peak  as many of the smallest classic profile as fit (7x1g)
 *   balanced        as many 2g as fit, the rest filled greedily (3x2g+1g)
 *   training        one full-size instance (1x7g)
 * A job takes the smallest idle instance that is at least its profile
 * (lowest GPU, lowest start) on a node that is not cordoned: exactly
 * `static`'s rule, so while no node switches the schedule is static's.
 *
 * on_idle (after every scheduling pass) works on the uncovered demand: the
 * waiting jobs per profile less what the idle GIs of open busy nodes can
 * host now (each job, largest first, on the smallest idle GI that covers
 * it). Layouts are compared by the compute of that demand they would host.
 *   1. A drained node (no running job) switches to the kind that hosts the
 *      most, only if that is strictly more than its current layout hosts
 *      (ties: static, training, balanced, inference-peak); its capacity
 *      comes off the demand.
 *   2. A busy node is cordoned (no new job, so that it drains) when
 *        - it is not static and demand waits that none of its GIs can host
 *          but its static layout would (so a switched node comes back), or
 *        - past hysteresis_s since its last switch, the uncovered demand is
 *          at least the node's compute, another kind would host at least
 *          SWITCH_GAIN times what its layout hosts, its running jobs use at
 *          most DRAIN_FRAC of its compute, and no other node is draining;
 *      the cordon holds while the reason does. When its last job leaves,
 *      on_finish switches it to the kind it drained for, before the next
 *      pass could fill it again in the old layout.
 *   3. (place) A job about to start on a node that runs nothing: if the
 *      recent arrival mix (the last MIX_WINDOW arrivals, announced by
 *      on_arrival) would be hosted MIX_GAIN times better by another kind,
 *      the node is re-cut first and the job starts on the new layout. This
 *      is what lets a cluster that starts static follow a skewed demand
 *      before its nodes fill (the Alibaba replay: 7g pods on a cycle with
 *      one 7g per four GPUs).
 * A node is only ever switched drained: no job is moved or stopped, a
 * switch is DESTROY/CREATE of idle GIs.
 *
 * Every switch of rules 1-3 must also suit the whole cluster (admissible,
 * below: strictly on nodes smaller than static's cycle, such as 1 or 2
 * A100s, as a veto of clear losses on larger ones), and a node that no
 * longer does comes back to static: at once when it drains, by a cordon
 * while demand waits.
 * Why not the seed's rule (train > 0 && inf == 0 -> training; inf > 4 ->
 * inference-peak; else balanced), applied from a balanced start, with
 * cordons for it: on the zoo it was up to 2x static's makespan (docs/zoo.md).
 * The seed's three whole-node layouts are kept, chosen by the demand they
 * host, and static is where every node starts.
 */
#include "policy/policy_int.h"
#include "policy/node_profile_int.h"

#include <stdlib.h>
#include <string.h>

enum { STATIC = 0, INF = MS__NP_INF, BAL = MS__NP_BAL, TRN = MS__NP_TRN, NKIND = 4 };

/* A busy node drains for another layout only if that layout would host at
 * least SWITCH_GAIN times the compute of the uncovered demand its own
 * does, and only while its running jobs use at most DRAIN_FRAC of its
 * compute, so little capacity idles while it drains. Chosen on the zoo
 * (docs/zoo.md, seeds 1-10; gain 1.25-2 and share 0.25-0.6 swept): with
 * 0.5 or more, draining cost bimodal workloads up to 4% of JCT. */
#define SWITCH_GAIN 1.5
#define DRAIN_FRAC 0.4
/* A node that is empty when a job is placed on it takes the kind that hosts
 * the most compute of the last MIX_WINDOW arrivals, if that is MIX_GAIN
 * times what its layout hosts, once MIX_MIN arrivals were seen. Swept on
 * the zoo: 1.5 gave the bimodal workloads 5-13 points more, but +1.8% JCT
 * behind static on overload-64xA100 (seeds 11-20); 3 never switched on the
 * Alibaba replay. */
#define MIX_GAIN 2.0
#define MIX_WINDOW MS__MIX_WINDOW   /* 256 */
#define MIX_MIN 8
/* A busy node drains for a layout that hosts the waiting demand better
 * only if that layout would also run at least as many jobs of the recent
 * arrival mix at once as its own (mix_rate). The waiting demand alone
 * overrates whole-GPU layouts: it is where the large jobs pile up, so one
 * 7g a GPU hosts the most of it, and then runs the small jobs one a GPU.
 * Without this rule a node of saturated-64xA100 switched to 7g for the
 * backlog of 7g jobs that static's cycle leaves (p99 wait -34%, but mean
 * JCT +4.7% behind static on seeds 11-20), and the only node of a 4-GPU
 * cluster at load 0.8 switched and never came back (+136% mean JCT in
 * one trace). A 10% or 25% allowance kept part of seed-4xA100's gain
 * (-2.5% or -13% of JCT instead of 0) but let such switches through
 * (+10%, +136%); docs/zoo.md. */
/* ... and only if its running jobs are expected to end within DRAIN_MEANS
 * mean durations of recent arrivals (their durations, or estimates, from
 * the requests; jobs without one count as ending now). A long job keeps a
 * cordoned node mostly idle until it ends: on bimodal-16xH100 (15% of jobs
 * of 3600 s) a drain cost up to +44% of mean JCT in one seed. Swept with
 * the mix rule on seeds 1-30 (docs/zoo.md): 0.5 keeps every workload within
 * 1% of static; 1 reaches +9.9% (seed-4xA100, seeds 21-30), no bound +10%. */
#define DRAIN_MEANS 0.5
/* admissible: the cluster's service is judged on SERVICE_MIN arrivals at
 * least (the first few dozen are noise: on hi-8xA100, 2-GPU nodes, 27 gave
 * 1g jobs 16% of the load, not 30%, and a node switched to 7g, +16% mean
 * JCT; 32 let such switches through, 128 gave back a quarter of
 * training-8xA100's gain), and a node of the whole cycle may cost it up to
 * WHOLE_TOL (0.05 and 0.1 undid some of a30-8's winning switches, 0.2 none;
 * seeds 1-30 at 1 to 8 GPUs a node, docs/policies.md). */
#define SERVICE_MIN 64
#define WHOLE_TOL 0.2
#define SERVED_EPS 1e-6   /* jobs at once: below this, a tie */

typedef struct node {
    int cur;
    int target;                    /* while cordoned: the kind it drains for */
    bool cordoned;
    double since;
} node_t;

/* A job placed here, by its plan index: when it is expected to end (-1:
 * no duration known) and the profile it asked for, which may be smaller
 * than the GI it runs in. */
typedef struct started {
    double end;
    int8_t prof;
} started_t;

typedef struct np {
    const ms_geom_t *geom;
    double hysteresis;
    int per, nnodes, np;
    ms__layout_t lay[NKIND];       /* lay[STATIC] unused: see stat */
    ms__layouts_t *stat;           /* the static cycle */
    bool hostable[MS_MAX_PROFILES];
    node_t *nodes;
    ms__arrivals_t win;            /* the last MIX_WINDOW arrivals */
    int tot[MS_MAX_PROFILES];      /* GIs of every node's current layout, by profile */
    double last_now;               /* the latest time a hook was told */
    double clock;                  /* the latest time any hook saw (arrivals, ends too) */
    double mean_dur;               /* EWMA of the arrivals' durations, 0 if unknown */
    started_t *started;            /* [job idx] what a started job asked for */
    int32_t nstarted;
} np_t;

static void np_destroy(void *self)
{
    np_t *p = self;

    if (p == NULL)
        return;
    free(p->stat);
    free(p->nodes);
    free(p->started);
    free(p);
}

static const ms__layout_t *layout_of(const np_t *p, int kind, int g)
{
    return kind == STATIC ? &p->stat->l[g % p->stat->n] : &p->lay[kind];
}

static ms_status_t np_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    const ms_geom_t *g = c->geom;
    np_t *p = calloc(1, sizeof(*p));
    int k, l, i, gi;
    ms_status_t st;

    if (p == NULL)
        return MS_ENOMEM;
    p->geom = g;
    p->np = ms_geom_nprofiles(g);
    p->hysteresis = cfg->hysteresis_s;
    p->per = c->gpus_per_node > 0 ? c->gpus_per_node : c->ngpus;
    p->nnodes = (c->ngpus + p->per - 1) / p->per;
    if ((p->stat = malloc(sizeof(*p->stat))) == NULL ||
        (p->nodes = calloc((size_t)p->nnodes, sizeof(*p->nodes))) == NULL) {
        np_destroy(p);
        return MS_ENOMEM;
    }
    if ((st = ms__layouts_default(g, p->stat)) != MS_OK ||
        (st = ms__np_kind_layout(g, INF, &p->lay[INF])) != MS_OK ||
        (st = ms__np_kind_layout(g, BAL, &p->lay[BAL])) != MS_OK ||
        (st = ms__np_kind_layout(g, TRN, &p->lay[TRN])) != MS_OK) {
        np_destroy(p);
        return st;
    }
    /* hostable: some kind's GI covers the profile (training's full GPU
     * covers every profile) */
    for (l = INF; l < NKIND; l++)
        for (i = 0; i < p->lay[l].n; i++)
            for (k = 0; k < p->np; k++)
                p->hostable[k] |= ms_geom_covers(g, p->lay[l].gi[i].prof, k);
    for (gi = 0; gi < c->ngpus && gi < p->stat->n; gi++)
        for (i = 0; i < p->stat->l[gi].n; i++)
            for (k = 0; k < p->np; k++)
                p->hostable[k] |= ms_geom_covers(g, p->stat->l[gi].gi[i].prof, k);
    for (i = 0; i < p->nnodes; i++) {
        p->nodes[i].cur = STATIC;
        p->nodes[i].since = -1e300;
    }
    for (gi = 0; gi < c->ngpus; gi++) {
        const ms__layout_t *sl = layout_of(p, STATIC, gi);
        for (i = 0; i < sl->n; i++)
            p->tot[sl->gi[i].prof]++;
    }
    *self = p;
    return MS_OK;
}

static int node_hi(const np_t *p, const ms_cluster_t *c, int n)
{
    return (n + 1) * p->per < c->ngpus ? (n + 1) * p->per : c->ngpus;
}

static ms_status_t node_restore(const np_t *p, const ms_cluster_t *c, int n, ms_plan_t *out)
{
    int g, hi = node_hi(p, c, n);
    ms_status_t st;

    for (g = n * p->per; g < hi; g++)
        if ((st = ms__layout_restore(c, g, layout_of(p, p->nodes[n].cur, g), out)) != MS_OK)
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
    return c->share == MS_SHARE_MIG && j->prof >= 0 && j->prof < p->np && p->hostable[j->prof];
}

static uint64_t np_key(void *ctx, const ms_cluster_t *c, int gi, const ms_inst_t *in, int k)
{
    const np_t *p = ctx;

    if (p->nodes[gi / p->per].cordoned)
        return UINT64_MAX;
    return ms__smallest_key(NULL, c, gi, in, k);
}

static ms_status_t place_switching(np_t *p, const ms_cluster_t *c, const ms_job_t *j, int g,
                                   int s, ms_plan_t *out);

static ms_status_t np_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    np_t *p = self;
    int g, s;
    ms_status_t st;

    if (j->idx >= 0 && j->idx >= p->nstarted) {
        int32_t n = p->nstarted > 0 ? p->nstarted : 1024, i;
        started_t *v;
        while (n <= j->idx)
            n = n > INT32_MAX / 2 ? INT32_MAX : 2 * n;
        if ((v = realloc(p->started, (size_t)n * sizeof(*v))) == NULL)
            return MS_ENOMEM;
        for (i = p->nstarted; i < n; i++) {
            v[i].end = -1.0;
            v[i].prof = -1;
        }
        p->started = v;
        p->nstarted = n;
    }
    if (j->idx >= 0) {
        p->started[j->idx].end = j->duration > 0.0 ? p->clock + j->duration : -1.0;
        p->started[j->idx].prof = j->prof;
    }

    if (j->gang > 1)
        return ms_policy_place_gang(c, j, out);
    if ((st = ms__scan_idle(c, j->prof, np_key, self, &g, &s)) == MS_ENOFIT)
        g = s = -1;
    else if (st != MS_OK)
        return st;
    return place_switching(self, c, j, g, s, out);
}

static void np_on_arrival(void *self, const ms_job_t *j)
{
    np_t *p = self;

    if (j->arrival > p->clock)
        p->clock = j->arrival;
    if (j->duration > 0.0)
        p->mean_dur = p->mean_dur <= 0.0 ? j->duration : 0.95 * p->mean_dur + 0.05 * j->duration;
    if (j->prof < 0 || j->prof >= p->np)
        return;
    ms__arrivals_add(&p->win, j->prof, j->arrival, j->duration);
}

static void set_kind(np_t *p, const ms_cluster_t *c, int n, int kind, double now);
static bool whole_cycle(const np_t *p, const ms_cluster_t *c, int n);
static bool admissible(const np_t *p, const ms_cluster_t *c, int n, int kind);

static ms_status_t np_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                ms_plan_t *out)
{
    np_t *p = self;
    int n0 = out->n, n = g / p->per, h, hi = node_hi(p, c, n), busy = 0;
    ms_status_t st;

    if (now > p->clock)
        p->clock = now;
    /* a cordoned node that has drained switches now, before the next pass
     * could fill it again in its old layout, and opens */
    for (h = n * p->per; h < hi; h++)
        busy += ms_gpu_running(&c->gpus[h]);
    /* a node the cluster no longer wants in its kind (admissible) comes
     * back to static as it drains (the cordon's switch, below) */
    if (busy == 0 && !p->nodes[n].cordoned && p->nodes[n].cur != STATIC &&
        !admissible(p, c, n, p->nodes[n].cur)) {
        p->nodes[n].cordoned = true;
        p->nodes[n].target = STATIC;
    }
    if (busy == 0 && p->nodes[n].cordoned) {
        p->nodes[n].cordoned = false;
        if (p->nodes[n].target != p->nodes[n].cur)
            set_kind(p, c, n, p->nodes[n].target, now);
        st = node_restore(p, c, n, out);
    } else {
        st = ms__layout_restore(c, g, layout_of(p, p->nodes[n].cur, g), out);
    }
    if (st != MS_OK)
        out->n = n0;
    return st;
}

/* --- demand ----------------------------------------------------------------- */

/* GIs of node n in layout kind `kind`, by profile. */
static void kind_gis(const np_t *p, const ms_cluster_t *c, int n, int kind, int *gis)
{
    int g, i, hi = node_hi(p, c, n);

    memset(gis, 0, MS_MAX_PROFILES * sizeof(*gis));
    for (g = n * p->per; g < hi; g++) {
        const ms__layout_t *l = layout_of(p, kind, g);
        for (i = 0; i < l->n; i++)
            gis[l->gi[i].prof]++;
    }
}

/* Node n takes layout kind `kind` (the cluster's GI counts follow). */
static void set_kind(np_t *p, const ms_cluster_t *c, int n, int kind, double now)
{
    int was[MS_MAX_PROFILES], will[MS_MAX_PROFILES], q;

    kind_gis(p, c, n, p->nodes[n].cur, was);
    kind_gis(p, c, n, kind, will);
    for (q = 0; q < p->np; q++)
        p->tot[q] += will[q] - was[q];
    p->nodes[n].cur = kind;
    p->nodes[n].since = now;
}

/* Does node n hold a whole cycle of static's layouts? Then its own layouts
 * stand for the cluster's, and the rules compare them alone; a smaller
 * node's is a fragment (see the top of the file). */
static bool whole_cycle(const np_t *p, const ms_cluster_t *c, int n)
{
    return node_hi(p, c, n) - n * p->per >= p->stat->n;
}

/* May node n be in layout kind `kind`, as far as the whole cluster goes?
 * It compares how many jobs of the recent arrivals the cluster serves at
 * once (a maximum flow of their offered load onto the GIs of every node's
 * layout; without durations every profile of the mix counts as always
 * waiting) with node n in `kind` and with node n static. Static always
 * may.
 * - A node smaller than the static cycle is not a sample of the cluster:
 *   its own layouts say nothing about the mix (the mix rule compared a
 *   2g+2g+1g+1g+1g GPU, which hosts no 7g, with one 7g). It may take
 *   another kind only after SERVICE_MIN arrivals and for a strict gain,
 *   and keeps it while the cluster serves at least as many. Without this
 *   and the way back, a 1- or 2-GPU node re-cut to 7g for a queue of 7g
 *   jobs kept its 7g GIs for good, small jobs in them one a GPU: +12% to
 *   +62% mean JCT behind static on zoo workloads.
 * - A node of the whole cycle is judged by its own rules (the mix rule);
 *   this vetoes a kind that costs the cluster more than WHOLE_TOL of its
 *   service. Before it, a 4-GPU node of hi-8xA100 (seed 21) switched to
 *   7g on its first 25 arrivals and stayed (+96% mean JCT). */
static bool admissible(const np_t *p, const ms_cluster_t *c, int n, int kind)
{
    int cur[MS_MAX_PROFILES], will[MS_MAX_PROFILES], st[MS_MAX_PROFILES], q;
    int with[MS_MAX_PROFILES], without[MS_MAX_PROFILES];
    double a[MS_MAX_PROFILES] = {0}, sw, so;
    const double *ap;

    if (kind == STATIC)
        return true;
    if (p->win.filled < SERVICE_MIN)
        return whole_cycle(p, c, n);
    ap = ms__arrivals_offered(&p->win, p->np, a) ? a : NULL;
    kind_gis(p, c, n, p->nodes[n].cur, cur);
    kind_gis(p, c, n, kind, will);
    kind_gis(p, c, n, STATIC, st);
    for (q = 0; q < p->np; q++) {
        with[q] = p->tot[q] - cur[q] + will[q];
        without[q] = p->tot[q] - cur[q] + st[q];
    }
    sw = ms__mix_served(p->geom, p->win.mix, with, ap);
    so = ms__mix_served(p->geom, p->win.mix, without, ap);
    if (whole_cycle(p, c, n))
        return sw >= (1.0 - WHOLE_TOL) * so;
    return kind == p->nodes[n].cur ? sw >= so - SERVED_EPS : sw > so + SERVED_EPS;
}

/* Does any GI of node n (its current layout) cover a profile in rem that
 * its static layout would cover? */
static bool blocks_demand(const np_t *p, const ms_cluster_t *c, int n, const int *rem)
{
    int cur[MS_MAX_PROFILES], st[MS_MAX_PROFILES], k, q;

    kind_gis(p, c, n, p->nodes[n].cur, cur);
    kind_gis(p, c, n, STATIC, st);
    for (k = 0; k < p->np; k++) {
        bool here = false, there = false;
        if (rem[k] <= 0)
            continue;
        for (q = 0; q < p->np; q++) {
            here |= cur[q] > 0 && ms_geom_covers(p->geom, q, k);
            there |= st[q] > 0 && ms_geom_covers(p->geom, q, k);
        }
        if (!here && there)
            return true;
    }
    return false;
}

/* The kind the recent arrival mix wants for node n if it runs nothing:
 * the one hosting the most compute of the mix, if that is MIX_GAIN times
 * what its layout hosts; else its current kind. */
static int mix_kind(const np_t *p, const ms_cluster_t *c, int n)
{
    static const int order[NKIND] = { STATIC, TRN, BAL, INF };
    int h, q, gis[MS_MAX_PROFILES], best = p->nodes[n].cur, bh, ch, hi = node_hi(p, c, n);
    int mix[MS_MAX_PROFILES];

    if (p->win.filled < MIX_MIN || p->nodes[n].cordoned)
        return best;
    memcpy(mix, p->win.mix, sizeof(mix));
    for (h = n * p->per; h < hi; h++)
        if (ms_gpu_running(&c->gpus[h]) > 0)
            return best;
    kind_gis(p, c, n, best, gis);
    bh = ch = ms__mix_absorb(p->geom, mix, gis, false);
    for (q = 0; q < NKIND; q++) {
        int x;
        if (order[q] == p->nodes[n].cur)
            continue;
        kind_gis(p, c, n, order[q], gis);
        if ((x = ms__mix_absorb(p->geom, mix, gis, false)) > bh && admissible(p, c, n, order[q])) {
            bh = x;
            best = order[q];
        }
    }
    return (double)bh >= MIX_GAIN * (double)ch ? best : p->nodes[n].cur;
}

/* Re-cut empty node n as `kind` and start j on the smallest GI of the new
 * layout that covers it (lowest GPU, lowest start). MS_ENOFIT (out
 * unchanged) if the kind has no such GI. */
static ms_status_t start_recut(np_t *p, const ms_cluster_t *c, const ms_job_t *j, int n,
                               int kind, ms_plan_t *out)
{
    int h, q, hi = node_hi(p, c, n), bg = -1, bs = -1, bp = -1, n0 = out->n;
    uint64_t bkey = UINT64_MAX;
    ms_status_t st;

    for (h = n * p->per; h < hi; h++) {
        const ms__layout_t *l = layout_of(p, kind, h);
        for (q = 0; q < l->n; q++) {
            ms_inst_t in;
            uint64_t key;
            if (!ms_geom_covers(p->geom, l->gi[q].prof, j->prof))
                continue;
            in.job = -1;
            in.prof = l->gi[q].prof;
            in.start = l->gi[q].start;
            key = ms__smallest_key(NULL, c, h, &in, j->prof);
            if (key < bkey) {   /* strict: lower GPU, then lower start, win ties */
                bkey = key;
                bg = h;
                bs = in.start;
                bp = in.prof;
            }
        }
    }
    if (bg < 0)
        return MS_ENOFIT;
    set_kind(p, c, n, kind, p->last_now);
    if ((st = node_restore(p, c, n, out)) == MS_OK)
        st = ms_plan_add_start(out, j->idx, bg, bs, bp);
    if (st != MS_OK)
        out->n = n0;
    return st;
}

/* Start j at (g, s) (g < 0: no idle GI covers j anywhere). An empty node
 * the arrival mix wants re-cut is re-cut first: g's node, or with g < 0 the
 * lowest empty node whose new kind hosts j. */
static ms_status_t place_switching(np_t *p, const ms_cluster_t *c, const ms_job_t *j, int g,
                                   int s, ms_plan_t *out)
{
    int n, k;

    if (g >= 0) {
        n = g / p->per;
        k = mix_kind(p, c, n);
        if (k != p->nodes[n].cur && start_recut(p, c, j, n, k, out) == MS_OK)
            return MS_OK;
        return ms_plan_add_start(out, j->idx, g, s,
                             c->gpus[g].inst[ms_gpu_find_inst(&c->gpus[g], s)].prof);
    }
    for (n = 0; n < p->nnodes && p->win.filled >= MIX_MIN; n++)
        if ((k = mix_kind(p, c, n)) != p->nodes[n].cur && start_recut(p, c, j, n, k, out) == MS_OK)
            return MS_OK;
    return MS_ENOFIT;
}

/* Compute slices of the demand. */
static int demand_c(const np_t *p, const int *rem)
{
    int k, v = 0;

    for (k = 0; k < p->np; k++)
        v += rem[k] * ms_geom_profile(p->geom, k)->cslices;
    return v;
}

/* Compute slices GPU g's running jobs asked for (a 1g job in a 7g GI
 * counts 1: a node of whole-GPU GIs running small jobs is nearly idle, and
 * may drain back; counting the GIs kept such a node in its layout for
 * ever). */
static int job_compute(const np_t *p, const ms_cluster_t *c, int g)
{
    int i, v = 0;

    for (i = 0; i < c->gpus[g].ninst; i++) {
        const ms_inst_t *in = &c->gpus[g].inst[i];
        int k;
        if (in->job < 0)
            continue;
        k = in->job < p->nstarted && p->started[in->job].prof >= 0 ? p->started[in->job].prof : in->prof;
        v += ms_geom_profile(p->geom, k)->cslices;
    }
    return v;
}

/* When node n's running jobs are expected to have ended (now if none
 * says). */
static double drain_end(const np_t *p, const ms_cluster_t *c, int n, double now)
{
    double end = now;
    int g, i, hi = node_hi(p, c, n);

    for (g = n * p->per; g < hi; g++)
        for (i = 0; i < c->gpus[g].ninst; i++) {
            int32_t jb = c->gpus[g].inst[i].job;
            if (jb >= 0 && jb < p->nstarted && p->started[jb].end > end)
                end = p->started[jb].end;
        }
    return end;
}

/* Jobs of the recent arrival mix node n runs at once in layout `kind`
 * (ms__mix_rate): one 7g a GPU runs a uniform mix one job a GPU. */
static double mix_rate(const np_t *p, const ms_cluster_t *c, int n, int kind)
{
    int gis[MS_MAX_PROFILES];

    kind_gis(p, c, n, kind, gis);
    return ms__mix_rate(p->geom, p->win.mix, gis);
}

/* The cluster's service (admissible), the mix rule (on a node of the
 * whole static cycle) and the drain rule, which a cordon for switching
 * node n to `kind` must pass when it starts (it then holds while its
 * reason does); last in on_idle's test, so computed only when the rest
 * holds. */
static bool cordon_suits(const np_t *p, const ms_cluster_t *c, int n, int kind, double now)
{
    const node_t *nd = &p->nodes[n];

    if (nd->cordoned || kind == nd->cur)
        return true;
    if (!admissible(p, c, n, kind) ||
        (whole_cycle(p, c, n) && p->win.filled >= MIX_MIN &&
         mix_rate(p, c, n, kind) < mix_rate(p, c, n, nd->cur)))
        return false;
    /* the drain would idle the node too long */
    return !(p->mean_dur > 0.0 && drain_end(p, c, n, now) - now > DRAIN_MEANS * p->mean_dur);
}

static ms_status_t np_on_idle(void *self, const ms_cluster_t *c, const int *n_by_prof,
                              double now, ms_plan_t *out)
{
    static const int order[NKIND] = { STATIC, TRN, BAL, INF };
    np_t *p = self;
    int rem[MS_MAX_PROFILES] = {0}, k, n, g, i, n0 = out->n, ncord = 0, C = ms_geom_compute(p->geom);
    int (*idle)[MS_MAX_PROFILES] = calloc((size_t)p->nnodes, sizeof(*idle));
    int *running = calloc((size_t)p->nnodes, sizeof(*running));
    ms_status_t st = MS_OK;

    p->last_now = now;
    if (now > p->clock)
        p->clock = now;
    if (idle == NULL || running == NULL) {
        st = MS_ENOMEM;
        goto out;
    }
    for (k = 0; n_by_prof != NULL && k < p->np; k++)
        rem[k] = n_by_prof[k] > 0 ? n_by_prof[k] : 0;
    for (g = 0; g < c->ngpus; g++)
        for (i = 0; i < c->gpus[g].ninst; i++) {
            const ms_inst_t *in = &c->gpus[g].inst[i];
            if (in->job >= 0)
                running[g / p->per]++;
            else if (in->start >= 0)
                idle[g / p->per][in->prof]++;
        }
    /* busy open nodes serve from their idle GIs first */
    for (n = 0; n < p->nnodes; n++)
        if (running[n] > 0 && !p->nodes[n].cordoned)
            ms__mix_absorb(p->geom, rem, idle[n], true);
    /* 1-2. drained nodes */
    for (n = 0; n < p->nnodes && st == MS_OK; n++) {
        node_t *nd = &p->nodes[n];
        int gis[MS_MAX_PROFILES], best = nd->cur, bh, q;
        if (running[n] > 0)
            continue;
        nd->cordoned = false;
        /* a node keeps only a kind the cluster still wants */
        if (best != STATIC && !admissible(p, c, n, best))
            best = STATIC;
        kind_gis(p, c, n, best, gis);
        bh = ms__mix_absorb(p->geom, rem, gis, false);
        for (q = 0; q < NKIND; q++) {
            int h;
            if (order[q] == best)
                continue;
            kind_gis(p, c, n, order[q], gis);
            if ((h = ms__mix_absorb(p->geom, rem, gis, false)) > bh && admissible(p, c, n, order[q])) {
                bh = h;
                best = order[q];
            }
        }
        kind_gis(p, c, n, best, gis);
        ms__mix_absorb(p->geom, rem, gis, true);
        if (best != nd->cur) {
            set_kind(p, c, n, best, now);
            st = node_restore(p, c, n, out);
        }
    }
    /* 3. busy nodes: a switched node that keeps waiting demand from the GIs
     * static would give it drains, and so does one that the cluster no
     * longer wants in its kind (back); a node (static included) whose
     * layout hosts far less of a large uncovered demand than another kind
     * drains to switch, one node at a time */
    for (n = 0; n < p->nnodes; n++)
        ncord += running[n] > 0 && p->nodes[n].cordoned;
    for (n = 0; n < p->nnodes; n++) {
        node_t *nd = &p->nodes[n];
        int gis[MS_MAX_PROFILES], ch, bh = 0, bk = nd->cur, q, hi = node_hi(p, c, n), used = 0, dem;
        bool want, back;
        if (running[n] == 0)
            continue;
        for (g = n * p->per; g < hi; g++)
            used += job_compute(p, c, g);
        kind_gis(p, c, n, nd->cur, gis);
        ch = ms__mix_absorb(p->geom, rem, gis, false);
        for (q = 0; q < NKIND; q++) {
            int h;
            kind_gis(p, c, n, order[q], gis);
            if (order[q] != nd->cur && (h = ms__mix_absorb(p->geom, rem, gis, false)) > bh) {
                bh = h;
                bk = order[q];
            }
        }
        dem = demand_c(p, rem);   /* > 0: some job waits uncovered */
        back = nd->cur != STATIC && dem > 0 &&
               !admissible(p, c, n, nd->cur);
        want = back || (dem > 0 && (nd->cordoned ||
               (double)used <= DRAIN_FRAC * C * (hi - n * p->per)) &&
               ((nd->cur != STATIC && blocks_demand(p, c, n, rem)) ||
                (now - nd->since >= p->hysteresis && dem >= C * (hi - n * p->per) &&
                 (double)bh >= SWITCH_GAIN * (double)ch && (nd->cordoned || ncord == 0) &&
                 cordon_suits(p, c, n, bk, now))));
        if (want && !nd->cordoned)
            ncord++;
        else if (!want && nd->cordoned)
            ncord--;
        nd->cordoned = want;
        nd->target = !want ? nd->cur : back ? STATIC : bk;
    }
out:
    if (st != MS_OK)
        out->n = n0;
    free(idle);
    free(running);
    return st;
}

const ms_policy_ops_t ms_policy_node_profile = {
    .abi = MS_POLICY_ABI,
    .name = "node-profile",
    .help = "seed 002: whole-node layouts (static / 7x1g / 3x2g / 1x7g) switched when drained",
    .share = MS_SHARE_MIG,
    .create = np_create,
    .destroy = np_destroy,
    .setup = np_setup,
    .can_host = np_can_host,
    .on_arrival = np_on_arrival,
    .place = np_place,
    .on_finish = np_on_finish,
    .on_idle = np_on_idle,
};
