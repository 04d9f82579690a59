/* fuzz_layout.c - the --static-layout parser (src/policy/layout.c). */
#include "fuzz.h"

#include "migsched/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    ms_diag_t d;
    ms_status_t st;

    if (s == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_policy_layout_check(fuzz_a100(), s, &d);
    fuzz_check_status(st, &d);
    free(s);
    return 0;
}
