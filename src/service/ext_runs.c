/* ext_runs.c - a bind's wait for its instance (ext_bind.c), without naps:
 * the loop thread says when a job left STARTING (svc_job_sync ->
 * svc_ext_job_moved -> svc_ext_runs_moved), and the workers whose binds
 * wait (svc_ext_runs_wait) ask the loop again at once instead of after a
 * nap of 2 to 50 ms. The wait reads the job's state through the loop as
 * before (the answer still comes once what it shows is durable); this
 * only says when to ask. A generation counter under a mutex: a worker
 * takes it before it asks, and waits only while it has not moved, so a
 * change between its question and its wait is not missed. The loop
 * signals only while some bind waits, and wakes every waiting bind (a
 * bind pool's worth at most), each of which asks about its own job.
 * Made and freed on the main thread (svc_ext_init, svc_ext_free).
 */
#include <errno.h>
#include <time.h>

#include "service/extender_int.h"

int svc_ext_runs_init(svc_ext_runs_t *r)
{
    pthread_condattr_t ca;

    atomic_init(&r->waiters, 0);
    r->gen = 0;
    if (pthread_mutex_init(&r->mu, NULL) != 0)
        return -1;
    if (pthread_condattr_init(&ca) != 0)
        goto fail_mu;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&r->cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail_mu;
    }
    pthread_condattr_destroy(&ca);
    return 0;
fail_mu:
    pthread_mutex_destroy(&r->mu);
    return -1;
}

void svc_ext_runs_free(svc_ext_runs_t *r)
{
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

/* The loop thread. */
void svc_ext_runs_moved(svc_ext_runs_t *r)
{
    if (atomic_load(&r->waiters) == 0)
        return;
    pthread_mutex_lock(&r->mu);
    r->gen++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The workers: enter before the first question, leave after the last. */
void svc_ext_runs_enter(svc_ext_runs_t *r)
{
    atomic_fetch_add(&r->waiters, 1);
}

void svc_ext_runs_leave(svc_ext_runs_t *r)
{
    atomic_fetch_sub(&r->waiters, 1);
}

uint64_t svc_ext_runs_gen(svc_ext_runs_t *r)
{
    uint64_t g;

    pthread_mutex_lock(&r->mu);
    g = r->gen;
    pthread_mutex_unlock(&r->mu);
    return g;
}

/* Until the generation moves past gen (true: moved already, or woken by
 * the move), or max_s seconds (false; a bound: a state the loop changed
 * without svc_job_sync is still seen, max_s late). */
bool svc_ext_runs_wait(svc_ext_runs_t *r, uint64_t gen, double max_s)
{
    struct timespec until;
    bool moved;
    int rc = 0;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)max_s;
    until.tv_nsec += (long)((max_s - (double)(time_t)max_s) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->mu);
    while (r->gen == gen && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&r->cv, &r->mu, &until);
    moved = r->gen != gen && rc != ETIMEDOUT;
    pthread_mutex_unlock(&r->mu);
    return moved;
}
