/* report_json.c - a small JSON parser and the readers of the fill
 * experiments' JSON (fgd-experiment, import-alibaba --fill); the published
 * FGD table (see report.h). */
#include "migsched/research/report.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "migsched/number.h"

/* --- the parser: a tree of nodes --------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype_t;

typedef struct jnode {
    jtype_t type;
    long line;
    double num;            /* J_NUM, J_BOOL (0/1) */
    char *str;             /* J_STR */
    char *key;             /* member name when inside an object */
    struct jnode *kid;     /* J_ARR, J_OBJ: [nkid] */
    size_t nkid;
} jnode_t;

#define J_MAX_DEPTH 64

typedef struct jparser {
    const char *p, *end;
    long line;
    const char *name;
    ms_diag_t *diag;
    ms_status_t st;        /* first error */
} jparser_t;

static void jfree(jnode_t *n)
{
    size_t i;

    for (i = 0; i < n->nkid; i++)
        jfree(&n->kid[i]);
    free(n->kid);
    free(n->str);
    free(n->key);
}

static void jerr(jparser_t *ps, const char *what)
{
    if (ps->st == MS_OK) {
        ms_diag_set(ps->diag, ps->name, ps->line, "", "malformed JSON: expected %s", what);
        ps->st = MS_EPARSE;
    }
}

static void jws(jparser_t *ps)
{
    while (ps->p < ps->end && isspace((unsigned char)*ps->p)) {
        if (*ps->p == '\n')
            ps->line++;
        ps->p++;
    }
}

/* Parse a string at ps->p (the opening quote) into a malloc'd copy. */
static char *jstring(jparser_t *ps)
{
    size_t cap = 16, k = 0;
    char *s;

    if (ps->p >= ps->end || *ps->p != '"') {
        jerr(ps, "a string");
        return NULL;
    }
    s = malloc(cap);
    if (s == NULL) {
        ps->st = MS_ENOMEM;
        return NULL;
    }
    for (ps->p++; ps->p < ps->end && *ps->p != '"'; ps->p++) {
        char c = *ps->p;
        if ((unsigned char)c < 0x20) {
            jerr(ps, "no control characters in a string");
            free(s);
            return NULL;
        }
        if (c == '\\') {
            if (++ps->p >= ps->end)
                break;
            switch (*ps->p) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case '"': case '\\': case '/': c = *ps->p; break;
            case 'u': {
                unsigned v = 0;
                int i;
                for (i = 0; i < 4; i++) {
                    char h;
                    if (++ps->p >= ps->end || !isxdigit((unsigned char)*ps->p)) {
                        jerr(ps, "four hex digits after \\u");
                        free(s);
                        return NULL;
                    }
                    h = *ps->p;
                    v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0'
                                            : tolower((unsigned char)h) - 'a' + 10);
                }
                c = v < 0x80 && v >= 0x20 ? (char)v : '?';
                break;
            }
            default:
                jerr(ps, "a valid escape");
                free(s);
                return NULL;
            }
        }
        if (k + 1 >= cap) {
            char *ns = realloc(s, cap * 2);
            if (ns == NULL) {
                free(s);
                ps->st = MS_ENOMEM;
                return NULL;
            }
            s = ns;
            cap *= 2;
        }
        s[k++] = c;
    }
    if (ps->p >= ps->end) {
        jerr(ps, "a closing quote");
        free(s);
        return NULL;
    }
    ps->p++;
    s[k] = '\0';
    return s;
}

static bool jvalue(jparser_t *ps, jnode_t *out, int depth);

/* Append a zeroed node to n's kids; NULL on ENOMEM. */
static jnode_t *jadd(jparser_t *ps, jnode_t *n, size_t *cap)
{
    if (n->nkid == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        jnode_t *nk = realloc(n->kid, nc * sizeof(*nk));
        if (nk == NULL) {
            ps->st = MS_ENOMEM;
            return NULL;
        }
        n->kid = nk;
        *cap = nc;
    }
    memset(&n->kid[n->nkid], 0, sizeof(jnode_t));
    return &n->kid[n->nkid++];
}

