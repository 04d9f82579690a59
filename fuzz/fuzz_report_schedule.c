/* fuzz_report_schedule.c - the report's schedule reader and what is drawn
 * from it (report.c, report_series.c, svg.c): utilisation and FragCost
 * series and the Gantt chart, written to /dev/null. Work and memory must
 * follow the rows, never the GPU numbers in them. */
#include "fuzz.h"

#include "migsched/research/report.h"
#include "migsched/research/svg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ms_geom_t *g = fuzz_a100();
    FILE *f = fuzz_stream(data, size), *out;
    ms_segment_t *segs = NULL;
    size_t n = 0, np = 0, skip = 0;
    int ngpus = 0;
    double *t = NULL, *v = NULL;
    ms_diag_t d;
    ms_status_t st;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_report_read_schedule(f, "sched", g, &segs, &n, &ngpus, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st != MS_OK || ngpus <= 0) {
        free(segs);
        return 0;
    }
    if (ms_report_util_series(g, ngpus, segs, n, &t, &v, &np) == MS_OK) {
        (void)ms_report_step_mean(t, v, np);
        free(t);
        free(v);
    }
    if (ms_report_frag_series(g, ngpus, segs, n, &t, &v, &np, &skip) == MS_OK) {
        free(t);
        free(v);
    }
    out = fopen("/dev/null", "w");
    if (out != NULL) {
        (void)ms_svg_gantt(out, NULL, g, ngpus, segs, n);
        fclose(out);
    }
    free(segs);
    return 0;
}
