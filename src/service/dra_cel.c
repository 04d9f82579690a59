/* dra_cel.c - the subset of CEL that device selectors use (any thread;
 * pure).
 *
 * What real DeviceClasses and ResourceClaims write (NVIDIA's classes and
 * examples, the Kubernetes docs):
 *   device.driver == 'gpu.nvidia.com'
 *   device.attributes['gpu.nvidia.com'].type == 'mig'
 *   device.attributes['gpu.nvidia.com'].profile == '1g.5gb'
 *   device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity("10Gi"))
 *   device.capacity['gpu.nvidia.com'].memory.compareTo(quantity("10Gi")) >= 0
 *   has(device.attributes['gpu.nvidia.com'].profile)
 * joined by && || ! and parentheses; comparisons == != < <= > >= between
 * an attribute and a string, integer or boolean literal (or two of them).
 * Anything else (macros, lists, other functions, semver()) fails to
 * compile with the position named, so the claim is refused with an event
 * instead of being guessed at. Evaluation follows CEL: a missing key or a
 * type mismatch is an error, which matches no device.
 *
 * The tree is an array of nodes (at most MAX_NODES); recursion in the
 * parser is bounded by MAX_DEPTH, so no input can exhaust the stack.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

#define MAX_NODES 512
#define MAX_DEPTH 48

enum {
    N_OR = 1, N_AND, N_NOT, N_CMP, N_OPERAND,   /* boolean nodes */
    O_DRIVER, O_ATTR, O_CAP, O_STR, O_INT, O_BOOL, O_HAS, O_QMETHOD, O_SUB
};
enum { C_EQ = 1, C_NE, C_LT, C_LE, C_GT, C_GE };
enum { Q_GT = 1, Q_LT, Q_CMP };

typedef struct node {
    int t;
    int a, b;                      /* children (node indices), -1 none */
    int op;                        /* C_* or Q_* */
    char *s;                       /* O_ATTR/O_CAP: the qualified key; O_STR: the literal */
    long long i;
    double q;                      /* O_QMETHOD: the quantity argument */
} node_t;

struct dra_cel {
    node_t *n;
    int nn;
    int root;
    char **drivers;                /* strings named as drivers or domains */
    int ndrivers;
};

/* --- tokens ----------------------------------------------------------------- */

enum { T_END = 0, T_ID, T_STR, T_INT, T_P };   /* T_P: punctuation, in tok.p */

typedef struct parser {
    const char *src, *p;
    int tt;                        /* current token */
    char tok[256];                 /* T_ID, T_STR text; T_P the punctuation */
    long long ival;
    const char *tstart;
    dra_cel_t *c;
    int depth;
    char *why;
    size_t whylen;
    bool failed;
} parser_t;

static int fail(parser_t *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser_t *P, const char *fmt, ...)
{
    char msg[160];
    va_list ap;

    if (!P->failed) {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(P->why, P->whylen, "CEL expression \"%.120s%s\": at character %d: %s", P->src,
                 strlen(P->src) > 120 ? "..." : "", (int)(P->tstart - P->src) + 1, msg);
        P->failed = true;
    }
    return -1;
}

static void next(parser_t *P)
{
    const char *p = P->p;
    size_t n = 0;

    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    P->tstart = p;
    P->tok[0] = '\0';
    if (*p == '\0') {
        P->tt = T_END;
    } else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') {
            if (n + 1 < sizeof(P->tok))
                P->tok[n++] = *p;
            p++;
        }
        P->tok[n] = '\0';
        P->tt = n + 1 < sizeof(P->tok) ? T_ID : T_END;
        if (P->tt == T_END)
            fail(P, "an identifier longer than %d characters", (int)sizeof(P->tok) - 2);
    } else if (*p == '\'' || *p == '"') {
        char q = *p++;

        while (*p != q && *p != '\0' && *p != '\\' && n + 1 < sizeof(P->tok))
            P->tok[n++] = *p++;
        P->tok[n] = '\0';
        if (*p != q) {
            P->tt = T_END;
            fail(P, *p == '\\' ? "escapes in strings are not supported" : "an unterminated or overlong string");
        } else {
            p++;
            P->tt = T_STR;
        }
    } else if (*p >= '0' && *p <= '9') {
        char *end;

        errno = 0;
        P->ival = strtoll(p, &end, 10);
        if (errno != 0 || end == p || (*end >= 'a' && *end <= 'z') || *end == '.') {
            P->tt = T_END;
            fail(P, "only decimal integers are supported");
        } else {
            P->tt = T_INT;
            p = end;
        }
    } else {
        static const char *const two[] = { "==", "!=", "<=", ">=", "&&", "||", NULL };
        int k;

        P->tt = T_P;
        for (k = 0; two[k] != NULL; k++)
            if (p[0] == two[k][0] && p[1] == two[k][1]) {
                memcpy(P->tok, two[k], 3);
                p += 2;
                break;
            }
        if (two[k] == NULL) {
            if (strchr("()[].,<>!", *p) == NULL) {
                P->tt = T_END;
                fail(P, "unexpected '%c'", *p);
            } else {
                P->tok[0] = *p++;
                P->tok[1] = '\0';
            }
        }
    }
    P->p = p;
}

