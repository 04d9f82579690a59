/* cfg.c - the cluster policy file: nodes with a model, GPU count and mode,
 * MIG layouts (built-in kinds or custom mig-parted entries), resolved per
 * model into named mig-parted configs and device-plugin configs. */
#include "k8sconf/k8s_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/policy.h"

static const char *const BUILTIN[] = { "inference-peak", "balanced", "training" };
#define NBUILTIN 3
#define DEFAULT_LAYOUT "balanced"
#define DEFAULT_REPLICAS 4

typedef struct layout {
    char name[MS__K8S_NAME];
    ms__k8s_entry_t *e;       /* custom: its entries; built-in: NULL */
    int n;
    long line;
} layout_t;

/* One mig-parted config: a layout resolved on one model. */
typedef struct mconf {
    char name[MS__K8S_NAME * 2];
    int layout;               /* index into layouts, -1 for all-disabled */
    const ms_model_t *model;
    ms__k8s_entry_t *e;       /* owned copy (built-in: made here) */
    int n;
    int (*idx)[MS_MAX_PROFILES];   /* [n]: model profile index per entry profile */
} mconf_t;

typedef struct plugin {
    char name[MS__K8S_NAME];
    ms_k8s_mode_t mode;
    int replicas;
} plugin_t;

typedef struct node {
    ms_k8s_node_t pub;
    char name[MS__K8S_NAME];
    char layout[MS__K8S_NAME];
    int lay;                  /* index into layouts (mig) */
    int conf, plug;
    long line;
} node_t;

typedef struct switching {
    ms_k8s_switching_t pub;
    int *cand;                /* layout indices */
    const char **names;
    ms_k8s_window_t *win;
    long line;
} switching_t;

struct ms_k8s_cfg {
    layout_t *lay;
    int nlay;
    switching_t *sw;          /* NULL: no switching section */
    node_t *nodes;
    int nnodes;
    mconf_t *conf;
    int nconf;
    plugin_t *plug;
    int nplug;
};

void ms_k8s_cfg_free(ms_k8s_cfg_t *c)
{
    int i;

    if (c == NULL)
        return;
    for (i = 0; i < c->nlay; i++)
        free(c->lay[i].e);
    for (i = 0; i < c->nconf; i++) {
        free(c->conf[i].e);
        free(c->conf[i].idx);
    }
    if (c->sw != NULL) {
        free(c->sw->cand);
        free(c->sw->names);
        free(c->sw->win);
        free(c->sw);
    }
    free(c->lay);
    free(c->nodes);
    free(c->conf);
    free(c->plug);
    free(c);
}

int ms_k8s_cfg_nnodes(const ms_k8s_cfg_t *c) { return c->nnodes; }
const ms_k8s_node_t *ms_k8s_cfg_node(const ms_k8s_cfg_t *c, int i) { return &c->nodes[i].pub; }
int ms_k8s_cfg_nplugins(const ms_k8s_cfg_t *c) { return c->nplug; }
const char *ms_k8s_cfg_plugin_name(const ms_k8s_cfg_t *c, int i) { return c->plug[i].name; }

/* internal accessors for write.c */
int ms__k8s_nconf(const ms_k8s_cfg_t *c);
void ms__k8s_conf(const ms_k8s_cfg_t *c, int i, const char **name, const ms_model_t **m,
                  const ms__k8s_entry_t **e, int *n, const int (**idx)[MS_MAX_PROFILES]);
void ms__k8s_plugin(const ms_k8s_cfg_t *c, int i, ms_k8s_mode_t *mode, int *replicas);

int ms__k8s_nconf(const ms_k8s_cfg_t *c) { return c->nconf; }
void ms__k8s_conf(const ms_k8s_cfg_t *c, int i, const char **name, const ms_model_t **m,
                  const ms__k8s_entry_t **e, int *n, const int (**idx)[MS_MAX_PROFILES])
{
    *name = c->conf[i].name;
    *m = c->conf[i].model;
    *e = c->conf[i].e;
    *n = c->conf[i].n;
    *idx = (const int (*)[MS_MAX_PROFILES])c->conf[i].idx;
}
void ms__k8s_plugin(const ms_k8s_cfg_t *c, int i, ms_k8s_mode_t *mode, int *replicas)
{
    *mode = c->plug[i].mode;
    *replicas = c->plug[i].replicas;
}

