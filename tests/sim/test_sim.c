/* test_sim.c - the simulator on hand-computed examples, and properties of
 * its schedules over random traces for every registered policy. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/schedule.h"
#include "migsched/sim.h"
#include "sim/sim_int.h"

/* --- a tiny first-fit policy, local to the tests ------------------------- */

typedef struct tff {
    int moved;     /* "mover" variant: migrations done */
    int mover;
} tff_t;

static ms_status_t tff_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    tff_t *t = calloc(1, sizeof(*t));

    (void)cfg;
    (void)c;
    if (t == NULL)
        return MS_ENOMEM;
    *self = t;
    return MS_OK;
}

static ms_status_t mover_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    ms_status_t st = tff_create(cfg, c, self);

    if (st == MS_OK)
        ((tff_t *)*self)->mover = 1;
    return st;
}

static void tff_destroy(void *self) { free(self); }

static ms_status_t tff_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                             ms_plan_t *out)
{
    const ms_geom_t *g = c->geom;
    int gi;

    (void)self;
    if (j->gang > 1) {
        int full = ms_geom_nprofiles(g) - 1, n = 0, n0 = out->n;

        for (gi = 0; gi < c->ngpus && n < j->gang; gi++) {
            if (c->gpus[gi].ninst != 0)
                continue;
            ms_plan_add_create(out, gi, full, 0);
            ms_plan_add_start(out, j->idx, gi, 0, full);
            n++;
        }
        if (n < j->gang) {
            out->n = n0;
            return MS_ENOFIT;
        }
        return MS_OK;
    }
    for (gi = 0; gi < c->ngpus; gi++) {
        uint16_t fit = ms_state_fit(g, c->gpus[gi].state, j->prof);
        int s;

        if (fit == 0)
            continue;
        for (s = 0; !(fit & (1u << s)); s++)
            ;
        ms_plan_add_create(out, gi, j->prof, s);
        ms_plan_add_start(out, j->idx, gi, s, j->prof);
        return MS_OK;
    }
    return MS_ENOFIT;
}

/* Mover: after the first completion on GPU 0, move the job on GPU 1 to the
 * same place on GPU 0 (make-before-break). */
static ms_status_t mover_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                   ms_plan_t *out)
{
    tff_t *t = self;
    const ms_gpu_t *src = &c->gpus[1];

    (void)now;
    if (t->moved || g != 0 || src->ninst != 1 || src->inst[0].job < 0)
        return MS_OK;
    t->moved = 1;
    return ms_plan_add_move_mbb(out, src->inst[0].job, 1, src->inst[0].start, 0,
                            src->inst[0].start, src->inst[0].prof);
}

static const ms_policy_ops_t TFF = {
    .abi = MS_POLICY_ABI, .name = "test-ff", .help = "test first fit",
    .share = MS_SHARE_MIG, .create = tff_create, .destroy = tff_destroy,
    .place = tff_place,
};

static const ms_policy_ops_t MOVER = {
    .abi = MS_POLICY_ABI, .name = "test-mover", .help = "test mover",
    .share = MS_SHARE_MIG, .create = mover_create, .destroy = tff_destroy,
    .place = tff_place, .on_finish = mover_on_finish,
};

/* --- helpers ------------------------------------------------------------- */

typedef struct segs {
    ms_segment_t *v;
    size_t n, cap;
} segs_t;

static void collect(void *ctx, const ms_segment_t *seg)
{
    segs_t *s = ctx;

    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = realloc(s->v, s->cap * sizeof(*s->v));
        assert_non_null(s->v);
    }
    s->v[s->n++] = *seg;
}

static ms_geom_t *a100(void)
{
    ms_geom_t *g = NULL;

    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    return g;
}

static ms_job_t job(const ms_geom_t *g, const char *prof, double arr, double dur)
{
    ms_job_t j;

    memset(&j, 0, sizeof(j));
    j.prof = (int8_t)ms_geom_profile_find(g, prof);
    assert_true(j.prof >= 0);
    j.gang = 1;
    j.arrival = arr;
    j.duration = dur;
    return j;
}

