/* test_alibaba.c - the openb importer: mappings on hand examples, malformed
 * rows, gangs, dropped-pod accounting, node modes, the fill experiment on a
 * small cluster, and (when ../shared/traces/alibaba-openb is there) the real
 * default trace. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/research/alibaba.h"

#define OPENB "../shared/traces/alibaba-openb"
#define HDR "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase," \
            "creation_time,deletion_time,scheduled_time\n"

static ms_geom_t *geom(const char *model)
{
    ms_geom_t *g = NULL;

    assert_int_equal(ms_geom_create(ms_model_find(model), 0, &g), MS_OK);
    return g;
}

static const char *pname(const ms_geom_t *g, int k)
{
    assert_true(k >= 0);
    return ms_geom_profile(g, k)->generic;
}

static ms_status_t read_str(const char *text, ms_ali_pods_t *p, ms_diag_t *d)
{
    FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
    ms_status_t st;

    assert_non_null(f);
    st = ms_ali_pods_read(f, "pods.csv", p, d);
    fclose(f);
    return st;
}

static void test_compute_mapping(void **state)
{
    ms_geom_t *g = geom("A100-40GB");

    (void)state;
    /* ceil(milli * 7 / 1000) -> next of {1,2,3,4,7} */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 810)), "7g"); /* 6 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 470)), "4g"); /* 4 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 320)), "3g"); /* 3 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 230)), "2g"); /* 2 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 110)), "1g"); /* 1 */
    /* edges: exactly k/7 stays at k slices, one milli more goes up */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 142)), "1g");
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 143)), "2g");
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 571)), "4g");
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 572)), "7g");
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 1)), "1g");
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 1000)), "7g");
    assert_int_equal(ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 0), -1);
    assert_int_equal(ms_ali_map_profile(g, MS_ALI_MAP_COMPUTE, 1001), -1);
    ms_geom_destroy(g);
}

static void test_memory_mapping(void **state)
{
    ms_geom_t *g = geom("A100-40GB");
    ms_geom_t *a30 = geom("A30");

    (void)state;
    /* ceil(milli * 8 / 1000) memory slices -> fewest memory, then compute */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 810)), "7g"); /* 7 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 470)), "3g"); /* 4 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 500)), "3g"); /* 4 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 320)), "3g"); /* 3 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 230)), "2g"); /* 2 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 125)), "1g"); /* 1 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 126)), "2g"); /* 2 */
    assert_string_equal(pname(g, ms_ali_map_profile(g, MS_ALI_MAP_MEMORY, 501)), "7g"); /* 5 */
    /* A30: 4 compute and 4 memory slices, profiles 1g, 2g, 4g */
    assert_string_equal(pname(a30, ms_ali_map_profile(a30, MS_ALI_MAP_COMPUTE, 470)), "2g");
    assert_string_equal(pname(a30, ms_ali_map_profile(a30, MS_ALI_MAP_COMPUTE, 510)), "4g");
    assert_string_equal(pname(a30, ms_ali_map_profile(a30, MS_ALI_MAP_MEMORY, 250)), "1g");
    assert_string_equal(pname(g, ms_ali_full_profile(g)), "7g");
    assert_string_equal(pname(a30, ms_ali_full_profile(a30)), "4g");
    ms_geom_destroy(g);
    ms_geom_destroy(a30);
}

static void test_parse_names(void **state)
{
    ms_ali_mapping_t m;
    ms_ali_node_mode_t n;

    (void)state;
    assert_int_equal(ms_ali_mapping_parse("memory", &m), MS_OK);
    assert_int_equal(m, MS_ALI_MAP_MEMORY);
    assert_int_equal(ms_ali_mapping_parse("COMPUTE", &m), MS_OK);
    assert_int_equal(m, MS_ALI_MAP_COMPUTE);
    assert_int_equal(ms_ali_mapping_parse("slices", &m), MS_EINVAL);
    assert_int_equal(ms_ali_node_mode_parse("whole", &n), MS_OK);
    assert_int_equal(n, MS_ALI_NODES_WHOLE);
    assert_int_equal(ms_ali_node_mode_parse("pad", &n), MS_EINVAL);
    assert_string_equal(ms_ali_mapping_name(MS_ALI_MAP_MEMORY), "memory");
    assert_string_equal(ms_ali_node_mode_name(MS_ALI_NODES_REGROUP), "regroup");
}

