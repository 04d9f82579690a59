/* rng.h - the one deterministic PRNG of libmigsched: xoshiro256** seeded
 * through splitmix64 (four splitmix64 outputs fill the state).
 *
 * The stream is part of the output contract: gen-trace, fgd-experiment and
 * import-alibaba --fill give the same bytes for the same seed on every
 * platform, so the algorithm and the seeding never change. It is our own
 * stream: Go's math/rand sequences are not reproduced.
 */
#ifndef MIGSCHED_RNG_H
#define MIGSCHED_RNG_H

#include <stdint.h>

typedef struct ms_rng { uint64_t s[4]; } ms_rng_t;

void ms_rng_seed(ms_rng_t *g, uint64_t seed);
uint64_t ms_rng_next(ms_rng_t *g);
/* Uniform in [0, n), unbiased (rejection of the tail); 0 when n <= 1. */
uint64_t ms_rng_below(ms_rng_t *g, uint64_t n);
/* Uniform in [0, 1): the top 53 bits of one ms_rng_next. */
double ms_rng_unit(ms_rng_t *g);

#endif
