/* options.c - the one table of policy, queue and simulator options
 * (options.h): name, type, range, default, help and the field each sets,
 * and the one parser every face calls. */
#include "migsched/options.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "migsched/number.h"

/* A row: what help shows, and where the value goes. off is the field's
 * offset in the scope's configuration (ms_policy_cfg_t, ms_sched_cfg_t or
 * ms_sim_cfg_t); also, when not 0, a second double field of the same
 * configuration that takes the same value (the simulator's costs, which
 * fa+ weighs its moves by); neg stores a boolean inverted (a field that
 * says "no_X"). */
typedef struct row {
    ms_opt_t o;
    size_t off;
    size_t also;
    bool neg;
    void (*choose)(void *field, int i);   /* CHOICE: store choice i */
} row_t;

static const char *const QUEUES[] = { "easy", "backfill", "fifo", NULL };
static const char *const INDEXES[] = { "bucket", "scan", NULL };

static void choose_queue(void *field, int i)
{
    static const ms_queue_mode_t MODE[] = { MS_QUEUE_EASY, MS_QUEUE_BACKFILL, MS_QUEUE_FIFO };

    *(ms_queue_mode_t *)field = MODE[i];
}

static void choose_index(void *field, int i)
{
    *(ms_index_mode_t *)field = i == 0 ? MS_INDEX_BUCKET : MS_INDEX_SCAN;
}

#define P(f) offsetof(ms_policy_cfg_t, f)
#define Q(f) offsetof(ms_sched_cfg_t, f)
#define S(f) offsetof(ms_sim_cfg_t, f)
#define POL MS_OPT_POLICY
#define QUE MS_OPT_QUEUE
#define SIM MS_OPT_SIM

