/* test_fgd_frag.c - the fragmentation measure (fgd.md §1.3-1.4) on a
 * hand-built node, worked by hand, and the typical-pod rule (§1.2). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/research/fgd.h"

/* One 4-GPU node of model 0: GPUs {1000, 500, 200, 0} free, 10 cores free.
 * idle = 1700 milli. */
static ms_fgd_res_t node(void)
{
    ms_fgd_res_t r;

    memset(&r, 0, sizeof(r));
    r.cpu_left = 10000;
    r.mem_left = 1 << 20;
    r.ngpu = 4;
    r.model = 0;
    r.gpu_left[0] = 1000;
    r.gpu_left[1] = 500;
    r.gpu_left[2] = 200;
    r.gpu_left[3] = 0;
    return r;
}

static ms_fgd_class_t cls(int64_t cpu, int milli, int num, uint32_t access, long count)
{
    ms_fgd_class_t c;

    memset(&c, 0, sizeof(c));
    c.cpu_milli = cpu;
    c.gpu_milli = milli;
    c.num_gpu = num;
    c.access = access;
    c.count = count;
    return c;
}

/* Six classes, one per case of §1.3; counts sum to 8. */
static ms_fgd_class_t CLASSES[6];

static ms_fgd_classes_t classes(void)
{
    ms_fgd_classes_t c;

    CLASSES[0] = cls(2000, 0, 0, UINT32_MAX, 1);    /* CPU-only: all idle */
    CLASSES[1] = cls(4000, 300, 1, UINT32_MAX, 2);  /* q3: leftovers < 300 = 200 + 0 */
    CLASSES[2] = cls(12000, 1000, 1, UINT32_MAX, 1);/* q4 (CPU lacking): all idle */
    CLASSES[3] = cls(1000, 1000, 2, UINT32_MAX, 1); /* q2 (1 whole GPU < 2): all idle */
    CLASSES[4] = cls(1000, 600, 1, 1u << 1, 1);     /* no_access: all idle */
    CLASSES[5] = cls(1000, 600, 1, UINT32_MAX, 2);  /* q3: 500 + 200 + 0 */
    memset(&c, 0, sizeof(c));
    c.v = CLASSES;
    c.n = 6;
    c.total = c.covered = 8;
    for (int k = 0; k < 6; k++)
        CLASSES[k].p = (double)CLASSES[k].count / 8.0;
    return c;
}

static void test_frag_per_class(void **state)
{
    ms_fgd_res_t r = node();
    ms_fgd_classes_t c = classes();
    static const int expect[6] = { 1700, 200, 1700, 1700, 1700, 700 };

    (void)state;
    assert_int_equal(ms_fgd_res_idle(&r), 1700);
    for (int k = 0; k < 6; k++)
        assert_int_equal(ms_fgd_frag_class(&r, &c.v[k]), expect[k]);
}

static void test_frag_node(void **state)
{
    ms_fgd_res_t r = node();
    ms_fgd_classes_t c = classes();

    (void)state;
    /* 1·1700 + 2·200 + 1·1700 + 1·1700 + 1·1700 + 2·700 = 8600; /8 = 1075 */
    assert_int_equal(ms_fgd_frag_num(&r, &c), 8600);
    assert_float_equal(ms_fgd_frag(&r, &c), 1075.0, 1e-9);
    /* a full node has no fragment */
    for (int i = 0; i < 4; i++)
        r.gpu_left[i] = 0;
    assert_int_equal(ms_fgd_frag_num(&r, &c), 0);
    /* an empty node: only CPU-only (1), q4 (1), no-access (1) count: 3·4000/8 */
    r = node();
    for (int i = 0; i < 4; i++)
        r.gpu_left[i] = 1000;
    assert_float_equal(ms_fgd_frag(&r, &c), 1500.0, 1e-9);
    /* a node without access to anything but CPU-only classes: all idle */
    r.model = 3;
    c.v[1].access = c.v[2].access = c.v[3].access = c.v[5].access = 1u << 0;
    assert_float_equal(ms_fgd_frag(&r, &c), 4000.0, 1e-9);
}

