/* test_queue.c - the queue disciplines of ms_sched: EASY reservations are
 * never delayed by a backfilled job when estimates are exact (a property
 * over random traces and policies), the reservation test itself on a hand
 * example, aging bounds the wait of a job that unbounded backfilling
 * starves, and the options by name.
 *
 * A small event driver (arrivals from a list, completions at start +
 * duration, completions first at equal times) runs ms_sched directly, so
 * the estimates the scheduler sees are exactly the run times.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/rng.h"
#include "migsched/sched.h"

#define MAXJ 400

typedef struct drv {
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
    int n;                         /* jobs */
    int next;                      /* the next arrival */
    double arr[MAXJ], dur[MAXJ];
    const char *prof[MAXJ];
    int gang[MAXJ];
    int32_t slot[MAXJ];            /* -1 before arrival or rejected */
    int32_t by_slot[MAXJ];         /* slot -> job */
    double start[MAXJ], end[MAXJ]; /* start NAN until started */
    double resv[MAXJ];             /* first reservation made for it, NAN = none */
    long moves;
} drv_t;

static ms_status_t drv_plan(void *ctx, const ms_sched_plan_t *p)
{
    drv_t *d = ctx;
    int i;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        if (op->kind == MS_OP_MOVE)
            d->moves++;
        if (op->kind == MS_OP_START) {
            int j = d->by_slot[op->job];

            if (isnan(d->start[j])) {
                d->start[j] = p->now;
                d->end[j] = p->now + d->dur[j];
            }
        }
    }
    return MS_OK;
}

static void drv_make(drv_t *d, const char *pol, const char *node, ms_queue_mode_t q,
                     double bound, double aging)
{
    ms_sched_cfg_t cfg;
    ms_sched_exec_t ex;
    ms_diag_t dg;
    int i;

    assert_int_equal(ms_cluster_spec_create(&d->cs), MS_OK);
    assert_int_equal(ms_cluster_spec_add(d->cs, node, 0, &dg), MS_OK);
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find(pol);
    assert_non_null(cfg.policy);
    cfg.pcfg.migration = false;      /* moves would change the reserved GPU */
    cfg.nodes = ms_cluster_spec_nodes(d->cs);
    cfg.nnodes = ms_cluster_spec_nnodes(d->cs);
    cfg.queue = q;
    cfg.backfill_bound_s = bound;
    cfg.aging_rate = aging;
    ex.ctx = d;
    ex.plan = drv_plan;
    cfg.exec = ex;
    ms_diag_clear(&dg);
    if (ms_sched_create(&cfg, 0.0, &d->s, &dg) != MS_OK)
        fail_msg("ms_sched_create: %s", dg.msg);
    for (i = 0; i < MAXJ; i++) {
        d->slot[i] = d->by_slot[i] = -1;
        d->start[i] = d->end[i] = d->resv[i] = NAN;
    }
}

static void drv_free(drv_t *d)
{
    ms_sched_destroy(d->s);
    ms_cluster_spec_destroy(d->cs);
}

static void note_resv(drv_t *d)
{
    int32_t h;
    double t;

    if (ms_sched_head_reservation(d->s, &h, &t) == MS_OK) {
        int j = d->by_slot[h];

        assert_true(j >= 0);
        assert_true(isnan(d->start[j]));
        if (isnan(d->resv[j]))
            d->resv[j] = t;
    }
}

/* Run until every arrival is in and nothing is left to finish, or until
 * horizon (then running jobs simply stay). */
static void drv_run(drv_t *d, double horizon)
{
    int next = d->next;

    for (;; d->next = next) {
        double tf = INFINITY, ta = next < d->n ? d->arr[next] : INFINITY;
        int jf = -1, j;

        for (j = 0; j < d->n; j++)
            if (!isnan(d->end[j]) && d->slot[j] >= 0 && d->end[j] < tf) {
                tf = d->end[j];
                jf = j;
            }
        if (jf < 0 && next >= d->n)
            break;
        if (fmin(tf, ta) > horizon)
            break;
        if (jf >= 0 && tf <= ta) {
            assert_int_equal(ms_sched_finished(d->s, d->slot[jf], tf), MS_OK);
            d->end[jf] = NAN;      /* done: keep start */
            d->slot[jf] = -2;
        } else {
            ms_sched_req_t rq;
            ms_diag_t dg;
            int32_t slot = -1;
            ms_status_t st;

            memset(&rq, 0, sizeof(rq));
            rq.profile = d->prof[next];
            rq.gang = d->gang[next];
            rq.duration_s = d->dur[next];
            rq.estimate_s = d->dur[next];
            /* the slot this submit will get: slots are handed out in order
             * (nothing is forgotten), and plans during it already name it */
            d->by_slot[ms_sched_slots(d->s)] = next;
            st = ms_sched_submit(d->s, &rq, ta, &slot, &dg);
            if (st == MS_ENOFIT && slot < 0) {
                next++;
                continue;
            }
            assert_int_equal(st, MS_OK);
            assert_int_equal(d->by_slot[slot], next);
            d->slot[next] = slot;
            next++;
        }
        note_resv(d);
        assert_int_equal(ms_sched_check(d->s), MS_OK);
    }
}

