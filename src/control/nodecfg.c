/* nodecfg.c - the node-configuration controller (include/migsched/nodecfg.h).
 *
 * Per node a small state machine, STEADY -> DRAINING -> APPLYING -> STEADY
 * (REVERTING and BROKEN when mig-manager fails), driven only by what the
 * driver observes; the controller's own memory is the phase, the target and
 * the recent switch times, and all of it can be rebuilt from the node's
 * labels and our cordon annotation after a restart.
 *
 * Demand is shared out: nodes already switching claim what their target
 * covers first, then steady nodes in the order they were observed, so one
 * burst of uncovered 7g requests switches as many nodes as it needs and no
 * more.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/nodecfg.h"

#include "core/idmap.h"

#define MAX_SLICES 8                   /* the widest compute axis (B200 class) */
#define MAX_BUDGET 64                  /* max_switches_per_hour is bounded by it */

typedef struct layout {
    char *name, *model;
    int cap[MAX_SLICES + 1];           /* instances per GPU by compute slices */
    int from, to;                      /* minutes of day, -1 none */
} layout_t;

typedef struct node {
    char *name, *model;
    int ngpus;
    char *config, *state;              /* observed labels, NULL absent */
    bool unsched, ours;
    int gpu_pods;
    bool seen, known;                  /* observed since the last step; phase valid */
    ms_nodecfg_phase_t phase;
    char *target, *prev;               /* switching to / from */
    double since;                      /* the phase began */
    double last_change;                /* the layout last changed (or first sight) */
    double switched_at;                /* the last switch completed, -1 never */
    double hold_until;                 /* no new switch before (after a failure) */
    double starts[MAX_BUDGET];         /* recent switch starts, a ring */
    int nstarts, head;
    long switches, failures, giveups;
} node_t;

typedef struct demand {
    char *model;
    long d[MAX_SLICES + 1];            /* requests by compute slices */
} demand_t;

struct ms_nodecfg {
    ms_nodecfg_cfg_t cfg;
    layout_t *lay;
    int nlay, caplay;
    node_t *node;
    int nnode, capnode;
    ms__idmap_t by_name;               /* node name -> index into node */
    demand_t *dem;
    int ndem, capdem;
    ms_nodecfg_act_t *act;
    int nact, capact;
};

void ms_nodecfg_cfg_defaults(ms_nodecfg_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->hysteresis_s = 900;
    cfg->max_switches_per_hour = 2;
    cfg->drain_timeout_s = 1800;
    cfg->apply_timeout_s = 600;
    cfg->evict = false;
    cfg->min_gain = 7;
    cfg->utc_offset_min = 0;
    cfg->settle_s = 300;
    cfg->failure_backoff_s = 3600;
}

const char *ms_nodecfg_phase_name(ms_nodecfg_phase_t p)
{
    switch (p) {
    case MS_NODECFG_STEADY: return "steady";
    case MS_NODECFG_DRAINING: return "draining";
    case MS_NODECFG_APPLYING: return "applying";
    case MS_NODECFG_REVERTING: return "reverting";
    case MS_NODECFG_BROKEN: return "broken";
    }
    return "unknown";
}

static bool finite_nonneg(double v)
{
    return isfinite(v) && v >= 0;
}

static const char *node_name(const void *ctx, int32_t v);

