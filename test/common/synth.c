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
        uint32_t T = y->s.ntasks, P = y->s.nworkers;
        memset(y->wtask_off, 0, (P + 1) * sizeof *y->wtask_off);
        for (uint32_t t = 0; t < T; t++)
                y->wtask_off[y->worker[t] + 1]++;
        for (uint32_t w = 0; w < P; w++)
                y->wtask_off[w + 1] += y->wtask_off[w];
        uint32_t *fill = malloc((P + 1) * sizeof *fill);
        memcpy(fill, y->wtask_off, (P + 1) * sizeof *fill);
        for (uint32_t t = 0; t < T; t++)
                y->wtask[fill[y->worker[t]]++] = t;
        free(fill);
}

int synth_make(struct synth *y, uint32_t T, uint32_t P, uint32_t nodes, enum synth_load load,
               uint32_t k, uint64_t seed)
{
        memset(y, 0, sizeof *y);
        y->cost = calloc(T + 1, sizeof *y->cost);
        y->bg = calloc(P, sizeof *y->bg);
        y->dist = calloc((size_t)nodes * nodes, sizeof *y->dist);
        y->worker = calloc(T + 1, sizeof *y->worker);
        y->id = calloc(T + 1, sizeof *y->id);
        y->dest = calloc(T + 1, sizeof *y->dest);
        y->wtask_off = calloc(P + 1, sizeof *y->wtask_off);
        y->wtask = calloc(T + 1, sizeof *y->wtask);
        y->link_off = calloc(T + 1, sizeof *y->link_off);
        y->link_dst = calloc(2 * (size_t)T * k + 1, sizeof *y->link_dst);
        y->link_bytes = calloc(2 * (size_t)T * k + 1, sizeof *y->link_bytes);
        y->bytes = calloc(T + 1, sizeof *y->bytes);
        y->home = calloc(T + 1, sizeof *y->home);
        y->wnode = calloc(P, sizeof *y->wnode);
        if (!y->cost || !y->bg || !y->dist || !y->worker || !y->id || !y->dest || !y->wtask_off ||
            !y->wtask || !y->link_off || !y->link_dst || !y->link_bytes || !y->bytes || !y->home ||
            !y->wnode)
                return -ENOMEM;
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
                y->cost[t] = c;
                y->id[t] = t;
                y->bytes[t] = 1024;
                y->home[t] = -1;
                y->worker[t] = (uint32_t)((uint64_t)t * P / T);
        }
        if (load == SYNTH_ALL_BUT_ONE) {
                /* every worker but the last holds the same share, the last holds few tasks */
                for (uint32_t t = 0; t < T; t++)
                        y->worker[t] = P > 1 ? (uint32_t)((uint64_t)t * (P - 1) / T) : 0;
                if (P > 1)
                        y->worker[T - 1] = P - 1;
        }
        for (uint32_t w = 0; w < P; w++)
                y->wnode[w] = (int32_t)((uint64_t)w * nodes / P);
        for (uint32_t a = 0; a < nodes; a++)
                for (uint32_t b = 0; b < nodes; b++)
                        y->dist[a * nodes + b] = a == b ? 1.0 : 2.0;
        /* ring links, symmetric CSR: 2k neighbours each */
        uint32_t e = 0;
        for (uint32_t t = 0; t < T; t++) {
                y->link_off[t] = e;
                for (uint32_t j = 1; j <= k && 2 * k < T; j++) {
                        y->link_dst[e] = (t + j) % T;
                        y->link_bytes[e++] = 1000;
                        y->link_dst[e] = (t + T - j) % T;
                        y->link_bytes[e++] = 1000;
                }
        }
        y->link_off[T] = e;
        y->params = (struct lbomp__params){.tolerance = 0.05,
                                           .refine_factor = 1.05,
                                           .smart_threshold = 0.05,
                                           .fanout = 2,
                                           .retries = 2};
        y->s = (struct lbomp__snap){.ntasks = T,
                                    .nworkers = P,
                                    .nnodes = nodes,
                                    .cost = y->cost,
                                    .worker = y->worker,
                                    .bytes = y->bytes,
                                    .home = y->home,
                                    .id = y->id,
                                    .link_off = y->link_off,
                                    .link_dst = y->link_dst,
                                    .link_bytes = y->link_bytes,
                                    .wtask_off = y->wtask_off,
                                    .wtask = y->wtask,
                                    .bg = y->bg,
                                    .wnode = y->wnode,
                                    .dist = y->dist,
                                    .seed = seed,
                                    .params = &y->params};
        synth_reindex(y);
        return 0;
}

void synth_free(struct synth *y)
{
        free(y->cost);
        free(y->bg);
        free(y->dist);
        free(y->link_bytes);
        free(y->worker);
        free(y->id);
        free(y->wtask_off);
        free(y->wtask);
        free(y->link_off);
        free(y->link_dst);
        free(y->dest);
        free(y->bytes);
        free(y->home);
        free(y->wnode);
}

double synth_imbalance(const struct synth *y, const uint32_t *map)
{
        double *load = malloc(y->s.nworkers * sizeof *load);
        lbomp__loads(&y->s, map, load);
        double l = lbomp__imbalance(load, y->s.nworkers, NULL, NULL);
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
