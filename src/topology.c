/*
 * topology.c — the machine the library sees: cores, NUMA nodes, distances, and binding.
 *
 * It is the host, as hwloc discovers it within the process's allowed cpuset, or a recorded
 * topology (an hwloc XML file from numa-profiles/) when LBOMP_TOPOLOGY names one: then workers
 * are placed on the profile's cores while the threads run wherever the host lets them. Distances
 * are normalised so that local = 1.0 (ACPI SLIT reports 10). The host is restricted to the cores
 * the user let the process use (taskset, a cpuset), so that lbomp never binds a thread outside
 * them; when hwloc cannot read the host at all, a flat topology (one node, the allowed CPUs) stands
 * in, with a warning, and threads are left unbound.
 */
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numa.h>
#include <stdatomic.h>
#include <stdio.h>

#include "error.h"
#include "topology.h"

static int load_distances(struct lbomp__topo *t, hwloc_topology_t h)
{
        int n = t->nnodes;
        for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                        t->dist[i * n + j] = i == j ? 1.0 : 2.0;
        t->dist_measured = false;
        if (n == 1) {
                t->dist_measured = true;
                return 0;
        }
        unsigned nr = 1;
        struct hwloc_distances_s *d = NULL;
        if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d,
                                        HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
            nr == 0) {
                nr = 1;
                if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d, 0, 0) != 0 ||
                    nr == 0)
                        return 0;
        }
        if ((int)d->nbobjs == n) {
                double local = 0;
                for (int i = 0; i < n; i++)
                        local += (double)d->values[i * n + i];
                local /= n;
                if (local > 0) {
                        for (unsigned i = 0; i < d->nbobjs; i++)
                                for (unsigned j = 0; j < d->nbobjs; j++) {
                                        int a = (int)d->objs[i]->logical_index;
                                        int b = (int)d->objs[j]->logical_index;
                                        t->dist[a * n + b] = (double)d->values[i * n + j] / local;
                                }
                        t->dist_measured = true;
                }
        }
        hwloc_distances_release(h, d);
        return 0;
}

/*
 * The CPUs the user let this thread run on, saved before lbomp binds it for the first time: a
 * second runtime created on the same thread must see the user's set, not lbomp's own binding.
 */
static _Thread_local struct {
        bool saved;
        cpu_set_t set;
} user_affinity;

static int user_cpus(cpu_set_t *set)
{
        if (user_affinity.saved) {
                *set = user_affinity.set;
                return 0;
        }
        return sched_getaffinity(0, sizeof *set, set);
}

/* Keeps only the cores the process may use; a set that covers everything changes nothing. */
static void restrict_to_user(struct lbomp__topo *t, hwloc_topology_t h)
{
        cpu_set_t cs;
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!set || user_cpus(&cs) != 0)
                goto out;
        for (int i = 0; i < CPU_SETSIZE; i++)
                if (CPU_ISSET(i, &cs))
                        hwloc_bitmap_set(set, (unsigned)i);
        hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(h);
        hwloc_bitmap_and(set, set, all);
        if (hwloc_bitmap_iszero(set) || hwloc_bitmap_isincluded(all, set))
                goto out;
        if (hwloc_topology_restrict(h, set, 0) == 0)
                t->restricted = true;
out:
        hwloc_bitmap_free(set);
}

/* The host as one node of the CPUs we may use, when hwloc cannot read it. */
static int load_flat(struct lbomp__topo *t, int err)
{
        cpu_set_t cs;
        int n = user_cpus(&cs) == 0 ? CPU_COUNT(&cs) : 0;
        if (n < 1)
                n = 1;
        t->is_host = true;
        t->flat = true;
        t->ncores = t->ncores_machine = t->npus_allowed = n;
        t->nnodes = 1;
        t->source = strdup("host");
        t->name = strdup("host (flat)");
        t->core_node = calloc((size_t)n, sizeof *t->core_node);
        t->core_os = malloc((size_t)n * sizeof *t->core_os);
        t->dist = malloc(sizeof *t->dist);
        t->core_speed = malloc((size_t)n * sizeof *t->core_speed);
        if (!t->source || !t->name || !t->core_node || !t->core_os || !t->dist || !t->core_speed) {
                lbomp__topo_free(t);
                return -ENOMEM;
        }
        for (int c = 0; c < n; c++) {
                t->core_os[c] = -1;
                t->core_speed[c] = 1.0;
        }
        t->dist[0] = 1.0;
        t->dist_measured = true; /* one node: its only distance, local, is exact */
        lbomp__log("lbomp: hwloc cannot read the host topology (%s); using a flat topology: 1 "
                   "node, %d core(s), threads not bound",
                   strerror(err), n);
        return 0;
}

