/* test_report.c - reading metrics JSON and schedule CSV back; utilisation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/research/report.h"

static FILE *mem(const char *s)
{
    FILE *f = fmemopen((void *)(uintptr_t)s, strlen(s), "r");

    assert_non_null(f);
    return f;
}

static void test_metrics(void **state)
{
    const char *js = "{\n  \"policy\": \"fa\\\"x\",\n  \"makespan_s\": 123.5,\n"
                     "  \"p99_wait_s\": null,\n  \"jobs_total\": 42,\n  \"unknown\": [1],\n"
                     "  \"wall_s\": 0.25\n}\n";
    const char *js_ok = "{\"policy\": \"fa\\\"x\", \"makespan_s\": 123.5, \"p99_wait_s\": null,"
                        " \"jobs_total\": 42, \"wall_s\": 0.25}";
    ms_metrics_t m;
    char pol[8];
    ms_diag_t d;
    FILE *f;

    (void)state;
    ms_diag_clear(&d);
    f = mem(js_ok);
    assert_int_equal(ms_report_read_metrics(f, "m.json", &m, pol, sizeof(pol), &d), MS_OK);
    fclose(f);
    assert_string_equal(pol, "fa\"x");
    assert_float_equal(m.makespan_s, 123.5, 1e-12);
    assert_true(isnan(m.p99_wait_s));
    assert_int_equal(m.jobs_total, 42);
    assert_float_equal(m.wall_s, 0.25, 1e-12);

    /* arrays are not part of the format: a clear error, not a crash */
    f = mem(js);
    assert_int_equal(ms_report_read_metrics(f, "m.json", &m, NULL, 0, &d), MS_EPARSE);
    fclose(f);
    assert_string_equal(d.file, "m.json");

    f = mem("not json");
    assert_int_equal(ms_report_read_metrics(f, "x", &m, NULL, 0, &d), MS_EPARSE);
    fclose(f);
}

static void test_schedule_and_util(void **state)
{
    const char *csv = "job_id,gpu,start,profile,begin_s,end_s\n"
                      "a,0,0,7g.40gb,0,10\n"
                      "7,1,0,3g,5,15\n"
                      "b,1,4,3g.20gb,5,20\n";
    ms_geom_t *g = NULL;
    ms_segment_t *segs;
    size_t n, npts, i;
    int ngpus;
    double *t, *u;
    ms_diag_t d;
    FILE *f;

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    f = mem(csv);
    assert_int_equal(ms_report_read_schedule(f, "s.csv", g, &segs, &n, &ngpus, &d), MS_OK);
    fclose(f);
    assert_int_equal(n, 3);
    assert_int_equal(ngpus, 2);
    assert_int_equal(segs[1].job, 7);
    assert_int_equal(segs[2].start, 4);
    assert_int_equal(segs[2].prof, ms_geom_profile_find(g, "3g"));

    assert_int_equal(ms_report_util_series(g, ngpus, segs, n, &t, &u, &npts), MS_OK);
    /* 0: 7/14, 5: 13/14, 10: 6/14, 15: 3/14, 20: 0 */
    assert_int_equal(npts, 5);
    {
        const double et[] = { 0, 5, 10, 15, 20 }, eu[] = { 7, 13, 6, 3, 0 };
        for (i = 0; i < npts; i++) {
            assert_float_equal(t[i], et[i], 1e-12);
            assert_float_equal(u[i], eu[i] / 14.0, 1e-12);
        }
    }
    free(t);
    free(u);
    free(segs);

    f = mem("job_id,gpu,start,profile,begin_s,end_s\nx,0,0,5g,0,1\n");
    assert_int_equal(ms_report_read_schedule(f, "s.csv", g, &segs, &n, &ngpus, &d), MS_EPARSE);
    fclose(f);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.field, "profile");
    f = mem("job_id,gpu,profile\n");
    assert_int_equal(ms_report_read_schedule(f, "s.csv", g, &segs, &n, &ngpus, &d), MS_EPARSE);
    fclose(f);
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_schedule_and_util),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
