/* trace_read.c - the trace CSV reader, and traces built in memory.
 *
 * The reader streams: getline() holds one line at a time, whatever its
 * length. The header is required; its columns may come in any order and
 * unknown columns are ignored. Every error names the file, the line and the
 * field. Rows are sorted by (arrival, input order) once all are read.
 */
#include "migsched/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { COL_ID, COL_ARR, COL_PROF, COL_DUR, COL_GPUS, NCOLS };

static const char *const COL_NAME[NCOLS] = {
    "job_id", "arrival_s", "profile", "duration_s", "gpus"
};

/* A trace under construction. */
typedef struct builder {
    ms_job_t *jobs;
    size_t n, cap;
    char *names;
    size_t nlen, ncap;
    size_t *name_off;
} builder_t;

static void builder_free(builder_t *b)
{
    free(b->jobs);
    free(b->names);
    free(b->name_off);
    memset(b, 0, sizeof(*b));
}

static ms_status_t builder_push(builder_t *b, const ms_job_t *j, const char *name,
                                size_t namelen)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        ms_job_t *nj = realloc(b->jobs, cap * sizeof(*nj));
        size_t *no;

        if (nj == NULL)
            return MS_ENOMEM;
        b->jobs = nj;
        no = realloc(b->name_off, cap * sizeof(*no));
        if (no == NULL)
            return MS_ENOMEM;
        b->name_off = no;
        b->cap = cap;
    }
    if (b->nlen + namelen + 1 > b->ncap) {
        size_t cap = b->ncap ? b->ncap : 4096;
        char *nn;

        while (cap < b->nlen + namelen + 1)
            cap *= 2;
        nn = realloc(b->names, cap);
        if (nn == NULL)
            return MS_ENOMEM;
        b->names = nn;
        b->ncap = cap;
    }
    b->jobs[b->n] = *j;
    b->name_off[b->n] = b->nlen;
    memcpy(b->names + b->nlen, name, namelen);
    b->names[b->nlen + namelen] = '\0';
    b->nlen += namelen + 1;
    b->n++;
    return MS_OK;
}

static int cmp_job(const void *pa, const void *pb)
{
    const ms_job_t *a = pa, *b = pb;

    if (a->arrival < b->arrival)
        return -1;
    if (a->arrival > b->arrival)
        return 1;
    return (a->idx > b->idx) - (a->idx < b->idx);   /* input order */
}

/* Sort by (arrival, input order) and hand the arrays to a new trace. The
 * jobs' idx must hold their input order on entry. */
static ms_status_t builder_finish(builder_t *b, const ms_geom_t *g, ms_trace_t **out)
{
    ms_trace_t *t = calloc(1, sizeof(*t));
    size_t *off = NULL, i;

    if (t == NULL)
        return MS_ENOMEM;
    if (b->n > 0) {
        off = malloc(b->n * sizeof(*off));
        if (off == NULL) {
            free(t);
            return MS_ENOMEM;
        }
        qsort(b->jobs, b->n, sizeof(*b->jobs), cmp_job);
        for (i = 0; i < b->n; i++) {
            off[i] = b->name_off[b->jobs[i].idx];
            b->jobs[i].idx = (int32_t)i;
        }
    }
    free(b->name_off);
    if (b->names == NULL) {
        b->names = calloc(1, 1);
        if (b->names == NULL) {
            free(off);
            free(t);
            return MS_ENOMEM;
        }
    }
    t->jobs = b->jobs;
    t->n = b->n;
    t->names = b->names;
    t->name_off = off;
    t->geom = g;
    memset(b, 0, sizeof(*b));
    *out = t;
    return MS_OK;
}

void ms_trace_free(ms_trace_t *t)
{
    if (t == NULL)
        return;
    free(t->jobs);
    free(t->names);
    free(t->name_off);
    free(t->req);
    free(t);
}

/* Trim spaces, tabs and a trailing CR in place. */
static char *trim(char *s, char **end)
{
    char *e = *end;

    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        e--;
    *e = '\0';
    *end = e;
    return s;
}

/* Split line into fields in place; returns the count (fields beyond max are
 * counted but not stored). */
static size_t split(char *line, size_t len, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line, *lim = line + len;

    for (;;) {
        char *c = memchr(p, ',', (size_t)(lim - p));
        char *e = c != NULL ? c : lim;
        char *f = trim(p, &e);

        if (n < max)
            fields[n] = f;
        n++;
        if (c == NULL)
            break;
        p = c + 1;
    }
    return n;
}

