/* test_number.c - the one number syntax (number.h): decimal only, finite,
 * underflow towards zero, integers in range, and the cast guard. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "migsched/number.h"

static void test_double(void **state)
{
    static const char *const good[] = { "0", "-2.5", "+3E4", ".5", "5.", "1e-320", "007",
                                        "1.7976931348623157e308" };
    static const char *const junk[] = { "", " 5", "5 ", "0x10", "inf", "-inf", "nan", "1e",
                                        "e5", ".", "-", "1..2", "1e+", "5f", "1,5" };
    double v;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(ms_number_double(good[i], &v), MS_OK);
        assert_true(isfinite(v));
    }
    assert_int_equal(ms_number_double("1e-320", &v), MS_OK);
    assert_true(v >= 0.0 && v < 1e-300);
    for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
        assert_int_equal(ms_number_double(junk[i], &v), MS_EPARSE);
    assert_int_equal(ms_number_double("1e309", &v), MS_ERANGE);
    assert_int_equal(ms_number_double("-1e999", &v), MS_ERANGE);
    assert_int_equal(ms_number_double(NULL, &v), MS_EPARSE);
}

static void test_int(void **state)
{
    int64_t k;

    (void)state;
    assert_int_equal(ms_number_int("42", 0, 100, &k), MS_OK);
    assert_int_equal(k, 42);
    assert_int_equal(ms_number_int("-7", -10, 10, &k), MS_OK);
    assert_int_equal(k, -7);
    assert_int_equal(ms_number_int("101", 0, 100, &k), MS_ERANGE);
    assert_int_equal(ms_number_int("9223372036854775808", 0, INT64_MAX, &k), MS_ERANGE);
    assert_int_equal(ms_number_int("1.0", 0, 100, &k), MS_EPARSE);
    assert_int_equal(ms_number_int("1e2", 0, 1000, &k), MS_EPARSE);
    assert_int_equal(ms_number_int(" 1", 0, 100, &k), MS_EPARSE);
    assert_int_equal(ms_number_int("0x1", 0, 100, &k), MS_EPARSE);
}

static void test_fits(void **state)
{
    (void)state;
    assert_true(ms_number_fits_int(5.0, 0, 10));
    assert_false(ms_number_fits_int(11.0, 0, 10));
    assert_false(ms_number_fits_int(-0.5 - 1.0, 0, 10));
    assert_false(ms_number_fits_int(NAN, 0, 10));
    assert_false(ms_number_fits_int(4e118, 0, INT64_MAX));
    assert_false(ms_number_fits_int(9223372036854775808.0, 0, INT64_MAX));   /* 2^63 */
    assert_true(ms_number_fits_int(9223372036854774784.0, 0, INT64_MAX));    /* 2^63 - 1024 */
    assert_true(ms_number_fits_int(-9223372036854775808.0, INT64_MIN, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_int),
        cmocka_unit_test(test_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