/* --- EASY: the reservation holds (property) ------------------------------ */

static void easy_property(const char *pol, const char *node, uint64_t seed, long *nresv,
                          long *passed)
{
    static const char *const SIZES[] = { "1g", "2g", "3g", "4g", "7g" };
    drv_t d;
    ms_rng_t r;
    double t = 0.0;
    int j;

    memset(&d, 0, sizeof(d));
    drv_make(&d, pol, node, MS_QUEUE_EASY, 0.0, 0.0);
    ms_rng_seed(&r, seed);
    d.n = 120 + (int)ms_rng_below(&r, 120);
    for (j = 0; j < d.n; j++) {
        t += floor(1.0 + 60.0 * ms_rng_unit(&r));
        d.arr[j] = t;
        d.prof[j] = SIZES[ms_rng_below(&r, 5)];
        d.dur[j] = floor(20.0 + 1500.0 * ms_rng_unit(&r) * ms_rng_unit(&r));
        d.gang[j] = ms_rng_below(&r, 25) == 0 ? 2 : 1;
    }
    drv_run(&d, INFINITY);
    for (j = 0; j < d.n; j++) {
        if (d.slot[j] == -1)
            continue;                      /* rejected */
        assert_false(isnan(d.start[j]));   /* every job ran */
        if (isnan(d.resv[j]))
            continue;
        (*nresv)++;
        if (!(d.start[j] <= d.resv[j] + 1e-6))
            fail_msg("%s seed %llu: job %d (%s x%d) reserved for %.3f started at %.3f", pol,
                     (unsigned long long)seed, j, d.prof[j], d.gang[j], d.resv[j], d.start[j]);
    }
    /* backfilling happened: some job started before an earlier one */
    for (j = 1; j < d.n; j++)
        if (d.slot[j] != -1 && d.slot[j - 1] != -1 && d.start[j] < d.start[j - 1])
            (*passed)++;
    assert_int_equal(d.moves, 0);
    drv_free(&d);
}

static void test_easy_reservation_holds(void **state)
{
    static const char *const POLS[] = { "first-fit", "best-fit", "fgd", "mfi", "fa+", "fa" };
    static const char *const NODES[] = { "n=4xA100-40GB", "n=2xA30-24GB", "n=4xH100-80GB" };
    long nresv = 0, passed = 0;
    size_t p;
    uint64_t seed;

    (void)state;
    for (p = 0; p < sizeof(POLS) / sizeof(POLS[0]); p++)
        for (seed = 1; seed <= 6; seed++)
            easy_property(POLS[p], NODES[seed % 3], seed * 7919 + p, &nresv, &passed);
    /* the property was exercised, not vacuous */
    assert_true(nresv > 100);
    assert_true(passed > 50);
}

/* --- EASY: the test on a hand example ------------------------------------- */

