/* schedule_check.c - the schedule validator (see check.h).
 *
 * Rows are read with the shared CSV line reader, job ids are resolved
 * through a hash of the trace's ids, and the overlap check is a sweep per
 * GPU over segments sorted by begin time: a valid GPU has at most one
 * segment per memory slice alive, so the live set stays tiny.
 */
#include "migsched/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "migsched/number.h"

typedef struct seg {
    int32_t job, gpu;
    int8_t start, prof;
    double begin, end;
} seg_t;

typedef struct idmap {
    int32_t *slot;          /* trace index or -1 */
    size_t cap;             /* power of two */
} idmap_t;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */

    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static ms_status_t idmap_build(idmap_t *m, const ms_trace_t *t)
{
    size_t i, cap = 16;

    while (cap < 2 * t->n + 1)
        cap *= 2;
    m->slot = malloc(cap * sizeof(*m->slot));
    if (m->slot == NULL)
        return MS_ENOMEM;
    m->cap = cap;
    for (i = 0; i < cap; i++)
        m->slot[i] = -1;
    for (i = 0; i < t->n; i++) {
        size_t h = hash_str(ms_trace_name(t, i)) & (cap - 1);
        while (m->slot[h] >= 0)
            h = (h + 1) & (cap - 1);
        m->slot[h] = (int32_t)i;
    }
    return MS_OK;
}

