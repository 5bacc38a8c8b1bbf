/*
 * sort.c — task indices ordered by cost, heaviest first, ties by the lower index: the order
 * greedy, hierarchical, refine and the decentralized assemblies walk. A million tasks must sort
 * in a few milliseconds (a comparison sort took 200 ms), so the order comes from a radix sort
 * over keys of up to 40 bits packed with the task index in one 64-bit item (one pass on the top
 * digit, then LSD passes inside each bucket), and runs whose keys tie are then put in exact order
 * (double cost, then index), so the result is exactly the comparison sort's. The key is the cost's
 * place in the range of the costs being sorted (the double's bits below those of the largest,
 * shifted to fit), finer than the cost rounded to float. Small inputs take the comparison sort
 * directly.
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
 * nothing, or a negative or NaN cost, which no snapshot holds), which sort last. 40 bits leave
 * 14,000 of a million lbtest costs in tied runs, 32 bits 88,000 (float keys 277,000). The scatter
 * over the whole array uses 8-bit digits: 256 buckets scatter to memory at a third of the time
 * per item of 2,048; inside a bucket, in the cache, 11-bit digits pay. */
#define KEY_BITS 40

#define TOP_BITS 8
#define NTOP     (1u << TOP_BITS) /* buckets of the top digit, the free tasks' besides */
#define SMALL    2048             /* a bucket this large sorts by 11-bit digits, a smaller by 8 */
#define MSD_MIN  10240            /* fewer items: LSD over the whole key, they fit the cache */

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

static inline uint32_t top_of(uint64_t k, unsigned lowbits, uint64_t free_key)
{
        return k == free_key ? NTOP : (uint32_t)(k >> lowbits);
}

static inline uint64_t key_of(double c, uint64_t hi, unsigned shift, uint64_t free_key)
{
        return c > 0 ? (hi - bits_of(c)) >> shift : free_key;
}

/* Items key << ib | task of one bucket (the same top digit) sorted by key, stably, by LSD passes
 * of db bits over the lowbits bits below the top digit, with tmp as large as the bucket; digits
 * that every key of the bucket shares are skipped. Returns where the sorted items are: v or tmp.
 * Inlined with db a constant: shifts and masks by constants. */
static ALWAYS_INLINE uint64_t *lsd(uint64_t *v, uint64_t *tmp, uint32_t n, unsigned ib,
                                   unsigned lowbits, unsigned db)
{
        unsigned npass = (lowbits + db - 1) / db;
        uint32_t dn = 1u << db, dm = dn - 1, cnt[4 << 11]; /* ≤ 3 passes of 11, 5 of 8 bits */
        memset(cnt, 0, (size_t)npass * dn * sizeof *cnt);
        for (uint32_t i = 0; i < n; i++) {
                uint64_t k = v[i] >> ib;
                for (unsigned p = 0; p < npass; p++)
                        cnt[dn * p + ((k >> (db * p)) & dm)]++;
        }
        uint64_t *a = v, *b = tmp;
        for (unsigned pass = 0; pass < npass; pass++) {
                uint32_t *c = cnt + dn * pass, sum = 0;
                unsigned sh = ib + db * pass;
                if (c[(a[0] >> sh) & dm] == n)
                        continue; /* every key has this digit: the pass would move nothing */
                for (uint32_t d = 0; d < dn; d++) {
                        uint32_t x = c[d];
                        c[d] = sum;
                        sum += x;
                }
                for (uint32_t i = 0; i < n; i++)
                        b[c[(a[i] >> sh) & dm]++] = a[i];
                uint64_t *x = a;
                a = b, b = x;
        }
        return a;
}

static uint64_t *sort_bucket(uint64_t *v, uint64_t *tmp, uint32_t n, unsigned ib, unsigned lowbits)
{
        if (n <= 32) { /* insertion by key: stable */
                for (uint32_t i = 1; i < n; i++) {
                        uint64_t x = v[i];
                        uint32_t j = i;
                        while (j > 0 && v[j - 1] >> ib > x >> ib) {
                                v[j] = v[j - 1];
                                j--;
                        }
                        v[j] = x;
                }
                return v;
        }
        if (n >= SMALL && lowbits <= 33) /* 2,048 counters a pass pay: 3 passes over 32 bits */
                return lsd(v, tmp, n, ib, lowbits, 11);
        return lsd(v, tmp, n, ib, lowbits, 8);
}

/*
 * The radix sort, most significant digit first once, then each bucket least significant digit
 * first: one pass scatters the items by their top digit into one array, and each bucket (4,000
 * items on average for a million) then sorts in the cache with a scratch array of the largest
 * bucket's size, where five passes over the whole array (and a second array of its size, whose
 * pages are new on every call) went to memory. The items are built from the costs where the
 * scatter writes them (the keys are computed twice, the costs read three times in order), and
 * every pass is stable, so a run of equal keys reaches the exact order in the order the least
 * significant first sort of the whole array left it. Below MSD_MIN items the whole array is one
 * bucket (8-bit digits over the whole key, as before: the top-digit pass would not pay).
 */
