/* rng.c - xoshiro256** seeded through splitmix64 (see rng.h). */
#include "migsched/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));

    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void ms_rng_seed(ms_rng_t *g, uint64_t seed)
{
    uint64_t x = seed;

    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t ms_rng_next(ms_rng_t *g)
{
    uint64_t *s = g->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t ms_rng_below(ms_rng_t *g, uint64_t n)
{
    uint64_t limit, x;

    if (n <= 1)
        return 0;
    limit = UINT64_MAX - UINT64_MAX % n;       /* reject the biased tail */
    do
        x = ms_rng_next(g);
    while (x >= limit);
    return x % n;
}

double ms_rng_unit(ms_rng_t *g)
{
    return (double)(ms_rng_next(g) >> 11) * 0x1.0p-53;
}
