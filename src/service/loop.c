/* loop.c - the event loop thread: the only owner of the ms_sched_t, the job
 * table and the store.
 *
 * One iteration takes every message that arrived (HTTP requests and the
 * executor's op outcomes) as a batch, handles them inside ONE transaction,
 * lets time pass (sim jobs that reached their duration end; ms_sched_tick),
 * writes every job whose state changed, commits, and only then answers the
 * HTTP requests, publishes the events and hands the batch's plans to the
 * executor. So a 201 is sent only for a job that is on disk, a plan is on
 * disk before its first op runs, and one fsync serves the whole batch (group
 * commit).
 *
 * Start-up reconciles the scheduler's view with the backend's inventory,
 * which is the truth for what exists (docs/service.md states the rule):
 *   - an instance tagged with a job the store knows as starting, running or
 *     migrating, and complete (a gang on all its GPUs), is adopted
 *     (ms_sched_adopt) and the job runs on;
 *   - every other instance (idle, unknown job, finished job, part of a gang)
 *     is destroyed, except an idle GI the policy's own setup wants (static
 *     layouts), which is kept; setup GIs missing on the hardware are created;
 *   - a job that was starting, running or migrating but has no instance is
 *     queued again, and every queued job is submitted again in its order.
 * A half-done migration is thereby finished (the job's tag moved) or rolled
 * back (it did not), nothing is created twice (nothing is replayed), and the
 * journal's unsettled ops are marked abandoned.
 */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/evheap.h"
#include "service/extender.h"
#include "service/svc.h"

#define TICK_S 0.1
#define FINISH_GAP_S 0.005   /* the loop wakes for sim job ends at most this often */

void svc_msg_free(svc_msg_t *m)
{
    if (m == NULL)
        return;
    free(m->id);
    svc_req_free(&m->req);
    free(m->canon);
    free(m->q_state);
    free(m->q_label);
    free(m->q_cursor);
    svc_ext_msg_free(m->ext);
    free(m->rview.reason);
    free(m);
}

/* Under d->mu: m joins the loop's queue and the loop is woken. */
static void enqueue(svc_t *d, svc_msg_t *m)
{
    m->next = NULL;
    if (d->qtail != NULL)
        d->qtail->next = m;
    else
        d->qhead = m;
    d->qtail = m;
    pthread_cond_signal(&d->cv);
}

void svc_post(svc_t *d, svc_msg_t *m)
{
    m->t_enq = svc_mono();
    pthread_mutex_lock(&d->mu);
    enqueue(d, m);
    pthread_mutex_unlock(&d->mu);
}

/* Each caller sleeps on its own condition variable, so answering a batch
 * wakes exactly its callers (one broadcast woke every waiting thread for
 * every batch: 64 threads on two cores, most of them back to sleep). */
void svc_call(svc_t *d, svc_msg_t *m)
{
    pthread_cond_t cv;

    if (pthread_cond_init(&cv, NULL) != 0) {
        m->status = 503;
        m->body = strdup("{\"error\":{\"message\":\"out of resources\"}}");
        return;
    }
    m->t_enq = svc_mono();
    pthread_mutex_lock(&d->mu);
    if (d->stopped) {
        pthread_mutex_unlock(&d->mu);
        pthread_cond_destroy(&cv);
        m->status = 503;
        m->body = strdup("{\"error\":{\"message\":\"shutting down\"}}");
        return;
    }
    m->done = false;
    m->wcv = &cv;
    enqueue(d, m);
    while (!m->done)
        pthread_cond_wait(&cv, &d->mu);
    m->wcv = NULL;
    pthread_mutex_unlock(&d->mu);
    pthread_cond_destroy(&cv);
}