ms_status_t ms_nodecfg_create(const ms_nodecfg_cfg_t *cfg, ms_nodecfg_t **out, ms_diag_t *diag)
{
    ms_nodecfg_t *nc;

    *out = NULL;
    if (!finite_nonneg(cfg->hysteresis_s) || !finite_nonneg(cfg->drain_timeout_s) ||
        !finite_nonneg(cfg->apply_timeout_s) || !finite_nonneg(cfg->settle_s) ||
        !finite_nonneg(cfg->failure_backoff_s)) {
        ms_diag_set(diag, NULL, 0, "hysteresis_s", "times must be finite and >= 0");
        return MS_ERANGE;
    }
    if (cfg->max_switches_per_hour < 1 || cfg->max_switches_per_hour > MAX_BUDGET) {
        ms_diag_set(diag, NULL, 0, "max_switches_per_hour", "must be in [1, %d]", MAX_BUDGET);
        return MS_ERANGE;
    }
    if (cfg->min_gain < 0 || cfg->min_gain > 1000000) {
        ms_diag_set(diag, NULL, 0, "min_gain", "must be in [0, 1000000]");
        return MS_ERANGE;
    }
    if (cfg->utc_offset_min < -24 * 60 || cfg->utc_offset_min > 24 * 60) {
        ms_diag_set(diag, NULL, 0, "utc_offset_min", "must be in [-1440, 1440]");
        return MS_ERANGE;
    }
    nc = calloc(1, sizeof(*nc));
    if (!nc)
        return MS_ENOMEM;
    nc->cfg = *cfg;
    ms__idmap_init(&nc->by_name, node_name, nc, NULL, NULL);
    *out = nc;
    return MS_OK;
}

static void node_clear(node_t *n)
{
    free(n->name);
    free(n->model);
    free(n->config);
    free(n->state);
    free(n->target);
    free(n->prev);
}

void ms_nodecfg_destroy(ms_nodecfg_t *nc)
{
    int i;

    if (!nc)
        return;
    for (i = 0; i < nc->nlay; i++) {
        free(nc->lay[i].name);
        free(nc->lay[i].model);
    }
    for (i = 0; i < nc->nnode; i++)
        node_clear(&nc->node[i]);
    for (i = 0; i < nc->ndem; i++)
        free(nc->dem[i].model);
    free(nc->lay);
    free(nc->node);
    ms__idmap_fini(&nc->by_name);
    free(nc->dem);
    free(nc->act);
    free(nc);
}

/* Grow an array of elem-sized items to hold one more. */
static bool grow(void **v, int *cap, int n, size_t elem)
{
    void *nv;
    int nc;

    if (n < *cap)
        return true;
    nc = *cap ? *cap * 2 : 8;
    if (nc > (1 << 24))
        return false;
    nv = realloc(*v, (size_t)nc * elem);
    if (!nv)
        return false;
    *v = nv;
    *cap = nc;
    return true;
}

static bool streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* "3g.20gb" -> 3; -1 when the name does not start with N 'g'. */
static int profile_slices(const char *p)
{
    int v = 0, i = 0;

    while (p[i] >= '0' && p[i] <= '9' && i < 2)
        v = v * 10 + (p[i++] - '0');
    if (i == 0 || p[i] != 'g' || v < 1 || v > MAX_SLICES)
        return -1;
    return v;
}

static bool name_ok(const char *s, size_t max)
{
    return s && s[0] && strlen(s) <= max;
}

