/* test_fgd_policy.c - filters, placement and the baseline scores
 * (fgd.md §1.6): packing tiers, dot product, best-fit normalisation,
 * clustering tiers, and small end-to-end runs of every policy. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/research/fgd.h"

static ms_fgd_res_t res(int64_t cpu, int ngpu, const int *left)
{
    ms_fgd_res_t r;

    memset(&r, 0, sizeof(r));
    r.cpu_left = cpu;
    r.mem_left = 100000;
    r.ngpu = ngpu;
    r.model = 0;
    for (int i = 0; i < ngpu; i++)
        r.gpu_left[i] = left != NULL ? left[i] : 1000;
    return r;
}

static ms_fgd_pod_t pod(int64_t cpu, int num, int milli)
{
    ms_fgd_pod_t p;

    memset(&p, 0, sizeof(p));
    p.cpu_milli = cpu;
    p.mem_mib = 1000;
    p.num_gpu = num;
    p.gpu_milli = milli;
    p.access = UINT32_MAX;
    return p;
}

static void test_filters(void **state)
{
    static const int left[4] = { 1000, 500, 200, 0 };
    ms_fgd_res_t r = res(8000, 4, left);
    ms_fgd_pod_t p = pod(4000, 1, 500);

    (void)state;
    assert_true(ms_fgd_fits(&r, &p));
    p.gpu_milli = 600;
    assert_true(ms_fgd_fits(&r, &p));              /* the free GPU */
    p.num_gpu = 2;
    p.gpu_milli = 1000;
    assert_false(ms_fgd_fits(&r, &p));             /* one whole GPU only */
    p = pod(9000, 0, 0);
    assert_false(ms_fgd_fits(&r, &p));             /* CPU */
    p = pod(1000, 1, 100);
    p.mem_mib = 200000;
    assert_false(ms_fgd_fits(&r, &p));             /* memory */
    p = pod(1000, 1, 100);
    p.access = 1u << 1;
    assert_false(ms_fgd_fits(&r, &p));             /* model allow-list */
    p = pod(1000, 0, 0);
    p.access = 0;
    assert_true(ms_fgd_fits(&r, &p));              /* CPU pods ignore it */
}

static void test_place_and_gpu_choice(void **state)
{
    static const int left[4] = { 1000, 500, 200, 1000 };
    ms_fgd_res_t r = res(8000, 4, left);
    ms_fgd_pod_t share = pod(1000, 1, 150), whole = pod(1000, 2, 1000);

    (void)state;
    assert_int_equal(ms_fgd_gpu_best(&r, &share), 2);  /* tightest fit */
    share.gpu_milli = 300;
    assert_int_equal(ms_fgd_gpu_best(&r, &share), 1);
    assert_int_equal(ms_fgd_gpu_best(&r, &whole), -1);
    ms_fgd_place(&r, &share, 1);
    assert_int_equal(r.gpu_left[1], 200);
    assert_int_equal(r.tags[0], 1);
    ms_fgd_place(&r, &whole, -1);                      /* first free by index */
    assert_int_equal(r.gpu_left[0], 0);
    assert_int_equal(r.gpu_left[3], 0);
    assert_int_equal(r.tags[2], 1);
    assert_int_equal(r.cpu_left, 6000);
    assert_int_equal(r.mem_left, 98000);
    share.gpu_milli = 200;
    assert_int_equal(ms_fgd_gpu_best(&r, &share), 1);  /* ties: lowest index */
}

