/* loop.c - the loop thread: the only owner of the ms_sched_t, the job
 * table's writes and the store's write connection.
 *
 * One iteration takes every message that arrived (HTTP requests, the
 * executor's op outcomes, the extender's calls) as a batch and handles it
 * inside ONE transaction: the reads first (they show the earlier commits),
 * then the writes through the message table (handlers.c, ext_loop.c); lets
 * time pass (sim jobs that reached their duration end; ms_sched_tick and
 * the extender's expiries); syncs every job whose state changed
 * (jobsync.c); commits; and hands the batch to the syncer (syncer.c) as a
 * ticket, which answers the requests, publishes the job views and events
 * and passes the batch's plans to the executor once the commit is durable.
 * So a 201 is sent only for a job that is on disk, a plan is on disk before
 * its first op runs, and one fsync serves many batches (group commit).
 *
 * Time: the batch's `now` is read once, from the daemon's clock
 * (svc_t.clock), and passed to every handler. A batch within
 * --commit-delay of the last commit keeps the transaction open for the
 * batches of the next moments (one commit and one fsync for all).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/extender.h"
#include "service/own.h"
#include "service/svc.h"

/* The views of the jobs changed since the last commit, into t. */
static void take_views(svc_t *d, svc_ticket_t *t)
{
    svc_loop_t *L = &d->loop;
    size_t i;

    if (L->npub == 0)
        return;
    if ((t->pj = malloc(L->npub * sizeof(*t->pj))) == NULL ||
        (t->pv = malloc(L->npub * sizeof(*t->pv))) == NULL) {
        free(t->pj);
        t->pj = NULL;
        return;   /* out of memory: they stay listed and go with the next ticket */
    }
    for (i = 0; i < L->npub; i++) {
        svc_job_t *j = L->pub[i];

        j->topub = false;
        t->pj[i] = j;
        (void)svc_jview_of(j, &t->pv[i]);   /* out of memory: without its reason */
    }
    t->npub = L->npub;
    L->npub = 0;
}

/* A ticket for msgs (and, after a commit, the batch's views, events and
 * plans) to the syncer. Out of memory it waits for memory: the replies
 * cannot go out before the fsync, nor out of order. */
static void ticket(svc_t *d, svc_qlink_t *msgs, bool committed)
{
    svc_ticket_t *t;

    while ((t = calloc(1, sizeof(*t))) == NULL) {
        struct timespec ts = { 0, 1000000L };

        nanosleep(&ts, NULL);
    }
    t->need = d->loop.commits;
    t->msgs = msgs;
    if (committed) {
        take_views(d, t);
        t->ev_next = svc_events_next(d);
        t->plans = svc_queue_drain(&d->loop.staged);
    }
    if (svc_queue_push(&d->sync.q, &t->link) != 0) {
        /* no syncer (it stops only after the loop): durable here, then out */
        if (svc_store_sync(d->store) != 0)
            abort();
        svc_ticket_release(d, t);
    }
}

/* A read, or a message refused while the store cannot write (its 503
 * depends on no commit): answered before the batch's transaction. */
static bool is_read(const svc_t *d, const svc_msg_t *m)
{
    return (m->kind > 0 && m->kind < SVC_M_N && svc_msg_kinds[m->kind].is_read != NULL &&
            svc_msg_kinds[m->kind].is_read(m)) || svc_redo_refuses(d, m);
}

/* Split the batch: handle its reads at once and give them to the syncer
 * (out once the commits they show are durable); return the rest in order.
 * A message handed over belongs to its caller again once answered, so the
 * lists are split before any is handled. */
static svc_qlink_t *answer_reads(svc_t *d, svc_qlink_t *batch, double now)
{
    svc_qlink_t *l, *next, *reads = NULL, **rt = &reads, *rest = NULL, **wt = &rest;

    for (l = batch; l != NULL; l = next) {
        next = l->next;
        l->next = NULL;
        if (is_read(d, SVC_QITEM(l, svc_msg_t, link))) {
            *rt = l;
            rt = &l->next;
        } else {
            *wt = l;
            wt = &l->next;
        }
    }
    if (reads == NULL)
        return rest;
    for (l = reads; l != NULL; l = l->next)
        svc_handle(d, SVC_QITEM(l, svc_msg_t, link), now);
    ticket(d, reads, false);
    return rest;
}

