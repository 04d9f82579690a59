/* jobs.c - the daemon's job table: every job it has acknowledged, in
 * submission order, with an id -> job map (src/core/idmap.h: it grows
 * without a pause, and HTTP threads look jobs up in it under svc_t.rmu
 * while the loop adds to it) and a slot -> job map for
 * translating plan ops. Jobs are never removed while the daemon runs (the
 * table is the API's history; 100,000 jobs cost a few tens of MB).
 *
 * Threads: the loop changes the table (adding under svc_t.rmu, see
 * svc_table_add in jobsync.c); any thread may look a job up under rmu. The
 * functions here take no lock themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "service/svc.h"

static const char *index_id(const void *ctx, int32_t i)
{
    return ((const svc_jobs_t *)ctx)->v[i]->id;
}

void svc_jobs_init(svc_jobs_t *t)
{
    memset(t, 0, sizeof(*t));
    ms__idmap_init(&t->ids, index_id, t, NULL, NULL);
}

bool svc_job_terminal(int state)
{
    return state == MS_JOB_DONE || state == MS_JOB_CANCELLED || state == MS_JOB_FAILED;
}

bool svc_job_live(int state)
{
    return state == MS_JOB_STARTING || state == MS_JOB_RUNNING || state == MS_JOB_MIGRATING;
}

void svc_req_free(svc_req_t *r)
{
    free(r->profile);
    free(r->model);
    free(r->tenant);
    json_decref(r->labels);
    memset(r, 0, sizeof(*r));
}

void svc_job_free(svc_job_t *j)
{
    if (j == NULL)
        return;
    free(j->id);
    free(j->body);
    free(j->pub.reason);
    svc_req_free(&j->req);
    free(j);
}

void svc_jview_now(const svc_job_t *j, svc_jview_t *v)
{
    v->state = j->state;
    v->submit_t = j->submit_t;
    v->start_t = j->start_t;
    v->end_t = j->end_t;
    v->kept_s = j->kept_s;
    v->place = j->place;
    v->reason = (char *)(uintptr_t)j->reason;   /* borrowed: read only */
    v->resolved = NULL;
}

int svc_jview_of(const svc_job_t *j, svc_jview_t *v)
{
    svc_jview_now(j, v);
    v->reason = NULL;
    if (j->reason[0] != '\0' && (v->reason = strdup(j->reason)) == NULL)
        return -1;
    return 0;
}

void svc_jobs_free(svc_jobs_t *t)
{
    size_t i;

    for (i = 0; i < t->n; i++)
        svc_job_free(t->v[i]);
    free(t->v);
    ms__idmap_fini(&t->ids);
    free(t->by_slot);
    memset(t, 0, sizeof(*t));
}

svc_job_t *svc_jobs_find(const svc_jobs_t *t, const char *id)
{
    int32_t i = ms__idmap_find(&t->ids, id);

    return i >= 0 ? t->v[i] : NULL;
}

static int room_for_one(svc_jobs_t *t)
{
    if (t->n >= INT32_MAX)
        return -1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        svc_job_t **v = realloc(t->v, cap * sizeof(*v));

        if (v == NULL)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    return 0;
}

/* by_slot covers slots [0, nslots) */
static int cover_slots(svc_jobs_t *t, int32_t nslots)
{
    int32_t n = t->nslots ? t->nslots : 1024, i;
    svc_job_t **v;

    if (nslots <= t->nslots)
        return 0;
    while (n < nslots)
        n = n > INT32_MAX / 2 ? INT32_MAX : n * 2;
    if ((v = realloc(t->by_slot, (size_t)n * sizeof(*v))) == NULL)
        return -1;
    for (i = t->nslots; i < n; i++)
        v[i] = NULL;
    t->by_slot = v;
    t->nslots = n;
    return 0;
}

int svc_jobs_reserve(svc_jobs_t *t, int32_t nslots)
{
    if (room_for_one(t) != 0 || ms__idmap_reserve(&t->ids) != 0)
        return -1;
    return cover_slots(t, nslots);
}

int svc_jobs_add(svc_jobs_t *t, svc_job_t *j)
{
    if (room_for_one(t) != 0)
        return -1;
    t->v[t->n] = j;   /* the map reads the id from here */
    if (ms__idmap_put(&t->ids, (int32_t)t->n) != 0)
        return -1;
    j->tix = (int32_t)t->n++;
    return 0;
}

int svc_jobs_set_slot(svc_jobs_t *t, svc_job_t *j, int32_t slot)
{
    if (slot >= INT32_MAX || (slot >= 0 && cover_slots(t, slot + 1) != 0))
        return -1;   /* j keeps its old slot */
    if (j->slot >= 0 && j->slot < t->nslots && t->by_slot[j->slot] == j)
        t->by_slot[j->slot] = NULL;
    j->slot = slot;
    if (slot < 0)
        return 0;
    t->by_slot[slot] = j;
    return 0;
}

svc_job_t *svc_jobs_by_slot(const svc_jobs_t *t, int32_t slot)
{
    return slot >= 0 && slot < t->nslots ? t->by_slot[slot] : NULL;
}

void svc_job_sched_req(const svc_job_t *j, ms_sched_req_t *r)
{
    memset(r, 0, sizeof(*r));
    r->id = j->id;
    r->profile = j->req.profile;
    r->mem_gb = j->req.mem_gb;
    r->gang = j->req.gang;
    r->priority = j->req.priority;
    r->migratable = j->req.migratable;
    r->estimate_s = j->req.estimate_s > 0 ? j->req.estimate_s : j->req.duration_s;
    r->checkpoint_s = j->req.checkpoint_s;
    r->kept_s = j->kept_s;
    r->model = j->req.model;
    r->isolation = j->req.isolation;
    r->tenant = j->req.tenant;
}
