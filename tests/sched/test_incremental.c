/* test_incremental.c - queue passes that cost O(what changed) (issue 25):
 *   - the EASY reservation kept incrementally (resv.c) equals the one
 *     recomputed from scratch (backfill.c, the oracle) for every class head
 *     and several times, after every event of random traces on random
 *     heterogeneous clusters;
 *   - a scheduler that skips blocked classes and keeps its reservations
 *     incrementally makes exactly the decisions (every plan, op by op) of
 *     one that offers every class in every pass and rescans, for every
 *     policy and queue discipline, with asynchronous ops that fail;
 *   - a pass after an event that cannot unblock anything changes nothing
 *     and offers nothing to a policy (the work is counted, not timed).
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
#include "sched/sched_int.h"

static const char *const SIZES[] = { "1g", "2g", "3g", "4g", "7g" };

static uint64_t rnd(ms_rng_t *r, uint64_t n)
{
    return ms_rng_next(r) % n;
}

/* --- a recording executor that confirms ops later, failing some -------- */

typedef struct xq {
    char *log;                     /* every plan, as text */
    size_t len, cap;
    uint64_t *ids;                 /* pending op ids, in issue order */
    size_t head, n, capids;
    const ms_sched_t *s;
} xq_t;

static void log_add(xq_t *x, const char *line)
{
    size_t n = strlen(line);

    if (x->len + n + 1 > x->cap) {
        x->cap = (x->len + n + 1) * 2;
        x->log = realloc(x->log, x->cap);
        assert_non_null(x->log);
    }
    memcpy(x->log + x->len, line, n + 1);
    x->len += n;
}

static ms_status_t xq_plan(void *ctx, const ms_sched_plan_t *p)
{
    xq_t *x = ctx;
    char line[160];
    int i;

    snprintf(line, sizeof(line), "%s t=%.17g n=%d\n", ms_plan_kind_name(p->kind), p->now, p->n);
    log_add(x, line);
    for (i = 0; i < p->n; i++) {
        const ms_sched_op_t *o = &p->ops[i];

        snprintf(line, sizeof(line), " %d j%d g%d s%d p%d f%d/%d b%d fr%d id%llu\n", (int)o->op.kind,
                 (int)o->op.job, (int)o->op.gpu, (int)o->op.start, (int)o->op.prof,
                 (int)o->op.from_gpu, (int)o->op.from_start, (int)o->op.bbm, (int)o->fresh,
                 (unsigned long long)o->id);
        log_add(x, line);
        if (o->id == 0)
            continue;
        if (x->n == x->capids) {
            x->capids = x->capids ? x->capids * 2 : 256;
            x->ids = realloc(x->ids, x->capids * sizeof(*x->ids));
            assert_non_null(x->ids);
        }
        x->ids[x->n++] = o->id;
    }
    return MS_OK;
}

/* --- worlds ---------------------------------------------------------------- */

typedef struct world {
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
    xq_t x;
} world_t;

typedef struct setup {
    const char *policy;
    ms_queue_mode_t queue;
    double bound;                  /* backfill bound */
    double aging;
    bool track;
    char nodes[8][64];
    int nn;
} setup_t;

static void world_make(world_t *w, const setup_t *u)
{
    ms_sched_cfg_t cfg;
    ms_diag_t d;
    int i;

    memset(w, 0, sizeof(*w));
    assert_int_equal(ms_cluster_spec_create(&w->cs), MS_OK);
    for (i = 0; i < u->nn; i++)
        if (ms_cluster_spec_add(w->cs, u->nodes[i], 0, &d) != MS_OK)
            fail_msg("node %s: %s", u->nodes[i], d.msg);
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find(u->policy);
    assert_non_null(cfg.policy);
    cfg.nodes = ms_cluster_spec_nodes(w->cs);
    cfg.nnodes = ms_cluster_spec_nnodes(w->cs);
    cfg.queue = u->queue;
    cfg.backfill_bound_s = u->bound;
    cfg.aging_rate = u->aging;
    cfg.default_estimate_s = 300.0;
    cfg.track_ops = u->track;
    cfg.exec.ctx = &w->x;
    cfg.exec.plan = xq_plan;
    ms_diag_clear(&d);
    if (ms_sched_create(&cfg, 0.0, &w->s, &d) != MS_OK)
        fail_msg("ms_sched_create: %s", d.msg);
    w->x.s = w->s;
}