int svc_call_async(svc_t *d, svc_msg_t *m, void (*fn)(svc_msg_t *m), void *arg)
{
    m->t_enq = svc_mono();
    m->on_reply = fn;
    m->reply_arg = arg;
    m->wcv = NULL;
    pthread_mutex_lock(&d->mu);
    if (d->stopped) {
        pthread_mutex_unlock(&d->mu);
        return -1;
    }
    m->done = false;
    enqueue(d, m);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

/* Under d->mu: m is answered; from here it belongs to its caller. */
static void answered(svc_msg_t *m)
{
    m->done = true;
    if (m->wcv != NULL)
        pthread_cond_signal(m->wcv);
}

char *svc_msg_body(svc_t *d, svc_msg_t *m)
{
    char *body;

    if (m->rjob == NULL) {
        body = m->body;
        m->body = NULL;
        return body;
    }
    return svc_job_text(m->rjob->id, m->rjob->body, &m->rview, d->be);
}

int svc_table_reserve(svc_t *d)
{
    int rc;

    pthread_mutex_lock(&d->rmu);
    /* a new slot is below the scheduler's slot count now, or equal to it */
    rc = svc_jobs_reserve(&d->jobs, ms_sched_slots(d->sched) + 1);
    pthread_mutex_unlock(&d->rmu);
    return rc;
}

void svc_table_add(svc_t *d, svc_job_t *j, int32_t slot)
{
    int rc;

    pthread_mutex_lock(&d->rmu);
    rc = svc_jobs_add(&d->jobs, j);
    pthread_mutex_unlock(&d->rmu);
    rc |= svc_jobs_set_slot(&d->jobs, j, slot);
    assert(rc == 0);   /* reserved */
    (void)rc;
}

int svc_job_read(svc_t *d, const char *id, char **body)
{
    svc_job_t *j;
    svc_jview_t v;
    int rc = 0;

    pthread_mutex_lock(&d->rmu);
    j = svc_jobs_find(&d->jobs, id);
    if (j != NULL && j->published) {
        v = j->pub;
        if (v.reason != NULL && (v.reason = strdup(v.reason)) == NULL)
            rc = -1;
    } else
        j = NULL;
    pthread_mutex_unlock(&d->rmu);
    if (j == NULL || rc != 0) {
        svc_err_t e;

        svc_err_set(&e, j == NULL ? 404 : 500, j == NULL ? "id" : "", "%s",
                    j == NULL ? "no such job" : "out of memory");
        *body = svc_err_body(&e);
        return e.code;
    }
    /* id and body never change once the job is in the table */
    *body = svc_job_text(j->id, j->body, &v, d->be);
    free(v.reason);
    return 200;
}

/* --- small helpers ------------------------------------------------------ */

static void reply_json(svc_msg_t *m, int status, json_t *o)
{
    m->status = status;
    m->body = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (m->body == NULL) {
        m->status = 500;
        m->body = strdup("{\"error\":{\"message\":\"out of memory\"}}");
    }
}

/* The HTTP thread renders the job (svc_msg_body), off the loop. */
static void reply_view(svc_msg_t *m, int status, svc_job_t *j)
{
    if (svc_jview_of(j, &m->rview) != 0) {
        m->status = 500;
        m->body = strdup("{\"error\":{\"message\":\"out of memory\"}}");
        return;
    }
    m->status = status;
    m->rjob = j;
}

static void reply_err(svc_msg_t *m, int status, const char *field, const char *msg)
{
    svc_err_t e;

    svc_err_set(&e, status, field, "%s", msg);
    m->status = status;
    m->body = svc_err_body(&e);
}

static bool is_terminal(int st)
{
    return st == MS_JOB_DONE || st == MS_JOB_CANCELLED || st == MS_JOB_FAILED;
}

static bool is_live(int st)
{
    return st == MS_JOB_STARTING || st == MS_JOB_RUNNING || st == MS_JOB_MIGRATING;
}

typedef struct loopctx {
    svc_job_t **dirty;
    size_t ndirty, capdirty;
    ms__evheap_t ends;            /* sim jobs (table index) by when they end */
    double finish_gate;           /* no wake for job ends before this */
    svc_job_t *submitting;
    svc_job_t **pub;              /* jobs to publish after the commit */
    size_t npub, cappub;
} loopctx_t;

static loopctx_t L;

static void mark(svc_job_t *j)
{
    if (j == NULL || j->dirty)
        return;
    if (L.ndirty == L.capdirty) {
        size_t cap = L.capdirty ? L.capdirty * 2 : 256;
        svc_job_t **v = realloc(L.dirty, cap * sizeof(*v));

        if (v == NULL)
            return;   /* the job is synced on its next change */
        L.dirty = v;
        L.capdirty = cap;
    }
    j->dirty = true;
    L.dirty[L.ndirty++] = j;
}

void svc_loop_mark(svc_job_t *j)
{
    mark(j);
}

/* j changed in this batch: publish its view once the batch has committed */
static void topub(svc_job_t *j)
{
    if (j->topub)
        return;
    if (L.npub == L.cappub) {
        size_t cap = L.cappub ? L.cappub * 2 : 256;
        svc_job_t **v = realloc(L.pub, cap * sizeof(*v));

        if (v == NULL)
            return;   /* published on its next change */
        L.pub = v;
        L.cappub = cap;
    }
    j->topub = true;
    L.pub[L.npub++] = j;
}

/* --- the syncer: durability off the loop ---------------------------------
 *
 * A batch's commit only writes the WAL (synchronous=NORMAL); the loop then
 * hands the syncer a ticket with everything that must wait for the fsync:
 * the batch's replies, the views of the jobs it changed, how far its events
 * go and its plans. The syncer fsyncs once for every ticket that arrived
 * meanwhile (group commit across batches) and releases them in order, while
 * the loop already decides the next batch. Reads the loop answers at the
 * start of a batch show the state of the commits before it: their ticket
 * needs those commits durable, so a reader still never sees what a crash
 * could take back. */
typedef struct svc_ticket {
    struct svc_ticket *next;
    uint64_t need;                 /* commits that must be durable first */
    svc_msg_t *msgs;               /* answered (op outcomes: freed) */
    svc_job_t **pj;                /* views to install: pv[i] into pj[i]->pub */
    svc_jview_t *pv;
    size_t npub;
    uint64_t ev_next;              /* events below this become visible (0: none) */
    svc_xplan_t *plans;            /* to the executor */
} svc_ticket_t;

/* The views of the jobs changed since the last commit, into t (loop). */
static void take_views(svc_ticket_t *t)
{
    size_t i;

    if (L.npub == 0)
        return;
    if ((t->pj = malloc(L.npub * sizeof(*t->pj))) == NULL ||
        (t->pv = malloc(L.npub * sizeof(*t->pv))) == NULL) {
        free(t->pj);
        t->pj = NULL;
        return;   /* out of memory: they stay listed and go with the next ticket */
    }
    for (i = 0; i < L.npub; i++) {
        svc_job_t *j = L.pub[i];

        j->topub = false;
        t->pj[i] = j;
        (void)svc_jview_of(j, &t->pv[i]);   /* out of memory: without its reason */
    }
    t->npub = L.npub;
    L.npub = 0;
}

static void ticket_push(svc_t *d, svc_ticket_t *t)
{
    pthread_mutex_lock(&d->smu);
    t->next = NULL;
    if (d->stail != NULL)
        d->stail->next = t;
    else
        d->shead = t;
    d->stail = t;
    pthread_cond_signal(&d->scv);
    pthread_mutex_unlock(&d->smu);
}

/* Release a ticket whose commits are durable. */
static void ticket_release(svc_t *d, svc_ticket_t *t)
{
    svc_xplan_t *p, *pn;
    svc_msg_t *m, *next, *async = NULL;
    size_t i;

    /* The batch's job views and its events become visible together: the
     * events are published while the views' lock is still held (lock
     * order rmu, then emu), so a client that GETs a job in its new state
     * finds the events that led there, and one that reads an event finds
     * the job in that state. */
    pthread_mutex_lock(&d->rmu);
    for (i = 0; i < t->npub; i++) {
        free(t->pj[i]->pub.reason);
        t->pj[i]->pub = t->pv[i];
        t->pj[i]->published = true;
    }
    if (t->ev_next > 0)
        svc_events_publish_to(d, t->ev_next);
    pthread_mutex_unlock(&d->rmu);
    free(t->pj);
    free(t->pv);
    for (p = t->plans; p != NULL; p = pn) {
        pn = p->next;
        svc_exec_push(d, p);
    }
    pthread_mutex_lock(&d->mu);
    for (m = t->msgs; m != NULL; m = next) {
        next = m->next;
        if (m->kind == SVC_M_OPRESULT)
            svc_msg_free(m);
        else if (m->on_reply != NULL) {
            m->next = async;   /* called below, without the lock */
            async = m;
        } else
            answered(m);
    }
    pthread_mutex_unlock(&d->mu);
    for (m = async; m != NULL; m = next) {
        next = m->next;
        m->next = NULL;
        m->done = true;
        m->on_reply(m);   /* m is the caller's from here */
    }
    free(t);
}

static void *syncer(void *arg)
{
    svc_t *d = arg;
    uint64_t synced = 0;

    for (;;) {
        svc_ticket_t *t, *tn;
        uint64_t need = 0;

        pthread_mutex_lock(&d->smu);
        while (d->shead == NULL && !d->sstop)
            pthread_cond_wait(&d->scv, &d->smu);
        t = d->shead;
        d->shead = d->stail = NULL;
        pthread_mutex_unlock(&d->smu);
        if (t == NULL)
            break;   /* stopping, and nothing left */
        for (tn = t; tn != NULL; tn = tn->next)
            need = tn->need > need ? tn->need : need;
        if (need > synced) {
            double t0 = svc_mono();

            if (svc_store_sync(d->store) != 0) {
                svc_log("error", "fsync of the store failed; exiting so that a restart recovers", NULL);
                abort();
            }
            synced = need;
            atomic_fetch_add(&d->met.syncs, 1);
            atomic_fetch_add(&d->met.sync_ns, (unsigned long long)((svc_mono() - t0) * 1e9));
        }
        for (; t != NULL; t = tn) {
            tn = t->next;
            ticket_release(d, t);
        }
    }
    return NULL;
}

/* A ticket for msgs (and, after a commit, the batch's views, events and
 * plans). Out of memory it waits for memory: the replies cannot go out
 * before the fsync, nor out of order. */
static void ticket(svc_t *d, svc_msg_t *msgs, bool committed)
{
    svc_ticket_t *t;

    while ((t = calloc(1, sizeof(*t))) == NULL) {
        struct timespec ts = { 0, 1000000L };

        nanosleep(&ts, NULL);
    }
    t->need = d->commits;
    t->msgs = msgs;
    if (committed) {
        take_views(t);
        t->ev_next = svc_events_next(d);
        t->plans = d->staged_head;
        d->staged_head = d->staged_tail = NULL;
    }
    ticket_push(d, t);
}

/* A sim job ends at `at`: one entry a job, moved when it is placed again,
 * taken out when it is queued again or ends otherwise. */
static void ends_set(svc_job_t *j, double at)
{
    if (ms__evheap_set(&L.ends, j->tix, at) != 0)   /* the job runs on until cancelled or done */
        svc_log("error", "out of memory: a sim job will not end on its own", json_pack("{s:s}", "job", j->id));
}

static svc_job_t *job_of_slot(svc_t *d, int32_t slot)
{
    svc_job_t *j = svc_jobs_by_slot(&d->jobs, slot);
    ms_sched_job_info_t info;

    if (j != NULL)
        return j;
    if (L.submitting != NULL && ms_sched_job(d->sched, slot, &info) == MS_OK && info.id != NULL &&
        strcmp(info.id, L.submitting->id) == 0)
        return L.submitting;
    return NULL;
}

static void prof_name(svc_t *d, int gpu, int prof, char *buf, size_t len)
{
    const ms_geom_t *g = NULL;

    buf[0] = '\0';
    if (gpu < 0 || gpu >= ms_sched_ngpus(d->sched))
        return;
    (void)ms_sched_gpu(d->sched, gpu, &g);
    if (g != NULL && prof >= 0 && prof < ms_geom_nprofiles(g))
        snprintf(buf, len, "%s", ms_geom_profile(g, prof)->name);
}

/* --- the executor callback: journal and stage every plan ---------------- */

static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    svc_t *d = ctx;
    svc_xplan_t *x;
    int i;

    if (d->reconciling || p->n == 0)
        return MS_OK;   /* start-up: the inventory diff does it (see above) */
    if ((x = calloc(1, sizeof(*x))) == NULL || (x->ops = calloc((size_t)p->n, sizeof(*x->ops))) == NULL) {
        svc_xplan_free(x);
        d->sched_err = 1;
        return MS_ENOMEM;
    }
    x->n = p->n;
    x->kind = p->kind;
    pthread_mutex_lock(&d->xmu);
    x->epoch = d->xepoch;
    pthread_mutex_unlock(&d->xmu);
    for (i = 0; i < p->n; i++) {
        svc_xop_t *o = &x->ops[i];
        svc_job_t *j = p->ops[i].op.job >= 0 ? job_of_slot(d, p->ops[i].op.job) : NULL;

        o->op = p->ops[i].op;
        o->op_id = p->ops[i].id;
        o->idx = i;
        o->jp = j;
        snprintf(o->job, sizeof(o->job), "%s", j != NULL ? j->id : "");
        prof_name(d, o->op.gpu, o->op.prof, o->prof_name, sizeof(o->prof_name));
        if (j != NULL) {
            j->inflight++;
            mark(j);
        }
    }
    if (svc_store_plan(d->store, ms_plan_kind_name(p->kind), p->now, x->ops, x->n, &x->plan_id) != 0) {
        svc_xplan_free(x);
        d->sched_err = 1;
        return MS_EIO;
    }
    if (d->staged_tail != NULL)
        d->staged_tail->next = x;
    else
        d->staged_head = x;
    d->staged_tail = x;
    return MS_OK;
}

