/*
 * rng.c — deterministic random numbers for the policies and the workloads of the tools:
 * splitmix64 seeding a xoshiro256**. The same seed gives the same stream on every machine.
 */
#include "policy.h"

static uint64_t splitmix64(uint64_t *x)
{
        uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

void lbomp__rng_seed(struct lbomp__rng *r, uint64_t seed)
{
        for (int i = 0; i < 4; i++)
                r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
        return (x << k) | (x >> (64 - k));
}

uint64_t lbomp__rng_next(struct lbomp__rng *r)
{
        uint64_t *s = r->s;
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

uint32_t lbomp__rng_below(struct lbomp__rng *r, uint32_t n)
{
        /* Lemire's multiply-shift; the bias for n << 2^32 is far below what matters here. */
        return (uint32_t)(((lbomp__rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

double lbomp__rng_unit(struct lbomp__rng *r)
{
        return (double)(lbomp__rng_next(r) >> 11) * 0x1.0p-53;
}
