/* util.c - helpers shared by the subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/number.h"

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
    int64_t v;

    if (ms_number_int(s, LONG_MIN, LONG_MAX, &v) != MS_OK)
        return false;
    *out = (long)v;
    return true;
}

bool ms_cli_parse_double(const char *s, double *out)
{
    return ms_number_double(s, out) == MS_OK;
}

bool ms_cli_opt_long(const char *cmd, const char *opt, const char *s, long lo, long hi,
                     long *out)
{
    int64_t v;
    ms_status_t st = ms_number_int(s, lo, hi, &v);

    if (st == MS_OK) {
        *out = (long)v;
        return true;
    }
    fprintf(stderr, "migsched %s: --%s: '%s' is %s; expected an integer in [%ld, %ld]\n",
            cmd, opt, s != NULL ? s : "", st == MS_ERANGE ? "out of range" : "not an integer",
            lo, hi);
    return false;
}

bool ms_cli_opt_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                       double *out)
{
    double v;
    ms_status_t st = ms_number_double(s, &v);

    if (st == MS_OK && v >= lo && v <= hi) {
        *out = v;
        return true;
    }
    fprintf(stderr, "migsched %s: --%s: '%s' is %s; expected a number in [%g, %g]\n", cmd, opt,
            s != NULL ? s : "", st == MS_EPARSE ? "not a decimal number" : "out of range", lo,
            hi);
    return false;
}

void ms_cli_usage_error(const char *cmd, const char *stray, const char *msg)
{
    if (stray != NULL)
        fprintf(stderr, "migsched %s: unexpected argument '%s'\n", cmd, stray);
    else if (msg != NULL)
        fprintf(stderr, "migsched %s: %s\n", cmd, msg);
}

ms_status_t ms_cli_read_trace(const char *path, const ms_geom_t *g, ms_trace_t **t,
                              ms_diag_t *d)
{
    if (path != NULL && strcmp(path, "-") == 0)
        return ms_trace_read(stdin, "<stdin>", g, t, d);
    return ms_trace_read_file(path, g, t, d);
}

bool ms_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    if (a == NULL || b == NULL || strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return false;
    if (strcmp(a, b) == 0)
        return true;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
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
        (st = ms_geom_create(m, set, g)) != MS_OK) {
        ms_cli_fail(cmd, st, &d);
        return st == MS_ENOMEM ? 1 : 2;   /* a bad --profiles is bad usage */
    }
    return 0;
}