/* --- job state: from the scheduler's view into the table and store ------ */

static void set_place(svc_t *d, svc_job_t *j, const ms_sched_job_info_t *info)
{
    int node, group, local, first;
    const ms_geom_t *g = NULL;

    if (info->ninst <= 0)
        return;
    ms_sched_gpu_where(d->sched, info->inst[0].gpu, &node, &group, &local);
    first = ms_sched_node_first_gpu(d->sched, node);
    j->place.node = node;
    snprintf(j->place.node_name, sizeof(j->place.node_name), "%s", ms_sched_node(d->sched, node)->name);
    j->place.gpu_global = info->inst[0].gpu;
    j->place.gpu = info->inst[0].gpu - first;
    j->place.start = info->inst[0].start;
    j->place.ninst = info->ninst;
    (void)ms_sched_gpu(d->sched, info->inst[0].gpu, &g);
    snprintf(j->place.profile, sizeof(j->place.profile), "%s",
             g != NULL && info->inst[0].prof >= 0 ? ms_geom_profile(g, info->inst[0].prof)->name : "");
}

static void sync_job(svc_t *d, svc_job_t *j, double now)
{
    ms_sched_job_info_t info;
    bool changed = false, fresh = j->seq == 0;
    int old = fresh ? MS_JOB_QUEUED : j->state;

    j->dirty = false;
    if (j->slot >= 0 && ms_sched_job(d->sched, j->slot, &info) == MS_OK) {
        svc_place_t before = j->place;

        if ((int)info.state != j->state) {
            j->state = (int)info.state;
            changed = true;
        }
        set_place(d, j, &info);
        if (memcmp(&before, &j->place, sizeof(before)) != 0)
            changed = true;
        if (info.start_t > 0 && j->state != MS_JOB_QUEUED && j->start_t == 0) {
            j->start_t = info.start_t;
            changed = true;
        }
        if (is_terminal(j->state) && j->end_t == 0) {
            j->end_t = info.end_t > 0 ? info.end_t : now;
            changed = true;
        }
        if (j->state == MS_JOB_QUEUED && j->start_t != 0) {   /* requeued after a failed start */
            j->start_t = 0;
            changed = true;
        }
    }
    if (fresh)
        (void)svc_store_job_insert(d->store, j);
    else if (changed || j->need_write)
        (void)svc_store_job_update(d->store, j);
    if (fresh || changed || j->need_write || !j->published)
        topub(j);
    j->need_write = false;
    if (fresh)
        svc_event_add(d, j->id, "queued", j->submit_t);
    if (j->state != old)
        svc_event_add(d, j->id, ms_job_state_name((ms_job_state_t)j->state), now);
    if (old == MS_JOB_QUEUED && j->state != MS_JOB_QUEUED && !j->counted_wait && j->start_t > 0) {
        svc_hist_add(&d->met.wait, j->start_t - j->submit_t);
        j->counted_wait = true;
    }
    if (j->state == MS_JOB_RUNNING && j->finish_at == 0 && j->req.duration_s > 0) {
        j->finish_at = now + j->req.duration_s / d->cfg->time_scale;
        ends_set(j, j->finish_at);
    }
    if (j->state == MS_JOB_QUEUED)
        j->finish_at = 0;
    if (j->state == MS_JOB_QUEUED || is_terminal(j->state))
        ms__evheap_del(&L.ends, j->tix);   /* it no longer ends on its own */
    if (is_terminal(j->state) && j->inflight == 0 && j->slot >= 0) {
        (void)ms_sched_forget(d->sched, j->slot);
        (void)svc_jobs_set_slot(&d->jobs, j, -1);
    }
}