ms_status_t ms_nodecfg_add_layout(ms_nodecfg_t *nc, const char *name, const char *model,
                                  const char *const *profiles, const int *counts, int n,
                                  int from_min, int to_min, ms_diag_t *diag)
{
    layout_t L;
    int i;

    memset(&L, 0, sizeof(L));
    /* Label values are at most 63 characters (Kubernetes). */
    if (!name_ok(name, 63)) {
        ms_diag_set(diag, NULL, 0, "name", "a layout name must be 1..63 characters");
        return MS_EINVAL;
    }
    if (!name_ok(model, 63)) {
        ms_diag_set(diag, NULL, 0, "model", "layout %s: a model is required", name);
        return MS_EINVAL;
    }
    for (i = 0; i < nc->nlay; i++)
        if (streq(nc->lay[i].name, name) && streq(nc->lay[i].model, model)) {
            ms_diag_set(diag, NULL, 0, "name", "layout %s is given twice for %s", name, model);
            return MS_EEXIST;
        }
    if ((from_min < 0) != (to_min < 0) || from_min >= 1440 || to_min >= 1440 ||
        (from_min >= 0 && from_min == to_min)) {
        ms_diag_set(diag, NULL, 0, "window",
                    "layout %s: a window is two different minutes of the day in [0, 1440), or none",
                    name);
        return MS_ERANGE;
    }
    if (n < 0 || (n > 0 && (!profiles || !counts))) {
        ms_diag_set(diag, NULL, 0, "mig-devices", "layout %s: bad profile list", name);
        return MS_EINVAL;
    }
    for (i = 0; i < n; i++) {
        int c = profiles[i] ? profile_slices(profiles[i]) : -1;
        if (c < 0) {
            ms_diag_set(diag, NULL, 0, "mig-devices",
                        "layout %s: profile '%s' does not start with its compute slices (e.g. 3g.20gb)",
                        name, profiles[i] ? profiles[i] : "");
            return MS_EINVAL;
        }
        if (counts[i] < 0 || counts[i] > MAX_SLICES) {
            ms_diag_set(diag, NULL, 0, "mig-devices", "layout %s: count of %s must be in [0, %d]",
                        name, profiles[i], MAX_SLICES);
            return MS_ERANGE;
        }
        L.cap[c] += counts[i];
    }
    if (!grow((void **)&nc->lay, &nc->caplay, nc->nlay, sizeof(*nc->lay)))
        return MS_ENOMEM;
    L.name = strdup(name);
    L.model = strdup(model);
    if (!L.name || !L.model) {
        free(L.name);
        free(L.model);
        return MS_ENOMEM;
    }
    L.from = from_min;
    L.to = to_min;
    nc->lay[nc->nlay++] = L;
    return MS_OK;
}

/* --- nodes by name --------------------------------------------------------- */

static const char *node_name(const void *ctx, int32_t v)
{
    return ((const ms_nodecfg_t *)ctx)->node[v].name;
}

static int node_find(const ms_nodecfg_t *nc, const char *name)
{
    return ms__idmap_find(&nc->by_name, name);
}

/* Replace *dst by a copy of src (NULL allowed). */
static bool set_str(char **dst, const char *src)
{
    char *c = NULL;

    if (streq(*dst, src))
        return true;
    if (src && !(c = strdup(src)))
        return false;
    free(*dst);
    *dst = c;
    return true;
}

ms_status_t ms_nodecfg_observe(ms_nodecfg_t *nc, const ms_nodecfg_obs_t *o, ms_diag_t *diag)
{
    node_t *n;
    int k;

    if (!name_ok(o->name, 253)) {
        ms_diag_set(diag, NULL, 0, "name", "a node name must be 1..253 characters");
        return MS_EINVAL;
    }
    if (!name_ok(o->model, 63) || o->ngpus < 1 || o->ngpus > 1024 || o->gpu_pods < 0) {
        ms_diag_set(diag, NULL, 0, "model", "node %s: a model, 1..1024 GPUs and gpu_pods >= 0",
                    o->name);
        return MS_EINVAL;
    }
    k = node_find(nc, o->name);
    if (k < 0) {
        if (!grow((void **)&nc->node, &nc->capnode, nc->nnode, sizeof(*nc->node)))
            return MS_ENOMEM;
        n = &nc->node[nc->nnode];
        memset(n, 0, sizeof(*n));
        if (!(n->name = strdup(o->name)))
            return MS_ENOMEM;
        if (ms__idmap_put(&nc->by_name, nc->nnode) != 0) {
            free(n->name);
            return MS_ENOMEM;
        }
        nc->nnode++;
    } else {
        n = &nc->node[k];
    }
    if (!set_str(&n->model, o->model) || !set_str(&n->config, o->config) ||
        !set_str(&n->state, o->config_state))
        return MS_ENOMEM;
    n->ngpus = o->ngpus;
    n->unsched = o->unschedulable;
    n->ours = o->cordoned_by_us;
    n->gpu_pods = o->gpu_pods;
    n->seen = true;
    return MS_OK;
}

