/* idmap.h - private: string id -> int32 value, for tables whose values
 * (slots, indices) each know their own id.
 *
 * Open addressing with linear probing, at most half full, each cell holding
 * the value and its id's hash (probes compare hashes before strings, and a
 * move never reads an id). It grows without a pause: doubling allocates the
 * new cells and then every put and del moves a few of the old ones, so no
 * single call pays for the whole table. The whole-table rehash it replaces
 * stalled migschedd for 1-5 ms at every doubling from 8,192 jobs, twice
 * (ms_sched's map and the daemon's), which at 5,000 submissions a second was
 * most of the daemon's slowest answers (docs/performance.md).
 *
 * Lookups never write, so one writer with readers that exclude only each
 * other and the writer's puts (the daemon's rmu) is safe.
 */
#ifndef MIGSCHED_IDMAP_H
#define MIGSCHED_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct ms__idcell {
    int32_t v;                     /* 0 empty, -1 deleted, else the value + 1 */
    uint32_t h;
} ms__idcell_t;

typedef struct ms__idmap {
    ms__idcell_t *cell, *old;      /* old: the cells being moved out, or NULL */
    uint32_t cap, used;            /* used: cells not empty (tombstones too) */
    uint32_t live;                 /* values in the map */
    uint32_t oldcap, moved;        /* old[0..moved) have been moved */
    /* the id of a value in the map (never NULL) */
    const char *(*key)(const void *ctx, int32_t v);
    const void *ctx;
    /* realloc-like (n == 0 frees); NULL: the C library's, whose calloc gives
     * a large table as untouched zero pages (empty cells are zero bytes) */
    void *(*alloc)(void *actx, void *p, size_t n);
    void *actx;
} ms__idmap_t;

/* An empty map; nothing is allocated before the first put. */
void ms__idmap_init(ms__idmap_t *m, const char *(*key)(const void *ctx, int32_t v), const void *ctx,
                    void *(*alloc)(void *actx, void *p, size_t n), void *actx);
void ms__idmap_fini(ms__idmap_t *m);
/* The value with this id, or -1. */
int32_t ms__idmap_find(const ms__idmap_t *m, const char *id);
/* Add v (its id not in the map yet); 0, or -1 out of memory (the map is
 * unchanged). */
int ms__idmap_put(ms__idmap_t *m, int32_t v);
/* Make room for one put: 0, after which the next put cannot fail for
 * memory, or -1 out of memory (the map is unchanged). For a caller that
 * must not fail after a step it cannot undo. */
int ms__idmap_reserve(ms__idmap_t *m);
/* Remove v if it is there. */
void ms__idmap_del(ms__idmap_t *m, int32_t v);

#endif
