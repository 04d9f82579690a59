/* fuzz_weights.c - the CLI's --weights / --mix list (src/cli/lists.c):
 * what it accepts gives a finite FragCost in [0, 1]. */
#include "fuzz.h"

#include <math.h>

#include "cli/cli.h"
#include "migsched/frag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ms_geom_t *g = fuzz_a100();
    char *s = fuzz_string(data, size);
    double w[MS_MAX_PROFILES];
    ms_frag_opts_t fo = { NULL, false };
    ms_diag_t d;
    ms_status_t st;

    if (s == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_cli_parse_weights(g, "weights", s, w, &d);
    fuzz_check_status(st, &d);
    if (st == MS_OK) {
        ms_state_t e = ms_geom_empty_state();
        ms_state_t one = ms_state_place(g, e, 0, 1);
        double fc;

        fo.weights = w;
        fc = ms_frag_cost(g, one != MS_STATE_NONE ? one : e, &fo);
        if (!(fc >= 0.0 && fc <= 1.0))
            abort();
    }
    free(s);
    return 0;
}
