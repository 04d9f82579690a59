/* test_fgd_tune.c - tuning a pod list up always ends (issue 8 defect 1):
 * without GPU demand it is an error, and the list never grows past
 * MS_FGD_TUNE_MAX. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "migsched/research/fgd.h"
#include "migsched/rng.h"

typedef struct req { int num_gpu, milli; } req_t;

static void req_of(const void *pods, size_t i, int *num_gpu, int *gpu_milli)
{
    const req_t *r = (const req_t *)pods + i;

    *num_gpu = r->num_gpu;
    *gpu_milli = r->milli;
}

static ms_status_t tune(const req_t *pods, size_t n, double target, size_t *out_n)
{
    size_t cap = n * 2 + 16, len = n;
    size_t *list = malloc(cap * sizeof(*list));
    ms_rng_t rng;
    ms_status_t st;

    assert_non_null(list);
    for (size_t i = 0; i < n; i++)
        list[i] = i;
    ms_rng_seed(&rng, 42);
    st = ms_fgd_shuffle_tune(&rng, &list, &len, &cap, pods, n, req_of, 0, target, true);
    *out_n = len;
    free(list);
    return st;
}

static void test_no_demand_ends(void **state)
{
    /* CPU-only pods, and pods with milli but no GPUs: no draw moves the total */
    static const req_t cpu[] = { { 0, 0 }, { 0, 0 } }, odd[] = { { 0, 500 } };
    size_t n;

    (void)state;
    assert_int_equal(tune(cpu, 2, 1.3 * 8 * 1000, &n), MS_EINVAL);
    assert_int_equal(tune(odd, 1, 1.3 * 8 * 1000, &n), MS_EINVAL);
}

static void test_bounded_and_normal(void **state)
{
    /* one pod of 1 milli-GPU for a target of 1e9: far too small a list */
    static const req_t tiny[] = { { 1, 1 } }, mixed[] = { { 1, 1000 }, { 0, 0 }, { 2, 500 } };
    size_t n;

    (void)state;
    assert_int_equal(tune(tiny, 1, 1e9, &n), MS_ERANGE);
    assert_true(n <= MS_FGD_TUNE_MAX(1));
    /* an ordinary list reaches its target */
    assert_int_equal(tune(mixed, 3, 8 * 1000 * 1.3, &n), MS_OK);
    assert_true(n > 3 && n < 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_demand_ends),
        cmocka_unit_test(test_bounded_and_normal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
