/* test_svg.c - the SVG charts are well-formed enough and draw what they get. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/research/svg.h"

/* Capture a chart into a string; the caller frees. */
typedef struct cap {
    FILE *f;
    char *buf;
    size_t len;
} cap_t;

static void cap_open(cap_t *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    assert_non_null(c->f);
}

static char *cap_close(cap_t *c)
{
    assert_int_equal(fclose(c->f), 0);
    assert_non_null(c->buf);
    return c->buf;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);

    while ((s = strstr(s, needle)) != NULL) {
        n++;
        s += len;
    }
    return n;
}

static void assert_doc(const char *s)
{
    size_t n = strlen(s);

    assert_true(strncmp(s, "<svg ", 5) == 0);
    assert_true(n > 7);
    assert_string_equal(s + n - 7, "</svg>\n");
    assert_int_equal(count(s, "<svg"), 1);
    /* every element opened with '<' is closed: tags balance roughly */
    assert_int_equal(count(s, "<title>"), count(s, "</title>"));
    assert_int_equal(count(s, "<text"), count(s, "</text>"));
}

static void test_lines(void **state)
{
    double x[] = { 0, 1, 2, 3 }, y1[] = { 1, 4, 2, 8 }, y2[] = { 3, NAN, 5, 1 };
    ms_svg_series_t s[3] = {
        { "alpha", x, y1, 4, false, 0 }, { "beta", NULL, y2, 4, false, 0 }, { "empty", NULL, NULL, 0, false, 0 },
    };
    ms_svg_chart_t ch = { .title = "T", .xlabel = "x", .ylabel = "y" };
    cap_t c;
    char *out;

    (void)state;
    cap_open(&c);
    assert_int_equal(ms_svg_lines(c.f, &ch, s, 3), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "<polyline"), 2);
    assert_int_equal(count(out, "class=\"series\""), 2);
    assert_non_null(strstr(out, ">alpha</text>"));
    assert_non_null(strstr(out, ">empty</text>"));
    assert_null(strstr(out, "nan"));
    assert_null(strstr(out, "inf"));
    free(out);
}

/* A dashed series in another's colour (a target beside its measure): its
 * line and its legend's are dashed and take that colour. */
static void test_dashed(void **state)
{
    double y[] = { 1, 2 }, t[] = { 1.5, 1.5 };
    ms_svg_series_t s[2] = {
        { .name = "m", .y = y, .n = 2 },
        { .name = "m target", .y = t, .n = 2, .dashed = true, .color = 1 },
    };
    char want[96];
    cap_t c;
    char *out;

    (void)state;
    cap_open(&c);
    assert_int_equal(ms_svg_lines(c.f, NULL, s, 2), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "stroke-dasharray"), 2);
    snprintf(want, sizeof(want), "stroke=\"%s\"", ms_svg_color(0));
    assert_int_equal(count(out, want), 4);
    free(out);
}

static void test_step_and_degenerate(void **state)
{
    double y[] = { 5, 5, 5 };
    ms_svg_series_t s = { "flat", NULL, y, 3, false, 0 };
    ms_svg_chart_t ch = { .step = true };
    cap_t c;
    char *out;

    (void)state;
    cap_open(&c);
    assert_int_equal(ms_svg_lines(c.f, &ch, &s, 1), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "<polyline"), 1);
    assert_null(strstr(out, "nan"));
    free(out);

    /* no series at all still gives a document */
    cap_open(&c);
    assert_int_equal(ms_svg_lines(c.f, NULL, NULL, 0), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "<polyline"), 0);
    free(out);
}

static void test_bars(void **state)
{
    const char *groups[] = { "low", "medium", "high" };
    const char *series[] = { "static", "fa" };
    double v[] = { 10, 8, 20, 15, 30, NAN };
    double e[] = { 1, 0, 2, 1.5, 3, 1 };
    ms_svg_bars_t b = { 3, 2, groups, series, v, e };
    ms_svg_chart_t ch = { .title = "makespan", .ylabel = "s" };
    cap_t c;
    char *out;

    (void)state;
    cap_open(&c);
    assert_int_equal(ms_svg_bars(c.f, &ch, &b), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "class=\"bar\""), 5);    /* the NaN is skipped */
    assert_int_equal(count(out, "class=\"err\""), 4);    /* zero error and NaN bar: none */
    assert_int_equal(count(out, "class=\"key\""), 2);
    assert_non_null(strstr(out, ">medium</text>"));
    free(out);

    b.err = NULL;
    cap_open(&c);
    assert_int_equal(ms_svg_bars(c.f, NULL, &b), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "class=\"err\""), 0);
    free(out);
}

