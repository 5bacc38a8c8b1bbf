/*
 * snapshot.h — the one builder of the immutable snapshot a policy reads (policy.h), shared by the
 * runtime (from its window), the simulator (synthetic workloads) and the tests.
 *
 * Tasks come in any order, each with its worker; links by task id, in the order the program
 * declared them. The builder numbers tasks in the order they were given, lists each worker's
 * tasks (CSR, in that order) and makes the links a symmetric CSR (each link appended at both ends,
 * in declaration order), so that whoever builds from the same input gets the same snapshot, and a
 * policy the same plan. The buffers are kept between snapshots: a rebalance allocates nothing once
 * the sizes are stable. Below it: nothing but policy.h.
 */
#ifndef LBOMP_SNAPSHOT_H
#define LBOMP_SNAPSHOT_H

#include <stdint.h>

#include "policy.h"

struct lbomp__snapbuf;
struct lbomp__snapbuf *lbomp__snapbuf_create(void);
void lbomp__snapbuf_destroy(struct lbomp__snapbuf *b); /* accepts NULL */

/*
 * Starts a snapshot of at most `ntasks` tasks with ids below `id_space`, at most `nlinks` links,
 * over `nworkers` workers on `nnodes` nodes with distances `dist` (kept by pointer: it must live
 * as long as the snapshot). Every worker starts with background load 0 on node 0. 0 or -ENOMEM.
 */
int lbomp__snap_begin(struct lbomp__snapbuf *b, uint32_t nworkers, uint32_t nnodes,
                      const double *dist, uint32_t ntasks, uint32_t id_space, size_t nlinks);
/* Worker w's background load (seconds per step) and node. */
void lbomp__snap_worker(struct lbomp__snapbuf *b, uint32_t w, double bg, int32_t node);
/* Worker w's speed (snapshot's speed[]: 1.0 unless set; a value that is not a positive finite
 * number counts as 1.0). */
void lbomp__snap_speed(struct lbomp__snapbuf *b, uint32_t w, double speed);
/* Adds a task on `worker`; returns its index in the snapshot. */
uint32_t lbomp__snap_task(struct lbomp__snapbuf *b, uint32_t worker, uint32_t id, double cost,
                          uint64_t bytes, int32_t home);
/* Adds a link between two tasks already added (by id), `bytes` per step. */
void lbomp__snap_link(struct lbomp__snapbuf *b, uint32_t id_a, uint32_t id_b, double bytes);
/* Finishes the snapshot: valid, with its plan buffer (lbomp__snap_dest, filled with the current
 * workers), until the next lbomp__snap_begin. */
const struct lbomp__snap *lbomp__snap_end(struct lbomp__snapbuf *b, uint64_t seed, uint64_t lb_step,
                                          const struct lbomp__params *params);
/* What auto reads beyond the costs (policy/auto.h), for the snapshot being built or just built;
 * NULL (the default, reset by lbomp__snap_begin) for none. */
void lbomp__snap_set_hist(struct lbomp__snapbuf *b, struct lbomp__auto_hist *h);
/* A destination per task, for the plan. */
uint32_t *lbomp__snap_dest(struct lbomp__snapbuf *b);
/* The arrays of the snapshot being built or just built, writable: tests and tools change costs,
 * workers, homes or backgrounds between runs (after a change of workers, lbomp__snap_rebuild). */
struct lbomp__snap_arrays {
        double *cost;     /* [ntasks] */
        uint32_t *worker; /* [ntasks] */
        uint64_t *bytes;  /* [ntasks] */
        int32_t *home;    /* [ntasks] */
        uint32_t *id;     /* [ntasks] */
        double *bg;       /* [nworkers] */
        double *speed;    /* [nworkers] (after a change: lbomp__snap_speeds on the snapshot) */
        int32_t *wnode;   /* [nworkers] */
};
struct lbomp__snap_arrays lbomp__snap_arrays(struct lbomp__snapbuf *b);
/* After the workers of the tasks changed: re-derives each worker's task list (same order rule). */
void lbomp__snap_rebuild(struct lbomp__snapbuf *b);

/* The seed of LB step `lb_step` (0-based) of a run seeded with `seed`: the runtime's rule, which
 * the simulator and the trace replay follow. */
static inline uint64_t lbomp__snap_seed(uint64_t seed, uint64_t lb_step)
{
        return seed ^ (0x9e3779b97f4a7c15ull * (lb_step + 1));
}

#endif
