/* test_events.c - the event ring (src/service/events.c): an event is seen
 * only once published (after its commit's fsync), in order, from any
 * sequence number; a ring that wrapped says so; a waiter parked on it is
 * woken exactly once, by a publish, its deadline (on the daemon's clock,
 * here a fake one) or the shutdown, and is never parked when its answer is
 * already there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/svc.h"

typedef struct ring {
    char dir[64];
    svc_t d;
} ring_t;

static int setup(void **state)
{
    ring_t *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return -1;
    snprintf(r->dir, sizeof(r->dir), "/tmp/ms-ev-XXXXXX");
    if (mkdtemp(r->dir) == NULL || svc_store_open(&r->d.store, r->dir) != 0 || svc_events_init(&r->d, 1) != 0)
        return -1;
    r->d.clock = &svc_clock_real;
    *state = r;
    return svc_store_begin(r->d.store);
}

static int teardown(void **state)
{
    ring_t *r = *state;
    char cmd[96];

    svc_store_rollback(r->d.store);
    svc_store_close(r->d.store);
    svc_events_free(&r->d);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
    free(r);
    return system(cmd) == 0 ? 0 : -1;
}

static json_t *get(svc_t *d, uint64_t since, long limit)
{
    char *s = svc_events_get(d, since, limit);
    json_t *o;

    assert_non_null(s);
    o = json_loads(s, 0, NULL);
    free(s);
    assert_non_null(o);
    return o;
}

static void test_published_only(void **state)
{
    ring_t *r = *state;
    json_t *o, *ev;

    svc_event_add(&r->d, "j1", "queued", NULL, 10.0);
    svc_event_add(&r->d, "j1", "starting", NULL, 10.5);
    svc_event_add(&r->d, "j2", "queued", NULL, 11.0);
    assert_int_equal(svc_events_next(&r->d), 4);
    o = get(&r->d, 0, 100);
    assert_int_equal(json_array_size(json_object_get(o, "events")), 0);   /* not durable yet */
    assert_int_equal(json_integer_value(json_object_get(o, "next")), 1);
    json_decref(o);
    svc_events_publish_to(&r->d, 3);   /* the first two are */
    o = get(&r->d, 0, 100);
    ev = json_object_get(o, "events");
    assert_int_equal(json_array_size(ev), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ev, 0), "seq")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 1), "state")), "starting");
    assert_int_equal(json_integer_value(json_object_get(o, "next")), 3);
    json_decref(o);
    svc_events_publish_to(&r->d, 2);   /* backwards: nothing changes */
    svc_events_publish_to(&r->d, 99);  /* beyond what was added: nothing changes */
    o = get(&r->d, 2, 1);
    ev = json_object_get(o, "events");
    assert_int_equal(json_array_size(ev), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "job")), "j1");
    json_decref(o);
}

static void test_wrapped_ring_says_so(void **state)
{
    ring_t *r = *state;
    json_t *o;
    int i;

    for (i = 0; i < SVC_EVENTS + 10; i++)
        svc_event_add(&r->d, "j", "queued", NULL, (double)i);
    svc_events_publish_to(&r->d, svc_events_next(&r->d));
    o = get(&r->d, 1, 5);
    assert_true(json_is_true(json_object_get(o, "truncated")));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(o, "events"), 0), "seq")), 11);
    json_decref(o);
    o = get(&r->d, 11, 5);
    assert_null(json_object_get(o, "truncated"));
    json_decref(o);
}

typedef struct waiter {
    svc_ewait_t w;
    int suspended, woken;
} waiter_t;

static void suspend(void *arg)
{
    ((waiter_t *)arg)->suspended++;
}

static void wake(svc_ewait_t *w)
{
    ((waiter_t *)w->arg)->woken++;
}

static void waiter_init(waiter_t *x, uint64_t since, double deadline)
{
    memset(x, 0, sizeof(*x));
    x->w.since = since;
    x->w.deadline = deadline;
    x->w.wake = wake;
    x->w.arg = x;
}

static void test_parked_waiters_wake_once(void **state)
{
    ring_t *r = *state;
    waiter_t a, b, c, late;

    svc_event_add(&r->d, "j", "queued", NULL, 1.0);
    svc_events_publish_to(&r->d, 2);
    /* answered already: never parked */
    waiter_init(&late, 1, 100.0);
    assert_false(svc_events_park(&r->d, &late.w, suspend, 50.0));
    assert_int_equal(late.suspended, 0);
    waiter_init(&late, 2, 100.0);
    assert_false(svc_events_park(&r->d, &late.w, suspend, 100.0));   /* its deadline is now */
    /* a waits for an event, b for its deadline at 60, c for the shutdown */
    waiter_init(&a, 2, 100.0);
    waiter_init(&b, 2, 60.0);
    waiter_init(&c, 10, 1000.0);   /* an event far ahead */
    assert_true(svc_events_park(&r->d, &a.w, suspend, 50.0));
    assert_true(svc_events_park(&r->d, &b.w, suspend, 50.0));
    assert_true(svc_events_park(&r->d, &c.w, suspend, 50.0));
    assert_int_equal(a.suspended + b.suspended + c.suspended, 3);
    assert_int_equal(svc_events_parked(&r->d), 3);
    pthread_mutex_lock(&r->d.ev.mu);
    assert_true(svc_events_expire(&r->d, 59.0) == 60.0);   /* the earliest deadline */
    assert_int_equal(b.woken, 0);
    assert_true(svc_events_expire(&r->d, 60.0) <= 61.0);
    pthread_mutex_unlock(&r->d.ev.mu);
    assert_int_equal(b.woken, 1);
    assert_false(b.w.parked);
    svc_event_add(&r->d, "j", "running", NULL, 2.0);
    assert_int_equal(a.woken, 0);   /* added is not published */
    svc_events_publish_to(&r->d, 3);
    assert_int_equal(a.woken, 1);
    assert_int_equal(c.woken, 0);
    svc_events_wake(&r->d);
    assert_int_equal(c.woken, 1);
    assert_int_equal(a.woken + b.woken + c.woken, 3);   /* once each */
    assert_int_equal(svc_events_parked(&r->d), 0);
    waiter_init(&late, 3, 1000.0);
    assert_false(svc_events_park(&r->d, &late.w, suspend, 50.0));   /* stopping */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_published_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapped_ring_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parked_waiters_wake_once, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
