/* advise.c - the recommendation and its simulated gain (advise.h). */
#include "advise/advise_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/policy.h"

static const char *const KINDS[] = { "balanced", "inference-peak", "training" };
#define NKINDS 3

void ms_advise_cfg_defaults(ms_advise_cfg_t *c)
{
    memset(c, 0, sizeof(*c));
    c->ts_threshold = 40.0;
    c->replicas = 4;
    ms_sim_cfg_defaults(&c->sim);
    c->sim.sched.policy = ms_policy_find("fa+");
    c->sim.sched.pcfg.migrate_cost_s = c->sim.migrate_s;
    c->sim.sched.pcfg.interference_beta = c->sim.beta;
}

double ms_advise_gain(double cur, double rec)
{
    return cur > 0 ? (cur - rec) / cur * 100.0 : 0.0;
}

void ms_advise_result_free(ms_advise_result_t *r)
{
    if (r == NULL)
        return;
    free(r->nodes);
    free(r->svc);
    memset(r, 0, sizeof(*r));
}

/* A job of the trace's profile p resolved on geometry g: the smallest
 * profile with its memory and compute (as the scheduler resolves it). */
static int resolve(const ms_trace_t *t, size_t j, const ms_geom_t *g)
{
    const ms_profile_t *p = ms_geom_profile(t->geom, t->jobs[j].prof);
    double mem = t->req != NULL && t->req[j].mem_gb > 0 ? t->req[j].mem_gb
                                                        : ms_geom_profile_mem_gb(t->geom, t->jobs[j].prof);
    return ms_geom_smallest_fit(g, mem, p->cslices);
}

/* The share of the demand's compute that layout (gis, n) would use if each
 * job ran on its smallest covering instance: sum w_p c_p / c_inst over
 * covered profiles, over sum w_p. 0 with no demand. */
static double layout_fit(const ms_geom_t *g, const double *w, const ms_gi_t *gis, int n)
{
    double tot = 0, got = 0;
    int k, i;

    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        const ms_profile_t *p = ms_geom_profile(g, k);
        int best = -1;
        if (w[k] <= 0)
            continue;
        tot += w[k];
        for (i = 0; i < n; i++) {
            const ms_profile_t *q = ms_geom_profile(g, gis[i].prof);
            if (q->cslices >= p->cslices && q->msize >= p->msize &&
                (best < 0 || q->cslices < ms_geom_profile(g, best)->cslices))
                best = gis[i].prof;
        }
        if (best >= 0)
            got += w[k] * p->cslices / ms_geom_profile(g, best)->cslices;
    }
    return tot > 0 ? got / tot : 0;
}

static void choose_layout(const ms_advise_t *a, const ms_node_spec_t *n, ms_advise_node_t *out)
{
    double w[MS_MAX_PROFILES] = { 0 };
    const ms_trace_t *t = a->trace;
    size_t j;
    int k, best = -1;
    double bf = -1;

    for (j = 0; j < t->n; j++) {
        int p = resolve(t, j, n->geom);
        if (p >= 0)
            w[p] += t->jobs[j].duration * ms_geom_profile(n->geom, p)->cslices *
                    (t->jobs[j].gang > 0 ? t->jobs[j].gang : 1);
    }
    for (k = 0; k < NKINDS; k++) {
        ms_gi_t gis[MS_MAX_INST];
        int ng = 0;
        double f;
        if (ms_policy_node_layout(n->geom, KINDS[k], gis, &ng) != MS_OK)
            continue;
        f = layout_fit(n->geom, w, gis, ng);
        if (f > bf + 1e-12) {   /* ties keep the earlier kind: balanced first */
            bf = f;
            best = k;
        }
    }
    if (best >= 0) {
        out->layout = KINDS[best];
        out->layout_fit = bf;
    }
}

/* on_segment of the current run: count latency-sensitive jobs that ran
 * time-sliced. */
typedef struct seg_ctx {
    const ms_advise_t *a;
    const int *gnode;            /* global GPU -> node */
    ms_advise_service_t *svc;
    uint8_t *seen;               /* [trace n]: counted once per job */
} seg_ctx_t;

