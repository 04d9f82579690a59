/* test_check.c - the schedule validator finds each kind of violation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
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

static ms_status_t check(fx_t *f, const char *sched, ms_check_result_t *r, ms_diag_t *d)
{
    FILE *in = fmemopen((void *)(uintptr_t)sched, strlen(sched), "r");
    ms_status_t st;

    assert_non_null(in);
    st = ms_schedule_check(in, "sched", f->t, 2, false, r, d);
    fclose(in);
    return st;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_migrated_job_is_valid),
        cmocka_unit_test(test_violations),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
