/* own.c - the loop thread (the main thread at start-up, before the loop
 * starts, as restart.c): instances the backend reports put into the
 * scheduler's view with their owner. One rule for every path that adopts
 * (docs/operations.md): an instance is adopted by the job its tag names, as
 * a whole (a gang on all its GPUs, or not at all); an instance whose tag
 * names no job becomes a job of its own ("found"), so that its slices are
 * held and it shows in /v1/jobs and /v1/cluster; an idle instance is an
 * idle GI of the view. Nothing here destroys anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/kctl.h"
#include "service/own.h"
#include "service/svc.h"

static int cmp_tag(const void *a, const void *b)
{
    const ms_binst_t *x = a, *y = b;
    int c = strcmp(x->job, y->job);

    if (c != 0)
        return c;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

void svc_own_sort(ms_binst_t *inv, int n)
{
    qsort(inv, (size_t)n, sizeof(*inv), cmp_tag);
}

int svc_own_group_end(const ms_binst_t *inv, int i, int n)
{
    int e;

    for (e = i + 1; e < n && strcmp(inv[e].job, inv[i].job) == 0; e++)
        ;
    return e;
}

/* Could b be adopted on its GPU as the view stands (a MIG instance: no GI
 * of another placement on its slices, and the same one only if idle)? A
 * time-slice slot or whole GPU is left to ms_sched_adopt. */
static bool fits(svc_t *d, const ms_binst_t *b)
{
    const ms_geom_t *g = NULL;
    const ms_gpu_t *gpu = ms_sched_gpu(d->sched, b->gpu, &g);
    int i, lo, hi;

    if (gpu == NULL || g == NULL || b->prof < 0 || b->prof >= ms_geom_nprofiles(g))
        return false;
    if (b->start < 0)
        return true;
    lo = b->start;
    hi = lo + ms_geom_profile(g, b->prof)->msize;
    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];
        int a0, a1;

        if (in->start < 0)
            return false;
        if (in->start == b->start && in->prof == b->prof)
            return in->job < 0;
        a0 = in->start;
        a1 = a0 + ms_geom_profile(g, in->prof)->msize;
        if (a0 < hi && lo < a1)
            return false;
    }
    return true;
}

/* j's instances into the scheduler, all or nothing; 0, or -1 with why. */
static int adopt_insts(svc_t *d, svc_job_t *j, const ms_binst_t *inst, int n, double now, char *why, size_t len)
{
    ms_sched_req_t r;
    ms_diag_t diag;
    int k;

    if (n != (j->req.gang > 1 ? j->req.gang : 1)) {
        snprintf(why, len, "%d of its %d instances are there", n, j->req.gang > 1 ? j->req.gang : 1);
        return -1;
    }
    /* all or nothing, checked first: a half-adopted gang could only leave
     * the view through a plan, which would act on the backend */
    for (k = 0; k < n; k++)
        if (!fits(d, &inst[k])) {
            snprintf(why, len, "its instance on GPU %d at slice %d overlaps what the view holds", (int)inst[k].gpu,
                     (int)inst[k].start);
            return -1;
        }
    svc_job_sched_req(j, &r);
    for (k = 0; k < n; k++) {
        ms_diag_clear(&diag);
        if (ms_sched_adopt(d->sched, inst[k].gpu, inst[k].prof, inst[k].start, &r, now, &diag) != MS_OK) {
            snprintf(why, len, "the scheduler cannot adopt it on GPU %d: %.200s", (int)inst[k].gpu, diag.msg);
            return -1;   /* (fits() said it would: a bug, logged by the caller) */
        }
    }
    d->adopted++;
    return 0;
}

int svc_own_adopt(svc_t *d, svc_job_t *j, const ms_binst_t *inst, int n, double now, char *why, size_t len)
{
    if (adopt_insts(d, j, inst, n, now, why, len) != 0)
        return -1;
    (void)svc_jobs_set_slot(&d->jobs, j, ms_sched_find(d->sched, j->id));
    if (j->state == MS_JOB_QUEUED || svc_job_terminal(j->state) || j->start_t == 0)
        j->start_t = now;   /* its start's commit was lost (a damaged store) */
    if (svc_job_terminal(j->state)) {
        j->end_t = 0;
        j->reason[0] = '\0';
    }
    svc_loop_mark(d, j);
    if (j->req.duration_s > 0) {
        j->finish_at = j->start_t + svc_job_sim_run(d, j);
        svc_ends_set(d, j, j->finish_at);
    }
    return 0;
}

