/* fuzz_fgd_json.c - the fgd-experiment JSON reader (report_json.c). */
#include "fuzz.h"

#include "migsched/research/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    ms_report_fgd_t *r = NULL;
    ms_diag_t d;
    ms_status_t st;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_report_read_fgd(f, "fgd.json", &r, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st == MS_OK && r->gpus < 0)
        abort();
    ms_report_fgd_free(r);
    return 0;
}
