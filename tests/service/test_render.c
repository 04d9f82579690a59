/* test_render.c - JSON written as text (src/daemon/jtext.c) and a job's
 * JSON (svc_job_render in src/service/api.c), checked against jansson: the
 * numbers are written byte for byte as jansson writes them, every string
 * reads back as it went in and is quoted as jansson quotes it, the
 * canonical request is jansson's byte for byte (canon_ref.h), and a job's
 * text parses to the fields of its view with its request as the canonical
 * body. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "migsched/rng.h"
#include "service/canon_ref.h"
#include "service/svc.h"

static char *jansson_real(double v)
{
    json_t *r = json_real(v);
    char *s = json_dumps(r, JSON_ENCODE_ANY | JSON_COMPACT);

    json_decref(r);
    return s;
}

static void test_real_as_jansson(void **state)
{
    static const double V[] = { 0.5, 1764612345.123456, 1764612345.0, 3.0, -2.5, 1e300, 1e-7,
                                -1.5e-300, 123456789012345678.0, 0.1, 1.0 / 3.0, DBL_MAX,
                                DBL_MIN, 1e17, 1e16, 60.0 };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(V) / sizeof(V[0]); i++) {
        ms_jtext_t t = { 0 };
        char *want = jansson_real(V[i]), *got;

        ms_jtext_real(&t, V[i]);
        got = ms_jtext_take(&t);
        assert_non_null(want);
        assert_non_null(got);
        assert_string_equal(got, want);
        free(want);
        free(got);
    }
}

static void test_real_not_finite_is_null(void **state)
{
    ms_jtext_t t = { 0 };
    char *got;

    (void)state;
    ms_jtext_real(&t, NAN);
    ms_jtext_raw(&t, ",");
    ms_jtext_real(&t, INFINITY);
    got = ms_jtext_take(&t);
    assert_string_equal(got, "null,null");
    free(got);
}

static void test_int_extremes(void **state)
{
    ms_jtext_t t = { 0 };
    char *got;

    (void)state;
    ms_jtext_int(&t, LLONG_MIN);
    ms_jtext_raw(&t, " ");
    ms_jtext_int(&t, LLONG_MAX);
    got = ms_jtext_take(&t);
    assert_string_equal(got, "-9223372036854775808 9223372036854775807");
    free(got);
}

/* Every string reads back as itself, whatever bytes below 0x20 it holds. */
static void test_string_reads_back(void **state)
{
    static const char *const S[] = { "", "plain", "q\"uote", "back\\slash", "nl\nand\ttab",
                                     "\x01\x1f ctl", "ünïcödé ✓", "}\",\"labels\":{" };
    char all[32];
    size_t i;

    (void)state;
    for (i = 0; i < 31; i++)
        all[i] = (char)(i + 1);
    all[31] = '\0';
    for (i = 0; i <= sizeof(S) / sizeof(S[0]); i++) {
        const char *s = i < sizeof(S) / sizeof(S[0]) ? S[i] : all;
        ms_jtext_t t = { 0 };
        json_error_t je;
        json_t *back;
        char *text;

        ms_jtext_str(&t, s);
        text = ms_jtext_take(&t);
        back = json_loads(text, JSON_DECODE_ANY, &je);
        assert_non_null(back);
        assert_true(json_is_string(back));
        assert_string_equal(json_string_value(back), s);
        json_decref(back);
        free(text);
    }
}

static char *jansson_str(const char *s)
{
    json_t *v = json_string(s);
    char *d = v != NULL ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

    json_decref(v);
    return d;
}

/* Every byte below 0x80 alone and in company, and multi-byte UTF-8, quoted
 * exactly as jansson quotes it. */
