/* report.c - read metrics JSON and schedule CSV back; utilisation from a
 * schedule (see report.h). */
#include "migsched/research/report.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "io/csv.h"
#include "research/report_int.h"
#include "migsched/number.h"

/* --- metrics JSON ------------------------------------------------------ */

typedef struct key_d { const char *key; size_t off; } key_d_t;

#define KD(field) { #field, offsetof(ms_metrics_t, field) }
static const key_d_t DKEYS[] = {
    KD(makespan_s), KD(mean_wait_s), KD(p50_wait_s), KD(p95_wait_s), KD(p99_wait_s),
    KD(max_wait_s), KD(mean_exec_s), KD(mean_jct_s), KD(mean_slowdown),
    KD(mean_fragcost), KD(mean_utilization), KD(lower_bound_s), KD(wall_s),
    KD(jain_hourly_min),
};
static const key_d_t LKEYS[] = {
    KD(jobs_total), KD(jobs_completed), KD(jobs_rejected), KD(migrations),
    KD(migrations_bbm), KD(reconfigurations), KD(layout_switches), KD(events),
    KD(jain_hours),
};
#undef KD

/* Per-tenant keys, "tenant<K>_<field>" (docs/formats.md): the field's
 * offset in ms_tenant_metrics_t, and whether it is a count. */
typedef struct key_t_ { const char *key; size_t off; bool count; } key_tenant_t;

#define KT(field, count) { #field, offsetof(ms_tenant_metrics_t, field), count }
static const key_tenant_t TKEYS[] = {
    KT(weight, false), KT(usage_share, false), KT(contended_share, false),
    KT(mean_wait_s, false), KT(p99_wait_s, false), KT(mean_jct_s, false),
    KT(guarantee, true), KT(jobs, true), KT(completed, true), KT(max_usage, true),
    KT(reclaim_max_s, false), KT(reclaim_mean_s, false), KT(reclaims, true),
    KT(reclaims_open, true),
};
#undef KT

/* "<prefix><H>": H when below MS_SIM_MAX_HOURS (the hours kept), else -1
 * (past them, or another key). */
static long hour_of(const char *key, const char *prefix)
{
    size_t np = strlen(prefix);
    long h = 0;
    const char *p = key + np;

    if (strncmp(key, prefix, np) != 0 || !isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p) && h < MS_SIM_MAX_HOURS; p++)
        h = h * 10 + (*p - '0');
    return *p == '\0' && h < MS_SIM_MAX_HOURS ? h : -1;
}

/* "jain_hour<H>": the hour's slot in jain_hourly, or NULL. */
static double *jain_hour(ms_metrics_t *m, const char *key)
{
    long h = hour_of(key, "jain_hour");

    return h >= 0 ? &m->jain_hourly[h] : NULL;
}

/* A tenant's field "share_hour<H>": tenant k's slot in share_hourly, or
 * NULL. */
static double *share_hour(ms_metrics_t *m, const char *field, int k)
{
    long h = hour_of(field, "share_hour");

    return h >= 0 ? &m->share_hourly[h][k] : NULL;
}

/* "tenant<K>_<field>": *k and the field, or NULL. */
static const char *tenant_key(const char *key, int *k)
{
    int v = 0;
    const char *p = key + 6;

    if (strncmp(key, "tenant", 6) != 0 || !isdigit((unsigned char)*p))
        return NULL;
    for (; isdigit((unsigned char)*p) && v < MS_SIM_MAX_TENANTS; p++)
        v = v * 10 + (*p - '0');
    if (*p != '_' || v >= MS_SIM_MAX_TENANTS)
        return NULL;
    *k = v;
    return p + 1;
}

