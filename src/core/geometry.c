/* geometry.c - the per-model state machine: reachable states and the
 * place/remove/fit tables over them.
 *
 * States are found by a breadth-first walk from the empty GPU, applying every
 * legal placement. A state is identified by (mask, busy compute, counts of
 * the profiles whose max_count binds before geometry does); everything else
 * about a GPU follows from it.
 */
#include "migsched/geometry.h"
#include "core/geom_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_TRACKED 12

struct ms_geom {
    const ms_model_t *model;
    int width, compute, np, nstates;
    uint16_t full;
    const ms_profile_t *prof[MS_MAX_PROFILES];  /* active, ascending size */
    double pmem[MS_MAX_PROFILES];               /* their memory, GB (fit.c) */
    int8_t tracked[MS_MAX_PROFILES];            /* slot in the count key, or -1 */
    int ntracked;
    int cap;                          /* allocated states */
    uint16_t *smask;                  /* [cap] */
    uint8_t *scomp;                   /* [cap] */
    uint8_t (*scount)[MS_MAX_PROFILES];
    uint64_t *skey;
    uint16_t (*fit)[MS_MAX_PROFILES];
    ms_state_t (*place)[MS_MAX_PROFILES][MS_MAX_WIDTH];
    ms_state_t (*rem)[MS_MAX_PROFILES][MS_MAX_WIDTH];
    int8_t (*ideal)[MS_MAX_PROFILES]; /* [nstates]: Ideal_p (frag.h), see geom_int.h */
    uint16_t *fits;                   /* [nstates]: bit k = fit[s][k] != 0 */
    int *hash;                        /* open addressing over skey, -1 = empty */
    int hcap;                         /* power of two, > 2 * cap */
};

