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

/* What the checker knows of each GPU. */
typedef struct gpuinfo {
    const ms_geom_t *g;
    int mode;               /* ms_node_mode_t; MIG on a homogeneous non-timeslice cluster */
    int replicas;           /* jobs at once at most (time-sliced / whole), 0 = unchecked */
    int node;               /* index in opts->nodes, -1 homogeneous */
} gpuinfo_t;

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
                             const gpuinfo_t *gi, const ms_check_opts_t *o, seg_t **segs,
                             size_t *n, ms_check_result_t *r, ms_diag_t *d)
{
    const ms_geom_t *g;
    int cj, cg, cs, cp, cb, ce, cn, cm, rc;
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
    cn = ms_csv_col(c, "node");
    cm = ms_csv_col(c, "model");
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
        g = gi[s.gpu].g;
        if ((st = ms_csv_int(c, cs, "start", -1, ms_geom_width(g) - 1, &v, d)) != MS_OK)
            return st;
        if (gi[s.gpu].node >= 0 && (cn >= 0 || cm >= 0)) {
            const ms_node_spec_t *nd = &o->nodes[gi[s.gpu].node];
            const char *x;

            if (cn >= 0 && (st = ms_csv_str(c, cn, "node", &x, d)) == MS_OK && strcmp(x, nd->name) != 0)
                finding(r, "row %ld: GPU %d is on node %s, the row says %s", c->line, (int)s.gpu,
                        nd->name, x);
            if (cm >= 0 && (st = ms_csv_str(c, cm, "model", &x, d)) == MS_OK &&
                ms_model_find(x) != ms_geom_model(g))
                finding(r, "row %ld: GPU %d is a %s, the row says %s", c->line, (int)s.gpu,
                        ms_geom_model(g)->name, x);
        }
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
            ms_diag_set(d, c->name, c->line, "profile", "unknown profile '%s' for %s", prof,
                        ms_geom_model(g)->name);
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

static void check_rows(const ms_trace_t *t, const gpuinfo_t *gi, bool hetero, const seg_t *v,
                       size_t n, ms_check_result_t *r)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const seg_t *s = &v[i];
        const ms_job_t *j = &t->jobs[s->job];
        const ms_geom_t *g = gi[s->gpu].g;
        const ms_profile_t *ip = ms_geom_profile(g, s->prof), *jp = ms_geom_profile(t->geom, j->prof);
        const ms_job_req_t *rq = t->req != NULL ? &t->req[s->job] : NULL;
        const char *id = ms_trace_name(t, (size_t)s->job);

        if (s->end < s->begin)
            finding(r, "job %s: segment ends at %.3f before it begins at %.3f", id, s->end,
                    s->begin);
        if (s->begin < j->arrival - 1e-6)
            finding(r, "job %s starts at %.3f before it arrives at %.3f", id, s->begin,
                    j->arrival);
        if (rq != NULL && rq->model != NULL && ms_geom_model(g) != rq->model)
            finding(r, "job %s asks for a %s but ran on a %s (GPU %d)", id, rq->model->name,
                    ms_geom_model(g)->name, (int)s->gpu);
        if (rq != NULL && rq->isolation == 1 && gi[s->gpu].mode == MS_NODE_TIMESLICE)
            finding(r, "job %s asks for isolation but ran time-sliced on GPU %d", id, (int)s->gpu);
        if (gi[s->gpu].mode != MS_NODE_MIG) {
            if (s->start != -1)
                finding(r, "job %s: time-slice segment with start %d", id, s->start);
            continue;
        }
        if (s->start < 0 || !((ip->start_mask >> s->start) & 1u))
            finding(r, "job %s: %s at illegal start %d", id, ip->name, s->start);
        if (!hetero) {
            if (ip->cslices < jp->cslices || ip->msize < jp->msize)
                finding(r, "job %s asks for %s but ran on %s", id, jp->name, ip->name);
        } else if (j->gang <= 1) {
            /* another model: at least the job's memory and share of compute */
            double want_mem = rq != NULL && rq->mem_gb > 0 ? rq->mem_gb
                                                           : ms_geom_profile_mem_gb(t->geom, j->prof);
            double want_c = rq != NULL && rq->mem_gb > 0
                                ? 0.0
                                : (double)jp->cslices / ms_geom_compute(t->geom);

            if (ms_geom_profile_mem_gb(g, s->prof) + 1e-9 < want_mem ||
                (double)ip->cslices / ms_geom_compute(g) + 1e-9 < want_c)
                finding(r, "job %s asks for %s but ran on %s (%s)", id,
                        rq != NULL && rq->mem_gb > 0 ? "its memory" : jp->name, ip->name,
                        ms_geom_model(g)->name);
        }
    }
}

/* Time-sliced and whole GPUs: at most `replicas` jobs at once. v is
 * sorted by (gpu, begin). */
