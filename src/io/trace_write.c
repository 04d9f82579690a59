/* trace_write.c - write a trace back as CSV.
 *
 * Numbers are printed in the shortest of %.15g / %.17g that reads back to
 * the same double, so write -> read is exact and the file stays readable.
 */
#include "migsched/trace.h"

#include <stdbool.h>
#include <stdlib.h>

static void fmt_num(char *buf, size_t n, double v)
{
    snprintf(buf, n, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, n, "%.17g", v);
}

ms_status_t ms_trace_write(FILE *f, const ms_trace_t *t)
{
    size_t i;
    int gang = 0;
    bool tenant = t != NULL && t->ntenants > 0 && t->req != NULL;

    if (f == NULL || t == NULL)
        return MS_EINVAL;
    for (i = 0; i < t->n; i++)
        if (t->jobs[i].gang > 1)
            gang = 1;
    if (fprintf(f, "job_id,arrival_s,profile,duration_s%s%s\n", gang ? ",gpus" : "",
                tenant ? ",tenant" : "") < 0)
        return MS_EIO;
    for (i = 0; i < t->n; i++) {
        const ms_job_t *j = &t->jobs[i];
        char a[40], d[40];

        fmt_num(a, sizeof(a), j->arrival);
        fmt_num(d, sizeof(d), j->duration);
        fprintf(f, "%s,%s,%s,%s", ms_trace_name(t, i), a, ms_geom_profile(t->geom, j->prof)->name,
                d);
        if (gang)
            fprintf(f, ",%d", (int)j->gang);
        if (tenant) {
            int k = t->req[i].tenant;

            fprintf(f, ",%s", k > 0 && k <= t->ntenants ? t->tenants[k - 1] : "");
        }
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f))
        return MS_EIO;
    return MS_OK;
}
