/* idmap.c - string id -> int32 value, grown incrementally (idmap.h). */
#include "core/idmap.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAP 1024u
/* Old cells moved by each put and del. A table is at most half full when
 * it grows, so its successor takes at least oldcap / 4 more puts before it
 * grows in turn; moving oldcap cells needs oldcap / STEP calls. */
#define STEP 16u

static void *mem(const ms__idmap_t *m, void *p, size_t n)
{
    if (m->alloc != NULL)
        return m->alloc(m->actx, p, n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, n);
}

static ms__idcell_t *cells_new(const ms__idmap_t *m, uint32_t cap)
{
    ms__idcell_t *c;

    if (m->alloc == NULL)
        return calloc(cap, sizeof(*c));
    if ((c = mem(m, NULL, (size_t)cap * sizeof(*c))) != NULL)
        memset(c, 0, (size_t)cap * sizeof(*c));
    return c;
}

static uint32_t id_hash(const char *id)
{
    uint32_t h = 2166136261u;   /* FNV-1a */

    for (; *id != '\0'; id++)
        h = (h ^ (uint8_t)*id) * 16777619u;
    return h;
}

void ms__idmap_init(ms__idmap_t *m, const char *(*key)(const void *ctx, int32_t v), const void *ctx,
                    void *(*alloc)(void *actx, void *p, size_t n), void *actx)
{
    memset(m, 0, sizeof(*m));
    m->key = key;
    m->ctx = ctx;
    m->alloc = alloc;
    m->actx = actx;
}

void ms__idmap_fini(ms__idmap_t *m)
{
    if (m->cell != NULL)
        (void)mem(m, m->cell, 0);
    if (m->old != NULL)
        (void)mem(m, m->old, 0);
    m->cell = m->old = NULL;
    m->cap = m->used = m->live = m->oldcap = m->moved = 0;
}

/* The cell holding id in c, or -1. The table always has empty cells (at
 * most half used), so probing ends. */
static int64_t probe(const ms__idmap_t *m, const ms__idcell_t *c, uint32_t cap, uint32_t h, const char *id)
{
    uint32_t i, n;

    for (i = h & (cap - 1), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
        if (c[i].v == 0)
            return -1;
        if (c[i].v > 0 && c[i].h == h && strcmp(m->key(m->ctx, c[i].v - 1), id) == 0)
            return i;
    }
    return -1;
}

/* The cell holding value v in c, or -1. */
static int64_t probe_value(const ms__idcell_t *c, uint32_t cap, uint32_t h, int32_t v)
{
    uint32_t i, n;

    for (i = h & (cap - 1), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
        if (c[i].v == 0)
            return -1;
        if (c[i].v == v + 1)
            return i;
    }
    return -1;
}

int32_t ms__idmap_find(const ms__idmap_t *m, const char *id)
{
    uint32_t h;
    int64_t i;

    if (m->cap == 0 || id == NULL)
        return -1;
    h = id_hash(id);
    if ((i = probe(m, m->cell, m->cap, h, id)) >= 0)
        return m->cell[i].v - 1;
    if (m->old != NULL && (i = probe(m, m->old, m->oldcap, h, id)) >= 0)
        return m->old[i].v - 1;
    return -1;
}

/* Into the current cells (a new id: the first free cell will do). */
static void place(ms__idmap_t *m, int32_t v, uint32_t h)
{
    uint32_t i;

    for (i = h & (m->cap - 1); m->cell[i].v > 0; i = (i + 1) & (m->cap - 1))
        ;
    if (m->cell[i].v == 0)
        m->used++;
    m->cell[i].v = v + 1;
    m->cell[i].h = h;
}

/* Move up to n of the old cells. A moved cell becomes a tombstone, so the
 * probes of the old cells not yet moved still run through it. */
static void move_old(ms__idmap_t *m, uint32_t n)
{
    while (m->old != NULL && n-- > 0) {
        ms__idcell_t *c = &m->old[m->moved];

        if (c->v > 0) {
            place(m, c->v - 1, c->h);
            c->v = -1;
        }
        if (++m->moved == m->oldcap) {
            (void)mem(m, m->old, 0);
            m->old = NULL;
            m->oldcap = m->moved = 0;
        }
    }
}

/* New cells: twice as many, or as many when tombstones filled the table
 * (a table that values come and go through must not grow with the number
 * of ids it ever held). The old ones are moved a few at a time. */
static int grow(ms__idmap_t *m)
{
    uint32_t cap = m->cap == 0 ? FIRST_CAP : m->live * 4 < m->cap ? m->cap : m->cap * 2;
    ms__idcell_t *c;

    if (m->cap > UINT32_MAX / 2)
        return -1;
    move_old(m, UINT32_MAX);   /* done long before, by the arithmetic above */
    if ((c = cells_new(m, cap)) == NULL)
        return -1;
    m->old = m->cell;
    m->oldcap = m->old != NULL ? m->cap : 0;
    m->moved = 0;
    m->cell = c;
    m->cap = cap;
    m->used = 0;
    return 0;
}

/* put moves up to STEP old cells before it checks its room: counted, as a
 * bound (moves end long before the table is half full again). */
int ms__idmap_reserve(ms__idmap_t *m)
{
    uint32_t pending = m->old != NULL ? m->oldcap - m->moved : 0;

    if (pending > STEP)
        pending = STEP;
    if ((uint64_t)(m->used + pending + 1) * 2 > m->cap)
        return grow(m);
    return 0;
}

int ms__idmap_put(ms__idmap_t *m, int32_t v)
{
    if (v < 0 || v == INT32_MAX)
        return -1;
    move_old(m, STEP);
    if ((m->used + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    place(m, v, id_hash(m->key(m->ctx, v)));
    m->live++;
    return 0;
}

void ms__idmap_del(ms__idmap_t *m, int32_t v)
{
    uint32_t h;
    int64_t i;

    if (m->cap == 0 || v < 0)
        return;
    move_old(m, STEP);
    h = id_hash(m->key(m->ctx, v));
    if ((i = probe_value(m->cell, m->cap, h, v)) >= 0)
        m->cell[i].v = -1;
    else if (m->old != NULL && (i = probe_value(m->old, m->oldcap, h, v)) >= 0)
        m->old[i].v = -1;
    else
        return;
    m->live--;
}
