/* index.h - private: GPUs bucketed by state, as two-level bitsets.
 *
 * For each state s: bits[s] has bit g set iff GPU g is in state s, and
 * summary[s] has bit w set iff word w of bits[s] is non-zero. Finding the
 * lowest GPU above some g touches at most two words plus the summary words
 * (ngpus / 4096 of them), whatever the cluster size.
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
};

ms_status_t ms__index_create(int nstates, int ngpus, struct ms_index **out);
void ms__index_destroy(struct ms_index *ix);
void ms__index_add(struct ms_index *ix, ms_state_t s, int g);
void ms__index_del(struct ms_index *ix, ms_state_t s, int g);
int ms__index_next(const struct ms_index *ix, ms_state_t s, int after);
int ms__index_has(const struct ms_index *ix, ms_state_t s, int g);

#endif
