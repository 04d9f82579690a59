/* fuzz_profiles.c - the --profiles set parser (src/core/geometry.c), on
 * every model. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size > 0 ? size - 1 : 0);
    const ms_model_t *all, *m;
    uint32_t set = 0;
    ms_diag_t d;
    ms_status_t st;
    int n = 0;

    if (s == NULL)
        return 0;
    /* the last byte picks the model */
    all = ms_models(&n);
    m = n > 0 ? &all[size > 0 ? data[size - 1] % n : 0] : NULL;
    if (m != NULL) {
        ms_diag_clear(&d);
        st = ms_geom_parse_profile_set(m, s, &set, &d);
        fuzz_check_status(st, &d);
    }
    free(s);
    return 0;
}
