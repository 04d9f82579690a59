/* test_trace.c - the trace reader on good and malformed input, the writer,
 * the generator and the metrics/schedule writers. */
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
#include "migsched/sim.h"   /* ms_metrics_write_json */
#include "migsched/trace.h"

static ms_geom_t *a100(void)
{
    ms_geom_t *g = NULL;

    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    return g;
}

static ms_status_t read_str(const ms_geom_t *g, const char *text, ms_trace_t **t, ms_diag_t *d)
{
    FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
    ms_status_t st;

    assert_non_null(f);
    ms_diag_clear(d);
    st = ms_trace_read(f, "t.csv", g, t, d);
    fclose(f);
    return st;
}

static void test_read_good(void **state)
{
    ms_geom_t *g = a100();
    ms_trace_t *t = NULL;
    ms_diag_t d;

    (void)state;
    /* columns in any order, extra column, CRLF, spaces, blank line, comment,
     * unsorted rows, product and generic names, optional gpus */
    assert_int_equal(read_str(g,
        "note, profile ,duration_s,job_id,arrival_s,gpus\r\n"
        "x,3g.20gb,100,b,5,\r\n"
        "\n"
        "# a comment\n"
        "y, 1g ,50.5,a,1.5,1\n"
        "z,7g,10,c,5,2\n"
        "w,2g,0,d,0\n", &t, &d), MS_OK);
    assert_int_equal(t->n, 4);
    assert_string_equal(ms_trace_name(t, 0), "d");
    assert_string_equal(ms_trace_name(t, 1), "a");
    assert_string_equal(ms_trace_name(t, 2), "b");   /* same arrival: input order */
    assert_string_equal(ms_trace_name(t, 3), "c");
    assert_int_equal(t->jobs[1].prof, ms_geom_profile_find(g, "1g"));
    assert_float_equal(t->jobs[1].duration, 50.5, 0);
    assert_float_equal(t->jobs[1].arrival, 1.5, 0);
    assert_int_equal(t->jobs[3].gang, 2);
    assert_int_equal(t->jobs[2].gang, 1);
    for (size_t i = 0; i < t->n; i++)
        assert_int_equal(t->jobs[i].idx, (int32_t)i);
    ms_trace_free(t);

    /* a header and no rows is an empty trace */
    assert_int_equal(read_str(g, "job_id,arrival_s,profile,duration_s\n", &t, &d), MS_OK);
    assert_int_equal(t->n, 0);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

/* A very long line must not overflow anything. */
static void test_read_long_line(void **state)
{
    ms_geom_t *g = a100();
    ms_trace_t *t = NULL;
    ms_diag_t d;
    size_t n = 100000;
    char *text = malloc(n + 200);

    (void)state;
    assert_non_null(text);
    strcpy(text, "job_id,arrival_s,profile,duration_s\n");
    memset(text + strlen(text), 'j', n);
    strcpy(text + strlen("job_id,arrival_s,profile,duration_s\n") + n, ",1,1g,2\n");
    assert_int_equal(read_str(g, text, &t, &d), MS_OK);
    assert_int_equal(strlen(ms_trace_name(t, 0)), n);
    ms_trace_free(t);
    free(text);
    ms_geom_destroy(g);
}

typedef struct bad {
    const char *text;
    long line;
    const char *field;
    const char *msg_part;
} bad_t;

static void test_read_malformed(void **state)
{
    static const bad_t cases[] = {
        { "", 1, "", "empty trace" },
        { "job_id,arrival_s,profile\nj,1,1g\n", 1, "duration_s", "lacks" },
        { "job_id,arrival_s,profile,duration_s,arrival_s\n", 1, "arrival_s", "duplicate" },
        { "job_id,arrival_s,profile,duration_s\nj,abc,1g,1\n", 2, "arrival_s", "not a number" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g,1\nk,2,1g,-3\n", 3, "duration_s", "[0, 1e9]" },
        { "job_id,arrival_s,profile,duration_s\nj,-1,1g,1\n", 2, "arrival_s", "[0, 1e9]" },
        { "job_id,arrival_s,profile,duration_s\nj,1,5g,1\n", 2, "profile", "unknown profile" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g.10gb,1\n", 2, "profile", "not active" },
        { "job_id,arrival_s,profile,duration_s\n,1,1g,1\n", 2, "job_id", "empty" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g\n", 2, "duration_s", "missing" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g,1e999\n", 2, "duration_s", "out of range" },
        /* issue 8: nonsense that used to be accepted or misreported */
        { "job_id,arrival_s,profile,duration_s\n0,1e308,1g,1e308\n", 2, "arrival_s", "[0, 1e9]" },
        { "job_id,arrival_s,profile,duration_s\n0,1e17,1g,5\n", 2, "arrival_s", "[0, 1e9]" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g,0x10\n", 2, "duration_s", "not a number" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g,inf\n", 2, "duration_s", "not a number" },
        { "job_id,arrival_s,profile,duration_s\n0,0,7g,100,2\n", 2, "", "header only 4" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g,1,x\n", 2, "", "header only 4" },
        { "job_id,arrival_s,profile,duration_s\na,1,1g,1\nb,1,1g,1\na,2,1g,1\n", 4, "job_id",
          "first on line 2" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g,nan\n", 2, "duration_s", "not a number" },
        { "job_id,arrival_s,profile,duration_s\nj,1,1g,12x\n", 2, "duration_s", "not a number" },
        { "job_id,arrival_s,profile,duration_s,gpus\nj,1,1g,1,0\n", 2, "gpus", "whole number" },
        { "job_id,arrival_s,profile,duration_s,gpus\nj,1,1g,1,1.5\n", 2, "gpus", "whole number" },
    };
    ms_geom_t *g = a100();
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ms_trace_t *t = (ms_trace_t *)1;
        ms_diag_t d;

        assert_int_equal(read_str(g, cases[i].text, &t, &d), MS_EPARSE);
        assert_null(t);
        assert_string_equal(d.file, "t.csv");
        if (d.line != cases[i].line || strcmp(d.field, cases[i].field) != 0 ||
            strstr(d.msg, cases[i].msg_part) == NULL)
            fail_msg("case %zu: got line %ld field '%s' msg '%s'", i, d.line, d.field, d.msg);
    }
    ms_geom_destroy(g);
}

/* A NUL byte is an error (it used to cut the field silently); a UTF-8
 * byte-order mark is skipped; a value that underflows reads as ~0. */
static void test_read_bytes(void **state)
{
    static const char nul[] = "job_id,arrival_s,profile,duration_s\nj,1,1g,5\0" "00\n";
    static const char bom[] = "\xEF\xBB\xBFjob_id,arrival_s,profile,duration_s\nj,1e-320,1g,5\n";
    ms_geom_t *g = a100();
    ms_trace_t *t = NULL;
    ms_diag_t d;
    FILE *f;

    (void)state;
    ms_diag_clear(&d);
    f = fmemopen((void *)(uintptr_t)nul, sizeof(nul) - 1, "r");
    assert_non_null(f);
    assert_int_equal(ms_trace_read(f, "t.csv", g, &t, &d), MS_EPARSE);
    fclose(f);
    assert_int_equal(d.line, 2);
    assert_non_null(strstr(d.msg, "NUL"));
    f = fmemopen((void *)(uintptr_t)bom, sizeof(bom) - 1, "r");
    assert_non_null(f);
    assert_int_equal(ms_trace_read(f, "t.csv", g, &t, &d), MS_OK);
    fclose(f);
    assert_int_equal(t->n, 1);
    assert_true(t->jobs[0].arrival >= 0.0 && t->jobs[0].arrival < 1e-300);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

/* A line whose first non-blank is '#' is a comment, so no id begins with
 * '#' and what ms_trace_write writes reads back (a fuzzer found an id that
 * became a comment once written); the constraint columns are kept. */
static void test_read_comments_and_constraints(void **state)
{
    static const char hash[] = "job_id,arrival_s,profile,duration_s\n\t\t#x,40,7g,7200\nb,2,1g,10\n";
    static const char req[] = "job_id,arrival_s,mem_gb,duration_s,model,isolation,priority,gang\n"
                              "a,0,10,100,H100-80GB,mig,5,\nb,1,4,50,,,,2\n";
    ms_geom_t *g = a100();
    ms_trace_t *t = NULL;
    ms_diag_t d;
    FILE *f;

    (void)state;
    f = fmemopen((void *)(uintptr_t)hash, sizeof(hash) - 1, "r");
    assert_non_null(f);
    assert_int_equal(ms_trace_read(f, "t.csv", g, &t, &d), MS_OK);
    fclose(f);
    assert_int_equal(t->n, 1);
    assert_string_equal(ms_trace_name(t, 0), "b");
    assert_null(t->req);   /* no constraint columns, nothing kept */
    ms_trace_free(t);
    f = fmemopen((void *)(uintptr_t)req, sizeof(req) - 1, "r");
    assert_non_null(f);
    assert_int_equal(ms_trace_read(f, "t.csv", g, &t, &d), MS_OK);
    fclose(f);
    assert_int_equal(t->n, 2);
    assert_non_null(t->req);
    assert_true(t->req[0].mem_gb == 10.0);
    assert_ptr_equal(t->req[0].model, ms_model_find("H100-80GB"));
    assert_int_equal(t->req[0].isolation, 1);
    assert_int_equal(t->req[0].priority, 5);
    assert_string_equal(ms_geom_profile(g, t->jobs[0].prof)->name, "2g.10gb");   /* 10 GB here */
    assert_string_equal(ms_geom_profile(g, t->jobs[1].prof)->name, "1g.5gb");
    assert_int_equal(t->jobs[1].gang, 2);
    assert_null(t->req[1].model);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

static void test_read_missing_file(void **state)
{
    ms_geom_t *g = a100();
    ms_trace_t *t = NULL;
    ms_diag_t d;

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(ms_trace_read_file("/nonexistent/x.csv", g, &t, &d), MS_EIO);
    assert_string_equal(d.file, "/nonexistent/x.csv");
    ms_geom_destroy(g);
}

static void test_write_roundtrip(void **state)
{
    ms_geom_t *g = a100();
    ms_gen_cfg_t gc;
    ms_trace_t *t = NULL, *t2 = NULL;
    char *buf = NULL;
    size_t len = 0, i;
    FILE *f;
    ms_diag_t d;
    ms_job_t jobs[2];
    const char *names[2] = { "first", "second" };

    (void)state;
    memset(&gc, 0, sizeof(gc));
    gc.njobs = 500;
    gc.rate = 0.3;
    gc.dist = 2;
    gc.mean_s = 100;
    gc.seed = 42;
    assert_int_equal(ms_trace_generate(g, &gc, &t), MS_OK);
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(ms_trace_write(f, t), MS_OK);
    fclose(f);
    assert_int_equal(read_str(g, buf, &t2, &d), MS_OK);
    assert_int_equal(t2->n, t->n);
    for (i = 0; i < t->n; i++) {
        assert_memory_equal(&t->jobs[i], &t2->jobs[i], sizeof(ms_job_t));
        assert_string_equal(ms_trace_name(t, i), ms_trace_name(t2, i));
    }
    ms_trace_free(t);
    ms_trace_free(t2);
    free(buf);

    /* names and gangs survive; from_jobs sorts */
    memset(jobs, 0, sizeof(jobs));
    jobs[0].prof = 4;
    jobs[0].gang = 2;
    jobs[0].arrival = 10.1;
    jobs[0].duration = 1.0 / 3.0;
    jobs[1].prof = 0;
    jobs[1].gang = 1;
    jobs[1].arrival = 0.7;
    jobs[1].duration = 5;
    assert_int_equal(ms_trace_from_jobs(g, jobs, 2, names, &t), MS_OK);
    assert_string_equal(ms_trace_name(t, 0), "second");
    f = open_memstream(&buf, &len);
    assert_int_equal(ms_trace_write(f, t), MS_OK);
    fclose(f);
    assert_non_null(strstr(buf, ",gpus\n"));
    assert_int_equal(read_str(g, buf, &t2, &d), MS_OK);
    assert_int_equal(t2->jobs[1].gang, 2);
    assert_true(t2->jobs[1].duration == 1.0 / 3.0);
    assert_string_equal(ms_trace_name(t2, 1), "first");
    ms_trace_free(t);
    ms_trace_free(t2);
    free(buf);

    /* priority, tenant and checkpoint_s survive (the constraints a
     * written trace keeps: gen-trace --priority/--checkpoint, the zoo's
     * --traces); a column nobody uses is not written */
    assert_int_equal(read_str(g, "job_id,arrival_s,profile,duration_s,priority,tenant,checkpoint_s\n"
                                 "a,0,1g.5gb,10,5,t1,0.1\n"
                                 "b,1,7g.40gb,20,0,,\n"
                                 "c,2,2g.10gb,30,-2,t2,300\n", &t, &d), MS_OK);
    f = open_memstream(&buf, &len);
    assert_int_equal(ms_trace_write(f, t), MS_OK);
    fclose(f);
    assert_non_null(strstr(buf, "duration_s,priority,tenant,checkpoint_s\n"));
    assert_int_equal(read_str(g, buf, &t2, &d), MS_OK);
    assert_non_null(t2->req);
    for (i = 0; i < 3; i++) {
        assert_int_equal(t2->req[i].priority, t->req[i].priority);
        assert_true(t2->req[i].checkpoint_s == t->req[i].checkpoint_s);
        assert_int_equal(t2->req[i].tenant, t->req[i].tenant);
    }
    assert_true(t2->req[0].checkpoint_s == 0.1 && t2->req[1].checkpoint_s == 0.0);
    assert_int_equal(t2->req[2].priority, -2);
    ms_trace_free(t);
    ms_trace_free(t2);
    free(buf);
    assert_int_equal(read_str(g, "job_id,arrival_s,profile,duration_s,priority\na,0,1g.5gb,10,0\n", &t, &d), MS_OK);
    f = open_memstream(&buf, &len);
    assert_int_equal(ms_trace_write(f, t), MS_OK);
    fclose(f);
    assert_string_equal(buf, "job_id,arrival_s,profile,duration_s\na,0,1g.5gb,10\n");
    ms_trace_free(t);
    free(buf);

    jobs[0].duration = -1;
    assert_int_equal(ms_trace_from_jobs(g, jobs, 2, NULL, &t), MS_EINVAL);
    ms_geom_destroy(g);
}

static void test_generate(void **state)
{
    ms_geom_t *g = a100();
    ms_gen_cfg_t gc;
    ms_trace_t *a = NULL, *b = NULL;
    double mix[5] = { 0, 0, 1, 0, 0 }, sum = 0;
    size_t i;
    int dist;

    (void)state;
    memset(&gc, 0, sizeof(gc));
    gc.njobs = 20000;
    gc.load = 0.8;
    gc.ngpus = 10;
    gc.mean_s = 600;
    gc.seed = 7;
    for (dist = 0; dist < 3; dist++) {
        gc.dist = dist;
        assert_int_equal(ms_trace_generate(g, &gc, &a), MS_OK);
        assert_int_equal(ms_trace_generate(g, &gc, &b), MS_OK);
        assert_int_equal(a->n, 20000);
        assert_memory_equal(a->jobs, b->jobs, a->n * sizeof(ms_job_t));
        /* offered load: sum c_p * d / (span * 7 * 10) is near 0.8 */
        sum = 0;
        for (i = 0; i < a->n; i++) {
            assert_true(a->jobs[i].duration > 0);
            assert_true(i == 0 || a->jobs[i].arrival >= a->jobs[i - 1].arrival);
            sum += ms_geom_profile(g, a->jobs[i].prof)->cslices * a->jobs[i].duration;
        }
        sum /= a->jobs[a->n - 1].arrival * 7 * 10;
        if (fabs(sum - 0.8) > 0.08)
            fail_msg("dist %d: offered load %f, wanted 0.8", dist, sum);
        ms_trace_free(a);
        ms_trace_free(b);
    }
    gc.seed = 8;
    gc.mix = mix;
    gc.njobs = 100;
    assert_int_equal(ms_trace_generate(g, &gc, &a), MS_OK);
    for (i = 0; i < a->n; i++)
        assert_int_equal(a->jobs[i].prof, 2);
    ms_trace_free(a);
    gc.load = 0;   /* neither rate nor load */
    assert_int_equal(ms_trace_generate(g, &gc, &a), MS_EINVAL);
    ms_geom_destroy(g);
}

static void test_writers(void **state)
{
    ms_geom_t *g = a100();
    ms_job_t j;
    ms_trace_t *t = NULL;
    const char *names[1] = { "job-1" };
    ms_metrics_t m;
    ms_segment_t seg;
    ms_schedule_writer_t *w = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    static const char *const keys[] = {
        "makespan_s", "mean_wait_s", "p50_wait_s", "p95_wait_s", "p99_wait_s",
        "mean_exec_s", "mean_jct_s", "jobs_completed", "jobs_rejected", "migrations",
        "reconfigurations", "mean_fragcost", "mean_utilization", "lower_bound_s",
    };
    size_t i;

    (void)state;
    memset(&j, 0, sizeof(j));
    j.prof = 2;
    j.gang = 1;
    j.duration = 3;
    assert_int_equal(ms_trace_from_jobs(g, &j, 1, names, &t), MS_OK);
    f = open_memstream(&buf, &len);
    assert_int_equal(ms_schedule_writer_open(f, t, &w), MS_OK);
    seg.job = 0;
    seg.gpu = 3;
    seg.start = 4;
    seg.prof = 2;
    seg.begin_s = 1.5;
    seg.end_s = 4.5;
    ms_schedule_on_segment(w, &seg);
    assert_int_equal(ms_schedule_writer_close(w), MS_OK);
    fclose(f);
    assert_string_equal(buf, "job_id,gpu,start,profile,begin_s,end_s\n"
                             "job-1,3,4,3g.20gb,1.500000,4.500000\n");
    free(buf);

    memset(&m, 0, sizeof(m));
    m.makespan_s = 12;
    m.mean_wait_s = NAN;
    f = open_memstream(&buf, &len);
    ms_metrics_write_json(f, &m, "fa");
    fclose(f);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char k[64];

        snprintf(k, sizeof(k), "\"%s\":", keys[i]);
        if (strstr(buf, k) == NULL)
            fail_msg("metrics JSON lacks %s", keys[i]);
    }
    assert_non_null(strstr(buf, "\"mean_wait_s\": null"));
    assert_non_null(strstr(buf, "\"policy\": \"fa\""));
    free(buf);
    ms_trace_free(t);
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_good),
        cmocka_unit_test(test_read_long_line),
        cmocka_unit_test(test_read_malformed),
        cmocka_unit_test(test_read_bytes),
        cmocka_unit_test(test_read_comments_and_constraints),
        cmocka_unit_test(test_read_missing_file),
        cmocka_unit_test(test_write_roundtrip),
        cmocka_unit_test(test_generate),
        cmocka_unit_test(test_writers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