/* The scheduler's tick: expired holds, and a pass over the queue. */
static void tick(svc_t *d, double now)
{
    (void)ms_sched_tick(d->sched, now);
    svc_ext_tick(d, now);
    svc_own_tick(d, now);
}

static void commit(svc_t *d, double t_decide)
{
    svc_loop_t *L = &d->loop;
    double t_commit, t_end;

    L->open_tx = false;
    if (svc_store_commit(d->store) != 0) {
        /* memory is ahead of the disk: nothing of it may be answered or
         * executed; it is kept and written again (redo.c) */
        svc_redo_failed(d);
        return;
    }
    svc_redo_committed(d);
    L->commits++;
    t_commit = svc_clock_mono(d->clock);
    L->last_commit = t_commit;
    ticket(d, L->held, true);   /* the syncer answers once it is durable */
    L->held = NULL;
    L->held_tail = &L->held;
    t_end = svc_clock_mono(d->clock);
    d->met.loop_batches++;
    d->met.loop_commit_s += t_commit - t_decide;
    d->met.loop_reply_s += t_end - t_commit;
}

void svc_loop_batch(svc_t *d, svc_qlink_t *batch, double now, bool stop)
{
    svc_loop_t *L = &d->loop;
    double t_start = svc_clock_mono(d->clock), t_decide;
    svc_qlink_t *l;

    if (L->held_tail == NULL)
        L->held_tail = &L->held;
    for (l = batch; l != NULL; l = l->next) {
        d->met.loop_msgs++;
        d->met.loop_wait_s += t_start - SVC_QITEM(l, svc_msg_t, link)->t_enq;
    }
    /* Reads first: at the start of a batch memory holds what the earlier
     * batches committed, so a read needs only their fsync, not this
     * batch's. While a commit is held, memory is ahead of the commits:
     * its reads wait for the held commit. */
    if (!L->open_tx) {
        batch = answer_reads(d, batch, now);
        if (svc_store_begin(d->store) != 0) {
            ms_log("error", "cannot begin a transaction; stopping", NULL);
            abort();
        }
        L->open_tx = true;
        svc_redo_write(d, now);   /* what failed commits held, first */
    }
    for (l = batch; l != NULL; l = l->next)
        svc_handle(d, SVC_QITEM(l, svc_msg_t, link), now);
    if (!stop)
        svc_finish_due(d, now);
    if (now - L->last_tick >= SVC_TICK_S && !stop) {
        tick(d, now);
        L->last_tick = now;
    }
    svc_sync_dirty(d, now);
    t_decide = svc_clock_mono(d->clock);
    d->met.loop_decide_s += t_decide - t_start;
    *L->held_tail = batch;
    while (*L->held_tail != NULL)
        L->held_tail = &(*L->held_tail)->next;
    if (!stop && !L->store_down && t_decide - L->last_commit < d->cfg->commit_delay_s)
        return;   /* group commit with a delay: the next moments' batches join */
    commit(d, t_decide);
    if (L->store_down && (stop || atomic_load(&d->stopping)))
        svc_redo_give_up(d);   /* stopping: what cannot be stored is answered 503 */
}

/* How long the loop may sleep: until the next tick, the next sim job's end
 * (not before the finish gate) or the held commit's time. */
static double sleep_for(svc_t *d)
{
    svc_loop_t *L = &d->loop;
    double now = svc_clock_wall(d->clock), until = L->last_tick + SVC_TICK_S, wait;
    const ms__ev_t *e = ms__evheap_top(&L->ends);

    if (e != NULL) {
        double end = e->t > L->finish_gate ? e->t : L->finish_gate;

        until = end < until ? end : until;
    }
    wait = until - now;
    if (L->open_tx) {
        double held = L->last_commit + d->cfg->commit_delay_s - svc_clock_mono(d->clock);

        wait = held < wait ? held : wait;
    }
    return wait > 0 ? wait : 0;
}

void *svc_loop_main(void *arg)
{
    svc_t *d = arg;

    for (;;) {
        bool closed = false, stop;
        svc_qlink_t *batch = svc_queue_take(&d->loop.q, sleep_for(d), &closed);

        /* closed: svc_stop; nothing can be posted any more, and what was
         * posted before is in this batch or an earlier one */
        stop = closed && batch == NULL;
        svc_loop_batch(d, batch, svc_clock_wall(d->clock), stop);
        if (stop)
            break;
    }
    return NULL;
}