static void cfg_init(ms_sim_cfg_t *cfg, const ms_policy_ops_t *p, int ngpus, segs_t *segs)
{
    ms_sim_cfg_defaults(cfg);
    cfg->sched.policy = p;
    cfg->ngpus = ngpus;
    cfg->beta = 0.0;
    cfg->create_s = 0.0;
    cfg->migrate_s = 0.0;
    if (segs != NULL) {
        cfg->ctx = segs;
        cfg->on_segment = collect;
    }
}

/* The end of job j's last segment (-1 if none). */
static double end_of(const segs_t *s, int j)
{
    double e = -1.0;
    size_t i;

    for (i = 0; i < s->n; i++)
        if (s->v[i].job == j && s->v[i].end_s > e)
            e = s->v[i].end_s;
    return e;
}

static double begin_of(const segs_t *s, int j)
{
    double b = INFINITY;
    size_t i;

    for (i = 0; i < s->n; i++)
        if (s->v[i].job == j && s->v[i].begin_s < b)
            b = s->v[i].begin_s;
    return b;
}

/* --- hand examples ------------------------------------------------------- */

/* Two 1g jobs on one GPU, beta 0.5: both at 2/3 until the short one ends at
 * 4 / (2/3) = 6; the long one has 10 - 4 = 6 left, alone at rate 1: ends 12. */
static void test_interference(void **state)
{
    ms_geom_t *g = a100();
    ms_job_t jobs[2];
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    segs_t s = { 0 };

    (void)state;
    jobs[0] = job(g, "1g", 0, 10);
    jobs[1] = job(g, "1g", 0, 4);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 2, NULL, &t), MS_OK);
    cfg_init(&cfg, &TFF, 1, &s);
    cfg.beta = 0.5;
    assert_int_equal(ms_sim_run(&cfg, t, &m, NULL), MS_OK);
    assert_int_equal(m.jobs_completed, 2);
    assert_float_equal(end_of(&s, 1), 6.0, 1e-9);
    assert_float_equal(end_of(&s, 0), 12.0, 1e-9);
    assert_float_equal(m.makespan_s, 12.0, 1e-9);
    assert_float_equal(m.mean_exec_s, 9.0, 1e-9);
    assert_float_equal(m.mean_slowdown, (12.0 / 10 + 6.0 / 4) / 2, 1e-9);
    /* utilisation: 2 of 7 slices busy for 6 s, 1 for 6 s, over 12 s */
    assert_float_equal(m.mean_utilization, (2.0 * 6 + 1.0 * 6) / (7.0 * 12), 1e-9);
    assert_int_equal(m.reconfigurations, 4);   /* 2 creates, 2 destroys */
    free(s.v);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

/* create_s delays progress: 10 s job, create 2 s -> ends at 12. */
static void test_creation_delay(void **state)
{
    ms_geom_t *g = a100();
    ms_job_t j = job(g, "3g", 5, 10);
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    segs_t s = { 0 };

    (void)state;
    assert_int_equal(ms_trace_from_jobs(g, &j, 1, NULL, &t), MS_OK);
    cfg_init(&cfg, &TFF, 1, &s);
    cfg.create_s = 2.0;
    assert_int_equal(ms_sim_run(&cfg, t, &m, NULL), MS_OK);
    assert_int_equal(s.n, 1);
    assert_float_equal(s.v[0].begin_s, 5.0, 1e-12);
    assert_float_equal(s.v[0].end_s, 17.0, 1e-9);
    assert_float_equal(m.mean_wait_s, 0.0, 1e-12);
    assert_float_equal(m.mean_exec_s, 12.0, 1e-9);
    free(s.v);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

/* Migration: A (7g, 5 s) on GPU 0, B (7g, 20 s) on GPU 1. A ends at 5; the
 * mover moves B to GPU 0. B did 5 s of work, makes none for 10 s, then 15 s:
 * ends at 30, in two segments. */
static void test_migration_delay(void **state)
{
    ms_geom_t *g = a100();
    ms_job_t jobs[2];
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    segs_t s = { 0 };

    (void)state;
    jobs[0] = job(g, "7g", 0, 5);
    jobs[1] = job(g, "7g", 0, 20);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 2, NULL, &t), MS_OK);
    cfg_init(&cfg, &MOVER, 2, &s);
    cfg.migrate_s = 10.0;
    assert_int_equal(ms_sim_run(&cfg, t, &m, NULL), MS_OK);
    assert_int_equal(m.migrations, 1);
    assert_int_equal(m.migrations_bbm, 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.v[1].job, 1);
    assert_int_equal(s.v[1].gpu, 1);
    assert_float_equal(s.v[1].begin_s, 0.0, 1e-12);
    assert_float_equal(s.v[1].end_s, 5.0, 1e-12);
    assert_int_equal(s.v[2].job, 1);
    assert_int_equal(s.v[2].gpu, 0);
    assert_float_equal(s.v[2].begin_s, 5.0, 1e-12);
    assert_float_equal(s.v[2].end_s, 30.0, 1e-9);
    /* CREATE A, CREATE B, DESTROY A, CREATE+DESTROY for the move, DESTROY B */
    assert_int_equal(m.reconfigurations, 6);
    free(s.v);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

