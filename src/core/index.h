/* index.h - private: GPUs bucketed by state, as two-level bitsets.
 *
 * For each state s: bits[s] has bit g set iff GPU g is in state s, and
 * summary[s] has bit w set iff word w of bits[s] is non-zero. Finding the
 * lowest GPU above some g touches at most two words plus the summary words
 * (ngpus / 4096 of them), whatever the cluster size.
 *
 * nfit[k] counts the GPUs whose state has room for profile k at some
 * start, so a search that would find no candidate says so in O(1): on a
 * full cluster every arrival's placement attempt used to walk all of the
 * profile's (state, start) candidates for nothing (docs/performance.md).
 */
#ifndef MIGSCHED_INDEX_H
#define MIGSCHED_INDEX_H

#include <stdint.h>

#include "migsched/geometry.h"

struct ms_index {
    int nstates, ngpus, nwords, nsum;
    uint64_t *bits;      /* [nstates * nwords] */
    uint64_t *summary;   /* [nstates * nsum] */
    int *count;          /* [nstates] */
    uint16_t *fits;      /* [nstates] bit k: profile k fits at some start */
    int nfit[MS_MAX_PROFILES];   /* GPUs in a state with bit k of fits */
    uint64_t used[(MS_MAX_STATES + 63) / 64];   /* bit s: count[s] > 0 */
    int nused;                                  /* bits set in used */
};

ms_status_t ms__index_create(const ms_geom_t *g, int ngpus, struct ms_index **out);
void ms__index_destroy(struct ms_index *ix);
void ms__index_add(struct ms_index *ix, ms_state_t s, int g);
void ms__index_del(struct ms_index *ix, ms_state_t s, int g);
int ms__index_next_slow(const struct ms_index *ix, ms_state_t s, int after);
/* The lowest GPU in state s above `after`, or -1. Inline: an empty state
 * (most of them, most of the time) answers without a call; the ranked
 * searches ask this for every candidate they walk past. */
static inline int ms__index_next(const struct ms_index *ix, ms_state_t s, int after)
{
    return ix->count[s] == 0 ? -1 : ms__index_next_slow(ix, s, after);
}
int ms__index_has(const struct ms_index *ix, ms_state_t s, int g);

#endif
