/* index.c - the state index (see index.h). */
#include "core/index.h"

#include <stdlib.h>

ms_status_t ms__index_create(const ms_geom_t *g, int ngpus, struct ms_index **out)
{
    struct ms_index *ix = calloc(1, sizeof(*ix));
    int nstates = ms_geom_nstates(g), np = ms_geom_nprofiles(g), s, k;

    *out = NULL;
    if (ix == NULL)
        return MS_ENOMEM;
    ix->nstates = nstates;
    ix->ngpus = ngpus;
    ix->nwords = (ngpus + 63) / 64;
    ix->nsum = (ix->nwords + 63) / 64;
    ix->bits = calloc((size_t)nstates * (size_t)ix->nwords, sizeof(uint64_t));
    ix->summary = calloc((size_t)nstates * (size_t)ix->nsum, sizeof(uint64_t));
    ix->count = calloc((size_t)nstates, sizeof(int));
    ix->fits = calloc((size_t)nstates, sizeof(uint16_t));
    if (ix->bits == NULL || ix->summary == NULL || ix->count == NULL || ix->fits == NULL) {
        ms__index_destroy(ix);
        return MS_ENOMEM;
    }
    for (s = 0; s < nstates; s++)
        for (k = 0; k < np && k < MS_MAX_PROFILES; k++)
            if (ms_state_fit(g, (ms_state_t)s, k) != 0)
                ix->fits[s] |= (uint16_t)(1u << k);
    *out = ix;
    return MS_OK;
}

void ms__index_destroy(struct ms_index *ix)
{
    if (ix == NULL)
        return;
    free(ix->bits);
    free(ix->summary);
    free(ix->count);
    free(ix->fits);
    free(ix);
}

void ms__index_add(struct ms_index *ix, ms_state_t s, int g)
{
    uint64_t *b = ix->bits + (size_t)s * (size_t)ix->nwords;
    uint64_t *sm = ix->summary + (size_t)s * (size_t)ix->nsum;
    int w = g >> 6;
    unsigned f;

    b[w] |= (uint64_t)1 << (g & 63);
    sm[w >> 6] |= (uint64_t)1 << (w & 63);
    if (ix->count[s]++ == 0) {
        ix->used[s >> 6] |= (uint64_t)1 << (s & 63);
        ix->nused++;
    }
    for (f = ix->fits[s]; f != 0; f &= f - 1)
        ix->nfit[__builtin_ctz(f)]++;
}

void ms__index_del(struct ms_index *ix, ms_state_t s, int g)
{
    uint64_t *b = ix->bits + (size_t)s * (size_t)ix->nwords;
    uint64_t *sm = ix->summary + (size_t)s * (size_t)ix->nsum;
    int w = g >> 6;
    unsigned f;

    b[w] &= ~((uint64_t)1 << (g & 63));
    if (b[w] == 0)
        sm[w >> 6] &= ~((uint64_t)1 << (w & 63));
    if (--ix->count[s] == 0) {
        ix->used[s >> 6] &= ~((uint64_t)1 << (s & 63));
        ix->nused--;
    }
    for (f = ix->fits[s]; f != 0; f &= f - 1)
        ix->nfit[__builtin_ctz(f)]--;
}

int ms__index_has(const struct ms_index *ix, ms_state_t s, int g)
{
    const uint64_t *b = ix->bits + (size_t)s * (size_t)ix->nwords;

    return (int)((b[g >> 6] >> (g & 63)) & 1u);
}

int ms__index_next_slow(const struct ms_index *ix, ms_state_t s, int after)
{
    const uint64_t *b = ix->bits + (size_t)s * (size_t)ix->nwords;
    const uint64_t *sm = ix->summary + (size_t)s * (size_t)ix->nsum;
    int g = after + 1, w, sw;
    uint64_t v;

    if (ix->count[s] == 0 || g >= ix->ngpus)
        return -1;
    w = g >> 6;
    v = b[w] & (~(uint64_t)0 << (g & 63));
    if (v != 0)
        return (w << 6) + __builtin_ctzll(v);
    /* next non-empty word after w, through the summary */
    w++;
    if (w >= ix->nwords)
        return -1;
    sw = w >> 6;
    v = sm[sw] & (~(uint64_t)0 << (w & 63));
    while (v == 0) {
        if (++sw >= ix->nsum)
            return -1;
        v = sm[sw];
    }
    w = (sw << 6) + __builtin_ctzll(v);
    return (w << 6) + __builtin_ctzll(b[w]);
}
