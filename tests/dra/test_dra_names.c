/* test_dra_names.c - the DRA driver's pure parts (src/agent/dra_names.c,
 * dra_slices.c, dra_claim.c) against the geometry tables, for every model:
 *   - every legal (profile, start) of every model is published exactly
 *     once, and its name parses back to (gpu, profile, start); names that
 *     are not ours are refused with the part that is wrong;
 *   - every device's memory-slice counters are exactly its slice mask, and
 *     over every subset of a GPU's MIG devices the counters allow exactly
 *     the layouts the geometry allows (kube-scheduler's arithmetic and
 *     ours agree); the whole GPU excludes everything;
 *   - the slices' layout (counter slices of at most 8 sets, then one
 *     device slice per GPU, one generation and count), and the whole-GPU
 *     and time-sliced kinds;
 *   - the claim decoder and the kubelet's messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dra.h"
#include "dra/v1/api.pb-c.h"
#include "pluginregistration/v1/api.pb-c.h"

static bool dns_label(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

static int popcount16(unsigned v)
{
    int n = 0;

    for (; v != 0; v &= v - 1)
        n++;
    return n;
}

/* --- names ---------------------------------------------------------------- */

static void names_every_placement_once(void **state)
{
    int nm, mi, total = 0;
    const ms_model_t *models = ms_models(&nm);

    (void)state;
    for (mi = 0; mi < nm; mi++) {
        ms_geom_t *g;
        ag_dra_gpu_t gpus[13];
        ag_dra_dev_t *v, back;
        int n, i, k, want = 0, seen = 0;
        char why[256];

        assert_int_equal(ms_geom_create(&models[mi], 0, &g), MS_OK);
        for (i = 0; i < 13; i++)
            gpus[i] = (ag_dra_gpu_t){ g, true, 0, "GPU-x" };
        for (k = 0; k < ms_geom_nprofiles(g); k++)
            want += popcount16(ms_geom_profile(g, k)->start_mask);
        /* GPU 12: the names carry two digits */
        assert_int_equal(ag_dra_devices(&gpus[12], 12, &v, &n), 0);
        for (i = 0; i < n; i++) {
            assert_true(dns_label(v[i].name));
            if (i > 0)
                assert_true(strcmp(v[i - 1].name, v[i].name) < 0);   /* sorted, no duplicate */
            assert_int_equal(ag_dra_parse(gpus, 13, v[i].name, &back, why, sizeof(why)), 0);
            assert_int_equal(back.kind, v[i].kind);
            assert_int_equal(back.gpu, 12);
            assert_int_equal(back.prof, v[i].prof);
            assert_int_equal(back.start, v[i].start);
            if (v[i].kind == AG_DRA_MIG) {
                assert_true((ms_geom_profile(g, v[i].prof)->start_mask >> v[i].start) & 1u);
                assert_non_null(strstr(v[i].name, "gpu-12-mig-"));
                seen++;
            } else {
                assert_string_equal(v[i].name, "gpu-12");
                assert_int_equal(i, 0);   /* the whole GPU sorts first */
            }
        }
        assert_int_equal(seen, want);
        assert_int_equal(n, want + (ag_dra_full_profile(g) >= 0 ? 1 : 0));
        assert_true(n <= AG_DRA_MAX_SLICE_DEVICES);
        total += seen;
        free(v);
        ms_geom_destroy(g);
    }
    assert_true(total > 100);
}

