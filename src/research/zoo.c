/* zoo.c - running the workload zoo: variants, the grid of runs, statistics
 * (zoo.h; the report is zoo_report.c, the workloads zoo_gen.c). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/number.h"
#include "migsched/options.h"
#include "migsched/research/report.h"
#include "migsched/trace.h"
#include "research/report_int.h"
#include "research/zoo_int.h"

static const char *const DEFAULT_VARIANTS =
    "fa+,fa,first-fit,best-fit,fgd,mfi,static,node-profile,fa+/nomig,fa/nomig";
static const char *const QUICK_VARIANTS = "fa+,fa,first-fit";
static const char *const QUICK_WORKLOADS = "seed-4xA100,inference-4xA100,a30-8";

void ms_zoo_cfg_defaults(ms_zoo_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->seeds = 10;
    cfg->seed0 = 1;
    cfg->jobs_scale = 1.0;
    /* beta 0.05, creation 2 s, migration 10 s, EASY after 3600 s */
    ms_sim_cfg_defaults(&cfg->sim);
}

/* Copy token i of a comma list into buf; false past the end or if too long. */
static bool list_item(const char *list, int i, char *buf, size_t cap)
{
    const char *p = list, *e;
    size_t len;

    while (i-- > 0) {
        if ((p = strchr(p, ',')) == NULL)
            return false;
        p++;
    }
    e = strchr(p, ',');
    len = e != NULL ? (size_t)(e - p) : strlen(p);
    if (len == 0 || len >= cap)
        return false;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return true;
}

static int list_len(const char *list)
{
    int n = 1;

    for (; *list != '\0'; list++)
        n += *list == ',';
    return n;
}

static bool in_list(const char *list, const char *name)
{
    char buf[MS__ZOO_LABEL];
    int i;

    for (i = 0; list_item(list, i, buf, sizeof(buf)); i++)
        if (strcmp(buf, name) == 0)
            return true;
    return false;
}

/* A variant's short forms: alias[=value] is name=value, or name=fixed. */
typedef struct alias {
    const char *alias, *name, *fixed;
} alias_t;

static const alias_t ALIASES[] = {
    { "nomig", "no-migration", NULL }, { "nobal", "no-balance", NULL },
    { "fifo", "queue", "fifo" }, { "easy", "queue", "easy" },
    { "backfill", "queue", "backfill" }, { "t", "lb-threshold", NULL },
    { "mig", "migrate-s", NULL }, { "roomq", "room-queue-max", NULL },
    { "bound", "backfill-bound", NULL }, { "aging", "aging-rate", NULL },
    { "esterr", "estimate-error", NULL },
};

/* One "/" option of a variant, through the option table. */
static ms_status_t variant_opt(ms_sim_cfg_t *sc, char *opt, ms_diag_t *d)
{
    ms_opt_target_t t = ms_opt_target_sim(sc);
    char *eq = strchr(opt, '=');
    const char *name = opt, *value = NULL;
    size_t i;

    if (eq != NULL) {
        *eq = '\0';
        value = eq + 1;
    }
    for (i = 0; i < sizeof(ALIASES) / sizeof(ALIASES[0]); i++)
        if (strcmp(opt, ALIASES[i].alias) == 0) {
            name = ALIASES[i].name;
            if (ALIASES[i].fixed != NULL) {
                if (value != NULL)
                    break;   /* "fifo=x": not a form */
                value = ALIASES[i].fixed;
            } else if ((value == NULL) != (strncmp(name, "no-", 3) == 0)) {
                break;       /* "t" without a value, "nomig=x" */
            }
            return ms_opt_set(&t, name, value, d);
        }
    if (i < sizeof(ALIASES) / sizeof(ALIASES[0])) {
        ms_diag_set(d, NULL, 0, opt, "%s", ALIASES[i].fixed != NULL || value != NULL
                                                ? "takes no value" : "needs a value");
        return MS_EINVAL;
    }
    return ms_opt_set(&t, name, value, d);
}

