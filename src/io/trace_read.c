/* trace_read.c - the trace CSV reader, and traces built in memory.
 *
 * The reader streams: getline() holds one line at a time, whatever its
 * length. The header is required; its columns may come in any order and
 * unknown columns are ignored. Every error names the file, the line and the
 * field. Rows are sorted by (arrival, input order) once all are read.
 */
#include "migsched/trace.h"

#include "core/hugemem.h"

#include <errno.h>
#include "migsched/number.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { COL_ID, COL_ARR, COL_PROF, COL_DUR, COL_GPUS, COL_MEM, COL_MODEL, COL_ISO, COL_PRIO,
       COL_GANG, COL_TENANT, COL_CKPT, NCOLS };

static const char *const COL_NAME[NCOLS] = {
    "job_id", "arrival_s", "profile", "duration_s", "gpus", "mem_gb", "model", "isolation",
    "priority", "gang", "tenant", "checkpoint_s"
};
#define COL_REQUIRED COL_GPUS   /* columns before it are required (profile or mem_gb) */

/* A trace under construction. */
typedef struct builder {
    ms_job_t *jobs;
    size_t n, cap;
    char *names;
    size_t nlen, ncap;
    size_t *name_off;
    /* the id table, open addressing, a power of two in size, at most half
     * full: 0 (empty) or the id's hash tag (its hash's upper 32 bits) << 32
     * | job number + 1. The tag is the probe's start too (tag & (scap - 1)),
     * so a rehash never reads an id again and a probe reads one only when
     * the tags agree: the 1,000,000-row read took 9% of a whole simulate
     * in strlen, memcmp and hashing again, cache misses on the names. */
    uint64_t *slot;
    size_t scap;
    long *line;             /* [cap] input line of each job, for duplicate ids */
    ms_job_req_t *req;      /* [cap] constraints, when the header has such columns */
    bool want_req;
    char **tenants;         /* the tenant column's names (few: a linear search) */
    int ntenants, captenants;
} builder_t;

