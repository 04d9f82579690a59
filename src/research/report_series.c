/* report_series.c - series computed from a schedule for reports: FragCost
 * over time (replayed placement states), wait times and CDFs (see
 * report.h). */
#include "migsched/research/report.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "research/report_int.h"
#include "migsched/number.h"
#include "migsched/frag.h"

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

ms_status_t ms__report_dense_gpus(const ms_segment_t *segs, size_t n, int ngpus, int32_t **idx,
                                  size_t *nd)
{
    int32_t *ids = malloc((n > 0 ? n : 1) * sizeof(*ids)), *out;
    size_t i, k = 0, u = 0;

    out = malloc((n > 0 ? n : 1) * sizeof(*out));
    if (ids == NULL || out == NULL) {
        free(ids);
        free(out);
        return MS_ENOMEM;
    }
    for (i = 0; i < n; i++)
        if (segs[i].gpu >= 0 && segs[i].gpu < ngpus)
            ids[k++] = segs[i].gpu;
    if (k > 0) {
        qsort(ids, k, sizeof(*ids), cmp_i32);
        for (i = 0; i < k; i++)
            if (u == 0 || ids[u - 1] != ids[i])
                ids[u++] = ids[i];
    }
    for (i = 0; i < n; i++) {
        const int32_t *hit = NULL;

        if (segs[i].gpu >= 0 && segs[i].gpu < ngpus && u > 0)
            hit = bsearch(&segs[i].gpu, ids, u, sizeof(*ids), cmp_i32);
        out[i] = hit != NULL ? (int32_t)(hit - ids) : -1;
    }
    free(ids);
    *idx = out;
    *nd = u;
    return MS_OK;
}

/* --- FragCost over time ------------------------------------------------ */

typedef struct fev {
    double t;
    size_t seg;
    int end;       /* 1 = end (sorted first at equal t), 0 = begin */
} fev_t;

static int cmp_fev(const void *a, const void *b)
{
    const fev_t *x = a, *y = b;

    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    if (x->end != y->end)
        return y->end - x->end;
    return (x->seg > y->seg) - (x->seg < y->seg);
}

ms_status_t ms_report_frag_series(const ms_geom_t *g, int ngpus, const ms_segment_t *segs,
                                  size_t n, double **t, double **v, size_t *npts,
                                  size_t *skipped)
{
    ms_frag_table_t *tab;
    ms_state_t *st;
    unsigned char *placed;
    fev_t *ev;
    double *ot, *ov, sum = 0.0;
    size_t i, ne = 0, k = 0, skip = 0, nd = 0;
    int32_t *dg = NULL;
    ms_status_t rc;

    if (g == NULL || ngpus <= 0 || (n > 0 && segs == NULL) || t == NULL || v == NULL ||
        npts == NULL || n > SIZE_MAX / 4 / sizeof(fev_t))
        return MS_EINVAL;
    if ((rc = ms__report_dense_gpus(segs, n, ngpus, &dg, &nd)) != MS_OK)
        return rc;
    tab = malloc(sizeof(*tab));
    st = calloc(nd > 0 ? nd : 1, sizeof(*st));
    placed = calloc(n > 0 ? n : 1, 1);
    ev = malloc((2 * n + 1) * sizeof(*ev));
    ot = malloc((2 * n + 2) * sizeof(*ot));
    ov = malloc((2 * n + 2) * sizeof(*ov));
    if (tab == NULL || st == NULL || placed == NULL || ev == NULL || ot == NULL || ov == NULL) {
        free(tab);
        free(st);
        free(placed);
        free(ev);
        free(ot);
        free(ov);
        free(dg);
        return MS_ENOMEM;
    }
    ms_frag_table_fill(g, NULL, tab);
    for (i = 0; i < nd; i++)
        st[i] = ms_geom_empty_state();
    for (i = 0; i < n; i++) {
        if (segs[i].start < 0 || dg[i] < 0 ||
            segs[i].prof < 0 || segs[i].prof >= ms_geom_nprofiles(g) ||
            !(segs[i].end_s > segs[i].begin_s))
            continue;
        ev[ne].t = segs[i].begin_s;
        ev[ne].seg = i;
        ev[ne++].end = 0;
        ev[ne].t = segs[i].end_s;
        ev[ne].seg = i;
        ev[ne++].end = 1;
    }
    qsort(ev, ne, sizeof(*ev), cmp_fev);
    ot[k] = 0.0;
    ov[k++] = 0.0;
    for (i = 0; i < ne; i++) {
        const ms_segment_t *s = &segs[ev[i].seg];
        int32_t gi = dg[ev[i].seg];
        ms_state_t old = st[gi], nw;

        if (ev[i].end) {
            if (!placed[ev[i].seg])
                continue;
            nw = ms_state_remove(g, old, s->prof, s->start);
        } else {
            nw = ms_state_place(g, old, s->prof, s->start);
            if (nw == MS_STATE_NONE)
                skip++;
            else
                placed[ev[i].seg] = 1;
        }
        if (nw != MS_STATE_NONE) {
            sum += tab->cost[nw] - tab->cost[old];
            st[gi] = nw;
        }
        if (i + 1 < ne && ev[i + 1].t == ev[i].t)
            continue;   /* one point per distinct time */
        if (ot[k - 1] == ev[i].t)
            k--;
        ot[k] = ev[i].t;
        ov[k++] = sum > 1e-12 ? sum / ngpus : 0.0;
    }
    free(tab);
    free(st);
    free(placed);
    free(ev);
    free(dg);
    *t = ot;
    *v = ov;
    *npts = k;
    if (skipped != NULL)
        *skipped = skip;
    return MS_OK;
}

