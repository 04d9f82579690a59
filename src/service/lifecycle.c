/* lifecycle.c - the main thread: the daemon's core threads in order.
 *
 * svc_init makes what the threads share (locks, queues, the job table);
 * svc_start runs start-up's reconciliation (restart.c) on this thread,
 * then starts the executor (the reconciliation's plans wait in its queue),
 * the syncer and the loop. svc_stop ends them in the order that
 * loses nothing acknowledged: the executor first (after the op in
 * progress: its plans stay pending in the journal), then the loop (it takes
 * what was posted before its queue closed and commits), then the syncer
 * (it makes the last commits durable and answers them). svc_fini frees.
 */
#include <stdlib.h>
#include <string.h>

#include "service/own.h"
#include "service/svc.h"

int svc_init(svc_t *d)
{
    if (d->clock == NULL)
        d->clock = &svc_clock_real;
    svc_jobs_init(&d->jobs);
    d->loop.held_tail = &d->loop.held;
    ms__evheap_init(&d->loop.ends);
    /* these cannot fail on Linux without a bug (no allocation): the daemon
     * stops at once if one does */
    if (pthread_mutex_init(&d->rmu, NULL) != 0 || pthread_mutex_init(&d->exec.mu, NULL) != 0 ||
        svc_queue_init(&d->loop.q) != 0 || svc_queue_init(&d->loop.staged) != 0 ||
        svc_queue_init(&d->sync.q) != 0 || svc_queue_init(&d->exec.q) != 0 || svc_exec_init(d) != 0)
        return -1;
    d->inited = true;
    return 0;
}

/* A failed start-up step, said (main then says "start-up failed (see the
 * log above)": there always is a line above). */
static int failed(const char *step, int err)
{
    ms_log("error", "start-up failed", json_pack("{s:s,s:s?}", "step", step, "why", err != 0 ? strerror(err) : NULL));
    return -1;
}

int svc_start(svc_t *d)
{
    int e;

    if (svc_restart(d, svc_clock_wall(d->clock)) != 0)
        return failed("loading the store and reconciling it with the backend's inventory", 0);
    atomic_store(&d->exec.stop, false);
    if ((e = pthread_create(&d->exec.th, NULL, svc_exec_main, d)) != 0)
        return failed("starting the executor thread", e);
    d->exec.running = true;
    if ((e = pthread_create(&d->sync.th, NULL, svc_syncer_main, d)) != 0)
        return failed("starting the syncer thread", e);
    d->sync.running = true;
    if ((e = pthread_create(&d->loop.th, NULL, svc_loop_main, d)) != 0)
        return failed("starting the loop thread", e);
    d->loop.running = true;
    d->ready = true;
    return 0;
}

void svc_stop(svc_t *d)
{
    svc_exec_stop(d);   /* each lane finishes its op in progress */
    svc_queue_close(&d->exec.q);   /* the syncer's later plans are freed */
    if (d->loop.running) {
        svc_queue_close(&d->loop.q);
        pthread_join(d->loop.th, NULL);
        d->loop.running = false;
    }
    svc_queue_close(&d->loop.q);
    if (d->sync.running) {   /* it releases what is left, then ends */
        svc_queue_close(&d->sync.q);
        pthread_join(d->sync.th, NULL);
        d->sync.running = false;
    }
    svc_queue_close(&d->sync.q);
}

void svc_fini(svc_t *d)
{
    svc_loop_t *L = &d->loop;
    svc_qlink_t *l, *next;

    if (!d->inited)
        return;
    for (l = svc_queue_drain(&d->sync.q); l != NULL; l = next) {   /* none after svc_stop */
        next = l->next;
        svc_ticket_release(d, SVC_QITEM(l, svc_ticket_t, link));
    }
    svc_xplan_free_chain(svc_queue_drain(&L->staged));
    svc_xplan_free_chain(svc_queue_drain(&d->exec.q));
    svc_exec_fini(d);
    free(d->health);
    d->health = NULL;
    for (l = svc_queue_drain(&L->q); l != NULL; l = next) {   /* never answered: no one waits */
        next = l->next;
        svc_msg_free(SVC_QITEM(l, svc_msg_t, link));
    }
    for (l = L->held; l != NULL; l = next) {
        next = l->next;
        svc_msg_free(SVC_QITEM(l, svc_msg_t, link));
    }
    L->held = NULL;
    free(L->dirty);
    free(L->pub);
    svc_redo_free(d);
    ms__evheap_fini(&L->ends);
    svc_queue_destroy(&L->q);
    svc_queue_destroy(&L->staged);
    svc_queue_destroy(&d->sync.q);
    svc_queue_destroy(&d->exec.q);
    pthread_mutex_destroy(&d->exec.mu);
    svc_events_free(d);
    svc_own_free(d);
    ms_sched_destroy(d->sched);
    d->sched = NULL;
    svc_jobs_free(&d->jobs);
    pthread_mutex_destroy(&d->rmu);
    memset(L, 0, sizeof(*L));
    d->inited = false;
}