ms_status_t ms_nodecfg_demand(ms_nodecfg_t *nc, const char *model, int slices, int count)
{
    int i;

    if (!name_ok(model, 63) || slices < 1 || slices > MAX_SLICES || count < 0)
        return MS_EINVAL;
    for (i = 0; i < nc->ndem; i++)
        if (streq(nc->dem[i].model, model))
            break;
    if (i == nc->ndem) {
        if (!grow((void **)&nc->dem, &nc->capdem, nc->ndem, sizeof(*nc->dem)))
            return MS_ENOMEM;
        memset(&nc->dem[i], 0, sizeof(nc->dem[i]));
        if (!(nc->dem[i].model = strdup(model)))
            return MS_ENOMEM;
        nc->ndem++;
    }
    if (nc->dem[i].d[slices] > (long)1 << 40)
        return MS_ERANGE;
    nc->dem[i].d[slices] += count;
    return MS_OK;
}

/* --- choosing a layout ------------------------------------------------------ */

static const layout_t *layout_find(const ms_nodecfg_t *nc, const char *model, const char *name)
{
    int i;

    for (i = 0; i < nc->nlay; i++)
        if (streq(nc->lay[i].model, model) && streq(nc->lay[i].name, name))
            return &nc->lay[i];
    return NULL;
}

static bool in_window(const layout_t *L, int minute)
{
    if (L->from < 0)
        return false;
    if (L->from < L->to)
        return minute >= L->from && minute < L->to;
    return minute >= L->from || minute < L->to;            /* wraps past midnight */
}

static long *demand_of(ms_nodecfg_t *nc, const char *model)
{
    int i;

    for (i = 0; i < nc->ndem; i++)
        if (streq(nc->dem[i].model, model))
            return nc->dem[i].d;
    return NULL;
}

/* Compute slices of demand d that n GPUs of layout L host. */
static long covered(const layout_t *L, int ngpus, const long *d)
{
    long s = 0;
    int c;

    if (!L || !d)
        return 0;
    for (c = 1; c <= MAX_SLICES; c++) {
        long cap = (long)L->cap[c] * ngpus;
        s += (long)c * (d[c] < cap ? d[c] : cap);
    }
    return s;
}

static void claim(const layout_t *L, int ngpus, long *d)
{
    int c;

    if (!L || !d)
        return;
    for (c = 1; c <= MAX_SLICES; c++) {
        long cap = (long)L->cap[c] * ngpus;
        d[c] -= d[c] < cap ? d[c] : cap;
    }
}

/* Claim what is still free of a node's layout: its GPU pods are taken to
 * fill the smallest instances first (the controller does not know which
 * instance each pod holds; this errs toward claiming the large ones, so
 * toward switching less). */
static void claim_free(const layout_t *L, int ngpus, int used, long *d)
{
    int c;

    if (!L || !d)
        return;
    for (c = 1; c <= MAX_SLICES; c++) {
        long cap = (long)L->cap[c] * ngpus, take = used < cap ? used : cap;
        used -= (int)take;
        cap -= take;
        d[c] -= d[c] < cap ? d[c] : cap;
    }
}

/* The layout node n should run now against the remaining demand d, or NULL
 * to keep what it has (see the header's rule). */
static const layout_t *choose(const ms_nodecfg_t *nc, const node_t *n, int minute, const long *d)
{
    const layout_t *best = NULL, *cur;
    long bestv = -1, curv;
    int i;

    for (i = 0; i < nc->nlay; i++)
        if (streq(nc->lay[i].model, n->model) && in_window(&nc->lay[i], minute))
            return &nc->lay[i];
    if (!d)
        return NULL;
    for (i = 0; i < nc->nlay; i++) {
        const layout_t *L = &nc->lay[i];
        long v;
        if (!streq(L->model, n->model))
            continue;
        v = covered(L, n->ngpus, d);
        if (v > bestv) {
            bestv = v;
            best = L;
        }
    }
    cur = n->config ? layout_find(nc, n->model, n->config) : NULL;
    curv = covered(cur, n->ngpus, d);
    if (!best || best == cur || bestv < curv + nc->cfg.min_gain || bestv == 0)
        return NULL;
    return best;
}

