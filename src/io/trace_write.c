/* trace_write.c - write a trace back as CSV.
 *
 * Numbers are printed in the shortest of %.15g / %.17g that reads back to
 * the same double, so write -> read is exact and the file stays readable.
 * The optional columns are written when some job has them: gpus (a gang),
 * priority (not 0), tenant, checkpoint_s (above 0); the other constraints
 * (mem_gb, model, isolation) are not written.
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
    bool gang = false, prio = false, ckpt = false;
    bool tenant = t != NULL && t->ntenants > 0 && t->req != NULL;

    if (f == NULL || t == NULL)
        return MS_EINVAL;
    for (i = 0; i < t->n; i++) {
        gang |= t->jobs[i].gang > 1;
        prio |= t->req != NULL && t->req[i].priority != 0;
        ckpt |= t->req != NULL && t->req[i].checkpoint_s > 0.0;
    }
    if (fprintf(f, "job_id,arrival_s,profile,duration_s%s%s%s%s\n", gang ? ",gpus" : "",
                prio ? ",priority" : "", tenant ? ",tenant" : "", ckpt ? ",checkpoint_s" : "") < 0)
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
        if (prio)
            fprintf(f, ",%d", (int)t->req[i].priority);
        if (tenant) {
            int k = t->req[i].tenant;

            fprintf(f, ",%s", k > 0 && k <= t->ntenants ? t->tenants[k - 1] : "");
        }
        if (ckpt) {
            fmt_num(d, sizeof(d), t->req[i].checkpoint_s);
            fprintf(f, ",%s", t->req[i].checkpoint_s > 0.0 ? d : "");
        }
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f))
        return MS_EIO;
    return MS_OK;
}
