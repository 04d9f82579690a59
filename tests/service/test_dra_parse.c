/* test_dra_parse.c - the DRA allocator's pure parts (src/service/dra_qty.c,
 * dra_cel.c, dra_obj.c, dra_pod.c, dra_out.c): quantities, the CEL subset
 * (what it evaluates, what it refuses and where, errors as CEL has them),
 * the API's objects as kube-apiserver v1.37 serves them (every field the
 * allocator reads; bad input named, never guessed), and what the allocator
 * writes (the webhook's JSONPatch, the allocation with its
 * allocationTimestamp, merge patches with their resourceVersion, the
 * config carried from class and claim). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"
#include "service/kctl.h"

/* --- quantities ------------------------------------------------------------------- */

static void test_qty(void **state)
{
    static const struct { const char *s; double v; } OK[] = {
        { "40Gi", 40.0 * 1073741824.0 }, { "42144366592", 42144366592.0 }, { "1.5k", 1500.0 }, { "100m", 0.1 },
        { "1e3", 1000.0 }, { "2E-1", 0.2 }, { "10Mi", 10485760.0 }, { "+3", 3.0 }, { "-2Ki", -2048.0 }, { "0", 0.0 },
        { ".5", 0.5 },
    };
    static const char *const BAD[] = { "", "Gi", "1Xi", "1..2", "1e", "1e1234", "abc", "1 Gi", "0x10", NULL };
    char big[80];
    double v;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(OK) / sizeof(OK[0]); i++) {
        assert_int_equal(dra_qty_parse(OK[i].s, &v), 0);
        assert_true(v == OK[i].v);
    }
    for (i = 0; BAD[i] != NULL; i++)
        assert_int_equal(dra_qty_parse(BAD[i], &v), -1);
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(dra_qty_parse(big, &v), -1);   /* longer than 64: refused */
}

/* --- CEL ----------------------------------------------------------------------------- */

static dra_kv_t A_MIG[] = {
    { (char *)"gpu.nvidia.com/type", { DRA_V_STR, (char *)"mig", 0, false, 0 } },
    { (char *)"gpu.nvidia.com/profile", { DRA_V_STR, (char *)"1g.5gb", 0, false, 0 } },
    { (char *)"gpu.nvidia.com/productName", { DRA_V_STR, (char *)"NVIDIA A100-SXM4-40GB", 0, false, 0 } },
    { (char *)"gpu.nvidia.com/cudaComputeCapability", { DRA_V_VER, (char *)"8.0.0", 0, false, 0 } },
    { (char *)"gpu.nvidia.com/index", { DRA_V_INT, NULL, 3, false, 0 } },
    { (char *)"gpu.nvidia.com/healthy", { DRA_V_BOOL, NULL, 0, true, 0 } },
};
static dra_kv_t C_MIG[] = {
    { (char *)"gpu.nvidia.com/memory", { DRA_V_QTY, NULL, 0, false, 4864.0 * 1048576.0 } },
    { (char *)"gpu.nvidia.com/multiprocessors", { DRA_V_QTY, NULL, 0, false, 14 } },
};

static int eval(const char *expr, char *why, size_t wl)
{
    dra_devview_t d = { "gpu.nvidia.com", A_MIG, 6, C_MIG, 2 };
    dra_cel_t *c = NULL;
    int r;

    if (dra_cel_compile(expr, &c, why, wl) != 0)
        fail_msg("%s does not compile: %s", expr, why);
    r = dra_cel_eval(c, &d, why, wl);
    dra_cel_free(c);
    return r;
}