/* In help order: the queue, the policies, the simulator. */
static const row_t ROWS[] = {
    { { "queue", QUE, MS_OPT_CHOICE, "Q", 0, 0, false, QUEUES, "easy",
        "the queue discipline (docs/sched.md): easy is backfill, and once the head has "
        "waited --backfill-bound only what keeps its reservation" },
      Q(queue), 0, false, choose_queue },
    { { "backfill-bound", QUE, MS_OPT_DOUBLE, "S", 0, 1e12, true, NULL, "3600",
        "easy, backfill: the head of the queue may be passed for S seconds at most" },
      Q(backfill_bound_s), 0, false, NULL },
    { { "aging-rate", QUE, MS_OPT_DOUBLE, "R", 0, 1e6, false, NULL, "0: off",
        "priority points a job gains per hour waited; a job passes the head only within "
        "1 point of it" },
      Q(aging_rate), 0, false, NULL },
    { { "default-estimate", QUE, MS_OPT_DOUBLE, "S", 1e-6, 1e12, false, NULL, "3600",
        "easy: run time, in seconds, assumed for a job without an estimate" },
      Q(default_estimate_s), 0, false, NULL },
    { { "lb-threshold", POL, MS_OPT_DOUBLE, "T", 0, 1, false, NULL, "0.4",
        "fa, fa+: a GPU is Lazy while its busy compute share is below T" },
      P(lb_threshold), 0, false, NULL },
    { { "balance", POL, MS_OPT_BOOL, NULL, 0, 0, false, NULL, "true",
        "fa: conditional load balancing (--no-balance: off)" },
      P(balance), 0, false, NULL },
    { { "dynamic", POL, MS_OPT_BOOL, NULL, 0, 0, false, NULL, "true",
        "fa: dynamic partitioning (--no-dynamic: a static layout)" },
      P(dynamic), 0, false, NULL },
    { { "migration", POL, MS_OPT_BOOL, NULL, 0, 0, false, NULL, "true",
        "fa, fa+: intra- and inter-GPU migration (--no-migration: none)" },
      P(migration), 0, false, NULL },
    { { "max-moves", POL, MS_OPT_INT, "N", 0, 1000000, false, NULL, "4",
        "fa: migrations per trigger at most" },
      P(max_moves), 0, false, NULL },
    { { "room-queue-max", POL, MS_OPT_INT, "N", 0, 1000000000, false, NULL, "32",
        "fa+: move jobs for a waiting one only while at most N wait" },
      P(room_queue_max), 0, false, NULL },
    { { "static-layout", POL, MS_OPT_STRING, "L", 0, 0, false, NULL, "the model's own",
        "static: per-GPU layouts, e.g. 4g+2g+1g or 7g;4g+3g (cycled per GPU)" },
      P(static_layout), 0, false, NULL },
    { { "demand-window", POL, MS_OPT_INT, "N", 1, 1000000, false, NULL, "256",
        "fgd: arrivals in the demand estimate" },
      P(demand_window), 0, false, NULL },
    { { "hysteresis", POL, MS_OPT_DOUBLE, "S", 0, 1e9, false, NULL, "300",
        "node-profile: seconds a node keeps a layout at least" },
      P(hysteresis_s), 0, false, NULL },
    { { "replicas", POL, MS_OPT_INT, "R", 1, MS_MAX_INST, false, NULL, "4",
        "timeslice: jobs per GPU" },
      P(replicas), 0, false, NULL },
    { { "seed", POL, MS_OPT_UINT64, "S", 0, 0, false, NULL, "0",
        "the policies' seed" },
      P(seed), 0, false, NULL },
    { { "migrate-cost", POL, MS_OPT_DOUBLE, "S", 0, 1e9, false, NULL, "10",
        "fa+: what one move costs, in seconds (a simulator's --migrate-s sets it too)" },
      P(migrate_cost_s), 0, false, NULL },
    { { "interference-beta", POL, MS_OPT_DOUBLE, "B", 0, 10, false, NULL, "0.05",
        "fa+: slowdown per other running instance (a simulator's --beta sets it too)" },
      P(interference_beta), 0, false, NULL },
    { { "beta", SIM, MS_OPT_DOUBLE, "B", 0, 10, false, NULL, "0.05",
        "interference: a job runs at 1 / (1 + B x other running instances on its GPU); "
        "sets fa+'s --interference-beta too" },
      S(beta), S(sched.pcfg.interference_beta), false, NULL },
    { { "create-s", SIM, MS_OPT_DOUBLE, "S", 0, 1e9, false, NULL, "2",
        "seconds a job waits for a GPU instance created for it" },
      S(create_s), 0, false, NULL },
    { { "migrate-s", SIM, MS_OPT_DOUBLE, "S", 0, 1e9, false, NULL, "10",
        "seconds a moved job pauses; sets fa+'s --migrate-cost too" },
      S(migrate_s), S(sched.pcfg.migrate_cost_s), false, NULL },
    { { "estimate-error", SIM, MS_OPT_DOUBLE, "E", 0, 3, false, NULL, "0: exact",
        "easy: a job's estimate is its duration x exp(E x N(0,1))" },
      S(estimate_error), 0, false, NULL },
    { { "estimate-seed", SIM, MS_OPT_UINT64, "S", 0, 0, false, NULL, "1",
        "seed of the estimate errors" },
      S(estimate_seed), 0, false, NULL },
    { { "estimates", SIM, MS_OPT_BOOL, NULL, 0, 0, false, NULL, "true",
        "jobs carry estimates (--no-estimates: none; easy uses --default-estimate)" },
      S(no_estimates), 0, true, NULL },
    { { "index", SIM, MS_OPT_CHOICE, "I", 0, 0, false, INDEXES, "bucket",
        "the placement search (both give the same schedule)" },
      S(sched.index_mode), 0, false, choose_index },
    { { "preempt", QUE, MS_OPT_BOOL, NULL, 0, 0, false, NULL, "false",
        "a blocked head of the queue stops the cheapest set of lower-priority jobs (or, "
        "below its tenant's guarantee, borrowed work) on one GPU and starts there; the "
        "victims are queued again (docs/tenants.md)" },
      Q(preempt), 0, false, NULL },
    { { "preempt-grace", QUE, MS_OPT_DOUBLE, "S", 0, 1e12, false, NULL, "60",
        "--preempt: a job that started less than S seconds ago is never a victim" },
      Q(preempt_grace_s), 0, false, NULL },
    { { "preempt-after", QUE, MS_OPT_DOUBLE, "S", 0, 1e12, false, NULL, "0",
        "--preempt: a blocked head preempts only once it has waited S seconds (checked "
        "at the next scheduling event)" },
      Q(preempt_after_s), 0, false, NULL },
    { { "preempt-max-lost", QUE, MS_OPT_DOUBLE, "S", 0, 1e12, false, NULL, "0: no bound",
        "--preempt: a job that has run longer than S seconds (since its last checkpoint, "
        "with checkpoint_s) is never a victim (bounds the work one preemption loses)" },
      Q(preempt_max_lost_s), 0, false, NULL },
    { { "preempt-rate", QUE, MS_OPT_INT, "N", 0, 1000000, false, NULL, "10",
        "--preempt: at most N preemptions in any 60 s (0: no limit)" },
      Q(preempt_rate), 0, false, NULL },
    { { "preempt-move", QUE, MS_OPT_BOOL, NULL, 0, 0, false, NULL, "false",
        "--preempt: a migratable victim is moved to the lowest free legal start on another "
        "GPU of its group instead of stopped, when there is one (docs/tenants.md)" },
      Q(preempt_move), 0, false, NULL },
    { { "tenant-half-life", QUE, MS_OPT_DOUBLE, "S", 0, 1e12, false, NULL, "0: no decay",
        "tenants: the service a tenant received counts half after S seconds in the fair "
        "share (Slurm's decayed usage; docs/tenants.md; migschedd: SIGHUP reloads)" },
      Q(tenant_half_life_s), 0, false, NULL },
    { { "tenant", SIM, MS_OPT_TENANT, "T", 0, 0, false, NULL, "none: one tenant",
        "declare a tenant, repeatable (docs/tenants.md): "
        "NAME[:weight=W][,guarantee=S][,limit=S] [,mem-limit=GB][,mem-guarantee=GB] [,limit@MODEL=S]"
        "[,guarantee@MODEL=S]..., S in compute slices (@MODEL: on GPUs of that model, at most 8 models, "
        "guarantee@MODEL at most limit@MODEL); migschedd takes the same as its own --tenant and `tenant =`" },
      S(tenants), 0, false, NULL },
};