static void geom_free(ms_geom_t *g)
{
    if (g == NULL)
        return;
    free(g->smask);
    free(g->scomp);
    free(g->scount);
    free(g->skey);
    free(g->fit);
    free(g->fits);
    free(g->place);
    free(g->rem);
    free(g->ideal);
    free(g->hash);
    free(g);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* Grow every per-state array to hold n states; rebuild the hash. */
static int geom_reserve(ms_geom_t *g, int n)
{
    int cap = g->cap ? g->cap : 64, i;
    void *p;

    if (n <= g->cap)
        return 1;
    while (cap < n)
        cap *= 2;
#define GROW(field) \
    if ((p = realloc(g->field, (size_t)cap * sizeof(*g->field))) == NULL) return 0; \
    g->field = p;
    GROW(smask) GROW(scomp) GROW(scount) GROW(skey) GROW(fit) GROW(place) GROW(rem)
#undef GROW
    memset(g->fit + g->cap, 0, (size_t)(cap - g->cap) * sizeof(*g->fit));
    g->cap = cap;
    free(g->hash);
    g->hcap = 1;
    while (g->hcap < 4 * cap)
        g->hcap *= 2;
    if ((g->hash = malloc((size_t)g->hcap * sizeof(*g->hash))) == NULL)
        return 0;
    for (i = 0; i < g->hcap; i++)
        g->hash[i] = -1;
    for (i = 0; i < g->nstates; i++) {
        size_t h = mix(g->skey[i]) & (size_t)(g->hcap - 1);
        while (g->hash[h] >= 0)
            h = (h + 1) & (size_t)(g->hcap - 1);
        g->hash[h] = i;
    }
    return 1;
}

static uint16_t prof_mask(const ms_profile_t *p, int s)
{
    return (uint16_t)(((1u << p->msize) - 1u) << s);
}

static uint64_t make_key(const ms_geom_t *g, uint16_t mask, int comp,
                         const uint8_t *counts)
{
    uint64_t key = (uint64_t)mask | ((uint64_t)comp << 16);
    int k;

    for (k = 0; k < g->np; k++)
        if (g->tracked[k] >= 0)
            key |= (uint64_t)(counts[k] & 7u) << (24 + 3 * g->tracked[k]);
    return key;
}

static int find_key(const ms_geom_t *g, uint64_t key)
{
    size_t h = mix(key) & (size_t)(g->hcap - 1);

    while (g->hash[h] >= 0) {
        if (g->skey[g->hash[h]] == key)
            return g->hash[h];
        h = (h + 1) & (size_t)(g->hcap - 1);
    }
    return -1;
}

/* Greedy count of disjoint placements of p on an empty axis. */
static int geometric_max(const ms_profile_t *p)
{
    uint16_t used = 0;
    int s, n = 0;

    for (s = 0; s < MS_MAX_WIDTH; s++) {
        if (((p->start_mask >> s) & 1u) && !(used & prof_mask(p, s))) {
            used |= prof_mask(p, s);
            n++;
        }
    }
    return n;
}

static int cmp_size(const ms_profile_t *a, const ms_profile_t *b)
{
    if (a->cslices != b->cslices)
        return a->cslices - b->cslices;
    return a->msize - b->msize;
}

/* Can profile k start at st in a state with this mask/compute/counts? */
static int can_place(const ms_geom_t *g, uint16_t mask, int comp,
                     const uint8_t *counts, int k, int st)
{
    const ms_profile_t *p = g->prof[k];

    if (!((p->start_mask >> st) & 1u))
        return 0;
    if (mask & prof_mask(p, st))
        return 0;
    if (comp + p->cslices > g->compute)
        return 0;
    if (g->tracked[k] >= 0 && counts[k] >= p->max_count)
        return 0;
    return 1;
}

static int add_state(ms_geom_t *g, uint16_t mask, int comp, const uint8_t *counts)
{
    uint64_t key = make_key(g, mask, comp, counts);
    int i = find_key(g, key), k;

    if (i >= 0)
        return i;
    if (g->nstates >= MS_MAX_STATES || !geom_reserve(g, g->nstates + 1))
        return -1;
    i = g->nstates++;
    {
        size_t h = mix(key) & (size_t)(g->hcap - 1);
        while (g->hash[h] >= 0)
            h = (h + 1) & (size_t)(g->hcap - 1);
        g->hash[h] = i;
    }
    g->skey[i] = key;
    g->smask[i] = mask;
    g->scomp[i] = (uint8_t)comp;
    for (k = 0; k < g->np; k++)
        g->scount[i][k] = g->tracked[k] >= 0 ? counts[k] : 0;
    return i;
}

ms_status_t ms_geom_parse_profile_set(const ms_model_t *m, const char *list,
                                      uint32_t *out, ms_diag_t *diag)
{
    uint32_t set = 0;
    const char *p = list;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        char buf[32];
        int idx;

        if (n == 0 || n >= sizeof(buf)) {
            ms_diag_set(diag, NULL, 0, "profiles", "empty or overlong profile name in '%s'", list);
            return MS_EINVAL;
        }
        memcpy(buf, p, n);
        buf[n] = '\0';
        idx = ms_model_profile_find(m, buf);
        if (idx < 0) {
            ms_diag_set(diag, NULL, 0, "profiles", "model %s has no profile '%s'", m->name, buf);
            return MS_EINVAL;
        }
        set |= 1u << idx;
        p = end != NULL ? end + 1 : NULL;
    }
    *out = set;
    return MS_OK;
}

