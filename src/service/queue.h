/* queue.h - private to migschedd: the one queue type every hand-off
 * between its threads uses (queue.c): the loop's messages, the syncer's
 * tickets, the staged plans, the executor's plans, the extender workers'
 * requests.
 *
 * An intrusive FIFO: an item embeds an svc_qlink_t and is never copied or
 * allocated by the queue, so a push cannot fail for want of memory. A mutex
 * and a condition variable (CLOCK_MONOTONIC) make it safe between threads;
 * the mutex is a leaf: nothing else is locked while it is held, and nothing
 * is called. Closing refuses new items (push returns -1, the caller keeps
 * the item) and wakes every waiter; what was queued before stays for the
 * consumers to take or for the owner to drain.
 *
 * Any thread.
 */
#ifndef MIGSCHED_SVC_QUEUE_H
#define MIGSCHED_SVC_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct svc_qlink {
    struct svc_qlink *next;
} svc_qlink_t;

typedef struct svc_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;             /* an item arrived, or the queue closed */
    svc_qlink_t *head, *tail;
    size_t n;
    bool closed;
} svc_queue_t;

/* The item of type T whose member M is link l. */
#define SVC_QITEM(l, T, M) ((T *)(void *)((char *)(l) - offsetof(T, M)))

/* 0, or -1 out of resources. */
int svc_queue_init(svc_queue_t *q);
void svc_queue_destroy(svc_queue_t *q);
/* Append l; wakes one waiter. 0, or -1 when the queue is closed (l is not
 * queued and stays the caller's). */
int svc_queue_push(svc_queue_t *q, svc_qlink_t *l);
/* The first item, waiting for one; NULL once the queue is closed and
 * empty (items queued before the close are still handed out). */
svc_qlink_t *svc_queue_pop(svc_queue_t *q);
/* Every queued item as one chain (linked by next, in order), waiting at
 * most timeout_s seconds for the first (< 0: without limit, 0: not at all).
 * NULL when none came; *closed (may be NULL) tells whether the queue is
 * closed. */
svc_qlink_t *svc_queue_take(svc_queue_t *q, double timeout_s, bool *closed);
/* Refuse new items and wake every waiter. */
void svc_queue_close(svc_queue_t *q);
/* Whatever is queued, as one chain, without waiting. */
svc_qlink_t *svc_queue_drain(svc_queue_t *q);
size_t svc_queue_len(svc_queue_t *q);

#endif