static void test_packing_tiers(void **state)
{
    static const int used[4] = { 1000, 1000, 500, 0 };
    ms_fgd_res_t idle8 = res(96000, 8, NULL), idle2 = res(96000, 2, NULL);
    ms_fgd_res_t busy = res(96000, 4, used);
    ms_fgd_pod_t one = pod(1000, 1, 1000), two = pod(1000, 2, 1000), four = pod(1000, 4, 1000);
    ms_fgd_pod_t share = pod(1000, 1, 300), cpu = pod(1000, 0, 0);

    (void)state;
    /* (a) idle node: max(33 - free, free) */
    assert_int_equal(ms_fgd_score_packing(&idle8, &one), 25);
    assert_int_equal(ms_fgd_score_packing(&idle2, &share), 31);
    /* (b) busy node, fully free GPUs needed: max(50 - used, 33) */
    assert_int_equal(ms_fgd_score_packing(&busy, &one), 49);
    assert_int_equal(ms_fgd_score_packing(&busy, &two), 48);
    /* (c) shared GPU: 100 - (500·100/1000)/10 = 95 */
    assert_int_equal(ms_fgd_score_packing(&busy, &share), 95);
    assert_int_equal(ms_fgd_score_packing(&busy, &four), 0);
    assert_int_equal(ms_fgd_score_packing(&busy, &cpu), 0);
    /* the tiers are ordered: shared > busy node > idle node */
    assert_true(ms_fgd_score_packing(&busy, &share) > ms_fgd_score_packing(&busy, &one));
    assert_true(ms_fgd_score_packing(&busy, &one) > ms_fgd_score_packing(&idle2, &one));
}

static void test_dot_product(void **state)
{
    ms_fgd_res_t r = res(64000, 4, NULL);
    ms_fgd_pod_t p = pod(32000, 1, 1000);

    (void)state;
    /* node [0.5, 0.5], pod [0.25, 0.125]: d = 0.1875/2, 100·(1-d) = 90.6 */
    assert_int_equal(ms_fgd_score_dotprod(&r, &p), 90);
    p.cpu_milli = 70000;
    assert_int_equal(ms_fgd_score_dotprod(&r, &p), 0);
    /* smaller dot product scores higher */
    p = pod(1000, 1, 500);
    r.gpu_left[0] = r.gpu_left[1] = 0;
    {
        ms_fgd_res_t big = res(64000, 4, NULL);
        assert_true(ms_fgd_score_dotprod(&r, &p) >= ms_fgd_score_dotprod(&big, &p));
    }
}

static void test_best_fit(void **state)
{
    ms_fgd_res_t r = res(64000, 4, NULL);
    ms_fgd_pod_t p = pod(32000, 1, 1000);
    int s3[3] = { 68, 80, 74 }, eq[2] = { 5, 5 }, s[3] = { 10, 20, 13 };

    (void)state;
    /* leftover 0.5·32000/128000 + 0.5·3000/8000 = 0.3125 -> 68 */
    assert_int_equal(ms_fgd_score_bestfit_raw(&r, &p), 68);
    ms_fgd_normalize(s3, 3);
    assert_int_equal(s3[0], 0);
    assert_int_equal(s3[1], 100);
    assert_int_equal(s3[2], 50);
    ms_fgd_normalize(eq, 2);
    assert_int_equal(eq[0], 0);
    assert_int_equal(eq[1], 0);
    ms_fgd_normalize(s, 3);
    assert_int_equal(s[2], 30);                     /* (13-10)·100/10, integer */
}

static void test_clustering(void **state)
{
    ms_fgd_res_t empty = res(96000, 8, NULL), r = res(96000, 8, NULL);
    ms_fgd_pod_t share = pod(1000, 1, 500), one = pod(1000, 1, 1000), cpu = pod(1000, 0, 0);

    (void)state;
    assert_int_equal(ms_fgd_score_clustering(&empty, &share), 25);   /* no GPU pods */
    ms_fgd_place(&r, &one, -1);                                     /* idle 7000 */
    /* bonus = 25·1000/8000 = 3 */
    assert_int_equal(ms_fgd_score_clustering(&r, &one), 78);        /* only its tag */
    assert_int_equal(ms_fgd_score_clustering(&r, &share), 3);       /* only others */
    ms_fgd_place(&r, &share, 1);                                    /* idle 6500 */
    assert_int_equal(ms_fgd_score_clustering(&r, &share), 54);      /* mixed: 4 + 50 */
    assert_int_equal(ms_fgd_score_clustering(&r, &cpu), 0);
}

