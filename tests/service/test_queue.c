/* test_queue.c - the queue every hand-off between migschedd's threads uses
 * (src/service/queue.c): first in, first out, for one consumer and across
 * producers; a close refuses new items, hands out what was queued, and
 * wakes a consumer blocked on an empty queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "service/queue.h"

typedef struct item {
    svc_qlink_t link;
    int producer, seq;
} item_t;

static void test_fifo_and_close(void **state)
{
    svc_queue_t q;
    item_t it[5];
    svc_qlink_t *l;
    bool closed = true;
    int i;

    (void)state;
    assert_int_equal(svc_queue_init(&q), 0);
    assert_null(svc_queue_take(&q, 0, &closed));
    assert_false(closed);
    assert_null(svc_queue_take(&q, 0.01, &closed));   /* a bounded wait on nothing */
    for (i = 0; i < 5; i++) {
        it[i].seq = i;
        assert_int_equal(svc_queue_push(&q, &it[i].link), 0);
    }
    assert_int_equal(svc_queue_len(&q), 5);
    l = svc_queue_pop(&q);
    assert_ptr_equal(l, &it[0].link);
    l = svc_queue_take(&q, -1, &closed);   /* the rest, in order, as one chain */
    for (i = 1; i < 5; i++, l = l->next)
        assert_ptr_equal(SVC_QITEM(l, item_t, link), &it[i]);
    assert_null(l);
    assert_int_equal(svc_queue_len(&q), 0);
    /* closed: pushes refused, what was queued still handed out, then NULL */
    assert_int_equal(svc_queue_push(&q, &it[0].link), 0);
    svc_queue_close(&q);
    assert_int_equal(svc_queue_push(&q, &it[1].link), -1);
    assert_ptr_equal(svc_queue_pop(&q), &it[0].link);
    assert_null(svc_queue_pop(&q));
    assert_null(svc_queue_take(&q, -1, &closed));
    assert_true(closed);
    svc_queue_destroy(&q);
}

#define PRODUCERS 4
#define PER 20000

typedef struct prod {
    svc_queue_t *q;
    item_t *items;
    int id;
} prod_t;

static void *produce(void *arg)
{
    prod_t *p = arg;
    int i;

    for (i = 0; i < PER; i++) {
        p->items[i].producer = p->id;
        p->items[i].seq = i;
        if (svc_queue_push(p->q, &p->items[i].link) != 0)
            abort();
    }
    return NULL;
}

/* Many producers, one consumer taking one or all at a time: nothing lost,
 * nothing twice, each producer's items in its order. */
static void test_producers_keep_their_order(void **state)
{
    svc_queue_t q;
    pthread_t th[PRODUCERS];
    prod_t p[PRODUCERS];
    int next[PRODUCERS] = { 0 }, got = 0, k;

    (void)state;
    assert_int_equal(svc_queue_init(&q), 0);
    for (k = 0; k < PRODUCERS; k++) {
        p[k].q = &q;
        p[k].id = k;
        assert_non_null(p[k].items = calloc(PER, sizeof(item_t)));
        assert_int_equal(pthread_create(&th[k], NULL, produce, &p[k]), 0);
    }
    while (got < PRODUCERS * PER) {
        bool one = got % 3 == 0;
        svc_qlink_t *l = one ? svc_queue_pop(&q) : svc_queue_take(&q, -1, NULL), *n;

        for (; l != NULL; l = n) {
            item_t *it = SVC_QITEM(l, item_t, link);

            n = l->next;
            if (one && n != NULL)
                fail_msg("pop handed out a chain");
            assert_int_equal(it->seq, next[it->producer]);
            next[it->producer]++;
            got++;
        }
    }
    for (k = 0; k < PRODUCERS; k++) {
        pthread_join(th[k], NULL);
        assert_int_equal(next[k], PER);
        free(p[k].items);
    }
    assert_int_equal(svc_queue_len(&q), 0);
    svc_queue_destroy(&q);
}

static void *block_pop(void *arg)
{
    return svc_queue_pop(arg);
}

static void *block_take(void *arg)
{
    bool closed = false;
    svc_qlink_t *l = svc_queue_take(arg, -1, &closed);

    return l == NULL && closed ? arg : NULL;
}

/* A consumer waiting on an empty queue wakes at the close (the loop, the
 * syncer, the executor and the workers all stop this way). */
static void test_close_wakes_waiters(void **state)
{
    svc_queue_t q;
    pthread_t a, b;
    void *ra = (void *)1, *rb = NULL;

    (void)state;
    assert_int_equal(svc_queue_init(&q), 0);
    assert_int_equal(pthread_create(&a, NULL, block_pop, &q), 0);
    assert_int_equal(pthread_create(&b, NULL, block_take, &q), 0);
    usleep(20000);   /* let them block (the test holds without it: they see the close) */
    svc_queue_close(&q);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    assert_null(ra);
    assert_ptr_equal(rb, &q);
    svc_queue_destroy(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_and_close),
        cmocka_unit_test(test_producers_keep_their_order),
        cmocka_unit_test(test_close_wakes_waiters),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