static void names_nvidia_examples(void **state)
{
    ms_geom_t *g;
    char buf[64];

    (void)state;
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    assert_int_equal(ag_dra_name_mig(g, 0, ms_geom_profile_find(g, "1g.5gb"), 0, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "gpu-0-mig-1g5gb-19-0");
    assert_int_equal(ag_dra_name_mig(g, 3, ms_geom_profile_find(g, "3g.20gb"), 4, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "gpu-3-mig-3g20gb-9-4");
    assert_int_equal(ag_dra_name_mig(g, 1, ms_geom_profile_find(g, "7g.40gb"), 0, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "gpu-1-mig-7g40gb-0-0");
    assert_int_equal(ag_dra_profile_token("1g.5gb+me", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "1g5gb-me");
    assert_int_equal(ag_dra_profile_token("1G.24GB-me", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "1g24gb-me");
    assert_int_equal(ag_dra_profile_token("+..", buf, sizeof(buf)), -1);
    assert_int_equal(ag_dra_full_profile(g), ms_geom_profile_find(g, "7g.40gb"));
    ms_geom_destroy(g);
}

static void names_refused(void **state)
{
    static const struct {
        const char *name, *why;
    } BAD[] = {
        { "", "not a device of this driver" },
        { "GPU-0", "not a device of this driver" },
        { "gpu-", "not a number" },
        { "gpu-01", "not a number" },
        { "gpu-0x", "not a number" },
        { "gpu-2", "GPUs 0..1" },
        { "gpu-1-mig-1g5gb-19-0", "MIG mode is off" },
        { "gpu-0-mig-1g5gb-19-7", "cannot start at memory slice 7" },
        { "gpu-0-mig-1g5gb-19-00", "no placement start" },
        { "gpu-0-mig-1g5gb-19-", "no placement start" },
        { "gpu-0-mig-1g5gb-20-0", "no profile '1g5gb' with GI profile id 20" },
        { "gpu-0-mig-2g5gb-19-0", "no profile '2g5gb'" },
        { "gpu-0-mig--19-0", "no GI profile id" },
        { "gpu-0-mig-19-0", "no GI profile id" },
        { "gpu-0-mig-3g20gb-9-2", "cannot start at memory slice 2" },
        { "gpu-0-mig-3g20gb-9-99999", "no placement start" },
        { "gpu-0-mig-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-9-0", "not a device" },
    };
    ms_geom_t *g;
    ag_dra_gpu_t gpus[2];
    ag_dra_dev_t d;
    char why[256];
    size_t i;

    (void)state;
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    gpus[0] = (ag_dra_gpu_t){ g, true, 0, "GPU-0" };
    gpus[1] = (ag_dra_gpu_t){ g, false, 0, "GPU-1" };
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        why[0] = '\0';
        assert_int_equal(ag_dra_parse(gpus, 2, BAD[i].name, &d, why, sizeof(why)), -1);
        if (strstr(why, BAD[i].why) == NULL)
            fail_msg("'%s': why '%s' lacks '%s'", BAD[i].name, why, BAD[i].why);
    }
    /* the whole GPU of a GPU with MIG off is a device */
    assert_int_equal(ag_dra_parse(gpus, 2, "gpu-1", &d, why, sizeof(why)), 0);
    assert_int_equal(d.kind, AG_DRA_GPU);
    ms_geom_destroy(g);
}

/* --- counters against the geometry ---------------------------------------- */

/* Counter names of gpu's set, from a slice built for it. */
static json_t *counter_set(const ag_dra_gpu_t *gpu)
{
    ag_dra_node_t nd = { "n", "mig.migsched.io", gpu, 1, NULL };
    char why[128];
    json_t *s = ag_dra_slices(&nd, 1, why, sizeof(why)), *set;

    assert_non_null(s);
    set = json_object_get(json_array_get(json_object_get(json_object_get(json_array_get(s, 0), "spec"), "sharedCounters"), 0),
                          "counters");
    assert_non_null(set);
    json_incref(set);
    json_decref(s);
    return set;
}

static void counters_are_the_geometry(void **state)
{
    int nm, mi;
    const ms_model_t *models = ms_models(&nm);

    (void)state;
    for (mi = 0; mi < nm; mi++) {
        ms_geom_t *g;
        ag_dra_gpu_t gpu;
        ag_dra_dev_t *v, *mig[64];
        json_t *set;
        const char *cname[40];
        long long total[40];
        int n, i, m = 0, nc = 0, c;
        unsigned long sub;

        assert_int_equal(ms_geom_create(&models[mi], 0, &g), MS_OK);
        gpu = (ag_dra_gpu_t){ g, true, 0, "GPU-x" };
        assert_int_equal(ag_dra_devices(&gpu, 0, &v, &n), 0);
        set = counter_set(&gpu);
        {
            const char *key;
            json_t *val;

            json_object_foreach(set, key, val) {
                cname[nc] = key;
                total[nc] = ag_dra_counter_total(&gpu, key);
                assert_true(total[nc] > 0);
                nc++;
            }
        }
        assert_true(nc <= 32);
        for (i = 0; i < n; i++) {
            if (v[i].kind != AG_DRA_MIG) {
                /* the whole GPU takes everything */
                for (c = 0; c < nc; c++)
                    assert_true(ag_dra_counter_use(&gpu, &v[i], cname[c]) == total[c]);
                continue;
            }
            {
                unsigned mask = 0;
                char sl[32];
                int s;

                for (s = 0; s < ms_geom_width(g); s++) {
                    snprintf(sl, sizeof(sl), "memory-slice-%d", s);
                    if (ag_dra_counter_use(&gpu, &v[i], sl) == 1)
                        mask |= 1u << s;
                }
                assert_int_equal(mask, ms_geom_profile_mask(g, v[i].prof, v[i].start));
            }
            mig[m++] = &v[i];
        }
        assert_true(m < 31);
        /* every subset: the counters fit iff the geometry says the layout is valid */
        for (sub = 0; sub < (1ul << m); sub++) {
            ms_gi_t gis[32];
            int ng = 0;
            bool fits = true;

            for (c = 0; c < nc && fits; c++) {
                long long used = 0;

                for (i = 0; i < m; i++)
                    if (sub & (1ul << i))
                        used += ag_dra_counter_use(&gpu, mig[i], cname[c]);
                fits = used <= total[c];
            }
            for (i = 0; i < m; i++)
                if (sub & (1ul << i))
                    gis[ng++] = (ms_gi_t){ (int8_t)mig[i]->prof, (int8_t)mig[i]->start };
            if (fits != ms_geom_layout_valid(g, gis, ng))
                fail_msg("%s: subset 0x%lx: counters say %d, geometry says %d", models[mi].name, sub, fits, !fits);
        }
        json_decref(set);
        free(v);
        ms_geom_destroy(g);
    }
}

/* --- slices --------------------------------------------------------------- */

static const char *sname(json_t *s)
{
    return json_string_value(json_object_get(json_object_get(s, "metadata"), "name"));
}

static void slices_layout(void **state)
{
    ms_geom_t *g;
    ag_dra_gpu_t gpus[10];
    ag_dra_node_t nd = { "node-1", "mig.migsched.io", gpus, 10, "uid-1" };
    json_t *s, *x, *sets = json_array();
    char why[256], name[64];
    size_t i, j;
    int g0;

    (void)state;
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    for (g0 = 0; g0 < 10; g0++)
        gpus[g0] = (ag_dra_gpu_t){ g, true, 0, "GPU-u" };
    s = ag_dra_slices(&nd, 7, why, sizeof(why));
    assert_non_null(s);
    /* 10 counter sets: two counter slices (8 + 2), then ten device slices */
    assert_int_equal(json_array_size(s), 12);
    assert_string_equal(sname(json_array_get(s, 0)), "node-1-mig.migsched.io-counters-0");
    assert_string_equal(sname(json_array_get(s, 1)), "node-1-mig.migsched.io-counters-1");
    json_array_foreach(s, i, x) {
        json_t *spec = json_object_get(x, "spec"), *devs = json_object_get(spec, "devices"), *d;

        assert_string_equal(json_string_value(json_object_get(x, "apiVersion")), "resource.k8s.io/v1");
        assert_string_equal(json_string_value(json_object_get(spec, "driver")), "mig.migsched.io");
        assert_string_equal(json_string_value(json_object_get(spec, "nodeName")), "node-1");
        assert_string_equal(json_string_value(json_object_get(json_object_get(spec, "pool"), "name")), "node-1");
        assert_int_equal(json_integer_value(json_object_get(json_object_get(spec, "pool"), "generation")), 7);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(spec, "pool"), "resourceSliceCount")), 12);
        assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(x, "metadata"),
                                                                                             "ownerReferences"), 0), "uid")),
                            "uid-1");
        /* a slice holds counters or devices, never both */
        assert_true((devs == NULL) != (json_object_get(spec, "sharedCounters") == NULL));
        if (devs == NULL) {
            assert_true(json_array_size(json_object_get(spec, "sharedCounters")) <= AG_DRA_MAX_COUNTER_SETS);
            json_array_foreach(json_object_get(spec, "sharedCounters"), j, d)
                json_array_append(sets, json_object_get(d, "name"));
            continue;
        }
        snprintf(name, sizeof(name), "node-1-mig.migsched.io-gpu-%03d", (int)i - 2);
        assert_string_equal(sname(x), name);
        assert_int_equal(json_array_size(devs), 15);
        json_array_foreach(devs, j, d) {
            json_t *a = json_object_get(d, "attributes"), *cc = json_object_get(d, "consumesCounters");
            const char *type = json_string_value(json_object_get(json_object_get(a, "type"), "string"));
            size_t k;
            bool found = false;

            assert_int_equal(json_array_size(cc), 1);
            json_array_foreach(sets, k, x)
                found = found || json_equal(x, json_object_get(json_array_get(cc, 0), "counterSet"));
            assert_true(found);
            assert_string_equal(json_string_value(json_object_get(json_object_get(a, "productName"), "string")), "A100-40GB");
            if (strcmp(type, "mig") == 0) {
                assert_string_equal(json_string_value(json_object_get(json_object_get(a, "parentUUID"), "string")), "GPU-u");
                assert_non_null(json_object_get(json_object_get(a, "profile"), "string"));
            } else {
                assert_string_equal(type, "gpu");
                assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(d, "capacity"), "memory"),
                                                                      "value")),
                                    "40Gi");
            }
        }
    }
    assert_int_equal(json_array_size(sets), 10);
    json_decref(sets);
    json_decref(s);
    ms_geom_destroy(g);
}