static void on_segment(void *ctx, const ms_segment_t *s)
{
    seg_ctx_t *c = ctx;
    const ms_advise_t *a = c->a;
    int32_t sv;

    if (s->job < 0 || (size_t)s->job >= a->trace->n || c->seen[s->job])
        return;
    sv = a->svc[s->job];
    if (sv < 0 || a->nodes[c->gnode[s->gpu]].mode != MS_NODE_TIMESLICE)
        return;
    c->seen[s->job] = 1;
    c->svc[sv].shared++;
}

static ms_status_t simulate(const ms_advise_t *a, const ms_advise_cfg_t *cfg,
                            const ms_node_spec_t *nodes, ms_job_req_t *req, seg_ctx_t *sc,
                            ms_metrics_t *m, ms_diag_t *d)
{
    ms_sim_cfg_t sc_cfg = cfg->sim;
    ms_trace_t t = *a->trace;   /* a shallow copy with its own constraints */

    t.req = req;
    sc_cfg.sched.nodes = nodes;
    sc_cfg.sched.nnodes = a->nnodes;
    sc_cfg.ngpus = 0;
    for (int i = 0; i < a->nnodes; i++)
        sc_cfg.ngpus += nodes[i].ngpus;
    sc_cfg.ctx = sc;
    sc_cfg.on_segment = sc != NULL ? on_segment : NULL;
    sc_cfg.on_sample = NULL;
    sc_cfg.on_progress = NULL;
    return ms_sim_run(&sc_cfg, &t, m, d);
}