/* job0 4g [0,10) holds slices 0-3; job1 7g arrives at 1 and must wait;
 * job2 1g arrives at 2 and fits in slices 4-7. */
static void run_queue(ms_queue_mode_t q, double bound, double *b1, double *b2)
{
    ms_geom_t *g = a100();
    ms_job_t jobs[3];
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    segs_t s = { 0 };

    jobs[0] = job(g, "4g", 0, 10);
    jobs[1] = job(g, "7g", 1, 5);
    jobs[2] = job(g, "1g", 2, 1);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 3, NULL, &t), MS_OK);
    cfg_init(&cfg, &TFF, 1, &s);
    cfg.sched.queue = q;
    cfg.sched.backfill_bound_s = bound;
    assert_int_equal(ms_sim_run(&cfg, t, &m, NULL), MS_OK);
    assert_int_equal(m.jobs_completed, 3);
    *b1 = begin_of(&s, 1);
    *b2 = begin_of(&s, 2);
    free(s.v);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

static void test_fifo_vs_backfill(void **state)
{
    double b1, b2;

    (void)state;
    run_queue(MS_QUEUE_BACKFILL, 3600, &b1, &b2);
    assert_float_equal(b2, 2.0, 1e-12);     /* backfilled past job1 */
    assert_float_equal(b1, 10.0, 1e-12);
    run_queue(MS_QUEUE_FIFO, 3600, &b1, &b2);
    assert_float_equal(b1, 10.0, 1e-12);
    assert_float_equal(b2, 15.0, 1e-12);    /* waits for job1 */
    run_queue(MS_QUEUE_BACKFILL, 0.5, &b1, &b2);
    assert_float_equal(b2, 15.0, 1e-12);    /* job1 waited 1 s > bound */
}

/* Gangs larger than a node, and jobs the policy refuses, are rejected. */
static bool refuse_7g(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    (void)self;
    return ms_geom_profile(c->geom, j->prof)->cslices < 7;
}

static void test_rejection(void **state)
{
    ms_geom_t *g = a100();
    ms_job_t jobs[4];
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    ms_policy_ops_t pol = TFF;

    (void)state;
    jobs[0] = job(g, "1g", 0, 1);
    jobs[1] = job(g, "7g", 0, 1);
    jobs[1].gang = 3;                       /* 3 GPUs on a 2-GPU node */
    jobs[2] = job(g, "7g", 1, 1);
    jobs[2].gang = 2;                       /* fits a node */
    jobs[3] = job(g, "7g", 2, 1);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 4, NULL, &t), MS_OK);
    cfg_init(&cfg, &TFF, 4, NULL);
    cfg.gpus_per_node = 2;
    assert_int_equal(ms_sim_run(&cfg, t, &m, NULL), MS_OK);
    assert_int_equal(m.jobs_rejected, 1);
    assert_int_equal(m.jobs_completed, 3);
    pol.can_host = refuse_7g;
    cfg.sched.policy = &pol;
    assert_int_equal(ms_sim_run(&cfg, t, &m, NULL), MS_OK);
    assert_int_equal(m.jobs_rejected, 3);
    assert_int_equal(m.jobs_completed, 1);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

/* A policy that answers with an illegal plan is reported, not obeyed. */
static ms_status_t bad_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                             ms_plan_t *out)
{
    (void)self;
    (void)c;
    return ms_plan_add_start(out, j->idx, 0, 3, j->prof);   /* no GI there */
}