static void free_tenants(char **v, int n)
{
    int i;

    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void builder_free(builder_t *b)
{
    free_tenants(b->tenants, b->ntenants);
    free(b->jobs);
    free(b->names);
    free(b->name_off);
    free(b->slot);
    free(b->line);
    free(b->req);
    memset(b, 0, sizeof(*b));
}

/* The id's hash tag (FNV-1a's upper 32 bits). */
static uint32_t id_tag(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */

    while (n-- > 0)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return (uint32_t)(h >> 32);
}

/* The length of job i's id (the ids are stored one after another). */
static size_t id_len(const builder_t *b, size_t i)
{
    return (i + 1 < b->n ? b->name_off[i + 1] : b->nlen) - b->name_off[i] - 1;
}

/* The job already named id (its tag: id_tag), or -1; *slot_out is where a
 * new one goes. The probe ends: the table is kept at most half full. */
static int32_t builder_find(const builder_t *b, const char *id, size_t n, uint32_t tag,
                            size_t *slot_out)
{
    size_t h = tag & (b->scap - 1);

    for (; b->slot[h] != 0; h = (h + 1) & (b->scap - 1)) {
        size_t k = (size_t)(uint32_t)b->slot[h] - 1;

        if ((uint32_t)(b->slot[h] >> 32) == tag && id_len(b, k) == n &&
            memcmp(b->names + b->name_off[k], id, n) == 0)
            return (int32_t)k;
    }
    *slot_out = h;
    return -1;
}

/* Keep the id table at most half full with `want` ids (rehash into twice
 * the slots; the tags give the new places). */
static ms_status_t builder_rehash(builder_t *b, size_t want)
{
    size_t cap = b->scap ? b->scap : 1024, i;
    uint64_t *ns;

    while (cap < 2 * (want + 1))
        cap *= 2;
    if (cap == b->scap)
        return MS_OK;
    ns = calloc(cap, sizeof(*ns));
    if (ns == NULL)
        return MS_ENOMEM;
    ms__mem_huge(ns, cap * sizeof(*ns));
    for (i = 0; i < b->scap; i++)
        if (b->slot[i] != 0) {
            size_t h = (uint32_t)(b->slot[i] >> 32) & (cap - 1);

            while (ns[h] != 0)
                h = (h + 1) & (cap - 1);
            ns[h] = b->slot[i];
        }
    free(b->slot);
    b->slot = ns;
    b->scap = cap;
    return MS_OK;
}

/* Room for cap jobs and ncap bytes of ids (never less than there is). */
static ms_status_t builder_grow(builder_t *b, size_t cap, size_t ncap)
{
    if (cap > b->cap) {
        ms_job_t *nj = realloc(b->jobs, cap * sizeof(*nj));
        size_t *no;
        long *nl;

        if (nj == NULL)
            return MS_ENOMEM;
        b->jobs = nj;
        ms__mem_huge(nj, cap * sizeof(*nj));
        no = realloc(b->name_off, cap * sizeof(*no));
        if (no == NULL)
            return MS_ENOMEM;
        b->name_off = no;
        ms__mem_huge(no, cap * sizeof(*no));
        nl = realloc(b->line, cap * sizeof(*nl));
        if (nl == NULL)
            return MS_ENOMEM;
        b->line = nl;
        ms__mem_huge(nl, cap * sizeof(*nl));
        if (b->want_req) {
            ms_job_req_t *nr = realloc(b->req, cap * sizeof(*nr));

            if (nr == NULL)
                return MS_ENOMEM;
            b->req = nr;
        }
        b->cap = cap;
    }
    if (ncap > b->ncap) {
        char *nn = realloc(b->names, ncap);

        if (nn == NULL)
            return MS_ENOMEM;
        b->names = nn;
        b->ncap = ncap;
        ms__mem_huge(nn, ncap);
    }
    return MS_OK;
}

static ms_status_t builder_push(builder_t *b, const ms_job_t *j, const ms_job_req_t *rq,
                                const char *name, size_t namelen, long line)
{
    ms_status_t st;

    if (b->n == b->cap && (st = builder_grow(b, b->cap ? b->cap * 2 : 256, 0)) != MS_OK)
        return st;
    b->line[b->n] = line;
    if (b->nlen + namelen + 1 > b->ncap) {
        size_t cap = b->ncap ? b->ncap : 4096;

        while (cap < b->nlen + namelen + 1)
            cap *= 2;
        if ((st = builder_grow(b, 0, cap)) != MS_OK)
            return st;
    }
    b->jobs[b->n] = *j;
    if (b->want_req)
        b->req[b->n] = *rq;
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

/* Whether the jobs are sorted already (the usual trace: arrivals never go
 * back), in input order as they are read: then the sort is skipped, 6% of
 * a whole simulate of a million jobs. */
static bool in_order(const builder_t *b)
{
    size_t i;

    for (i = 1; i < b->n; i++)
        if (b->jobs[i].arrival < b->jobs[i - 1].arrival)
            return false;
    return true;
}

/* Sort by (arrival, input order) and hand the arrays to a new trace. The
 * jobs' idx must hold their input order on entry. */
static ms_status_t builder_finish(builder_t *b, const ms_geom_t *g, ms_trace_t **out)
{
    ms_trace_t *t = calloc(1, sizeof(*t));
    size_t *off = NULL, i;
    ms_job_req_t *req = NULL;

    if (t == NULL)
        return MS_ENOMEM;
    if (b->n > 0) {
        off = malloc(b->n * sizeof(*off));
        if (off == NULL) {
            free(t);
            return MS_ENOMEM;
        }
        if (!in_order(b))
            qsort(b->jobs, b->n, sizeof(*b->jobs), cmp_job);
        if (b->want_req && (req = malloc(b->n * sizeof(*req))) == NULL) {
            free(off);
            free(t);
            return MS_ENOMEM;
        }
        for (i = 0; i < b->n; i++) {
            off[i] = b->name_off[b->jobs[i].idx];
            if (req != NULL)
                req[i] = b->req[b->jobs[i].idx];
            b->jobs[i].idx = (int32_t)i;
        }
    }
    free(b->req);
    b->req = NULL;
    free(b->name_off);
    free(b->slot);
    free(b->line);
    b->name_off = NULL;   /* builder_free() may still run on failure below */
    b->slot = NULL;
    b->line = NULL;
    if (b->names == NULL) {
        b->names = calloc(1, 1);
        if (b->names == NULL) {
            free(off);
            free(req);
            free(t);
            return MS_ENOMEM;
        }
    }
    t->req = req;
    t->tenants = b->tenants;
    t->ntenants = b->ntenants;
    b->tenants = NULL;
    b->ntenants = 0;
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
    free_tenants(t->tenants, t->ntenants);
    free(t);
}

/* The tenant named v: *out 1 + its index (added if new). NULL on success,
 * else why not. */
static const char *tenant_of(builder_t *b, const char *v, uint16_t *out)
{
    size_t n = strlen(v), i;
    int k;

    if (n > 63)
        return "is longer than 63 bytes";
    for (i = 0; i < n; i++) {
        char c = v[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return "is not a tenant name (letters, digits, '.', '_' and '-')";
    }
    for (k = 0; k < b->ntenants; k++)
        if (strcmp(b->tenants[k], v) == 0) {
            *out = (uint16_t)(k + 1);
            return NULL;
        }
    if (b->ntenants >= MS_TRACE_MAX_TENANTS)
        return "is one tenant too many (a trace names at most 1000)";
    if (b->ntenants == b->captenants) {
        int cap = b->captenants ? b->captenants * 2 : 8;
        char **nv = realloc(b->tenants, (size_t)cap * sizeof(*nv));

        if (nv == NULL)
            return "cannot be stored: out of memory";
        b->tenants = nv;
        b->captenants = cap;
    }
    if ((b->tenants[b->ntenants] = malloc(n + 1)) == NULL)
        return "cannot be stored: out of memory";
    memcpy(b->tenants[b->ntenants], v, n + 1);
    *out = (uint16_t)++b->ntenants;
    return NULL;
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

/* A time field: a strict decimal number (number.h) in [0, MS_TRACE_MAX_S].
 * NULL on success, else why not. */
static const char *parse_time(const char *s, double *out)
{
    ms_status_t st = ms_number_double(s, out);

    if (st == MS_EPARSE)
        return "is not a number (write decimal digits, e.g. 12.5)";
    if (st != MS_OK || !(*out >= 0.0) || *out > MS_TRACE_MAX_S)
        return "is out of range [0, 1e9] seconds";
    return NULL;
}

/* Check a job's fields; 0 on success, else the failing column. */
static int check_job(const ms_geom_t *g, const ms_job_t *j, const char **why)
{
    if (!(j->arrival >= 0.0) || !(j->arrival <= MS_TRACE_MAX_S)) {
        *why = "arrival must be a number in [0, 1e9] seconds";
        return COL_ARR;
    }
    if (!(j->duration >= 0.0) || !(j->duration <= MS_TRACE_MAX_S)) {
        *why = "duration must be a number in [0, 1e9] seconds";
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

/* The header: find the columns. MS_OK or MS_EPARSE with diag filled. */
static ms_status_t read_header(char **fields, size_t nf, const char *name, long lineno,
                               int *col, ms_diag_t *diag)
{
    size_t i;
    int c;

    for (i = 0; i < nf; i++) {
        for (c = 0; c < NCOLS; c++) {
            if (strcasecmp(fields[i], COL_NAME[c]) != 0)
                continue;
            if (col[c] >= 0) {
                ms_diag_set(diag, name, lineno, COL_NAME[c],
                            "duplicate column '%s' in the header", COL_NAME[c]);
                return MS_EPARSE;
            }
            col[c] = (int)i;
        }
    }
    for (c = 0; c < COL_REQUIRED; c++) {
        if (col[c] < 0 && !(c == COL_PROF && col[COL_MEM] >= 0)) {
            ms_diag_set(diag, name, lineno, COL_NAME[c],
                        "header lacks the required column '%s' "
                        "(need job_id,arrival_s,profile,duration_s; mem_gb may stand for profile)",
                        COL_NAME[c]);
            return MS_EPARSE;
        }
    }
    if (col[COL_GPUS] >= 0 && col[COL_GANG] >= 0) {
        ms_diag_set(diag, name, lineno, "gang", "gpus and gang are one column: give one");
        return MS_EPARSE;
    }
    return MS_OK;
}

/* The row's optional columns beyond its size (model, isolation, priority,
 * tenant, checkpoint_s) into *rq. MS_OK or MS_EPARSE with diag filled. */
static ms_status_t read_extras(builder_t *b, char **fields, size_t nf, const int *col, const char *name,
                               long lineno, ms_job_req_t *rq, ms_diag_t *diag)
{
    const char *why;

    if (col[COL_MODEL] >= 0 && (size_t)col[COL_MODEL] < nf && fields[col[COL_MODEL]][0] != '\0' &&
        (rq->model = ms_model_find(fields[col[COL_MODEL]])) == NULL) {
        ms_diag_set(diag, name, lineno, "model", "unknown GPU model '%s'", fields[col[COL_MODEL]]);
        return MS_EPARSE;
    }
    if (col[COL_ISO] >= 0 && (size_t)col[COL_ISO] < nf && fields[col[COL_ISO]][0] != '\0') {
        if (strcmp(fields[col[COL_ISO]], "mig") == 0)
            rq->isolation = 1;
        else if (strcmp(fields[col[COL_ISO]], "any") != 0) {
            ms_diag_set(diag, name, lineno, "isolation", "'%s' is not any or mig",
                        fields[col[COL_ISO]]);
            return MS_EPARSE;
        }
    }
    if (col[COL_PRIO] >= 0 && (size_t)col[COL_PRIO] < nf && fields[col[COL_PRIO]][0] != '\0') {
        int64_t v;

        if (ms_number_int(fields[col[COL_PRIO]], -1000000, 1000000, &v) != MS_OK) {
            ms_diag_set(diag, name, lineno, "priority",
                        "'%s' is not a whole number in -1000000..1000000", fields[col[COL_PRIO]]);
            return MS_EPARSE;
        }
        rq->priority = (int32_t)v;
    }
    if (col[COL_TENANT] >= 0 && (size_t)col[COL_TENANT] < nf && fields[col[COL_TENANT]][0] != '\0' &&
        (why = tenant_of(b, fields[col[COL_TENANT]], &rq->tenant)) != NULL) {
        ms_diag_set(diag, name, lineno, "tenant", "'%.64s' %s", fields[col[COL_TENANT]], why);
        return MS_EPARSE;
    }
    if (col[COL_CKPT] >= 0 && (size_t)col[COL_CKPT] < nf && fields[col[COL_CKPT]][0] != '\0' &&
        (why = parse_time(fields[col[COL_CKPT]], &rq->checkpoint_s)) != NULL) {
        ms_diag_set(diag, name, lineno, "checkpoint_s", "'%.64s' %s", fields[col[COL_CKPT]], why);
        return MS_EPARSE;
    }
    return MS_OK;
}

/* One data row (nf fields, the header had maxf) into b. */
static ms_status_t read_row(builder_t *b, char **fields, size_t nf, size_t maxf,
                            const int *col, const ms_geom_t *g, const char *name,
                            long lineno, ms_diag_t *diag)
{
    const ms_model_t *m = ms_geom_model(g);
    ms_job_t j;
    const char *why = NULL, *id;
    size_t idlen, slot = 0;
    int32_t dup;
    uint32_t tag;
    int c, k, bad, gcol;
    ms_status_t st;
    ms_job_req_t rq;
    const char *prof, *mem;

    /* A row may leave off trailing optional fields (gpus, unknown
     * columns); a row longer than the header is an error, never cut. */
    if (nf > maxf) {
        ms_diag_set(diag, name, lineno, "", "row has %zu fields, the header only %zu", nf,
                    maxf);
        return MS_EPARSE;
    }
    for (c = 0; c < COL_REQUIRED; c++) {
        if (col[c] < 0)
            continue;   /* profile, when mem_gb stands for it */
        if ((size_t)col[c] >= nf) {
            ms_diag_set(diag, name, lineno, COL_NAME[c],
                        "row has %zu fields, the header %zu: '%s' is missing", nf, maxf,
                        COL_NAME[c]);
            return MS_EPARSE;
        }
    }
    memset(&j, 0, sizeof(j));
    id = fields[col[COL_ID]];
    idlen = strlen(id);
    if (idlen == 0) {
        ms_diag_set(diag, name, lineno, "job_id", "empty job_id");
        return MS_EPARSE;
    }
    /* the id's slot is fetched while the other fields are parsed: a
     * million ids make a table far larger than the caches */
    if (b->n < (size_t)INT32_MAX - 1 && (st = builder_rehash(b, b->n)) != MS_OK)
        return st;
    tag = id_tag(id, idlen);
    __builtin_prefetch(&b->slot[tag & (b->scap - 1)]);
    if ((why = parse_time(fields[col[COL_ARR]], &j.arrival)) != NULL) {
        ms_diag_set(diag, name, lineno, "arrival_s", "'%s' %s", fields[col[COL_ARR]], why);
        return MS_EPARSE;
    }
    if ((why = parse_time(fields[col[COL_DUR]], &j.duration)) != NULL) {
        ms_diag_set(diag, name, lineno, "duration_s", "'%s' %s", fields[col[COL_DUR]], why);
        return MS_EPARSE;
    }
    memset(&rq, 0, sizeof(rq));
    prof = col[COL_PROF] >= 0 && (size_t)col[COL_PROF] < nf ? fields[col[COL_PROF]] : "";
    mem = col[COL_MEM] >= 0 && (size_t)col[COL_MEM] < nf ? fields[col[COL_MEM]] : "";
    if ((prof[0] != '\0') == (mem[0] != '\0')) {
        ms_diag_set(diag, name, lineno, "profile", "give exactly one of profile and mem_gb");
        return MS_EPARSE;
    }
    if (mem[0] != '\0') {
        if (ms_number_double(mem, &rq.mem_gb) != MS_OK || !(rq.mem_gb > 0.0 && rq.mem_gb <= 100000.0)) {
            ms_diag_set(diag, name, lineno, "mem_gb", "'%s' is not a memory size in (0, 100000] GB",
                        mem);
            return MS_EPARSE;
        }
        /* on the trace's model: the smallest profile with that memory */
        if ((k = ms_geom_smallest_fit(g, rq.mem_gb, 1)) < 0) {
            ms_diag_set(diag, name, lineno, "mem_gb", "no %s profile has %s GB", m->name, mem);
            return MS_EPARSE;
        }
    } else if ((k = ms_geom_profile_find(g, prof)) < 0) {
        if (ms_model_profile_find(m, prof) >= 0)
            ms_diag_set(diag, name, lineno, "profile",
                        "profile '%s' of %s is not active (enable it with --profiles)", prof,
                        m->name);
        else
            ms_diag_set(diag, name, lineno, "profile", "unknown profile '%s' for %s", prof,
                        m->name);
        return MS_EPARSE;
    }
    if ((st = read_extras(b, fields, nf, col, name, lineno, &rq, diag)) != MS_OK)
        return st;
    j.prof = (int8_t)k;
    j.gang = 1;
    gcol = col[COL_GPUS] >= 0 ? col[COL_GPUS] : col[COL_GANG];
    if (gcol >= 0 && (size_t)gcol < nf && fields[gcol][0] != '\0') {
        int64_t v;

        if (ms_number_int(fields[gcol], 1, 32767, &v) != MS_OK) {
            ms_diag_set(diag, name, lineno, COL_NAME[col[COL_GPUS] >= 0 ? COL_GPUS : COL_GANG],
                        "'%s' is not a whole number of GPUs in 1..32767", fields[gcol]);
            return MS_EPARSE;
        }
        j.gang = (int16_t)v;
    }
    bad = check_job(g, &j, &why);
    if (bad >= 0) {
        ms_diag_set(diag, name, lineno, COL_NAME[bad], "%s (got '%s')", why,
                    col[bad] >= 0 && (size_t)col[bad] < nf ? fields[col[bad]] : "");
        return MS_EPARSE;
    }
    if (b->n >= (size_t)INT32_MAX - 1) {
        ms_diag_set(diag, name, lineno, NULL, "too many jobs");
        return MS_ERANGE;
    }
    dup = builder_find(b, id, idlen, tag, &slot);
    if (dup >= 0) {
        ms_diag_set(diag, name, lineno, "job_id",
                    "duplicate job_id '%s' (first on line %ld): ids must be unique", id,
                    b->line[dup]);
        return MS_EPARSE;
    }
    j.idx = (int32_t)b->n;
    if ((st = builder_push(b, &j, &rq, id, idlen, lineno)) != MS_OK)
        return st;
    b->slot[slot] = (uint64_t)tag << 32 | (uint32_t)(j.idx + 1);
    return MS_OK;
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
    int c;

    if (f == NULL || g == NULL || out == NULL)
        return MS_EINVAL;
    *out = NULL;
    if (name == NULL)
        name = "<trace>";
    memset(&b, 0, sizeof(b));
    for (c = 0; c < NCOLS; c++)
        col[c] = -1;

    /* One line per iteration; the loop ends at EOF (getline reads every
     * byte once). */
    while ((len = getline(&line, &lcap, f)) != -1) {
        char *p = line;
        size_t nf, i, n = (size_t)len;

        lineno++;
        if (lineno == 1 && n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
            p += 3;   /* a UTF-8 byte-order mark, as spreadsheets write */
            n -= 3;
        }
        if (memchr(p, '\0', n) != NULL) {
            ms_diag_set(diag, name, lineno, "", "NUL byte in the line (not a text file?)");
            st = MS_EPARSE;
            goto done;
        }
        {
            /* a comment is '#' after any leading blanks: an id can then never
             * begin with '#', and a written trace reads back the same */
            size_t k = 0;

            while (k < n && (p[k] == ' ' || p[k] == '\t'))
                k++;
            if (blank(p, n) || (k < n && p[k] == '#'))
                continue;
        }
        if (!have_header) {
            /* Size the field array from the header's comma count. */
            maxf = 1;
            for (i = 0; i < n; i++)
                maxf += p[i] == ',';
            fields = malloc(maxf * sizeof(*fields));
            if (fields == NULL) {
                st = MS_ENOMEM;
                goto done;
            }
            nf = split(p, n, fields, maxf);
            if ((st = read_header(fields, nf, name, lineno, col, diag)) != MS_OK)
                goto done;
            /* constraints are kept only when the header asks for them */
            b.want_req = col[COL_MEM] >= 0 || col[COL_MODEL] >= 0 || col[COL_ISO] >= 0 ||
                         col[COL_PRIO] >= 0 || col[COL_TENANT] >= 0 || col[COL_CKPT] >= 0;
            have_header = true;
            continue;
        }
        nf = split(p, n, fields, maxf);
        if ((st = read_row(&b, fields, nf, maxf, col, g, name, lineno, diag)) != MS_OK)
            goto done;
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
        size_t slot = 0;
        uint32_t tag;

        if (names != NULL && names[i] != NULL && names[i][0] != '\0')
            nm = names[i];
        else
            snprintf(buf, sizeof(buf), "%zu", i);
        j.idx = (int32_t)i;
        /* ids are unique in every trace, as the reader demands */
        if ((st = builder_rehash(&b, b.n)) != MS_OK)
            break;
        tag = id_tag(nm, strlen(nm));
        if (builder_find(&b, nm, strlen(nm), tag, &slot) >= 0) {
            st = MS_EINVAL;
            break;
        }
        st = builder_push(&b, &j, NULL, nm, strlen(nm), 0);
        if (st == MS_OK)
            b.slot[slot] = (uint64_t)tag << 32 | (uint32_t)(j.idx + 1);
    }
    if (st == MS_OK)
        st = builder_finish(&b, g, out);
    builder_free(&b);
    return st;
}