/* A tenant key's number into m (limit may be -1; counts are whole). */
static bool tenant_num(ms_metrics_t *m, const char *key, double v)
{
    const char *field;
    double *sh;
    int k;
    size_t i;

    if ((field = tenant_key(key, &k)) == NULL)
        return true;
    if (k + 1 > m->ntenants)
        m->ntenants = k + 1;
    if ((sh = share_hour(m, field, k)) != NULL) {
        *sh = v;
        return true;
    }
    if (strcmp(field, "limit") == 0) {
        if (v != floor(v) || !ms_number_fits_int(v, -1, 1000000000000000))
            return false;
        m->tenants[k].limit = (long)v;
        return true;
    }
    for (i = 0; i < sizeof(TKEYS) / sizeof(TKEYS[0]); i++) {
        char *at = (char *)&m->tenants[k] + TKEYS[i].off;

        if (strcmp(field, TKEYS[i].key) != 0)
            continue;
        if (!TKEYS[i].count) {
            *(double *)(void *)at = v;
        } else {
            if (v != floor(v) || !ms_number_fits_int(v, 0, 1000000000000000))
                return false;
            *(long *)(void *)at = (long)v;
        }
    }
    return true;
}

static const char *skip_ws(const char *p)
{
    while (*p != '\0' && isspace((unsigned char)*p))
        p++;
    return p;
}

/* Parse a JSON string at p (at the opening quote) into dst (may be NULL);
 * returns the position after the closing quote or NULL. Escapes other than
 * the simple ones are kept verbatim. */
static const char *parse_str(const char *p, char *dst, size_t dlen)
{
    size_t k = 0;

    if (*p != '"')
        return NULL;
    for (p++; *p != '\0' && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            p++;
            if (*p == '\0')
                return NULL;
            c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
        }
        if (dst != NULL && k + 1 < dlen)
            dst[k++] = c;
    }
    if (dst != NULL && dlen > 0)
        dst[k] = '\0';
    return *p == '"' ? p + 1 : NULL;
}

ms_status_t ms_report_read_metrics(FILE *f, const char *name, ms_metrics_t *m,
                                   char *policy, size_t plen, ms_diag_t *diag)
{
    char *buf, key[64];
    size_t len, i;
    const char *p;
    ms_status_t st;

    if (f == NULL || m == NULL)
        return MS_EINVAL;
    memset(m, 0, sizeof(*m));
    if (policy != NULL && plen > 0)
        policy[0] = '\0';
    if ((st = ms_csv_slurp(f, &buf, &len)) != MS_OK) {
        ms_diag_set(diag, name, 0, "", "cannot read: %s", ms_strerror(st));
        return st;
    }
    p = skip_ws(buf);
    if (*p != '{') {
        ms_diag_set(diag, name, 0, "", "expected a JSON object");
        free(buf);
        return MS_EPARSE;
    }
    p = skip_ws(p + 1);
    /* Each pass consumes a key, a colon and a value or fails: p only moves
     * forward through the NUL-terminated buffer, so the loop ends. */
    while (*p != '}') {
        const char *q = parse_str(p, key, sizeof(key));
        if (q == NULL)
            goto bad;
        p = skip_ws(q);
        if (*p != ':')
            goto bad;
        p = skip_ws(p + 1);
        if (*p == '"') {
            const char *field;
            int k;

            if ((field = tenant_key(key, &k)) != NULL && strcmp(field, "name") == 0) {
                q = parse_str(p, m->tenants[k].name, sizeof(m->tenants[k].name));
                if (k + 1 > m->ntenants)
                    m->ntenants = k + 1;
            } else {
                q = parse_str(p, strcmp(key, "policy") == 0 ? policy : NULL,
                              strcmp(key, "policy") == 0 ? plen : 0);
            }
            if (q == NULL)
                goto bad;
            p = q;
        } else if (strncmp(p, "null", 4) == 0) {
            const char *field;
            double *jh = jain_hour(m, key), *sh;
            int k;

            for (i = 0; i < sizeof(DKEYS) / sizeof(DKEYS[0]); i++)
                if (strcmp(key, DKEYS[i].key) == 0)
                    *(double *)(void *)((char *)m + DKEYS[i].off) = NAN;
            if (jh != NULL)
                *jh = NAN;
            /* a tenant's reclaim times are null without a reclaim */
            if ((field = tenant_key(key, &k)) != NULL && strcmp(field, "reclaim_max_s") == 0)
                m->tenants[k].reclaim_max_s = NAN;
            else if (field != NULL && strcmp(field, "reclaim_mean_s") == 0)
                m->tenants[k].reclaim_mean_s = NAN;
            else if (field != NULL && (sh = share_hour(m, field, k)) != NULL)
                *sh = NAN;
            p += 4;
        } else {
            const char *end;
            double v;

            end = ms_csv_json_number(p, buf + len, &v);
            if (end == NULL) {
                ms_diag_set(diag, name, 0, key, "not a finite JSON number near byte %ld",
                            (long)(p - buf));
                free(buf);
                return MS_EPARSE;
            }
            for (i = 0; i < sizeof(DKEYS) / sizeof(DKEYS[0]); i++)
                if (strcmp(key, DKEYS[i].key) == 0)
                    *(double *)(void *)((char *)m + DKEYS[i].off) = v;
            if (strcmp(key, "jain_index") == 0)
                m->jain_index = v;
            if (jain_hour(m, key) != NULL)
                *jain_hour(m, key) = v;
            if (!tenant_num(m, key, v)) {
                ms_diag_set(diag, name, 0, key, "%g is not a count", v);
                free(buf);
                return MS_EPARSE;
            }
            for (i = 0; i < sizeof(LKEYS) / sizeof(LKEYS[0]); i++) {
                if (strcmp(key, LKEYS[i].key) != 0)
                    continue;
                /* a count: whole, in [0, 1e15]; never a cast out of range */
                if (v != floor(v) || !ms_number_fits_int(v, 0, 1000000000000000)) {
                    ms_diag_set(diag, name, 0, key, "%g is not a count in [0, 1e15]", v);
                    free(buf);
                    return MS_EPARSE;
                }
                *(long *)(void *)((char *)m + LKEYS[i].off) = (long)v;
            }
            p = end;
        }
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
        else if (*p != '}')
            goto bad;
    }
    free(buf);
    return MS_OK;
bad:
    ms_diag_set(diag, name, 0, "", "malformed JSON near byte %ld", (long)(p - buf));
    free(buf);
    return MS_EPARSE;
}