static void slices_whole_and_shared(void **state)
{
    ms_geom_t *g;
    ag_dra_gpu_t whole = { NULL, false, 0, "GPU-w" }, ts = { NULL, false, 3, "GPU-t" };
    ag_dra_node_t nd = { "n", "mig.migsched.io", &whole, 1, NULL };
    json_t *s, *d, *cap;
    char why[128];

    (void)state;
    assert_int_equal(ms_geom_create(ms_model_find("H100-80GB"), 0, &g), MS_OK);
    whole.geom = ts.geom = g;
    /* MIG off: the whole GPU, nothing to count */
    s = ag_dra_slices(&nd, 1, why, sizeof(why));
    assert_int_equal(json_array_size(s), 1);
    assert_int_equal(json_array_size(json_object_get(json_object_get(json_array_get(s, 0), "spec"), "devices")), 1);
    d = json_array_get(json_object_get(json_object_get(json_array_get(s, 0), "spec"), "devices"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "name")), "gpu-0");
    assert_null(json_object_get(d, "consumesCounters"));
    assert_null(json_object_get(d, "allowMultipleAllocations"));
    json_decref(s);
    /* time-sliced: shares, each claim one by default; memory not consumed */
    nd.gpus = &ts;
    s = ag_dra_slices(&nd, 1, why, sizeof(why));
    d = json_array_get(json_object_get(json_object_get(json_array_get(s, 0), "spec"), "devices"), 0);
    assert_true(json_is_true(json_object_get(d, "allowMultipleAllocations")));
    cap = json_object_get(d, "capacity");
    assert_string_equal(json_string_value(json_object_get(json_object_get(cap, "shares"), "value")), "3");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(cap, "shares"), "requestPolicy"),
                                                          "default")),
                        "1");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(cap, "memory"), "requestPolicy"),
                                                          "default")),
                        "0");
    assert_string_equal(json_string_value(json_object_get(json_object_get(cap, "memory"), "value")), "80Gi");
    json_decref(s);
    ms_geom_destroy(g);
}

