/* test_dra_alloc.c - the DRA allocator's model and decisions
 * (src/service/dra_map.c, dra_sched.c, dra_place.c, dra_decide.c) on the
 * fixture of dra_fx.h.
 *
 * Properties held: NVIDIA's DynamicMIG devices map to their node, GPU,
 * profile and placement start; a pool being republished is left out until
 * complete; a device whose counters disagree with its profile is not
 * modelled; every device written exists and matches the claim's selectors;
 * no two claims ever hold overlapping memory slices of a GPU, whoever
 * allocated them (kube-scheduler's allocations are counted); placements
 * keep room for 7g (fragmentation-aware, not first fit); a matchAttribute
 * on the parent GPU puts a pod's devices on one GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_fx.h"

static void test_map(void **state)
{
    fx_t *f = *state;
    int g, d;

    fx_a100_cluster(f, 2, 2);
    fx_publish(f, "h1", "H100-80GB", "NVIDIA H100 80GB HBM3", 1, 1);
    fx_advance(f, 1.0);
    assert_int_equal(f->x->map.ngpu, 5);
    assert_int_equal(f->x->map.skipped, 0);
    assert_true(dra_map_find(&f->x->map, DRV, "n2", "gpu-1-mig-3g20gb-9-4", &g, &d));
    assert_string_equal(f->x->map.gpu[g].node, "n2");
    assert_string_equal(ms_geom_profile(f->x->map.gpu[g].geom, f->x->map.gpu[g].dev[d].prof)->name, "3g.20gb");
    assert_int_equal(f->x->map.gpu[g].dev[d].start, 4);
    assert_true(dra_map_find(&f->x->map, DRV, "h1", "gpu-0", &g, &d));
    assert_int_equal(f->x->map.gpu[g].dev[d].kind, DRA_DEV_WHOLE);
    assert_string_equal(ms_geom_model(f->x->map.gpu[g].geom)->name, "H100-80GB");
    assert_non_null(f->x->sched[0]);
    assert_int_equal(ms_sched_ngpus(f->x->sched[0]), 5);
    /* a pool being republished (generation 2, one slice of 3 so far) is
     * left out until complete; its old generation is gone with it */
    fx_post(f, DRA_K_SLICE, "MODIFIED", fx_slice("n1", "n1-counters", 2, 3));
    fx_advance(f, 1.0);
    assert_int_equal(f->x->map.ngpu, 3);
}

/* A device whose counters disagree with its profile is not modelled. */
static void test_map_inconsistent(void **state)
{
    fx_t *f = *state;
    json_t *sl = fx_slice("n9", "n9-gpu-0", 1, 1), *devs = json_array();

    json_object_set_new(json_object_get(sl, "spec"), "sharedCounters",
                        json_pack("[{s:s,s:o}]", "name", "gpu-0-counter-set", "counters", fx_counters(0, 8, 4e10)));
    /* a 2g.10gb claimed at slice 1 (not a legal start), and one consuming 3 slices */
    json_array_append_new(devs, json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:s}},s:[{s:s,s:o}]}", "name", "bad1", "attributes",
                                          "type", "string", "mig", "profile", "string", "2g.10gb", "productName", "string",
                                          "NVIDIA A100-SXM4-40GB", "consumesCounters", "counterSet", "gpu-0-counter-set",
                                          "counters", fx_counters(1, 2, 1e10)));
    json_array_append_new(devs, json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:s}},s:[{s:s,s:o}]}", "name", "bad2", "attributes",
                                          "type", "string", "mig", "profile", "string", "2g.10gb", "productName", "string",
                                          "NVIDIA A100-SXM4-40GB", "consumesCounters", "counterSet", "gpu-0-counter-set",
                                          "counters", fx_counters(0, 3, 1e10)));
    json_array_append_new(devs, json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:s}},s:[{s:s,s:o}]}", "name", "bad3", "attributes",
                                          "type", "string", "mig", "profile", "string", "1g.5gb", "productName", "string",
                                          "NVIDIA L4", "consumesCounters", "counterSet", "gpu-0-counter-set",
                                          "counters", fx_counters(0, 1, 1e10)));
    json_object_set_new(json_object_get(sl, "spec"), "devices", devs);
    fx_post(f, DRA_K_SLICE, "ADDED", sl);
    fx_advance(f, 1.0);
    assert_int_equal(f->x->map.skipped, 3);
}

/* Every pod gets a device of its profile; no two overlap; the writes
 * carry the gate's removal; kube-scheduler's own allocation is counted. */