/* --- schedule CSV ------------------------------------------------------ */

enum { C_JOB, C_GPU, C_START, C_PROF, C_BEGIN, C_END, C_N };
static const char *const COLS[C_N] = { "job_id", "gpu", "start", "profile", "begin_s", "end_s" };

/* Split line in place at commas (no quoting in these files); returns the
 * field count, at most max. */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;

    for (;;) {
        char *c = strchr(p, ',');
        if (n < max)
            fields[n] = p;
        n++;
        if (c == NULL)
            break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

static void chomp(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

ms_status_t ms_report_read_schedule(FILE *f, const char *name, const ms_geom_t *g,
                                    ms_segment_t **segs, size_t *n, int *ngpus,
                                    ms_diag_t *diag)
{
    char *line = NULL, **fields = NULL;
    size_t cap = 0, nseg = 0, segcap = 0;
    ssize_t got;
    long lineno = 0;
    int col[C_N], nf, maxf = 0, i, maxgpu = -1;
    ms_segment_t *out = NULL;
    ms_status_t st = MS_OK;

    if (f == NULL || g == NULL || segs == NULL || n == NULL || ngpus == NULL)
        return MS_EINVAL;
    *segs = NULL;
    *n = 0;
    *ngpus = 0;
    for (i = 0; i < C_N; i++)
        col[i] = -1;
    while ((got = getline(&line, &cap, f)) != -1) {
        lineno++;
        if (memchr(line, '\0', (size_t)got) != NULL) {
            ms_diag_set(diag, name, lineno, "", "NUL byte in the line (not a text file?)");
            st = MS_EPARSE;
            break;
        }
        if (lineno == 1 && got >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0)
            memmove(line, line + 3, (size_t)got - 2);   /* a UTF-8 byte-order mark */
        chomp(line);
        if (line[0] == '\0')
            continue;
        if (fields == NULL) {   /* the header */
            maxf = 1;
            for (i = 0; line[i] != '\0'; i++)
                maxf += line[i] == ',';
            fields = malloc((size_t)maxf * sizeof(*fields));
            if (fields == NULL) {
                st = MS_ENOMEM;
                break;
            }
            nf = split(line, fields, maxf);
            for (i = 0; i < nf; i++) {
                int k;
                for (k = 0; k < C_N; k++)
                    if (strcasecmp(fields[i], COLS[k]) == 0)
                        col[k] = i;
            }
            for (i = 0; i < C_N; i++)
                if (col[i] < 0) {
                    ms_diag_set(diag, name, lineno, COLS[i], "missing column");
                    st = MS_EPARSE;
                    break;
                }
            if (st != MS_OK)
                break;
            continue;
        }
        nf = split(line, fields, maxf);
        if (nf < maxf) {
            ms_diag_set(diag, name, lineno, "", "expected %d fields, got %d", maxf, nf);
            st = MS_EPARSE;
            break;
        }
        {
            ms_segment_t s;
            long gpu, start, job;
            double b, e;
            int prof = ms_geom_profile_find(g, fields[col[C_PROF]]);

            int64_t iv;

            if (ms_number_int(fields[col[C_GPU]], 0, INT32_MAX - 1, &iv) != MS_OK) {
                ms_diag_set(diag, name, lineno, "gpu", "bad GPU '%s'", fields[col[C_GPU]]);
                st = MS_EPARSE;
                break;
            }
            gpu = (long)iv;
            if (ms_number_int(fields[col[C_START]], -1, ms_geom_width(g) - 1, &iv) != MS_OK) {
                ms_diag_set(diag, name, lineno, "start", "bad start '%s'", fields[col[C_START]]);
                st = MS_EPARSE;
                break;
            }
            start = (long)iv;
            if (prof < 0) {
                ms_diag_set(diag, name, lineno, "profile", "unknown profile '%s' for %s",
                            fields[col[C_PROF]], ms_geom_model(g)->name);
                st = MS_EPARSE;
                break;
            }
            if (ms_number_double(fields[col[C_BEGIN]], &b) != MS_OK || b < 0 || b > 1e12) {
                ms_diag_set(diag, name, lineno, "begin_s", "bad time '%s' (want 0..1e12 s)",
                            fields[col[C_BEGIN]]);
                st = MS_EPARSE;
                break;
            }
            if (ms_number_double(fields[col[C_END]], &e) != MS_OK || e < b || e > 1e12) {
                ms_diag_set(diag, name, lineno, "end_s", "bad time '%s' (want begin_s..1e12 s)",
                            fields[col[C_END]]);
                st = MS_EPARSE;
                break;
            }
            /* a numeric id is the job; another id, the row's ordinal */
            if (ms_number_int(fields[col[C_JOB]], 0, INT32_MAX, &iv) == MS_OK)
                job = (long)iv;
            else
                job = (long)(nseg < (size_t)INT32_MAX ? nseg : (size_t)INT32_MAX);
            s.job = (int32_t)job;
            s.gpu = (int32_t)gpu;
            s.start = (int8_t)start;
            s.prof = (int8_t)prof;
            s.begin_s = b;
            s.end_s = e;
            if (nseg == segcap) {
                size_t nc = segcap ? segcap * 2 : 256;
                ms_segment_t *ns = realloc(out, nc * sizeof(*ns));
                if (ns == NULL) {
                    st = MS_ENOMEM;
                    break;
                }
                out = ns;
                segcap = nc;
            }
            out[nseg++] = s;
            if ((int)gpu > maxgpu)
                maxgpu = (int)gpu;
        }
    }
    if (st == MS_OK && ferror(f)) {
        ms_diag_set(diag, name, lineno, "", "read error");
        st = MS_EIO;
    }
    if (st == MS_OK && fields == NULL) {
        ms_diag_set(diag, name, 0, "", "empty file (no header)");
        st = MS_EPARSE;
    }
    free(line);
    free(fields);
    if (st != MS_OK) {
        free(out);
        return st;
    }
    *segs = out;
    *n = nseg;
    *ngpus = maxgpu + 1;
    return MS_OK;
}

/* --- utilisation from a schedule --------------------------------------- */

typedef struct uev { double t; int32_t gpu; int32_t delta; } uev_t;

static int cmp_uev(const void *a, const void *b)
{
    const uev_t *x = a, *y = b;

    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    return (x->delta > y->delta) - (x->delta < y->delta);   /* ends first */
}

ms_status_t ms_report_util_series(const ms_geom_t *g, int ngpus, const ms_segment_t *segs,
                                  size_t n, double **t, double **u, size_t *npts)
{
    uev_t *ev;
    int *load;
    double *ot, *ou, total = 0.0, cap;
    size_t i, k = 0, ne = 0, nd = 0;
    int32_t *dg = NULL;
    ms_status_t rc;
    int C;

    if (g == NULL || ngpus <= 0 || (n > 0 && segs == NULL) || t == NULL || u == NULL ||
        npts == NULL || n > SIZE_MAX / 4 / sizeof(uev_t))
        return MS_EINVAL;
    if ((rc = ms__report_dense_gpus(segs, n, ngpus, &dg, &nd)) != MS_OK)
        return rc;
    C = ms_geom_compute(g);
    cap = (double)C * ngpus;
    ev = malloc((2 * n + 1) * sizeof(*ev));
    load = calloc(nd > 0 ? nd : 1, sizeof(*load));
    ot = malloc((2 * n + 2) * sizeof(*ot));
    ou = malloc((2 * n + 2) * sizeof(*ou));
    if (ev == NULL || load == NULL || ot == NULL || ou == NULL) {
        free(ev);
        free(load);
        free(ot);
        free(ou);
        free(dg);
        return MS_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        int c;
        if (dg[i] < 0 || segs[i].prof < 0 ||
            segs[i].prof >= ms_geom_nprofiles(g) || !(segs[i].end_s > segs[i].begin_s))
            continue;
        c = ms_geom_profile(g, segs[i].prof)->cslices;
        ev[ne].t = segs[i].begin_s;
        ev[ne].gpu = dg[i];
        ev[ne++].delta = c;
        ev[ne].t = segs[i].end_s;
        ev[ne].gpu = dg[i];
        ev[ne++].delta = -c;
    }
    qsort(ev, ne, sizeof(*ev), cmp_uev);
    ot[k] = 0.0;
    ou[k++] = 0.0;
    for (i = 0; i < ne; i++) {
        int gp = ev[i].gpu, old = load[gp];
        load[gp] += ev[i].delta;
        total += (double)(load[gp] < C ? load[gp] : C) - (double)(old < C ? old : C);
        if (i + 1 < ne && ev[i + 1].t == ev[i].t)
            continue;   /* one point per distinct time */
        if (ot[k - 1] == ev[i].t)
            k--;
        ot[k] = ev[i].t;
        ou[k++] = total > 0.0 ? total / cap : 0.0;
    }
    free(ev);
    free(load);
    free(dg);
    *t = ot;
    *u = ou;
    *npts = k;
    return MS_OK;
}

/* --- files and small statistics ---------------------------------------- */

ms_status_t ms_report_mkdirs(const char *path)
{
    size_t len, i;
    char *p;
    struct stat sb;
    ms_status_t st = MS_OK;

    if (path == NULL || path[0] == '\0')
        return MS_EINVAL;
    len = strlen(path);
    p = malloc(len + 1);
    if (p == NULL)
        return MS_ENOMEM;
    memcpy(p, path, len + 1);
    for (i = 1; i <= len && st == MS_OK; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            st = MS_EIO;
        else if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode))
            st = MS_EIO;
        if (i < len)
            p[i] = '/';
    }
    free(p);
    return st;
}

ms_status_t ms_report_fopen(const char *dir, const char *name, FILE **f)
{
    size_t a, b;
    char *p;

    if (dir == NULL || name == NULL || f == NULL)
        return MS_EINVAL;
    a = strlen(dir);
    b = strlen(name);
    p = malloc(a + b + 2);
    if (p == NULL)
        return MS_ENOMEM;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    *f = fopen(p, "w");
    free(p);
    return *f != NULL ? MS_OK : MS_EIO;
}

void ms_report_mean_sd(const double *x, size_t n, double *mean, double *sd)
{
    double s = 0.0, ss = 0.0, m;
    size_t i, k = 0;

    for (i = 0; i < n; i++)
        if (isfinite(x[i])) {
            s += x[i];
            k++;
        }
    if (k == 0) {
        *mean = NAN;
        *sd = 0.0;
        return;
    }
    m = s / (double)k;
    for (i = 0; i < n; i++)
        if (isfinite(x[i]))
            ss += (x[i] - m) * (x[i] - m);
    *mean = m;
    *sd = k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0;
}
