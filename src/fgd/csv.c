/* csv.c - line reader and strict field parsers for the FGD inputs. */
#include "fgd/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ms_csv_open(ms_csv_t *c, FILE *f, const char *name)
{
    memset(c, 0, sizeof(*c));
    c->f = f;
    c->name = name != NULL ? name : "";
}

void ms_csv_close(ms_csv_t *c)
{
    free(c->buf);
    c->buf = NULL;
    c->cap = 0;
}

int ms_csv_next(ms_csv_t *c, ms_diag_t *d)
{
    for (;;) {
        ssize_t len;
        char *p;

        errno = 0;
        len = getline(&c->buf, &c->cap, c->f);
        if (len < 0) {
            if (ferror(c->f) || errno == ENOMEM) {
                ms_diag_set(d, c->name, c->line + 1, "", "read error");
                return -(int)MS_EIO;
            }
            return 0;
        }
        c->line++;
        while (len > 0 && (c->buf[len - 1] == '\n' || c->buf[len - 1] == '\r'))
            c->buf[--len] = '\0';
        if (len == 0)
            continue;
        if (memchr(c->buf, '"', (size_t)len) != NULL) {
            ms_diag_set(d, c->name, c->line, "", "quoted CSV fields are not supported");
            return -(int)MS_EPARSE;
        }
        c->nf = 0;
        p = c->buf;
        for (;;) {
            char *comma = strchr(p, ',');

            if (c->nf >= MS_CSV_MAX_FIELDS) {
                ms_diag_set(d, c->name, c->line, "", "more than %d fields", MS_CSV_MAX_FIELDS);
                return -(int)MS_EPARSE;
            }
            c->field[c->nf++] = p;
            if (comma == NULL)
                break;
            *comma = '\0';
            p = comma + 1;
        }
        return 1;
    }
}

int ms_csv_col(const ms_csv_t *c, const char *name)
{
    for (int i = 0; i < c->nf; i++)
        if (strcmp(c->field[i], name) == 0)
            return i;
    return -1;
}

ms_status_t ms_csv_str(const ms_csv_t *c, int col, const char *field, const char **out,
                       ms_diag_t *d)
{
    if (col < 0 || col >= c->nf) {
        ms_diag_set(d, c->name, c->line, field, "missing column (row has %d fields)", c->nf);
        return MS_EPARSE;
    }
    *out = c->field[col];
    return MS_OK;
}

ms_status_t ms_csv_int(const ms_csv_t *c, int col, const char *field, int64_t lo, int64_t hi,
                       int64_t *out, ms_diag_t *d)
{
    const char *s;
    char *end;
    long long v;
    ms_status_t st = ms_csv_str(c, col, field, &s, d);

    if (st != MS_OK)
        return st;
    if (*s == '\0') {
        ms_diag_set(d, c->name, c->line, field, "empty value, expected an integer");
        return MS_EPARSE;
    }
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        ms_diag_set(d, c->name, c->line, field, "'%s' is not an integer", s);
        return MS_EPARSE;
    }
    if (v < lo || v > hi) {
        ms_diag_set(d, c->name, c->line, field, "%lld is out of range [%lld, %lld]", v,
                    (long long)lo, (long long)hi);
        return MS_ERANGE;
    }
    *out = (int64_t)v;
    return MS_OK;
}
