/* jobq.c - the class queues: a waiting job's place in its class's queue
 * (priority, then submission), the class's cached head key, the waiting
 * counts per group and profile. The scheduler's thread, as all of
 * src/sched; the pass that reads them is queue.c.
 */
#include "sched/sched_int.h"

/* a before b in queue order */
static bool before(const ms_sched_t *s, int32_t a, int32_t b)
{
    const ms__job_t *x = &s->jobs[a], *y = &s->jobs[b];

    return x->priority > y->priority || (x->priority == y->priority && x->seq < y->seq);
}

static void nwait_add(ms_sched_t *s, int32_t slot, int d)
{
    const ms__cls_t *c = &s->cls[s->jobs[slot].cls];
    int i;

    for (i = 0; i < c->norder; i++) {
        ms__grp_t *gr = &s->grp[c->order[i]];

        gr->nwait[c->prof[c->order[i]]] += d;
        gr->nwait_all += d;
    }
}

/* Class c's head changed: a new head to offer (hgen), a change any
 * settled pass must see (qgen, queue.c's calm_pass), its place in the
 * kept order (pass_order), its cached key. */
static void head_key(ms_sched_t *s, ms__cls_t *c)
{
    c->hgen++;   /* a new head: offer it */
    s->qgen++;
    if (!c->pdirty) {   /* its place in the kept order (pass_order) */
        c->pdirty = 1;
        s->pdirty[s->npdirty++] = (int32_t)(c - s->cls);
    }
    if (c->qhead >= 0) {
        c->hprio = s->jobs[c->qhead].priority;
        c->hseq = s->jobs[c->qhead].seq;
        c->hsubmit = s->jobs[c->qhead].submit_t;
        c->hdem = c->dem1 * s->jobs[c->qhead].gang;
        c->hgang = s->jobs[c->qhead].gang;
        c->hmem = c->mem1 * (float)s->jobs[c->qhead].gang;
        c->hmemmin = c->memmin * (float)s->jobs[c->qhead].gang;
    }
}

void ms__sched_enqueue(ms_sched_t *s, int32_t slot)
{
    ms__job_t *j = &s->jobs[slot];
    ms__cls_t *c = &s->cls[j->cls];
    int32_t at = c->qtail;

    /* from the tail: O(1) for the usual arrival, O(position) for a requeue */
    while (at >= 0 && before(s, slot, at))
        at = s->jobs[at].prev;
    j->prev = at;
    j->next = at >= 0 ? s->jobs[at].next : c->qhead;
    if (j->next >= 0)
        s->jobs[j->next].prev = slot;
    else
        c->qtail = slot;
    if (at >= 0) {
        s->jobs[at].next = slot;
    } else {
        c->qhead = slot;
        head_key(s, c);
    }
    j->state = MS_JOB_QUEUED;
    j->inq = 1;
    s->st.waiting++;
    if (ms__tenant(s, c->tenant)->waiting++ == 0)
        ms__tenant_backlogged(s, c->tenant);
    nwait_add(s, slot, +1);
}

void ms__sched_dequeue(ms_sched_t *s, int32_t slot)
{
    ms__job_t *j = &s->jobs[slot];
    ms__cls_t *c = &s->cls[j->cls];

    if (j->prev >= 0) {
        s->jobs[j->prev].next = j->next;
    } else {
        c->qhead = j->next;
        head_key(s, c);
    }
    if (j->next >= 0)
        s->jobs[j->next].prev = j->prev;
    else
        c->qtail = j->prev;
    j->next = j->prev = -1;
    j->inq = 0;
    s->st.waiting--;
    ms__tenant(s, c->tenant)->waiting--;
    nwait_add(s, slot, -1);
}