static void test_fgd_score(void **state)
{
    ms_fgd_res_t r = node();
    ms_fgd_classes_t c = classes();
    ms_fgd_pod_t share, whole, cpu;
    int gpu;

    (void)state;
    memset(&share, 0, sizeof(share));
    share.cpu_milli = 1000;
    share.num_gpu = 1;
    share.gpu_milli = 300;
    share.access = UINT32_MAX;
    /* GPU0 -> F·8 = 7400 (Δ = 0.15, σ = 0.5374 -> 53);
     * GPU1 -> F·8 = 7200 (Δ = 0.175, σ = 0.5436 -> 54): GPU1 wins */
    assert_int_equal(ms_fgd_score_fgd(&r, &share, &c, ms_fgd_frag_num(&r, &c), &gpu), 54);
    assert_int_equal(gpu, 1);
    /* whole GPU: GPU0 to 0, CPU 9000, idle 700: F·8 =
     * 1·700 + 2·200 + 1·700 + 1·700 + 1·700 + 2·700 = 4600; Δ = 0.5 -> 62 */
    whole = share;
    whole.gpu_milli = 1000;
    assert_int_equal(ms_fgd_score_fgd(&r, &whole, &c, ms_fgd_frag_num(&r, &c), &gpu), 62);
    assert_int_equal(gpu, -1);
    /* CPU-only pod taking 7 cores: the 300-milli class (4 cores) turns q4
     * (4000 > 3000 left): F·8 = 8600 + 2·1500 = 11600; Δ = -0.375 -> 40 */
    cpu = share;
    cpu.num_gpu = 0;
    cpu.gpu_milli = 0;
    cpu.cpu_milli = 7000;
    assert_int_equal(ms_fgd_score_fgd(&r, &cpu, &c, ms_fgd_frag_num(&r, &c), &gpu), 40);
    /* quantisation: no change scores 50, any increase at most 49 */
    assert_int_equal(ms_fgd_sigmoid_score(0.0), 50);
    assert_int_equal(ms_fgd_sigmoid_score(-1e-9), 49);
    assert_int_equal(ms_fgd_sigmoid_score(0.04), 50);
    assert_int_equal(ms_fgd_sigmoid_score(0.041), 51);
}

static ms_status_t pods_from(char *text, ms_fgd_pods_t *p)
{
    FILE *f = fmemopen(text, strlen(text), "r");
    ms_diag_t d;
    ms_status_t st;

    assert_non_null(f);
    st = ms_fgd_pods_read_stream(f, "pods.csv", p, &d);
    fclose(f);
    return st;
}

static void test_typical_rule(void **state)
{
    /* T1 (1000,0,0) x5, T2 (2000,500,1) x3, T3 (3000,1000,1) x1,
     * T4 (1000,1000,1) x1: 10 pods. T3 and T4 tie; the larger tuple first. */
    char text[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                  "a,1000,1,0,0\nb,2000,1,1,500\nc,1000,1,1,1000\nd,1000,1,0,0\n"
                  "e,2000,1,1,500\nf,1000,1,0,0\ng,3000,1,1,1000\nh,1000,1,0,0\n"
                  "i,2000,1,1,500\nj,1000,1,0,0\n";
    ms_fgd_pods_t p;
    ms_fgd_classes_t c;

    (void)state;
    assert_int_equal(pods_from(text, &p), MS_OK);
    /* 85% = 8.5 pods: 5, 8, 9 -> three classes, T3 before T4 */
    assert_int_equal(ms_fgd_typical(&p, 85, &c), MS_OK);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.ndistinct, 4);
    assert_int_equal(c.covered, 9);
    assert_int_equal(c.total, 10);
    assert_int_equal(c.v[0].num_gpu, 0);
    assert_int_equal(c.v[0].count, 5);
    assert_int_equal(c.v[1].gpu_milli, 500);
    assert_int_equal(c.v[2].cpu_milli, 3000);
    assert_float_equal(c.v[0].p, 5.0 / 9.0, 1e-12);
    assert_float_equal(c.v[2].p, 1.0 / 9.0, 1e-12);
    ms_fgd_classes_free(&c);
    /* 80% = 8 pods: reached exactly after two classes */
    assert_int_equal(ms_fgd_typical(&p, 80, &c), MS_OK);
    assert_int_equal(c.n, 2);
    assert_float_equal(c.v[1].p, 3.0 / 8.0, 1e-12);
    ms_fgd_classes_free(&c);
    /* 95%: every class */
    assert_int_equal(ms_fgd_typical(&p, 95, &c), MS_OK);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.v[3].cpu_milli, 1000);
    assert_int_equal(c.v[3].gpu_milli, 1000);
    ms_fgd_classes_free(&c);
    assert_int_equal(ms_fgd_typical(&p, 0, &c), MS_EINVAL);
    ms_fgd_pods_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frag_per_class),
        cmocka_unit_test(test_frag_node),
        cmocka_unit_test(test_fgd_score),
        cmocka_unit_test(test_typical_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
