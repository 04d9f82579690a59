/* spec.c - cluster descriptions: one node per "NAME=COUNTxMODEL[:MODE]",
 * MODE one of mig (the default), timeslice=R, whole; and cluster files
 * with one such node a line.
 *
 * The spec owns the node names and the geometries it creates (one per
 * distinct model and profile set); geometries added through
 * ms_cluster_spec_add_group are borrowed.
 */
#include "migsched/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"
#include "sched/sched_int.h"

#define SPEC_MAX_NODES 1000000   /* a bound on what one spec may describe */
#define SPEC_MAX_GPUS_PER_NODE 64
#define SPEC_MAX_LINE 4096

struct ms_cluster_spec {
    ms_node_spec_t *nodes;      /* names point into names[] */
    char **names;
    int n, cap;
    ms__idmap_t byname;         /* name -> node: a spec of 100,000 nodes was
                                 * quadratic (a linear search per add, 26 s) */
    ms_cluster_spec_t *self;    /* the map's key callback counts through it */
    long name_reads;            /* stored names read by the map (the tests' work count) */
    ms_geom_t **geoms;          /* owned */
    uint32_t *sets;
    int ngeoms, capgeoms;
    long ngpus;
};

static const char *node_name(const void *ctx, int32_t v)
{
    const ms_cluster_spec_t *cs = ctx;

    cs->self->name_reads++;
    return cs->names[v];
}

long ms__cluster_spec_name_reads(const ms_cluster_spec_t *cs)
{
    return cs->name_reads;
}

ms_status_t ms_cluster_spec_create(ms_cluster_spec_t **out)
{
    if ((*out = calloc(1, sizeof(**out))) == NULL)
        return MS_ENOMEM;
    (*out)->self = *out;
    ms__idmap_init(&(*out)->byname, node_name, *out, NULL, NULL);
    return MS_OK;
}

void ms_cluster_spec_destroy(ms_cluster_spec_t *cs)
{
    int i;

    if (cs == NULL)
        return;
    for (i = 0; i < cs->n; i++)
        free(cs->names[i]);
    free(cs->names);
    ms__idmap_fini(&cs->byname);
    for (i = 0; i < cs->ngeoms; i++)
        ms_geom_destroy(cs->geoms[i]);
    free(cs->nodes);
    free(cs->geoms);
    free(cs->sets);
    free(cs);
}

int ms_cluster_spec_nnodes(const ms_cluster_spec_t *cs) { return cs->n; }
const ms_node_spec_t *ms_cluster_spec_nodes(const ms_cluster_spec_t *cs) { return cs->nodes; }
int ms_cluster_spec_ngpus(const ms_cluster_spec_t *cs) { return (int)cs->ngpus; }

bool ms_cluster_spec_homogeneous(const ms_cluster_spec_t *cs)
{
    int i;

    for (i = 1; i < cs->n; i++)
        if (cs->nodes[i].geom != cs->nodes[0].geom || cs->nodes[i].mode != cs->nodes[0].mode ||
            cs->nodes[i].ngpus != cs->nodes[0].ngpus ||
            cs->nodes[i].replicas != cs->nodes[0].replicas)
            return false;
    return true;
}

/* Is a node named name[0..len) there? O(1) (name need not end in NUL). */
static ms_status_t name_taken(const ms_cluster_spec_t *cs, const char *name, size_t len,
                              bool *taken)
{
    char small[256];
    char *nm = len < sizeof(small) ? small : malloc(len + 1);

    if (nm == NULL)
        return MS_ENOMEM;
    memcpy(nm, name, len);
    nm[len] = '\0';
    *taken = ms__idmap_find(&cs->byname, nm) >= 0;
    if (nm != small)
        free(nm);
    return MS_OK;
}

/* Append a node. A name that is there already stays the first node's in the
 * map (ms_cluster_spec_add refuses duplicates; the generated names of
 * add_group are not checked, as before). O(1). */
static ms_status_t push_node(ms_cluster_spec_t *cs, const char *name, size_t len,
                             const ms_geom_t *g, int ngpus, ms_node_mode_t mode, int replicas)
{
    ms_node_spec_t *ns;
    char *nm;

    if (cs->n >= SPEC_MAX_NODES)
        return MS_ERANGE;
    if (cs->n == cs->cap) {
        int cap = cs->cap ? cs->cap * 2 : 16;
        ms_node_spec_t *v = realloc(cs->nodes, (size_t)cap * sizeof(*v));
        char **w;

        if (v == NULL)
            return MS_ENOMEM;
        cs->nodes = v;
        if ((w = realloc(cs->names, (size_t)cap * sizeof(*w))) == NULL)
            return MS_ENOMEM;
        cs->names = w;
        cs->cap = cap;
    }
    if ((nm = malloc(len + 1)) == NULL)
        return MS_ENOMEM;
    memcpy(nm, name, len);
    nm[len] = '\0';
    cs->names[cs->n] = nm;
    if (ms__idmap_find(&cs->byname, nm) < 0 && ms__idmap_put(&cs->byname, cs->n) != 0) {
        free(nm);
        return MS_ENOMEM;
    }
    ns = &cs->nodes[cs->n++];
    ns->name = nm;
    ns->geom = g;
    ns->ngpus = ngpus;
    ns->mode = mode;
    ns->replicas = replicas;
    cs->ngpus += ngpus;
    return MS_OK;
}