/* "fa+/t=0.2/nomig" -> a variant. */
static ms_status_t parse_variant(const char *label, const ms_zoo_cfg_t *zc, ms__zoo_var_t *v,
                                 ms_diag_t *diag)
{
    char buf[MS__ZOO_LABEL], *p, *slash;
    size_t len = strlen(label);
    ms_diag_t d;

    ms_diag_clear(&d);
    if (len == 0 || len >= sizeof(buf))
        goto bad;
    memcpy(v->label, label, len + 1);
    memcpy(buf, label, len + 1);
    v->sc = zc->sim;
    if ((slash = strchr(buf, '/')) != NULL)
        *slash = '\0';
    if ((v->sc.sched.policy = ms_policy_find(buf)) == NULL)
        goto bad;
    for (p = slash; p != NULL; p = slash) {
        char *opt = p + 1;

        if ((slash = strchr(opt, '/')) != NULL)
            *slash = '\0';
        if (strncmp(opt, "node=", 5) == 0) {
            /* the zoo's own: the cluster cut into nodes of N GPUs (the
             * policies that see nodes: node-profile's layouts, gangs) on
             * the same traces */
            int64_t n;

            if (ms_number_int(opt + 5, 1, 1024, &n) != MS_OK) {
                ms_diag_set(&d, NULL, 0, "node", "'%.40s' is not an integer in [1, 1024]",
                            opt + 5);
                goto bad;
            }
            v->gpus_per_node = (int)n;
        } else if (variant_opt(&v->sc, opt, &d) != MS_OK) {
            goto bad;
        }
    }
    return MS_OK;
bad:
    if (d.msg[0] != '\0')
        ms_diag_set(diag, "--variants", 0, "variant", "bad variant '%s': %.60s: %.150s", label,
                    d.field, d.msg);
    else
        ms_diag_set(diag, "--variants", 0, "variant",
                    "bad variant '%s' (policy[/nomig|/nobal|/fifo|/easy|/backfill|/t=X|/mig=S|"
                    "/roomq=N|/node=N|/bound=S|/aging=R|/esterr=E|/NAME=VALUE]...)", label);
    return MS_EINVAL;
}

void ms_zoo_destroy(ms_zoo_t *z)
{
    if (z == NULL)
        return;
    free(z->wl);
    free(z->var);
    free(z->val);
    free(z);
}

static double t975(int df)
{
    static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
                                2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
                                2.052, 2.048, 2.045, 2.042 };

    if (df <= 0)
        return 0.0;
    return df <= 30 ? t[df] : 1.96;
}

void ms_zoo_stat(const ms_zoo_t *z, int w, int v, int m, double *mean, double *ci)
{
    double s = 0.0, ss = 0.0;
    int i, n = z->seeds;

    for (i = 0; i < n; i++)
        s += *ms__zoo_val(z, w, v, i, m);
    s /= n;
    for (i = 0; i < n; i++) {
        double d = *ms__zoo_val(z, w, v, i, m) - s;
        ss += d * d;
    }
    *mean = s;
    *ci = n > 1 ? t975(n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n) : 0.0;
}

int ms_zoo_nworkloads(const ms_zoo_t *z) { return z->nw; }
int ms_zoo_nvariants(const ms_zoo_t *z) { return z->nv; }
const ms_zoo_workload_t *ms_zoo_workload(const ms_zoo_t *z, int w) { return &z->wl[w]; }
const char *ms_zoo_variant(const ms_zoo_t *z, int v) { return z->var[v].label; }

int ms_zoo_find_variant(const ms_zoo_t *z, const char *label)
{
    int v;

    for (v = 0; v < z->nv; v++)
        if (strcmp(z->var[v].label, label) == 0)
            return v;
    return -1;
}

/* A tenant workload's tenants, declared as --tenant would (weight,
 * guarantee). */
static ms_status_t declare_tenants(ms_sim_cfg_t *sc, const ms_zoo_workload_t *w, ms_diag_t *diag)
{
    ms_opt_target_t tg = ms_opt_target_sim(sc);
    ms_status_t st;
    int k;

    for (k = 0; k < w->ntenants; k++) {
        char buf[160];

        snprintf(buf, sizeof(buf), "%s:weight=%.17g,guarantee=%ld", w->tenants[k].name,
                 w->tenants[k].weight, w->tenants[k].guarantee);
        if ((st = ms_opt_set(&tg, "tenant", buf, diag)) != MS_OK)
            return st;
    }
    return MS_OK;
}

