/* test_extender.c - the extender's wire parser and replies
 * (src/service/extender_json.c) on the samples kube-scheduler v1.37.2 sent
 * (tests/k8s/contract/), and on what it must refuse. The daemon-side
 * behaviour is tests/cli/test_service_extender.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/extender.h"
#include "ext_args_ref.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (s = malloc((size_t)n + 1)) != NULL) {
        if (fread(s, 1, (size_t)n, f) != (size_t)n) {
            free(s);
            s = NULL;
        } else {
            s[n] = '\0';
        }
    }
    fclose(f);
    return s;
}

static void parse_sample(const char *name, svc_ext_args_t *a)
{
    char path[256], *s;
    svc_err_t err;

    snprintf(path, sizeof(path), "tests/k8s/contract/%s.request.json", name);
    s = slurp(path);
    assert_non_null(s);
    memset(&err, 0, sizeof(err));
    assert_int_equal(svc_ext_parse_args(s, strlen(s), NULL, a, &err), 0);
    free(s);
}

static void test_filter_sample(void **state)
{
    svc_ext_args_t a;
    const char *want[] = { "node-a", "node-b", "node-c", "node-d" };
    int i;

    (void)state;
    parse_sample("filter", &a);
    assert_string_equal(a.pod.uid, "bd697059-45f1-4723-930b-f43376b7f860");
    assert_string_equal(a.pod.name, "mig-1g.5gb-1");
    assert_string_equal(a.pod.ns, "default");
    assert_string_equal(a.pod.profile, "1g.5gb");
    assert_int_equal(a.pod.gang, 1);
    assert_false(a.pod.share);
    assert_null(a.pod.bad);
    assert_int_equal(a.nnodes, 4);
    for (i = 0; i < 4; i++)
        assert_string_equal(a.nodes[i], want[i]);
    svc_ext_args_free(&a);
    parse_sample("prioritize", &a);
    assert_int_equal(a.nnodes, 2);
    assert_string_equal(a.pod.profile, "1g.5gb");
    svc_ext_args_free(&a);
    parse_sample("filter-unresolvable", &a);
    assert_string_equal(a.pod.profile, "4g.20gb");
    svc_ext_args_free(&a);
}

static void test_bind_sample(void **state)
{
    char *s = slurp("tests/k8s/contract/bind.request.json");
    svc_ext_bind_t b;
    svc_err_t err;

    (void)state;
    assert_non_null(s);
    assert_int_equal(svc_ext_parse_bind(s, strlen(s), &b, &err), 0);
    assert_string_equal(b.name, "mig-1g.5gb-1");
    assert_string_equal(b.ns, "default");
    assert_string_equal(b.uid, "bd697059-45f1-4723-930b-f43376b7f860");
    assert_string_equal(b.node, "node-b");
    svc_ext_bind_free(&b);
    free(s);
}

/* A pod's resources: requests win over limits, containers add up, one kind
 * only, whole numbers only; the gang annotation. */
static void pod_case(const char *res, const char *ann, const char *prof, double mem, bool share, int gang,
                     const char *bad)
{
    char body[2048];
    svc_ext_args_t a;
    svc_err_t err;

    snprintf(body, sizeof(body),
             "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"%s%s%s},\"spec\":{\"containers\":[%s]}},"
             "\"NodeNames\":[\"n\"]}",
             ann != NULL ? ",\"annotations\":{" : "", ann != NULL ? ann : "", ann != NULL ? "}" : "", res);
    memset(&err, 0, sizeof(err));
    assert_int_equal(svc_ext_parse_args(body, strlen(body), NULL, &a, &err), 0);
    if (bad != NULL) {
        assert_non_null(a.pod.bad);
        assert_non_null(strstr(a.pod.bad, bad));
    } else {
        assert_null(a.pod.bad);
        if (prof != NULL)
            assert_string_equal(a.pod.profile, prof);
        else
            assert_null(a.pod.profile);
        assert_true(a.pod.mem_gb == mem);
        assert_int_equal(a.pod.share, share);
        assert_int_equal(a.pod.gang, gang);
        if (ann != NULL && strstr(ann, "checkpoint-s") != NULL)
            assert_true(a.pod.checkpoint_s == 600.0);
    }
    svc_ext_args_free(&a);
}