static void world_free(world_t *w)
{
    ms_sched_destroy(w->s);
    ms_cluster_spec_destroy(w->cs);
    free(w->x.log);
    free(w->x.ids);
}

static void random_setup(ms_rng_t *r, setup_t *u, const char *policy)
{
    static const char *const models[] = { "A100-40GB", "H100-80GB", "A30-24GB" };
    static const double bounds[] = { 0.0, 30.0, 3600.0, INFINITY };
    int i;

    memset(u, 0, sizeof(*u));
    u->policy = policy;
    u->queue = (ms_queue_mode_t)rnd(r, 3);
    if (rnd(r, 2))
        u->queue = MS_QUEUE_EASY;   /* the default, and the one with reservations */
    u->bound = bounds[rnd(r, 4)];
    u->aging = rnd(r, 4) == 0 ? 1.0 + (double)rnd(r, 3) : 0.0;
    u->track = rnd(r, 3) == 0;
    u->nn = 1 + (int)rnd(r, 5);
    for (i = 0; i < u->nn; i++) {
        const char *mode = "";

        switch (rnd(r, 8)) {
        case 1: mode = ":timeslice=2"; break;
        case 2: mode = ":whole"; break;
        default: break;
        }
        snprintf(u->nodes[i], 64, "n%d=%dx%s%s", i, 1 + (int)rnd(r, 4), models[rnd(r, 3)], mode);
    }
}

/* --- the oracle: incremental reservation == scan ------------------------ */

typedef struct rsv {
    int32_t head;
    double t;
    int n;
    int64_t key[64];               /* gpu << 16 | mask, sorted */
} rsv_t;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static void rsv_take(const ms_sched_t *s, rsv_t *o)
{
    int i;

    o->head = s->easy_head;
    o->t = s->easy_head >= 0 ? s->easy_t : 0.0;
    o->n = s->easy_head >= 0 ? s->easy_n : 0;
    assert_true(o->n <= 64);
    for (i = 0; i < o->n; i++)
        o->key[i] = (int64_t)s->easy_gpu[i] << 16 | s->easy_mask[i];
    qsort(o->key, (size_t)o->n, sizeof(o->key[0]), cmp_i64);
}

/* For every class head as a hypothetical queue head, at now and later. */
static void check_reservations(ms_sched_t *s, double now, ms_rng_t *r, const char *what)
{
    int k, q;

    for (k = 0; k < s->ncls; k++) {
        int32_t h = s->cls[k].qhead;

        if (h < 0)
            continue;
        for (q = 0; q < 3; q++) {
            double at = q == 0 ? now : now + (double)rnd(r, 4000);
            rsv_t a, b;

            assert_int_equal(ms__easy_reserve(s, h, at), MS_OK);
            rsv_take(s, &a);
            assert_int_equal(ms__easy_reserve_scan(s, h, at), MS_OK);
            rsv_take(s, &b);
            if (a.head != b.head || a.t != b.t || a.n != b.n ||
                memcmp(a.key, b.key, (size_t)a.n * sizeof(a.key[0])) != 0)
                fail_msg("%s: head %d at %.3f: incremental (head %d, t %.6f, %d GPUs, first %llx) "
                         "!= scan (head %d, t %.6f, %d GPUs, first %llx)", what, (int)h, at,
                         (int)a.head, a.t, a.n, (unsigned long long)(a.n ? a.key[0] : 0),
                         (int)b.head, b.t, b.n, (unsigned long long)(b.n ? b.key[0] : 0));
        }
    }
}

/* --- random traces ---------------------------------------------------------- */

/* One random event, the same on every world given the same rng state:
 * arrivals (estimates exact, wrong, absent, tiny or huge; priorities; gangs;
 * holds that are bound later), ends, cancels, ticks, and the executor's
 * outcomes when ops are tracked. */
