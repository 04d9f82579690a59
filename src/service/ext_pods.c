/* ext_pods.c - the loop thread: the extender's pod map (uid -> the pod's
 * entry: its current job, its reservation's end, a release it waits for)
 * and where a pod's job stands in the scheduler's view. The map is made
 * (svc_ext_init) and freed (svc_ext_free) on the main thread, before the
 * loop starts and after it ended.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

ext_pod_t *svc_ext_pod_find(svc_ext_t *x, const char *uid)
{
    size_t i;

    if (x->cap == 0)
        return NULL;
    for (i = hash_str(uid) & (x->cap - 1); x->slots[i] != NULL; i = (i + 1) & (x->cap - 1))
        if (x->slots[i] != EXT_TOMB && strcmp(x->slots[i]->uid, uid) == 0)
            return x->slots[i];
    return NULL;
}

static int pod_grow(svc_ext_t *x)
{
    size_t cap = x->cap ? x->cap * 2 : 1024, i, j;
    ext_pod_t **v = calloc(cap, sizeof(*v));

    if (v == NULL)
        return -1;
    for (i = 0; i < x->cap; i++) {
        ext_pod_t *p = x->slots[i];

        if (p == NULL || p == EXT_TOMB)
            continue;
        for (j = hash_str(p->uid) & (cap - 1); v[j] != NULL; j = (j + 1) & (cap - 1))
            ;
        v[j] = p;
    }
    free(x->slots);
    x->slots = v;
    x->cap = cap;
    x->used = x->n;
    return 0;
}

ext_pod_t *svc_ext_pod_add(svc_ext_t *x, const char *uid)
{
    ext_pod_t *p;
    size_t i;

    if ((x->used + 1) * 2 > x->cap && pod_grow(x) != 0)
        return NULL;
    if ((p = calloc(1, sizeof(*p))) == NULL || (p->uid = strdup(uid)) == NULL) {
        free(p);
        return NULL;
    }
    for (i = hash_str(uid) & (x->cap - 1); x->slots[i] != NULL && x->slots[i] != EXT_TOMB;
         i = (i + 1) & (x->cap - 1))
        ;
    if (x->slots[i] == NULL)
        x->used++;
    x->slots[i] = p;
    x->n++;
    return p;
}

static void pod_free(ext_pod_t *p)
{
    free(p->uid);
    free(p->preempt_path);
    free(p->preemptor);
    free(p->wait_path);
    free(p);
}

void svc_ext_pod_del(svc_ext_t *x, ext_pod_t *p)
{
    size_t i;

    for (i = hash_str(p->uid) & (x->cap - 1); x->slots[i] != NULL; i = (i + 1) & (x->cap - 1))
        if (x->slots[i] == p) {
            x->slots[i] = EXT_TOMB;
            x->n--;
            break;
        }
    pod_free(p);
}

int svc_ext_init(svc_t *d)
{
    if ((d->ext = calloc(1, sizeof(*d->ext))) == NULL)
        return -1;
    if (svc_queue_init(&d->ext->nudges) != 0) {
        free(d->ext);
        d->ext = NULL;
        return -1;
    }
    if (svc_ext_runs_init(&d->ext->runs) != 0) {
        svc_ext_nudges_free(d->ext);
        free(d->ext);
        d->ext = NULL;
        return -1;
    }
    d->ext->ttl_s = d->cfg->ext_ttl_s > 0 ? d->cfg->ext_ttl_s : 30.0;
    return 0;
}

void svc_ext_free(svc_t *d)
{
    size_t i;

    if (d->ext == NULL)
        return;
    for (i = 0; i < d->ext->cap; i++)
        if (d->ext->slots[i] != NULL && d->ext->slots[i] != EXT_TOMB)
            pod_free(d->ext->slots[i]);
    free(d->ext->slots);
    svc_ext_nudges_free(d->ext);
    svc_ext_scores_free(d->ext);
    svc_ext_runs_free(&d->ext->runs);
    free(d->ext);
    d->ext = NULL;
}

void svc_ext_job_moved(svc_t *d)
{
    if (d->ext != NULL)
        svc_ext_runs_moved(&d->ext->runs);
}

/* The pod's job's node name ("" none). */
const char *svc_ext_job_node(const svc_t *d, const svc_job_t *j)
{
    ms_sched_job_info_t info;
    int node, group, local;

    if (j == NULL || j->slot < 0 || ms_sched_job(d->sched, j->slot, &info) != MS_OK || info.ninst <= 0)
        return "";
    ms_sched_gpu_where(d->sched, info.inst[0].gpu, &node, &group, &local);
    return ms_sched_node(d->sched, node)->name;
}

int svc_ext_job_state(const svc_t *d, const svc_job_t *j)
{
    ms_sched_job_info_t info;

    if (j == NULL)
        return -1;
    if (j->slot >= 0 && ms_sched_job(d->sched, j->slot, &info) == MS_OK)
        return (int)info.state;
    return j->state;
}

void svc_ext_places(const svc_t *d, const ms_sched_job_info_t *info, char *buf, size_t len)
{
    size_t used = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < info->ninst; i++) {
        int node, group, local, w;

        ms_sched_gpu_where(d->sched, info->inst[i].gpu, &node, &group, &local);
        w = snprintf(buf + used, len - used, "%s%s/%d/%d", i > 0 ? "," : "", ms_sched_node(d->sched, node)->name,
                     info->inst[i].gpu - ms_sched_node_first_gpu(d->sched, node), (int)info->inst[i].start);
        if (w < 0 || (size_t)w >= len - used) {
            buf[0] = '\0';   /* does not fit: none rather than a part */
            return;
        }
        used += (size_t)w;
    }
}

bool svc_ext_pod_holds(const svc_t *d, const ext_pod_t *p)
{
    return p->job != NULL && svc_job_live(svc_ext_job_state(d, p->job));
}