/* Each bad row must fail with the line and the field named. */
static void expect_bad(const char *rows, long line, const char *field)
{
    char text[1024];
    ms_ali_pods_t p;
    ms_diag_t d;

    snprintf(text, sizeof(text), "%s%s", HDR, rows);
    ms_diag_clear(&d);
    assert_int_equal(read_str(text, &p, &d), MS_EPARSE);
    assert_int_equal(d.line, line);
    assert_string_equal(d.field, field);
    assert_string_equal(d.file, "pods.csv");
    assert_null(p.v);
    assert_int_equal(p.n, 0);
}

static void test_malformed(void **state)
{
    const char *ok = "p0,1,1,1,500,,LS,Running,0,10,0\n";
    char two[256];

    (void)state;
    expect_bad("p1,1,1,x,500,,LS,Running,0,10,0\n", 2, "num_gpu");
    expect_bad("p1,1,1,-1,500,,LS,Running,0,10,0\n", 2, "num_gpu");
    expect_bad("p1,1,1,1,1001,,LS,Running,0,10,0\n", 2, "gpu_milli");
    expect_bad("p1,1,1,1,0,,LS,Running,0,10,0\n", 2, "gpu_milli");
    expect_bad("p1,1,1,0,300,,LS,Running,0,10,0\n", 2, "gpu_milli");
    expect_bad("p1,1,1,2,500,,LS,Running,0,10,0\n", 2, "gpu_milli");
    expect_bad("p1,1,1,1,500,,LS,Running,,10,0\n", 2, "creation_time");
    expect_bad("p1,1,1,1,500,,LS,Running,-5,10,0\n", 2, "creation_time");
    expect_bad("p1,1,1,1,500,,LS,Running,0,1e,0\n", 2, "deletion_time");
    expect_bad("p1,1,1,1,500,,LS,Running,0,10,soon\n", 2, "scheduled_time");
    expect_bad(",1,1,1,500,,LS,Running,0,10,0\n", 2, "name");
    expect_bad("p1,1,1,1,500\n", 2, "creation_time");      /* short row */
    snprintf(two, sizeof(two), "%s\n%s%s", ok, ok, "p2,1,1,1,5x0,,LS,Running,0,10,0\n");
    expect_bad(two, 5, "gpu_milli");                        /* blank line counted */

    /* header problems */
    {
        ms_ali_pods_t p;
        ms_diag_t d;

        ms_diag_clear(&d);
        assert_int_equal(read_str("name,num_gpu\np,1\n", &p, &d), MS_EPARSE);
        assert_int_equal(d.line, 1);
        assert_string_equal(d.field, "gpu_milli");
        ms_diag_clear(&d);
        assert_int_equal(read_str("name,num_gpu,gpu_milli,creation_time\np,1,5,0\n", &p, &d),
                         MS_EPARSE);
        assert_int_equal(d.line, 1);
        ms_diag_clear(&d);
        assert_int_equal(read_str("\n\n", &p, &d), MS_EPARSE);   /* no header */
    }
}