static void test_cel_eval(void **state)
{
    static const struct { const char *e; int r; } T[] = {
        { "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", DRA_CEL_TRUE },
        { "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", DRA_CEL_TRUE },
        { "device.attributes[\"gpu.nvidia.com\"].profile == \"2g.10gb\"", DRA_CEL_FALSE },
        { "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"4Gi\"))", DRA_CEL_TRUE },
        { "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"10Gi\"))", DRA_CEL_FALSE },
        { "device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity(\"5Gi\"))", DRA_CEL_TRUE },
        { "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity(\"4864Mi\")) == 0", DRA_CEL_TRUE },
        { "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity(\"10Gi\")) >= 0", DRA_CEL_FALSE },
        { "!(device.attributes['gpu.nvidia.com'].type == 'gpu')", DRA_CEL_TRUE },
        { "device.attributes['gpu.nvidia.com'].type == 'gpu' || device.attributes['gpu.nvidia.com'].profile != 'x'",
          DRA_CEL_TRUE },
        { "device.attributes['gpu.nvidia.com'].index >= 3 && device.attributes['gpu.nvidia.com'].index < 4",
          DRA_CEL_TRUE },
        { "device.attributes['gpu.nvidia.com'].healthy", DRA_CEL_TRUE },
        { "device.attributes['gpu.nvidia.com'].healthy == false", DRA_CEL_FALSE },
        { "has(device.attributes['gpu.nvidia.com'].profile)", DRA_CEL_TRUE },
        { "has(device.attributes['gpu.nvidia.com'].nothere)", DRA_CEL_FALSE },
        { "device.attributes['gpu.nvidia.com'].cudaComputeCapability == '8.0.0'", DRA_CEL_ERR },   /* VER vs STR */
        { "true", DRA_CEL_TRUE },
        /* CEL's errors: a missing key, a type mismatch; absorbed by && and || */
        { "device.attributes['gpu.nvidia.com'].nothere == 'x'", DRA_CEL_ERR },
        { "device.attributes['gpu.nvidia.com'].index == 'x'", DRA_CEL_ERR },
        { "device.attributes['gpu.nvidia.com'].nothere == 'x' || true", DRA_CEL_TRUE },
        { "device.attributes['gpu.nvidia.com'].nothere == 'x' && false", DRA_CEL_FALSE },
        { "device.attributes['gpu.nvidia.com'].profile", DRA_CEL_ERR },   /* not a boolean */
        { "device.capacity['gpu.nvidia.com'].memory == 1", DRA_CEL_ERR },
        /* another driver's domain: not this device's attribute */
        { "device.attributes['mig.migsched.io'].profile == '1g.5gb'", DRA_CEL_ERR },
    };
    char why[300];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
        int r = eval(T[i].e, why, sizeof(why));

        if (r != T[i].r)
            fail_msg("%s: %d, expected %d (%s)", T[i].e, r, T[i].r, why);
    }
    assert_int_equal(eval("device.attributes['gpu.nvidia.com'].nothere == 'x'", why, sizeof(why)), DRA_CEL_ERR);
    assert_non_null(strstr(why, "gpu.nvidia.com/nothere"));   /* the error names the key */
}

/* What is outside the subset fails to compile, naming the position. */
static void test_cel_refuse(void **state)
{
    static const struct { const char *e; const char *at; } T[] = {
        { "device.attributes['gpu.nvidia.com'].profile in ['1g.5gb']", "character 45" },
        { "semver(device.attributes['gpu.nvidia.com'].cudaComputeCapability) > semver('8.0.0')", "character 1" },
        { "size(device.attributes) > 1", "character 1" },
        { "device.attributes['gpu.nvidia.com'].profile.startsWith('1g')", "character 44" },
        { "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(10)", "quantity" },
        { "device.attributes['gpu.nvidia.com'].profile == 'a\\'b'", "escapes" },
        { "device.attributes['gpu.nvidia.com'].profile == ", "ends too early" },
        { "device.attributes['gpu.nvidia.com'].profile == '1g' )", "after a complete expression" },
        { "device.name == 'gpu-0'", "device.name" },
        { "0x10 == 16", "decimal" },
        { "device.driver == 'a' ; true", "unexpected ';'" },
        { "", "ends too early" },
    };
    char why[300], deep[2200];
    dra_cel_t *c;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
        c = NULL;
        if (dra_cel_compile(T[i].e, &c, why, sizeof(why)) == 0) {
            dra_cel_free(c);
            fail_msg("%s compiled", T[i].e);
        }
        assert_null(c);
        if (strstr(why, T[i].at) == NULL)
            fail_msg("%s: '%s' lacks '%s'", T[i].e, why, T[i].at);
        assert_non_null(strstr(why, "CEL expression"));
    }
    /* nesting is bounded: no stack exhaustion */
    memset(deep, '(', 1000);
    snprintf(deep + 1000, sizeof(deep) - 1000, "true");
    memset(deep + 1004, ')', 1000);
    deep[2004] = '\0';
    assert_int_equal(dra_cel_compile(deep, &c, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "nested"));
    memset(deep, '!', 1000);
    snprintf(deep + 1000, sizeof(deep) - 1000, "true");
    assert_int_equal(dra_cel_compile(deep, &c, why, sizeof(why)), -1);
}

