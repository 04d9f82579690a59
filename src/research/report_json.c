/* report_json.c - a small JSON parser into a tree of nodes and typed
 * access with diagnostics (report_int.h), for the readers of the fill
 * experiments' JSON (report_exp_json.c). */
#include "research/report_int.h"

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

#define J_MAX_DEPTH 64

typedef struct jparser {
    const char *p, *end;
    long line;
    const char *name;
    ms_diag_t *diag;
    ms_status_t st;        /* first error */
} jparser_t;

void ms__jfree(ms__jnode_t *n)
{
    size_t i;

    for (i = 0; i < n->nkid; i++)
        ms__jfree(&n->kid[i]);
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

static bool jvalue(jparser_t *ps, ms__jnode_t *out, int depth);

/* Append a zeroed node to n's kids; NULL on ENOMEM. */
static ms__jnode_t *jadd(jparser_t *ps, ms__jnode_t *n, size_t *cap)
{
    if (n->nkid == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        ms__jnode_t *nk = realloc(n->kid, nc * sizeof(*nk));
        if (nk == NULL) {
            ps->st = MS_ENOMEM;
            return NULL;
        }
        n->kid = nk;
        *cap = nc;
    }
    memset(&n->kid[n->nkid], 0, sizeof(ms__jnode_t));
    return &n->kid[n->nkid++];
}

static bool jcontainer(jparser_t *ps, ms__jnode_t *n, int depth)
{
    bool obj = *ps->p == '{';
    char close = obj ? '}' : ']';
    size_t cap = 0;

    n->type = obj ? MS__J_OBJ : MS__J_ARR;
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
        ms__jnode_t *k = jadd(ps, n, &cap);
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

static bool jvalue(jparser_t *ps, ms__jnode_t *out, int depth)
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
        out->type = MS__J_STR;
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
                out->type = i == 2 ? MS__J_NULL : MS__J_BOOL;
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
        out->type = MS__J_NUM;
        ps->p = e;
        return true;
    }
    }
}

/* Read the whole stream and parse it. */
ms_status_t ms__jparse_file(FILE *f, const char *name, ms__jnode_t *root, ms_diag_t *diag)
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
        ms__jfree(root);
    return ps.st;
}

/* --- typed access with diagnostics -------------------------------------- */


const ms__jnode_t *ms__jget(const ms__jnode_t *o, const char *key)
{
    size_t i;

    if (o == NULL || o->type != MS__J_OBJ)
        return NULL;
    for (i = 0; i < o->nkid; i++)
        if (o->kid[i].key != NULL && strcmp(o->kid[i].key, key) == 0)
            return &o->kid[i];
    return NULL;
}

/* Record a missing/mistyped key at path prefix + key. */
void ms__jmiss(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key,
               const char *what)
{
    char path[64];

    if (c->st != MS_OK)
        return;
    snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", key);
    ms_diag_set(c->diag, c->name, o != NULL ? o->line : 0, path, "%s", what);
    c->st = MS_EPARSE;
}

/* A required member of type t (MS__J_NUM accepts null as NaN when nullable). */
const ms__jnode_t *ms__jreq(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix,
                            const char *key, ms__jtype_t t)
{
    const ms__jnode_t *v = ms__jget(o, key);

    if (v == NULL) {
        ms__jmiss(c, o, prefix, key, "missing key");
        return NULL;
    }
    if (v->type != t && !(t == MS__J_NUM && v->type == MS__J_NULL)) {
        static const char *const TN[] = { "null", "a boolean", "a number", "a string",
                                          "an array", "an object" };
        char msg[48];
        snprintf(msg, sizeof(msg), "expected %s", TN[t]);
        ms__jmiss(c, o, prefix, key, msg);
        return NULL;
    }
    return v;
}

double ms__jnum(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key)
{
    const ms__jnode_t *v = ms__jreq(c, o, prefix, key, MS__J_NUM);

    return v != NULL && v->type == MS__J_NUM ? v->num : NAN;
}