static void test_accounting_and_gangs(void **state)
{
    const char *text =
        HDR
        "cpu,4000,100,0,0,,LS,Running,0,100,0\n"            /* cpu-only */
        "pend,4000,100,1,500,,BE,Pending,10,20,\n"          /* never scheduled */
        "bad,4000,100,1,500,,BE,Failed,30,30,30\n"          /* deletion == creation */
        "open,4000,100,1,230,,LS,Running,40,,40\n"          /* never ended: capped */
        "a,4000,100,1,810,,LS,Running,50,150,51\n"          /* 7g */
        "b,4000,100,1,470,,LS,Succeeded,5,65,5\n"           /* 4g (compute) / 3g (memory) */
        "g8,4000,100,8,1000,,LS,Running,60,1060,60\n"       /* gang of 8 */
        "g2,4000,100,2,1000,V100M32|G2,LS,Running,70,80,70\n"
        "w,4000,100,1,1000,,LS,Running,100,1000,100\n";
    ms_geom_t *g = geom("A100-40GB");
    ms_ali_pods_t p;
    ms_ali_import_cfg_t cfg;
    ms_ali_counts_t k;
    ms_trace_t *t = NULL;
    ms_diag_t d;
    int k7 = ms_geom_profile_find(g, "7g"), k4 = ms_geom_profile_find(g, "4g");

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(read_str(text, &p, &d), MS_OK);
    assert_true(p.has_times);
    assert_int_equal(p.n, 9);
    assert_float_equal(p.trace_end_s, 1060.0, 0);
    ms_ali_import_cfg_defaults(&cfg);
    assert_int_equal(ms_ali_to_trace(&p, g, &cfg, &t, &k, &d), MS_OK);
    assert_int_equal(k.rows, 9);
    assert_int_equal(k.cpu_only, 1);
    assert_int_equal(k.pending, 1);
    assert_int_equal(k.bad_time, 1);
    assert_int_equal(k.capped, 1);
    assert_int_equal(k.no_profile, 0);
    assert_int_equal(k.kept, 6);
    assert_int_equal(k.gangs, 2);
    assert_int_equal(k.gang_by_size[8], 1);
    assert_int_equal(k.gang_by_size[2], 1);
    assert_int_equal(k.by_prof[k7], 2);
    assert_int_equal(k.by_prof[k4], 1);
    assert_int_equal(k.rows, k.kept + k.cpu_only + k.pending + k.bad_time + k.no_profile);
    assert_float_equal(k.requested_gpus, 0.23 + 0.81 + 0.47 + 8 + 2 + 1, 1e-9);
    /* sorted by arrival: b(5) open(40) a(50) g8(60) g2(70) w(100) */
    assert_int_equal(t->n, 6);
    assert_string_equal(ms_trace_name(t, 0), "b");
    assert_float_equal(t->jobs[0].duration, 60.0, 0);
    assert_string_equal(ms_trace_name(t, 1), "open");
    assert_float_equal(t->jobs[1].duration, 1060.0 - 40.0, 0);
    assert_string_equal(ms_geom_profile(g, t->jobs[1].prof)->generic, "2g");
    assert_string_equal(ms_trace_name(t, 3), "g8");
    assert_int_equal(t->jobs[3].gang, 8);
    assert_int_equal(t->jobs[3].prof, k7);
    assert_float_equal(t->jobs[3].duration, 1000.0, 0);
    assert_int_equal(t->jobs[4].gang, 2);
    assert_int_equal(t->jobs[5].gang, 1);
    assert_int_equal(t->jobs[5].prof, k7);
    ms_trace_free(t);

    /* memory mapping and a time scale */
    cfg.mapping = MS_ALI_MAP_MEMORY;
    cfg.time_scale = 0.5;
    assert_int_equal(ms_ali_to_trace(&p, g, &cfg, &t, &k, &d), MS_OK);
    assert_string_equal(ms_geom_profile(g, t->jobs[0].prof)->generic, "3g");
    assert_float_equal(t->jobs[0].arrival, 2.5, 0);
    assert_float_equal(t->jobs[0].duration, 30.0, 0);
    ms_trace_free(t);
    cfg.time_scale = 0;
    assert_int_equal(ms_ali_to_trace(&p, g, &cfg, &t, &k, &d), MS_EINVAL);
    assert_null(t);
    ms_ali_pods_free(&p);
    ms_geom_destroy(g);
}

