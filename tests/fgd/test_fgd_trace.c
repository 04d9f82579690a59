/* test_fgd_trace.c - checks on the real openb trace (skipped when
 * ../shared/traces/alibaba-openb is absent): the typical-pod numbers of
 * fgd.md §1.2 and one fast seed of FGD. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "migsched/research/fgd.h"

#define TRACE "../shared/traces/alibaba-openb/"
#define NODES TRACE "openb_node_list_gpu_node.csv"
#define PODS TRACE "openb_pod_list_default.csv"

typedef struct fixture {
    ms_fgd_nodes_t nodes;
    ms_fgd_pods_t pods;
    ms_fgd_classes_t cls;
} fixture_t;

static fixture_t FX;

static int setup(void **state)
{
    ms_diag_t d;

    *state = NULL;
    if (access(NODES, R_OK) != 0 || access(PODS, R_OK) != 0)
        return 0;
    if (ms_fgd_nodes_read(NODES, &FX.nodes, &d) != MS_OK ||
        ms_fgd_pods_read(PODS, &FX.pods, &d) != MS_OK)
        return -1;
    ms_fgd_pods_bind(&FX.pods, &FX.nodes);
    if (ms_fgd_typical(&FX.pods, 95, &FX.cls) != MS_OK)
        return -1;
    *state = &FX;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ms_fgd_classes_free(&FX.cls);
    ms_fgd_pods_free(&FX.pods);
    ms_fgd_nodes_free(&FX.nodes);
    return 0;
}

static void test_trace_shape(void **state)
{
    fixture_t *fx = *state;

    if (fx == NULL)
        skip();
    assert_int_equal(fx->nodes.n, 1213);
    assert_int_equal(fx->nodes.total_gpus, 6212);
    assert_int_equal(fx->nodes.nmodels, 7);
    assert_int_equal(fx->pods.n, 8152);
}

static void test_typical_default(void **state)
{
    fixture_t *fx = *state;
    double cpu = 0, share = 0, one = 0, pct;

    if (fx == NULL)
        skip();
    assert_int_equal(fx->cls.ndistinct, 91);
    assert_int_equal(fx->cls.n, 35);
    pct = 100.0 * (double)fx->cls.covered / (double)fx->cls.total;
    assert_float_equal(pct, 95.26, 0.005);
    for (size_t k = 0; k < fx->cls.n; k++) {
        const ms_fgd_class_t *m = &fx->cls.v[k];
        if (m->num_gpu == 0)
            cpu += m->p;
        else if (m->gpu_milli < 1000)
            share += m->p;
        else if (m->num_gpu == 1)
            one += m->p;
        else
            fail_msg("a multi-GPU class survived the 95%% cut");
    }
    assert_float_equal(cpu, 0.136, 0.001);
    assert_float_equal(share, 0.373, 0.001);
    assert_float_equal(one, 0.491, 0.001);
    /* the top class: (3.152 CPU, 0.81 GPU), 13.5% of all pods */
    assert_int_equal(fx->cls.v[0].cpu_milli, 3152);
    assert_int_equal(fx->cls.v[0].gpu_milli, 810);
}

static void test_fgd_one_seed(void **state)
{
    fixture_t *fx = *state;
    ms_fgd_opts_t o = { MS_FGD_FGD, 42, 1.3 };
    ms_fgd_curve_t cv;

    if (fx == NULL)
        skip();
    assert_int_equal(ms_fgd_run(&fx->nodes, &fx->pods, &fx->cls, &o, &cv), MS_OK);
    assert_true(cv.have[100]);
    assert_true(cv.unalloc_pct[100] > 3.0 && cv.unalloc_pct[100] < 8.0);
    /* the ideal line holds up to ~90% arrived */
    assert_true(cv.unalloc_pct[50] > 49.0 && cv.unalloc_pct[50] < 51.0);
    /* an empty cluster's rate is the CPU-only share (~13.6-14%) */
    assert_true(cv.frag_rate_pct[0] > 13.0 && cv.frag_rate_pct[0] < 15.0);
    assert_true(cv.have[130]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_shape),
        cmocka_unit_test(test_typical_default),
        cmocka_unit_test(test_fgd_one_seed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
