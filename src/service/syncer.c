/* syncer.c - the syncer thread: durability off the loop.
 *
 * A batch's commit only writes the WAL (synchronous=NORMAL); the loop then
 * hands the syncer a ticket with everything that must wait for the fsync:
 * the batch's replies, the views of the jobs it changed, how far its events
 * go and its plans. The syncer fsyncs once for every ticket that arrived
 * meanwhile (group commit across batches) and releases them in order, while
 * the loop already decides the next batch. Reads the loop answers at the
 * start of a batch show the state of the commits before it: their ticket
 * needs those commits durable, so a reader still never sees what a crash
 * could take back.
 *
 * Releasing a ticket is the reply path of the message table (svc.h): each
 * message is answered (svc_msg_answer: its waiter is signalled or its
 * callback called, with no lock held), op outcomes are freed.
 */
#include <stdlib.h>

#include "service/svc.h"

void svc_ticket_release(svc_t *d, svc_ticket_t *t)
{
    svc_qlink_t *l, *next;
    size_t i;

    /* The batch's job views and its events become visible together: the
     * events are published while the views' lock is still held (lock
     * order rmu, then the ring's), so a client that GETs a job in its new
     * state finds the events that led there, and one that reads an event
     * finds the job in that state. */
    pthread_mutex_lock(&d->rmu);
    for (i = 0; i < t->npub; i++) {
        free(t->pj[i]->pub.reason);
        t->pj[i]->pub = t->pv[i];
        t->pj[i]->published = true;
    }
    if (t->ev_next > 0)
        svc_events_publish_to(d, t->ev_next);
    pthread_mutex_unlock(&d->rmu);
    free(t->pj);
    free(t->pv);
    for (l = t->plans; l != NULL; l = next) {
        next = l->next;
        if (svc_queue_push(&d->exec.q, l) != 0)   /* the executor has stopped: pending in the journal */
            svc_xplan_free(SVC_QITEM(l, svc_xplan_t, link));
    }
    for (l = t->msgs; l != NULL; l = next) {
        svc_msg_t *m = SVC_QITEM(l, svc_msg_t, link);

        next = l->next;
        if (m->kind == SVC_M_OPRESULT || m->kind == SVC_M_HEALTH)   /* the executor's: no one waits */
            svc_msg_free(m);
        else
            svc_msg_answer(m);   /* m is the caller's from here */
    }
    free(t);
}

void *svc_syncer_main(void *arg)
{
    svc_t *d = arg;
    svc_qlink_t *l, *next;

    /* NULL once the queue is closed (svc_stop, after the loop ended) and
     * every ticket is released */
    while ((l = svc_queue_take(&d->sync.q, -1, NULL)) != NULL) {
        uint64_t need = 0;

        for (next = l; next != NULL; next = next->next) {
            svc_ticket_t *t = SVC_QITEM(next, svc_ticket_t, link);

            need = t->need > need ? t->need : need;
        }
        if (need > d->sync.synced) {
            double t0 = svc_clock_mono(d->clock);

            if (svc_store_sync(d->store) != 0) {
                ms_log("error", "fsync of the store failed; exiting so that a restart recovers", NULL);
                abort();
            }
            d->sync.synced = need;
            atomic_fetch_add(&d->met.syncs, 1);
            atomic_fetch_add(&d->met.sync_ns,
                             (unsigned long long)((svc_clock_mono(d->clock) - t0) * 1e9));
        }
        for (; l != NULL; l = next) {
            next = l->next;
            svc_ticket_release(d, SVC_QITEM(l, svc_ticket_t, link));
        }
    }
    return NULL;
}
