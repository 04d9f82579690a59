/* test_extender.c - the extender's wire parser and replies
 * (src/service/extender_json.c) on the samples kube-scheduler v1.37.2 sent
 * (tests/k8s/contract/), and on what it must refuse. The daemon-side
 * behaviour is tests/cli/test_service_extender.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/extender.h"

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
    assert_int_equal(svc_ext_parse_args(s, strlen(s), a, &err), 0);
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
    assert_int_equal(svc_ext_parse_args(body, strlen(body), &a, &err), 0);
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
        assert_int_equal(svc_ext_parse_args(body, strlen(body), &a, &err), -1);
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
    assert_int_equal(svc_ext_parse_args(body, strlen(body), &a, &err), 0);
    assert_int_equal(a.nnodes, 1);
    assert_string_equal(a.pod.profile, "1g");
    svc_ext_args_free(&a);
}

/* The replies have the upstream names and types (ecosystem.md 1.1). */
static void test_replies(void **state)
{
    svc_ext_verdict_t v[3] = { { "a", NULL, false }, { "b", "full", false }, { "c", "never", true } };
    const char *nodes[2] = { "a", "b" };
    int scores[2] = { 10, 3 };
    char *s;

    (void)state;
    s = svc_ext_filter_reply(v, 3, NULL);
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

/* A pod becomes a /v1/jobs request that parses. */
static void test_job_body(void **state)
{
    svc_ext_pod_t p = { "uid-1", "pod", "ns", "2g.10gb", 0, false, 1, NULL };
    char *body = svc_ext_job_body(&p), *id = NULL, *canon = NULL;
    svc_req_t req;
    svc_err_t err;

    (void)state;
    assert_non_null(body);
    assert_int_equal(svc_req_parse(body, strlen(body), &id, &req, &canon, &err), 0);
    assert_string_equal(req.profile, "2g.10gb");
    assert_int_equal(req.isolation, MS_ISO_MIG);
    assert_string_equal(json_string_value(json_object_get(req.labels, "k8s.uid")), "uid-1");
    assert_string_equal(json_string_value(json_object_get(req.labels, "k8s.pod")), "ns/pod");
    svc_req_free(&req);
    free(body);
    free(id);
    free(canon);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_sample), cmocka_unit_test(test_bind_sample),
        cmocka_unit_test(test_pod_resources), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_any_case),      cmocka_unit_test(test_replies),
        cmocka_unit_test(test_job_body),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
