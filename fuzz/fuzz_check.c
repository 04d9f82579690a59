/* fuzz_check.c - the schedule checker (schedule_check.c): the input is a
 * trace and a schedule separated by the first NUL byte (a trace alone is
 * checked against an empty schedule). */
#include "fuzz.h"

#include "migsched/check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ms_geom_t *g = fuzz_a100();
    const uint8_t *nul = memchr(data, '\0', size);
    size_t tn = nul != NULL ? (size_t)(nul - data) : size;
    static const uint8_t empty[] = "job_id,gpu,start,profile,begin_s,end_s\n";
    const uint8_t *sd = nul != NULL ? nul + 1 : empty;
    size_t sn = nul != NULL ? size - tn - 1 : sizeof(empty) - 1;
    ms_trace_t *t = NULL;
    ms_check_result_t r;
    ms_check_opts_t o;
    ms_diag_t d;
    ms_status_t st;
    FILE *f = fuzz_stream(data, tn);

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_trace_read(f, "trace", g, &t, &d);
    fclose(f);
    if (st != MS_OK)
        return 0;
    memset(&o, 0, sizeof(o));
    o.ngpus = 4;
    o.gpus_per_node = 2;
    o.timeslice = size > 0 && (data[0] & 1);
    if ((f = fuzz_stream(sd, sn)) != NULL) {
        ms_diag_clear(&d);
        st = ms_schedule_check(f, "sched", t, &o, &r, &d);
        fclose(f);
        fuzz_check_status(st, &d);
        if (st == MS_OK) {
            if (r.jobs_run + r.jobs_missing + r.jobs_unrunnable != (long)t->n)
                abort();   /* every job is accounted for */
            if (r.jobs_missing > 0 && !o.allow_missing && r.violations == 0)
                abort();   /* a missing job is a violation */
        }
    }
    ms_trace_free(t);
    return 0;
}