static void random_event(ms_rng_t *r, world_t *ws, int nw, double *now, int step)
{
    uint64_t a = rnd(r, 20);
    int i;

    *now += (double)rnd(r, 3) * 7.5;
    if (a < 8) {
        ms_sched_req_t q;
        char id[32];
        static const double est[] = { 0.0, 60.0, 300.0, 900.0, 1e-6, 5e5 };

        memset(&q, 0, sizeof(q));
        q.profile = SIZES[rnd(r, 5)];
        q.gang = rnd(r, 10) == 0 ? 2 : 1;
        if (q.gang > 1)
            q.profile = "7g";
        q.priority = rnd(r, 6) == 0 ? (int)rnd(r, 3) : 0;
        q.migratable = rnd(r, 4) != 0;
        q.estimate_s = est[rnd(r, 6)];
        snprintf(id, sizeof(id), "j%d", step);
        q.id = id;
        if (rnd(r, 8) == 0) {
            for (i = 0; i < nw; i++) {
                int32_t slot;
                ms_diag_t d;
                ms_status_t st = ms_sched_reserve(ws[i].s, &q, NULL, 0, 100.0, *now, &slot, &d);

                assert_true(st == MS_OK || st == MS_ENOFIT);
            }
        } else {
            for (i = 0; i < nw; i++) {
                int32_t slot;
                ms_diag_t d;
                ms_status_t st = ms_sched_submit(ws[i].s, &q, *now, &slot, &d);

                assert_true(st == MS_OK || st == MS_ENOFIT);
            }
        }
    } else if (a < 15) {
        int32_t n = ms_sched_slots(ws[0].s), k = n > 0 ? (int32_t)rnd(r, (uint64_t)n) : -1, t;

        for (t = 0; k >= 0 && t < n; t++, k = (k + 1) % n) {
            ms_sched_job_info_t ji;

            if (ms_sched_job(ws[0].s, k, &ji) != MS_OK)
                continue;
            if (ji.state == MS_JOB_RESERVED) {
                for (i = 0; i < nw; i++)
                    assert_int_equal(ms_sched_bind(ws[i].s, k, *now), MS_OK);
                break;
            }
            if (ji.state == MS_JOB_RUNNING || (ji.state == MS_JOB_QUEUED && a == 14)) {
                for (i = 0; i < nw; i++)
                    assert_int_equal(a == 14 ? ms_sched_cancel(ws[i].s, k, *now)
                                             : ms_sched_finished(ws[i].s, k, *now), MS_OK);
                break;
            }
        }
    } else if (a < 17) {
        for (i = 0; i < nw; i++)
            assert_int_equal(ms_sched_tick(ws[i].s, *now), MS_OK);
    } else if (ws[0].x.head < ws[0].x.n) {
        uint64_t id = ws[0].x.ids[ws[0].x.head];
        bool fail = rnd(r, 4) == 0;

        for (i = 0; i < nw; i++) {
            xq_t *x = &ws[i].x;
            size_t before = x->n, k;

            assert_true(x->head < x->n && x->ids[x->head] == id);
            x->head++;
            if (fail && ms_sched_op_failed(ws[i].s, id, *now) == MS_OK) {
                /* the executor drops what was issued before the failure */
                for (k = x->head; k < before; k++)
                    x->ids[k] = 0;
            } else {
                (void)ms_sched_op_done(ws[i].s, id, *now);
            }
            while (x->head < x->n && x->ids[x->head] == 0)
                x->head++;
        }
    }
}

static long g_skipped, g_resv;   /* the traces did exercise both */
static long g_calm;              /* passes answered calmly in the traces */
static long g_api;               /* reservations compared through the API */