/* --- actions ----------------------------------------------------------------- */

static ms_status_t act(ms_nodecfg_t *nc, ms_nodecfg_act_kind_t kind, const node_t *n,
                       const char *config, const char *why)
{
    ms_nodecfg_act_t *a;
    size_t len;

    if (!grow((void **)&nc->act, &nc->capact, nc->nact, sizeof(*nc->act)))
        return MS_ENOMEM;
    a = &nc->act[nc->nact++];
    a->kind = kind;
    a->node = n->name;
    a->config = config;
    len = strlen(why);
    if (len >= sizeof(a->reason))
        len = sizeof(a->reason) - 1;
    memcpy(a->reason, why, len);
    a->reason[len] = '\0';
    return MS_OK;
}

static int recent_starts(const node_t *n, double now)
{
    int i, c = 0;

    for (i = 0; i < n->nstarts; i++)
        if (now - n->starts[i] < 3600)
            c++;
    return c;
}

static void note_start(node_t *n, double now, int budget)
{
    if (n->nstarts < budget) {
        n->starts[n->nstarts++] = now;
    } else {
        n->starts[n->head] = now;
        n->head = (n->head + 1) % budget;
    }
}

static ms_status_t to_steady(ms_nodecfg_t *nc, node_t *n, double now, const char *why)
{
    n->phase = MS_NODECFG_STEADY;
    n->since = now;
    n->last_change = now;
    free(n->target);
    n->target = NULL;
    free(n->prev);
    n->prev = NULL;
    return act(nc, MS_NODECFG_UNCORDON, n, NULL, why);
}

/* After a restart: rebuild a node's phase from what it shows. */
static ms_status_t first_sight(node_t *n, double now)
{
    n->known = true;
    n->last_change = now;                  /* unknown history: keep it a while */
    n->switched_at = -1;
    n->since = now;
    n->phase = MS_NODECFG_STEADY;
    if (n->ours && n->unsched) {
        /* We cordoned it: a switch was under way. A pending label means the
         * label was set (APPLYING); otherwise it was draining toward a
         * target the next step chooses again. */
        if (n->config && (!n->state || streq(n->state, "pending") || streq(n->state, "rebooting"))) {
            n->phase = MS_NODECFG_APPLYING;
            if (!set_str(&n->target, n->config))
                return MS_ENOMEM;
        } else {
            n->phase = MS_NODECFG_DRAINING;
        }
        if (!set_str(&n->prev, n->config))
            return MS_ENOMEM;
    }
    return MS_OK;
}

