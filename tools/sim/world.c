/*
 * world.c — lbomp-sim's synthetic workload: T tasks with the costs of a load pattern, block-mapped
 * onto the workers as the runtime places new tasks, linked as a ring or a mesh, on a profile's
 * nodes or on N flat cores, through the library's one snapshot builder.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim.h"
#include "topology.h"

/* ---------------------------------------------------------------------------------------------
 * The synthetic snapshot
 */

void sim_world_free(struct world *w)
{
        lbomp__snapbuf_destroy(w->sb);
        free(w->dist);
        free(w->wnode);
        free(w->wcore);
        free(w->speed);
}

/* Forward links of task i (to tasks > i, or wrapping on the ring), in the order a program would
 * declare them: kneighbor links i to i+1..i+K. Returns how many were written to out. */
static uint32_t links_of(const struct opts *o, uint32_t T, uint32_t side, uint32_t i, uint32_t *out)
{
        uint32_t n = 0;
        switch (o->links) {
        case LINKS_NONE:
                break;
        case LINKS_RING:
                for (long j = 1; j <= o->ring_k; j++)
                        out[n++] = (uint32_t)((i + (uint64_t)j) % T);
                break;
        case LINKS_MESH2D: /* side × side grid filled row by row; the last row may be partial */
                if (i % side + 1 < side && i + 1 < T)
                        out[n++] = i + 1;
                if ((uint64_t)i + side < T)
                        out[n++] = i + side;
                break;
        case LINKS_MESH3D: {
                uint64_t plane = (uint64_t)side * side;
                if (i % side + 1 < side && i + 1 < T)
                        out[n++] = i + 1;
                if ((i / side) % side + 1 < side && i + side < T)
                        out[n++] = i + side;
                if (i + plane < T)
                        out[n++] = (uint32_t)(i + plane);
                break;
        }
        }
        return n;
}

static uint32_t mesh_side(const struct opts *o, uint32_t T)
{
        if (o->links == LINKS_MESH2D) {
                uint32_t s = (uint32_t)ceil(sqrt((double)T));
                while ((uint64_t)s * s < T)
                        s++;
                return s;
        }
        if (o->links == LINKS_MESH3D) {
                uint32_t s = (uint32_t)ceil(cbrt((double)T));
                while ((uint64_t)s * s * s < T)
                        s++;
                return s;
        }
        return 1;
}

/* Cost of task i of T, first placed on worker wk of P, in seconds per step. */
static double task_cost_s(const struct opts *o, struct lbomp__rng *rng, uint32_t i, uint32_t T,
                          uint32_t wk, uint32_t P)
{
        double us = o->base_us;
        switch (o->load) {
        case LOAD_UNIFORM:
                break;
        case LOAD_LINEAR:
                us *= 2.0 * (double)(i + 1) / (double)T;
                break;
        case LOAD_HOTSPOT:
                us *= i < (T + 9) / 10 ? 10.0 : 1.0;
                break;
        case LOAD_LBTEST: { /* lb_test LINEARLY_GRADED: worker wk's range is its 1/P slice */
                double u = lbomp__rng_unit(rng);
                double lo = 30.0 + 8970.0 * wk / P, hi = 30.0 + 8970.0 * (wk + 1.0) / P;
                us = lo + (hi - lo) * u * u * u * u;
                break;
        }
        case LOAD_LBTEST_IID: { /* lb_test's default: min + (max - min) u^4, 30 to 9000 us */
                double u = lbomp__rng_unit(rng);
                us = 30.0 + 8970.0 * u * u * u * u;
                break;
        }
        }
        return us * 1e-6;
}

