/* cfg.c - policy options set by name, so the CLI, a configuration file and
 * the daemon parse them once, with one set of names and ranges.
 *
 * Names are the CLI's long options without the dashes; booleans take
 * true/false/on/off/yes/no/1/0, and "no-X" sets X to false (the CLI's
 * --no-balance). String values (static-layout) are borrowed: the caller
 * keeps them alive as long as the configuration.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/policy.h"

typedef enum { T_DOUBLE, T_INT, T_BOOL, T_U64, T_STR } opt_type_t;

typedef struct opt {
    const char *name;
    opt_type_t type;
    double lo, hi;
    size_t off;
    const char *help;
} opt_t;

#define OFF(f) offsetof(ms_policy_cfg_t, f)

static const opt_t OPTS[] = {
    { "lb-threshold", T_DOUBLE, 0, 1, OFF(lb_threshold), "fa: Lazy if busy/compute < T" },
    { "balance", T_BOOL, 0, 1, OFF(balance), "fa: conditional load balancing" },
    { "dynamic", T_BOOL, 0, 1, OFF(dynamic), "fa: dynamic partitioning" },
    { "migration", T_BOOL, 0, 1, OFF(migration), "fa: intra/inter-GPU migration" },
    { "max-moves", T_INT, 0, 1000000, OFF(max_moves), "fa: migrations per trigger" },
    { "static-layout", T_STR, 0, 0, OFF(static_layout), "static: per-GPU layouts" },
    { "demand-window", T_INT, 1, 1000000, OFF(demand_window), "fgd: arrivals in the demand estimate" },
    { "hysteresis", T_DOUBLE, 0, 1e9, OFF(hysteresis_s), "node-profile: seconds a layout is kept" },
    { "replicas", T_INT, 1, MS_MAX_INST, OFF(replicas), "timeslice: jobs per GPU" },
    { "seed", T_U64, 0, 0, OFF(seed), "policy seed" },
    { "migrate-cost", T_DOUBLE, 0, 1e9, OFF(migrate_cost_s), "fa+: what one move costs, seconds" },
    { "interference-beta", T_DOUBLE, 0, 10, OFF(interference_beta),
      "fa+: slowdown per other running instance" },
    { "room-queue-max", T_INT, 0, 1000000000, OFF(room_queue_max),
      "fa+: make room only while at most N jobs wait" },
};

static bool parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = { "true", "on", "yes", "1" };
    static const char *const no[] = { "false", "off", "no", "0" };
    size_t i;

    for (i = 0; i < 4; i++) {
        if (strcmp(v, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(v, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

ms_status_t ms_policy_cfg_set(ms_policy_cfg_t *cfg, const char *name, const char *value,
                              ms_diag_t *diag)
{
    size_t i;
    bool negate = false;
    char *end;

    if (cfg == NULL || name == NULL)
        return MS_EINVAL;
    if (strncmp(name, "no-", 3) == 0) {
        negate = true;
        name += 3;
    }
    for (i = 0; i < sizeof(OPTS) / sizeof(OPTS[0]); i++) {
        const opt_t *o = &OPTS[i];
        char *field = (char *)cfg + o->off;

        if (strcmp(o->name, name) != 0)
            continue;
        if (negate && o->type != T_BOOL)
            break;
        if (negate) {
            if (value != NULL && value[0] != '\0') {
                ms_diag_set(diag, NULL, 0, name, "no-%s takes no value", name);
                return MS_EINVAL;
            }
            *(bool *)(void *)field = false;
            return MS_OK;
        }
        if (value == NULL) {
            if (o->type == T_BOOL) {
                *(bool *)(void *)field = true;
                return MS_OK;
            }
            ms_diag_set(diag, NULL, 0, name, "%s needs a value", name);
            return MS_EINVAL;
        }
        switch (o->type) {
        case T_DOUBLE: {
            double v;

            errno = 0;
            v = strtod(value, &end);
            if (end == value || *end != '\0' || errno != 0 || !isfinite(v) || v < o->lo || v > o->hi) {
                ms_diag_set(diag, NULL, 0, name, "%s must be a number in [%g, %g], not '%s'", name,
                            o->lo, o->hi, value);
                return MS_ERANGE;
            }
            *(double *)(void *)field = v;
            return MS_OK;
        }
        case T_INT: {
            long v;

            errno = 0;
            v = strtol(value, &end, 10);
            if (end == value || *end != '\0' || errno != 0 || v < (long)o->lo || v > (long)o->hi) {
                ms_diag_set(diag, NULL, 0, name, "%s must be an integer in [%ld, %ld], not '%s'",
                            name, (long)o->lo, (long)o->hi, value);
                return MS_ERANGE;
            }
            *(int *)(void *)field = (int)v;
            return MS_OK;
        }
        case T_U64: {
            unsigned long long v;

            errno = 0;
            v = strtoull(value, &end, 10);
            if (end == value || *end != '\0' || errno != 0 || value[0] == '-') {
                ms_diag_set(diag, NULL, 0, name, "%s must be an unsigned integer, not '%s'", name,
                            value);
                return MS_ERANGE;
            }
            *(uint64_t *)(void *)field = (uint64_t)v;
            return MS_OK;
        }
        case T_BOOL:
            if (!parse_bool(value, (bool *)(void *)field)) {
                ms_diag_set(diag, NULL, 0, name, "%s must be true or false, not '%s'", name, value);
                return MS_EINVAL;
            }
            return MS_OK;
        case T_STR:
            *(const char **)(void *)field = value;
            return MS_OK;
        }
    }
    ms_diag_set(diag, NULL, 0, name, "no policy option '%s%s'", negate ? "no-" : "", name);
    return MS_ENOENT;
}

const char *ms_policy_cfg_option(int i, const char **help)
{
    if (i < 0 || (size_t)i >= sizeof(OPTS) / sizeof(OPTS[0]))
        return NULL;
    if (help != NULL)
        *help = OPTS[i].help;
    return OPTS[i].name;
}