static void test_cel_drivers(void **state)
{
    dra_cel_t *c;
    char why[200];

    (void)state;
    assert_int_equal(dra_cel_compile("device.driver == 'gpu.nvidia.com' && "
                                     "device.attributes['gpu.nvidia.com'].type == 'mig'", &c, why, sizeof(why)), 0);
    assert_true(dra_cel_names_driver(c, "gpu.nvidia.com"));
    assert_false(dra_cel_names_driver(c, "mig.migsched.io"));
    dra_cel_free(c);
}

/* --- objects ----------------------------------------------------------------------------- */

static json_t *load(const char *text)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);

    if (o == NULL)
        fail_msg("test JSON: %s at %d", je.text, je.position);
    return o;
}

#define SLICE_HEAD "{\"metadata\":{\"name\":\"n1-gpu-0\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n1\"," \
                   "\"pool\":{\"name\":\"n1\",\"generation\":3,\"resourceSliceCount\":2},"

static void test_slice(void **state)
{
    json_t *o = load(SLICE_HEAD "\"sharedCounters\":[{\"name\":\"gpu-0-counter-set\",\"counters\":{"
                     "\"memory-slice-0\":{\"value\":\"1\"},\"memory\":{\"value\":\"40Gi\"}}}],"
                     "\"devices\":[{\"name\":\"gpu-0-mig-1g5gb-19-0\",\"attributes\":{\"type\":{\"string\":\"mig\"},"
                     "\"profile\":{\"string\":\"1g.5gb\"},\"other.example.com/x\":{\"int\":7},\"b\":{\"bool\":true},"
                     "\"cc\":{\"version\":\"8.0.0\"}},\"capacity\":{\"memory\":{\"value\":\"4864Mi\"}},"
                     "\"consumesCounters\":[{\"counterSet\":\"gpu-0-counter-set\",\"counters\":{"
                     "\"memory-slice-0\":{\"value\":\"1\"}}}]}]}}");
    dra_slice_t s;
    char why[300];
    const dra_val_t *v;

    (void)state;
    assert_int_equal(dra_parse_slice(o, &s, why, sizeof(why)), 0);
    assert_string_equal(s.name, "n1-gpu-0");
    assert_string_equal(s.node, "n1");
    assert_int_equal(s.gen, 3);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.ndev, 1);
    assert_int_equal(s.nsets, 1);
    assert_int_equal(s.sets[0].n, 2);
    /* unqualified attributes are the driver's; qualified ones keep their domain */
    v = dra_kv_get(s.dev[0].attrs, s.dev[0].nattrs, "gpu.nvidia.com/profile");
    assert_non_null(v);
    assert_string_equal(v->s, "1g.5gb");
    v = dra_kv_get(s.dev[0].attrs, s.dev[0].nattrs, "other.example.com/x");
    assert_non_null(v);
    assert_int_equal(v->i, 7);
    assert_int_equal(dra_kv_get(s.dev[0].attrs, s.dev[0].nattrs, "gpu.nvidia.com/cc")->kind, DRA_V_VER);
    assert_true(dra_kv_get(s.dev[0].caps, s.dev[0].ncaps, "gpu.nvidia.com/memory")->q == 4864.0 * 1048576.0);
    assert_string_equal(s.dev[0].cons[0].name, "gpu-0-counter-set");
    dra_slice_free(&s);
    json_decref(o);
}

