/* test_report_json.c - the fill-experiment JSON readers (incl. malformed
 * input naming the key), the published FGD table, FragCost over time on a
 * hand-built schedule, arrivals, wait times and their CDF. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/frag.h"
#include "migsched/research/report.h"

static FILE *mem(const char *s)
{
    FILE *f = fmemopen((void *)(uintptr_t)s, strlen(s), "r");

    assert_non_null(f);
    return f;
}

static const char FGD_ALL[] =
    "{\n"
    "  \"experiment\": \"fgd-fill\",\n"
    "  \"pods\": \"../t/openb_pod_list_default.csv\",\n"
    "  \"gpus\": 16,\n"
    "  \"seeds\": [42,43],\n"
    "  \"prng\": \"x\\u0041\\n\",\n"
    "  \"policies\": [\n"
    "{\n"
    "  \"policy\": \"fgd\",\n"
    "  \"unallocated_pct_at_100\": 4.5,\n"
    "  \"unallocated_pct_sd_at_100\": 0.25,\n"
    "  \"unallocated_pct_at_100_per_seed\": {\"42\": 4.25, \"43\": 4.75},\n"
    "  \"failed_pods_mean\": 3.5,\n"
    "  \"arrived_pct\": [0, 50, 100],\n"
    "  \"unallocated_pct\": [100, 50, 4.5],\n"
    "  \"unallocated_pct_sd\": [0, 0.1, null]\n"
    "},\n"
    "{\n"
    "  \"policy\": \"random\",\n"
    "  \"unallocated_pct_at_100\": 13,\n"
    "  \"unallocated_pct_sd_at_100\": 1e-1,\n"
    "  \"arrived_pct\": [0, 100],\n"
    "  \"unallocated_pct\": [100, 13]\n"
    "}\n"
    "  ]\n"
    "}\n";

static void test_fgd_all(void **state)
{
    ms_report_fgd_t *r = NULL;
    ms_diag_t d;
    FILE *f = mem(FGD_ALL);

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(ms_report_read_fgd(f, "f.json", &r, &d), MS_OK);
    fclose(f);
    assert_string_equal(r->trace, "default");
    assert_string_equal(r->pods, "../t/openb_pod_list_default.csv");
    assert_int_equal(r->gpus, 16);
    assert_int_equal(r->nseeds, 2);
    assert_int_equal(r->npol, 2);
    assert_string_equal(r->pol[0].policy, "fgd");
    assert_float_equal(r->pol[0].at100, 4.5, 1e-12);
    assert_float_equal(r->pol[0].at100_sd, 0.25, 1e-12);
    assert_float_equal(r->pol[0].failed_pods_mean, 3.5, 1e-12);
    assert_int_equal(r->pol[0].n, 3);
    assert_float_equal(r->pol[0].arrived[2], 100.0, 1e-12);
    assert_float_equal(r->pol[0].unalloc[1], 50.0, 1e-12);
    assert_true(isnan(r->pol[0].unalloc_sd[2]));
    assert_string_equal(r->pol[1].policy, "random");
    assert_float_equal(r->pol[1].at100_sd, 0.1, 1e-12);
    assert_null(r->pol[1].unalloc_sd);
    assert_true(isnan(r->pol[1].failed_pods_mean));
    ms_report_fgd_free(r);
}

static void test_fgd_single(void **state)
{
    const char *js = "{\"pods\": \"cpu050.csv\", \"policy\": \"best-fit\","
                     " \"unallocated_pct_at_100\": 6.5, \"unallocated_pct_sd_at_100\": 0,"
                     " \"arrived_pct\": [0,100], \"unallocated_pct\": [100,6.5]}";
    ms_report_fgd_t *r = NULL;
    ms_diag_t d;
    FILE *f = mem(js);

    (void)state;
    assert_int_equal(ms_report_read_fgd(f, "s.json", &r, &d), MS_OK);
    fclose(f);
    assert_string_equal(r->trace, "cpu050");
    assert_int_equal(r->npol, 1);
    assert_string_equal(r->pol[0].policy, "best-fit");
    assert_float_equal(r->pol[0].unalloc[1], 6.5, 1e-12);
    ms_report_fgd_free(r);
}

/* Replace the first occurrence of what in s with with (into a new string). */
static char *subst(const char *s, const char *what, const char *with)
{
    const char *p = strstr(s, what);
    size_t a, lw = strlen(what), lr = strlen(with);
    char *o;

    assert_non_null(p);
    a = (size_t)(p - s);
    o = malloc(strlen(s) - lw + lr + 1);
    assert_non_null(o);
    memcpy(o, s, a);
    memcpy(o + a, with, lr);
    strcpy(o + a + lr, p + lw);
    return o;
}

