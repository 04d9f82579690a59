/* advise_read.c - the advisor's inputs: utilisation CSV, DCGM exporter
 * text, and the trace's latency_sensitive/service columns. */
#include "advise/advise_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "migsched/number.h"

static int cmp_node(const void *x, const void *y)
{
    return strcmp(((const struct ms__adv_name *)x)->name, ((const struct ms__adv_name *)y)->name);
}

ms_status_t ms_advise_create(const ms_node_spec_t *nodes, int nnodes, ms_advise_t **out)
{
    ms_advise_t *a;
    int i;

    *out = NULL;
    if (nodes == NULL || nnodes <= 0)
        return MS_EINVAL;
    if ((a = calloc(1, sizeof(*a))) == NULL)
        return MS_ENOMEM;
    a->nodes = nodes;
    a->nnodes = nnodes;
    if ((a->acc = calloc((size_t)nnodes, sizeof(*a->acc))) == NULL ||
        (a->by_name = malloc((size_t)nnodes * sizeof(*a->by_name))) == NULL) {
        ms_advise_destroy(a);
        return MS_ENOMEM;
    }
    for (i = 0; i < nnodes; i++) {
        a->by_name[i].name = nodes[i].name;
        a->by_name[i].idx = i;
    }
    qsort(a->by_name, (size_t)nnodes, sizeof(a->by_name[0]), cmp_node);
    *out = a;
    return MS_OK;
}

void ms_advise_destroy(ms_advise_t *a)
{
    int i;

    if (a == NULL)
        return;
    for (i = 0; i < a->nsvc; i++)
        free(a->svc_name[i]);
    free(a->svc_name);
    free(a->latency);
    free(a->svc);
    free(a->acc);
    free(a->by_name);
    free(a);
}