static void test_slice_bad(void **state)
{
    static const struct { const char *json, *field; } T[] = {
        { "{\"spec\":{}}", "metadata, spec or spec.pool" },
        { SLICE_HEAD "\"devices\":[{\"attributes\":{}}]}}", "spec.devices[0].name" },
        { SLICE_HEAD "\"devices\":[{\"name\":\"d\",\"capacity\":{\"memory\":{\"value\":\"lots\"}}}]}}",
          "spec.devices[0].capacity.memory.value" },
        { SLICE_HEAD "\"devices\":[{\"name\":\"d\",\"attributes\":{\"a\":{\"float\":1.5}}}]}}",
          "spec.devices[0].attributes.a" },
        { SLICE_HEAD "\"devices\":{}}}", "spec.devices: not a list" },
        { "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\",\"generation\":1}}}",
          "resourceSliceCount" },
        { SLICE_HEAD "\"devices\":[{\"name\":\"d\",\"consumesCounters\":[{\"counterSet\":\"c\",\"counters\":{"
                     "\"memory-slice-0\":{}}}]}]}}",
          "consumesCounters[0].counters.memory-slice-0" },
    };
    char why[300];
    dra_slice_t s;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
        json_t *o = load(T[i].json);

        if (dra_parse_slice(o, &s, why, sizeof(why)) == 0)
            fail_msg("%s parsed", T[i].json);
        if (strstr(why, T[i].field) == NULL)
            fail_msg("'%s' lacks '%s'", why, T[i].field);
        json_decref(o);
    }
}

#define CLAIM_MD "\"metadata\":{\"name\":\"p1-gpu-x\",\"namespace\":\"t\",\"uid\":\"u-1\",\"resourceVersion\":\"42\"," \
                 "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]," \
                 "\"annotations\":{\"migsched.io/dra-allocator\":\"me\"}," \
                 "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p1\",\"uid\":\"pod-1\"}]}"

static void test_claim(void **state)
{
    json_t *o = load("{" CLAIM_MD ",\"spec\":{\"devices\":{\"requests\":[{\"name\":\"a\",\"exactly\":{"
                     "\"deviceClassName\":\"mig.nvidia.com\",\"count\":2,\"selectors\":[{\"cel\":{\"expression\":\"true\"}}]}},"
                     "{\"name\":\"b\",\"firstAvailable\":[{\"name\":\"x\",\"deviceClassName\":\"c\"}]},"
                     "{\"name\":\"c\",\"exactly\":{\"deviceClassName\":\"c\",\"allocationMode\":\"All\"}}],"
                     "\"constraints\":[{\"requests\":[\"a\",\"c\"],\"matchAttribute\":\"gpu.nvidia.com/parentUUID\"}],"
                     "\"config\":[{\"requests\":[\"a\"],\"opaque\":{\"driver\":\"gpu.nvidia.com\",\"parameters\":{}}}]}},"
                     "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"a\",\"driver\":\"gpu.nvidia.com\","
                     "\"pool\":\"n1\",\"device\":\"gpu-0-mig-1g5gb-19-6\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":"
                     "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]},"
                     "\"allocationTimestamp\":\"2026-12-02T06:28:40Z\"},\"reservedFor\":[{\"resource\":\"pods\","
                     "\"name\":\"p1\",\"uid\":\"pod-1\"},{\"apiGroup\":\"scheduling.k8s.io\",\"resource\":\"podgroups\","
                     "\"name\":\"g\",\"uid\":\"g-1\"}]}}");
    dra_claim_t c;
    char why[300];

    (void)state;
    assert_int_equal(dra_parse_claim(o, &c, why, sizeof(why)), 0);
    assert_string_equal(c.nskey, "t/p1-gpu-x");
    assert_string_equal(c.owner, "pod-1");
    assert_true(c.ours);
    assert_int_equal(c.nfin, 1);
    assert_int_equal(c.spec.nreq, 3);
    assert_int_equal(c.spec.req[0].count, 2);
    assert_null(c.spec.req[0].why);
    assert_non_null(strstr(c.spec.req[1].why, "firstAvailable"));
    assert_non_null(strstr(c.spec.req[2].why, "allocationMode All"));
    assert_int_equal(c.spec.ncon, 1);
    assert_int_equal(c.spec.con[0].nreqs, 2);
    assert_non_null(c.spec.config);
    assert_true(c.allocated);
    assert_string_equal(c.node, "n1");
    assert_string_equal(c.res[0].device, "gpu-0-mig-1g5gb-19-6");
    assert_true(c.alloc_t > 1.7e9);
    assert_int_equal(c.nreserved, 1);
    assert_true(c.reserved_other);
    dra_claim_free(&c);
    json_decref(o);

    o = load("{" CLAIM_MD ",\"spec\":{\"devices\":{\"requests\":[{\"name\":\"a\",\"exactly\":{"
             "\"deviceClassName\":\"m\",\"count\":17}}]}}}");
    assert_int_equal(dra_parse_claim(o, &c, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "spec.devices.requests[0].exactly.count"));
    json_decref(o);
}