int svc_own_adopt_new(svc_t *d, svc_job_t *j, const ms_binst_t *inst, int n, double now, char *why, size_t len)
{
    if (svc_table_reserve(d) != 0) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    if (adopt_insts(d, j, inst, n, now, why, len) != 0)
        return -1;
    svc_table_add(d, j, ms_sched_find(d->sched, j->id));
    svc_loop_mark(d, j);
    return 0;
}

bool svc_own_idle(svc_t *d, const ms_binst_t *b)
{
    ms_diag_t diag;

    if (b->start < 0 || !fits(d, b))
        return false;
    ms_diag_clear(&diag);
    return ms_sched_adopt(d->sched, b->gpu, b->prof, b->start, NULL, 0, &diag) == MS_OK;
}

/* The request of instances found with no job: their profile, as many GPUs
 * as they are, and a label saying where they came from. */
static char *found_body(svc_t *d, const ms_binst_t *inst, int n, const char *label)
{
    const ms_geom_t *g = NULL;
    int node, group, local;
    json_t *o;
    char *s;

    (void)ms_sched_gpu(d->sched, inst[0].gpu, &g);
    ms_sched_gpu_where(d->sched, inst[0].gpu, &node, &group, &local);
    if (g == NULL || inst[0].prof < 0 || inst[0].prof >= ms_geom_nprofiles(g))
        return NULL;
    o = json_pack("{s:s,s:s,s:{s:s}}", "profile", ms_geom_profile(g, inst[0].prof)->name, "isolation",
                  ms_sched_group_mode(d->sched, group) == MS_NODE_TIMESLICE ? "any" : "mig", "labels", label,
                  "true");
    if (o != NULL && n > 1)
        json_object_set_new(o, "gang", json_integer(n));
    s = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return s;
}

svc_job_t *svc_own_found(svc_t *d, const ms_binst_t *inst, int n, const char *label, double now, char *why,
                         size_t len)
{
    svc_job_t *j = NULL;
    svc_err_t err;
    char *body = NULL, *id = NULL, *canon = NULL;

    if (!svc_id_valid(inst[0].job)) {
        snprintf(why, len, "its tag is not a job id");
        return NULL;
    }
    if ((body = found_body(d, inst, n, label)) == NULL || (j = calloc(1, sizeof(*j))) == NULL ||
        (j->id = strdup(inst[0].job)) == NULL) {
        snprintf(why, len, "out of memory");
        goto fail;
    }
    memset(&err, 0, sizeof(err));
    if (svc_req_parse(body, strlen(body), &id, &j->req, &canon, &err) != 0) {
        snprintf(why, len, "%s", err.msg);
        goto fail;
    }
    j->body = canon;
    canon = NULL;
    j->slot = -1;
    j->place.node = -1;
    j->submit_t = now;
    j->start_t = now;
    j->state = MS_JOB_RUNNING;
    if (svc_own_adopt_new(d, j, inst, n, now, why, len) != 0)
        goto fail;
    free(body);
    free(id);
    return j;
fail:
    free(body);
    free(id);
    free(canon);
    svc_job_free(j);
    return NULL;
}

int svc_own_all_stale(svc_t *d)
{
    int g, ng = ms_sched_ngpus(d->sched);

    free(d->own.stale);
    if ((d->own.stale = calloc((size_t)ng + 1, sizeof(*d->own.stale))) == NULL)
        return -1;
    for (g = 0; g < ng; g++)
        d->own.stale[g] = true;
    d->own.ngpus = d->own.nstale = ng;
    return 0;
}

bool svc_own_stale(const svc_t *d, int gpu)
{
    return d->own.stale != NULL && gpu >= 0 && gpu < d->own.ngpus && d->own.stale[gpu];
}

bool svc_own_node_stale(const svc_t *d, int node)
{
    int g = ms_sched_node_first_gpu(d->sched, node), e = g + ms_sched_node(d->sched, node)->ngpus;

    for (; d->own.nstale > 0 && g < e; g++)
        if (svc_own_stale(d, g))
            return true;
    return false;
}

void svc_own_free(svc_t *d)
{
    free(d->own.stale);
    free(d->own.found);
    d->own.stale = NULL;
    d->own.found = NULL;
    d->own.ngpus = d->own.nstale = d->own.nfound = d->own.capfound = 0;
}