static int find_layout(const ms_k8s_cfg_t *c, const char *name)
{
    int i;

    for (i = 0; i < c->nlay; i++)
        if (strcmp(c->lay[i].name, name) == 0)
            return i;
    return -1;
}

static bool read_layouts(ms__ydoc_t *y, ms_k8s_cfg_t *c, const yaml_node_t *n)
{
    char f[MS__K8S_FIELD * 2];
    int i, b, len;

    if (!ms__ymap(y, n, "layouts"))
        return false;
    len = ms__ymap_len(n);
    if ((c->lay = calloc((size_t)len + NBUILTIN, sizeof(*c->lay))) == NULL)
        return ms__yerr(y, n, "layouts", "out of memory");
    for (b = 0; b < NBUILTIN; b++) {
        memcpy(c->lay[b].name, BUILTIN[b], strlen(BUILTIN[b]) + 1);
        c->nlay++;
    }
    for (i = 0; i < len; i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, n, i, &v, "layouts");
        layout_t *l = &c->lay[c->nlay];

        if (k == NULL)
            return false;
        ms__kfield(f, sizeof(f), "layouts.%s", k);
        if (!ms__k8s_name_ok(k))
            return ms__yerr(y, v, f,
                            "layout name '%s': 1-63 of [A-Za-z0-9._-], alphanumeric at both ends",
                            k);
        if (find_layout(c, k) >= 0 || strcmp(k, "all-disabled") == 0)
            return ms__yerr(y, v, f, "layout '%s' is %s", k,
                            find_layout(c, k) < NBUILTIN && find_layout(c, k) >= 0
                                ? "built in (inference-peak, balanced, training)"
                                : strcmp(k, "all-disabled") == 0 ? "reserved" : "given twice");
        memcpy(l->name, k, strlen(k) + 1);
        l->line = ms__ynode_line(v);
        if (!ms__k8s_parse_entries(y, v, f, false, &l->e, &l->n))
            return false;
        c->nlay++;
    }
    return true;
}

static bool builtin_layouts(ms__ydoc_t *y, ms_k8s_cfg_t *c)
{
    int b;

    if (c->lay != NULL)
        return true;
    if ((c->lay = calloc(NBUILTIN, sizeof(*c->lay))) == NULL)
        return ms__yerr(y, NULL, "layouts", "out of memory");
    for (b = 0; b < NBUILTIN; b++)
        memcpy(c->lay[b].name, BUILTIN[b], strlen(BUILTIN[b]) + 1);
    c->nlay = NBUILTIN;
    return true;
}