static void test_pod(void **state)
{
    json_t *o = load("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"t\",\"uid\":\"pod-1\",\"resourceVersion\":\"9\"},"
                     "\"spec\":{\"schedulingGates\":[{\"name\":\"migsched.io/dra\"},{\"name\":\"kueue.x-k8s.io/admission\"}],"
                     "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"mig1g\"},"
                     "{\"name\":\"shared\",\"resourceClaimName\":\"big\"}]},"
                     "\"status\":{\"phase\":\"Pending\",\"resourceClaimStatuses\":[{\"name\":\"gpu\","
                     "\"resourceClaimName\":\"p1-gpu-abc\"}]}}");
    dra_pod_t p;
    char why[300];

    (void)state;
    assert_int_equal(dra_parse_pod(o, &p, why, sizeof(why)), 0);
    assert_int_equal(p.ngates, 2);
    assert_int_equal(p.npc, 2);
    assert_string_equal(p.pc[0].tmpl, "mig1g");
    assert_string_equal(p.pc[0].claim, "p1-gpu-abc");   /* from the status */
    assert_string_equal(p.pc[1].claim, "big");
    assert_false(p.done);
    assert_null(p.node);
    assert_int_equal(p.priority, 0);
    dra_pod_free(&p);
    json_decref(o);
    o = load("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"t\",\"uid\":\"u\"},\"spec\":{\"resourceClaims\":"
             "[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"a\",\"resourceClaimName\":\"b\"}]}}");
    assert_int_equal(dra_parse_pod(o, &p, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "spec.resourceClaims[0]"));
    json_decref(o);
    /* spec.priority: a system class's 2000001000 clamps to ms_sched's 1e6;
     * none is 0; a string is refused naming the field */
    o = load("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"t\",\"uid\":\"u\"},\"spec\":{\"priority\":2000001000}}");
    assert_int_equal(dra_parse_pod(o, &p, why, sizeof(why)), 0);
    assert_int_equal(p.priority, 1000000);
    dra_pod_free(&p);
    json_decref(o);
    o = load("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"t\",\"uid\":\"u\"},\"spec\":{\"priority\":-5}}");
    assert_int_equal(dra_parse_pod(o, &p, why, sizeof(why)), 0);
    assert_int_equal(p.priority, -5);
    dra_pod_free(&p);
    json_decref(o);
    o = load("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"t\",\"uid\":\"u\"},\"spec\":{\"priority\":\"high\"}}");
    assert_int_equal(dra_parse_pod(o, &p, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "spec.priority"));
    json_decref(o);
}

/* --- the webhook ------------------------------------------------------------------------- */

static int b64val(char c)
{
    const char *T = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = strchr(T, c);

    return c != '\0' && p != NULL ? (int)(p - T) : -1;
}

/* The response's JSONPatch, decoded (the test's own base64 reader). */
static json_t *patch_of(const char *resp)
{
    json_t *o = load(resp), *r = json_object_get(o, "response"), *p;
    const char *b = json_string_value(json_object_get(r, "patch"));
    char out[1024];
    size_t i, n = 0;

    assert_true(json_is_true(json_object_get(r, "allowed")));
    if (b == NULL) {
        json_decref(o);
        return NULL;
    }
    assert_string_equal(json_string_value(json_object_get(r, "patchType")), "JSONPatch");
    for (i = 0; b[i] != '\0' && b[i] != '=' && n + 1 < sizeof(out); i += 4) {
        int v0 = b64val(b[i]), v1 = b64val(b[i + 1]), v2 = b64val(b[i + 2]), v3 = b64val(b[i + 3]);

        assert_true(v0 >= 0 && v1 >= 0);
        out[n++] = (char)(v0 << 2 | v1 >> 4);
        if (v2 >= 0)
            out[n++] = (char)((v1 & 15) << 4 | v2 >> 2);
        if (v3 >= 0)
            out[n++] = (char)((v2 & 3) << 6 | v3);
        if (v2 < 0 || v3 < 0)
            break;
    }
    out[n] = '\0';
    p = load(out);
    json_decref(o);
    return p;
}

