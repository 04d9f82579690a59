/* test_check.c - the schedule validator finds each kind of violation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/check.h"

/* Trace: a 3g at 0 s for 100 s, a 1g at 10 s for 50 s, a 4g at 0 s for 30 s. */
static const char TRACE[] =
    "job_id,arrival_s,profile,duration_s\n"
    "a,0,3g,100\n"
    "b,10,1g,50\n"
    "c,0,4g,30\n";

typedef struct fx {
    ms_geom_t *g;
    ms_trace_t *t;
} fx_t;

static int setup(void **state)
{
    static fx_t f;
    FILE *in = fmemopen((void *)(uintptr_t)TRACE, sizeof(TRACE) - 1, "r");

    assert_non_null(in);
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &f.g), MS_OK);
    assert_int_equal(ms_trace_read(in, "trace", f.g, &f.t, NULL), MS_OK);
    fclose(in);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;

    ms_trace_free(f->t);
    ms_geom_destroy(f->g);
    return 0;
}

static ms_status_t check_with(fx_t *f, const char *sched, bool allow_missing,
                              ms_check_result_t *r, ms_diag_t *d)
{
    FILE *in = fmemopen((void *)(uintptr_t)sched, strlen(sched), "r");
    ms_status_t st;

    assert_non_null(in);
    ms_check_opts_t o;

    memset(&o, 0, sizeof(o));
    o.ngpus = 2;
    o.allow_missing = allow_missing;
    st = ms_schedule_check(in, "sched", f->t, &o, r, d);
    fclose(in);
    return st;
}

/* Jobs left out of a schedule are counted, not violations (the findings
 * under test are the others). */
static ms_status_t check(fx_t *f, const char *sched, ms_check_result_t *r, ms_diag_t *d)
{
    return check_with(f, sched, true, r, d);
}

static bool has_msg(const ms_check_result_t *r, const char *s)
{
    for (int i = 0; i < r->nmsgs; i++)
        if (strstr(r->msgs[i], s) != NULL)
            return true;
    return false;
}

#define HDR "job_id,gpu,start,profile,begin_s,end_s\n"

static void test_valid(void **state)
{
    ms_check_result_t r;

    /* a on 3g@4 of GPU 0; b on 1g@0 of GPU 0; c waits for nothing on GPU 1 */
    assert_int_equal(check(*state, HDR "a,0,4,3g.20gb,0,100\nb,0,0,1g.5gb,10,60\n"
                                   "c,1,0,4g.20gb,0,30\n", &r, NULL), MS_OK);
    assert_int_equal(r.violations, 0);
    assert_int_equal(r.segments, 3);
    assert_int_equal(r.jobs_run, 3);
}

static void test_migrated_job_is_valid(void **state)
{
    ms_check_result_t r;

    /* a moves from GPU 0 to GPU 1 at 40 s, pauses 10 s, runs its last 60 s */
    assert_int_equal(check(*state, HDR "a,0,0,3g,0,40\na,1,4,3g,50,110\n", &r, NULL), MS_OK);
    assert_int_equal(r.violations, 0);
    assert_int_equal(r.jobs_missing, 2);
}

static void test_violations(void **state)
{
    ms_check_result_t r;

    /* overlap: 3g@0 and 4g@0 share slices 0-3 from 0 to 30 s */
    assert_int_equal(check(*state, HDR "a,0,0,3g,0,100\nc,0,0,4g,0,30\n", &r, NULL), MS_OK);
    assert_int_equal(r.violations, 1);
    assert_non_null(strstr(r.msgs[0], "share memory slices"));
    /* illegal start: 3g at 2 */
    assert_int_equal(check(*state, HDR "a,0,2,3g,0,100\n", &r, NULL), MS_OK);
    assert_int_equal(r.violations, 1);
    assert_non_null(strstr(r.msgs[0], "illegal start"));
    /* early start, too short, too small an instance */
    assert_int_equal(check(*state, HDR "b,0,0,1g,5,55\n", &r, NULL), MS_OK);
    assert_non_null(strstr(r.msgs[0], "before it arrives"));
    assert_int_equal(check(*state, HDR "a,0,4,3g,0,90\n", &r, NULL), MS_OK);
    assert_non_null(strstr(r.msgs[0], "less than"));
    assert_int_equal(check(*state, HDR "c,0,4,3g,0,30\n", &r, NULL), MS_OK);
    assert_non_null(strstr(r.msgs[0], "asks for 4g.20gb"));
}

