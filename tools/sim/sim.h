/*
 * sim.h — what the parts of lbomp-sim share: its options (options.c), the synthetic workload
 * (world.c), and the runner (main.c). See main.c for what the tool is.
 */
#ifndef LBOMP_SIM_H
#define LBOMP_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"
#include "snapshot.h"

#define MAX_POLICIES 32
#define MAX_TASKS    100000000L
#define MAX_CORES    65536

enum load { LOAD_UNIFORM, LOAD_LINEAR, LOAD_HOTSPOT, LOAD_LBTEST, LOAD_LBTEST_IID };
enum evolve { EV_STATIC, EV_DRIFT, EV_CYCLE, EV_WALK, EV_HOTSPOT };
extern const char *const sim_evolve_names[]; /* NULL-terminated */

enum links { LINKS_NONE, LINKS_RING, LINKS_MESH2D, LINKS_MESH3D };

extern const char *const sim_load_names[];

struct opts {
        const char *trace, *profile, *record;
        const char *load_name, *links_name;
        enum load load;
        enum links links;
        long ring_k;
        long tasks, cores, repeat, steps;
        double round_us;
        double tolerance; /* 0: the default (LBOMP_TOLERANCE's) */
        uint64_t seed;
        bool seed_set, json, verify;
        double task_bytes, link_bytes, base_us;
        const struct lbomp__policy *pol[MAX_POLICIES];
        int npol;
        /* --ranks (ranks.c): the workers are MPI ranks of rank_threads threads, each balancing
         * its own threads with `inner` */
        long ranks, rank_threads;
        const struct lbomp__policy *inner;
        /* --speeds: each worker's speed, the list repeated over the workers (nspeeds 0: the
         * profile's CPU kinds, else 1.0) */
        double speeds[64];
        int nspeeds;
        /* --evolve (evolve.c): costs that change from step to step */
        bool evolve_set, auto_data;
        enum evolve evolve;
        double ev_amp, ev_width, ev_speed, ev_noise, byte_ns;
        double steal; /* --steal K: stealing modelled, a stolen task costing 1 + K times; < 0 off */
        long ev_cycle, ev_hot_at, time_steps, period;
};

/* Parses argv into *o; -1 after printing why (exit 2), 1 after --help (exit 0). */
int sim_parse(struct opts *o, int argc, char **argv);

struct world {
        const struct lbomp__snap *s;
        struct lbomp__snapbuf *sb;
        struct lbomp__params params;
        char topo_name[256];
        uint32_t nworkers, nnodes, ncores;
        double *dist;
        int32_t *wnode, *wcore;
        double *speed; /* [nworkers] */
};

/* Builds the synthetic snapshot of --tasks/--load/--links on --profile or --cores. 0, -ENOMEM or
 * -EINVAL (message printed). */
int sim_build_world(struct world *w, const struct opts *o);
void sim_world_free(struct world *w);

/* --evolve (evolve.c): the run of every --policy, or --auto-data's training rows. Exit code. */
int sim_evolve(const struct opts *o);
/* --trace with --auto-data: auto's training row of one recorded LB step, its costs taken to
 * persist over the next --period steps (evolve.c). 0 or -ENOMEM. */
int sim_auto_trace_row(const struct opts *o, const struct lbomp__snap *s, const char *source);

/* --ranks: the rank level of liblbomp-mpi and each rank's own level (ranks.c). The exit code. */
int sim_ranks(const struct opts *o);

#endif