static void test_pod_resources(void **state)
{
    (void)state;
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-2g\":\"1\"}}}", NULL, "2g", 0, false, 1, NULL);
    pod_case("{\"resources\":{\"requests\":{\"migsched.io/mig-3g.20gb\":1},"
             "\"limits\":{\"migsched.io/mig-3g.20gb\":\"5\"}}}", NULL, "3g.20gb", 0, false, 1, NULL);
    pod_case("{\"resources\":{\"requests\":{\"migsched.io/mem-gb\":\"8\"}}},"
             "{\"resources\":{\"requests\":{\"migsched.io/mem-gb\":\"4\",\"cpu\":\"2\"}}}",
             NULL, NULL, 12, false, 1, NULL);
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/gpu-share\":\"1\"}}}", NULL, NULL, 0, true, 1, NULL);
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-7g.40gb\":\"4\"}}}", NULL, "7g.40gb", 0, false, 4,
             NULL);
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-7g.40gb\":\"1\"}}}", "\"migsched.io/gang\":\"2\"",
             "7g.40gb", 0, false, 2, NULL);
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-1g\":\"1\",\"migsched.io/gpu-share\":\"1\"}}}", NULL,
             NULL, 0, false, 1, "one of");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-1g\":\"1\"}}},"
             "{\"resources\":{\"limits\":{\"migsched.io/mig-2g\":\"1\"}}}", NULL, NULL, 0, false, 1, "one MIG");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-1g\":\"500m\"}}}", NULL, NULL, 0, false, 1,
             "whole number");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/gpus\":\"1\"}}}", NULL, NULL, 0, false, 1, "unknown");
    pod_case("{\"resources\":{\"limits\":{\"cpu\":\"1\"}}}", NULL, NULL, 0, false, 1, "no migsched.io");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/gpu-share\":\"2\"}}}", NULL, NULL, 0, false, 1,
             "must be 1");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-7g\":\"1\"}}}", "\"migsched.io/gang\":\"x\"", NULL,
             0, false, 1, "gang");
    /* the checkpoint annotation: seconds in [0, 1e9] as a string */
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-7g\":\"1\"}}}", "\"migsched.io/checkpoint-s\":\"600\"",
             "7g", 0, false, 1, NULL);
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-7g\":\"1\"}}}", "\"migsched.io/checkpoint-s\":\"-1\"",
             NULL, 0, false, 1, "checkpoint-s");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-7g\":\"1\"}}}", "\"migsched.io/checkpoint-s\":600",
             NULL, 0, false, 1, "checkpoint-s");
    /* the daemon's profile rule (svc_profile_syntax): a name that is no
     * profile is refused here, as POST /v1/jobs refuses it (400); a
     * generic name a model has is taken */
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-0g.5gb\":\"1\"}}}", NULL, NULL, 0, false, 1,
             "no such profile");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-3g.\":\"1\"}}}", NULL, NULL, 0, false, 1,
             "no such profile");
    pod_case("{\"resources\":{\"limits\":{\"migsched.io/mig-1g+me\":\"1\"}}}", NULL, "1g+me", 0, false, 1,
             NULL);
}

static void refused(const char *body, const char *field, int bind)
{
    svc_ext_args_t a;
    svc_ext_bind_t b;
    svc_err_t err;

    memset(&err, 0, sizeof(err));
    if (bind) {
        assert_int_equal(svc_ext_parse_bind(body, strlen(body), &b, &err), -1);
        assert_null(b.uid);
    } else {
        assert_int_equal(svc_ext_parse_args(body, strlen(body), NULL, &a, &err), -1);
        assert_null(a.nodes);
        assert_null(a.pod.uid);
    }
    assert_true(err.code >= 400 && err.code < 500);
    assert_string_equal(err.field, field);
    assert_true(strlen(err.msg) > 0);
}

