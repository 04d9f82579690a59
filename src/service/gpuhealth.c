/* gpuhealth.c - the loop thread: what the executor says of a GPU (issue
 * 20, defect 6). An unhealthy GPU is cordoned in the scheduler
 * (ms_sched_gpu_cordon: nothing new is placed there, the executor has
 * failed the ops that would have, and their rollback lets the next pass
 * place those jobs on healthy GPUs); it is lifted when the GPU answers a
 * probe. Each change is one event on the stream ("gpu-G", "unhealthy" or
 * "healthy") and one log line; /metrics and the status page read
 * svc_t.health. A create the backend refused makes the view hold what the
 * backend reports on that GPU (ms_sched_gpu_hold), so the pass after the
 * rollback places elsewhere instead of on the same slices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/svc.h"

bool svc_gpu_healthy(const svc_t *d, int gpu)
{
    return d->health == NULL || gpu < 0 || gpu >= ms_sched_ngpus(d->sched) || !d->health[gpu].unhealthy;
}

void svc_h_health(svc_t *d, svc_msg_t *m, double now)
{
    int ng = ms_sched_ngpus(d->sched), g = m->gpu;
    svc_ghealth_t *h;
    char name[32];
    ms_status_t st;

    if (g < 0 || g >= ng)
        return;
    if (d->health == NULL && (d->health = calloc((size_t)ng, sizeof(*d->health))) == NULL) {
        ms_log("error", "out of memory recording a GPU's health", json_pack("{s:i}", "gpu", g));
        return;
    }
    h = &d->health[g];
    if (h->unhealthy == !m->healthy)
        return;
    st = ms_sched_gpu_cordon(d->sched, g, !m->healthy, now);
    if (st != MS_OK)
        ms_log("error", "cannot cordon a GPU", json_pack("{s:i,s:s}", "gpu", g, "status", ms_status_name(st)));
    h->unhealthy = !m->healthy;
    h->since = svc_clock_wall(d->clock);
    snprintf(h->why, sizeof(h->why), "%s", m->why != NULL ? m->why : "");
    d->unhealthy += h->unhealthy ? 1 : -1;
    snprintf(name, sizeof(name), "gpu-%d", g);
    svc_event_add(d, name, h->unhealthy ? "unhealthy" : "healthy", NULL, svc_clock_wall(d->clock));
}

void svc_gpu_reconcile(svc_t *d, int gpu, double now)
{
    ms_binst_t *inv = NULL;
    ms_gi_t gis[MS_MAX_INST];
    ms_diag_t why;
    int n = 0, i, k = 0;
    ms_status_t st;

    if (gpu < 0 || gpu >= ms_sched_ngpus(d->sched))
        return;
    ms_diag_clear(&why);
    if (ms_backend_inventory(d->be, &inv, &n, &why) != MS_OK) {
        ms_log("warn", "a create was refused and the backend's inventory cannot be read",
               json_pack("{s:i,s:s}", "gpu", gpu, "why", why.msg));
        return;
    }
    /* what the backend has there; the scheduler holds those that overlap
     * nothing of its own (its own instances are not the backend's news) */
    for (i = 0; i < n && k < MS_MAX_INST; i++)
        if (inv[i].gpu == gpu && inv[i].start >= 0) {
            gis[k].prof = inv[i].prof;
            gis[k].start = inv[i].start;
            k++;
        }
    free(inv);
    st = ms_sched_gpu_hold(d->sched, gpu, gis, k, now);
    if (st != MS_OK)
        ms_log("warn", "cannot hold a GPU's instances the view lacks",
               json_pack("{s:i,s:s}", "gpu", gpu, "status", ms_status_name(st)));
}
