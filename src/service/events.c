/* events.c - job state changes for GET /v1/events: a ring of the last
 * SVC_EVENTS events in memory (the store keeps all of them). The loop adds
 * events while it handles a batch and the syncer publishes them after the
 * batch's fsync, so a client never sees an event that a crash could take
 * back.
 *
 * Who waits for them (a long poll, an event stream) does not sleep: its
 * HTTP connection is suspended and parked here (svc_events_park), and a
 * publish, its deadline (the timer thread, evtimer.c) or the shutdown wakes
 * it, under the ring's lock, so a wake can neither be missed nor come
 * twice.
 *
 * Any thread: every function takes svc_events_t.mu (lock 2 of svc.h),
 * which svc_events_publish_to's caller (the syncer) may hold rmu around.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/svc.h"

int svc_events_init(svc_t *d, uint64_t next)
{
    svc_events_t *e = &d->ev;
    pthread_condattr_t a;
    int rc;

    if ((e->ring = calloc(SVC_EVENTS, sizeof(*e->ring))) == NULL)
        return -1;
    e->next = e->first = e->pub = next;
    if (pthread_mutex_init(&e->mu, NULL) != 0) {
        free(e->ring);
        e->ring = NULL;
        return -1;
    }
    rc = pthread_condattr_init(&a);
    if (rc == 0) {
        rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&e->timer_cv, &a) == 0
                 ? 0 : -1;
        pthread_condattr_destroy(&a);
    }
    if (rc != 0) {
        pthread_mutex_destroy(&e->mu);
        free(e->ring);
        e->ring = NULL;
        return -1;
    }
    e->mu_init = true;
    return 0;
}

void svc_events_free(svc_t *d)
{
    svc_events_t *e = &d->ev;

    if (!e->mu_init)
        return;
    free(e->ring);
    e->ring = NULL;
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->timer_cv);
    e->mu_init = false;
}

/* Under mu: wake every parked waiter whose condition holds (now < 0: no
 * deadline is looked at). */
static void wake_ready(svc_events_t *e, double now)
{
    svc_ewait_t *w = e->wait_head, *next;

    for (; w != NULL; w = next) {
        next = w->next;
        if (w->since < e->pub || e->stop || (now >= 0 && now >= w->deadline)) {
            if (w->prev != NULL)
                w->prev->next = w->next;
            else
                e->wait_head = w->next;
            if (w->next != NULL)
                w->next->prev = w->prev;
            w->prev = w->next = NULL;
            w->parked = false;
            e->nwait--;
            w->wake(w);
        }
    }
}

bool svc_events_park(svc_t *d, svc_ewait_t *w, void (*suspend)(void *arg), double now)
{
    svc_events_t *e = &d->ev;

    pthread_mutex_lock(&e->mu);
    if (w->since < e->pub || e->stop || now >= w->deadline) {
        pthread_mutex_unlock(&e->mu);
        return false;
    }
    suspend(w->arg);
    w->prev = NULL;
    w->next = e->wait_head;
    if (e->wait_head != NULL)
        e->wait_head->prev = w;
    e->wait_head = w;
    w->parked = true;
    e->nwait++;
    if (w->deadline < e->timer_at)
        pthread_cond_signal(&e->timer_cv);   /* earlier than the timer's next wake */
    pthread_mutex_unlock(&e->mu);
    return true;
}

int svc_events_parked(svc_t *d)
{
    int n;

    pthread_mutex_lock(&d->ev.mu);
    n = d->ev.nwait;
    pthread_mutex_unlock(&d->ev.mu);
    return n;
}

double svc_events_expire(svc_t *d, double now)
{
    svc_events_t *e = &d->ev;
    const svc_ewait_t *w;
    double at = now + 1.0;

    wake_ready(e, now);
    for (w = e->wait_head; w != NULL; w = w->next)
        if (w->deadline < at)
            at = w->deadline;
    e->timer_at = at;
    return at;
}

void svc_event_add(svc_t *d, const char *job, const char *state, const char *by, double t)
{
    svc_events_t *e = &d->ev;
    svc_event_t *x;

    pthread_mutex_lock(&e->mu);
    x = &e->ring[e->next % SVC_EVENTS];
    x->seq = e->next++;
    x->t = t;
    snprintf(x->job, sizeof(x->job), "%s", job);
    snprintf(x->state, sizeof(x->state), "%s", state);
    snprintf(x->by, sizeof(x->by), "%s", by != NULL ? by : "");
    if (e->next - e->first > SVC_EVENTS)
        e->first = e->next - SVC_EVENTS;
    pthread_mutex_unlock(&e->mu);
    (void)svc_store_event(d->store, x->seq, job, state, t);
}

int svc_events_each(svc_t *d, uint64_t since, int (*fn)(void *ctx, const svc_event_t *e), void *ctx)
{
    svc_events_t *e = &d->ev;
    uint64_t s, next;
    int rc = 0;

    /* the loop alone adds events, and it is the caller: the ring's entries
     * from since on do not change meanwhile (the lock is for first/next) */
    pthread_mutex_lock(&e->mu);
    if (since < e->first)
        since = e->first;
    next = e->next;
    pthread_mutex_unlock(&e->mu);
    for (s = since; s < next && rc == 0; s++)
        rc = fn(ctx, &e->ring[s % SVC_EVENTS]);
    return rc;
}

void svc_events_publish_to(svc_t *d, uint64_t next)
{
    svc_events_t *e = &d->ev;

    pthread_mutex_lock(&e->mu);
    if (next > e->pub && next <= e->next) {
        e->pub = next;
        wake_ready(e, -1);
    }
    pthread_mutex_unlock(&e->mu);
}

uint64_t svc_events_next(svc_t *d)
{
    uint64_t n;

    pthread_mutex_lock(&d->ev.mu);
    n = d->ev.next;
    pthread_mutex_unlock(&d->ev.mu);
    return n;
}

void svc_events_wake(svc_t *d)
{
    pthread_mutex_lock(&d->ev.mu);
    d->ev.stop = true;
    wake_ready(&d->ev, -1);
    pthread_mutex_unlock(&d->ev.mu);
}

char *svc_events_get(svc_t *d, uint64_t since, long limit)
{
    svc_events_t *e = &d->ev;
    json_t *o = json_object(), *arr = json_array();
    uint64_t s;
    char *out = NULL;
    bool truncated = false;

    if (o == NULL || arr == NULL) {
        json_decref(o);
        json_decref(arr);
        return NULL;
    }
    pthread_mutex_lock(&e->mu);
    if (since < e->first) {
        truncated = since + 1 < e->first;   /* since 0 and 1 both mean "from the start" */
        since = e->first;
    }
    for (s = since; s < e->pub && limit > 0; s++, limit--) {
        const svc_event_t *x = &e->ring[s % SVC_EVENTS];

        json_t *ev = json_pack("{s:I,s:f,s:s,s:s}", "seq", (json_int_t)x->seq, "t", x->t, "job", x->job,
                               "state", x->state);

        if (ev != NULL && x->by[0] != '\0')
            json_object_set_new(ev, "by", json_string(x->by));
        json_array_append_new(arr, ev);
    }
    json_object_set_new(o, "next", json_integer((json_int_t)s));
    pthread_mutex_unlock(&e->mu);
    json_object_set_new(o, "events", arr);
    if (truncated)
        json_object_set_new(o, "truncated", json_true());
    out = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return out;
}