static bool read_node(ms__ydoc_t *y, ms_k8s_cfg_t *c, const yaml_node_t *n, int idx)
{
    char f[MS__K8S_FIELD * 2];
    node_t *nd = &c->nodes[idx];
    const yaml_node_t *rep = NULL, *lay = NULL;
    bool have_gpus = false, have_mode = false;
    int i;

    nd->line = ms__ynode_line(n);
    ms__kfield(f, sizeof(f), "nodes[%d]", idx);
    if (!ms__ymap(y, n, f))
        return false;
    for (i = 0; i < ms__ymap_len(n); i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, n, i, &v, f), *s;
        long x;

        if (k == NULL)
            return false;
        ms__kfield(f, sizeof(f), "nodes[%d].%s", idx, k);
        if (strcmp(k, "name") == 0) {
            if ((s = ms__yscalar(y, v, f)) == NULL)
                return false;
            if (!ms__k8s_name_ok(s))
                return ms__yerr(y, v, f, "'%s' is not a node name (1-63 of [A-Za-z0-9._-])", s);
            memcpy(nd->name, s, strlen(s) + 1);
        } else if (strcmp(k, "model") == 0) {
            if ((s = ms__yscalar(y, v, f)) == NULL)
                return false;
            if ((nd->pub.model = ms_model_find(s)) == NULL)
                return ms__yerr(y, v, f, "unknown model '%s' (see `migsched models`)", s);
        } else if (strcmp(k, "gpus") == 0) {
            if (!ms__yint(y, v, f, 1, MS__K8S_MAX_GPUS, &x))
                return false;
            nd->pub.gpus = (int)x;
            have_gpus = true;
        } else if (strcmp(k, "mode") == 0) {
            if ((s = ms__yscalar(y, v, f)) == NULL)
                return false;
            if (strcmp(s, "mig") == 0)
                nd->pub.mode = MS_K8S_MIG;
            else if (strcmp(s, "timeslice") == 0)
                nd->pub.mode = MS_K8S_TIMESLICE;
            else if (strcmp(s, "whole") == 0)
                nd->pub.mode = MS_K8S_WHOLE;
            else
                return ms__yerr(y, v, f, "'%s': expected mig, timeslice or whole", s);
            have_mode = true;
        } else if (strcmp(k, "layout") == 0) {
            if ((s = ms__yscalar(y, v, f)) == NULL)
                return false;
            if (strlen(s) >= MS__K8S_NAME || (nd->lay = find_layout(c, s)) < 0)
                return ms__yerr(y, v, f, "unknown layout '%s' (built in: inference-peak, balanced, "
                                "training; or one under layouts:)", s);
            memcpy(nd->layout, s, strlen(s) + 1);
            lay = v;
        } else if (strcmp(k, "replicas") == 0) {
            if (!ms__yint(y, v, f, 2, MS_MAX_INST, &x))
                return false;
            nd->pub.replicas = (int)x;
            rep = v;
        } else {
            return ms__yerr(y, v, f, "unknown key '%s' (expected name, model, gpus, mode, layout, "
                            "replicas)", k);
        }
    }
    ms__kfield(f, sizeof(f), "nodes[%d]", idx);
    if (nd->name[0] == '\0')
        return ms__yerr(y, n, f, "missing name");
    if (nd->pub.model == NULL)
        return ms__yerr(y, n, f, "missing model");
    if (!have_gpus)
        return ms__yerr(y, n, f, "missing gpus");
    (void)have_mode;
    for (i = 0; i < idx; i++)
        if (strcmp(c->nodes[i].name, nd->name) == 0)
            return ms__yerr(y, n, f, "node '%s' given twice (first at line %ld)", nd->name,
                            c->nodes[i].line);
    if (nd->pub.mode != MS_K8S_MIG && lay != NULL)
        return ms__yerr(y, lay, "layout", "a layout needs mode mig");
    if (nd->pub.mode != MS_K8S_TIMESLICE && rep != NULL)
        return ms__yerr(y, rep, "replicas", "replicas needs mode timeslice");
    if (nd->pub.mode == MS_K8S_MIG && lay == NULL) {
        memcpy(nd->layout, DEFAULT_LAYOUT, sizeof(DEFAULT_LAYOUT));
        nd->lay = find_layout(c, DEFAULT_LAYOUT);
    }
    if (nd->pub.mode == MS_K8S_TIMESLICE && rep == NULL)
        nd->pub.replicas = DEFAULT_REPLICAS;
    nd->pub.name = nd->name;
    nd->pub.layout = nd->pub.mode == MS_K8S_MIG ? nd->layout : NULL;
    return true;
}

/* A built-in kind on model m as one entry for every device. */
static bool builtin_entry(ms__ydoc_t *y, const node_t *nd, const char *kind, ms__k8s_entry_t *e)
{
    ms_gi_t gis[MS_MAX_INST];
    ms_geom_t *g = NULL;
    ms_status_t st;
    int n = 0, i, j;

    memset(e, 0, sizeof(*e));
    e->all = true;
    e->maxdev = -1;
    e->mig_enabled = true;
    e->line = nd->line;
    if ((st = ms_geom_create(nd->pub.model, 0, &g)) == MS_OK)
        st = ms_policy_node_layout(g, kind, gis, &n);
    if (st != MS_OK) {
        ms_geom_destroy(g);
        ms_diag_set(y->diag, y->path, nd->line, "layout", "%s has no %s layout (%s)",
                    nd->pub.model->name, kind, ms_strerror(st));
        return false;
    }
    for (i = 0; i < n; i++) {
        const char *pn = ms_geom_profile(g, gis[i].prof)->name;
        for (j = 0; j < e->nprof && strcmp(e->prof[j], pn) != 0; j++)
            ;
        if (j == e->nprof) {
            memcpy(e->prof[j], pn, strlen(pn) + 1);
            e->prof_line[j] = nd->line;
            e->nprof++;
        }
        e->count[j]++;
    }
    ms_geom_destroy(g);
    return true;
}