static bool jcontainer(jparser_t *ps, jnode_t *n, int depth)
{
    bool obj = *ps->p == '{';
    char close = obj ? '}' : ']';
    size_t cap = 0;

    n->type = obj ? J_OBJ : J_ARR;
    if (depth >= J_MAX_DEPTH) {
        jerr(ps, "less nesting");
        return false;
    }
    ps->p++;
    jws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        jnode_t *k = jadd(ps, n, &cap);
        char *key = NULL;
        if (k == NULL)
            return false;
        jws(ps);
        if (obj) {
            key = jstring(ps);
            if (key == NULL)
                return false;
            k->key = key;
            jws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                jerr(ps, "':' after a key");
                return false;
            }
            ps->p++;
        }
        if (!jvalue(ps, k, depth + 1)) {
            k->key = key;
            return false;
        }
        k->key = key;
        jws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return true;
        }
        jerr(ps, obj ? "',' or '}'" : "',' or ']'");
        return false;
    }
}

static bool jvalue(jparser_t *ps, jnode_t *out, int depth)
{
    jws(ps);
    out->line = ps->line;
    if (ps->p >= ps->end) {
        jerr(ps, "a value");
        return false;
    }
    switch (*ps->p) {
    case '{':
    case '[':
        return jcontainer(ps, out, depth);
    case '"':
        out->type = J_STR;
        out->str = jstring(ps);
        return out->str != NULL;
    case 't':
    case 'f':
    case 'n': {
        static const char *const W[] = { "true", "false", "null" };
        int i;
        for (i = 0; i < 3; i++) {
            size_t l = strlen(W[i]);
            if ((size_t)(ps->end - ps->p) >= l && strncmp(ps->p, W[i], l) == 0) {
                out->type = i == 2 ? J_NULL : J_BOOL;
                out->num = i == 0;
                ps->p += l;
                return true;
            }
        }
        jerr(ps, "a value");
        return false;
    }
    default: {
        char *e;
        if (*ps->p != '-' && !isdigit((unsigned char)*ps->p)) {
            jerr(ps, "a value");
            return false;
        }
        e = (char *)(uintptr_t)ms_csv_json_number(ps->p, ps->end, &out->num);
        if (e == NULL) {
            jerr(ps, "a finite JSON number");
            return false;
        }
        out->type = J_NUM;
        ps->p = e;
        return true;
    }
    }
}

/* Read the whole stream and parse it. */
static ms_status_t jparse_file(FILE *f, const char *name, jnode_t *root, ms_diag_t *diag)
{
    size_t n = 0;
    char *b = NULL;
    jparser_t ps;
    ms_status_t st;

    memset(root, 0, sizeof(*root));
    if ((st = ms_csv_slurp(f, &b, &n)) != MS_OK) {
        if (st == MS_ERANGE)
            ms_diag_set(diag, name, 0, "", "file too large");
        else if (st == MS_EIO)
            ms_diag_set(diag, name, 0, "", "read error");
        return st;
    }
    ps.p = b;
    ps.end = b + n;
    ps.line = 1;
    ps.name = name;
    ps.diag = diag;
    ps.st = MS_OK;
    if (jvalue(&ps, root, 0)) {
        jws(&ps);
        if (ps.p != ps.end)
            jerr(&ps, "the end of the input after the value");
    }
    free(b);
    if (ps.st != MS_OK)
        jfree(root);
    return ps.st;
}

/* --- typed access with diagnostics -------------------------------------- */

typedef struct jctx {
    const char *name;
    ms_diag_t *diag;
    ms_status_t st;
} jctx_t;

static const jnode_t *jget(const jnode_t *o, const char *key)
{
    size_t i;

    if (o == NULL || o->type != J_OBJ)
        return NULL;
    for (i = 0; i < o->nkid; i++)
        if (o->kid[i].key != NULL && strcmp(o->kid[i].key, key) == 0)
            return &o->kid[i];
    return NULL;
}

/* Record a missing/mistyped key at path prefix + key. */
static void jmiss(jctx_t *c, const jnode_t *o, const char *prefix, const char *key,
                  const char *what)
{
    char path[64];

    if (c->st != MS_OK)
        return;
    snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", key);
    ms_diag_set(c->diag, c->name, o != NULL ? o->line : 0, path, "%s", what);
    c->st = MS_EPARSE;
}