static void expect_fgd_error(const char *js, const char *field, long line)
{
    ms_report_fgd_t *r = (ms_report_fgd_t *)(uintptr_t)1;
    ms_diag_t d;
    FILE *f = mem(js);

    ms_diag_clear(&d);
    assert_int_equal(ms_report_read_fgd(f, "bad.json", &r, &d), MS_EPARSE);
    fclose(f);
    assert_null(r);
    assert_string_equal(d.file, "bad.json");
    assert_string_equal(d.field, field);
    if (line > 0)
        assert_int_equal(d.line, line);
    assert_true(d.msg[0] != '\0');
}

static void test_fgd_malformed(void **state)
{
    char *js;

    (void)state;
    /* a missing key names its path and the line of the object lacking it */
    js = subst(FGD_ALL, "\"arrived_pct\": [0, 100],", "");
    expect_fgd_error(js, "policies[1].arrived_pct", 18);
    free(js);
    js = subst(FGD_ALL, "\"unallocated_pct_at_100\": 4.5,", "");
    expect_fgd_error(js, "policies[0].unallocated_pct_at_100", 8);
    free(js);
    /* wrong type, wrong length */
    js = subst(FGD_ALL, "\"policy\": \"fgd\"", "\"policy\": 3");
    expect_fgd_error(js, "policies[0].policy", 0);
    free(js);
    js = subst(FGD_ALL, "[100, 13]", "[100]");
    expect_fgd_error(js, "policies[1].unallocated_pct", 0);
    free(js);
    js = subst(FGD_ALL, "[100, 13]", "[100, \"x\"]");
    expect_fgd_error(js, "policies[1].unallocated_pct", 0);
    free(js);
    /* no policies at all */
    expect_fgd_error("{\"pods\": \"x.csv\", \"policies\": []}", "policies", 1);
    /* malformed JSON: the line where it breaks */
    expect_fgd_error("{\n\"pods\": \"x.csv\",\n\"gpus\": 1,,\n}", "", 3);
    expect_fgd_error("{\"pods\": \"x.csv\"", "", 1);
    expect_fgd_error("{\"pods\": \"x.csv\"} trailing", "", 1);
    expect_fgd_error("{\"a\": tru}", "", 1);
    expect_fgd_error("{\"a\": \"unterminated}", "", 1);
    expect_fgd_error("", "", 1);
    expect_fgd_error("[1, 2]", "", 1);
    /* deep nesting is refused, not a stack overflow */
    {
        char deep[300];
        memset(deep, '[', 200);
        deep[200] = '\0';
        expect_fgd_error(deep, "", 1);
    }
}