static void test_string_as_jansson(void **state)
{
    static const char *const S[] = { "", "plain", "q\"uote/sl", "\\\b\f\n\r\t\x7f", "ünïcödé ✓ 𝄞" };
    char one[4];
    int c;
    size_t i;

    (void)state;
    for (c = 1; c < 0x80; c++) {
        ms_jtext_t t = { 0 };
        char *want, *got;

        snprintf(one, sizeof(one), "%c%c", 'a', c);
        ms_jtext_str(&t, one);
        got = ms_jtext_take(&t);
        want = jansson_str(one);
        assert_non_null(want);
        assert_string_equal(got, want);
        free(got);
        free(want);
    }
    for (i = 0; i < sizeof(S) / sizeof(S[0]); i++) {
        ms_jtext_t t = { 0 };
        char *want = jansson_str(S[i]), *got;

        ms_jtext_str(&t, S[i]);
        got = ms_jtext_take(&t);
        assert_string_equal(got, want);
        free(got);
        free(want);
    }
}

/* a random string: printable ASCII, the bytes jansson escapes, UTF-8 */
static json_t *rnd_str(ms_rng_t *g, size_t max)
{
    static const char *const P[] = { "a", "Z", "0", "-", "\"", "\\", "/", "\n", "\t", "\x01",
                                     "\x1f", "\x7f", "é", "✓", "𝄞", "}", ",", ":", "=" };
    char buf[512];
    size_t n = 0, len = 1 + ms_rng_below(g, max);

    while (n + 4 < len && n + 4 < sizeof(buf)) {
        const char *p = P[ms_rng_below(g, sizeof(P) / sizeof(P[0]))];

        memcpy(buf + n, p, strlen(p));
        n += strlen(p);
    }
    if (n == 0)
        buf[n++] = 'x';
    return json_stringn(buf, n);
}

static json_t *rnd_real(ms_rng_t *g, double lo, double hi)
{
    static const double R[] = { 0.0, -0.0, 1.0, 60.0, 0.1, 1e-300, 5e-324, 123456.789, 1e9, 2.5e-7 };
    double v = ms_rng_below(g, 2) ? R[ms_rng_below(g, sizeof(R) / sizeof(R[0]))] : (double)(ms_rng_next(g) >> 33) / 7.0;

    if (v > hi)
        v = hi;
    if (v < lo)
        v = lo;
    return ms_rng_below(g, 3) == 0 && v == (double)(long long)v ? json_integer((long long)v) : json_real(v);
}

/* Random valid requests: svc_req_parse's canonical form is jansson's
 * (canon_ref.h) byte for byte. */