/* A required member of type t (J_NUM accepts null as NaN when nullable). */
static const jnode_t *jreq(jctx_t *c, const jnode_t *o, const char *prefix, const char *key,
                           jtype_t t)
{
    const jnode_t *v = jget(o, key);

    if (v == NULL) {
        jmiss(c, o, prefix, key, "missing key");
        return NULL;
    }
    if (v->type != t && !(t == J_NUM && v->type == J_NULL)) {
        static const char *const TN[] = { "null", "a boolean", "a number", "a string",
                                          "an array", "an object" };
        char msg[48];
        snprintf(msg, sizeof(msg), "expected %s", TN[t]);
        jmiss(c, o, prefix, key, msg);
        return NULL;
    }
    return v;
}

static double jnum(jctx_t *c, const jnode_t *o, const char *prefix, const char *key)
{
    const jnode_t *v = jreq(c, o, prefix, key, J_NUM);

    return v != NULL && v->type == J_NUM ? v->num : NAN;
}

static double jnum_opt(const jnode_t *o, const char *key)
{
    const jnode_t *v = jget(o, key);

    return v != NULL && v->type == J_NUM ? v->num : NAN;
}

/* An optional count: 0 when absent or null; a whole number in [0, 1e15]
 * when present, else an error (never a cast of NaN or of 4e118). */
static long jcount_opt(jctx_t *c, const jnode_t *o, const char *prefix, const char *key)
{
    const jnode_t *v = jget(o, key);

    if (v == NULL || v->type == J_NULL)
        return 0;
    if (v->type != J_NUM || v->num != floor(v->num) || !ms_number_fits_int(v->num, 0, 1000000000000000)) {
        jmiss(c, o, prefix, key, "expected a whole number in [0, 1e15]");
        return 0;
    }
    return (long)v->num;
}

static char *jdup(jctx_t *c, const char *s)
{
    size_t l = strlen(s);
    char *d = malloc(l + 1);

    if (d == NULL) {
        if (c->st == MS_OK)
            c->st = MS_ENOMEM;
        return NULL;
    }
    memcpy(d, s, l + 1);
    return d;
}

/* An array of numbers (null -> NaN) into a malloc'd copy; *n receives its
 * length, which must equal want if want != 0. */
static double *jnums(jctx_t *c, const jnode_t *o, const char *prefix, const char *key,
                     size_t want, size_t *n)
{
    const jnode_t *a = jreq(c, o, prefix, key, J_ARR);
    double *v;
    size_t i;

    *n = 0;
    if (a == NULL)
        return NULL;
    if (a->nkid == 0 || (want != 0 && a->nkid != want)) {
        char msg[64];
        snprintf(msg, sizeof(msg), "expected %zu numbers, got %zu", want, a->nkid);
        jmiss(c, o, prefix, key, want != 0 ? msg : "empty array");
        return NULL;
    }
    v = malloc(a->nkid * sizeof(*v));
    if (v == NULL) {
        if (c->st == MS_OK)
            c->st = MS_ENOMEM;
        return NULL;
    }
    for (i = 0; i < a->nkid; i++) {
        if (a->kid[i].type == J_NUM)
            v[i] = a->kid[i].num;
        else if (a->kid[i].type == J_NULL)
            v[i] = NAN;
        else {
            char msg[48];
            snprintf(msg, sizeof(msg), "element %zu is not a number", i);
            jmiss(c, o, prefix, key, msg);
            free(v);
            return NULL;
        }
    }
    *n = a->nkid;
    return v;
}

/* "default" from ".../openb_pod_list_default.csv"; the base name without
 * ".csv" otherwise. */
static char *trace_name(jctx_t *c, const char *pods)
{
    const char *b = strrchr(pods, '/'), *pre = "openb_pod_list_";
    size_t len;
    char *s;

    b = b != NULL ? b + 1 : pods;
    if (strncmp(b, pre, strlen(pre)) == 0 && b[strlen(pre)] != '\0')
        b += strlen(pre);
    len = strlen(b);
    if (len > 4 && strcmp(b + len - 4, ".csv") == 0)
        len -= 4;
    s = malloc(len + 1);
    if (s == NULL) {
        if (c->st == MS_OK)
            c->st = MS_ENOMEM;
        return NULL;
    }
    memcpy(s, b, len);
    s[len] = '\0';
    return s;
}

/* The policy objects: the "policies" array, or the root itself. */
static const jnode_t *policies(jctx_t *c, const jnode_t *root, size_t *n, bool allow_root)
{
    const jnode_t *a = jget(root, "policies");

    if (a == NULL && allow_root) {
        *n = 1;
        return root;
    }
    a = jreq(c, root, "", "policies", J_ARR);
    *n = a != NULL ? a->nkid : 0;
    return a != NULL ? a->kid : NULL;
}