#define REVIEW(obj) "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"r-1\"," \
                    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\"," \
                    "\"namespace\":\"t\",\"object\":" obj "}}"

static void test_review(void **state)
{
    static const char *const BODY[] = {
        REVIEW("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimTemplateName\":\"t\"}]}}"),
        REVIEW("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"schedulingGates\":[{\"name\":\"other\"}],\"resourceClaims\":"
               "[{\"name\":\"g\",\"resourceClaimTemplateName\":\"t\"}]}}"),
    };
    dra_review_t r;
    char why[300], *resp;
    json_t *p;
    int i;

    (void)state;
    for (i = 0; i < 2; i++) {
        assert_int_equal(dra_parse_review(BODY[i], strlen(BODY[i]), &r, why, sizeof(why)), 0);
        assert_true(r.is_pod_create);
        assert_string_equal(r.pod.ns, "t");   /* the request's namespace */
        resp = dra_out_review(&r, true);
        p = patch_of(resp);
        assert_non_null(p);
        assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "op")), "add");
        if (i == 0) {   /* no gates yet: the list is made */
            assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "path")), "/spec/schedulingGates");
            assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(json_array_get(p, 0),
                                                                                                  "value"), 0), "name")),
                                SVC_DRA_GATE);
        } else {        /* appended to the others */
            assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "path")),
                                "/spec/schedulingGates/-");
        }
        json_decref(p);
        free(resp);
        resp = dra_out_review(&r, false);
        assert_null(patch_of(resp));
        assert_non_null(strstr(resp, "\"uid\":\"r-1\""));
        free(resp);
        dra_review_free(&r);
    }
    assert_int_equal(dra_parse_review("{\"kind\":\"AdmissionReview\"}", 25, &r, why, sizeof(why)), -1);
    assert_int_equal(dra_parse_review("not json", 8, &r, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "not JSON"));
}

/* --- writes ------------------------------------------------------------------------------ */

/* The allocationTimestamp trap (docs/dra.md): an allocation without it is
 * never bound (kube-scheduler's PreBind sets it, and the API server
 * refuses that change). Without dra_out_allocation's timestamp this fails. */
static void test_allocation(void **state)
{
    dra_out_result_t r[2] = { { "a", "gpu.nvidia.com", "n1", "gpu-0-mig-1g5gb-19-6" },
                              { "a", "gpu.nvidia.com", "n1", "gpu-0-mig-1g5gb-19-5" } };
    json_t *cfg = load("[{\"source\":\"FromClass\",\"requests\":[\"a\"],\"opaque\":{\"driver\":\"d\",\"parameters\":{}}}]");
    json_t *al = dra_out_allocation(r, 2, "n1", cfg, 1796194000.5), *st;
    const char *ts = json_string_value(json_object_get(al, "allocationTimestamp"));
    char *text;
    double t;

    (void)state;
    assert_non_null(ts);
    assert_true(svc_kctl_time_parse(ts, &t));
    assert_true(t > 1796193999.0 && t < 1796194001.0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(al, "devices"), "results")), 2);
    assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(json_object_get(
                            json_array_get(json_object_get(json_object_get(al, "nodeSelector"), "nodeSelectorTerms"), 0),
                            "matchFields"), 0), "values"), 0)), "n1");
    assert_int_equal(json_array_size(json_object_get(json_object_get(al, "devices"), "config")), 1);
    text = dra_out_status("77", al);
    st = load(text);
    assert_string_equal(json_string_value(json_object_get(json_object_get(st, "metadata"), "resourceVersion")), "77");
    assert_non_null(json_object_get(json_object_get(st, "status"), "allocation"));
    json_decref(st);
    free(text);
    text = dra_out_status("78", NULL);   /* a deallocation: allocation null */
    st = load(text);
    assert_true(json_is_null(json_object_get(json_object_get(st, "status"), "allocation")));
    json_decref(st);
    free(text);
    json_decref(al);
    json_decref(cfg);
}