ms_status_t ms_geom_create(const ms_model_t *m, uint32_t profile_set, ms_geom_t **out)
{
    ms_geom_t *g;
    int i, k, head, s, st;

    *out = NULL;
    if (m == NULL || m->nprofiles > MS_MAX_PROFILES)
        return MS_EINVAL;
    g = calloc(1, sizeof(*g));
    if (g == NULL)
        return MS_ENOMEM;
    g->model = m;
    g->width = ms_model_width(m);
    g->compute = m->compute_slices;
    g->full = (uint16_t)((1u << g->width) - 1u);
    if (g->width <= 0 || g->width > MS_MAX_WIDTH || !geom_reserve(g, 64)) {
        geom_free(g);
        return MS_ERANGE;
    }
    for (i = 0; i < m->nprofiles; i++) {
        const ms_profile_t *p = &m->profiles[i];
        int chosen = profile_set == 0 ? (p->flags & MS_PF_BASE) != 0
                                      : (int)((profile_set >> i) & 1u);
        if (!chosen)
            continue;
        if (p->flags & MS_PF_ALL_ME) {
            geom_free(g);
            return MS_ENOTSUP;   /* +me.all exclusivity is not modelled */
        }
        /* insertion sort by size keeps the table order for equal sizes */
        k = g->np++;
        while (k > 0 && cmp_size(g->prof[k - 1], p) > 0) {
            g->prof[k] = g->prof[k - 1];
            k--;
        }
        g->prof[k] = p;
    }
    if (g->np == 0) {
        geom_free(g);
        return MS_EINVAL;
    }
    for (k = 0; k < g->np; k++) {
        g->pmem[k] = ms__profile_mem_gb(m, g->prof[k]);
        g->tracked[k] = -1;
        if (g->prof[k]->max_count < geometric_max(g->prof[k])) {
            if (g->ntracked >= MAX_TRACKED) {
                geom_free(g);
                return MS_ERANGE;
            }
            g->tracked[k] = (int8_t)g->ntracked++;
        }
    }

    /* Breadth-first walk from the empty GPU. */
    {
        uint8_t zero[MS_MAX_PROFILES] = {0};
        add_state(g, 0, 0, zero);
    }
    for (head = 0; head < g->nstates; head++) {
        for (k = 0; k < g->np; k++) {
            for (st = 0; st < g->width; st++) {
                uint8_t counts[MS_MAX_PROFILES];
                int ns;

                g->place[head][k][st] = MS_STATE_NONE;
                if (!can_place(g, g->smask[head], g->scomp[head], g->scount[head], k, st))
                    continue;
                memcpy(counts, g->scount[head], sizeof(counts));
                counts[k]++;
                ns = add_state(g, (uint16_t)(g->smask[head] | prof_mask(g->prof[k], st)),
                               g->scomp[head] + g->prof[k]->cslices, counts);
                if (ns < 0) {
                    ms_status_t why = g->nstates >= MS_MAX_STATES ? MS_ERANGE : MS_ENOMEM;
                    geom_free(g);
                    return why;
                }
                g->place[head][k][st] = (ms_state_t)ns;
                g->fit[head][k] |= (uint16_t)(1u << st);
            }
        }
    }
    /* Removal: the inverse edges, looked up by key. */
    for (s = 0; s < g->nstates; s++) {
        for (k = 0; k < g->np; k++) {
            const ms_profile_t *p = g->prof[k];
            for (st = 0; st < MS_MAX_WIDTH; st++) {
                uint8_t counts[MS_MAX_PROFILES];
                uint16_t pm = prof_mask(p, st);
                int r;

                g->rem[s][k][st] = MS_STATE_NONE;
                if (st >= g->width || !((p->start_mask >> st) & 1u) ||
                    (g->smask[s] & pm) != pm || g->scomp[s] < p->cslices)
                    continue;
                if (g->tracked[k] >= 0 && g->scount[s][k] == 0)
                    continue;
                memcpy(counts, g->scount[s], sizeof(counts));
                if (g->tracked[k] >= 0)
                    counts[k]--;
                r = find_key(g, make_key(g, (uint16_t)(g->smask[s] & ~pm),
                                         g->scomp[s] - p->cslices, counts));
                if (r >= 0)
                    g->rem[s][k][st] = (ms_state_t)r;
            }
        }
    }
    /* Ideal_p per state (frag.h): a lookup instead of two divisions; and
     * the profiles that fit each state, as one mask. */
    if ((g->ideal = calloc((size_t)g->nstates, sizeof(*g->ideal))) == NULL ||
        (g->fits = calloc((size_t)g->nstates, sizeof(*g->fits))) == NULL) {
        geom_free(g);
        return MS_ENOMEM;
    }
    for (s = 0; s < g->nstates; s++) {
        int free_c = g->compute - g->scomp[s];
        int free_m = g->width - __builtin_popcount(g->smask[s]);
        for (k = 0; k < g->np; k++) {
            const ms_profile_t *p = g->prof[k];
            int a = free_c / p->cslices, b = free_m / p->msize;
            int c = p->max_count - (g->tracked[k] >= 0 ? g->scount[s][k] : 0);
            int v = a < b ? a : b;
            g->ideal[s][k] = (int8_t)(v < c ? v : c);
            if (g->fit[s][k] != 0)
                g->fits[s] = (uint16_t)(g->fits[s] | 1u << k);
        }
    }
    *out = g;
    return MS_OK;
}

int ms__geom_ideal(const ms_geom_t *g, ms_state_t s, int k) { return g->ideal[s][k]; }