static void slice_names_bounded(void **state)
{
    char a[300], b[300], node[254];

    (void)state;
    memset(node, 'a', 253);
    node[253] = '\0';
    assert_int_equal(ag_dra_slice_name(node, "mig.migsched.io", "gpu-000", a, sizeof(a)), 0);
    assert_true(strlen(a) <= 253);
    node[252] = 'b';
    assert_int_equal(ag_dra_slice_name(node, "mig.migsched.io", "gpu-000", b, sizeof(b)), 0);
    assert_true(strcmp(a, b) != 0);   /* the hash tells long names apart */
    assert_int_equal(ag_dra_slice_name("n1", "mig.migsched.io", "counters-0", a, sizeof(a)), 0);
    assert_string_equal(a, "n1-mig.migsched.io-counters-0");
}

static void covers_rules(void **state)
{
    json_t *want = json_pack("{s:{s:s,s:[i,i]}}", "spec", "a", "x", "l", 1, 2);
    json_t *have = json_pack("{s:{s:s,s:[i,i],s:s},s:s}", "spec", "a", "x", "l", 1, 2, "extra", "y", "more", "z");

    (void)state;
    assert_true(ag_dra_covers(have, want));
    json_array_set_new(json_object_get(json_object_get(have, "spec"), "l"), 1, json_integer(3));
    assert_false(ag_dra_covers(have, want));
    json_array_append_new(json_object_get(json_object_get(want, "spec"), "l"), json_integer(9));
    assert_false(ag_dra_covers(have, want));
    assert_false(ag_dra_covers(NULL, want));
    json_decref(want);
    json_decref(have);
}