static void sync_dirty(svc_t *d, double now)
{
    size_t i;

    /* sync_job may mark more (never: it calls nothing that plans) */
    for (i = 0; i < L.ndirty; i++)
        sync_job(d, L.dirty[i], now);
    L.ndirty = 0;
}

/* Everything a scheduler call may have changed: the jobs of its plans are
 * marked by on_plan; the job it was about is marked here. */
static void after_call(svc_t *d, svc_job_t *j, ms_status_t st, const char *what)
{
    mark(j);
    if (st != MS_OK && st != MS_ENOFIT)
        svc_log("error", "scheduler call failed",
                json_pack("{s:s,s:s,s:s}", "call", what, "status", ms_status_name(st), "job",
                          j != NULL ? j->id : ""));
}

/* --- request handlers --------------------------------------------------- */

static void gen_id(svc_t *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%06" PRIu64, d->id_prefix, ++d->id_counter);
}

static void h_submit(svc_t *d, svc_msg_t *m, double now)
{
    svc_job_t *j;
    ms_sched_req_t r;
    ms_diag_t diag;
    ms_status_t st;
    int32_t slot = -1;
    char idbuf[64];

    if (m->id != NULL && (j = svc_jobs_find(&d->jobs, m->id)) != NULL) {
        if (strcmp(j->body, m->canon) == 0)
            reply_view(m, 200, j);
        else
            reply_err(m, 409, "id", "a job with this id exists with another request");
        return;
    }
    if (m->id == NULL) {
        do
            gen_id(d, idbuf, sizeof(idbuf));
        while (svc_jobs_find(&d->jobs, idbuf) != NULL);
    }
    if ((j = calloc(1, sizeof(*j))) == NULL || (j->id = strdup(m->id != NULL ? m->id : idbuf)) == NULL) {
        free(j);
        reply_err(m, 500, "", "out of memory");
        return;
    }
    j->body = m->canon;
    m->canon = NULL;
    j->req = m->req;
    memset(&m->req, 0, sizeof(m->req));
    j->slot = -1;
    j->place.node = -1;
    j->submit_t = now;
    j->state = MS_JOB_QUEUED;
    if (svc_table_reserve(d) != 0) {   /* before the scheduler has the job */
        reply_err(m, 500, "", "out of memory");
        svc_job_free(j);
        return;
    }
    svc_job_sched_req(j, &r);
    ms_diag_clear(&diag);
    L.submitting = j;
    st = ms_sched_submit(d->sched, &r, now, &slot, &diag);
    L.submitting = NULL;
    if (st != MS_OK && slot < 0) {
        reply_err(m, st == MS_ENOFIT ? 422 : 400, diag.field[0] ? diag.field : "profile",
                  diag.msg[0] ? diag.msg : ms_strerror(st));
        svc_job_free(j);
        return;
    }
    svc_table_add(d, j, slot);
    after_call(d, j, st, "submit");
    sync_job(d, j, now);   /* insert: gets its seq */
    reply_view(m, 201, j);
}

static void h_get(svc_t *d, svc_msg_t *m)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, m->id);

    if (j == NULL)
        reply_err(m, 404, "id", "no such job");
    else
        reply_view(m, 200, j);
}

static bool label_match(svc_job_t *j, const char *kv)
{
    const char *eq = strchr(kv, '='), *v;
    char key[64];

    if (eq == NULL || (size_t)(eq - kv) >= sizeof(key))
        return false;
    if (j->req.labels == NULL) {   /* loaded from the store's columns: from the body, once */
        json_error_t je;
        json_t *b = json_loads(j->body, 0, &je), *l = json_object_get(b, "labels");

        if (json_is_object(l))
            j->req.labels = json_incref(l);
        json_decref(b);
    }
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    v = json_string_value(json_object_get(j->req.labels, key));
    return v != NULL && strcmp(v, eq + 1) == 0;
}