static void test_refused(void **state)
{
    (void)state;
    refused("", "", 0);
    refused("{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"}},\"NodeNames\":[\"a\",3]}", "NodeNames", 0);
    refused("{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"}},\"Nodes\":{\"items\":[{}]}}",
            "Nodes.items[].metadata.name", 0);
    refused("{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"},\"spec\":{\"containers\":[1]}},\"NodeNames\":[]}",
            "Pod.spec.containers[0].resources", 0);
    refused("{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\",\"namespace\":5}},\"NodeNames\":[]}",
            "Pod.metadata.namespace", 0);
    refused("{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"}},\"NodeNames\":[],\"NodeNames\":[]}", "", 0);
    refused("{\"PodName\":\"p\",\"PodNamespace\":\"d\",\"PodUID\":\"u\"}", "Node", 1);
    refused("{\"PodName\":\"\",\"PodNamespace\":\"d\",\"PodUID\":\"u\",\"Node\":\"n\"}", "PodName", 1);
}

/* Go decodes case-insensitively; so do we (exact names first). */
static void test_any_case(void **state)
{
    const char *body = "{\"pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"},\"spec\":{\"containers\":"
                       "[{\"resources\":{\"limits\":{\"migsched.io/mig-1g\":\"1\"}}}]}},\"nodenames\":[\"a\"]}";
    svc_ext_args_t a;
    svc_err_t err;

    (void)state;
    assert_int_equal(svc_ext_parse_args(body, strlen(body), NULL, &a, &err), 0);
    assert_int_equal(a.nnodes, 1);
    assert_string_equal(a.pod.profile, "1g");
    svc_ext_args_free(&a);
}

/* The replies have the upstream names and types (ecosystem.md 1.1); an
 * omitted node is in neither list. */
static void test_replies(void **state)
{
    svc_ext_verdict_t v[5] = { { "a", NULL, false, false }, { "b", "full", false, false },
                               { "c", "never", true, false }, { "d", NULL, false, true },
                               { "e", "full", false, true } };
    const char *nodes[2] = { "a", "b" };
    int scores[2] = { 10, 3 };
    char *s;

    (void)state;
    s = svc_ext_filter_reply(v, 5, NULL);
    assert_string_equal(s, "{\"Nodes\":null,\"NodeNames\":[\"a\"],\"FailedNodes\":{\"b\":\"full\"},"
                           "\"FailedAndUnresolvableNodes\":{\"c\":\"never\"},\"Error\":\"\"}");
    free(s);
    s = svc_ext_prioritize_reply(nodes, scores, 2);
    assert_string_equal(s, "[{\"Host\":\"a\",\"Score\":10},{\"Host\":\"b\",\"Score\":3}]");
    free(s);
    s = svc_ext_bind_reply("no room");
    assert_string_equal(s, "{\"Error\":\"no room\"}");
    free(s);
    s = svc_ext_bind_reply(NULL);
    assert_string_equal(s, "{\"Error\":\"\"}");
    free(s);
}

/* The replies are written by hand (not through jansson): every string
 * comes back as it went in through a JSON parser, quotes, backslashes,
 * control characters and multi-byte characters included, and a byte that
 * is not UTF-8 (a reason cut inside a character) becomes U+FFFD. */