static bool blank(const char *s, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    return true;
}

static bool parse_num(const char *s, double *out)
{
    char *end;
    double v;

    if (*s == '\0')
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Check a job's fields; 0 on success, else the failing column. */
static int check_job(const ms_geom_t *g, const ms_job_t *j, const char **why)
{
    if (!(j->arrival >= 0.0) || !isfinite(j->arrival)) {
        *why = "arrival must be a finite number >= 0";
        return COL_ARR;
    }
    if (!(j->duration >= 0.0) || !isfinite(j->duration)) {
        *why = "duration must be a finite number >= 0";
        return COL_DUR;
    }
    if (j->prof < 0 || j->prof >= ms_geom_nprofiles(g)) {
        *why = "profile index out of range";
        return COL_PROF;
    }
    if (j->gang < 1) {
        *why = "gpus must be >= 1";
        return COL_GPUS;
    }
    return -1;
}

ms_status_t ms_trace_read(FILE *f, const char *name, const ms_geom_t *g,
                          ms_trace_t **out, ms_diag_t *diag)
{
    char *line = NULL, **fields = NULL;
    size_t lcap = 0, maxf = 0;
    ssize_t len;
    long lineno = 0;
    int col[NCOLS];
    bool have_header = false;
    builder_t b;
    ms_status_t st = MS_OK;
    const ms_model_t *m = ms_geom_model(g);
    int c;

    if (f == NULL || g == NULL || out == NULL)
        return MS_EINVAL;
    *out = NULL;
    if (name == NULL)
        name = "<trace>";
    memset(&b, 0, sizeof(b));
    for (c = 0; c < NCOLS; c++)
        col[c] = -1;

    while ((len = getline(&line, &lcap, f)) != -1) {
        size_t nf, i;

        lineno++;
        if (blank(line, (size_t)len) || line[0] == '#')
            continue;
        if (!have_header) {
            /* Size the field array from the header's comma count. */
            maxf = 1;
            for (i = 0; i < (size_t)len; i++)
                maxf += line[i] == ',';
            fields = malloc(maxf * sizeof(*fields));
            if (fields == NULL) {
                st = MS_ENOMEM;
                goto done;
            }
            nf = split(line, (size_t)len, fields, maxf);
            for (i = 0; i < nf; i++) {
                for (c = 0; c < NCOLS; c++) {
                    if (strcasecmp(fields[i], COL_NAME[c]) != 0)
                        continue;
                    if (col[c] >= 0) {
                        ms_diag_set(diag, name, lineno, COL_NAME[c],
                                    "duplicate column '%s' in the header", COL_NAME[c]);
                        st = MS_EPARSE;
                        goto done;
                    }
                    col[c] = (int)i;
                }
            }
            for (c = 0; c < COL_GPUS; c++) {
                if (col[c] < 0) {
                    ms_diag_set(diag, name, lineno, COL_NAME[c],
                                "header lacks the required column '%s' "
                                "(need job_id,arrival_s,profile,duration_s)", COL_NAME[c]);
                    st = MS_EPARSE;
                    goto done;
                }
            }
            have_header = true;
            continue;
        }

        nf = split(line, (size_t)len, fields, maxf);
        {
            ms_job_t j;
            const char *why = NULL;
            double v;
            int k, bad;

            for (c = 0; c < COL_GPUS; c++) {   /* gpus may be left off */
                if ((size_t)col[c] >= nf) {
                    ms_diag_set(diag, name, lineno, COL_NAME[c],
                                "row has %zu fields, the header %zu: '%s' is missing",
                                nf, maxf, COL_NAME[c]);
                    st = MS_EPARSE;
                    goto done;
                }
            }
            memset(&j, 0, sizeof(j));
            if (fields[col[COL_ID]][0] == '\0') {
                ms_diag_set(diag, name, lineno, "job_id", "empty job_id");
                st = MS_EPARSE;
                goto done;
            }
            if (!parse_num(fields[col[COL_ARR]], &j.arrival)) {
                ms_diag_set(diag, name, lineno, "arrival_s", "'%s' is not a number",
                            fields[col[COL_ARR]]);
                st = MS_EPARSE;
                goto done;
            }
            if (!parse_num(fields[col[COL_DUR]], &j.duration)) {
                ms_diag_set(diag, name, lineno, "duration_s", "'%s' is not a number",
                            fields[col[COL_DUR]]);
                st = MS_EPARSE;
                goto done;
            }
            k = ms_geom_profile_find(g, fields[col[COL_PROF]]);
            if (k < 0) {
                if (ms_model_profile_find(m, fields[col[COL_PROF]]) >= 0)
                    ms_diag_set(diag, name, lineno, "profile",
                                "profile '%s' of %s is not active (enable it with --profiles)",
                                fields[col[COL_PROF]], m->name);
                else
                    ms_diag_set(diag, name, lineno, "profile",
                                "unknown profile '%s' for %s", fields[col[COL_PROF]], m->name);
                st = MS_EPARSE;
                goto done;
            }
            j.prof = (int8_t)k;
            j.gang = 1;
            if (col[COL_GPUS] >= 0 && (size_t)col[COL_GPUS] < nf &&
                fields[col[COL_GPUS]][0] != '\0') {
                if (!parse_num(fields[col[COL_GPUS]], &v) || v != floor(v) || v < 1 ||
                    v > 32767) {
                    ms_diag_set(diag, name, lineno, "gpus",
                                "'%s' is not a whole number of GPUs in 1..32767",
                                fields[col[COL_GPUS]]);
                    st = MS_EPARSE;
                    goto done;
                }
                j.gang = (int16_t)v;
            }
            bad = check_job(g, &j, &why);
            if (bad >= 0) {
                ms_diag_set(diag, name, lineno, COL_NAME[bad], "%s (got '%s')", why,
                            col[bad] >= 0 && (size_t)col[bad] < nf ? fields[col[bad]] : "");
                st = MS_EPARSE;
                goto done;
            }
            if (b.n >= (size_t)INT32_MAX) {
                ms_diag_set(diag, name, lineno, NULL, "too many jobs");
                st = MS_ERANGE;
                goto done;
            }
            j.idx = (int32_t)b.n;
            st = builder_push(&b, &j, fields[col[COL_ID]], strlen(fields[col[COL_ID]]));
            if (st != MS_OK)
                goto done;
        }
    }
    if (ferror(f)) {
        ms_diag_set(diag, name, lineno, NULL, "read error");
        st = MS_EIO;
        goto done;
    }
    if (!have_header) {
        ms_diag_set(diag, name, lineno > 0 ? lineno : 1, NULL,
                    "empty trace: the header job_id,arrival_s,profile,duration_s is required");
        st = MS_EPARSE;
        goto done;
    }
    st = builder_finish(&b, g, out);
done:
    free(line);
    free(fields);
    builder_free(&b);
    return st;
}

ms_status_t ms_trace_read_file(const char *path, const ms_geom_t *g, ms_trace_t **out,
                               ms_diag_t *diag)
{
    FILE *f;
    ms_status_t st;

    if (path == NULL)
        return MS_EINVAL;
    f = fopen(path, "r");
    if (f == NULL) {
        ms_diag_set(diag, path, 0, NULL, "cannot open: %s", strerror(errno));
        return MS_EIO;
    }
    st = ms_trace_read(f, path, g, out, diag);
    fclose(f);
    return st;
}

ms_status_t ms_trace_from_jobs(const ms_geom_t *g, const ms_job_t *jobs, size_t n,
                               const char *const *names, ms_trace_t **out)
{
    builder_t b;
    size_t i;
    ms_status_t st = MS_OK;

    if (g == NULL || out == NULL || (jobs == NULL && n > 0) || n > (size_t)INT32_MAX)
        return MS_EINVAL;
    *out = NULL;
    memset(&b, 0, sizeof(b));
    for (i = 0; i < n && st == MS_OK; i++) {
        ms_job_t j = jobs[i];
        const char *why;
        char buf[32];
        const char *nm = buf;

        if (check_job(g, &j, &why) >= 0) {
            st = MS_EINVAL;
            break;
        }
        if (names != NULL && names[i] != NULL && names[i][0] != '\0')
            nm = names[i];
        else
            snprintf(buf, sizeof(buf), "%zu", i);
        j.idx = (int32_t)i;
        st = builder_push(&b, &j, nm, strlen(nm));
    }
    if (st == MS_OK)
        st = builder_finish(&b, g, out);
    builder_free(&b);
    return st;
}