/* What fgd-experiment and import-alibaba --fill JSON share: a root object
 * with "pods" (the pod list, and the short trace name from it or from the
 * file name), "seeds" (counted) and at least one policy (policies()).
 * Returns the policies, *n of them; c->st says whether all was there. */
static const jnode_t *jhead(jctx_t *c, const jnode_t *root, bool allow_root, char **pods,
                            char **trace, size_t *nseeds, size_t *n)
{
    const jnode_t *v, *pols;

    *n = 0;
    if (root->type != J_OBJ) {
        ms_diag_set(c->diag, c->name, root->line, "", "expected a JSON object");
        c->st = MS_EPARSE;
        return NULL;
    }
    v = jget(root, "pods");
    *pods = jdup(c, v != NULL && v->type == J_STR ? v->str : "");
    *trace = trace_name(c, v != NULL && v->type == J_STR ? v->str : c->name);
    v = jget(root, "seeds");
    *nseeds = v != NULL && v->type == J_ARR ? v->nkid : 0;
    pols = policies(c, root, n, allow_root);
    if (c->st == MS_OK && *n == 0)
        jmiss(c, root, "", "policies", "no policy");
    return pols;
}

/* --- fgd-experiment ---------------------------------------------------- */

void ms_report_fgd_free(ms_report_fgd_t *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; i < r->npol; i++) {
        free(r->pol[i].policy);
        free(r->pol[i].arrived);
        free(r->pol[i].unalloc);
        free(r->pol[i].unalloc_sd);
    }
    free(r->pol);
    free(r->trace);
    free(r->pods);
    free(r);
}

ms_status_t ms_report_read_fgd(FILE *f, const char *name, ms_report_fgd_t **out,
                               ms_diag_t *diag)
{
    jnode_t root;
    jctx_t c = { name, diag, MS_OK };
    const jnode_t *pols, *v;
    ms_report_fgd_t *r;
    size_t np = 0, i;
    ms_status_t st;

    if (f == NULL || out == NULL)
        return MS_EINVAL;
    *out = NULL;
    if ((st = jparse_file(f, name, &root, diag)) != MS_OK)
        return st;
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        jfree(&root);
        return MS_ENOMEM;
    }
    pols = jhead(&c, &root, true, &r->pods, &r->trace, &r->nseeds, &np);
    if (c.st == MS_OK) {
        r->gpus = jcount_opt(&c, &root, "", "gpus");
        r->pol = calloc(np, sizeof(*r->pol));
        if (r->pol == NULL)
            c.st = MS_ENOMEM;
        else
            r->npol = np;
        for (i = 0; c.st == MS_OK && i < np; i++) {
            const jnode_t *p = &pols[i];
            ms_report_fgd_pol_t *q = &r->pol[i];
            char pre[32];
            size_t n2 = 0, n3 = 0;

            if (pols == &root)
                pre[0] = '\0';
            else
                snprintf(pre, sizeof(pre), "policies[%zu]", i);
            v = jreq(&c, p, pre, "policy", J_STR);
            if (v == NULL)
                break;
            q->policy = jdup(&c, v->str);
            q->at100 = jnum(&c, p, pre, "unallocated_pct_at_100");
            q->at100_sd = jnum(&c, p, pre, "unallocated_pct_sd_at_100");
            q->failed_pods_mean = jnum_opt(p, "failed_pods_mean");
            q->arrived = jnums(&c, p, pre, "arrived_pct", 0, &q->n);
            if (c.st == MS_OK)
                q->unalloc = jnums(&c, p, pre, "unallocated_pct", q->n, &n2);
            if (c.st == MS_OK && jget(p, "unallocated_pct_sd") != NULL)
                q->unalloc_sd = jnums(&c, p, pre, "unallocated_pct_sd", q->n, &n3);
        }
    }
    jfree(&root);
    if (c.st != MS_OK) {
        ms_report_fgd_free(r);
        return c.st;
    }
    *out = r;
    return MS_OK;
}

/* --- import-alibaba --fill --------------------------------------------- */