static const char FILL[] =
    "{\"experiment\":\"alibaba-mig-fill\",\"pods\":\"p/openb_pod_list_gpushare20.csv\","
    "\"model\":\"A100-40GB\",\"mapping\":\"memory\",\"ngpus\":16,\"seeds\":[42,43],"
    "\"make_room\":true,\n\"policies\":[{\"policy\":\"fa\",\n\"at_100\":{"
    "\"unalloc_compute_pct\":{\"mean\":9.5,\"sd\":0.5,\"median\":9.5},"
    "\"unalloc_mem_pct\":{\"mean\":10,\"sd\":0,\"median\":10},"
    "\"unalloc_gpu_pct\":{\"mean\":1,\"sd\":0.25,\"median\":1},"
    "\"fragcost\":{\"mean\":0.01,\"sd\":0.001,\"median\":0.01},"
    "\"failed_pods_pct\":{\"mean\":13,\"sd\":1,\"median\":13}},\n"
    "\"runs\":[{\"seed\":42,\"final\":{},\"curve\":{\"unalloc_compute_pct\":[100,50,10],"
    "\"unalloc_mem_pct\":[100,50,10],\"unalloc_gpu_pct\":[100,40,0],"
    "\"fragcost\":[0,0.1,0.2],\"failed_pct\":[0,0,1]}},\n"
    "{\"seed\":43,\"curve\":{\"unalloc_compute_pct\":[100,60,9],"
    "\"unalloc_mem_pct\":[100,50,10],\"unalloc_gpu_pct\":[100,50,2],"
    "\"fragcost\":[0,0.3,0.2],\"failed_pct\":[0,0,1]}}]}]}\n";

static void test_fill(void **state)
{
    ms_report_fill_t *r = NULL;
    ms_diag_t d;
    FILE *f = mem(FILL);
    char *js;

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(ms_report_read_fill(f, "fill.json", &r, &d), MS_OK);
    fclose(f);
    assert_string_equal(r->trace, "gpushare20");
    assert_string_equal(r->mapping, "memory");
    assert_string_equal(r->model, "A100-40GB");
    assert_int_equal(r->ngpus, 16);
    assert_int_equal(r->nseeds, 2);
    assert_int_equal(r->npol, 1);
    assert_string_equal(r->pol[0].policy, "fa");
    assert_float_equal(r->pol[0].compute.mean, 9.5, 1e-12);
    assert_float_equal(r->pol[0].gpu.sd, 0.25, 1e-12);
    assert_float_equal(r->pol[0].failed.mean, 13.0, 1e-12);
    assert_int_equal(r->pol[0].n, 3);
    assert_float_equal(r->pol[0].compute_pct[1], 55.0, 1e-12);   /* mean over runs */
    assert_float_equal(r->pol[0].compute_pct[2], 9.5, 1e-12);
    assert_float_equal(r->pol[0].gpu_pct[2], 1.0, 1e-12);
    assert_float_equal(r->pol[0].fragcost_curve[1], 0.2, 1e-12);
    ms_report_fill_free(r);

    js = subst(FILL, "\"unalloc_gpu_pct\":{\"mean\":1,", "\"unalloc_gpu_pct\":{");
    f = mem(js);
    assert_int_equal(ms_report_read_fill(f, "fill.json", &r, &d), MS_EPARSE);
    fclose(f);
    free(js);
    assert_null(r);
    assert_string_equal(d.file, "fill.json");
    assert_string_equal(d.field, "policies[0].at_100.unalloc_gpu_pct.mean");
    assert_int_equal(d.line, 3);

    js = subst(FILL, "\"unalloc_compute_pct\":[100,60,9]", "\"unalloc_compute_pct\":[100,60]");
    f = mem(js);
    assert_int_equal(ms_report_read_fill(f, "fill.json", &r, &d), MS_EPARSE);
    fclose(f);
    free(js);
    assert_string_equal(d.field, "policies[0].runs[1].curve.unalloc_compute_pct");

    /* the fill JSON always has a policies array */
    f = mem("{\"policy\": \"fa\"}");
    assert_int_equal(ms_report_read_fill(f, "one.json", &r, &d), MS_EPARSE);
    fclose(f);
    assert_string_equal(d.field, "policies");
}