void ms_geom_destroy(ms_geom_t *g)
{
    geom_free(g);
}

const ms_model_t *ms_geom_model(const ms_geom_t *g) { return g->model; }
int ms_geom_width(const ms_geom_t *g) { return g->width; }
int ms_geom_compute(const ms_geom_t *g) { return g->compute; }
int ms_geom_nprofiles(const ms_geom_t *g) { return g->np; }
int ms_geom_nstates(const ms_geom_t *g) { return g->nstates; }
const ms_profile_t *ms_geom_profile(const ms_geom_t *g, int k) { return g->prof[k]; }
double ms_geom_profile_mem_gb(const ms_geom_t *g, int k) { return g->pmem[k]; }

/* Could a and b be equal ignoring ASCII case? (Their first bytes.) */
static inline bool same_first(const char *a, const char *b)
{
    return (a[0] | 0x20) == (b[0] | 0x20);
}

int ms_geom_profile_find(const ms_geom_t *g, const char *name)
{
    int k;

    if (name == NULL)
        return -1;
    /* the first byte before strcasecmp: every job's request is resolved
     * by name, and "1g" met every product name first (10 strcasecmp a
     * job, 5% of a deep-queue event; issue 25) */
    for (k = 0; k < g->np; k++)
        if (same_first(g->prof[k]->name, name) && strcasecmp(g->prof[k]->name, name) == 0)
            return k;
    for (k = 0; k < g->np; k++)
        if (same_first(g->prof[k]->generic, name) && strcasecmp(g->prof[k]->generic, name) == 0)
            return k;
    return -1;
}

uint16_t ms_geom_profile_mask(const ms_geom_t *g, int k, int s)
{
    return prof_mask(g->prof[k], s);
}

uint16_t ms_state_mask(const ms_geom_t *g, ms_state_t s) { return g->smask[s]; }
int ms_state_compute(const ms_geom_t *g, ms_state_t s) { return g->scomp[s]; }
int ms_state_count(const ms_geom_t *g, ms_state_t s, int k)
{
    return g->tracked[k] >= 0 ? g->scount[s][k] : -1;
}

uint16_t ms_state_fit(const ms_geom_t *g, ms_state_t s, int k) { return g->fit[s][k]; }
uint16_t ms_state_fits(const ms_geom_t *g, ms_state_t s) { return g->fits[s]; }

ms_state_t ms_state_place(const ms_geom_t *g, ms_state_t s, int k, int st)
{
    if (s >= g->nstates || k < 0 || k >= g->np || st < 0 || st >= g->width)
        return MS_STATE_NONE;
    return g->place[s][k][st];
}

ms_state_t ms_state_remove(const ms_geom_t *g, ms_state_t s, int k, int st)
{
    if (s >= g->nstates || k < 0 || k >= g->np || st < 0 || st >= g->width)
        return MS_STATE_NONE;
    return g->rem[s][k][st];
}

ms_state_t ms_state_find(const ms_geom_t *g, uint16_t mask, int compute,
                         const uint8_t *counts)
{
    uint8_t zero[MS_MAX_PROFILES] = {0};
    int i = find_key(g, make_key(g, mask, compute, counts != NULL ? counts : zero));

    return i < 0 ? MS_STATE_NONE : (ms_state_t)i;
}

/* --- enumeration of placement sets ------------------------------------ */

typedef struct walk {
    const ms_geom_t *g;
    ms_gi_t all[MS_MAX_PROFILES * MS_MAX_WIDTH];  /* every (profile, start) */
    int nall;
    ms_gi_t cur[MS_MAX_WIDTH];
    int ncur;
    ms_geom_counts_t counts;
    uint8_t *seen_mask;                  /* 1 bit per mask */
    uint64_t msets[512];                 /* distinct maximal multisets */
    int nmsets;
    int (*fn)(void *ctx, const ms_gi_t *gis, int n);
    void *ctx;
    int stop;
} walk_t;

static int walk_fits(const walk_t *w, uint16_t mask, int comp, const uint8_t *cnt, int i)
{
    const ms_profile_t *p = w->g->prof[w->all[i].prof];
    int st = w->all[i].start;

    if (mask & prof_mask(p, st))
        return 0;
    if (comp + p->cslices > w->g->compute)
        return 0;
    return cnt[w->all[i].prof] < p->max_count;
}