static void test_bad_policy(void **state)
{
    ms_geom_t *g = a100();
    ms_job_t j = job(g, "1g", 0, 1);
    ms_trace_t *t = NULL;
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    ms_policy_ops_t pol = TFF;
    ms_diag_t d;

    (void)state;
    assert_int_equal(ms_trace_from_jobs(g, &j, 1, NULL, &t), MS_OK);
    pol.place = bad_place;
    cfg_init(&cfg, &pol, 1, NULL);
    ms_diag_clear(&d);
    assert_int_equal(ms_sim_run(&cfg, t, &m, &d), MS_ESTATE);
    assert_non_null(strstr(d.msg, "START"));
    cfg.ngpus = 0;
    assert_int_equal(ms_sim_run(&cfg, t, &m, &d), MS_EINVAL);
    assert_string_equal(d.field, "gpus");
    ms_trace_free(t);
    ms_geom_destroy(g);
}

/* §7 on hand examples. */
static void test_lower_bound(void **state)
{
    ms_geom_t *g = a100();
    ms_job_t jobs[4];
    ms_trace_t *t = NULL;

    (void)state;
    /* two 7g x 10 s at 0 on one GPU: compute bound 140 / 7 = 20 */
    jobs[0] = job(g, "7g", 0, 10);
    jobs[1] = job(g, "7g", 0, 10);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 2, NULL, &t), MS_OK);
    assert_float_equal(ms_lower_bound(t, 1), 20.0, 1e-9);
    assert_float_equal(ms_lower_bound(t, 2), 10.0, 1e-9);
    ms_trace_free(t);
    /* add a 1g x 5 s at 100: arrival + duration 105 wins */
    jobs[2] = job(g, "1g", 100, 5);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 3, NULL, &t), MS_OK);
    assert_float_equal(ms_lower_bound(t, 1), 105.0, 1e-9);
    ms_trace_free(t);
    /* three 3g x 10 s: compute 90/7 = 12.86, memory 120/8 = 15 */
    jobs[0] = job(g, "3g", 0, 10);
    jobs[1] = job(g, "3g", 0, 10);
    jobs[2] = job(g, "3g", 0, 10);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 3, NULL, &t), MS_OK);
    assert_float_equal(ms_lower_bound(t, 1), 15.0, 1e-9);
    assert_float_equal(ms__lower_bound(t, 1, NULL, false), 90.0 / 7, 1e-9);
    ms_trace_free(t);
    /* the suffix term at a later arrival: 1g x 1 at 0, then 7 x 7g x 10 at 50 */
    jobs[0] = job(g, "1g", 0, 1);
    jobs[1] = job(g, "7g", 50, 10);
    jobs[2] = job(g, "7g", 50, 10);
    jobs[3] = job(g, "7g", 50, 10);
    assert_int_equal(ms_trace_from_jobs(g, jobs, 4, NULL, &t), MS_OK);
    assert_float_equal(ms_lower_bound(t, 1), 80.0, 1e-9);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

static void test_percentile(void **state)
{
    double v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

    (void)state;
    assert_float_equal(ms__percentile(v, 10, 50), 5, 0);
    assert_float_equal(ms__percentile(v, 10, 95), 10, 0);
    assert_float_equal(ms__percentile(v, 10, 0), 1, 0);
    assert_float_equal(ms__percentile(v, 1, 99), 1, 0);
}

/* --- properties over random traces, for every policy --------------------- */

static ms_trace_t *random_trace(const ms_geom_t *g, uint64_t seed, double load, size_t n,
                                bool gangs)
{
    ms_gen_cfg_t gc;
    ms_trace_t *t = NULL, *t2 = NULL;
    ms_job_t *jobs;
    size_t i;

    memset(&gc, 0, sizeof(gc));
    gc.njobs = n;
    gc.load = load;
    gc.ngpus = 8;
    gc.dist = (int)(seed % 3);
    gc.mean_s = 300;
    gc.seed = seed;
    assert_int_equal(ms_trace_generate(g, &gc, &t), MS_OK);
    if (!gangs)
        return t;
    jobs = malloc(n * sizeof(*jobs));
    assert_non_null(jobs);
    memcpy(jobs, t->jobs, n * sizeof(*jobs));
    for (i = 0; i < n; i += 17)
        jobs[i].gang = (int16_t)(2 + i % 3);
    assert_int_equal(ms_trace_from_jobs(g, jobs, n, NULL, &t2), MS_OK);
    free(jobs);
    ms_trace_free(t);
    return t2;
}

