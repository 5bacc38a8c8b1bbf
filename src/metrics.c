/*
 * metrics.c — what every policy, the framework and the simulator compute the same way: the loads
 * of a mapping, the imbalance, the locality cost of the links and what a plan moves. Keeping them
 * in one place keeps live runs, tests and the simulator consistent. Calls nothing else.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "policy.h"

void lbomp__loads(const struct lbomp__snap *s, const uint32_t *map, double *load)
{
        for (uint32_t w = 0; w < s->nworkers; w++)
                load[w] = s->bg ? s->bg[w] : 0.0;
        /* A worker's tasks often come in runs (block-mapped ids): the run's sum stays in a
         * register, the same additions in the same order as one task at a time, without the store
         * and reload per task that made every addition wait for the one before. */
        for (uint32_t t = 0, T = s->ntasks; t < T;) {
                uint32_t w = map[t];
                double l = load[w];
                if (!s->speed || s->speed[w] == 1.0) { /* c / 1.0 is c: no division */
                        do
                                l += s->cost[t++];
                        while (t < T && map[t] == w);
                } else {
                        double sp = s->speed[w];
                        do
                                l += s->cost[t++] / sp;
                        while (t < T && map[t] == w);
                }
                load[w] = l;
        }
}

void lbomp__snap_speeds(struct lbomp__snap *s)
{
        double sum = 0, mx = 0;
        for (uint32_t w = 0; s->speed && w < s->nworkers; w++) {
                sum += s->speed[w];
                mx = s->speed[w] > mx ? s->speed[w] : mx;
        }
        s->speed_sum = sum;
        s->speed_max = mx;
}

double lbomp__snap_lambda(const struct lbomp__snap *s, const double *load, double *max, double *avg)
{
        if (!s->speed)
                return lbomp__imbalance(load, s->nworkers, max, avg);
        /* Σ speed·load / Σ speed: with every speed 1.0 each product is the load and the divisor
         * is P exactly, so this is lbomp__imbalance's average bit for bit. */
        double mx = 0, sum = 0, ssum = 0;
        for (uint32_t i = 0; i < s->nworkers; i++) {
                sum += s->speed[i] * load[i];
                ssum += s->speed[i];
                if (load[i] > mx)
                        mx = load[i];
        }
        double a = s->nworkers ? sum / ssum : 0;
        if (max)
                *max = mx;
        if (avg)
                *avg = a;
        return a > 0 ? mx / a : 1.0;
}

double lbomp__persisted(const double *e, uint32_t n)
{
        /* One-sided 99 % points of Student's t with n - 1 degrees of freedom, n = 2..8. The test
         * runs at every LB step (and auto's at every step), hundreds of times a second on µs
         * steps: at 95 % one window in twenty of a balanced load still planned (in face far the
         * balanced 1 MiB memtask moved 24-34 tasks a run at 95 %; bench/README, "Disturbed
         * steps"). */
        static const double t99[9] = {0, 0, 31.82, 6.96, 4.54, 3.75, 3.36, 3.14, 3.00};
        double least = INFINITY, sum = 0, sq = 0;
        for (uint32_t k = 0; k < n; k++) {
                least = e[k] < least ? e[k] : least;
                sum += e[k];
                sq += e[k] * e[k];
        }
        /* And no more than the noise of the steps allows. Equal loads measured with noise put one
         * worker above the mean at each of three steps once in four windows; a plan made on that
         * moves a task that was where it should be (2026-11-27, bench/README "Noise that moved
         * tasks"). */
        if (n >= 2 && n <= 8) {
                double m = sum / n, var = (sq - n * m * m) / (n - 1);
                double bound = m - t99[n] * sqrt(var > 0 ? var / n : 0);
                least = bound < least ? bound : least;
        }
        return least;
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

double lbomp__bound(const struct lbomp__snap *s, double avg)
{
        double fastest = lbomp__speed_max(s);
        bool div = s->speed && fastest != 1.0; /* c / 1.0 is c */
        /* Four maxima side by side, then theirs: the same value as one running maximum (a NaN
         * cost is skipped either way, a NaN average stays), at a quarter of its chain. */
        double m[4] = {avg, avg, avg, avg};
        uint32_t t = 0, T = s->ntasks;
        for (; t + 4 <= T; t += 4)
                for (int j = 0; j < 4; j++) {
                        double c = div ? s->cost[t + j] / fastest : s->cost[t + j];
                        m[j] = c > m[j] ? c : m[j];
                }
        for (; t < T; t++) {
                double c = div ? s->cost[t] / fastest : s->cost[t];
                m[0] = c > m[0] ? c : m[0];
        }
        double lstar = m[0];
        for (int j = 1; j < 4; j++)
                lstar = m[j] > lstar ? m[j] : lstar;
        for (uint32_t w = 0; s->bg && w < s->nworkers; w++)
                lstar = s->bg[w] > lstar ? s->bg[w] : lstar;
        return lstar;
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
                        m->node_load += lbomp__time_on(s, dest[t], s->cost[t]);
                }
        }
}

/* a before b in the placement heap: the better speed ÷ (held + placed + 1), ties the lower id */
static bool place_before(const double *key, uint32_t a, uint32_t b)
{
        return key[a] > key[b] || (key[a] == key[b] && a < b);
}

static void place_down(uint32_t *h, uint32_t n, const double *key, uint32_t i)
{
        for (;;) {
                uint32_t l = 2 * i + 1, m = i;
                if (l < n && place_before(key, h[l], h[m]))
                        m = l;
                if (l + 1 < n && place_before(key, h[l + 1], h[m]))
                        m = l + 1;
                if (m == i)
                        return;
                uint32_t x = h[i];
                h[i] = h[m];
                h[m] = x;
                i = m;
        }
}

int lbomp__place_counts(const double *speed, const uint32_t *held, uint32_t P, uint32_t n,
                        uint32_t *count)
{
        bool equal = true, none = true;
        for (uint32_t w = 0; w < P; w++) {
                equal &= !speed || speed[w] == speed[0];
                none &= !held || held[w] == 0;
                count[w] = 0;
        }
        if (equal && none) { /* schedule(static)'s blocks, as before speeds */
                for (uint32_t k = 0; k < n; k++)
                        count[(uint64_t)k * P / n]++;
                return 0;
        }
        uint32_t *h = malloc((size_t)P * sizeof *h + 1);
        double *key = malloc((size_t)P * sizeof *key + 1);
        if (!h || !key) {
                free(h);
                free(key);
                return -ENOMEM;
        }
        for (uint32_t w = 0; w < P; w++) {
                h[w] = w;
                key[w] = (speed ? speed[w] : 1.0) / ((held ? (double)held[w] : 0) + 1);
        }
        for (uint32_t i = P / 2 + 1; i-- > 0;)
                if (i < P)
                        place_down(h, P, key, i);
        for (uint32_t k = 0; k < n && P; k++) {
                uint32_t w = h[0];
                count[w]++;
                key[w] = (speed ? speed[w] : 1.0) /
                         ((held ? (double)held[w] : 0) + (double)count[w] + 1);
                place_down(h, P, key, 0);
        }
        free(h);
        free(key);
        return 0;
}
