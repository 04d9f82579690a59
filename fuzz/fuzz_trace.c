/* fuzz_trace.c - the trace CSV reader (trace_read.c); a trace that reads
 * must write and read back to the same jobs. */
#include "fuzz.h"

#include "migsched/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ms_geom_t *g = fuzz_a100();
    FILE *f = fuzz_stream(data, size);
    ms_trace_t *t = NULL, *t2 = NULL;
    ms_diag_t d;
    ms_status_t st;
    char *buf = NULL;
    size_t len = 0;
    FILE *w;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_trace_read(f, "fuzz", g, &t, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st != MS_OK) {
        if (t != NULL)
            abort();   /* nothing is half-read */
        return 0;
    }
    for (size_t i = 0; i < t->n; i++)
        if (!(t->jobs[i].arrival >= 0 && t->jobs[i].arrival <= MS_TRACE_MAX_S &&
              t->jobs[i].duration >= 0 && t->jobs[i].duration <= MS_TRACE_MAX_S))
            abort();
    w = open_memstream(&buf, &len);
    if (w != NULL && ms_trace_write(w, t) == MS_OK && fclose(w) == 0) {
        FILE *r = fuzz_stream((const uint8_t *)buf, len);
        if (r != NULL) {
            st = ms_trace_read(r, "again", g, &t2, &d);
            fclose(r);
            if (st == MS_OK && t2->n != t->n)
                abort();
            if (st != MS_OK && st != MS_ENOMEM)
                abort();   /* what we write, we read */
            ms_trace_free(t2);
        }
    } else if (w != NULL) {
        fclose(w);
    }
    free(buf);
    ms_trace_free(t);
    return 0;
}
