/* fuzz_used.c - the CLI's --used instance list (src/cli/lists.c): what it
 * accepts is a legal layout of the GPU. */
#include "fuzz.h"

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ms_geom_t *g = fuzz_a100();
    char *s = fuzz_string(data, size);
    ms_gi_t gis[MS_MAX_WIDTH];
    ms_state_t state;
    ms_diag_t d;
    ms_status_t st;
    int n = 0;

    if (s == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_cli_parse_used(g, s, gis, &n, &state, &d);
    fuzz_check_status(st, &d);
    if (st == MS_OK && (n < 0 || n > MS_MAX_WIDTH || !ms_geom_layout_valid(g, gis, n)))
        abort();
    free(s);
    return 0;
}