void ms_report_fill_free(ms_report_fill_t *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; i < r->npol; i++) {
        free(r->pol[i].policy);
        free(r->pol[i].compute_pct);
        free(r->pol[i].gpu_pct);
        free(r->pol[i].fragcost_curve);
    }
    free(r->pol);
    free(r->trace);
    free(r->pods);
    free(r->model);
    free(r->mapping);
    free(r);
}

static ms_report_stat_t jstat(jctx_t *c, const jnode_t *o, const char *prefix, const char *key)
{
    ms_report_stat_t s = { NAN, NAN };
    const jnode_t *v = jreq(c, o, prefix, key, J_OBJ);
    char pre[96];

    if (v == NULL)
        return s;
    snprintf(pre, sizeof(pre), "%s.%s", prefix, key);
    s.mean = jnum(c, v, pre, "mean");
    s.sd = jnum(c, v, pre, "sd");
    return s;
}

/* Mean over the runs of curve[key]; every run's curve must have the same
 * length. */
static double *curve_mean(jctx_t *c, const jnode_t *runs, const char *prefix, const char *key,
                          size_t *n)
{
    double *acc = NULL;
    size_t *cnt = NULL;
    size_t r, i, len = 0;

    *n = 0;
    for (r = 0; c->st == MS_OK && r < runs->nkid; r++) {
        char pre[96];
        const jnode_t *cv;
        double *v;
        size_t m;

        snprintf(pre, sizeof(pre), "%s.runs[%zu]", prefix, r);
        cv = jreq(c, &runs->kid[r], pre, "curve", J_OBJ);
        if (cv == NULL)
            break;
        snprintf(pre, sizeof(pre), "%s.runs[%zu].curve", prefix, r);
        v = jnums(c, cv, pre, key, len, &m);
        if (v == NULL)
            break;
        if (acc == NULL) {
            len = m;
            acc = calloc(len, sizeof(*acc));
            cnt = calloc(len, sizeof(*cnt));
            if (acc == NULL || cnt == NULL) {
                free(v);
                c->st = MS_ENOMEM;
                break;
            }
        }
        for (i = 0; i < len; i++)
            if (isfinite(v[i])) {
                acc[i] += v[i];
                cnt[i]++;
            }
        free(v);
    }
    if (c->st != MS_OK || acc == NULL) {
        free(acc);
        free(cnt);
        return NULL;
    }
    for (i = 0; i < len; i++)
        acc[i] = cnt[i] > 0 ? acc[i] / (double)cnt[i] : NAN;
    free(cnt);
    *n = len;
    return acc;
}

ms_status_t ms_report_read_fill(FILE *f, const char *name, ms_report_fill_t **out,
                                ms_diag_t *diag)
{
    jnode_t root;
    jctx_t c = { name, diag, MS_OK };
    const jnode_t *pols, *v;
    ms_report_fill_t *r;
    size_t np = 0, i;
    ms_status_t st;

    if (f == NULL || out == NULL)
        return MS_EINVAL;
    *out = NULL;
    if ((st = jparse_file(f, name, &root, diag)) != MS_OK)
        return st;
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        jfree(&root);
        return MS_ENOMEM;
    }
    pols = jhead(&c, &root, false, &r->pods, &r->trace, &r->nseeds, &np);
    if (c.st == MS_OK) {
        v = jget(&root, "model");
        r->model = jdup(&c, v != NULL && v->type == J_STR ? v->str : "");
        v = jget(&root, "mapping");
        r->mapping = jdup(&c, v != NULL && v->type == J_STR ? v->str : "");
        r->ngpus = jcount_opt(&c, &root, "", "ngpus");
        if (c.st == MS_OK) {
            r->pol = calloc(np, sizeof(*r->pol));
            if (r->pol == NULL)
                c.st = MS_ENOMEM;
            else
                r->npol = np;
        }
        for (i = 0; c.st == MS_OK && i < np; i++) {
            const jnode_t *p = &pols[i], *a, *runs;
            ms_report_fill_pol_t *q = &r->pol[i];
            char pre[32], pre2[48];
            size_t n2 = 0, n3 = 0;

            snprintf(pre, sizeof(pre), "policies[%zu]", i);
            v = jreq(&c, p, pre, "policy", J_STR);
            if (v == NULL)
                break;
            q->policy = jdup(&c, v->str);
            a = jreq(&c, p, pre, "at_100", J_OBJ);
            if (a == NULL)
                break;
            snprintf(pre2, sizeof(pre2), "%s.at_100", pre);
            q->compute = jstat(&c, a, pre2, "unalloc_compute_pct");
            q->mem = jstat(&c, a, pre2, "unalloc_mem_pct");
            q->gpu = jstat(&c, a, pre2, "unalloc_gpu_pct");
            q->fragcost = jstat(&c, a, pre2, "fragcost");
            q->failed = jstat(&c, a, pre2, "failed_pods_pct");
            runs = jreq(&c, p, pre, "runs", J_ARR);
            if (runs == NULL)
                break;
            if (runs->nkid == 0) {
                jmiss(&c, p, pre, "runs", "no run");
                break;
            }
            q->compute_pct = curve_mean(&c, runs, pre, "unalloc_compute_pct", &q->n);
            if (c.st == MS_OK)
                q->gpu_pct = curve_mean(&c, runs, pre, "unalloc_gpu_pct", &n2);
            if (c.st == MS_OK)
                q->fragcost_curve = curve_mean(&c, runs, pre, "fragcost", &n3);
            if (c.st == MS_OK && (n2 != q->n || n3 != q->n)) {
                jmiss(&c, p, pre, "runs", "curves of different lengths");
            }
        }
    }
    jfree(&root);
    if (c.st != MS_OK) {
        ms_report_fill_free(r);
        return c.st;
    }
    *out = r;
    return MS_OK;
}