static void run_trace(const char *policy, uint64_t seed)
{
    ms_rng_t r, er;
    setup_t u;
    int i;
    world_t w[3];
    double now = 0.0;
    int step;
    char what[160];

    ms_rng_seed(&r, seed);
    random_setup(&r, &u, policy);
    world_make(&w[0], &u);
    world_make(&w[1], &u);
    world_make(&w[2], &u);   /* as w[0], without the oracle's calls between events */
    /* w[1] is the scheduler before issue 25: every class offered in every
     * pass, every reservation a scan */
    w[1].s->test_full_passes = true;
    w[1].s->test_resv_scan = true;
    ms_rng_seed(&er, seed ^ 0x5eedu);
    for (step = 0; step < 500; step++) {
        random_event(&r, w, 3, &now, step);
        snprintf(what, sizeof(what), "%s seed %llu step %d (%s, bound %g, aging %g, %s)", policy,
                 (unsigned long long)seed, step, ms_queue_mode_name(u.queue), u.bound, u.aging,
                 u.track ? "tracked ops" : "ops done at once");
        for (i = 0; i < 3; i += 2)
            if (w[i].x.len != w[1].x.len ||
                (w[i].x.len > 0 && memcmp(w[i].x.log, w[1].x.log, w[i].x.len) != 0)) {
                size_t c = 0;

                while (c < w[i].x.len && c < w[1].x.len && w[i].x.log[c] == w[1].x.log[c])
                    c++;
                while (c > 0 && w[1].x.log[c - 1] != '\n')
                    c--;
                fail_msg("%s: the decisions differ from a full pass:\n  skipping: %.200s\n  full:     %.200s",
                         what, w[i].x.log + c, w[1].x.log + c);
            }
        if (ms_sched_check(w[0].s) != MS_OK)
            fail_msg("%s: invariants broken", what);
        {
            /* the head's reservation as the API gives it: made by a pass
             * that asked a class behind the head, or (every class behind
             * it skipped) when asked here; the full pass always makes it
             * (w[2]: w[0]'s oracle leaves its own reservations) */
            int32_t h0 = -1, h1 = -1;
            double t0 = 0.0, t1 = 0.0;
            ms_status_t r0 = ms_sched_head_reservation(w[2].s, &h0, &t0);
            ms_status_t r1 = ms_sched_head_reservation(w[1].s, &h1, &t1);

            if (r0 != r1 || (r0 == MS_OK && (h0 != h1 || t0 != t1)))
                fail_msg("%s: the head's reservation differs from a full pass's: %d slot %d "
                         "at %g, full: %d slot %d at %g", what, (int)r0, (int)h0, t0, (int)r1,
                         (int)h1, t1);
            g_api += r0 == MS_OK;
        }
        check_reservations(w[0].s, now, &er, what);
    }
    {
        ms_sched_stats_t x;

        ms_sched_stats(w[2].s, &x);
        g_skipped += x.skipped;
        g_resv += w[2].s->lr_easy || x.resv_evals > 0;
        g_calm += x.calm_passes;
    }
    for (i = 0; i < 3; i++)
        world_free(&w[i]);
}

static void test_same_decisions(void **state)
{
    int n, i;
    uint64_t seed;
    const ms_policy_ops_t *const *all = ms_policies(&n);

    (void)state;
    for (i = 0; i < n; i++)
        for (seed = 1; seed <= 10; seed++)
            run_trace(all[i]->name, seed * 7717u + (uint64_t)i * 31u);
    if (g_skipped < 1000 || g_resv < 20 || g_api < 100 || g_calm < 100)
        fail_msg("the traces skipped %ld blocked heads, made reservations in %ld of them, "
                 "compared %ld through the API and answered %ld passes calmly", g_skipped, g_resv,
                 g_api, g_calm);
    print_message("(%ld blocked heads skipped; reservations in %ld traces, %ld compared through "
                  "the API; %ld calm passes)\n", g_skipped, g_resv, g_api, g_calm);
}

/* --- events that cannot unblock anything ------------------------------------ */

/* EASY trackers made so far (the first reservation of a kind of head reads
 * its whole group once) */
static int trackers(const ms_sched_t *s)
{
    int k, n = 0;

    for (k = 0; k < s->ngroups; k++)
        n += s->grp[k].ntrk;
    return n;
}

/* Is every waiting class blocked because nothing fitted (none by a
 * reservation)? Then a pass has no reservation to make to skip them. */
static bool all_nofit(const ms_sched_t *s)
{
    int k;

    for (k = 0; k < s->ncls; k++)
        if (s->cls[k].qhead >= 0 && s->cls[k].blk != MS__BLK_NOFIT)
            return false;
    return true;
}

/* A deep queue on a full cluster; then ticks (time passes, nothing ends) and
 * arrivals into classes that wait already: no plan, no placement offered
 * to the policy, at most one GPU evaluated per pass (an EASY reservation
 * whose time has come is re-read at the new now), none when every class
 * was blocked with no fit (nothing to ask needs the reservation), and,
 * under MS_POLICY_FIT_ANY, no placement offered for new demand weights
 * either; without aging, a calm pass (no class walked) whenever no stamp
 * moved. Then one end: offers resume. */
