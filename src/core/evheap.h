/* evheap.h - private: timed events of numbered things (a simulator's job
 * ends, the daemon's sim job ends), a binary min-heap on (time, seq) with
 * each id's place in it, so that an id is in it at most once.
 *
 * Setting an id that is already in moves it (a decrease- or increase-key),
 * and deleting one takes it out at once: the heap never holds stale
 * entries. (The simulator's first heap invalidated lazily, with version
 * counters; its stale entries grew it to many times the running set and
 * popping dominated the profile. The daemon's kept cancelled jobs' ends
 * until they came due.) seq is renewed on every set, so equal times go to
 * the id set first.
 */
#ifndef MIGSCHED_EVHEAP_H
#define MIGSCHED_EVHEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct ms__ev {
    double t;
    uint64_t seq;
    int32_t id;
} ms__ev_t;

typedef struct ms__evheap {
    ms__ev_t *v;                   /* [n], v[0] the earliest */
    size_t n, cap;
    int32_t *pos;                  /* [npos] each id's index in v, -1 if not in */
    int32_t npos;
    uint64_t seq;
} ms__evheap_t;

/* An empty heap; nothing is allocated before it is needed. */
void ms__evheap_init(ms__evheap_t *h);
void ms__evheap_fini(ms__evheap_t *h);
/* Room for the ids [0, n) (set grows it too, as needed): 0, or -1 out of
 * memory (unchanged). */
int ms__evheap_ids(ms__evheap_t *h, int32_t n);
/* Put id in at time t, or move it there: 0, or -1 out of memory (the heap
 * is unchanged). */
int ms__evheap_set(ms__evheap_t *h, int32_t id, double t);
/* Take id out, if it is in. */
void ms__evheap_del(ms__evheap_t *h, int32_t id);
/* The earliest event, or NULL when the heap is empty. */
static inline const ms__ev_t *ms__evheap_top(const ms__evheap_t *h)
{
    return h->n > 0 ? &h->v[0] : NULL;
}
/* Take the earliest event out (the heap must not be empty). */
void ms__evheap_pop(ms__evheap_t *h);

#endif