#define NROWS ((int)(sizeof(ROWS) / sizeof(ROWS[0])))

ms_opt_target_t ms_opt_target_sim(ms_sim_cfg_t *cfg)
{
    ms_opt_target_t t;

    t.pcfg = &cfg->sched.pcfg;
    t.sched = &cfg->sched;
    t.sim = cfg;
    return t;
}

int ms_opt_count(void)
{
    return NROWS;
}

const ms_opt_t *ms_opt_get(int i)
{
    return i >= 0 && i < NROWS ? &ROWS[i].o : NULL;
}

const char *ms_opt_scope_name(ms_opt_scope_t s)
{
    return s == MS_OPT_SIM ? "simulator" : s == MS_OPT_QUEUE ? "queue" : "policy";
}

static const row_t *find(const char *name, bool *negated)
{
    bool neg = false;
    int i;

    if (name == NULL)
        return NULL;
    if (strncmp(name, "no-", 3) == 0) {
        neg = true;
        name += 3;
    }
    for (i = 0; i < NROWS; i++)
        if (strcmp(ROWS[i].o.name, name) == 0) {
            if (neg && ROWS[i].o.type != MS_OPT_BOOL)
                return NULL;   /* "no-" only negates a boolean */
            if (negated != NULL)
                *negated = neg;
            return &ROWS[i];
        }
    return NULL;
}

const ms_opt_t *ms_opt_find(const char *name, bool *negated)
{
    const row_t *r = find(name, negated);

    return r != NULL ? &r->o : NULL;
}

const char *ms_opt_range(const ms_opt_t *o, char *buf, size_t n)
{
    size_t k = 0;
    int i;

    if (n == 0)
        return buf;
    buf[0] = '\0';
    switch (o->type) {
    case MS_OPT_DOUBLE:
        snprintf(buf, n, "[%g, %g]%s", o->lo, o->hi, o->inf ? " or inf" : "");
        break;
    case MS_OPT_INT:
        snprintf(buf, n, "[%.0f, %.0f]", o->lo, o->hi);
        break;
    case MS_OPT_UINT64:
        snprintf(buf, n, "[0, %" PRIu64 "]", UINT64_MAX);
        break;
    case MS_OPT_BOOL:
        snprintf(buf, n, "true or false");
        break;
    case MS_OPT_STRING:
        snprintf(buf, n, "any text");
        break;
    case MS_OPT_TENANT:
        snprintf(buf, n, "NAME[:weight=W][,guarantee=S][,limit=S][,mem-limit=GB][,mem-guarantee=GB][,limit@MODEL=S]");
        break;
    case MS_OPT_CHOICE:
        for (i = 0; o->choices[i] != NULL && k < n; i++) {
            int w = snprintf(buf + k, n - k, "%s%s", i == 0 ? "" : o->choices[i + 1] == NULL ?
                                                                   " or " : ", ", o->choices[i]);
            k = w < 0 ? n : k + (size_t)w;
        }
        break;
    }
    return buf;
}

