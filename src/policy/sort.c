/*
 * sort.c — task indices ordered by cost, heaviest first, ties by the lower index: the order
 * greedy, hierarchical, refine and the decentralized assemblies walk. A million tasks must sort
 * in a few milliseconds (a comparison sort took 200 ms), so the order comes from an LSD radix
 * sort over keys of up to 40 bits packed with the task index in one 64-bit item, and runs whose
 * keys tie are then put in exact order (double cost, then index), so the result is exactly the
 * comparison sort's. The key is the cost's place in the range of the costs being sorted (the
 * double's bits below those of the largest, shifted to fit), finer than the cost rounded to float.
 * Small inputs take the comparison sort directly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../policy.h"

#define RADIX_MIN 512 /* below this, a comparison sort is as fast */

static bool before(const double *cost, uint32_t a, uint32_t b)
{
        return cost[a] > cost[b] || (cost[a] == cost[b] && a < b);
}

static int by_cost_desc(const void *a, const void *b, void *arg)
{
        const double *cost = arg;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return before(cost, x, y) ? -1 : before(cost, y, x) ? 1 : 0;
}

static void insertion(const double *cost, uint32_t *v, uint32_t n)
{
        for (uint32_t i = 1; i < n; i++) {
                uint32_t x = v[i], j = i;
                while (j > 0 && before(cost, x, v[j - 1])) {
                        v[j] = v[j - 1];
                        j--;
                }
                v[j] = x;
        }
}

/* A positive double's bits, which order positive doubles as unsigned integers. */
static uint64_t bits_of(double c)
{
        uint64_t u;
        memcpy(&u, &c, sizeof u);
        return u;
}

/* Keys: a positive cost c has key (hi - bits(c)) >> shift, hi the bits of the largest cost and
 * shift the least that keeps every key below the all-ones key of the free tasks (those that cost
 * nothing, or a negative or NaN cost, which no snapshot holds), which sort last. KEY_BITS of key
 * in five passes of 8 bits: 256 buckets scatter at a third of the time per item of 2,048, and 40
 * bits leave 14,000 of a million lbtest costs in tied runs, 32 bits 88,000 (float keys 277,000). */
#define KEY_BITS 40

int lbomp__sort_tasks_desc(const double *cost, uint32_t *tasks, uint32_t n)
{
        if (n < RADIX_MIN) {
                if (n <= 64)
                        insertion(cost, tasks, n);
                else
                        qsort_r(tasks, n, sizeof *tasks, by_cost_desc, (void *)cost);
                return 0;
        }
        /* One array of items (key << ib | task, ib the bits of the largest task index): a pass
         * reads and scatters one stream. */
        uint64_t *it = malloc((size_t)n * sizeof *it), *it2 = malloc((size_t)n * sizeof *it2);
        uint32_t *cnt = calloc(8 * 256, sizeof *cnt);
        if (!it || !it2 || !cnt) {
                free(it);
                free(it2);
                free(cnt);
                return -ENOMEM;
        }
        uint64_t lo = UINT64_MAX, hi = 0;
        uint32_t tmax = 0;
        for (uint32_t i = 0; i < n; i++) {
                double c = cost[tasks[i]];
                uint64_t u = c > 0 ? bits_of(c) : 0; /* 0: a free task (no positive cost is 0) */
                it[i] = u;
                tmax = tasks[i] > tmax ? tasks[i] : tmax;
                if (u) {
                        lo = u < lo ? u : lo;
                        hi = u > hi ? u : hi;
                }
        }
        unsigned ib = 1;
        while (ib < 32 && tmax >> ib)
                ib++;
        unsigned kb = 64 - ib < KEY_BITS ? 64 - ib : KEY_BITS; /* key bits */
        uint64_t free_key = (UINT64_C(1) << kb) - 1;
        unsigned shift = 0;
        while (lo <= hi && ((hi - lo) >> shift) >= free_key)
                shift++;
        unsigned npass = (kb + 7) / 8;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t k = it[i] ? (hi - it[i]) >> shift : free_key;
                it[i] = k << ib | tasks[i];
                for (unsigned p = 0; p < npass; p++)
                        cnt[256 * p + ((k >> (8 * p)) & 255)]++;
        }
        uint64_t *a = it, *b = it2;
        for (unsigned pass = 0; pass < npass; pass++) {
                uint32_t *c = cnt + 256 * pass, sum = 0;
                unsigned sh = ib + 8 * pass;
                if (c[(a[0] >> sh) & 255] == n)
                        continue; /* every key has this digit: the pass would move nothing */
                for (uint32_t d = 0; d < 256; d++) {
                        uint32_t x = c[d];
                        c[d] = sum;
                        sum += x;
                }
                for (uint32_t i = 0; i < n; i++)
                        b[c[(a[i] >> sh) & 255]++] = a[i];
                uint64_t *x = a;
                a = b, b = x;
        }
        uint64_t imask = (UINT64_C(1) << ib) - 1;
        for (uint32_t i = 0; i < n; i++)
                tasks[i] = (uint32_t)(a[i] & imask);
        /* Equal keys: the exact order inside each run. */
        for (uint32_t i = 0; i < n;) {
                uint32_t j = i + 1;
                while (j < n && a[j] >> ib == a[i] >> ib)
                        j++;
                if (j - i > 1) {
                        if (j - i <= 32)
                                insertion(cost, tasks + i, j - i);
                        else
                                qsort_r(tasks + i, j - i, sizeof *tasks, by_cost_desc,
                                        (void *)cost);
                }
                i = j;
        }
        free(it);
        free(it2);
        free(cnt);
        return 0;
}

uint32_t *lbomp__tasks_by_cost_desc(const struct lbomp__snap *s)
{
        uint32_t *order = malloc((size_t)s->ntasks * sizeof *order + 1);
        if (!order)
                return NULL;
        for (uint32_t t = 0; t < s->ntasks; t++)
                order[t] = t;
        if (lbomp__sort_tasks_desc(s->cost, order, s->ntasks) < 0) {
                free(order);
                return NULL;
        }
        return order;
}