static bool is_p(const parser_t *P, const char *s)
{
    return P->tt == T_P && strcmp(P->tok, s) == 0;
}

static int expect_p(parser_t *P, const char *s)
{
    if (!is_p(P, s))
        return fail(P, "expected '%s'", s);
    next(P);
    return 0;
}

static int add(parser_t *P, int t, int a, int b)
{
    dra_cel_t *c = P->c;
    node_t *n;

    if (c->nn >= MAX_NODES)
        return fail(P, "more than %d terms", MAX_NODES);
    if (c->nn % 32 == 0) {
        node_t *v = realloc(c->n, (size_t)(c->nn + 32) * sizeof(*v));

        if (v == NULL)
            return fail(P, "out of memory");
        c->n = v;
    }
    n = &c->n[c->nn];
    memset(n, 0, sizeof(*n));
    n->t = t;
    n->a = a;
    n->b = b;
    return c->nn++;
}

static int note_driver(parser_t *P, const char *s)
{
    dra_cel_t *c = P->c;
    char **v;
    int i;

    for (i = 0; i < c->ndrivers; i++)
        if (strcmp(c->drivers[i], s) == 0)
            return 0;
    if (c->ndrivers >= 16)
        return 0;
    if ((v = realloc(c->drivers, (size_t)(c->ndrivers + 1) * sizeof(*v))) == NULL)
        return fail(P, "out of memory");
    c->drivers = v;
    if ((c->drivers[c->ndrivers] = strdup(s)) == NULL)
        return fail(P, "out of memory");
    c->ndrivers++;
    return 0;
}

/* --- grammar ------------------------------------------------------------------ */

static int p_or(parser_t *P);

/* device.attributes['D'].name or device.capacity['D'].name: the node. */
static int p_ref(parser_t *P)
{
    char dom[256], key[DRA_NAME_MAX + 2];
    bool cap;
    int k;

    next(P);                                     /* device */
    if (expect_p(P, ".") != 0)
        return -1;
    if (P->tt != T_ID)
        return fail(P, "expected driver, attributes or capacity after device.");
    if (strcmp(P->tok, "driver") == 0) {
        next(P);
        return add(P, O_DRIVER, -1, -1);
    }
    if (strcmp(P->tok, "attributes") != 0 && strcmp(P->tok, "capacity") != 0)
        return fail(P, "device.%s is not supported (driver, attributes, capacity)", P->tok);
    cap = P->tok[0] == 'c';
    next(P);
    if (expect_p(P, "[") != 0)
        return -1;
    if (P->tt != T_STR)
        return fail(P, "expected a quoted domain");
    snprintf(dom, sizeof(dom), "%s", P->tok);
    next(P);
    if (expect_p(P, "]") != 0 || expect_p(P, ".") != 0)
        return -1;
    if (P->tt != T_ID)
        return fail(P, "expected an attribute name");
    if ((size_t)snprintf(key, sizeof(key), "%s/%s", dom, P->tok) >= sizeof(key))
        return fail(P, "an attribute name longer than %d characters", DRA_NAME_MAX);
    next(P);
    if (note_driver(P, dom) != 0 || (k = add(P, cap ? O_CAP : O_ATTR, -1, -1)) < 0)
        return -1;
    if ((P->c->n[k].s = strdup(key)) == NULL)
        return fail(P, "out of memory");
    return k;
}

