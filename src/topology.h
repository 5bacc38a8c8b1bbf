/*
 * topology.h — the machine the library sees: cores, NUMA nodes, distances, binding, and whether
 * the kernel can place memory on nodes. Below it: error only.
 */
#ifndef LBOMP_TOPOLOGY_H
#define LBOMP_TOPOLOGY_H

#include <stdbool.h>

#define LBOMP__TOPO_MAX_BYTES (64L << 20) /* a topology file larger than this is refused */

struct lbomp__topo {
        char *source;       /* "host" or the XML path */
        char *name;         /* file name without directory, or "host" */
        int ncores;         /* cores the process may use (all cores of a profile) */
        int nnodes;         /* NUMA nodes (at least 1) */
        int *core_node;     /* [ncores] logical node index of each core */
        int *core_os;       /* [ncores] OS index of the core's first PU (host only), else -1 */
        int *node_os;       /* [nnodes] OS index of each node (the kernel's node number) */
        double *dist;       /* [nnodes * nnodes], local = 1.0 */
        bool dist_measured; /* false: no matrix in the topology, 1.0 / 2.0 assumed */
        bool is_host;
        bool restricted;    /* host: limited to the process's CPU set (taskset, cpuset) */
        bool flat;          /* host: hwloc could not read it; one node, threads not bound */
        int ncores_machine; /* cores of the whole machine (host), before the restriction */
        int npus_allowed;   /* PUs this process may run on (host), for oversubscription */
        void *hwloc;        /* hwloc_topology_t */
        /* CPU kinds (hwloc_cpukinds_*): the speed prior of each core, 1.0 for the fastest kind
         * (every core when hwloc reports fewer than two kinds); see lbomp__topo_kind_speed. */
        double *core_speed; /* [ncores] */
        int core_kind_n;    /* kinds hwloc reported (0 or 1: all cores alike) */
        char kinds[160];    /* "IntelCore 5100 MHz x1.00 (8 cores), IntelAtom ..." or "" */
};

/* A CPU kind as hwloc describes it, and the prior speed lbomp gives it (doc: README "Unequal
 * cores"). */
struct lbomp__cpukind {
        int efficiency;   /* hwloc's efficiency rank, -1 when unknown */
        double freq_mhz;  /* FrequencyMaxMHz, else FrequencyBaseMHz, else 0 */
        const char *type; /* CoreType ("IntelCore", "IntelAtom") or NULL */
};
/*
 * Prior speeds of n kinds into speed[]: relative to the fastest, frequency × a per-instruction
 * factor (0.7 for a core type "IntelAtom" beside faster ones, 1.0 otherwise) when every kind has a
 * frequency; else by efficiency rank, 1.0 for the highest down to 0.6 for the lowest; a kind whose
 * rank is unknown 1.0. The measured part of each worker's speed corrects this guess.
 */
void lbomp__topo_kind_speeds(const struct lbomp__cpukind *k, int n, double *speed);
/* Loads the host (path NULL) or an XML file: -ENOENT missing file, -EINVAL not a regular file or
 * unparsable, -EFBIG larger than LBOMP__TOPO_MAX_BYTES; the message names the file. */
int lbomp__topo_load(struct lbomp__topo *t, const char *path);
void lbomp__topo_free(struct lbomp__topo *t);
/* Core of worker w among n, as OMP_PROC_BIND=spread places threads over the cores. */
int lbomp__topo_spread_core(const struct lbomp__topo *t, int w, int n);
/* Binds the calling thread to core c (host only). 0 or negative errno. */
int lbomp__topo_bind(const struct lbomp__topo *t, int c);
/* Whether NUMA memory calls can work here (libnuma and kernel support). Thread-safe. */
bool lbomp__numa_ok(void);

#endif
