/* dra_msg.c - what every DRA thread shares (any thread): the messages to
 * the loop and the write jobs freed, a call to the loop that waits for its
 * answer (with a deadline: a caller that gives up leaves the message to
 * the loop, which frees it when it gets to it), a write handed to the
 * writers, and whether this replica leads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "service/dra_int.h"
#include "service/kctl.h"

double dra_lead_until(svc_dra_t *x)
{
    long long t = atomic_load(&x->takeover_us);
    const svc_kctl_t *c = atomic_load(&x->d->kctl);
    double until;

    if (c == NULL)
        return x->d->cfg->leader_elect ? 0 : INFINITY;
    until = svc_kctl_leader_until(c);
    /* kctl marks itself the leader only after the takeover returned: the
     * 3 s after it (or less: never past the Lease) count as leading */
    if (t > 0)
        until = fmax(until, fmin((double)t * 1e-6 + 3.0, svc_kctl_lease_until(c)));
    return until;
}

bool dra_leading(svc_dra_t *x, double now)
{
    return now < dra_lead_until(x);
}

void dra_msg_free(dra_msg_t *m)
{
    int i;

    if (m == NULL)
        return;
    switch (m->okind) {
    case DRA_K_SLICE: dra_slice_free(m->obj); break;
    case DRA_K_CLASS: dra_class_free(m->obj); break;
    case DRA_K_CLAIM: dra_claim_free(m->obj); break;
    case DRA_K_TMPL: dra_tmpl_free(m->obj); break;
    case DRA_K_POD: dra_pod_free(m->obj); break;
    default: break;
    }
    free(m->obj);
    free(m->key);
    dra_work_free(m->work);
    for (i = 0; i < m->nunknown; i++)
        free(m->unknown[i]);
    free(m->unknown);
    free(m->body);
    if (m->review != NULL) {
        dra_review_free(m->review);
        free(m->review);
    }
    free(m);
}

void dra_work_free(dra_work_t *w)
{
    int i;

    if (w == NULL)
        return;
    for (i = 0; i < w->ncl; i++) {
        free(w->cl[i].ns);
        free(w->cl[i].name);
        free(w->cl[i].uid);
        free(w->cl[i].rv);
        json_decref(w->cl[i].meta);
        json_decref(w->cl[i].alloc);
    }
    free(w->cl);
    free(w->pod_uid);
    free(w->pod_ns);
    free(w->pod_name);
    free(w->pod_rv);
    for (i = 0; i < w->ngates; i++)
        free(w->gates[i]);
    free(w->gates);
    free(w->path);
    free(w->body);
    json_decref(w->patch);
    free(w->claim_uid);
    free(w);
}

void dra_write_push(svc_dra_t *x, dra_work_t *w)
{
    if (svc_queue_push(&x->wq, &w->link) != 0)
        dra_work_free(w);   /* stopping: nothing more is written */
}

static void waiter_free(dra_waiter_t *w)
{
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

static dra_waiter_t *waiter_new(void)
{
    dra_waiter_t *w = calloc(1, sizeof(*w));
    pthread_condattr_t ca;
    int rc;

    if (w == NULL)
        return NULL;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        return NULL;
    }
    if (pthread_condattr_init(&ca) != 0) {
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) {
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

int dra_call_within(svc_dra_t *x, dra_msg_t *m, double timeout_s)
{
    dra_waiter_t *w = waiter_new();
    struct timespec until = ms_clock_after(CLOCK_MONOTONIC, timeout_s);
    double end = ms_clock_mono() + timeout_s;
    bool answered;

    if (w == NULL)
        return -1;
    m->waiter = w;
    if (svc_queue_push(&x->q, &m->link) != 0) {
        m->waiter = NULL;
        waiter_free(w);
        return -1;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        if (timeout_s < 0)
            pthread_cond_wait(&w->cv, &w->mu);
        else if (pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0 && !w->done && ms_clock_mono() >= end)
            break;
    answered = w->done;
    if (!answered)
        w->abandoned = true;   /* m and w are the loop's from here: dra_msg_answer frees them */
    pthread_mutex_unlock(&w->mu);
    if (!answered)
        return 1;
    m->waiter = NULL;
    waiter_free(w);
    return 0;
}

int dra_call(svc_dra_t *x, dra_msg_t *m)
{
    return dra_call_within(x, m, -1);
}

void dra_msg_answer(dra_msg_t *m)
{
    dra_waiter_t *w = m->waiter;
    bool gone;

    pthread_mutex_lock(&w->mu);
    gone = w->abandoned;
    if (!gone) {
        /* under w's lock: the caller cannot return (and free w and m)
         * before the signal; neither is touched after the unlock */
        w->done = true;
        pthread_cond_signal(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    if (gone) {   /* the caller left at its deadline: nobody else holds either */
        m->waiter = NULL;
        waiter_free(w);
        dra_msg_free(m);
    }
}
