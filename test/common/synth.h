/*
 * synth.h — synthetic snapshots for policy tests: costs from a pattern, tasks block-mapped onto
 * workers, workers spread over nodes, optional ring links; built through the library's one
 * snapshot builder (snapshot.h), so a test sees what the runtime and the simulator would build.
 */
#ifndef LBOMP_TEST_SYNTH_H
#define LBOMP_TEST_SYNTH_H

#include "policy.h"
#include "snapshot.h"

enum synth_load {
        SYNTH_UNIFORM,
        SYNTH_LINEAR,
        SYNTH_HOTSPOT,
        SYNTH_LBTEST,
        SYNTH_ONE_HEAVY,
        SYNTH_ALL_BUT_ONE
};

struct synth {
        struct lbomp__snap s; /* a copy of the builder's snapshot; re-taken by synth_reindex */
        struct lbomp__params params;
        struct lbomp__snapbuf *sb;
        /* the builder's arrays, writable (synth_reindex after changing workers) */
        double *cost, *bg, *speed;
        uint32_t *worker, *id;
        uint64_t *bytes;
        int32_t *home, *wnode;
        uint32_t *link_off, *link_dst; /* the links' CSR, writable for corruption tests */
        double *link_bytes;
        double *dist;   /* [nodes * nodes], owned here */
        uint32_t *dest; /* [ntasks], owned here: a plan buffer for the tests */
};

/* T tasks, P workers over `nodes` nodes (distance 1 local, 2 remote), ring links to k neighbours
 * on each side (0: none). Returns 0 or -ENOMEM. */
int synth_make(struct synth *y, uint32_t T, uint32_t P, uint32_t nodes, enum synth_load load,
               uint32_t k, uint64_t seed);
/* Sets worker speeds, the list repeated over the workers, in the builder's arrays and y->s. */
void synth_speeds(struct synth *y, const double *speed, uint32_t n);
/* Re-derives the per-worker CSR after y->worker changed. */
void synth_reindex(struct synth *y);
void synth_free(struct synth *y);
/* λ of a mapping. */
double synth_imbalance(const struct synth *y, const uint32_t *map);
/* Tasks whose worker differs between the snapshot and map. */
uint32_t synth_moves(const struct synth *y, const uint32_t *map);

#endif
