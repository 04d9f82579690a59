/* fuzz_arrivals.c - the report's arrival reader and wait times
 * (report_series.c): memory follows the rows, not the job ids. */
#include "fuzz.h"

#include "migsched/research/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    ms_report_arrival_t *a = NULL;
    ms_segment_t s[2];
    double *w = NULL;
    size_t n = 0, nw = 0;
    ms_diag_t d;
    ms_status_t st;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_report_read_arrivals(f, "t.csv", &a, &n, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st != MS_OK)
        return 0;
    memset(s, 0, sizeof(s));
    s[0].job = n > 0 ? a[0].id : 0;
    s[0].begin_s = 1.0;
    s[0].end_s = 2.0;
    s[1].job = n > 0 ? a[n - 1].id : 1;
    s[1].begin_s = 3.0;
    s[1].end_s = 4.0;
    if (ms_report_wait_times(a, n, s, 2, &w, &nw) == MS_OK && nw > n)
        abort();
    free(w);
    free(a);
    return 0;
}