static void test_canon_as_jansson(void **state)
{
    ms_rng_t g;
    int it, same = 0;

    (void)state;
    ms_rng_seed(&g, 7);
    for (it = 0; it < 3000; it++) {
        json_t *o = json_object(), *labels;
        char *body, *id = NULL, *canon = NULL, *want;
        svc_req_t req;
        svc_err_t err;
        int i, nl;

        /* well-formed profiles only (a malformed one is a 400,
         * svc_profile_syntax); odd text is tried in model and labels */
        static const char *const PROFILES[] = { "1g.5gb", "3G.20GB", "1g+me", "1g.2xmem", "7g", "99g",
                                                "5g.25gb", "1g.24gb+me.all" };

        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "profile", json_string(PROFILES[ms_rng_below(&g, 8)]));
        else
            json_object_set_new(o, "mem_gb", ms_rng_below(&g, 4) ? rnd_real(&g, 0.001, 100000) : json_real(0.001));
        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "model", rnd_str(&g, 63));
        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "isolation", json_string(ms_rng_below(&g, 2) ? "mig" : "any"));
        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "gang", json_integer(1 + (long long)ms_rng_below(&g, 64)));
        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "priority", json_integer((long long)ms_rng_below(&g, 2000001) - 1000000));
        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "migratable", json_boolean(ms_rng_below(&g, 2)));
        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "duration_s", rnd_real(&g, 0, 1e9));
        if (ms_rng_below(&g, 2))
            json_object_set_new(o, "estimate_s", rnd_real(&g, 0, 1e9));
        if (ms_rng_below(&g, 3) == 0)   /* 0 now and then: the same as none */
            json_object_set_new(o, "checkpoint_s", ms_rng_below(&g, 4) ? rnd_real(&g, 0, 1e9) : json_integer(0));
        if (ms_rng_below(&g, 2)) {   /* a tenant's name: [A-Za-z0-9._-], 1..63 */
            static const char TC[] = "abcXYZ019._-";
            char tenant[64];
            size_t tl = 1 + ms_rng_below(&g, 63);

            for (i = 0; i < (int)tl; i++)
                tenant[i] = TC[ms_rng_below(&g, sizeof(TC) - 1)];
            tenant[tl] = '\0';
            json_object_set_new(o, "tenant", json_string(tenant));
        }
        if (ms_rng_below(&g, 2)) {
            labels = json_object();
            nl = (int)ms_rng_below(&g, 33);
            for (i = 0; i < nl; i++) {
                json_t *k = rnd_str(&g, 60);

                if (strchr(json_string_value(k), '=') == NULL && strchr(json_string_value(k), ',') == NULL)
                    json_object_set_new(labels, json_string_value(k), rnd_str(&g, 250));
                json_decref(k);
            }
            json_object_set_new(o, "labels", labels);
        }
        body = json_dumps(o, JSON_COMPACT);
        assert_non_null(body);
        if (svc_req_parse(body, strlen(body), &id, &req, &canon, &err) != 0)
            fail_msg("request %d refused: %s: %s\n%s", it, err.field, err.msg, body);
        want = canon_ref(&req);
        assert_non_null(want);
        assert_string_equal(canon, want);
        same++;
        free(want);
        free(canon);
        free(id);
        free(body);
        svc_req_free(&req);
        json_decref(o);
    }
    assert_int_equal(same, 3000);
}

static void test_growth_and_reset(void **state)
{
    ms_jtext_t t = { 0 };
    char *got;
    int i;

    (void)state;
    for (i = 0; i < 10000; i++)
        ms_jtext_raw(&t, "0123456789");
    assert_int_equal(t.len, 100000);
    assert_int_equal(t.p[t.len], '\0');
    ms_jtext_reset(&t);
    assert_int_equal(t.len, 0);
    ms_jtext_raw(&t, "x");
    got = ms_jtext_take(&t);
    assert_string_equal(got, "x");
    assert_null(t.p);
    free(got);
    got = ms_jtext_take(&t);   /* nothing appended: an empty string, not NULL */
    assert_string_equal(got, "");
    free(got);
}

static void expect_member(const char *s, const char *key, const char *want)
{
    const char *at = NULL;
    size_t n = 0;
    bool ok = ms_jtext_member(s, strlen(s), key, &at, &n);

    if (want == NULL) {
        assert_false(ok);
        return;
    }
    assert_true(ok);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(at, want, n);
}

static void test_member(void **state)
{
    (void)state;
    expect_member("{\"a\":1,\"labels\":{\"k\":\"v\"}}", "labels", "{\"k\":\"v\"}");
    expect_member(" { \"labels\" : { } , \"b\" : [1,{\"c\":\"]\"}] } ", "labels", "{ }");
    /* the key inside a string, braces inside values: only the top level counts */
    expect_member("{\"a\":\"\\\",\\\"labels\\\":{\",\"labels\":{\"k\":\"v}\\\"{\"}}", "labels",
                  "{\"k\":\"v}\\\"{\"}");
    expect_member("{\"x\":{\"labels\":{}},\"labels\":[1]}", "labels", "[1]");
    expect_member("{\"gang\":1,\"model\":null}", "model", "null");
    expect_member("{\"gang\":1}", "labels", NULL);          /* absent */
    expect_member("{}", "labels", NULL);
    expect_member("{\"labels\":{}", "labels", NULL);        /* not closed */
    expect_member("{\"labels\":{}}x", "labels", NULL);      /* something after it */
    expect_member("[{\"labels\":{}}]", "labels", NULL);     /* not an object */
    expect_member("{\"labels\" {}}", "labels", NULL);       /* no colon */
    expect_member("{\"labels\":}", "labels", NULL);         /* no value */
    expect_member("{\"labels\":{},}", "labels", NULL);      /* a trailing comma */
    expect_member("{\"la\nbels\":{}}", "labels", NULL);     /* a control byte in a key */
    expect_member("{\"labels\":\"\\", "labels", NULL);      /* cut inside an escape */
    expect_member("", "labels", NULL);
}

