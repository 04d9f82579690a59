/* gang.c - gangs of whole GPUs on one node, shared by every MIG policy.
 *
 * A gang job (j->gang > 1) takes the lowest-numbered node that has `gang`
 * GPUs running no job; on the lowest `gang` such GPUs of that node every
 * idle GI is destroyed and one full-size instance is created and started.
 * All or nothing: either every op is appended or none. The search scans the
 * GPUs once (gangs are rare).
 */
#include "policy/policy_int.h"

ms_status_t ms_policy_place_gang(const ms_cluster_t *c, const ms_job_t *j, ms_plan_t *out)
{
    int per = c->gpus_per_node > 0 ? c->gpus_per_node : c->ngpus;
    int full = ms_geom_full_profile(c->geom), node, nnodes, n0 = out->n;
    ms_status_t st = MS_OK;

    if (c->share != MS_SHARE_MIG || full < 0 || j->gang < 1 || j->gang > per)
        return MS_ENOFIT;
    nnodes = (c->ngpus + per - 1) / per;
    for (node = 0; node < nnodes; node++) {
        int g, lo = node * per, hi = lo + per, n = 0;
        if (hi > c->ngpus)
            hi = c->ngpus;
        for (g = lo; g < hi; g++)
            n += ms_gpu_running(&c->gpus[g]) == 0;
        if (n < j->gang)
            continue;
        for (g = lo, n = 0; g < hi && n < j->gang && st == MS_OK; g++) {
            if (ms_gpu_running(&c->gpus[g]) != 0)
                continue;
            /* (an idle full-size GI too is destroyed and made again: the
             * schedules and reconfiguration counts of static and
             * node-profile layouts depend on it; preemption keeps it) */
            st = ms_plan_add_whole_gpu(out, c, g, j->idx, false);
            n++;
        }
        if (st != MS_OK)
            out->n = n0;
        return st;
    }
    return MS_ENOFIT;
}
