/* test_lease.c - leader election decisions against a fake API server that
 * holds one Lease with a resourceVersion (an update with a stale version is
 * refused, as the real one does): one leader at a time at every instant,
 * takeover after the leader dies within duration + retry, a partitioned
 * leader stops before anyone else starts, and a release hands over at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/lease.h"

typedef struct apisrv {
    ms_lease_record_t rec;
    long rv;                       /* 0: no Lease */
} apisrv_t;

typedef struct cand {
    ms_lease_t *l;
    bool alive, cut_off;           /* cut_off: its writes never arrive */
    double next;                   /* its next call */
    long became_leader;            /* count of false->true */
    bool was;
} cand_t;

#define DT 0.05

static void cand_init(cand_t *c, const char *id, double first)
{
    ms_lease_cfg_t cfg;

    ms_lease_cfg_defaults(&cfg);
    cfg.identity = id;
    memset(c, 0, sizeof(*c));
    assert_int_equal(ms_lease_create(&cfg, &c->l, NULL), MS_OK);
    c->alive = true;
    c->next = first;
}

/* one call of the driver loop at time t (mono = wall = t here) */
static void cand_run(cand_t *c, apisrv_t *s, double t)
{
    ms_lease_record_t seen, w;
    long rv_read;
    ms_lease_do_t d;

    if (!c->alive || t < c->next)
        return;
    c->next = t + 2.0;             /* retry_s */
    if (c->cut_off) {              /* the read fails too: nothing to decide on */
        return;
    }
    seen = s->rv ? s->rec : (ms_lease_record_t){ 0 };
    rv_read = s->rv;
    d = ms_lease_decide(c->l, &seen, t, t, &w);
    if (d == MS_LEASE_WAIT)
        return;
    /* the write: create only when absent, update only at the version read */
    if ((d == MS_LEASE_CREATE && s->rv == 0) || (d == MS_LEASE_UPDATE && s->rv == rv_read && rv_read)) {
        s->rec = w;
        s->rv++;
        ms_lease_written(c->l, true, t);
    } else {
        ms_lease_written(c->l, false, t);
    }
}

static void track(cand_t *c, double t)
{
    bool now = c->alive && ms_lease_is_leader(c->l, t);

    if (now && !c->was)
        c->became_leader++;
    c->was = now;
}

/* Three replicas that start together: exactly one leads; kill it; another
 * leads within duration + retry of the dead one's last renewal; never two
 * at once. */
static void test_takeover_single_leader(void **st)
{
    apisrv_t s = { { 0 }, 0 };
    cand_t c[3];
    double t, death = -1, last_renew = -1, taken = -1;
    int i, leader = -1;

    (void)st;
    cand_init(&c[0], "migschedd-a", 0.0);
    cand_init(&c[1], "migschedd-b", 0.0);
    cand_init(&c[2], "migschedd-c", 0.3);
    for (t = 0; t < 120; t += DT) {
        int nlead = 0;
        for (i = 0; i < 3; i++)
            cand_run(&c[i], &s, t);
        for (i = 0; i < 3; i++) {
            track(&c[i], t);
            if (c[i].was) {
                nlead++;
                if (death >= 0 && i != leader && taken < 0)
                    taken = t;
                if (death < 0)
                    leader = i;
            }
        }
        assert_true(nlead <= 1);
        if (t >= 40 && death < 0) {
            assert_true(leader >= 0);
            death = t;
            last_renew = s.rec.renew_t;
            c[leader].alive = false;     /* kill -9 */
        }
    }
    assert_true(taken > 0);
    print_message("takeover %.2f s after the last renewal\n", taken - last_renew);
    assert_true(taken - last_renew <= 10.0 + 2.0 + DT);
    assert_true(s.rec.transitions >= 1);
    for (i = 0; i < 3; i++)
        ms_lease_destroy(c[i].l);
}

/* The leader is cut off from the API server but keeps running: it must stop
 * acting before the standby may start. */
static void test_partitioned_leader_stops_first(void **st)
{
    apisrv_t s = { { 0 }, 0 };
    cand_t a, b;
    double t, a_stop = -1, b_start = -1;

    (void)st;
    cand_init(&a, "a", 0.0);
    cand_init(&b, "b", 1.0);
    for (t = 0; t < 80; t += DT) {
        cand_run(&a, &s, t);
        cand_run(&b, &s, t);
        track(&a, t);
        track(&b, t);
        assert_false(a.was && b.was);
        if (t >= 20 && !a.cut_off) {
            assert_true(a.was);
            a.cut_off = true;
        }
        if (a.cut_off && !a.was && a_stop < 0)
            a_stop = t;
        if (b.was && b_start < 0)
            b_start = t;
    }
    assert_true(a_stop > 0 && b_start > 0);
    assert_true(a_stop < b_start);
    ms_lease_destroy(a.l);
    ms_lease_destroy(b.l);
}

/* A leader that shuts down releases the Lease: the standby takes it at its
 * next call, not after a lease duration. */
static void test_release_hands_over(void **st)
{
    apisrv_t s = { { 0 }, 0 };
    cand_t a, b;
    ms_lease_record_t w;
    double t;

    (void)st;
    cand_init(&a, "a", 0.0);
    cand_init(&b, "b", 0.5);
    for (t = 0; t < 10; t += DT) {
        cand_run(&a, &s, t);
        cand_run(&b, &s, t);
    }
    assert_true(ms_lease_is_leader(a.l, t));
    assert_true(ms_lease_release(a.l, t, &w));
    assert_string_equal(w.holder, "");
    s.rec = w;
    s.rv++;
    a.alive = false;
    assert_false(ms_lease_is_leader(a.l, t));
    for (; t < 13; t += DT)
        cand_run(&b, &s, t);
    assert_true(ms_lease_is_leader(b.l, t));
    assert_string_equal(s.rec.holder, "b");
    assert_true(ms_lease_release(b.l, t, &w));
    ms_lease_destroy(a.l);
    ms_lease_destroy(b.l);
}

static void test_bad_config(void **st)
{
    ms_lease_cfg_t cfg;
    ms_lease_t *l;
    ms_diag_t d;
    char big[300];

    (void)st;
    ms_lease_cfg_defaults(&cfg);
    cfg.identity = "";
    assert_int_equal(ms_lease_create(&cfg, &l, &d), MS_EINVAL);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cfg.identity = big;
    assert_int_equal(ms_lease_create(&cfg, &l, &d), MS_EINVAL);
    cfg.identity = "a";
    cfg.renew_deadline_s = 12;                    /* >= duration */
    assert_int_equal(ms_lease_create(&cfg, &l, &d), MS_ERANGE);
    assert_string_equal(d.field, "duration_s");
    ms_lease_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_takeover_single_leader),
        cmocka_unit_test(test_partitioned_leader_stops_first),
        cmocka_unit_test(test_release_hands_over),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