static void null_events(const char *policy, ms_queue_mode_t queue, double bound, double aging)
{
    setup_t u;
    world_t w;
    ms_rng_t r;
    double now = 0.0;
    int step, i;
    ms_sched_stats_t a, b;
    char id[32];

    memset(&u, 0, sizeof(u));
    u.policy = policy;
    u.queue = queue;
    u.bound = bound;
    u.aging = aging;
    u.nn = 3;
    snprintf(u.nodes[0], 64, "a=4xA100-40GB");
    snprintf(u.nodes[1], 64, "b=2xH100-80GB");
    snprintf(u.nodes[2], 64, "c=2xA100-40GB:timeslice=2");
    world_make(&w, &u);
    ms_rng_seed(&r, 42);
    for (step = 0; step < 400; step++) {
        ms_sched_req_t q;
        int32_t slot;
        ms_diag_t d;

        memset(&q, 0, sizeof(q));
        q.profile = SIZES[rnd(&r, 5)];
        q.estimate_s = 600.0 + (double)rnd(&r, 3000);
        snprintf(id, sizeof(id), "fill%d", step);
        q.id = id;
        now += 1.0;
        assert_int_equal(ms_sched_submit(w.s, &q, now, &slot, &d), MS_OK);
    }
    ms_sched_stats(w.s, &a);
    assert_true(a.waiting > 100);
    for (step = 0; step < 60; step++) {
        size_t log0 = w.x.len;
        uint64_t ver = w.s->grp[0].pol_ver, stamp = w.s->stamp;
        int ntrk = trackers(w.s);
        bool nofit = all_nofit(w.s);

        now += 100.0;   /* past the backfill bound soon: every regime is met */
        ms_sched_stats(w.s, &a);
        if (step % 2 == 0) {
            assert_int_equal(ms_sched_tick(w.s, now), MS_OK);
        } else {
            /* an arrival into a class that waits already */
            ms_sched_req_t q;
            int32_t slot, k;
            ms_diag_t d;

            for (k = 0; k < w.s->ncls && w.s->cls[k].qhead < 0; k++)
                ;
            assert_true(k < w.s->ncls);
            memset(&q, 0, sizeof(q));
            q.profile = SIZES[rnd(&r, 5)];
            for (i = 0; i < 5; i++) {
                int32_t c;

                q.profile = SIZES[i];
                if (ms__sched_resolve(w.s, &q, &c, &d) == MS_OK && c == k)
                    break;
            }
            assert_true(i < 5);
            q.estimate_s = 900.0;
            snprintf(id, sizeof(id), "late%d", step);
            q.id = id;
            assert_int_equal(ms_sched_submit(w.s, &q, now, &slot, &d), MS_OK);
        }
        ms_sched_stats(w.s, &b);
        if (w.x.len != log0)
            fail_msg("%s %s: a pass after nothing changed made a plan: %s", policy,
                     ms_queue_mode_name(queue), w.x.log + log0);
        /* without aging (the order then moves with the time) and with no
         * new version (a change: the pass looks), it walked no class */
        if (aging == 0.0 && w.s->stamp == stamp && b.calm_passes != a.calm_passes + 1)
            fail_msg("%s %s bound %g step %d: a pass after an event that changes nothing walked "
                     "the classes (%ld calm passes)", policy, ms_queue_mode_name(queue), bound,
                     step, b.calm_passes - a.calm_passes);
        assert_int_equal(b.running, a.running);
        if (w.s->grp[0].pol_ver != ver && !(nofit && (w.s->grp[0].pol->flags & MS_POLICY_FIT_ANY)))
            continue;   /* fa+, fgd: new demand weights every 32 arrivals may reorder */
        if (nofit && b.resv_evals != a.resv_evals)
            fail_msg("%s %s step %d: %ld GPUs evaluated for a reservation while every class "
                     "waited for a fit", policy, ms_queue_mode_name(queue), step,
                     b.resv_evals - a.resv_evals);
        if (b.place_calls != a.place_calls)
            fail_msg("%s %s bound %g aging %g step %d: %ld placements offered after an event that "
                     "frees nothing", policy, ms_queue_mode_name(queue), bound, aging, step,
                     b.place_calls - a.place_calls);
        if (trackers(w.s) == ntrk && b.resv_evals - a.resv_evals > b.passes - a.passes)
            fail_msg("%s %s step %d: %ld GPUs evaluated for the reservation in %ld passes", policy,
                     ms_queue_mode_name(queue), step, b.resv_evals - a.resv_evals,
                     b.passes - a.passes);
        assert_true(b.skipped >= a.skipped);
    }
    /* an end frees room: offers resume */
    ms_sched_stats(w.s, &a);
    for (i = 0; i < ms_sched_slots(w.s); i++) {
        ms_sched_job_info_t ji;

        if (ms_sched_job(w.s, i, &ji) == MS_OK && ji.state == MS_JOB_RUNNING) {
            assert_int_equal(ms_sched_finished(w.s, i, now + 1.0), MS_OK);
            break;
        }
    }
    ms_sched_stats(w.s, &b);
    assert_true(b.place_calls > a.place_calls);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    world_free(&w);
}

