/* events.c - job state changes for GET /v1/events: a ring of the last
 * SVC_EVENTS events in memory (the store keeps all of them). The loop adds
 * events while it handles a batch and publishes them after the batch's
 * commit, so a client never sees an event that a crash could take back.
 *
 * Who waits for them (a long poll, an event stream) does not sleep: its
 * HTTP connection is suspended and parked here (svc_events_park), and a
 * publish, its deadline (the timer thread) or the shutdown wakes it, under
 * the ring's lock, so a wake can neither be missed nor come twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/svc.h"

int svc_events_init(svc_t *d, uint64_t next)
{
    if ((d->ev = calloc(SVC_EVENTS, sizeof(*d->ev))) == NULL)
        return -1;
    d->ev_next = next;
    d->ev_first = next;
    d->ev_pub = next;
    pthread_mutex_init(&d->emu, NULL);
    {
        pthread_condattr_t a;

        if (pthread_condattr_init(&a) != 0 || pthread_condattr_setclock(&a, CLOCK_MONOTONIC) != 0 ||
            pthread_cond_init(&d->ew_cv, &a) != 0) {
            free(d->ev);
            d->ev = NULL;
            return -1;
        }
        pthread_condattr_destroy(&a);
    }
    return 0;
}

/* Under d->emu: wake every parked waiter whose condition holds (now < 0:
 * no deadline has passed). */
static void wake_ready(svc_t *d, double now)
{
    svc_ewait_t *w = d->ew_head, *next;

    for (; w != NULL; w = next) {
        next = w->next;
        if (w->since < d->ev_pub || d->ev_stop || (now >= 0 && now >= w->deadline)) {
            if (w->prev != NULL)
                w->prev->next = w->next;
            else
                d->ew_head = w->next;
            if (w->next != NULL)
                w->next->prev = w->prev;
            w->prev = w->next = NULL;
            w->parked = false;
            d->ew_n--;
            w->wake(w);
        }
    }
}

bool svc_events_park(svc_t *d, svc_ewait_t *w, void (*suspend)(void *arg))
{
    pthread_mutex_lock(&d->emu);
    if (w->since < d->ev_pub || d->ev_stop || svc_mono() >= w->deadline) {
        pthread_mutex_unlock(&d->emu);
        return false;
    }
    suspend(w->arg);
    w->prev = NULL;
    w->next = d->ew_head;
    if (d->ew_head != NULL)
        d->ew_head->prev = w;
    d->ew_head = w;
    w->parked = true;
    d->ew_n++;
    if (w->deadline < d->ew_at)
        pthread_cond_signal(&d->ew_cv);   /* earlier than the timer's next wake */
    pthread_mutex_unlock(&d->emu);
    return true;
}

int svc_events_parked(svc_t *d)
{
    int n;

    pthread_mutex_lock(&d->emu);
    n = d->ew_n;
    pthread_mutex_unlock(&d->emu);
    return n;
}

static void *timer(void *arg)
{
    svc_t *d = arg;

    pthread_mutex_lock(&d->emu);
    while (d->ew_run) {
        double now = svc_mono(), at = now + 1.0;
        const svc_ewait_t *w;
        struct timespec ts;

        wake_ready(d, now);
        for (w = d->ew_head; w != NULL; w = w->next)
            if (w->deadline < at)
                at = w->deadline;
        d->ew_at = at;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        at -= now;
        ts.tv_sec += (time_t)at;
        ts.tv_nsec += (long)((at - (double)(time_t)at) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&d->ew_cv, &d->emu, &ts);
    }
    pthread_mutex_unlock(&d->emu);
    return NULL;
}

int svc_events_timer_start(svc_t *d)
{
    pthread_mutex_lock(&d->emu);
    d->ew_run = true;
    d->ew_at = 0;
    pthread_mutex_unlock(&d->emu);
    if (pthread_create(&d->ew_th, NULL, timer, d) != 0) {
        d->ew_run = false;
        return -1;
    }
    return 0;
}

void svc_events_timer_stop(svc_t *d)
{
    pthread_mutex_lock(&d->emu);
    if (!d->ew_run) {
        pthread_mutex_unlock(&d->emu);
        return;
    }
    d->ew_run = false;
    pthread_cond_signal(&d->ew_cv);
    pthread_mutex_unlock(&d->emu);
    pthread_join(d->ew_th, NULL);
}

void svc_events_free(svc_t *d)
{
    if (d->ev == NULL)
        return;
    free(d->ev);
    d->ev = NULL;
    pthread_mutex_destroy(&d->emu);
    pthread_cond_destroy(&d->ew_cv);
}

void svc_event_add(svc_t *d, const char *job, const char *state, double t)
{
    svc_event_t *e;

    pthread_mutex_lock(&d->emu);
    e = &d->ev[d->ev_next % SVC_EVENTS];
    e->seq = d->ev_next++;
    e->t = t;
    snprintf(e->job, sizeof(e->job), "%s", job);
    snprintf(e->state, sizeof(e->state), "%s", state);
    if (d->ev_next - d->ev_first > SVC_EVENTS)
        d->ev_first = d->ev_next - SVC_EVENTS;
    pthread_mutex_unlock(&d->emu);
    (void)svc_store_event(d->store, e->seq, job, state, t);
}

void svc_events_publish(svc_t *d)
{
    pthread_mutex_lock(&d->emu);
    if (d->ev_pub != d->ev_next) {
        d->ev_pub = d->ev_next;
        wake_ready(d, -1);
    }
    pthread_mutex_unlock(&d->emu);
}

void svc_events_publish_to(svc_t *d, uint64_t next)
{
    pthread_mutex_lock(&d->emu);
    if (next > d->ev_pub && next <= d->ev_next) {
        d->ev_pub = next;
        wake_ready(d, -1);
    }
    pthread_mutex_unlock(&d->emu);
}

uint64_t svc_events_next(svc_t *d)
{
    uint64_t n;

    pthread_mutex_lock(&d->emu);
    n = d->ev_next;
    pthread_mutex_unlock(&d->emu);
    return n;
}

void svc_events_wake(svc_t *d)
{
    pthread_mutex_lock(&d->emu);
    d->ev_stop = true;
    wake_ready(d, -1);
    pthread_mutex_unlock(&d->emu);
}

char *svc_events_get(svc_t *d, uint64_t since, long limit)
{
    json_t *o = json_object(), *arr = json_array();
    uint64_t s;
    char *out = NULL;
    bool truncated = false;

    if (o == NULL || arr == NULL) {
        json_decref(o);
        json_decref(arr);
        return NULL;
    }
    pthread_mutex_lock(&d->emu);
    if (since < d->ev_first) {
        truncated = since + 1 < d->ev_first;   /* since 0 and 1 both mean "from the start" */
        since = d->ev_first;
    }
    for (s = since; s < d->ev_pub && limit > 0; s++, limit--) {
        const svc_event_t *e = &d->ev[s % SVC_EVENTS];

        json_array_append_new(arr, json_pack("{s:I,s:f,s:s,s:s}", "seq", (json_int_t)e->seq, "t", e->t,
                                             "job", e->job, "state", e->state));
    }
    json_object_set_new(o, "next", json_integer((json_int_t)s));
    pthread_mutex_unlock(&d->emu);
    json_object_set_new(o, "events", arr);
    if (truncated)
        json_object_set_new(o, "truncated", json_true());
    out = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return out;
}