/* Written as text (svc_job_render): a page is up to 1,000 jobs. */
static void h_list(svc_t *d, svc_msg_t *m)
{
    svc_jtext_t t = { 0 };
    uint64_t after = 0;
    size_t lo = 0, hi = d->jobs.n, i;
    long n = 0, limit = m->q_limit > 0 ? m->q_limit : 100;
    int want = -1, k;
    bool more = false;
    char *end;

    if (m->q_state != NULL) {
        for (k = 0; k < MS_JOB_NSTATES; k++)
            if (strcmp(ms_job_state_name((ms_job_state_t)k), m->q_state) == 0)
                want = k;
        if (want < 0) {
            reply_err(m, 400, "state", "queued, reserved, starting, running, migrating, done, cancelled or failed");
            return;
        }
    }
    if (m->q_cursor != NULL) {
        after = strtoull(m->q_cursor, &end, 10);
        if (*m->q_cursor == '\0' || *end != '\0') {
            reply_err(m, 400, "cursor", "the cursor must be a value of \"next\" from an earlier page");
            return;
        }
    }
    while (lo < hi) {   /* the first job with seq > after */
        size_t mid = lo + (hi - lo) / 2;

        if (d->jobs.v[mid]->seq <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    svc_jtext_raw(&t, "{\"jobs\":[");
    for (i = lo; i < d->jobs.n; i++) {
        svc_job_t *j = d->jobs.v[i];
        svc_jview_t v;

        if (want >= 0 && j->state != want)
            continue;
        if (m->q_label != NULL && !label_match(j, m->q_label))
            continue;
        if (n == limit) {
            more = true;
            break;
        }
        if (n > 0)
            svc_jtext_raw(&t, ",");
        svc_jview_now(j, &v);
        svc_job_render(&t, j->id, j->body, &v, d->be);
        n++;
    }
    svc_jtext_raw(&t, "],\"next\":");
    if (more) {   /* the cursor (a string): the next page starts after v[i - 1] */
        svc_jtext_raw(&t, "\"");
        svc_jtext_int(&t, (long long)d->jobs.v[i - 1]->seq);
        svc_jtext_raw(&t, "\"");
    } else
        svc_jtext_raw(&t, "null");
    svc_jtext_raw(&t, "}");
    m->status = 200;
    if ((m->body = svc_jtext_take(&t)) == NULL)
        reply_err(m, 500, "", "out of memory");
}

static void h_cancel(svc_t *d, svc_msg_t *m, double now)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, m->id);
    ms_status_t st;

    if (j == NULL) {
        reply_err(m, 404, "id", "no such job");
        return;
    }
    if (!is_terminal(j->state) && j->slot >= 0) {
        if (j->state == MS_JOB_STARTING || j->state == MS_JOB_MIGRATING) {
            reply_err(m, 409, "state", "the job's instance is being set up; retry in a moment");
            return;
        }
        st = ms_sched_cancel(d->sched, j->slot, now);
        after_call(d, j, st, "cancel");
        sync_job(d, j, now);
    }
    reply_view(m, 200, j);
}

static void h_done(svc_t *d, svc_msg_t *m, double now)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, m->id);
    ms_status_t st;

    if (j == NULL) {
        reply_err(m, 404, "id", "no such job");
        return;
    }
    if (j->state == MS_JOB_DONE) {
        reply_view(m, 200, j);
        return;
    }
    if (j->state != MS_JOB_RUNNING || j->slot < 0) {
        reply_err(m, 409, "state", "only a running job can be done");
        return;
    }
    st = ms_sched_finished(d->sched, j->slot, now);
    after_call(d, j, st, "finished");
    sync_job(d, j, now);
    reply_view(m, 200, j);
}

static void h_opresult(svc_t *d, svc_msg_t *m, double now)
{
    static const char *const RES[] = { "done", "failed", "discarded" };
    ms_status_t st = MS_OK;
    int k = m->op_kind >= 1 && m->op_kind <= MS_OP_STOP ? m->op_kind : 0;

    (void)svc_store_op_result(d->store, m->plan_id, m->idx, RES[m->result], now);
    d->met.ops[k][m->result]++;
    if (k == MS_OP_MOVE && m->result < 2)
        d->met.migrations[m->op_bbm ? 1 : 0][m->result]++;
    if (m->result == 0) {
        st = ms_sched_op_done(d->sched, m->op_id, now);
    } else if (m->result == 1) {
        /* plans made from here on come after the failure: the executor runs
         * them (those made before are discarded, and op_failed rolls them back) */
        pthread_mutex_lock(&d->xmu);
        d->xepoch++;
        pthread_mutex_unlock(&d->xmu);
        st = ms_sched_op_failed(d->sched, m->op_id, now);
    }
    if (m->job != NULL) {
        m->job->inflight--;
        mark(m->job);
    }
    if (st != MS_OK && st != MS_ENOENT)
        svc_log("error", "op outcome", json_pack("{s:s}", "status", ms_status_name(st)));
}

/* Sim jobs that reached their duration end. Every batch ends those due,
 * and an idle loop wakes for the next one, but at most every FINISH_GAP_S
 * (each wake is a transaction of its own; ends that close together share
 * one). Ending them only at the 100 ms tick stretched a job of 60 ms (60 s
 * at --time-scale 1000) by up to 100 ms. A job not running when due
 * (starting, migrating) is tried again a tick later. */
static void finish_due(svc_t *d, double now)
{
    bool ended = false;

    const ms__ev_t *e;

    while ((e = ms__evheap_top(&L.ends)) != NULL && e->t <= now) {
        svc_job_t *j = d->jobs.v[e->id];

        ms__evheap_pop(&L.ends);
        if (j->slot < 0)   /* forgotten (ended) in this batch, before its sync */
            continue;
        if (j->state == MS_JOB_RUNNING) {
            after_call(d, j, ms_sched_finished(d->sched, j->slot, now), "finished");
            ended = true;
        } else
            ends_set(j, now + TICK_S);
    }
    if (ended)
        L.finish_gate = now + FINISH_GAP_S;
}

/* The scheduler's tick: expired holds, and a pass over the queue. */
static void tick(svc_t *d, double now)
{
    (void)ms_sched_tick(d->sched, now);
    svc_ext_tick(d, now);
}

