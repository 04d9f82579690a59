/* qopts.c - the queue disciplines' names. The queue's options are set by
 * name through the one option table (options.h, src/sim/options.c), with
 * the policies' and the simulator's. */
#include <string.h>

#include "migsched/sched.h"

static const char *const QNAME[] = { "backfill", "fifo", "easy" };

const char *ms_queue_mode_name(ms_queue_mode_t q)
{
    return (unsigned)q < sizeof(QNAME) / sizeof(QNAME[0]) ? QNAME[q] : "?";
}

ms_status_t ms_queue_mode_parse(const char *name, ms_queue_mode_t *out)
{
    unsigned i;

    for (i = 0; name != NULL && i < sizeof(QNAME) / sizeof(QNAME[0]); i++)
        if (strcmp(name, QNAME[i]) == 0) {
            *out = (ms_queue_mode_t)i;
            return MS_OK;
        }
    return MS_EINVAL;
}