/* .isGreaterThan(quantity("X")), .isLessThan(...), .compareTo(...) */
static int p_qmethod(parser_t *P, int ref)
{
    int op, k;
    double q;

    next(P);                                     /* . */
    if (P->tt != T_ID)
        return fail(P, "expected a method name");
    op = strcmp(P->tok, "isGreaterThan") == 0 ? Q_GT : strcmp(P->tok, "isLessThan") == 0 ? Q_LT
         : strcmp(P->tok, "compareTo") == 0     ? Q_CMP : 0;
    if (op == 0)
        return fail(P, "method %s is not supported (isGreaterThan, isLessThan, compareTo)", P->tok);
    next(P);
    if (expect_p(P, "(") != 0)
        return -1;
    if (P->tt != T_ID || strcmp(P->tok, "quantity") != 0)
        return fail(P, "expected quantity(\"...\")");
    next(P);
    if (expect_p(P, "(") != 0)
        return -1;
    if (P->tt != T_STR || dra_qty_parse(P->tok, &q) != 0)
        return fail(P, "expected a quoted quantity such as \"10Gi\"");
    next(P);
    if (expect_p(P, ")") != 0 || expect_p(P, ")") != 0 || (k = add(P, O_QMETHOD, ref, -1)) < 0)
        return -1;
    P->c->n[k].op = op;
    P->c->n[k].q = q;
    return k;
}

static int p_operand(parser_t *P)
{
    int k;

    if (is_p(P, "(")) {
        next(P);
        if (++P->depth > MAX_DEPTH)
            return fail(P, "nested more than %d deep", MAX_DEPTH);
        k = p_or(P);
        P->depth--;
        if (k < 0 || expect_p(P, ")") != 0)
            return -1;
        return add(P, O_SUB, k, -1);
    }
    if (P->tt == T_STR) {
        if ((k = add(P, O_STR, -1, -1)) < 0 || (P->c->n[k].s = strdup(P->tok)) == NULL)
            return k < 0 ? -1 : fail(P, "out of memory");
        next(P);
        return k;
    }
    if (P->tt == T_INT) {
        if ((k = add(P, O_INT, -1, -1)) < 0)
            return -1;
        P->c->n[k].i = P->ival;
        next(P);
        return k;
    }
    if (P->tt == T_ID && (strcmp(P->tok, "true") == 0 || strcmp(P->tok, "false") == 0)) {
        if ((k = add(P, O_BOOL, -1, -1)) < 0)
            return -1;
        P->c->n[k].i = P->tok[0] == 't';
        next(P);
        return k;
    }
    if (P->tt == T_ID && strcmp(P->tok, "has") == 0) {
        next(P);
        if (expect_p(P, "(") != 0)
            return -1;
        if (P->tt != T_ID || strcmp(P->tok, "device") != 0)
            return fail(P, "has() takes device.attributes[...].x or device.capacity[...].x");
        if ((k = p_ref(P)) < 0 || expect_p(P, ")") != 0)
            return -1;
        if (P->c->n[k].t == O_DRIVER)
            return fail(P, "has(device.driver) is not supported");
        return add(P, O_HAS, k, -1);
    }
    if (P->tt == T_ID && strcmp(P->tok, "device") == 0) {
        if ((k = p_ref(P)) < 0)
            return -1;
        if (is_p(P, ".")) {
            if (P->c->n[k].t != O_CAP)
                return fail(P, "methods are supported on capacities only");
            return p_qmethod(P, k);
        }
        return k;
    }
    if (P->tt == T_END)
        return fail(P, "the expression ends too early");
    return fail(P, "'%s' is not supported", P->tok);
}

static int p_cmp(parser_t *P)
{
    static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
    int a = p_operand(P), b, k, op = 0;

    if (a < 0)
        return -1;
    if (P->tt == T_P)
        for (k = 0; k < 6; k++)
            if (strcmp(P->tok, ops[k]) == 0)
                op = k + 1;
    if (op == 0)
        return add(P, N_OPERAND, a, -1);
    next(P);
    if ((b = p_operand(P)) < 0 || (k = add(P, N_CMP, a, b)) < 0)
        return -1;
    P->c->n[k].op = op;
    if (P->c->n[a].t == O_DRIVER && P->c->n[b].t == O_STR && note_driver(P, P->c->n[b].s) != 0)
        return -1;
    if (P->c->n[b].t == O_DRIVER && P->c->n[a].t == O_STR && note_driver(P, P->c->n[a].s) != 0)
        return -1;
    return k;
}