int svc_own_unowned(svc_t *d, svc_job_t *j, double mono)
{
    svc_own_t *o = &d->own;

    if (o->nfound == o->capfound) {
        int cap = o->capfound ? o->capfound * 2 : 16;
        svc_job_t **v = realloc(o->found, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return -1;
        o->found = v;
        o->capfound = cap;
    }
    o->found[o->nfound++] = j;
    j->unowned_since = mono > 0 ? mono : 1e-9;
    atomic_store(&o->unowned, o->nfound);
    ms_log("warn", "an instance no pod or job owns: adopted as a job of its own, destroyed once unowned for the "
                   "grace period unless an owner appears",
           json_pack("{s:s,s:f}", "job", j->id, "grace_s", d->cfg->unowned_grace_s));
    return 0;
}

void svc_own_claimed(svc_t *d, svc_job_t *j)
{
    if (j->unowned_since > 0)
        ms_log("info", "an unowned instance has an owner", json_pack("{s:s}", "job", j->id));
    j->unowned_since = 0;   /* the tick drops it from the list */
    svc_own_tick(d, 0);
}

/* Does the view hold b's instance (same GPU, slice and profile)? */
static bool held(svc_t *d, const ms_binst_t *b)
{
    const ms_geom_t *g = NULL;
    const ms_gpu_t *gpu = ms_sched_gpu(d->sched, b->gpu, &g);
    int i;

    for (i = 0; gpu != NULL && i < gpu->ninst; i++)
        if (gpu->inst[i].start == b->start && gpu->inst[i].prof == b->prof)
            return true;
    return false;
}

/* One tag's instances inst[0..n) that no pod claimed at a takeover. */
static void leftover(svc_t *d, const ms_binst_t *inst, int n, double now, double mono)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, inst[0].job);
    bool foreign = ms_backend_tag_foreign(inst[0].job);
    char why[300] = "";
    int rc;

    if (j != NULL && j->slot >= 0)
        return;                              /* in the view: owned */
    if (j != NULL)                           /* a job of this replica's past */
        rc = svc_own_adopt(d, j, inst, n, now, why, sizeof(why));
    else
        rc = (j = svc_own_found(d, inst, n, foreign ? SVC_LABEL_FOREIGN : SVC_LABEL_FOUND, now, why,
                                sizeof(why))) != NULL ? 0 : -1;
    if (rc != 0) {
        ms_log("error", "an instance no pod owns cannot be held in the view; left as it is",
               json_pack("{s:s,s:i,s:i,s:s}", "tag", inst[0].job, "gpu", (int)inst[0].gpu, "start",
                         (int)inst[0].start, "why", why));
        return;
    }
    if (!foreign && svc_own_unowned(d, j, mono) != 0)
        ms_log("error", "out of memory: an unowned instance is held and never destroyed",
               json_pack("{s:s}", "job", j->id));
}

void svc_own_takeover(svc_t *d, ms_binst_t *inv, int n, double now)
{
    double mono = svc_clock_mono(d->clock);
    int i, e;

    svc_own_sort(inv, n);
    for (i = 0; i < n; i = e) {
        e = svc_own_group_end(inv, i, n);
        if (inv[i].job[0] != '\0') {
            leftover(d, inv + i, e - i, now, mono);
            continue;
        }
        for (; i < e; i++)
            if (!held(d, &inv[i]))
                (void)svc_own_idle(d, &inv[i]);
    }
    free(d->own.stale);   /* every GPU read afresh: none is stale */
    d->own.stale = NULL;
    d->own.nstale = 0;
}

static bool running(const svc_t *d, const svc_job_t *j)
{
    ms_sched_job_info_t info;

    return ms_sched_job(d->sched, j->slot, &info) == MS_OK && info.state == MS_JOB_RUNNING;
}

/* Found jobs unowned past the grace period are cancelled (their plan
 * destroys the instance), by the leader only. */
void svc_own_tick(svc_t *d, double now)
{
    svc_own_t *o = &d->own;
    double mono = svc_clock_mono(d->clock);
    const svc_kctl_t *c = atomic_load(&d->kctl);
    bool acts = c == NULL || svc_kctl_is_leader(c);
    int i, k;

    for (i = k = 0; i < o->nfound; i++) {
        svc_job_t *j = o->found[i];

        if (j->unowned_since <= 0 || svc_job_terminal(j->state))
            continue;
        if (acts && now > 0 && mono - j->unowned_since >= d->cfg->unowned_grace_s && j->slot >= 0 &&
            running(d, j)) {
            ms_log("warn", "destroying an instance no pod or job owned for the grace period",
                   json_pack("{s:s,s:f}", "job", j->id, "grace_s", d->cfg->unowned_grace_s));
            (void)ms_sched_cancel(d->sched, j->slot, now);
            j->unowned_since = 0;
            svc_loop_mark(d, j);
            d->own.destroyed++;
            continue;
        }
        o->found[k++] = j;
    }
    o->nfound = k;
    atomic_store(&o->unowned, k);
}