/* The job's text parses, and holds the view's fields and the canonical body. */
static void test_job_text(void **state)
{
    const char *body_in = "{\"id\":\"j-1\",\"profile\":\"2g.10gb\",\"labels\":{\"team\":\"a\\\"}\"}}";
    char *id = NULL, *canon = NULL, *text;
    svc_req_t req;
    svc_err_t err;
    svc_jview_t v;
    json_error_t je;
    json_t *o, *want;

    (void)state;
    assert_int_equal(svc_req_parse(body_in, strlen(body_in), &id, &req, &canon, &err), 0);
    memset(&v, 0, sizeof(v));
    v.state = MS_JOB_RUNNING;
    v.submit_t = 1764612345.25;
    v.start_t = 1764612346.5;
    v.kept_s = 0.1 + 299.9;   /* not exact in binary: written as jansson writes it */
    v.reason = (char *)(uintptr_t)"placed \"after\" a\nmove";
    v.place.node = 0;
    snprintf(v.place.node_name, sizeof(v.place.node_name), "%s", "a");
    v.place.gpu = 1;
    v.place.start = 4;
    v.place.ninst = 1;
    snprintf(v.place.profile, sizeof(v.place.profile), "%s", "2g.10gb");
    text = svc_job_text(id, canon, &v, NULL);
    assert_non_null(text);
    o = json_loads(text, 0, &je);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "id")), "j-1");
    assert_string_equal(json_string_value(json_object_get(o, "state")), "running");
    assert_true(json_real_value(json_object_get(o, "submitted_at")) == v.submit_t);
    assert_true(json_real_value(json_object_get(o, "started_at")) == v.start_t);
    assert_true(json_is_null(json_object_get(o, "ended_at")));
    assert_true(json_real_value(json_object_get(o, "kept_s")) == v.kept_s);
    want = json_loads(canon, 0, &je);
    assert_true(json_equal(json_object_get(o, "request"), want));
    assert_true(json_equal(json_object_get(o, "labels"), json_object_get(want, "labels")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "labels"), "team")), "a\"}");
    assert_string_equal(json_string_value(json_object_get(o, "reason")), v.reason);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "placement"), "node")), "a");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "placement"), "gpu")), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "placement"), "start")), 4);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "placement"), "profile")),
                        "2g.10gb");
    json_decref(want);
    json_decref(o);
    free(text);

    /* queued, no reason, a body that does not scan: no request, no placement */
    memset(&v, 0, sizeof(v));
    v.state = MS_JOB_QUEUED;
    v.submit_t = 2.0;
    v.place.node = -1;
    text = svc_job_text("j-2", "{\"profile\":", &v, NULL);
    o = json_loads(text, 0, &je);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "state")), "queued");
    assert_null(json_object_get(o, "request"));
    assert_null(json_object_get(o, "labels"));
    assert_null(json_object_get(o, "reason"));
    assert_null(json_object_get(o, "placement"));
    assert_null(json_object_get(o, "kept_s"));   /* none kept: not written */
    json_decref(o);
    free(text);
    free(id);
    free(canon);
    svc_req_free(&req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_as_jansson),   cmocka_unit_test(test_real_not_finite_is_null),
        cmocka_unit_test(test_int_extremes),      cmocka_unit_test(test_string_reads_back),
        cmocka_unit_test(test_growth_and_reset),  cmocka_unit_test(test_member),
        cmocka_unit_test(test_job_text),          cmocka_unit_test(test_string_as_jansson),
        cmocka_unit_test(test_canon_as_jansson),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