static ms_status_t geom_for(ms_cluster_spec_t *cs, const ms_model_t *m, uint32_t set,
                            const ms_geom_t **out)
{
    ms_geom_t *g;
    ms_status_t st;
    int i;

    for (i = 0; i < cs->ngeoms; i++)
        if (ms_geom_model(cs->geoms[i]) == m && cs->sets[i] == set) {
            *out = cs->geoms[i];
            return MS_OK;
        }
    if (cs->ngeoms == cs->capgeoms) {
        int cap = cs->capgeoms ? cs->capgeoms * 2 : 4;
        ms_geom_t **v = realloc(cs->geoms, (size_t)cap * sizeof(*v));
        uint32_t *w;

        if (v == NULL)
            return MS_ENOMEM;
        cs->geoms = v;
        if ((w = realloc(cs->sets, (size_t)cap * sizeof(*w))) == NULL)
            return MS_ENOMEM;
        cs->sets = w;
        cs->capgeoms = cap;
    }
    if ((st = ms_geom_create(m, set, &g)) != MS_OK)
        return st;
    cs->geoms[cs->ngeoms] = g;
    cs->sets[cs->ngeoms] = set;
    cs->ngeoms++;
    *out = g;
    return MS_OK;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.';
}

/* A decimal integer in [lo, hi] spanning exactly [p, end). */
static bool parse_int(const char *p, const char *end, long lo, long hi, long *out)
{
    long v = 0;

    if (p == end)
        return false;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
        if (v > hi)
            return false;
    }
    if (v < lo)
        return false;
    *out = v;
    return true;
}

ms_status_t ms_cluster_spec_add(ms_cluster_spec_t *cs, const char *text, uint32_t profile_set,
                                ms_diag_t *diag)
{
    const char *eq, *x, *colon, *end, *p;
    char model[64];
    const ms_model_t *m;
    const ms_geom_t *g;
    ms_node_mode_t mode = MS_NODE_MIG;
    long count, replicas = 0;
    bool taken;
    ms_status_t st;

    if (text == NULL)
        return MS_EINVAL;
    end = text + strlen(text);
    eq = strchr(text, '=');
    if (eq == NULL || eq == text) {
        ms_diag_set(diag, NULL, 0, "node", "'%s': expected NAME=COUNTxMODEL[:mig|:timeslice=R|:whole]",
                    text);
        return MS_EPARSE;
    }
    for (p = text; p < eq; p++)
        if (!name_char(*p)) {
            ms_diag_set(diag, NULL, 0, "node", "'%s': a node name is letters, digits, '-', '_' and '.'",
                        text);
            return MS_EPARSE;
        }
    if ((st = name_taken(cs, text, (size_t)(eq - text), &taken)) != MS_OK) {
        ms_diag_set(diag, NULL, 0, "node", "'%s': %s", text, ms_strerror(st));
        return st;
    }
    if (taken) {
        ms_diag_set(diag, NULL, 0, "node", "'%s': node name '%.*s' is used twice", text,
                    (int)(eq - text), text);
        return MS_EEXIST;
    }
    x = eq + 1;
    while (x < end && *x >= '0' && *x <= '9')
        x++;
    if (x >= end || *x != 'x' ||
        !parse_int(eq + 1, x, 1, SPEC_MAX_GPUS_PER_NODE, &count)) {
        ms_diag_set(diag, NULL, 0, "node", "'%s': COUNT must be 1..%d GPUs, written before 'x'",
                    text, SPEC_MAX_GPUS_PER_NODE);
        return MS_EPARSE;
    }
    colon = strchr(x + 1, ':');
    if (colon == NULL)
        colon = end;
    if ((size_t)(colon - (x + 1)) >= sizeof(model) || colon == x + 1) {
        ms_diag_set(diag, NULL, 0, "node", "'%s': missing or too long model name", text);
        return MS_EPARSE;
    }
    memcpy(model, x + 1, (size_t)(colon - (x + 1)));
    model[colon - (x + 1)] = '\0';
    if ((m = ms_model_find(model)) == NULL) {
        ms_diag_set(diag, NULL, 0, "node", "'%s': unknown GPU model '%s' (see `migsched models`)",
                    text, model);
        return MS_ENOENT;
    }
    if (colon < end) {
        const char *md = colon + 1;

        if (strcmp(md, "mig") == 0) {
            mode = MS_NODE_MIG;
        } else if (strcmp(md, "whole") == 0) {
            mode = MS_NODE_WHOLE;
            replicas = 1;
        } else if (strncmp(md, "timeslice=", 10) == 0 &&
                   parse_int(md + 10, end, 1, MS_MAX_INST, &replicas)) {
            mode = MS_NODE_TIMESLICE;
        } else {
            ms_diag_set(diag, NULL, 0, "node",
                        "'%s': mode must be mig, whole or timeslice=R with R in 1..%d", text,
                        MS_MAX_INST);
            return MS_EPARSE;
        }
    }
    if ((st = geom_for(cs, m, profile_set, &g)) != MS_OK) {
        ms_diag_set(diag, NULL, 0, "node", "'%s': cannot build the %s geometry: %s", text,
                    m->name, ms_strerror(st));
        return st;
    }
    if ((st = push_node(cs, text, (size_t)(eq - text), g, (int)count, mode, (int)replicas)) != MS_OK)
        ms_diag_set(diag, NULL, 0, "node", "'%s': %s", text, ms_strerror(st));
    return st;
}