static int find_conf(const ms_k8s_cfg_t *c, int lay, const ms_model_t *m)
{
    int i;

    for (i = 0; i < c->nconf; i++)
        if (c->conf[i].layout == lay && (lay < 0 || c->conf[i].model == m))
            return i;
    return -1;
}

static bool layout_conf(ms__ydoc_t *y, ms_k8s_cfg_t *c, node_t *nd, int lay, int *conf);

/* The mig-parted config of node nd (its layout on its model), made on first use. */
static bool node_conf(ms__ydoc_t *y, ms_k8s_cfg_t *c, node_t *nd)
{
    mconf_t *mc;

    if (nd->pub.mode != MS_K8S_MIG) {
        if ((nd->conf = find_conf(c, -1, NULL)) >= 0)
            return true;
        mc = &c->conf[c->nconf];
        memset(mc, 0, sizeof(*mc));
        mc->layout = -1;
        memcpy(mc->name, "all-disabled", sizeof("all-disabled"));
        if ((mc->e = calloc(1, sizeof(*mc->e))) == NULL ||
            (mc->idx = calloc(1, sizeof(*mc->idx))) == NULL)
            return ms__yerr(y, NULL, "nodes", "out of memory");
        mc->e->all = true;
        mc->e->maxdev = -1;
        mc->n = 1;
        nd->conf = c->nconf++;
        return true;
    }
    return layout_conf(y, c, nd, nd->lay, &nd->conf);
}

/* The config of layout lay on nd's model (made on first use) in *conf. */
static bool layout_conf(ms__ydoc_t *y, ms_k8s_cfg_t *c, node_t *nd, int lay, int *conf)
{
    char f[MS__K8S_FIELD * 2];
    const layout_t *l;
    mconf_t *mc;
    int i;

    if ((*conf = find_conf(c, lay, nd->pub.model)) >= 0)
        return true;
    l = &c->lay[lay];
    mc = &c->conf[c->nconf];
    memset(mc, 0, sizeof(*mc));
    mc->layout = lay;
    mc->model = nd->pub.model;
    mc->n = l->e != NULL ? l->n : 1;
    if ((mc->e = calloc((size_t)mc->n, sizeof(*mc->e))) == NULL ||
        (mc->idx = calloc((size_t)mc->n, sizeof(*mc->idx))) == NULL) {
        free(mc->e);
        mc->e = NULL;
        return ms__yerr(y, NULL, "nodes", "out of memory");
    }
    *conf = c->nconf++;   /* freed with the configuration from here on */
    if (l->e == NULL) {
        if (!builtin_entry(y, nd, l->name, &mc->e[0]))
            return false;
    } else {
        memcpy(mc->e, l->e, (size_t)mc->n * sizeof(*mc->e));
    }
    for (i = 0; i < mc->n; i++) {
        if (l->e != NULL)
            ms__kfield(f, sizeof(f), "layouts.%s[%d]", l->name, i);
        else
            ms__kfield(f, sizeof(f), "nodes.%s.layout %s", nd->name, l->name);
        if (!ms__k8s_entry_check(y->path, y->diag, &mc->e[i], nd->pub.model, f, mc->idx[i])) {
            /* say which node's model the layout was checked on */
            if (y->diag != NULL) {
                size_t ml = strlen(y->diag->msg);
                snprintf(y->diag->msg + ml, sizeof(y->diag->msg) - ml, " (node %s, line %ld)",
                         nd->name, nd->line);
            }
            return false;
        }
    }
    return true;
}