static void check_schedule(const ms_geom_t *g, const ms_trace_t *t, const segs_t *s,
                           const ms_metrics_t *m, bool mig, const char *pol)
{
    double *work = calloc(t->n, sizeof(double));
    size_t i, k;

    assert_non_null(work);
    for (i = 0; i < s->n; i++) {
        const ms_segment_t *a = &s->v[i];
        const ms_job_t *j = &t->jobs[a->job];

        assert_true(a->end_s >= a->begin_s);
        if (a->begin_s < j->arrival - 1e-9)
            fail_msg("%s: job %d starts at %f before it arrives at %f", pol, (int)a->job,
                     a->begin_s, j->arrival);
        work[a->job] += a->end_s - a->begin_s;
        if (!mig) {
            assert_int_equal(a->start, -1);
            continue;
        }
        if (!(ms_geom_profile(g, a->prof)->start_mask & (1u << a->start)))
            fail_msg("%s: %s at illegal start %d", pol, ms_geom_profile(g, a->prof)->name,
                     a->start);
        if (ms_geom_profile(g, a->prof)->cslices < ms_geom_profile(g, j->prof)->cslices)
            fail_msg("%s: job %d on a smaller instance", pol, (int)a->job);
        for (k = i + 1; k < s->n; k++) {
            const ms_segment_t *b = &s->v[k];

            if (b->gpu != a->gpu || (ms_geom_profile_mask(g, a->prof, a->start) &
                                     ms_geom_profile_mask(g, b->prof, b->start)) == 0)
                continue;
            if (a->begin_s < b->end_s - 1e-9 && b->begin_s < a->end_s - 1e-9)
                fail_msg("%s: jobs %d and %d share memory slices of GPU %d in [%f,%f) and "
                         "[%f,%f)", pol, (int)a->job, (int)b->job, (int)a->gpu, a->begin_s,
                         a->end_s, b->begin_s, b->end_s);
        }
    }
    for (i = 0; i < t->n; i++) {
        double need = t->jobs[i].duration * (t->jobs[i].gang > 1 ? t->jobs[i].gang : 1);

        if (work[i] > 0.0 && work[i] < need - 1e-6)
            fail_msg("%s: job %zu ran %f < its duration %f", pol, i, work[i], need);
    }
    if (m->jobs_completed + m->jobs_rejected != (long)t->n)
        fail_msg("%s: %ld completed + %ld rejected of %zu jobs", pol, m->jobs_completed,
                 m->jobs_rejected, t->n);
    if (m->makespan_s < m->lower_bound_s - 1e-6)
        fail_msg("%s: makespan %f below the lower bound %f", pol, m->makespan_s,
                 m->lower_bound_s);
    free(work);
}

static char *run_csv(ms_sim_cfg_t *cfg, const ms_trace_t *t, ms_metrics_t *m, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ms_schedule_writer_t *w = NULL;
    ms_diag_t d;
    ms_status_t st;

    assert_non_null(f);
    assert_int_equal(ms_schedule_writer_open(f, t, &w), MS_OK);
    cfg->ctx = w;
    cfg->on_segment = ms_schedule_on_segment;
    ms_diag_clear(&d);
    st = ms_sim_run(cfg, t, m, &d);
    if (st != MS_OK)
        fail_msg("%s: %s: %s", cfg->sched.policy->name, ms_strerror(st), d.msg);
    assert_int_equal(ms_schedule_writer_close(w), MS_OK);
    fclose(f);
    return buf;
}