static void test_easy_hand(void **state)
{
    drv_t d;
    ms_queue_mode_t modes[2] = { MS_QUEUE_EASY, MS_QUEUE_BACKFILL };
    int m;
    int32_t h;
    double t;

    (void)state;
    for (m = 0; m < 2; m++) {
        memset(&d, 0, sizeof(d));
        /* EASY from the start (bound 0) against unbounded backfilling */
        drv_make(&d, "first-fit", "n=1xA100-40GB", modes[m],
                 modes[m] == MS_QUEUE_EASY ? 0.0 : INFINITY, 0.0);
        /* a 4g until 1000; a 7g waits for the whole GPU (reservation 1000);
         * a 3g of 2000 s may not start (it would delay the 7g), a 2g of
         * 100 s ends before 1000 and may (another class: a class whose head
         * is refused is blocked for the pass) */
        d.n = 4;
        d.arr[0] = 0; d.prof[0] = "4g"; d.dur[0] = 1000; d.gang[0] = 1;
        d.arr[1] = 1; d.prof[1] = "7g"; d.dur[1] = 500; d.gang[1] = 1;
        d.arr[2] = 2; d.prof[2] = "3g"; d.dur[2] = 2000; d.gang[2] = 1;
        d.arr[3] = 3; d.prof[3] = "2g"; d.dur[3] = 100; d.gang[3] = 1;
        drv_run(&d, 3.5);
        if (modes[m] == MS_QUEUE_EASY) {
            assert_int_equal(ms_sched_head_reservation(d.s, &h, &t), MS_OK);
            assert_int_equal(d.by_slot[h], 1);
            assert_true(fabs(t - 1000.0) < 1e-9);
            assert_true(isnan(d.start[2]));          /* would delay the 7g */
            assert_true(d.start[3] == 3.0);          /* ends at 103 < 1000 */
        } else {
            assert_int_equal(ms_sched_head_reservation(d.s, &h, &t), MS_ENOENT);
            assert_true(d.start[2] == 2.0);          /* unbounded backfill: both start */
        }
        drv_run(&d, INFINITY);
        if (modes[m] == MS_QUEUE_EASY)
            assert_true(d.start[1] == 1000.0);
        else
            assert_true(d.start[1] == 2002.0);       /* behind the long 3g */
        drv_free(&d);
    }
}

/* --- aging bounds the wait of a starved job ------------------------------- */

/* 1g jobs of 100 s every 20 s keep five 1g instances busy on one A100 for
 * ever (never an empty GPU); a 7g submitted at t = 5 needs the whole GPU. */
static void starve(drv_t *d, double aging, double horizon)
{
    int j;

    memset(d, 0, sizeof(*d));
    drv_make(d, "first-fit", "n=1xA100-40GB", MS_QUEUE_BACKFILL, INFINITY, aging);
    d->n = 0;
    for (j = 0; j < 300; j++) {
        if (j == 1) {
            d->arr[d->n] = 5.0;
            d->prof[d->n] = "7g";
            d->dur[d->n] = 100.0;
            d->gang[d->n++] = 1;
        }
        d->arr[d->n] = 20.0 * j;
        d->prof[d->n] = "1g";
        d->dur[d->n] = 100.0;
        d->gang[d->n++] = 1;
    }
    drv_run(d, horizon);
}

static void test_aging_bounds_wait(void **state)
{
    const int big = 1;       /* the 7g's index */
    const double rate = 2.0; /* points per hour: passed only by jobs submitted < 1800 s later */
    drv_t d;
    int j;

    (void)state;
    /* unbounded backfilling starves it: not started in 5000 s */
    starve(&d, 0.0, 5000.0);
    assert_string_equal(d.prof[big], "7g");
    assert_true(isnan(d.start[big]));
    drv_free(&d);

    /* with aging: the bound is 3600 / rate (the window of jobs that may
     * pass it) + the longest run among them (100 s) */
    starve(&d, rate, 5000.0);
    assert_false(isnan(d.start[big]));
    assert_true(d.start[big] - d.arr[big] <= 3600.0 / rate + 100.0 + 1e-9);
    /* and nobody submitted more than 3600 / rate after it started before it */
    for (j = 0; j < d.n; j++)
        if (j != big && !isnan(d.start[j]) && d.start[j] < d.start[big])
            assert_true(d.arr[j] <= d.arr[big] + 3600.0 / rate + 1e-9);
    /* it did wait: aging does not turn the queue into FIFO */
    assert_true(d.start[big] - d.arr[big] > 3600.0 / rate - 100.0);
    drv_free(&d);
}

/* --- the disciplines' names (their options are the option table's,
 * tests/sim/test_options.c) ----------------------------------------------- */

static void test_options(void **state)
{
    ms_sched_cfg_t c;
    ms_queue_mode_t q;

    (void)state;
    ms_sched_cfg_defaults(&c);
    assert_int_equal(c.queue, MS_QUEUE_EASY);   /* the zoo's choice */
    for (q = MS_QUEUE_BACKFILL; q <= MS_QUEUE_EASY; q++) {
        ms_queue_mode_t back;

        assert_int_equal(ms_queue_mode_parse(ms_queue_mode_name(q), &back), MS_OK);
        assert_int_equal(back, q);
    }
    assert_int_equal(ms_queue_mode_parse("?", &q), MS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_easy_hand),
        cmocka_unit_test(test_aging_bounds_wait),
        cmocka_unit_test(test_easy_reservation_holds),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
