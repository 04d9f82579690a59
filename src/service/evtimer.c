/* evtimer.c - the timer thread: wakes the waiters parked on the event ring
 * (long polls, event streams' heartbeats) at their deadlines
 * (svc_events_expire). It sleeps, holding nothing, until the earliest
 * deadline, at most a second; a waiter parked with an earlier one signals
 * it (svc_events_park). The ring's lock is held from the expiry to the
 * wait, so no such signal is missed. svc_evtimer_start/stop run on the
 * main thread.
 */
#include <time.h>

#include "daemon/daemon.h"
#include "service/svc.h"

static void *timer_main(void *arg)
{
    svc_t *d = arg;
    svc_events_t *e = &d->ev;

    pthread_mutex_lock(&e->mu);
    while (e->timer_run) {
        double now = svc_clock_mono(d->clock);
        struct timespec ts = ms_clock_after(CLOCK_MONOTONIC, svc_events_expire(d, now) - now);

        (void)pthread_cond_timedwait(&e->timer_cv, &e->mu, &ts);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

int svc_evtimer_start(svc_t *d)
{
    pthread_mutex_lock(&d->ev.mu);
    d->ev.timer_run = true;
    d->ev.timer_at = 0;
    pthread_mutex_unlock(&d->ev.mu);
    if (pthread_create(&d->ev.timer_th, NULL, timer_main, d) != 0) {
        d->ev.timer_run = false;
        return -1;
    }
    return 0;
}

void svc_evtimer_stop(svc_t *d)
{
    pthread_mutex_lock(&d->ev.mu);
    if (!d->ev.timer_run) {
        pthread_mutex_unlock(&d->ev.mu);
        return;
    }
    d->ev.timer_run = false;
    pthread_cond_signal(&d->ev.timer_cv);
    pthread_mutex_unlock(&d->ev.mu);
    pthread_join(d->ev.timer_th, NULL);
}
