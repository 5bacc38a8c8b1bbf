/*
 * greedy.c — centralized greedy (Charm++ GreedyLB): heaviest task first onto the least loaded
 * worker. Workers sit in a min-heap keyed by load, starting from their background load. Among
 * equally loaded workers a task keeps its worker, then prefers its own node, then the nearest.
 * O(T log T + T log P).
 */
#include <errno.h>
#include <stdlib.h>

#include "../policy.h"

static int by_cost_desc(const void *a, const void *b, void *arg)
{
        const double *cost = arg;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        if (cost[x] != cost[y])
                return cost[x] > cost[y] ? -1 : 1;
        return x < y ? -1 : x > y;
}

/* Sorts task indices by cost, heaviest first, ties by index (deterministic). */
uint32_t *lbomp__tasks_by_cost_desc(const struct lbomp__snap *s)
{
        uint32_t *order = malloc((size_t)s->ntasks * sizeof *order + 1);
        if (!order)
                return NULL;
        for (uint32_t t = 0; t < s->ntasks; t++)
                order[t] = t;
        qsort_r(order, s->ntasks, sizeof *order, by_cost_desc, (void *)s->cost);
        return order;
}

void lbomp__sort_by_cost_desc(const struct lbomp__snap *s, uint32_t *tasks, uint32_t n)
{
        qsort_r(tasks, n, sizeof *tasks, by_cost_desc, (void *)s->cost);
}

/* Among the workers tied with the minimum (visiting at most `budget` heap entries), the one task t
 * prefers: its current worker, then the nearest node, then the lowest id. */
static uint32_t pick(const struct lbomp__wheap *h, const struct lbomp__snap *s, uint32_t t)
{
        uint32_t best = h->w[0];
        double thr = h->load[best] * (1 + 1e-9);
        int32_t tn = lbomp__task_node(s, t);
        double bestd = s->dist[tn * (int32_t)s->nnodes + s->wnode[h->id[best]]];
        uint32_t stack[256], sp = 0, budget = 256;
        stack[sp++] = 0;
        while (sp && budget--) {
                uint32_t i = stack[--sp];
                uint32_t w = h->w[i];
                if (h->load[w] > thr)
                        continue;
                if (h->id[w] == s->worker[t])
                        return w;
                double d = s->dist[tn * (int32_t)s->nnodes + s->wnode[h->id[w]]];
                if (d < bestd || (d == bestd && h->id[w] < h->id[best]))
                        best = w, bestd = d;
                for (uint32_t c = 2 * i + 1; c <= 2 * i + 2 && c < h->n; c++)
                        if (sp < 256)
                                stack[sp++] = c;
        }
        return best;
}

int lbomp__greedy_assign(const struct lbomp__snap *s, const uint32_t *tasks, uint32_t ntasks,
                         const uint32_t *workers, uint32_t nworkers, const double *load0,
                         uint32_t *dest)
{
        uint32_t P = nworkers;
        struct lbomp__wheap h;
        int rc = lbomp__wheap_init(&h, P, workers);
        if (rc < 0)
                goto out;
        for (uint32_t i = 0; i < P; i++)
                h.load[i] = load0[i];
        lbomp__wheap_build(&h);
        for (uint32_t k = 0; k < ntasks && P; k++) {
                uint32_t t = tasks[k];
                uint32_t i = pick(&h, s, t);
                dest[t] = workers[i];
                /* Only a load increase: the worker can only move down the heap. */
                h.load[i] += s->cost[t];
                lbomp__wheap_down(&h, h.pos[i]);
        }
out:
        lbomp__wheap_free(&h);
        return rc;
}

static int greedy_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        (void)st;
        uint32_t P = s->nworkers;
        uint32_t *order = lbomp__tasks_by_cost_desc(s);
        uint32_t *workers = malloc(P * sizeof *workers + 1);
        double *load0 = malloc(P * sizeof *load0 + 1);
        int rc = -ENOMEM;
        if (order && workers && load0) {
                for (uint32_t w = 0; w < P; w++) {
                        workers[w] = w;
                        load0[w] = s->bg ? s->bg[w] : 0;
                }
                rc = lbomp__greedy_assign(s, order, s->ntasks, workers, P, load0, dest);
        }
        free(order);
        free(workers);
        free(load0);
        return rc;
}

const struct lbomp__policy lbomp__policy_greedy = {
        .name = "greedy",
        .help = "centralized: heaviest task to the least loaded worker (Charm++ GreedyLB)",
        .kind = LBOMP__CENTRAL,
        .plan = greedy_plan,
};