static ms_status_t step_switching(ms_nodecfg_t *nc, node_t *n, double now, int minute)
{
    const ms_nodecfg_cfg_t *cfg = &nc->cfg;
    long *d = demand_of(nc, n->model);
    const layout_t *want;

    switch (n->phase) {
    case MS_NODECFG_DRAINING:
        want = choose(nc, n, minute, d);
        if (!want || streq(want->name, n->prev))
            return to_steady(nc, n, now, "the switch is no longer needed");
        if (!set_str(&n->target, want->name))
            return MS_ENOMEM;
        claim(want, n->ngpus, d);
        if (!n->unsched)                   /* someone undid the cordon: redo it */
            return act(nc, MS_NODECFG_CORDON, n, NULL, "draining for a layout switch");
        if (n->gpu_pods == 0) {
            n->phase = MS_NODECFG_APPLYING;
            n->since = now;
            return act(nc, MS_NODECFG_SET_CONFIG, n, n->target, "drained: switching the layout");
        }
        if (now - n->since >= cfg->drain_timeout_s) {
            if (cfg->evict) {
                n->since = now;            /* evict again only after another timeout */
                return act(nc, MS_NODECFG_EVICT, n, NULL, "drain timed out: evicting GPU pods");
            }
            n->giveups++;
            return to_steady(nc, n, now, "drain timed out: keeping the layout (eviction is off)");
        }
        return MS_OK;
    case MS_NODECFG_APPLYING:
        if (streq(n->state, "success") && streq(n->config, n->target)) {
            n->switches++;
            n->switched_at = now;
            claim(layout_find(nc, n->model, n->target), n->ngpus, d);
            return to_steady(nc, n, now, "layout switched");
        }
        if (!streq(n->config, n->target)) {
            claim(layout_find(nc, n->model, n->target), n->ngpus, d);
            return act(nc, MS_NODECFG_SET_CONFIG, n, n->target, "the label was changed: set again");
        }
        if (streq(n->state, "failed") || now - n->since >= cfg->apply_timeout_s) {
            n->failures++;
            n->since = now;
            if (n->prev && !streq(n->prev, n->target)) {
                n->phase = MS_NODECFG_REVERTING;
                return act(nc, MS_NODECFG_SET_CONFIG, n, n->prev,
                           streq(n->state, "failed") ? "mig-manager failed: reverting"
                                                     : "mig-manager timed out: reverting");
            }
            n->phase = MS_NODECFG_BROKEN;
            return MS_OK;
        }
        claim(layout_find(nc, n->model, n->target), n->ngpus, d);
        return MS_OK;
    case MS_NODECFG_REVERTING:
        if (streq(n->state, "success") && streq(n->config, n->prev)) {
            n->hold_until = now + nc->cfg.failure_backoff_s;
            return to_steady(nc, n, now, "reverted to the previous layout");
        }
        if (!streq(n->config, n->prev))
            return act(nc, MS_NODECFG_SET_CONFIG, n, n->prev, "the label was changed: revert again");
        if (streq(n->state, "failed") || now - n->since >= cfg->apply_timeout_s) {
            n->failures++;
            n->phase = MS_NODECFG_BROKEN;  /* stays cordoned for an operator */
        }
        return MS_OK;
    case MS_NODECFG_BROKEN:
        if (!n->unsched) {                 /* an operator uncordoned it */
            n->phase = MS_NODECFG_STEADY;
            n->last_change = now;
            n->hold_until = now + nc->cfg.failure_backoff_s;
            free(n->target);
            n->target = NULL;
        }
        return MS_OK;
    case MS_NODECFG_STEADY:
        break;
    }
    return MS_OK;
}

static ms_status_t step_steady(ms_nodecfg_t *nc, node_t *n, double now, int minute)
{
    long *d = demand_of(nc, n->model);
    const layout_t *want;

    if (n->unsched || streq(n->state, "pending") || streq(n->state, "rebooting"))
        return MS_OK;                      /* an admin's cordon, or a switch not ours */
    if (now - n->last_change < nc->cfg.hysteresis_s || now < n->hold_until)
        return MS_OK;
    if (recent_starts(n, now) >= nc->cfg.max_switches_per_hour)
        return MS_OK;
    want = choose(nc, n, minute, d);
    if (!want || streq(want->name, n->config))
        return MS_OK;
    if (!set_str(&n->target, want->name) || !set_str(&n->prev, n->config))
        return MS_ENOMEM;
    claim(want, n->ngpus, d);
    note_start(n, now, nc->cfg.max_switches_per_hour);
    n->phase = MS_NODECFG_DRAINING;
    n->since = now;
    return act(nc, MS_NODECFG_CORDON, n, NULL, "draining for a layout switch");
}

static const char *kept_name(const void *ctx, int32_t v)
{
    return ((const char *const *)ctx)[v];
}

/* Forget the nodes that were not observed. The map of the nodes kept, by
 * their new indices, is built first, so that out of memory changes
 * nothing; then the table closes up. */