/* Custom layouts name GPU indices; each must exist on every node using it. */
static bool check_devices(ms__ydoc_t *y, const ms_k8s_cfg_t *c, const node_t *nd)
{
    const layout_t *l;
    int i;

    if (nd->pub.mode != MS_K8S_MIG || (l = &c->lay[nd->lay])->e == NULL)
        return true;
    for (i = 0; i < l->n; i++)
        if (l->e[i].maxdev >= nd->pub.gpus) {
            ms_diag_set(y->diag, y->path, l->e[i].line, "devices",
                        "layout %s names GPU %d but node %s (line %ld) has %d GPUs", l->name,
                        l->e[i].maxdev, nd->name, nd->line, nd->pub.gpus);
            return false;
        }
    return true;
}

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* Name the configs: the layout's name when one model uses it, else
 * LAYOUT-model for each; names must be unique label values. */
static bool name_confs(ms__ydoc_t *y, ms_k8s_cfg_t *c)
{
    int i, j, uses;

    for (i = 0; i < c->nconf; i++) {
        mconf_t *mc = &c->conf[i];
        if (mc->layout < 0)
            continue;
        for (uses = 0, j = 0; j < c->nconf; j++)
            uses += c->conf[j].layout == mc->layout;
        if (uses == 1) {
            snprintf(mc->name, sizeof(mc->name), "%s", c->lay[mc->layout].name);
        } else {
            snprintf(mc->name, sizeof(mc->name), "%s-%s", c->lay[mc->layout].name, mc->model->name);
            lower(mc->name + strlen(c->lay[mc->layout].name));
        }
        if (!ms__k8s_name_ok(mc->name))
            return ms__yerr(y, NULL, "layouts", "config name '%s' is longer than 63 characters; "
                            "shorten layout %s", mc->name, c->lay[mc->layout].name);
    }
    for (i = 0; i < c->nconf; i++)
        for (j = 0; j < i; j++)
            if (strcmp(c->conf[i].name, c->conf[j].name) == 0)
                return ms__yerr(y, NULL, "layouts", "two configs would be named '%s'; rename "
                                "the custom layout", c->conf[i].name);
    return true;
}

static void node_plugin(ms_k8s_cfg_t *c, node_t *nd)
{
    plugin_t *p;
    int i;

    for (i = 0; i < c->nplug; i++)
        if (c->plug[i].mode == nd->pub.mode &&
            (nd->pub.mode != MS_K8S_TIMESLICE || c->plug[i].replicas == nd->pub.replicas)) {
            nd->plug = i;
            return;
        }
    p = &c->plug[c->nplug];
    p->mode = nd->pub.mode;
    p->replicas = nd->pub.mode == MS_K8S_TIMESLICE ? nd->pub.replicas : 0;
    if (p->mode == MS_K8S_MIG)
        snprintf(p->name, sizeof(p->name), "mig-mixed");
    else if (p->mode == MS_K8S_TIMESLICE)
        snprintf(p->name, sizeof(p->name), "timeslice-%d", p->replicas);
    else
        snprintf(p->name, sizeof(p->name), "whole");
    nd->plug = c->nplug++;
}

/* "HH:MM" -> minutes of the day */
static bool read_hhmm(ms__ydoc_t *y, const yaml_node_t *n, const char *field, int *out)
{
    const char *s = ms__yscalar(y, n, field);
    int h, m, len = 0;

    if (s == NULL)
        return false;
    if (sscanf(s, "%2d:%2d%n", &h, &m, &len) != 2 || s[len] != '\0' || len != 5 || h < 0 ||
        h > 23 || m < 0 || m > 59)
        return ms__yerr(y, n, field, "'%s': a time of day is HH:MM (00:00..23:59)", s);
    *out = h * 60 + m;
    return true;
}