static void test_replies_escape(void **state)
{
    static const char *const names[] = { "q\"uo\\te", "ctl\x01\n\t", "\xc3\xa9t\xc3\xa9-\xe2\x82\xac", "plain" };
    svc_ext_verdict_t v[4] = { { names[0], NULL, false, false }, { names[1], "bad \xc3", false, false },
                               { names[2], "never \"x\"", true, false }, { names[3], NULL, false, false } };
    int scores[4] = { 1, 2, 3, 4 };
    json_t *o, *x;
    char *s;
    int i;

    (void)state;
    s = svc_ext_filter_reply(v, 4, "err\\\x7f");
    assert_non_null(s);
    o = json_loads(s, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(o);
    assert_true(json_is_null(json_object_get(o, "Nodes")));
    x = json_object_get(o, "NodeNames");
    assert_int_equal(json_array_size(x), 2);
    assert_string_equal(json_string_value(json_array_get(x, 0)), names[0]);
    assert_string_equal(json_string_value(json_array_get(x, 1)), names[3]);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "FailedNodes"), names[1])),
                        "bad \xef\xbf\xbd");
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "FailedAndUnresolvableNodes"), names[2])),
                        "never \"x\"");
    assert_string_equal(json_string_value(json_object_get(o, "Error")), "err\\\x7f");
    json_decref(o);
    free(s);
    s = svc_ext_prioritize_reply(names, scores, 4);
    o = json_loads(s, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(o);
    for (i = 0; i < 4; i++) {
        x = json_array_get(o, (size_t)i);
        assert_string_equal(json_string_value(json_object_get(x, "Host")), names[i]);
        assert_int_equal(json_integer_value(json_object_get(x, "Score")), scores[i]);
    }
    json_decref(o);
    free(s);
    s = svc_ext_prioritize_reply(names, scores, 0);
    assert_string_equal(s, "[]");
    free(s);
    s = svc_ext_filter_reply(NULL, 0, "oom");
    assert_string_equal(s, "{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{},"
                           "\"FailedAndUnresolvableNodes\":{},\"Error\":\"oom\"}");
    free(s);
}

/* A pod becomes a /v1/jobs request that parses. */
static void test_job_body(void **state)
{
    svc_ext_pod_t p = { .uid = "uid-1", .name = "pod", .ns = "ns", .profile = "2g.10gb", .gang = 1,
                        .checkpoint_s = 600 };
    char *body = svc_ext_job_body(&p, true), *id = NULL, *canon = NULL;
    svc_req_t req;
    svc_err_t err;

    (void)state;
    assert_non_null(body);
    assert_int_equal(svc_req_parse(body, strlen(body), &id, &req, &canon, &err), 0);
    assert_string_equal(req.profile, "2g.10gb");
    assert_int_equal(req.isolation, MS_ISO_MIG);
    assert_true(req.checkpoint_s == 600.0);   /* the annotation's, as POST /v1/jobs takes it */
    assert_string_equal(json_string_value(json_object_get(req.labels, "k8s.uid")), "uid-1");
    assert_string_equal(json_string_value(json_object_get(req.labels, "k8s.pod")), "ns/pod");
    svc_req_free(&req);
    free(body);
    free(id);
    free(canon);
}

/* ExtenderArgs with one pod: metadata and spec as given (JSON text). */
static int parse_pod(const char *md, const char *spec, const char *label, svc_ext_args_t *a, svc_err_t *err)
{
    char body[2048];

    snprintf(body, sizeof(body),
             "{\"Pod\":{\"metadata\":{\"uid\":\"u1\",\"name\":\"p1\"%s},\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"limits\":{\"migsched.io/mig-1g\":\"1\"}}}]%s}},\"NodeNames\":[\"a\"]}",
             md, spec);
    memset(err, 0, sizeof(*err));
    memset(a, 0, sizeof(*a));
    return svc_ext_parse_args(body, strlen(body), label, a, err);
}

/* A pod's tenant (its namespace, or the value of the label the operator
 * names), its priority (spec.priority, clamped to the API's range) and
 * preemptionPolicy: Never; the job body carries the first two only when
 * they say something (a pod without them is the same request as before). */
