/* number.c - strict decimal numbers (see number.h). */
#include "migsched/number.h"

#include <errno.h>
#include <math.h>
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

ms_status_t ms_number_double(const char *s, double *out)
{
    int integral;
    char *end;
    double v;

    if (s == NULL || out == NULL || !decimal_syntax(s, &integral))
        return MS_EPARSE;
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

int ms_number_fits_int(double v, int64_t lo, int64_t hi)
{
    /* Compare as doubles first: (double)INT64_MAX is 2^63, one past the
     * range, so the upper test is strict against it. */
    if (!(v >= (double)lo) || !(v < 9223372036854775808.0))
        return 0;
    return (int64_t)v <= hi;
}