static int p_unary(parser_t *P)
{
    int a;

    if (is_p(P, "!")) {
        next(P);
        if (++P->depth > MAX_DEPTH)
            return fail(P, "nested more than %d deep", MAX_DEPTH);
        a = p_unary(P);
        P->depth--;
        return a < 0 ? -1 : add(P, N_NOT, a, -1);
    }
    return p_cmp(P);
}

static int p_and(parser_t *P)
{
    int a = p_unary(P), b;

    while (a >= 0 && is_p(P, "&&")) {
        next(P);
        if ((b = p_unary(P)) < 0)
            return -1;
        a = add(P, N_AND, a, b);
    }
    return a;
}

static int p_or(parser_t *P)
{
    int a = p_and(P), b;

    while (a >= 0 && is_p(P, "||")) {
        next(P);
        if ((b = p_and(P)) < 0)
            return -1;
        a = add(P, N_OR, a, b);
    }
    return a;
}

int dra_cel_compile(const char *expr, dra_cel_t **out, char *why, size_t whylen)
{
    parser_t P;

    *out = NULL;
    memset(&P, 0, sizeof(P));
    P.src = P.p = P.tstart = expr;
    P.why = why;
    P.whylen = whylen;
    if (strlen(expr) > DRA_CEL_MAX) {
        snprintf(why, whylen, "CEL expression longer than %d characters", DRA_CEL_MAX);
        return -1;
    }
    if ((P.c = calloc(1, sizeof(*P.c))) == NULL) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    next(&P);
    P.c->root = P.failed ? -1 : p_or(&P);
    if (P.c->root >= 0 && P.tt != T_END)
        fail(&P, "unexpected '%s' after a complete expression", P.tok);
    if (P.failed || P.c->root < 0) {
        dra_cel_free(P.c);
        return -1;
    }
    *out = P.c;
    return 0;
}

void dra_cel_free(dra_cel_t *c)
{
    int i;

    if (c == NULL)
        return;
    for (i = 0; i < c->nn; i++)
        free(c->n[i].s);
    free(c->n);
    for (i = 0; i < c->ndrivers; i++)
        free(c->drivers[i]);
    free(c->drivers);
    free(c);
}

bool dra_cel_names_driver(const dra_cel_t *c, const char *drv)
{
    int i;

    for (i = 0; c != NULL && i < c->ndrivers; i++)
        if (strcmp(c->drivers[i], drv) == 0)
            return true;
    return false;
}

/* --- evaluation ------------------------------------------------------------------ */

typedef struct ev {
    const dra_cel_t *c;
    const dra_devview_t *d;
    char *why;
    size_t whylen;
} ev_t;

static int eval_bool(ev_t *E, int k, int depth);

