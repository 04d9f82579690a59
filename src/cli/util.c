/* util.c - helpers shared by the subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>

int ms_cli_fail(const char *cmd, ms_status_t st, const ms_diag_t *d)
{
    if (d != NULL && d->msg[0] != '\0') {
        /* migsched cmd: file:line: field 'x': message */
        fprintf(stderr, "migsched %s:", cmd);
        if (d->file[0] != '\0') {
            fprintf(stderr, " %s:", d->file);
            if (d->line > 0)
                fprintf(stderr, "%ld:", d->line);
        }
        if (d->field[0] != '\0')
            fprintf(stderr, " field '%s':", d->field);
        fprintf(stderr, " %s\n", d->msg);
    } else {
        fprintf(stderr, "migsched %s: %s\n", cmd, ms_strerror(st));
    }
    return 1;
}

bool ms_cli_parse_long(const char *s, long *out)
{
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return false;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

bool ms_cli_parse_double(const char *s, double *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0')
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || v != v)
        return false;
    *out = v;
    return true;
}

int ms_cli_geom(const char *cmd, const char *model, const char *profiles, ms_geom_t **g)
{
    const ms_model_t *m = ms_model_find(model);
    uint32_t set;
    ms_diag_t d;
    ms_status_t st;

    *g = NULL;
    if (m == NULL) {
        fprintf(stderr, "migsched %s: unknown model '%s' (see `migsched models`)\n", cmd, model);
        return 2;
    }
    ms_diag_clear(&d);
    if ((st = ms_geom_parse_profile_set(m, profiles, &set, &d)) != MS_OK ||
        (st = ms_geom_create(m, set, g)) != MS_OK)
        return ms_cli_fail(cmd, st, &d);
    return 0;
}