/* The tenant metrics of a run (0 without tenants). */
static void tenant_vals(const ms_metrics_t *m, const ms_zoo_workload_t *w, double *val)
{
    int k;

    val[MS_ZOO_JAIN] = val[MS_ZOO_T1SHARE] = val[MS_ZOO_T1P99] = 0.0;
    val[MS_ZOO_JAINHMIN] = val[MS_ZOO_T1RCMAX] = val[MS_ZOO_T1RCMEAN] = val[MS_ZOO_T2SHARE] = 0.0;
    if (w->ntenants <= 0)
        return;
    val[MS_ZOO_JAIN] = m->jain_index;
    /* NAN (no whole hour after the first, no reclaim) is 0 here: the
     * seeds' mean and interval take numbers */
    val[MS_ZOO_JAINHMIN] = isfinite(m->jain_hourly_min) ? m->jain_hourly_min : 0.0;
    for (k = 0; k < m->ntenants; k++)
        if (strcmp(m->tenants[k].name, w->tenants[0].name) == 0) {
            const ms_tenant_metrics_t *t = &m->tenants[k];

            val[MS_ZOO_T1SHARE] = t->contended_share;
            val[MS_ZOO_T1P99] = t->p99_wait_s;
            val[MS_ZOO_T1RCMAX] = t->reclaims > 0 ? t->reclaim_max_s : 0.0;
            val[MS_ZOO_T1RCMEAN] = t->reclaims > 0 ? t->reclaim_mean_s : 0.0;
        } else if (w->ntenants > 1 && strcmp(m->tenants[k].name, w->tenants[1].name) == 0) {
            val[MS_ZOO_T2SHARE] = m->tenants[k].contended_share;
        }
}

static ms_status_t run_one(const ms_zoo_t *z, const ms__zoo_var_t *v, const ms_zoo_workload_t *w,
                           const ms_trace_t *tr, uint64_t seed, double *val, ms_diag_t *diag)
{
    ms_sim_cfg_t sc;
    ms_metrics_t m;
    ms_status_t st;

    sc = v->sc;
    sc.ngpus = w->ngpus;
    sc.gpus_per_node = v->gpus_per_node > 0 ? v->gpus_per_node : w->gpus_per_node;
    sc.estimate_seed = seed;
    if ((st = declare_tenants(&sc, w, diag)) != MS_OK || (st = ms_sim_run(&sc, tr, &m, diag)) != MS_OK)
        return st;
    val[MS_ZOO_MAKESPAN] = m.makespan_s;
    val[MS_ZOO_WAIT] = m.mean_wait_s;
    val[MS_ZOO_P99WAIT] = m.p99_wait_s;
    val[MS_ZOO_JCT] = m.mean_jct_s;
    val[MS_ZOO_EXEC] = m.mean_exec_s;
    val[MS_ZOO_MIGR] = (double)m.migrations;
    val[MS_ZOO_LB] = m.lower_bound_s;
    val[MS_ZOO_GAP] = m.lower_bound_s > 0.0 ? 100.0 * (m.makespan_s / m.lower_bound_s - 1.0) : 0.0;
    tenant_vals(&m, w, val);
    /* a run that leaves jobs stuck is not comparable: make it visible */
    if (m.jobs_completed + m.jobs_rejected < m.jobs_total)
        val[MS_ZOO_MAKESPAN] = val[MS_ZOO_JCT] = INFINITY;
    return MS_OK;
}

/* --traces DIR: one trace as DIR/WORKLOAD-SEED.csv */
static ms_status_t write_trace(const char *dir, const char *name, uint64_t seed,
                               const ms_trace_t *tr, ms_diag_t *diag)
{
    char file[MS__ZOO_LABEL + 32];
    FILE *f;
    ms_status_t st;

    snprintf(file, sizeof(file), "%s-%" PRIu64 ".csv", name, seed);
    if ((st = ms_report_mkdirs(dir)) != MS_OK || (st = ms_report_fopen(dir, file, &f)) != MS_OK) {
        ms_diag_set(diag, dir, 0, "traces", "cannot write %s", file);
        return st;
    }
    st = ms__report_closef(f, ms_trace_write(f, tr));
    if (st != MS_OK)
        ms_diag_set(diag, dir, 0, "traces", "cannot write %s", file);
    return st;
}