/* --- the claim ------------------------------------------------------------ */

#define META "\"metadata\":{\"namespace\":\"ns1\",\"name\":\"c-1\",\"uid\":\"0b5e-11\"}"

static void claim_decoded(void **state)
{
    const char *j = "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":["
                    "{\"request\":\"g\",\"driver\":\"mig.migsched.io\",\"pool\":\"n1\",\"device\":\"gpu-0-mig-1g5gb-19-0\"},"
                    "{\"request\":\"other\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"},"
                    "{\"request\":\"alt/small\",\"driver\":\"mig.migsched.io\",\"pool\":\"n1\",\"device\":\"gpu-1\","
                    "\"shareID\":\"5a-1\",\"adminAccess\":false}],"
                    "\"config\":[{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"gpu.nvidia.com\",\"parameters\":{}}}]}}}}";
    ag_dra_claim_t c;
    char why[256];

    (void)state;
    assert_int_equal(ag_dra_claim_decode(j, strlen(j), "mig.migsched.io", "n1", &c, why, sizeof(why)), 0);
    assert_string_equal(c.ns, "ns1");
    assert_string_equal(c.name, "c-1");
    assert_string_equal(c.uid, "0b5e-11");
    assert_int_equal(c.n, 2);   /* the other driver's result is not ours */
    assert_string_equal(c.res[0].device, "gpu-0-mig-1g5gb-19-0");
    assert_string_equal(c.res[0].request, "g");
    assert_string_equal(c.res[1].request, "alt");   /* the kubelet matches base request names */
    assert_string_equal(c.res[1].share_id, "5a-1");
}