ms_status_t ms_advise_run(ms_advise_t *a, const ms_advise_cfg_t *cfg, ms_advise_result_t *res,
                          ms_diag_t *d)
{
    ms_node_spec_t *rec = NULL;
    ms_job_req_t *rq_cur = NULL, *rq_rec = NULL;
    int *gnode = NULL;
    uint8_t *seen = NULL;
    ms_status_t st = MS_OK;
    int i, k, nmig = 0, best = -1;
    bool any_lat = false;

    memset(res, 0, sizeof(*res));
    res->threshold = cfg->ts_threshold;
    res->nnodes = a->nnodes;
    res->policy = cfg->sim.sched.policy != NULL ? cfg->sim.sched.policy->name : "";
    if ((res->nodes = calloc((size_t)a->nnodes, sizeof(*res->nodes))) == NULL ||
        (rec = malloc((size_t)a->nnodes * sizeof(*rec))) == NULL) {
        st = MS_ENOMEM;
        goto fail;
    }
    if (a->trace != NULL)
        for (size_t j = 0; j < a->trace->n; j++)
            any_lat |= a->latency[j] != 0;

    /* 1. time-slicing for nodes below the threshold */
    for (i = 0; i < a->nnodes; i++) {
        const ms_node_spec_t *n = &a->nodes[i];
        ms_advise_node_t *o = &res->nodes[i];

        rec[i] = *n;
        o->name = n->name;
        o->model = ms_geom_model(n->geom);
        o->ngpus = n->ngpus;
        o->mode = o->rec_mode = n->mode;
        o->replicas = o->rec_replicas = n->mode == MS_NODE_TIMESLICE ? n->replicas : 0;
        o->samples = a->acc[i].n;
        o->mean_util = a->acc[i].n > 0 ? a->acc[i].sum / (double)a->acc[i].n : NAN;
        o->max_mem_gb = a->acc[i].max_mem;
        if (a->acc[i].n == 0) {
            o->reason = "no utilisation samples: keep";
        } else if (n->mode == MS_NODE_TIMESLICE) {
            o->reason = "already time-sliced";
        } else if (o->mean_util < cfg->ts_threshold) {
            o->rec_mode = MS_NODE_TIMESLICE;
            o->rec_replicas = cfg->replicas;
            o->reason = "mean utilisation below the threshold: time-slice it";
        } else {
            o->reason = "utilisation at or above the threshold: keep";
        }
        if (o->rec_mode == MS_NODE_MIG)
            nmig++;
        rec[i].mode = o->rec_mode;
        rec[i].replicas = o->rec_replicas;
    }
    /* latency-sensitive jobs need a MIG node: keep the busiest candidate on
     * MIG when every MIG node would go time-sliced */
    if (any_lat && nmig == 0) {
        for (i = 0; i < a->nnodes; i++)
            if (res->nodes[i].mode == MS_NODE_MIG && res->nodes[i].rec_mode == MS_NODE_TIMESLICE &&
                (best < 0 || res->nodes[i].mean_util > res->nodes[best].mean_util))
                best = i;
        if (best >= 0) {
            res->nodes[best].rec_mode = MS_NODE_MIG;
            res->nodes[best].rec_replicas = 0;
            res->nodes[best].reason = "below the threshold, but kept on MIG for the "
                                      "latency-sensitive services (the busiest such node)";
            rec[best].mode = MS_NODE_MIG;
            rec[best].replicas = 0;
        }
    }
    if (a->trace == NULL)
        goto done;

    /* 3. layouts for the nodes that stay on (or come to) MIG */
    for (i = 0; i < a->nnodes; i++)
        if (res->nodes[i].rec_mode == MS_NODE_MIG)
            choose_layout(a, &a->nodes[i], &res->nodes[i]);

    /* 2. latency-sensitive services */
    if (a->nsvc > 0 && (res->svc = calloc((size_t)a->nsvc, sizeof(*res->svc))) == NULL) {
        st = MS_ENOMEM;
        goto fail;
    }
    res->nsvc = a->nsvc;
    {
        long cnt[MS_MAX_PROFILES];
        for (k = 0; k < a->nsvc; k++) {
            int p, bp = 0;
            res->svc[k].name = a->svc_name[k];
            memset(cnt, 0, sizeof(cnt));
            for (size_t j = 0; j < a->trace->n; j++)
                if (a->svc[j] == k) {
                    res->svc[k].jobs++;
                    cnt[a->trace->jobs[j].prof]++;
                }
            for (p = 0; p < ms_geom_nprofiles(a->trace->geom); p++)
                if (cnt[p] > cnt[bp])
                    bp = p;
            res->svc[k].profile = ms_geom_profile(a->trace->geom, bp)->name;
        }
    }

    /* the simulations: the same constraints, except that latency-sensitive
     * jobs ask for isolation (a MIG instance or a whole GPU) */
    rq_cur = calloc(a->trace->n > 0 ? a->trace->n : 1, sizeof(*rq_cur));
    rq_rec = calloc(a->trace->n > 0 ? a->trace->n : 1, sizeof(*rq_rec));
    seen = calloc(a->trace->n > 0 ? a->trace->n : 1, 1);
    {
        int ng = 0, g;
        for (i = 0; i < a->nnodes; i++)
            ng += a->nodes[i].ngpus;
        gnode = malloc((size_t)ng * sizeof(*gnode));
        if (rq_cur == NULL || rq_rec == NULL || gnode == NULL || seen == NULL) {
            st = MS_ENOMEM;
            goto fail;
        }
        for (ng = 0, i = 0; i < a->nnodes; i++)
            for (g = 0; g < a->nodes[i].ngpus; g++)
                gnode[ng++] = i;
    }
    for (size_t j = 0; j < a->trace->n; j++) {
        if (a->trace->req != NULL)
            rq_cur[j] = a->trace->req[j];
        rq_rec[j] = rq_cur[j];
        if (a->latency[j])
            rq_rec[j].isolation = MS_ISO_MIG;
    }
    {
        seg_ctx_t sc = { a, gnode, res->svc, seen };
        if ((st = simulate(a, cfg, a->nodes, rq_cur, &sc, &res->cur, d)) != MS_OK ||
            (st = simulate(a, cfg, rec, rq_rec, NULL, &res->rec, d)) != MS_OK)
            goto fail;
    }
    res->simulated = true;
done:
    free(rec);
    free(rq_cur);
    free(rq_rec);
    free(gnode);
    free(seen);
    return MS_OK;
fail:
    free(rec);
    free(rq_cur);
    free(rq_rec);
    free(gnode);
    free(seen);
    ms_advise_result_free(res);
    return st;
}
