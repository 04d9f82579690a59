/* test_rng.c - the library PRNG (xoshiro256** seeded by splitmix64). The
 * stream is pinned: gen-trace, fgd-experiment and import-alibaba --fill
 * outputs depend on it bit for bit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "migsched/rng.h"

static void test_rng_stream_pinned(void **state)
{
    static const uint64_t want42[3] = {
        UINT64_C(0x15780b2e0c2ec716),
        UINT64_C(0x6104d9866d113a7e),
        UINT64_C(0xae17533239e499a1),
    };
    static const uint64_t want_below7[5] = { 4, 4, 8, 4, 4 };
    ms_rng_t g;

    (void)state;
    ms_rng_seed(&g, 42);
    for (int i = 0; i < 3; i++)
        assert_true(ms_rng_next(&g) == want42[i]);
    ms_rng_seed(&g, 0);
    assert_true(ms_rng_next(&g) == UINT64_C(0x99ec5f36cb75f2b4));
    ms_rng_seed(&g, 7);
    for (int i = 0; i < 5; i++)
        assert_true(ms_rng_below(&g, 10) == want_below7[i]);
}

static void test_rng(void **state)
{
    ms_rng_t a, b;
    int hist[5] = { 0 };

    (void)state;
    ms_rng_seed(&a, 42);
    ms_rng_seed(&b, 42);
    for (int i = 0; i < 100; i++)
        assert_true(ms_rng_next(&a) == ms_rng_next(&b));
    for (int i = 0; i < 5000; i++)
        hist[ms_rng_below(&a, 5)]++;
    for (int k = 0; k < 5; k++)
        assert_true(hist[k] > 850 && hist[k] < 1150);
}

static void test_rng_unit(void **state)
{
    ms_rng_t a, b;

    (void)state;
    ms_rng_seed(&a, 9);
    ms_rng_seed(&b, 9);
    assert_int_equal(ms_rng_below(&a, 1), 0);
    for (int i = 0; i < 1000; i++) {
        double u = ms_rng_unit(&a);

        assert_true(u >= 0.0 && u < 1.0);
        assert_true(u == (double)(ms_rng_next(&b) >> 11) * 0x1.0p-53);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng_stream_pinned),
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_rng_unit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