static void test_pod_tenant_priority(void **state)
{
    static const struct {
        const char *md, *spec, *label, *tenant;
        int prio;
        bool never;
    } OK[] = {
        { "", "", NULL, "default", 0, false },
        { ",\"namespace\":\"team-a\"", "", NULL, "team-a", 0, false },
        { ",\"namespace\":\"team-a\",\"labels\":{\"t\":\"sla\"}", "", "t", "sla", 0, false },
        { ",\"namespace\":\"team-a\",\"labels\":{\"t\":\"sla\"}", "", NULL, "team-a", 0, false },
        { ",\"namespace\":\"team-a\",\"labels\":{\"x\":\"sla\"}", "", "t", "team-a", 0, false },
        { ",\"namespace\":\"team-a\",\"labels\":{\"t\":\"\"}", "", "t", "team-a", 0, false },
        { "", ",\"priority\":1000", NULL, "default", 1000, false },
        { "", ",\"priority\":-5,\"preemptionPolicy\":\"Never\"", NULL, "default", -5, true },
        { "", ",\"priority\":2000001000", NULL, "default", 1000000, false },
        { "", ",\"priority\":-2147483648", NULL, "default", -1000000, false },
        { "", ",\"priority\":null,\"preemptionPolicy\":\"PreemptLowerPriority\"", NULL, "default", 0, false },
    };
    static const struct {
        const char *md, *spec, *field;
    } BAD[] = {
        { "", ",\"priority\":\"high\"", "Pod.spec.priority" },
        { "", ",\"priority\":1.5", "Pod.spec.priority" },
        { "", ",\"preemptionPolicy\":7", "Pod.spec.preemptionPolicy" },
        { ",\"labels\":[]", "", "Pod.metadata.labels" },
        { ",\"labels\":{\"t\":7}", "", "Pod.metadata.labels" },
        { ",\"labels\":{\"t\":\"0123456789012345678901234567890123456789012345678901234567890123\"}", "",
          "Pod.metadata.labels" },
    };
    svc_ext_args_t a;
    svc_err_t err;
    svc_req_t req;
    char *body, *id, *canon;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(OK) / sizeof(OK[0]); i++) {
        assert_int_equal(parse_pod(OK[i].md, OK[i].spec, OK[i].label, &a, &err), 0);
        assert_string_equal(a.pod.tenant, OK[i].tenant);
        assert_int_equal(a.pod.priority, OK[i].prio);
        assert_int_equal(a.pod.never_preempts, OK[i].never);
        /* the body: the request a job of it gets */
        body = svc_ext_job_body(&a.pod, true);
        assert_non_null(body);
        id = canon = NULL;
        assert_int_equal(svc_req_parse(body, strlen(body), &id, &req, &canon, &err), 0);
        assert_int_equal(req.priority, OK[i].prio);
        if (strcmp(OK[i].tenant, "default") == 0)
            assert_true(req.tenant == NULL || strcmp(req.tenant, "default") == 0);
        else
            assert_string_equal(req.tenant, OK[i].tenant);
        assert_int_equal(strstr(body, "priority") != NULL, OK[i].prio != 0);
        svc_req_free(&req);
        free(body);
        free(id);
        free(canon);
        /* not declared: no tenant in the body (the default tenant's job) */
        body = svc_ext_job_body(&a.pod, false);
        assert_non_null(body);
        assert_null(strstr(body, "tenant"));
        free(body);
        svc_ext_args_free(&a);
    }
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        assert_int_equal(parse_pod(BAD[i].md, BAD[i].spec, "t", &a, &err), -1);
        assert_int_equal(err.code, 400);
        assert_string_equal(err.field, BAD[i].field);
    }
}

/* --- NodeNames read from the raw body (ext_names.c) ---------------------- */

typedef struct gen {
    char *b;
    size_t n, cap;
    uint64_t r;
} gen_t;

static unsigned gen_rand(gen_t *g, unsigned k)
{
    g->r ^= g->r << 13;
    g->r ^= g->r >> 7;
    g->r ^= g->r << 17;
    return (unsigned)(g->r % k);
}

static void gen_put(gen_t *g, const char *s, size_t n)
{
    if (g->n + n < g->cap) {
        memcpy(g->b + g->n, s, n);
        g->n += n;
    }
}

