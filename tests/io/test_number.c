/* test_number.c - the one number syntax (number.h): decimal only, finite,
 * underflow towards zero, integers in range, and the cast guard. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The reader's own path for plain decimals (no strtod when the digits
 * allow an exact division) gives strtod's double to the bit: random
 * decimals of 1 to 20 digits with a point anywhere, signs and leading
 * zeros, plus the edges of the fast path (2^53, 10^22, -0). */
static void same_as_strtod(const char *s)
{
    double v, w = strtod(s, NULL);

    assert_int_equal(ms_number_double(s, &v), MS_OK);
    if (memcmp(&v, &w, sizeof(v)) != 0)
        fail_msg("%s: %.17g, strtod %.17g", s, v, w);
}

static void test_double_bits(void **state)
{
    static const char *const edge[] = { "-0", "0.000", "-0.0", "9007199254740992", "9007199254740993",
                                        "9007199254740992.5", "0.0000000000000000000001",
                                        "1.0000000000000000000001", "0.1", "0.3", "2.675", "1e23",
                                        "8.98846567431158e307", "4.9406564584124654e-324", "123456789012345678" };
    uint64_t x = 88172645463325252ULL;
    char buf[48];
    int i, k;

    (void)state;
    for (i = 0; i < (int)(sizeof(edge) / sizeof(edge[0])); i++)
        same_as_strtod(edge[i]);
    for (i = 0; i < 200000; i++) {
        int nd, point, n = 0;

        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        nd = 1 + (int)(x % 20);
        point = (int)((x >> 8) % (uint64_t)(nd + 2)) - 1;   /* -1: none */
        if ((x >> 20) % 3 == 0)
            buf[n++] = (x >> 22) & 1 ? '-' : '+';
        for (k = 0; k < nd; k++) {
            if (k == point)
                buf[n++] = '.';
            buf[n++] = (char)('0' + (x >> (24 + 2 * (k % 16))) % 10 * ((x >> 40) % 4 != 0 || k > 0));
        }
        if (point == nd)
            buf[n++] = '.';
        buf[n] = '\0';
        same_as_strtod(buf);
    }
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

/* Unsigned: the whole uint64 range, never a wrapped negative. */
static void test_uint(void **state)
{
    uint64_t v = 7;

    (void)state;
    assert_int_equal(ms_number_uint("18446744073709551615", UINT64_MAX, &v), MS_OK);
    assert_true(v == UINT64_MAX);
    assert_int_equal(ms_number_uint("+42", UINT64_MAX, &v), MS_OK);
    assert_true(v == 42);
    assert_int_equal(ms_number_uint("-0", UINT64_MAX, &v), MS_OK);
    assert_true(v == 0);
    assert_int_equal(ms_number_uint("18446744073709551616", UINT64_MAX, &v), MS_ERANGE);
    assert_int_equal(ms_number_uint("-1", UINT64_MAX, &v), MS_ERANGE);
    assert_int_equal(ms_number_uint("-18446744073709551615", UINT64_MAX, &v), MS_ERANGE);
    assert_int_equal(ms_number_uint("11", 10, &v), MS_ERANGE);
    assert_int_equal(ms_number_uint("0x10", UINT64_MAX, &v), MS_EPARSE);
    assert_int_equal(ms_number_uint("1e3", UINT64_MAX, &v), MS_EPARSE);
    assert_int_equal(ms_number_uint(" 1", UINT64_MAX, &v), MS_EPARSE);
    assert_int_equal(ms_number_uint("", UINT64_MAX, &v), MS_EPARSE);
    assert_true(v == 0);
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
        cmocka_unit_test(test_double_bits),
        cmocka_unit_test(test_int),
        cmocka_unit_test(test_uint),
        cmocka_unit_test(test_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
