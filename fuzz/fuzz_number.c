/* fuzz_number.c - the one number syntax (src/io/number.c): what parses is
 * finite and strtod's double to the bit (the reader's fast path for plain
 * decimals included), integers agree with their double reading, and the
 * cast guard never lets an out-of-range value through. */
#include "fuzz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/number.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    double v;
    int64_t k;

    if (s == NULL)
        return 0;
    if (ms_number_double(s, &v) == MS_OK) {
        double w = strtod(s, NULL);   /* the grammar holds: strtod reads it all */

        if (!isfinite(v) || memcmp(&v, &w, sizeof(v)) != 0)
            abort();
        if (ms_number_fits_int(v, -1000000, 1000000) && ((int64_t)v < -1000000 ||
                                                         (int64_t)v > 1000000))
            abort();
    }
    if (ms_number_int(s, -5000, 5000, &k) == MS_OK) {
        if (k < -5000 || k > 5000 || ms_number_double(s, &v) != MS_OK || v != (double)k)
            abort();
    }
    free(s);
    return 0;
}
