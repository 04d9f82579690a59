/* queue.c - the queue type of every hand-off between migschedd's threads
 * (queue.h). Any thread.
 */
#include <errno.h>
#include <time.h>

#include "daemon/daemon.h"
#include "service/queue.h"

int svc_queue_init(svc_queue_t *q)
{
    pthread_condattr_t a;
    int rc;

    q->head = q->tail = NULL;
    q->n = 0;
    q->closed = false;
    if (pthread_mutex_init(&q->mu, NULL) != 0)
        return -1;
    if (pthread_condattr_init(&a) != 0) {
        pthread_mutex_destroy(&q->mu);
        return -1;
    }
    rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&q->cv, &a) == 0 ? 0 : -1;
    pthread_condattr_destroy(&a);
    if (rc != 0)
        pthread_mutex_destroy(&q->mu);
    return rc;
}

void svc_queue_destroy(svc_queue_t *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

int svc_queue_push(svc_queue_t *q, svc_qlink_t *l)
{
    pthread_mutex_lock(&q->mu);
    if (q->closed) {
        pthread_mutex_unlock(&q->mu);
        return -1;
    }
    l->next = NULL;
    if (q->tail != NULL)
        q->tail->next = l;
    else
        q->head = l;
    q->tail = l;
    q->n++;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

svc_qlink_t *svc_queue_pop(svc_queue_t *q)
{
    svc_qlink_t *l;

    pthread_mutex_lock(&q->mu);
    while (q->head == NULL && !q->closed)
        pthread_cond_wait(&q->cv, &q->mu);
    if ((l = q->head) != NULL) {
        q->head = l->next;
        if (q->head == NULL)
            q->tail = NULL;
        q->n--;
        l->next = NULL;
    }
    pthread_mutex_unlock(&q->mu);
    return l;
}

svc_qlink_t *svc_queue_take(svc_queue_t *q, double timeout_s, bool *closed)
{
    svc_qlink_t *l;

    pthread_mutex_lock(&q->mu);
    if (q->head == NULL && !q->closed && timeout_s != 0) {
        if (timeout_s < 0) {
            while (q->head == NULL && !q->closed)
                pthread_cond_wait(&q->cv, &q->mu);
        } else {
            /* a day at most: a longer wait is a bug, and the time cast stays small */
            struct timespec ts = ms_clock_after(CLOCK_MONOTONIC, timeout_s < 86400.0 ? timeout_s : 86400.0);

            while (q->head == NULL && !q->closed && pthread_cond_timedwait(&q->cv, &q->mu, &ts) != ETIMEDOUT)
                ;
        }
    }
    l = q->head;
    q->head = q->tail = NULL;
    q->n = 0;
    if (closed != NULL)
        *closed = q->closed;
    pthread_mutex_unlock(&q->mu);
    return l;
}

void svc_queue_close(svc_queue_t *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

svc_qlink_t *svc_queue_drain(svc_queue_t *q)
{
    return svc_queue_take(q, 0, NULL);
}

size_t svc_queue_len(svc_queue_t *q)
{
    size_t n;

    pthread_mutex_lock(&q->mu);
    n = q->n;
    pthread_mutex_unlock(&q->mu);
    return n;
}
