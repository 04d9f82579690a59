/* rank.c - ranked (state, start) candidates and the two ways to search them. */
#include "migsched/rank.h"

#include "core/index.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int cand_cmp(const void *a, const void *b)
{
    const ms_rank_cand_t *x = a, *y = b;

    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->state != y->state)
        return x->state < y->state ? -1 : 1;
    return x->start - y->start;
}

ms_status_t ms_rank_build(ms_rank_t *r, const ms_geom_t *g, int k,
                          ms_rank_key_fn fn, void *ctx)
{
    int ns = ms_geom_nstates(g), w = ms_geom_width(g), s, st, n = 0;
    size_t nkeys = (size_t)ns * (size_t)w;

    if (r->key_of == NULL || r->width != w) {
        free(r->key_of);
        free(r->cands);
        r->cands = NULL;
        r->key_of = malloc(nkeys * sizeof(*r->key_of));
        /* at most one candidate per (state, start) */
        r->cands = malloc(nkeys * sizeof(*r->cands));
        if (r->key_of == NULL || r->cands == NULL) {
            ms_rank_fini(r);
            return MS_ENOMEM;
        }
    }
    r->prof = k;
    r->width = w;
    for (s = 0; s < ns; s++) {
        uint16_t fit = ms_state_fit(g, (ms_state_t)s, k);
        for (st = 0; st < w; st++) {
            uint64_t key = UINT64_MAX;
            if ((fit >> st) & 1u)
                key = fn(ctx, g, (ms_state_t)s, k, st);
            r->key_of[(size_t)s * (size_t)w + (size_t)st] = key;
            if (key != UINT64_MAX) {
                r->cands[n].key = key;
                r->cands[n].state = (ms_state_t)s;
                r->cands[n].start = (int8_t)st;
                n++;
            }
        }
    }
    r->n = n;
    qsort(r->cands, (size_t)n, sizeof(*r->cands), cand_cmp);
    return MS_OK;
}

/* a before b in rank order */
static inline bool cand_before(const ms_rank_cand_t *a, const ms_rank_cand_t *b)
{
    return a->key < b->key ||
           (a->key == b->key && (a->state < b->state || (a->state == b->state && a->start < b->start)));
}

ms_status_t ms_rank_rekey(ms_rank_t *r, const ms_geom_t *g, ms_rank_key_fn fn, void *ctx)
{
    int i;

    if (r->cands == NULL || r->width != ms_geom_width(g))
        return ms_rank_build(r, g, r->prof, fn, ctx);
    for (i = 0; i < r->n; i++) {
        ms_rank_cand_t *cd = &r->cands[i];
        uint64_t key = fn(ctx, g, cd->state, r->prof, cd->start);

        if (key == UINT64_MAX)
            return ms_rank_build(r, g, r->prof, fn, ctx);
        cd->key = key;
        r->key_of[(size_t)cd->state * (size_t)r->width + (size_t)cd->start] = key;
    }
    ms_rank_resort(r);
    return MS_OK;
}

void ms_rank_resort(ms_rank_t *r)
{
    int i, k;
    long moves = 0;

    /* insertion sort from the last order: the keys move a little when the
     * weights do; qsort when they moved a lot (the order is total, so both
     * give the same array) */
    for (i = 1; i < r->n && moves <= 8L * r->n; i++) {
        ms_rank_cand_t x = r->cands[i];

        for (k = i; k > 0 && cand_before(&x, &r->cands[k - 1]); k--)
            r->cands[k] = r->cands[k - 1];
        r->cands[k] = x;
        moves += i - k;
    }
    if (i < r->n)
        qsort(r->cands, (size_t)r->n, sizeof(*r->cands), cand_cmp);
}

void ms_rank_fini(ms_rank_t *r)
{
    if (r == NULL)
        return;
    free(r->cands);
    free(r->key_of);
    r->cands = NULL;
    r->key_of = NULL;
    r->n = 0;
    r->width = 0;
}

/* Scan: the minimum of (key, gpu, start) over every GPU. */
static ms_status_t find_scan(const ms_rank_t *r, const ms_cluster_t *c, int *gpu, int *start)
{
    uint64_t best = UINT64_MAX;
    int bg = -1, bs = -1, g, st;

    for (g = 0; g < c->ngpus; g++) {
        ms_state_t s = c->gpus[g].state;
        uint16_t fit = ms_state_fit(c->geom, s, r->prof);
        for (st = 0; fit != 0 && st < r->width; st++) {
            uint64_t key;
            if (!((fit >> st) & 1u))
                continue;
            key = r->key_of[(size_t)s * (size_t)r->width + (size_t)st];
            if (key < best) {   /* strict: lower gpu/start already win ties */
                best = key;
                bg = g;
                bs = st;
            }
        }
    }
    if (bg < 0)
        return MS_ENOFIT;
    *gpu = bg;
    *start = bs;
    return MS_OK;
}

/* Few states in use: each one's best (key, start) and its lowest GPU, the
 * minimum of (key, gpu, start) over them, which is find_bucket's answer
 * (the first key any GPU is in, its lowest GPU, that GPU's lowest start of
 * the key). A loaded cluster has a handful of states in use where the walk
 * of the candidates passes hundreds of empty ones. */
static ms_status_t find_used(const ms_rank_t *r, const ms_cluster_t *c, int *gpu, int *start)
{
    const struct ms_index *ix = c->index;
    uint64_t best = UINT64_MAX;
    int bg = -1, bs = -1, w;

    for (w = 0; w < (ix->nstates + 63) / 64; w++)
        for (uint64_t m = ix->used[w]; m != 0; m &= m - 1) {
            ms_state_t s = (ms_state_t)(w * 64 + __builtin_ctzll(m));
            uint64_t kb;
            int sb = ms_rank_state_best(r, c->geom, s, &kb), g;

            if (sb < 0 || kb > best)
                continue;
            g = ms__index_next(ix, s, -1);
            if (kb < best || g < bg) {
                best = kb;
                bg = g;
                bs = sb;
            }
        }
    if (bg < 0)
        return MS_ENOFIT;
    *gpu = bg;
    *start = bs;
    return MS_OK;
}

/* Buckets: walk candidates by key; among those sharing the first key that
 * has any GPU, take the lowest GPU, then its lowest start. */
static ms_status_t find_bucket(const ms_rank_t *r, const ms_cluster_t *c, int *gpu, int *start)
{
    int i, bg = -1, bs = -1;
    uint64_t key = 0;

    if (r->prof >= 0 && r->prof < MS_MAX_PROFILES && c->index->nfit[r->prof] == 0)
        return MS_ENOFIT;   /* no GPU has room for the profile anywhere */
    if ((size_t)c->index->nused * (size_t)r->width < (size_t)r->n)
        return find_used(r, c, gpu, start);
    for (i = 0; i < r->n; i++) {
        const ms_rank_cand_t *cd = &r->cands[i];
        int g;

        if (bg >= 0 && cd->key != key)
            break;
        g = ms__index_next(c->index, cd->state, -1);   /* states of the geometry: in range */
        if (g < 0)
            continue;
        if (bg < 0 || g < bg || (g == bg && cd->start < bs)) {
            bg = g;
            bs = cd->start;
            key = cd->key;
        }
    }
    if (bg < 0)
        return MS_ENOFIT;
    *gpu = bg;
    *start = bs;
    return MS_OK;
}

ms_status_t ms_rank_find(const ms_rank_t *r, const ms_cluster_t *c, int *gpu, int *start)
{
    if (c->index == NULL)
        return find_scan(r, c, gpu, start);
    return find_bucket(r, c, gpu, start);
}