void lbomp__topo_kind_speeds(const struct lbomp__cpukind *k, int n, double *speed)
{
        bool freqs = n > 0;
        int rmin = -1, rmax = -1;
        for (int i = 0; i < n; i++) {
                freqs &= k[i].freq_mhz > 0;
                if (k[i].efficiency >= 0) {
                        rmin = rmin < 0 || k[i].efficiency < rmin ? k[i].efficiency : rmin;
                        rmax = k[i].efficiency > rmax ? k[i].efficiency : rmax;
                }
        }
        double best = 0;
        for (int i = 0; i < n; i++) {
                if (freqs) {
                        bool atom = k[i].type && strcmp(k[i].type, "IntelAtom") == 0 && n > 1;
                        speed[i] = k[i].freq_mhz * (atom ? 0.7 : 1.0);
                } else if (k[i].efficiency >= 0 && rmax > rmin) {
                        speed[i] = 0.6 + 0.4 * (double)(k[i].efficiency - rmin) / (rmax - rmin);
                } else {
                        speed[i] = 1.0;
                }
                best = speed[i] > best ? speed[i] : best;
        }
        for (int i = 0; i < n; i++)
                speed[i] = best > 0 ? speed[i] / best : 1.0;
}

/* The speed prior of every core from hwloc's CPU kinds. */
static void load_kinds(struct lbomp__topo *t, hwloc_topology_t h, hwloc_obj_type_t ctype)
{
        for (int c = 0; c < t->ncores; c++)
                t->core_speed[c] = 1.0;
        int n = hwloc_cpukinds_get_nr(h, 0);
        t->core_kind_n = n > 0 ? n : 0;
        if (n < 2)
                return;
        struct lbomp__cpukind k[16];
        double speed[16];
        int ncores[16] = {0};
        if (n > 16)
                n = 16;
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!set)
                return;
        for (int i = 0; i < n; i++) {
                int eff = -1;
                unsigned ninfo = 0;
                struct hwloc_info_s *info = NULL;
                k[i] = (struct lbomp__cpukind){.efficiency = -1};
                if (hwloc_cpukinds_get_info(h, (unsigned)i, set, &eff, &ninfo, &info, 0) != 0)
                        continue;
                k[i].efficiency = eff;
                double fmax = 0, fbase = 0;
                for (unsigned j = 0; j < ninfo; j++) {
                        if (strcmp(info[j].name, "FrequencyMaxMHz") == 0)
                                fmax = atof(info[j].value);
                        else if (strcmp(info[j].name, "FrequencyBaseMHz") == 0)
                                fbase = atof(info[j].value);
                        else if (strcmp(info[j].name, "CoreType") == 0)
                                k[i].type = info[j].value;
                }
                k[i].freq_mhz = fmax > 0 ? fmax : fbase;
        }
        lbomp__topo_kind_speeds(k, n, speed);
        for (int c = 0; c < t->ncores; c++) {
                hwloc_obj_t o = hwloc_get_obj_by_type(h, ctype, (unsigned)c);
                int i = o && o->cpuset ? hwloc_cpukinds_get_by_cpuset(h, o->cpuset, 0) : -1;
                if (i >= 0 && i < n) {
                        t->core_speed[c] = speed[i];
                        ncores[i]++;
                }
        }
        size_t at = 0;
        for (int i = 0; i < n && at < sizeof t->kinds; i++) {
                int w = snprintf(t->kinds + at, sizeof t->kinds - at, "%s%s %.0f MHz x%.2f (%d)",
                                 i ? ", " : "", k[i].type ? k[i].type : "kind", k[i].freq_mhz,
                                 speed[i], ncores[i]);
                at += w > 0 ? (size_t)w : 0;
        }
        hwloc_bitmap_free(set);
}