/* --- the published FGD numbers ----------------------------------------- */

/* Unallocated GPU % at 100 % arrived, mean of 10 seeds, from Weng et al.,
 * "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
 * Fragmentation Gradient Descent", USENIX ATC '23, Figs. 9, 11-14, as
 * reconstructed from the authors' cached expected_results in
 * shared/reference/fgd.md §2 (the table "Unallocated GPU % at arrived =
 * 100%"). Columns: Random, DotProd, Clustering, Packing, BestFit, FGD. */
static const char *const PUB_POLICY[6] = { "random", "dot-product", "clustering", "packing",
                                           "best-fit", "fgd" };
static const struct { const char *trace; double v[6]; } PUB[] = {
    { "default",     { 13.70,  9.38,  8.35,  8.22,  7.14,  4.77 } },
    { "cpu050",      { 10.98,  6.97,  6.48,  6.54,  6.44,  5.00 } },
    { "cpu200",      { 16.97, 12.55, 10.33, 10.02,  7.85,  5.18 } },
    { "cpu250",      { 20.00, 16.43, 12.25, 11.95,  8.79,  6.80 } },
    { "gpushare60",  { 17.19, 13.18, 13.10, 12.85, 10.94,  8.75 } },
    { "gpushare100", { 21.10, 18.02, 17.78, 17.87, 15.38, 13.36 } },
    { "multigpu20",  { 13.08,  8.15,  6.66,  6.50,  6.27,  4.47 } },
    { "multigpu40",  { 14.62,  5.96,  4.65,  4.41,  4.90,  3.09 } },
    { "multigpu50",  { 18.72,  5.27,  4.31,  3.94,  4.38,  2.91 } },
    { "gpuspec10",   { 13.74,  9.83,  8.04,  7.76,  6.90,  5.34 } },
    { "gpuspec25",   { 14.58, 14.56, 13.59, 13.23, 14.33,  6.09 } },
    { "gpuspec33",   { 16.13, 20.18, 18.91, 17.78, 19.61, 12.16 } },
};
/* Same source: the seed-to-seed population sd at 100 %, default trace. */
static const double PUB_SD_DEFAULT[6] = { 0.31, 0.18, 0.58, 0.50, 0.14, 0.10 };

bool ms_report_fgd_published(const char *trace, const char *policy, double *v, double *sd)
{
    size_t i;
    int k;

    if (sd != NULL)
        *sd = NAN;
    if (trace == NULL || policy == NULL)
        return false;
    for (k = 0; k < 6; k++)
        if (strcmp(policy, PUB_POLICY[k]) == 0)
            break;
    if (k == 6)
        return false;
    for (i = 0; i < sizeof(PUB) / sizeof(PUB[0]); i++)
        if (strcmp(trace, PUB[i].trace) == 0) {
            if (v != NULL)
                *v = PUB[i].v[k];
            if (sd != NULL && i == 0)
                *sd = PUB_SD_DEFAULT[k];
            return true;
        }
    return false;
}
