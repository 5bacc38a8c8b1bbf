/*
 * plan.c — what every policy, the framework and the simulator compute the same way: loads of a
 * mapping, imbalance, the plan check, the locality cost, and the deterministic random numbers.
 * Keeping them in one place keeps live runs, tests and the simulator consistent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

void lbomp__loads(const struct lbomp__snap *s, const uint32_t *map, double *load)
{
        for (uint32_t w = 0; w < s->nworkers; w++)
                load[w] = s->bg ? s->bg[w] : 0.0;
        for (uint32_t t = 0; t < s->ntasks; t++)
                load[map[t]] += s->cost[t];
}

double lbomp__imbalance(const double *load, uint32_t n, double *max, double *avg)
{
        double mx = 0, sum = 0;
        for (uint32_t i = 0; i < n; i++) {
                sum += load[i];
                if (load[i] > mx)
                        mx = load[i];
        }
        double a = n ? sum / n : 0;
        if (max)
                *max = mx;
        if (avg)
                *avg = a;
        return a > 0 ? mx / a : 1.0;
}

int lbomp__plan_check(const struct lbomp__snap *s, const uint32_t *dest, uint32_t *bad_task)
{
        /* A plan is one destination per task by construction; what can go wrong is a destination
         * that is no worker. */
        for (uint32_t t = 0; t < s->ntasks; t++)
                if (dest[t] >= s->nworkers) {
                        if (bad_task)
                                *bad_task = t;
                        return -EINVAL;
                }
        return 0;
}

int32_t lbomp__task_node(const struct lbomp__snap *s, uint32_t t)
{
        if (s->home && s->home[t] >= 0 && (uint32_t)s->home[t] < s->nnodes)
                return s->home[t];
        return s->wnode[s->worker[t]];
}

double lbomp__locality_cost(const struct lbomp__snap *s, const uint32_t *map)
{
        double cost = 0;
        if (!s->link_off)
                return 0;
        for (uint32_t a = 0; a < s->ntasks; a++) {
                int32_t na = s->wnode[map[a]];
                for (uint32_t k = s->link_off[a]; k < s->link_off[a + 1]; k++) {
                        uint32_t b = s->link_dst[k];
                        if (b <= a) /* each undirected link once */
                                continue;
                        int32_t nb = s->wnode[map[b]];
                        cost += s->link_bytes[k] * s->dist[na * (int32_t)s->nnodes + nb];
                }
        }
        return cost;
}

void lbomp__moves(const struct lbomp__snap *s, const uint32_t *dest, struct lbomp__moves *m)
{
        *m = (struct lbomp__moves){0};
        int32_t n = (int32_t)s->nnodes;
        for (uint32_t t = 0; t < s->ntasks; t++) {
                if (dest[t] == s->worker[t])
                        continue;
                int32_t from = lbomp__task_node(s, t), to = s->wnode[dest[t]];
                m->tasks++;
                m->bytes += s->bytes[t];
                m->cost += (double)s->bytes[t] * s->dist[from * n + to];
                if (s->wnode[s->worker[t]] != to) {
                        m->node_tasks++;
                        m->node_bytes += s->bytes[t];
                        m->node_load += s->cost[t];
                }
        }
}

int lbomp__wheap_init(struct lbomp__wheap *h, uint32_t n, const uint32_t *id)
{
        *h = (struct lbomp__wheap){.n = n, .id = id};
        h->w = malloc((size_t)n * sizeof *h->w + 1);
        h->pos = malloc((size_t)n * sizeof *h->pos + 1);
        h->load = malloc((size_t)n * sizeof *h->load + 1);
        return h->w && h->pos && h->load ? 0 : -ENOMEM;
}

void lbomp__wheap_free(struct lbomp__wheap *h)
{
        free(h->w);
        free(h->pos);
        free(h->load);
}

static bool wheap_before(const struct lbomp__wheap *h, uint32_t a, uint32_t b)
{
        if (h->load[a] != h->load[b])
                return h->load[a] < h->load[b];
        return h->id ? h->id[a] < h->id[b] : a < b;
}

static void wheap_put(struct lbomp__wheap *h, uint32_t i, uint32_t w)
{
        h->w[i] = w;
        h->pos[w] = i;
}

void lbomp__wheap_up(struct lbomp__wheap *h, uint32_t i)
{
        uint32_t w = h->w[i];
        while (i && wheap_before(h, w, h->w[(i - 1) / 2])) {
                wheap_put(h, i, h->w[(i - 1) / 2]);
                i = (i - 1) / 2;
        }
        wheap_put(h, i, w);
}

void lbomp__wheap_down(struct lbomp__wheap *h, uint32_t i)
{
        uint32_t w = h->w[i];
        for (;;) {
                uint32_t l = 2 * i + 1, m = l;
                if (l >= h->n)
                        break;
                if (l + 1 < h->n && wheap_before(h, h->w[l + 1], h->w[l]))
                        m = l + 1;
                if (!wheap_before(h, h->w[m], w))
                        break;
                wheap_put(h, i, h->w[m]);
                i = m;
        }
        wheap_put(h, i, w);
}

void lbomp__wheap_build(struct lbomp__wheap *h)
{
        for (uint32_t i = 0; i < h->n; i++)
                wheap_put(h, i, i);
        for (uint32_t i = h->n / 2; i-- > 0;)
                lbomp__wheap_down(h, i);
}

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
