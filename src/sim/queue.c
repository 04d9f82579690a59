/* queue.c - the simulator's queues and scheduling pass.
 *
 * One FIFO per class (each profile, plus one for gangs). A pass repeatedly
 * takes the unblocked class whose head arrived first; a class whose head
 * does not fit is blocked for the rest of the pass, since placement depends
 * only on the cluster state and the job's profile. A pass is O(classes) per
 * placement, not O(queue). A start that would pass the overall head is
 * refused in FIFO mode, and in backfill mode once the head has waited
 * longer than backfill_bound_s.
 */
#include <string.h>

#include "sim/sim_int.h"

static int job_class(const ms__sim_t *s, int32_t j)
{
    return s->tr->jobs[j].gang > 1 ? s->np : s->tr->jobs[j].prof;
}

void ms__sim_enqueue(ms__sim_t *s, int32_t j)
{
    int k = job_class(s, j);

    s->jobs[j].next = -1;
    s->jobs[j].st = MS__J_WAITING;
    if (s->qtail[k] >= 0)
        s->jobs[s->qtail[k]].next = j;
    else
        s->qhead[k] = j;
    s->qtail[k] = j;
    s->waiting++;
    s->nwait[s->tr->jobs[j].prof]++;
}

static void dequeue_head(ms__sim_t *s, int k)
{
    int32_t j = s->qhead[k];

    s->qhead[k] = s->jobs[j].next;
    if (s->qhead[k] < 0)
        s->qtail[k] = -1;
    s->waiting--;
    s->nwait[s->tr->jobs[j].prof]--;
}

static ms_status_t try_place(ms__sim_t *s, int32_t j)
{
    ms_status_t st;

    ms_plan_clear(&s->plan);
    st = s->pol->place(s->self, s->c, &s->tr->jobs[j], &s->plan);
    if (st == MS_ENOFIT)
        return st;
    if (st != MS_OK) {
        ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: place(job %d) failed: %s",
                    s->pol->name, (int)j, ms_strerror(st));
        return st;
    }
    s->placing = j;
    st = ms__sim_run_plan(s, MS__PK_PLACE);
    s->placing = -1;
    if (st != MS_OK)
        return st;
    if (s->jobs[j].st != MS__J_RUNNING ||
        s->jobs[j].ninst != (s->tr->jobs[j].gang > 1 ? s->tr->jobs[j].gang : 1)) {
        ms_diag_set(s->diag, NULL, 0, "policy",
                    "policy %s: place(job %d) answered OK but started %d of its %d instances",
                    s->pol->name, (int)j, (int)s->jobs[j].ninst, (int)s->tr->jobs[j].gang);
        return MS_ESTATE;
    }
    return MS_OK;
}

static ms_status_t sched_pass(ms__sim_t *s)
{
    bool blocked[MS__SIM_NCLASS_MAX];
    bool tried_room = false;
    int k;
    ms_status_t st;

    memset(blocked, 0, sizeof(blocked));
    for (;;) {
        int best = -1, head = -1;
        int32_t j;

        for (k = 0; k < s->nclass; k++) {
            if (s->qhead[k] < 0)
                continue;
            if (head < 0 || s->qhead[k] < s->qhead[head])
                head = k;
            if (!blocked[k] && (best < 0 || s->qhead[k] < s->qhead[best]))
                best = k;
        }
        if (best < 0)
            break;
        if (best != head) {
            /* this start would pass the overall head */
            if (s->cfg->queue == MS_QUEUE_FIFO)
                break;
            if (s->now - s->tr->jobs[s->qhead[head]].arrival > s->cfg->backfill_bound_s)
                break;
        }
        j = s->qhead[best];
        st = try_place(s, j);
        if (st == MS_OK) {
            dequeue_head(s, best);
            s->changes++;
            continue;
        }
        if (st != MS_ENOFIT)
            return st;
        if (best == head && !tried_room && s->pol->make_room != NULL) {
            tried_room = true;
            ms_plan_clear(&s->plan);
            st = s->pol->make_room(s->self, s->c, &s->tr->jobs[j], s->now, &s->plan);
            if (st == MS_OK && s->plan.n > 0) {
                if ((st = ms__sim_run_plan(s, MS__PK_ROOM)) != MS_OK)
                    return st;
                continue;   /* place the head again */
            }
            if (st != MS_OK && st != MS_ENOFIT) {
                ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: make_room failed: %s",
                            s->pol->name, ms_strerror(st));
                return st;
            }
        }
        blocked[best] = true;
    }
    return MS_OK;
}

ms_status_t ms__sim_schedule(ms__sim_t *s)
{
    ms_status_t st = sched_pass(s);

    if (st != MS_OK || s->pol->on_idle == NULL)
        return st;
    ms_plan_clear(&s->plan);
    st = s->pol->on_idle(s->self, s->c, s->nwait, s->now, &s->plan);
    if (st == MS_ENOFIT || (st == MS_OK && s->plan.n == 0))
        return MS_OK;
    if (st != MS_OK) {
        ms_diag_set(s->diag, NULL, 0, "policy", "policy %s: on_idle failed: %s",
                    s->pol->name, ms_strerror(st));
        return st;
    }
    if ((st = ms__sim_run_plan(s, MS__PK_IDLE)) != MS_OK)
        return st;
    return sched_pass(s);
}