ms_status_t ms_zoo_run(const ms_zoo_cfg_t *cfg, ms_zoo_t **out, ms_diag_t *diag)
{
    const char *vars = cfg->variants, *only = cfg->only;
    const ms_zoo_workload_t *all;
    ms_zoo_t *z;
    ms_status_t st = MS_OK;
    int nall, i, v, s, w;
    long done = 0, total;
    char buf[MS__ZOO_LABEL];

    if (cfg->seeds <= 0 || cfg->seeds > 1000 || !(cfg->jobs_scale > 0.0))
        return MS_EINVAL;
    if ((z = calloc(1, sizeof(*z))) == NULL)
        return MS_ENOMEM;
    z->cfg = *cfg;
    if (cfg->quick) {
        if (vars == NULL)
            vars = QUICK_VARIANTS;
        if (only == NULL)
            only = QUICK_WORKLOADS;
        z->cfg.seeds = cfg->seeds < 2 ? cfg->seeds : 2;
        z->cfg.jobs_scale = cfg->jobs_scale * 0.25;
    }
    if (vars == NULL)
        vars = DEFAULT_VARIANTS;
    z->seeds = z->cfg.seeds;
    all = ms_zoo_workloads(&nall);
    z->nv = list_len(vars);
    if ((z->wl = calloc((size_t)nall, sizeof(*z->wl))) == NULL ||
        (z->var = calloc((size_t)z->nv, sizeof(*z->var))) == NULL) {
        st = MS_ENOMEM;
        goto fail;
    }
    for (i = 0; i < nall; i++)
        /* the tenant workloads only when named: the default set stays
         * the thirteen whose results docs/zoo.md gives */
        if (only == NULL ? all[i].ntenants == 0 : in_list(only, all[i].name)) {
            z->wl[z->nw] = all[i];
            z->wl[z->nw].jobs = (size_t)ceil((double)all[i].jobs * z->cfg.jobs_scale);
            if (z->wl[z->nw].jobs < 8)
                z->wl[z->nw].jobs = 8;
            z->nw++;
        }
    if (z->nw == 0 || (only != NULL && z->nw != list_len(only))) {
        ms_diag_set(diag, "--only", 0, "workload", "unknown workload in '%s'", only != NULL ? only : "");
        st = MS_EINVAL;
        goto fail;
    }
    for (v = 0; v < z->nv; v++)
        if (!list_item(vars, v, buf, sizeof(buf)) ||
            (st = parse_variant(buf, &z->cfg, &z->var[v], diag)) != MS_OK) {
            if (st == MS_OK)
                ms_diag_set(diag, "--variants", 0, "variant", "empty or too long item in '%s'", vars);
            st = MS_EINVAL;
            goto fail;
        }
    if ((z->val = calloc((size_t)z->nw * (size_t)z->nv * (size_t)z->seeds * MS_ZOO_NMETRIC,
                         sizeof(*z->val))) == NULL) {
        st = MS_ENOMEM;
        goto fail;
    }
    total = (long)z->nw * z->nv * z->seeds;
    for (w = 0; w < z->nw && st == MS_OK; w++) {
        const ms_model_t *mod = ms_model_find(z->wl[w].model);
        ms_geom_t *g = NULL;
        if (mod == NULL || (st = ms_geom_create(mod, 0, &g)) != MS_OK) {
            ms_diag_set(diag, "zoo", 0, "model", "unknown model '%s'", z->wl[w].model);
            st = MS_EINVAL;
            break;
        }
        for (s = 0; s < z->seeds && st == MS_OK; s++) {
            ms_trace_t *tr = NULL;
            if ((st = ms_zoo_trace(&z->wl[w], g, z->cfg.seed0 + (uint64_t)s, &tr, diag)) != MS_OK)
                break;
            if (cfg->trace_dir != NULL &&
                (st = write_trace(cfg->trace_dir, z->wl[w].name, z->cfg.seed0 + (uint64_t)s, tr,
                                  diag)) != MS_OK) {
                ms_trace_free(tr);
                break;
            }
            for (v = 0; v < z->nv && st == MS_OK; v++) {
                st = run_one(z, &z->var[v], &z->wl[w], tr, z->cfg.seed0 + (uint64_t)s,
                             ms__zoo_val(z, w, v, s, 0), diag);
                if (cfg->on_progress != NULL)
                    cfg->on_progress(cfg->ctx, ++done, total, z->wl[w].name);
            }
            ms_trace_free(tr);
        }
        ms_geom_destroy(g);
    }
    if (st != MS_OK)
        goto fail;
    *out = z;
    return MS_OK;
fail:
    ms_zoo_destroy(z);
    return st;
}
