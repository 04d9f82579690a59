/* test_syncer.c - the syncer thread (src/service/syncer.c) and the reply
 * path of the message table (call.c): tickets are released in the order the
 * loop committed them, after an fsync that covers them (one fsync for all
 * that waited: group commit); within a ticket the job views and events are
 * installed before any answer goes out, and its plans reach the executor's
 * queue in order; a svc_call waiter and a svc_call_async callback both get
 * their answer; closing the queue lets the syncer release what is left and
 * end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/svc.h"

#define N 2000

typedef struct rec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int order[N + 8];
    int n;
    bool view_first;               /* each answer saw its ticket's view installed */
    svc_job_t *job;
} rec_t;

typedef struct sync_fx {
    char dir[64];
    svc_t d;
    rec_t rec;
} sync_fx_t;

static void on_reply(svc_msg_t *m)
{
    rec_t *r = m->reply_arg;

    pthread_mutex_lock(&r->mu);
    if (r->job != NULL && m->idx == 1)
        r->view_first = r->job->published && r->job->pub.state == MS_JOB_RUNNING;
    r->order[r->n++] = m->idx;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    svc_msg_free(m);
}

static svc_msg_t *msg(sync_fx_t *f, int idx)
{
    svc_msg_t *m = calloc(1, sizeof(*m));

    assert_non_null(m);
    m->kind = SVC_M_LIST;
    m->idx = idx;
    m->on_reply = on_reply;
    m->reply_arg = &f->rec;
    return m;
}

static svc_ticket_t *ticket(uint64_t need, svc_msg_t *m)
{
    svc_ticket_t *t = calloc(1, sizeof(*t));

    assert_non_null(t);
    t->need = need;
    t->msgs = m != NULL ? &m->link : NULL;
    return t;
}

static int setup(void **state)
{
    sync_fx_t *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/ms-sync-XXXXXX");
    if (mkdtemp(f->dir) == NULL || svc_store_open(&f->d.store, f->dir) != 0 || svc_init(&f->d) != 0 ||
        svc_events_init(&f->d, 1) != 0)
        return -1;
    pthread_mutex_init(&f->rec.mu, NULL);
    pthread_cond_init(&f->rec.cv, NULL);
    if (pthread_create(&f->d.sync.th, NULL, svc_syncer_main, &f->d) != 0)
        return -1;
    f->d.sync.running = true;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    sync_fx_t *f = *state;
    char cmd[96];

    svc_stop(&f->d);
    svc_fini(&f->d);
    svc_store_close(f->d.store);
    pthread_mutex_destroy(&f->rec.mu);
    pthread_cond_destroy(&f->rec.cv);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    free(f);
    return system(cmd) == 0 ? 0 : -1;
}

static void wait_for(rec_t *r, int n)
{
    pthread_mutex_lock(&r->mu);
    while (r->n < n)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

/* Views, events and plans before answers; plans in order. */
static void test_ticket_contents(void **state)
{
    sync_fx_t *f = *state;
    svc_job_t *j = calloc(1, sizeof(*j));
    svc_xplan_t *p1 = calloc(1, sizeof(*p1)), *p2 = calloc(1, sizeof(*p2));
    svc_ticket_t *t;
    svc_qlink_t *l;

    assert_non_null(j);
    assert_non_null(p1);
    assert_non_null(p2);
    assert_non_null(j->id = strdup("j"));
    j->state = MS_JOB_RUNNING;
    f->rec.job = j;
    p1->plan_id = 1;
    p2->plan_id = 2;
    assert_int_equal(svc_store_begin(f->d.store), 0);
    svc_event_add(&f->d, "j", "running", NULL, 1.0);
    assert_int_equal(svc_store_commit(f->d.store), 0);
    t = ticket(1, msg(f, 1));
    assert_non_null(t->pj = malloc(sizeof(*t->pj)));
    assert_non_null(t->pv = malloc(sizeof(*t->pv)));
    t->pj[0] = j;
    assert_int_equal(svc_jview_of(j, &t->pv[0]), 0);
    t->npub = 1;
    t->ev_next = svc_events_next(&f->d);
    p1->link.next = &p2->link;
    p2->link.next = NULL;
    t->plans = &p1->link;
    assert_int_equal(svc_queue_push(&f->d.sync.q, &t->link), 0);
    wait_for(&f->rec, 1);
    assert_true(f->rec.view_first);
    assert_int_equal(f->d.ev.pub, 2);
    assert_true(f->d.sync.synced >= 1);
    assert_true(atomic_load(&f->d.met.syncs) >= 1);
    l = svc_queue_drain(&f->d.exec.q);
    assert_ptr_equal(l, &p1->link);
    assert_ptr_equal(l->next, &p2->link);
    svc_xplan_free_chain(l);
    svc_job_free(j);
}

/* N tickets pushed back to back come out in order; far fewer fsyncs than
 * tickets are allowed, never more than the commits they cover. */
static void test_release_order(void **state)
{
    sync_fx_t *f = *state;
    int i;

    for (i = 0; i < N; i++)
        assert_int_equal(svc_queue_push(&f->d.sync.q, &ticket((uint64_t)(i / 2 + 1), msg(f, i))->link), 0);
    wait_for(&f->rec, N);
    for (i = 0; i < N; i++)
        assert_int_equal(f->rec.order[i], i);
    assert_true(atomic_load(&f->d.met.syncs) >= 1);
    assert_true(atomic_load(&f->d.met.syncs) <= N / 2);
    assert_int_equal(f->d.sync.synced, N / 2);
}

typedef struct caller {
    svc_t *d;
    svc_msg_t *m;
} caller_t;

static void *call_it(void *arg)
{
    caller_t *c = arg;

    svc_call(c->d, c->m);
    return NULL;
}

/* A thread blocked in svc_call is answered through its ticket; one that
 * posts after the loop's queue closed gets 503 at once. */
static void test_call_waits_for_its_ticket(void **state)
{
    sync_fx_t *f = *state;
    caller_t c = { &f->d, calloc(1, sizeof(svc_msg_t)) };
    pthread_t th;
    svc_qlink_t *l = NULL;

    assert_non_null(c.m);
    c.m->kind = SVC_M_READY;
    assert_int_equal(pthread_create(&th, NULL, call_it, &c), 0);
    while ((l = svc_queue_take(&f->d.loop.q, 0.01, NULL)) == NULL)   /* the loop's part */
        ;
    assert_ptr_equal(l, &c.m->link);
    c.m->status = 299;
    assert_int_equal(svc_queue_push(&f->d.sync.q, &ticket(0, c.m)->link), 0);
    pthread_join(th, NULL);
    assert_int_equal(c.m->status, 299);
    svc_msg_free(c.m);
    svc_queue_close(&f->d.loop.q);
    c.m = calloc(1, sizeof(svc_msg_t));
    assert_non_null(c.m);
    svc_call(&f->d, c.m);
    assert_int_equal(c.m->status, 503);
    svc_msg_free(c.m);
    c.m = msg(f, 7);
    assert_int_equal(svc_call_async(&f->d, c.m, on_reply, &f->rec), -1);
    svc_msg_free(c.m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ticket_contents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_waits_for_its_ticket, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