int lbomp__topo_load(struct lbomp__topo *t, const char *path)
{
        memset(t, 0, sizeof *t);
        hwloc_topology_t h;
        if (path) {
                struct stat st;
                if (stat(path, &st) != 0) {
                        lbomp__fail(
                                "lbomp: LBOMP_TOPOLOGY='%s' does not exist (%s); expected a hwloc "
                                "XML file such as numa-profiles/xeon-e5-2695v2-2s.xml",
                                path, strerror(errno));
                        return -ENOENT;
                }
                /* hwloc reads until the end of the file: a device or a pipe may never end. */
                if (!S_ISREG(st.st_mode)) {
                        lbomp__fail("lbomp: LBOMP_TOPOLOGY='%s' is not a regular file (%s); "
                                    "expected a hwloc XML file such as "
                                    "numa-profiles/xeon-e5-2695v2-2s.xml",
                                    path,
                                    S_ISDIR(st.st_mode)    ? "a directory"
                                    : S_ISCHR(st.st_mode)  ? "a character device"
                                    : S_ISBLK(st.st_mode)  ? "a block device"
                                    : S_ISFIFO(st.st_mode) ? "a pipe"
                                                           : "not a file");
                        return -EINVAL;
                }
                if (st.st_size > LBOMP__TOPO_MAX_BYTES) {
                        lbomp__fail("lbomp: LBOMP_TOPOLOGY='%s' holds %lld bytes; a topology file "
                                    "is at most %ld bytes (a 32-node machine takes about 200 KB)",
                                    path, (long long)st.st_size, LBOMP__TOPO_MAX_BYTES);
                        return -EFBIG;
                }
        }
        if (hwloc_topology_init(&h) != 0)
                return path ? -ENOMEM : load_flat(t, ENOMEM);
        if (path && hwloc_topology_set_xml(h, path) != 0) {
                hwloc_topology_destroy(h);
                lbomp__fail("lbomp: LBOMP_TOPOLOGY='%s' cannot be read by hwloc: %s", path,
                            strerror(errno));
                return -EINVAL;
        }
        if (hwloc_topology_load(h) != 0) {
                int e = errno;
                hwloc_topology_destroy(h);
                /* A file the user named must be readable (a config error); the host need not. */
                if (!path)
                        return load_flat(t, e ? e : EINVAL);
                lbomp__fail("lbomp: LBOMP_TOPOLOGY='%s' is not a hwloc XML topology hwloc can "
                            "parse (%s)",
                            path ? path : "(host)", strerror(e));
                return -EINVAL;
        }
        t->hwloc = h;
        t->is_host = path == NULL;
        if (t->is_host) {
                int nc = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
                t->ncores_machine = nc > 0 ? nc : hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
                restrict_to_user(t, h);
        }
        const char *base = path ? strrchr(path, '/') : NULL;
        t->source = strdup(path ? path : "host");
        t->name = strdup(path ? (base ? base + 1 : path) : "host");
        int ncores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
        hwloc_obj_type_t ctype = HWLOC_OBJ_CORE;
        if (ncores <= 0) {
                ncores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
                ctype = HWLOC_OBJ_PU;
        }
        int nnodes = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
        if (nnodes < 1)
                nnodes = 1;
        t->ncores = ncores > 0 ? ncores : 1;
        t->nnodes = nnodes;
        t->core_node = calloc((size_t)t->ncores, sizeof *t->core_node);
        t->core_os = calloc((size_t)t->ncores, sizeof *t->core_os);
        t->dist = calloc((size_t)nnodes * (size_t)nnodes, sizeof *t->dist);
        t->node_os = calloc((size_t)nnodes, sizeof *t->node_os);
        t->core_speed = malloc((size_t)t->ncores * sizeof *t->core_speed);
        if (!t->source || !t->name || !t->core_node || !t->core_os || !t->dist || !t->node_os ||
            !t->core_speed) {
                lbomp__topo_free(t);
                return -ENOMEM;
        }
        for (int c = 0; c < t->ncores && ncores > 0; c++) {
                hwloc_obj_t o = hwloc_get_obj_by_type(h, ctype, (unsigned)c);
                t->core_node[c] = 0;
                t->core_os[c] = -1;
                if (!o)
                        continue;
                if (o->nodeset) {
                        int first = hwloc_bitmap_first(o->nodeset);
                        hwloc_obj_t node =
                                first >= 0 ? hwloc_get_numanode_obj_by_os_index(h, (unsigned)first)
                                           : NULL;
                        if (node)
                                t->core_node[c] = (int)node->logical_index;
                }
                if (t->is_host && o->cpuset)
                        t->core_os[c] = hwloc_bitmap_first(o->cpuset);
        }
        for (int i = 0; i < nnodes; i++) {
                hwloc_obj_t node = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)i);
                t->node_os[i] = node ? (int)node->os_index : 0;
        }
        load_distances(t, h);
        load_kinds(t, h, ctype);
        t->npus_allowed = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
        if (!t->is_host)
                t->ncores_machine = t->ncores;
        return 0;
}

void lbomp__topo_free(struct lbomp__topo *t)
{
        if (t->hwloc)
                hwloc_topology_destroy((hwloc_topology_t)t->hwloc);
        free(t->source);
        free(t->name);
        free(t->core_node);
        free(t->core_os);
        free(t->node_os);
        free(t->dist);
        free(t->core_speed);
        memset(t, 0, sizeof *t);
}

int lbomp__topo_spread_core(const struct lbomp__topo *t, int w, int n)
{
        /* OMP_PROC_BIND=spread over one place per core: n sub-partitions, thread w takes the first
         * core of its own; with more threads than cores, consecutive threads share a core. */
        if (n <= 0)
                return 0;
        long c = (long)w * t->ncores / n;
        return (int)(c % t->ncores);
}

int lbomp__topo_bind(const struct lbomp__topo *t, int c)
{
        if (!t->is_host || !t->hwloc || c < 0 || c >= t->ncores || t->core_os[c] < 0)
                return -ENOTSUP;
        hwloc_topology_t h = (hwloc_topology_t)t->hwloc;
        hwloc_obj_t o = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, (unsigned)c);
        if (!o)
                o = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)c);
        if (!o)
                return -ENOENT;
        if (!user_affinity.saved)
                user_affinity.saved =
                        sched_getaffinity(0, sizeof user_affinity.set, &user_affinity.set) == 0;
        if (hwloc_set_cpubind(h, o->cpuset, HWLOC_CPUBIND_THREAD) != 0)
                return errno ? -errno : -EPERM;
        return 0;
}

bool lbomp__numa_ok(void)
{
        static _Atomic int ok = -1; /* any thread may ask first: every one computes the same */
        if (atomic_load_explicit(&ok, memory_order_relaxed) < 0)
                atomic_store_explicit(&ok, numa_available() >= 0, memory_order_relaxed);
        return atomic_load_explicit(&ok, memory_order_relaxed) == 1;
}
