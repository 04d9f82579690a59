/* timeslice.c - time-slicing: no MIG instances; a GPU runs up to R jobs
 * that share it in time (R = cfg->replicas, capped by the cluster's).
 * A job goes to the least loaded GPU: fewest jobs, then lowest index (a
 * scan that stops at the first GPU with no job). A gang takes `gang` GPUs
 * with no job on the lowest node that has them. */
#include "policy/policy_int.h"

#include <stdlib.h>

typedef struct ts {
    int replicas;
} ts_t;

static ms_status_t ts_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    ts_t *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return MS_ENOMEM;
    t->replicas = c->replicas;
    if (cfg->replicas > 0 && (t->replicas <= 0 || cfg->replicas < t->replicas))
        t->replicas = cfg->replicas;
    if (t->replicas > MS_MAX_INST)
        t->replicas = MS_MAX_INST;
    if (t->replicas < 1)
        t->replicas = 1;
    *self = t;
    return MS_OK;
}

static void ts_destroy(void *self)
{
    free(self);
}

static bool ts_can_host(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    int per = c->gpus_per_node > 0 ? c->gpus_per_node : c->ngpus;

    (void)self;
    if (c->share != MS_SHARE_TIMESLICE || j->prof < 0 || j->prof >= ms_geom_nprofiles(c->geom))
        return false;
    return j->gang <= 1 || (j->gang <= per && j->gang <= c->ngpus);
}

static ms_status_t ts_gang(const ms_cluster_t *c, const ms_job_t *j, ms_plan_t *out)
{
    int per = c->gpus_per_node > 0 ? c->gpus_per_node : c->ngpus;
    int node, nnodes = (c->ngpus + per - 1) / per, n0 = out->n;
    ms_status_t st = MS_OK;

    for (node = 0; node < nnodes; node++) {
        int g, lo = node * per, hi = lo + per < c->ngpus ? lo + per : c->ngpus, n = 0;
        for (g = lo; g < hi; g++)
            n += c->gpus[g].ninst == 0;
        if (n < j->gang)
            continue;
        for (g = lo, n = 0; g < hi && n < j->gang && st == MS_OK; g++)
            if (c->gpus[g].ninst == 0) {
                st = ms_plan_add_start(out, j->idx, g, -1, j->prof);
                n++;
            }
        if (st != MS_OK)
            out->n = n0;
        return st;
    }
    return MS_ENOFIT;
}

static ms_status_t ts_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    const ts_t *t = self;
    int g, best = -1, cap = t->replicas < c->replicas ? t->replicas : c->replicas;

    if (c->share != MS_SHARE_TIMESLICE)
        return MS_ENOFIT;
    if (j->gang > 1)
        return ts_gang(c, j, out);
    for (g = 0; g < c->ngpus; g++) {
        int n = c->gpus[g].ninst;
        if (n < cap && (best < 0 || n < c->gpus[best].ninst)) {
            best = g;
            if (n == 0)
                break;
        }
    }
    if (best < 0)
        return MS_ENOFIT;
    return ms_plan_add_start(out, j->idx, best, -1, j->prof);
}

const ms_policy_ops_t ms_policy_timeslice = {
    .abi = MS_POLICY_ABI,
    .name = "timeslice",
    .help = "time-slicing: up to R jobs share a GPU, least loaded GPU first",
    .share = MS_SHARE_TIMESLICE,
    .create = ts_create,
    .destroy = ts_destroy,
    .can_host = ts_can_host,
    .place = ts_place,
    .flags = MS_POLICY_PURE_PLACE,
};