static bool read_windows(ms__ydoc_t *y, ms_k8s_cfg_t *c, const yaml_node_t *n)
{
    switching_t *sw = c->sw;
    char f[MS__K8S_FIELD * 2];
    int i, j, len;

    if (!ms__yseq(y, n, "switching.windows"))
        return false;
    len = ms__yseq_len(n);
    if ((sw->win = calloc((size_t)len + 1, sizeof(*sw->win))) == NULL)
        return ms__yerr(y, n, "switching.windows", "out of memory");
    for (i = 0; i < len; i++) {
        const yaml_node_t *w = ms__yseq_item(y, n, i);
        ms_k8s_window_t *win = &sw->win[i];
        bool have_from = false, have_to = false;

        ms__kfield(f, sizeof(f), "switching.windows[%d]", i);
        if (w == NULL || !ms__ymap(y, w, f))
            return false;
        for (j = 0; j < ms__ymap_len(w); j++) {
            const yaml_node_t *v;
            const char *k = ms__ymap_key(y, w, j, &v, f), *s;
            int li;

            if (k == NULL)
                return false;
            ms__kfield(f, sizeof(f), "switching.windows[%d].%s", i, k);
            if (strcmp(k, "layout") == 0) {
                if ((s = ms__yscalar(y, v, f)) == NULL)
                    return false;
                if ((li = find_layout(c, s)) < 0)
                    return ms__yerr(y, v, f, "unknown layout '%s'", s);
                win->layout = c->lay[li].name;
            } else if (strcmp(k, "from") == 0) {
                if (!read_hhmm(y, v, f, &win->from_min))
                    return false;
                have_from = true;
            } else if (strcmp(k, "to") == 0) {
                if (!read_hhmm(y, v, f, &win->to_min))
                    return false;
                have_to = true;
            } else {
                return ms__yerr(y, v, f, "unknown key '%s' (expected layout, from, to)", k);
            }
        }
        ms__kfield(f, sizeof(f), "switching.windows[%d]", i);
        if (win->layout == NULL || !have_from || !have_to)
            return ms__yerr(y, w, f, "a window needs layout, from and to");
        if (win->from_min == win->to_min)
            return ms__yerr(y, w, f, "from and to are the same time");
        sw->pub.nwindows++;
    }
    return true;
}