static void test_published(void **state)
{
    double v = -1.0, sd = -1.0;

    (void)state;
    assert_true(ms_report_fgd_published("default", "fgd", &v, &sd));
    assert_float_equal(v, 4.77, 1e-12);
    assert_float_equal(sd, 0.10, 1e-12);
    assert_true(ms_report_fgd_published("gpuspec33", "dot-product", &v, &sd));
    assert_float_equal(v, 20.18, 1e-12);
    assert_true(isnan(sd));
    assert_true(ms_report_fgd_published("multigpu50", "packing", &v, NULL));
    assert_float_equal(v, 3.94, 1e-12);
    assert_false(ms_report_fgd_published("cpu0", "fgd", &v, NULL));
    assert_false(ms_report_fgd_published("default", "fa", &v, NULL));
    assert_false(ms_report_fgd_published(NULL, "fgd", &v, NULL));
}

/* Two segments on GPU 0 of two A100-40GB:
 *   3g.20gb at slice 4 over [0, 10), 1g.5gb at slice 0 over [5, 15).
 * By hand (algorithms.md §2): 3g@4 alone leaves slices 0-3 and 4 compute
 * slices, every profile that fits by capacity can be placed: FragCost 0.
 * 3g@4 + 1g@0 leaves slices 1-3 and 3 compute: 1g 3/3, 2g 1/1 (at 2), 3g
 * and 4g do not fit by memory: FragCost 0. 1g@0 alone: 1g 6/6, 2g 2 of 3
 * (start 0 blocked), 3g 1/1 (at 4), 4g 0 of 1: (0 + 1/3 + 0 + 1) / 4 = 1/3;
 * the mean over the two GPUs is 1/6. A third segment (7g over [1, 2))
 * overlaps and is skipped. */
static void test_frag_series(void **state)
{
    const ms_model_t *mdl = ms_model_find("A100-40GB");
    ms_geom_t *g = NULL;
    ms_segment_t s[3];
    double *t = NULL, *v = NULL;
    size_t n = 0, skipped = 99;
    int p1, p3, p7;
    ms_state_t one;

    (void)state;
    assert_int_equal(ms_geom_create(mdl, 0, &g), MS_OK);
    p1 = ms_geom_profile_find(g, "1g.5gb");
    p3 = ms_geom_profile_find(g, "3g.20gb");
    p7 = ms_geom_profile_find(g, "7g.40gb");
    /* the hand value of 1g@0 alone */
    one = ms_state_place(g, ms_geom_empty_state(), p1, 0);
    assert_float_equal(ms_frag_cost(g, one, NULL), 1.0 / 3.0, 1e-12);

    memset(s, 0, sizeof(s));
    s[0].job = 0; s[0].gpu = 0; s[0].start = 4; s[0].prof = (int8_t)p3;
    s[0].begin_s = 0.0; s[0].end_s = 10.0;
    s[1].job = 1; s[1].gpu = 0; s[1].start = 0; s[1].prof = (int8_t)p1;
    s[1].begin_s = 5.0; s[1].end_s = 15.0;
    assert_int_equal(ms_report_frag_series(g, 2, s, 2, &t, &v, &n, &skipped), MS_OK);
    assert_int_equal(skipped, 0);
    assert_int_equal(n, 4);
    assert_float_equal(t[0], 0.0, 1e-12);
    assert_float_equal(v[0], 0.0, 1e-12);
    assert_float_equal(t[1], 5.0, 1e-12);
    assert_float_equal(v[1], 0.0, 1e-12);
    assert_float_equal(t[2], 10.0, 1e-12);
    assert_float_equal(v[2], 1.0 / 6.0, 1e-12);
    assert_float_equal(t[3], 15.0, 1e-12);
    assert_float_equal(v[3], 0.0, 1e-12);
    /* time-weighted: 1/6 over 5 s of 15 */
    assert_float_equal(ms_report_step_mean(t, v, n), 1.0 / 18.0, 1e-12);
    free(t);
    free(v);

    s[2].job = 2; s[2].gpu = 0; s[2].start = 0; s[2].prof = (int8_t)p7;
    s[2].begin_s = 1.0; s[2].end_s = 2.0;
    assert_int_equal(ms_report_frag_series(g, 2, s, 3, &t, &v, &n, &skipped), MS_OK);
    assert_int_equal(skipped, 1);
    assert_float_equal(v[n - 2], 1.0 / 6.0, 1e-12);
    free(t);
    free(v);

    assert_int_equal(ms_report_frag_series(g, 0, s, 2, &t, &v, &n, NULL), MS_EINVAL);
    assert_true(isnan(ms_report_step_mean(NULL, NULL, 0)));
    ms_geom_destroy(g);
}