static int sort_desc(const double *cost, uint32_t *tasks, uint32_t n, double **sorted)
{
        if (n < RADIX_MIN) {
                if (n <= 64)
                        insertion(cost, tasks, n);
                else
                        qsort_r(tasks, n, sizeof *tasks, by_cost_desc, (void *)cost);
                if (sorted) {
                        if (!(*sorted = malloc((size_t)n * sizeof **sorted + 1)))
                                return -ENOMEM;
                        for (uint32_t i = 0; i < n; i++)
                                (*sorted)[i] = cost[tasks[i]];
                }
                return 0;
        }
        uint64_t lo = UINT64_MAX, hi = 0;
        uint32_t tmax = 0, nfree = 0;
        for (uint32_t i = 0; i < n; i++) {
                double c = cost[tasks[i]];
                uint64_t u = c > 0 ? bits_of(c) : 0; /* 0: a free task (no positive cost is 0) */
                tmax = tasks[i] > tmax ? tasks[i] : tmax;
                nfree += !u;
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
        /* The top digit: the TOP_BITS highest bits of the largest positive key; the free tasks
         * take one more bucket, the last. */
        uint64_t kmax = lo <= hi ? (hi - lo) >> shift : 0;
        unsigned lowbits = 0;
        while (lowbits < kb && kmax >> lowbits >> TOP_BITS)
                lowbits++;
        uint32_t cnt[NTOP + 2] = {0};
        if (n < MSD_MIN) { /* one bucket (and the free tasks'): LSD over the whole key */
                lowbits = kb;
                cnt[1] = n - nfree;
                cnt[NTOP + 1] = nfree;
        } else {
                for (uint32_t i = 0; i < n; i++)
                        cnt[top_of(key_of(cost[tasks[i]], hi, shift, free_key), lowbits, free_key) +
                            1]++;
        }
        uint32_t big = 0;
        for (uint32_t d = 0; d <= NTOP; d++) {
                big = cnt[d + 1] > big ? cnt[d + 1] : big;
                cnt[d + 1] += cnt[d];
        }
        uint64_t *it = malloc((size_t)n * sizeof *it);
        uint64_t *tmp = malloc((size_t)big * sizeof *tmp + 1);
        if (!it || !tmp) {
                free(it);
                free(tmp);
                return -ENOMEM;
        }
        uint32_t at[NTOP + 1];
        memcpy(at, cnt, sizeof at);
        for (uint32_t i = 0; i < n; i++) {
                uint64_t k = key_of(cost[tasks[i]], hi, shift, free_key);
                it[at[top_of(k, lowbits, free_key)]++] = k << ib | tasks[i];
        }
        uint64_t imask = (UINT64_C(1) << ib) - 1;
        for (uint32_t d = 0; d <= NTOP; d++) {
                uint32_t b0 = cnt[d], b1 = cnt[d + 1];
                if (b0 == b1)
                        continue;
                uint32_t nb = b1 - b0, *tb = tasks + b0;
                const uint64_t *v = sort_bucket(it + b0, tmp, nb, ib, lowbits);
                for (uint32_t i = 0; i < nb; i++)
                        tb[i] = (uint32_t)(v[i] & imask);
                /* Equal keys: the exact order inside each run. */
                for (uint32_t i = 0; i < nb;) {
                        uint32_t j = i + 1;
                        while (j < nb && v[j] >> ib == v[i] >> ib)
                                j++;
                        if (j - i > 1) {
                                if (j - i <= 32)
                                        insertion(cost, tb + i, j - i);
                                else
                                        qsort_r(tb + i, j - i, sizeof *tasks, by_cost_desc,
                                                (void *)cost);
                        }
                        i = j;
                }
                if (sorted) { /* the bucket's items are spent: their place takes the costs */
                        double *sc = (double *)(void *)(it + b0);
                        for (uint32_t i = 0; i < nb; i++)
                                sc[i] = cost[tb[i]];
                }
        }
        if (sorted)
                *sorted = (double *)(void *)it;
        else
                free(it);
        free(tmp);
        return 0;
}

int lbomp__sort_tasks_desc(const double *cost, uint32_t *tasks, uint32_t n)
{
        return sort_desc(cost, tasks, n, NULL);
}

int lbomp__sort_tasks_desc_costs(const double *cost, uint32_t *tasks, uint32_t n, double **sorted)
{
        *sorted = NULL;
        return sort_desc(cost, tasks, n, sorted);
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