static void claim_refused(void **state)
{
    static const struct {
        const char *json, *why;
    } BAD[] = {
        { "", "not a JSON object" },
        { "[]", "not a JSON object" },
        { "{\"metadata\":{\"name\":\"c\"}}", "metadata" },
        { "{" META "}", "not allocated" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":[]}}}", "devices: is not an object" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":{}}}}}", "not an array" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":[7]}}}}", "results[0]: is not an object" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"mig.migsched.io\",\"pool\":\"n2\","
          "\"device\":\"gpu-0\",\"request\":\"g\"}]}}}}", "not of this node's pool" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"mig.migsched.io\",\"pool\":\"n1\","
          "\"device\":\"gpu-0\",\"request\":\"g\",\"adminAccess\":true}]}}}}", "admin access" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"mig.migsched.io\",\"pool\":\"n1\","
          "\"device\":\"GPU_0\",\"request\":\"g\"}]}}}}", "device name" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"mig.migsched.io\",\"pool\":\"n1\","
          "\"device\":\"gpu-0\",\"request\":7}]}}}}", "request name" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"mig.migsched.io\",\"pool\":\"n1\","
          "\"device\":\"gpu-0\",\"request\":\"g\",\"shareID\":\"a b\"}]}}}}", "shareID" },
        { "{" META ",\"status\":{\"allocation\":{\"devices\":{\"config\":[{\"opaque\":{\"driver\":\"mig.migsched.io\"}}]}}}}",
          "takes no device configuration" },
        { "{" META ",\"metadata\":{}}", "not a JSON object" },   /* duplicate key */
    };
    ag_dra_claim_t c;
    char why[256], *many;
    size_t i, at;

    (void)state;
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        why[0] = '\0';
        assert_int_equal(ag_dra_claim_decode(BAD[i].json, strlen(BAD[i].json), "mig.migsched.io", "n1", &c, why,
                                             sizeof(why)),
                         -1);
        if (strstr(why, BAD[i].why) == NULL)
            fail_msg("case %zu: why '%s' lacks '%s'", i, why, BAD[i].why);
    }
    /* one result more than the API allows */
    many = malloc(20000);
    assert_non_null(many);
    at = (size_t)sprintf(many, "{" META ",\"status\":{\"allocation\":{\"devices\":{\"results\":[");
    for (i = 0; i <= AG_DRA_MAX_RESULTS; i++)
        at += (size_t)sprintf(many + at, "%s{\"driver\":\"mig.migsched.io\",\"pool\":\"n1\",\"device\":\"gpu-0\","
                                         "\"request\":\"g\"}", i ? "," : "");
    sprintf(many + at, "]}}}}");
    assert_int_equal(ag_dra_claim_decode(many, strlen(many), "mig.migsched.io", "n1", &c, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "too many"));
    free(many);
}

/* --- the kubelet's messages ------------------------------------------------- */

static void pack_refs(bool prepare, const char *ns, const char *uid, const char *name, ms_rpc_buf_t *out)
{
    K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim c, *cp = &c;

    k8s__io__kubelet__pkg__apis__dra__v1__claim__init(&c);
    c.namespace_ = (char *)(uintptr_t)ns;
    c.uid = (char *)(uintptr_t)uid;
    c.name = (char *)(uintptr_t)name;
    if (prepare) {
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest r;

        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__init(&r);
        r.n_claims = 1;
        r.claims = &cp;
        out->len = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__get_packed_size(&r);
        out->data = malloc(out->len + 1);
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__pack(&r, out->data);
    } else {
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest r;

        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__init(&r);
        r.n_claims = 1;
        r.claims = &cp;
        out->len = k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__get_packed_size(&r);
        out->data = malloc(out->len + 1);
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__pack(&r, out->data);
    }
}