int ms__adv_node_find(const ms_advise_t *a, const char *s, size_t len)
{
    int lo = 0, hi = a->nnodes - 1;

    while (lo <= hi) {
        int mid = (lo + hi) / 2, c;
        const char *nm = a->by_name[mid].name;
        c = strncmp(nm, s, len);
        if (c == 0 && nm[len] != '\0')
            c = 1;
        if (c == 0)
            return a->by_name[mid].idx;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void ms__adv_add(ms_advise_t *a, int node, double util, double mem_gb)
{
    a->acc[node].sum += util;
    a->acc[node].n++;
    if (mem_gb > a->acc[node].max_mem)
        a->acc[node].max_mem = mem_gb;
}

long ms_advise_nsamples(const ms_advise_t *a)
{
    long n = 0;
    int i;

    for (i = 0; i < a->nnodes; i++)
        n += a->acc[i].n;
    return n;
}

/* A sample's checks, shared by both readers. */
static ms_status_t check_sample(ms_advise_t *a, const char *name, long line, const char *node,
                                size_t nlen, double gpu, double util, double mem, int *ni,
                                ms_diag_t *d)
{
    const ms_node_spec_t *n;

    if ((*ni = ms__adv_node_find(a, node, nlen)) < 0) {
        ms_diag_set(d, name, line, "node", "'%.*s' is not a node of the cluster", (int)(nlen > 64 ? 64 : nlen),
                    node);
        return MS_EINVAL;
    }
    n = &a->nodes[*ni];
    if (!ms_number_fits_int(gpu, 0, n->ngpus - 1) || gpu != floor(gpu)) {
        ms_diag_set(d, name, line, "gpu", "%g is not a GPU of node %s (0..%d)", gpu, n->name,
                    n->ngpus - 1);
        return MS_ERANGE;
    }
    if (!(util >= 0 && util <= 100)) {
        ms_diag_set(d, name, line, "util", "%g is not a percentage in [0, 100]", util);
        return MS_ERANGE;
    }
    if (!(mem >= 0 && mem <= ms_geom_model(n->geom)->mem_gb * 1.05)) {
        ms_diag_set(d, name, line, "mem_used_gb", "%g GB is outside [0, %u] (a %s GPU)", mem,
                    (unsigned)ms_geom_model(n->geom)->mem_gb, ms_geom_model(n->geom)->name);
        return MS_ERANGE;
    }
    return MS_OK;
}

static ms_status_t num(const ms_csv_t *c, int col, const char *field, double *out, ms_diag_t *d)
{
    const char *s;
    ms_status_t st;

    if ((st = ms_csv_str(c, col, field, &s, d)) != MS_OK)
        return st;
    if (ms_number_double(s, out) != MS_OK) {
        ms_diag_set(d, c->name, c->line, field, "'%.40s' is not a number", s);
        return MS_EPARSE;
    }
    return MS_OK;
}

ms_status_t ms_advise_read_util_csv(ms_advise_t *a, FILE *f, const char *name, ms_diag_t *d)
{
    ms_csv_t c;
    ms_status_t st;
    int ct, cn, cg, cu, cm, r;

    ms_csv_open(&c, f, name);
    if ((st = ms_csv_header(&c, "empty file; expected the header time,node,gpu,util", d)) != MS_OK)
        goto out;
    ct = ms_csv_col(&c, "time");
    cn = ms_csv_col(&c, "node");
    cg = ms_csv_col(&c, "gpu");
    cu = ms_csv_col(&c, "util");
    cm = ms_csv_col(&c, "mem_used_gb");
    if (ct < 0 || cn < 0 || cg < 0 || cu < 0) {
        ms_diag_set(d, name, 1, ct < 0 ? "time" : cn < 0 ? "node" : cg < 0 ? "gpu" : "util",
                    "missing column; the header needs time,node,gpu,util[,mem_used_gb]");
        st = MS_EPARSE;
        goto out;
    }
    while ((r = ms_csv_next(&c, d)) > 0) {
        double t, gpu, util, mem = 0;
        const char *node;
        int ni;

        if ((st = num(&c, ct, "time", &t, d)) != MS_OK || (st = ms_csv_str(&c, cn, "node", &node, d)) != MS_OK ||
            (st = num(&c, cg, "gpu", &gpu, d)) != MS_OK || (st = num(&c, cu, "util", &util, d)) != MS_OK)
            goto out;
        if (cm >= 0 && cm < c.nf && c.field[cm][0] != '\0' && (st = num(&c, cm, "mem_used_gb", &mem, d)) != MS_OK)
            goto out;
        if (!(t >= 0 && t <= MS_TRACE_MAX_S * 10)) {
            ms_diag_set(d, name, c.line, "time", "%g is not a time in seconds >= 0", t);
            st = MS_ERANGE;
            goto out;
        }
        if ((st = check_sample(a, name, c.line, node, strlen(node), gpu, util, mem, &ni, d)) != MS_OK)
            goto out;
        ms__adv_add(a, ni, util, mem);
    }
    st = r < 0 ? (ms_status_t)-r : MS_OK;
out:
    ms_csv_close(&c);
    return st;
}

/* --- DCGM exporter text (Prometheus exposition format) ------------------ */

/* The value of label key in the label set [b, e): *vb and *vl, or false. Values
 * are quoted with \" \\ \n escapes; the escapes are kept as written (node
 * names and GPU numbers have none). */
static bool label(const char *b, const char *e, const char *key, const char **vb, size_t *vl)
{
    size_t kl = strlen(key);

    while (b < e) {
        const char *k = b, *q;
        while (b < e && *b != '=')
            b++;
        if (b + 1 >= e || b[1] != '"')
            return false;
        q = b + 2;
        for (b = q; b < e && *b != '"'; b++)
            if (*b == '\\' && b + 1 < e)
                b++;
        if (b >= e)
            return false;
        while (k < b && (*k == ' ' || *k == ','))
            k++;
        if ((size_t)(q - 2 - k) == kl && strncmp(k, key, kl) == 0) {
            *vb = q;
            *vl = (size_t)(b - q);
            return true;
        }
        b++;   /* past the closing quote */
    }
    return false;
}

/* Pending per-(node, gpu) memory of the current scrape: DCGM writes the
 * FB_USED family after GPU_UTIL, so memory joins its sample at the end. */
typedef struct dcgm_gpu {
    int node, glob;              /* the node; the GPU's number in the cluster */
    double util, mem_mib;
    bool has_util, has_mem;
} dcgm_gpu_t;

/* The pending samples of one scrape become samples. */
static void flush(ms_advise_t *a, dcgm_gpu_t *g, size_t *n, int32_t *slot, long *used)
{
    for (size_t k = 0; k < *n; k++) {
        if (g[k].has_util) {
            ms__adv_add(a, g[k].node, g[k].util, g[k].mem_mib / 1024.0);
            (*used)++;
        }
        slot[g[k].glob] = -1;
    }
    *n = 0;
}

/* One DCGM sample line, parsed: which metric, the Hostname label's value
 * (host[0..hostlen), pointing into the line), the gpu label, the value. */
typedef struct dcgm_line {
    bool util;                 /* GPU_UTIL (else FB_USED) */
    const char *host;
    size_t hostlen;
    double gpu, v;
} dcgm_line_t;

/* The end of a label set starting at lb (its '}'), skipping quoted text
 * where a '}' may sit; e if none. */
static const char *labels_end(const char *lb, const char *e)
{
    const char *le;

    for (le = lb; le < e && *le != '}'; le++)
        if (*le == '"')
            for (le++; le < e && *le != '"'; le++)
                if (*le == '\\' && le + 1 < e)
                    le++;
    return le;
}

/* A number of at most 31 characters from [b, b + n). */
static bool short_number(const char *b, size_t n, char *tmp, double *v)
{
    if (n == 0 || n >= 32)
        return false;
    memcpy(tmp, b, n);
    tmp[n] = '\0';
    return ms_number_double(tmp, v) == MS_OK;
}

/* Line [p, e) into out. MS_OK with *skip set for a line that is not a
 * GPU's utilisation or memory sample (another metric, a MIG instance). */
static ms_status_t dcgm_line(const char *p, const char *e, const char *name, long line,
                             dcgm_line_t *out, bool *skip, ms_diag_t *d)
{
    const char *lb, *le, *gb, *q;
    size_t gl;
    char tmp[32];

    *skip = true;
    if (strncmp(p, "DCGM_FI_DEV_GPU_UTIL{", 21) == 0)
        out->util = true;
    else if (strncmp(p, "DCGM_FI_DEV_FB_USED{", 20) == 0)
        out->util = false;
    else
        return MS_OK;   /* another metric */
    lb = p + (out->util ? 21 : 20);
    if ((le = labels_end(lb, e)) >= e) {
        ms_diag_set(d, name, line, "labels", "no closing '}'");
        return MS_EPARSE;
    }
    if (label(lb, le, "GPU_I_ID", &gb, &gl))
        return MS_OK;   /* a MIG instance: DCGM has no GPU_UTIL for it */
    *skip = false;
    if (!label(lb, le, "Hostname", &out->host, &out->hostlen)) {
        ms_diag_set(d, name, line, "Hostname", "no Hostname label (run dcgm-exporter with it)");
        return MS_EPARSE;
    }
    if (!label(lb, le, "gpu", &gb, &gl) || gl == 0 || gl >= sizeof(tmp)) {
        ms_diag_set(d, name, line, "gpu", "no gpu label");
        return MS_EPARSE;
    }
    if (!short_number(gb, gl, tmp, &out->gpu)) {
        ms_diag_set(d, name, line, "gpu", "'%s' is not a GPU number", tmp);
        return MS_EPARSE;
    }
    /* the value: after '}' and blanks, up to a blank (a timestamp may follow) */
    for (p = le + 1; p < e && (*p == ' ' || *p == '\t'); p++)
        ;
    for (q = p; q < e && *q != ' ' && *q != '\t'; q++)
        ;
    if (q == p || (size_t)(q - p) >= sizeof(tmp)) {
        ms_diag_set(d, name, line, "value", "missing or overlong value");
        return MS_EPARSE;
    }
    if (!short_number(p, (size_t)(q - p), tmp, &out->v)) {
        ms_diag_set(d, name, line, "value", "'%s' is not a number", tmp);
        return MS_EPARSE;
    }
    return MS_OK;
}

/* The samples of one scrape, per GPU of the cluster, until it repeats. */
typedef struct dcgm_scrape {
    dcgm_gpu_t *g;             /* [n] pending GPUs */
    size_t n, gcap;
    int32_t *slot;             /* per GPU of the cluster: its pending entry or -1 */
    int32_t *goff;             /* per node: its first GPU's number */
    long used;                 /* samples given to the advisor */
} dcgm_scrape_t;

/* Keep sample l of node ni; a GPU seen again in this scrape starts a new
 * scrape (the pending one is flushed first). */
static ms_status_t dcgm_keep(ms_advise_t *a, dcgm_scrape_t *sc, const dcgm_line_t *l, int ni)
{
    int glob = sc->goff[ni] + (int)l->gpu;
    size_t i;

    if (sc->slot[glob] >= 0 &&
        (l->util ? sc->g[sc->slot[glob]].has_util : sc->g[sc->slot[glob]].has_mem))
        flush(a, sc->g, &sc->n, sc->slot, &sc->used);
    if (sc->slot[glob] < 0) {
        dcgm_gpu_t *ng = ms_csv_grow(sc->g, &sc->gcap, sc->n, sizeof(*sc->g), 16);

        if (ng == NULL)
            return MS_ENOMEM;
        sc->g = ng;
        memset(&sc->g[sc->n], 0, sizeof(sc->g[sc->n]));
        sc->g[sc->n].node = ni;
        sc->g[sc->n].glob = glob;
        sc->slot[glob] = (int32_t)sc->n++;
    }
    i = (size_t)sc->slot[glob];
    if (l->util) {
        sc->g[i].util = l->v;
        sc->g[i].has_util = true;
    } else {
        sc->g[i].mem_mib = l->v;
        sc->g[i].has_mem = true;
    }
    return MS_OK;
}

ms_status_t ms_advise_read_dcgm(ms_advise_t *a, FILE *f, const char *name, ms_diag_t *d)
{
    dcgm_scrape_t sc;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    long line = 0;
    ms_status_t st = MS_OK;
    int tot = 0, k;

    memset(&sc, 0, sizeof(sc));
    if ((sc.goff = malloc((size_t)a->nnodes * sizeof(*sc.goff))) == NULL)
        return MS_ENOMEM;
    for (k = 0; k < a->nnodes; k++) {
        sc.goff[k] = tot;
        tot += a->nodes[k].ngpus;
    }
    if ((sc.slot = malloc((size_t)tot * sizeof(*sc.slot))) == NULL) {
        free(sc.goff);
        return MS_ENOMEM;
    }
    for (k = 0; k < tot; k++)
        sc.slot[k] = -1;
    while (st == MS_OK && (len = getline(&buf, &cap, f)) >= 0) {
        const char *e = buf + len;
        dcgm_line_t l;
        bool skip;
        int ni;

        line++;
        if (memchr(buf, '\0', (size_t)len) != NULL) {
            ms_diag_set(d, name, line, "", "NUL byte");
            st = MS_EPARSE;
            break;
        }
        while (e > buf && (e[-1] == '\n' || e[-1] == '\r'))
            e--;
        if (buf == e || *buf == '#')
            continue;
        if ((st = dcgm_line(buf, e, name, line, &l, &skip, d)) != MS_OK || skip)
            continue;
        st = check_sample(a, name, line, l.host, l.hostlen, l.gpu, l.util ? l.v : 0,
                          l.util ? 0 : l.v / 1024.0, &ni, d);
        if (st == MS_OK)
            st = dcgm_keep(a, &sc, &l, ni);
    }
    if (st == MS_OK && ferror(f)) {
        ms_diag_set(d, name, line, "", "read error");
        st = MS_EIO;
    }
    if (st == MS_OK) {
        flush(a, sc.g, &sc.n, sc.slot, &sc.used);
        if (sc.used == 0) {
            ms_diag_set(d, name, line, "DCGM_FI_DEV_GPU_UTIL", "no GPU utilisation samples");
            st = MS_EPARSE;
        }
    }
    free(buf);
    free(sc.g);
    free(sc.slot);
    free(sc.goff);
    return st;
}

/* --- the trace's classes --------------------------------------------------- */

typedef struct name_idx {
    const char *name;
    size_t idx;
} name_idx_t;

static int cmp_ni(const void *x, const void *y)
{
    return strcmp(((const name_idx_t *)x)->name, ((const name_idx_t *)y)->name);
}

static bool truth(const char *s, bool *out)
{
    if (strcmp(s, "1") == 0 || strcmp(s, "true") == 0 || strcmp(s, "yes") == 0)
        *out = true;
    else if (strcmp(s, "0") == 0 || strcmp(s, "false") == 0 || strcmp(s, "no") == 0 || *s == '\0')
        *out = false;
    else
        return false;
    return true;
}

static int svc_index(ms_advise_t *a, const char *s)
{
    int i;
    char **nv;

    for (i = 0; i < a->nsvc; i++)   /* few services: a linear look-up */
        if (strcmp(a->svc_name[i], s) == 0)
            return i;
    if (a->nsvc == a->svc_cap) {
        size_t cap = (size_t)a->svc_cap;
        if ((nv = ms_csv_grow(a->svc_name, &cap, (size_t)a->nsvc, sizeof(*nv), 8)) == NULL)
            return -1;
        a->svc_name = nv;
        a->svc_cap = (int)cap;
    }
    if ((a->svc_name[a->nsvc] = malloc(strlen(s) + 1)) == NULL)
        return -1;
    memcpy(a->svc_name[a->nsvc], s, strlen(s) + 1);
    return a->nsvc++;
}

ms_status_t ms_advise_set_trace(ms_advise_t *a, const ms_trace_t *t, const char *path,
                                ms_diag_t *d)
{
    name_idx_t *ix = NULL;
    ms_csv_t c;
    FILE *f = NULL;
    ms_status_t st = MS_OK;
    int cid, cl, cs, r;
    size_t i;

    a->trace = t;
    free(a->latency);
    free(a->svc);
    a->latency = calloc(t->n > 0 ? t->n : 1, 1);
    a->svc = malloc((t->n > 0 ? t->n : 1) * sizeof(*a->svc));
    ix = malloc((t->n > 0 ? t->n : 1) * sizeof(*ix));
    if (a->latency == NULL || a->svc == NULL || ix == NULL) {
        free(ix);
        return MS_ENOMEM;
    }
    for (i = 0; i < t->n; i++) {
        a->svc[i] = -1;
        ix[i].name = ms_trace_name(t, i);
        ix[i].idx = i;
    }
    qsort(ix, t->n, sizeof(*ix), cmp_ni);
    if (path == NULL) {   /* no file to read the classes from (stdin) */
        free(ix);
        return MS_OK;
    }
    if ((f = fopen(path, "rb")) == NULL) {
        ms_diag_set(d, path, 0, "", "cannot open");
        free(ix);
        return MS_EIO;
    }
    ms_csv_open(&c, f, path);
    c.lax = true;   /* a trace row may have more fields than 32 */
    if ((st = ms_csv_header(&c, "empty trace", d)) != MS_OK)
        goto out;
    cid = ms_csv_col(&c, "job_id");
    cl = ms_csv_col(&c, "latency_sensitive");
    cs = ms_csv_col(&c, "service");
    if (cl < 0)
        goto out;   /* no class column: nothing is latency-sensitive */
    while ((r = ms_csv_next(&c, d)) > 0) {
        const char *id, *ls, *sv = NULL;
        name_idx_t key, *hit;
        bool lat;

        if (c.nf > 0 && c.field[0][0] == '#')
            continue;   /* a comment, as the trace reader reads it */
        if ((st = ms_csv_str(&c, cid, "job_id", &id, d)) != MS_OK)
            goto out;
        ls = cl < c.nf ? c.field[cl] : "";
        if (!truth(ls, &lat)) {
            ms_diag_set(d, path, c.line, "latency_sensitive", "'%.40s': expected 1/0, true/false, yes/no",
                        ls);
            st = MS_EPARSE;
            goto out;
        }
        if (!lat)
            continue;
        key.name = id;
        if ((hit = bsearch(&key, ix, t->n, sizeof(*ix), cmp_ni)) == NULL) {
            ms_diag_set(d, path, c.line, "job_id", "'%.40s' is not a job of the trace", id);
            st = MS_EINVAL;
            goto out;
        }
        if (cs >= 0 && cs < c.nf && c.field[cs][0] != '\0')
            sv = c.field[cs];
        a->latency[hit->idx] = 1;
        if ((a->svc[hit->idx] = svc_index(a, sv != NULL ? sv : id)) < 0) {
            st = MS_ENOMEM;
            goto out;
        }
    }
    st = r < 0 ? (ms_status_t)-r : MS_OK;
out:
    ms_csv_close(&c);
    fclose(f);
    free(ix);
    return st;
}