/* Append s to buf at *k, wrapping at 80 columns (the current line starts
 * at *line); continuation lines are indented to column 24. */
static void wrap_add(char *buf, size_t n, size_t *k, size_t *line, const char *s)
{
    while (*s != '\0' && *k + 1 < n) {
        /* a word, or a range "[lo, hi]" kept on one line */
        const char *sp = strchr(*s == '[' && strchr(s, ']') != NULL ? strchr(s, ']') : s, ' ');
        size_t w = sp != NULL ? (size_t)(sp - s) : strlen(s);

        if (*k - *line + w > 79 && *k - *line > 24) {
            size_t pad = 24;

            while (*k > *line && buf[*k - 1] == ' ')
                (*k)--;
            if (*k + 1 + pad >= n)
                break;
            buf[(*k)++] = '\n';
            *line = *k;
            memset(buf + *k, ' ', pad);
            *k += pad;
        }
        if (*k + w + 1 >= n)
            break;
        memcpy(buf + *k, s, w);
        *k += w;
        s += w;
        if (*s == ' ') {
            buf[(*k)++] = ' ';
            s++;
        }
    }
    buf[*k] = '\0';
}

const char *ms_opt_help(const ms_opt_t *o, char *buf, size_t n)
{
    bool plain = o->type == MS_OPT_BOOL || o->type == MS_OPT_STRING || o->type == MS_OPT_TENANT;
    char head[64], range[96], tail[192];
    size_t k, line = 0;
    int w;

    if (n == 0)
        return buf;
    w = snprintf(head, sizeof(head), "  --%s%s%s", o->name, o->arg != NULL ? " " : "",
                 o->arg != NULL ? o->arg : "");
    if (w > 23) {   /* a long name: the help starts on a line of its own */
        snprintf(buf, n, "%s\n%24s", head, "");
        line = (size_t)w + 1;
    } else {
        snprintf(buf, n, "%-23s ", head);
    }
    k = strlen(buf);
    wrap_add(buf, n, &k, &line, o->help);
    if (plain)
        snprintf(tail, sizeof(tail), " (default %s)", o->def);
    else
        snprintf(tail, sizeof(tail), "; %s %s (default %s)",
                 o->type == MS_OPT_CHOICE ? "one of" : "in", ms_opt_range(o, range, sizeof(range)),
                 o->def);
    wrap_add(buf, n, &k, &line, tail);
    if (k + 1 < n) {
        buf[k++] = '\n';
        buf[k] = '\0';
    }
    return buf;
}

