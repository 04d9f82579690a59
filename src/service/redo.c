/* redo.c - the loop thread: what happens when the store cannot write (a full
 * disk: SQLITE_FULL), so that nothing that happened is reported failed and
 * the view, the store and the backend meet again once space returns.
 *
 * The order stays journal first, then execute, then record: a batch's
 * transaction that cannot commit is rolled back, but what the batch decided
 * stays in memory (the scheduler's view, the jobs, the op outcomes the
 * executor reported, the events) and nothing of it leaves: its answers are
 * held, its plans stay staged (they reach the executor only once
 * journalled). Each later batch first writes all of that again (the jobs
 * changed since the last commit, the staged plans, the op outcomes, the
 * events) and then its own writes, and tries to commit; the first commit
 * that succeeds releases everything held, in order. Meanwhile new
 * submissions (POST /v1/jobs, the extender's filter and bind) are refused
 * with 503 and /readyz says the store is down; an op the executor already
 * ran is recorded in memory and written once there is room, never turned
 * into a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender.h"
#include "service/svc.h"

#define LOG_EVERY_S 10.0   /* while the store stays down, say so this often */

/* An op outcome since the last commit. */
typedef struct svc_oprec {
    int64_t plan_id;
    int idx;
    const char *result;            /* static text */
    double t;
} svc_oprec_t;

int svc_redo_op_result(svc_t *d, int64_t plan_id, int idx, const char *result, double now)
{
    svc_loop_t *L = &d->loop;

    if (L->noprec == L->capoprec) {
        size_t cap = L->capoprec ? L->capoprec * 2 : 64;
        svc_oprec_t *v = realloc(L->oprecs, cap * sizeof(*v));

        if (v == NULL)
            return -1;   /* written now or never: the journal shows it pending, which a restart abandons */
        L->oprecs = v;
        L->capoprec = cap;
    }
    L->oprecs[L->noprec++] = (svc_oprec_t){ plan_id, idx, result, now };
    return svc_store_op_result(d->store, plan_id, idx, result, now);
}

static int put_event(void *ctx, const svc_event_t *e)
{
    svc_t *d = ctx;

    return svc_store_event_put(d->store, e->seq, e->job, e->state, e->t);
}

/* Everything the failed transactions held, written again into the open one
 * (before the batch's own writes). */
void svc_redo_write(svc_t *d, double now)
{
    svc_loop_t *L = &d->loop;
    svc_qlink_t *l, *next;
    size_t i;

    if (!L->store_down)
        return;
    /* the rows that had a seq first: a row inserted anew takes the next
     * free one, which must not be one of theirs */
    for (i = 0; i < L->npub; i++)
        if (L->pub[i]->seq != 0)
            (void)svc_store_job_put(d->store, L->pub[i]);
    for (i = 0; i < L->npub; i++)
        if (L->pub[i]->seq == 0)
            (void)svc_store_job_put(d->store, L->pub[i]);
    /* the staged plans, journalled anew (their rows went with the rollback);
     * the loop's own queue, never closed: taken out and put back in order */
    for (l = svc_queue_drain(&L->staged); l != NULL; l = next) {
        svc_xplan_t *x = SVC_QITEM(l, svc_xplan_t, link);

        next = l->next;
        (void)svc_store_plan(d->store, ms_plan_kind_name((ms_plan_kind_t)x->kind), now, x->ops, x->n,
                             &x->plan_id);
        (void)svc_queue_push(&L->staged, l);
    }
    for (i = 0; i < L->noprec; i++)
        (void)svc_store_op_result(d->store, L->oprecs[i].plan_id, L->oprecs[i].idx, L->oprecs[i].result,
                                  L->oprecs[i].t);
    (void)svc_events_each(d, L->ev_durable, put_event, d);
}

/* The commit failed: roll back, keep everything in memory, say so. */
void svc_redo_failed(svc_t *d)
{
    svc_loop_t *L = &d->loop;
    double t = svc_clock_mono(d->clock);
    char why[256];

    svc_store_error(d->store, why, sizeof(why));
    svc_store_rollback(d->store);
    d->met.store_failures++;
    if (!L->store_down || t - L->down_logged >= LOG_EVERY_S) {
        ms_log("error", L->store_down ? "the store still cannot write; held in memory, retrying"
                                       : "the store cannot write; holding answers and plans in memory, "
                                         "refusing new submissions until it can",
               json_pack("{s:s,s:I,s:I}", "why", why, "held_jobs", (json_int_t)L->npub, "held_plans",
                         (json_int_t)svc_queue_len(&L->staged)));
        L->down_logged = t;
    }
    if (!L->store_down)
        L->down_since = t;
    L->store_down = true;
}

/* A commit succeeded: what was held is durable with it. */
void svc_redo_committed(svc_t *d)
{
    svc_loop_t *L = &d->loop;

    if (L->store_down)
        ms_log("info", "the store writes again; what was held is committed",
               json_pack("{s:f}", "down_s", svc_clock_mono(d->clock) - L->down_since));
    L->store_down = false;
    L->noprec = 0;
    L->ev_durable = svc_events_next(d);
}

bool svc_redo_refuses(const svc_t *d, const svc_msg_t *m)
{
    if (!d->loop.store_down)
        return false;
    return m->kind == SVC_M_SUBMIT || (m->kind == SVC_M_EXT && svc_ext_is_new(m));
}

/* Stopping while the store cannot write: what was held can never be stored,
 * so it is answered 503 (a submission's job was never acknowledged; a
 * client that retries with its id gets it from the next start or not at
 * all), and the HTTP front can finish. */
void svc_redo_give_up(svc_t *d)
{
    svc_loop_t *L = &d->loop;
    svc_qlink_t *l, *next, *answer = NULL, **tail = &answer;
    static const char WHY[] = "the store cannot write (is the disk full?) and the daemon is stopping: not stored";

    for (l = L->held; l != NULL; l = next) {
        svc_msg_t *m = SVC_QITEM(l, svc_msg_t, link);

        next = l->next;
        l->next = NULL;
        if (m->kind == SVC_M_OPRESULT) {
            svc_msg_free(m);
            continue;
        }
        free(m->body);
        m->body = NULL;
        free(m->rview.reason);
        memset(&m->rview, 0, sizeof(m->rview));
        m->rjob = NULL;
        if (m->kind == SVC_M_EXT)
            svc_ext_refuse(m, WHY);
        else
            svc_reply_err(m, 503, "", WHY);
        *tail = l;
        tail = &l->next;
    }
    L->held = NULL;
    L->held_tail = &L->held;
    for (l = answer; l != NULL; l = next) {
        next = l->next;
        svc_msg_answer(SVC_QITEM(l, svc_msg_t, link));
    }
}

void svc_redo_free(svc_t *d)
{
    free(d->loop.oprecs);
    d->loop.oprecs = NULL;
    d->loop.noprec = d->loop.capoprec = 0;
}
