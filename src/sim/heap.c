/* heap.c - the simulator's completion events: an indexed binary heap of
 * running jobs keyed by (finish time, seq).
 *
 * A job sits in it at most once (pos[job] is its slot), so a rate change is
 * a decrease/increase-key and the heap never holds stale entries. seq is
 * renewed on every update: ties go to the job scheduled first. (A first
 * version used lazy invalidation with version counters; the stale entries
 * made the heap grow to many times the running set and popping dominated
 * the profile.)
 */
#include <stdlib.h>

#include "sim/sim_int.h"

static int ev_less(const ms__sim_ev_t *a, const ms__sim_ev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void heap_set(ms__sim_t *s, size_t i, const ms__sim_ev_t *e)
{
    s->heap[i] = *e;
    s->pos[e->job] = (int32_t)i;
}

static void sift_up(ms__sim_t *s, size_t i, ms__sim_ev_t e)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;

        if (!ev_less(&e, &s->heap[p]))
            break;
        heap_set(s, i, &s->heap[p]);
        i = p;
    }
    heap_set(s, i, &e);
}

static void sift_down(ms__sim_t *s, size_t i, ms__sim_ev_t e)
{
    size_t n = s->hn;

    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const ms__sim_ev_t *best = &e;

        if (l < n && ev_less(&s->heap[l], best)) {
            m = l;
            best = &s->heap[l];
        }
        if (r < n && ev_less(&s->heap[r], best))
            m = r;
        if (m == i)
            break;
        heap_set(s, i, &s->heap[m]);
        i = m;
    }
    heap_set(s, i, &e);
}

/* Insert job or move it to its new finish time. */
ms_status_t ms__sim_heap_update(ms__sim_t *s, double t, int32_t job)
{
    ms__sim_ev_t e;
    int32_t at = s->pos[job];

    e.t = t;
    e.seq = s->seq++;
    e.job = job;
    if (at < 0) {
        if (s->hn == s->hcap) {
            size_t cap = s->hcap ? s->hcap * 2 : 1024;
            ms__sim_ev_t *h = realloc(s->heap, cap * sizeof(*h));

            if (h == NULL)
                return MS_ENOMEM;
            s->heap = h;
            s->hcap = cap;
        }
        sift_up(s, s->hn++, e);
    } else if (ev_less(&e, &s->heap[at])) {
        sift_up(s, (size_t)at, e);
    } else {
        sift_down(s, (size_t)at, e);
    }
    return MS_OK;
}

void ms__sim_heap_pop(ms__sim_t *s)
{
    ms__sim_ev_t last;

    s->pos[s->heap[0].job] = -1;
    last = s->heap[--s->hn];
    if (s->hn > 0)
        sift_down(s, 0, last);
}