static void handle(svc_t *d, svc_msg_t *m, double now)
{
    json_t *o;

    switch (m->kind) {
    case SVC_M_SUBMIT: h_submit(d, m, now); break;
    case SVC_M_GET: h_get(d, m); break;
    case SVC_M_LIST: h_list(d, m); break;
    case SVC_M_CANCEL: h_cancel(d, m, now); break;
    case SVC_M_DONE: h_done(d, m, now); break;
    case SVC_M_CLUSTER: reply_json(m, 200, svc_cluster_json(d)); break;
    case SVC_M_METRICS:
        m->status = 200;
        m->ctype = "text/plain; version=0.0.4; charset=utf-8";
        if ((m->body = svc_metrics_text(d)) == NULL)
            reply_err(m, 500, "", "out of memory");
        break;
    case SVC_M_READY: {
        /* a standby is alive but not ready: a Service sends its traffic,
         * kube-scheduler's extender calls included, to the leader only */
        bool serving = svc_ext_serving(d), ready = d->ready && serving;

        o = json_pack("{s:b,s:b,s:I}", "ready", ready, "leader", serving, "pending_ops",
                      (json_int_t)ms_sched_pending(d->sched));
        reply_json(m, ready ? 200 : 503, o);
        break;
    }
    case SVC_M_OPRESULT: h_opresult(d, m, now); break;
    case SVC_M_EXT: svc_ext_handle(d, m, now); break;
    default: reply_err(m, 500, "", "unknown message");
    }
}

static void flush_staged(svc_t *d)
{
    svc_xplan_t *p = d->staged_head, *n;

    for (; p != NULL; p = n) {
        n = p->next;
        svc_exec_push(d, p);
    }
    d->staged_head = d->staged_tail = NULL;
}

static bool is_read(const svc_msg_t *m)
{
    return m->kind == SVC_M_GET || m->kind == SVC_M_LIST || m->kind == SVC_M_CLUSTER ||
           m->kind == SVC_M_METRICS || m->kind == SVC_M_READY ||
           (m->kind == SVC_M_EXT && svc_ext_is_read(m));
}

/* Split the batch: handle and answer its reads at once, return the rest in
 * order. Once answered, a message belongs to its caller again (which
 * frees it), so the lists are split before any is answered. */
static svc_msg_t *answer_reads(svc_t *d, svc_msg_t *batch, double now)
{
    svc_msg_t *m, *next, *reads = NULL, **rt = &reads, *rest = NULL, **wt = &rest;

    (void)next;

    for (m = batch; m != NULL; m = next) {
        next = m->next;
        m->next = NULL;
        if (is_read(m)) {
            *rt = m;
            rt = &m->next;
        } else {
            *wt = m;
            wt = &m->next;
        }
    }
    if (reads == NULL)
        return rest;
    for (m = reads; m != NULL; m = m->next)
        handle(d, m, now);
    ticket(d, reads, false);   /* out once the commits they show are durable */
    return rest;
}

static void *loop(void *arg)
{
    svc_t *d = arg;
    double last_tick = 0, last_commit = 0;
    svc_msg_t *held = NULL, **held_tail = &held;   /* handled, not yet committed */
    bool open_tx = false;

    for (;;) {
        svc_msg_t *batch, *m;
        struct timespec ts;
        double now, t_start, t_decide, t_commit, t_end;
        bool stop;

        pthread_mutex_lock(&d->mu);
        if (d->qhead == NULL && !d->stopping) {
            /* until the next tick or the next sim job's end (both in
             * svc_now's clock, CLOCK_REALTIME, the condition's clock) */
            double until = last_tick + TICK_S, whole;

            if (ms__evheap_top(&L.ends) != NULL) {
                double at = ms__evheap_top(&L.ends)->t, end = at > L.finish_gate ? at : L.finish_gate;

                until = end < until ? end : until;
            }
            if (open_tx) {   /* the held commit's time, in the same clock */
                double due = svc_now() + (last_commit + d->cfg->commit_delay_s - svc_mono());

                until = due < until ? due : until;
            }
            if (until > svc_now()) {
                ts.tv_nsec = (long)(modf(until, &whole) * 1e9);
                ts.tv_sec = (time_t)whole;
                if (ts.tv_nsec >= 1000000000L)
                    ts.tv_nsec = 999999999L;
                (void)pthread_cond_timedwait(&d->cv, &d->mu, &ts);
            }
        }
        batch = d->qhead;
        d->qhead = d->qtail = NULL;
        stop = d->stopping && batch == NULL;
        if (stop)
            d->stopped = true;   /* under the lock svc_call checks: nothing is left waiting */
        pthread_mutex_unlock(&d->mu);
        now = svc_now();
        t_start = svc_mono();
        for (m = batch; m != NULL; m = m->next) {
            d->met.loop_msgs++;
            d->met.loop_wait_s += t_start - m->t_enq;
        }
        /* Reads first: at the start of a batch memory holds what the earlier
         * batches committed, so a read needs only their fsync, not this
         * batch's. While a commit is held, memory is ahead of the commits:
         * its reads wait for the held commit. */
        if (!open_tx) {
            batch = answer_reads(d, batch, now);
            if (svc_store_begin(d->store) != 0) {
                svc_log("error", "cannot begin a transaction; stopping", NULL);
                abort();
            }
            open_tx = true;
        }
        for (m = batch; m != NULL; m = m->next)
            handle(d, m, now);
        if (!stop)
            finish_due(d, now);
        if (now - last_tick >= TICK_S && !stop) {
            tick(d, now);
            last_tick = now;
        }
        sync_dirty(d, now);
        t_decide = svc_mono();
        d->met.loop_decide_s += t_decide - t_start;
        *held_tail = batch;
        while (*held_tail != NULL)
            held_tail = &(*held_tail)->next;
        if (!stop && t_decide - last_commit < d->cfg->commit_delay_s) {
            /* group commit with a delay: the batches of the next moments
             * join this transaction (one commit and one fsync for all) */
            continue;
        }
        if (svc_store_commit(d->store) != 0) {
            /* memory is ahead of the disk: answering would acknowledge jobs
             * that are not durable. Restarting recovers from the store. */
            svc_log("error", "commit failed; exiting so that a restart recovers from the store", NULL);
            abort();
        }
        open_tx = false;
        d->commits++;
        t_commit = svc_mono();
        last_commit = t_commit;
        ticket(d, held, true);   /* the syncer answers once it is durable */
        held = NULL;
        held_tail = &held;
        t_end = svc_mono();
        d->met.loop_batches++;
        d->met.loop_commit_s += t_commit - t_decide;
        d->met.loop_reply_s += t_end - t_commit;
        if (stop)
            break;
    }
    return NULL;
}