static void test_no_times(void **state)
{
    ms_geom_t *g = geom("A100-40GB");
    ms_ali_pods_t p;
    ms_ali_import_cfg_t cfg;
    ms_trace_t *t = NULL;
    ms_diag_t d;

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(read_str("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                              "a,1,1,1,500\nb,1,1,4,1000\n", &p, &d), MS_OK);
    assert_false(p.has_times);
    assert_int_equal(p.n, 2);
    ms_ali_import_cfg_defaults(&cfg);
    assert_int_equal(ms_ali_to_trace(&p, g, &cfg, &t, NULL, &d), MS_ENOTSUP);
    assert_null(t);
    assert_string_equal(d.field, "creation_time");
    ms_ali_pods_free(&p);
    ms_geom_destroy(g);
}

static void test_nodes(void **state)
{
    const char *text = "sn,cpu_milli,memory_mib,gpu,model\n"
                       "n0,1,1,8,G2\nn1,1,1,2,T4\nn2,1,1,0,\nn3,1,1,8,G3\nn4,1,1,1,P100\n";
    FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
    ms_ali_nodes_t n;
    ms_ali_cluster_t cl;
    ms_diag_t d;

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(ms_ali_nodes_read(f, "nodes.csv", &n, &d), MS_OK);
    fclose(f);
    assert_int_equal(n.n, 4);
    assert_int_equal(n.cpu_nodes, 1);
    assert_int_equal(n.total_gpus, 19);
    assert_int_equal(ms_ali_cluster_from_nodes(&n, MS_ALI_NODES_REGROUP, 8, &cl), MS_OK);
    assert_int_equal(cl.ngpus, 19);
    assert_int_equal(cl.gpus_per_node, 8);
    assert_int_equal(cl.nodes_used, 4);
    assert_int_equal(cl.nodes_by_size[8], 2);
    assert_int_equal(ms_ali_cluster_from_nodes(&n, MS_ALI_NODES_WHOLE, 8, &cl), MS_OK);
    assert_int_equal(cl.ngpus, 16);
    assert_int_equal(cl.nodes_used, 2);
    assert_int_equal(cl.gpus_dropped, 3);
    assert_int_equal(ms_ali_cluster_from_nodes(&n, MS_ALI_NODES_WHOLE, 4, &cl), MS_ENOENT);
    ms_ali_nodes_free(&n);

    text = "sn,gpu\nn0,eight\n";
    f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
    ms_diag_clear(&d);
    assert_int_equal(ms_ali_nodes_read(f, "nodes.csv", &n, &d), MS_EPARSE);
    fclose(f);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.field, "gpu");
}

/* The fill on a small cluster: invariants of the curve and the gang rule. */
static void test_fill_small(void **state)
{
    const char *text =
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
        "a,1,1,1,810\nb,1,1,1,470\nc,1,1,1,320\nd,1,1,1,230\ne,1,1,1,110\n"
        "f,1,1,0,0\ng,1,1,4,1000\nh,1,1,1,1000\n";
    ms_geom_t *g = geom("A100-40GB");
    ms_ali_pods_t p;
    ms_ali_fill_cfg_t cfg;
    ms_ali_curve_t c, c2;
    ms_diag_t d;

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(read_str(text, &p, &d), MS_OK);
    ms_ali_fill_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("best-fit");
    assert_non_null(cfg.policy);
    cfg.ngpus = 8;
    cfg.gpus_per_node = 4;
    assert_int_equal(ms_ali_fill_run(&p, g, &cfg, &c, &d), MS_OK);
    assert_true(c.npods >= p.n);
    /* FGD's stop test: total + per-GPU milli of the next draw > target */
    assert_true(c.arrived_pct > 130.0 - 1000.0 / 80.0);
    assert_true(c.have[0] && c.have[100]);
    assert_float_equal(c.unalloc_compute_pct[0], 100.0, 1e-9);
    assert_float_equal(c.unalloc_gpu_pct[0], 100.0, 1e-9);
    for (int x = 0; x < MS_ALI_NBINS; x++) {
        if (!c.have[x])
            continue;
        assert_true(c.unalloc_compute_pct[x] >= -1e-9 && c.unalloc_compute_pct[x] <= 100.0);
        assert_true(c.unalloc_gpu_pct[x] <= c.unalloc_compute_pct[x] + 1e-9);
        assert_true(c.failed_pct[x] >= 0 && c.failed_pct[x] <= 100.0);
    }
    assert_true(c.nfailed > 0);                /* 130 % cannot all fit */
    assert_true(c.final_unalloc_compute_pct < 50.0);
    /* same seed, same answer */
    assert_int_equal(ms_ali_fill_run(&p, g, &cfg, &c2, &d), MS_OK);
    assert_memory_equal(&c, &c2, sizeof(c));
    /* a gang wider than a node is rejected, never placed */
    cfg.gpus_per_node = 2;
    assert_int_equal(ms_ali_fill_run(&p, g, &cfg, &c2, &d), MS_OK);
    assert_true(c2.nrejected > 0);
    /* every MIG policy runs; time-slicing is refused */
    {
        int n;
        const ms_policy_ops_t *const *all = ms_policies(&n);

        cfg.gpus_per_node = 4;
        for (int i = 0; i < n; i++) {
            cfg.policy = all[i];
            ms_diag_clear(&d);
            if (all[i]->share != MS_SHARE_MIG) {
                assert_int_equal(ms_ali_fill_run(&p, g, &cfg, &c2, &d), MS_EINVAL);
                assert_string_equal(d.field, "policy");
                continue;
            }
            assert_int_equal(ms_ali_fill_run(&p, g, &cfg, &c2, &d), MS_OK);
            assert_int_equal(c2.npods, c.npods);      /* same pod sequence */
        }
    }
    ms_ali_pods_free(&p);
    ms_geom_destroy(g);
}

/* The real default trace: 8152 pods, 1088 CPU-only, 861 GPU pods never
 * scheduled, 6203 kept (literature.md §5), split by the compute rule into
 * 4853 x 7g, 675 x 4g, 347 x 3g, 228 x 2g, 26 x 1g and 74 gangs. */
static void test_real_default(void **state)
{
    ms_geom_t *g;
    ms_ali_pods_t p;
    ms_ali_nodes_t n;
    ms_ali_cluster_t cl;
    ms_ali_import_cfg_t cfg;
    ms_ali_counts_t k;
    ms_trace_t *t = NULL;
    ms_diag_t d;
    FILE *probe = fopen(OPENB "/openb_pod_list_default.csv", "r");

    (void)state;
    if (probe == NULL)
        skip();
    fclose(probe);
    g = geom("A100-40GB");
    ms_diag_clear(&d);
    assert_int_equal(ms_ali_pods_read_file(OPENB "/openb_pod_list_default.csv", &p, &d), MS_OK);
    assert_int_equal(p.n, 8152);
    ms_ali_import_cfg_defaults(&cfg);
    assert_int_equal(ms_ali_to_trace(&p, g, &cfg, &t, &k, &d), MS_OK);
    assert_int_equal(k.cpu_only, 1088);
    assert_int_equal(k.pending, 861);
    assert_int_equal(k.bad_time, 0);
    assert_int_equal(k.kept, 6203);
    assert_int_equal(t->n, 6203);
    assert_int_equal(k.gangs, 74);
    assert_int_equal(k.by_prof[ms_geom_profile_find(g, "7g")], 4853);
    assert_int_equal(k.by_prof[ms_geom_profile_find(g, "4g")], 675);
    assert_int_equal(k.by_prof[ms_geom_profile_find(g, "3g")], 347);
    assert_int_equal(k.by_prof[ms_geom_profile_find(g, "2g")], 228);
    assert_int_equal(k.by_prof[ms_geom_profile_find(g, "1g")], 26);
    ms_trace_free(t);
    ms_ali_pods_free(&p);
    assert_int_equal(ms_ali_nodes_read_file(OPENB "/openb_node_list_gpu_node.csv", &n, &d), MS_OK);
    assert_int_equal(n.n, 1213);
    assert_int_equal(n.total_gpus, 6212);
    assert_int_equal(ms_ali_cluster_from_nodes(&n, MS_ALI_NODES_REGROUP, 8, &cl), MS_OK);
    assert_int_equal(cl.ngpus, 6212);
    assert_int_equal(ms_ali_cluster_from_nodes(&n, MS_ALI_NODES_WHOLE, 8, &cl), MS_OK);
    assert_int_equal(cl.ngpus, 617 * 8);
    ms_ali_nodes_free(&n);
    /* multigpu files have no times: fill only */
    assert_int_equal(ms_ali_pods_read_file(OPENB "/openb_pod_list_multigpu20.csv", &p, &d), MS_OK);
    assert_false(p.has_times);
    assert_int_equal(p.n, 8324);
    assert_int_equal(ms_ali_to_trace(&p, g, &cfg, &t, &k, &d), MS_ENOTSUP);
    ms_ali_pods_free(&p);
    ms_geom_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_mapping),
        cmocka_unit_test(test_memory_mapping),
        cmocka_unit_test(test_parse_names),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_accounting_and_gangs),
        cmocka_unit_test(test_no_times),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_fill_small),
        cmocka_unit_test(test_real_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
