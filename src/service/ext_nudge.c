/* ext_nudge.c - a waiting pod touched so that kube-scheduler tries it
 * again: a preemptor (--preempt with --kube; docs/kubernetes.md,
 * "Preemption"), or a pod turned down for room when room frees.
 *
 * kube-scheduler keeps a pod that an extender turned down among its
 * unschedulable pods until a cluster event comes (any event: the
 * "Extender" rejector, pkg/scheduler of v1.37) or five minutes pass. What
 * makes room for a preemptor happens here, not in the cluster: a victim's
 * release reaches our pod watch some milliseconds after kube-scheduler's
 * own watch saw the deletion (and retried the preemptor into our "being
 * evicted" answer), a budget's refusal is a 429 nobody else sees, the
 * evictions' wait runs out on our clock. The same race for any pod turned
 * down for room: a pod's deletion or completion frees its instance when
 * our watch brings it, after kube-scheduler's retry of the waiting pods
 * was answered "no room", and a hold that expires frees room nobody else
 * sees. At each of these the loop asks for a nudge: the nudge thread
 * writes an annotation (migsched.io/preempt-retry on a preemptor,
 * migsched.io/retry on a pod that waits for room: why, and when) with
 * the pod's uid as a precondition, and that update is the event that
 * sends the pod back through its filter (after its backoff). A nudge lost (an API error) costs a retry, never a
 * wrong placement: the filter decides from the scheduler's view. Its own
 * thread, not a filter worker's: the queue outlives the workers, which
 * stop before the loop does.
 *
 * svc_ext_nudge runs on the loop (it only queues); nudger_main is the
 * nudge thread's, which checks leadership before each write; start and
 * stop are the main thread's (ext_kube.c, with the pod watch).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "service/extender_int.h"

#define CALL_MS 5000L

typedef struct nudge {
    svc_qlink_t link;
    char path[1200];               /* the pod's */
    char *patch;
    double lead_by;                /* a takeover's, queued before the leadership starts:
                                    * written once it starts, if by then (real monotonic
                                    * clock); 0 for the others */
} nudge_t;

/* A takeover's nudges are queued before this replica serves (kctl sets
 * the leadership when the takeover returns): they wait this long from
 * their queueing for it, all together, then are dropped as any nudge of a
 * replica that does not lead. */
#define LEAD_WAIT_S 2.0

static void nudge_free(nudge_t *n)
{
    free(n->patch);
    free(n);
}

static bool queue_nudge(svc_t *d, const char *path, const char *uid, const char *key, const char *why,
                        bool when_leading)
{
    nudge_t *n;
    char stamp[48], value[160];
    time_t t = (time_t)svc_clock_wall(d->clock);
    struct tm tm;
    json_t *o;

    if (path == NULL || uid == NULL || key == NULL || strlen(path) >= sizeof(n->path) || d->kube == NULL ||
        d->ext == NULL)
        return false;
    if ((n = calloc(1, sizeof(*n))) == NULL)
        return false;
    if (gmtime_r(&t, &tm) == NULL || strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(stamp, sizeof(stamp), "%lld", (long long)t);
    /* the time makes every nudge a change (an equal patch is no update),
     * and says when to whoever looks at the pod */
    snprintf(value, sizeof(value), "%s at %s", why, stamp);
    o = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "uid", uid, "annotations", key, value);
    n->patch = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    snprintf(n->path, sizeof(n->path), "%s", path);
    n->lead_by = when_leading ? ms_clock_mono() + LEAD_WAIT_S : 0.0;
    if (n->patch == NULL || svc_queue_push(&d->ext->nudges, &n->link) != 0) {
        nudge_free(n);
        return false;
    }
    return true;
}

bool svc_ext_nudge(svc_t *d, const char *path, const char *uid, const char *key, const char *why)
{
    return queue_nudge(d, path, uid, key, why, false);
}

bool svc_ext_nudge_when_leading(svc_t *d, const char *path, const char *uid, const char *key, const char *why)
{
    return queue_nudge(d, path, uid, key, why, true);
}

/* May the nudge thread write n now? A takeover's waits (until its
 * lead_by, in short naps) for the leadership its takeover is about to
 * give. */
static bool may_write(svc_t *d, const nudge_t *n)
{
    struct timespec nap = { 0, 20 * 1000 * 1000 };

    while (!svc_ext_serving(d)) {
        if (ms_clock_mono() >= n->lead_by)
            return false;
        nanosleep(&nap, NULL);
    }
    return true;
}

static void *nudger_main(void *arg)
{
    svc_t *d = arg;
    svc_qlink_t *l;

    while ((l = svc_queue_pop(&d->ext->nudges)) != NULL) {
        nudge_t *n = SVC_QITEM(l, nudge_t, link);
        char err[256] = "", *resp = NULL;
        long status = 0;

        /* 404, 409, 422: the pod is gone, or another pod has its name (the uid) */
        if (may_write(d, n) &&
            (ms_kube_request_within(d->kube, "PATCH", n->path, n->patch, CALL_MS, &status, &resp, err,
                                    sizeof(err)) != 0 ||
             (status != 200 && status != 404 && status != 409 && status != 422)))
            ms_log("warn", "a waiting pod's retry not asked for",
                   json_pack("{s:s, s:I, s:s}", "path", n->path, "status", (json_int_t)status, "error", err));
        free(resp);
        nudge_free(n);
    }
    return NULL;
}

int svc_ext_nudger_start(svc_t *d)
{
    if (d->ext == NULL || d->watch == NULL)
        return -1;
    if (pthread_create(&d->watch->nudger, NULL, nudger_main, d) != 0)
        return -1;
    d->watch->nudging = true;
    return 0;
}

void svc_ext_nudger_stop(svc_t *d)
{
    if (d->watch == NULL || !d->watch->nudging)
        return;
    /* the loop may still nudge: its pushes are refused from now on */
    svc_queue_close(&d->ext->nudges);
    pthread_join(d->watch->nudger, NULL);
    d->watch->nudging = false;
}

void svc_ext_nudges_free(svc_ext_t *x)
{
    svc_qlink_t *l, *next;

    for (l = svc_queue_drain(&x->nudges); l != NULL; l = next) {
        next = l->next;
        nudge_free(SVC_QITEM(l, nudge_t, link));
    }
    svc_queue_destroy(&x->nudges);
}