/* A blocked class is offered again only when an op leaves a GPU where its
 * profile fits (MS_POLICY_FIT_PLACE): on 2 A100s full of 1g jobs, with 7g,
 * 4g and 1g jobs waiting (the 7g first), the end of a 1g offers the 1g
 * class alone: its head starts in the hole, its next head is offered and
 * waits; the 7g and 4g, which cannot fit the hole, are not asked. */
static void fit_events(const char *policy)
{
    static const char *const wait[] = { "7g", "7g", "4g", "4g", "1g", "1g", "1g" };
    setup_t u;
    world_t w;
    ms_sched_stats_t a, b;
    double now = 0.0;
    int32_t slot;
    ms_diag_t d;
    char id[32];
    int i;

    memset(&u, 0, sizeof(u));
    u.policy = policy;
    u.queue = MS_QUEUE_BACKFILL;
    u.bound = INFINITY;
    u.nn = 1;
    snprintf(u.nodes[0], 64, "a=2xA100-40GB");
    world_make(&w, &u);
    for (i = 0; i < 14 + 7; i++) {
        ms_sched_req_t q;

        memset(&q, 0, sizeof(q));
        q.profile = i < 14 ? "1g" : wait[i - 14];
        q.estimate_s = 600.0;
        snprintf(id, sizeof(id), "j%d", i);
        q.id = id;
        now += 1.0;
        assert_int_equal(ms_sched_submit(w.s, &q, now, &slot, &d), MS_OK);
    }
    ms_sched_stats(w.s, &a);
    assert_int_equal(a.running, 14);
    assert_int_equal(a.waiting, 7);
    assert_int_equal(ms_sched_finished(w.s, 3, now + 1.0), MS_OK);
    ms_sched_stats(w.s, &b);
    assert_int_equal(b.running, 14);
    assert_int_equal(b.waiting, 6);
    if (b.place_calls - a.place_calls != 2)
        fail_msg("%s: the end of a 1g offered %ld placements (2: the 1g head that starts and the "
                 "next, which waits)", policy, b.place_calls - a.place_calls);
    assert_int_equal(ms_sched_check(w.s), MS_OK);
    world_free(&w);
}

static void test_fit_events(void **state)
{
    static const char *const pols[] = { "fa+", "best-fit", "first-fit", "mfi" };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
        assert_true(ms_policy_find(pols[i])->flags & MS_POLICY_FIT_PLACE);
        fit_events(pols[i]);
    }
}

static void test_null_events(void **state)
{
    static const char *const pols[] = { "fa+", "fa", "best-fit", "first-fit", "mfi", "fgd",
                                        "static", "timeslice" };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
        null_events(pols[i], MS_QUEUE_EASY, 3600.0, 0.0);
        null_events(pols[i], MS_QUEUE_EASY, 0.0, 0.0);
        null_events(pols[i], MS_QUEUE_BACKFILL, 3600.0, 0.0);
        null_events(pols[i], MS_QUEUE_BACKFILL, INFINITY, 0.0);
        null_events(pols[i], MS_QUEUE_FIFO, 3600.0, 0.0);
        null_events(pols[i], MS_QUEUE_BACKFILL, INFINITY, 1.0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_decisions),
        cmocka_unit_test(test_null_events),
        cmocka_unit_test(test_fit_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