ms_status_t ms_cluster_spec_add_group(ms_cluster_spec_t *cs, const char *prefix, int nodes,
                                      const ms_geom_t *geom, int gpus_per_node,
                                      ms_node_mode_t mode, int replicas)
{
    char name[64];
    int i, n;
    ms_status_t st;

    if (nodes <= 0 || gpus_per_node <= 0 || geom == NULL || prefix == NULL ||
        strlen(prefix) > 32)
        return MS_EINVAL;
    for (i = 0; i < nodes; i++) {
        n = snprintf(name, sizeof(name), "%s%d", prefix, i);
        if (n < 0 || (size_t)n >= sizeof(name))
            return MS_EINVAL;
        if ((st = push_node(cs, name, (size_t)n, geom, gpus_per_node, mode, replicas)) != MS_OK)
            return st;
    }
    return MS_OK;
}

ms_status_t ms_cluster_spec_add_gpus(ms_cluster_spec_t *cs, const char *prefix, int ngpus,
                                     int gpus_per_node, const ms_geom_t *geom, ms_node_mode_t mode,
                                     int replicas)
{
    int full, rest;
    ms_status_t st;

    if (ngpus <= 0 || gpus_per_node <= 0)
        return MS_EINVAL;
    if (gpus_per_node > ngpus)
        gpus_per_node = ngpus;
    full = ngpus / gpus_per_node;
    rest = ngpus - full * gpus_per_node;
    if ((st = ms_cluster_spec_add_group(cs, prefix, full, geom, gpus_per_node, mode, replicas)) != MS_OK)
        return st;
    if (rest > 0) {
        char name[64];
        int n = snprintf(name, sizeof(name), "%s%d", prefix, full);

        if (n < 0 || (size_t)n >= sizeof(name))
            return MS_EINVAL;
        return push_node(cs, name, (size_t)n, geom, rest, mode, replicas);
    }
    return MS_OK;
}

/* One line of f into buf (with its newline, NUL-terminated): 1, or 0 at
 * the end of the file; -1 when it is too long for buf, -2 when it holds a
 * NUL (fgets would hand back the line cut at it), *col the NUL's column. */
static int read_line(FILE *f, char *buf, size_t cap, size_t *col)
{
    size_t n = 0;
    int c;

    while ((c = getc(f)) != EOF) {
        if (c == '\0') {
            *col = n + 1;
            return -2;
        }
        if (n + 2 > cap)
            return -1;
        buf[n++] = (char)c;
        if (c == '\n')
            break;
    }
    buf[n] = '\0';
    return n > 0 ? 1 : 0;
}

ms_status_t ms_cluster_spec_read_file(ms_cluster_spec_t *cs, const char *path,
                                      uint32_t profile_set, ms_diag_t *diag)
{
    FILE *f = fopen(path, "r");
    char line[SPEC_MAX_LINE];
    long ln = 0;
    ms_status_t st = MS_OK;

    if (f == NULL) {
        ms_diag_set(diag, path, 0, "cluster", "cannot open: %s", strerror(errno));
        return MS_EIO;
    }
    /* one pass over the file: bounded by its lines */
    for (;;) {
        size_t col = 0;
        int got = read_line(f, line, sizeof(line), &col);
        char *p = line, *e;
        ms_diag_t d;

        if (got == 0)
            break;
        ln++;
        if (got == -2) {
            ms_diag_set(diag, path, ln, "node", "a NUL byte at column %zu", col);
            st = MS_EPARSE;
            break;
        }
        if (got < 0) {
            ms_diag_set(diag, path, ln, "node", "line longer than %d characters", SPEC_MAX_LINE - 2);
            st = MS_EPARSE;
            break;
        }
        if ((e = strchr(p, '#')) != NULL)
            *e = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        e = p + strlen(p);
        while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        if (*p == '\0')
            continue;
        ms_diag_clear(&d);
        if ((st = ms_cluster_spec_add(cs, p, profile_set, &d)) != MS_OK) {
            ms_diag_set(diag, path, ln, "node", "%s", d.msg);
            break;
        }
    }
    if (st == MS_OK && ferror(f)) {
        ms_diag_set(diag, path, ln, "cluster", "read error");
        st = MS_EIO;
    }
    if (st == MS_OK && cs->n == 0) {
        ms_diag_set(diag, path, ln, "cluster", "no nodes");
        st = MS_EPARSE;
    }
    fclose(f);
    return st;
}
