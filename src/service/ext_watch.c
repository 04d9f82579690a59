/* ext_watch.c - the pod watch thread (--kube): list+watch of /api/v1/pods
 * (src/kube/). It frees the instance of a pod that completes (phase
 * Succeeded or Failed: ms_sched_finished) or is deleted (cancel), and after
 * every (re)list the instances of pods that went away meanwhile, each
 * through a message to the loop (svc_ext_call). Started and stopped by
 * ext_kube.c on the main thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "service/extender_int.h"

typedef struct watch {
    svc_t *d;
    char **uids;                   /* the list's pods */
    int n, cap;
    double list_t;                 /* when the list began (the clock's wall) */
} watch_t;

static void post_release(svc_t *d, const char *uid, bool finished, bool ours)
{
    ext_msg_t *e = svc_ext_msg_new(EXT_RELEASE);
    int status;
    char *body = NULL;

    if (e == NULL || (e->bind.uid = strdup(uid)) == NULL) {
        svc_ext_msg_free(e);
        return;
    }
    e->finished = finished;
    e->scan = ours;
    e = svc_ext_call(d, e, &status, &body);
    svc_ext_msg_free(e);
    free(body);
}

/* The list is complete: the loop frees the jobs of pods missing from it. */
static void synced(watch_t *w)
{
    ext_msg_t *e = svc_ext_msg_new(EXT_RESYNC);
    int status;
    char *body = NULL;

    if (e != NULL) {
        e->uids = w->uids;
        e->nuids = w->n;
        e->list_t = w->list_t;
        w->uids = NULL;
        w->n = w->cap = 0;
        e = svc_ext_call(w->d, e, &status, &body);
        svc_ext_msg_free(e);
        free(body);
    }
    /* a relist's snapshot is taken after this: jobs submitted before now
     * and missing from it are gone */
    w->list_t = svc_clock_wall(w->d->clock);
}

static void listed(watch_t *w, const char *uid)
{
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 256;
        char **v = realloc(w->uids, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return;
        w->uids = v;
        w->cap = cap;
    }
    if ((w->uids[w->n] = strdup(uid)) != NULL)
        w->n++;
}

static void on_pod(void *ctx, const char *type, json_t *pod)
{
    watch_t *w = ctx;
    json_t *md = json_object_get(pod, "metadata");
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    bool ours = json_object_get(json_object_get(md, "annotations"), "migsched.io/job") != NULL;
    bool done = phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);

    if (strcmp(type, "SYNCED") == 0) {
        synced(w);
        return;
    }
    if (uid == NULL)
        return;
    if (strcmp(type, "LIST") == 0) {
        if (!done)
            listed(w, uid);
        return;
    }
    if (strcmp(type, "DELETED") == 0)
        post_release(w->d, uid, false, ours);
    else if (done && ours)
        post_release(w->d, uid, true, true);
}

void *svc_ext_watch_main(void *arg)
{
    svc_t *d = arg;
    watch_t w;
    int i;

    memset(&w, 0, sizeof(w));
    w.d = d;
    w.list_t = svc_clock_wall(d->clock);
    (void)ms_kube_watch(d->kube, "/api/v1/pods", NULL, on_pod, &w, &d->watch->stop);
    for (i = 0; i < w.n; i++)
        free(w.uids[i]);
    free(w.uids);
    return NULL;
}