static ms_status_t check_slots(const ms_trace_t *t, const gpuinfo_t *gi, const seg_t *v, size_t n,
                               ms_check_result_t *r)
{
    size_t i, nlive = 0, cap = 0;
    double *live = NULL;

    for (i = 0; i < n; i++) {
        const seg_t *s = &v[i];
        size_t k, w = 0;
        double *nl;

        if (i > 0 && v[i - 1].gpu != s->gpu)
            nlive = 0;
        if (gi[s->gpu].replicas <= 0 || s->start >= 0)
            continue;
        for (k = 0; k < nlive; k++)   /* live ends; at most replicas of them */
            if (live[k] > s->begin + 1e-9)
                live[w++] = live[k];
        nlive = w;
        if ((nl = ms_csv_grow(live, &cap, nlive, sizeof(*live), 16)) == NULL) {
            free(live);
            return MS_ENOMEM;
        }
        live = nl;
        live[nlive++] = s->end;
        if ((int)nlive > gi[s->gpu].replicas)
            finding(r, "GPU %d holds %zu jobs at %.3f (%s at most %d)", (int)s->gpu, nlive,
                    s->begin, gi[s->gpu].mode == MS_NODE_WHOLE ? "a whole GPU:" : "time-sliced,",
                    gi[s->gpu].replicas);
    }
    (void)t;
    free(live);
    return MS_OK;
}

/* Per GPU, segments sorted by begin: each must not share a memory slice
 * with a segment still alive. */
static ms_status_t check_overlap(const ms_trace_t *t, const gpuinfo_t *gi, seg_t *v, size_t n,
                                 ms_check_result_t *r)
{
    const ms_geom_t *g;
    size_t i, nlive = 0, cap = 0;
    size_t *live = NULL;

    if (n == 0)
        return MS_OK;
    for (i = 0; i < n; i++) {
        const seg_t *s = &v[i];
        uint16_t m;
        size_t k, w = 0;
        size_t *nl;

        if (i > 0 && v[i - 1].gpu != s->gpu)
            nlive = 0;
        g = gi[s->gpu].g;
        if (gi[s->gpu].mode != MS_NODE_MIG || s->start < 0 ||
            !((ms_geom_profile(g, s->prof)->start_mask >> s->start) & 1u))
            continue;   /* a slot, or reported already */
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
    gpuinfo_t *gi = NULL;
    ms_check_opts_t oo;
    size_t n = 0;
    int g, k, q;
    ms_status_t st;

    if (res == NULL)
        return MS_EINVAL;
    memset(res, 0, sizeof(*res));
    if (f == NULL || t == NULL || o == NULL || o->nnodes < 0 ||
        (o->nnodes == 0 && (o->ngpus <= 0 || o->gpus_per_node < 0)) ||
        (o->nnodes > 0 && o->nodes == NULL))
        return MS_EINVAL;
    oo = *o;
    if (o->nnodes > 0) {
        /* the node list decides: GPUs, the largest node (for gangs) */
        oo.ngpus = 0;
        oo.gpus_per_node = 0;
        for (k = 0; k < o->nnodes; k++) {
            if (o->nodes[k].ngpus <= 0 || o->nodes[k].geom == NULL || oo.ngpus > (1 << 24))
                return MS_EINVAL;
            oo.ngpus += o->nodes[k].ngpus;
            if (o->nodes[k].ngpus > oo.gpus_per_node)
                oo.gpus_per_node = o->nodes[k].ngpus;
        }
    }
    if ((gi = malloc((size_t)oo.ngpus * sizeof(*gi))) == NULL)
        return MS_ENOMEM;
    if (o->nnodes > 0) {
        for (k = 0, g = 0; k < o->nnodes; k++)
            for (q = 0; q < o->nodes[k].ngpus; q++, g++) {
                gi[g].g = o->nodes[k].geom;
                gi[g].mode = o->nodes[k].mode;
                if (o->timeslice && gi[g].mode == MS_NODE_MIG)
                    gi[g].mode = MS_NODE_TIMESLICE;   /* the timeslice policy shares MIG nodes too */
                gi[g].replicas = o->nodes[k].mode == MS_NODE_MIG ? 0   /* replicas of the policy: unchecked */
                                 : o->nodes[k].mode == MS_NODE_WHOLE ? 1 : o->nodes[k].replicas;
                gi[g].node = k;
            }
    } else {
        for (g = 0; g < oo.ngpus; g++) {
            gi[g].g = t->geom;
            gi[g].mode = o->timeslice ? MS_NODE_TIMESLICE : MS_NODE_MIG;
            gi[g].replicas = 0;
            gi[g].node = -1;
        }
    }
    if ((st = idmap_build(&ids, t)) != MS_OK) {
        free(gi);
        return st;
    }
    ms_csv_open(&c, f, name);
    c.lax = true;
    st = read_rows(&c, t, &ids, oo.ngpus, gi, o, &segs, &n, res, diag);
    ms_csv_close(&c);
    if (st == MS_OK) {
        check_rows(t, gi, o->nnodes > 0, segs, n, res);
        st = check_work(t, &oo, segs, n, res);
    }
    if (st == MS_OK && n > 0)
        qsort(segs, n, sizeof(*segs), seg_cmp);
    if (st == MS_OK)
        st = check_overlap(t, gi, segs, n, res);
    if (st == MS_OK)
        st = check_slots(t, gi, segs, n, res);
    free(segs);
    free(ids.slot);
    free(gi);
    return st;
}