static void walk_rec(walk_t *w, int from, uint16_t mask, int comp, uint8_t *cnt)
{
    int i, maximal = 1;

    if (w->stop)
        return;
    w->counts.placement_sets++;
    if (w->seen_mask != NULL && !(w->seen_mask[mask >> 3] & (1u << (mask & 7)))) {
        w->seen_mask[mask >> 3] |= (uint8_t)(1u << (mask & 7));
        w->counts.masks++;
    }
    for (i = 0; i < w->nall; i++) {
        if (!walk_fits(w, mask, comp, cnt, i))
            continue;
        maximal = 0;
        if (i < from)
            continue;
        {
            const ms_profile_t *p = w->g->prof[w->all[i].prof];
            w->cur[w->ncur++] = w->all[i];
            cnt[w->all[i].prof]++;
            walk_rec(w, i + 1, (uint16_t)(mask | prof_mask(p, w->all[i].start)),
                     comp + p->cslices, cnt);
            cnt[w->all[i].prof]--;
            w->ncur--;
        }
    }
    if (maximal) {
        uint64_t ms = 0;
        int j;

        w->counts.maximal++;
        for (j = 0; j < w->ncur; j++)
            ms += (uint64_t)1 << (4 * w->cur[j].prof);
        for (j = 0; j < w->nmsets && w->msets[j] != ms; j++)
            ;
        if (j == w->nmsets && w->nmsets < (int)(sizeof(w->msets) / sizeof(w->msets[0])))
            w->msets[w->nmsets++] = ms;
        if (w->fn != NULL && w->fn(w->ctx, w->cur, w->ncur) != 0)
            w->stop = 1;
    }
}

static void walk_init(walk_t *w, const ms_geom_t *g)
{
    int s, k;

    memset(w, 0, sizeof(*w));
    w->g = g;
    /* order by start, then profile, so sets come out sorted by start */
    for (s = 0; s < g->width; s++)
        for (k = 0; k < g->np; k++)
            if ((g->prof[k]->start_mask >> s) & 1u) {
                w->all[w->nall].prof = (int8_t)k;
                w->all[w->nall].start = (int8_t)s;
                w->nall++;
            }
}

void ms_geom_count(const ms_geom_t *g, ms_geom_counts_t *out)
{
    walk_t *w = malloc(sizeof(*w));
    uint8_t cnt[MS_MAX_PROFILES] = {0};
    uint8_t seen[(1u << MS_MAX_WIDTH) / 8];

    memset(out, 0, sizeof(*out));
    if (w == NULL)
        return;
    walk_init(w, g);
    memset(seen, 0, sizeof(seen));
    w->seen_mask = seen;
    walk_rec(w, 0, 0, 0, cnt);
    *out = w->counts;
    out->maximal_multisets = w->nmsets;
    free(w);
}

void ms_geom_each_maximal(const ms_geom_t *g,
                          int (*fn)(void *ctx, const ms_gi_t *gis, int n), void *ctx)
{
    walk_t *w = malloc(sizeof(*w));
    uint8_t cnt[MS_MAX_PROFILES] = {0};

    if (w == NULL)
        return;
    walk_init(w, g);
    w->fn = fn;
    w->ctx = ctx;
    walk_rec(w, 0, 0, 0, cnt);
    free(w);
}

bool ms_geom_layout_valid(const ms_geom_t *g, const ms_gi_t *gis, int n)
{
    uint16_t mask = 0;
    int comp = 0, i;
    uint8_t cnt[MS_MAX_PROFILES] = {0};

    for (i = 0; i < n; i++) {
        const ms_profile_t *p;
        if (gis[i].prof < 0 || gis[i].prof >= g->np || gis[i].start < 0 ||
            gis[i].start >= g->width)
            return false;
        p = g->prof[gis[i].prof];
        if (!((p->start_mask >> gis[i].start) & 1u))
            return false;
        if (mask & prof_mask(p, gis[i].start))
            return false;
        mask |= prof_mask(p, gis[i].start);
        comp += p->cslices;
        if (++cnt[gis[i].prof] > p->max_count)
            return false;
    }
    return comp <= g->compute;
}