static bool parse_bool(const char *v, bool *out)
{
    static const char *const YES[] = { "true", "on", "yes", "1" };
    static const char *const NO[] = { "false", "off", "no", "0" };
    size_t i;

    for (i = 0; i < sizeof(YES) / sizeof(YES[0]); i++) {
        if (strcmp(v, YES[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(v, NO[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* The value of one option, parsed and checked before anything is written. */
typedef union value {
    double d;
    int i;
    uint64_t u;
    bool b;
    const char *s;
    int choice;
    ms_sim_tenant_t t;
} value_t;

/* limit@MODEL=S or guarantee@MODEL=S (what: "limit" or "guarantee"): the
 * key's model (mlen bytes at model) and its value num, into t's entry for
 * that model (one entry per model holds both; a guarantee alone has no
 * limit, -1). */
static ms_status_t parse_model_quota(const ms_opt_t *o, const char *v, const char *what,
                                     const char *model, size_t mlen, const char *num,
                                     ms_sim_tenant_t *t, ms_diag_t *diag)
{
    char name[48];
    const ms_model_t *m = NULL;
    bool guar = what[0] == 'g';
    int64_t iv = 0;
    int k;

    if (mlen > 0 && mlen < sizeof(name)) {
        memcpy(name, model, mlen);
        name[mlen] = '\0';
        m = ms_model_find(name);
    }
    if (m == NULL) {
        ms_diag_set(diag, NULL, 0, o->name, "'%.60s': %s@%.*s: no such GPU model", v, what,
                    (int)(mlen < 40 ? mlen : 40), model);
        return MS_ERANGE;
    }
    /* a per model guarantee of 0 is none: say so rather than keep an
     * entry that declares nothing */
    if (ms_number_int(num, guar ? 1 : 0, 1000000000, &iv) != MS_OK) {
        ms_diag_set(diag, NULL, 0, o->name, "'%.60s': %s@%s must be a whole number of compute slices "
                    "in %s..1e9", v, what, name, guar ? "1" : "0");
        return MS_ERANGE;
    }
    for (k = 0; k < t->nmodel_limits && strcmp(t->model_limits[k].model, m->name) != 0; k++)
        ;
    if (k < t->nmodel_limits && (guar ? t->model_limits[k].guarantee > 0 : t->model_limits[k].limit >= 0)) {
        ms_diag_set(diag, NULL, 0, o->name, "'%.60s': %s@%s: model %s is %s twice", v, what, name, m->name,
                    guar ? "guaranteed" : "limited");
        return MS_ERANGE;
    }
    if (k == MS_TENANT_MAX_MODEL_LIMITS) {
        ms_diag_set(diag, NULL, 0, o->name, "'%.60s': %s@%s: at most %d models with a per model limit "
                    "or guarantee", v, what, name, MS_TENANT_MAX_MODEL_LIMITS);
        return MS_ERANGE;
    }
    if (k == t->nmodel_limits) {
        t->model_limits[k].model = m->name;   /* static */
        t->model_limits[k].limit = -1;
        t->model_limits[k].guarantee = 0;
        t->nmodel_limits++;
    }
    if (guar)
        t->model_limits[k].guarantee = (long)iv;
    else
        t->model_limits[k].limit = (long)iv;
    return MS_OK;
}

/* Every model's guarantee@MODEL is at most its limit@MODEL. */
static ms_status_t check_model_quotas(const ms_opt_t *o, const char *v, const ms_sim_tenant_t *t,
                                      ms_diag_t *diag)
{
    int k;

    for (k = 0; k < t->nmodel_limits; k++) {
        const ms_sched_tenant_model_limit_t *e = &t->model_limits[k];

        if (e->limit >= 0 && e->guarantee > e->limit) {
            ms_diag_set(diag, NULL, 0, o->name, "'%.60s': guarantee@%s (%ld) above limit@%s (%ld)", v,
                        e->model, e->guarantee, e->model, e->limit);
            return MS_ERANGE;
        }
    }
    return MS_OK;
}

/* NAME[:weight=W][,guarantee=S][,limit=S][,mem-limit=GB][,mem-guarantee=GB][,limit@MODEL=S]
 * [,guarantee@MODEL=S]...
 * (sched.h's rules for each). */
static ms_status_t parse_tenant(const ms_opt_t *o, const char *v, ms_sim_tenant_t *t,
                                ms_diag_t *diag)
{
    const char *colon = strchr(v, ':'), *p;
    size_t n = colon != NULL ? (size_t)(colon - v) : strlen(v), i;

    memset(t, 0, sizeof(*t));
    t->weight = 1.0;
    t->limit = -1;
    if (n == 0 || n >= sizeof(t->name)) {
        ms_diag_set(diag, NULL, 0, o->name, "'%.60s': a tenant needs a name of 1..63 bytes", v);
        return MS_ERANGE;
    }
    for (i = 0; i < n; i++) {
        char c = v[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            ms_diag_set(diag, NULL, 0, o->name, "'%.60s': a tenant's name is letters, digits, "
                        "'.', '_' and '-'", v);
            return MS_ERANGE;
        }
    }
    memcpy(t->name, v, n);
    for (p = colon != NULL ? colon + 1 : NULL; p != NULL;) {
        const char *comma = strchr(p, ','), *eq = strchr(p, '=');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p), klen;
        char num[64];
        int64_t iv = 0;
        double dv = 0.0;
        ms_status_t st;

        if (eq == NULL || eq > p + len || len - (size_t)(eq - p) - 1 >= sizeof(num)) {
            ms_diag_set(diag, NULL, 0, o->name, "'%.60s': expected KEY=VALUE after the name", v);
            return MS_ERANGE;
        }
        klen = (size_t)(eq - p);
        memcpy(num, eq + 1, len - klen - 1);
        num[len - klen - 1] = '\0';
        if (klen == 6 && strncmp(p, "weight", 6) == 0) {
            st = ms_number_double(num, &dv);
            if (st != MS_OK || !(dv > 0.0 && dv <= 1e6)) {
                ms_diag_set(diag, NULL, 0, o->name, "'%.60s': weight must be a number in (0, 1e6]", v);
                return MS_ERANGE;
            }
            t->weight = dv;
        } else if ((klen == 9 && strncmp(p, "guarantee", 9) == 0) ||
                   (klen == 5 && strncmp(p, "limit", 5) == 0)) {
            if (ms_number_int(num, 0, 1000000000, &iv) != MS_OK) {
                ms_diag_set(diag, NULL, 0, o->name,
                            "'%.60s': %.*s must be a whole number of compute slices in 0..1e9", v,
                            (int)klen, p);
                return MS_ERANGE;
            }
            if (klen == 5)
                t->limit = (long)iv;
            else
                t->guarantee = (long)iv;
        } else if (klen == 9 && strncmp(p, "mem-limit", 9) == 0) {
            st = ms_number_double(num, &dv);
            if (st != MS_OK || !(dv >= 0.0 && dv <= 1e9)) {
                ms_diag_set(diag, NULL, 0, o->name, "'%.60s': mem-limit must be a number of GB in 0..1e9 "
                            "(0: none)", v);
                return MS_ERANGE;
            }
            t->mem_limit_gb = dv;
        } else if (klen == 13 && strncmp(p, "mem-guarantee", 13) == 0) {
            st = ms_number_double(num, &dv);
            if (st != MS_OK || !(dv >= 0.0 && dv <= 1e9)) {
                ms_diag_set(diag, NULL, 0, o->name, "'%.60s': mem-guarantee must be a number of GB in "
                            "0..1e9 (0: none)", v);
                return MS_ERANGE;
            }
            t->mem_guarantee_gb = dv;
        } else if (klen >= 6 && strncmp(p, "limit@", 6) == 0) {
            if ((st = parse_model_quota(o, v, "limit", p + 6, klen - 6, num, t, diag)) != MS_OK)
                return st;
        } else if (klen >= 10 && strncmp(p, "guarantee@", 10) == 0) {
            if ((st = parse_model_quota(o, v, "guarantee", p + 10, klen - 10, num, t, diag)) != MS_OK)
                return st;
        } else {
            ms_diag_set(diag, NULL, 0, o->name, "'%.60s': unknown key '%.*s' (weight, guarantee, "
                        "limit, mem-limit, mem-guarantee, limit@MODEL, guarantee@MODEL)", v, (int)klen, p);
            return MS_ERANGE;
        }
        p = comma != NULL ? comma + 1 : NULL;
    }
    if (t->limit >= 0 && t->limit < t->guarantee) {
        ms_diag_set(diag, NULL, 0, o->name, "'%.60s': limit below the guarantee", v);
        return MS_ERANGE;
    }
    if (t->mem_limit_gb > 0.0 && t->mem_guarantee_gb > t->mem_limit_gb) {
        ms_diag_set(diag, NULL, 0, o->name, "'%.60s': mem-guarantee above the mem-limit", v);
        return MS_ERANGE;
    }
    return check_model_quotas(o, v, t, diag);
}

static ms_status_t bad(ms_diag_t *diag, const ms_opt_t *o, const char *v, const char *why,
                       const char *what)
{
    char range[96];

    ms_diag_set(diag, NULL, 0, o->name, "'%.60s' is %s; expected %s %s", v, why, what,
                ms_opt_range(o, range, sizeof(range)));
    return MS_ERANGE;
}

static ms_status_t parse_value(const row_t *r, const char *v, bool negated, value_t *out,
                               ms_diag_t *diag)
{
    const ms_opt_t *o = &r->o;
    ms_status_t st;
    int64_t iv;
    int i;

    if (o->type == MS_OPT_BOOL) {
        bool b = true;

        if (v != NULL && !parse_bool(v, &b)) {
            ms_diag_set(diag, NULL, 0, o->name, "'%.60s' is not true or false (on/off, "
                        "yes/no, 1/0)", v);
            return MS_ERANGE;
        }
        out->b = b != negated;
        return MS_OK;
    }
    if (v == NULL || v[0] == '\0') {
        ms_diag_set(diag, NULL, 0, o->name, "needs a value");
        return MS_EINVAL;
    }
    switch (o->type) {
    case MS_OPT_DOUBLE:
        if (o->inf && strcmp(v, "inf") == 0) {
            out->d = INFINITY;
            return MS_OK;
        }
        st = ms_number_double(v, &out->d);
        if (st == MS_OK && out->d >= o->lo && out->d <= o->hi)
            return MS_OK;
        return bad(diag, o, v, st == MS_EPARSE ? "not a decimal number" : "out of range",
                   "a number in");
    case MS_OPT_INT:
        st = ms_number_int(v, (int64_t)o->lo, (int64_t)o->hi, &iv);
        out->i = st == MS_OK ? (int)iv : 0;
        return st == MS_OK ? MS_OK
                           : bad(diag, o, v, st == MS_EPARSE ? "not an integer" : "out of range",
                                 "an integer in");
    case MS_OPT_UINT64:
        st = ms_number_uint(v, UINT64_MAX, &out->u);
        return st == MS_OK ? MS_OK
                           : bad(diag, o, v, st == MS_EPARSE ? "not an integer" : "out of range",
                                 "an integer in");
    case MS_OPT_STRING:
        out->s = v;
        return MS_OK;
    case MS_OPT_TENANT:
        return parse_tenant(o, v, &out->t, diag);
    case MS_OPT_CHOICE:
        for (i = 0; o->choices[i] != NULL; i++)
            if (strcmp(v, o->choices[i]) == 0) {
                out->choice = i;
                return MS_OK;
            }
        return bad(diag, o, v, "not a choice", "one of");
    case MS_OPT_BOOL:
        break;
    }
    return MS_EINVAL;
}

ms_status_t ms_opt_set(const ms_opt_target_t *t, const char *name, const char *value,
                       ms_diag_t *diag)
{
    bool negated = false;
    const row_t *r;
    char *base;
    value_t v;
    ms_status_t st;

    if (t == NULL || name == NULL)
        return MS_EINVAL;
    if ((r = find(name, &negated)) == NULL) {
        ms_diag_set(diag, NULL, 0, name, "no such option");
        return MS_ENOENT;
    }
    base = r->o.scope == MS_OPT_POLICY ? (char *)t->pcfg
         : r->o.scope == MS_OPT_QUEUE ? (char *)t->sched : (char *)t->sim;
    if (base == NULL) {
        ms_diag_set(diag, NULL, 0, r->o.name, "a %s option, not one of this command's",
                    ms_opt_scope_name(r->o.scope));
        return MS_ENOENT;
    }
    if ((st = parse_value(r, value, negated, &v, diag)) != MS_OK)
        return st;
    if (r->o.type == MS_OPT_TENANT) {
        /* one more tenant, or a new declaration of one already given */
        ms_sim_tenants_t *ts = (ms_sim_tenants_t *)(void *)(base + r->off);
        int k;

        for (k = 0; k < ts->n && strcmp(ts->t[k].name, v.t.name) != 0; k++)
            ;
        if (k == MS_SIM_MAX_TENANTS) {
            ms_diag_set(diag, NULL, 0, r->o.name, "at most %d tenants", MS_SIM_MAX_TENANTS);
            return MS_ERANGE;
        }
        ts->t[k] = v.t;
        if (k == ts->n)
            ts->n++;
        return MS_OK;
    }
    switch (r->o.type) {
    case MS_OPT_DOUBLE:
        *(double *)(void *)(base + r->off) = v.d;
        if (r->also != 0)
            *(double *)(void *)(base + r->also) = v.d;
        break;
    case MS_OPT_INT: *(int *)(void *)(base + r->off) = v.i; break;
    case MS_OPT_UINT64: *(uint64_t *)(void *)(base + r->off) = v.u; break;
    case MS_OPT_BOOL: *(bool *)(void *)(base + r->off) = v.b != r->neg; break;
    case MS_OPT_STRING: *(const char **)(void *)(base + r->off) = v.s; break;
    case MS_OPT_CHOICE: r->choose(base + r->off, v.choice); break;
    case MS_OPT_TENANT: break;
    }
    return MS_OK;
}