static void gen_s(gen_t *g, const char *s) { gen_put(g, s, strlen(s)); }

static void gen_ws(gen_t *g)
{
    static const char *const W[] = { "", "", "", " ", "\n", " \t\r\n ", "\f", "\v" };

    gen_s(g, W[gen_rand(g, g->r % 50 == 0 ? 8 : 6)]);
}

/* Pieces of names: JSON's escapes, the ones jansson refuses, raw bytes it
 * refuses or must check as UTF-8. */
static const char *const NAME_BITS[] = {
    "node-", "7", "a.b", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0041", "\\u00e9",
    "\\u20AC", "\\uD83D\\uDE00", "\\ud83d\\ude00", "\\uDBFF\\uDFFF", "\\uD800", "\\uDC00", "\\udfff",
    "\\uDBFF", "\\uDBFF\\uE000", "\\uD800\\u0041",
    "\\uD800\\", "\\u0000", "\\u12", "\\uZZZZ", "\\x", "\\'", "\x01", "\x7f", "\xc3\xa9", "\xff", "\xc3",
    "\xed\xa0\x80", "\\", "\"",
};

static void gen_name(gen_t *g)
{
    char longname[260];
    unsigned k = gen_rand(g, 20), i;

    gen_s(g, "\"");
    if (k == 0) {
        /* at and around the 253-byte limit, some of it escaped */
        i = 252 + gen_rand(g, 3);
        memset(longname, 'x', i);
        longname[i] = '\0';
        gen_s(g, longname);
        if (gen_rand(g, 2))
            gen_s(g, "\\u0078");
    } else if (k > 1) {
        gen_s(g, "node-");
        for (i = gen_rand(g, 3); i > 0; i--)
            gen_s(g, gen_rand(g, 3) ? "1" : NAME_BITS[gen_rand(g, sizeof(NAME_BITS) / sizeof(*NAME_BITS))]);
    } /* else an empty name */
    gen_s(g, "\"");
}

static void gen_names(gen_t *g)
{
    static const char *const NOT[] = { "3", "null", "[]", "{}", "true", "[\"a\"]" };
    unsigned n = gen_rand(g, 6), i;

    gen_s(g, "[");
    gen_ws(g);
    for (i = 0; i < n; i++) {
        if (i > 0 && gen_rand(g, 40) != 0)
            gen_s(g, ",");
        gen_ws(g);
        if (gen_rand(g, 30) == 0)
            gen_s(g, NOT[gen_rand(g, 6)]);
        else
            gen_name(g);
        gen_ws(g);
    }
    if (gen_rand(g, 40) == 0)
        gen_s(g, ",");
    if (gen_rand(g, 40) != 0)
        gen_s(g, "]");
}

