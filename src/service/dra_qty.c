/* dra_qty.c - Kubernetes quantities as numbers (any thread; pure).
 *
 * The API's grammar (k8s.io/apimachinery resource.Quantity): a signed
 * decimal number, then a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal one
 * (n u m k M G T P E) or an exponent (e3, E-2). Device capacities and
 * counters are bytes and counts far below 2^53, so a double holds them
 * exactly; anything longer than 64 characters, or not finite, is refused.
 */
#include <math.h>
#include <string.h>

#include "service/dra_int.h"

static int suffix(const char *s, double *mul)
{
    static const struct { const char *s; double m; } S[] = {
        { "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 }, { "Ti", 1099511627776.0 },
        { "Pi", 1125899906842624.0 }, { "Ei", 1152921504606846976.0 },
        { "n", 1e-9 }, { "u", 1e-6 }, { "m", 1e-3 }, { "", 1.0 }, { "k", 1e3 }, { "M", 1e6 },
        { "G", 1e9 }, { "T", 1e12 }, { "P", 1e15 }, { "E", 1e18 },
    };
    size_t i;

    for (i = 0; i < sizeof(S) / sizeof(S[0]); i++)
        if (strcmp(s, S[i].s) == 0) {
            *mul = S[i].m;
            return 0;
        }
    /* a decimal exponent: e or E, an optional sign, 1..3 digits */
    if ((s[0] == 'e' || s[0] == 'E') && s[1] != '\0') {
        const char *p = s + 1;
        int sign = 1, e = 0, nd = 0;

        if (*p == '+' || *p == '-')
            sign = *p++ == '-' ? -1 : 1;
        for (; *p >= '0' && *p <= '9' && nd < 4; p++, nd++)
            e = e * 10 + (*p - '0');
        if (*p != '\0' || nd == 0 || nd > 3)
            return -1;
        *mul = pow(10.0, sign * e);
        return 0;
    }
    return -1;
}

int dra_qty_parse(const char *s, double *out)
{
    const char *p = s;
    double v = 0.0, scale = 0.1, mul;
    int sign = 1, nd = 0;

    if (s == NULL || strlen(s) > 64)
        return -1;
    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    for (; *p >= '0' && *p <= '9'; p++, nd++)
        v = v * 10.0 + (*p - '0');
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, nd++, scale /= 10.0)
            v += (*p - '0') * scale;
    }
    if (nd == 0 || suffix(p, &mul) != 0)
        return -1;
    v = sign * v * mul;
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}