static void test_waits(void **state)
{
    const char *csv = "job_id,arrival_s,profile,duration_s\n0,0,1g.5gb,5\n2,3,1g.5gb,5\n"
                      "1,2.5,1g.5gb,5\n";
    ms_segment_t s[4];
    ms_report_arrival_t *arr = NULL;
    double *w = NULL, *xs = NULL, *p = NULL;
    size_t n = 0, nw = 0;
    ms_diag_t d;
    FILE *f;

    (void)state;
    ms_diag_clear(&d);
    f = mem(csv);
    assert_int_equal(ms_report_read_arrivals(f, "t.csv", &arr, &n, &d), MS_OK);
    fclose(f);
    assert_int_equal(n, 3);
    assert_int_equal(arr[1].id, 1);                          /* sorted by id */
    assert_float_equal(arr[1].arrival_s, 2.5, 1e-12);
    assert_float_equal(arr[2].arrival_s, 3.0, 1e-12);

    memset(s, 0, sizeof(s));
    s[0].job = 0; s[0].begin_s = 7.0; s[0].end_s = 9.0;    /* job 0 migrated: */
    s[1].job = 0; s[1].begin_s = 1.0; s[1].end_s = 6.0;    /* its first start is 1 */
    s[2].job = 1; s[2].begin_s = 2.5; s[2].end_s = 7.0;    /* no wait */
    s[3].job = 9; s[3].begin_s = 0.0; s[3].end_s = 1.0;    /* not in the trace */
    assert_int_equal(ms_report_wait_times(arr, n, s, 4, &w, &nw), MS_OK);
    assert_int_equal(nw, 2);                                 /* job 2 never started */
    assert_float_equal(w[0], 1.0, 1e-12);
    assert_float_equal(w[1], 0.0, 1e-12);
    assert_int_equal(ms_report_cdf(w, nw, &xs, &p), MS_OK);
    assert_float_equal(xs[0], 0.0, 1e-12);
    assert_float_equal(xs[1], 1.0, 1e-12);
    assert_float_equal(p[0], 0.5, 1e-12);
    assert_float_equal(p[1], 1.0, 1e-12);
    free(xs);
    free(p);
    free(w);
    free(arr);

    assert_int_equal(ms_report_cdf(NULL, 0, &xs, &p), MS_OK);
    assert_null(xs);

    f = mem("job_id,profile\n0,1g\n");
    assert_int_equal(ms_report_read_arrivals(f, "t.csv", &arr, &n, &d), MS_EPARSE);
    fclose(f);
    assert_string_equal(d.field, "arrival_s");
    assert_int_equal(d.line, 1);
    f = mem("job_id,arrival_s\n0,1\nj7,2\n");
    assert_int_equal(ms_report_read_arrivals(f, "t.csv", &arr, &n, &d), MS_EPARSE);
    fclose(f);
    assert_string_equal(d.field, "job_id");
    assert_int_equal(d.line, 3);
    f = mem("job_id,arrival_s\n0,soon\n");
    assert_int_equal(ms_report_read_arrivals(f, "t.csv", &arr, &n, &d), MS_EPARSE);
    fclose(f);
    assert_string_equal(d.field, "arrival_s");
    assert_null(arr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fgd_all),
        cmocka_unit_test(test_fgd_single),
        cmocka_unit_test(test_fgd_malformed),
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_published),
        cmocka_unit_test(test_frag_series),
        cmocka_unit_test(test_waits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
