/* evheap.c - timed events of numbered things (evheap.h). */
#include "core/evheap.h"

#include <stdlib.h>

static int ev_less(const ms__ev_t *a, const ms__ev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void put_at(ms__evheap_t *h, size_t i, const ms__ev_t *e)
{
    h->v[i] = *e;
    h->pos[e->id] = (int32_t)i;
}

static void sift_up(ms__evheap_t *h, size_t i, ms__ev_t e)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;

        if (!ev_less(&e, &h->v[p]))
            break;
        put_at(h, i, &h->v[p]);
        i = p;
    }
    put_at(h, i, &e);
}

static void sift_down(ms__evheap_t *h, size_t i, ms__ev_t e)
{
    size_t n = h->n;

    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const ms__ev_t *best = &e;

        if (l < n && ev_less(&h->v[l], best)) {
            m = l;
            best = &h->v[l];
        }
        if (r < n && ev_less(&h->v[r], best))
            m = r;
        if (m == i)
            break;
        put_at(h, i, &h->v[m]);
        i = m;
    }
    put_at(h, i, &e);
}

/* The entry at i removed and e (the heap's last) put in its place:
 * Floyd's bottom-up way. The hole goes down to a leaf by the smaller child
 * (one comparison a level, where sift_down needs two), then e goes up from
 * there; e came from the bottom, so it seldom goes far. Half the
 * comparisons of a pop, the simulator's most frequent heap call. */
static void refill(ms__evheap_t *h, size_t i, ms__ev_t e)
{
    size_t n = h->n;

    for (;;) {
        size_t l = 2 * i + 1, m;

        if (l >= n)
            break;
        m = l + 1 < n && ev_less(&h->v[l + 1], &h->v[l]) ? l + 1 : l;
        put_at(h, i, &h->v[m]);
        i = m;
    }
    sift_up(h, i, e);
}

/* e, which replaces the entry at i: up or down from there */
static void settle(ms__evheap_t *h, size_t i, ms__ev_t e)
{
    if (i > 0 && ev_less(&e, &h->v[(i - 1) / 2]))
        sift_up(h, i, e);
    else
        sift_down(h, i, e);
}

void ms__evheap_init(ms__evheap_t *h)
{
    h->v = NULL;
    h->n = h->cap = 0;
    h->pos = NULL;
    h->npos = 0;
    h->seq = 0;
}

void ms__evheap_fini(ms__evheap_t *h)
{
    free(h->v);
    free(h->pos);
    ms__evheap_init(h);
}

int ms__evheap_ids(ms__evheap_t *h, int32_t n)
{
    int32_t cap = h->npos ? h->npos : 1024, i;
    int32_t *p;

    if (n <= h->npos)
        return 0;
    while (cap < n)
        cap = cap > INT32_MAX / 2 ? INT32_MAX : cap * 2;
    if ((p = realloc(h->pos, (size_t)cap * sizeof(*p))) == NULL)
        return -1;
    for (i = h->npos; i < cap; i++)
        p[i] = -1;
    h->pos = p;
    h->npos = cap;
    return 0;
}

int ms__evheap_set(ms__evheap_t *h, int32_t id, double t)
{
    ms__ev_t e;
    int32_t at;

    if (id < 0 || id == INT32_MAX || (id >= h->npos && ms__evheap_ids(h, id + 1) != 0))
        return -1;
    e.t = t;
    e.seq = h->seq++;
    e.id = id;
    if ((at = h->pos[id]) >= 0) {
        settle(h, (size_t)at, e);
        return 0;
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 1024;
        ms__ev_t *v = realloc(h->v, cap * sizeof(*v));

        if (v == NULL)
            return -1;
        h->v = v;
        h->cap = cap;
    }
    sift_up(h, h->n++, e);
    return 0;
}

void ms__evheap_del(ms__evheap_t *h, int32_t id)
{
    int32_t at = id >= 0 && id < h->npos ? h->pos[id] : -1;
    ms__ev_t last;

    if (at < 0)
        return;
    h->pos[id] = -1;
    last = h->v[--h->n];
    if ((size_t)at < h->n)
        refill(h, (size_t)at, last);
}

void ms__evheap_pop(ms__evheap_t *h)
{
    ms__evheap_del(h, h->v[0].id);
}