/* --- start-up ----------------------------------------------------------- */

static int load_one(void *ctx, svc_job_t *j)
{
    svc_t *d = ctx;
    svc_err_t err;
    char *id = NULL, *canon = NULL;
    int rc;

    /* the store's request columns (gang >= 1) spare parsing the body; a row
     * from before them is parsed */
    if (j->req.gang < 1 && svc_req_parse(j->body, strlen(j->body), &id, &j->req, &canon, &err) != 0) {
        /* keep it (it was acknowledged) but never run it */
        svc_log("error", "a stored job's request does not parse; it is marked failed",
                json_pack("{s:s,s:s}", "job", j->id, "error", err.msg));
        if (!is_terminal(j->state)) {
            j->state = MS_JOB_FAILED;
            j->end_t = svc_now();
            snprintf(j->reason, sizeof(j->reason), "the stored request does not parse: %s", err.msg);
            j->need_write = true;
            mark(j);
        }
    }
    free(id);
    free(canon);
    if (j->state == MS_JOB_RESERVED) {
        /* a hold (the extender's) does not outlive the daemon: the
         * scheduler that asked for it filters again */
        j->state = MS_JOB_CANCELLED;
        j->end_t = svc_now();
        j->need_write = true;
        mark(j);
    }
    if (j->place.node >= 0 && (j->place.node = ms_sched_node_find(d->sched, j->place.node_name)) < 0)
        j->place.node = -1;
    j->counted_wait = j->start_t > 0;
    pthread_mutex_lock(&d->rmu);
    rc = svc_jobs_add(&d->jobs, j);
    pthread_mutex_unlock(&d->rmu);
    if (rc != 0) {
        svc_job_free(j);
        return -1;
    }
    return 0;
}

static bool view_has(svc_t *d, const svc_binst_t *b)
{
    const ms_geom_t *g;
    const ms_gpu_t *gpu = ms_sched_gpu(d->sched, b->gpu, &g);
    int i;

    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];
        svc_job_t *j = in->job >= 0 ? svc_jobs_by_slot(&d->jobs, in->job) : NULL;

        if (in->start != b->start || in->prof != b->prof)
            continue;
        if (in->job < 0 && b->job[0] == '\0')
            return true;
        if (j != NULL && strcmp(j->id, b->job) == 0)
            return true;
    }
    return false;
}

static bool inv_has(const svc_binst_t *v, int n, int gpu, const ms_inst_t *in)
{
    int i;

    for (i = 0; i < n; i++)
        if (v[i].gpu == gpu && v[i].start == in->start && v[i].prof == in->prof && v[i].job[0] == '\0')
            return true;
    return false;
}

static int cmp_tag(const void *a, const void *b)
{
    const svc_binst_t *x = a, *y = b;
    int c = strcmp(x->job, y->job);

    return c != 0 ? c : (x->gpu != y->gpu ? (x->gpu < y->gpu ? -1 : 1) : 0);
}

static int reconcile(svc_t *d, double now)
{
    svc_binst_t *inv = NULL;
    int n = 0, i, e, g;
    size_t k;

    if (svc_backend_inventory(d->be, &inv, &n) != 0)
        return -1;
    qsort(inv, (size_t)n, sizeof(*inv), cmp_tag);
    /* adopt complete instance sets of live jobs */
    for (i = 0; i < n; i = e) {
        svc_job_t *j;
        ms_sched_req_t r;
        ms_diag_t diag;
        bool ok;

        for (e = i + 1; e < n && strcmp(inv[e].job, inv[i].job) == 0; e++)
            ;
        if (inv[i].job[0] == '\0')
            continue;
        j = svc_jobs_find(&d->jobs, inv[i].job);
        ok = j != NULL && is_live(j->state) && e - i == (j->req.gang > 1 ? j->req.gang : 1);
        if (!ok)
            continue;
        svc_job_sched_req(j, &r);
        for (g = i; g < e && ok; g++) {
            ms_diag_clear(&diag);
            if (ms_sched_adopt(d->sched, inv[g].gpu, inv[g].prof, inv[g].start, &r, now, &diag) != MS_OK) {
                svc_log("warn", "cannot adopt an instance; the job is queued again",
                        json_pack("{s:s,s:i,s:i,s:s}", "job", j->id, "gpu", (int)inv[g].gpu, "start",
                                  (int)inv[g].start, "why", diag.msg));
                ok = false;
            }
        }
        if (ok) {
            int32_t slot = ms_sched_find(d->sched, j->id);

            (void)svc_jobs_set_slot(&d->jobs, j, slot);
            mark(j);
            d->adopted++;
            if (j->req.duration_s > 0 && j->start_t > 0) {
                j->finish_at = j->start_t + j->req.duration_s / d->cfg->time_scale;
                ends_set(j, j->finish_at);
            }
        } else {
            int32_t slot = ms_sched_find(d->sched, j->id);

            if (slot >= 0) {   /* partly adopted gang: drop it from the view */
                (void)ms_sched_cancel(d->sched, slot, now);
                (void)ms_sched_forget(d->sched, slot);
            }
        }
    }
    /* the hardware follows the view */
    for (i = 0; i < n; i++)
        if (!view_has(d, &inv[i])) {
            svc_log("info", "reconcile: destroying an instance nothing owns",
                    json_pack("{s:i,s:i,s:i,s:s}", "gpu", (int)inv[i].gpu, "start", (int)inv[i].start,
                              "prof", (int)inv[i].prof, "job", inv[i].job));
            if (svc_backend_destroy(d->be, &inv[i]) != 0)
                svc_log("error", "reconcile: destroy failed", NULL);
            d->destroyed_at_start++;
        }
    for (g = 0; g < ms_sched_ngpus(d->sched); g++) {
        const ms_geom_t *geom;
        const ms_gpu_t *gpu = ms_sched_gpu(d->sched, g, &geom);

        for (e = 0; e < gpu->ninst; e++)
            if (gpu->inst[e].job < 0 && gpu->inst[e].start >= 0 && !inv_has(inv, n, g, &gpu->inst[e]) &&
                svc_backend_create(d->be, g, gpu->inst[e].prof, gpu->inst[e].start) != 0)
                svc_log("error", "reconcile: create failed", NULL);
    }
    free(inv);
    d->reconciling = false;
    /* jobs that lost their instances, and every queued job, in order */
    for (k = 0; k < d->jobs.n; k++) {
        svc_job_t *j = d->jobs.v[k];
        ms_sched_req_t r;
        ms_diag_t diag;
        int32_t slot = -1;
        ms_status_t st;

        if (is_terminal(j->state) || j->slot >= 0)
            continue;
        if (j->state != MS_JOB_QUEUED) {   /* lost its instances: queued again */
            svc_event_add(d, j->id, "queued", now);
            j->state = MS_JOB_QUEUED;
            j->start_t = 0;
            j->place.node = -1;
            j->finish_at = 0;
            j->need_write = true;
        }
        mark(j);
        svc_job_sched_req(j, &r);
        ms_diag_clear(&diag);
        L.submitting = j;
        st = ms_sched_submit(d->sched, &r, now, &slot, &diag);
        L.submitting = NULL;
        if (slot >= 0)
            (void)svc_jobs_set_slot(&d->jobs, j, slot);
        else {
            j->state = MS_JOB_FAILED;
            j->end_t = now;
            j->need_write = true;
            snprintf(j->reason, sizeof(j->reason), "after restart: %s",
                     diag.msg[0] ? diag.msg : ms_strerror(st));
            svc_event_add(d, j->id, "failed", now);
        }
    }
    return 0;
}

