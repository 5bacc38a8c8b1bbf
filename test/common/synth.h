/*
 * synth.h — synthetic snapshots for policy tests: costs from a pattern, tasks block-mapped onto
 * workers, workers spread over nodes, optional ring links. Owns every array it hands out.
 */
#ifndef LBOMP_TEST_SYNTH_H
#define LBOMP_TEST_SYNTH_H

#include "policy.h"

enum synth_load {
        SYNTH_UNIFORM,
        SYNTH_LINEAR,
        SYNTH_HOTSPOT,
        SYNTH_LBTEST,
        SYNTH_ONE_HEAVY,
        SYNTH_ALL_BUT_ONE
};

struct synth {
        struct lbomp__snap s;
        struct lbomp__params params;
        double *cost, *bg, *dist, *link_bytes;
        uint32_t *worker, *id, *wtask_off, *wtask, *link_off, *link_dst, *dest;
        uint64_t *bytes;
        int32_t *home, *wnode;
};

/* T tasks, P workers over `nodes` nodes (distance 1 local, 2 remote), ring links to k neighbours
 * on each side (0: none). Returns 0 or -ENOMEM. */
int synth_make(struct synth *y, uint32_t T, uint32_t P, uint32_t nodes, enum synth_load load,
               uint32_t k, uint64_t seed);
/* Re-derives the per-worker CSR after y->worker changed. */
void synth_reindex(struct synth *y);
void synth_free(struct synth *y);
/* λ of a mapping. */
double synth_imbalance(const struct synth *y, const uint32_t *map);
/* Tasks whose worker differs between the snapshot and map. */
uint32_t synth_moves(const struct synth *y, const uint32_t *map);

#endif
