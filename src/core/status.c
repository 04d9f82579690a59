/* status.c - status text and diagnostics. */
#include "migsched/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ms_strerror(ms_status_t st)
{
    switch (st) {
#define MS__STATUS_STR(name, val, msg) case MS_##name: return msg;
    MS_STATUS_MAP(MS__STATUS_STR)
#undef MS__STATUS_STR
    }
    return "unknown status";
}

const char *ms_status_name(ms_status_t st)
{
    switch (st) {
#define MS__STATUS_NAME(name, val, msg) case MS_##name: return "MS_" #name;
    MS_STATUS_MAP(MS__STATUS_NAME)
#undef MS__STATUS_NAME
    }
    return "MS_UNKNOWN";
}

/* Empty strings, not a zeroed struct: the scheduler clears one at every
 * submission, and 580 bytes of memset were 1% of a simulation. */
void ms_diag_clear(ms_diag_t *d)
{
    if (d != NULL) {
        d->file[0] = '\0';
        d->line = 0;
        d->field[0] = '\0';
        d->msg[0] = '\0';
    }
}

void ms_diag_set(ms_diag_t *d, const char *file, long line, const char *field,
                 const char *fmt, ...)
{
    va_list ap;

    if (d == NULL)
        return;
    snprintf(d->file, sizeof(d->file), "%s", file != NULL ? file : "");
    d->line = line;
    snprintf(d->field, sizeof(d->field), "%s", field != NULL ? field : "");
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
    va_end(ap);
}