static int build_sched(svc_t *d, double now)
{
    ms_sched_cfg_t cfg;
    ms_diag_t diag;
    const ms_policy_ops_t *pol = ms_policy_find(d->cfg->policy);
    ms_status_t st;

    if (pol == NULL) {
        svc_log("error", "unknown policy", json_pack("{s:s}", "policy", d->cfg->policy));
        return -1;
    }
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = pol;
    cfg.pcfg = d->cfg->pcfg;
    cfg.queue = d->cfg->qcfg.queue;
    cfg.backfill_bound_s = d->cfg->qcfg.backfill_bound_s;
    cfg.aging_rate = d->cfg->qcfg.aging_rate;
    cfg.default_estimate_s = d->cfg->qcfg.default_estimate_s;
    cfg.nodes = ms_cluster_spec_nodes(d->spec);
    cfg.nnodes = ms_cluster_spec_nnodes(d->spec);
    cfg.track_ops = true;
    cfg.exec.ctx = d;
    cfg.exec.plan = on_plan;
    ms_diag_clear(&diag);
    if ((st = ms_sched_create(&cfg, now, &d->sched, &diag)) != MS_OK) {
        svc_log("error", "cannot create the scheduler",
                json_pack("{s:s,s:s,s:s}", "status", ms_status_name(st), "field", diag.field, "why", diag.msg));
        return -1;
    }
    return 0;
}

int svc_start(svc_t *d)
{
    double now = svc_now(), t0 = svc_mono(), t_load, t_rec;
    long unsettled;
    size_t k;

    memset(&L, 0, sizeof(L));
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    pthread_cond_init(&d->reply_cv, NULL);
    pthread_mutex_init(&d->rmu, NULL);
    pthread_mutex_init(&d->smu, NULL);
    pthread_cond_init(&d->scv, NULL);
    pthread_mutex_init(&d->xmu, NULL);
    pthread_cond_init(&d->xcv, NULL);
    svc_jobs_init(&d->jobs);
    d->reconciling = true;
    if (build_sched(d, now) != 0)
        return -1;
    if (svc_events_init(d, svc_store_last_event(d->store) + 1) != 0)
        return -1;
    if (svc_store_load(d->store, load_one, d) != 0)
        return -1;
    t_load = svc_mono();
    d->restored_jobs = (long)d->jobs.n;
    unsettled = svc_store_unsettled(d->store);
    if (svc_store_begin(d->store) != 0)
        return -1;
    if (reconcile(d, now) != 0 || svc_store_abandon(d->store, now) != 0) {
        svc_store_rollback(d->store);
        return -1;
    }
    t_rec = svc_mono();
    sync_dirty(d, now);
    if (svc_store_commit(d->store) != 0 || svc_store_sync(d->store) != 0)
        return -1;
    for (k = 0; k < d->jobs.n; k++)   /* every stored job is durable */
        topub(d->jobs.v[k]);
    {
        svc_ticket_t t;

        memset(&t, 0, sizeof(t));
        take_views(&t);
        for (k = 0; k < t.npub; k++) {
            t.pj[k]->pub = t.pv[k];
            t.pj[k]->published = true;
        }
        free(t.pj);
        free(t.pv);
    }
    svc_events_publish(d);
    if (svc_exec_start(d) != 0)
        return -1;
    flush_staged(d);
    if (pthread_create(&d->sync_th, NULL, syncer, d) != 0)
        return -1;
    if (pthread_create(&d->loop_th, NULL, loop, d) != 0)
        return -1;
    d->ready = true;
    svc_log("info", "started",
            json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f}", "jobs", (json_int_t)d->restored_jobs, "adopted",
                      (json_int_t)d->adopted, "destroyed", (json_int_t)d->destroyed_at_start,
                      "unsettled_ops", (json_int_t)unsettled, "seconds", svc_mono() - t0,
                      /* where it went: the store read, reconciliation with the
                       * resubmission of the queue, writing and publishing */
                      "load_s", t_load - t0, "reconcile_s", t_rec - t_load, "commit_s",
                      svc_mono() - t_rec));
    return 0;
}

void svc_stop(svc_t *d)
{
    svc_xplan_t *p;

    svc_exec_stop(d);
    pthread_mutex_lock(&d->mu);
    d->stopping = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->loop_th, NULL);
    pthread_mutex_lock(&d->smu);   /* the syncer releases what is left, then ends */
    d->sstop = true;
    pthread_cond_signal(&d->scv);
    pthread_mutex_unlock(&d->smu);
    pthread_join(d->sync_th, NULL);
    while ((p = d->staged_head) != NULL) {
        d->staged_head = p->next;
        svc_xplan_free(p);
    }
    while ((p = d->xhead) != NULL) {   /* pushed after the executor stopped */
        d->xhead = p->next;
        svc_xplan_free(p);
    }
    d->xtail = NULL;
    free(L.dirty);
    ms__evheap_fini(&L.ends);
    free(L.pub);
    memset(&L, 0, sizeof(L));
}