/* The switching section: candidates, windows and the controller's limits. */
static bool read_switching(ms__ydoc_t *y, ms_k8s_cfg_t *c, const yaml_node_t *n)
{
    const yaml_node_t *lays = NULL, *wins = NULL;
    switching_t *sw;
    char f[MS__K8S_FIELD * 2];
    int i, j;

    if (!ms__ymap(y, n, "switching"))
        return false;
    if ((sw = c->sw = calloc(1, sizeof(*sw))) == NULL)
        return ms__yerr(y, n, "switching", "out of memory");
    sw->line = ms__ynode_line(n);
    sw->pub.hysteresis_s = 900;
    sw->pub.per_hour = 2;
    sw->pub.drain_timeout_s = 1800;
    sw->pub.apply_timeout_s = 600;
    sw->pub.min_gain = 7;
    for (i = 0; i < ms__ymap_len(n); i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, n, i, &v, "switching");
        long x;

        if (k == NULL)
            return false;
        ms__kfield(f, sizeof(f), "switching.%s", k);
        if (strcmp(k, "layouts") == 0) {
            lays = v;
        } else if (strcmp(k, "windows") == 0) {
            wins = v;
        } else if (strcmp(k, "hysteresis") == 0 || strcmp(k, "drain-timeout") == 0 ||
                   strcmp(k, "apply-timeout") == 0) {
            if (!ms__yint(y, v, f, 0, 7 * 86400, &x))
                return false;
            *(k[0] == 'h' ? &sw->pub.hysteresis_s : k[0] == 'd' ? &sw->pub.drain_timeout_s
                                                                 : &sw->pub.apply_timeout_s) = (double)x;
        } else if (strcmp(k, "switches-per-hour") == 0) {
            if (!ms__yint(y, v, f, 1, 64, &x))
                return false;
            sw->pub.per_hour = (int)x;
        } else if (strcmp(k, "min-gain") == 0) {
            if (!ms__yint(y, v, f, 0, 1000000, &x))
                return false;
            sw->pub.min_gain = (int)x;
        } else if (strcmp(k, "evict") == 0) {
            if (!ms__ybool(y, v, f, &sw->pub.evict))
                return false;
        } else {
            return ms__yerr(y, v, f, "unknown key '%s' (expected layouts, windows, hysteresis, "
                            "switches-per-hour, drain-timeout, apply-timeout, evict, min-gain)", k);
        }
    }
    if ((sw->cand = calloc((size_t)c->nlay, sizeof(*sw->cand))) == NULL ||
        (sw->names = calloc((size_t)c->nlay, sizeof(*sw->names))) == NULL)
        return ms__yerr(y, n, "switching", "out of memory");
    if (lays == NULL) {
        for (i = 0; i < c->nlay; i++)
            sw->cand[sw->pub.nlayouts++] = i;
    } else {
        if (!ms__yseq(y, lays, "switching.layouts"))
            return false;
        for (i = 0; i < ms__yseq_len(lays); i++) {
            const yaml_node_t *v = ms__yseq_item(y, lays, i);
            const char *s;
            int li;

            ms__kfield(f, sizeof(f), "switching.layouts[%d]", i);
            if (v == NULL || (s = ms__yscalar(y, v, f)) == NULL)
                return false;
            if ((li = find_layout(c, s)) < 0)
                return ms__yerr(y, v, f, "unknown layout '%s'", s);
            for (j = 0; j < sw->pub.nlayouts; j++)
                if (sw->cand[j] == li)
                    return ms__yerr(y, v, f, "layout '%s' is listed twice", s);
            sw->cand[sw->pub.nlayouts++] = li;
        }
        if (sw->pub.nlayouts == 0)
            return ms__yerr(y, lays, "switching.layouts", "no layouts to switch between");
    }
    for (i = 0; i < sw->pub.nlayouts; i++) {
        const layout_t *l = &c->lay[sw->cand[i]];
        sw->names[i] = l->name;
        /* the controller counts instances per GPU: a layout must cut every
         * GPU the same way */
        if (l->e != NULL && (l->n != 1 || !l->e[0].all))
            return ms__yerr(y, lays != NULL ? lays : n, "switching.layouts",
                            "layout %s gives GPUs different instances (devices other than all); "
                            "switching needs layouts that cut every GPU the same way", l->name);
    }
    sw->pub.layouts = sw->names;
    if (wins != NULL && !read_windows(y, c, wins))
        return false;
    sw->pub.windows = sw->win;
    for (i = 0; i < sw->pub.nwindows; i++) {
        for (j = 0; j < sw->pub.nlayouts && strcmp(sw->names[j], sw->win[i].layout) != 0; j++)
            ;
        if (j == sw->pub.nlayouts)
            return ms__yerr(y, wins, "switching.windows", "window layout %s is not a candidate "
                            "(switching.layouts)", sw->win[i].layout);
    }
    return true;
}

/* With switching, a MIG node's model gets a config for every candidate, and
 * the node's own layout must be one of them. */
static bool switch_confs(ms__ydoc_t *y, ms_k8s_cfg_t *c, node_t *nd)
{
    int i, conf;
    bool own = false;

    if (c->sw == NULL || nd->pub.mode != MS_K8S_MIG)
        return true;
    for (i = 0; i < c->sw->pub.nlayouts; i++) {
        if (!layout_conf(y, c, nd, c->sw->cand[i], &conf))
            return false;
        own |= c->sw->cand[i] == nd->lay;
    }
    if (!own)
        return ms__yerr(y, NULL, "switching.layouts", "node %s (line %ld) starts with layout %s, "
                        "which is not among the switching layouts", nd->name, nd->line, nd->layout);
    return true;
}

const ms_k8s_switching_t *ms_k8s_cfg_switching(const ms_k8s_cfg_t *c)
{
    return c->sw != NULL ? &c->sw->pub : NULL;
}

int ms_k8s_cfg_nconfigs(const ms_k8s_cfg_t *c) { return c->nconf; }

void ms_k8s_cfg_config(const ms_k8s_cfg_t *c, int i, ms_k8s_config_t *out)
{
    const mconf_t *mc = &c->conf[i];
    int k;

    memset(out, 0, sizeof(*out));
    out->name = mc->name;
    out->layout = mc->layout >= 0 ? c->lay[mc->layout].name : "all-disabled";
    out->model = mc->model;
    out->uniform = mc->model != NULL && mc->n == 1 && mc->e[0].all && mc->e[0].mig_enabled;
    if (!out->uniform)
        return;
    for (k = 0; k < mc->e[0].nprof && k < MS_MAX_PROFILES; k++) {
        out->prof[k] = mc->model->profiles[mc->idx[0][k]].name;
        out->count[k] = mc->e[0].count[k];
    }
    out->nprof = k;
}

