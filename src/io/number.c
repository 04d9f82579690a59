/* number.c - strict decimal numbers (see number.h). */
#include "migsched/number.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* The grammar, checked before strtod/strtoll so that their extensions
 * (leading spaces, hex, inf, nan) never get in: [+-]? digits [. digits]?
 * ([eE] [+-]? digits)?, with at least one mantissa digit. Returns whether
 * s matches; *integral says it had neither fraction nor exponent. The walk
 * is one pass over s, bounded by its length. */
static int decimal_syntax(const char *s, int *integral)
{
    const char *p = s;
    int digits = 0;

    *integral = 1;
    if (*p == '+' || *p == '-')
        p++;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.') {
        *integral = 0;
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (*p == 'e' || *p == 'E') {
        int ed = 0;

        *integral = 0;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            ed++;
        }
        if (ed == 0)
            return 0;
    }
    return *p == '\0';
}

/* The common case without strtod (12% of reading a trace): a plain
 * decimal without exponent whose digits, leading zeros aside, make an
 * integer m <= 2^53 with k <= 22 of them after the point. m and 10^k are
 * then exact doubles and one IEEE division rounds m / 10^k correctly, so
 * the result is strtod's to the bit (Clinger's fast path). False when s is
 * not such a number; s matched the grammar. */
static bool fast_decimal(const char *s, double *out)
{
    static const double P10[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    const char *p = s;
    uint64_t m = 0;
    int sig = 0, frac = 0;
    bool neg = false, point = false;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    for (; *p != '\0'; p++) {
        if (*p == '.') {
            point = true;
            continue;
        }
        if (*p < '0' || *p > '9')
            return false;   /* an exponent: strtod's */
        frac += point;
        if (m == 0 && *p == '0')
            continue;
        if (++sig > 16)
            return false;
        m = m * 10 + (uint64_t)(*p - '0');
    }
    if (m > (UINT64_C(1) << 53) || frac > 22)
        return false;
    *out = (double)m / P10[frac];
    if (neg)
        *out = -*out;
    return true;
}

ms_status_t ms_number_double(const char *s, double *out)
{
    int integral;
    char *end;
    double v;

    if (s == NULL || out == NULL || !decimal_syntax(s, &integral))
        return MS_EPARSE;
#if FLT_EVAL_METHOD == 0   /* the division rounds once, to double */
    if (fast_decimal(s, out))
        return MS_OK;
#endif
    errno = 0;
    v = strtod(s, &end);
    if (*end != '\0')
        return MS_EPARSE;
    if (!isfinite(v))
        return MS_ERANGE;
    /* ERANGE with a finite result is underflow: the value rounded towards
     * zero, which is what a user writing 1e-320 means. */
    *out = v;
    return MS_OK;
}

ms_status_t ms_number_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    int integral;
    char *end;
    long long v;

    if (s == NULL || out == NULL || !decimal_syntax(s, &integral) || !integral)
        return MS_EPARSE;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (*end != '\0')
        return MS_EPARSE;
    if (errno == ERANGE || v < lo || v > hi)
        return MS_ERANGE;
    *out = (int64_t)v;
    return MS_OK;
}

ms_status_t ms_number_uint(const char *s, uint64_t hi, uint64_t *out)
{
    int integral;
    char *end;
    unsigned long long v;

    if (s == NULL || out == NULL || !decimal_syntax(s, &integral) || !integral)
        return MS_EPARSE;
    /* strtoull would wrap "-1" to 2^64 - 1: a negative number is out of
     * range, whatever its digits ("-0" is 0) */
    if (*s == '-') {
        const char *p = s + 1;

        while (*p == '0')
            p++;
        if (*p != '\0')
            return MS_ERANGE;
        *out = 0;
        return MS_OK;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end != '\0')
        return MS_EPARSE;
    if (errno == ERANGE || v > hi)
        return MS_ERANGE;
    *out = (uint64_t)v;
    return MS_OK;
}

int ms_number_fits_int(double v, int64_t lo, int64_t hi)
{
    /* Compare as doubles first: (double)INT64_MAX is 2^63, one past the
     * range, so the upper test is strict against it. */
    if (!(v >= (double)lo) || !(v < 9223372036854775808.0))
        return 0;
    return (int64_t)v <= hi;
}