static void property_one(const ms_policy_ops_t *p, uint64_t seed, double load, bool gangs)
{
    ms_geom_t *g = a100();
    ms_trace_t *t = random_trace(g, seed, load, 300, gangs);
    ms_sim_cfg_t cfg;
    ms_metrics_t m, m2;
    segs_t s = { 0 };
    ms_diag_t d;
    ms_status_t st;
    char *a, *b;
    size_t la, lb;

    ms_sim_cfg_defaults(&cfg);
    cfg.sched.policy = p;
    cfg.ngpus = 8;
    cfg.gpus_per_node = 4;
    cfg.sched.backfill_bound_s = seed % 2 ? 600 : 3600;
    cfg.sched.queue = seed % 4 == 3 ? MS_QUEUE_FIFO : MS_QUEUE_BACKFILL;
    cfg.ctx = &s;
    cfg.on_segment = collect;
    ms_diag_clear(&d);
    st = ms_sim_run(&cfg, t, &m, &d);
    if (st != MS_OK)
        fail_msg("%s seed %llu: %s: %s", p->name, (unsigned long long)seed, ms_strerror(st),
                 d.msg);
    check_schedule(g, t, &s, &m, p->share == MS_SHARE_MIG, p->name);

    /* deterministic, and the same with either index */
    cfg.sched.index_mode = MS_INDEX_BUCKET;
    a = run_csv(&cfg, t, &m2, &la);
    cfg.sched.index_mode = MS_INDEX_SCAN;
    b = run_csv(&cfg, t, &m2, &lb);
    if (la != lb || memcmp(a, b, la) != 0)
        fail_msg("%s seed %llu: schedules differ between --index bucket and scan", p->name,
                 (unsigned long long)seed);
    assert_float_equal(m.makespan_s, m2.makespan_s, 0);
    free(a);
    cfg.sched.index_mode = MS_INDEX_SCAN;
    a = run_csv(&cfg, t, &m2, &la);
    assert_true(la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);
    free(s.v);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

static void test_properties_local(void **state)
{
    uint64_t seed;

    (void)state;
    for (seed = 1; seed <= 4; seed++)
        property_one(&TFF, seed, 0.5 + 0.4 * (double)seed, seed % 2 == 0);
}

static void test_properties_registry(void **state)
{
    int n, i;
    const ms_policy_ops_t *const *all = ms_policies(&n);
    uint64_t seed;

    (void)state;
    assert_true(n > 0);
    for (i = 0; i < n; i++)
        for (seed = 1; seed <= 4; seed++)
            property_one(all[i], seed * 7 + (uint64_t)i, 0.6 + 0.3 * (double)seed,
                         seed % 2 == 0);
}

static void count_samples(void *ctx, double t, double fc, double util, int lazy, int busy,
                          long waiting)
{
    long *n = ctx;

    (void)t;
    assert_true(fc >= 0.0 && fc <= 1.0);
    assert_true(util >= 0.0 && util <= 1.0 + 1e-12);
    assert_true(lazy >= 0 && busy >= 0 && waiting >= 0);
    (*n)++;
}

static void test_samples_and_metrics(void **state)
{
    ms_geom_t *g = a100();
    ms_trace_t *t = random_trace(g, 99, 1.2, 200, false);
    ms_sim_cfg_t cfg;
    ms_metrics_t m;
    long n = 0;

    (void)state;
    cfg_init(&cfg, &TFF, 8, NULL);
    cfg.ctx = &n;
    cfg.on_sample = count_samples;
    cfg.sample_every_s = 60;
    assert_int_equal(ms_sim_run(&cfg, t, &m, NULL), MS_OK);
    assert_true(n > 0);
    assert_true(m.p50_wait_s <= m.p95_wait_s && m.p95_wait_s <= m.p99_wait_s &&
                m.p99_wait_s <= m.max_wait_s);
    assert_true(m.mean_jct_s >= m.mean_exec_s);
    assert_true(m.mean_fragcost >= 0.0 && m.mean_fragcost <= 1.0);
    assert_true(m.mean_utilization > 0.0 && m.mean_utilization <= 1.0);
    assert_int_equal(m.jobs_completed, 200);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interference),
        cmocka_unit_test(test_creation_delay),
        cmocka_unit_test(test_migration_delay),
        cmocka_unit_test(test_fifo_vs_backfill),
        cmocka_unit_test(test_rejection),
        cmocka_unit_test(test_bad_policy),
        cmocka_unit_test(test_lower_bound),
        cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_properties_local),
        cmocka_unit_test(test_properties_registry),
        cmocka_unit_test(test_samples_and_metrics),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
