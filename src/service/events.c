/* events.c - job state changes for GET /v1/events: a ring of the last
 * SVC_EVENTS events in memory (the store keeps all of them). The loop adds
 * events while it handles a batch and publishes them after the batch's
 * commit, so a client never sees an event that a crash could take back.
 */
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
    pthread_cond_init(&d->ecv, NULL);
    return 0;
}

void svc_events_free(svc_t *d)
{
    if (d->ev == NULL)
        return;
    free(d->ev);
    d->ev = NULL;
    pthread_mutex_destroy(&d->emu);
    pthread_cond_destroy(&d->ecv);
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
        pthread_cond_broadcast(&d->ecv);
    }
    pthread_mutex_unlock(&d->emu);
}

void svc_events_publish_to(svc_t *d, uint64_t next)
{
    pthread_mutex_lock(&d->emu);
    if (next > d->ev_pub && next <= d->ev_next) {
        d->ev_pub = next;
        pthread_cond_broadcast(&d->ecv);
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
    pthread_cond_broadcast(&d->ecv);
    pthread_mutex_unlock(&d->emu);
}

char *svc_events_get(svc_t *d, uint64_t since, double timeout_s, long limit)
{
    struct timespec until;
    json_t *o = json_object(), *arr = json_array();
    uint64_t s;
    char *out = NULL;
    bool truncated = false;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)timeout_s;
    until.tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&d->emu);
    while (d->ev_pub <= since && !d->ev_stop)
        if (pthread_cond_timedwait(&d->ecv, &d->emu, &until) != 0)
            break;
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