double ms__jnum_opt(const ms__jnode_t *o, const char *key)
{
    const ms__jnode_t *v = ms__jget(o, key);

    return v != NULL && v->type == MS__J_NUM ? v->num : NAN;
}

/* An optional count: 0 when absent or null; a whole number in [0, 1e15]
 * when present, else an error (never a cast of NaN or of 4e118). */
long ms__jcount_opt(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key)
{
    const ms__jnode_t *v = ms__jget(o, key);

    if (v == NULL || v->type == MS__J_NULL)
        return 0;
    if (v->type != MS__J_NUM || v->num != floor(v->num) ||
        !ms_number_fits_int(v->num, 0, 1000000000000000)) {
        ms__jmiss(c, o, prefix, key, "expected a whole number in [0, 1e15]");
        return 0;
    }
    return (long)v->num;
}

char *ms__jdup(ms__jctx_t *c, const char *s)
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
double *ms__jnums(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key,
                  size_t want, size_t *n)
{
    const ms__jnode_t *a = ms__jreq(c, o, prefix, key, MS__J_ARR);
    double *v;
    size_t i;

    *n = 0;
    if (a == NULL)
        return NULL;
    if (a->nkid == 0 || (want != 0 && a->nkid != want)) {
        char msg[64];
        snprintf(msg, sizeof(msg), "expected %zu numbers, got %zu", want, a->nkid);
        ms__jmiss(c, o, prefix, key, want != 0 ? msg : "empty array");
        return NULL;
    }
    v = malloc(a->nkid * sizeof(*v));
    if (v == NULL) {
        if (c->st == MS_OK)
            c->st = MS_ENOMEM;
        return NULL;
    }
    for (i = 0; i < a->nkid; i++) {
        if (a->kid[i].type == MS__J_NUM)
            v[i] = a->kid[i].num;
        else if (a->kid[i].type == MS__J_NULL)
            v[i] = NAN;
        else {
            char msg[48];
            snprintf(msg, sizeof(msg), "element %zu is not a number", i);
            ms__jmiss(c, o, prefix, key, msg);
            free(v);
            return NULL;
        }
    }
    *n = a->nkid;
    return v;
}

/* "default" from ".../openb_pod_list_default.csv"; the base name without
 * ".csv" otherwise. */
static char *trace_name(ms__jctx_t *c, const char *pods)
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
static const ms__jnode_t *policies(ms__jctx_t *c, const ms__jnode_t *root, size_t *n,
                                   bool allow_root)
{
    const ms__jnode_t *a = ms__jget(root, "policies");

    if (a == NULL && allow_root) {
        *n = 1;
        return root;
    }
    a = ms__jreq(c, root, "", "policies", MS__J_ARR);
    *n = a != NULL ? a->nkid : 0;
    return a != NULL ? a->kid : NULL;
}

/* What fgd-experiment and import-alibaba --fill JSON share: a root object
 * with "pods" (the pod list, and the short trace name from it or from the
 * file name), "seeds" (counted) and at least one policy (policies()).
 * Returns the policies, *n of them; c->st says whether all was there. */
const ms__jnode_t *ms__jhead(ms__jctx_t *c, const ms__jnode_t *root, bool allow_root,
                             char **pods, char **trace, size_t *nseeds, size_t *n)
{
    const ms__jnode_t *v, *pols;

    *n = 0;
    if (root->type != MS__J_OBJ) {
        ms_diag_set(c->diag, c->name, root->line, "", "expected a JSON object");
        c->st = MS_EPARSE;
        return NULL;
    }
    v = ms__jget(root, "pods");
    *pods = ms__jdup(c, v != NULL && v->type == MS__J_STR ? v->str : "");
    *trace = trace_name(c, v != NULL && v->type == MS__J_STR ? v->str : c->name);
    v = ms__jget(root, "seeds");
    *nseeds = v != NULL && v->type == MS__J_ARR ? v->nkid : 0;
    pols = policies(c, root, n, allow_root);
    if (c->st == MS_OK && *n == 0)
        ms__jmiss(c, root, "", "policies", "no policy");
    return pols;
}
