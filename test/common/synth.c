/*
 * synth.c — builds synthetic snapshots for the policy tests (see synth.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

void synth_reindex(struct synth *y)
{
        lbomp__snap_rebuild(y->sb);
}

int synth_make(struct synth *y, uint32_t T, uint32_t P, uint32_t nodes, enum synth_load load,
               uint32_t k, uint64_t seed)
{
        memset(y, 0, sizeof *y);
        uint32_t nlinks = 2 * k < T ? T * k : 0;
        y->sb = lbomp__snapbuf_create();
        y->dist = calloc((size_t)nodes * nodes, sizeof *y->dist);
        y->dest = calloc(T + 1, sizeof *y->dest);
        if (!y->sb || !y->dist || !y->dest ||
            lbomp__snap_begin(y->sb, P, nodes, y->dist, T, T, nlinks) < 0)
                return -ENOMEM;
        for (uint32_t w = 0; w < P; w++)
                lbomp__snap_worker(y->sb, w, 0.0, (int32_t)((uint64_t)w * nodes / P));
        struct lbomp__rng r;
        lbomp__rng_seed(&r, seed);
        for (uint32_t t = 0; t < T; t++) {
                double c = 1.0;
                switch (load) {
                case SYNTH_UNIFORM:
                        c = 1.0;
                        break;
                case SYNTH_LINEAR:
                        c = 2.0 * (t + 1) / T;
                        break;
                case SYNTH_HOTSPOT:
                        c = t < (T + 9) / 10 ? 10.0 : 1.0;
                        break;
                case SYNTH_LBTEST: {
                        double u = lbomp__rng_unit(&r);
                        c = 0.1 + (10.0 - 0.1) * u * u * u * u;
                        break;
                }
                case SYNTH_ONE_HEAVY:
                        c = t == 0 ? 3.0 * T / P : 1.0;
                        break;
                case SYNTH_ALL_BUT_ONE:
                        c = 1.0;
                        break;
                }
                lbomp__snap_task(y->sb, (uint32_t)((uint64_t)t * P / T), t, c, 1024, -1);
        }
        struct lbomp__snap_arrays arr = lbomp__snap_arrays(y->sb);
        y->cost = arr.cost;
        y->worker = arr.worker;
        y->id = arr.id;
        y->bytes = arr.bytes;
        y->home = arr.home;
        y->bg = arr.bg;
        y->speed = arr.speed;
        y->wnode = arr.wnode;
        if (load == SYNTH_ALL_BUT_ONE) {
                /* every worker but the last holds the same share, the last holds few tasks */
                for (uint32_t t = 0; t < T; t++)
                        y->worker[t] = P > 1 ? (uint32_t)((uint64_t)t * (P - 1) / T) : 0;
                if (P > 1)
                        y->worker[T - 1] = P - 1;
        }
        for (uint32_t a = 0; a < nodes; a++)
                for (uint32_t b = 0; b < nodes; b++)
                        y->dist[a * nodes + b] = a == b ? 1.0 : 2.0;
        /* ring links to k neighbours on each side, declared by the lower end */
        for (uint32_t t = 0; t < T && nlinks; t++)
                for (uint32_t j = 1; j <= k; j++)
                        lbomp__snap_link(y->sb, t, (t + j) % T, 1000);
        y->params = lbomp__params_default();
        y->s = *lbomp__snap_end(y->sb, seed, 0, &y->params);
        y->link_off = (uint32_t *)y->s.link_off;
        y->link_dst = (uint32_t *)y->s.link_dst;
        y->link_bytes = (double *)y->s.link_bytes;
        return 0;
}

void synth_speeds(struct synth *y, const double *speed, uint32_t n)
{
        for (uint32_t w = 0; w < y->s.nworkers; w++)
                y->speed[w] = speed[w % n];
        y->s.speed = y->speed;
        lbomp__snap_speeds(&y->s);
}

void synth_free(struct synth *y)
{
        lbomp__snapbuf_destroy(y->sb);
        free(y->dist);
        free(y->dest);
        memset(y, 0, sizeof *y);
}

double synth_imbalance(const struct synth *y, const uint32_t *map)
{
        double *load = malloc(y->s.nworkers * sizeof *load);
        lbomp__loads(&y->s, map, load);
        double l = lbomp__snap_lambda(&y->s, load, NULL, NULL);
        free(load);
        return l;
}

uint32_t synth_moves(const struct synth *y, const uint32_t *map)
{
        uint32_t m = 0;
        for (uint32_t t = 0; t < y->s.ntasks; t++)
                m += map[t] != y->worker[t];
        return m;
}