static void test_patches(void **state)
{
    char *fin[] = { (char *)"x/other" }, *gates[] = { (char *)"kueue" }, *text;
    dra_claim_t c;
    json_t *p, *o;

    (void)state;
    memset(&c, 0, sizeof(c));
    c.fin = fin;
    c.nfin = 1;
    p = dra_out_claim_meta(&c, "replica-1");
    text = dra_out_with_rv(p, "5");
    o = load(text);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion")), "5");
    assert_int_equal(json_array_size(json_object_get(json_object_get(o, "metadata"), "finalizers")), 2);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(o, "metadata"), "annotations"),
                                                          "migsched.io/dra-allocator")), "replica-1");
    json_decref(o);
    free(text);
    json_decref(p);
    text = dra_out_ungate("9", gates, 1);
    o = load(text);
    assert_int_equal(json_array_size(json_object_get(json_object_get(o, "spec"), "schedulingGates")), 1);
    json_decref(o);
    free(text);
    text = dra_out_ungate("9", NULL, 0);   /* the last gate: the field goes */
    o = load(text);
    assert_true(json_is_null(json_object_get(json_object_get(o, "spec"), "schedulingGates")));
    json_decref(o);
    free(text);
    text = dra_out_taint_rule_named("gpu.nvidia.com");
    o = load(text);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(o, "spec"), "taint"), "effect")),
                        "NoSchedule");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(o, "spec"), "deviceSelector"),
                                                          "driver")), "gpu.nvidia.com");
    json_decref(o);
    free(text);
}

static void test_config(void **state)
{
    json_t *cls = load("[{\"opaque\":{\"driver\":\"d\",\"parameters\":{\"k\":1}}}]");
    json_t *claim = load("[{\"requests\":[\"a\"],\"opaque\":{\"driver\":\"d\",\"parameters\":{}}}]");
    json_t *const cfgs[] = { cls };
    const char *const reqs[] = { "a" };
    json_t *out = dra_out_config(cfgs, reqs, 1, claim);

    (void)state;
    assert_int_equal(json_array_size(out), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(out, 0), "source")), "FromClass");
    assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(out, 0), "requests"), 0)), "a");
    assert_string_equal(json_string_value(json_object_get(json_array_get(out, 1), "source")), "FromClaim");
    json_decref(out);
    json_decref(cls);
    json_decref(claim);
}

/* --dra-webhook-timeout: its default, a value, and values out of range or
 * not numbers refused naming the option. */
static void test_webhook_timeout_option(void **state)
{
    const char *bad[] = { "0", "0.01", "31", "abc", "", "nan" };
    svc_cfg_t c;
    size_t i;
    char *argv[] = { (char *)"migschedd", (char *)"--dra", (char *)"--kube-api", (char *)"https://127.0.0.1:1", NULL,
                     NULL };

    (void)state;
    memset(&c, 0, sizeof(c));
    assert_int_equal(svc_cfg_parse(&c, 4, argv), 0);
    assert_true(c.dra->hook_timeout_s == 3.0);   /* below webhook.yaml's timeoutSeconds: 5 */
    svc_cfg_free(&c);
    argv[4] = (char *)"--dra-webhook-timeout=0.5";
    memset(&c, 0, sizeof(c));
    assert_int_equal(svc_cfg_parse(&c, 5, argv), 0);
    assert_true(c.dra->hook_timeout_s == 0.5);
    svc_cfg_free(&c);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char msg[200];
        svc_cfg_t d;

        memset(&d, 0, sizeof(d));
        msg[0] = '\0';
        assert_int_equal(svc_dra_cfg_set(&d, "dra-webhook-timeout", bad[i], msg, sizeof(msg)), -1);
        assert_non_null(strstr(msg, "dra-webhook-timeout"));
        svc_dra_cfg_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qty),        cmocka_unit_test(test_cel_eval),  cmocka_unit_test(test_cel_refuse),
        cmocka_unit_test(test_cel_drivers), cmocka_unit_test(test_slice),    cmocka_unit_test(test_slice_bad),
        cmocka_unit_test(test_claim),      cmocka_unit_test(test_pod),       cmocka_unit_test(test_review),
        cmocka_unit_test(test_allocation), cmocka_unit_test(test_patches),   cmocka_unit_test(test_config),
        cmocka_unit_test(test_webhook_timeout_option),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