static void messages_round_trip(void **state)
{
    ms_rpc_buf_t b = { NULL, 0 }, out = { NULL, 0 };
    ag_dra_ref_t *refs;
    ag_dra_answer_t ans[2];
    char msg[256];
    int n;
    K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *pr;
    Pluginregistration__PluginInfo *info;

    (void)state;
    pack_refs(true, "default", "1a2b-3c", "pod-g-x1", &b);
    assert_int_equal(ag_dra_refs_decode(b.data, b.len, true, &refs, &n, msg, sizeof(msg)), MS_RPC_OK);
    assert_int_equal(n, 1);
    assert_string_equal(refs[0].uid, "1a2b-3c");
    assert_string_equal(refs[0].name, "pod-g-x1");
    free(refs);
    ms_rpc_buf_free(&b);
    pack_refs(false, "Default", "1a2b", "c", &b);
    assert_int_equal(ag_dra_refs_decode(b.data, b.len, false, &refs, &n, msg, sizeof(msg)), MS_RPC_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "namespace"));
    ms_rpc_buf_free(&b);
    pack_refs(false, "d", "1a/2b", "c", &b);
    assert_int_equal(ag_dra_refs_decode(b.data, b.len, false, &refs, &n, msg, sizeof(msg)), MS_RPC_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "uid"));
    ms_rpc_buf_free(&b);
    assert_int_equal(ag_dra_refs_decode((const uint8_t *)"\xff\xff", 2, true, &refs, &n, msg, sizeof(msg)),
                     MS_RPC_INVALID_ARGUMENT);

    /* answers: one claim prepared with a device, one refused */
    memset(ans, 0, sizeof(ans));
    snprintf(ans[0].uid, sizeof(ans[0].uid), "u1");
    ans[0].n = 1;
    snprintf(ans[0].dev[0].request, sizeof(ans[0].dev[0].request), "g");
    snprintf(ans[0].dev[0].pool, sizeof(ans[0].dev[0].pool), "n1");
    snprintf(ans[0].dev[0].device, sizeof(ans[0].dev[0].device), "gpu-0-mig-1g5gb-19-0");
    snprintf(ans[0].dev[0].cdi, sizeof(ans[0].dev[0].cdi), "migsched.io/mig=MIG-1");
    snprintf(ans[1].uid, sizeof(ans[1].uid), "u2");
    snprintf(ans[1].error, sizeof(ans[1].error), "device gpu-0: taken");
    assert_int_equal(ag_dra_prepare_resp(ans, 2, &out), MS_RPC_OK);
    pr = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(NULL, out.len, out.data);
    assert_non_null(pr);
    assert_int_equal(pr->n_claims, 2);
    assert_string_equal(pr->claims[0]->key, "u1");
    assert_int_equal(pr->claims[0]->value->n_devices, 1);
    assert_string_equal(pr->claims[0]->value->devices[0]->cdi_device_ids[0], "migsched.io/mig=MIG-1");
    assert_string_equal(pr->claims[0]->value->devices[0]->request_names[0], "g");
    assert_string_equal(pr->claims[0]->value->devices[0]->pool_name, "n1");
    assert_string_equal(pr->claims[1]->key, "u2");
    assert_string_equal(pr->claims[1]->value->error, "device gpu-0: taken");
    assert_int_equal(pr->claims[1]->value->n_devices, 0);
    k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(pr, NULL);
    ms_rpc_buf_free(&out);

    assert_int_equal(ag_dra_info_resp("mig.migsched.io", "/p/dra.sock", &out), MS_RPC_OK);
    info = pluginregistration__plugin_info__unpack(NULL, out.len, out.data);
    assert_non_null(info);
    assert_string_equal(info->type, "DRAPlugin");
    assert_string_equal(info->name, "mig.migsched.io");
    assert_string_equal(info->endpoint, "/p/dra.sock");
    assert_int_equal(info->n_supported_versions, 1);
    assert_string_equal(info->supported_versions[0], "v1.DRAPlugin");
    pluginregistration__plugin_info__free_unpacked(info, NULL);
    ms_rpc_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_every_placement_once),
        cmocka_unit_test(names_nvidia_examples),
        cmocka_unit_test(names_refused),
        cmocka_unit_test(counters_are_the_geometry),
        cmocka_unit_test(slices_layout),
        cmocka_unit_test(slices_whole_and_shared),
        cmocka_unit_test(slice_names_bounded),
        cmocka_unit_test(covers_rules),
        cmocka_unit_test(claim_decoded),
        cmocka_unit_test(claim_refused),
        cmocka_unit_test(messages_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