static void test_policy_names(void **state)
{
    ms_fgd_policy_t p;

    (void)state;
    for (int i = 0; i < MS_FGD_NPOLICIES; i++) {
        assert_int_equal(ms_fgd_policy_parse(ms_fgd_policy_name((ms_fgd_policy_t)i), &p), MS_OK);
        assert_int_equal(p, i);
    }
    assert_int_equal(ms_fgd_policy_parse("first-fit", &p), MS_ENOENT);
}

/* A tiny cluster and workload, every policy, two seeds. */
static void test_small_runs(void **state)
{
    char nodes_text[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                        "a,32000,65536,4,G2\nb,16000,65536,2,T4\nc,64000,65536,8,G2\n"
                        "d,8000,32768,1,T4\n";
    char pods_text[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                       "p0,4000,1024,1,500,\np1,2000,1024,1,1000,\np2,1000,512,0,0,\n"
                       "p3,8000,1024,2,1000,G2\np4,3000,1024,1,250,T4\np5,2000,1024,1,700,\n"
                       "p6,4000,1024,1,1000,T4\np7,500,256,0,0,\n";
    ms_fgd_nodes_t n;
    ms_fgd_pods_t p;
    ms_fgd_classes_t c;
    ms_fgd_curve_t cv, cv2;
    ms_diag_t d;
    FILE *f;

    (void)state;
    f = fmemopen(nodes_text, strlen(nodes_text), "r");
    assert_int_equal(ms_fgd_nodes_read_stream(f, "n", &n, &d), MS_OK);
    fclose(f);
    f = fmemopen(pods_text, strlen(pods_text), "r");
    assert_int_equal(ms_fgd_pods_read_stream(f, "p", &p, &d), MS_OK);
    fclose(f);
    ms_fgd_pods_bind(&p, &n);
    assert_int_equal(ms_fgd_typical(&p, 95, &c), MS_OK);
    for (int pol = 0; pol < MS_FGD_NPOLICIES; pol++)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            ms_fgd_opts_t o = { (ms_fgd_policy_t)pol, seed, 1.3 };

            assert_int_equal(ms_fgd_run(&n, &p, &c, &o, &cv), MS_OK);
            assert_int_equal(ms_fgd_run(&n, &p, &c, &o, &cv2), MS_OK);
            assert_memory_equal(&cv, &cv2, sizeof(cv));     /* deterministic */
            assert_true(cv.npods >= p.n);
            assert_true(cv.final_unalloc_pct >= 0 && cv.final_unalloc_pct <= 100);
            for (int b = 0; b < MS_FGD_NBINS; b++)
                if (cv.have[b]) {
                    assert_true(cv.unalloc_pct[b] >= -1e-9 && cv.unalloc_pct[b] <= 100 + 1e-9);
                    assert_true(cv.frag_rate_pct[b] >= 0 && cv.frag_rate_pct[b] <= 100 + 1e-9);
                }
        }
    {
        ms_fgd_opts_t o = { MS_FGD_FGD, 1, 0 };           /* no tuning */
        assert_int_equal(ms_fgd_run(&n, &p, &c, &o, &cv), MS_OK);
        assert_int_equal(cv.npods, p.n);
        o.policy = MS_FGD_NPOLICIES;
        assert_int_equal(ms_fgd_run(&n, &p, &c, &o, &cv), MS_EINVAL);
    }
    ms_fgd_classes_free(&c);
    ms_fgd_pods_free(&p);
    ms_fgd_nodes_free(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_place_and_gpu_choice),
        cmocka_unit_test(test_packing_tiers),
        cmocka_unit_test(test_dot_product),
        cmocka_unit_test(test_best_fit),
        cmocka_unit_test(test_clustering),
        cmocka_unit_test(test_policy_names),
        cmocka_unit_test(test_small_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
