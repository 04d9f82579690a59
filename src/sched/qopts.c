/* qopts.c - the queue discipline's names and options by name
 * (ms_sched_cfg_set), so the CLI, the zoo and a service configuration set
 * them the same way as a policy's options. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
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

typedef struct qopt {
    const char *name, *help;
    size_t off;                /* a double field; queue itself is special */
    double lo, hi;
    bool inf;                  /* "inf" accepted */
} qopt_t;

static const qopt_t QOPTS[] = {
    { "queue", "easy | backfill | fifo (default easy)", 0, 0, 0, false },
    { "backfill-bound", "backfill: nothing passes a head that waited this long (easy: "
                        "only what keeps its reservation), s (default 3600; inf = unbounded)",
      offsetof(ms_sched_cfg_t, backfill_bound_s), 0, 1e12, true },
    { "aging-rate", "priority points a job gains per hour waited; a job passes the head "
                    "only within 1 point of it (default 0 = off)",
      offsetof(ms_sched_cfg_t, aging_rate), 0, 1e6, false },
    { "default-estimate", "easy: run time assumed for a job without an estimate, s "
                          "(default 3600)",
      offsetof(ms_sched_cfg_t, default_estimate_s), 1e-6, 1e12, false },
};

const char *ms_sched_cfg_option(int i, const char **help)
{
    if (i < 0 || (size_t)i >= sizeof(QOPTS) / sizeof(QOPTS[0]))
        return NULL;
    if (help != NULL)
        *help = QOPTS[i].help;
    return QOPTS[i].name;
}

ms_status_t ms_sched_cfg_set(ms_sched_cfg_t *cfg, const char *name, const char *value,
                             ms_diag_t *diag)
{
    size_t i;

    if (cfg == NULL || name == NULL)
        return MS_EINVAL;
    for (i = 0; i < sizeof(QOPTS) / sizeof(QOPTS[0]); i++) {
        const qopt_t *o = &QOPTS[i];
        double v;
        char *end;

        if (strcmp(o->name, name) != 0)
            continue;
        if (value == NULL || value[0] == '\0') {
            ms_diag_set(diag, NULL, 0, name, "%s needs a value", name);
            return MS_EINVAL;
        }
        if (i == 0) {
            if (ms_queue_mode_parse(value, &cfg->queue) != MS_OK) {
                ms_diag_set(diag, NULL, 0, name, "queue must be backfill, fifo or easy, not '%s'",
                            value);
                return MS_ERANGE;
            }
            return MS_OK;
        }
        if (o->inf && strcmp(value, "inf") == 0) {
            *(double *)(void *)((char *)cfg + o->off) = INFINITY;
            return MS_OK;
        }
        errno = 0;
        v = strtod(value, &end);
        if (end == value || *end != '\0' || errno != 0 || !isfinite(v) || v < o->lo || v > o->hi) {
            ms_diag_set(diag, NULL, 0, name, "%s must be a number in [%g, %g]%s, not '%s'", name,
                        o->lo, o->hi, o->inf ? " or inf" : "", value);
            return MS_ERANGE;
        }
        *(double *)(void *)((char *)cfg + o->off) = v;
        return MS_OK;
    }
    return ms_policy_cfg_set(&cfg->pcfg, name, value, diag);
}