double ms_report_step_mean(const double *t, const double *v, size_t npts)
{
    double area = 0.0, span;
    size_t i;

    if (t == NULL || v == NULL || npts < 2)
        return NAN;
    span = t[npts - 1] - t[0];
    if (!(span > 0.0))
        return NAN;
    for (i = 0; i + 1 < npts; i++)
        area += v[i] * (t[i + 1] - t[i]);
    return area / span;
}

/* --- arrivals and waits ------------------------------------------------ */

static void chomp(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

/* The idx-th comma-separated field of line (not modified): its start and
 * length; false if the line has fewer fields. */
static bool field_at(const char *line, int idx, const char **p, size_t *len)
{
    const char *s = line;
    int i;

    for (i = 0; i < idx; i++) {
        s = strchr(s, ',');
        if (s == NULL)
            return false;
        s++;
    }
    *p = s;
    *len = strcspn(s, ",");
    return true;
}

static int cmp_arrival(const void *a, const void *b)
{
    const ms_report_arrival_t *x = a, *y = b;

    return (x->id > y->id) - (x->id < y->id);
}

ms_status_t ms_report_read_arrivals(FILE *f, const char *name, ms_report_arrival_t **arrival,
                                    size_t *n, ms_diag_t *diag)
{
    char *line = NULL, buf[64];
    size_t cap = 0, acap = 0, na = 0, i;
    long lineno = 0;
    int cid = -1, carr = -1;
    bool header = false;
    ms_report_arrival_t *a = NULL;
    ms_status_t st = MS_OK;

    if (f == NULL || arrival == NULL || n == NULL)
        return MS_EINVAL;
    *arrival = NULL;
    *n = 0;
    /* one line per iteration, to EOF */
    ssize_t got;

    while ((got = getline(&line, &cap, f)) != -1) {
        const char *p;
        size_t len;
        int64_t id;
        double at;

        lineno++;
        if (memchr(line, '\0', (size_t)got) != NULL) {
            ms_diag_set(diag, name, lineno, "", "NUL byte in the line (not a text file?)");
            st = MS_EPARSE;
            break;
        }
        if (lineno == 1 && got >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0)
            memmove(line, line + 3, (size_t)got - 2);   /* a UTF-8 byte-order mark */
        chomp(line);
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if (!header) {
            int k;
            header = true;
            for (k = 0; field_at(line, k, &p, &len); k++) {
                if (len == 6 && strncasecmp(p, "job_id", 6) == 0)
                    cid = k;
                else if (len == 9 && strncasecmp(p, "arrival_s", 9) == 0)
                    carr = k;
            }
            if (cid < 0 || carr < 0) {
                ms_diag_set(diag, name, lineno, cid < 0 ? "job_id" : "arrival_s",
                            "missing column");
                st = MS_EPARSE;
                break;
            }
            continue;
        }
        if (!field_at(line, cid, &p, &len) || len == 0 || len >= sizeof(buf)) {
            ms_diag_set(diag, name, lineno, "job_id", "missing or too long");
            st = MS_EPARSE;
            break;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (ms_number_int(buf, 0, INT32_MAX - 1, &id) != MS_OK) {
            ms_diag_set(diag, name, lineno, "job_id", "not an integer in [0, 2^31 - 2]: '%s'",
                        buf);
            st = MS_EPARSE;
            break;
        }
        if (!field_at(line, carr, &p, &len) || len == 0 || len >= sizeof(buf)) {
            ms_diag_set(diag, name, lineno, "arrival_s", "missing or too long");
            st = MS_EPARSE;
            break;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (ms_number_double(buf, &at) != MS_OK) {
            ms_diag_set(diag, name, lineno, "arrival_s", "bad time '%s'", buf);
            st = MS_EPARSE;
            break;
        }
        if (na == acap) {
            size_t nc = acap ? acap * 2 : 256;
            ms_report_arrival_t *nb = realloc(a, nc * sizeof(*nb));
            if (nb == NULL) {
                st = MS_ENOMEM;
                break;
            }
            a = nb;
            acap = nc;
        }
        a[na].id = (int32_t)id;
        a[na++].arrival_s = at;
    }
    if (st == MS_OK && ferror(f)) {
        ms_diag_set(diag, name, lineno, "", "read error");
        st = MS_EIO;
    }
    if (st == MS_OK && !header) {
        ms_diag_set(diag, name, 0, "", "empty file (no header)");
        st = MS_EPARSE;
    }
    free(line);
    if (st == MS_OK && na > 1) {
        qsort(a, na, sizeof(*a), cmp_arrival);
        for (i = 1; i < na; i++)
            if (a[i].id == a[i - 1].id) {
                ms_diag_set(diag, name, 0, "job_id", "job_id %ld appears twice",
                            (long)a[i].id);
                st = MS_EPARSE;
                break;
            }
    }
    if (st != MS_OK) {
        free(a);
        return st;
    }
    *arrival = a;
    *n = na;
    return MS_OK;
}

ms_status_t ms_report_wait_times(const ms_report_arrival_t *arrival, size_t njobs,
                                 const ms_segment_t *segs, size_t n, double **w, size_t *nw)
{
    double *first, *out;
    size_t i, k = 0;

    if ((njobs > 0 && arrival == NULL) || (n > 0 && segs == NULL) || w == NULL || nw == NULL)
        return MS_EINVAL;
    *w = NULL;
    *nw = 0;
    if (njobs == 0)
        return MS_OK;
    first = malloc(njobs * sizeof(*first));
    if (first == NULL)
        return MS_ENOMEM;
    for (i = 0; i < njobs; i++)
        first[i] = INFINITY;
    for (i = 0; i < n; i++) {
        ms_report_arrival_t key;
        const ms_report_arrival_t *hit;

        key.id = segs[i].job;
        hit = bsearch(&key, arrival, njobs, sizeof(*arrival), cmp_arrival);
        if (hit != NULL && segs[i].begin_s < first[hit - arrival])
            first[hit - arrival] = segs[i].begin_s;
    }
    for (i = 0; i < njobs; i++)
        if (isfinite(first[i]) && isfinite(arrival[i].arrival_s))
            k++;
    if (k == 0) {
        free(first);
        return MS_OK;
    }
    out = malloc(k * sizeof(*out));
    if (out == NULL) {
        free(first);
        return MS_ENOMEM;
    }
    k = 0;
    for (i = 0; i < njobs; i++)
        if (isfinite(first[i]) && isfinite(arrival[i].arrival_s))
            out[k++] = first[i] - arrival[i].arrival_s;
    free(first);
    *w = out;
    *nw = k;
    return MS_OK;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

ms_status_t ms_report_cdf(const double *x, size_t n, double **xs, double **p)
{
    double *a, *b;
    size_t i;

    if ((n > 0 && x == NULL) || xs == NULL || p == NULL)
        return MS_EINVAL;
    *xs = NULL;
    *p = NULL;
    if (n == 0)
        return MS_OK;
    a = malloc(n * sizeof(*a));
    b = malloc(n * sizeof(*b));
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return MS_ENOMEM;
    }
    memcpy(a, x, n * sizeof(*a));
    qsort(a, n, sizeof(*a), cmp_dbl);
    for (i = 0; i < n; i++)
        b[i] = (double)(i + 1) / (double)n;
    *xs = a;
    *p = b;
    return MS_OK;
}
