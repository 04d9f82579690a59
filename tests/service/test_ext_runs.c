/* test_ext_runs.c - ext_runs.c, the bind's wait for its instance: a bind
 * that waits is woken by the loop's move (not by its timer), a move
 * between its question and its wait is not missed, several waiting binds
 * are all woken by one move, and with no bind waiting the loop moves
 * nothing. The waits' bound is 60 s: a missing wake-up shows as a wait
 * that ended by its timer (a false), never as a time measured. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "service/extender_int.h"

#define BOUND_S 60.0
#define WAITERS 4

typedef struct waiter {
    svc_ext_runs_t *r;
    uint64_t gen;
    atomic_int *ready;
    bool woken;
    pthread_t th;
} waiter_t;

static void *wait_main(void *arg)
{
    waiter_t *w = arg;

    atomic_fetch_add(w->ready, 1);
    w->woken = svc_ext_runs_wait(w->r, w->gen, BOUND_S);
    svc_ext_runs_leave(w->r);
    return NULL;
}

/* The loop's side, once every waiter has entered and taken its
 * generation: a move, repeated until each has left (a waiter that had not
 * reached its wait yet sees the generation moved already). */
static void move_until_left(svc_ext_runs_t *r)
{
    while (atomic_load(&r->waiters) > 0) {
        svc_ext_runs_moved(r);
        sched_yield();
    }
}

static void test_woken_by_a_move(void **state)
{
    svc_ext_runs_t r;
    atomic_int ready;
    waiter_t w[WAITERS];
    int i;

    (void)state;
    assert_int_equal(svc_ext_runs_init(&r), 0);
    atomic_init(&ready, 0);
    for (i = 0; i < WAITERS; i++) {
        w[i].r = &r;
        w[i].ready = &ready;
        svc_ext_runs_enter(&r);
        w[i].gen = svc_ext_runs_gen(&r);
        assert_int_equal(pthread_create(&w[i].th, NULL, wait_main, &w[i]), 0);
    }
    while (atomic_load(&ready) < WAITERS)
        sched_yield();
    move_until_left(&r);
    for (i = 0; i < WAITERS; i++) {
        assert_int_equal(pthread_join(w[i].th, NULL), 0);
        if (!w[i].woken)
            fail_msg("waiter %d ended by its %.0f s bound, not by the move", i, BOUND_S);
    }
    assert_int_equal(atomic_load(&r.waiters), 0);
    svc_ext_runs_free(&r);
}

/* A move between the question and the wait: the wait returns at once. */
static void test_move_before_the_wait(void **state)
{
    svc_ext_runs_t r;
    uint64_t gen;

    (void)state;
    assert_int_equal(svc_ext_runs_init(&r), 0);
    svc_ext_runs_enter(&r);
    gen = svc_ext_runs_gen(&r);
    svc_ext_runs_moved(&r);   /* the job left STARTING after the answer */
    assert_true(svc_ext_runs_wait(&r, gen, BOUND_S));
    svc_ext_runs_leave(&r);
    svc_ext_runs_free(&r);
}

/* No bind waits: the loop's move costs nothing and moves nothing; a wait
 * with nothing to wake it ends by its bound (a short one here). */
static void test_nobody_waits(void **state)
{
    svc_ext_runs_t r;
    uint64_t gen;

    (void)state;
    assert_int_equal(svc_ext_runs_init(&r), 0);
    gen = svc_ext_runs_gen(&r);
    svc_ext_runs_moved(&r);
    assert_true(svc_ext_runs_gen(&r) == gen);
    assert_false(svc_ext_runs_wait(&r, gen, 0.01));
    svc_ext_runs_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_woken_by_a_move),
        cmocka_unit_test(test_move_before_the_wait),
        cmocka_unit_test(test_nobody_waits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