static void gen_body(gen_t *g)
{
    static const char *const KEY[] = { "\"NodeNames\"", "\"NodeNames\"", "\"NodeNames\"", "\"nodenames\"",
                                       "\"NODENAMES\"", "\"Node\\u004eames\"", "\"NodeName\"" };
    static const char *const OTHER[] = {
        "\"Nodes\":null", "\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"m\"}}]}", "\"NodeNames\":null",
        "\"x\":\"\\\"NodeNames\\\":[\\\"z\\\"]\"", "\"y\":{\"NodeNames\":[\"z\"],\"a\":[[],{}]}",
        "\"z\":[1,-2.5e3,true,false,null,\"]\"]", "\"NodeNames\":\"a\"", "\"NodeNames\":{}", "\"w\":tru",
    };
    const char *pod = "{\"metadata\":{\"uid\":\"u\",\"name\":\"p\",\"namespace\":\"ns\",\"labels\":{\"team\":\"t\"}},"
                      "\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"migsched.io/mig-1g.5gb\":\"1\"}}}]}}";
    unsigned order = gen_rand(g, 3), extra = gen_rand(g, 4), i;

    g->n = 0;
    gen_ws(g);
    gen_s(g, "{");
    for (i = 0; i < 3; i++) {
        gen_ws(g);
        if (i > 0)
            gen_s(g, ",");
        gen_ws(g);
        if (i == order) {
            gen_s(g, "\"Pod\"");
            gen_ws(g);
            gen_s(g, ":");
            gen_ws(g);
            gen_s(g, gen_rand(g, 30) ? pod : "{\"metadata\":{}}");
        } else if (i == (order + 1) % 3 || extra == 0) {
            gen_s(g, KEY[gen_rand(g, 16) < 10 ? 0 : gen_rand(g, 7)]);
            gen_ws(g);
            gen_s(g, ":");
            gen_ws(g);
            gen_names(g);
        } else {
            gen_s(g, OTHER[gen_rand(g, sizeof(OTHER) / sizeof(*OTHER))]);
        }
    }
    gen_ws(g);
    gen_s(g, gen_rand(g, 50) ? "}" : "}}");
    gen_ws(g);
    /* and now and then a byte changed, or the body cut short */
    for (i = gen_rand(g, 4) == 0 ? 1 + gen_rand(g, 3) : 0; i > 0 && g->n > 0; i--)
        g->b[gen_rand(g, (unsigned)g->n)] = "\"\\[]{},: a0\x00\xff"[gen_rand(g, 14)];
    if (gen_rand(g, 20) == 0 && g->n > 0)
        g->n = gen_rand(g, (unsigned)g->n);
}

/* svc_ext_parse_args reads NodeNames itself and gives jansson the rest;
 * on every body - valid, cut short, mutated, with each JSON escape, lone
 * surrogates, \u0000, raw control bytes, non-ASCII, duplicate, any-case or
 * escaped keys, NodeNames nested or inside a string, names at the length
 * limit - it answers as the jansson parser does, error text included. */
static void test_names_fast_equals_tree(void **state)
{
    static const char *const TAKEN[] = {
        "{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"}},\"NodeNames\":[]}",
        (" { \"NodeNames\" : [ \"a\\u00e9\\uD83D\\uDE00\\/\\\\\\\"\\b\\f\\n\\r\\t\" , \"b\" ] , "
         "\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\",\"x\":\"\\\"NodeNames\\\":[1]\"}}}\n"),
        "{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"},\"NodeNames\":{}},\"Nodes\":null,\"NodeNames\":[\"c\"]}",
    };
    char buf[8192];
    gen_t g = { .b = buf, .cap = sizeof(buf), .r = 0x9E3779B97F4A7C15ull };
    svc_ext_names_t nm;
    bool ok;
    int i, taken = 0, accepted = 0, refused_n = 0;

    (void)state;
    for (i = 0; i < (int)(sizeof(TAKEN) / sizeof(*TAKEN)); i++) {
        /* these the scan takes (not handed back to jansson) */
        assert_int_equal(svc_ext_names_scan(TAKEN[i], strlen(TAKEN[i]), &nm), 0);
        free(nm.buf);
        assert_true(ext_args_same(TAKEN[i], strlen(TAKEN[i]), NULL, &ok));
        assert_true(ok);
    }
    for (i = 0; i < 40000; i++) {
        gen_body(&g);
        if (!ext_args_same(buf, g.n, i % 2 ? "team" : NULL, &ok))
            fail_msg("parsers differ on %.*s", (int)g.n, buf);
        if (svc_ext_names_scan(buf, g.n, &nm) == 0) {
            free(nm.buf);
            taken++;
        }
        accepted += ok;
        refused_n += !ok;
    }
    /* both kinds, and the scan's path, were exercised */
    assert_true(taken > 5000 && accepted > 5000 && refused_n > 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_sample), cmocka_unit_test(test_bind_sample),
        cmocka_unit_test(test_pod_resources), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_any_case),      cmocka_unit_test(test_replies),
        cmocka_unit_test(test_replies_escape),
        cmocka_unit_test(test_job_body),      cmocka_unit_test(test_pod_tenant_priority),
        cmocka_unit_test(test_names_fast_equals_tree),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