static void test_decide_no_overlap(void **state)
{
    static const char *const PROF[] = { "1g.5gb", "2g.10gb", "3g.20gb", "1g.5gb", "4g.20gb", "1g.5gb", "2g.10gb",
                                        "1g.5gb", "3g.20gb", "1g.5gb" };
    fx_t *f = *state;
    int used[16] = { 0 }, i, g, m;
    alloc_t a;
    char name[32];

    fx_a100_cluster(f, 2, 2);
    /* kube-scheduler allocated a tolerating claim: 4g.20gb on n1's GPU 0 */
    fx_post(f, DRA_K_CLAIM, "ADDED",
         json_pack("{s:{s:s,s:s,s:s,s:s},s:{s:{s:[o]}},s:{s:{s:{s:[{s:s,s:s,s:s,s:s}]},s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}}}",
                   "metadata", "name", "ks", "namespace", "t", "uid", "claim-ks", "resourceVersion", "3", "spec", "devices",
                   "requests", fx_profile_req("r", "4g.20gb"), "status", "allocation", "devices", "results", "request", "r",
                   "driver", DRV, "pool", "n1", "device", "gpu-0-mig-4g20gb-5-0", "nodeSelector", "nodeSelectorTerms",
                   "matchFields", "key", "metadata.name", "operator", "In", "values", "n1"));
    fx_batch(f);
    m = fx_slices_of(f, "n1", "gpu-0-mig-4g20gb-5-0", &g);
    used[g] |= m;
    for (i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        fx_place(f, name, PROF[i], &a);
        assert_int_equal(a.ndev, 1);
        m = fx_slices_of(f, a.node, a.dev[0], &g);
        if ((used[g] & m) != 0)
            fail_msg("%s got %s on %s, which overlaps", name, a.dev[0], a.node);
        used[g] |= m;
        assert_non_null(strstr(a.dev[0], "mig"));
        {
            char tok[16], *o = tok;
            const char *s;

            for (s = PROF[i]; *s != '\0'; s++)
                if (*s != '.')
                    *o++ = *s;
            *o = '\0';
            assert_non_null(strstr(a.dev[0], tok));   /* the profile asked for */
        }
        json_decref(a.al);
    }
    assert_int_equal(f->x->st.conflicts, 0);
}

/* Fragmentation-aware: the first 1g is not put where 4g and 7g start
 * (first-fit by name puts it at gpu-0-mig-1g5gb-19-0), and six of them
 * leave a GPU whole for a 7g. */
static void test_decide_keeps_room(void **state)
{
    fx_t *f = *state;
    alloc_t a;
    int i;
    char name[16];

    fx_a100_cluster(f, 1, 2);
    for (i = 0; i < 6; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        fx_place(f, name, "1g.5gb", &a);
        if (i == 0 && strstr(a.dev[0], "-19-0") != NULL)   /* not where 4g and 7g start */
            fail_msg("the first 1g got %s", a.dev[0]);
        json_decref(a.al);
    }
    fx_place(f, "big", "7g.40gb", &a);   /* one GPU was kept whole */
    json_decref(a.al);
}

/* One pod's two requests tied by matchAttribute on the parent GPU: one GPU. */
static void test_decide_same_gpu(void **state)
{
    fx_t *f = *state;
    dra_work_t *w;
    alloc_t a;
    int g1, g2;

    fx_a100_cluster(f, 2, 2);
    fx_post(f, DRA_K_CLAIM, "ADDED",
         fx_claim(f, "pair", json_pack("[o,o]", fx_profile_req("a", "1g.5gb"), fx_profile_req("b", "2g.10gb")),
               json_pack("[{s:[s,s],s:s}]", "requests", "a", "b", "matchAttribute", DRV "/parentUUID")));
    fx_post(f, DRA_K_POD, "ADDED", fx_pod("pair", true));
    fx_batch(f);
    w = fx_take(f, DRA_W_ALLOC);
    if (w == NULL)
        fail_msg("no allocation: %s", fx_events_text(f));
    fx_answer(f, w, true, &a);
    assert_int_equal(a.ndev, 2);
    (void)fx_slices_of(f, a.node, a.dev[0], &g1);
    (void)fx_slices_of(f, a.node, a.dev[1], &g2);
    assert_int_equal(g1, g2);
    json_decref(a.al);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_map, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_map_inconsistent, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_decide_no_overlap, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_decide_keeps_room, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_decide_same_gpu, fx_setup, fx_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
