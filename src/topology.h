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
};
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