static ms_status_t forget_unseen(ms_nodecfg_t *nc)
{
    const char **kept;
    ms__idmap_t m;
    int i, w;

    for (i = w = 0; i < nc->nnode; i++)
        w += nc->node[i].seen;
    if (w == nc->nnode)
        return MS_OK;
    if ((kept = calloc((size_t)w + 1, sizeof(*kept))) == NULL)
        return MS_ENOMEM;
    for (i = w = 0; i < nc->nnode; i++)
        if (nc->node[i].seen)
            kept[w++] = nc->node[i].name;
    ms__idmap_init(&m, kept_name, kept, NULL, NULL);
    for (i = 0; i < w; i++)
        if (ms__idmap_put(&m, i) != 0) {
            ms__idmap_fini(&m);
            free(kept);
            return MS_ENOMEM;
        }
    for (i = w = 0; i < nc->nnode; i++) {
        if (!nc->node[i].seen) {
            node_clear(&nc->node[i]);
            continue;
        }
        nc->node[w++] = nc->node[i];
    }
    nc->nnode = w;
    ms__idmap_fini(&nc->by_name);
    nc->by_name = m;
    nc->by_name.key = node_name;   /* the same names, now read from the table */
    nc->by_name.ctx = nc;
    free(kept);
    return MS_OK;
}

ms_status_t ms_nodecfg_step(ms_nodecfg_t *nc, double now, const ms_nodecfg_act_t **acts, int *n)
{
    ms_status_t st = MS_OK;
    double m;
    int i, minute;

    *acts = NULL;
    *n = 0;
    if (!isfinite(now) || now < 0)
        return MS_ERANGE;
    nc->nact = 0;
    if ((st = forget_unseen(nc)) != MS_OK)
        return st;
    m = fmod(floor(now / 60) + nc->cfg.utc_offset_min, 1440);
    if (m < 0)
        m += 1440;
    minute = (int)m;
    for (i = 0; i < nc->nnode && st == MS_OK; i++)
        if (!nc->node[i].known)
            st = first_sight(&nc->node[i], now);
    /* nodes that switched lately and nodes switching claim their demand
     * first, then steady ones in order */
    for (i = 0; i < nc->nnode; i++) {
        node_t *nd = &nc->node[i];
        if (nd->phase == MS_NODECFG_STEADY && nd->switched_at >= 0 &&
            now - nd->switched_at < nc->cfg.settle_s && nd->config)
            claim_free(layout_find(nc, nd->model, nd->config), nd->ngpus, nd->gpu_pods,
                       demand_of(nc, nd->model));
    }
    for (i = 0; i < nc->nnode && st == MS_OK; i++)
        if (nc->node[i].phase != MS_NODECFG_STEADY)
            st = step_switching(nc, &nc->node[i], now, minute);
    for (i = 0; i < nc->nnode && st == MS_OK; i++)
        if (nc->node[i].phase == MS_NODECFG_STEADY && nc->node[i].since < now)
            st = step_steady(nc, &nc->node[i], now, minute);
    for (i = 0; i < nc->nnode; i++)
        nc->node[i].seen = false;
    for (i = 0; i < nc->ndem; i++)
        memset(nc->dem[i].d, 0, sizeof(nc->dem[i].d));
    *acts = nc->act;
    *n = nc->nact;
    return st;
}

ms_status_t ms_nodecfg_node(const ms_nodecfg_t *nc, const char *name, ms_nodecfg_node_info_t *out)
{
    int k = node_find(nc, name);
    const node_t *n;

    memset(out, 0, sizeof(*out));
    if (k < 0)
        return MS_ENOENT;
    n = &nc->node[k];
    out->phase = n->phase;
    out->target = n->target;
    out->switches = n->switches;
    out->failures = n->failures;
    out->drain_giveups = n->giveups;
    return MS_OK;
}