static bool read_root(ms__ydoc_t *y, ms_k8s_cfg_t *c)
{
    const yaml_node_t *root = ms__ydoc_root(y), *nodes = NULL, *layouts = NULL, *ver = NULL;
    const yaml_node_t *sw = NULL;
    int i;

    if (!ms__ymap(y, root, ""))
        return false;
    for (i = 0; i < ms__ymap_len(root); i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, root, i, &v, "");
        if (k == NULL)
            return false;
        if (strcmp(k, "version") == 0)
            ver = v;
        else if (strcmp(k, "layouts") == 0)
            layouts = v;
        else if (strcmp(k, "nodes") == 0)
            nodes = v;
        else if (strcmp(k, "switching") == 0)
            sw = v;
        else
            return ms__yerr(y, v, k, "unknown key '%s' (expected version, layouts, nodes, switching)",
                            k);
    }
    if (ver == NULL)
        return ms__yerr(y, root, "version", "missing version (write version: v1)");
    {
        const char *s = ms__yscalar(y, ver, "version");
        if (s == NULL)
            return false;
        if (strcmp(s, "v1") != 0)
            return ms__yerr(y, ver, "version", "'%s': only v1 is known", s);
    }
    if (layouts != NULL ? !read_layouts(y, c, layouts) : !builtin_layouts(y, c))
        return false;
    if (sw != NULL && !read_switching(y, c, sw))
        return false;
    if (nodes == NULL)
        return ms__yerr(y, root, "nodes", "missing nodes");
    if (!ms__yseq(y, nodes, "nodes"))
        return false;
    if ((c->nnodes = ms__yseq_len(nodes)) == 0)
        return ms__yerr(y, nodes, "nodes", "no nodes");
    if ((c->nodes = calloc((size_t)c->nnodes, sizeof(*c->nodes))) == NULL ||
        (c->conf = calloc((size_t)c->nnodes * (size_t)c->nlay + 1, sizeof(*c->conf))) == NULL ||
        (c->plug = calloc((size_t)c->nnodes, sizeof(*c->plug))) == NULL)
        return ms__yerr(y, nodes, "nodes", "out of memory");
    for (i = 0; i < c->nnodes; i++)
        if (!read_node(y, c, ms__yseq_item(y, nodes, i), i))
            return false;
    for (i = 0; i < c->nnodes; i++)
        if (!check_devices(y, c, &c->nodes[i]) || !node_conf(y, c, &c->nodes[i]) ||
            !switch_confs(y, c, &c->nodes[i]))
            return false;
    if (!name_confs(y, c))
        return false;
    for (i = 0; i < c->nnodes; i++) {
        node_plugin(c, &c->nodes[i]);
        c->nodes[i].pub.mig_config = c->conf[c->nodes[i].conf].name;
        c->nodes[i].pub.plugin_config = c->plug[c->nodes[i].plug].name;
    }
    return true;
}

ms_status_t ms_k8s_cfg_read(const char *path, ms_k8s_cfg_t **out, ms_diag_t *diag)
{
    ms__ydoc_t y;
    ms_k8s_cfg_t *c;
    ms_status_t st;

    *out = NULL;
    if ((st = ms__ydoc_load(&y, path, diag)) != MS_OK)
        return st;
    if ((c = calloc(1, sizeof(*c))) == NULL) {
        ms__ydoc_free(&y);
        return MS_ENOMEM;
    }
    if (!read_root(&y, c)) {
        ms__ydoc_free(&y);
        ms_k8s_cfg_free(c);
        return strstr(diag != NULL ? diag->msg : "", "out of memory") != NULL ? MS_ENOMEM
                                                                              : MS_EINVAL;
    }
    ms__ydoc_free(&y);
    *out = c;
    return MS_OK;
}