static int err(ev_t *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int err(ev_t *E, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(E->why, E->whylen, fmt, ap);
    va_end(ap);
    return DRA_CEL_ERR;
}

/* An operand's value into *v (strings borrowed): 0, or ERR. */
static int eval_val(ev_t *E, int k, dra_val_t *v, int depth)
{
    const node_t *n = &E->c->n[k];
    const dra_val_t *got;
    int r;

    memset(v, 0, sizeof(*v));
    switch (n->t) {
    case O_DRIVER:
        v->kind = DRA_V_STR;
        v->s = (char *)(uintptr_t)E->d->driver;
        return 0;
    case O_STR:
        v->kind = DRA_V_STR;
        v->s = n->s;
        return 0;
    case O_INT:
        v->kind = DRA_V_INT;
        v->i = n->i;
        return 0;
    case O_BOOL:
        v->kind = DRA_V_BOOL;
        v->b = n->i != 0;
        return 0;
    case O_ATTR:
    case O_CAP:
        got = n->t == O_ATTR ? dra_kv_get(E->d->attrs, E->d->nattrs, n->s) : dra_kv_get(E->d->caps, E->d->ncaps, n->s);
        if (got == NULL)
            return err(E, "no such key: %s", n->s);
        *v = *got;
        return 0;
    case O_HAS:
        v->kind = DRA_V_BOOL;
        v->b = (E->c->n[n->a].t == O_ATTR ? dra_kv_get(E->d->attrs, E->d->nattrs, E->c->n[n->a].s)
                                           : dra_kv_get(E->d->caps, E->d->ncaps, E->c->n[n->a].s)) != NULL;
        return 0;
    case O_QMETHOD:
        if ((r = eval_val(E, n->a, v, depth + 1)) != 0)
            return r;
        if (v->kind != DRA_V_QTY)
            return err(E, "%s is not a quantity", E->c->n[n->a].s);
        if (n->op == Q_CMP) {
            v->kind = DRA_V_INT;
            v->i = v->q > n->q ? 1 : v->q < n->q ? -1 : 0;
        } else {
            v->kind = DRA_V_BOOL;
            v->b = n->op == Q_GT ? v->q > n->q : v->q < n->q;
        }
        return 0;
    case O_SUB:
        if ((r = eval_bool(E, n->a, depth + 1)) == DRA_CEL_ERR)
            return r;
        v->kind = DRA_V_BOOL;
        v->b = r == DRA_CEL_TRUE;
        return 0;
    default:
        return err(E, "internal: not an operand");
    }
}

static int compare(ev_t *E, int op, const dra_val_t *a, const dra_val_t *b)
{
    int c;

    if (a->kind != b->kind)
        return err(E, "no such overload: comparing values of different types");
    switch (a->kind) {
    case DRA_V_STR:
    case DRA_V_VER:
        c = strcmp(a->s, b->s);
        if (a->kind == DRA_V_VER && op != C_EQ && op != C_NE)
            return err(E, "versions compare with semver methods, which are not supported");
        break;
    case DRA_V_INT:
        c = a->i > b->i ? 1 : a->i < b->i ? -1 : 0;
        break;
    case DRA_V_BOOL:
        if (op != C_EQ && op != C_NE)
            return err(E, "booleans have no order");
        c = a->b == b->b ? 0 : 1;
        break;
    default:
        return err(E, "quantities compare with isGreaterThan, isLessThan or compareTo");
    }
    switch (op) {
    case C_EQ: return c == 0;
    case C_NE: return c != 0;
    case C_LT: return c < 0;
    case C_LE: return c <= 0;
    case C_GT: return c > 0;
    default: return c >= 0;
    }
}

static int eval_bool(ev_t *E, int k, int depth)
{
    const node_t *n = &E->c->n[k];
    dra_val_t a, b;
    int x, y;

    if (depth > 4 * MAX_DEPTH + MAX_NODES)
        return err(E, "internal: too deep");
    switch (n->t) {
    case N_OR:
    case N_AND:
        /* CEL's commutative && and ||: an error on one side is absorbed when
         * the other side decides */
        x = eval_bool(E, n->a, depth + 1);
        if ((n->t == N_OR && x == DRA_CEL_TRUE) || (n->t == N_AND && x == DRA_CEL_FALSE))
            return x;
        y = eval_bool(E, n->b, depth + 1);
        if ((n->t == N_OR && y == DRA_CEL_TRUE) || (n->t == N_AND && y == DRA_CEL_FALSE))
            return y;
        return x == DRA_CEL_ERR || y == DRA_CEL_ERR ? DRA_CEL_ERR : x;
    case N_NOT:
        x = eval_bool(E, n->a, depth + 1);
        return x == DRA_CEL_ERR ? x : !x;
    case N_CMP:
        if (eval_val(E, n->a, &a, depth + 1) != 0 || eval_val(E, n->b, &b, depth + 1) != 0)
            return DRA_CEL_ERR;
        return compare(E, n->op, &a, &b);
    case N_OPERAND:
        if (eval_val(E, n->a, &a, depth + 1) != 0)
            return DRA_CEL_ERR;
        if (a.kind != DRA_V_BOOL)
            return err(E, "the expression is not a boolean");
        return a.b ? DRA_CEL_TRUE : DRA_CEL_FALSE;
    default:
        return err(E, "internal: not a boolean");
    }
}

int dra_cel_eval(const dra_cel_t *c, const dra_devview_t *d, char *why, size_t whylen)
{
    ev_t E = { c, d, why, whylen };

    if (whylen > 0)
        why[0] = '\0';
    return eval_bool(&E, c->root, 0);
}