static void test_malformed(void **state)
{
    ms_check_result_t r;
    ms_diag_t d;

    ms_diag_clear(&d);
    assert_int_equal(check(*state, HDR "zz,0,0,1g,0,1\n", &r, &d), MS_EPARSE);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.field, "job_id");
    ms_diag_clear(&d);
    assert_int_equal(check(*state, HDR "a,0,4,3g,0,100\nb,7,0,1g,10,60\n", &r, &d), MS_ERANGE);
    assert_int_equal(d.line, 3);
    assert_string_equal(d.field, "gpu");
    ms_diag_clear(&d);
    assert_int_equal(check(*state, HDR "a,0,4,3g,x,100\n", &r, &d), MS_EPARSE);
    assert_string_equal(d.field, "begin_s");
    ms_diag_clear(&d);
    assert_int_equal(check(*state, "job,gpu\n", &r, &d), MS_EPARSE);
    assert_string_equal(d.field, "header");
}

/* Every job of the trace must run in full: none may be missing (unless
 * allowed), none may have 0 s, and simultaneous segments of one job do not
 * add up to its duration. */
static void test_every_job_runs(void **state)
{
    ms_check_result_t r;

    /* a header-only schedule: three jobs never ran */
    assert_int_equal(check_with(*state, HDR, false, &r, NULL), MS_OK);
    assert_int_equal(r.violations, 3);
    assert_int_equal(r.jobs_missing, 3);
    assert_true(has_msg(&r, "not in the schedule"));
    /* the same with --allow-missing: counted only */
    assert_int_equal(check_with(*state, HDR, true, &r, NULL), MS_OK);
    assert_int_equal(r.violations, 0);
    assert_int_equal(r.jobs_missing, 3);
    /* a 0-second segment for a 100-second job is a violation, not "missing" */
    assert_int_equal(check_with(*state, HDR "a,0,4,3g,0,0\nb,0,0,1g,10,60\nc,1,0,4g,0,30\n",
                                false, &r, NULL), MS_OK);
    assert_int_equal(r.violations, 1);
    assert_int_equal(r.jobs_missing, 0);
    assert_true(has_msg(&r, "job a ran 0.000 s"));
    /* c's 30 s as two 15 s segments at the same time on two GPUs */
    assert_int_equal(check_with(*state, HDR "a,0,4,3g,0,100\nb,0,0,1g,10,60\n"
                                            "c,1,0,4g,0,15\nc,1,4,3g.20gb,0,15\n",
                                false, &r, NULL), MS_OK);
    assert_true(has_msg(&r, "job c ran for 15.000 s of time"));
}

/* A gang larger than a node can never run: counted as unrunnable, not a
 * violation; but a gang that fits and is missing is one. */
static void test_unrunnable_gang(void **state)
{
    static const char TR[] = "job_id,arrival_s,profile,duration_s,gpus\ng,0,7g,5,2\n";
    FILE *in = fmemopen((void *)(uintptr_t)TR, sizeof(TR) - 1, "r");
    FILE *s1;
    ms_trace_t *t = NULL;
    ms_check_result_t r;
    ms_check_opts_t o;
    fx_t *f = *state;

    assert_int_equal(ms_trace_read(in, "trace", f->g, &t, NULL), MS_OK);
    fclose(in);
    memset(&o, 0, sizeof(o));
    o.ngpus = 1;
    s1 = fmemopen((void *)(uintptr_t)HDR, strlen(HDR), "r");
    assert_int_equal(ms_schedule_check(s1, "s", t, &o, &r, NULL), MS_OK);
    fclose(s1);
    assert_int_equal(r.violations, 0);
    assert_int_equal(r.jobs_unrunnable, 1);
    o.ngpus = 4;
    o.gpus_per_node = 2;
    s1 = fmemopen((void *)(uintptr_t)HDR, strlen(HDR), "r");
    assert_int_equal(ms_schedule_check(s1, "s", t, &o, &r, NULL), MS_OK);
    fclose(s1);
    assert_int_equal(r.violations, 1);
    assert_int_equal(r.jobs_unrunnable, 0);
    ms_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_migrated_job_is_valid),
        cmocka_unit_test(test_violations),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_every_job_runs),
        cmocka_unit_test(test_unrunnable_gang),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
