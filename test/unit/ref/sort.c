/* The reference for test_identity: src/policy/sort.c as it was at 2570a0b, before the speed-ups of
 * issue 12 point 5, its symbols renamed ref__* (ref.h). Not to be edited: the new code must give
 * the plans this code gives. */
/*
 * sort.c — task indices ordered by cost, heaviest first, ties by the lower index: the order
 * greedy, hierarchical, refine and the decentralized assemblies walk. A million tasks must sort
 * in a few milliseconds (a comparison sort took 200 ms), so the order comes from an LSD radix
 * sort over the costs rounded to float (three passes of 11 bits), and runs whose float keys tie
 * are then put in exact order (double cost, then index), so the result is exactly the comparison
 * sort's. Small inputs take the comparison sort directly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "ref.h"

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

/* Descending order of a non-negative cost as an ascending 32-bit key: the float's bits order
 * non-negative values, and complementing them reverses the order. Negative or NaN costs (which a
 * snapshot does not hold) sort as 0. */
static uint32_t key_of(double c)
{
        float f = c > 0 ? (float)c : 0.0f;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return ~u;
}

int ref__sort_tasks_desc(const double *cost, uint32_t *tasks, uint32_t n)
{
        if (n < RADIX_MIN) {
                if (n <= 64)
                        insertion(cost, tasks, n);
                else
                        qsort_r(tasks, n, sizeof *tasks, by_cost_desc, (void *)cost);
                return 0;
        }
        uint32_t *key = malloc((size_t)n * sizeof *key), *k2 = malloc((size_t)n * sizeof *k2);
        uint32_t *t2 = malloc((size_t)n * sizeof *t2);
        uint32_t *cnt = calloc(3 * 2048, sizeof *cnt);
        if (!key || !k2 || !t2 || !cnt) {
                free(key);
                free(k2);
                free(t2);
                free(cnt);
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < n; i++) {
                uint32_t k = key_of(cost[tasks[i]]);
                key[i] = k;
                cnt[k & 2047]++;
                cnt[2048 + ((k >> 11) & 2047)]++;
                cnt[4096 + (k >> 22)]++;
        }
        uint32_t *ka = key, *kb = k2, *ta = tasks, *tb = t2;
        for (int pass = 0; pass < 3; pass++) {
                uint32_t *c = cnt + 2048 * pass, shift = 11u * (uint32_t)pass, sum = 0;
                if (c[(ka[0] >> shift) & 2047] == n)
                        continue; /* every key has this digit: the pass would move nothing */
                for (uint32_t d = 0; d < 2048; d++) {
                        uint32_t x = c[d];
                        c[d] = sum;
                        sum += x;
                }
                for (uint32_t i = 0; i < n; i++) {
                        uint32_t at = c[(ka[i] >> shift) & 2047]++;
                        kb[at] = ka[i];
                        tb[at] = ta[i];
                }
                uint32_t *x = ka;
                ka = kb, kb = x;
                x = ta, ta = tb, tb = x;
        }
        if (ta != tasks)
                memcpy(tasks, ta, (size_t)n * sizeof *tasks);
        /* Equal float keys: the exact order inside each run. */
        for (uint32_t i = 0; i < n;) {
                uint32_t j = i + 1;
                while (j < n && ka[j] == ka[i])
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
        free(key);
        free(k2);
        free(t2);
        free(cnt);
        return 0;
}

uint32_t *ref__tasks_by_cost_desc(const struct lbomp__snap *s)
{
        uint32_t *order = malloc((size_t)s->ntasks * sizeof *order + 1);
        if (!order)
                return NULL;
        for (uint32_t t = 0; t < s->ntasks; t++)
                order[t] = t;
        if (ref__sort_tasks_desc(s->cost, order, s->ntasks) < 0) {
                free(order);
                return NULL;
        }
        return order;
}
