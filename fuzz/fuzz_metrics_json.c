/* fuzz_metrics_json.c - the metrics JSON reader (report.c). */
#include "fuzz.h"

#include "migsched/research/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    ms_metrics_t m;
    char policy[32];
    ms_diag_t d;
    ms_status_t st;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_report_read_metrics(f, "m.json", &m, policy, sizeof(policy), &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st == MS_OK && (m.jobs_total < 0 || m.jobs_completed < 0 || strlen(policy) >= 32))
        abort();
    return 0;
}
