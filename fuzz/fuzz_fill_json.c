/* fuzz_fill_json.c - the MIG fill-experiment JSON reader (report_json.c). */
#include "fuzz.h"

#include "migsched/research/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    ms_report_fill_t *r = NULL;
    ms_diag_t d;
    ms_status_t st;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_report_read_fill(f, "fill.json", &r, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st == MS_OK && r->ngpus < 0)
        abort();
    ms_report_fill_free(r);
    return 0;
}