static int load_machine(struct world *w, const struct opts *o)
{
        uint32_t P;
        if (o->profile) {
                struct stat st;
                if (stat(o->profile, &st) != 0) {
                        fprintf(stderr, "lbomp-sim: --profile '%s': %s\n", o->profile,
                                strerror(errno));
                        return -1;
                }
                struct lbomp__topo t;
                if (lbomp__topo_load(&t, o->profile) < 0) {
                        fprintf(stderr,
                                "lbomp-sim: --profile '%s' is not a hwloc XML topology (see "
                                "numa-profiles/)\n",
                                o->profile);
                        return -1;
                }
                P = o->cores ? (uint32_t)o->cores : (uint32_t)t.ncores;
                w->dist = malloc((size_t)t.nnodes * t.nnodes * sizeof *w->dist);
                w->wnode = malloc(P * sizeof *w->wnode);
                w->wcore = malloc(P * sizeof *w->wcore);
                w->speed = malloc(P * sizeof *w->speed);
                if (!w->dist || !w->wnode || !w->wcore || !w->speed) {
                        lbomp__topo_free(&t);
                        return -ENOMEM;
                }
                memcpy(w->dist, t.dist, (size_t)t.nnodes * t.nnodes * sizeof *w->dist);
                for (uint32_t k = 0; k < P; k++) {
                        /* Workers are placed like the runtime places its threads. */
                        int c = lbomp__topo_spread_core(&t, (int)k, (int)P);
                        w->wcore[k] = c;
                        w->wnode[k] = t.core_node[c];
                        w->speed[k] = t.core_speed ? t.core_speed[c] : 1.0; /* CPU kinds */
                }
                w->nnodes = (uint32_t)t.nnodes;
                w->ncores = (uint32_t)t.ncores;
                snprintf(w->topo_name, sizeof w->topo_name, "%s", t.name);
                lbomp__topo_free(&t);
        } else {
                P = (uint32_t)o->cores;
                w->dist = malloc(sizeof *w->dist);
                w->wnode = calloc(P, sizeof *w->wnode);
                w->wcore = malloc(P * sizeof *w->wcore);
                w->speed = malloc(P * sizeof *w->speed);
                if (!w->dist || !w->wnode || !w->wcore || !w->speed)
                        return -ENOMEM;
                w->dist[0] = 1.0;
                for (uint32_t k = 0; k < P; k++) {
                        w->wcore[k] = (int32_t)k;
                        w->speed[k] = 1.0;
                }
                w->nnodes = 1;
                w->ncores = P;
                snprintf(w->topo_name, sizeof w->topo_name, "flat-%u", P);
        }
        w->nworkers = P;
        for (uint32_t k = 0; k < P && o->nspeeds; k++)
                w->speed[k] = o->speeds[k % (uint32_t)o->nspeeds];
        return 0;
}

int sim_build_world(struct world *w, const struct opts *o)
{
        memset(w, 0, sizeof *w);
        int rc = load_machine(w, o);
        if (rc < 0)
                return rc;
        uint32_t T = (uint32_t)o->tasks, P = w->nworkers, side = mesh_side(o, T);
        uint32_t fw[1024];
        size_t nlinks = 0;
        for (uint32_t i = 0; i < T; i++)
                nlinks += links_of(o, T, side, i, fw);
        if (2 * nlinks > UINT32_MAX) {
                fprintf(stderr, "lbomp-sim: more than 2^32 link ends\n");
                return -EINVAL;
        }
        w->sb = lbomp__snapbuf_create();
        if (!w->sb || lbomp__snap_begin(w->sb, P, w->nnodes, w->dist, T, T, nlinks) < 0)
                return -ENOMEM;
        for (uint32_t k = 0; k < P; k++) {
                lbomp__snap_worker(w->sb, k, 0.0, w->wnode[k]);
                lbomp__snap_speed(w->sb, k, w->speed[k]);
        }
        /* Blocks by capacity, as the runtime gives new tasks out (schedule(static)'s blocks
         * with equal speeds); data first touched by that worker lives on its node. */
        uint32_t *count = calloc((size_t)P + 1, sizeof *count);
        if (!count || lbomp__place_counts(w->speed, NULL, P, T, count) < 0) {
                free(count);
                return -ENOMEM;
        }
        struct lbomp__rng rng;
        lbomp__rng_seed(&rng, o->seed);
        for (uint32_t i = 0, wk = 0, k = 0; i < T; i++, k++) {
                while (wk + 1 < P && k == count[wk])
                        wk++, k = 0;
                lbomp__snap_task(w->sb, wk, i, task_cost_s(o, &rng, i, T, wk, P),
                                 (uint64_t)o->task_bytes, w->wnode[wk]);
        }
        free(count);
        /* Links in declaration order, as a program declares them. */
        for (uint32_t i = 0; i < T; i++) {
                uint32_t n = links_of(o, T, side, i, fw);
                for (uint32_t j = 0; j < n; j++)
                        lbomp__snap_link(w->sb, i, fw[j], o->link_bytes);
        }
        w->params = lbomp__params_default();
        if (o->tolerance > 0)
                w->params.tolerance = o->tolerance;
        w->s = lbomp__snap_end(w->sb, lbomp__snap_seed(o->seed, 0), 0, &w->params);
        return 0;
}
