/* csv.c - the shared CSV line reader and strict field parsers (see csv.h). */
#include "io/csv.h"

#include "migsched/number.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ms_csv_open(ms_csv_t *c, FILE *f, const char *name)
{
    memset(c, 0, sizeof(*c));
    c->f = f;
    c->name = name != NULL ? name : "";
}

void ms_csv_close(ms_csv_t *c)
{
    free(c->buf);
    free(c->field);
    c->buf = NULL;
    c->cap = 0;
    c->field = NULL;
    c->fcap = 0;
}

int ms_csv_next(ms_csv_t *c, ms_diag_t *d)
{
    /* Each pass reads one line (getline) and returns unless it is empty:
     * bounded by the stream's lines. */
    for (;;) {
        ssize_t len;
        char *p;

        errno = 0;
        len = getline(&c->buf, &c->cap, c->f);
        if (len < 0) {
            if (ferror(c->f) || (!c->lax && errno == ENOMEM)) {
                ms_diag_set(d, c->name, c->line + 1, "", "read error");
                return -(int)MS_EIO;
            }
            if (!feof(c->f) && errno == ENOMEM)
                return -(int)MS_ENOMEM;
            return 0;
        }
        c->line++;
        if (c->line == 1 && len >= 3 && memcmp(c->buf, "\xEF\xBB\xBF", 3) == 0) {
            memmove(c->buf, c->buf + 3, (size_t)len - 2);   /* a UTF-8 byte-order mark */
            len -= 3;
        }
        if (memchr(c->buf, '\0', (size_t)len) != NULL) {
            ms_diag_set(d, c->name, c->line, "", "NUL byte in the line (not a text file?)");
            return -(int)MS_EPARSE;
        }
        while (len > 0 && (c->buf[len - 1] == '\n' || c->buf[len - 1] == '\r'))
            c->buf[--len] = '\0';
        if (len == 0)
            continue;
        if (!c->lax && memchr(c->buf, '"', (size_t)len) != NULL) {
            ms_diag_set(d, c->name, c->line, "", "quoted CSV fields are not supported");
            return -(int)MS_EPARSE;
        }
        c->nf = 0;
        p = c->buf;
        for (;;) {
            char *comma = strchr(p, ',');

            if (!c->lax && c->nf >= MS_CSV_MAX_FIELDS) {
                ms_diag_set(d, c->name, c->line, "", "more than %d fields", MS_CSV_MAX_FIELDS);
                return -(int)MS_EPARSE;
            }
            if (c->nf == c->fcap) {
                int ncap = c->fcap ? c->fcap * 2 : 16;
                char **nf = realloc(c->field, (size_t)ncap * sizeof(*nf));

                if (nf == NULL)
                    return -(int)MS_ENOMEM;
                c->field = nf;
                c->fcap = ncap;
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

ms_status_t ms_csv_header(ms_csv_t *c, const char *empty_msg, ms_diag_t *d)
{
    int r = ms_csv_next(c, d);

    if (r == 0) {
        ms_diag_set(d, c->name, 1, "", "%s", empty_msg);
        return MS_EPARSE;
    }
    return r < 0 ? (ms_status_t)-r : MS_OK;
}

/* Lax header match: case-insensitive, surrounding spaces ignored. */
static bool col_is(const char *s, const char *name)
{
    size_t n;

    while (*s == ' ')
        s++;
    n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        n--;
    return n == strlen(name) && strncasecmp(s, name, n) == 0;
}

int ms_csv_col(const ms_csv_t *c, const char *name)
{
    for (int i = 0; i < c->nf; i++)
        if (c->lax ? col_is(c->field[i], name) : strcmp(c->field[i], name) == 0)
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
    long long v;
    ms_status_t st = ms_csv_str(c, col, field, &s, d);

    if (st != MS_OK)
        return st;
    if (*s == '\0') {
        ms_diag_set(d, c->name, c->line, field, "empty value, expected an integer");
        return MS_EPARSE;
    }
    {
        int64_t w;
        ms_status_t ns = ms_number_int(s, INT64_MIN, INT64_MAX, &w);

        if (ns == MS_EPARSE) {
            ms_diag_set(d, c->name, c->line, field, "'%s' is not an integer", s);
            return MS_EPARSE;
        }
        if (ns != MS_OK) {
            ms_diag_set(d, c->name, c->line, field, "'%s' is out of range [%lld, %lld]", s,
                        (long long)lo, (long long)hi);
            return MS_ERANGE;
        }
        v = (long long)w;
    }
    if (v < lo || v > hi) {
        ms_diag_set(d, c->name, c->line, field, "%lld is out of range [%lld, %lld]", v,
                    (long long)lo, (long long)hi);
        return MS_ERANGE;
    }
    *out = (int64_t)v;
    return MS_OK;
}

void *ms_csv_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
    size_t ncap;
    void *nv;

    if (n < *cap)
        return v;
    ncap = *cap ? *cap * 2 : first;
    nv = realloc(v, ncap * size);
    if (nv != NULL)
        *cap = ncap;
    return nv;
}

ms_status_t ms_csv_slurp(FILE *f, char **out, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);

    if (b == NULL)
        return MS_ENOMEM;
    for (;;) {
        size_t r;
        if (cap - n < 2) {
            char *nb;
            if (cap > ((size_t)1 << 30)) {
                free(b);
                return MS_ERANGE;
            }
            nb = realloc(b, cap * 2);
            if (nb == NULL) {
                free(b);
                return MS_ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        free(b);
        return MS_EIO;
    }
    b[n] = '\0';
    *out = b;
    *len = n;
    return MS_OK;
}

ms_status_t ms_csv_read_path(const char *path, void *out, size_t out_size, ms_csv_reader_fn rd,
                             bool say_errno, ms_diag_t *d)
{
    FILE *f;
    ms_status_t st;

    if (path == NULL || out == NULL)
        return MS_EINVAL;
    memset(out, 0, out_size);
    f = fopen(path, "r");
    if (f == NULL) {
        if (say_errno)
            ms_diag_set(d, path, 0, "", "cannot open: %s", strerror(errno));
        else
            ms_diag_set(d, path, 0, "", "cannot open");
        return MS_EIO;
    }
    st = rd(f, path, out, d);
    fclose(f);
    return st;
}

const char *ms_csv_json_number(const char *p, const char *end, double *out)
{
    const char *q = p;
    char buf[64];
    size_t n;

    /* RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
    if (q < end && *q == '-')
        q++;
    if (q >= end || !(*q >= '0' && *q <= '9'))
        return NULL;
    if (*q == '0')
        q++;
    else
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    if (q < end && *q == '.') {
        q++;
        if (q >= end || !(*q >= '0' && *q <= '9'))
            return NULL;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        if (q >= end || !(*q >= '0' && *q <= '9'))
            return NULL;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    }
    n = (size_t)(q - p);
    if (n >= sizeof(buf))
        return NULL;   /* 63 characters hold any double a writer prints */
    memcpy(buf, p, n);
    buf[n] = '\0';
    return ms_number_double(buf, out) == MS_OK ? q : NULL;
}