static void test_cdf(void **state)
{
    double a[] = { 3, 1, 2 }, b[] = { 0.5 };
    const double *samples[] = { a, b, NULL };
    size_t n[] = { 3, 1, 0 };
    const char *names[] = { "a", "b", "none" };
    cap_t c;
    char *out;

    (void)state;
    cap_open(&c);
    assert_int_equal(ms_svg_cdf(c.f, NULL, names, samples, n, 3), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "<polyline"), 2);
    free(out);
}

static void test_gantt(void **state)
{
    ms_geom_t *g = NULL;
    ms_segment_t segs[] = {
        { 0, 0, 0, 0, 0.0, 10.0 },
        { 1, 0, 4, 2, 2.0, 30.0 },
        { 2, 3, 0, 4, 5.0, 50.0 },
        { 3, 1, -1, 1, 0.0, 20.0 },   /* a time-slice segment */
        { 4, 9, 0, 0, 0.0, 20.0 },    /* GPU out of range: skipped */
    };
    cap_t c;
    char *out;

    (void)state;
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    cap_open(&c);
    assert_int_equal(ms_svg_gantt(c.f, NULL, g, 4, segs, 5), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_int_equal(count(out, "class=\"seg\""), 4);
    assert_int_equal(count(out, "class=\"key\""), ms_geom_nprofiles(g));
    assert_non_null(strstr(out, "3g.20gb"));
    assert_int_equal(count(out, ">GPU "), 4);
    free(out);
    assert_int_equal(ms_svg_gantt(stdout, NULL, g, 0, segs, 1), MS_EINVAL);
    ms_geom_destroy(g);
}

/* Input-sized work: a range narrow against its magnitude, or one that
 * overflows, still gives a bounded number of ticks (it used to loop on
 * v += st with v not moving); a Gantt chart of GPU 2e9 draws 64 bands. */
static void test_bounded(void **state)
{
    static const double x1[] = { 1e17, 1e17 + 64 }, y1[] = { 1e17, 1e17 + 32 };
    static const double x2[] = { -1e308, 1e308 }, y2[] = { -1e308, 1e308 };
    ms_svg_series_t s[2] = { { "narrow", x1, y1, 2, false, 0 }, { "wide", x2, y2, 2, false, 0 } };
    ms_segment_t seg = { 0, 2000000000, 0, 0, 0.0, 10.0 };
    ms_geom_t *g = NULL;
    cap_t c;
    char *out;

    (void)state;
    for (int i = 0; i < 2; i++) {
        cap_open(&c);
        assert_int_equal(ms_svg_lines(c.f, NULL, &s[i], 1), MS_OK);
        out = cap_close(&c);
        assert_doc(out);
        assert_true(count(out, "<text") < 200);
        free(out);
    }
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    cap_open(&c);
    assert_int_equal(ms_svg_gantt(c.f, NULL, g, 2000000001, &seg, 1), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_true(strlen(out) < 100000);
    assert_int_equal(count(out, "class=\"seg\""), 0);   /* GPU 2e9 is not drawn */
    assert_non_null(strstr(out, "GPUs 0-63 of 2000000001 shown"));
    free(out);
    ms_geom_destroy(g);
}

static void test_escape(void **state)
{
    ms_svg_series_t s = { "a<b & \"c\" 'd'>", NULL, NULL, 0, false, 0 };
    ms_svg_chart_t ch = { .title = "<script>x</script>" };
    cap_t c;
    char *out;

    (void)state;
    cap_open(&c);
    assert_int_equal(ms_svg_lines(c.f, &ch, &s, 1), MS_OK);
    out = cap_close(&c);
    assert_doc(out);
    assert_null(strstr(out, "<script>"));
    assert_non_null(strstr(out, "&lt;script&gt;x&lt;/script&gt;"));
    assert_non_null(strstr(out, "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"));
    free(out);

    cap_open(&c);
    ms_svg_escape(c.f, "x\x01y&");
    out = cap_close(&c);
    assert_string_equal(out, "xy&amp;");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_dashed),
        cmocka_unit_test(test_step_and_degenerate),
        cmocka_unit_test(test_bars),
        cmocka_unit_test(test_cdf),
        cmocka_unit_test(test_gantt),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