static int32_t idmap_get(const idmap_t *m, const ms_trace_t *t, const char *id)
{
    size_t h = hash_str(id) & (m->cap - 1);

    /* the table is at most half full (idmap_build), so a free slot ends
     * every probe */
    while (m->slot[h] >= 0) {
        if (strcmp(ms_trace_name(t, (size_t)m->slot[h]), id) == 0)
            return m->slot[h];
        h = (h + 1) & (m->cap - 1);
    }
    return -1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void finding(ms_check_result_t *r, const char *fmt, ...)
{
    va_list ap;

    r->violations++;
    if (r->nmsgs >= MS_CHECK_MAX_MSGS)
        return;
    va_start(ap, fmt);
    vsnprintf(r->msgs[r->nmsgs++], sizeof(r->msgs[0]), fmt, ap);
    va_end(ap);
}

static int seg_cmp(const void *a, const void *b)
{
    const seg_t *x = a, *y = b;

    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->start - y->start;
}

static ms_status_t parse_double(const ms_csv_t *c, int col, const char *field, double *out,
                                ms_diag_t *d)
{
    const char *s;
    ms_status_t st = ms_csv_str(c, col, field, &s, d);

    if (st != MS_OK)
        return st;
    if (ms_number_double(s, out) != MS_OK || *out < 0.0 || *out > 1e12) {
        ms_diag_set(d, c->name, c->line, field, "'%s' is not a time in [0, 1e12] seconds", s);
        return MS_EPARSE;
    }
    return MS_OK;
}

/* Read every row into segs; resolves job ids and profiles. */
static ms_status_t read_rows(ms_csv_t *c, const ms_trace_t *t, const idmap_t *ids, int ngpus,
                             seg_t **segs, size_t *n, ms_check_result_t *r, ms_diag_t *d)
{
    const ms_geom_t *g = t->geom;
    int cj, cg, cs, cp, cb, ce, rc;
    size_t cap = 0;
    ms_status_t st;

    if ((st = ms_csv_header(c, "empty schedule (no header)", d)) != MS_OK)
        return st;
    cj = ms_csv_col(c, "job_id");
    cg = ms_csv_col(c, "gpu");
    cs = ms_csv_col(c, "start");
    cp = ms_csv_col(c, "profile");
    cb = ms_csv_col(c, "begin_s");
    ce = ms_csv_col(c, "end_s");
    if (cj < 0 || cg < 0 || cs < 0 || cp < 0 || cb < 0 || ce < 0) {
        ms_diag_set(d, c->name, c->line, "header",
                    "the header needs job_id,gpu,start,profile,begin_s,end_s");
        return MS_EPARSE;
    }
    while ((rc = ms_csv_next(c, d)) > 0) {
        seg_t s;
        const char *id, *prof;
        int64_t v;
        seg_t *nv;

        if ((st = ms_csv_str(c, cj, "job_id", &id, d)) != MS_OK ||
            (st = ms_csv_int(c, cg, "gpu", 0, (int64_t)ngpus - 1, &v, d)) != MS_OK)
            return st;
        s.gpu = (int32_t)v;
        if ((st = ms_csv_int(c, cs, "start", -1, ms_geom_width(g) - 1, &v, d)) != MS_OK)
            return st;
        s.start = (int8_t)v;
        if ((st = ms_csv_str(c, cp, "profile", &prof, d)) != MS_OK ||
            (st = parse_double(c, cb, "begin_s", &s.begin, d)) != MS_OK ||
            (st = parse_double(c, ce, "end_s", &s.end, d)) != MS_OK)
            return st;
        s.job = idmap_get(ids, t, id);
        if (s.job < 0) {
            ms_diag_set(d, c->name, c->line, "job_id", "job '%s' is not in the trace", id);
            return MS_EPARSE;
        }
        s.prof = (int8_t)ms_geom_profile_find(g, prof);
        if (s.prof < 0) {
            ms_diag_set(d, c->name, c->line, "profile", "unknown profile '%s'", prof);
            return MS_EPARSE;
        }
        if ((nv = ms_csv_grow(*segs, &cap, *n, sizeof(**segs), 1024)) == NULL)
            return MS_ENOMEM;
        *segs = nv;
        (*segs)[(*n)++] = s;
        r->segments++;
    }
    return rc < 0 ? (ms_status_t)-rc : MS_OK;
}

static void check_rows(const ms_trace_t *t, bool timeslice, const seg_t *v, size_t n,
                       ms_check_result_t *r)
{
    const ms_geom_t *g = t->geom;
    size_t i;

    for (i = 0; i < n; i++) {
        const seg_t *s = &v[i];
        const ms_job_t *j = &t->jobs[s->job];
        const ms_profile_t *ip = ms_geom_profile(g, s->prof), *jp = ms_geom_profile(g, j->prof);
        const char *id = ms_trace_name(t, (size_t)s->job);

        if (s->end < s->begin)
            finding(r, "job %s: segment ends at %.3f before it begins at %.3f", id, s->end,
                    s->begin);
        if (s->begin < j->arrival - 1e-6)
            finding(r, "job %s starts at %.3f before it arrives at %.3f", id, s->begin,
                    j->arrival);
        if (timeslice) {
            if (s->start != -1)
                finding(r, "job %s: time-slice segment with start %d", id, s->start);
            continue;
        }
        if (s->start < 0 || !((ip->start_mask >> s->start) & 1u))
            finding(r, "job %s: %s at illegal start %d", id, ip->name, s->start);
        if (ip->cslices < jp->cslices || ip->msize < jp->msize)
            finding(r, "job %s asks for %s but ran on %s", id, jp->name, ip->name);
    }
}

/* Per GPU, segments sorted by begin: each must not share a memory slice
 * with a segment still alive. */
static ms_status_t check_overlap(const ms_trace_t *t, seg_t *v, size_t n, ms_check_result_t *r)
{
    const ms_geom_t *g = t->geom;
    size_t i, nlive = 0, cap = 0;
    size_t *live = NULL;

    if (n == 0)
        return MS_OK;
    qsort(v, n, sizeof(*v), seg_cmp);
    for (i = 0; i < n; i++) {
        const seg_t *s = &v[i];
        uint16_t m;
        size_t k, w = 0;
        size_t *nl;

        if (s->start < 0 || !((ms_geom_profile(g, s->prof)->start_mask >> s->start) & 1u))
            continue;   /* reported already */
        if (i > 0 && v[i - 1].gpu != s->gpu)
            nlive = 0;
        m = ms_geom_profile_mask(g, s->prof, s->start);
        for (k = 0; k < nlive; k++) {
            const seg_t *o = &v[live[k]];
            if (o->end <= s->begin + 1e-9)
                continue;   /* ended: drop it */
            live[w++] = live[k];
            if (ms_geom_profile_mask(g, o->prof, o->start) & m)
                finding(r, "GPU %d: jobs %s and %s share memory slices in [%.3f, %.3f)",
                        (int)s->gpu, ms_trace_name(t, (size_t)o->job),
                        ms_trace_name(t, (size_t)s->job), s->begin,
                        o->end < s->end ? o->end : s->end);
        }
        nlive = w;
        if ((nl = ms_csv_grow(live, &cap, nlive, sizeof(*live), 32)) == NULL) {
            free(live);
            return MS_ENOMEM;
        }
        live = nl;
        live[nlive++] = i;
    }
    free(live);
    return MS_OK;
}

static int seg_job_cmp(const void *a, const void *b)
{
    const seg_t *x = a, *y = b;

    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

/* Every job ran in full: its segments (sorted by job, then begin) cover
 * at least its duration in time and add up to duration x gang of work.
 * A job without segments is a violation unless it can never run here. */
static ms_status_t check_work(const ms_trace_t *t, const ms_check_opts_t *o, const seg_t *v,
                              size_t n, ms_check_result_t *r)
{
    seg_t *s = n > 0 ? malloc(n * sizeof(*s)) : NULL;
    int node = o->gpus_per_node > 0 && o->gpus_per_node < o->ngpus ? o->gpus_per_node : o->ngpus;
    size_t i, k = 0;

    if (n > 0 && s == NULL)
        return MS_ENOMEM;
    if (n > 0) {
        memcpy(s, v, n * sizeof(*s));
        qsort(s, n, sizeof(*s), seg_job_cmp);
    }
    for (i = 0; i < t->n; i++) {
        const ms_job_t *j = &t->jobs[i];
        int gang = j->gang > 1 ? j->gang : 1;
        double need = j->duration * gang, work = 0.0, cover = 0.0, lo = 0.0, hi = -1.0;
        double tol = 1e-6 * (need > 1.0 ? need : 1.0);
        size_t first = k;

        /* segments of job i are s[first..k): one pass over s in all */
        for (; k < n && s[k].job == (int32_t)i; k++) {
            double b = s[k].begin, e = s[k].end > s[k].begin ? s[k].end : s[k].begin;

            work += e - b;
            if (b > hi) {               /* a gap: close the covered run */
                cover += hi > lo ? hi - lo : 0.0;
                lo = b;
                hi = e;
            } else if (e > hi) {
                hi = e;
            }
        }
        cover += hi > lo ? hi - lo : 0.0;
        if (k == first) {
            if (gang > node)
                r->jobs_unrunnable++;
            else if (o->allow_missing)
                r->jobs_missing++;
            else {
                r->jobs_missing++;
                finding(r, "job %s is not in the schedule (it needs %.3f s of %s)",
                        ms_trace_name(t, i), j->duration,
                        ms_geom_profile(t->geom, j->prof)->name);
            }
            continue;
        }
        r->jobs_run++;
        if (work < need - tol)
            finding(r, "job %s ran %.3f s in all, less than its %.3f s", ms_trace_name(t, i),
                    work, need);
        else if (cover < j->duration - tol)
            finding(r, "job %s ran for %.3f s of time, less than its %.3f s "
                       "(segments at the same time do not add up)",
                    ms_trace_name(t, i), cover, j->duration);
    }
    free(s);
    return MS_OK;
}

ms_status_t ms_schedule_check(FILE *f, const char *name, const ms_trace_t *t,
                              const ms_check_opts_t *o, ms_check_result_t *res,
                              ms_diag_t *diag)
{
    ms_csv_t c;
    idmap_t ids = { NULL, 0 };
    seg_t *segs = NULL;
    size_t n = 0;
    ms_status_t st;

    if (res == NULL)
        return MS_EINVAL;
    memset(res, 0, sizeof(*res));
    if (f == NULL || t == NULL || o == NULL || o->ngpus <= 0 || o->gpus_per_node < 0)
        return MS_EINVAL;
    if ((st = idmap_build(&ids, t)) != MS_OK)
        return st;
    ms_csv_open(&c, f, name);
    c.lax = true;
    st = read_rows(&c, t, &ids, o->ngpus, &segs, &n, res, diag);
    ms_csv_close(&c);
    if (st == MS_OK) {
        check_rows(t, o->timeslice, segs, n, res);
        st = check_work(t, o, segs, n, res);
    }
    if (st == MS_OK && !o->timeslice)
        st = check_overlap(t, segs, n, res);
    free(segs);
    free(ids.slot);
    return st;
}
